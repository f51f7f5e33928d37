/**
 * The task module of the latency benchmark (bench/latency.ts), for filch's workers. The peers' workers
 * (bench/peers/latency_*.mjs) run the same function body, copied, since a peer loads plain JavaScript.
 */

/**
 * Busy-spins for `ms` milliseconds (never sleeps: a sleeping task would leave its core free, and the load
 * would not be the load asked for). Returns the time it started, read at its first line, on the clock
 * every thread shares: `performance.timeOrigin + performance.now()` (each thread has its own origin; the
 * sum is milliseconds since the epoch on all of them).
 */
export function spin(ms: number): number {
  const started = performance.timeOrigin + performance.now();
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // spin: the task's length is time on a core
  }
  return started;
}
