/**
 * The controlled scheduler's shared-memory protocol: where the controller (the test's main thread) and
 * each simulated thread (a Worker running `sim_thread.ts`) keep their words in the harness's
 * SharedArrayBuffer, and what each word means. Both sides import this file, so they cannot disagree.
 *
 * One gate word per simulated thread (`STATE`) carries the whole hand-shake:
 *
 * ```
 *   worker                                   controller
 *   ------                                   ----------
 *   writes FN/REGION/WORD/ARG1/ARG2
 *   STATE := PARKED, notify      ─────────▶  sees PARKED: the thread is runnable
 *   waits while STATE = PARKED               picks it (the schedule): STATE := GO, notify
 *   performs the one access, RESULT := r
 *   runs thread-local code up to the next
 *   access (or the end of its program)       waits while STATE = GO
 *   STATE := PARKED | DONE | FAILED ───────▶ reads RESULT: one row of the trace
 * ```
 *
 * A run starts when the controller bumps `EPOCH` (every worker waits on it between runs, so workers are
 * reused); it ends when every thread is DONE or FAILED. To unwind a run that exceeds its step bound the
 * controller writes ABORT instead of GO; the gate then throws {@link ABORT_MESSAGE}, which the deque code
 * cannot swallow (it has no try/catch) and the worker's run loop recognises.
 *
 * The harness itself uses `Atomics` directly (it is test code, not `lib/`); the code under test only
 * ever reaches shared memory through `lib/protocol/atomics.ts`'s `mem`, which the worker routes through its gate.
 *
 * @module
 */

/** Gate states (the `STATE` word of a thread block). */
export const State = Object.freeze({
  /** Between runs; nothing to do. */
  IDLE: 0,
  /** Stopped before a shared access, described in FN..ARG2; runnable. */
  PARKED: 1,
  /** Released by the controller for exactly one access. */
  GO: 2,
  /** Finished its program. */
  DONE: 3,
  /** Threw an exception that was not the abort; the message is in MSG. */
  FAILED: 4,
  /** Written by the controller instead of GO: unwind this run. */
  ABORT: 5,
  /** Acknowledged an ABORT. */
  ABORTED: 6,
  /** Left its loop for good (after SHUTDOWN); safe to terminate. */
  EXITED: 7,
});

/** Global words, at the start of the control block. */
export const Global = Object.freeze({
  /** Bumped once per run; workers wait on it. */
  EPOCH: 0,
  /** 1: leave the loop (after the next EPOCH bump). */
  SHUTDOWN: 1,
  /** Which loaded deque module (0 = lib/protocol/deque.ts, then the mutants) this run uses. */
  VARIANT: 2,
  /** The victim's capacity for this run (destinations use the same). */
  CAPACITY: 3,
  /** 1: each gate also records the source line of the deque code that made the access (slow: a stack). */
  TRACE: 4,
});

/** Words per thread block, and where the blocks start. */
export const BLOCK_WORDS = 512;
export const BLOCKS_BASE = 64;
/** Simulated threads the harness supports: the owner and up to three thieves. */
export const MAX_THREADS = 4;

/** Offsets inside a thread block. */
export const Block = Object.freeze({
  STATE: 0,
  /** Index of the operation the thread is in. */
  OP: 1,
  /** The pending access: facade function code, region, word, arguments. */
  FN: 2,
  REGION: 3,
  WORD: 4,
  ARG1: 5,
  ARG2: 6,
  /** What the last access returned. */
  RESULT: 7,
  /** 0 = owner (push/pop), 1 = thief (steal/stealHalf into its own deque); unused by the queue. */
  ROLE: 8,
  /** In trace mode: the line of the deque module that made the pending access (0 if unknown). */
  LINE: 9,
  /** Program length, then two words per operation (code, argument). */
  PROG_LEN: 16,
  PROG: 17,
  /** Results: {@link RESULT_WORDS} per operation. */
  RESULTS: 64,
  /** Failure message: length, then UTF-16 code units. */
  MSG: 320,
});

/** Most operations a thread may run in one scenario. */
export const MAX_OPS = 16;
/** Per-operation result words: return value, dst room before, dst bottom before, moved values… */
export const RESULT_WORDS = 16;
export const Result = Object.freeze({ RET: 0, ROOM: 1, MOVED: 2 });
export const MAX_MSG = 180;

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

/** Facade function codes and their names: one numbering with the trace (spec/trace/facade_codes.ts). */
export { Fn, FN_NAMES } from "../../spec/trace/facade_codes.ts";

/** Deque regions: region 0 is the victim (the owner's deque), region k is thief k's own deque. */
export const REGIONS_BASE_BYTES = 16384;
export const REGION_BYTES = 1024;
/** Largest capacity a scenario may use (a region holds two header lines and the slots). */
export const MAX_CAPACITY = 64;

/** Total bytes of the harness's buffer. */
export const BUFFER_BYTES = REGIONS_BASE_BYTES + MAX_THREADS * REGION_BYTES;

/** The word index of a thread block's first word. */
export function blockBase(thread: number): number {
  return BLOCKS_BASE + thread * BLOCK_WORDS;
}

/** The byte offset of region `k`. */
export function regionOffset(k: number): number {
  return REGIONS_BASE_BYTES + k * REGION_BYTES;
}

/** The thrown message that unwinds a simulated thread when the controller aborts a run (the kernel's gates'). */
export { ABORT_MESSAGE } from "./kernel/facade.ts";
