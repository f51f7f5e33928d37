/**
 * What `metrics: true` costs: bursts of 100k tiny tasks (`add`) on a pool of 2 workers without metrics and
 * on one with them, interleaved in one process (the two pools never run at once); median tasks/s of each
 * and the ratio. Goal: recording costs at most 5% of the tiny-task throughput.
 *
 * Each round creates both pools afresh (in alternating order) and measures each one's second burst (the
 * first warms its workers up). One pair of pools kept for all rounds is not enough: on this 2-core machine
 * two identical pools in one process differed by up to 30% in throughput, steadily over their lives (an A/A
 * run of Deno, 2026-11-23), which a ratio of one pair takes for the cost of metrics.
 *
 * Run: `deno run -A bench/metrics_cost.ts`, `bun bench/metrics_cost.ts`, `node bench/metrics_cost.ts`;
 * `--json` prints one JSON line (bench/all.ts); a number sets the rounds (default 9).
 */
import { Pool } from "../lib/pool.ts";
import { interleaved, summarize } from "./_stats.ts";
import type * as tasks from "./tasks.ts";

const runtime = "Deno" in globalThis ? "deno" : "Bun" in globalThis ? "bun" : "node";
const args = typeof process !== "undefined" ? process.argv.slice(2) : [];
const json = args.includes("--json");
const rounds = Number(args.find((a) => /^\d+$/.test(a)) ?? 9);
const N = 100_000;

async function burst(pool: Pool<typeof tasks>): Promise<number> {
  const t0 = performance.now();
  const all = new Array<Promise<number>>(N);
  for (let i = 0; i < N; i++) all[i] = pool.run("add", i, 1);
  const results = await Promise.all(all);
  for (let i = 0; i < N; i++) {
    if (results[i] !== i + 1) throw new Error("Cannot trust the benchmark as a result was wrong");
  }
  return N / ((performance.now() - t0) / 1000);
}

const url = new URL("./tasks.ts", import.meta.url);
let recorded = 0;

/** A fresh pool's throughput: its second burst. With metrics, checks that every task was recorded. */
async function fresh(metrics: boolean): Promise<number> {
  const pool = await Pool.create<typeof tasks>(url, { workers: 2, metrics });
  try {
    await burst(pool);
    const rate = await burst(pool);
    if (metrics) {
      const count = pool.stats().metrics!.runTime.count;
      if (count !== 2 * N) throw new Error(`Cannot trust the benchmark as ${count} of ${2 * N} tasks were recorded`);
      recorded += count;
    }
    return rate;
  } finally {
    await pool.close();
  }
}

const [off, on] = await interleaved(rounds, () => fresh(false), () => fresh(true));
const ratios = on.map((v, i) => v / off[i]);
const row = { runtime, without: summarize(off), with: summarize(on), ratio: summarize(ratios), recorded };
if (json) console.log(JSON.stringify(row));
else {
  console.log(
    `${runtime}: without ${Math.round(row.without.median)} tasks/s, with ${Math.round(row.with.median)}; ` +
      `with ÷ without per round: median ${row.ratio.median.toFixed(3)} (${row.ratio.min.toFixed(3)}–${
        row.ratio.max.toFixed(3)
      }); ${row.recorded} tasks recorded`,
  );
}
