/**
 * A worker's side of progress: the `progress` function of a task's context (`currentTask().progress`),
 * which writes a value into the task's progress cell and, when the cell had no unread value of the task,
 * tells the task's producer through its progress word and its own wait (design: README.md here).
 *
 * What it owns: the encoding of a progress value (a number as a float64; anything else through the
 * codec, at most {@link PROGRESS_VALUE_BYTES} bytes), and the notice: the producer's progress word raised,
 * then the producer woken as a completion wakes it (`wakeProducer`).
 *
 * Invariants:
 * - A task submitted without a handler (no `TaskFlags.PROGRESS` on its record) gets a report function that
 *   does nothing: the flag is read once, when its context is first made.
 * - A fork reports to its root's cell, under its root's handle (its root's caller is the one told).
 * - Nothing is written for a task whose record was reused since its context was made (a late report of an
 *   async task's leftover code, a fork that outlived its task): the handle's generation is checked first.
 *
 * Threads: a pool worker (the thread that runs the task).
 *
 * @module
 */

import { mem } from "../protocol/atomics.ts";
import { Encoder } from "../codec/codec.ts";
import type { PoolMemory } from "../protocol/memory.ts";
import { slotOf, wakeProducer } from "../protocol/producers.ts";
import { TaskFlags, type TaskTable } from "../record/task.ts";
import type { WorkerGuard } from "../protocol/kill_guard.ts";
import { Filled, NUMBER_LENGTH, PROGRESS_VALUE_BYTES, ProgressCells } from "./cell.ts";

/** A task's report function: sends `value` to its caller's `onProgress` (see `TaskContext.progress`). */
export type Report = (value: unknown) => void;

/** The report of a task that has no handler, or belongs to no task: does nothing. */
export const NO_REPORT: Report = (_value: unknown): void => {};

/** Why a progress value cannot be moved (`move()`): it is copied into shared memory. */
const PROGRESS_MOVE_REFUSAL = {
  refuse: "and a progress value cannot move buffers: it is copied into the pool's memory (pass it without move())",
};

/**
 * A worker's progress reporter: makes each task's report function.
 *
 * @example Usage
 * ```ts ignore
 * const reporter = new ProgressReporter(memory, table);
 * const report = reporter.forTask(root, table.handleOf(root)); // NO_REPORT unless it has a handler
 * report(0.5);
 * ```
 */
export class ProgressReporter {
  private readonly cells: ProgressCells;
  private readonly table: TaskTable;
  private readonly channels: PoolMemory["channels"];
  /** Progress values that are not numbers, encoded here (not the runner's encoder: a report may come from
   * a getter the runner's encoder is reading). */
  private readonly encoder = new Encoder({ initialCapacity: 64, moves: PROGRESS_MOVE_REFUSAL });

  /**
   * This thread.
   *
   * @param memory This worker's memory of the pool (its progress cells, every producer's channel).
   * @param table This worker's task table.
   * @param guard This worker's kill guard.
   */
  constructor(memory: Pick<PoolMemory, "progress" | "channels">, table: TaskTable, guard: WorkerGuard) {
    this.cells = new ProgressCells(memory.progress);
    this.table = table;
    this.channels = memory.channels;
    this.guard = guard;
  }

  /**
   * This worker's kill guard: a report is called from user code, where a task that may be forced has the
   * guard down; its shared steps raise it (as a fork does), so that a forced kill never lands between the
   * exchange of the caller's waiting word and its notify (a lost wake), nor inside a cell's write.
   */
  private readonly guard: WorkerGuard;

  /**
   * This thread. The report function of the submitted task in record `root`, handle `handle`:
   * {@link NO_REPORT} unless its caller gave a handler.
   *
   * @param root The submitted task's record index.
   * @param handle Its handle.
   * @returns Its report function.
   */
  forTask(root: number, handle: number): Report {
    const fields = this.table.fields;
    // One atomic load: the flag was written before the QUEUED store that published the task to any worker.
    if ((fields.loadFlags(root) & TaskFlags.PROGRESS) === 0) return NO_REPORT;
    const channel = this.channels[slotOf(fields.origin(root))];
    return (value: unknown): void => this.report(root, handle, channel, value);
  }

  /** Writes `value` into record `root`'s cell for task `handle`, and tells `channel`'s producer if it must. */
  private report(root: number, handle: number, channel: PoolMemory["channels"][number], value: unknown): void {
    // Settled (its record freed, maybe reused): nobody waits for its progress.
    if (!this.table.isCurrent(handle)) return;
    const cells = this.cells;
    let length: number;
    if (typeof value === "number") {
      cells.scratchF64[0] = value;
      length = NUMBER_LENGTH;
    } else {
      const encoder = this.encoder;
      length = encoder.encode(value, "progress");
      if (length > PROGRESS_VALUE_BYTES) {
        encoder.reset();
        throw new RangeError(
          `Cannot report progress as the value encodes to ${length} bytes and a report holds at most ${PROGRESS_VALUE_BYTES}: report a number, a short string or a small object, and keep larger data for the result`,
        );
      }
      cells.scratchBytes.set(encoder.bytes.subarray(0, length));
      encoder.reset();
    }
    // Raised for the pool steps below if it is down (a task that may be forced, in its own code), and
    // lowered again after them; left as it is otherwise (a report from a getter the pool's own code runs,
    // with the guard up, must not lower it inside that step).
    const guard = this.guard;
    const lowered = guard.lowered;
    if (lowered) guard.enter();
    try {
      if (cells.write(root, handle, length) !== Filled.NOTICE) return;
      // The cell had no unread value of this task: raise the producer's progress word, then wake it if it
      // waits. The word's store comes before wakeProducer's load of the waiting word, and the producer
      // stores its waiting word before it re-checks this one (completion.ts arm): one of the two sees the
      // other's store, so the notice is never lost (as a completion's push and wake).
      mem.store(channel.words, channel.progress, 1);
      wakeProducer(channel);
    } finally {
      if (lowered) guard.leave(); // back to user code
    }
  }
}
