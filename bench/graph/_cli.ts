/**
 * What the graph benchmarks (bench/graph/chain.ts, pipeline.ts, wavefront.ts) share outside their rounds
 * (`_rounds.ts`): the pool each opens on the graph tasks (sized for the records its graphs take) and closes
 * with a deadline, its settings from the command line, and its output (a heading and Markdown tables, or
 * with `--json` one JSON line a figure). Each benchmark wrote these out itself before.
 *
 * Threads: the main thread.
 *
 * @module
 */
import process from "node:process";
import { Pool } from "../../lib/pool.ts";
import { withTimeout } from "../_deadline.ts";
import { runtimeName } from "../_stats.ts";
import type { Ratio } from "./_rounds.ts";
import type * as tasks from "./tasks.ts";

/** A pool on the graph benchmarks' task module (bench/graph/tasks.ts). */
export type GraphPool = Pool<typeof tasks>;

/**
 * Opens a pool on the graph tasks with room for `records` task records at once (a graph takes one a node
 * and one an edge, placed whole), within 20 s.
 *
 * @param workers Its workers.
 * @param records The records its largest graph takes; the capacity is the power of two at or above it.
 * @returns The pool.
 *
 * @example Usage
 * ```ts ignore
 * const pool = await openPool(2, 2 * nodes); // a chain: a record a node and one an edge
 * ```
 */
export function openPool(workers: number, records: number): Promise<GraphPool> {
  const taskCapacity = 2 ** Math.ceil(Math.log2(Math.max(2, records)));
  return withTimeout(
    Pool.create<typeof tasks>(new URL("./tasks.ts", import.meta.url), { workers, taskCapacity }),
    20_000,
    `the filch pool of ${workers} workers did not start within 20 s`,
  );
}

/**
 * Closes pools one after another, each within 10 s; one that does not close is a warning, not a failure
 * (its figures are already measured).
 *
 * @param pools The pools.
 *
 * @example Usage
 * ```ts ignore
 * await closePools(pool, onOneWorker);
 * ```
 */
export async function closePools(...pools: GraphPool[]): Promise<void> {
  for (const pool of pools) {
    await withTimeout(pool.close(), 10_000, "a filch pool did not close within 10 s")
      .catch((error) => console.error(`WARNING ${error}`));
  }
}

/**
 * A command-line option `--name=value` or `--name value`.
 *
 * @param name The option's name.
 * @returns Its value, or undefined.
 *
 * @example Usage
 * ```ts ignore
 * const pkg = option("package") ?? "typescript";
 * ```
 */
export function option(name: string): string | undefined {
  const args = process.argv.slice(2);
  const i = args.findIndex((a) => a === `--${name}` || a.startsWith(`--${name}=`));
  if (i === -1) return undefined;
  return args[i].includes("=") ? args[i].slice(args[i].indexOf("=") + 1) : args[i + 1];
}

/**
 * A benchmark's numeric settings: each from `--name N`, or its default (the second, with `--quick`).
 * Throws, naming every setting, if one is not a number ≥ 1.
 *
 * @param defaults Per setting, its default and its default under `--quick`.
 * @returns The settings.
 *
 * @example Usage
 * ```ts ignore
 * const s = settings({ rounds: [15, 3], nodes: [10_000, 1_000], workers: [2, 2] });
 * ```
 */
export function settings<K extends string>(defaults: Record<K, readonly [number, number]>): Record<K, number> {
  const quick = process.argv.includes("--quick");
  const names = Object.keys(defaults) as K[];
  const out = {} as Record<K, number>;
  for (const name of names) out[name] = Number(option(name) ?? defaults[name][quick ? 1 : 0]);
  if (!names.every((name) => out[name] >= 1)) {
    const listed = names.map((name) => `--${name}`);
    throw new Error(
      `Cannot run with those settings: ${listed.slice(0, -1).join(", ")} and ${listed.at(-1)} must be ≥ 1`,
    );
  }
  return out;
}

/**
 * Prints a Markdown table after a blank line.
 *
 * @param header The column names.
 * @param rows The cells, a row each.
 *
 * @example Usage
 * ```ts ignore
 * printTable(["ratio", "throughput"], [["graph ÷ await", "3.10 [2.50–4.00]"]]);
 * ```
 */
export function printTable(header: readonly string[], rows: readonly (readonly string[])[]): void {
  const line = (cells: readonly string[]) => `| ${cells.join(" | ")} |`;
  console.log(["", line(header), `|${"---|".repeat(header.length)}`, ...rows.map(line)].join("\n"));
}

/**
 * Ends a benchmark's run: with `--json` one JSON line a contender's row, then one a ratio (its name as
 * `ratio`, skipped where undefined), each with the runtime's name; else the heading (the runtime, the
 * minute in UTC, `what`) and the text report `text` prints. Then the process exits 0 (a pool's thread
 * that did not close must not keep it alive).
 *
 * @param what What ran, for the heading.
 * @param rows The contenders' rows.
 * @param ratios The ratios, by name.
 * @param text Prints the report's tables.
 * @returns Never.
 *
 * @example Usage
 * ```ts ignore
 * finish("a chain of 10000 tiny tasks, 2 workers, 15 rounds", report.rows, report.ratios, () => printTable(…));
 * ```
 */
export function finish(
  what: string,
  rows: readonly object[],
  ratios: Iterable<readonly [string, Ratio | undefined]>,
  text: () => void,
): never {
  if (process.argv.includes("--json")) {
    const runtime = runtimeName();
    for (const row of rows) console.log(JSON.stringify({ runtime, ...row }));
    for (const [name, r] of ratios) if (r !== undefined) console.log(JSON.stringify({ runtime, ratio: name, ...r }));
  } else {
    const when = new Date().toISOString().slice(0, 16).replace("T", " ");
    console.log(`\n${runtimeName()}, ${when} UTC, ${what}`);
    text();
  }
  process.exit(0);
}
