/**
 * The tasks of `bench/experiments/forced_kill_cpu.ts`: one that spins without reading its signal (only a
 * forced abort stops it, where the runtime can stop a thread), and one that does nothing.
 *
 * @module
 */

/**
 * Spins for `ms` ms of wall time, never reading its signal, after setting word 0 of `started` to 1.
 *
 * @param started A word the caller waits on, to abort only once the task runs.
 * @param ms How long it spins if nothing stops its thread.
 * @returns How many rounds it spun.
 */
export function spin(started: Int32Array, ms: number): number {
  Atomics.store(started, 0, 1);
  Atomics.notify(started, 0);
  const end = Date.now() + ms;
  let rounds = 0;
  while (Date.now() < end) rounds++;
  return rounds;
}

/**
 * Nothing: a task that shows the replacement worker serves.
 *
 * @returns 1.
 */
export function noop(): number {
  return 1;
}
