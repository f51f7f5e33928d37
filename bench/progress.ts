/**
 * What progress costs (issue 51, lib/progress/): one report inside a task, and the throughput of tasks that
 * never report, submitted with a handler against without one.
 *
 * 1. A report's cost, on the worker: a task reports 200k times in a tight loop and times itself (the loop's
 *    own cost subtracted). Arms, alternating which goes first each round: numbers with a handler (the
 *    fast path: a float64 into the cell; after the first, each replaces an unread value), small objects
 *    with a handler (through the codec), and numbers without a handler (the no-op). Goal: ≤ 1 µs.
 * 2. Tasks that never report: bursts of 50k tiny tasks (`add`) on one pool of 2 workers through
 *    `pool.with({})` and through `pool.with({ onProgress })`, alternating, each round's ratio with ÷
 *    without. Goal: no slower (what a handler adds is one flag bit, one cell reset at placement and one
 *    read of an empty cell at settle).
 *
 * Medians with their 95% interval (bench/_stats.ts), over the rounds.
 *
 * Run: `deno run -A bench/progress.ts`, `bun bench/progress.ts`, `node bench/progress.ts`; a number sets
 * the rounds (default 15); `--json` prints one JSON line.
 */
import { Pool } from "../lib/pool.ts";
import { interleaved, intervalText, runtimeName, summarize } from "./_stats.ts";
import type * as tasks from "./progress_tasks.ts";

const args = typeof process !== "undefined" ? process.argv.slice(2) : [];
const json = args.includes("--json");
const rounds = Math.max(15, Number(args.find((a) => /^\d+$/.test(a)) ?? 15));
const REPORTS = 200_000;
const N = 50_000;

const pool = await Pool.create<typeof tasks>(new URL("./progress_tasks.ts", import.meta.url), { workers: 2 });
try {
  let delivered = 0;
  const withHandler = pool.with<number>({ onProgress: () => delivered++ });
  const without = pool.with({});

  // 1. A report's cost.
  const numberWith = () => withHandler.run("reportLoop", REPORTS, "number");
  const objectWith = () => withHandler.run("reportLoop", REPORTS, "object");
  const numberWithout = () => without.run("reportLoop", REPORTS, "number");
  for (let k = 0; k < 3; k++) await numberWith(), await objectWith(), await numberWithout();
  const cost: Record<string, number[]> = { number: [], object: [], noHandler: [] };
  const arms: [string, () => Promise<number>][] = [
    ["number", numberWith],
    ["object", objectWith],
    ["noHandler", numberWithout],
  ];
  for (let r = 0; r < rounds; r++) {
    for (let k = 0; k < arms.length; k++) {
      const [name, measure] = arms[(r + k) % arms.length];
      cost[name].push(await measure());
    }
  }

  // 2. Throughput of tasks that never report.
  const burst = async (runner: typeof without): Promise<number> => {
    const t0 = performance.now();
    const all = new Array<Promise<number>>(N);
    for (let i = 0; i < N; i++) all[i] = runner.run("add", i, 1);
    const results = await Promise.all(all);
    for (let i = 0; i < N; i++) {
      if (results[i] !== i + 1) throw new Error("Cannot trust the benchmark as a result was wrong");
    }
    return N / ((performance.now() - t0) / 1000);
  };
  await burst(without), await burst(withHandler);
  const [rateWithout, rateWith] = await interleaved(rounds, () => burst(without), () => burst(withHandler));
  const ratios = rateWith.map((v, i) => v / rateWithout[i]);

  const result = {
    runtime: runtimeName(),
    rounds,
    reportNs: Object.fromEntries(Object.entries(cost).map(([k, v]) => [k, summarize(v).median])),
    reportNsInterval: Object.fromEntries(Object.entries(cost).map(([k, v]) => [k, intervalText(v)])),
    tasksPerSecWithout: summarize(rateWithout).median,
    tasksPerSecWith: summarize(rateWith).median,
    ratio: summarize(ratios).median,
    ratioInterval: intervalText(ratios, 3),
    delivered,
  };
  if (json) {
    console.log(JSON.stringify(result));
  } else {
    console.log(`progress on ${result.runtime}, ${rounds} rounds (medians, 95% interval of the median)`);
    for (const [name, v] of Object.entries(cost)) {
      console.log(`  one report, ${name}: ${summarize(v).median.toFixed(1)} ns (${intervalText(v)})`);
    }
    console.log(
      `  tasks that never report: ${result.tasksPerSecWithout.toFixed(0)}/s without a handler, ${
        result.tasksPerSecWith.toFixed(0)
      }/s with one; with ÷ without ${result.ratio.toFixed(3)} (${result.ratioInterval})`,
    );
  }
} finally {
  await pool.terminate();
}
