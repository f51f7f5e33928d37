/**
 * Fork-join against the runtime's own sort (issue 31): `TypedArray.prototype.sort`, the call a user makes
 * instead, against `sortParallel` of `examples/sort/tasks.ts` with `native` 1 on a pool of 2 workers (the runtime's
 * sort on pieces of the array on every worker at once, merged in parallel with `join`), for 10M int32 and
 * 10M float64 in SharedArrayBuffers.
 *
 * Each element type gets a pool of its own (see below). Each round sorts the same input both ways, the order alternating from round to round (this machine is
 * shared and noisy: the ratio of the two in one round is what is compared); the input is copied in untimed
 * before each sort, the pool's result is checked against the native one, and the pool is warmed up first.
 * Printed per element type: the median of the ratio native ms ÷ pool ms with its range and 95% interval
 * (`_stats.ts` medianInterval), and each side's median ms.
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
  // Warm-up: both, twice (the JIT, the workers' first sort).
  for (let i = 0; i < 2; i++) {
    sortNative();
    await sortPool();
  }
  const ratios: number[] = [];
  const nativeMs: number[] = [];
  const poolMs: number[] = [];
  for (let r = 0; r < rounds; r++) {
    let a: number;
    let b: number;
    if (r % 2 === 0) {
      a = sortNative();
      b = await sortPool();
    } else {
      b = await sortPool();
      a = sortNative();
    }
    for (let i = 0; i < n; i++) {
      if (data[i] !== native[i]) throw new Error(`Cannot trust the benchmark as the sorts differ at index ${i}`);
    }
    nativeMs.push(a);
    poolMs.push(b);
    ratios.push(a / b);
  }
  const ratio = summarize(ratios);
  const interval = medianInterval(ratios);
  console.log(
    `${kind.name.padEnd(8)} native ÷ pool ${format(ratio, 2)}${
      interval ? `, 95% interval ${interval[0].toFixed(2)}–${interval[1].toFixed(2)}` : ""
    }; native ${format(summarize(nativeMs), 0)} ms, pool ${format(summarize(poolMs), 0)} ms`,
  );
}
