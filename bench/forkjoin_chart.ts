/**
 * Runs `forkjoin_bench.ts` on Deno, Bun and Node in turn (each in its own process), prints the tables for
 * docs/benchmarks.md, keeps the raw rows in `bench/forkjoin_results.json`, and draws `bench/forkjoin_chart.svg`:
 * one panel per demo, sequential vs pool time (median, with a whisker from min to max) for each runtime.
 *
 * Run: `node bench/forkjoin_chart.ts` (a number sets the rounds, default 5). `--from-json` redraws the
 * chart and the tables from the saved rows without running anything.
 */
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { format } from "./_stats.ts";
import type { JoinOverheadRow, SpeedupRow } from "./forkjoin_bench.ts";

const root = fileURLToPath(new URL("..", import.meta.url).href);
const bin = join(root, "node_modules", ".bin");
const argv = process.argv.slice(2);
const rounds = argv.find((a) => /^\d+$/.test(a)) ?? "5";
const resultsPath = join(root, "bench", "forkjoin_results.json");
const chartPath = join(root, "bench", "forkjoin_chart.svg");

interface Results {
  date: string;
  machine: string;
  rounds: number;
  rows: (JoinOverheadRow | SpeedupRow)[];
}

function runEverywhere(): Results {
  const rows: (JoinOverheadRow | SpeedupRow)[] = [];
  for (const [runtime, prefix] of [["deno", ["run", "-A"]], ["bun", []], ["node", []]] as const) {
    console.error(`bench/forkjoin_bench.ts on ${runtime} …`);
    const result = spawnSync(join(bin, runtime), [...prefix, "bench/forkjoin_bench.ts", "--json", rounds], {
      cwd: root,
      encoding: "utf8",
      env: { ...process.env, NO_COLOR: "1" },
      timeout: 20 * 60_000,
      maxBuffer: 64 * 1024 * 1024,
    });
    if (result.status !== 0) {
      console.error(result.stdout, result.stderr);
      throw new Error(`Cannot finish the benchmark as it exited with ${result.status} on ${runtime}`);
    }
    for (const line of result.stdout.split("\n")) if (line.startsWith("{")) rows.push(JSON.parse(line));
  }
  return {
    date: new Date().toISOString().slice(0, 16).replace("T", " ") + " UTC",
    machine: `${cpus().length} × ${cpus()[0]?.model ?? "cpu"}`,
    rounds: Number(rounds),
    rows,
  };
}

const results: Results = argv.includes("--from-json") ? JSON.parse(readFileSync(resultsPath, "utf8")) : runEverywhere();
if (!argv.includes("--from-json")) writeFileSync(resultsPath, JSON.stringify(results, null, 2) + "\n");

const overhead = results.rows.filter((r): r is JoinOverheadRow => r.kind === "join-overhead");
const speedups = results.rows.filter((r): r is SpeedupRow => r.kind === "speedup");

console.log(`\n${results.date}, ${results.machine}; median (min–max)`);
console.log("\nJoin overhead when nothing is stolen: fib(25) with a join at every level vs plain fib\n");
console.log("| runtime | where | joins | plain fib, ms | fib with joins, ms | ns per join |");
console.log("|---|---|---|---|---|---|");
for (const r of overhead) {
  console.log(
    `| ${r.runtime} | ${r.where} | ${r.joins} | ${format(r.plainMs, 2)} | ${format(r.joinMs)} | ${
      format(r.nsPerJoin, 0)
    } |`,
  );
}
console.log("\nPool of 2 workers vs the sequential program on the main thread\n");
console.log(
  "| runtime | demo | sequential, ms | pool of 2, ms | speedup | cold: sequential, ms | cold: pool of 2, ms | cold speedup | tasks stolen a run (steals) | other processes, cores |",
);
console.log("|---|---|---|---|---|---|---|---|---|---|");
for (const r of speedups) {
  console.log(
    `| ${r.runtime} | ${r.demo} | ${format(r.sequentialMs)} | ${format(r.poolMs)} | ${r.speedup.toFixed(2)}× | ${
      format(r.coldSequentialMs)
    } | ${format(r.coldPoolMs)} | ${r.coldSpeedup.toFixed(2)}× | ${r.stolen.median} (${r.steals.median}) | ${
      r.otherCores?.toFixed(2) ?? "?"
    } |`,
  );
}

// ---- the chart ----

const demos = [...new Set(speedups.map((r) => r.demo))];
const runtimes = [...new Set(speedups.map((r) => r.runtime))];
const panelWidth = 250;
const panelHeight = 300;
const top = 92;
const left = 20;
const width = left * 2 + demos.length * panelWidth;
const height = top + panelHeight + 80;
const colors = { sequential: "#9aa5b1", pool: "#1f8a70" };
const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

function niceMax(value: number): number {
  const magnitude = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 2.5, 5, 10]) if (step * magnitude >= value) return step * magnitude;
  return 10 * magnitude;
}

const parts: string[] = [];
parts.push(
  `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="Helvetica, Arial, sans-serif">`,
  `<rect width="100%" height="100%" fill="#ffffff"/>`,
  `<text x="${left}" y="26" font-size="17" font-weight="bold">filch fork-join: sequential program vs pool of 2 workers (time, lower is better)</text>`,
  `<text x="${left}" y="46" font-size="12" fill="#444">${
    esc(
      `${results.date}, ${results.machine}; median of ${results.rounds} rounds, whiskers min–max; shared, noisy machine`,
    )
  }</text>`,
  `<rect x="${left}" y="58" width="12" height="12" fill="${colors.sequential}"/>`,
  `<text x="${left + 17}" y="69" font-size="12">sequential (main thread)</text>`,
  `<rect x="${left + 175}" y="58" width="12" height="12" fill="${colors.pool}"/>`,
  `<text x="${left + 192}" y="69" font-size="12">pool of 2 (join / parallelFor)</text>`,
);
demos.forEach((demo, d) => {
  const x0 = left + d * panelWidth;
  const rows = runtimes.map((rt) => speedups.find((r) => r.demo === demo && r.runtime === rt)!);
  const max = niceMax(Math.max(...rows.flatMap((r) => [r.sequentialMs.max, r.poolMs.max])));
  const plotTop = top + 22;
  const plotHeight = panelHeight - 40;
  const axisX = x0 + 42;
  const plotWidth = panelWidth - 56;
  const y = (ms: number) => plotTop + plotHeight - (ms / max) * plotHeight;
  parts.push(
    `<text x="${x0 + panelWidth / 2}" y="${top + 8}" font-size="13" font-weight="bold" text-anchor="middle">${
      esc(demo)
    }</text>`,
  );
  for (let k = 0; k <= 4; k++) {
    const v = (max * k) / 4;
    parts.push(
      `<line x1="${axisX}" x2="${axisX + plotWidth}" y1="${y(v)}" y2="${y(v)}" stroke="#e3e6ea"/>`,
      `<text x="${axisX - 4}" y="${y(v) + 4}" font-size="10" text-anchor="end" fill="#555">${
        Number.isInteger(v) ? v.toFixed(0) : v.toFixed(1)
      }</text>`,
    );
  }
  parts.push(`<text x="${x0 + 8}" y="${plotTop - 6}" font-size="10" fill="#555">ms</text>`);
  const group = plotWidth / rows.length;
  rows.forEach((r, g) => {
    if (r === undefined) return;
    const gx = axisX + g * group + group * 0.12;
    const bar = group * 0.36;
    for (const [k, s, color] of [[0, r.sequentialMs, colors.sequential], [1, r.poolMs, colors.pool]] as const) {
      const bx = gx + k * bar;
      parts.push(
        `<rect x="${bx.toFixed(1)}" y="${y(s.median).toFixed(1)}" width="${(bar - 2).toFixed(1)}" height="${
          (plotTop + plotHeight - y(s.median)).toFixed(1)
        }" fill="${color}"><title>${esc(`${r.runtime}: ${format(s)} ms`)}</title></rect>`,
        `<line x1="${(bx + bar / 2 - 1).toFixed(1)}" x2="${(bx + bar / 2 - 1).toFixed(1)}" y1="${
          y(s.min).toFixed(1)
        }" y2="${y(s.max).toFixed(1)}" stroke="#222" stroke-width="1"/>`,
      );
    }
    const cx = gx + bar;
    parts.push(
      `<text x="${cx.toFixed(1)}" y="${plotTop + plotHeight + 15}" font-size="11" text-anchor="middle">${
        esc(r.runtime.split(" ")[0])
      }</text>`,
      `<text x="${cx.toFixed(1)}" y="${
        plotTop + plotHeight + 30
      }" font-size="11" text-anchor="middle" font-weight="bold" fill="${r.speedup >= 1.85 ? "#1f8a70" : "#b04a2f"}">${
        r.speedup.toFixed(2)
      }×</text>`,
    );
    if (r.otherCores !== undefined && r.otherCores >= 0.05) {
      parts.push(
        `<text x="${cx.toFixed(1)}" y="${
          plotTop + plotHeight + 43
        }" font-size="9" text-anchor="middle" fill="#777">busy ${r.otherCores.toFixed(1)}</text>`,
      );
    }
  });
  parts.push(
    `<line x1="${axisX}" x2="${axisX}" y1="${plotTop}" y2="${plotTop + plotHeight}" stroke="#888"/>`,
    `<line x1="${axisX}" x2="${axisX + plotWidth}" y1="${plotTop + plotHeight}" y2="${
      plotTop + plotHeight
    }" stroke="#888"/>`,
  );
});
parts.push(
  `<text x="${left}" y="${
    height - 12
  }" font-size="11" fill="#444">speedup = sequential ÷ pool (medians of warm runs; cold runs in docs/benchmarks.md); green: at least the goal of 1.85×; “busy n”: other processes used n cores meanwhile. Made by bench/forkjoin_chart.ts.</text>`,
  `</svg>`,
);
writeFileSync(chartPath, parts.join("\n") + "\n");
// Leave both generated files as `deno fmt` wants them, so the repository's format check passes.
const formatted = spawnSync(join(bin, "deno"), ["fmt", "-q", chartPath, resultsPath], { cwd: root, encoding: "utf8" });
if (formatted.status !== 0) console.error(`deno fmt of the chart and results failed: ${formatted.stderr}`);
console.log(`\nchart: ${chartPath}`);
