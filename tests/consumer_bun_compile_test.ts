/**
 * A Bun single-file executable built from a consumer project that installed the packed npm tarball:
 * `bun add <tarball>`, then `bun build --compile ./main.ts ./tasks.ts` (the task module as an extra entry
 * point, as Bun's documentation says for workers; nothing of filch's is named). The binary is run from
 * another directory, so that nothing can be loaded from the project's files: it must run 10k tasks and a
 * fork-join fib whose pieces are stolen.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bin, packTarball, runCommand } from "./_consumer.ts";
import { assert, assertEquals, test, within } from "./_test.ts";

test(
  "Bun single-file executable: bun build --compile ./main.ts ./tasks.ts of a project that installed the tarball runs 10k tasks and a stealing fork-join fib",
  async () => {
    const dir = mkdtempSync(join(tmpdir(), "filch-bun-compile-"));
    try {
      const tarball = await within(packTarball(dir), 120_000, "npm pack");
      const project = join(dir, "project");
      mkdirSync(project);
      writeFileSync(join(project, "package.json"), '{ "name": "consumer", "private": true, "type": "module" }\n');
      const added = await within(runCommand(bin("bun"), ["add", tarball], project), 120_000, "bun add");
      assertEquals(added.code, 0, `bun add of the tarball failed:\n${added.output.slice(-3000)}`);
      writeFileSync(
        join(project, "tasks.ts"),
        `import { join } from "filch";
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
      );
      writeFileSync(
        join(project, "main.ts"),
        `import { Pool } from "filch";
import type * as tasks from "./tasks.ts";
const pool = await Pool.create<typeof tasks>(new URL("./tasks.ts", import.meta.url), { workers: 2 });
const sums = await Promise.all(Array.from({ length: 10_000 }, (_, i) => pool.run("add", i, 1)));
const fib = await pool.run("fib", 30);
const steals = pool.stats().workers.reduce((sum, w) => sum + w.successfulSteals, 0);
await pool.close();
console.log("RESULT " + JSON.stringify({ ok: sums.every((v, i) => v === i + 1), fib, steals }));
`,
      );
      const app = join(dir, "app");
      const built = await within(
        runCommand(bin("bun"), ["build", "--compile", "./main.ts", "./tasks.ts", "--outfile", app], project),
        120_000,
        "bun build --compile",
      );
      assertEquals(built.code, 0, `bun build --compile failed:\n${built.output.slice(-3000)}`);
      const elsewhere = join(dir, "elsewhere");
      mkdirSync(elsewhere);
      const { code, output } = await within(runCommand(app, [], elsewhere), 120_000, "the compiled binary");
      const line = output.split("\n").find((l) => l.startsWith("RESULT "));
      assert(code === 0 && line !== undefined, `the binary failed (exit ${code}):\n${output.slice(-3000)}`);
      const result = JSON.parse(line.slice("RESULT ".length)) as { ok: boolean; fib: number; steals: number };
      assert(result.ok, "10k task results");
      assertEquals(result.fib, 832040, "fib(30)");
      assert(result.steals > 0, `no steals in a fork-join fib(30) on 2 workers: ${line}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
  400_000,
);
