/**
 * Parallel mergesort of 10M int32 in a SharedArrayBuffer on a pool of 2 workers, against the same
 * mergesort run sequentially on the main thread; then the call a user makes instead, the runtime's own
 * `Int32Array.prototype.sort`, against the pool running that same sort on a piece per worker and merging
 * the pieces in parallel (`sortParallel` with `native` 1), splitting the array by value around a sampled
 * pivot and running that sort on both parts at once (`sortBySplit`), and scattering it into buckets by value
 * on both workers at once and running that sort on the buckets, a share a worker (`sortByBuckets`).
 *
 * Run: `node examples/sort/main.ts`, `deno run -A examples/sort/main.ts` or `bun examples/sort/main.ts`.
 * Options: `--n=10000000 --cutoff=32768 --workers=2 --rounds=1`.
 *
 * @module
 */
import { Pool } from "../../mod.ts";
import { median, option, printTimes, runtimeName, shares, timed, type WorkerShare } from "../_demo.ts";
import * as tasks from "./tasks.ts";

const n = option("n", 10_000_000);
const cutoff = option("cutoff", 32_768);
const workers = option("workers", 2);
const rounds = option("rounds", 1);
const SEED = 20261121;
/** The bucket sort's bucket: about this many values (a piece that fits a core's cache). */
const BUCKET = 40_000;

const shared = (length: number) => new Int32Array(new SharedArrayBuffer(length * 4));
const data = shared(n);
const scratch = shared(n);
const expected = new Int32Array(n);
tasks.fillRandom(expected, SEED);
console.log(`mergesort of ${n.toLocaleString("en-US")} int32 in a SharedArrayBuffer; ${runtimeName()}`);

// Warm up both sides on a smaller array.
const small = Math.min(n, 1_000_000);
await using pool = await Pool.create<typeof tasks>(new URL("./tasks.ts", import.meta.url), { workers });
{
  const a = shared(small);
  const b = shared(small);
  tasks.fillRandom(a, 7);
  tasks.sortSequential(a, b);
  tasks.fillRandom(a, 7);
  await pool.run("sortParallel", a, b, 0, small, 0, cutoff);
  tasks.fillRandom(a, 7);
  await pool.run("sortParallel", a, b, 0, small, 0, Math.ceil(small / (2 * workers)), 1);
  tasks.fillRandom(a, 7);
  await pool.run("sortBySplit", a, b, 0, small, Math.ceil((1.1 * small) / workers));
  tasks.fillRandom(a, 7);
  await pool.run("sortByBuckets", a, b, 0, small, workers, BUCKET);
}

const sequential: number[] = [];
for (let r = 0; r < rounds; r++) {
  tasks.fillRandom(data, SEED);
  sequential.push((await timed(() => tasks.sortSequential(data, scratch))).ms);
}
expected.set(data);
const native = new Int32Array(n);
tasks.fillRandom(native, SEED);
const nativeMs = (await timed(() => native.sort())).ms;

const pooled: number[] = [];
let perWorker: WorkerShare[] = [];
for (let r = 0; r < rounds; r++) {
  tasks.fillRandom(data, SEED);
  const before = pool.stats();
  pooled.push((await timed(() => pool.run("sortParallel", data, scratch, 0, n, 0, cutoff))).ms);
  perWorker = shares(before, pool.stats());
  for (let i = 0; i < n; i++) {
    if (data[i] !== expected[i] || native[i] !== expected[i]) {
      throw new Error(`Cannot trust the demo as the sorts differ at index ${i}`);
    }
  }
}
console.log(`sorted: ${data[0]} … ${data[n - 1]} (pool, sequential and native sorts agree on every element)`);
printTimes(median(sequential), median(pooled), workers, perWorker);

// Against the runtime's own sort: the same sort on a piece per worker, the pieces merged in parallel.
const leaf = Math.ceil(n / (2 * workers));
const withNative: number[] = [];
for (let r = 0; r < rounds; r++) {
  tasks.fillRandom(data, SEED);
  withNative.push((await timed(() => pool.run("sortParallel", data, scratch, 0, n, 0, leaf, 1))).ms);
  for (let i = 0; i < n; i++) {
    if (data[i] !== expected[i]) throw new Error(`Cannot trust the demo as the sorts differ at index ${i}`);
  }
}
// And split by value instead: around a sampled pivot, both halves at once, then the runtime's sort on each part.
const splitLeaf = Math.ceil((1.1 * n) / workers);
const bySplit: number[] = [];
for (let r = 0; r < rounds; r++) {
  tasks.fillRandom(data, SEED);
  bySplit.push((await timed(() => pool.run("sortBySplit", data, scratch, 0, n, splitLeaf))).ms);
  for (let i = 0; i < n; i++) {
    if (data[i] !== expected[i]) throw new Error(`Cannot trust the demo as the sorts differ at index ${i}`);
  }
}
// And by buckets: scattered by value on both workers at once, then the runtime's sort on each bucket.
const byBuckets: number[] = [];
for (let r = 0; r < rounds; r++) {
  tasks.fillRandom(data, SEED);
  byBuckets.push((await timed(() => pool.run("sortByBuckets", data, scratch, 0, n, workers, BUCKET))).ms);
  for (let i = 0; i < n; i++) {
    if (data[i] !== expected[i]) throw new Error(`Cannot trust the demo as the sorts differ at index ${i}`);
  }
}
const against = (ms: number) => `${ms.toFixed(1)} ms (${(nativeMs / ms).toFixed(2)}×)`;
console.log(
  `the runtime's Int32Array.prototype.sort: ${nativeMs.toFixed(1)} ms; the pool running it on ${workers} pieces ` +
    `at once and merging them: ${against(median(withNative))}; splitting by value and sorting the parts at ` +
    `once: ${against(median(bySplit))}; scattering into buckets and sorting them, a share a worker: ${
      against(median(byBuckets))
    }`,
);
