/**
 * One runtime's part of the demo: an uneven workload (many small tasks, some medium, a few large) run on
 * a pool of 2 workers, against the same work run inline on the main thread; then how the tasks spread
 * over the workers and how much they stole. A first round of each, cold, is reported apart from the
 * rounds' medians. Prints JSON lines for `bench/demo.ts` to tabulate.
 */
import { Pool } from "../lib/pool.ts";
import { demoSizes } from "./_demo_sizes.ts";
import { runtimeName, summarize } from "./_stats.ts";
import * as tasks from "./tasks.ts";

const TASKS = 20_000;
const ROUNDS = Number((globalThis as { process?: { argv: string[] } }).process?.argv.at(-1)) || 5;

const units = demoSizes(TASKS);
const totalUnits = units.reduce((a, b) => a + b, 0);
const pool = await Pool.create<typeof tasks>(new URL("./tasks.ts", import.meta.url), { workers: 2 });
const inline: number[] = [];
const pooled: number[] = [];
/**
 * The inline baseline, in a function: as a loop at the module's top level, V8 could only optimize it by
 * on-stack replacement, and it ran 1.05 s a round for three rounds, then 0.67 s (1.5–2 s in earlier runs).
 */
function runInline(list: number[]): number {
  let check = 0;
  for (const u of list) check ^= tasks.work(u);
  return check;
}

// One full round of each first, cold (reported apart, not in the medians): the runtimes' JITs take the
// workers' code to its fastest tier only over the first 20,000 to 40,000 tasks (a pool's first round took
// 510–600 ms, its third 410–430, on Node and Bun alike, 2026-11-27; the log is in docs/benchmarks.md's history).
let start = performance.now();
const expected = runInline(units);
const coldInlineMs = performance.now() - start;
start = performance.now();
const cold = await Promise.all(units.map((u) => pool.run("work", u)));
const coldPoolMs = performance.now() - start;
if (cold.reduce((a, b) => a ^ b, 0) !== expected) {
  throw new Error("Cannot trust the demo as the pool's results differ from the inline run");
}
for (let round = 0; round < ROUNDS; round++) {
  start = performance.now();
  const check = runInline(units);
  inline.push(performance.now() - start);
  start = performance.now();
  const results = await Promise.all(units.map((u) => pool.run("work", u)));
  pooled.push(performance.now() - start);
  let got = 0;
  for (const r of results) got ^= r;
  if (got !== check) throw new Error("Cannot trust the demo as the pool's results differ from the inline run");
}
const stats = pool.stats();
await pool.close();
const inlineMs = summarize(inline);
const poolMs = summarize(pooled);
console.log(JSON.stringify({
  runtime: runtimeName(),
  tasks: TASKS,
  rounds: ROUNDS,
  totalUnits,
  inlineMs,
  poolMs,
  speedup: inlineMs.median / poolMs.median,
  // Each round's own: its inline run ÷ its pool run (the two ran one after the other).
  roundSpeedup: summarize(inline.map((ms, r) => ms / pooled[r])),
  coldInlineMs,
  coldPoolMs,
  coldSpeedup: coldInlineMs / coldPoolMs,
  tasksPerSecond: TASKS / poolMs.median * 1000,
  workers: stats.workers,
}));
