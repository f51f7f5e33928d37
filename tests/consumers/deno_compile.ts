/**
 * `deno compile` of a consumer project (step 4b of `npm test`): main.ts and tasks.ts importing filch's
 * `mod.ts`, compiled with the task module included (`deno compile -A --include tasks.ts main.ts`), the
 * binary run from another directory: 10k tasks and a fork-join fib that steals.
 *
 * `deno compile` downloads the runtime it embeds (denort) unless `DENORT_BIN` names one; a machine that
 * cannot fetch it (no network but the package registries, as here) gets SKIPPED with the reason and exit
 * code 2, never a pass. Exit 0: compiled and ran right; 1: anything else.
 *
 * @module
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { pathToFileURL } from "node:url";
import { assertConsumerRan, bin, consumerFiles, root, runCommand } from "./_consumer.ts";

const dir = mkdtempSync(join(tmpdir(), "filch-deno-compile-"));
let code = 1;
try {
  const project = join(dir, "project");
  mkdirSync(project);
  // Without the producer thread: a compiled binary would need its module included as a second entry.
  for (const [name, text] of Object.entries(consumerFiles(pathToFileURL(join(root, "mod.ts")).href, false))) {
    writeFileSync(join(project, name), text);
  }
  const app = join(dir, "app");
  const compiled = await runCommand(
    bin("deno"),
    ["compile", "-A", "--include", "tasks.ts", "--output", app, "main.ts"],
    project,
    {
      NO_COLOR: "1",
    },
  );
  if (compiled.code !== 0) {
    const download = /dns error|failed to lookup address|error sending request|failed to download|denort/i;
    if (download.test(compiled.output) && process.env.DENORT_BIN === undefined) {
      // deno colors its messages even under NO_COLOR here: the escapes go, so the reason reads plainly.
      const plain = compiled.output.replace(new RegExp(String.fromCharCode(27) + "\\[[0-9;]*m", "g"), "");
      const reason = plain.split("\n").find((l) => download.test(l))?.trim() ?? "download failed";
      console.log(`SKIPPED: deno compile could not fetch the runtime it embeds (denort): ${reason}`);
      console.log("Nothing was checked. Set DENORT_BIN to a denort binary, or run where deno can download it.");
      code = 2;
    } else {
      console.log(`FAILED: deno compile exited ${compiled.code}:\n${compiled.output.slice(-3000)}`);
    }
  } else {
    const elsewhere = join(dir, "elsewhere");
    mkdirSync(elsewhere);
    assertConsumerRan("the deno compile binary", await runCommand(app, [], elsewhere));
    console.log("deno compile: 1 passed, 0 failed");
    code = 0;
  }
} catch (error) {
  console.log(`FAILED: ${(error as Error).message}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
process.exit(code);
