----------------------------- MODULE Injector -----------------------------
(***************************************************************************)
(* The bounded multi-producer multi-consumer queue of lib/protocol/injector.ts *)
(* (Vyukov's bounded MPMC queue: the injector, the free lists and the      *)
(* completion queue): push, pushPatiently, pop and length, one action per  *)
(* shared-memory access, each named after the `// spec: Name` comment on   *)
(* that access. JavaScript's Atomics are sequentially consistent, so an    *)
(* interleaving of these actions is exactly what the code can do.          *)
(*                                                                         *)
(* code: lib/protocol/injector.ts                                          *)
(*                                                                         *)
(* Threads. Producers push their own values: producer i's k-th value is    *)
(* <<i, k>>, so that the checks can tell who pushed what and in which      *)
(* order. Those in Patient push with pushPatiently (after a failed push    *)
(* they try again at once; the pool pushes only this way), the others with *)
(* push (a failed push returns false; the producer keeps the value and may *)
(* try it again later). Consumers pop, and call length if Lengths. A       *)
(* thread may be both a producer and a consumer, as the pool's threads     *)
(* are; it runs one operation at a time.                                   *)
(*                                                                         *)
(* Positions. The code's int32 words (head, tail, the sequence words) wrap *)
(* at 2^32; here they wrap at Modulus. The state holds each position and   *)
(* sequence unwrapped (a plain integer), and the algorithm only ever sees  *)
(* it through Wrap: every comparison is the code's wrapping difference     *)
(* Diff, every compare-exchange compares Wrap, every slot is Slot. The     *)
(* unwrapped value is the history the checks need (which position a word   *)
(* stands for); under CountersWideEnough it is a function of the wrapped   *)
(* word, so it adds no states.                                             *)
(***************************************************************************)
EXTENDS Integers, Sequences, FiniteSets, TLC

CONSTANTS
    Producers,   \* the threads that push (model values)
    Consumers,   \* the threads that pop (model values; may share threads with Producers)
    Patient,     \* the producers that push with pushPatiently; the others use push
    Capacity,    \* slots, a power of two
    PushesEach,  \* values each producer pushes in a behaviour
    Modulus,     \* positions and sequence words wrap at this modulus (2^32 in the code)
    InitPos,     \* the initial head = tail (unwrapped)
    Lengths      \* do consumers also call length (TRUE)?

ASSUME ConstantsOk ==
    /\ Capacity \in {2^k : k \in 1..20} /\ PushesEach \in Nat /\ InitPos \in Nat
    /\ Patient \subseteq Producers /\ Lengths \in BOOLEAN
ASSUME ModulusOk == Modulus \in Nat \ {0} /\ Modulus % Capacity = 0

Pushes == Cardinality(Producers) * PushesEach
\* Every difference the code computes is, unwrapped, in -Capacity..Pushes+Capacity-1 (spec/docs/Injector.md: "Why the
\* modulus is sound"), so the signed wrapping difference is exact, and no compare-exchange can match a
\* head or tail that moved by a whole Modulus (each moves at most Pushes times).
ASSUME CountersWideEnough == Modulus >= 2 * (Pushes + Capacity)

Threads == Producers \cup Consumers

\* The word the code sees, and the code's `(x - y) | 0` on two words: the signed wrapping difference.
Wrap(x) == x % Modulus
Diff(x, y) == LET d == (Wrap(x) - Wrap(y)) % Modulus IN IF d >= Modulus \div 2 THEN d - Modulus ELSE d
\* The code's `x & mask` on the word: the slot of position x.
Slot(x) == Wrap(x) % Capacity
\* length's clamp to [0, capacity].
Clamp(n) == IF n < 0 THEN 0 ELSE IF n > Capacity THEN Capacity ELSE n

\* The values producers push; Unwritten stands for a value word no producer has written (k = 0).
\* (Definitions, so that InjectorTrace.tla can override them: in a real pool the values are record ids.)
Values == Producers \X (1..PushesEach)
Unwritten == << CHOOSE i \in Producers : TRUE, 0 >>
AllValues == Values \cup {Unwritten}

VARIABLES
    head,    \* the next position a consumer claims (unwrapped; the word is Wrap(head))
    tail,    \* the next position a producer claims (unwrapped)
    seq,     \* [0..Capacity-1 -> Nat]: each slot's sequence word (unwrapped)
    val,     \* [0..Capacity-1 -> AllValues]: each slot's value word
    loc,     \* [Threads -> record]: each thread's program counter and locals (see Idle)
    sent,    \* history: [Producers -> Nat], values each producer has pushed (claimed a position for)
    taken,   \* history: [AllValues -> Nat], times each value was returned by a pop
    ret,     \* [Threads -> [op, val]]: what each thread's last operation returned (see Done)
    obs,     \* history: [Threads -> [empty, claimed]]: what the current pop's interval has seen (Observe)
    returned \* history: the values some pop has returned

shared == <<head, tail, seq, val, sent, taken>>
vars == <<head, tail, seq, val, loc, sent, taken, ret, obs, returned>>
\* What TLC tells states apart by: everything but ret. No action and no invariant reads ret; only the
\* properties of steps read it, and only ret'[i] of the thread whose operation returns in that step,
\* which that step sets. So two states that differ only in ret have the same futures, and TLC need
\* not explore both (every transition is still checked against every property of steps).
View == <<head, tail, seq, val, loc, sent, taken, obs, returned>>

\* The value producer i's next push pushes: its k-th is <<i, k>>. (InjectorTrace.tla overrides it with the
\* value the log shows.)
NewValue(i) == <<i, sent[i] + 1>>

\* pop's QUEUE_EMPTY (no value is a 1-tuple, so it equals none of them).
EMPTY == << "EMPTY" >>

\* A thread between operations: pc names the next action; locals are reset so equal states are equal.
\* pos = the position read (push: tail; pop: head; length: head); v = the value being pushed, or the
\* value a pop read; claim = (ghost) the value of the position a pop claimed, at its claim.
Idle == [pc |-> "Idle", pos |-> 0, v |-> Unwritten, claim |-> Unwritten]
\* Nothing observed (Observe): a thread that is not inside a pop.
NoPopObs == [empty |-> FALSE, claimed |-> FALSE]

Init ==
    /\ head = InitPos
    /\ tail = InitPos
    \* initInjector: slot s is free for the position of the first lap that maps to it.
    /\ seq = [s \in 0..Capacity - 1 |-> CHOOSE p \in InitPos..InitPos + Capacity - 1 : Slot(p) = s]
    /\ val = [s \in 0..Capacity - 1 |-> Unwritten]
    /\ loc = [i \in Threads |-> Idle]
    /\ sent = [i \in Producers |-> 0]
    /\ taken = [v \in AllValues |-> 0]
    /\ ret = [i \in Threads |-> [op |-> "none", val |-> 0]]
    /\ obs = [i \in Threads |-> NoPopObs]
    /\ returned = {}

\* The operation a program counter belongs to.
OpOf(pc) ==
    CASE pc \in {"PushReadTail", "PushReadSeq", "PushCasTail", "PushWriteValue", "PushPublishSeq"} -> "push"
      [] pc \in {"PopReadHead", "PopReadSeq", "PopCasHead", "PopReadValue", "PopReleaseSeq"} -> "pop"
      [] pc = "LengthReadTail" -> "length"
      [] OTHER -> "none"

\* Thread i's operation ends in this step and returns r: the code's `return r`. push returns TRUE or
\* FALSE; pop a value or EMPTY; length a number.
Done(i, r) ==
    /\ loc' = [loc EXCEPT ![i] = Idle]
    /\ ret' = [ret EXCEPT ![i] = [op |-> OpOf(loc[i].pc), val |-> r]]
\* Back to the first read of the operation (the code's `continue`, or pushPatiently's next push).
Retry(i, pc) == loc' = [loc EXCEPT ![i] = [Idle EXCEPT !.pc = pc]]

\* A producer between its claim of position p and its publish; a consumer between its claim of p and
\* its release.
PushPCs == {"PushWriteValue", "PushPublishSeq"}
PopPCs == {"PopReadValue", "PopReleaseSeq"}
\* A consumer between its claim and its read of the value: the value is in its hand.
HandPCs == {"PopReadValue"}
Pushing(j, p) == j \in Producers /\ loc[j].pc \in PushPCs /\ loc[j].pos = p
Holding(j, p) == j \in Consumers /\ loc[j].pc \in PopPCs /\ loc[j].pos = p

\* The value of a claimed position: its producer's, while that producer is in flight, else its slot's.
PosValue(p) ==
    IF \E j \in Producers : Pushing(j, p) THEN loc[CHOOSE j \in Producers : Pushing(j, p)].v
    ELSE val[Slot(p)]

\* pop's view of an empty queue, in a state with the given head, tail and loc: no position is
\* claimed by a producer and unconsumed, or the oldest such position's producer has not published it
\* yet (the EMPTY the module doc admits: later positions may be published already).
EmptyIn(hd, tl, lc) ==
    \/ tl = hd
    \/ \E j \in Producers : lc[j].pc \in PushPCs /\ lc[j].pos = hd

\* Thread i's operation ends in this step.
Returns(i) == loc[i].pc /= "Idle" /\ loc'[i].pc = "Idle"

\* Every step updates every pop's record of its interval, from its invocation (the state before its
\* first PopReadHead) to the current state: claimed = it has claimed a position (it is past a
\* successful PopCasHead); empty = it has claimed none, and the queue was empty (EmptyIn) at some
\* state of the interval. (Once a pop has claimed, empty no longer matters, so it is dropped: fewer
\* states.)
Observe ==
    obs' = [j \in Threads |->
              IF loc'[j].pc = "Idle" \/ OpOf(loc'[j].pc) /= "pop" THEN NoPopObs
              ELSE LET claimed == obs[j].claimed \/ loc'[j].pc \in PopPCs
                       before == IF loc[j].pc = "Idle" THEN EmptyIn(head, tail, loc) ELSE obs[j].empty
                   IN [empty |-> ~claimed /\ (before \/ EmptyIn(head', tail', loc')), claimed |-> claimed]]

\* The bookkeeping every action of thread i ends with: ret changes only when its operation returns
\* (Done); every pop's record of its interval is updated (Observe); a returned value is recorded.
Book(i) ==
    /\ IF Returns(i) THEN TRUE ELSE UNCHANGED ret
    /\ Observe
    /\ returned' = IF Returns(i) /\ ret'[i].op = "pop" /\ ret'[i].val /= EMPTY
                     THEN returned \cup {ret'[i].val} ELSE returned

-----------------------------------------------------------------------------
(* push, and pushPatiently (which calls push until it succeeds).           *)

PushReadTail(i) ==
    /\ \/ loc[i].pc = "Idle" /\ i \in Producers /\ sent[i] < PushesEach
       \/ loc[i].pc = "PushReadTail"
    /\ loc' = [loc EXCEPT ![i].pc = "PushReadSeq", ![i].pos = tail, ![i].v = NewValue(i)]
    /\ UNCHANGED shared
    /\ Book(i)

\* The slot still holds position pos - Capacity's value (or its producer's claim): the queue is full.
PushSeesFull(i) == Diff(seq[Slot(loc[i].pos)], loc[i].pos) < 0

PushReadSeq(i) ==
    /\ loc[i].pc = "PushReadSeq"
    /\ LET dif == Diff(seq[Slot(loc[i].pos)], loc[i].pos) IN
       IF dif = 0 THEN loc' = [loc EXCEPT ![i].pc = "PushCasTail"]
       ELSE IF dif < 0 /\ i \notin Patient THEN Done(i, FALSE)  \* full: push returns false
       ELSE Retry(i, "PushReadTail")   \* full: pushPatiently pushes again; or another producer claimed pos
    /\ UNCHANGED shared
    /\ Book(i)

PushCasTail(i) ==
    /\ loc[i].pc = "PushCasTail"
    /\ IF Wrap(tail) = Wrap(loc[i].pos)
         THEN /\ tail' = tail + 1
              /\ sent' = [sent EXCEPT ![i] = @ + 1]
              \* The claimed word is Wrap(pos) = Wrap(tail): unwrapped, it stands for tail (the two
              \* differ only after an ABA, which NoAbaCas checks never happens).
              /\ loc' = [loc EXCEPT ![i].pc = "PushWriteValue", ![i].pos = tail]
         ELSE /\ Retry(i, "PushReadTail")            \* another producer claimed pos: read tail again
              /\ UNCHANGED <<tail, sent>>
    /\ UNCHANGED <<head, seq, val, taken>>
    /\ Book(i)

PushWriteValue(i) ==
    /\ loc[i].pc = "PushWriteValue"
    /\ val' = [val EXCEPT ![Slot(loc[i].pos)] = loc[i].v]
    /\ loc' = [loc EXCEPT ![i].pc = "PushPublishSeq"]
    /\ UNCHANGED <<head, tail, seq, sent, taken>>
    /\ Book(i)

PushPublishSeq(i) ==
    /\ loc[i].pc = "PushPublishSeq"
    /\ seq' = [seq EXCEPT ![Slot(loc[i].pos)] = loc[i].pos + 1]
    /\ Done(i, TRUE)                                  \* returns true
    /\ UNCHANGED <<head, tail, val, sent, taken>>
    /\ Book(i)

-----------------------------------------------------------------------------
(* pop.                                                                    *)

PopReadHead(i) ==
    /\ \/ loc[i].pc = "Idle" /\ i \in Consumers
       \/ loc[i].pc = "PopReadHead"
    /\ loc' = [loc EXCEPT ![i].pc = "PopReadSeq", ![i].pos = head]
    /\ UNCHANGED shared
    /\ Book(i)

\* Position pos is not published yet: pop returns EMPTY.
PopSeesEmpty(i) == Diff(seq[Slot(loc[i].pos)], loc[i].pos + 1) < 0

PopReadSeq(i) ==
    /\ loc[i].pc = "PopReadSeq"
    /\ LET dif == Diff(seq[Slot(loc[i].pos)], loc[i].pos + 1) IN
       IF dif = 0 THEN loc' = [loc EXCEPT ![i].pc = "PopCasHead"]
       ELSE IF dif < 0 THEN Done(i, EMPTY)
       ELSE Retry(i, "PopReadHead")                  \* another consumer claimed pos: read head again
    /\ UNCHANGED shared
    /\ Book(i)

PopCasHead(i) ==
    /\ loc[i].pc = "PopCasHead"
    /\ IF Wrap(head) = Wrap(loc[i].pos)
         THEN /\ head' = head + 1
              /\ loc' = [loc EXCEPT ![i].pc = "PopReadValue", ![i].pos = head, ![i].claim = PosValue(head)]
         ELSE /\ Retry(i, "PopReadHead")             \* another consumer claimed pos: read head again
              /\ UNCHANGED head
    /\ UNCHANGED <<tail, seq, val, sent, taken>>
    /\ Book(i)

PopReadValue(i) ==
    /\ loc[i].pc = "PopReadValue"
    /\ LET v == val[Slot(loc[i].pos)] IN
       /\ taken' = [taken EXCEPT ![v] = @ + 1]
       /\ loc' = [loc EXCEPT ![i].pc = "PopReleaseSeq", ![i].v = v, ![i].claim = Unwritten]
    /\ UNCHANGED <<head, tail, seq, val, sent>>
    /\ Book(i)

PopReleaseSeq(i) ==
    /\ loc[i].pc = "PopReleaseSeq"
    /\ seq' = [seq EXCEPT ![Slot(loc[i].pos)] = loc[i].pos + Capacity]
    /\ Done(i, loc[i].v)                              \* returns the value read
    /\ UNCHANGED <<head, tail, val, sent, taken>>
    /\ Book(i)

-----------------------------------------------------------------------------
(* length: two reads, head first. Its answer is not used here (its         *)
(* callers: the main thread's recheck of the completion queue,             *)
(* MainRecheckCompletions in SleepWake.tla, and the batch size of          *)
(* worker/search.ts's findWork); LengthCoversSize says what it means.      *)

LengthReadHead(i) ==
    /\ loc[i].pc = "Idle" /\ i \in Consumers /\ Lengths
    /\ loc' = [loc EXCEPT ![i].pc = "LengthReadTail", ![i].pos = head]
    /\ UNCHANGED shared
    /\ Book(i)

\* What length returns when it reads tail in this state.
LengthResult(i) == Clamp(Diff(tail, loc[i].pos))

LengthReadTail(i) ==
    /\ loc[i].pc = "LengthReadTail"
    /\ Done(i, LengthResult(i))
    /\ UNCHANGED shared
    /\ Book(i)

-----------------------------------------------------------------------------
\* The actions, one per `// spec: Name` in lib/protocol/injector.ts. tests/repo/spec_names_test.ts reads this
\* definition: every operator called in it is an action and must be named in the code, and back.
Step(i) ==
    \/ PushReadTail(i) \/ PushReadSeq(i) \/ PushCasTail(i) \/ PushWriteValue(i) \/ PushPublishSeq(i)
    \/ PopReadHead(i) \/ PopReadSeq(i) \/ PopCasHead(i) \/ PopReadValue(i) \/ PopReleaseSeq(i)
    \/ LengthReadHead(i) \/ LengthReadTail(i)

Next == \E i \in Threads : Step(i)

\* Liveness assumption ("while consumers keep popping"): every started operation keeps taking steps
\* (weak fairness of each thread's steps), and every consumer starts a pop again and again (strong
\* fairness, since a thread may start other operations in between).
Fairness == \A i \in Threads : WF_vars(Step(i)) /\ (i \in Consumers => SF_vars(PopReadHead(i)))

Spec == Init /\ [][Next]_vars /\ Fairness

-----------------------------------------------------------------------------
(* The queue as the atomic specification sees it (refinement mapping).     *)
(* A push linearizes at its successful PushCasTail, a pop at its           *)
(* successful PopCasHead; the value a consumer has claimed is in its hand  *)
(* until PopReadValue returns it.                                          *)

AbsQ == [k \in 1..(tail - head) |-> PosValue(head + k - 1)]
AbsHand(i) == IF loc[i].pc \in HandPCs THEN << loc[i].claim >> ELSE << >>

Atomic == INSTANCE AtomicQueue
    WITH q <- AbsQ, hand <- [i \in Consumers |-> AbsHand(i)], taken <- [v \in Values |-> taken[v]]

abs == << AbsQ, [i \in Consumers |-> AbsHand(i)], taken, sent >>

\* Linearizability of every push that succeeds and every pop that returns a value: every step is a
\* step of the atomic queue or leaves it unchanged (the unchanged case first, as TLC tries it first).
Refinement == Atomic!Init /\ [][abs' = abs \/ Atomic!Next]_vars

-----------------------------------------------------------------------------
(* Invariants.                                                             *)

PCs == {"Idle", "PushReadTail", "PushReadSeq", "PushCasTail", "PushWriteValue", "PushPublishSeq",
        "PopReadHead", "PopReadSeq", "PopCasHead", "PopReadValue", "PopReleaseSeq", "LengthReadTail"}

TypeOK ==
    /\ head \in Nat /\ tail \in Nat
    /\ seq \in [0..Capacity - 1 -> Nat]
    /\ val \in [0..Capacity - 1 -> AllValues]
    /\ \A i \in Threads :
         /\ loc[i].pc \in PCs /\ loc[i].pos \in Nat
         /\ loc[i].v \in AllValues /\ loc[i].claim \in AllValues
    /\ sent \in [Producers -> 0..PushesEach]
    /\ taken \in [AllValues -> Nat]
    /\ \A i \in Threads : ret[i].op \in {"none", "push", "pop", "length"} /\ obs[i].empty \in BOOLEAN /\ obs[i].claimed \in BOOLEAN
    /\ returned \subseteq AllValues

\* No consumer passes a producer, and at most Capacity positions are claimed and not yet consumed.
IndexBounds == head <= tail /\ tail - head <= Capacity

\* The code's view of every difference it computes (the wrapping difference of two words) is the
\* true one, in every state where its next step computes it: the sequence tests of push and pop, and
\* length's size.
WrappingDiffExact ==
    \A i \in Threads :
        /\ loc[i].pc = "PushReadSeq" =>
             Diff(seq[Slot(loc[i].pos)], loc[i].pos) = seq[Slot(loc[i].pos)] - loc[i].pos
        /\ loc[i].pc = "PopReadSeq" =>
             Diff(seq[Slot(loc[i].pos)], loc[i].pos + 1) = seq[Slot(loc[i].pos)] - (loc[i].pos + 1)
        /\ loc[i].pc = "LengthReadTail" => Diff(tail, loc[i].pos) = tail - loc[i].pos

\* The module doc's slot protocol. The last Capacity positions claimed by producers, tail - Capacity ..
\* tail - 1, cover every slot once; for each such position p, its slot's sequence word says:
\* - p, free for p: p's producer has claimed it and not yet published (it is in flight);
\* - p + 1, holds p's value: p is queued (p >= head), or a consumer claimed it and has not released it;
\* - p + Capacity, free for the next lap: p was consumed and released.
SlotProtocol ==
    \A p \in (tail - Capacity)..(tail - 1) :
        LET s == Slot(p) IN
        \/ seq[s] = p /\ p >= head /\ \E j \in Producers : Pushing(j, p)
        \/ seq[s] = p + 1 /\ p >= head /\ ~\E j \in Producers : Pushing(j, p)
        \/ seq[s] = p + 1 /\ p < head /\ \E j \in Consumers : Holding(j, p)
        \/ seq[s] = p + Capacity /\ p < head /\ ~\E j \in Consumers : Holding(j, p)

Count(s, x) == Cardinality({k \in 1..Len(s) : s[k] = x})

\* How often value x occurs: returned by a pop, plus queued, plus in a consumer's hand.
Occurrences(x) ==
    LET RECURSIVE Sum(_)
        Sum(S) == IF S = {} THEN 0
                  ELSE LET c == CHOOSE c \in S : TRUE IN Count(AbsHand(c), x) + Sum(S \ {c})
    IN taken[x] + Count(AbsQ, x) + Sum(Consumers)

\* Conservation: every pushed value is returned by a pop exactly once, or is still queued, or is in
\* the hand of the consumer that claimed it; a value not yet pushed is nowhere.
Conservation == \A x \in Values : Occurrences(x) = IF x[2] <= sent[x[1]] THEN 1 ELSE 0

\* No value is returned twice, and no pop returns a value word no producer wrote.
NoDuplicates == taken[Unwritten] = 0 /\ \A x \in Values : taken[x] <= 1

\* A value has been claimed by a consumer: returned, or in the hand of the consumer that claimed it.
Claimed(x) == taken[x] > 0 \/ \E c \in Consumers : AbsHand(c) = << x >>

\* FIFO per producer: consumers claim one producer's values in the order it pushed them. (Pops may
\* return them in another order: a consumer that claimed later may return first.)
FifoPerProducer ==
    \A i \in Producers, k \in 1..PushesEach :
        Claimed(<<i, k>>) => \A j \in 1..k - 1 : Claimed(<<i, j>>)

-----------------------------------------------------------------------------
(* Properties of steps.                                                    *)

\* Thread i's compare-exchange succeeds in this step.
PushClaims(i) == loc[i].pc = "PushCasTail" /\ Wrap(tail) = Wrap(loc[i].pos)
PopClaims(i) == loc[i].pc = "PopCasHead" /\ Wrap(head) = Wrap(loc[i].pos)

\* No ABA: a compare-exchange succeeds only on the very position the thread read, never on one a
\* Modulus later.
NoAbaCas ==
    [][\A i \in Threads :
         /\ PushClaims(i) /\ PushCasTail(i) => tail = loc[i].pos
         /\ PopClaims(i) /\ PopCasHead(i) => head = loc[i].pos]_vars

\* No stale read: a pop returns the value of the position it claimed, as it was at the claim (the
\* value its producer pushed), not an older or newer value of the same slot.
NoStaleRead ==
    [][\A i \in Threads :
         (loc[i].pc = "PopReadValue" /\ PopReadValue(i)) => val[Slot(loc[i].pos)] = loc[i].claim]_vars

\* head and tail only move forward, one claim at a time.
PositionsMonotonic == [][tail' \in {tail, tail + 1} /\ head' \in {head, head + 1}]_vars

\* Lock-free claims: an operation goes back to its first read (a failed compare-exchange, or a
\* sequence word a lap ahead) only because another operation claimed the position it read meanwhile.
\* (pushPatiently's retry after a full queue is not such a retry; PushFailJustified covers it.)
RetryOnlyAfterProgress ==
    [][\A i \in Threads :
         /\ (loc[i].pc = "PushCasTail" \/ (loc[i].pc = "PushReadSeq" /\ ~PushSeesFull(i)))
              /\ loc'[i].pc = "PushReadTail" => tail > loc[i].pos
         /\ loc[i].pc \in {"PopReadSeq", "PopCasHead"} /\ loc'[i].pc = "PopReadHead" => head > loc[i].pos]_vars

\* The module doc's claim: push fails only when Capacity positions are claimed and not consumed (the
\* queue is full; one of them may still be in its producer's hands), or when the consumer that claimed
\* the position one lap back has not released its slot yet.
PushFailJustified ==
    [][\A i \in Threads :
         (loc[i].pc = "PushReadSeq" /\ PushReadSeq(i) /\ PushSeesFull(i))
             => \/ tail - head = Capacity
                \/ \E c \in Consumers : Holding(c, loc[i].pos - Capacity)]_vars

\* pop returns EMPTY only at the oldest unconsumed position (head), when the queue is empty or that
\* position's producer has claimed it and not yet published (the queue is then not empty: values of
\* later positions may be published; this is the EMPTY the module doc admits).
PopEmptyJustified ==
    [][\A i \in Threads :
         (loc[i].pc = "PopReadSeq" /\ PopReadSeq(i) /\ PopSeesEmpty(i))
             => /\ head = loc[i].pos
                /\ \/ tail = head
                   \/ \E j \in Producers : Pushing(j, head)]_vars

\* length never reports less than the size at its read of tail, and reports 0 only if the queue was
\* empty from its read of head to its read of tail (head = tail = the head it read; with
\* PositionsMonotonic, nothing was pushed or popped in between). With PositionsMonotonic, a result > 0
\* also means the queue was non-empty at some moment of the call (spec/docs/Injector.md).
LengthCoversSize ==
    [][\A i \in Threads :
         (loc[i].pc = "LengthReadTail" /\ LengthReadTail(i))
             => /\ LengthResult(i) >= tail - head
                /\ LengthResult(i) = 0 => head = loc[i].pos /\ tail = loc[i].pos]_vars

\* pop is judged by its answer (ret), whichever path of the code produced it: EMPTY only if the queue
\* was empty (EmptyIn) at some state of the pop's interval, and only having claimed no position; a
\* value only if some producer pushed it and no pop returned it before.
PopReturns ==
    [][\A i \in Threads :
         Returns(i) /\ ret'[i].op = "pop" =>
             IF ret'[i].val = EMPTY
               THEN /\ ~obs[i].claimed /\ loc[i].pc \notin PopPCs
                    /\ obs[i].empty \/ EmptyIn(head', tail', loc')
               ELSE /\ ret'[i].val \in Values
                    /\ ret'[i].val[2] <= sent[ret'[i].val[1]]
                    /\ ret'[i].val \notin returned]_vars

-----------------------------------------------------------------------------
(* Liveness: while consumers keep popping, every pushed value is popped,   *)
(* and every push returns (pushPatiently's included).                      *)

EveryValuePopped == \A x \in Values : (x[2] <= sent[x[1]]) ~> (taken[x] >= 1)

InPush(i) == loc[i].pc \in {"PushReadTail", "PushReadSeq", "PushCasTail", "PushWriteValue", "PushPublishSeq"}
EveryPushReturns == \A i \in Producers : InPush(i) ~> ~InPush(i)
=============================================================================
