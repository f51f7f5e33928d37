--------------------------- MODULE ChaseLevDeath ---------------------------
(***************************************************************************)
(* Kill anywhere, for the deques of lib/protocol/deque.ts: a thread may die between *)
(* any two of its steps (Die), and the main thread's recovery completes    *)
(* the operation it died in, on its own deque, in its place, before a      *)
(* replacement owns that deque (lib/owner/recovery.ts completeCutOperations: *)
(* Deque.repair on a handle over the dead owner's notes).                  *)
(*                                                                         *)
(* It models lib/protocol/deque.ts's notes and `repair`, and lib/owner/recovery.ts, at *)
(* the grain of one recovery step, not one action per access, so it has   *)
(* no code line and the code names none of its actions                    *)
(* (tests/repo/spec_names_test.ts): the live threads' actions are ChaseLev.tla's.*)
(*                                                                         *)
(* The notes are the dead thread's pc and locals here. The code notes, in *)
(* plain element stores of words in the pool's buffer that no interrupt   *)
(* can come between (a runtime stops a thread at a call or a loop's back  *)
(* edge):                                                                  *)
(* - POPPING (the index b it reserves) before PopReserveBottom, until the  *)
(*   pop returns; POP_TAKEN (and the task) once its PopCasTop won the last *)
(*   task, until PopRestoreBottom;                                         *)
(* - RECEIVING (dst's bottom db, the tasks written, a task claimed and not *)
(*   yet written) from its first HalfReadSlot of a steal-half into its own *)
(*   deque until HalfPublishDst, or until a first HalfCasTop that lost.    *)
(* A pop that returns a task, and a single steal, return it to the caller, *)
(* whose own marks are then the pool's concern (tests/pool/death_test.ts).      *)
(*                                                                         *)
(* Recovery (RecoverDeque), by the note, then the thread is replaced: it   *)
(* lives again, Idle, on the same deque (each thread dies at most once).   *)
(* - POPPING: bottom is put back over b if it is still b (the reserved    *)
(*   task is in the deque again, or a thief took it and this is the       *)
(*   restore);                                                             *)
(* - POP_TAKEN: bottom restored, and the task the pop won but never        *)
(*   returned is pushed back (the pop is undone: it no longer counts as    *)
(*   taken);                                                               *)
(* - RECEIVING: a claimed task not yet written is written, and the tasks  *)
(*   written are published (dst's bottom).                                 *)
(*                                                                         *)
(* Checked (ChaseLevDeath.cfg): the deque invariants of ChaseLev.tla that  *)
(* hold across a death (TypeOK, IndexBounds, WrappingDiffExact,            *)
(* DstCopiesInRange, Conservation, NoDuplicates), and under fairness that  *)
(* every pushed task ends up taken exactly once (AllTaken) and returned   *)
(* to a caller (AllReturned).                                              *)
(***************************************************************************)
EXTENDS ChaseLev

CONSTANTS
    Mortal       \* the threads that may die (each at most once)

ASSUME Mortal \subseteq Threads

VARIABLES
    dead,        \* the threads dead and not yet recovered (and replaced)
    died         \* the threads that died

dvars == <<vars, dead, died>>
DView == <<View, dead, died>>

DInit == Init /\ dead = {} /\ died = {}

\* A live thread's step, as in ChaseLev.tla.
Live(i) == i \notin dead /\ Step(i) /\ UNCHANGED <<dead, died>>

\* Thread i dies, between any two of its steps (at whatever pc it is).
Die(i) ==
    /\ i \in Mortal \ died
    /\ dead' = dead \cup {i}
    /\ died' = died \cup {i}
    /\ UNCHANGED vars

PoppingPCs == {"PopReserveBottom", "PopReadTop", "PopReadSlot", "PopCasTop", "PopRestoreEmpty"}
ReceivingPCs == {"HalfReadSlot", "HalfCasTop", "HalfWriteDst", "HalfRecheckBottom", "HalfPublishDst"}

\* The note, from the dead thread's pc and locals.
Popping(i) == loc[i].pc \in PoppingPCs \/ (loc[i].pc = "PopRestoreBottom" /\ ~loc[i].won)
PopTaken(i) == loc[i].pc = "PopRestoreBottom" /\ loc[i].won
Receiving(i) == loc[i].pc \in ReceivingPCs

\* The main thread completes the dead thread's noted operation on its deque, then starts its replacement.
RecoverDeque(i) ==
    /\ i \in dead
    /\ LET b == loc[i].b
           g == loc[i].got
           db == loc[i].db
           written == IF loc[i].pc = "HalfWriteDst" THEN g + 1 ELSE g
       IN CASE Popping(i) ->
                 /\ bottom' = IF bottom[i] = b THEN [bottom EXCEPT ![i] = b + 1] ELSE bottom
                 /\ UNCHANGED <<slot, taken>>
            [] PopTaken(i) ->
                 \* Restored (bottom = b + 1 = top: empty), then the won task pushed back at b + 1.
                 /\ slot' = [slot EXCEPT ![i][Slot(b + 1)] = loc[i].v]
                 /\ bottom' = [bottom EXCEPT ![i] = b + 2]
                 /\ taken' = [taken EXCEPT ![loc[i].v] = @ - 1]
            [] Receiving(i) ->
                 /\ slot' = IF loc[i].pc = "HalfWriteDst"
                              THEN [slot EXCEPT ![i][Slot(db + g)] = loc[i].v] ELSE slot
                 /\ bottom' = IF written > 0 THEN [bottom EXCEPT ![i] = db + written] ELSE bottom
                 /\ UNCHANGED taken
            [] OTHER -> UNCHANGED <<bottom, slot, taken>>
    /\ dead' = dead \ {i}
    /\ UNCHANGED <<top, pushed, died, ret, returned>>
    /\ loc' = [loc EXCEPT ![i] = Idle(i)]
    /\ Observe(i)

Recover(i) == RecoverDeque(i)

DNext ==
    \/ \E i \in Threads : Live(i)
    \/ \E i \in Threads : Die(i)
    \/ \E i \in Threads : Recover(i)

\* Live threads as in ChaseLev.tla (their operations go on, each pops its own deque again and again);
\* the main thread recovers every death. Deaths are not forced.
DFairness ==
    \A i \in Threads :
        /\ WF_dvars(Live(i))
        /\ SF_dvars(i \notin dead /\ PopReadBottom(i) /\ UNCHANGED <<dead, died>>)
        /\ WF_dvars(Recover(i))

DSpec == DInit /\ [][DNext]_dvars /\ DFairness

\* Every pushed task ends up taken exactly once (none hidden, lost or left in a dead thread's hand).
AllTaken == <>[](\A k \in 1..Pushes : k <= pushed => taken[k] = 1)

\* And returned to a caller by a pop or a steal: a task a dead thread's pop had won (taken) but never
\* returned is not lost.
AllReturned == <>[](\A k \in 1..Pushes : k <= pushed => k \in returned)
=============================================================================
