/**
 * The main thread's ledger of submitted tasks: who waits for each one, and the one step that settles it.
 *
 * What it owns: an {@link Entry} per submitted task (its promise's callbacks, or none for `spawn`), the
 * entries placed in task records (by record index), the counters (submitted, pending, settled; a producer
 * in another thread adds the first and last to its slot's counts line too, for the owner's `stats()`), the
 * `drain()` waiters, and what keeps the process alive while tasks are pending.
 *
 * Invariants:
 * - Every entry settles exactly once: {@link TaskLedger.settle} checks and sets `settled` before anything
 *   else, so a second report of the same task (a completion after `terminate()`, a crash report racing a
 *   completion) is a no-op, counted in {@link TaskLedger.duplicateSettles}.
 * - **No user code runs inside the ledger.** Settling calls only the native `resolve` / `reject` of the
 *   task's promise (whose reactions run later, as microtasks) and resolves `drain()` promises the same
 *   way. The one callback into user code, `onError` for a failed `spawn`, is deferred to a microtask of
 *   its own: it runs after the bookkeeping that settled the task is complete, so it may submit, close or
 *   terminate the pool, or throw, without finding the pool half-updated. An `onError` that throws is
 *   reported as an unhandled rejection (the runtime's policy applies), and the pool carries on.
 *
 * Threads: its producer's thread (for the pool's own producer, the thread that created the pool).
 *
 * @module
 */

import { mem } from "../protocol/atomics.ts";
import { holdEventLoop, releaseEventLoop } from "../runtime/holds.ts";
import { Level, type LevelIndex } from "../protocol/levels.ts";
import { SlotCountWords } from "../protocol/layout.ts";

/** A submitted task, as the main thread tracks it until it settles. */
export interface Entry {
  /** Submission order (drain() counts down the tasks submitted before it). */
  readonly seq: number;
  /** The task's name. */
  readonly task: string;
  /** The task's index in the module's sorted export names. */
  readonly taskId: number;
  /** Its record's handle once placed, else -1. */
  handle: number;
  /** The promise's resolve (undefined for spawn). */
  readonly resolve: ((value: unknown) => void) | undefined;
  /** The promise's reject (undefined for spawn: errors go to onError). */
  readonly reject: ((error: unknown) => void) | undefined;
  /** While the entry waits in the backlog: where its encoded arguments are there (see backlog.ts). */
  bytesAt: number;
  /** While the entry waits in the backlog: how many bytes its encoded arguments take. */
  bytesLength: number;
  /**
   * The buffers its arguments move (`move()`), taken from the caller at submission, until they are posted to
   * the worker that runs the task (see submission.ts); undefined for a task that moves none.
   */
  moved: ArrayBuffer[] | undefined;
  /** Set once, when the task settles: the guard that makes settling happen exactly once. */
  settled: boolean;
  /** Its cancellation and deadlines (`pool.with`), if it has any. */
  control: EntryControl | undefined;
  /** Its progress handler (`pool.with({ onProgress })`), if any (lib/producer/progress_reader.ts calls it). */
  onProgress: ((value: unknown) => void) | undefined;
  /** With metrics: when it was submitted (epoch ms; see metrics.ts), else 0. */
  submittedAt: number;
  /** Its priority level (protocol/levels.ts): the queue it is pushed into. */
  level: LevelIndex;
}

/** What the ledger needs of a task's cancellation (see `cancellation.ts`). */
export interface EntryControl {
  /** Whether the task's start must be announced (its timeout counts from there). */
  readonly watchStart: boolean;
  /** Whether an abort while it runs terminates its worker (`force: true`; see kill_guard.ts). */
  readonly force: boolean;
  /** Called when the entry settles, before its promise: stops its timers and listeners. No user code. */
  detach(): void;
}

/** What watches the ledger's counts (the owner's pool events): told after each change, never re-entered. */
export interface LedgerWatch {
  /** A task was submitted (the pending count went up). */
  opened(): void;
  /** A task settled (the pending count went down). */
  settled(): void;
}

/** How a task settled. */
export const Settled = Object.freeze({
  /** With its value. */
  VALUE: 0,
  /** With an error: the task's own or a pool error. */
  ERROR: 1,
  /** Aborted by its caller's signal: a `run` rejects with the reason; a `spawn` reports nothing. */
  ABORTED: 2,
});

/**
 * The main thread's record of every task in flight, and the exactly-once settle step.
 *
 * @example Usage
 * ```ts
 * import { type Entry, Settled, TaskLedger } from "./ledger.ts";
 * const ledger = new TaskLedger(4, undefined);
 * let entry: Entry | undefined;
 * const result = new Promise((resolve, reject) => (entry = ledger.open("add", 0, resolve, reject)));
 * ledger.settle(entry!, Settled.VALUE, 3);
 * ledger.settle(entry!, Settled.VALUE, 4); // a second report: ignored, counted
 * console.log(await result, ledger.duplicateSettles); // 3 1
 * ```
 */
export class TaskLedger {
  /** By record index: the entry placed in that record, if any. */
  readonly placed: (Entry | undefined)[];
  /** Tasks submitted since creation. */
  submitted = 0;
  /** Tasks settled. */
  completed = 0;
  /** Submitted and not yet settled. */
  pending = 0;
  /**
   * Handles of tasks that settled while they ran (a timeout, an abort) and were forgotten: their
   * completion still comes, and frees their record (completion.ts). A producer that leaves its slot waits
   * for them (`Producer.recordsBack`).
   */
  readonly forgotten: Set<number> = new Set();
  /** Reports of a task that had settled already (ignored). */
  duplicateSettles = 0;
  private nextSeq = 0;
  private readonly drainWaiters: { upTo: number; remaining: number; resolve: () => void }[] = [];
  /** Called after each settle (the pending count went down): the room in the pool's queue (room.ts). */
  released: (() => void) | undefined = undefined;
  /**
   * Told after each submission and each settle, once the ledger's counts are whole: the owner's pool
   * events (lib/owner/pool_events.ts), which note what happened and dispatch it later. No user code.
   */
  watch: LedgerWatch | undefined = undefined;
  /** A throw of {@link TaskLedger.watch}'s `opened` (a stack overflow there), reported at the next open. */
  private watchFailure: { error: unknown } | undefined = undefined;
  private keepAlive: ReturnType<typeof setInterval> | undefined;
  private readonly onError: ((error: unknown, task: string) => void) | undefined;

  /**
   * @param taskCapacity The number of task records (entries are placed by record index).
   * @param onError The pool's handler of errors of spawned tasks, if any.
   * @param shared For a producer in another thread: the word of its slot's line where the count of its
   *   pending tasks is kept for the owner, whose `close` waits for it to reach 0 (protocol/producers.ts);
   *   for the owner's own producer in a bounded pool, `ControlWords.ownerPending` (room.ts sums them).
   * @param slotCounts For a producer in another thread: its slot's counts line (`SlotCountWords`), where it
   *   adds each task it submits and each that settles, for the owner's `stats()`.
   */
  constructor(
    taskCapacity: number,
    onError: ((error: unknown, task: string) => void) | undefined,
    shared?: { words: Int32Array; at: number },
    slotCounts?: Int32Array,
  ) {
    this.placed = new Array(taskCapacity).fill(undefined);
    this.onError = onError;
    this.shared = shared;
    this.slotCounts = slotCounts;
  }

  /** See the constructor's `shared`. */
  private readonly shared: { words: Int32Array; at: number } | undefined;
  /** See the constructor's `slotCounts`. */
  private readonly slotCounts: Int32Array | undefined;

  /**
   * Records a new submission.
   *
   * @param task The task's name.
   * @param taskId Its index in the module's export names.
   * @param resolve The promise's resolve, or undefined for spawn.
   * @param reject The promise's reject, or undefined for spawn.
   * @returns The entry, pending.
   */
  open(
    task: string,
    taskId: number,
    resolve: ((value: unknown) => void) | undefined,
    reject: ((error: unknown) => void) | undefined,
  ): Entry {
    const failure = this.watchFailure;
    if (failure !== undefined) {
      this.watchFailure = undefined;
      this.report(failure.error, "(the pool's events)");
    }
    const entry: Entry = {
      seq: this.nextSeq++,
      task,
      taskId,
      handle: -1,
      resolve,
      reject,
      bytesAt: 0,
      bytesLength: 0,
      moved: undefined,
      settled: false,
      control: undefined,
      onProgress: undefined,
      submittedAt: 0,
      level: Level.normal,
    };
    // While tasks are pending, keep the process alive: a pending Atomics.waitAsync does not. The timer
    // first, then the counts (plain updates): a throw at the call (a stack overflow) changes nothing.
    // In a pool worker (a producer opened inside a task), its loop must let the event loop turn too: held
    // as long as the timer is.
    if (this.pending === 0 && this.keepAlive === undefined) {
      this.keepAlive = setInterval(() => {}, 2 ** 30);
      holdEventLoop();
    }
    // The shared counts are calls (a stack overflow can cut one short): made before the plain counts, so
    // that a throw at either leaves this entry counted nowhere that waits for it (the caller saw the
    // throw: no task). The submitted count first: a throw at the pending add then leaves only that
    // statistic one high, never a shared pending count that nothing will take back (room lost, a drain
    // that never ends).
    // Read by the owner's stats() with atomic loads: one writer (this thread), an atomic add (a few ns).
    if (this.slotCounts !== undefined) mem.add(this.slotCounts, SlotCountWords.submitted, 1);
    if (this.shared !== undefined) mem.add(this.shared.words, this.shared.at, 1); // spec: SubmitCountPending
    this.pending++;
    this.submitted++;
    // Counted: from here the entry must reach its caller, so a throw in the watcher (an event's emit, at
    // a stack overflow) is not let out of open(); what is lost is that one "queuefull" event.
    try {
      this.watch?.opened();
    } catch (error) {
      // (Nothing else is safe to call here: kept, and reported at the next open, before it counts.)
      this.watchFailure = { error };
    }
    return entry;
  }

  /**
   * Settles `entry` exactly once: the first call resolves or rejects its promise (or defers `onError` for
   * a failed spawn); later calls are counted and ignored.
   *
   * @param entry The entry.
   * @param how {@link Settled.VALUE}, {@link Settled.ERROR} or {@link Settled.ABORTED}.
   * @param value The result or the error.
   * @returns Whether this call settled it.
   */
  settle(entry: Entry, how: number, value: unknown): boolean {
    if (entry.settled) {
      this.duplicateSettles++;
      return false;
    }
    entry.settled = true;
    this.pending--;
    this.completed++;
    if (this.shared !== undefined) mem.sub(this.shared.words, this.shared.at, 1); // spec: SettleReleasePending
    if (this.slotCounts !== undefined) mem.add(this.slotCounts, SlotCountWords.completed, 1);
    entry.control?.detach();
    if (how === Settled.VALUE) entry.resolve?.(value);
    else if (entry.reject !== undefined) entry.reject(value);
    else if (how !== Settled.ABORTED) this.report(value, entry.task);
    if (this.pending === 0) this.releaseProcess();
    if (this.drainWaiters.length > 0) this.countDown(entry.seq);
    this.released?.();
    this.watch?.settled();
    return true;
  }

  /**
   * Reports an error nobody awaits (a failed spawn, a replacement worker that could not start): to
   * `onError`, in a microtask of its own, or else as an unhandled rejection.
   *
   * @param error The error.
   * @param task The task's name (or what failed).
   */
  report(error: unknown, task: string): void {
    const onError = this.onError;
    if (onError === undefined) {
      void Promise.reject(error);
      return;
    }
    // Deferred: the handler may submit, close, terminate or throw; the pool's state is whole by then.
    queueMicrotask(() => {
      try {
        onError(error, task);
      } catch (thrown) {
        // The handler's own failure is the application's: raise it as the runtime raises any.
        void Promise.reject(thrown);
      }
    });
  }

  /**
   * Resolves when every task submitted before this call has settled.
   *
   * @returns A promise that never rejects.
   */
  drain(): Promise<void> {
    // Every task pending now was submitted before this call, and every later one has a larger seq.
    if (this.pending === 0) return Promise.resolve();
    return new Promise((resolve) => this.drainWaiters.push({ upTo: this.nextSeq, remaining: this.pending, resolve }));
  }

  /**
   * Every entry not yet settled: placed in a record, or waiting in the backlog.
   *
   * @param backlog The entries waiting for a record, in order.
   * @returns A snapshot: placed entries, then the backlog's.
   */
  unsettled(backlog: Iterable<Entry>): Entry[] {
    const all: Entry[] = [];
    for (const entry of this.placed) if (entry !== undefined && !entry.settled) all.push(entry);
    for (const entry of backlog) if (!entry.settled) all.push(entry);
    return all;
  }

  /** Lets the process exit (nothing pending, or the pool stopped). */
  releaseProcess(): void {
    if (this.keepAlive === undefined) return;
    clearInterval(this.keepAlive);
    this.keepAlive = undefined;
    releaseEventLoop();
  }

  private countDown(seq: number): void {
    for (let i = 0; i < this.drainWaiters.length;) {
      const waiter = this.drainWaiters[i];
      if (seq < waiter.upTo && --waiter.remaining === 0) {
        waiter.resolve();
        this.drainWaiters.splice(i, 1);
      } else i++;
    }
  }
}
