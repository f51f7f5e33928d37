/**
 * What every example's runner shares: command-line options (`--name=value`), timing, and the per-worker
 * counters of a run (tasks executed, tasks stolen, successful steals) as the difference of two
 * `pool.stats()` snapshots.
 *
 * @module
 */
import type { PoolStats } from "../mod.ts";

/** The command-line arguments after the script, on Deno, Bun and Node. */
function argv(): string[] {
  const g = globalThis as { Deno?: { args: string[] }; process?: { argv: string[] } };
  return g.Deno?.args ?? g.process?.argv.slice(2) ?? [];
}

/**
 * The numeric option `--name=value` (or `--name value`), or `fallback`.
 *
 * @param name The option's name, without dashes.
 * @param fallback Its default.
 * @returns The value.
 * @throws {RangeError} If the value is not a finite number.
 */
export function option(name: string, fallback: number): number {
  const args = argv();
  for (let i = 0; i < args.length; i++) {
    let text: string | undefined;
    if (args[i].startsWith(`--${name}=`)) text = args[i].slice(name.length + 3);
    else if (args[i] === `--${name}`) text = args[i + 1];
    if (text === undefined) continue;
    const value = Number(text.replaceAll("_", ""));
    if (!Number.isFinite(value)) {
      throw new RangeError(`Cannot run the example as '--${name}' must be a number: received '${text}'`);
    }
    return value;
  }
  return fallback;
}

/** Whether the flag `--name` was given. */
export function flag(name: string): boolean {
  return argv().includes(`--${name}`);
}

/**
 * Times `body` once.
 *
 * @param body The work.
 * @returns Its result and the elapsed milliseconds.
 */
export async function timed<T>(body: () => T | Promise<T>): Promise<{ value: T; ms: number }> {
  const start = performance.now();
  const value = await body();
  return { value, ms: performance.now() - start };
}

/** One worker's share of a run. */
export interface WorkerShare {
  /** Tasks it ran to completion (joined pieces popped back and run inline included). */
  executed: number;
  /** Tasks it obtained by stealing. */
  stolen: number;
  /** Steal calls that obtained work. */
  steals: number;
}

/**
 * Each worker's counters between two snapshots of `pool.stats()`.
 *
 * @param before The snapshot taken before the run.
 * @param after The snapshot taken after it.
 * @returns One entry per worker.
 */
export function shares(before: PoolStats, after: PoolStats): WorkerShare[] {
  return after.workers.map((w, i) => ({
    executed: w.executed - before.workers[i].executed,
    stolen: w.stolen - before.workers[i].stolen,
    steals: w.successfulSteals - before.workers[i].successfulSteals,
  }));
}

/**
 * The median of some numbers.
 *
 * @param samples At least one number.
 * @returns The median.
 */
export function median(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/**
 * Prints the closing lines every example shows: times, speedup and who stole what.
 *
 * @param sequentialMs The sequential program's time (median).
 * @param poolMs The pool's time (median).
 * @param workers The pool's size.
 * @param perWorker The counters of the last pool run.
 */
export function printTimes(sequentialMs: number, poolMs: number, workers: number, perWorker: WorkerShare[]): void {
  console.log(`sequential (main thread): ${sequentialMs.toFixed(1)} ms`);
  console.log(`pool of ${workers}:               ${poolMs.toFixed(1)} ms`);
  console.log(`speedup:                  ${(sequentialMs / poolMs).toFixed(2)}×`);
  perWorker.forEach((w, i) => {
    console.log(`  worker ${i}: ran ${w.executed} tasks, stole ${w.stolen} in ${w.steals} steals`);
  });
}

export { runtimeName } from "../bench/_stats.ts";
