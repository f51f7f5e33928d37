/**
 * A bounded multi-producer multi-consumer queue of int32 values in a SharedArrayBuffer (Vyukov's bounded
 * MPMC queue). The pool uses it wherever many threads hand values to many threads in FIFO order:
 * - the injector: tasks submitted from outside the workers (the main thread) or overflowing a full deque;
 * - the free lists of task records and payload blocks;
 * - the completion queue (workers to the main thread).
 *
 * What it owns: one region (see `injectorRegionBytes`): `tail` (next position to fill) and `head` (next
 * position to drain) on separate cache lines, then `capacity` sequence words, then `capacity` value words.
 *
 * Invariants (positions are int32 and wrap; compare by difference):
 * - Slot `p & mask` is free for the producer of position `p` when `seq = p`, holds position `p`'s value
 *   when `seq = p + 1`, and is free for position `p + capacity` when `seq = p + capacity`.
 * - A producer claims position `p` by compare-exchange on `tail`, then writes the value, then publishes it
 *   by storing `seq = p + 1`; a consumer claims `p` by compare-exchange on `head`, reads the value, then
 *   frees the slot by storing `seq = p + capacity`.
 * - `push` fails when the slot for the tail position still holds the value of the position one lap back:
 *   either `capacity` values are queued, or the consumer that claimed that older position has not yet
 *   released the slot (it was preempted between its claim and its release). The pool sizes every queue to
 *   at least the number of values that can exist (task records, blocks), so for the pool only the second
 *   case can happen, and it passes as soon as that consumer runs again: {@link Injector.pushPatiently}
 *   retries through it. (With 2 cores and 3 threads this was seen within 100k tasks.)
 *
 * Progress: a consumer can see a position as empty while its producer sits between claim and publish
 * (the queue is not strictly lock-free, as Vyukov's is not); the pool's sleep protocol re-checks, and the
 * producer finishes in a few instructions.
 *
 * Specified in TLA+ by `spec/Injector.tla` (push, pushPatiently, pop and length, checked by TLC): every
 * shared access names the action that models it (`// spec: Name`); spec/README.md says what is checked.
 *
 * Sources: D. Vyukov, "Bounded MPMC queue" (1024cores.net); Tokio's inject queue (overflow target).
 *
 * Threads: any thread may push and pop.
 *
 * @module
 */

import { mem } from "./atomics.ts";
import { checkCapacity, checkRegion, injectorRegionBytes, InjectorWords } from "./layout.ts";

/** Returned by {@link Injector.pop} when the queue is empty. */
export const QUEUE_EMPTY = -1;

/*
 * What a handle's last operation left half done. A throw can cut an operation short at any call (a stack
 * overflow, in a task that recursed deep and then forked), and a thread can die there (killed from
 * outside, or out of memory: a runtime stops a thread where it checks for interrupts, at a call or a loop's
 * back edge): between its claim and its publish (or release), position `pos` would stay claimed for good,
 * and every consumer (or producer) behind it would wait forever. Each operation notes its claim in its
 * handle's notes, and the handle's next operation completes it first (see Injector.repair); after a death,
 * the main thread completes it through a handle on the dead thread's notes.
 *
 * The notes are words of the handle's own (NOTE_CUT, NOTE_POS, NOTE_VALUE), in the pool's buffer for a
 * worker (layout.ts, NoteWords) so that they outlive it. They are written with plain element stores, not
 * through the facade: a facade call could itself be cut short (or be where the thread dies), and the
 * claim lost; no other thread reads them while the writer lives (the main thread reads a worker's only
 * after it died), so they are not protocol accesses and need no ordering.
 */
/** The note words: what is half done, its position, its value. */
const NOTE_CUT = 0;
const NOTE_POS = 1;
const NOTE_VALUE = 2;
/** Nothing half done. */
const WHOLE = 0;
/** A push claimed the noted position for the noted value and may not have published it. */
const PUSHING = 1;
/** A pop claimed the noted position and may not have released it; its value never reached the caller. */
const POPPING = 2;
/** A pop cut short is being undone: the noted value goes back into the queue (its position released if not yet). */
const RETURNING = 3;

/**
 * The value of the last push a handle claimed, from its notes (in the pool's buffer): once its notes say
 * nothing is half done, that value is in the queue (or was taken from it). Read by the owner after a
 * producer in another thread died, to tell a task it published and queued from one it never queued.
 *
 * @param notes A handle's notes.
 * @returns The value, or {@link QUEUE_EMPTY} if it claimed no push since {@link clearNotes} (notes that
 *   were only zeroed say 0, which is also a handle: clear them where "no push" must be told apart).
 *
 * @example Usage
 * ```ts
 * import { initInjector, Injector, lastClaimedPush } from "./injector.ts";
 * import { injectorRegionBytes } from "./layout.ts";
 * const region = { buffer: new SharedArrayBuffer(injectorRegionBytes(4)), byteOffset: 0, capacity: 4 };
 * initInjector(region);
 * const notes = new Int32Array(4);
 * new Injector(region, notes).push(7);
 * console.log(lastClaimedPush(notes)); // 7
 * ```
 */
export function lastClaimedPush(notes: Int32Array): number {
  return notes[NOTE_VALUE];
}

/**
 * Sets a handle's notes to "nothing half done, no push claimed": its {@link lastClaimedPush} is then
 * {@link QUEUE_EMPTY}, never a value a queue holds. A producer slot's claim clears its handles' notes so
 * (protocol/producers.ts `claimSlot`): zeroed notes would say that the slot pushed 0, and handle 0 is a
 * task's (record 0 once its generation wrapped to 0), so the owner, after that producer's death, would
 * take such a task for pushed and leave it out of every queue.
 *
 * @param notes A handle's notes, not in use by a live handle.
 *
 * @example Usage
 * ```ts
 * import { clearNotes, lastClaimedPush } from "./injector.ts";
 * const notes = new Int32Array(4);
 * clearNotes(notes);
 * console.log(lastClaimedPush(notes)); // -1
 * ```
 */
export function clearNotes(notes: Int32Array): void {
  notes[NOTE_CUT] = WHOLE;
  notes[NOTE_POS] = 0;
  notes[NOTE_VALUE] = QUEUE_EMPTY;
}

/** Where an injector lives: a buffer, a 64-aligned offset and a power-of-two capacity. */
export interface InjectorRegion {
  /** The buffer. */
  readonly buffer: SharedArrayBuffer | ArrayBuffer;
  /** Byte offset of the region: a multiple of 64. */
  readonly byteOffset: number;
  /** Slots: a power of two from 2 to 2^28. */
  readonly capacity: number;
}

/**
 * Writes the empty state of a queue region. Call once, before any thread opens it.
 *
 * @param region Where the queue lives.
 * @throws {RangeError} If the capacity, offset or buffer size breaks the layout's rules.
 *
 * @example Usage
 * ```ts
 * import { initInjector, Injector } from "./injector.ts";
 * import { injectorRegionBytes } from "./layout.ts";
 * const region = { buffer: new SharedArrayBuffer(injectorRegionBytes(8)), byteOffset: 0, capacity: 8 };
 * initInjector(region);
 * new Injector(region).push(3);
 * ```
 */
export function initInjector(region: InjectorRegion): void {
  const q = new Injector(region);
  mem.store(q.words, InjectorWords.head, 0);
  mem.store(q.words, InjectorWords.tail, 0);
  for (let i = 0; i < q.capacity; i++) mem.store(q.words, InjectorWords.seqs + i, i);
}

/**
 * A handle on a queue region; any number of threads may each hold one.
 *
 * @example Usage
 * ```ts
 * import { initInjector, Injector, QUEUE_EMPTY } from "./injector.ts";
 * import { injectorRegionBytes } from "./layout.ts";
 * const region = { buffer: new SharedArrayBuffer(injectorRegionBytes(4)), byteOffset: 0, capacity: 4 };
 * initInjector(region);
 * const q = new Injector(region);
 * q.push(1);
 * q.push(2);
 * console.log(q.pop(), q.pop(), q.pop() === QUEUE_EMPTY); // 1 2 true
 * ```
 */
export class Injector {
  /** The region's words. */
  readonly words: Int32Array;
  /** Slots, a power of two. */
  readonly capacity: number;
  /** `capacity - 1`. */
  readonly mask: number;
  /** Word index of the first value slot. */
  readonly valuesAt: number;
  /**
   * This handle's notes: WHOLE, PUSHING, POPPING or RETURNING (what its last operation left half done),
   * the position and the value (see NOTE_CUT).
   */
  private readonly note: Int32Array;
  /**
   * The value of this handle's last push that was published, for a caller that must know, after a throw,
   * whether its push got that far (the task table's free list: see `TaskTable.repairCut`). A caller
   * resets it to QUEUE_EMPTY before such a push.
   */
  published = QUEUE_EMPTY;

  /**
   * Opens a handle on an initialized region (see {@link initInjector}).
   *
   * @param region Where the queue lives.
   * @param notes Where this handle notes an operation under way: at least 3 int32 words, zero (nothing
   * half done) when first used, owned by this handle. A worker's are in the pool's buffer, so that the
   * main thread can complete its operation if it dies (see {@link Injector.repair}); by default, private
   * words.
   * @throws {RangeError} If the capacity, offset or buffer size breaks the layout's rules.
   */
  constructor(region: InjectorRegion, notes: Int32Array = new Int32Array(3)) {
    checkCapacity("queue", region.capacity);
    const bytes = injectorRegionBytes(region.capacity);
    checkRegion("queue", region.buffer, region.byteOffset, bytes);
    this.words = new Int32Array(region.buffer, region.byteOffset, bytes / 4);
    this.capacity = region.capacity;
    this.mask = region.capacity - 1;
    this.valuesAt = InjectorWords.seqs + region.capacity;
    if (!(notes instanceof Int32Array) || notes.length < 3) {
      throw new TypeError(`Cannot open queue as 'notes' must be an Int32Array of at least 3 words`);
    }
    this.note = notes;
  }

  /**
   * Any thread. Appends `value`.
   *
   * @param value Any int32.
   * @returns `true`, or `false` if the queue is full.
   *
   * @example Usage
   * ```ts
   * import { initInjector, Injector } from "./injector.ts";
   * import { injectorRegionBytes } from "./layout.ts";
   * const region = { buffer: new SharedArrayBuffer(injectorRegionBytes(2)), byteOffset: 0, capacity: 2 };
   * initInjector(region);
   * const q = new Injector(region);
   * console.log(q.push(1), q.push(2), q.push(3)); // true true false
   * ```
   */
  push(value: number): boolean {
    if (this.note[NOTE_CUT] !== WHOLE) this.repair();
    return this.tryPush(value);
  }

  /** {@link Injector.push}'s work. */
  private tryPush(value: number): boolean {
    const words = this.words;
    for (;;) {
      const pos = mem.load(words, InjectorWords.tail); // spec: PushReadTail
      const seq = mem.load(words, InjectorWords.seqs + (pos & this.mask)); // spec: PushReadSeq
      const dif = (seq - pos) | 0;
      if (dif === 0) {
        if (mem.compareExchange(words, InjectorWords.tail, pos, (pos + 1) | 0) !== pos) continue; // spec: PushCasTail
        // Claimed: noted (plain stores, which cannot be cut short) until published.
        const note = this.note;
        note[NOTE_POS] = pos;
        note[NOTE_VALUE] = value;
        note[NOTE_CUT] = PUSHING;
        mem.store(words, this.valuesAt + (pos & this.mask), value); // spec: PushWriteValue
        // Publishes the value: a consumer that reads this seq reads the value above.
        mem.store(words, InjectorWords.seqs + (pos & this.mask), (pos + 1) | 0); // spec: PushPublishSeq
        note[NOTE_CUT] = WHOLE;
        this.published = value;
        return true;
      }
      // The slot still holds position pos - capacity's value: the queue is full.
      if (dif < 0) return false;
      // Another producer claimed pos since we read tail; read it again.
    }
  }

  /**
   * Any thread. Pushes `value` into a queue sized to hold every value that can exist, retrying while a
   * preempted consumer still holds the slot (see the module doc); never gives up while that is the cause.
   *
   * @param value Any int32.
   * @throws {Error} If the push has failed for about ten seconds: the queue really is full, which means a
   * value was pushed twice (a bug in the caller).
   *
   * @example Usage
   * ```ts
   * import { initInjector, Injector } from "./injector.ts";
   * import { injectorRegionBytes } from "./layout.ts";
   * const region = { buffer: new SharedArrayBuffer(injectorRegionBytes(2)), byteOffset: 0, capacity: 2 };
   * initInjector(region);
   * new Injector(region).pushPatiently(7);
   * ```
   */
  pushPatiently(value: number): void {
    if (this.note[NOTE_CUT] !== WHOLE) this.repair();
    this.tryPushPatiently(value);
  }

  /** {@link Injector.pushPatiently}'s work. */
  private tryPushPatiently(value: number): void {
    if (this.tryPush(value)) return;
    const started = Date.now();
    for (let spins = 1;; spins++) {
      mem.pause();
      if (this.tryPush(value)) return;
      if ((spins & 0xfff) === 0 && Date.now() - started > 10_000) {
        throw new Error(
          `Cannot push ${value} as the queue has stayed full for 10 s: a value was pushed twice (a bug in filch)`,
        );
      }
    }
  }

  /**
   * This handle's thread. Whether an operation was cut short by a throw and is not yet repaired: a
   * position it claimed holds up the queue until {@link Injector.repair} runs (each operation runs it
   * first; a thread about to idle runs it itself).
   *
   * @returns `true` if there is something to repair.
   *
   * @example Usage
   * ```ts
   * import { initInjector, Injector } from "./injector.ts";
   * import { injectorRegionBytes } from "./layout.ts";
   * const region = { buffer: new SharedArrayBuffer(injectorRegionBytes(2)), byteOffset: 0, capacity: 2 };
   * initInjector(region);
   * console.log(new Injector(region).cutShort); // false
   * ```
   */
  get cutShort(): boolean {
    return this.note[NOTE_CUT] !== WHOLE;
  }

  /**
   * This handle's thread. Completes what its last operation left half done (a throw cut it short at a
   * call): a push's claimed position is published; a pop's claimed position is released and its value,
   * which never reached the caller, is pushed again (the pop is undone; that value alone loses its place
   * in FIFO order). Only the claimer publishes or releases a position, so the sequence word says whether
   * that step ran. Runs first in each operation when needed; itself cut short, it resumes next time.
   * After the handle's thread died, the main thread runs it through a handle on the same notes (the dead
   * thread can no longer publish or release: the main thread does it in its place).
   *
   * @example Usage
   * ```ts
   * import { initInjector, Injector } from "./injector.ts";
   * import { injectorRegionBytes } from "./layout.ts";
   * const region = { buffer: new SharedArrayBuffer(injectorRegionBytes(2)), byteOffset: 0, capacity: 2 };
   * initInjector(region);
   * new Injector(region).repair(); // nothing was cut short: nothing to do
   * ```
   */
  repair(): void {
    const note = this.note;
    if (note[NOTE_CUT] === WHOLE) return;
    const words = this.words;
    const pos = note[NOTE_POS];
    const seqAt = InjectorWords.seqs + (pos & this.mask);
    if (note[NOTE_CUT] === PUSHING) {
      if (mem.load(words, seqAt) === pos) {
        mem.store(words, this.valuesAt + (pos & this.mask), note[NOTE_VALUE]);
        mem.store(words, seqAt, (pos + 1) | 0);
      }
      note[NOTE_CUT] = WHOLE;
      this.published = note[NOTE_VALUE];
      return;
    }
    if (note[NOTE_CUT] === POPPING) {
      // Not released yet (the release is the pop's last step): the value is still in its slot.
      note[NOTE_VALUE] = mem.load(words, this.valuesAt + (pos & this.mask));
      note[NOTE_CUT] = RETURNING;
    }
    if (mem.load(words, seqAt) === ((pos + 1) | 0)) mem.store(words, seqAt, (pos + this.capacity) | 0);
    // RETURNING until the push below claims a position (then PUSHING, then WHOLE).
    this.tryPushPatiently(note[NOTE_VALUE]);
  }

  /**
   * Any thread. Removes the oldest value.
   *
   * @param into Where to note the value taken, if given: `into[at]` is set to it before the pop's own note
   * says the pop is whole, with no call between, so that a thread cut short (a stack overflow, or killed)
   * has the value either back in the queue by the repair or noted there, never neither and never both.
   * @param at The word of `into`.
   * @returns The value, or {@link QUEUE_EMPTY} (also while the oldest position's producer has claimed it
   * but not yet published).
   *
   * @example Usage
   * ```ts
   * import { initInjector, Injector, QUEUE_EMPTY } from "./injector.ts";
   * import { injectorRegionBytes } from "./layout.ts";
   * const region = { buffer: new SharedArrayBuffer(injectorRegionBytes(2)), byteOffset: 0, capacity: 2 };
   * initInjector(region);
   * console.log(new Injector(region).pop() === QUEUE_EMPTY); // true
   * ```
   */
  pop(into?: Int32Array, at = 0): number {
    if (this.note[NOTE_CUT] !== WHOLE) this.repair();
    const words = this.words;
    for (;;) {
      const pos = mem.load(words, InjectorWords.head); // spec: PopReadHead
      const seq = mem.load(words, InjectorWords.seqs + (pos & this.mask)); // spec: PopReadSeq
      const dif = (seq - ((pos + 1) | 0)) | 0;
      if (dif === 0) {
        if (mem.compareExchange(words, InjectorWords.head, pos, (pos + 1) | 0) !== pos) continue; // spec: PopCasHead
        // Claimed: noted until released (after the release, nothing here can be cut short).
        const note = this.note;
        note[NOTE_POS] = pos;
        note[NOTE_CUT] = POPPING;
        const value = mem.load(words, this.valuesAt + (pos & this.mask)); // spec: PopReadValue
        // Frees the slot for position pos + capacity.
        mem.store(words, InjectorWords.seqs + (pos & this.mask), (pos + this.capacity) | 0); // spec: PopReleaseSeq
        // Noted for the caller (see `into`) before the pop is whole: no call between.
        if (into !== undefined) into[at] = value;
        note[NOTE_CUT] = WHOLE;
        return value;
      }
      if (dif < 0) return QUEUE_EMPTY;
    }
  }

  /**
   * Any thread; approximate (two separate reads). The number of values queued.
   *
   * @returns An estimate, clamped to `[0, capacity]`.
   *
   * @example Usage
   * ```ts
   * import { initInjector, Injector } from "./injector.ts";
   * import { injectorRegionBytes } from "./layout.ts";
   * const region = { buffer: new SharedArrayBuffer(injectorRegionBytes(4)), byteOffset: 0, capacity: 4 };
   * initInjector(region);
   * console.log(new Injector(region).length); // 0
   * ```
   */
  get length(): number {
    const head = mem.load(this.words, InjectorWords.head); // spec: LengthReadHead
    const tail = mem.load(this.words, InjectorWords.tail); // spec: LengthReadTail
    const size = (tail - head) | 0;
    return size < 0 ? 0 : size > this.capacity ? this.capacity : size;
  }
}
