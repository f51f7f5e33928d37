/**
 * Two copies of filch in one program: the pool created from one, the task module importing `join` from
 * another (Deno mixing a relative path and an `npm:` specifier, a bundled task module). The task module's
 * copy must find the pool worker's host (a global registry keyed by protocol) and fork for real, or,
 * where the copies speak different protocols, throw a named error: never run everything inline quietly.
 */
import { cpSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Pool } from "../../lib/pool.ts";
import { assert, assertEquals, assertRejects, test, within } from "../_test.ts";

/** A task module in a temporary directory that imports `join` from its own copy of lib/. */
function taskModuleWithOwnCopy(): { dir: string; url: URL } {
  const dir = mkdtempSync(join(tmpdir(), "filch-two-copies-"));
  cpSync(fileURLToPath(new URL("../../lib", import.meta.url)), join(dir, "lib"), { recursive: true });
  // Node decides ESM vs CommonJS for a .ts file by the nearest package.json.
  writeFileSync(join(dir, "package.json"), '{ "type": "module" }\n');
  writeFileSync(
    join(dir, "tasks.ts"),
    `import { join } from "./lib/forkjoin/join.ts";
export function fib(n: number): number {
  if (n < 15) {
    let a = 0, b = 1;
    for (let i = 0; i < n; i++) [a, b] = [b, a + b];
    return a;
  }
  const [x, y] = join(() => fib(n - 1), fib, n - 2);
  return x + y;
}
/**
 * a waits (up to 30 s) for b to raise a flag, so b finishes only if another worker steals it while a
 * waits: "ok" or "not-equal" means stolen, "timed-out" means the fork was never stolen (or never made).
 */
export function stolenWhileWaiting(): string {
  const flag = new Int32Array(new SharedArrayBuffer(4));
  const [waited] = join(() => Atomics.wait(flag, 0, 0, 30_000), raise, flag);
  return waited;
}
export function raise(flag: Int32Array): void {
  Atomics.store(flag, 0, 1);
  Atomics.notify(flag, 0);
}
/** Pretends the worker's copy speaks another protocol, then joins. */
export function joinAcrossProtocols(): unknown {
  const registry = globalThis as unknown as Record<symbol, { protocol: number }>;
  const registered = registry[Symbol.for("filch.forkJoinHost")];
  const protocol = registered.protocol;
  registered.protocol = protocol + 1;
  try {
    return join(() => 1, fib, 3);
  } finally {
    registered.protocol = protocol;
  }
}
`,
  );
  return { dir, url: pathToFileURL(join(dir, "tasks.ts")) };
}

test("a task module that imports join from another copy of filch forks for real: its pieces are stolen", async () => {
  const { dir, url } = taskModuleWithOwnCopy();
  try {
    const pool = await Pool.create<{ fib(n: number): number; stolenWhileWaiting(): string }>(url, {
      workers: 2,
    });
    try {
      assertEquals(await within(pool.run("fib", 27), 60_000, "fib(27)"), 196418, "fib(27)");
      // Whether fib's pieces get stolen depends on timing (a busy machine can finish fib on one worker
      // before the other wakes), so stealing is proven by a join that cannot end unless b is stolen.
      const waited = await within(pool.run("stolenWhileWaiting"), 60_000, "the waiting join");
      assert(waited !== "timed-out", "b was never stolen: the task module's copy of join ran it inline");
      const steals = pool.stats().workers.reduce((sum, w) => sum + w.successfulSteals, 0);
      assert(steals > 0, `no steals counted after a stolen piece (the join returned ${waited})`);
    } finally {
      await within(pool.close(), 10_000, "close");
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("copies of filch that speak different fork-join protocols: join throws ForkJoinProtocolError, not inline", async () => {
  const { dir, url } = taskModuleWithOwnCopy();
  try {
    const pool = await Pool.create<{ joinAcrossProtocols(): unknown }>(url, { workers: 1 });
    try {
      const error = await within(assertRejects(pool.run("joinAcrossProtocols")), 30_000, "the join");
      assertEquals((error as Error).name, "ForkJoinProtocolError", String(error));
      assert((error as Error).message.includes("two versions of filch"), (error as Error).message);
    } finally {
      await within(pool.close(), 10_000, "close");
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
