/**
 * Trace validation: runs the real pool with every shared access recorded (`spec/trace/run.ts`, on Deno,
 * Bun and Node), and has TLC check that each recorded log is a behaviour of the matching spec — the
 * deques' accesses against `ChaseLevTrace.tla` (ChaseLev.tla), each queue's (the injector, the free list,
 * the completion queue) against `InjectorTrace.tla` (Injector.tla), the sleep words' against
 * `SleepWakeTrace.tla`, each task graph's against `GraphTrace.tla` (Graph.tla), an elastic pool's slot, size
 * and counters words against `ElasticTrace.tla` (Elastic.tla's actions on those words; its log mutants,
 * {@link ELASTIC_TRACE_MUTANTS}, are the real log edited as a bug would have it, and must be rejected; its
 * code mutants, {@link ELASTIC_CODE_TRACE_MUTANTS}, are the kept group `elastic`). Then the same for a run of
 * the pool built with each TypeScript mutant of those modules (`tests/mutants/mutants.ts`, and this file's
 * own {@link GRAPH_TRACE_MUTANTS} of `lib/graph/`, applied to a copy of `mod.ts` and `lib/`): its log must
 * be REJECTED (or break an invariant on the way).
 *
 * Verdicts: ACCEPTED (some behaviour of the spec matches the whole log: TLC's complete search of the
 * behaviours that follow the log reaches depth records + 1), REJECTED (none does: the search stops short,
 * and the first record no behaviour can take is printed), VIOLATED (a behaviour matching the log breaks
 * an invariant or property of the spec, named). A real run must be ACCEPTED; a mutant run must be REJECTED
 * or VIOLATED. A run whose pool failed (a mutant that hangs or loses tasks) is still validated: its log up
 * to the failure is what the code did.
 *
 * Exits 0 when everything is as expected, 1 on any surprise, 2 when TLC cannot run (SKIPPED: no Java or no
 * jar; never counted as passed). Uses only `node:` builtins; runs under Node, Deno and Bun.
 *
 * Usage: `trace.ts [--runtimes deno,bun,node] [--scenarios pool,producers,stress,sleep,graph,elastic|none]
 * [--mutants all|none|NAME[,NAME...]] [--keep DIR]`
 *
 * @module
 */

import { copyFileSync, cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import process from "node:process";
import { fileURLToPath, pathToFileURL } from "node:url";
import { ALL_MUTANTS, applyPatches, ELASTIC_MUTANTS, type Mutant, SLEEP_MUTANTS } from "../tests/mutants/mutants.ts";
import { findJar, findJava, parseTlcOutput, printSkipped, runWithDeadline, Skip } from "./check.ts";
import { Kind } from "./trace/binding.ts";
import type { Regions } from "./trace/run.ts";
import { FN_NAMES } from "./trace/facade_codes.ts";

const specDir = dirname(fileURLToPath(import.meta.url));
const root = dirname(specDir);
const bin = join(root, "node_modules", ".bin");

/** A recorded run, as `spec/trace/run.ts` writes it. */
export interface RecordedRun {
  runtime: string;
  scenario: string;
  /** The threadId of the thread that set the buffer up (the pool's main thread), or -1. */
  setupThread: number;
  /** Where the protocols' words are, in int32 words of the buffer. */
  regions: Regions;
  overflow: boolean;
  failure: string;
  snapshot: number[];
  /** [thread, kind, word, a, b, old, now] (spec/trace/binding.ts: Kind, TraceEvent). */
  events: number[][];
}

/** One log to check: a spec and the data module that holds the log. */
export interface Validation {
  /** What it covers, as printed: "deques", "injector", ... */
  name: string;
  /** The trace spec, e.g. ChaseLevTrace (its .cfg beside it). */
  module: string;
  /** The data module's name and text. */
  dataModule: string;
  data: string;
  /** Records in the log. */
  records: number;
  /** Where each record is in the run's events. */
  indices: number[];
  /**
   * How TLC says how far the log was followed: "depth" (the complete search's depth, one state per
   * record), or "furthest" (the spec prints `<<"furthest", n>>` lines: it has steps without records).
   */
  acceptance?: "depth" | "furthest";
  /** The records, for printing the one a REJECTED log stopped at: [thread, access]. */
  describe(index: number): string;
}

/**
 * The longest log handed to TLC (a real run's are 2,000–20,000 records; a mutant that spins fills the trace
 * buffer). A prefix of a log is a log: what is checked is said ("first N records").
 */
const MAX_RECORDS = 60_000;

// The record kinds' names: the harness's facade function names, then the operation record (Kind).
const KIND_NAMES: readonly string[] = [...FN_NAMES, "op"];
const LINE = 16; // int32 words per cache line (lib/protocol/layout.ts CACHE_LINE_WORDS)

function tlaTuple(values: readonly (number | string)[]): string {
  return `<<${values.join(", ")}>>`;
}

/**
 * The deques' accesses of a run, as a log for ChaseLevTrace: thread d of the spec is the thread that owns
 * deque d (the only one that stores its bottom).
 *
 * @param run The recorded run.
 * @returns The validation, or a message saying why the log cannot be one (an access the spec has no
 *   kind for, a thread owning two deques).
 */
export function dequeValidation(run: RecordedRun): Validation | string {
  const r = run.regions.deques;
  if (r === null) return "the run has no deques";
  const { base, stride: size, count: workers, capacity } = r;
  const where = (word: number): { d: number; w: number; s: number } | null => {
    const off = word - base;
    if (off < 0 || off >= workers * size) return null;
    const d = Math.floor(off / size);
    const inner = off % size;
    if (inner === 0) return { d, w: 0, s: 0 };
    if (inner === LINE) return { d, w: 1, s: 0 };
    if (inner >= 2 * LINE && inner < 2 * LINE + capacity) return { d, w: 2, s: inner - 2 * LINE };
    return { d, w: -1, s: inner };
  };
  const ownerOf = new Map<number, number>(); // thread -> deque
  for (const e of run.events) {
    const at = where(e[2]);
    if (at === null || at.w !== 1 || e[1] !== 2) continue;
    const had = ownerOf.get(e[0]);
    if (had !== undefined && had !== at.d) return `thread ${e[0]} stores the bottom of deques ${had} and ${at.d}`;
    ownerOf.set(e[0], at.d);
  }
  const taken = new Set(ownerOf.values());
  const free = [...Array(workers).keys()].filter((d) => !taken.has(d));
  const specThread = (thread: number): number => {
    let d = ownerOf.get(thread);
    if (d === undefined) {
      d = free.shift();
      if (d === undefined) throw new Error(`more threads than deques touch the deques (thread ${thread})`);
      ownerOf.set(thread, d);
    }
    return d;
  };
  const log: number[][] = [];
  const original: number[][] = [];
  const indices: number[] = [];
  let maxValue = 0;
  let pushes = 0;
  for (let index = 0; index < run.events.length && log.length < MAX_RECORDS; index++) {
    const e = run.events[index];
    if (e[1] >= Kind.wait) continue; // waits, notifies and operation records: no deque access
    const at = where(e[2]);
    if (at === null) continue;
    if (at.w < 0) return `an access to word ${at.s} of deque ${at.d}, which is no protocol word`;
    if (e[1] < 1 || e[1] > 3) return `a ${KIND_NAMES[e[1]]} on deque ${at.d}: the deque makes only loads, stores and compare-exchanges`;
    if (e[0] === run.setupThread) {
      return `the pool's main thread accessed deque ${at.d} (it has no deque operations in this run)`;
    }
    if (at.w === 2) {
      maxValue = Math.max(maxValue, e[5], e[6]);
      if (e[1] === 2) pushes++;
    }
    log.push([specThread(e[0]), e[1], at.d, at.w, at.s, e[5], e[6]]);
    original.push(e);
    indices.push(index);
  }
  const snap = (d: number, inner: number) => run.snapshot[base + d * size + inner] ?? 0;
  for (let d = 0; d < workers; d++) {
    for (let s = 0; s < capacity; s++) maxValue = Math.max(maxValue, snap(d, 2 * LINE + s));
  }
  const deques = [...Array(workers).keys()];
  const lines = [
    "---------------------------- MODULE ChaseLevTraceData ----------------------------",
    `\\* GENERATED by spec/trace.ts from a ${run.runtime} ${run.scenario} run of spec/trace/run.ts: ${log.length} deque accesses.`,
    "EXTENDS Integers, Sequences",
    `TraceThieves == ${workers > 1 ? `1..${workers - 1}` : "{}"}`,
    `TracePushes == ${Math.max(pushes, maxValue) + 1}`,
    `SnapTop == [d \\in 0..${workers - 1} |-> ${tlaTuple(deques.map((d) => snap(d, 0)))}[d + 1]]`,
    `SnapBottom == [d \\in 0..${workers - 1} |-> ${tlaTuple(deques.map((d) => snap(d, LINE)))}[d + 1]]`,
    `SnapSlot == [d \\in 0..${workers - 1} |-> [s \\in 0..${capacity - 1} |-> ${
      tlaTuple(deques.map((d) => tlaTuple([...Array(capacity).keys()].map((s) => snap(d, 2 * LINE + s)))))
    }[d + 1][s + 1]]]`,
    "TraceLog == <<",
    log.map((r) => `  ${tlaTuple(r)}`).join(",\n"),
    ">>",
    "=============================================================================",
  ];
  const wordName = ["top", "bottom", "slot"];
  return {
    name: "deques",
    module: "ChaseLevTrace",
    dataModule: "ChaseLevTraceData",
    data: lines.join("\n") + "\n",
    records: log.length,
    indices,
    describe: (i) => {
      const r = log[i];
      if (r === undefined) return "(past the end of the log)";
      const word = r[3] === 2 ? `slot ${r[4]}` : wordName[r[3]];
      return `record ${i + 1}: thread ${r[0]} (threadId ${original[i][0]}) ${KIND_NAMES[r[1]]} deque ${r[2]} ${word}: ${
        r[1] === 2 ? "" : `${r[5]} -> `
      }${r[6]}`;
    },
  };
}

/**
 * One queue's accesses of a run, as a log for InjectorTrace: every thread that touches it is a producer
 * and a consumer; each record carries the value its thread writes to a value word next (the value the
 * spec's push pushes).
 *
 * @param run The recorded run.
 * @param queue Which of the run's queues.
 * @returns The validation, or a message saying why the log cannot be one.
 */
export function queueValidation(run: RecordedRun, queue: RecordedRun["regions"]["queues"][number]): Validation | string {
  const { base, capacity } = queue;
  const seqs = 2 * LINE;
  const values = seqs + capacity;
  const where = (word: number): { w: number; s: number } | null => {
    const off = word - base;
    if (off < 0 || off >= values + capacity) return null;
    if (off === 0) return { w: 0, s: 0 };
    if (off === LINE) return { w: 1, s: 0 };
    if (off >= seqs && off < values) return { w: 2, s: off - seqs };
    if (off >= values) return { w: 3, s: off - values };
    return { w: -1, s: off };
  };
  const log: number[][] = [];
  const original: number[][] = [];
  const indices: number[] = [];
  const threads = new Set<number>();
  let maxValue = 0;
  const pushesBy = new Map<number, number>();
  for (let index = 0; index < run.events.length && log.length < MAX_RECORDS; index++) {
    const e = run.events[index];
    if (e[1] >= Kind.wait) continue; // waits, notifies and operation records: no queue access
    const at = where(e[2]);
    if (at === null) continue;
    if (at.w < 0) return `an access to word ${at.s} of the ${queue.name}, which is no protocol word`;
    if (e[1] < 1 || e[1] > 3) return `a ${KIND_NAMES[e[1]]} on the ${queue.name}: the queue makes only loads, stores and compare-exchanges`;
    threads.add(e[0]);
    if (at.w === 3) maxValue = Math.max(maxValue, e[5], e[6]);
    if (at.w === 3 && e[1] === 2) pushesBy.set(e[0], (pushesBy.get(e[0]) ?? 0) + 1);
    log.push([e[0], e[1], at.w, at.s, e[5], e[6], 0]);
    original.push(e);
    indices.push(index);
  }
  // Each record's last field: the value its thread stores to a value word next (0 if none).
  const nextStore = new Map<number, number>();
  for (let i = log.length - 1; i >= 0; i--) {
    const r = log[i];
    if (r[2] === 3 && r[1] === 2) nextStore.set(r[0], r[5]);
    r[6] = nextStore.get(r[0]) ?? 0;
  }
  const snap = (off: number) => run.snapshot[base + off] ?? 0;
  const slots = [...Array(capacity).keys()];
  for (const s of slots) maxValue = Math.max(maxValue, snap(values + s));
  if (threads.size === 0) threads.add(0);
  const name = queue.name;
  const lines = [
    "---------------------------- MODULE InjectorTraceData ----------------------------",
    `\\* GENERATED by spec/trace.ts from a ${run.runtime} ${run.scenario} run of spec/trace/run.ts: ${log.length} accesses to the ${name}.`,
    "EXTENDS Integers, Sequences",
    `TraceThreads == {${[...threads].join(", ")}}`,
    `TracePushesEach == ${Math.max(1, ...pushesBy.values()) + 1}`,
    `TraceCapacity == ${capacity}`,
    `TraceMaxValue == ${maxValue}`,
    `SnapTail == ${snap(0)}`,
    `SnapHead == ${snap(LINE)}`,
    `SnapSeq == [s \\in 0..${capacity - 1} |-> ${tlaTuple(slots.map((s) => snap(seqs + s)))}[s + 1]]`,
    `SnapVal == [s \\in 0..${capacity - 1} |-> ${tlaTuple(slots.map((s) => snap(values + s)))}[s + 1]]`,
    "TraceLog == <<",
    log.map((r) => `  ${tlaTuple(r)}`).join(",\n"),
    ">>",
    "=============================================================================",
  ];
  const wordName = ["tail", "head", "seq", "value"];
  return {
    name,
    module: "InjectorTrace",
    dataModule: "InjectorTraceData",
    data: lines.join("\n") + "\n",
    records: log.length,
    indices,
    describe: (i) => {
      const r = log[i];
      if (r === undefined) return "(past the end of the log)";
      const word = r[2] >= 2 ? `${wordName[r[2]]} ${r[3]}` : wordName[r[2]];
      return `record ${i + 1}: threadId ${r[0]} ${KIND_NAMES[r[1]]} ${word}: ${r[1] === 2 ? "" : `${r[4]} -> `}${r[5]}`;
    },
  };
}

/** Objects of the sleep log (SleepWakeTrace.tla): words, deques and queues. */
const SleepObject = { counters: 0, lifecycle: 1, mainWaiting: 2, state: 100, deque: 200, injector: 300, completions: 301 };

/**
 * The sleep/wake log of a `sleep` run, for SleepWakeTrace: its operation records (deques, the injector, the
 * completion queue) and its accesses to the sleep words, the lifecycle word and the mainWaiting word, with
 * waits and notifies. Left out, as SleepWake leaves them out: the operations' own accesses, the free list of
 * task records, the task records, and each worker's `counted` word (bookkeeping for a dead worker). A
 * worker's length of the injector is kept: SleepWake's FindInjectorLeft.
 *
 * @param run The recorded run.
 * @returns The validation, or a message saying why the log cannot be one.
 */
export function sleepValidation(run: RecordedRun): Validation | string {
  const { deques, queues, sleep } = run.regions;
  if (sleep === undefined || deques === null) return "the run recorded no sleep words (not a sleep run)";
  const workers = deques.count;
  const injector = queues.find((q) => q.name === "injector")?.base;
  const completions = queues.find((q) => q.name === "completions")?.base;
  const freeRecords = queues.find((q) => q.name === "freeRecords")?.base;
  const dequeOf = (word: number) => {
    const off = word - deques.base;
    return off >= 0 && off < workers * deques.stride && off % deques.stride === 0 ? off / deques.stride : -1;
  };
  const objectOf = (word: number): number | null => {
    if (word === sleep.base) return SleepObject.counters;
    for (let i = 0; i < workers; i++) if (word === sleep.base + (i + 1) * LINE) return SleepObject.state + i;
    if (word === sleep.control) return SleepObject.lifecycle;
    if (word === sleep.control + LINE) return SleepObject.mainWaiting;
    return null;
  };
  // Worker threads by their own deque: the deque a thread pops and pushes.
  const workerOf = new Map<number, number>();
  for (const e of run.events) {
    if (e[1] === 12 && (e[3] === 1 || e[3] === 2)) {
      const d = dequeOf(e[2]);
      if (d >= 0) workerOf.set(e[0], d);
    }
  }
  const main = workers;
  const specThread = (thread: number): number | null =>
    thread === run.setupThread ? main : workerOf.get(thread) ?? null;
  const log: number[][] = [];
  const indices: number[] = [];
  let submits = 0;
  for (let index = 0; index < run.events.length && log.length < MAX_RECORDS; index++) {
    const e = run.events[index];
    const [thread, kind, word, a, b, , now] = e;
    let record: number[] | null = null;
    if (kind === 12) {
      if (word === freeRecords) continue;
      const d = dequeOf(word);
      const object = d >= 0 ? SleepObject.deque + d : word === injector ? SleepObject.injector
        : word === completions ? SleepObject.completions : null;
      if (object === null) return `an operation on word ${word}, which is no deque or queue of the sleep log`;
      if (a === 4) return "a single steal: the worker loop steals only half (SleepWake has no single steal)";
      const arg = a === 3 ? SleepObject.deque + dequeOf(b) : 0;
      if (object === SleepObject.injector && a === 6 && thread === run.setupThread) submits++;
      record = [0, 12, object, a, arg, 0, now];
    } else {
      const object = objectOf(word);
      if (object === null) continue; // a deque's, a queue's or a record's word, or a counted word
      record = [0, kind, object, a, b, e[5], now];
    }
    const t = specThread(thread);
    if (t === null) return `thread ${thread} touched the sleep words but owns no deque and is not the main thread`;
    record[0] = t;
    log.push(record);
    indices.push(index);
  }
  const snap = (word: number) => run.snapshot[word] ?? 0;
  const fresh = snap(sleep.base) === 0 && snap(sleep.control) === 0 && snap(sleep.control + LINE) === 0 &&
    [...Array(workers).keys()].every((i) => snap(sleep.base + (i + 1) * LINE) === 0);
  if (!fresh) return "the log does not start from a fresh pool's sleep words (SleepWake's Init)";
  const objectName = (o: number) =>
    o === 0 ? "counters" : o === 1 ? "lifecycle" : o === 2 ? "mainWaiting" : o < 200 ? `state ${o - 100}`
    : o < 300 ? `deque ${o - 200}` : o === 300 ? "injector" : "completions";
  const opName = ["?", "pop", "push", "stealHalf", "steal", "pop", "push", "length"];
  const lines = [
    "---------------------------- MODULE SleepWakeTraceData ----------------------------",
    `\\* GENERATED by spec/trace.ts from a ${run.runtime} ${run.scenario} run of spec/trace/run.ts: ${log.length} records.`,
    "EXTENDS Integers, Sequences",
    `TraceWorkers == 0..${workers - 1}`,
    `TraceMain == ${main}`,
    `TraceSubmits == ${submits}`,
    "TraceLog == <<",
    log.map((r) => `  ${tlaTuple(r)}`).join(",\n"),
    ">>",
    "=============================================================================",
  ];
  return {
    name: "sleep",
    module: "SleepWakeTrace",
    dataModule: "SleepWakeTraceData",
    data: lines.join("\n") + "\n",
    records: log.length,
    indices,
    acceptance: "furthest",
    describe: (i) => {
      const r = log[i];
      if (r === undefined) return "(past the end of the log)";
      const who = r[0] === main ? "main" : `worker ${r[0]}`;
      const what = r[1] === 12
        ? `${opName[r[3]]} ${objectName(r[2])}${r[3] === 3 ? ` into ${objectName(r[4])}` : ""} -> ${r[6]}`
        : `${KIND_NAMES[r[1]]} ${objectName(r[2])}: ${r[5]} -> ${r[6]}`;
      return `record ${i + 1}: ${who} ${what}`;
    },
  };
}

/** The code's TaskState numbers the graph log names (lib/record/fields.ts). */
const QUEUED = 1;
const WAITING = 6;
/** The TaskFlags bits the placement sets (lib/record/fields.ts): GRAPH, RETURN. */
const GRAPH_FLAG = 64;
const RETURN_FLAG = 256;
/** RecordWords the graph log reads (lib/record/fields.ts): state, outcome, flags, id. */
const R_STATE = 0;
const R_OUTCOME = 5;
const R_FLAGS = 10;
const R_ID = 12;
/** GraphWords (lib/protocol/layout.ts): pending, cause, target, source. */
const G_PENDING = 0;
const G_CAUSE = 1;
const G_TARGET = 4;
const G_SOURCE = 6;

/**
 * The logs of a `graph` run, one a graph (GraphTrace.tla): the run's graphs are submitted one after the
 * other, each awaited, so a graph's log runs from its placement (the submitter's plain writes naming its
 * records: a node's id and GRAPH flags, an edge's target and source) to the next graph's. Each access to a
 * node's state, pending or cause word is bound to the node's number, and each walker's write of VALUE
 * into a slot's outcome to the slot's input and dependant.
 */
export function graphValidations(run: RecordedRun): (Validation | string)[] {
  const g = run.regions.graph;
  if (g === undefined) return ["the run recorded no graph words (not a graph run)"];
  const main = run.setupThread;
  const workerIds = new Map<number, number>();
  const spec = (thread: number) => {
    if (thread === main) return 0;
    if (!workerIds.has(thread)) workerIds.set(thread, workerIds.size + 1);
    return workerIds.get(thread)!;
  };
  const mask = g.capacity - 1;
  interface Segment {
    nodes: Map<number, number>;
    flags: Map<number, number>;
    edges: Map<number, { target: number; source: number }>;
    edgeOrder: number[];
    log: number[][];
    indices: number[];
    submitted: boolean;
  }
  const segments: Segment[] = [];
  const ids = new Map<number, number>();
  let seg: Segment | null = null;
  for (let index = 0; index < run.events.length; index++) {
    const [thread, kind, word, a, , old, now] = run.events[index];
    const inRecords = word >= g.records && word < g.records + g.capacity * g.recordWords;
    const inGraph = word >= g.graph && word < g.graph + g.capacity * g.graphWords;
    if (!inRecords && !inGraph) continue;
    const at = inRecords ? Math.floor((word - g.records) / g.recordWords) : Math.floor((word - g.graph) / g.graphWords);
    const field = inRecords ? (word - g.records) % g.recordWords : (word - g.graph) % g.graphWords;
    const t = spec(thread);
    if (t === 0 && kind === Kind.write) {
      // The placement: the submitter's plain writes.
      if (inRecords && field === R_ID) ids.set(at, now);
      else if (inRecords && field === R_FLAGS && (now & GRAPH_FLAG) !== 0) {
        if (seg === null || seg.submitted) {
          seg = { nodes: new Map(), flags: new Map(), edges: new Map(), edgeOrder: [], log: [], indices: [], submitted: false };
          segments.push(seg);
        }
        seg.nodes.set(at, ids.get(at) ?? 0);
        seg.flags.set(at, now);
      } else if (seg !== null && !seg.submitted && inGraph && (field === G_TARGET || field === G_SOURCE)) {
        if (!seg.edges.has(at)) {
          seg.edges.set(at, { target: -1, source: -1 });
          seg.edgeOrder.push(at);
        }
        if (field === G_TARGET) seg.edges.get(at)!.target = now & mask;
        else seg.edges.get(at)!.source = now;
      }
      continue;
    }
    if (seg === null || kind === Kind.load) continue;
    let record: number[] | null = null;
    const node = seg.nodes.get(at);
    if (inRecords && field === R_STATE && node !== undefined && kind !== Kind.write) {
      if (t === 0) {
        if (kind === Kind.store && now === QUEUED) {
          if (!seg.submitted) record = [t, 1, node, 0, old, now];
          seg.submitted = true;
        } else if (kind === Kind.compareExchange) {
          // cancelGraph: from WAITING, then, if it found QUEUED, from QUEUED: one CancelCasNode.
          if (!(a === WAITING && old === QUEUED)) record = [t, 8, node, 0, old, now];
        } else record = [t, 99, node, kind, old, now];
      } else record = [t, kind === Kind.compareExchange ? 2 : kind === Kind.store ? 3 : 99, node, kind, old, now];
    } else if (inRecords && field === R_OUTCOME && kind === Kind.write && t !== 0 && now === 0) {
      const edge = seg.edges.get(at);
      if (edge !== undefined) record = [t, 4, seg.nodes.get(edge.target) ?? 0, edge.source, old, now];
    } else if (inGraph && (field === G_PENDING || field === G_CAUSE) && node !== undefined && kind !== Kind.write) {
      const what = field === G_PENDING ? (kind === Kind.sub && a === 1 ? 6 : 99) : kind === Kind.compareExchange ? 5 : 99;
      record = [t, what, node, what === 99 ? kind : 0, old, now];
    }
    if (record !== null) {
      seg.log.push(record);
      seg.indices.push(index);
    }
  }
  const workers = Math.max(2, workerIds.size);
  const whatName = ["?", "submit", "cas state", "store state", "publish slot", "cas cause", "sub pending", "?", "cancel cas"];
  return segments.map((s, k): Validation | string => {
    const n = s.nodes.size;
    const edges = s.edgeOrder.map((e) => s.edges.get(e)!).map((e) => [e.source, s.nodes.get(e.target) ?? 0]);
    const key = edges.map(([from, to]) => `${from}>${to}`).sort().join(",");
    const shape = n === 4 && key === "1>2,1>3,2>4,3>4" ? "diamond" : n === 3 && key === "1>2,2>3" ? "chain"
      : n === 3 && key === "1>3,2>3" ? "join" : null;
    if (shape === null) return `graph ${k + 1} is no shape Graph.tla models (${n} nodes, edges ${key})`;
    const deps = [...Array(n).keys()].map((i) => edges.filter(([from]) => from === i + 1).map(([, to]) => to).reverse());
    const mayFail = [...new Set(s.log.filter((r) => r[1] === 3 && r[5] === 7).map((r) => r[2]))];
    const cancellable = [...s.flags.values()].every((f) => (f & RETURN_FLAG) !== 0);
    const name = `graph ${k + 1} (${shape}${mayFail.length > 0 ? ", failing" : ""}${
      s.log.some((r) => r[1] === 8) ? ", cancelled" : ""
    })`;
    const lines = [
      "---------------------------- MODULE GraphTraceData ----------------------------",
      `\\* GENERATED by spec/trace.ts from a ${run.runtime} ${run.scenario} run of spec/trace/run.ts: ${name}, ${s.log.length} records.`,
      "EXTENDS Integers, Sequences",
      `TraceWorkers == 1..${workers}`,
      "TraceMain == 0",
      `TraceShape == "${shape}"`,
      `TraceMayFail == {${mayFail.join(", ")}}`,
      `TraceMaxCancels == ${cancellable ? 1 : 0}`,
      `TraceDepList == <<${deps.map((d) => `<<${d.join(", ")}>>`).join(", ")}>>`,
      "TraceLog == <<",
      s.log.map((r) => `  ${tlaTuple(r)}`).join(",\n"),
      ">>",
      "=============================================================================",
    ];
    return {
      name,
      module: "GraphTrace",
      dataModule: "GraphTraceData",
      data: lines.join("\n") + "\n",
      records: s.log.length,
      indices: s.indices,
      acceptance: "furthest",
      describe: (i) => {
        const r = s.log[i];
        if (r === undefined) return "(past the end of the log)";
        const who = r[0] === 0 ? "main" : `worker ${r[0]}`;
        return `record ${i + 1}: ${who} ${whatName[r[1]] ?? `unexpected access (kind ${KIND_NAMES[r[3]]})`} node ${r[2]}${
          r[1] === 4 ? ` from ${r[3]}` : ""
        }: ${r[4]} -> ${r[5]}`;
      },
    };
  });
}

/** ElasticTrace's object numbers: the size word, the counters word (a slot's word is its index + 1). */
const E_SIZE = 0;
const E_COUNTERS = 100;
const SLEEPERS_MASK = 0x3ff; // lib/protocol/sleep.ts: the counters word's sleeping count

/** One record of an elastic log (ElasticTrace.tla): who, kind, obj, a, b, old, now. */
type ElasticRecord = number[];

/**
 * The elastic log of a run: its accesses (loads, stores, read-modify-writes; not waits and notifies) to
 * the slot words, the size word and the counters word (its sleeping count only), in their order. A worker
 * thread is named by its slot (index + 1): the slot word it stores to (only a slot's worker stores to its
 * word; a slot's threads follow one another); the pool's main thread is 0; a worker that stored to no slot
 * word is -1.
 */
function elasticLog(run: RecordedRun): { log: ElasticRecord[]; indices: number[] } | string {
  const e = run.regions.elastic;
  if (e === undefined) return "the run recorded no elastic words (not an elastic run)";
  const slotOf = new Map(e.slots.map((w, i) => [w, i + 1]));
  const threadSlot = new Map<number, number>();
  for (const [thread, kind, word] of run.events) {
    const slot = slotOf.get(word);
    if (kind === Kind.store && slot !== undefined && thread !== run.setupThread) {
      const known = threadSlot.get(thread);
      if (known !== undefined && known !== slot) return `thread ${thread} stored to the words of slots ${known} and ${slot}`;
      threadSlot.set(thread, slot);
    }
  }
  const log: ElasticRecord[] = [];
  const indices: number[] = [];
  for (let index = 0; index < run.events.length && log.length < MAX_RECORDS; index++) {
    const [thread, kind, word, a, b, old, now] = run.events[index];
    if (kind < Kind.load || kind > Kind.sub) continue; // waits and notifies change no word
    const obj = word === e.size ? E_SIZE : word === e.counters ? E_COUNTERS : slotOf.get(word);
    if (obj === undefined) continue;
    const who = thread === run.setupThread ? 0 : threadSlot.get(thread) ?? -1;
    log.push(
      obj === E_COUNTERS ? [who, kind, obj, 0, 0, old & SLEEPERS_MASK, now & SLEEPERS_MASK] : [who, kind, obj, a, b, old, now],
    );
    indices.push(index);
  }
  const fresh = run.snapshot[e.size] === e.min && (run.snapshot[e.counters] & SLEEPERS_MASK) === 0 &&
    e.slots.every((w, i) => run.snapshot[w] === (i < e.min ? 0 : 3));
  if (!fresh) return "the log does not start from a fresh elastic pool's words (ElasticTrace's TraceInit)";
  return { log, indices };
}

/**
 * A log edit that must be rejected: the elastic log as it would be had the code the named bug (ElasticTrace
 * must reject it). Returns the edited log, or a message if the run has no place for the bug.
 */
interface ElasticTraceMutant {
  name: string;
  /** The bug, as printed. */
  what: string;
  edit(log: readonly ElasticRecord[]): ElasticRecord[] | string;
}

const isRetireCas = (r: ElasticRecord) => r[0] > 0 && r[0] === r[2] && r[1] === Kind.compareExchange && r[5] === 1 && r[6] === 2;
const isReserve = (r: ElasticRecord) => r[0] > 0 && r[2] === E_SIZE && r[1] === Kind.compareExchange && r[6] === r[5] - 1;
const isUncount = (r: ElasticRecord) => r[0] > 0 && r[2] === E_COUNTERS && r[1] === Kind.sub;

/** ElasticTrace's log mutants (run on the first real `elastic` run's log). */
export const ELASTIC_TRACE_MUTANTS: readonly ElasticTraceMutant[] = [
  {
    name: "elastic_trace_sleeping_to_absent",
    what: "a worker leaves its slot SLEEPING -> ABSENT without RETIRING (RetireCasSlot left out)",
    edit(log) {
      const at = log.findIndex(isRetireCas);
      if (at < 0) return "the run has no retirement";
      // Its RetireStoreAbsent (a store: its record holds no word before it) then finds the word SLEEPING.
      const out = log.map((r) => [...r]);
      out.splice(at, 1);
      return out;
    },
  },
  {
    name: "elastic_trace_size_above_max",
    what: "the owner reserves one worker more than the maximum (a second GrowReserve after the first)",
    edit(log) {
      const at = log.findIndex((r) => r[0] === 0 && r[2] === E_SIZE && r[1] === Kind.compareExchange && r[6] === r[5] + 1);
      if (at < 0) return "the run has no growth";
      const out = log.map((r) => [...r]);
      const [who, kind, obj, a, b, old, now] = out[at];
      out.splice(at + 1, 0, [who, kind, obj, a + 1, b + 1, old + 1, now + 1]);
      // Every later access to the size word sees the size one higher.
      for (let i = at + 2; i < out.length; i++) {
        if (out[i][2] !== E_SIZE) continue;
        if (out[i][1] === Kind.compareExchange) out[i][3]++, out[i][4]++;
        if (out[i][1] === Kind.store) out[i][3]++;
        out[i][5]++, out[i][6]++;
      }
      return out;
    },
  },
  {
    name: "elastic_trace_retire_without_reserve",
    what: "a worker retires without reserving its leave on the size word (RetireReserve left out)",
    edit(log) {
      const at = log.findIndex(isReserve);
      if (at < 0) return "the run has no retirement";
      const out = log.map((r) => [...r]);
      out.splice(at, 1);
      for (let i = at; i < out.length; i++) {
        if (out[i][2] !== E_SIZE) continue;
        if (out[i][1] === Kind.compareExchange) out[i][3]++, out[i][4]++;
        if (out[i][1] === Kind.store) out[i][3]++;
        out[i][5]++, out[i][6]++;
      }
      return out;
    },
  },
  {
    name: "elastic_trace_retire_counted",
    what: "a worker takes its slot RETIRING while still counted asleep (RetireCasSlot before RetireUncount)",
    edit(log) {
      const at = log.findIndex(isRetireCas);
      if (at < 0) return "the run has no retirement";
      let uncount = -1;
      for (let i = at - 1; i >= 0; i--) {
        if (isUncount(log[i]) && log[i][0] === log[at][0]) {
          uncount = i;
          break;
        }
      }
      if (uncount < 0) return "the retirement has no RetireUncount";
      const out = log.map((r) => [...r]);
      const [moved] = out.splice(uncount, 1);
      out.splice(at, 0, moved); // now just after the compare-exchange
      return out;
    },
  },
];

/**
 * The elastic pool's log of an `elastic` run (ElasticTrace.tla), optionally edited by a log mutant.
 *
 * @param run The recorded run.
 * @param mutant A log mutant to apply (its log must then be rejected).
 * @returns The validation, or a message saying why the log cannot be one.
 */
export function elasticValidation(run: RecordedRun, mutant?: ElasticTraceMutant): Validation | string {
  const got = elasticLog(run);
  if (typeof got === "string") return got;
  const e = run.regions.elastic!;
  const log = mutant === undefined ? got.log : mutant.edit(got.log);
  if (typeof log === "string") return `${mutant!.name}: ${log}`;
  const objName = (o: number) => (o === E_SIZE ? "size" : o === E_COUNTERS ? "sleeping count" : `slot ${o}`);
  const lines = [
    "---------------------------- MODULE ElasticTraceData ----------------------------",
    `\\* GENERATED by spec/trace.ts from a ${run.runtime} ${run.scenario} run of spec/trace/run.ts: ${log.length} records${
      mutant === undefined ? "" : `, edited by the log mutant ${mutant.name}`
    }.`,
    "EXTENDS Integers, Sequences",
    `TraceMin == ${e.min}`,
    `TraceMax == ${e.max}`,
    "TraceLog == <<",
    log.map((r) => `  ${tlaTuple(r)}`).join(",\n"),
    ">>",
    "=============================================================================",
  ];
  return {
    name: mutant === undefined ? "elastic" : mutant.name,
    module: "ElasticTrace",
    dataModule: "ElasticTraceData",
    data: lines.join("\n") + "\n",
    records: log.length,
    indices: mutant === undefined ? got.indices : [],
    describe: (i) => {
      const r = log[i];
      if (r === undefined) return "(past the end of the log)";
      const who = r[0] === 0 ? "main" : r[0] > 0 ? `worker of slot ${r[0]}` : "a worker of no slot";
      const what = r[1] === Kind.store ? `${r[6]}` : `${r[5]} -> ${r[6]}`;
      return `record ${i + 1}: ${who} ${KIND_NAMES[r[1]]} ${objName(r[2])}: ${what}`;
    },
  };
}

/** How a log fared: see the module doc. */
export type Verdict = "ACCEPTED" | "REJECTED" | "VIOLATED" | "ERROR";

/**
 * Runs TLC on one log.
 *
 * @returns The verdict, what it rests on, and the number of records the longest matching behaviour took.
 */
async function check(java: string, jar: string, v: Validation): Promise<{ verdict: Verdict; detail: string; seconds: number }> {
  const work = mkdtempSync(join(tmpdir(), "filch-trace-tlc-"));
  for (const f of readdirSync(specDir)) if (f.endsWith(".tla")) copyFileSync(join(specDir, f), join(work, f));
  copyFileSync(join(specDir, `${v.module}.cfg`), join(work, `${v.module}.cfg`));
  writeFileSync(join(work, `${v.dataModule}.tla`), v.data);
  if (keepDir !== null) writeFileSync(join(keepDir, `${v.dataModule}-${v.name}-${Date.now()}.tla`), v.data);
  const args = [
    "-XX:+UseParallelGC",
    "-Xss16m", // a long log is one long tuple: the parser recurses over it
    "-cp",
    jar,
    "tlc2.TLC",
    "-workers",
    "1",
    "-deadlock", // a behaviour that cannot take the next record simply ends: that is not an error here
    "-metadir",
    join(work, "states"),
    "-config",
    `${v.module}.cfg`,
    `${v.module}.tla`,
  ];
  const { output, seconds } = await runWithDeadline(java, args, work, TLC_DEADLINE_S, `TLC on the ${v.name} log`);
  rmSync(work, { recursive: true, force: true });
  const outcome = parseTlcOutput(output);
  if (outcome.violated !== null) {
    return { verdict: "VIOLATED", detail: `${outcome.violated} broken by a behaviour that matches the log so far`, seconds };
  }
  if (outcome.clean && v.acceptance === "furthest") {
    let furthest = 0;
    for (const m of output.matchAll(/<<"furthest", (\d+)>>/g)) furthest = Math.max(furthest, Number(m[1]));
    if (furthest === v.records) return { verdict: "ACCEPTED", detail: `all ${v.records} records matched`, seconds };
    return {
      verdict: "REJECTED",
      detail: `no behaviour takes ${v.describe(furthest)} (after ${furthest} of ${v.records} records)`,
      seconds,
    };
  }
  if (outcome.clean && outcome.depth !== null) {
    // The search's depth counts states: the initial one, then one per record matched.
    const matched = outcome.depth - 1;
    if (matched === v.records) return { verdict: "ACCEPTED", detail: `all ${v.records} records matched`, seconds };
    return {
      verdict: "REJECTED",
      detail: `no behaviour takes ${v.describe(matched)} (after ${matched} of ${v.records} records)`,
      seconds,
    };
  }
  const lines = output.split("\n").filter((l) => /Error|error|Exception|TIMED OUT|Assumption/.test(l)).slice(0, 8);
  return { verdict: "ERROR", detail: lines.join(" | ") || output.slice(-400), seconds };
}

const TLC_DEADLINE_S = 10 * 60;
const DRIVER_DEADLINE_S = 90;
let keepDir: string | null = null;

/** Runs `spec/trace/run.ts`'s `scenario` on `runtime` with the lib at `libRoot`; returns its recorded run. */
async function record(runtime: string, libRoot: string, scenario: string): Promise<RecordedRun> {
  const out = join(mkdtempSync(join(tmpdir(), "filch-trace-run-")), "trace.json");
  const driver = join(root, "spec", "trace", "run.ts");
  const args = ["--scenario", scenario, "--out", out, "--root", libRoot];
  const [command, argv] = runtime === "deno"
    ? [join(bin, "deno"), ["run", "-A", driver, ...args]]
    : [join(bin, runtime), [driver, ...args]];
  // The driver has its own deadline for the pool; this one is for the driver itself.
  const { code, output } = await runWithDeadline(command, argv, root, DRIVER_DEADLINE_S, `the traced run on ${runtime}`, {
    ...process.env,
    NO_COLOR: "1",
  });
  let run: RecordedRun;
  try {
    run = JSON.parse(readFileSync(out, "utf8"));
  } catch {
    throw new Error(`the traced run on ${runtime} wrote no trace (exit ${code}): ${output.trim().slice(-600)}`);
  } finally {
    rmSync(dirname(out), { recursive: true, force: true });
  }
  if (code !== 0 && run.failure === "") run.failure = `exit ${code}: ${output.trim().slice(-300)}`;
  return run;
}

/** A copy of `mod.ts` and `lib/` with `mutant` applied; returns the copy's root URL (with a trailing slash). */
function mutatedRoot(mutant: Mutant | TraceMutant, into: string): string {
  const dir = join(into, mutant.name);
  mkdirSync(dir, { recursive: true });
  cpSync(join(root, "lib"), join(dir, "lib"), { recursive: true });
  copyFileSync(join(root, "mod.ts"), join(dir, "mod.ts"));
  // Node decides ESM vs CommonJS for a .ts file by the nearest package.json.
  writeFileSync(join(dir, "package.json"), '{ "type": "module" }\n');
  // The protocol mutants (tests/mutants/mutants.ts) name their module inside lib/protocol/; trace
  // validation's own name their file under lib/.
  const file = "file" in mutant ? join(dir, "lib", mutant.file) : join(dir, "lib", "protocol", mutant.module);
  writeFileSync(
    file,
    applyPatches(readFileSync(file, "utf8"), "file" in mutant ? { ...mutant, module: mutant.file } : mutant),
  );
  return pathToFileURL(dir).href + "/";
}

/** The validations of a recorded run, for the protocols given. */
function validations(run: RecordedRun, protocols: readonly string[]): (Validation | string)[] {
  const out: (Validation | string)[] = [];
  if (run.regions.graph !== undefined) return protocols.includes("graph") ? graphValidations(run) : [];
  if (run.regions.elastic !== undefined) return protocols.includes("elastic") ? [elasticValidation(run)] : [];
  if (run.regions.sleep !== undefined) {
    // A sleep run's deque and queue operations are atomic (one at a time): its deque and queue logs would
    // add little to the pool and stress runs' (they pass: checked when this was written) at a minute of
    // TLC a run, so only its sleep log is checked.
    return protocols.includes("sleep.ts") ? [sleepValidation(run)] : [];
  }
  if (protocols.includes("deque.ts") && run.regions.deques !== null) out.push(dequeValidation(run));
  if (protocols.includes("injector.ts")) {
    for (const queue of run.regions.queues) {
      const v = queueValidation(run, queue);
      // A queue the run never touched (the free blocks, without large payloads) has nothing to check.
      if (typeof v === "string" || v.records > 0) out.push(v);
    }
  }
  return out;
}

/** The scenarios of spec/trace/run.ts every runtime runs. */
const SCENARIOS = ["pool", "producers", "stress", "sleep", "graph", "elastic"] as const;
/** Stress runs a mutant gets before the pool run (a bug that needs a race may not show in one). */
const ATTEMPTS = 5;
/**
 * Sleep runs a sleep mutant gets. The race `sleep_skips_final_check` needs (a post between a worker's
 * getSleepy and its final check) happened in the first sleep run, three times of three, once the steering of
 * spec/trace/pool.ts waited long enough for a sleepy worker; 8 runs are the margin for a slower machine.
 */
const SLEEP_ATTEMPTS = 8;

/**
 * A copy of `run` with one recorded value changed: the middle access of `v`'s log that reads a value (a load
 * or a compare-exchange) sees that value plus one. No behaviour of the spec can match it.
 */
function corrupt(run: RecordedRun, v: Validation): RecordedRun {
  // A load or a compare-exchange: every spec checks the value such an access saw.
  const reads = v.indices.filter((i) => run.events[i][1] === Kind.load || run.events[i][1] === Kind.compareExchange);
  const i = reads[Math.floor(reads.length / 2)];
  const events = run.events.map((e) => [...e]);
  events[i][5] += 1;
  events[i][6] += 1;
  return { ...run, events };
}

/** A mutant of trace validation's own: a patch of a file of `lib/` (its path under `lib/`). */
interface TraceMutant {
  name: string;
  /** The patched file, under `lib/` (e.g. "graph/walk.ts"). */
  file: string;
  bug: string;
  patches: Mutant["patches"];
  /** The scenario whose logs must reject it (default `graph`). */
  scenario?: "graph" | "elastic";
}

/**
 * The elastic pool's kept mutants (group `elastic` of tests/mutants/mutants.ts), run under the `elastic`
 * scenario: a bug in the slot, size or counters words' steps must give a rejected log (or a run that fails
 * its own check: one that never grows or never retires).
 */
export const ELASTIC_CODE_TRACE_MUTANTS: readonly TraceMutant[] = ELASTIC_MUTANTS.map((m) => ({
  name: m.name,
  file: m.module,
  bug: m.bug,
  patches: m.patches,
  scenario: "elastic",
}));
/** Elastic runs an elastic mutant gets. */
const ELASTIC_ATTEMPTS = 3;

/**
 * The graph's kept mutants (patches of `lib/graph/`), each of which some `graph` run's log must have TLC
 * reject (GraphTrace.tla): the bugs spec/Graph.tla's own mutants name, as the code would have them.
 */
export const GRAPH_TRACE_MUTANTS: readonly TraceMutant[] = [
  {
    name: "graph_trace_decrement_before_publish",
    file: "graph/walk.ts",
    bug: "a resolved input's walk decrements the dependant's count before it writes the slot: the dependant may start and read its slot before the result is in it",
    patches: [
      {
        find: "      if (cause === 0) {\n        this.writeSlot(at, source!);",
        replace: "      const early = cause === 0 ? graph.decrement(ti) : 0;\n      if (cause === 0) {\n        this.writeSlot(at, source!);",
      },
      {
        find: "      if (graph.decrement(ti) === 1) this.own(target, ti); // spec: WalkDecrement",
        replace: "      if ((cause === 0 ? early : graph.decrement(ti)) === 1) this.own(target, ti);",
      },
    ],
  },
  {
    name: "graph_trace_zero_store",
    file: "graph/walk.ts",
    bug: "the zero-reacher's compare-exchange of the dependant's state from WAITING is a load and a store: it overwrites the owner's CANCELLED",
    patches: [{
      find: "    const found = this.table.fields.casState(index, TaskState.WAITING, to); // spec: ZeroCasState",
      replace: "    const found = this.table.fields.loadState(index);\n    this.table.fields.storeState(index, to);",
    }],
  },
  {
    name: "graph_trace_decrement_twice",
    file: "graph/walk.ts",
    bug: "a walk whose decrement does not take the count to zero decrements it again: a join starts before its last input walked",
    patches: [{
      find: "      if (graph.decrement(ti) === 1) this.own(target, ti); // spec: WalkDecrement",
      replace: "      if (graph.decrement(ti) === 1 || graph.decrement(ti) === 1) this.own(target, ti);",
    }],
  },
];

/** Graph runs a graph mutant gets (each runs every shape twice). */
const GRAPH_ATTEMPTS = 3;

/** The modules trace validation covers, and their mutants that it runs. */
const COVERED = ["deque.ts", "injector.ts", "sleep.ts", "graph", "elastic"];

async function main(argv: string[]): Promise<number> {
  let runtimes = ["deno", "bun", "node"];
  let mutantNames: string[] | "all" = "all";
  let scenarios: readonly string[] = SCENARIOS;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--runtimes") runtimes = argv[++i].split(",");
    else if (argv[i] === "--scenarios") {
      const v = argv[++i];
      scenarios = v === "none" ? [] : v.split(",");
    }
    else if (argv[i] === "--mutants") {
      const v = argv[++i];
      mutantNames = v === "all" ? "all" : v === "none" ? [] : v.split(",");
    } else if (argv[i] === "--keep") keepDir = argv[++i];
    else {
      throw new RangeError(
        `Cannot run trace.ts as '${argv[i]}' is not an option: use --runtimes, --scenarios, --mutants all|none|A,B or --keep DIR`,
      );
    }
  }
  const mutants = [...ALL_MUTANTS, ...SLEEP_MUTANTS, ...GRAPH_TRACE_MUTANTS, ...ELASTIC_CODE_TRACE_MUTANTS].filter((m) =>
    ("file" in m || COVERED.includes(m.module)) && (mutantNames === "all" || mutantNames.includes(m.name))
  );
  if (mutantNames !== "all") {
    for (const name of mutantNames) {
      if (!mutants.some((m) => m.name === name) && !ELASTIC_TRACE_MUTANTS.some((m) => m.name === name)) {
        throw new RangeError(`Cannot run trace.ts as '${name}' is not a mutant of ${COVERED.join(", ")}`);
      }
    }
  }
  let java: string;
  let jar: string;
  try {
    java = findJava();
    jar = await findJar();
  } catch (error) {
    if (!(error instanceof Skip)) throw error;
    printSkipped("trace validation", error.message);
    return 2;
  }
  let problems = 0;
  const started = performance.now();
  const report = (what: string, v: Validation | string, result: { verdict: Verdict; detail: string; seconds: number } | null, ok: boolean) => {
    const name = typeof v === "string" ? "?" : `${v.name} (${v.records} records)`;
    const text = result === null ? `ERROR ${v as string}` : `${result.verdict} in ${result.seconds.toFixed(1)}s: ${result.detail}`;
    console.log(`${ok ? "ok  " : "FAIL"} ${what.padEnd(44)} ${name.padEnd(24)} ${text}`);
    if (!ok) problems++;
  };

  const here = pathToFileURL(root).href + "/";
  // The first run of each scenario but stress (whose logs are judged by the same specs as the pool's).
  const controls = new Map<string, RecordedRun>();
  console.log(`Real runs (scenarios ${scenarios.join(", ")} of spec/trace/run.ts): every log must be ACCEPTED`);
  for (const runtime of runtimes) {
    for (const scenario of scenarios) {
      let run: RecordedRun;
      try {
        run = await record(runtime, here, scenario);
      } catch (error) {
        console.log(`FAIL ${runtime} ${scenario}: ${(error as Error).message}`);
        problems++;
        continue;
      }
      if (scenario !== "stress" && !controls.has(scenario)) controls.set(scenario, run);
      const what = `${runtime} ${scenario}${run.overflow ? " (log full: a prefix)" : ""}${
        run.failure ? ` [run failed: ${run.failure}]` : ""
      }`;
      if (run.failure !== "") problems++; // the real code must not fail
      const checked = validations(run, COVERED);
      for (const v of checked) {
        const result = typeof v === "string" ? null : await check(java, jar, v);
        report(what, v, result, result?.verdict === "ACCEPTED");
      }
      // A run that recorded nothing would pass every check: it fails, as does a producers run in which a
      // producer's completion queue saw no access (the recorder missed the pool's buffer, or its threads).
      const unrecorded = checked.length === 0
        ? ["every log"]
        : scenario === "producers"
        ? run.regions.queues.filter((q) => q.name.startsWith("producer")).map((q) => q.name).filter((name) =>
          !checked.some((v) => typeof v !== "string" && v.name === name && v.records > 0)
        )
        : [];
      if (unrecorded.length > 0) {
        console.log(`FAIL ${what.padEnd(44)} recorded no accesses: ${unrecorded.join(", ")}`);
        problems++;
      }
    }
  }

  // The check must be able to fail: the first real run's logs with one value changed in the middle.
  if (controls.size > 0) {
    console.log("\nControls (a real log with one recorded value changed): must be REJECTED");
    for (const control of controls.values()) {
      // A graph run's logs are one a graph: two of them (a diamond and a join) are enough of a control.
      for (const v of validations(control, COVERED).slice(0, control.scenario === "graph" ? 2 : undefined)) {
        if (typeof v === "string" || v.records === 0) continue;
        const corrupted = validations(corrupt(control, v), COVERED).find((c) =>
          typeof c !== "string" && c.name === v.name
        );
        if (corrupted === undefined || typeof corrupted === "string") continue;
        const result = await check(java, jar, corrupted);
        report(`${control.runtime} ${control.scenario}, one value changed`, corrupted, result, result.verdict === "REJECTED");
      }
    }
  }

  // ElasticTrace's log mutants: the first real elastic run's log, edited as each bug would have it.
  const elasticControl = controls.get("elastic");
  const elasticMutants = ELASTIC_TRACE_MUTANTS.filter((m) => mutantNames === "all" || mutantNames.includes(m.name));
  if (elasticControl !== undefined && elasticMutants.length > 0) {
    console.log(`\nElastic log mutants (the ${elasticControl.runtime} elastic log, edited as the bug would have it): must be REJECTED or VIOLATED`);
    for (const mutant of elasticMutants) {
      const v = elasticValidation(elasticControl, mutant);
      const result = typeof v === "string" ? null : await check(java, jar, v);
      report(mutant.name, v, result, result?.verdict === "REJECTED" || result?.verdict === "VIOLATED");
    }
  }

  if (mutants.length > 0) {
    console.log(
      `\nMutant runs (mod.ts and lib/ copied with one TypeScript mutant, on ${runtimes[0]}): some log must be REJECTED or VIOLATED, or the run's own check fail`,
    );
    const scratch = mkdtempSync(join(tmpdir(), "filch-trace-mutants-"));
    try {
      for (const mutant of mutants) {
        const mutantRoot = mutatedRoot(mutant, scratch);
        let caughtBy = "";
        const tried: string[] = [];
        // A bug that needs a race may not show in one run: the deque's and the queue's, up to ATTEMPTS
        // stress runs, then the pool; sleep/wake's, up to SLEEP_ATTEMPTS sleep runs.
        const protocol = "file" in mutant ? mutant.scenario ?? "graph" : mutant.module;
        const plan = protocol === "graph"
          ? Array(GRAPH_ATTEMPTS).fill("graph")
          : protocol === "elastic"
          ? Array(ELASTIC_ATTEMPTS).fill("elastic")
          : protocol === "sleep.ts"
          ? Array(SLEEP_ATTEMPTS).fill("sleep")
          : [...Array(ATTEMPTS).fill("stress"), "pool"];
        for (const [attempt, scenario] of plan.entries()) {
          if (caughtBy !== "") break;
          const runName = scenario === "pool" ? "pool run" : `${scenario} run ${attempt + 1}`;
          // The elastic mutants on Node where it runs: on Deno, under the trace's lock on this machine, a
          // started worker loaded only after the other had retired, so no retirement at the minimum came
          // (retire_below_min had nothing to show); on Node and Bun both workers overlap.
          const runtime = scenario === "elastic" && runtimes.includes("node") ? "node" : runtimes[0];
          const run = await record(runtime, mutantRoot, scenario);
          // The logs first: the run's own check (ids and values taken once, a deadline) only if every
          // log was accepted.
          for (const v of validations(run, [protocol])) {
            if (caughtBy !== "") break;
            if (typeof v === "string") {
              caughtBy = `${runName}: the log is malformed: ${v}`;
              continue;
            }
            const result = await check(java, jar, v);
            if (result.verdict === "REJECTED" || result.verdict === "VIOLATED") {
              caughtBy = `${runName}: ${v.name} log ${result.verdict}: ${result.detail}`;
            } else tried.push(`${scenario} ${v.name} ${result.verdict}`);
          }
          if (caughtBy === "" && run.failure !== "") {
            caughtBy = `${runName}: every log accepted, but the run failed its own check: ${run.failure}`;
          }
        }
        const ok = caughtBy !== "";
        console.log(`${ok ? "ok  " : "FAIL"} ${mutant.name.padEnd(40)} ${ok ? `CAUGHT: ${caughtBy}` : `MISSED: ${tried.join("; ")}`}`);
        if (!ok) problems++;
      }
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  }
  const total = ((performance.now() - started) / 1000).toFixed(1);
  console.log("");
  if (problems > 0) {
    console.log(`Trace validation FAILED: ${problems} unexpected outcome(s) in ${total}s`);
    return 1;
  }
  console.log(`Trace validation ok: every real log accepted, every mutant's log rejected, in ${total}s`);
  return 0;
}

if (import.meta.main ?? process.argv[1] === fileURLToPath(import.meta.url)) {
  const code = await main(process.argv.slice(2));
  // Exits once standard output has flushed: to a slow pipe (tests/run_all.ts parses the summary) a plain
  // exit() can drop the last lines.
  process.stdout.write("", () => process.exit(code));
}
