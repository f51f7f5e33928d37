/**
 * Latency benchmark (issue 30): how long a task waits from its submission to its start under a steady
 * random load, for filch against piscina and a bare postMessage loop, 2 workers each.
 *
 * Load. Tasks busy-spin for their length (`spin` in bench/latency_tasks.ts: a sleeping task would free its
 * core and the load would not be the one asked for), lengths drawn from a fixed mix: 70% 0.2 ms, 25% 2 ms,
 * 5% 10 ms (mean 1.14 ms). The pool's capacity is workers ÷ mean length (1,754 tasks/s for 2 workers);
 * arrivals are a Poisson stream (exponential gaps) at 50%, 90% and 110% of it. Gaps and lengths come from a
 * seeded generator (xorshift32), seeded per round and load, so every contender of a round gets the same
 * sequence and the rounds differ from one another. At 110% the queue grows for the whole run (by 10% of
 * the capacity), so that load's waits grow with `--seconds`: compare contenders at the same length only.
 *
 * Pacing. The main thread submits from a loop that, each time it wakes, submits every task whose scheduled
 * arrival has passed, then sleeps on a timer until the next one. Timers are coarse (1 ms or more), so the
 * pacer is late by up to a few ms and submits a few tasks together; it never spins to be on time, since a
 * spinning main thread would take a core from the workers on a 2-core machine. A task's wait is measured
 * from the moment its submit call was made (read just before the call), not from its scheduled arrival:
 * the pacer's lateness is never counted as the pool's. The lateness (submit − scheduled) is reported as
 * "pacer lag" (its p99 per run), so a run whose arrivals bunched more than another's shows. A pool that
 * keeps the main thread (or, on 2 cores, the core it needs) busy makes the pacer later, and the wait alone
 * would not charge it for that: "p99 from arrival" (start − scheduled arrival, the wait plus the lag) does,
 * and is reported beside it.
 *
 * Clock. Each task returns its start time read at its first line, `performance.timeOrigin +
 * performance.now()`, and the submit time is read the same way on the main thread: each thread has its own
 * origin, and origin + now is milliseconds since the epoch on every thread, so the two are on one base. The
 * smallest wait seen is reported (JSON `minWaitMs`) as a check of that base: it must not be negative.
 *
 * Contenders. "filch": `pool.run("spin", ms)`. "piscina": `pool.run(ms)` on a piscina worker with the same
 * body (bench/peers/latency_piscina_worker.mjs), min = max = 2 threads. "piscina stricterFIFO": the same
 * with its `stricterFIFO` option. As shipped (piscina 5.3), when a worker frees up piscina hands it the
 * queue's head, then takes the next task off the head, finds no idle worker and puts that task back at the
 * tail: each completion sends one waiting task to the back of the queue, so under a sustained queue tasks
 * start out of order and the tail of the waits grows; `stricterFIFO: true` puts it back at the head. The
 * goal of issue 30 is stated against piscina as users get it, so both are measured, each ratio against
 * each. "bare postMessage loop": what a user
 * writes without a pool: 2 workers (node:worker_threads on Node and Deno, web Worker on Bun, as filch's
 * own), a FIFO queue on the main thread, and each task posted to an idle worker, or queued until a worker
 * replies (least loaded, not round robin: round robin would queue a short task behind a 10 ms one while
 * the other worker idles, which no one would ship). `--before=DIR --before-name=NAME` adds filch from
 * another checkout (a worktree of an older commit) as a fourth contender.
 *
 * Measurement. The machine is shared and noisy, so contenders alternate inside every round: for each load
 * in turn, each contender runs the same schedule for `--seconds` (the order rotated each round), waiting for
 * every task to finish and collecting garbage (where the runtime allows) before the next. A round's figures
 * per (contender, load) are its p50, p99 and max wait and its achieved throughput (tasks ÷ time from the
 * schedule's origin to the last completion). The report gives, over the rounds, the median of each with its
 * range and interquartile range, and the per-round ratio of each contender's p99 to piscina's, as a median
 * with its spread: a ratio taken within a round, where both ran seconds apart, cancels the machine's drift.
 *
 * Priorities (`--priority`): each arrival also draws a level from the same generator, 10% high, 20% low,
 * the rest normal. filch submits each task with its level (`pool.with({ priority })`); piscina and the bare
 * loop have no levels and run every task alike (their rows show what a FIFO pool gives each class). The
 * report then adds each level's p99 per contender and load, and issue 30's goal for filch: its high tasks'
 * p99 at 110% load ÷ their p99 at 50%, taken per round (goal: at most 1).
 *
 * Run: `node bench/latency.ts`, `deno run -A bench/latency.ts`, `bun bench/latency.ts` (`--rounds N`,
 * default 15; `--seconds S` of arrivals per run, default 1.2; `--json` for one JSON line per contender and
 * load, then one per ratio; `--before=DIR --before-name=NAME` as above; `--priority` as above).
 */
import process from "node:process";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { Pool } from "../lib/pool.ts";
import { startThread, threadApi, type ThreadHandle } from "../lib/runtime/thread.ts";
import { collectGarbage, format, runtimeName, summarize, type Summary } from "./_stats.ts";
import type * as latencyTasks from "./latency_tasks.ts";
import { withTimeout } from "./_deadline.ts";

const WORKERS = 2;
/** The task lengths, ms, with their shares of the arrivals. */
const MIX: readonly { ms: number; share: number }[] = [
  { ms: 0.2, share: 0.7 },
  { ms: 2, share: 0.25 },
  { ms: 10, share: 0.05 },
];
const MEAN_MS = MIX.reduce((sum, { ms, share }) => sum + ms * share, 0);
/** Tasks per second that keep every worker busy, with no overhead. */
const CAPACITY = WORKERS / MEAN_MS * 1000;
/** The offered loads, as fractions of the capacity. */
const LOADS = [0.5, 0.9, 1.1];

/** One pool under test. */
interface Contender {
  name: string;
  /**
   * Runs a task of `ms` busy milliseconds at `level` (0 high, 1 normal, 2 low: only filch has levels);
   * resolves with its start time (epoch ms, as `spin` reads it).
   */
  submit(ms: number, level: number): Promise<number>;
  close(): Promise<void>;
}

/** One scheduled task: its arrival, ms after the run's origin, and its length. */
interface Arrival {
  at: number;
  ms: number;
  /** Its priority level: 0 high, 1 normal, 2 low (always 1 without `--priority`). */
  level: number;
}

/** The priority names by level. */
const LEVEL_NAMES = ["high", "normal", "low"] as const;

/** A uniform generator on [0, 1): xorshift32, seeded (never 0). */
function generator(seed: number): () => number {
  let s = (seed >>> 0) || 0x9e3779b9;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 4294967296;
  };
}

/**
 * The arrivals of one run: a Poisson stream at `rate` tasks/s for `seconds`, lengths from {@link MIX}, and
 * with `priorities` a level each (10% high, 20% low, the rest normal).
 */
function schedule(seed: number, rate: number, seconds: number, priorities = false): Arrival[] {
  const random = generator(seed);
  const arrivals: Arrival[] = [];
  let at = 0;
  for (;;) {
    at += -Math.log(1 - random()) / rate * 1000;
    if (at > seconds * 1000) return arrivals;
    let pick = random();
    let ms = MIX[MIX.length - 1].ms;
    for (const entry of MIX) {
      if (pick < entry.share) {
        ms = entry.ms;
        break;
      }
      pick -= entry.share;
    }
    let level = 1;
    if (priorities) {
      const draw = random();
      level = draw < 0.1 ? 0 : draw < 0.3 ? 2 : 1;
    }
    arrivals.push({ at, ms, level });
  }
}

/** One run's figures, ms (throughput in tasks/s). */
interface RunFigures {
  p50: number;
  p99: number;
  max: number;
  min: number;
  throughput: number;
  lagP99: number;
  /** The p99 of start − scheduled arrival: the wait plus the pacer's lateness. */
  p99FromArrival: number;
  /** Each level's p99 wait (NaN for a level with no task in the run). */
  p99ByLevel: number[];
}

/** The `q` quantile of sorted values, interpolated between the two nearest. */
function quantile(sorted: Float64Array, q: number): number {
  const at = (sorted.length - 1) * q;
  const below = Math.floor(at);
  const above = Math.min(below + 1, sorted.length - 1);
  return sorted[below] + (sorted[above] - sorted[below]) * (at - below);
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Submits `arrivals` on their schedule (see the module doc on pacing); resolves when every task has finished. */
async function run(contender: Contender, arrivals: Arrival[]): Promise<RunFigures> {
  const n = arrivals.length;
  const submitted = new Float64Array(n);
  const waits = new Float64Array(n);
  const lags = new Float64Array(n);
  const fromArrival = new Float64Array(n);
  let done = 0;
  let lastDone = 0;
  let failure: unknown;
  let finish = () => {};
  const finished = new Promise<void>((resolve) => (finish = resolve));
  const origin = performance.now() + 1;
  let next = 0;
  while (next < n) {
    while (next < n && origin + arrivals[next].at <= performance.now()) {
      const i = next++;
      const now = performance.now();
      lags[i] = now - (origin + arrivals[i].at);
      submitted[i] = performance.timeOrigin + now;
      contender.submit(arrivals[i].ms, arrivals[i].level).then(
        (started) => {
          waits[i] = started - submitted[i];
          fromArrival[i] = started - (performance.timeOrigin + origin + arrivals[i].at);
          lastDone = performance.now();
          if (++done === n) finish();
        },
        (error) => {
          failure ??= error;
          if (++done === n) finish();
        },
      );
    }
    if (next < n) await sleep(Math.max(0, origin + arrivals[next].at - performance.now()));
  }
  if (n > 0) await finished;
  if (failure !== undefined) throw failure;
  const p99ByLevel = [0, 1, 2].map((level) => {
    const mine = Float64Array.from(waits.filter((_, i) => arrivals[i].level === level)).sort();
    return mine.length === 0 ? NaN : quantile(mine, 0.99);
  });
  waits.sort();
  lags.sort();
  fromArrival.sort();
  return {
    p50: quantile(waits, 0.5),
    p99: quantile(waits, 0.99),
    max: waits[n - 1],
    min: waits[0],
    throughput: n / ((lastDone - origin) / 1000),
    lagP99: quantile(lags, 0.99),
    p99FromArrival: quantile(fromArrival, 0.99),
    p99ByLevel,
  };
}

/** filch from the module at `poolUrl` (this checkout's, or another's given by `--before`). */
async function filch(name: string, PoolClass: typeof Pool): Promise<Contender> {
  const pool = await PoolClass.create<typeof latencyTasks>(new URL("./latency_tasks.ts", import.meta.url), {
    workers: WORKERS,
  });
  const runners = LEVEL_NAMES.map((priority) => pool.with({ priority }));
  return { name, submit: (ms, level) => runners[level].run("spin", ms), close: () => pool.close() };
}

/** piscina as shipped, or with `stricterFIFO` (see the module doc). */
async function piscina(stricterFIFO: boolean): Promise<Contender> {
  const { Piscina } = await import("piscina");
  const pool = new Piscina({
    filename: new URL("./peers/latency_piscina_worker.mjs", import.meta.url).href,
    minThreads: WORKERS,
    maxThreads: WORKERS,
    ...(stricterFIFO ? { stricterFIFO } : {}),
  });
  return {
    name: stricterFIFO ? PISCINA_FIFO : "piscina",
    submit: (ms) => pool.run(ms) as Promise<number>,
    close: () => pool.destroy(),
  };
}

const PISCINA_FIFO = "piscina stricterFIFO";

/** The bare loop: a FIFO queue on the main thread, each task posted to an idle worker (see the module doc). */
function bareLoop(): Contender {
  const url = new URL(
    threadApi === "worker_threads" ? "./peers/latency_bare_node.mjs" : "./peers/latency_bare_web.mjs",
    import.meta.url,
  );
  const threads: ThreadHandle[] = [];
  /** The resolve of the task each worker runs, undefined when it idles. */
  const running: (((started: number) => void) | undefined)[] = [];
  let queue: { ms: number; resolve: (started: number) => void }[] = [];
  let head = 0;
  for (let w = 0; w < WORKERS; w++) {
    const thread = startThread(url, `latency-bare-${w}`);
    threads.push(thread);
    running.push(undefined);
    thread.onMessage((started) => {
      const resolve = running[w]!;
      running[w] = undefined;
      if (head < queue.length) {
        const task = queue[head++];
        if (head === queue.length) [queue, head] = [[], 0];
        running[w] = task.resolve;
        thread.post(task.ms);
      }
      resolve(started as number);
    });
  }
  return {
    name: "bare postMessage loop",
    submit: (ms) =>
      new Promise<number>((resolve) => {
        const idle = running.indexOf(undefined);
        if (idle === -1) queue.push({ ms, resolve });
        else {
          running[idle] = resolve;
          threads[idle].post(ms);
        }
      }),
    close: () => {
      for (const t of threads) t.terminate();
      return Promise.resolve();
    },
  };
}

/** One contender at one load, over the rounds. */
export interface LatencyRow {
  runtime: string;
  name: string;
  /** The offered load, a fraction of the capacity. */
  load: number;
  offeredPerSecond: number;
  p50Ms: Summary;
  p99Ms: Summary;
  maxMs: Summary;
  tasksPerSecond: Summary;
  pacerLagP99Ms: Summary;
  /** The p99 of start − scheduled arrival (the wait plus the pacer's lateness), per round. */
  p99FromArrivalMs: Summary;
  /** The smallest wait of any task in any round: a check of the clock's common base (never below 0). */
  minWaitMs: number;
  /** Each round's p99, in round order. */
  p99Samples: number[];
  /** Each level's p99 over the rounds (with `--priority`; high, normal, low). */
  p99ByLevelMs?: Summary[];
  error?: string;
}

/** A contender's p99 ÷ piscina's (as shipped, or with stricterFIFO), taken per round, at one load. */
export interface LatencyRatio {
  runtime: string;
  ratio: string;
  load: number;
  value: Summary;
}

function option(name: string): string | undefined {
  const args = process.argv.slice(2);
  const i = args.findIndex((a) => a === `--${name}` || a.startsWith(`--${name}=`));
  if (i === -1) return undefined;
  return args[i].includes("=") ? args[i].slice(args[i].indexOf("=") + 1) : args[i + 1];
}

/**
 * Runs every contender that starts on this runtime at every load, `rounds` rounds, interleaved.
 *
 * @param rounds Rounds.
 * @param seconds Seconds of arrivals per run.
 * @param before Another checkout of filch to run beside this one, with its contender's name.
 * @returns One row per contender and load, and the p99 ratios to piscina.
 */
export async function benchLatency(
  rounds: number,
  seconds: number,
  before?: { dir: string; name: string },
  priorities = false,
): Promise<{ rows: LatencyRow[]; ratios: LatencyRatio[] }> {
  const makers: [string, () => Promise<Contender> | Contender][] = [
    ["filch", () => filch("filch", Pool)],
  ];
  if (before !== undefined) {
    makers.push([before.name, async () => {
      const module = await import(pathToFileURL(join(before.dir, "lib", "pool.ts")).href) as { Pool: typeof Pool };
      return filch(before.name, module.Pool);
    }]);
  }
  makers.push(
    ["piscina", () => piscina(false)],
    [PISCINA_FIFO, () => piscina(true)],
    ["bare postMessage loop", bareLoop],
  );
  const contenders: Contender[] = [];
  const rows: LatencyRow[] = [];
  const empty = summarize([NaN]);
  for (const [name, make] of makers) {
    try {
      console.error(`starting ${name} …`);
      // A peer that never comes up on a runtime gets 10 s, then a row saying so. The warm-up is a short
      // run at 90%.
      contenders.push(
        await withTimeout(
          (async () => {
            const c = await make();
            await run(c, schedule(0x5eed, 0.9 * CAPACITY, Math.min(seconds, 0.5)));
            return c;
          })(),
          10_000,
          `${name} did not start and finish a warm-up within 10 s`,
        ),
      );
    } catch (error) {
      for (const load of LOADS) {
        rows.push({
          runtime: runtimeName(),
          name,
          load,
          offeredPerSecond: load * CAPACITY,
          p50Ms: empty,
          p99Ms: empty,
          maxMs: empty,
          tasksPerSecond: empty,
          pacerLagP99Ms: empty,
          p99FromArrivalMs: empty,
          minWaitMs: NaN,
          p99Samples: [],
          error: String(error).split("\n")[0],
        });
      }
    }
  }
  // figures[contender][load][round]
  const figures = contenders.map(() => LOADS.map(() => [] as RunFigures[]));
  for (let r = 0; r < rounds; r++) {
    for (let l = 0; l < LOADS.length; l++) {
      const arrivals = schedule(1 + r * 1000 + l, LOADS[l] * CAPACITY, seconds, priorities);
      for (let c = 0; c < contenders.length; c++) {
        const k = (c + r) % contenders.length; // rotate the order each round
        collectGarbage?.();
        const figure = await run(contenders[k], arrivals);
        figures[k][l].push(figure);
        console.error(
          `round ${r} load ${Math.round(LOADS[l] * 100)}% ${contenders[k].name}: p99 ${figure.p99.toFixed(2)} ms, ` +
            `${figure.throughput.toFixed(0)} tasks/s, pacer lag p99 ${figure.lagP99.toFixed(2)} ms`,
        );
        await sleep(50); // the same short rest for every contender's workers before the next run
      }
    }
  }
  for (let c = 0; c < contenders.length; c++) {
    for (let l = 0; l < LOADS.length; l++) {
      const runs = figures[c][l];
      rows.push({
        runtime: runtimeName(),
        name: contenders[c].name,
        load: LOADS[l],
        offeredPerSecond: LOADS[l] * CAPACITY,
        p50Ms: summarize(runs.map((f) => f.p50)),
        p99Ms: summarize(runs.map((f) => f.p99)),
        maxMs: summarize(runs.map((f) => f.max)),
        tasksPerSecond: summarize(runs.map((f) => f.throughput)),
        pacerLagP99Ms: summarize(runs.map((f) => f.lagP99)),
        p99FromArrivalMs: summarize(runs.map((f) => f.p99FromArrival)),
        minWaitMs: Math.min(...runs.map((f) => f.min)),
        p99Samples: runs.map((f) => f.p99),
        ...(priorities ? { p99ByLevelMs: [0, 1, 2].map((v) => summarize(runs.map((f) => f.p99ByLevel[v]))) } : {}),
      });
    }
    // A peer's shutdown has been seen to hang with no handle left: bound it.
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([contenders[c].close(), new Promise<void>((resolve) => (timer = setTimeout(resolve, 3000)))]);
    clearTimeout(timer);
  }
  const ratios: LatencyRatio[] = [];
  for (const divisor of ["piscina", PISCINA_FIFO]) {
    const p = contenders.findIndex((c) => c.name === divisor);
    if (p === -1) continue;
    for (let c = 0; c < contenders.length; c++) {
      if (contenders[c].name.startsWith("piscina")) continue;
      for (let l = 0; l < LOADS.length; l++) {
        ratios.push({
          runtime: runtimeName(),
          ratio: `${contenders[c].name} ÷ ${divisor}`,
          load: LOADS[l],
          value: summarize(figures[c][l].map((f, r) => f.p99 / figures[p][l][r].p99)),
        });
      }
    }
  }
  if (priorities) {
    // Issue 30's goal: filch's high tasks' p99 at 110% ÷ at 50%, per round.
    const f = contenders.findIndex((c) => c.name === "filch");
    const low = LOADS.indexOf(0.5);
    const high = LOADS.indexOf(1.1);
    if (f !== -1) {
      ratios.push({
        runtime: runtimeName(),
        ratio: "filch high p99 at 110% ÷ at 50%",
        load: 1.1,
        value: summarize(figures[f][high].map((fig, r) => fig.p99ByLevel[0] / figures[f][low][r].p99ByLevel[0])),
      });
    }
  }
  rows.sort((a, b) => a.load - b.load);
  return { rows, ratios };
}

/** A summary as `median (min–max) [q1–q3]`. */
function withQuartiles(s: Summary, digits: number): string {
  return `${format(s, digits)} [${s.q1.toFixed(digits)}–${s.q3.toFixed(digits)}]`;
}

if (import.meta.main ?? process.argv[1]?.endsWith("latency.ts")) {
  const priorities = process.argv.includes("--priority");
  const rounds = Number(option("rounds") ?? 15);
  const seconds = Number(option("seconds") ?? 1.2);
  if (!(rounds >= 1 && seconds > 0)) throw new Error("Cannot run with those settings: --rounds ≥ 1, --seconds > 0");
  const dir = option("before");
  let before: { dir: string; name: string } | undefined;
  if (dir !== undefined) {
    let commit = "?";
    try {
      commit = execFileSync("git", ["-C", dir, "log", "-1", "--format=%h"], { encoding: "utf8" }).trim();
    } catch { /* not a git checkout: the name says so */ }
    before = { dir, name: option("before-name") ?? `filch (${commit})` };
  }
  const { rows, ratios } = await benchLatency(rounds, seconds, before, priorities);
  if (process.argv.includes("--json")) {
    for (const row of rows) console.log(JSON.stringify(row));
    for (const ratio of ratios) console.log(JSON.stringify(ratio));
  } else {
    console.log(
      `\n${runtimeName()}, ${WORKERS} workers, mix ${MIX.map((m) => `${m.share * 100}% ${m.ms} ms`).join(", ")} ` +
        `(capacity ${CAPACITY.toFixed(0)} tasks/s), ${rounds} rounds of ${seconds} s per load. Wait from submit ` +
        `to start, ms: median over rounds (min–max); p99's quartiles; the p99 ÷ piscina's taken per round, ` +
        `median (min–max) [q1–q3].\n`,
    );
    console.log(
      "| load | contender | p50 | p99 | p99 q1–q3 | max | tasks/s | pacer lag p99 | p99 from arrival | p99 ÷ piscina " +
        "| p99 ÷ piscina stricterFIFO |",
    );
    console.log("|---|---|---|---|---|---|---|---|---|---|---|");
    for (const row of rows) {
      const load = `${Math.round(row.load * 100)}% (${row.offeredPerSecond.toFixed(0)}/s)`;
      if (row.error !== undefined) {
        console.log(`| ${load} | ${row.name} | did not run: ${row.error} | | | | | | | | |`);
        continue;
      }
      const ratio = (divisor: string) => {
        const found = ratios.find((r) => r.load === row.load && r.ratio === `${row.name} ÷ ${divisor}`);
        return found === undefined ? "" : withQuartiles(found.value, 2);
      };
      console.log(
        `| ${load} | ${row.name} | ${format(row.p50Ms, 2)} | ${format(row.p99Ms, 2)} | ${row.p99Ms.q1.toFixed(2)}–${
          row.p99Ms.q3.toFixed(2)
        } | ${format(row.maxMs, 1)} | ${format(row.tasksPerSecond, 0)} | ${format(row.pacerLagP99Ms, 2)} | ${
          format(row.p99FromArrivalMs, 2)
        } | ${ratio("piscina")} | ${ratio(PISCINA_FIFO)} |`,
      );
    }
    if (priorities) {
      console.log("\nWith priorities (10% high, 20% low): each level's p99 wait, ms, median over rounds (min–max).\n");
      console.log("| load | contender | high p99 | normal p99 | low p99 |");
      console.log("|---|---|---|---|---|");
      for (const row of rows) {
        if (row.p99ByLevelMs === undefined) continue;
        const [h, n, l] = row.p99ByLevelMs.map((s) => format(s, 2));
        console.log(`| ${Math.round(row.load * 100)}% | ${row.name} | ${h} | ${n} | ${l} |`);
      }
      const goal = ratios.find((r) => r.ratio.startsWith("filch high p99"));
      if (goal !== undefined) {
        console.log(`\n${goal.ratio}, per round: ${withQuartiles(goal.value, 2)} (goal: at most 1)`);
      }
    }
    const minimum = Math.min(...rows.filter((r) => r.error === undefined).map((r) => r.minWaitMs));
    console.log(`\nSmallest wait of any task (the clock check: never negative): ${minimum.toFixed(3)} ms`);
  }
  // Stray handles of peers must not keep the process up.
  process.exit(0);
}
