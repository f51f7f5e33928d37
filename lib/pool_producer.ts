/**
 * A producer in another thread: the submitting side of a pool, opened from a {@link PoolHandle} in any
 * thread (another Worker on Deno, Bun, Node or in a browser). The public face of `lib/producer/`, as
 * `Pool` is of the owner and its own producer.
 *
 * What it owns: the producer's lifetime in this thread: its slot (protocol/producers.ts), claimed by the
 * owner for its handle and given back by the owner when this producer says it closed, once every task it
 * submitted settled and every record it held came back; its link to the owner
 * (lib/producer/owner_link.ts); and the messages that come on it (shared buffers, payloads by message).
 *
 * The division of labour with the owner (the thread that created the pool): the owner starts, watches,
 * repairs and replaces the workers and closes or terminates the pool; a producer submits, reads its own
 * completions through shared memory and settles its own promises in this thread. When the pool closes,
 * this producer's new submissions reject with `PoolClosedError` and its submitted tasks still run and
 * settle; when it terminates, its unsettled tasks reject with `PoolTerminatedError`.
 *
 * Threads: the thread that opened it. (A producer cannot be posted on: open one handle per thread.)
 *
 * @module
 */

import { holdLifeline } from "./runtime/lifeline.ts";
import { mem } from "./protocol/atomics.ts";
import { ControlWords } from "./protocol/layout.ts";
import { type CheckedHandle, checkHandle, type PoolHandle } from "./producer/handle.ts";
import { OwnerLink, type PortLike, type ToProducer } from "./producer/owner_link.ts";
import { Producer } from "./producer/producer.ts";
import { PoolClosedError } from "./errors.ts";
import type { MapInputs, MapOptions } from "./producer/map.ts";
import { type BatchOptions, type PoolOptions, resolveOptions, type RunOptions } from "./options.ts";
import type { PoolStateName } from "./lifecycle.ts";
import type { AnyFunction, TaskArgs, TaskName, TaskResult, TaskRunner, UnaryTaskName } from "./pool.ts";

/** The options of {@link openProducer}: how this thread's side handles what comes back. */
export type ProducerOptions = Pick<PoolOptions, "onError" | "errorClasses">;

/** What {@link PoolProducer.stats} returns: this producer's own counts. */
export interface ProducerStats {
  /** Tasks submitted here since it opened. */
  submitted: number;
  /** Tasks settled. */
  completed: number;
  /** Submitted here and not yet settled. */
  pending: number;
  /** Its producer slot (1 to the pool's `producers`). */
  slot: number;
}

/** Ports already opened as producers in this thread (a handle opens one producer). */
const opened = new WeakSet<object>();

/**
 * Opens a producer on the pool that made `handle`, in this thread.
 *
 * @param handle A pool handle (`pool.handle()`, posted here with `handle.transfer`).
 * @param options `onError` (errors of this producer's spawned tasks) and `errorClasses`.
 * @returns The producer.
 * @throws {TypeError} If `handle` is not a pool handle of this version or was opened already, or an option is wrong.
 * @throws {PoolClosedError} If the pool is closing, closed or terminated.
 *
 * @example Usage
 * ```ts ignore
 * // in a Worker: the handle came in a message, posted with pool.handle().transfer
 * import { openProducer } from "filch";
 * import type * as tasks from "./tasks.ts";
 * self.onmessage = async (event) => {
 *   await using producer = openProducer<typeof tasks>(event.data);
 *   console.log(await producer.run("add", 1, 2)); // 3
 * };
 * ```
 */
export function openProducer<M extends object = Record<string, AnyFunction>>(
  handle: PoolHandle<M>,
  options: ProducerOptions = {},
): PoolProducer<M> {
  const checked = checkHandle<M>(handle);
  if (opened.has(checked.port)) {
    throw new TypeError(
      "Cannot open producer as this handle was opened already: make one handle per producer (pool.handle())",
    );
  }
  if (options === null || typeof options !== "object") {
    throw new TypeError(`Cannot open producer as 'options' must be an object: received ${typeof options}`);
  }
  for (const key of Object.keys(options)) {
    if (key !== "onError" && key !== "errorClasses") {
      throw new TypeError(
        `Cannot open producer as '${key}' is not an option of openProducer: its options are 'onError', 'errorClasses'`,
      );
    }
  }
  // The pool's own checks of these two options (the shape given is the pool's, already valid).
  const resolved = resolveOptions({ onError: options.onError, errorClasses: options.errorClasses, workers: 1 });
  const { buffer, layout } = checked;
  const control = new Int32Array(buffer, layout.control, 3 * 16);
  if (mem.load(control, ControlWords.poolState) !== 0) {
    throw new PoolClosedError("Cannot open producer as the pool is not open: open one on an open pool");
  }
  opened.add(checked.port);
  return new PoolProducer<M>(checked, checked.slot, resolved.onError, resolved.errorClasses);
}

/**
 * The submitting side of a pool, in a thread other than the one that created it: `run`, `spawn`,
 * `runMany`, `map`, `with`, `waitForRoom`, `drain` and `close`, as the pool's own (see `Pool`). Made by
 * {@link openProducer}.
 *
 * @example Usage
 * ```ts ignore
 * await using producer = openProducer<typeof tasks>(handle);
 * const sums = await producer.runMany("add", [[1, 2], [3, 4]]); // [3, 7]
 * ```
 */
export class PoolProducer<M extends object = Record<string, AnyFunction>> implements AsyncDisposable {
  private readonly producer: Producer;
  private readonly link: OwnerLink;
  private readonly handle: CheckedHandle<M>;
  /** Its slot (protocol/producers.ts). */
  private readonly slot: number;
  private closing: Promise<void> | undefined;
  /** Its end of the link (ref'd while `close` waits for the owner's answer). */
  private readonly port: { ref?: () => void };

  /** @internal Use {@link openProducer}. */
  constructor(
    handle: CheckedHandle<M>,
    slot: number,
    onError: PoolOptions["onError"],
    errorClasses: ReturnType<typeof resolveOptions>["errorClasses"],
  ) {
    this.handle = handle;
    this.slot = slot;
    const { buffer, arena, layout } = handle;
    const control = new Int32Array(buffer, layout.control, 3 * 16);
    const port = handle.port as unknown as PortLike & {
      onmessage: ((event: { data: unknown }) => void) | null;
      unref?: () => void;
      ref?: () => void;
    };
    this.port = port;
    this.link = new OwnerLink(port, control);
    this.producer = new Producer(
      { buffer, layout, arena, metrics: undefined },
      this.link,
      { onError, errorClasses, maxPending: handle.maxPending },
      slot,
    );
    this.producer.setTasks(handle.tasks);
    port.onmessage = (event) => this.received(event.data as ToProducer);
    // The link closes when the owner answered `closed`, or when the pool stopped (the owner closes every
    // link then); either way nobody will answer any more.
    const ended = () => this.linkEnded();
    const events = port as unknown as {
      addEventListener?: (type: string, listener: () => void) => void;
      on?: (type: string, listener: () => void) => void;
    };
    if (typeof events.addEventListener === "function") events.addEventListener("close", ended);
    else events.on?.("close", ended);
    // The link does not keep this thread alive: pending tasks do (the ledger's timer).
    port.unref?.();
    // Where the runtime does not tell the owner when this thread ends (browsers), a held lock does.
    if (typeof handle.lifeline === "string") {
      this.releaseLifeline = holdLifeline(handle.lifeline, () => this.link.send({ type: "holding" }));
    }
  }

  /** Lets go of the handle's lifeline lock (runtime/lifeline.ts), once the link ended. */
  private releaseLifeline: () => void = () => {};

  /** A message from the owner: a shared buffer, a payload that came by message, or the slot's release. */
  private received(message: ToProducer): void {
    if (message.type === "buffer") this.producer.bufferArrived(message.id, message.buffer);
    else if (message.type === "payload") this.producer.payloadArrived(message.handle, message.bytes, message.moved);
    else if (message.type === "released") this.linkEnded();
  }

  /** Whether the link ended (the slot was released, or the pool stopped), and who waits for that. */
  private ended = false;
  private endWaiters: (() => void)[] = [];

  /** The link ended: whoever waits for it goes on. */
  private linkEnded(): void {
    this.ended = true;
    this.releaseLifeline();
    for (const resolve of this.endWaiters.splice(0)) resolve();
  }

  /** Resolves once the link ended (at once if it has, or if the pool stopped: nobody would answer). */
  private linkEnd(): Promise<void> {
    const state = this.link.state();
    if (this.ended || state === "closed" || state === "terminated") return Promise.resolve();
    return new Promise((resolve) => this.endWaiters.push(resolve));
  }

  /** A refusal if this producer was closed, else undefined. */
  private refusal(task: string): PoolClosedError | undefined {
    if (this.closing === undefined) return undefined;
    return new PoolClosedError(
      `Cannot run task '${task}' as this producer was closed: open another from a new pool.handle()`,
    );
  }

  /**
   * Runs `task` with `args` on some worker (as `Pool.run`).
   *
   * @param task The task's name.
   * @param args Its arguments.
   * @returns Its result.
   *
   * @example Usage
   * ```ts ignore
   * console.log(await producer.run("add", 1, 2)); // 3
   * ```
   */
  run<K extends TaskName<M>>(task: K, ...args: TaskArgs<M, K>): Promise<TaskResult<M, K>> {
    const refused = this.refusal(task);
    if (refused !== undefined) return Promise.reject(refused);
    return this.producer.run(task, args) as Promise<TaskResult<M, K>>;
  }

  /**
   * Runs `task` with `args`, its error reported to `onError` (as `Pool.spawn`).
   *
   * @param task The task's name.
   * @param args Its arguments.
   *
   * @example Usage
   * ```ts ignore
   * producer.spawn("log", "hello");
   * ```
   */
  spawn<K extends TaskName<M>>(task: K, ...args: TaskArgs<M, K>): void {
    const refused = this.refusal(task);
    if (refused !== undefined) {
      this.producer.ledger.report(refused, task);
      return;
    }
    this.producer.spawn(task, args);
  }

  /**
   * Runs `task` once for each argument list (as `Pool.runMany`).
   *
   * @param task The task's name.
   * @param argsList The arguments of each task.
   * @param options `priority`.
   * @returns The results, in order.
   *
   * @example Usage
   * ```ts ignore
   * console.log(await producer.runMany("add", [[1, 2], [3, 4]])); // [3, 7]
   * ```
   */
  runMany<K extends TaskName<M>>(
    task: K,
    argsList: readonly TaskArgs<M, K>[],
    options?: BatchOptions,
  ): Promise<TaskResult<M, K>[]> {
    const refused = this.refusal(task);
    if (refused !== undefined) return Promise.reject(refused);
    return this.producer.runMany(task, argsList, options) as Promise<TaskResult<M, K>[]>;
  }

  /**
   * A runner whose tasks have `options`: a signal, a timeout, a queue timeout, a priority (as `Pool.with`).
   *
   * @param options The tasks' options.
   * @returns The runner.
   *
   * @example Usage
   * ```ts ignore
   * await producer.with({ timeout: 1_000, priority: "high" }).run("add", 1, 2); // 3
   * ```
   */
  with(options: RunOptions): TaskRunner<M> {
    const runner = this.producer.with(options);
    return {
      run: (task: string, ...args: unknown[]) => {
        const refused = this.refusal(task);
        return refused !== undefined ? Promise.reject(refused) : runner.run(task, ...args);
      },
      spawn: (task: string, ...args: unknown[]) => {
        const refused = this.refusal(task);
        if (refused !== undefined) this.producer.ledger.report(refused, task);
        else runner.spawn(task, ...args);
      },
    } as unknown as TaskRunner<M>;
  }

  /**
   * Runs `task` once for each input, at most `concurrency` at once (as `Pool.map`).
   *
   * @param task The name of a task of one argument.
   * @param inputs The arguments.
   * @param options `concurrency`, `ordered`, `signal`, `priority`.
   * @returns The results, as an async iterable.
   *
   * @example Usage
   * ```ts ignore
   * for await (const square of producer.map("square", [1, 2, 3])) console.log(square); // 1, 4, 9
   * ```
   */
  map<K extends UnaryTaskName<M>>(
    task: K,
    inputs: MapInputs<TaskArgs<M, K>[0]>,
    options: MapOptions = {},
  ): AsyncGenerator<TaskResult<M, K>, void, undefined> {
    const refused = this.refusal(task);
    if (refused !== undefined) throw refused;
    return this.producer.map<TaskArgs<M, K>[0], TaskResult<M, K>>(task, inputs, options);
  }

  /**
   * Resolves when another task can be taken without `QueueFullError` (the pool's `maxQueue`: a bound on the
   * tasks pending in the whole pool, whichever thread submitted them).
   *
   * @returns A promise that never rejects.
   *
   * @example Usage
   * ```ts ignore
   * await producer.waitForRoom();
   * ```
   */
  waitForRoom(): Promise<void> {
    return this.producer.waitForRoom();
  }

  /**
   * Resolves when every task this producer submitted before the call has settled.
   *
   * @returns A promise that never rejects.
   *
   * @example Usage
   * ```ts ignore
   * producer.spawn("log", "hello");
   * await producer.drain();
   * ```
   */
  drain(): Promise<void> {
    return this.producer.drain();
  }

  /**
   * Closes this producer (not the pool): new submissions reject with `PoolClosedError`, every task it
   * submitted settles and every record it held comes back (a task that timed out or was aborted while it
   * ran sends its completion when it ends: close waits for it), then the owner gives its slot back.
   *
   * @returns A promise that resolves once it is closed (never rejects).
   *
   * @example Usage
   * ```ts ignore
   * await producer.close();
   * ```
   */
  close(): Promise<void> {
    if (this.closing !== undefined) return this.closing;
    this.closing = (async () => {
      await this.producer.drain();
      // Every task settled; then every record is back (a task that settled while it ran, by a timeout or
      // an abort, sends its completion when it ends), and the private cache of free records goes back to
      // the shared list.
      await this.producer.recordsBack();
      this.producer.table.flushCache();
      this.producer.stopReading();
      this.producer.dispose();
      // The owner gives the slot back and says so (then the link closes at both ends).
      // Waited for with the link ref'd: else a thread with nothing else to do would exit before the answer.
      this.port.ref?.();
      this.link.send({ type: "closed" }); // spec: ProducerSendClosed
      await this.linkEnd();
      this.link.close();
    })();
    return this.closing;
  }

  /** Closes it (`await using`). */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  /**
   * This producer's counts.
   *
   * @returns A snapshot.
   *
   * @example Usage
   * ```ts ignore
   * console.log(producer.stats().pending); // 0
   * ```
   */
  stats(): ProducerStats {
    const { submitted, completed, pending } = this.producer.ledger;
    return { submitted, completed, pending, slot: this.slot };
  }

  /** The pool's lifecycle state, as its owner last wrote it. */
  get lifecycle(): PoolStateName {
    return this.link.state();
  }

  /** The task names the module exports, sorted. */
  get tasks(): readonly string[] {
    return this.producer.taskNames;
  }
}
