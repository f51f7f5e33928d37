/**
 * Recycling (issue 49; lib/owner/recycle.ts, lib/worker/loop.ts): a worker that ran `recycle.afterTasks`
 * tasks, or whose heap passed `recycle.heapMB`, is replaced between tasks on the same deque, without
 * rejecting or losing anything. Every task runs exactly once over many recycles, with sync, async and
 * fork-join tasks in flight; the worker count stays; each new thread is set up with the workerData and each
 * leaving one tears down; a leaking task's worker is replaced; the option is validated.
 */
import { Pool } from "../../mod.ts";
import type * as tasks from "../fixtures/recycle_tasks.ts";
import { assert, assertEquals, runtime, test, within } from "../_test.ts";

const TASKS = new URL("../fixtures/recycle_tasks.ts", import.meta.url);

test(`recycle on ${runtime}: after N tasks, every task (sync, async, fork-join) runs exactly once`, async () => {
  const counts = new Int32Array(new SharedArrayBuffer(8));
  const pool = await within(
    Pool.create<typeof tasks>(TASKS, { workers: 2, recycle: { afterTasks: 7 }, workerData: { counts } }),
    30_000,
    "create",
  );
  let recycledEvents = 0;
  pool.events.addEventListener("workerrecycled", () => recycledEvents++);
  const n = 300;
  const tally = new Int32Array(new SharedArrayBuffer(4 * (n + 1)));
  try {
    for (let round = 0; round < 3; round++) {
      const runs: Promise<unknown>[] = [];
      for (let i = round * 100; i < round * 100 + 100; i += 2) {
        // i: sync or async; i + 1 with i through a pair (every 4th) or on its own.
        if (i % 4 === 0) runs.push(pool.run("markPair", tally, i));
        else runs.push(pool.run(i % 3 === 0 ? "markLater" : "mark", tally, i), pool.run("mark", tally, i + 1));
      }
      await within(Promise.all(runs), 60_000, `round ${round}`);
    }
    const wrong = [...tally.subarray(0, n).entries()].filter(([, c]) => c !== 1);
    assertEquals(wrong, [], "each run marked once");
    const stats = pool.stats();
    assert(stats.workersRecycled >= 10, `recycled ${stats.workersRecycled} times`);
    assertEquals(stats.workerCrashes, 0, "no deaths");
    assertEquals(stats.workers.length, 2, "the worker count stays");
    assertEquals((await within(pool.broadcast("mark", tally, n), 20_000, "broadcast")).length, 2, "two workers");
    // A setup per thread: the first two, each recycled one's replacement, and at most one replacement per
    // worker whose recycle is still under way (a worker due after its last task).
    const setups = Atomics.load(counts, 0);
    assert(setups >= 2 + stats.workersRecycled && setups <= 4 + stats.workersRecycled, `${setups} setups`);
    assert(recycledEvents <= pool.stats().workersRecycled, "a workerrecycled event per recycle, at most");
  } finally {
    await within(pool.close(), 20_000, "close");
  }
  assertEquals(Atomics.load(counts, 1), Atomics.load(counts, 0), "a teardown per thread");
});

test(`recycle on ${runtime}: a worker due while an async task runs leaves only after it settled`, async () => {
  // [0] setups, [1] teardowns, [2] teardowns while a task of that thread still ran.
  const counts = new Int32Array(new SharedArrayBuffer(12));
  const gate = new Int32Array(new SharedArrayBuffer(4));
  const pool = await within(
    Pool.create<typeof tasks>(TASKS, { workers: 1, recycle: { afterTasks: 2 }, workerData: { counts } }),
    30_000,
    "create",
  );
  try {
    // The async task holds the worker's recycle back until it settles (after 2 s, its gate shut); the sync
    // task makes the worker due. A worker that left without waiting would tear down while it runs.
    const held = pool.run("markGated", gate, 2_000);
    const tally = new Int32Array(new SharedArrayBuffer(4));
    await within(pool.run("mark", tally, 0), 20_000, "the task that makes the worker due");
    await within(
      Promise.race([
        held,
        (async () => {
          while (Atomics.load(counts, 1) === 0) await new Promise((resolve) => setTimeout(resolve, 5));
        })(),
      ]),
      20_000,
      "the held task, or a teardown",
    );
    assertEquals(Atomics.load(counts, 2), 0, "no worker tore down while its async task ran");
    Atomics.store(gate, 0, 1);
    await within(held, 20_000, "the held task");
    const [i] = await within(pool.run("mark", tally, 0), 20_000, "a task after the recycle");
    assertEquals(i, 0, "a task runs after the recycle");
  } finally {
    await within(pool.close(), 20_000, "close");
  }
});

test(`recycle on ${runtime}: graph nodes queued on a recycled worker's deque all run, once`, async () => {
  // A finished node's successors go to its worker's deque: a worker due after that node leaves them there,
  // for thieves and for its replacement.
  const counts = new Int32Array(new SharedArrayBuffer(8));
  const pool = await within(
    Pool.create<typeof tasks>(TASKS, { workers: 2, recycle: { afterTasks: 2 }, workerData: { counts } }),
    30_000,
    "create",
  );
  const fan = 8;
  const rounds = 4;
  const tally = new Int32Array(new SharedArrayBuffer(4 * rounds * (fan + 1)));
  try {
    for (let r = 0; r < rounds; r++) {
      const base = r * (fan + 1);
      const g = pool.graph();
      const root = g.run("step", 0, tally, base);
      const kids = Array.from({ length: fan }, (_, k) => g.run("step", root, tally, base + 1 + k));
      assertEquals(await within(g.submit(g.run("total", ...kids)), 30_000, `graph ${r}`), 2 * fan, "the sum");
    }
    const wrong = [...tally.entries()].filter(([, c]) => c !== 1);
    assertEquals(wrong, [], "each node ran once");
    assert(pool.stats().workersRecycled >= 5, `recycled ${pool.stats().workersRecycled} times`);
    assertEquals(pool.stats().workerCrashes, 0, "no deaths");
  } finally {
    await within(pool.close(), 20_000, "close");
  }
});

test(`recycle on ${runtime}: a worker whose heap passed heapMB (a task that leaks) is replaced`, async () => {
  const counts = new Int32Array(new SharedArrayBuffer(8));
  const pool = await within(
    Pool.create<typeof tasks>(TASKS, { workers: 1, recycle: { heapMB: 48 }, workerData: { counts } }),
    30_000,
    "create",
  );
  try {
    const threads = new Set<number>();
    for (let i = 0; i < 40; i++) threads.add(await within(pool.run("leak", 4), 20_000, `leak ${i}`));
    assert(pool.stats().workersRecycled >= 1, `recycled ${pool.stats().workersRecycled}`);
    assert(threads.size >= 2, `tasks ran on ${threads.size} threads`);
    assertEquals(pool.stats().workerCrashes, 0, "no worker died");
  } finally {
    await within(pool.close(), 20_000, "close");
  }
});

test(`recycle on ${runtime}: the option is checked at create`, async () => {
  for (
    const [recycle, pattern] of [
      [{}, /names no bound/],
      [{ afterTasks: 0 }, /'recycle.afterTasks' must be a positive integer/],
      [{ heapMB: 1.5 }, /'recycle.heapMB' must be/],
      [{ afterTask: 3 }, /'recycle.afterTask' is not a recycling bound/],
      [5, /'recycle' must be an object/],
    ] as const
  ) {
    const error = await within(
      Pool.create(TASKS, { workers: 1, recycle: recycle as never }).then(() => undefined, (e: unknown) => e),
      20_000,
      "create",
    );
    assert(error instanceof Error && pattern.test(error.message), `${JSON.stringify(recycle)}: ${String(error)}`);
  }
});
