/**
 * SharedArrayBuffers passed by reference: each thread's registry of the buffers it can name by id.
 *
 * What it owns: the id ↔ buffer maps of one thread. The codec writes a SharedArrayBuffer (or a view on
 * one) as an id; the thread that first shares a buffer takes a new id from the pool's shared counter word
 * (`ControlWords.nextBufferId`, so ids are unique across threads) and announces the buffer by message, the
 * one way a SharedArrayBuffer can reach another thread. The main thread forwards a worker's announcement
 * to every other worker. A thread decoding an id it has not received yet gets a {@link MissingBuffer},
 * and waits for the message (or, inside a join, hands the task to another worker).
 *
 * Threads: one registry per thread, used by that thread only.
 *
 * @module
 */

import { mem } from "../protocol/atomics.ts";

/** Thrown by {@link BufferRegistry.resolve} for an id whose buffer has not arrived on this thread yet. */
export class MissingBuffer {
  /** The id asked for. */
  readonly id: number;
  /** @param id The id asked for. */
  constructor(id: number) {
    this.id = id;
  }
}

/**
 * One thread's buffers, by id and by identity.
 *
 * @example Usage
 * ```ts
 * import { BufferRegistry } from "./buffers.ts";
 * const control = new Int32Array(new SharedArrayBuffer(4));
 * const registry = new BufferRegistry(control, 0, () => {});
 * const sab = new SharedArrayBuffer(8);
 * const id = registry.share(sab);
 * console.log(registry.resolve(id) === sab); // true
 * ```
 */
export class BufferRegistry {
  private readonly byId = new Map<number, SharedArrayBuffer>();
  private readonly ids = new Map<SharedArrayBuffer, number>();
  private readonly counter: Int32Array;
  private readonly counterAt: number;
  private readonly announce: (id: number, buffer: SharedArrayBuffer) => void;

  /**
   * @param counter The view holding the shared id counter.
   * @param counterAt The counter's index in it.
   * @param announce Sends a newly shared buffer to the other threads.
   */
  constructor(counter: Int32Array, counterAt: number, announce: (id: number, buffer: SharedArrayBuffer) => void) {
    this.counter = counter;
    this.counterAt = counterAt;
    this.announce = announce;
  }

  /** The id of `buffer`, registering and announcing it the first time (the codec's `shareBuffer`). */
  share = (buffer: SharedArrayBuffer): number => {
    const known = this.ids.get(buffer);
    if (known !== undefined) return known;
    const id = mem.add(this.counter, this.counterAt, 1);
    // Announced, then recorded: a throw between the two (a stack overflow at a call, in a deep join)
    // leaves it unrecorded, and the next share announces it again under a new id. Recorded first, it
    // could stay recorded and never announced: every thread that needs it would wait for it forever.
    this.announce(id, buffer);
    this.add(id, buffer);
    return id;
  };

  /** The buffer of `id` (the codec's `resolveBuffer`); throws {@link MissingBuffer} if it has not arrived. */
  resolve = (id: number): SharedArrayBuffer => {
    const buffer = this.byId.get(id);
    if (buffer === undefined) throw new MissingBuffer(id);
    return buffer;
  };

  /** Records a buffer another thread announced. */
  add(id: number, buffer: SharedArrayBuffer): void {
    this.byId.set(id, buffer);
    this.ids.set(buffer, id);
  }

  /** Every buffer known here, for a thread that starts later. */
  entries(): [number, SharedArrayBuffer][] {
    return [...this.byId.entries()];
  }
}
