/**
 * The four fork-join demos of `examples/` as benchmark workloads (bench/forkjoin_bench.ts, and
 * bench/lazy_join.ts): each with its sequential program, its run on a pool, a check that they agree, and a
 * small warm-up run.
 *
 * @module
 */
import type { Pool } from "../lib/pool.ts";
import * as tasks from "./forkjoin_tasks.ts";

/** A demo: a sequential run on the main thread, a pool run, and a check that they agree. */
export interface Demo {
  name: string;
  /** Untimed: fresh input for the next run of that side (the sort's unsorted data). */
  prepare?(side: "sequential" | "pool"): void;
  /** Runs the sequential program; returns what the pool's run must match. */
  sequential(): unknown;
  /** Runs the parallel program on the pool. */
  parallel(pool: Pool<typeof tasks>): Promise<unknown>;
  /** Throws unless the pool's outcome equals the sequential one. */
  check(sequential: unknown, parallel: unknown): void;
  /** A small run of both, to warm up the code on every thread. */
  warm(pool: Pool<typeof tasks>): Promise<void>;
}

function same(what: string) {
  return (a: unknown, b: unknown) => {
    if (a !== b) throw new Error(`Cannot trust the benchmark as ${what} gave ${String(a)} and ${String(b)}`);
  };
}

export function demos(): Demo[] {
  const fibN = 35;
  const fibCutoff = 20;
  const sortN = 10_000_000;
  const sortCutoff = 32_768;
  // Each side sorts its own copy of the same data, refilled (untimed) before every run.
  const data = new Int32Array(new SharedArrayBuffer(sortN * 4));
  const scratch = new Int32Array(new SharedArrayBuffer(sortN * 4));
  const sequentialData = new Int32Array(new SharedArrayBuffer(sortN * 4));
  const sequentialScratch = new Int32Array(new SharedArrayBuffer(sortN * 4));
  const view: tasks.View = { width: 800, height: 600, maxIterations: 2000, centerX: -0.6, centerY: 0, span: 3.2 };
  const image = new Uint8Array(new SharedArrayBuffer(view.width * view.height * 3));
  const imageSequential = new Uint8Array(view.width * view.height * 3);
  const tree = tasks.buildTree(2_000_000, 0x5eed);
  const treeWork = 40;
  const treeCutoff = 20_000;
  return [
    {
      name: `fib(${fibN}), cutoff ${fibCutoff}`,
      sequential: () => tasks.fibSequential(fibN),
      parallel: (pool) => pool.run("fib", fibN, fibCutoff),
      check: same("fib"),
      warm: async (pool) => {
        tasks.fibSequential(fibN - 5);
        await pool.run("fib", fibN - 5, fibCutoff);
      },
    },
    {
      name: "mergesort 10M int32",
      prepare: (side) => tasks.fillRandom(side === "sequential" ? sequentialData : data, 20261121),
      sequential: () => {
        tasks.sortSequential(sequentialData, sequentialScratch);
        return 0;
      },
      parallel: (pool) => pool.run("sortParallel", data, scratch, 0, sortN, 0, sortCutoff),
      check: () => {
        for (let i = 0; i < sortN; i++) {
          if (data[i] !== sequentialData[i]) {
            throw new Error(`Cannot trust the benchmark as the sorts differ at ${i}`);
          }
        }
      },
      warm: async (pool) => {
        const a = new Int32Array(new SharedArrayBuffer(4_000_000));
        const b = new Int32Array(new SharedArrayBuffer(4_000_000));
        tasks.fillRandom(a, 1);
        tasks.sortSequential(a, b);
        tasks.fillRandom(a, 1);
        await pool.run("sortParallel", a, b, 0, a.length, 0, sortCutoff);
      },
    },
    {
      name: "Mandelbrot 800×600",
      sequential: () => {
        tasks.renderSequential(imageSequential, view);
        return 0;
      },
      parallel: (pool) => pool.run("renderParallel", image, view, 4),
      check: () => {
        for (let i = 0; i < image.length; i++) {
          if (image[i] !== imageSequential[i]) throw new Error(`Cannot trust the benchmark as images differ at ${i}`);
        }
      },
      warm: async (pool) => {
        const small = { ...view, height: 60 };
        tasks.renderSequential(imageSequential, small);
        await pool.run("renderParallel", image, small, 4);
      },
    },
    {
      name: "unbalanced tree, 2M nodes",
      sequential: () => tasks.sumSequential(tree, 0, treeWork),
      parallel: (pool) => pool.run("sumParallel", tree, 0, treeWork, treeCutoff),
      check: same("the tree sum"),
      warm: async (pool) => {
        tasks.sumSequential(tree, tree.left[0], treeWork);
        await pool.run("sumParallel", tree, tree.left[0], treeWork, treeCutoff);
      },
    },
  ];
}
