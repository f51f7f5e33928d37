----------------------------- MODULE ChaseLev -----------------------------
(***************************************************************************)
(* The fixed-capacity Chase-Lev deque of lib/protocol/deque.ts: push and pop by the *)
(* owner, steal and steal-half by thieves, one action per shared-memory    *)
(* access, each named after the `// spec: Name` comment on that access.    *)
(* JavaScript's Atomics are sequentially consistent, so an interleaving of *)
(* these actions is exactly what the code can do.                          *)
(*                                                                          *)
(* code: lib/protocol/deque.ts                                              *)
(*                                                                          *)
(* Threads. Every thread owns one deque (indexed by the thread). Owner     *)
(* pushes tasks 1..Pushes into its deque and pops it; each thief pops its  *)
(* own deque, steals single tasks from any other deque, and steals half of *)
(* Owner's deque into its own deque (stealHalfInto's dst is the caller's   *)
(* own deque). Thieves do not steal half from each other: a task could     *)
(* then bounce between thieves for ever, so a deque's indices would have   *)
(* no bound and no finite modulus would be sound (see spec/docs/ChaseLev.md). *)
(*                                                                          *)
(* Indices. The code's int32 words wrap at 2^32; here the words wrap at    *)
(* Modulus. The state holds each index unwrapped (a plain integer), and    *)
(* the algorithm only ever sees it through Wrap: every comparison is the   *)
(* code's wrapping difference Diff, every compare-exchange compares Wrap.  *)
(* The unwrapped value is the history the checks need (which push an index *)
(* belongs to); under CountersWideEnough it is a function of the wrapped   *)
(* word, so it adds no states.                                             *)
(***************************************************************************)
EXTENDS Integers, Sequences, FiniteSets, TLC

CONSTANTS
    Owner,             \* the thread that pushes (a model value)
    Thieves,           \* the other threads (model values)
    Capacity,          \* slots per deque, a power of two
    Pushes,            \* tasks pushed in a behaviour: ids 1..Pushes (0 = a slot never written)
    Modulus,           \* the index words wrap at this modulus (2^32 in the code)
    InitIndex,         \* the initial top = bottom of every deque (unwrapped)
    StealFromThieves,  \* may a thread steal single tasks from a thief's deque (TRUE) or only from Owner's?
    HalfSteals         \* do thieves steal half (TRUE), or only single tasks?

ASSUME CapacityOk == Capacity \in {2, 4, 8} /\ Pushes \in Nat /\ InitIndex \in Nat \ {0}
ASSUME ModulusOk == Modulus \in Nat \ {0} /\ Modulus % Capacity = 0
\* Every difference the code computes is, unwrapped, in -1..Pushes+Capacity (spec/docs/ChaseLev.md: "Why the real
\* modulus is sound"), so the signed wrapping difference is exact, and no compare-exchange can match a top that
\* moved by a whole Modulus (top moves at most Pushes times per deque).
ASSUME CountersWideEnough == Modulus >= 2 * (Pushes + Capacity) + 2

Threads == {Owner} \cup Thieves

\* The word the code sees, and the code's `(x - y) | 0` on two words: the signed wrapping difference.
Wrap(x) == x % Modulus
Diff(x, y) == LET d == (Wrap(x) - Wrap(y)) % Modulus IN IF d >= Modulus \div 2 THEN d - Modulus ELSE d
\* The code's `x & mask` on the word: the slot of index x.
Slot(x) == Wrap(x) % Capacity
Min(x, y) == IF x < y THEN x ELSE y

VARIABLES
    top,      \* [Threads -> Nat]: each deque's top index (unwrapped; the word is Wrap(top))
    bottom,   \* [Threads -> Nat]: each deque's bottom index (unwrapped)
    slot,     \* [Threads -> [0..Capacity-1 -> 0..Pushes]]: each deque's ring
    loc,      \* [Threads -> record]: each thread's program counter and locals (see Idle)
    pushed,   \* tasks published by push; the next push is task pushed + 1
    taken,    \* history: [0..Pushes -> Nat], times each value was taken by a pop or steal
    ret,      \* [Threads -> [op, val]]: what each thread's last operation returned (see Done)
    obs,      \* history: [Threads -> record]: what the current operation's interval has seen (Observe)
    returned  \* history: the tasks some pop or steal has returned

shared == <<top, bottom, slot, pushed, taken>>
vars == <<top, bottom, slot, loc, pushed, taken, ret, obs, returned>>
\* What TLC tells states apart by: everything but ret. No action and no invariant reads ret; only the
\* properties of steps read it, and only ret'[i] of the thread whose operation returns in that step,
\* which that step sets. So two states that differ only in ret have the same futures, and TLC need
\* not explore both (every transition is still checked against every property of steps).
View == <<top, bottom, slot, loc, pushed, taken, obs, returned>>

\* What the code returns, besides a task (a value 0..Pushes): the constants of lib/protocol/deque.ts.
EMPTY == -1
RETRY == -2

\* A thread between operations: pc names the next action; locals are reset so equal states are equal.
\* vic = the deque the operation works on; t, b = indices read; v = a slot value read;
\* db = the dst bottom read by steal-half; want = the batch size; got = tasks claimed so far.
\* won = pop's compare-exchange on the last task succeeded (the code's `won`).
Idle(i) == [pc |-> "Idle", vic |-> i, t |-> 0, b |-> 0, v |-> 0, db |-> 0, want |-> 0, got |-> 0, won |-> FALSE]

\* Nothing observed: a thread between operations.
NoObs == [none |-> FALSE, top0 |-> 0, claims |-> {}]

Init ==
    /\ top = [d \in Threads |-> InitIndex]
    /\ bottom = [d \in Threads |-> InitIndex]
    /\ slot = [d \in Threads |-> [s \in 0..Capacity - 1 |-> 0]]
    /\ loc = [i \in Threads |-> Idle(i)]
    /\ pushed = 0
    /\ taken = [k \in 0..Pushes |-> 0]
    /\ ret = [i \in Threads |-> [op |-> "none", val |-> 0]]
    /\ obs = [i \in Threads |-> NoObs]
    /\ returned = {}

\* The operation a program counter belongs to.
OpOf(pc) ==
    CASE pc \in {"PushReadTop", "PushWriteSlot", "PushPublishBottom"} -> "push"
      [] pc \in {"PopReserveBottom", "PopReadTop", "PopRestoreEmpty", "PopReadSlot", "PopCasTop",
                 "PopRestoreBottom"} -> "pop"
      [] pc \in {"StealReadBottom", "StealReadSlot", "StealCasTop"} -> "steal"
      [] pc \in {"HalfReadBottom", "HalfReadDstBottom", "HalfReadDstTop", "HalfReadSlot", "HalfCasTop",
                 "HalfWriteDst", "HalfRecheckBottom", "HalfPublishDst"} -> "half"
      [] OTHER -> "none"

\* Thread i's operation ends in this step and returns r: the code's `return r`. push returns TRUE or
\* FALSE; pop and steal a task, EMPTY or RETRY; stealHalfInto a count, EMPTY or RETRY.
Done(i, r) ==
    /\ loc' = [loc EXCEPT ![i] = Idle(i)]
    /\ ret' = [ret EXCEPT ![i] = [op |-> OpOf(loc[i].pc), val |-> r]]

-----------------------------------------------------------------------------
(* What an operation returns, and what its interval has seen (history:     *)
(* read by the properties of steps only, never by an action).              *)

\* Between PopReserveBottom and its linearization, a pop has hidden index b from thieves that read
\* bottom now, but b is still in the deque: a thief that read bottom earlier may yet win it.
\* The pop linearizes at PopReadTop (empty), PopReadSlot (more than one task) or PopCasTop (the last).
ReservedPCs == {"PopReadTop", "PopReadSlot", "PopCasTop"}
\* Deque d's size as the atomic deque sees it, in a state with the given top, bottom and loc.
SizeIn(tp, bt, lc, d) ==
    LET eb == IF lc[d].pc \in ReservedPCs THEN bt[d] + 1 ELSE bt[d] IN IF eb > tp[d] THEN eb - tp[d] ELSE 0

\* Thread i's operation op (on deque d) has nothing to take, in that state: what makes an EMPTY right.
\* pop: its own deque is empty (a thief may have just taken the last task). steal: d has no task a
\* new steal could take: it is empty, or its only task is the one a pending pop has reserved (a
\* thief that read bottom earlier may still win it; which one wins is decided later, so an EMPTY
\* here is linearizable, with the winner ordered first). steal-half: that, or its own deque is full.
NoneIn(op, i, d, tp, bt, lc) ==
    LET steal == \/ SizeIn(tp, bt, lc, d) = 0
                 \/ SizeIn(tp, bt, lc, d) = 1 /\ lc[d].pc \in ReservedPCs
    IN CASE op = "pop" -> SizeIn(tp, bt, lc, i) = 0
         [] op = "steal" -> steal
         [] op = "half" -> steal \/ SizeIn(tp, bt, lc, i) = Capacity
         [] OTHER -> FALSE

\* Thread i's operation ends in this step.
Returns(i) == loc[i].pc /= "Idle" /\ loc'[i].pc = "Idle"

\* The tasks thread i takes in this step (the history taken grows only by the stepping thread).
StepClaims == {k \in 0..Pushes : taken'[k] > taken[k]}

\* Every step updates every operation's record of its interval, from its invocation (the state before
\* its first action) to the current state: none = the deque had nothing to take at some state of it;
\* top0 = the victim's top at the invocation (steal, steal-half); claims = the tasks it has taken.
Observe(i) ==
    obs' = [j \in Threads |->
              IF loc'[j].pc = "Idle" THEN NoObs
              ELSE LET op == OpOf(loc'[j].pc)
                       d == loc'[j].vic
                       now == NoneIn(op, j, d, top', bottom', loc')
                       mine == IF j = i THEN StepClaims ELSE {}
                   IN IF loc[j].pc = "Idle"
                        THEN [none |-> NoneIn(op, j, d, top, bottom, loc) \/ now,
                              top0 |-> IF op \in {"steal", "half"} THEN top[d] ELSE 0,
                              claims |-> mine]
                        ELSE [obs[j] EXCEPT !.none = @ \/ now, !.claims = @ \cup mine]]

\* The bookkeeping every action of thread i ends with: ret changes only when its operation returns
\* (Done); every operation's record of its interval is updated (Observe); a returned task is recorded.
Book(i) ==
    /\ IF Returns(i) THEN TRUE ELSE UNCHANGED ret
    /\ Observe(i)
    /\ returned' = IF Returns(i) /\ ret'[i].op \in {"pop", "steal"} /\ ret'[i].val \notin {EMPTY, RETRY}
                     THEN returned \cup {ret'[i].val} ELSE returned

-----------------------------------------------------------------------------
(* push: owner only.                                                       *)

\* Who pushes, and what: Owner, tasks 1..Pushes in order. (Definitions, not inline, so that the trace
\* validation of ChaseLevTrace.tla can override them: in a real pool every thread pushes record ids.)
CanPush(i) == i = Owner
PushValue(i) == pushed + 1

PushReadBottom(i) ==
    /\ CanPush(i) /\ loc[i].pc = "Idle" /\ pushed < Pushes
    /\ loc' = [loc EXCEPT ![i].pc = "PushReadTop", ![i].b = bottom[i]]
    /\ UNCHANGED shared
    /\ Book(i)

PushReadTop(i) ==
    /\ loc[i].pc = "PushReadTop"
    /\ IF Diff(loc[i].b, top[i]) >= Capacity
         THEN Done(i, FALSE)                            \* full: push returns false
         ELSE loc' = [loc EXCEPT ![i].pc = "PushWriteSlot"]
    /\ UNCHANGED shared
    /\ Book(i)

PushWriteSlot(i) ==
    /\ loc[i].pc = "PushWriteSlot"
    /\ slot' = [slot EXCEPT ![i][Slot(loc[i].b)] = PushValue(i)]
    /\ loc' = [loc EXCEPT ![i].pc = "PushPublishBottom"]
    /\ UNCHANGED <<top, bottom, pushed, taken>>
    /\ Book(i)

PushPublishBottom(i) ==
    /\ loc[i].pc = "PushPublishBottom"
    /\ bottom' = [bottom EXCEPT ![i] = loc[i].b + 1]
    /\ pushed' = pushed + 1
    /\ Done(i, TRUE)
    /\ UNCHANGED <<top, slot, taken>>
    /\ Book(i)

-----------------------------------------------------------------------------
(* pop: any thread, on its own deque.                                      *)

PopReadBottom(i) ==
    /\ loc[i].pc = "Idle"
    /\ loc' = [loc EXCEPT ![i].pc = "PopReserveBottom", ![i].b = bottom[i] - 1]
    /\ UNCHANGED shared
    /\ Book(i)

PopReserveBottom(i) ==
    /\ loc[i].pc = "PopReserveBottom"
    /\ bottom' = [bottom EXCEPT ![i] = loc[i].b]
    /\ loc' = [loc EXCEPT ![i].pc = "PopReadTop"]
    /\ UNCHANGED <<top, slot, pushed, taken>>
    /\ Book(i)

PopReadTop(i) ==
    /\ loc[i].pc = "PopReadTop"
    /\ loc' = [loc EXCEPT ![i].pc = IF Diff(loc[i].b, top[i]) < 0 THEN "PopRestoreEmpty" ELSE "PopReadSlot",
                          ![i].t = top[i]]
    /\ UNCHANGED shared
    /\ Book(i)

PopRestoreEmpty(i) ==
    /\ loc[i].pc = "PopRestoreEmpty"
    /\ bottom' = [bottom EXCEPT ![i] = loc[i].b + 1]
    /\ Done(i, EMPTY)
    /\ UNCHANGED <<top, slot, pushed, taken>>
    /\ Book(i)

PopReadSlot(i) ==
    /\ loc[i].pc = "PopReadSlot"
    /\ LET v == slot[i][Slot(loc[i].b)] IN
       IF Diff(loc[i].b, loc[i].t) > 0
         THEN /\ taken' = [taken EXCEPT ![v] = @ + 1]   \* more than one task: b is ours
              /\ Done(i, v)
         ELSE /\ loc' = [loc EXCEPT ![i].pc = "PopCasTop", ![i].v = v]
              /\ UNCHANGED taken
    /\ UNCHANGED <<top, bottom, slot, pushed>>
    /\ Book(i)

PopCasTop(i) ==
    /\ loc[i].pc = "PopCasTop"
    /\ LET won == Wrap(top[i]) = Wrap(loc[i].t) IN
       /\ IF won
            THEN /\ top' = [top EXCEPT ![i] = @ + 1]       \* won the last task
                 /\ taken' = [taken EXCEPT ![loc[i].v] = @ + 1]
            ELSE UNCHANGED <<top, taken>>                  \* a thief took it
       /\ loc' = [loc EXCEPT ![i].pc = "PopRestoreBottom", ![i].won = won]
    /\ UNCHANGED <<bottom, slot, pushed>>
    /\ Book(i)

PopRestoreBottom(i) ==
    /\ loc[i].pc = "PopRestoreBottom"
    /\ bottom' = [bottom EXCEPT ![i] = loc[i].t + 1]
    /\ Done(i, IF loc[i].won THEN loc[i].v ELSE EMPTY)
    /\ UNCHANGED <<top, slot, pushed, taken>>
    /\ Book(i)

-----------------------------------------------------------------------------
(* steal: any thread, from another thread's deque.                         *)

Victims(i) == IF StealFromThieves THEN Threads \ {i} ELSE {Owner} \ {i}

StealReadTop(i) ==
    /\ loc[i].pc = "Idle"
    /\ \E v \in Victims(i) :
         loc' = [loc EXCEPT ![i].pc = "StealReadBottom", ![i].vic = v, ![i].t = top[v]]
    /\ UNCHANGED shared
    /\ Book(i)

StealReadBottom(i) ==
    /\ loc[i].pc = "StealReadBottom"
    /\ IF Diff(bottom[loc[i].vic], loc[i].t) <= 0
         THEN Done(i, EMPTY)
         ELSE loc' = [loc EXCEPT ![i].pc = "StealReadSlot"]
    /\ UNCHANGED shared
    /\ Book(i)

StealReadSlot(i) ==
    /\ loc[i].pc = "StealReadSlot"
    /\ loc' = [loc EXCEPT ![i].pc = "StealCasTop", ![i].v = slot[loc[i].vic][Slot(loc[i].t)]]
    /\ UNCHANGED shared
    /\ Book(i)

StealCasTop(i) ==
    /\ loc[i].pc = "StealCasTop"
    /\ LET d == loc[i].vic IN
       IF Wrap(top[d]) = Wrap(loc[i].t)
         THEN /\ top' = [top EXCEPT ![d] = @ + 1]
              /\ taken' = [taken EXCEPT ![loc[i].v] = @ + 1]
              /\ Done(i, loc[i].v)
         ELSE /\ UNCHANGED <<top, taken>>                  \* lost: returns RETRY, drops the value
              /\ Done(i, RETRY)
    /\ UNCHANGED <<bottom, slot, pushed>>
    /\ Book(i)

-----------------------------------------------------------------------------
(* stealHalfInto: a thief moves about half of Owner's tasks into its own   *)
(* deque, claiming each by its own compare-exchange before copying it.     *)

\* Whose deque thread i may steal half of: Owner's, for a thief (a definition, so that ChaseLevTrace.tla
\* can override it: in a real pool any thread steals half from any other).
HalfVictims(i) == IF HalfSteals /\ i /= Owner THEN {Owner} ELSE {}

HalfReadTop(i) ==
    /\ loc[i].pc = "Idle"
    /\ \E v \in HalfVictims(i) :
         loc' = [loc EXCEPT ![i].pc = "HalfReadBottom", ![i].vic = v, ![i].t = top[v]]
    /\ UNCHANGED shared
    /\ Book(i)

HalfReadBottom(i) ==
    /\ loc[i].pc = "HalfReadBottom"
    /\ LET size == Diff(bottom[loc[i].vic], loc[i].t) IN
       IF size <= 0
         THEN Done(i, EMPTY)
         ELSE loc' = [loc EXCEPT ![i].pc = "HalfReadDstBottom", ![i].want = size - size \div 2]
    /\ UNCHANGED shared
    /\ Book(i)

HalfReadDstBottom(i) ==
    /\ loc[i].pc = "HalfReadDstBottom"
    /\ loc' = [loc EXCEPT ![i].pc = "HalfReadDstTop", ![i].db = bottom[i]]
    /\ UNCHANGED shared
    /\ Book(i)

HalfReadDstTop(i) ==
    /\ loc[i].pc = "HalfReadDstTop"
    /\ LET want == Min(loc[i].want, Capacity - Diff(loc[i].db, top[i])) IN
       IF want <= 0
         THEN Done(i, EMPTY)                            \* dst full
         ELSE loc' = [loc EXCEPT ![i].pc = "HalfReadSlot", ![i].want = want]
    /\ UNCHANGED shared
    /\ Book(i)

HalfReadSlot(i) ==
    /\ loc[i].pc = "HalfReadSlot"
    /\ loc' = [loc EXCEPT ![i].pc = "HalfCasTop", ![i].v = slot[loc[i].vic][Slot(loc[i].t)]]
    /\ UNCHANGED shared
    /\ Book(i)

HalfCasTop(i) ==
    /\ loc[i].pc = "HalfCasTop"
    /\ LET d == loc[i].vic IN
       IF Wrap(top[d]) = Wrap(loc[i].t)
         THEN /\ top' = [top EXCEPT ![d] = @ + 1]       \* claimed: the task is ours
              /\ loc' = [loc EXCEPT ![i].pc = "HalfWriteDst"]
         ELSE /\ UNCHANGED top                          \* lost: RETRY if nothing claimed yet
              /\ IF loc[i].got = 0 THEN Done(i, RETRY)
                 ELSE loc' = [loc EXCEPT ![i].pc = "HalfPublishDst", ![i].v = 0]
    /\ UNCHANGED <<bottom, slot, pushed, taken>>
    /\ Book(i)

HalfWriteDst(i) ==
    /\ loc[i].pc = "HalfWriteDst"
    /\ slot' = [slot EXCEPT ![i][Slot(loc[i].db + loc[i].got)] = loc[i].v]
    /\ loc' = [loc EXCEPT ![i].pc = IF loc[i].got + 1 = loc[i].want THEN "HalfPublishDst"
                                    ELSE "HalfRecheckBottom",
                          ![i].got = @ + 1, ![i].t = @ + 1, ![i].v = 0]
    /\ UNCHANGED <<top, bottom, pushed, taken>>
    /\ Book(i)

HalfRecheckBottom(i) ==
    /\ loc[i].pc = "HalfRecheckBottom"
    /\ loc' = [loc EXCEPT ![i].pc = IF Diff(bottom[loc[i].vic], loc[i].t) <= 0 THEN "HalfPublishDst"
                                    ELSE "HalfReadSlot"]
    /\ UNCHANGED shared
    /\ Book(i)

HalfPublishDst(i) ==
    /\ loc[i].pc = "HalfPublishDst"
    /\ bottom' = [bottom EXCEPT ![i] = loc[i].db + loc[i].got]
    /\ Done(i, loc[i].got)
    /\ UNCHANGED <<top, slot, pushed, taken>>
    /\ Book(i)

-----------------------------------------------------------------------------
\* The actions, one per `// spec: Name` in lib/protocol/deque.ts. tests/repo/spec_names_test.ts reads this
\* definition: every operator called in it is an action and must be named in the code, and back.
Step(i) ==
    \/ PushReadBottom(i) \/ PushReadTop(i) \/ PushWriteSlot(i) \/ PushPublishBottom(i)
    \/ PopReadBottom(i) \/ PopReserveBottom(i) \/ PopReadTop(i) \/ PopRestoreEmpty(i)
    \/ PopReadSlot(i) \/ PopCasTop(i) \/ PopRestoreBottom(i)
    \/ StealReadTop(i) \/ StealReadBottom(i) \/ StealReadSlot(i) \/ StealCasTop(i)
    \/ HalfReadTop(i) \/ HalfReadBottom(i) \/ HalfReadDstBottom(i) \/ HalfReadDstTop(i)
    \/ HalfReadSlot(i) \/ HalfCasTop(i) \/ HalfWriteDst(i) \/ HalfRecheckBottom(i)
    \/ HalfPublishDst(i)

Next == \E i \in Threads : Step(i)

\* Liveness assumption ("while operations continue"): every started operation keeps taking steps,
\* and every thread starts a pop of its own deque again and again (the worker loop pops before it
\* steals). Strong fairness because a thread may start other operations in between.
Fairness == \A i \in Threads : WF_vars(Step(i)) /\ SF_vars(PopReadBottom(i))

Spec == Init /\ [][Next]_vars /\ Fairness

-----------------------------------------------------------------------------
(* The deques as the atomic specification sees them (refinement mapping).  *)

\* (ReservedPCs and SizeIn above: a reserved index stays in the abstract deque until its pop linearizes.)
Reserved(d) == loc[d].pc \in ReservedPCs
Size(d) == SizeIn(top, bottom, loc, d)
AbsQ(d) == [k \in 1..Size(d) |-> slot[d][Slot(top[d] + k - 1)]]

\* A steal-half's claimed tasks: those already copied to dst's unpublished slots, then the one just
\* claimed and not yet copied.
AbsHand(i) ==
    [k \in 1..loc[i].got |-> slot[i][Slot(loc[i].db + k - 1)]]
    \o (IF loc[i].pc = "HalfWriteDst" THEN << loc[i].v >> ELSE << >>)

Atomic == INSTANCE AtomicDeque
    WITH q <- [d \in Threads |-> AbsQ(d)], hand <- [i \in Threads |-> AbsHand(i)]

\* The abstract state: the deques and hands above, with the concrete history variables.
abs == << [d \in Threads |-> AbsQ(d)], [i \in Threads |-> AbsHand(i)], taken, pushed >>

\* Linearizability: every step is a step of the atomic deque or leaves it unchanged. This is
\* Atomic!Spec, written with the unchanged case first so that TLC tries the cheap case first.
Refinement == Atomic!Init /\ [][abs' = abs \/ Atomic!Next]_vars

-----------------------------------------------------------------------------
(* Invariants.                                                            *)

PCs == {"Idle", "PushReadTop", "PushWriteSlot", "PushPublishBottom",
        "PopReserveBottom", "PopReadTop", "PopRestoreEmpty", "PopReadSlot", "PopCasTop",
        "PopRestoreBottom", "StealReadBottom", "StealReadSlot", "StealCasTop",
        "HalfReadBottom", "HalfReadDstBottom", "HalfReadDstTop", "HalfReadSlot", "HalfCasTop",
        "HalfWriteDst", "HalfRecheckBottom", "HalfPublishDst"}

TypeOK ==
    /\ top \in [Threads -> Nat] /\ bottom \in [Threads -> Nat]
    /\ slot \in [Threads -> [0..Capacity - 1 -> 0..Pushes]]
    /\ \A i \in Threads :
         /\ loc[i].pc \in PCs /\ loc[i].vic \in Threads
         /\ {loc[i].t, loc[i].b, loc[i].db, loc[i].want, loc[i].got} \subseteq Nat
         /\ loc[i].v \in 0..Pushes
    /\ pushed \in 0..Pushes
    /\ taken \in [0..Pushes -> Nat]
    /\ \A i \in Threads :
         /\ ret[i].op \in {"none", "push", "pop", "steal", "half"}
         /\ obs[i].none \in BOOLEAN /\ obs[i].top0 \in Nat /\ obs[i].claims \subseteq 0..Pushes
    /\ returned \subseteq 0..Pushes

\* 0 <= bottom - top <= Capacity, except that a pop may hold bottom = top - 1 until it restores bottom.
IndexBounds ==
    \A d \in Threads :
        \/ bottom[d] - top[d] \in 0..Capacity
        \/ /\ bottom[d] - top[d] = -1
           /\ loc[d].pc \in {"PopReadTop", "PopReadSlot", "PopCasTop", "PopRestoreEmpty", "PopRestoreBottom"}

\* The code's view of the size (the wrapping difference of the two words) is the true size.
WrappingDiffExact == \A d \in Threads : Diff(bottom[d], top[d]) = bottom[d] - top[d]

\* Only an unclaimed copy (a steal-half's dst slots beyond bottom) may sit past a deque's bottom, and
\* it never reaches a slot of a queued task.
DstCopiesInRange ==
    \A i \in Threads : loc[i].got > 0 => loc[i].db + loc[i].got - top[i] <= Capacity

Count(s, k) == Cardinality({j \in 1..Len(s) : s[j] = k})

\* How often task k occurs: taken, plus queued in a deque, plus held in a steal-half's hand.
Occurrences(k) ==
    LET RECURSIVE Sum(_)
        Sum(S) == IF S = {} THEN 0
                  ELSE LET x == CHOOSE x \in S : TRUE
                       IN Count(AbsQ(x), k) + Count(AbsHand(x), k) + Sum(S \ {x})
    IN taken[k] + Sum(Threads)

\* Conservation: every pushed task is taken exactly once, or sits in exactly one deque or hand;
\* a task not yet pushed is nowhere.
Conservation == \A k \in 1..Pushes : Occurrences(k) = IF k <= pushed THEN 1 ELSE 0

\* No task is taken twice, and no value that was never pushed (an unwritten slot) is ever taken.
NoDuplicates == taken[0] = 0 /\ \A k \in 1..Pushes : taken[k] <= 1

-----------------------------------------------------------------------------
(* Properties of steps.                                                    *)

CasPCs == {"PopCasTop", "StealCasTop", "HalfCasTop"}
\* Thread i's compare-exchange on top succeeds in this step.
ClaimStep(i) ==
    /\ loc[i].pc \in CasPCs /\ loc'[i].pc /= loc[i].pc
    /\ Wrap(top[loc[i].vic]) = Wrap(loc[i].t)

\* No ABA: a compare-exchange succeeds only on the very top the thread read, not one a Modulus later.
NoAbaCas == [][\A i \in Threads : ClaimStep(i) => top[loc[i].vic] = loc[i].t]_vars

\* No stale slot read: a claim returns the task that sits at the claimed index now.
NoStaleRead ==
    [][\A i \in Threads :
         ClaimStep(i) => Size(loc[i].vic) >= 1 /\ loc[i].v = slot[loc[i].vic][Slot(top[loc[i].vic])]]_vars

\* Lock-free: top only moves forward, one claim at a time, and a compare-exchange fails only because
\* top moved past the value the thread read, i.e. another thread's claim succeeded in between.
TopMonotonic == [][\A d \in Threads : top'[d] = top[d] \/ top'[d] = top[d] + 1]_vars
RetryOnlyAfterProgress ==
    [][\A i \in Threads :
         (loc[i].pc \in CasPCs /\ loc'[i].pc /= loc[i].pc /\ ~ClaimStep(i))
             => top[loc[i].vic] > loc[i].t]_vars

\* EMPTY from pop and "full" from push are exact at their linearization points; steal's EMPTY is
\* justified: the deque was empty, or its only task is the one a pending pop has reserved (that task
\* goes to the pop or to a thief whose operation began earlier; fixing which needs a prophecy).
PopEmptyExact ==
    [][\A i \in Threads : (PopReadTop(i) /\ loc'[i].pc = "PopRestoreEmpty") => Size(i) = 0]_vars
PopLostExact ==
    [][\A i \in Threads : (loc[i].pc = "PopCasTop" /\ PopCasTop(i) /\ ~ClaimStep(i)) => Size(i) = 0]_vars
PushFullExact ==
    [][(PushReadTop(Owner) /\ loc'[Owner].pc = "Idle") => Size(Owner) = Capacity]_vars
DstFullExact ==
    [][\A i \in Threads : (HalfReadDstTop(i) /\ loc'[i].pc = "Idle") => Size(i) = Capacity]_vars
StealEmptyJustified ==
    [][\A i \in Threads :
         ((StealReadBottom(i) \/ HalfReadBottom(i)) /\ loc'[i].pc = "Idle")
             => \/ Size(loc[i].vic) = 0
                \/ Size(loc[i].vic) = 1 /\ Reserved(loc[i].vic)]_vars

-----------------------------------------------------------------------------
(* What operations return. Each is judged by its answer (ret, set by Done), *)
(* whichever path of the code produced it, against what the operation's    *)
(* interval has seen (obs): the answer must be one some atomic execution    *)
(* of the operation at a moment of its interval could give.                *)

\* A task returned: pushed, taken once, by this very operation, and never returned before.
ValueOk(i, k) ==
    /\ k \in 1..pushed
    /\ k \notin returned
    /\ obs[i].claims \cup StepClaims = {k}
    /\ taken'[k] = 1

\* Nothing to take at some state of the operation's interval, its last state included.
SawNone(i) == obs[i].none \/ NoneIn(ret'[i].op, i, loc[i].vic, top', bottom', loc')

\* pop returns EMPTY only if its deque was empty at some moment of its interval (it was empty, or a
\* thief took the last task), having taken nothing; else a task as ValueOk says.
PopReturns ==
    [][\A i \in Threads :
         Returns(i) /\ ret'[i].op = "pop" =>
             IF ret'[i].val = EMPTY THEN obs[i].claims \cup StepClaims = {} /\ SawNone(i)
             ELSE ValueOk(i, ret'[i].val)]_vars

\* steal returns EMPTY only if the victim had nothing to take at some moment of its interval; RETRY
\* only if another operation took a task from the victim in its interval (top moved past the top at
\* its invocation; a steal takes nothing else); else a task as ValueOk says.
StealReturns ==
    [][\A i \in Threads :
         Returns(i) /\ ret'[i].op = "steal" =>
             CASE ret'[i].val = EMPTY -> obs[i].claims \cup StepClaims = {} /\ SawNone(i)
               [] ret'[i].val = RETRY -> obs[i].claims \cup StepClaims = {} /\ top'[loc[i].vic] > obs[i].top0
               [] OTHER -> ValueOk(i, ret'[i].val)]_vars

\* stealHalfInto returns EMPTY only if the victim had nothing to take, or the thief's deque had no
\* room, at some moment of its interval, holding nothing; RETRY only if another operation took a task
\* from the victim in its interval and it holds nothing; else a count n >= 1, and exactly n tasks
\* appear in its deque as it returns.
HalfReturns ==
    [][\A i \in Threads :
         Returns(i) /\ ret'[i].op = "half" =>
             CASE ret'[i].val = EMPTY -> SawNone(i) /\ AbsHand(i) = << >>
               [] ret'[i].val = RETRY -> top'[loc[i].vic] > obs[i].top0 /\ AbsHand(i) = << >>
               [] OTHER -> ret'[i].val >= 1 /\ Size(i)' = Size(i) + ret'[i].val]_vars

\* push returns FALSE only if its deque is full (only the owner pushes, and thieves only make room,
\* so full when it returns means full throughout); TRUE only if the task was published.
PushReturns ==
    [][Returns(Owner) /\ ret'[Owner].op = "push" =>
         IF ret'[Owner].val THEN pushed' = pushed + 1 ELSE Size(Owner) = Capacity]_vars

-----------------------------------------------------------------------------
(* Liveness: while operations continue, every pushed task is eventually taken. *)

EveryTaskTaken == \A k \in 1..Pushes : (pushed >= k) ~> (taken[k] >= 1)

\* Symmetry of the thieves, for the safety configurations only.
ThiefSymmetry == Permutations(Thieves)
=============================================================================
