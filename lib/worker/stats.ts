/**
 * A worker's own numbers in its status line (layout.ts StatusWords): event counts (`bump`) and, with
 * metrics, its task times and its busy periods (see metrics.ts).
 *
 * What it owns: this worker's counters and busy-time words (this worker is their only writer), its
 * `TaskRecorder`, and the busy period under way. Invariant: `busySince` ≥ 0 exactly while a busy period
 * is open (published in `busySinceMs`, so that utilization counts it while it lasts); `lastFinish` ≥ 0
 * only while the loop goes straight on from one task to the next (one clock read per task, not two).
 *
 * Threads: made and used by its worker thread only; the main thread reads the words (`stats()`).
 *
 * @module
 */

import { mem } from "../protocol/atomics.ts";
import { StatusWords } from "../protocol/layout.ts";
import type { PoolMemory } from "../protocol/memory.ts";
import { epochMs, TaskRecorder } from "../metrics.ts";

/** A worker's counters and busy time. */
export class WorkerStats {
  private readonly status: Int32Array;
  private readonly statusAt: number;
  /** With metrics: this worker's task times and histograms (see metrics.ts); undefined without. */
  readonly stamps: TaskRecorder | undefined;
  private readonly metricsSince: number;
  private busySince = -1;
  private busyTotal = 0;
  /**
   * With metrics: the time the last task finished (or the busy period began), while the loop went straight
   * on to the next task (then its start): one clock read per task instead of two. -1 once another task
   * starts, or the loop runs broadcast parts, idles or yields.
   */
  lastFinish = -1;

  /**
   * This thread. Opens the counters of worker `index`.
   *
   * @param memory The pool's memory (the workers' status lines; the records, whose times it stamps).
   * @param index This worker's index.
   * @param metrics With metrics: when the pool was created (epoch ms) and the workers' histograms.
   */
  constructor(
    memory: Pick<PoolMemory, "buffer" | "layout" | "status">,
    index: number,
    metrics: { since: number; histograms: SharedArrayBuffer } | undefined,
  ) {
    this.status = memory.status;
    this.statusAt = index * StatusWords.count;
    this.stamps = metrics === undefined
      ? undefined
      : new TaskRecorder(memory.buffer, memory.layout, metrics.histograms, index);
    this.metricsSince = metrics?.since ?? 0;
    if (this.stamps !== undefined) {
      // A replacement goes on from its predecessor's total; the period that death cut off is not counted.
      this.busyTotal = mem.load(this.status, this.statusAt + StatusWords.busyMs);
      mem.store(this.status, this.statusAt + StatusWords.busySinceMs, -1);
    }
  }

  /**
   * This thread. Counts an event in our status words. This worker is their only writer, so a plain
   * increment does: the main thread's `stats()` reads whatever recent value is there (an atomic add cost
   * 6–12 ns a task).
   */
  bump(field: number, amount = 1): void {
    const at = this.statusAt + field;
    mem.write(this.status, at, mem.read(this.status, at) + amount);
  }

  /** This thread. A task was found: with metrics, a busy period begins unless one is under way. */
  busy(): void {
    if (this.stamps !== undefined && this.busySince < 0) this.beginBusy();
  }

  /**
   * This thread. Nothing was found: a busy period under way ends, and the loop no longer goes straight on
   * even with none (a task found late, in the search's idle, runs outside any period: the next late task's
   * start is read from the clock, not taken from its finish, which would count the sleep between as run).
   */
  idle(): void {
    this.endBusy();
  }

  /** With metrics: a busy period begins (published, so that utilization counts it while it lasts). */
  private beginBusy(): void {
    this.busySince = epochMs();
    this.lastFinish = this.busySince; // the task about to start starts now
    mem.store(this.status, this.statusAt + StatusWords.busySinceMs, Math.floor(this.busySince - this.metricsSince));
  }

  /**
   * This thread. With metrics: the busy period under way (if any) ends (at the last task's finish, if the
   * loop went straight on from it); its time is added and published.
   */
  endBusy(): void {
    const end = this.lastFinish;
    this.lastFinish = -1;
    if (this.busySince < 0) return;
    this.busyTotal += (end >= 0 ? end : epochMs()) - this.busySince;
    this.busySince = -1;
    mem.store(this.status, this.statusAt + StatusWords.busyMs, Math.floor(this.busyTotal));
    mem.store(this.status, this.statusAt + StatusWords.busySinceMs, -1);
  }
}
