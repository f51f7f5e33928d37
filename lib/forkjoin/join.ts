/**
 * Fork-join inside tasks: `join`, `scope`, and the parallel loops built on them (Rayon's model).
 *
 * What it owns: the public fork-join API and its contract with the worker that runs the calling task
 * (the {@link ForkJoinHost}, implemented by `worker/fork_join.ts`). A task calls `join(a, b, ...args)`:
 * 1. `b` (an exported function of the pool's task module) and its arguments become a subtask record, and
 *    its handle is pushed on the calling worker's deque, where idle workers can steal it (oldest first:
 *    the largest pieces of a recursive split), unless no thief could want it (a pool of one worker, or a
 *    deque already holding older work for thieves) and its arguments are primitives or shared memory
 *    (which it would receive unchanged either way): then `b` runs inline after `a` (see `keepsInline` in
 *    `worker/fork_join.ts`);
 * 2. `a` runs inline;
 * 3. the worker pops its deque: if it gets `b` back (nobody stole it), it runs `b` inline; otherwise it
 *    runs other tasks until `b`'s latch is set (the thief sets it, then notifies), and sleeps on the
 *    latch when there is nothing else to do;
 * 4. both results return; if either side threw, `join` throws after both have settled, `a`'s error first.
 *
 * Only `b` must cross threads (a task reference plus encoded arguments); `a` can be any closure.
 *
 * Outside a pool worker (on the main thread, or in a plain call), `join` runs `a` then `b` inline and the
 * loops run sequentially, so the same code works, and tests, without a pool.
 *
 * Threads: the functions here are called from task code; each uses the host of the thread it runs on.
 *
 * Sources: Rayon (`rayon-core/src/join/`, `scope/`: join semantics, "help while waiting", errors after
 * both sides); Blumofe and Leiserson, "Scheduling multithreaded computations by work stealing" (1999).
 *
 * @module
 */

import { currentHost, type ForkJoinHost, type TaskFunction } from "./host.ts";

export type { TaskFunction } from "./host.ts";

/** A task function, or its id once it has crossed threads as an argument of a forked piece. */
type TaskRef = TaskFunction | number;

function resolve(ref: TaskRef): TaskFunction {
  return typeof ref === "number" ? currentHost()!.task(ref) : ref;
}

function portable(ref: TaskRef): number {
  return typeof ref === "number" ? ref : currentHost()!.taskId(ref);
}

/**
 * Runs `a()` inline and `b(...args)` possibly on another worker, in parallel; returns both results.
 *
 * @param a Any function; runs on the calling thread.
 * @param b An exported function of the pool's task module (so any worker can run it).
 * @param args `b`'s arguments (data that can cross threads, as for `Pool.run`).
 * @returns `[a(), b(...args)]`. `b` must be synchronous; `a`'s value is returned as it is.
 * @throws `a`'s error if `a` threw (after `b` has settled), else `b`'s error.
 * @throws {TypeError} If `b` is not an exported function of the task module, an argument cannot cross
 * threads, or `b` returned a promise (whether it ran inline or on another worker: one contract).
 *
 * @example Usage
 * ```ts
 * import { join } from "@filch/filch";
 * export function fib(n: number): number {
 *   if (n < 2) return n;
 *   const [x, y] = join(() => fib(n - 1), fib, n - 2);
 *   return x + y;
 * }
 * console.log(fib(10)); // 55 (inline here: no pool worker runs this example)
 * ```
 */
export function join<A, F extends TaskFunction>(a: () => A, b: F, ...args: Parameters<F>): [A, ReturnType<F>] {
  if (typeof a !== "function") {
    throw new TypeError(`Cannot join as 'a' must be a function: received ${describe(a)}`);
  }
  if (typeof b !== "function") {
    throw new TypeError(`Cannot join as 'b' must be an exported task function: received ${describe(b)}`);
  }
  const h = currentHost();
  // No pool worker here (or no thief that could want b, or no record, room or blocks to fork into): b runs
  // inline after a. The fork gets a copy of `args`, not `args`: a rest array that reaches a call it is not
  // inlined into escapes, and JavaScriptCore then builds it at every join, not only at the rare one that
  // forks (on Bun, 2 workers, fib(25): 48 ns a join with `args`, 31-37 with the copy, 25 on 1 worker,
  // where no join forks; bench/lazy_join.ts --overhead). Element reads do not make it escape.
  const handle = h === undefined || h.keepsInline(b, args) ? -1 : h.fork(b, copyOf(args));
  // No tuples on this path: a join that nobody steals costs about 0.1 µs, and allocations show in that.
  let aValue: A;
  try {
    aValue = a();
  } catch (aError) {
    // b must settle before join returns, whatever a did; a's error wins.
    try {
      if (handle < 0) runHere(h, b, args);
      else h!.joinForked(handle);
    } catch {
      // b's error is dropped: a's is the one reported.
    }
    throw aError;
  }
  const bValue = handle < 0 ? runHere(h, b, args) : h!.joinForked(handle);
  return [aValue, bValue as ReturnType<F>];
}

/** A new array of `args`'s elements, read one by one (see `join`: not `slice`, which is a call). */
function copyOf(args: unknown[]): unknown[] {
  const copy = new Array(args.length);
  for (let i = 0; i < args.length; i++) copy[i] = args[i];
  return copy;
}

/** Calls a function that was not forked: through the pool worker's host if there is one (see `inline`). */
function runHere(h: ForkJoinHost | undefined, fn: TaskFunction, args: unknown[]): unknown {
  return h === undefined ? callInline(fn, args) : h.inline(fn, args);
}

/**
 * Calls a forked function inline (no pool worker, nothing to fork into, or no thief that wants it). A
 * promise from it is an error, as when a worker runs it: `join` and `scope` have one contract whoever
 * runs `b`.
 *
 * @param fn The forked function.
 * @param args Its arguments.
 * @returns What it returned.
 * @throws {TypeError} If it returned a promise (see {@link asyncForkError}); else what it threw.
 *
 * @example Usage
 * ```ts
 * import { callInline } from "./join.ts";
 * console.log(callInline((a: number, b: number) => a + b, [1, 2])); // 3
 * ```
 */
export function callInline(fn: TaskFunction, args: unknown[]): unknown {
  const result = fn(...args);
  if (isThenable(result)) throw asyncForkError(fn);
  return result;
}

/**
 * The error of a forked task (`join`'s `b`, or a scope's spawn) that returned a promise, wherever it ran.
 *
 * @param fn The forked function.
 * @returns A TypeError that says why and what to do.
 *
 * @example Usage
 * ```ts
 * import { asyncForkError } from "./join.ts";
 * console.log(asyncForkError(async function load() {}).name); // TypeError
 * ```
 */
export function asyncForkError(fn: TaskFunction): TypeError {
  return new TypeError(
    `Cannot join '${fn.name || "anonymous"}' as it returned a promise: a forked task must be synchronous ` +
      "(await inside a task started with pool.run instead, or make the function synchronous)",
  );
}

/**
 * Whether `value` is a thenable (has a `then` method). Reads `then` once; a getter that throws throws.
 *
 * @param value Anything.
 * @returns `true` for a promise or any object or function with a callable `then`.
 *
 * @example Usage
 * ```ts
 * import { isThenable } from "./join.ts";
 * console.log(isThenable(Promise.resolve(1)), isThenable(1)); // true false
 * ```
 */
export function isThenable(value: unknown): value is PromiseLike<unknown> {
  return value !== null && (typeof value === "object" || typeof value === "function") &&
    typeof (value as { then?: unknown }).then === "function";
}

/** The handle `scope`'s body gets: spawn tasks that all settle before `scope` returns. */
export interface Scope {
  /**
   * Forks `fn(...args)`; it runs on this worker or another before the scope ends.
   *
   * @param fn An exported function of the pool's task module.
   * @param args Its arguments.
   */
  spawn<F extends TaskFunction>(fn: F, ...args: Parameters<F>): void;
}

/**
 * Runs `body` with a {@link Scope}; every task spawned in it settles before `scope` returns.
 *
 * @param body Spawns tasks through its argument; may also compute.
 * @returns `body`'s result, and the spawned tasks' results in spawn order.
 * @throws {AggregateError} If `body` or any spawned task threw: every error, `body`'s first.
 *
 * @example Usage
 * ```ts
 * import { scope } from "@filch/filch";
 * export function square(x: number): number {
 *   return x * x;
 * }
 * const [, squares] = scope((s) => {
 *   for (let i = 0; i < 4; i++) s.spawn(square, i);
 * });
 * console.log(squares); // [ 0, 1, 4, 9 ]
 * ```
 */
export function scope<R>(body: (s: Scope) => R): [R, unknown[]] {
  if (typeof body !== "function") {
    throw new TypeError(`Cannot open scope as 'body' must be a function: received ${describe(body)}`);
  }
  const h = currentHost();
  const forked: { handle: number; fn: TaskFunction; args: unknown[] }[] = [];
  const s: Scope = {
    spawn(fn, ...args) {
      if (typeof fn !== "function") {
        throw new TypeError(
          `Cannot spawn in scope as 'fn' must be an exported task function: received ${describe(fn)}`,
        );
      }
      forked.push({ handle: h === undefined ? -1 : h.fork(fn, args), fn, args });
    },
  };
  const errors: unknown[] = [];
  let result: R | undefined;
  try {
    result = body(s);
  } catch (error) {
    errors.push(error);
  }
  const results = new Array<unknown>(forked.length);
  // Newest first: the newest forks are on top of our deque, so each pop-back finds its own task.
  for (let i = forked.length - 1; i >= 0; i--) {
    const { handle, fn, args } = forked[i];
    try {
      results[i] = handle < 0 || h === undefined ? runHere(h, fn, args) : h.joinForked(handle);
    } catch (error) {
      errors.push(error);
    }
  }
  if (errors.length > 0) {
    throw new AggregateError(errors, `scope: ${errors.length} of ${forked.length + 1} parts threw`);
  }
  return [result as R, results];
}

/**
 * Calls `body(lo, hi, ...extra)` over `[start, end)` split into pieces of at most `grain` indices, in
 * parallel by recursive halving with `join` (idle workers steal the largest halves).
 *
 * @param start First index.
 * @param end One past the last index.
 * @param grain Largest piece run by one call: a positive integer.
 * @param body An exported task function `(lo, hi, ...extra) => void`.
 * @param extra More arguments for `body` (for example a typed array on a SharedArrayBuffer).
 * @throws {RangeError} If `start`/`end` are not integers with `start <= end`, or `grain` is not a positive integer.
 * @throws {TypeError} In a pool worker, if an `extra` typed array or buffer is not on a SharedArrayBuffer
 * (pieces on other workers would write to copies).
 *
 * @example Usage
 * ```ts
 * import { parallelFor } from "@filch/filch";
 * export function fill(lo: number, hi: number, out: Int32Array): void {
 *   for (let i = lo; i < hi; i++) out[i] = i * 2;
 * }
 * const out = new Int32Array(new SharedArrayBuffer(40));
 * parallelFor(0, 10, 3, fill, out);
 * console.log(out[9]); // 18
 * ```
 */
export function parallelFor<F extends (lo: number, hi: number, ...extra: never[]) => unknown>(
  start: number,
  end: number,
  grain: number,
  body: F,
  ...extra: unknown[]
): void {
  checkRange("parallelFor", start, end, grain);
  if (currentHost() !== undefined) extra.forEach((value, i) => requireShared("parallelFor", `extra[${i}]`, value));
  if (start === end) return; // as inline: no piece, rather than one empty piece
  forRange(start, end, grain, body as TaskFunction, extra);
}

/**
 * Reduces `[start, end)`: `map(lo, hi, ...extra)` on pieces of at most `grain` indices, in parallel, and
 * `combine(left, right)` pairwise in index order.
 *
 * @param start First index.
 * @param end One past the last index (`start < end`).
 * @param grain Largest piece: a positive integer.
 * @param map An exported task function `(lo, hi, ...extra) => T`.
 * @param combine An exported task function `(left: T, right: T) => T`, associative.
 * @param extra More arguments for `map`.
 * @returns The combined value.
 * @throws {RangeError} If the range is empty or malformed, or `grain` is not a positive integer.
 *
 * @example Usage
 * ```ts
 * import { parallelReduce } from "@filch/filch";
 * export function sumRange(lo: number, hi: number): number {
 *   let s = 0;
 *   for (let i = lo; i < hi; i++) s += i;
 *   return s;
 * }
 * export function plus(a: number, b: number): number {
 *   return a + b;
 * }
 * console.log(parallelReduce(0, 100, 10, sumRange, plus)); // 4950
 * ```
 */
export function parallelReduce<T>(
  start: number,
  end: number,
  grain: number,
  map: (lo: number, hi: number, ...extra: never[]) => T,
  combine: (left: T, right: T) => T,
  ...extra: unknown[]
): T {
  checkRange("parallelReduce", start, end, grain);
  if (start === end) {
    throw new RangeError(`Cannot run parallelReduce as the range is empty: received [${start}, ${end})`);
  }
  return reduceRange(start, end, grain, map as TaskFunction, combine as TaskFunction, extra) as T;
}

/**
 * Maps every element of `array` (a typed array, usually on a SharedArrayBuffer) in place:
 * `array[i] = fn(array[i], i)`, in parallel pieces of at most `grain` elements.
 *
 * @param array The typed array to update (on a SharedArrayBuffer, so every worker sees the same memory).
 * @param grain Largest piece: a positive integer.
 * @param fn An exported task function `(value, index) => number` (or bigint for BigInt arrays).
 * @throws {RangeError} If `grain` is not a positive integer.
 * @throws {TypeError} In a pool worker, if `array` is not on a SharedArrayBuffer.
 *
 * @example Usage
 * ```ts
 * import { parallelMapInPlace } from "@filch/filch";
 * export function double(x: number): number {
 *   return 2 * x;
 * }
 * const data = new Float64Array(new SharedArrayBuffer(32)).fill(1.5);
 * parallelMapInPlace(data, 2, double);
 * console.log(data[3]); // 3
 * ```
 */
export function parallelMapInPlace(
  array: Int8Array | Uint8Array | Int16Array | Uint16Array | Int32Array | Uint32Array | Float32Array | Float64Array,
  grain: number,
  fn: (value: number, index: number) => number,
): void {
  checkRange("parallelMapInPlace", 0, array.length, grain);
  const h = currentHost();
  if (h !== undefined) requireShared("parallelMapInPlace", "array", array);
  if (h === undefined) {
    mapPiece(0, array.length, array, fn as TaskFunction);
    return;
  }
  forRange(0, array.length, grain, h.builtin("mapPiece"), [array, h.taskId(fn as TaskFunction)]);
}

/** The built-in tasks: every worker registers them under these names, after the module's own exports. */
export const BUILTIN_TASKS: Readonly<Record<string, TaskFunction>> = Object.freeze({
  // `extra` spread, not one array: shared views and primitives only, so that a worker with no thief to
  // offer the piece to may keep it inline (worker/fork_join.ts, keepsInline; an array is an object it would copy).
  forRange: (start: number, end: number, grain: number, body: number, ...extra: unknown[]) =>
    forRange(start, end, grain, body, extra),
  reduceRange: (start: number, end: number, grain: number, map: number, combine: number, ...extra: unknown[]) =>
    reduceRange(start, end, grain, map, combine, extra),
  mapPiece: (lo: number, hi: number, array: Float64Array, fn: number) => mapPiece(lo, hi, array, fn),
});

function forRange(start: number, end: number, grain: number, body: TaskRef, extra: unknown[]): void {
  const host = currentHost();
  if (host === undefined) {
    for (let lo = start; lo < end; lo += grain) resolve(body)(lo, Math.min(lo + grain, end), ...extra);
    return;
  }
  if (end - start <= grain) {
    resolve(body)(start, end, ...extra);
    return;
  }
  const mid = start + Math.floor((end - start) / 2);
  const id = portable(body);
  join(() => forRange(start, mid, grain, id, extra), host.builtin("forRange"), mid, end, grain, id, ...extra);
}

function reduceRange(
  start: number,
  end: number,
  grain: number,
  map: TaskRef,
  combine: TaskRef,
  extra: unknown[],
): unknown {
  if (end - start <= grain) return resolve(map)(start, end, ...extra);
  const mid = start + Math.floor((end - start) / 2);
  const host = currentHost();
  if (host === undefined) {
    return resolve(combine)(
      reduceRange(start, mid, grain, map, combine, extra),
      reduceRange(mid, end, grain, map, combine, extra),
    );
  }
  const mapId = portable(map);
  const combineId = portable(combine);
  const [left, right] = join(
    () => reduceRange(start, mid, grain, mapId, combineId, extra),
    host.builtin("reduceRange"),
    mid,
    end,
    grain,
    mapId,
    combineId,
    ...extra,
  );
  return resolve(combine)(left, right);
}

function mapPiece(lo: number, hi: number, array: { [i: number]: number }, fn: TaskRef): void {
  const f = resolve(fn);
  for (let i = lo; i < hi; i++) array[i] = f(array[i], i) as number;
}

/** Throws a RangeError naming `what` unless `start <= end` are integers and `grain` a positive integer. */
function checkRange(what: string, start: number, end: number, grain: number): void {
  if (!Number.isInteger(start) || !Number.isInteger(end) || start > end) {
    throw new RangeError(
      `Cannot run ${what} as 'start' and 'end' must be integers with start <= end: received ${start} and ${end}`,
    );
  }
  if (!Number.isInteger(grain) || grain <= 0) {
    throw new RangeError(`Cannot run ${what} as 'grain' must be a positive integer: received ${grain}`);
  }
}

/**
 * In a pool worker, pieces run on other workers with copies of their arguments: a typed array or buffer
 * that is not shared memory would be written on a copy, and the caller would never see the writes.
 */
function requireShared(what: string, name: string, value: unknown): void {
  const buffer = ArrayBuffer.isView(value) ? value.buffer : value instanceof ArrayBuffer ? value : undefined;
  if (buffer === undefined || buffer instanceof SharedArrayBuffer) return;
  throw new TypeError(
    `Cannot run ${what} as '${name}' is not on a SharedArrayBuffer: its pieces run on other workers, ` +
      "which would write to copies; allocate it with new SharedArrayBuffer(...) (e.g. new Float64Array(new SharedArrayBuffer(n * 8)))",
  );
}

function describe(value: unknown): string {
  return value === null ? "null" : typeof value;
}
