/**
 * The kill-guard model's layout: where the controller's side (`model.ts`) and the simulated threads
 * (`thread.ts`) find the code under test's words (the worker's status line) and the test's own (the oracles'
 * INPOOL, KILLED and TASK words), and what each thread runs. The gate words and states are the kernel's
 * (`../../kernel/words.ts`).
 *
 * @module
 */

import { Global, MODEL_BYTES } from "../../kernel/words.ts";

/** Byte offset of the worker's status line (`lib/protocol/layout.ts`'s StatusWords, worker 0). */
export const KSTATUS_BYTES = MODEL_BYTES;
/** Byte offset of the test's own words ({@link KWork}). */
export const KWORK_BYTES = 6144;
/** The test's words: what the oracles read. */
export const KWork = Object.freeze({
  /** 1 while the worker is inside a pool step (between its Pool1 and Pool2 stores). */
  INPOOL: 0,
  /** Stored 1 by the main thread's terminate. */
  KILLED: 1,
  /** TASK + h: 1 while task h runs on the worker (`runsOn`). */
  TASK: 2,
});
export const KWORK_WORDS = 16;
export const KBUFFER_BYTES = 8192;
/** Handles 1..KMAX_HANDLES. */
export const KMAX_HANDLES = 3;

/** What a simulated thread runs. */
export const KRole = Object.freeze({
  NONE: 0,
  /** PARAM1 = user-code cycles; PARAM2 = 1: the task finishes after them. Holds handles 1..HANDLES. */
  WORKER: 1,
  /** PARAM1 = requests (handles 1..PARAM1, one after the other). */
  MAIN: 2,
  /** PARAM1 = a mask of the handles it settles (bit h). */
  SETTLER: 3,
});

/** Global words of this model. */
export const KGlobal = Object.freeze({
  /** How many handles the worker holds (1..HANDLES). */
  HANDLES: Global.MODEL,
});
