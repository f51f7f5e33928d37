/**
 * A producer's side of progress: reads the progress cells of its tasks that have a handler, and calls the
 * handlers (design: lib/progress/README.md). It is the producer's part of progress, beside the completion
 * reader that calls it: it reads into the producer's ledger entries, so it lives with them, and lib/progress/
 * (the cell and the worker's reporter) imports nothing of the producer.
 *
 * What it owns: the record indices of this producer's tasks placed with a handler (watched), the values
 * read and not yet delivered, and the retry of a cell found mid-write.
 *
 * When it reads: the completion reader ({@link CompletionReader}, completion.ts) calls {@link ProgressReader.poll}
 * at the start of each drain (if a worker raised the progress word, it reads every watched cell), and
 * {@link ProgressReader.settling} for each task it is about to settle (its cell's last value is read then,
 * so that the last report before a task's end is delivered before its promise's reactions run). The
 * handlers run in a microtask queued at the first value read: outside the drain (handlers are user code,
 * and the drain runs none), and before the reactions of the promises it settles after that read.
 *
 * Invariants:
 * - In order: each read empties the cell, and values are delivered in the order they were read.
 * - Nothing after settle: a value is delivered only if it was read while its entry was the one placed in
 *   that record under the cell's handle and not settled, and the entry has not settled since, unless by
 *   its completion in the same drain (then it is delivered before the settled promise's reactions, which
 *   are microtasks, and before anything else of this thread runs).
 * - A handler's throw is the application's error: it goes to the pool's (or producer's) `onError`, or else
 *   is raised as an unhandled rejection (as a failed `spawn`'s); the task and every other settle go on.
 *
 * Threads: its producer's thread.
 *
 * @module
 */

import { mem } from "../protocol/atomics.ts";
import { decode, type ErrorClasses } from "../codec/codec.ts";
import type { ProducerChannel } from "../protocol/memory.ts";
import type { Entry, TaskLedger } from "./ledger.ts";
import { NUMBER_LENGTH, ProgressCells, Taken } from "../progress/cell.ts";
import { PROGRESS_CELL_WORDS } from "../protocol/layout.ts";

/** How long the reader waits before it reads again a cell it found mid-write, ms. */
const BUSY_RETRY_MS = 1;

/** A value read, to be delivered. */
interface Delivery {
  readonly entry: Entry;
  readonly value: unknown;
}

/**
 * A producer's progress reader.
 *
 * @example Usage
 * ```ts ignore
 * const progress = new ProgressReader({ cells: memory.progress, channel, ledger });
 * progress.watch(index); // placing a task with onProgress in record `index`
 * ```
 */
export class ProgressReader {
  private readonly cells: ProgressCells;
  private readonly channel: ProducerChannel;
  private readonly ledger: TaskLedger;
  private readonly errorClasses: ErrorClasses | undefined;
  /**
   * By record index: the stamp of the watch of the task placed there with a handler, or 0 if none is
   * watched. A typed array and a flat list, not a Set: with a Set (three operations a task), tiny tasks
   * with a handler ran at 0.926 [0.763–0.961] of those without on Node; with these, 0.961 [0.908–1.077]
   * (bench/progress.ts, 21 rounds each, 2026-11-29).
   */
  private readonly stamps: Float64Array;
  /** (index, stamp) pairs in placement order; a pair whose stamp is no longer its index's is skipped. */
  private order: number[] = [];
  /** The last stamp given. */
  private stamp = 0;
  /** Records watched now. */
  private count = 0;
  private deliveries: Delivery[] = [];
  /**
   * Entries this reader's completions settled since the last delivery: their values read before (by a
   * poll of the same drain) are still delivered, before their promises' reactions run.
   */
  private completed = new Set<Entry>();
  /** A cell was found mid-write: a timer reads again (the writer raises no notice when it finishes). */
  private retrying = false;
  /** Set by the timer: the next poll reads every watched cell, notice or not. */
  private retryDue = false;
  /** What runs a drain (the timer's retry goes through it). */
  private readonly wake: () => void;

  /**
   * @param parts The progress cells, this producer's channel, its ledger, the error classes values are
   * decoded with, and what wakes its completion reader.
   */
  constructor(parts: {
    cells: Int32Array;
    channel: ProducerChannel;
    ledger: TaskLedger;
    errorClasses?: ErrorClasses;
    wake: () => void;
  }) {
    this.cells = new ProgressCells(parts.cells);
    this.stamps = new Float64Array(parts.cells.length / PROGRESS_CELL_WORDS);
    this.channel = parts.channel;
    this.ledger = parts.ledger;
    this.errorClasses = parts.errorClasses;
    this.wake = parts.wake;
  }

  /**
   * Placing a task with a handler in record `index` (before its QUEUED store): its cell is emptied, and
   * read from now on.
   *
   * @param index The record index.
   */
  watch(index: number): void {
    this.cells.reset(index);
    // Last in the read order (a record left watched by a task settled another way gets a new stamp, and
    // its old pair is skipped): cells are read in the order their tasks were placed.
    if (this.stamps[index] === 0) this.count++;
    const stamp = ++this.stamp;
    this.stamps[index] = stamp;
    this.order.push(index, stamp);
    if (this.order.length > 4 * this.count + 256) this.compact();
  }

  /** Stops reading record `index`. */
  private unwatch(index: number): void {
    if (this.stamps[index] === 0) return;
    this.stamps[index] = 0;
    this.count--;
  }

  /** Drops the pairs of records no longer watched (or watched again since) from the read order. */
  private compact(): void {
    const order = this.order;
    const stamps = this.stamps;
    const kept: number[] = [];
    for (let k = 0; k < order.length; k += 2) {
      if (stamps[order[k]] === order[k + 1]) kept.push(order[k], order[k + 1]);
    }
    this.order = kept;
  }

  /** Whether a worker raised this producer's progress word (read after its waiting word's store: see arm). */
  noticed(): boolean {
    return this.count > 0 && mem.load(this.channel.words, this.channel.progress) !== 0;
  }

  /** At the start of a drain: if a worker raised the progress word (or a retry is due), reads every watched cell. */
  poll(): void {
    if (this.count === 0) return;
    // Lowered before the cells are read: a report that fills a cell after this exchange raises it again.
    const raised = mem.exchange(this.channel.words, this.channel.progress, 0) !== 0;
    if (!raised && !this.retryDue) return;
    this.retryDue = false;
    const placed = this.ledger.placed;
    const stamps = this.stamps;
    // Pairs added while reading (none: reads run no user code) would be read too; the pass compacts.
    const order = this.order;
    let kept = 0;
    for (let k = 0; k < order.length; k += 2) {
      const index = order[k];
      if (stamps[index] !== order[k + 1]) continue;
      const entry = placed[index];
      if (entry === undefined || entry.settled || entry.onProgress === undefined) {
        // Its task settled by another way (aborted, timed out, its worker died): no longer read.
        this.unwatch(index);
        continue;
      }
      order[kept++] = index;
      order[kept++] = order[k + 1];
      this.read(index, entry, false);
    }
    order.length = kept;
  }

  /**
   * The completion of `entry`'s task, in record `index`, is about to settle it: reads its cell once more
   * (the last report before its end), and stops watching the record.
   *
   * @param index The record index.
   * @param entry The entry placed there.
   */
  settling(index: number, entry: Entry): void {
    if (this.stamps[index] === 0) return;
    this.unwatch(index);
    if (entry.settled) return;
    this.read(index, entry, true);
    // A value of it read (now, or by a poll of this drain) is delivered although it settles meanwhile.
    if (this.deliveries.length > 0) this.completed.add(entry);
  }

  /**
   * Takes record `index`'s cell and keeps its value for delivery if it is `entry`'s; `last`: the read at
   * its settle (a cell found mid-write then is not read again: only a fork that outlived it writes).
   */
  private read(index: number, entry: Entry, last: boolean): void {
    const cells = this.cells;
    const handle = cells.take(index);
    if (handle === Taken.EMPTY) return;
    if (handle === Taken.BUSY) {
      // The writer stores FULL soon, without a notice if it wrote over an unread value of the task.
      if (!last) this.retryLater();
      return;
    }
    // A stale value (a fork that outlived the record's earlier task): read, so the cell is empty, and dropped.
    if (handle !== entry.handle) return;
    let value: unknown;
    const length = cells.length;
    if (length === NUMBER_LENGTH) {
      value = cells.scratchF64[0];
    } else {
      try {
        value = decode(cells.scratchBytes, 0, length, undefined, this.errorClasses);
      } catch (error) {
        this.ledger.report(error, entry.task);
        return;
      }
    }
    // The handlers run in a microtask queued at the first read: after the drain (which runs no user code),
    // and before the reactions of any promise the drain settles after this read (queued later).
    if (this.deliveries.length === 0) queueMicrotask(this.deliver);
    this.deliveries.push({ entry, value });
  }

  /** Reads again after {@link BUSY_RETRY_MS}, once. */
  private retryLater(): void {
    if (this.retrying) return;
    this.retrying = true;
    setTimeout(() => {
      this.retrying = false;
      this.retryDue = true;
      this.wake();
    }, BUSY_RETRY_MS);
  }

  /** In a microtask after the drain that read them: calls the handlers with the values read, in order. */
  private readonly deliver = (): void => {
    const list = this.deliveries;
    const completed = this.completed;
    this.deliveries = [];
    this.completed = new Set();
    for (const { entry, value } of list) {
      // Settled since the read by another way than its completion (an abort, a timeout; or a handler above
      // terminated the pool): not delivered. Settled by its completion in the drain that read it: delivered,
      // before its promise's reactions (microtasks) run.
      if (entry.settled && !completed.has(entry)) continue;
      const onProgress = entry.onProgress;
      if (onProgress === undefined) continue;
      try {
        onProgress(value);
      } catch (error) {
        // The application's error, reported as a failed spawn's is; the task settles as it would anyway.
        this.ledger.report(error, entry.task);
      }
    }
  };

  /** For tests and diagnostics: how many records are watched. */
  get watching(): number {
    return this.count;
  }
}
