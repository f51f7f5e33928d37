/**
 * The sleep/wake protocol: idle workers sleep, and whoever posts work wakes one — without a lost wakeup,
 * and without an atomic read-modify-write on the posting path while nobody is getting sleepy.
 *
 * What it owns: the counters word and one state word per worker (see `SleepWords` in `layout.ts`).
 * - The counters word packs the **jobs event counter** (JEC, bits 10–30, wrapping at 2^21) and the number
 *   of **sleeping** workers (bits 0–9). The JEC is odd while some worker has announced itself sleepy since
 *   the last post, even otherwise (Rayon's even/odd trick).
 * - A worker's state word is {@link AWAKE} or {@link SLEEPING}; the worker waits on its own word.
 *
 * The protocol (after Rayon's `sleep/README.md`):
 * 1. A worker that found no work for a while calls {@link Sleep.getSleepy}: it makes the JEC odd (if it is
 *    even) and remembers the JEC it saw.
 * 2. It searches for work once more. If it finds some, it runs it; nothing to undo.
 * 3. {@link Sleep.fallAsleep}: it stores SLEEPING in its word, then increments the sleeping count with a
 *    compare-exchange that succeeds only if the JEC is still the one it remembered. If the JEC moved,
 *    work was posted since step 1: it stores AWAKE and searches again.
 * 4. It waits on its word while it holds SLEEPING ({@link Sleep.sleep}); when it wakes it decrements the
 *    sleeping count itself and stores AWAKE.
 * - A poster, after making work visible (a deque push, an injector push), calls {@link Sleep.newWork}: one
 *   load of the counters; if the JEC is odd it makes it even (compare-exchange); if any worker sleeps, it
 *   wakes one: compare-exchange of some worker's word from SLEEPING to AWAKE, then notify that word.
 *
 * Why no wakeup is lost: a worker sleeps only if its compare-exchange in step 3 saw the JEC of step 1. A
 * post made visible before step 1 is found by the search of step 2. A post made visible after step 1 reads
 * the counters after that: either before step 3's compare-exchange — then it moved the odd JEC and step 3
 * fails — or after it — then it sees a sleeping count above 0, and since the worker stored SLEEPING before
 * counting itself, the poster finds a SLEEPING word to wake (this one, or another sleeper, which searches
 * in turn). Atomics.wait checks the word and sleeps in one step, so a wake that lands between step 3 and
 * the wait makes the wait return at once.
 *
 * Only the worker decrements its own sleeping count, so a poster that wakes a worker which then fails
 * step 3 cannot make the count wrong; a stale count costs a poster a scan of the state words, no more.
 * A worker that dies while counted cannot uncount itself: {@link Sleep.forget} does it for the pool, from
 * a per-worker `counted` word that the worker sets right after counting itself and clears right before
 * uncounting. That word is bookkeeping outside the protocol (no live thread reads it), so the spec does
 * not model it; the specs model a worker's death in `Lifecycle.tla`, without the sleep words.
 *
 * Sources: Rayon (`rayon-core/src/sleep/`: JEC, sleepy/sleeping, the proof sketch); Linux futex semantics
 * of `Atomics.wait` (check-and-sleep in one step).
 *
 * Threads: `idle`, `getSleepy`, `fallAsleep`, `sleep`, `sleepAsync` by the worker that owns the index;
 * `newWork`, `wakeAll` by any thread, the main thread included. `idle` is steps 1–3 in the worker loop's
 * order (with its search and its stop check passed in), so that the interleaving harness
 * (`tests/lincheck/sleep_thread.ts`) runs the worker loop's own path to sleep.
 *
 * Specified in `spec/SleepWake.tla` (with the worker loop and submission around it): each shared-memory
 * access names its action there. An elastic pool's steps (the retirement in `sleepOrRetire`, the slot
 * states above SLEEPING, `onNobodyWoken`) are `spec/Elastic.tla`'s, which checks the protocol at a coarser
 * grain: its names on a method's first line (GetSleepy, FallAsleepCasSlot, AwakenCasSlot, NewWork,
 * WakeCasSlot) name the whole method, as one step of that spec. In a fixed pool no step of Elastic.tla's
 * runs but those.
 *
 * @module
 */

import { mem } from "./atomics.ts";
import { SleepWords } from "./layout.ts";

/** A worker's state word: running or searching. */
export const AWAKE = 0;
/** A worker's state word: counted as sleeping, waiting (or about to wait) on this word. */
export const SLEEPING = 1;
/**
 * An elastic pool's slot word (the state word; protocol/slots.ts): the worker reserved its retirement and
 * left the sleep (RetireCasSlot); no wake or post goes to it.
 */
export const RETIRING = 2;
/** An elastic pool's slot word: no thread (protocol/slots.ts). */
export const ABSENT = 3;
/** An elastic pool's slot word: a thread started, not yet loaded (protocol/slots.ts). */
export const STARTING = 4;
/** The state bits of a slot word. */
export const STATE_MASK = 7;

/** {@link Sleep.sleepOrRetire}'s answer: a poster woke it (counted awake again). */
export const SLEPT_WOKEN = 0;
/** {@link Sleep.sleepOrRetire}'s answer: the timeout passed and it stays (counted awake again). */
export const SLEPT_TIMED_OUT = 1;
/** {@link Sleep.sleepOrRetire}'s answer: it retired: its slot is RETIRING, its count and size undone. */
export const SLEPT_RETIRED = 2;

/** What {@link Sleep.sleepOrRetire} needs of an elastic pool (protocol/slots.ts, the worker's mail). */
export interface Retirement {
  /** RetireReserve: the size word lowered, only above the minimum; `false` to stay. */
  reserve(): boolean;
  /** RetireUnreserve: the size word back (the worker stays after all). */
  unreserve(): void;
  /** Whether the worker's mail word counts a message (see slots.ts: the worker then stays). */
  mail(): boolean;
}

/** {@link Sleep.idle}'s answer: the stop check said stopping; leave the loop. */
export const IDLE_STOPPING = -2;
/** {@link Sleep.idle}'s answer: work was posted since getting sleepy; search again. */
export const IDLE_POSTED = -3;
/** {@link Sleep.idle}'s answer: counted as sleeping; call `sleep` or `sleepAsync` next. */
export const IDLE_ASLEEP = -4;

const SLEEPERS_MASK = 0x3ff;
const JEC_SHIFT = 10;
const JEC_MASK = 0x1fffff;

function jecOf(counters: number): number {
  return (counters >>> JEC_SHIFT) & JEC_MASK;
}

function withJec(counters: number, jec: number): number {
  return (counters & SLEEPERS_MASK) | ((jec & JEC_MASK) << JEC_SHIFT);
}

/**
 * A handle on the sleep words of a pool. Any thread may hold one.
 *
 * @example Usage
 * ```ts
 * import { Sleep } from "./sleep.ts";
 * import { sleepRegionBytes } from "./layout.ts";
 * const sleep = new Sleep(new SharedArrayBuffer(sleepRegionBytes(2)), 0, 2);
 * const token = sleep.getSleepy(); // worker 0 found nothing …
 * sleep.newWork(); // … and someone posts: the JEC moves,
 * console.log(sleep.fallAsleep(0, token)); // false: so worker 0 does not sleep
 * ```
 */
export class Sleep {
  /** The region's words. */
  readonly words: Int32Array;
  /** How many workers have a state word. */
  readonly workers: number;
  private nextToWake = 0;
  /**
   * The owner's memory of an elastic pool only: called when a `newWork` found nobody asleep to wake
   * (Elastic.tla's WokeNobody: the owner then looks at growth). Undefined elsewhere, and in a fixed pool.
   */
  onNobodyWoken: (() => void) | undefined = undefined;

  /**
   * Opens the sleep region at `byteOffset` (all zero is its initial state).
   *
   * @param buffer The pool's buffer.
   * @param byteOffset Where the region starts (64-aligned).
   * @param workers How many workers it serves (at most 1023).
   * @throws {RangeError} If `workers` is not an integer from 1 to 1023.
   */
  constructor(buffer: SharedArrayBuffer | ArrayBuffer, byteOffset: number, workers: number) {
    if (!Number.isInteger(workers) || workers < 1 || workers > SLEEPERS_MASK) {
      throw new RangeError(`Cannot create sleep words as 'workers' must be from 1 to 1023: received ${workers}`);
    }
    this.words = new Int32Array(buffer, byteOffset, SleepWords.state(workers));
    this.workers = workers;
  }

  /**
   * The worker `index` only, when its searches found nothing for a while: the worker loop's path to sleep,
   * steps 1–3 of the protocol. Gets sleepy, searches once more (work posted before the announcement is
   * found here), checks the stop word, and falls asleep unless work was posted meanwhile.
   *
   * @param index The worker.
   * @param search The worker's search for work: a task handle (≥ 0) or a negative number for none.
   * @param stopping The worker's stop check: `true` if the pool is stopping.
   * @returns The handle the late search found (run it), or {@link IDLE_STOPPING}, {@link IDLE_POSTED}
   * (search again), or {@link IDLE_ASLEEP} (counted as sleeping: call `sleep` or `sleepAsync` next).
   */
  idle(index: number, search: () => number, stopping: () => boolean): number {
    const jec = this.getSleepy(); // spec: GetSleepy
    // One more search after announcing: work posted before the announcement is found here.
    const late = search();
    if (late >= 0) return late;
    if (stopping()) return IDLE_STOPPING; // spec: SleepyReadLifecycle
    return this.fallAsleep(index, jec) ? IDLE_ASLEEP : IDLE_POSTED;
  }

  /**
   * The worker `index` only. Announces that it is about to sleep; returns the JEC to pass to `fallAsleep`.
   *
   * @returns The (odd) JEC this worker saw.
   */
  getSleepy(): number {
    for (;;) {
      const c = mem.load(this.words, SleepWords.counters); // spec: GetSleepyLoad
      const jec = jecOf(c);
      if ((jec & 1) === 1) return jec;
      const odd = (jec + 1) & JEC_MASK;
      if (mem.compareExchange(this.words, SleepWords.counters, c, withJec(c, odd)) === c) return odd; // spec: GetSleepyCas
    }
  }

  /**
   * The worker `index` only. Counts itself as sleeping if no work was posted since `getSleepy`.
   *
   * @param index The worker.
   * @param jec What `getSleepy` returned.
   * @returns `true` if now counted as sleeping (call `sleep` or `sleepAsync` next), `false` if work was
   * posted meanwhile (search again).
   */
  fallAsleep(index: number, jec: number): boolean { // spec: FallAsleepCasSlot
    const stateAt = SleepWords.state(index);
    // SLEEPING before counting: a poster that sees the count finds this word to wake.
    mem.store(this.words, stateAt, SLEEPING); // spec: FallAsleepStoreSleeping
    for (;;) {
      const c = mem.load(this.words, SleepWords.counters); // spec: FallAsleepLoad
      if (jecOf(c) !== jec) { // spec: FallAsleepUndo
        mem.store(this.words, stateAt, AWAKE); // spec: FallAsleepStoreAwake
        return false;
      }
      if (mem.compareExchange(this.words, SleepWords.counters, c, (c + 1) | 0) === c) { // spec: FallAsleepCas
        // Not a protocol step (no live thread reads it): tells `forget` that we are counted, should we die
        // before we uncount ourselves. Nothing runs between the counting and this store but these lines.
        mem.store(this.words, SleepWords.counted(index), 1);
        return true;
      }
    }
  }

  /**
   * The worker `index` only, while it is not counted as sleeping. Gives up the CPU for about `ms` without
   * asking anyone to wake it: a timed wait on its own word, which holds AWAKE and which no poster notifies
   * while it does. Between "spin" and "sleep": on a machine with fewer cores than threads, a spinning
   * worker takes the CPU from the thread that submits work, and a sleeping one costs that thread a wake
   * (a syscall) per burst; a dozing worker costs neither and finds new work within about `ms`.
   *
   * @param index The worker.
   * @param ms How long, in ms (fractions allowed; the OS rounds up, typically to 50–100 µs).
   */
  doze(index: number, ms: number): void {
    mem.wait(this.words, SleepWords.state(index), AWAKE, ms); // spec: Doze
  }

  /**
   * The worker `index` only, after `fallAsleep` returned true. Blocks until woken (or `timeoutMs` passes),
   * then counts itself awake again.
   *
   * @param index The worker.
   * @param timeoutMs An upper bound on the sleep, in ms (default: none).
   * @returns `true` if woken by a poster, `false` if the timeout passed first.
   */
  sleep(index: number, timeoutMs?: number): boolean {
    this.waitSleeping(index, timeoutMs);
    return this.awaken(index);
  }

  private waitSleeping(index: number, timeoutMs: number | undefined): void {
    mem.wait(this.words, SleepWords.state(index), SLEEPING, timeoutMs); // spec: SleepWait
  }

  /**
   * The worker `index` of an elastic pool only, after `fallAsleep` returned true: sleeps as `sleep` does, up
   * to its idle timeout; if the timeout passed, retires if the pool may shrink (spec/Elastic.tla):
   * RetireReserve, RetireUncount, RetireCasSlot (SLEEPING → RETIRING: a wake that came first makes it
   * fail), then a look at its mail (a directed post counted before the compare-exchange: see slots.ts). If
   * it stays, the size goes back (RetireUnreserve) and it searches, uncounted already.
   *
   * @param index The worker.
   * @param timeoutMs Its idle timeout, in ms.
   * @param retirement The size word's steps and the mail check.
   * @returns {@link SLEPT_WOKEN}, {@link SLEPT_TIMED_OUT} (it stays) or {@link SLEPT_RETIRED} (run the
   * teardown, then store ABSENT and exit).
   */
  sleepOrRetire(index: number, timeoutMs: number, retirement: Retirement): number {
    this.waitSleeping(index, timeoutMs);
    const stateAt = SleepWords.state(index);
    // Still SLEEPING: nobody woke us (a timeout, or a spurious return). Otherwise a waker did: as `sleep`.
    if (mem.load(this.words, stateAt) !== SLEEPING || !retirement.reserve()) {
      return this.awaken(index) ? SLEPT_WOKEN : SLEPT_TIMED_OUT;
    }
    // Uncounted before the compare-exchange (spec/docs/Elastic.md says why this order): a poster that
    // read the count before this scans the words and wakes this one, which makes the next step fail.
    mem.store(this.words, SleepWords.counted(index), 0); // see fallAsleep: not a protocol step
    mem.sub(this.words, SleepWords.counters, 1); // spec: RetireUncount
    if (mem.compareExchange(this.words, stateAt, SLEEPING, RETIRING) !== SLEEPING) { // spec: RetireCasSlot
      // Woken meanwhile (the word says AWAKE): stay, and search.
      retirement.unreserve();
      return SLEPT_WOKEN;
    }
    if (retirement.mail()) {
      // A post was counted before our compare-exchange (slots.ts, claimMail): its poster may have seen
      // SLEEPING and posted to us. Stay; only we write our word while it says RETIRING.
      mem.store(this.words, stateAt, AWAKE);
      retirement.unreserve();
      return SLEPT_WOKEN;
    }
    return SLEPT_RETIRED;
  }

  /**
   * The worker `index` only, after `fallAsleep` returned true. Like `sleep`, but the thread's event loop
   * keeps running (for a worker that holds unfinished async tasks).
   *
   * @param index The worker.
   * @param timeoutMs An upper bound on the sleep, in ms (default: none).
   * @returns Resolves `true` if woken by a poster, `false` if the timeout passed first.
   */
  async sleepAsync(index: number, timeoutMs?: number): Promise<boolean> {
    const result = mem.waitAsync(this.words, SleepWords.state(index), SLEEPING, timeoutMs); // spec: SleepWaitAsync
    if (result.async) await result.value;
    return this.awaken(index);
  }

  private awaken(index: number): boolean { // spec: AwakenCasSlot
    const stateAt = SleepWords.state(index);
    // If nobody woke us (timeout), leave SLEEPING ourselves; either way, we uncount ourselves.
    const woken = mem.compareExchange(this.words, stateAt, SLEEPING, AWAKE) !== SLEEPING; // spec: AwakenCasState
    mem.store(this.words, SleepWords.counted(index), 0); // see fallAsleep: not a protocol step
    mem.sub(this.words, SleepWords.counters, 1); // spec: AwakenUncount
    return woken;
  }

  /**
   * Any thread, once worker `index` has died (its thread can no longer run): if it died counted as
   * sleeping, uncounts it, and leaves its words as a fresh worker's. A worker dies at an await (an uncaught
   * error in its event loop) or in task code, never between two of these steps, so the `counted` word it
   * keeps is exact: it was counted if and only if it died inside `sleepAsync` — whether or not a poster had
   * already stored AWAKE in its state word to wake it (which is why the state word cannot tell).
   *
   * @param index The dead worker.
   * @returns `true` if it was counted (and is no longer).
   */
  forget(index: number): boolean {
    const counted = mem.exchange(this.words, SleepWords.counted(index), 0) === 1;
    if (counted) mem.sub(this.words, SleepWords.counters, 1);
    mem.store(this.words, SleepWords.state(index), AWAKE);
    return counted;
  }

  /**
   * Any thread, after making work visible. Moves an odd JEC (so sleepy workers do not sleep) and wakes
   * one sleeping worker if there is one.
   *
   * @returns `true` if it woke a worker.
   */
  newWork(): boolean { // spec: NewWork
    let c = mem.load(this.words, SleepWords.counters); // spec: NewWorkLoad
    for (;;) {
      const jec = jecOf(c);
      if ((jec & 1) === 0) break;
      const seen = mem.compareExchange(this.words, SleepWords.counters, c, withJec(c, jec + 1)); // spec: NewWorkCas
      if (seen === c) {
        c = withJec(c, jec + 1);
        break;
      }
      c = seen;
    }
    if ((c & SLEEPERS_MASK) === 0) return this.wokeNobody();
    return this.wakeOne() || this.wokeNobody();
  }

  /** newWork found nobody to wake: an elastic pool's thread tells its growth (see `onNobodyWoken`). */
  private wokeNobody(): false {
    if (this.onNobodyWoken !== undefined) this.onNobodyWoken(); // spec: WokeNobody
    return false;
  }

  /**
   * Any thread. Wakes every sleeping worker and moves the JEC (used to stop the pool).
   *
   * @returns How many workers it woke.
   */
  wakeAll(): number {
    // Moving the JEC by 2 keeps its parity and makes every sleepy worker's fallAsleep fail.
    mem.add(this.words, SleepWords.counters, 2 << JEC_SHIFT); // spec: WakeAllBump
    let woken = 0;
    for (let i = 0; i < this.workers; i++) if (this.wake(i)) woken++;
    return woken;
  }

  /** Any thread. How many workers are counted as sleeping (approximate while they come and go). */
  get sleeping(): number {
    return mem.load(this.words, SleepWords.counters) & SLEEPERS_MASK;
  }

  private wakeOne(): boolean {
    const n = this.workers;
    const start = this.nextToWake;
    for (let k = 0; k < n; k++) {
      const i = (start + k) % n;
      if (this.wake(i)) {
        this.nextToWake = (i + 1) % n;
        return true;
      }
    }
    return false;
  }

  private wake(index: number): boolean { // spec: WakeCasSlot
    const stateAt = SleepWords.state(index);
    // A load first: while a woken worker has not yet uncounted itself, posters see a stale count and scan;
    // a failed compare-exchange would take each word's cache line exclusively for nothing.
    if (mem.load(this.words, stateAt) !== SLEEPING) return false; // spec: WakeLoadState
    if (mem.compareExchange(this.words, stateAt, SLEEPING, AWAKE) !== SLEEPING) return false; // spec: WakeCasState
    mem.notify(this.words, stateAt, 1); // spec: WakeNotify
    return true;
  }
}
