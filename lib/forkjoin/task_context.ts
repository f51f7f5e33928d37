/**
 * What a running task can know about itself: the worker that runs it, its id, and its signal.
 *
 * What it owns: {@link TaskContext}, {@link currentTask}, and the signal a task sees
 * ({@link pollingSignal}). The worker loop answers `currentTask()` (as the fork-join host, found through
 * the same registry as `join`, so a task module that imports another copy of filch gets the same answer).
 *
 * The signal. A task is aborted by the main thread (its caller's `AbortSignal`, or its timeout), which
 * sets a bit in the task's record and sends its worker a message. A synchronous task never lets its
 * worker read messages, so the signal it gets reads the bit itself: `aborted`, `reason` and
 * `throwIfAborted()` first look at the record (one atomic load). An asynchronous task's listeners fire
 * when the message arrives. Forks share the signal of the submitted task they belong to (their root).
 *
 * Threads: a pool worker thread; elsewhere `currentTask()` returns undefined.
 *
 * @module
 */

import { currentHost, type TaskContext } from "./host.ts";
import type { AbortSignalLike } from "../options.ts";

export type { TaskContext } from "./host.ts";

/**
 * The task running synchronously on this thread now: its worker, its id and its signal. Call it in the
 * task's synchronous part (before its first `await`) and keep the result: after an `await` the worker may
 * be running another task, or none.
 *
 * @typeParam P The type of the task's progress values (see {@link TaskContext.progress}).
 * @returns The task's context; undefined outside a pool task (the main thread, or between tasks): so
 * `currentTask()?.progress(value)` is a no-op there, and the same task code runs outside a pool.
 *
 * @example Usage
 * ```ts
 * import { currentTask } from "@filch/filch";
 * export function count(n: number): number {
 *   const signal = currentTask()?.signal;
 *   let i = 0;
 *   for (; i < n; i++) if (i % 1_000 === 0) signal?.throwIfAborted();
 *   return i;
 * }
 * console.log(count(10)); // 10 (outside a pool: no context, nothing to abort)
 * ```
 */
export function currentTask<P = unknown>(): TaskContext<P> | undefined {
  return currentHost()?.context() as TaskContext<P> | undefined;
}

const nativeAborted = Object.getOwnPropertyDescriptor(AbortSignal.prototype, "aborted")!.get!;
const nativeReason = Object.getOwnPropertyDescriptor(AbortSignal.prototype, "reason")!.get!;
const nativeThrowIfAborted = AbortSignal.prototype.throwIfAborted;

/**
 * A signal that checks before it answers: `aborted`, `reason` and `throwIfAborted()` first call
 * {@link PollingSignal.check}, which asks `poll` and aborts the signal with the reason it returns.
 *
 * @param poll Returns why the task was aborted, or undefined while it is not.
 * @returns The signal and its check (call `check` when the worker learns of an abort by message).
 *
 * @example Usage
 * ```ts
 * import { pollingSignal } from "./task_context.ts";
 * let reason: unknown;
 * const { signal } = pollingSignal(() => reason);
 * console.log(signal.aborted); // false
 * reason = new DOMException("stop", "AbortError");
 * console.log(signal.aborted); // true
 * ```
 */
export function pollingSignal(poll: () => unknown): PollingSignal {
  const controller = new AbortController();
  const signal = controller.signal;
  let checking = false;
  const check = () => {
    // Re-entered from abort() itself on runtimes whose abort reads the signal's public `aborted`.
    if (checking || nativeAborted.call(signal)) return;
    checking = true;
    try {
      const reason = poll();
      if (reason !== undefined) controller.abort(reason);
    } finally {
      checking = false;
    }
  };
  // Own properties over the prototype's accessors: a synchronous task that polls `aborted` sees the abort
  // although its worker never reads the message that reports it.
  Object.defineProperties(signal, {
    aborted: { get: () => (check(), nativeAborted.call(signal)), configurable: true },
    reason: { get: () => (check(), nativeReason.call(signal)), configurable: true },
    throwIfAborted: { value: () => (check(), nativeThrowIfAborted.call(signal)), configurable: true },
  });
  return { signal, check };
}

/** What {@link pollingSignal} returns. */
export interface PollingSignal {
  /** The signal. */
  readonly signal: AbortSignalLike;
  /** Asks the poll now, and aborts the signal if it says so (its listeners run). */
  check(): void;
}
