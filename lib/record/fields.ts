/**
 * The typed view of a task record's fields: one accessor per field and access kind, so that no code
 * outside `record/` computes a record's word offsets.
 *
 * What it owns: the arithmetic from (record index, field) to a word of the record area, the choice of
 * facade call for each access, and the names of the fields' values ({@link TaskState}, {@link Origin},
 * {@link Outcome}, {@link TaskFlags}). The fields themselves are described at {@link RecordWords}; who may
 * write each one, and when, is the contract of `task.ts` (and `payload.ts` for the payload's words).
 *
 * Naming. An accessor says how it reaches shared memory, because the protocols depend on it:
 * - `field(i)` / `setField(i, v)`: a plain read / write (`mem.read`, `mem.write`), for words that one
 *   thread owns at that moment and that an atomic step of a protocol publishes (the QUEUED store, a deque
 *   push, a latch, a completion push);
 * - `loadField(i)` / `storeField(i, v)` / `orFlags` / `casState`: an atomic access (`mem.load`, `mem.store`,
 *   `mem.or`, `mem.compareExchange`), one step of a model-checked protocol or one read across threads;
 * - `fieldWord(i)`: the word's index, for the calls that take one (`mem.wait`, `mem.notify`, the latch).
 *
 * Each accessor makes exactly the one facade call it names, so the interleaving harness and the trace
 * validation see the same accesses as when the call sites computed the offsets themselves.
 *
 * Threads: any; each thread makes its own view of the shared record area.
 *
 * @module
 */

import { mem } from "../protocol/atomics.ts";

/**
 * Word offsets of a record's fields (int32 words from the record's start). A record's header is
 * `RECORD_HEADER_WORDS` words (`protocol/layout.ts`); its inline payload follows.
 */
export const RecordWords = Object.freeze({
  /** {@link TaskState}. */
  state: 0,
  /** The generation of the handle that owns the record now. */
  generation: 1,
  /** The task function's index in the module's sorted export names. */
  task: 2,
  /** Payload length in bytes. */
  payloadLength: 3,
  /** First overflow block of the payload, or -1. */
  payloadBlock: 4,
  /** {@link Outcome} once DONE. */
  outcome: 5,
  /** The worker that ran (or runs) the task, or -1. */
  worker: 6,
  /** {@link Origin}: who waits for the result. */
  origin: 7,
  /** A forked subtask's latch (see `protocol/latch.ts`): its joiner waits on this word. */
  latch: 8,
  /** A forked subtask's forker: the worker that joins it (and so owns its result), or -1. */
  forker: 9,
  /**
   * {@link TaskFlags}: a submitted task's cancellation, set by the main thread while the task runs; read by
   * its worker (the task's signal) and by the workers of its forks. 0 from allocation.
   */
  flags: 10,
  /** The record index of the submitted task a fork belongs to (whose flags cancel it), or -1. */
  root: 11,
  /** The submitted task's id (its submission number, as an int32); a fork carries its root's. */
  id: 12,
  /**
   * Its priority level (`protocol/levels.ts`: 0 high, 1 normal, 2 low), written by its producer before
   * the QUEUED store: the queue a worker or recovery puts it back into. 1 (normal) from allocation: forks
   * and tasks of no priority keep it.
   */
  level: 13,
  /**
   * With metrics: a submitted task's submission, a float64 of epoch ms over words 14 and 15, written by the
   * main thread when it places the task (see metrics.ts).
   */
  submittedAt: 14,
});

/** Who submitted a task, and so how its completion is announced. */
export const Origin = Object.freeze({
  /** Submitted by the main thread: the handle goes to the completion queue. */
  MAIN: 0,
  /** Forked by `join` or `scope` on a worker: the latch word is set and notified. */
  FORK: 1,
});

/** The life of a record. */
export const TaskState = Object.freeze({
  /** In the free list. */
  FREE: 0,
  /** Arguments written; the handle is in a queue or a deque. */
  QUEUED: 1,
  /** A worker took it and is running it. */
  RUNNING: 2,
  /** The result (or error) is written; the handle is in the completion queue. */
  DONE: 3,
  /**
   * Free, in one thread's private cache (the `worker` word says whose: -1 for the main thread), or just
   * taken from it or from the shared free list by that thread. After a worker dies, the main thread
   * returns every record the dead worker had cached (or was taking) to the shared free list.
   */
  CACHED: 4,
  /**
   * A submitted task its caller aborted while it waited in a queue (the main thread's compare-exchange
   * from QUEUED won against the worker's to RUNNING): it never runs; the worker that takes its handle
   * frees the record.
   */
  CANCELLED: 5,
  /**
   * A node of a task graph (lib/graph/) whose inputs have not all walked to it: written by its submitter
   * before the graph is published; left only by a compare-exchange (to QUEUED, REJECTED or CANCELLED).
   */
  WAITING: 6,
  /** A graph node rejected without running (an input failed): its walker settles and frees it. */
  REJECTED: 7,
  /**
   * An argument slot of a graph node (an edge, lib/graph/): the record that carries one input's result to
   * one dependant; never queued, never run; freed by whoever settles the dependant.
   */
  SLOT: 8,
});

/** What a DONE record's payload holds. */
export const Outcome = Object.freeze({
  /** The task's return value (or what its promise resolved to). */
  VALUE: 0,
  /** What the task threw (or its promise rejected with). */
  ERROR: 1,
});

/** A payload length that means: the payload did not fit in shared memory and travels by message. */
export const PAYLOAD_BY_MESSAGE = -1;

/** Bits of a submitted task's {@link RecordWords.flags} word. */
export const TaskFlags = Object.freeze({
  /** Its caller aborted it (or a timeout did) while it ran: its signal and its forks' are aborted. */
  ABORTED: 1,
  /** The abort was a timeout (the signal's reason is a `TimeoutError`, not an `AbortError`). */
  TIMED_OUT: 2,
  /** The main thread waits for the task to start (a timeout counts from there): notify the state word. */
  WATCH_START: 4,
  /** Its caller asked for a forced abort (`force: true`): its worker lowers its kill guard while it runs. */
  FORCE: 8,
  /**
   * Its arguments move buffers (`move()`): the task was posted to one worker (its `worker` word), which runs
   * it; it is in no queue, so if that worker dies before starting it, recovery rejects it.
   */
  DIRECTED: 16,
  /**
   * Its caller gave a progress handler (`onProgress`): the task's reports, and its forks', are written to
   * its progress cell (lib/progress/); without it a report is a no-op.
   */
  PROGRESS: 32,
  /** A node of a task graph (lib/graph/): its arguments come from its slots, its finish walks its edges. */
  GRAPH: 64,
  /** A graph node whose result nobody asked for: its record, if it comes back, carries no value. */
  QUIET: 128,
  /**
   * A graph node whose record comes back to its submitter after its walk (its result asked for, a sink, or
   * any node of a graph that can be cancelled); without it, its walker frees it.
   */
  RETURN: 256,
});

/**
 * The float64 index of record `index`'s {@link RecordWords.submittedAt} in a Float64Array over the
 * record area (metrics' clock, written and read as a plain float by the main thread and the workers).
 *
 * @param index A record index.
 * @param recordWords Int32 words per record.
 * @returns The float64 index.
 *
 * @example Usage
 * ```ts
 * import { submittedAtSlot } from "./fields.ts";
 * console.log(submittedAtSlot(2, 32)); // 39: words 78 and 79
 * ```
 */
export function submittedAtSlot(index: number, recordWords: number): number {
  return (index * recordWords + RecordWords.submittedAt) / 2;
}

/**
 * A thread's typed view of the record area.
 *
 * @example Usage
 * ```ts
 * import { RecordFields } from "./fields.ts";
 * const fields = new RecordFields(new Int32Array(new SharedArrayBuffer(4 * 32 * 4)), 32);
 * fields.setTask(1, 7);
 * fields.storeState(1, 2);
 * console.log(fields.task(1), fields.loadState(1), fields.stateWord(1)); // 7 2 32
 * ```
 */
export class RecordFields {
  /** The record area, as int32 words. */
  readonly words: Int32Array;
  /** Int32 words per record. */
  readonly recordWords: number;

  /**
   * @param words The record area.
   * @param recordWords Int32 words per record.
   */
  constructor(words: Int32Array, recordWords: number) {
    this.words = words;
    this.recordWords = recordWords;
  }

  // state: the record's lifecycle word, every change of which is a protocol step.

  /** The state word's index (to wait on it or notify it). */
  stateWord(i: number): number {
    return i * this.recordWords + RecordWords.state;
  }
  /** Atomic read of the state. */
  loadState(i: number): number {
    return mem.load(this.words, i * this.recordWords + RecordWords.state);
  }
  /** Atomic write of the state: publishes every plain write made to the record before it. */
  storeState(i: number, state: number): void {
    mem.store(this.words, i * this.recordWords + RecordWords.state, state);
  }
  /** Plain write of the state (a record not yet published: a fork's, before its deque push). */
  setState(i: number, state: number): void {
    mem.write(this.words, i * this.recordWords + RecordWords.state, state);
  }
  /** Compare-exchange of the state; returns the state it found. */
  casState(i: number, expected: number, next: number): number {
    return mem.compareExchange(this.words, i * this.recordWords + RecordWords.state, expected, next);
  }

  // task: which function runs, written before the task is published.

  /** Plain read of the task function's id. */
  task(i: number): number {
    return mem.read(this.words, i * this.recordWords + RecordWords.task);
  }
  /** Plain write of the task function's id. */
  setTask(i: number, task: number): void {
    mem.write(this.words, i * this.recordWords + RecordWords.task, task);
  }

  // payloadLength: the payload's bytes, or PAYLOAD_BY_MESSAGE.

  /** Plain read of the payload length. */
  payloadLength(i: number): number {
    return mem.read(this.words, i * this.recordWords + RecordWords.payloadLength);
  }
  /** Plain write of the payload length. */
  setPayloadLength(i: number, length: number): void {
    mem.write(this.words, i * this.recordWords + RecordWords.payloadLength, length);
  }

  // outcome: value or error, written by the finisher before DONE.

  /** Plain read of the outcome. */
  outcome(i: number): number {
    return mem.read(this.words, i * this.recordWords + RecordWords.outcome);
  }
  /** Plain write of the outcome (the finisher, before its DONE store publishes it). */
  setOutcome(i: number, outcome: number): void {
    mem.write(this.words, i * this.recordWords + RecordWords.outcome, outcome);
  }
  /** Atomic write of the outcome (recovery, on a dead worker's record). */
  storeOutcome(i: number, outcome: number): void {
    mem.store(this.words, i * this.recordWords + RecordWords.outcome, outcome);
  }

  // worker: who runs (or ran) the task; read across threads by cancellation, recovery and the kill.

  /** Atomic read of the worker. */
  loadWorker(i: number): number {
    return mem.load(this.words, i * this.recordWords + RecordWords.worker);
  }
  /** Plain write of the worker (before the task is published). */
  setWorker(i: number, worker: number): void {
    mem.write(this.words, i * this.recordWords + RecordWords.worker, worker);
  }
  /** Atomic write of the worker (the worker that takes the task, before it runs it). */
  storeWorker(i: number, worker: number): void {
    mem.store(this.words, i * this.recordWords + RecordWords.worker, worker);
  }

  // origin: submitted (MAIN) or forked (FORK).

  /** Plain read of the origin. */
  origin(i: number): number {
    return mem.read(this.words, i * this.recordWords + RecordWords.origin);
  }
  /** Atomic read of the origin (recovery, on a record another thread wrote). */
  loadOrigin(i: number): number {
    return mem.load(this.words, i * this.recordWords + RecordWords.origin);
  }
  /** Plain write of the origin. */
  setOrigin(i: number, origin: number): void {
    mem.write(this.words, i * this.recordWords + RecordWords.origin, origin);
  }

  // latch: a fork's done word (protocol/latch.ts).

  /** The latch word's index (for `setLatch`, `latchIsSet`, `orphanLatch`, waits). */
  latchWord(i: number): number {
    return i * this.recordWords + RecordWords.latch;
  }
  /** Plain write of the latch (a fork's, before its deque push publishes it). */
  initLatch(i: number, value: number): void {
    mem.write(this.words, i * this.recordWords + RecordWords.latch, value);
  }

  // forker: the worker that joins a fork.

  /** Atomic read of the forker. */
  loadForker(i: number): number {
    return mem.load(this.words, i * this.recordWords + RecordWords.forker);
  }
  /** Plain write of the forker. */
  setForker(i: number, forker: number): void {
    mem.write(this.words, i * this.recordWords + RecordWords.forker, forker);
  }

  // flags: TaskFlags, set by the main thread while the task runs.

  /** Atomic read of the flags. */
  loadFlags(i: number): number {
    return mem.load(this.words, i * this.recordWords + RecordWords.flags);
  }
  /** Plain write of the flags (before the task is published). */
  setFlags(i: number, flags: number): void {
    mem.write(this.words, i * this.recordWords + RecordWords.flags, flags);
  }
  /** Atomic or of `bits` into the flags. */
  orFlags(i: number, bits: number): void {
    mem.or(this.words, i * this.recordWords + RecordWords.flags, bits);
  }

  // root: the submitted task a fork belongs to.

  /** Plain read of the root. */
  root(i: number): number {
    return mem.read(this.words, i * this.recordWords + RecordWords.root);
  }
  /** Plain write of the root. */
  setRoot(i: number, root: number): void {
    mem.write(this.words, i * this.recordWords + RecordWords.root, root);
  }

  // level: a submitted task's priority level.

  /** Plain read of the level. */
  level(i: number): number {
    return mem.read(this.words, i * this.recordWords + RecordWords.level);
  }
  /** Plain write of the level. */
  setLevel(i: number, level: number): void {
    mem.write(this.words, i * this.recordWords + RecordWords.level, level);
  }

  // id: the submitted task's id; a fork carries its root's.

  /** Plain read of the id. */
  id(i: number): number {
    return mem.read(this.words, i * this.recordWords + RecordWords.id);
  }
  /** Plain write of the id. */
  setId(i: number, id: number): void {
    mem.write(this.words, i * this.recordWords + RecordWords.id, id);
  }
}
