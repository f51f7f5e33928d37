/**
 * The producers model: the shipped completion routing and wake protocols of producers in other threads
 * (issue 29) under controlled interleavings — `Marks.publishDone` (lib/worker/marks.ts: DONE, the push to
 * the completion queue of the slot the record's origin names, `wakeProducer`), `CompletionReader`'s `arm`,
 * `drain` and `onWake` (lib/producer/completion.ts: the waiting word, the count in `recordWaiters`, the
 * re-checks, `wakeRecordWaiters` after freeing records: one waiter a batch, in turn, passed on by a woken
 * waiter that leaves records free) and the slot registry (`claimSlot`, `releaseSlot`,
 * lib/protocol/producers.ts) — over real `lib/protocol/injector.ts` queues in one SharedArrayBuffer, under
 * the kernel's controlled interleavings (`../../kernel/harness.ts`; `waitAsync` modelled as the futex
 * wait). Scenarios, the run's set-up and end state, oracles, tables and the named scenarios of the
 * systematic mode; the programs are `thread.ts`, the layout `layout.ts`. The shipped code only: its
 * mutants are the mutation run's (marks.ts and completion.ts import half the pool).
 *
 * Threads of a run (up to four): the producers first (each on its own slot, up to three), then the finishers (workers),
 * or two or three claimers. A run ends when no thread can run: every thread returned, or the ones left
 * are blocked in a wait nobody will end (a lost wakeup), or the step bound cut it.
 *
 * @module
 */

import fc from "fast-check";
import { initInjector, Injector, QUEUE_EMPTY } from "../../../../lib/protocol/injector.ts";
import { CACHE_LINE_WORDS, ControlWords, injectorRegionBytes, InjectorWords } from "../../../../lib/protocol/layout.ts";
import { claimSlot, ProducerWords, slotLine } from "../../../../lib/protocol/producers.ts";
import { TaskState } from "../../../../lib/record/task.ts";
import { RecordWords } from "../../../../lib/record/fields.ts";
import { Fn, FN_NAMES } from "../../../../spec/trace/facade_codes.ts";
import type { Access, Execution, Model, RunEnd, RunSetup, Violation } from "../../kernel/harness.ts";
import { type GateAccess, gateStateName, stepTable } from "../../kernel/run.ts";
import { State } from "../../kernel/words.ts";
import {
  GOT_WORDS,
  handleOf,
  PART_WORDS,
  PBUFFER_BYTES,
  PCAPACITY,
  PCOMPLETIONS_BYTES,
  PCONTROL_BYTES,
  PFREE_BYTES,
  PLINES_BYTES,
  PPart,
  PQUEUES_BYTES,
  PRECORD_WORDS,
  PRECORDS_BYTES,
  PRODUCERS_LAYOUT,
  PRole,
  PSLOTS,
  PWork,
  PWORK_BYTES,
  PWORK_WORDS,
} from "./layout.ts";

/** A producer of a run: its slot, and the tasks of its backlog waiting for a record (then it has none in flight). */
export interface PProducer {
  slot: number;
  backlog: number;
}

/**
 * One run's work. Either producers and finishers (tasks: record i is task i, of the producer on slot
 * `slot`, finished by finisher `by`, or before the run if `by` is -1), or claimers (`claimers` threads, each claiming and releasing
 * `rounds` times).
 */
export interface PScenario {
  producers: PProducer[];
  tasks: { slot: number; by: number }[];
  finishers: number;
  claimers?: { threads: number; rounds: number };
}

/** Steps per run before it is cut. */
export const PMAX_STEPS = 1500;
/** Threads of the model. */
export const PTHREADS = 4;

/** Absolute word indices of the words the tables name. */
const control = PCONTROL_BYTES >> 2;
function lineAt(slot: number): number {
  return (PLINES_BYTES >> 2) + (slot - 1) * 2 * CACHE_LINE_WORDS;
}
function queueAt(slot: number): number {
  return slot === 0 ? PCOMPLETIONS_BYTES >> 2 : (PQUEUES_BYTES + (slot - 1) * injectorRegionBytes(PCAPACITY)) >> 2;
}

/** The thread running producer / finisher / claimer `t` of `s`. */
export function pThreadName(s: PScenario, t: number): string {
  if (s.claimers !== undefined) return `claimer${t}`;
  if (t < s.producers.length) return `producer@${s.producers[t].slot}`;
  return `worker${t - s.producers.length}`;
}

/** Threads a scenario uses. */
export function threadCount(s: PScenario): number {
  return s.claimers !== undefined ? s.claimers.threads : s.producers.length + s.finishers;
}

/** The values in an injector region, head to tail, read with plain loads (the run is over). */
function queued(buffer: SharedArrayBuffer, byteOffset: number): number[] {
  const w = new Int32Array(buffer, byteOffset, InjectorWords.seqs + 2 * PCAPACITY);
  const out: number[] = [];
  for (let pos = w[InjectorWords.head]; pos !== w[InjectorWords.tail]; pos = (pos + 1) | 0) {
    const v = w[InjectorWords.seqs + PCAPACITY + (pos & (PCAPACITY - 1))];
    if (v !== QUEUE_EMPTY) out.push(v);
  }
  return out;
}

/** One step the controller took, with the operation under way in its thread. */
export type PAccess = Access;

/** What a run leaves that the oracles judge (beside the kernel's record: accesses, states, failures …). */
export interface ProducersEnd {
  /** Per producer (in scenario order): the handles it read from its completion queue. */
  received: number[][];
  /** Per slot: the handles left in its completion queue. */
  leftInQueue: number[][];
  /** Records on the free list at the end. */
  freeAtEnd: number;
  /** The control words the oracles look at, at the end. */
  recordWaiters: number;
  producersOpen: number;
  /** Claims that returned a slot another claimer held (thread, slot). */
  shared: [number, number][];
  /** After the run, claimSlot on the controller, once per slot and once more: what each returned. */
  claimsAfter: number[];
}

/** Everything one run produced. */
export type PExecution = Execution<ProducersEnd>;

/** A broken property. */
export type PViolation = Violation;

/** The queues, records and slots of the scenario written, each thread's part and program given. */
function prepare({ buffer, assign }: RunSetup, s: PScenario): void {
  if (s.tasks.length > PCAPACITY) throw new RangeError("Cannot run so large a scenario");
  const threads = threadCount(s);
  // The controller's binding of `mem` is the plain one: the set-up is no scheduled step.
  new Uint8Array(buffer, PCONTROL_BYTES, PWORK_BYTES - PCONTROL_BYTES).fill(0);
  const work = new Int32Array(buffer, PWORK_BYTES, PWORK_WORDS);
  work.fill(0);
  for (let slot = 0; slot <= PSLOTS; slot++) {
    initInjector({ buffer, byteOffset: queueAt(slot) * 4, capacity: PCAPACITY });
  }
  initInjector({ buffer, byteOffset: PFREE_BYTES, capacity: PCAPACITY });
  const records = new Int32Array(buffer, PRECORDS_BYTES, PCAPACITY * PRECORD_WORDS);
  // Every task is running (its record taken, its origin written before it was published), or finished
  // before the run (`by` -1: DONE, its handle in its slot's queue).
  s.tasks.forEach((task, i) => {
    records[i * PRECORD_WORDS + RecordWords.state] = task.by < 0 ? TaskState.DONE : TaskState.RUNNING;
    records[i * PRECORD_WORDS + RecordWords.origin] = task.slot === 0 ? 0 : task.slot + 1;
    if (task.by < 0) {
      new Injector({ buffer, byteOffset: queueAt(task.slot) * 4, capacity: PCAPACITY }).push(handleOf(i));
    }
  });
  // Each producer's slot is claimed (its line OPEN); the claimers' start FREE.
  if (s.claimers === undefined) {
    for (const p of s.producers) {
      if (p.slot > 0) Atomics.store(slotLine(buffer, PRODUCERS_LAYOUT, p.slot), ProducerWords.state, 1);
    }
  }
  for (let t = 0; t < threads; t++) {
    const part = PWork.PART + t * PART_WORDS;
    if (s.claimers !== undefined) {
      assign(t, PRole.CLAIMER);
      work[part + PPart.SLOT] = s.claimers.rounds;
    } else if (t < s.producers.length) {
      assign(t, PRole.PRODUCER);
      const p = s.producers[t];
      work[part + PPart.SLOT] = p.slot;
      work[part + PPart.COUNT] = s.tasks.filter((k) => k.slot === p.slot).length;
      work[part + PPart.BACKLOG] = p.backlog;
    } else {
      assign(t, PRole.FINISHER);
      const mine = s.tasks.map((k, i) => ({ ...k, i })).filter((k) => k.by === t - s.producers.length);
      work[part + PPart.COUNT] = mine.length;
      mine.forEach((k, j) => (work[part + PPart.TASKS + j] = k.i));
    }
  }
}

/** What each producer read, what is left in the queues, the control words, and every slot claimed again. */
function observe({ buffer }: RunEnd, s: PScenario): ProducersEnd {
  const work = new Int32Array(buffer, PWORK_BYTES, PWORK_WORDS);
  const received = s.producers.map((_, t) => {
    if (s.claimers !== undefined) return [];
    const got = PWork.GOT + t * GOT_WORDS;
    return Array.from({ length: work[got] }, (_, k) => work[got + 1 + k]);
  });
  const words = new Int32Array(buffer, PCONTROL_BYTES, 3 * CACHE_LINE_WORDS);
  const end: ProducersEnd = {
    received,
    leftInQueue: Array.from({ length: PSLOTS + 1 }, (_, slot) => queued(buffer, queueAt(slot) * 4)),
    freeAtEnd: queued(buffer, PFREE_BYTES).length,
    recordWaiters: words[ControlWords.recordWaiters],
    producersOpen: words[ControlWords.producersOpen],
    shared: Array.from({ length: work[PWork.SHARED] }, (_, k) => [
      work[PWork.SHARED + 1 + 2 * k],
      work[PWork.SHARED + 2 + 2 * k],
    ]),
    claimsAfter: [],
  };
  if (s.claimers !== undefined) {
    // Every slot given back is claimable again: one claim per slot, then none left (plain binding).
    for (let k = 0; k <= PSLOTS; k++) end.claimsAfter.push(claimSlot(buffer, PRODUCERS_LAYOUT));
  }
  return end;
}

/**
 * The producers model (`Harness.start(PRODUCERS)`): four threads over the shipped code (no variants); each
 * access records its operation; a spinning producer's next job is a yield; round robin past a schedule's
 * end; no wait is ever timed, so a schedule draws no timeouts.
 */
export const PRODUCERS: Model<PScenario, ProducersEnd> = {
  name: "producers",
  thread: new URL("./thread.ts", import.meta.url),
  threads: PTHREADS,
  bufferBytes: PBUFFER_BYTES,
  maxSteps: PMAX_STEPS,
  continuation: "round-robin",
  schedules: { maxLength: 80, maxSegment: 12, maxSegments: 10, timeouts: false },
  threadCount,
  threadName: pThreadName,
  prepare,
  observe,
  check: checkProducersExecution,
};

// ---------------------------------------------------------------------------------------------------------
// Oracles.

/**
 * The oracles, in the order a failure is attributed:
 * - `no-exception`: no thread threw; the step bound was not reached;
 * - `routing`: every handle a producer read is of a task of its slot, and each task's handle reached its
 *   producer exactly once (none left in any queue, none in another slot's);
 * - `no-lost-wakeup`: no producer is left blocked in its wait (it was woken, or found what it waits for
 *   on its re-check): every completion queued, every record freed reached a waiting producer;
 * - `records-reach-backlog`: each producer's backlog was placed, and nobody counts itself in
 *   `recordWaiters` at the end;
 * - `one-wake-a-batch`: a producer's wake of record waiters (from its read of a non-zero `recordWaiters` to
 *   its first access that is not of the wake: the turn, a counted word, a waiting word's load, exchange or
 *   notify) takes at most one waiting word from 1 to 0 — one waiter woken for the records it freed, not
 *   every one (issue 50). That no waiter is left asleep while a record is free is `no-lost-wakeup`: a
 *   producer of these runs that sleeps with its backlog waiting is never woken by anything else;
 * - `slot-exclusive`: no claim returned a slot another claimer held;
 * - `slot-reusable`: after the claimers released theirs, every slot can be claimed again (once each), and
 *   `producersOpen` is back to 0.
 */
export function checkProducersExecution(s: PScenario, exec: PExecution): PViolation[] {
  const out: PViolation[] = [];
  for (const f of exec.failures) out.push({ oracle: "no-exception", detail: f });
  if (exec.aborted) out.push({ oracle: "no-exception", detail: `step bound ${PMAX_STEPS} reached` });
  if (s.claimers !== undefined) {
    for (const [t, slot] of exec.shared) {
      out.push({ oracle: "slot-exclusive", detail: `${pThreadName(s, t)} claimed slot ${slot}, which another held` });
    }
    const want = [...Array.from({ length: PSLOTS }, (_, k) => k + 1), -1];
    if (JSON.stringify(exec.claimsAfter) !== JSON.stringify(want)) {
      out.push({ oracle: "slot-reusable", detail: `claims after the run: ${exec.claimsAfter} (want ${want})` });
    }
    if (exec.producersOpen !== 0) {
      out.push({ oracle: "slot-reusable", detail: `producersOpen ${exec.producersOpen} after every release` });
    }
    return out;
  }
  s.producers.forEach((p, t) => {
    for (const h of exec.received[t]) {
      const task = s.tasks[h - handleOf(0)];
      if (task === undefined || task.slot !== p.slot) {
        out.push({
          oracle: "routing",
          detail: `producer@${p.slot} read handle ${h}, a task of slot ${task?.slot ?? "none"}`,
        });
      }
    }
  });
  s.tasks.forEach((task, i) => {
    const h = handleOf(i);
    const t = s.producers.findIndex((p) => p.slot === task.slot);
    const times = exec.received[t].filter((x) => x === h).length;
    const lost = exec.leftInQueue.flatMap((q, slot) => (q.includes(h) ? [slot] : []));
    const wrong = lost.filter((slot) => slot !== task.slot);
    if (wrong.length > 0) {
      out.push({ oracle: "routing", detail: `task ${i} (slot ${task.slot}) left in the queue of slot ${wrong}` });
    }
    if (times > 1) out.push({ oracle: "routing", detail: `task ${i} read ${times} times by producer@${task.slot}` });
  });
  s.producers.forEach((p, t) => {
    const st = exec.states[t];
    if (st === State.BLOCKED) {
      const queued = exec.leftInQueue[p.slot].length;
      out.push({
        oracle: "no-lost-wakeup",
        detail: `producer@${p.slot} waits for good with ${queued} completion(s) in its queue and ` +
          `${exec.freeAtEnd} free record(s)${p.backlog > 0 ? ` for its backlog of ${p.backlog}` : ""}`,
      });
    } else if (st !== State.DONE && exec.failures.length === 0 && !exec.aborted) {
      out.push({ oracle: "no-lost-wakeup", detail: `producer@${p.slot} ended ${gateStateName(st)}` });
    }
  });
  for (const v of wakesPerBatch(s, exec)) out.push(v);
  if (out.length === 0 && exec.recordWaiters !== 0) {
    out.push({ oracle: "records-reach-backlog", detail: `recordWaiters is ${exec.recordWaiters} at the end` });
  }
  return out;
}

/** The words of a record wake besides `recordWaiters`: the turn, every slot's counted and waiting words. */
function wakeWords(): { counted: Set<number>; waiting: Set<number>; turn: number } {
  const counted = new Set([control + ControlWords.ownerCountedWaiting]);
  const waiting = new Set([control + ControlWords.mainWaiting]);
  for (let slot = 1; slot <= PSLOTS; slot++) {
    counted.add(lineAt(slot) + ProducerWords.countedWaiting);
    waiting.add(lineAt(slot) + ProducerWords.waiting);
  }
  return { counted, waiting, turn: control + ControlWords.recordWakeTurn };
}

/** `one-wake-a-batch`: each producer's record wakes, each taking at most one waiting word from 1 to 0. */
function wakesPerBatch(s: PScenario, exec: PExecution): PViolation[] {
  const out: PViolation[] = [];
  const { counted, waiting, turn } = wakeWords();
  const inWake = (a: GateAccess): boolean =>
    a.addr === turn || (counted.has(a.addr) && a.fn === Fn.load) ||
    (waiting.has(a.addr) && (a.fn === Fn.load || a.fn === Fn.exchange || a.fn === Fn.notify));
  s.producers.forEach((_, t) => {
    let woken = -1; // -1: not in a wake; else the waiting words taken 1 -> 0 in this one
    for (const a of exec.accesses as GateAccess[]) {
      if (a.thread !== t) continue;
      if (woken >= 0 && inWake(a)) {
        if (a.fn === Fn.exchange && a.result === 1) woken++;
        continue;
      }
      if (woken > 1) {
        out.push({ oracle: "one-wake-a-batch", detail: `${pThreadName(s, t)} woke ${woken} waiters in one wake` });
      }
      woken = a.addr === control + ControlWords.recordWaiters && a.fn === Fn.load && a.result > 0 ? 0 : -1;
    }
    if (woken > 1) {
      out.push({ oracle: "one-wake-a-batch", detail: `${pThreadName(s, t)} woke ${woken} waiters in one wake` });
    }
  });
  return out;
}

// ---------------------------------------------------------------------------------------------------------
// Scenarios.

/** The named scenarios of the systematic mode, each with its preemption bound. */
export const PRODUCERS_SCENARIOS: readonly { name: string; scenario: PScenario; preemptions: number }[] = [
  {
    // Two producers waiting, one worker finishing a task of each (the second producer's first).
    name: "two_waiting_producers_one_worker",
    scenario: {
      producers: [{ slot: 0, backlog: 0 }, { slot: 1, backlog: 0 }],
      tasks: [{ slot: 1, by: 0 }, { slot: 0, by: 0 }],
      finishers: 1,
    },
    preemptions: 2,
  },
  {
    // Two producers on remote slots, two workers each finishing a task of both.
    name: "two_remote_producers_two_workers",
    scenario: {
      producers: [{ slot: 1, backlog: 0 }, { slot: 2, backlog: 0 }],
      tasks: [{ slot: 2, by: 0 }, { slot: 1, by: 1 }],
      finishers: 2,
    },
    preemptions: 1,
  },
  {
    // A producer's backlog waits for a record, none of its tasks in flight; the other frees one.
    name: "backlog_waits_for_a_record_the_other_frees",
    scenario: {
      producers: [{ slot: 1, backlog: 1 }, { slot: 0, backlog: 0 }],
      tasks: [{ slot: 0, by: 0 }],
      finishers: 1,
    },
    preemptions: 2,
  },
  {
    // Issue 50: two producers' backlogs wait for a record, none in flight; the third frees two records in one
    // drain and wakes one waiter (its turn's), which takes one and passes the wake on to the other.
    name: "two_backlogs_one_freer_of_two",
    scenario: {
      producers: [{ slot: 1, backlog: 1 }, { slot: 2, backlog: 1 }, { slot: 0, backlog: 0 }],
      tasks: [{ slot: 0, by: -1 }, { slot: 0, by: -1 }],
      finishers: 0,
    },
    preemptions: 2,
  },
  {
    // The same, the records freed by a worker's finishes one by one (the freer drains one or two a wake).
    name: "two_backlogs_freer_with_a_worker",
    scenario: {
      producers: [{ slot: 2, backlog: 1 }, { slot: 0, backlog: 1 }, { slot: 1, backlog: 0 }],
      tasks: [{ slot: 1, by: 0 }, { slot: 1, by: -1 }],
      finishers: 1,
    },
    preemptions: 1,
  },
  {
    // Two claimers, one slot each round, twice: never the same slot at once, every slot back at the end.
    name: "two_claimers_two_rounds",
    scenario: { producers: [], tasks: [], finishers: 0, claimers: { threads: 2, rounds: 2 } },
    preemptions: 2,
  },
  {
    name: "three_claimers_two_slots",
    scenario: { producers: [], tasks: [], finishers: 0, claimers: { threads: 3, rounds: 1 } },
    preemptions: 2,
  },
];

/**
 * Random scenarios: completions to two producers, a backlog waiting for records, two backlogs waiting for
 * the records a third producer frees, or claimers.
 */
export function producersScenarioArbitrary(): fc.Arbitrary<PScenario> {
  const slots = fc.constantFrom<[number, number]>([0, 1], [1, 0], [1, 2], [2, 0]);
  const completions = fc.tuple(
    slots,
    fc.integer({ min: 1, max: 2 }),
    fc.array(fc.nat(3), { minLength: 1, maxLength: 4 }),
  )
    .map(([[a, b], finishers, picks]): PScenario => ({
      producers: [{ slot: a, backlog: 0 }, { slot: b, backlog: 0 }],
      tasks: picks.map((x) => ({ slot: x % 2 === 0 ? a : b, by: (x >> 1) % finishers })),
      finishers,
    }));
  const records = fc.tuple(slots, fc.integer({ min: 1, max: 2 }), fc.array(fc.nat(2), { minLength: 1, maxLength: 3 }))
    .map(([[a, b], finishers, picks]): PScenario => ({
      // a waits with a backlog (no task in flight); b's tasks free the records (some finished before the
      // run, so that b's drain, its free and its wake fit in a's window more often).
      producers: [{ slot: a, backlog: 1 }, { slot: b, backlog: 0 }],
      tasks: picks.map((x, i) => ({ slot: b, by: x === 2 ? -1 : (x + i) % finishers })),
      finishers,
    }));
  // Issue 50: two backlogs wait (a and b), c frees two records (finished before the run or by a worker).
  const passes = fc.tuple(
    fc.constantFrom<[number, number, number]>([0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]),
    fc.integer({ min: 0, max: 1 }),
    fc.array(fc.boolean(), { minLength: 2, maxLength: 2 }),
  )
    .map(([[a, b, c], finishers, byWorker]): PScenario => ({
      producers: [{ slot: a, backlog: 1 }, { slot: b, backlog: 1 }, { slot: c, backlog: 0 }],
      tasks: byWorker.map((w) => ({ slot: c, by: w && finishers > 0 ? 0 : -1 })),
      finishers,
    }));
  const claims = fc.tuple(fc.integer({ min: 2, max: 3 }), fc.integer({ min: 1, max: 2 }))
    .map(([threads, rounds]): PScenario => ({ producers: [], tasks: [], finishers: 0, claimers: { threads, rounds } }));
  return fc.oneof(completions, records, passes, claims);
}

// ---------------------------------------------------------------------------------------------------------
// Reports.

function wordName(addr: number): string {
  const names: [number, string][] = [
    [control + ControlWords.mainWaiting, "waiting@0"],
    [control + ControlWords.recordWaiters, "recordWaiters"],
    [control + ControlWords.producersOpen, "producersOpen"],
    [control + ControlWords.ownerCountedWaiting, "counted@0"],
    [control + ControlWords.recordWakeTurn, "recordWakeTurn"],
  ];
  for (let slot = 1; slot <= PSLOTS; slot++) {
    names.push([lineAt(slot) + ProducerWords.state, `state@${slot}`]);
    names.push([lineAt(slot) + ProducerWords.waiting, `waiting@${slot}`]);
    names.push([lineAt(slot) + ProducerWords.pending, `pending@${slot}`]);
    names.push([lineAt(slot) + ProducerWords.countedWaiting, `counted@${slot}`]);
  }
  const queues: [number, string][] = Array.from({ length: PSLOTS + 1 }, (_, slot) => [queueAt(slot), `Q${slot}`]);
  queues.push([PFREE_BYTES >> 2, "F"]);
  for (const [at, q] of queues) {
    names.push([at + InjectorWords.tail, `${q}.tail`], [at + InjectorWords.head, `${q}.head`]);
    for (let i = 0; i < PCAPACITY; i++) {
      names.push([at + InjectorWords.seqs + i, `${q}.seq[${i}]`]);
      names.push([at + InjectorWords.seqs + PCAPACITY + i, `${q}.val[${i}]`]);
    }
  }
  for (let i = 0; i < PCAPACITY; i++) {
    names.push([(PRECORDS_BYTES >> 2) + i * PRECORD_WORDS + RecordWords.state, `rec${i}.state`]);
  }
  return names.find(([a]) => a === addr)?.[1] ?? `w${addr}`;
}

/** One step as text. */
export function describePAccess(a: GateAccess): string {
  const w = wordName(a.addr);
  const name = FN_NAMES[a.fn] ?? `fn${a.fn}`;
  if (a.fn === Fn.load) return `load ${w} → ${a.result}`;
  if (a.fn === Fn.store) return `store ${w} ← ${a.arg1}`;
  if (a.fn === Fn.compareExchange) {
    return `cas ${w} ${a.arg1}→${a.arg2} : ${a.result} ${a.result === a.arg1 ? "ok" : "fail"}`;
  }
  if (a.fn === Fn.wait) return `wait ${w} =${a.arg1}${a.blocked ? " (blocks)" : " (not-equal)"}`;
  if (a.fn === Fn.notify) return `notify ${w} (woke ${a.woke?.length ?? 0})`;
  return `${name} ${w} ${a.arg1} → ${a.result}`;
}

/** The interleaving as a table, then the end state. */
export function formatProducersTable(s: PScenario, exec: PExecution): string {
  const cols = Array.from({ length: threadCount(s) }, (_, t) => pThreadName(s, t));
  const out = stepTable(cols, exec.accesses, describePAccess);
  out.push(
    `end: ${exec.states.map((st, t) => `${pThreadName(s, t)} ${gateStateName(st)}`).join("; ")}; ` +
      `received ${JSON.stringify(exec.received)}; queues ${JSON.stringify(exec.leftInQueue)}; ` +
      `free ${exec.freeAtEnd}; recordWaiters ${exec.recordWaiters}${exec.aborted ? "; step bound" : ""}`,
  );
  return out.join("\n");
}

/** A scenario in one line. */
export function describeProducersScenario(s: PScenario): string {
  if (s.claimers !== undefined) return `claimers ${s.claimers.threads} × ${s.claimers.rounds} round(s)`;
  const ps = s.producers.map((p) => `slot ${p.slot}${p.backlog > 0 ? ` (backlog ${p.backlog})` : ""}`);
  const ts = s.tasks.map((k) => `${k.slot}/w${k.by}`);
  return `producers ${ps.join(", ")} | tasks ${ts.join(" ")} | ${s.finishers} worker(s)`;
}
