/**
 * The elastic pool's benchmark (bench/elastic.ts) cannot rot: it runs with `--quick` on the runtime running
 * this file (its own processes, one per contender: the elastic pool, fixed pools of the minimum and the
 * maximum, piscina), and every figure it reports has a value: each contender's memory, burst throughput and
 * first result after the idle gap, and each ratio. A wrong task result or a failed process exits non-zero
 * with its error. Its timing means nothing here.
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { assert, assertEquals, runtime, test } from "../_test.ts";

const root = fileURLToPath(new URL("../..", import.meta.url));

/** Runs the benchmark with this runtime; resolves with its stdout, rejects with its stderr's end. */
function runBench(args: string[]): Promise<string> {
  const prefix = "Deno" in globalThis ? ["run", "-A"] : [];
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [...prefix, join(root, "bench/elastic.ts"), ...args],
      { cwd: root, timeout: 240_000 },
      (error, stdout, stderr) => {
        if (error) {
          reject(
            new Error(`bench/elastic.ts ${args.join(" ")} failed: ${error.message}\n${String(stderr).slice(-1500)}`),
          );
        } else resolve(String(stdout));
      },
    );
  });
}

test(
  `bench/elastic.ts --quick on ${runtime}: every contender's every figure, and every ratio, has a value`,
  async () => {
    const out = await runBench(["--quick", "--json"]);
    const line = out.split("\n").findLast((l) => l.startsWith("{"));
    assert(line !== undefined, `a JSON summary:\n${out}`);
    const summary = JSON.parse(line) as {
      errors: string[];
      contenders: Record<string, Record<string, number[]>>;
      ratios: Record<string, number[]>;
    };
    assertEquals(summary.errors, [], "no contender's process failed");
    assertEquals(Object.keys(summary.contenders).sort(), ["elastic", "fixed-max", "fixed-min", "piscina"]);
    for (const [name, figures] of Object.entries(summary.contenders)) {
      for (const [figure, samples] of Object.entries(figures)) {
        assert(samples.length === 1 && Number.isFinite(samples[0]), `${name}'s ${figure}: ${JSON.stringify(samples)}`);
      }
    }
    for (const [ratio, samples] of Object.entries(summary.ratios)) {
      assert(
        samples.length === 1 && Number.isFinite(samples[0]) && samples[0] > 0,
        `${ratio}: ${JSON.stringify(samples)}`,
      );
    }
  },
  300_000,
);
