/**
 * filch: a work-stealing thread pool for JavaScript, with a model-checked core.
 *
 * This release ships the core's foundation: a fixed-capacity Chase-Lev work-stealing deque of int32 task
 * handles that lives in a SharedArrayBuffer, so any thread holding the buffer can push, pop and steal
 * without messages. The owner pushes and pops at the bottom (LIFO); any thread steals the oldest task
 * (FIFO), one at a time or half the deque into its own.
 *
 * @example Usage
 * ```ts
 * import { Deque, dequeRegionBytes, EMPTY, initDeque, Stealer } from "./mod.ts";
 *
 * const capacity = 64;
 * const region = { buffer: new SharedArrayBuffer(dequeRegionBytes(capacity)), byteOffset: 0, capacity };
 * initDeque(region);
 * const owner = new Deque(region); // one thread: push and pop
 * const thief = new Stealer(region); // any thread (send `region` to it): steal
 * owner.push(1);
 * owner.push(2);
 * console.log(thief.steal()); // 1: thieves take the oldest
 * console.log(owner.pop()); // 2: the owner takes the newest
 * console.log(owner.pop() === EMPTY); // true
 * ```
 *
 * @module
 */

export { Deque, type DequeRegion, EMPTY, initDeque, MAX_TASK_VALUE, RETRY, Stealer } from "./lib/deque.ts";
export { dequeRegionBytes, MAX_DEQUE_CAPACITY, MIN_DEQUE_CAPACITY } from "./lib/layout.ts";
