/**
 * Helpers of the consumer tests (`consumer_*_test.ts`): run a command without blocking the event loop (a
 * test may serve files meanwhile), and pack the package as npm would publish it.
 */
import { spawn } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { assert, assertEquals } from "../_test.ts";

/** The repository root. */
export const root: string = fileURLToPath(new URL("../..", import.meta.url));

/** A runtime or tool installed by `npm install` (node_modules/.bin). */
export function bin(name: string): string {
  return join(root, "node_modules", ".bin", name);
}

/** Runs a command; resolves with its exit code and output (stdout and stderr, in order of arrival). */
export function runCommand(
  command: string,
  args: string[],
  cwd: string,
  env: Record<string, string> = {},
): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd, env: { ...process.env, NO_COLOR: "1", ...env } });
    let output = "";
    child.stdout.on("data", (c: Buffer) => (output += c.toString()));
    child.stderr.on("data", (c: Buffer) => (output += c.toString()));
    child.on("error", (e) => resolve({ code: 127, output: output + String(e) }));
    child.on("close", (code) => resolve({ code: code ?? 1, output }));
  });
}

/** `npm pack` of the repository into `dir` (its prepack builds dist/); returns the tarball's path. */
export async function packTarball(dir: string): Promise<string> {
  const { code, output } = await runCommand("npm", ["pack", "--pack-destination", dir], root);
  assertEquals(code, 0, `npm pack failed:\n${output.slice(-3000)}`);
  const tarball = readdirSync(dir).find((f) => f.endsWith(".tgz"));
  if (tarball === undefined) throw new Error(`npm pack wrote no tarball into ${dir}:\n${output.slice(-3000)}`);
  return join(dir, tarball);
}

/**
 * What every consumer's main checks of this wave's API, from the installed package (JavaScript that is
 * also TypeScript, run after the fib with `pool` open): a run with an aborted signal rejects with an
 * AbortError, `map` and `runMany` return their results in order (a long `runMany` and a long `map` in
 * chunks), `broadcast` runs on both workers, long strings (Latin-1, UTF-8, a lone surrogate) arrive exactly,
 * `currentTask()` answers inside a task, a task submits to its own pool (`poolHandle()`), and `metrics`
 * record, a task's progress reaches its handler, the pool's `drain` event fires, a task graph returns its
 * result.
 * It sets `features` to the list of checks that failed ("" when all passed).
 */
const CONSUMER_FEATURES = `const failed = [];
const controller = new AbortController();
controller.abort();
if (!(await pool.with({ signal: controller.signal }).run("add", 1, 2).then(() => false, (e) => e.name === "AbortError"))) {
  failed.push("abort");
}
const mapped = [];
for await (const v of pool.map("inc", [1, 2, 3], { concurrency: 2 })) mapped.push(v);
if (mapped.join() !== "2,3,4") failed.push("map");
if ((await pool.runMany("add", [[1, 2], [3, 4]])).join() !== "3,7") failed.push("runMany");
// A long batch of tiny tasks travels in chunks (of up to 64): far fewer submissions than tasks.
const submittedBefore = pool.stats().submitted;
const summed = await pool.runMany("sum", Array.from({ length: 2048 }, (_, i) => [i, 1]));
if (summed.some((v, i) => v !== i + 1) || pool.stats().submitted - submittedBefore > 64) failed.push("runMany chunks");
// So does a long map of tiny inputs past its first window (256 one by one, then chunks of 16 on 2 workers:
// 368 submissions for 2048 inputs).
const mapBefore = pool.stats().submitted;
const incremented = [];
for await (const v of pool.map("inc", Array.from({ length: 2048 }, (_, i) => i))) incremented.push(v);
if (incremented.some((v, i) => v !== i + 1) || pool.stats().submitted - mapBefore > 400) failed.push("map chunks");
if ((await pool.broadcast("whoAmI")).join() !== "0,1") failed.push("broadcast");
// Long strings (128 code units and more) cross by the runtime's own calls: Latin-1, or UTF-8 (which a
// browser copies out of shared memory before it decodes), or two bytes a unit (a lone surrogate).
const texts = ["a".repeat(1000), "\\u00e9".repeat(300), "\\ufeff" + "\\u20ac".repeat(300), "x".repeat(200) + "\\ud800"];
const echoed = await Promise.all(texts.map((t) => pool.run("echo", t)));
if (echoed.some((t, i) => t !== texts[i])) failed.push("long strings");
// A task that submits 10 top-level tasks to its own pool (poolHandle() and a producer in the worker).
if ((await pool.run("innerSums", 10)) !== 90) failed.push("poolHandle");
const metrics = pool.stats().metrics;
if (metrics === undefined || metrics.runTime.count === 0) failed.push("metrics");
// A task that ignores its timeout: force replaces its worker.
const forced = await pool.with({ timeout: 20, force: true }).run("spin", 60_000).then(() => "resolved", (e) => e.name);
for (let i = 0; i < 500 && pool.stats().forcedKills === 0; i++) await new Promise((r) => setTimeout(r, 20));
if (forced !== "TimeoutError" || pool.stats().forcedKills !== 1) failed.push("force");
// A 1 MiB argument (copied once into a slab of the growable payload arena) and result (copied on the
// worker and transferred).
const total = await pool.run("total", new Uint8Array(1 << 20).fill(3));
const filled = await pool.run("fill", 1 << 20);
if (total !== 3 << 20 || !filled.every((x) => x === 7) || pool.stats().payloadArena.bytes === 0) failed.push("payload");
// move(): a buffer to a task and back without a copy (the caller's is detached).
const moving = new Uint8Array(1 << 16).fill(1);
const bumped = await pool.run("bump", move(moving));
if (moving.length !== 0 || bumped.length !== 1 << 16 || bumped[0] !== 2) failed.push("move");
// Priorities: with both workers held, 8 low tasks and then one high task queue; the high one is taken
// first when a worker frees, so it settles among the first (its worker takes it before any low one).
// An empty string[] in JavaScript and in strict TypeScript alike (pushed to from callbacks).
const settledOrder = [""].slice(0, 0);
const holders = [pool.run("spin", 150), pool.run("spin", 150)];
await new Promise((r) => setTimeout(r, 30));
const lows = Array.from({ length: 8 }, (_, i) =>
  pool.with({ priority: "low" }).run("spin", 20).then(() => settledOrder.push("low " + i)));
const high = pool.with({ priority: "high" }).run("inc", 41).then((v) => settledOrder.push("high " + v));
await Promise.all([...holders, ...lows, high]);
const lowBatch = await pool.runMany("add", [[1, 1], [2, 2]], { priority: "low" });
const lowMap = [];
for await (const v of pool.map("inc", [7, 8], { priority: "low" })) lowMap.push(v);
const highAt = settledOrder.indexOf("high 42");
if (highAt < 0 || highAt > 2 || lowBatch.join() !== "2,4" || lowMap.join() !== "8,9") {
  failed.push("priority " + settledOrder.join("/"));
}
// Progress: a task's reports reach the handler given with it, in order, the last one before its result.
const reported = [0].slice(0, 0);
const stepped = await pool.with({ onProgress: (v) => reported.push(Number(v)) }).run("steps", 50);
if (stepped !== 50 || reported.at(-1) !== 50 || reported.some((v, i) => i > 0 && v <= reported[i - 1])) {
  failed.push("progress " + reported.join());
}
// Events: the pool's EventTarget says when every task submitted here has settled.
let drains = 0;
pool.events.addEventListener("drain", () => void drains++);
await pool.run("inc", 1);
for (let i = 0; i < 250 && drains === 0; i++) await new Promise((r) => setTimeout(r, 20));
if (drains === 0) failed.push("events");
// A task graph: a continuation, a fan-out and a join with a constant, run on the workers where their inputs
// finish; only the asked-for result comes back.
const g = pool.graph();
const root = g.run("inc", 1);
const joined = g.run("sum", g.run("add", root, 10), g.run("inc", root), 100);
if ((await g.submit(joined)) !== 115) failed.push("graph");
`;

/**
 * What a producer thread does with the pool's `handle` (issue 29; JavaScript that is also TypeScript, run
 * in an async context): it opens a producer, runs 2,000 `add`s at once and one `runMany`, checks that each
 * result is its own, closes the producer, and leaves `summary`, which is {@link PRODUCER_SUMMARY} when all
 * went well. One text for every kind of thread: a node:worker_threads thread and a browser's Web Worker.
 */
const PRODUCER_WORK = `const producer = openProducer(handle);
const results = await Promise.all(Array.from({ length: 2000 }, (_, i) => producer.run("add", i, 1)));
const batch = await producer.runMany("add", [[1, 2], [3, 4], [5, 6]]);
await producer.close();
const summary = {
  runs: results.length,
  wrong: results.filter((v, i) => v !== i + 1).length,
  sum: results.reduce((a, b) => a + b, 0),
  batch: batch.join(),
};
`;

/** What a producer thread of {@link PRODUCER_WORK} reports when every result was its own (keys in its order). */
export const PRODUCER_SUMMARY = { runs: 2000, wrong: 0, sum: 2001000, batch: "3,7,11" } as const;

/** The owner's check of what the producer thread posted back (`fromProducer`), the same for every thread. */
const PRODUCER_CHECK = `if (JSON.stringify(fromProducer) !== ${JSON.stringify(JSON.stringify(PRODUCER_SUMMARY))}) {
  failed.push("producer " + JSON.stringify(fromProducer));
}
// stats() counts the producer's tasks too: its slot's submissions, all settled once it closed.
const producerSlots = pool.stats().producers.filter((p) => p.slot !== 0);
const producerSubmitted = producerSlots.reduce((n, p) => n + p.submitted, 0);
if (producerSubmitted < 2000 || producerSlots.some((p) => p.pending !== 0)) {
  failed.push("stats of producers " + JSON.stringify(producerSlots));
}
`;

/**
 * A producer in another thread: a node:worker_threads thread (Node, Deno and Bun) opens a producer from
 * the pool's handle and runs {@link PRODUCER_WORK} there (`producer.ts` of the project); "producer" goes to
 * `failed` unless its summary comes back.
 */
const PRODUCER_FEATURE =
  `// A producer in another thread: a handle posted with its port, 2,000 tasks and a runMany from there.
const threads = Reflect.get(globalThis, "process").getBuiltinModule("node:worker_threads");
const handle = pool.handle();
const producerThread = new threads.Worker(new URL("./producer.ts", import.meta.url), {
  workerData: handle,
  transferList: [...handle.transfer],
});
const fromProducer = await new Promise((resolve, reject) => {
  producerThread.once("message", resolve);
  producerThread.once("error", reject);
});
${PRODUCER_CHECK}// An elastic pool of the same module with setup data and recycling: it starts one worker, grows to two
// while tasks wait, each worker set up once with the data (setupWorker), recycled after 40 tasks, and the
// grown one retires when idle.
const tasksUrl = new URL(import.meta.url.endsWith(".mjs") ? "./tasks.mjs" : "./tasks.ts", import.meta.url);
const elastic = await Pool.create(tasksUrl, {
  workers: { min: 1, max: 2 },
  idleTimeout: 50,
  workerData: { label: "set up" },
  recycle: { afterTasks: 40 },
});
const labels = await Promise.all(Array.from({ length: 120 }, () => elastic.run("label", 2)));
const grown = elastic.stats().elastic;
for (let i = 0; i < 250 && (elastic.stats().elastic?.retired ?? 0) === 0; i++) await new Promise((r) => setTimeout(r, 20));
const shrunk = elastic.stats().elastic;
if (labels.some((l) => l !== "set up") || grown?.peak !== 2 || shrunk?.retired === 0 || elastic.stats().workersRecycled === 0) {
  failed.push("elastic " + JSON.stringify({ labels: [...new Set(labels)], grown, shrunk, recycled: elastic.stats().workersRecycled }));
}
await elastic.close();
`;

/**
 * The same producer in a browser: a module Web Worker (the page's `producer.js`, from
 * {@link consumerWebProducer}) gets the handle by `postMessage` with its transfer list. The literal
 * `new Worker(new URL("./producer.js", import.meta.url), { type: "module" })` is the form Vite bundles as a
 * worker of its own; esbuild leaves it alone, so there `producer.js` is an entry point beside the page's.
 * The browser fires no MessagePort `close`, so the owner would not notice this worker's death: it closes
 * its producer itself, and a script that fails to load rejects here rather than leaving the page waiting.
 */
const WEB_PRODUCER_FEATURE =
  `// A producer in a module Web Worker: the handle posted with its port, 2,000 tasks and a runMany from there.
const handle = pool.handle();
const producerWorker = new Worker(new URL("./producer.js", import.meta.url), { type: "module" });
const fromProducer = await new Promise((resolve, reject) => {
  producerWorker.onmessage = (event) => resolve(event.data);
  producerWorker.onerror = (event) => {
    reject(new Error("the producer worker failed: " + (event.message || "its script did not load or run")));
  };
  producerWorker.postMessage(handle, handle.transfer);
});
producerWorker.terminate();
${PRODUCER_CHECK}// A producer's Web Worker terminated while its task runs: the owner learns of its death (a browser fires no
// close event on the link: the producer's lifeline lock, lib/runtime/lifeline.ts) and takes back what it held;
// else the pool's close below would wait for the dead producer's task for ever.
const deathsBefore = pool.stats().producerDeaths;
const doomedHandle = pool.handle();
const doomed = new Worker(new URL("./producer.js", import.meta.url), { type: "module" });
await new Promise((resolve, reject) => {
  doomed.onmessage = resolve;
  doomed.onerror = () => reject(new Error("the doomed producer worker failed"));
  doomed.postMessage({ doomed: doomedHandle }, doomedHandle.transfer);
});
// Terminated once it holds its lifeline and the owner waits for it (a thread that dies before that, in its
// first moments, goes unnoticed; its message saying it holds the lock may not reach the owner once it is
// terminated: seen once in CI on the Vite page).
for (let i = 0; i < 250; i++) {
  const { held, pending } = await navigator.locks.query();
  const named = (lock) => lock.name === doomedHandle.lifeline;
  if (held.some(named) && pending.some(named)) break;
  await new Promise((r) => setTimeout(r, 20));
}
doomed.terminate();
for (let i = 0; i < 250 && pool.stats().producerDeaths === deathsBefore; i++) await new Promise((r) => setTimeout(r, 20));
if (pool.stats().producerDeaths !== deathsBefore + 1) {
  failed.push("a Web Worker producer's death not noticed");
  await pool.terminate(); // the close below would wait for its task for ever
}
`;

/**
 * What a consumer's main runs with `pool` open: {@link CONSUMER_RUN}'s steps, then `producer` (one of the
 * producer features above, or "" for none), then `features`.
 */
function consumerRun(producer: string): string {
  return `const sums = await Promise.all(Array.from({ length: 10_000 }, (_, i) => pool.run("add", i, 1)));
const fib = await pool.run("fib", 30);
const waited = await pool.run("stolenWhileWaiting");
const steals = pool.stats().workers.reduce((sum, w) => sum + w.successfulSteals, 0);
${CONSUMER_FEATURES}${producer}const features = failed.join();
`;
}

/**
 * What every consumer's main runs with `pool` open (2 workers, metrics on; JavaScript that is also
 * TypeScript): 10k tasks, fib(30), a join that ends only if its b is stolen, the steals counted, and
 * {@link CONSUMER_FEATURES}. It leaves what {@link CONSUMER_RESULT} reports.
 */
export const CONSUMER_RUN: string = consumerRun("");

/** {@link CONSUMER_RUN} with a producer in another thread (the project's `producer.ts`: {@link consumerFiles}). */
export const CONSUMER_RUN_WITH_PRODUCER: string = consumerRun(PRODUCER_FEATURE);

/**
 * {@link CONSUMER_RUN} with a producer in a browser's module Web Worker (the page's `producer.js`:
 * {@link consumerWebProducer}); it leaves `fromProducer`, the summary the page reports beside
 * {@link CONSUMER_RESULT}.
 */
export const CONSUMER_RUN_WITH_WEB_PRODUCER: string = consumerRun(WEB_PRODUCER_FEATURE);

/** What a consumer's main reports after {@link CONSUMER_RUN}: the object {@link assertConsumerRan} reads. */
export const CONSUMER_RESULT = "{ ok: sums.every((v, i) => v === i + 1), fib, waited, steals, features }";

/**
 * The consumer project every consumer test writes, importing filch as `specifier`: a task module with
 * `add`, `inc`, `whoAmI` (a worker's index, through `currentTask()`), a fork-join `fib` and a join that
 * ends only if its b is stolen, and a `main.ts` that runs 10k tasks, fib(30) and that join on 2 workers
 * and {@link CONSUMER_FEATURES}, and prints `RESULT {ok, fib, waited, steals, features}`.
 */
export function consumerFiles(
  specifier: string,
  producer = true,
): { "tasks.ts": string; "main.ts": string; "producer.ts"?: string } {
  return {
    ...(producer
      ? {
        "producer.ts": `import { parentPort, workerData } from "node:worker_threads";
import { openProducer } from "${specifier}";
const handle = workerData;
${PRODUCER_WORK}parentPort!.postMessage(summary);
`,
      }
      : {}),
    "tasks.ts": `import { currentTask, join, move, openProducer, poolHandle } from "${specifier}";
type Tasks = typeof import("./tasks.ts");
export function echo(text: string): string {
  return text;
}
export function add(a: number, b: number): number {
  return a + b;
}
export function inc(n: number): number {
  return n + 1;
}
export function sum(...xs: number[]): number {
  let s = 0;
  for (const x of xs) s += x;
  return s;
}
export function spin(ms: number): number {
  const end = Date.now() + ms;
  while (Date.now() < end) { /* ignores its signal */ }
  return ms;
}
export function total(bytes: Uint8Array): number {
  let sum = 0;
  for (let i = 0; i < bytes.length; i++) sum += bytes[i];
  return sum;
}
export function bump(bytes: Uint8Array): Uint8Array {
  for (let i = 0; i < bytes.length; i++) bytes[i]++;
  return move(bytes);
}
export function fill(n: number): Uint8Array {
  return new Uint8Array(n).fill(7);
}
// Top-level tasks submitted from inside a task, through a producer on its own pool (poolHandle()).
export async function innerSums(n: number) {
  const producer = openProducer<Tasks>(await poolHandle<Tasks>());
  const sums = await Promise.all([...Array(n).keys()].map((i) => producer.run("add", i, i)));
  await producer.close();
  return sums.reduce((a, b) => a + b, 0);
}
export function steps(n: number): number {
  const task = currentTask();
  for (let i = 1; i <= n; i++) task?.progress(i);
  return n;
}
let setUpWith = "not set up";
export function setupWorker(data: { label: string } | undefined): void {
  if (data !== undefined) setUpWith = data.label;
}
export function teardownWorker(): void {
  setUpWith = "torn down";
}
export function label(ms: number): string {
  const end = Date.now() + ms;
  while (Date.now() < end);
  return setUpWith;
}
export function whoAmI(): number {
  return currentTask()?.worker ?? -1;
}
export function fib(n: number): number {
  if (n < 18) {
    let a = 0, b = 1;
    for (let i = 0; i < n; i++) [a, b] = [b, a + b];
    return a;
  }
  const [x, y] = join(() => fib(n - 1), fib, n - 2);
  return x + y;
}
// a waits (up to 30 s) for b to raise a flag, so the join ends only if another worker steals b while a
// waits: "ok" or "not-equal" means stolen, "timed-out" that it never was. (Whether fib's pieces are
// stolen depends on timing, as a busy machine can finish fib on one worker before the other wakes.)
export function stolenWhileWaiting() {
  const flag = new Int32Array(new SharedArrayBuffer(4));
  const [waited] = join(() => Atomics.wait(flag, 0, 0, 30_000), raise, flag);
  return waited;
}
export function raise(flag: Int32Array) {
  Atomics.store(flag, 0, 1);
  Atomics.notify(flag, 0);
}
`,
    "main.ts": `import { move, Pool } from "${specifier}";
import type * as tasks from "./tasks.ts";
const pool = await Pool.create<typeof tasks>(new URL("./tasks.ts", import.meta.url), { workers: 2, metrics: true });
${producer ? CONSUMER_RUN_WITH_PRODUCER : CONSUMER_RUN}await pool.close();
console.log("RESULT " + JSON.stringify(${CONSUMER_RESULT}));
`,
  };
}

/**
 * A browser consumer's `producer.js`, importing filch as `specifier`: a module Web Worker that waits for the
 * pool's handle in its first message, runs {@link PRODUCER_WORK} and posts the summary back (or the error
 * it met, so that the page fails with it rather than waiting).
 */
export function consumerWebProducer(specifier: string): string {
  return `import { openProducer } from "${specifier}";
self.onmessage = async (event) => {
  try {
    if (event.data.doomed !== undefined) {
      // Opens a producer, starts a task, says so, and is terminated by the page while the task runs.
      openProducer(event.data.doomed).run("spin", 300).catch(() => {});
      self.postMessage("running");
      return;
    }
    const handle = event.data;
${PRODUCER_WORK.replace(/^(?=.)/gm, "    ")}    self.postMessage(summary);
  } catch (error) {
    self.postMessage({ error: (error && error.name) + ": " + (error && error.message) });
  }
};
`;
}

/**
 * The consumer's task module as JavaScript: the TypeScript one of {@link consumerFiles} without its type
 * annotations (one source for both).
 */
export function consumerJsTasks(specifier: string): string {
  const js = consumerFiles(specifier)["tasks.ts"].replace(/^type Tasks = .*\n/m, "").replaceAll("<Tasks>", "")
    .replaceAll(": { label: string } | undefined", "").replaceAll(": void", "").replaceAll(": number[]", "").replaceAll(
      ": number",
      "",
    )
    .replaceAll(": Uint8Array", "").replaceAll(": Int32Array", "").replaceAll(": string", "");
  if (/\w: \w/.test(js)) throw new Error("Cannot make the JavaScript task module as an annotation is left in it");
  return js;
}

/**
 * Asserts that a consumer's `main.ts` ran: exit 0, every task's result right, fib(30), a piece stolen and
 * counted, and every check of {@link CONSUMER_FEATURES}.
 */
export function assertConsumerRan(what: string, run: { code: number; output: string }): void {
  const line = run.output.split("\n").find((l) => l.startsWith("RESULT "));
  assert(run.code === 0 && line !== undefined, `${what} failed (exit ${run.code}):\n${run.output.slice(-3000)}`);
  const result = JSON.parse(line.slice("RESULT ".length)) as {
    ok: boolean;
    fib: number;
    waited: string;
    steals: number;
    features: string;
  };
  assert(result.ok, `${what}: 10k task results`);
  assertEquals(
    result.features,
    "",
    `${what}: the checks of abort, map, runMany, broadcast, poolHandle, metrics, force, move, priority, progress, events, graph, producer and its stats, elastic (growth, setup data, recycling, retirement) that failed`,
  );
  assertEquals(result.fib, 832040, `${what}: fib(30)`);
  assert(result.waited !== "timed-out", `${what}: a join's b was never stolen while its a waited: ${line}`);
  assert(result.steals > 0, `${what}: no steals counted after a stolen piece: ${line}`);
}
