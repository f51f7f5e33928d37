--------------------------- MODULE InjectorDeath ---------------------------
(***************************************************************************)
(* Kill anywhere, for the queue of lib/protocol/injector.ts (the injector, the *)
(* free lists and the completion queue): a thread may die between any two *)
(* of its steps (Die), and the main thread's recovery completes what it    *)
(* had claimed, in its place (recovery.ts completeCutOperations:           *)
(* Injector.repair on a handle over the dead thread's notes).              *)
(*                                                                         *)
(* It models lib/protocol/injector.ts (the notes, `repair`) and lib/owner/recovery.ts at *)
(* the grain of whole recovery steps, not one action per access, so it    *)
(* has no code line and the code names none of its actions               *)
(* (tests/repo/spec_names_test.ts): the live threads' actions are Injector.tla's.*)
(*                                                                         *)
(* The notes are the dead thread's pc and locals here. The code notes      *)
(* PUSHING (position and value) right after its PushCasTail succeeds and   *)
(* POPPING (position) right after its PopCasHead succeeds, in plain        *)
(* element stores that no interrupt can come between, and clears the note *)
(* after the publish or the release; a runtime stops a thread only at a    *)
(* call or a loop's back edge. So a thread that died with its pc in        *)
(* PushPCs had noted PUSHING, one in PopPCs POPPING, and one elsewhere     *)
(* had claimed nothing (its note says WHOLE).                              *)
(*                                                                         *)
(* Recovery, one dead thread at a time (the main thread handles deaths one *)
(* after another):                                                         *)
(* - RecoverPublish: a push's claimed position, if not yet published      *)
(*   (seq = pos), gets its value and is published: the repair's two        *)
(*   stores, one step here (no other thread touches a claimed, unpublished *)
(*   slot);                                                                *)
(* - RecoverRelease: a pop's claimed position is released (if its seq still*)
(*   holds the value), and its value, which the pop never returned, is     *)
(*   taken in hand to be pushed again (the repair's RETURNING: read from   *)
(*   the slot if the pop had not read it; a pop that had read it is undone,*)
(*   so the read no longer counts as taken);                               *)
(* - RecoverPush: that value is pushed again, as pushPatiently does (one   *)
(*   step here, when the tail position's slot is free: the push's own      *)
(*   steps are checked in Injector.tla), and loses its place in FIFO order.*)
(*                                                                         *)
(* Checked (InjectorDeath.cfg): every value pushed is returned by a pop    *)
(* exactly once, or is queued, in a live pop's hand or in the recovery's   *)
(* (Conserved); none is returned twice; the slot protocol holds; and,      *)
(* with consumers that keep popping, every value pushed is popped          *)
(* (EveryValuePopped): no position stays claimed by the dead. Not checked  *)
(* here: FIFO order (a value pushed again loses its place) and the         *)
(* refinement to AtomicQueue (which has no undone pop).                    *)
(***************************************************************************)
EXTENDS Injector

CONSTANTS
    Mortal       \* the threads that may die (each at most once)

ASSUME Mortal \subseteq Threads

VARIABLES
    dead,        \* the threads that died
    recovered,   \* the dead threads whose recovery is done
    returning    \* << v >>: a value a recovery is pushing again, or << >>

dvars == <<vars, dead, recovered, returning>>
DView == <<View, dead, recovered, returning>>

DInit == Init /\ dead = {} /\ recovered = {} /\ returning = << >>

\* A live thread's step, as in Injector.tla.
Live(i) == i \notin dead /\ Step(i) /\ UNCHANGED <<dead, recovered, returning>>

\* Thread i dies, between any two of its steps (at whatever pc it is).
Die(i) ==
    /\ i \in Mortal \ dead
    /\ dead' = dead \cup {i}
    /\ UNCHANGED <<vars, recovered, returning>>

\* Recovery of thread i may begin: it is dead, not yet recovered, and no other recovery is under way.
Recovering(i) == i \in dead \ recovered /\ returning = << >>

\* The bookkeeping of a recovery step: the dead thread's locals are dropped (loc Idle: it holds nothing,
\* and takes no more steps), every live pop's interval sees the change (Observe), no operation returns.
\* (Last in each action: Observe reads the new head and tail.)
RecoverBook(i) ==
    /\ loc' = [loc EXCEPT ![i] = Idle]
    /\ recovered' = recovered \cup {i}
    /\ Observe
    /\ UNCHANGED <<ret, returned, dead>>

\* Nothing claimed (its note says WHOLE): nothing to do.
RecoverNothing(i) ==
    /\ Recovering(i)
    /\ loc[i].pc \notin PushPCs \cup PopPCs
    /\ UNCHANGED <<head, tail, seq, val, sent, taken, returning>>
    /\ RecoverBook(i)

\* PUSHING: publish the claimed position with the noted value, if the push had not.
RecoverPublish(i) ==
    /\ Recovering(i)
    /\ loc[i].pc \in PushPCs
    /\ LET p == loc[i].pos IN
       IF seq[Slot(p)] = p
         THEN /\ val' = [val EXCEPT ![Slot(p)] = loc[i].v]
              /\ seq' = [seq EXCEPT ![Slot(p)] = p + 1]
         ELSE UNCHANGED <<val, seq>>
    /\ UNCHANGED <<head, tail, sent, taken, returning>>
    /\ RecoverBook(i)

\* POPPING: release the claimed position (if the pop had not) and take its value in hand, to push it
\* again; a value the pop had read (PopReleaseSeq) was never returned: its read no longer counts.
RecoverRelease(i) ==
    /\ Recovering(i)
    /\ loc[i].pc \in PopPCs
    /\ LET p == loc[i].pos
           v == IF loc[i].pc = "PopReadValue" THEN val[Slot(p)] ELSE loc[i].v
       IN /\ seq' = IF seq[Slot(p)] = p + 1 THEN [seq EXCEPT ![Slot(p)] = p + Capacity] ELSE seq
          /\ taken' = IF loc[i].pc = "PopReleaseSeq" THEN [taken EXCEPT ![v] = @ - 1] ELSE taken
          /\ returning' = << v >>
    /\ UNCHANGED <<head, tail, val, sent>>
    /\ RecoverBook(i)

\* The value in hand is pushed again (pushPatiently: it waits for the tail position's slot to be free).
RecoverPush ==
    /\ returning /= << >>
    /\ seq[Slot(tail)] = tail
    /\ val' = [val EXCEPT ![Slot(tail)] = returning[1]]
    /\ seq' = [seq EXCEPT ![Slot(tail)] = tail + 1]
    /\ tail' = tail + 1
    /\ returning' = << >>
    /\ UNCHANGED <<head, loc, sent, taken, ret, returned, dead, recovered>>
    /\ Observe

Recover(i) == RecoverNothing(i) \/ RecoverPublish(i) \/ RecoverRelease(i)

DNext ==
    \/ \E i \in Threads : Live(i)
    \/ \E i \in Threads : Die(i)
    \/ \E i \in Threads : Recover(i)
    \/ RecoverPush

\* Live threads as in Injector.tla (their steps go on; live consumers pop again and again); the main
\* thread handles every death and finishes the push it started. Deaths are not forced.
DFairness ==
    /\ \A i \in Threads : WF_dvars(Live(i)) /\ (i \in Consumers => SF_dvars(i \notin dead /\ PopReadHead(i) /\ UNCHANGED <<dead, recovered, returning>>))
    /\ \A i \in Threads : WF_dvars(Recover(i))
    /\ WF_dvars(RecoverPush)

DSpec == DInit /\ [][DNext]_dvars /\ DFairness

-----------------------------------------------------------------------------
\* Where a value can be: returned by a pop, queued, in a live pop's hand, or in the recovery's hand.
Conserved ==
    \A x \in Values :
        Occurrences(x) + (IF returning = << x >> THEN 1 ELSE 0) = IF x[2] <= sent[x[1]] THEN 1 ELSE 0

\* With live consumers that keep popping, every value pushed ends up returned by a pop exactly once
\* (no position stays claimed by the dead, no value stays in a dead pop's hand).
AllPopped == <>[](\A x \in Values : x[2] <= sent[x[1]] => taken[x] = 1)

\* Once its recovery is done, no position is left claimed by a dead thread.
NothingClaimedByTheDead ==
    \A i \in recovered : loc[i].pc \notin PushPCs \cup PopPCs
=============================================================================
