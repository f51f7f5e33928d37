--------------------------- MODULE SleepWakeTrace ---------------------------
(***************************************************************************)
(* Trace validation of the sleep/wake protocol (lib/protocol/sleep.ts, with the *)
(* worker loop of lib/worker/loop.ts and the main thread's submission and  *)
(* completion reading): is a recorded run of the real pool a behaviour of  *)
(* SleepWake?                                                              *)
(*                                                                          *)
(* SleepWake models each deque and queue operation as one step on a count *)
(* of tasks, so the run records them that way: in the `sleep` scenario of  *)
(* spec/trace/run.ts every deque and queue operation runs holding the    *)
(* trace lock and is logged as one record with its result                  *)
(* (spec/trace/ops.ts). The log (SleepWakeTraceData, written by          *)
(* spec/trace.ts) holds those operation records and every access to the   *)
(* sleep words (the counters word, each worker's state word), the          *)
(* lifecycle word and the mainWaiting word, with waits and notifies, in    *)
(* the order they took effect. Each record must be the next step of its    *)
(* thread in SleepWake, on the same object, the same way, seeing and       *)
(* leaving the recorded values; an operation's result must be the one the  *)
(* spec's counts give (a pop finds a task exactly when the count is not    *)
(* zero; a steal-half moves half, rounded up; a length is not zero       *)
(* exactly when the count is not: FindInjectorLeft's read of the injector, *)
(* MainRecheckCompletions' of the completion queue).                       *)
(*                                                                          *)
(* Steps with no shared access have no record: a spin round of the worker  *)
(* loop (SleepWake's Doze without its wait), the start of a submission     *)
(* (MainBeginSubmit) and an arm that returns early (MainSkipArm). The     *)
(* search may take one of those for the next record's thread (Silent).    *)
(* Accepted when some behaviour matches every record (Furthest prints it). *)
(***************************************************************************)
EXTENDS SleepWake, SleepWakeTraceData

\* SleepWakeTraceData defines TraceLog: a sequence of <<thread, kind, object, a, b, old, now>>:
\*   thread: a worker (its deque's index) or Main; kind: 1 load, 2 store, 3 compare-exchange, 4 add,
\*   5 sub, 6 exchange, 9 wait, 10 waitAsync, 11 notify, 12 an operation; object: 0 the counters word,
\*   1 the lifecycle word, 2 the mainWaiting word, 100 + i worker i's state word, 200 + d deque d,
\*   300 the injector, 301 the completion queue; for an operation, a is which (1 deque pop, 2 deque
\*   push, 3 steal-half (b: the destination, 200 + d), 5 queue pop, 6 queue push, 7 queue length) and
\*   now its result (-1 for EMPTY); for a wait, a is the expected value and old the word when called.

VARIABLE l   \* how many records of the log the behaviour has matched

TraceInit == Init /\ l = 0 /\ TLCSet(1, 0)

\* With silent steps the search's depth is no count of records matched: this invariant (always true)
\* prints each new furthest count instead, so the last such line says how far some behaviour followed
\* the log (TLC with one worker; register 1 holds the furthest so far).
Furthest == l <= TLCGet(1) \/ (TLCSet(1, l) /\ PrintT(<<"furthest", l>>))

\* The record thread t's step takes, as <<kind, object, a>> (a: the operation, for kind 12; else 0),
\* read off its program counter before the step and after it.
Acc(t) ==
    LET p == pc[t]
        q == pc'[t]
    IN CASE p \in {"Top", "SleepyStop"} -> <<1, 1, 0>>
         [] p = "PopOwn" \/ p = "PopStolen" -> <<12, 200 + t, 1>>
         [] p = "PopInj" -> <<12, 300, 5>>
         [] p = "InjLeft" -> <<12, 300, 7>>                              \* FindInjectorLeft
         [] p \in {"Run", "RunFork"} /\ q = "NewWork" -> <<12, 200 + t, 2>> \* ForkPushDeque
         [] p = "Steal" -> <<12, 200 + (CHOOSE v \in loc'[t].tried \ loc[t].tried : TRUE), 3>>
         [] p = "Idle" /\ q = "Top" -> <<9, 100 + t, 0>>                   \* Doze (its timed wait)
         [] p \in {"Idle", "GetSleepyLoad", "FallLoad", "NewWork"} -> <<1, 0, 0>>
         [] p \in {"GetSleepyCas", "FallCas", "NewWorkCas"} -> <<3, 0, 0>>
         [] p = "Run" -> <<12, 301, 6>>
         [] p = "FinishRead" -> <<1, 2, 0>>
         [] p = "FinishTake" -> <<6, 2, 0>>
         [] p = "FinishNotify" -> <<11, 2, 0>>
         [] p \in {"FallStore", "FallUndo"} -> <<2, 100 + t, 0>>
         [] p = "Wait" -> <<9, 100 + t, 0>>
         [] p = "AwakenCas" -> <<3, 100 + t, 0>>
         [] p = "AwakenSub" -> <<5, 0, 0>>
         [] p = "WakeLoad" -> <<1, 100 + (IF q = "WakeCas" THEN loc'[t].tgt     \* the worker it looked at
                                         ELSE CHOOSE i \in loc[t].todo \ loc'[t].todo : TRUE), 0>>
         [] p = "WakeCas" -> <<3, 100 + loc[t].tgt, 0>>
         [] p = "WakeNotify" -> <<11, 100 + loc[t].tgt, 0>>
         [] p = "WakeAll" -> <<4, 0, 0>>
         [] p = "MainIdle" /\ q = "MainDrain" -> <<2, 2, 0>>             \* MainClearWaiting
         [] p = "MainIdle" -> <<2, 1, 0>>                                \* StopStoreLifecycle
         [] p = "MainArm" -> <<2, 2, 0>>
         [] p = "MainRecheck" -> <<12, 301, 7>>
         [] p = "MainRetract" -> <<2, 2, 0>>
         [] p = "MainWait" -> <<10, 2, 0>>
         [] p = "MainDrain" -> <<12, 301, 5>>
         [] p = "MainSubmit" -> <<12, 300, 6>>
         [] OTHER -> <<0, -1, 0>>

\* The word an object names, in a state with these variables (-1: not a word).
WordIn(o, cn, ws, lc, mw) ==
    CASE o = 0 -> cn
      [] o = 1 -> lc
      [] o = 2 -> mw
      [] o >= 100 /\ o < 200 -> ws[o - 100]
      [] OTHER -> -1

\* The result an operation must have had, given the counts before and after the step.
OpResult(t, e) ==
    CASE e[4] = 1 \/ e[4] = 5 -> (e[7] = -1) = (IF e[3] = 300 THEN inj = 0 ELSE IF e[3] = 301 THEN comp = 0
                                                   ELSE dq[e[3] - 200] = 0)
      [] e[4] = 2 \/ e[4] = 6 -> e[7] = 1
      [] e[4] = 3 -> e[7] = (IF dq[e[3] - 200] = 0 THEN -1 ELSE dq[e[3] - 200] - dq[e[3] - 200] \div 2)
                     /\ e[5] = 200 + t
      [] e[4] = 7 -> (e[7] > 0) = (IF e[3] = 300 THEN inj > 0 ELSE comp > 0)
      [] OTHER -> FALSE

Match(e) ==
    LET t == e[1]
        a == Acc(t)
    IN /\ a = <<e[2], e[3], IF e[2] = 12 THEN e[4] ELSE 0>>
       /\ IF e[2] = 12 THEN OpResult(t, e)
          ELSE /\ e[2] \in {2, 11} \/ WordIn(e[3], counters, wstate, lifecycle, mainWaiting) = e[6]
               /\ e[2] \in {9, 10, 11} \/ WordIn(e[3], counters', wstate', lifecycle', mainWaiting') = e[7]

\* The steps with no shared access, for the next record's thread.
Silent(t) ==
    \/ pc[t] = "Idle" /\ Doze(t)
    \/ LocalStep(t)

TraceNext ==
    /\ l < Len(TraceLog)
    /\ LET e == TraceLog[l + 1] IN
       \/ Step(e[1]) /\ Match(e) /\ l' = l + 1
       \/ Silent(e[1]) /\ UNCHANGED l
=============================================================================
