/**
 * The fork-join host: what a pool worker provides to the fork-join code (`join.ts`) and to
 * `currentTask()` (`task_context.ts`) running on it, and the registry through which that code finds it.
 *
 * What it owns: the {@link ForkJoinHost} contract (implemented by the worker side, `worker/fork_join.ts`),
 * the {@link TaskContext} a host describes a running task with, and the one registry entry per thread
 * (shared by every copy of filch loaded in that thread, found through `Symbol.for`).
 *
 * Invariants:
 * - A thread has at most one host, installed once by its worker loop ({@link setForkJoinHost}); outside a
 *   pool worker there is none and fork-join runs inline.
 * - A copy of filch uses another copy's host only if both speak {@link FORK_JOIN_PROTOCOL}; otherwise
 *   {@link currentHost} throws {@link ForkJoinProtocolError} rather than run inline silently.
 *
 * Threads: any; each thread sees its own host.
 *
 * @module
 */

import { ForkJoinProtocolError } from "../errors.ts";
import type { AbortSignalLike } from "../options.ts";

/**
 * The task running now, as `currentTask()` describes it.
 *
 * @example Usage
 * ```ts
 * import type { TaskContext } from "@filch/filch";
 * function describe(context: TaskContext): string {
 *   return `task ${context.id} on worker ${context.worker}`;
 * }
 * ```
 */
export interface TaskContext<P = unknown> {
  /** The index of the worker running it (0 to workers - 1). */
  readonly worker: number;
  /**
   * The submitted task's id: its submission number in its pool (0 for the first; wrapping at 2^31). A
   * fork has the id of the task that (through any depth of forks) made it; -1 if none (see `signal`).
   */
  readonly id: number;
  /**
   * Aborted when the task's caller aborts it or its timeout passes (see `Pool.with`), with the caller's
   * reason mapped to an `AbortError` or a `TimeoutError`. In synchronous code, read `aborted` or call
   * `throwIfAborted()`: they check at once. In asynchronous code, listeners also fire. A fork made after
   * its task's first `await` belongs to no task and gets a signal that never aborts.
   */
  readonly signal: AbortSignalLike;
  /**
   * Sends `value` to the `onProgress` handler its caller gave (`pool.with({ onProgress })`), on the
   * caller's thread, through the pool's shared memory (no message). Coalescing: a value its caller has not
   * read yet is replaced, so a task may report in a tight loop (50–90 ns a number, bench/progress.ts). A fork reports
   * to the caller of the task that made it. Without a handler, or in a fork made after its task's first
   * `await`, it does nothing. Keep the context (call `currentTask()` before the first `await`) to report
   * from asynchronous code; a report after the task settled is dropped. See docs/progress.md.
   *
   * @param value A number (the fast path), or data the pool can copy that encodes to at most 48 bytes (a
   * short string, a small object).
   * @throws {RangeError} If the value encodes to more than 48 bytes.
   * @throws {TypeError} If the value cannot cross threads (a function, a shared buffer, a moved one).
   */
  progress(value: P): void;
}

/** A function of the pool's task module. */
// deno-lint-ignore no-explicit-any
export type TaskFunction = (...args: any[]) => unknown;

/** What a worker provides to fork-join code running on it. */
export interface ForkJoinHost {
  /**
   * Forks `fn(...args)` onto this worker's deque; returns its handle, or -1 if it must run inline (no
   * record, room or blocks to fork into).
   */
  fork(fn: TaskFunction, args: unknown[]): number;
  /**
   * Whether join's b, which its caller runs right after a, may skip the deque: no thief could want it, and
   * its arguments would reach it unchanged either way (a lazy join; a scope's spawns always fork, as kept
   * inline they would run one after another). Throws a TypeError if `fn` is not a task function.
   */
  keepsInline(fn: TaskFunction, args: unknown[]): boolean;
  /**
   * Runs a forked function that {@link ForkJoinHost.fork} did not fork (-1), inline, as part of the task
   * that called join or spawn: not if that task was aborted (throws the reason, as a fork of it would not
   * run either); otherwise as {@link callInline} does.
   */
  inline(fn: TaskFunction, args: unknown[]): unknown;
  /**
   * Waits for the forked task `handle`: runs it inline if it is still on top of this worker's deque,
   * else helps with other work until its latch is set. Returns its value, or throws its error (always
   * after it has settled).
   */
  joinForked(handle: number): unknown;
  /** The function registered under a built-in name (used by the loops to fork their own pieces). */
  builtin(name: string): TaskFunction;
  /** The id of an exported task function, so it can travel as an argument; throws a TypeError if not one. */
  taskId(fn: TaskFunction): number;
  /** The task function of an id. */
  task(id: number): TaskFunction;
  /** The task running synchronously on this thread now, or undefined between tasks (see task_context.ts). */
  context(): TaskContext | undefined;
  /** Asks the pool's owner for a handle of this pool (see producer/pool_handle.ts); rejects with the owner's error. */
  poolHandle(): Promise<unknown>;
}

let host: ForkJoinHost | undefined;

/**
 * The version of the {@link ForkJoinHost} interface: a copy of filch finds the host another copy
 * installed (see {@link currentHost}) only if they speak the same one.
 */
const FORK_JOIN_PROTOCOL = 5; // 2: `context()`; 3: `lazy` forks, `inline`, `extra` spread; 4: `poolHandle()`; 5: `context().progress`

/** Where a thread's host is registered for every copy of filch loaded in it (one realm, one thread). */
const HOST_KEY = Symbol.for("filch.forkJoinHost");

/** What the registry holds: one object per thread, shared by every copy of filch loaded in it. */
interface RegisteredHost {
  protocol: number;
  host: ForkJoinHost | undefined;
}

/**
 * This thread's registry entry: made by the first copy of filch to load, found by the others. A plain
 * object read by property, so that a copy with no host of its own (the main thread's, where joins run
 * inline) pays one load per join, not a lookup on the global object.
 */
const registered: RegisteredHost = (() => {
  const registry = globalThis as unknown as Record<symbol, RegisteredHost | undefined>;
  return registry[HOST_KEY] ??= { protocol: FORK_JOIN_PROTOCOL, host: undefined };
})();

/**
 * Installs the fork-join host of the current thread (the worker loop does this once), for this copy of
 * filch and, through a global registry, for any other copy the task module may have imported (a relative
 * path beside an `npm:` one, a bundled task module).
 *
 * @param h The host, or undefined to remove it.
 */
export function setForkJoinHost(h: ForkJoinHost | undefined): void {
  host = h;
  registered.protocol = FORK_JOIN_PROTOCOL;
  registered.host = h;
}

/**
 * This thread's fork-join host: the one this copy installed, else one another copy of filch installed
 * (found in the registry, then kept), else none (not a pool thread: everything runs inline).
 *
 * @returns The host, or undefined outside a pool thread.
 * @throws {ForkJoinProtocolError} If the other copy speaks another protocol: running inline would hide it.
 *
 * @example Usage
 * ```ts
 * import { currentHost } from "./host.ts";
 * console.log(currentHost()); // undefined: this is not a pool thread
 * ```
 */
export function currentHost(): ForkJoinHost | undefined {
  if (host !== undefined) return host;
  const found = registered.host;
  if (found === undefined) return undefined;
  if (registered.protocol !== FORK_JOIN_PROTOCOL) {
    throw new ForkJoinProtocolError(FORK_JOIN_PROTOCOL, registered.protocol);
  }
  host = found;
  return host;
}
