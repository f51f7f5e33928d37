/**
 * One runtime's part of the demo: the deque micro-benchmark (facade vs direct Atomics) and a concurrent
 * stress run (1M tasks, one owner, three thieves on real threads), printed as JSON lines for
 * `bench/demo.ts` to tabulate. Runs on Deno, Bun and Node alike.
 */
import { runDequeStress } from "../tests/_deque_stress.ts";
import { benchDeque } from "./deque_bench.ts";
import { runtimeName, summarize } from "./_stats.ts";

const runs = Number((globalThis as { process?: { argv: string[] } }).process?.argv.at(-1)) || 7;
for (const row of await benchDeque(runs)) console.log(JSON.stringify({ kind: "deque", ...row }));

const tasks = 1_000_000;
const seconds: number[] = [];
let last: Awaited<ReturnType<typeof runDequeStress>> = [];
for (let r = 0; r < 3; r++) {
  const start = performance.now();
  last = await runDequeStress(tasks, 3, 256, 0x5eed + r);
  seconds.push((performance.now() - start) / 1000);
}
const thieves = last.slice(1);
console.log(JSON.stringify({
  kind: "stress",
  runtime: runtimeName(),
  tasks,
  mtasksPerSecond: summarize(seconds.map((s) => tasks / s / 1e6)),
  ownerTook: last[0].taken,
  stolenOne: thieves.reduce((n, t) => n + t.steals, 0),
  stolenByHalf: thieves.reduce((n, t) => n + t.halfTasks, 0),
  stealHalves: thieves.reduce((n, t) => n + t.stealHalves, 0),
  retries: thieves.reduce((n, t) => n + t.retries, 0),
}));
