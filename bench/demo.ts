/**
 * The demo (`npm run demo`): an uneven workload — 20,000 tasks, 90% small, 9% medium, 1% large — on a
 * pool of 2 workers, on Deno, Bun and Node 24 in turn, each against the same work run inline on the main
 * thread. Prints the speedup and throughput (median and range over the rounds), then how the tasks spread
 * over the workers and how they got them: from the injector, or stolen from the other worker's deque.
 *
 * Each runtime first runs one round of each side cold (the JIT still compiling the workers' code), shown in
 * its own column, then the timed rounds.
 *
 * Pass a number to set the rounds (default 5): `npm run demo -- 9`.
 */
import { spawnSync } from "node:child_process";
import { cpus } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { format, type Summary } from "./_stats.ts";
import type { WorkerStats } from "../lib/pool.ts";

const root = fileURLToPath(new URL("..", import.meta.url).href);
const bin = join(root, "node_modules", ".bin");
const rounds = process.argv.slice(2).find((a) => /^\d+$/.test(a)) ?? "5";
const runtimes: [string, string[]][] = [
  ["deno", ["run", "-A", "bench/pool_demo.ts", rounds]],
  ["bun", ["bench/pool_demo.ts", rounds]],
  ["node", ["bench/pool_demo.ts", rounds]],
];

interface DemoRow {
  runtime: string;
  tasks: number;
  rounds: number;
  totalUnits: number;
  inlineMs: Summary;
  poolMs: Summary;
  speedup: number;
  /** Each round's inline ÷ pool: the lowest is the goal's "in every run". */
  roundSpeedup: Summary;
  coldSpeedup: number;
  tasksPerSecond: number;
  workers: WorkerStats[];
}

const rows: DemoRow[] = [];
for (const [runtime, args] of runtimes) {
  console.log(`running the uneven workload on ${runtime} …`);
  const result = spawnSync(join(bin, runtime), args, {
    cwd: root,
    encoding: "utf8",
    env: { ...process.env, NO_COLOR: "1" },
  });
  if (result.status !== 0) {
    console.error(result.stdout, result.stderr);
    throw new Error(`Cannot finish the demo as ${runtime} exited with ${result.status}`);
  }
  for (const line of result.stdout.split("\n")) if (line.startsWith("{")) rows.push(JSON.parse(line));
}

const first = rows[0];
console.log(
  `\nfilch demo — ${new Date().toISOString().slice(0, 10)}, ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}`,
);
console.log(
  `${first.tasks} tasks of uneven size (${first.totalUnits} k loop iterations in all), 2 workers, ` +
    `median (min–max) of ${first.rounds} rounds\n`,
);
console.log(
  "| runtime | inline on main thread, ms | pool of 2, ms | speedup | speedup per round, median (min–max) | tasks/s | first round, cold: speedup |",
);
console.log("|---|---|---|---|---|---|---|");
for (const r of rows) {
  console.log(
    `| ${r.runtime} | ${format(r.inlineMs, 0)} | ${format(r.poolMs, 0)} | ${r.speedup.toFixed(2)}× | ${
      format(r.roundSpeedup, 2)
    } | ${Math.round(r.tasksPerSecond)} | ${r.coldSpeedup.toFixed(2)}× |`,
  );
}
console.log("\nWhere the tasks ran (all rounds): per worker");
console.log(
  "| runtime | worker | executed | from injector | stolen (tasks) | steals ok / tried | sleeps | wakes |",
);
console.log("|---|---|---|---|---|---|---|---|");
for (const r of rows) {
  r.workers.forEach((w, i) => {
    console.log(
      `| ${r.runtime} | ${i} | ${w.executed} | ${w.injectorPops} | ${w.stolen} | ${w.successfulSteals} / ${w.stealAttempts} | ${w.sleeps} | ${w.wakes} |`,
    );
  });
}
