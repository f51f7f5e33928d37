/**
 * The pool's events (issue 51, lib/events.ts): each event of `pool.events` on the runtime running the file
 * (Deno, Bun, Node), with its typed detail; events come in a task of their own, after the step that
 * caused them, so a listener finds the pool whole; a listener that throws disturbs neither the pool, nor
 * the other listeners, nor any task's settlement (the runtime reports its error as an uncaught one).
 * Every wait has a deadline: a missing event fails its test instead of hanging it.
 */
import type { Pool } from "../../lib/pool.ts";
import type { PoolEventMap, PoolEventType } from "../../lib/events.ts";
import { withTerminatedPool } from "./_pool.ts";
import type * as tasks from "../fixtures/tasks.ts";
import type * as forceTasks from "../fixtures/force_tasks.ts";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { assert, assertEquals, runtime, test, within } from "../_test.ts";

const moduleUrl = new URL("../fixtures/tasks.ts", import.meta.url);
const forceUrl = new URL("../fixtures/force_tasks.ts", import.meta.url);

/** Records every event of `types` from now on, with what the pool said when it came. */
function record<K extends PoolEventType>(pool: Pool<typeof tasks>, ...types: K[]) {
  const seen: { type: K; detail: PoolEventMap[K]["detail"]; pending: number; lifecycle: string }[] = [];
  for (const type of types) {
    pool.events.addEventListener(type, (event) => {
      seen.push({ type, detail: event.detail, pending: pool.stats().pending, lifecycle: pool.lifecycle });
    });
  }
  /** Resolves once `count` events of `type` came (at most 20 s). */
  const until = async <T extends K>(type: T, count = 1) => {
    await within(
      (async () => {
        while (seen.filter((e) => e.type === type).length < count) await new Promise((r) => setTimeout(r, 2));
      })(),
      20_000,
      `${count} '${type}' event(s) (seen: ${JSON.stringify(seen.map((e) => e.type))})`,
    );
    return seen.filter((e) => e.type === type) as {
      type: T;
      detail: PoolEventMap[T]["detail"];
      pending: number;
      lifecycle: string;
    }[];
  };
  return { seen, until };
}

/** A tick of the event loop after which every event noted so far was dispatched. */
const aTaskLater = () => new Promise((resolve) => setTimeout(resolve, 20));

test(`events on ${runtime}: workeronline for each first worker reaches listeners added after create`, async () => {
  await withTerminatedPool<typeof tasks>(moduleUrl, { workers: 2 }, async (pool) => {
    const { until } = record(pool, "workeronline");
    const online = await until("workeronline", 2);
    assertEquals(
      online.map((e) => e.detail).sort((a, b) => a.worker - b.worker),
      [{ worker: 0, replacement: false }, { worker: 1, replacement: false }],
      "workeronline details",
    );
  });
});

test(`events on ${runtime}: drain comes once every task of the pool settled, after their promises`, async () => {
  await withTerminatedPool<typeof tasks>(moduleUrl, { workers: 2 }, async (pool) => {
    const { seen, until } = record(pool, "drain");
    const results: number[] = [];
    const runs = [1, 2, 3].map((i) => pool.run("addLater", i, i, 5).then((r) => results.push(r)));
    const [drain] = await until("drain");
    assertEquals(results.sort(), [2, 4, 6], "every promise settled (and its reactions ran) before drain");
    assertEquals([drain.detail.completed, drain.pending], [3, 0], "drain's detail, and stats() in the listener");
    await Promise.all(runs);
    await aTaskLater();
    assertEquals(seen.length, 1, "one drain for one idle point");
    await pool.run("add", 1, 1);
    await until("drain", 2);
  });
});

test(`events on ${runtime}: workerdied with its error, then workeronline and workerreplaced for the replacement`, async () => {
  await withTerminatedPool<typeof tasks>(moduleUrl, { workers: 1 }, async (pool) => {
    const { seen, until } = record(pool, "workeronline", "workerdied", "workerreplaced");
    await until("workeronline", 1);
    const error = await pool.run("crashWhilePending").then(() => undefined, (e: Error) => e);
    assertEquals(error?.name, "WorkerCrashedError", "the task's rejection");
    const [died] = await until("workerdied");
    assertEquals([died.detail.worker, died.detail.forced], [0, false], "workerdied's detail");
    assert(died.detail.error instanceof Error, "workerdied's error is an Error");
    assert(/crash while an async task is pending/.test(died.detail.error.message), died.detail.error.message);
    const [replaced] = await until("workerreplaced");
    assertEquals(replaced.detail, { worker: 0 }, "workerreplaced's detail");
    assertEquals(
      seen.map((e) => e.type),
      ["workeronline", "workerdied", "workeronline", "workerreplaced"],
      "the events in order",
    );
    assertEquals(seen[2].detail, { worker: 0, replacement: true }, "the replacement's workeronline");
    assertEquals(await pool.run("add", 2, 3), 5, "the replacement runs tasks");
    assertEquals(pool.stats().workerCrashes, 1, "one crash counted");
  });
});

test(`events on ${runtime}: a forced abort's kill is a workerdied with forced: true, then workerreplaced`, async () => {
  await withTerminatedPool<typeof forceTasks>(forceUrl, { workers: 1 }, async (pool) => {
    const { until } = record(pool as unknown as Pool<typeof tasks>, "workerdied", "workerreplaced");
    const probe = new Int32Array(new SharedArrayBuffer(16));
    const forced = pool.with({ timeout: 50, force: true }).run("ignoreAbort", probe, 60_000);
    assertEquals(await forced.then(() => "ran", (e: Error) => e.name), "TimeoutError", "the forced timeout");
    const [died] = await until("workerdied");
    assertEquals([died.detail.worker, died.detail.forced], [0, true], "workerdied's detail");
    await until("workerreplaced");
    assertEquals(pool.stats().forcedKills, 1, "one forced kill counted");
    assertEquals(await pool.run("add", 2, 3), 5, "the replacement runs tasks");
  });
});

test(`events on ${runtime}: queuefull when the pool's pending tasks reach maxQueue's bound, queueroom when they fall under`, async () => {
  await withTerminatedPool<typeof tasks>(moduleUrl, { workers: 1, maxQueue: 2 }, async (pool) => {
    const { seen, until } = record(pool, "queuefull", "queueroom");
    const gate = new Int32Array(new SharedArrayBuffer(4));
    const held = [pool.run("gate", gate), pool.run("gate", gate)];
    await aTaskLater();
    assertEquals(seen.length, 0, "under the bound (2 of 3): no event");
    held.push(pool.run("gate", gate));
    const [full] = await until("queuefull");
    assertEquals(full.detail, { pending: 3, maxPending: 3 }, "queuefull's detail");
    const refused = await pool.run("add", 1, 1).then(() => "ran", (e: Error) => e.name);
    assertEquals(refused, "QueueFullError", "a submission while full");
    Atomics.store(gate, 0, 1);
    Atomics.notify(gate, 0);
    await Promise.all(held);
    const [room] = await until("queueroom");
    assert(
      room.detail.pending < 3 && room.detail.maxPending === 3,
      `queueroom's detail: ${JSON.stringify(room.detail)}`,
    );
    await aTaskLater();
    assertEquals(seen.map((e) => e.type), ["queuefull", "queueroom"], "one of each, in order");
  });
});

test(`events on ${runtime}: terminate names why and how many tasks it rejected; close after close()`, async () => {
  await withTerminatedPool<typeof tasks>(moduleUrl, { workers: 1 }, async (pool) => {
    const { seen, until } = record(pool, "terminate", "close");
    const gate = new Int32Array(new SharedArrayBuffer(4));
    const held = [pool.run("gate", gate), pool.run("gate", gate)].map((p) => p.catch((e: Error) => e.name));
    await pool.terminate();
    assertEquals(await Promise.all(held), ["PoolTerminatedError", "PoolTerminatedError"], "the tasks' rejections");
    const [terminated] = await until("terminate");
    assertEquals(terminated.detail, { why: "terminate() was called", rejected: 2 }, "terminate's detail");
    assertEquals(terminated.lifecycle, "terminated", "the lifecycle in the listener");
    await aTaskLater();
    assertEquals(seen.length, 1, "terminate once, no close");
    Atomics.store(gate, 0, 1);
    Atomics.notify(gate, 0);
  }, false);
  await withTerminatedPool<typeof tasks>(moduleUrl, { workers: 1 }, async (pool) => {
    const { until } = record(pool, "terminate", "close");
    await pool.run("add", 1, 2);
    await pool.close();
    const [closed] = await until("close");
    assertEquals([closed.detail, closed.lifecycle], [{}, "closed"], "close's detail and the lifecycle");
  }, false);
});

test(
  `events on ${runtime}: a listener that throws stops neither the pool, nor other listeners, nor any settlement`,
  () => {
    // In a process of its own: Bun's runner fails a test on any uncaught error, whatever handler it installs.
    const file = fileURLToPath(new URL("../fixtures/throwing_listener.ts", import.meta.url));
    const process = (globalThis as unknown as { process: { execPath: string } }).process;
    const args = runtime === "deno" ? ["run", "-A", file] : [file];
    const run = spawnSync(process.execPath, args, { encoding: "utf8", timeout: 60_000 });
    const output = `${run.stdout ?? ""}${run.stderr ?? ""}`.slice(-2000);
    assert(run.error === undefined && run.status === 0, `the program ran (status ${run.status}):\n${output}`);
    const seen = JSON.parse(run.stdout.trim().split("\n").at(-1)!);
    assertEquals(seen, {
      resultsOwn: true,
      more: [2, 4],
      settled: 50,
      thrown: 2,
      drains: 2,
      errors: ["a listener's own bug", "a listener's own bug"],
      duplicateReports: 0,
      completed: 52,
      pending: 0,
    }, "what the program saw");
  },
  90_000,
);
