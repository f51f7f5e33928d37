/**
 * The elastic model's layout: where the code under test (`lib/protocol/sleep.ts`'s sleep words, whose state
 * words are `lib/protocol/slots.ts`'s slot words; the control words with the size word; the status lines with
 * each worker's mail word) finds its words in the harness's buffer, the test's own words (a tiny injector,
 * the grown thread's start signal), and what each simulated thread runs. The gate words are the kernel's
 * (`../../kernel/words.ts`); the controller's side is `model.ts`, the threads' `thread.ts`.
 *
 * @module
 */

import { Block, Global } from "../../kernel/words.ts";

/** Simulated threads: up to four (e.g. two workers, a poster and a directed poster). */
export const ELASTIC_THREADS = 4;

/** What a simulated thread runs. */
export const ERole = Object.freeze({
  NONE: 0,
  /** The worker loop's idle path of an elastic pool (search, idle, sleepOrRetire). PARAM1 = its slot. */
  WORKER: 1,
  /** PARAM1 items, each pushed to the injector then newWork (onNobodyWoken noted). */
  POSTER: 2,
  /** PARAM1 directed messages: the owner's pickWorker (claimMail in turn), then wakeAll, as submission.ts. */
  DIRECTOR: 3,
  /** The owner's growth of slot PARAM1: growStoreStarting, growReserve; if reserved, starts the thread. */
  GROWER: 4,
  /** The thread the grower starts on slot PARAM1: waits for its start, bootStoreAwake, then as WORKER. */
  GROWN: 5,
});

/** Global words of this model (written by the controller before a run; the threads read them). */
export const EGlobal = Object.freeze({
  /** Slots (the pool's maximum). */
  SLOTS: Global.MODEL,
  /** The pool's minimum. */
  MIN: Global.MODEL + 1,
});

/** Thread-block words of this model (bookkeeping with plain Atomics, not scheduled). */
export const EBlock = Object.freeze({
  /** Items and messages this thread took (workers). */
  TAKEN: Block.MODEL,
  /** 1 once this worker returned SLEPT_RETIRED and stored ABSENT. */
  RETIRED: Block.MODEL + 1,
  /** Posters: how many newWork calls found nobody to wake (WokeNobody: the growth is told). */
  NOBODY: Block.MODEL + 2,
  /** Posters: 1 if the last newWork found nobody to wake. */
  LAST_NOBODY: Block.MODEL + 3,
  /** Directed posters: messages no slot would take (claimMail false everywhere). */
  UNCLAIMED: Block.MODEL + 4,
  /** Growers: 1 if the reservation succeeded (the thread started). */
  STARTED: Block.MODEL + 5,
});

/** Byte offset of the sleep region (`SleepWords`: the counters, the slot words, the counted words). */
export const ESLEEP_BYTES = 4096;
/** Byte offset of the control words (`ControlWords.poolSize`, `growWanted`). */
export const ECONTROL_BYTES = 8192;
/** Words of the control region given to `Slots`. */
export const ECONTROL_WORDS = 64;
/** Byte offset of the status lines (`StatusWords.mail` of each worker). */
export const ESTATUS_BYTES = 9216;
/** Byte offset of the test's words ({@link EWork}). */
export const EWORK_BYTES = 12288;
/** The test's words (scheduled like the code's: every access goes through the facade). */
export const EWork = Object.freeze({
  /** Items in the injector: a poster adds 1; a search takes one with a compare-exchange. */
  AVAIL: 0,
  /**
   * The messages posted to worker `i` (the word `MSG + i`): the director adds one after its `claimMail`
   * said yes (the `postMessage`); the worker takes one, then takes its mail word down (its event loop's
   * handling of the message, `Mail`). The mail word itself is the shipped protocol's count.
   */
  MSG: 8,
  /** The grown thread's start (the owner's `new Worker`): 0, then 1 once the grower reserved. */
  START: 16,
});
export const EWORK_WORDS = 32;
export const EBUFFER_BYTES = 16384;
