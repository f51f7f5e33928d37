/**
 * `deno task` runs this repository's own Deno (the npm-installed one the README's `npm install` brings), not
 * a script: Deno's task runner looks a bare command up in `node_modules/.bin` first and runs what it finds
 * there as an npm bin script with Deno, so a task written `deno run …` made Deno parse its own ELF binary
 * (`node_modules/.bin/deno` is the npm package's executable) and fail with "Invalid or unexpected token".
 * Every task names `./node_modules/deno/deno` instead; this test holds each task to that and runs one.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { assert, assertEquals, runtime, test } from "../_test.ts";

const root = fileURLToPath(new URL("../..", import.meta.url));
const DENO = "./node_modules/deno/deno";

test("no deno task starts a bare `deno`, which the task runner would take for an npm bin script", () => {
  const tasks = (JSON.parse(readFileSync(`${root}/deno.json`, "utf8")) as { tasks: Record<string, string> }).tasks;
  const bare: string[] = [];
  for (const [name, command] of Object.entries(tasks)) {
    for (const part of command.split(/&&|\|\||;/)) {
      // Leading environment assignments (NAME=value) come before the command itself.
      const words = part.trim().split(/\s+/).filter((word) => !/^[A-Z_][A-Z0-9_]*=/.test(word));
      if (words[0] === "deno") bare.push(`${name}: ${part.trim()}`);
    }
  }
  assertEquals(bare, [], `tasks that start a bare deno (write ${DENO} instead)`);
});

test(`deno task check:tla --list (started from ${runtime}) runs the npm-installed Deno and lists the TLC configurations`, () => {
  assert(existsSync(`${root}/node_modules/deno/deno`), "npm install put Deno at node_modules/deno/deno");
  const child = spawnSync(`${root}/node_modules/deno/deno`, ["task", "check:tla", "--list"], {
    cwd: root,
    encoding: "utf8",
    timeout: 120_000,
    env: { ...process.env, NO_COLOR: "1" },
  });
  assert(child.status === 0, `deno task exits with 0, not ${child.status} (${child.error}): ${child.stderr}`);
  assert(/^real\tChaseLev\t/m.test(child.stdout), `the list of configurations:\n${child.stdout.slice(0, 400)}`);
});
