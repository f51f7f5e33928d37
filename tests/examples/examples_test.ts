/**
 * Every example program runs: each `examples/<demo>/main.ts` (fork-join fib, merge sort, Mandelbrot, the
 * unbalanced tree) in a process of its own under the runtime running the tests, at a small size, with a
 * deadline. Each demo checks the pool's result against the sequential one and throws if they differ, so an
 * exit code of 0 means it ran and was right. (`npm run demo:fib` and the others run them at full size.)
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { assert, runtime, test } from "../_test.ts";

/** The demos and the options that make each one small (a second or so on 2 workers). */
const DEMOS: readonly { name: string; args: string[] }[] = [
  { name: "fib", args: ["--n=24", "--cutoff=12", "--rounds=1"] },
  { name: "sort", args: ["--n=200000", "--cutoff=4096", "--rounds=1"] },
  { name: "mandelbrot", args: ["--width=160", "--height=120", "--iterations=200", "--rounds=1"] },
  { name: "tree", args: ["--nodes=20000", "--work=10", "--cutoff=500", "--rounds=1"] },
];

/** How long one demo may take before it counts as a hang. */
const DEADLINE_MS = 90_000;

for (const demo of DEMOS) {
  test(
    `examples/${demo.name}/main.ts runs to its end on ${runtime} and its pool's result equals the sequential one`,
    () => {
      const file = fileURLToPath(new URL(`../../examples/${demo.name}/main.ts`, import.meta.url));
      const process = (globalThis as unknown as { process: { execPath: string } }).process;
      const args = runtime === "deno" ? ["run", "-A", file, ...demo.args] : [file, ...demo.args];
      const run = spawnSync(process.execPath, args, { encoding: "utf8", timeout: DEADLINE_MS });
      const output = `${run.stdout ?? ""}${run.stderr ?? ""}`.slice(-2000);
      assert(run.error === undefined, `examples/${demo.name}: could not run or timed out: ${String(run.error)}`);
      assert(run.status === 0, `examples/${demo.name} exited ${run.status} (${run.signal ?? "no signal"}):\n${output}`);
      assert(
        /worker 0: ran \d+ tasks/.test(run.stdout),
        `examples/${demo.name} printed its workers' shares:\n${output}`,
      );
    },
    DEADLINE_MS + 30_000,
  );
}
