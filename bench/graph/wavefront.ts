/**
 * The wavefront benchmark of task graphs (issue 48): the edit-distance (Levenshtein) table of two strings
 * of `--length` characters (default 16,384), cut into square tiles of `--tile` characters a side (default
 * 512: a 32 × 32 grid, 1,024 tiles of 262,144 cells, about 1.2 ms each), each tile depending on the tile
 * above and the tile on the left (bench/graph/tasks.ts `tile`): the anti-diagonals of tiles run in parallel,
 * each waiting for the last. Contenders:
 * - "inline": every tile on this thread, row by row (the same function, the same tiles);
 * - "graph": one filch graph of the tiles, built without awaiting and submitted once; a tile's edges (its
 *   last row, tile + 1 int32, and last column, tile int32: 4 KiB and some at the default size, past a
 *   record's 192 inline bytes, so they travel in overflow blocks of 1 KiB) go from record to record in
 *   shared memory, and only the last tile's come back.
 * - "graph, 1 worker" (with `--workers` > 1): the same graph on a pool of one worker. On a shared machine
 *   a process's threads each get a share of the cores, so 2 workers may get more than twice the inline
 *   thread's time; the 1-worker figure shows how much of a speedup is that, and the graph's time on 1
 *   worker ÷ on 2 what the second worker adds.
 * The strings are pseudo-random over a 4-letter alphabet (a fixed seed; a DNA-like pair with a distance
 * well inside the table). Every run's distance must equal the inline run's, and the inline tiles' result
 * equals the untiled table's (checked once at start).
 *
 * Figures: each contender's ms a run, cells a second and process CPU a run (every thread), the per-round
 * speedup inline ÷ graph (median [95% interval]), and the same bounded by CPU time: workers × inline's
 * CPU ÷ the graph's process CPU, the speedup the graph would reach with each worker on a core of its own,
 * which a loaded machine does not distort (a thread waiting for a core is not charged). The goal: ≥ 1.8×
 * inline on 2 workers.
 *
 * Run: `node bench/graph/wavefront.ts`, `deno run -A …`, `bun …`. Options: `--rounds R` (default 15),
 * `--length L` (default 16,384), `--tile T` (default 512), `--workers W` (default 2), `--quick` (3 rounds,
 * length 2,048, tiles of 256), `--json`, `--verbose`. Smaller tiles (`--length 8192 --tile 256`: 250 µs
 * each) show what a tile's fixed cost (its edges copied and decoded, about 9–16 µs) and the machine's
 * two threads make of a finer grain: docs/benchmarks.md has both.
 *
 * @module
 */
import process from "node:process";
import type { GraphNode } from "../../lib/graph/graph.ts";
import { format, summarize, type Summary } from "../_stats.ts";
import { checkOwnerCpu, type Contender, type Ratio, ratio, ratioText, rounds } from "./_rounds.ts";
import { closePools, finish, type GraphPool, openPool, printTable, settings } from "./_cli.ts";
import { Worker } from "node:worker_threads";
import { type Edges, tile } from "./tasks.ts";
import type { StaticSetup } from "./_static_worker.ts";

/** The wavefront benchmark's settings. */
export interface WavefrontSettings {
  rounds: number;
  length: number;
  tile: number;
  workers: number;
}

/** One contender's figures over the rounds. */
export interface WavefrontRow {
  contender: string;
  ms: Summary;
  cellsPerSecond: Summary;
  /** The whole process's CPU ms a run (every thread). */
  processCpuMs: Summary;
  /** The main thread's CPU ms a run (NaN where it cannot be read). */
  mainCpuMs: Summary;
}

/** What {@link benchWavefront} found. */
export interface WavefrontReport {
  tiles: number;
  distance: number;
  rows: WavefrontRow[];
  speedup: Ratio;
  /** inline ÷ the graph on a pool of 1 worker (with `workers` > 1): what the machine's sharing gives one thread. */
  speedupOneWorker: Ratio | undefined;
  /**
   * `workers` × the inline run's CPU ÷ the graph's process CPU, per round: the speedup the graph would
   * reach with its workers busy all the time on cores of their own (the wavefront's parallelism, 16
   * tiles on average at 32 × 32, is not the bound at 2 workers). CPU time is what a loaded machine does not
   * distort: a thread waiting for a core is not charged.
   */
  cpuBound: Ratio;
  /** Why the main thread's CPU could not be read (its column then reads NaN), or undefined. */
  cpuProblem: string | undefined;
  /** The graph on 1 worker ÷ on `workers`, per round: what the workers beyond one add, in the pool. */
  scaling: Ratio | undefined;
  /** inline ÷ the hand-written static schedule on `workers` bare threads (with `workers` > 1): the machine's. */
  staticSpeedup: Ratio | undefined;
  /** The static schedule's ms ÷ the graph's, per round: the graph against the hand-written schedule. */
  overStatic: Ratio | undefined;
}

/** `n` characters of a 4-letter alphabet from a fixed seed (xorshift32). */
function randomText(n: number, seed: number): string {
  let x = seed >>> 0 || 1;
  let out = "";
  for (let i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out += "ACGT"[(x >>> 0) & 3];
  }
  return out;
}

/** The edit distance of `a` and `b` with one table row at a time, untiled: the tiles' check. */
function untiled(a: string, b: string): number {
  return tile(a, b, 0, 0, null, null).bottom[b.length];
}

/**
 * Runs the tiles in any order that respects their dependencies, through `place`: the inline run and the
 * graph build it the same way.
 *
 * @param a Rows' string.
 * @param b Columns' string.
 * @param size The tile's side.
 * @param place Makes one tile from its inputs.
 * @returns The last tile.
 */
function tiles<T>(
  a: string,
  b: string,
  size: number,
  place: (aPart: string, bPart: string, row0: number, col0: number, above: T | null, left: T | null) => T,
): T {
  const rows = Math.ceil(a.length / size);
  const cols = Math.ceil(b.length / size);
  let above: (T | null)[] = new Array(cols).fill(null);
  for (let i = 0; i < rows; i++) {
    const row: T[] = [];
    for (let j = 0; j < cols; j++) {
      const aPart = a.slice(i * size, (i + 1) * size);
      const bPart = b.slice(j * size, (j + 1) * size);
      row.push(place(aPart, bPart, i * size, j * size, above[j], j === 0 ? null : row[j - 1]));
    }
    above = row;
  }
  return above[cols - 1]!;
}

/**
 * Runs the wavefront benchmark (see the module doc).
 *
 * @param s The settings.
 * @returns The figures.
 *
 * @example Usage
 * ```ts ignore
 * const report = await benchWavefront({ rounds: 15, length: 16_384, tile: 512, workers: 2 });
 * ```
 */
export async function benchWavefront(s: WavefrontSettings): Promise<WavefrontReport> {
  // Before any pool or thread starts: the check compares the main thread's CPU with the process's.
  const cpuProblem = checkOwnerCpu();
  const a = randomText(s.length, 0x9e3779b9);
  const b = randomText(s.length, 0x85ebca6b);
  const last = (e: Edges) => e.bottom[e.bottom.length - 1];
  const inlineRun = () => last(tiles<Edges>(a, b, s.tile, tile));
  const distance = inlineRun();
  if (distance !== untiled(a, b)) {
    throw new Error(`Cannot trust the tiles as they computed ${distance}, the untiled table ${untiled(a, b)}`);
  }
  const count = Math.ceil(s.length / s.tile) ** 2;
  const open = (workers: number) => openPool(workers, 3 * count + 64);
  const pools = s.workers > 1 ? [await open(s.workers), await open(1)] : [await open(s.workers)];
  const graphOn = (pool: GraphPool) => async () => {
    const g = pool.graph();
    const end = tiles<GraphNode<Edges>>(a, b, s.tile, (...args) => g.run("tile", ...args));
    return last(await g.submit(end));
  };
  const statics = s.workers > 1 ? staticThreads(a, b, s.tile, s.workers) : undefined;
  const contenders: Contender<number>[] = [
    { name: "inline", run: () => Promise.resolve(inlineRun()) },
    { name: "graph", run: graphOn(pools[0]) },
  ];
  if (pools.length > 1) contenders.push({ name: "graph, 1 worker", run: graphOn(pools[1]) });
  if (statics !== undefined) contenders.push({ name: `static, ${s.workers} bare threads`, run: statics.run });
  try {
    const measured = await rounds(contenders, (d) => d === distance, s.rounds, 120_000);
    const cells = s.length * s.length;
    const rows = contenders.map((c): WavefrontRow => ({
      contender: c.name,
      ms: summarize(measured.ms.get(c.name)!),
      cellsPerSecond: summarize(measured.ms.get(c.name)!.map((ms) => cells / ms * 1000)),
      processCpuMs: summarize(measured.processCpuMs.get(c.name)!),
      mainCpuMs: summarize(measured.cpuMs.get(c.name)!),
    }));
    return {
      tiles: count,
      distance,
      cpuProblem,
      rows,
      speedup: ratio(measured.ms.get("inline")!, measured.ms.get("graph")!),
      speedupOneWorker: pools.length > 1
        ? ratio(measured.ms.get("inline")!, measured.ms.get("graph, 1 worker")!)
        : undefined,
      cpuBound: ratio(
        measured.processCpuMs.get("inline")!.map((ms) => ms * s.workers),
        measured.processCpuMs.get("graph")!,
      ),
      scaling: pools.length > 1 ? ratio(measured.ms.get("graph, 1 worker")!, measured.ms.get("graph")!) : undefined,
      staticSpeedup: statics !== undefined
        ? ratio(measured.ms.get("inline")!, measured.ms.get(`static, ${s.workers} bare threads`)!)
        : undefined,
      overStatic: statics !== undefined
        ? ratio(measured.ms.get(`static, ${s.workers} bare threads`)!, measured.ms.get("graph")!)
        : undefined,
    };
  } finally {
    await closePools(...pools);
    await statics?.close();
  }
}

/**
 * The hand-written schedule a user could write without a pool, for the same tiles: `threads` bare
 * `node:worker_threads` threads, thread t computing the tile rows i ≡ t (mod threads) left to right, each
 * tile waiting on a shared flag for the one above (bench/graph/_static_worker.ts). No scheduler, no
 * copies (the bottom rows are read from one SharedArrayBuffer): what the machine gives this kernel on that
 * many threads, which the graph's speedup is compared with.
 */
function staticThreads(a: string, b: string, size: number, threads: number) {
  const rows = Math.ceil(a.length / size);
  const cols = Math.ceil(b.length / size);
  const bottoms = new SharedArrayBuffer(rows * cols * (size + 1) * 4);
  const flags = new SharedArrayBuffer(rows * cols * 4);
  const url = new URL("./_static_worker.ts", import.meta.url);
  const workers = Array.from(
    { length: threads },
    (_, t) => new Worker(url, { workerData: { a, b, size, t, threads, bottoms, flags } satisfies StaticSetup }),
  );
  const lastRowThread = (rows - 1) % threads;
  let round = 0;
  return {
    async run(): Promise<number> {
      round++;
      const answers = workers.map((w) =>
        new Promise<number>((resolve, reject) => {
          w.once("message", resolve);
          w.once("error", reject);
        })
      );
      for (const w of workers) w.postMessage(round);
      const values = await Promise.all(answers);
      for (const w of workers) w.removeAllListeners("error");
      return values[lastRowThread];
    },
    async close(): Promise<void> {
      await Promise.all(workers.map((w) => w.terminate()));
    },
  };
}

if (import.meta.main ?? process.argv[1]?.endsWith("wavefront.ts")) {
  const s: WavefrontSettings = settings({
    rounds: [15, 3],
    length: [16_384, 2_048],
    tile: [512, 256],
    workers: [2, 2],
  });
  const report = await benchWavefront(s);
  const grid = Math.ceil(s.length / s.tile);
  const what = `edit distance of two ${s.length}-character strings (distance ${report.distance}) in ` +
    `${grid} × ${grid} tiles of ${s.tile}, ${s.workers} workers, ${s.rounds} rounds; median (min–max); ` +
    `speedup per round: median [95% interval].`;
  const ratios: [string, Ratio | undefined][] = [
    ["inline ÷ graph", report.speedup],
    ["graph, 1 worker ÷ graph", report.scaling],
    ["workers × inline CPU ÷ graph CPU", report.cpuBound],
    ["inline ÷ graph, 1 worker", report.speedupOneWorker],
    ["inline ÷ static bare threads", report.staticSpeedup],
    ["static bare threads ÷ graph", report.overStatic],
  ];
  finish(what, report.rows, ratios, () => {
    const millions = (m: Summary) =>
      `${(m.median / 1e6).toFixed(0)} (${(m.min / 1e6).toFixed(0)}–${(m.max / 1e6).toFixed(0)})`;
    printTable(
      ["contender", "ms", "M cells/s", "process CPU ms", "main thread CPU ms"],
      report.rows.map((row) => [
        row.contender,
        format(row.ms, 1),
        millions(row.cellsPerSecond),
        format(row.processCpuMs, 0),
        format(row.mainCpuMs, 0),
      ]),
    );
    if (report.cpuProblem !== undefined) console.log(`SKIPPED main thread CPU: ${report.cpuProblem}`);
    const speedups = [[`${s.workers} workers`, ratioText(report.speedup)]];
    if (report.speedupOneWorker !== undefined) speedups.push(["1 worker", ratioText(report.speedupOneWorker)]);
    if (report.staticSpeedup !== undefined) {
      speedups.push([`static, ${s.workers} bare threads (no pool)`, ratioText(report.staticSpeedup)]);
    }
    printTable(["speedup", "inline ÷ graph"], speedups);
    console.log(
      `\nBy CPU time (${s.workers} × inline's CPU ÷ the graph's process CPU: the speedup with every worker ` +
        `on a core of its own): ${ratioText(report.cpuBound)}.`,
    );
    if (report.overStatic !== undefined) {
      console.log(
        `\nThe graph against the hand-written static schedule on ${s.workers} bare threads (its ms ÷ the ` +
          `graph's: 1 is the machine's): ${ratioText(report.overStatic)}.`,
      );
    }
    if (report.scaling !== undefined) {
      console.log(
        `\nThe graph on ${s.workers} workers against 1 (its ms on 1 ÷ on ${s.workers}): ${ratioText(report.scaling)}.`,
      );
    }
  });
}
