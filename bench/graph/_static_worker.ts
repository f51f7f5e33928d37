/**
 * One thread of the wavefront benchmark's hand-written static schedule (bench/graph/static_wavefront.ts):
 * a bare `node:worker_threads` thread, no pool. Thread `t` of `threads` computes the tile rows `i` with
 * `i % threads === t`, left to right; a tile waits (Atomics.wait) for the flag of the tile above, which the
 * thread of the row above sets once that tile's bottom row is in the shared array. The tile on the left is
 * this thread's own last one. The thread of the last row answers with the table's last value.
 *
 * Threads: its own (made by static_wavefront.ts); it answers each round's message with one message.
 *
 * @module
 */
import { parentPort, workerData } from "node:worker_threads";
import { type Edges, tile } from "./tasks.ts";

/** What static_wavefront.ts gives each thread once. */
export interface StaticSetup {
  a: string;
  b: string;
  size: number;
  t: number;
  threads: number;
  /** Every tile's bottom row, `size + 1` int32 a tile, row-major. */
  bottoms: SharedArrayBuffer;
  /** Every tile's flag: the round number once its bottom row is written. */
  flags: SharedArrayBuffer;
}

const setup = workerData as StaticSetup;
const { a, b, size, t, threads } = setup;
const rows = Math.ceil(a.length / size);
const cols = Math.ceil(b.length / size);
const bottoms = new Int32Array(setup.bottoms);
const flags = new Int32Array(setup.flags);

function run(round: number): number {
  let last = -1;
  for (let i = t; i < rows; i += threads) {
    let left: Edges | null = null;
    for (let j = 0; j < cols; j++) {
      let above: Edges | null = null;
      if (i > 0) {
        const k = (i - 1) * cols + j;
        // The tile above is the row-above thread's: its flag's store published its bottom row.
        for (let seen = Atomics.load(flags, k); seen !== round; seen = Atomics.load(flags, k)) {
          Atomics.wait(flags, k, seen, 1_000);
        }
        const width = Math.min(size, b.length - j * size); // (the last column's tiles may be narrower)
        above = { bottom: bottoms.subarray(k * (size + 1), k * (size + 1) + width + 1), right: new Int32Array(0) };
      }
      const aPart = a.slice(i * size, (i + 1) * size);
      const bPart = b.slice(j * size, (j + 1) * size);
      const made = tile(aPart, bPart, i * size, j * size, above, left);
      const k = i * cols + j;
      bottoms.set(made.bottom, k * (size + 1));
      Atomics.store(flags, k, round);
      Atomics.notify(flags, k);
      left = made;
      last = made.bottom[made.bottom.length - 1];
    }
  }
  return last;
}

parentPort!.on("message", (round: number) => parentPort!.postMessage(run(round)));
