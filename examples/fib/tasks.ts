/**
 * Fork-join Fibonacci: the task module of `examples/fib/main.ts`.
 *
 * `fib(n, cutoff)` forks `fib(n - 2)` with `join` and computes `fib(n - 1)` itself, down to `cutoff`,
 * below which it runs the plain recursion: the cutoff keeps the pieces big enough that a fork (a few
 * hundred nanoseconds) is small beside the work it hands out. Idle workers steal the oldest forks, which
 * are the biggest subtrees.
 *
 * @module
 */
import { join } from "../../mod.ts";

/**
 * The n-th Fibonacci number, forking at every level above `cutoff`.
 *
 * @param n Which number (0 → 0, 1 → 1).
 * @param cutoff At or below it, no more forks: the plain recursion runs.
 * @returns fib(n).
 */
export function fib(n: number, cutoff: number): number {
  if (n <= cutoff || n < 2) return fibSequential(n);
  const [a, b] = join(() => fib(n - 1, cutoff), fib, n - 2, cutoff);
  return a + b;
}

/**
 * The plain recursive Fibonacci: the sequential program.
 *
 * @param n Which number.
 * @returns fib(n).
 */
export function fibSequential(n: number): number {
  return n < 2 ? n : fibSequential(n - 1) + fibSequential(n - 2);
}

/** How many joins `fib(n, cutoff)` makes: one per call with `n > cutoff` and `n >= 2`. */
export function fibJoins(n: number, cutoff: number): number {
  if (n <= cutoff || n < 2) return 0;
  return 1 + fibJoins(n - 1, cutoff) + fibJoins(n - 2, cutoff);
}
