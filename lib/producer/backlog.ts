/**
 * The submission backlog: the tasks submitted while no record (or no room for their arguments) was free,
 * in submission order, each with a copy of its encoded arguments, until the submitter places them.
 *
 * What it owns: the waiting entries, and one growable byte buffer that holds their encodings back to back,
 * as a queue of bytes (appended at the tail, released from the head as entries leave). A burst of tiny
 * tasks beyond the pool's records used to give each waiting task an ArrayBuffer of its own (a copy of a
 * few bytes): on V8 that allocation cost 0.1 to 1.5 µs a task, varying with the collector, in a submission
 * whose whole cost on the main thread is about 2 µs. Here a task's bytes cost a copy into a buffer that
 * is reused from burst to burst.
 *
 * Invariants:
 * - Entries leave in the order they came (submission order); only the oldest can leave.
 * - An entry's bytes are the `bytesLength` bytes at logical position `bytesAt` (see {@link Backlog.offsetOf}),
 *   copied when it was pushed: later changes to the caller's values do not reach them.
 * - Logical positions only grow while entries wait: `base <= start <= end`, where `base` is the logical
 *   position of the buffer's byte 0, `start` the oldest byte still needed, `end` the next free one. Moving
 *   the live bytes to the buffer's front (when it grows or compacts) changes `base`, never a position.
 * - A push is committed by its last steps, plain stores (the entry into its slot, then the count): cut short
 *   before them (a stack overflow), it leaves at most unreferenced bytes past the entries, reclaimed when
 *   the backlog empties.
 * - The entries are a ring (a power-of-two array, oldest at `head`): a slot is emptied as its entry leaves,
 *   so the backlog holds no entry that left it (an entry holds its promise's resolving functions). As an
 *   array emptied by `length = 0`, it held every placed entry until the last one left, and its backing
 *   store was given up and regrown by every burst (about 27 bytes of garbage a task on V8).
 * - Emptied, the backlog starts again at position 0 and keeps its buffer and its ring, however large: the
 *   next burst reuses them. A buffer grown past 1 MiB, or a ring past {@link RETAINED_ENTRIES} slots, is
 *   given back by {@link Backlog.trim}, which the submitter calls once the pool has been idle a while
 *   (submission.ts). Dropped at every emptying, a burst of 2 KiB arguments regrew the buffer to 64 MiB
 *   each time, in fresh pages (a page fault each on this VM, about 3 ms a MiB): Node, 2 KiB-argument
 *   bursts of 20,000 tasks, about 70k tasks/s against 140k kept.
 *
 * Threads: the thread that created the pool (the submitter's).
 *
 * @module
 */

import type { Encoder } from "../codec/codec.ts";
import type { Entry } from "./ledger.ts";

/** The buffer's first size, bytes. */
const INITIAL_BYTES = 64 * 1024;
/** {@link Backlog.trim} keeps a buffer up to this size, and replaces a larger one. */
const RETAINED_BYTES = 1 << 20;
/** The ring's first size, slots (a power of two). */
const INITIAL_ENTRIES = 1024;
/** {@link Backlog.trim} keeps a ring of up to this many slots (512 KiB of references), and replaces a larger one. */
const RETAINED_ENTRIES = 1 << 16;

/**
 * The tasks waiting for a record, oldest first, and their encoded arguments.
 *
 * @example Usage
 * ```ts ignore
 * backlog.push(entry, encoder); // no record was free
 * // …later, as records free up:
 * for (let entry = backlog.first(); entry !== undefined; entry = backlog.first()) {
 *   if (!place(entry, backlog.bytes, backlog.offsetOf(entry), entry.bytesLength)) break;
 *   backlog.shift();
 * }
 * ```
 */
export class Backlog {
  /** The waiting entries: `count` of them from slot `head` on, wrapping; every other slot undefined. */
  private ring: (Entry | undefined)[];
  private head = 0;
  private count = 0;
  private readonly initialSlots: number;
  private buffer = new Uint8Array(INITIAL_BYTES);
  /** Logical position of `buffer[0]`. */
  private base = 0;
  /** Logical position of the oldest byte still needed (the head entry's). */
  private start = 0;
  /** Logical position of the next free byte. */
  private end = 0;

  /**
   * @param initialSlots The ring's first size, a power of two (tests use a small one, to wrap and grow it).
   * @throws {RangeError} If it is not a power of two from 1 to 2^30.
   */
  constructor(initialSlots: number = INITIAL_ENTRIES) {
    if (
      !Number.isInteger(initialSlots) || initialSlots < 1 || initialSlots > 2 ** 30 ||
      (initialSlots & (initialSlots - 1)) !== 0
    ) {
      throw new RangeError(
        `Cannot create a backlog as 'initialSlots' must be a power of two from 1 to 2^30: received ${initialSlots}`,
      );
    }
    this.initialSlots = initialSlots;
    this.ring = new Array(initialSlots).fill(undefined);
  }

  /** How many entries wait. */
  get length(): number {
    return this.count;
  }

  /**
   * Appends `entry` with a copy of the encoder's last encoding. May run no user code.
   *
   * @param entry The task's entry (its `bytesAt` and `bytesLength` are set here).
   * @param encoder The encoder holding its arguments.
   */
  push(entry: Entry, encoder: Encoder): void {
    const n = encoder.length;
    this.reserve(n);
    if (this.count === this.ring.length) this.growRing();
    const at = this.end;
    encoder.copyTo(this.buffer, at - this.base);
    entry.bytesAt = at;
    entry.bytesLength = n;
    this.end = at + n;
    // Plain stores, not calls: they cannot be cut short. The slot first, then the count that commits it.
    const ring = this.ring;
    ring[(this.head + this.count) & (ring.length - 1)] = entry;
    this.count++;
  }

  /** The oldest waiting entry, or undefined. */
  first(): Entry | undefined {
    return this.count > 0 ? this.ring[this.head] : undefined;
  }

  /** The buffer the waiting entries' bytes are in (replaced when it grows: read it after a push). */
  get bytes(): Uint8Array {
    return this.buffer;
  }

  /**
   * Where a waiting entry's bytes start in {@link Backlog.bytes} (valid until the next push); there are
   * `entry.bytesLength` of them.
   *
   * @param entry An entry of this backlog that has not left it.
   * @returns The index of its first byte.
   */
  offsetOf(entry: Entry): number {
    return entry.bytesAt - this.base;
  }

  /** Removes the oldest entry (placed, or settled while it waited); an emptied backlog starts over. */
  shift(): void {
    const ring = this.ring;
    const entry = ring[this.head]!;
    // The slot let go: the backlog keeps no entry that left it.
    ring[this.head] = undefined;
    this.head = (this.head + 1) & (ring.length - 1);
    this.count--;
    this.start = entry.bytesAt + entry.bytesLength;
    if (this.count === 0) this.clear();
  }

  /** The waiting entries, oldest first. */
  *waiting(): Iterable<Entry> {
    const ring = this.ring;
    for (let i = 0; i < this.count; i++) yield ring[(this.head + i) & (ring.length - 1)]!;
  }

  /** Forgets every entry and byte (after terminate settled them, or once the last one left). */
  clear(): void {
    const ring = this.ring;
    for (let i = 0; i < this.count; i++) ring[(this.head + i) & (ring.length - 1)] = undefined;
    this.count = 0;
    this.head = 0;
    this.base = 0;
    this.start = 0;
    this.end = 0;
  }

  /**
   * Whether {@link Backlog.trim} would give back memory: empty, with a buffer grown past 1 MiB or a ring
   * past {@link RETAINED_ENTRIES} slots.
   */
  get trimmable(): boolean {
    return this.count === 0 && (this.buffer.length > RETAINED_BYTES || this.ring.length > RETAINED_ENTRIES);
  }

  /** Gives back a grown buffer and ring (see {@link Backlog.trimmable}), if the backlog is empty. */
  trim(): void {
    if (!this.trimmable) return;
    if (this.buffer.length > RETAINED_BYTES) this.buffer = new Uint8Array(INITIAL_BYTES);
    if (this.ring.length > RETAINED_ENTRIES) this.ring = new Array(this.initialSlots).fill(undefined);
  }

  /**
   * How many slots of the ring hold an entry: {@link Backlog.length}, unless the backlog keeps an entry that
   * left it (for the tests).
   */
  get held(): number {
    let n = 0;
    for (const slot of this.ring) if (slot !== undefined) n++;
    return n;
  }

  /** How many slots the ring has now (for the tests). */
  get slots(): number {
    return this.ring.length;
  }

  /** Doubles the ring, its entries moved to the front in order. */
  private growRing(): void {
    const ring = this.ring;
    const next: (Entry | undefined)[] = new Array(ring.length * 2).fill(undefined);
    for (let i = 0; i < this.count; i++) next[i] = ring[(this.head + i) & (ring.length - 1)];
    this.ring = next;
    this.head = 0;
  }

  /** Makes room for `n` more bytes at the end: compacts the live bytes to the front, or grows. */
  private reserve(n: number): void {
    const buffer = this.buffer;
    if (this.end - this.base + n <= buffer.length) return;
    const live = this.end - this.start;
    const from = this.start - this.base;
    if (live + n <= buffer.length >> 1) {
      buffer.copyWithin(0, from, from + live);
    } else {
      let size = buffer.length * 2;
      while (size < live + n) size *= 2;
      const next = new Uint8Array(size);
      next.set(buffer.subarray(from, from + live));
      this.buffer = next;
    }
    this.base = this.start;
  }
}
