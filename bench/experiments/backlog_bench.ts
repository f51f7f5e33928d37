/**
 * Backlog benchmark: back-to-back bursts of tasks whose arguments overflow the pool's records and blocks,
 * so that most of each burst waits in the submission backlog (lib/producer/backlog.ts) — filch alone, no peers
 * between its bursts. It measures what the backlog's buffer costs from one burst to the next: kept, it is
 * reused; given back, each burst grows it again in fresh pages (see backlog.ts and submission.ts).
 *
 * Run: `node bench/experiments/backlog_bench.ts`, `deno run -A …`, `bun …`.
 * Options: a number sets the rounds (default 9); `--bytes=N` the argument's size (default 1024);
 * `--tasks=N` the tasks of a burst (default 20,000); `--pause=MS` a pause between bursts (default 0).
 * Two untimed bursts come first. Prints the median with the range, and the spread by range and by IQR.
 */
import { Pool } from "../../lib/pool.ts";
import { format, runtimeName, summarize } from "../_stats.ts";
import type * as tasks from "../tasks.ts";

const args: string[] = (globalThis as { Deno?: { args: string[] } }).Deno?.args ??
  (globalThis as { process?: { argv: string[] } }).process?.argv.slice(2) ?? [];
const option = (name: string, fallback: number): number => {
  const found = args.find((a) => a.startsWith(`--${name}=`));
  const value = found === undefined ? fallback : Number(found.slice(name.length + 3));
  if (!Number.isFinite(value) || value < 0) {
    throw new RangeError(`Cannot run backlog_bench.ts as '--${name}' must be a number from 0: received ${found}`);
  }
  return value;
};
const rounds = Number(args.find((a) => /^\d+$/.test(a)) ?? 9);
const bytes = Math.max(1, option("bytes", 1024));
const count = option("tasks", 20_000);
const pauseMs = option("pause", 0);

const pool = await Pool.create<typeof tasks>(new URL("../tasks.ts", import.meta.url), { workers: 2 });
const input = new Uint8Array(bytes).fill(7);

/** One burst; returns tasks a second. Checks every result. */
async function burst(): Promise<number> {
  const started = performance.now();
  const all = new Array<Promise<number>>(count);
  for (let i = 0; i < count; i++) all[i] = pool.run("takeBytes", input);
  const results = await Promise.all(all);
  const ms = performance.now() - started;
  const expected = bytes + 14; // takeBytes: the length plus the first and last byte (7 each)
  if (results.some((r) => r !== expected)) {
    throw new Error(`Cannot trust the benchmark as a result was not ${expected}`);
  }
  return count / (ms / 1000);
}

try {
  for (let i = 0; i < 2; i++) await burst();
  const rates: number[] = [];
  for (let r = 0; r < rounds; r++) {
    if (pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, pauseMs));
    rates.push(await burst());
  }
  const s = summarize(rates.map((r) => r / 1000));
  console.log(
    `${runtimeName()}: ${count} tasks × ${bytes} B arguments, ${rounds} rounds, pause ${pauseMs} ms: ` +
      `${format(s, 0)}k tasks/s, spread ${((s.max - s.min) / s.median * 100).toFixed(0)}% by range, ${
        ((s.q3 - s.q1) / s.median * 100).toFixed(0)
      }% by IQR`,
  );
} finally {
  await pool.close();
}
