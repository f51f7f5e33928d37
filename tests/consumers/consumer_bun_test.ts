/**
 * Bun consumers of the packed npm tarball, installed with `bun add <tarball>`: the project run with `bun
 * run main.ts`, and a single-file executable, `bun build --compile ./main.ts ./tasks.ts ./producer.ts` (the task module as an extra entry
 * point, as Bun's documentation says for workers; nothing of filch's is named), run from another directory
 * so that nothing can be loaded from the project's files. Each must run 10k tasks and a fork-join fib
 * whose pieces are stolen.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { assertConsumerRan, bin, consumerFiles, packTarball, runCommand } from "./_consumer.ts";
import { assertEquals, test, within } from "../_test.ts";

test(
  "Bun: a project that ran bun add <tarball> runs 10k tasks and a stealing fork-join fib with bun run, and as a single-file executable (bun build --compile ./main.ts ./tasks.ts ./producer.ts)",
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
      const ran = await within(runCommand(bin("bun"), ["run", "main.ts"], project), 120_000, "bun run main.ts");
      assertConsumerRan("bun run main.ts", ran);
      const app = join(dir, "app");
      const built = await within(
        runCommand(
          bin("bun"),
          ["build", "--compile", "./main.ts", "./tasks.ts", "./producer.ts", "--outfile", app],
          project,
        ),
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
