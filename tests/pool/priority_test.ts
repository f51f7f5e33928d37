/**
 * Priorities (issue 30; lib/protocol/levels.ts): among tasks waiting in the pool's queues, `"high"` ones
 * are taken first, then `"normal"`, then `"low"`, each level in submission order; and no level starves:
 * while a task is the oldest of its level, each worker takes at most LEVEL_QUOTA (8) tasks of higher
 * levels before it takes that one.
 *
 * Each scenario holds the one worker with a first task while the rest are queued, so what the worker
 * takes next is decided by the queues alone (the tasks note their start rank: fixtures/order_tasks.ts).
 * The first task holds its worker at a gate (a word in shared memory) that the test opens once the rest
 * are queued: before, it spun 50 ms, and a main thread delayed longer than that in its submissions (a
 * loaded machine) let the worker take a task before the higher ones behind it were queued.
 */
import type { Pool } from "../../lib/pool.ts";
import { LEVEL_QUOTA } from "../../lib/protocol/levels.ts";
import { withTerminatedPool } from "./_pool.ts";
import type * as tasks from "../fixtures/order_tasks.ts";
import { assert, assertEquals, assertThrows, test, within } from "../_test.ts";

const moduleUrl = new URL("../fixtures/order_tasks.ts", import.meta.url);

function withPool(workers: number, body: (pool: Pool<typeof tasks>) => Promise<void>): Promise<void> {
  return withTerminatedPool(moduleUrl, { workers }, body);
}

function probe(tasks: number): Int32Array {
  return new Int32Array(new SharedArrayBuffer(4 * (1 + tasks)));
}

/** The start ranks of tasks 0 … n−1 (−1: never started). */
function ranks(p: Int32Array, n: number): number[] {
  return Array.from({ length: n }, (_, i) => Atomics.load(p, 1 + i) - 1);
}

type Priority = "high" | "normal" | "low";

/** Waits until each task named has started (its rank noted), so that it holds its worker. */
async function started(p: Int32Array, tasks: number[]): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!tasks.every((i) => Atomics.load(p, 1 + i) !== 0)) {
    if (Date.now() > deadline) throw new Error(`tasks ${tasks} did not start within 10 s`);
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

/** A closed gate of the order tasks (fixtures/order_tasks.ts). */
function newGate(): Int32Array {
  return new Int32Array(new SharedArrayBuffer(4));
}

/** Opens a gate: the tasks held at it go on. */
function open(gate: Int32Array): void {
  Atomics.store(gate, 0, 1);
  Atomics.notify(gate, 0);
}

/**
 * Submits task 0 (normal, held at a gate: it holds the one worker), then one task per priority given, in
 * order, then opens the gate.
 */
async function queued(pool: Pool<typeof tasks>, priorities: Priority[]): Promise<number[]> {
  const n = 1 + priorities.length;
  const p = probe(n);
  const gate = newGate();
  const runs = [pool.run("ranked", 0, 0, p, gate)];
  await started(p, [0]);
  priorities.forEach((priority, k) => runs.push(pool.with({ priority }).run("ranked", k + 1, 0, p)));
  open(gate);
  await within(Promise.all(runs), 20_000, "the tasks");
  return ranks(p, n);
}

test("one worker: high tasks start before normal ones, normal before low, each level in submission order", async () => {
  await withPool(1, async (pool) => {
    // Fewer than LEVEL_QUOTA tasks above the low ones: strict priority.
    const priorities: Priority[] = ["low", "normal", "high", "low", "normal", "high", "normal", "high"];
    const ranked = await queued(pool, priorities);
    const order = ranked.slice(1).map((rank, k) => ({ rank, task: k + 1, priority: priorities[k] }))
      .sort((a, b) => a.rank - b.rank).map((t) => `${t.priority} ${t.task}`);
    assertEquals(
      order,
      ["high 3", "high 6", "high 8", "normal 2", "normal 5", "normal 7", "low 1", "low 4"],
      "start order after the holding task",
    );
    assertEquals(ranked[0], 0, "the holding task started first");
  });
});

test(`no starvation: a low task waits behind at most LEVEL_QUOTA (${LEVEL_QUOTA}) high tasks a worker takes`, async () => {
  await withPool(1, async (pool) => {
    const priorities: Priority[] = ["low", ...Array.from({ length: 40 }, () => "high" as const), "low"];
    const ranked = await queued(pool, priorities);
    // Task 1 (low) waited while high tasks were taken: after LEVEL_QUOTA of them, it goes.
    assertEquals(ranked[1], 1 + LEVEL_QUOTA, `the first low task's start rank (ranks: ${ranked.join(",")})`);
    // High tasks 2 … 41 in order around it; the last low task after another LEVEL_QUOTA, and so on.
    const highs = ranked.slice(2, 42);
    assert(highs.every((rank, k) => k === 0 || rank > highs[k - 1]), `high tasks in order: ${highs.join(",")}`);
    assertEquals(ranked[42], 2 + 2 * LEVEL_QUOTA, `the second low task's start rank (ranks: ${ranked.join(",")})`);
  });
});

test("no starvation across three levels: normal and low each get their turn under a stream of high tasks", async () => {
  await withPool(1, async (pool) => {
    const priorities: Priority[] = ["low", "normal", ...Array.from({ length: 60 }, () => "high" as const)];
    const ranked = await queued(pool, priorities);
    // Both lower levels waited from the start: after LEVEL_QUOTA high tasks both streaks are full, and
    // the lowest starving level goes first, then the next.
    assertEquals(ranked[1], 1 + LEVEL_QUOTA, `the low task's rank (ranks: ${ranked.join(",")})`);
    assertEquals(ranked[2], 2 + LEVEL_QUOTA, `the normal task's rank (ranks: ${ranked.join(",")})`);
  });
});

test("two workers: priorities hold with several workers taking at once (high before low, nothing starves)", async () => {
  await withPool(2, async (pool) => {
    const n = 1 + 60;
    const p = probe(n);
    const gate = newGate();
    const first = [pool.run("ranked", 0, 0, p, gate), pool.run("ranked", 1, 0, p, gate)];
    await started(p, [0, 1]);
    const rest: Promise<number>[] = [];
    for (let k = 2; k < n; k++) {
      rest.push(pool.with({ priority: k % 2 === 0 ? "low" : "high" }).run("ranked", k, 1, p));
    }
    open(gate);
    await within(Promise.all([...first, ...rest]), 20_000, "the tasks");
    const ranked = ranks(p, n);
    const low = ranked.flatMap((rank, i) => i >= 2 && i % 2 === 0 ? [rank] : []);
    const high = ranked.flatMap((rank, i) => i >= 2 && i % 2 === 1 ? [rank] : []);
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
    assert(median(high) < median(low), `high tasks start earlier: high ${high}, low ${low}`);
    // The first low task waits behind at most LEVEL_QUOTA high tasks per worker (and a window each).
    assert(Math.min(...low) <= 2 + 2 * LEVEL_QUOTA + 2, `the first low task's rank: low ${low}, high ${high}`);
  });
});

test("runMany and map take a priority too: a high batch goes before normal tasks, a low map after them", async () => {
  await withPool(1, async (pool) => {
    // 4 low, 4 normal, 3 high: fewer than LEVEL_QUOTA above the low ones, so the order is strict.
    const n = 1 + 4 + 4 + 3;
    const p = probe(n);
    const gate = newGate();
    const runs: Promise<unknown>[] = [pool.run("ranked", 0, 0, p, gate)];
    await started(p, [0]);
    const inputs = [1, 2, 3, 4].map((i) => ({ i, probe: p }));
    const mapped = (async () => {
      const out: number[] = [];
      for await (const rank of pool.map("rankedInput", inputs, { priority: "low" })) out.push(rank);
      return out;
    })();
    for (const i of [5, 6, 7, 8]) runs.push(pool.run("ranked", i, 0, p));
    runs.push(pool.runMany("ranked", [9, 10, 11].map((i) => [i, 0, p] as [number, number, Int32Array]), {
      priority: "high",
    }));
    // The map submits as its loop pulls (after a turn or more): the gate opens once all 12 are in.
    const deadline = Date.now() + 10_000;
    while (pool.stats().submitted < n) {
      if (Date.now() > deadline) throw new Error(`${pool.stats().submitted} of ${n} tasks submitted within 10 s`);
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    open(gate);
    await within(Promise.all([...runs, mapped]), 20_000, "the tasks");
    assertEquals(ranks(p, n), [0, 8, 9, 10, 11, 4, 5, 6, 7, 1, 2, 3], "start ranks: high, then normal, then low");
    assertThrows(() => pool.runMany("ranked", [], { priority: 3 as unknown as Priority }), TypeError, "'priority'");
  });
});

test("priority: anything but high, normal or low is refused with a TypeError that names the choices", async () => {
  await withPool(1, async (pool) => {
    assertThrows(
      () => pool.with({ priority: "urgent" as Priority }),
      TypeError,
      `'priority' must be "high", "normal" or "low": received "urgent"`,
    );
    assertEquals(await within(pool.with({ priority: "normal" }).run("ranked", 0, 0, probe(1)), 5_000, "normal"), 0);
  });
});
