/**
 * Forced aborts (`pool.with({ signal, force: true })`): a running task that ignores its abort has its
 * worker terminated and replaced, only while that worker is outside the pool's own steps (the kill guard,
 * lib/kill_guard.ts and spec/KillGuard.tla); every other task still settles once, with its value or a
 * WorkerCrashedError, and no record is stranded.
 *
 * A hang is a failure: every wait on the pool goes through {@link within}.
 */
import { WorkerCrashedError } from "../lib/errors.ts";
import { Pool } from "../lib/pool.ts";
import { withTerminatedPool } from "./_pool.ts";
import type * as tasks from "./fixtures/force_tasks.ts";
import { FORCE_MUTANTS, materializePoolMutant, removePoolMutant } from "./mutants/mutants.ts";
import { assert, assertEquals, assertRejects, assertThrows, test, within } from "./_test.ts";

const TASKS = new URL("./fixtures/force_tasks.ts", import.meta.url);

type ForcePool = Pool<typeof tasks>;

function probe(): Int32Array {
  return new Int32Array(new SharedArrayBuffer(16));
}

/** Resolves once word 0 of `probe` is set (the task started). */
async function started(probe: Int32Array): Promise<void> {
  while (Atomics.load(probe, 0) === 0) await new Promise((resolve) => setTimeout(resolve, 1));
}

/** Lets a task that waits on word 3 end (so that a failing test leaves no thread spinning). */
function release(probe: Int32Array): void {
  Atomics.store(probe, 3, 1);
}

/** Resolves once `stats().forcedKills` reaches `n`. */
async function killed(pool: ForcePool, n: number): Promise<void> {
  while (pool.stats().forcedKills < n) await new Promise((resolve) => setTimeout(resolve, 2));
}

/** "ok:<value>", or "crashed" for a WorkerCrashedError; anything else fails. */
function settledAs(promise: Promise<unknown>): Promise<string> {
  return promise.then(
    (value) => `ok:${String(value)}`,
    (error) => {
      // By name: a pool mutant's copy of lib/ has its own WorkerCrashedError class.
      if (error instanceof WorkerCrashedError || (error as Error)?.name === "WorkerCrashedError") return "crashed";
      throw new Error(`a bystander rejected with something other than WorkerCrashedError: ${String(error)}`);
    },
  );
}

/** Runs `n` full-capacity barrier tasks: true if all were in flight at once (no record stranded). */
async function fullCapacity(pool: ForcePool, n: number): Promise<boolean> {
  const counter = new Int32Array(new SharedArrayBuffer(4));
  const all = await within(
    Promise.all(Array.from({ length: n }, () => pool.run("barrier", counter, n, 5_000))),
    20_000,
    `${n} barrier tasks`,
  );
  return all.every((b) => b);
}

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
        settledAs(pool.run("fib", 15)),
      ];
      controller.abort();
      const reason = await within(assertRejects(forced), 5_000, "the forced task's rejection");
      assertEquals((reason as Error).name, "AbortError", String(reason));
      await within(killed(pool, 1), 10_000, "the forced kill");
      const outcomes = await within(Promise.all(bystanders), 20_000, "the bystanders");
      outcomes.slice(0, 40).forEach((o, i) => assert(o === `ok:${i + 1}` || o === "crashed", `add ${i}: ${o}`));
      assertEquals(pool.stats().workerCrashes, 0, "a forced kill is not counted as a crash");
      // The replacement runs tasks, and every record came back.
      assertEquals(await within(pool.run("fib", 20), 20_000, "fib(20) after the kill"), 6765, "fib(20)");
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

/**
 * Forced kills of fork-join churn (which spends most of its time in the pool's own fork and join steps)
 * at random moments, with bystanders: returns how many checks failed (0 when every kill landed outside a
 * pool step: everything settled, and a full-capacity burst runs afterwards).
 */
async function forcedChurn(PoolClass: typeof Pool, rounds: number): Promise<number> {
  let failures = 0;
  const fail = (what: string, error: unknown) => {
    failures++;
    console.log(`  forced churn: ${what}: ${(error as Error)?.message ?? String(error)}`);
  };
  // A report to onError (a recovery that failed, a replacement that could not start) is a failure too.
  const pool = await PoolClass.create<typeof tasks>(TASKS, {
    workers: 2,
    taskCapacity: 64,
    onError: (error, task) => fail(`reported for ${task}`, error),
  });
  const probes: Int32Array[] = [];
  try {
    for (let round = 0; round < rounds && failures === 0; round++) {
      const p = probe();
      probes.push(p);
      const controller = new AbortController();
      const forced = pool.with({ signal: controller.signal, force: true }).run("churn", p, 60_000);
      forced.catch(() => {});
      const bystanders = [settledAs(pool.run("fib", 14)), settledAs(pool.run("add", round, 1))];
      try {
        await within(started(p), 10_000, "the churn's start");
        await new Promise((resolve) => setTimeout(resolve, 1 + (round * 7) % 13));
        controller.abort();
        await within(killed(pool, round + 1), 10_000, `forced kill ${round + 1}`);
        await within(Promise.all(bystanders), 10_000, "the bystanders");
      } catch (error) {
        fail(`round ${round}`, error);
      }
    }
    if (failures === 0) {
      try {
        if (!await fullCapacity(pool, 64)) fail("after the kills", new Error("a record was stranded"));
      } catch (error) {
        fail("after the kills", error);
      }
    }
  } finally {
    probes.forEach(release);
    await within(pool.terminate(), 10_000, "terminate");
  }
  return failures;
}

test("forced kills never land inside the pool's own steps: 20 kills of fork-join churn strand nothing", async () => {
  assertEquals(await forcedChurn(Pool, 20), 0, "failed checks");
});

test("the forced-kill test catches every kill-guard mutant (tests/mutants/mutants.ts, FORCE_MUTANTS)", async () => {
  for (const mutant of FORCE_MUTANTS) {
    const url = materializePoolMutant(mutant);
    const { Pool: MutantPool } = await import(url.href) as { Pool: typeof Pool };
    const failures = await forcedChurn(MutantPool, 20);
    console.log(`  pool mutant '${mutant.name}': ${failures} failed check(s)`);
    assert(failures > 0, `pool mutant '${mutant.name}' not caught by the forced churn`);
    removePoolMutant(url);
  }
});
