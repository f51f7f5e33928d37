---------------------------- MODULE AtomicQueue ----------------------------
(***************************************************************************)
(* The sequential specification that Injector.tla refines: one bounded     *)
(* FIFO queue, each operation one atomic step.                             *)
(*                                                                         *)
(* - Push: producer i appends its next value at the tail (only if fewer    *)
(*   than Capacity values are queued). Producer i's k-th value is <<i, k>>.*)
(* - Pop: consumer i removes the oldest value into its hand.               *)
(* - Take: consumer i returns the value in its hand.                       *)
(*                                                                         *)
(* A pop is two steps because the code claims a position (its linearization*)
(* point) before it reads the value: between the two the value is in no    *)
(* queue, but it is already decided which value the consumer will return.  *)
(* A push that returns false and a pop that returns EMPTY change nothing,  *)
(* so they are stutters here; Injector.tla states separately, as action    *)
(* properties, when the code may return them (see spec/docs/Injector.md).  *)
(***************************************************************************)
EXTENDS Integers, Sequences

CONSTANTS Producers, Consumers, Capacity, PushesEach

Values == Producers \X (1..PushesEach)

VARIABLES
    q,       \* Seq(value): the queue, oldest first
    hand,    \* [Consumers -> Seq(value)]: a popped value not yet returned (at most one)
    taken,   \* [values -> Nat]: how many times each value was returned by a pop
    sent     \* [Producers -> Nat]: values each producer has pushed

vars == <<q, hand, taken, sent>>

Init ==
    /\ q = << >>
    /\ hand = [i \in Consumers |-> << >>]
    /\ taken = [v \in Values |-> 0]
    /\ sent = [i \in Producers |-> 0]

Push(i) ==
    /\ sent[i] < PushesEach
    /\ Len(q) < Capacity
    /\ q' = Append(q, <<i, sent[i] + 1>>)
    /\ sent' = [sent EXCEPT ![i] = @ + 1]
    /\ UNCHANGED <<hand, taken>>

Pop(i) ==
    /\ q /= << >> /\ hand[i] = << >>
    /\ hand' = [hand EXCEPT ![i] = << Head(q) >>]
    /\ q' = Tail(q)
    /\ UNCHANGED <<taken, sent>>

Take(i) ==
    /\ hand[i] /= << >>
    /\ taken' = [taken EXCEPT ![Head(hand[i])] = @ + 1]
    /\ hand' = [hand EXCEPT ![i] = << >>]
    /\ UNCHANGED <<q, sent>>

Next ==
    \/ \E i \in Producers : Push(i)
    \/ \E i \in Consumers : Pop(i) \/ Take(i)

Spec == Init /\ [][Next]_vars
=============================================================================
