/**
 * The task context of a worker (`currentTask()`, see forkjoin/task_context.ts): which submitted task the
 * synchronous run under way belongs to, and the AbortSignal its code holds.
 *
 * What it owns: the signals handed to tasks, by root record index, each with the handle of the root it was
 * made for (a record reused by another task gets a new one). The signal polls the root's flags word: the
 * main thread ORs ABORTED into it (cancellation.ts), and `aborted` makes the check at once when it tells
 * this worker.
 *
 * Threads: made and used by its worker thread only (`aborted` from its message handler).
 *
 * @module
 */

import { TaskFlags, type TaskTable } from "../record/task.ts";
import { type PollingSignal, pollingSignal, type TaskContext } from "../forkjoin/task_context.ts";
import type { Mail } from "./mail.ts";
import type { Runs } from "./runs.ts";
import { NO_REPORT, type ProgressReporter, type Report } from "../progress/reporter.ts";

/** The error an aborted task's signal and forks see, from its flags: a TimeoutError or an AbortError. */
export function abortError(flags: number): DOMException {
  return (flags & TaskFlags.TIMED_OUT) !== 0
    ? new DOMException("The task ran past its timeout", "TimeoutError")
    : new DOMException("The task's caller aborted it", "AbortError");
}

/** The signals of the submitted tasks this worker runs. */
export class TaskSignals {
  private readonly index: number;
  private readonly table: TaskTable;
  private readonly runs: Runs;
  private readonly mail: Mail;
  /** The signals handed to tasks (`currentTask()`), by root record index, with the root's handle. */
  private readonly signals = new Map<number, { handle: number; polling: PollingSignal; progress: Report }>();
  /** The signal of a run that belongs to no submitted task: never aborted. */
  private readonly unowned = new AbortController().signal;

  /**
   * This thread.
   *
   * @param index This worker's index.
   * @param table The task records.
   * @param runs The runs under way.
   * @param mail This worker's mail (a broadcast part running has a context too).
   * @param progress This worker's progress reporter (each context's `progress`).
   */
  constructor(index: number, table: TaskTable, runs: Runs, mail: Mail, progress: ProgressReporter) {
    this.index = index;
    this.table = table;
    this.runs = runs;
    this.mail = mail;
    this.progress = progress;
  }

  /** Makes the report functions of the tasks' contexts (lib/progress/reporter.ts). */
  private readonly progress: ProgressReporter;

  /** This thread. The task running synchronously now (see task_context.ts), or undefined between tasks. */
  context(): TaskContext | undefined {
    const runs = this.runs;
    if (runs.runDepth() === 0 && this.mail.broadcasting) {
      return { worker: this.index, id: -1, signal: this.unowned, progress: NO_REPORT };
    }
    const run = runs.currentRun();
    if (run < 0) return undefined;
    const root = runs.currentRoot();
    if (root < 0) return { worker: this.index, id: -1, signal: this.unowned, progress: NO_REPORT };
    const table = this.table;
    const handle = table.handleOf(root);
    let known = this.signals.get(root);
    if (known === undefined || known.handle !== handle) {
      known = {
        handle,
        polling: pollingSignal(() => this.abortReason(root)),
        progress: this.progress.forTask(root, handle),
      };
      this.signals.set(root, known);
    }
    const id = table.fields.id(root);
    // A fork whose task settled and whose root record holds another task now (an orphan: its id differs)
    // reports to nobody, rather than to that other task's caller.
    const runIndex = table.indexOf(run);
    const progress = runIndex === root || table.fields.id(runIndex) === id ? known.progress : NO_REPORT;
    return { worker: this.index, id, signal: known.polling.signal, progress };
  }

  /**
   * This thread. The main thread aborted the submitted task `handle`, which this worker runs: if the task
   * holds its signal, abort it now, so that its listeners run (an asynchronous task's, at an await).
   *
   * @param handle The task's handle.
   */
  aborted(handle: number): void {
    const known = this.signals.get(this.table.indexOf(handle));
    if (known !== undefined && known.handle === handle) known.polling.check();
  }

  /**
   * This thread. Why the submitted task in record `root` was aborted (an AbortError or a TimeoutError), or
   * undefined if it was not. One atomic load: pairs with the main thread's OR into the flags word.
   */
  abortReason(root: number): unknown {
    const flags = this.table.fields.loadFlags(root);
    return (flags & TaskFlags.ABORTED) === 0 ? undefined : abortError(flags);
  }

  /** This thread. The submitted task in record `index` finished: its signal is no longer handed out. */
  forget(index: number): void {
    if (this.signals.size !== 0) this.signals.delete(index);
  }
}
