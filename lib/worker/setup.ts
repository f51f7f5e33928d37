/**
 * A worker's setup and teardown: the task module's optional `setupWorker(data)` export, run once per worker
 * thread with the pool's `workerData` before the worker reports ready (so before it takes any task), and its
 * optional `teardownWorker()` export, run once when the worker leaves (the pool's `close()`; a retirement or
 * a recycle calls {@link teardownThisWorker} itself).
 *
 * Why reserved export names and not a pool option naming two functions: a function cannot travel to the
 * worker, only its name could, and a name given as an option would still have to be taken out of the task
 * names (at run time and in the types, which cannot see an option's value). Two fixed names, distinctive
 * enough not to capture a task a module already has (`setup` would), are excluded from both the task ids
 * (boot.ts `taskFunctions`) and the typed task names (lib/task_types.ts `TaskName`).
 *
 * What it owns: this thread's two hooks and whether the teardown already ran (it runs at most once).
 *
 * Invariants:
 * - Setup finished (or threw, and the worker reported a load error) before the worker posts `ready`.
 * - Teardown runs at most once a thread, after the worker loop has returned (no task of this worker is
 *   running), and is bounded: after {@link TEARDOWN_TIMEOUT_MS} the worker reports a
 *   {@link WorkerTeardownError} and leaves anyway (a teardown that blocks its thread is stopped by the
 *   owner's grace at close, which terminates the thread).
 * - Its errors never escape: a teardown that throws, rejects or times out is posted to the owner as
 *   `{ type: "teardown-error", bytes }` (the error, encoded), which reports it to `onError`.
 *
 * Threads: a pool worker thread only (boot.ts at start and exit; a retiring or recycling worker at exit).
 *
 * @module
 */

import { Encoder } from "../codec/codec.ts";
import { encodeOutcome } from "../codec/outcome.ts";

/** The export name of a task module's setup function (not a task). */
export const SETUP_EXPORT = "setupWorker";
/** The export name of a task module's teardown function (not a task). */
export const TEARDOWN_EXPORT = "teardownWorker";
/** The export names that are not tasks. */
export const RESERVED_EXPORTS: readonly string[] = Object.freeze([SETUP_EXPORT, TEARDOWN_EXPORT]);

/** How long a worker's teardown may take before the worker leaves without it, in ms (below close's grace). */
export const TEARDOWN_TIMEOUT_MS = 1500;

type Hook = (...args: unknown[]) => unknown;

let teardownHook: Hook | undefined;
let post: ((message: unknown) => void) | undefined;
let tornDown = false;

/**
 * This thread, at start (boot.ts): runs the module's `setupWorker(data)`, if it has one, and keeps its
 * `teardownWorker` for the worker's exit.
 *
 * @param module The task module's namespace.
 * @param data The pool's `workerData` (a structured clone of it).
 * @param postMessage Posts a message to the owner (for a teardown's error).
 * @returns When the setup has finished.
 * @throws What the setup threw (boot.ts reports it as a load error, so the start fails).
 *
 * @example Usage
 * ```ts ignore
 * await runWorkerSetup(module, setup.workerData, (message) => port.post(message)); // in boot.ts
 * ```
 */
export async function runWorkerSetup(
  module: Record<string, unknown>,
  data: unknown,
  postMessage: (message: unknown) => void,
): Promise<void> {
  post = postMessage;
  const teardown = module[TEARDOWN_EXPORT];
  teardownHook = typeof teardown === "function" ? teardown as Hook : undefined;
  const setup = module[SETUP_EXPORT];
  if (typeof setup === "function") await (setup as Hook)(data);
}

/**
 * This thread, when it leaves (after its loop returned: pool close, a recycle, a retirement): runs the
 * module's `teardownWorker()` once, bounded by {@link TEARDOWN_TIMEOUT_MS}; a teardown that throws,
 * rejects or times out is reported to the owner (its `onError`) as a `WorkerTeardownError`. Never
 * throws; a second call does nothing.
 *
 * @param index This worker's index (for the error's message).
 * @returns When the teardown finished, failed or timed out.
 *
 * @example Usage
 * ```ts ignore
 * await loop.run();            // the loop returned: nothing of this worker runs
 * await teardownThisWorker(0); // then the module's teardownWorker()
 * port.post({ type: "exited" });
 * ```
 */
export async function teardownThisWorker(index: number): Promise<void> {
  if (tornDown) return;
  tornDown = true;
  const hook = teardownHook;
  if (hook === undefined) return;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let failure: { cause: unknown } | "timeout" | undefined;
  try {
    const timeout = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), TEARDOWN_TIMEOUT_MS);
    });
    const outcome = await Promise.race([Promise.resolve().then(() => hook()), timeout]);
    if (outcome === "timeout") failure = "timeout";
  } catch (cause) {
    failure = { cause };
  } finally {
    clearTimeout(timer);
  }
  if (failure === undefined || post === undefined) return;
  // The owner builds the WorkerTeardownError (so that `instanceof` holds there): only the cause travels.
  const encoder = new Encoder();
  encodeOutcome(encoder, failure === "timeout" ? undefined : failure.cause, true);
  post({ type: "teardown-error", index, timedOut: failure === "timeout", bytes: encoder.snapshot() });
}

/** What `Pool.create`'s `recycle` option asks of each worker (Infinity: no bound). */
export interface RecycleBounds {
  /** Leave after this many tasks taken by the loop. */
  afterTasks: number;
  /** Leave once this thread's heap in use passes this many MiB (checked every {@link HEAP_CHECK_EVERY} tasks). */
  heapMB: number;
}

/** Every how many tasks a worker with a heap bound reads its heap (a read costs a few microseconds). */
export const HEAP_CHECK_EVERY = 4;

/**
 * A reader of this thread's heap in use, in bytes, where the runtime has one (Node and Bun:
 * `process.memoryUsage().heapUsed`, which in a worker thread measures that thread's own heap; Deno:
 * `Deno.memoryUsage().heapUsed`, the same); undefined elsewhere (a browser's worker).
 *
 * @returns The reader, or undefined.
 *
 * @example Usage
 * ```ts
 * import { heapReader } from "./setup.ts";
 * const read = heapReader();
 * console.log(read === undefined || read() > 0); // true
 * ```
 */
export function heapReader(): (() => number) | undefined {
  const g = globalThis as {
    Deno?: { memoryUsage?: () => { heapUsed: number } };
    process?: { memoryUsage?: () => { heapUsed: number } };
  };
  const deno = g.Deno?.memoryUsage;
  if (typeof deno === "function") return () => deno().heapUsed;
  const node = g.process?.memoryUsage;
  if (typeof node === "function") return () => node.call(g.process).heapUsed;
  return undefined;
}

/**
 * This worker's recycling bounds: counts the tasks its loop takes, reads its heap now and then, and says
 * when the worker is due to leave (lib/worker/loop.ts then stops taking tasks; the owner replaces it:
 * lib/owner/recycle.ts).
 *
 * @example Usage
 * ```ts
 * import { RecycleWatch } from "./setup.ts";
 * const watch = new RecycleWatch({ afterTasks: 2, heapMB: Infinity });
 * console.log(watch.ranOne(), watch.ranOne()); // undefined tasks
 * ```
 */
export class RecycleWatch {
  private readonly bounds: RecycleBounds;
  private readonly readHeap: (() => number) | undefined;
  private tasks = 0;

  /** @param bounds The pool's `recycle` option, resolved. */
  constructor(bounds: RecycleBounds) {
    this.bounds = bounds;
    this.readHeap = bounds.heapMB === Infinity ? undefined : heapReader();
  }

  /**
   * This thread, after its loop ran a task: whether the worker is now due to leave, and why.
   *
   * @returns `"tasks"`, `"heap"`, or undefined (not due).
   */
  ranOne(): "tasks" | "heap" | undefined {
    const n = ++this.tasks;
    if (n >= this.bounds.afterTasks) return "tasks";
    if (this.readHeap !== undefined && n % HEAP_CHECK_EVERY === 0) {
      if (this.readHeap() > this.bounds.heapMB * 2 ** 20) return "heap";
    }
    return undefined;
  }
}
