/**
 * The room-wait model's words: the producers model's layout (`../producers/layout.ts`: the pool's control
 * words, the remote slots' lines, the completion queues, the free list) for the code under test, and the
 * test's own words (what each program reports) in that layout's test area. The gate words are the
 * kernel's (`../../kernel/words.ts`).
 *
 * @module
 */

import { PWORK_BYTES } from "../producers/layout.ts";

/** The waiter's slot (a producer in another thread). */
export const WAITER_SLOT = 1;
/** Tasks the settler holds pending at the start (opened in the model's set-up steps), settled one by one. */
export const TASKS = 2;
/** The settler's set-up steps: one shared access a task opened (its pending word's add). */
export const SETUP_STEPS = TASKS;

/** Byte offset of the test's words ({@link RWork}). */
export const RWORK_BYTES = PWORK_BYTES;
export const RWORK_WORDS = 16;

/** The test's words, written by the threads with plain `Atomics` (bookkeeping, not scheduled). */
export const RWork = Object.freeze({
  /** The settler: how many of its tasks it settled (written at its end). */
  SETTLED: 0,
  /** The waiter: 1 if its `waitForRoom()` resolved (written at its end). */
  RESOLVED: 1,
});

/** What a simulated thread runs. */
export const RRole = Object.freeze({
  NONE: 0,
  /** Its tasks settled one by one, each followed by the room's wake (`TaskLedger.settle`, `Room.released`). */
  SETTLER: 1,
  /** `Room.waitForRoom()` and its reader's jobs (`CompletionReader.arm`, `onWake`, the drain's room check). */
  WAITER: 2,
});
