/**
 * A producer's admission of a submission: the checks that may refuse it, its entry in the ledger, and its
 * steps into shared memory, noted until done so that a throw that cuts them short strands nothing.
 *
 * What it owns: the task names and ids of the pool's module, the submission in progress (`submitting`),
 * and its repair; and every refusal of a submission, for the pool and for a producer in another thread
 * alike (both submit through lib/submitter.ts). The checks, in order: the pool is open and the producer
 * not closed; the caller's signal is not aborted (`run` rejects with its reason, `spawn` reports
 * nothing); the pool has room (`maxQueue`); the task exists; the arguments encode (getters run here: user
 * code); the pool is still open (a getter may have closed it); the payload fits; the moved buffers
 * detach. A refusal rejects the `run` (or reports the `spawn`'s error) and records nothing.
 *
 * Invariants:
 * - Every admitted submission has one entry, and its promise settles exactly once (ledger.ts): by its
 *   result, or, cut short before it was published, by the repair (a no-op for a promise its caller's
 *   throw rejected; the ledger's count comes back).
 * - A submission cut short (a stack overflow: `run` called at the edge of the stack) is completed before
 *   anything else the pool does ({@link Admission.repairIfCut} at the start of each of the pool's calls
 *   and of each completion drain): not published, its record and cache are given back and its entry
 *   settled; published and the workers not yet told, they are told.
 * - No user code runs between the second state check and the end of the steps.
 *
 * Threads: its producer's thread (for the pool's own producer, the thread that created the pool).
 *
 * @module
 */

import type { Canceller } from "./cancellation.ts";
import type { Encoder } from "../codec/codec.ts";
import type { CompletionReader } from "./completion.ts";
import { PoolClosedError, PoolTerminatedError, QueueFullError, unknownTaskError } from "../errors.ts";
import { Level, type LevelIndex, type Levels } from "../protocol/levels.ts";
import { type Entry, Settled, type TaskLedger } from "./ledger.ts";
import type { PoolMetrics } from "../metrics.ts";
import { detach } from "../codec/move.ts";
import { type ResolvedRunOptions, signalAborted, signalReason } from "../options.ts";
import type { PoolStateName } from "../lifecycle.ts";
import type { Sleep } from "../protocol/sleep.ts";
import type { Room } from "./room.ts";
import type { Submitter } from "./submission.ts";
import type { TaskTable } from "../record/task.ts";

/** What admission works with: the pool's parts. */
export interface AdmissionParts {
  readonly ledger: TaskLedger;
  readonly room: Room;
  readonly submitter: Submitter;
  readonly reader: CompletionReader;
  readonly canceller: Canceller;
  readonly table: TaskTable;
  readonly levels: Levels;
  readonly sleep: Sleep;
  readonly metrics: PoolMetrics | undefined;
}

/**
 * Admits submissions into the pool, and completes one a throw cut short.
 *
 * @example Usage
 * ```ts ignore
 * const admission = new Admission(parts, () => pool.lifecycle);
 * admission.setTasks(["add", "mul"]);
 * new Promise((resolve, reject) => admission.submit("add", [1, 2], resolve, reject));
 * ```
 */
export class Admission {
  private readonly ledger: TaskLedger;
  private readonly room: Room;
  private readonly submitter: Submitter;
  private readonly reader: CompletionReader;
  private readonly canceller: Canceller;
  private readonly table: TaskTable;
  private readonly levels: Levels;
  private readonly sleep: Sleep;
  private readonly metrics: PoolMetrics | undefined;
  private readonly state: () => PoolStateName;
  private readonly taskIds = new Map<string, number>();
  private names: readonly string[] = [];

  /**
   * @param parts The pool's parts.
   * @param state The pool's lifecycle state now.
   */
  constructor(parts: AdmissionParts, state: () => PoolStateName) {
    this.ledger = parts.ledger;
    this.room = parts.room;
    this.submitter = parts.submitter;
    this.reader = parts.reader;
    this.canceller = parts.canceller;
    this.table = parts.table;
    this.levels = parts.levels;
    this.sleep = parts.sleep;
    this.metrics = parts.metrics;
    this.state = state;
  }

  /**
   * The module's task names, sorted (a task's id is its index), once its workers loaded it.
   *
   * @param names The names.
   */
  setTasks(names: readonly string[]): void {
    this.names = names;
    names.forEach((name, id) => this.taskIds.set(name, id));
  }

  /** The module's task names, sorted. */
  get taskNames(): readonly string[] {
    return this.names;
  }

  /**
   * A task's id, or undefined if the module exports no such function.
   *
   * @param task The task's name.
   * @returns Its index in {@link Admission.taskNames}.
   */
  taskId(task: string): number | undefined {
    return this.taskIds.get(task);
  }

  /**
   * Set once a fixed pool has no worker left and none starting (owner.ts `noWorkersLeft`): the error each
   * later submission rejects with at once. Undefined while the pool has workers.
   */
  unstaffed: ((task: string) => Error) | undefined = undefined;

  /** Completes a submission a throw cut short, if there is one (see {@link Admission.repair}). */
  repairIfCut(): void {
    if (this.submitting !== undefined) this.repair();
  }

  /**
   * Records a task and places it (or queues it in the backlog); `resolve` undefined for a spawn. Returns
   * its entry, or undefined if it was refused (its promise rejected, or its error reported). With
   * `builtinId`, the record runs that built-in task (a batch's chunk, batch.ts) with `args`, and `task`
   * only names it in errors. `level` is its priority level when it has no `options` (a map's, a batch's).
   */
  submit(
    task: string,
    args: unknown[],
    resolve: ((value: unknown) => void) | undefined,
    reject: ((error: unknown) => void) | undefined,
    options?: ResolvedRunOptions,
    builtinId?: number,
    level: LevelIndex = Level.normal,
  ): Entry | undefined {
    try {
      return this.submitSteps(task, args, resolve, reject, options, builtinId, level);
    } catch (error) {
      // A throw from the pool's own steps (a stack overflow: the call came at the edge of the stack).
      // Published and the workers told, the task runs and settles its promise (or reports to onError);
      // else `run` rejects, `spawn` throws, and the pool's next call completes what was cut short (see
      // Admission.repair).
      const entry = this.submitting;
      if (entry !== undefined && this.submitter.stage === 2) {
        this.submitting = undefined;
        return entry;
      }
      throw error;
    }
  }

  /** {@link Admission.submit}'s work. */
  private submitSteps(
    task: string,
    args: unknown[],
    resolve: ((value: unknown) => void) | undefined,
    reject: ((error: unknown) => void) | undefined,
    options: ResolvedRunOptions | undefined,
    builtinId: number | undefined,
    level: LevelIndex,
  ): Entry | undefined {
    if (this.submitting !== undefined) this.repair();
    // A task is a name (a function here would put its source text in every message below).
    if (typeof task !== "string") {
      this.refuse("(not a task name)", reject, unknownTaskError(task, this.names));
      return undefined;
    }
    if (!this.open()) {
      this.refuse(task, reject, this.closedError(task));
      return undefined;
    }
    // A fixed pool with no worker left (every start failed): nothing would ever run it.
    if (this.unstaffed !== undefined) {
      this.refuse(task, reject, this.unstaffed(task));
      return undefined;
    }
    // Aborted already: nothing is submitted; `run` rejects with the reason (as fetch does), `spawn` was
    // asked not to run and reports nothing.
    if (options?.signal !== undefined && signalAborted(options.signal)) {
      reject?.(signalReason(options.signal));
      return undefined;
    }
    if (!this.room.hasRoom()) {
      this.refuse(
        task,
        reject,
        new QueueFullError(
          `Cannot run task '${task}' as the pool's queue is full: ${this.room.pendingInPool()} tasks pending, at most ${this.room.maxPending} (workers + maxQueue), ${this.ledger.pending} of them this producer's (while another producer waits for room, each keeps to its share): await waitForRoom() first, or raise maxQueue`,
        ),
      );
      return undefined;
    }
    const taskId = builtinId ?? this.taskIds.get(task);
    if (taskId === undefined) {
      this.refuse(task, reject, unknownTaskError(task, this.names));
      return undefined;
    }
    let encoder: Encoder;
    try {
      encoder = this.submitter.encode(args); // runs the arguments' getters: user code
    } catch (error) {
      this.refuse(task, reject, error);
      return undefined;
    }
    // A getter may have closed or terminated the pool (or closed this producer) meanwhile.
    if (!this.open()) {
      this.refuse(task, reject, this.closedError(task));
      return undefined;
    }
    const length = encoder.length;
    if (length > this.table.maxPayloadBytes()) {
      this.refuse(
        task,
        reject,
        new RangeError(
          `Cannot run task '${task}' as its arguments encode to ${length} bytes and the pool holds at most ${this.table.maxPayloadBytes()}: pass large data in a SharedArrayBuffer, or raise 'payloadMemory'`,
        ),
      );
      return undefined;
    }
    // Buffers marked by move(): taken from the caller now (detached), once nothing can refuse the task.
    let moved: ArrayBuffer[] | undefined;
    if (encoder.moved.length !== 0) {
      try {
        moved = detach(encoder.moved);
      } catch (error) {
        // A getter detached one after it was encoded, or it cannot be transferred (a Wasm memory's).
        this.refuse(task, reject, error);
        return undefined;
      }
    }
    const entry = this.ledger.open(task, taskId, resolve, reject);
    // Counted pending first (for a producer in another thread, in its slot's shared count), then the state
    // read once more: the owner's close stores CLOSING, then reads every count; either it sees this task
    // and waits for it, or this read sees CLOSING (spec/Producers.tla: SubmitCountPending, SubmitReadState).
    if (!this.open()) { // spec: SubmitReadState
      this.ledger.settle(entry, Settled.ERROR, this.closedError(task));
      return undefined;
    }
    entry.moved = moved;
    if (this.metrics !== undefined) entry.submittedAt = this.metrics.submitClock();
    entry.level = options?.level ?? level;
    if (options !== undefined) {
      entry.onProgress = options.onProgress;
      this.canceller.control(entry, options);
    }
    // Noted (a plain store) until done: a throw cut short below is completed by repair.
    this.submitting = entry;
    this.submitter.stage = 0;
    // Armed before the task is published: the completion that settles it must find the reader waiting.
    // Behind a backlog the task is not published here (it joins the backlog, in order), and the arm after
    // the enqueue below counts it.
    if (this.submitter.backlogLength === 0) this.reader.arm();
    this.submitter.enqueue(entry, encoder);
    this.submitting = undefined;
    // Once more if it went to the backlog: waiting for a record now, it must be counted as such (a throw
    // before this line is repaired, and repair arms).
    if (this.submitter.backlogLength > 0) this.reader.arm();
    // After the task is enqueued (a getter may have aborted the signal meanwhile: it is cancelled now).
    if (options !== undefined) this.canceller.begin(entry);
    return entry;
  }

  /** The submission in progress, until it is done; left set by a throw that cut it short. */
  private submitting: Entry | undefined;

  /**
   * Completes a submission a throw cut short (its caller saw the throw: `run` rejected with it, `spawn`
   * threw it). Not published: its record, if it had one, is freed and its entry settled (a no-op for the
   * promise, which the throw rejected; the ledger's count comes back). Published: the workers are told, if
   * that step was the one cut short. Runs at the start of the pool's calls and of each completion drain.
   */
  private repair(): void {
    const entry = this.submitting!;
    const submitter = this.submitter;
    const table = this.table;
    // A push that claimed its position is published by the queue's own repair: then it was published.
    const queue = this.levels.queues[entry.level];
    queue.repair();
    if (submitter.stage === 0 && entry.handle !== -1 && queue.published === entry.handle) {
      submitter.stage = 1;
    }
    if (submitter.stage === 1) this.sleep.newWork();
    if (submitter.stage === 0) {
      if (entry.handle !== -1) {
        const index = table.indexOf(entry.handle);
        if (this.ledger.placed[index] === entry) this.ledger.placed[index] = undefined;
        table.releaseHandle(entry.handle);
      }
      // A record allocated and not yet published (named by the entry or not): marked cached by this
      // thread, in no cache; a slab taken and not yet named. This thread's marks only (-1 is the owner's:
      // a producer in another thread has an id of its own).
      table.reclaimOwn();
      this.ledger.settle(
        entry,
        Settled.ERROR,
        new RangeError(`Cannot run task '${entry.task}' as its submission was cut short (a stack overflow)`),
      );
    }
    submitter.stage = 2;
    this.submitting = undefined;
    this.reader.arm();
  }

  /** Refuses a submission: `run` rejects with `error`; a `spawn`'s error is reported (see TaskLedger.report). */
  refuse(task: string, reject: ((error: unknown) => void) | undefined, error: unknown): void {
    if (reject !== undefined) reject(error);
    else this.ledger.report(error, task);
  }

  /**
   * Its producer in another thread was closed (`PoolProducer.close`): from now on every submission is
   * refused with a PoolClosedError, as when the pool is not open (a PoolTerminatedError once the pool was
   * terminated).
   */
  close(): void {
    this.closed = true;
  }

  /** Whether its producer was closed ({@link Admission.close}). */
  private closed = false;

  /** Whether submissions are admitted: the pool is open and its producer was not closed. */
  /** Whether the pool is open and this producer not closed (a task graph's submission asks too). */
  open(): boolean {
    return !this.closed && this.state() === "open";
  }

  /**
   * The error of a submission the pool's state, or its producer's close, refuses: a PoolTerminatedError
   * once the pool was terminated (whatever else is closed: the pool is gone), else a PoolClosedError.
   */
  closedError(task: string): Error {
    // A broadcast checks the state before the name: a function given as the task must not put its source
    // text here (see unknownTaskError).
    const name = typeof task === "string" ? task : "(not a task name)";
    const state = this.state();
    if (state === "terminated") {
      return new PoolTerminatedError(`Cannot run task '${name}' as the pool was terminated: create a new pool`);
    }
    if (this.closed) {
      return new PoolClosedError(
        `Cannot run task '${name}' as this producer was closed: open another from a new pool.handle()`,
      );
    }
    return new PoolClosedError(`Cannot run task '${name}' as the pool is ${state}: create a new pool`);
  }
}
