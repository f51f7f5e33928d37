----------------------------- MODULE SleepWake -----------------------------
(***************************************************************************)
(* The sleep/wake protocol of lib/protocol/sleep.ts (Rayon's jobs event counter), *)
(* with the parts of the worker loop (lib/worker/loop.ts) and of submission and *)
(* completion (lib/producer/), and of stopping (lib/owner/owner.ts), that  *)
(* touch it: one action per shared-memory access, each named after the     *)
(* `// spec: Name` comment on that access.                                 *)
(* JavaScript's Atomics are sequentially consistent, so an interleaving of *)
(* these actions is exactly what the code can do.                          *)
(*                                                                          *)
(* code: lib/protocol/sleep.ts                                              *)
(* code: lib/worker/loop.ts                                                 *)
(* code: lib/worker/search.ts                                               *)
(* code: lib/worker/marks.ts                                                *)
(* code: lib/worker/fork_join.ts                                           *)
(* code: lib/owner/owner.ts                                                 *)
(* code: lib/producer/completion.ts                                         *)
(* code: lib/producer/submission.ts                                         *)
(* code: lib/protocol/producers.ts                                          *)
(*                                                                          *)
(* Threads. Workers run the loop: pop their own deque, pop one task from  *)
(* the injector (then, if it still holds tasks, newWork, so that a sleeper *)
(* takes the next; issue 30, see Order.tla), steal half of another         *)
(* worker's deque (newWork when more than one task came along), doze,      *)
(* announce sleepy, search once more, fall asleep, sleep. A submitted task *)
(* may fork (join's push of b onto its worker's deque, then newWork:       *)
(* ForkPushDeque, at most Forks times in all), the poster from a worker's  *)
(* own deque, which holds only forks; then it joins b (JoinPopOwn: b back, *)
(* run inline; or, stolen, a wait for its latch: Lifecycle.tla's). Main    *)
(* submits Submits tasks (injector push, then newWork), settles them from  *)
(* the completion queue (the mainWaiting word), and closes the pool once   *)
(* every task has settled (lifecycle word, then wakeAll).                  *)
(*                                                                          *)
(* Queues. The deques and the injector are linearizable (ChaseLev.tla      *)
(* checks the deque; the injector is Vyukov's queue), so each pop, push or *)
(* steal-half is one atomic step on a count of tasks. Tasks are counted,   *)
(* not named: which task runs does not matter here, only that some worker  *)
(* is awake to run it.                                                     *)
(*                                                                          *)
(* The counters word. As in the code, one integer holds the JEC (high      *)
(* field, wrapping at JecModulus) and the sleeping count (low field,       *)
(* wrapping at SleepersModulus); an add that overflows the low field       *)
(* carries into the JEC, as in the code. The JEC starts at InitJec, just   *)
(* below its wrap, so every run crosses the wrap point.                    *)
(***************************************************************************)
EXTENDS Integers, FiniteSets, TLC

CONSTANTS
    Workers,          \* the worker threads (model values)
    Main,             \* the main thread (a model value)
    Submits,          \* tasks the main thread submits
    Forks,            \* forks that running tasks make, in all
    JecModulus,       \* the JEC field wraps at this (2^21 in the code)
    SleepersModulus,  \* the sleeping-count field wraps at this (2^10 in the code)
    InitJec           \* the JEC's initial value (0 in the code; near the wrap here)

Threads == Workers \cup {Main}
WordModulus == JecModulus * SleepersModulus
\* Every newWork moves the JEC at most once (odd to even), every getSleepy at most once (even to odd,
\* and only after a move to even or at the start), wakeAll by 2. newWork follows a submission (Submits),
\* a pop from the injector that leaves tasks in it (at most Submits), a fork (Forks), or a steal-half of
\* two or more tasks into the thief's empty deque, after which it runs one of them (at most one per task,
\* Submits + Forks).
MaxJecMoves == 2 * (3 * Submits + 2 * Forks) + 1 + 2

ASSUME ConstantsOk ==
    /\ Submits \in Nat /\ Forks \in Nat /\ InitJec \in 0..JecModulus - 1 /\ InitJec % 2 = 0
    /\ JecModulus % 2 = 0 /\ Main \notin Workers
\* The code's fields: the sleeping count holds every worker (Sleep's constructor caps workers at 1023),
\* and the JEC cannot move by a whole modulus while a worker holds a token (see spec/docs/SleepWake.md).
ASSUME CountersWideEnough ==
    /\ SleepersModulus > Cardinality(Workers)
    /\ JecModulus > MaxJecMoves

\* The code's jecOf, withJec, the sleepers mask, and int32 add / sub on the whole word.
JecOf(c) == (c \div SleepersModulus) % JecModulus
Sleepers(c) == c % SleepersModulus
WithJec(c, j) == (j % JecModulus) * SleepersModulus + Sleepers(c)
AddWord(c, x) == (c + x) % WordModulus
SubOne(c) == (c + WordModulus - 1) % WordModulus
Odd(j) == j % 2 = 1

AWAKE == 0
SLEEPING == 1

VARIABLES
    counters,     \* the counters word
    wstate,       \* [Workers -> {AWAKE, SLEEPING}]: each worker's state word
    inj,          \* tasks in the injector
    dq,           \* [Workers -> Nat]: tasks in each worker's deque
    comp,         \* handles in the completion queue
    lifecycle,    \* the lifecycle word: 0 running, 1 stopping
    mainWaiting,  \* the mainWaiting word
    mwait,        \* the main thread's completion wait: "none", "armed" (waitAsync pending), "fired"
    pc,           \* [Threads -> string]: the next step of each thread
    loc,          \* [Threads -> record]: each thread's locals (see Fresh)
    posted,       \* tasks the main thread has submitted
    ran,          \* tasks run to completion (completion pushed)
    settled,      \* tasks the main thread has settled
    forked,       \* forks pushed so far
    forksRun      \* forked tasks run (their latch is Lifecycle.tla's)

forkVars == <<forked, forksRun>>
vars == <<counters, wstate, inj, dq, comp, lifecycle, mainWaiting, mwait, pc, loc, posted, ran, settled, forkVars>>

AnyWorker == CHOOSE w \in Workers : TRUE

\* Locals, reset between operations so that equal states are equal. c = a counters value read;
\* tok = the JEC getSleepy returned; late = searching after getSleepy; tried = victims tried;
\* tgt = the victim / the worker being woken; todo = workers a wake scan has still to look at;
\* all = the scan is wakeAll's; ret = where newWork returns to.
Fresh == [c |-> 0, tok |-> 0, late |-> FALSE, tried |-> {}, tgt |-> AnyWorker, todo |-> {},
          all |-> FALSE, ret |-> "Top"]

Init ==
    /\ counters = InitJec * SleepersModulus
    /\ wstate = [w \in Workers |-> AWAKE]
    /\ inj = 0
    /\ dq = [w \in Workers |-> 0]
    /\ comp = 0
    /\ lifecycle = 0
    /\ mainWaiting = 0
    /\ mwait = "none"
    /\ pc = [t \in Threads |-> IF t = Main THEN "MainIdle" ELSE "Top"]
    /\ loc = [t \in Threads |-> Fresh]
    /\ posted = 0
    /\ ran = 0
    /\ settled = 0
    /\ forked = 0
    /\ forksRun = 0

Go(t, p) == pc' = [pc EXCEPT ![t] = p]
GoFresh(t, p) == /\ pc' = [pc EXCEPT ![t] = p] /\ loc' = [loc EXCEPT ![t] = Fresh]

-----------------------------------------------------------------------------
(* The worker loop (lib/worker/loop.ts run, lib/worker/search.ts findWork). *)

\* `while (!this.stopping())`: the lifecycle word, read at the top of every round.
LoopReadLifecycle(w) ==
    /\ pc[w] = "Top"
    /\ IF lifecycle = 1 THEN GoFresh(w, "Exited")
       ELSE GoFresh(w, "PopOwn")
    /\ UNCHANGED <<forkVars, counters, wstate, inj, dq, comp, lifecycle, mainWaiting, mwait, posted, ran, settled>>

\* A search that found nothing: doze (or spin) and loop, or, after the late search, check stopping.
NoWork(w) == IF loc[w].late THEN "SleepyStop" ELSE "Idle"

\* findWork: own deque first (newest first): a fork. Exact: only the owner pushes to its deque.
FindPopOwn(w) ==
    /\ pc[w] = "PopOwn"
    /\ IF dq[w] > 0
         THEN /\ dq' = [dq EXCEPT ![w] = @ - 1]
              /\ Go(w, "RunFork")
         ELSE /\ UNCHANGED dq
              /\ Go(w, "PopInj")
    /\ UNCHANGED <<forkVars, counters, wstate, inj, comp, lifecycle, mainWaiting, mwait, loc, posted, ran, settled>>

\* Then the injector: its oldest task, one at a time (Order.tla: the submission order).
FindPopInjector(w) ==
    /\ pc[w] = "PopInj"
    /\ IF inj > 0
         THEN /\ inj' = inj - 1
              /\ Go(w, "InjLeft")
              /\ UNCHANGED loc
         ELSE /\ UNCHANGED inj
              /\ IF Cardinality(Workers) > 1 THEN /\ Go(w, "Steal") /\ UNCHANGED loc
                 ELSE Go(w, NoWork(w)) /\ UNCHANGED loc
    /\ UNCHANGED <<forkVars, counters, wstate, dq, comp, lifecycle, mainWaiting, mwait, posted, ran, settled>>

\* With a task in hand: does the injector still hold tasks (its length, two loads in the code, here one
\* read of the count: a linearizable queue's)? Then newWork, so that a sleeper takes the next one (a burst
\* posted with one newWork wakes one worker, and each that takes a task wakes the next); then run it.
FindInjectorLeft(w) ==
    /\ pc[w] = "InjLeft"
    /\ IF inj > 0
         THEN /\ Go(w, "NewWork")
              /\ loc' = [loc EXCEPT ![w].ret = "Run"]
         ELSE /\ Go(w, "Run")
              /\ UNCHANGED loc
    /\ UNCHANGED <<forkVars, counters, wstate, inj, dq, comp, lifecycle, mainWaiting, mwait, posted, ran, settled>>

\* Steal half of another worker's deque into ours, each other worker once (in any order: the code
\* starts at a random one). Exact EMPTY: a spurious one (a race for the last task) leaves that task to
\* its owner, which is awake (ChaseLev.tla, StealEmptyJustified).
FindStealHalf(w) ==
    /\ pc[w] = "Steal"
    /\ \E v \in Workers \ ({w} \cup loc[w].tried) :
         LET n == dq[v]
             k == n - n \div 2
             tried == loc[w].tried \cup {v}
         IN
         IF n > 0
           THEN /\ dq' = [dq EXCEPT ![v] = @ - k, ![w] = @ + k]
                /\ Go(w, IF k > 1 THEN "NewWork" ELSE "PopStolen")
                /\ loc' = [loc EXCEPT ![w].tried = tried, ![w].ret = "PopStolen"]
           ELSE /\ UNCHANGED dq
                /\ Go(w, IF tried = Workers \ {w} THEN NoWork(w) ELSE "Steal")
                /\ loc' = [loc EXCEPT ![w].tried = tried]
    /\ UNCHANGED <<forkVars, counters, wstate, inj, comp, lifecycle, mainWaiting, mwait, posted, ran, settled>>

\* After a successful steal-half (and its newWork), pop one of the stolen tasks from our deque.
FindPopStolen(w) ==
    /\ pc[w] = "PopStolen"
    /\ IF dq[w] > 0
         THEN /\ dq' = [dq EXCEPT ![w] = @ - 1]
              /\ Go(w, "RunFork")
         ELSE /\ UNCHANGED dq
              /\ Go(w, IF loc[w].tried = Workers \ {w} THEN NoWork(w) ELSE "Steal")
    /\ UNCHANGED <<forkVars, counters, wstate, inj, comp, lifecycle, mainWaiting, mwait, loc, posted, ran, settled>>

\* Spin or doze: a timed wait on our own word, which holds AWAKE and which no poster notifies. The
\* loop may doze any number of times (the code: a bounded number) before it gets sleepy.
Doze(w) ==
    /\ pc[w] = "Idle"
    /\ GoFresh(w, "Top")
    /\ UNCHANGED <<forkVars, counters, wstate, inj, dq, comp, lifecycle, mainWaiting, mwait, posted, ran, settled>>

-----------------------------------------------------------------------------
(* A submitted task forks (lib/worker/fork_join.ts fork): the push of b   *)
(* onto its worker's deque publishes it to thieves, then newWork; then it  *)
(* joins (joinForked): pops its deque for b (run inline), or, stolen,      *)
(* waits for its latch, which the thief sets when b has run. The latch is  *)
(* not a word of this module (Lifecycle.tla checks it), nor is helping     *)
(* while waiting modelled: the wait here is a step enabled once b has run. *)

ForkPushDeque(w) ==
    /\ pc[w] = "Run" /\ forked < Forks
    /\ dq' = [dq EXCEPT ![w] = @ + 1]
    /\ forked' = forked + 1
    /\ Go(w, "NewWork")
    /\ loc' = [loc EXCEPT ![w].ret = "Join"]
    /\ UNCHANGED <<forksRun, counters, wstate, inj, comp, lifecycle, mainWaiting, mwait, posted, ran, settled>>

\* joinForked: pop our deque. Only forks are in it and b is the newest: b itself, run inline at once;
\* empty, b was stolen: wait for its latch.
JoinPopOwn(w) ==
    /\ pc[w] = "Join"
    /\ IF dq[w] > 0
         THEN /\ dq' = [dq EXCEPT ![w] = @ - 1]
              /\ forksRun' = forksRun + 1
              /\ Go(w, "Run")
         ELSE /\ UNCHANGED <<dq, forksRun>>
              /\ Go(w, "JoinWait")
    /\ UNCHANGED <<forked, counters, wstate, inj, comp, lifecycle, mainWaiting, mwait, loc, posted, ran, settled>>

\* The latch is set (every fork has run): the join returns, the task runs on. (Lifecycle.tla's
\* JoinReadLatch and JoinWaitLatch: no word of this module.)
JoinLatchSet(w) ==
    /\ pc[w] = "JoinWait" /\ forksRun = forked
    /\ Go(w, "Run")
    /\ UNCHANGED <<forkVars, counters, wstate, inj, dq, comp, lifecycle, mainWaiting, mwait, loc, posted, ran, settled>>

\* The forked task ran: its latch is set (FinishSetLatch, FinishNotifyLatch: Lifecycle.tla's, no access
\* to the words of this module); the worker goes back to its loop.
ForkFinished(w) ==
    /\ pc[w] = "RunFork"
    /\ forksRun' = forksRun + 1
    /\ GoFresh(w, "Top")
    /\ UNCHANGED <<forked, counters, wstate, inj, dq, comp, lifecycle, mainWaiting, mwait, posted, ran, settled>>

-----------------------------------------------------------------------------
(* Running a task ends with finish() (lib/worker/runner.ts), whose last    *)
(* step (lib/worker/marks.ts publishDone) pushes the completion, then     *)
(* wakes the main thread if it said it waits.                              *)

FinishPushCompletion(w) ==
    /\ pc[w] = "Run"
    /\ comp' = comp + 1
    /\ ran' = ran + 1
    /\ GoFresh(w, "FinishRead")
    /\ UNCHANGED <<forkVars, counters, wstate, inj, dq, lifecycle, mainWaiting, mwait, posted, settled>>

FinishReadMainWaiting(w) ==
    /\ pc[w] = "FinishRead"
    /\ Go(w, IF mainWaiting = 1 THEN "FinishTake" ELSE "Top")
    /\ UNCHANGED <<forkVars, counters, wstate, inj, dq, comp, lifecycle, mainWaiting, mwait, loc, posted, ran, settled>>

FinishTakeMainWaiting(w) ==
    /\ pc[w] = "FinishTake"
    /\ mainWaiting' = 0
    /\ Go(w, IF mainWaiting = 1 THEN "FinishNotify" ELSE "Top")
    /\ UNCHANGED <<forkVars, counters, wstate, inj, dq, comp, lifecycle, mwait, loc, posted, ran, settled>>

FinishNotifyMain(w) ==
    /\ pc[w] = "FinishNotify"
    /\ mwait' = IF mwait = "armed" THEN "fired" ELSE mwait
    /\ Go(w, "Top")
    /\ UNCHANGED <<forkVars, counters, wstate, inj, dq, comp, lifecycle, mainWaiting, loc, posted, ran, settled>>

-----------------------------------------------------------------------------
(* getSleepy, the late search, fallAsleep, sleep (lib/protocol/sleep.ts). *)

GetSleepyLoad(w) ==
    /\ pc[w] \in {"Idle", "GetSleepyLoad"}
    /\ LET j == JecOf(counters) IN
       IF Odd(j)
         THEN /\ Go(w, "PopOwn")                        \* search once more
              /\ loc' = [loc EXCEPT ![w] = [Fresh EXCEPT !.tok = j, !.late = TRUE]]
         ELSE /\ Go(w, "GetSleepyCas")
              /\ loc' = [loc EXCEPT ![w].c = counters]
    /\ UNCHANGED <<forkVars, counters, wstate, inj, dq, comp, lifecycle, mainWaiting, mwait, posted, ran, settled>>

GetSleepyCas(w) ==
    /\ pc[w] = "GetSleepyCas"
    /\ LET c == loc[w].c
           odd == (JecOf(c) + 1) % JecModulus IN
       IF counters = c
         THEN /\ counters' = WithJec(c, odd)
              /\ Go(w, "PopOwn")
              /\ loc' = [loc EXCEPT ![w] = [Fresh EXCEPT !.tok = odd, !.late = TRUE]]
         ELSE /\ UNCHANGED counters
              /\ GoFresh(w, "GetSleepyLoad")
    /\ UNCHANGED <<forkVars, wstate, inj, dq, comp, lifecycle, mainWaiting, mwait, posted, ran, settled>>

\* `if (this.stopping()) break;` after the late search found nothing.
SleepyReadLifecycle(w) ==
    /\ pc[w] = "SleepyStop"
    /\ Go(w, IF lifecycle = 1 THEN "Exited" ELSE "FallStore")
    /\ UNCHANGED <<forkVars, counters, wstate, inj, dq, comp, lifecycle, mainWaiting, mwait, loc, posted, ran, settled>>

FallAsleepStoreSleeping(w) ==
    /\ pc[w] = "FallStore"
    /\ wstate' = [wstate EXCEPT ![w] = SLEEPING]
    /\ Go(w, "FallLoad")
    /\ UNCHANGED <<forkVars, counters, inj, dq, comp, lifecycle, mainWaiting, mwait, loc, posted, ran, settled>>

\* The final check: sleep only if the JEC is still the one getSleepy saw.
FallAsleepLoad(w) ==
    /\ pc[w] = "FallLoad"
    /\ IF JecOf(counters) /= loc[w].tok
         THEN Go(w, "FallUndo")
         ELSE Go(w, "FallCas")
    /\ loc' = [loc EXCEPT ![w].c = counters]
    /\ UNCHANGED <<forkVars, counters, wstate, inj, dq, comp, lifecycle, mainWaiting, mwait, posted, ran, settled>>

FallAsleepStoreAwake(w) ==
    /\ pc[w] = "FallUndo"
    /\ wstate' = [wstate EXCEPT ![w] = AWAKE]
    /\ GoFresh(w, "Top")                                \* fallAsleep false: continue (search again)
    /\ UNCHANGED <<forkVars, counters, inj, dq, comp, lifecycle, mainWaiting, mwait, posted, ran, settled>>

FallAsleepCas(w) ==
    /\ pc[w] = "FallCas"
    /\ IF counters = loc[w].c
         THEN /\ counters' = AddWord(loc[w].c, 1)       \* counted as sleeping
              /\ Go(w, "Wait")
         ELSE /\ UNCHANGED counters
              /\ Go(w, "FallLoad")
    /\ UNCHANGED <<forkVars, wstate, inj, dq, comp, lifecycle, mainWaiting, mwait, loc, posted, ran, settled>>

\* Atomics.wait(word, SLEEPING): checks the word and blocks in one step; returns at once if a poster
\* already stored AWAKE. No timeout: the worker loop sleeps without one.
SleepWait(w) ==
    /\ pc[w] = "Wait"
    /\ Go(w, IF wstate[w] = SLEEPING THEN "Blocked" ELSE "AwakenCas")
    /\ UNCHANGED <<forkVars, counters, wstate, inj, dq, comp, lifecycle, mainWaiting, mwait, loc, posted, ran, settled>>

\* sleepAsync (a worker with async tasks pending): Atomics.waitAsync on the same word, the same step.
SleepWaitAsync(w) == SleepWait(w)

AwakenCasState(w) ==
    /\ pc[w] = "AwakenCas"
    /\ wstate' = [wstate EXCEPT ![w] = AWAKE]           \* CAS SLEEPING -> AWAKE; AWAKE stays AWAKE
    /\ Go(w, "AwakenSub")
    /\ UNCHANGED <<forkVars, counters, inj, dq, comp, lifecycle, mainWaiting, mwait, loc, posted, ran, settled>>

AwakenUncount(w) ==
    /\ pc[w] = "AwakenSub"
    /\ counters' = SubOne(counters)
    /\ GoFresh(w, "Top")
    /\ UNCHANGED <<forkVars, wstate, inj, dq, comp, lifecycle, mainWaiting, mwait, posted, ran, settled>>

-----------------------------------------------------------------------------
(* newWork, wakeAll and wake (lib/protocol/sleep.ts): any thread.          *)

\* After the JEC is even: wake one sleeper if the count says there is one, else return.
AfterBump(t, c) ==
    IF Sleepers(c) = 0
      THEN GoFresh(t, loc[t].ret)
      ELSE /\ Go(t, "WakeLoad")
           /\ loc' = [loc EXCEPT ![t].todo = Workers, ![t].all = FALSE]

NewWorkLoad(t) ==
    /\ pc[t] = "NewWork"
    /\ IF Odd(JecOf(counters))
         THEN /\ Go(t, "NewWorkCas")
              /\ loc' = [loc EXCEPT ![t].c = counters]
         ELSE AfterBump(t, counters)
    /\ UNCHANGED <<forkVars, counters, wstate, inj, dq, comp, lifecycle, mainWaiting, mwait, posted, ran, settled>>

NewWorkCas(t) ==
    /\ pc[t] = "NewWorkCas"
    /\ LET c == loc[t].c
           even == WithJec(c, JecOf(c) + 1) IN
       IF counters = c
         THEN /\ counters' = even
              /\ AfterBump(t, even)
         ELSE /\ UNCHANGED counters                     \* retry with the value the CAS returned
              /\ IF Odd(JecOf(counters)) THEN loc' = [loc EXCEPT ![t].c = counters] /\ UNCHANGED pc
                 ELSE AfterBump(t, counters)
    /\ UNCHANGED <<forkVars, wstate, inj, dq, comp, lifecycle, mainWaiting, mwait, posted, ran, settled>>

\* One step of a wake scan is over for worker i: look at the next, or return.
ScanNext(t, i) ==
    LET todo == loc[t].todo \ {i} IN
    IF todo = {}
      THEN GoFresh(t, loc[t].ret)
      ELSE /\ Go(t, "WakeLoad")
           /\ loc' = [loc EXCEPT ![t].todo = todo]

\* wake(i), for newWork's wakeOne (any order: the code starts where the last scan stopped) and for
\* wakeAll (every worker).
WakeLoadState(t) ==
    /\ pc[t] = "WakeLoad"
    /\ \E i \in loc[t].todo :
         IF wstate[i] = SLEEPING
           THEN /\ Go(t, "WakeCas")
                /\ loc' = [loc EXCEPT ![t].tgt = i]
           ELSE ScanNext(t, i)
    /\ UNCHANGED <<forkVars, counters, wstate, inj, dq, comp, lifecycle, mainWaiting, mwait, posted, ran, settled>>

WakeCasState(t) ==
    /\ pc[t] = "WakeCas"
    /\ LET i == loc[t].tgt IN
       IF wstate[i] = SLEEPING
         THEN /\ wstate' = [wstate EXCEPT ![i] = AWAKE]
              /\ Go(t, "WakeNotify")
              /\ UNCHANGED loc
         ELSE /\ UNCHANGED wstate
              /\ ScanNext(t, i)
    /\ UNCHANGED <<forkVars, counters, inj, dq, comp, lifecycle, mainWaiting, mwait, posted, ran, settled>>

\* Atomics.notify(word, 1): wakes worker i if it is blocked on its word (nobody else waits on it).
WakeNotify(t) ==
    /\ pc[t] = "WakeNotify"
    /\ LET i == loc[t].tgt IN
       /\ IF loc[t].all /\ loc[t].todo \ {i} /= {}
            THEN /\ pc' = [pc EXCEPT ![t] = "WakeLoad",
                                     ![i] = IF pc[i] = "Blocked" THEN "AwakenCas" ELSE @]
                 /\ loc' = [loc EXCEPT ![t].todo = @ \ {i}]
            ELSE /\ pc' = [pc EXCEPT ![t] = loc[t].ret,
                                     ![i] = IF pc[i] = "Blocked" THEN "AwakenCas" ELSE @]
                 /\ loc' = [loc EXCEPT ![t] = Fresh]
    /\ UNCHANGED <<forkVars, counters, wstate, inj, dq, comp, lifecycle, mainWaiting, mwait, posted, ran, settled>>

\* wakeAll: move the JEC by 2 (keeps its parity, fails every pending fallAsleep), then wake each.
WakeAllBump(t) ==
    /\ pc[t] = "WakeAll"
    /\ counters' = AddWord(counters, 2 * SleepersModulus)
    /\ Go(t, "WakeLoad")
    /\ loc' = [loc EXCEPT ![t].todo = Workers, ![t].all = TRUE, ![t].ret = "MainDone"]
    /\ UNCHANGED <<forkVars, wstate, inj, dq, comp, lifecycle, mainWaiting, mwait, posted, ran, settled>>

-----------------------------------------------------------------------------
(* The main thread (lib/producer/, lib/owner/owner.ts): submit, settle     *)
(* completions, close.                                                     *)

\* After a drain, armCompletionWait unless already waiting or nothing is pending (main-local).
MainNext(p, s, mw) == IF mw = "none" /\ p - s > 0 THEN "MainArm" ELSE "MainIdle"

\* A submission (admission.ts submit) arms the completion wait first, then publishes: ledger.open (the task
\* is pending from here; no shared access: a local step), reader.arm(), then place(). The main thread's
\* loc.ret = "MainSubmit" marks an arm made for a submission: it counts that task as pending and goes on
\* to the push.
Submitting(t) == loc[t].ret = "MainSubmit"
Pending(t) == posted - settled + (IF Submitting(t) THEN 1 ELSE 0)
MainBeginSubmit(t) ==
    /\ t = Main /\ pc[t] = "MainIdle" /\ posted < Submits
    /\ Go(t, "MainArm")
    /\ loc' = [loc EXCEPT ![t].ret = "MainSubmit"]
    /\ UNCHANGED <<forkVars, counters, wstate, inj, dq, comp, lifecycle, mainWaiting, mwait, posted, ran, settled>>
\* Where an arm ends: the submission's push, or idle.
ArmExit(t) ==
    /\ pc' = [pc EXCEPT ![t] = IF Submitting(t) THEN "MainSubmit" ELSE "MainIdle"]
    /\ loc' = [loc EXCEPT ![t] = [Fresh EXCEPT !.ret = loc[t].ret]]

\* place(): push the published record's handle into the injector, then newWork.
SubmitPushInjector(t) ==
    /\ t = Main /\ pc[t] = "MainSubmit"
    /\ inj' = inj + 1
    /\ posted' = posted + 1
    /\ Go(t, "NewWork")
    /\ loc' = [loc EXCEPT ![t].ret = "MainIdle"]
    /\ UNCHANGED <<forkVars, counters, wstate, dq, comp, lifecycle, mainWaiting, mwait, ran, settled>>

\* armCompletionWait: say we wait, then look once more.
MainAnnounceWaiting(t) ==
    /\ pc[t] = "MainArm" /\ mwait = "none" /\ Pending(t) > 0
    /\ mainWaiting' = 1
    /\ Go(t, "MainRecheck")
    /\ UNCHANGED <<forkVars, counters, wstate, inj, dq, comp, lifecycle, mwait, loc, posted, ran, settled>>

\* The same program point when there is nothing to wait for (main-local test, no shared access).
MainSkipArm(t) == pc[t] = "MainArm" /\ ~(mwait = "none" /\ Pending(t) > 0)

MainRecheckCompletions(t) ==
    /\ pc[t] = "MainRecheck"
    /\ Go(t, IF comp > 0 THEN "MainRetract" ELSE "MainWait")
    /\ UNCHANGED <<forkVars, counters, wstate, inj, dq, comp, lifecycle, mainWaiting, mwait, loc, posted, ran, settled>>

MainRetractWaiting(t) ==
    /\ pc[t] = "MainRetract"
    /\ mainWaiting' = 0
    /\ mwait' = "fired"                                 \* queueMicrotask(onCompletionWake)
    /\ ArmExit(t)
    /\ UNCHANGED <<forkVars, counters, wstate, inj, dq, comp, lifecycle, posted, ran, settled>>

\* Atomics.waitAsync(word, 1): "not-equal" at once if a worker already cleared it, else a promise.
MainWaitAsync(t) ==
    /\ pc[t] = "MainWait"
    /\ mwait' = IF mainWaiting = 1 THEN "armed" ELSE "fired"
    /\ ArmExit(t)
    /\ UNCHANGED <<forkVars, counters, wstate, inj, dq, comp, lifecycle, mainWaiting, posted, ran, settled>>

\* onCompletionWake, when the wait has fired and the main thread's event loop runs it.
MainClearWaiting(t) ==
    /\ pc[t] = "MainIdle" /\ mwait = "fired"
    /\ mainWaiting' = 0
    /\ mwait' = "none"
    /\ Go(t, "MainDrain")
    /\ UNCHANGED <<forkVars, counters, wstate, inj, dq, comp, lifecycle, loc, posted, ran, settled>>

\* drainCompletions: pop until empty, settling each; then armCompletionWait.
MainPopCompletion(t) ==
    /\ pc[t] = "MainDrain"
    /\ IF comp > 0
         THEN /\ comp' = comp - 1
              /\ settled' = settled + 1
              /\ UNCHANGED pc
         ELSE /\ UNCHANGED <<forkVars, comp, settled>>
              /\ Go(t, MainNext(posted, settled, mwait))
    /\ UNCHANGED <<forkVars, counters, wstate, inj, dq, lifecycle, mainWaiting, mwait, loc, posted, ran>>

\* close(): once every submitted task has settled (drain), store stopping, then wakeAll.
StopStoreLifecycle(t) ==
    /\ pc[t] = "MainIdle" /\ posted = Submits /\ settled = Submits /\ mwait = "none"
    /\ lifecycle' = 1
    /\ Go(t, "WakeAll")
    /\ UNCHANGED <<forkVars, counters, wstate, inj, dq, comp, mainWaiting, mwait, loc, posted, ran, settled>>

-----------------------------------------------------------------------------
\* The actions, one per `// spec: Name` in the files of the code: lines above.
\* tests/repo/spec_names_test.ts reads this definition.
Step(t) ==
    \/ LoopReadLifecycle(t) \/ FindPopOwn(t) \/ FindPopInjector(t) \/ FindInjectorLeft(t)
    \/ FindStealHalf(t) \/ FindPopStolen(t) \/ Doze(t) \/ ForkPushDeque(t) \/ JoinPopOwn(t)
    \/ FinishPushCompletion(t) \/ FinishReadMainWaiting(t) \/ FinishTakeMainWaiting(t)
    \/ FinishNotifyMain(t)
    \/ GetSleepyLoad(t) \/ GetSleepyCas(t) \/ SleepyReadLifecycle(t)
    \/ FallAsleepStoreSleeping(t) \/ FallAsleepLoad(t) \/ FallAsleepStoreAwake(t) \/ FallAsleepCas(t)
    \/ SleepWait(t) \/ SleepWaitAsync(t) \/ AwakenCasState(t) \/ AwakenUncount(t)
    \/ NewWorkLoad(t) \/ NewWorkCas(t) \/ WakeLoadState(t) \/ WakeCasState(t) \/ WakeNotify(t)
    \/ WakeAllBump(t)
    \/ SubmitPushInjector(t) \/ MainAnnounceWaiting(t) \/ MainRecheckCompletions(t)
    \/ MainRetractWaiting(t) \/ MainWaitAsync(t) \/ MainClearWaiting(t) \/ MainPopCompletion(t)
    \/ StopStoreLifecycle(t)

\* The steps that touch no word of this module: a submission's start (ledger.open), armCompletionWait
\* returning early, the end of a forked task (its latch set), and the end of a join's wait.
LocalStep(t) ==
    \/ MainBeginSubmit(t)
    \/ ForkFinished(t)
    \/ JoinLatchSet(t)
    \/ /\ MainSkipArm(t)
       /\ ArmExit(t)
       /\ UNCHANGED <<forkVars, counters, wstate, inj, dq, comp, lifecycle, mainWaiting, mwait, posted, ran, settled>>

\* The end: the pool is closed, every worker has exited.
Finished == pc[Main] = "MainDone" /\ \A w \in Workers : pc[w] = "Exited"

Next ==
    \/ \E t \in Threads : Step(t) \/ LocalStep(t)
    \/ Finished /\ UNCHANGED vars

\* Every thread keeps taking steps (a blocked worker, and a main thread with nothing to do, have none).
Fairness == \A t \in Threads : WF_vars(Step(t) \/ LocalStep(t))

Spec == Init /\ [][Next]_vars /\ Fairness

-----------------------------------------------------------------------------
(* Invariants.                                                             *)

WorkerPCs == {"Top", "PopOwn", "PopInj", "InjLeft", "Steal", "PopStolen", "Idle", "Run", "RunFork", "Join",
              "JoinWait",
              "FinishRead", "FinishTake", "FinishNotify", "GetSleepyLoad", "GetSleepyCas",
              "SleepyStop", "FallStore", "FallLoad", "FallUndo", "FallCas", "Wait", "Blocked",
              "AwakenCas", "AwakenSub", "NewWork", "NewWorkCas", "WakeLoad", "WakeCas", "WakeNotify",
              "Exited"}
MainPCs == {"MainIdle", "MainSubmit", "NewWork", "NewWorkCas", "WakeLoad", "WakeCas", "WakeNotify", "MainArm",
            "MainRecheck", "MainRetract", "MainWait", "MainDrain", "WakeAll", "MainDone"}

TypeOK ==
    /\ counters \in 0..WordModulus - 1
    /\ wstate \in [Workers -> {AWAKE, SLEEPING}]
    /\ inj \in 0..Submits /\ dq \in [Workers -> 0..Forks] /\ comp \in 0..Submits
    /\ lifecycle \in {0, 1} /\ mainWaiting \in {0, 1} /\ mwait \in {"none", "armed", "fired"}
    /\ \A w \in Workers : pc[w] \in WorkerPCs
    /\ pc[Main] \in MainPCs
    /\ posted \in 0..Submits /\ ran \in 0..Submits /\ settled \in 0..Submits
    /\ forked \in 0..Forks /\ forksRun \in 0..Forks

\* A worker counted in the sleeping field: from its successful fallAsleep CAS to its uncount.
CountedPCs == {"Wait", "Blocked", "AwakenCas", "AwakenSub"}
Counted == {w \in Workers : pc[w] \in CountedPCs}
\* Tasks a worker holds, taken from a queue and not yet run (from a pop to the completion push).
Hand(w) ==
    CASE pc[w] \in {"Run", "RunFork", "InjLeft", "Join", "JoinWait"} -> 1
      [] pc[w] \in {"NewWork", "NewWorkCas", "WakeLoad", "WakeCas", "WakeNotify"}
           /\ loc[w].ret \in {"Run", "Join"} -> 1
      [] OTHER -> 0
RECURSIVE SumOver(_, _)
SumOver(f, S) == IF S = {} THEN 0 ELSE LET x == CHOOSE x \in S : TRUE IN f[x] + SumOver(f, S \ {x})
Queued == inj + SumOver(dq, Workers)
Held == SumOver([w \in Workers |-> Hand(w)], Workers)

\* Counters consistent: the sleeping field counts exactly the workers that counted themselves, so
\* sleeping <= inactive <= workers; a worker's word says SLEEPING only from fallAsleep to its wake.
CountersConsistent ==
    /\ Sleepers(counters) = Cardinality(Counted)
    /\ Cardinality(Counted) <= Cardinality(Workers)
    /\ \A w \in Workers : wstate[w] = SLEEPING => pc[w] \in {"FallLoad", "FallCas", "FallUndo"} \cup CountedPCs

\* Conservation: every submitted task and every fork is queued, in a worker's hand, or run; every run
\* submitted task is in the completion queue or settled.
Conservation ==
    /\ posted + forked = Queued + Held + ran + forksRun
    /\ ran = comp + settled

\* A thread between making work visible and the end of its newWork (or wakeAll's scan).
WakePCs == {"NewWork", "NewWorkCas", "WakeLoad", "WakeCas", "WakeNotify", "WakeAll"}
WakePending == \E t \in Threads : pc[t] \in WakePCs

\* No lost wakeup: work is never queued while every worker sleeps (blocked in Atomics.wait) and no
\* wake is under way.
NoLostWakeup ==
    (Queued > 0 /\ \A w \in Workers : pc[w] = "Blocked") => WakePending

\* The same for stopping: after close has stored stopping, no worker sleeps without a wake under way
\* (wakeAll's scan, or a poster's), or it would never see the lifecycle word and exit.
NoLostStopWake ==
    \A w \in Workers : (lifecycle = 1 /\ pc[w] = "Blocked") => WakePending

\* The same for the main thread: it never waits (waitAsync pending) on a non-empty completion queue
\* unless a worker that pushed is still on its way to the notify.
NoLostMainWake ==
    (mwait = "armed" /\ comp > 0) => \E w \in Workers : pc[w] \in {"FinishRead", "FinishTake", "FinishNotify"}

\* A blocked worker's word says SLEEPING, unless a poster that stored AWAKE is about to notify it.
BlockedMeansSleeping ==
    \A w \in Workers : pc[w] = "Blocked" =>
        wstate[w] = SLEEPING \/ \E t \in Threads : pc[t] = "WakeNotify" /\ loc[t].tgt = w

-----------------------------------------------------------------------------
(* Liveness, under weak fairness of every thread.                          *)

EveryTaskRun == \A k \in 1..Submits : (posted >= k) ~> (ran >= k)
EveryForkRun == \A k \in 1..Forks : (forked >= k) ~> (forksRun >= k)
EveryTaskSettled == \A k \in 1..Submits : (posted >= k) ~> (settled >= k)
WorkersExit == (lifecycle = 1) ~> (\A w \in Workers : pc[w] = "Exited")
PoolCloses == <>Finished

\* Symmetry of the workers, for the safety configurations only.
WorkerSymmetry == Permutations(Workers)
=============================================================================
