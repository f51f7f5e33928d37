/**
 * The facade rule: every shared-memory access in lib/ goes through lib/protocol/atomics.ts, so the
 * interleaving harness sees all of them. A file in lib/ that names `Atomics` (or destructures `mem`)
 * would bypass it.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { assertEquals, test } from "../_test.ts";

const libDir = fileURLToPath(new URL("../../lib/", import.meta.url).href);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith(".ts") ? [path] : [];
  });
}

/** Lines of `source` that reach shared memory around the facade. */
export function facadeViolations(source: string): string[] {
  const withoutBlockComments = source.replace(/\/\*[\s\S]*?\*\//g, "");
  return withoutBlockComments.split("\n").filter((line) => {
    const code = line.replace(/\/\/.*$/, "");
    return /\bAtomics\s*\./.test(code) || /(const|let|var)\s*\{[^}]*\}\s*=\s*mem\b/.test(code);
  });
}

test("no file in lib/ other than protocol/atomics.ts names Atomics or destructures mem", () => {
  const files = sourceFiles(libDir).filter((path) => !path.endsWith(`${"lib"}/protocol/atomics.ts`));
  const offenders = files.flatMap((path) => facadeViolations(readFileSync(path, "utf8")).map((l) => `${path}: ${l}`));
  assertEquals(offenders, [], "shared-memory accesses outside the facade");
});

test("the facade rule catches a direct Atomics call and a destructured mem", () => {
  assertEquals(facadeViolations("const x = Atomics.load(a, 0);").length, 1, "direct Atomics call");
  assertEquals(facadeViolations("const { load } = mem;").length, 1, "destructured facade");
  assertEquals(facadeViolations("mem.load(a, 0); // not Atomics.load").length, 0, "comment mention is fine");
  assertEquals(facadeViolations("/** see `Atomics.wait` */\nmem.wait(a, 0, 0);").length, 0, "doc mention is fine");
});

/** Lines of `source` that make a plain (unordered) shared-memory access through the facade. */
export function plainAccesses(source: string): string[] {
  const withoutBlockComments = source.replace(/\/\*[\s\S]*?\*\//g, "");
  return withoutBlockComments.split("\n").filter((line) =>
    /\bmem\s*\.\s*(read|write)\s*\(/.test(line.replace(/\/\/.*$/, ""))
  );
}

test("the model-checked protocols (deque, injector, sleep, latch, kill guard) make no plain accesses: every access is atomic", () => {
  // Their specs model each access as one sequentially consistent step; a plain access would be a step the
  // specs and the interleaving harness do not have. Plain accesses belong to task records (task.ts, the
  // worker and the pool), ordered by these protocols' atomics.
  const protocols = ["deque.ts", "injector.ts", "sleep.ts", "latch.ts", "kill_guard.ts"].map((name) =>
    join(libDir, "protocol", name)
  );
  const offenders = protocols.flatMap((path) => plainAccesses(readFileSync(path, "utf8")).map((l) => `${path}: ${l}`));
  assertEquals(offenders, [], "plain accesses in a model-checked protocol");
  assertEquals(plainAccesses("mem.write(words, 3, 1);").length, 1, "the check sees a plain write");
  assertEquals(plainAccesses("mem.load(words, 3); // not mem.read(words, 3)").length, 0, "a comment is fine");
});
