/**
 * The pool's named errors: every way a task can settle other than with its own result or its own error.
 *
 * Messages follow one pattern: what could not be done, why, and what to do ("Cannot run task 'add' as the
 * pool is closed: create a new pool").
 *
 * @module
 */

/**
 * A task was submitted after `close()` or `terminate()` began, or was still queued when `terminate()` ran.
 *
 * @example Usage
 * ```ts
 * import { PoolClosedError } from "./errors.ts";
 * const error = new PoolClosedError("Cannot run task 'add' as the pool is closed: create a new pool");
 * console.log(error.name); // "PoolClosedError"
 * ```
 */
export class PoolClosedError extends Error {
  /**
   * @param message What could not be done and why.
   * @param options The cause, if any.
   */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "PoolClosedError";
  }
}

/**
 * A task had not settled when `terminate()` stopped the pool.
 *
 * @example Usage
 * ```ts
 * import { PoolTerminatedError } from "./errors.ts";
 * console.log(new PoolTerminatedError("stopped").name); // "PoolTerminatedError"
 * ```
 */
export class PoolTerminatedError extends Error {
  /**
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
 * import { WorkerCrashedError } from "./errors.ts";
 * const error = new WorkerCrashedError("worker 0 died", 0, { cause: new Error("boom") });
 * console.log(error.worker, (error.cause as Error).message); // 0 "boom"
 * ```
 */
export class WorkerCrashedError extends Error {
  /** The index of the worker that died. */
  readonly worker: number;
  /**
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
 * A task name that the pool's task module does not export as a function. `known` lists the names it does.
 *
 * @example Usage
 * ```ts
 * import { TaskNotFoundError } from "./errors.ts";
 * const error = new TaskNotFoundError("nope", ["add", "mul"]);
 * console.log(error.message); // Cannot run task 'nope' as the task module exports no such function: known tasks are 'add', 'mul'
 * ```
 */
export class TaskNotFoundError extends Error {
  /** The task functions the module exports. */
  readonly known: readonly string[];
  /**
   * @param task The name asked for.
   * @param known The names the module exports.
   */
  constructor(task: string, known: readonly string[]) {
    super(
      `Cannot run task '${task}' as the task module exports no such function: known tasks are ${
        known.length === 0 ? "none" : known.map((k) => `'${k}'`).join(", ")
      }`,
    );
    this.name = "TaskNotFoundError";
    this.known = known;
  }
}
