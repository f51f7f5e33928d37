/**
 * A pool handle taken inside a pool task: `poolHandle()`, from which the task (or any thread it posts the
 * handle to) opens a producer on the pool that runs it, to submit top-level tasks (work it discovers, not
 * subtasks it joins: for those, `join` and `scope`).
 *
 * What it owns: the one public function. The worker loop answers it (as the fork-join host, found through
 * the same registry as `join`, so a task module that imports another copy of filch gets the same answer):
 * the worker asks the pool's owner, who alone claims producer slots (worker/handles.ts). While the
 * producer opened from it has tasks pending, the worker lets its event loop turn (runtime/holds.ts), so
 * the producer reads its completions even after the task that opened it returned.
 *
 * Threads: a pool worker thread; elsewhere it rejects with a TypeError that says where a handle comes from.
 *
 * @module
 */

import { currentHost } from "../forkjoin/host.ts";
import type { PoolHandle } from "./handle.ts";

/**
 * A handle of the pool running this task, from its owner: open a producer with it (`openProducer`) to
 * submit top-level tasks from inside a task, and close that producer when done (its slot is held until
 * then). Each call claims one of the pool's producer slots (its `producers` option).
 *
 * @typeParam M The task module's type (as `Pool<M>`), for the producer's typed `run`.
 * @returns The handle.
 * @throws {TypeError} (as a rejection) Outside a pool worker.
 * @throws {RangeError} (as a rejection) If every producer slot is taken, or the pool has none.
 * @throws {PoolClosedError} (as a rejection) If the pool is closing or closed.
 *
 * @example Usage
 * ```ts ignore
 * // tasks.ts: a task that queues more top-level work on its own pool
 * import { openProducer, poolHandle } from "@filch/filch";
 * export async function crawl(url: string): Promise<number> {
 *   await using producer = openProducer<typeof import("./tasks.ts")>(await poolHandle());
 *   const pages = await Promise.all(linksOf(url).map((link) => producer.run("fetchPage", link)));
 *   return pages.length;
 * }
 * ```
 */
export function poolHandle<M extends object>(): Promise<PoolHandle<M>> {
  let host;
  try {
    host = currentHost();
  } catch (error) {
    return Promise.reject(error); // two copies of filch that do not speak the same protocol
  }
  if (host === undefined) {
    return Promise.reject(
      new TypeError(
        "Cannot take a pool handle as this code does not run on a pool worker: call poolHandle() inside a task, " +
          "or pool.handle() in the thread that created the pool",
      ),
    );
  }
  return host.poolHandle() as Promise<PoolHandle<M>>;
}
