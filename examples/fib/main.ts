/**
 * Fork-join Fibonacci on a pool of 2 workers, against the plain recursion on the main thread.
 *
 * Run: `node examples/fib/main.ts`, `deno run -A examples/fib/main.ts` or `bun examples/fib/main.ts`.
 * Options: `--n=35 --cutoff=20 --workers=2 --rounds=3`.
 *
 * @module
 */
import { Pool } from "../../mod.ts";
import { median, option, printTimes, runtimeName, shares, timed, type WorkerShare } from "../_demo.ts";
import * as tasks from "./tasks.ts";

const n = option("n", 35);
const cutoff = option("cutoff", 20);
const workers = option("workers", 2);
const rounds = option("rounds", 3);

console.log(`fib(${n}), forking above n = ${cutoff} (${tasks.fibJoins(n, cutoff)} joins); ${runtimeName()}`);
tasks.fibSequential(n - 5); // warm up the main thread's code
const sequential: number[] = [];
let expected = 0;
for (let r = 0; r < rounds; r++) {
  const { value, ms } = await timed(() => tasks.fibSequential(n));
  expected = value;
  sequential.push(ms);
}

await using pool = await Pool.create<typeof tasks>(new URL("./tasks.ts", import.meta.url), { workers });
await pool.run("fib", n - 5, cutoff); // warm up the workers' code
const pooled: number[] = [];
let perWorker: WorkerShare[] = [];
for (let r = 0; r < rounds; r++) {
  const before = pool.stats();
  const { value, ms } = await timed(() => pool.run("fib", n, cutoff));
  perWorker = shares(before, pool.stats());
  if (value !== expected) {
    throw new Error(`Cannot trust the demo as the pool computed fib(${n}) = ${value}, not ${expected}`);
  }
  pooled.push(ms);
}
console.log(`fib(${n}) = ${expected} (pool and sequential agree)`);
printTimes(median(sequential), median(pooled), workers, perWorker);
