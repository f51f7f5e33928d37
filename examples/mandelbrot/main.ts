/**
 * Mandelbrot set rendered on a pool of 2 workers (`parallelFor` over rows) into an RGB image in a
 * SharedArrayBuffer, against the same rendering on the main thread; writes `mandelbrot.png` and
 * `mandelbrot.ppm` beside this file.
 *
 * Run: `node examples/mandelbrot/main.ts`, `deno run -A examples/mandelbrot/main.ts` or
 * `bun examples/mandelbrot/main.ts`. Options: `--width=800 --height=600 --iterations=2000 --grain=4
 * --workers=2 --rounds=3`.
 *
 * @module
 */
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Pool } from "../../mod.ts";
import { median, option, printTimes, runtimeName, shares, timed, type WorkerShare } from "../_demo.ts";
import { png, ppm } from "./image.ts";
import * as tasks from "./tasks.ts";

const view: tasks.View = {
  width: option("width", 800),
  height: option("height", 600),
  maxIterations: option("iterations", 2000),
  centerX: -0.6,
  centerY: 0,
  span: 3.2,
};
const grain = option("grain", 4);
const workers = option("workers", 2);
const rounds = option("rounds", 3);
const bytes = view.width * view.height * 3;
const image = new Uint8Array(new SharedArrayBuffer(bytes));
const expected = new Uint8Array(bytes);
console.log(
  `Mandelbrot ${view.width}×${view.height}, up to ${view.maxIterations} iterations, ${grain} rows a piece; ${runtimeName()}`,
);

const warmView = { ...view, height: Math.min(view.height, 60) };
tasks.renderSequential(expected, warmView);
const sequential: number[] = [];
for (let r = 0; r < rounds; r++) sequential.push((await timed(() => tasks.renderSequential(expected, view))).ms);

await using pool = await Pool.create<typeof tasks>(new URL("./tasks.ts", import.meta.url), { workers });
await pool.run("renderParallel", image, warmView, grain);
const pooled: number[] = [];
let perWorker: WorkerShare[] = [];
for (let r = 0; r < rounds; r++) {
  image.fill(7);
  const before = pool.stats();
  pooled.push((await timed(() => pool.run("renderParallel", image, view, grain))).ms);
  perWorker = shares(before, pool.stats());
  for (let i = 0; i < bytes; i++) {
    if (image[i] !== expected[i]) throw new Error(`Cannot trust the demo as the images differ at byte ${i}`);
  }
}
const here = (name: string) => fileURLToPath(new URL(name, import.meta.url));
writeFileSync(here("./mandelbrot.png"), png(image, view.width, view.height));
writeFileSync(here("./mandelbrot.ppm"), ppm(image, view.width, view.height));
console.log(`wrote ${here("./mandelbrot.png")} and mandelbrot.ppm (pool and sequential images are identical)`);
printTimes(median(sequential), median(pooled), workers, perWorker);
