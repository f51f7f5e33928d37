/**
 * Allocation-heavy work (issue 31): parsing real source text on 2 workers against the main thread alone.
 * The work is bench/experiments/parse_tasks.ts (a tokenizer that builds a parser's objects: about 40 ns a character
 * with its default 4 passes), over 8 M characters of this repository's `node_modules`, `lib` and `tests`
 * (the files and characters are printed), one task a file. The contenders:
 * - inline: every file on the main thread;
 * - filch, the text as argument: `Promise.all` of one `run("parsePasses", text, passes)` a file;
 * - filch, by index: each worker read the corpus itself once (`parseFile`): the same work with no text
 *   crossing threads, the ceiling of the row above;
 * - the same by index on 1 worker (what a second worker adds);
 * - filch, the text as argument, and by index on 1 worker, with a 384 MB young generation a worker
 *   (`resourceLimits`; Node and Deno: Bun refuses the option by name, and those rows say SKIPPED). Deno
 *   gives a worker a far smaller young generation than Node (Node's default is 192 MB), and its workers
 *   ran this work at 0.6 times its main thread's speed without one.
 *
 * Rotated each round (which goes first changes), in one process; each round gives the speedup over that
 * round's inline run. Printed: medians with their 95% intervals (bench/_stats.ts `medianInterval`). The
 * goal: ≥ 1.5× inline on 2 workers where the machine allows it.
 *
 * Run: `node bench/experiments/parse.ts [rounds] [--passes=N]`, `deno run -A …`, `bun …`
 * (default 15 rounds, 4 passes).
 *
 * @module
 */
import { Pool, type PoolOptions } from "../../lib/pool.ts";
import { type Contender, rotatedRounds } from "./_rotated.ts";
import { intervalText, runtimeName, summarize } from "../_stats.ts";
import { corpus, parsePasses } from "./parse_tasks.ts";
import type * as parseTasks from "./parse_tasks.ts";

const argv = (globalThis as { process?: { argv: string[] } }).process?.argv ?? [];
const ROUNDS = Number(argv.slice(2).find((a) => /^\d+$/.test(a)) ?? 15);
const PASSES = Number(argv.find((a) => a.startsWith("--passes="))?.slice(9) ?? 4);
const texts = corpus();
const characters = texts.reduce((sum, t) => sum + t.length, 0);
const url = new URL("./parse_tasks.ts", import.meta.url);

function inline(): number {
  let sum = 0;
  for (const text of texts) sum += parsePasses(text, PASSES);
  return sum;
}

async function filch(options: PoolOptions, byIndex: boolean): Promise<Contender> {
  const pool = await Pool.create<typeof parseTasks>(url, options);
  const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
  return {
    run: async () =>
      sum(
        await Promise.all(
          texts.map((text, i) => byIndex ? pool.run("parseFile", i, PASSES) : pool.run("parsePasses", text, PASSES)),
        ),
      ),
    close: () => pool.close(),
  };
}

const young = { maxYoungGenerationSizeMb: 384 };
const configs: [string, PoolOptions, boolean][] = [
  ["filch, the text as argument", { workers: 2 }, false],
  ["filch, by index (no text crosses)", { workers: 2 }, true],
  ["filch, by index, 1 worker", { workers: 1 }, true],
  ["filch, the text as argument, young generation 384 MB", { workers: 2, resourceLimits: young }, false],
  ["filch, by index, 1 worker, young generation 384 MB", { workers: 1, resourceLimits: young }, true],
];
// Two checked warm-ups: each worker reads the corpus (by index) and its JIT warms.
const { inlineMs, ms, skipped } = await rotatedRounds(
  configs.map(([name, options, byIndex]) => [name, () => filch(options, byIndex)]),
  inline,
  ROUNDS,
  2,
);

console.log(
  `parsing — ${runtimeName()}, ${texts.length} files, ${(characters / 1e6).toFixed(1)} M characters, ${PASSES} ` +
    `passes a file, ${ROUNDS} rounds; inline ${summarize(inlineMs).median.toFixed(0)} ms (median)\n`,
);
console.log("| contender | ms, median | speedup over inline: median | 95% interval | range |");
console.log("|---|---|---|---|---|");
for (const [name, own] of ms) {
  const speedups = own.map((t, i) => inlineMs[i] / t);
  const s = summarize(speedups);
  console.log(
    `| ${name} | ${summarize(own).median.toFixed(0)} | ${s.median.toFixed(2)}× | ${intervalText(speedups)} | ${
      s.min.toFixed(2)
    }–${s.max.toFixed(2)} |`,
  );
}
for (const line of skipped) console.log(line);
