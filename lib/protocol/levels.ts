/**
 * Priority levels: the queues of tasks from outside the workers, one injector per level, and the rule by
 * which a worker chooses the level to take from.
 *
 * What it owns: a thread's handles on the three injectors (high, normal, low; layout.ts `injectorHigh`,
 * `injector`, `injectorLow`), the levels it has announced (a producer) or seen announced (a worker), and a
 * worker's streaks (below). The queues themselves are injector.ts's: FIFO, many producers, many consumers.
 *
 * The promise (docs/scheduling.md), for tasks waiting in the queues:
 * - within a level, tasks are taken in submission order (each queue is FIFO; a task returned to its queue
 *   by a repair or a worker's death alone loses its place);
 * - a higher level is taken first, except that a lower level never waits for long: each worker counts, for
 *   each lower level, the tasks it took from the levels above while that level was not empty (its streak);
 *   once a streak reaches {@link LEVEL_QUOTA}, that level is taken from first (the lowest such level), and
 *   its streak starts again. So while a task is at the head of its level's queue, each worker takes at most
 *   LEVEL_QUOTA tasks of higher levels before one of them takes from its level, and one more if its take was
 *   under way when the task reached the head: it waits behind at most `(LEVEL_QUOTA + 1) × workers` tasks
 *   of higher levels (and behind each task ahead of it in its own level). spec/Levels.tla checks this
 *   (`BoundedOvertake`), the order within a level and that no take passes over a higher level's task.
 *
 * Invariants:
 * - A producer announces a level other than normal (`ControlWords.levels`, a bit each, set once and never
 *   cleared) before its first push into that level's queue. A worker that reads the word as 0 takes from the
 *   normal queue alone, as a pool that never uses priorities always does; the announcement precedes the
 *   push (sequentially consistent atomics), so a worker that reads 0 read it before any such push, and its
 *   next take reads the word again. Once it reads a bit, it serves every level from then on.
 * - A worker's streaks are its own (no shared state): the quota holds per worker, whatever the others do.
 *
 * Specified in TLA+ by `spec/Levels.tla` (each shared access names its action: `// spec: Name`).
 *
 * Sources: strict priority with a service quota for lower classes (weighted round robin's guarantee, as in
 * a network scheduler's low-latency queue with a minimum share for the others); Go's and Tokio's FIFO
 * inject queues for the order within a level.
 *
 * Threads: any thread may push (a producer, a worker overflowing a fork, recovery); `take` by one worker at
 * a time per handle (each worker has its own handle).
 *
 * @module
 */

import { mem } from "./atomics.ts";
import { type Injector, QUEUE_EMPTY } from "./injector.ts";
import { ControlWords, type PoolLayout } from "./layout.ts";

/** The priority levels, as the index of a level's queue: lower is served first. */
export const Level = Object.freeze({
  /** Taken before normal and low tasks. */
  high: 0,
  /** The default: the pool's one queue when no task asks for a priority. */
  normal: 1,
  /** Taken after high and normal tasks, at least once in every {@link LEVEL_QUOTA} + 1 takes while waiting. */
  low: 2,
});

/** A priority level (see {@link Level}). */
export type LevelIndex = 0 | 1 | 2;

/** How many levels there are. */
export const LEVELS = 3;

/**
 * The most tasks of higher levels a worker takes while a lower level waits, before it takes from that
 * level. Small enough that a low-priority task's wait stays bounded (9 × workers tasks of higher levels at
 * the head of its queue), large enough that a higher level keeps 8 of every 9 takes under overload.
 */
export const LEVEL_QUOTA = 8;

/** Where a thread's handles on the three queues are: the regions and the notes of each, by level. */
export interface LevelQueues {
  /** The three queues' handles, by level: high, normal, low. */
  readonly queues: readonly [Injector, Injector, Injector];
  /** The pool's control words (the `levels` word). */
  readonly control: Int32Array;
}

/**
 * One thread's handles on the queues of tasks from outside, by priority level.
 *
 * @example Usage
 * ```ts
 * import { initInjector, Injector } from "./injector.ts";
 * import { injectorRegionBytes } from "./layout.ts";
 * import { Level, Levels } from "./levels.ts";
 * const queues = [0, 1, 2].map(() => {
 *   const region = { buffer: new SharedArrayBuffer(injectorRegionBytes(8)), byteOffset: 0, capacity: 8 };
 *   initInjector(region);
 *   return new Injector(region);
 * }) as [Injector, Injector, Injector];
 * const control = new Int32Array(new SharedArrayBuffer(1024));
 * const producer = new Levels({ queues, control });
 * producer.pushPatiently(10, Level.low);
 * producer.pushPatiently(20, Level.high);
 * const worker = new Levels({ queues, control });
 * console.log(worker.take(), worker.take()); // 20 10
 * ```
 */
export class Levels {
  /** The queues, by level. */
  readonly queues: readonly [Injector, Injector, Injector];
  private readonly control: Int32Array;
  /** The levels this thread announced (a producer's bits of `ControlWords.levels`). */
  private announced = 0;
  /** Whether this thread has seen a level other than normal announced (then it serves all three). */
  private used = false;
  /** By level: tasks this worker took from higher levels while that level was not empty, since it last took from it. */
  private readonly streaks = [0, 0, 0];

  /**
   * Opens the handles.
   *
   * @param parts The three queues' handles and the control words.
   */
  constructor(parts: LevelQueues) {
    this.queues = parts.queues;
    this.control = parts.control;
  }

  /**
   * Any thread. Pushes task `handle` into the queue of `level` (see {@link Injector.pushPatiently}),
   * announcing the level first if it is not normal and this thread has not announced it yet.
   *
   * @param handle A task's handle.
   * @param level Its level.
   */
  pushPatiently(handle: number, level: LevelIndex): void {
    if (level !== Level.normal && (this.announced & (1 << level)) === 0) {
      // Before the push: a worker that reads the word without this bit read it before the push (see the
      // module doc), and reads it again at its next take.
      mem.or(this.control, ControlWords.levels, 1 << level); // spec: SubmitAnnounceLevel
      this.announced |= 1 << level;
    }
    this.queues[level].pushPatiently(handle);
  }

  /**
   * One worker (this handle's). Takes the task to run next: the oldest of the highest level with tasks,
   * unless a lower level's streak reached {@link LEVEL_QUOTA} (see the module doc).
   *
   * @param into Where the queue's pop notes the task taken, if given (see {@link Injector.pop}).
   * @param at The word of `into`.
   * @returns A task's handle, or {@link QUEUE_EMPTY}.
   */
  take(into?: Int32Array, at = 0): number {
    const queues = this.queues;
    if (!this.used) {
      // No level but normal was ever announced: the normal queue alone, as before priorities existed.
      const announced = mem.load(this.control, ControlWords.levels); // spec: FindReadLevels
      if (announced === 0) return queues[Level.normal].pop(into, at); // spec: FindPopNormalOnly
      this.used = true;
    }
    const streaks = this.streaks;
    // A lower level that waited through LEVEL_QUOTA takes from above goes first, the lowest first.
    for (let level = LEVELS - 1; level > 0; level--) {
      if (streaks[level] < LEVEL_QUOTA) continue;
      const task = queues[level].pop(into, at); // spec: FindStarving
      if (task !== QUEUE_EMPTY) return this.took(level, task);
      streaks[level] = 0; // it no longer waits
    }
    for (let level = 0; level < LEVELS; level++) {
      const task = queues[level].pop(into, at); // spec: FindPopLevel
      if (task !== QUEUE_EMPTY) return this.took(level, task);
    }
    return QUEUE_EMPTY;
  }

  /** A task was taken from `level`: its streak starts again; each lower level with tasks waited once more. */
  private took(level: number, task: number): number {
    this.streaks[level] = 0;
    for (let lower = level + 1; lower < LEVELS; lower++) {
      if (this.queues[lower].length > 0) this.streaks[lower]++; // spec: TookCountLower
    }
    return task;
  }

  /**
   * Any thread; approximate. The tasks queued: in the normal queue alone until a level other than normal
   * was seen announced (a worker's take), else in all three.
   *
   * @returns An estimate.
   */
  get length(): number {
    const queues = this.queues;
    if (!this.used) return queues[Level.normal].length;
    return queues[0].length + queues[1].length + queues[2].length;
  }

  /**
   * Any thread; approximate. The tasks queued in all three queues, whatever this thread has seen announced.
   *
   * @returns An estimate.
   */
  get queued(): number {
    const queues = this.queues;
    return queues[0].length + queues[1].length + queues[2].length;
  }

  /** This thread. Whether an operation on one of the queues was cut short (see {@link Injector.cutShort}). */
  get cutShort(): boolean {
    const queues = this.queues;
    return queues[0].cutShort || queues[1].cutShort || queues[2].cutShort;
  }

  /** This thread. Completes what an operation cut short left half done, on each queue (see {@link Injector.repair}). */
  repair(): void {
    for (const queue of this.queues) queue.repair();
  }
}

/**
 * The byte offsets of the three queues in a pool's buffer, by level.
 *
 * @param layout The pool's layout.
 * @returns The regions' offsets: high, normal, low.
 *
 * @example Usage
 * ```ts
 * import { poolLayout } from "./layout.ts";
 * import { levelRegions } from "./levels.ts";
 * const layout = poolLayout({ workers: 2, dequeCapacity: 256, taskCapacity: 64, inlineBytes: 192, blockBytes: 1024, blocks: 64 });
 * console.log(levelRegions(layout)[1] === layout.injector); // true
 * ```
 */
export function levelRegions(layout: PoolLayout): readonly [number, number, number] {
  return [layout.injectorHigh, layout.injector, layout.injectorLow];
}

/**
 * A record's level word as a level: anything but high or low is normal (a word no producer wrote).
 *
 * @param word The record's `level` field.
 * @returns Its level.
 *
 * @example Usage
 * ```ts
 * import { asLevel } from "./levels.ts";
 * console.log(asLevel(0), asLevel(2), asLevel(7)); // 0 2 1
 * ```
 */
export function asLevel(word: number): LevelIndex {
  return word === 0 || word === 2 ? word : 1;
}

/**
 * Checks a task's `priority` option.
 *
 * @param priority What the caller gave: `"high"`, `"normal"`, `"low"` or undefined (normal).
 * @returns Its level.
 * @throws {TypeError} If it is anything else.
 *
 * @example Usage
 * ```ts
 * import { levelOf } from "./levels.ts";
 * console.log(levelOf("high"), levelOf(undefined), levelOf("low")); // 0 1 2
 * ```
 */
export function levelOf(priority: unknown): LevelIndex {
  if (priority === undefined || priority === "normal") return 1;
  if (priority === "high") return 0;
  if (priority === "low") return 2;
  throw new TypeError(
    `Cannot run task as 'priority' must be "high", "normal" or "low": received ${
      typeof priority === "string" ? JSON.stringify(priority) : typeof priority
    }`,
  );
}
