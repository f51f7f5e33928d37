/**
 * Streaming with `pool.map`: memory over 10M inputs (heap sampled every million results: flat means the
 * window, not the input count, bounds it), and throughput against the same tasks submitted with `run` in
 * batches of `concurrency` awaited with Promise.all, interleaved in one process (medians with ranges).
 *
 * Run: `deno run -A bench/map_stream.ts`, `bun bench/map_stream.ts`, `node bench/map_stream.ts`; `--json`
 * prints one JSON line (bench/all.ts). `--inputs N` changes the 10M.
 */
import { Pool } from "../lib/pool.ts";
import { interleaved, summarize, type Summary } from "./_stats.ts";
import type * as tasks from "./tasks.ts";

const runtime = "Deno" in globalThis ? "deno" : "Bun" in globalThis ? "bun" : "node";
const args = typeof process !== "undefined" ? process.argv.slice(2) : [];
const json = args.includes("--json");
const inputsAt = args.indexOf("--inputs");
const INPUTS = inputsAt >= 0 ? Number(args[inputsAt + 1]) : 10_000_000;
const CONCURRENCY = 256;
const ROUND = 200_000;
const ROUNDS = 5;

/** The heap in use now, MiB (after a collection where the runtime lets us ask for one). */
function heapMiB(): number {
  const gc = (globalThis as { gc?: () => void }).gc ??
    (globalThis as { Bun?: { gc(force: boolean): void } }).Bun?.gc.bind(null, true);
  gc?.();
  const usage = (globalThis as { process?: { memoryUsage(): { heapUsed: number } } }).process!.memoryUsage();
  return usage.heapUsed / 2 ** 20;
}

function* counting(n: number): Generator<number> {
  for (let i = 0; i < n; i++) yield i;
}

const pool = await Pool.create<typeof tasks>(new URL("./tasks.ts", import.meta.url), { workers: 2 });
try {
  // Throughput: map against batched run, interleaved, after a warm-up of each.
  const viaMap = async () => {
    const t0 = performance.now();
    let sum = 0;
    for await (const v of pool.map("inc", counting(ROUND), { concurrency: CONCURRENCY })) sum += v;
    if (sum !== (ROUND * (ROUND + 1)) / 2) throw new Error("Cannot trust the benchmark as a map sum is wrong");
    return ROUND / ((performance.now() - t0) / 1000);
  };
  const viaRun = async () => {
    const t0 = performance.now();
    let sum = 0;
    for (let i = 0; i < ROUND; i += CONCURRENCY) {
      const batch: Promise<number>[] = [];
      for (let j = i; j < Math.min(ROUND, i + CONCURRENCY); j++) batch.push(pool.run("inc", j));
      for (const v of await Promise.all(batch)) sum += v;
    }
    if (sum !== (ROUND * (ROUND + 1)) / 2) throw new Error("Cannot trust the benchmark as a run sum is wrong");
    return ROUND / ((performance.now() - t0) / 1000);
  };
  await viaMap();
  await viaRun();
  const [mapRates, runRates] = await interleaved(ROUNDS, viaMap, viaRun);
  // Memory: one map over INPUTS inputs, the heap sampled every million results.
  const samples: number[] = [];
  const before = heapMiB();
  let count = 0;
  const t0 = performance.now();
  for await (const v of pool.map("inc", counting(INPUTS), { concurrency: CONCURRENCY })) {
    if (v !== count + 1) throw new Error(`Cannot trust the benchmark as result ${count} is ${v}`);
    if (++count % 1_000_000 === 0) samples.push(heapMiB());
  }
  const seconds = (performance.now() - t0) / 1000;
  const row = {
    runtime,
    inputs: INPUTS,
    concurrency: CONCURRENCY,
    mapPerSecond: summarize(mapRates) as Summary,
    runPerSecond: summarize(runRates) as Summary,
    heapBeforeMiB: before,
    heapSamplesMiB: samples,
    seconds,
  };
  if (json) console.log(JSON.stringify(row));
  else {
    console.log(
      `${runtime}: map ${Math.round(row.mapPerSecond.median)} tasks/s vs batched run ${
        Math.round(row.runPerSecond.median)
      }`,
    );
    console.log(
      `heap before ${before.toFixed(1)} MiB; every 1M results: ${samples.map((s) => s.toFixed(1)).join(", ")} MiB (${
        seconds.toFixed(1)
      } s)`,
    );
  }
} finally {
  await pool.close();
}
