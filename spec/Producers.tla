------------------------------ MODULE Producers ------------------------------
(***************************************************************************)
(* Producers in other threads (issue 29): the producer's part of a task's *)
(* lifecycle, and the owner's part in a producer's.                        *)
(*                                                                          *)
(* What it models (the design the lead is finishing, see spec/docs/Producers.md, *)
(* "Producers.tla"):                                                        *)
(* - Slots 1..Slots of lib/protocol/producers.ts, each FREE, OPEN or DEAD, *)
(*   with its own completion queue, waiting word and pending count. The    *)
(*   owner claims a FREE slot when it makes a handle and alone gives it    *)
(*   back: on the producer's `closed` message, or after cleaning up after  *)
(*   a dead producer (lib/owner/links.ts). Handles are producer            *)
(*   incarnations: there are more handles than slots, so slots are reused.*)
(* - A producer's submission (lib/producer/admission.ts, ledger.ts,        *)
(*   submission.ts): count the task pending, read the pool's state, take a *)
(*   record from the free list (CACHED, marked with the slot), store it    *)
(*   QUEUED with its origin, push it into the injector.                    *)
(* - Workers (lib/worker/runner.ts, marks.ts): pop the injector, claim     *)
(*   QUEUED -> RUNNING (or free a CANCELLED record), store DONE, push the  *)
(*   record into its origin slot's completion queue, wake that producer if *)
(*   its waiting word is 1.                                                 *)
(* - The producer's reader (lib/producer/completion.ts): pop a completion, *)
(*   settle its entry (or only free the record of a forgotten task), arm   *)
(*   (waiting word 1, recheck, sleep until the word is 0). Aborts: a       *)
(*   QUEUED task cancelled (CAS to CANCELLED) and a RUNNING one forgotten   *)
(*   (settled at once, its completion still comes).                        *)
(* - Producer close (lib/pool_producer.ts, producer.ts recordsBack): after *)
(*   its last task, wait until nothing is unsettled and nothing forgotten  *)
(*   is out, then send `closed`.                                            *)
(* - Pool close (owner.ts, links.ts quiet): state CLOSING, read each OPEN  *)
(*   slot's pending count until all are 0, then CLOSED (workers stop).     *)
(*   Pool terminate (links.ts stateChanged): state TERMINATED, wake every  *)
(*   slot's producer; workers stop; a producer that drains or arms and     *)
(*   reads TERMINATED rejects every unsettled task (TerminateRejectAll).   *)
(* - Producer death between any two of its steps (Dying): the owner sees   *)
(*   its port close, marks the slot DEAD, cancels its QUEUED records,      *)
(*   reclaims the records still marked with its slot (taken and not yet    *)
(*   pushed: the mark comes off in the push's step), drains its completion *)
(*   queue until no record of that origin is RUNNING or DONE, then frees   *)
(*   the slot.                                                              *)
(*                                                                          *)
(* What it does not model: the owner's own producer (slot 0: Lifecycle.tla *)
(* and SleepWake.tla; here slot 0's queue exists only as a wrong place for *)
(* a completion), the queues' internals (Injector.tla: each queue op is    *)
(* one atomic step on a set, since no property here depends on order),     *)
(* record generations (a record is its index; the ledger's entry check is *)
(* `placed`), payloads and messages other than `closed`, a worker's death  *)
(* (recovery.ts; Lifecycle.tla), the sleep protocol's fine steps           *)
(* (SleepWake.tla: here the exchange and notify are one step), the backlog *)
(* and fair share of records (a producer waits until a record is free;     *)
(* RecordWait.tla models how it is woken then).                            *)
(* A completion's pop, settlement and free are one step: a death between   *)
(* them is not modelled (see spec/docs/Producers.md).                  *)
(*                                                                          *)
(* Mirrored by `// spec: Name` comments (one per action of Step, at the   *)
(* access it models; some actions are shared with SleepWake.tla and       *)
(* Lifecycle.tla, which model the same access; see spec/docs/Producers.md): *)
(* code: lib/protocol/producers.ts                                          *)
(* code: lib/owner/links.ts                                                 *)
(* code: lib/owner/producer_deaths.ts                                       *)
(* code: lib/pool_producer.ts                                               *)
(* code: lib/producer/producer.ts                                           *)
(* code: lib/producer/completion.ts                                         *)
(* code: lib/producer/admission.ts                                          *)
(* code: lib/producer/ledger.ts                                             *)
(* code: lib/producer/submission.ts                                         *)
(* code: lib/producer/cancellation.ts                                       *)
(* code: lib/worker/search.ts                                               *)
(* code: lib/worker/runner.ts                                               *)
(* code: lib/worker/marks.ts                                                *)
(*                                                                          *)
(* What is checked:                                                         *)
(* - CompletionsRouted: every record in slot s's completion queue has      *)
(*   origin s (slot 0's queue holds none: no remote task goes there).      *)
(* - CompletionOnlyToOpenSlot: no completion is pushed to a FREE slot.     *)
(* - SlotExclusive: a live handle's slot is not FREE, and no two live      *)
(*   handles share a slot.                                                  *)
(* - SettledOnce: each task is settled at most once.                       *)
(* - NoDoubleFree, FreeIsUnreferenced: no record is freed twice; a FREE    *)
(*   record is in no queue and in no worker's hand.                         *)
(* - CloseAbandonsNothing: once the pool is CLOSED, no live producer has a *)
(*   task unsettled or on its way into the injector.                        *)
(* - EverySettled (liveness): every admitted task of a producer that does  *)
(*   not die is eventually settled.                                         *)
(* - RecordsAndSlotsBack (liveness, no pool close or terminate): in the    *)
(*   end every record is FREE and no slot is DEAD.                          *)
(* - TerminateRejectsAll (liveness): after terminate, every live producer  *)
(*   eventually has no unsettled task.                                      *)
(***************************************************************************)
EXTENDS Naturals, FiniteSets

CONSTANTS
    Slots,      \* the number of remote slots (1..Slots)
    Handles,    \* the number of producer handles made in a run (incarnations, 1..Handles)
    Records,    \* the number of task records
    Tasks,      \* tasks each producer submits
    Workers,    \* the number of worker threads
    Dying,      \* the handles whose thread may die (at any point between two of its steps)
    Aborts,     \* whether producers may abort their tasks (cancel a QUEUED one, forget a RUNNING one)
    Ending      \* what the owner does to the pool: "none", "close", "terminate" or "both"

ASSUME Slots \in Nat \ {0} /\ Workers \in Nat \ {0} /\ Handles \in Nat \ {0} /\ Records \in Nat \ {0} /\ Tasks \in Nat \ {0}
ASSUME Dying \subseteq 1..Handles /\ Aborts \in BOOLEAN
ASSUME Ending \in {"none", "close", "terminate", "both"}

H == 1..Handles
S == 1..Slots
R == 1..Records
K == 1..Tasks
\* Workers are numbered after the handles, so that every thread is an integer.
W == (Handles + 1)..(Handles + Workers)
NoSlot == 0
\* The owner's thread (its event loop runs its steps one at a time).
OwnerId == 0

VARIABLES
    pool,       \* ControlWords.poolState: "OPEN", "CLOSING", "CLOSED", "TERMINATED"
    sstate,     \* each slot's state word: "FREE", "OPEN", "DEAD"
    pending,    \* each slot's pending count (the ledger's shared count)
    waitw,      \* each slot's waiting word
    cq,         \* each slot's completion queue (0..Slots): a set of records
    inj,        \* the injector: a set of records
    rstate,     \* each record's state: "FREE", "CACHED", "QUEUED", "RUNNING", "DONE", "CANCELLED"
    origin,     \* each record's origin word (a slot; 0 the owner's)
    cachedBy,   \* the mark of a record taken from the free list and not yet pushed: the taker's slot (else 0)
    rtask,      \* ghost: the task a record carries, <<h, k>>
    hpc,        \* each handle's step
    hslot,      \* each handle's slot (NoSlot before the owner gave one)
    next,       \* each handle's next task
    cur,        \* each handle's record in hand (submitting), or 0
    placed,     \* each handle's ledger: the records of its unsettled tasks
    forgotten,  \* each handle's forgotten records (settled while running; completion still to come)
    settles,    \* ghost: how many times each task was settled
    admitted,   \* ghost: each handle's tasks that were counted pending and not refused
    wpc,        \* each worker's step
    wrec,       \* each worker's record in hand
    wslot,      \* each worker's slot to wake (read from the origin word before the push)
    holder,     \* the owner's map: the handle each slot was given to (0: none)
    ends,       \* the handles whose port the owner still listens to
    msgs,       \* `closed` messages sent and not yet read by the owner: handles
    clean,      \* the owner's cleanup of each slot: "none", "Cancel", "Reclaim", "Drain"
    opc,        \* the owner's pool-ending step: "Run", "Quiet", "Closed" (CLOSED to store), "Wake", "Idle"
    cursor,     \* the owner's loop over the slots (quiet, wake)
    qsum,       \* the pending counts summed so far by quiet
    dfree,      \* ghost: a record was freed twice
    badpush     \* ghost: a completion was pushed to a FREE slot

vars == <<pool, sstate, pending, waitw, cq, inj, rstate, origin, cachedBy, rtask, hpc, hslot, next, cur, placed,
          forgotten, settles, admitted, wpc, wrec, wslot, holder, ends, msgs, clean, opc, cursor, qsum, dfree, badpush>>

\* The groups each action leaves unchanged (so that each action names only what it changes).
shared == <<pool, sstate, pending, waitw, cq, inj, rstate, origin, cachedBy, rtask>>
hvars == <<hpc, hslot, next, cur, placed, forgotten, settles, admitted>>
wvars == <<wpc, wrec, wslot>>
ovars == <<holder, ends, msgs, clean, opc, cursor, qsum>>
ghosts == <<dfree, badpush>>

Init ==
    /\ pool = "OPEN"
    /\ sstate = [s \in S |-> "FREE"]
    /\ pending = [s \in S |-> 0]
    /\ waitw = [s \in S |-> 0]
    /\ cq = [s \in 0..Slots |-> {}]
    /\ inj = {}
    /\ rstate = [r \in R |-> "FREE"]
    /\ origin = [r \in R |-> 0]
    /\ cachedBy = [r \in R |-> 0]
    /\ rtask = [r \in R |-> <<0, 0>>]
    /\ hpc = [h \in H |-> "Unborn"]
    /\ hslot = [h \in H |-> NoSlot]
    /\ next = [h \in H |-> 1]
    /\ cur = [h \in H |-> 0]
    /\ placed = [h \in H |-> {}]
    /\ forgotten = [h \in H |-> {}]
    /\ settles = [h \in H |-> [k \in K |-> 0]]
    /\ admitted = [h \in H |-> {}]
    /\ wpc = [w \in W |-> "Top"]
    /\ wrec = [w \in W |-> 0]
    /\ wslot = [w \in W |-> 0]
    /\ holder = [s \in S |-> 0]
    /\ ends = {}
    /\ msgs = {}
    /\ clean = [s \in S |-> "none"]
    /\ opc = "Run"
    /\ cursor = 1
    /\ qsum = 0
    /\ dfree = FALSE
    /\ badpush = FALSE

\* A record goes back to the free list (releaseHandle): the ghost notes a second free.
Free(r) ==
    /\ rstate' = [rstate EXCEPT ![r] = "FREE"]
    /\ dfree' = (dfree \/ rstate[r] = "FREE")

\* The live steps of a handle: it holds its slot (a handle that closed, ended or died does not).
Live == {"Idle", "ReadState", "Take", "Store", "Push", "Recheck", "Sleep"}

----------------------------------------------------------------------------
(* The owner: handles, `closed`, a producer's death, close and terminate.   *)

\* Pool.handle: the owner claims a FREE slot for a new handle (handles are made in order, while the pool is open).
OwnerClaimSlot(h) ==
    /\ hpc[h] = "Unborn" /\ pool = "OPEN"
    /\ \A g \in 1..(h - 1) : hpc[g] # "Unborn"
    /\ \E s \in S :
         /\ sstate[s] = "FREE"
         /\ sstate' = [sstate EXCEPT ![s] = "OPEN"]
         /\ pending' = [pending EXCEPT ![s] = 0]
         /\ waitw' = [waitw EXCEPT ![s] = 0]
         /\ holder' = [holder EXCEPT ![s] = h]
         /\ hslot' = [hslot EXCEPT ![h] = s]
    /\ hpc' = [hpc EXCEPT ![h] = "Idle"]
    /\ ends' = ends \cup {h}
    /\ UNCHANGED <<pool, cq, inj, rstate, origin, cachedBy, rtask, next, cur, placed, forgotten, settles, admitted>>
    /\ UNCHANGED <<wvars, msgs, clean, opc, cursor, qsum, ghosts>>

\* The owner reads a `closed` message: it frees the slot if the sender's port is still one it listens to (its
\* death was not handled first: that cleanup frees the slot itself) and the slot is still the sender's (an old
\* producer's late message does not free a slot reused since). Not after terminate (every link is closed then).
OwnerReceiveClosed(h) ==
    /\ h \in msgs /\ pool # "TERMINATED"
    /\ msgs' = msgs \ {h}
    /\ ends' = ends \ {h}
    /\ LET s == hslot[h] IN
         IF h \in ends /\ holder[s] = h
           THEN /\ sstate' = [sstate EXCEPT ![s] = "FREE"]
                /\ holder' = [holder EXCEPT ![s] = 0]
           ELSE UNCHANGED <<sstate, holder>>
    /\ UNCHANGED <<pool, pending, waitw, cq, inj, rstate, origin, cachedBy, rtask, hvars, wvars, clean, opc, cursor,
                   qsum, ghosts>>

\* The owner sees a producer's port close (its thread died): the slot is DEAD, the cleanup begins.
OwnerNoticeDeath(h) ==
    /\ hpc[h] = "Dead" /\ h \in ends /\ pool # "TERMINATED"
    /\ ends' = ends \ {h}
    /\ LET s == hslot[h] IN
         /\ sstate' = [sstate EXCEPT ![s] = "DEAD"]
         /\ clean' = [clean EXCEPT ![s] = "Cancel"]
    /\ UNCHANGED <<pool, pending, waitw, cq, inj, rstate, origin, cachedBy, rtask, hvars, wvars, holder, msgs, opc,
                   cursor, qsum, ghosts>>

\* The dead producer's QUEUED records, one compare-exchange QUEUED -> CANCELLED at a time (the worker that
\* takes one frees it).
DiedCancelQueued(s) ==
    /\ clean[s] = "Cancel"
    /\ IF \E r \in R : origin[r] = s /\ rstate[r] = "QUEUED"
         THEN \E r \in R :
                /\ origin[r] = s /\ rstate[r] = "QUEUED"
                /\ rstate' = [rstate EXCEPT ![r] = "CANCELLED"]
                /\ UNCHANGED clean
         ELSE /\ clean' = [clean EXCEPT ![s] = "Reclaim"]
              /\ UNCHANGED rstate
    /\ UNCHANGED <<pool, sstate, pending, waitw, cq, inj, origin, cachedBy, rtask, hvars, wvars, holder, ends, msgs,
                   opc, cursor, qsum, ghosts>>

\* The records it had taken from the free list and not yet pushed into the injector (still marked with its
\* slot): CACHED, or stored QUEUED (cancelled just above) but never pushed, so that no worker will ever free it.
DiedReclaimCached(s) ==
    /\ clean[s] = "Reclaim"
    /\ IF \E r \in R : cachedBy[r] = s
         THEN \E r \in R :
                /\ cachedBy[r] = s
                /\ Free(r)
                /\ cachedBy' = [cachedBy EXCEPT ![r] = 0]
                /\ UNCHANGED clean
         ELSE /\ clean' = [clean EXCEPT ![s] = "Drain"]
              /\ UNCHANGED <<rstate, cachedBy, dfree>>
    /\ UNCHANGED <<pool, sstate, pending, waitw, cq, inj, origin, rtask, hvars, wvars, holder, ends, msgs,
                   opc, cursor, qsum, badpush>>

\* Its completion queue, read by the owner: each record freed; once the queue is empty and no record of that
\* origin is RUNNING or DONE (none can come any more), the slot is FREE.
DiedDrainQueue(s) ==
    /\ clean[s] = "Drain"
    /\ IF cq[s] # {}
         THEN \E r \in cq[s] :
                /\ cq' = [cq EXCEPT ![s] = @ \ {r}]
                /\ Free(r)
                /\ UNCHANGED <<sstate, holder, clean>>
         ELSE /\ ~\E r \in R : origin[r] = s /\ rstate[r] \in {"RUNNING", "DONE"}
              /\ sstate' = [sstate EXCEPT ![s] = "FREE"]
              /\ holder' = [holder EXCEPT ![s] = 0]
              /\ clean' = [clean EXCEPT ![s] = "none"]
              /\ UNCHANGED <<cq, rstate, dfree>>
    /\ UNCHANGED <<pool, pending, waitw, inj, origin, cachedBy, rtask, hvars, wvars, ends, msgs, opc, cursor, qsum,
                   badpush>>

\* Pool.close: the state word CLOSING (producers refuse from now on), then quiet.
StoreClosing ==
    /\ opc = "Run" /\ Ending \in {"close", "both"} /\ pool = "OPEN"
    /\ pool' = "CLOSING"
    /\ opc' = "Quiet" /\ cursor' = 1 /\ qsum' = 0
    /\ UNCHANGED <<sstate, pending, waitw, cq, inj, rstate, origin, cachedBy, rtask, hvars, wvars, holder, ends, msgs,
                   clean, ghosts>>

\* Once quiet read every count 0: the state word CLOSED (the workers stop).
StoreClosed ==
    /\ opc = "Closed" /\ pool = "CLOSING"
    /\ pool' = "CLOSED" /\ opc' = "Idle"
    /\ UNCHANGED <<sstate, pending, waitw, cq, inj, rstate, origin, cachedBy, rtask, hvars, wvars, holder, ends, msgs,
                   clean, cursor, qsum, ghosts>>

\* quiet(): the pending count of each OPEN slot, one slot a read; all 0: CLOSED is stored next, else again.
OwnerQuietRead(t) ==
    /\ t = OwnerId /\ opc = "Quiet" /\ pool = "CLOSING"
    /\ IF cursor <= Slots
         THEN /\ qsum' = qsum + (IF sstate[cursor] = "OPEN" THEN pending[cursor] ELSE 0)
              /\ cursor' = cursor + 1
              /\ UNCHANGED opc
         ELSE IF qsum = 0
                THEN /\ opc' = "Closed" /\ UNCHANGED <<cursor, qsum>>   \* StoreClosed stores it
                ELSE /\ cursor' = 1 /\ qsum' = 0 /\ UNCHANGED opc
    /\ UNCHANGED <<pool, sstate, pending, waitw, cq, inj, rstate, origin, cachedBy, rtask, hvars, wvars, holder, ends,
                   msgs, clean, ghosts>>

\* Pool.terminate (from open or while closing): the state word TERMINATED (the workers stop), then every slot's
\* producer is woken.
StoreTerminated ==
    /\ Ending \in {"terminate", "both"} /\ pool \in {"OPEN", "CLOSING"}
    /\ (Ending = "both" => pool = "CLOSING")
    /\ pool' = "TERMINATED"
    /\ opc' = "Wake" /\ cursor' = 1
    /\ UNCHANGED <<sstate, pending, waitw, cq, inj, rstate, origin, cachedBy, rtask, hvars, wvars, holder, ends, msgs,
                   clean, qsum, ghosts>>

\* The owner's store of the pool's state word (links.ts stateChanged, one line for every state): CLOSING, CLOSED
\* after quiet, or TERMINATED. The three are fair apart (see Spec): a close or terminate may not come, but once
\* quiet read every count 0, CLOSED is stored.
OwnerStorePoolState(t) == t = OwnerId /\ (StoreClosing \/ StoreClosed \/ StoreTerminated)

\* wakeProducer for each slot: if its waiting word is 1, exchange it to 0 and notify (one step here).
OwnerWakeProducer(t) ==
    /\ t = OwnerId /\ opc = "Wake"
    /\ IF cursor <= Slots
         THEN /\ waitw' = [waitw EXCEPT ![cursor] = 0]
              /\ cursor' = cursor + 1
              /\ UNCHANGED opc
         ELSE /\ opc' = "Idle" /\ UNCHANGED <<waitw, cursor>>
    /\ UNCHANGED <<pool, sstate, pending, cq, inj, rstate, origin, cachedBy, rtask, hvars, wvars, holder, ends, msgs,
                   clean, qsum, ghosts>>

----------------------------------------------------------------------------
(* A producer (handle h, in slot hslot[h]).                                 *)

\* The ledger's open: the task counts pending, in the slot's shared count too (before the state is read, so
\* that a close either sees the count or is seen by the read).
SubmitCountPending(h) ==
    /\ h \in H /\ hpc[h] = "Idle" /\ next[h] <= Tasks
    /\ pending' = [pending EXCEPT ![hslot[h]] = @ + 1]
    /\ hpc' = [hpc EXCEPT ![h] = "ReadState"]
    /\ UNCHANGED <<pool, sstate, waitw, cq, inj, rstate, origin, cachedBy, rtask, hslot, next, cur, placed, forgotten,
                   settles, admitted, wvars, ovars, ghosts>>

\* Admission reads the pool's state: not open, the task is refused (its count taken back).
SubmitReadState(h) ==
    /\ h \in H /\ hpc[h] = "ReadState"
    /\ IF pool = "OPEN"
         THEN /\ hpc' = [hpc EXCEPT ![h] = "Take"]
              /\ admitted' = [admitted EXCEPT ![h] = @ \cup {next[h]}]
              /\ UNCHANGED <<pending, next>>
         ELSE /\ pending' = [pending EXCEPT ![hslot[h]] = @ - 1]
              /\ next' = [next EXCEPT ![h] = @ + 1]
              /\ hpc' = [hpc EXCEPT ![h] = "Idle"]
              /\ UNCHANGED admitted
    /\ UNCHANGED <<pool, sstate, waitw, cq, inj, rstate, origin, cachedBy, rtask, hslot, cur, placed, forgotten,
                   settles, wvars, ovars, ghosts>>

\* The free list's pop: the record is CACHED, marked with our slot (a producer waits while none is free; after
\* terminate it stops waiting and rejects).
SubmitTakeRecord(h) ==
    /\ h \in H /\ hpc[h] = "Take"
    /\ IF pool = "TERMINATED"
         THEN \* The task waited in the backlog: rejected (rejectUnsettled rejects the backlog with the rest).
              /\ settles' = [settles EXCEPT ![h][next[h]] = @ + 1]
              /\ next' = [next EXCEPT ![h] = @ + 1]
              /\ hpc' = [hpc EXCEPT ![h] = "Idle"]
              /\ UNCHANGED <<rstate, cachedBy, cur>>
         ELSE \E r \in R :
                /\ rstate[r] = "FREE"
                /\ rstate' = [rstate EXCEPT ![r] = "CACHED"]
                /\ cachedBy' = [cachedBy EXCEPT ![r] = hslot[h]]
                /\ cur' = [cur EXCEPT ![h] = r]
                /\ hpc' = [hpc EXCEPT ![h] = "Store"]
                /\ UNCHANGED <<next, settles>>
    /\ UNCHANGED <<pool, sstate, pending, waitw, cq, inj, origin, rtask, hslot, placed, forgotten,
                   admitted, wvars, ovars, ghosts>>

\* The record's words (origin, payload: plain writes, seen by others only through this store), then QUEUED;
\* the ledger places its entry.
SubmitStoreQueued(h) ==
    /\ h \in H /\ hpc[h] = "Store"
    /\ LET r == cur[h] IN
         /\ origin' = [origin EXCEPT ![r] = hslot[h]]
         /\ rtask' = [rtask EXCEPT ![r] = <<h, next[h]>>]
         /\ rstate' = [rstate EXCEPT ![r] = "QUEUED"]
         /\ placed' = [placed EXCEPT ![h] = @ \cup {r}]
    /\ hpc' = [hpc EXCEPT ![h] = "Push"]
    /\ UNCHANGED <<pool, sstate, pending, waitw, cq, inj, cachedBy, hslot, next, cur, forgotten, settles, admitted,
                   wvars, ovars, ghosts>>

\* The push, and the mark taken off with it. The two are one step here: a death between them must leave a record
\* the owner can tell apart (pushed: a worker frees or runs it; not pushed: the owner reclaims it). See spec/docs/Producers.md:
\* the code needs the injector's own note of a push (InjectorDeath.tla) or an equivalent for this.
SubmitPushInjector(h) ==
    /\ h \in H /\ hpc[h] = "Push"
    /\ inj' = inj \cup {cur[h]}
    /\ cachedBy' = [cachedBy EXCEPT ![cur[h]] = 0]
    /\ cur' = [cur EXCEPT ![h] = 0]
    /\ next' = [next EXCEPT ![h] = @ + 1]
    /\ hpc' = [hpc EXCEPT ![h] = "Idle"]
    /\ UNCHANGED <<pool, sstate, pending, waitw, cq, rstate, origin, rtask, hslot, placed, forgotten,
                   settles, admitted, wvars, ovars, ghosts>>

\* The reader's drain: one completion popped, its entry settled and its record freed, or (a forgotten task's, or
\* a stale one) only its record freed. Also while a task waits for a record ("Take": the code's backlog; the
\* reader goes on).
MainPopCompletion(h) ==
    /\ h \in H /\ hpc[h] \in {"Idle", "Take"} /\ cq[hslot[h]] # {} /\ pool # "TERMINATED"
    /\ \E r \in cq[hslot[h]] :
         /\ cq' = [cq EXCEPT ![hslot[h]] = @ \ {r}]
         /\ Free(r)
         /\ IF r \in placed[h]
              THEN /\ placed' = [placed EXCEPT ![h] = @ \ {r}]
                   /\ settles' = [settles EXCEPT ![h][rtask[r][2]] = @ + 1]
                   /\ pending' = [pending EXCEPT ![hslot[h]] = @ - 1]
              ELSE UNCHANGED <<placed, settles, pending>>
         /\ forgotten' = [forgotten EXCEPT ![h] = @ \ {r}]
    /\ UNCHANGED <<pool, sstate, waitw, inj, origin, cachedBy, rtask, hpc, hslot, next, cur, admitted, wvars, ovars,
                   badpush>>

\* rejectUnsettled: the pool was terminated (read at the drain's start, or at an arm's recheck).
TerminateRejectAll(h) ==
    /\ h \in H /\ hpc[h] = "Idle" /\ pool = "TERMINATED"
    /\ settles' = [settles EXCEPT ![h] = [k \in K |-> IF k \in admitted[h] /\ @[k] = 0 THEN 1 ELSE @[k]]]
    /\ placed' = [placed EXCEPT ![h] = {}]
    /\ hpc' = [hpc EXCEPT ![h] = "Ended"]
    /\ UNCHANGED <<pool, sstate, pending, waitw, cq, inj, rstate, origin, cachedBy, rtask, hslot, next, cur,
                   forgotten, admitted, wvars, ovars, ghosts>>

\* An abort (timeout or signal) of an unsettled task: QUEUED, the compare-exchange to CANCELLED wins (the worker
\* that takes it frees it); RUNNING, it is forgotten (its completion only frees the record). Settled at once.
\* (The access of Lifecycle.tla's action of the same name: cancellation.ts removeQueued.)
CancelCasQueued(h) ==
    /\ Aborts /\ h \in H /\ hpc[h] = "Idle"
    /\ \E r \in placed[h] :
         /\ rstate[r] \in {"QUEUED", "RUNNING"}
         /\ IF rstate[r] = "QUEUED"
              THEN /\ rstate' = [rstate EXCEPT ![r] = "CANCELLED"] /\ UNCHANGED forgotten
              ELSE /\ forgotten' = [forgotten EXCEPT ![h] = @ \cup {r}] /\ UNCHANGED rstate
         /\ placed' = [placed EXCEPT ![h] = @ \ {r}]
         /\ settles' = [settles EXCEPT ![h][rtask[r][2]] = @ + 1]
         /\ pending' = [pending EXCEPT ![hslot[h]] = @ - 1]
    /\ UNCHANGED <<pool, sstate, waitw, cq, inj, origin, cachedBy, rtask, hpc, hslot, next, cur, admitted, wvars,
                   ovars, ghosts>>

\* arm(): with tasks pending and nothing to read, say we wait (waiting word 1).
MainAnnounceWaiting(h) ==
    /\ h \in H /\ hpc[h] = "Idle" /\ placed[h] # {} /\ cq[hslot[h]] = {} /\ pool # "TERMINATED"
    /\ waitw' = [waitw EXCEPT ![hslot[h]] = 1]
    /\ hpc' = [hpc EXCEPT ![h] = "Recheck"]
    /\ UNCHANGED <<pool, sstate, pending, cq, inj, rstate, origin, cachedBy, rtask, hslot, next, cur, placed, forgotten,
                   settles, admitted, wvars, ovars, ghosts>>

\* Look once more: a completion, or the pool terminated: take the word back and drain; else sleep.
MainRecheckCompletions(h) ==
    /\ h \in H /\ hpc[h] = "Recheck"
    /\ IF cq[hslot[h]] # {} \/ pool = "TERMINATED"
         THEN /\ waitw' = [waitw EXCEPT ![hslot[h]] = 0]
              /\ hpc' = [hpc EXCEPT ![h] = "Idle"]
         ELSE /\ hpc' = [hpc EXCEPT ![h] = "Sleep"]
              /\ UNCHANGED waitw
    /\ UNCHANGED <<pool, sstate, pending, cq, inj, rstate, origin, cachedBy, rtask, hslot, next, cur, placed, forgotten,
                   settles, admitted, wvars, ovars, ghosts>>

\* waitAsync returns once the word is 0 (a worker's or the owner's wake); then the drain.
MainWaitAsync(h) ==
    /\ h \in H /\ hpc[h] = "Sleep" /\ waitw[hslot[h]] = 0
    /\ hpc' = [hpc EXCEPT ![h] = "Idle"]
    /\ UNCHANGED <<pool, sstate, pending, waitw, cq, inj, rstate, origin, cachedBy, rtask, hslot, next, cur, placed,
                   forgotten, settles, admitted, wvars, ovars, ghosts>>

\* ProducerHandle.close, after the last task: recordsBack (nothing unsettled, no forgotten record out; or the
\* pool terminated), then `closed` to the owner. The thread is done with the slot.
ProducerSendClosed(h) ==
    /\ h \in H /\ hpc[h] = "Idle" /\ next[h] > Tasks
    /\ placed[h] = {} /\ forgotten[h] = {}
    /\ msgs' = msgs \cup {h}
    /\ hpc' = [hpc EXCEPT ![h] = "Closed"]
    /\ UNCHANGED <<pool, sstate, pending, waitw, cq, inj, rstate, origin, cachedBy, rtask, hslot, next, cur, placed,
                   forgotten, settles, admitted, wvars, holder, ends, clean, opc, cursor, qsum, ghosts>>

----------------------------------------------------------------------------
(* A worker (stops once the pool is CLOSED or TERMINATED).                  *)

Working == pool \notin {"CLOSED", "TERMINATED"}

FindPopInjector(w) ==
    /\ w \in W /\ Working /\ wpc[w] = "Top" /\ inj # {}
    /\ \E r \in inj :
         /\ inj' = inj \ {r}
         /\ wrec' = [wrec EXCEPT ![w] = r]
    /\ wpc' = [wpc EXCEPT ![w] = "Claim"]
    /\ UNCHANGED <<pool, sstate, pending, waitw, cq, rstate, origin, cachedBy, rtask, hvars, wslot, ovars, ghosts>>

\* QUEUED -> RUNNING; a CANCELLED record is freed instead.
ExecCasRunning(w) ==
    /\ w \in W /\ Working /\ wpc[w] = "Claim"
    /\ LET r == wrec[w] IN
         IF rstate[r] = "QUEUED"
           THEN /\ rstate' = [rstate EXCEPT ![r] = "RUNNING"]
                /\ wpc' = [wpc EXCEPT ![w] = "Run"]
                /\ UNCHANGED <<wrec, dfree>>
           ELSE /\ Free(r)
                /\ wpc' = [wpc EXCEPT ![w] = "Top"]
                /\ wrec' = [wrec EXCEPT ![w] = 0]
    /\ UNCHANGED <<pool, sstate, pending, waitw, cq, inj, origin, cachedBy, rtask, hvars, wslot, ovars, badpush>>

FinishStoreDone(w) ==
    /\ w \in W /\ Working /\ wpc[w] = "Run"
    /\ rstate' = [rstate EXCEPT ![wrec[w]] = "DONE"]
    /\ wpc' = [wpc EXCEPT ![w] = "Push"]
    /\ UNCHANGED <<pool, sstate, pending, waitw, cq, inj, origin, cachedBy, rtask, hvars, wrec, wslot, ovars, ghosts>>

\* publishDone: the record's origin names the queue (slotOf). The ghost notes a push to a FREE slot.
FinishPushCompletion(w) ==
    /\ w \in W /\ Working /\ wpc[w] = "Push"
    /\ LET s == origin[wrec[w]] IN
         /\ cq' = [cq EXCEPT ![s] = @ \cup {wrec[w]}]
         /\ badpush' = (badpush \/ (s \in S /\ sstate[s] = "FREE"))
         /\ wslot' = [wslot EXCEPT ![w] = s]
    /\ wpc' = [wpc EXCEPT ![w] = "Wake"]
    /\ wrec' = [wrec EXCEPT ![w] = 0]   \* the record is the producer's now
    /\ UNCHANGED <<pool, sstate, pending, waitw, inj, rstate, origin, cachedBy, rtask, hvars, ovars, dfree>>

\* wakeProducer: the waiting word read 1, exchanged to 0, notified (one step here; SleepWake.tla has the steps).
FinishWakeProducer(w) ==
    /\ w \in W /\ Working /\ wpc[w] = "Wake"
    /\ IF wslot[w] \in S THEN waitw' = [waitw EXCEPT ![wslot[w]] = 0] ELSE UNCHANGED waitw
    /\ wpc' = [wpc EXCEPT ![w] = "Top"]
    /\ UNCHANGED <<pool, sstate, pending, cq, inj, rstate, origin, cachedBy, rtask, hvars, wrec, wslot, ovars, ghosts>>

----------------------------------------------------------------------------
(* The environment: a producer's thread dies between two of its steps.      *)

ProducerDies(h) ==
    /\ h \in Dying /\ hpc[h] \in Live \cup {"Closed", "Ended"}
    /\ hpc' = [hpc EXCEPT ![h] = "Dead"]
    /\ UNCHANGED <<shared, hslot, next, cur, placed, forgotten, settles, admitted, wvars, ovars, ghosts>>

\* A thread's step: a producer's (handle t), a worker's, or the owner's (t = OwnerId: its event loop runs its
\* steps one at a time, in any order of arrival; for handle h or slot s). Each action is one `// spec:` name at
\* its access in the files of the code: lines above.
Step(t) ==
    \/ SubmitCountPending(t) \/ SubmitReadState(t) \/ SubmitTakeRecord(t) \/ SubmitStoreQueued(t)
    \/ SubmitPushInjector(t) \/ MainPopCompletion(t) \/ TerminateRejectAll(t) \/ CancelCasQueued(t)
    \/ MainAnnounceWaiting(t) \/ MainRecheckCompletions(t) \/ MainWaitAsync(t) \/ ProducerSendClosed(t)
    \/ FindPopInjector(t) \/ ExecCasRunning(t) \/ FinishStoreDone(t) \/ FinishPushCompletion(t)
    \/ FinishWakeProducer(t)
    \/ t = OwnerId /\ \E h \in H : OwnerClaimSlot(h) \/ OwnerReceiveClosed(h) \/ OwnerNoticeDeath(h)
    \/ t = OwnerId /\ \E s \in S : DiedCancelQueued(s) \/ DiedReclaimCached(s) \/ DiedDrainQueue(s)
    \/ OwnerStorePoolState(t) \/ OwnerQuietRead(t) \/ OwnerWakeProducer(t)

Threads == H \cup W \cup {OwnerId}

Next == (\E t \in Threads : Step(t)) \/ (\E h \in H : ProducerDies(h)) \/ UNCHANGED vars

\* Weak fairness for each producer and worker; none for a death (it may not happen) nor for the pool's ending
\* (it may not come: the owner's step as a whole is not fair, or it would force a close). Each of the owner's
\* other steps is fair on its own: a step of its event loop that is enabled forever is taken.
Spec ==
    /\ Init /\ [][Next]_vars
    /\ \A t \in H \cup W : WF_vars(Step(t))
    /\ \A h \in H : WF_vars(OwnerClaimSlot(h)) /\ WF_vars(OwnerReceiveClosed(h)) /\ WF_vars(OwnerNoticeDeath(h))
    /\ \A s \in S : WF_vars(DiedCancelQueued(s)) /\ WF_vars(DiedReclaimCached(s)) /\ WF_vars(DiedDrainQueue(s))
    /\ WF_vars(OwnerQuietRead(OwnerId)) /\ WF_vars(StoreClosed) /\ WF_vars(OwnerWakeProducer(OwnerId))

----------------------------------------------------------------------------
(* Properties.                                                              *)

States == {"FREE", "CACHED", "QUEUED", "RUNNING", "DONE", "CANCELLED"}

TypeOK ==
    /\ pool \in {"OPEN", "CLOSING", "CLOSED", "TERMINATED"}
    /\ sstate \in [S -> {"FREE", "OPEN", "DEAD"}]
    /\ pending \in [S -> Nat]
    /\ waitw \in [S -> {0, 1}]
    /\ cq \in [0..Slots -> SUBSET R]
    /\ inj \subseteq R
    /\ rstate \in [R -> States]
    /\ origin \in [R -> 0..Slots]
    /\ hpc \in [H -> Live \cup {"Unborn", "Closed", "Ended", "Dead"}]
    /\ hslot \in [H -> 0..Slots]
    /\ placed \in [H -> SUBSET R] /\ forgotten \in [H -> SUBSET R]
    /\ wpc \in [W -> {"Top", "Claim", "Run", "Push", "Wake"}]

\* A completion reaches its own producer: slot s's queue holds only records of origin s.
CompletionsRouted == \A s \in 0..Slots : \A r \in cq[s] : origin[r] = s

\* No completion was ever pushed to a FREE slot's queue (nobody would read it, or a later producer would).
CompletionOnlyToOpenSlot == ~badpush

\* A live handle's slot is still its own: not FREE, and no other live handle has it.
SlotExclusive ==
    \A h \in H : hpc[h] \in Live =>
        /\ sstate[hslot[h]] # "FREE"
        /\ \A g \in H \ {h} : hpc[g] \in Live => hslot[g] # hslot[h]

SettledOnce == \A h \in H : \A k \in K : settles[h][k] <= 1

NoDoubleFree == ~dfree

\* A FREE record is referenced nowhere: in no queue and in no worker's hand.
FreeIsUnreferenced ==
    \A r \in R : rstate[r] = "FREE" =>
        /\ r \notin inj
        /\ \A s \in 0..Slots : r \notin cq[s]
        /\ \A w \in W : wrec[w] # r

\* Pool close abandons nothing: once CLOSED, no live producer has a task unsettled or on its way in.
CloseAbandonsNothing ==
    pool = "CLOSED" => \A h \in H : hpc[h] # "Dead" => placed[h] = {} /\ hpc[h] \notin {"Take", "Store", "Push"}

\* Every admitted task of a producer that does not die is settled in the end.
EverySettled == \A h \in H : \A k \in K : (k \in admitted[h]) ~> (settles[h][k] >= 1 \/ hpc[h] = "Dead")

\* Records and slots come back: in the end every record is FREE and no slot is DEAD (checked where the pool
\* neither closes nor terminates: its workers then run for ever, and every cancelled record is taken).
RecordsAndSlotsBack == <>[](\A r \in R : rstate[r] = "FREE") /\ <>[](\A s \in S : sstate[s] # "DEAD")

\* After terminate, every live producer ends with nothing unsettled.
TerminateRejectsAll ==
    (pool = "TERMINATED") ~> (\A h \in H : hpc[h] = "Dead" \/ placed[h] = {})
=============================================================================
