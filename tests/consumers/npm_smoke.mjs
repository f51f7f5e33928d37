// Smoke test of the npm build (dist/, made by scripts/build_npm.mjs) on the machine's own Node,
// which is older than the Node 24 the rest of the suite runs on (package.json's `engines` declares Node
// 20.16, and tests/run_all.ts runs this file with the system Node, 20): import the package entry, move
// tasks between two threads through a bare deque, then run the pool's real API from the built package —
// create, run, a join inside a task, map, a producer in another worker thread, close — each asserted;
// and read the public exports' hover examples in dist/*.d.ts for imports an npm user cannot resolve.
// Prints "N passed, M failed".
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
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

// The pool's real API, from the built package. A throw anywhere is a failure of the step it cut short;
// a hang fails the whole run (the watchdog below), never the runner's deadline alone.
const watchdog = setTimeout(() => {
  console.error("FAILED: the pool steps did not finish within 60 s");
  console.log(`npm build smoke on Node ${process.version}: ${passed} passed, ${failed + 1} failed`);
  process.exit(1);
}, 60_000);
watchdog.unref();
async function step(name, body) {
  try {
    await body();
  } catch (error) {
    failed++;
    console.error(`FAILED: ${name}: ${error?.stack ?? error}`);
  }
}
const { move, Pool } = await import(entry.href);
let pool;
await step("Pool.create on the built package", async () => {
  pool = await Pool.create(new URL("./npm_smoke_tasks.mjs", import.meta.url), { workers: 2 });
  check(
    "create: the pool is open with the module's tasks",
    pool.lifecycle === "open" && pool.tasks.join() === "add,fib,square",
  );
});
if (pool !== undefined) {
  await step("run", async () => check("run: add(2, 3) is 5", (await pool.run("add", 2, 3)) === 5));
  await step("join inside a task", async () => check("join: fib(20) is 6765", (await pool.run("fib", 20)) === 6765));
  await step("map", async () => {
    const squares = [];
    for await (const square of pool.map("square", [1, 2, 3, 4, 5])) squares.push(square);
    check("map: squares in input order", squares.join() === "1,4,9,16,25");
  });
  await step("a moved buffer is detached, and refused by name after", async () => {
    // ArrayBuffer.prototype.detached is ES2024 (Node 22): on Node 20 the codec must still see a detached
    // buffer, not send it as an empty one.
    const bytes = new Uint8Array([1, 2, 3]);
    check("move: the task gets the moved bytes", (await pool.run("add", move(bytes), 0)) === "1,2,30");
    check("move: the sender's buffer is detached", bytes.buffer.byteLength === 0);
    const again = await pool.run("add", bytes.buffer, 0).then(() => "resolved", (error) => String(error));
    check(`a detached buffer as an argument is refused by name: ${again}`, again.includes("detached ArrayBuffer"));
    let moved = "accepted";
    try {
      move(bytes);
    } catch (error) {
      moved = String(error);
    }
    check(`move() of a detached buffer is refused by name: ${moved}`, moved.includes("detached"));
  });
  await step("a producer in another worker thread", async () => {
    const handle = pool.handle();
    const producerSource = `
      const { workerData, parentPort } = require("node:worker_threads");
      import(workerData.entry).then(async ({ openProducer }) => {
        const producer = openProducer(workerData.handle);
        const sums = await Promise.all(Array.from({ length: 100 }, (_, i) => producer.run("add", i, 1)));
        const fib = await producer.run("fib", 15);
        await producer.close();
        parentPort.postMessage({ total: sums.reduce((a, b) => a + b, 0), fib });
      }).catch((error) => parentPort.postMessage({ error: String(error && error.stack || error) }));`;
    const thread = new Worker(producerSource, {
      eval: true,
      workerData: { entry: entry.href, handle },
      transferList: [...handle.transfer],
    });
    const reply = await new Promise((resolve, reject) => {
      thread.once("message", resolve);
      thread.once("error", reject);
    });
    await thread.terminate();
    if (reply.error !== undefined) throw new Error(`the producer thread threw: ${reply.error}`);
    check("producer: 100 runs from another thread add up", reply.total === 5050);
    check("producer: a join inside its task", reply.fib === 610);
  });
  await step("close", async () => {
    await pool.close();
    check("close: the pool is closed", pool.lifecycle === "closed");
  });
}
clearTimeout(watchdog);

// The editor hover examples of the public exports, as an npm user sees them in dist/*.d.ts: each import
// must resolve for that user. Refused: "@filch/filch" (the JSR name, which the npm build rewrites to
// "filch") and a relative path to one of filch's own modules ("./pool.ts": a file the package does not
// ship). A relative import of a module that is not filch's ("./tasks.ts") is the user's own task module.
// Public: what dist/mod.d.ts re-exports, and every member of those classes and interfaces; the examples
// of internal modules' exports may stay relative.
{
  const dist = fileURLToPath(new URL("../../dist/", import.meta.url));
  const modDts = readFileSync(join(dist, "mod.d.ts"), "utf8");
  const publicNames = new Set();
  for (const [, names] of modDts.matchAll(/export\s*\{([^}]*)\}\s*from/g)) {
    for (const name of names.split(",")) {
      const bare = name.trim().replace(/^type\s+/, "").split(/\s+as\s+/).pop();
      if (bare) publicNames.add(bare);
    }
  }
  const declaration =
    /^export\s+(?:declare\s+)?(?:abstract\s+)?(?:class|function|const|let|type|interface|enum)\s+(\w+)/;
  const bad = [];
  let examples = 0;
  const walk = (dir) =>
    readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
      entry.isDirectory() ? walk(join(dir, entry.name)) : entry.name.endsWith(".d.ts") ? [join(dir, entry.name)] : []
    );
  for (const file of walk(dist)) {
    const lines = readFileSync(file, "utf8").split("\n");
    // Each JSDoc block belongs to the declaration after it; an indented one to a member of the last
    // top-level declaration; mod.d.ts's module doc (no declaration after it) is public.
    let container;
    for (let i = 0; i < lines.length; i++) {
      const top = lines[i].match(declaration);
      if (top) container = top[1];
      if (!lines[i].trimStart().startsWith("/**")) continue;
      let end = i;
      while (end < lines.length && !lines[end].includes("*/")) end++;
      let next = end + 1;
      while (next < lines.length && lines[next].trim() === "") next++;
      const owner = (lines[next] ?? "").match(declaration)?.[1] ??
        (/^\s/.test(lines[next] ?? "") ? container : undefined);
      const isPublic = owner === undefined ? file === join(dist, "mod.d.ts") : publicNames.has(owner);
      for (let k = i; k <= end && isPublic; k++) {
        const specifier = lines[k].match(/^\s*\*\s*import\b.*?\bfrom\s+"([^"]+)"/)?.[1];
        if (specifier === undefined) continue;
        examples++;
        const own = specifier.startsWith(".") &&
          existsSync(resolve(dirname(file), specifier.replace(/\.(ts|js)$/, ".d.ts")));
        if (specifier === "@filch/filch" || own) {
          bad.push(`${file.slice(dist.length)}:${k + 1} (${owner ?? "module doc"}): ${lines[k].trim()}`);
        }
      }
      i = end;
    }
  }
  check(
    `the public exports' hover examples in dist/*.d.ts import what an npm user can resolve (${examples} imports read)${
      bad.length === 0 ? "" : `; unresolvable:\n  ${bad.join("\n  ")}`
    }`,
    examples > 20 && bad.length === 0,
  );
}

console.log(`npm build smoke on Node ${process.version}: ${passed} passed, ${failed} failed`);
if (failed > 0) process.exitCode = 1;
