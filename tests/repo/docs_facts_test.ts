/**
 * The counts and lists that the docs state about the code are the code's: each is computed here from the
 * code and compared with what README.md, docs/verification.md and spec/README.md say, so that they
 * cannot drift apart again (issue 46).
 *
 * What is checked, and where its truth comes from:
 * - the kept mutants, and those in CI's fast groups: the `GROUPS` of the mutation run (the module that
 *   package.json's `mutants` script runs), against the README's two numbers, the groups table of
 *   docs/verification.md (every group, its count and whether it is fast) and its totals sentence;
 * - the protocols under the interleaving harness: the `lib/protocol/` modules that the harness's files
 *   (every file under tests/ whose path names `lincheck`) refer to, less the facade and the layout, against
 *   the README's list and docs/verification.md's paragraph on the harness;
 * - CI's steps: the step names that the test command (package.json's `test` script) prints, against the
 *   steps table of docs/verification.md;
 * - the spec families and their configurations: the `RUNS` of the model-check command (package.json's
 *   `check:tla` script), against the index table and totals of spec/README.md, which must link one page
 *   per family, and each page its configurations by name;
 * - every repository path that a doc names (`lib/…`, `tests/…`, `spec/…`, `bench/…`, `examples/…`) exists;
 * - `protocol/` imports nothing outside itself, and docs/architecture.md names the imports inside it;
 * - every `npm run` and `deno task` that a doc names exists, and the README keeps its two commands.
 *
 * Everything is found by discovery (the scripts of package.json, a walk of the folders), not by the
 * present layout, so moving a test, a harness file or a lib module does not break this file; only a
 * doc that no longer says what the code is does. It reads files and imports the mutation run's and the
 * model-check command's modules, which run nothing on import: the same on every runtime, in well under a second.
 *
 * @module
 */

import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { assert, assertEquals, test } from "../_test.ts";

/** The repository's root: the nearest folder above this file that holds package.json and deno.json. */
function findRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!(existsSync(join(dir, "package.json")) && existsSync(join(dir, "deno.json")))) {
    const up = dirname(dir);
    if (up === dir) throw new Error("no package.json and deno.json above tests/repo/docs_facts_test.ts");
    dir = up;
  }
  return dir;
}

const root = findRoot();
const read = (path: string): string => readFileSync(join(root, path), "utf8");

/** Every file under `dir` (relative to the root), recursively, skipping node_modules and dot folders. */
function walk(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(join(root, dir))) {
    if (name === "node_modules" || name.startsWith(".")) continue;
    const path = `${dir}/${name}`;
    if (statSync(join(root, path)).isDirectory()) out.push(...walk(path));
    else out.push(path);
  }
  return out;
}

/** The script file that one of package.json's scripts runs (`node some/file.ts …` → `some/file.ts`). */
function scriptFile(script: string): string {
  const scripts = JSON.parse(read("package.json")).scripts as Record<string, string>;
  const command = scripts[script];
  assert(command !== undefined, `package.json has a '${script}' script`);
  const file = command.split(/\s+/).find((word) => /\.(ts|mjs|js)$/.test(word));
  assert(file !== undefined && existsSync(join(root, file)), `'${script}' runs a file of the repository: ${command}`);
  return file;
}

async function importFile<T>(file: string): Promise<T> {
  return (await import(pathToFileURL(join(root, file)).href)) as T;
}

/** The paragraph (lines up to a blank one) of `text` that contains `marker`. */
function paragraph(text: string, marker: string, where: string): string {
  const at = text.indexOf(marker);
  assert(at >= 0, `${where} has a paragraph containing ${JSON.stringify(marker)}`);
  const start = text.lastIndexOf("\n\n", at) + 2;
  const end = text.indexOf("\n\n", at);
  return text.slice(start, end < 0 ? text.length : end);
}

/** The body rows of the Markdown table whose header row starts with `header`, as lists of cells. */
function table(text: string, header: string, where: string): string[][] {
  const lines = text.split("\n");
  const at = lines.findIndex((line) => line.startsWith(header));
  assert(at >= 0, `${where} has a table whose header starts with ${JSON.stringify(header)}`);
  const rows: string[][] = [];
  for (const line of lines.slice(at + 2)) {
    if (!line.startsWith("|")) break;
    rows.push(line.slice(1, line.endsWith("|") ? -1 : undefined).split(/(?<!\\)\|/).map((cell) => cell.trim()));
  }
  return rows;
}

/** The code spans (`…`) of a piece of Markdown. */
function codeSpans(text: string): string[] {
  return [...text.matchAll(/`([^`]+)`/g)].map((m) => m[1]);
}

/** The one number that `pattern`'s first group captures in `text`. */
function number(text: string, pattern: RegExp, where: string): number {
  const match = text.match(pattern);
  assert(match !== null, `${where} states ${pattern}`);
  return Number(match[1]);
}

const sorted = (values: Iterable<string>): string[] => [...new Set(values)].sort();

// ---------------------------------------------------------------------------------------------------------
// What the code says.

interface Group {
  name: string;
  mutants: readonly unknown[];
  fast: boolean;
}

async function mutationGroups(): Promise<readonly Group[]> {
  const { GROUPS } = await importFile<{ GROUPS: readonly Group[] }>(scriptFile("mutants"));
  assert(Array.isArray(GROUPS) && GROUPS.length > 0, "the mutation run exports its GROUPS");
  return GROUPS;
}

/** The `lib/protocol/` modules the interleaving harness runs (the facade and the layout are its plumbing). */
function harnessProtocols(): string[] {
  const files = walk("tests").filter((file) => /lincheck/.test(file) && /\.ts$/.test(file));
  assert(files.length > 0, "tests/ has the interleaving harness (files whose path names lincheck)");
  const modules = files.flatMap((file) => [...read(file).matchAll(/lib\/protocol\/(\w+)\.ts/g)].map((m) => m[1]));
  return sorted(modules.filter((m) => m !== "atomics" && m !== "layout"));
}

/** The step names the test command prints, in order of first appearance. */
function ciSteps(): string[] {
  const source = read(scriptFile("test"));
  const names = [...source.matchAll(/(?:\bstep\(\s*|\bname:\s*)"([^"]+)"/g)].map((m) => m[1]);
  assert(names.length > 0, "the test command names its steps");
  return [...new Set(names)];
}

interface Run {
  name: string;
  module: string;
  kind: string;
}

async function specRuns(): Promise<readonly Run[]> {
  const { RUNS } = await importFile<{ RUNS: readonly Run[] }>(scriptFile("check:tla"));
  assert(Array.isArray(RUNS) && RUNS.length > 0, "the model-check command exports its RUNS");
  return RUNS;
}

// ---------------------------------------------------------------------------------------------------------
// What the docs say, checked.

/** Compares a doc's mutation-run figures with the groups; returns the problems found. */
export function mutationProblems(groups: readonly Group[], readme: string, verification: string): string[] {
  const problems: string[] = [];
  const total = groups.reduce((n, g) => n + g.mutants.length, 0);
  const fastGroups = groups.filter((g) => g.fast);
  const fast = fastGroups.reduce((n, g) => n + g.mutants.length, 0);
  const say = (what: string, stated: number, actual: number) => {
    if (stated !== actual) problems.push(`${what} says ${stated}, the code has ${actual}`);
  };
  say("README.md's kept mutants", number(readme, /each of\s+(\d+)\s+kept/, "README.md"), total);
  say("README.md's mutants in CI", number(readme, /CI runs the\s+(\d+)\s+of its\s+fast\s+groups/, "README.md"), fast);
  say(
    "verification.md's kept mutants",
    number(verification, /keeps\s+(\d+)\s+mutants\s+in\s+\d+\s+groups/, "docs/verification.md"),
    total,
  );
  say(
    "verification.md's groups",
    number(verification, /keeps\s+\d+\s+mutants\s+in\s+(\d+)\s+groups/, "docs/verification.md"),
    groups.length,
  );
  say(
    "verification.md's mutants in CI",
    number(verification, /CI runs the\s+(\d+)\s+of its\s+\d+\s+fast/, "docs/verification.md"),
    fast,
  );
  say(
    "verification.md's fast groups",
    number(verification, /CI runs the\s+\d+\s+of its\s+(\d+)\s+fast/, "docs/verification.md"),
    fastGroups.length,
  );
  const rows = table(verification, "| group | mutants |", "docs/verification.md");
  const stated = rows.map((cells) => ({
    name: cells[0].replaceAll("`", "").split(/\s/)[0],
    count: Number(cells[1]),
    fast: cells[cells.length - 1] === "yes",
  }));
  const actual = groups.map((g) => ({ name: g.name, count: g.mutants.length, fast: g.fast }));
  const row = (g: { name: string; count: number; fast: boolean }) =>
    `${g.name}: ${g.count}, ${g.fast ? "fast" : "slow"}`;
  const statedRows = new Set(stated.map(row));
  const actualRows = new Set(actual.map(row));
  for (const r of actualRows) if (!statedRows.has(r)) problems.push(`verification.md's groups table lacks ${r}`);
  for (const r of statedRows) if (!actualRows.has(r)) problems.push(`verification.md's groups table says ${r}`);
  return problems;
}

test("the docs' counts of kept mutants, fast groups and each group are the mutation run's", async () => {
  const problems = mutationProblems(await mutationGroups(), read("README.md"), read("docs/verification.md"));
  assertEquals(problems, [], "docs and code disagree");
}, 60_000);

test("the check of the mutation figures fails when a doc's number is off by one", async () => {
  const groups = await mutationGroups();
  const readme = read("README.md");
  const total = groups.reduce((n, g) => n + g.mutants.length, 0);
  const wrong = readme.replace(/each of\s+(\d+)\s+kept/, `each of ${total + 1} kept`);
  assert(mutationProblems(groups, wrong, read("docs/verification.md")).length === 1, "one problem is found");
  const verification = read("docs/verification.md").replace(/\| (\d+) \| `/, (_, n) => `| ${Number(n) + 1} | \``);
  const problems = mutationProblems(groups, readme, verification);
  assert(problems.some((p) => p.includes("groups table")), `a wrong row of the table is found: ${problems}`);
}, 60_000);

test("the protocols the docs list under the interleaving harness are those its files run", () => {
  const protocols = harnessProtocols();
  const readme = paragraph(read("README.md"), "scheduler-controlled interleavings", "README.md");
  const listed = sorted(codeSpans(readme).filter((s) => /^\w+\.ts$/.test(s)).map((s) => s.slice(0, -3)));
  assertEquals(listed, protocols, "README.md's list of protocols under the harness (its `name.ts` spans)");
  const verification = paragraph(
    read("docs/verification.md"),
    "**The shipped code of every protocol under controlled interleavings",
    "docs/verification.md",
  );
  const named = sorted(
    [...verification.matchAll(/lib\/protocol\/(\w+)\.ts/g)].map((m) => m[1]).filter((m) =>
      m !== "atomics" && m !== "layout"
    ),
  );
  assertEquals(named, protocols, "docs/verification.md's paragraph on the harness (its lib/protocol/ modules)");
}, 60_000);

test("docs/verification.md's table of CI's steps names every step the test command prints, and no other", () => {
  const rows = table(read("docs/verification.md"), "| step (as `npm test` prints it) |", "docs/verification.md");
  const documented = rows.flatMap((cells) => codeSpans(cells[0]));
  assertEquals(documented, ciSteps(), "the steps, in the order the test command runs them");
}, 60_000);

test("spec/README.md indexes every spec family with its configurations, each on a page of its own", async () => {
  const runs = await specRuns();
  const actual = new Map<string, { real: number; mutant: number }>();
  for (const run of runs) {
    const family = run.module.replace(/\.tla$/, "");
    const entry = actual.get(family) ?? { real: 0, mutant: 0 };
    if (run.kind === "real") entry.real++;
    else entry.mutant++;
    actual.set(family, entry);
  }
  const index = read("spec/README.md");
  const rows = table(index, "| family | what it models |", "spec/README.md");
  const stated = new Map<string, { real: number; mutant: number }>();
  for (const cells of rows) {
    const link = cells[0].match(/^\[`?(\w+)(?:\.tla)?`?\]\(([^)]+)\)$/);
    assert(link !== null, `spec/README.md's index row links its family's page: ${cells[0]}`);
    assert(existsSync(join(root, "spec", link[2])), `the page of ${link[1]} exists: spec/${link[2]}`);
    stated.set(link[1], { real: Number(cells[cells.length - 2]), mutant: Number(cells[cells.length - 1]) });
  }
  const order = (m: Map<string, unknown>) => JSON.stringify([...m].sort(([a], [b]) => a.localeCompare(b)));
  assertEquals(order(stated), order(actual), "spec/README.md's families and their real and mutant configurations");
  const real = runs.filter((r) => r.kind === "real").length;
  assertEquals(
    [
      number(index, /(\d+)\s+configurations\s+in\s+all/, "spec/README.md"),
      number(index, /configurations\s+in\s+all:\s+(\d+)\s+real/, "spec/README.md"),
      number(index, /configurations\s+in\s+all:\s+\d+\s+real\s+and\s+(\d+)\s+mutants/, "spec/README.md"),
      number(index, /(\d+)\s+spec\s+families/, "spec/README.md"),
    ],
    [runs.length, real, runs.length - real, actual.size],
    "spec/README.md's totals: configurations, real, mutants, families",
  );
}, 60_000);

test("each spec family's page lists exactly its real and mutant configurations", async () => {
  const runs = await specRuns();
  const rows = table(read("spec/README.md"), "| family | what it models |", "spec/README.md");
  for (const cells of rows) {
    const link = cells[0].match(/^\[`?(\w+)(?:\.tla)?`?\]\(([^)]+)\)$/);
    assert(link !== null, `spec/README.md's index row links its family's page: ${cells[0]}`);
    const page = `spec/${link[2]}`;
    const text = paragraph(read(page), "**Its configurations**", page);
    const at = text.indexOf("mutants, which TLC must reject:");
    assert(at >= 0, `${page} says which configurations are mutants`);
    const names = (part: string) => sorted(codeSpans(part).filter((s) => /^\w+$/.test(s)));
    const mine = runs.filter((r) => r.module === `${link[1]}.tla`);
    assertEquals(
      [names(text.slice(0, at)), names(text.slice(at))],
      [
        sorted(mine.filter((r) => r.kind === "real").map((r) => r.name)),
        sorted(mine.filter((r) => r.kind !== "real").map((r) => r.name)),
      ],
      `${page}: its real and mutant configurations`,
    );
  }
}, 60_000);

test("every path of the repository that the docs name exists", () => {
  const docs = ["README.md", ...walk("docs"), ...walk("spec"), ...walk("bench")].filter((f) => f.endsWith(".md"));
  const missing: string[] = [];
  for (const doc of docs) {
    const text = read(doc);
    for (
      const m of text.matchAll(/(?<![\w./-])((?:lib|tests|spec|bench|examples)\/[\w./-]*\w\.(?:ts|mjs|tla|cfg|md))/g)
    ) {
      if (!existsSync(join(root, m[1]))) missing.push(`${doc}: ${m[1]}`);
    }
  }
  assertEquals(missing, [], `paths named in the docs (${docs.length} files) that are not in the repository`);
}, 60_000);

test("docs/architecture.md names every import inside protocol/ and says it imports nothing outside", () => {
  const files = walk("lib").filter((f) => /\/protocol\/[^/]+\.ts$/.test(f));
  assert(files.length > 0, "lib/ has a protocol/ folder");
  const outside: string[] = [];
  for (const file of files) {
    // Imports at the start of a line: the examples of the JSDoc (" * import …") are not the file's.
    for (const m of read(file).matchAll(/^import\s[^;]*?from\s+"([^"]+)"/gm)) {
      const specifier = m[1];
      if (!/^\.\/[\w.]+\.ts$/.test(specifier)) outside.push(`${file}: ${specifier}`);
    }
  }
  assertEquals(outside, [], "protocol/ files that import from outside protocol/");
  // Every importer of a sibling other than the facade and the layout, and that sibling, must be named.
  const importers = new Set<string>();
  for (const file of files) {
    for (const m of read(file).matchAll(/^import\s[^;]*?from\s+"\.\/([\w.]+\.ts)"/gm)) {
      if (m[1] !== "atomics.ts" && m[1] !== "layout.ts") {
        importers.add(file.slice(file.lastIndexOf("/") + 1));
        importers.add(m[1]);
      }
    }
  }
  const text = paragraph(read("docs/architecture.md"), "`protocol/` imports nothing outside itself", "architecture.md");
  const spans = sorted(codeSpans(text).filter((s) => /^\w+\.ts$/.test(s)));
  assertEquals(spans, sorted(["atomics.ts", "layout.ts", ...importers]), "the files architecture.md names");
}, 60_000);

test(
  "every `npm run` and `deno task` the docs name exists, and the README keeps two commands for a fresh machine",
  () => {
    const scripts = JSON.parse(read("package.json")).scripts as Record<string, string>;
    const tasks = JSON.parse(read("deno.json")).tasks as Record<string, string>;
    const docs = ["README.md", ...walk("docs"), ...walk("spec"), ...walk("bench")].filter((f) => f.endsWith(".md"));
    const missing: string[] = [];
    for (const doc of docs) {
      for (const m of read(doc).matchAll(/\b(npm run|deno task) ([\w:-]+)/g)) {
        const known = m[1] === "npm run" ? scripts : tasks;
        if (!(m[2] in known)) missing.push(`${doc}: ${m[1]} ${m[2]}`);
      }
    }
    assertEquals(missing, [], "commands the docs name that package.json or deno.json does not have");
    const readme = read("README.md");
    const at = readme.indexOf("## Two commands");
    assert(at >= 0, "README.md has its 'Two commands' section");
    const block = readme.slice(at).match(/```sh\n([\s\S]*?)```/);
    assert(block !== null, "the 'Two commands' section has a sh block");
    const commands = block[1].split("\n").filter((line) => line.trim() !== "").map((line) => line.split("#")[0].trim());
    assertEquals(commands, ["npm install && npm run demo", "npm install && npm test"], "the README's two commands");
    assert("demo" in scripts && "test" in scripts, "package.json has the 'demo' and 'test' scripts");
  },
  60_000,
);
