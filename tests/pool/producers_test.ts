/**
 * Producers in other threads (issue 29): a pool created in one thread, fed by producers opened from its
 * handle in others. Each scenario runs real threads (lib/runtime/thread.ts: node:worker_threads on Node
 * and Deno, the web Worker on Bun), each opening a producer from a handle posted to it with its port
 * (tests/fixtures/producer_thread.ts), and checks from the reports that every promise settled exactly
 * once, with its own result or the error the pool's state gives it, and, for a pool left open, that every
 * record, block and slab came back (tests/pool/_accounting.ts).
 *
 * The stress test the project was specified with is 1,000,000 tasks from 8 threads; here it is 8 × 5,000
 * (`bench/producers.ts` runs it whole and measures it).
 */
import type { Pool } from "../../lib/pool.ts";
import { startThread } from "../../lib/runtime/thread.ts";
import { slotComesBack, withTerminatedPool } from "./_pool.ts";
import { assertIdleAccounting } from "./_accounting.ts";
import type { Report, Scenario } from "../fixtures/producer_thread.ts";
import type * as tasks from "../fixtures/tasks.ts";
import { assert, assertEquals, assertThrows, test, within } from "../_test.ts";

const moduleUrl = new URL("../fixtures/tasks.ts", import.meta.url);
const threadUrl = new URL("../fixtures/producer_thread.ts", import.meta.url);

/** Starts a producer thread on `pool` with `scenario`; resolves with its report, then ends the thread. */
function producerThread(
  pool: Pool<typeof tasks>,
  scenario: Scenario,
  name = "producer",
  opened?: Int32Array,
  ms = 60_000,
): Promise<Report> {
  const thread = startThread(threadUrl, name);
  const handle = pool.handle();
  const report = new Promise<Report>((resolve, reject) => {
    thread.onMessage((message) => resolve(message as Report));
    thread.onError((error) => reject(error));
  });
  thread.post({ handle, scenario, opened }, handle.transfer as unknown as ArrayBuffer[]);
  return within(report, ms, `producer thread '${name}' (${scenario.kind})`).then(
    (r) => {
      thread.terminate();
      if (r.error !== undefined) throw new Error(`the producer thread failed: ${r.error}`);
      return r;
    },
    (error) => {
      thread.terminate();
      throw error;
    },
  );
}

/** Resolves once `count` producers said they are open (word 0 of `opened`). */
async function allOpen(opened: Int32Array, count: number): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Atomics.load(opened, 0) < count) {
    if (Date.now() > deadline) throw new Error(`hang: ${Atomics.load(opened, 0)} of ${count} producers opened in 30 s`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Every task of every report settled once; returns the totals. */
function totals(reports: Report[]): { resolved: number; rejected: Record<string, number>; wrong: number } {
  const rejected: Record<string, number> = {};
  let resolved = 0;
  let wrong = 0;
  for (const r of reports) {
    assertEquals(r.settledTwice, 0, "promises settled twice");
    resolved += r.resolved;
    wrong += r.wrong;
    for (const [name, count] of Object.entries(r.rejected)) rejected[name] = (rejected[name] ?? 0) + count;
  }
  return { resolved, rejected, wrong };
}

test("8 producer threads, 5,000 tasks each: every task settles once with its own result", async () => {
  await withTerminatedPool<typeof tasks>(moduleUrl, { workers: 2 }, async (pool) => {
    const reports = await Promise.all(
      Array.from(
        { length: 8 },
        (_, p) => producerThread(pool, { kind: "sums", n: 5_000, base: p * 1_000_000 }, `p${p}`),
      ),
    );
    const { resolved, rejected, wrong } = totals(reports);
    assertEquals(resolved, 40_000, "tasks resolved");
    assertEquals(rejected, {}, "tasks rejected");
    assertEquals(wrong, 0, "results that were not their own");
    // The owner's own producer is unaffected, and every slot was given back.
    assertEquals(await pool.run("add", 1, 2), 3, "the owner's own task");
  });
}, 180_000);

test(
  "a producer whose first task finds every record taken is woken when another producer frees one",
  async () => {
    await withTerminatedPool<typeof tasks>(moduleUrl, { workers: 2, taskCapacity: 16 }, async (pool) => {
      // The owner's tasks hold every record (two on the workers, the rest queued) until the gate opens.
      const gate = new Int32Array(new SharedArrayBuffer(4));
      const held = Array.from({ length: 16 }, () => pool.run("gate", gate));
      const opened = new Int32Array(new SharedArrayBuffer(4));
      const report = producerThread(pool, { kind: "sums", n: 10, base: 0 }, "late", opened, 20_000);
      await allOpen(opened, 1);
      // Its 10 tasks went to its backlog (it submits them in the turn it counts itself open).
      await new Promise((resolve) => setTimeout(resolve, 100));
      Atomics.store(gate, 0, 1);
      Atomics.notify(gate, 0);
      assertEquals(await within(Promise.all(held), 20_000, "the owner's gated tasks"), Array(16).fill(1));
      // Its first arm came before its first task went to the backlog: unless it counts itself as waiting
      // for a record then, nobody wakes it when the owner's records free (it has no task in flight).
      const { resolved, wrong } = totals([await report]);
      assertEquals([resolved, wrong], [10, 0], "its tasks resolved with their own results");
    });
  },
  60_000,
);

test(
  "maxQueue bounds the pool as a whole: a producer finds it full of the owner's tasks, and waits for room",
  async () => {
    await withTerminatedPool<typeof tasks>(moduleUrl, { workers: 1, maxQueue: 2 }, async (pool) => {
      // workers + maxQueue = 3 places, all taken by the owner's tasks until the gate opens.
      const gate = new Int32Array(new SharedArrayBuffer(4));
      const held = Array.from({ length: 3 }, () => pool.run("gate", gate));
      // Word 1: the thread asked for its first run (refused at the call while the pool is full). The gate
      // opens only then: before, it opened after 100 ms, which a slow thread could outlast.
      const opened = new Int32Array(new SharedArrayBuffer(8));
      const report = producerThread(pool, { kind: "room", n: 20 }, "bounded", opened, 20_000);
      await allOpen(opened, 1);
      const deadline = Date.now() + 30_000;
      while (Atomics.load(opened, 1) === 0) {
        if (Date.now() > deadline) throw new Error("hang: the producer thread made no run in 30 s");
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      Atomics.store(gate, 0, 1);
      Atomics.notify(gate, 0);
      await within(Promise.all(held), 20_000, "the owner's gated tasks");
      // It has nothing of its own pending while it waits: the owner's settles must wake it.
      const r = await report;
      assertEquals(r.notes.refused, "QueueFullError", "a run while the owner's tasks fill the pool");
      const { resolved, wrong } = totals([r]);
      assertEquals([resolved, wrong], [20, 0], "its tasks, each after waitForRoom()");
    });
  },
  60_000,
);

test(
  "a producer flooding a bounded pool cannot take every place that frees: one waiting for room gets turns",
  async () => {
    await withTerminatedPool<typeof tasks>(moduleUrl, { workers: 1, maxQueue: 3 }, async (pool) => {
      // The owner submits 1,500 tasks of 1 ms, each as soon as there is room: about 2 s of work. Its
      // submissions follow its own settles in the same turn; the producer thread's follow a wake across
      // threads. Without turns the owner takes every place that frees, and the thread's 20 tasks wait
      // until the flood ends.
      let floodEnd = 0;
      const otherErrors: unknown[] = [];
      const flood = (async () => {
        for (let i = 0; i < 1_500; i++) {
          await pool.waitForRoom();
          // Room is checked, not reserved: the other thread may take the place first (QueueFullError).
          pool.run("spin", 1).catch((error) => {
            if ((error as Error).name !== "QueueFullError") otherErrors.push(error);
          });
        }
        await pool.drain();
        floodEnd = Date.now();
      })();
      await new Promise((resolve) => setTimeout(resolve, 200));
      const start = Date.now();
      const r = await producerThread(pool, { kind: "room", n: 20 }, "waiting", undefined, 60_000);
      await within(flood, 60_000, "the owner's flood");
      const { resolved } = totals([r]);
      assertEquals(
        resolved,
        20,
        `the waiting producer's tasks (rejected: ${JSON.stringify(r.rejected)}; ` +
          `refused after waitForRoom and resubmitted: ${r.notes.refusedAfterRoom})`,
      );
      assertEquals(otherErrors, [], "the owner's tasks failed otherwise than QueueFullError");
      const endAt = r.notes.endAt as number;
      assert(
        floodEnd - start > 1_000,
        `the flood ended ${floodEnd - start} ms after the thread started: too soon to tell`,
      );
      assert(
        endAt < floodEnd - 500,
        `the waiting producer's tasks ended ${floodEnd - endAt} ms before the flood did: no turns`,
      );
    });
  },
  120_000,
);

test(
  "turns for room: while a producer waits for room, the owner past its share of a bounded pool is refused",
  async () => {
    // workers + maxQueue = 4 places, two producers open: a share of 2 each while one of them waits.
    // Checked at a point the design defines, not by timing: the thread is counted as waiting and held
    // (it cannot take the place itself), one of the owner's 4 tasks has settled, and the owner, with 3
    // pending, asks for a fourth. The pool as a whole has room; the owner's share does not. (The flood
    // test above misses the bug: the waiting thread wins enough races for a place to finish its tasks.)
    await withTerminatedPool<typeof tasks>(moduleUrl, { workers: 1, maxQueue: 3 }, async (pool) => {
      const gates = Array.from({ length: 4 }, () => new Int32Array(new SharedArrayBuffer(4)));
      const held = gates.map((gate) => pool.run("gate", gate));
      const flag = new Int32Array(new SharedArrayBuffer(4));
      const report = producerThread(pool, { kind: "turns", flag }, "turns", undefined, 30_000);
      const deadline = Date.now() + 30_000;
      while (Atomics.load(flag, 0) !== 1) {
        if (Date.now() > deadline) throw new Error("hang: the producer thread did not wait for room in 30 s");
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      // The worker runs the first gated task: let it settle.
      Atomics.store(gates[0], 0, 1);
      Atomics.notify(gates[0], 0);
      await within(held[0], 20_000, "the first gated task");
      // Refused at the call (QueueFullError), or queued behind the gated tasks: awaited once they are let go.
      const fourth = pool.run("add", 1, 2).then(() => "resolved", (e) => (e as Error).name);
      Atomics.store(flag, 0, 2);
      Atomics.notify(flag, 0);
      for (const gate of gates.slice(1)) {
        Atomics.store(gate, 0, 1);
        Atomics.notify(gate, 0);
      }
      await within(Promise.all(held), 20_000, "the gated tasks");
      const r = await report;
      assertEquals(
        await within(fourth, 20_000, "the owner's fourth run"),
        "QueueFullError",
        "the owner's run past its share while the thread waits for room",
      );
      assertEquals(r.notes.got, 42, "the waiting thread's run, once let go");
    });
  },
  60_000,
);

test(
  "a producer thread has the submitting API: run, runMany, map, with, spawn, drain, waitForRoom, close",
  async () => {
    await withTerminatedPool<typeof tasks>(moduleUrl, { workers: 2 }, async (pool) => {
      const { notes } = await producerThread(pool, { kind: "api" });
      assertEquals(notes.run, 3, "run");
      assertEquals(notes.runMany, [2, 4, 6], "runMany");
      assertEquals(notes.map, [1, 4, 9, 16], "map");
      assertEquals(notes.high, 5, "with({ priority, timeout })");
      assertEquals(notes.timeout, "TimeoutError", "with({ timeout }) on a long task");
      assertEquals(notes.aborted, "stop", "with({ signal }) aborted");
      assertEquals(notes.failed, "TypeError: boom", "a task's error, its class kept");
      assertEquals(notes.shared, 10, "a SharedArrayBuffer argument, shared through the owner");
      assertEquals(notes.big, 100_000, "a large result, through shared memory");
      assertEquals(notes.spawnedCompleted, 5, "spawn then drain");
      assertEquals(notes.tasks, true, "the task names");
      assertEquals(notes.afterClose, "PoolClosedError", "a run after the producer closed");
    });
  },
  120_000,
);

test(
  "close() while 8 producers submit: their submitted tasks settle, their new ones reject with PoolClosedError",
  async () => {
    await withTerminatedPool<typeof tasks>(moduleUrl, { workers: 2 }, async (pool) => {
      const opened = new Int32Array(new SharedArrayBuffer(4));
      const reports = Promise.all(
        Array.from(
          { length: 8 },
          (_, p) => producerThread(pool, { kind: "flood", wave: 50, spinMs: 0 }, `p${p}`, opened),
        ),
      );
      await allOpen(opened, 8);
      await new Promise((resolve) => setTimeout(resolve, 100));
      await within(pool.close(), 30_000, "close");
      const all = await reports;
      const { resolved, rejected } = totals(all);
      assert(resolved > 0, "some tasks ran before close");
      assertEquals(
        Object.keys(rejected).filter((name) => name !== "PoolClosedError"),
        [],
        "rejections other than PoolClosedError",
      );
      for (const r of all) {
        assertEquals(r.notes.lateNames, Array(10).fill("PoolClosedError"), "runs after the pool closed");
        const stats = r.notes.stats as { pending: number };
        assertEquals(stats.pending, 0, "a producer's tasks pending after close");
      }
    }, false); // closed, not at rest: nothing to drain
  },
  180_000,
);

test(
  "terminate() while 8 producers submit: their unsettled tasks reject with PoolTerminatedError, each once",
  async () => {
    await withTerminatedPool<typeof tasks>(moduleUrl, { workers: 2 }, async (pool) => {
      const opened = new Int32Array(new SharedArrayBuffer(4));
      const reports = Promise.all(
        Array.from(
          { length: 8 },
          (_, p) => producerThread(pool, { kind: "flood", wave: 200, spinMs: 1 }, `p${p}`, opened),
        ),
      );
      await allOpen(opened, 8);
      await new Promise((resolve) => setTimeout(resolve, 100));
      await within(pool.terminate(), 30_000, "terminate");
      const all = await reports;
      const { rejected } = totals(all);
      assert((rejected.PoolTerminatedError ?? 0) > 0, "tasks rejected by the terminate");
      assertEquals(
        Object.keys(rejected).filter((name) => name !== "PoolTerminatedError" && name !== "PoolClosedError"),
        [],
        "rejections other than the pool's state",
      );
      for (const r of all) assertEquals((r.notes.stats as { pending: number }).pending, 0, "tasks left pending");
    }, false);
  },
  180_000,
);

test("a worker's death fails a producer's task on it with WorkerCrashedError; the producer goes on", async () => {
  await withTerminatedPool<typeof tasks>(moduleUrl, { workers: 2 }, async (pool) => {
    const { notes } = await producerThread(pool, { kind: "crash" });
    assertEquals(notes.crash, "WorkerCrashedError", "the task pending on the dead worker");
    assertEquals(notes.after, 42, "the next task");
    assertEquals(pool.stats().workerCrashes, 1, "crashes counted by the owner");
  });
}, 120_000);

test(
  "a producer flooding the pool does not starve another: the light one finishes while the heavy one runs",
  async () => {
    await withTerminatedPool<typeof tasks>(moduleUrl, { workers: 2, taskCapacity: 64 }, async (pool) => {
      // 6,000 tasks of 1 ms keep 64 records busy for about 3 s. The light producer's 40 tasks wait for a
      // record; unless records are shared fairly, the heavy producer takes each one freed for its own
      // backlog, and the light one's tasks run only once that backlog is gone, as the heavy one ends.
      const opened = new Int32Array(new SharedArrayBuffer(4));
      const heavy = producerThread(pool, { kind: "timed", n: 6_000, spinMs: 1 }, "heavy", opened);
      await allOpen(opened, 1);
      await new Promise((resolve) => setTimeout(resolve, 300));
      const light = await producerThread(pool, { kind: "timed", n: 40, spinMs: 1 }, "light");
      const heavyReport = await heavy;
      totals([light, heavyReport]);
      const [lightStart, lightEnd, heavyEnd] = [
        light.notes.startAt,
        light.notes.endAt,
        heavyReport.notes.endAt,
      ] as number[];
      assert(
        heavyEnd - lightStart > 1_000,
        `the light producer started ${
          heavyEnd - lightStart
        } ms before the heavy one ended: too late to tell (a machine far too slow)`,
      );
      assert(
        lightEnd < heavyEnd - 500,
        `the light producer's tasks ended ${heavyEnd - lightEnd} ms before the heavy one's (it started ${
          heavyEnd - lightStart
        } ms before): starved behind the heavy one's backlog`,
      );
    });
  },
  180_000,
);

test("a producer's slot comes back at close: more producers than slots open one after another", async () => {
  await withTerminatedPool<typeof tasks>(moduleUrl, { workers: 1, producers: 2 }, async (pool) => {
    for (let p = 0; p < 6; p++) {
      const { resolved } = totals([await producerThread(pool, { kind: "sums", n: 200, base: p }, `p${p}`)]);
      assertEquals(resolved, 200, `producer ${p}'s tasks`);
    }
  });
}, 120_000);

test(
  "a handle is refused by name: not a handle, opened twice, no slot free, a pool not open, producers: 0",
  async () => {
    await withTerminatedPool<typeof tasks>(moduleUrl, { workers: 1, producers: 1 }, async (pool) => {
      const twice = await producerThread(pool, { kind: "open", twice: true });
      assertEquals(twice.notes.name, "TypeError", "a handle opened twice");
      assert(String(twice.notes.message).includes("opened already"), String(twice.notes.message));
      // The one slot is held by a handle (the owner claims it when it makes one) until its producer closes.
      const held = pool.handle();
      assertThrows(() => pool.handle(), RangeError, "producer slots are taken");
      held.port.close(); // never opened: its link closes, and the owner takes the slot back
      await slotComesBack(pool, "the slot of a handle whose port was closed", 10_000);
    });
    const { openProducer } = await import("../../mod.ts");
    assertThrows(() => openProducer({} as never), TypeError, "must be a pool handle");
    await withTerminatedPool<typeof tasks>(moduleUrl, { workers: 1, producers: 0 }, (pool) => {
      assertThrows(() => pool.handle(), RangeError, "no producer slots");
    });
    await withTerminatedPool<typeof tasks>(moduleUrl, { workers: 1 }, async (pool) => {
      await pool.close();
      assertThrows(() => pool.handle(), Error, "pool is closed");
    }, false);
  },
  120_000,
);

test("producers killed at random moments strand nothing: every record, block and slab comes back", async () => {
  await withTerminatedPool<typeof tasks>(moduleUrl, { workers: 2, taskCapacity: 256 }, async (pool) => {
    const deaths = 24;
    for (let k = 0; k < deaths; k++) {
      const thread = startThread(threadUrl, `doomed-${k}`);
      const opened = new Int32Array(new SharedArrayBuffer(4));
      const handle = pool.handle();
      thread.onError(() => {});
      // Large arguments half the time: overflow blocks and slabs are held too when the thread dies.
      const scenario: Scenario = { kind: "flood", wave: 100, spinMs: 0, bytes: k % 2 === 0 ? 0 : 4_000 };
      thread.post({ handle, scenario, opened }, handle.transfer as unknown as ArrayBuffer[]);
      await allOpen(opened, 1);
      // Somewhere in its submissions, its completions or its settling.
      await new Promise((resolve) => setTimeout(resolve, 1 + ((k * 37) % 60)));
      thread.terminate();
    }
    const owner = (pool as unknown as { owner: { producerDeaths: { settled(): Promise<void>; count: number } } })
      .owner.producerDeaths;
    // The last thread's end reaches the owner as an event: wait for it, then for every cleanup.
    await within(
      (async () => {
        while (owner.count < deaths) await new Promise((resolve) => setTimeout(resolve, 5));
        await owner.settled();
      })(),
      30_000,
      "the deaths noticed and their cleanups",
    );
    assertEquals(owner.count, deaths, "deaths noticed");
    // A thread killed inside one of its steps may fall between a generation's bump and its count: the
    // counts are left out; every record, block and slab must be free.
    await assertIdleAccounting(pool, "after the deaths", { counts: false });
    // Capacity as before: the pool runs a full table of tasks, and a new producer works.
    const full = await within(
      Promise.all(Array.from({ length: 256 }, (_, i) => pool.run("add", i, 1))),
      30_000,
      "a full table of tasks",
    );
    assertEquals(full.length, 256, "tasks of a full table");
    const { resolved } = totals([await producerThread(pool, { kind: "sums", n: 500, base: 0 })]);
    assertEquals(resolved, 500, "a new producer's tasks");
  });
}, 180_000);
