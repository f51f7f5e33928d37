/**
 * The owner as a producer in another thread sees it: an {@link OwnerPort} over a MessagePort to the owner,
 * and the messages that travel on it. Its other end is the owner's `ProducerLinks` (lib/owner/links.ts).
 *
 * What travels here, and only this (tasks, results and completions go through shared memory):
 * - producer to owner: a message to a worker (a cancellation note), a
 *   SharedArrayBuffer passed by reference in arguments (the owner shares it with every worker), a forced
 *   kill, and `closed`;
 * - owner to producer: a SharedArrayBuffer a worker passed by reference (a result may name it), a
 *   result payload that came by message (it found no free blocks), `released` (the answer to
 *   `closed`: the slot was given back), and `no-workers` (the pool has no worker live or starting: its
 *   waiting tasks reject, as the owner's do; see {@link NoWorkersNote}).
 * The lifecycle is read from shared memory (`ControlWords.poolState`, written by the owner alone), not
 * asked: a state the owner moved on from is never reported as current for longer than a load takes.
 *
 * Threads: the producer's (one link per producer).
 *
 * @module
 */

import { mem } from "../protocol/atomics.ts";
import { ModuleLoadError } from "../errors.ts";
import { ControlWords } from "../protocol/layout.ts";
import type { PoolStateName } from "../lifecycle.ts";
import type { OwnerPort, WorkerMessage } from "./owner_port.ts";
import type { LinkPort } from "../runtime/port.ts";

/** A message from a producer in another thread to the owner. */
export type ToOwner =
  | { type: "post"; worker: number; message: WorkerMessage }
  | { type: "share"; id: number; buffer: SharedArrayBuffer }
  | { type: "kill"; worker: number; handle: number; reason: string }
  | { type: "closed" }
  /** An elastic pool: its submission found nobody asleep and set `ControlWords.growWanted` (growth.ts). */
  | { type: "grow" }
  /** It holds its handle's lifeline lock (runtime/lifeline.ts): the owner may watch it now. */
  | { type: "holding" };

/** A message from the owner to a producer in another thread. */
export type ToProducer =
  | { type: "buffer"; id: number; buffer: SharedArrayBuffer }
  | { type: "released" }
  | NoWorkersNote
  | { type: "payload"; handle: number; bytes: Uint8Array; moved: ArrayBuffer[] | undefined };

/**
 * The owner's word that the pool has no worker live or starting (owner.ts `noWorkersLeft`): the producer's
 * tasks that no worker can run reject with a `WorkerCrashedError` ("Cannot run task '<task>' as <what>"),
 * as the owner's own do (producer.ts `rejectForNoWorkers`). Sent to every open link when it happens and, if
 * `permanent` (a fixed pool: nothing starts a worker again, so later submissions are refused too), to every
 * link opened later. The cause travels as its name, message and module URL (a message carries no class).
 */
export interface NoWorkersNote {
  type: "no-workers";
  /** Why no task can run (the end of each task's message). */
  what: string;
  /** The worker index whose start failed last (the error's `worker`). */
  worker: number;
  /** That start's error (a `ModuleLoadError`, whose `url` it keeps). */
  cause: { name: string; message: string; url?: string };
  /** Whether later submissions are refused too (a fixed pool). */
  permanent: boolean;
}

/**
 * The cause a {@link NoWorkersNote} carries, as an error again: a `ModuleLoadError` if it was one.
 *
 * @param note The note.
 * @returns The error.
 *
 * @example Usage
 * ```ts
 * import { noWorkersCause } from "./owner_link.ts";
 * const cause = { name: "ModuleLoadError", message: "boom", url: "file:///app/tasks.ts" };
 * const error = noWorkersCause({ type: "no-workers", what: "no worker", worker: 0, cause, permanent: true });
 * console.log(error.name, error.message); // ModuleLoadError boom
 * ```
 */
export function noWorkersCause(note: NoWorkersNote): Error {
  const { name, message, url } = note.cause;
  const error = url === undefined ? new Error(message) : new ModuleLoadError(url, "");
  error.message = message;
  error.name = name;
  return error;
}

/** The lifecycle names by their code in `ControlWords.poolState`. */
const STATE_NAMES: readonly PoolStateName[] = ["open", "closing", "closed", "terminated"];

/**
 * The producer's end of its link to the owner.
 *
 * @example Usage
 * ```ts ignore
 * const link = new OwnerLink(port, control);
 * const producer = new Producer({ memory, port: link, options, slot });
 * ```
 */
export class OwnerLink implements OwnerPort {
  private readonly port: LinkPort;
  private readonly control: Int32Array;

  /**
   * @param port This producer's end of the channel whose other end the owner listens to.
   * @param control The pool's control words (its lifecycle word).
   */
  constructor(port: LinkPort, control: Int32Array) {
    this.port = port;
    this.control = control;
  }

  /** The pool's lifecycle state, from its word in shared memory. */
  state(): PoolStateName {
    return STATE_NAMES[mem.load(this.control, ControlWords.poolState)] ?? "terminated";
  }

  /** A cancellation note for a worker: through the owner, which holds the workers. */
  post(worker: number, message: WorkerMessage): void {
    this.send({ type: "post", worker, message });
  }

  /** A SharedArrayBuffer in arguments: the owner shares it with every worker. */
  shareBuffer(id: number, buffer: SharedArrayBuffer): void {
    this.send({ type: "share", id, buffer });
  }

  /** A forced abort (`force: true`): the owner kills the worker once it is outside the pool's steps. */
  kill(worker: number, handle: number, cause: Error): void {
    this.send({ type: "kill", worker, handle, reason: cause.message });
  }

  /** Never called: a producer in another thread refuses tasks that move buffers (so none is directed). */
  pickWorker(): number {
    return 0;
  }

  /**
   * Sends `message` to the owner. After the owner's end closed (the pool stopped), a message has nobody to
   * act on it: dropped, as the act it asks for (a note to a stopped worker) would be.
   */
  send(message: ToOwner): void {
    this.port.send(message);
  }

  /** Closes the link (the producer closed). */
  close(): void {
    this.port.close();
  }
}
