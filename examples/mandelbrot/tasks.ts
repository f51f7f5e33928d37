/**
 * Mandelbrot set, rendered in parallel into an RGB image in a SharedArrayBuffer: the task module of
 * `examples/mandelbrot/main.ts`.
 *
 * `renderRows(lo, hi, ...)` colours rows `[lo, hi)`; `renderParallel` hands the rows to `parallelFor`,
 * which splits them by recursive halving down to `grain` rows, so the costly rows through the set (every
 * point inside it runs the full iteration count) are balanced by stealing, not by a fixed partition.
 *
 * @module
 */
import { parallelFor } from "../../mod.ts";

/** The view and the image: width, height, iteration limit, centre and width in the complex plane. */
export interface View {
  width: number;
  height: number;
  maxIterations: number;
  centerX: number;
  centerY: number;
  /** Width of the image in the complex plane. */
  span: number;
}

/**
 * Colours rows `[lo, hi)` of the image.
 *
 * @param lo First row.
 * @param hi One past the last row.
 * @param rgb The image, 3 bytes a pixel, row after row (a view on a SharedArrayBuffer).
 * @param view What to draw.
 */
export function renderRows(lo: number, hi: number, rgb: Uint8Array, view: View): void {
  const { width, height, maxIterations, centerX, centerY, span } = view;
  const step = span / width;
  const x0 = centerX - span / 2;
  const y0 = centerY - (step * height) / 2;
  for (let row = lo; row < hi; row++) {
    const ci = y0 + row * step;
    let at = row * width * 3;
    for (let col = 0; col < width; col++) {
      const cr = x0 + col * step;
      let zr = 0;
      let zi = 0;
      let zr2 = 0;
      let zi2 = 0;
      let i = 0;
      while (i < maxIterations && zr2 + zi2 <= 256) {
        zi = 2 * zr * zi + ci;
        zr = zr2 - zi2 + cr;
        zr2 = zr * zr;
        zi2 = zi * zi;
        i++;
      }
      if (i === maxIterations) {
        rgb[at] = 0;
        rgb[at + 1] = 0;
        rgb[at + 2] = 0;
      } else {
        // Smooth colouring: a fractional escape count, through a cosine palette.
        const t = (i + 1 - Math.log2(Math.log2(zr2 + zi2) / 2)) * 0.045;
        rgb[at] = 255 * (0.5 + 0.5 * Math.cos(6.2832 * (t + 0.0)));
        rgb[at + 1] = 255 * (0.5 + 0.5 * Math.cos(6.2832 * (t + 0.15)));
        rgb[at + 2] = 255 * (0.5 + 0.5 * Math.cos(6.2832 * (t + 0.25)));
      }
      at += 3;
    }
  }
}

/**
 * Renders the whole image in parallel: `parallelFor` over the rows.
 *
 * @param rgb The image (a view on a SharedArrayBuffer).
 * @param view What to draw.
 * @param grain Rows per piece, at most.
 */
export function renderParallel(rgb: Uint8Array, view: View, grain: number): void {
  parallelFor(0, view.height, grain, renderRows, rgb, view);
}

/**
 * The sequential program: every row, in order, on this thread.
 *
 * @param rgb The image.
 * @param view What to draw.
 */
export function renderSequential(rgb: Uint8Array, view: View): void {
  renderRows(0, view.height, rgb, view);
}
