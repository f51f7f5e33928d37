/**
 * The pool's options: their defaults, and the checks that turn a bad option into an error that names the
 * option, the rule and the value received (never an internal name, never a raw TypeError).
 *
 * What it owns: {@link PoolOptions} and {@link resolveOptions}, {@link RunOptions} and
 * {@link resolveRunOptions}. The sizes' rules are those of `protocol/layout.ts` (which checks them again, as
 * the layout's own contract), stated here in the options' own words.
 *
 * Strict keys: an options object with a key that is not an option of its call is refused with a
 * `TypeError` that names the key, the call and the nearest option (`'worker'` … did you mean `'workers'`?),
 * or the call the key belongs to (`timeout` given to `Pool.create` is a task's option, `pool.with`). A
 * plain-JavaScript caller's typo would otherwise give the default without a word.
 *
 * Threads: any.
 *
 * @module
 */

import type { ErrorClasses } from "./codec/codec.ts";
import { nearestName } from "./nearest.ts";
import type { PoolShape } from "./protocol/layout.ts";
import { type LevelIndex, levelOf } from "./protocol/levels.ts";

/**
 * Memory limits of a worker thread's JavaScript heap, in MB (node:worker_threads' `resourceLimits`).
 *
 * @example Usage
 * ```ts
 * import type { ResourceLimits } from "@filch/filch";
 * const limits: ResourceLimits = { maxOldGenerationSizeMb: 256 };
 * console.log(limits.maxOldGenerationSizeMb); // 256
 * ```
 */
export interface ResourceLimits {
  /** The main heap's limit. */
  maxOldGenerationSizeMb?: number;
  /** The heap for recently created objects. */
  maxYoungGenerationSizeMb?: number;
  /** Pre-allocated memory for generated code. */
  codeRangeSizeMb?: number;
  /** The default maximum stack size, in MB. */
  stackSizeMb?: number;
}

/** The `workers` option of an elastic pool: the fewest and the most worker threads it keeps. */
export interface ElasticWorkers {
  /** The workers the pool starts with and never retires below: an integer from 1 to `max`. */
  min: number;
  /** The most workers it runs at once: an integer from `min` to 1023. */
  max: number;
}

/** Options of `Pool.create`. Every size has a default that suits small tasks. */
export interface PoolOptions {
  /**
   * Worker threads: an integer from 1 to 1023 (default: the hardware's parallelism), kept for the pool's
   * life; or `{ min, max }` for an elastic pool (docs/elastic.md): it starts `min` workers, starts more, one
   * at a time, up to `max` while queued work waits and no worker sleeps, and a worker that slept for
   * `idleTimeout` retires, down to `min`. `min` is from 1 (a pool of none could not load its task module
   * at `Pool.create`), `max` from `min` to 1023; the shared memory is laid out for `max`.
   */
  workers?: number | ElasticWorkers;
  /**
   * An elastic pool's idle timeout (`workers: { min, max }` only): how long a worker sleeps with nothing to
   * do before it retires (if more than `min` remain), in ms, from 1 to 2^31 - 1. Default 60,000.
   */
  idleTimeout?: number;
  /** A name for the threads (shown in debuggers and error messages). Default "filch". */
  name?: string;
  /** Slots per worker deque, a power of two from 2 to 2^28 (default 256). */
  dequeCapacity?: number;
  /** Tasks in flight in shared memory at once, a power of two from 2 to 2^20 (default 4096); more wait in order. */
  taskCapacity?: number;
  /** Payload bytes inside each task record, a multiple of 64 (default 192). */
  inlineBytes?: number;
  /** Bytes per overflow block for larger payloads, a multiple of 64 from 128 (default 1024). */
  blockBytes?: number;
  /** Overflow blocks, a power of two from 2 to 2^28 (default 4096). */
  blocks?: number;
  /**
   * The most bytes of shared memory for large payloads (arguments and results from 8 to 32 KiB up, by
   * runtime, each copied whole into a slab of a growable arena): an integer from 0 to 2^30 (default 128
   * MiB). The arena grows as payloads need it and is kept for reuse, never shrunk; one payload larger than
   * this (and than the blocks) is refused with a RangeError. 0 keeps every payload in blocks. A submitted
   * task's result with a typed array or ArrayBuffer of 64 KiB or more does not use it: the worker copies
   * those bytes into a buffer of their own and transfers it (no copy on the main thread).
   */
  payloadMemory?: number;
  /**
   * Called with the error of a task started by `spawn` (default: raised as an unhandled rejection). It runs
   * in a microtask of its own, after the pool's bookkeeping: it may submit, close or terminate the pool.
   * If it throws, that error is raised as an unhandled rejection and the pool carries on.
   */
  onError?: (error: unknown, task: string) => void;
  /** How long a worker may take to load the task module, in ms (default 60,000); then creation rejects. */
  loadTimeout?: number;
  /**
   * Heap limits of each worker thread, in MB (Node and Deno; Bun's workers have none, so giving them there
   * is an error). A worker over its limit dies: its tasks reject with `ResourceLimitError` (a
   * `WorkerCrashedError`), and a replacement starts. Deno's workers default to the main heap's limit.
   */
  resourceLimits?: ResourceLimits;
  /**
   * Where filch's worker entry is, when a bundler moved it (the package export `filch/worker`, as your
   * bundler emitted it: with Vite, `import workerUrl from "filch/worker?worker&url"`): a URL, anything with
   * an absolute URL in `href`, or an absolute URL string. Default: the entry beside filch's own module, which
   * is right unbundled, on Node, Deno and Bun, and with the esbuild recipe of docs/bundlers.md.
   */
  workerUrl?: string | { readonly href: string };
  /**
   * The most tasks that may wait, beyond one running per worker: a submission that finds `workers +
   * maxQueue` tasks pending (submitted, not settled, by any producer of the pool) rejects with `QueueFullError` (a spawn reports it to
   * `onError`); `pool.waitForRoom()` waits for room. An integer from 1, or `"auto"` (workers squared, as
   * piscina). Default: no limit (tasks beyond `taskCapacity` wait on the main thread, in order).
   */
  maxQueue?: number | "auto";
  /**
   * The most async tasks (tasks that returned a promise) one worker holds at once: a worker holding this
   * many takes no new task while it waits, so other workers take them; it takes the next when one of its
   * own settles. A positive integer, or `Infinity` (the default: no bound). The same bound as piscina's
   * `concurrentTasksPerWorker`, named for what it counts here: a synchronous task runs to its end before
   * its worker takes the next, so only async tasks ever pile up on a filch worker (broadcast parts are not
   * counted).
   *
   * What it limits besides: a worker that dies (a task calls `process.exit`, an uncaught error, its heap
   * limit) rejects every task pending on it with `WorkerCrashedError`; with a bound of k that is at most
   * k tasks (see docs/reliability.md). Without one, a worker may hold most of a burst of async tasks.
   * The default is no bound because a bound makes tasks that wait for each other (a barrier, a task
   * that awaits another's result) able to deadlock once more of them than `workers × bound` are
   * submitted: a program that relies on today's behaviour keeps it; one that wants the bound asks.
   *
   * @example A bound of 4 async tasks per worker
   * ```ts ignore
   * import { Pool } from "@filch/filch";
   * // 8 async tasks in flight at most (4 on each worker); a worker's death fails at most 4.
   * const pool = await Pool.create(new URL("./tasks.ts", import.meta.url), { workers: 2, asyncTasksPerWorker: 4 });
   * ```
   */
  asyncTasksPerWorker?: number;
  /**
   * Error classes that a task's error (or any error in a result) is decoded as on this side, so that
   * `instanceof` holds: matched by class name, else by the error's `name`. Without them, an error of a
   * custom class still arrives with its name, message, stack, cause and own fields, as its standard kind.
   */
  errorClasses?: readonly (abstract new (...args: never[]) => Error)[];
  /**
   * How many producers in other threads may be open at once (`pool.handle()`, then `openProducer` in the
   * other thread; see docs/producers.md): each has a completion queue of its own in the pool's shared
   * memory (8 bytes per task record). An integer from 0 (no handles) to 64. Default 8.
   */
  producers?: number;
  /**
   * Record each task's run time and wait time (histograms per pool and per worker) and each worker's
   * utilization: `stats().metrics` and `pool.metricsTable()`. Default false (it costs a clock read and
   * two histogram updates per task on the worker, and a clock read per 32 submissions on the main thread:
   * see docs/benchmarks.md).
   */
  metrics?: boolean;
  /**
   * Data for each worker's setup: the task module's `setupWorker(data)` export, if it has one, is called
   * with a structured clone of it once per worker thread, before that worker takes any task (the first
   * workers, and each replacement of a worker that died). Any value that `structuredClone` carries; one it
   * cannot (a function, a symbol) is refused at `Pool.create` with a TypeError. See docs/elastic.md.
   *
   * @example Setup data
   * ```ts ignore
   * import { Pool } from "@filch/filch";
   * // tasks.ts: export function setupWorker(data: { table: number[] }) { ... }
   * const pool = await Pool.create(new URL("./tasks.ts", import.meta.url), { workerData: { table: [1, 2, 3] } });
   * ```
   */
  workerData?: unknown;
  /**
   * Replace a worker between tasks after it ran `afterTasks` tasks, or once its heap in use passes `heapMB`
   * MiB (read every few tasks; Node, Deno and Bun report a worker's own heap, and elsewhere `heapMB` is
   * refused at create): it takes no new task, its running tasks (async ones too) finish, its
   * `teardownWorker()` runs, and a fresh worker, set up again with `workerData`, takes its place on the same
   * deque. Nothing is rejected and nothing queued is lost. Each a positive integer (default: neither).
   * `stats().workersRecycled`, the `workerrecycled` event. See docs/elastic.md.
   *
   * @example Recycle after 1,000 tasks or past 256 MiB of heap
   * ```ts ignore
   * import { Pool } from "@filch/filch";
   * const pool = await Pool.create(new URL("./tasks.ts", import.meta.url), {
   *   recycle: { afterTasks: 1_000, heapMB: 256 },
   * });
   * ```
   */
  recycle?: RecycleOptions;
}

/** The `recycle` option of `Pool.create`: when a worker is replaced by a fresh one (either bound, or both). */
export interface RecycleOptions {
  /** Replace a worker after it ran this many tasks (a positive integer). */
  afterTasks?: number;
  /** Replace a worker once its heap in use passes this many MiB (a positive integer). */
  heapMB?: number;
}

/** The options of `Pool.create`, as a tuple type (see {@link Listed}). */
const POOL_KEYS = [
  "workers",
  "idleTimeout",
  "name",
  "dequeCapacity",
  "taskCapacity",
  "inlineBytes",
  "blockBytes",
  "blocks",
  "payloadMemory",
  "onError",
  "loadTimeout",
  "resourceLimits",
  "workerUrl",
  "maxQueue",
  "asyncTasksPerWorker",
  "errorClasses",
  "producers",
  "metrics",
  "workerData",
  "recycle",
] as const satisfies readonly (keyof PoolOptions)[];
/** Every option of `Pool.create` ({@link PoolOptions}): any other key is refused. */
export const POOL_OPTION_KEYS: readonly (keyof PoolOptions)[] = Object.freeze(POOL_KEYS);

/** The options of `pool.with()`, as a tuple type. */
const RUN_KEYS = [
  "signal",
  "timeout",
  "queueTimeout",
  "force",
  "priority",
  "onProgress",
] as const satisfies readonly (keyof RunOptions)[];
/** Every option of `pool.with()` ({@link RunOptions}): any other key is refused. */
export const RUN_OPTION_KEYS: readonly (keyof RunOptions)[] = Object.freeze(RUN_KEYS);

/**
 * Whether the key lists name every option of their interfaces: a key added to {@link PoolOptions} or
 * {@link RunOptions} and not to its list fails to compile here (else the strict check would refuse it).
 */
type Listed<T, K extends readonly unknown[]> = Exclude<keyof T, K[number]> extends never ? true : never;
const listedPool: Listed<PoolOptions, typeof POOL_KEYS> = true;
const listedRun: Listed<RunOptions, typeof RUN_KEYS> = true;
void listedPool, listedRun;

/**
 * Refuses an own enumerable key of `options` that is not in `known`, naming the call and the nearest
 * known option, or the call the key belongs to.
 */
function checkKeys(
  options: object,
  known: readonly string[],
  other: readonly string[],
  cannot: string,
  call: string,
  otherCall: string,
): void {
  for (const key of Object.keys(options)) {
    if (known.includes(key)) continue;
    const near = nearestName(key, known);
    const hint = other.includes(key)
      ? `: it is an option of ${otherCall}, not of ${call}${near === undefined ? "" : ` (or did you mean '${near}'?)`}`
      : near !== undefined
      ? `: did you mean '${near}'?`
      : `: the options of ${call} are ${known.map((k) => `'${k}'`).join(", ")}`;
    throw new TypeError(`${cannot} as '${key}' is not an option${hint}`);
  }
}

/** The options with their defaults applied and checked. */
export interface ResolvedOptions {
  shape: PoolShape;
  name: string;
  onError: ((error: unknown, task: string) => void) | undefined;
  loadTimeout: number;
  resourceLimits: ResourceLimits | undefined;
  /** The worker entry's absolute URL, or undefined for the default. */
  workerUrl: string | undefined;
  /** The most tasks pending at once (`workers + maxQueue`), or Infinity. */
  maxPending: number;
  /** The most async tasks a worker holds at once (`asyncTasksPerWorker`), or Infinity. */
  asyncTasksPerWorker: number;
  /** The registered error classes by name, if any. */
  errorClasses: ErrorClasses | undefined;
  /** Whether tasks' times and workers' utilization are recorded. */
  metrics: boolean;
  /** The payload arena's cap, bytes (0: none). */
  payloadMemory: number;
  /** Data for each worker's `setupWorker` (`workerData`), checked to be structured-clonable. */
  workerData: unknown;
  /** The `recycle` bounds (Infinity: none), or undefined without the option. */
  recycle: { afterTasks: number; heapMB: number } | undefined;
  /** An elastic pool's bounds and idle timeout (`shape.workers` is its `max`); undefined for a fixed pool. */
  elastic: ResolvedElastic | undefined;
}

/** An elastic pool's resolved `workers: { min, max }` and `idleTimeout`. */
export interface ResolvedElastic {
  /** The workers it starts with and keeps at least. */
  min: number;
  /** The most it runs at once (the slots the memory has). */
  max: number;
  /** How long a worker sleeps before it retires, ms. */
  idleTimeout: number;
}

const DEFAULTS = {
  dequeCapacity: 256,
  taskCapacity: 4096,
  inlineBytes: 192,
  blockBytes: 1024,
  blocks: 4096,
  payloadMemory: 128 * 2 ** 20,
  producers: 8,
};

/**
 * Applies the defaults and checks every option.
 *
 * @param options What the caller passed (anything: it is checked).
 * @returns The options to build the pool from.
 * @throws {TypeError} If `options` is not an object, or an option has the wrong type (the message names it).
 * @throws {RangeError} If a number breaks its rule (the message names the option, the rule and the value).
 *
 * @example Usage
 * ```ts
 * import { resolveOptions } from "./options.ts";
 * console.log(resolveOptions({ workers: 2 }).shape.taskCapacity); // 4096
 * try {
 *   resolveOptions({ taskCapacity: 100 });
 * } catch (error) {
 *   console.log((error as Error).message); // Cannot create pool as 'taskCapacity' must be a power of two from 2 to 2^20: received 100
 * }
 * ```
 */
export function resolveOptions(options: unknown): ResolvedOptions {
  if (options === undefined) options = {};
  if (options === null || typeof options !== "object" || Array.isArray(options)) {
    throw new TypeError(`Cannot create pool as 'options' must be an object: received ${describe(options)}`);
  }
  checkKeys(options, POOL_OPTION_KEYS, RUN_OPTION_KEYS, "Cannot create pool", "Pool.create", "pool.with()");
  const o = options as PoolOptions;
  const elastic = elasticOf(o.workers, o.idleTimeout);
  const workers = elastic !== undefined ? elastic.max : o.workers === undefined ? defaultWorkers() : o.workers;
  integer("workers", workers, 1, 1023, "an integer from 1 to 1023");
  const shape: PoolShape = {
    workers,
    dequeCapacity: powerOfTwo("dequeCapacity", o.dequeCapacity ?? DEFAULTS.dequeCapacity, 2 ** 28),
    taskCapacity: powerOfTwo("taskCapacity", o.taskCapacity ?? DEFAULTS.taskCapacity, 2 ** 20),
    inlineBytes: multipleOf64("inlineBytes", o.inlineBytes ?? DEFAULTS.inlineBytes, 0),
    blockBytes: multipleOf64("blockBytes", o.blockBytes ?? DEFAULTS.blockBytes, 128),
    blocks: powerOfTwo("blocks", o.blocks ?? DEFAULTS.blocks, 2 ** 28),
    producers: o.producers ?? DEFAULTS.producers,
  };
  integer("producers", shape.producers, 0, 64, "an integer from 0 to 64");
  if (o.name !== undefined && typeof o.name !== "string") {
    throw new TypeError(`Cannot create pool as 'name' must be a string: received ${describe(o.name)}`);
  }
  if (o.onError !== undefined && typeof o.onError !== "function") {
    throw new TypeError(`Cannot create pool as 'onError' must be a function: received ${describe(o.onError)}`);
  }
  const loadTimeout = o.loadTimeout ?? 60_000;
  if (typeof loadTimeout !== "number" || !(loadTimeout > 0) || loadTimeout > 2 ** 31 - 1) {
    throw new RangeError(
      `Cannot create pool as 'loadTimeout' must be a positive number of ms up to 2^31 - 1: received ${
        describe(loadTimeout)
      }`,
    );
  }
  const limits = o.resourceLimits;
  if (limits !== undefined) {
    if (limits === null || typeof limits !== "object") {
      throw new TypeError(`Cannot create pool as 'resourceLimits' must be an object: received ${describe(limits)}`);
    }
    if ("Bun" in globalThis) {
      throw new TypeError(
        "Cannot create pool as 'resourceLimits' is not supported on Bun: its worker threads ignore heap limits " +
          "(remove the option when running on Bun)",
      );
    }
    for (const [key, value] of Object.entries(limits)) {
      if (!["maxOldGenerationSizeMb", "maxYoungGenerationSizeMb", "codeRangeSizeMb", "stackSizeMb"].includes(key)) {
        throw new TypeError(`Cannot create pool as 'resourceLimits.${key}' is not a resource limit`);
      }
      if (typeof value !== "number" || !(value > 0)) {
        throw new RangeError(
          `Cannot create pool as 'resourceLimits.${key}' must be a positive number of MB: received ${describe(value)}`,
        );
      }
    }
  }
  let workerUrl: string | undefined;
  if (o.workerUrl !== undefined) {
    const given = o.workerUrl as unknown;
    const href = hrefOf(given);
    if (href === undefined || isFilePath(href) || !URL.canParse(href)) {
      throw new TypeError(
        `Cannot create pool as 'workerUrl' must be a URL or an absolute URL string: received ${describe(given)}` +
          (href !== undefined && isFilePath(href)
            ? `, a file path: pass pathToFileURL(${JSON.stringify(href)}) (import { pathToFileURL } from "node:url")`
            : ` (with Vite: import workerUrl from "filch/worker?worker&url", then new URL(workerUrl, location.href))`),
      );
    }
    workerUrl = new URL(href).href;
  }
  const maxQueue = o.maxQueue === "auto" ? workers * workers : o.maxQueue;
  if (maxQueue !== undefined) integer("maxQueue", maxQueue, 1, 2 ** 31 - 1, `an integer from 1, or "auto"`);
  const maxPending = maxQueue === undefined ? Infinity : workers + maxQueue;
  const asyncTasksPerWorker = o.asyncTasksPerWorker ?? Infinity;
  if (asyncTasksPerWorker !== Infinity) {
    integer("asyncTasksPerWorker", asyncTasksPerWorker, 1, 2 ** 31 - 1, "a positive integer, or Infinity");
  }
  const payloadMemory = o.payloadMemory ?? DEFAULTS.payloadMemory;
  integer("payloadMemory", payloadMemory, 0, 2 ** 30, "an integer number of bytes from 0 to 2^30");
  return {
    shape,
    name: o.name ?? "filch",
    onError: o.onError,
    loadTimeout,
    resourceLimits: limits,
    workerUrl,
    maxPending,
    asyncTasksPerWorker,
    errorClasses: errorClassesOf(o.errorClasses),
    metrics: flag("metrics", o.metrics),
    payloadMemory,
    workerData: carried("workerData", o.workerData),
    recycle: recycleOf(o.recycle),
    elastic,
  };
}

/** The `recycle` option, checked, with Infinity for a bound not given. */
function recycleOf(given: unknown): { afterTasks: number; heapMB: number } | undefined {
  if (given === undefined) return undefined;
  if (given === null || typeof given !== "object") {
    throw new TypeError(`Cannot create pool as 'recycle' must be an object: received ${describe(given)}`);
  }
  const { afterTasks, heapMB, ...rest } = given as RecycleOptions;
  for (const key of Object.keys(rest)) {
    throw new TypeError(
      `Cannot create pool as 'recycle.${key}' is not a recycling bound: they are 'afterTasks', 'heapMB'`,
    );
  }
  if (afterTasks !== undefined) integer("recycle.afterTasks", afterTasks, 1, 2 ** 53 - 1, "a positive integer");
  if (heapMB !== undefined) {
    integer("recycle.heapMB", heapMB, 1, 2 ** 31 - 1, "a positive integer number of MiB");
    const g = globalThis as { Deno?: { memoryUsage?: unknown }; process?: { memoryUsage?: unknown } };
    if (typeof g.Deno?.memoryUsage !== "function" && typeof g.process?.memoryUsage !== "function") {
      throw new TypeError(
        "Cannot create pool as 'recycle.heapMB' needs each worker's heap size, which this runtime does not " +
          "report to its workers (Node, Deno and Bun do): recycle with 'afterTasks' instead",
      );
    }
  }
  if (afterTasks === undefined && heapMB === undefined) {
    throw new TypeError("Cannot create pool as 'recycle' names no bound: give 'afterTasks', 'heapMB' or both");
  }
  return { afterTasks: afterTasks ?? Infinity, heapMB: heapMB ?? Infinity };
}

/** `value`, checked to be one that the start message can carry (a structured clone), else a TypeError. */
function carried(name: string, value: unknown): unknown {
  if (value === undefined) return undefined;
  try {
    structuredClone(value);
  } catch (cause) {
    throw new TypeError(
      `Cannot create pool as '${name}' cannot be sent to a worker (structured clone failed: ${
        cause instanceof Error ? cause.message : String(cause)
      }): pass data that postMessage carries (no functions or symbols)`,
      { cause },
    );
  }
  return value;
}

function flag(name: string, value: unknown): boolean {
  if (value === undefined) return false;
  if (typeof value !== "boolean") {
    throw new TypeError(`Cannot create pool as '${name}' must be a boolean: received ${describe(value)}`);
  }
  return value;
}

/** The `workers: { min, max }` and `idleTimeout` options, checked; undefined for a fixed pool. */
function elasticOf(workers: unknown, idleTimeout: unknown): ResolvedElastic | undefined {
  if (workers === null || typeof workers !== "object") {
    if (idleTimeout !== undefined) {
      throw new TypeError(
        "Cannot create pool as 'idleTimeout' applies only to an elastic pool: pass 'workers: { min, max }' with it",
      );
    }
    return undefined;
  }
  for (const key of Object.keys(workers)) {
    if (key !== "min" && key !== "max") {
      throw new TypeError(`Cannot create pool as 'workers.${key}' is not an option (workers takes { min, max })`);
    }
  }
  const { min, max } = workers as ElasticWorkers;
  integer("workers.max", max, 1, 1023, "an integer from 1 to 1023");
  integer("workers.min", min, 1, max, `an integer from 1 to 'workers.max' (${max})`);
  const timeout = idleTimeout ?? 60_000;
  if (typeof timeout !== "number" || !(timeout >= 1) || timeout > 2 ** 31 - 1) {
    throw new RangeError(
      `Cannot create pool as 'idleTimeout' must be a number of ms from 1 to 2^31 - 1: received ${describe(timeout)}`,
    );
  }
  return { min, max, idleTimeout: timeout };
}

/** The `errorClasses` option, checked, by class name. */
function errorClassesOf(classes: unknown): ErrorClasses | undefined {
  if (classes === undefined) return undefined;
  if (!Array.isArray(classes)) {
    throw new TypeError(
      `Cannot create pool as 'errorClasses' must be an array of Error classes: received ${describe(classes)}`,
    );
  }
  const byName = new Map<string, abstract new (...args: never[]) => Error>();
  for (const [i, c] of classes.entries()) {
    if (typeof c !== "function" || !(c.prototype instanceof Error) || typeof c.name !== "string" || c.name === "") {
      throw new TypeError(
        `Cannot create pool as 'errorClasses[${i}]' must be a named class that extends Error: received ${describe(c)}`,
      );
    }
    if (byName.has(c.name)) {
      throw new TypeError(`Cannot create pool as 'errorClasses' names two classes '${c.name}': keep one`);
    }
    byName.set(c.name, c);
  }
  return byName;
}

/**
 * An `AbortSignal`: the platform's own type where the program's type libraries declare one (the DOM
 * library, `@types/node`, Deno's or Bun's types); else the members filch uses. So a TypeScript consumer
 * needs no particular library for filch's declarations, and one that has them gets the real type.
 *
 * @example Usage
 * ```ts
 * import type { AbortSignalLike } from "@filch/filch";
 * const signal: AbortSignalLike = AbortSignal.timeout(1_000);
 * console.log(signal.aborted); // false
 * ```
 */
export type AbortSignalLike = typeof globalThis extends { AbortSignal: { prototype: infer S } } ? S : {
  readonly aborted: boolean;
  readonly reason: unknown;
  throwIfAborted(): void;
  addEventListener(type: "abort", listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: "abort", listener: () => void): void;
};

/**
 * Options of one task, given to `pool.with(options)`: its cancellation and its deadlines.
 *
 * @example Usage
 * ```ts
 * import type { RunOptions } from "@filch/filch";
 * const options: RunOptions = { signal: AbortSignal.timeout(5_000), timeout: 1_000 };
 * console.log(options.timeout); // 1000
 * ```
 */
export interface RunOptions<P = unknown> {
  /**
   * Aborts the task: queued, it is removed and never runs; running, the signal inside the task (see
   * `currentTask`) and its forks' are aborted. Either way its promise rejects at once with the signal's
   * `reason` (a spawned task's abort is reported to nobody: it was asked for). A signal aborted already
   * rejects the call at once, and nothing is submitted.
   */
  signal?: AbortSignalLike;
  /**
   * The most ms the task may run, counted from its start (not while it waits): then it is aborted as by
   * `signal`, with a `TimeoutError` (a DOMException of that name) as the reason.
   */
  timeout?: number;
  /**
   * The most ms the task may wait to start: still queued then, it is removed and rejects with a
   * `TimeoutError`; started, this deadline no longer applies.
   */
  queueTimeout?: number;
  /**
   * Forces the abort of a running task that does not stop by itself: when `signal` aborts or `timeout`
   * passes while it runs, its worker thread is terminated (as soon as it is outside the pool's own steps)
   * and replaced. Other tasks running on that worker then reject with `WorkerCrashedError`; queued tasks
   * are kept. Needs `signal` or `timeout`.
   */
  force?: boolean;
  /**
   * Its priority among the tasks waiting to start: `"high"` ones are taken first, then `"normal"` (the
   * default), then `"low"`; within a level, in submission order. A lower level is never starved: while a task
   * is the oldest of its level, each worker takes at most 8 tasks of higher levels (9 with one under way) before it takes that one
   * (docs/scheduling.md). Tasks beyond `taskCapacity`, waiting on the submitting thread, wait in submission
   * order whatever their priority.
   */
  priority?: Priority;
  /**
   * Receives the task's progress reports (`currentTask().progress(value)` inside it, and inside its forks),
   * on this thread, in order. Coalescing: a report not yet read is replaced by the next, so the handler
   * sees the latest value, never a backlog. None after the task settled; the last one before its end is
   * delivered before its promise settles for its caller. A throw goes to `onError` (else an unhandled
   * rejection) and the task goes on. See docs/progress.md.
   */
  onProgress?: (value: P) => void;
}

/**
 * A task's priority among the tasks waiting to start (see {@link RunOptions.priority}).
 *
 * @example Usage
 * ```ts
 * import type { Priority } from "@filch/filch";
 * const background: Priority = "low";
 * console.log(background); // low
 * ```
 */
export type Priority = "high" | "normal" | "low";

/**
 * The options of `pool.runMany`.
 *
 * @example Usage
 * ```ts
 * import type { BatchOptions } from "@filch/filch";
 * const options: BatchOptions = { priority: "low" };
 * console.log(options.priority); // low
 * ```
 */
export interface BatchOptions {
  /** The priority of the batch's tasks (see {@link RunOptions.priority}); default `"normal"`. */
  priority?: Priority;
}

/** {@link RunOptions}, checked: each property read once. */
export interface ResolvedRunOptions {
  readonly signal: AbortSignalLike | undefined;
  readonly timeout: number | undefined;
  readonly queueTimeout: number | undefined;
  readonly force: boolean;
  /** The priority's level (protocol/levels.ts: 0 high, 1 normal, 2 low). */
  readonly level: LevelIndex;
  /** The progress handler, if any. */
  readonly onProgress: ((value: unknown) => void) | undefined;
}

/**
 * Checks a task's options (reading each property once: a getter runs here, not later).
 *
 * @param options What `pool.with` was given.
 * @returns The options, checked.
 * @throws {TypeError} If `options` is not an object, `signal` is not an AbortSignal, `force` is not a boolean,
 *   or `force` is given without `signal` or `timeout`.
 * @throws {RangeError} If a timeout is not a number of ms from 0 to 2^31 - 1.
 *
 * @example Usage
 * ```ts
 * import { resolveRunOptions } from "./options.ts";
 * try {
 *   resolveRunOptions({ timeout: -1 });
 * } catch (error) {
 *   console.log((error as Error).message); // Cannot run task as 'timeout' must be a number of ms from 0 to 2^31 - 1: received -1
 * }
 * ```
 */
export function resolveRunOptions(options: unknown): ResolvedRunOptions {
  if (options === null || typeof options !== "object" || Array.isArray(options)) {
    throw new TypeError(`Cannot run task as its options must be an object: received ${describe(options)}`);
  }
  checkKeys(options, RUN_OPTION_KEYS, POOL_OPTION_KEYS, "Cannot run task", "pool.with()", "Pool.create");
  const o = options as RunOptions;
  const signal = o.signal;
  if (signal !== undefined && !isAbortSignal(signal)) {
    throw new TypeError(`Cannot run task as 'signal' must be an AbortSignal: received ${describe(signal)}`);
  }
  const timeout = ms("timeout", o.timeout);
  const queueTimeout = ms("queueTimeout", o.queueTimeout);
  const force = o.force;
  if (force !== undefined && typeof force !== "boolean") {
    throw new TypeError(`Cannot run task as 'force' must be a boolean: received ${describe(force)}`);
  }
  if (force === true && signal === undefined && timeout === undefined) {
    throw new TypeError(
      "Cannot run task as 'force' forces the abort that 'signal' or 'timeout' asks for, and neither was given: add one",
    );
  }
  const level = levelOf(o.priority);
  const onProgress = o.onProgress;
  if (onProgress !== undefined && typeof onProgress !== "function") {
    throw new TypeError(`Cannot run task as 'onProgress' must be a function: received ${describe(onProgress)}`);
  }
  return { signal, timeout, queueTimeout, force: force === true, level, onProgress };
}

/** The native `aborted` getter: brand-checked (it throws for anything but an AbortSignal), never user code. */
const abortedGetter = typeof AbortSignal === "function"
  ? Object.getOwnPropertyDescriptor(AbortSignal.prototype, "aborted")?.get
  : undefined;

/**
 * Whether `signal` is aborted, read through the platform's own getter (a subclass's override, or a
 * look-alike object, runs no code here).
 *
 * @param signal An AbortSignal.
 * @returns Its `aborted`.
 *
 * @example Usage
 * ```ts
 * import { signalAborted } from "./options.ts";
 * console.log(signalAborted(AbortSignal.abort())); // true
 * ```
 */
export function signalAborted(signal: AbortSignalLike): boolean {
  return abortedGetter!.call(signal) as boolean;
}

const reasonGetter = typeof AbortSignal === "function"
  ? Object.getOwnPropertyDescriptor(AbortSignal.prototype, "reason")?.get
  : undefined;

/**
 * Why `signal` was aborted, read through the platform's own getter (no user code runs).
 *
 * @param signal An AbortSignal.
 * @returns Its `reason`.
 *
 * @example Usage
 * ```ts
 * import { signalReason } from "./options.ts";
 * console.log((signalReason(AbortSignal.abort()) as Error).name); // AbortError
 * ```
 */
export function signalReason(signal: AbortSignalLike): unknown {
  return reasonGetter!.call(signal);
}

function isAbortSignal(value: unknown): value is AbortSignalLike {
  if (abortedGetter === undefined || value === null || typeof value !== "object") return false;
  try {
    abortedGetter.call(value);
    return true;
  } catch {
    return false;
  }
}

function ms(name: string, value: unknown): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !(value >= 0) || value > 2 ** 31 - 1) {
    throw new (typeof value === "number" ? RangeError : TypeError)(
      `Cannot run task as '${name}' must be a number of ms from 0 to 2^31 - 1: received ${describe(value)}`,
    );
  }
  return value;
}

/**
 * The task module's URL, checked: from a URL, anything with an `href` (another realm's URL), or an absolute
 * URL string. A file path is refused with the fix for a path (`pathToFileURL(path)`, from node:url), and a
 * relative string with the fix for a module beside the caller (`new URL("./tasks.ts", import.meta.url)`):
 * a string is never resolved against anything, as the workers would resolve it against filch's own URL.
 *
 * @param module What `Pool.create` was given.
 * @returns The module's absolute URL.
 * @throws {TypeError} If it is not a URL or an absolute URL string; the message says what to pass instead.
 *
 * @example Usage
 * ```ts
 * import { moduleHref } from "./options.ts";
 * console.log(moduleHref(new URL("file:///app/tasks.ts"))); // file:///app/tasks.ts
 * try {
 *   moduleHref("/app/tasks.ts");
 * } catch (error) {
 *   console.log((error as Error).message.includes("pathToFileURL")); // true
 * }
 * ```
 */
export function moduleHref(module: unknown): string {
  // A URL, another realm's URL, or any object with an href (typed structurally, so that a TypeScript
  // consumer needs neither the DOM library nor @types/node for this signature): checked by parsing it.
  const href = hrefOf(module);
  if (href === undefined) {
    throw new TypeError(`Cannot create pool as 'module' must be a URL: received ${describe(module)}`);
  }
  // A Windows path ("C:\\app\\tasks.ts") parses as a URL of scheme "c:": a path, whatever the parser says.
  if (!isFilePath(href) && URL.canParse(href)) return new URL(href).href;
  throw new TypeError(
    `Cannot create pool as 'module' must be a URL or an absolute URL string: received '${href}'${pathHint(href)}`,
  );
}

/** Whether `text` is a file path rather than a URL: POSIX absolute, Windows with a drive, or from a backslash. */
function isFilePath(text: string): boolean {
  return text.startsWith("/") || text.startsWith("\\") || /^[A-Za-z]:[\\/]/.test(text);
}

/**
 * What to pass instead of `text`, a string that is not an absolute URL: `pathToFileURL` for a file path,
 * `new URL(text, import.meta.url)` for a relative one.
 */
function pathHint(text: string): string {
  if (isFilePath(text)) {
    return `, a file path: pass pathToFileURL(${JSON.stringify(text)}) (import { pathToFileURL } from "node:url") ` +
      `for a path, or new URL("./tasks.ts", import.meta.url) for a module beside the caller`;
  }
  return ` (use new URL(${JSON.stringify(text)}, import.meta.url) for a module beside the caller, or ` +
    `pathToFileURL(path) from "node:url" for a file path)`;
}

/**
 * The URL text of a location given as a URL, anything with an `href` (another realm's URL), or a string;
 * undefined for anything else. Whether it parses is the caller's check.
 *
 * @example Usage
 * ```ts
 * import { hrefOf } from "./options.ts";
 * console.log(hrefOf(new URL("file:///app/tasks.ts"))); // file:///app/tasks.ts
 * console.log(hrefOf(7)); // undefined
 * ```
 */
export function hrefOf(location: unknown): string | undefined {
  if (typeof location === "string") return location;
  if (typeof location === "object" && location !== null) {
    const href = (location as { href?: unknown }).href;
    if (typeof href === "string") return href;
  }
  return undefined;
}

function integer(name: string, value: unknown, min: number, max: number, rule: string): asserts value is number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > max) {
    throw new (typeof value === "number" ? RangeError : TypeError)(
      `Cannot create pool as '${name}' must be ${rule}: received ${describe(value)}`,
    );
  }
}

function powerOfTwo(name: string, value: unknown, max: number): number {
  const rule = `a power of two from 2 to 2^${Math.log2(max)}`;
  integer(name, value, 2, max, rule);
  if ((value & (value - 1)) !== 0) {
    throw new RangeError(`Cannot create pool as '${name}' must be ${rule}: received ${value}`);
  }
  return value;
}

function multipleOf64(name: string, value: unknown, min: number): number {
  const rule = min === 0 ? "a non-negative multiple of 64" : `a multiple of 64 from ${min}`;
  integer(name, value, min, 2 ** 30, rule);
  if (value % 64 !== 0) throw new RangeError(`Cannot create pool as '${name}' must be ${rule}: received ${value}`);
  return value;
}

/** A value as a message shows it: strings quoted and typed, so that "2" and 2 read differently. */
function describe(value: unknown): string {
  if (typeof value === "string") return `'${value}' (a string)`;
  if (value === null) return "null";
  if (typeof value === "number" || typeof value === "boolean" || typeof value === "bigint") return String(value);
  if (typeof value === "function") return "a function";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : typeof value;
}

function defaultWorkers(): number {
  const n = (globalThis as { navigator?: { hardwareConcurrency?: number } }).navigator?.hardwareConcurrency;
  return typeof n === "number" && n > 0 ? Math.min(n, 1023) : 2;
}
