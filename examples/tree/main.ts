/**
 * A parallel traversal summing a skewed binary tree (in a SharedArrayBuffer) on a pool of 2 workers,
 * against the recursive walk on the main thread.
 *
 * Run: `node examples/tree/main.ts`, `deno run -A examples/tree/main.ts` or `bun examples/tree/main.ts`.
 * Options: `--nodes=2000000 --work=40 --cutoff=20000 --workers=2 --rounds=3`.
 *
 * @module
 */
import { Pool } from "../../mod.ts";
import { median, option, printTimes, runtimeName, shares, timed, type WorkerShare } from "../_demo.ts";
import * as tasks from "./tasks.ts";

const nodes = option("nodes", 2_000_000);
const work = option("work", 40);
const cutoff = option("cutoff", 20_000);
const workers = option("workers", 2);
const rounds = option("rounds", 3);

const built = await timed(() => tasks.buildTree(nodes, 0x5eed));
const tree = built.value;
const rootLeft = tree.left[0] >= 0 ? tree.size[tree.left[0]] : 0;
console.log(
  `tree of ${nodes.toLocaleString("en-US")} nodes, height ${tasks.height(tree)}, root split ${rootLeft} | ${
    nodes - 1 - rootLeft
  } (built in ${built.ms.toFixed(0)} ms); ${work} hash rounds a node; ${runtimeName()}`,
);

const warm = tree.left[0] >= 0 ? tree.left[0] : 0;
tasks.sumSequential(tree, warm, work); // warm up on the smaller side
const sequential: number[] = [];
let expected = 0;
for (let r = 0; r < rounds; r++) {
  const { value, ms } = await timed(() => tasks.sumSequential(tree, 0, work));
  expected = value;
  sequential.push(ms);
}

await using pool = await Pool.create<typeof tasks>(new URL("./tasks.ts", import.meta.url), { workers });
await pool.run("sumParallel", tree, warm, work, cutoff); // warm up
const pooled: number[] = [];
let perWorker: WorkerShare[] = [];
for (let r = 0; r < rounds; r++) {
  const before = pool.stats();
  const { value, ms } = await timed(() => pool.run("sumParallel", tree, 0, work, cutoff));
  perWorker = shares(before, pool.stats());
  if (value !== expected) throw new Error(`Cannot trust the demo as the pool summed ${value}, not ${expected}`);
  pooled.push(ms);
}
console.log(`sum = ${expected} (pool and sequential agree)`);
printTimes(median(sequential), median(pooled), workers, perWorker);
