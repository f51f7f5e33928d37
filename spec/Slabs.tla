------------------------------- MODULE Slabs -------------------------------
(***************************************************************************)
(* The slab table of lib/record/slabs.ts: large payloads, each in one slab of a *)
(* shared arena, taken, handed on through a task record, read, given back, *)
(* the arena reset when nothing is held, and a dead worker's slabs         *)
(* reclaimed. One action per shared-memory access of the slab words and of *)
(* a record's reference to its slab, named after the `// spec: Name`       *)
(* comment on it.                                                          *)
(*                                                                          *)
(* code: lib/record/slabs.ts                                                *)
(* code: lib/record/payload.ts                                              *)
(*                                                                          *)
(* Words. Per slot: its state, offset and size; the arena's top. The cap   *)
(* word is stored once, before any thread starts, and never again: it is   *)
(* the constant Cap, and its loads (take's, takeSlab's maxBytes) are no    *)
(* steps. The resets word is only counted (statistics): ResetCount is a    *)
(* step that changes nothing modelled. Every access is an Atomics one      *)
(* (sequentially consistent), so an interleaving of single accesses is     *)
(* exact -- except the record's reference, a plain `mem.write` in          *)
(* writePayload and freePayload, which the model takes as ordered (see     *)
(* spec/docs/Slabs.md: what that assumes of the code).                     *)
(*                                                                          *)
(* Sizes are units: a payload of n units gets a slab of SlabSize(n) = n    *)
(* units (the code rounds up to an eighth of a power of two; the fit rule, *)
(* at least n and at most twice the size class, is the code's). The arena  *)
(* is Cap units, each holding the tag of the payload that wrote it last    *)
(* (0: none). Records: one per payload (payload p's record is p), holding  *)
(* its slot reference (`rec`, 0 for none).                                 *)
(*                                                                          *)
(* A payload's life: a thread takes a slab (take, and for the main thread  *)
(* a reset and a second take if the first fails), reads the slab's offset  *)
(* and size (bytes()), writes its tag into the units, names the slot in    *)
(* its record, and hands the record to another thread (an environment     *)
(* step: the queue push and pop, the DONE store). That thread reads the    *)
(* offset and size, reads the data, and frees the payload (freePayload:    *)
(* give, then clear the reference). A take that fails drops the payload    *)
(* (the code falls back to blocks, or the payload waits).                  *)
(*                                                                          *)
(* Deaths. A worker may die at any point of its steps, except between      *)
(* FreeGive and FreeClearRecord when DieWhileFreeing is FALSE (the real   *)
(* configurations; spec/docs/Slabs.md says why). The main thread then repairs *)
(* its records (frees the payload of every record the dead worker owned:   *)
(* freePayload, made by the main thread), reclaims (reclaimSlabsOf), and   *)
(* only then starts the replacement, which takes slabs under the same      *)
(* index (the same HELD value).                                            *)
(***************************************************************************)
EXTENDS Integers, FiniteSets, TLC

CONSTANTS
    Main,            \* the main thread (a model value)
    Workers,         \* the worker threads (model values)
    NSlots,          \* slots of the table
    Cap,             \* the arena's cap, units
    Sizes,           \* the payload lengths a thread may choose, units
    MaxPayloads,     \* payloads made in a behaviour (each has its own record)
    MaxDeaths,       \* worker deaths in a behaviour
    GrowMayFail,     \* whether the arena's grow may be refused after a carve (the bytes stay carved)
    DieWhileFreeing  \* whether a worker may die between FreeGive and FreeClearRecord

ASSUME ConstantsOk ==
    /\ Main \notin Workers
    /\ NSlots \in Nat \ {0} /\ Cap \in Nat \ {0}
    /\ Sizes \subseteq 1..Cap /\ Sizes /= {}
    /\ MaxPayloads \in Nat /\ MaxDeaths \in Nat
    /\ GrowMayFail \in BOOLEAN /\ DieWhileFreeing \in BOOLEAN

Threads == {Main} \cup Workers
NoThread == "none"
Slots == 1..NSlots
Payloads == 1..MaxPayloads
Units == 0..Cap - 1

\* Slot states: EMPTY, MAKING, FREE, or the thread that holds it (HELD + 1 + thread in the code).
EMPTY == "EMPTY"
MAKING == "MAKING"
FREE == "FREE"
States == {EMPTY, MAKING, FREE} \cup Threads

SlabSize(n) == n
Fits(has, n) == has >= n /\ has <= 2 * SlabSize(n)

\* A payload's phases (history): "taking" (its writer is in take), "held" (take returned the slot),
\* "named" (its record names the slot), "handed" (another thread owns the record), "read" (its reader
\* read the data, and is freeing it), "done" (freed), "dropped" (no slab), "abandoned" (its writer
\* died holding the slot, before a record named it).
LivePhases == {"held", "named", "handed"}

VARIABLES
    state, offset, size,   \* the slot words
    top,                   \* the arena's top
    arena,                 \* per unit: the tag of the payload that wrote it last (0: none)
    rec,                   \* per record (= payload): the slot its payload reference names, 0 for none
    recOwner,              \* per record: the thread that owns it (NoThread: free)
    writer, len, ph, slotOf, made,   \* history of the payloads
    alive, deaths, recovered,        \* the workers: alive, deaths so far, dead ones recovered
    l                      \* per thread: its place (pc) and locals

vars == <<state, offset, size, top, arena, rec, recOwner, writer, len, ph, slotOf, made, alive, deaths,
          recovered, l>>
slabVars == <<state, offset, size, top>>
payVars == <<arena, rec, recOwner, writer, len, ph, slotOf, made>>
envVars == <<alive, deaths, recovered>>

Blank == [pc |-> "idle", p |-> 0, i |-> 0, empty |-> 0, st |-> EMPTY, tp |-> 0, off |-> 0, sz |-> 0,
          retry |-> FALSE, role |-> "none", dead |-> NoThread, j |-> 0, k |-> 0,
          was |-> [s \in Slots |-> EMPTY]]

Init ==
    /\ state = [s \in Slots |-> EMPTY]
    /\ offset = [s \in Slots |-> 0]
    /\ size = [s \in Slots |-> 0]
    /\ top = 0
    /\ arena = [u \in Units |-> 0]
    /\ rec = [p \in Payloads |-> 0]
    /\ recOwner = [p \in Payloads |-> NoThread]
    /\ writer = [p \in Payloads |-> NoThread]
    /\ len = [p \in Payloads |-> 0]
    /\ ph = [p \in Payloads |-> "none"]
    /\ slotOf = [p \in Payloads |-> 0]
    /\ made = 0
    /\ alive = [w \in Workers |-> TRUE]
    /\ deaths = 0
    /\ recovered = [w \in Workers |-> TRUE]
    /\ l = [t \in Threads |-> Blank]

Alive(t) == IF t = Main THEN TRUE ELSE alive[t]
At(t, pc) == Alive(t) /\ l[t].pc = pc
Len(t) == len[l[t].p]

-----------------------------------------------------------------------------
(* take(n): the first loop over the slots (a free slab that fits), then    *)
(* the second from the first EMPTY slot seen (a new slab).                 *)

\* take returns NO_SLAB. takeSlab: the main thread resets the arena and takes again, once; else the
\* payload has no slab (dropped: the code falls back to blocks, or the payload waits).
TakeFails(t) ==
    IF t = Main /\ ~l[t].retry
    THEN /\ l' = [l EXCEPT ![t].pc = "ResetReadState", ![t].i = 1, ![t].empty = 0,
                           ![t].was = [s \in Slots |-> EMPTY]]
         /\ UNCHANGED <<recOwner, ph>>
    ELSE /\ ph' = [ph EXCEPT ![l[t].p] = "dropped"]
         /\ recOwner' = [recOwner EXCEPT ![l[t].p] = NoThread]
         /\ l' = [l EXCEPT ![t] = Blank]

\* The first loop goes on past slot l[t].i, having noted `e` as the first EMPTY slot seen (0: none).
TakeNext(t, e) ==
    IF l[t].i < NSlots
    THEN /\ l' = [l EXCEPT ![t].pc = "TakeReadState", ![t].i = @ + 1, ![t].empty = e]
         /\ UNCHANGED <<recOwner, ph>>
    ELSE IF e = 0
    THEN TakeFails(t)
    ELSE /\ l' = [l EXCEPT ![t].pc = "TakeClaimEmpty", ![t].i = e, ![t].empty = 0]
         /\ UNCHANGED <<recOwner, ph>>

TakeReadState(t) ==
    /\ At(t, "TakeReadState")
    /\ LET st == state[l[t].i] IN
       IF st = FREE
       THEN /\ l' = [l EXCEPT ![t].pc = "TakeReadSize"]
            /\ UNCHANGED <<recOwner, ph>>
       ELSE TakeNext(t, IF st = EMPTY /\ l[t].empty = 0 THEN l[t].i ELSE l[t].empty)
    /\ UNCHANGED slabVars
    /\ UNCHANGED <<arena, rec, writer, len, slotOf, made>> /\ UNCHANGED envVars

\* A free slab's size was written before the store that made it FREE.
TakeReadSize(t) ==
    /\ At(t, "TakeReadSize")
    /\ IF Fits(size[l[t].i], Len(t))
       THEN /\ l' = [l EXCEPT ![t].pc = "TakeClaimFree"]
            /\ UNCHANGED <<recOwner, ph>>
       ELSE TakeNext(t, l[t].empty)
    /\ UNCHANGED slabVars
    /\ UNCHANGED <<arena, rec, writer, len, slotOf, made>> /\ UNCHANGED envVars

\* take returns slot s: the writer goes on to bytes(s).
Took(t, s) ==
    /\ ph' = [ph EXCEPT ![l[t].p] = "held"]
    /\ slotOf' = [slotOf EXCEPT ![l[t].p] = s]
    /\ l' = [l EXCEPT ![t].pc = "BytesReadOffset", ![t].i = s, ![t].empty = 0, ![t].tp = 0,
                      ![t].off = 0, ![t].role = "writer"]

TakeClaimFree(t) ==
    /\ At(t, "TakeClaimFree")
    /\ LET s == l[t].i IN
       IF state[s] = FREE
       THEN /\ state' = [state EXCEPT ![s] = t]
            /\ l' = [l EXCEPT ![t].pc = "TakeRecheckSize"]
            /\ UNCHANGED <<recOwner, ph, slotOf>>
       ELSE /\ UNCHANGED state            \* lost the race: go on
            /\ TakeNext(t, l[t].empty)
            /\ UNCHANGED slotOf
    /\ UNCHANGED <<offset, size, top>>
    /\ UNCHANGED <<arena, rec, writer, len, made>> /\ UNCHANGED envVars

\* The claimed slab's size, read again now that it is ours (a reset may have remade it smaller between
\* TakeReadSize and the claim): kept if it fits, else given back.
TakeRecheckSize(t) ==
    /\ At(t, "TakeRecheckSize")
    /\ LET s == l[t].i IN
       IF size[s] >= Len(t)
       THEN /\ Took(t, s)
            /\ UNCHANGED recOwner
       ELSE /\ l' = [l EXCEPT ![t].pc = "TakeGiveBackSmall"]
            /\ UNCHANGED <<recOwner, ph, slotOf>>
    /\ UNCHANGED slabVars
    /\ UNCHANGED <<arena, rec, writer, len, made>> /\ UNCHANGED envVars

TakeGiveBackSmall(t) ==
    /\ At(t, "TakeGiveBackSmall")
    /\ state' = [state EXCEPT ![l[t].i] = FREE]
    /\ TakeNext(t, l[t].empty)
    /\ UNCHANGED slotOf
    /\ UNCHANGED <<offset, size, top>>
    /\ UNCHANGED <<arena, rec, writer, len, made>> /\ UNCHANGED envVars

\* Held from the claim on (offset and size not yet written).
TakeClaimEmpty(t) ==
    /\ At(t, "TakeClaimEmpty")
    /\ LET s == l[t].i IN
       IF state[s] = EMPTY
       THEN /\ state' = [state EXCEPT ![s] = t]
            /\ l' = [l EXCEPT ![t].pc = "CarveReadTop"]
            /\ UNCHANGED <<recOwner, ph>>
       ELSE /\ UNCHANGED state
            /\ IF s < NSlots
               THEN /\ l' = [l EXCEPT ![t].i = @ + 1]
                    /\ UNCHANGED <<recOwner, ph>>
               ELSE TakeFails(t)
    /\ UNCHANGED <<offset, size, top>>
    /\ UNCHANGED <<arena, rec, writer, len, slotOf, made>> /\ UNCHANGED envVars

\* carve: load the top; over the cap: -1.
CarveReadTop(t) ==
    /\ At(t, "CarveReadTop")
    /\ l' = [l EXCEPT ![t].tp = top,
                      ![t].pc = IF top + SlabSize(Len(t)) > Cap THEN "TakeUndoClaim" ELSE "CarveCasTop"]
    /\ UNCHANGED slabVars /\ UNCHANGED payVars /\ UNCHANGED envVars

\* carve: bump the top by compare-exchange; lost, retry with the top it saw. Won, the arena grows to
\* cover the bytes: a refused grow (GrowMayFail) leaves them carved, and take gives the slot up.
CarveCasTop(t) ==
    /\ At(t, "CarveCasTop")
    /\ LET n == SlabSize(Len(t)) IN
       IF top = l[t].tp
       THEN /\ top' = top + n
            /\ \/ l' = [l EXCEPT ![t].off = l[t].tp, ![t].pc = "TakeWriteOffset"]
               \/ GrowMayFail /\ l' = [l EXCEPT ![t].pc = "TakeUndoClaim"]
       ELSE /\ UNCHANGED top
            /\ l' = [l EXCEPT ![t].tp = top,
                              ![t].pc = IF top + n > Cap THEN "TakeUndoClaim" ELSE "CarveCasTop"]
    /\ UNCHANGED <<state, offset, size>> /\ UNCHANGED payVars /\ UNCHANGED envVars

TakeUndoClaim(t) ==
    /\ At(t, "TakeUndoClaim")
    /\ state' = [state EXCEPT ![l[t].i] = EMPTY]
    /\ TakeFails(t)
    /\ UNCHANGED <<offset, size, top>>
    /\ UNCHANGED <<arena, rec, writer, len, slotOf, made>> /\ UNCHANGED envVars

TakeWriteOffset(t) ==
    /\ At(t, "TakeWriteOffset")
    /\ offset' = [offset EXCEPT ![l[t].i] = l[t].off]
    /\ l' = [l EXCEPT ![t].pc = "TakeWriteSize"]
    /\ UNCHANGED <<state, size, top>> /\ UNCHANGED payVars /\ UNCHANGED envVars

TakeWriteSize(t) ==
    /\ At(t, "TakeWriteSize")
    /\ size' = [size EXCEPT ![l[t].i] = SlabSize(Len(t))]
    /\ Took(t, l[t].i)
    /\ UNCHANGED <<state, offset, top>>
    /\ UNCHANGED <<arena, rec, recOwner, writer, len, made>> /\ UNCHANGED envVars

-----------------------------------------------------------------------------
(* bytes(slot): its offset and size, by the writer (after take) and by the *)
(* reader (after the hand-over). The slot is in l[t].i.                    *)

BytesReadOffset(t) ==
    /\ At(t, "BytesReadOffset")
    /\ l' = [l EXCEPT ![t].off = offset[l[t].i], ![t].pc = "BytesReadSize"]
    /\ UNCHANGED slabVars /\ UNCHANGED payVars /\ UNCHANGED envVars

BytesReadSize(t) ==
    /\ At(t, "BytesReadSize")
    /\ l' = [l EXCEPT ![t].sz = size[l[t].i],
                      ![t].pc = IF l[t].role = "writer" THEN "WriteData" ELSE "ReadData"]
    /\ UNCHANGED slabVars /\ UNCHANGED payVars /\ UNCHANGED envVars

-----------------------------------------------------------------------------
(* The record's reference (lib/record/payload.ts): named by writePayload, cleared by *)
(* freePayload after the give-back.                                        *)

RecordNameSlab(t) ==
    /\ At(t, "RecordNameSlab")
    /\ rec' = [rec EXCEPT ![l[t].p] = l[t].i]
    /\ ph' = [ph EXCEPT ![l[t].p] = "named"]
    /\ l' = [l EXCEPT ![t].pc = "HandOver"]
    /\ UNCHANGED slabVars /\ UNCHANGED <<arena, recOwner, writer, len, slotOf, made>> /\ UNCHANGED envVars

\* freePayload, the give-back: the record's owner (a reader, or the main thread repairing a dead
\* worker's record). The slot is in l[t].i.
FreeGive(t) ==
    /\ At(t, "FreeGive")
    /\ state' = [state EXCEPT ![l[t].i] = FREE]
    /\ l' = [l EXCEPT ![t].pc = "FreeClearRecord"]
    /\ ph' = [ph EXCEPT ![l[t].p] = "read"]
    /\ UNCHANGED <<offset, size, top>> /\ UNCHANGED <<arena, rec, recOwner, writer, len, slotOf, made>>
    /\ UNCHANGED envVars

\* freePayload, then forgotten: the record names no slab.
FreeClearRecord(t) ==
    /\ At(t, "FreeClearRecord")
    /\ rec' = [rec EXCEPT ![l[t].p] = 0]
    /\ ph' = [ph EXCEPT ![l[t].p] = "done"]
    /\ recOwner' = [recOwner EXCEPT ![l[t].p] = NoThread]
    /\ l' = [l EXCEPT ![t] = Blank]
    /\ UNCHANGED slabVars /\ UNCHANGED <<arena, writer, len, slotOf, made>> /\ UNCHANGED envVars

-----------------------------------------------------------------------------
(* reset (the main thread, in takeSlab after a failed take): claim every   *)
(* slot (FREE or EMPTY -> MAKING), else put back what it claimed; then the *)
(* top to 0, the count, and every slot EMPTY; then take again.             *)

\* A slot in use: put back what was claimed (slots 1 .. i - 1), or give up at once if none.
ResetGiveUp(t) ==
    IF l[t].i = 1 THEN TakeFails(t)
    ELSE /\ l' = [l EXCEPT ![t].pc = "ResetRestore", ![t].k = 1]
         /\ UNCHANGED <<recOwner, ph>>

ResetReadState(t) ==
    /\ At(t, "ResetReadState")
    /\ LET st == state[l[t].i] IN
       IF st \in {FREE, EMPTY}
       THEN /\ l' = [l EXCEPT ![t].st = st, ![t].pc = "ResetClaim"]
            /\ UNCHANGED <<recOwner, ph>>
       ELSE ResetGiveUp(t)
    /\ UNCHANGED slabVars /\ UNCHANGED <<arena, rec, writer, len, slotOf, made>> /\ UNCHANGED envVars

ResetClaim(t) ==
    /\ At(t, "ResetClaim")
    /\ LET s == l[t].i IN
       IF state[s] = l[t].st
       THEN /\ state' = [state EXCEPT ![s] = MAKING]
            /\ l' = [l EXCEPT ![t].was[s] = l[t].st, ![t].st = EMPTY,
                              ![t].pc = IF s < NSlots THEN "ResetReadState" ELSE "ResetTop",
                              ![t].i = IF s < NSlots THEN s + 1 ELSE 0]
            /\ UNCHANGED <<recOwner, ph>>
       ELSE /\ UNCHANGED state
            /\ ResetGiveUp(t)
    /\ UNCHANGED <<offset, size, top>> /\ UNCHANGED <<arena, rec, writer, len, slotOf, made>>
    /\ UNCHANGED envVars

\* Put back slot k as it was; after the last claimed one (i - 1), reset returns false.
ResetRestore(t) ==
    /\ At(t, "ResetRestore")
    /\ state' = [state EXCEPT ![l[t].k] = l[t].was[l[t].k]]
    /\ IF l[t].k + 1 < l[t].i
       THEN /\ l' = [l EXCEPT ![t].k = @ + 1]
            /\ UNCHANGED <<recOwner, ph>>
       ELSE TakeFails(t)
    /\ UNCHANGED <<offset, size, top>> /\ UNCHANGED <<arena, rec, writer, len, slotOf, made>>
    /\ UNCHANGED envVars

ResetTop(t) ==
    /\ At(t, "ResetTop")
    /\ top' = 0
    /\ l' = [l EXCEPT ![t].pc = "ResetCount"]
    /\ UNCHANGED <<state, offset, size>> /\ UNCHANGED payVars /\ UNCHANGED envVars

\* The resets word (statistics only): nothing modelled changes.
ResetCount(t) ==
    /\ At(t, "ResetCount")
    /\ l' = [l EXCEPT ![t].pc = "ResetEmpty", ![t].k = 1]
    /\ UNCHANGED slabVars /\ UNCHANGED payVars /\ UNCHANGED envVars

\* Slot k EMPTY; after the last, take again.
ResetEmpty(t) ==
    /\ At(t, "ResetEmpty")
    /\ state' = [state EXCEPT ![l[t].k] = EMPTY]
    /\ l' = IF l[t].k < NSlots THEN [l EXCEPT ![t].k = @ + 1]
            ELSE [l EXCEPT ![t].pc = "TakeReadState", ![t].i = 1, ![t].empty = 0, ![t].k = 0,
                           ![t].retry = TRUE, ![t].was = [s \in Slots |-> EMPTY]]
    /\ UNCHANGED <<offset, size, top>> /\ UNCHANGED payVars /\ UNCHANGED envVars

-----------------------------------------------------------------------------
(* reclaim (the main thread, after worker `dead` died and its records were *)
(* repaired): every slot it holds that no record names goes EMPTY. Also a  *)
(* thread's own, after a throw cut its payload write short (repairCut,    *)
(* repairSubmission: reclaimSlabsOf(owner)).                               *)

\* Past slot i: the next one, or done (the replacement may start).
ReclaimNext(t) ==
    IF l[t].i < NSlots
    THEN l' = [l EXCEPT ![t].pc = "ReclaimReadState", ![t].i = @ + 1, ![t].j = 0]
    ELSE IF l[t].dead = t
    THEN l' = [l EXCEPT ![t] = Blank]                             \* its own (a cut-short repair): done
    ELSE l' = [l EXCEPT ![t].pc = "Replace", ![t].i = 0, ![t].j = 0]

ReclaimReadState(t) ==
    /\ At(t, "ReclaimReadState")
    /\ IF state[l[t].i] = l[t].dead /\ MaxPayloads > 0
       THEN l' = [l EXCEPT ![t].pc = "ReclaimReadRecord", ![t].j = 1]
       ELSE ReclaimNext(t)
    /\ UNCHANGED slabVars /\ UNCHANGED payVars /\ UNCHANGED envVars

\* named(slot): each record's reference, in turn (lib/record/payload.ts, reclaimSlabsOf).
ReclaimReadRecord(t) ==
    /\ At(t, "ReclaimReadRecord")
    /\ IF rec[l[t].j] = l[t].i
       THEN ReclaimNext(t)                                        \* named: not this one
       ELSE l' = [l EXCEPT ![t].pc = IF l[t].j < MaxPayloads THEN "ReclaimReadRecord" ELSE "ReclaimCas",
                           ![t].j = IF l[t].j < MaxPayloads THEN l[t].j + 1 ELSE 0]
    /\ UNCHANGED slabVars /\ UNCHANGED payVars /\ UNCHANGED envVars

ReclaimCas(t) ==
    /\ At(t, "ReclaimCas")
    /\ state' = IF state[l[t].i] = l[t].dead THEN [state EXCEPT ![l[t].i] = EMPTY] ELSE state
    /\ ReclaimNext(t)
    /\ UNCHANGED <<offset, size, top>> /\ UNCHANGED payVars /\ UNCHANGED envVars

Step(t) ==
    \/ TakeReadState(t) \/ TakeReadSize(t) \/ TakeClaimFree(t) \/ TakeRecheckSize(t) \/ TakeGiveBackSmall(t)
    \/ TakeClaimEmpty(t)
    \/ CarveReadTop(t) \/ CarveCasTop(t) \/ TakeUndoClaim(t) \/ TakeWriteOffset(t) \/ TakeWriteSize(t)
    \/ BytesReadOffset(t) \/ BytesReadSize(t)
    \/ RecordNameSlab(t) \/ FreeGive(t) \/ FreeClearRecord(t)
    \/ ResetReadState(t) \/ ResetClaim(t) \/ ResetRestore(t) \/ ResetTop(t) \/ ResetCount(t) \/ ResetEmpty(t)
    \/ ReclaimReadState(t) \/ ReclaimReadRecord(t) \/ ReclaimCas(t)

-----------------------------------------------------------------------------
(* The environment: steps with no access to the slab words or references. *)

\* A thread starts a payload of n units in a new record it owns, and takes a slab for it.
NewPayload(t) ==
    /\ At(t, "idle") /\ made < MaxPayloads
    /\ \E n \in Sizes :
         LET p == made + 1 IN
         /\ made' = p
         /\ writer' = [writer EXCEPT ![p] = t]
         /\ len' = [len EXCEPT ![p] = n]
         /\ ph' = [ph EXCEPT ![p] = "taking"]
         /\ recOwner' = [recOwner EXCEPT ![p] = t]
         /\ l' = [l EXCEPT ![t] = [Blank EXCEPT !.pc = "TakeReadState", !.p = p, !.i = 1]]
    /\ UNCHANGED slabVars /\ UNCHANGED <<arena, rec, slotOf>> /\ UNCHANGED envVars

\* The bulk copy into the slab's bytes.
WriteData(t) ==
    /\ At(t, "WriteData")
    /\ l[t].sz >= Len(t)
    /\ arena' = [u \in Units |-> IF u >= l[t].off /\ u < l[t].off + Len(t) THEN l[t].p ELSE arena[u]]
    /\ l' = [l EXCEPT ![t].pc = "RecordNameSlab", ![t].off = 0, ![t].sz = 0]
    /\ UNCHANGED slabVars /\ UNCHANGED <<rec, recOwner, writer, len, ph, slotOf, made>> /\ UNCHANGED envVars

\* The slab take returned is smaller than the payload (TakeFits): the code's `set` throws a RangeError.
\* The payload is lost; the thread's repair of what the throw cut short reclaims its own slots.
WriteThrows(t) ==
    /\ At(t, "WriteData")
    /\ l[t].sz < Len(t)
    /\ ph' = [ph EXCEPT ![l[t].p] = "dropped"]
    /\ recOwner' = [recOwner EXCEPT ![l[t].p] = NoThread]
    /\ l' = [l EXCEPT ![t] = [Blank EXCEPT !.pc = "ReclaimReadState", !.i = 1, !.dead = t]]
    /\ UNCHANGED slabVars /\ UNCHANGED <<arena, rec, writer, len, slotOf, made>> /\ UNCHANGED envVars

\* The record goes to its reader: another thread (a queue push and pop, the DONE store, a latch), or
\* the writer itself (a submission that fails, a fork it pops back and runs inline).
HandOver(t) ==
    /\ At(t, "HandOver")
    /\ \E u \in Threads :
         /\ Alive(u)
         /\ recOwner' = [recOwner EXCEPT ![l[t].p] = u]
    /\ ph' = [ph EXCEPT ![l[t].p] = "handed"]
    /\ l' = [l EXCEPT ![t] = Blank]
    /\ UNCHANGED slabVars /\ UNCHANGED <<arena, rec, writer, len, slotOf, made>> /\ UNCHANGED envVars

\* An idle thread reads a record handed to it: its slab's bytes (the slot from the record).
StartRead(t) ==
    /\ At(t, "idle")
    /\ \E p \in Payloads :
         /\ recOwner[p] = t /\ ph[p] = "handed"
         /\ l' = [l EXCEPT ![t] = [Blank EXCEPT !.pc = "BytesReadOffset", !.p = p, !.i = rec[p],
                                                !.role = "reader"]]
    /\ UNCHANGED slabVars /\ UNCHANGED payVars /\ UNCHANGED envVars

\* Decoding from the slab's bytes (ReadsOwnData judges what it reads); then freePayload.
ReadData(t) ==
    /\ At(t, "ReadData")
    /\ l' = [l EXCEPT ![t].pc = "FreeGive", ![t].off = 0, ![t].sz = 0]
    /\ UNCHANGED slabVars /\ UNCHANGED payVars /\ UNCHANGED envVars

\* A worker dies. Its payloads that no record names yet are abandoned (their slots stay held by it).
Die(w) ==
    /\ w \in Workers /\ alive[w] /\ deaths < MaxDeaths
    /\ DieWhileFreeing \/ l[w].pc /= "FreeClearRecord"
    /\ alive' = [alive EXCEPT ![w] = FALSE]
    /\ recovered' = [recovered EXCEPT ![w] = FALSE]
    /\ deaths' = deaths + 1
    /\ ph' = [p \in Payloads |-> IF writer[p] = w /\ recOwner[p] = w /\ ph[p] \in {"taking", "held"}
                                 THEN "abandoned" ELSE ph[p]]
    /\ l' = [l EXCEPT ![w] = Blank]
    /\ UNCHANGED slabVars /\ UNCHANGED <<arena, rec, recOwner, writer, len, slotOf, made>>

\* Recovery, the main thread (idle), for a dead worker: its records first. A record it owns that names
\* a slab is freed by the main thread (freePayload); one that names none is released.
RepairRecord(w) ==
    /\ At(Main, "idle") /\ w \in Workers /\ ~alive[w] /\ ~recovered[w]
    /\ \E p \in Payloads :
         /\ recOwner[p] = w
         /\ IF rec[p] /= 0
            THEN /\ recOwner' = [recOwner EXCEPT ![p] = Main]
                 /\ l' = [l EXCEPT ![Main] = [Blank EXCEPT !.pc = "FreeGive", !.p = p, !.i = rec[p],
                                                           !.role = "repair"]]
            ELSE /\ recOwner' = [recOwner EXCEPT ![p] = NoThread]
                 /\ UNCHANGED l
    /\ UNCHANGED slabVars /\ UNCHANGED <<arena, rec, writer, len, ph, slotOf, made>> /\ UNCHANGED envVars

\* ... then, none left, reclaimSlabsOf(w).
StartReclaim(w) ==
    /\ At(Main, "idle") /\ w \in Workers /\ ~alive[w] /\ ~recovered[w]
    /\ \A p \in Payloads : recOwner[p] /= w
    /\ l' = [l EXCEPT ![Main] = [Blank EXCEPT !.pc = "ReclaimReadState", !.i = 1, !.dead = w]]
    /\ UNCHANGED slabVars /\ UNCHANGED payVars /\ UNCHANGED envVars

\* ... then the replacement starts, under the same index.
Replace ==
    /\ At(Main, "Replace")
    /\ alive' = [alive EXCEPT ![l[Main].dead] = TRUE]
    /\ recovered' = [recovered EXCEPT ![l[Main].dead] = TRUE]
    /\ l' = [l EXCEPT ![Main] = Blank, ![l[Main].dead] = Blank]
    /\ UNCHANGED slabVars /\ UNCHANGED payVars /\ UNCHANGED deaths

Environment ==
    \/ \E t \in Threads : NewPayload(t) \/ WriteData(t) \/ WriteThrows(t) \/ HandOver(t) \/ StartRead(t)
                         \/ ReadData(t)
    \/ \E w \in Workers : Die(w) \/ RepairRecord(w) \/ StartReclaim(w)
    \/ Replace

\* The end, not a deadlock: every thread idle, nothing left to do in the model's bounds.
Ended == /\ \A t \in Threads : Alive(t) => l[t].pc = "idle"
         /\ UNCHANGED vars

Next ==
    \/ \E t \in Threads : Step(t)
    \/ Environment
    \/ Ended

Spec == Init /\ [][Next]_vars

\* The workers are interchangeable (safety configurations only).
WorkerSymmetry == Permutations(Workers)

-----------------------------------------------------------------------------
(* Properties.                                                             *)

TypeOK ==
    /\ state \in [Slots -> States]
    /\ offset \in [Slots -> 0..Cap] /\ size \in [Slots -> 0..Cap]
    /\ top \in Nat
    /\ arena \in [Units -> 0..MaxPayloads]
    /\ rec \in [Payloads -> 0..NSlots]
    /\ recOwner \in [Payloads -> Threads \cup {NoThread}]
    /\ made \in 0..MaxPayloads /\ deaths \in 0..MaxDeaths

\* The bytes of a payload's slab: its slot's offset and size, as the words say now.
Bytes(p) == offset[slotOf[p]] .. offset[slotOf[p]] + size[slotOf[p]] - 1
Live(p) == ph[p] \in LivePhases

\* No two payloads in use share arena bytes, and every one's bytes are carved ([0, top)).
NoOverlap ==
    /\ \A p \in Payloads : Live(p) => Bytes(p) \subseteq 0..top - 1
    /\ \A p, q \in Payloads : Live(p) /\ Live(q) /\ p /= q => Bytes(p) \cap Bytes(q) = {}

\* A reader, about to decode, sees a slab of at least the payload's length, every byte its writer's.
ReadsOwnData ==
    \A t \in Threads :
        At(t, "ReadData") =>
            /\ l[t].sz >= Len(t)
            /\ \A u \in l[t].off .. l[t].off + Len(t) - 1 : u \in Units /\ arena[u] = l[t].p

\* A FREE slot's offset and size describe carved bytes.
FreeSlotsAreCarved == \A s \in Slots : state[s] = FREE => size[s] > 0 /\ offset[s] + size[s] <= top

TopWithinCap == top <= Cap

\* The top goes back to 0 only when every slot is claimed for the reset and no payload holds a slab.
ResetOnlyWhenIdle ==
    At(Main, "ResetTop") =>
        /\ \A s \in Slots : state[s] = MAKING
        /\ \A p \in Payloads : ~Live(p)

\* A slab that take returned is as large as the payload (the code's `set` would throw otherwise).
TakeFits == \A p \in Payloads : ph[p] = "held" => size[slotOf[p]] >= len[p]

\* A payload in use keeps its slot held by the thread that took it (no one else can take or reset it).
HeldWhileLive == \A p \in Payloads : Live(p) => state[slotOf[p]] = writer[p]
=============================================================================
