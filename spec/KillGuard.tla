----------------------------- MODULE KillGuard -----------------------------
(***************************************************************************)
(* The forced-kill handshake of lib/protocol/kill_guard.ts: the main thread may *)
(* terminate a worker thread (to force the abort of a task that ignores    *)
(* its signal) only while that worker is outside the pool's own            *)
(* shared-memory steps -- in task code, at an await, or in a wait -- since *)
(* crash recovery (Lifecycle.tla's death) covers deaths there and nowhere  *)
(* else. One action per shared-memory access, named after the             *)
(* `// spec: Name` comment on it.                                          *)
(*                                                                          *)
(* code: lib/protocol/kill_guard.ts                                         *)
(*                                                                          *)
(* Words. Two per worker, both accessed with Atomics, which are            *)
(* sequentially consistent: every run is an interleaving of single         *)
(* accesses, so one atomic step per access is exact.                       *)
(*   guard  1 while the worker may be inside a pool step, 0 while it is in *)
(*          user code (killable). Only the worker stores it.              *)
(*   epoch  the worker index's epoch; the worker remembers `mine`, the     *)
(*          value it was started with. Only the main thread stores it:    *)
(*          mine + 1 to request a kill, mine again to withdraw.           *)
(*                                                                          *)
(* The argument (Dekker's). The worker stores guard := 1, then loads       *)
(* epoch; the main thread stores epoch := mine + 1, then loads guard. In   *)
(* the single total order of these four accesses, one of the two stores    *)
(* comes first, and so the other thread's later load sees it: either the   *)
(* main thread's KillReadGuard sees the worker's GuardRaise (1: it does    *)
(* not kill, and polls again), or the worker's GuardReadEpoch sees the     *)
(* main thread's KillBumpEpoch (it halts instead of entering the pool      *)
(* step). Both loads cannot miss both stores. A halted worker lowers its   *)
(* guard (so the poll succeeds) and waits for the epoch to come back; on   *)
(* its way out it raises the guard and reads the epoch once more (the      *)
(* same handshake again), since a new request may have come meanwhile.    *)
(*                                                                          *)
(* Termination is asynchronous: after the main thread decided (killed),    *)
(* the worker runs on for a while, a zombie, until the termination lands.  *)
(* The safety property holds for the zombie's steps too.                   *)
(*                                                                          *)
(* Abstractions. User code, awaits and waits are one place, "User" (guard  *)
(* 0); the worker may stay there for ever. The pool's own critical work    *)
(* is two abstract steps, Pool1 and Pool2, so that a kill between them is  *)
(* observable. The halted worker's timed wait between loads of the epoch   *)
(* is its load alone: a load that sees another value changes nothing (a    *)
(* stuttering step). The main thread's poll of the guard likewise: a load  *)
(* that sees 1 changes nothing, and it polls again later. Whether the task *)
(* finished meanwhile (the reason to withdraw) is a free choice. One       *)
(* worker, never replaced: a replacement starts with a new epoch, so the   *)
(* killed worker's `mine` never comes back (spec/docs/KillGuard.md says what that *)
(* assumes of the guard word).                                             *)
(***************************************************************************)
EXTENDS Integers

CONSTANTS
    Worker,       \* the worker thread (a model value)
    Main,         \* the main thread (a model value)
    MaxRequests   \* how many kill requests the main thread may make in a behaviour

ASSUME ConstantsOk == MaxRequests \in Nat \ {0} /\ Worker /= Main

Threads == {Worker, Main}

\* The worker's places, each named after what it does next.
\*   "Pool1", "Pool2"  inside a pool step (its shared accesses under way): never killable
\*   "Lower"           pool steps done, before GuardLower
\*   "User"            user code, an await or a wait: killable
\*   "Raise"           back in pool code, before GuardRaise; "ReadEpoch" before GuardReadEpoch
\*   "HaltLower", "HaltRead", "HaltRaise", "HaltRecheck"  the halt loop
PoolPcs == {"Pool1", "Pool2"}
HaltPcs == {"HaltLower", "HaltRead", "HaltRaise", "HaltRecheck"}
WorkerPcs == PoolPcs \cup HaltPcs \cup {"Lower", "User", "Raise", "ReadEpoch"}

VARIABLES
    guard,     \* the guard word: 0 or 1
    epoch,     \* the epoch word
    mine,      \* the worker's own epoch, remembered when it started (never changes)
    wpc,       \* the worker's place
    alive,     \* the worker thread runs (a zombie too, until its termination lands)
    mpc,       \* the main thread: "idle", "poll" (a request stands), "killed" (it decided to terminate)
    killed,    \* history: the main thread decided to terminate the worker
    requests   \* kill requests so far

vars == <<guard, epoch, mine, wpc, alive, mpc, killed, requests>>
mainVars == <<mpc, killed, requests>>

Init ==
    \* The worker starts inside the pool's loop (guard 1), with the epoch it was started with.
    /\ guard = 1
    /\ epoch = 0
    /\ mine = epoch
    /\ wpc = "Pool1"
    /\ alive = TRUE
    /\ mpc = "idle"
    /\ killed = FALSE
    /\ requests = 0

\* A step of the worker thread: only while it runs (a zombie's steps included).
Go(t, p) == /\ t = Worker /\ alive /\ wpc' = p

-----------------------------------------------------------------------------
(* Worker: around user code.                                               *)

\* Before calling user code: killable from here on.
GuardLower(t) ==
    /\ Go(t, "User") /\ wpc = "Lower"
    /\ guard' = 0
    /\ UNCHANGED <<epoch, mine, alive>> /\ UNCHANGED mainVars

\* Back in pool code (from user code or the event loop), before any shared access: no longer killable.
\* Pairs with KillReadGuard: a poll after this store sees 1.
GuardRaise(t) ==
    /\ Go(t, "ReadEpoch") /\ wpc = "Raise"
    /\ guard' = 1
    /\ UNCHANGED <<epoch, mine, alive>> /\ UNCHANGED mainVars

\* Pairs with KillBumpEpoch: a request stored before GuardRaise is seen here, and the worker halts.
GuardReadEpoch(t) ==
    /\ Go(t, IF epoch = mine THEN "Pool1" ELSE "HaltLower") /\ wpc = "ReadEpoch"
    /\ UNCHANGED <<guard, epoch, mine, alive>> /\ UNCHANGED mainVars

-----------------------------------------------------------------------------
(* Worker: the halt loop (a kill was requested).                           *)

\* Killable again: the main thread's poll can now succeed.
HaltLower(t) ==
    /\ Go(t, "HaltRead") /\ wpc = "HaltLower"
    /\ guard' = 0
    /\ UNCHANGED <<epoch, mine, alive>> /\ UNCHANGED mainVars

\* The timed wait between loads: it goes on only when the epoch is ours again (withdrawn). Pairs with
\* KillWithdraw.
HaltReadEpoch(t) ==
    /\ Go(t, "HaltRaise") /\ wpc = "HaltRead"
    /\ epoch = mine
    /\ UNCHANGED <<guard, epoch, mine, alive>> /\ UNCHANGED mainVars

\* Leaving the halt is entering pool code: the same handshake as GuardRaise ...
HaltRaise(t) ==
    /\ Go(t, "HaltRecheck") /\ wpc = "HaltRaise"
    /\ guard' = 1
    /\ UNCHANGED <<epoch, mine, alive>> /\ UNCHANGED mainVars

\* ... and GuardReadEpoch: a new request may have come since HaltReadEpoch, and its poll may already
\* have seen the guard 0.
HaltRecheckEpoch(t) ==
    /\ Go(t, IF epoch = mine THEN "Pool1" ELSE "HaltLower") /\ wpc = "HaltRecheck"
    /\ UNCHANGED <<guard, epoch, mine, alive>> /\ UNCHANGED mainVars

-----------------------------------------------------------------------------
(* Main thread.                                                            *)

\* Request: the worker will halt at its next return to pool code.
KillBumpEpoch(t) ==
    /\ t = Main /\ mpc = "idle" /\ requests < MaxRequests
    /\ epoch' = epoch + 1
    /\ mpc' = "poll"
    /\ requests' = requests + 1
    /\ UNCHANGED <<guard, mine, wpc, alive, killed>>

\* Poll: the guard is 0, so the worker is in user code or halted, and stays out of pool steps (its next
\* GuardReadEpoch or HaltRecheckEpoch sees the request): the main thread decides to terminate it.
KillReadGuard(t) ==
    /\ t = Main /\ mpc = "poll"
    /\ guard = 0        \* a load that sees 1 changes nothing: the main thread polls again later
    /\ mpc' = "killed"
    /\ killed' = TRUE
    /\ UNCHANGED <<guard, epoch, mine, wpc, alive, requests>>

\* Withdraw (the task finished meanwhile): the epoch is the worker's own again, and the notify wakes a
\* halted worker's wait (HaltReadEpoch).
KillWithdraw(t) ==
    /\ t = Main /\ mpc = "poll"
    /\ epoch' = mine
    /\ mpc' = "idle"
    /\ UNCHANGED <<guard, mine, wpc, alive, killed, requests>>

Step(t) ==
    \/ GuardLower(t) \/ GuardRaise(t) \/ GuardReadEpoch(t)
    \/ HaltLower(t) \/ HaltReadEpoch(t) \/ HaltRaise(t) \/ HaltRecheckEpoch(t)
    \/ KillBumpEpoch(t) \/ KillReadGuard(t) \/ KillWithdraw(t)

-----------------------------------------------------------------------------
(* The environment: steps with no shared access of the handshake.          *)

\* The pool's critical work, two steps (a kill between them would strand what the first one claimed).
PoolStep ==
    /\ Go(Worker, IF wpc = "Pool1" THEN "Pool2" ELSE "Lower") /\ wpc \in PoolPcs
    /\ UNCHANGED <<guard, epoch, mine, alive>> /\ UNCHANGED mainVars

\* User code returns, or the event loop runs the worker's next callback. Not fair: user code may run,
\* or an await may wait, for ever.
UserReturn ==
    /\ Go(Worker, "Raise") /\ wpc = "User"
    /\ UNCHANGED <<guard, epoch, mine, alive>> /\ UNCHANGED mainVars

\* worker.terminate() takes effect, some time after the main thread decided.
TerminationLands ==
    /\ killed /\ alive
    /\ alive' = FALSE
    /\ UNCHANGED <<guard, epoch, mine, wpc>> /\ UNCHANGED mainVars

Environment == PoolStep \/ UserReturn \/ TerminationLands

\* The end, not a deadlock: the worker is gone, or the main thread has made its last request (the
\* model's bound) and is idle. A worker stuck for ever then is HaltedWorkerResumes's to catch.
Ended == (~alive \/ (mpc = "idle" /\ requests = MaxRequests)) /\ UNCHANGED vars

Next ==
    \/ \E t \in Threads : Step(t)
    \/ Environment
    \/ Ended

\* Pool code runs on (every worker step but UserReturn: the pool's own steps end, the halt loop moves
\* whenever it can), and the main thread's poll, while it stands, succeeds once the guard stays 0.
\* Weak fairness is enough for the poll: the guard need not stay 0 while the worker cycles, but a
\* cycling worker halts at its next GuardReadEpoch, and a halted worker's guard stays 0.
Fairness ==
    /\ WF_vars(Step(Worker) \/ PoolStep)
    /\ WF_vars(KillReadGuard(Main))

Spec == Init /\ [][Next]_vars /\ Fairness

-----------------------------------------------------------------------------
(* Properties.                                                             *)

TypeOK ==
    /\ guard \in {0, 1}
    /\ epoch \in mine..mine + MaxRequests
    /\ wpc \in WorkerPcs
    /\ alive \in BOOLEAN /\ killed \in BOOLEAN
    /\ mpc \in {"idle", "poll", "killed"}
    /\ requests \in 0..MaxRequests

\* The point: once the main thread decided to terminate the worker, the worker is not inside a pool
\* step, and never enters one, zombie or not.
NeverKilledInPoolStep == killed => wpc \notin PoolPcs

\* The guard covers every pool step: the worker is never inside one with its guard down.
GuardCoversPoolSteps == wpc \in PoolPcs => guard = 1

\* A request that is not withdrawn ends with the kill: a worker in user code for ever, or cycling
\* between user code and pool steps, or halted, is seen with its guard down.
KilledUnlessWithdrawn == (mpc = "poll") ~> (killed \/ mpc = "idle")

\* A halted worker does not stay halted: it resumes once the request is withdrawn (and no new one
\* stands), or it is killed.
HaltedWorkerResumes == (wpc \in HaltPcs) ~> (wpc \notin HaltPcs \/ killed)
=============================================================================
