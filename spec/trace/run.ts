/**
 * One traced run, for trace validation (`spec/trace.ts`): the supervisor. It arms a trace
 * (`spec/trace/binding.ts`), starts the run's threads, waits for them or for the deadline, reads the log and writes
 * it as JSON. It runs no protocol code itself, so its deadline fires even when the run spins for ever (a
 * mutant may): the log up to then is written, and the failure said.
 *
 * Scenarios:
 * - `pool`: a real pool of the `lib/` under test (`spec/trace/pool.ts` is its main thread, a thread of its
 *   own): a fork-join and a burst of tiny tasks (deque push, pop, steal and steal-half; the injector, the
 *   free list and the completion queue). In a pool each queue holds at most as many values as it has
 *   slots, so a full queue never happens there.
 * - `sleep`: a real pool running tiny tasks only (no forks: SleepWakeTrace.cfg has none, and SleepWake.tla
 *   models no joins), in waves of four with pauses in which the workers doze and sleep, some waves
 *   submitted just as a worker is on its way to sleep; every deque and queue operation is one recorded step
 *   (`spec/trace/ops.ts`), as SleepWake models them, and waits and notifies are recorded.
 * - `producers`: a real pool fed by two producers in other threads (`spec/trace/producer.ts`) beside its
 *   own: the injector, the free list, and each producer's completion queue (pushed by workers, popped by
 *   its thread), validated as the pool's queues are.
 * - `stress`: the deque and the queue alone, on real threads (`spec/trace/stress.ts`): an owner pushes ids
 *   through its deque while thieves steal and steal half from every deque into their own; every thread
 *   pushes values into a 4-slot queue and pops from it (full and empty queues, racing claims).
 *
 * - `graph`: a real pool of 2 workers running small task graphs (`spec/trace/graph.ts`: a diamond, a join,
 *   a chain, a diamond with a failing node, a cancelled diamond), plain writes recorded too.
 * - `elastic`: a real elastic pool (`workers: { min: 1, max: 2 }`, a 15 ms idle timeout) running 3 bursts
 *   separated by idle gaps (`spec/trace/elastic.ts`), so that a worker is started and retires several
 *   times; its slot words, size word and counters word are validated (ElasticTrace.tla).
 *
 * Usage: `spec/trace/run.ts --scenario pool|producers|stress|sleep|graph|elastic --out FILE [--root DIR_URL] [--deadline MS]` (`--root`: a
 * directory holding `mod.ts` and `lib/`, default the repository). Exits 0 with the trace written; 1 if the
 * run failed (the trace is written anyway, with the failure in it).
 *
 * @module
 */
import { writeFileSync } from "node:fs";
import process from "node:process";
import { setEnvironmentData, Worker } from "node:worker_threads";
import type { PoolLayout, PoolShape } from "../../lib/protocol/layout.ts";
import { armTrace, createTrace, OPS_KEY, PLAIN_KEY, readTrace, ROOT_KEY, TRACE_KEY } from "./binding.ts";

function option(name: string, fallback: string): string {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 && at + 1 < process.argv.length ? process.argv[at + 1] : fallback;
}

/** Where the protocols' words are, in int32 words of the traced buffer. */
export interface Regions {
  deques: { base: number; stride: number; count: number; capacity: number } | null;
  queues: { name: string; base: number; capacity: number }[];
  /** The sleep words and the control words (scenario `sleep`). */
  sleep?: { base: number; control: number };
  /**
   * The task records and their graph words (scenario `graph`): record i's words from `records + i *
   * recordWords`, its graph words from `graph + i * graphWords`; a handle's record index is
   * `handle & (capacity - 1)`.
   */
  graph?: { records: number; recordWords: number; graph: number; graphWords: number; capacity: number };
  /**
   * The elastic pool's words (scenario `elastic`): each slot's word (`SleepWords.state(i)`), the size word
   * (`ControlWords.poolSize`), the counters word, and the pool's minimum and maximum.
   */
  elastic?: { slots: number[]; size: number; counters: number; min: number; max: number };
}

/** What a scenario's set-up tells the supervisor. */
export interface ScenarioPlan {
  bytes: number;
  regions: Regions;
}

const scenario = option("scenario", "pool");
const out = option("out", "");
if (out === "") throw new Error("Cannot run spec/trace/run.ts as '--out FILE' is missing: give the trace's path");
const root = option("root", new URL("../../", import.meta.url).href);
const deadlineMs = Number(option("deadline", "10000"));
const layoutModule = await import(new URL("lib/protocol/layout.ts", root).href) as {
  GRAPH_WORDS: number;
  SleepWords: { counters: number; state(i: number): number };
  ControlWords: { poolSize: number };
  poolLayout(s: PoolShape): PoolLayout;
  dequeRegionBytes(capacity: number): number;
  injectorRegionBytes(capacity: number): number;
};

let plan: ScenarioPlan;
let threads: { script: string; data: unknown }[];
let buffer: SharedArrayBuffer | null = null;
/** A real pool's plan: small capacities, so that full deques are part of the run. */
function poolPlan(withSleep: boolean, producers = 0): { plan: ScenarioPlan; shape: PoolShape } {
  const shape: PoolShape = {
    workers: 3,
    dequeCapacity: 8,
    taskCapacity: 16,
    inlineBytes: 192,
    blockBytes: 1024,
    blocks: 16,
    // The pool is created with this shape: its buffer is the one of this layout only if the producer slots
    // are the same (the recorder knows the pool's buffer by its length): none but in scenario `producers`.
    producers,
  };
  const layout = layoutModule.poolLayout(shape);
  const plan: ScenarioPlan = {
    bytes: layout.totalBytes,
    regions: {
      deques: {
        base: layout.deques / 4,
        stride: layout.dequeBytes / 4,
        count: shape.workers,
        capacity: shape.dequeCapacity,
      },
      queues: [
        { name: "injector", base: layout.injector / 4, capacity: shape.taskCapacity },
        { name: "freeRecords", base: layout.freeRecords / 4, capacity: shape.taskCapacity },
        { name: "completions", base: layout.completions / 4, capacity: shape.taskCapacity },
        { name: "freeBlocks", base: layout.freeBlocks / 4, capacity: shape.blocks },
        // Each producer slot's completion queue (protocol/producers.ts): workers push, its thread pops.
        ...Array.from({ length: producers }, (_, s) => ({
          name: `producer${s + 1}`,
          base: (layout.producerQueues + s * layoutModule.injectorRegionBytes(shape.taskCapacity)) / 4,
          capacity: shape.taskCapacity,
        })),
      ],
      ...(withSleep ? { sleep: { base: layout.sleep / 4, control: layout.control / 4 } } : {}),
    },
  };
  return { plan, shape };
}

if (scenario === "pool") {
  const pool = poolPlan(false);
  plan = pool.plan;
  threads = [{
    script: "./pool.ts",
    data: { root, shape: pool.shape, fib: 13, tiny: 150, wave: 0, pauseMs: 0 },
  }];
} else if (scenario === "producers") {
  // Two producers in other threads beside the pool's own (issue 29): their injector pushes, record
  // allocations and frees, and each one's completion queue, under the same validations as the pool's.
  const pool = poolPlan(false, 2);
  plan = pool.plan;
  threads = [{
    script: "./pool.ts",
    data: { root, shape: pool.shape, fib: 0, tiny: 60, wave: 0, pauseMs: 0, producers: 2 },
  }];
} else if (scenario === "sleep") {
  // Tiny tasks only (no forks: SleepWakeTrace.cfg has Forks = 0), in waves of 4, with pauses in which the
  // workers doze and sleep; every deque and queue operation is one recorded step.
  const pool = poolPlan(true);
  plan = pool.plan;
  setEnvironmentData(OPS_KEY, "1");
  threads = [{ script: "./pool.ts", data: { root, shape: pool.shape, fib: 0, tiny: 80, wave: 4, pauseMs: 30 } }];
} else if (scenario === "graph") {
  // Task graphs (spec/trace/graph.ts) on 2 workers, plain writes recorded too (the placement names the
  // records; a slot's outcome write is WalkPublishArg).
  const pool = poolPlan(false);
  const shape: PoolShape = { ...pool.shape, workers: 2, taskCapacity: 32 };
  const layout = layoutModule.poolLayout(shape);
  plan = {
    bytes: layout.totalBytes,
    regions: {
      deques: null,
      queues: [],
      graph: {
        records: layout.records / 4,
        recordWords: layout.recordBytes / 4,
        graph: layout.graph / 4,
        graphWords: layoutModule.GRAPH_WORDS,
        capacity: shape.taskCapacity,
      },
    },
  };
  setEnvironmentData(PLAIN_KEY, "1");
  threads = [{ script: "./graph.ts", data: { root, shape, rounds: 1 } }];
} else if (scenario === "elastic") {
  // An elastic pool of at most 2 (its buffer laid out for 2), bursts and idle gaps: workers grow and
  // retire several times (spec/trace/elastic.ts).
  const pool = poolPlan(false);
  const shape: PoolShape = { ...pool.shape, workers: 2, taskCapacity: 32 };
  const layout = layoutModule.poolLayout(shape);
  const sleepBase = layout.sleep / 4;
  plan = {
    bytes: layout.totalBytes,
    regions: {
      deques: null,
      queues: [],
      elastic: {
        slots: [0, 1].map((i) => sleepBase + layoutModule.SleepWords.state(i)),
        size: layout.control / 4 + layoutModule.ControlWords.poolSize,
        counters: sleepBase + layoutModule.SleepWords.counters,
        min: 1,
        max: 2,
      },
    },
  };
  threads = [{
    script: "./elastic.ts",
    data: { root, shape, min: 1, max: 2, idleTimeout: 15, bursts: 3, gapMs: 200 },
  }];
} else if (scenario === "stress") {
  const stressThreads = 3;
  const dequeCapacity = 8;
  const queueCapacity = 4;
  const dequeBytes = layoutModule.dequeRegionBytes(dequeCapacity);
  const queueAt = stressThreads * dequeBytes;
  const controlAt = queueAt + layoutModule.injectorRegionBytes(queueCapacity);
  const ids = 500;
  const valuesEach = 120;
  const countsAt = controlAt + 64;
  const bytes = countsAt + 4 * (ids + 1 + stressThreads * valuesEach + 1);
  buffer = new SharedArrayBuffer(bytes);
  // Indices start just below zero, so every run crosses the word's wrap from -1 to 0 (the masks and the
  // wrapping differences on negative words).
  const { initDeque } = await import(new URL("lib/protocol/deque.ts", root).href);
  const { initInjector } = await import(new URL("lib/protocol/injector.ts", root).href);
  for (let d = 0; d < stressThreads; d++) {
    initDeque({ buffer, byteOffset: d * dequeBytes, capacity: dequeCapacity }, -300);
  }
  initInjector({ buffer, byteOffset: queueAt, capacity: queueCapacity });
  plan = {
    bytes,
    regions: {
      deques: { base: 0, stride: dequeBytes / 4, count: stressThreads, capacity: dequeCapacity },
      queues: [{ name: "queue", base: queueAt / 4, capacity: queueCapacity }],
    },
  };
  threads = Array.from({ length: stressThreads }, (_, role) => ({
    script: "./stress.ts",
    data: {
      root,
      buffer,
      role,
      threads: stressThreads,
      dequeBytes,
      dequeCapacity,
      queueAt,
      queueCapacity,
      controlAt,
      countsAt,
      ids,
      valuesEach,
      seed: 0x9e3779b9 ^ (role * 7919),
    },
  }));
} else {
  throw new RangeError(
    `Cannot run spec/trace/run.ts as '--scenario ${scenario}' is not one: use pool, producers, stress, sleep, graph or elastic`,
  );
}

const trace = createTrace(600_000, plan.bytes);
armTrace(trace, plan.bytes);
setEnvironmentData(TRACE_KEY, trace);
setEnvironmentData(ROOT_KEY, root);

let failure = "";
let setupThread = -1;
const finished = threads.map(({ script, data }) =>
  new Promise<void>((resolve) => {
    const worker = new Worker(new URL(script, import.meta.url), { workerData: data });
    if (scenario !== "stress") setupThread = worker.threadId;
    worker.on("message", (m: { failure?: string }) => {
      if (m.failure) failure ||= m.failure;
      resolve();
    });
    worker.on("error", (e) => {
      failure ||= `a thread of the run failed: ${String(e)}`;
      resolve();
    });
    worker.on("exit", () => resolve());
  })
);
let timer: ReturnType<typeof setTimeout> | undefined;
await Promise.race([
  Promise.all(finished),
  new Promise<void>((resolve) => {
    timer = setTimeout(() => {
      failure ||= `the run did not finish within ${deadlineMs} ms`;
      resolve();
    }, deadlineMs);
  }),
]);
clearTimeout(timer);
const { snapshot, events, overflow } = readTrace(trace);
if (scenario === "stress" && failure === "" && buffer !== null) {
  // Every id and every value taken exactly once (the threads' counters, outside the traced regions).
  const { countsAt, ids, valuesEach, threads: n } = threads[0].data as {
    countsAt: number;
    ids: number;
    valuesEach: number;
    threads: number;
  };
  const idCounts = new Int32Array(buffer, countsAt, ids + 1);
  const valueCounts = new Int32Array(buffer, countsAt + 4 * (ids + 1), n * valuesEach + 1);
  const wrong = (counts: Int32Array, what: string) => {
    for (let k = 1; k < counts.length; k++) if (counts[k] !== 1) return `${what} ${k} was taken ${counts[k]} times`;
    return "";
  };
  failure = wrong(idCounts, "deque id") || wrong(valueCounts, "queue value");
}
writeFileSync(
  out,
  JSON.stringify({
    runtime: "Deno" in globalThis ? "deno" : "Bun" in globalThis ? "bun" : "node",
    scenario,
    setupThread,
    regions: plan.regions,
    overflow,
    failure,
    snapshot: [...snapshot],
    events: events.map((e) => [e.thread, e.kind, e.word, e.a, e.b, e.old, e.now]),
  }),
);
console.log(
  `trace: ${events.length} accesses${overflow ? " (log full: a prefix)" : ""}${failure ? `; FAILED: ${failure}` : ""}`,
);
// Threads that still run (a hung mutant) die with the process.
process.exit(failure === "" ? 0 : 1);
