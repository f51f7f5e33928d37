/**
 * Parallel mergesort of an Int32Array (or a Float64Array) in a SharedArrayBuffer: the task module of
 * `examples/sort/main.ts` and `bench/experiments/sort_native.ts`.
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
 * The arrays the sort takes: 32-bit integers or 64-bit floats, in SharedArrayBuffers. NaN only for
 * `sortByBuckets`: the merges and the split compare with `<`, which cannot place it.
 * A pool that sorts both kinds merges more slowly (on Bun 2–3×: the merge's element accesses see two types
 * of array); bench/experiments/sort_native.ts gives each kind a pool of its own.
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
    // Split on the larger run (order between equal values does not matter: they are indistinguishable, and
    // -0 and +0 are not equal here, as the binary search below goes by `before`).
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
    if (before(src[m], pivot)) l = m + 1;
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

/** The value range of a bucket sort is cut into this many cells, counted exactly before any bucket is drawn. */
const CELLS = 4096;

/** The cells' range leaves out this many of the sample's least and greatest finite values (outliers). */
const OUTLIERS = 4;

/** A bucket sort draws at most this many buckets (a bucket's number fits a byte). */
const MAX_BUCKETS = 256;

/**
 * Sorts `a[lo, hi)` by scattering it into buckets by value, in parallel; the result lands in `a`.
 *
 * Where the runtime's own sort is fast per element (JavaScriptCore's, on Bun), what it costs on a long
 * array is the array's size: a piece that fits a core's cache sorts in about 0.6 of the time per element.
 * This sort makes such pieces and needs no merge, in three passes split between `pieces` parts of the run:
 * 1. each part counts its values into `CELLS` cells of the value range (`countPieces`); the range is taken
 *    from a sample, less its few extremes, and values outside it count in the end cells, so the cells keep
 *    the values' order;
 * 2. the exact counts draw the buckets (runs of cells of about `bucketLength` values together) and each
 *    part's place in each bucket, and each part copies its values to their buckets in `b`
 *    (`scatterPieces`);
 * 3. the buckets are sorted by the runtime's sort, a share of them a worker, and copied back to `a`
 *    (`sortBuckets`).
 *
 * Values the cells cannot tell apart (a cell of more than half the run: many equal values, or a narrow
 * band whose far outliers the sample caught more than a few of) are not scattered: that run is sorted by the runtime's sort
 * on one worker, correct but not parallel. NaN counts in the last cell and -0 beside +0, so the runtime's
 * sort puts them where it puts them.
 *
 * @param a The data (a view on a SharedArrayBuffer), sorted in place.
 * @param b Scratch of the same type and length (also shared); its contents on entry do not matter.
 * @param lo First index.
 * @param hi One past the last.
 * @param pieces How many parts the passes are split into (the workers' count, say); at least 1.
 * @param bucketLength About how many values a bucket holds; at or below it, the run is sorted at once.
 */
export function sortByBuckets(
  a: Sortable,
  b: Sortable,
  lo: number,
  hi: number,
  pieces: number,
  bucketLength: number,
): void {
  const n = hi - lo;
  if (n <= bucketLength || n < 2 * pieces) {
    a.subarray(lo, hi).sort();
    return;
  }
  const [min, max, shift, scale] = cellScale(a, lo, hi);
  const counts = new Int32Array(new SharedArrayBuffer(pieces * CELLS * 4));
  countPieces(a, counts, lo, hi, 0, pieces, pieces, min, max, shift, scale);
  const perCell = new Float64Array(CELLS);
  let largest = 0;
  for (let c = 0; c < CELLS; c++) {
    let total = 0;
    for (let p = 0; p < pieces; p++) total += counts[p * CELLS + c];
    perCell[c] = total;
    if (total > largest) largest = total;
  }
  if (largest > n / 2) {
    // `a` is untouched so far (the count only read it). Not `sortParallel`: its merge keeps +0 before -0
    // and cannot place NaN, where the runtime's sort puts -0 first and NaN last.
    a.subarray(lo, hi).sort();
    return;
  }
  // Buckets: runs of cells, each closed once it holds `target` values or more.
  const target = Math.max(bucketLength, Math.ceil(n / MAX_BUCKETS));
  const cellBucket = new Uint8Array(new SharedArrayBuffer(CELLS));
  const starts: number[] = [lo];
  let filled = 0;
  for (let c = 0; c < CELLS; c++) {
    cellBucket[c] = starts.length - 1;
    filled += perCell[c];
    if (filled - (starts[starts.length - 1] - lo) >= target && starts.length < MAX_BUCKETS && c < CELLS - 1) {
      starts.push(lo + filled);
    }
  }
  const buckets = starts.length;
  starts.push(hi);
  // Each part's first place in each bucket: the bucket's start, after the earlier parts' values in it.
  const next = new Int32Array(new SharedArrayBuffer(pieces * buckets * 4));
  for (let k = 0; k < buckets; k++) next[k] = starts[k];
  for (let p = 1; p < pieces; p++) {
    for (let k = 0; k < buckets; k++) next[p * buckets + k] = next[(p - 1) * buckets + k];
    for (let c = 0; c < CELLS; c++) next[p * buckets + cellBucket[c]] += counts[(p - 1) * CELLS + c];
  }
  scatterPieces(a, b, next, cellBucket, lo, hi, 0, pieces, pieces, buckets, min, max, shift, scale);
  const bounds = new Float64Array(starts);
  sortBuckets(a, b, bounds, 0, buckets, Math.ceil(n / pieces));
}

/**
 * How `a[lo, hi)`'s values map to cells, from 1,023 evenly spaced values: their range `[min, max]` less the
 * 4 least and 4 greatest finite ones (the cells' range then ignores a few far outliers, NaN and the
 * infinities; what lies outside counts in the end cells, about a bucket's worth each on random data). An
 * int32 `x` in that range maps to `(x - min) >>> shift` (integer steps: JavaScriptCore runs this loop 2.3×
 * faster than the float64 one), a float64 to `(x - min) × scale`. A range of one value gets the scale 1, so
 * that the cells still keep the values' order.
 */
function cellScale(a: Sortable, lo: number, hi: number): [number, number, number, number] {
  const count = Math.min(1023, hi - lo);
  const step = (hi - lo) / count;
  const sample = new Float64Array(count);
  for (let i = 0; i < count; i++) sample[i] = a[lo + Math.floor(i * step)];
  sample.sort(); // (NaN last, the infinities at the ends)
  let first = 0;
  let last = count - 1;
  while (first <= last && !Number.isFinite(sample[first])) first++;
  while (last >= first && !Number.isFinite(sample[last])) last--;
  if (first > last) return [0, 0, 0, 1]; // no finite value sampled
  const trim = Math.min(OUTLIERS, (last - first) >>> 1);
  const least = sample[first + trim];
  const greatest = sample[last - trim];
  const range = greatest - least;
  let shift = 0;
  while (range / 2 ** shift >= CELLS) shift++;
  return [least, greatest, shift, range > 0 && Number.isFinite(range) ? CELLS / range : 1];
}

/**
 * The cell of a float64 `x`: the values' order kept (a larger value never lands in an earlier cell), values
 * below the range in the first cell, above it (and NaN, which the runtime's sort puts last) in the last.
 */
function cellOf(x: number, min: number, scale: number): number {
  const c = (x - min) * scale;
  return c >= 0 ? (c < CELLS ? c | 0 : CELLS - 1) : (c < 0 ? 0 : CELLS - 1);
}

/**
 * Counts `a[from, to)` into `own` by cell.
 *
 * An int32 array by integer steps: `x - min` as an int32 (`| 0`) read unsigned is the exact difference, as
 * `min <= x <= max` and `max - min < 2^32`; values outside the sample's range count in the end cells.
 */
function countPart(
  a: Sortable,
  own: Int32Array,
  from: number,
  to: number,
  min: number,
  max: number,
  shift: number,
  scale: number,
): void {
  if (a instanceof Int32Array) {
    // The bounds as int32s (the sample's are doubles: JavaScriptCore's loop then runs 3–4× slower). The cell
    // is written out here and in scatterPart, not called: through a helper, Bun's count loop ran 24% slower.
    const least = min | 0;
    const greatest = max | 0;
    for (let i = from; i < to; i++) {
      const x = a[i];
      own[x < least ? 0 : x > greatest ? CELLS - 1 : ((x - least) | 0) >>> shift]++;
    }
  } else {
    for (let i = from; i < to; i++) own[cellOf(a[i], min, scale)]++;
  }
}

/** Copies `a[from, to)` to `b` by bucket: a value of bucket `k` to `at[k]`, which then moves on by one. */
function scatterPart(
  a: Sortable,
  b: Sortable,
  at: Int32Array,
  bucketOf: Uint8Array,
  from: number,
  to: number,
  min: number,
  max: number,
  shift: number,
  scale: number,
): void {
  if (a instanceof Int32Array) {
    const least = min | 0;
    const greatest = max | 0;
    for (let i = from; i < to; i++) {
      const x = a[i];
      b[at[bucketOf[x < least ? 0 : x > greatest ? CELLS - 1 : ((x - least) | 0) >>> shift]]++] = x;
    }
  } else {
    for (let i = from; i < to; i++) {
      const x = a[i];
      b[at[bucketOf[cellOf(x, min, scale)]]++] = x;
    }
  }
}

/** Part `p` of `pieces` of `[lo, hi)`: its first index (and `p + 1`'s is its end). */
function pieceStart(lo: number, hi: number, p: number, pieces: number): number {
  return lo + Math.floor(((hi - lo) * p) / pieces);
}

/**
 * Counts the values of parts `[p0, p1)` of `a[lo, hi)` into their cells (part `p` into
 * `counts[p × CELLS, (p + 1) × CELLS)`), the parts at once.
 *
 * @param a The data.
 * @param counts Shared: a row of `CELLS` counts a part, zero on entry.
 * @param lo First index of the whole run.
 * @param hi One past its last.
 * @param p0 First part to count.
 * @param p1 One past the last.
 * @param pieces How many parts the run is cut into.
 * @param min The cells' origin (the least value of their range).
 * @param max The greatest value of their range.
 * @param shift An int32's cell is its distance from `min` shifted right by this.
 * @param scale A float64's cell is its distance from `min` times this.
 */
export function countPieces(
  a: Sortable,
  counts: Int32Array,
  lo: number,
  hi: number,
  p0: number,
  p1: number,
  pieces: number,
  min: number,
  max: number,
  shift: number,
  scale: number,
): void {
  if (p1 - p0 > 1) {
    const pm = (p0 + p1) >>> 1;
    join(
      () => countPieces(a, counts, lo, hi, p0, pm, pieces, min, max, shift, scale),
      countPieces,
      a,
      counts,
      lo,
      hi,
      pm,
      p1,
      pieces,
      min,
      max,
      shift,
      scale,
    );
    return;
  }
  const own = new Int32Array(CELLS);
  const from = pieceStart(lo, hi, p0, pieces);
  countPart(a, own, from, pieceStart(lo, hi, p0 + 1, pieces), min, max, shift, scale);
  counts.set(own, p0 * CELLS);
}

/**
 * Copies the values of parts `[p0, p1)` of `a[lo, hi)` to their buckets in `b`, the parts at once.
 *
 * @param a The data.
 * @param b Receives the buckets.
 * @param next Shared: a row of `buckets` places a part, where its next value of each bucket goes.
 * @param cellBucket Shared: each cell's bucket.
 * @param lo First index of the whole run.
 * @param hi One past its last.
 * @param p0 First part to copy.
 * @param p1 One past the last.
 * @param pieces How many parts the run is cut into.
 * @param buckets How many buckets there are.
 * @param min The cells' origin (the least value of their range).
 * @param max The greatest value of their range.
 * @param shift An int32's cell is its distance from `min` shifted right by this.
 * @param scale A float64's cell is its distance from `min` times this.
 */
export function scatterPieces(
  a: Sortable,
  b: Sortable,
  next: Int32Array,
  cellBucket: Uint8Array,
  lo: number,
  hi: number,
  p0: number,
  p1: number,
  pieces: number,
  buckets: number,
  min: number,
  max: number,
  shift: number,
  scale: number,
): void {
  if (p1 - p0 > 1) {
    const pm = (p0 + p1) >>> 1;
    join(
      () => scatterPieces(a, b, next, cellBucket, lo, hi, p0, pm, pieces, buckets, min, max, shift, scale),
      scatterPieces,
      a,
      b,
      next,
      cellBucket,
      lo,
      hi,
      pm,
      p1,
      pieces,
      buckets,
      min,
      max,
      shift,
      scale,
    );
    return;
  }
  // Private copies: the loop's loads and stores stay off shared memory (each part owns its row anyway).
  const at = next.slice(p0 * buckets, (p0 + 1) * buckets);
  const bucketOf = cellBucket.slice();
  const from = pieceStart(lo, hi, p0, pieces);
  scatterPart(a, b, at, bucketOf, from, pieceStart(lo, hi, p0 + 1, pieces), min, max, shift, scale);
}

/**
 * Sorts buckets `[k0, k1)` of `b` (bucket `k` is `b[bounds[k], bounds[k + 1])`) by the runtime's sort and
 * copies them to the same places in `a`; halves of the buckets (by their values' count) at once, down to a
 * share of `share` values or one bucket.
 *
 * @param a Receives the sorted buckets.
 * @param b Holds the buckets.
 * @param bounds Each bucket's first index, and after the last the run's end.
 * @param k0 First bucket.
 * @param k1 One past the last.
 * @param share At or below this many values, the buckets are sorted one after the other.
 */
export function sortBuckets(
  a: Sortable,
  b: Sortable,
  bounds: Float64Array,
  k0: number,
  k1: number,
  share: number,
): void {
  const from = bounds[k0];
  const to = bounds[k1];
  if (k1 - k0 > 1 && to - from > share) {
    // The bucket where half the values are passed (at least one bucket a side).
    const half = (from + to) / 2;
    let km = k0 + 1;
    while (km < k1 - 1 && bounds[km + 1] <= half) km++;
    join(() => sortBuckets(a, b, bounds, k0, km, share), sortBuckets, a, b, bounds, km, k1, share);
    return;
  }
  for (let k = k0; k < k1; k++) {
    const bucket = b.subarray(bounds[k], bounds[k + 1]);
    bucket.sort();
    a.set(bucket, bounds[k]);
  }
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
      while (j >= lo && before(x, a[j])) {
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

/**
 * Whether `x` sorts strictly before `y` in the runtime's order: `x < y`, or -0 before +0 (`<` holds them
 * equal; the runtime's sort puts -0 first). The merges and the insertion sort go by this, so that a float64
 * array leaves them sorted as the runtime's sort does.
 */
function before(x: number, y: number): boolean {
  return x < y || (x === y && 1 / x < 1 / y);
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
    if (before(y, x)) {
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
