------------------------------ MODULE Elastic ------------------------------
(***************************************************************************)
(* The elastic pool (issue 49): workers that the owner starts when queued  *)
(* work finds nobody asleep to take it, and that retire after an idle      *)
(* timeout, between a minimum and a maximum. This spec is the design of    *)
(* the code, written before it: the words, who writes each, and one atomic *)
(* step per shared-memory access, named as the code's `// spec:` comments  *)
(* will name them (spec/docs/Elastic.md lists them). The code it mirrors  *)
(* (tests/repo/spec_names_test.ts holds the two in step):                  *)
(* code: lib/protocol/slots.ts                                              *)
(* code: lib/protocol/sleep.ts                                              *)
(* code: lib/owner/growth.ts                                                *)
(* code: lib/worker/search.ts                                               *)
(* code: lib/worker/loop.ts                                                 *)
(* code: lib/producer/submission.ts                                         *)
(* One deviation: the code keeps the mail in its own word (StatusWords.    *)
(* mail), not above the state bits; slots.ts says why a post and a         *)
(* retirement still exclude each other (a Dekker pair of accesses).        *)
(*                                                                          *)
(* The memory is laid out once for the maximum: one slot per possible      *)
(* worker (Workers, Max of them), each with its deque and its SLOT WORD,   *)
(* which replaces sleep.ts's state word. The slot word holds the slot's    *)
(* state in its low bits and, above them, the worker's MAIL: the directed  *)
(* tasks (and broadcast parts) posted to it and not yet taken up. States:  *)
(*   ABSENT    no thread; the deque is empty, the mail is empty;           *)
(*   STARTING  the owner started a thread, which runs its setup;           *)
(*   AWAKE     an active worker, running or searching (sleep.ts's AWAKE);  *)
(*   SLEEPING  an active worker, about to wait or waiting on this word;    *)
(*   RETIRING  its worker left for good (teardown, then exit).             *)
(* A fixed pool has every slot AWAKE from the start (all zero: today's     *)
(* memory); an elastic one starts Min slots and stores ABSENT in the rest. *)
(*                                                                          *)
(* Pool words: the counters word (sleep.ts: the JEC and the sleeping       *)
(* count), and the SIZE word: the workers the pool keeps (started or       *)
(* starting, less those that have reserved their retirement). Growth       *)
(* raises it by a compare-exchange below Max; a retirement lowers it by a  *)
(* compare-exchange above Min.                                             *)
(*                                                                          *)
(* Retirement. A sleeper whose wait timed out (the idle timeout) reserves  *)
(* its leave on the size word (RetireReserve, above Min only), uncounts    *)
(* itself from the sleeping count (RetireUncount), then takes its slot     *)
(* word from exactly (no mail, SLEEPING) to RETIRING by compare-exchange   *)
(* (RetireCasSlot): a wake (SLEEPING -> AWAKE) or a directed push (mail,   *)
(* AWAKE) makes it fail, and the worker goes on awake (RetireUnreserve).   *)
(* It sleeps only after a search found its own deque empty, and only it    *)
(* pushes to its deque, so it leaves nothing behind. After its teardown   *)
(* it stores ABSENT (RetireStoreAbsent) and tells the owner, which looks   *)
(* again whether to grow. A death in the teardown: the owner stores ABSENT. *)
(*                                                                          *)
(* Growth. The owner, after a newWork that woke nobody and after every     *)
(* retirement or death, reads the counters and the injector: work queued   *)
(* and nobody counted asleep, no start already in flight (the rate bound), *)
(* an ABSENT slot: it stores STARTING there, reserves on the size word     *)
(* (below Max; refused: ABSENT again) and starts the thread, which stores  *)
(* AWAKE after its setup.                                                  *)
(*                                                                          *)
(* Abstractions. Queues are sets (ChaseLev.tla, Injector.tla: each is     *)
(* linearizable). A worker's search (mail, own deque, injector, one steal  *)
(* from an active slot) is one step: the JEC protocol makes a push that   *)
(* lands anywhere in a search that missed it harmless, as SleepWake.tla    *)
(* checks access by access. newWork's load-and-compare-exchange loop, and  *)
(* getSleepy's, are one step each (the step of the access that succeeds); *)
(* a wake's load, compare-exchange and notify are one step (once the word  *)
(* says AWAKE, no step of the sleeper depends on when the notify comes).  *)
(* The JEC does not wrap here (SleepWake.tla checks the wrap). The idle   *)
(* timeout is a step outside fairness (a sleeper may time out, never must), *)
(* at most MaxRetires times in all; a worker dies only in its teardown     *)
(* (user code), at most MaxDeaths times; deaths in task code are           *)
(* Lifecycle.tla's. A task runs in one step; task 1 may spawn one task     *)
(* (Child) onto its worker's own deque.                                    *)
(***************************************************************************)
EXTENDS Integers, FiniteSets, TLC

CONSTANTS
    Workers,     \* the slots (model values): the memory is laid out for Max = Cardinality(Workers)
    Main,        \* the owner thread (a model value): submits, directs, grows, recovers
    Min,         \* the pool's minimum
    Tasks,       \* tasks the owner submits: ids 1..Tasks
    Directed,    \* the tasks the owner posts to one worker (a subset of 1..Tasks)
    Spawn,       \* does task 1 push a task (Child) onto its worker's own deque?
    MaxRetires,  \* how many idle timeouts a behaviour may have
    MaxDeaths    \* how many deaths in a teardown a behaviour may have

Max == Cardinality(Workers)
Child == Tasks + 1
AllTasks == IF Spawn THEN 1..Child ELSE 1..Tasks
Threads == Workers \cup {Main}

ASSUME ConstantsOk ==
    /\ Min \in 0..Max /\ Max >= 1 /\ Tasks \in Nat \ {0} /\ Directed \subseteq 1..Tasks
    /\ Spawn \in BOOLEAN /\ MaxRetires \in Nat /\ MaxDeaths \in Nat /\ Main \notin Workers

\* The slot states (the low bits of the slot word). ACTIVE: the slots thieves steal from and directed
\* pushes go to.
ABSENT == "ABSENT"
STARTING == "STARTING"
AWAKE == "AWAKE"
SLEEPING == "SLEEPING"
RETIRING == "RETIRING"
ACTIVE == {AWAKE, SLEEPING}

\* The first Min slots start with the pool (a CHOOSE: the slots are symmetric).
Initial == CHOOSE S \in SUBSET Workers : Cardinality(S) = Min

VARIABLES
    slot,       \* [Workers -> [st, mail]]: each slot word: its state, and the directed tasks posted to it
    jec,        \* the counters word's JEC
    sleepers,   \* the counters word's sleeping count (one word with jec: each access below reads or writes both)
    size,       \* the size word
    inj,        \* tasks in the injector
    dq,         \* [Workers -> SUBSET AllTasks]: each slot's deque
    pc,         \* [Threads -> string]
    loc,        \* [Threads -> record]: each thread's locals (see Fresh)
    due,        \* the owner's: a growth check is due (its newWork woke nobody, or a worker retired or died)
    died,       \* slots whose thread died in its teardown, not yet recovered by the owner
    posted,     \* tasks the owner has submitted
    runs,       \* history: [AllTasks -> Nat], times each task ran
    retires,    \* idle timeouts so far
    deaths,     \* deaths so far
    starts      \* history: threads the owner started

vars == <<slot, jec, sleepers, size, inj, dq, pc, loc, due, died, posted, runs, retires, deaths, starts>>

AnyWorker == CHOOSE w \in Workers : TRUE
\* Locals: task = the task in hand (0: none); tok = the JEC getSleepy returned; late = the search after
\* getSleepy; todo = the words a wake scan has still to look at; ret = where newWork returns to;
\* tgt = the slot a directed push or a growth is for.
Fresh == [task |-> 0, tok |-> 0, late |-> FALSE, todo |-> {}, ret |-> "Top", tgt |-> AnyWorker]

Init ==
    /\ slot = [w \in Workers |-> [st |-> IF w \in Initial THEN AWAKE ELSE ABSENT, mail |-> {}]]
    /\ jec = 0 /\ sleepers = 0
    /\ size = Min
    /\ inj = {} /\ dq = [w \in Workers |-> {}]
    /\ pc = [t \in Threads |-> IF t = Main THEN "MainIdle" ELSE IF t \in Initial THEN "Top" ELSE "None"]
    /\ loc = [t \in Threads |-> Fresh]
    /\ due = FALSE /\ died = {}
    /\ posted = 0 /\ runs = [k \in AllTasks |-> 0]
    /\ retires = 0 /\ deaths = 0 /\ starts = 0

Go(t, p) == pc' = [pc EXCEPT ![t] = p]
GoFresh(t, p) == /\ pc' = [pc EXCEPT ![t] = p] /\ loc' = [loc EXCEPT ![t] = Fresh]
Odd(j) == j % 2 = 1
\* A slot word with a new state, its mail kept.
WithSt(w, s) == [slot EXCEPT ![w].st = s]

-----------------------------------------------------------------------------
(* The worker loop: search, run, get sleepy, fall asleep, sleep.           *)

\* findWork, one step: the mail first (its slot word's count, one atomic subtraction), then its own deque,
\* the injector, one steal from another slot that is ACTIVE (thieves read the slot word first and skip the
\* rest). A task found: run it; none: get sleepy, or after the late search, fall asleep.
FindTake(w) ==
    /\ pc[w] = "Top"
    /\ LET victims == {v \in Workers \ {w} : slot[v].st \in ACTIVE /\ dq[v] /= {}} IN
       IF slot[w].mail /= {} THEN
           \E k \in slot[w].mail :
             /\ slot' = [slot EXCEPT ![w].mail = @ \ {k}] /\ UNCHANGED <<inj, dq>>
             /\ Go(w, "Run") /\ loc' = [loc EXCEPT ![w] = [Fresh EXCEPT !.task = k]]
       ELSE IF dq[w] /= {} THEN
           \E k \in dq[w] :
             /\ dq' = [dq EXCEPT ![w] = @ \ {k}] /\ UNCHANGED <<slot, inj>>
             /\ Go(w, "Run") /\ loc' = [loc EXCEPT ![w] = [Fresh EXCEPT !.task = k]]
       ELSE IF inj /= {} THEN
           \E k \in inj :
             /\ inj' = inj \ {k} /\ UNCHANGED <<slot, dq>>
             /\ Go(w, "Run") /\ loc' = [loc EXCEPT ![w] = [Fresh EXCEPT !.task = k]]
       ELSE IF victims /= {} THEN
           \E v \in victims : \E k \in dq[v] :
             /\ dq' = [dq EXCEPT ![v] = @ \ {k}] /\ UNCHANGED <<slot, inj>>
             /\ Go(w, "Run") /\ loc' = [loc EXCEPT ![w] = [Fresh EXCEPT !.task = k]]
       ELSE /\ UNCHANGED <<slot, inj, dq>>
            /\ Go(w, IF loc[w].late THEN "FallStore" ELSE "Sleepy")
            /\ UNCHANGED loc
    /\ UNCHANGED <<jec, sleepers, size, due, died, posted, runs, retires, deaths, starts>>

\* The task runs (one step). Task 1 may push Child onto this worker's own deque, then newWork.
RunTask(w) ==
    /\ pc[w] = "Run"
    /\ LET k == loc[w].task IN
       /\ runs' = [runs EXCEPT ![k] = @ + 1]
       /\ IF Spawn /\ k = 1
            THEN /\ dq' = [dq EXCEPT ![w] = @ \cup {Child}]
                 /\ Go(w, "NewWork") /\ loc' = [loc EXCEPT ![w] = [Fresh EXCEPT !.ret = "Top"]]
            ELSE /\ UNCHANGED dq /\ GoFresh(w, "Top")
    /\ UNCHANGED <<slot, jec, sleepers, size, inj, due, died, posted, retires, deaths, starts>>

\* getSleepy (its load-and-compare-exchange loop, one step): an even JEC made odd; the token; the late search.
GetSleepy(w) ==
    /\ pc[w] = "Sleepy"
    /\ jec' = IF Odd(jec) THEN jec ELSE jec + 1
    /\ Go(w, "Top") /\ loc' = [loc EXCEPT ![w] = [Fresh EXCEPT !.tok = jec', !.late = TRUE]]
    /\ UNCHANGED <<slot, sleepers, size, inj, dq, due, died, posted, runs, retires, deaths, starts>>

\* fallAsleep's first step, now a compare-exchange of the slot word from (no mail, AWAKE) to SLEEPING (was a
\* store of SLEEPING): mail that came after the late search makes it fail, and the worker reads its mail.
FallAsleepCasSlot(w) ==
    /\ pc[w] = "FallStore"
    /\ IF slot[w].st = AWAKE /\ slot[w].mail = {}
         THEN /\ slot' = WithSt(w, SLEEPING) /\ Go(w, "FallCas") /\ UNCHANGED loc
         ELSE /\ UNCHANGED slot /\ GoFresh(w, "Top")
    /\ UNCHANGED <<jec, sleepers, size, inj, dq, due, died, posted, runs, retires, deaths, starts>>

\* fallAsleep's count (its load-and-compare-exchange loop, one step): counted as sleeping if the JEC is the
\* token; else undo.
FallAsleepCas(w) ==
    /\ pc[w] = "FallCas"
    /\ IF jec = loc[w].tok
         THEN /\ sleepers' = sleepers + 1 /\ Go(w, "Wait")
         ELSE /\ UNCHANGED sleepers /\ Go(w, "FallUndo")
    /\ UNCHANGED <<slot, jec, size, inj, dq, loc, due, died, posted, runs, retires, deaths, starts>>

\* Work was posted since getSleepy: SLEEPING back to AWAKE (a compare-exchange that keeps the mail; a word a
\* poster already made AWAKE stays so), and search again.
FallAsleepUndo(w) ==
    /\ pc[w] = "FallUndo"
    /\ slot' = IF slot[w].st = SLEEPING THEN WithSt(w, AWAKE) ELSE slot
    /\ GoFresh(w, "Top")
    /\ UNCHANGED <<jec, sleepers, size, inj, dq, due, died, posted, runs, retires, deaths, starts>>

\* Atomics.wait(slot word, SLEEPING), with the idle timeout: blocks unless a poster already changed the word.
SleepWait(w) ==
    /\ pc[w] = "Wait"
    /\ Go(w, IF slot[w] = [st |-> SLEEPING, mail |-> {}] THEN "Blocked" ELSE "AwakenCas")
    /\ UNCHANGED <<slot, jec, sleepers, size, inj, dq, loc, due, died, posted, runs, retires, deaths, starts>>

\* Woken (or timed out and staying): SLEEPING -> AWAKE by compare-exchange (a word a poster made AWAKE
\* stays so), then the worker uncounts itself.
AwakenCasSlot(w) ==
    /\ pc[w] = "AwakenCas"
    /\ slot' = IF slot[w].st = SLEEPING THEN WithSt(w, AWAKE) ELSE slot
    /\ Go(w, "AwakenSub")
    /\ UNCHANGED <<jec, sleepers, size, inj, dq, loc, due, died, posted, runs, retires, deaths, starts>>

AwakenUncount(w) ==
    /\ pc[w] = "AwakenSub"
    /\ sleepers' = sleepers - 1
    /\ GoFresh(w, "Top")
    /\ UNCHANGED <<slot, jec, size, inj, dq, due, died, posted, runs, retires, deaths, starts>>

-----------------------------------------------------------------------------
(* Retirement: a sleeper whose wait timed out.                             *)

\* The wait returned "timed-out" (outside fairness: an idle timeout may pass, never must).
SleepTimeout(w) ==
    /\ pc[w] = "Blocked" /\ retires < MaxRetires
    /\ retires' = retires + 1
    /\ Go(w, "RetireReserve")
    /\ UNCHANGED <<slot, jec, sleepers, size, inj, dq, loc, due, died, posted, runs, deaths, starts>>

\* The size word, by compare-exchange: one worker fewer, only above the minimum. At the minimum: stay, and
\* leave the sleep as after any timeout (AwakenCasSlot, AwakenUncount).
RetireReserve(w) ==
    /\ pc[w] = "RetireReserve"
    /\ IF size > Min
         THEN /\ size' = size - 1 /\ Go(w, "RetireUncount")
         ELSE /\ UNCHANGED size /\ Go(w, "AwakenCas")
    /\ UNCHANGED <<slot, jec, sleepers, inj, dq, loc, due, died, posted, runs, retires, deaths, starts>>

\* The sleep count undone, before the slot word moves: from here a poster that reads the count does not
\* count this worker, and one that read it before finds the word SLEEPING (and wakes it: the next step
\* fails) or RETIRING (and, waking nobody, has the owner look at growth).
RetireUncount(w) ==
    /\ pc[w] = "RetireUncount"
    /\ sleepers' = sleepers - 1
    /\ Go(w, "RetireCas")
    /\ UNCHANGED <<slot, jec, size, inj, dq, loc, due, died, posted, runs, retires, deaths, starts>>

\* The retirement itself: the slot word from exactly (no mail, SLEEPING) to RETIRING. A wake or a directed
\* push made it AWAKE: stay (give the size back).
RetireCasSlot(w) ==
    /\ pc[w] = "RetireCas"
    /\ IF slot[w] = [st |-> SLEEPING, mail |-> {}]
         THEN /\ slot' = WithSt(w, RETIRING) /\ Go(w, "Teardown")
         ELSE /\ UNCHANGED slot /\ Go(w, "RetireUnreserve")
    /\ UNCHANGED <<jec, sleepers, size, inj, dq, loc, due, died, posted, runs, retires, deaths, starts>>

\* Staying after all: the size word given back (an atomic add), and search (uncounted already).
RetireUnreserve(w) ==
    /\ pc[w] = "RetireUnreserve"
    /\ size' = size + 1
    /\ GoFresh(w, "Top")
    /\ UNCHANGED <<slot, jec, sleepers, inj, dq, due, died, posted, runs, retires, deaths, starts>>

\* After the teardown (user code, no shared step): ABSENT, and the thread exits; its exit tells the owner,
\* which looks at growth again (a task may have come while this worker left).
RetireStoreAbsent(w) ==
    /\ pc[w] = "Teardown"
    /\ slot' = WithSt(w, ABSENT)
    /\ due' = TRUE
    /\ GoFresh(w, "None")
    /\ UNCHANGED <<jec, sleepers, size, inj, dq, died, posted, runs, retires, deaths, starts>>

\* A started thread's setup ran (user code): the slot is ACTIVE, and the worker searches.
BootStoreAwake(w) ==
    /\ pc[w] = "Boot"
    /\ slot' = WithSt(w, AWAKE)
    /\ GoFresh(w, "Top")
    /\ UNCHANGED <<jec, sleepers, size, inj, dq, due, died, posted, runs, retires, deaths, starts>>

-----------------------------------------------------------------------------
(* newWork and its wake scan: any thread that made work visible.           *)

\* newWork's load-and-compare-exchange loop, one step: an odd JEC made even; a sleeper counted: scan.
NewWork(t) ==
    /\ pc[t] = "NewWork"
    /\ jec' = IF Odd(jec) THEN jec + 1 ELSE jec
    /\ IF sleepers > 0
         THEN /\ Go(t, "WakeScan") /\ loc' = [loc EXCEPT ![t].todo = Workers]
         ELSE /\ Go(t, "WokeNobody") /\ UNCHANGED loc
    /\ UNCHANGED <<slot, sleepers, size, inj, dq, due, died, posted, runs, retires, deaths, starts>>

\* wake(i) for the next word of the scan: a compare-exchange from (no mail, SLEEPING) to AWAKE, and the
\* notify (one step: see the abstractions). RETIRING, ABSENT, STARTING and AWAKE words are passed over.
WakeCasSlot(t) ==
    /\ pc[t] = "WakeScan"
    /\ \E i \in loc[t].todo :
         IF slot[i] = [st |-> SLEEPING, mail |-> {}]
           THEN /\ slot' = WithSt(i, AWAKE)
                /\ pc' = [pc EXCEPT ![t] = loc[t].ret, ![i] = IF @ = "Blocked" THEN "AwakenCas" ELSE @]
                /\ loc' = [loc EXCEPT ![t] = Fresh]
           ELSE /\ UNCHANGED slot
                /\ IF loc[t].todo = {i}
                     THEN /\ Go(t, "WokeNobody") /\ loc' = [loc EXCEPT ![t].todo = {}]
                     ELSE /\ UNCHANGED pc /\ loc' = [loc EXCEPT ![t].todo = @ \ {i}]
    /\ UNCHANGED <<jec, sleepers, size, inj, dq, due, died, posted, runs, retires, deaths, starts>>

\* newWork returned false. The owner then looks at growth (no shared step: its own flag); a worker goes on.
WokeNobody(t) ==
    /\ pc[t] = "WokeNobody"
    /\ due' = (due \/ t = Main)
    /\ GoFresh(t, loc[t].ret)
    /\ UNCHANGED <<slot, jec, sleepers, size, inj, dq, died, posted, runs, retires, deaths, starts>>

-----------------------------------------------------------------------------
(* The owner: submit, direct, grow, recover.                               *)

\* A submission to the injector (a task not directed): push, then newWork.
SubmitPushInjector(t) ==
    /\ t = Main /\ pc[t] = "MainIdle" /\ posted < Tasks /\ posted + 1 \notin Directed
    /\ inj' = inj \cup {posted + 1}
    /\ posted' = posted + 1
    /\ Go(t, "NewWork") /\ loc' = [loc EXCEPT ![t] = [Fresh EXCEPT !.ret = "MainIdle"]]
    /\ UNCHANGED <<slot, jec, sleepers, size, dq, due, died, runs, retires, deaths, starts>>

\* A directed task (its arguments move buffers to one worker): the target slot word by compare-exchange,
\* (mail, AWAKE or SLEEPING) to (mail + the task, AWAKE), and the notify if it was SLEEPING (one step). A
\* slot not ACTIVE fails it: the owner tries the next ACTIVE slot, and with none the injector.
DirectCasSlot(t) ==
    /\ t = Main /\ pc[t] = "MainIdle" /\ posted < Tasks /\ posted + 1 \in Directed
    /\ \E w \in Workers :
         IF slot[w].st \in ACTIVE
           THEN /\ slot' = [slot EXCEPT ![w] = [st |-> AWAKE, mail |-> @.mail \cup {posted + 1}]]
                /\ pc' = [pc EXCEPT ![w] = IF @ = "Blocked" THEN "AwakenCas" ELSE @]
                /\ posted' = posted + 1
                /\ UNCHANGED inj
           ELSE /\ \A v \in Workers : slot[v].st \notin ACTIVE    \* (the scan over the slots came to none)
                /\ UNCHANGED slot
                /\ inj' = inj \cup {posted + 1}
                /\ posted' = posted + 1
                /\ pc' = [pc EXCEPT ![t] = "NewWork"]
    /\ loc' = [loc EXCEPT ![t] = [Fresh EXCEPT !.ret = "MainIdle"]]
    /\ UNCHANGED <<jec, sleepers, size, dq, due, died, runs, retires, deaths, starts>>

\* The growth check (the owner's flag cleared): the counters and the injector read; work queued, nobody
\* counted asleep, no start in flight (the rate: one at a time), an ABSENT slot: go on to take it.
GrowLoad(t) ==
    /\ t = Main /\ pc[t] = "MainIdle" /\ due
    /\ due' = FALSE
    /\ IF /\ inj /= {} /\ sleepers = 0
          /\ \A w \in Workers : slot[w].st /= STARTING
          /\ \E w \in Workers : slot[w].st = ABSENT
         THEN \E w \in Workers :
                /\ slot[w].st = ABSENT
                /\ Go(t, "GrowStore") /\ loc' = [loc EXCEPT ![t].tgt = w]
         ELSE UNCHANGED <<pc, loc>>
    /\ UNCHANGED <<slot, jec, sleepers, size, inj, dq, died, posted, runs, retires, deaths, starts>>

\* STARTING into the ABSENT slot first (only the owner writes an ABSENT word), so that the slots the pool
\* keeps are never fewer than the size word says.
GrowStoreStarting(t) ==
    /\ t = Main /\ pc[t] = "GrowStore"
    /\ slot' = WithSt(loc[t].tgt, STARTING)
    /\ Go(t, "GrowReserve")
    /\ UNCHANGED <<jec, sleepers, size, inj, dq, loc, due, died, posted, runs, retires, deaths, starts>>

\* The size word by compare-exchange, one worker more, only below the maximum: then the thread is started
\* (it runs its setup, then stores AWAKE). At the maximum: the slot back to ABSENT.
GrowReserve(t) ==
    /\ t = Main /\ pc[t] = "GrowReserve"
    /\ LET w == loc[t].tgt IN
       IF size < Max
         THEN /\ size' = size + 1 /\ starts' = starts + 1 /\ UNCHANGED slot
              /\ pc' = [pc EXCEPT ![t] = "MainIdle", ![w] = "Boot"]
         ELSE /\ UNCHANGED <<size, starts>> /\ slot' = WithSt(w, ABSENT)
              /\ Go(t, "MainIdle")
    /\ loc' = [loc EXCEPT ![t] = Fresh]
    /\ UNCHANGED <<jec, sleepers, inj, dq, due, died, posted, runs, retires, deaths>>

\* A worker died in its teardown (RETIRING; its count and size already undone, its deque and mail empty):
\* the owner stores ABSENT for it, and looks at growth.
RecoverStoreAbsent(t) ==
    /\ t = Main /\ pc[t] = "MainIdle" /\ died /= {}
    /\ \E w \in died :
         /\ died' = died \ {w}
         /\ slot' = WithSt(w, ABSENT)
         /\ pc' = [pc EXCEPT ![w] = "None"]
    /\ due' = TRUE
    /\ UNCHANGED <<jec, sleepers, size, inj, dq, loc, posted, runs, retires, deaths, starts>>

\* The environment: a death in the teardown (user code).
Die(w) ==
    /\ pc[w] = "Teardown" /\ deaths < MaxDeaths
    /\ deaths' = deaths + 1
    /\ died' = died \cup {w}
    /\ Go(w, "Dead")
    /\ UNCHANGED <<slot, jec, sleepers, size, inj, dq, loc, due, posted, runs, retires, starts>>

-----------------------------------------------------------------------------
\* The actions, one per shared-memory access of the code to be (spec/docs/Elastic.md).
Step(t) ==
    \/ FindTake(t) \/ RunTask(t) \/ GetSleepy(t) \/ FallAsleepCasSlot(t) \/ FallAsleepCas(t)
    \/ FallAsleepUndo(t) \/ SleepWait(t) \/ AwakenCasSlot(t) \/ AwakenUncount(t)
    \/ RetireReserve(t) \/ RetireUncount(t) \/ RetireCasSlot(t) \/ RetireUnreserve(t) \/ RetireStoreAbsent(t)
    \/ BootStoreAwake(t)
    \/ NewWork(t) \/ WakeCasSlot(t) \/ WokeNobody(t)
    \/ SubmitPushInjector(t) \/ DirectCasSlot(t) \/ GrowLoad(t) \/ GrowReserve(t) \/ GrowStoreStarting(t)
    \/ RecoverStoreAbsent(t)

\* Every task has run.
Finished == \A k \in AllTasks : runs[k] >= 1

Next ==
    \/ \E t \in Threads : Step(t)
    \/ \E w \in Workers : SleepTimeout(w) \/ Die(w)
    \/ Finished /\ UNCHANGED vars

\* Weak fairness of each thread's steps; idle timeouts and deaths are not forced.
Fairness == \A t \in Threads : WF_vars(Step(t))

Spec == Init /\ [][Next]_vars /\ Fairness

-----------------------------------------------------------------------------
(* Properties.                                                             *)

WorkerPCs == {"None", "Boot", "Top", "Run", "Sleepy", "FallStore", "FallCas", "FallUndo", "Wait", "Blocked",
              "AwakenCas", "AwakenSub", "RetireReserve", "RetireUncount", "RetireCas", "RetireUnreserve",
              "Teardown", "Dead", "NewWork", "WakeScan", "WokeNobody"}
MainPCs == {"MainIdle", "NewWork", "WakeScan", "WokeNobody", "GrowReserve", "GrowStore"}

TypeOK ==
    /\ slot \in [Workers -> [st : {ABSENT, STARTING, AWAKE, SLEEPING, RETIRING}, mail : SUBSET (1..Tasks)]]
    /\ jec \in Nat /\ sleepers \in 0..Max /\ size \in 0..Max
    /\ inj \subseteq AllTasks /\ dq \in [Workers -> SUBSET AllTasks]
    /\ \A w \in Workers : pc[w] \in WorkerPCs
    /\ pc[Main] \in MainPCs
    /\ due \in BOOLEAN /\ died \subseteq Workers /\ posted \in 0..Tasks
    /\ runs \in [AllTasks -> Nat]

\* The workers counted in the sleeping count: from their count to their uncount.
Counted == {w \in Workers : pc[w] \in {"Wait", "Blocked", "AwakenCas", "AwakenSub", "RetireReserve", "RetireUncount"}}
\* The count is exact: a retirement leaves no sleep count behind.
CountersConsistent == sleepers = Cardinality(Counted)

\* A SLEEPING word has no mail, and belongs to a worker on its way to sleep, asleep, or retiring; a blocked
\* worker's word says SLEEPING (a wake moves it out of Blocked in the same step).
SleepingWordsHonest ==
    /\ \A w \in Workers : slot[w].st = SLEEPING =>
         /\ slot[w].mail = {}
         /\ pc[w] \in {"FallCas", "FallUndo", "Wait", "Blocked", "AwakenCas", "RetireReserve", "RetireUncount",
                       "RetireCas"}
    /\ \A w \in Workers : pc[w] = "Blocked" => slot[w].st = SLEEPING

\* No task stranded: a slot that is not ACTIVE holds nothing in its deque and no mail.
NoStrandedTask == \A w \in Workers : slot[w].st \notin ACTIVE => dq[w] = {} /\ slot[w].mail = {}

\* The tasks in hand, and every task's places: each submitted (or spawned) task is in exactly one of the
\* injector, a deque, a slot's mail, a worker's hand, or has run, exactly once.
Hand(w) == IF pc[w] = "Run" THEN {loc[w].task} ELSE {}
Exists(k) == k <= posted \/ (Spawn /\ k = Child /\ runs[1] > 0)
Places(k) ==
    (IF k \in inj THEN 1 ELSE 0)
    + Cardinality({w \in Workers : k \in dq[w]}) + Cardinality({w \in Workers : k \in slot[w].mail})
    + Cardinality({w \in Workers : k \in Hand(w)}) + runs[k]
RunsOnce ==
    /\ \A k \in AllTasks : runs[k] <= 1
    /\ \A k \in AllTasks : Places(k) = IF Exists(k) THEN 1 ELSE 0

\* The slots the pool keeps: started or starting, and not retiring.
Kept == {w \in Workers : slot[w].st \in {STARTING, AWAKE, SLEEPING}}
\* Between a retirement's reservation and its compare-exchange (or its give-back): still kept, not counted.
Leaving == {w \in Workers : pc[w] \in {"RetireUncount", "RetireCas", "RetireUnreserve"}}
\* The pool never below its minimum nor above its maximum; the size word counts the kept slots, less the
\* ones leaving, less a STARTING slot whose growth is not yet reserved.
WithinBounds ==
    /\ Cardinality(Kept) >= Min /\ Cardinality(Kept) <= Max
    /\ size = Cardinality(Kept \ Leaving) - (IF pc[Main] = "GrowReserve" THEN 1 ELSE 0)

\* Work that some worker of the pool will look for: in the injector, an ACTIVE slot's deque or mail.
Queued == inj /= {} \/ \E w \in Workers : dq[w] /= {} \/ slot[w].mail /= {}
\* A wake under way: a poster between its push and the end of its newWork, or a directed push's wake done.
WakePending == \E t \in Threads : pc[t] \in {"NewWork", "WakeScan", "WokeNobody"}
\* Growth under way: the owner's check due or in progress, a start in flight, a retirement or a death whose
\* end will tell the owner.
GrowPending ==
    \/ due \/ pc[Main] \in {"GrowStore", "GrowReserve"} \/ died /= {}
    \/ \E w \in Workers : slot[w].st = STARTING \/ pc[w] = "Teardown"
\* A worker that will not look for work again by itself.
Parked(w) == pc[w] \in {"None", "Blocked", "Teardown", "Dead"}
\* No lost wake-up: work is never queued while every slot's worker is asleep, retiring or absent, unless a
\* wake or a growth is under way (in particular when the last sleeper retires while work arrives).
NoLostWakeup == (Queued /\ \A w \in Workers : Parked(w)) => WakePending \/ GrowPending

\* Liveness, under weak fairness of each thread: every task runs (the pool grows to run it, from 0 workers
\* if the minimum is 0).
EveryTaskRuns == \A k \in AllTasks : <>(runs[k] >= 1)

WorkerSymmetry == Permutations(Workers)
=============================================================================
