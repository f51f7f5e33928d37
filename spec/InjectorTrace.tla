--------------------------- MODULE InjectorTrace ---------------------------
(***************************************************************************)
(* Trace validation of lib/protocol/injector.ts: is a recorded run of the real *)
(* pool, restricted to one of its queues (the injector, the free list of   *)
(* task records, the completion queue), a behaviour of Injector?           *)
(*                                                                          *)
(* As ChaseLevTrace.tla does for the deques: the log (InjectorTraceData,   *)
(* written by spec/trace.ts) lists every access to the queue's words in    *)
(* the order they took effect; each must be the next step of its thread  *)
(* in Injector, on the same word, the same way, with the same values       *)
(* before and after. Accepted when the complete search reaches depth      *)
(* Len(TraceLog) + 1: some behaviour matched every record.                 *)
(*                                                                          *)
(* Roles: every thread that touches the queue is a producer and a          *)
(* consumer, and calls length. Values are record ids: the value a push     *)
(* pushes (NewValue, chosen freely by the spec) is the one the log shows   *)
(* its thread writing next (TraceNewValue). Patient is empty: a            *)
(* pushPatiently that finds the queue full and tries again makes the same  *)
(* accesses as a push that returns false and a new push. The values are    *)
(* reused, so the invariants about value identity (Conservation,           *)
(* NoDuplicates, FifoPerProducer) do not apply; the index invariants are   *)
(* checked on the way.                                                     *)
(***************************************************************************)
EXTENDS Injector, InjectorTraceData

\* InjectorTraceData defines:
\*   TraceLog: a sequence of <<thread, kind, word, slot, old, now, next>> (kind 1 load, 2 store,
\*     3 compare-exchange; word 0 tail, 1 head, 2 a sequence word, 3 a value word; old and now: the
\*     word before and after, old unknown for a store; next: the value this thread writes to a value
\*     word next, from this record on), TraceThreads, TracePushesEach, TraceCapacity, TraceMaxValue,
\*     and SnapHead, SnapTail, SnapSeq, SnapVal: the queue's words when the log begins.

VARIABLE l   \* how many records of the log the behaviour has matched

TraceValues == 0..TraceMaxValue
TraceUnwritten == 0
TraceNewValue(i) == TraceLog[l + 1][7]
\* pop's QUEUE_EMPTY, comparable with record ids (Injector's is a tuple, comparable only with its tuples).
TraceEmpty == -1

TraceInit ==
    /\ head = SnapHead
    /\ tail = SnapTail
    /\ seq = SnapSeq
    /\ val = SnapVal
    /\ loc = [i \in Threads |-> Idle]
    /\ sent = [i \in Producers |-> 0]
    /\ taken = [v \in AllValues |-> 0]
    /\ ret = [i \in Threads |-> [op |-> "none", val |-> 0]]
    /\ obs = [i \in Threads |-> NoPopObs]
    /\ returned = {}
    /\ l = 0

\* The word thread i's step accesses, as <<kind, word, slot>>: read off its program counter before the
\* step (and, for an operation's first access, the one after). One row per `// spec:` access.
Acc(i) ==
    LET p == loc[i].pc
        s == Slot(loc[i].pos)
    IN CASE p = "Idle" /\ loc'[i].pc = "PushReadSeq" -> <<1, 0, 0>>     \* PushReadTail
         [] p = "Idle" -> <<1, 1, 0>>                                 \* PopReadHead, LengthReadHead
         [] p = "PushReadTail" -> <<1, 0, 0>>
         [] p = "PushReadSeq" -> <<1, 2, s>>
         [] p = "PushCasTail" -> <<3, 0, 0>>
         [] p = "PushWriteValue" -> <<2, 3, s>>
         [] p = "PushPublishSeq" -> <<2, 2, s>>
         [] p = "PopReadHead" -> <<1, 1, 0>>
         [] p = "PopReadSeq" -> <<1, 2, s>>
         [] p = "PopCasHead" -> <<3, 1, 0>>
         [] p = "PopReadValue" -> <<1, 3, s>>
         [] p = "PopReleaseSeq" -> <<2, 2, s>>
         [] p = "LengthReadTail" -> <<1, 0, 0>>

\* The word a names, as the code sees it, in a state with these words.
WordIn(tl, hd, sq, vl, a) ==
    CASE a[2] = 0 -> Wrap(tl)
      [] a[2] = 1 -> Wrap(hd)
      [] a[2] = 2 -> Wrap(sq[a[3]])
      [] OTHER -> vl[a[3]]
\* A logged value as the spec sees it: positions and sequences modulo Modulus, values as they are.
Logged(e, x) == IF e[3] = 3 THEN x ELSE x % Modulus

Match(e) ==
    LET a == Acc(e[1]) IN
    /\ a = <<e[2], e[3], e[4]>>
    /\ e[2] = 2 \/ WordIn(tail, head, seq, val, a) = Logged(e, e[5])
    /\ WordIn(tail', head', seq', val', a) = Logged(e, e[6])

TraceNext ==
    /\ l < Len(TraceLog)
    /\ LET e == TraceLog[l + 1] IN Step(e[1]) /\ Match(e)
    /\ l' = l + 1
=============================================================================
