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
import { PoolStateCode } from "./protocol/producers.ts";
import { PoolMemory } from "./protocol/memory.ts";
import { type CheckedHandle, checkHandle, type PoolHandle } from "./producer/handle.ts";
import { OwnerLink, type ToProducer } from "./producer/owner_link.ts";
import { LinkPort } from "./runtime/port.ts";
import { Producer } from "./producer/producer.ts";
import { PoolClosedError, PoolTerminatedError } from "./errors.ts";
import { type PoolOptions, resolveOptions } from "./options.ts";
import type { PoolStateName } from "./lifecycle.ts";
import { type AnyFunction, TaskSubmitter } from "./submitter.ts";
import { Slots } from "./protocol/slots.ts";

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
 * @throws {PoolClosedError} If the pool is closing or closed ({@link PoolTerminatedError} if it was terminated).
 *
 * @example Usage
 * ```ts ignore
 * // in a Worker: the handle came in a message, posted with pool.handle().transfer
 * import { openProducer } from "@filch/filch";
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
  // This thread's views of the pool's memory, opened once (protocol/memory.ts).
  const memory = new PoolMemory(checked.buffer, checked.layout, checked.arena);
  const state = mem.load(memory.control, ControlWords.poolState);
  if (state !== PoolStateCode.open) {
    throw state === PoolStateCode.terminated
      ? new PoolTerminatedError("Cannot open producer as the pool was terminated: open one on an open pool")
      : new PoolClosedError("Cannot open producer as the pool is not open: open one on an open pool");
  }
  opened.add(checked.port);
  return new PoolProducer<M>(checked, memory, resolved.onError, resolved.errorClasses);
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
export class PoolProducer<M extends object = Record<string, AnyFunction>> extends TaskSubmitter<M>
  implements AsyncDisposable {
  private readonly producer: Producer;
  private readonly link: OwnerLink;
  /** Its slot (protocol/producers.ts). */
  private readonly slot: number;
  private closing: Promise<void> | undefined;
  /** Its end of the link (ref'd while `close` waits for the owner's answer). */
  private readonly port: LinkPort;

  /** @internal Use {@link openProducer}. */
  constructor(
    handle: CheckedHandle<M>,
    memory: PoolMemory,
    onError: PoolOptions["onError"],
    errorClasses: ReturnType<typeof resolveOptions>["errorClasses"],
  ) {
    const slot = handle.slot;
    const port = new LinkPort(handle.port);
    const link = new OwnerLink(port, memory.control);
    if (handle.elastic === true) {
      // An elastic pool (issue 49): a submission of ours that found nobody asleep asks the owner, the only
      // thread that can start a worker, for one more (once per want: the owner clears the flag when it looks).
      const slots = new Slots(memory.control, memory.sleep.words, memory.status, memory.workers);
      memory.sleep.onNobodyWoken = () => {
        if (slots.wantWorker()) link.send({ type: "grow" });
      };
    }
    const producer = new Producer({
      memory,
      port: link,
      options: { onError, errorClasses, maxPending: handle.maxPending },
      slot,
    });
    super(producer);
    this.slot = slot;
    this.port = port;
    this.link = link;
    this.producer = producer;
    producer.setTasks(handle.tasks);
    // The link closes when the owner answered `closed`, or when the pool stopped (the owner closes every
    // link then); either way nobody will answer any more. It does not keep this thread alive: pending
    // tasks do (the ledger's timer).
    port.listen((data) => this.received(data as ToProducer), () => this.linkEnded());
    // Where the runtime does not tell the owner when this thread ends (browsers), a held lock does.
    if (typeof handle.lifeline === "string") {
      this.releaseLifeline = holdLifeline(handle.lifeline, () => this.link.send({ type: "holding" }));
    }
  }

  /** Lets go of the handle's lifeline lock (runtime/lifeline.ts), once the link ended. */
  private releaseLifeline: () => void = () => {};

  /** A message from the owner: a shared buffer, a payload that came by message, the slot's release, no workers. */
  private received(message: ToProducer): void {
    if (message.type === "buffer") this.producer.bufferArrived(message.id, message.buffer);
    else if (message.type === "payload") this.producer.payloadArrived(message.handle, message.bytes, message.moved);
    else if (message.type === "released") this.linkEnded();
    else if (message.type === "no-workers") this.producer.noWorkers(message);
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
    // From now on its admission refuses new submissions (PoolClosedError, as a pool not open does).
    this.producer.closeSubmissions();
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
      this.port.ref();
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
}
