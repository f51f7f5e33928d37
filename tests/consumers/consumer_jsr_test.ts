/**
 * A Deno consumer of filch as JSR serves it: the package's files loaded by URL. JSR is stood in for by a
 * loopback HTTP server that serves exactly the files `deno publish --dry-run` lists (anything else is a
 * 404, so a file the package needs but does not ship fails here), with a TypeScript content type. The
 * consumer is a throwaway project in a temporary directory: `main.ts` imports `mod.ts` by URL, its task
 * module is a local file that imports `join` by the same URL. It runs under the narrowest permissions the
 * README documents (read access to the project, import access to the host; JSR's host is allowed by
 * default), with a fresh module cache, and must run 10k tasks and a fork-join fib whose pieces are stolen.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { assertConsumerRan, bin, consumerFiles, root, runCommand as run } from "./_consumer.ts";
import { assert, assertEquals, test, within } from "../_test.ts";

const deno = bin("deno");

/** What `deno publish --dry-run` says: its output, and the files it would publish (relative to the root). */
async function dryRun(): Promise<{ output: string; files: string[] }> {
  const ran = await run(deno, ["publish", "--dry-run", "--allow-dirty"], root);
  // Colours (Deno colours its report when FORCE_COLOR is set, as run_all.ts sets it, even to 0) removed.
  const output = ran.output.replace(new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, "g"), "");
  assertEquals(ran.code, 0, `deno publish --dry-run failed:\n${output}`);
  const files = [...output.matchAll(/file:\/\/(\S+) \(/g)].map((m) => decodeURIComponent(m[1]).slice(root.length));
  assert(files.includes("mod.ts"), `the publish set has no mod.ts:\n${output}`);
  return { output, files };
}

test("deno publish --dry-run warns of one thing only: the import of the user's task module, known only at run time", async () => {
  const { output } = await within(dryRun(), 120_000, "deno publish --dry-run");
  // Each warning is `warning[code]: message` and, a line or two on, `--> file:line:column`.
  const warnings = [...output.matchAll(/warning\[([\w-]+)\][^\n]*\n[^>]*--> (\S+):(\d+):\d+/g)].map((m) => {
    const line = readFileSync(m[2], "utf8").split("\n")[Number(m[3]) - 1].trim();
    return `${m[1]} at ${m[2].slice(root.length)}: ${line}`;
  });
  assertEquals(output.match(/warning\[/g)?.length ?? 0, warnings.length, `a warning not parsed:\n${output}`);
  // No specifier can name a module the user writes: every pool thread imports it by the URL it was given.
  assertEquals(warnings, [
    "unanalyzable-dynamic-import at lib/worker/boot.ts: module = await import(setup.moduleUrl);",
  ], output);
});

test(
  "JSR on Deno: the published files served by URL run 10k tasks and a fork-join fib that steals, with --allow-read and --allow-import only",
  async () => {
    const files = new Set((await dryRun()).files);
    const server = createServer((req, res) => {
      const path = decodeURIComponent(new URL(req.url ?? "/", "http://x").pathname.slice(1));
      if (!files.has(path)) {
        res.writeHead(404).end(`not in the publish set: ${path}`);
        return;
      }
      const type = path.endsWith(".ts") ? "application/typescript" : "text/plain";
      res.writeHead(200, { "content-type": type }).end(readFileSync(join(root, path)));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
    const dir = mkdtempSync(join(tmpdir(), "filch-jsr-consumer-"));
    try {
      for (const [name, text] of Object.entries(consumerFiles(`http://${host}/mod.ts`))) {
        writeFileSync(join(dir, name), text);
      }
      const { code, output } = await within(
        run(deno, ["run", `--allow-read=${dir}`, `--allow-import=${host}`, "main.ts"], dir, {
          DENO_DIR: join(dir, ".deno"), // a fresh module cache: every module comes from the server
        }),
        120_000,
        "the JSR consumer",
      );
      assertConsumerRan("the JSR consumer", { code, output });
    } finally {
      server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
  180_000,
);
