/**
 * Task metrics (the pool's `metrics: true` option): run time and wait time of every task, in histograms per
 * pool and per worker, and each worker's utilization (busy ÷ wall).
 *
 * What it owns: {@link Histogram} (log-linear buckets: 8 per power of two, so a percentile is within
 * about 9% of the true value, in constant memory), the workers' histograms (a SharedArrayBuffer of their
 * own, {@link histogramBytes}), {@link PoolMetrics} (the main thread's view of them), and the clock every
 * thread shares ({@link epochMs}).
 *
 * Where the numbers come from: the main thread notes when it submits a task and writes that time into the
 * task's record when it places it ({@link TaskStamps}). The worker that starts the task keeps its start
 * time (in its own memory, by record), and at its finish records the task's run time (finish − start) and
 * wait time (start − submission) in its two histograms ({@link TaskRecorder}). The main thread does no
 * per-task work for metrics beyond the submission time: it merges the workers' histograms when asked.
 *
 * Invariants:
 * - Every task a worker finishes (its record reaches DONE: a value, an error, an abort seen at its start)
 *   is recorded, once, by that worker, before its DONE store. A task settled without finishing (cancelled
 *   while queued, its worker died or the pool was terminated while it ran) is not.
 * - A worker's histograms have one writer, the worker (plain writes into float64 words, like a payload's
 *   bytes: data, not scheduling words; a replacement worker takes them over only after its predecessor's
 *   thread is dead, as it takes over its deque). The DONE store publishes them with the task's outcome: once
 *   the main thread has settled a task, its times are in what {@link PoolMetrics.stats} reads. While tasks
 *   are running, `stats()` may read a histogram halfway through one update (an aligned float64 element
 *   never tears): the counts then include a task that the sum and maximum do not yet, or the reverse; once
 *   the tasks have settled, the figures are exact.
 * - A worker's utilization counts its busy periods (from the first task after an idle spell to the finish
 *   of its last task before the next idle round), published in its status line in whole milliseconds, with
 *   the start of the period under way.
 * - Clock reads: one per task on its worker (a finish's time is the next start's, when the loop goes
 *   straight on to it), one per busy period, and one per 32 submissions on the main thread.
 *
 * Threads: {@link PoolMetrics} and {@link TaskStamps} on the thread that created the pool;
 * {@link TaskRecorder} on a worker.
 *
 * @module
 */

import { mem } from "./protocol/atomics.ts";
import { type PoolLayout, StatusWords } from "./protocol/layout.ts";
import { submittedAtSlot } from "./record/fields.ts";

/**
 * Milliseconds since the Unix epoch, with sub-millisecond precision: the same clock on every thread
 * (`performance.now()` counts from each thread's own origin).
 *
 * @returns The time now.
 *
 * @example Usage
 * ```ts
 * import { epochMs } from "./metrics.ts";
 * console.log(Math.abs(epochMs() - Date.now()) < 1_000); // true
 * ```
 */
export function epochMs(): number {
  return timeOrigin + performance.now();
}

/** This thread's `performance.timeOrigin`, read once (on Node it is a getter that costs a few ns a read). */
const timeOrigin = performance.timeOrigin;

/** Buckets per power of two. */
const SUB = 8;
/** Buckets: values from 1 µs to 2^40 µs (12 days), and one below 1 µs. */
const BUCKETS = 1 + 40 * SUB;

/**
 * The bucket of a value in µs: 0 below 1 µs; else 1 + 8 × (its power of two) + the eighth of that octave it
 * falls in. Integer arithmetic on eighths of a µs below 2^28 µs (about 4.5 minutes); a logarithm above.
 */
function bucketOf(micros: number): number {
  if (micros < 1) return 0;
  if (micros >= 2 ** 28) return Math.min(BUCKETS - 1, 1 + Math.floor(Math.log2(micros) * SUB));
  const v = (micros * 8) | 0; // ≥ 8
  const top = 31 - Math.clz32(v); // its leading bit: the octave of `micros` plus 3
  // The three bits after the leading one pick the eighth.
  return 1 + (top - 3) * SUB + ((v >>> (top - 3)) & 7);
}

/** The middle of bucket `b` (≥ 1), in µs. */
function middleOf(b: number): number {
  const octave = Math.floor((b - 1) / SUB);
  const eighth = (b - 1) % SUB;
  return 2 ** octave * (1 + (eighth + 0.5) / SUB);
}

/** A histogram's summary, in milliseconds. */
export interface HistogramSummary {
  /** Values recorded. */
  count: number;
  /** Their mean (exact). */
  mean: number;
  /** The median (within the bucket width, about 9%). */
  p50: number;
  /** The 90th percentile. */
  p90: number;
  /** The 99th percentile. */
  p99: number;
  /** The largest value (exact). */
  max: number;
}

/** Words of a histogram after its buckets: the count, the sum (ms) and the maximum (ms). */
const COUNT = BUCKETS;
const SUM = BUCKETS + 1;
const MAX = BUCKETS + 2;
/** Float64 words of one histogram. */
const HISTOGRAM_WORDS = BUCKETS + 3;

/**
 * The bytes of the workers' histograms (a run-time and a wait-time histogram each).
 *
 * @param workers The number of workers.
 * @returns The size of the SharedArrayBuffer they live in.
 */
export function histogramBytes(workers: number): number {
  return workers * 2 * HISTOGRAM_WORDS * 8;
}

/**
 * Durations in log-linear buckets: constant memory, percentiles within about 9%, mean and max exact.
 *
 * @example Usage
 * ```ts
 * import { Histogram } from "./metrics.ts";
 * const h = new Histogram();
 * for (let ms = 1; ms <= 100; ms++) h.record(ms);
 * const s = h.summary();
 * console.log(s.count, s.max, Math.abs(s.p50 - 50) / 50 < 0.1); // 100 100 true
 * ```
 */
export class Histogram {
  /** The buckets' counts, then the count, the sum and the maximum. */
  private readonly words: Float64Array;

  /**
   * @param words Where its words are (a worker's, in shared memory); a fresh array if omitted.
   */
  constructor(words: Float64Array = new Float64Array(HISTOGRAM_WORDS)) {
    this.words = words;
  }

  /** The number of values recorded. */
  private get count(): number {
    return this.words[COUNT];
  }

  /** The largest. */
  private get max(): number {
    return this.words[MAX];
  }

  /**
   * Records one duration.
   *
   * @param ms The duration in milliseconds (negative values, from clocks a hair apart, count as 0).
   */
  record(ms: number): void {
    const words = this.words;
    const value = ms > 0 ? ms : 0;
    words[bucketOf(value * 1000)]++;
    words[COUNT]++;
    words[SUM] += value;
    if (value > words[MAX]) words[MAX] = value;
  }

  /**
   * The value below which a fraction `q` of the recorded values lie.
   *
   * @param q From 0 to 1.
   * @returns Milliseconds (the bucket's geometric middle, at most the maximum); 0 if empty.
   */
  quantile(q: number): number {
    if (this.count === 0) return 0;
    const rank = q * this.count;
    const counts = this.words;
    let seen = 0;
    for (let b = 0; b < BUCKETS; b++) {
      seen += counts[b];
      if (seen >= rank && counts[b] > 0) {
        if (b === 0) return Math.min(this.max, 0.0005);
        return Math.min(this.max, middleOf(b) / 1000);
      }
    }
    return this.max;
  }

  /**
   * Adds `other`'s values to this histogram's (the pool's histogram is its workers' merged).
   *
   * @param other Another histogram.
   */
  add(other: Histogram): void {
    const words = this.words;
    const theirs = other.words;
    for (let w = 0; w < MAX; w++) words[w] += theirs[w]; // the buckets, the count and the sum
    if (theirs[MAX] > words[MAX]) words[MAX] = theirs[MAX];
  }

  /**
   * A copy, taken now (of a worker's histogram, which its worker may be updating).
   *
   * @returns A histogram of its own.
   */
  copy(): Histogram {
    return new Histogram(this.words.slice());
  }

  /**
   * Count, mean, p50, p90, p99 and max.
   *
   * @returns The summary, in milliseconds.
   */
  summary(): HistogramSummary {
    return {
      count: this.count,
      mean: this.count === 0 ? 0 : this.words[SUM] / this.count,
      p50: this.quantile(0.5),
      p90: this.quantile(0.9),
      p99: this.quantile(0.99),
      max: this.max,
    };
  }
}

/** Submissions that share one clock read (see `PoolMetrics.submitClock`). */
export const SUBMISSIONS_PER_READ = 32;

/** One worker's metrics, as `stats().metrics` reports them. */
export interface WorkerMetrics {
  /** Run times of the tasks it ran (from their start to their finish; an async task's includes its waits). */
  runTime: HistogramSummary;
  /** Wait times of the tasks it started (from their submission to their start). */
  waitTime: HistogramSummary;
  /** Busy time ÷ wall time since the pool was created, from 0 to 1. */
  utilization: number;
}

/** What `stats().metrics` holds when the pool records metrics. */
export interface MetricsStats {
  /** Every task's run time. */
  runTime: HistogramSummary;
  /** Every task's wait time. */
  waitTime: HistogramSummary;
  /** Per worker, by index. */
  workers: WorkerMetrics[];
}

/**
 * The main thread's side of a task's times: when it was submitted, written into its record's
 * `submittedAt` words (`record/fields.ts`) (a float64 of {@link epochMs}) when the task is placed. A plain
 * write, like the payload's: the task's QUEUED store and injector push publish it to the worker that
 * starts it.
 *
 * @example Usage
 * ```ts ignore
 * const stamps = new TaskStamps(buffer, layout);
 * stamps.submitted(index, entry.submittedAt);
 * ```
 */
export class TaskStamps {
  private readonly f64: Float64Array;
  private readonly recordWords: number;

  /**
   * @param buffer The pool's buffer.
   * @param layout Where its records are.
   */
  constructor(buffer: SharedArrayBuffer, layout: PoolLayout) {
    this.f64 = recordFloats(buffer, layout);
    this.recordWords = layout.recordBytes / 4;
  }

  /** The main thread placing record `index`'s task notes when it was submitted. */
  submitted(index: number, at: number): void {
    this.f64[submittedAtSlot(index, this.recordWords)] = at;
  }
}

/** The task records as float64 words. */
function recordFloats(buffer: SharedArrayBuffer, layout: PoolLayout): Float64Array {
  return new Float64Array(buffer, layout.records, (layout.shape.taskCapacity * layout.recordBytes) / 8);
}

/**
 * A worker's side: the start of each task it runs (in its own memory, by record index: a task finishes on
 * the worker that started it, nested or asynchronous alike), and its two histograms, in the workers'
 * shared histogram buffer, recorded at each finish.
 *
 * @example Usage
 * ```ts ignore
 * const recorder = new TaskRecorder(buffer, layout, histograms, workerIndex);
 * recorder.started(index, epochMs());
 * recorder.finished(index, epochMs());
 * ```
 */
export class TaskRecorder {
  private readonly f64: Float64Array;
  private readonly recordWords: number;
  /** When each record's task started on this worker (epoch ms). */
  private readonly startedAt: Float64Array;
  private readonly run: Histogram;
  private readonly wait: Histogram;

  /**
   * @param buffer The pool's buffer.
   * @param layout Where its records are.
   * @param histograms The workers' histograms ({@link histogramBytes}).
   * @param worker This worker's index.
   */
  constructor(buffer: SharedArrayBuffer, layout: PoolLayout, histograms: SharedArrayBuffer, worker: number) {
    this.f64 = recordFloats(buffer, layout);
    this.recordWords = layout.recordBytes / 4;
    this.startedAt = new Float64Array(layout.shape.taskCapacity).fill(-1);
    [this.run, this.wait] = workerHistograms(histograms, worker);
  }

  /** Record `index`'s task starts on this worker at `at`. */
  started(index: number, at: number): void {
    this.startedAt[index] = at;
  }

  /**
   * Record `index`'s task, started on this worker, finishes at `at`: its run and wait times are recorded
   * (before the DONE store that publishes them).
   */
  finished(index: number, at: number): void {
    // -1: no start noted since the last finish (a run cut short before its start was noted): it ran 0 ms.
    const noted = this.startedAt[index];
    const started = noted >= 0 ? noted : at;
    this.startedAt[index] = -1;
    this.run.record(at - started);
    this.wait.record(started - this.f64[submittedAtSlot(index, this.recordWords)]);
  }
}

/** Worker `worker`'s run-time and wait-time histograms, in the shared histogram buffer. */
function workerHistograms(histograms: SharedArrayBuffer, worker: number): [Histogram, Histogram] {
  const at = (h: number) => new Float64Array(histograms, (worker * 2 + h) * HISTOGRAM_WORDS * 8, HISTOGRAM_WORDS);
  return [new Histogram(at(0)), new Histogram(at(1))];
}

/**
 * The main thread's view of the metrics: the submission clock, the workers' histograms (merged when asked)
 * and their utilization, read from their status lines.
 *
 * @example Usage
 * ```ts ignore
 * const metrics = new PoolMetrics(2, status, epochMs());
 * console.log(metrics.stats().runTime.count); // 0
 * ```
 */
export class PoolMetrics {
  /** The workers' histograms ({@link histogramBytes}), handed to each worker at its start. */
  readonly histograms: SharedArrayBuffer;
  private readonly perWorker: { run: Histogram; wait: Histogram }[];
  private readonly status: Int32Array;
  /** When the pool was created ({@link epochMs}): the workers publish their busy periods from here. */
  readonly since: number;

  /**
   * @param workers The number of workers.
   * @param status The workers' status lines.
   * @param since The pool's creation time.
   */
  constructor(workers: number, status: Int32Array, since: number) {
    this.histograms = new SharedArrayBuffer(histogramBytes(workers));
    this.perWorker = Array.from({ length: workers }, (_, i) => {
      const [run, wait] = workerHistograms(this.histograms, i);
      return { run, wait };
    });
    this.status = status;
    this.since = since;
  }

  /**
   * The time of a submission: the clock is read for the first submission of a synchronous run and then
   * every {@link SUBMISSIONS_PER_READ} (a clock read costs 45–100 ns, a tiny task's submission about as
   * much), so a wait time can be overstated by the time those submissions took (tens of µs at most).
   *
   * @returns Epoch ms.
   */
  submitClock(): number {
    if (this.readsLeft-- > 0) return this.lastRead;
    if (this.readsLeft < -1) {
      // First read of this synchronous run: stale by the next microtask.
      queueMicrotask(() => (this.readsLeft = -2));
    }
    this.readsLeft = SUBMISSIONS_PER_READ - 1;
    this.lastRead = epochMs();
    return this.lastRead;
  }
  private readsLeft = -2;
  private lastRead = 0;

  /**
   * The summaries, and each worker's utilization now.
   *
   * @returns The metrics.
   */
  stats(): MetricsStats {
    const now = epochMs();
    const wall = Math.max(1, now - this.since);
    // Copies, so that each summary reads one state of a histogram its worker may be updating.
    const copies = this.perWorker.map((w) => ({ run: w.run.copy(), wait: w.wait.copy() }));
    const run = new Histogram();
    const wait = new Histogram();
    for (const w of copies) {
      run.add(w.run);
      wait.add(w.wait);
    }
    return {
      runTime: run.summary(),
      waitTime: wait.summary(),
      workers: copies.map((w, i) => {
        const at = i * StatusWords.count;
        let busy = mem.load(this.status, at + StatusWords.busyMs);
        const since = mem.load(this.status, at + StatusWords.busySinceMs);
        if (since >= 0) busy += Math.max(0, now - this.since - since);
        return { runTime: w.run.summary(), waitTime: w.wait.summary(), utilization: Math.min(1, busy / wall) };
      }),
    };
  }
}

/**
 * The metrics as a table, one row for the pool and one per worker: count, p50, p90, p99 and max of run and
 * wait times (ms), and utilization.
 *
 * @param stats What {@link PoolMetrics.stats} returned.
 * @returns A Markdown table.
 *
 * @example Usage
 * ```ts
 * import { Histogram, metricsTable } from "./metrics.ts";
 * const empty = new Histogram().summary();
 * const table = metricsTable({ runTime: empty, waitTime: empty, workers: [] });
 * console.log(table.split("\n")[0].startsWith("| ")); // true
 * ```
 */
export function metricsTable(stats: MetricsStats): string {
  const f = (ms: number) => (ms >= 100 ? ms.toFixed(0) : ms >= 1 ? ms.toFixed(2) : ms.toFixed(3));
  const row = (who: string, run: HistogramSummary, wait: HistogramSummary, utilization: string) =>
    `| ${who} | ${run.count} | ${f(run.p50)} | ${f(run.p90)} | ${f(run.p99)} | ${f(run.max)} | ${f(wait.p50)} | ${
      f(wait.p90)
    } | ${f(wait.p99)} | ${f(wait.max)} | ${utilization} |`;
  return [
    "| | tasks | run p50, ms | run p90 | run p99 | run max | wait p50, ms | wait p90 | wait p99 | wait max | utilization |",
    "|---|---|---|---|---|---|---|---|---|---|---|",
    row("pool", stats.runTime, stats.waitTime, ""),
    ...stats.workers.map((w, i) => row(`worker ${i}`, w.runTime, w.waitTime, `${(w.utilization * 100).toFixed(1)}%`)),
  ].join("\n");
}
