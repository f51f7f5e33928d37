/**
 * Pool handles asked for from inside a pool task (`poolHandle()`): the worker's side of the request to the
 * owner, who alone claims producer slots and makes the handle's MessageChannel (owner/owner.ts `handle`).
 *
 * What it owns: the requests on their way, by id, and their promises. A request posts
 * `{ type: "handle-request", id }` to the owner; the owner answers `{ type: "handle-reply", id, handle }`
 * with the handle's port transferred, or `{ type: "handle-reply", id, error }` with the name and message of
 * the error `pool.handle()` threw (every slot taken, the pool not open), which the promise rejects with.
 *
 * Invariants: each request settles once, by its reply (the owner answers every request, with an error once
 * the pool is not open); while any is on its way, the thread's event loop is held (runtime/holds.ts), so
 * that the worker loop lets the reply in even if the task that asked returned, and does not end first.
 *
 * Threads: its worker's thread.
 *
 * @module
 */

import { PoolClosedError, PoolTerminatedError } from "../errors.ts";
import { holdEventLoop, releaseEventLoop } from "../runtime/holds.ts";

/** The owner's answer to a handle request. */
export interface HandleReply {
  readonly type: "handle-reply";
  readonly id: number;
  /** The handle, its port transferred with the message. */
  readonly handle?: unknown;
  /** What `pool.handle()` threw in the owner's thread. */
  readonly error?: { readonly name: string; readonly message: string };
}

/**
 * A worker's requests for pool handles.
 *
 * @example Usage
 * ```ts ignore
 * const handles = new HandleRequests((message) => port.post(message));
 * const handle = await handles.request(); // the owner answers; boot.ts passes the reply to reply()
 * ```
 */
export class HandleRequests {
  private readonly post: (message: unknown) => void;
  private readonly waiting = new Map<number, { resolve: (handle: unknown) => void; reject: (e: Error) => void }>();
  private nextId = 0;

  /** @param post Sends a message to the owner. */
  constructor(post: (message: unknown) => void) {
    this.post = post;
  }

  /**
   * Asks the owner for a handle of this worker's pool.
   *
   * @returns The handle, or a rejection with the owner's error.
   */
  request(): Promise<unknown> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      holdEventLoop();
      this.post({ type: "handle-request", id });
    });
  }

  /**
   * The owner's reply (from the worker's message handler).
   *
   * @param reply The reply.
   */
  reply(reply: HandleReply): void {
    const request = this.waiting.get(reply.id);
    if (request === undefined) return;
    this.waiting.delete(reply.id);
    releaseEventLoop();
    if (reply.error === undefined) request.resolve(reply.handle);
    else request.reject(ownerError(reply.error));
  }
}

/** The owner's error, rebuilt here with its name (RangeError, TypeError and the pool's state errors as themselves). */
function ownerError(error: { name: string; message: string }): Error {
  const made = error.name === "RangeError"
    ? new RangeError(error.message)
    : error.name === "TypeError"
    ? new TypeError(error.message)
    : error.name === "PoolTerminatedError"
    ? new PoolTerminatedError(error.message)
    : error.name === "PoolClosedError"
    ? new PoolClosedError(error.message)
    : new Error(error.message);
  if (made.name !== error.name) made.name = error.name;
  return made;
}
