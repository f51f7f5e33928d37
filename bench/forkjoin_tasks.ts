/**
 * The task module of `forkjoin_bench.ts`: the four examples' task functions in one module (so one pool
 * runs them all), and two timers that measure fib on the worker itself, without the round trip.
 *
 * @module
 */
import { fib, fibSequential } from "../examples/fib/tasks.ts";
import { join } from "../mod.ts";
import { mem } from "../lib/protocol/atomics.ts";

export * from "../examples/fib/tasks.ts";
export * from "../examples/sort/tasks.ts";
export * from "../examples/mandelbrot/tasks.ts";
export * from "../examples/tree/tasks.ts";

/**
 * Times `fib(n, 1)` (a join at every level with n >= 2) on this thread.
 *
 * @param n Which Fibonacci number.
 * @returns The elapsed milliseconds and the result.
 */
export function timeJoinFib(n: number): [number, number] {
  const start = performance.now();
  const value = fib(n, 1);
  return [performance.now() - start, value];
}

/**
 * Times the plain recursive `fibSequential(n)` on this thread.
 *
 * @param n Which Fibonacci number.
 * @returns The elapsed milliseconds and the result.
 */
export function timePlainFib(n: number): [number, number] {
  const start = performance.now();
  const value = fibSequential(n);
  return [performance.now() - start, value];
}

/**
 * Holds the worker that runs it (blocked in a wait, so that it neither runs nor steals other tasks) until
 * `flag[0]` is set; sets `flag[1]` first, so the caller knows it runs.
 *
 * @param flag Two words on a SharedArrayBuffer.
 * @returns 0.
 */
export function holdWorker(flag: Int32Array): number {
  mem.store(flag, 1, 1);
  while (mem.load(flag, 0) === 0) mem.wait(flag, 0, 0, 100);
  return 0;
}

/**
 * On Bun: how many times JavaScriptCore compiled `join` with its optimizing tiers (DFG, and FTL from it)
 * in this worker so far (`bun:jsc`'s `numberOfDFGCompiles`): a function whose optimized code keeps
 * exiting is recompiled. Elsewhere -1.
 *
 * @returns The count, or -1 off Bun.
 */
export async function joinCompiles(): Promise<number> {
  if (!("Bun" in globalThis)) return -1;
  // A computed specifier: only Bun has this module, and the other runtimes' checkers need not resolve it.
  const specifier = "bun:jsc";
  const jsc = await import(specifier) as { numberOfDFGCompiles(fn: unknown): number };
  return jsc.numberOfDFGCompiles(join);
}
