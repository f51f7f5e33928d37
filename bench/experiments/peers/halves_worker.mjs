// The demo ceiling's bare worker (node:worker_threads): one list of task sizes in, the xor of the demo's
// own `work` over it out (bench/experiments/demo_ceiling.ts). No pool, no per-task message: the floor of any pool's
// overhead for the demo's work, on this machine's two cores.
import { parentPort } from "node:worker_threads";
import { work } from "../../tasks.ts";

parentPort.on("message", (units) => {
  let check = 0;
  for (const u of units) check ^= work(u);
  parentPort.postMessage(check);
});
