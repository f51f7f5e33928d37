/**
 * The main thread's side of a task's cancellation: its caller's `AbortSignal`, its timeout (counted from
 * its start) and its deadline for waiting in the queue (`pool.with(options)`).
 *
 * What it owns: per task given options, a {@link TaskControl} (the listener on its signal, its timers, the
 * wait for its start), and the one step that cancels a task, {@link Canceller.cancel}.
 *
 * Invariants:
 * - A task settles once, whichever comes first: its completion, its abort, a deadline, `terminate()` or
 *   its worker's death. The ledger's settle is the one step that settles, and it detaches the control
 *   first, so that nothing of a settled task fires later.
 * - A task cancelled while queued never runs: the main thread's compare-exchange of the record's state
 *   from QUEUED to CANCELLED (`CancelCasQueued` in `spec/Lifecycle.tla`) and the worker's from QUEUED to
 *   RUNNING (`ExecCasRunning`) cannot both win. The main thread then forgets the record at once, and the
 *   worker that takes the CANCELLED handle from its queue frees it.
 * - A task aborted after it started is settled at once; its record is freed when its completion arrives
 *   (or by crash recovery), as for any task whose entry is gone. Its worker learns of the abort from the
 *   record's flags (read where the task reads its signal, and by its forks when they start) and from a
 *   message (so that an asynchronous task's signal fires its listeners).
 * - No user code runs here while the pool's state is half-updated: the signal is read through the
 *   platform's own getters and listened to through `EventTarget.prototype` (a subclass's overrides never
 *   run), and settling calls only the promise's native functions (see ledger.ts).
 *
 * Threads: its producer's thread (for the pool's own producer, the thread that created the pool).
 *
 * @module
 */

import { mem } from "../protocol/atomics.ts";
import { type Entry, type EntryControl, Settled, type TaskLedger } from "./ledger.ts";
import { type ResolvedRunOptions, signalAborted, signalReason } from "../options.ts";
import { TaskFlags, TaskState, type TaskTable } from "../record/task.ts";

/** How long one wait for a task's start lasts before it looks again (a bound on a stale waiter's life). */
const START_WAIT_MS = 1000;

const addListener = EventTarget.prototype.addEventListener;
const removeListener = EventTarget.prototype.removeEventListener;

/**
 * Cancels tasks: by their signal, their timeout or their queue deadline.
 *
 * @example Usage
 * ```ts ignore
 * const canceller = new Canceller(table, ledger, (worker, message) => workforce.send(worker, message));
 * canceller.control(entry, resolveRunOptions({ signal }));
 * submitter.enqueue(entry, encoder); // calls canceller.placed(entry) once the task has a record
 * canceller.begin(entry);
 * ```
 */
export class Canceller {
  private readonly table: TaskTable;
  private readonly ledger: TaskLedger;
  private readonly tell: (worker: number, message: unknown) => void;
  private readonly force: (worker: number, handle: number, task: string) => void;

  /**
   * @param table The task records.
   * @param ledger The submitted tasks.
   * @param tell Sends a message to a worker (if it is alive).
   * @param force Kills the worker running task `handle` (`force: true`), outside the pool's steps.
   */
  constructor(
    table: TaskTable,
    ledger: TaskLedger,
    tell: (worker: number, message: unknown) => void,
    force: (worker: number, handle: number, task: string) => void,
  ) {
    this.table = table;
    this.ledger = ledger;
    this.tell = tell;
    this.force = force;
  }

  /**
   * Gives `entry` its control, before it is placed (placing reads whether its start must be announced).
   *
   * @param entry The task's entry, just opened.
   * @param options Its options.
   */
  control(entry: Entry, options: ResolvedRunOptions): void {
    entry.control = new TaskControl(this, entry, options);
  }

  /**
   * Starts the control's listener and queue deadline, once the task is enqueued (placed or in the
   * backlog). A signal aborted meanwhile (by a getter of the arguments) cancels it now.
   *
   * @param entry The task's entry.
   */
  begin(entry: Entry): void {
    (entry.control as TaskControl).begin();
  }

  /**
   * The task has a record now (the submitter placed it): if its timeout counts from its start, wait for
   * that start.
   *
   * @param entry The task's entry.
   */
  placed(entry: Entry): void {
    const control = entry.control as TaskControl;
    if (control.watchStart) this.awaitStart(entry, entry.handle);
  }

  /**
   * Cancels a task that has not settled: removed if still queued, else marked aborted for its worker;
   * then settled with `reason`.
   *
   * @param entry The task's entry.
   * @param reason What its promise rejects with.
   * @param timedOut Whether a deadline, not the signal, cancels it (a spawn's timeout is reported).
   */
  cancel(entry: Entry, reason: unknown, timedOut: boolean): void {
    if (entry.settled) return;
    if (!this.removeQueued(entry)) {
      // Started (or finished): its signal and its forks' read the flags word. An atomic OR, so that the
      // WATCH_START bit stays. Not modelled in Lifecycle.tla: it changes no task's settlement.
      const { table } = this;
      const index = table.indexOf(entry.handle);
      const flags = TaskFlags.ABORTED | (timedOut ? TaskFlags.TIMED_OUT : 0);
      table.fields.orFlags(index, flags);
      const worker = table.fields.loadWorker(index);
      if (worker >= 0) {
        this.tell(worker, { type: "abort", handle: entry.handle });
        // Asked to force it: its worker is killed unless the task stops first (see kill_guard.ts).
        // (A task of `map` has no control of its own: map cancels it on its own stop, never forced.)
        if (entry.control?.force === true) this.force(worker, entry.handle, entry.task);
      }
      // Forgotten: the completion that comes later only frees the record (see completion.ts).
      this.ledger.placed[index] = undefined;
      this.ledger.forgotten.add(entry.handle);
    }
    this.ledger.settle(entry, timedOut ? Settled.ERROR : Settled.ABORTED, reason);
  }

  /**
   * The queue deadline passed: a task that has not started is removed and rejects with a TimeoutError;
   * one that started is left to its timeout, if any.
   *
   * @param entry The task's entry.
   * @param ms The deadline, for the message.
   */
  queueExpired(entry: Entry, ms: number): void {
    if (entry.settled || !this.removeQueued(entry)) return;
    this.ledger.settle(
      entry,
      Settled.ERROR,
      timeoutError(`Task '${entry.task}' waited ${ms} ms in the queue without starting`),
    );
  }

  /**
   * Removes a task that has not started: true if it was in the backlog (settling it keeps it from being
   * placed) or its record was still QUEUED (now CANCELLED: the worker that takes the handle frees the
   * record and never runs it); false if it started.
   */
  private removeQueued(entry: Entry): boolean {
    const handle = entry.handle;
    if (handle === -1) return true;
    const { table } = this;
    const index = table.indexOf(handle);
    // Unsettled and placed: the record is this task's until the main thread frees it.
    const was = mem.compareExchange( // spec: CancelCasQueued
      table.words,
      table.fields.stateWord(index),
      TaskState.QUEUED,
      TaskState.CANCELLED,
    );
    if (was !== TaskState.QUEUED) return false;
    this.ledger.placed[index] = undefined;
    return true;
  }

  /**
   * Waits (a few seconds at a time) for the record of `handle` to leave QUEUED: the worker that starts a
   * watched task notifies its state word. Then the task's timeout starts.
   */
  private awaitStart(entry: Entry, handle: number): void {
    const { table } = this;
    if (entry.settled || entry.handle !== handle) return;
    const stateAt = table.fields.stateWord(table.indexOf(handle));
    const result = mem.waitAsync(table.words, stateAt, TaskState.QUEUED, START_WAIT_MS);
    const next = () => {
      if (entry.settled || entry.handle !== handle) return;
      if (mem.load(table.words, stateAt) === TaskState.QUEUED) this.awaitStart(entry, handle);
      else (entry.control as TaskControl).started();
    };
    if (result.async) result.value.then(next);
    else next();
  }
}

/** A task's listener and timers: made by {@link Canceller.control}, detached when the task settles. */
class TaskControl implements EntryControl {
  readonly watchStart: boolean;
  readonly force: boolean;
  private readonly canceller: Canceller;
  private readonly entry: Entry;
  private readonly options: ResolvedRunOptions;
  private queueTimer: ReturnType<typeof setTimeout> | undefined;
  private runTimer: ReturnType<typeof setTimeout> | undefined;
  private listener: (() => void) | undefined;
  private detached = false;

  constructor(canceller: Canceller, entry: Entry, options: ResolvedRunOptions) {
    this.canceller = canceller;
    this.entry = entry;
    this.options = options;
    this.watchStart = options.timeout !== undefined;
    this.force = options.force;
  }

  begin(): void {
    if (this.detached) return;
    const { signal, queueTimeout } = this.options;
    if (signal !== undefined) {
      if (signalAborted(signal)) {
        this.canceller.cancel(this.entry, signalReason(signal), false);
        return;
      }
      this.listener = () => this.canceller.cancel(this.entry, signalReason(signal), false);
      addListener.call(signal, "abort", this.listener, { once: true });
    }
    if (queueTimeout !== undefined) {
      this.queueTimer = setTimeout(() => this.canceller.queueExpired(this.entry, queueTimeout), queueTimeout);
    }
  }

  /** The task started: its timeout runs from now. */
  started(): void {
    const timeout = this.options.timeout;
    if (this.detached || timeout === undefined || this.runTimer !== undefined) return;
    clearTimeout(this.queueTimer);
    this.runTimer = setTimeout(() => {
      const error = timeoutError(`Task '${this.entry.task}' ran for ${timeout} ms, its timeout`);
      this.canceller.cancel(this.entry, error, true);
    }, timeout);
  }

  detach(): void {
    this.detached = true;
    clearTimeout(this.queueTimer);
    clearTimeout(this.runTimer);
    if (this.listener !== undefined) removeListener.call(this.options.signal!, "abort", this.listener);
    this.listener = undefined;
  }
}

/**
 * A `TimeoutError`, as `AbortSignal.timeout` makes it: a DOMException of that name.
 *
 * @param message What timed out.
 * @returns The error.
 *
 * @example Usage
 * ```ts
 * import { timeoutError } from "./cancellation.ts";
 * console.log(timeoutError("Task 'fib' ran for 5 ms, its timeout").name); // TimeoutError
 * ```
 */
export function timeoutError(message: string): Error {
  return new DOMException(message, "TimeoutError") as unknown as Error;
}
