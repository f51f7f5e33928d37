------------------------------- MODULE Order -------------------------------
(***************************************************************************)
(* The start order of tasks submitted from outside the workers (issue 30): *)
(* the main thread queues tasks 1..N in order into the injector; a worker  *)
(* takes the injector's oldest task in one step (findWork's FindPopInjector, *)
(* lib/worker/search.ts) and starts it in a later one (runner.ts execute's *)
(* claim, QUEUED to RUNNING). Between the two, another worker can take a   *)
(* newer task and start it first: that window is the whole of what this    *)
(* module measures.                                                        *)
(*                                                                          *)
(* Abstraction, as SleepWake.tla's: the injector is linearizable          *)
(* (Injector.tla), so it is a sequence with an atomic pop of its head; a   *)
(* deque is a sequence whose owner pops its newest end (its bottom) and    *)
(* whose thieves take the oldest (its top). findWork's order is kept: own  *)
(* deque, then the injector, then a steal. In the code a worker's deque    *)
(* holds only its forks (not tasks from outside), so here the deques stay  *)
(* empty: they are there for the mutants, which move batches into them, as *)
(* the code did before issue 30. Sleep is left out (SleepWake.tla shows no *)
(* wakeup is lost: a queued task always has a worker awake to take it); a  *)
(* worker that finds nothing spins (Idle).                                 *)
(*                                                                          *)
(* What is promised (checked by TLC on every behaviour):                   *)
(* - StartsInOrder: when a task starts, no task submitted before it is     *)
(*   still waiting in a queue (the injector or any deque).                 *)
(* - OvertakesOnlyWhileHeld: the tasks newer than t that start before t    *)
(*   number at most the takes other workers made while t was in its        *)
(*   taker's hand (taken, not started). So with one worker, starts are     *)
(*   strictly FIFO (StrictFifo, Order1.cfg).                               *)
(* - OvertakesBelowWorkers: if no other worker took more than one task     *)
(*   while t was in hand (t's taker was not delayed, between its pop and   *)
(*   its start, longer than another worker's whole take-start-run cycle),  *)
(*   at most Workers - 1 newer tasks start before t.                        *)
(* - EveryTaskStarts, under weak fairness of each thread.                  *)
(* What is NOT promised: a bound on overtakes without that condition. A    *)
(* worker preempted between its pop and its start (by the OS, or a long    *)
(* newWork) can be overtaken by any number of newer tasks that other       *)
(* workers take, start and finish meanwhile; the model allows exactly that. *)
(* Nor anything about completion order, or about tasks put back into a     *)
(* queue (not modelled): a task handed back to the injector's tail because *)
(* its transferred buffer has not arrived (marks.ts handBack), or a taken  *)
(* task whose run was cut short and goes into the worker's own deque       *)
(* (marks.ts repairHeld, putBack).                                         *)
(***************************************************************************)
EXTENDS Integers, Sequences, FiniteSets, TLC

CONSTANTS
    Workers,  \* the worker threads (model values)
    N         \* tasks the main thread submits: 1..N, in this order

ASSUME N \in Nat \ {0} /\ Workers /= {}

Tasks == 1..N
NONE == 0

VARIABLES
    submitted,  \* tasks submitted so far: 1..submitted
    inj,        \* the injector: tasks, oldest first
    dq,         \* [Workers -> Seq(Tasks)]: each worker's deque, top (oldest) first, bottom (newest) last
    hand,       \* [Workers -> 0..N]: the task a worker has taken and not started yet (NONE: none)
    started,    \* the tasks in the order they started
    during      \* history: [Tasks -> [Workers -> Nat]]: takes by each worker while t was in another's hand

vars == <<submitted, inj, dq, hand, started, during>>

Range(s) == {s[i] : i \in DOMAIN s}
Started(t) == t \in Range(started)
\* Where t is in `started` (only for a started t).
Pos(t) == CHOOSE i \in DOMAIN started : started[i] = t
\* Tasks waiting in a queue: the injector, or any worker's deque.
Waiting == Range(inj) \cup UNION {Range(dq[w]) : w \in Workers}

Init ==
    /\ submitted = 0
    /\ inj = << >>
    /\ dq = [w \in Workers |-> << >>]
    /\ hand = [w \in Workers |-> NONE]
    /\ started = << >>
    /\ during = [t \in Tasks |-> [w \in Workers |-> 0]]

\* Worker w takes task t into its hand; every task in another worker's hand counts the take.
Take(w, t) ==
    /\ hand' = [hand EXCEPT ![w] = t]
    /\ during' = [u \in Tasks |->
                    IF \E v \in Workers \ {w} : hand[v] = u THEN [during[u] EXCEPT ![w] = @ + 1] ELSE during[u]]

\* The main thread: submit the next task (place(): the injector push).
Submit ==
    /\ submitted < N
    /\ submitted' = submitted + 1
    /\ inj' = Append(inj, submitted + 1)
    /\ UNCHANGED <<dq, hand, started, during>>

\* findWork, 1: its own deque, newest first (the bottom).
TakeOwn(w) ==
    /\ hand[w] = NONE /\ dq[w] /= << >>
    /\ dq' = [dq EXCEPT ![w] = SubSeq(@, 1, Len(@) - 1)]
    /\ Take(w, dq[w][Len(dq[w])])
    /\ UNCHANGED <<submitted, inj, started>>

\* findWork, 2: the injector's oldest task, one at a time (FindPopInjector).
TakeInjector(w) ==
    /\ hand[w] = NONE /\ dq[w] = << >> /\ inj /= << >>
    /\ inj' = Tail(inj)
    /\ Take(w, Head(inj))
    /\ UNCHANGED <<submitted, dq, started>>

\* findWork, 3: steal from another worker's deque, oldest first (the top). (The code steals half into its
\* own deque and pops one of those: the order is the same for what it runs first.)
Steal(w) ==
    /\ hand[w] = NONE /\ dq[w] = << >> /\ inj = << >>
    /\ \E v \in Workers \ {w} :
         /\ dq[v] /= << >>
         /\ dq' = [dq EXCEPT ![v] = Tail(@)]
         /\ Take(w, Head(dq[v]))
    /\ UNCHANGED <<submitted, inj, started>>

\* execute: the task in hand starts (its claim); the task runs and finishes with no further effect here.
Start(w) ==
    /\ hand[w] /= NONE
    /\ started' = Append(started, hand[w])
    /\ hand' = [hand EXCEPT ![w] = NONE]
    /\ UNCHANGED <<submitted, inj, dq, during>>

\* findWork found nothing: spin (a step that changes nothing), and search again.
Idle(w) ==
    /\ hand[w] = NONE /\ ~ENABLED (TakeOwn(w) \/ TakeInjector(w) \/ Steal(w))
    /\ UNCHANGED vars

Work(w) == TakeOwn(w) \/ TakeInjector(w) \/ Steal(w) \/ Start(w) \/ Idle(w)

Next == Submit \/ \E w \in Workers : Work(w)

Fairness == WF_vars(Submit) /\ \A w \in Workers : WF_vars(Work(w))

Spec == Init /\ [][Next]_vars /\ Fairness

-----------------------------------------------------------------------------
(* Properties.                                                             *)

TypeOK ==
    /\ submitted \in 0..N
    /\ inj \in Seq(Tasks) /\ dq \in [Workers -> Seq(Tasks)]
    /\ hand \in [Workers -> 0..N]
    /\ started \in Seq(Tasks)
    /\ during \in [Tasks -> [Workers -> Nat]]

\* Every submitted task is in exactly one place: a queue, a hand, or started; no other task is anywhere.
Places(t) ==
    Cardinality({i \in DOMAIN inj : inj[i] = t})
    + Cardinality({<<w, i>> \in Workers \X (1..N) : i \in DOMAIN dq[w] /\ dq[w][i] = t})
    + Cardinality({w \in Workers : hand[w] = t})
    + Cardinality({i \in DOMAIN started : started[i] = t})
Conservation == \A t \in Tasks : Places(t) = IF t <= submitted THEN 1 ELSE 0

\* No task waiting in a queue is older than a started one. Nothing goes back into a queue here, so this
\* says: when a task started, every task submitted before it had been taken already.
StartsInOrder == \A t \in Waiting : \A u \in Range(started) : t > u

\* The tasks newer than t that started before it (or have started while t has not).
Overtakes(t) == Cardinality({u \in Tasks : u > t /\ Started(u) /\ (~Started(t) \/ Pos(u) < Pos(t))})
RECURSIVE SumOver(_, _)
SumOver(f, S) == IF S = {} THEN 0 ELSE LET x == CHOOSE x \in S : TRUE IN f[x] + SumOver(f, S \ {x})

\* A newer task overtakes t only by a take made while t was in its taker's hand.
OvertakesOnlyWhileHeld == \A t \in Tasks : Overtakes(t) <= SumOver(during[t], Workers)

\* Hence: while no other worker takes twice during t's take-to-start window, at most Workers - 1 overtake.
OvertakesBelowWorkers ==
    \A t \in Tasks : (\A w \in Workers : during[t][w] <= 1) => Overtakes(t) <= Cardinality(Workers) - 1

\* One worker: the starts are exactly the submission order (Order1.cfg).
StrictFifo == \A i \in DOMAIN started : started[i] = i

\* Liveness: every task starts.
EveryTaskStarts == \A t \in Tasks : <>Started(t)

WorkerSymmetry == Permutations(Workers)
=============================================================================
