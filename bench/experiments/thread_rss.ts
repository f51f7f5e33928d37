/**
 * What a process keeps of a worker thread after it ended (issue 49's memory goal): starts one
 * `node:worker_threads` thread at a time that allocates a little and ends, four times, and prints the
 * process's resident memory before the first and after each end. Node, Deno and Bun alike (no pool).
 *
 * Found (2026-11-29, the project's VM): the first thread's end leaves 13–22 MiB resident (Node 16–19, Deno
 * 20, Bun 13), and each later one adds 0.1–1.7 MiB: the memory is kept once and reused by the next thread,
 * not lost per thread; `MALLOC_ARENA_MAX=1` does not change it in this test (Node 47 → 66 → 67 MiB either
 * way). So an elastic pool that retires its workers keeps about one thread's worth more than a pool that
 * never grew, for the process's life, however often it grows and shrinks.
 *
 * Run: `node bench/experiments/thread_rss.ts` (or `deno run -A`, `bun`).
 *
 * @module
 */
import process from "node:process";
import { Worker } from "node:worker_threads";

const mib = (): number => Math.round(process.memoryUsage().rss / 104857.6) / 10;
const SOURCE = `const { parentPort } = require("node:worker_threads");
parentPort.on("message", () => {
  const a = [];
  for (let i = 0; i < 200000; i++) a.push(i * 2);
  parentPort.postMessage(a.length);
});`;

const seen = [mib()];
for (let k = 0; k < 4; k++) {
  const thread = new Worker(SOURCE, { eval: true });
  await new Promise((resolve) => {
    thread.once("message", resolve);
    thread.postMessage(0);
  });
  await thread.terminate();
  await new Promise((resolve) => setTimeout(resolve, 800));
  seen.push(mib());
}
const runtime = "Deno" in globalThis ? "deno" : "Bun" in globalThis ? "bun" : "node";
console.log(`${runtime}: resident MiB before and after each of 4 threads ended: ${seen.join(" → ")}`);
process.exit(0);
