/**
 * What holds a thread's event loop: a count, per thread, of the things in it that need the event loop to
 * turn (a producer with tasks pending, whose completions arrive by `Atomics.waitAsync`; a pool handle asked
 * of the owner, whose reply arrives by message).
 *
 * Why: a pool worker runs tasks in a loop and sleeps with `Atomics.wait` when idle, which blocks its event
 * loop. It yields to the event loop, and sleeps with `Atomics.waitAsync` instead, while something holds
 * it: its own async tasks (worker/loop.ts counts those) and whatever this count says, so that a producer
 * opened inside a pool task (`poolHandle()`) reads its completions even after the task returned.
 *
 * Invariants: every {@link holdEventLoop} is undone by one {@link releaseEventLoop}. The count lives in a
 * registry shared by every copy of filch loaded in the thread (found through `Symbol.for`), so a producer
 * of one copy holds the loop of a worker run by another.
 *
 * Threads: any; each thread has its own count.
 *
 * @module
 */

/** The registry key of this thread's count. */
const HOLDS_KEY = Symbol.for("filch.eventLoopHolds");

/** This thread's count (one object per thread, shared by every copy of filch in it). */
const holds: { count: number } = (() => {
  const registry = globalThis as unknown as Record<symbol, { count: number } | undefined>;
  return registry[HOLDS_KEY] ??= { count: 0 };
})();

/**
 * Something in this thread needs the event loop to turn until {@link releaseEventLoop}.
 *
 * @example Usage
 * ```ts
 * import { eventLoopHolds, holdEventLoop, releaseEventLoop } from "./holds.ts";
 * holdEventLoop();
 * console.log(eventLoopHolds() > 0); // true
 * releaseEventLoop();
 * ```
 */
export function holdEventLoop(): void {
  holds.count++;
}

/** Undoes one {@link holdEventLoop}. */
export function releaseEventLoop(): void {
  holds.count--;
}

/**
 * How many holds this thread's event loop has now.
 *
 * @returns The count (0: nothing here needs it).
 */
export function eventLoopHolds(): number {
  return holds.count;
}
