/**
 * Task metrics (`metrics: true`): every settled task's run and wait times reach the pool's and its
 * worker's histograms, bounded below by what the tasks did (a 5 ms spin runs at least 5 ms; the 20th of
 * 20 such tasks on one worker waits at least 19 of them), and utilization is a fraction.
 */
import { Histogram } from "../lib/metrics.ts";
import { Pool } from "../lib/pool.ts";
import type * as tasks from "./fixtures/stream_tasks.ts";
import { assert, assertEquals, assertRejects, assertThrows, test, within } from "./_test.ts";

const moduleUrl = new URL("./fixtures/stream_tasks.ts", import.meta.url);

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
