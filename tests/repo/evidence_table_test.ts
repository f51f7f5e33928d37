/**
 * The evidence table of docs/verification.md ("Where the evidence is thin"): per protocol, the checks that
 * reach its shipped code. Checked against the repository so that it cannot go stale: every shipped file,
 * TLA+ spec, harness model and trace spec a row names exists; every module of `lib/protocol/` is in some
 * row; each row's count of kept mutants is the number of the mutation run's mutants (tests/mutants/run.ts
 * GROUPS) whose patched file is one of the row's files; and a count off by one is found.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { GROUPS } from "../mutants/run.ts";
import { assert, assertEquals, test } from "../_test.ts";

const ROOT = new URL("../../", import.meta.url);
const DOC = new URL("docs/verification.md", ROOT);
const START = "<!-- evidence table: checked by tests/repo/evidence_table_test.ts -->";
const END = "<!-- end of evidence table -->";

/** One row of the table. */
interface Row {
  protocol: string;
  files: string[];
  specs: string[];
  models: string[];
  traces: string[];
  mutants: number;
  stryker: string;
}

/** The names in backticks in a cell (a cell saying "none" has none). */
function ticked(cell: string): string[] {
  return [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]);
}

/** The table's rows, parsed from the doc's text. */
function evidenceRows(doc: string): Row[] {
  const start = doc.indexOf(START);
  const end = doc.indexOf(END);
  assert(start !== -1 && end > start, "docs/verification.md has the evidence table's markers");
  const lines = doc.slice(start + START.length, end).split("\n").filter((line) => line.startsWith("|"));
  return lines.slice(2).map((line) => {
    const cells = line.split("|").slice(1, -1).map((cell) => cell.trim());
    assertEquals(cells.length, 7, `the row's cells: ${line}`);
    const [protocol, files, specs, models, traces, mutants, stryker] = cells;
    return {
      protocol,
      files: ticked(files),
      specs: ticked(specs),
      models: ticked(models),
      traces: ticked(traces),
      mutants: Number(mutants),
      stryker,
    };
  });
}

/** Kept mutants by the file they patch. */
function mutantsByFile(): Map<string, number> {
  const by = new Map<string, number>();
  for (const group of GROUPS) for (const m of group.mutants) by.set(m.file, (by.get(m.file) ?? 0) + 1);
  return by;
}

/** What is wrong with the table's rows (empty: nothing). */
function evidenceProblems(rows: Row[]): string[] {
  const problems: string[] = [];
  const by = mutantsByFile();
  const exists = (path: string) => existsSync(new URL(path, ROOT));
  for (const row of rows) {
    for (const file of row.files) if (!exists(file)) problems.push(`${row.protocol}: no file ${file}`);
    for (const spec of [...row.specs, ...row.traces]) {
      if (!exists(`spec/${spec}.tla`)) problems.push(`${row.protocol}: no spec/${spec}.tla`);
    }
    for (const trace of row.traces) {
      if (!trace.endsWith("Trace")) problems.push(`${row.protocol}: ${trace} is not a trace spec`);
    }
    for (const model of row.models) {
      if (!exists(`tests/lincheck/models/${model}/model.ts`)) {
        problems.push(`${row.protocol}: no harness model ${model}`);
      }
    }
    const counted = row.files.reduce((sum, file) => sum + (by.get(file) ?? 0), 0);
    if (counted !== row.mutants) {
      problems.push(`${row.protocol}: the table says ${row.mutants} kept mutants, the mutation run has ${counted}`);
    }
    if (row.stryker === "") problems.push(`${row.protocol}: the Stryker cell is empty`);
  }
  const named = new Set(rows.flatMap((row) => row.files));
  for (const name of readdirSync(new URL("lib/protocol/", ROOT))) {
    if (name.endsWith(".ts") && name !== "atomics.ts" && name !== "layout.ts" && !named.has(`lib/protocol/${name}`)) {
      problems.push(`lib/protocol/${name} is in no row`);
    }
  }
  return problems;
}

test("the evidence table of docs/verification.md names what exists and counts the mutation run's kept mutants", () => {
  const rows = evidenceRows(readFileSync(DOC, "utf8"));
  assert(rows.length >= 14, `the table's rows (${rows.length})`);
  assertEquals(evidenceProblems(rows), [], "docs and repository disagree");
});

test("the evidence table's check finds a count off by one and a file that does not exist", () => {
  const rows = evidenceRows(readFileSync(DOC, "utf8"));
  const off = rows.map((row, i) => i === 0 ? { ...row, mutants: row.mutants + 1 } : row);
  assertEquals(evidenceProblems(off).length, 1, "one count off");
  const missing = rows.map((row, i) => i === 1 ? { ...row, files: [...row.files, "lib/protocol/nowhere.ts"] } : row);
  assertEquals(evidenceProblems(missing).length, 1, "one file missing");
});
