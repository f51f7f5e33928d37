/**
 * Tiny-task throughput of the checkout in the working directory, for `bench/revisions.ts`, which runs a
 * command in two checkouts: this file imports `lib/pool.ts` and `bench/tasks.ts` of the working directory,
 * so the same script measures an old revision that does not have it. 2 workers, 7 bursts of 50,000 `add`
 * through `pool.run`; prints the median of the last 6 as one JSON line.
 *
 * Run: `node bench/revisions.ts --before=DIR --rounds=15 -- node $PWD/bench/experiments/checkout_burst.ts`
 * (an absolute path: the command runs in each checkout).
 */
import process from "node:process";

const root = process.cwd();
const { Pool } = await import(`${root}/lib/pool.ts`);
const pool = await Pool.create(new URL(`file://${root}/bench/tasks.ts`), { workers: 2 });
const N = 50_000;
const rates: number[] = [];
for (let b = 0; b < 7; b++) {
  const t0 = performance.now();
  const all = new Array<Promise<number>>(N);
  for (let i = 0; i < N; i++) all[i] = pool.run("add", i, 1);
  const results = await Promise.all(all);
  if (results[N - 1] !== N) throw new Error("Cannot trust the benchmark as a result was wrong");
  if (b > 0) rates.push(N / ((performance.now() - t0) / 1000));
}
await pool.terminate();
rates.sort((a, b) => a - b);
console.log(JSON.stringify({ name: "burst", tasksPerSec: { median: (rates[2] + rates[3]) / 2 } }));
