/**
 * Capacity after many producer deaths (issue 29): producer threads are killed, one after another, at
 * moments spread over their submissions, completions and settling; then the pool must hold exactly what
 * it held before: every record, block and slab free (the census of lib/record/census.ts), every producer
 * slot free (a new handle for each of them), and a full table of tasks run at once.
 *
 * Not a speed measurement and not part of `npm test` (1,000 thread starts take minutes): the counterpart
 * of tests/pool/producers_test.ts's "producers killed at random moments", at the scale.
 *
 * Usage: `node bench/experiments/producer_deaths.ts [--deaths N]` (also `deno run -A`, `bun`). Exits 1 if anything is
 * stranded.
 */
import { Pool } from "../../mod.ts";
import { startThread } from "../../lib/runtime/thread.ts";
import { idleAccountingErrors, recordCensus } from "../../lib/record/census.ts";
import type { TaskTable } from "../../lib/record/task.ts";
import { withTimeout } from "../_deadline.ts";

const args = (globalThis as { process?: { argv: string[] } }).process?.argv ?? [];
const at = args.indexOf("--deaths");
const deaths = at >= 0 ? Number(args[at + 1]) : 1_000;
if (!Number.isInteger(deaths) || deaths < 1) throw new RangeError(`--deaths must be a positive integer: ${deaths}`);

const taskCapacity = 256;
const pool = await Pool.create(new URL("../../tests/fixtures/tasks.ts", import.meta.url), {
  workers: 2,
  taskCapacity,
});
const internals = pool as unknown as {
  producer: { table: TaskTable };
  owner: { producerDeaths: { count: number; inSteps: number; cancelled: number; settled(): Promise<void> } };
};
const threadUrl = new URL("../../tests/fixtures/producer_thread.ts", import.meta.url);
const before = recordCensus(internals.producer.table);
const started = performance.now();
for (let k = 0; k < deaths; k++) {
  const thread = startThread(threadUrl, `doomed-${k}`);
  thread.onError(() => {});
  const opened = new Int32Array(new SharedArrayBuffer(4));
  const handle = pool.handle();
  const scenario = { kind: "flood", wave: 100, spinMs: 0, bytes: k % 3 === 0 ? 0 : k % 3 === 1 ? 4_000 : 40_000 };
  thread.post({ handle, scenario, opened }, handle.transfer as unknown as ArrayBuffer[]);
  await withTimeout(
    (async () => {
      while (Atomics.load(opened, 0) < 1) await new Promise((resolve) => setTimeout(resolve, 2));
    })(),
    30_000,
    `producer ${k} did not open in 30 s`,
  );
  await new Promise((resolve) => setTimeout(resolve, 1 + ((k * 37) % 60)));
  thread.terminate();
  if ((k + 1) % 100 === 0) {
    console.log(`${k + 1} producers killed (${((performance.now() - started) / 1000).toFixed(0)} s)`);
  }
}
const producerDeaths = internals.owner.producerDeaths;
await withTimeout(
  (async () => {
    while (producerDeaths.count < deaths) await new Promise((resolve) => setTimeout(resolve, 5));
    await producerDeaths.settled();
  })(),
  60_000,
  "the deaths were not all noticed and taken care of in 60 s",
);
await pool.drain();
// At rest first, as the tests' oracle waits (tests/pool/_accounting.ts): a worker emptying its cache before it
// sleeps marks a record FREE just before its push.
let after = recordCensus(internals.producer.table);
for (let tries = 0; tries < 2_000 && (after.freeList !== after.free || Object.keys(after.inUse).length > 0); tries++) {
  await new Promise((resolve) => setTimeout(resolve, 5));
  after = recordCensus(internals.producer.table);
}
// The oracle of the tests (lib/record/census.ts): every record free or cached, every block and slab free;
// without the allocation counts, which a thread killed inside a step can leave one apart.
const problems: string[] = idleAccountingErrors(after, false);
const cached = Object.values(after.cached).reduce((a, b) => a + b, 0);
if (after.free + cached !== before.free + Object.values(before.cached).reduce((a, b) => a + b, 0)) {
  problems.push(`free or cached records ${after.free + cached}, before ${taskCapacity}`);
}
// Every slot free again: as many handles as the pool has slots.
const handles = Array.from({ length: 8 }, () => pool.handle());
for (const handle of handles) handle.port.close();
const full = await withTimeout(
  Promise.all(Array.from({ length: taskCapacity }, (_, i) => pool.run("add", i, 1))),
  60_000,
  "a full table of tasks did not run in 60 s",
);
if (full.some((v, i) => v !== i + 1)) problems.push("a full table of tasks gave wrong results");
console.log(
  `${producerDeaths.count} producer deaths (${producerDeaths.inSteps} inside a pool step, ${producerDeaths.cancelled} queued tasks cancelled) in ${
    ((performance.now() - started) / 1000).toFixed(0)
  } s; records free or cached ${after.free + cached} of ${taskCapacity}; slots free: 8 of 8; a full table ran`,
);
await pool.terminate();
if (problems.length > 0) {
  console.log(`STRANDED: ${problems.join("; ")}`);
  (globalThis as { process?: { exit(code: number): void } }).process?.exit(1);
}
