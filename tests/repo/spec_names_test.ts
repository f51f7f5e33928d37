/**
 * Spec and code stay in step: every `// spec: Name` comment in `lib/` names an action of a TLA+ spec in
 * `spec/`, and every action of such a spec is named in the code it mirrors.
 *
 * Conventions (spec/README.md, "Spec and code stay in step"):
 * - A code name is a line comment `// spec: Name` that ends its line (so prose that quotes the
 *   convention, like "`// spec: Name`" in a doc comment, is not one). Each name appears once per file:
 *   one action per shared-memory access.
 * - A spec that mirrors code says which files, in a comment: `code: lib/protocol/deque.ts` (several allowed).
 *   Specs without it (the abstract AtomicDeque.tla) and spec/mutants/ are not checked.
 * - The actions of a spec are the operators called in its definition of `Step` (a thread's step, the
 *   disjunction of its actions), or of `Next` if it has no `Step`. Helpers, invariants and properties
 *   are defined elsewhere in the module and so never count.
 *
 * @module
 */

import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { assert, test } from "../_test.ts";

/** A `// spec: Name` comment at one place in the code. */
export interface CodeName {
  readonly name: string;
  readonly file: string;
  readonly line: number;
}

/** What a spec module says about itself. */
export interface SpecActions {
  readonly file: string;
  /** The code files it mirrors (its `code:` comments); empty for an abstract spec. */
  readonly mirrors: readonly string[];
  /** The operators called in its `Step` (or `Next`) definition. */
  readonly actions: readonly string[];
  /** Actions called there but defined nowhere in the module. */
  readonly undefinedActions: readonly string[];
}

/**
 * Finds the `// spec: Name` comments of one source file.
 *
 * @param file The file's path, for messages.
 * @param text The file's text.
 * @returns Each name with its line.
 */
export function codeNames(file: string, text: string): CodeName[] {
  const found: CodeName[] = [];
  text.split("\n").forEach((line, i) => {
    const m = /(?:^|[^`'"\w])\/\/\s*spec:\s*([A-Z][A-Za-z0-9_]*)\s*$/.exec(line);
    if (m) found.push({ name: m[1], file, line: i + 1 });
  });
  return found;
}

/**
 * Reads a TLA+ module's `code:` comments and the actions of its `Step` (or `Next`) definition.
 *
 * @param file The module's path, for messages.
 * @param text The module's text.
 * @returns What it mirrors and its actions.
 */
export function specActions(file: string, text: string): SpecActions {
  const mirrors = [...text.matchAll(/\bcode:\s+(lib\/[\w/.-]+\.ts)/g)].map((m) => m[1]);
  const lines = text.split("\n");
  const defines = (name: string) => lines.findIndex((l) => new RegExp(`^${name}\\s*(\\(.*\\))?\\s*==`).test(l));
  let start = defines("Step");
  if (start < 0) start = defines("Next");
  if (start < 0) return { file, mirrors, actions: [], undefinedActions: [] };
  // The body runs until the next line that starts in column 0 (the next definition or a separator).
  const body: string[] = [lines[start].replace(/^[^=]*==/, "")];
  for (let i = start + 1; i < lines.length && !/^\S/.test(lines[i]); i++) body.push(lines[i]);
  const code = body.map((l) => l.replace(/\\\*.*$/, "")).join("\n");
  const called = [...code.matchAll(/\b([A-Z][A-Za-z0-9_]*)\s*\(/g)].map((m) => m[1]);
  const actions = [...new Set(called)].filter((n) => n !== "Step");
  const undefinedActions = actions.filter((n) => defines(n) < 0);
  return { file, mirrors, actions, undefinedActions };
}

/**
 * Compares the code's names with the specs' actions, both ways.
 *
 * @param code Every `// spec:` comment found in `lib/`.
 * @param specs Every spec module of `spec/` (abstract ones included; they are skipped).
 * @param codeFiles The `lib/` files that exist, as repository-relative paths.
 * @returns One line per problem; empty when spec and code are in step.
 */
export function checkNames(
  code: readonly CodeName[],
  specs: readonly SpecActions[],
  codeFiles: readonly string[],
): string[] {
  const problems: string[] = [];
  const mirroring = specs.filter((s) => s.mirrors.length > 0);
  // An action name may belong to several specs (ExecCasRunning is a step of Lifecycle, Levels, Producers
  // and Graph): a code name is in step if any of them mirrors its file.
  const actionOwners = new Map<string, SpecActions[]>();
  for (const spec of mirroring) {
    if (spec.actions.length === 0) problems.push(`${spec.file} mirrors code but has no Step or Next definition`);
    for (const a of spec.undefinedActions) {
      problems.push(`${spec.file}: Step calls ${a}, which the module does not define`);
    }
    for (const m of spec.mirrors) {
      if (!codeFiles.includes(m)) problems.push(`${spec.file} mirrors ${m}, which does not exist`);
    }
    for (const a of spec.actions) actionOwners.set(a, [...(actionOwners.get(a) ?? []), spec]);
  }
  const seen = new Map<string, CodeName>();
  for (const c of code) {
    const key = `${c.file}\u0000${c.name}`;
    const earlier = seen.get(key);
    if (earlier) {
      problems.push(
        `${c.file}:${c.line} names ${c.name} again (first at line ${earlier.line}): one action per shared-memory access`,
      );
    }
    seen.set(key, c);
    const owners = actionOwners.get(c.name);
    if (!owners) problems.push(`${c.file}:${c.line} names ${c.name}, which is no action of any spec in spec/`);
    else if (!owners.some((spec) => spec.mirrors.includes(c.file))) {
      problems.push(
        `${c.file}:${c.line} names ${c.name}, an action of ${owners.map((s) => s.file).join(", ")}, which mirror ${
          owners.flatMap((s) => s.mirrors).join(", ")
        } instead`,
      );
    }
  }
  for (const spec of mirroring) {
    for (const a of spec.actions) {
      if (!code.some((c) => c.name === a && spec.mirrors.includes(c.file))) {
        problems.push(
          `${spec.file}: action ${a} is named nowhere in ${
            spec.mirrors.join(", ")
          } (add \`// spec: ${a}\` to its access)`,
        );
      }
    }
  }
  return problems;
}

const root = join(dirname(fileURLToPath(import.meta.url)), "../..");

function tsFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...tsFiles(path));
    else if (entry.name.endsWith(".ts")) out.push(path);
  }
  return out;
}

function scanRepository(): { code: CodeName[]; specs: SpecActions[]; codeFiles: string[] } {
  const codeFiles = tsFiles(join(root, "lib")).map((p) => relative(root, p).split("\\").join("/"));
  const code = codeFiles.flatMap((f) => codeNames(f, readFileSync(join(root, f), "utf8")));
  const specs = readdirSync(join(root, "spec"))
    .filter((f) => f.endsWith(".tla"))
    .map((f) => specActions(`spec/${f}`, readFileSync(join(root, "spec", f), "utf8")));
  return { code, specs, codeFiles };
}

test("every // spec: name in lib/ is an action of a spec in spec/, and every action is named in its code", () => {
  const { code, specs, codeFiles } = scanRepository();
  const problems = checkNames(code, specs, codeFiles);
  assert(problems.length === 0, `spec and code are out of step:\n  ${problems.join("\n  ")}`);
  const chaseLev = specs.find((s) => s.file === "spec/ChaseLev.tla");
  assert(
    chaseLev !== undefined && chaseLev.mirrors.includes("lib/protocol/deque.ts"),
    "spec/ChaseLev.tla mirrors lib/protocol/deque.ts",
  );
  assert(chaseLev.actions.length === 24, `ChaseLev has the 24 deque actions: found ${chaseLev.actions.length}`);
  assert(
    code.filter((c) => c.file === "lib/protocol/deque.ts").length === 24,
    "lib/protocol/deque.ts names 24 actions",
  );
});

const syntheticSpec = `---- MODULE Toy ----
(* code: lib/toy.ts *)
Helper(i) == i + 1
ReadA(i) == x' = Helper(i)
WriteB(i) == y' = 1
Inv == Helper(1) > 0
Step(i) ==
    \\/ ReadA(i)   \\* NotAnAction(i) in a comment
    \\/ WriteB(i)
Next == \\E i \\in T : Step(i)
Prop == [][ReadA(1)]_x
====`;

test("the name check counts only the operators of Step as actions, not helpers or properties", () => {
  const spec = specActions("spec/Toy.tla", syntheticSpec);
  assert(JSON.stringify(spec.actions) === JSON.stringify(["ReadA", "WriteB"]), `actions: ${spec.actions.join(", ")}`);
  assert(JSON.stringify(spec.mirrors) === JSON.stringify(["lib/toy.ts"]), `mirrors: ${spec.mirrors.join(", ")}`);
});

test("the name check fails when the code names an action no spec has, or a spec action is named nowhere", () => {
  const spec = specActions("spec/Toy.tla", syntheticSpec);
  const inStep = codeNames("lib/toy.ts", "a(); // spec: ReadA\nb(); // spec: WriteB\n");
  assert(checkNames(inStep, [spec], ["lib/toy.ts"]).length === 0, "matching names pass");

  const missingInCode = codeNames("lib/toy.ts", "a(); // spec: ReadA\n");
  const p1 = checkNames(missingInCode, [spec], ["lib/toy.ts"]);
  assert(p1.length === 1 && p1[0].includes("action WriteB is named nowhere"), `missing code name: ${p1.join("; ")}`);

  const extraInCode = codeNames("lib/toy.ts", "a(); // spec: ReadA\nb(); // spec: WriteB\nc(); // spec: WriteC\n");
  const p2 = checkNames(extraInCode, [spec], ["lib/toy.ts"]);
  assert(p2.length === 1 && p2[0].includes("WriteC, which is no action"), `extra code name: ${p2.join("; ")}`);

  const twice = codeNames("lib/toy.ts", "a(); // spec: ReadA\nb(); // spec: WriteB\nd(); // spec: ReadA\n");
  const p3 = checkNames(twice, [spec], ["lib/toy.ts"]);
  assert(p3.length === 1 && p3[0].includes("names ReadA again"), `duplicate code name: ${p3.join("; ")}`);

  const undefinedAction = specActions("spec/Toy.tla", syntheticSpec.replace("WriteB(i) == y' = 1\n", ""));
  const p4 = checkNames(inStep, [undefinedAction], ["lib/toy.ts"]);
  assert(
    p4.some((p) => p.includes("calls WriteB, which the module does not define")),
    `undefined action: ${p4.join("; ")}`,
  );
});

test("a quoted `// spec: Name` in prose is not a code name", () => {
  const text =
    " * names the action that models it (`// spec: Name`).\n * // spec: Trailing words\nx(); // spec: Real\n";
  const names = codeNames("lib/toy.ts", text).map((c) => c.name);
  assert(JSON.stringify(names) === JSON.stringify(["Real"]), `found: ${names.join(", ")}`);
});
