/**
 * The main thread's CPU per task (issue 31): how much of the submitting thread each task costs, for `run`
 * (with `Promise.all`), `spawn` (then `drain`), `runMany` and `map`, with tasks of 1 µs, 40 µs and 1 ms, all
 * submitted at once so that most of them wait in the backlog (the demo's shape); and the ceiling that
 * cost sets: a main thread that spends c µs a task feeds at most 1 / c tasks a microsecond, which is
 * d / c workers busy with tasks of d µs.
 *
 * The main thread's CPU is read from Linux's `/proc/self/task/<pid>/schedstat` (nanoseconds on a CPU, of
 * the thread whose id is the process's: the thread that runs the script's JavaScript on Node, Deno and
 * Bun); the process's CPU (every thread) from `process.cpuUsage()`. Elsewhere than Linux the benchmark
 * stops with a named error, since there is no per-thread clock it can read.
 *
 * One more cell, "promises", runs no pool: 20,000 promises made as `run` makes them, resolved in one go,
 * awaited with `Promise.all`: the floor of any API that returns a promise a task.
 *
 * And "promises-held": the same 20,000 promises, but held as the demo's are: resolved a share a turn of
 * the event loop, in turns {@link TURN_MS} apart (the pool's longest linger), over as long as the demo's
 * last burst took (400 ms before the first), while both workers spin (two `busy` tasks that long), so that
 * the collector and the event loop meet what they meet in the demo, with no pool work on the main thread.
 * It is the floor of the demo's shape: what any pool that returns a promise a task pays there.
 *
 * Each round runs every cell once, the cells in a rotated order; 15 rounds by default (a number as the
 * first argument changes it). Printed: per cell, the median (min–max) of main-thread µs per task and, for
 * `run`, `spawn` and the demo, the synchronous submission loop's wall µs per task, an upper bound on its
 * share (the rest is reading completions, settling and feeding the backlog), process µs per task, and wall
 * ms; then the ceilings at 4, 8 and 16 workers.
 *
 * The per-thread clock moves in scheduler ticks (4 ms here; a running thread's count is brought up to date
 * at each tick), so each reading may lag by up to a tick: at 20,000 tasks, up to 0.2 µs a task in one
 * round. The medians of the rounds are what to read.
 *
 * Run: `node bench/experiments/main_cpu.ts`, `deno run -A …`, `bun …` (`--only=demo,run`: only
 * those shapes' cells; `--workers=N`: N workers instead of 2).
 */
import { readFileSync } from "node:fs";
import { cpus } from "node:os";
import process from "node:process";
import { Pool } from "../../lib/pool.ts";
import { demoSizes } from "../_demo_sizes.ts";
import { format, runtimeName, summarize, type Summary } from "../_stats.ts";
import { withTimeout } from "../_deadline.ts";
import type * as tasks from "../tasks.ts";

/**
 * The pool's workers: 2, the demo's (`--workers=N` changes it: with 1, the main thread has a core to itself
 * and a burst lasts twice as long).
 */
const WORKERS = workersOption(process.argv.find((a) => a.startsWith("--workers="))?.slice(10));
const SHAPES = ["run", "spawn", "runMany", "map"] as const;
/** The cells of no task length: the demo's mix, and the two floors (no pool work). */
const FLOORS = ["demo", "promises", "promises-held"] as const;
type Shape = typeof SHAPES[number] | typeof FLOORS[number];
/** Task lengths in µs, and the tasks of one burst at each (some 0.2–0.5 s of work on 2 workers). */
const LENGTHS: { us: number; tasks: number }[] = [
  { us: 1, tasks: 20_000 },
  { us: 40, tasks: 10_000 },
  { us: 1000, tasks: 500 },
];
/** The "promises-held" cell's turns, ms apart: the pool's longest linger (`LINGER_MAX_MS`, completion.ts). */
const TURN_MS = 16;
/** The wall time of the last demo burst, ms: how long the "promises-held" cell holds its promises. */
let demoWallMs = 400;
/**
 * The wall time in ms of the last burst's submission loop (the synchronous calls of `run` or `spawn`, before
 * the first await), or NaN for a shape that has none. Wall time, not the thread's CPU: the per-thread clock
 * read here moves in scheduler ticks (4 ms on this machine's kernel), as long as the whole loop. The loop
 * runs on the main thread alone and without a wait, so its wall time is its CPU time plus any time the
 * workers took the core from it: an upper bound.
 */
let submitMs = NaN;
/** A burst that takes longer than this means a hang: the benchmark stops with the cell's name. */
const BURST_TIMEOUT_MS = 120_000;

/** The `--workers=N` option's value: a whole number from 1, or 2 if absent. */
function workersOption(text: string | undefined): number {
  if (text === undefined) return 2;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) {
    throw new RangeError(`Cannot run main_cpu as '--workers' must be a whole number from 1: received ${text}`);
  }
  return n;
}

/** The main thread's CPU time so far, in ns (Linux's per-thread schedstat). */
function mainThreadNs(): number {
  let text: string;
  try {
    text = readFileSync(`/proc/self/task/${process.pid}/schedstat`, "utf8");
  } catch (error) {
    throw new Error(
      `Cannot measure the main thread's CPU as /proc/self/task/${process.pid}/schedstat is unreadable ` +
        `(${String(error).split("\n")[0]}): run this benchmark on Linux`,
    );
  }
  return Number(text.split(" ")[0]);
}

/** The process's CPU time so far (every thread), in ns. */
function processNs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) * 1000;
}

/**
 * The floors' promises: `n` made as `run` makes them (the arguments as a rest array, the resolvers kept, as
 * the ledger keeps them), pending until the caller resolves them.
 */
function promisesAsRunMakes(n: number): { all: Promise<number>[]; resolvers: ((value: number) => void)[] } {
  const resolvers = new Array<(value: number) => void>(n);
  const make = (i: number, ..._args: unknown[]) =>
    new Promise<number>((resolve) => {
      resolvers[i] = resolve;
    });
  const all = new Array<Promise<number>>(n);
  for (let i = 0; i < n; i++) all[i] = make(i, i);
  return { all, resolvers };
}

/** Submits `n` tasks of `us` µs in `shape`, all at once, and waits for all. Checks every result. */
async function burst(pool: Pool<typeof tasks>, shape: Shape, us: number, n: number): Promise<void> {
  let done = 0;
  submitMs = NaN;
  const submit0 = performance.now();
  switch (shape) {
    case "run": {
      const all = new Array<Promise<number>>(n);
      for (let i = 0; i < n; i++) all[i] = pool.run("busy", us);
      submitMs = performance.now() - submit0;
      for (const r of await Promise.all(all)) if (r >= 0) done++;
      break;
    }
    case "spawn": {
      // A spawned task has no promise: the pool's count of settled tasks says all of them ran.
      const before = pool.stats().completed;
      for (let i = 0; i < n; i++) pool.spawn("busy", us);
      submitMs = performance.now() - submit0;
      await pool.drain();
      done = pool.stats().completed - before;
      break;
    }
    case "runMany": {
      const args = new Array<[number]>(n);
      for (let i = 0; i < n; i++) args[i] = [us];
      for (const r of await pool.runMany("busy", args)) if (r >= 0) done++;
      break;
    }
    case "map": {
      const inputs = new Array<number>(n).fill(us);
      for await (const r of pool.map("busy", inputs)) if (r >= 0) done++;
      break;
    }
    case "promises": {
      // No pool: the floor of any API that returns a promise a task. `n` promises made as `run` makes
      // them, resolved in one go (no timer, no wake: those are the pool's), awaited with `Promise.all` as
      // the demo awaits.
      const { all, resolvers } = promisesAsRunMakes(n);
      for (let i = 0; i < n; i++) resolvers[i](i);
      for (const r of await Promise.all(all)) if (r >= 0) done++;
      break;
    }
    case "promises-held": {
      // The floor of the demo's shape: promises made as above, held over a demo burst's wall time while
      // both workers spin, and resolved a share a turn, turns TURN_MS apart (the pool settles what each
      // read finds done, and reads once a linger). No pool work on this thread but the two spins' submission.
      const load = Array.from({ length: WORKERS }, () => pool.run("busy", demoWallMs * 1000));
      const { all, resolvers } = promisesAsRunMakes(n);
      const share = Math.ceil(n / Math.max(1, Math.round(demoWallMs / TURN_MS)));
      let next = 0;
      await new Promise<void>((held) => {
        const turn = () => {
          const end = Math.min(n, next + share);
          for (; next < end; next++) resolvers[next](next);
          if (next < n) setTimeout(turn, TURN_MS);
          else held();
        };
        setTimeout(turn, TURN_MS);
      });
      for (const r of await Promise.all(all)) if (r >= 0) done++;
      for (const spins of await Promise.all(load)) {
        if (!(spins >= 0)) throw new Error("Cannot trust the promises-held cell as a worker's spin failed");
      }
      break;
    }
    case "demo": {
      // The demo's own tasks (bench/pool_demo.ts): `run` of `work`, 90% small, 9% medium, 1% large.
      const all = DEMO_UNITS.map((u) => pool.run("work", u));
      submitMs = performance.now() - submit0;
      for (const r of await Promise.all(all)) if (typeof r === "number") done++;
      demoWallMs = performance.now() - submit0;
      break;
    }
  }
  if (done !== n) throw new Error(`Cannot trust the ${shape} cell of ${us} µs as ${n - done} of ${n} tasks failed`);
}

/** The demo's task sizes (the same seeded draw as bench/pool_demo.ts's). */
const DEMO_UNITS: number[] = demoSizes(20_000);

interface Cell {
  shape: Shape;
  us: number;
  tasks: number;
  mainUs: number[];
  /** The submission loop's wall µs a task, an upper bound on its share of `mainUs` (see `submitMs`). */
  submitUs: number[];
  processUs: number[];
  wallMs: number[];
}

const rounds = Number(process.argv.slice(2).find((a) => /^\d+$/.test(a)) ?? 15);
mainThreadNs(); // fails at once, named, where there is no per-thread clock
const pool = await Pool.create<typeof tasks>(new URL("../tasks.ts", import.meta.url), { workers: WORKERS });
const cells: Cell[] = [];
const cell = (shape: Shape, us: number, tasks: number): Cell => ({
  shape,
  us,
  tasks,
  mainUs: [],
  submitUs: [],
  processUs: [],
  wallMs: [],
});
for (const { us, tasks: n } of LENGTHS) {
  for (const shape of SHAPES) cells.push(cell(shape, us, n));
}
// The demo's shape: its task lengths are mixed (`us` 0 marks it; about 30 µs a task on average here).
cells.push(cell("demo", 0, DEMO_UNITS.length));
// The floor of a promise a task (no pool, no worker; `us` 0 as the demo's: it has no task length).
cells.push(cell("promises", 0, DEMO_UNITS.length));
// The floor of the demo's shape (promises held over a burst, the workers busy; no pool work).
cells.push(cell("promises-held", 0, DEMO_UNITS.length));
// `--only=shape[,shape]`: only those shapes' cells (a paired run of one shape, bench/revisions.ts).
const only = process.argv.find((a) => a.startsWith("--only="))?.slice(7).split(",");
if (only !== undefined) {
  const unknown = only.filter((name) => !([...SHAPES, ...FLOORS] as string[]).includes(name));
  if (unknown.length > 0) {
    throw new RangeError(
      `Cannot run main_cpu as '--only' names no shape: ${unknown.join(", ")} (the shapes: ${
        [...SHAPES, ...FLOORS].join(", ")
      })`,
    );
  }
  cells.splice(0, cells.length, ...cells.filter((cell) => only.includes(cell.shape)));
}
// One untimed burst of each cell (compiles both threads' paths), then the rounds, the order rotating.
for (const cell of cells) {
  if (cell.us > 0) await burst(pool, cell.shape, cell.us, Math.ceil(cell.tasks / 4));
  else await burst(pool, cell.shape, 0, cell.tasks);
}
for (let r = 0; r < rounds; r++) {
  for (let k = 0; k < cells.length; k++) {
    const cell = cells[(k + r) % cells.length];
    const main0 = mainThreadNs();
    const process0 = processNs();
    const wall0 = performance.now();
    await withTimeout(
      burst(pool, cell.shape, cell.us, cell.tasks),
      BURST_TIMEOUT_MS,
      `the ${cell.shape} cell of ${cell.us} µs took over ${BURST_TIMEOUT_MS} ms`,
    );
    cell.wallMs.push(performance.now() - wall0);
    cell.mainUs.push((mainThreadNs() - main0) / 1000 / cell.tasks);
    if (!Number.isNaN(submitMs)) cell.submitUs.push(submitMs * 1000 / cell.tasks);
    cell.processUs.push((processNs() - process0) / 1000 / cell.tasks);
  }
}
await pool.close();

console.log(
  `main_cpu on ${runtimeName()}, ${new Date().toISOString().slice(0, 10)}, ${cpus().length} × ${
    cpus()[0]?.model ?? "cpu"
  }; ${WORKERS} workers; ${rounds} rounds, median (min–max)`,
);
console.log(
  "\n| shape | task | tasks | main thread µs/task | of it, submitting (wall, at most) | process µs/task | wall ms | tasks/s the main thread could feed | workers it could keep busy |",
);
console.log("|---|---|---|---|---|---|---|---|---|");
const rows: { cell: Cell; main: Summary; taskUs: number; label: string }[] = [];
for (const cell of cells) {
  const main = summarize(cell.mainUs);
  const processUs = summarize(cell.processUs);
  // The demo's mix has no one length: the workers' CPU per task (the process's less the main thread's)
  // stands for it.
  const taskUs = cell.us > 0 ? cell.us : processUs.median - main.median;
  const label = cell.shape === "promises"
    ? "none: no pool (the floor)"
    : cell.shape === "promises-held"
    ? "none: held as the demo's (its floor)"
    : cell.us > 0
    ? `${cell.us} µs`
    : `mix, ≈${taskUs.toFixed(0)} µs`;
  rows.push({ cell, main, taskUs, label });
  const ceiling = 1e6 / main.median;
  console.log(
    `| ${cell.shape} | ${label} | ${cell.tasks} | ${format(main, 2)} | ${
      cell.submitUs.length > 0 ? format(summarize(cell.submitUs), 2) : "—"
    } | ${format(processUs, 2)} | ${format(summarize(cell.wallMs), 0)} | ${
      Math.round(ceiling).toLocaleString("en-US")
    } | ${cell.shape.startsWith("promises") ? "—" : (taskUs / main.median).toFixed(1)} |`,
  );
}
console.log("\nCeiling: does the main thread keep up with N workers running tasks of that length?");
console.log("| shape | task | 4 workers | 8 workers | 16 workers |");
console.log("|---|---|---|---|---|");
for (const { cell, main, taskUs, label } of rows) {
  if (cell.shape.startsWith("promises")) continue; // no tasks to feed
  const feeds = taskUs / main.median;
  const verdict = (n: number) => feeds >= n ? "yes" : `no (${(feeds / n * 100).toFixed(0)}% of their demand)`;
  console.log(`| ${cell.shape} | ${label} | ${verdict(4)} | ${verdict(8)} | ${verdict(16)} |`);
}
process.exit(0);
