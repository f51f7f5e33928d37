/**
 * What `metrics: true` costs: bursts of 100k tiny tasks (`add`) on pools of 2 workers with and without
 * metrics, interleaved in one process (no two pools run at once); median tasks/s of each and the ratio per
 * round. Goal: recording costs at most 5% of the tiny-task throughput.
 *
 * Each round creates three pools afresh, in a rotating order: one without metrics (A), one with them (B)
 * and a second one without (A'), and measures each one's second burst (the first warms its workers up).
 * B ÷ A is the cost; A' ÷ A is the control, what two identical pools differ by on this machine in the same
 * run: a cost is told apart from noise only if B ÷ A sits below the control's spread. Fresh pools every
 * round, because on this 2-core machine two identical pools in one process differed by up to 30% in
 * throughput, steadily over their lives (a Deno A/A run, 2026-11-23), which a ratio of one pair takes for
 * the cost of metrics.
 *
 * Run: `deno run -A bench/metrics_cost.ts`, `bun bench/metrics_cost.ts`, `node bench/metrics_cost.ts`;
 * `--json` prints one JSON line (bench/all.ts); a number sets the rounds (default 30); `--workers=N` the
 * workers of every pool (default 2).
 */
import { Pool } from "../lib/pool.ts";
import { summarize, type Summary } from "./_stats.ts";
import type * as tasks from "./tasks.ts";

const runtime = "Deno" in globalThis ? "deno" : "Bun" in globalThis ? "bun" : "node";
const args = typeof process !== "undefined" ? process.argv.slice(2) : [];
const json = args.includes("--json");
const rounds = Number(args.find((a) => /^\d+$/.test(a)) ?? 30);
const workers = Number(args.find((a) => a.startsWith("--workers="))?.slice(10) ?? 2);
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
  const pool = await Pool.create<typeof tasks>(url, { workers, metrics });
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

const arms: [string, () => Promise<number>][] = [
  ["without", () => fresh(false)],
  ["with", () => fresh(true)],
  ["control", () => fresh(false)],
];
const samples = new Map<string, number[]>(arms.map(([name]) => [name, []]));
for (let r = 0; r < rounds; r++) {
  // Each arm goes first, second and third equally often: none always follows another's warm-up.
  for (let k = 0; k < arms.length; k++) {
    const [name, measure] = arms[(r + k) % arms.length];
    samples.get(name)!.push(await measure());
  }
}
const off = samples.get("without")!;
const on = samples.get("with")!;
const control = samples.get("control")!;
const row = {
  runtime,
  without: summarize(off),
  with: summarize(on),
  ratio: summarize(on.map((v, i) => v / off[i])),
  control: summarize(control.map((v, i) => v / off[i])),
  recorded,
};
if (json) console.log(JSON.stringify(row));
else {
  const spread = (s: Summary) =>
    `median ${s.median.toFixed(3)}, middle half ${s.q1.toFixed(3)}–${s.q3.toFixed(3)}, range ${s.min.toFixed(3)}–${
      s.max.toFixed(3)
    }`;
  console.log(
    `${runtime}, ${rounds} rounds: without ${Math.round(row.without.median)} tasks/s, with ${
      Math.round(row.with.median)
    }; with ÷ without: ${spread(row.ratio)}; control (without ÷ without): ${spread(row.control)}; ` +
      `${row.recorded} tasks recorded`,
  );
}
