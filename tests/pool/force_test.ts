/**
 * Forced aborts (`pool.with({ signal, force: true })`): a running task that ignores its abort has its
 * worker terminated and replaced, only while that worker is outside the pool's own steps (the kill guard,
 * lib/protocol/kill_guard.ts and spec/KillGuard.tla); every other task still settles once, with its value or a
 * WorkerCrashedError, and no record is stranded.
 *
 * A hang is a failure: every wait on the pool goes through {@link within}.
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { Pool } from "../../lib/pool.ts";
import { withTerminatedPool } from "./_pool.ts";
import type * as tasks from "../fixtures/force_tasks.ts";
import { FORCE_MUTANTS } from "../mutants/mutants.ts";
import {
  assertBystanders,
  forcedChurn,
  fullCapacity,
  killed,
  probe,
  release,
  settledAs,
  started,
  TASKS,
} from "./_force.ts";
import { assert, assertEquals, assertRejects, assertThrows, runtime, test, within } from "../_test.ts";

for (const task of ["ignoreAbort", "ignoreAbortAsync"] as const) {
  test(`a forced abort replaces the worker of a task that ignores its signal (${task}); the others settle once`, async () => {
    await withTerminatedPool<typeof tasks>(TASKS, { workers: 2, taskCapacity: 32 }, async (pool) => {
      const p = probe();
      const controller = new AbortController();
      const forced = pool.with({ signal: controller.signal, force: true }).run(task, p, 60_000);
      forced.catch(() => {});
      await within(started(p), 10_000, "the forced task's start");
      const bystanders = [
        ...Array.from({ length: 40 }, (_, i) => settledAs(pool.run("add", i, 1))),
        settledAs(pool.run("later", "async", 50)),
        settledAs(pool.run("fib", { n: 15 })),
      ];
      controller.abort();
      const reason = await within(assertRejects(forced), 5_000, "the forced task's rejection");
      assertEquals((reason as Error).name, "AbortError", String(reason));
      await within(killed(pool, 1), 10_000, "the forced kill");
      const outcomes = await within(Promise.all(bystanders), 20_000, "the bystanders");
      assertBystanders(outcomes);
      outcomes.slice(0, 40).forEach((o, i) => assert(o === `ok:${i + 1}` || o === "crashed", `add ${i}: ${o}`));
      assertEquals(pool.stats().workerCrashes, 0, "a forced kill is not counted as a crash");
      // The replacement runs tasks, and every record came back.
      assertEquals(await within(pool.run("fib", { n: 20 }), 20_000, "fib(20) after the kill"), 6765, "fib(20)");
      assert(await fullCapacity(pool, 32), "a record was stranded by the forced kill");
      release(p);
    });
  });
}

test("a forced timeout rejects with a TimeoutError and replaces the worker of a task that ignores it", async () => {
  await withTerminatedPool<typeof tasks>(TASKS, { workers: 2 }, async (pool) => {
    const p = probe();
    const forced = pool.with({ timeout: 50, force: true }).run("ignoreAbort", p, 60_000);
    const reason = await within(assertRejects(forced), 10_000, "the forced timeout");
    assertEquals((reason as Error).name, "TimeoutError", String(reason));
    await within(killed(pool, 1), 10_000, "the forced kill");
    assertEquals(await within(pool.run("add", 2, 3), 10_000, "a task after the kill"), 5, "add");
    release(p);
  });
});

test("a kill is withdrawn when the task finishes inside the pool's own step first: its worker lives", async () => {
  await withTerminatedPool<typeof tasks>(TASKS, { workers: 1 }, async (pool) => {
    const p = probe();
    const controller = new AbortController();
    // The result's getter spins 300 ms while the pool encodes it: the guard is up, the kill must wait.
    const forced = pool.with({ signal: controller.signal, force: true }).run("slowResult", p, 300);
    forced.catch(() => {});
    await within(started(p), 10_000, "the getter's start");
    controller.abort();
    await within(assertRejects(forced), 5_000, "the aborted task's rejection");
    // The same worker (the pool has one) runs the next task: it was not killed.
    assertEquals(await within(pool.run("add", 1, 1), 10_000, "a task after the withdrawn kill"), 2, "add");
    const stats = pool.stats();
    assertEquals(stats.forcedKills, 0, "forced kills (the task finished before its guard came down)");
    assertEquals(stats.workerCrashes, 0, "crashes");
  });
});

test("without force, a task that ignores its signal keeps its worker and runs to its end", async () => {
  await withTerminatedPool<typeof tasks>(TASKS, { workers: 1 }, async (pool) => {
    const p = probe();
    const controller = new AbortController();
    const run = pool.with({ signal: controller.signal }).run("ignoreAbort", p, 200);
    await within(started(p), 10_000, "its start");
    controller.abort();
    await within(assertRejects(run), 5_000, "the aborted run");
    assertEquals(await within(pool.run("add", 1, 2), 10_000, "the next task"), 3, "add");
    assertEquals(pool.stats().forcedKills, 0, "forced kills");
  });
});

test("force must be a boolean, and needs a signal or a timeout", async () => {
  await withTerminatedPool<typeof tasks>(TASKS, { workers: 1 }, (pool) => {
    const withForce = (options: unknown) => pool.with(options as never);
    assertThrows(() => withForce({ timeout: 10, force: "yes" }), TypeError, "'force' must be a boolean");
    assertThrows(() => withForce({ force: true }), TypeError, "neither was given");
    assertThrows(() => withForce({ queueTimeout: 10, force: true }), TypeError, "neither was given");
  });
});

test("forced kills never land inside the pool's own steps: 20 kills of fork-join churn strand nothing", async () => {
  assertEquals(await forcedChurn(Pool, 20), 0, "failed checks");
});

test("the forced-kill test catches every kill-guard mutant (tests/mutants/mutants.ts, FORCE_MUTANTS)", () => {
  // Each in a child process of this runtime: a mutant pool corrupts its queues, and what it then throws
  // (or keeps alive) must not reach this process.
  const child = fileURLToPath(new URL("./force_mutant_child.ts", import.meta.url));
  for (const mutant of FORCE_MUTANTS) {
    const args = runtime === "deno" ? ["run", "-A", child, mutant.name] : [child, mutant.name];
    const run = spawnSync(process.execPath, args, { encoding: "utf8", timeout: 150_000 });
    const output = `${run.stdout ?? ""}${run.stderr ?? ""}`;
    const line = output.split("\n").find((l) => l.startsWith("FAILURES "));
    const failures = line === undefined ? -1 : Number(line.slice("FAILURES ".length));
    console.log(`  pool mutant '${mutant.name}': ${line ?? `no count (exit ${run.status}, signal ${run.signal})`}`);
    // Caught: the churn's checks failed, or the corrupted pool ended its process loudly (never a timeout).
    assert(
      failures > 0 || (line === undefined && run.status !== 0 && run.signal === null),
      `pool mutant '${mutant.name}' not caught by the forced churn:\n${output.slice(-2000)}`,
    );
  }
});
