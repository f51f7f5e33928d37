/**
 * The mutation run covers what it must: every kept TypeScript mutant is in one of its groups, every module of
 * the shared-memory protocols has mutants in a fast group (the part CI runs), and every group's checks
 * exist. A protocol module whose harness stopped covering it would then show as uncaught mutants in CI's
 * mutation run, not pass unnoticed (the pool-level tests do not see most protocol bugs: issue 32).
 */
import { readdirSync, readFileSync } from "node:fs";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import * as kept from "../mutants/mutants.ts";
import { applyPatches } from "../mutants/mutants.ts";
import { failedTests, GROUPS } from "../mutants/run.ts";
import { assert, assertEquals, test } from "../_test.ts";

const root = fileURLToPath(new URL("../../", import.meta.url));

/**
 * Protocol modules without mutants of their own, and why: the facade is what every mutant runs through
 * (the harnesses install their own binding of it), and the layout holds only offsets and sizes.
 */
const EXEMPT: Record<string, string> = {
  "atomics.ts": "the facade: the harnesses replace its binding",
  "layout.ts": "offsets and sizes only",
};

test("every kept TypeScript mutant (every list exported by tests/mutants/mutants.ts) is in the mutation run", () => {
  const lists = (Object.entries(kept) as [string, unknown][]).filter(([, value]) =>
    Array.isArray(value) && value.length > 0 && typeof value[0] === "object" && "patches" in value[0]
  ) as [string, { name: string }[]][];
  assert(lists.length >= 8, `the mutant lists were found: ${lists.map(([n]) => n).join(", ")}`);
  const inRun = new Set(GROUPS.flatMap((g) => g.mutants.map((m) => m.name)));
  const missing = lists.flatMap(([list, mutants]) =>
    mutants.filter((m) => !inRun.has(m.name)).map((m) => `${list}: ${m.name}`)
  );
  assertEquals(missing, [], "mutants kept but never run by tests/mutants/run.ts (add them to a group)");
});

test("every protocol module of lib/protocol/ has mutants in a fast group of the mutation run (run by CI)", () => {
  const modules = readdirSync(new URL("../../lib/protocol/", import.meta.url)).filter((f) => f.endsWith(".ts"));
  assert(modules.length >= 6, `lib/protocol/ was read: ${modules.join(", ")}`);
  const covered = new Set(
    GROUPS.filter((g) => g.fast).flatMap((g) => g.mutants.map((m) => m.file.replace(/^lib\/protocol\//, ""))),
  );
  const uncovered = modules.filter((m) => !(m in EXEMPT) && !covered.has(m));
  assertEquals(uncovered, [], "protocol modules with no mutant in a fast group");
});

test("every mutant of the mutation run builds: each patch finds its line in the file it mutates, as often as it says", () => {
  // A comment added to a patched line (a `// spec:` name) or a second copy of it breaks a mutant silently
  // until the mutation run tries it: here it fails at once, naming the mutant and the patch.
  const broken: string[] = [];
  for (const group of GROUPS) {
    for (const mutant of group.mutants) {
      const source = readFileSync(`${root}${mutant.file}`, "utf8");
      try {
        applyPatches(source, { ...mutant, module: mutant.file.replace(/^lib\//, "") });
      } catch (error) {
        broken.push(`${group.name}/${mutant.name}: ${(error as Error).message}`);
      }
    }
  }
  assertEquals(broken, [], "mutants whose patches do not match");
});

test("every check the mutation run names exists, and each group has mutants and checks", () => {
  for (const group of GROUPS) {
    assert(group.mutants.length > 0, `group ${group.name} has mutants`);
    assert(group.checks.length > 0, `group ${group.name} has checks`);
    for (const check of group.checks) assert(existsSync(root + check), `${group.name}: ${check} exists`);
    for (const mutant of group.mutants) assert(existsSync(root + mutant.file), `${mutant.name}: ${mutant.file} exists`);
  }
});

test("the mutation run reads Deno's report: a named failed test, and an error no test caught", () => {
  const named = [
    "a ... ok (1ms)",
    "",
    " ERRORS ",
    "",
    "b fails => ./tests/x_test.ts:3:1",
    "error: Error: nope",
    "",
    " FAILURES ",
    "",
    "b fails => ./tests/x_test.ts:3:1",
    "",
    "FAILED | 1 passed | 1 failed (5ms)",
  ].join("\n");
  assertEquals(failedTests(named), ["b fails"], "a named failure");
  const uncaught = [
    " ERRORS ",
    "",
    "./tests/pool/force_test.ts (uncaught error)",
    "error: (in promise) Error: a value was pushed twice",
    "",
    " FAILURES ",
    "",
    "./tests/pool/force_test.ts (uncaught error)",
    "",
    "FAILED | 6 passed | 2 failed (12s)",
  ].join("\n");
  assertEquals(
    failedTests(uncaught),
    ["an error no test caught, while its tests ran: (in promise) Error: a value was pushed twice"],
    "an uncaught error",
  );
  assertEquals(failedTests("ok | 3 passed | 0 failed (1s)"), [], "a pass names nothing");
});
