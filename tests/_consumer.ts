/**
 * Helpers of the consumer tests (`consumer_*_test.ts`): run a command without blocking the event loop (a
 * test may serve files meanwhile), and pack the package as npm would publish it.
 */
import { spawn } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { assert, assertEquals } from "./_test.ts";

/** The repository root. */
export const root: string = fileURLToPath(new URL("..", import.meta.url));

/** A runtime or tool installed by `npm install` (node_modules/.bin). */
export function bin(name: string): string {
  return join(root, "node_modules", ".bin", name);
}

/** Runs a command; resolves with its exit code and output (stdout and stderr, in order of arrival). */
export function runCommand(
  command: string,
  args: string[],
  cwd: string,
  env: Record<string, string> = {},
): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd, env: { ...process.env, NO_COLOR: "1", ...env } });
    let output = "";
    child.stdout.on("data", (c: Buffer) => (output += c.toString()));
    child.stderr.on("data", (c: Buffer) => (output += c.toString()));
    child.on("error", (e) => resolve({ code: 127, output: output + String(e) }));
    child.on("close", (code) => resolve({ code: code ?? 1, output }));
  });
}

/** `npm pack` of the repository into `dir` (its prepack builds dist/); returns the tarball's path. */
export async function packTarball(dir: string): Promise<string> {
  const { code, output } = await runCommand("npm", ["pack", "--pack-destination", dir], root);
  assertEquals(code, 0, `npm pack failed:\n${output.slice(-3000)}`);
  const tarball = readdirSync(dir).find((f) => f.endsWith(".tgz"));
  if (tarball === undefined) throw new Error(`npm pack wrote no tarball into ${dir}:\n${output.slice(-3000)}`);
  return join(dir, tarball);
}

/**
 * The consumer project every consumer test writes, importing filch as `specifier`: a task module with
 * `add` and a fork-join `fib`, and a `main.ts` that runs 10k tasks and fib(30) on 2 workers and prints
 * `RESULT {ok, fib, steals}`.
 */
export function consumerFiles(specifier: string): { "tasks.ts": string; "main.ts": string } {
  return {
    "tasks.ts": `import { join } from "${specifier}";
export function add(a: number, b: number): number {
  return a + b;
}
export function fib(n: number): number {
  if (n < 18) {
    let a = 0, b = 1;
    for (let i = 0; i < n; i++) [a, b] = [b, a + b];
    return a;
  }
  const [x, y] = join(() => fib(n - 1), fib, n - 2);
  return x + y;
}
`,
    "main.ts": `import { Pool } from "${specifier}";
import type * as tasks from "./tasks.ts";
const pool = await Pool.create<typeof tasks>(new URL("./tasks.ts", import.meta.url), { workers: 2 });
const sums = await Promise.all(Array.from({ length: 10_000 }, (_, i) => pool.run("add", i, 1)));
const fib = await pool.run("fib", 30);
const steals = pool.stats().workers.reduce((sum, w) => sum + w.successfulSteals, 0);
await pool.close();
console.log("RESULT " + JSON.stringify({ ok: sums.every((v, i) => v === i + 1), fib, steals }));
`,
  };
}

/**
 * The consumer's task module as JavaScript: the TypeScript one of {@link consumerFiles} without its type
 * annotations (one source for both).
 */
export function consumerJsTasks(specifier: string): string {
  const js = consumerFiles(specifier)["tasks.ts"].replaceAll(": number", "");
  if (/\w: \w/.test(js)) throw new Error("Cannot make the JavaScript task module as an annotation is left in it");
  return js;
}

/** Asserts that a consumer's `main.ts` ran: exit 0, every task's result right, fib(30), and steals. */
export function assertConsumerRan(what: string, run: { code: number; output: string }): void {
  const line = run.output.split("\n").find((l) => l.startsWith("RESULT "));
  assert(run.code === 0 && line !== undefined, `${what} failed (exit ${run.code}):\n${run.output.slice(-3000)}`);
  const result = JSON.parse(line.slice("RESULT ".length)) as { ok: boolean; fib: number; steals: number };
  assert(result.ok, `${what}: 10k task results`);
  assertEquals(result.fib, 832040, `${what}: fib(30)`);
  assert(result.steals > 0, `${what}: no steals in a fork-join fib(30) on 2 workers: ${line}`);
}
