/**
 * The producers model's layout: where the controller's side (`model.ts`) and the simulated threads
 * (`thread.ts`) find the code under test's words — the pool's control words (`recordWaiters`,
 * `producersOpen`, slot 0's waiting word), two remote producer slots' lines, three completion queues (slot
 * 0's and the two remote slots'), the free-record list and the records' state and origin words — and the
 * test's own (each thread's part, what each producer received, who holds which slot). The gate words and
 * states are the kernel's (`../../kernel/words.ts`).
 *
 * The regions sit where a pool's {@link PoolLayout} would name them: {@link PRODUCERS_LAYOUT} is the part of
 * a layout that `lib/protocol/producers.ts` reads, so that its own functions (`producerChannel`,
 * `claimSlot`, `releaseSlot`) find the harness's words, in the harness's buffer.
 *
 * @module
 */

import type { PoolLayout } from "../../../../lib/protocol/layout.ts";
import { MODEL_BYTES } from "../../kernel/words.ts";

/** Records (and so tasks) in a run, at most: every queue's capacity. */
export const PCAPACITY = 4;
/** Remote producer slots (1 and 2), beside slot 0, the owner's. */
export const PSLOTS = 2;
/** Byte offset of the control words (3 cache lines). */
export const PCONTROL_BYTES = MODEL_BYTES;
/** Byte offset of the remote slots' lines (a state/waiting/pending line and a counts line per slot). */
export const PLINES_BYTES = 4352;
/** Byte offset of slot 0's completion queue. */
export const PCOMPLETIONS_BYTES = 4608;
/** Byte offset of slot 1's completion queue (slot 2's follows it). */
export const PQUEUES_BYTES = 5120;
/** Byte offset of the free-record list. */
export const PFREE_BYTES = 6144;
/** Byte offset of the records (their state and origin words: `lib/record/fields.ts`). */
export const PRECORDS_BYTES = 7168;
/** Int32 words per record. */
export const PRECORD_WORDS = 16;
/** Byte offset of the test's own words ({@link PWork}). */
export const PWORK_BYTES = 8192;
export const PBUFFER_BYTES = 16384;

/**
 * The part of a pool's layout that lib/protocol/producers.ts reads, over the harness's buffer. Only these
 * fields are set: the functions of producers.ts that the harness calls read no others.
 */
export const PRODUCERS_LAYOUT = {
  shape: { producers: PSLOTS, taskCapacity: PCAPACITY },
  control: PCONTROL_BYTES,
  producerLines: PLINES_BYTES,
  completions: PCOMPLETIONS_BYTES,
  producerQueues: PQUEUES_BYTES,
} as unknown as PoolLayout;

/** A task's handle: record `index`, generation 1 (so that no handle is 0). */
export function handleOf(index: number): number {
  return PCAPACITY + index;
}

/** The test's words, written by the threads with plain `Atomics` (bookkeeping, not scheduled). */
export const PWork = Object.freeze({
  /** Per thread t: PART + t * PART_WORDS: its part of the scenario ({@link PPart}). */
  PART: 0,
  /** Per thread t: GOT + t * GOT_WORDS: a producer's count of handles received, then the handles. */
  GOT: 128,
  /** HOLDERS + s: how many claimers hold slot s now (by what claimSlot returned). */
  HOLDERS: 256,
  /** Claims that returned a slot another claimer held: the count, then (thread, slot) pairs. */
  SHARED: 272,
});
export const PART_WORDS = 32;
export const GOT_WORDS = 32;
export const PWORK_WORDS = 512;

/** A thread's part, at PWork.PART + t * PART_WORDS. */
export const PPart = Object.freeze({
  /** A producer: its slot. A claimer: its rounds (claim, then release). */
  SLOT: 0,
  /** A producer: tasks of its in flight (their completions come). A finisher: how many tasks it finishes. */
  COUNT: 1,
  /** A producer: tasks in its backlog, waiting for a record (it has no task in flight then). */
  BACKLOG: 2,
  /** A finisher: the record indices of its tasks, in order. */
  TASKS: 3,
});

/** What a simulated thread runs. */
export const PRole = Object.freeze({
  NONE: 0,
  /** A producer: `CompletionReader.arm`, and what it queues, until none of its tasks is pending. */
  PRODUCER: 1,
  /** A worker: `Marks.publishDone` of each of its tasks. */
  FINISHER: 2,
  /** `claimSlot`, then `releaseSlot`, SLOT times. */
  CLAIMER: 3,
});
