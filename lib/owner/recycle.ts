/**
 * Recycling (issue 49): a worker that ran `recycle.afterTasks` tasks, or whose heap passed
 * `recycle.heapMB`, is replaced between tasks by a fresh thread on the same index and deque, without
 * rejecting anything.
 *
 * The steps, across the two threads:
 * 1. The worker (lib/worker/loop.ts) notices it is due after a task, stops taking tasks from the queues,
 *    wakes one sleeper (tasks left in its deque stay stealable, and stay for the replacement), and posts
 *    `recycle-ready`.
 * 2. Here: the workforce keeps every later message for that index (broadcast parts, directed tasks) for the
 *    replacement and posts `leave`; messages keep their order, so everything posted before has reached the
 *    old thread, which runs it (only it can) and lets its async tasks settle; then its loop returns, it runs
 *    the module's `teardownWorker()` (lib/worker/setup.ts) and posts `exited`.
 * 3. The old thread is stopped, then the replacement is started on the index (the death path's start:
 *    workforce.ts), which gets the kept messages after its start message and the pool's `workerData`.
 *
 * Why no task is lost or stranded, and no wake is lost: the old worker holds nothing when it leaves (its
 * runs settled; directed tasks and parts posted to it ran); its deque's tasks are stealable all along
 * (Chase-Lev steals need no owner) and the replacement owns them next; a poster's wake goes to a sleeper
 * (the leaving worker never sleeps again, so no wake is spent on it), and the leaving worker wakes one
 * itself for its deque; when the replacement is ready the owner wakes one more, as after a death. Two
 * threads never own the deque at once: the replacement starts after the old thread left its loop.
 *
 * What it owns: the count of workers recycled.
 *
 * Invariants: one recycle at a time per index (the workforce refuses a second); a thread that dies while
 * recycling takes the death path instead (its replacement gets the kept messages); none starts once the
 * pool stops.
 *
 * A replacement that fails to start (its `setupWorker` threw): reported to `onError` (a `ModuleLoadError`);
 * what was kept for it fails as a dead worker's does (worker_deaths.ts `startFailed`): its broadcast parts,
 * and its directed tasks (kept here, then posted to the thread that failed: the records name the index)
 * reject with `WorkerCrashedError` whose cause is that error; the index stays empty: in a fixed pool the
 * other workers steal what its deque holds and run everything else, and a directed task posted to the
 * index later rejects likewise (owner.ts `post`), the same as after a dead worker's replacement that
 * fails; in an elastic pool the slot is given back (owner.ts `giveBack`: its deque's tasks moved to the
 * injector, the slot ABSENT and its size back), so that thieves, posts, the sleep protocol and growth no
 * longer count a worker there and growth may start one on it again.
 *
 * Threads: the thread that created the pool.
 *
 * @module
 */

import type { PoolStateName } from "../lifecycle.ts";
import type { Sleep } from "../protocol/sleep.ts";
import type { Workforce } from "./workforce.ts";

/** What the recycler works with. */
export interface RecycleParts {
  workforce: Workforce;
  sleep: Sleep;
  /** The pool's lifecycle state. */
  state: () => PoolStateName;
  /** A recycled worker's replacement is ready (the pool's events). */
  recycled: (index: number, reason: "tasks" | "heap") => void;
  /** A replacement failed to start: `error` to `onError`, and the parts kept for it fail. */
  failed: (index: number, error: unknown) => void;
}

/**
 * Replaces workers that are due to be recycled.
 *
 * @example Usage
 * ```ts ignore
 * const recycler = new Recycler({ workforce, sleep, state, recycled, failed });
 * recycler.ready(0, "tasks"); // worker 0 posted recycle-ready
 * ```
 */
export class Recycler {
  /** Workers recycled so far (their replacement ready). */
  count = 0;
  private readonly parts: RecycleParts;

  /** @param parts The workforce, the sleep words, the lifecycle and the reports. */
  constructor(parts: RecycleParts) {
    this.parts = parts;
  }

  /**
   * Worker `index` posted `recycle-ready`: let it leave, then start its replacement.
   *
   * @param index The worker.
   * @param reason Which bound it passed.
   */
  ready(index: number, reason: "tasks" | "heap"): void {
    const { workforce, sleep, state } = this.parts;
    const running = () => state() === "open" || state() === "closing";
    void workforce.recycle(index).then((replace) => {
      if (!replace || !running()) return;
      workforce.start(index).then(
        () => {
          this.count++;
          sleep.newWork();
          this.parts.recycled(index, reason);
        },
        (error) => {
          workforce.dropDeferred(index);
          if (running()) this.parts.failed(index, error);
          // The others take what its deque holds: wake one to look.
          sleep.newWork();
        },
      );
    });
  }
}
