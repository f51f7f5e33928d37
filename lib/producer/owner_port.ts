/**
 * What a producer asks of the pool's owner: the few acts that need the Worker objects, which only the
 * owner (the thread that started the workers) holds.
 *
 * A producer places tasks, reads its completions and settles them through shared memory alone; but a
 * message to a worker, a thread's termination and the lifecycle are the owner's. This interface is the
 * whole of that dependency: {@link Producer} is written against it and imports nothing of `lib/owner/`.
 * The pool's own producer, on the owner's thread, is given the owner itself (`lib/owner/owner.ts`); a
 * producer in another thread would be given one that forwards these calls to the owner by message.
 *
 * What is not here, and why: whether a worker is dead (only {@link OwnerPort.pickWorker} needs it, and
 * the owner answers that itself); broadcast (a message to every worker whose results come back by message
 * to the owner: the owner's, see `lib/owner/broadcast.ts`); starting, replacing, closing (the owner's).
 * Two things travel the other way, from the owner to the producer, because they reach the owner's thread
 * by message: a SharedArrayBuffer a worker passes by reference, and a result payload that came by message
 * (`Producer.bufferArrived`, `Producer.payloadArrived`).
 *
 * Threads: the producer's (calls go from the producer to its owner).
 *
 * @module
 */

import type { PoolStateName } from "../lifecycle.ts";

/** What a message to a worker carries: cancellation notes and directed tasks (see the worker's loop). */
export type WorkerMessage = unknown;

/**
 * The owner's side as a producer sees it. None of these runs user code, and none is called while the
 * producer is being built.
 *
 * @example Usage
 * ```ts ignore
 * const producer = new Producer({ memory, port: owner, options }); // owner: an OwnerPort
 * ```
 */
export interface OwnerPort {
  /** The pool's lifecycle state now: a producer admits tasks only while it is `open`. */
  state(): PoolStateName;
  /**
   * Posts `message` to worker `worker` (if it is alive), moving `transfer`: a cancellation, or a directed
   * task whose arguments move buffers.
   */
  post(worker: number, message: WorkerMessage, transfer?: ArrayBuffer[]): void;
  /** Shares SharedArrayBuffer `buffer`, registered as `id`, with every worker (and every later one). */
  shareBuffer(id: number, buffer: SharedArrayBuffer): void;
  /**
   * Terminates `worker` once it is outside the pool's own steps, unless task `handle` stops running there
   * first (a forced abort, `force: true`; spec/KillGuard.tla); its other tasks fail with `cause`.
   */
  kill(worker: number, handle: number, cause: Error): void;
  /** The worker a directed task goes to next: live ones in turn. */
  pickWorker(): number;
}
