// The uneven-rows benchmark's peers (bench/experiments/rows.ts): piscina calls the default export with the submitted
// object; the bare loop's worker (node:worker_threads) answers one row a message.
import { isMainThread, parentPort } from "node:worker_threads";
import { row } from "../rows_tasks.ts";

export default function rowTask({ y, view }) {
  return row(y, view);
}

// A bare worker is started with `bare` as its workerData (piscina's threads are not).
import { workerData } from "node:worker_threads";
if (!isMainThread && workerData === "bare") {
  parentPort.on("message", ({ y, view }) => parentPort.postMessage({ y, sum: row(y, view) }));
}
