/**
 * The pool's public face: create, run, spawn, drain, close, terminate, stats. A thin facade: `Pool.create`
 * resolves the options, assembles the parts (lib/assemble.ts) and starts the workers; each method goes to
 * one of the two sides it is made of:
 * - its producer (lib/producer/producer.ts), the side that submits: admission, placing, the ledger,
 *   completions, backpressure, cancellation, map, batches, drain, its counters. The submitting methods
 *   (`run`, `spawn`, `runMany`, `map`, `with`, `waitForRoom`, `drain`) are those of every
 *   {@link TaskSubmitter} (lib/submitter.ts), which a producer in another thread shares;
 * - its owner (lib/owner/owner.ts), the side that holds the workers: starting them, deaths and repairs,
 *   forced kills, broadcast, close, terminate and the lifecycle.
 * The producer asks the owner to act through a port it defines (lib/producer/owner_port.ts), so that the
 * same producer can run in a thread that did not start the workers.
 *
 * The re-entrancy rule: no user code runs while the pool's state is half-updated. The only user code the
 * pool calls is `onError` (deferred to a microtask by the ledger) and the getters of arguments, which run
 * while arguments are encoded, before anything is recorded; the state is checked again after encoding,
 * since a getter may have closed or terminated the pool.
 *
 * Lifecycle: `close()` refuses new tasks, lets every submitted task settle, then stops the workers
 * cooperatively (lifecycle word + wake all; Deno cannot terminate a thread blocked in `Atomics.wait`);
 * with a `timeout`, tasks still unsettled then are terminated. `terminate()` rejects every unsettled task
 * with a {@link PoolTerminatedError} naming it and stops the workers. Once closed or terminated, the state
 * does not change again.
 *
 * Process lifetime: while tasks are pending a timer keeps the process alive (a pending `waitAsync` does
 * not); an idle open pool lets the process exit (worker threads are unref'd; see `runtime/thread.ts`).
 *
 * Threads: a `Pool` belongs to the thread that created it (usually the main thread), its owner. Other
 * threads submit through a producer opened from {@link Pool.handle} (lib/pool_producer.ts).
 *
 * @module
 */

import { assemblePool } from "./assemble.ts";
import type { MetricsStats } from "./metrics.ts";
import { type PoolLayout, PROGRESS_CELL_WORDS } from "./protocol/layout.ts";
import { moduleHref, type PoolOptions, resolveOptions } from "./options.ts";
import type { ElasticStats } from "./owner/growth.ts";
import type { Owner } from "./owner/owner.ts";
import type { SlotCounts } from "./owner/links.ts";
import type { Producer, WorkerStats } from "./producer/producer.ts";
import type { PoolHandle } from "./producer/handle.ts";
import { type AnyFunction, type TaskArgs, type TaskName, type TaskResult, TaskSubmitter } from "./submitter.ts";

import type { PoolStateName } from "./lifecycle.ts";

export { PoolState, type PoolStateName } from "./lifecycle.ts";
export type { WorkerStats } from "./producer/producer.ts";
export type { AbortSignalLike, BatchOptions, PoolOptions, Priority, RunOptions } from "./options.ts";
export type { MapInputs, MapOptions } from "./producer/map.ts";
export type { HistogramSummary, MetricsStats, WorkerMetrics } from "./metrics.ts";
export type { SlotCounts } from "./owner/links.ts";
export {
  type EventLike,
  type EventTargetLike,
  PoolEvent,
  type PoolEventListener,
  type PoolEventMap,
  PoolEvents,
  type PoolEventType,
  type PoolListenerOptions,
  RuntimeEvent,
  RuntimeEventTarget,
} from "./events.ts";
import type { PoolEvents } from "./events.ts";
export {
  type AnyFunction,
  type TaskArgs,
  type TaskName,
  type TaskResult,
  type TaskRunner,
  TaskSubmitter,
  type UnaryTaskName,
} from "./submitter.ts";

/** Options of {@link Pool.close}. */
export interface CloseOptions {
  /**
   * The most ms to wait for submitted tasks to settle; then those still unsettled reject with
   * {@link PoolTerminatedError} and the workers are stopped, as by `terminate()`. Default: no limit (a
   * task that never settles keeps `close()` waiting).
   */
  timeout?: number;
}
/** What {@link Pool.stats} returns. */
export interface PoolStats {
  /** Per worker, by index. */
  workers: WorkerStats[];
  /**
   * Tasks submitted since creation (run, spawn, each of `runMany`'s chunks and `map`'s tasks, each
   * broadcast part), from every thread: the pool's own and every producer's (the sum of
   * {@link PoolStats.producers}).
   */
  submitted: number;
  /** Of those, the ones settled (resolved or rejected), in the thread that submitted them. */
  completed: number;
  /**
   * Submitted and not yet settled, from every thread. At rest, `submitted` = `completed` + `pending` + the
   * producers' `abandoned` (tasks of a producer whose thread died, which nobody settles).
   */
  pending: number;
  /**
   * The same counts per submitting thread: slot 0, the pool's own (this thread's), first; then each slot of
   * a producer in another thread (`pool.handle()`, `openProducer`) that holds one now or ever counted a
   * task, by slot. A slot's counts are those of every producer that held it. Each producer's thread writes
   * its own in shared memory; this thread reads them (atomic loads, a snapshot of moving counts).
   */
  producers: SlotCounts[];
  /** Waiting to run: in the injector, in deques, or in the main thread's backlog (approximate). */
  queued: number;
  /** Workers that died and were replaced. */
  workerCrashes: number;
  /** Workers replaced by the `recycle` option (after `afterTasks` tasks or past `heapMB`); not deaths. */
  workersRecycled: number;
  /** Workers terminated to force the abort of a task (`force: true`) and replaced; not in `workerCrashes`. */
  forcedKills: number;
  /**
   * Of those deaths (crashes and forced kills), the ones that caught a worker inside one of the pool's own
   * steps, which recovery completed from the worker's notes. A forced kill never lands there (the kill
   * guard); a crash may (out of memory in the pool's code, a thread terminated from outside). Producer
   * threads that died inside a step (see `producerDeaths`) are counted here too.
   */
  deathsInSteps: number;
  /**
   * Producers in other threads (`openProducer`) whose thread ended without closing them: what each held
   * was taken back (records, blocks, slabs; its queued tasks cancelled), and its slot freed once its
   * running tasks ended.
   */
  producerDeaths: number;
  /** Reports of a task that had settled already, or of a record freed already (ignored; 0 when all is well). */
  duplicateReports: number;
  /**
   * The arena of large payloads (`payloadMemory`): bytes handed out to slabs (kept for reuse), and how
   * often it was reset (a payload fitted no slab and nothing held one).
   */
  payloadArena: { bytes: number; resets: number };
  /** With the `metrics` option: run and wait times, per pool and per worker, and utilization. */
  metrics?: MetricsStats;
  /**
   * An elastic pool's (`workers: { min, max }`): its current, peak, started and retired workers, and its
   * bounds. Absent for a fixed pool. (`workers` above has a row per slot, `max` of them.)
   */
  elastic?: ElasticStats;
}

function elasticOf(elastic: ElasticStats | undefined): { elastic?: ElasticStats } {
  return elastic === undefined ? {} : { elastic };
}

/**
 * Where a pool's task module is: a URL (`new URL("./tasks.ts", import.meta.url)` for a module beside the
 * caller, `pathToFileURL(path)` from node:url for a file path), anything with an absolute URL in `href`,
 * or an absolute URL string; a path string is refused. Its exported functions are the tasks, by name; a
 * default export is the task `"default"`. Typed structurally, so that a TypeScript consumer needs neither
 * the DOM library nor `@types/node` for it.
 */
export type ModuleLocation = string | { readonly href: string };

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
export class Pool<M extends object = Record<string, AnyFunction>> extends TaskSubmitter<M> implements AsyncDisposable {
  /** The side that submits: `run`, `spawn`, `map`, … go to it. */
  private readonly producer: Producer;
  /** The side that holds the workers: `broadcast`, `close`, `terminate`, the lifecycle. */
  private readonly owner: Owner;
  private readonly layout: PoolLayout;
  /** The shared buffer (tests and trace tools reach it; the pool itself reads it nowhere). */
  private readonly buffer: SharedArrayBuffer;

  private constructor(owner: Owner, producer: Producer, layout: PoolLayout, buffer: SharedArrayBuffer) {
    super(producer);
    this.owner = owner;
    this.producer = producer;
    this.layout = layout;
    this.buffer = buffer;
  }

  /**
   * Creates a pool whose workers each import the task module at `module` and run its exported functions.
   * Resolves once every worker has loaded the module.
   *
   * @param module The task module: a URL (`new URL("./tasks.ts", import.meta.url)`; `pathToFileURL(path)`
   * from node:url for a file path) or an absolute URL string. Its exported functions are the tasks, run by
   * name; a default export is the task `"default"`.
   * @param options Worker count, sizes, name, `onError` for spawned tasks, `loadTimeout`, `resourceLimits`.
   * @returns The pool, open.
   * @throws {RangeError} If a size or count breaks its rule (the message names the option, the rule and
   * the value).
   * @throws {TypeError} If `module` is not a URL (a path string: the message names the fix), `options` is
   * not an object, an option has the wrong type, or SharedArrayBuffer is unavailable (the message says how
   * to enable it).
   * @throws {ModuleLoadError} If a worker cannot load the module: it threw (the loader's error is the
   * `cause`), its thread exited, or it took longer than `loadTimeout`.
   *
   * @example Usage
   * ```ts ignore
   * import { Pool } from "@filch/filch";
   * const pool = await Pool.create(new URL("./tasks.ts", import.meta.url), { workers: 2 });
   * await pool.close();
   * ```
   */
  static async create<M extends object = Record<string, AnyFunction>>(
    module: ModuleLocation,
    options: PoolOptions = {},
  ): Promise<Pool<M>> {
    if (typeof SharedArrayBuffer === "undefined") {
      throw new TypeError(
        "Cannot create pool as SharedArrayBuffer is not available: in a browser, serve the page cross-origin " +
          "isolated (headers 'Cross-Origin-Opener-Policy: same-origin' and 'Cross-Origin-Embedder-Policy: require-corp')",
      );
    }
    const moduleUrl = moduleHref(module);
    const { memory, owner, producer } = assemblePool(moduleUrl, resolveOptions(options));
    await owner.start();
    return new Pool<M>(owner, producer, memory.layout, memory.buffer);
  }

  /**
   * Runs task `task` with `args` once on every worker (to warm a cache, reload configuration), and resolves
   * with the results by worker index; rejects with the first error, but every part settles once. A part
   * runs when its worker reads its messages: between tasks, or at once if it sleeps (a long synchronous
   * task delays it). Inside it, `currentTask()` gives the worker's index (and id -1, and a signal that
   * never aborts). A worker that dies before its part finishes fails that part with `WorkerCrashedError`;
   * its replacement does not run broadcasts sent before it started.
   *
   * @param task The name of a function the task module exports.
   * @param args Its arguments, as for {@link Pool.run} (encoded once, sent to each worker).
   * @returns The results, one per worker, by index.
   *
   * @example Usage
   * ```ts ignore
   * const loaded = await pool.broadcast("loadConfig", "./config.json"); // one result per worker
   * ```
   */
  broadcast<K extends TaskName<M>>(task: K, ...args: TaskArgs<M, K>): Promise<TaskResult<M, K>[]> {
    return this.owner.broadcast(task, args) as Promise<TaskResult<M, K>[]>;
  }

  /**
   * A handle from which another thread opens a producer on this pool (`openProducer`): run, spawn,
   * runMany, map, with, waitForRoom and drain from that thread, through shared memory, never through this
   * one. Post it with its port in the transfer list; one handle opens one producer. This thread stays the
   * pool's owner: it alone closes or terminates the pool (see docs/producers.md).
   *
   * @returns The handle.
   * @throws {PoolClosedError} If the pool is closing, closed or terminated.
   * @throws {RangeError} If the pool was created with `producers: 0`.
   *
   * @example Usage
   * ```ts ignore
   * const worker = new Worker(new URL("./producer.ts", import.meta.url), { type: "module" });
   * const handle = pool.handle();
   * worker.postMessage(handle, handle.transfer);
   * ```
   */
  handle(): PoolHandle<M> {
    return this.owner.handle<M>();
  }

  /**
   * Closes the pool gracefully: new submissions reject with {@link PoolClosedError}, every task already
   * submitted runs and settles, then the workers exit. Calling it again returns the same promise.
   *
   * A task that never settles keeps `close()` waiting, unless `timeout` is given: then, after that many
   * ms, the tasks still unsettled reject with {@link PoolTerminatedError} and the workers are stopped.
   *
   * @param options `timeout`: the most ms to wait for submitted tasks.
   * @returns Resolves when the workers have exited (or were stopped).
   * @throws {RangeError} If `timeout` is not a non-negative number.
   *
   * @example Usage
   * ```ts ignore
   * await pool.close({ timeout: 5_000 });
   * ```
   */
  close(options: CloseOptions = {}): Promise<void> {
    return this.owner.close(options);
  }

  /**
   * Stops the pool now: every task not yet settled rejects with {@link PoolTerminatedError}, and the
   * workers stop. New submissions reject with {@link PoolTerminatedError} too (a subclass of
   * {@link PoolClosedError}). On a closed pool it does nothing.
   *
   * @returns Resolves when the workers have been told to stop and terminated.
   *
   * @example Usage
   * ```ts ignore
   * await pool.terminate();
   * ```
   */
  terminate(): Promise<void> {
    return this.owner.terminate();
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
    const { workers, submitted, completed, pending, queued, duplicateReports, payloadArena, metrics } = this
      .producer.stats();
    const { workerCrashes, forcedKills, deathsInSteps, producerDeaths, workersRecycled } = this.owner.deathCounts;
    const producers: SlotCounts[] = [
      { slot: 0, open: this.owner.lifecycle === "open", submitted, completed, pending, abandoned: 0 },
      ...this.owner.producerCounts(),
    ];
    const sum = (key: "submitted" | "completed" | "pending") => producers.reduce((n, p) => n + p[key], 0);
    return {
      workers,
      submitted: sum("submitted"),
      completed: sum("completed"),
      pending: sum("pending"),
      producers,
      queued,
      workerCrashes,
      workersRecycled,
      forcedKills,
      deathsInSteps,
      producerDeaths,
      duplicateReports,
      payloadArena,
      ...(metrics === undefined ? {} : { metrics }),
      ...elasticOf(this.owner.elasticCounts()),
    };
  }

  /**
   * The task metrics as a printable table (Markdown): per pool and per worker, the count, p50, p90, p99 and
   * max of run and wait times, and each worker's utilization.
   *
   * @returns The table.
   * @throws {TypeError} If the pool was created without `metrics: true`.
   *
   * @example Usage
   * ```ts ignore
   * console.log(pool.metricsTable());
   * ```
   */
  metricsTable(): string {
    return this.producer.metricsTable();
  }

  /**
   * The pool's shared memory: the buffer's size, and the bytes each task in flight occupies in it (its
   * record with the inline payload, its progress cell, and its slots in the injector, the free list and the
   * completion queue).
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
      bytesPerTask: layout.recordBytes + PROGRESS_CELL_WORDS * 4 + 3 * 8,
      taskCapacity: layout.shape.taskCapacity,
    };
  }

  /**
   * The pool's events: an `EventTarget` of `PoolEvent`s, typed by `PoolEventMap` (`drain`,
   * `workeronline`, `workerdied`, `workerreplaced`, `workerrecycled`, `queuefull`, `queueroom`, `close`, `terminate`).
   * Dispatched in this thread, in a task of their own after the step that caused them (see docs/events.md):
   * a listener may submit, close or terminate; one that throws disturbs neither the pool nor the other
   * listeners (the runtime reports its error as an uncaught one).
   *
   * @example Usage
   * ```ts ignore
   * pool.events.addEventListener("workerdied", (event) => console.error(event.detail.worker, event.detail.error));
   * pool.events.addEventListener("drain", () => console.log("idle"));
   * ```
   */
  get events(): PoolEvents {
    return this.owner.events.queue.target;
  }

  /** The pool's lifecycle state. */
  get lifecycle(): PoolStateName {
    return this.owner.lifecycle;
  }
}
