/**
 * An elastic pool's worker slots and size (issue 49; spec/Elastic.tla is the design): which slots hold a
 * worker, and how many workers the pool keeps, so that workers can come with the load and retire when idle
 * without stranding a task or losing a wake.
 *
 * What it owns:
 * - The **slot word** of each worker index: `sleep.ts`'s state word, whose low 3 bits are the slot's state:
 *   {@link AWAKE} (0) and {@link SLEEPING} (1) as the sleep protocol uses them (a live worker), and
 *   {@link RETIRING}, {@link ABSENT}, {@link STARTING}. All zero is AWAKE, so a fixed pool's memory is what
 *   it was, and no step of this file ever runs for it.
 * - The **size word** (`ControlWords.poolSize`): the workers the pool keeps, started or starting, less
 *   those that reserved their retirement. Kept within `[min, max]` by compare-exchange.
 * - The **want-a-worker flag** (`ControlWords.growWanted`), by which a worker tells the owner that queued
 *   work waits and nobody sleeps (the owner alone can start a thread).
 *
 * Invariants (Elastic.tla's `NoStrandedTask`, `WithinBounds`, `CountersConsistent`):
 * - A worker retires only from SLEEPING (after a search found its deque empty; only it pushes to it), by a
 *   compare-exchange SLEEPING → RETIRING that a wake (SLEEPING → AWAKE) makes fail; so its deque is empty.
 * - Its sleep count is undone before that compare-exchange (RetireUncount), never left behind.
 * - Its size reservation comes first (RetireReserve: only above `min`), and is given back if it stays.
 * - The owner marks a slot STARTING before it reserves the size (GrowStoreStarting, GrowReserve), so the
 *   slots the pool keeps are never fewer than the size word says.
 *
 * Deviation from the spec, and why it is still safe: the spec puts a worker's mail (directed tasks and
 * broadcast parts posted and not taken up) above the state bits of the slot word, so that one
 * compare-exchange decides between a directed push and a retirement. Here the mail stays in its own word
 * (`StatusWords.mail`, read by mail.ts, broadcast.ts, producer.ts), and the two sides order their two
 * accesses as in Dekker's algorithm (every access is sequentially consistent): the owner adds to the mail
 * first, then loads the slot word ({@link Slots.claimMail}); the retiring worker compare-exchanges the slot
 * word first, then loads the mail ({@link Sleep.sleepOrRetire}). At least one of them sees the other: the
 * owner sees RETIRING (it takes its mail back and posts elsewhere), or the worker sees mail (it stores AWAKE
 * again and stays), or both (harmless: the worker stays, the owner posts elsewhere). So no message is ever
 * posted to a worker that leaves.
 *
 * Threads: `claimMail`, `growStoreStarting`, `growReserve`, `growRelease`, `recoverStoreAbsent`,
 * `initElastic`, `takeWanted` by the owner; `bootStoreAwake`, `retireReserve`, `retireUnreserve`,
 * `retireStoreAbsent`, `wantWorker` by the worker of the index; the reads by any thread.
 *
 * @module
 */

import { mem } from "./atomics.ts";
import { ControlWords, SleepWords, StatusWords } from "./layout.ts";
import { ABSENT, AWAKE, SLEEPING, STARTING, STATE_MASK } from "./sleep.ts";

export { ABSENT, AWAKE, RETIRING, SLEEPING, STARTING, STATE_MASK } from "./sleep.ts";

/**
 * A handle on the slot words and the size word of a pool. Any thread may hold one.
 *
 * @example Usage
 * ```ts
 * import { ABSENT, Slots } from "./slots.ts";
 * import { ControlWords, sleepRegionBytes, StatusWords } from "./layout.ts";
 * const control = new Int32Array(64);
 * const sleep = new Int32Array(sleepRegionBytes(2) / 4);
 * const slots = new Slots(control, sleep, new Int32Array(2 * StatusWords.count), 2);
 * slots.initElastic(1, 2);
 * console.log(slots.state(1) === ABSENT, slots.size); // true 1
 * ```
 */
export class Slots {
  private readonly control: Int32Array;
  private readonly sleep: Int32Array;
  private readonly status: Int32Array;
  /** How many slots (the pool's maximum). */
  readonly workers: number;

  /**
   * @param control The control words.
   * @param sleep The sleep region's words (the slot words are its state words).
   * @param status The workers' status lines (their mail words).
   * @param workers How many slots.
   */
  constructor(control: Int32Array, sleep: Int32Array, status: Int32Array, workers: number) {
    this.control = control;
    this.sleep = sleep;
    this.status = status;
    this.workers = workers;
  }

  /** The owner, once, before any worker starts: slots `min` and above ABSENT, the size `min`. */
  initElastic(min: number, max: number): void {
    for (let i = min; i < max; i++) mem.store(this.sleep, SleepWords.state(i), ABSENT);
    mem.store(this.control, ControlWords.poolSize, min);
  }

  /** Any thread. Slot `index`'s state (the low bits of its word). */
  state(index: number): number {
    return mem.load(this.sleep, SleepWords.state(index)) & STATE_MASK;
  }

  /** Any thread. Whether slot `index` holds a live worker (AWAKE or SLEEPING): thieves steal only there. */
  live(index: number): boolean {
    return (mem.load(this.sleep, SleepWords.state(index)) & STATE_MASK) <= SLEEPING;
  }

  /** Any thread. The workers the pool keeps (the size word). */
  get size(): number {
    return mem.load(this.control, ControlWords.poolSize);
  }

  /**
   * The owner, before it posts a directed task or a broadcast part to worker `index`: counts the message
   * in the worker's mail word, then checks that the slot is one a message may go to (AWAKE, SLEEPING, or
   * STARTING: a starting thread reads its messages once it has loaded). If not, takes the count back.
   * See the module doc for why the two accesses in this order make a retirement and a post exclusive.
   *
   * @returns `true` if the message may be posted (the mail word counts it).
   */
  claimMail(index: number): boolean {
    const mailAt = index * StatusWords.count + StatusWords.mail;
    mem.add(this.status, mailAt, 1);
    const state = mem.load(this.sleep, SleepWords.state(index)) & STATE_MASK; // spec: DirectCasSlot
    if (state === AWAKE || state === SLEEPING || state === STARTING) return true;
    mem.sub(this.status, mailAt, 1);
    return false;
  }

  /** The owner. Marks an ABSENT slot STARTING (first, see the module doc); `false` if it was not ABSENT. */
  growStoreStarting(index: number): boolean {
    const at = SleepWords.state(index);
    return mem.compareExchange(this.sleep, at, ABSENT, STARTING) === ABSENT; // spec: GrowStoreStarting
  }

  /**
   * The owner, after `growStoreStarting`. Reserves one more worker, if below `max`; else puts the slot
   * back to ABSENT.
   *
   * @returns `true` if reserved (start the thread).
   */
  growReserve(index: number, max: number): boolean {
    for (;;) {
      const n = mem.load(this.control, ControlWords.poolSize);
      if (n >= max) {
        mem.store(this.sleep, SleepWords.state(index), ABSENT);
        return false;
      }
      if (mem.compareExchange(this.control, ControlWords.poolSize, n, n + 1) === n) return true; // spec: GrowReserve
    }
  }

  /**
   * The owner, when a start it reserved failed (the thread could not load, or the pool stopped first):
   * the size back and the slot ABSENT.
   */
  growRelease(index: number): void {
    mem.sub(this.control, ControlWords.poolSize, 1);
    mem.store(this.sleep, SleepWords.state(index), ABSENT);
  }

  /** The worker of `index`, once loaded: STARTING → AWAKE; thieves and directed posts see it from here. */
  bootStoreAwake(index: number): void {
    mem.store(this.sleep, SleepWords.state(index), AWAKE); // spec: BootStoreAwake
  }

  /**
   * A worker whose sleep timed out: reserves its retirement, only above `min`.
   *
   * @returns `true` if reserved (go on to retire), `false` at the minimum (stay).
   */
  retireReserve(min: number): boolean {
    for (;;) {
      const n = mem.load(this.control, ControlWords.poolSize);
      if (n <= min) return false;
      if (mem.compareExchange(this.control, ControlWords.poolSize, n, n - 1) === n) return true; // spec: RetireReserve
    }
  }

  /** A worker that reserved its retirement and stays after all (a wake or mail came): the size back. */
  retireUnreserve(): void {
    mem.add(this.control, ControlWords.poolSize, 1); // spec: RetireUnreserve
  }

  /** The worker of `index`, after its teardown, last: RETIRING → ABSENT; the owner may start one here. */
  retireStoreAbsent(index: number): void {
    mem.store(this.sleep, SleepWords.state(index), ABSENT); // spec: RetireStoreAbsent
  }

  /** The owner, after the thread of a RETIRING slot died (in its teardown): the slot ABSENT. */
  recoverStoreAbsent(index: number): void {
    mem.store(this.sleep, SleepWords.state(index), ABSENT); // spec: RecoverStoreAbsent
  }

  /**
   * A worker whose wake found nobody while work is queued: sets the want-a-worker flag.
   *
   * @returns `true` if it set it (then tell the owner); `false` if it was set already (the owner was told).
   */
  wantWorker(): boolean {
    return mem.compareExchange(this.control, ControlWords.growWanted, 0, 1) === 0;
  }

  /** The owner, before it looks at growth: clears the flag (a later want sets it and tells again). */
  takeWanted(): void {
    mem.store(this.control, ControlWords.growWanted, 0);
  }
}
