/**
 * Stack headroom for a step that has no repair: {@link reserveStack} fails, with the runtime's own
 * RangeError, unless the stack can take a fixed number of frames more than the caller's depth. A step that
 * calls it first and then uses fewer frames than that cannot be cut short by a stack overflow halfway:
 * called from deep in a recursion (a task graph submitted from a recursive function, say), it either fails
 * before it has changed anything or runs to its end.
 *
 * What it owns: the probe. Its frames are small ones of its own; the steps that reserve with it are
 * bounded in depth (no recursion but into the caller's own data, whose overflow they catch at their own
 * depth), and {@link STACK_RESERVE_FRAMES} leaves them several times what they use (tests/pool/
 * graph_stack_test.ts sweeps the limit across a graph's submission on Deno, Node and Bun).
 *
 * Why a reserve and not a repair: a submission of a single task is repaired at the next call from a
 * shallow depth (producer/admission.ts), as its steps are a few, noted one by one; a graph's placement
 * takes and writes many records and opens an entry for each returning node before it publishes anything,
 * and a refusal undoes all of it, which could itself overflow at the same depth.
 *
 * Threads: any.
 *
 * @module
 */

/**
 * The frames {@link reserveStack} makes sure of, by default: each has 16 arguments, which every runtime
 * here puts on the stack, so a frame of the probe takes about 2.6 times the stack of a frame with none
 * (measured on Node, Deno and Bun: how deep each recursion goes before it overflows), and 256 of them
 * take about what 670 small ones do, in about 1 µs.
 */
export const STACK_RESERVE_FRAMES = 256;

/** Counted after each return: the recursive call is not in tail position (JavaScriptCore runs tail calls in constant stack). */
let returns = 0;

/** Calls itself `n` times, each frame with 16 arguments: throws the runtime's RangeError if they do not fit. */
function descend(
  n: number,
  a: number,
  b: number,
  c: number,
  d: number,
  e: number,
  f: number,
  g: number,
  h: number,
  i: number,
  j: number,
  k: number,
  l: number,
  m: number,
  o: number,
  p: number,
): number {
  if (n <= 0) return returns;
  const result = descend(n - 1, b, c, d, e, f, g, h, i, j, k, l, m, o, p, a);
  returns++;
  return result + a;
}

/**
 * Throws the runtime's stack-overflow RangeError unless `frames` more frames fit on the stack now.
 *
 * @param frames How many of the probe's frames to make room for.
 * @throws {RangeError} The runtime's "Maximum call stack size exceeded", if they do not fit.
 *
 * @example Usage
 * ```ts
 * import { reserveStack } from "./stack.ts";
 * reserveStack(); // at a shallow depth: returns
 * const deep = (n: number): number => (n === 0 ? (reserveStack(), 0) : deep(n - 1) + 1);
 * console.log(deep(10)); // 10
 * ```
 */
export function reserveStack(frames: number = STACK_RESERVE_FRAMES): void {
  descend(frames, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
}
