// The bare postMessage loop's worker (node:worker_threads): one message in, one message out.
import { parentPort } from "node:worker_threads";
parentPort.on("message", (m) => parentPort.postMessage({ i: m.i, r: m.a + m.b }));
