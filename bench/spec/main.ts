/**
 * `npm run bench:spec` (`deno task bench:spec`): the specification's benchmark report (issue 50). Runs
 * bench/spec/run.ts on Deno, Bun and Node, each in a process of its own, one after another, with the
 * default pool on this machine, and prints the report in the specification's shape (report.ts): its rows,
 * its figures for 8 workers beside this run's, each also per worker.
 *
 * Options: `--quick` (small sizes and 3 rounds: for development and the smoke test), `--rounds=N` (default
 * 15), `--runtimes=deno,bun,node` (which, in that order), `--only=1,2,3,4,summary,goals` (which workloads),
 * `--json` (each runtime's JSON lines after the report), `--from=a.jsonl,b.jsonl` (runs nothing: renders the report
 * from JSON lines that run.ts printed, each file one runtime's or part of one, merged by runtime: how runs made one
 * runtime at a time, or a workload again, become one report). A runtime that fails is reported as not run, with
 * its status; the others still run. Exits with 1 if any runtime failed.
 *
 * Threads: a main thread; the runtimes run one after another, never two at once (they would share the
 * cores they measure).
 *
 * @module
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { render, type RuntimeResult } from "./report.ts";
import type { Measured } from "./run.ts";

const root = fileURLToPath(new URL("../..", import.meta.url));
const bin = join(root, "node_modules", ".bin");
/** Terminal colour codes (Deno colours its errors), stripped from a process's stderr. */
const ANSI_COLOR = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, "g");

function option(name: string): string | undefined {
  return process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
}

const quick = process.argv.includes("--quick");
const runtimes = (option("runtimes") ?? "deno,bun,node").split(",");
const passOn = [
  ...(quick ? ["--quick"] : []),
  ...["rounds", "only"].flatMap((name) => option(name) === undefined ? [] : [`--${name}=${option(name)}`]),
];

const started = new Date();
const load = loadavg();
const results: RuntimeResult[] = [];
const from = option("from")?.split(",");
for (const file of from ?? []) {
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (!line.startsWith("{")) continue;
    const m = JSON.parse(line) as Measured;
    let r = results.find((x) => x.runtime === m.runtime);
    if (r === undefined) results.push(r = { runtime: m.runtime, measured: [] });
    // A workload measured again replaces the earlier one.
    r.measured = [...r.measured.filter((x) => x.workload !== m.workload), m];
  }
}
for (const runtime of from === undefined ? runtimes : []) {
  const prefix = runtime === "deno" ? ["run", "-A"] : [];
  console.error(`bench/spec/run.ts on ${runtime} …`);
  const child = spawnSync(join(bin, runtime), [...prefix, join(root, "bench", "spec", "run.ts"), ...passOn], {
    cwd: root,
    encoding: "utf8",
    env: { ...process.env, NO_COLOR: "1" },
    // A whole full run on a loaded machine takes about half an hour; twice that means it hung.
    timeout: (quick ? 5 : 60) * 60_000,
    stdio: ["ignore", "pipe", "inherit"],
    maxBuffer: 64 * 2 ** 20,
  });
  const measured = (child.stdout ?? "").split("\n").filter((l) => l.startsWith("{")).map((l) =>
    JSON.parse(l) as Measured
  );
  const name = measured[0]?.runtime ?? runtime;
  if (child.status === 0) results.push({ runtime: name, measured });
  else {
    const why = child.error?.message ?? `status ${child.status}${child.signal ? ` (${child.signal})` : ""}`;
    results.push({ runtime: name, measured, error: why.replace(ANSI_COLOR, "") });
  }
}

const machine = `${cpus().length} × ${cpus()[0]?.model ?? "cpu"}`;
const rounds = option("rounds") ?? (quick ? "3" : "15");
console.log(
  from !== undefined
    ? `\nThe specification's benchmark, from ${from.join(", ")}`
    : `\nThe specification's benchmark, ${started.toISOString().slice(0, 16).replace("T", " ")} UTC; ${machine}; ` +
      `load average at start ${load.map((l) => l.toFixed(2)).join(", ")}; ` +
      `command: npm run bench:spec${passOn.length > 0 ? ` -- ${passOn.join(" ")}` : ""}` +
      `${option("runtimes") ? ` --runtimes=${option("runtimes")}` : ""}; ${rounds} rounds${
        quick ? " (--quick: small sizes, not the specification's)" : ""
      }. A cell: the median over rounds [its 95% interval], contenders alternating within each round.\n`,
);
console.log(render(results));
for (const r of results) {
  for (const m of r.measured) {
    const sizes = Object.entries(m.sizes).map(([k, v]) => `${k} ${v}`).join(", ");
    console.log(`- ${r.runtime}, workload ${m.workload}: ${sizes}`);
  }
}
if (process.argv.includes("--json")) {
  for (const r of results) for (const m of r.measured) console.log(JSON.stringify(m));
}
process.exit(results.some((r) => r.error !== undefined) ? 1 : 0);
