/**
 * The chunk task: runs on a worker the consecutive tasks a producer packed into one submission
 * (`producer/batch.ts` cuts them), and the built-in tasks every worker registers after the module's own
 * exports ({@link BUILTINS}).
 *
 * Invariants:
 * - Every task of a chunk runs once, in order, even when one throws; the chunk finishes only after every
 *   promise its tasks returned has settled, so that no task of a chunk still runs once its record is done.
 * - The built-ins' order is fixed: a built-in's id is the module's export count plus its index in
 *   {@link BUILTINS}; the producer side computes the chunk task's id from the same order.
 *
 * Threads: a pool worker.
 *
 * @module
 */

import { BUILTIN_TASKS } from "../forkjoin/join.ts";
import { currentHost, type TaskFunction } from "../forkjoin/host.ts";
import { adopt, thenOf } from "./thenable.ts";

/**
 * Runs a chunk of tasks on a worker: `count` calls of task `taskId`, the i-th with the `arity` arguments
 * from `flat[i * arity]` on. Every task runs even when one throws, and the chunk finishes only after every
 * promise its tasks returned has settled (each thenable adopted as the worker adopts a task's: its `then`
 * read once). What it returns depends on `outcomes`:
 * - 0 (`runMany`): the results in order, or a promise of them if any task returned a thenable; if a task
 *   failed, the chunk throws the first error (by index for throws, by time for rejections, a throw first).
 * - 1 (`map`, which yields every result before the first failure): `[errorAt, error, results]`, where
 *   `errorAt` is the smallest index of a task that threw or rejected (-1 if none) and `error` what it threw;
 *   `results` holds the other tasks' results. It throws only if that array cannot be sent.
 *
 * @param taskId The task function's id.
 * @param arity How many arguments each task takes.
 * @param count How many tasks.
 * @param outcomes 0 or 1, as above.
 * @param flat The tasks' arguments, one after another.
 * @returns The results (or the outcomes), or a promise of them.
 *
 * @example Usage
 * ```ts ignore
 * // On a worker, from a record that the main thread's submitBatch filled: add(1, 2), add(3, 4).
 * runChunk(addId, 2, 2, 0, 1, 2, 3, 4); // [3, 7]
 * ```
 */
export function runChunk(taskId: number, arity: number, count: number, outcomes: number, ...flat: unknown[]): unknown {
  const fn = currentHost()!.task(taskId);
  const results = new Array<unknown>(count);
  // The first failure to come (runMany's error), and the one of the smallest index (map's outcomes).
  let error: unknown;
  let errorAt = -1;
  let indexed: unknown;
  const failAt = (index: number, thrown: unknown) => {
    if (errorAt === -1) error = thrown;
    if (errorAt === -1 || index < errorAt) {
      errorAt = index;
      indexed = thrown;
    }
  };
  let pending: Promise<void>[] | undefined;
  for (let i = 0, at = 0; i < count; i++, at += arity) {
    let result: unknown;
    let then: unknown;
    try {
      result = arity === 1
        ? fn(flat[at])
        : arity === 2
        ? fn(flat[at], flat[at + 1])
        : arity === 0
        ? fn()
        : fn(...flat.slice(at, at + arity));
      // Read once, here, as the worker reads a task's: a getter on `then` is user code and may throw.
      then = thenOf(result);
    } catch (thrown) {
      failAt(i, thrown);
      continue;
    }
    if (typeof then !== "function") {
      results[i] = result;
      continue;
    }
    const index = i;
    // Adopted through a real promise: its `then` may throw, call back twice or call both (the first wins).
    (pending ??= []).push(
      adopt(result, then).then(
        (value) => {
          results[index] = value;
        },
        (rejection) => failAt(index, rejection),
      ),
    );
  }
  const finish = () => {
    if (outcomes === 1) return [errorAt, indexed, results];
    if (errorAt !== -1) throw error;
    return results;
  };
  return pending === undefined ? finish() : Promise.all(pending).then(finish);
}

/**
 * The built-in tasks, in the order every worker registers them after the module's own exports: a
 * built-in's id is the module's export count plus its index here.
 */
export const BUILTINS: Readonly<Record<string, TaskFunction>> = Object.freeze({
  ...BUILTIN_TASKS,
  runChunk: runChunk as TaskFunction,
});
