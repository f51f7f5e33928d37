/**
 * Broadcast: a task run once on every worker, resolving with the results by worker index; busy and sleeping
 * workers both take their part; every part settles exactly once, through errors, crashes and terminate.
 */
import { Pool } from "../../lib/pool.ts";
import { PoolClosedError } from "../../lib/errors.ts";
import type * as tasks from "../fixtures/cancel_tasks.ts";
import { assertIdleAccounting } from "./_accounting.ts";
import { assert, assertEquals, assertRejects, test, within } from "../_test.ts";

const moduleUrl = new URL("../fixtures/cancel_tasks.ts", import.meta.url);

test("broadcast runs once on every worker and resolves with the results by worker index", async () => {
  const pool = await Pool.create<typeof tasks>(moduleUrl, { workers: 3 });
  try {
    const results = await within(pool.broadcast("whoAmI", "hello"), 10_000, "broadcast");
    assertEquals(results, [0, 1, 2].map((worker) => ({ worker, tag: "hello" })));
    // Sleeping workers (idle long past their doze) take their part too.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const again = await within(pool.broadcast("whoAmI", "again"), 10_000, "a broadcast to sleepers");
    assertEquals(again.map((r) => r.worker), [0, 1, 2]);
    assertEquals(pool.stats().pending, 0);
    // Parts travel by message: they hold no record, and none is left in use.
    await within(pool.drain(), 10_000, "drain");
    await assertIdleAccounting(pool, "broadcasts to awake and sleeping workers");
  } finally {
    await within(pool.close(), 10_000, "close");
  }
});

test("a busy worker takes its part after its task; tasks and broadcasts interleave and all settle", async () => {
  const pool = await Pool.create<typeof tasks>(moduleUrl, { workers: 2 });
  try {
    const probe = new Int32Array(new SharedArrayBuffer(16));
    const blocked = pool.run("blocker", probe, 30_000);
    while (Atomics.load(probe, 0) === 0) await new Promise((resolve) => setTimeout(resolve, 2));
    let done = false;
    const parts = pool.broadcast("whoAmI", "late").then((r) => ((done = true), r));
    await new Promise((resolve) => setTimeout(resolve, 100));
    assertEquals(done, false, "not before the blocked worker's task ends");
    Atomics.store(probe, 3, 1);
    Atomics.notify(probe, 3);
    assertEquals(await within(blocked, 10_000, "the blocker"), "ok");
    assertEquals((await within(parts, 10_000, "the broadcast")).map((r) => r.worker), [0, 1]);
    const seen = new Int32Array(new SharedArrayBuffer(16));
    const mixed = await within(
      Promise.all([
        ...Array.from({ length: 200 }, () => pool.run("counted", seen)),
        pool.broadcast("whoAmI", "x"),
        pool.broadcast("whoAmI", "y"),
      ]),
      20_000,
      "tasks and broadcasts",
    );
    assertEquals(mixed.length, 202);
    assertEquals(Atomics.load(seen, 1), 200);
    await within(pool.drain(), 10_000, "drain");
    await assertIdleAccounting(pool, "tasks and broadcasts interleaved");
  } finally {
    await within(pool.close(), 10_000, "close");
  }
});

test("a part that throws rejects the broadcast; a part whose worker dies fails with WorkerCrashedError", async () => {
  const pool = await Pool.create<typeof tasks>(moduleUrl, { workers: 2 });
  try {
    const error = await within(assertRejects(pool.broadcast("failOnWorker", 1)), 10_000, "failOnWorker");
    assertEquals((error as Error).message, "worker 1 refuses");
    const crash = await within(assertRejects(pool.broadcast("exitOnWorker", 0)), 20_000, "exitOnWorker");
    assertEquals((crash as Error).name, "WorkerCrashedError", String(crash));
    await within(pool.drain(), 10_000, "drain");
    assertEquals(pool.stats().pending, 0, "every part settled");
    // The replacement takes later broadcasts.
    const after = await within(pool.broadcast("whoAmI", "after"), 20_000, "after the crash");
    assertEquals(after.map((r) => r.worker), [0, 1]);
    assertEquals(pool.stats().workerCrashes, 1);
    await within(pool.drain(), 10_000, "drain");
    await assertIdleAccounting(pool, "broadcast parts that throw and crash");
  } finally {
    await within(pool.close(), 10_000, "close");
  }
});

test("terminate() rejects the parts in flight with PoolTerminatedError; then broadcasts are refused with it too", async () => {
  const pool = await Pool.create<typeof tasks>(moduleUrl, { workers: 2 });
  const probe = new Int32Array(new SharedArrayBuffer(16));
  const blocked = pool.run("blocker", probe, 30_000).catch((e) => e);
  while (Atomics.load(probe, 0) === 0) await new Promise((resolve) => setTimeout(resolve, 2));
  const parts = pool.broadcast("whoAmI", "never").catch((e) => e);
  await within(pool.terminate(), 10_000, "terminate");
  const error = await within(parts, 10_000, "the broadcast");
  assertEquals((error as Error).name, "PoolTerminatedError", String(error));
  await within(blocked, 10_000, "the blocker");
  const refused = await within(assertRejects(pool.broadcast("whoAmI", "closed")), 5_000, "refused");
  assertEquals((refused as Error).name, "PoolTerminatedError", "refused after terminate(): the pool's state by name");
  assert(refused instanceof PoolClosedError, "a PoolClosedError too");
  assert(pool.stats().pending === 0, "nothing pending");
});
