/**
 * The graph model (issue 48): the shipped walk of task graphs (`lib/graph/walk.ts`), the cancellation's visit
 * (`lib/graph/submit.ts` `cancelGraph`) and the placement (`placeGraph`, on the controller before the run)
 * under the kernel's controlled interleavings; see tests/lincheck/README.md, "Task graphs". The threads'
 * programs are `thread.ts`'s; here are the scenarios, the run's set-up and end, the oracles (spec/Graph.tla's
 * properties) and the reports.
 *
 * A scenario is a graph (each node's inputs by argument position, whether its task throws), 1–3 workers and
 * which worker's deque each root is pushed onto, and an owner thread that may walk a node whose worker died
 * running it (`GraphWalker.died`) and may cancel the graph. Every node's record comes back to its submitter
 * (`TaskFlags.RETURN`, as in a cancellable graph), so every node's settle is published and judged.
 *
 * @module
 */

import fc from "fast-check";
import { Encoder } from "../../../../lib/codec/codec.ts";
import { placeGraph } from "../../../../lib/graph/submit.ts";
import { CANCEL } from "../../../../lib/graph/words.ts";
import { Deque, initDeque } from "../../../../lib/protocol/deque.ts";
import { GRAPH_WORDS, GraphWords } from "../../../../lib/protocol/layout.ts";
import { RecordWords, TaskFlags, TaskState } from "../../../../lib/record/fields.ts";
import { Fn, FN_NAMES } from "../../../../spec/trace/facade_codes.ts";
import type { Access, Execution, Model, NamedScenario, RunEnd, RunSetup, Violation } from "../../kernel/harness.ts";
import { gateStateName, stepTable } from "../../kernel/run.ts";
import {
  GBUFFER_BYTES,
  GCAPACITY,
  GDEQUE_CAPACITY,
  gdequeBytes,
  GGRAPH_BYTES,
  GGRAPH_WORDS,
  GMAX_INPUTS,
  GMAX_NODES,
  GMAX_WORKERS,
  GNodeWord,
  GRECORD_WORDS,
  GRECORDS_BYTES,
  GRole,
  GWork,
  GWORK_BYTES,
  GWORK_WORDS,
  indexOf,
  NODE_WORDS,
  Settled,
} from "./layout.ts";
import { GraphTable } from "./table.ts";

/** One node: its inputs (node numbers, by argument position) and whether its task throws. */
export interface GNode {
  inputs: number[];
  fails?: boolean;
}

/** A graph under controlled interleavings. */
export interface GraphScenario {
  /** Node n is `nodes[n - 1]`; an input's number is below its dependant's. */
  nodes: GNode[];
  /** Worker threads (1–3). */
  workers: number;
  /** For each root, in node order, the worker whose deque it is pushed onto (the dead root is pushed nowhere). */
  roots: number[];
  /** A root whose worker died running it (left RUNNING): the owner walks it (`GraphWalker.died`). */
  dies?: number;
  /** The owner cancels the graph (`cancelGraph`), after its death walk if any. */
  cancel?: boolean;
}

/** What a run leaves, per node and per record. */
export interface GraphEnd {
  /** Per node n (index n - 1): its words of the test's part. */
  starts: number[];
  args: number[];
  settles: number[];
  kinds: number[];
  causes: number[];
  /** Per record: times freed, and its final state. */
  freed: number[];
  finalStates: number[];
  /** Per node: its record's index. */
  records: number[];
  settledTotal: number;
}

const LTHREADS = GMAX_WORKERS + 1;

function hasOwner(s: GraphScenario): boolean {
  return s.dies !== undefined || s.cancel === true;
}

/** The records a scenario needs: one per node and one per edge. */
export function recordsOf(s: GraphScenario): number {
  return s.nodes.length + s.nodes.reduce((sum, n) => sum + n.inputs.length, 0);
}

/** `t0`…: workers; the owner after them. */
export function graphThreadName(s: GraphScenario, t: number): string {
  return t < s.workers ? `worker${t}` : "owner";
}

function prepare(run: RunSetup, s: GraphScenario): void {
  const { buffer } = run;
  if (s.nodes.length > GMAX_NODES || recordsOf(s) > GCAPACITY || s.workers > GMAX_WORKERS) {
    throw new RangeError(`the scenario is too large for the graph model: ${describeGraphScenario(s)}`);
  }
  new Int32Array(buffer, gdequeBytes(0), (GGRAPH_BYTES - gdequeBytes(0)) >> 2).fill(0);
  new Int32Array(buffer, GGRAPH_BYTES, GGRAPH_WORDS).fill(0);
  new Int32Array(buffer, GRECORDS_BYTES, GCAPACITY * GRECORD_WORDS).fill(0);
  const work = new Int32Array(buffer, GWORK_BYTES, GWORK_WORDS);
  work.fill(0);
  const region = (w: number) => ({ buffer, byteOffset: gdequeBytes(w), capacity: GDEQUE_CAPACITY });
  const deques: Deque[] = [];
  for (let w = 0; w < s.workers; w++) {
    initDeque(region(w));
    deques.push(new Deque(region(w)));
  }
  Atomics.store(work, GWork.NODES, s.nodes.length);
  Atomics.store(work, GWork.WORKERS, s.workers);
  const encoder = new Encoder();
  const placed = s.nodes.map((node, i) => {
    const at = GWork.NODE + (i + 1) * NODE_WORDS;
    if (node.inputs.length > GMAX_INPUTS) throw new RangeError(`node ${i + 1} has too many inputs`);
    Atomics.store(work, at + GNodeWord.FAILS, node.fails ? 1 : 0);
    Atomics.store(work, at + GNodeWord.INPUTS, node.inputs.length);
    node.inputs.forEach((input, p) => Atomics.store(work, at + GNodeWord.INPUT + p, input));
    // Its constant arguments: none, the inputs' positions empty (graph.ts encodes them so).
    encoder.encode(new Array(node.inputs.length).fill(undefined));
    const bytes = new Uint8Array(encoder.length);
    encoder.copyTo(bytes, 0);
    return {
      number: i + 1,
      task: "node",
      taskId: 0,
      bytes,
      inputs: node.inputs.map((n, position) => ({ node: n, position })),
      level: 1 as const,
      flags: TaskFlags.RETURN,
      entry: undefined,
      handle: -1,
    };
  });
  // The shipped placement, over the model's table; its roots' pushes land on the scenario's deques.
  let root = 0;
  const host = {
    table: new GraphTable(buffer),
    graph: new Int32Array(buffer, GGRAPH_BYTES, GGRAPH_WORDS),
    levels: {
      pushPatiently(handle: number): void {
        const node = placed.find((p) => p.handle === handle)!.number;
        const worker = s.roots[root++];
        if (node === s.dies) return;
        if (worker === undefined || !deques[worker].push(handle)) throw new Error(`root ${node} has no deque`);
      },
    },
    sleep: { newWork(): void {} },
    ledger: { placed: [] },
    origin: 0,
    arm(): void {},
  };
  const refused = placeGraph(host as never, placed);
  if (refused !== undefined) throw refused;
  for (const p of placed) Atomics.store(work, GWork.NODE + p.number * NODE_WORDS + GNodeWord.HANDLE, p.handle);
  if (s.dies !== undefined) {
    // Its worker claimed it and died: RUNNING, the worker word a dead worker's; started before the run.
    const index = indexOf(placed[s.dies - 1].handle);
    const words = host.table.words;
    Atomics.store(words, index * GRECORD_WORDS + RecordWords.state, TaskState.RUNNING);
    Atomics.store(words, index * GRECORD_WORDS + RecordWords.worker, 9);
  }
  for (let w = 0; w < s.workers; w++) run.assign(w, GRole.WORKER, w);
  if (hasOwner(s)) run.assign(s.workers, GRole.OWNER, s.dies ?? 0, s.cancel ? 1 : 0);
}

function observe(run: RunEnd, s: GraphScenario): GraphEnd {
  const work = new Int32Array(run.buffer, GWORK_BYTES, GWORK_WORDS);
  const records = new Int32Array(run.buffer, GRECORDS_BYTES, GCAPACITY * GRECORD_WORDS);
  const node = (n: number, w: number) => Atomics.load(work, GWork.NODE + n * NODE_WORDS + w);
  const numbers = s.nodes.map((_, i) => i + 1);
  const used = recordsOf(s);
  return {
    starts: numbers.map((n) => node(n, GNodeWord.STARTS)),
    args: numbers.map((n) => node(n, GNodeWord.ARGS)),
    settles: numbers.map((n) => node(n, GNodeWord.SETTLES)),
    kinds: numbers.map((n) => node(n, GNodeWord.KIND)),
    causes: numbers.map((n) => node(n, GNodeWord.CAUSE)),
    freed: Array.from({ length: used }, (_, i) => Atomics.load(work, GWork.FREED + i)),
    finalStates: Array.from({ length: used }, (_, i) => Atomics.load(records, i * GRECORD_WORDS + RecordWords.state)),
    records: numbers.map((n) => indexOf(node(n, GNodeWord.HANDLE))),
    settledTotal: Atomics.load(work, GWork.SETTLED_TOTAL),
  };
}

// ---------------------------------------------------------------------------------------------------------
// Oracles.

/** The word address (in the harness's buffer) of record `index`'s state word. */
function stateAddr(index: number): number {
  return (GRECORDS_BYTES >> 2) + index * GRECORD_WORDS + RecordWords.state;
}
/** The word address of record `index`'s graph word `w`. */
function graphAddr(index: number, w: number): number {
  return (GGRAPH_BYTES >> 2) + index * GRAPH_WORDS + w;
}

/** Whether an access wrote its word (a store, a matching compare-exchange, a read-modify-write). */
function wrote(a: Access): boolean {
  if (a.fn === Fn.load || a.fn === Fn.wait || a.fn === Fn.notify || a.fn < 0) return false;
  if (a.fn === Fn.compareExchange) return a.result === a.arg1;
  return true;
}

/** The moves of a node's state word that spec/Graph.tla allows (and the publish's DONE store). */
const LEGAL: Readonly<Record<number, readonly number[]>> = {
  [TaskState.WAITING]: [TaskState.QUEUED, TaskState.REJECTED, TaskState.CANCELLED],
  [TaskState.QUEUED]: [TaskState.RUNNING, TaskState.CANCELLED],
  [TaskState.RUNNING]: [TaskState.DONE, TaskState.REJECTED],
  [TaskState.REJECTED]: [TaskState.DONE],
  [TaskState.CANCELLED]: [TaskState.DONE],
  [TaskState.DONE]: [TaskState.DONE],
};

const STATE_NAMES: Record<number, string> = Object.fromEntries(
  Object.entries(TaskState).map(([k, v]) => [v, k]),
);

/** Every oracle, in the order a failure is attributed (spec/Graph.tla's properties). */
export function checkGraphExecution(s: GraphScenario, exec: Execution<GraphEnd>): Violation[] {
  const v: Violation[] = [];
  const add = (oracle: string, detail: string) => v.push({ oracle, detail });
  if (exec.failures.length > 0) add("no-exception", exec.failures.join("; "));
  if (exec.aborted) add("no-exception", `the step bound was reached (${exec.steps} steps)`);
  if (exec.stalled) add("no-exception", `the run stalled: ${s.nodes.length - exec.settledTotal} node(s) never settled`);
  const n = s.nodes.length;
  // Each node's ancestors (transitively).
  const ancestors: Set<number>[] = [];
  for (let i = 0; i < n; i++) {
    const set = new Set<number>();
    for (const input of s.nodes[i].inputs) {
      set.add(input);
      for (const a of ancestors[input - 1]) set.add(a);
    }
    ancestors.push(set);
  }
  // A node fails by itself: its task throws, its worker died running it, or (a cancelled graph) it was
  // running when the cancellation came and saw its signal (the runner fails it with its AbortError).
  const ownFailure = (m: number) =>
    s.nodes[m - 1].fails === true || s.dies === m || (s.cancel === true && exec.kinds[m - 1] === Settled.OWN_ERROR);
  // The owner's cancellation: the nodes its compare-exchange moved to CANCELLED.
  const owner = hasOwner(s) ? s.workers : -1;
  const cancelledBy = new Set<number>();
  for (let i = 0; i < n; i++) {
    const addr = stateAddr(exec.records[i]);
    for (const a of exec.accesses) {
      if (a.thread === owner && a.addr === addr && a.arg2 === TaskState.CANCELLED && wrote(a)) cancelledBy.add(i + 1);
    }
  }
  for (let i = 0; i < n; i++) {
    const m = i + 1;
    const node = s.nodes[i];
    const starts = exec.starts[i];
    const kind = exec.kinds[i];
    // StartsOnce: at most one start (the dead node's was before the run).
    if (starts > (s.dies === m ? 0 : 1)) add("starts-once", `node ${m} started ${starts} times`);
    // StartsAfterInputs: every input's decrement before its claim; every argument its input's result.
    if (starts > 0) {
      if (exec.args[i] !== 1) add("inputs-before-start", `node ${m} started with an argument not its input's result`);
      const claim = exec.accesses.find((a) =>
        a.addr === stateAddr(exec.records[i]) && a.fn === Fn.compareExchange && a.arg1 === TaskState.QUEUED &&
        a.arg2 === TaskState.RUNNING && a.result === TaskState.QUEUED
      );
      const pending = graphAddr(exec.records[i], GraphWords.pending);
      const before = exec.accesses.filter((a) =>
        a.addr === pending && a.fn === Fn.sub && claim !== undefined &&
        a.step < claim.step
      ).length;
      if (claim !== undefined && before !== node.inputs.length) {
        add(
          "inputs-before-start",
          `node ${m} was claimed at step ${claim.step} after ${before} of its ${node.inputs.length} inputs' decrements`,
        );
      }
    }
    // SettlesOnce: every node's record published once.
    if (exec.settles[i] !== 1) add("settles-once", `node ${m} settled ${exec.settles[i]} times`);
    if (kind === Settled.WRONG_VALUE) {
      add("inputs-before-start", `node ${m} returned a value computed from wrong arguments`);
    }
    // CancelledNeverRuns: a node the cancellation moved never starts, and settles cancelled.
    if (cancelledBy.has(m) && (starts > 0 || kind !== Settled.CANCELLED)) {
      add(
        "cancelled-never-run",
        `node ${m} was cancelled by the owner but ${starts > 0 ? "started" : `settled as ${kind}`}`,
      );
    }
    if (kind === Settled.CANCELLED && !s.cancel) {
      add("cancelled-never-run", `node ${m} settled cancelled with no cancellation`);
    }
    // FailureStopsDownstream: nothing downstream of a failure runs; it is rejected naming a failed input.
    const failedAbove = [...ancestors[i]].filter(ownFailure);
    if (failedAbove.length > 0) {
      if (starts > 0) {
        add("failure-stops-downstream", `node ${m} ran though its input(s) ${failedAbove.join(", ")} failed`);
      } else if (kind === Settled.INPUT && !failedAbove.includes(exec.causes[i])) {
        add("failure-stops-downstream", `node ${m} was rejected naming ${exec.causes[i]}, not a failed input`);
      } else if (kind !== Settled.INPUT && kind !== Settled.CANCELLED) {
        add("failure-stops-downstream", `node ${m} settled as ${kind}, not rejected by its failed input`);
      }
    } else if (kind === Settled.INPUT) {
      add("failure-stops-downstream", `node ${m} was rejected naming ${exec.causes[i]} with no failed input`);
    } else if (!s.cancel && exec.settles[i] === 1) {
      // AllRun: with no failure above and no cancellation, it ran, and settled as its task did.
      const want = ownFailure(m) ? Settled.OWN_ERROR : Settled.VALUE;
      if (kind !== want) add("failure-stops-downstream", `node ${m} settled as ${kind}, not ${want}`);
    }
    if (kind === Settled.CANCELLED && exec.causes[i] !== CANCEL && exec.causes[i] !== 0) {
      add("cancelled-never-run", `node ${m} settled cancelled naming ${exec.causes[i]}`);
    }
  }
  // The state machine: every write of a node's state word is a move spec/Graph.tla allows.
  for (let i = 0; i < n; i++) {
    const addr = stateAddr(exec.records[i]);
    let state: number = s.dies === i + 1
      ? TaskState.RUNNING
      : s.nodes[i].inputs.length > 0
      ? TaskState.WAITING
      : TaskState.QUEUED;
    for (const a of exec.accesses) {
      if (a.addr !== addr || !wrote(a)) continue;
      const next = a.fn === Fn.compareExchange ? a.arg2 : a.arg1;
      if (!(LEGAL[state] ?? []).includes(next)) {
        add(
          "state-moves",
          `node ${i + 1}: ${STATE_NAMES[state]} → ${STATE_NAMES[next]} at step ${a.step} by ${
            graphThreadName(s, a.thread)
          }`,
        );
        break;
      }
      state = next;
    }
  }
  // AtRest: every slot freed once (FREE); every node's record published, not freed (DONE).
  const nodeRecords = new Set(exec.records);
  for (let r = 0; r < exec.freed.length; r++) {
    if (nodeRecords.has(r)) {
      if (exec.freed[r] !== 0 || exec.finalStates[r] !== TaskState.DONE) {
        add(
          "at-rest",
          `node record ${r}: freed ${exec.freed[r]} times, ${STATE_NAMES[exec.finalStates[r]]} at the end`,
        );
      }
    } else if (exec.freed[r] !== 1 || exec.finalStates[r] !== TaskState.FREE) {
      add("at-rest", `slot record ${r}: freed ${exec.freed[r]} times, ${STATE_NAMES[exec.finalStates[r]]} at the end`);
    }
  }
  return v;
}

// ---------------------------------------------------------------------------------------------------------
// The model.

/** The graph model, for the kernel's {@link Harness}. */
export const GRAPH: Model<GraphScenario, GraphEnd> = {
  name: "graph",
  thread: new URL("./thread.ts", import.meta.url),
  threads: LTHREADS,
  bufferBytes: GBUFFER_BYTES,
  maxSteps: 2500,
  stalls: true,
  continuation: "round-robin",
  schedules: { maxLength: 200, maxSegment: 30, maxSegments: 16, timeouts: false },
  threadCount: (s) => s.workers + (hasOwner(s) ? 1 : 0),
  threadName: graphThreadName,
  prepare,
  observe,
  check: checkGraphExecution,
};

// ---------------------------------------------------------------------------------------------------------
// Scenarios.

/** `1 2<1 3<1 4<2,3! | 2 workers, roots w0 | dies 1 | cancel` (`!`: its task throws). */
export function describeGraphScenario(s: GraphScenario): string {
  const nodes = s.nodes.map((node, i) =>
    `${i + 1}${node.inputs.length > 0 ? `<${node.inputs.join(",")}` : ""}${node.fails ? "!" : ""}`
  );
  return `${nodes.join(" ")} | ${s.workers} worker${s.workers === 1 ? "" : "s"}, roots ${
    s.roots.map((w) => `w${w}`).join(" ")
  }${s.dies !== undefined ? ` | dies ${s.dies}` : ""}${s.cancel ? " | cancel" : ""}`;
}

/** The systematic mode's scenarios (small: each run is 100–250 steps). */
export const GRAPH_SCENARIOS: readonly NamedScenario<GraphScenario>[] = [
  {
    // Two roots on two workers, their join: both walkers decrement it; the one that reads 1 starts it.
    name: "join_of_two_two_workers",
    scenario: { nodes: [{ inputs: [] }, { inputs: [] }, { inputs: [1, 2] }], workers: 2, roots: [0, 1] },
    preemptions: 1,
  },
  {
    // A diamond: 1 fans out to 2 and 3 (a thief takes one), which join at 4.
    name: "diamond_two_workers",
    scenario: {
      nodes: [{ inputs: [] }, { inputs: [1] }, { inputs: [1] }, { inputs: [2, 3] }],
      workers: 2,
      roots: [0],
    },
    preemptions: 1,
  },
  {
    // A join of three roots on three workers.
    name: "join_of_three_three_workers",
    // (0 preemptions: with three threads a bound of 1 is 1,932 schedules; FILCH_LINCHECK_GRAPH_PREEMPTIONS=1
    // runs them.)
    scenario: {
      nodes: [{ inputs: [] }, { inputs: [] }, { inputs: [] }, { inputs: [1, 2, 3] }],
      workers: 3,
      roots: [0, 1, 2],
    },
    preemptions: 0,
  },
  {
    // A rejection propagating (1 throws: 3 and then 4 are rejected) while 2 resolves into 3.
    name: "rejection_while_other_input_resolves",
    scenario: {
      nodes: [{ inputs: [], fails: true }, { inputs: [] }, { inputs: [1, 2] }, { inputs: [3] }],
      workers: 2,
      roots: [0, 1],
    },
    preemptions: 1,
  },
  {
    // The owner's cancellation visit races the zero-reacher (CancelCasNode vs ZeroCasState) and the claim.
    name: "cancel_races_zero_reacher",
    scenario: {
      nodes: [{ inputs: [] }, { inputs: [] }, { inputs: [1, 2] }],
      workers: 2,
      roots: [0, 1],
      cancel: true,
    },
    preemptions: 1,
  },
  {
    // A chain under cancellation: a node between its start and its walk, its dependant cancelled.
    name: "chain_of_three_cancelled",
    scenario: { nodes: [{ inputs: [] }, { inputs: [1] }, { inputs: [2] }], workers: 1, roots: [0], cancel: true },
    preemptions: 2,
  },
  {
    // The owner's death walk of node 1 (its worker died running it) races worker0's walk of node 2 into
    // their join 3.
    name: "death_walk_races_live_walker",
    scenario: {
      nodes: [{ inputs: [] }, { inputs: [] }, { inputs: [1, 2] }, { inputs: [3] }],
      workers: 1,
      roots: [0, 0],
      dies: 1,
    },
    preemptions: 1,
  },
];

/** Random scenarios: graphs of 2–5 nodes, up to 3 inputs each, failures, deaths and a cancellation. */
export function graphScenarioArbitrary(): fc.Arbitrary<GraphScenario> {
  return fc.record({
    size: fc.integer({ min: 2, max: 5 }),
    picks: fc.array(fc.array(fc.nat(), { maxLength: GMAX_INPUTS }), { minLength: 5, maxLength: 5 }),
    fails: fc.array(fc.boolean(), { minLength: 5, maxLength: 5 }),
    failure: fc.nat(9),
    workers: fc.integer({ min: 1, max: GMAX_WORKERS }),
    rootWorkers: fc.array(fc.nat(), { minLength: 5, maxLength: 5 }),
    dies: fc.nat(9),
    cancel: fc.nat(3),
  }).map(({ size, picks, fails, failure, workers, rootWorkers, dies, cancel }) => {
    const nodes: GNode[] = [];
    let records = 0;
    for (let i = 0; i < size; i++) {
      // Inputs from the nodes before it, distinct, within the records' room.
      const inputs = i === 0 ? [] : [...new Set(picks[i].map((p) => 1 + (p % i)))];
      while (inputs.length > 0 && records + 1 + inputs.length > GCAPACITY) inputs.pop();
      records += 1 + inputs.length;
      nodes.push({ inputs, ...(failure < 3 && fails[i] ? { fails: true } : {}) });
    }
    const roots = nodes.map((_, i) => i + 1).filter((m) => nodes[m - 1].inputs.length === 0);
    const withOwner = dies < 2 || cancel === 0;
    const s: GraphScenario = {
      nodes,
      workers: withOwner ? Math.min(workers, GMAX_WORKERS) : workers,
      roots: roots.map((_, k) => rootWorkers[k] % Math.min(workers, GMAX_WORKERS)),
    };
    if (dies < 2) s.dies = roots[dies % roots.length];
    if (cancel === 0) s.cancel = true;
    return s;
  });
}

// ---------------------------------------------------------------------------------------------------------
// Reports.

function wordName(addr: number): string {
  const rec = addr - (GRECORDS_BYTES >> 2);
  if (rec >= 0 && rec < GCAPACITY * GRECORD_WORDS) {
    const field = Object.entries(RecordWords).find(([, w]) => w === rec % GRECORD_WORDS)?.[0] ??
      `w${rec % GRECORD_WORDS}`;
    return `R${Math.floor(rec / GRECORD_WORDS)}.${field}`;
  }
  const g = addr - (GGRAPH_BYTES >> 2);
  if (g >= 0 && g < GGRAPH_WORDS) {
    const field = Object.entries(GraphWords).find(([, w]) => w === g % GRAPH_WORDS)?.[0] ?? `g${g % GRAPH_WORDS}`;
    return `G${Math.floor(g / GRAPH_WORDS)}.${field}`;
  }
  for (let w = 0; w < GMAX_WORKERS; w++) {
    const d = addr - (gdequeBytes(w) >> 2);
    if (d >= 0 && d < 128) return `D${w}[${d}]`;
  }
  return `@${addr}`;
}

/** One access, as a table cell. */
export function describeGraphAccess(a: Access): string {
  const name = wordName(a.addr);
  const fn = FN_NAMES[a.fn] ?? String(a.fn);
  if (a.fn === Fn.compareExchange) return `${fn} ${name} ${a.arg1}→${a.arg2} : ${a.result}`;
  if (a.fn === Fn.load) return `load ${name} → ${a.result}`;
  if (a.fn === Fn.store) return `store ${name} ← ${a.arg1}`;
  return `${fn} ${name} ${a.arg1} → ${a.result}`;
}

/** A run as a table (a column per thread), with the end state. */
export function formatGraphTable(s: GraphScenario, exec: Execution<GraphEnd>): string {
  const cols = Array.from({ length: GRAPH.threadCount(s) }, (_, t) => graphThreadName(s, t));
  const lines = stepTable(cols, exec.accesses, describeGraphAccess);
  lines.push(`end: ${exec.states.map((st, t) => `${cols[t]} ${gateStateName(st)}`).join(", ")}`);
  lines.push(
    `nodes: ${
      s.nodes.map((_, i) =>
        `${i + 1}: record ${exec.records[i]}, starts ${exec.starts[i]}, settled ${exec.settles[i]}× as ${
          exec.kinds[i]
        }` +
        (exec.causes[i] !== 0 ? ` (cause ${exec.causes[i]})` : "")
      ).join("; ")
    }`,
  );
  return lines.join("\n");
}
