/**
 * The pool's named errors: every way a task can settle other than with its own result or its own error.
 *
 * Messages follow one pattern: what could not be done, why, and what to do ("Cannot run task 'add' as the
 * pool is closed: create a new pool").
 *
 * @module
 */

import { nearestName } from "./nearest.ts";

/**
 * The pool (or the producer submitting) no longer takes tasks: a submission after `close()` began, or
 * after its producer's `close()`. After `terminate()` the error is the subclass {@link PoolTerminatedError}
 * (so a check for either class sees it).
 *
 * @example Usage
 * ```ts
 * import { PoolClosedError } from "@filch/filch";
 * const error = new PoolClosedError("Cannot run task 'add' as the pool is closed: create a new pool");
 * console.log(error.name); // "PoolClosedError"
 * ```
 */
export class PoolClosedError extends Error {
  /**
   * Creates the error.
   *
   * @param message What could not be done and why.
   * @param options The cause, if any.
   */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "PoolClosedError";
  }
}

/**
 * A submission found the pool's queue full (`maxQueue` tasks waiting beyond one running per worker).
 *
 * @example Usage
 * ```ts
 * import { QueueFullError } from "@filch/filch";
 * console.log(new QueueFullError("full").name); // "QueueFullError"
 * ```
 */
export class QueueFullError extends Error {
  /**
   * Creates the error.
   *
   * @param message What could not be done and why.
   * @param options The cause, if any.
   */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "QueueFullError";
  }
}

/**
 * The pool was terminated (`terminate()`, or `close({ timeout })` when the timeout passed): a task that had
 * not settled then, and every submission after it — `run`, `spawn`, `runMany`, `map`, `with(...)`,
 * `broadcast`, from the pool or from a producer in another thread — and `pool.handle()` or `openProducer`
 * on it.
 *
 * It extends {@link PoolClosedError}: a terminated pool is a closed one that also stopped its tasks, and
 * code that checks `instanceof PoolClosedError` for "the pool no longer takes tasks" keeps working. Check
 * for `PoolTerminatedError` first where the two are told apart.
 *
 * @example Usage
 * ```ts
 * import { PoolClosedError, PoolTerminatedError } from "@filch/filch";
 * const error = new PoolTerminatedError("Cannot run task 'add' as the pool was terminated: create a new pool");
 * console.log(error.name, error instanceof PoolClosedError); // "PoolTerminatedError" true
 * ```
 */
export class PoolTerminatedError extends PoolClosedError {
  /**
   * Creates the error.
   *
   * @param message What could not be done and why.
   * @param options The cause, if any.
   */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "PoolTerminatedError";
  }
}

/**
 * The worker running a task died (an uncaught error outside the task, or the thread exited) before the
 * task settled. `cause` holds what killed it, where known.
 *
 * @example Usage
 * ```ts
 * import { WorkerCrashedError } from "@filch/filch";
 * const error = new WorkerCrashedError("worker 0 died", 0, { cause: new Error("boom") });
 * console.log(error.worker, (error.cause as Error).message); // 0 "boom"
 * ```
 */
export class WorkerCrashedError extends Error {
  /** The index of the worker that died. */
  readonly worker: number;
  /**
   * Creates the error.
   *
   * @param message What could not be done and why.
   * @param worker The index of the worker that died.
   * @param options The cause: what killed the worker.
   */
  constructor(message: string, worker: number, options?: ErrorOptions) {
    super(message, options);
    this.name = "WorkerCrashedError";
    this.worker = worker;
  }
}

/**
 * The worker running a task went over its heap limit (`resourceLimits`, on Node and Deno) and was stopped by
 * the runtime: a {@link WorkerCrashedError} whose `cause` is the runtime's out-of-memory error. The pool
 * replaces the worker; every other task goes on.
 *
 * @example Usage
 * ```ts
 * import { ResourceLimitError, WorkerCrashedError } from "@filch/filch";
 * const error = new ResourceLimitError("worker 1 ran out of memory", 1);
 * console.log(error.name, error instanceof WorkerCrashedError); // "ResourceLimitError" true
 * ```
 */
export class ResourceLimitError extends WorkerCrashedError {
  /**
   * Creates the error.
   *
   * @param message What could not be done and why.
   * @param worker The index of the worker that was stopped.
   * @param options The cause: the runtime's out-of-memory error.
   */
  constructor(message: string, worker: number, options?: ErrorOptions) {
    super(message, worker, options);
    this.name = "ResourceLimitError";
  }
}

/**
 * The error for a task lost with worker `worker`, which died of `cause`: a {@link ResourceLimitError} if
 * the runtime stopped it over its heap limit (the `ERR_WORKER_OUT_OF_MEMORY` code of node:worker_threads,
 * which Deno's implementation shares), else a {@link WorkerCrashedError}.
 *
 * @example Usage
 * ```ts
 * import { crashError } from "./errors.ts";
 * const oom = Object.assign(new Error("out of memory"), { code: "ERR_WORKER_OUT_OF_MEMORY" });
 * console.log(crashError("lost", 0, oom).name); // "ResourceLimitError"
 * console.log(crashError("lost", 0, new Error("boom")).name); // "WorkerCrashedError"
 * ```
 */
export function crashError(message: string, worker: number, cause?: unknown): WorkerCrashedError {
  const options = cause === undefined ? undefined : { cause };
  const oom = typeof cause === "object" && cause !== null &&
    (cause as { code?: unknown }).code === "ERR_WORKER_OUT_OF_MEMORY";
  return oom ? new ResourceLimitError(message, worker, options) : new WorkerCrashedError(message, worker, options);
}

/**
 * A task name that the pool's task module does not export as a function. `known` lists the names it does,
 * and `nearest` the one that was probably meant (a name in another case, or a few edits away), if any.
 *
 * @example Usage
 * ```ts
 * import { TaskNotFoundError } from "@filch/filch";
 * console.log(new TaskNotFoundError("ad", ["add", "mul"]).message);
 * // Cannot run task 'ad' as the task module exports no such function: did you mean 'add'? Known tasks are 'add', 'mul'
 * console.log(new TaskNotFoundError("nope", ["add", "mul"]).message);
 * // Cannot run task 'nope' as the task module exports no such function: known tasks are 'add', 'mul'
 * ```
 */
export class TaskNotFoundError extends Error {
  /** The task functions the module exports. */
  readonly known: readonly string[];
  /** The known task nearest to the name asked for, if one is near enough to have been meant. */
  readonly nearest: string | undefined;
  /**
   * Creates the error.
   *
   * @param task The name asked for.
   * @param known The names the module exports.
   */
  constructor(task: string, known: readonly string[]) {
    const nearest = nearestName(String(task), known);
    const list = known.length === 0 ? "none" : known.map((k) => `'${k}'`).join(", ");
    // The worker's setup and teardown exports (lib/worker/setup.ts) are not tasks.
    const reserved = task === "setupWorker" || task === "teardownWorker";
    super(
      `Cannot run task '${task}' as the task module exports no such ${
        reserved ? "task (it is the worker's own setup or teardown, run by the pool)" : "function"
      }: ${nearest === undefined ? `known tasks are ${list}` : `did you mean '${nearest}'? Known tasks are ${list}`}`,
    );
    this.name = "TaskNotFoundError";
    this.known = known;
    this.nearest = nearest;
  }
}

/**
 * The error for a task that the task module does not export: a {@link TaskNotFoundError} for a name, and
 * a `TypeError` for anything else given as the task (a function, say, as `pool.run(fib)`): tasks are the
 * module's named exports, run by name. The message never holds a function's source text, and nothing is
 * ever evaluated from it: filch runs only what the task module exports.
 *
 * @param task What was given as the task.
 * @param known The names the module exports.
 * @returns The error to reject (or report) with.
 *
 * @example Usage
 * ```ts
 * import { unknownTaskError } from "./errors.ts";
 * console.log(unknownTaskError("ad", ["add"]).name); // "TaskNotFoundError"
 * function add(a: number, b: number): number {
 *   return a + b;
 * }
 * console.log(unknownTaskError(add, ["add"]).message.startsWith("Cannot run task as a task is named")); // true
 * ```
 */
export function unknownTaskError(task: unknown, known: readonly string[]): Error {
  if (typeof task === "string") return new TaskNotFoundError(task, known);
  const list = known.length === 0 ? "none" : known.map((k) => `'${k}'`).join(", ");
  const name = typeof task === "function" && typeof task.name === "string" && task.name !== "" ? task.name : undefined;
  const received = typeof task === "function"
    ? `a function${name === undefined ? "" : ` ('${name}')`}`
    : task === null
    ? "null"
    : typeof task === "object"
    ? "an object"
    : typeof task === "symbol"
    ? "a symbol"
    : `${typeof task} ${String(task)}`;
  const instead = name !== undefined && known.includes(name)
    ? `pool.run("${name}", ...args)`
    : `pool.run("name", ...args)`;
  return new TypeError(
    `Cannot run task as a task is named by a string: received ${received}. Tasks are the task module's ` +
      `exported functions, run by name (${instead}); filch never evaluates code from a string nor sends a ` +
      `function to a worker, so a function cannot be a task unless the module exports it. Known tasks are ${list}`,
  );
}

/**
 * `join`, `scope` or a parallel loop found a pool worker whose copy of filch speaks another fork-join
 * protocol than the copy the task module imported (two versions of filch in one program): forks cannot
 * be handed over, and running them inline would hide it.
 *
 * @example Usage
 * ```ts
 * import { ForkJoinProtocolError } from "@filch/filch";
 * console.log(new ForkJoinProtocolError(1, 2).name); // ForkJoinProtocolError
 * ```
 */
export class ForkJoinProtocolError extends Error {
  /**
   * Creates the error.
   *
   * @param mine The protocol of the copy of filch that `join` was called from.
   * @param theirs The protocol of the pool worker's copy.
   */
  constructor(mine: number, theirs: number) {
    super(
      `Cannot join as the task module's copy of filch speaks fork-join protocol ${mine} and the pool ` +
        `worker's copy speaks ${theirs}: two versions of filch are loaded; make the task module import the ` +
        "same filch (package and version) as the code that creates the pool",
    );
    this.name = "ForkJoinProtocolError";
  }
}

/**
 * A worker could not load the pool's task module: it threw while loading, its thread exited, or it did
 * not finish loading within the pool's `loadTimeout`. `url` is the module; `cause` is the loader's own
 * error where there is one.
 *
 * @example Usage
 * ```ts
 * import { ModuleLoadError } from "@filch/filch";
 * const error = new ModuleLoadError("file:///app/tasks.ts", "it threw while loading: boom", { cause: new Error("boom") });
 * console.log(error.name, error.url); // ModuleLoadError file:///app/tasks.ts
 * ```
 */
export class ModuleLoadError extends Error {
  /** The task module's URL. */
  readonly url: string;
  /**
   * Creates the error.
   *
   * @param url The task module's URL.
   * @param why Why it could not be loaded (appended to "Cannot create pool as the task module '<url>' …").
   * @param options The loader's error, if any.
   */
  constructor(url: string, why: string, options?: ErrorOptions) {
    super(`Cannot create pool as the task module '${url}' could not be loaded: ${why}`, options);
    this.name = "ModuleLoadError";
    this.url = url;
  }
}

/**
 * A worker's `teardownWorker()` (the task module's teardown, see docs/elastic.md) threw, rejected, or did not
 * finish within its bound when the worker left (pool close, a recycle): reported to the pool's `onError`
 * (task name `"(worker teardown)"`). The worker leaves anyway; `cause` is what the teardown threw.
 *
 * @example Usage
 * ```ts
 * import { WorkerTeardownError } from "@filch/filch";
 * const error = new WorkerTeardownError(1, "it threw: disk full", { cause: new Error("disk full") });
 * console.log(error.name, error.worker); // WorkerTeardownError 1
 * ```
 */
export class WorkerTeardownError extends Error {
  /** The worker's index. */
  readonly worker: number;
  /**
   * Creates the error.
   *
   * @param worker The worker's index.
   * @param why What went wrong (appended to "The teardown of worker <n> failed: …").
   * @param options What the teardown threw, if anything.
   */
  constructor(worker: number, why: string, options?: ErrorOptions) {
    super(`The teardown of worker ${worker} failed: ${why}`, options);
    this.name = "WorkerTeardownError";
    this.worker = worker;
  }
}

const isErrorBuiltin = (Error as unknown as { isError?: (value: unknown) => boolean }).isError;

/**
 * Whether `value` is a real `Error` (`Error.isError` where the runtime has it, which also sees errors of
 * other realms; else `instanceof Error`).
 *
 * @param value Anything.
 * @returns `true` for an `Error` or an instance of a subclass.
 *
 * @example Usage
 * ```ts
 * import { isError } from "./errors.ts";
 * console.log(isError(new TypeError("x")), isError({ message: "x" })); // true false
 * ```
 */
export function isError(value: unknown): value is Error {
  return isErrorBuiltin !== undefined ? isErrorBuiltin(value) : value instanceof Error;
}

/**
 * Any thrown value as a real `Error`, without calling anything that can throw: an `Error` is returned as
 * it is; an error-like object (Bun's `ResolveMessage` and `BuildMessage`, a structured clone of an error
 * that lost its prototype) becomes an `Error` with its name, message, stack and position; anything else
 * becomes an `Error` whose message describes it.
 *
 * @param value What was thrown, or reported as a thread's death.
 * @returns An `Error` that the codec can carry (its `cause`, if any, is left to the codec's own checks).
 *
 * @example Usage
 * ```ts
 * import { toError } from "./errors.ts";
 * console.log(toError({ name: "ResolveMessage", message: "Cannot find module './x'" }).message); // Cannot find module './x'
 * console.log(toError(42).message); // 42
 * ```
 */
export function toError(value: unknown): Error {
  try {
    if (isError(value)) return value;
    if (value !== null && typeof value === "object") {
      const o = value as { name?: unknown; message?: unknown; stack?: unknown; position?: unknown };
      if (typeof o.message === "string") {
        const position = describePosition(o.position);
        const error = new Error(position === undefined ? o.message : `${o.message} (at ${position})`);
        if (typeof o.name === "string" && o.name !== "") error.name = o.name;
        if (typeof o.stack === "string") error.stack = o.stack;
        return error;
      }
      return new Error(`a thrown ${Object.prototype.toString.call(value)} that is not an Error`);
    }
    return new Error(String(value));
  } catch (error) {
    // A proxy or getter that throws on every access: say so rather than fail.
    return new Error(`a thrown value that cannot be read (${describeQuietly(error)})`);
  }
}

function describePosition(position: unknown): string | undefined {
  if (position === null || typeof position !== "object") return undefined;
  const p = position as { file?: unknown; line?: unknown; column?: unknown };
  if (typeof p.file !== "string") return undefined;
  return `${p.file}${typeof p.line === "number" ? `:${p.line}` : ""}${
    typeof p.column === "number" ? `:${p.column}` : ""
  }`;
}

function describeQuietly(error: unknown): string {
  try {
    return error instanceof Error ? error.message : typeof error;
  } catch {
    return "unreadable";
  }
}
