/**
 * The submitting surface, once: `run`, `spawn`, `runMany`, `map`, `with`, `waitForRoom`, `drain` and the
 * task names, with their documentation, shared by the pool (lib/pool.ts, in the thread that created it)
 * and by a producer in another thread (lib/pool_producer.ts). Both are a {@link TaskSubmitter} over a
 * producer (lib/producer/producer.ts), which admits, places and settles their tasks; what refuses a task
 * (a pool not open, a producer closed, a full queue, an unknown task) is the producer's admission
 * (lib/producer/admission.ts), for both alike.
 *
 * Also here, re-exported from lib/task_types.ts: the types that name a module's tasks, their arguments and
 * their results.
 *
 * Threads: a submitter belongs to the thread that made it (its producer's).
 *
 * @module
 */

import type { MapInputs, MapOptions } from "./producer/map.ts";
import type { BatchOptions, RunOptions } from "./options.ts";
import type { Producer } from "./producer/producer.ts";
import { type GraphOptions, TaskGraph } from "./graph/graph.ts";

export type { AnyFunction, TaskArgs, TaskName, TaskResult, UnaryTaskName } from "./task_types.ts";
import type { AnyFunction, TaskArgs, TaskName, TaskResult, UnaryTaskName } from "./task_types.ts";

/**
 * Runs tasks with the options given to {@link TaskSubmitter.with}: `run` and `spawn` as the pool's own.
 *
 * @example Usage
 * ```ts ignore
 * const controller = new AbortController();
 * const result = pool.with({ signal: controller.signal, timeout: 1_000 }).run("fib", 30);
 * controller.abort(); // result rejects with controller.signal.reason
 * ```
 */
export interface TaskRunner<M> {
  /** As {@link TaskSubmitter.run}, with the options. */
  run<K extends TaskName<M>>(task: K, ...args: TaskArgs<M, K>): Promise<TaskResult<M, K>>;
  /** As {@link TaskSubmitter.spawn}, with the options (an abort is reported to nobody; a timeout to `onError`). */
  spawn<K extends TaskName<M>>(task: K, ...args: TaskArgs<M, K>): void;
}

/**
 * What submits tasks to a pool: the pool itself (`Pool`, in the thread that created it) and a producer
 * in another thread (`PoolProducer`, from `openProducer`) alike. Not made directly.
 *
 * @typeParam M The task module's type (`typeof import("./tasks.ts")`), for the tasks' names, arguments and results.
 *
 * @example Usage
 * ```ts ignore
 * import type { TaskSubmitter } from "@filch/filch";
 * import type * as tasks from "./tasks.ts";
 * // Works the same on a pool and on a producer in another thread.
 * async function sum(submitter: TaskSubmitter<typeof tasks>): Promise<number[]> {
 *   return await submitter.runMany("add", [[1, 2], [3, 4]]); // [3, 7]
 * }
 * ```
 */
export abstract class TaskSubmitter<M extends object = Record<string, AnyFunction>> {
  /** The producer that admits, places and settles this submitter's tasks. */
  readonly #producer: Producer;

  /**
   * For `Pool` and `PoolProducer`.
   *
   * @param producer Their producer.
   */
  protected constructor(producer: Producer) {
    this.#producer = producer;
  }

  /**
   * Runs task `task` with `args` on some worker.
   *
   * @param task The name of a function the task module exports.
   * @param args Its arguments: data (numbers, strings, arrays, plain objects, Map, Set, Date, Error, typed
   * arrays, …) copied to the worker; SharedArrayBuffers and views on them by reference.
   * @returns The task's result (awaited if it returns a promise or a thenable).
   * @throws {TaskNotFoundError} (rejects) If the module exports no function of that name.
   * @throws {TypeError} (rejects) If `task` is not a string (a function, say): tasks are run by name.
   * @throws {TypeError} (rejects) If an argument cannot cross threads; the message names its path.
   * @throws {PoolClosedError} (rejects) If the pool is closing or closed, or this producer was closed.
   * @throws {QueueFullError} (rejects) If the pool's queue is full (`maxQueue`).
   * @throws {PoolTerminatedError} (rejects) If the pool was terminated before the call, or before the task
   * settled (a subclass of PoolClosedError).
   * @throws {WorkerCrashedError} (rejects) If the worker running it died.
   * @throws (rejects) Whatever the task threw, with its name, message, stack and cause.
   *
   * @example Usage
   * ```ts ignore
   * const sum = await pool.run("add", 1, 2); // or producer.run("add", 1, 2) in another thread
   * ```
   */
  run<K extends TaskName<M>>(task: K, ...args: TaskArgs<M, K>): Promise<TaskResult<M, K>> {
    return this.#producer.run(task, args) as Promise<TaskResult<M, K>>;
  }

  /**
   * Runs task `task` with `args` without returning its result. Its error, if any (a refusal included),
   * goes to the `onError` option (the pool's, or the producer's), or else is raised as an unhandled
   * promise rejection: never lost.
   *
   * @param task The name of a function the task module exports.
   * @param args Its arguments, as for {@link TaskSubmitter.run}.
   *
   * @example Usage
   * ```ts ignore
   * pool.spawn("log", "hello");
   * await pool.drain();
   * ```
   */
  spawn<K extends TaskName<M>>(task: K, ...args: TaskArgs<M, K>): void {
    this.#producer.spawn(task, args);
  }

  /**
   * Runs task `task` once for each argument list, in one call: the results in the same order. Like
   * `Promise.all` of as many `run` calls (rejects with the first error; every task still runs at most
   * once and settles), without a promise per task. A long batch of tiny tasks travels in chunks: up to 64
   * consecutive argument lists of small primitives (numbers, booleans, null, undefined, bigints, strings
   * of up to 256 characters) share one record, and a worker runs them one after another (it awaits the
   * promises they return before the chunk finishes). A chunk counts as one task in `stats()` and the
   * metrics, and its tasks share one `currentTask().id`. Other argument lists go one by one, as with `run`.
   *
   * @param task The name of a function the task module exports.
   * @param argsList The arguments of each task.
   * @param options `priority`: the tasks' priority (see {@link RunOptions.priority}).
   * @returns The results, in the order of `argsList`.
   * @throws {TypeError} If `argsList` is not an array, or an option is wrong (at the call).
   *
   * @example Usage
   * ```ts ignore
   * const sums = await pool.runMany("add", [[1, 2], [3, 4]]); // [3, 7]
   * const later = pool.runMany("add", [[5, 6]], { priority: "low" }); // after waiting normal tasks
   * ```
   */
  runMany<K extends TaskName<M>>(
    task: K,
    argsList: readonly TaskArgs<M, K>[],
    options?: BatchOptions,
  ): Promise<TaskResult<M, K>[]> {
    return this.#producer.runMany(task, argsList, options) as Promise<TaskResult<M, K>[]>;
  }

  /**
   * Tasks with options: an `AbortSignal` that cancels them, a `timeout` counted from their start, a
   * `queueTimeout` for their wait, a `priority`, an `onProgress` handler of their progress reports (see
   * {@link RunOptions}). A task aborted while queued never runs; one aborted while running sees it through
   * its own signal (`currentTask().signal`), and so do the forks it made; its promise rejects at once
   * either way.
   *
   * @typeParam P The type of the tasks' progress values (`onProgress`'s argument).
   * @param options The tasks' options (read once, here).
   * @returns A runner whose `run` and `spawn` submit with these options.
   * @throws {TypeError} If `options` is not an object, `signal` is not an AbortSignal or `onProgress` not a function.
   * @throws {RangeError} If a timeout is not a number of ms from 0 to 2^31 - 1.
   *
   * @example Usage
   * ```ts ignore
   * const n = await pool.with({ signal: AbortSignal.timeout(5_000) }).run("fib", 30);
   * // Inside the task: currentTask<number>()?.progress(0.5)
   * await pool.with<number>({ onProgress: (done) => console.log(`${done * 100}%`) }).run("encode", file);
   * ```
   */
  with<P = unknown>(options: RunOptions<P>): TaskRunner<M> {
    return this.#producer.with(options as RunOptions) as unknown as TaskRunner<M>;
  }

  /**
   * Runs task `task` once for each input (its one argument), at most `concurrency` at once, and yields the
   * results: in input order (default) or as they finish. Inputs are pulled only as the window has room,
   * so an endless or asynchronous iterable streams in flat memory; with `maxQueue`, submissions wait for
   * room. A task's error ends the iteration (thrown from it), and so does a refusal (a pool closed, a
   * producer closed); so do `break` and the signal. Then the tasks still in flight are aborted (queued
   * ones never run) and the inputs are closed. Past the first window, consecutive small primitive inputs
   * of a synchronous iterable go in chunks (lib/producer/batch.ts), one submission each; results and
   * errors come as if each task had run alone.
   *
   * @param task The name of a task of one argument.
   * @param inputs The arguments: an iterable or an async iterable.
   * @param options `concurrency` (default 256), `ordered` (default true), `signal`, `priority`.
   * @returns The results, as an async iterable.
   * @throws {TypeError} If an option has the wrong type (at the call, before anything runs).
   * @throws {RangeError} If `concurrency` is not an integer from 1.
   *
   * @example Usage
   * ```ts ignore
   * for await (const square of pool.map("square", [1, 2, 3])) console.log(square); // 1, 4, 9
   * ```
   */
  map<K extends UnaryTaskName<M>>(
    task: K,
    inputs: MapInputs<TaskArgs<M, K>[0]>,
    options: MapOptions = {},
  ): AsyncGenerator<TaskResult<M, K>, void, undefined> {
    return this.#producer.map<TaskArgs<M, K>[0], TaskResult<M, K>>(task, inputs, options);
  }

  /**
   * Resolves when the pool can take another task without `QueueFullError`: fewer than `workers +
   * maxQueue` tasks pending in the whole pool, whichever thread submitted them (at once without
   * `maxQueue`). Another submission may take the room first.
   *
   * @returns A promise that never rejects.
   *
   * @example Usage
   * ```ts ignore
   * for (const input of inputs) {
   *   await pool.waitForRoom();
   *   pool.spawn("work", input);
   * }
   * ```
   */
  waitForRoom(): Promise<void> {
    return this.#producer.waitForRoom();
  }

  /**
   * Resolves when every task submitted here (through this pool, or this producer) before this call has
   * settled.
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
    return this.#producer.drain();
  }

  /**
   * A new task graph: nodes that run when their inputs are done, with their results, on the worker that
   * finished the last of them; only the results asked for come back to this thread (docs/graphs.md).
   *
   * @typeParam P The type of the nodes' progress values, if `onProgress` is given.
   * @param options The graph's priority, its cancellation (a signal, a timeout from its submission), and
   * `onProgress(value, node)`, which receives every node's progress reports (docs/progress.md).
   * @returns An empty graph, to build and then submit once.
   * @throws {TypeError} If an option is malformed.
   *
   * @example Usage
   * ```ts ignore
   * const g = pool.graph<number>({ onProgress: (fraction, node) => console.log(node.task, fraction) });
   * const a = g.run("parse", source);
   * const b = g.run("analyse", a, { deep: true });
   * console.log(await g.submit(g.run("merge", a, b)));
   * ```
   */
  graph<P = unknown>(options?: GraphOptions<P>): TaskGraph<M> {
    return new TaskGraph<M>(this.#producer.graphHost(), options);
  }

  /** The task names the module exports, sorted. */
  get tasks(): readonly string[] {
    return this.#producer.taskNames;
  }
}
