/**
 * The sleep/latch harness's shared-memory layout: where the controller (`sleep_harness.ts`, the test's
 * main thread) and each simulated thread (a Worker running `sleep_thread.ts`) keep their words, and where
 * the code under test (`lib/protocol/sleep.ts`, `lib/protocol/latch.ts`) finds its own. Both sides import this file.
 *
 * The hand-shake is the deque harness's (`protocol.ts`) with blocking waits added. A simulated thread
 * parks before every facade call; the controller releases one at a time. A released `wait` compares the
 * word itself (the controller runs nobody else meanwhile, so compare-and-block is one step, as a futex's):
 *
 * ```
 *   worker (at a wait)                        controller
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
 * with ABORT.
 *
 * @module
 */

/** Gate states (the STATE word of a thread block). */
export const SState = Object.freeze({
  IDLE: 0,
  PARKED: 1,
  GO: 2,
  DONE: 3,
  FAILED: 4,
  ABORT: 5,
  ABORTED: 6,
  EXITED: 7,
  /** Inside a wait whose word held the expected value: not runnable until woken (or timed out). */
  BLOCKED: 8,
  /** Written by the controller to a BLOCKED thread: return from the wait (WAKE says how). */
  RESUME: 9,
});

/** Global words. */
export const SGlobal = Object.freeze({
  EPOCH: 0,
  SHUTDOWN: 1,
  /** Which loaded module pair (0 = the shipped lib/protocol/sleep.ts and lib/protocol/latch.ts, then the mutants). */
  VARIANT: 2,
  /** How many sleep workers the Sleep handle serves in this run. */
  WORKERS: 3,
  /** 1: each gate records the source line of the code under test that made the access (slow). */
  TRACE: 4,
});

/** Simulated threads: up to four (e.g. three workers and a poster, or a joiner and a finisher). */
export const SMAX_THREADS = 4;
export const SBLOCKS_BASE = 64;
export const SBLOCK_WORDS = 128;

/** Offsets inside a thread block. */
export const SBlock = Object.freeze({
  STATE: 0,
  /** The pending access: facade function code (`Fn` of protocol.ts), absolute word, arguments. */
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
  /** The program: {@link Role}, then two parameters. */
  ROLE: 8,
  PARAM1: 9,
  PARAM2: 10,
  /** Bookkeeping (not shared memory of the code under test): work items this thread took. */
  TAKEN: 11,
  /** Posters: how many of their newWork / wakeAll calls said they woke someone. */
  WOKE: 12,
  /** In trace mode: which module made the pending access (1 sleep.ts, 2 latch.ts, 0 other) and its line. */
  SITE_FILE: 13,
  SITE_LINE: 14,
  /** Failure message: length, then UTF-16 code units. */
  MSG: 32,
});
export const SMAX_MSG = 90;

/** What a simulated thread runs. */
export const Role = Object.freeze({
  NONE: 0,
  /** The worker loop's idle path: search; Sleep.idle; sleep; until stopping. PARAM1 = worker index. */
  WORKER: 1,
  /** PARAM1 items, each made visible then newWork; if PARAM2 = 1, then the stop word and wakeAll. */
  POSTER: 2,
  /** setLatch. */
  FINISHER: 3,
  /** while (!latchIsSet) waitLatch(…, 1 ms). */
  JOINER: 4,
});

/** Byte offset of the sleep region (`lib/protocol/layout.ts`'s SleepWords) in the harness's buffer. */
export const SLEEP_REGION_BYTES = 8192;
/** Byte offset of the work words ({@link Work}). */
export const WORK_BYTES = 12288;
/** The work words: a tiny work source, the stop word, a latch. */
export const Work = Object.freeze({
  /** Items posted and not yet taken: a poster adds 1; a search takes one with a compare-exchange. */
  AVAIL: 0,
  /** The stop word (the pool's lifecycle word): 0 running, 1 stopping. */
  STOP: 16,
  /** The latch word. */
  LATCH: 32,
});
export const WORK_WORDS = 48;
export const SBUFFER_BYTES = 16384;

/** The word index of a thread block's first word. */
export function sblockBase(thread: number): number {
  return SBLOCKS_BASE + thread * SBLOCK_WORDS;
}
