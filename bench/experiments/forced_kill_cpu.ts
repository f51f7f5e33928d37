/**
 * What a forced abort leaves running: the process's CPU time, second by second, after a task that ignores
 * its signal was aborted with `force: true` (its worker thread terminated and replaced). The question of
 * issue 51: `docs/cancellation.md` said the worker is "terminated and replaced, as piscina does", while on
 * Deno `Worker.terminate()` does not stop a thread running JavaScript (denoland/deno#35657).
 *
 * Each round: a pool of one worker; a baseline second with the pool idle; then `spin(started, SPIN_MS)`
 * (bench/experiments/forced_kill_tasks.ts: a loop that never reads its signal) submitted with
 * `with({ signal, force: true })`, aborted once it runs; its promise rejects, a `noop` shows that the
 * replacement worker serves, and the process's CPU time (`process.cpuUsage()`, user + system, every
 * thread) is read over each of the next {@link WINDOWS} seconds while nothing is submitted. A thread that
 * was stopped costs nothing there; one still spinning costs up to a core (1,000 ms a second), less on a
 * busy machine. The spinning task ends by itself after {@link SPIN_MS} ms, so no round leaves a thread
 * spinning for good.
 *
 * Printed: per round, the baseline second and each window after the abort, in ms of CPU.
 *
 * Run: `node bench/experiments/forced_kill_cpu.ts [rounds]` (default 2), `deno run -A …`, `bun …`.
 *
 * @module
 */
import process from "node:process";
import { Pool } from "../../mod.ts";
import type * as tasks from "./forced_kill_tasks.ts";
import { runtimeName } from "../_stats.ts";

/** How long the forced task would spin if its thread were never stopped (ms). */
const SPIN_MS = 3_000;
/** The one-second windows read after the abort (the last ones fall after the task would have ended). */
const WINDOWS = 4;

const rounds = Number(process.argv.find((a, i) => i >= 2 && /^\d+$/.test(a)) ?? 2);

/** Process CPU (user + system, all threads) in ms over `ms` ms of wall time with nothing submitted. */
async function cpuOver(ms: number): Promise<number> {
  const before = process.cpuUsage();
  await new Promise((resolve) => setTimeout(resolve, ms));
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000;
}

console.log(`forced abort, then idle: process CPU (ms) per second, ${runtimeName()}, ${new Date().toISOString()}`);
for (let round = 1; round <= rounds; round++) {
  const pool = await Pool.create<typeof tasks>(new URL("./forced_kill_tasks.ts", import.meta.url), { workers: 1 });
  try {
    await pool.run("noop");
    const baseline = await cpuOver(1_000);
    const started = new Int32Array(new SharedArrayBuffer(4));
    const controller = new AbortController();
    const forced = pool.with({ signal: controller.signal, force: true }).run("spin", started, SPIN_MS);
    while (Atomics.load(started, 0) === 0) await new Promise((resolve) => setTimeout(resolve, 1));
    controller.abort();
    const outcome = await forced.then(() => "resolved", (error: Error) => error.name);
    const served = await pool.run("noop");
    const windows: number[] = [];
    for (let w = 0; w < WINDOWS; w++) windows.push(await cpuOver(1_000));
    console.log(
      `round ${round}: ${outcome}, replacement served ${served === 1}, forcedKills ${pool.stats().forcedKills}; ` +
        `idle baseline ${baseline.toFixed(0)} ms; after the abort, seconds 1-${WINDOWS}: ${
          windows.map((w) => w.toFixed(0)).join(", ")
        } ms`,
    );
  } finally {
    await pool.terminate();
  }
}
