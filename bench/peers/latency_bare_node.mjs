// The latency benchmark's bare loop worker (node:worker_threads): one task at a time, replies its start time.
// The body is bench/latency_tasks.ts's spin.
import { parentPort } from "node:worker_threads";
parentPort.on("message", (ms) => {
  const started = performance.timeOrigin + performance.now();
  const end = performance.now() + ms;
  while (performance.now() < end) { /* spin */ }
  parentPort.postMessage(started);
});
