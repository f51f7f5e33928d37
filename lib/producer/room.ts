/**
 * Room in the pool's queue (`maxQueue`): whether a producer may submit one more task, and the wait for
 * room, for the pool as a whole, whichever thread the producers are in.
 *
 * What it owns: this producer's room check and its `waitForRoom()` promises; its count in
 * `ControlWords.roomWaiters` while it waits for room; the wake of the producers waiting for room when one
 * of this producer's tasks settles.
 *
 * The bound: at most `maxPending` (`workers + maxQueue`) tasks pending in the whole pool, counted from the
 * pending word of each producer (the owner's `ControlWords.ownerPending`, kept only when the pool is
 * bounded, and each open or dead slot's `ProducerWords.pending`). The sum is read, not reserved: two
 * producers that check at once may both pass, so the pool may hold one task more per producer checking
 * at that instant. (`maxQueue` is a bound on waiting work, not a safety property: records, which are
 * reserved one by one, bound memory.)
 *
 * Turns: a producer waiting for room counts itself in `ControlWords.roomWaiters`. While any other producer
 * waits, a producer holding its share of the bound (`maxPending` divided among the open producers, at
 * least 1) finds no room, so a producer submitting in a tight loop cannot take every place that frees:
 * the waiting one's check passes first. A producer whose waiters were resolved stays counted until its
 * next macrotask, so that the submission that follows `await waitForRoom()` finds the place it was woken
 * for.
 *
 * The wake: the waiting producer counts itself, arms its completion reader (it waits on its channel's
 * word even with no task of its own pending), then checks again; a producer whose task settles reads the
 * count after its pending word went down, and if it is non-zero wakes every producer's channel. Either the
 * check after the count sees the room, or the settle after it sees the count (the order of the
 * record-waiter wake, protocol/producers.ts `wakeRecordWaiters`).
 *
 * Threads: its producer's thread.
 *
 * @module
 */

import { mem } from "../protocol/atomics.ts";
import { ControlWords } from "../protocol/layout.ts";
import type { PoolMemory } from "../protocol/memory.ts";
import { type ProducerChannel, ProducerWords, SlotState, wakeProducer } from "../protocol/producers.ts";
import { backgroundTimeout } from "../runtime/timer.ts";

/** What the room reads of its producer. */
export interface RoomHost {
  /** This producer's tasks pending (submitted, not settled). */
  pending(): number;
  /** Arms the producer's completion reader: it then wakes when another producer wakes its channel. */
  arm(): void;
}

/**
 * A producer's view of the room in the pool's queue.
 *
 * @example Usage
 * ```ts ignore
 * const room = new Room(maxPending, { pending: () => ledger.pending, arm: () => reader.arm() }, memory, slot);
 * if (!room.hasRoom()) await room.waitForRoom();
 * ```
 */
export class Room {
  /** The most tasks pending in the pool at once (`workers + maxQueue`), or Infinity. */
  readonly maxPending: number;
  private readonly host: RoomHost;
  private waiters: (() => void)[] = [];
  /** Whether this producer counts itself in `ControlWords.roomWaiters`. */
  private counted = false;
  private cancelUncount: (() => void) | undefined;
  private readonly control: Int32Array | undefined;
  /** Each remote slot's line (index 0 unused): their pending words are summed. */
  private readonly lines: Int32Array[] = [];
  private readonly channels: readonly ProducerChannel[];
  private readonly slot: number;
  /** This producer's slot line (undefined for the owner's own). */
  private readonly line: Int32Array | undefined;

  /**
   * @param maxPending The bound, or Infinity (then every check passes and nothing is shared).
   * @param host What the room reads of its producer.
   * @param memory The pool's memory as this thread sees it (its control words, slot lines and channels).
   * @param slot This producer's slot.
   */
  constructor(maxPending: number, host: RoomHost, memory: PoolMemory, slot: number) {
    this.maxPending = maxPending;
    this.host = host;
    this.channels = memory.channels;
    this.slot = slot;
    if (maxPending === Infinity) return;
    this.control = memory.control;
    for (let s = 1; s <= memory.producers; s++) this.lines[s] = memory.slotLine(s);
    this.line = slot === 0 ? undefined : this.lines[slot];
  }

  /** Tasks pending in the whole pool: the owner's, and every claimed slot's. */
  pendingInPool(): number {
    const control = this.control!;
    let total = mem.load(control, ControlWords.ownerPending); // spec: RoomSumOwner
    const lines = this.lines;
    for (let s = 1; s < lines.length; s++) {
      const line = lines[s];
      // A FREE slot's word is the last producer's, left as it was (0 after a close, maybe not after a death).
      if (mem.load(line, ProducerWords.state) !== SlotState.FREE) total += mem.load(line, ProducerWords.pending); // spec: RoomSumSlot
    }
    return total;
  }

  /**
   * Whether this producer may submit one more task now: fewer than `maxPending` pending in the pool, and,
   * while another producer waits for room, fewer than its share pending here.
   *
   * @returns `true` if so.
   */
  hasRoom(): boolean {
    const max = this.maxPending;
    if (max === Infinity) return true;
    const mine = this.host.pending();
    if (mine >= max || this.pendingInPool() >= max) return false;
    const control = this.control!;
    if (mem.load(control, ControlWords.roomWaiters) > (this.counted ? 1 : 0)) { // spec: RoomReadTurns
      const open = mem.load(control, ControlWords.producersOpen) + 1;
      if (mine >= Math.max(1, Math.floor(max / open))) return false;
    }
    return true;
  }

  /**
   * Resolves when {@link Room.hasRoom} is true (at once if it is now). Another submission may take the
   * room first: a producer checks again (or catches QueueFullError).
   *
   * @returns A promise that never rejects.
   */
  waitForRoom(): Promise<void> {
    if (this.hasRoom()) return Promise.resolve();
    const promise = new Promise<void>((resolve) => this.waiters.push(resolve));
    if (this.control !== undefined) {
      // Counted, then armed, then checked once more: a settle after this check sees the count and wakes us.
      this.count(true);
      this.host.arm();
      if (this.hasRoom()) this.resolveWaiters();
    }
    return promise;
  }

  /** Whether this producer waits for room (its completion reader then waits even with nothing pending). */
  get waiting(): boolean {
    return this.waiters.length > 0;
  }

  /**
   * After a task of this producer settled (its pending word went down): its own waiters, if there is room
   * now, and the waiters of other producers, if any said they wait.
   */
  released(): void {
    if (this.waiters.length > 0 && this.hasRoom()) this.resolveWaiters();
    const control = this.control;
    if (control === undefined || mem.load(control, ControlWords.roomWaiters) <= (this.counted ? 1 : 0)) return; // spec: RoomReadWaiters
    for (const channel of this.channels) if (channel.slot !== this.slot) wakeProducer(channel); // spec: RoomWakeProducer
  }

  /** After this producer's reader woke (another producer's task may have settled): its waiters, if room. */
  check(): void {
    if (this.waiters.length > 0 && this.hasRoom()) this.resolveWaiters();
  }

  /** The pool stopped: every waiter resolves (its submission then rejects with the pool's state). */
  stop(): void {
    this.resolveWaiters();
    this.cancelUncount?.();
    this.cancelUncount = undefined;
    this.count(false);
  }

  /** Resolves every waiter (their reactions run later, as microtasks: no user code here). */
  private resolveWaiters(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const resolve of waiters) resolve();
    // Still counted until the next macrotask: the submissions that follow each `await` come first.
    if (this.counted && this.cancelUncount === undefined) {
      this.cancelUncount = backgroundTimeout(() => {
        this.cancelUncount = undefined;
        if (this.waiters.length === 0) this.count(false);
      }, 0);
    }
  }

  /** Counts this producer in `ControlWords.roomWaiters` (and says so in its slot's line), or uncounts it. */
  private count(waiting: boolean): void {
    if (waiting === this.counted || this.control === undefined) return;
    if (waiting) {
      this.cancelUncount?.();
      this.cancelUncount = undefined;
    }
    this.counted = waiting;
    mem.add(this.control, ControlWords.roomWaiters, waiting ? 1 : -1); // spec: RoomCountWaiting
    // If its thread dies counted, the owner uncounts it (protocol/producers.ts releaseSlot).
    if (this.line !== undefined) mem.store(this.line, ProducerWords.countedRoom, waiting ? 1 : 0);
  }
}
