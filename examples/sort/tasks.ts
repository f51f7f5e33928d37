/**
 * Parallel mergesort of an Int32Array (or a Float64Array) in a SharedArrayBuffer: the task module of
 * `examples/sort/main.ts` and `bench/sort_native.ts`.
 *
 * The array `a` and a scratch array `b` of the same length live in SharedArrayBuffers, so every worker
 * sorts and merges the same memory (views on a SharedArrayBuffer cross threads by reference). Mergesort
 * ping-pongs between them: to leave `[lo, hi)` sorted in `a`, sort each half into `b` and merge back into
 * `a` (and the other way round); a leaf sorts by insertion in `a` and copies to `b` if that is its target.
 *
 * The parallel version forks the right half of each split with `join`, and also merges in parallel (a
 * sequential merge of the top level would cost as much as a whole level of the tree and cap the speedup):
 * the middle element of the larger run is placed by a binary search in the smaller, splitting the merge
 * into two independent merges, until a merge is smaller than the cutoff.
 *
 * Against the runtime's own sort, the leaves can be sorted by that sort instead (`native` 1): a piece per
 * worker sorted at once, then merged in parallel.
 *
 * @module
 */
import { join } from "../../mod.ts";

/** Runs at or below this length are sorted by insertion. */
const INSERTION = 24;

/**
 * The arrays the sort takes: 32-bit integers or 64-bit floats (no NaN), in SharedArrayBuffers.
 * A pool that sorts both kinds merges more slowly (on Bun 2–3×: the merge's element accesses see two types
 * of array); bench/sort_native.ts gives each kind a pool of its own.
 */
export type Sortable = Int32Array | Float64Array;

/**
 * Sorts `a[lo, hi)` in parallel; the result lands in `a` (or `b` when `intoB` is 1).
 *
 * With `native` 1, a run at or below the cutoff is sorted by the runtime's own sort
 * (`TypedArray.prototype.sort` on a view of it: the call a user makes instead), on a piece per worker at
 * once; the pieces are then merged in parallel, as the mergesort's runs are.
 *
 * @param a The data (a view on a SharedArrayBuffer).
 * @param b Scratch of the same type and length (also shared); its contents on entry do not matter.
 * @param lo First index.
 * @param hi One past the last.
 * @param intoB 1 to leave the sorted run in `b`, 0 to leave it in `a`.
 * @param cutoff At or below this length, a run is sorted sequentially (and a merge is sequential).
 * @param native 1 to sort those runs with the runtime's sort, 0 (the default) with this module's mergesort.
 */
export function sortParallel(
  a: Sortable,
  b: Sortable,
  lo: number,
  hi: number,
  intoB: number,
  cutoff: number,
  native = 0,
): void {
  if (hi - lo <= cutoff) {
    if (native === 0) sortRun(a, b, lo, hi, intoB === 1);
    else if (intoB === 1) {
      b.set(a.subarray(lo, hi), lo);
      b.subarray(lo, hi).sort();
    } else a.subarray(lo, hi).sort();
    return;
  }
  const mid = (lo + hi) >>> 1;
  const halvesIn = 1 - intoB;
  join(
    () => sortParallel(a, b, lo, mid, halvesIn, cutoff, native),
    sortParallel,
    a,
    b,
    mid,
    hi,
    halvesIn,
    cutoff,
    native,
  );
  if (intoB === 1) mergeParallel(a, b, lo, mid, mid, hi, lo, cutoff);
  else mergeParallel(b, a, lo, mid, mid, hi, lo, cutoff);
}

/**
 * Merges the sorted runs `src[lo1, hi1)` and `src[lo2, hi2)` into `dst` from `out` on, in parallel.
 *
 * @param src Holds both runs.
 * @param dst Receives the merged run.
 * @param lo1 First run's start.
 * @param hi1 First run's end.
 * @param lo2 Second run's start.
 * @param hi2 Second run's end.
 * @param out Where the merged run starts in `dst`.
 * @param cutoff At or below this total length, the sequential merge runs.
 */
export function mergeParallel(
  src: Sortable,
  dst: Sortable,
  lo1: number,
  hi1: number,
  lo2: number,
  hi2: number,
  out: number,
  cutoff: number,
): void {
  const n1 = hi1 - lo1;
  const n2 = hi2 - lo2;
  if (n1 + n2 <= cutoff) {
    merge(src, dst, lo1, hi1, lo2, hi2, out);
    return;
  }
  if (n1 < n2) {
    // Split on the larger run (order between equal ints does not matter: they are indistinguishable).
    mergeParallel(src, dst, lo2, hi2, lo1, hi1, out, cutoff);
    return;
  }
  const m1 = (lo1 + hi1) >>> 1;
  const pivot = src[m1];
  // First index in the second run whose element is >= pivot.
  let l = lo2;
  let h = hi2;
  while (l < h) {
    const m = (l + h) >>> 1;
    if (src[m] < pivot) l = m + 1;
    else h = m;
  }
  const m2 = l;
  const at = out + (m1 - lo1) + (m2 - lo2);
  dst[at] = pivot;
  join(
    () => mergeParallel(src, dst, lo1, m1, lo2, m2, out, cutoff),
    mergeParallel,
    src,
    dst,
    m1 + 1,
    hi1,
    m2,
    hi2,
    at + 1,
    cutoff,
  );
}

/**
 * Sorts `a[lo, hi)` by splitting it by value, in parallel; the result lands in `a`.
 *
 * A run longer than `cutoff` is split around a pivot (the median of a sample of it) into the values below
 * the pivot and the rest, and the two parts are sorted at once, each by the same recursion; a run at or
 * below the cutoff is sorted by the runtime's own sort. Against `sortParallel` with `native` 1 this
 * trades the merge for a partition: both are one pass over the data split between the workers, but the
 * parts here need no merge afterwards, and the runtime's sort runs on each part where it lies.
 *
 * The split itself runs on both halves of the run at once (`splitHalf`): each half writes its low values
 * from the front of its range of `b` and the rest from the back; the two low pieces are then copied to the
 * front of the run in `a`, the two high pieces after them (`place`, on both sides at once).
 *
 * A sample whose median is a poor pivot (a side of more than seven eighths: many equal values, say) is
 * not split: that run is sorted by `sortParallel` with native leaves instead, which splits by position and
 * does not care what the values are.
 *
 * @param a The data (a view on a SharedArrayBuffer), sorted in place.
 * @param b Scratch of the same type and length (also shared); its contents on entry do not matter.
 * @param lo First index.
 * @param hi One past the last.
 * @param cutoff At or below this length, a run is sorted by the runtime's sort on one worker.
 */
export function sortBySplit(a: Sortable, b: Sortable, lo: number, hi: number, cutoff: number): void {
  const n = hi - lo;
  if (n <= cutoff) {
    a.subarray(lo, hi).sort();
    return;
  }
  const pivot = samplePivot(a, lo, hi);
  const mid = (lo + hi) >>> 1;
  const [low1, low2] = join(() => splitHalf(a, b, lo, mid, pivot), splitHalf, a, b, mid, hi, pivot);
  const lows = low1 + low2;
  if (lows < n / 8 || lows > n - n / 8) {
    // `a` is untouched so far (the split wrote only `b`).
    sortParallel(a, b, lo, hi, 0, Math.ceil(n / 4), 1);
    return;
  }
  // b[lo, lo + low1) and b[mid, mid + low2) hold the values below the pivot; b[lo + low1, mid) and
  // b[mid + low2, hi) the rest. Both sides are placed before either is sorted: a side's sort uses its own
  // range of `b` as scratch, which holds pieces of the other side until they are placed.
  const cut = lo + lows;
  join(
    () => place(a, b, lo, low1, mid, low2, lo),
    place,
    a,
    b,
    lo + low1,
    mid - lo - low1,
    mid + low2,
    hi - mid - low2,
    cut,
  );
  join(() => sortBySplit(a, b, lo, cut, cutoff), sortBySplit, a, b, cut, hi, cutoff);
}

/**
 * The median of 255 values of `a[lo, hi)` taken at evenly spaced places: the pivot of a split.
 */
function samplePivot(a: Sortable, lo: number, hi: number): number {
  const count = Math.min(255, hi - lo);
  const sample = new Float64Array(count);
  const step = (hi - lo) / count;
  for (let i = 0; i < count; i++) sample[i] = a[lo + Math.floor(i * step + step / 2)];
  sample.sort();
  return sample[count >>> 1];
}

/**
 * Splits `a[lo, hi)` into `b[lo, hi)`: the values below `pivot` from the front, the rest from the back.
 *
 * Without a branch on the value (random data would mispredict half of them): each value is written both at
 * the front and at the back of the gap still unwritten, and only the side it belongs to moves past it; the
 * other write lands in the gap and is written over later.
 *
 * @param a The data.
 * @param b Receives the split.
 * @param lo First index.
 * @param hi One past the last.
 * @param pivot The value that splits.
 * @returns How many values are below the pivot (they are `b[lo, lo + returned)`).
 */
export function splitHalf(a: Sortable, b: Sortable, lo: number, hi: number, pivot: number): number {
  let front = lo;
  let back = hi - 1;
  for (let i = lo; i < hi; i++) {
    const x = a[i];
    b[front] = x;
    b[back] = x;
    const below = (x < pivot) as unknown as number; // (a boolean in arithmetic: 1 or 0)
    front += below;
    back -= 1 - below;
  }
  return front - lo;
}

/**
 * Copies the two pieces `b[from1, from1 + length1)` and `b[from2, from2 + length2)` to `a` from `to` on,
 * one after the other.
 *
 * @param a The data.
 * @param b Holds the pieces.
 * @param from1 The first piece's start in `b`.
 * @param length1 Its length.
 * @param from2 The second piece's start in `b`.
 * @param length2 Its length.
 * @param to Where the run starts in `a`.
 */
export function place(
  a: Sortable,
  b: Sortable,
  from1: number,
  length1: number,
  from2: number,
  length2: number,
  to: number,
): void {
  a.set(b.subarray(from1, from1 + length1), to);
  a.set(b.subarray(from2, from2 + length2), to + length1);
}

/**
 * The sequential program: mergesort of the whole array, leaving the result in `a`.
 *
 * @param a The data.
 * @param b Scratch of the same length.
 */
export function sortSequential(a: Int32Array, b: Int32Array): void {
  sortRun(a, b, 0, a.length, false);
}

/** Sequential mergesort of `[lo, hi)`, leaving the run in `b` if `intoB`, else in `a`. */
function sortRun(a: Sortable, b: Sortable, lo: number, hi: number, intoB: boolean): void {
  if (hi - lo <= INSERTION) {
    for (let i = lo + 1; i < hi; i++) {
      const x = a[i];
      let j = i - 1;
      while (j >= lo && a[j] > x) {
        a[j + 1] = a[j];
        j--;
      }
      a[j + 1] = x;
    }
    if (intoB) { for (let i = lo; i < hi; i++) b[i] = a[i]; }
    return;
  }
  const mid = (lo + hi) >>> 1;
  sortRun(a, b, lo, mid, !intoB);
  sortRun(a, b, mid, hi, !intoB);
  if (intoB) merge(a, b, lo, mid, mid, hi, lo);
  else merge(b, a, lo, mid, mid, hi, lo);
}

/** Sequential merge of `src[lo1, hi1)` and `src[lo2, hi2)` into `dst` from `out`. */
function merge(
  src: Sortable,
  dst: Sortable,
  lo1: number,
  hi1: number,
  lo2: number,
  hi2: number,
  out: number,
): void {
  let i = lo1;
  let j = lo2;
  let k = out;
  while (i < hi1 && j < hi2) {
    const x = src[i];
    const y = src[j];
    if (y < x) {
      dst[k++] = y;
      j++;
    } else {
      dst[k++] = x;
      i++;
    }
  }
  while (i < hi1) dst[k++] = src[i++];
  while (j < hi2) dst[k++] = src[j++];
}

/**
 * Fills `a` with pseudo-random int32 values from `seed` (xorshift32), the same on every run.
 *
 * @param a The array to fill.
 * @param seed A non-zero int32.
 */
export function fillRandom(a: Int32Array, seed: number): void {
  let s = seed | 0 || 1;
  for (let i = 0; i < a.length; i++) {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    a[i] = s;
  }
}
