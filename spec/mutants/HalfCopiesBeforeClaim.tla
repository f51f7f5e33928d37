----------------------------- MODULE HalfCopiesBeforeClaim -----------------------------
(***************************************************************************)
(* The fixed-capacity Chase-Lev deque of lib/deque.ts: push and pop by the *)
(* owner, steal and steal-half by thieves, one action per shared-memory    *)
(* access, each named after the `// spec: Name` comment on that access.    *)
(* JavaScript's Atomics are sequentially consistent, so an interleaving of *)
(* these actions is exactly what the code can do.                          *)
(*                                                                          *)
(* code: lib/deque.ts                                                       *)
(*                                                                          *)
(* Threads. Every thread owns one deque (indexed by the thread). Owner     *)
(* pushes tasks 1..Pushes into its deque and pops it; each thief pops its  *)
(* own deque, steals single tasks from any other deque, and steals half of *)
(* Owner's deque into its own deque (stealHalfInto's dst is the caller's   *)
(* own deque). Thieves do not steal half from each other: a task could     *)
(* then bounce between thieves for ever, so a deque's indices would have   *)
(* no bound and no finite modulus would be sound (see README).              *)
(*                                                                          *)
(* Indices. The code's int32 words wrap at 2^32; here the words wrap at    *)
(* Modulus. The state holds each index unwrapped (a plain integer), and    *)
(* the algorithm only ever sees it through Wrap: every comparison is the   *)
(* code's wrapping difference Diff, every compare-exchange compares Wrap.  *)
(* The unwrapped value is the history the checks need (which push an index *)
(* belongs to); under CountersWideEnough it is a function of the wrapped   *)
(* word, so it adds no states.                                             *)
(***************************************************************************)
(* MUTANT of ChaseLev.tla: steal-half that copies a batch before claiming it with ONE compare-exchange t -> t + n (Tokio-style), racing the owner's CAS-free pop. *)
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
\* Every difference the code computes is, unwrapped, in -1..Pushes+Capacity (README: "Why the modulus
\* is sound"), so the signed wrapping difference is exact, and no compare-exchange can match a top that
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
    taken     \* history: [0..Pushes -> Nat], times each value was taken by a pop or steal

shared == <<top, bottom, slot, pushed, taken>>
vars == <<top, bottom, slot, loc, pushed, taken>>

\* A thread between operations: pc names the next action; locals are reset so equal states are equal.
\* vic = the deque the operation works on; t, b = indices read; v = a slot value read;
\* db = the dst bottom read by steal-half; want = the batch size; got = tasks claimed so far.
Idle(i) == [pc |-> "Idle", vic |-> i, t |-> 0, b |-> 0, v |-> 0, db |-> 0, want |-> 0, got |-> 0]

Init ==
    /\ top = [d \in Threads |-> InitIndex]
    /\ bottom = [d \in Threads |-> InitIndex]
    /\ slot = [d \in Threads |-> [s \in 0..Capacity - 1 |-> 0]]
    /\ loc = [i \in Threads |-> Idle(i)]
    /\ pushed = 0
    /\ taken = [k \in 0..Pushes |-> 0]

Done(i) == loc' = [loc EXCEPT ![i] = Idle(i)]

-----------------------------------------------------------------------------
(* push: owner only.                                                       *)

PushReadBottom(i) ==
    /\ i = Owner /\ loc[i].pc = "Idle" /\ pushed < Pushes
    /\ loc' = [loc EXCEPT ![i].pc = "PushReadTop", ![i].b = bottom[i]]
    /\ UNCHANGED shared

PushReadTop(i) ==
    /\ loc[i].pc = "PushReadTop"
    /\ IF Diff(loc[i].b, top[i]) >= Capacity
         THEN Done(i)                                   \* full: push returns false
         ELSE loc' = [loc EXCEPT ![i].pc = "PushWriteSlot"]
    /\ UNCHANGED shared

PushWriteSlot(i) ==
    /\ loc[i].pc = "PushWriteSlot"
    /\ slot' = [slot EXCEPT ![i][Slot(loc[i].b)] = pushed + 1]
    /\ loc' = [loc EXCEPT ![i].pc = "PushPublishBottom"]
    /\ UNCHANGED <<top, bottom, pushed, taken>>

PushPublishBottom(i) ==
    /\ loc[i].pc = "PushPublishBottom"
    /\ bottom' = [bottom EXCEPT ![i] = loc[i].b + 1]
    /\ pushed' = pushed + 1
    /\ Done(i)
    /\ UNCHANGED <<top, slot, taken>>

-----------------------------------------------------------------------------
(* pop: any thread, on its own deque.                                      *)

PopReadBottom(i) ==
    /\ loc[i].pc = "Idle"
    /\ loc' = [loc EXCEPT ![i].pc = "PopReserveBottom", ![i].b = bottom[i] - 1]
    /\ UNCHANGED shared

PopReserveBottom(i) ==
    /\ loc[i].pc = "PopReserveBottom"
    /\ bottom' = [bottom EXCEPT ![i] = loc[i].b]
    /\ loc' = [loc EXCEPT ![i].pc = "PopReadTop"]
    /\ UNCHANGED <<top, slot, pushed, taken>>

PopReadTop(i) ==
    /\ loc[i].pc = "PopReadTop"
    /\ loc' = [loc EXCEPT ![i].pc = IF Diff(loc[i].b, top[i]) < 0 THEN "PopRestoreEmpty" ELSE "PopReadSlot",
                          ![i].t = top[i]]
    /\ UNCHANGED shared

PopRestoreEmpty(i) ==
    /\ loc[i].pc = "PopRestoreEmpty"
    /\ bottom' = [bottom EXCEPT ![i] = loc[i].b + 1]
    /\ Done(i)                                          \* returns EMPTY
    /\ UNCHANGED <<top, slot, pushed, taken>>

PopReadSlot(i) ==
    /\ loc[i].pc = "PopReadSlot"
    /\ LET v == slot[i][Slot(loc[i].b)] IN
       IF Diff(loc[i].b, loc[i].t) > 0
         THEN /\ taken' = [taken EXCEPT ![v] = @ + 1]   \* more than one task: b is ours
              /\ Done(i)
         ELSE /\ loc' = [loc EXCEPT ![i].pc = "PopCasTop", ![i].v = v]
              /\ UNCHANGED taken
    /\ UNCHANGED <<top, bottom, slot, pushed>>

PopCasTop(i) ==
    /\ loc[i].pc = "PopCasTop"
    /\ IF Wrap(top[i]) = Wrap(loc[i].t)
         THEN /\ top' = [top EXCEPT ![i] = @ + 1]       \* won the last task
              /\ taken' = [taken EXCEPT ![loc[i].v] = @ + 1]
         ELSE UNCHANGED <<top, taken>>                  \* a thief took it
    /\ loc' = [loc EXCEPT ![i].pc = "PopRestoreBottom"]
    /\ UNCHANGED <<bottom, slot, pushed>>

PopRestoreBottom(i) ==
    /\ loc[i].pc = "PopRestoreBottom"
    /\ bottom' = [bottom EXCEPT ![i] = loc[i].t + 1]
    /\ Done(i)
    /\ UNCHANGED <<top, slot, pushed, taken>>

-----------------------------------------------------------------------------
(* steal: any thread, from another thread's deque.                         *)

Victims(i) == IF StealFromThieves THEN Threads \ {i} ELSE {Owner} \ {i}

StealReadTop(i) ==
    /\ loc[i].pc = "Idle"
    /\ \E v \in Victims(i) :
         loc' = [loc EXCEPT ![i].pc = "StealReadBottom", ![i].vic = v, ![i].t = top[v]]
    /\ UNCHANGED shared

StealReadBottom(i) ==
    /\ loc[i].pc = "StealReadBottom"
    /\ IF Diff(bottom[loc[i].vic], loc[i].t) <= 0
         THEN Done(i)                                   \* returns EMPTY
         ELSE loc' = [loc EXCEPT ![i].pc = "StealReadSlot"]
    /\ UNCHANGED shared

StealReadSlot(i) ==
    /\ loc[i].pc = "StealReadSlot"
    /\ loc' = [loc EXCEPT ![i].pc = "StealCasTop", ![i].v = slot[loc[i].vic][Slot(loc[i].t)]]
    /\ UNCHANGED shared

StealCasTop(i) ==
    /\ loc[i].pc = "StealCasTop"
    /\ LET d == loc[i].vic IN
       IF Wrap(top[d]) = Wrap(loc[i].t)
         THEN /\ top' = [top EXCEPT ![d] = @ + 1]
              /\ taken' = [taken EXCEPT ![loc[i].v] = @ + 1]
         ELSE UNCHANGED <<top, taken>>                  \* returns RETRY; the value is dropped
    /\ Done(i)
    /\ UNCHANGED <<bottom, slot, pushed>>

-----------------------------------------------------------------------------
(* stealHalfInto: a thief moves about half of Owner's tasks into its own   *)
(* deque, claiming each by its own compare-exchange before copying it.     *)

HalfReadTop(i) ==
    /\ loc[i].pc = "Idle" /\ i /= Owner /\ HalfSteals
    /\ loc' = [loc EXCEPT ![i].pc = "HalfReadBottom", ![i].vic = Owner, ![i].t = top[Owner]]
    /\ UNCHANGED shared

HalfReadBottom(i) ==
    /\ loc[i].pc = "HalfReadBottom"
    /\ LET size == Diff(bottom[loc[i].vic], loc[i].t) IN
       IF size <= 0
         THEN Done(i)                                   \* returns EMPTY
         ELSE loc' = [loc EXCEPT ![i].pc = "HalfReadDstBottom", ![i].want = size - size \div 2]
    /\ UNCHANGED shared

HalfReadDstBottom(i) ==
    /\ loc[i].pc = "HalfReadDstBottom"
    /\ loc' = [loc EXCEPT ![i].pc = "HalfReadDstTop", ![i].db = bottom[i]]
    /\ UNCHANGED shared

HalfReadDstTop(i) ==
    /\ loc[i].pc = "HalfReadDstTop"
    /\ LET want == Min(loc[i].want, Capacity - Diff(loc[i].db, top[i])) IN
       IF want <= 0
         THEN Done(i)                                   \* dst full: returns EMPTY
         ELSE loc' = [loc EXCEPT ![i].pc = "HalfReadSlot", ![i].want = want]
    /\ UNCHANGED shared

HalfReadSlot(i) ==   \* BUG: reads slot t + got and copies it before any claim
    /\ loc[i].pc = "HalfReadSlot"
    /\ loc' = [loc EXCEPT ![i].pc = "HalfWriteDst", ![i].v = slot[loc[i].vic][Slot(loc[i].t + loc[i].got)]]
    /\ UNCHANGED shared

HalfCasTop(i) ==
    /\ loc[i].pc = "HalfCasTop"
    /\ LET d == loc[i].vic IN
       IF Wrap(top[d]) = Wrap(loc[i].t)
         THEN /\ top' = [top EXCEPT ![d] = @ + loc[i].want]   \* BUG: claims the whole batch at once
              /\ loc' = [loc EXCEPT ![i].pc = "HalfPublishDst"]
         ELSE /\ UNCHANGED top                          \* lost: RETRY; the copies stay unpublished
              /\ Done(i)
    /\ UNCHANGED <<bottom, slot, pushed, taken>>

HalfWriteDst(i) ==
    /\ loc[i].pc = "HalfWriteDst"
    /\ slot' = [slot EXCEPT ![i][Slot(loc[i].db + loc[i].got)] = loc[i].v]
    /\ loc' = [loc EXCEPT ![i].pc = IF loc[i].got + 1 = loc[i].want THEN "HalfCasTop"   \* BUG: claim after copy
                                    ELSE "HalfReadSlot",
                          ![i].got = @ + 1, ![i].v = 0]
    /\ UNCHANGED <<top, bottom, pushed, taken>>

HalfRecheckBottom(i) ==
    /\ loc[i].pc = "HalfRecheckBottom"
    /\ loc' = [loc EXCEPT ![i].pc = IF Diff(bottom[loc[i].vic], loc[i].t) <= 0 THEN "HalfPublishDst"
                                    ELSE "HalfReadSlot"]
    /\ UNCHANGED shared

HalfPublishDst(i) ==
    /\ loc[i].pc = "HalfPublishDst"
    /\ bottom' = [bottom EXCEPT ![i] = loc[i].db + loc[i].got]
    /\ Done(i)                                          \* returns got
    /\ UNCHANGED <<top, slot, pushed, taken>>

-----------------------------------------------------------------------------
\* The actions, one per `// spec: Name` in lib/deque.ts. tests/spec_names_test.ts reads this
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

\* Between PopReserveBottom and its linearization, a pop has hidden index b from thieves that read
\* bottom now, but b is still in the deque: a thief that read bottom earlier may yet win it.
\* The pop linearizes at PopReadTop (empty), PopReadSlot (more than one task) or PopCasTop (the last).
Reserved(d) == loc[d].pc \in {"PopReadTop", "PopReadSlot", "PopCasTop"}
EffBottom(d) == IF Reserved(d) THEN bottom[d] + 1 ELSE bottom[d]
Size(d) == IF EffBottom(d) > top[d] THEN EffBottom(d) - top[d] ELSE 0
AbsQ(d) == [k \in 1..Size(d) |-> slot[d][Slot(top[d] + k - 1)]]

\* A steal-half's claimed tasks: those already copied to dst's unpublished slots, then the one just
\* claimed and not yet copied.
AbsHand(i) ==   \* the copies are the thief's only once its batch claim succeeded
    IF loc[i].pc = "HalfPublishDst" THEN [k \in 1..loc[i].got |-> slot[i][Slot(loc[i].db + k - 1)]] ELSE << >>

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
(* Liveness: while operations continue, every pushed task is eventually taken. *)

EveryTaskTaken == \A k \in 1..Pushes : (pushed >= k) ~> (taken[k] >= 1)

\* Symmetry of the thieves, for the safety configurations only.
ThiefSymmetry == Permutations(Thieves)
=============================================================================
