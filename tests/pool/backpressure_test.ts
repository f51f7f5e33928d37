/**
 * Backpressure and streaming: `maxQueue` bounds the tasks pending (`QueueFullError` beyond it,
 * `waitForRoom()` to wait), and `pool.map` streams an iterable of inputs through a bounded window, in
 * order or as tasks finish, ending cleanly (tasks in flight aborted, inputs closed) on break, error or
 * abort.
 */
import { Pool, type PoolOptions } from "../../lib/pool.ts";
import { withTerminatedPool } from "./_pool.ts";
import { assertIdleAccounting } from "./_accounting.ts";
import type * as tasks from "../fixtures/stream_tasks.ts";
import { assert, assertEquals, assertRejects, assertThrows, collect, test, within } from "../_test.ts";

const moduleUrl = new URL("../fixtures/stream_tasks.ts", import.meta.url);

function withPool(options: PoolOptions, body: (pool: Pool<typeof tasks>) => void | Promise<void>): Promise<void> {
  return withTerminatedPool(moduleUrl, options, body);
}

function probe(): Int32Array {
  return new Int32Array(new SharedArrayBuffer(32));
}

test("maxQueue: a submission beyond workers + maxQueue pending rejects with QueueFullError; waitForRoom waits for room", async () => {
  const reported: unknown[] = [];
  await withPool({ workers: 1, maxQueue: 2, onError: (e) => reported.push(e) }, async (pool) => {
    const p = probe();
    const held = [0, 1, 2].map(() => pool.run("hold", { probe: p, ms: 30_000 }));
    const error = await within(assertRejects(pool.run("square", 3)), 5_000, "the fourth task");
    assertEquals((error as Error).name, "QueueFullError", String(error));
    assert((error as Error).message.includes("3 tasks pending, at most 3"), (error as Error).message);
    pool.spawn("square", 4);
    let roomed = false;
    const room = pool.waitForRoom().then(() => (roomed = true));
    await new Promise((resolve) => setTimeout(resolve, 50));
    assertEquals(roomed, false, "no room while three tasks are pending");
    Atomics.store(p, 3, 1);
    Atomics.notify(p, 3);
    await within(Promise.all(held), 10_000, "the held tasks");
    await within(room, 5_000, "room");
    assertEquals(await within(pool.run("square", 5), 5_000, "a task with room"), 25);
    await new Promise((resolve) => setTimeout(resolve, 0));
    assertEquals(reported.map((e) => (e as Error).name), ["QueueFullError"], "the full spawn went to onError");
  });
});

test("maxQueue must be an integer from 1 or 'auto': other values are named errors", async () => {
  for (const bad of [0, -1, 1.5, "many", null]) {
    const error = await within(
      assertRejects(Pool.create(moduleUrl, { workers: 1, maxQueue: bad as never })),
      10_000,
      "create",
    );
    assert(error instanceof RangeError || error instanceof TypeError, String(error));
    assert((error as Error).message.includes("'maxQueue' must be an integer from 1"), (error as Error).message);
  }
  await withPool({ workers: 2, maxQueue: "auto" }, async (pool) => {
    // auto: workers squared waiting, beyond one running per worker: 2 + 4 pending at most.
    const p = probe();
    const held = Array.from({ length: 6 }, () => pool.run("hold", { probe: p, ms: 30_000 }));
    const error = await within(assertRejects(pool.run("square", 1)), 5_000, "the seventh task");
    assertEquals((error as Error).name, "QueueFullError");
    Atomics.store(p, 3, 1);
    Atomics.notify(p, 3);
    await within(Promise.all(held), 10_000, "the held tasks");
  });
});

test("map yields every result in input order, from an array, a generator and an async generator", async () => {
  await withPool({ workers: 2 }, async (pool) => {
    const expected = Array.from({ length: 1_000 }, (_, i) => i * i);
    assertEquals(
      await within(collect(pool.map("square", Array.from({ length: 1_000 }, (_, i) => i))), 30_000, "array"),
      expected,
    );
    function* numbers() {
      for (let i = 0; i < 1_000; i++) yield i;
    }
    assertEquals(
      await within(collect(pool.map("square", numbers(), { concurrency: 7 })), 30_000, "generator"),
      expected,
    );
    async function* slowly() {
      for (let i = 0; i < 1_000; i++) {
        if (i % 100 === 0) await new Promise((resolve) => setTimeout(resolve, 1));
        yield i;
      }
    }
    assertEquals(await within(collect(pool.map("square", slowly())), 30_000, "async generator"), expected);
    await within(pool.drain(), 10_000, "drain");
    await assertIdleAccounting(pool, "maps of an array, a generator and an async generator");
  });
});

test("map keeps at most `concurrency` tasks in flight; unordered, results come as they finish", async () => {
  await withPool({ workers: 2 }, async (pool) => {
    const p = probe();
    const inputs = Array.from({ length: 60 }, (_, n) => ({ n, ms: n % 3 === 0 ? 6 : 0, probe: p }));
    const out = await within(collect(pool.map("tracked", inputs, { concurrency: 3, ordered: false })), 30_000, "map");
    assertEquals([...out].sort((a, b) => a - b), inputs.map((i) => i.n), "every input once");
    assert(Atomics.load(p, 1) <= 3, `at most 3 in flight: saw ${Atomics.load(p, 1)}`);
    assertEquals(Atomics.load(p, 2), 60, "60 runs");
    assert(out.some((n, i) => n !== i), "unordered: some result came before an earlier input's");
  });
});

test("map ends on break: tasks in flight are aborted (queued ones never run) and the inputs are closed", async () => {
  await withPool({ workers: 1 }, async (pool) => {
    const p = probe();
    let closed = false;
    let pulled = 0;
    // An async generator: its inputs go one task each (no chunks), so every task is its own witness.
    // Task 5 holds the one worker until the map has ended: the tasks submitted behind it (6 and 7 at
    // least: the first window is 8) are still queued then, whatever the machine's speed. Before, the
    // worker could run every task in flight before the break, and nothing was left to abort.
    async function* inputs() {
      try {
        for (let n = 0; n < 1_000_000; n++) {
          pulled++;
          yield n === 5 ? { n, ms: 1, probe: p, hold: 30_000 } : { n, ms: 1, probe: p };
        }
      } finally {
        closed = true;
      }
    }
    let seen = 0;
    for await (const _ of pool.map("watched", inputs(), { concurrency: 8 })) {
      if (++seen === 5) break;
    }
    // The map has ended: what was in flight is aborted or cancelled. From now on a task that starts
    // without an aborted signal is one that was queued at the end and ran anyway (see `watched`). Which
    // tasks had run by then depends on the order the worker took them in, so that is not asserted.
    Atomics.store(p, 3, 1);
    Atomics.notify(p, 3);
    assert(closed, "the input generator was closed");
    assert(pulled <= 5 + 8, `inputs pulled only as the window had room: ${pulled}`);
    await within(pool.drain(), 10_000, "drain");
    await assertIdleAccounting(pool, "a map ended by break");
    assertEquals(Atomics.load(p, 4), 0, "tasks queued when the map ended that started anyway, unaborted");
    assert(Atomics.load(p, 2) <= pulled, `no task ran twice: ${Atomics.load(p, 2)} runs of ${pulled} pulled`);
  });
});

test("map ends on a task's error (thrown from the iteration) and on its signal (the reason)", async () => {
  await withPool({ workers: 2 }, async (pool) => {
    const error = await within(
      assertRejects(collect(pool.map("squareBut13", Array.from({ length: 100 }, (_, i) => i)))),
      30_000,
      "the failing map",
    );
    assertEquals((error as Error).message, "13 is unlucky");
    const controller = new AbortController();
    const reason = new Error("enough");
    const values: number[] = [];
    const aborted = await within(
      assertRejects((async () => {
        for await (
          const v of pool.map(
            "square",
            (function* () {
              for (let i = 0;; i++) yield i;
            })(),
            { signal: controller.signal },
          )
        ) {
          values.push(v);
          if (values.length === 10) controller.abort(reason);
        }
      })()),
      30_000,
      "the aborted map",
    );
    assertEquals(aborted, reason, "the signal's reason");
    await within(pool.drain(), 10_000, "drain");
    await assertIdleAccounting(pool, "maps ended by an error and by a signal");
  });
});

test("map's bad options and inputs are named errors at the call", async () => {
  await withPool({ workers: 1 }, (pool) => {
    assertThrows(
      () => pool.map("square", [1], { concurrency: 0 }),
      RangeError,
      "'concurrency' must be an integer from 1",
    );
    assertThrows(() => pool.map("square", [1], { concurrency: "4" as never }), TypeError, "'concurrency'");
    assertThrows(() => pool.map("square", [1], { ordered: 1 as never }), TypeError, "'ordered' must be a boolean");
    assertThrows(
      () => pool.map("square", [1], { signal: {} as AbortSignal }),
      TypeError,
      "'signal' must be an AbortSignal",
    );
    assertThrows(() => pool.map("square", 5 as never), TypeError, "'inputs' must be an iterable");
  });
});

test("map respects maxQueue: it waits for room instead of failing", async () => {
  await withPool({ workers: 1, maxQueue: 2 }, async (pool) => {
    const out = await within(
      collect(pool.map("square", Array.from({ length: 200 }, (_, i) => i), { concurrency: 50 })),
      30_000,
      "map",
    );
    assertEquals(out.length, 200);
    assertEquals(out[199], 199 * 199);
  });
});

test("runMany submits a batch in one call: results in order; the first error rejects, every task still settles", async () => {
  await withPool({ workers: 2 }, async (pool) => {
    const squares = await within(pool.runMany("square", Array.from({ length: 10_000 }, (_, i) => [i])), 30_000, "10k");
    assertEquals(squares.length, 10_000);
    assert(squares.every((v, i) => v === i * i), "every result in order");
    assertEquals(await within(pool.runMany("square", []), 5_000, "an empty batch"), []);
    const error = await within(
      assertRejects(pool.runMany("squareBut13", Array.from({ length: 100 }, (_, i) => [i]))),
      30_000,
      "a batch with a failure",
    );
    assertEquals((error as Error).message, "13 is unlucky");
    await within(pool.drain(), 10_000, "drain");
    assertEquals(pool.stats().pending, 0, "every task of the failed batch settled");
    assertThrows(() => pool.runMany("square", 5 as never), TypeError, "'argsList' must be an array");
    const bad = await within(assertRejects(pool.runMany("square", [[1], 2 as never])), 5_000, "a bad entry");
    assert(bad instanceof TypeError && bad.message.includes("argsList[1]"), String(bad));
  });
});
