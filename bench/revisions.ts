/**
 * Two revisions of filch side by side: runs one benchmark command in two checkouts, in alternating
 * processes (before, after, after, before, …: each round flips which goes first), and reports, for every
 * figure both print, the per-round ratio after ÷ before as a median with its quartiles, the 95% interval
 * of the median (`_stats.ts` medianInterval) and the range.
 *
 * Why processes and alternation: this machine is shared and noisy, and its speed drifts over minutes; a
 * ratio of two runs made back to back, with the order flipped each round, cancels most of the drift that
 * two separate series would carry into their medians. One process per run keeps one revision's heap and
 * JIT state from leaking into the other's.
 *
 * Figures are read from what the benchmark prints, so any benchmark of bench/ works unchanged:
 * - JSON lines (`--json`): every field whose value has a numeric `median` is a figure, keyed by the line's
 *   string fields (its name, kind, demo, where) and the field's name;
 * - Markdown tables: every cell that starts with a number is a figure, keyed by its row's first cell and
 *   its column's header (a cell such as `31 (28–35)` reads as 31).
 * Whether a larger figure is better (tasks/s) or worse (ms, ns) depends on the figure: the report gives the
 * plain ratio and leaves that reading to the figure's name.
 *
 * Run: `node bench/revisions.ts --before=DIR [--after=DIR] [--rounds=15] -- COMMAND ARGS…`, e.g.
 * `node bench/revisions.ts --before=/tmp/old --rounds=15 -- node bench/pool_bench.ts 3 --only=filch --json`
 * (`--after` defaults to this checkout; COMMAND runs with each checkout as its working directory;
 * `--timeout=S` bounds one run, default 600 s; `--json` prints the report as one JSON line as well).
 */
import { spawn } from "node:child_process";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { intervalText } from "./_stats.ts";

/** A figure's per-round values in one revision. */
type Figures = Map<string, number>;

function option(name: string): string | undefined {
  const prefix = `--${name}=`;
  const found = process.argv.slice(2, dashIndex()).find((a) => a.startsWith(prefix));
  return found?.slice(prefix.length);
}

function dashIndex(): number {
  const i = process.argv.indexOf("--", 2);
  return i === -1 ? process.argv.length : i;
}

/** The leading number of a table cell (`31 (28–35)`, `1.84×`, `161,248`), or NaN. */
export function leadingNumber(cell: string): number {
  const match = cell.trim().replaceAll(",", "").match(/^-?\d+(\.\d+)?(e[+-]?\d+)?/i);
  return match === null ? NaN : Number(match[0]);
}

/**
 * The figures a benchmark printed: JSON lines and Markdown tables (see the module doc).
 *
 * @param output What the benchmark printed on stdout.
 * @returns Each figure by key.
 *
 * @example Usage
 * ```ts
 * import { figuresOf } from "./revisions.ts";
 * const out = '{"name":"filch","tasksPerSecond":{"median":5}}\n| pool | lazy |\n|---|---|\n| 1 worker | 31 (28–35) |\n';
 * console.log([...figuresOf(out)]); // [ [ "filch / tasksPerSecond", 5 ], [ "1 worker / lazy", 31 ] ]
 * ```
 */
export function figuresOf(output: string): Figures {
  const figures: Figures = new Map();
  const lines = output.split("\n");
  let header: string[] | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (line.startsWith("{")) {
      try {
        const row = JSON.parse(line) as Record<string, unknown>;
        const id = Object.entries(row).filter(([k, v]) => typeof v === "string" && k !== "runtime").map(([, v]) => v)
          .join(" / ");
        for (const [k, v] of Object.entries(row)) {
          const median = (v as { median?: unknown } | null)?.median;
          if (typeof median === "number") figures.set(`${id} / ${k}`, median);
        }
      } catch {
        // Not JSON after all: a line of text that starts with a brace.
      }
      continue;
    }
    if (!line.startsWith("|")) {
      header = undefined;
      continue;
    }
    const cells = line.slice(1, line.endsWith("|") ? -1 : undefined).split("|").map((c) => c.trim());
    if (cells.every((c) => /^:?-+:?$/.test(c))) continue;
    if (header === undefined) {
      header = cells;
      continue;
    }
    for (let j = 1; j < cells.length; j++) {
      const value = leadingNumber(cells[j]);
      if (Number.isFinite(value)) figures.set(`${cells[0]} / ${header[j] ?? j}`, value);
    }
  }
  return figures;
}

function runOnce(cwd: string, command: string[], timeoutS: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command[0], command.slice(1), { cwd, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`Cannot compare as '${command.join(" ")}' in ${cwd} ran past ${timeoutS} s`));
    }, timeoutS * 1000);
    child.stdout.on("data", (c: Uint8Array) => (out += new TextDecoder().decode(c)));
    child.stderr.on("data", (c: Uint8Array) => (err += new TextDecoder().decode(c)));
    child.on("close", (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(out);
      else reject(new Error(`Cannot compare as '${command.join(" ")}' in ${cwd} exited ${code}: ${err.slice(-800)}`));
    });
  });
}

function quantile(sorted: number[], q: number): number {
  const at = (sorted.length - 1) * q;
  const lo = Math.floor(at);
  const hi = Math.ceil(at);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (at - lo);
}

function fmt(x: number): string {
  return Math.abs(x) >= 100 ? x.toFixed(0) : Math.abs(x) >= 10 ? x.toFixed(1) : x.toPrecision(3);
}

if (import.meta.main ?? process.argv[1] === fileURLToPath(import.meta.url)) {
  const before = option("before");
  const after = option("after") ?? fileURLToPath(new URL("..", import.meta.url));
  const rounds = Number(option("rounds") ?? 15);
  const timeoutS = Number(option("timeout") ?? 600);
  const command = process.argv.slice(dashIndex() + 1);
  if (before === undefined || command.length === 0 || !(rounds >= 1)) {
    console.error("usage: node bench/revisions.ts --before=DIR [--after=DIR] [--rounds=15] -- COMMAND ARGS…");
    process.exit(2);
  }
  const series = { before: new Map<string, number[]>(), after: new Map<string, number[]>() };
  const ratios = new Map<string, number[]>();
  const started = new Date().toISOString();
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 === 0 ? (["before", "after"] as const) : (["after", "before"] as const);
    const got: Record<"before" | "after", Figures> = { before: new Map(), after: new Map() };
    for (const side of order) {
      got[side] = figuresOf(await runOnce(side === "before" ? before : after, command, timeoutS));
      for (const [k, v] of got[side]) series[side].set(k, [...(series[side].get(k) ?? []), v]);
    }
    for (const [k, a] of got.after) {
      const b = got.before.get(k);
      if (b !== undefined && b !== 0) ratios.set(k, [...(ratios.get(k) ?? []), a / b]);
    }
    console.error(`round ${r + 1}/${rounds} (${order.join(" then ")}) done`);
  }
  const median = (xs: number[]) => quantile([...xs].sort((x, y) => x - y), 0.5);
  console.log(`${command.join(" ")}: ${rounds} rounds in alternating processes, from ${started}`);
  console.log(`before: ${before}\nafter: ${after}\n`);
  console.log(
    "| figure | before (median) | after (median) | after ÷ before: median | q1–q3 | 95% interval of the median | min–max | rounds |",
  );
  console.log("|---|---|---|---|---|---|---|---|");
  const report: Record<string, unknown>[] = [];
  for (const [k, xs] of ratios) {
    const s = [...xs].sort((x, y) => x - y);
    const row = {
      figure: k,
      before: median(series.before.get(k)!),
      after: median(series.after.get(k)!),
      ratio: quantile(s, 0.5),
      q1: quantile(s, 0.25),
      q3: quantile(s, 0.75),
      interval: intervalText(s, 3),
      min: s[0],
      max: s[s.length - 1],
      rounds: s.length,
    };
    report.push(row);
    console.log(
      `| ${k} | ${fmt(row.before)} | ${fmt(row.after)} | ${row.ratio.toFixed(3)} | ${row.q1.toFixed(3)}–${
        row.q3.toFixed(3)
      } | ${row.interval} | ${row.min.toFixed(3)}–${row.max.toFixed(3)} | ${row.rounds} |`,
    );
  }
  if (process.argv.slice(2, dashIndex()).includes("--json")) console.log(JSON.stringify({ command, rounds, report }));
}
