/**
 * A producer: the side of the pool that submits. It admits tasks, encodes and places them in shared
 * memory (or keeps them in order in its backlog), keeps the ledger of what it waits for, reads its
 * completions and settles them, applies backpressure (`maxQueue`), cancellation and deadlines, runs maps
 * and batches, and drains its own tasks.
 *
 * What it needs, and all it needs (so that a producer need not be the thread that started the workers):
 * - the pool's memory as this thread sees it (protocol/memory.ts `PoolMemory`: the buffer, its layout, the
 *   payload arena and their views), set up by the owner before any producer is built; the producer takes
 *   from it the views it needs (sleep words, completion channels, status lines, deques to count) and opens
 *   its own handles (task records, injectors);
 * - its completion channel: the completion queue and the `mainWaiting` control word (completion.ts);
 * - a way to ask the owner to act, {@link OwnerPort}: post a message to a worker (a cancellation, a
 *   directed task whose buffers move), share a SharedArrayBuffer with every worker, request a forced kill,
 *   pick a worker for a directed task, and read the lifecycle state. The port is an interface defined
 *   here; this folder imports nothing of `lib/owner/` nor the runtime's threads.
 * And two calls the other way, for what reaches the owner's thread by message on the producer's behalf:
 * {@link Producer.bufferArrived} and {@link Producer.payloadArrived}.
 *
 * What it owns: its parts, built here in dependency order, each passed its collaborators:
 * - `ledger.ts`: who waits for each task, and the one step that settles it (exactly once);
 * - `admission.ts`: the checks that may refuse a submission, its entry, and the completion of one a throw
 *   cut short;
 * - `submission.ts`: encoding arguments and placing tasks in shared memory, in order (the backlog);
 * - `completion.ts`: reading finished tasks and freeing their records (once per generation);
 * - `cancellation.ts`: signals, timeouts and forced aborts;
 * - the registry of SharedArrayBuffers passed by reference (codec/buffers.ts).
 * Where two of them need each other (the completion reader drains, and a drain first completes a
 * submission cut short, which admission holds), the producer stands between them: it is the reader's
 * {@link CompletionHooks}, and a small {@link Placement} object is the submitter's.
 *
 * Broadcast is not here: its parts travel by message to every worker and come back by message, which
 * only the owner receives, and a worker's death (the owner's to notice) fails its part; see
 * `lib/owner/broadcast.ts`.
 *
 * The re-entrancy rule: no user code runs while the producer's state is half-updated. The only user code
 * it calls is `onError` (deferred to a microtask by the ledger) and the getters of arguments, which run
 * while arguments are encoded, before anything is recorded; the state is checked again after encoding,
 * since a getter may have closed or terminated the pool.
 *
 * Threads: the producer's own thread (for the pool's own producer, the thread that created the pool).
 *
 * @module
 */

import { Admission } from "./admission.ts";
import { mem } from "../protocol/atomics.ts";
import { chunkTaskId, submitBatch } from "./batch.ts";
import { BufferRegistry } from "../codec/buffers.ts";
import { Canceller } from "./cancellation.ts";
import { type CompletionHooks, CompletionReader } from "./completion.ts";
import { PoolTerminatedError, ResourceLimitError, WorkerCrashedError } from "../errors.ts";
import { decode, type Encoder } from "../codec/codec.ts";
import { Injector } from "../protocol/injector.ts";
import { levelOf, type Levels } from "../protocol/levels.ts";
import type { BatchOptions } from "../options.ts";
import { type MapInputs, type MapOptions, startMap } from "./map.ts";
import { type MetricsStats, metricsTable, type PoolMetrics, TaskStamps } from "../metrics.ts";
import { ControlWords, NoteWords, StatusWords } from "../protocol/layout.ts";
import { type Entry, Settled, TaskLedger } from "./ledger.ts";
import { type ResolvedOptions, resolveRunOptions, type RunOptions } from "../options.ts";
import type { OwnerPort } from "./owner_port.ts";
import { originOf, ProducerWords } from "../protocol/producers.ts";
import type { PoolMemory } from "../protocol/memory.ts";
import { Room } from "./room.ts";
import { type Placement, Submitter } from "./submission.ts";
import { TaskFlags, TaskState, TaskTable } from "../record/task.ts";
import type { GraphHost } from "./graph_host.ts";
import { noWorkersCause, type NoWorkersNote } from "./owner_link.ts";

/** Why a task from a producer in another thread cannot move buffers (the end of the encoder's TypeError). */
/** Why a graph node's arguments cannot move buffers (the end of the encoder's TypeError). */
const GRAPH_MOVE_REFUSAL = {
  refuse:
    "and a graph node's arguments cannot be moved (any worker may run it): pass it without move() to copy it, or in a SharedArrayBuffer",
};

const REMOTE_MOVE_REFUSAL = {
  refuse:
    "and a producer in another thread cannot move buffers to a worker (a move travels by message, which only the pool's owner can send): pass it without move() to copy it, or in a SharedArrayBuffer",
};

/**
 * Whether this runtime has `Promise.withResolvers` (ES2024: Deno, Bun, Node 22 and later; not Node 20,
 * which package.json's `engines` still declares). Read once, when the module loads: `run` then calls the
 * native one directly where it exists (a constant branch, no wrapper in between), and
 * {@link withResolversByExecutor} only where it does not.
 */
const NATIVE_WITH_RESOLVERS = typeof (Promise as { withResolvers?: unknown }).withResolvers === "function";

/** `Promise.withResolvers`, made with an executor: for runtimes without it (Node 20). */
function withResolversByExecutor<T>(): PromiseWithResolvers<T> {
  let resolve!: (value: T | PromiseLike<T>) => void;
  let reject!: (reason?: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** How often {@link Producer.recordsBack} reads its completions again while a record is still out (ms). */
const RECORDS_BACK_POLL_MS = 5;

/** What a producer is built from. */
export interface ProducerParts {
  /** The pool's memory as this thread sees it (set up by the owner before any producer is built). */
  readonly memory: PoolMemory;
  /** The owner, as the producer asks it to act. */
  readonly port: OwnerPort;
  /** `onError`, `maxPending`, `errorClasses`. */
  readonly options: ProducerOptions;
  /** Its producer slot (protocol/producers.ts): 0, the default, for the owner's own. */
  readonly slot?: number;
  /** With the `metrics` option: the pool's metrics (the producer stamps submission times). */
  readonly metrics?: PoolMetrics;
}

/** What the owner's parts share with its own producer (see {@link Producer.shared}). */
export interface ProducerShared {
  /** The task records, as this thread sees them. */
  readonly table: TaskTable;
  /** Who waits for each task submitted here. */
  readonly ledger: TaskLedger;
  /** The queues workers take submitted tasks from, one per priority level. */
  readonly levels: Levels;
  /** Reads this producer's completions. */
  readonly reader: CompletionReader;
  /** The SharedArrayBuffers passed by reference, by id, as this thread knows them. */
  readonly buffers: BufferRegistry;
}

/** The options a producer reads (the pool's, resolved). */
export type ProducerOptions = Pick<ResolvedOptions, "onError" | "maxPending" | "errorClasses">;

/** A worker's counters, read from its status line, as `Pool.stats()` reports them. */
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

/** A producer's share of the pool's stats (the pool adds the owner's death counters). */
export interface ProducerStats {
  /** Per worker, by index. */
  workers: WorkerStats[];
  /** Tasks submitted since creation. */
  submitted: number;
  /** Tasks settled. */
  completed: number;
  /** Submitted and not yet settled. */
  pending: number;
  /** Waiting to run: in the injector, in deques, or in this producer's backlog (approximate). */
  queued: number;
  /** Reports of a task that had settled already, or of a record freed already. */
  duplicateReports: number;
  /** The arena of large payloads: bytes handed out to slabs, and how often it was reset. */
  payloadArena: { bytes: number; resets: number };
  /** With the `metrics` option: run and wait times, per pool and per worker, and utilization. */
  metrics?: MetricsStats;
}

/** A runner of tasks with options (the pool's `TaskRunner`, untyped). */
export interface Runner {
  /** As {@link Producer.run}, with the options. */
  run(task: string, ...args: unknown[]): Promise<unknown>;
  /** As {@link Producer.spawn}, with the options. */
  spawn(task: string, ...args: unknown[]): void;
}

/**
 * The submitting side of a pool: everything a thread that submits does, with no Worker object.
 *
 * @example Usage
 * ```ts ignore
 * const producer = new Producer({ memory, port: owner, options }); // owner: an OwnerPort
 * producer.setTasks(["add"]);
 * console.log(await producer.run("add", [1, 2])); // 3
 * ```
 */
export class Producer implements CompletionHooks {
  /** The task records, as this thread sees them (the owner's recovery works on the same view). */
  readonly table: TaskTable;
  /** The queues workers take submitted tasks from, one per priority level. */
  readonly levels: Levels;
  /** Who waits for each task submitted here. */
  readonly ledger: TaskLedger;
  /** Room in the pool's queue (`maxQueue`), for the pool as a whole. */
  readonly room: Room;
  /** Reads this producer's completions. */
  readonly reader: CompletionReader;
  /** The SharedArrayBuffers passed by reference, by id, as this thread knows them. */
  readonly buffers: BufferRegistry;
  /** Its producer slot (protocol/producers.ts): 0 for the owner's producer. */
  readonly slot: number;
  /** The pool's memory as this thread sees it. */
  private readonly memory: PoolMemory;
  private readonly metrics: PoolMetrics | undefined;
  /** With the `metrics` option: where this producer notes its tasks' submission times. */
  private readonly stamps: TaskStamps | undefined;
  private readonly port: OwnerPort;
  private readonly canceller: Canceller;
  private readonly submitter: Submitter;
  private readonly admission: Admission;
  /** The error classes results and errors are decoded with (a graph's failed input's error too). */
  private readonly errorClasses: ResolvedOptions["errorClasses"];

  /**
   * Builds the producer's parts. Calls nothing on `port` meanwhile (the owner may still be building).
   *
   * @param parts The memory, the owner's port, the options, the slot and the metrics.
   */
  constructor(parts: ProducerParts) {
    const { memory, port, options } = parts;
    const slot = parts.slot ?? 0;
    const { buffer, layout } = memory;
    const shape = layout.shape;
    this.port = port;
    this.slot = slot;
    this.memory = memory;
    this.metrics = parts.metrics;
    const control = memory.control;
    // Where this producer's completions come (protocol/producers.ts): slot 0 is the owner's.
    const channel = memory.channels[slot];
    // A producer in another thread notes its queue steps in its slot's notes (the owner completes them if
    // the thread dies: owner/producer_deaths.ts); the owner's own producer needs none (its thread is the
    // owner's).
    const notes = (at: number) => slot === 0 ? undefined : memory.slotNotes(slot, at);
    this.levels = slot === 0 ? memory.levels() : memory.levels([
      notes(NoteWords.injectorHigh)!,
      notes(NoteWords.injector)!,
      notes(NoteWords.injectorLow)!,
    ]);
    const completions = new Injector(channel.queue, notes(NoteWords.completions));
    this.table = new TaskTable(memory, { slot });
    // Each producer's pending count in shared memory: a remote one's for the owner's close, and, in a
    // bounded pool, the owner's own too, for the room check of every producer (room.ts).
    const bounded = options.maxPending !== Infinity;
    this.ledger = new TaskLedger(
      shape.taskCapacity,
      options.onError,
      slot !== 0
        ? { words: memory.slotLine(slot), at: ProducerWords.pending }
        : bounded
        ? { words: control, at: ControlWords.ownerPending }
        : undefined,
      slot !== 0 ? memory.slotCounts(slot) : undefined,
    );
    this.room = new Room(
      options.maxPending,
      { pending: () => this.ledger.pending, arm: () => this.reader.arm() },
      memory,
      slot,
    );
    if (bounded) this.ledger.released = () => this.room.released();
    this.buffers = new BufferRegistry(control, ControlWords.nextBufferId, (id, sab) => port.shareBuffer(id, sab));
    this.canceller = new Canceller(
      this.table,
      this.ledger,
      (worker, message) => port.post(worker, message),
      (worker, handle, task) =>
        port.kill(
          worker,
          handle,
          new Error(`worker ${worker} was terminated to force the abort of task '${task}' (force: true)`),
        ),
    );
    this.stamps = this.metrics === undefined ? undefined : new TaskStamps(buffer, layout);
    this.submitter = new Submitter({
      table: this.table,
      levels: this.levels,
      sleep: memory.sleep,
      ledger: this.ledger,
      shareBuffer: this.buffers.share,
      placement: new Directions(this.canceller, memory.status, port),
      stamps: this.stamps,
      // The completion reader reads the cells of the tasks placed with a handler (made just below).
      progress: { watch: (index) => this.reader.progress.watch(index) },
      producer: {
        origin: originOf(slot),
        moves: slot === 0 ? "transfer" : REMOTE_MOVE_REFUSAL,
        share: () => this.recordShare(),
        placing: slot === 0 ? undefined : { words: memory.slotLine(slot), at: ProducerWords.placing },
      },
    });
    this.errorClasses = options.errorClasses;
    this.reader = new CompletionReader({
      memory,
      channel,
      completions,
      table: this.table,
      ledger: this.ledger,
      buffers: this.buffers,
      hooks: this,
      errorClasses: options.errorClasses,
    });
    this.admission = new Admission(
      {
        ledger: this.ledger,
        room: this.room,
        submitter: this.submitter,
        reader: this.reader,
        canceller: this.canceller,
        table: this.table,
        levels: this.levels,
        sleep: memory.sleep,
        metrics: this.metrics,
      },
      () => port.state(),
    );
  }

  // ---- the completion reader's hooks ----

  /** The reader's hook at the start of each drain (from the event loop, at a shallow depth). */
  beforeDrain(): void {
    this.admission.repairIfCut();
    // A producer in another thread learns of a terminate from the pool's state word (its owner wakes it).
    if (this.slot !== 0 && this.terminated()) this.terminatedByOwner();
  }

  /** The reader's hook: whether tasks wait in the backlog for a record this producer may take. */
  starved(): boolean {
    return this.submitter.starved;
  }

  /** The reader's hook: whether this producer waits for room in the pool's queue (it waits even with nothing pending). */
  waitsForRoom(): boolean {
    return this.room.waiting;
  }

  /** The reader's hook: whether this producer waits for room and there is room now (room.ts). */
  roomFree(): boolean {
    return this.room.waiting && this.room.hasRoom();
  }

  /** The reader's hook: how many tasks wait in this producer's backlog. */
  backlogLength(): number {
    return this.submitter.backlogLength;
  }

  /** The reader's hook: whether the pool was terminated. */
  terminated(): boolean {
    return this.port.state() === "terminated";
  }

  /**
   * A producer in another thread whose pool was terminated: every task not settled rejects with a
   * PoolTerminatedError, as the owner's own do, and nothing more is read (once).
   */
  private terminatedByOwner(): void {
    if (this.endedByOwner) return;
    this.endedByOwner = true;
    this.reader.stop();
    this.rejectUnsettled("its owner terminated it");
    this.dispose();
  }
  private endedByOwner = false;

  /**
   * The most records this producer may hold now: all of them while no other producer waits for one, its
   * fair share (the records divided among the open producers) while one does. The table holds
   * `indexMask + 1` records, every one of them allocatable (the free list holds them all), so the share
   * divides that count, as docs/producers.md says (not `indexMask`: one record short).
   */
  private recordShare(): number {
    if (!this.reader.othersWaitForRecords()) return Infinity;
    const open = mem.load(this.memory.control, ControlWords.producersOpen) + 1;
    return Math.max(1, Math.floor((this.table.indexMask + 1) / open));
  }

  /** The reader's hook after it freed records: the backlog goes in (unless the pool was terminated). */
  freed(): void {
    if (this.port.state() !== "terminated") this.submitter.feed();
    // Woken because another producer's task settled: room for our waiters, maybe.
    this.room.check();
  }

  // ---- the module's tasks ----

  /**
   * The module's task names, sorted (a task's id is its index), once its workers loaded it.
   *
   * @param names The names.
   */
  setTasks(names: readonly string[]): void {
    this.admission.setTasks(names);
  }

  /** The task names the module exports, sorted. */
  get taskNames(): readonly string[] {
    return this.admission.taskNames;
  }

  /**
   * A task's id, or undefined if the module exports no such function.
   *
   * @param task The task's name.
   * @returns Its index in {@link Producer.taskNames}.
   */
  taskId(task: string): number | undefined {
    return this.admission.taskId(task);
  }

  // ---- submitting ----

  /**
   * Runs `task` with `args` on some worker (see `Pool.run`).
   *
   * @param task The task's name.
   * @param args Its arguments.
   * @returns Its result.
   */
  run(task: string, args: unknown[]): Promise<unknown> {
    // Made with withResolvers, not an executor: no closure and no call into it, a task. On V8 that took the
    // main thread's CPU in the demo's shape down by about 7% (docs/benchmarks.md, 2026-11-28). Node 20
    // lacks it: there the same comes from an executor (see NATIVE_WITH_RESOLVERS).
    const { promise, resolve, reject } = NATIVE_WITH_RESOLVERS
      ? Promise.withResolvers<unknown>()
      : withResolversByExecutor<unknown>();
    try {
      this.admission.submit(task, args, resolve, reject);
    } catch (error) {
      // What an executor's throw did: the promise rejects with it (a stack overflow in the pool's steps).
      reject(error);
    }
    return promise;
  }

  /**
   * Runs `task` with `args`, its error reported to `onError` (see `Pool.spawn`).
   *
   * @param task The task's name.
   * @param args Its arguments.
   */
  spawn(task: string, args: unknown[]): void {
    this.admission.submit(task, args, undefined, undefined);
  }

  /**
   * Runs `task` once for each argument list, small ones in chunks (see `Pool.runMany`).
   *
   * @param task The task's name.
   * @param argsList The arguments of each task.
   * @param options `priority`.
   * @returns The results, in order.
   * @throws {TypeError} If `argsList` is not an array, or an option is wrong (at the call).
   */
  runMany(task: string, argsList: readonly unknown[][], options: BatchOptions = {}): Promise<unknown[]> {
    if (!Array.isArray(argsList)) {
      throw new TypeError(
        `Cannot run tasks as 'argsList' must be an array of argument arrays: received ${typeof argsList}`,
      );
    }
    if (options === null || typeof options !== "object") {
      throw new TypeError(
        `Cannot run tasks as the options of runMany must be an object: received ${
          options === null ? "null" : typeof options
        }`,
      );
    }
    const level = levelOf(options.priority);
    const admission = this.admission;
    const taskId = admission.taskId(task);
    const chunkId = chunkTaskId(admission.taskNames.length);
    return submitBatch(task, taskId, argsList, this.memory.workers, {
      one: (args, resolve, reject) => admission.submit(task, args, resolve, reject, undefined, undefined, level),
      chunk: (flat, resolve, reject) => admission.submit(task, flat, resolve, reject, undefined, chunkId, level),
    });
  }

  /**
   * A runner whose tasks have `options` (see `Pool.with`).
   *
   * @param options The tasks' options (read once, here).
   * @returns The runner.
   * @throws {TypeError} If `options` is not an object or `signal` is not an AbortSignal.
   * @throws {RangeError} If a timeout is not a number of ms from 0 to 2^31 - 1.
   */
  with(options: RunOptions): Runner {
    const resolved = resolveRunOptions(options);
    return {
      run: (task: string, ...args: unknown[]): Promise<unknown> =>
        new Promise((resolve, reject) => {
          this.admission.submit(task, args, resolve, reject, resolved);
        }),
      spawn: (task: string, ...args: unknown[]): void => {
        this.admission.submit(task, args, undefined, undefined, resolved);
      },
    };
  }

  /**
   * Runs `task` once for each input, at most `concurrency` at once (see `Pool.map`).
   *
   * @param task The name of a task of one argument.
   * @param inputs The arguments.
   * @param options `concurrency`, `ordered`, `signal`, `priority`.
   * @returns The results, as an async iterable.
   * @throws {TypeError} If an option has the wrong type.
   * @throws {RangeError} If `concurrency` is not an integer from 1.
   */
  map<T, R>(task: string, inputs: MapInputs<T>, options: MapOptions): AsyncGenerator<R, void, undefined> {
    const admission = this.admission;
    return startMap<T, R>(
      {
        submit: (args, resolve, reject, builtinId, level) =>
          admission.submit(task, args, resolve, reject, undefined, builtinId, level),
        cancel: (entry, reason) => this.canceller.cancel(entry, reason, false),
        hasRoom: () => this.room.hasRoom(),
        waitForRoom: () => this.room.waitForRoom(),
        taskId: admission.taskId(task),
        chunkId: chunkTaskId(admission.taskNames.length),
        workers: this.memory.workers,
      },
      inputs,
      options,
    );
  }

  /**
   * Resolves when another task can be taken without `QueueFullError`.
   *
   * @returns A promise that never rejects.
   */
  waitForRoom(): Promise<void> {
    return this.room.waitForRoom();
  }

  /**
   * Resolves when every task submitted here before this call has settled.
   *
   * @returns A promise that resolves (never rejects).
   */
  drain(): Promise<void> {
    this.admission.repairIfCut();
    return this.ledger.drain();
  }

  /**
   * What the owner's parts share with the owner's own producer (its thread's handles): the task records,
   * the ledger, the injectors, the completion reader and the registry of shared buffers.
   */
  get shared(): ProducerShared {
    const { table, ledger, levels, reader, buffers } = this;
    return { table, ledger, levels, reader, buffers };
  }

  /**
   * What a task graph submitted here works with (lib/graph/submit.ts): this producer's records, queues,
   * ledger and checks.
   *
   * @returns The graph's host.
   */
  graphHost(): GraphHost {
    return {
      table: this.table,
      graph: this.memory.graph,
      levels: this.levels,
      sleep: this.memory.sleep,
      ledger: this.ledger,
      origin: originOf(this.slot),
      taskNames: this.taskNames,
      open: () => this.admission.open(),
      closedError: (task) => this.closedError(task),
      taskId: (task) => this.taskId(task),
      encode: (args) => this.submitter.encode(args, GRAPH_MOVE_REFUSAL),
      arm: () => this.reader.arm(),
      abort: (worker, handle) => this.port.post(worker, { type: "abort", handle }),
      watch: (index) => this.reader.progress.watch(index),
      metrics: this.metrics === undefined || this.stamps === undefined
        ? undefined
        : graphStamps(this.metrics, this.stamps),
      // With the pool's own crash errors too: a node whose worker died is a failed input like any other.
      decode: (bytes) =>
        decode(
          bytes,
          0,
          bytes.length,
          this.buffers.resolve,
          new Map([
            ["WorkerCrashedError", WorkerCrashedError],
            ["ResourceLimitError", ResourceLimitError],
            ...(this.errorClasses ?? []),
          ]),
        ),
    };
  }

  /** A producer in another thread is closing: its admission refuses every submission from now on. */
  closeSubmissions(): void {
    this.admission.close();
  }

  /** Completes a submission a throw cut short, if there is one (first thing in each of the pool's calls). */
  repairIfCut(): void {
    this.admission.repairIfCut();
  }

  /**
   * The error of a submission the pool's state refuses.
   *
   * @param task The task's name.
   * @returns A PoolClosedError naming the state (a PoolTerminatedError once the pool was terminated).
   */
  closedError(task: string): Error {
    return this.admission.closedError(task);
  }

  /**
   * Encodes arguments into bytes of their own (a broadcast's, sent to each worker). Runs user code (getters).
   *
   * @param args The arguments.
   * @param moves What to do with buffers marked by `move()` (see `EncoderOptions.moves`).
   * @returns A copy of the encoded bytes.
   * @throws {TypeError} If an argument cannot cross threads, or moves a buffer `moves` refuses.
   */
  encodeCopy(args: unknown[], moves: Encoder["moves"]): Uint8Array {
    return this.submitter.encode(args, moves).snapshot();
  }

  // ---- what reaches the owner's thread for the producer ----

  /**
   * A worker passed SharedArrayBuffer `buffer`, registered as `id`, by reference (its completion may name it).
   *
   * @param id The buffer's id.
   * @param buffer The buffer.
   */
  bufferArrived(id: number, buffer: SharedArrayBuffer): void {
    this.buffers.add(id, buffer);
    this.reader.bufferArrived();
  }

  /**
   * A result payload came by message (it found no free blocks, or its result moved buffers).
   *
   * @param handle The task's handle.
   * @param bytes Its encoded outcome.
   * @param moved The buffers its result moved, if any.
   */
  payloadArrived(handle: number, bytes: Uint8Array, moved: ArrayBuffer[] | undefined): void {
    this.reader.payloadArrived(handle, bytes, moved);
  }

  // ---- the end ----

  /**
   * Resolves once no record holds a task of this producer any more (every task settled, and the
   * completion of each that settled while it ran, by a timeout or an abort, was read and its record
   * freed), or once the pool was terminated (nothing comes back then). A producer in another thread waits
   * for this before it gives its slot back, so that no completion reaches a slot after its producer left.
   *
   * @returns A promise that never rejects.
   */
  async recordsBack(): Promise<void> {
    const placed = this.ledger.placed;
    for (;;) {
      this.reader.drain();
      if (this.port.state() === "terminated") return;
      if (this.ledger.forgotten.size === 0 && !placed.some((entry) => entry !== undefined)) return;
      await new Promise((resolve) => setTimeout(resolve, RECORDS_BACK_POLL_MS));
    }
  }

  /** Stops reading completions (the pool is being terminated). */
  stopReading(): void {
    this.reader.stop();
  }

  /**
   * Rejects every task not yet settled with a PoolTerminatedError naming it, and forgets the backlog.
   *
   * @param why Why the pool was terminated (for the messages).
   */
  rejectUnsettled(why: string): void {
    const unsettled = this.ledger.unsettled(this.submitter.waiting());
    this.submitter.clear();
    // One error per task (each names its task), without a stack: the stack would show terminate()'s
    // internals, not the caller, and capturing 800k of them blocked the main thread for seconds.
    const limits = Error as unknown as { stackTraceLimit?: number };
    const stackTraceLimit = limits.stackTraceLimit;
    limits.stackTraceLimit = 0;
    try {
      for (const entry of unsettled) { // spec: TerminateRejectAll
        this.ledger.settle(
          entry,
          Settled.ERROR,
          new PoolTerminatedError(
            `Cannot finish task '${entry.task}' as the pool was terminated (${why}): submit it to another pool`,
          ),
        );
      }
    } finally {
      limits.stackTraceLimit = stackTraceLimit;
    }
  }

  /**
   * The pool has no worker live or starting (owner.ts `noWorkersLeft`, `noWorkerLive`): the tasks no worker
   * can run reject with `error(task)`. `permanent` (a fixed pool: nothing starts a worker again): every
   * task not yet settled (queued in the injectors, in a deque, or in the backlog) and every later
   * submission, at once. Not permanent (an elastic pool: a later submission may start one): the tasks
   * that wait (in the backlog, or QUEUED: moved to CANCELLED, as a cancellation does, so that a worker
   * started later frees the record and never runs it; a graph's node, WAITING or QUEUED, likewise, as the
   * graph's cancellation does: the worker that finds it CANCELLED walks it and sends its record back, which
   * is then only freed here; the owner cancels the queued nodes that have no entry, graph/submit.ts
   * `cancelQueuedNodes`); one that started or finished settles as usual, and later submissions are
   * admitted (they start a worker again).
   *
   * @param error The error for a task, by its name.
   * @param permanent Whether every later submission is refused too.
   * @returns How many tasks it rejected.
   */
  rejectForNoWorkers(error: (task: string) => Error, permanent = true): number {
    if (permanent) this.admission.unstaffed = error;
    const unsettled = this.ledger.unsettled(this.submitter.waiting());
    if (permanent) this.submitter.clear();
    const { table } = this;
    let rejected = 0;
    for (const entry of unsettled) {
      if (entry.handle !== -1) {
        const index = table.indexOf(entry.handle);
        const graph = (table.fields.loadFlags(index) & TaskFlags.GRAPH) !== 0;
        // Queued: taken from the workers (spec: CancelCasQueued), as a cancelled task is; its record is
        // freed by whoever takes it (a worker started later), no longer this producer's to wait for. A
        // graph's node (its entry unsettled: its record is still the graph's) is cancelled as the graph's
        // cancellation does: whoever finds it CANCELLED walks it and sends its record back, which is
        // then only freed here.
        const cancelled = graph ? this.cancelNode(index) : mem.compareExchange(
          table.words,
          table.fields.stateWord(index),
          TaskState.QUEUED,
          TaskState.CANCELLED,
        ) === TaskState.QUEUED;
        if (cancelled) this.ledger.placed[index] = undefined;
        else if (!permanent) continue;
      }
      if (this.ledger.settle(entry, Settled.ERROR, error(entry.task))) rejected++;
    }
    // Records of ours come back after their tasks settled here (a graph's cancelled nodes, walked by a
    // worker started later, with its nodes that have no entry: the owner's cancelQueuedNodes): read them
    // when they come, even with nothing pending (completion.ts `expectStrays`).
    this.reader.expectStrays();
    return rejected;
  }

  /**
   * A graph node whose entry is unsettled (its record is the graph's), with no worker to run it: moved from
   * WAITING or QUEUED to CANCELLED (spec: CancelCasNode), as graph/submit.ts `cancelGraph` does.
   *
   * @returns Whether it is CANCELLED now (by this call, or by a cancellation before): it never runs, and
   *   the worker that finds it so walks it (its dependants cancelled) and sends its record back.
   */
  private cancelNode(index: number): boolean {
    const { table } = this;
    const state = table.fields.stateWord(index);
    let was = mem.compareExchange(table.words, state, TaskState.WAITING, TaskState.CANCELLED); // spec: CancelCasNode
    if (was === TaskState.QUEUED) was = mem.compareExchange(table.words, state, TaskState.QUEUED, TaskState.CANCELLED);
    return was === TaskState.WAITING || was === TaskState.QUEUED || was === TaskState.CANCELLED;
  }

  /**
   * The owner said the pool has no worker (lib/producer/owner_link.ts `NoWorkersNote`): this producer's
   * tasks that no worker can run reject, as the owner's own do ({@link Producer.rejectForNoWorkers}).
   *
   * @param note What the owner said.
   */
  noWorkers(note: NoWorkersNote): void {
    const cause = noWorkersCause(note);
    this.rejectForNoWorkers(
      (task) => new WorkerCrashedError(`Cannot run task '${task}' as ${note.what}`, note.worker, { cause }),
      note.permanent,
    );
  }

  /** The workers stopped: gives back the backlog's buffer and lets the process exit. */
  dispose(): void {
    this.submitter.dispose();
    this.room.stop();
    this.ledger.releaseProcess();
  }

  // ---- counters ----

  /**
   * This producer's counters, and the workers' (read from shared memory).
   *
   * @returns A snapshot.
   */
  stats(): ProducerStats {
    const status = this.memory.status;
    const workers: WorkerStats[] = this.memory.stealers.map((stealer, i) => {
      const at = i * StatusWords.count;
      const read = (field: number) => mem.load(status, at + field);
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
    const ledger = this.ledger;
    return {
      workers,
      submitted: ledger.submitted,
      completed: ledger.completed,
      pending: ledger.pending,
      queued: this.levels.queued + inDeques + this.submitter.backlogLength,
      duplicateReports: ledger.duplicateSettles + this.table.duplicateReleases,
      payloadArena: { bytes: this.table.slabs.used, resets: this.table.slabs.resets },
      ...(this.metrics === undefined ? {} : { metrics: this.metrics.stats() }),
    };
  }

  /**
   * The task metrics as a printable table (see `Pool.metricsTable`).
   *
   * @returns The table.
   * @throws {TypeError} If the pool was created without `metrics: true`.
   */
  metricsTable(): string {
    if (this.metrics === undefined) {
      throw new TypeError("Cannot print metrics as the pool records none: create it with { metrics: true }");
    }
    return metricsTable(this.metrics.stats());
  }
}

/** The submitter's {@link Placement}: a controlled task's start, a directed task's worker and its post. */
class Directions implements Placement {
  private readonly canceller: Canceller;
  private readonly status: Int32Array;
  private readonly port: OwnerPort;

  constructor(canceller: Canceller, status: Int32Array, port: OwnerPort) {
    this.canceller = canceller;
    this.status = status;
    this.port = port;
  }

  placed(entry: Entry): void {
    this.canceller.placed(entry);
  }

  pickWorker(): number {
    return this.port.pickWorker();
  }

  direct(worker: number, handle: number, moved: ArrayBuffer[]): void {
    // Counted before it is posted, by pickWorker (owner.ts): the worker never sees its message without the
    // count (it would not know to read its messages before sleeping), and an elastic pool's worker does
    // not retire while it counts one (protocol/slots.ts).
    this.port.post(worker, { type: "directed", handle, moved }, moved);
  }
}

/** A graph's submission times (GraphHost `metrics`): one clock read a graph, noted in every node's record. */
function graphStamps(metrics: PoolMetrics, stamps: TaskStamps): NonNullable<GraphHost["metrics"]> {
  return { now: () => metrics.submitClock(), submitted: (index, at) => stamps.submitted(index, at) };
}
