/**
 * The levels model's layout: where the controller's side (`model.ts`) and the simulated threads
 * (`thread.ts`) find the code under test's words (the pool's control words, with the `levels` word, and the
 * three injector regions) and the test's own (what each worker took). The gate words and states are the
 * kernel's (`../../kernel/words.ts`): the code under test never waits (the queues are sized so that no patient push finds its queue full), so only its
 * loads, stores, compare-exchanges and the levels word's `or` are scheduled.
 *
 * @module
 */

import { Global, MODEL_BYTES } from "../../kernel/words.ts";

/** Byte offset of the control words (`lib/protocol/layout.ts`'s ControlWords: 3 cache lines). */
export const LCONTROL_BYTES = MODEL_BYTES;
/** Byte offset of level `l`'s injector region (high, normal, low). */
export function lqueueBytes(level: number): number {
  return 5120 + level * 1024;
}
/** Capacity of each queue: at least the tasks of a scenario, so a patient push never waits. */
export const LCAPACITY = 16;
/** Byte offset of the test's own words ({@link LWork}). */
export const LWORK_BYTES = 8704;
/** The test's words, read and written by the threads with plain `Atomics` (not scheduled: bookkeeping). */
export const LWork = Object.freeze({
  /** Tasks taken so far by all workers: a worker stops taking once it reaches the scenario's count. */
  TAKEN: 0,
  /** Per worker thread t (1, 2): RECORDS + (t - 1) * RECORD_WORDS: its count, then per take (task, op). */
  RECORDS: 16,
});
export const RECORD_WORDS = 64;
export const LWORK_WORDS = 16 + 2 * RECORD_WORDS;
export const LBUFFER_BYTES = 16384;
/** Tasks per scenario at most (each value is 101 + its index in the submission order). */
export const LMAX_TASKS = 16;

/** What a simulated thread runs. */
export const LRole = Object.freeze({
  NONE: 0,
  /** Submits the scenario's tasks in order (`pushPatiently`); PARAM1 = how many. */
  PRODUCER: 1,
  /** Takes (`take`) until the TAKEN word reaches PARAM1. */
  WORKER: 2,
});

/** Global words of this model: the scenario's levels, one per task. */
export const LGlobal = Object.freeze({
  /** LEVELS + i: the level of task i (0 high, 1 normal, 2 low). */
  LEVELS: Global.MODEL,
});
