/**
 * The graph benchmarks (bench/graph/: chain, pipeline, wavefront) cannot rot: each runs with `--quick` and
 * tiny sizes, on Node 24 whichever runner runs this file (one runtime is enough to show the script still
 * type-strips, builds its graph, and checks every result against its reference, which it does in every
 * round: a wrong result exits non-zero). Each run is bounded; its timing means nothing here.
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { assert, test } from "../_test.ts";

const root = fileURLToPath(new URL("../..", import.meta.url));
const node = join(root, "node_modules", ".bin", "node");

/** Runs a benchmark script with Node; resolves with its stdout, rejects with its stderr's end. */
function runBench(script: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(node, [join(root, script), ...args], { cwd: root, timeout: 100_000 }, (error, stdout, stderr) => {
      if (error) {
        reject(new Error(`${script} ${args.join(" ")} failed: ${error.message}\n${String(stderr).slice(-1500)}`));
      } else resolve(String(stdout));
    });
  });
}

const SHAPES: [string, string[], RegExp[]][] = [
  ["bench/graph/chain.ts", ["--quick", "--rounds", "1", "--nodes", "200"], [
    /\| graph \|/,
    /\| graph, 2 chains \|/,
    /\| await filch \|/,
  ]],
  ["bench/graph/pipeline.ts", ["--quick", "--rounds", "1", "--files", "12"], [/\| graph \|/, /\| await \|/]],
  ["bench/graph/wavefront.ts", ["--quick", "--rounds", "1", "--length", "300", "--tile", "64"], [
    /\| graph \|/,
    /\| static, 2 bare threads \|/, // (its result, the distance, is checked in every round as the graph's)
  ]],
];

for (const [script, args, expected] of SHAPES) {
  test(`${script} runs with --quick and tiny sizes, its results checked against its reference`, async () => {
    const out = await runBench(script, args);
    for (const pattern of expected) assert(pattern.test(out), `${script} printed no row matching ${pattern}:\n${out}`);
  }, 120_000);
}
