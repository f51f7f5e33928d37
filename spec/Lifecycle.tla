----------------------------- MODULE Lifecycle -----------------------------
(***************************************************************************)
(* A task's life from submission to settlement (lib/producer/, lib/worker/loop.ts *)
(* and lib/record/task.ts's record states), with fork-join latches (a stolen *)
(* forked task finishing while its joiner waits on the latch), close,      *)
(* terminate, and a worker that dies. One action per shared-memory access  *)
(* that another thread observes, named after its `// spec: Name` comment.  *)
(*                                                                          *)
(* code: lib/worker/loop.ts                                                 *)
(* code: lib/worker/search.ts                                               *)
(* code: lib/worker/runner.ts                                               *)
(* code: lib/worker/fork_join.ts                                            *)
(* code: lib/worker/marks.ts                                                *)
(* code: lib/owner/owner.ts                                                 *)
(* code: lib/producer/producer.ts                                           *)
(* code: lib/producer/completion.ts                                         *)
(* code: lib/producer/submission.ts                                         *)
(* code: lib/owner/recovery.ts                                              *)
(* code: lib/protocol/latch.ts                                              *)
(* code: lib/producer/cancellation.ts                                       *)
(*                                                                          *)
(* Abstractions. Records and payloads are not modelled byte by byte: a     *)
(* record is its state word (FREE, QUEUED, RUNNING, DONE) and its worker   *)
(* word; the stores a thread makes to a record it owns before publishing   *)
(* it (payload, task, origin, latch = 0, QUEUED) are one step with the     *)
(* push that publishes it. Queues are sets (the deque and the injector are *)
(* linearizable; which task a pop returns is left open, a superset of LIFO *)
(* and FIFO). Sleep is abstracted away (SleepWake.tla shows no wakeup is   *)
(* lost): an idle worker polls. Steal-half takes one task.                 *)
(*                                                                          *)
(* Tasks. Main submits tasks 1..Tasks. If Fork, task 1 forks the subtask   *)
(* Child (join(a, b): push b, run a, then joinForked) and joins it.        *)
(* Workers take tasks from the injector one at a time (issue 30), so a    *)
(* deque holds forks, and a submitted task only when a take was cut short  *)
(* before its claim (a stack overflow) and repaired into the taker's own   *)
(* deque: RepairHeldPush, at most MaxPutBacks times.                       *)
(*                                                                          *)
(* Death. A worker dies (at most MaxDeaths times in all) only where the    *)
(* code can die: inside task code, or at the loop's await points (after a  *)
(* task, in sleepAsync) -- not between two shared-memory steps of the pool *)
(* (see spec/docs/Lifecycle.md: a thread killed from outside at such a point is not *)
(* covered). The main thread's workerDied handles the death (recovery.ts): *)
(* it rejects and frees the dead worker's running tasks, fails a subtask   *)
(* it ran for a live joiner, and orphans a subtask it forked and had not   *)
(* joined (latch 0 -> 2 by compare-exchange, against the finisher's        *)
(* exchange to 1: exactly one of them frees the record; FreedAtMostOnce,   *)
(* OrphansComeBack). Then a replacement with the same index takes over the *)
(* deque.                                                                  *)
(*                                                                          *)
(* Cancellation (cancellation.ts). The main thread cancels an unsettled    *)
(* placed task (its caller's signal, or a deadline; at most MaxCancels     *)
(* times): a compare-exchange of its state from QUEUED to CANCELLED, which *)
(* races the worker's own from QUEUED to RUNNING; either way the entry is  *)
(* settled at once and forgotten. A worker that finds CANCELLED frees the  *)
(* record and never runs the task (CancelledNeverRuns); a task that had    *)
(* started runs on, marked aborted, and its completion only frees the     *)
(* record. The subtask of an aborted task 1 is not run (by a thief, or     *)
(* popped back by its joiner): it finishes at once, so its joiner goes on.  *)
(***************************************************************************)
EXTENDS Integers, FiniteSets, TLC

CONSTANTS
    Workers,    \* worker threads (model values)
    Main,       \* the main thread (a model value)
    Tasks,      \* tasks the main thread submits: ids 1..Tasks
    Fork,       \* does task 1 fork (and join) a subtask?
    MaxDeaths,  \* how many worker deaths a behaviour may have
    MaxCancels, \* how many cancellations by the main thread a behaviour may have
    MaxPutBacks, \* how many cut-short takes (a task put back into its taker's deque) a behaviour may have
    Ending      \* "close", "terminate" or "either": how the main thread ends the pool

ASSUME ConstantsOk ==
    /\ Tasks \in Nat \ {0} /\ Fork \in BOOLEAN /\ MaxDeaths \in Nat /\ MaxCancels \in Nat /\ MaxPutBacks \in Nat /\ Main \notin Workers
    /\ Ending \in {"close", "terminate", "either"}

Child == Tasks + 1                 \* the forked subtask's id (a record like any other)
Parent == 1                        \* the task that forks it
MainTasks == 1..Tasks
AllTasks == 1..Child
Threads == Workers \cup {Main}
NoWorker == Main                   \* the record's worker word before any worker ran it

VARIABLES
    rstate,      \* [AllTasks -> {"FREE", "QUEUED", "RUNNING", "DONE", "CANCELLED"}]: each record's state word
    rworker,     \* [AllTasks -> Threads]: each record's worker word (NoWorker = -1)
    latch,       \* the forked subtask's latch word: 0 until its result is written, then 1; 2 once orphaned
    inj,         \* handles in the injector
    dq,          \* [Workers -> SUBSET AllTasks]: handles in each worker's deque
    comp,        \* handles in the completion queue
    lifecycle,   \* the lifecycle word: 0 running, 1 stopping
    pc,          \* [Threads -> string]
    cur,         \* [Workers -> 0..Child]: the task a worker runs (its outer task, in a join)
    help,        \* [Workers -> 0..Child]: the task a joiner runs while it helps (0: none)
    joining,     \* [Workers -> BOOLEAN]: inside joinForked
    alive,       \* [Workers -> BOOLEAN]
    deaths,      \* deaths so far
    died,        \* dead workers whose death the main thread has not handled yet
    replacing,   \* dead workers whose replacement has been started
    forked,      \* task 1 has forked the subtask
    state,       \* the pool's lifecycle on the main thread: "open", "closing", "closed", "terminated"
    entry,       \* [MainTasks -> {"none", "placed", "gone"}]: the main thread's entries (by record)
    settledFlag, \* [MainTasks -> BOOLEAN]: the entry's `settled` flag
    settles,     \* history: [MainTasks -> Nat], times resolve or reject was called
    runs,        \* history: [AllTasks -> Nat], times each task's code started
    posted,      \* tasks submitted so far
    frees,       \* history: [AllTasks -> Nat], times each task's record was freed
    forker,      \* the subtask record's forker word: the worker that forked it (NoWorker before)
    forkerGone,  \* history: the subtask's forker died while the subtask was unjoined
    cancelled,   \* history: the main tasks whose cancellation won the race with their start
    cancels,     \* cancellations so far
    aborted,     \* main tasks marked aborted while running (their forks are not run)
    lateRuns,    \* history: runs of the subtask that started after task 1 was marked aborted
    putBacks     \* tasks taken and put back into the taker's deque (a cut-short take repaired) so far

vars == <<rstate, rworker, latch, inj, dq, comp, lifecycle, pc, cur, help, joining, alive, deaths, died,
          replacing, forked, state, entry, settledFlag, settles, runs, posted, frees, forker, forkerGone, cancelled,
          cancels, aborted, lateRuns, putBacks>>
recVars == <<frees, forker, forkerGone, cancelled, putBacks, cancels, aborted, lateRuns>>
mainVars == <<state, entry, settledFlag, settles, posted, died, replacing>>
workerVars == <<cur, help, joining>>

Init ==
    /\ rstate = [t \in AllTasks |-> "FREE"]
    /\ rworker = [t \in AllTasks |-> NoWorker]
    /\ latch = 0
    /\ inj = {} /\ dq = [w \in Workers |-> {}] /\ comp = {}
    /\ lifecycle = 0
    /\ pc = [t \in Threads |-> IF t = Main THEN "MainOpen" ELSE "Top"]
    /\ cur = [w \in Workers |-> 0] /\ help = [w \in Workers |-> 0] /\ joining = [w \in Workers |-> FALSE]
    /\ alive = [w \in Workers |-> TRUE] /\ deaths = 0 /\ died = {} /\ replacing = {}
    /\ forked = FALSE
    /\ state = "open"
    /\ entry = [t \in MainTasks |-> "none"]
    /\ settledFlag = [t \in MainTasks |-> FALSE]
    /\ settles = [t \in MainTasks |-> 0]
    /\ runs = [t \in AllTasks |-> 0]
    /\ posted = 0
    /\ frees = [t \in AllTasks |-> 0] /\ forker = NoWorker /\ forkerGone = FALSE
    /\ cancelled = {} /\ cancels = 0 /\ aborted = {} /\ lateRuns = 0 /\ putBacks = 0

Go(t, p) == pc' = [pc EXCEPT ![t] = p]
\* Free the records of the tasks in R (TaskTable.releaseHandle): state FREE, counted in the history.
Free(R) == /\ rstate' = [k \in AllTasks |-> IF k \in R THEN "FREE" ELSE rstate[k]]
           /\ frees' = [k \in AllTasks |-> IF k \in R THEN frees[k] + 1 ELSE frees[k]]
\* The task worker w is executing now: the helped one inside a join, else its own.
Active(w) == IF help[w] /= 0 THEN help[w] ELSE cur[w]
\* History: a run of the subtask that starts while task 1 is marked aborted (the code must not make one).
LateRun == lateRuns' = lateRuns + (IF Parent \in aborted /\ runs'[Child] > runs[Child] THEN 1 ELSE 0)
\* Take task t from a queue: as the outer task, or as help inside a join.
Take(w, t) == IF joining[w] THEN /\ help' = [help EXCEPT ![w] = t] /\ UNCHANGED cur
              ELSE /\ cur' = [cur EXCEPT ![w] = t] /\ UNCHANGED help
\* findWork found nothing: in the loop, go round; in a join, check stopping, then wait on the latch.
NoWork(w) == IF joining[w] THEN "JoinStop" ELSE "Top"
\* After a task's finish: back to the join it helped from, or to the loop.
Return(w) ==
    IF help[w] /= 0 THEN /\ help' = [help EXCEPT ![w] = 0] /\ Go(w, "JoinRead") /\ UNCHANGED cur
    ELSE /\ cur' = [cur EXCEPT ![w] = 0] /\ Go(w, "Top") /\ UNCHANGED help

\* settle(): the flag is checked and set before resolve or reject.
Settle(S) ==
    /\ settles' = [t \in MainTasks |-> IF t \in S /\ ~settledFlag[t] THEN settles[t] + 1 ELSE settles[t]]
    /\ settledFlag' = [t \in MainTasks |-> settledFlag[t] \/ t \in S]

-----------------------------------------------------------------------------
(* Worker: the loop and findWork.                                          *)

LoopReadLifecycle(w) ==
    /\ w \in Workers /\ alive[w] /\ pc[w] = "Top"
    /\ Go(w, IF lifecycle = 1 THEN "Exited" ELSE "PopOwn")
    /\ UNCHANGED <<rstate, rworker, latch, inj, dq, comp, lifecycle, alive, deaths, forked, runs>>
    /\ UNCHANGED mainVars /\ UNCHANGED workerVars
    /\ UNCHANGED recVars

FindPopOwn(w) ==
    /\ w \in Workers /\ alive[w] /\ pc[w] = "PopOwn"
    /\ IF dq[w] /= {}
         THEN \E t \in dq[w] : /\ dq' = [dq EXCEPT ![w] = @ \ {t}] /\ Take(w, t) /\ Go(w, "Exec")
         ELSE /\ UNCHANGED <<dq, cur, help>> /\ Go(w, "PopInj")
    /\ UNCHANGED <<rstate, rworker, latch, inj, comp, lifecycle, joining, alive, deaths, forked, runs>>
    /\ UNCHANGED mainVars
    /\ UNCHANGED recVars

\* One task at a time (issue 30: the submission order, Order.tla). The code then reads the injector's
\* length and may call newWork (FindInjectorLeft): SleepWake.tla's, no effect on a task's life.
FindPopInjector(w) ==
    /\ w \in Workers /\ alive[w] /\ pc[w] = "PopInj"
    /\ IF inj /= {}
         THEN \E t \in inj : /\ inj' = inj \ {t} /\ Take(w, t) /\ Go(w, "Exec")
         ELSE /\ UNCHANGED <<inj, cur, help>> /\ Go(w, "Steal")
    /\ UNCHANGED <<rstate, rworker, latch, dq, comp, lifecycle, joining, alive, deaths, forked, runs>>
    /\ UNCHANGED mainVars
    /\ UNCHANGED recVars

\* Steal from any other deque, a dead worker's included.
FindStealHalf(w) ==
    /\ w \in Workers /\ alive[w] /\ pc[w] = "Steal"
    /\ IF \E v \in Workers \ {w} : dq[v] /= {}
         THEN \E v \in Workers \ {w} : \E t \in dq[v] :
                /\ dq' = [dq EXCEPT ![v] = @ \ {t}] /\ Take(w, t) /\ Go(w, "Exec")
         ELSE /\ UNCHANGED <<dq, cur, help>> /\ Go(w, NoWork(w))
    /\ UNCHANGED <<rstate, rworker, latch, inj, comp, lifecycle, joining, alive, deaths, forked, runs>>
    /\ UNCHANGED mainVars
    /\ UNCHANGED recVars

\* execute(): the worker word, then the compare-exchange from QUEUED to RUNNING (one step: nobody reads
\* the worker word of a QUEUED record). Lost to the main thread's cancellation (CANCELLED): the worker
\* frees the record and goes back without running it.
ExecCasRunning(w) ==
    /\ w \in Workers /\ alive[w] /\ pc[w] = "Exec"
    /\ LET t == Active(w) IN
       IF rstate[t] = "QUEUED"
         THEN /\ rstate' = [rstate EXCEPT ![t] = "RUNNING"]
              /\ rworker' = [rworker EXCEPT ![t] = w]
              \* The subtask of an aborted task 1 is claimed but not run: it finishes (with the abort) at once.
              /\ runs' = IF t = Child /\ Parent \in aborted THEN runs ELSE [runs EXCEPT ![t] = @ + 1]
              /\ LateRun
              /\ Go(w, "Running")
              /\ UNCHANGED <<frees, workerVars>>
         ELSE /\ Free({t})
              /\ Return(w)
              /\ UNCHANGED <<rworker, runs, joining, lateRuns>>
    /\ UNCHANGED <<latch, inj, dq, comp, lifecycle, alive, deaths, forked>>
    /\ UNCHANGED mainVars
    /\ UNCHANGED <<forker, forkerGone, cancelled, putBacks, cancels, aborted>>

\* A task taken and not yet claimed whose worker was cut short there (a stack overflow in the pool's own
\* code, caught by task code lower on the worker's stack) goes back into the worker's own deque when the
\* held mark is repaired (marks.ts repairHeld; putBack is the same for a run cut short before its claim):
\* now that tasks come from the injector one at a time, the one way a submitted task gets into a deque.
\* Where the worker goes on is simplified: as after a lost claim. At most MaxPutBacks times in all.
\* One step with the held mark's clear: the shipped repair clears the mark right after the push's publishing
\* store, with no call between, so no death falls between them (issue 47; a clear before the push, as the
\* code once did, let a death there lose the task: tests/protocol/recovery_paths_test.ts).
RepairHeldPush(w) ==
    /\ w \in Workers /\ alive[w] /\ pc[w] = "Exec" /\ putBacks < MaxPutBacks
    /\ dq' = [dq EXCEPT ![w] = @ \cup {Active(w)}]
    /\ putBacks' = putBacks + 1
    /\ Return(w)
    /\ UNCHANGED <<rstate, rworker, latch, inj, comp, lifecycle, joining, alive, deaths, forked, runs>>
    /\ UNCHANGED mainVars
    /\ UNCHANGED <<frees, forker, forkerGone, cancelled, cancels, aborted, lateRuns>>

-----------------------------------------------------------------------------
(* Fork-join: task 1 forks the subtask, runs a, joins.                     *)

\* fork(): the record (QUEUED, latch 0) is published by the push on our deque.
ForkPushDeque(w) ==
    /\ w \in Workers /\ alive[w] /\ pc[w] = "Running" /\ Fork /\ ~forked /\ help[w] = 0 /\ cur[w] = Parent /\ ~joining[w]
    /\ dq' = [dq EXCEPT ![w] = @ \cup {Child}]
    /\ rstate' = [rstate EXCEPT ![Child] = "QUEUED"]
    /\ latch' = 0
    /\ forker' = w
    /\ forked' = TRUE
    /\ joining' = [joining EXCEPT ![w] = TRUE]          \* a runs inline, then joinForked
    /\ Go(w, "JoinRead")
    /\ UNCHANGED <<rworker, inj, comp, lifecycle, alive, deaths, runs, cur, help>>
    /\ UNCHANGED mainVars
    /\ UNCHANGED <<frees, forkerGone, cancelled, putBacks, cancels, aborted, lateRuns>>

\* The join is over: b's result is in hand (or the join threw); task 1's code goes on.
EndJoin(w) == /\ joining' = [joining EXCEPT ![w] = FALSE] /\ Go(w, "Running")

\* `while (mem.load(latch) === 0)`.
JoinReadLatch(w) ==
    /\ w \in Workers /\ alive[w] /\ pc[w] = "JoinRead"
    \* Set: read the result, then free the record (joinForked's release).
    /\ IF latch = 1 THEN EndJoin(w) /\ Free({Child})
                    ELSE /\ Go(w, "JoinPop") /\ UNCHANGED <<joining, rstate, frees>>
    /\ UNCHANGED <<rworker, latch, inj, dq, comp, lifecycle, alive, deaths, forked, runs, cur, help>>
    /\ UNCHANGED mainVars /\ UNCHANGED <<forker, forkerGone, cancelled, putBacks, cancels, aborted, lateRuns>>

\* Pop our deque: b itself if nobody stole it (on top: LIFO), run inline (record released first);
\* else older work, run as help; else findWork.
JoinPopOwn(w) ==
    /\ w \in Workers /\ alive[w] /\ pc[w] = "JoinPop"
    /\ IF Child \in dq[w]
         THEN /\ dq' = [dq EXCEPT ![w] = @ \ {Child}]
              /\ Free({Child})
              /\ runs' = IF Parent \in aborted THEN runs ELSE [runs EXCEPT ![Child] = @ + 1]  \* not run if aborted
              /\ LateRun
              /\ EndJoin(w)
              /\ UNCHANGED help
         ELSE /\ UNCHANGED <<rstate, runs, joining, frees, lateRuns>>
              /\ IF dq[w] /= {}
                   THEN \E t \in dq[w] : /\ dq' = [dq EXCEPT ![w] = @ \ {t}] /\ Take(w, t) /\ Go(w, "Exec")
                   ELSE /\ UNCHANGED <<dq, help>> /\ Go(w, "PopOwn")
    /\ UNCHANGED <<rworker, latch, inj, comp, lifecycle, alive, deaths, forked, cur>>
    /\ UNCHANGED mainVars
    /\ UNCHANGED <<forker, forkerGone, cancelled, putBacks, cancels, aborted>>

\* Nothing to help with: if the pool is stopping, the join throws (task 1 fails).
JoinReadLifecycle(w) ==
    /\ w \in Workers /\ alive[w] /\ pc[w] = "JoinStop"
    /\ IF lifecycle = 1 THEN EndJoin(w) ELSE /\ Go(w, "JoinWait") /\ UNCHANGED joining
    /\ UNCHANGED <<rstate, rworker, latch, inj, dq, comp, lifecycle, alive, deaths, forked, runs, cur, help>>
    /\ UNCHANGED mainVars
    /\ UNCHANGED recVars

\* Atomics.wait(latch, 0, 1): checks the word and blocks in one step. The model gives it no timeout
\* while the pool runs (the notify alone must end it), and lets the 1 ms timeout fire once the pool
\* is stopping (LatchTimeout), which is what lets a joiner whose subtask will never run see it.
JoinWaitLatch(w) ==
    /\ w \in Workers /\ alive[w] /\ pc[w] = "JoinWait"
    /\ Go(w, IF latch = 0 THEN "LatchBlocked" ELSE "JoinRead")
    /\ UNCHANGED <<rstate, rworker, latch, inj, dq, comp, lifecycle, alive, deaths, forked, runs>>
    /\ UNCHANGED mainVars /\ UNCHANGED workerVars
    /\ UNCHANGED recVars

-----------------------------------------------------------------------------
(* finish(): DONE, then the latch (forked) or the completion queue.        *)

FinishStoreDone(w) ==
    /\ w \in Workers /\ alive[w] /\ pc[w] = "Running"
    /\ ~(Fork /\ ~forked /\ help[w] = 0 /\ cur[w] = Parent)   \* task 1 forks before it returns
    /\ help[w] /= 0 \/ ~joining[w]
    /\ rstate' = [rstate EXCEPT ![Active(w)] = "DONE"]
    /\ Go(w, IF Active(w) = Child THEN "SetLatch" ELSE "PushCompletion")
    /\ UNCHANGED <<rworker, latch, inj, dq, comp, lifecycle, alive, deaths, forked, runs>>
    /\ UNCHANGED mainVars /\ UNCHANGED workerVars
    /\ UNCHANGED recVars

FinishPushCompletion(w) ==
    /\ w \in Workers /\ alive[w] /\ pc[w] = "PushCompletion"
    /\ comp' = comp \cup {Active(w)}
    /\ Return(w)
    /\ UNCHANGED <<rstate, rworker, latch, inj, dq, lifecycle, joining, alive, deaths, forked, runs>>
    /\ UNCHANGED mainVars
    /\ UNCHANGED recVars

\* Set, then wake: a joiner that read 0 before this store is blocked on the word, or will see 1.
\* An exchange: if the main thread orphaned the subtask (its forker died), nobody will join it, so the
\* finisher frees the record and wakes nobody.
FinishSetLatch(w) ==
    /\ w \in Workers /\ alive[w] /\ pc[w] = "SetLatch"
    /\ latch' = 1
    /\ IF latch = 2
         THEN /\ Free({Child}) /\ Return(w)
         ELSE /\ Go(w, "NotifyLatch") /\ UNCHANGED <<rstate, frees>> /\ UNCHANGED workerVars
    /\ UNCHANGED <<rworker, inj, dq, comp, lifecycle, alive, deaths, forked, runs>>
    /\ UNCHANGED mainVars /\ UNCHANGED <<joining, forker, forkerGone, cancelled, putBacks, cancels, aborted, lateRuns>>

\* Atomics.notify(latch): wakes the joiner if it is blocked on the word.
WakeJoiner == pc' = [t \in Threads |-> IF t \in Workers /\ pc[t] = "LatchBlocked" THEN "JoinRead" ELSE pc[t]]
FinishNotifyLatch(w) ==
    /\ w \in Workers /\ alive[w] /\ pc[w] = "NotifyLatch"
    /\ IF help[w] /= 0
         THEN /\ help' = [help EXCEPT ![w] = 0] /\ UNCHANGED cur
              /\ pc' = [t \in Threads |-> IF t = w THEN "JoinRead"
                                          ELSE IF t \in Workers /\ pc[t] = "LatchBlocked" THEN "JoinRead"
                                          ELSE pc[t]]
         ELSE /\ cur' = [cur EXCEPT ![w] = 0] /\ UNCHANGED help
              /\ pc' = [t \in Threads |-> IF t = w THEN "Top"
                                          ELSE IF t \in Workers /\ pc[t] = "LatchBlocked" THEN "JoinRead"
                                          ELSE pc[t]]
    /\ UNCHANGED <<rstate, rworker, latch, inj, dq, comp, lifecycle, joining, alive, deaths, forked, runs>>
    /\ UNCHANGED mainVars
    /\ UNCHANGED recVars

-----------------------------------------------------------------------------
(* The main thread.                                                        *)

\* place(): the record (payload, task, QUEUED) is published by the injector push.
SubmitPushInjector(t) ==
    /\ t = Main /\ pc[t] = "MainOpen" /\ state = "open" /\ posted < Tasks
    /\ LET k == posted + 1 IN
       /\ rstate' = [rstate EXCEPT ![k] = "QUEUED"]
       /\ inj' = inj \cup {k}
       /\ entry' = [entry EXCEPT ![k] = "placed"]
       /\ posted' = k
    /\ UNCHANGED <<rworker, latch, dq, comp, lifecycle, pc, alive, deaths, forked, runs, state, settledFlag,
                   settles, died, replacing>>
    /\ UNCHANGED workerVars
    /\ UNCHANGED recVars

\* drainCompletions / tryComplete: settle the entry if it is still there, else only free the record.
MainPopCompletion(t) ==
    /\ t = Main /\ pc[t] \in {"MainOpen", "MainEnd"} /\ state /= "terminated"
    /\ \E k \in comp :
         /\ comp' = comp \ {k}
         /\ Free({k})
         /\ IF entry[k] = "placed"
              THEN /\ entry' = [entry EXCEPT ![k] = "gone"] /\ Settle({k})
              ELSE UNCHANGED <<entry, settledFlag, settles>>
    /\ UNCHANGED <<rworker, latch, inj, dq, lifecycle, pc, alive, deaths, forked, runs, state, posted, died,
                   replacing>>
    /\ UNCHANGED workerVars /\ UNCHANGED <<forker, forkerGone, cancelled, putBacks, cancels, aborted, lateRuns>>

\* workerDied (not once the pool is closed or terminated), one scan of the records (recovery.ts): reject
\* the main tasks the dead worker was running and free their records; orphan the subtask if the dead
\* worker forked it and had not joined it (compare-exchange of its latch from 0 to 2; a latch found set
\* means its result waits for a joiner that will never read it: free the record) ...
DiedRejectRunning(t) ==
    /\ t = Main /\ pc[t] \in {"MainOpen", "MainEnd"} /\ died /= {}
    /\ \E w \in died :
         /\ died' = died \ {w}
         /\ IF state \in {"closed", "terminated"}
              THEN UNCHANGED <<entry, settledFlag, settles, replacing, pc, rstate, frees, latch>>
              ELSE LET R == {k \in MainTasks : rstate[k] = "RUNNING" /\ rworker[k] = w}
                       S == {k \in R : entry[k] = "placed"}
                       orphan == forked /\ forker = w /\ rstate[Child] /= "FREE"
                   IN /\ entry' = [k \in MainTasks |-> IF k \in S THEN "gone" ELSE entry[k]]
                      /\ Settle(S)
                      /\ Free(R \cup (IF orphan /\ latch = 1 THEN {Child} ELSE {}))
                      /\ latch' = IF orphan /\ latch = 0 THEN 2 ELSE latch
                      /\ IF rstate[Child] = "RUNNING" /\ rworker[Child] = w
                           THEN /\ pc' = [pc EXCEPT ![t] = "DiedLatch"]
                                /\ UNCHANGED replacing
                           ELSE /\ replacing' = replacing \cup {w}
                                /\ UNCHANGED pc
    /\ UNCHANGED <<rworker, inj, dq, comp, lifecycle, alive, deaths, forked, runs, state, posted, forker>>
    /\ UNCHANGED workerVars /\ UNCHANGED <<forkerGone, cancelled, putBacks, cancels, aborted, lateRuns>>

\* ... fail the forked task it was running: outcome, DONE, then set its latch and wake its joiner (the
\* latch protocol's exchange: if its forker died too, the subtask is orphaned and the record is freed).
DiedSetLatch(t) ==
    /\ pc[t] = "DiedLatch"
    /\ latch' = 1
    /\ IF latch = 2
         THEN /\ Free({Child})
              /\ Go(t, IF lifecycle = 1 THEN "MainEnd" ELSE "MainOpen")
              /\ replacing' = replacing \cup {rworker[Child]}
         ELSE /\ rstate' = [rstate EXCEPT ![Child] = "DONE"] /\ UNCHANGED frees
              /\ Go(t, "DiedNotify")
              /\ UNCHANGED replacing
    /\ UNCHANGED <<rworker, inj, dq, comp, lifecycle, alive, deaths, forked, runs, forker, forkerGone, cancelled, putBacks,
                   cancels, aborted, lateRuns>>
    /\ UNCHANGED <<state, entry, settledFlag, settles, posted, died>> /\ UNCHANGED workerVars

DiedNotifyLatch(t) ==
    /\ pc[t] = "DiedNotify"
    /\ pc' = [u \in Threads |-> IF u = t THEN (IF lifecycle = 1 THEN "MainEnd" ELSE "MainOpen")
                                ELSE IF u \in Workers /\ pc[u] = "LatchBlocked" THEN "JoinRead" ELSE pc[u]]
    /\ replacing' = replacing \cup {rworker[Child]}
    /\ UNCHANGED <<rstate, rworker, latch, inj, dq, comp, lifecycle, alive, deaths, forked, runs, state, entry,
                   settledFlag, settles, posted, died>>
    /\ UNCHANGED workerVars /\ UNCHANGED recVars

\* cancel(): the compare-exchange of an unsettled placed task's state from QUEUED to CANCELLED. Won, the
\* task never runs (the worker that takes it frees it); lost (it started, or finished), it runs on, marked
\* aborted. Either way its entry is forgotten and settled now.
CancelCasQueued(t) ==
    /\ t = Main /\ pc[t] \in {"MainOpen", "MainEnd"} /\ state \in {"open", "closing"}
    /\ cancels < MaxCancels
    /\ \E k \in MainTasks :
         /\ entry[k] = "placed" /\ ~settledFlag[k]
         /\ IF rstate[k] = "QUEUED"
              THEN /\ rstate' = [rstate EXCEPT ![k] = "CANCELLED"] /\ cancelled' = cancelled \cup {k}
              ELSE UNCHANGED <<rstate, cancelled>>
         \* Lost (it started, or finished): marked aborted; its forks read the mark (not modelled as a step).
         /\ aborted' = IF rstate[k] = "QUEUED" THEN aborted ELSE aborted \cup {k}
         /\ entry' = [entry EXCEPT ![k] = "gone"]
         /\ Settle({k})
         /\ cancels' = cancels + 1
    /\ UNCHANGED <<rworker, latch, inj, dq, comp, lifecycle, pc, alive, deaths, forked, runs, state, posted, died,
                   replacing>>
    /\ UNCHANGED workerVars /\ UNCHANGED <<frees, forker, forkerGone, lateRuns>>
    /\ UNCHANGED putBacks

\* terminate(): every unsettled entry, placed or waiting, rejects now.
TerminateRejectAll(t) ==
    /\ t = Main /\ pc[t] = "MainOpen" /\ state \in {"open", "closing"} /\ Ending \in {"terminate", "either"}
    /\ Settle({k \in MainTasks : entry[k] = "placed" /\ ~settledFlag[k]})
    /\ state' = "terminated"
    /\ Go(t, "Stop")
    /\ UNCHANGED <<rstate, rworker, latch, inj, dq, comp, lifecycle, alive, deaths, forked, runs, entry, posted,
                   died, replacing>>
    /\ UNCHANGED workerVars
    /\ UNCHANGED recVars

\* close(), once every submitted task has settled (drain); terminate(), at once: stopWorkers.
StopStoreLifecycle(t) ==
    /\ t = Main /\ pc[t] = "Stop"
    /\ lifecycle' = 1
    /\ state' = IF state = "closing" THEN "closed" ELSE state
    /\ Go(t, "MainEnd")
    /\ UNCHANGED <<rstate, rworker, latch, inj, dq, comp, alive, deaths, forked, runs, entry, settledFlag,
                   settles, posted, died, replacing>>
    /\ UNCHANGED workerVars
    /\ UNCHANGED recVars

-----------------------------------------------------------------------------
\* The actions, one per `// spec: Name` in the files of the code: lines above (some also actions of
\* SleepWake.tla: the same accesses, seen from the task's side). tests/repo/spec_names_test.ts reads this.
Step(t) ==
    \/ LoopReadLifecycle(t) \/ FindPopOwn(t) \/ FindPopInjector(t) \/ FindStealHalf(t) \/ RepairHeldPush(t)
    \/ ExecCasRunning(t) \/ ForkPushDeque(t) \/ JoinReadLatch(t) \/ JoinPopOwn(t)
    \/ JoinReadLifecycle(t) \/ JoinWaitLatch(t)
    \/ FinishStoreDone(t) \/ FinishPushCompletion(t) \/ FinishSetLatch(t) \/ FinishNotifyLatch(t)
    \/ SubmitPushInjector(t) \/ MainPopCompletion(t) \/ DiedRejectRunning(t) \/ DiedSetLatch(t)
    \/ DiedNotifyLatch(t) \/ TerminateRejectAll(t) \/ StopStoreLifecycle(t) \/ CancelCasQueued(t)

\* Main-thread steps that touch no shared memory: close() starts (state closing), and its drain ends.
CloseBegin ==
    /\ pc[Main] = "MainOpen" /\ state = "open" /\ posted = Tasks /\ Ending \in {"close", "either"}
    /\ state' = "closing"
    /\ UNCHANGED <<rstate, rworker, latch, inj, dq, comp, lifecycle, pc, alive, deaths, forked, runs, entry,
                   settledFlag, settles, posted, died, replacing>>
    /\ UNCHANGED workerVars
    /\ UNCHANGED recVars
DrainDone ==
    /\ pc[Main] = "MainOpen" /\ state = "closing" /\ \A k \in MainTasks : settledFlag[k]
    /\ Go(Main, "Stop")
    /\ UNCHANGED <<rstate, rworker, latch, inj, dq, comp, lifecycle, alive, deaths, forked, runs>>
    /\ UNCHANGED mainVars /\ UNCHANGED workerVars
    /\ UNCHANGED recVars

\* The environment: a worker dies (inside task code, or at an await point of its loop) ...
Die(w) ==
    /\ alive[w] /\ deaths < MaxDeaths
    /\ pc[w] \in {"Top", "Running", "JoinRead"}
    /\ alive' = [alive EXCEPT ![w] = FALSE]
    /\ deaths' = deaths + 1
    /\ died' = died \cup {w}
    /\ Go(w, "Dead")
    /\ UNCHANGED <<rstate, rworker, latch, inj, dq, comp, lifecycle, forked, runs, state, entry, settledFlag,
                   settles, posted, replacing>>
    /\ UNCHANGED workerVars
    \* history: the subtask's forker died before joining it
    /\ forkerGone' = (forkerGone \/ (forked /\ forker = w /\ rstate[Child] /= "FREE"))
    /\ UNCHANGED <<frees, forker, cancelled, putBacks, cancels, aborted, lateRuns>>
\* ... its replacement starts with the same index and deque ...
Replace(w) ==
    /\ w \in replacing
    /\ replacing' = replacing \ {w}
    /\ alive' = [alive EXCEPT ![w] = TRUE]
    /\ Go(w, "Top")
    /\ cur' = [cur EXCEPT ![w] = 0] /\ help' = [help EXCEPT ![w] = 0] /\ joining' = [joining EXCEPT ![w] = FALSE]
    /\ UNCHANGED <<rstate, rworker, latch, inj, dq, comp, lifecycle, deaths, forked, runs, state, entry,
                   settledFlag, settles, posted, died>>
    /\ UNCHANGED recVars
\* ... and a joiner's 1 ms timed wait on the latch returns, once the pool is stopping.
LatchTimeout(w) ==
    /\ w \in Workers /\ alive[w] /\ pc[w] = "LatchBlocked" /\ lifecycle = 1
    /\ Go(w, "JoinRead")
    /\ UNCHANGED <<rstate, rworker, latch, inj, dq, comp, lifecycle, alive, deaths, forked, runs>>
    /\ UNCHANGED mainVars /\ UNCHANGED workerVars
    /\ UNCHANGED recVars

\* The end: the main thread is done and every worker has exited or is dead for good.
Finished ==
    /\ pc[Main] = "MainEnd" /\ died = {} /\ replacing = {}
    /\ \A w \in Workers : pc[w] \in {"Exited", "Dead"}

Environment == \E w \in Workers : Die(w) \/ Replace(w) \/ LatchTimeout(w)

Next ==
    \/ \E t \in Threads : Step(t)
    \/ CloseBegin \/ DrainDone \/ Environment
    \/ Finished /\ UNCHANGED vars

Fairness ==
    /\ \A w \in Workers : WF_vars(Step(w)) /\ WF_vars(Replace(w)) /\ WF_vars(LatchTimeout(w))
    /\ WF_vars(Step(Main) \/ CloseBegin \/ DrainDone)

Spec == Init /\ [][Next]_vars /\ Fairness

-----------------------------------------------------------------------------
(* Properties.                                                             *)

TypeOK ==
    /\ rstate \in [AllTasks -> {"FREE", "QUEUED", "RUNNING", "DONE", "CANCELLED"}]
    /\ cancelled \subseteq MainTasks /\ cancels \in 0..MaxCancels /\ aborted \subseteq MainTasks
    /\ lateRuns \in Nat
    /\ rworker \in [AllTasks -> Threads]
    /\ latch \in {0, 1, 2}
    /\ frees \in [AllTasks -> Nat] /\ forker \in Threads /\ forkerGone \in BOOLEAN
    /\ inj \subseteq AllTasks /\ dq \in [Workers -> SUBSET AllTasks] /\ comp \subseteq AllTasks
    /\ cur \in [Workers -> 0..Child] /\ help \in [Workers -> 0..Child]
    /\ entry \in [MainTasks -> {"none", "placed", "gone"}]
    /\ settles \in [MainTasks -> Nat] /\ runs \in [AllTasks -> Nat]

\* Every submitted task settles at most once (resolve or reject called once), and none runs twice.
SettleAtMostOnce == \A k \in MainTasks : settles[k] <= 1
RunAtMostOnce == \A k \in AllTasks : runs[k] <= 1

\* A task whose cancellation won the race with its start never runs (then or later).
CancelledNeverRuns == \A k \in cancelled : runs[k] = 0
\* The subtask of task 1 does not start running once task 1 was marked aborted (stolen or popped back).
AbortedForkNotRun == lateRuns = 0

\* A record is freed at most once (each task has one record and one generation here): a second free
\* would free it under the task that holds it next.
FreedAtMostOnce == \A k \in AllTasks : frees[k] <= 1

\* Once the main thread has handled the death of the subtask's forker (while the pool runs), the subtask's
\* record is free, or orphaned (its finisher frees it): a dead joiner strands no record.
OrphansComeBack ==
    (forkerGone /\ forker \notin died /\ state \in {"open", "closing"}) => (rstate[Child] = "FREE" \/ latch = 2)

\* A handle is in at most one place: one queue, or one worker's hands.
Holders(k) ==
    Cardinality({w \in Workers : k \in dq[w]})
    + (IF k \in inj THEN 1 ELSE 0) + (IF k \in comp THEN 1 ELSE 0)
    + Cardinality({w \in Workers : alive[w] /\ (cur[w] = k \/ help[w] = k)})
NoDuplicateHandle == \A k \in AllTasks : Holders(k) <= 1

\* No lost latch wake: a joiner never waits on a set latch unless a notify of it is under way.
NoLostLatchWake ==
    \A w \in Workers :
        (alive[w] /\ pc[w] = "LatchBlocked" /\ latch = 1)
            => (\E u \in Workers : alive[u] /\ pc[u] = "NotifyLatch") \/ pc[Main] = "DiedNotify"

\* terminate() leaves no submitted task unsettled.
TerminateSettlesAll ==
    state = "terminated" => \A k \in 1..posted : settledFlag[k]

\* Liveness: every submitted task settles; after stop, every live worker exits; the pool ends.
EveryTaskSettles == \A k \in MainTasks : (posted >= k) ~> settledFlag[k]
WorkersExit == (lifecycle = 1) ~> (\A w \in Workers : pc[w] \in {"Exited", "Dead"})
PoolEnds == <>Finished
\* A cancelled task's record comes back (the worker that takes its handle frees it), unless the pool stops.
CancelledComesBack == \A k \in MainTasks : (rstate[k] = "CANCELLED") ~> (rstate[k] = "FREE" \/ lifecycle = 1)

WorkerSymmetry == Permutations(Workers)
=============================================================================
