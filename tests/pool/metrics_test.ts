/**
 * Task metrics (`metrics: true`): every settled task's run and wait times reach the pool's and its
 * worker's histograms, bounded below by what the tasks did (a 5 ms spin runs at least 5 ms; the 20th of
 * 20 such tasks on one worker waits at least 19 of them), and utilization is a fraction.
 */
import { Histogram } from "../../lib/metrics.ts";
import { Pool } from "../../lib/pool.ts";
import type * as joinTasks from "../fixtures/join_tasks.ts";
import type * as tasks from "../fixtures/stream_tasks.ts";
import type * as graphTasks from "../fixtures/graph_tasks.ts";
import { assert, assertEquals, assertRejects, assertThrows, test, within } from "../_test.ts";

const moduleUrl = new URL("../fixtures/stream_tasks.ts", import.meta.url);
const joinUrl = new URL("../fixtures/join_tasks.ts", import.meta.url);

test("histogram: count, mean and max exact, percentiles within a bucket (9%) of the truth", () => {
  const h = new Histogram();
  const values = Array.from({ length: 10_000 }, (_, i) => 0.01 * (i + 1)); // 0.01 .. 100 ms
  for (const v of values) h.record(v);
  const s = h.summary();
  assertEquals([s.count, s.max], [10_000, 100]);
  assert(Math.abs(s.mean - 50.005) < 1e-6, `mean ${s.mean}`);
  for (const [q, got] of [[0.5, s.p50], [0.9, s.p90], [0.99, s.p99]] as const) {
    const truth = values[Math.ceil(q * values.length) - 1];
    assert(Math.abs(got - truth) / truth < 0.09, `p${q * 100}: ${got} vs ${truth}`);
  }
  const empty = new Histogram().summary();
  assertEquals([empty.count, empty.p99, empty.max], [0, 0, 0]);
});

test("metrics: run and wait times of every task, per pool and per worker, and utilization", async () => {
  const pool = await Pool.create<typeof tasks>(moduleUrl, { workers: 1, metrics: true });
  try {
    const probe = new Int32Array(new SharedArrayBuffer(16));
    const runs = Array.from({ length: 20 }, (_, n) => pool.run("tracked", { n, ms: 5, probe }));
    await within(Promise.all(runs), 30_000, "20 tasks of 5 ms");
    const metrics = pool.stats().metrics!;
    assertEquals(metrics.runTime.count, 20, "every task recorded");
    assert(
      metrics.runTime.p50 >= 5 * 0.91 && metrics.runTime.max >= 5,
      `run ≥ 5 ms: ${JSON.stringify(metrics.runTime)}`,
    );
    // One worker, twenty 5 ms tasks submitted at once: the last started after at least 19 others ran.
    assert(metrics.waitTime.max >= 19 * 5, `the last waited ≥ 95 ms: ${JSON.stringify(metrics.waitTime)}`);
    assertEquals(metrics.workers.length, 1);
    assertEquals(metrics.workers[0].runTime.count, 20, "the worker's own histogram");
    const u = metrics.workers[0].utilization;
    assert(u > 0 && u <= 1, `utilization is a fraction: ${u}`);
    const table = pool.metricsTable();
    assert(table.includes("| pool | 20 |") && table.includes("| worker 0 | 20 |"), table);
  } finally {
    await within(pool.close(), 10_000, "close");
  }
});

test("metrics: once the tasks settled, every finished task is counted once (errors too, through the backlog), and the pool's figures are its workers' merged", async () => {
  // 64 records for 3,000 tasks: most wait in the backlog and are placed later, with their submission time.
  const pool = await Pool.create<typeof tasks>(moduleUrl, { workers: 2, taskCapacity: 64, metrics: true });
  try {
    const squares = Array.from({ length: 2_900 }, (_, i) => pool.run("square", i));
    const unlucky = Array.from({ length: 100 }, (_, i) => pool.run("squareBut13", i).then(() => 0, () => 1));
    await within(Promise.all(squares), 30_000, "2,900 squares");
    const failed = (await within(Promise.all(unlucky), 30_000, "100 more")).reduce((a: number, b: number) => a + b, 0);
    assertEquals(failed, 1, "one task threw");
    const metrics = pool.stats().metrics!;
    // Exact at once: each worker recorded its tasks before publishing their outcomes.
    assertEquals([metrics.runTime.count, metrics.waitTime.count], [3_000, 3_000], "every task, once");
    const sum = (pick: (w: (typeof metrics.workers)[number]) => number) =>
      metrics.workers.reduce((total, w) => total + pick(w), 0);
    assertEquals(sum((w) => w.runTime.count), 3_000, "the workers' counts add up to the pool's");
    assertEquals(sum((w) => w.waitTime.count), 3_000);
    assertEquals(
      metrics.runTime.max,
      Math.max(...metrics.workers.map((w) => w.runTime.max)),
      "max is the workers' max",
    );
    const mean = sum((w) => w.waitTime.mean * w.waitTime.count) / 3_000;
    assert(
      Math.abs(mean - metrics.waitTime.mean) <= 1e-9 * Math.max(1, mean),
      `mean ${metrics.waitTime.mean} vs ${mean}`,
    );
    for (const s of [metrics.runTime, metrics.waitTime]) {
      assert(s.p50 <= s.p90 && s.p90 <= s.p99 && s.p99 <= s.max && s.mean <= s.max, JSON.stringify(s));
    }
  } finally {
    await within(pool.close(), 10_000, "close");
  }
});

test("metrics: a task that forks is one task; its forks are not counted", async () => {
  const pool = await Pool.create<typeof joinTasks>(joinUrl, { workers: 2, metrics: true });
  try {
    assertEquals(await within(pool.run("fib", 15), 30_000, "fib(15)"), 610);
    const metrics = pool.stats().metrics!;
    assertEquals([metrics.runTime.count, metrics.waitTime.count], [1, 1]);
  } finally {
    await within(pool.close(), 10_000, "close");
  }
});

test("without metrics: stats() has none, metricsTable() is a TypeError; a bad metrics option is a TypeError", async () => {
  const pool = await Pool.create<typeof tasks>(moduleUrl, { workers: 1 });
  try {
    assertEquals(await within(pool.run("square", 3), 10_000, "square"), 9);
    assertEquals(pool.stats().metrics, undefined);
    assertThrows(() => pool.metricsTable(), TypeError, "create it with { metrics: true }");
  } finally {
    await within(pool.close(), 10_000, "close");
  }
  const error = await within(assertRejects(Pool.create(moduleUrl, { metrics: "yes" as never })), 10_000, "create");
  assert(error instanceof TypeError && error.message.includes("'metrics' must be a boolean"), String(error));
});

test("metrics: a graph's nodes wait from the graph's submission, not from a stale or empty stamp of their records", async () => {
  const graphUrl = new URL("../fixtures/graph_tasks.ts", import.meta.url);
  // 64 records, each used first by a task of its own (so a record left unstamped holds an older time).
  const pool = await Pool.create<typeof graphTasks>(graphUrl, { workers: 2, taskCapacity: 64, metrics: true });
  try {
    await within(Promise.all(Array.from({ length: 64 }, (_, i) => pool.run("square", i))), 30_000, "64 squares");
    await new Promise((resolve) => setTimeout(resolve, 300)); // the squares' stamps now 300 ms old or more
    const { count: before, max: squaresMax } = pool.stats().metrics!.waitTime;
    const start = performance.timeOrigin + performance.now();
    const g = pool.graph();
    let node = g.run("square", 1);
    for (let i = 0; i < 19; i++) node = g.run("add", node, 1);
    assertEquals(await within(g.submit(node), 30_000, "a chain of 20"), 20);
    const elapsed = performance.timeOrigin + performance.now() - start;
    const wait = pool.stats().metrics!.waitTime;
    assertEquals(wait.count - before, 20, "every node's wait recorded");
    // Every wait began at the graph's submission, after `start`: none is longer than the whole run, but for
    // the threads' clocks (each thread's time origin plus its own clock: they may differ by a fraction of a
    // ms; 10 ms allowed). A stale stamp is 300 ms older or more; an empty one, the epoch. The histogram's
    // max is over every task: one the graph raised is a node's (the squares' own waits, which a loaded
    // machine can make longer than this short graph, stay below it unless a node waited longer).
    assert(
      wait.max === squaresMax || wait.max <= elapsed + 10,
      `a node waited ${wait.max} ms in a graph that took ${elapsed} ms (the squares' longest wait: ${squaresMax} ms)`,
    );
  } finally {
    await within(pool.close(), 10_000, "close");
  }
});
