---------------------------- MODULE AtomicDeque ----------------------------
(***************************************************************************)
(* The sequential specification that ChaseLev.tla refines: one bounded    *)
(* deque per thread, each operation one atomic step.                        *)
(*                                                                          *)
(* - Push: the owner appends a new task at the bottom (only if not full).   *)
(* - Pop: a thread takes the newest task of its own deque.                  *)
(* - Steal: a thread takes the oldest task of another thread's deque.       *)
(* - Claim / Publish: steal-half. The thief claims the oldest n tasks of a  *)
(*   victim (n >= 1; the real code claims one at a time, a batch claim is   *)
(*   allowed here so that a correct batch claim is not rejected), holding  *)
(*   them in its hand, then publishes its whole hand at the bottom of its   *)
(*   own deque in one step. Tasks in a hand are in no deque: the caller of  *)
(*   stealHalfInto sees them only after the publish, when it returns.      *)
(*                                                                          *)
(* A steal or pop that returns EMPTY/RETRY changes nothing, so it is a     *)
(* stutter here; ChaseLev.tla checks separately, as action properties,      *)
(* that pop's EMPTY and push's "full" are exact and that steal's EMPTY is  *)
(* justified (see spec/docs/ChaseLev.md).                                   *)
(***************************************************************************)
EXTENDS Integers, Sequences

CONSTANTS Owner, Thieves, Capacity, Pushes

Threads == {Owner} \cup Thieves

VARIABLES
    q,       \* [Threads -> Seq(task)]: each thread's deque, oldest first
    hand,    \* [Threads -> Seq(task)]: tasks claimed by a steal-half, not yet published
    taken,   \* [0..Pushes -> Nat]: how many times each task was returned by pop or steal
    pushed   \* tasks pushed so far; task k is the k-th push

vars == <<q, hand, taken, pushed>>

Init ==
    /\ q = [d \in Threads |-> << >>]
    /\ hand = [i \in Threads |-> << >>]
    /\ taken = [k \in 0..Pushes |-> 0]
    /\ pushed = 0

Push ==
    /\ pushed < Pushes
    /\ Len(q[Owner]) < Capacity
    /\ q' = [q EXCEPT ![Owner] = Append(@, pushed + 1)]
    /\ pushed' = pushed + 1
    /\ UNCHANGED <<hand, taken>>

Pop(i) ==
    /\ q[i] /= << >>
    /\ taken' = [taken EXCEPT ![q[i][Len(q[i])]] = @ + 1]
    /\ q' = [q EXCEPT ![i] = SubSeq(@, 1, Len(@) - 1)]
    /\ UNCHANGED <<hand, pushed>>

Steal(i, d) ==
    /\ q[d] /= << >>
    /\ taken' = [taken EXCEPT ![Head(q[d])] = @ + 1]
    /\ q' = [q EXCEPT ![d] = Tail(@)]
    /\ UNCHANGED <<hand, pushed>>

Claim(i, d) ==
    \E n \in 1..Len(q[d]) :
        /\ hand' = [hand EXCEPT ![i] = @ \o SubSeq(q[d], 1, n)]
        /\ q' = [q EXCEPT ![d] = SubSeq(@, n + 1, Len(@))]
        /\ UNCHANGED <<taken, pushed>>

Publish(i) ==
    /\ hand[i] /= << >>
    /\ Len(q[i]) + Len(hand[i]) <= Capacity
    /\ q' = [q EXCEPT ![i] = @ \o hand[i]]
    /\ hand' = [hand EXCEPT ![i] = << >>]
    /\ UNCHANGED <<taken, pushed>>

Next ==
    \/ Push
    \/ \E i \in Threads :
        \/ Pop(i)
        \/ Publish(i)
        \/ \E d \in Threads \ {i} : Steal(i, d) \/ Claim(i, d)

Spec == Init /\ [][Next]_vars
=============================================================================
