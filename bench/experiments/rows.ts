/**
 * Uneven work (issue 31): the rows of a 1600×1200 Mandelbrot image of the whole set, whose cost varies
 * tens of times from the edges to the middle (the spread is measured and printed), on 2 workers, against
 * the same rows run inline on the main thread:
 * - filch, one task a row: `Promise.all` of 1,200 `pool.run("row", y, view)`;
 * - filch, `parallelFor`: one task that splits the rows with `parallelFor` (one row a piece, stealing);
 * - a bare postMessage loop: 2 `node:worker_threads` workers, each sent the next row as it answers (the
 *   dynamic split a hand-written loop would use), no promises;
 * - piscina, one task a row (where it starts within 10 s: on Node; on Deno and Bun it may not).
 *
 * The contenders are rotated each round (which goes first changes), in one process; each round gives
 * every contender's speedup over that round's inline run. Printed: the medians with their 95% intervals
 * (bench/_stats.ts `medianInterval`), and filch ÷ piscina per round. Goals: both filch forms ≥ 1.8× inline,
 * and ahead of piscina.
 *
 * Run: `node bench/experiments/rows.ts [rounds]`, `deno run -A …`, `bun …` (default 15 rounds).
 *
 * @module
 */
import { Worker } from "node:worker_threads";
import { Pool } from "../../lib/pool.ts";
import { type Contender, rotatedRounds } from "./_rotated.ts";
import { intervalText, runtimeName, summarize } from "../_stats.ts";
import { row, type RowsView } from "./rows_tasks.ts";
import type * as rowsTasks from "./rows_tasks.ts";

const argv = (globalThis as { process?: { argv: string[] } }).process?.argv ?? [];
const ROUNDS = Number(argv.slice(2).find((a) => /^\d+$/.test(a)) ?? 15);
const view: RowsView = { width: 1600, height: 1200, maxIterations: 400 };
const ys = Array.from({ length: view.height }, (_, y) => y);

/** Every row inline; returns the image's checksum (the sum of every row's). */
function inline(): number {
  let total = 0;
  for (const y of ys) total += row(y, view);
  return total;
}

// The spread of the rows' cost: each row timed alone on this thread (after a warm-up of all of them).
inline();
const rowMs = ys.map((y) => {
  const start = performance.now();
  row(y, view);
  return performance.now() - start;
});
const sortedRowMs = [...rowMs].sort((a, b) => a - b);
/** The 1% quantiles, not min and max: a row's single timing can be cut short or stretched by the clock. */
const spread = sortedRowMs[Math.floor(0.99 * ys.length)] / sortedRowMs[Math.ceil(0.01 * ys.length)];

async function filchRows(): Promise<Contender> {
  const pool = await Pool.create<typeof rowsTasks>(new URL("./rows_tasks.ts", import.meta.url), { workers: 2 });
  return {
    run: async () => (await Promise.all(ys.map((y) => pool.run("row", y, view)))).reduce((a, b) => a + b, 0),
    close: () => pool.close(),
  };
}

async function filchParallelFor(): Promise<Contender> {
  const pool = await Pool.create<typeof rowsTasks>(new URL("./rows_tasks.ts", import.meta.url), { workers: 2 });
  const sums = new Int32Array(new SharedArrayBuffer(4 * view.height));
  return {
    run: async () => {
      await pool.run("rowsParallelFor", sums, view);
      return sums.reduce((a, b) => a + b, 0);
    },
    close: () => pool.close(),
  };
}

function bare(): Promise<Contender> {
  const url = new URL("./peers/rows_worker.mjs", import.meta.url);
  const workers = [0, 1].map(() => new Worker(url, { workerData: "bare" }));
  return Promise.resolve({
    run: () =>
      new Promise<number>((resolve, reject) => {
        let next = 0;
        let done = 0;
        let total = 0;
        const cleanups: (() => void)[] = [];
        for (const w of workers) {
          const onMessage = ({ sum }: { y: number; sum: number }) => {
            total += sum;
            if (++done === ys.length) {
              for (const c of cleanups) c();
              resolve(total);
            } else if (next < ys.length) w.postMessage({ y: next++, view });
          };
          const onError = (error: Error) => {
            for (const c of cleanups) c();
            reject(error);
          };
          w.on("message", onMessage);
          w.on("error", onError);
          cleanups.push(() => {
            w.off("message", onMessage);
            w.off("error", onError);
          });
          w.postMessage({ y: next++, view });
        }
      }),
    close: async () => {
      for (const w of workers) await w.terminate();
    },
  });
}

async function piscina(): Promise<Contender> {
  const { Piscina } = await import("piscina");
  const pool = new Piscina({
    filename: new URL("./peers/rows_worker.mjs", import.meta.url).href,
    minThreads: 2,
    maxThreads: 2,
  });
  return {
    run: async () => (await Promise.all(ys.map((y) => pool.run({ y, view })))).reduce((a, b) => a + b, 0),
    close: () => pool.destroy(),
  };
}

const { inlineMs, ms, skipped } = await rotatedRounds(
  [
    ["filch, a task a row", filchRows],
    ["filch, parallelFor", filchParallelFor],
    ["bare postMessage loop", bare],
    ["piscina", piscina],
  ],
  inline,
  ROUNDS,
);

console.log(
  `uneven rows — ${runtimeName()}, ${view.width}×${view.height}, ${view.maxIterations} iterations at most, ` +
    `${ROUNDS} rounds, 2 workers; a row's cost varies ${spread.toFixed(0)}× (1% to 99% of the rows timed alone)`,
);
console.log(`inline: ${summarize(inlineMs).median.toFixed(0)} ms (median)\n`);
console.log("| contender | ms, median | speedup over inline: median | 95% interval | filch ÷ piscina (speed) |");
console.log("|---|---|---|---|---|");
const piscinaMs = ms.get("piscina");
for (const [name, own] of ms) {
  const speedups = own.map((t, i) => inlineMs[i] / t);
  const overPiscina = piscinaMs !== undefined && name.startsWith("filch")
    ? (() => {
      const r = own.map((t, i) => piscinaMs[i] / t);
      return `${summarize(r).median.toFixed(2)} (${intervalText(r)})`;
    })()
    : "";
  console.log(
    `| ${name} | ${summarize(own).median.toFixed(0)} | ${summarize(speedups).median.toFixed(2)}× | ${
      intervalText(speedups)
    } | ${overPiscina} |`,
  );
}
for (const line of skipped) console.log(line);
