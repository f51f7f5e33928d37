/**
 * Task metrics (the pool's `metrics: true` option): run time and wait time of every task, in histograms per
 * pool and per worker, and each worker's utilization (busy ÷ wall).
 *
 * What it owns: {@link Histogram} (log-linear buckets: 8 per power of two, so a percentile is within
 * about 9% of the true value, in constant memory), {@link PoolMetrics} (the main thread's histograms), and
 * the clock every thread shares ({@link epochMs}).
 *
 * Where the numbers come from: the main thread notes when it submits a task; the worker that starts it
 * writes the start time into the task's record, and at its finish the run time (see {@link TaskStamps}):
 * plain writes, published to the main thread with the record's outcome (the DONE store, read after the
 * completion pop). The main thread records both when it settles the task. A worker's utilization counts
 * its busy periods (from the first task after an idle spell to the next idle round), published in its
 * status line in whole milliseconds, with the start of the period under way.
 *
 * Threads: {@link PoolMetrics} on the thread that created the pool; {@link TaskStamps} on a worker (writes)
 * and the pool's thread (reads).
 *
 * @module
 */

import { mem } from "./atomics.ts";
import { type PoolLayout, StatusWords } from "./layout.ts";
import { RecordWords } from "./task.ts";

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
  return performance.timeOrigin + performance.now();
}

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
  private readonly counts = new Float64Array(BUCKETS);
  private count = 0;
  private sum = 0;
  private max = 0;

  /**
   * Records one duration.
   *
   * @param ms The duration in milliseconds (negative values, from clocks a hair apart, count as 0).
   */
  record(ms: number): void {
    const value = ms > 0 ? ms : 0;
    this.counts[bucketOf(value * 1000)]++;
    this.count++;
    this.sum += value;
    if (value > this.max) this.max = value;
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
    let seen = 0;
    for (let b = 0; b < BUCKETS; b++) {
      seen += this.counts[b];
      if (seen >= rank && this.counts[b] > 0) {
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
    for (let b = 0; b < BUCKETS; b++) this.counts[b] += other.counts[b];
    this.count += other.count;
    this.sum += other.sum;
    if (other.max > this.max) this.max = other.max;
  }

  /**
   * Count, mean, p50, p90, p99 and max.
   *
   * @returns The summary, in milliseconds.
   */
  summary(): HistogramSummary {
    return {
      count: this.count,
      mean: this.count === 0 ? 0 : this.sum / this.count,
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
 * The task-record words of a task's times: its start (a float64 of {@link epochMs}, written by the worker
 * that starts it) and its run time (a float32 of ms, written when it finishes). Plain accesses, like the
 * payload's: the worker owns the record while it runs the task, and the DONE store publishes them.
 *
 * @example Usage
 * ```ts ignore
 * const stamps = new TaskStamps(buffer, layout);
 * stamps.started(index, epochMs());
 * ```
 */
export class TaskStamps {
  private readonly f64: Float64Array;
  private readonly f32: Float32Array;
  private readonly recordBytes: number;

  /**
   * @param buffer The pool's buffer.
   * @param layout Where its records are.
   */
  constructor(buffer: SharedArrayBuffer, layout: PoolLayout) {
    const bytes = layout.shape.taskCapacity * layout.recordBytes;
    this.f64 = new Float64Array(buffer, layout.records, bytes / 8);
    this.f32 = new Float32Array(buffer, layout.records, bytes / 4);
    this.recordBytes = layout.recordBytes;
  }

  /** The worker starting record `index`'s task notes the time. */
  started(index: number, at: number): void {
    this.f64[(index * this.recordBytes) / 8 + RecordWords.startedAt / 2] = at;
  }

  /** When record `index`'s task started. */
  startedAt(index: number): number {
    return this.f64[(index * this.recordBytes) / 8 + RecordWords.startedAt / 2];
  }

  /** The worker finishing record `index`'s task notes its run time. */
  finished(index: number, at: number): void {
    this.f32[(index * this.recordBytes) / 4 + RecordWords.runMs] = at - this.startedAt(index);
  }

  /** Record `index`'s task's run time, in ms. */
  runMs(index: number): number {
    return this.f32[(index * this.recordBytes) / 4 + RecordWords.runMs];
  }
}

/**
 * The main thread's histograms, fed as tasks settle, and the workers' utilization, read from their status
 * lines.
 *
 * @example Usage
 * ```ts ignore
 * const metrics = new PoolMetrics(2, status);
 * metrics.task(0, 0.3, 1.2); // worker 0: waited 0.3 ms, ran 1.2 ms
 * console.log(metrics.stats().runTime.count); // 1
 * ```
 */
export class PoolMetrics {
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
    this.perWorker = Array.from({ length: workers }, () => ({ run: new Histogram(), wait: new Histogram() }));
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
   * A task settled after worker `worker` ran it.
   *
   * @param worker The worker that ran it.
   * @param waitMs From its submission to its start.
   * @param runMs From its start to its finish.
   */
  task(worker: number, waitMs: number, runMs: number): void {
    // Per worker only: the pool's histograms are theirs merged when asked (half the recording).
    const w = this.perWorker[worker];
    if (w === undefined) return;
    w.run.record(runMs);
    w.wait.record(waitMs);
  }

  /**
   * The summaries, and each worker's utilization now.
   *
   * @returns The metrics.
   */
  stats(): MetricsStats {
    const now = epochMs();
    const wall = Math.max(1, now - this.since);
    const run = new Histogram();
    const wait = new Histogram();
    for (const w of this.perWorker) {
      run.add(w.run);
      wait.add(w.wait);
    }
    return {
      runTime: run.summary(),
      waitTime: wait.summary(),
      workers: this.perWorker.map((w, i) => {
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
