/**
 * The mutation run (`npm run mutants`): every kept TypeScript mutant of `tests/mutants/mutants.ts`, applied in
 * turn to the real file of a scratch copy of the repository, under the ordinary checks that should catch it.
 *
 * The suites' own mutant tests ("... catch every pool mutant") load a mutant beside the shipped code and run
 * a scenario chosen for it. This command asks the harder question: would the project's ordinary tests notice
 * the bug if someone made it in `lib/`? For each mutant it patches the file in the scratch copy (the patch
 * must match exactly, as everywhere), runs the group's test files with Deno, every test but the mutant
 * tests themselves (their names say "mutant": in a mutated copy they would fail for the wrong reason, so
 * `FILCH_MUTATION_RUN=1` makes `tests/_test.ts` leave them out), and stops at the first failing test. It prints a table — mutant, caught by (file and test), time — and a
 * score, caught of total.
 *
 * Honesty rules:
 * - Before a group's mutants, its checks run once on the unmutated copy and must pass; otherwise the group's
 *   rows say "baseline failed" and count as not caught.
 * - Only a failing test counts: a run that exits non-zero without a test failure (a module that does not
 *   load, a crash) is reported as an error, not as caught. An error that no test caught but that failed the
 *   file's run (Deno's "(uncaught error)": a dangling promise rejected by the pool's own bug checks, say)
 *   counts, and says so, only if some of the file's tests ran. A check still running at its deadline is killed
 *   and counted as caught by a hang (a test's own timeout would fail it in CI), and labelled so.
 * - The repository itself is never edited: the scratch copy lives in the system's temporary directory.
 *
 * Options: `--fast` (only the groups marked fast: what CI runs), `--only name[,name]` (mutants or groups by
 * name), `--markdown` (the table as Markdown too), `--keep` (keep the scratch copy, and say where).
 * Exit code: 0 when every mutant run was caught, 1 otherwise, 2 on bad usage.
 *
 * Runs on Node 24 (`node tests/mutants/run.ts`) or Deno; the checks run under `deno test` from node_modules.
 *
 * @module
 */
import { spawn } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { argv, env as processEnv, exit, stdout } from "node:process";
import {
  ALL_MUTANTS,
  applyPatches,
  ASYNC_BOUND_MUTANTS,
  AUDIT_A_MUTANTS,
  AUDIT_A_ROOM_MUTANTS,
  AUDIT_B_MUTANTS,
  BACKLOG_MUTANTS,
  BLOCK_NOTE_MUTANTS,
  CUT_MUTANTS,
  DEATH_MUTANTS,
  ELASTIC_LINCHECK_MUTANTS,
  ELASTIC_MUTANTS,
  FORCE_MUTANTS,
  GRAPH_LINCHECK_MUTANTS,
  GRAPH_MUTANTS,
  JOIN_MUTANTS,
  KILL_GUARD_MUTANTS,
  LEVELS_MUTANTS,
  LINGER_MUTANTS,
  MAP_MUTANTS,
  MEMORY_MUTANTS,
  ORDER_MUTANTS,
  type Patch,
  PAYLOAD_MUTANTS,
  POOL_MUTANTS,
  PRODUCER_THREAD_MUTANTS,
  PRODUCERS_MUTANTS,
  PROGRESS_MUTANTS,
  RECORD_MUTANTS,
  SETUP_MUTANTS,
  SLEEP_MUTANTS,
  SORT_MUTANTS,
  STACK_CUT_MUTANTS,
  TEXT_MUTANTS,
  VACANCY_MUTANTS,
} from "./mutants.ts";

/** A mutant as this command needs it: where it applies and what it patches. */
interface Applicable {
  name: string;
  /** The patched file, relative to the repository's root. */
  file: string;
  bug: string;
  patches: Patch[];
}

/** Mutants that the same checks should catch. */
interface Group {
  name: string;
  mutants: Applicable[];
  /** Test files (relative to the root) run in order until one fails. */
  checks: string[];
  /** Part of `--fast` (and so of CI): its checks are quick enough to run once per mutant there. */
  fast: boolean;
}

const root = fileURLToPath(new URL("../../", import.meta.url));

/** The longest one check may run on a mutant before it is counted as hanging. */
const CHECK_DEADLINE_MS = 6 * 60_000;

function protocol(list: readonly { name: string; module: string; bug: string; patches: Patch[] }[]): Applicable[] {
  return list.map((m) => ({ name: m.name, file: `lib/protocol/${m.module}`, bug: m.bug, patches: m.patches }));
}

function pool(list: readonly { name: string; module: string; bug: string; patches: Patch[] }[]): Applicable[] {
  return list.map((m) => ({ name: m.name, file: `lib/${m.module}`, bug: m.bug, patches: m.patches }));
}

/** The groups, each with the ordinary checks that should catch its mutants. */
export const GROUPS: readonly Group[] = [
  {
    name: "deque",
    mutants: protocol(ALL_MUTANTS.filter((m) => m.module === "deque.ts")),
    checks: ["tests/lincheck/systematic_test.ts", "tests/lincheck/random_test.ts"],
    fast: true,
  },
  {
    name: "queue",
    mutants: protocol(ALL_MUTANTS.filter((m) => m.module === "injector.ts")),
    checks: ["tests/lincheck/queue_test.ts"],
    fast: true,
  },
  { name: "sleep", mutants: protocol(SLEEP_MUTANTS), checks: ["tests/lincheck/sleep_test.ts"], fast: true },
  {
    name: "kill_guard",
    mutants: protocol(KILL_GUARD_MUTANTS),
    checks: ["tests/lincheck/kill_guard_test.ts"],
    fast: true,
  },
  { name: "cut", mutants: protocol(CUT_MUTANTS), checks: ["tests/protocol/cut_short_test.ts"], fast: true },
  {
    name: "block_notes",
    mutants: pool(BLOCK_NOTE_MUTANTS),
    checks: ["tests/record/payload_cut_test.ts", "tests/worker/marks_test.ts", "tests/owner/recovery_test.ts"],
    fast: true,
  },
  {
    name: "stack_cut",
    mutants: pool(STACK_CUT_MUTANTS),
    checks: ["tests/worker/fork_join_test.ts", "tests/producer/admission_test.ts"],
    fast: true,
  },
  { name: "backlog", mutants: pool(BACKLOG_MUTANTS), checks: ["tests/pool/backlog_test.ts"], fast: true },
  { name: "map", mutants: pool(MAP_MUTANTS), checks: ["tests/pool/backpressure_test.ts"], fast: true },
  { name: "order", mutants: pool(ORDER_MUTANTS), checks: ["tests/pool/order_test.ts"], fast: true },
  { name: "linger", mutants: pool(LINGER_MUTANTS), checks: ["tests/pool/order_test.ts"], fast: true },
  { name: "text", mutants: pool(TEXT_MUTANTS), checks: ["tests/codec/codec_test.ts"], fast: true },
  { name: "death", mutants: pool(DEATH_MUTANTS), checks: ["tests/pool/death_test.ts"], fast: true },
  {
    name: "sort",
    mutants: SORT_MUTANTS.map((m) => ({ name: m.name, file: `examples/${m.module}`, bug: m.bug, patches: m.patches })),
    checks: ["tests/examples/sort_split_test.ts", "tests/examples/sort_buckets_test.ts"],
    fast: true,
  },
  {
    name: "levels",
    mutants: pool(LEVELS_MUTANTS),
    checks: ["tests/lincheck/levels_test.ts", "tests/pool/priority_test.ts"],
    fast: true,
  },
  { name: "memory", mutants: pool(MEMORY_MUTANTS), checks: ["tests/pool/priority_test.ts"], fast: true },
  { name: "progress", mutants: pool(PROGRESS_MUTANTS), checks: ["tests/pool/progress_test.ts"], fast: true },
  { name: "async_bound", mutants: pool(ASYNC_BOUND_MUTANTS), checks: ["tests/pool/async_bound_test.ts"], fast: true },
  {
    name: "setup",
    mutants: pool(SETUP_MUTANTS),
    checks: [
      "tests/pool/replacement_failure_test.ts",
      "tests/pool/no_workers_test.ts",
      "tests/pool/worker_setup_test.ts",
      "tests/pool/recycle_test.ts",
    ],
    fast: false,
  },
  {
    name: "vacancy",
    mutants: pool(VACANCY_MUTANTS),
    checks: ["tests/pool/replacement_failure_test.ts", "tests/pool/no_workers_test.ts"],
    fast: false,
  },
  {
    name: "elastic",
    mutants: pool(ELASTIC_MUTANTS),
    checks: ["tests/protocol/slots_test.ts", "tests/pool/elastic_test.ts"],
    fast: true,
  },
  {
    name: "elastic_lincheck",
    mutants: pool(ELASTIC_LINCHECK_MUTANTS),
    checks: ["tests/lincheck/elastic_test.ts"],
    fast: true,
  },
  {
    name: "audit_b",
    mutants: pool(AUDIT_B_MUTANTS),
    checks: ["tests/protocol/recovery_paths_test.ts", "tests/pool/audit_b_test.ts"],
    fast: true,
  },
  {
    name: "graph",
    mutants: pool(GRAPH_MUTANTS),
    checks: [
      "tests/pool/graph_test.ts",
      "tests/pool/graph_progress_test.ts",
      "tests/pool/graph_stack_test.ts",
      "tests/pool/graph_join_depth_test.ts",
    ],
    fast: true,
  },
  {
    name: "graph_lincheck",
    mutants: pool(GRAPH_LINCHECK_MUTANTS),
    checks: ["tests/lincheck/graph_test.ts"],
    fast: true,
  },
  {
    name: "producers",
    mutants: pool(PRODUCERS_MUTANTS),
    checks: ["tests/lincheck/producers_test.ts"],
    fast: true,
  },
  {
    name: "producer_threads",
    mutants: pool(PRODUCER_THREAD_MUTANTS),
    checks: ["tests/pool/producers_test.ts", "tests/pool/inner_producer_test.ts", "tests/pool/terminated_test.ts"],
    fast: false,
  },
  {
    name: "audit_a",
    mutants: pool(AUDIT_A_MUTANTS),
    checks: [
      "tests/protocol/producer_slots_test.ts",
      "tests/protocol/levels_quota_test.ts",
      "tests/pool/fair_share_test.ts",
    ],
    fast: true,
  },
  {
    name: "audit_a_waits",
    mutants: pool(AUDIT_A_ROOM_MUTANTS),
    checks: ["tests/lincheck/room_wait_test.ts", "tests/lincheck/producers_test.ts"],
    fast: true,
  },
  {
    name: "record",
    mutants: pool(RECORD_MUTANTS),
    checks: ["tests/pool/accounting_test.ts", "tests/pool/cancel_test.ts", "tests/pool/pool_test.ts"],
    fast: false,
  },
  { name: "pool", mutants: pool(POOL_MUTANTS), checks: ["tests/pool/cancel_test.ts"], fast: false },
  { name: "join", mutants: pool(JOIN_MUTANTS), checks: ["tests/pool/join_test.ts"], fast: false },
  { name: "payload", mutants: pool(PAYLOAD_MUTANTS), checks: ["tests/pool/payload_test.ts"], fast: false },
  { name: "force", mutants: pool(FORCE_MUTANTS), checks: ["tests/pool/force_test.ts"], fast: false },
];

/** What one check run on one copy gave. */
interface CheckRun {
  /** "pass", "fail" (a test failed: `failed` names it), "hang" (killed at the deadline), "error". */
  verdict: "pass" | "fail" | "hang" | "error";
  failed?: string;
  detail?: string;
  /** With "fail": the first lines of Deno's ERRORS section (what the failed test said), kept for a baseline's report. */
  errors?: string;
  ms: number;
}

/** The names of the failed tests in Deno's report: the lines of its FAILURES section, up to the summary. */
export function failedTests(output: string): string[] {
  const lines = output.split("\n");
  const start = lines.findIndex((line) => /^\s*FAILURES\s*$/.test(line));
  if (start === -1) return [];
  const names: string[] = [];
  for (const line of lines.slice(start + 1)) {
    if (/^(FAILED|ok) \|/.test(line.trim())) break;
    const match = /^(.+?) => \S+$/.exec(line.trim());
    if (match) names.push(match[1]);
    // An error no test caught (a dangling promise, an event handler) fails the file's run as a whole.
    else if (/^\S+ \(uncaught error\)$/.test(line.trim())) names.push(`${UNCAUGHT}: ${uncaughtMessage(lines)}`);
  }
  return names;
}

/** How {@link failedTests} names an error that no test caught but that failed the run. */
const UNCAUGHT = "an error no test caught, while its tests ran";

/**
 * The first lines of Deno's ERRORS section, stack frames left out: what a failed test said (a baseline that
 * fails once in many runs is a flake whose message is all there is to go on).
 */
function errorsOf(output: string): string {
  const lines = output.split("\n");
  const start = lines.findIndex((line) => /^\s*ERRORS\s*$/.test(line));
  if (start === -1) return "";
  return lines.slice(start + 1).filter((line) => line.trim() !== "" && !/^\s+at /.test(line)).slice(0, 8).join("\n");
}

/** The first `error:` line of Deno's ERRORS section (what an uncaught error said). */
function uncaughtMessage(lines: string[]): string {
  const start = lines.findIndex((line) => /^\s*ERRORS\s*$/.test(line));
  return lines.slice(start + 1).find((line) => line.startsWith("error:"))?.slice(7).trim() ?? "(no message)";
}

function runCheck(copy: string, file: string): Promise<CheckRun> {
  const started = performance.now();
  const deno = join(root, "node_modules", ".bin", "deno");
  const args = ["test", "-A", "--no-check", "--fail-fast", file];
  return new Promise((resolve) => {
    const child = spawn(deno, args, {
      cwd: copy,
      // FILCH_MUTATION_RUN: tests/_test.ts leaves out the mutant tests (see the module doc).
      env: { ...processEnv, NO_COLOR: "1", FORCE_COLOR: "0", FILCH_MUTATION_RUN: "1" },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    child.stderr.on("data", (chunk) => (output += chunk));
    let hung = false;
    const timer = setTimeout(() => {
      hung = true;
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        child.kill("SIGKILL");
      }
    }, CHECK_DEADLINE_MS);
    child.on("close", (code) => {
      clearTimeout(timer);
      // Deno colours its report whatever NO_COLOR says when FORCE_COLOR is set by a parent: strip the codes.
      // deno-lint-ignore no-control-regex
      output = output.replace(/\x1b\[[0-9;]*m/g, "");
      const ms = performance.now() - started;
      if (hung) return resolve({ verdict: "hang", ms, detail: `still running after ${CHECK_DEADLINE_MS / 1000} s` });
      if (code === 0) {
        // A run of no test at all passes too: that is a broken check, not a pass.
        const ran = /\bok \| (\d+) passed/.exec(output);
        if (ran === null || Number(ran[1]) === 0) {
          return resolve({
            verdict: "error",
            ms,
            detail: `no test ran:\n${output.trim().split("\n").slice(-3).join("\n")}`,
          });
        }
        return resolve({ verdict: "pass", ms });
      }
      const failed = failedTests(output);
      // An uncaught error counts only if tests ran: a module that does not load (0 passed) is no catch.
      const passed = Number(/(\d+) passed \| \d+ failed/.exec(output)?.[1] ?? 0);
      const named = failed.filter((name) => !name.startsWith(UNCAUGHT));
      const errors = errorsOf(output);
      if (named.length > 0) return resolve({ verdict: "fail", failed: named[0], errors, ms });
      if (failed.length > 0 && passed > 0) return resolve({ verdict: "fail", failed: failed[0], errors, ms });
      const tail = output.trim().split("\n").slice(-6).join("\n");
      resolve({ verdict: "error", ms, detail: `exit ${code} without a failed test:\n${tail}` });
    });
  });
}

/** A scratch copy of the repository (no .git, node_modules linked), for patching. */
function scratchCopy(): string {
  const copy = mkdtempSync(join(tmpdir(), "filch-mutation-"));
  for (const entry of ["lib", "tests", "spec", "bench", "examples", "docs", "mod.ts", "deno.json", "package.json"]) {
    if (existsSync(join(root, entry))) cpSync(join(root, entry), join(copy, entry), { recursive: true });
  }
  for (const entry of ["README.md", "tsconfig.json", "LICENSE"]) {
    if (existsSync(join(root, entry))) cpSync(join(root, entry), join(copy, entry));
  }
  symlinkSync(join(root, "node_modules"), join(copy, "node_modules"));
  return copy;
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

interface Row {
  group: string;
  mutant: string;
  caughtBy: string;
  caught: boolean;
  ms: number;
}

async function main(): Promise<number> {
  const args = argv.slice(2);
  const fast = args.includes("--fast");
  const markdown = args.includes("--markdown");
  const keep = args.includes("--keep");
  const onlyAt = args.indexOf("--only");
  const only = onlyAt === -1 ? undefined : new Set((args[onlyAt + 1] ?? "").split(",").filter((s) => s !== ""));
  const known = new Set(["--fast", "--markdown", "--keep", "--only"]);
  const unknown = args.filter((a, i) => !known.has(a) && i !== onlyAt + 1);
  if (unknown.length > 0 || (only !== undefined && only.size === 0)) {
    console.error(`usage: node tests/mutants/run.ts [--fast] [--only name[,name]] [--markdown] [--keep]`);
    if (unknown.length > 0) console.error(`unknown argument(s): ${unknown.join(" ")}`);
    return 2;
  }
  const groups = GROUPS.map((g) => ({
    ...g,
    mutants: g.mutants.filter((m) => only === undefined || only.has(m.name) || only.has(g.name)),
  })).filter((g) => g.mutants.length > 0 && (!fast || g.fast));
  if (only !== undefined) {
    const names = new Set(GROUPS.flatMap((g) => [g.name, ...g.mutants.map((m) => m.name)]));
    const missing = [...only].filter((n) => !names.has(n));
    if (missing.length > 0) {
      console.error(`no mutant or group named: ${missing.join(", ")}`);
      return 2;
    }
  }
  const total = groups.reduce((n, g) => n + g.mutants.length, 0);
  console.log(
    `mutation run: ${total} mutant(s) in ${groups.length} group(s)${fast ? " (--fast)" : ""}, checks under deno test`,
  );
  const copy = scratchCopy();
  const rows: Row[] = [];
  // A check file's baseline on the unmutated copy is the same for every group that names it (order and
  // linger share order_test.ts; levels and memory priority_test.ts): run once, reported for each group.
  const baselines = new Map<string, Awaited<ReturnType<typeof runCheck>>>();
  try {
    for (const group of groups) {
      const baseline: string[] = [];
      for (const check of group.checks) {
        const known = baselines.get(check);
        const run = known ?? await runCheck(copy, check);
        baselines.set(check, run);
        console.log(
          `  baseline ${group.name}: ${check}: ${run.verdict} (${known ? "as run above" : seconds(run.ms)})`,
        );
        if (run.verdict !== "pass") baseline.push(`${check}: ${run.verdict}${run.failed ? `: ${run.failed}` : ""}`);
        if (run.detail) console.log(run.detail.replace(/^/gm, "    "));
        if (!known && run.verdict === "fail" && run.errors) console.log(run.errors.replace(/^/gm, "    "));
      }
      for (const mutant of group.mutants) {
        if (baseline.length > 0) {
          rows.push({
            group: group.name,
            mutant: mutant.name,
            caughtBy: `baseline failed (${baseline[0]})`,
            caught: false,
            ms: 0,
          });
          continue;
        }
        const path = join(copy, mutant.file);
        const original = readFileSync(path, "utf8");
        let row: Row;
        try {
          writeFileSync(path, applyPatches(original, { ...mutant, module: mutant.file.replace(/^lib\//, "") }));
          row = { group: group.name, mutant: mutant.name, caughtBy: "MISSED", caught: false, ms: 0 };
          for (const check of group.checks) {
            const run = await runCheck(copy, check);
            row.ms += run.ms;
            const file = check.replace(/^tests\//, "");
            if (run.verdict === "fail") {
              row = { ...row, caughtBy: `${file}: ${run.failed}`, caught: true };
              break;
            }
            if (run.verdict === "hang") {
              row = { ...row, caughtBy: `${file}: a hang (${run.detail})`, caught: true };
              break;
            }
            if (run.verdict === "error") {
              row = { ...row, caughtBy: `ERROR in ${file}: ${run.detail}` };
              break;
            }
          }
        } catch (error) {
          row = {
            group: group.name,
            mutant: mutant.name,
            caughtBy: `ERROR: ${(error as Error).message}`,
            caught: false,
            ms: 0,
          };
        } finally {
          writeFileSync(path, original);
        }
        rows.push(row);
        console.log(
          `  ${row.caught ? "caught" : "NOT CAUGHT"} ${group.name}/${mutant.name}: ${row.caughtBy} (${
            seconds(row.ms)
          })`,
        );
      }
    }
  } finally {
    if (keep) console.log(`scratch copy kept: ${copy}`);
    else rmSync(copy, { recursive: true, force: true });
  }
  const caught = rows.filter((r) => r.caught).length;
  const width = Math.max(...rows.map((r) => r.group.length + 1 + r.mutant.length), 6);
  console.log(`\n${"mutant".padEnd(width)}  ${"time".padStart(8)}  caught by`);
  for (const r of rows) {
    console.log(
      `${`${r.group}/${r.mutant}`.padEnd(width)}  ${seconds(r.ms).padStart(8)}  ${r.caughtBy.split("\n")[0]}`,
    );
  }
  if (markdown) {
    console.log("\n| mutant | caught by | time |\n|---|---|---|");
    for (const r of rows) {
      console.log(
        `| \`${r.group}/${r.mutant}\` | ${r.caughtBy.split("\n")[0].replaceAll("|", "\\|")} | ${seconds(r.ms)} |`,
      );
    }
  }
  console.log(`\nmutation score: ${caught} of ${rows.length} caught`);
  return caught === rows.length ? 0 : 1;
}

if (import.meta.main ?? fileURLToPath(import.meta.url) === argv[1]) {
  const code = await main();
  // Exits once standard output has flushed: to a pipe whose reader is slow (tests/run_all.ts, which parses the
  // score line), a plain exit() dropped the table's last rows and the score once, and a passing run failed.
  stdout.write("", () => exit(code));
}
