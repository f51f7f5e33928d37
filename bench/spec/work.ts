/**
 * The task module of the specification's benchmark (bench/spec/run.ts): the work of its four workloads,
 * for filch's workers, and the same bodies for the peers (bench/spec/peer_bare.ts and peer_piscina.ts
 * import them, so every contender runs the same code).
 *
 * What it owns: the ~1 µs micro-task ({@link micro}, a loop whose length the caller calibrates), the clock
 * spin of the heterogeneous workload ({@link mixed}), the fork-join quicksort ({@link quicksortParallel})
 * and its sequential twin ({@link quicksortSequential}), and the steal-latency probe ({@link stealProbe}).
 * Every task returns something the caller checks. Threads: any; `currentTask()` answers on a pool worker
 * only (elsewhere a task reports worker -1).
 *
 * @module
 */
import { currentTask, join } from "../../mod.ts";
import { mem } from "../../lib/protocol/atomics.ts";

/**
 * About 1 µs of arithmetic when `iters` is calibrated so (run.ts does, on the main thread): `iters` rounds
 * of an int32 hash. Returns `i + 1`; the comparison with the hash keeps the loop from being removed (it is
 * never equal: the hash of any `i` below 2^31 with a positive `iters` is checked by the caller's result).
 *
 * @param i The task's index.
 * @param iters Rounds of the loop.
 * @returns `i + 1`.
 *
 * @example Usage
 * ```ts
 * import { micro } from "./work.ts";
 * console.log(micro(41, 10)); // 42
 * ```
 */
export function micro(i: number, iters: number): number {
  let x = i | 0;
  for (let k = 0; k < iters; k++) x = (Math.imul(x, 0x9e3779b1) + k) | 0;
  return x === 0x7fffffff ? -1 : i + 1;
}

/**
 * Busy-spins `us` microseconds by the clock (a sleeping task would free its core).
 *
 * @param us How long.
 * @returns The loop's count.
 *
 * @example Usage
 * ```ts
 * import { spin } from "./work.ts";
 * console.log(spin(10) >= 0); // true
 * ```
 */
export function spin(us: number): number {
  const end = performance.now() + us / 1000;
  let n = 0;
  while (performance.now() < end) n++;
  return n;
}

/**
 * One task of the heterogeneous workload: `kind` 0 runs {@link micro} (`iters` rounds), 1 spins 100 µs, 2
 * spins 10 ms (each ÷ `scale`, for a quick run). Returns where and when it ran, on the clock all threads
 * share (`performance.timeOrigin + performance.now()`), so the caller can find each worker's active time
 * and idle gaps.
 *
 * @param i The task's index (returned, to check).
 * @param kind 0, 1 or 2.
 * @param iters The micro loop's rounds.
 * @param scale Divides the spins' lengths (1 for the specification's sizes).
 * @param worker The worker index to report when not on a pool worker (the bare peers pass theirs).
 * @returns `[i, worker, start, end]`, times in ms.
 *
 * @example Usage
 * ```ts
 * import { mixed } from "./work.ts";
 * const [i, worker, start, end] = mixed(7, 1, 10, 100, 3);
 * console.log(i, worker, end >= start); // 7 3 true
 * ```
 */
export function mixed(i: number, kind: number, iters: number, scale: number, worker = -1): number[] {
  const start = performance.timeOrigin + performance.now();
  if (kind === 0) micro(i, iters);
  else spin((kind === 1 ? 100 : 10_000) / scale);
  const end = performance.timeOrigin + performance.now();
  return [i, currentTask()?.worker ?? worker, start, end];
}

/** Runs at or below this length are sorted by insertion. */
const INSERTION = 16;

/**
 * Sorts `a[lo, hi)` in place on this thread: quicksort (median-of-three pivot, Hoare partition, the
 * smaller side recursed, insertion sort below 16).
 *
 * @param a The data.
 * @param lo First index.
 * @param hi One past the last.
 *
 * @example Usage
 * ```ts
 * import { quicksortSequential } from "./work.ts";
 * const a = Int32Array.from([3, 1, 2]);
 * quicksortSequential(a, 0, 3);
 * console.log([...a]); // [1, 2, 3]
 * ```
 */
export function quicksortSequential(a: Int32Array, lo: number, hi: number): void {
  while (hi - lo > INSERTION) {
    const p = partition(a, lo, hi);
    if (p - lo < hi - p) {
      quicksortSequential(a, lo, p);
      lo = p;
    } else {
      quicksortSequential(a, p, hi);
      hi = p;
    }
  }
  for (let i = lo + 1; i < hi; i++) {
    const v = a[i];
    let j = i - 1;
    while (j >= lo && a[j] > v) {
      a[j + 1] = a[j];
      j--;
    }
    a[j + 1] = v;
  }
}

/** The median of `a[lo]`, `a[mid]` and `a[hi - 1]`: both partitions' pivot. */
function medianOfThree(a: Int32Array, lo: number, mid: number, hi: number): number {
  const x = a[lo], y = a[mid], z = a[hi - 1];
  return x < y ? (y < z ? y : x < z ? z : x) : (x < z ? x : y < z ? z : y);
}

/**
 * Splits `a[lo, hi)` (more than 3 long) around a median-of-three pivot: returns `p`, lo < p < hi, with
 * every element of `[lo, p)` ≤ every element of `[p, hi)`.
 */
function partition(a: Int32Array, lo: number, hi: number): number {
  const mid = (lo + hi) >>> 1;
  const pivot = medianOfThree(a, lo, mid, hi);
  let i = lo - 1;
  let j = hi;
  for (;;) {
    do i++; while (a[i] < pivot);
    do j--; while (a[j] > pivot);
    if (i >= j) return j + 1;
    const t = a[i];
    a[i] = a[j];
    a[j] = t;
  }
}

/**
 * Sorts `a[lo, hi)` in place (a view on a SharedArrayBuffer) by fork-join quicksort: partition (in
 * parallel from 2^20 elements, {@link partitionParallel}; the sequential twin's partition below), then the
 * right part forked with `join` while this thread sorts the left; at or below `cutoff` elements, the
 * sequential quicksort. Returns what the benchmark reports: `[subtasks, depth, ...elements per worker]`,
 * where subtasks counts the forks, depth the deepest fork, and a worker's elements the ones it partitioned
 * or sorted (its share of the work).
 *
 * @param a The data.
 * @param lo First index.
 * @param hi One past the last.
 * @param cutoff At or below this length, sequential.
 * @param workers The pool's workers (the length of the per-worker counts).
 * @returns `[subtasks, depth, ...elements per worker]`.
 *
 * @example Usage
 * ```ts
 * import { quicksortParallel } from "./work.ts";
 * const a = Int32Array.from([5, 3, 4, 1, 2]);
 * quicksortParallel(a, 0, 5, 2, 1);
 * console.log([...a]); // [1, 2, 3, 4, 5]
 * ```
 */
export function quicksortParallel(a: Int32Array, lo: number, hi: number, cutoff: number, workers: number): number[] {
  const me = currentTask()?.worker ?? 0;
  if (hi - lo <= cutoff) {
    quicksortSequential(a, lo, hi);
    const counts = [0, 0, ...new Array<number>(workers).fill(0)];
    counts[2 + me] = hi - lo;
    return counts;
  }
  // Elements partitioned here, by the worker that partitioned them (a parallel partition's halves may run
  // on two).
  const partitioned = new Array<number>(workers).fill(0);
  const p = hi - lo >= PARALLEL_PARTITION_FROM ? partitionParallel(a, lo, hi, partitioned) : partition(a, lo, hi);
  if (hi - lo < PARALLEL_PARTITION_FROM) partitioned[me] += hi - lo;
  const [left, right] = join(
    () => quicksortParallel(a, lo, p, cutoff, workers),
    quicksortParallel,
    a,
    p,
    hi,
    cutoff,
    workers,
  );
  const counts = [left[0] + right[0] + 1, Math.max(left[1], right[1]) + 1];
  for (let w = 0; w < workers; w++) counts.push(left[2 + w] + right[2 + w] + partitioned[w]);
  return counts;
}

/**
 * From this many elements, a range is partitioned in parallel ({@link partitionParallel}): the top levels
 * of a sort of millions, where a partition on one worker would leave the others idle (at 10M on 2
 * workers, the first partition alone was about 5% of the sequential sort's time).
 */
const PARALLEL_PARTITION_FROM = 1 << 20;
/** From this many elements, the block swap of {@link partitionParallel} is split over a join too. */
const PARALLEL_SWAP_FROM = 1 << 18;

/**
 * Partitions `a[lo, hi)` as {@link partition} does (returns `p`, lo < p < hi, every element of `[lo, p)` ≤
 * every element of `[p, hi)`), its two halves in parallel around one median-of-three pivot: each half is
 * split around the pivot (a join), then the half's large part on the left and the second half's small part
 * are exchanged (the shorter of the two, block against block), which leaves every small element before
 * every large one. Counts the elements each worker partitioned into `partitioned`.
 */
function partitionParallel(a: Int32Array, lo: number, hi: number, partitioned: number[]): number {
  const mid = (lo + hi) >>> 1;
  const pivot = medianOfThree(a, lo, mid, hi);
  const [[q1, w1], [q2, w2]] = join(() => partitionAround(a, lo, mid, pivot), partitionAround, a, mid, hi, pivot);
  partitioned[w1] += mid - lo;
  partitioned[w2] += hi - mid;
  // [lo, q1) ≤ pivot ≤ [q1, mid) and [mid, q2) ≤ pivot ≤ [q2, hi): exchange the first k of [q1, mid) with
  // the last k of [mid, q2), k the shorter's length; then [lo, p) ≤ pivot ≤ [p, hi).
  const k = Math.min(mid - q1, q2 - mid);
  if (k >= PARALLEL_SWAP_FROM) {
    const half = k >>> 1;
    join(() => swapBlocks(a, q1, q2 - k, half), swapBlocks, a, q1 + half, q2 - k + half, k - half);
  } else {
    swapBlocks(a, q1, q2 - k, k);
  }
  const p = q1 + (q2 - mid);
  if (p > lo && p < hi) return p;
  // Every element on one side (many equal to the pivot): a partition of one worker, which always splits.
  partitioned[currentTask()?.worker ?? 0] += hi - lo;
  return partition(a, lo, hi);
}

/**
 * Splits `a[lo, hi)` around `pivot` (which need not be in it): returns `[q, worker]`, every element of
 * `[lo, q)` ≤ pivot ≤ every element of `[q, hi)`, and the worker that ran it. One half of
 * {@link partitionParallel}; a task function so that its join can hand it to another worker.
 *
 * @param a The data.
 * @param lo First index.
 * @param hi One past the last.
 * @param pivot The value to split around.
 * @returns `[q, worker]`.
 *
 * @example Usage
 * ```ts
 * import { partitionAround } from "./work.ts";
 * const a = Int32Array.from([5, 1, 4, 2]);
 * console.log(partitionAround(a, 0, 4, 3)[0]); // 2: [2, 1] then [4, 5]
 * ```
 */
export function partitionAround(a: Int32Array, lo: number, hi: number, pivot: number): number[] {
  const worker = currentTask()?.worker ?? 0;
  let i = lo;
  let j = hi - 1;
  // Bounded until the first exchange: the pivot need not be in the range, so nothing stops a scan yet.
  while (i <= j && a[i] < pivot) i++;
  while (i <= j && a[j] > pivot) j--;
  // No exchange needed: [lo, i) < pivot < (j, hi), and a[i] = pivot if i = j.
  if (i >= j) return [i, worker];
  for (;;) {
    const t = a[i];
    a[i] = a[j];
    a[j] = t;
    // Hoare's scans, unbounded as partition's: the two exchanged elements stop them (a[j] ≥ pivot right
    // of i, a[i] ≤ pivot left of j).
    do i++; while (a[i] < pivot);
    do j--; while (a[j] > pivot);
    // [lo, i) ≤ pivot, a[j] ≤ pivot with j ≤ i, and (j, hi) ≥ pivot.
    if (i >= j) return [j + 1, worker];
  }
}

/**
 * Exchanges `a[x, x + k)` with `a[y, y + k)` (two ranges that do not overlap): the block swap of
 * {@link partitionParallel}, a task function so that its join can hand half of it to another worker.
 *
 * @param a The data.
 * @param x The first range's start.
 * @param y The second range's start.
 * @param k Their length.
 *
 * @example Usage
 * ```ts
 * import { swapBlocks } from "./work.ts";
 * const a = Int32Array.from([1, 2, 3, 4]);
 * swapBlocks(a, 0, 2, 2);
 * console.log([...a]); // [3, 4, 1, 2]
 * ```
 */
export function swapBlocks(a: Int32Array, x: number, y: number, k: number): void {
  for (let i = 0; i < k; i++) {
    const t = a[x + i];
    a[x + i] = a[y + i];
    a[y + i] = t;
  }
}

/**
 * The steal-latency probe: forks a task that sets `flag[0]` at its start, and spins in its own half until
 * it sees the flag (or `patienceMs` pass). The fork sits in this worker's deque, so another worker that
 * sets the flag stole it: the time from just before the fork's push to seeing the flag is the push-to-start
 * latency of a steal, plus one read of a shared word, all on this thread's clock. Returns
 * `[µs, 1 if stolen else 0]` (not stolen: this worker ran the fork itself after its half gave up).
 * With `warm` 1 the probe first forks once, unmeasured, so that the measured fork finds the thief
 * searching (it has just run that fork) rather than asleep. The time read before each check of the flag
 * makes the figure at most one loop turn (a clock read and a load, tens of ns) short.
 *
 * @param flag Three words on a SharedArrayBuffer: [started, the thief's worker index + 1, warm fork taken].
 * @param patienceMs How long the half spins for the flag.
 * @param warm 1 to find the thief searching, 0 as it is (asleep when the pool was idle).
 * @returns `[µs from push to the thief's start, stolen]`.
 *
 * @example Usage
 * ```ts
 * import { stealProbe } from "./work.ts";
 * // Off a pool, join runs the fork inline: nothing is stolen.
 * console.log(stealProbe(new Int32Array(new SharedArrayBuffer(12)), 1, 0)[1]); // 0
 * ```
 */
export function stealProbe(flag: Int32Array, patienceMs: number, warm: number): number[] {
  if (warm === 0) return stealOnce(flag, patienceMs);
  // A first fork wakes the other worker, which steals it; the fork only sets flag[2] and returns, and
  // this half, seeing it, pushes the measured fork at once: the thief is then back in its search. (After
  // a whole join instead, this worker's wait for the fork's result lets the thief pass its spin into a
  // doze, and the probe measured the doze: 70–140 µs.)
  mem.store(flag, 2, 0);
  const [measured] = join(
    () => {
      const giveUp = performance.now() + patienceMs;
      while (mem.load(flag, 2) === 0 && performance.now() < giveUp) {
        // wait for the thief to take the first fork
      }
      return stealOnce(flag, patienceMs);
    },
    markWarm,
    flag,
  );
  return measured;
}

/**
 * The warm probe's first fork: notes that a thief took it.
 *
 * @param flag The probe's words.
 * @returns 0.
 *
 * @example Usage
 * ```ts
 * import { markWarm } from "./work.ts";
 * const flag = new Int32Array(new SharedArrayBuffer(12));
 * markWarm(flag);
 * console.log(flag[2]); // 1
 * ```
 */
export function markWarm(flag: Int32Array): number {
  mem.store(flag, 2, 1);
  return 0;
}

/** One fork of {@link stealProbe}: `[µs from push to the thief's start, stolen]`. */
function stealOnce(flag: Int32Array, patienceMs: number): number[] {
  const me = currentTask()?.worker ?? -1;
  mem.store(flag, 0, 0);
  mem.store(flag, 1, 0);
  let seenAt = NaN;
  const start = performance.now();
  join(
    () => {
      const giveUp = start + patienceMs;
      for (;;) {
        const now = performance.now();
        if (mem.load(flag, 0) !== 0) {
          seenAt = now;
          return;
        }
        if (now > giveUp) return;
      }
    },
    markStart,
    flag,
  );
  const thief = mem.load(flag, 1) - 1;
  const stolen = thief !== me && Number.isFinite(seenAt);
  return [stolen ? (seenAt - start) * 1000 : NaN, stolen ? 1 : 0];
}

/**
 * The probe's measured fork: notes that it started, and where.
 *
 * @param flag The probe's words.
 * @returns 0.
 *
 * @example Usage
 * ```ts
 * import { markStart } from "./work.ts";
 * const flag = new Int32Array(new SharedArrayBuffer(12));
 * markStart(flag);
 * console.log(flag[0], flag[1]); // 1 -1 (off a pool: no worker)
 * ```
 */
export function markStart(flag: Int32Array): number {
  mem.store(flag, 1, (currentTask()?.worker ?? -2) + 1);
  mem.store(flag, 0, 1);
  return 0;
}
