/**
 * Issue 49's benchmark: an elastic pool (`workers: { min: 1, max: 2 }`, `idleTimeout`) through a burst of
 * CPU tasks and the idle gap after it, against fixed pools of the minimum and of the maximum and against
 * piscina with the same minimum, maximum and idle timeout. Each contender runs in a process of its own
 * (bench/_apart.ts), so that the resident memory it reports is its own; the processes run one after
 * another, the order rotated each round (default 15 rounds; `--rounds=N`). One process:
 *
 * 1. creates its pool and reads the process's RSS;
 * 2. runs a burst of `--tasks` CPU tasks (bench/tasks.ts `work(--units)`) all submitted at once, not counted
 *    (it warms the process up), waits an idle gap as in 3, then runs the same burst again from the pool's
 *    size after idle (an elastic pool at `min` again, growing during the burst): tasks per second;
 * 3. waits an idle gap of 4 × the idle timeout (and, for the elastic pool and piscina, until every thread
 *    above the minimum has retired), collects garbage where the runtime offers it, and reads the RSS;
 * 4. submits one tiny task and times its result: the first result after an idle gap.
 *
 * The figures, per round then as medians with their 95% interval (bench/_stats.ts `medianInterval`):
 * memory after idle, elastic ÷ fixed-min (goal ≤ 1.10); burst throughput, elastic ÷ fixed-max (goal
 * ≥ 0.95); the first result after the gap for the elastic pool, fixed-max and piscina, and the ratios of
 * the elastic pool's to the others'. A goal is MET or NOT MET only where the interval lies wholly on one side
 * of it; otherwise undecided.
 *
 * Run: `npm run bench:elastic`, `deno task bench:elastic`, `bun bench/elastic.ts`; `--quick` for a small
 * check (1 round, a short burst), `--json` for the summary as JSON. Internal: `--only=<contender>` runs one
 * contender's process and prints its row as a JSON line.
 *
 * Threads: the main thread of each process.
 *
 * @module
 */
import process from "node:process";
import { fileURLToPath } from "node:url";
import { Pool } from "../lib/pool.ts";
import { runApart } from "./_apart.ts";
import { withTimeout } from "./_deadline.ts";
import { collectGarbage, medianInterval, runtimeName, summarize } from "./_stats.ts";
import type * as tasks from "./tasks.ts";

const args = process.argv.slice(2);
const quick = args.includes("--quick");

/** The number after `--name=`, or the fallback. */
function option(name: string, fallback: number): number {
  const arg = args.find((a) => a.startsWith(`--${name}=`));
  return arg === undefined ? fallback : Number(arg.slice(name.length + 3));
}

const MIN = 1;
const MAX = 2;
const ROUNDS = option("rounds", quick ? 1 : 15);
const BURST = option("tasks", quick ? 40 : 400);
const UNITS = option("units", quick ? 200 : 1000);
const IDLE_MS = option("idle", quick ? 100 : 250);
const GAP_MS = 4 * IDLE_MS;
const NAMES = ["elastic", "fixed-min", "fixed-max", "piscina"] as const;
type Name = typeof NAMES[number];

/** One process's figures. */
interface Row {
  contender: Name;
  runtime: string;
  rssCreatedMiB: number;
  rssIdleMiB: number;
  burstMs: number;
  tasksPerSecond: number;
  firstResultMs: number;
  /** Threads after the gap (the elastic pool's `current`, piscina's `threads.length`, a fixed pool's size). */
  threadsAfterGap: number;
  /** The elastic pool's counters at the end (started, retired, peak…), else absent. */
  counters?: unknown;
}

/** A contender's pool, as this benchmark drives it. */
interface Contender {
  work(units: number): Promise<number>;
  tiny(): Promise<number>;
  threads(): number;
  /** The elastic pool's counters (`stats().elastic`), else undefined. */
  counters(): unknown;
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const mib = () => process.memoryUsage().rss / 2 ** 20;
const taskModule = new URL("./tasks.ts", import.meta.url);

async function filch(workers: number | { min: number; max: number }): Promise<Contender> {
  // idleTimeout applies only to an elastic pool (Pool.create refuses it with a fixed size).
  const pool = await Pool.create<typeof tasks>(
    taskModule,
    typeof workers === "number" ? { workers } : { workers, idleTimeout: IDLE_MS },
  );
  return {
    work: (units) => pool.run("work", units),
    tiny: () => pool.run("add", 1, 2),
    threads: () => pool.stats().elastic?.current ?? (workers as number),
    counters: () => pool.stats().elastic,
    close: () => pool.close(),
  };
}

async function piscina(): Promise<Contender> {
  const { Piscina } = await import("piscina");
  const pool = new Piscina({
    filename: new URL("./elastic_peer.ts", import.meta.url).href,
    minThreads: MIN,
    maxThreads: MAX,
    idleTimeout: IDLE_MS,
  });
  return {
    work: (units) => pool.run({ units }) as Promise<number>,
    tiny: () => pool.run({ a: 1, b: 2 }) as Promise<number>,
    threads: () => pool.threads.length,
    counters: () => undefined,
    close: () => pool.destroy(),
  };
}

/** One contender's process: steps 1–4 of the module doc; prints its row. */
async function runOne(name: Name): Promise<void> {
  const pool = name === "elastic"
    ? await filch({ min: MIN, max: MAX })
    : name === "fixed-min"
    ? await filch(MIN)
    : name === "fixed-max"
    ? await filch(MAX)
    : await piscina();
  // piscina starts its threads lazily; one tiny task makes every contender's first thread ready.
  if ((await pool.tiny()) !== 3) throw new Error(`${name}: 1 + 2 is not 3`);
  collectGarbage?.();
  const rssCreatedMiB = mib();
  const expected = (await import("./tasks.ts")).work(UNITS);
  const burst = async (): Promise<number> => {
    const start = performance.now();
    const results = await Promise.all(Array.from({ length: BURST }, () => pool.work(UNITS)));
    const ms = performance.now() - start;
    if (results.some((r) => r !== expected)) throw new Error(`${name}: a burst task's result is wrong`);
    return ms;
  };
  // The gap lasts until the threads above the minimum have gone (bounded: a pool that keeps them is measured
  // with them, and says so in threadsAfterGap).
  const gap = async (): Promise<void> => {
    await sleep(GAP_MS);
    const until = performance.now() + 20 * GAP_MS;
    while ((name === "elastic" || name === "piscina") && pool.threads() > MIN && performance.now() < until) {
      await sleep(20);
    }
  };
  // A first burst warms the process up (compiles `work` on every thread, grows the heaps) and is not
  // counted: one burst a process measured that process's warm-up, not the pool (a fixed pool of 2 came out
  // no faster than a pool of 1). The measured burst follows an idle gap, so the elastic pool starts it at
  // its minimum again and grows during it, as after any idle period.
  await burst();
  await gap();
  const burstMs = await burst();
  await gap();
  collectGarbage?.();
  await sleep(20);
  const rssIdleMiB = mib();
  const threadsAfterGap = pool.threads();
  const t0 = performance.now();
  if ((await pool.tiny()) !== 3) throw new Error(`${name}: 1 + 2 is not 3`);
  const firstResultMs = performance.now() - t0;
  const counters = pool.counters();
  await pool.close();
  const row: Row = {
    contender: name,
    runtime: runtimeName(),
    rssCreatedMiB,
    rssIdleMiB,
    burstMs,
    tasksPerSecond: BURST / (burstMs / 1000),
    firstResultMs,
    threadsAfterGap,
    ...(counters === undefined ? {} : { counters }),
  };
  console.log(JSON.stringify(row));
}

/** A median and its interval as `m [lo–hi]`. */
function cell(samples: number[], digits = 2): string {
  if (samples.length === 0) return "n/a";
  const m = summarize(samples).median.toFixed(digits);
  const ci = medianInterval(samples);
  return ci === undefined
    ? `${m} (${samples.length} run${samples.length === 1 ? "" : "s"})`
    : `${m} [${ci[0].toFixed(digits)}–${ci[1].toFixed(digits)}]`;
}

/** MET / NOT MET / undecided: whether the interval lies wholly on the goal's side (`atMost`: ratio ≤ goal). */
function verdict(samples: number[], goal: number, atMost: boolean): string {
  const ci = medianInterval(samples);
  if (ci === undefined) return "undecided (fewer than 6 rounds)";
  const [lo, hi] = ci;
  if (atMost ? hi <= goal : lo >= goal) return "MET";
  if (atMost ? lo > goal : hi < goal) return "NOT MET";
  return "undecided";
}

async function main(): Promise<void> {
  const only = args.find((a) => a.startsWith("--only="))?.slice(7) as Name | undefined;
  if (only !== undefined) {
    await withTimeout(runOne(only), 600_000, `hang: ${only} did not finish within 600 s`);
    return;
  }
  const script = fileURLToPath(import.meta.url);
  const passOn = args.filter((a) => a !== "--json");
  const byRound: Partial<Record<Name, Row>>[] = Array.from({ length: ROUNDS }, () => ({}));
  const errors: string[] = [];
  const load0 = loadAverage();
  runApart<Row>(script, NAMES, ROUNDS, (name) => [...passOn, `--only=${name}`], 600_000, (run) => {
    if (run.error !== undefined) errors.push(`${run.name} (round ${run.pass}): ${run.error}`);
    else byRound[run.pass][run.name as Name] = run.rows[0];
  });
  const load1 = loadAverage();
  const of = (name: Name, key: keyof Row) =>
    byRound.map((r) => r[name]?.[key]).filter((v): v is number => typeof v === "number");
  /** Per-round ratio a ÷ b of `key`, over the rounds where both ran. */
  const ratio = (a: Name, b: Name, key: keyof Row) =>
    byRound.filter((r) => r[a] && r[b]).map((r) => (r[a]![key] as number) / (r[b]![key] as number));
  const memory = ratio("elastic", "fixed-min", "rssIdleMiB");
  const throughput = ratio("elastic", "fixed-max", "tasksPerSecond");
  const firstVsFixed = ratio("elastic", "fixed-max", "firstResultMs");
  const firstVsPiscina = ratio("elastic", "piscina", "firstResultMs");
  const summary = {
    runtime: runtimeName(),
    rounds: ROUNDS,
    burst: { tasks: BURST, units: UNITS },
    idleTimeoutMs: IDLE_MS,
    gapMs: GAP_MS,
    loadAverage: { before: load0, after: load1 },
    contenders: Object.fromEntries(NAMES.map((n) => [n, {
      rssCreatedMiB: of(n, "rssCreatedMiB"),
      rssIdleMiB: of(n, "rssIdleMiB"),
      tasksPerSecond: of(n, "tasksPerSecond"),
      firstResultMs: of(n, "firstResultMs"),
      threadsAfterGap: of(n, "threadsAfterGap"),
    }])),
    ratios: { memory, throughput, firstVsFixed, firstVsPiscina },
    verdicts: { memory: verdict(memory, 1.1, true), throughput: verdict(throughput, 0.95, false) },
    errors,
  };
  if (args.includes("--json")) {
    console.log(JSON.stringify(summary));
  } else {
    console.log(
      `\n${summary.runtime}, ${ROUNDS} rounds, burst ${BURST} × work(${UNITS}), idleTimeout ${IDLE_MS} ms, gap ${GAP_MS} ms, load ${
        load0.join(" ")
      } → ${load1.join(" ")}\n`,
    );
    console.log(
      "| contender | RSS created, MiB | RSS after idle, MiB | burst, tasks/s | first result after gap, ms | threads after gap |",
    );
    console.log("|---|---|---|---|---|---|");
    for (const n of NAMES) {
      console.log(
        `| ${n} | ${cell(of(n, "rssCreatedMiB"), 1)} | ${cell(of(n, "rssIdleMiB"), 1)} | ${
          cell(of(n, "tasksPerSecond"), 0)
        } | ${cell(of(n, "firstResultMs"), 2)} | ${cell(of(n, "threadsAfterGap"), 0)} |`,
      );
    }
    console.log("\n| ratio (per round) | median [95% interval] | goal | verdict |");
    console.log("|---|---|---|---|");
    console.log(
      `| memory after idle, elastic ÷ fixed-min | ${cell(memory, 3)} | ≤ 1.10 | ${summary.verdicts.memory} |`,
    );
    console.log(
      `| burst throughput, elastic ÷ fixed-max | ${cell(throughput, 3)} | ≥ 0.95 | ${summary.verdicts.throughput} |`,
    );
    console.log(`| first result after gap, elastic ÷ fixed-max | ${cell(firstVsFixed, 2)} | | |`);
    console.log(`| first result after gap, elastic ÷ piscina | ${cell(firstVsPiscina, 2)} | | |`);
    for (const e of errors) console.log(`error: ${e}`);
  }
  if (errors.length > 0) process.exitCode = 1;
}

/** The 1-, 5- and 15-minute load averages, from /proc/loadavg where there is one. */
function loadAverage(): string[] {
  try {
    const fs = process.getBuiltinModule?.("node:fs") as typeof import("node:fs") | undefined;
    return fs?.readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3) ?? [];
  } catch {
    return [];
  }
}

await main();
