/**
 * Adopting what a task returned: a value, or a thenable whose settlement is the task's.
 *
 * What it owns: the two steps every place that runs a task function takes with its result (a submitted
 * task in runner.ts, a broadcast part in mail.ts, each task of a chunk in chunk.ts): read `then` once, then, if
 * it is a function, adopt the result through a real promise.
 *
 * Invariants:
 * - `then` is read once, by {@link thenOf}, inside the caller's `try`: a getter on it is user code, and a
 *   throw from it fails the task as a throw from the task would.
 * - {@link adopt} calls that `then` once, with `this` the result. The promise it returns settles once,
 *   whatever `then` does: throws (a rejection), calls back twice or calls both callbacks (the first call
 *   wins).
 *
 * Threads: any.
 *
 * @module
 */

/**
 * `value.then` if `value` is an object or a function (read once; its getter may throw), else undefined.
 *
 * @param value What a task function returned.
 * @returns Its `then`, to be tested with `typeof … === "function"` and passed to {@link adopt}.
 *
 * @example Usage
 * ```ts
 * import { thenOf } from "./thenable.ts";
 * console.log(typeof thenOf(Promise.resolve(1)), thenOf(1)); // function undefined
 * ```
 */
export function thenOf(value: unknown): unknown {
  return value !== null && (typeof value === "object" || typeof value === "function")
    ? (value as { then?: unknown }).then
    : undefined;
}

/**
 * Adopts thenable `value` through a real promise, calling its `then` (as {@link thenOf} read it) once.
 *
 * @param value The thenable.
 * @param then Its `then`, a function (the caller tested it).
 * @returns A promise that settles once, as the thenable first says.
 *
 * @example Usage
 * ```ts
 * import { adopt, thenOf } from "./thenable.ts";
 * const twice = { then: (ok: (v: number) => void) => (ok(1), ok(2)) };
 * console.log(await adopt(twice, thenOf(twice))); // 1
 * ```
 */
export function adopt(value: unknown, then: unknown): Promise<unknown> {
  return new Promise((resolve, reject) =>
    (then as (res: unknown, rej: unknown) => unknown).call(value, resolve, reject)
  );
}
