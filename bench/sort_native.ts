/**
 * Fork-join against the runtime's own sort (issue 31): `TypedArray.prototype.sort`, the call a user makes
 * instead, against two parallel sorts of `examples/sort/tasks.ts` on a pool of 2 workers, for 10M int32 and
 * 10M float64 in SharedArrayBuffers:
 * - "merge", `sortParallel` with `native` 1: the runtime's sort on pieces of the array on every worker at
 *   once, the pieces merged in parallel with `join`;
 * - "split", `sortBySplit`: the array split by value around a sampled pivot (on both workers at once), and
 *   the runtime's sort on each part, with no merge.
 *
 * Each element type gets a pool of its own (see below). Each round sorts the same input all three ways, in
 * an order rotated from round to round (this machine is shared and noisy: the ratios within one round are
 * what is compared); the input is copied in untimed before each sort, each pool result is checked against
 * the native one, and the pool is warmed up first. Printed per element type and parallel sort: the median
 * of the ratio native ms ÷ pool ms with its range and 95% interval (`_stats.ts` medianInterval), and each
 * side's median ms.
 *
 * Run: `node bench/sort_native.ts`, `deno run -A bench/sort_native.ts`, `bun bench/sort_native.ts`
 * (`--rounds 15 --n 10000000 --workers 2 --pieces 2`: pieces per worker, the leaf length being
 * n ÷ (workers × pieces)).
 *
 * @module
 */
import process from "node:process";
import { Pool } from "../mod.ts";
import * as tasks from "../examples/sort/tasks.ts";
import { format, medianInterval, runtimeName, summarize } from "./_stats.ts";

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
    `sortParallel (native leaves) on ${workers} workers (leaf ${
      leaf.toLocaleString("en-US")
    }); ${runtimeName()}, ${rounds} rounds`,
);
for (const kind of KINDS) {
  // A pool of its own per element type: its workers' merge then only ever sees one type of array (a merge
  // that has seen both runs 2–3× slower on Bun, checked: JavaScriptCore's element accesses go polymorphic).
  await using pool = await Pool.create<typeof tasks>(new URL("../examples/sort/tasks.ts", import.meta.url), {
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
    return performance.now() - t;
  };
  const sortPool = async () => {
    data.set(input);
    const t = performance.now();
    await pool.run("sortParallel", data, scratch, 0, n, 0, leaf, 1);
    return performance.now() - t;
  };
  const sortSplit = async () => {
    data.set(input);
    const t = performance.now();
    await pool.run("sortBySplit", data, scratch, 0, n, splitLeaf);
    return performance.now() - t;
  };
  const check = (what: string) => {
    for (let i = 0; i < n; i++) {
      if (data[i] !== native[i]) throw new Error(`Cannot trust the benchmark as ${what} differs at index ${i}`);
    }
  };
  // Warm-up: each, twice (the JIT, the workers' first sort).
  for (let i = 0; i < 2; i++) {
    sortNative();
    await sortPool();
    await sortSplit();
  }
  const ratios: number[] = [];
  const splitRatios: number[] = [];
  const nativeMs: number[] = [];
  const poolMs: number[] = [];
  const splitMs: number[] = [];
  for (let r = 0; r < rounds; r++) {
    // The three in a rotated order (each first, second and last as often).
    const times: number[] = [0, 0, 0];
    for (let k = 0; k < 3; k++) {
      const which = (r + k) % 3;
      if (which === 0) times[0] = sortNative();
      else if (which === 1) {
        times[1] = await sortPool();
        check("the merge of sorted pieces");
      } else {
        times[2] = await sortSplit();
        check("the split by value");
      }
    }
    nativeMs.push(times[0]);
    poolMs.push(times[1]);
    splitMs.push(times[2]);
    ratios.push(times[0] / times[1]);
    splitRatios.push(times[0] / times[2]);
  }
  const report = (what: string, values: number[], ms: number[]) => {
    const interval = medianInterval(values);
    console.log(
      `${kind.name.padEnd(8)} ${what.padEnd(6)} native ÷ pool ${format(summarize(values), 2)}${
        interval ? `, 95% interval ${interval[0].toFixed(2)}–${interval[1].toFixed(2)}` : ""
      }; native ${format(summarize(nativeMs), 0)} ms, pool ${format(summarize(ms), 0)} ms`,
    );
  };
  report("merge", ratios, poolMs);
  report("split", splitRatios, splitMs);
}
