/**
 * The task module of the producers benchmark (bench/producers.ts), for filch's workers. The piscina worker
 * (bench/peers/producers_piscina_worker.mjs) runs the same bodies, written again in plain JavaScript.
 */

/** The tiny task: its cost is all the pool's. */
export function add(a: number, b: number): number {
  return a + b;
}

/**
 * The ~40 µs task: busy-spins for `us` microseconds (a sleeping task would free its core), then returns
 * `a + b` so that the producer can check the result is its own.
 */
export function spinAdd(a: number, b: number, us: number): number {
  const end = performance.now() + us / 1000;
  while (performance.now() < end) {
    // spin: the task's length is time on a core
  }
  return a + b;
}
