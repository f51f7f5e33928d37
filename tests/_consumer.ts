/**
 * Helpers of the consumer tests (`consumer_*_test.ts`): run a command without blocking the event loop (a
 * test may serve files meanwhile), and pack the package as npm would publish it.
 */
import { spawn } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { assertEquals } from "./_test.ts";

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
