/**
 * A pool handle taken inside a pool task (issue 29): a task opens a producer on the pool that runs it
 * (`poolHandle()`, lib/producer/pool_handle.ts) and submits top-level tasks through it, whether it awaits
 * them or returns first; the handle's slot comes back when that producer closes.
 */
import { poolHandle } from "../../mod.ts";
import { slotComesBack, withTerminatedPool } from "./_pool.ts";
import type * as tasks from "../fixtures/inner_producer_tasks.ts";
import { assertEquals, test, within } from "../_test.ts";

const moduleUrl = new URL("../fixtures/inner_producer_tasks.ts", import.meta.url);

test("a task opens a producer on its own pool, awaits 200 top-level tasks through it, closes it", async () => {
  await withTerminatedPool<typeof tasks>(moduleUrl, { workers: 2, producers: 1 }, async (pool) => {
    const sum = await within(pool.run("fanOut", 200), 30_000, "fanOut");
    assertEquals(sum, (199 * 200) / 2 + 200, "the sum of its tasks' results");
    await slotComesBack(pool, "the slot of the task's producer");
  });
}, 60_000);

test(
  "a task's producer reads its completions after the task returned: its spawns run, its close ends, its slot comes back",
  async () => {
    // One worker: after the task returns, it runs the spawns and then idles. Unless the producer it left
    // holds its event loop, it sleeps blocking it, the producer never reads its completions, its close
    // never ends, and its slot is never given back.
    await withTerminatedPool<typeof tasks>(moduleUrl, { workers: 1, producers: 1 }, async (pool) => {
      const view = new Int32Array(new SharedArrayBuffer(4));
      assertEquals(await within(pool.run("fireAndForget", 100, view), 30_000, "fireAndForget"), "returned");
      await slotComesBack(pool, "the slot of the producer the returned task left closing");
      assertEquals(Atomics.load(view, 0), 100, "its spawned tasks ran");
    });
  },
  60_000,
);

test("poolHandle() is refused by name: outside a pool worker, and with every producer slot taken", async () => {
  const outside = await poolHandle().then(() => "resolved", (error) => (error as Error).name);
  assertEquals(outside, "TypeError", "outside a pool worker");
  await withTerminatedPool<typeof tasks>(moduleUrl, { workers: 1, producers: 0 }, async (pool) => {
    assertEquals(await pool.run("handleError"), "RangeError", "a pool with no producer slots");
  });
  await withTerminatedPool<typeof tasks>(moduleUrl, { workers: 1, producers: 1 }, async (pool) => {
    const held = pool.handle();
    assertEquals(await pool.run("handleError"), "RangeError", "every slot taken");
    held.port.close();
    await slotComesBack(pool, "the held slot");
    assertEquals(await pool.run("handleError"), "none", "a free slot");
  });
}, 60_000);
