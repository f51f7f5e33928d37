/**
 * The shared-memory facade: the only module in `lib/` that touches `Atomics`.
 *
 * What it owns: the binding through which every load, store, read-modify-write, wait and notify on the
 * pool's SharedArrayBuffer is made, and every plain (unordered) read and write of a scheduling word. The deque, injector, sleep, latch and worker code reach shared memory
 * only as `mem.load(view, i)`, `mem.compareExchange(view, i, e, r)`, … — always through the `mem` object,
 * never destructured into locals, so that a test binding installed with {@link installSharedMemory}
 * sees every access (the controlled-interleaving harness makes each call a preemption point).
 *
 * This mirrors Tokio's `loom` module: the production code is the checked code. In production the binding
 * is `Atomics` itself; `bench/deque_bench.ts` measures the indirection (nothing measurable on Bun, 1–2 ns
 * per push+pop pair on V8).
 *
 * Invariants:
 * - JavaScript's `Atomics` are sequentially consistent for race-free programs, so the specs in `spec/`
 *   model each call here as one atomic step of an interleaving.
 * - `read` and `write` are plain accesses, for words one thread owns (a task record's header between the
 *   atomic operations that hand the record over): they are ordered only by those operations. The deque,
 *   the injector and the sleep protocol make none; the interleaving harness refuses them.
 * - Nothing else in `lib/` names `Atomics` (a test greps for it).
 *
 * Threads: any thread may call any function here.
 *
 * @module
 */

/** The int32 view every scheduling word lives in. */
export type Int32View = Int32Array;

/** The result of {@link SharedMemory.wait}, as `Atomics.wait` reports it. */
export type WaitResult = "ok" | "not-equal" | "timed-out";

/** The result of {@link SharedMemory.waitAsync}, as `Atomics.waitAsync` reports it. */
export type WaitAsyncResult =
  | { async: false; value: "not-equal" | "timed-out" }
  | { async: true; value: Promise<"ok" | "timed-out"> };

/**
 * Every shared-memory operation the pool performs. A binding supplies all of them.
 *
 * @example Usage
 * ```ts
 * import { mem } from "./atomics.ts";
 * const words = new Int32Array(new SharedArrayBuffer(8));
 * mem.store(words, 0, 7);
 * console.log(mem.load(words, 0)); // 7
 * ```
 */
export interface SharedMemory {
  /** Atomically reads `view[index]`. */
  load(view: Int32View, index: number): number;
  /**
   * Reads `view[index]` without ordering (a plain, unordered access). Only for a word no other thread
   * writes while this one may read it: the caller owns it, and the atomic operation that handed it over
   * (a queue pop, a steal's CAS, a latch load) orders it. Tear-free, as every aligned int32 access is.
   */
  read(view: Int32View, index: number): number;
  /**
   * Writes `view[index]` without ordering (a plain, unordered access). Only for a word no other thread
   * reads until an atomic operation of the writer publishes it (a queue push, a deque push, a state or
   * latch store), or whose racing readers take any recent value (statistics).
   */
  write(view: Int32View, index: number, value: number): void;
  /** Atomically writes `value` to `view[index]` and returns `value`. */
  store(view: Int32View, index: number, value: number): number;
  /** Writes `replacement` if `view[index] === expected`; returns the value that was there. */
  compareExchange(view: Int32View, index: number, expected: number, replacement: number): number;
  /** Adds `value`; returns the old value. */
  add(view: Int32View, index: number, value: number): number;
  /** Subtracts `value`; returns the old value. */
  sub(view: Int32View, index: number, value: number): number;
  /** Writes `value`; returns the old value. */
  exchange(view: Int32View, index: number, value: number): number;
  /** Bitwise-ors `value` in; returns the old value. */
  or(view: Int32View, index: number, value: number): number;
  /** Bitwise-ands `value` in; returns the old value. */
  and(view: Int32View, index: number, value: number): number;
  /** Sleeps while `view[index] === expected` (check and sleep are one atomic step), up to `timeout` ms. */
  wait(view: Int32View, index: number, expected: number, timeout?: number): WaitResult;
  /** Like {@link SharedMemory.wait} but returns a promise, so the caller's event loop keeps running. */
  waitAsync(view: Int32View, index: number, expected: number, timeout?: number): WaitAsyncResult;
  /** Wakes up to `count` waiters on `view[index]` (all when omitted); returns how many were woken. */
  notify(view: Int32View, index: number, count?: number): number;
  /** A spin-wait hint to the CPU; no shared-memory effect. */
  pause(): void;
}

// Atomics.pause is new (ES2025 era); every runtime filch targets has it, but a browser may not.
const hasPause = typeof (Atomics as { pause?: unknown }).pause === "function";

/**
 * The production binding: `Atomics` itself.
 *
 * @example Usage
 * ```ts
 * import { atomicsBinding } from "./atomics.ts";
 * const words = new Int32Array(new SharedArrayBuffer(4));
 * atomicsBinding.add(words, 0, 2);
 * console.log(atomicsBinding.load(words, 0)); // 2
 * ```
 */
export const atomicsBinding: Readonly<SharedMemory> = Object.freeze({
  // The builtins themselves, not wrappers: they ignore `this`, and an engine that sees `mem.load` resolve
  // to the `Atomics.load` builtin inlines it as it would a direct call.
  load: Atomics.load as SharedMemory["load"],
  // Plain element accesses: no fence, no barrier. An Atomics.store costs 6–15 ns here, a plain write under
  // 1 ns; a fork writes a dozen record words that its deque push publishes anyway.
  read: (view: Int32View, index: number): number => view[index],
  write: (view: Int32View, index: number, value: number): void => {
    view[index] = value;
  },
  store: Atomics.store as SharedMemory["store"],
  compareExchange: Atomics.compareExchange as SharedMemory["compareExchange"],
  add: Atomics.add as SharedMemory["add"],
  sub: Atomics.sub as SharedMemory["sub"],
  exchange: Atomics.exchange as SharedMemory["exchange"],
  or: Atomics.or as SharedMemory["or"],
  and: Atomics.and as SharedMemory["and"],
  wait: Atomics.wait as SharedMemory["wait"],
  waitAsync: Atomics.waitAsync as unknown as SharedMemory["waitAsync"],
  notify: Atomics.notify as SharedMemory["notify"],
  pause: hasPause ? (Atomics as unknown as { pause: () => void }).pause : (): void => {},
});

/**
 * The binding in force. Call through it on every access (`mem.load(view, i)`), never keep a method in a
 * local, so that {@link installSharedMemory} reaches every call site.
 *
 * @example Usage
 * ```ts
 * import { mem } from "./atomics.ts";
 * const words = new Int32Array(new SharedArrayBuffer(4));
 * console.log(mem.compareExchange(words, 0, 0, 1)); // 0: the exchange happened
 * ```
 */
export const mem: SharedMemory = { ...atomicsBinding };

/**
 * Replaces the binding in force for this thread, and returns a function that restores the previous one.
 * Used by the interleaving harness; production code never calls it.
 *
 * @param binding The operations to route every shared-memory access through.
 * @returns A function that puts the previous binding back.
 * @throws {TypeError} If `binding` lacks one of the operations.
 *
 * @example Usage
 * ```ts
 * import { atomicsBinding, installSharedMemory, mem } from "./atomics.ts";
 * let loads = 0;
 * const restore = installSharedMemory({ ...atomicsBinding, load: (v, i) => (loads++, atomicsBinding.load(v, i)) });
 * mem.load(new Int32Array(new SharedArrayBuffer(4)), 0);
 * restore();
 * console.log(loads); // 1
 * ```
 */
export function installSharedMemory(binding: SharedMemory): () => void {
  const previous: SharedMemory = { ...mem };
  for (const key of Object.keys(atomicsBinding) as (keyof SharedMemory)[]) {
    if (typeof binding[key] !== "function") {
      throw new TypeError(
        `Cannot install shared-memory binding as '${key}' must be a function: received ${typeof binding[key]}`,
      );
    }
  }
  const target = mem as unknown as Record<string, unknown>;
  for (const key of Object.keys(atomicsBinding) as (keyof SharedMemory)[]) {
    // Bound, so a binding may be a class instance whose methods use `this`.
    target[key] = (binding[key] as (...args: unknown[]) => unknown).bind(binding);
  }
  return () => {
    Object.assign(mem, previous);
  };
}
