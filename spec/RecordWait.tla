----------------------------- MODULE RecordWait -----------------------------
(***************************************************************************)
(* The backlog's wait for a record: producers share the task records, and *)
(* a producer whose submission finds none free keeps the task in its      *)
(* backlog until one is freed, by itself or by another producer. Nobody    *)
(* else's completion tells it so: it counts itself waiting for a record    *)
(* (ControlWords.recordWaiters), looks at the free list after the count,   *)
(* and waits; a producer that frees records reads the count and, if it is *)
(* not 0, wakes every producer that waits (protocol/producers.ts           *)
(* wakeRecordWaiters).                                                      *)
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
(* - AllSettled (liveness): every submitted task is settled.               *)
(* - BacklogServed (liveness): a backlog while a record is free does not   *)
(*   last: the backlog empties or the record is taken.                     *)
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
    cursor      \* wakeRecordWaiters's loop over the channels (0: not in it)

vars == <<free, waiters, waitw, cq, inj, wpc, wfor, pc, ret, submitted, backlog, held, settled, counted, waiting, mode,
          cursor>>

\* The groups each action leaves unchanged.
shared == <<free, waiters, waitw, cq, inj>>
wvars == <<wpc, wfor>>
pvars == <<pc, ret, submitted, backlog, held, settled, counted, waiting, mode, cursor>>

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
    /\ cursor = [p \in P |-> 0]

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
    /\ UNCHANGED <<shared, wvars, backlog, held, settled, counted, waiting, mode, cursor>>

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
                     /\ UNCHANGED <<free, held, inj>>
         ELSE IF backlog[p] > 0 /\ free > 0
                THEN /\ free' = free - 1
                     /\ backlog' = [backlog EXCEPT ![p] = @ - 1]
                     /\ held' = [held EXCEPT ![p] = @ + 1]
                     /\ inj' = [inj EXCEPT ![p] = @ + 1]
                     /\ UNCHANGED <<pc, ret>>
                ELSE /\ pc' = [pc EXCEPT ![p] = "ReadWaiters"]
                     /\ UNCHANGED <<free, backlog, held, inj, ret>>
    /\ UNCHANGED <<waiters, waitw, cq, wvars, submitted, settled, counted, waiting, mode, cursor>>

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
    /\ UNCHANGED <<free, waitw, cq, inj, wvars, submitted, backlog, held, settled, waiting, mode, cursor>>

\* arm(): its waiting word 1 (after the count: whoever frees a record after this reads the count).
MainAnnounceWaiting(p) ==
    /\ p \in P /\ pc[p] = "Announce"
    /\ waitw' = [waitw EXCEPT ![p] = 1]
    /\ pc' = [pc EXCEPT ![p] = "RecheckCq"]
    /\ UNCHANGED <<free, waiters, cq, inj, wvars, ret, submitted, backlog, held, settled, counted, waiting, mode,
                   cursor>>

\* Its completion queue once more: a completion there, it takes the word back.
MainRecheckCompletions(p) ==
    /\ p \in P /\ pc[p] = "RecheckCq"
    /\ pc' = [pc EXCEPT ![p] = IF cq[p] > 0 THEN "Retract" ELSE "RecheckFree"]
    /\ UNCHANGED <<shared, wvars, ret, submitted, backlog, held, settled, counted, waiting, mode, cursor>>

\* Then the free list, if starved: a record freed before the count was read by no wake.
ArmRecheckFree(p) ==
    /\ p \in P /\ pc[p] = "RecheckFree"
    /\ pc' = [pc EXCEPT ![p] = IF Starved(p) /\ free > 0 THEN "Retract" ELSE "Wait"]
    /\ UNCHANGED <<shared, wvars, ret, submitted, backlog, held, settled, counted, waiting, mode, cursor>>

\* Something to do: the word back to 0, the wake-up queued as a microtask.
MainRetractWaiting(p) ==
    /\ p \in P /\ pc[p] = "Retract"
    /\ waitw' = [waitw EXCEPT ![p] = 0]
    /\ waiting' = [waiting EXCEPT ![p] = TRUE]
    /\ mode' = [mode EXCEPT ![p] = "micro"]
    /\ pc' = [pc EXCEPT ![p] = ret[p]]
    /\ UNCHANGED <<free, waiters, cq, inj, wvars, ret, submitted, backlog, held, settled, counted, cursor>>

\* Atomics.waitAsync on word 1: woken once a wake exchanged it to 0 and notified (already 0: at once).
MainWaitAsync(p) ==
    /\ p \in P /\ pc[p] = "Wait"
    /\ mode' = [mode EXCEPT ![p] = IF waitw[p] = 1 THEN "async" ELSE "micro"]
    /\ waiting' = [waiting EXCEPT ![p] = TRUE]
    /\ pc' = [pc EXCEPT ![p] = ret[p]]
    /\ UNCHANGED <<shared, wvars, ret, submitted, backlog, held, settled, counted, cursor>>

\* recountWaiting, after it counted itself: a record on the free list now, it wakes itself (wakeProducer on its
\* own channel: the word exchanged 1 -> 0 and notified; the read and the wake are one step here).
RecountRecheckFree(p) ==
    /\ p \in P /\ pc[p] = "RecountFree"
    /\ IF counted[p] /\ free > 0 THEN waitw' = [waitw EXCEPT ![p] = 0] ELSE UNCHANGED waitw
    /\ pc' = [pc EXCEPT ![p] = ret[p]]
    /\ UNCHANGED <<free, waiters, cq, inj, wvars, ret, submitted, backlog, held, settled, counted, waiting, mode,
                   cursor>>

\* onWake: the event loop runs the wake-up (its word is 0, or it was queued); the word cleared; then the drain.
MainClearWaiting(p) ==
    /\ p \in P /\ pc[p] = "Idle" /\ waiting[p]
    /\ mode[p] = "micro" \/ (mode[p] = "async" /\ waitw[p] = 0)
    /\ waiting' = [waiting EXCEPT ![p] = FALSE]
    /\ mode' = [mode EXCEPT ![p] = "none"]
    /\ waitw' = [waitw EXCEPT ![p] = 0]
    /\ pc' = [pc EXCEPT ![p] = "Drain"]
    /\ UNCHANGED <<free, waiters, cq, inj, wvars, ret, submitted, backlog, held, settled, counted, cursor>>

\* The drain: one completion popped, its task settled and its record freed (one step, as in Producers.tla); the
\* queue empty, the backlog is fed.
MainPopCompletion(p) ==
    /\ p \in P /\ pc[p] = "Drain"
    /\ IF cq[p] > 0
         THEN /\ cq' = [cq EXCEPT ![p] = @ - 1]
              /\ held' = [held EXCEPT ![p] = @ - 1]
              /\ settled' = [settled EXCEPT ![p] = @ + 1]
              /\ free' = free + 1
              /\ UNCHANGED pc
         ELSE /\ pc' = [pc EXCEPT ![p] = "Feed"]
              /\ UNCHANGED <<cq, held, settled, free>>
    /\ UNCHANGED <<waiters, waitw, inj, wvars, ret, submitted, backlog, counted, waiting, mode, cursor>>

\* wakeRecordWaiters, after the feed: the count read; 0, nobody is woken.
FreedReadWaiters(p) ==
    /\ p \in P /\ pc[p] = "ReadWaiters"
    /\ IF waiters = 0
         THEN /\ pc' = [pc EXCEPT ![p] = "Uncount"] /\ UNCHANGED cursor
         ELSE /\ pc' = [pc EXCEPT ![p] = "WakeWaiters"] /\ cursor' = [cursor EXCEPT ![p] = 1]
    /\ UNCHANGED <<shared, wvars, ret, submitted, backlog, held, settled, counted, waiting, mode>>

\* Not 0: every producer's channel woken in turn (its own too), one wakeProducer a step.
FreedWakeWaiter(p) ==
    /\ p \in P /\ pc[p] = "WakeWaiters"
    /\ waitw' = [waitw EXCEPT ![cursor[p]] = 0]
    /\ IF cursor[p] = Producers
         THEN /\ pc' = [pc EXCEPT ![p] = "Uncount"] /\ cursor' = [cursor EXCEPT ![p] = 0]
         ELSE /\ cursor' = [cursor EXCEPT ![p] = @ + 1] /\ UNCHANGED pc
    /\ UNCHANGED <<free, waiters, cq, inj, wvars, ret, submitted, backlog, held, settled, counted, waiting, mode>>

----------------------------------------------------------------------------
(* A worker: takes a task, runs it, pushes its completion to its producer, wakes it. *)

FindPopInjector(w) ==
    /\ w \in W /\ wpc[w] = "Top"
    /\ \E p \in P :
         /\ inj[p] > 0
         /\ inj' = [inj EXCEPT ![p] = @ - 1]
         /\ wfor' = [wfor EXCEPT ![w] = p]
    /\ wpc' = [wpc EXCEPT ![w] = "Push"]
    /\ UNCHANGED <<free, waiters, waitw, cq, pvars>>

FinishPushCompletion(w) ==
    /\ w \in W /\ wpc[w] = "Push"
    /\ cq' = [cq EXCEPT ![wfor[w]] = @ + 1]
    /\ wpc' = [wpc EXCEPT ![w] = "Wake"]
    /\ UNCHANGED <<free, waiters, waitw, inj, wfor, pvars>>

\* wakeProducer on the task's producer: its word exchanged 1 -> 0 and notified (one step).
FinishWakeProducer(w) ==
    /\ w \in W /\ wpc[w] = "Wake"
    /\ waitw' = [waitw EXCEPT ![wfor[w]] = 0]
    /\ wpc' = [wpc EXCEPT ![w] = "Top"]
    /\ wfor' = [wfor EXCEPT ![w] = 0]
    /\ UNCHANGED <<free, waiters, cq, inj, pvars>>

\* A thread's step: a producer's (t in P) or a worker's (t in W). Each action is one `// spec:` name at its
\* access in the files of the code: lines above.
Step(t) ==
    \/ SubmitTakeRecord(t) \/ RecordCountWaiting(t) \/ MainAnnounceWaiting(t) \/ MainRecheckCompletions(t)
    \/ ArmRecheckFree(t) \/ MainRetractWaiting(t) \/ MainWaitAsync(t) \/ RecountRecheckFree(t)
    \/ MainClearWaiting(t) \/ MainPopCompletion(t) \/ FreedReadWaiters(t) \/ FreedWakeWaiter(t)
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
          "Retract", "Wait", "RecountFree", "Drain", "ReadWaiters", "WakeWaiters"}

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
    /\ cursor \in [P -> 0..Producers]

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

\* Every task is settled in the end.
AllSettled == <>(\A p \in P : settled[p] = Tasks)

\* A backlog does not wait for ever while a record is free.
BacklogServed == \A p \in P : (backlog[p] > 0 /\ free > 0) ~> (backlog[p] = 0 \/ free = 0)
=============================================================================
