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
import { assertConsumerRan, bin, consumerFiles, packTarball, runCommand } from "./_consumer.ts";
import { assertEquals, test, within } from "./_test.ts";

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
      for (const [name, text] of Object.entries(consumerFiles(`filch`))) {
        writeFileSync(join(project, name), text);
      }
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
      assertConsumerRan("the compiled binary", { code, output });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
  400_000,
);
