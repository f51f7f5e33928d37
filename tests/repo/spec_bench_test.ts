/**
 * The specification's benchmark (`npm run bench:spec`, bench/spec/) cannot rot unnoticed: its `--quick`
 * run (small sizes, 3 rounds) on the runtime running this test finishes, every one of its workloads'
 * results checks out (run.ts throws on a wrong result), and the report it prints has every row of the
 * specification's table with a figure, nothing "did not run" or "n/a".
 */
import { spawnSync } from "node:child_process";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { render, ROWS } from "../../bench/spec/report.ts";
import { assert, runtime, test } from "../_test.ts";

const root = fileURLToPath(new URL("../..", import.meta.url));

test("the report lays out every row of the specification's table, with or without results", () => {
  const empty = render([]);
  for (const row of ROWS) assert(empty.includes(`| ${row.spec} |`), `the specification's figure of "${row.label}"`);
  const labels = new Set(ROWS.map((row) => `${row.workload}: ${row.label}`));
  assert(labels.size === ROWS.length, "every row has a label of its own");
  for (const workload of ["1", "2", "3", "4", "summary", "goals"]) {
    assert(ROWS.some((row) => row.workload === workload), `workload ${workload} has rows`);
  }
});

test(`bench:spec --quick on ${runtime} prints every row with this run's figure`, () => {
  const prefix = runtime === "deno" ? ["run", "-A"] : [];
  const child = spawnSync(
    process.execPath,
    [...prefix, "bench/spec/main.ts", "--quick", `--runtimes=${runtime}`],
    { cwd: root, encoding: "utf8", timeout: 420_000, env: { ...process.env, NO_COLOR: "1" } },
  );
  const out = child.stdout ?? "";
  assert(child.status === 0, `it exits with 0, not ${child.status} (${child.error}): ${out}\n${child.stderr}`);
  const table = out.split("\n").filter((line) => line.startsWith("| "));
  // The header, then one line per row.
  assert(table.length === ROWS.length + 1, `${ROWS.length} rows and a header, got ${table.length}:\n${out}`);
  for (const [k, row] of ROWS.entries()) {
    const line = table[k + 1];
    assert(line.includes(row.label), `row ${k} is "${row.label}": ${line}`);
    const cells = line.split(" | ");
    // "# | label | spec | spec per worker | goal | this run | per worker |": this run's cell is the sixth.
    const mine = cells[5];
    assert(
      mine !== undefined && mine.trim() !== "" && !/n\/a|did not run|not run/.test(mine),
      `row "${row.label}" has a figure: ${line}`,
    );
  }
  assert(!/did not finish|not run:/.test(out), `nothing was skipped: ${out}`);
}, 480_000);
