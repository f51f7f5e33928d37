----------------------------- MODULE RecordWait -----------------------------
(***************************************************************************)
(* The backlog's wait for a record: producers share the task records, and *)
(* a producer whose submission finds none free keeps the task in its      *)
(* backlog until one is freed, by itself or by another producer. Nobody    *)
(* else's completion tells it so: it counts itself waiting for a record    *)
(* (ControlWords.recordWaiters), looks at the free list after the count,   *)
(* and waits; a producer that frees records, if any are free on the      *)
(* shared list after its own feed, reads the count and, if it is not 0,   *)
(* wakes ONE producer that waits for a record (protocol/producers.ts       *)
(* wakeRecordWaiters): it takes the next turn (ControlWords.recordWakeTurn)*)
(* and looks at the slots from that turn's on, round the ring, waking the *)
(* first whose counted word is 1 and whose waiting word it takes 1 -> 0.  *)
(* The woken producer feeds its backlog and, records still free, wakes the *)
(* next in the same way (the wake passes on; none free, another took them *)
(* and will wake someone when it frees them). Before issue 50 every        *)
(* waiting producer was woken for every freed batch: up to 8 wake-ups a   *)
(* record with 8 producers on 2 cores.                                     *)
(*                                                                          *)
(* The counted word (a remote slot's ProducerWords.countedWaiting, the     *)
(* owner's ControlWords.ownerCountedWaiting) is stored right after the    *)
(* count; here the two are one step (counted, shared): a wake that reads  *)
(* the count between them passes the producer over, whose look at the    *)
(* free list comes after both.                                             *)
(*                                                                          *)
(* The bug this spec was written for (fixed in the commit before it): the  *)
(* submission arms the reader before it places the task (the completion   *)
(* that settles the task must find the reader waiting). A task that finds *)
(* no record goes to the backlog after that arm, which computed "starved" *)
(* from the empty backlog: the producer waited uncounted, and with no task *)
(* of its own in flight no completion of its own came either; another     *)
(* producer freed the record, read a count of 0, and woke nobody (a hang, *)
(* 1 in 5 runs of the 8-producer test). The fix: admission arms again     *)
(* after a task went to the backlog, and arm, called while it already     *)
(* waits, recounts (RecordCountWaiting) and then looks at the free list    *)
(* (RecountRecheckFree: a record freed before the count was seen by no    *)
(* wake, so it wakes itself). Mutant BacklogUncountedWhileWaiting is the   *)
(* old code, RecountSkipsFreeCheck the fix without its look.               *)
(*                                                                          *)
(* One action per shared-memory access, each named by a `// spec: Name`    *)
(* comment at that access (some shared with Producers.tla, SleepWake.tla   *)
(* and Lifecycle.tla, which model the same access):                        *)
(* code: lib/producer/completion.ts                                         *)
(* code: lib/producer/admission.ts                                          *)
(* code: lib/producer/submission.ts                                         *)
(* code: lib/protocol/producers.ts                                          *)
(* code: lib/worker/search.ts                                               *)
(* code: lib/worker/marks.ts                                                *)
(* A producer's steps that touch no shared memory (a submission's start,   *)
(* the ledger's count, the backlog push, arm's choice of path) are folded  *)
(* into the access that follows them, or are the local step Submit.        *)
(*                                                                          *)
(* What it does not model: the fair share of records (Submitter.starved   *)
(* also asks that the producer hold fewer than its share: here a producer *)
(* with a backlog is always starved, and takes any free record), the      *)
(* owner's private record cache (a producer in another thread keeps none), *)
(* cancellation, close, terminate and deaths (Producers.tla), the sleep    *)
(* protocol's fine steps (a wake's load, exchange and notify are one step, *)
(* as in Producers.tla; SleepWake.tla has them), the queues' internals     *)
(* (counts here), and record identities (only how many are free matters). *)
(*                                                                          *)
(* What is checked:                                                         *)
(* - WaitsCounted: a producer that waits (its event loop idle, its reader *)
(*   armed) with a backlog and nothing of its own in flight is counted in *)
(*   recordWaiters (else only its own completions could wake it, and none *)
(*   comes). The old code's order breaks it.                               *)
(* - WaitersCount, RecordsConserved: the count is the number of producers *)
(*   that say they are counted; free records and records in use add up.  *)
(* - NoRecordLeftAsleep: once every producer is idle with no wake-up     *)
(*   pending, no producer counted as waiting for a record sleeps while a  *)
(*   record is free (the one wake a batch reached a waiter that took it,  *)
(*   or passed on). Mutant WokenWakesNobody (only a producer that read    *)
(*   completions of its own wakes) breaks it.                              *)
(* - AllSettled (liveness): every submitted task is settled.               *)
(* - BacklogServed (liveness): a backlog while a record is free does not   *)
(*   last: the backlog empties or the record is taken.                     *)
(* - WaiterServed (liveness, fairness): a producer asleep counted as       *)
(*   waiting for a record is served in the end: it holds a record or its  *)
(*   backlog emptied. Mutant WakeSkipsLastSlot (the ring's modulo one      *)
(*   short: the last slot never looked at) and StopsAtAwakeWaiter (the    *)
(*   wake gives up at the first counted slot, awake or not) break it.      *)
(***************************************************************************)
EXTENDS Naturals, FiniteSets

CONSTANTS
    Producers,  \* the number of producers (1..Producers), each with its completion channel
    Records,    \* the number of task records, shared by every producer
    Tasks,      \* tasks each producer submits
    Workers     \* the number of worker threads

ASSUME Producers \in Nat \ {0} /\ Records \in Nat \ {0} /\ Tasks \in Nat \ {0} /\ Workers \in Nat \ {0}

P == 1..Producers
\* Workers are numbered after the producers, so that every thread is an integer.
W == (Producers + 1)..(Producers + Workers)

VARIABLES
    free,       \* the records on the shared free list (a count)
    waiters,    \* ControlWords.recordWaiters: the producers that say they wait for a record
    waitw,      \* each producer's waiting word (its channel's)
    cq,         \* each producer's completion queue (a count of its finished tasks)
    inj,        \* the injector: each producer's tasks in it (a count)
    wpc,        \* each worker's step
    wfor,       \* each worker's task in hand: the producer whose it is (0: none)
    pc,         \* each producer's step ("Idle": its event loop waits for the next event)
    ret,        \* where each producer's arm() returns to
    submitted,  \* tasks submitted (the ledger's entries)
    backlog,    \* tasks in the producer's backlog (waiting for a record)
    held,       \* records holding the producer's tasks (in the injector, running, or finished and not read)
    settled,    \* tasks settled
    counted,    \* the reader's countedWaiting: it counts itself in recordWaiters
    waiting,    \* the reader's `waiting`: armed, its wake-up to come
    mode,       \* how that wake-up comes: "async" (waitAsync on word 1: once the word is 0), "micro" (queued)
    turn,       \* ControlWords.recordWakeTurn: the next wake's turn (kept mod Producers here)
    cursor,     \* wakeRecordWaiters's loop: the slot it looks at (0: not in it)
    looked,     \* how many slots that loop looked at before this one
    popped      \* the drain's `read`: it popped a completion of its own (read only by a mutant)

vars == <<free, waiters, waitw, cq, inj, turn, wpc, wfor, pc, ret, submitted, backlog, held, settled, counted, waiting,
          mode, cursor, looked, popped>>

\* The groups each action leaves unchanged.
shared == <<free, waiters, waitw, cq, inj, turn>>
wvars == <<wpc, wfor>>
pvars == <<pc, ret, submitted, backlog, held, settled, counted, waiting, mode, cursor, looked, popped>>

Init ==
    /\ free = Records
    /\ waiters = 0
    /\ waitw = [p \in P |-> 0]
    /\ cq = [p \in P |-> 0]
    /\ inj = [p \in P |-> 0]
    /\ wpc = [w \in W |-> "Top"]
    /\ wfor = [w \in W |-> 0]
    /\ pc = [p \in P |-> "Idle"]
    /\ ret = [p \in P |-> "Idle"]
    /\ submitted = [p \in P |-> 0]
    /\ backlog = [p \in P |-> 0]
    /\ held = [p \in P |-> 0]
    /\ settled = [p \in P |-> 0]
    /\ counted = [p \in P |-> FALSE]
    /\ waiting = [p \in P |-> FALSE]
    /\ mode = [p \in P |-> "none"]
    /\ turn = 0
    /\ cursor = [p \in P |-> 0]
    /\ looked = [p \in P |-> 0]
    /\ popped = [p \in P |-> FALSE]

\* The ledger's count of tasks not yet settled.
Pending(p) == submitted[p] - settled[p]

\* Submitter.starved (without the fair share): tasks wait in the backlog for a record.
Starved(p) == backlog[p] > 0

\* Where a call of arm() goes first, with the reader's `waiting` and the count of pending tasks then: nothing
\* pending, it returns; already waiting, it recounts (the fix); else it counts, announces, rechecks and waits.
ArmPc(r, isWaiting, pend) ==
    IF pend = 0 THEN r
    ELSE IF isWaiting THEN "RecountCount"
    ELSE "ArmCount"

----------------------------------------------------------------------------
(* A producer.                                                              *)

\* Not a shared access (outside Step): a submission starts. The ledger's entry, then arm(), which returns to the
\* enqueue (admission.ts: armed before the task is placed, so that its completion finds the reader waiting).
Submit(p) ==
    /\ p \in P /\ pc[p] = "Idle" /\ submitted[p] < Tasks
    /\ submitted' = [submitted EXCEPT ![p] = @ + 1]
    /\ pc' = [pc EXCEPT ![p] = ArmPc("Enqueue", waiting[p], Pending(p) + 1)]
    /\ ret' = [ret EXCEPT ![p] = "Enqueue"]
    /\ UNCHANGED <<shared, wvars, backlog, held, settled, counted, waiting, mode, cursor, looked, popped>>

\* The free list's pop (Submitter.place's allocate). At the enqueue: taken if the backlog is empty and a record is
\* free (placed and pushed, one step here), else the task goes to the backlog; then, with a backlog, arm() once
\* more (admission.ts: waiting for a record now, it must be counted). At the feed (the reader's drain, after it
\* freed records): backlog tasks placed, oldest first, while records are free.
SubmitTakeRecord(p) ==
    /\ p \in P /\ pc[p] \in {"Enqueue", "Feed"}
    /\ IF pc[p] = "Enqueue"
         THEN IF backlog[p] = 0 /\ free > 0
                THEN /\ free' = free - 1
                     /\ held' = [held EXCEPT ![p] = @ + 1]
                     /\ inj' = [inj EXCEPT ![p] = @ + 1]
                     /\ pc' = [pc EXCEPT ![p] = "Idle"]
                     /\ UNCHANGED <<backlog, ret>>
                ELSE /\ backlog' = [backlog EXCEPT ![p] = @ + 1]
                     /\ pc' = [pc EXCEPT ![p] = ArmPc("Idle", waiting[p], Pending(p))]
                     /\ ret' = [ret EXCEPT ![p] = "Idle"]
                     /\ UNCHANGED <<turn, free, held, inj>>
         ELSE IF backlog[p] > 0 /\ free > 0
                THEN /\ free' = free - 1
                     /\ backlog' = [backlog EXCEPT ![p] = @ - 1]
                     /\ held' = [held EXCEPT ![p] = @ + 1]
                     /\ inj' = [inj EXCEPT ![p] = @ + 1]
                     /\ UNCHANGED <<pc, ret>>
                ELSE /\ pc' = [pc EXCEPT ![p] = "ReadFree"]
                     /\ UNCHANGED <<turn, free, backlog, held, inj, ret>>
    /\ UNCHANGED <<turn, waiters, waitw, cq, wvars, submitted, settled, counted, waiting, mode, cursor, looked, popped>>

\* countWaiting: the reader counts itself in recordWaiters (or uncounts) if that changed. From arm (starved
\* now?), from the recount of an arm while waiting (the same; unchanged, the recount returns at once), and after
\* a drain (uncounted unless still starved; then arm()).
RecordCountWaiting(p) ==
    /\ p \in P /\ pc[p] \in {"ArmCount", "RecountCount", "Uncount"}
    /\ LET want == IF pc[p] = "Uncount" THEN Starved(p) /\ counted[p] ELSE Starved(p)
       IN /\ counted' = [counted EXCEPT ![p] = want]
          /\ waiters' = IF want = counted[p] THEN waiters ELSE IF want THEN waiters + 1 ELSE waiters - 1
          /\ IF pc[p] = "Uncount"
               THEN /\ pc' = [pc EXCEPT ![p] = ArmPc("Idle", waiting[p], Pending(p))]
                    /\ ret' = [ret EXCEPT ![p] = "Idle"]
               ELSE /\ pc' = [pc EXCEPT ![p] =
                                IF pc[p] = "ArmCount" THEN "Announce"
                                ELSE IF want = counted[p] THEN ret[p]
                                ELSE "RecountFree"]
                    /\ UNCHANGED ret
    /\ UNCHANGED <<turn, free, waitw, cq, inj, wvars, submitted, backlog, held, settled, waiting, mode, cursor, looked, popped>>

\* arm(): its waiting word 1 (after the count: whoever frees a record after this reads the count).
MainAnnounceWaiting(p) ==
    /\ p \in P /\ pc[p] = "Announce"
    /\ waitw' = [waitw EXCEPT ![p] = 1]
    /\ pc' = [pc EXCEPT ![p] = "RecheckCq"]
    /\ UNCHANGED <<turn, free, waiters, cq, inj, wvars, ret, submitted, backlog, held, settled, counted, waiting, mode,
                   cursor, looked, popped>>

\* Its completion queue once more: a completion there, it takes the word back.
MainRecheckCompletions(p) ==
    /\ p \in P /\ pc[p] = "RecheckCq"
    /\ pc' = [pc EXCEPT ![p] = IF cq[p] > 0 THEN "Retract" ELSE "RecheckFree"]
    /\ UNCHANGED <<shared, wvars, ret, submitted, backlog, held, settled, counted, waiting, mode, cursor, looked, popped>>

\* Then the free list, if starved: a record freed before the count was read by no wake.
ArmRecheckFree(p) ==
    /\ p \in P /\ pc[p] = "RecheckFree"
    /\ pc' = [pc EXCEPT ![p] = IF Starved(p) /\ free > 0 THEN "Retract" ELSE "Wait"]
    /\ UNCHANGED <<shared, wvars, ret, submitted, backlog, held, settled, counted, waiting, mode, cursor, looked, popped>>

\* Something to do: the word back to 0, the wake-up queued as a microtask.
MainRetractWaiting(p) ==
    /\ p \in P /\ pc[p] = "Retract"
    /\ waitw' = [waitw EXCEPT ![p] = 0]
    /\ waiting' = [waiting EXCEPT ![p] = TRUE]
    /\ mode' = [mode EXCEPT ![p] = "micro"]
    /\ pc' = [pc EXCEPT ![p] = ret[p]]
    /\ UNCHANGED <<turn, free, waiters, cq, inj, wvars, ret, submitted, backlog, held, settled, counted, cursor, looked, popped>>

\* Atomics.waitAsync on word 1: woken once a wake exchanged it to 0 and notified (already 0: at once).
MainWaitAsync(p) ==
    /\ p \in P /\ pc[p] = "Wait"
    /\ mode' = [mode EXCEPT ![p] = IF waitw[p] = 1 THEN "async" ELSE "micro"]
    /\ waiting' = [waiting EXCEPT ![p] = TRUE]
    /\ pc' = [pc EXCEPT ![p] = ret[p]]
    /\ UNCHANGED <<shared, wvars, ret, submitted, backlog, held, settled, counted, cursor, looked, popped>>

\* recountWaiting, after it counted itself: a record on the free list now, it wakes itself (wakeProducer on its
\* own channel: the word exchanged 1 -> 0 and notified; the read and the wake are one step here).
RecountRecheckFree(p) ==
    /\ p \in P /\ pc[p] = "RecountFree"
    /\ IF counted[p] /\ free > 0 THEN waitw' = [waitw EXCEPT ![p] = 0] ELSE UNCHANGED waitw
    /\ pc' = [pc EXCEPT ![p] = ret[p]]
    /\ UNCHANGED <<turn, free, waiters, cq, inj, wvars, ret, submitted, backlog, held, settled, counted, waiting, mode,
                   cursor, looked, popped>>

\* onWake: the event loop runs the wake-up (its word is 0, or it was queued); the word cleared; then the drain.
MainClearWaiting(p) ==
    /\ p \in P /\ pc[p] = "Idle" /\ waiting[p]
    /\ mode[p] = "micro" \/ (mode[p] = "async" /\ waitw[p] = 0)
    /\ waiting' = [waiting EXCEPT ![p] = FALSE]
    /\ mode' = [mode EXCEPT ![p] = "none"]
    /\ waitw' = [waitw EXCEPT ![p] = 0]
    /\ pc' = [pc EXCEPT ![p] = "Drain"]
    /\ popped' = [popped EXCEPT ![p] = FALSE]
    /\ UNCHANGED <<turn, free, waiters, cq, inj, wvars, ret, submitted, backlog, held, settled, counted, cursor, looked>>

\* The drain: one completion popped, its task settled and its record freed (one step, as in Producers.tla); the
\* queue empty, the backlog is fed.
MainPopCompletion(p) ==
    /\ p \in P /\ pc[p] = "Drain"
    /\ IF cq[p] > 0
         THEN /\ cq' = [cq EXCEPT ![p] = @ - 1]
              /\ held' = [held EXCEPT ![p] = @ - 1]
              /\ settled' = [settled EXCEPT ![p] = @ + 1]
              /\ free' = free + 1
              /\ popped' = [popped EXCEPT ![p] = TRUE]
              /\ UNCHANGED pc
         ELSE /\ pc' = [pc EXCEPT ![p] = "Feed"]
              /\ UNCHANGED <<cq, held, settled, free, popped>>
    /\ UNCHANGED <<turn, waiters, waitw, inj, wvars, ret, submitted, backlog, counted, waiting, mode, cursor, looked>>

\* freed(), after the feed: the shared free list's length read (the code's `freeRecords.length`); records
\* still free, one waiter is woken (it may be another producer's turn, or this one passes on the wake it got);
\* none, nobody (whoever took them wakes someone when it frees them).
FreedReadFree(p) ==
    /\ p \in P /\ pc[p] = "ReadFree"
    /\ pc' = [pc EXCEPT ![p] = IF free > 0 THEN "ReadWaiters" ELSE "Uncount"]
    /\ UNCHANGED <<shared, wvars, ret, submitted, backlog, held, settled, counted, waiting, mode, cursor, looked, popped>>

\* wakeRecordWaiters: the count read; 0, nobody is woken.
FreedReadWaiters(p) ==
    /\ p \in P /\ pc[p] = "ReadWaiters"
    /\ pc' = [pc EXCEPT ![p] = IF waiters = 0 THEN "Uncount" ELSE "TakeTurn"]
    /\ UNCHANGED <<shared, wvars, ret, submitted, backlog, held, settled, counted, waiting, mode, cursor, looked, popped>>

\* The slot after `c` round the ring (the code's `(turn + k) % n`).
NextSlot(c) == (c % Producers) + 1

\* The turn taken (a fetch-add): the loop starts at its slot.
FreedTakeTurn(p) ==
    /\ p \in P /\ pc[p] = "TakeTurn"
    /\ turn' = (turn + 1) % Producers
    /\ cursor' = [cursor EXCEPT ![p] = turn + 1]
    /\ looked' = [looked EXCEPT ![p] = 0]
    /\ pc' = [pc EXCEPT ![p] = "ReadCounted"]
    /\ UNCHANGED <<free, waiters, waitw, cq, inj, wvars, ret, submitted, backlog, held, settled, counted, waiting, mode,
                   popped>>

\* On to the next slot, or, every slot looked at, out of the loop with nobody woken.
LookNext(p) ==
    IF looked[p] + 1 = Producers
      THEN /\ pc' = [pc EXCEPT ![p] = "Uncount"]
           /\ cursor' = [cursor EXCEPT ![p] = 0]
           /\ looked' = [looked EXCEPT ![p] = 0]
      ELSE /\ pc' = [pc EXCEPT ![p] = "ReadCounted"]
           /\ cursor' = [cursor EXCEPT ![p] = NextSlot(@)]
           /\ looked' = [looked EXCEPT ![p] = @ + 1]

\* The slot's counted word: 0, passed over.
FreedReadCounted(p) ==
    /\ p \in P /\ pc[p] = "ReadCounted"
    /\ IF counted[cursor[p]]
         THEN /\ pc' = [pc EXCEPT ![p] = "WakeWaiter"] /\ UNCHANGED <<cursor, looked>>
         ELSE LookNext(p)
    /\ UNCHANGED <<shared, wvars, ret, submitted, backlog, held, settled, counted, waiting, mode, popped>>

\* wakeProducer on it (the word's read, exchange and notify, one step): woken, the loop ends; awake (its word
\* 0: running, or between its count and its look at the free list), passed over.
FreedWakeWaiter(p) ==
    /\ p \in P /\ pc[p] = "WakeWaiter"
    /\ IF waitw[cursor[p]] = 1
         THEN /\ waitw' = [waitw EXCEPT ![cursor[p]] = 0]
              /\ pc' = [pc EXCEPT ![p] = "Uncount"]
              /\ cursor' = [cursor EXCEPT ![p] = 0]
              /\ looked' = [looked EXCEPT ![p] = 0]
         ELSE /\ LookNext(p) /\ UNCHANGED waitw
    /\ UNCHANGED <<turn, free, waiters, cq, inj, wvars, ret, submitted, backlog, held, settled, counted, waiting, mode,
                   popped>>

----------------------------------------------------------------------------
(* A worker: takes a task, runs it, pushes its completion to its producer, wakes it. *)

FindPopInjector(w) ==
    /\ w \in W /\ wpc[w] = "Top"
    /\ \E p \in P :
         /\ inj[p] > 0
         /\ inj' = [inj EXCEPT ![p] = @ - 1]
         /\ wfor' = [wfor EXCEPT ![w] = p]
    /\ wpc' = [wpc EXCEPT ![w] = "Push"]
    /\ UNCHANGED <<turn, free, waiters, waitw, cq, pvars>>

FinishPushCompletion(w) ==
    /\ w \in W /\ wpc[w] = "Push"
    /\ cq' = [cq EXCEPT ![wfor[w]] = @ + 1]
    /\ wpc' = [wpc EXCEPT ![w] = "Wake"]
    /\ UNCHANGED <<turn, free, waiters, waitw, inj, wfor, pvars>>

\* wakeProducer on the task's producer: its word exchanged 1 -> 0 and notified (one step).
FinishWakeProducer(w) ==
    /\ w \in W /\ wpc[w] = "Wake"
    /\ waitw' = [waitw EXCEPT ![wfor[w]] = 0]
    /\ wpc' = [wpc EXCEPT ![w] = "Top"]
    /\ wfor' = [wfor EXCEPT ![w] = 0]
    /\ UNCHANGED <<turn, free, waiters, cq, inj, pvars>>

\* A thread's step: a producer's (t in P) or a worker's (t in W). Each action is one `// spec:` name at its
\* access in the files of the code: lines above.
Step(t) ==
    \/ SubmitTakeRecord(t) \/ RecordCountWaiting(t) \/ MainAnnounceWaiting(t) \/ MainRecheckCompletions(t)
    \/ ArmRecheckFree(t) \/ MainRetractWaiting(t) \/ MainWaitAsync(t) \/ RecountRecheckFree(t)
    \/ MainClearWaiting(t) \/ MainPopCompletion(t) \/ FreedReadFree(t) \/ FreedReadWaiters(t) \/ FreedTakeTurn(t)
    \/ FreedReadCounted(t) \/ FreedWakeWaiter(t)
    \/ FindPopInjector(t) \/ FinishPushCompletion(t) \/ FinishWakeProducer(t)

Threads == P \cup W

Next == (\E t \in Threads : Step(t)) \/ (\E p \in P : Submit(p)) \/ UNCHANGED vars

\* Weak fairness for each thread, and for each producer's submissions (it submits all of its tasks).
Spec ==
    /\ Init /\ [][Next]_vars
    /\ \A t \in Threads : WF_vars(Step(t))
    /\ \A p \in P : WF_vars(Submit(p))

----------------------------------------------------------------------------
(* Properties.                                                              *)

Steps == {"Idle", "Enqueue", "Feed", "ArmCount", "RecountCount", "Uncount", "Announce", "RecheckCq", "RecheckFree",
          "Retract", "Wait", "RecountFree", "Drain", "ReadFree", "ReadWaiters", "TakeTurn", "ReadCounted", "WakeWaiter"}

TypeOK ==
    /\ free \in 0..Records
    /\ waiters \in 0..Producers
    /\ waitw \in [P -> {0, 1}]
    /\ cq \in [P -> 0..Records] /\ inj \in [P -> 0..Records] /\ held \in [P -> 0..Records]
    /\ wpc \in [W -> {"Top", "Push", "Wake"}] /\ wfor \in [W -> {0} \cup P]
    /\ pc \in [P -> Steps] /\ ret \in [P -> {"Idle", "Enqueue"}]
    /\ submitted \in [P -> 0..Tasks] /\ backlog \in [P -> 0..Tasks] /\ settled \in [P -> 0..Tasks]
    /\ counted \in [P -> BOOLEAN] /\ waiting \in [P -> BOOLEAN]
    /\ mode \in [P -> {"none", "async", "micro"}]
    /\ turn \in 0..(Producers - 1)
    /\ cursor \in [P -> 0..Producers] /\ looked \in [P -> 0..(Producers - 1)] /\ popped \in [P -> BOOLEAN]

\* recordWaiters is the number of producers that say they are counted.
WaitersCount == waiters = Cardinality({p \in P : counted[p]})

RECURSIVE SumOver(_, _)
SumOver(f, s) == IF s = {} THEN 0 ELSE LET x == CHOOSE x \in s : TRUE IN f[x] + SumOver(f, s \ {x})

\* Every record is on the free list or holds a task of one producer.
RecordsConserved == free + SumOver(held, P) = Records

\* A producer that waits with a backlog and nothing of its own in flight (no completion of its own will come)
\* is counted: a producer that frees a record then wakes it.
WaitsCounted ==
    \A p \in P : (pc[p] = "Idle" /\ waiting[p] /\ backlog[p] > 0 /\ held[p] = 0) => counted[p]

\* A state constraint for mutants/RecordWaitPass.cfg, to keep three producers and two records small: producer 1
\* submits its Tasks tasks (its drain may free two records at once), the others one each (two waiters).
OneFreerTwoWaiters == \A p \in P \ {1} : submitted[p] <= 1

\* A producer asleep: idle, waiting on waitAsync with its word still 1 (no wake-up on its way).
Asleep(p) == pc[p] = "Idle" /\ waiting[p] /\ mode[p] = "async" /\ waitw[p] = 1

\* Every producer idle with no wake-up on its way (nobody is about to look at the free list), and a record
\* free: then no producer counted as waiting for a record sleeps (the wake reached one, or it passed on).
NoRecordLeftAsleep ==
    (free > 0 /\ \A p \in P : pc[p] = "Idle" /\ (waiting[p] => Asleep(p)))
      => \A p \in P : ~(counted[p] /\ Asleep(p))

\* Every task is settled in the end.
AllSettled == <>(\A p \in P : settled[p] = Tasks)

\* A backlog does not wait for ever while a record is free.
BacklogServed == \A p \in P : (backlog[p] > 0 /\ free > 0) ~> (backlog[p] = 0 \/ free = 0)

\* A producer asleep, counted as waiting for a record, is served: it holds a record, or its backlog emptied.
WaiterServed == \A p \in P : (counted[p] /\ Asleep(p)) ~> (held[p] > 0 \/ backlog[p] = 0)
=============================================================================
