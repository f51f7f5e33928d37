/**
 * Pool benchmark: 100k tiny tasks (a + b) submitted at once and awaited, and one-at-a-time round-trip
 * latency, on 2 workers, for filch and, side by side in the same process, its peers: piscina, tinypool,
 * workerpool and poolifier (where they run) and a bare postMessage loop (2 workers, round robin, no
 * promises: the floor of the message-per-task design). Two more rows bound filch's from either side:
 * "filch runMany", the same tasks through filch's batch form (one call, one promise; the argument arrays
 * are built inside the timed burst, as `run`'s are); and "promises alone", no workers and no messages: a
 * promise per task, each resolved with `i + 1` from a macrotask after the burst is submitted, awaited with
 * `Promise.all`: what a one-promise-per-task API costs on this runtime before any pool work, and how much
 * its rounds spread. Contenders run interleaved, several rounds each; results are medians with the range.
 *
 * Run: `node bench/pool_bench.ts`, `deno run -A bench/pool_bench.ts`, `bun bench/pool_bench.ts`
 * (`--json` for machine-readable lines; a number sets the rounds, default 5; `--warmup=N` untimed bursts
 * per contender first, default 1; `--gc` collects garbage before each timed burst, see `collectGarbage`;
 * `--only=a,b` runs the contenders named so, or whose names start with one of those where none is named
 * exactly: `--only=filch` is filch alone, `--only=filch,filch runMany` both, `--only=pro` the promises).
 * Each line gives the median with the range, and the spread of the rounds both ways: (max − min) ÷ median
 * and (q3 − q1) ÷ median.
 *
 * `--processes=P`: each contender runs in processes of its own, one after another (never two at once),
 * in P passes with the order rotated each pass; each process starts its contender, runs the warm-up
 * bursts, then rounds ÷ P timed rounds (rounded up). In one process the contenders share a heap: a burst
 * may pay for the garbage of the one before it, or find a heap already grown by it (on V8, filch's bursts
 * of 100k tasks ran about twice as fast in a grown heap as in a freshly collected one).
 */
import { fileURLToPath } from "node:url";
import { Pool } from "../lib/pool.ts";
import { startThread, threadApi, type ThreadHandle } from "../lib/runtime/thread.ts";
import { runApart } from "./_apart.ts";
import { collectGarbage, format, runtimeName, summarize, type Summary } from "./_stats.ts";
import type * as tasks from "./tasks.ts";
import { withTimeout } from "./_deadline.ts";

const WORKERS = 2;
const TASKS = 100_000;
const ROUND_TRIPS = 2_000;

/** One pool under test. */
interface Contender {
  name: string;
  /** Submits `n` tasks at once, awaits all; returns the elapsed ms. Checks the results. */
  burst(n: number): Promise<number>;
  /** Awaits `n` tasks one after another; returns the elapsed ms. */
  sequential(n: number): Promise<number>;
  close(): Promise<void>;
}

async function timed(body: () => Promise<void>): Promise<number> {
  const start = performance.now();
  await body();
  return performance.now() - start;
}

async function checkedBurst(n: number, run: (i: number) => Promise<unknown>): Promise<number> {
  return await checkedBatch(n, (n) => {
    const all = new Array<Promise<unknown>>(n);
    for (let i = 0; i < n; i++) all[i] = run(i);
    return Promise.all(all);
  });
}

/** Times `batch` of `n` tasks (result `i` must be `i + 1`), checking its results inside the timed span. */
async function checkedBatch(n: number, batch: (n: number) => Promise<unknown[]>): Promise<number> {
  let bad = 0;
  const ms = await timed(async () => {
    const results = await batch(n);
    for (let i = 0; i < n; i++) if (results[i] !== i + 1) bad++;
  });
  if (bad > 0) throw new Error(`Cannot trust the benchmark as ${bad} results were wrong`);
  return ms;
}

async function sequentialRuns(n: number, run: (i: number) => Promise<unknown>): Promise<number> {
  return await timed(async () => {
    for (let i = 0; i < n; i++) {
      if ((await run(i)) !== i + 1) throw new Error("Cannot trust the benchmark as a result was wrong");
    }
  });
}

async function filch(): Promise<Contender> {
  const pool = await Pool.create<typeof tasks>(new URL("./tasks.ts", import.meta.url), { workers: WORKERS });
  return {
    name: "filch",
    burst: (n) => checkedBurst(n, (i) => pool.run("add", i, 1)),
    sequential: (n) => sequentialRuns(n, (i) => pool.run("add", i, 1)),
    close: () => pool.close(),
  };
}

async function filchRunMany(): Promise<Contender> {
  const pool = await Pool.create<typeof tasks>(new URL("./tasks.ts", import.meta.url), { workers: WORKERS });
  return {
    name: "filch runMany",
    burst: (n) =>
      checkedBatch(n, (n) => {
        const argsList = new Array<[number, number]>(n);
        for (let i = 0; i < n; i++) argsList[i] = [i, 1];
        return pool.runMany("add", argsList);
      }),
    sequential: (n) => sequentialRuns(n, async (i) => (await pool.runMany("add", [[i, 1]]))[0]),
    close: () => pool.close(),
  };
}

/**
 * No pool: a promise per task, resolved with `i + 1` from one macrotask (a MessageChannel message, on every
 * runtime) that runs after the burst's synchronous submission loop, and awaited with `Promise.all` like the
 * pools' bursts. Its rounds are the floor of one-promise-per-task on the runtime: promises, their
 * resolving functions and `Promise.all`'s reactions, and the collector that moves them.
 */
function promisesAlone(): Contender {
  const channel = new MessageChannel();
  let resolvers: ((value: number) => void)[] = [];
  let values: number[] = [];
  let posted = false;
  channel.port2.onmessage = () => {
    posted = false;
    const [batch, results] = [resolvers, values];
    resolvers = [];
    values = [];
    for (let k = 0; k < batch.length; k++) batch[k](results[k]);
  };
  const run = (i: number) =>
    new Promise<number>((resolve) => {
      resolvers.push(resolve);
      values.push(i + 1);
      if (!posted) {
        posted = true;
        channel.port1.postMessage(0);
      }
    });
  return {
    name: "promises alone",
    burst: (n) => checkedBurst(n, run),
    sequential: (n) => sequentialRuns(n, run),
    close: () => {
      channel.port1.close();
      channel.port2.close();
      return Promise.resolve();
    },
  };
}

function bareLoop(): Contender {
  const url = new URL(
    // The same thread API as filch's own workers: node:worker_threads on Node and Deno (on Deno its
    // messages were as fast as the web Worker's or faster: 150–270k vs 150k a second), web Worker on Bun.
    threadApi === "worker_threads" ? "./peers/bare_worker_node.mjs" : "./peers/bare_worker_web.mjs",
    import.meta.url,
  );
  const threads: ThreadHandle[] = [];
  for (let w = 0; w < WORKERS; w++) threads.push(startThread(url, `bare-${w}`));
  let onReply: (message: { i: number; r: number }) => void = () => {};
  for (const t of threads) t.onMessage((m) => onReply(m as { i: number; r: number }));
  const send = (i: number) => threads[i % WORKERS].post({ i, a: i, b: 1 });
  return {
    name: "bare postMessage loop",
    burst: (n) =>
      timed(() =>
        new Promise<void>((resolve, reject) => {
          let left = n;
          onReply = (m) => {
            if (m.r !== m.i + 1) reject(new Error("Cannot trust the benchmark as a result was wrong"));
            if (--left === 0) resolve();
          };
          for (let i = 0; i < n; i++) send(i);
        })
      ),
    sequential: (n) =>
      timed(() =>
        new Promise<void>((resolve) => {
          let i = 0;
          onReply = () => {
            if (++i === n) resolve();
            else send(i);
          };
          send(0);
        })
      ),
    close: () => {
      for (const t of threads) t.terminate();
      return Promise.resolve();
    },
  };
}

async function piscina(): Promise<Contender> {
  const { Piscina } = await import("piscina");
  const pool = new Piscina({
    filename: new URL("./peers/piscina_worker.mjs", import.meta.url).href,
    minThreads: WORKERS,
    maxThreads: WORKERS,
  });
  return {
    name: "piscina",
    burst: (n) => checkedBurst(n, (i) => pool.run({ a: i, b: 1 })),
    sequential: (n) => sequentialRuns(n, (i) => pool.run({ a: i, b: 1 })),
    close: () => pool.destroy(),
  };
}

async function tinypool(): Promise<Contender> {
  const { Tinypool } = await import("tinypool");
  const pool = new Tinypool({
    filename: new URL("./peers/piscina_worker.mjs", import.meta.url).href,
    minThreads: WORKERS,
    maxThreads: WORKERS,
  });
  return {
    name: "tinypool",
    burst: (n) => checkedBurst(n, (i) => pool.run({ a: i, b: 1 })),
    sequential: (n) => sequentialRuns(n, (i) => pool.run({ a: i, b: 1 })),
    close: () => pool.destroy(),
  };
}

async function workerpool(): Promise<Contender> {
  const wp = (await import("workerpool")).default;
  const { fileURLToPath } = await import("node:url");
  const pool = wp.pool(fileURLToPath(new URL("./peers/workerpool_worker.mjs", import.meta.url).href), {
    minWorkers: WORKERS,
    maxWorkers: WORKERS,
    workerType: "thread",
  });
  return {
    name: "workerpool",
    burst: (n) => checkedBurst(n, (i) => pool.exec("add", [i, 1])),
    sequential: (n) => sequentialRuns(n, (i) => pool.exec("add", [i, 1])),
    close: async () => void await pool.terminate(),
  };
}

async function poolifier(): Promise<Contender> {
  const { FixedThreadPool } = await import("poolifier");
  const { fileURLToPath } = await import("node:url");
  const pool = new FixedThreadPool(
    WORKERS,
    fileURLToPath(new URL("./peers/poolifier_worker.mjs", import.meta.url).href),
  );
  await new Promise((resolve) => setTimeout(resolve, 200)); // let its workers come up
  return {
    name: "poolifier",
    burst: (n) => checkedBurst(n, (i) => pool.execute({ a: i, b: 1 })),
    sequential: (n) => sequentialRuns(n, (i) => pool.execute({ a: i, b: 1 })),
    close: () => pool.destroy(),
  };
}

/** One contender's results. */
export interface PoolBenchRow {
  runtime: string;
  name: string;
  tasksPerSecond: Summary;
  roundTripMicros: Summary;
  /** Each round's figures, in the order they ran. */
  samples?: { tasksPerSecond: number[]; roundTripMicros: number[] };
  error?: string;
}

/** The contenders' names, in the order they start. */
const CONTENDERS = [
  "filch",
  "filch runMany",
  "bare postMessage loop",
  "promises alone",
  "piscina",
  "tinypool",
  "workerpool",
  "poolifier",
];

/**
 * Runs every contender that starts on this runtime in processes of its own: `passes` passes, each running
 * one process per contender in turn (the order rotated each pass), each process `rounds ÷ passes` rounds
 * (rounded up) after `warmup` bursts.
 *
 * @param rounds Rounds per contender in all.
 * @param passes Processes per contender.
 * @returns One row per contender, its samples from every pass.
 */
export function benchPoolsInProcesses(
  rounds: number,
  passes: number,
  options: { warmup?: number; gc?: boolean; only?: readonly string[] } = {},
): PoolBenchRow[] {
  const { warmup = 1, gc = false, only = [] } = options;
  const names = selected(CONTENDERS, only);
  const perPass = Math.ceil(rounds / passes);
  const rows = new Map<string, PoolBenchRow>();
  const argsOf = (name: string) => {
    const args = [String(perPass), `--warmup=${warmup}`, `--only=${name}`, "--json"];
    return gc ? [...args, "--gc"] : args;
  };
  // A process's rounds take seconds; 10 minutes means it hung.
  runApart<PoolBenchRow>(
    fileURLToPath(import.meta.url),
    names,
    passes,
    argsOf,
    600_000,
    ({ name, rows: [row], error }) => {
      if (row === undefined || row.samples === undefined) {
        rows.set(name, { ...(rows.get(name) ?? emptyRow(name)), error: row?.error ?? error });
        return;
      }
      const sofar = rows.get(name);
      const samples = sofar?.samples ?? { tasksPerSecond: [], roundTripMicros: [] };
      samples.tasksPerSecond.push(...row.samples.tasksPerSecond);
      samples.roundTripMicros.push(...row.samples.roundTripMicros);
      rows.set(name, {
        runtime: row.runtime,
        name,
        tasksPerSecond: summarize(samples.tasksPerSecond),
        roundTripMicros: summarize(samples.roundTripMicros),
        samples,
        ...(sofar?.error === undefined ? {} : { error: sofar.error }),
      });
    },
  );
  return names.filter((name) => rows.has(name)).map((name) => rows.get(name)!);
}

/**
 * The contenders `only` selects: each item names one exactly or, if it names none exactly, every one whose
 * name starts with it (so that `filch` is filch alone, not filch and "filch runMany"). All if `only` is empty.
 */
function selected(names: readonly string[], only: readonly string[]): string[] {
  if (only.length === 0) return [...names];
  return names.filter((name) => only.some((item) => item === name || (!names.includes(item) && name.startsWith(item))));
}

/** A row for a contender that did not run. */
function emptyRow(name: string): PoolBenchRow {
  const empty = summarize([NaN]);
  return { runtime: runtimeName(), name, tasksPerSecond: empty, roundTripMicros: empty };
}

/**
 * Runs every contender that starts on this runtime, `rounds` times each, interleaved.
 *
 * @param rounds Rounds per contender (after one warm-up round).
 * @returns One row per contender.
 */
export async function benchPools(
  rounds = 5,
  options: { warmup?: number; gc?: boolean; only?: readonly string[] } = {},
): Promise<PoolBenchRow[]> {
  const { warmup = 1, gc = false, only = [] } = options;
  if (gc && collectGarbage === undefined) {
    throw new Error("Cannot collect garbage before each burst as this runtime offers no way to: drop --gc");
  }
  const make: Record<string, () => Contender | Promise<Contender>> = {
    "filch": filch,
    "filch runMany": filchRunMany,
    "bare postMessage loop": bareLoop,
    "promises alone": promisesAlone,
    "piscina": piscina,
    "tinypool": tinypool,
    "workerpool": workerpool,
    "poolifier": poolifier,
  };
  const makers = selected(CONTENDERS, only).map((name) => [name, make[name]] as const);
  const contenders: Contender[] = [];
  const rows: PoolBenchRow[] = [];
  for (const [name, make] of makers) {
    try {
      console.error(`starting ${name} …`);
      // Some peers never come up on Deno or Bun (their workers hang at start): give each 10 s.
      const c = await withTimeout(
        (async () => {
          const c = await make();
          await c.burst(10_000); // warm-up
          await c.sequential(200);
          return c;
        })(),
        10_000,
        `${name} did not start and finish a warm-up within 10 s`,
      );
      contenders.push(c);
    } catch (error) {
      const empty = summarize([NaN]);
      rows.push({
        runtime: runtimeName(),
        name,
        tasksPerSecond: empty,
        roundTripMicros: empty,
        error: String(error).split("\n")[0],
      });
    }
  }
  for (let w = 1; w < warmup; w++) for (const c of contenders) await c.burst(TASKS);
  const throughput = contenders.map(() => [] as number[]);
  const latency = contenders.map(() => [] as number[]);
  for (let r = 0; r < rounds; r++) {
    for (let c = 0; c < contenders.length; c++) {
      const k = (c + r) % contenders.length; // rotate the order each round
      console.error(`round ${r}: ${contenders[k].name}`);
      if (gc) collectGarbage!();
      throughput[k].push(TASKS / (await contenders[k].burst(TASKS)) * 1000);
      latency[k].push((await contenders[k].sequential(ROUND_TRIPS)) * 1000 / ROUND_TRIPS);
    }
  }
  for (let c = 0; c < contenders.length; c++) {
    rows.push({
      runtime: runtimeName(),
      name: contenders[c].name,
      tasksPerSecond: summarize(throughput[c]),
      roundTripMicros: summarize(latency[c]),
      samples: { tasksPerSecond: throughput[c], roundTripMicros: latency[c] },
    });
    // A peer's shutdown has been seen to hang with no handle left (Node then exits with code 13): bound it.
    console.error(`closing ${contenders[c].name} …`);
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([contenders[c].close(), new Promise<void>((resolve) => (timer = setTimeout(resolve, 3000)))]);
    clearTimeout(timer);
  }
  return rows;
}

/** A summary's spread: (max − min) ÷ median and (q3 − q1) ÷ median, in percent. */
function spread(s: Summary): string {
  return `${((s.max - s.min) / s.median * 100).toFixed(0)}% (range), ${
    ((s.q3 - s.q1) / s.median * 100).toFixed(0)
  }% (IQR)`;
}

const argv = (globalThis as { process?: { argv: string[] } }).process?.argv ?? [];
if (import.meta.main ?? argv[1]?.endsWith("pool_bench.ts")) {
  const rounds = Number(argv.slice(2).find((a) => /^\d+$/.test(a)) ?? 5);
  const warmup = Number(argv.find((a) => a.startsWith("--warmup="))?.slice(9) ?? 1);
  const only = argv.find((a) => a.startsWith("--only="))?.slice(7).split(",").filter((s) => s !== "") ?? [];
  const processes = Number(argv.find((a) => a.startsWith("--processes="))?.slice(12) ?? 0);
  const options = { warmup, gc: argv.includes("--gc"), only };
  const rows = processes > 0 ? benchPoolsInProcesses(rounds, processes, options) : await benchPools(rounds, options);
  const filchRow = rows.find((r) => r.name === "filch");
  for (const row of rows) {
    if (argv.includes("--json")) console.log(JSON.stringify(row));
    else if (row.error && row.samples === undefined) {
      console.log(`${row.runtime.padEnd(14)} ${row.name.padEnd(22)} did not run: ${row.error}`);
    } else {
      console.log(
        `${row.runtime.padEnd(14)} ${row.name.padEnd(22)} ${format(row.tasksPerSecond, 0).padEnd(28)} tasks/s  ` +
          `round trip ${format(row.roundTripMicros, 1)} µs  filch/this ${
            filchRow === undefined ? "n/a" : (filchRow.tasksPerSecond.median / row.tasksPerSecond.median).toFixed(2)
          }  spread ${spread(row.tasksPerSecond)}`,
      );
    }
  }
  // Stray handles of peers must not keep the process up.
  (globalThis as { process?: { exit(code: number): void } }).process?.exit(0);
}
