------------------------------ MODULE RoomWait ------------------------------
(***************************************************************************)
(* The wait for room in the pool's queue (maxQueue), for the pool as a    *)
(* whole: at most MaxPending tasks pending, summed over the pending word  *)
(* of every producer (the owner's ControlWords.ownerPending, each slot's  *)
(* ProducerWords.pending). A producer that finds no room and calls        *)
(* waitForRoom may have nothing of its own pending: no completion of its  *)
(* own will wake it, so it counts itself in ControlWords.roomWaiters,     *)
(* arms its completion reader (which, through the waitsForRoom hook,      *)
(* waits even with nothing pending), then checks for room again. A        *)
(* producer whose task settles takes its pending word down, checks room   *)
(* for its own waiters, reads the count and, if another producer is       *)
(* counted, wakes every other producer's channel; a woken producer       *)
(* drains and checks room for its waiters. Either the check after the     *)
(* count sees the room, or the settle after the room came sees the count. *)
(*                                                                          *)
(* What it found: the code, when this spec was written, checks room for a *)
(* woken producer in the drain's freed hook (Producer.freed: Room.check), *)
(* before onWake arms the reader again. A settle between that check and   *)
(* the arm's store of 1 sees the count, wakes the channel, and finds its  *)
(* word 0: the producer then waits, counted and armed, with room and     *)
(* nobody to wake it. This spec checks room after the re-arm, the order  *)
(* waitForRoom has (count, arm, check); the code's old order is the      *)
(* mutant CheckBeforeArm. Fixed: arm's re-check looks at the room too.   *)
(*                                                                          *)
(* One action per shared-memory access, each named by a `// spec: Name`    *)
(* comment at that access (some shared with RecordWait.tla, Producers.tla *)
(* and SleepWake.tla, which model the same access):                        *)
(* code: lib/producer/room.ts                                               *)
(* code: lib/producer/ledger.ts                                             *)
(* code: lib/producer/completion.ts                                         *)
(* code: lib/producer/submission.ts                                         *)
(* code: lib/worker/search.ts                                               *)
(* code: lib/worker/marks.ts                                                *)
(* The ledger's own count (TaskLedger.pending, what hasRoom calls mine)   *)
(* moves in the same synchronous run as the producer's shared word, with  *)
(* no shared access between: here they are one number, pw[p]. A          *)
(* producer's steps that touch no shared memory (the user's next          *)
(* submission attempt, the resolve of its waiters, arm's choice of path)  *)
(* are folded into the access next to them, or are the local step         *)
(* UserNext.                                                               *)
(*                                                                          *)
(* The user of each producer submits Tasks tasks, one after another:      *)
(* `while (!hasRoom()) await waitForRoom(); submit`. hasRoom here is the  *)
(* one check of Admission.admit, and waitForRoom starts at its count: its *)
(* own first hasRoom is the same check again, and a QueueFullError sends  *)
(* the user back to the same loop.                                        *)
(*                                                                          *)
(* hasRoom reads every pending word, one a step (the owner's, then each   *)
(* slot's), then, if the sum is under the bound, roomWaiters for the      *)
(* turns: while another producer is counted, a producer holding its share *)
(* (MaxPending divided among the Producers, at least 1) has no room. The  *)
(* code skips the reads when its own count is at the bound; the sum is at *)
(* the bound then too, so reading them anyway answers the same. A         *)
(* producer whose waiters were resolved stays counted until a macrotask   *)
(* of its own (the uncount timer), at any later idle moment here: its     *)
(* user may await anything between two submissions.                       *)
(*                                                                          *)
(* What it does not model: records and the backlog (RecordWait.tla: here  *)
(* a record is always free and a submission goes straight to the         *)
(* injector), cancellation, close, terminate, stop and deaths             *)
(* (Producers.tla; a dead producer's count is undone by the owner),       *)
(* slots that are FREE (every producer here is open), the fine steps of a *)
(* wake (its load, exchange and notify are one step, as in RecordWait.tla;*)
(* SleepWake.tla has them), and the queues' internals (counts here).      *)
(*                                                                          *)
(* What it does not guarantee, and so does not check: room is checked,    *)
(* not reserved. Two producers that check at once may both pass, so the   *)
(* pool may hold one task more than MaxPending per other producer         *)
(* checking at that instant (OvershootBounded checks that this is all),   *)
(* and a producer woken for room may find it taken (it waits again).      *)
(* The turns make a waiting producer's check pass before a producer at    *)
(* its share takes the place, but not before a producer under its share  *)
(* takes it; with finite Tasks every wait ends, and that is what is       *)
(* checked, not a bound on how often a waiting producer is overtaken.     *)
(*                                                                          *)
(* What is checked:                                                         *)
(* - WaitsCounted: a producer waiting for room (its event loop idle, its  *)
(*   waitForRoom promise unresolved) with nothing of its own pending is   *)
(*   counted in roomWaiters and its reader is armed: a settle elsewhere   *)
(*   then wakes it (no completion of its own will).                       *)
(* - WaitersCount, TimerCounted: the count is the number of producers    *)
(*   that say they are counted; an uncount timer runs only for a counted  *)
(*   producer.                                                             *)
(* - OvershootBounded: the pending words add up to at most MaxPending    *)
(*   plus one for each other producer (room checked, not reserved).        *)
(* - RoomServed (liveness): every wait for room ends.                     *)
(* - AllSettled (liveness): every task is submitted and settled.          *)
(* - CountReturns (liveness): in the end nobody is counted.               *)
(***************************************************************************)
EXTENDS Naturals, FiniteSets

CONSTANTS
    Producers,   \* the number of producers (1..Producers; producer 1 is the owner's), each with its channel
    MaxPending,  \* the bound: workers + maxQueue
    Tasks,       \* tasks each producer's user submits
    Workers      \* the number of worker threads

ASSUME Producers \in Nat \ {0, 1} /\ MaxPending \in Nat \ {0} /\ Tasks \in Nat \ {0} /\ Workers \in Nat \ {0}

P == 1..Producers
\* Workers are numbered after the producers, so that every thread is an integer.
W == (Producers + 1)..(Producers + Workers)

\* A producer's share while another waits: the bound divided among the open producers (ControlWords.producersOpen
\* + 1: here every producer is open), at least 1.
Share == IF MaxPending \div Producers > 1 THEN MaxPending \div Producers ELSE 1

VARIABLES
    pw,           \* each producer's pending word (producer 1's: ControlWords.ownerPending), and its ledger's count
    roomWaiters,  \* ControlWords.roomWaiters: the producers that say they wait for room
    waitw,        \* each producer's waiting word (its channel's)
    cq,           \* each producer's completion queue (a count of its finished tasks)
    inj,          \* the injector: each producer's tasks in it (a count)
    wpc,          \* each worker's step
    wfor,         \* each worker's task in hand: the producer whose it is (0: none)
    pc,           \* each producer's step ("Idle": its event loop waits for the next event)
    ret,          \* where each producer's arm() returns to
    hret,         \* which call of hasRoom() runs: "User", "Recheck" (waitForRoom), "Released", "Check"
    sum,          \* hasRoom's sum of the pending words read so far
    cur,          \* hasRoom's next slot to read, or the wake loop's next producer (0: in neither)
    submitted,    \* tasks submitted (the ledger's entries)
    user,         \* the user's code: "ready" (to submit next), "blocked" (awaits waitForRoom), "done"
    counted,      \* Room.counted: it counts itself in roomWaiters
    timer,        \* Room.cancelUncount: the uncount timer is pending (a macrotask)
    waiting,      \* the reader's `waiting`: armed, its wake-up to come
    mode          \* how that wake-up comes: "async" (waitAsync on word 1: once the word is 0), "micro" (queued)

vars == <<pw, roomWaiters, waitw, cq, inj, wpc, wfor, pc, ret, hret, sum, cur, submitted, user, counted, timer,
          waiting, mode>>

\* The groups each action leaves unchanged.
shared == <<pw, roomWaiters, waitw, cq, inj>>
wvars == <<wpc, wfor>>
pvars == <<pc, ret, hret, sum, cur, submitted, user, counted, timer, waiting, mode>>

Init ==
    /\ pw = [p \in P |-> 0]
    /\ roomWaiters = 0
    /\ waitw = [p \in P |-> 0]
    /\ cq = [p \in P |-> 0]
    /\ inj = [p \in P |-> 0]
    /\ wpc = [w \in W |-> "Top"]
    /\ wfor = [w \in W |-> 0]
    /\ pc = [p \in P |-> "Idle"]
    /\ ret = [p \in P |-> "Idle"]
    /\ hret = [p \in P |-> "User"]
    /\ sum = [p \in P |-> 0]
    /\ cur = [p \in P |-> 0]
    /\ submitted = [p \in P |-> 0]
    /\ user = [p \in P |-> "ready"]
    /\ counted = [p \in P |-> FALSE]
    /\ timer = [p \in P |-> FALSE]
    /\ waiting = [p \in P |-> FALSE]
    /\ mode = [p \in P |-> "none"]

\* Whether arm() arms (else it returns at once): something to wait for (a task of its own pending, or a wait for
\* room: the waitsForRoom hook), and not armed already (then, with no backlog here, its recount changes nothing).
ArmGoes(isWaiting, pend, forRoom) ==
    /\ ~(pend = 0 /\ ~forRoom)
    /\ ~isWaiting

\* A call of arm() that returns to r: its first step, and where it returns to.
Arm(p, r, isWaiting, pend, forRoom) ==
    IF ArmGoes(isWaiting, pend, forRoom)
      THEN /\ pc' = [pc EXCEPT ![p] = "Announce"] /\ ret' = [ret EXCEPT ![p] = r]
      ELSE /\ pc' = [pc EXCEPT ![p] = r] /\ UNCHANGED ret

\* The next producer after c other than p (the wake loop skips its own channel).
NextOther(p, c) == IF c + 1 = p THEN c + 2 ELSE c + 1

\* Room.resolveWaiters: the user's code goes on (a microtask); counted, the producer stays counted until its uncount
\* timer runs (set once: a timer pending stays).
Resolve(p) ==
    /\ user' = [user EXCEPT ![p] = "ready"]
    /\ timer' = [timer EXCEPT ![p] = @ \/ counted[p]]

\* What follows hasRoom(), by its caller, with its answer: folded into the step that found the answer.
AfterRoom(p, has) ==
    IF hret[p] = "User"
      THEN IF has
             THEN /\ pc' = [pc EXCEPT ![p] = "Submit"]
                  /\ UNCHANGED <<ret, hret, user, timer>>
             \* No room: waitForRoom. Its promise first (the waitsForRoom hook is true from here), then counted
             \* (already counted, its timer pending: count(true) does nothing), then arm, then hasRoom again.
             ELSE /\ user' = [user EXCEPT ![p] = "blocked"]
                  /\ hret' = [hret EXCEPT ![p] = "Recheck"]
                  /\ IF counted[p] THEN Arm(p, "SumOwner", waiting[p], pw[p], TRUE)
                     ELSE /\ pc' = [pc EXCEPT ![p] = "Count"] /\ UNCHANGED ret
                  /\ UNCHANGED timer
      ELSE /\ IF has THEN Resolve(p) ELSE UNCHANGED <<user, timer>>
           /\ hret' = [hret EXCEPT ![p] = "User"]
           /\ CASE hret[p] = "Recheck" -> pc' = [pc EXCEPT ![p] = "Idle"] /\ UNCHANGED ret
                \* released(): its own waiters checked; then the count is read.
                [] hret[p] = "Released" -> pc' = [pc EXCEPT ![p] = "ReadCount"] /\ UNCHANGED ret
                \* check() after a wake, once the reader is armed again.
                [] hret[p] = "Check" -> pc' = [pc EXCEPT ![p] = "Idle"] /\ UNCHANGED ret

----------------------------------------------------------------------------
(* A producer.                                                              *)

\* Not a shared access (outside Step): the user's code tries its next submission, hasRoom first.
UserNext(p) ==
    /\ p \in P /\ pc[p] = "Idle" /\ user[p] = "ready"
    /\ pc' = [pc EXCEPT ![p] = "SumOwner"]
    /\ hret' = [hret EXCEPT ![p] = "User"]
    /\ UNCHANGED <<shared, wvars, ret, sum, cur, submitted, user, counted, timer, waiting, mode>>

\* hasRoom, pendingInPool: the owner's pending word.
RoomSumOwner(p) ==
    /\ p \in P /\ pc[p] = "SumOwner"
    /\ sum' = [sum EXCEPT ![p] = pw[1]]
    /\ cur' = [cur EXCEPT ![p] = 2]
    /\ pc' = [pc EXCEPT ![p] = "SumSlot"]
    /\ UNCHANGED <<shared, wvars, ret, hret, submitted, user, counted, timer, waiting, mode>>

\* Then each slot's pending word, one a step; the sum at the bound, no room.
RoomSumSlot(p) ==
    /\ p \in P /\ pc[p] = "SumSlot"
    /\ LET s == sum[p] + pw[cur[p]]
       IN IF cur[p] < Producers
            THEN /\ sum' = [sum EXCEPT ![p] = s]
                 /\ cur' = [cur EXCEPT ![p] = @ + 1]
                 /\ UNCHANGED <<pc, ret, hret, user, timer>>
            ELSE /\ sum' = [sum EXCEPT ![p] = 0]
                 /\ cur' = [cur EXCEPT ![p] = 0]
                 /\ IF s >= MaxPending THEN AfterRoom(p, FALSE)
                    ELSE /\ pc' = [pc EXCEPT ![p] = "Turns"]
                         /\ UNCHANGED <<ret, hret, user, timer>>
    /\ UNCHANGED <<shared, wvars, submitted, counted, waiting, mode>>

\* Then the turns: another producer counted (itself not included), and it holds its share: no room.
RoomReadTurns(p) ==
    /\ p \in P /\ pc[p] = "Turns"
    /\ AfterRoom(p, ~(roomWaiters > (IF counted[p] THEN 1 ELSE 0) /\ pw[p] >= Share))
    /\ UNCHANGED <<shared, wvars, sum, cur, submitted, counted, waiting, mode>>

\* count(): counted in roomWaiters by waitForRoom (then arm, then hasRoom again), or uncounted by its timer, a
\* macrotask (still waiting for room then: it stays counted, and the timer is gone).
RoomCountWaiting(p) ==
    /\ p \in P
    /\ \/ /\ pc[p] = "Count"
          /\ counted' = [counted EXCEPT ![p] = TRUE]
          /\ roomWaiters' = roomWaiters + 1
          /\ Arm(p, "SumOwner", waiting[p], pw[p], TRUE)
          /\ UNCHANGED timer
       \/ /\ pc[p] = "Idle" /\ timer[p]
          /\ timer' = [timer EXCEPT ![p] = FALSE]
          /\ IF user[p] = "blocked" THEN UNCHANGED <<counted, roomWaiters>>
             ELSE /\ counted' = [counted EXCEPT ![p] = FALSE]
                  /\ roomWaiters' = roomWaiters - 1
          /\ UNCHANGED <<pc, ret>>
    /\ UNCHANGED <<pw, waitw, cq, inj, wvars, hret, sum, cur, submitted, user, waiting, mode>>

\* TaskLedger.open: the task counted pending, in the producer's word; then arm() (before the task is published: its
\* completion must find the reader waiting), which returns to the enqueue.
SubmitCountPending(p) ==
    /\ p \in P /\ pc[p] = "Submit"
    /\ pw' = [pw EXCEPT ![p] = @ + 1]
    /\ submitted' = [submitted EXCEPT ![p] = @ + 1]
    /\ Arm(p, "Enqueue", waiting[p], pw[p] + 1, user[p] = "blocked")
    /\ UNCHANGED <<roomWaiters, waitw, cq, inj, wvars, hret, sum, cur, user, counted, timer, waiting, mode>>

\* The injector push (a record is always free here); the user's code goes on to its next task, if any.
SubmitPushInjector(p) ==
    /\ p \in P /\ pc[p] = "Enqueue"
    /\ inj' = [inj EXCEPT ![p] = @ + 1]
    /\ pc' = [pc EXCEPT ![p] = "Idle"]
    /\ user' = [user EXCEPT ![p] = IF submitted[p] = Tasks THEN "done" ELSE "ready"]
    /\ UNCHANGED <<pw, roomWaiters, waitw, cq, wvars, ret, hret, sum, cur, submitted, counted, timer, waiting, mode>>

\* arm(): its waiting word 1 (after the count: whoever settles a task after this reads the count).
MainAnnounceWaiting(p) ==
    /\ p \in P /\ pc[p] = "Announce"
    /\ waitw' = [waitw EXCEPT ![p] = 1]
    /\ pc' = [pc EXCEPT ![p] = "RecheckCq"]
    /\ UNCHANGED <<pw, roomWaiters, cq, inj, wvars, ret, hret, sum, cur, submitted, user, counted, timer, waiting,
                   mode>>

\* Its completion queue once more: a completion there, it takes the word back. (The free-list look of
\* RecordWait.tla's ArmRecheckFree is made only by a starved producer: none here.)
MainRecheckCompletions(p) ==
    /\ p \in P /\ pc[p] = "RecheckCq"
    /\ pc' = [pc EXCEPT ![p] = IF cq[p] > 0 THEN "Retract" ELSE "Wait"]
    /\ UNCHANGED <<shared, wvars, ret, hret, sum, cur, submitted, user, counted, timer, waiting, mode>>

\* Something to do: the word back to 0, the wake-up queued as a microtask.
MainRetractWaiting(p) ==
    /\ p \in P /\ pc[p] = "Retract"
    /\ waitw' = [waitw EXCEPT ![p] = 0]
    /\ waiting' = [waiting EXCEPT ![p] = TRUE]
    /\ mode' = [mode EXCEPT ![p] = "micro"]
    /\ pc' = [pc EXCEPT ![p] = ret[p]]
    /\ ret' = [ret EXCEPT ![p] = "Idle"]
    /\ UNCHANGED <<pw, roomWaiters, cq, inj, wvars, hret, sum, cur, submitted, user, counted, timer>>

\* Atomics.waitAsync on word 1: woken once a wake exchanged it to 0 and notified (already 0: at once).
MainWaitAsync(p) ==
    /\ p \in P /\ pc[p] = "Wait"
    /\ mode' = [mode EXCEPT ![p] = IF waitw[p] = 1 THEN "async" ELSE "micro"]
    /\ waiting' = [waiting EXCEPT ![p] = TRUE]
    /\ pc' = [pc EXCEPT ![p] = ret[p]]
    /\ ret' = [ret EXCEPT ![p] = "Idle"]
    /\ UNCHANGED <<shared, wvars, hret, sum, cur, submitted, user, counted, timer>>

\* onWake: the event loop runs the wake-up (its word is 0, or it was queued); the word cleared; then the drain.
MainClearWaiting(p) ==
    /\ p \in P /\ pc[p] = "Idle" /\ waiting[p]
    /\ mode[p] = "micro" \/ (mode[p] = "async" /\ waitw[p] = 0)
    /\ waiting' = [waiting EXCEPT ![p] = FALSE]
    /\ mode' = [mode EXCEPT ![p] = "none"]
    /\ waitw' = [waitw EXCEPT ![p] = 0]
    /\ pc' = [pc EXCEPT ![p] = "Drain"]
    /\ UNCHANGED <<pw, roomWaiters, cq, inj, wvars, ret, hret, sum, cur, submitted, user, counted, timer>>

\* The drain: one completion popped (then its settle). The queue empty: onWake arms again, and then, if it waits
\* for room, checks it (another producer's task may have settled): armed first, as waitForRoom is, so that a
\* settle after the check finds the waiting word 1. (The code checked first until this spec: mutant CheckBeforeArm;
\* now arm's re-check, completion.ts, looks at the room of a producer that waits for it.)
MainPopCompletion(p) ==
    /\ p \in P /\ pc[p] = "Drain"
    /\ IF cq[p] > 0
         THEN /\ cq' = [cq EXCEPT ![p] = @ - 1]
              /\ pc' = [pc EXCEPT ![p] = "Settle"]
              /\ UNCHANGED <<ret, hret>>
         ELSE /\ UNCHANGED cq
              /\ IF user[p] = "blocked"
                   THEN /\ Arm(p, "SumOwner", waiting[p], pw[p], TRUE) /\ hret' = [hret EXCEPT ![p] = "Check"]
                   ELSE /\ Arm(p, "Idle", waiting[p], pw[p], FALSE) /\ UNCHANGED hret
    /\ UNCHANGED <<pw, roomWaiters, waitw, inj, wvars, sum, cur, submitted, user, counted, timer, waiting, mode>>

\* TaskLedger.settle: the pending word down (the ledger's count with it); then released(): its own waiters, if
\* it has any and there is room (hasRoom), and then the count.
SettleReleasePending(p) ==
    /\ p \in P /\ pc[p] = "Settle"
    /\ pw' = [pw EXCEPT ![p] = @ - 1]
    /\ IF user[p] = "blocked"
         THEN pc' = [pc EXCEPT ![p] = "SumOwner"] /\ hret' = [hret EXCEPT ![p] = "Released"]
         ELSE pc' = [pc EXCEPT ![p] = "ReadCount"] /\ UNCHANGED hret
    /\ UNCHANGED <<roomWaiters, waitw, cq, inj, wvars, ret, sum, cur, submitted, user, counted, timer, waiting, mode>>

\* released(): roomWaiters read after the pending word went down; another producer counted (itself not
\* included), every other producer's channel is woken; else back to the drain.
RoomReadWaiters(p) ==
    /\ p \in P /\ pc[p] = "ReadCount"
    /\ IF roomWaiters > (IF counted[p] THEN 1 ELSE 0)
         THEN /\ pc' = [pc EXCEPT ![p] = "WakeOthers"]
              /\ cur' = [cur EXCEPT ![p] = NextOther(p, 0)]
         ELSE /\ pc' = [pc EXCEPT ![p] = "Drain"]
              /\ UNCHANGED cur
    /\ UNCHANGED <<shared, wvars, ret, hret, sum, submitted, user, counted, timer, waiting, mode>>

\* wakeProducer on each other channel, one a step: its word exchanged 1 -> 0 and notified (one step here).
RoomWakeProducer(p) ==
    /\ p \in P /\ pc[p] = "WakeOthers"
    /\ waitw' = [waitw EXCEPT ![cur[p]] = 0]
    /\ IF NextOther(p, cur[p]) > Producers
         THEN /\ pc' = [pc EXCEPT ![p] = "Drain"] /\ cur' = [cur EXCEPT ![p] = 0]
         ELSE /\ cur' = [cur EXCEPT ![p] = NextOther(p, cur[p])] /\ UNCHANGED pc
    /\ UNCHANGED <<pw, roomWaiters, cq, inj, wvars, ret, hret, sum, submitted, user, counted, timer, waiting, mode>>

----------------------------------------------------------------------------
(* A worker: takes a task, runs it, pushes its completion to its producer, wakes it. *)

FindPopInjector(w) ==
    /\ w \in W /\ wpc[w] = "Top"
    /\ \E p \in P :
         /\ inj[p] > 0
         /\ inj' = [inj EXCEPT ![p] = @ - 1]
         /\ wfor' = [wfor EXCEPT ![w] = p]
    /\ wpc' = [wpc EXCEPT ![w] = "Push"]
    /\ UNCHANGED <<pw, roomWaiters, waitw, cq, pvars>>

FinishPushCompletion(w) ==
    /\ w \in W /\ wpc[w] = "Push"
    /\ cq' = [cq EXCEPT ![wfor[w]] = @ + 1]
    /\ wpc' = [wpc EXCEPT ![w] = "Wake"]
    /\ UNCHANGED <<pw, roomWaiters, waitw, inj, wfor, pvars>>

\* wakeProducer on the task's producer: its word exchanged 1 -> 0 and notified (one step).
FinishWakeProducer(w) ==
    /\ w \in W /\ wpc[w] = "Wake"
    /\ waitw' = [waitw EXCEPT ![wfor[w]] = 0]
    /\ wpc' = [wpc EXCEPT ![w] = "Top"]
    /\ wfor' = [wfor EXCEPT ![w] = 0]
    /\ UNCHANGED <<pw, roomWaiters, cq, inj, pvars>>

\* A thread's step: a producer's (t in P) or a worker's (t in W). Each action is one `// spec:` name at its
\* access in the files of the code: lines above.
Step(t) ==
    \/ RoomSumOwner(t) \/ RoomSumSlot(t) \/ RoomReadTurns(t) \/ RoomCountWaiting(t) \/ SubmitCountPending(t)
    \/ SubmitPushInjector(t) \/ MainAnnounceWaiting(t) \/ MainRecheckCompletions(t) \/ MainRetractWaiting(t)
    \/ MainWaitAsync(t) \/ MainClearWaiting(t) \/ MainPopCompletion(t) \/ SettleReleasePending(t)
    \/ RoomReadWaiters(t) \/ RoomWakeProducer(t)
    \/ FindPopInjector(t) \/ FinishPushCompletion(t) \/ FinishWakeProducer(t)

Threads == P \cup W

Next == (\E t \in Threads : Step(t)) \/ (\E p \in P : UserNext(p)) \/ UNCHANGED vars

\* Weak fairness for each thread, and for each producer's user (it submits all of its tasks).
Spec ==
    /\ Init /\ [][Next]_vars
    /\ \A t \in Threads : WF_vars(Step(t))
    /\ \A p \in P : WF_vars(UserNext(p))

----------------------------------------------------------------------------
(* Properties.                                                              *)

Steps == {"Idle", "SumOwner", "SumSlot", "Turns", "Count", "Submit", "Enqueue", "Announce", "RecheckCq", "Retract",
          "Wait", "Drain", "Settle", "ReadCount", "WakeOthers"}

TypeOK ==
    /\ pw \in [P -> 0..Tasks]
    /\ roomWaiters \in 0..Producers
    /\ waitw \in [P -> {0, 1}]
    /\ cq \in [P -> 0..Tasks] /\ inj \in [P -> 0..Tasks]
    /\ wpc \in [W -> {"Top", "Push", "Wake"}] /\ wfor \in [W -> {0} \cup P]
    /\ pc \in [P -> Steps] /\ ret \in [P -> {"Idle", "Enqueue", "SumOwner"}]
    /\ hret \in [P -> {"User", "Recheck", "Released", "Check"}]
    /\ sum \in [P -> 0..(Producers * Tasks)] /\ cur \in [P -> 0..Producers]
    /\ submitted \in [P -> 0..Tasks] /\ user \in [P -> {"ready", "blocked", "done"}]
    /\ counted \in [P -> BOOLEAN] /\ timer \in [P -> BOOLEAN] /\ waiting \in [P -> BOOLEAN]
    /\ mode \in [P -> {"none", "async", "micro"}]

\* roomWaiters is the number of producers that say they are counted.
WaitersCount == roomWaiters = Cardinality({p \in P : counted[p]})

\* The uncount timer runs only for a counted producer.
TimerCounted == \A p \in P : timer[p] => counted[p]

RECURSIVE SumOver(_, _)
SumOver(f, s) == IF s = {} THEN 0 ELSE LET x == CHOOSE x \in s : TRUE IN f[x] + SumOver(f, s \ {x})

\* Room is checked, not reserved: each producer may pass its check while the others fill the pool, one task more
\* each, and no more.
OvershootBounded == SumOver(pw, P) <= MaxPending + Producers - 1

\* A producer waiting for room (event loop idle, its user blocked on waitForRoom) with nothing of its own pending
\* (no completion of its own will come) is counted, and its reader armed: a settle elsewhere then wakes it.
WaitsCounted ==
    \A p \in P : (pc[p] = "Idle" /\ user[p] = "blocked" /\ pw[p] = 0) => (counted[p] /\ waiting[p])

\* Every wait for room ends.
RoomServed == \A p \in P : user[p] = "blocked" ~> user[p] /= "blocked"

\* Every task is submitted and settled in the end.
AllSettled == <>(\A p \in P : submitted[p] = Tasks /\ pw[p] = 0)

\* In the end nobody is counted: each producer's timer uncounted it.
CountReturns == <>[](roomWaiters = 0)
=============================================================================
