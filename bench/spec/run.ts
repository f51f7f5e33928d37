/**
 * The specification's benchmark on the runtime that runs this file: its four workloads and its summary
 * rows, measured, each figure once per round, printed as JSON lines (one per workload, {@link Measured})
 * for bench/spec/main.ts, which runs this file on Deno, Bun and Node and prints the report.
 *
 * The workloads (sizes of the full run; `--quick` shrinks them, see {@link sizesFor}):
 * 1. 100,000 micro-tasks of about 1 µs each (a loop calibrated on the main thread) submitted at once on the
 *    default pool: the submission's time, the completion's, tasks/s, each worker's share of the tasks and
 *    the steal calls (`stats()` before and after), against piscina (the same workers' count) and a
 *    central-queue pool (bare threads fed by one postMessage each, round robin: peer_bare.ts).
 * 2. Fork-join quicksort of 10M int32 in a SharedArrayBuffer (work.ts `quicksortParallel`, whose ranges of
 *    2^20 elements and more partition in parallel) against the same quicksort sequential on the main
 *    thread and the runtime's own `Int32Array.prototype.sort`; the forks
 *    (subtasks), their depth, the steals (`stats()`), and each worker's share of the elements partitioned or
 *    sorted (its largest deviation from an even share). Every parallel result is checked against the sort's.
 * 3. 10,000 tasks, 80% ~1 µs, 15% ~100 µs, 5% ~10 ms (a seeded shuffle, the same every round) against
 *    round-robin distribution to the same number of bare threads: the time to finish all, each worker's
 *    active time (the tasks report their start and end on the clock all threads share) ÷ the time, and the
 *    longest gap between two tasks of one worker (or before its first).
 * 4. 1,000,000 tasks from 8 producer threads, 125,000 each, up to 1,000 in flight per thread, every result
 *    checked: bench/producers.ts's `benchProducers` (filch's producers, and the relay users write today onto
 *    the same pool; piscina behind that relay is left out: at a sixth of filch's rate it would add ten
 *    minutes to a full run; its 40 µs spin tasks too), one round per call, alternating with
 *    the same tasks submitted by the main thread alone (8,000 in flight). A clean shutdown: every pool and
 *    producer closed within its deadline (benchProducers warns otherwise; the warnings are counted).
 *
 * The summary rows, measured: fork overhead (bench/forkjoin_tasks.ts's fib with a join at every level
 * against plain fib, on a pool of one worker, so nothing is stolen: ns per join); steal latency (work.ts
 * `stealProbe`: a task forks, and spins on a shared flag the fork sets when it starts; from just before the
 * fork's push to seeing the flag, on the forking worker's clock, when another worker ran the fork: with
 * the thief searching, as it returns from another fork of the same task, and with the thief asleep, 5 ms after
 * its last work, which adds its wake-up; the median of `stealSamples` probes each way, each round); shared
 * memory per task in flight (`pool.memory.bytesPerTask`: a task record plus its queue slots); the CPU of
 * the whole process (`process.cpuUsage()`, every thread, on all three runtimes) while the open default pool
 * idles for 10 s after work, in ms per second.
 *
 * The restated goals (goals.ts, the "goals" workload): the submitting thread's CPU per task in the demo's
 * shape ÷ this machine's floor, the join's overhead on 2 workers ÷ on 1, 64 KiB arguments and results ÷ the
 * bare loop.
 *
 * Workload 1 also counts the injector's takes apart from the deque steals: tasks submitted from outside
 * reach the workers through the injector, so the steal calls there are only the idle workers' deque probes.
 *
 * Rounds: each workload runs `--rounds` rounds (default 15; `--quick`: 3), its contenders alternating
 * within each round, the order rotated each round; the ratios are taken per round.
 *
 * Run: `node bench/spec/run.ts [--quick] [--rounds=N] [--only=1,2,3,4,summary,goals]` (or `deno run -A`, `bun`).
 *
 * Threads: the main thread of its own process (main.ts starts one per runtime); every workload makes and
 * closes its own peers and threads, so that none of them runs, or idles, during another's rounds. The
 * default pool serves workloads 1–3 and the summary; 4 has pools of its own.
 *
 * @module
 */
import process from "node:process";
import { Pool } from "../../mod.ts";
import { startThread, type ThreadHandle } from "../../lib/runtime/thread.ts";
import { fillRandom } from "../../examples/sort/tasks.ts";
import { fibJoins } from "../../examples/fib/tasks.ts";
import { runtimeName } from "../_stats.ts";
import { withTimeout } from "../_deadline.ts";
import { benchProducers } from "../producers.ts";
import * as work from "./work.ts";
import { restatedGoals } from "./goals.ts";
import type * as forkjoin from "../forkjoin_tasks.ts";
import type * as producerTasks from "../producers_tasks.ts";
import type { BareTask } from "./peer_bare.ts";

/** One workload's figures on this runtime: every figure's value in each round (one value if measured once). */
export interface Measured {
  runtime: string;
  workers: number;
  workload: "1" | "2" | "3" | "4" | "summary" | "goals";
  /** The sizes it ran with. */
  sizes: Record<string, number>;
  figures: Record<string, number[]>;
  /** Contenders that did not run, with why. */
  skipped: string[];
}

/** The sizes of a run. */
export interface Sizes {
  rounds: number;
  microTasks: number;
  sortLength: number;
  sortCutoff: number;
  mixedTasks: number;
  /** Divides the heterogeneous tasks' spins (1: 100 µs and 10 ms). */
  mixedScale: number;
  stressTasks: number;
  stressSpinTasks: number;
  idleMs: number;
  stealSamples: number;
  fibN: number;
  /** The demo's tasks a burst in the restated goals (goals.ts). */
  demoTasks: number;
}

/**
 * The sizes of the full run, or of `--quick` (small sizes and 3 rounds: for development and the smoke test).
 *
 * @param quick Whether `--quick` was given.
 * @returns The sizes.
 *
 * @example Usage
 * ```ts ignore
 * import { sizesFor } from "./run.ts";
 * console.log(sizesFor(false).microTasks); // 100000
 * ```
 */
export function sizesFor(quick: boolean): Sizes {
  return quick
    ? {
      rounds: 3,
      microTasks: 4_000,
      sortLength: 200_000,
      sortCutoff: 4_096,
      mixedTasks: 400,
      mixedScale: 20,
      stressTasks: 8 * 500,
      stressSpinTasks: 8 * 20,
      idleMs: 1_000,
      stealSamples: 20,
      fibN: 18,
      // Not smaller: the held floor's CPU (about 1 µs a task) is read on a clock that moves by 4 ms ticks, and
      // at 2,000 tasks it read 0 in most rounds (a ratio of n/a under load).
      demoTasks: 10_000,
    }
    : {
      rounds: 15,
      microTasks: 100_000,
      sortLength: 10_000_000,
      sortCutoff: 16_384,
      mixedTasks: 10_000,
      mixedScale: 1,
      stressTasks: 1_000_000,
      stressSpinTasks: 6_000,
      idleMs: 10_000,
      stealSamples: 200,
      fibN: 25,
      demoTasks: 20_000,
    };
}

const WORK_URL = new URL("./work.ts", import.meta.url);
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Runs `a` and `b` (and more) each round, the order rotated each round; returns nothing (they record). No
 * collection is forced between steps: each pays for the garbage it makes, and the rotation spreads what
 * one leaves over the others (a forced full collection left Deno's heap cold for the next step: see
 * bench/graph/_rounds.ts).
 */
async function alternate(rounds: number, steps: (() => Promise<void>)[], label: string): Promise<void> {
  for (let r = 0; r < rounds; r++) {
    for (let s = 0; s < steps.length; s++) {
      const k = (s + r) % steps.length;
      await steps[k]();
    }
    console.error(`${label}: round ${r + 1} of ${rounds} done`);
  }
}

/** Appends `value` to the figure `name`. */
function note(figures: Record<string, number[]>, name: string, value: number): void {
  (figures[name] ??= []).push(value);
}

/**
 * Rounds of the micro loop that take about 1 µs here (on the main thread, after a warm-up): the workloads'
 * "~1 µs" task. Each estimate is the fastest of 5 batches: on a shared machine a batch that lost its core
 * for a while is slower, never faster, than the loop.
 */
function calibrateMicro(): { iters: number; micros: number } {
  const time = (iters: number) => {
    const calls = 4_000;
    let best = Infinity;
    for (let batch = 0; batch < 5; batch++) {
      const start = performance.now();
      let sum = 0;
      for (let i = 0; i < calls; i++) sum += work.micro(i, iters);
      if (sum === 0) throw new Error("unreachable");
      best = Math.min(best, (performance.now() - start) * 1000 / calls);
    }
    return best;
  };
  for (let i = 0; i < 3; i++) time(200);
  let iters = 200;
  for (let step = 0; step < 4; step++) iters = Math.max(1, Math.round(iters / time(iters)));
  return { iters, micros: time(iters) };
}

/** Bare threads (peer_bare.ts) fed round robin, one message per task: the central-queue and round-robin contender. */
class BareThreads {
  private readonly threads: ThreadHandle[] = [];
  private onReply: (message: { i: number; r: unknown }) => void = () => {};
  private readonly count: number;

  constructor(count: number) {
    this.count = count;
    for (let w = 0; w < count; w++) {
      const thread = startThread(new URL("./peer_bare.ts", import.meta.url), `bare-${w}`);
      thread.onMessage((m) => this.onReply(m as { i: number; r: unknown }));
      this.threads.push(thread);
    }
  }

  /** Posts `tasks` round robin (task `i` to thread `i mod count`), resolves with every result by index. */
  burst(tasks: BareTask[]): Promise<unknown[]> {
    return new Promise((resolve) => {
      const results = new Array<unknown>(tasks.length);
      let left = tasks.length;
      this.onReply = (m) => {
        results[m.i] = m.r;
        if (--left === 0) resolve(results);
      };
      for (let i = 0; i < tasks.length; i++) this.threads[i % this.count].post(tasks[i]);
    });
  }

  close(): void {
    for (const thread of this.threads) thread.terminate();
  }
}

/** The sum over workers of a `stats().workers` field. */
function total(pool: Pool<typeof work>, field: "stealAttempts" | "successfulSteals" | "stolen"): number {
  return pool.stats().workers.reduce((sum, w) => sum + w[field], 0);
}

// ---- workload 1 ----

async function microTasks(pool: Pool<typeof work>, workers: number, s: Sizes): Promise<Measured> {
  const figures: Record<string, number[]> = {};
  const skipped: string[] = [];
  const { iters, micros } = calibrateMicro();
  note(figures, "microTaskMicros", micros);
  const n = s.microTasks;
  const check = (results: unknown[]) => {
    let wrong = 0;
    for (let i = 0; i < n; i++) if (results[i] !== i + 1) wrong++;
    if (wrong > 0) throw new Error(`Cannot trust workload 1 as ${wrong} results were wrong`);
  };

  const filch = async () => {
    const before = pool.stats().workers;
    const start = performance.now();
    const all = new Array<Promise<number>>(n);
    for (let i = 0; i < n; i++) all[i] = pool.run("micro", i, iters);
    const submitted = performance.now();
    const results = await withTimeout(Promise.all(all), 120_000, "workload 1 on filch did not finish in 120 s");
    const end = performance.now();
    check(results);
    const after = pool.stats().workers;
    const shares = after.map((w, k) => (w.executed - before[k].executed) / n);
    const attempts = after.reduce((sum, w, k) => sum + w.stealAttempts - before[k].stealAttempts, 0);
    const successes = after.reduce((sum, w, k) => sum + w.successfulSteals - before[k].successfulSteals, 0);
    // Tasks from outside come through the injector: a take from it is counted apart from the deque steals.
    const takes = after.reduce((sum, w, k) => sum + w.injectorPops - before[k].injectorPops, 0);
    note(figures, "submitMs", submitted - start);
    note(figures, "submitPerSecond", n / (submitted - start) * 1000);
    note(figures, "completeMs", end - start);
    note(figures, "tasksPerSecond", n / (end - start) * 1000);
    note(figures, "shareMin", Math.min(...shares));
    note(figures, "shareMax", Math.max(...shares));
    note(figures, "stealAttempts", attempts);
    note(figures, "stealSuccessPercent", attempts === 0 ? NaN : successes / attempts * 100);
    note(figures, "injectorTakes", takes);
    note(figures, "dequeSteals", successes);
  };

  const contenders: { name: string; burst: () => Promise<number>; close: () => Promise<void> }[] = [];
  try {
    const { Piscina } = await import("piscina");
    const piscina = new Piscina({
      filename: new URL("./peer_piscina.ts", import.meta.url).href,
      minThreads: workers,
      maxThreads: workers,
    });
    const burst = async () => {
      const start = performance.now();
      const all = new Array<Promise<number>>(n);
      for (let i = 0; i < n; i++) all[i] = piscina.run({ i, n: iters });
      check(await withTimeout(Promise.all(all), 120_000, "piscina did not finish workload 1 in 120 s"));
      return n / (performance.now() - start) * 1000;
    };
    await withTimeout(burst(), 20_000, "piscina did not start and run a warm-up burst in 20 s");
    contenders.push({ name: "piscina", burst, close: () => piscina.destroy() });
  } catch (error) {
    skipped.push(`piscina: ${String(error).split("\n")[0]}`);
  }
  const bare = new BareThreads(workers);
  const tasks: BareTask[] = Array.from({ length: n }, (_, i) => ({ i, k: -1, n: iters, s: 1, w: i % workers }));
  const bareBurst = async () => {
    const start = performance.now();
    check(await withTimeout(bare.burst(tasks), 120_000, "the central queue did not finish workload 1 in 120 s"));
    return n / (performance.now() - start) * 1000;
  };
  await bareBurst();
  contenders.push({ name: "central", burst: bareBurst, close: () => Promise.resolve(bare.close()) });
  await filch(); // warm-up
  for (const key of Object.keys(figures)) if (key !== "microTaskMicros") delete figures[key];

  await alternate(s.rounds, [
    filch,
    ...contenders.map((c) => async () => note(figures, `${c.name}PerSecond`, await c.burst())),
  ], "workload 1");
  for (const c of contenders) {
    const mine = figures.tasksPerSecond;
    figures[`over_${c.name}`] = figures[`${c.name}PerSecond`].map((v, r) => mine[r] / v);
    await withTimeout(c.close(), 5_000, `${c.name} did not close in 5 s`).catch((e) => skipped.push(String(e)));
  }
  return { runtime: runtimeName(), workers, workload: "1", sizes: { tasks: n, iters }, figures, skipped };
}

// ---- workload 2 ----

async function quicksort(pool: Pool<typeof work>, workers: number, s: Sizes): Promise<Measured> {
  const figures: Record<string, number[]> = {};
  const n = s.sortLength;
  const SEED = 20261129;
  const data = new Int32Array(new SharedArrayBuffer(n * 4));
  const reference = new Int32Array(n);
  fillRandom(reference, SEED);
  reference.sort();
  const plain = new Int32Array(n);

  const sequential = () => {
    fillRandom(plain, SEED);
    const start = performance.now();
    work.quicksortSequential(plain, 0, n);
    const ms = performance.now() - start;
    for (let i = 0; i < n; i++) if (plain[i] !== reference[i]) throw new Error("the sequential quicksort is wrong");
    return ms;
  };
  const native = () => {
    fillRandom(plain, SEED);
    const start = performance.now();
    plain.sort();
    return performance.now() - start;
  };
  const parallel = async () => {
    fillRandom(data, SEED);
    const stolen0 = total(pool, "stolen");
    const start = performance.now();
    const counts = await withTimeout(
      pool.run("quicksortParallel", data, 0, n, s.sortCutoff, workers),
      120_000,
      "the parallel quicksort did not finish in 120 s",
    );
    const ms = performance.now() - start;
    const stolen = total(pool, "stolen") - stolen0;
    for (let i = 0; i < n; i++) {
      if (data[i] !== reference[i]) throw new Error(`Cannot trust workload 2 as the parallel sort is wrong at ${i}`);
    }
    const elements = counts.slice(2);
    const even = elements.reduce((a, b) => a + b, 0) / workers;
    return {
      ms,
      subtasks: counts[0],
      depth: counts[1],
      stolen,
      deviation: Math.max(...elements.map((e) => Math.abs(e - even) / even)) * 100,
    };
  };
  // Warm-up: every side twice, untimed.
  for (let i = 0; i < 2; i++) {
    sequential();
    native();
    await parallel();
  }
  const seq: number[] = [];
  const nat: number[] = [];
  const par: number[] = [];
  await alternate(s.rounds, [
    () => Promise.resolve(void seq.push(sequential())),
    () => Promise.resolve(void nat.push(native())),
    async () => {
      const p = await parallel();
      par.push(p.ms);
      note(figures, "subtasks", p.subtasks);
      note(figures, "depth", p.depth);
      note(figures, "steals", p.stolen);
      note(figures, "deviationPercent", p.deviation);
    },
  ], "workload 2");
  figures.sequentialMs = seq;
  figures.nativeMs = nat;
  figures.parallelMs = par;
  figures.speedup = seq.map((v, r) => v / par[r]);
  figures.efficiencyPercent = figures.speedup.map((v) => v / workers * 100);
  figures.overNative = nat.map((v, r) => v / par[r]);
  return {
    runtime: runtimeName(),
    workers,
    workload: "2",
    sizes: { length: n, cutoff: s.sortCutoff },
    figures,
    skipped: [],
  };
}

// ---- workload 3 ----

/** From each task's `[i, worker, start, end]`: the time to finish all, active time, longest idle gap. */
function activity(runs: number[][], workers: number, t0: number, t1: number) {
  const span = t1 - t0;
  const byWorker = Array.from({ length: workers }, () => [] as number[][]);
  for (const run of runs) byWorker[run[1]].push(run);
  let busy = 0;
  let gap = 0;
  for (const list of byWorker) {
    list.sort((a, b) => a[2] - b[2]);
    let last = t0;
    for (const [, , start, end] of list) {
      busy += end - start;
      gap = Math.max(gap, start - last);
      last = end;
    }
  }
  return { ms: span, activePercent: busy / (workers * span) * 100, maxGapMs: gap };
}

async function heterogeneous(pool: Pool<typeof work>, workers: number, s: Sizes): Promise<Measured> {
  const figures: Record<string, number[]> = {};
  const n = s.mixedTasks;
  const { iters } = calibrateMicro();
  // Exactly 80/15/5%, shuffled by a seeded generator: the same sequence every round and for both contenders.
  const kinds: number[] = Array.from({ length: n }, (_, i) => (i < n * 0.05 ? 2 : i < n * 0.2 ? 1 : 0));
  let seed = 12345;
  for (let i = n - 1; i > 0; i--) {
    seed = (Math.imul(seed, 1103515245) + 12345) | 0;
    const j = (seed >>> 8) % (i + 1);
    [kinds[i], kinds[j]] = [kinds[j], kinds[i]];
  }
  const check = (runs: number[][]) => {
    for (let i = 0; i < n; i++) {
      if (runs[i][0] !== i || !(runs[i][1] >= 0 && runs[i][1] < workers)) {
        throw new Error(`Cannot trust workload 3 as task ${i} answered ${JSON.stringify(runs[i])}`);
      }
    }
  };
  const now = () => performance.timeOrigin + performance.now();
  const filch = async () => {
    const t0 = now();
    const all = kinds.map((kind, i) => pool.run("mixed", i, kind, iters, s.mixedScale));
    const runs = await withTimeout(Promise.all(all), 300_000, "workload 3 on filch did not finish in 300 s");
    const t1 = now();
    check(runs);
    return activity(runs, workers, t0, t1);
  };
  const bare = new BareThreads(workers);
  const tasks: BareTask[] = kinds.map((k, i) => ({ i, k, n: iters, s: s.mixedScale, w: i % workers }));
  const roundRobin = async () => {
    const t0 = now();
    const runs = await withTimeout(bare.burst(tasks), 300_000, "round robin did not finish workload 3 in 300 s");
    const t1 = now();
    check(runs as number[][]);
    return activity(runs as number[][], workers, t0, t1);
  };
  await filch();
  await roundRobin();
  await alternate(s.rounds, [
    async () => {
      const a = await filch();
      note(figures, "ms", a.ms);
      note(figures, "activePercent", a.activePercent);
      note(figures, "maxGapMs", a.maxGapMs);
    },
    async () => {
      const a = await roundRobin();
      note(figures, "roundRobinMs", a.ms);
      note(figures, "roundRobinActivePercent", a.activePercent);
      note(figures, "roundRobinMaxGapMs", a.maxGapMs);
    },
  ], "workload 3");
  bare.close();
  figures.overRoundRobin = figures.roundRobinMs.map((v, r) => v / figures.ms[r]);
  // The floor: all the tasks' spin time spread evenly over the workers.
  const workMs = kinds.reduce((sum, k) => sum + (k === 2 ? 10 : k === 1 ? 0.1 : 0.001) / s.mixedScale, 0);
  note(figures, "idealMs", workMs / workers);
  return {
    runtime: runtimeName(),
    workers,
    workload: "3",
    sizes: { tasks: n, scale: s.mixedScale },
    figures,
    skipped: [],
  };
}

// ---- workload 4 ----

async function stress(workers: number, s: Sizes): Promise<Measured> {
  const figures: Record<string, number[]> = {};
  const skipped = new Set<string>();
  const n = s.stressTasks;
  const main = await Pool.create<typeof producerTasks>(new URL("../producers_tasks.ts", import.meta.url));
  /** The same tasks from the main thread alone: 8 × 1,000 in flight, every result checked. */
  const mainAlone = async (count: number) => {
    let next = 0;
    let wrong = 0;
    const lane = async () => {
      while (next < count) {
        const i = next++;
        if ((await main.run("add", i, 10_000_000)) !== i + 10_000_000) wrong++;
      }
    };
    const start = performance.now();
    await withTimeout(
      Promise.all(Array.from({ length: Math.min(8_000, count) }, lane)),
      60_000 + count / 5,
      "the main thread alone did not finish workload 4 in time",
    );
    const seconds = (performance.now() - start) / 1000;
    if (wrong > 0) throw new Error(`Cannot trust workload 4 as ${wrong} of the main thread's results were wrong`);
    return count / seconds;
  };
  await mainAlone(Math.min(n, 16_000));
  let warnings = 0;
  const producers = async () => {
    // benchProducers reports a pool or producer that did not close in time as a WARNING line: count them.
    const error = console.error;
    console.error = (...args: unknown[]) => {
      if (String(args[0]).startsWith("WARNING")) warnings++;
      error(...args);
    };
    try {
      const { rows, ratios, skipped: skips } = await benchProducers({
        rounds: 1,
        tasks: n,
        spinTasks: s.stressSpinTasks,
        us: 40,
        window: 1_000,
        workers,
        producers: [8],
        piscina: false,
      });
      for (const skip of skips) if (!skip.includes("left out (piscina: false)")) skipped.add(skip);
      for (const row of rows) {
        const kind = row.task.startsWith("add") ? "" : "Spin";
        note(figures, `${row.contender}${kind}PerSecond`, row.tasksPerSecond.median);
      }
      for (const ratio of ratios) {
        const kind = ratio.task.startsWith("add") ? "" : "Spin";
        note(figures, `over_${ratio.ratio.replace("filch ÷ ", "")}${kind}`, ratio.value.median);
      }
    } finally {
      console.error = error;
    }
  };
  await alternate(s.rounds, [
    producers,
    async () => note(figures, "mainAlonePerSecond", await mainAlone(n)),
  ], "workload 4");
  figures.seconds = figures.filchPerSecond.map((v) => n / v);
  figures.over_mainAlone = figures.filchPerSecond.map((v, r) => v / figures.mainAlonePerSecond[r]);
  const before = main.stats();
  await withTimeout(main.close(), 10_000, "the main thread's pool did not close within 10 s")
    .catch(() => warnings++);
  note(figures, "pendingAtClose", before.pending);
  note(figures, "shutdownWarnings", warnings);
  return {
    runtime: runtimeName(),
    workers,
    workload: "4",
    sizes: { tasks: n, producers: 8, window: 1_000, spinTasks: s.stressSpinTasks, spinMicros: 40 },
    figures,
    skipped: [...skipped],
  };
}

// ---- the summary rows ----

async function summary(pool: Pool<typeof work>, workers: number, s: Sizes): Promise<Measured> {
  const figures: Record<string, number[]> = {};
  const skipped: string[] = [];
  // Fork overhead: a pool of 1 worker, so that no fork is stolen.
  const one = await Pool.create<typeof forkjoin>(new URL("../forkjoin_tasks.ts", import.meta.url), { workers: 1 });
  const joins = fibJoins(s.fibN, 1);
  for (let i = 0; i < 3; i++) {
    await one.run("timeJoinFib", s.fibN);
    await one.run("timePlainFib", s.fibN);
  }
  // Steal latency: probes on the default pool, a flag each.
  const flag = new Int32Array(new SharedArrayBuffer(12));
  await alternate(s.rounds, [
    async () => {
      const [plainMs, plain] = await one.run("timePlainFib", s.fibN);
      const [joinMs, joined] = await one.run("timeJoinFib", s.fibN);
      if (plain !== joined) throw new Error(`Cannot trust the fork overhead as fib gave ${plain} and ${joined}`);
      note(figures, "forkNs", (joinMs - plainMs) / joins * 1e6);
    },
    async () => {
      // Each probe twice: with the thief searching (warm: it has just run a fork), and asleep (cold).
      const latencies = [[] as number[], [] as number[]];
      for (let k = 0; k < s.stealSamples; k++) {
        for (const warm of [1, 0]) {
          const [micros, stolen] = await pool.run("stealProbe", flag, 20, warm);
          if (stolen === 1) latencies[warm].push(micros * 1000);
          // Let the thief pass its spin and doze into sleep before a cold probe.
          if (warm === 1) await sleep(5);
        }
      }
      for (const [warm, name] of [[1, "stealWarm"], [0, "stealCold"]] as const) {
        const sorted = latencies[warm].sort((a, b) => a - b);
        note(figures, `${name}Ns`, sorted.length === 0 ? NaN : sorted[sorted.length >> 1]);
        note(figures, `${name}P10Ns`, sorted.length === 0 ? NaN : sorted[Math.floor(sorted.length / 10)]);
        note(figures, `${name}StolenPercent`, sorted.length / s.stealSamples * 100);
      }
      await sleep(5);
    },
  ], "summary");
  await one.close();
  note(figures, "bytesPerTask", pool.memory.bytesPerTask);
  note(figures, "sharedBytes", pool.memory.sharedBytes);
  note(figures, "taskCapacity", pool.memory.taskCapacity);
  // Idle CPU: the open pool after work, once its workers have passed their spin and doze into sleep.
  await Promise.all(Array.from({ length: 1_000 }, (_, i) => pool.run("micro", i, 1)));
  await sleep(200);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await sleep(s.idleMs);
  const cpu = process.cpuUsage(cpu0);
  const seconds = (performance.now() - t0) / 1000;
  note(figures, "idleCpuMsPerSecond", (cpu.user + cpu.system) / 1000 / seconds);
  return {
    runtime: runtimeName(),
    workers,
    workload: "summary",
    sizes: { fibN: s.fibN, joins, stealSamples: s.stealSamples, idleMs: s.idleMs },
    figures,
    skipped,
  };
}

function option(name: string): string | undefined {
  return process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
}

if (import.meta.main ?? process.argv[1]?.endsWith("run.ts")) {
  const sizes = sizesFor(process.argv.includes("--quick"));
  const rounds = option("rounds");
  if (rounds !== undefined) sizes.rounds = Number(rounds);
  if (!(Number.isInteger(sizes.rounds) && sizes.rounds >= 1)) throw new Error("Cannot run: --rounds must be ≥ 1");
  const only = (option("only") ?? "1,2,3,4,summary,goals").split(",");
  const pool = await withTimeout(Pool.create<typeof work>(WORK_URL), 20_000, "the pool did not start in 20 s");
  const workers = pool.stats().workers.length;
  const emit = (m: Measured) => console.log(JSON.stringify(m));
  if (only.includes("1")) emit(await microTasks(pool, workers, sizes));
  if (only.includes("2")) emit(await quicksort(pool, workers, sizes));
  if (only.includes("3")) emit(await heterogeneous(pool, workers, sizes));
  if (only.includes("4")) emit(await stress(workers, sizes));
  if (only.includes("summary")) emit(await summary(pool, workers, sizes));
  if (only.includes("goals")) {
    const { figures, skipped } = await restatedGoals(sizes.rounds, workers, sizes.demoTasks, sizes.fibN);
    emit({
      runtime: runtimeName(),
      workers,
      workload: "goals",
      sizes: { demoTasks: sizes.demoTasks, fibN: sizes.fibN, payloadBytes: 65_536 },
      figures,
      skipped,
    });
  }
  await withTimeout(pool.close(), 10_000, "the pool did not close within 10 s");
  // Stray handles of peers must not keep the process up.
  process.exit(0);
}
