/**
 * The kernel's gate words: where the controller (the test's main thread, `harness.ts`) and each simulated
 * thread (a Worker running a model's thread module through `gate.ts`) keep the words of their hand-shake in
 * the harness's SharedArrayBuffer, and what each word means. Both sides import this file, so they cannot
 * disagree. A model's own words (its layout) sit beyond these: its globals from {@link Global.MODEL}, its
 * thread-block words from {@link Block.MODEL} to {@link Block.MSG}, its regions from {@link MODEL_BYTES}.
 *
 * A simulated thread parks before every facade call; the controller releases one at a time. A released
 * `wait` compares the word itself (the controller runs nobody else meanwhile, so compare-and-block is one
 * step, as a futex's):
 *
 * ```
 *   thread (at a wait)                        controller
 *   ------------------                        ----------
 *   STATE := PARKED (FN = wait) ──────────▶   picks it: STATE := GO
 *   word ≠ expected: returns "not-equal",
 *     runs on to its next access (PARKED)
 *   word = expected: STATE := BLOCKED ─────▶  records (thread, word, expected, timed?) in FIFO order
 *   waits while STATE = BLOCKED               a notify on that word (released by the controller) or,
 *                                             for a timed wait, a schedule choice "time out":
 *                                             WAKE := ok | timed-out; STATE := RESUME
 *   returns "ok" / "timed-out", runs on ──▶   waits while STATE = RESUME
 * ```
 *
 * A notify is performed by the controller: it resumes up to `count` threads blocked on that word, oldest
 * first, then writes how many it woke to the notifier's NOTIFIED word and releases the notifier. A run
 * ends when no thread is PARKED: threads still BLOCKED then are what the oracles judge (a timed wait is
 * never timed out by default, only when a schedule chooses it), after which the controller unwinds them
 * with ABORT. A run starts when the controller moves EPOCH (every thread waits on it between runs, so
 * the Workers are reused).
 *
 * @module
 */

/** Gate states (the STATE word of a thread block). */
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
  /** Written by the controller instead of GO (or RESUME): unwind this run. */
  ABORT: 5,
  /** Acknowledged an ABORT. */
  ABORTED: 6,
  /** Left its loop for good (after SHUTDOWN); safe to terminate. */
  EXITED: 7,
  /** Inside a wait whose word held the expected value: not runnable until woken (or timed out). */
  BLOCKED: 8,
  /** Written by the controller to a BLOCKED thread: return from the wait (WAKE says how). */
  RESUME: 9,
});

/** Global words, at the start of the buffer. */
export const Global = Object.freeze({
  /** Moved once per run; the threads wait on it. */
  EPOCH: 0,
  /** 1: leave the loop (after the next EPOCH move). */
  SHUTDOWN: 1,
  /** Which loaded variant (0 = the shipped modules, then the mutants) this run uses. */
  VARIANT: 2,
  /** 1: each gate records the module and line of the code under test that made the access (slow). */
  TRACE: 4,
  /** The first global word a model may use for its own (up to {@link BLOCKS_BASE}). */
  MODEL: 8,
});

/** Simulated threads a harness may start. */
export const MAX_THREADS = 4;
/** Where the thread blocks start (a word index), and the words of each. */
export const BLOCKS_BASE = 64;
export const BLOCK_WORDS = 128;

/** Offsets inside a thread block. */
export const Block = Object.freeze({
  STATE: 0,
  /** The pending access: facade function code (`Fn`), absolute word index, arguments. */
  FN: 1,
  ADDR: 2,
  ARG1: 3,
  ARG2: 4,
  /** What the last access returned. */
  RESULT: 5,
  /** How a blocked wait ended: 0 woken ("ok"), 1 timed out. */
  WAKE: 6,
  /** What the controller makes a released notify return (threads woken). */
  NOTIFIED: 7,
  /** The program: the model's role, then two parameters. */
  ROLE: 8,
  PARAM1: 9,
  PARAM2: 10,
  /** In trace mode: which traced module made the pending access (1, 2, … as the model lists them; 0 none) and its line. */
  SITE_FILE: 13,
  SITE_LINE: 14,
  /** 1 while the pending access is a yield (a poll's first access): run another thread first if one can. */
  YIELD: 15,
  /** The thread's operation under way (a model that records it: a push index, a take count …). */
  OP: 16,
  /** The first block word a model may use for its own bookkeeping (up to {@link Block.MSG}). */
  MODEL: 17,
  /** Failure message: length, then UTF-16 code units. */
  MSG: 32,
});
/** The longest failure message kept. */
export const MAX_MSG = 90;

/** The first byte a model's regions may use (after every thread block). */
export const MODEL_BYTES = 4096;

/** The word index of a thread block's first word. */
export function blockBase(thread: number): number {
  return BLOCKS_BASE + thread * BLOCK_WORDS;
}
