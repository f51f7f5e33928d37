/**
 * A pool handle: what a thread other than the pool's owner needs to open a producer on the pool, as one
 * structured-clonable object (the pool's SharedArrayBuffers, its layout, its task names, and the end of a
 * MessageChannel to its owner, which must be transferred).
 *
 * What it owns: the handle's shape and its check ({@link checkHandle}), which names what is wrong with a
 * value that is not a handle of this version of filch (a handle posted without its port in the transfer
 * list, one used twice, one made by another copy of filch).
 *
 * Threads: made on the owner's thread (`Pool.handle`), opened on any (`openProducer`).
 *
 * @module
 */

import type { PoolLayout } from "../protocol/layout.ts";

/** The `kind` of every handle, so that a wrong value is told apart from a handle. */
export const HANDLE_KIND = "filch.pool-handle";

/**
 * The version of the shared-memory layout and link messages a handle speaks: a producer of another
 * version (a second copy of filch in the other thread) would read the buffer wrong, so it refuses.
 */
export const HANDLE_VERSION = 1;

/** A handle as the library reads it: its layout typed (the public type keeps it opaque). */
export type CheckedHandle<M extends object> = PoolHandle<M> & { readonly layout: PoolLayout };

/**
 * A pool handle (see `Pool.handle`): post it to another thread with its `port` in the transfer list, and
 * open a producer there with `openProducer`. One handle opens one producer.
 *
 * @typeParam M The task module's type (`typeof import("./tasks.ts")`), carried for `openProducer`'s types.
 */
export interface PoolHandle<M extends object = Record<string, (...args: never[]) => unknown>> {
  /** Always `"filch.pool-handle"`. */
  readonly kind: "filch.pool-handle";
  /** The layout version ({@link HANDLE_VERSION}). */
  readonly version: number;
  /** The pool's shared buffer. */
  readonly buffer: SharedArrayBuffer;
  /** The arena of large payloads, if the pool has one. */
  readonly arena: SharedArrayBuffer | undefined;
  /** Where everything lives in the buffer (read by filch only). */
  readonly layout: object;
  /** The task module's exported function names, sorted. */
  readonly tasks: readonly string[];
  /** The producer slot the owner claimed for this handle (1 to the pool's `producers`). */
  readonly slot: number;
  /** The most tasks pending in the whole pool (`workers + maxQueue`), or Infinity. */
  readonly maxPending: number;
  /**
   * Where the runtime does not report a link's end (browsers): the name of the Web Lock the producer holds
   * while it is open, by which the owner learns of its thread's death (runtime/lifeline.ts); else absent.
   */
  readonly lifeline?: string;
  /**
   * `true` for an elastic pool (`workers: { min, max }`): the producer asks the owner for a worker when
   * its submission finds nobody asleep (owner/growth.ts); else absent.
   */
  readonly elastic?: true;
  /**
   * This handle's end of its channel to the pool's owner (a MessagePort): put it in the transfer list.
   * Typed by what filch uses of it, so that a consumer needs neither the DOM library nor @types/node.
   */
  readonly port: { postMessage(message: unknown, transfer?: readonly unknown[]): void; close(): void };
  /**
   * The transfer list to post the handle with: `[handle.port]`. Typed loosely on purpose, so that it fits
   * the web's `postMessage` and node:worker_threads' `transferList` alike (their MessagePort types differ).
   */
  // deno-lint-ignore no-explicit-any
  readonly transfer: readonly any[];
  /** Never set: carries the module's type. */
  readonly module?: M;
}

/**
 * Checks that `value` is a pool handle of this version, naming what is wrong if not.
 *
 * @param value What the caller passed to `openProducer`.
 * @returns The handle.
 * @throws {TypeError} If it is not a handle, is another version's, or came without its port or slot.
 */
export function checkHandle<M extends object>(value: unknown): CheckedHandle<M> {
  const handle = value as Partial<PoolHandle<M>> | null;
  if (handle === null || typeof handle !== "object" || handle.kind !== HANDLE_KIND) {
    throw new TypeError(
      `Cannot open producer as 'handle' must be a pool handle (from pool.handle()): received ${
        handle === null ? "null" : typeof handle
      }`,
    );
  }
  if (handle.version !== HANDLE_VERSION) {
    throw new TypeError(
      `Cannot open producer as the handle is of version ${handle.version} and this copy of filch speaks version ${HANDLE_VERSION}: import filch from the same package in both threads`,
    );
  }
  if (typeof SharedArrayBuffer === "undefined" || !(handle.buffer instanceof SharedArrayBuffer)) {
    throw new TypeError(
      "Cannot open producer as the handle's buffer is not a SharedArrayBuffer here: post the handle itself (a copy made by JSON loses it)",
    );
  }
  const port = handle.port as unknown;
  if (
    port === null || typeof port !== "object" || typeof (port as { postMessage?: unknown }).postMessage !== "function"
  ) {
    throw new TypeError(
      "Cannot open producer as the handle has no port: post it with its port in the transfer list (worker.postMessage(handle, handle.transfer))",
    );
  }
  const layout = handle.layout as PoolLayout | undefined;
  const producers = layout?.shape?.producers ?? 0;
  if (!Number.isInteger(handle.slot) || (handle.slot as number) < 1 || (handle.slot as number) > producers) {
    throw new TypeError(`Cannot open producer as the handle's slot is not one of the pool's: received ${handle.slot}`);
  }
  return handle as CheckedHandle<M>;
}
