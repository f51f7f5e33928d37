/**
 * What `metrics: true` costs: bursts of 100k tiny tasks (`add`) on a pool of 2 workers without metrics and
 * on one with them, interleaved in one process (the two pools never run at once); median tasks/s of each
 * and the ratio. Goal: recording costs at most 5% of the tiny-task throughput.
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
const plain = await Pool.create<typeof tasks>(url, { workers: 2 });
const measured = await Pool.create<typeof tasks>(url, { workers: 2, metrics: true });
try {
  await burst(plain);
  await burst(measured);
  const [off, on] = await interleaved(rounds, () => burst(plain), () => burst(measured));
  const ratios = on.map((v, i) => v / off[i]);
  const row = {
    runtime,
    without: summarize(off),
    with: summarize(on),
    ratio: summarize(ratios),
    recorded: measured.stats().metrics!.runTime.count,
  };
  if (json) console.log(JSON.stringify(row));
  else {
    console.log(
      `${runtime}: without ${Math.round(row.without.median)} tasks/s, with ${Math.round(row.with.median)}; ` +
        `with ÷ without per round: median ${row.ratio.median.toFixed(3)} (${row.ratio.min.toFixed(3)}–${
          row.ratio.max.toFixed(3)
        }); ${row.recorded} tasks recorded`,
    );
  }
} finally {
  await plain.close();
  await measured.close();
}
