/**
 * The pipeline benchmark of task graphs (issue 48): every `.js` file of an installed package (default:
 * `node_modules/typescript`, 112 files, 1.0 MB in typescript 7.0.2), repeated `--repeat` times (default
 * 4), through three stages a file and a merge (bench/graph/tasks.ts): `readText` (the worker reads the
 * file), `scan` (a hand-written tokenizer: the tokens by kind and the identifiers in order), `summarise`
 * (the file's counts by kind and by identifier), then `merge`, 16 summaries a node, in a tree, to one
 * summary. Two contenders on one pool:
 * - "graph": one graph of every stage and merge, built without awaiting and submitted once; only the root
 *   of the merge tree comes back to this thread, and each file's text and identifiers go from record to
 *   record in shared memory;
 * - "await": the same stages chained with `await` a file on the submitting thread (`const text = await
 *   pool.run("readText", path); const scanned = await pool.run("scan", text); …`, every file at once,
 *   as `Promise.all` over the files), and the same merge tree, each merge awaiting its 16 parts: every
 *   intermediate result is decoded on this thread and encoded again.
 * Every run's summary must equal the reference computed on this thread (the same functions, inline).
 *
 * Figures: files a second (N ÷ wall), the main thread's CPU a file (bench/_owner_cpu.ts) and the
 * per-round ratios graph ÷ await of throughput and await ÷ graph of the main thread's CPU (so both read
 * "how many times better"). The goals: ≥ 1.3× the throughput, ≤ ⅓ of the submitting thread's CPU (a CPU
 * ratio ≥ 3).
 *
 * Run: `node bench/graph/pipeline.ts`, `deno run -A …`, `bun …`. Options: `--rounds R` (default 15),
 * `--package NAME` (under node_modules; default typescript), `--repeat K` (default 4), `--files F` (the
 * first F files only), `--workers W` (default 2), `--quick` (3 rounds, 1 repeat), `--json`, `--verbose`.
 *
 * @module
 */
import process from "node:process";
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { format, summarize, type Summary as Spread } from "../_stats.ts";
import { checkOwnerCpu, type Contender, type Ratio, ratio, ratioText, rounds } from "./_rounds.ts";
import { closePools, finish, openPool, option, printTable, settings } from "./_cli.ts";
import { merge, readText, scan, summarise, type Summary } from "./tasks.ts";

/** Summaries a merge node takes. */
const FAN_IN = 16;

/** The pipeline benchmark's settings. */
export interface PipelineSettings {
  rounds: number;
  package: string;
  repeat: number;
  /** The first this many files only (Infinity: all). */
  files: number;
  workers: number;
}

/** One contender's figures over the rounds. */
export interface PipelineRow {
  contender: string;
  filesPerSecond: Spread;
  /** The main thread's CPU a file, µs. */
  cpuMicrosPerFile: Spread;
}

/** What {@link benchPipeline} found. */
export interface PipelineReport {
  files: number;
  bytes: number;
  rows: PipelineRow[];
  /** "graph ÷ await, throughput" and "await ÷ graph, main thread CPU", per round. */
  ratios: Map<string, Ratio>;
  cpuProblem: string | undefined;
}

/**
 * Every `.js` file under a directory, sorted (so every run reads the same list).
 *
 * @param dir The directory.
 * @returns Absolute paths.
 */
function jsFiles(dir: string): string[] {
  return readdirSync(dir).sort().flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return jsFiles(path);
    return name.endsWith(".js") ? [path] : [];
  });
}

/**
 * Reduces items to one, `FAN_IN` at a time, level by level: the merge tree every contender uses.
 *
 * @param items The leaves.
 * @param mergeGroup Makes one item of a group.
 * @returns The root.
 */
function tree<T>(items: T[], mergeGroup: (group: T[]) => T): T {
  let level = items;
  do {
    const next: T[] = [];
    for (let i = 0; i < level.length; i += FAN_IN) next.push(mergeGroup(level.slice(i, i + FAN_IN)));
    level = next;
  } while (level.length > 1);
  return level[0];
}

/** A summary as comparable text: its numbers and its names in order. */
function canonical(s: Summary): string {
  return JSON.stringify([s.files, s.chars, s.kinds, [...s.names]]);
}

/**
 * Runs the pipeline benchmark (see the module doc).
 *
 * @param s The settings.
 * @returns The figures.
 *
 * @example Usage
 * ```ts ignore
 * const report = await benchPipeline({ rounds: 15, package: "typescript", repeat: 4, files: Infinity, workers: 2 });
 * ```
 */
export async function benchPipeline(s: PipelineSettings): Promise<PipelineReport> {
  const cpuProblem = checkOwnerCpu();
  const root = fileURLToPath(new URL(`../../node_modules/${s.package}`, import.meta.url));
  const found = jsFiles(root).slice(0, s.files);
  if (found.length === 0) throw new Error(`Cannot run the pipeline as ${root} has no .js file`);
  const paths = Array.from({ length: s.repeat }, () => found).flat();
  const bytes = paths.reduce((sum, p) => sum + statSync(p).size, 0);
  const reference = canonical(tree(paths.map((p) => summarise(scan(readText(p)))), (group) => merge(...group)));
  // One record a node and one an edge: 3 nodes and 2 edges a file, and each merge's node and edges.
  const pool = await openPool(s.workers, 8 * paths.length + 64);
  const contenders: Contender<Summary>[] = [
    {
      name: "graph",
      run() {
        const g = pool.graph();
        const summaries = paths.map((p) => g.run("summarise", g.run("scan", g.run("readText", p))));
        return g.submit(tree(summaries, (group) => g.run("merge", ...group)));
      },
    },
    {
      name: "await",
      run() {
        const summaries = paths.map(async (p) => {
          const text = await pool.run("readText", p);
          const scanned = await pool.run("scan", text);
          return await pool.run("summarise", scanned);
        });
        return tree(summaries, async (group) => pool.run("merge", ...await Promise.all(group)));
      },
    },
  ];
  try {
    const measured = await rounds(contenders, (got) => canonical(got) === reference, s.rounds, 120_000);
    const rows = contenders.map((c): PipelineRow => ({
      contender: c.name,
      filesPerSecond: summarize(measured.ms.get(c.name)!.map((ms) => paths.length / ms * 1000)),
      cpuMicrosPerFile: summarize(measured.cpuMs.get(c.name)!.map((ms) => ms * 1000 / paths.length)),
    }));
    const ratios = new Map<string, Ratio>([
      ["graph ÷ await, throughput", ratio(measured.ms.get("await")!, measured.ms.get("graph")!)],
      ["await ÷ graph, main thread CPU", ratio(measured.cpuMs.get("await")!, measured.cpuMs.get("graph")!)],
    ]);
    return { files: paths.length, bytes, rows, ratios, cpuProblem };
  } finally {
    await closePools(pool);
  }
}

if (import.meta.main ?? process.argv[1]?.endsWith("pipeline.ts")) {
  const s: PipelineSettings = {
    ...settings({ rounds: [15, 3], repeat: [4, 1], files: [Infinity, Infinity], workers: [2, 2] }),
    package: option("package") ?? "typescript",
  };
  const report = await benchPipeline(s);
  const what = `read → scan → summarise → merge over ${report.files} files ` +
    `(node_modules/${s.package}'s .js × ${s.repeat}, ${(report.bytes / 1e6).toFixed(2)} MB), ` +
    `${s.workers} workers, ${s.rounds} rounds; median (min–max); ratios per round: median [95% interval].`;
  finish(what, report.rows, report.ratios, () => {
    if (report.cpuProblem !== undefined) console.log(`SKIPPED main thread CPU: ${report.cpuProblem}`);
    printTable(
      ["contender", "files/s", "main thread CPU µs a file"],
      report.rows.map((row) => [row.contender, format(row.filesPerSecond, 0), format(row.cpuMicrosPerFile, 1)]),
    );
    printTable(["ratio", "median [95% interval]"], [...report.ratios].map(([name, r]) => [name, ratioText(r)]));
  });
}
