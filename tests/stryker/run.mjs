/**
 * The StrykerJS run (`npm run stryker -- [file…] [--force]`): StrykerJS's own mutants of each target file
 * (`targets.mjs`: file → its focused suites), one file at a time, then a score per file after triage.
 *
 * For each file it runs `stryker run tests/stryker/stryker.config.mjs` with `FILCH_STRYKER_TARGET` set,
 * under `nice -n 10` (the machine is shared), on the Node that runs this script (StrykerJS 10 needs Node 22
 * or later: the package script runs node_modules/.bin/node). Incremental: a file whose code did not change
 * since its incremental file (`tests/stryker/incremental/`) costs no test run; `--force` re-runs them all.
 *
 * The score: Stryker's statuses of its JSON report, less the mutants that the target's triage file shows equivalent
 * (each with its reason): killed + timeout (a hang detected) over killed + timeout + survived + no
 * coverage. Survivors that the target's triage file records as a known hole stay in the count and are listed.
 *
 * `--report` runs nothing: it prints the scores of the last reports (`tests/stryker/.reports/`, not kept)
 * again, after a change to the target's triage file.
 *
 * Exit code: 0 when every file ran (whatever its score), 1 when a Stryker run failed, 2 on bad usage.
 *
 * @module
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { argv, execPath, exit } from "node:process";
import { fileURLToPath } from "node:url";
import { incrementalFileFor, reportFileFor, TARGETS, triageFileFor } from "./targets.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const args = argv.slice(2);
const force = args.includes("--force");
/** `--report`: no run, only the scores of the last reports (after a change to the triage, say). */
const reportOnly = args.includes("--report");
const files = args.filter((a) => !a.startsWith("--"));
for (const f of files) {
  if (!(f in TARGETS)) {
    console.error(`not a StrykerJS target: ${f} (the targets: ${Object.keys(TARGETS).join(", ")})`);
    exit(2);
  }
}

/**
 * The triage of one target's surviving mutants, in its own file (`triageFileFor`: one file a target, so
 * that work on two targets never touches the same file): `{ mutator, line, replacement, verdict, reason }`,
 * where `line` is the trimmed source line the mutant changes (robust to lines moving), `verdict`
 * "equivalent" (left out of the score) or "hole" (counted, listed). A target with no triage yet has none.
 * @param {string} file A key of {@link TARGETS}.
 * @returns {{ mutator: string, line: string, replacement: string, verdict: "equivalent" | "hole", reason: string }[]}
 */
function triageOf(file) {
  const path = join(root, triageFileFor(file));
  return existsSync(path) ? JSON.parse(readFileSync(path, "utf8")) : [];
}

/**
 * The triage entry of one mutant, if any.
 * @param {ReturnType<typeof triageOf>} triage
 * @param {string} source The file's source as the report holds it.
 * @param {{ mutatorName: string, replacement?: string, location: { start: { line: number } } }} m
 */
function triaged(triage, source, m) {
  const line = source.split("\n")[m.location.start.line - 1].trim();
  return triage.find((t) => t.mutator === m.mutatorName && t.line === line && t.replacement === (m.replacement ?? ""));
}

let failed = false;
const rows = [];
for (const file of files.length > 0 ? files : Object.keys(TARGETS)) {
  const started = Date.now();
  const stryker = join(root, "node_modules/@stryker-mutator/core/bin/stryker.js");
  const run = reportOnly ? { status: 0 } : spawnSync(
    "nice",
    ["-n", "10", execPath, stryker, "run", "tests/stryker/stryker.config.mjs", ...(force ? ["--force"] : [])],
    { cwd: root, stdio: "inherit", env: { ...process.env, FILCH_STRYKER_TARGET: file } },
  );
  const minutes = ((Date.now() - started) / 60000).toFixed(1);
  // The incremental file is kept in the repository, whose `deno fmt --check` covers JSON: format it.
  if (existsSync(join(root, incrementalFileFor(file)))) {
    spawnSync(join(root, "node_modules/.bin/deno"), ["fmt", "--quiet", incrementalFileFor(file)], { cwd: root });
  }
  const report = join(root, reportFileFor(file));
  if (run.status !== 0 || !existsSync(report)) {
    console.error(`StrykerJS failed on ${file} (exit ${run.status})`);
    failed = true;
    continue;
  }
  const json = JSON.parse(readFileSync(report, "utf8"));
  const entry = json.files[file];
  const triage = triageOf(file);
  const count = { Killed: 0, Timeout: 0, Survived: 0, NoCoverage: 0, equivalent: 0, other: 0 };
  const holes = [];
  const untriaged = [];
  for (const m of entry.mutants) {
    const t = m.status === "Survived" || m.status === "NoCoverage" ? triaged(triage, entry.source, m) : undefined;
    if (t?.verdict === "equivalent") count.equivalent++;
    else if (m.status in count) count[m.status]++;
    else count.other++;
    if (t?.verdict === "hole") holes.push(m);
    else if (t === undefined && (m.status === "Survived" || m.status === "NoCoverage")) untriaged.push(m);
  }
  const detected = count.Killed + count.Timeout;
  const total = detected + count.Survived + count.NoCoverage;
  const score = total === 0 ? 100 : (100 * detected) / total;
  rows.push({ file, ...count, score: score.toFixed(1), minutes });
  for (const m of untriaged) {
    console.log(
      `  untriaged survivor ${file}:${m.location.start.line}:${m.location.start.column} ${m.mutatorName} → ${
        JSON.stringify(m.replacement ?? "")
      }`,
    );
  }
  for (const m of holes) console.log(`  known hole ${file}:${m.location.start.line} ${m.mutatorName}`);
}

console.log("\n| file | killed | timeout | survived | no coverage | equivalent | score % | minutes |");
console.log("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
for (const r of rows) {
  console.log(
    `| ${r.file} | ${r.Killed} | ${r.Timeout} | ${r.Survived} | ${r.NoCoverage} | ${r.equivalent} | ${r.score} | ${r.minutes} |`,
  );
}
exit(failed ? 1 : 0);
