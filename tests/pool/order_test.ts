/**
 * Submission order (issue 30): tasks submitted from outside the workers start in the order they were
 * submitted. A worker takes the injector's oldest task, one at a time (lib/worker/search.ts), so a task
 * starts only after every task submitted before it has left the queue; what can still overtake it is a
 * task another worker took after it and started first while this one was between its worker's take and
 * its start (a few instructions: spec/Order.tla states it). Before, a worker moved a batch into its own
 * deque and ran it newest first: 24 tasks of 20 ms on 2 workers with `queueTimeout: 150` timed out
 * numbers 1–5, 19 and 21–23, the oldest first.
 *
 * That window is a few µs (it includes the wake of a sleeping worker for the next task), but a thread the
 * machine preempts inside it stays there for its time slice: so the tests use tasks of 5 ms and more, and
 * their bounds allow an overtake or two more than the window gives. Out of order before: dozens to over a
 * hundred.
 */
import type { Pool } from "../../lib/pool.ts";
import { withTerminatedPool } from "./_pool.ts";
import type * as tasks from "../fixtures/order_tasks.ts";
import { assert, assertEquals, test, within } from "../_test.ts";

const moduleUrl = new URL("../fixtures/order_tasks.ts", import.meta.url);

function withPool(
  workers: number,
  body: (pool: Pool<typeof tasks>) => Promise<void>,
  taskCapacity?: number,
): Promise<void> {
  return withTerminatedPool(moduleUrl, { workers, taskCapacity }, body);
}

function probe(tasks: number): Int32Array {
  return new Int32Array(new SharedArrayBuffer(4 * (1 + tasks)));
}

/** The start ranks of tasks 0 … n−1 (−1: never started). */
function ranks(p: Int32Array, n: number): number[] {
  return Array.from({ length: n }, (_, i) => Atomics.load(p, 1 + i) - 1);
}

/** For each task that started, how many tasks submitted after it started before it. */
function overtakes(started: number[]): number[] {
  return started.map((rank, i) =>
    rank < 0 ? 0 : started.slice(i + 1).filter((later) => later >= 0 && later < rank).length
  );
}

/** On one worker: `n` runs submitted at once (the first holds the worker 20 ms) start in submission order. */
async function runsStartInOrder(pool: Pool<typeof tasks>, n: number): Promise<void> {
  const p = probe(n);
  const runs = Array.from({ length: n }, (_, i) => pool.run("ranked", i, i === 0 ? 20 : 0, p));
  await within(Promise.all(runs), 20_000, "the runs");
  assertEquals(ranks(p, n), Array.from({ length: n }, (_, i) => i), "run: start ranks by submission");
}

test("one worker: run, runMany and map start their tasks in submission order", async () => {
  await withPool(1, async (pool) => {
    const n = 300;
    // The first task holds the worker while the rest are queued behind it, all at once.
    await runsStartInOrder(pool, n);

    const q = probe(n);
    await within(
      pool.runMany(
        "ranked",
        Array.from({ length: n }, (_, i) => [i, i === 0 ? 20 : 0, q] as [number, number, Int32Array]),
      ),
      20_000,
      "runMany",
    );
    assertEquals(ranks(q, n), Array.from({ length: n }, (_, i) => i), "runMany: start ranks by submission");

    const m = probe(64);
    const inputs = Array.from({ length: 64 }, (_, i) => ({ i, probe: m }));
    const results: number[] = [];
    for await (const rank of pool.map("rankedInput", inputs, { concurrency: 16 })) results.push(rank);
    assertEquals(ranks(m, 64), Array.from({ length: 64 }, (_, i) => i), "map: start ranks by input");
  });
});

test("one worker, 16 task records: tasks that waited in the main thread's backlog still start in order", async () => {
  // Records run out after 16: the rest wait on the main thread and go in as records come back.
  await withPool(1, (pool) => runsStartInOrder(pool, 300), 16);
});

test("two workers: a task starts after at most a worker's window of tasks submitted after it", async () => {
  await withPool(2, async (pool) => {
    // Tasks of 5 ms: a worker's window between its take and its start (a few µs, the wake of a sleeper
    // for the next task among them) is short next to them, and so is most preemption (tiny tasks overtake
    // by a dozen in that window; with 1 ms tasks on a machine running four busy threads on two cores, a
    // task was overtaken by 4).
    const n = 100;
    const p = probe(n);
    const runs = Array.from({ length: n }, (_, i) => pool.run("ranked", i, 5, p));
    await within(Promise.all(runs), 30_000, "the runs");
    const started = ranks(p, n);
    assert(started.every((rank) => rank >= 0), "every task started");
    const worst = Math.max(...overtakes(started));
    // Two workers: the other one's window, and two more for a thread preempted for over 10 ms. Moving
    // batches into deques, the code once overtook a task by over a hundred.
    assert(worst <= 3, `a task started after ${worst} tasks submitted after it (at most 3): ${started.join(",")}`);
  });
});

test("queueTimeout under load: the tasks that time out are the newest (24 tasks of 20 ms, 2 workers, 150 ms)", async () => {
  await withPool(2, async (pool) => {
    const n = 24;
    const p = probe(n);
    const settled = await within(
      Promise.allSettled(
        Array.from({ length: n }, (_, i) => pool.with({ queueTimeout: 150 }).run("ranked", i, 20, p)),
      ),
      20_000,
      "the tasks",
    );
    const timedOut = settled.flatMap((s, i) => s.status === "rejected" ? [i] : []);
    for (const s of settled) {
      if (s.status === "rejected") assertEquals((s.reason as Error).name, "TimeoutError", String(s.reason));
    }
    const ran = settled.flatMap((s, i) => s.status === "fulfilled" ? [i] : []);
    assert(timedOut.length > 0 && ran.length > 0, `some ran and some timed out: ran ${ran}, timed out ${timedOut}`);
    // Each task that timed out is older than at most 2 of the tasks that ran (the other worker's window,
    // and one more for a preempted thread); before, task 1 timed out while 6–18 ran.
    for (const old of timedOut) {
      const newerRan = ran.filter((i) => i > old).length;
      assert(
        newerRan <= 2,
        `task ${old} timed out while ${newerRan} newer tasks ran: ran ${ran}, timed out ${timedOut}`,
      );
    }
  });
});
