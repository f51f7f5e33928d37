/**
 * The benchmarks a user runs, on every runtime, tabulated for docs/benchmarks.md (`npm run bench`): the
 * pool against its peers (throughput of 100k tiny tasks, one-at-a-time latency), the idle cost and memory
 * of a pool, the deque micro-benchmark, the cost of metrics, batches, `map`, and the wait from submission
 * to start under a steady random load (bench/latency.ts). The one-off experiments of bench/experiments/
 * are not among them.
 * Each runtime runs in its own process; every cell is a median with its range.
 *
 * Pass a number to set the rounds per measurement (default 5): `npm run bench -- 7`. The latency benchmark
 * runs at least 15 rounds whatever the number (a p99 of a 1.2 s run spreads too much for fewer).
 */
import { spawnSync } from "node:child_process";
import { cpus } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { format, type Summary } from "./_stats.ts";
import type { PoolBenchRow } from "./pool_bench.ts";
import type { DequeBenchRow } from "./deque_bench.ts";
import type { LatencyRatio, LatencyRow } from "./latency.ts";

const root = fileURLToPath(new URL("..", import.meta.url).href);
const bin = join(root, "node_modules", ".bin");
const rounds = process.argv.slice(2).find((a) => /^\d+$/.test(a)) ?? "5";

function runEverywhere(script: string, extra: string[] = []): unknown[] {
  const rows: unknown[] = [];
  for (const [runtime, prefix] of [["deno", ["run", "-A"]], ["bun", []], ["node", []]] as const) {
    console.error(`${script} on ${runtime} …`);
    const result = spawnSync(join(bin, runtime), [...prefix, script, ...extra], {
      cwd: root,
      encoding: "utf8",
      env: { ...process.env, NO_COLOR: "1" },
      timeout: 20 * 60_000,
    });
    if (result.status !== 0) {
      console.error(result.stdout, result.stderr);
      throw new Error(`Cannot finish the benchmarks as ${script} on ${runtime} exited with ${result.status}`);
    }
    for (const line of result.stdout.split("\n")) if (line.startsWith("{")) rows.push(JSON.parse(line));
  }
  return rows;
}

const pools = runEverywhere("bench/pool_bench.ts", ["--json", rounds]) as PoolBenchRow[];
const resources = runEverywhere("bench/pool_resources.ts") as {
  runtime: string;
  idleCpuPercentOfOneCore: number;
  sharedBytes: number;
  sharedBytesPerTask: number;
  rssBeforeMiB: number;
  rssWithPoolMiB: number;
}[];
const deques = runEverywhere("bench/deque_bench.ts", ["--json"]) as DequeBenchRow[];
const costs = runEverywhere("bench/metrics_cost.ts", ["--json"]) as {
  runtime: string;
  without: Summary;
  with: Summary;
  ratio: Summary;
  control: Summary;
}[];
const batches = runEverywhere("bench/batch_bench.ts", ["--json"]) as {
  runtime: string;
  run: Summary;
  runMany: Summary;
  ratio: Summary;
}[];
const streams = runEverywhere("bench/map_stream.ts", ["--json"]) as {
  runtime: string;
  inputs: number;
  concurrency: number;
  mapPerSecond: Summary;
  runPerSecond: Summary;
  heapBeforeMiB: number;
  heapSamplesMiB: number[];
}[];
const latency = runEverywhere("bench/latency.ts", [
  "--json",
  "--rounds",
  String(Math.max(15, Number(rounds))),
]) as (LatencyRow | LatencyRatio)[];

console.log(`\n${new Date().toISOString().slice(0, 10)}, ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}`);
console.log(`\n100k tiny tasks (a + b), 2 workers; median (min–max) of ${rounds} rounds, contenders interleaved\n`);
console.log("| runtime | pool | tasks/s | filch ÷ this | round trip, µs |");
console.log("|---|---|---|---|---|");
for (const row of pools) {
  const filch = pools.find((r) => r.runtime === row.runtime && r.name === "filch")!;
  if (row.error) {
    console.log(`| ${row.runtime} | ${row.name} | did not run: ${row.error} | | |`);
    continue;
  }
  console.log(
    `| ${row.runtime} | ${row.name} | ${format(row.tasksPerSecond, 0)} | ${
      (filch.tasksPerSecond.median / row.tasksPerSecond.median).toFixed(2)
    } | ${format(row.roundTripMicros, 1)} |`,
  );
}
console.log("\nAn open, idle pool of 2 workers (5 s), and memory\n");
console.log(
  "| runtime | idle CPU, % of one core | shared buffer, bytes | per task in flight, bytes | RSS before → with pool, MiB |",
);
console.log("|---|---|---|---|---|");
for (const r of resources) {
  console.log(
    `| ${r.runtime} | ${r.idleCpuPercentOfOneCore.toFixed(3)} | ${r.sharedBytes} | ${r.sharedBytesPerTask} | ${
      r.rssBeforeMiB.toFixed(0)
    } → ${r.rssWithPoolMiB.toFixed(0)} |`,
  );
}
console.log("\nDeque, ns per operation: through the facade vs the same code calling Atomics directly\n");
console.log("| runtime | operation | via facade | direct Atomics | facade ÷ direct |");
console.log("|---|---|---|---|---|");
for (const r of deques) {
  console.log(
    `| ${r.runtime} | ${r.op} | ${format(r.facade)} | ${format(r.direct)} | ${
      (r.facade.median / r.direct.median).toFixed(2)
    } |`,
  );
}
console.log(
  "\npool.map over 10M inputs (a generator), 2 workers, 256 in flight: throughput against batched run, and the heap\n",
);
console.log(
  "| runtime | map, tasks/s | batched run, tasks/s | map ÷ run | heap before, MiB | heap every 1M results, MiB |",
);
console.log("|---|---|---|---|---|---|");
for (const r of streams) {
  const heap = r.heapSamplesMiB;
  console.log(
    `| ${r.runtime} | ${format(r.mapPerSecond, 0)} | ${format(r.runPerSecond, 0)} | ${
      (r.mapPerSecond.median / r.runPerSecond.median).toFixed(2)
    } | ${r.heapBeforeMiB.toFixed(1)} | ${Math.min(...heap).toFixed(1)}–${Math.max(...heap).toFixed(1)} |`,
  );
}
console.log(
  "\nmetrics: true against none, 100k tiny tasks, 2 workers: tasks/s, with ÷ without per round, and the control" +
    " (a second pool without ÷ the first)\n",
);
console.log("| runtime | without metrics | with metrics | with ÷ without | control |");
console.log("|---|---|---|---|---|");
for (const r of costs) {
  console.log(
    `| ${r.runtime} | ${format(r.without, 0)} | ${format(r.with, 0)} | ${format(r.ratio, 3)} | ${
      format(r.control, 3)
    } |`,
  );
}
console.log("\nrunMany (one call) against run each + Promise.all, 100k tiny tasks, 2 workers\n");
console.log("| runtime | run, tasks/s | runMany, tasks/s | runMany ÷ run |");
console.log("|---|---|---|---|");
for (const r of batches) {
  console.log(`| ${r.runtime} | ${format(r.run, 0)} | ${format(r.runMany, 0)} | ${format(r.ratio, 3)} |`);
}
console.log(
  "\nWait from submission to start, ms, 2 workers, a Poisson stream of busy tasks (70% 0.2 ms, 25% 2 ms, 5% 10 ms)" +
    " at 50/90/110% of capacity; median over rounds (min–max); p99 ÷ piscina's (as shipped, and with stricterFIFO)" +
    " taken per round\n",
);
console.log("| runtime | load | contender | p50 | p99 | max | tasks/s | p99 ÷ piscina | p99 ÷ piscina stricterFIFO |");
console.log("|---|---|---|---|---|---|---|---|---|");
for (const r of latency) {
  if (!("name" in r)) continue;
  const load = `${Math.round(r.load * 100)}%`;
  if (r.error !== undefined) {
    console.log(`| ${r.runtime} | ${load} | ${r.name} | did not run: ${r.error} | | | | | |`);
    continue;
  }
  const ratio = (divisor: string) => {
    const found = latency.find((x): x is LatencyRatio =>
      "ratio" in x && x.runtime === r.runtime && x.load === r.load && x.ratio === `${r.name} ÷ ${divisor}`
    );
    return found === undefined ? "" : format(found.value, 2);
  };
  console.log(
    `| ${r.runtime} | ${load} | ${r.name} | ${format(r.p50Ms, 2)} | ${format(r.p99Ms, 2)} | ${format(r.maxMs, 1)} | ${
      format(r.tasksPerSecond, 0)
    } | ${ratio("piscina")} | ${ratio("piscina stricterFIFO")} |`,
  );
}
