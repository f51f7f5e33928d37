// Smoke test of the npm build (dist/, compiled by `tsc -p tsconfig.build.json`) on the machine's own Node,
// which is older than the Node 24 the rest of the suite runs on: import the package entry, and move tasks
// between two threads through a deque in a SharedArrayBuffer. Prints "N passed, M failed".
import { Worker } from "node:worker_threads";

const entry = new URL("../../dist/mod.js", import.meta.url);
const { Deque, dequeRegionBytes, EMPTY, initDeque, Stealer } = await import(entry.href);
let passed = 0;
let failed = 0;
function check(name, condition) {
  if (condition) passed++;
  else {
    failed++;
    console.error(`FAILED: ${name}`);
  }
}

const capacity = 1024;
const region = { buffer: new SharedArrayBuffer(dequeRegionBytes(capacity)), byteOffset: 0, capacity };
initDeque(region);
const owner = new Deque(region);
owner.push(1);
owner.push(2);
check("steal takes the oldest", new Stealer(region).steal() === 1);
check("pop takes the newest", owner.pop() === 2);
check("pop on empty is EMPTY", owner.pop() === EMPTY);

// A thief thread steals while this thread pushes 1000 tasks and pops some; every task is taken once.
for (let i = 0; i < 1000; i++) owner.push(i);
const thiefSource = `
  const { workerData, parentPort } = require("node:worker_threads");
  import(workerData.entry).then(({ Stealer, EMPTY, RETRY }) => {
    const thief = new Stealer(workerData.region);
    const got = [];
    for (let misses = 0; misses < 1e6;) {
      const v = thief.steal();
      if (v === EMPTY) misses++; else if (v !== RETRY) got.push(v);
    }
    parentPort.postMessage(got);
  });`;
const thief = new Worker(thiefSource, { eval: true, workerData: { entry: entry.href, region } });
const mine = [];
for (let v = owner.pop(); v !== EMPTY; v = owner.pop()) mine.push(v);
const stolen = await new Promise((resolve, reject) => {
  thief.on("message", resolve);
  thief.on("error", reject);
});
await thief.terminate();
const all = [...mine, ...stolen].sort((a, b) => a - b);
check("every task taken exactly once across two threads", all.length === 1000 && all.every((v, i) => v === i));

console.log(`npm build smoke on Node ${process.version}: ${passed} passed, ${failed} failed`);
if (failed > 0) process.exitCode = 1;
