/**
 * A batch in one call: 100k tiny tasks (`add`) submitted with `runMany` against the same tasks with
 * `run` each, awaited with `Promise.all`, on one pool of 2 workers, interleaved in one process; median
 * tasks/s of each and the per-round ratio.
 *
 * Run: `deno run -A bench/batch_bench.ts`, `bun bench/batch_bench.ts`, `node bench/batch_bench.ts`;
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
const argsList: [number, number][] = Array.from({ length: N }, (_, i) => [i, 1]);

function check(results: number[]): void {
  for (let i = 0; i < N; i++) {
    if (results[i] !== i + 1) throw new Error("Cannot trust the benchmark as a result was wrong");
  }
}

const pool = await Pool.create<typeof tasks>(new URL("./tasks.ts", import.meta.url), { workers: 2 });
try {
  const each = async () => {
    const t0 = performance.now();
    const all = new Array<Promise<number>>(N);
    for (let i = 0; i < N; i++) all[i] = pool.run("add", i, 1);
    check(await Promise.all(all));
    return N / ((performance.now() - t0) / 1000);
  };
  const batch = async () => {
    const t0 = performance.now();
    check(await pool.runMany("add", argsList));
    return N / ((performance.now() - t0) / 1000);
  };
  await each();
  await batch();
  const [eachRates, batchRates] = await interleaved(rounds, each, batch);
  const row = {
    runtime,
    run: summarize(eachRates),
    runMany: summarize(batchRates),
    ratio: summarize(batchRates.map((v, i) => v / eachRates[i])),
  };
  if (json) console.log(JSON.stringify(row));
  else {
    console.log(
      `${runtime}: run ${Math.round(row.run.median)} tasks/s, runMany ${Math.round(row.runMany.median)}; ` +
        `runMany ÷ run per round: median ${row.ratio.median.toFixed(3)} (${row.ratio.min.toFixed(3)}–${
          row.ratio.max.toFixed(3)
        })`,
    );
  }
} finally {
  await pool.close();
}
