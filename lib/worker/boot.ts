/**
 * What each pool thread runs first: receive the set-up message, import the task module, run its
 * `setupWorker(workerData)` (setup.ts), report its task names (or the loader's or the setup's error), run the
 * worker loop, run the module's `teardownWorker()`, and say when it has exited.
 *
 * Messages (set-up and rare events only; tasks never travel by message):
 * - from the pool: `{ type: "start", setup }`, then `{ type: "buffer", id, buffer }` for each
 *   SharedArrayBuffer the main thread passes by reference, and `{ type: "handle-reply", id, handle | error }`
 *   answering a task's `poolHandle()` (handles.ts), and `{ type: "leave" }` answering a recycling worker's
 *   `recycle-ready` (loop.ts);
 * - to the pool: `{ type: "ready", names }`, `{ type: "load-error", bytes, inSetup }`, `{ type:
 *   "teardown-error", index, timedOut, bytes }` (setup.ts), `{ type: "recycle-ready", reason }` (loop.ts), `{ type: "buffer", id, buffer }`
 *   for a SharedArrayBuffer a result passes by reference, `{ type: "payload", handle, bytes }` for a
 *   result that found no free overflow blocks, `{ type: "handle-request", id }` for a task's `poolHandle()`,
 *   and `{ type: "exited" }` when the loop returns.
 *
 * Who calls it: `worker_thread.ts`, the thread entry, at once; or `task_entry.ts`, when the thread was
 * started from the task module itself (a Bun single-file executable: see `workforce.ts`).
 *
 * Threads: runs only as a pool worker thread.
 *
 * @module
 */

import { Encoder } from "../codec/codec.ts";
import type { HandleReply } from "./handles.ts";
import { encodeOutcome } from "../codec/outcome.ts";
import { parentPort } from "../runtime/thread.ts";
import { setRetireTeardown, WorkerLoop, type WorkerSetup } from "./loop.ts";
import { RESERVED_EXPORTS, runWorkerSetup, teardownThisWorker } from "./setup.ts";

/**
 * The task functions of a module, by sorted export name: its function exports but the reserved
 * `setupWorker` and `teardownWorker` (setup.ts).
 *
 * @param module A task module's namespace.
 * @returns Its function exports' names, sorted, and the functions in that order.
 *
 * @example Usage
 * ```ts
 * import { taskFunctions } from "./boot.ts";
 * console.log(taskFunctions({ b() {}, a() {}, c: 1, setupWorker() {} })[0]); // ["a", "b"]
 * ```
 */
export function taskFunctions(module: Record<string, unknown>): [string[], ((...args: unknown[]) => unknown)[]] {
  // The worker's setup and teardown (setup.ts) are not tasks: no id, no name, not forkable.
  const names = Object.keys(module).filter((name) =>
    typeof module[name] === "function" && !RESERVED_EXPORTS.includes(name)
  ).sort();
  return [names, names.map((name) => module[name] as (...args: unknown[]) => unknown)];
}

let booted = false;

/**
 * This pool thread: listens for the pool's set-up message and runs the thread from there. Once per
 * thread (a second call does nothing).
 *
 * @example Usage
 * ```ts ignore
 * import { bootWorker } from "./boot.ts";
 * bootWorker(); // in a pool thread only
 * ```
 */
export function bootWorker(): void {
  if (booted) return;
  booted = true;
  const port = parentPort();
  let loop: WorkerLoop | undefined;
  const early: [number, SharedArrayBuffer][] = [];
  const earlyParts: { id: number; taskId: number; bytes: Uint8Array }[] = [];
  const earlyDirected: { handle: number; moved: ArrayBuffer[] }[] = [];

  port.onMessage(async (message) => {
    const m = message as {
      type: string;
      setup?: WorkerSetup;
      id?: number;
      buffer?: SharedArrayBuffer;
      handle?: number;
    };
    if (m.type === "abort") {
      loop?.aborted(m.handle!);
      return;
    }
    if (m.type === "broadcast") {
      // A replacement may be sent one while it loads its task module: kept until its loop exists.
      const part = message as { id: number; taskId: number; bytes: Uint8Array };
      if (loop === undefined) earlyParts.push(part);
      else loop.broadcast(part.id, part.taskId, part.bytes);
      return;
    }
    if (m.type === "directed") {
      // A task whose arguments moved buffers, posted to this worker (kept, like a part, until the loop is).
      const task = message as { handle: number; moved: ArrayBuffer[] };
      if (loop === undefined) earlyDirected.push(task);
      else loop.directed(task.handle, task.moved);
      return;
    }
    if (m.type === "leave") {
      // The owner's answer to our recycle-ready (loop.ts): everything posted to this worker has arrived.
      loop?.leave();
      return;
    }
    if (m.type === "handle-reply") {
      // Only a task asks for a handle, so the loop exists.
      loop?.handleReply(message as HandleReply);
      return;
    }
    if (m.type === "buffer") {
      if (loop === undefined) early.push([m.id!, m.buffer!]);
      else loop.addBuffer(m.id!, m.buffer!);
      return;
    }
    if (m.type !== "start" || m.setup === undefined) return;
    const setup = m.setup;
    let module: Record<string, unknown>;
    let imported = false;
    try {
      module = await import(setup.moduleUrl);
      imported = true;
      // The module's setupWorker(workerData), if any, before `ready`: no task reaches a worker not set up.
      await runWorkerSetup(module, setup.workerData, (message) => port.post(message));
    } catch (error) {
      // The loader's own error, carried as the codec carries errors (name, message, stack, cause); a value
      // that is not an Error (Bun's ResolveMessage, BuildMessage) keeps its name, message and position.
      const encoder = new Encoder();
      encodeOutcome(encoder, error, true);
      port.post({ type: "load-error", bytes: encoder.snapshot(), inSetup: imported });
      return;
    }
    const [names, functions] = taskFunctions(module);
    // An elastic pool's retirement runs the module's teardown while its slot is RETIRING, before the slot is
    // marked ABSENT for reuse (spec/Elastic.tla: teardown, then RetireStoreAbsent), so that a new thread in
    // the slot never overlaps an old one's teardown; the call after the loop returns is then a no-op (once
    // per thread).
    setRetireTeardown(() => teardownThisWorker(setup.index));
    loop = new WorkerLoop(
      { ...setup, buffers: [...setup.buffers, ...early] },
      functions,
      (message, transfer) => port.post(message, transfer),
    );
    port.post({ type: "ready", names });
    for (const part of earlyParts.splice(0)) loop.broadcast(part.id, part.taskId, part.bytes);
    for (const task of earlyDirected.splice(0)) loop.directed(task.handle, task.moved);
    await loop.run();
    // The loop returned: none of this worker's tasks runs. Its teardown (bounded, errors reported), then out.
    await teardownThisWorker(setup.index);
    port.post({ type: "exited" });
  });
}
