------------------------------- MODULE Levels -------------------------------
(***************************************************************************)
(* The priority levels of the tasks from outside the workers              *)
(* (lib/protocol/levels.ts, with the submission of lib/producer/           *)
(* submission.ts and the worker's take of lib/worker/search.ts): one FIFO  *)
(* queue a level (0 high, 1 normal, 2 low), a producer that announces a    *)
(* level other than normal before its first push there, and workers that   *)
(* take by the rule of `Levels.take`: the lowest level whose streak        *)
(* reached Quota first (its streak restarts, or is cleared if that queue   *)
(* is empty), else the highest level with tasks; after a take, each lower  *)
(* level with tasks waited once more (its streak grows).                   *)
(*                                                                          *)
(* Each action is one shared access of the code (a queue's pop, push or    *)
(* length read, the levels word's read or or), named after its `// spec:`  *)
(* comment; the queues are linearizable (Injector.tla checks the queue),   *)
(* so each operation is one atomic step on a sequence. A worker's streaks  *)
(* and its `used` flag are its own (no shared access).                     *)
(*                                                                          *)
(* code: lib/protocol/levels.ts                                             *)
(* code: lib/producer/submission.ts                                         *)
(* code: lib/worker/runner.ts                                               *)
(*                                                                          *)
(* What is checked:                                                         *)
(* - TakenInOrder: within a level, tasks are taken in submission order.    *)
(* - NoInversion: a take that is not a starving level's turn never passes  *)
(*   over a task of a higher level that was queued when the take began and *)
(*   still is.                                                              *)
(* - BoundedOvertake: while a task is the head of its level's queue, at    *)
(*   most Workers x (Quota + 1) tasks of higher levels are taken (Quota    *)
(*   each worker, and one more for a take already under way when the task  *)
(*   became the head). `passed` counts them.                                *)
(* - AllStart (liveness, weak fairness): every submitted task starts.      *)
(***************************************************************************)
EXTENDS Naturals, Sequences, FiniteSets

CONSTANTS
    Producer,       \* the submitting thread
    Workers,        \* the worker threads
    Scenario,       \* which submissions (below): "starve", "mixed", "order" or "small"
    Quota           \* LEVEL_QUOTA

\* The level of each task, in submission order: task i has level Submissions[i].
\* - "starve": a low task, then more high tasks than the bound lets pass it (with two workers and a quota
\*   of 1: 4);
\* - "mixed": every level, interleaved (the order checks);
\* - "order": two normal tasks, then a high and a low one (the order within a level);
\* - "small": one of each level (liveness).
Submissions ==
    CASE Scenario = "starve" -> <<2, 0, 0, 0, 0, 0>>
      [] Scenario = "mixed" -> <<2, 1, 0, 2, 0>>
      [] Scenario = "order" -> <<1, 1, 0, 2>>
      [] Scenario = "small" -> <<2, 0, 1>>

N == Len(Submissions)
Tasks == 1..N
Levels == 0..2
Normal == 1

ASSUME Quota \in Nat \ {0}
ASSUME \A i \in Tasks : Submissions[i] \in Levels

VARIABLES
    next,       \* the producer: the next task to submit
    ppc,        \* the producer's step: "Announce" or "Push"
    pannounced, \* the levels the producer announced (its own record of the word's bits)
    announced,  \* the levels word (ControlWords.levels): the levels announced
    q,          \* the queues, by level: sequences of tasks
    pc,         \* each worker's step
    used,       \* each worker: it saw a level announced (then it serves all three)
    streak,     \* each worker's streaks, by level
    lvl,        \* each worker's level under consideration in its take
    got,        \* each worker's task taken and not yet started, or 0
    gotLevel,   \* the level it was taken from
    seen,       \* each worker: the tasks queued when its take began (ghost, for NoInversion)
    starving,   \* each worker: its pop under way is a starving level's turn (ghost)
    out,        \* the tasks taken from each level, in order (ghost, for TakenInOrder)
    passed,     \* by level: higher-level takes since its head became the head (ghost)
    started     \* the tasks started, in order

vars == <<next, ppc, pannounced, announced, q, pc, used, streak, lvl, got, gotLevel, seen, starving, out,
          passed, started>>

Queued == UNION {{q[l][i] : i \in 1..Len(q[l])} : l \in Levels}

Init ==
    /\ next = 1
    /\ ppc = "Announce"
    /\ pannounced = {}
    /\ announced = {}
    /\ q = [l \in Levels |-> <<>>]
    /\ pc = [w \in Workers |-> "Top"]
    /\ used = [w \in Workers |-> FALSE]
    /\ streak = [w \in Workers |-> [l \in Levels |-> 0]]
    /\ lvl = [w \in Workers |-> 0]
    /\ got = [w \in Workers |-> 0]
    /\ gotLevel = [w \in Workers |-> Normal]
    /\ seen = [w \in Workers |-> {}]
    /\ starving = [w \in Workers |-> FALSE]
    /\ out = [l \in Levels |-> <<>>]
    /\ passed = [l \in Levels |-> 0]
    /\ started = <<>>

----------------------------------------------------------------------------
(* The producer: Levels.pushPatiently.                                      *)

\* A level other than normal, not yet announced by this producer: or its bit into the word first.
SubmitAnnounceLevel(p) ==
    /\ p = Producer /\ ppc = "Announce" /\ next <= N
    /\ LET l == Submissions[next] IN
         IF l # Normal /\ l \notin pannounced
           THEN /\ announced' = announced \cup {l}
                /\ pannounced' = pannounced \cup {l}
           ELSE UNCHANGED <<announced, pannounced>>
    /\ ppc' = "Push"
    /\ UNCHANGED <<next, q, pc, used, streak, lvl, got, gotLevel, seen, starving, out, passed, started>>

SubmitPushInjector(p) ==
    /\ p = Producer /\ ppc = "Push"
    /\ LET l == Submissions[next] IN q' = [q EXCEPT ![l] = Append(@, next)]
    /\ next' = next + 1
    /\ ppc' = "Announce"
    /\ UNCHANGED <<pannounced, announced, pc, used, streak, lvl, got, gotLevel, seen, starving, out, passed,
                   started>>

----------------------------------------------------------------------------
(* A worker: Levels.take, then the start.                                   *)

\* The pop of the head of level l's queue by worker w (the queue's one atomic step), as a successful take:
\* the ghosts follow (out, passed), its streak restarts.
TakeFrom(w, l) ==
    /\ got' = [got EXCEPT ![w] = Head(q[l])]
    /\ gotLevel' = [gotLevel EXCEPT ![w] = l]
    /\ out' = [out EXCEPT ![l] = Append(@, Head(q[l]))]
    /\ q' = [q EXCEPT ![l] = Tail(@)]
    /\ passed' = [m \in Levels |-> IF m = l THEN 0 ELSE IF m > l /\ q[m] # <<>> THEN passed[m] + 1 ELSE passed[m]]
    /\ streak' = [streak EXCEPT ![w][l] = 0]

\* The take begins: the levels word is read unless a level was seen announced before (FindReadLevels).
FindReadLevels(w) ==
    /\ w \in Workers /\ pc[w] = "Top"
    /\ seen' = [seen EXCEPT ![w] = Queued]
    /\ IF used[w]
         THEN /\ pc' = [pc EXCEPT ![w] = "Starving"] /\ lvl' = [lvl EXCEPT ![w] = 2]
              /\ UNCHANGED used
         ELSE IF announced = {}
                THEN /\ pc' = [pc EXCEPT ![w] = "PopNormalOnly"] /\ UNCHANGED <<used, lvl>>
                ELSE /\ used' = [used EXCEPT ![w] = TRUE]
                     /\ pc' = [pc EXCEPT ![w] = "Starving"] /\ lvl' = [lvl EXCEPT ![w] = 2]
    /\ UNCHANGED <<next, ppc, pannounced, announced, q, streak, got, gotLevel, starving, out, passed, started>>

\* No level but normal announced: the normal queue alone.
FindPopNormalOnly(w) ==
    /\ w \in Workers /\ pc[w] = "PopNormalOnly"
    /\ starving' = [starving EXCEPT ![w] = FALSE]
    /\ IF q[Normal] # <<>>
         THEN /\ TakeFrom(w, Normal)
              /\ pc' = [pc EXCEPT ![w] = "Start"]
         ELSE /\ pc' = [pc EXCEPT ![w] = "Top"]
              /\ UNCHANGED <<got, gotLevel, out, q, passed, streak>>
    /\ UNCHANGED <<next, ppc, pannounced, announced, used, lvl, seen, started>>

\* The starving levels at or above lvl (from low up to normal) for worker w: their streak reached the quota.
StarvingAt(w, top) == {l \in 1..top : streak[w][l] >= Quota}

\* The lowest level (at most lvl) whose streak reached the quota: its pop first (FindPopLevel). The streak
\* checks on the way are the worker's own (no shared access), so they are part of the step.
FindStarving(w) ==
    /\ w \in Workers /\ pc[w] = "Starving"
    /\ IF StarvingAt(w, lvl[w]) = {}
         THEN /\ pc' = [pc EXCEPT ![w] = "Pop"] /\ lvl' = [lvl EXCEPT ![w] = 0]
              /\ UNCHANGED <<got, gotLevel, out, q, passed, streak, starving>>
         ELSE LET l == CHOOSE m \in StarvingAt(w, lvl[w]) : \A k \in StarvingAt(w, lvl[w]) : m >= k IN
              IF q[l] # <<>>
                THEN /\ TakeFrom(w, l)
                     /\ starving' = [starving EXCEPT ![w] = TRUE]
                     /\ pc' = [pc EXCEPT ![w] = "Count"] /\ lvl' = [lvl EXCEPT ![w] = l + 1]
                ELSE /\ streak' = [streak EXCEPT ![w][l] = 0]   \* it no longer waits
                     /\ IF l = 1 THEN /\ pc' = [pc EXCEPT ![w] = "Pop"] /\ lvl' = [lvl EXCEPT ![w] = 0]
                                 ELSE /\ lvl' = [lvl EXCEPT ![w] = l - 1] /\ UNCHANGED pc
                     /\ UNCHANGED <<got, gotLevel, out, q, passed, starving>>
    /\ UNCHANGED <<next, ppc, pannounced, announced, used, seen, started>>

\* The highest level with tasks (lvl from high down): FindPopLevel.
FindPopLevel(w) ==
    /\ w \in Workers /\ pc[w] = "Pop"
    /\ LET l == lvl[w] IN
         IF q[l] # <<>>
           THEN /\ TakeFrom(w, l)
                /\ starving' = [starving EXCEPT ![w] = FALSE]
                /\ pc' = [pc EXCEPT ![w] = "Count"] /\ lvl' = [lvl EXCEPT ![w] = l + 1]
           ELSE /\ IF l = 2 THEN /\ pc' = [pc EXCEPT ![w] = "Top"] /\ UNCHANGED lvl   \* QUEUE_EMPTY
                           ELSE /\ lvl' = [lvl EXCEPT ![w] = l + 1] /\ UNCHANGED pc
                /\ UNCHANGED <<got, gotLevel, out, q, passed, streak, starving>>
    /\ UNCHANGED <<next, ppc, pannounced, announced, used, seen, started>>

\* After a take from gotLevel: each lower level with tasks (a length read each) waited once more.
TookCountLower(w) ==
    /\ w \in Workers /\ pc[w] = "Count"
    /\ LET l == lvl[w] IN
         IF l > 2
           THEN /\ pc' = [pc EXCEPT ![w] = "Start"] /\ UNCHANGED <<lvl, streak>>
           ELSE /\ IF q[l] # <<>> THEN streak' = [streak EXCEPT ![w][l] = @ + 1] ELSE UNCHANGED streak
                /\ lvl' = [lvl EXCEPT ![w] = l + 1]
                /\ UNCHANGED pc
    /\ UNCHANGED <<next, ppc, pannounced, announced, q, used, got, gotLevel, seen, starving, out, passed, started>>

\* The task starts (the claim, QUEUED to RUNNING).
ExecCasRunning(w) ==
    /\ w \in Workers /\ pc[w] = "Start"
    /\ started' = Append(started, got[w])
    /\ got' = [got EXCEPT ![w] = 0]
    /\ pc' = [pc EXCEPT ![w] = "Top"]
    /\ UNCHANGED <<next, ppc, pannounced, announced, q, used, streak, lvl, gotLevel, seen, starving, out, passed>>

\* A thread's step: the producer's, or a worker's.
Step(t) ==
    \/ SubmitAnnounceLevel(t) \/ SubmitPushInjector(t)
    \/ FindReadLevels(t) \/ FindPopNormalOnly(t) \/ FindStarving(t) \/ FindPopLevel(t) \/ TookCountLower(t)
    \/ ExecCasRunning(t)

\* Everything submitted and started: nothing more to do (stutter, so that TLC sees no deadlock).
Done == next > N /\ Len(started) = N /\ UNCHANGED vars

Next == (\E t \in {Producer} \cup Workers : Step(t)) \/ Done

Spec == Init /\ [][Next]_vars /\ \A t \in {Producer} \cup Workers : WF_vars(Step(t))

----------------------------------------------------------------------------
(* Properties.                                                              *)

TypeOK ==
    /\ next \in 1..(N + 1)
    /\ ppc \in {"Announce", "Push"}
    /\ announced \subseteq Levels /\ pannounced \subseteq Levels
    /\ \A l \in Levels : q[l] \in Seq(Tasks)
    /\ \A w \in Workers : pc[w] \in {"Top", "PopNormalOnly", "Starving", "Pop", "Count", "Start"}
    /\ \A w \in Workers : got[w] \in 0..N
    /\ started \in Seq(Tasks)

\* The tasks of level l, in submission order.
OfLevel(l) == SelectSeq([i \in Tasks |-> i], LAMBDA i : Submissions[i] = l)

\* Within a level, the tasks taken are the level's first ones, in submission order.
TakenInOrder == \A l \in Levels : out[l] = SubSeq(OfLevel(l), 1, Len(out[l]))

\* A take that is not a starving level's turn passes over no task of a higher level that was queued when the
\* take began and still is (checked from the pop to the start).
NoInversion ==
    \A w \in Workers :
        (pc[w] \in {"Count", "Start"} /\ ~starving[w]) =>
            \A t \in seen[w] \cap Queued : Submissions[t] >= gotLevel[w]

BoundedOvertake == \A l \in Levels : passed[l] <= Cardinality(Workers) * (Quota + 1)

\* Every submitted task starts.
AllStart == <>(Len(started) = N)

\* No task starts twice (each is taken once).
StartsOnce == \A i, j \in 1..Len(started) : i # j => started[i] # started[j]
=============================================================================
