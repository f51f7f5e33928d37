/**
 * The deque and queue models' layout: where the controller's side (`model.ts`, `../queue/model.ts`) and the
 * simulated threads (`thread.ts`, `../queue/thread.ts`) find each thread's program and results, the run's
 * capacity, and the regions of the code under test (`lib/protocol/deque.ts`'s deques, or
 * `lib/protocol/injector.ts`'s queue in region 0). The gate words and states are the kernel's
 * (`../../kernel/words.ts`); neither module waits, so only loads, stores and compare-exchanges are scheduled.
 *
 * A thread's program is a list of operations (code, argument); it writes each one's results (the value
 * returned, and a stealHalf's room and moved values) to its result words with plain `Atomics` between two
 * scheduled accesses (bookkeeping: one simulated thread runs at a time), and its operation index to the
 * kernel's OP word, so the controller knows which operation each access belongs to.
 *
 * @module
 */

import { Global, MAX_THREADS, MODEL_BYTES } from "../../kernel/words.ts";

/** Global words of these models. */
export const DGlobal = Object.freeze({
  /** Slots of every region in this run (a power of two). */
  CAPACITY: Global.MODEL,
});

/** Most operations a thread may run in one scenario. */
export const MAX_OPS = 16;
/** Per-operation result words: the value returned, a stealHalf's room before, then the values it moved. */
export const RESULT_WORDS = 16;
export const Result = Object.freeze({ RET: 0, ROOM: 1, MOVED: 2 });

/** Offsets inside a thread's program area. */
export const Prog = Object.freeze({
  /** Operations in the program. */
  LEN: 0,
  /** Two words per operation: its code, its argument. */
  OPS: 1,
  /** {@link RESULT_WORDS} per operation. */
  RESULTS: 1 + 2 * MAX_OPS,
});
/** Words of one thread's program area. */
export const PROG_WORDS = 320;

/** The word index of thread `t`'s program area (after the kernel's blocks). */
export function progBase(t: number): number {
  return (MODEL_BYTES >> 2) + t * PROG_WORDS;
}

/** What a simulated thread runs (its ROLE word). */
export const DRole = Object.freeze({
  NONE: 0,
  /** The victim's owner: push and pop on region 0. */
  OWNER: 1,
  /** A thief: steals from region `arg` (0 the victim), stealHalf into its own deque (its region). */
  THIEF: 2,
  /** A queue thread: push, pushPatiently and pop on the queue in region 0. */
  QUEUE: 3,
});

/** Operation codes in a program. */
export const OpCode = Object.freeze({
  PUSH: 1,
  POP: 2,
  STEAL: 3,
  STEAL_HALF: 4,
  /** The queue's operations (`lib/protocol/injector.ts`), on region 0: push, pushPatiently, pop. */
  QUEUE_PUSH: 5,
  QUEUE_PUSH_PATIENTLY: 6,
  QUEUE_POP: 7,
});

/** Regions: region 0 is the victim (the owner's deque) or the queue, region k is thief k's own deque. */
export const REGIONS_BASE_BYTES = 16384;
export const REGION_BYTES = 1024;
/** Largest capacity a scenario may use (a region holds the header lines and the slots). */
export const MAX_CAPACITY = 64;
/** Total bytes of the harness's buffer. */
export const BUFFER_BYTES = REGIONS_BASE_BYTES + MAX_THREADS * REGION_BYTES;

/** The byte offset of region `k`. */
export function regionOffset(k: number): number {
  return REGIONS_BASE_BYTES + k * REGION_BYTES;
}

/** The region of an absolute word index (-1 outside the regions) and the word's index in it. */
export function regionWord(addr: number): { region: number; word: number } {
  if (addr * 4 < REGIONS_BASE_BYTES) return { region: -1, word: addr };
  const region = ((addr * 4 - REGIONS_BASE_BYTES) / REGION_BYTES) | 0;
  return { region, word: addr - (regionOffset(region) >> 2) };
}
