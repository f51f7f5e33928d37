/**
 * The join latch: a forked task's "done" word, set once by whoever finishes the task and waited on by the
 * one worker that joins it.
 *
 * What it owns: the protocol on one latch word (a task record's `RecordWords.latch`, see `task.ts`), not
 * the word itself: the record's owner allocates it, clears it (plain write, published by the fork's deque
 * push) and frees it.
 *
 * Invariants:
 * - The word goes from {@link UNSET} to {@link SET} once per fork, and never back while the joiner may
 *   read it; or, if the forker died, from UNSET to {@link ORPHANED} (the main thread's compare-exchange,
 *   `recovery.ts`) and then to SET. Exactly one side frees the record: the finisher whose exchange
 *   returns ORPHANED (nobody will join), or the main thread whose compare-exchange finds SET.
 * - Set, then wake ({@link setLatch}): the outcome and payload the finisher wrote before its exchange are
 *   published by it to the joiner whose load sees {@link SET}.
 * - Check, then wait on {@link UNSET} ({@link latchIsSet}, {@link waitLatch}): `Atomics.wait` compares and
 *   blocks in one step, so a joiner that checked before the store either blocks before it — and the
 *   notify after the store wakes it — or compares after it and does not block. No wakeup is lost, and the
 *   joiner's timeout is never what ends its wait once the latch is set.
 *
 * Sources: Rayon's `latch.rs` (a set-once word, set then wake the sleeping owner); Linux futex semantics
 * of `Atomics.wait` (check-and-sleep in one step).
 *
 * Threads: `setLatch` by the worker that ran the forked task (a thief), or by the main thread for a task
 * whose worker died (`recovery.ts`); `latchIsSet` and `waitLatch` by the joining worker only.
 *
 * Specified in `spec/Lifecycle.tla` (fork-join): each shared-memory access names its action there.
 *
 * @module
 */

import { type Int32View, mem } from "./atomics.ts";

/** The latch word: the forked task has not finished. */
export const UNSET = 0;
/** The latch word: the forked task finished; its outcome and payload are written. */
export const SET = 1;
/** The latch word: the forker died, nobody will join; whoever finishes the task frees its record. */
export const ORPHANED = 2;

/**
 * The finisher only, after writing the task's outcome and payload. Sets the latch, then wakes the joiner
 * if it waits on it.
 *
 * @param words The view holding the latch word.
 * @param at The latch word's index.
 * @returns `false` if the task was orphaned (nobody will join it: free its record), else `true`.
 *
 * @example Usage
 * ```ts
 * import { latchIsSet, setLatch } from "./latch.ts";
 * const words = new Int32Array(new SharedArrayBuffer(4));
 * console.log(setLatch(words, 0)); // true: a joiner will read it
 * console.log(latchIsSet(words, 0)); // true
 * ```
 */
export function setLatch(words: Int32View, at: number): boolean {
  // Publishes the outcome and payload to the joiner whose load sees SET. An exchange, not a store: the
  // main thread may have orphaned the task (its forker died), and then the record is ours to free.
  if (mem.exchange(words, at, SET) === ORPHANED) return false; // spec: FinishSetLatch
  // After the store: a joiner blocked before it (on UNSET) wakes; one that compares after it never blocks.
  mem.notify(words, at); // spec: FinishNotifyLatch
  return true;
}

/**
 * Any thread but the finisher's: marks a latch whose joiner will never come (its forker died, or its
 * join was cut short) as ORPHANED, so that whoever finishes the task frees its record. A compare-exchange
 * against the finisher's exchange in {@link setLatch}: exactly one of the two sides frees the record.
 *
 * @param words The word array.
 * @param at The latch's index in `words`.
 * @returns The latch's value before: UNSET if it is orphaned now (the finisher will free the record),
 * SET if the task had finished (the caller frees the record), ORPHANED if it was orphaned already.
 *
 * @example Usage
 * ```ts
 * import { ORPHANED, orphanLatch, setLatch, UNSET } from "./latch.ts";
 * const words = new Int32Array(new SharedArrayBuffer(4));
 * console.log(orphanLatch(words, 0) === UNSET); // true: whoever finishes frees the record
 * console.log(orphanLatch(words, 0) === ORPHANED); // true: a second orphaning changes nothing
 * console.log(setLatch(words, 0)); // false: the finisher sees ORPHANED, and frees it
 * ```
 */
export function orphanLatch(words: Int32View, at: number): number {
  // Pairs with setLatch's exchange: whichever of the two comes second sees the other's value.
  return mem.compareExchange(words, at, UNSET, ORPHANED); // spec: DiedRejectRunning
}

/**
 * The joiner only. Whether the forked task finished; if so, its outcome and payload may be read.
 *
 * @param words The view holding the latch word.
 * @param at The latch word's index.
 * @returns `true` once the finisher's store is visible.
 *
 * @example Usage
 * ```ts
 * import { latchIsSet } from "./latch.ts";
 * console.log(latchIsSet(new Int32Array(new SharedArrayBuffer(4)), 0)); // false
 * ```
 */
export function latchIsSet(words: Int32View, at: number): boolean {
  // Pairs with setLatch's exchange: seeing SET orders the reads of the outcome after it.
  return mem.load(words, at) !== UNSET; // spec: JoinReadLatch
}

/**
 * The joiner only, after {@link latchIsSet} returned false and it found nothing else to do. Blocks while the
 * latch is unset, until the finisher's notify or `timeoutMs` (whichever first); returns at once if it is set.
 * The caller checks the latch again afterwards.
 *
 * @param words The view holding the latch word.
 * @param at The latch word's index.
 * @param timeoutMs The longest wait, in ms (work can appear that nobody tells the joiner about).
 *
 * @example Usage
 * ```ts
 * import { setLatch, waitLatch } from "./latch.ts";
 * const words = new Int32Array(new SharedArrayBuffer(4));
 * setLatch(words, 0);
 * waitLatch(words, 0, 1000); // returns at once: the latch is set
 * ```
 */
export function waitLatch(words: Int32View, at: number, timeoutMs: number): void {
  // Compares with UNSET and blocks in one step: a set that came after the caller's check is seen here.
  mem.wait(words, at, UNSET, timeoutMs); // spec: JoinWaitLatch
}
