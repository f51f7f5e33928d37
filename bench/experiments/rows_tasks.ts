/**
 * The uneven-rows benchmark's work (bench/experiments/rows.ts): rows of a Mandelbrot image of the whole set, whose
 * cost varies with how many of a row's points lie inside the set (every such point runs the full
 * iteration count): rows near the top and bottom edges cost tens of times less than rows through its middle.
 *
 * @module
 */
import { parallelFor } from "../../mod.ts";

/** The image: its size and iteration limit (the view is the whole set, fixed). */
export interface RowsView {
  width: number;
  height: number;
  maxIterations: number;
}

/**
 * The iterations spent on row `y` (the row's cost, and a checksum its caller compares).
 *
 * @param y The row.
 * @param view The image.
 * @returns The sum of the row's escape counts.
 */
export function row(y: number, view: RowsView): number {
  const { width, height, maxIterations } = view;
  const step = 3.2 / width;
  const ci = -1.2 + y * (2.4 / height);
  let sum = 0;
  for (let x = 0; x < width; x++) {
    const cr = -2.2 + x * step;
    let zr = 0;
    let zi = 0;
    let zr2 = 0;
    let zi2 = 0;
    let i = 0;
    while (i < maxIterations && zr2 + zi2 <= 4) {
      zi = 2 * zr * zi + ci;
      zr = zr2 - zi2 + cr;
      zr2 = zr * zr;
      zi2 = zi * zi;
      i++;
    }
    sum += i;
  }
  return sum;
}

/**
 * Rows `[lo, hi)`: each row's sum into `sums` (the piece `parallelFor` hands out).
 *
 * @param lo First row.
 * @param hi One past the last.
 * @param sums Where each row's sum goes (an Int32Array on a SharedArrayBuffer, one entry a row).
 * @param view The image.
 */
export function rowsInto(lo: number, hi: number, sums: Int32Array, view: RowsView): void {
  for (let y = lo; y < hi; y++) sums[y] = row(y, view);
}

/**
 * Every row in one task, split by `parallelFor` (one row a piece, balanced by stealing).
 *
 * @param sums Where each row's sum goes.
 * @param view The image.
 */
export function rowsParallelFor(sums: Int32Array, view: RowsView): void {
  parallelFor(0, view.height, 1, rowsInto, sums, view);
}
