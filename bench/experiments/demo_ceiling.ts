/**
 * The demo's ceiling on this machine: how fast two threads can run the demo's work at all, with no pool.
 *
 * Three contenders, rotated each round (which goes first changes), one process:
 * - inline: the demo's 20,000 tasks (bench/_demo_sizes.ts) run one after another on the main thread;
 * - bare halves: the same tasks split once into two halves of equal work (by their sizes, largest first,
 *   each to the lighter half), each half sent in one message to its own bare `node:worker_threads` worker
 *   (bench/experiments/peers/halves_worker.mjs), which runs the same `work` and answers once: no scheduling, no
 *   per-task cost, and a split that knows every task's length beforehand, which no pool does;
 * - filch: the demo itself, `Promise.all` of 20,000 `pool.run("work", u)` on a pool of 2.
 *
 * Each round gives both speedups over that round's inline run, and filch ÷ bare halves; the report is the
 * median of the rounds with a 95% interval for it (bench/_stats.ts `medianInterval`). A "bare halves"
 * speedup well under 2 says the two cores do not run this work twice as fast as one (the host's other
 * tenants, a shared core's turbo), whatever a pool does.
 *
 * Run: `node bench/experiments/demo_ceiling.ts [rounds]`, `deno run -A …`, `bun …`
 * (default 15 rounds).
 *
 * @module
 */
import { Worker } from "node:worker_threads";
import { Pool } from "../../lib/pool.ts";
import { demoSizes } from "../_demo_sizes.ts";
import { intervalText, runtimeName, summarize } from "../_stats.ts";
import * as tasks from "../tasks.ts";

const argv = (globalThis as { process?: { argv: string[] } }).process?.argv ?? [];
const ROUNDS = Number(argv.slice(2).find((a) => /^\d+$/.test(a)) ?? 15);
const TASKS = 20_000;
const units = demoSizes(TASKS);

/** The demo's tasks in two halves of equal work: largest first, each to the lighter half. */
function halves(list: number[]): [number[], number[]] {
  const parts: [number[], number[]] = [[], []];
  const load = [0, 0];
  for (const u of [...list].sort((a, b) => b - a)) {
    const to = load[0] <= load[1] ? 0 : 1;
    parts[to].push(u);
    load[to] += u;
  }
  return parts;
}

/** The inline run, in a function (see bench/pool_demo.ts: at the top level V8 optimizes it late). */
function runInline(list: number[]): number {
  let check = 0;
  for (const u of list) check ^= tasks.work(u);
  return check;
}

const split = halves(units);
const bare = [0, 1].map(() => new Worker(new URL("./peers/halves_worker.mjs", import.meta.url)));
/** One list to each bare worker; resolves with the xor of both answers. */
function runBare(): Promise<number> {
  return Promise.all(bare.map((w, i) =>
    new Promise<number>((resolve, reject) => {
      const failed = (error: Error) => reject(error);
      w.once("error", failed);
      w.once("message", (check: number) => {
        w.off("error", failed);
        resolve(check);
      });
      w.postMessage(split[i]);
    })
  )).then(([a, b]) => a ^ b);
}

const pool = await Pool.create<typeof tasks>(new URL("../tasks.ts", import.meta.url), { workers: 2 });
async function runPool(): Promise<number> {
  const results = await Promise.all(units.map((u) => pool.run("work", u)));
  let check = 0;
  for (const r of results) check ^= r;
  return check;
}

const contenders: [string, () => number | Promise<number>][] = [
  ["inline", () => runInline(units)],
  ["bare halves", runBare],
  ["filch", runPool],
];
// One warm-up of each (discarded): every side runs JIT-compiled code.
const expected = runInline(units);
for (const [name, body] of contenders) {
  if (await body() !== expected) throw new Error(`Cannot trust the benchmark as ${name} computed another result`);
}

const ms: Record<string, number[]> = { inline: [], "bare halves": [], filch: [] };
for (let round = 0; round < ROUNDS; round++) {
  for (let k = 0; k < contenders.length; k++) {
    const [name, body] = contenders[(round + k) % contenders.length];
    const start = performance.now();
    const check = await body();
    ms[name].push(performance.now() - start);
    if (check !== expected) throw new Error(`Cannot trust the benchmark as ${name} computed another result`);
  }
}
await pool.close();
for (const w of bare) await w.terminate();

const ratio = (a: number[], b: number[]) => a.map((x, i) => x / b[i]);
const rows: [string, number[]][] = [
  ["bare halves: speedup over inline", ratio(ms.inline, ms["bare halves"])],
  ["filch: speedup over inline", ratio(ms.inline, ms.filch)],
  ["filch ÷ bare halves (speed)", ratio(ms["bare halves"], ms.filch)],
];
console.log(`demo ceiling — ${runtimeName()}, ${ROUNDS} rounds, 2 threads`);
for (const [name, values] of Object.entries(ms)) {
  const s = summarize(values);
  console.log(`  ${name}: ${s.median.toFixed(0)} ms (${s.min.toFixed(0)}–${s.max.toFixed(0)})`);
}
for (const [name, values] of rows) {
  const s = summarize(values);
  console.log(
    `  ${name}: median ${s.median.toFixed(2)}, 95% interval ${intervalText(values)}, ` +
      `range ${s.min.toFixed(2)}–${s.max.toFixed(2)}`,
  );
}
