/**
 * An elastic pool's growth (issue 49; spec/Elastic.tla's GrowLoad, GrowStoreStarting, GrowReserve): the
 * owner, the only thread that can start a Worker, starts one more when queued work waits and nobody is
 * counted asleep, up to the maximum, one start at a time.
 *
 * What it owns: whether a start is in flight, whether a look is scheduled, and the counts `stats()` shows
 * (workers started, retired, the peak).
 *
 * When the owner looks (each is an event that could leave queued work with nobody to run it; spec/docs/
 * Elastic.md, "No lost wake-up"):
 * - a `newWork` of the owner's own that woke nobody (`Sleep.onNobodyWoken`: a submission found nobody
 *   asleep) — a check of one property on the submit path, a microtask when it fires;
 * - a worker's or a producer thread's "grow" message: their `newWork` woke nobody while the injector held
 *   work (they set `ControlWords.growWanted` first, so a burst sends one message, not one per task);
 * - a start that finished (the next one, if work still waits: the rate is one start at a time, and at
 *   least {@link GROW_INTERVAL_MS} between two);
 * - a retirement's end and a death (their exit messages);
 * - a directed task (posted to one worker, never queued) that found no worker live or starting: a start at
 *   once, for it ({@link Growth.startNow}), as a queued task's look would start one.
 *
 * Invariants: at most one start in flight; a slot is marked STARTING before the size is reserved, and a
 * start that fails gives both back (`Slots.growRelease`) before it is reported (so that the owner, told,
 * sees whether any slot is still live or starting: owner.ts `noWorkerLive`).
 *
 * Threads: the owner's thread only.
 *
 * @module
 */

import type { Slots } from "../protocol/slots.ts";
import { ABSENT, STARTING } from "../protocol/slots.ts";

/** An elastic pool's worker counts, in `pool.stats().elastic` (docs/metrics.md). */
export interface ElasticStats {
  /** The fewest workers the pool keeps (`workers.min`). */
  min: number;
  /** The most it runs at once (`workers.max`). */
  max: number;
  /** Worker threads now: started and not retired (a retiring one counts until it is gone). */
  current: number;
  /** The most at once so far. */
  peak: number;
  /** Workers started by growth (the first `min` not counted; nor replacements of dead workers). */
  started: number;
  /** Workers that retired after their idle timeout (a death during a retirement counted too). */
  retired: number;
}

/** The least time between the ends of two starts and the next start, in ms: the growth's rate bound. */
export const GROW_INTERVAL_MS = 5;

/**
 * How long work must stay queued, with nobody counted asleep, before the owner starts a worker for it, in
 * ms: a lone task that an awake worker takes at once starts no thread.
 */
export const GROW_SETTLE_MS = 2;

/** What the growth needs of the owner. */
export interface GrowthParts {
  /** The slot words and the size word. */
  readonly slots: Slots;
  /** Workers counted asleep now (the sleep protocol's count). */
  readonly sleeping: () => number;
  /** Tasks queued in the injectors now (approximate). */
  readonly queued: () => number;
  /** The most workers. */
  readonly max: number;
  /** Whether the pool still takes tasks (open or closing), so that a start makes sense. */
  readonly running: () => boolean;
  /** Starts a thread in slot `index` and resolves once it loaded the task module (rejects if it failed). */
  readonly start: (index: number) => Promise<void>;
  /**
   * Reports a start that failed (the pool's onError), its slot given back; if no worker is live or starting
   * then, the owner rejects what no worker can run (owner.ts `noWorkerLive`).
   */
  readonly failed: (index: number, error: unknown) => void;
}

/**
 * The owner's growth of an elastic pool.
 *
 * @example Usage
 * ```ts ignore
 * const growth = new Growth({ slots, sleeping, queued, max: 8, running, start, failed });
 * memory.sleep.onNobodyWoken = () => growth.due();
 * ```
 */
export class Growth {
  private readonly parts: GrowthParts;
  private inFlight = false;
  private scheduled = false;
  private lastEnd = -Infinity;
  /** When a look first found work queued and nobody asleep (-1: the last look did not). */
  private waitingSince = -1;
  /** Workers started by growth (the initial `min` not included). */
  started = 0;
  /** Retirements that ended (the slot ABSENT again). */
  retired = 0;
  /** The most workers live at once, as the owner saw them (at the start and after each start). */
  peak = 0;

  /** @param parts What it needs of the owner. */
  constructor(parts: GrowthParts) {
    this.parts = parts;
  }

  /**
   * The owner's thread, from anywhere (the submit path included): schedules a look at growth in a
   * microtask, unless one is scheduled or a start is in flight (whose end looks again).
   */
  due(): void {
    if (this.scheduled || this.inFlight) return;
    this.scheduled = true;
    queueMicrotask(() => {
      this.scheduled = false;
      this.check();
    });
  }

  /** The owner's thread. The current workers (slots neither ABSENT nor STARTING). */
  current(): number {
    const slots = this.parts.slots;
    let n = 0;
    for (let i = 0; i < slots.workers; i++) {
      const state = slots.state(i);
      if (state !== ABSENT && state !== STARTING) n++;
    }
    return n;
  }

  /** Notes the current number of workers in the peak. */
  notePeak(): void {
    const now = this.current();
    if (now > this.peak) this.peak = now;
  }

  /** The owner's thread. Looks at growth now: starts one worker if work waits and nobody sleeps. */
  check(): void {
    const { slots, running } = this.parts;
    if (this.inFlight || !running()) return;
    // Cleared before the look: a want set after it sends another message, and is looked at then.
    slots.takeWanted();
    // GrowLoad: work queued, nobody counted asleep (a sleeper would be woken for it instead).
    if (this.parts.queued() === 0 || this.parts.sleeping() > 0) { // spec: GrowLoad
      this.waitingSince = -1;
      return;
    }
    // Still so after GROW_SETTLE_MS: a worker that is awake but not yet counted asleep (searching, dozing
    // before it sleeps) takes a lone task within microseconds, and a thread started for it would only
    // retire again after the idle timeout. Work that waits that long is work the workers do not keep up with.
    // (Liveness is kept: the look is scheduled again, and a later look finds the work still queued.)
    const now = Date.now();
    if (this.waitingSince < 0) this.waitingSince = now;
    const wait = Math.max(this.waitingSince + GROW_SETTLE_MS, this.lastEnd + GROW_INTERVAL_MS) - now;
    if (wait > 0) {
      this.scheduled = true;
      setTimeout(() => {
        this.scheduled = false;
        this.check();
      }, wait);
      return;
    }
    this.startOne();
  }

  /**
   * The owner's thread, while the pool takes tasks: starts a worker now, with no look at the load or the
   * rate, for a directed task that found no worker live or starting (owner.ts `pickWorker`: it is posted
   * to one worker, not queued, so no look at growth would ever see it). Its slot is STARTING when this
   * returns (its thread is being started, and reads the messages posted to it once loaded): the caller
   * counts the task in its mail (Slots.claimMail) and posts it there. A start that fails fails it as for
   * any growth start (`failed`: the slot given back, its directed tasks rejected, then what waits if no
   * worker is left).
   *
   * @returns The slot, or -1 if none was started (a start in flight, the pool at its maximum, or stopping).
   */
  startNow(): number {
    if (this.inFlight || !this.parts.running()) return -1;
    return this.startOne();
  }

  /** Marks an ABSENT slot STARTING, reserves the size, and starts its thread; the slot, or -1. */
  private startOne(): number {
    const { slots, running, max } = this.parts;
    let index = -1;
    for (let i = 0; i < slots.workers; i++) {
      if (slots.state(i) === ABSENT && slots.growStoreStarting(i)) {
        index = i;
        break;
      }
    }
    if (index < 0) return -1; // every slot is taken (a RETIRING one's end looks again)
    if (!slots.growReserve(index, max)) return -1;
    this.waitingSince = -1;
    this.inFlight = true;
    this.started++;
    this.parts.start(index).then(
      () => {
        this.inFlight = false;
        this.lastEnd = Date.now();
        this.notePeak();
        this.due(); // the next one, if work still waits
      },
      (error) => {
        // Not retried at once (a module that fails would fail again): the next event looks again. With no
        // worker left, none comes by itself: the owner then rejects what waits (`failed`).
        slots.growRelease(index);
        this.started--;
        this.inFlight = false;
        this.lastEnd = Date.now();
        if (running()) this.parts.failed(index, error);
      },
    );
    return index;
  }
}
