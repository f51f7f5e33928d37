----------------------------- MODULE GraphTrace -----------------------------
(***************************************************************************)
(* Trace validation of the task graphs' protocol (lib/graph/walk.ts,       *)
(* lib/graph/submit.ts, the runner's claim of lib/worker/runner.ts): is a  *)
(* recorded run of one graph on the real pool a behaviour of Graph?        *)
(*                                                                          *)
(* The log (GraphTraceData, written by spec/trace.ts from a `graph` run of *)
(* spec/trace/run.ts, one graph at a time) holds, in the order they took   *)
(* effect, every access of the run to a node's state word, pending word    *)
(* and cause word, and the walkers' plain writes of a slot's outcome (the  *)
(* publication of an input's result), each bound to the node numbers the  *)
(* submitter's placement gave the records. Each record must be the next    *)
(* step of its thread in Graph, on the same node, the same way (a          *)
(* compare-exchange where the spec has one, a store where it has one),     *)
(* seeing and leaving the recorded values.                                  *)
(*                                                                          *)
(* Steps with no access in the log (a worker's FindTake from the queues,   *)
(* the push of a node it queued, the pop of its local stack, a record's    *)
(* free; the owner's start of a cancellation, its pop of a completion, its *)
(* cancellation's visit of a node settled already) have no record: the     *)
(* search may take one of any thread's before the next record (Silent).    *)
(* Accepted when some behaviour matches every record (Furthest prints it). *)
(***************************************************************************)
EXTENDS Graph, GraphTraceData

\* GraphTraceData defines TraceLog: a sequence of <<thread, what, node, input, old, now>>:
\*   thread: a worker (1, 2, ...) or TraceMain; what: 1 the submitter's first QUEUED store of a root,
\*   2 a worker's compare-exchange of a node's state word, 3 a worker's store to it, 4 a walker's write of
\*   VALUE into the slot of input `input` of node `node`, 5 a compare-exchange of the node's cause word,
\*   6 the subtraction from its pending word, 8 the owner's compare-exchange of its state word; old and now
\*   the word before and after (state words as the code's TaskState numbers).

VARIABLE l   \* how many records of the log the behaviour has matched

TraceInit == Init /\ l = 0 /\ TLCSet(1, 0)

Furthest == l <= TLCGet(1) \/ (TLCSet(1, l) /\ PrintT(<<"furthest", l>>))

\* The code's TaskState numbers (lib/record/fields.ts).
Code(s) ==
    CASE s = "FREE" -> 0 [] s = "QUEUED" -> 1 [] s = "RUNNING" -> 2 [] s = "DONE" -> 3
      [] s = "CANCELLED" -> 5 [] s = "WAITING" -> 6 [] s = "REJECTED" -> 7

Match(e) ==
    LET t == e[1]
        n == e[3]
    IN CASE e[2] = 1 -> SubmitPushRoots(t) /\ n \in Roots
         [] e[2] = 2 -> /\ \/ (ExecCasRunning(t) /\ cur[t] = n)
                            \/ (ZeroCasState(t) /\ At(t) = n)
                        /\ Code(state[n]) = e[5] /\ Code(state'[n]) = e[6]
         [] e[2] = 3 -> \/ (FinishCasSettled(t) /\ cur[t] = n /\ Code(state'[n]) = e[6])
                        \/ (ReleasePushCompletion(t) /\ cur[t] = n /\ e[6] = Code("DONE"))
         [] e[2] = 4 -> WalkPublishArg(t) /\ At(t) = n /\ cur[t] = e[4]
         [] e[2] = 5 -> WalkMarkCause(t) /\ At(t) = n /\ cause[n] = e[5] /\ cause'[n] = e[6]
         [] e[2] = 6 -> WalkDecrement(t) /\ At(t) = n /\ pending[n] = e[5] /\ pending'[n] = e[6]
         [] e[2] = 8 -> CancelCasNode(t) /\ cidx = n /\ Code(state[n]) = e[5] /\ Code(state'[n]) = e[6]
         [] OTHER -> FALSE

\* The steps with no access in the log. Any thread's, not only the next record's: a worker's push of the
\* node it queued has no record, and the next record may be another worker's steal of that node.
Silent(t) ==
    \/ /\ t \in Workers
       /\ FindTake(t) \/ ZeroPushDeque(t) \/ WalkTakeOwned(t) \/ ReleaseFree(t)
    \/ /\ t = Main
       /\ \/ CancelBegin
          \/ MainPopCompletion(t)
          \/ (CancelCasNode(t) /\ state[cidx] \notin {"WAITING", "QUEUED"})

TraceNext ==
    /\ l < Len(TraceLog)
    /\ LET e == TraceLog[l + 1] IN
       \/ Match(e) /\ l' = l + 1
       \/ (\E t \in Threads : Silent(t)) /\ UNCHANGED l
=============================================================================
