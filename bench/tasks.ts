/** The task module of the pool benchmarks and the demo. */

/** The tiny task of the throughput and latency benchmarks. */
export function add(a: number, b: number): number {
  return a + b;
}

/** A task of `units` thousand loop iterations, for uneven workloads. */
export function work(units: number): number {
  let x = 0;
  for (let i = 0; i < units * 1000; i++) x = (x * 31 + i) | 0;
  return x;
}
