/**
 * Fork-join benchmark, on the runtime that runs it:
 * 1. join overhead when nothing is stolen: on a pool of 1 worker, `fib(n)` with a join at every level
 *    against the plain recursive fib, both timed on the worker; ns per join = (t_join − t_plain) / joins.
 *    The same on the main thread, where `join` has no pool and runs both sides inline, for reference;
 * 2. speedup of a pool of 2 workers over the sequential program on the main thread, for the four demos of
 *    `examples/` (fib(35) with a cutoff, mergesort of 10M int32, Mandelbrot 800×600, the unbalanced tree),
 *    with the tasks stolen per run. Each round runs the sequential program twice, then the pool twice: the
 *    first of each pair is "cold" (right after the other side; the workers slept through the sequential
 *    runs), the second "warm". Input is prepared untimed before every run. Every figure is a median with
 *    its range; each pool result is checked against the sequential one. Before its rounds, each demo runs
 *    both sides untimed at full size, at least 3 times and for at least a second (JIT warm-up).
 *
 * Run: `node bench/forkjoin_bench.ts`, `deno run -A bench/forkjoin_bench.ts`, `bun bench/forkjoin_bench.ts`
 * (`--json` for machine-readable lines; a number sets the rounds, default 5). `bench/forkjoin_chart.ts`
 * runs it on every runtime and draws the chart.
 */
import { readFileSync } from "node:fs";
import { loadavg } from "node:os";
import process from "node:process";
import { Pool } from "../lib/pool.ts";
import { format, runtimeName, summarize, type Summary } from "./_stats.ts";
import { demos } from "./_demos.ts";
import * as tasks from "./forkjoin_tasks.ts";

const args = (globalThis as { Deno?: { args: string[] } }).Deno?.args ??
  (globalThis as unknown as { process: { argv: string[] } }).process.argv.slice(2);
const json = args.includes("--json");
const rounds = Number(args.find((a) => /^\d+$/.test(a)) ?? 5);

/** One line of the join-overhead result. */
export interface JoinOverheadRow {
  kind: "join-overhead";
  runtime: string;
  /** Where fib ran: "pool of 1 worker" or "main thread, no pool (inline)". */
  where: string;
  n: number;
  joins: number;
  plainMs: Summary;
  joinMs: Summary;
  nsPerJoin: Summary;
  loadAverage: number;
}

/** One line of the speedup result. */
export interface SpeedupRow {
  kind: "speedup";
  runtime: string;
  demo: string;
  workers: number;
  /** Warm runs: each right after an untimed run of the same side (workers awake, caches and clocks up). */
  sequentialMs: Summary;
  poolMs: Summary;
  /** Median sequential ÷ median pool, warm. */
  speedup: number;
  /** Cold runs: each side's first run after the other side ran (the pool's workers asleep meanwhile). */
  coldSequentialMs: Summary;
  coldPoolMs: Summary;
  /** Median cold sequential ÷ median cold pool. */
  coldSpeedup: number;
  /** Tasks stolen per pool run, and the successful steal calls that took them. */
  stolen: Summary;
  steals: Summary;
  /** Tasks stolen per worker in the last run. */
  stolenPerWorker: number[];
  loadAverage: number;
  /** Cores' worth of CPU other processes used while this demo ran (Linux only): 0 on a quiet machine. */
  otherCores: number | undefined;
}

/**
 * CPU milliseconds the whole machine and this process have used so far (Linux: /proc/stat, at 100 ticks a
 * second; elsewhere undefined): their difference over a measurement is what other processes took.
 */
function cpuNow(): { machineMs: number; ownMs: number } | undefined {
  try {
    const ticks = readFileSync("/proc/stat", "utf8").split("\n")[0].trim().split(/\s+/).slice(1).map(Number);
    const busy = ticks.reduce((a, b) => a + b, 0) - ticks[3] - ticks[4];
    const own = process.cpuUsage();
    return { machineMs: busy * 10, ownMs: (own.user + own.system) / 1000 };
  } catch (error) {
    if (!json) console.error(`(no CPU accounting here: ${String(error)})`);
    return undefined;
  }
}

/** Cores' worth of CPU that other processes used between two `cpuNow()` readings `wallMs` apart. */
function otherCores(
  before: ReturnType<typeof cpuNow>,
  after: ReturnType<typeof cpuNow>,
  wallMs: number,
): number | undefined {
  if (before === undefined || after === undefined) return undefined;
  const other = after.machineMs - before.machineMs - (after.ownMs - before.ownMs);
  return Math.max(0, other / wallMs);
}

function emit(row: JoinOverheadRow | SpeedupRow): void {
  if (json) console.log(JSON.stringify(row));
}

function log(text: string): void {
  if (!json) console.log(text);
  else console.error(text);
}

const runtime = runtimeName();
const url = new URL("./forkjoin_tasks.ts", import.meta.url);

// ---- 1. join overhead ----
{
  const n = 25;
  const joins = tasks.fibJoins(n, 1);
  const pool = await Pool.create<typeof tasks>(url, { workers: 1 });
  try {
    for (let i = 0; i < 3; i++) {
      await pool.run("timeJoinFib", n);
      await pool.run("timePlainFib", n);
    }
    const plain: number[] = [];
    const joined: number[] = [];
    const perJoin: number[] = [];
    const inlinePlain: number[] = [];
    const inlineJoined: number[] = [];
    const inlinePerJoin: number[] = [];
    for (let i = 0; i < 3; i++) {
      tasks.timeJoinFib(n);
      tasks.timePlainFib(n);
    }
    for (let r = 0; r < rounds * 2; r++) {
      const [p, pv] = await pool.run("timePlainFib", n);
      const [j, jv] = await pool.run("timeJoinFib", n);
      if (pv !== jv) throw new Error(`Cannot trust the benchmark as fib(${n}) gave ${pv} and ${jv}`);
      plain.push(p);
      joined.push(j);
      perJoin.push(((j - p) / joins) * 1e6);
      const [ip] = tasks.timePlainFib(n);
      const [ij] = tasks.timeJoinFib(n);
      inlinePlain.push(ip);
      inlineJoined.push(ij);
      inlinePerJoin.push(((ij - ip) / joins) * 1e6);
    }
    const rows: JoinOverheadRow[] = [
      ["pool of 1 worker", plain, joined, perJoin],
      ["main thread, no pool (inline)", inlinePlain, inlineJoined, inlinePerJoin],
    ].map(([where, p, j, per]) => ({
      kind: "join-overhead",
      runtime,
      where: where as string,
      n,
      joins,
      plainMs: summarize(p as number[]),
      joinMs: summarize(j as number[]),
      nsPerJoin: summarize(per as number[]),
      loadAverage: loadavg()[0],
    }));
    log(`\n${runtime}: join overhead, fib(${n}) with a join at every level (${joins} joins), ${rounds * 2} runs`);
    log("| where | plain fib, ms | fib with joins, ms | ns per join |");
    log("|---|---|---|---|");
    for (const row of rows) {
      emit(row);
      log(`| ${row.where} | ${format(row.plainMs, 2)} | ${format(row.joinMs)} | ${format(row.nsPerJoin, 0)} |`);
    }
  } finally {
    await pool.close();
  }
}

// ---- 2. speedups on 2 workers ----

{
  const workers = 2;
  const pool = await Pool.create<typeof tasks>(url, { workers });
  try {
    log(`\n${runtime}: pool of ${workers} vs the sequential program on the main thread, ${rounds} rounds`);
    log(
      "| demo | sequential, ms | pool, ms | speedup | cold: sequential, ms | cold: pool, ms | cold speedup | tasks stolen (steals) a run | other processes, cores |",
    );
    log("|---|---|---|---|---|---|---|---|---|");
    for (const demo of demos()) {
      await demo.warm(pool);
      // Then full-size runs of both sides, untimed, at least 3 and for at least a second: each worker's JIT
      // must reach its top tier too (on Bun, fib's pool runs kept getting faster for about 15 runs).
      const warmUntil = performance.now() + 1000;
      for (let i = 0; i < 3 || performance.now() < warmUntil; i++) {
        demo.prepare?.("sequential");
        const expected = demo.sequential();
        demo.prepare?.("pool");
        demo.check(expected, await demo.parallel(pool));
      }
      const sequential: number[] = [];
      const pooled: number[] = [];
      const coldSequential: number[] = [];
      const coldPooled: number[] = [];
      const stolen: number[] = [];
      const steals: number[] = [];
      let perWorker: number[] = [];
      const cpuBefore = cpuNow();
      const wallStart = performance.now();
      // Each round runs each side twice in a row: the first run is cold (the other side ran just before,
      // and the pool's workers slept through the sequential run), the second warm. On this VM a thread
      // that starts on an idle core runs slower for a while, so the two differ, most for the short demos.
      for (let r = 0; r < rounds; r++) {
        let expected: unknown;
        for (const times of [coldSequential, sequential]) {
          demo.prepare?.("sequential");
          const start = performance.now();
          expected = demo.sequential();
          times.push(performance.now() - start);
        }
        for (const times of [coldPooled, pooled]) {
          demo.prepare?.("pool");
          const before = pool.stats();
          const start = performance.now();
          const got = await demo.parallel(pool);
          times.push(performance.now() - start);
          const after = pool.stats();
          demo.check(expected, got);
          perWorker = after.workers.map((w, i) => w.stolen - before.workers[i].stolen);
          stolen.push(perWorker.reduce((a, b) => a + b, 0));
          steals.push(
            after.workers.reduce((s, w, i) => s + w.successfulSteals - before.workers[i].successfulSteals, 0),
          );
        }
      }
      const row: SpeedupRow = {
        kind: "speedup",
        runtime,
        demo: demo.name,
        workers,
        sequentialMs: summarize(sequential),
        poolMs: summarize(pooled),
        speedup: summarize(sequential).median / summarize(pooled).median,
        coldSequentialMs: summarize(coldSequential),
        coldPoolMs: summarize(coldPooled),
        coldSpeedup: summarize(coldSequential).median / summarize(coldPooled).median,
        stolen: summarize(stolen),
        steals: summarize(steals),
        stolenPerWorker: perWorker,
        loadAverage: loadavg()[0],
        otherCores: otherCores(cpuBefore, cpuNow(), performance.now() - wallStart),
      };
      emit(row);
      log(
        `| ${row.demo} | ${format(row.sequentialMs)} | ${format(row.poolMs)} | ${row.speedup.toFixed(2)}× | ${
          format(row.coldSequentialMs)
        } | ${format(row.coldPoolMs)} | ${row.coldSpeedup.toFixed(2)}× | ${format(row.stolen, 0)} (${
          format(row.steals, 0)
        }) | ${row.otherCores?.toFixed(2) ?? "?"} |`,
      );
    }
  } finally {
    await pool.close();
  }
}
log(`load average (1 min) at the end: ${loadavg()[0].toFixed(2)}`);
