------------------------------- MODULE Graph -------------------------------
(***************************************************************************)
(* Task graphs (issue 48): a node is a task record that waits for a count  *)
(* of unfinished inputs. This spec is the design of the code, written      *)
(* before it: the words of a node's record, who writes each, and the one   *)
(* atomic step per shared-memory access, named as the code's `// spec:`    *)
(* comments name them (spec/docs/Graph.md lists them), in the code below; *)
(* tests/repo/spec_names_test.ts holds the two in step.                     *)
(*                                                                          *)
(* code: lib/graph/submit.ts                                                *)
(* code: lib/graph/walk.ts                                                  *)
(* code: lib/worker/search.ts                                               *)
(* code: lib/worker/runner.ts                                               *)
(* code: lib/producer/completion.ts                                         *)
(* code: lib/producer/producer.ts                                           *)
(* code: lib/owner/recovery.ts                                              *)
(*                                                                          *)
(* The record of a node n (beside the task record's words it already has): *)
(*   state   FREE, WAITING, QUEUED, RUNNING, DONE, REJECTED, CANCELLED;    *)
(*   pending the count of inputs that have not walked to n yet;            *)
(*   cause   0, or the failed node n's rejection names, or CANCEL;         *)
(*   worker  the worker that runs n (the word recovery reads);             *)
(*   args    one slot per input, the input's result (a copy);              *)
(*   deps    the dependants (node, slot), written by the submitter before  *)
(*           the graph is published and only read after.                   *)
(*                                                                          *)
(* The protocol. The submitter writes every record (WAITING, pending = the *)
(* number of inputs) and pushes the roots (QUEUED) into the injector. A    *)
(* node settles exactly once, by the compare-exchange that takes its state *)
(* word out of WAITING, QUEUED or RUNNING into DONE, REJECTED or          *)
(* CANCELLED. Whoever settles a node, or finds it settled by another,     *)
(* owns it then and WALKS it, exactly once: for each dependant d, in      *)
(* order, it publishes n's result into d's slot (n resolved) or marks d's *)
(* cause (compare-exchange from 0: n rejected names its cause, n          *)
(* cancelled marks CANCEL), and then decrements d's pending count in one  *)
(* atomic step. The decrement that takes the count to zero (it read 1)    *)
(* owns d: a d with no cause goes from WAITING to QUEUED and onto that    *)
(* thread's own deque (a fork and a continuation are the same move); a d  *)
(* with a cause is rejected (naming it) or cancelled, and walked by that  *)
(* thread in turn (a local stack, not recursion). After its walk a node's *)
(* record is freed by its walker, or, a result the user awaits, pushed to *)
(* the owner's completion queue (the owner decodes it and frees it).      *)
(*                                                                          *)
(* Cancellation (a signal or timeout on the graph; at most MaxCancels     *)
(* times): the owner visits every node once and moves WAITING or QUEUED  *)
(* to CANCELLED by compare-exchange, against the zero-reacher's WAITING   *)
(* -> QUEUED and the taker's QUEUED -> RUNNING: exactly one wins. The     *)
(* owner walks nothing: the node's record is still the zero-reacher's or  *)
(* the taker's, who finds CANCELLED and walks it with CANCEL.             *)
(*                                                                          *)
(* Death: a worker dies only inside a node's code (not between two of the *)
(* pool's steps), at most MaxDeaths times. The owner's recovery moves its  *)
(* RUNNING node (worker word) to REJECTED naming it, and walks it like any *)
(* rejected node: every dependant is marked and decremented, and every    *)
(* record comes back. The dead worker's deque stays for thieves.          *)
(*                                                                          *)
(* Terminate rejects every node not settled, and stops the pool at once.  *)
(*                                                                          *)
(* Abstractions: queues are sets (which handle a pop or steal returns is  *)
(* left open); the injector and the deques are linearizable (ChaseLev.tla, *)
(* Injector.tla); sleep is abstracted away (an idle worker polls); a      *)
(* node's result and the reads of its slots at its start are one step     *)
(* with its start (every write to a slot precedes the decrement that let  *)
(* it start); the submitter's writes to records it has not published are  *)
(* one step with the pushes that publish them.                             *)
(***************************************************************************)
EXTENDS Integers, FiniteSets, Sequences, TLC

CONSTANTS
    Workers,    \* worker threads (model values)
    Main,       \* the owner thread, which submits the graph (a model value)
    Shape,      \* the graph: "diamond" (1 -> 2, 1 -> 3, {2, 3} -> 4), "chain" (1 -> 2 -> 3), "join" ({1, 2} -> 3)
    MayFail,    \* the nodes whose code may throw (each run chooses)
    MaxDeaths,  \* how many worker deaths a behaviour may have
    MaxCancels, \* how many cancellations of the graph a behaviour may have (0 or 1)
    Terminate   \* may the owner terminate the pool?

\* The inputs of each node, by shape (nodes 1..N).
InputList ==
    CASE Shape = "diamond" -> <<{}, {1}, {1}, {2, 3}>>
      [] Shape = "chain" -> <<{}, {1}, {2}>>
      [] Shape = "join" -> <<{}, {}, {1, 2}>>
N == Len(InputList)
Nodes == 1..N
Inputs(n) == InputList[n]

ASSUME ConstantsOk ==
    /\ Shape \in {"diamond", "chain", "join"} /\ MayFail \subseteq Nodes /\ MaxDeaths \in Nat
    /\ MaxCancels \in 0..1 /\ Terminate \in BOOLEAN /\ Main \notin Workers

\* A small set as an ascending sequence: the dependants' list, in the order the submitter writes it.
RECURSIVE Ascending(_)
Ascending(S) ==
    IF S = {} THEN <<>>
    ELSE LET m == CHOOSE x \in S : \A y \in S : x <= y IN <<m>> \o Ascending(S \ {m})
\* The deps of each node (constant: computed once).
DepList == [n \in Nodes |-> Ascending({m \in Nodes : n \in Inputs(m)})]
Deps(n) == DepList[n]
\* Every node upstream of n (its inputs, theirs, ...), and every node downstream of n.
RECURSIVE Up(_)
Up(n) == Inputs(n) \cup UNION {Up(i) : i \in Inputs(n)}
UpOf == [n \in Nodes |-> Up(n)]
Downstream(x) == {n \in Nodes : x \in UpOf[n]}
\* The nodes whose record goes to the owner's completion queue after their walk: the sinks (a result the
\* user awaits, or an error the graph reports), and, in a graph that can be cancelled, every node, so that
\* the owner's cancellation visits only records it has not freed itself, never a record reused by another
\* task (the code's TaskFlags.RETURN; a record's reuse is not modelled here).
Awaited == IF MaxCancels > 0 THEN Nodes ELSE {n \in Nodes : Deps(n) = <<>>}
Roots == {n \in Nodes : Inputs(n) = {}}

CANCEL == -1                  \* the cause word of a node whose input was cancelled
Threads == Workers \cup {Main}
NoWorker == Main              \* the worker word before a worker ran the node

VARIABLES
    state,      \* [Nodes -> record states]: each node's state word
    pending,    \* [Nodes -> Nat]: each node's count of inputs that have not walked to it
    cause,      \* [Nodes -> {CANCEL} \cup 0..N]: each node's cause word
    args,       \* [Nodes -> SUBSET Nodes]: the inputs whose result is published in the node's slots
    rworker,    \* [Nodes -> Threads]: each node's worker word
    inj,        \* handles in the injector
    dq,         \* [Workers -> SUBSET Nodes]: handles in each worker's deque
    comp,       \* handles in the owner's completion queue
    pc,         \* [Threads -> string]
    cur,        \* [Threads -> 0..N]: the node a thread runs or walks
    di,         \* [Threads -> Nat]: the walk's position in cur's deps
    stack,      \* [Threads -> SUBSET Nodes]: settled nodes a thread owns and has still to walk
    alive,      \* [Workers -> BOOLEAN]
    deaths,     \* deaths so far
    died,       \* dead workers whose death the owner has not handled yet
    cidx,       \* the owner's cancellation: the next node it visits
    cancels,    \* cancellations so far
    terminated, \* the owner terminated the pool
    runs,       \* history: [Nodes -> Nat], times each node's code started
    settles,    \* history: [Nodes -> Nat], times each node settled (terminate's rejection included)
    outcome,    \* history: [Nodes -> {"none", "resolved", "rejected", "cancelled", "terminated"}]
    named,      \* history: [Nodes -> 0..N], the node a rejection names
    frees,      \* history: [Nodes -> Nat], times each record was freed
    failed,     \* history: the nodes whose own code threw, or whose worker died running it
    early       \* history: some node started before an input resolved or published its result

vars == <<state, pending, cause, args, rworker, inj, dq, comp, pc, cur, di, stack, alive, deaths, died, cidx,
          cancels, terminated, runs, settles, outcome, named, frees, failed, early>>
queueVars == <<inj, dq, comp>>
envVars == <<alive, deaths, died, cidx, cancels, terminated>>
histVars == <<runs, settles, outcome, named, frees, failed, early>>

Init ==
    /\ state = [n \in Nodes |-> "FREE"] /\ pending = [n \in Nodes |-> 0] /\ cause = [n \in Nodes |-> 0]
    /\ args = [n \in Nodes |-> {}] /\ rworker = [n \in Nodes |-> NoWorker]
    /\ inj = {} /\ dq = [w \in Workers |-> {}] /\ comp = {}
    /\ pc = [t \in Threads |-> IF t = Main THEN "Submit" ELSE "Top"]
    /\ cur = [t \in Threads |-> 0] /\ di = [t \in Threads |-> 0] /\ stack = [t \in Threads |-> {}]
    /\ alive = [w \in Workers |-> TRUE] /\ deaths = 0 /\ died = {}
    /\ cidx = 0 /\ cancels = 0 /\ terminated = FALSE
    /\ runs = [n \in Nodes |-> 0] /\ settles = [n \in Nodes |-> 0]
    /\ outcome = [n \in Nodes |-> "none"] /\ named = [n \in Nodes |-> 0] /\ frees = [n \in Nodes |-> 0]
    /\ failed = {} /\ early = FALSE

Go(t, p) == pc' = [pc EXCEPT ![t] = p]
\* History of a settlement: how, and the node a rejection names (0 otherwise).
Settle(n, how, name) ==
    /\ settles' = [settles EXCEPT ![n] = @ + 1]
    /\ outcome' = [outcome EXCEPT ![n] = how]
    /\ named' = [named EXCEPT ![n] = name]
\* What a walk of n writes into its dependants, read from n's record (settled, so stable): nothing but
\* the result (0) if n resolved, CANCEL if it was cancelled, else the failed node its rejection names.
Mark(n) == IF state[n] = "DONE" THEN 0 ELSE IF state[n] = "CANCELLED" THEN CANCEL ELSE cause[n]
\* The walk of n begins at its first dependant.
Walk(t, n) == /\ cur' = [cur EXCEPT ![t] = n] /\ di' = [di EXCEPT ![t] = 1] /\ Go(t, "Walk")
\* The dependant a walk is at.
At(t) == Deps(cur[t])[di[t]]
\* On to the walk's next dependant.
Next1(t) == /\ di' = [di EXCEPT ![t] = @ + 1] /\ Go(t, "Walk")
Free(n) == /\ state' = [state EXCEPT ![n] = "FREE"] /\ frees' = [frees EXCEPT ![n] = @ + 1]

-----------------------------------------------------------------------------
(* The owner submits the graph.                                            *)

\* submit(): every record written (deps, pending, WAITING; a root QUEUED), then the roots pushed into the
\* injector, which publishes them (the records are nobody else's before).
SubmitPushRoots(t) ==
    /\ t = Main /\ pc[t] = "Submit"
    /\ state' = [n \in Nodes |-> IF n \in Roots THEN "QUEUED" ELSE "WAITING"]
    /\ pending' = [n \in Nodes |-> Cardinality(Inputs(n))]
    /\ inj' = Roots
    /\ Go(t, "Top")
    /\ UNCHANGED <<cause, args, rworker, dq, comp, cur, di, stack>> /\ UNCHANGED envVars
    /\ UNCHANGED histVars

-----------------------------------------------------------------------------
(* A worker takes a node and runs it.                                      *)

\* findWork (the deque, the injector, a steal, as the pool's loop does): a worker with no walk pending
\* takes a handle, its own deque first. A dead worker's deque is stolen from like any other.
FindTake(t) ==
    /\ t \in Workers /\ alive[t] /\ pc[t] = "Top" /\ stack[t] = {}
    /\ IF dq[t] /= {}
         THEN \E n \in dq[t] : /\ dq' = [dq EXCEPT ![t] = @ \ {n}] /\ UNCHANGED inj /\ cur' = [cur EXCEPT ![t] = n]
         ELSE \/ \E n \in inj : /\ inj' = inj \ {n} /\ UNCHANGED dq /\ cur' = [cur EXCEPT ![t] = n]
              \/ \E v \in Workers \ {t} : \E n \in dq[v] :
                   /\ dq' = [dq EXCEPT ![v] = @ \ {n}] /\ UNCHANGED inj /\ cur' = [cur EXCEPT ![t] = n]
    /\ Go(t, "Exec")
    /\ UNCHANGED <<state, pending, cause, args, rworker, comp, di, stack>> /\ UNCHANGED envVars
    /\ UNCHANGED histVars

\* execute(): the worker word and the compare-exchange from QUEUED to RUNNING (one step: nobody reads the
\* worker word of a QUEUED record); then the node reads its arguments from its slots (the history checks
\* that every input resolved and published there). Lost to the owner's cancellation: the taker owns the
\* CANCELLED node and walks it.
ExecCasRunning(t) ==
    /\ t \in Workers /\ alive[t] /\ pc[t] = "Exec"
    /\ LET n == cur[t] IN
       IF state[n] = "QUEUED"
         THEN /\ state' = [state EXCEPT ![n] = "RUNNING"]
              /\ rworker' = [rworker EXCEPT ![n] = t]
              /\ runs' = [runs EXCEPT ![n] = @ + 1]
              /\ early' = (early \/ \E i \in Inputs(n) : outcome[i] /= "resolved" \/ i \notin args[n])
              /\ Go(t, "Running")
              /\ UNCHANGED <<cur, di>>
         ELSE /\ Walk(t, n)
              /\ UNCHANGED <<state, rworker, runs, early>>
    /\ UNCHANGED <<pending, cause, args, stack>> /\ UNCHANGED queueVars /\ UNCHANGED envVars
    /\ UNCHANGED <<settles, outcome, named, frees, failed>>

\* The node's code returns (DONE) or throws (REJECTED, its cause word naming itself): the compare-exchange
\* from RUNNING (nothing else moves a RUNNING node while its worker lives). Then the worker walks it.
FinishCasSettled(t) ==
    /\ t \in Workers /\ alive[t] /\ pc[t] = "Running"
    /\ LET n == cur[t] IN
       \E ok \in IF n \in MayFail THEN {TRUE, FALSE} ELSE {TRUE} :
         IF ok THEN /\ state' = [state EXCEPT ![n] = "DONE"]
                    /\ Settle(n, "resolved", 0)
                    /\ UNCHANGED <<cause, failed>>
               ELSE /\ state' = [state EXCEPT ![n] = "REJECTED"]
                    /\ cause' = [cause EXCEPT ![n] = n]
                    /\ Settle(n, "rejected", n)
                    /\ failed' = failed \cup {n}
    /\ Walk(t, cur[t])
    /\ UNCHANGED <<pending, args, rworker, stack>> /\ UNCHANGED queueVars /\ UNCHANGED envVars
    /\ UNCHANGED <<runs, frees, early>>

-----------------------------------------------------------------------------
(* The walk of a settled node: any thread that owns one (a worker, or the  *)
(* owner after a death).                                                    *)

\* A thread with nothing in hand walks the next settled node it owns (a local stack).
WalkTakeOwned(t) ==
    /\ pc[t] = "Top" /\ stack[t] /= {} /\ (t \in Workers => alive[t])
    /\ \E n \in stack[t] : /\ stack' = [stack EXCEPT ![t] = @ \ {n}] /\ Walk(t, n)
    /\ UNCHANGED <<state, pending, cause, args, rworker>> /\ UNCHANGED queueVars /\ UNCHANGED envVars
    /\ UNCHANGED histVars

\* n resolved: its result into the dependant's slot (a copy: n's record is not read again) ...
WalkPublishArg(t) ==
    /\ pc[t] = "Walk" /\ di[t] <= Len(Deps(cur[t])) /\ Mark(cur[t]) = 0
    /\ args' = [args EXCEPT ![At(t)] = @ \cup {cur[t]}]
    /\ Go(t, "Dec")
    /\ UNCHANGED <<state, pending, cause, rworker, cur, di, stack>> /\ UNCHANGED queueVars /\ UNCHANGED envVars
    /\ UNCHANGED histVars

\* ... n rejected or cancelled: the dependant's cause word, by compare-exchange from 0 (the first failed or
\* cancelled input is the one named) ...
WalkMarkCause(t) ==
    /\ pc[t] = "Walk" /\ di[t] <= Len(Deps(cur[t])) /\ Mark(cur[t]) /= 0
    /\ cause' = IF cause[At(t)] = 0 THEN [cause EXCEPT ![At(t)] = Mark(cur[t])] ELSE cause
    /\ Go(t, "Dec")
    /\ UNCHANGED <<state, pending, args, rworker, cur, di, stack>> /\ UNCHANGED queueVars /\ UNCHANGED envVars
    /\ UNCHANGED histVars

\* ... then the dependant's count, one atomic subtraction. The one that read 1 owns the dependant.
WalkDecrement(t) ==
    /\ pc[t] = "Dec"
    /\ pending' = [pending EXCEPT ![At(t)] = @ - 1]
    /\ IF pending[At(t)] = 1 THEN /\ Go(t, "Zero") /\ UNCHANGED di ELSE Next1(t)
    /\ UNCHANGED <<state, cause, args, rworker, cur, stack>> /\ UNCHANGED queueVars /\ UNCHANGED envVars
    /\ UNCHANGED histVars

\* The dependant's last input walked: its cause word read (nobody writes it any more), and the
\* compare-exchange of its state from WAITING: to QUEUED (no cause; pushed next), to REJECTED naming the
\* cause, or to CANCELLED (a cancelled input). Lost to the owner's cancellation, or settled here as
\* rejected or cancelled: this thread walks it.
ZeroCasState(t) ==
    /\ pc[t] = "Zero"
    /\ LET d == At(t) IN
       IF state[d] = "WAITING" /\ cause[d] = 0
         THEN /\ state' = [state EXCEPT ![d] = "QUEUED"]
              /\ Go(t, "Push")
              /\ UNCHANGED <<di, stack, settles, outcome, named>>
       ELSE /\ IF state[d] = "WAITING"
                 THEN IF cause[d] = CANCEL
                        THEN /\ state' = [state EXCEPT ![d] = "CANCELLED"] /\ Settle(d, "cancelled", 0)
                        ELSE /\ state' = [state EXCEPT ![d] = "REJECTED"] /\ Settle(d, "rejected", cause[d])
                 ELSE UNCHANGED <<state, settles, outcome, named>>
            /\ stack' = [stack EXCEPT ![t] = @ \cup {d}]
            /\ Next1(t)
    /\ UNCHANGED <<pending, cause, args, rworker, cur>> /\ UNCHANGED queueVars /\ UNCHANGED envVars
    /\ UNCHANGED <<runs, frees, failed, early>>

\* The QUEUED dependant onto this worker's own deque, where thieves can take it (the owner, whose walks
\* only mark, never gets here: its pushes would go to the injector).
ZeroPushDeque(t) ==
    /\ pc[t] = "Push"
    /\ IF t \in Workers THEN /\ dq' = [dq EXCEPT ![t] = @ \cup {At(t)}] /\ UNCHANGED inj
                        ELSE /\ inj' = inj \cup {At(t)} /\ UNCHANGED dq
    /\ Next1(t)
    /\ UNCHANGED <<state, pending, cause, args, rworker, cur, comp, stack>> /\ UNCHANGED envVars
    /\ UNCHANGED histVars

\* The walk done, nobody reads the node's record any more: its walker frees it ...
ReleaseFree(t) ==
    /\ pc[t] = "Walk" /\ di[t] > Len(Deps(cur[t])) /\ cur[t] \notin Awaited
    /\ Free(cur[t])
    /\ cur' = [cur EXCEPT ![t] = 0] /\ Go(t, "Top")
    /\ UNCHANGED <<pending, cause, args, rworker, di, stack>> /\ UNCHANGED queueVars /\ UNCHANGED envVars
    /\ UNCHANGED <<runs, settles, outcome, named, failed, early>>

\* ... or, a result the user awaits, pushes it to the owner's completion queue.
ReleasePushCompletion(t) ==
    /\ pc[t] = "Walk" /\ di[t] > Len(Deps(cur[t])) /\ cur[t] \in Awaited
    /\ comp' = comp \cup {cur[t]}
    /\ cur' = [cur EXCEPT ![t] = 0] /\ Go(t, "Top")
    /\ UNCHANGED <<state, pending, cause, args, rworker, inj, dq, di, stack>> /\ UNCHANGED envVars
    /\ UNCHANGED histVars

-----------------------------------------------------------------------------
(* The owner.                                                              *)

\* drainCompletions: the awaited result decoded (the user's promise settles with the node's outcome, settled
\* already), and the record freed.
MainPopCompletion(t) ==
    /\ t = Main /\ pc[t] = "Top" /\ stack[t] = {}
    /\ \E n \in comp : /\ comp' = comp \ {n} /\ Free(n)
    /\ UNCHANGED <<pending, cause, args, rworker, inj, dq, pc, cur, di, stack>> /\ UNCHANGED envVars
    /\ UNCHANGED <<runs, settles, outcome, named, failed, early>>

\* cancel(): one node a step, the compare-exchange of its state from WAITING or QUEUED to CANCELLED. The
\* owner walks nothing: the node's last input's walker, or its taker, finds CANCELLED and walks it.
CancelCasNode(t) ==
    /\ t = Main /\ pc[t] = "Cancel"
    /\ IF state[cidx] \in {"WAITING", "QUEUED"}
         THEN /\ state' = [state EXCEPT ![cidx] = "CANCELLED"] /\ Settle(cidx, "cancelled", 0)
         ELSE UNCHANGED <<state, settles, outcome, named>>
    /\ cidx' = cidx + 1
    /\ Go(t, IF cidx = N THEN "Top" ELSE "Cancel")
    /\ UNCHANGED <<pending, cause, args, rworker, cur, di, stack>> /\ UNCHANGED queueVars
    /\ UNCHANGED <<alive, deaths, died, cancels, terminated>>
    /\ UNCHANGED <<runs, frees, failed, early>>

\* workerDied: the node the dead worker ran (its worker word, RUNNING), by compare-exchange to REJECTED
\* naming itself; then the owner walks it like any rejected node.
DiedRejectRunning(t) ==
    /\ t = Main /\ pc[t] = "Top" /\ stack[t] = {} /\ died /= {}
    /\ \E w \in died :
         /\ died' = died \ {w}
         /\ IF \E n \in Nodes : state[n] = "RUNNING" /\ rworker[n] = w
              THEN \E n \in Nodes :
                     /\ state[n] = "RUNNING" /\ rworker[n] = w
                     /\ state' = [state EXCEPT ![n] = "REJECTED"]
                     /\ cause' = [cause EXCEPT ![n] = n]
                     /\ Settle(n, "rejected", n)
                     /\ failed' = failed \cup {n}
                     /\ Walk(t, n)
              ELSE UNCHANGED <<state, cause, settles, outcome, named, failed, cur, di, pc>>
    /\ UNCHANGED <<pending, args, rworker, stack>> /\ UNCHANGED queueVars
    /\ UNCHANGED <<alive, deaths, cidx, cancels, terminated>>
    /\ UNCHANGED <<runs, frees, early>>

\* terminate(): every node not settled rejects now, and the pool stops (its workers are terminated).
TerminateRejectAll(t) ==
    /\ t = Main /\ pc[t] = "Top" /\ Terminate
    /\ terminated' = TRUE
    /\ settles' = [n \in Nodes |-> IF outcome[n] = "none" THEN settles[n] + 1 ELSE settles[n]]
    /\ outcome' = [n \in Nodes |-> IF outcome[n] = "none" THEN "terminated" ELSE outcome[n]]
    /\ UNCHANGED <<state, pending, cause, args, rworker, pc, cur, di, stack>> /\ UNCHANGED queueVars
    /\ UNCHANGED <<alive, deaths, died, cidx, cancels>>
    /\ UNCHANGED <<runs, named, frees, failed, early>>

-----------------------------------------------------------------------------
\* The actions, one per shared-memory access of the code to be (spec/docs/Graph.md); WalkTakeOwned is
\* the walker's local stack. Nothing moves once the pool is terminated.
Step(t) ==
    /\ ~terminated
    /\ \/ SubmitPushRoots(t) \/ FindTake(t) \/ ExecCasRunning(t) \/ FinishCasSettled(t)
       \/ WalkTakeOwned(t) \/ WalkPublishArg(t) \/ WalkMarkCause(t) \/ WalkDecrement(t) \/ ZeroCasState(t)
       \/ ZeroPushDeque(t) \/ ReleaseFree(t) \/ ReleasePushCompletion(t)
       \/ MainPopCompletion(t) \/ CancelCasNode(t) \/ DiedRejectRunning(t) \/ TerminateRejectAll(t)

\* The user's signal or timeout fires (no shared memory: the owner starts its cancellation).
CancelBegin ==
    /\ ~terminated /\ pc[Main] = "Top" /\ stack[Main] = {} /\ cancels < MaxCancels
    /\ cidx' = 1 /\ cancels' = cancels + 1
    /\ Go(Main, "Cancel")
    /\ UNCHANGED <<state, pending, cause, args, rworker, cur, di, stack>> /\ UNCHANGED queueVars
    /\ UNCHANGED <<alive, deaths, died, terminated>> /\ UNCHANGED histVars

\* The environment: a worker dies inside a node's code.
Die(w) ==
    /\ ~terminated /\ alive[w] /\ pc[w] = "Running" /\ deaths < MaxDeaths
    /\ alive' = [alive EXCEPT ![w] = FALSE] /\ deaths' = deaths + 1 /\ died' = died \cup {w}
    /\ Go(w, "Dead")
    /\ UNCHANGED <<state, pending, cause, args, rworker, cur, di, stack>> /\ UNCHANGED queueVars
    /\ UNCHANGED <<cidx, cancels, terminated>> /\ UNCHANGED histVars

\* At rest: nothing queued, in hand or to walk, no death unhandled, the owner idle.
AtRest ==
    /\ pc[Main] = "Top" /\ inj = {} /\ comp = {} /\ died = {}
    /\ \A t \in Threads : stack[t] = {}
    /\ \A w \in Workers : dq[w] = {} /\ (pc[w] = "Top" \/ pc[w] = "Dead")

Next ==
    \/ \E t \in Threads : Step(t)
    \/ CancelBegin \/ \E w \in Workers : Die(w)
    \/ (terminated \/ AtRest) /\ UNCHANGED vars

\* Weak fairness for each thread's steps (the user's cancellation and a death are not forced).
Fairness == \A t \in Threads : WF_vars(Step(t))

Spec == Init /\ [][Next]_vars /\ Fairness

-----------------------------------------------------------------------------
(* Properties.                                                             *)

TypeOK ==
    /\ state \in [Nodes -> {"FREE", "WAITING", "QUEUED", "RUNNING", "DONE", "REJECTED", "CANCELLED"}]
    /\ pending \in [Nodes -> 0..N] /\ cause \in [Nodes -> {CANCEL} \cup 0..N]
    /\ args \in [Nodes -> SUBSET Nodes] /\ rworker \in [Nodes -> Threads]
    /\ inj \subseteq Nodes /\ dq \in [Workers -> SUBSET Nodes] /\ comp \subseteq Nodes
    /\ cur \in [Threads -> 0..N] /\ stack \in [Threads -> SUBSET Nodes]
    /\ runs \in [Nodes -> Nat] /\ settles \in [Nodes -> Nat] /\ frees \in [Nodes -> Nat]
    /\ outcome \in [Nodes -> {"none", "resolved", "rejected", "cancelled", "terminated"}]
    /\ named \in [Nodes -> 0..N] /\ failed \subseteq Nodes /\ early \in BOOLEAN

\* Every node starts at most once, and never before all its inputs resolved and published their result
\* into its slots.
StartsAtMostOnce == \A n \in Nodes : runs[n] <= 1
StartsAfterInputs == ~early

\* Every node settles at most once (resolved, rejected, cancelled, or rejected by terminate).
SettlesAtMostOnce == \A n \in Nodes : settles[n] <= 1

\* A cancelled node never runs; a rejection names a node that failed, the node itself or one upstream.
CancelledNeverRuns == \A n \in Nodes : outcome[n] = "cancelled" => runs[n] = 0
\* Once the owner's cancellation has visited every node, none waits or is queued: none can start any more
\* (every start is a compare-exchange from QUEUED).
NothingStartsAfterCancel == cidx > N => \A n \in Nodes : state[n] \notin {"WAITING", "QUEUED"}
RejectionNamed ==
    \A n \in Nodes : outcome[n] = "rejected" => named[n] \in failed /\ named[n] \in UpOf[n] \cup {n}
\* Downstream of a failed node, nothing runs and nothing resolves.
FailureStopsDownstream ==
    \A x \in failed : \A d \in Downstream(x) : runs[d] = 0 /\ outcome[d] /= "resolved"

\* A record is freed at most once, and at rest every record has come back and every node has settled.
FreedAtMostOnce == \A n \in Nodes : frees[n] <= 1
NoLeakAtRest ==
    (AtRest /\ ~terminated /\ pc[Main] /= "Submit") => \A n \in Nodes : frees[n] = 1 /\ settles[n] = 1

\* terminate leaves no node unsettled.
TerminateSettlesAll == terminated => \A n \in Nodes : settles[n] = 1

\* Liveness, under weak fairness: every node settles, and every record comes back (unless terminated).
EveryNodeSettles == <>(\A n \in Nodes : outcome[n] /= "none")
RecordsComeBack == <>(terminated \/ \A n \in Nodes : frees[n] = 1)

WorkerSymmetry == Permutations(Workers)
=============================================================================
