/**
 * The demo (`npm run demo`): runs the deque benchmark and a 1M-task concurrent stress run on Deno, Bun and
 * Node 24, each in its own process, and prints the results side by side. Every number is a median over
 * several runs in this one invocation, with its range (min–max), because the machine is shared and noisy.
 *
 * Pass a number to set the runs per measurement (default 7): `npm run demo -- 3`.
 */
import { spawnSync } from "node:child_process";
import { cpus } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { format, type Summary } from "./_stats.ts";

const root = fileURLToPath(new URL("..", import.meta.url).href);
const bin = join(root, "node_modules", ".bin");
const runs = process.argv.slice(2).find((a) => /^\d+$/.test(a)) ?? "7";
const runtimes: [string, string[]][] = [
  ["deno", ["run", "-A", "bench/deque_demo.ts", runs]],
  ["bun", ["bench/deque_demo.ts", runs]],
  ["node", ["bench/deque_demo.ts", runs]],
];

interface DequeRow {
  kind: "deque";
  runtime: string;
  op: string;
  facade: Summary;
  direct: Summary;
}
interface StressRow {
  kind: "stress";
  runtime: string;
  tasks: number;
  mtasksPerSecond: Summary;
  ownerTook: number;
  stolenOne: number;
  stolenByHalf: number;
  stealHalves: number;
  retries: number;
}

const rows: (DequeRow | StressRow)[] = [];
for (const [runtime, args] of runtimes) {
  console.log(`running the deque benchmark and stress on ${runtime} …`);
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

console.log(
  `\nfilch deque — ${new Date().toISOString().slice(0, 10)}, ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}`,
);
console.log(
  `median (min–max) over ${runs} runs per cell; "direct" is lib/deque.ts rewritten to call Atomics directly\n`,
);
console.log("| runtime | operation | via facade, ns | direct Atomics, ns | facade / direct |");
console.log("|---|---|---|---|---|");
for (const r of rows) {
  if (r.kind !== "deque") continue;
  console.log(
    `| ${r.runtime} | ${r.op} | ${format(r.facade)} | ${format(r.direct)} | ${
      (r.facade.median / r.direct.median).toFixed(2)
    } |`,
  );
}
console.log("\nConcurrent stress: 1M tasks, 1 owner (push, pop) + 3 thieves (steal, stealHalf), capacity 256, 3 runs");
console.log(
  "| runtime | M tasks/s | owner popped | stolen one by one | stolen by halves (calls) | lost races | lost or duplicated |",
);
console.log("|---|---|---|---|---|---|---|");
for (const r of rows) {
  if (r.kind !== "stress") continue;
  console.log(
    `| ${r.runtime} | ${
      format(r.mtasksPerSecond, 2)
    } | ${r.ownerTook} | ${r.stolenOne} | ${r.stolenByHalf} (${r.stealHalves}) | ${r.retries} | 0 (checked) |`,
  );
}
