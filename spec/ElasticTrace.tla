---------------------------- MODULE ElasticTrace ----------------------------
(***************************************************************************)
(* Trace validation of the elastic pool's slots and size (issue 49;        *)
(* lib/protocol/slots.ts, lib/protocol/sleep.ts's sleepOrRetire and its    *)
(* sleep steps, lib/owner/growth.ts): is a recorded run of a real elastic  *)
(* pool (workers {min, max}, an idle timeout, bursts and gaps) a behaviour *)
(* of the slot protocol that Elastic.tla specifies?                         *)
(*                                                                          *)
(* The log (ElasticTraceData, written by spec/trace.ts from an `elastic`   *)
(* run of spec/trace/run.ts) holds, in the order they took effect, every   *)
(* access of the run to a slot word, to the size word, and to the counters *)
(* word (its sleeping count only: the JEC bits are SleepWakeTrace's).      *)
(* Unlike GraphTrace this spec does not EXTEND Elastic: Elastic abstracts  *)
(* the queues and the search into a bounded number of tasks, and a real    *)
(* run has hundreds, so there is no Elastic state to map a run's queues    *)
(* to. It is Elastic's projection on the three words instead: the same     *)
(* actions (named as there and as the code's `// spec:` comments), the     *)
(* same order of each worker's steps (its phase, ph), and the same         *)
(* guards on the words; one state per record (no silent steps: the log is  *)
(* accepted when the search reaches depth records + 1).                    *)
(*                                                                          *)
(* Records: <<who, kind, obj, a, b, old, now>>. who: 0 the owner (the      *)
(* pool's main thread), i in 1..Max the worker thread of slot i (the one   *)
(* that stores to its word; a slot's threads follow one another, never    *)
(* overlapping: a new one starts only on an ABSENT word), -1 a worker      *)
(* thread that stored to no slot word. kind: the facade function (1 load, *)
(* 2 store, 3 compare-exchange, 4 add, 5 sub). obj: 0 the size word, i the *)
(* slot word of slot i, 100 the counters word. a, b: the operands; old,   *)
(* now: the word before and after (the counters word's sleeping count; a *)
(* store's `old` is the value it stored, so the spec's word stands in).   *)
(***************************************************************************)
EXTENDS Integers, FiniteSets, Sequences, TLC, ElasticTraceData

\* ElasticTraceData defines TraceLog, TraceMin, TraceMax.
Min == TraceMin
Max == TraceMax
Slots == 1..Max

\* The slot word's states (lib/protocol/sleep.ts).
AWAKE == 0
SLEEPING == 1
RETIRING == 2
ABSENT == 3
STARTING == 4

SIZE == 0
COUNTERS == 100

\* A slot's worker, as far as these words say (Elastic.tla's pc, projected):
\*   "none"      no thread (ABSENT, or STARTING before the owner reserved the size);
\*   "boot"      the owner reserved the size and started the thread (StartWorker), not yet loaded;
\*   "live"      awake, not counted as sleeping;
\*   "counted"   counted in the sleeping count (FallAsleepCas), before its wait or after it;
\*   "reserved"  its wait timed out and it reserved its retirement on the size word (RetireReserve);
\*   "uncounted" it undid its count (RetireUncount), before RetireCasSlot;
\*   "retiring"  its slot word RETIRING (RetireCasSlot); its count and its size undone;
\*   "staying"   it reserved, and stays after all: its size to give back (RetireUnreserve).
VARIABLES
    st,       \* [Slots -> 0..4]: the slot words
    size,     \* the size word
    count,    \* the counters word's sleeping count
    ph,       \* [Slots -> phase]: each slot's worker (above)
    tgt,      \* the slot the owner's growth marked STARTING (0: none)
    started,  \* history: workers the owner started
    retired,  \* history: retirements that ended (RetireStoreAbsent)
    l         \* how many records of the log the behaviour has matched

vars == <<st, size, count, ph, tgt, started, retired, l>>

TraceInit ==
    /\ st = [i \in Slots |-> IF i <= Min THEN AWAKE ELSE ABSENT]
    /\ size = Min
    /\ count = 0
    /\ ph = [i \in Slots |-> IF i <= Min THEN "boot" ELSE "none"]
    /\ tgt = 0
    /\ started = 0 /\ retired = 0
    /\ l = 0

\* What an access leaves in its word, given what it found.
Result(kind, a, b, old) ==
    CASE kind = 1 -> old [] kind = 2 -> a [] kind = 3 -> IF old = a THEN b ELSE old
      [] kind = 4 -> old + a [] kind = 5 -> old - a [] OTHER -> -999

Cur(obj) == IF obj = SIZE THEN size ELSE IF obj = COUNTERS THEN count ELSE st[obj]

SetPh(i, p) == ph' = [ph EXCEPT ![i] = p]
SetSt(i, s) == st' = [st EXCEPT ![i] = s]

-----------------------------------------------------------------------------
(* The owner's growth (growth.ts, slots.ts).                               *)

\* An ABSENT slot marked STARTING, by compare-exchange, before the size is reserved.
GrowStoreStarting(who, i, old, now) ==
    /\ who = 0 /\ old = ABSENT /\ now = STARTING /\ ph[i] = "none" /\ tgt = 0
    /\ SetSt(i, STARTING) /\ tgt' = i
    /\ UNCHANGED <<size, count, ph, started, retired>>

\* The size word by compare-exchange, one more, only below the maximum; then the thread is started
\* (StartWorker: no access of its own, folded in here).
GrowReserve(who, old, now) ==
    /\ who = 0 /\ now = old + 1 /\ old < Max /\ tgt /= 0 /\ st[tgt] = STARTING
    /\ size' = now /\ SetPh(tgt, "boot") /\ tgt' = 0 /\ started' = started + 1
    /\ UNCHANGED <<st, count, retired>>

\* At the maximum (GrowReserve refused), the slot back to ABSENT.
GrowRefuseStoreAbsent(who, i, old, now) ==
    /\ who = 0 /\ old = STARTING /\ now = ABSENT /\ tgt = i
    /\ SetSt(i, ABSENT) /\ tgt' = 0
    /\ UNCHANGED <<size, count, ph, started, retired>>

\* A start that failed (growRelease): the size back, then the slot ABSENT.
GrowReleaseSize(who, old, now) ==
    /\ who = 0 /\ now = old - 1 /\ old > Min /\ \E i \in Slots : ph[i] = "boot" /\ st[i] = STARTING
    /\ size' = now
    /\ UNCHANGED <<st, count, ph, tgt, started, retired>>

GrowReleaseStoreAbsent(who, i, old, now) ==
    /\ who = 0 /\ old = STARTING /\ now = ABSENT /\ ph[i] = "boot"
    /\ SetSt(i, ABSENT) /\ SetPh(i, "none")
    /\ UNCHANGED <<size, count, tgt, started, retired>>

\* A death in the teardown: the owner stores ABSENT on the RETIRING word.
RecoverStoreAbsent(who, i, old, now) ==
    /\ who = 0 /\ old = RETIRING /\ now = ABSENT /\ ph[i] = "retiring"
    /\ SetSt(i, ABSENT) /\ SetPh(i, "none")
    /\ UNCHANGED <<size, count, tgt, started, retired>>

-----------------------------------------------------------------------------
(* The worker of slot i, on its own words (loop.ts, sleep.ts, slots.ts).   *)

\* Loaded: STARTING -> AWAKE (a first worker's word is AWAKE already).
BootStoreAwake(i, old, now) ==
    /\ ph[i] = "boot" /\ old \in {STARTING, AWAKE} /\ now = AWAKE
    /\ SetSt(i, AWAKE) /\ SetPh(i, "live")
    /\ UNCHANGED <<size, count, tgt, started, retired>>

\* fallAsleep: SLEEPING stored (only the worker moves its word from AWAKE).
FallAsleepStoreSleeping(i, old, now) ==
    /\ ph[i] = "live" /\ old = AWAKE /\ now = SLEEPING
    /\ SetSt(i, SLEEPING)
    /\ UNCHANGED <<size, count, ph, tgt, started, retired>>

\* fallAsleep's undo (the JEC moved): AWAKE stored, not counted.
FallAsleepStoreAwake(i, old, now) ==
    /\ ph[i] = "live" /\ old \in {AWAKE, SLEEPING} /\ now = AWAKE
    /\ SetSt(i, AWAKE)
    /\ UNCHANGED <<size, count, ph, tgt, started, retired>>

\* fallAsleep's count: one more sleeper.
FallAsleepCas(i, old, now) ==
    /\ ph[i] = "live" /\ now = old + 1
    /\ count' = now /\ SetPh(i, "counted")
    /\ UNCHANGED <<st, size, tgt, started, retired>>

\* Woken, or timed out and staying: SLEEPING -> AWAKE by compare-exchange (a poster may have done it).
AwakenCasSlot(i, old, now) ==
    /\ ph[i] = "counted" /\ old = SLEEPING /\ now = AWAKE
    /\ SetSt(i, AWAKE)
    /\ UNCHANGED <<size, count, ph, tgt, started, retired>>

AwakenUncount(i, old, now) ==
    /\ ph[i] = "counted" /\ now = old - 1 /\ st[i] = AWAKE
    /\ count' = now /\ SetPh(i, "live")
    /\ UNCHANGED <<st, size, tgt, started, retired>>

\* sleepOrRetire: its wait timed out, its word still SLEEPING when it loaded it (a wake may come since): the
\* size word one less, by compare-exchange, only above Min.
RetireReserve(i, old, now) ==
    /\ ph[i] = "counted" /\ old > Min /\ now = old - 1
    /\ size' = now /\ SetPh(i, "reserved")
    /\ UNCHANGED <<st, count, tgt, started, retired>>

\* Its count undone before its word moves.
RetireUncount(i, old, now) ==
    /\ ph[i] = "reserved" /\ now = old - 1
    /\ count' = now /\ SetPh(i, "uncounted")
    /\ UNCHANGED <<st, size, tgt, started, retired>>

\* SLEEPING -> RETIRING by compare-exchange; a wake that came first (AWAKE) makes it fail: stay.
RetireCasSlot(i, old, now) ==
    /\ ph[i] = "uncounted"
    /\ \/ old = SLEEPING /\ now = RETIRING /\ SetSt(i, RETIRING) /\ SetPh(i, "retiring")
       \/ old = AWAKE /\ now = AWAKE /\ UNCHANGED st /\ SetPh(i, "staying")
    /\ UNCHANGED <<size, count, tgt, started, retired>>

\* Mail counted before its compare-exchange (slots.ts's Dekker pair): AWAKE again, and stay.
RetireStayStoreAwake(i, old, now) ==
    /\ ph[i] = "retiring" /\ old = RETIRING /\ now = AWAKE
    /\ SetSt(i, AWAKE) /\ SetPh(i, "staying")
    /\ UNCHANGED <<size, count, tgt, started, retired>>

\* Staying after all: the size back (an add), and search, uncounted already.
RetireUnreserve(i, old, now) ==
    /\ ph[i] = "staying" /\ now = old + 1
    /\ size' = now /\ SetPh(i, "live")
    /\ UNCHANGED <<st, count, tgt, started, retired>>

\* After its teardown, last: RETIRING -> ABSENT; the thread exits.
RetireStoreAbsent(i, old, now) ==
    /\ ph[i] = "retiring" /\ old = RETIRING /\ now = ABSENT
    /\ SetSt(i, ABSENT) /\ SetPh(i, "none") /\ retired' = retired + 1
    /\ UNCHANGED <<size, count, tgt, started>>

-----------------------------------------------------------------------------
(* Any thread.                                                              *)

\* A poster's wake (WakeCasState): SLEEPING -> AWAKE on another worker's word; its worker uncounts itself.
WakeCasState(who, i, old, now) ==
    /\ who /= i /\ old = SLEEPING /\ now = AWAKE
    /\ SetSt(i, AWAKE)
    /\ UNCHANGED <<size, count, ph, tgt, started, retired>>

\* An access that changes nothing: a load, a compare-exchange that failed, or an access to the counters
\* word that moves only its JEC (getSleepy, newWork, wakeAll).
Observe(old, now) ==
    /\ old = now
    /\ UNCHANGED <<st, size, count, ph, tgt, started, retired>>

\* A store's record gives the value it stored (Atomics.store returns it), not the word before: that is the
\* word the behaviour has.
Match(e) ==
    LET who == e[1]  kind == e[2]  obj == e[3]  now == e[7]
        old == IF kind = 2 THEN Cur(obj) ELSE e[6]
    IN /\ old = Cur(obj)
       /\ obj = COUNTERS \/ now = Result(kind, e[4], e[5], old)
       /\ \/ Observe(old, now)
          \/ /\ obj = SIZE
             /\ \/ kind = 3 /\ GrowReserve(who, old, now)
                \/ kind = 5 /\ GrowReleaseSize(who, old, now)
                \/ kind = 3 /\ who \in Slots /\ RetireReserve(who, old, now)
                \/ kind = 4 /\ who \in Slots /\ RetireUnreserve(who, old, now)
          \/ /\ obj = COUNTERS /\ who \in Slots
             /\ \/ kind = 3 /\ FallAsleepCas(who, old, now)
                \/ kind = 5 /\ AwakenUncount(who, old, now)
                \/ kind = 5 /\ RetireUncount(who, old, now)
          \/ /\ obj \in Slots
             /\ \/ kind = 3 /\ GrowStoreStarting(who, obj, old, now)
                \/ kind = 2 /\ GrowRefuseStoreAbsent(who, obj, old, now)
                \/ kind = 2 /\ GrowReleaseStoreAbsent(who, obj, old, now)
                \/ kind = 2 /\ RecoverStoreAbsent(who, obj, old, now)
                \/ kind = 3 /\ WakeCasState(who, obj, old, now)
                \/ /\ who = obj
                   /\ \/ kind = 2 /\ BootStoreAwake(obj, old, now)
                      \/ kind = 2 /\ FallAsleepStoreSleeping(obj, old, now)
                      \/ kind = 2 /\ FallAsleepStoreAwake(obj, old, now)
                      \/ kind = 3 /\ AwakenCasSlot(obj, old, now)
                      \/ kind = 3 /\ RetireCasSlot(obj, old, now)
                      \/ kind = 2 /\ RetireStayStoreAwake(obj, old, now)
                      \/ kind = 2 /\ RetireStoreAbsent(obj, old, now)

TraceNext ==
    /\ l < Len(TraceLog)
    /\ Match(TraceLog[l + 1])
    /\ l' = l + 1

-----------------------------------------------------------------------------
(* Invariants (Elastic.tla's, on these words).                             *)

\* The size word within [Min, Max].
WithinBounds == size \in Min..Max

\* A RETIRING slot's worker reserved its retirement and was counted out (Elastic's RetireUncount before
\* RetireCasSlot): no sleeper counted that no wake can reach.
RetiringCountedOut == \A i \in Slots : st[i] = RETIRING => ph[i] = "retiring"

\* The slots the pool keeps (STARTING, AWAKE, SLEEPING) never fewer than the size word says.
SizeCovered == Cardinality({i \in Slots : st[i] \in {STARTING, AWAKE, SLEEPING}}) >= size

\* The sleeping count is the number of workers counted.
CountHonest == count = Cardinality({i \in Slots : ph[i] \in {"counted", "reserved"}})

\* An ABSENT slot has no worker.
AbsentEmpty == \A i \in Slots : st[i] = ABSENT => ph[i] = "none"
=============================================================================
