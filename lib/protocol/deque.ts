/**
 * A fixed-capacity Chase-Lev work-stealing deque of int32 task values, living in a region of a
 * SharedArrayBuffer so that any thread holding the buffer can use it.
 *
 * What it owns: the words of one deque region (see `DequeWords` in `layout.ts`): `top`, `bottom`, and a
 * ring of `capacity` slots. Handles are split by capability, as in crossbeam-deque:
 * - {@link Deque}, the owner's handle: `push` and `pop` at the bottom (LIFO), and `stealHalfInto`'s
 *   destination. Exactly one thread may hold it for a region at a time.
 * - {@link Stealer}, any thread's handle: `steal` one task at the top (FIFO), or `stealHalfInto` the
 *   caller's own deque.
 *
 * Invariants (indices are int32 and wrap; every comparison is by wrapping difference, never magnitude):
 * - `0 <= bottom - top <= capacity` whenever no pop is between its `PopReserveBottom` and its restore;
 *   a pop may hold `bottom = top - 1` for a moment, which thieves read as empty.
 * - The tasks in the deque are the slots of indices `top .. bottom-1`; slot `i & (capacity - 1)` holds
 *   index `i`. Only the owner writes slots; it writes slot `i` only while `i - top < capacity`, so a slot
 *   a thief has read stays unchanged until `top` moves past it, and a thief's compare-exchange on `top`
 *   fails if it has.
 * - `top` only advances, and only by compare-exchange; `bottom` is written only by the owner.
 * - A value pushed is a non-negative int32, so {@link EMPTY} and {@link RETRY} can never be a task.
 *
 * Sources: D. Chase and Y. Lev, "Dynamic Circular Work-Stealing Deque", SPAA 2005 (the algorithm, here on
 * a fixed ring: a new buffer could not be published through shared memory); N. M. Lê, A. Pop, A. Cohen and
 * F. Zappa Nardelli, "Correct and Efficient Work-Stealing for Weak Memory Models", PPoPP 2013 (the
 * orderings; JavaScript's Atomics are sequentially consistent, so every access here is at least that
 * strong); crossbeam-deque (split handles, losing a race as a value, batch steal from a LIFO deque one
 * claim at a time); Tokio's local queue (steal into the stealer's own queue, claim before copy).
 *
 * Steal-half and the LIFO owner: Tokio claims a whole batch with one compare-exchange because its owner
 * also pops from the head with a compare-exchange. Here the owner pops from the bottom without one while
 * more than one task remains, so a batch claimed by one compare-exchange could include tasks the owner
 * popped meanwhile. `stealHalfInto` therefore claims each task with its own compare-exchange on `top`
 * (re-reading `bottom` before each further claim), copies a task into the destination only after its
 * claim succeeded, and publishes the destination's `bottom` once at the end. Two consequences, both
 * checked (spec/ChaseLev.tla refines an atomic deque with each `HalfCasTop` as one steal; the
 * linearizability suite models a steal-half of k tasks as k steals):
 * - a steal-half is not one atomic step: the owner can observe it half done (k of n claimed);
 * - "half" is computed from the first reads of `top` and `bottom`; if the owner pops meanwhile, the thief
 *   can end up with more than half of what is left (never a task twice: every claim is a compare-exchange).
 *
 * Every shared access goes through `mem` (`atomics.ts`) and names the TLA+ action of `spec/ChaseLev.tla`
 * that models it (`// spec: Name`).
 *
 * @module
 */

import { mem } from "./atomics.ts";
import { checkCapacity, checkRegion, dequeRegionBytes, DequeWords } from "./layout.ts";

/** Returned by `pop`, `steal` and `stealHalfInto` when there was nothing to take. */
export const EMPTY: -1 = -1;

/** Returned by `steal` and `stealHalfInto` when another thread won the race for the task; try again. */
export const RETRY: -2 = -2;

/** The largest task value a deque holds: values are non-negative int32. */
export const MAX_TASK_VALUE = 0x7fffffff;

/**
 * Where a deque lives: a buffer, a cache-line-aligned offset in it, and a power-of-two capacity.
 * This plain object is what one thread sends another (with the buffer) so both can open the deque.
 */
export interface DequeRegion {
  /** The buffer holding the deque; a SharedArrayBuffer when threads share it. */
  readonly buffer: SharedArrayBuffer | ArrayBuffer;
  /** Byte offset of the region: a multiple of 64. */
  readonly byteOffset: number;
  /** Slots in the ring: a power of two from 2 to 2^28. */
  readonly capacity: number;
}

/**
 * Writes the initial state of a deque region: empty, with `top = bottom = initialIndex`. Call it once,
 * before any thread opens the region.
 *
 * @param region Where the deque lives.
 * @param initialIndex The starting value of both indices (any int32; tests start near 2^31 to cross the wrap).
 * @throws {RangeError} If the capacity is not a power of two in range, the offset is misaligned, the buffer
 * is too small, or `initialIndex` is not an int32.
 * @throws {TypeError} If the buffer is not an ArrayBuffer or SharedArrayBuffer.
 *
 * @example Usage
 * ```ts
 * import { Deque, initDeque } from "@filch/filch";
 * const region = { buffer: new SharedArrayBuffer(4096), byteOffset: 0, capacity: 64 };
 * initDeque(region);
 * const deque = new Deque(region);
 * deque.push(7);
 * console.log(deque.pop()); // 7
 * ```
 */
export function initDeque(region: DequeRegion, initialIndex = 0): void {
  if ((initialIndex | 0) !== initialIndex) {
    throw new RangeError(
      `Cannot create deque as 'initialIndex' must be an int32: received ${String(initialIndex)}`,
    );
  }
  const words = openWords(region);
  mem.store(words, DequeWords.top, initialIndex);
  mem.store(words, DequeWords.bottom, initialIndex);
}

/** The note words of a {@link Deque} (see its `note`). */
const CUT = 0;
const CUT_INDEX = 1;
const CUT_COUNT = 2;
const CUT_VALUE = 3;

/** No operation was cut short. */
const WHOLE = 0;
/** A pop reserved `CUT_INDEX` (lowered `bottom` to it) and may not have put it back. */
const POPPING = 1;
/** A pop won the last task (`CUT_VALUE`) at `CUT_INDEX` and may not have restored `bottom`. */
const POP_TAKEN = 2;
/** A task a pop had taken (`CUT_VALUE`) is being pushed back. */
const RETURNING = 3;
/** A steal-half into this deque writes from `CUT_INDEX`: `CUT_COUNT` written, `CUT_VALUE` claimed. */
const RECEIVING = 4;

/**
 * Repairs a deque whose owner died inside `pop`, between lowering `bottom` (PopReserveBottom) and putting
 * it back: if `bottom` is below `top`, it is set to `top` (empty), as the owner's restore would have. A
 * task the dead owner had reserved at `bottom` is then outside the deque, as it would be had the pop
 * returned it. Call it only while no thread owns the deque (its owner is dead, its replacement not yet
 * started); thieves may run meanwhile (they only move `top`, and an empty deque gives them nothing).
 *
 * @param region The dead owner's deque.
 * @returns `true` if `bottom` was repaired.
 *
 * @example Usage
 * ```ts
 * import { initDeque, repairAbandonedPop } from "./deque.ts";
 * const region = { buffer: new SharedArrayBuffer(1024), byteOffset: 0, capacity: 4 };
 * initDeque(region);
 * console.log(repairAbandonedPop(region)); // false: nothing to repair
 * ```
 */
export function repairAbandonedPop(region: DequeRegion): boolean {
  const words = openWords(region);
  const t = mem.load(words, DequeWords.top);
  const b = mem.load(words, DequeWords.bottom);
  // Compared by difference: the indices wrap.
  if (((b - t) | 0) >= 0) return false;
  mem.store(words, DequeWords.bottom, t);
  return true;
}

/**
 * The owner's handle on a deque: push and pop at the bottom. Only one thread may use a `Deque` for a
 * given region at a time (it is never shared); other threads use a {@link Stealer}.
 *
 * @example Usage
 * ```ts
 * import { Deque, EMPTY, initDeque } from "@filch/filch";
 * const region = { buffer: new SharedArrayBuffer(1024), byteOffset: 0, capacity: 4 };
 * initDeque(region);
 * const owner = new Deque(region);
 * owner.push(1);
 * owner.push(2);
 * console.log(owner.pop(), owner.pop(), owner.pop() === EMPTY); // 2 1 true
 * ```
 */
export class Deque {
  /** The region's words; `words[DequeWords.top]`, `words[DequeWords.bottom]`, then the slots. */
  readonly words: Int32Array;
  /** Slots in the ring, a power of two. */
  readonly capacity: number;
  /** `capacity - 1`: maps a wrapping index to its slot. */
  readonly mask: number;
  /**
   * Internal: what an operation on this deque left half done. A throw can cut an operation short at any
   * call (a stack overflow, in a task that recursed deep and then forked), and the owner can die there
   * (killed from outside, or out of memory: a runtime stops a thread where it checks for interrupts, at a
   * call or a loop's back edge): a pop between lowering `bottom` and putting it back would hide a task from
   * everyone; a steal-half into this deque between claiming tasks and publishing them would lose them.
   * Each notes its progress here, and {@link Deque.repair} completes it. Words: `[CUT]` WHOLE, POPPING,
   * POP_TAKEN, RETURNING or RECEIVING; `[CUT_INDEX]` (POPPING: the index reserved; RECEIVING: the first
   * index written); `[CUT_COUNT]` (RECEIVING: how many tasks are written); `[CUT_VALUE]` (POP_TAKEN,
   * RETURNING: the task taken; RECEIVING: one claimed, not written).
   *
   * A worker's notes are in the pool's buffer (layout.ts, NoteWords), so that they outlive it: after its
   * death the main thread repairs its deque through a handle on them. Plain element stores, not facade
   * calls: a call could itself be cut short (or be where the thread dies) and the note lost; no other
   * thread reads them while the owner lives, so they are not protocol accesses.
   */
  readonly note: Int32Array;

  /**
   * Opens the owner's handle on an initialized region (see {@link initDeque}).
   *
   * @param region Where the deque lives.
   * @param notes Where this handle notes an operation under way (see `note`): at least 4 int32 words, zero
   * when first used; by default, private words.
   * @throws {RangeError} If the capacity, offset or buffer size breaks the layout's rules.
   * @throws {TypeError} If the buffer is not an ArrayBuffer or SharedArrayBuffer, or `notes` not 4 words.
   */
  constructor(region: DequeRegion, notes: Int32Array = new Int32Array(4)) {
    this.words = openWords(region);
    this.capacity = region.capacity;
    this.mask = region.capacity - 1;
    if (!(notes instanceof Int32Array) || notes.length < 4) {
      throw new TypeError(`Cannot open deque as 'notes' must be an Int32Array of at least 4 words`);
    }
    this.note = notes;
  }

  /**
   * Owner only. Pushes `value` at the bottom.
   *
   * @param value A non-negative int32 (a task handle).
   * @returns `true` if pushed, `false` if the deque is full (nothing is overwritten; the caller overflows
   * elsewhere, for example to the injector).
   * @throws {RangeError} If `value` is not an int32 from 0 to 2^31 - 1.
   *
   * @example Usage
   * ```ts
   * import { Deque, initDeque } from "@filch/filch";
   * const region = { buffer: new SharedArrayBuffer(1024), byteOffset: 0, capacity: 2 };
   * initDeque(region);
   * const owner = new Deque(region);
   * console.log(owner.push(1), owner.push(2), owner.push(3)); // true true false
   * ```
   */
  push(value: number): boolean {
    if ((value | 0) !== value || value < 0) {
      throw new RangeError(`Cannot push as 'value' must be an int32 from 0 to 2^31 - 1: received ${String(value)}`);
    }
    if (this.note[CUT] !== WHOLE) this.repair();
    return this.pushNow(value);
  }

  /** {@link Deque.push}'s work. A push cut short published nothing: its last step is the publishing store. */
  private pushNow(value: number): boolean {
    const words = this.words;
    // The owner is the only writer of bottom, so this read sees its own last store.
    const b = mem.load(words, DequeWords.bottom); // spec: PushReadBottom
    // Observes steals; a stale (smaller) top only makes the deque look fuller, never overwrites a live slot.
    const t = mem.load(words, DequeWords.top); // spec: PushReadTop
    if (((b - t) | 0) >= this.capacity) return false;
    mem.store(words, DequeWords.slots + (b & this.mask), value); // spec: PushWriteSlot
    // Publishes the slot: a thief that reads this bottom reads the slot written above.
    mem.store(words, DequeWords.bottom, (b + 1) | 0); // spec: PushPublishBottom
    return true;
  }

  /**
   * Owner only. Pops the newest task (LIFO).
   *
   * @param into Where to note the task taken, if given: `into[at]` is set to it before the pop's own note
   * says the pop is whole, with no call between, so that a thread cut short (a stack overflow, or killed)
   * has the task either back in the deque by the repair or noted there, never neither and never both. A
   * note the caller makes after the pop returns would leave a call (its own) where the task is in neither.
   * @param at The word of `into`.
   * @returns The task value, or {@link EMPTY} if the deque was empty or a thief took the last task.
   *
   * @example Usage
   * ```ts
   * import { Deque, EMPTY, initDeque } from "@filch/filch";
   * const region = { buffer: new SharedArrayBuffer(1024), byteOffset: 0, capacity: 4 };
   * initDeque(region);
   * const owner = new Deque(region);
   * console.log(owner.pop() === EMPTY); // true
   * ```
   */
  pop(into?: Int32Array, at = 0): number {
    if (this.note[CUT] !== WHOLE) this.repair();
    const words = this.words;
    const b = (mem.load(words, DequeWords.bottom) - 1) | 0; // spec: PopReadBottom
    this.note[CUT_INDEX] = b;
    this.note[CUT] = POPPING;
    // Reserve index b before looking at top: a thief that reads bottom after this store will not take b,
    // and one that read it before must still win the compare-exchange on top, which we check below.
    mem.store(words, DequeWords.bottom, b); // spec: PopReserveBottom
    const t = mem.load(words, DequeWords.top); // spec: PopReadTop
    const size = (b - t) | 0;
    if (size < 0) {
      // Empty: undo the reservation so that bottom - top is back to 0.
      mem.store(words, DequeWords.bottom, (b + 1) | 0); // spec: PopRestoreEmpty
      this.note[CUT] = WHOLE;
      return EMPTY;
    }
    const value = mem.load(words, DequeWords.slots + (b & this.mask)); // spec: PopReadSlot
    // More than one task: thieves take index t < b at most, so b is ours without a race.
    if (size > 0) {
      if (into !== undefined) into[at] = value;
      this.note[CUT] = WHOLE;
      return value;
    }
    // The last task: thieves may be racing for index t = b; the compare-exchange on top decides.
    const won = mem.compareExchange(words, DequeWords.top, t, (t + 1) | 0) === t; // spec: PopCasTop
    if (won) {
      this.note[CUT_VALUE] = value;
      this.note[CUT] = POP_TAKEN;
    }
    // Won or lost, top is now t + 1; restore bottom to match, leaving the deque empty and consistent.
    mem.store(words, DequeWords.bottom, (t + 1) | 0); // spec: PopRestoreBottom
    if (won && into !== undefined) into[at] = value;
    this.note[CUT] = WHOLE;
    return won ? value : EMPTY;
  }

  /**
   * Owner only. Whether an operation on this deque was cut short by a throw and is not yet repaired.
   *
   * @returns `true` if {@link Deque.repair} has work to do.
   *
   * @example Usage
   * ```ts
   * import { Deque, initDeque } from "@filch/filch";
   * const region = { buffer: new SharedArrayBuffer(1024), byteOffset: 0, capacity: 4 };
   * initDeque(region);
   * console.log(new Deque(region).cutShort); // false
   * ```
   */
  get cutShort(): boolean {
    return this.note[CUT] !== WHOLE;
  }

  /**
   * Owner only. Completes an operation a throw cut short (see `note`), so that the deque is as
   * if it had returned without taking anything: a pop's reserved task is put back (`bottom` restored
   * over it), a task a pop had taken is pushed again, and the tasks a steal-half had claimed into this
   * deque are written and published. Every operation runs it first when needed; the owner also calls it
   * before it idles, so that no task stays hidden from thieves. Itself cut short, it resumes next time.
   * After the owner died, the main thread runs it through a handle on the dead owner's notes, before a
   * replacement owns the deque (the main thread is then its only owner).
   *
   * @example Usage
   * ```ts
   * import { Deque, initDeque } from "@filch/filch";
   * const region = { buffer: new SharedArrayBuffer(1024), byteOffset: 0, capacity: 4 };
   * initDeque(region);
   * new Deque(region).repair(); // nothing was cut short: nothing to do
   * ```
   */
  repair(): void {
    const words = this.words;
    const i = this.note[CUT_INDEX];
    if (this.note[CUT] === POPPING) {
      // Cut short after the reserve and before a restore (each restore is followed by no call): bottom
      // is i. Put it back over index i: if no compare-exchange took the task there (top <= i), it is in
      // the deque again; if one did (top = i + 1: a thief won, since we noted no win), this is the restore.
      if (mem.load(words, DequeWords.bottom) === i) mem.store(words, DequeWords.bottom, (i + 1) | 0);
      this.note[CUT] = WHOLE;
      return;
    }
    if (this.note[CUT] === POP_TAKEN) {
      // Our compare-exchange won the last task (top = i + 1) and the restore may not have run.
      if (mem.load(words, DequeWords.bottom) === i) mem.store(words, DequeWords.bottom, (i + 1) | 0);
      this.note[CUT] = RETURNING;
    }
    if (this.note[CUT] === RETURNING) {
      // The taken task never reached the caller: it goes back (there is room: it just left). Until the
      // push's publishing store (its last step) has run, RETURNING stays, and a repair pushes again.
      if (this.pushNow(this.note[CUT_VALUE])) this.note[CUT] = WHOLE;
      return;
    }
    if (this.note[CUT] === RECEIVING) {
      let n = this.note[CUT_COUNT];
      if (this.note[CUT_VALUE] !== EMPTY) {
        // Claimed from the victim, not yet written: nobody else has it.
        mem.store(words, DequeWords.slots + (((i + n) | 0) & this.mask), this.note[CUT_VALUE]);
        n++;
        this.note[CUT_COUNT] = n;
        this.note[CUT_VALUE] = EMPTY;
      }
      if (n > 0) mem.store(words, DequeWords.bottom, (i + n) | 0);
      this.note[CUT] = WHOLE;
    }
  }

  /**
   * Internal: a steal-half into this deque starts writing at index `base` (see {@link Stealer.stealHalfInto}).
   *
   * @param base The first index it writes (this deque's `bottom`).
   */
  noteReceiving(base: number): void {
    this.note[CUT_INDEX] = base;
    this.note[CUT_COUNT] = 0;
    this.note[CUT_VALUE] = EMPTY;
    this.note[CUT] = RECEIVING;
  }

  /**
   * Any thread; approximate. The number of tasks, from two separate reads, clamped to `[0, capacity]`:
   * exact only when no other thread is changing the deque.
   *
   * @returns An estimate of the tasks queued.
   *
   * @example Usage
   * ```ts
   * import { Deque, initDeque } from "@filch/filch";
   * const region = { buffer: new SharedArrayBuffer(1024), byteOffset: 0, capacity: 4 };
   * initDeque(region);
   * const owner = new Deque(region);
   * owner.push(5);
   * console.log(owner.length); // 1
   * ```
   */
  get length(): number {
    return approximateLength(this.words, this.capacity);
  }
}

/**
 * Any thread's handle on a deque: take the oldest task (FIFO), or half of them.
 *
 * @example Usage
 * ```ts
 * import { Deque, initDeque, Stealer } from "@filch/filch";
 * const region = { buffer: new SharedArrayBuffer(1024), byteOffset: 0, capacity: 4 };
 * initDeque(region);
 * const owner = new Deque(region);
 * owner.push(1);
 * owner.push(2);
 * console.log(new Stealer(region).steal()); // 1, the oldest
 * ```
 */
export class Stealer {
  /** The region's words. */
  readonly words: Int32Array;
  /** Slots in the ring, a power of two. */
  readonly capacity: number;
  /** `capacity - 1`. */
  readonly mask: number;

  /**
   * Opens a stealer's handle on an initialized region (see {@link initDeque}).
   *
   * @param region Where the deque lives.
   * @throws {RangeError} If the capacity, offset or buffer size breaks the layout's rules.
   * @throws {TypeError} If the buffer is not an ArrayBuffer or SharedArrayBuffer.
   */
  constructor(region: DequeRegion) {
    this.words = openWords(region);
    this.capacity = region.capacity;
    this.mask = region.capacity - 1;
  }

  /**
   * Any thread. Takes the oldest task.
   *
   * @returns The task value, {@link EMPTY} if there was none, or {@link RETRY} if another thread took it
   * first (the deque may still hold tasks).
   *
   * @example Usage
   * ```ts
   * import { EMPTY, initDeque, Stealer } from "@filch/filch";
   * const region = { buffer: new SharedArrayBuffer(1024), byteOffset: 0, capacity: 4 };
   * initDeque(region);
   * console.log(new Stealer(region).steal() === EMPTY); // true
   * ```
   */
  steal(): number {
    const words = this.words;
    // Top before bottom: read the other way round, a pop and a steal could both take the last task.
    const t = mem.load(words, DequeWords.top); // spec: StealReadTop
    const b = mem.load(words, DequeWords.bottom); // spec: StealReadBottom
    if (((b - t) | 0) <= 0) return EMPTY;
    // Read before claiming: once top moves past t the owner may reuse the slot. If it has, the
    // compare-exchange below fails and this value is dropped unused.
    const value = mem.load(words, DequeWords.slots + (t & this.mask)); // spec: StealReadSlot
    if (mem.compareExchange(words, DequeWords.top, t, (t + 1) | 0) !== t) return RETRY; // spec: StealCasTop
    return value;
  }

  /**
   * The destination's owner only. Moves about half of this deque's tasks (the oldest ones, at least one)
   * into `dst`, the caller's own deque, and publishes them there at once.
   *
   * Each task is claimed by its own compare-exchange on this deque's `top` before it is copied into `dst`;
   * `dst`'s `bottom` is published once, after the last copy, so `dst`'s thieves never see an unclaimed task.
   *
   * @param dst The caller's own deque (its owner handle). Not this deque.
   * @returns How many tasks moved (> 0), {@link EMPTY} if there were none or `dst` has no room, or
   * {@link RETRY} if another thread took the first task first.
   * @throws {RangeError} If `dst` is this same deque.
   *
   * @example Usage
   * ```ts
   * import { Deque, initDeque, Stealer } from "@filch/filch";
   * const buffer = new SharedArrayBuffer(4096);
   * const victim = { buffer, byteOffset: 0, capacity: 8 };
   * const mine = { buffer, byteOffset: 2048, capacity: 8 };
   * initDeque(victim);
   * initDeque(mine);
   * const owner = new Deque(victim);
   * for (let i = 0; i < 5; i++) owner.push(i);
   * const myDeque = new Deque(mine);
   * console.log(new Stealer(victim).stealHalfInto(myDeque)); // 3: tasks 0, 1 and 2
   * ```
   */
  stealHalfInto(dst: Deque): number {
    const words = this.words;
    const dstWords = dst.words;
    if (dstWords.buffer === words.buffer && dstWords.byteOffset === words.byteOffset) {
      throw new RangeError("Cannot steal half as 'dst' must be another deque: received the source deque itself");
    }
    // Before dst's bottom is read below: a repair may move it (a pop cut short puts its task back).
    if (dst.note[CUT] !== WHOLE) dst.repair();
    let t = mem.load(words, DequeWords.top); // spec: HalfReadTop
    const b = mem.load(words, DequeWords.bottom); // spec: HalfReadBottom
    const size = (b - t) | 0;
    if (size <= 0) return EMPTY;
    // dst is ours: its bottom is our own last store; its top only advances, so room only grows.
    const db = mem.load(dstWords, DequeWords.bottom); // spec: HalfReadDstBottom
    const dt = mem.load(dstWords, DequeWords.top); // spec: HalfReadDstTop
    const room = dst.capacity - ((db - dt) | 0);
    const want = Math.min(size - (size >> 1), room);
    if (want <= 0) return EMPTY;
    let taken = 0;
    // Noted in dst, whose owner we are: tasks claimed below must reach dst even if a throw cuts this short.
    dst.noteReceiving(db);
    for (;;) {
      const value = mem.load(words, DequeWords.slots + (t & this.mask)); // spec: HalfReadSlot
      // Claim before copy: the task becomes ours only if top is still t.
      if (mem.compareExchange(words, DequeWords.top, t, (t + 1) | 0) !== t) break; // spec: HalfCasTop
      // Plain stores, not calls: a call here could itself be cut short, and the claimed task lost.
      dst.note[CUT_VALUE] = value;
      // Invisible to dst's thieves until the publish below.
      mem.store(dstWords, DequeWords.slots + (((db + taken) | 0) & dst.mask), value); // spec: HalfWriteDst
      taken++;
      dst.note[CUT_COUNT] = taken;
      dst.note[CUT_VALUE] = EMPTY;
      t = (t + 1) | 0;
      if (taken === want) break;
      // As a fresh steal would: top (now t, our own claim) first, then bottom, so a task the owner
      // popped meanwhile is not claimed twice.
      const b2 = mem.load(words, DequeWords.bottom); // spec: HalfRecheckBottom
      if (((b2 - t) | 0) <= 0) break;
    }
    if (taken === 0) {
      dst.note[CUT] = WHOLE;
      return RETRY;
    }
    // Publishes the copied slots to dst's thieves and to dst's owner (us) at once.
    mem.store(dstWords, DequeWords.bottom, (db + taken) | 0); // spec: HalfPublishDst
    dst.note[CUT] = WHOLE;
    return taken;
  }

  /**
   * Any thread; approximate, as {@link Deque.length}.
   *
   * @returns An estimate of the tasks queued.
   *
   * @example Usage
   * ```ts
   * import { initDeque, Stealer } from "@filch/filch";
   * const region = { buffer: new SharedArrayBuffer(1024), byteOffset: 0, capacity: 4 };
   * initDeque(region);
   * console.log(new Stealer(region).length); // 0
   * ```
   */
  get length(): number {
    return approximateLength(this.words, this.capacity);
  }
}

function approximateLength(words: Int32Array, capacity: number): number {
  // Two reads, not one snapshot: another thread may move either index between them. Not modelled in
  // the spec: it writes nothing, and no other operation depends on its answer.
  const t = mem.load(words, DequeWords.top);
  const b = mem.load(words, DequeWords.bottom);
  const size = (b - t) | 0;
  return size < 0 ? 0 : size > capacity ? capacity : size;
}

function openWords(region: DequeRegion): Int32Array {
  if (region === null || typeof region !== "object") {
    throw new TypeError(`Cannot open deque as 'region' must be an object: received ${String(region)}`);
  }
  checkCapacity("deque", region.capacity);
  const bytes = dequeRegionBytes(region.capacity);
  checkRegion("deque", region.buffer, region.byteOffset, bytes);
  return new Int32Array(region.buffer, region.byteOffset, bytes / 4);
}
