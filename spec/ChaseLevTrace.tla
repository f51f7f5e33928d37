--------------------------- MODULE ChaseLevTrace ---------------------------
(***************************************************************************)
(* Trace validation of lib/protocol/deque.ts (Cirstea, Kuppe, Loillier, Merz, *)
(* "Validating Traces of Distributed Programs Against TLA+                 *)
(* Specifications", 2024): is a recorded run of the real pool a behaviour  *)
(* of ChaseLev?                                                            *)
(*                                                                          *)
(* The log (ChaseLevTraceData.tla, written by spec/trace.ts from a run of  *)
(* spec/trace/run.ts) lists every access any thread made to any deque's  *)
(* words, in the order they took effect. Each access must be the next step *)
(* of its thread in ChaseLev: the action that thread's program counter     *)
(* allows must access the same word (deque, top/bottom/slot, slot index)   *)
(* the same way (load, store, compare-exchange), and see and leave the     *)
(* values the code saw and left. TLC searches the spec's choices (which    *)
(* operation starts, which victim) breadth-first, each state holding how  *)
(* many records it has matched (l). The log is ACCEPTED when the complete  *)
(* search reaches depth Len(TraceLog) + 1 (some behaviour matched every    *)
(* record), REJECTED when it stops short: the record at that depth is the  *)
(* first no behaviour can take (spec/trace.ts prints it).                  *)
(*                                                                          *)
(* The roles are the real pool's, through ChaseLev's overridable           *)
(* definitions (ChaseLevTrace.cfg): every thread pushes (TraceCanPush) the *)
(* record ids the log shows (TracePushValue) and steals half from every    *)
(* other (TraceHalfVictims); thread d owns deque d. Values are record ids, *)
(* which the pool reuses, so the invariants about task identity            *)
(* (Conservation, NoDuplicates) do not apply; those about indices do and   *)
(* are checked on the way, with the properties of steps.                   *)
(***************************************************************************)
EXTENDS ChaseLev, ChaseLevTraceData

\* ChaseLevTraceData defines:
\*   TraceLog: a sequence of <<thread, kind, deque, word, slot, old, now>> (kind 1 load, 2 store,
\*     3 compare-exchange; word 0 top, 1 bottom, 2 a slot; old and now: the word before and after,
\*     old unknown for a store), TraceThieves, TracePushes, and SnapTop, SnapBottom, SnapSlot: the
\*     deques' words when the log begins (every thread idle).

VARIABLE l   \* how many records of the log the behaviour has matched

TraceCanPush(i) == TRUE
TracePushValue(i) == TraceLog[l + 1][7]
TraceHalfVictims(i) == Threads \ {i}

TraceInit ==
    /\ top = SnapTop
    /\ bottom = SnapBottom
    /\ slot = SnapSlot
    /\ loc = [i \in Threads |-> Idle(i)]
    /\ pushed = 0
    /\ taken = [k \in 0..Pushes |-> 0]
    /\ ret = [i \in Threads |-> [op |-> "none", val |-> 0]]
    /\ obs = [i \in Threads |-> NoObs]
    /\ returned = {}
    /\ l = 0

\* The word thread i's step accesses, as <<kind, deque, word, slot>>: read off its program counter
\* before the step (and, for the first access of an operation, the one after: which operation began,
\* on which victim). One row per `// spec:` access of lib/protocol/deque.ts.
Acc(i) ==
    LET p == loc[i].pc
        v == loc[i].vic
    IN CASE p = "Idle" /\ loc'[i].pc \in {"PushReadTop", "PopReserveBottom"} -> <<1, i, 1, 0>>
         [] p = "Idle" -> <<1, loc'[i].vic, 0, 0>>             \* StealReadTop, HalfReadTop
         [] p = "PushReadTop" -> <<1, i, 0, 0>>
         [] p = "PushWriteSlot" -> <<2, i, 2, Slot(loc[i].b)>>
         [] p = "PushPublishBottom" -> <<2, i, 1, 0>>
         [] p = "PopReserveBottom" -> <<2, i, 1, 0>>
         [] p = "PopReadTop" -> <<1, i, 0, 0>>
         [] p = "PopRestoreEmpty" -> <<2, i, 1, 0>>
         [] p = "PopReadSlot" -> <<1, i, 2, Slot(loc[i].b)>>
         [] p = "PopCasTop" -> <<3, i, 0, 0>>
         [] p = "PopRestoreBottom" -> <<2, i, 1, 0>>
         [] p = "StealReadBottom" -> <<1, v, 1, 0>>
         [] p = "StealReadSlot" -> <<1, v, 2, Slot(loc[i].t)>>
         [] p = "StealCasTop" -> <<3, v, 0, 0>>
         [] p = "HalfReadBottom" -> <<1, v, 1, 0>>
         [] p = "HalfReadDstBottom" -> <<1, i, 1, 0>>
         [] p = "HalfReadDstTop" -> <<1, i, 0, 0>>
         [] p = "HalfReadSlot" -> <<1, v, 2, Slot(loc[i].t)>>
         [] p = "HalfCasTop" -> <<3, v, 0, 0>>
         [] p = "HalfWriteDst" -> <<2, i, 2, Slot(loc[i].db + loc[i].got)>>
         [] p = "HalfRecheckBottom" -> <<1, v, 1, 0>>
         [] p = "HalfPublishDst" -> <<2, i, 1, 0>>

\* The word a names, as the code sees it, in a state with these deques.
WordIn(tp, bt, sl, a) ==
    CASE a[3] = 0 -> Wrap(tp[a[2]])
      [] a[3] = 1 -> Wrap(bt[a[2]])
      [] OTHER -> sl[a[2]][a[4]]
\* A logged value as the spec sees it: index words modulo Modulus (the log's are int32), slots as they are.
Logged(e, x) == IF e[4] = 2 THEN x ELSE x % Modulus

\* The step matches record e: same word, same kind of access, the same values before and after.
Match(e) ==
    LET a == Acc(e[1]) IN
    /\ a = <<e[2], e[3], e[4], e[5]>>
    /\ e[2] = 2 \/ WordIn(top, bottom, slot, a) = Logged(e, e[6])
    /\ WordIn(top', bottom', slot', a) = Logged(e, e[7])

\* approximateLength (lib/protocol/deque.ts, `length`) by the owner: between two of its operations, it loads its
\* own deque's top or bottom. It writes nothing and decides nothing in ChaseLev, so it is not an action of
\* the spec (spec/docs/Trace.md): a load that must see the word's value in the state it is taken in, and changes
\* no variable. It does not match a load by a thread inside an operation, of another deque, or of a slot.
\* (A lazy join, keepsInline in lib/worker/fork_join.ts, made these loads until 2026-11-27; it now reads the
\* same two words plainly (`dequeDepth` there), which no trace logs. No pool code makes this load now.)
LengthRead(e) ==
    /\ e[2] = 1 /\ e[3] = e[1] /\ e[4] \in {0, 1}
    /\ loc[e[1]].pc = "Idle"
    /\ WordIn(top, bottom, slot, <<1, e[3], e[4], 0>>) = Logged(e, e[6])
    /\ Logged(e, e[6]) = Logged(e, e[7])
    /\ UNCHANGED vars

TraceNext ==
    /\ l < Len(TraceLog)
    /\ LET e == TraceLog[l + 1] IN (Step(e[1]) /\ Match(e)) \/ LengthRead(e)
    /\ l' = l + 1
=============================================================================
