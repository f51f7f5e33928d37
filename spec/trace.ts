/**
 * Trace validation: runs the real pool with every shared access recorded (`tests/_trace_run.ts`, on Deno,
 * Bun and Node), and has TLC check that each recorded log is a behaviour of the matching spec — the
 * deques' accesses against `ChaseLevTrace.tla` (ChaseLev.tla), each queue's (the injector, the free list,
 * the completion queue) against `InjectorTrace.tla` (Injector.tla). Then the same for a run of the pool
 * built with each TypeScript mutant of those modules (`tests/mutants/mutants.ts`, applied to a copy of
 * `mod.ts` and `lib/`): its log must be REJECTED (or break an invariant on the way).
 *
 * Verdicts: ACCEPTED (some behaviour of the spec matches the whole log: TLC reports the invariant
 * TraceIncomplete violated), REJECTED (no behaviour matches it: TLC explores every candidate and stops
 * short; the first record no behaviour can take is printed), VIOLATED (a behaviour matching the log breaks
 * an invariant or property of the spec, named). A real run must be ACCEPTED; a mutant run must be REJECTED
 * or VIOLATED. A run whose pool failed (a mutant that hangs or loses tasks) is still validated: its log up
 * to the failure is what the code did.
 *
 * Exits 0 when everything is as expected, 1 on any surprise, 2 when TLC cannot run (SKIPPED: no Java or no
 * jar; never counted as passed). Uses only `node:` builtins; runs under Node, Deno and Bun.
 *
 * Usage: `trace.ts [--runtimes deno,bun,node] [--mutants all|none|NAME[,NAME...]] [--keep DIR]`
 *
 * @module
 */

import { spawn } from "node:child_process";
import { copyFileSync, cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import process from "node:process";
import { fileURLToPath, pathToFileURL } from "node:url";
import { ALL_MUTANTS, applyPatches, type Mutant } from "../tests/mutants/mutants.ts";
import { cachedJarPath, findJar, findJava, parseTlcOutput, Skip } from "./check.ts";

const specDir = dirname(fileURLToPath(import.meta.url));
const root = dirname(specDir);
const bin = join(root, "node_modules", ".bin");

/** A recorded run, as `tests/_trace_run.ts` writes it. */
export interface RecordedRun {
  runtime: string;
  layout: {
    shape: { workers: number; dequeCapacity: number; taskCapacity: number; blocks: number };
    deques: number;
    dequeBytes: number;
    injector: number;
    freeRecords: number;
    completions: number;
    freeBlocks: number;
  };
  overflow: boolean;
  failure: string;
  snapshot: number[];
  /** [thread, kind, word, a, b, old, now] (tests/_trace.ts: Kind, TraceEvent). */
  events: number[][];
}

/** One log to check: a spec and the data module that holds the log. */
export interface Validation {
  /** What it covers, as printed: "deques", "injector", ... */
  name: string;
  /** The trace spec, e.g. ChaseLevTrace (its .cfg beside it). */
  module: string;
  /** The data module's name and text. */
  dataModule: string;
  data: string;
  /** Records in the log. */
  records: number;
  /** The records, for printing the one a REJECTED log stopped at: [thread, access]. */
  describe(index: number): string;
}

const KIND_NAMES = ["?", "load", "store", "compareExchange", "add", "sub", "exchange", "or", "and"];
const LINE = 16; // int32 words per cache line (lib/layout.ts CACHE_LINE_WORDS)

function tlaTuple(values: readonly (number | string)[]): string {
  return `<<${values.join(", ")}>>`;
}

/**
 * The deques' accesses of a run, as a log for ChaseLevTrace: thread d of the spec is the thread that owns
 * deque d (the only one that stores its bottom).
 *
 * @param run The recorded run.
 * @returns The validation, or a message saying why the log cannot be one (an access the spec has no
 *   kind for, a thread owning two deques).
 */
export function dequeValidation(run: RecordedRun): Validation | string {
  const { layout } = run;
  const workers = layout.shape.workers;
  const capacity = layout.shape.dequeCapacity;
  const base = layout.deques / 4;
  const size = layout.dequeBytes / 4;
  const where = (word: number): { d: number; w: number; s: number } | null => {
    const off = word - base;
    if (off < 0 || off >= workers * size) return null;
    const d = Math.floor(off / size);
    const inner = off % size;
    if (inner === 0) return { d, w: 0, s: 0 };
    if (inner === LINE) return { d, w: 1, s: 0 };
    if (inner >= 2 * LINE && inner < 2 * LINE + capacity) return { d, w: 2, s: inner - 2 * LINE };
    return { d, w: -1, s: inner };
  };
  const ownerOf = new Map<number, number>(); // thread -> deque
  for (const e of run.events) {
    const at = where(e[2]);
    if (at === null || at.w !== 1 || e[1] !== 2) continue;
    const had = ownerOf.get(e[0]);
    if (had !== undefined && had !== at.d) return `thread ${e[0]} stores the bottom of deques ${had} and ${at.d}`;
    ownerOf.set(e[0], at.d);
  }
  const taken = new Set(ownerOf.values());
  const free = [...Array(workers).keys()].filter((d) => !taken.has(d));
  const specThread = (thread: number): number => {
    let d = ownerOf.get(thread);
    if (d === undefined) {
      d = free.shift();
      if (d === undefined) throw new Error(`more threads than deques touch the deques (thread ${thread})`);
      ownerOf.set(thread, d);
    }
    return d;
  };
  const log: number[][] = [];
  const original: number[][] = [];
  let maxValue = 0;
  let pushes = 0;
  for (const e of run.events) {
    const at = where(e[2]);
    if (at === null) continue;
    if (at.w < 0) return `an access to word ${at.s} of deque ${at.d}, which is no protocol word`;
    if (e[1] < 1 || e[1] > 3) return `a ${KIND_NAMES[e[1]]} on deque ${at.d}: the deque makes only loads, stores and compare-exchanges`;
    if (e[0] === 0) return `the main thread accessed deque ${at.d} (the pool's main thread has no deque operations in this run)`;
    if (at.w === 2) {
      maxValue = Math.max(maxValue, e[5], e[6]);
      if (e[1] === 2) pushes++;
    }
    log.push([specThread(e[0]), e[1], at.d, at.w, at.s, e[5], e[6]]);
    original.push(e);
  }
  const snap = (d: number, inner: number) => run.snapshot[base + d * size + inner] ?? 0;
  for (let d = 0; d < workers; d++) {
    for (let s = 0; s < capacity; s++) maxValue = Math.max(maxValue, snap(d, 2 * LINE + s));
  }
  const deques = [...Array(workers).keys()];
  const lines = [
    "---------------------------- MODULE ChaseLevTraceData ----------------------------",
    `\\* GENERATED by spec/trace.ts from a ${run.runtime} run of tests/_trace_run.ts: ${log.length} deque accesses.`,
    "EXTENDS Integers, Sequences",
    `TraceThieves == ${workers > 1 ? `1..${workers - 1}` : "{}"}`,
    `TracePushes == ${Math.max(pushes, maxValue) + 1}`,
    `SnapTop == [d \\in 0..${workers - 1} |-> ${tlaTuple(deques.map((d) => snap(d, 0)))}[d + 1]]`,
    `SnapBottom == [d \\in 0..${workers - 1} |-> ${tlaTuple(deques.map((d) => snap(d, LINE)))}[d + 1]]`,
    `SnapSlot == [d \\in 0..${workers - 1} |-> [s \\in 0..${capacity - 1} |-> ${
      tlaTuple(deques.map((d) => tlaTuple([...Array(capacity).keys()].map((s) => snap(d, 2 * LINE + s)))))
    }[d + 1][s + 1]]]`,
    "TraceLog == <<",
    log.map((r) => `  ${tlaTuple(r)}`).join(",\n"),
    ">>",
    "=============================================================================",
  ];
  const wordName = ["top", "bottom", "slot"];
  return {
    name: "deques",
    module: "ChaseLevTrace",
    dataModule: "ChaseLevTraceData",
    data: lines.join("\n") + "\n",
    records: log.length,
    describe: (i) => {
      const r = log[i];
      if (r === undefined) return "(past the end of the log)";
      const word = r[3] === 2 ? `slot ${r[4]}` : wordName[r[3]];
      return `record ${i + 1}: thread ${r[0]} (threadId ${original[i][0]}) ${KIND_NAMES[r[1]]} deque ${r[2]} ${word}: ${
        r[1] === 2 ? "" : `${r[5]} -> `
      }${r[6]}`;
    },
  };
}

/** How a log fared: see the module doc. */
export type Verdict = "ACCEPTED" | "REJECTED" | "VIOLATED" | "ERROR";

/**
 * Runs TLC on one log.
 *
 * @returns The verdict, what it rests on, and the number of records the longest matching behaviour took.
 */
async function check(java: string, jar: string, v: Validation): Promise<{ verdict: Verdict; detail: string; seconds: number }> {
  const work = mkdtempSync(join(tmpdir(), "filch-trace-tlc-"));
  for (const f of readdirSync(specDir)) if (f.endsWith(".tla")) copyFileSync(join(specDir, f), join(work, f));
  copyFileSync(join(specDir, `${v.module}.cfg`), join(work, `${v.module}.cfg`));
  writeFileSync(join(work, `${v.dataModule}.tla`), v.data);
  if (keepDir !== null) writeFileSync(join(keepDir, `${v.dataModule}-${v.name}-${Date.now()}.tla`), v.data);
  const args = [
    "-XX:+UseParallelGC",
    "-Xss16m", // a long log is one long tuple: the parser recurses over it
    "-cp",
    jar,
    "tlc2.TLC",
    "-workers",
    "1",
    "-deadlock", // a behaviour that cannot take the next record simply ends: that is not an error here
    "-metadir",
    join(work, "states"),
    "-config",
    `${v.module}.cfg`,
    `${v.module}.tla`,
  ];
  const started = performance.now();
  const { output } = await new Promise<{ output: string }>((done) => {
    const child = spawn(java, args, { cwd: work });
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    child.stderr.on("data", (chunk) => (output += chunk));
    const deadline = setTimeout(() => {
      output += `\nTIMED OUT: TLC ran past ${TLC_DEADLINE_S} s on ${v.name}; killed\n`;
      child.kill("SIGKILL");
    }, TLC_DEADLINE_S * 1000);
    child.on("close", () => {
      clearTimeout(deadline);
      done({ output });
    });
  });
  rmSync(work, { recursive: true, force: true });
  const seconds = (performance.now() - started) / 1000;
  const outcome = parseTlcOutput(output);
  if (outcome.violated === "TraceIncomplete") {
    return { verdict: "ACCEPTED", detail: `all ${v.records} records matched`, seconds };
  }
  if (outcome.violated !== null) {
    return { verdict: "VIOLATED", detail: `${outcome.violated} broken by a behaviour that matches the log so far`, seconds };
  }
  if (outcome.clean && outcome.depth !== null) {
    // The search's depth counts states: the initial one, then one per record matched.
    const matched = outcome.depth - 1;
    return {
      verdict: "REJECTED",
      detail: `no behaviour takes ${v.describe(matched)} (after ${matched} of ${v.records} records)`,
      seconds,
    };
  }
  const lines = output.split("\n").filter((l) => /Error|error|Exception|TIMED OUT|Assumption/.test(l)).slice(0, 8);
  return { verdict: "ERROR", detail: lines.join(" | ") || output.slice(-400), seconds };
}

const TLC_DEADLINE_S = 10 * 60;
const DRIVER_DEADLINE_MS = 90_000;
let keepDir: string | null = null;

/** Runs `tests/_trace_run.ts` on `runtime` with the lib at `libRoot`; returns its recorded run. */
async function record(runtime: string, libRoot: string): Promise<RecordedRun> {
  const out = join(mkdtempSync(join(tmpdir(), "filch-trace-run-")), "trace.json");
  const driver = join(root, "tests", "_trace_run.ts");
  const args = ["--out", out, "--root", libRoot];
  const [command, argv] = runtime === "deno"
    ? [join(bin, "deno"), ["run", "-A", driver, ...args]]
    : [join(bin, runtime), [driver, ...args]];
  const { code, output } = await new Promise<{ code: number | null; output: string }>((done) => {
    const child = spawn(command, argv, { cwd: root, env: { ...process.env, NO_COLOR: "1" } });
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    child.stderr.on("data", (chunk) => (output += chunk));
    // The driver has its own deadline for the pool; this one is for the driver itself.
    const deadline = setTimeout(() => {
      output += `\nTIMED OUT: the traced run on ${runtime} ran past ${DRIVER_DEADLINE_MS} ms; killed\n`;
      child.kill("SIGKILL");
    }, DRIVER_DEADLINE_MS);
    child.on("close", (code) => {
      clearTimeout(deadline);
      done({ code, output });
    });
  });
  let run: RecordedRun;
  try {
    run = JSON.parse(readFileSync(out, "utf8"));
  } catch {
    throw new Error(`the traced run on ${runtime} wrote no trace (exit ${code}): ${output.trim().slice(-600)}`);
  } finally {
    rmSync(dirname(out), { recursive: true, force: true });
  }
  if (code !== 0 && run.failure === "") run.failure = `exit ${code}: ${output.trim().slice(-300)}`;
  return run;
}

/** A copy of `mod.ts` and `lib/` with `mutant` applied; returns the copy's root URL (with a trailing slash). */
function mutatedRoot(mutant: Mutant, into: string): string {
  const dir = join(into, mutant.name);
  mkdirSync(dir, { recursive: true });
  cpSync(join(root, "lib"), join(dir, "lib"), { recursive: true });
  copyFileSync(join(root, "mod.ts"), join(dir, "mod.ts"));
  // Node decides ESM vs CommonJS for a .ts file by the nearest package.json.
  writeFileSync(join(dir, "package.json"), '{ "type": "module" }\n');
  const file = join(dir, "lib", mutant.module);
  writeFileSync(file, applyPatches(readFileSync(file, "utf8"), mutant));
  return pathToFileURL(dir).href + "/";
}

/** The validations of a recorded run, for the protocols given. */
function validations(run: RecordedRun, protocols: readonly string[]): (Validation | string)[] {
  const out: (Validation | string)[] = [];
  if (protocols.includes("deque.ts")) out.push(dequeValidation(run));
  return out;
}

/** The modules trace validation covers, and their mutants that it runs. */
const COVERED = ["deque.ts"];

async function main(argv: string[]): Promise<number> {
  let runtimes = ["deno", "bun", "node"];
  let mutantNames: string[] | "all" = "all";
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--runtimes") runtimes = argv[++i].split(",");
    else if (argv[i] === "--mutants") {
      const v = argv[++i];
      mutantNames = v === "all" ? "all" : v === "none" ? [] : v.split(",");
    } else if (argv[i] === "--keep") keepDir = argv[++i];
    else {
      throw new RangeError(
        `Cannot run trace.ts as '${argv[i]}' is not an option: use --runtimes, --mutants all|none|A,B or --keep DIR`,
      );
    }
  }
  const mutants = ALL_MUTANTS.filter((m) =>
    COVERED.includes(m.module) && (mutantNames === "all" || mutantNames.includes(m.name))
  );
  if (mutantNames !== "all") {
    for (const name of mutantNames) {
      if (!mutants.some((m) => m.name === name)) {
        throw new RangeError(`Cannot run trace.ts as '${name}' is not a mutant of ${COVERED.join(", ")}`);
      }
    }
  }
  let java: string;
  let jar: string;
  try {
    java = findJava();
    jar = await findJar();
  } catch (error) {
    if (!(error instanceof Skip)) throw error;
    console.log("==================================================================");
    console.log(`SKIPPED: trace validation not run: ${error.message}`);
    console.log(`Nothing was checked. Set TLA2TOOLS_JAR, or put tla2tools.jar at ${cachedJarPath()}.`);
    console.log("==================================================================");
    return 2;
  }
  let problems = 0;
  const started = performance.now();
  const report = (what: string, v: Validation | string, result: { verdict: Verdict; detail: string; seconds: number } | null, ok: boolean) => {
    const name = typeof v === "string" ? "?" : `${v.name} (${v.records} records)`;
    const text = result === null ? `ERROR ${v as string}` : `${result.verdict} in ${result.seconds.toFixed(1)}s: ${result.detail}`;
    console.log(`${ok ? "ok  " : "FAIL"} ${what.padEnd(44)} ${name.padEnd(24)} ${text}`);
    if (!ok) problems++;
  };

  console.log("Real runs: every log must be ACCEPTED");
  for (const runtime of runtimes) {
    let run: RecordedRun;
    try {
      run = await record(runtime, pathToFileURL(root).href + "/");
    } catch (error) {
      console.log(`FAIL ${runtime}: ${(error as Error).message}`);
      problems++;
      continue;
    }
    const what = `${runtime}${run.overflow ? " (log full: a prefix)" : ""}${run.failure ? ` [pool: ${run.failure}]` : ""}`;
    if (run.failure !== "") problems++; // the real pool must not fail
    for (const v of validations(run, COVERED)) {
      const result = typeof v === "string" ? null : await check(java, jar, v);
      report(what, v, result, result?.verdict === "ACCEPTED");
    }
  }

  if (mutants.length > 0) {
    console.log("\nMutant runs (the pool built with one TypeScript mutant, on deno): the log must be REJECTED or VIOLATED");
    const scratch = mkdtempSync(join(tmpdir(), "filch-trace-mutants-"));
    try {
      for (const mutant of mutants) {
        const run = await record(runtimes[0], mutatedRoot(mutant, scratch));
        const what = `${mutant.name}${run.failure ? " [pool failed]" : ""}`;
        for (const v of validations(run, [mutant.module])) {
          const result = typeof v === "string" ? null : await check(java, jar, v);
          const caught = typeof v === "string" || result?.verdict === "REJECTED" || result?.verdict === "VIOLATED";
          report(what, v, result ?? { verdict: "REJECTED", detail: v as string, seconds: 0 }, caught);
        }
      }
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  }
  const total = ((performance.now() - started) / 1000).toFixed(1);
  console.log("");
  if (problems > 0) {
    console.log(`Trace validation FAILED: ${problems} unexpected outcome(s) in ${total}s`);
    return 1;
  }
  console.log(`Trace validation ok: every real log accepted, every mutant's log rejected, in ${total}s`);
  return 0;
}

if (import.meta.main ?? process.argv[1] === fileURLToPath(import.meta.url)) {
  process.exit(await main(process.argv.slice(2)));
}
