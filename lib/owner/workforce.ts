/**
 * The pool's worker threads, from start to stop: start each one and wait until it has loaded the task
 * module, notice its death on every runtime, and start a replacement on the same deque.
 *
 * What it owns: one {@link Slot} per worker index (the thread, whether it is ready, whether its death was
 * handled), the set-up messages, and the rare messages a running worker sends (a SharedArrayBuffer it
 * passes by reference, a result payload that found no free blocks).
 *
 * Invariants:
 * - A death is handled once per thread: an uncaught error is followed by an exit event (and on Bun our
 *   own `terminate()` reports a "close"); the slot's `dead` mark makes later reports no-ops, and a
 *   replacement starts only after the mark is set (so two threads never own one deque).
 * - Starting cannot hang: a module that throws, a thread that exits while loading, or a load that does
 *   not finish within `loadTimeout` rejects with a {@link ModuleLoadError} naming the module.
 * - Deaths are noticed on every runtime: worker_threads' `exit` (Node, Deno), Bun's "close" event, and
 *   the `error` event (browsers, where a worker dies only by an uncaught error).
 *
 * Threads: the thread that created the pool.
 *
 * @module
 */

import { decode } from "../codec/codec.ts";
import { ModuleLoadError, toError } from "../errors.ts";
import type { ResourceLimits } from "../options.ts";
import { inBunExecutable, startThread, TASK_ENTRY_MARK, type ThreadHandle } from "../runtime/thread.ts";
import type { WorkerSetup } from "../worker/loop.ts";

/** One worker index's thread. */
interface Slot {
  readonly thread: ThreadHandle;
  /** Resolves when the thread said it left its loop, or exited. */
  readonly exited: Promise<void>;
  readonly markExited: () => void;
  /** Set once the thread's death was handled (or the pool stopped it). */
  dead: boolean;
  /**
   * Why its start failed (a `ModuleLoadError`), or undefined: a thread that never became ready. Nothing
   * starts on the index again but a later {@link Workforce.start} (an elastic pool's growth), so what is
   * posted to it meanwhile cannot run: see {@link Workforce.vacancy}.
   */
  failure: Error | undefined;
}

/** What the workforce tells its owner (lib/owner/owner.ts, which forwards each event to the part it is for). */
export interface WorkforceEvents {
  /** A worker died after it was ready (called once per thread); `forced`: {@link Workforce.kill} killed it. */
  died(index: number, cause: unknown, forced: boolean): void;
  /** A running worker passed a SharedArrayBuffer by reference. */
  buffer(id: number, buffer: SharedArrayBuffer): void;
  /** A result payload came by message (with the buffers its result moved, if any). */
  payload(handle: number, bytes: Uint8Array, moved: ArrayBuffer[] | undefined): void;
  /** A broadcast part finished on a worker: its encoded outcome. */
  broadcastResult(id: number, bytes: Uint8Array, failed: boolean): void;
  /** An elastic pool's worker retired (its slot says ABSENT); its thread is being terminated. */
  retired(index: number): void;
  /** An elastic pool's worker found queued work and nobody asleep: the owner looks at growth. */
  grow(): void;
  /** A task on a worker asked for a pool handle (`poolHandle()`): `reply` posts the answer to that worker. */
  handleRequest(id: number, reply: (message: unknown, transfer?: Transferable[]) => void): void;
  /** A worker is due to be recycled (its loop stopped taking tasks: worker/loop.ts); see recycle.ts. */
  recycleReady(index: number, reason: "tasks" | "heap"): void;
  /** A leaving worker's `teardownWorker()` threw (`cause`) or did not finish in time (worker/setup.ts). */
  teardownFailed(index: number, timedOut: boolean, cause: unknown): void;
}

/** How the workforce starts threads. */
export interface WorkforceOptions {
  /** Thread name prefix. */
  name: string;
  /** The task module's URL (for messages). */
  moduleUrl: string;
  /** How long a worker may take to load the task module, in ms. */
  loadTimeout: number;
  /** Heap limits of each worker thread, where the runtime has them. */
  resourceLimits: ResourceLimits | undefined;
  /** The worker entry's absolute URL: the `workerUrl` option, or `defaultWorkerUrl()` (`worker_url.ts`). */
  workerUrl: string;
}

/**
 * Starts, watches and stops the pool's worker threads.
 *
 * @example Usage
 * ```ts ignore
 * const workforce = new Workforce(options, events, (index) => setupFor(index));
 * const names = await workforce.start(0); // the task module's export names
 * ```
 */
export class Workforce {
  private readonly slots: (Slot | undefined)[] = [];
  private stopping = false;
  /**
   * Messages for a recycling worker's index, kept for its replacement (recycle.ts): posted to the new
   * thread right after its start message (boot.ts keeps them until its loop exists).
   */
  private readonly deferred = new Map<number, [unknown, ArrayBuffer[] | undefined][]>();

  private readonly options: WorkforceOptions;
  private readonly events: WorkforceEvents;
  private readonly setup: (index: number) => WorkerSetup;
  /**
   * @param options Names, the module, limits.
   * @param events Where deaths and messages go.
   * @param setup The set-up message for worker `index`.
   */
  constructor(
    options: WorkforceOptions,
    events: WorkforceEvents,
    setup: (index: number) => WorkerSetup,
  ) {
    this.options = options;
    this.events = events;
    this.setup = setup;
  }

  /**
   * Starts worker `index` and waits until it has loaded the task module.
   *
   * @param index The worker index (its deque).
   * @returns The module's task names, sorted.
   * @throws {ModuleLoadError} If the module threw while loading, the thread exited first, or loading took
   * longer than `loadTimeout`.
   */
  async start(index: number): Promise<string[]> {
    if (this.stopping) throw new ModuleLoadError(this.options.moduleUrl, "the pool stopped before the worker started");
    const { name, moduleUrl, loadTimeout, resourceLimits, workerUrl } = this.options;
    // In a Bun single-file executable only the files named when compiling are worker entries, and ours
    // is not one: the thread starts from the task module, which boots it (task_entry.ts). Elsewhere the
    // entry is the `workerUrl` option, or the one written literally beside it (`worker_url.ts`) so that
    // bundlers can see it (see DESIGN.md, wave 2, item 5).
    const fromTaskModule = inBunExecutable(import.meta.url);
    const url = fromTaskModule ? new URL(moduleUrl) : new URL(workerUrl);
    const thread = startThread(
      url,
      `${name}-${index}`,
      resourceLimits,
      fromTaskModule ? [TASK_ENTRY_MARK] : undefined,
    );
    let markExited = () => {};
    const exited = new Promise<void>((resolve) => (markExited = resolve));
    const slot: Slot = { thread, exited, markExited, dead: false, failure: undefined };
    this.slots[index] = slot;
    return await new Promise<string[]>((resolve, reject) => {
      let ready = false;
      let failed = false;
      const fail = (error: ModuleLoadError) => {
        if (ready || failed) return;
        failed = true;
        clearTimeout(timer);
        slot.dead = true;
        slot.failure = error;
        thread.terminate();
        reject(error);
      };
      const timer = setTimeout(
        () =>
          fail(
            new ModuleLoadError(
              moduleUrl,
              fromTaskModule
                ? `a worker started from it did not report within ${loadTimeout} ms: in a Bun single-file ` +
                  "executable the task module is the workers' entry and must import filch (any import, such " +
                  "as `import { join } from \"filch\"`), which starts the worker; or raise 'loadTimeout' if it is only slow"
                : `a worker did not finish loading it within ${loadTimeout} ms (a top-level await that never ` +
                  "settles?): raise the pool's 'loadTimeout' if it is only slow",
            ),
          ),
        loadTimeout,
      );
      thread.onMessage((message) => {
        const m = message as {
          type: string;
          names?: string[];
          bytes?: Uint8Array;
          id?: number;
          buffer?: SharedArrayBuffer;
          handle?: number;
        };
        if (m.type === "ready") {
          if (failed) return;
          ready = true;
          clearTimeout(timer);
          thread.unref();
          resolve(m.names!);
        } else if (m.type === "load-error") {
          const cause = decode(m.bytes!, 0, m.bytes!.length) as Error;
          const message = messageOf(cause);
          const at = whereItThrew(cause);
          const where = at !== undefined && !message.includes(at) ? ` (at ${at})` : "";
          // A throw of the module's setupWorker (worker/setup.ts) fails the start as a load error does.
          const what = (m as { inSetup?: boolean }).inSetup === true
            ? "its setupWorker threw"
            : "it threw while loading";
          fail(new ModuleLoadError(moduleUrl, `${what}: ${message}${where}`, { cause }));
        } else if (m.type === "payload") {
          this.events.payload(m.handle!, m.bytes!, (m as { moved?: ArrayBuffer[] }).moved);
        } else if (m.type === "broadcast-result") {
          this.events.broadcastResult(m.id!, m.bytes!, (m as { failed?: boolean }).failed === true);
        } else if (m.type === "buffer") {
          // A buffer a worker shared (in a fork's arguments, or a result): other workers may steal a task
          // that names it, so they need it too.
          for (const other of this.slots) {
            if (other !== slot && other !== undefined && !other.dead) {
              other.thread.post({ type: "buffer", id: m.id!, buffer: m.buffer! });
            }
          }
          this.events.buffer(m.id!, m.buffer!);
        } else if (m.type === "handle-request") {
          this.events.handleRequest(m.id!, (reply, transfer) => {
            if (!slot.dead) thread.post(reply, transfer as ArrayBuffer[] | undefined);
          });
        } else if (m.type === "recycle-ready") {
          if (!slot.dead) this.events.recycleReady(index, (m as { reason?: "tasks" | "heap" }).reason ?? "tasks");
        } else if (m.type === "teardown-error") {
          const cause = decode(m.bytes!, 0, m.bytes!.length);
          this.events.teardownFailed(index, (m as { timedOut?: boolean }).timedOut === true, cause);
        } else if (m.type === "exited") {
          slot.markExited();
        } else if (m.type === "retired") {
          // An elastic pool's worker left its loop by retiring (protocol/slots.ts): not a death.
          if (slot.dead) return;
          slot.dead = true;
          slot.markExited();
          thread.terminate();
          this.events.retired(index);
        } else if (m.type === "grow") {
          this.events.grow();
        }
      });
      thread.onError((error) => {
        if (!ready) {
          const cause = toError(error);
          fail(new ModuleLoadError(moduleUrl, `its worker thread failed: ${messageOf(cause)}`, { cause }));
        } else this.died(index, slot, toError(error));
      });
      thread.onExit((code) => {
        slot.markExited();
        if (!ready) {
          fail(
            new ModuleLoadError(
              moduleUrl,
              `its worker thread exited with code ${code} while loading it (process.exit or Deno.exit at top level?)`,
            ),
          );
        } else this.died(index, slot, new Error(`worker ${index} exited with code ${code}`));
      });
      thread.post({ type: "start", setup: this.setup(index) });
      const queued = this.deferred.get(index);
      if (queued !== undefined) {
        this.deferred.delete(index);
        for (const [message, transfer] of queued) thread.post(message, transfer);
      }
    });
  }

  /**
   * Sends a SharedArrayBuffer the main thread passes by reference to every live worker.
   *
   * @param id Its id.
   * @param buffer The buffer.
   */
  share(id: number, buffer: SharedArrayBuffer): void {
    for (const slot of this.slots) {
      if (slot !== undefined && !slot.dead) slot.thread.post({ type: "buffer", id, buffer });
    }
  }

  /**
   * Sends `message` to worker `index`, if it is alive (a dead worker's tasks are settled by recovery; those
   * posted to an index whose start failed, by the caller: see {@link Workforce.vacancy}).
   *
   * @param index The worker.
   * @param message A structured-clonable message.
   * @param transfer ArrayBuffers to move with it (detached here, even if the worker is dead).
   */
  send(index: number, message: unknown, transfer?: ArrayBuffer[]): void {
    const deferred = this.deferred.get(index);
    if (deferred !== undefined) {
      deferred.push([message, transfer]);
      return;
    }
    const slot = this.slots[index];
    if (slot !== undefined && !slot.dead) slot.thread.post(message, transfer);
  }

  /**
   * Whether index `index` holds a thread whose start failed and nothing is being started there: then a
   * message posted to it is dropped and nobody's recovery will settle what it carried (a death's does,
   * for a thread that was ready). The owner settles those (owner.ts `post`).
   *
   * @param index The worker.
   * @returns The start's error, or undefined if the index is live, loading, dying or being recycled.
   */
  vacancy(index: number): Error | undefined {
    if (this.deferred.has(index) || this.stopping) return undefined;
    return this.slots[index]?.failure;
  }

  /**
   * Recycles worker `index` (recycle.ts): from now on messages for its index wait for its replacement;
   * tells the thread to leave (after every message posted to it before: messages keep their order), waits
   * until its loop returned and its teardown ran, and stops the thread. The caller then starts the
   * replacement with {@link Workforce.start}, which posts the kept messages.
   *
   * @param index The worker.
   * @returns Whether the caller should start the replacement: false if the thread died meanwhile (the death
   * path replaces it, with the kept messages) or the pool stops.
   */
  async recycle(index: number): Promise<boolean> {
    const slot = this.slots[index];
    if (slot === undefined || slot.dead || this.stopping || this.deferred.has(index)) return false;
    this.deferred.set(index, []);
    slot.thread.post({ type: "leave" });
    await slot.exited;
    if (slot.dead || this.stopping) return false;
    // Marked first: its exit event, which follows, is then no death.
    slot.dead = true;
    slot.thread.terminate();
    return true;
  }

  /**
   * Drops the messages kept for `index` (a replacement that failed to start: see recycle.ts).
   *
   * @param index The worker.
   */
  dropDeferred(index: number): void {
    this.deferred.delete(index);
  }

  /**
   * Waits (up to `graceMs`, if given) for every worker to leave its loop, then terminates the threads.
   *
   * @param graceMs How long to wait for a cooperative exit; undefined to terminate at once.
   */
  async stop(graceMs?: number): Promise<void> {
    this.stopping = true;
    const slots = this.slots.filter((s): s is Slot => s !== undefined);
    if (graceMs !== undefined) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const grace = new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)));
      await Promise.race([Promise.all(slots.map((s) => s.exited)), grace]);
      clearTimeout(timer);
    }
    for (const slot of slots) {
      slot.dead = true;
      slot.thread.terminate();
    }
  }

  /** Whether worker `index` is dead and not yet replaced. */
  isDead(index: number): boolean {
    return this.slots[index]?.dead ?? false;
  }

  private died(index: number, slot: Slot, cause: Error): void {
    // Handled once: an uncaught error is followed by an exit event; and our own terminate() reports too.
    if (slot.dead || this.stopping) return;
    slot.dead = true;
    slot.thread.terminate();
    slot.markExited();
    this.events.died(index, cause, false);
  }

  /**
   * Terminates worker `index` (its guard is down: see kill_guard.ts) and reports its death once its thread
   * has exited: recovery must not run while the thread may still run, and its replacement must not share
   * the index's words with it. Browsers report no exit: there a short grace stands in for it.
   *
   * @param index The worker.
   * @param cause Why (the cause of its other tasks' WorkerCrashedError).
   */
  kill(index: number, cause: Error): void {
    const slot = this.slots[index];
    if (slot === undefined || slot.dead || this.stopping) return;
    slot.dead = true;
    slot.thread.terminate();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const grace = new Promise<void>((resolve) => (timer = setTimeout(resolve, KILL_EXIT_GRACE_MS)));
    void Promise.race([slot.exited, grace]).then(() => {
      clearTimeout(timer);
      if (!this.stopping) this.events.died(index, cause, true);
    });
  }
}

/** How long a killed thread may take to report its exit before its death is handled anyway (browsers). */
const KILL_EXIT_GRACE_MS = 2000;

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

// A source location in a stack or a message: a file URL or path, a line, perhaps a column. Runtimes write
// them as `file:///app/tasks.ts:3:7`, `/app/tasks.ts:3:11`, `(at /app/tasks.ts:2:9)` (Bun's BuildMessage),
// or `/app/tasks.ts:2` above a code frame (Node's SyntaxError).
const LOCATION = /((?:file:\/\/|https?:\/\/|\/)[^\s()'"]*?\.[cm]?[jt]sx?):\d+(?::\d+)?/g;
// filch's own files, whose frames (the loader's caller) are not where a task module threw.
const OWN_DIR = new URL("../", import.meta.url);

/**
 * Where a task module's loader error points, as `path:line[:column]`: the first location in its stack (or
 * its message) outside filch's own files, or undefined when the runtime gave none (a thrown string; Bun's
 * ResolveMessage for a missing export).
 */
function whereItThrew(error: unknown): string | undefined {
  const stack = typeof error === "object" && error !== null ? (error as { stack?: unknown }).stack : undefined;
  const text = `${typeof stack === "string" ? stack : ""}\n${messageOf(error)}`;
  for (const m of text.matchAll(LOCATION)) {
    const path = m[1];
    if (path.startsWith(OWN_DIR.href) || path.startsWith(decodeURIComponent(OWN_DIR.pathname))) continue;
    return m[0]; // path:line[:column], as matched
  }
  return undefined;
}
