/**
 * The main thread's pool: creates the shared buffer and the worker threads, submits tasks through shared
 * memory, settles their promises from a batched completion queue, and runs the lifecycle.
 *
 * What it owns: everything the main thread keeps about a pool — the promise of each task in flight (by
 * record index), the backlog of submissions that wait for a free record, the worker threads, and the
 * lifecycle state. The shared state it creates is described in `layout.ts`; its protocols live in
 * `deque.ts`, `injector.ts`, `sleep.ts`, `task.ts` and `worker.ts`.
 *
 * Submission (no message per task): encode the arguments, take a free record, write the payload, publish
 * QUEUED, push the handle into the injector, and wake a sleeping worker if there is one (`Sleep.newWork`).
 * When every record is in use, the submission waits in the backlog, in order, and is placed as
 * completions free records.
 *
 * Completion: workers push handles into the completion queue and notify the main thread only if it said it
 * waits (`ControlWords.mainWaiting`): the main thread sets that word, re-checks the queue, and waits with
 * `Atomics.waitAsync`, so one wake settles a whole batch.
 *
 * Lifecycle: {@link PoolState}. `close()` refuses new tasks, lets every submitted task settle, then stops
 * the workers cooperatively (lifecycle word + wake all; Deno cannot terminate a thread blocked in
 * `Atomics.wait`). `terminate()` rejects every unsettled task at once and stops the workers. Either way,
 * every submitted task settles exactly once: the settle path removes the task's entry before it calls
 * resolve or reject, and only an entry that is still present is settled.
 *
 * Process lifetime: while tasks are pending a timer keeps the process alive (a pending `waitAsync` does
 * not); an idle open pool lets the process exit (worker threads are unref'd; see `runtime/thread.ts` for
 * how Deno's are).
 *
 * Threads: a `Pool` belongs to the thread that created it (usually the main thread).
 *
 * @module
 */

import { mem } from "./atomics.ts";
import { BufferRegistry, MissingBuffer } from "./buffers.ts";
import { decode, Encoder } from "./codec.ts";
import { initDeque, Stealer } from "./deque.ts";
import { PoolClosedError, PoolTerminatedError, TaskNotFoundError, WorkerCrashedError } from "./errors.ts";
import { initInjector, Injector, QUEUE_EMPTY } from "./injector.ts";
import { ControlWords, type PoolLayout, poolLayout, type PoolShape, StatusWords } from "./layout.ts";
import { startThread, type ThreadHandle } from "./runtime/thread.ts";
import { Sleep } from "./sleep.ts";
import { NO_RECORD, Origin, Outcome, PAYLOAD_BY_MESSAGE, RecordWords, TaskState, TaskTable } from "./task.ts";
import type { WorkerSetup } from "./worker.ts";

/** Options of {@link Pool.create}. Every size has a default that suits small tasks. */
export interface PoolOptions {
  /** Worker threads: a positive integer (default: the hardware's parallelism). */
  workers?: number;
  /** A name for the threads (shown in debuggers and error messages). Default "filch". */
  name?: string;
  /** Slots per worker deque, a power of two (default 256). */
  dequeCapacity?: number;
  /** Tasks in flight in shared memory at once, a power of two up to 2^20 (default 4096); more wait in order. */
  taskCapacity?: number;
  /** Payload bytes inside each task record, a multiple of 64 (default 192). */
  inlineBytes?: number;
  /** Bytes per overflow block for larger payloads, a multiple of 64 from 128 (default 1024). */
  blockBytes?: number;
  /** Overflow blocks, a power of two (default 4096). */
  blocks?: number;
  /** Called with the error of a task started by `spawn` (default: raised as an unhandled rejection). */
  onError?: (error: unknown, task: string) => void;
}

/** The pool's lifecycle. */
export const PoolState = Object.freeze({
  /** Accepting tasks. */
  OPEN: "open",
  /** `close()` called: refusing new tasks, letting submitted ones settle. */
  CLOSING: "closing",
  /** Closed: workers exited. */
  CLOSED: "closed",
  /** Terminated: unsettled tasks rejected, workers stopped. */
  TERMINATED: "terminated",
});

/** One of the {@link PoolState} values. */
export type PoolStateName = (typeof PoolState)[keyof typeof PoolState];

/** A worker's counters, as {@link Pool.stats} reports them. */
export interface WorkerStats {
  /** Tasks run to completion. */
  executed: number;
  /** Tasks it obtained by stealing. */
  stolen: number;
  /** Steal calls it made. */
  stealAttempts: number;
  /** Steal calls that obtained work. */
  successfulSteals: number;
  /** Tasks it took from the injector. */
  injectorPops: number;
  /** Times it went to sleep. */
  sleeps: number;
  /** Times a poster woke it. */
  wakes: number;
  /** Tasks in its deque now (approximate). */
  queued: number;
}

/** What {@link Pool.stats} returns. */
export interface PoolStats {
  /** Per worker, by index. */
  workers: WorkerStats[];
  /** Tasks submitted (run and spawn) since creation. */
  submitted: number;
  /** Tasks settled (resolved or rejected). */
  completed: number;
  /** Submitted and not yet settled. */
  pending: number;
  /** Waiting to run: in the injector, in deques, or in the main thread's backlog (approximate). */
  queued: number;
  /** Workers that died and were replaced. */
  workerCrashes: number;
}

// deno-lint-ignore no-explicit-any
type AnyFunction = (...args: any[]) => unknown;

/** The names of `M`'s exports that are functions: the tasks a pool of module `M` can run. */
export type TaskName<M> = { [K in keyof M]: M[K] extends AnyFunction ? K : never }[keyof M] & string;

/** The parameters of task `K` of module `M`. */
export type TaskArgs<M, K extends keyof M> = M[K] extends (...args: infer A) => unknown ? A : never;

/** What task `K` of module `M` resolves to. */
export type TaskResult<M, K extends keyof M> = M[K] extends (...args: infer _A) => infer R ? Awaited<R> : never;

interface Entry {
  seq: number;
  task: string;
  taskId: number;
  handle: number;
  resolve: ((value: unknown) => void) | undefined;
  reject: ((error: unknown) => void) | undefined;
  /** The encoded arguments, kept only while the entry waits in the backlog. */
  bytes: Uint8Array | undefined;
  /** Set once, when the task settles: the guard that makes settling happen exactly once. */
  settled: boolean;
}

interface Slot {
  thread: ThreadHandle;
  exited: Promise<void>;
  markExited: () => void;
  /** Set once the pool has handled this thread's death: its error and its exit event both report it. */
  dead: boolean;
}

const DEFAULTS = { dequeCapacity: 256, taskCapacity: 4096, inlineBytes: 192, blockBytes: 1024, blocks: 4096 };
const STOP_GRACE_MS = 2000;

/**
 * A work-stealing pool of worker threads that run the exported functions of one task module.
 *
 * @example Usage
 * ```ts ignore
 * // tasks.ts
 * export function add(a: number, b: number): number {
 *   return a + b;
 * }
 *
 * // main.ts
 * import { Pool } from "@filch/filch";
 * import type * as tasks from "./tasks.ts";
 *
 * await using pool = await Pool.create<typeof tasks>(new URL("./tasks.ts", import.meta.url), { workers: 2 });
 * console.log(await pool.run("add", 1, 2)); // 3
 * ```
 */
export class Pool<M extends object = Record<string, AnyFunction>> implements AsyncDisposable {
  private readonly layout: PoolLayout;
  private readonly buffer: SharedArrayBuffer;
  private readonly control: Int32Array;
  private readonly status: Int32Array;
  private readonly injector: Injector;
  private readonly completions: Injector;
  private readonly sleep: Sleep;
  private readonly table: TaskTable;
  private readonly stealers: Stealer[];
  private readonly encoder: Encoder;
  private readonly entries: (Entry | undefined)[];
  /** Submitted and not yet settled (placed in records, or waiting in the backlog). */
  private pending = 0;
  private readonly backlog: Entry[] = [];
  private backlogHead = 0;
  private readonly slots: Slot[] = [];
  private readonly taskIds = new Map<string, number>();
  private taskNames: readonly string[] = [];
  private readonly moduleUrl: string;
  private readonly name: string;
  private readonly onError: ((error: unknown, task: string) => void) | undefined;
  private readonly buffers: BufferRegistry;
  private readonly deferred: number[] = [];
  /** Result payloads that came by message (no free blocks), by handle, until their completion is settled. */
  private readonly messagePayloads = new Map<number, Uint8Array>();
  private readonly drainWaiters: { upTo: number; remaining: number; resolve: () => void }[] = [];
  private state: PoolStateName = PoolState.OPEN;
  private nextSeq = 0;
  private submitted = 0;
  private completed = 0;
  private crashes = 0;
  private waiting = false;
  private keepAlive: ReturnType<typeof setInterval> | undefined;
  private closing: Promise<void> | undefined;

  private constructor(moduleUrl: string, shape: PoolShape, options: PoolOptions) {
    this.moduleUrl = moduleUrl;
    this.name = options.name ?? "filch";
    this.onError = options.onError;
    this.layout = poolLayout(shape);
    const layout = this.layout;
    this.buffer = new SharedArrayBuffer(layout.totalBytes);
    const buffer = this.buffer;
    this.control = new Int32Array(buffer, layout.control, 3 * 16);
    this.status = new Int32Array(buffer, layout.status, shape.workers * StatusWords.count);
    for (let i = 0; i < shape.workers; i++) {
      const region = { buffer, byteOffset: layout.deques + i * layout.dequeBytes, capacity: shape.dequeCapacity };
      initDeque(region);
    }
    this.stealers = Array.from(
      { length: shape.workers },
      (_, i) =>
        new Stealer({ buffer, byteOffset: layout.deques + i * layout.dequeBytes, capacity: shape.dequeCapacity }),
    );
    initInjector({ buffer, byteOffset: layout.injector, capacity: shape.taskCapacity });
    initInjector({ buffer, byteOffset: layout.completions, capacity: shape.taskCapacity });
    TaskTable.init(buffer, layout);
    this.injector = new Injector({ buffer, byteOffset: layout.injector, capacity: shape.taskCapacity });
    this.completions = new Injector({ buffer, byteOffset: layout.completions, capacity: shape.taskCapacity });
    this.sleep = new Sleep(buffer, layout.sleep, shape.workers);
    this.table = new TaskTable(buffer, layout);
    this.entries = new Array(shape.taskCapacity).fill(undefined);
    this.buffers = new BufferRegistry(this.control, ControlWords.nextBufferId, (id, buffer) => {
      for (const slot of this.slots) slot?.thread.post({ type: "buffer", id, buffer });
    });
    this.encoder = new Encoder({ shareBuffer: this.buffers.share });
  }

  /**
   * Creates a pool whose workers each import the task module at `module` and run its exported functions.
   * Resolves once every worker has loaded the module.
   *
   * @param module The task module: a URL (`new URL("./tasks.ts", import.meta.url)`) or an absolute URL string.
   * @param options Worker count, sizes, name, `onError` for spawned tasks.
   * @returns The pool, open.
   * @throws {RangeError} If `workers` is not a positive integer, or a size breaks its rule (the message
   * names the option and the value).
   * @throws {TypeError} If `module` is not a URL, or SharedArrayBuffer is unavailable (the message says how
   * to enable it).
   * @throws The loader's own error if a worker cannot import the module.
   *
   * @example Usage
   * ```ts ignore
   * import { Pool } from "./pool.ts";
   * const pool = await Pool.create(new URL("./tasks.ts", import.meta.url), { workers: 2 });
   * await pool.close();
   * ```
   */
  static async create<M extends object = Record<string, AnyFunction>>(
    module: URL | string,
    options: PoolOptions = {},
  ): Promise<Pool<M>> {
    if (typeof SharedArrayBuffer === "undefined") {
      throw new TypeError(
        "Cannot create pool as SharedArrayBuffer is not available: in a browser, serve the page cross-origin " +
          "isolated (headers 'Cross-Origin-Opener-Policy: same-origin' and 'Cross-Origin-Embedder-Policy: require-corp')",
      );
    }
    const moduleUrl = toModuleUrl(module);
    const workers = options.workers ?? defaultWorkers();
    if (typeof workers !== "number" || !Number.isInteger(workers) || workers <= 0) {
      throw new RangeError(`Cannot create pool as 'workers' must be a positive integer: received ${String(workers)}`);
    }
    if (options.onError !== undefined && typeof options.onError !== "function") {
      throw new TypeError(`Cannot create pool as 'onError' must be a function: received ${typeof options.onError}`);
    }
    const shape: PoolShape = {
      workers,
      dequeCapacity: options.dequeCapacity ?? DEFAULTS.dequeCapacity,
      taskCapacity: options.taskCapacity ?? DEFAULTS.taskCapacity,
      inlineBytes: options.inlineBytes ?? DEFAULTS.inlineBytes,
      blockBytes: options.blockBytes ?? DEFAULTS.blockBytes,
      blocks: options.blocks ?? DEFAULTS.blocks,
    };
    const pool = new Pool<M>(moduleUrl, shape, options);
    try {
      const names = await Promise.all(Array.from({ length: workers }, (_, i) => pool.startWorker(i)));
      pool.taskNames = names[0];
      names[0].forEach((name, id) => pool.taskIds.set(name, id));
    } catch (error) {
      pool.state = PoolState.TERMINATED;
      void pool.stopWorkers(false);
      throw error;
    }
    return pool;
  }

  /**
   * Runs task `task` with `args` on some worker.
   *
   * @param task The name of a function the task module exports.
   * @param args Its arguments: data (numbers, strings, arrays, plain objects, Map, Set, Date, Error, typed
   * arrays, …) copied to the worker; SharedArrayBuffers and views on them by reference.
   * @returns The task's result (awaited if it returns a promise).
   * @throws {TaskNotFoundError} (rejects) If the module exports no function of that name.
   * @throws {TypeError} (rejects) If an argument cannot cross threads; the message names its path.
   * @throws {PoolClosedError} (rejects) If the pool is closing or closed.
   * @throws {PoolTerminatedError} (rejects) If `terminate()` ran before the task settled.
   * @throws {WorkerCrashedError} (rejects) If the worker running it died.
   * @throws (rejects) Whatever the task threw, with its name, message, stack and cause.
   *
   * @example Usage
   * ```ts ignore
   * const sum = await pool.run("add", 1, 2);
   * ```
   */
  run<K extends TaskName<M>>(task: K, ...args: TaskArgs<M, K>): Promise<TaskResult<M, K>> {
    return new Promise((resolve, reject) => {
      this.submit(task, args, resolve as (value: unknown) => void, reject);
    });
  }

  /**
   * Runs task `task` with `args` without returning its result. Its error, if any, goes to the pool's
   * `onError` option, or else is raised as an unhandled promise rejection: never lost.
   *
   * @param task The name of a function the task module exports.
   * @param args Its arguments, as for {@link Pool.run}.
   *
   * @example Usage
   * ```ts ignore
   * pool.spawn("log", "hello");
   * await pool.drain();
   * ```
   */
  spawn<K extends TaskName<M>>(task: K, ...args: TaskArgs<M, K>): void {
    this.submit(task, args, undefined, undefined);
  }

  /**
   * Resolves when every task submitted before this call has settled.
   *
   * @returns A promise that resolves (never rejects).
   *
   * @example Usage
   * ```ts ignore
   * for (let i = 0; i < 100; i++) pool.spawn("work", i);
   * await pool.drain();
   * ```
   */
  drain(): Promise<void> {
    // Every task pending now was submitted before this call, and every later one has a larger seq.
    if (this.pending === 0) return Promise.resolve();
    return new Promise((resolve) => this.drainWaiters.push({ upTo: this.nextSeq, remaining: this.pending, resolve }));
  }

  /**
   * Closes the pool gracefully: new submissions reject with {@link PoolClosedError}, every task already
   * submitted runs and settles, then the workers exit. Calling it again returns the same promise.
   *
   * @returns Resolves when the workers have exited.
   *
   * @example Usage
   * ```ts ignore
   * await pool.close();
   * ```
   */
  close(): Promise<void> {
    if (this.closing !== undefined) return this.closing;
    this.state = PoolState.CLOSING;
    this.closing = (async () => {
      await this.drain();
      if (this.state === PoolState.CLOSING) this.state = PoolState.CLOSED;
      await this.stopWorkers(true);
    })();
    return this.closing;
  }

  /**
   * Stops the pool now: every task not yet settled rejects with {@link PoolTerminatedError}, and the
   * workers stop. New submissions reject with {@link PoolClosedError}.
   *
   * @returns Resolves when the workers have been told to stop and terminated.
   *
   * @example Usage
   * ```ts ignore
   * await pool.terminate();
   * ```
   */
  terminate(): Promise<void> {
    if (this.state === PoolState.TERMINATED) return this.closing ?? Promise.resolve();
    this.state = PoolState.TERMINATED;
    const error = () =>
      new PoolTerminatedError("Cannot finish task as the pool was terminated: submit it to another pool");
    for (const entry of this.unsettled()) this.settle(entry, Outcome.ERROR, error()); // spec: TerminateRejectAll
    this.closing = this.stopWorkers(false);
    return this.closing;
  }

  /**
   * Closes the pool (see {@link Pool.close}); lets `await using pool = await Pool.create(…)` close it.
   *
   * @returns Resolves when closed.
   */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  /**
   * The pool's counters now: per worker and for the pool.
   *
   * @returns A snapshot (counters move while workers run).
   *
   * @example Usage
   * ```ts ignore
   * const { workers, completed } = pool.stats();
   * console.log(completed, workers.map((w) => w.executed));
   * ```
   */
  stats(): PoolStats {
    const workers: WorkerStats[] = this.stealers.map((stealer, i) => {
      const at = i * StatusWords.count;
      const read = (field: number) => mem.load(this.status, at + field);
      return {
        executed: read(StatusWords.executed),
        stolen: read(StatusWords.stolen),
        stealAttempts: read(StatusWords.stealAttempts),
        successfulSteals: read(StatusWords.successfulSteals),
        injectorPops: read(StatusWords.injectorPops),
        sleeps: read(StatusWords.sleeps),
        wakes: read(StatusWords.wakes),
        queued: stealer.length,
      };
    });
    const inDeques = workers.reduce((sum, w) => sum + w.queued, 0);
    return {
      workers,
      submitted: this.submitted,
      completed: this.completed,
      pending: this.pending,
      queued: this.injector.length + inDeques + (this.backlog.length - this.backlogHead),
      workerCrashes: this.crashes,
    };
  }

  /**
   * The pool's shared memory: the buffer's size, and the bytes each task in flight occupies in it (its
   * record with the inline payload, and its slots in the injector, the free list and the completion queue).
   * A payload beyond the inline bytes also takes overflow blocks, shared by all tasks.
   *
   * @returns The sizes, in bytes.
   *
   * @example Usage
   * ```ts ignore
   * console.log(pool.memory.sharedBytes); // 5,377,280 with the default options and 2 workers
   * ```
   */
  get memory(): { sharedBytes: number; bytesPerTask: number; taskCapacity: number } {
    const layout = this.layout;
    return {
      sharedBytes: layout.totalBytes,
      bytesPerTask: layout.recordBytes + 3 * 8,
      taskCapacity: layout.shape.taskCapacity,
    };
  }

  /** The pool's lifecycle state. */
  get lifecycle(): PoolStateName {
    return this.state;
  }

  /** The task names the module exports, sorted. */
  get tasks(): readonly string[] {
    return this.taskNames;
  }

  // ---- submission ----

  private submit(
    task: string,
    args: unknown[],
    resolve: ((value: unknown) => void) | undefined,
    reject: ((error: unknown) => void) | undefined,
  ): void {
    const fail = (error: unknown) => (reject !== undefined ? reject(error) : this.report(error, task));
    if (this.state !== PoolState.OPEN) {
      fail(new PoolClosedError(`Cannot run task '${task}' as the pool is ${this.state}: create a new pool`));
      return;
    }
    const taskId = this.taskIds.get(task);
    if (taskId === undefined) {
      fail(new TaskNotFoundError(String(task), this.taskNames));
      return;
    }
    let length: number;
    try {
      length = this.encoder.encode(args, "args");
    } catch (error) {
      fail(error);
      return;
    }
    if (length > this.table.maxPayloadBytes()) {
      fail(
        new RangeError(
          `Cannot run task '${task}' as its arguments encode to ${length} bytes and the pool holds at most ${this.table.maxPayloadBytes()}: pass large data in a SharedArrayBuffer, or raise 'blocks'`,
        ),
      );
      return;
    }
    const entry: Entry = {
      seq: this.nextSeq++,
      task,
      taskId,
      handle: -1,
      resolve,
      reject,
      bytes: undefined,
      settled: false,
    };
    this.submitted++;
    if (++this.pending === 1) this.holdProcess();
    // Keep submission order: nothing overtakes the backlog.
    if (this.backlogHead === this.backlog.length) {
      if (this.place(entry, this.encoder)) {
        this.armCompletionWait();
        return;
      }
      // Out of records or blocks: settle what is done (freeing some), then try once more.
      this.drainCompletions();
      if (this.backlogHead === this.backlog.length && this.place(entry, this.encoder)) {
        this.armCompletionWait();
        return;
      }
    }
    entry.bytes = this.encoder.bytes.slice();
    this.backlog.push(entry);
    this.armCompletionWait();
  }

  /** Takes a record, writes the payload, publishes the task to the injector. */
  private place(entry: Entry, payload: Uint8Array | Encoder): boolean {
    const table = this.table;
    const handle = table.allocate();
    if (handle === NO_RECORD) return false;
    const index = table.indexOf(handle);
    const written = payload instanceof Uint8Array
      ? table.writePayload(index, payload)
      : table.writeEncoded(index, payload);
    if (!written) {
      table.release(index);
      return false;
    }
    mem.write(table.words, table.at(index, RecordWords.task), entry.taskId);
    mem.write(table.words, table.at(index, RecordWords.origin), Origin.MAIN);
    entry.handle = handle;
    this.entries[index] = entry;
    // Publishes the record (payload, task) to the worker that pops the handle.
    mem.store(table.words, table.at(index, RecordWords.state), TaskState.QUEUED);
    this.injector.pushPatiently(handle); // spec: SubmitPushInjector
    this.sleep.newWork();
    return true;
  }

  private feedBacklog(): void {
    while (this.backlogHead < this.backlog.length) {
      const entry = this.backlog[this.backlogHead];
      if (entry.settled) {
        this.backlogHead++;
        continue;
      }
      if (!this.place(entry, entry.bytes!)) break;
      entry.bytes = undefined;
      this.backlogHead++;
    }
    if (this.backlogHead === this.backlog.length && this.backlogHead > 0) {
      this.backlog.length = 0;
      this.backlogHead = 0;
    }
  }

  // ---- completion ----

  private armCompletionWait(): void {
    if (this.waiting || this.pending === 0 || this.state === PoolState.TERMINATED) return;
    // Say we wait, then look once more: a worker that pushed before seeing the word is found here.
    mem.store(this.control, ControlWords.mainWaiting, 1); // spec: MainAnnounceWaiting
    if (this.completions.length > 0) { // spec: MainRecheckCompletions
      mem.store(this.control, ControlWords.mainWaiting, 0); // spec: MainRetractWaiting
      this.waiting = true;
      queueMicrotask(() => this.onCompletionWake());
      return;
    }
    const result = mem.waitAsync(this.control, ControlWords.mainWaiting, 1); // spec: MainWaitAsync
    this.waiting = true;
    if (result.async) result.value.then(() => this.onCompletionWake());
    else queueMicrotask(() => this.onCompletionWake());
  }

  private onCompletionWake(): void {
    this.waiting = false;
    mem.store(this.control, ControlWords.mainWaiting, 0); // spec: MainClearWaiting
    this.drainCompletions();
    this.armCompletionWait();
  }

  private drainCompletions(): void {
    for (;;) {
      const handle = this.completions.pop(); // spec: MainPopCompletion
      if (handle === QUEUE_EMPTY) break;
      this.complete(handle);
    }
    for (let i = 0; i < this.deferred.length;) {
      if (this.tryComplete(this.deferred[i])) this.deferred.splice(i, 1);
      else i++;
    }
    if (this.state !== PoolState.TERMINATED) this.feedBacklog();
  }

  private complete(handle: number): void {
    if (!this.tryComplete(handle)) this.deferred.push(handle);
  }

  /**
   * Settles a DONE record's task; false if its result waits for a message (a shared buffer it names, or
   * the payload itself when it found no free blocks) that has not arrived yet.
   */
  private tryComplete(handle: number): boolean {
    const table = this.table;
    const index = table.indexOf(handle);
    const entry = this.entries[index];
    if (entry === undefined || entry.handle !== handle) {
      // Settled already (terminated, or its worker was declared dead): only the record is left to free.
      table.release(index);
      return true;
    }
    // Plain reads: ordered by the completion-queue pop that handed us the handle.
    const outcome = mem.read(table.words, table.at(index, RecordWords.outcome));
    let value: unknown;
    let decoded = outcome;
    const byMessage = mem.read(table.words, table.at(index, RecordWords.payloadLength)) === PAYLOAD_BY_MESSAGE;
    const bytes = byMessage ? this.messagePayloads.get(handle) : undefined;
    if (byMessage && bytes === undefined) return false; // its message has not arrived yet
    try {
      value = bytes !== undefined
        ? decode(bytes, 0, bytes.length, this.buffers.resolve)
        : table.readPayload(index, this.buffers.resolve);
    } catch (error) {
      if (error instanceof MissingBuffer) return false;
      value = error;
      decoded = Outcome.ERROR;
    }
    this.entries[index] = undefined;
    if (byMessage) {
      this.messagePayloads.delete(handle);
      mem.store(table.words, table.at(index, RecordWords.payloadLength), 0);
    }
    table.release(index);
    this.settle(entry, decoded, value);
    return true;
  }

  /** Settles an entry exactly once: the flag is checked and set before resolve or reject is called. */
  private settle(entry: Entry, outcome: number, value: unknown): void {
    if (entry.settled) return;
    entry.settled = true;
    this.pending--;
    this.completed++;
    if (outcome === Outcome.VALUE) entry.resolve?.(value);
    else if (entry.reject !== undefined) entry.reject(value);
    else this.report(value, entry.task);
    if (this.pending === 0) this.releaseProcess();
    if (this.drainWaiters.length > 0) this.countDown(entry.seq);
  }

  private report(error: unknown, task: string): void {
    if (this.onError !== undefined) this.onError(error, task);
    // No handler: surface it as the runtime surfaces any unhandled rejection.
    else void Promise.reject(error);
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

  /** Every entry not yet settled: placed in a record, or waiting in the backlog. */
  private unsettled(): Entry[] {
    const all: Entry[] = [];
    for (const entry of this.entries) if (entry !== undefined && !entry.settled) all.push(entry);
    for (let i = this.backlogHead; i < this.backlog.length; i++) {
      const entry = this.backlog[i];
      if (!entry.settled) all.push(entry);
    }
    return all;
  }

  private holdProcess(): void {
    this.keepAlive ??= setInterval(() => {}, 2 ** 30);
  }

  private releaseProcess(): void {
    if (this.keepAlive !== undefined) clearInterval(this.keepAlive);
    this.keepAlive = undefined;
  }

  // ---- workers ----

  private async startWorker(index: number): Promise<string[]> {
    const url = new URL(import.meta.url.endsWith(".ts") ? "./worker_thread.ts" : "./worker_thread.js", import.meta.url);
    const thread = await startThread(url, `${this.name}-${index}`);
    let markExited = () => {};
    const exited = new Promise<void>((resolve) => (markExited = resolve));
    const slot: Slot = { thread, exited, markExited, dead: false };
    this.slots[index] = slot;
    return await new Promise<string[]>((resolve, reject) => {
      let ready = false;
      thread.onMessage((message) => {
        const m = message as {
          type: string;
          names?: string[];
          bytes?: Uint8Array;
          id?: number;
          buffer?: SharedArrayBuffer;
          handle?: number;
        };
        if (m.type === "ready") {
          ready = true;
          thread.unref();
          resolve(m.names!);
        } else if (m.type === "load-error") {
          reject(decode(m.bytes!, 0, m.bytes!.length));
        } else if (m.type === "payload") {
          this.messagePayloads.set(m.handle!, m.bytes!);
          if (this.deferred.length > 0) this.drainCompletions();
        } else if (m.type === "buffer") {
          this.buffers.add(m.id!, m.buffer!);
          // A buffer a worker shared (in a fork's arguments, or a result): other workers may steal a task
          // that names it, so they need it too.
          for (const other of this.slots) {
            if (other !== slot) other?.thread.post({ type: "buffer", id: m.id!, buffer: m.buffer! });
          }
          if (this.deferred.length > 0) this.drainCompletions();
        } else if (m.type === "exited") {
          slot.markExited();
        }
      });
      thread.onError((error) => {
        if (!ready) reject(error);
        else this.workerDied(index, slot, error);
      });
      thread.onExit((code) => {
        slot.markExited();
        if (ready) this.workerDied(index, slot, new Error(`worker ${index} exited with code ${code}`));
      });
      const setup: WorkerSetup = {
        buffer: this.buffer,
        layout: this.layout,
        index,
        moduleUrl: this.moduleUrl,
        buffers: this.buffers.entries(),
      };
      thread.post({ type: "start", setup });
    });
  }

  /** A worker died outside a task: reject what it was running, replace it; its deque is stolen from. */
  private workerDied(index: number, slot: Slot, cause: unknown): void {
    // Handled once: an uncaught error is followed by an exit event, and the replacement is only placed in
    // `slots` after an await, so the slot itself carries the mark (a replacement starts only after it).
    if (slot.dead) return;
    slot.dead = true;
    if (this.state === PoolState.CLOSED || this.state === PoolState.TERMINATED) return;
    this.crashes++;
    slot.thread.terminate();
    slot.markExited();
    const table = this.table;
    for (const entry of this.unsettled()) {
      if (entry.handle < 0) continue;
      const i = table.indexOf(entry.handle);
      if (this.entries[i] !== entry) continue;
      const state = mem.load(table.words, table.at(i, RecordWords.state));
      const worker = mem.load(table.words, table.at(i, RecordWords.worker));
      if (state === TaskState.RUNNING && worker === index) { // spec: DiedRejectRunning
        this.entries[i] = undefined;
        this.settle(
          entry,
          Outcome.ERROR,
          new WorkerCrashedError(
            `Cannot finish task '${entry.task}' as worker ${index} died while running it: see 'cause'`,
            index,
            { cause },
          ),
        );
        // The record stays out of use: the dead worker may have held its payload mid-write.
      }
    }
    // Forked tasks it was running: their joiners (other workers) wait on the latch; fail them instead.
    this.failForkedTasksOf(index, cause);
    // If it died counted as sleeping (at the await in sleepAsync), uncount it, so posters do not look for it.
    this.sleep.forget(index);
    // The replacement takes over the same deque (the dead thread can no longer touch it).
    this.startWorker(index).then(
      () => this.sleep.newWork(),
      (error) => this.report(error, "(worker replacement)"),
    );
  }

  /**
   * Settles the forked tasks a dead worker was running with a WorkerCrashedError, and sets their latches,
   * so the workers joining them go on. The dead thread can no longer touch those records.
   */
  private failForkedTasksOf(index: number, cause: unknown): void {
    const table = this.table;
    const { taskCapacity } = this.layout.shape;
    for (let i = 0; i < taskCapacity; i++) {
      if (mem.load(table.words, table.at(i, RecordWords.origin)) !== Origin.FORK) continue;
      if (mem.load(table.words, table.at(i, RecordWords.state)) !== TaskState.RUNNING) continue;
      if (mem.load(table.words, table.at(i, RecordWords.worker)) !== index) continue;
      const error = new WorkerCrashedError(
        `Cannot finish a forked task as worker ${index} died while running it: see 'cause'`,
        index,
        { cause },
      );
      this.encoder.encode(error, "error");
      if (!table.writeEncoded(i, this.encoder)) {
        // No blocks for the full error: a short one without a stack fits in the record itself.
        const short = new WorkerCrashedError(`worker ${index} died`, index);
        delete (short as { stack?: string }).stack;
        this.encoder.encode(short, "error");
        table.writeEncoded(i, this.encoder);
      }
      mem.store(table.words, table.at(i, RecordWords.outcome), Outcome.ERROR);
      mem.store(table.words, table.at(i, RecordWords.state), TaskState.DONE);
      mem.store(table.words, table.at(i, RecordWords.latch), 1); // spec: DiedSetLatch
      mem.notify(table.words, table.at(i, RecordWords.latch)); // spec: DiedNotifyLatch
    }
  }

  private async stopWorkers(graceful: boolean): Promise<void> {
    mem.store(this.control, ControlWords.lifecycle, 1); // spec: StopStoreLifecycle
    this.sleep.wakeAll();
    const slots = [...this.slots];
    if (graceful) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const grace = new Promise<void>((resolve) => (timer = setTimeout(resolve, STOP_GRACE_MS)));
      await Promise.race([Promise.all(slots.map((s) => s?.exited)), grace]);
      clearTimeout(timer);
    }
    for (const slot of slots) slot?.thread.terminate();
    this.releaseProcess();
  }
}

function toModuleUrl(module: URL | string): string {
  if (module instanceof URL) return module.href;
  if (typeof module === "string") {
    try {
      return new URL(module).href;
    } catch {
      throw new TypeError(
        `Cannot create pool as 'module' must be a URL or an absolute URL string: received '${module}' (use new URL("./tasks.ts", import.meta.url))`,
      );
    }
  }
  throw new TypeError(`Cannot create pool as 'module' must be a URL: received ${typeof module}`);
}

function defaultWorkers(): number {
  const n = (globalThis as { navigator?: { hardwareConcurrency?: number } }).navigator?.hardwareConcurrency;
  return typeof n === "number" && n > 0 ? n : 2;
}
