/**
 * Fork-join against the runtime's own sort (issue 31): `TypedArray.prototype.sort`, the call a user makes
 * instead, against two parallel sorts of `examples/sort/tasks.ts` on a pool of 2 workers, for 10M int32 and
 * 10M float64 in SharedArrayBuffers:
 * - "merge", `sortParallel` with `native` 1: the runtime's sort on pieces of the array on every worker at
 *   once, the pieces merged in parallel with `join`;
 * - "split", `sortBySplit`: the array split by value around a sampled pivot (on both workers at once), and
 *   the runtime's sort on each part, with no merge;
 * - "bucket", `sortByBuckets`: the array scattered into buckets of about `--bucket` values by value (both
 *   workers counting and scattering at once), and the runtime's sort on each bucket, a share a worker;
 * - "bucket1": the same bucket sort on the main thread alone (one part), to tell what the second worker
 *   adds from what sorting cache-sized buckets saves.
 *
 * Each element type gets a pool of its own (see below). Each round sorts the same input all five ways, in
 * an order rotated from round to round (this machine is shared and noisy: the ratios within one round are
 * what is compared); the input is copied in untimed before each sort, each pool result is checked against
 * the native one, and the pool is warmed up first. Printed per element type and parallel sort: the median
 * of the ratio native ms ÷ pool ms with its range and 95% interval (`_stats.ts` medianInterval), and each
 * side's median ms.
 *
 * Run: `node bench/experiments/sort_native.ts`, `deno run -A …`, `bun …`
 * (`--rounds 15 --n 10000000 --workers 2 --pieces 2 --bucket 40000`: pieces per worker, the leaf length
 * being n ÷ (workers × pieces); the bucket sort's bucket length).
 *
 * @module
 */
import process from "node:process";
import { Pool } from "../../mod.ts";
import * as tasks from "../../examples/sort/tasks.ts";
import { format, medianInterval, runtimeName, summarize } from "../_stats.ts";

function option(name: string, fallback: number): number {
  const args = process.argv.slice(2);
  const at = args.indexOf(`--${name}`);
  return at >= 0 && at + 1 < args.length ? Number(args[at + 1]) : fallback;
}

const rounds = option("rounds", 15);
const n = option("n", 10_000_000);
const workers = option("workers", 2);
const pieces = option("pieces", 2);
const leaf = Math.ceil(n / (workers * pieces));
// The split's parts: one a worker (a tenth more than an even share, so that a sampled pivot a little off
// the median does not split a part again).
const splitLeaf = Math.ceil((1.1 * n) / workers);
// The bucket sort's bucket: about this many values.
const bucketLength = option("bucket", 40_000);

type Kind = { name: string; make: (length: number) => tasks.Sortable; fill: (a: tasks.Sortable) => void };
const KINDS: Kind[] = [
  {
    name: "int32",
    make: (length) => new Int32Array(new SharedArrayBuffer(length * 4)),
    fill: (a) => tasks.fillRandom(a as Int32Array, 20261126),
  },
  {
    name: "float64",
    make: (length) => new Float64Array(new SharedArrayBuffer(length * 8)),
    fill: (a) => {
      // Pseudo-random doubles from the same xorshift (no NaN: a sort's order for NaN is not a number's).
      const ints = new Int32Array(a.length);
      tasks.fillRandom(ints, 20261126);
      for (let i = 0; i < a.length; i++) a[i] = ints[i] / 65_536;
    },
  },
];

console.log(
  `sort of ${n.toLocaleString("en-US")} elements: the runtime's TypedArray.prototype.sort against ` +
    `sortParallel (native leaves of ${leaf.toLocaleString("en-US")}), sortBySplit and sortByBuckets (buckets of ` +
    `${bucketLength.toLocaleString("en-US")}) on ${workers} workers, and sortByBuckets on the main thread; ` +
    `${runtimeName()}, ${rounds} rounds`,
);
for (const kind of KINDS) {
  // A pool of its own per element type: its workers' merge then only ever sees one type of array (a merge
  // that has seen both runs 2–3× slower on Bun, checked: JavaScriptCore's element accesses go polymorphic).
  await using pool = await Pool.create<typeof tasks>(new URL("../../examples/sort/tasks.ts", import.meta.url), {
    workers,
  });
  const input = kind.make(n);
  kind.fill(input);
  const native = kind.make(n);
  const data = kind.make(n);
  const scratch = kind.make(n);
  const sortNative = () => {
    native.set(input);
    const t = performance.now();
    native.sort();
    return Promise.resolve(performance.now() - t);
  };
  /** A sort of `data` from a fresh copy of the input, timed. */
  const timed = async (sort: () => unknown) => {
    data.set(input);
    const t = performance.now();
    await sort();
    return performance.now() - t;
  };
  // The contenders after the native sort: name, what it is (for the check's message), and the sort.
  const contenders: [string, string, () => unknown][] = [
    ["merge", "the merge of sorted pieces", () => pool.run("sortParallel", data, scratch, 0, n, 0, leaf, 1)],
    ["split", "the split by value", () => pool.run("sortBySplit", data, scratch, 0, n, splitLeaf)],
    ["bucket", "the bucket sort", () => pool.run("sortByBuckets", data, scratch, 0, n, workers, bucketLength)],
    // The same bucket sort on the main thread alone: how much of its gain is not the second worker's.
    ["bucket1", "the bucket sort on one thread", () => tasks.sortByBuckets(data, scratch, 0, n, 1, bucketLength)],
  ];
  const check = (what: string) => {
    for (let i = 0; i < n; i++) {
      if (!Object.is(data[i], native[i])) {
        throw new Error(`Cannot trust the benchmark as ${what} differs at index ${i}`);
      }
    }
  };
  // Warm-up: each, twice (the JIT, the workers' first sort).
  for (let i = 0; i < 2; i++) {
    await sortNative();
    for (const [, , sort] of contenders) await timed(sort);
  }
  const nativeMs: number[] = [];
  const ms: number[][] = contenders.map(() => []);
  const ratios: number[][] = contenders.map(() => []);
  for (let r = 0; r < rounds; r++) {
    // All in a rotated order (each in every place as often over as many rounds as there are sorts).
    const sorts = contenders.length + 1;
    const times: number[] = new Array(sorts).fill(0);
    for (let k = 0; k < sorts; k++) {
      const which = (r + k) % sorts;
      if (which === 0) times[0] = await sortNative();
      else {
        const [, what, sort] = contenders[which - 1];
        times[which] = await timed(sort);
        check(what);
      }
    }
    nativeMs.push(times[0]);
    contenders.forEach((_, c) => {
      ms[c].push(times[c + 1]);
      ratios[c].push(times[0] / times[c + 1]);
    });
  }
  contenders.forEach(([what], c) => {
    const interval = medianInterval(ratios[c]);
    console.log(
      `${kind.name.padEnd(8)} ${what.padEnd(7)} native ÷ it ${format(summarize(ratios[c]), 2)}${
        interval ? `, 95% interval ${interval[0].toFixed(2)}–${interval[1].toFixed(2)}` : ""
      }; native ${format(summarize(nativeMs), 0)} ms, it ${format(summarize(ms[c]), 0)} ms`,
    );
  });
}
