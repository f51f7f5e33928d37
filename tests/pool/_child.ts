/**
 * Runs a script as a module in a child process of the runtime running the tests (`deno run -A` on Deno),
 * with a deadline: for checks that need a process of their own (does it exit by itself, does a crash stay
 * out of the test's process).
 *
 * @module
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runtime } from "../_test.ts";

/** How a child process ended. */
export interface ChildRun {
  /** Its exit code, or null if a signal ended it (the deadline's, say). */
  status: number | null;
  /** The signal that ended it, or null. */
  signal: string | null;
  /** Its stdout. */
  stdout: string;
  /** Its stderr. */
  stderr: string;
  /** Why it could not be run or waited for (its deadline passed, say), else undefined. */
  error: string | undefined;
}

/**
 * Writes `script` to a fresh temporary `.mjs` file and runs it; a child still running after `timeoutMs` is
 * ended with SIGTERM (then `status` is null).
 *
 * @param script The module's source.
 * @param timeoutMs The deadline.
 * @returns How it ended and what it printed.
 */
export function runScript(script: string, timeoutMs: number): ChildRun {
  const file = join(mkdtempSync(join(tmpdir(), "filch-child-")), "child.mjs");
  writeFileSync(file, script);
  const process = (globalThis as unknown as { process: { execPath: string; env: Record<string, string> } }).process;
  const args = runtime === "deno" ? ["run", "-A", file] : [file];
  const child = spawnSync(process.execPath, args, {
    encoding: "utf8",
    timeout: timeoutMs,
    env: { ...process.env, NO_COLOR: "1" },
  });
  return {
    status: child.status,
    signal: child.signal,
    stdout: child.stdout ?? "",
    stderr: child.stderr ?? "",
    error: child.error?.message,
  };
}
