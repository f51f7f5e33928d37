/**
 * The task module of `forkjoin_bench.ts`: the four examples' task functions in one module (so one pool
 * runs them all), and two timers that measure fib on the worker itself, without the round trip.
 *
 * @module
 */
import { fib, fibSequential } from "../examples/fib/tasks.ts";

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
