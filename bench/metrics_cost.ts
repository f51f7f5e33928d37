/**
 * What `metrics: true` costs: bursts of 100k tiny tasks (`add`) on pools of 2 workers with and without
 * metrics, interleaved in one process (no two pools run at once); median tasks/s of each and the ratio per
 * round. Goal: recording costs at most 5% of the tiny-task throughput.
 *
 * Each round creates three pools afresh, in a rotating order: one without metrics (A), one with them (B)
 * and a second one without (A'), and measures each one's second burst (the first warms its workers up).
 * B ÷ A is the cost; A' ÷ A is the control, what two identical pools differ by on this machine in the same
 * run: a cost is told apart from noise only if B ÷ A sits below the control's spread. Fresh pools every
 * round, because on this 2-core machine two identical pools in one process differed by up to 30% in
 * throughput, steadily over their lives (a Deno A/A run, 2026-11-23), which a ratio of one pair takes for
 * the cost of metrics.
 *
 * The end-to-end ratio cannot resolve 5% on a shared 2-core machine (its control spreads wider than that),
 * so the bench also measures recording's own work directly ({@link direct}): the calls a worker makes per
 * task with metrics on (its start noted, one clock read at its finish, two histogram records) and those the
 * main thread makes (a submission stamp, a clock read per 32 submissions), in a tight loop on this thread,
 * where the spread is a few percent of a few tens of nanoseconds. Added to the time a task costs each
 * thread at the measured throughput without metrics (W workers at T tasks/s: W/T per task on a worker,
 * 1/T on the main thread), it bounds the cost: (worker ns × T/W) + (main ns × T), both sides counted as if
 * each were the bottleneck. It leaves out what a tight loop cannot see (the histograms' cache lines, a
 * clock read's cost under load), which the end-to-end arms are there for.
 *
 * Run: `deno run -A bench/metrics_cost.ts`, `bun bench/metrics_cost.ts`, `node bench/metrics_cost.ts`;
 * `--json` prints one JSON line (bench/all.ts); a number sets the rounds (default 30); `--workers=N` the
 * workers of every pool (default 2).
 */
import { poolLayout } from "../lib/protocol/layout.ts";
import { epochMs, histogramBytes, PoolMetrics, TaskRecorder, TaskStamps } from "../lib/metrics.ts";
import { Pool } from "../lib/pool.ts";
import { medianInterval, summarize, type Summary } from "./_stats.ts";
import type * as tasks from "./tasks.ts";

const runtime = "Deno" in globalThis ? "deno" : "Bun" in globalThis ? "bun" : "node";
const args = typeof process !== "undefined" ? process.argv.slice(2) : [];
const json = args.includes("--json");
const rounds = Number(args.find((a) => /^\d+$/.test(a)) ?? 30);
const workers = Number(args.find((a) => a.startsWith("--workers="))?.slice(10) ?? 2);
const N = 100_000;

async function burst(pool: Pool<typeof tasks>): Promise<number> {
  const t0 = performance.now();
  const all = new Array<Promise<number>>(N);
  for (let i = 0; i < N; i++) all[i] = pool.run("add", i, 1);
  const results = await Promise.all(all);
  for (let i = 0; i < N; i++) {
    if (results[i] !== i + 1) throw new Error("Cannot trust the benchmark as a result was wrong");
  }
  return N / ((performance.now() - t0) / 1000);
}

const url = new URL("./tasks.ts", import.meta.url);
let recorded = 0;

/** A fresh pool's throughput: its second burst. With metrics, checks that every task was recorded. */
async function fresh(metrics: boolean): Promise<number> {
  const pool = await Pool.create<typeof tasks>(url, { workers, metrics });
  try {
    await burst(pool);
    const rate = await burst(pool);
    if (metrics) {
      const count = pool.stats().metrics!.runTime.count;
      if (count !== 2 * N) throw new Error(`Cannot trust the benchmark as ${count} of ${2 * N} tasks were recorded`);
      recorded += count;
    }
    return rate;
  } finally {
    await pool.close();
  }
}

const arms: [string, () => Promise<number>][] = [
  ["without", () => fresh(false)],
  ["with", () => fresh(true)],
  ["control", () => fresh(false)],
];
const samples = new Map<string, number[]>(arms.map(([name]) => [name, []]));
for (let r = 0; r < rounds; r++) {
  // Each arm goes first, second and third equally often: none always follows another's warm-up.
  for (let k = 0; k < arms.length; k++) {
    const [name, measure] = arms[(r + k) % arms.length];
    samples.get(name)!.push(await measure());
  }
}
/**
 * Recording's own work per task, in ns, on this thread (median of 21 runs of 200k tasks each, after a
 * warm-up): the worker's calls and the main thread's, on the real classes over a real pool layout.
 */
function direct(): { worker: Summary; main: Summary } {
  const shape = { workers, dequeCapacity: 256, taskCapacity: 1024, inlineBytes: 192, blockBytes: 1024, blocks: 16 };
  const layout = poolLayout(shape);
  const buffer = new SharedArrayBuffer(layout.totalBytes);
  const recorder = new TaskRecorder(buffer, layout, new SharedArrayBuffer(histogramBytes(workers)), 0);
  const stamps = new TaskStamps(buffer, layout);
  const clock = new PoolMetrics(workers, new Int32Array(new SharedArrayBuffer(4096)), epochMs());
  const M = 200_000;
  const workerSide = () => {
    const t0 = performance.now();
    let last = epochMs();
    for (let i = 0; i < M; i++) {
      // As lib/worker/runner.ts does for a task that follows another: its start is the last finish, its
      // finish a read.
      recorder.started(i & 1023, last);
      last = epochMs();
      recorder.finished(i & 1023, last);
    }
    return ((performance.now() - t0) * 1e6) / M;
  };
  const mainSide = () => {
    const t0 = performance.now();
    for (let i = 0; i < M; i++) stamps.submitted(i & 1023, clock.submitClock());
    return ((performance.now() - t0) * 1e6) / M;
  };
  for (let k = 0; k < 5; k++) workerSide(), mainSide();
  const w: number[] = [];
  const m: number[] = [];
  for (let k = 0; k < 21; k++) w.push(workerSide()), m.push(mainSide());
  return { worker: summarize(w), main: summarize(m) };
}

const off = samples.get("without")!;
const on = samples.get("with")!;
const control = samples.get("control")!;
const row = {
  runtime,
  without: summarize(off),
  with: summarize(on),
  ratio: summarize(on.map((v, i) => v / off[i])),
  /** 95% confidence interval of the ratio's median (bench/_stats.ts medianInterval). */
  ratioInterval: medianInterval(on.map((v, i) => v / off[i])),
  control: summarize(control.map((v, i) => v / off[i])),
  controlInterval: medianInterval(control.map((v, i) => v / off[i])),
  recorded,
  direct: direct(),
  /** The direct bound: the share of a task's time on each thread that recording adds (see the module doc). */
  directShare: 0,
};
row.directShare = (row.direct.worker.median * row.without.median) / workers / 1e9 +
  (row.direct.main.median * row.without.median) / 1e9;
if (json) console.log(JSON.stringify(row));
else {
  const spread = (s: Summary, ci: [number, number] | undefined) =>
    `median ${s.median.toFixed(3)}${ci ? ` (95% CI ${ci[0].toFixed(3)}–${ci[1].toFixed(3)})` : ""}, middle half ${
      s.q1.toFixed(3)
    }–${s.q3.toFixed(3)}, range ${s.min.toFixed(3)}–${s.max.toFixed(3)}`;
  console.log(
    `${runtime}, ${rounds} rounds: without ${Math.round(row.without.median)} tasks/s, with ${
      Math.round(row.with.median)
    }; with ÷ without: ${spread(row.ratio, row.ratioInterval)}; control (without ÷ without): ${
      spread(row.control, row.controlInterval)
    }; ` +
      `${row.recorded} tasks recorded`,
  );
  const ns = (s: Summary) => `${s.median.toFixed(1)} ns (range ${s.min.toFixed(1)}–${s.max.toFixed(1)})`;
  console.log(
    `${runtime}, direct: recording adds ${ns(row.direct.worker)} per task on a worker and ${ns(row.direct.main)} ` +
      `on the main thread; at ${Math.round(row.without.median)} tasks/s on ${workers} workers that is at most ` +
      `${(row.directShare * 100).toFixed(2)}% of the tiny-task throughput (goal: 5%)`,
  );
}
