/**
 * The sleep/latch model's layout: where the code under test (`lib/protocol/sleep.ts`, `lib/protocol/latch.ts`)
 * finds its words in the harness's buffer, the test's own words (a tiny work source, the stop word, the
 * latch), and what each simulated thread runs. The gate words are the kernel's (`../../kernel/words.ts`);
 * the controller's side is `model.ts`, the threads' `thread.ts`. Both import this file.
 *
 * @module
 */

import { Block, Global } from "../../kernel/words.ts";

/** Simulated threads: up to four (e.g. three workers and a poster, or a joiner and a finisher). */
export const SLEEP_THREADS = 4;

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

/** Global words of this model. */
export const SleepGlobal = Object.freeze({
  /** How many sleep workers the Sleep handle serves in this run. */
  WORKERS: Global.MODEL,
});

/** Thread-block words of this model (bookkeeping, not shared memory of the code under test). */
export const SleepBlock = Object.freeze({
  /** Work items this thread took. */
  TAKEN: Block.MODEL,
  /** Posters: how many of their newWork / wakeAll calls said they woke someone. */
  WOKE: Block.MODEL + 1,
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
export const SLEEP_BUFFER_BYTES = 16384;
