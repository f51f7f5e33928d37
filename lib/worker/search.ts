/**
 * Where a worker finds work, and what it does when it finds none.
 *
 * The order of the search (`findWork`):
 * 1. pop its own deque (newest first: the cache-warm end);
 * 2. pop the injector (tasks from outside the workers), one task at a time, from the level that
 *    protocol/levels.ts chooses (high first, a lower level at least once in every 9 takes while it waits),
 *    so that a task leaves the queue only after every older one of its level (spec/Order.tla,
 *    StartsInOrder). A newer task can still start first while this worker is between its take and its
 *    start (the wake below is in that window): at most `workers - 1` of them if no worker is delayed there,
 *    any number if one is (a thread preempted). While more are queued, wake a sleeper to take the next;
 * 3. steal half of a random other worker's deque (oldest first), trying each other worker once.
 * The idle path (`idle`): spin a little, then doze (timed waits that no poster has to end, a few ms in
 * all), then sleep by the protocol of protocol/sleep.ts (Rayon's: announce sleepy, search once more, sleep
 * only if no work was posted meanwhile). A task found is held (see marks.ts) until `execute` registers it.
 *
 * What it owns: the idle rounds, the random state of victim choice, and whether the last search before
 * sleeping saw mail. Its shared accesses are actions of spec/SleepWake.tla and spec/Lifecycle.tla
 * (FindPopOwn, FindPopInjector, FindInjectorLeft, FindStealHalf, FindPopStolen).
 *
 * Threads: made and used by its worker thread only (the loop, and a join's wait, which helps).
 *
 * @module
 */

import { mem } from "../protocol/atomics.ts";
import type { Encoder } from "../codec/codec.ts";
import { type Deque, EMPTY, RETRY, type Stealer } from "../protocol/deque.ts";
import { QUEUE_EMPTY } from "../protocol/injector.ts";
import type { Levels } from "../protocol/levels.ts";
import type { PoolMemory } from "../protocol/memory.ts";
import { ControlWords, StatusWords } from "../protocol/layout.ts";
import {
  IDLE_POSTED,
  IDLE_STOPPING,
  type Retirement,
  type Sleep,
  SLEPT_RETIRED,
  SLEPT_WOKEN,
} from "../protocol/sleep.ts";
import type { Slots } from "../protocol/slots.ts";
import type { TaskTable } from "../record/task.ts";
import type { Mail } from "./mail.ts";
import type { Marks } from "./marks.ts";
import type { WorkerStats } from "./stats.ts";

/**
 * Idle rounds that spin (each a search and 32 pause hints) before dozing. Long enough to catch the next
 * task of a caller that awaits each one before it submits the next: a doze is a timed wait that no poster
 * ends, and with the kernel's timer slack one of 50 µs lasted about 100, so with 16 rounds a one-at-a-time
 * round trip took 100–105 µs on Node here, and 50–75 with 64 (bench: 7 × 2,000 sequential tasks, two
 * interleaved runs); 256 rounds gained nothing more. Tiny-task bursts were no slower.
 */
export const SPIN_ROUNDS = 64;
/** Idle rounds that doze (each a search and a timed wait of DOZE_MS) before sleeping: a few ms in all. */
export const DOZE_ROUNDS = 40;
/** One doze, in ms. */
export const DOZE_MS = 0.05;

/** {@link Search.idle}: search again (after a spin, a doze, a sleep, or work posted meanwhile). */
export const SEARCH_AGAIN = -1;
/** {@link Search.idle}: the pool is stopping. */
export const SEARCH_STOP = IDLE_STOPPING;
/** {@link Search.idle}: sleep, but asynchronously (async tasks are pending): see {@link Search.sleepAsync}. */
export const SEARCH_SLEEP_ASYNC = -5;
/**
 * {@link Search.idle}: an elastic pool's worker retired (its slot RETIRING, its count and size undone):
 * the loop runs the teardown, stores ABSENT and leaves (loop.ts `retire`).
 */
export const SEARCH_RETIRE = -6;

/** An elastic pool's part of a worker's search (protocol/slots.ts); absent in a fixed pool. */
export interface SearchElastic {
  /** The slot words and the size word. */
  readonly slots: Slots;
  /** The fewest workers the pool keeps. */
  readonly min: number;
  /** How long a sleep lasts before the worker retires, ms. */
  readonly idleTimeout: number;
  /** Tells the owner that queued work waits and nobody sleeps (a "grow" message). */
  readonly wantWorker: () => void;
}

/** What a worker's search is built from. */
export interface SearchParts {
  /** This worker's index. */
  readonly index: number;
  /** The pool's memory: its control words (the lifecycle word), every worker's deque (stealer handles, ours included), the sleep words. */
  readonly memory: Pick<PoolMemory, "control" | "stealers" | "sleep">;
  /** Our deque (owner handle). */
  readonly deque: Deque;
  /** The injectors, one per priority level (levels.ts chooses the level to take from). */
  readonly levels: Levels;
  /** The task records (our cached free records go back before we sleep). */
  readonly table: TaskTable;
  /** The encoder of results and fork arguments (its scratch space is trimmed before we sleep). */
  readonly encoder: Encoder;
  /** Our marks (what the search returns is held). */
  readonly marks: Marks;
  /** Our mail (the last search before sleeping looks at it). */
  readonly mail: Mail;
  /** Our counters. */
  readonly stats: WorkerStats;
  /** An elastic pool's slots and bounds; undefined in a fixed pool. */
  readonly elastic?: SearchElastic;
}

/** A worker's search for work and its idle path. */
export class Search {
  private readonly index: number;
  private readonly control: Int32Array;
  private readonly deque: Deque;
  private readonly stealers: readonly Stealer[];
  private readonly levels: Levels;
  private readonly sleep: Sleep;
  private readonly table: TaskTable;
  private readonly encoder: Encoder;
  private readonly marks: Marks;
  private readonly mail: Mail;
  private readonly stats: WorkerStats;
  private random: number;
  /** Idle rounds since work was last found (spin, then doze, then sleep). */
  private idleRounds = 0;
  /** The last search before sleeping saw mail: do not sleep (see `idle`). */
  private mailSeen = false;
  /** An elastic pool's slots (thieves skip slots that are not live) and its retirement; else undefined. */
  private readonly slots: Slots | undefined;
  private readonly elastic: SearchElastic | undefined;
  private readonly retirement: Retirement | undefined;

  /**
   * This thread.
   *
   * @param parts This worker's index and what its search works with (see {@link SearchParts}).
   */
  constructor(parts: SearchParts) {
    const index = parts.index;
    this.index = index;
    this.control = parts.memory.control;
    this.deque = parts.deque;
    this.stealers = parts.memory.stealers;
    this.levels = parts.levels;
    this.sleep = parts.memory.sleep;
    this.table = parts.table;
    this.encoder = parts.encoder;
    this.marks = parts.marks;
    this.mail = parts.mail;
    this.stats = parts.stats;
    this.random = (index * 0x9e3779b1 + 1) | 0;
    const elastic = parts.elastic;
    this.elastic = elastic;
    this.slots = elastic?.slots;
    if (elastic !== undefined) {
      const { slots, min } = elastic;
      const mail = parts.mail;
      this.retirement = {
        reserve: () => slots.retireReserve(min),
        unreserve: () => slots.retireUnreserve(),
        mail: () => mail.waiting(),
      };
      // Our newWork that found nobody to wake while tasks wait in the injector: all are busy, ask the owner
      // for one more (the flag makes a burst one message).
      const levels = parts.levels;
      this.sleep.onNobodyWoken = () => {
        if (levels.queued > 0 && slots.wantWorker()) elastic.wantWorker();
      };
    } else this.retirement = undefined;
  }

  /** This thread. Whether the lifecycle word says stopping. */
  stopping(): boolean {
    return mem.load(this.control, ControlWords.lifecycle) !== 0;
  }

  /**
   * This thread. Own deque (newest first: our forks); then the injector's oldest task, one at a time (the
   * submission order); then half of a random other worker's deque. Returns a task, held, or -1. (The whole
   * search is one step of spec/Graph.tla, FindTake: a graph node is found as any task is.)
   */
  findWork(): number { // spec: FindTake
    const marks = this.marks;
    // What it returns is held (see marks.ts) until `execute` registers it: a stale mark is completed first.
    marks.checkSearch();
    // Each pop notes what it takes in the held mark itself (marks.ts popHeld): no call in between.
    const own = marks.popHeld(); // spec: FindPopOwn
    if (own !== EMPTY) return own;
    const injected = marks.takeHeld(); // spec: FindPopInjector
    if (injected !== QUEUE_EMPTY) {
      this.stats.bump(StatusWords.injectorPops);
      // One at a time, never a batch into our deque: the owner pops its deque newest first, so a moved
      // batch ran in reverse, and while our deque held it the other workers took newer tasks from the
      // injector (issue 30; spec/Order.tla's mutants). Taken one at a time, tasks from outside start in
      // the order they were queued, give or take the workers between their pop and their start.
      // More queued: wake a sleeper for the next one (each woken worker that takes one wakes the next
      // while any remain), as a burst posted with one newWork (runMany's) wakes only one worker.
      if (this.levels.length > 0) this.sleep.newWork(); // spec: FindInjectorLeft
      return injected;
    }
    const workers = this.stealers.length;
    if (workers > 1) {
      let r = this.random;
      r ^= r << 13;
      r ^= r >>> 17;
      r ^= r << 5;
      this.random = r;
      const start = (r >>> 0) % workers;
      for (let k = 0; k < workers; k++) {
        const victim = (start + k) % workers;
        if (victim === this.index) continue;
        // An elastic pool's slot that is not live has an empty deque (spec/Elastic.tla NoStrandedTask):
        // skipped as a saving, not for safety.
        if (this.slots !== undefined && !this.slots.live(victim)) continue;
        this.stats.bump(StatusWords.stealAttempts);
        let moved = this.stealers[victim].stealHalfInto(this.deque); // spec: FindStealHalf
        if (moved === RETRY) moved = this.stealers[victim].stealHalfInto(this.deque);
        if (moved > 0) {
          this.stats.bump(StatusWords.successfulSteals);
          this.stats.bump(StatusWords.stolen, moved);
          if (moved > 1) this.sleep.newWork();
          const mine = marks.popHeld(); // spec: FindPopStolen
          if (mine !== EMPTY) return mine;
        }
      }
    }
    return -1;
  }

  /** This thread, from the loop. Work was found: the next idle round spins again. */
  found(): void {
    this.idleRounds = 0;
  }

  /**
   * This thread, from the loop, after a search found nothing. One idle round: spin, doze or go to sleep.
   * Returns a task the search before sleeping found (held), or SEARCH_AGAIN, SEARCH_STOP or
   * SEARCH_SLEEP_ASYNC (the loop then yields to its event loop until {@link Search.sleepAsync} settles).
   *
   * @param pendingAsync Whether async tasks (or broadcast parts) are pending: their event loop must run,
   * so the worker does not doze, and sleeps asynchronously.
   */
  idle(pendingAsync: boolean): number {
    this.idleRounds++;
    if (this.idleRounds <= SPIN_ROUNDS) {
      for (let i = 0; i < 32; i++) mem.pause();
      return SEARCH_AGAIN;
    }
    // Doze (timed waits nobody has to wake) before sleeping; not with async tasks pending, whose
    // event loop must run: those workers go straight to sleepAsync.
    if (this.idleRounds <= SPIN_ROUNDS + DOZE_ROUNDS && !pendingAsync) {
      this.sleep.doze(this.index, DOZE_MS);
      return SEARCH_AGAIN;
    }
    this.idleRounds = 0;
    // Going to sleep: our cached free records go back to the shared list, where others can use them;
    // the main thread may be waiting for records (its backlog), so it is told as for a completion.
    if (this.table.flushCache() > 0) this.marks.wakeMain();
    // And a scratch buffer grown by large payloads is not kept while we sleep.
    this.encoder.trim();
    this.mailSeen = false;
    const late = this.sleep.idle(this.index, () => this.lastSearch(), () => this.stopping());
    if (late >= 0) return late; // held by findWork
    if (late === IDLE_STOPPING) return SEARCH_STOP;
    if (late === IDLE_POSTED) return SEARCH_AGAIN;
    if (this.mailSeen) {
      // Mail came after the loop's check: counted as sleeping already, leave that state at once (a
      // sleep of 0 ms, the protocol's timed-out sleep) and go read it.
      this.sleep.sleep(this.index, 0);
      return SEARCH_AGAIN;
    }
    this.stats.bump(StatusWords.sleeps);
    if (pendingAsync) return SEARCH_SLEEP_ASYNC;
    const elastic = this.elastic;
    if (elastic !== undefined) {
      // An elastic pool's worker sleeps at most its idle timeout, then retires if the pool may shrink.
      const slept = this.sleep.sleepOrRetire(this.index, elastic.idleTimeout, this.retirement!);
      if (slept === SLEPT_RETIRED) return SEARCH_RETIRE;
      if (slept === SLEPT_WOKEN) this.stats.bump(StatusWords.wakes);
      return SEARCH_AGAIN;
    }
    if (this.sleep.sleep(this.index)) this.stats.bump(StatusWords.wakes);
    return SEARCH_AGAIN;
  }

  /** This thread. Sleeps with `Atomics.waitAsync`, so that pending promises can settle meanwhile. */
  sleepAsync(): Promise<void> {
    return this.sleep.sleepAsync(this.index).then((woken) => {
      if (woken) this.stats.bump(StatusWords.wakes);
    });
  }

  /** The search before sleeping (after announcing it): work, or mail, which must not wait for a wake. */
  private lastSearch(): number {
    if (this.mail.waiting()) {
      this.mailSeen = true;
      return -1;
    }
    return this.findWork();
  }
}
