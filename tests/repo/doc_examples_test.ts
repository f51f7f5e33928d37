/**
 * Every complete program in the README and in `docs/*.md` runs, on each runtime it claims, under the
 * runner of the runtime running this file (Deno, Bun or Node), in a fresh process with a deadline.
 *
 * The convention (the info string of a fenced block, after its language):
 * - ` ```ts file=tasks.ts `: a module of the next program, written beside it under that name;
 * - ` ```ts run `: a complete program, run as `main.ts` (`main.js` for js) with the `file=` blocks since the
 *   previous program; ` runtimes=deno,node ` narrows the runtimes it claims (all three by default);
 * - ` ```ts fragment `: a part of a program (an option, a snippet inside a task), not run.
 * A TypeScript or JavaScript block with none of these fails the first test, so nothing is skipped
 * silently; so does a `file=` block that no `run` block follows. Blocks of other languages (`sh`, tables of
 * output) are not programs. Imports of `filch`, `npm:filch`, `@filch/filch` and `jsr:@filch/filch` are
 * rewritten to this checkout's `mod.ts`. On Deno, every program is type-checked too, by one `deno check`. The
 * module doc's example in `mod.ts` (two files in one `ts ignore` block) runs the same way.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { assertEquals, runtime, test } from "../_test.ts";

const root = fileURLToPath(new URL("../..", import.meta.url));
const modUrl = new URL("../../mod.ts", import.meta.url).href;
const RUNTIMES = ["deno", "bun", "node"] as const;
const CODE_LANGUAGES = new Set(["ts", "typescript", "js", "javascript", "mjs", "tsx", "jsx"]);
/** The longest one program may run before it counts as a hang. */
const PROGRAM_DEADLINE_MS = 90_000;

/** A fenced block: where it starts (1-based line of its opening fence), its info string and its text. */
interface Block {
  file: string;
  line: number;
  language: string;
  attributes: string[];
  text: string;
}

/** A complete program: its main block, and the modules written beside it. */
export interface Program {
  file: string;
  line: number;
  main: Block;
  modules: { name: string; text: string }[];
  runtimes: string[];
}

/** The fenced blocks of a Markdown text, with the 1-based line of each opening fence. */
export function blocksOf(file: string, markdown: string): Block[] {
  const lines = markdown.split("\n");
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = lines[i].match(/^(\s*)(`{3,}|~{3,})\s*(.*)$/);
    if (open === null) continue;
    const fence = open[2];
    const [language = "", ...attributes] = open[3].trim().split(/\s+/).filter((word) => word !== "");
    let end = i + 1;
    while (end < lines.length && !lines[end].trimStart().startsWith(fence)) end++;
    blocks.push({ file, line: i + 1, language, attributes, text: lines.slice(i + 1, end).join("\n") + "\n" });
    i = end;
  }
  return blocks;
}

/**
 * The programs of a Markdown text, and its blocks that break the convention (as `file:line: why`).
 */
export function programsOf(file: string, markdown: string): { programs: Program[]; problems: string[] } {
  const programs: Program[] = [];
  const problems: string[] = [];
  let modules: { name: string; text: string; line: number }[] = [];
  for (const block of blocksOf(file, markdown)) {
    if (!CODE_LANGUAGES.has(block.language)) continue;
    const where = `${file}:${block.line}`;
    const name = block.attributes.find((a) => a.startsWith("file="))?.slice("file=".length);
    const run = block.attributes.includes("run");
    const fragment = block.attributes.includes("fragment");
    if ([name !== undefined, run, fragment].filter(Boolean).length !== 1) {
      problems.push(
        `${where}: a ${block.language} block must be marked exactly one of 'run', 'file=<name>' or 'fragment'`,
      );
      continue;
    }
    if (name !== undefined) {
      modules.push({ name, text: block.text, line: block.line });
    } else if (run) {
      const claimed = block.attributes.find((a) => a.startsWith("runtimes="))?.slice("runtimes=".length).split(",") ??
        [...RUNTIMES];
      const unknown = claimed.filter((r) => !(RUNTIMES as readonly string[]).includes(r));
      if (unknown.length > 0) problems.push(`${where}: unknown runtimes ${unknown.join(", ")}`);
      programs.push({ file, line: block.line, main: block, modules, runtimes: claimed });
      modules = [];
    }
  }
  for (const module of modules) {
    problems.push(`${file}:${module.line}: a 'file=${module.name}' block that no 'run' block follows`);
  }
  return { programs, problems };
}

/** The text with every import of filch pointed at this checkout's mod.ts. */
export function pointAtCheckout(text: string): string {
  return text.replace(
    /(["'])(?:jsr:@filch\/filch|@filch\/filch|npm:filch|filch)\1/g,
    (_, quote) => quote + modUrl + quote,
  );
}

/** README.md and every docs/*.md, with their paths relative to the repository. */
function markdownFiles(): { file: string; text: string }[] {
  const docs = readdirSync(join(root, "docs")).filter((name) => name.endsWith(".md")).sort().map((name) =>
    `docs/${name}`
  );
  return ["README.md", ...docs].map((file) => ({ file, text: readFileSync(join(root, file), "utf8") }));
}

/** Writes a program into a fresh directory; returns the directory and the main file's name. */
function writeProgram(program: Program): { dir: string; main: string } {
  const dir = mkdtempSync(join(tmpdir(), "filch-doc-"));
  writeFileSync(join(dir, "package.json"), '{ "type": "module" }\n');
  for (const module of program.modules) writeFileSync(join(dir, module.name), pointAtCheckout(module.text));
  const main = program.main.language.startsWith("j") || program.main.language === "mjs" ? "main.js" : "main.ts";
  writeFileSync(join(dir, main), pointAtCheckout(program.main.text));
  return { dir, main };
}

/** Runs `args` with this runtime's executable in `cwd`; its exit code and output, or a hang's message. */
function runHere(args: string[], cwd: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { cwd, env: { ...process.env, NO_COLOR: "1" } });
    let output = "";
    child.stdout.on("data", (chunk) => output += chunk);
    child.stderr.on("data", (chunk) => output += chunk);
    const deadline = setTimeout(() => {
      output += `\nhung: still running after ${PROGRAM_DEADLINE_MS} ms; killed`;
      child.kill("SIGKILL");
    }, PROGRAM_DEADLINE_MS);
    child.on("close", (code) => {
      clearTimeout(deadline);
      resolve({ code, output });
    });
  });
}

/** Runs a program in a fresh directory (type-checked apart: see the Deno-only test). */
async function runProgram(program: Program): Promise<{ code: number | null; output: string }> {
  const { dir, main } = writeProgram(program);
  try {
    return await runHere(runtime === "deno" ? ["run", "-A", "--no-check", main] : [main], dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The module doc's example in mod.ts (what editors show on hover), a `ts ignore` block for `deno test --doc`
 * since it is two files: split at its `// main.ts` line into the task module and the program.
 */
export function moduleDocProgram(source: string): Program {
  const doc = source.slice(0, source.indexOf("*/"));
  const open = doc.indexOf("```ts");
  const close = doc.indexOf("```", open + 3);
  if (open === -1 || close === -1) throw new Error("mod.ts: the module doc has no ```ts example");
  const line = doc.slice(0, open).split("\n").length;
  const lines = doc.slice(doc.indexOf("\n", open) + 1, close).split("\n").map((l) => l.replace(/^\s*\* ?/, ""));
  const split = lines.findIndex((l) => l.startsWith("// main.ts"));
  if (split === -1) throw new Error("mod.ts: the module doc's example has no '// main.ts' line");
  const main: Block = {
    file: "mod.ts",
    line,
    language: "ts",
    attributes: ["run"],
    text: lines.slice(split).join("\n") + "\n",
  };
  return {
    file: "mod.ts",
    line,
    main,
    modules: [{ name: "tasks.ts", text: lines.slice(0, split).join("\n") + "\n" }],
    runtimes: [...RUNTIMES],
  };
}

const all = [
  ...markdownFiles().map(({ file, text }) => programsOf(file, text)),
  { programs: [moduleDocProgram(readFileSync(join(root, "mod.ts"), "utf8"))], problems: [] },
];

test("every TypeScript and JavaScript block of the README and docs/ is a program, a module of one, or a marked fragment", () => {
  assertEquals(
    all.flatMap((found) => found.problems),
    [],
    "blocks that break the convention (see tests/repo/doc_examples_test.ts)",
  );
  const programs = all.flatMap((found) => found.programs);
  if (programs.length === 0) throw new Error("no program found in README.md and docs/: the extraction is broken");
});

test("the doc-example check catches an unmarked block, a module without a program, and parses a program", () => {
  const sample = [
    "```ts file=tasks.ts",
    'import { join } from "filch";',
    "```",
    "```ts run runtimes=deno,node",
    'import { Pool } from "jsr:@filch/filch";',
    "```",
    "```ts",
    "unmarked();",
    "```",
    "```sh",
    "npm test",
    "```",
    "```js file=lonely.js",
    "```",
  ].join("\n");
  const { programs, problems } = programsOf("sample.md", sample);
  assertEquals(problems, [
    "sample.md:7: a ts block must be marked exactly one of 'run', 'file=<name>' or 'fragment'",
    "sample.md:13: a 'file=lonely.js' block that no 'run' block follows",
  ]);
  assertEquals(programs.map((p) => [p.line, p.runtimes, p.modules.map((m) => m.name)]), [[4, ["deno", "node"], [
    "tasks.ts",
  ]]]);
  assertEquals(pointAtCheckout(programs[0].main.text), `import { Pool } from "${modUrl}";\n`);
});

if (runtime === "deno") {
  // One `deno check` of every program at once: the library's types are checked once, not per program.
  test("every program of the README, docs/ and mod.ts's module doc type-checks (deno check)", async () => {
    const programs = all.flatMap((found) => found.programs);
    const written = programs.map(writeProgram);
    try {
      const mains = written.map(({ dir, main }) => join(dir, main));
      const { code, output } = await runHere(["check", `--config=${join(root, "deno.json")}`, ...mains], root);
      if (code !== 0) {
        const named = written.reduce(
          (text, { dir }, i) => text.replaceAll(dir, `${programs[i].file}:${programs[i].line}`),
          output,
        );
        throw new Error(`the examples do not type-check:\n${named}`);
      }
    } finally {
      for (const { dir } of written) rmSync(dir, { recursive: true, force: true });
    }
  }, PROGRAM_DEADLINE_MS + 30_000);
}

for (const program of all.flatMap((found) => found.programs)) {
  if (!program.runtimes.includes(runtime)) continue;
  test(`${program.file}:${program.line}: the example runs to its end on ${runtime}`, async () => {
    const { code, output } = await runProgram(program);
    if (code !== 0) {
      throw new Error(`${program.file}:${program.line}: the example failed on ${runtime} (exit ${code}):\n${output}`);
    }
  }, PROGRAM_DEADLINE_MS + 30_000);
}
