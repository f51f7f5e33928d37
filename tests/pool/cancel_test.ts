/**
 * Cancellation and deadlines (`pool.with({ signal, timeout, queueTimeout })`) and the task context
 * (`currentTask()`): a task aborted while queued never runs and its record comes back; a running one sees
 * its signal, synchronous or not, and so do its forks; every task settles exactly once, whatever the race.
 */
import { Pool, type PoolOptions } from "../../lib/pool.ts";
import { withTerminatedPool } from "./_pool.ts";
import { assertIdleAccounting } from "./_accounting.ts";
import type * as tasks from "../fixtures/cancel_tasks.ts";
import { SAW } from "../fixtures/cancel_tasks.ts";
import { materializePoolMutant, POOL_MUTANTS, type PoolMutant, removePoolMutant } from "../mutants/mutants.ts";
import { assert, assertEquals, assertRejects, assertThrows, test, within } from "../_test.ts";

const moduleUrl = new URL("../fixtures/cancel_tasks.ts", import.meta.url);

function probe(): Int32Array {
  return new Int32Array(new SharedArrayBuffer(16));
}

/** Resolves once `probe[index]` is not 0 (polled every 2 ms; the caller bounds it with `within`). */
async function until(probe: Int32Array, index: number): Promise<number> {
  while (Atomics.load(probe, index) === 0) await new Promise((resolve) => setTimeout(resolve, 2));
  return Atomics.load(probe, index);
}

/** Marks a promise handled (a test that fails early must not leave an unhandled rejection behind). */
function handled<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => {});
  return promise;
}

function release(probe: Int32Array): void {
  Atomics.store(probe, 3, 1);
  Atomics.notify(probe, 3);
}

function withPool(options: PoolOptions, body: (pool: Pool<typeof tasks>) => void | Promise<void>): Promise<void> {
  return withTerminatedPool(moduleUrl, options, body);
}

/**
 * Runs `task(seen, 30_000)` with a signal, waits until it has started (word 0 of `seen`), aborts it with
 * `reason`, and returns what its promise rejected with.
 */
async function abortOnceStarted(
  pool: Pool<typeof tasks>,
  task: "spinUntilAborted" | "awaitAbort" | "forkWhileBlocked" | "forkFlatWhileBlocked",
  seen: Int32Array,
  reason?: unknown,
): Promise<unknown> {
  const controller = new AbortController();
  const run = pool.with({ signal: controller.signal }).run(task, seen, 30_000);
  await within(until(seen, 0), 10_000, `${task}'s start`);
  controller.abort(reason);
  return await within(assertRejects(run), 5_000, "the aborted run");
}

/**
 * Three rounds of six tasks aborted while queued behind a blocker, on a pool of 8 records (so the later
 * rounds wait in the backlog, and the first ones hold records). Checks that each rejects with its
 * caller's reason; returns how many of them ran once the blocker is released and the pool drained.
 */
async function abortWhileQueued(PoolClass: typeof Pool, pool?: Pool<typeof tasks>): Promise<number> {
  pool ??= await PoolClass.create<typeof tasks>(moduleUrl, { workers: 1, taskCapacity: 8 });
  const hold = probe();
  const blocked = handled(pool.run("blocker", hold, 30_000));
  await within(until(hold, 0), 10_000, "the blocker's start");
  const seen = probe();
  for (let round = 0; round < 3; round++) {
    const controllers = Array.from({ length: 6 }, () => new AbortController());
    const runs = controllers.map((c) => handled(pool.with({ signal: c.signal }).run("counted", seen)));
    const reasons = controllers.map((c, i) => {
      const reason = new Error(`stop ${round}.${i}`);
      c.abort(reason);
      return reason;
    });
    for (let i = 0; i < runs.length; i++) {
      assertEquals(await within(assertRejects(runs[i]), 5_000, "an aborted run"), reasons[i], "the reason itself");
    }
  }
  release(hold);
  assertEquals(await within(blocked, 10_000, "the blocker"), "ok");
  await within(pool.drain(), 10_000, "drain");
  // A cancelled task that ran anyway counts when its worker gets to it: give the worker that time.
  await within(pool.run("counted", probe()), 10_000, "a later task");
  return Atomics.load(seen, 1);
}

test("a task aborted while queued never runs, rejects with the caller's reason, and its record comes back", async () => {
  await withPool({ workers: 1, taskCapacity: 8 }, async (pool) => {
    assertEquals(await abortWhileQueued(Pool, pool), 0, "no cancelled task ran");
    // Every cancelled record went back to the free list once the worker took its handle.
    const seen = probe();
    const all = await within(
      Promise.all(Array.from({ length: 8 }, () => pool.run("counted", seen))),
      10_000,
      "a full burst",
    );
    assertEquals(all.length, 8);
    assertEquals(pool.stats().duplicateReports, 0, "no duplicate reports");
    await within(pool.drain(), 10_000, "drain");
    await assertIdleAccounting(pool, "aborted while queued");
  });
});

/** Each pool mutant's scenario: how many tasks it ran that it should not have. */
const SCENARIOS: Record<PoolMutant["caughtBy"], (PoolClass: typeof Pool) => Promise<number>> = {
  abortWhileQueued: async (PoolClass) => {
    const pool = await PoolClass.create<typeof tasks>(moduleUrl, { workers: 1, taskCapacity: 8 });
    try {
      return await abortWhileQueued(PoolClass, pool);
    } finally {
      await within(pool.terminate(), 10_000, "terminate");
    }
  },
  forkPoppedBackAfterAbort: async (PoolClass) => (await forkAfterAbort(PoolClass, "popped back")).ran,
  forkKeptInlineAfterAbort: async (PoolClass) => (await forkAfterAbort(PoolClass, "kept inline")).ran,
  forkStolenAfterAbort: async (PoolClass) => (await forkAfterAbort(PoolClass, "stolen")).ran,
};

test("the cancellation tests catch every pool mutant (tests/mutants/mutants.ts, POOL_MUTANTS)", async () => {
  for (const mutant of POOL_MUTANTS) {
    const url = materializePoolMutant(mutant);
    const { Pool: MutantPool } = await import(url.href) as { Pool: typeof Pool };
    const ran = await SCENARIOS[mutant.caughtBy](MutantPool);
    console.log(`  pool mutant '${mutant.name}' caught by ${mutant.caughtBy}: ${ran} task(s) ran that must not`);
    assert(ran > 0, `pool mutant '${mutant.name}' not caught by ${mutant.caughtBy}`);
    removePoolMutant(url);
  }
});

test("a task aborted in the backlog (every record in use) never runs", async () => {
  await withPool({ workers: 1, taskCapacity: 2 }, async (pool) => {
    const hold = probe();
    const blocked = [handled(pool.run("blocker", hold, 30_000)), handled(pool.run("blocker", hold, 30_000))];
    await within(until(hold, 0), 10_000, "the blocker's start");
    const seen = probe();
    const controller = new AbortController();
    const run = pool.with({ signal: controller.signal }).run("counted", seen);
    controller.abort();
    const reason = await within(assertRejects(run), 5_000, "the aborted run");
    assertEquals((reason as Error).name, "AbortError", String(reason));
    release(hold);
    await within(Promise.all(blocked), 10_000, "the blockers");
    await within(pool.drain(), 10_000, "drain");
    assertEquals(await within(pool.run("counted", seen), 10_000, "a later task"), 1, "the aborted task never ran");
    await within(pool.drain(), 10_000, "drain");
    await assertIdleAccounting(pool, "aborted in the backlog");
  });
});

test("a running synchronous task sees its signal abort (throwIfAborted, aborted); its promise rejects at once", async () => {
  await withPool({ workers: 1 }, async (pool) => {
    const seen = probe();
    const reason = new Error("enough");
    assertEquals(await abortOnceStarted(pool, "spinUntilAborted", seen, reason), reason);
    assertEquals(
      await within(until(seen, 2), 10_000, "the task's view"),
      SAW.abortError,
      "it saw an AbortError, aborted",
    );
    // The worker is free again: the pool goes on.
    assertEquals(await within(pool.run("counted", seen), 10_000, "a later task"), 1);
    await within(pool.drain(), 10_000, "drain");
    await assertIdleAccounting(pool, "a running task aborted");
  });
});

test("a running asynchronous task's signal fires its abort listener", async () => {
  await withPool({ workers: 1 }, async (pool) => {
    const seen = probe();
    await abortOnceStarted(pool, "awaitAbort", seen);
    assertEquals(await within(until(seen, 2), 10_000, "the listener"), SAW.listener + SAW.abortError);
    await within(pool.drain(), 10_000, "drain");
    await assertIdleAccounting(pool, "a running asynchronous task aborted");
  });
});

/** Resolves once `probe[a]` or `probe[b]` is not 0 (polled every 2 ms). */
async function untilEither(probe: Int32Array, a: number, b: number): Promise<void> {
  while (Atomics.load(probe, a) === 0 && Atomics.load(probe, b) === 0) {
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

/**
 * A task forks b and blocks in a until released; it is aborted meanwhile; then a returns and its join
 * finds b: popped back (one worker), or stolen after the abort by the other worker, held by a blocker until
 * then. Returns how many times b ran (0 unless the pool runs forks of aborted tasks) and what the join
 * threw (a SAW code).
 */
async function forkAfterAbort(
  PoolClass: typeof Pool,
  how: "popped back" | "stolen" | "kept inline",
): Promise<{ ran: number; saw: number }> {
  const pool = await PoolClass.create<typeof tasks>(moduleUrl, { workers: how === "stolen" ? 2 : 1 });
  try {
    const hold = probe();
    const blocked = how === "stolen" ? handled(pool.run("blocker", hold, 30_000)) : undefined;
    if (blocked !== undefined) await within(until(hold, 0), 10_000, "the blocker's start");
    const seen = probe();
    // A b that takes a number only, on a pool of one: not forked at all, run inline after a (worker.ts).
    await abortOnceStarted(pool, how === "kept inline" ? "forkFlatWhileBlocked" : "forkWhileBlocked", seen);
    if (blocked !== undefined) {
      const stolenBefore = pool.stats().workers.reduce((sum, w) => sum + w.stolen, 0);
      release(hold);
      await within(blocked, 10_000, "the blocker");
      // The freed worker finds b in the other's deque: wait for that steal, then let a return.
      while (pool.stats().workers.reduce((sum, w) => sum + w.stolen, 0) === stolenBefore) {
        await within(new Promise((resolve) => setTimeout(resolve, 2)), 1_000, "a poll");
      }
    }
    release(seen);
    await within(untilEither(seen, 1, 2), 10_000, "b's run or the join's error");
    await within(pool.drain(), 10_000, "drain");
    // (The shipped pool only: a pool mutant's scenario counts the forks that ran.)
    if (PoolClass === Pool) await assertIdleAccounting(pool, `a fork ${how} after its task's abort`);
    return { ran: Atomics.load(seen, 1), saw: Atomics.load(seen, 2) };
  } finally {
    await within(pool.terminate(), 10_000, "terminate");
  }
}

test("forks of an aborted task are cancelled with it: popped back, stolen or kept inline, they do not run", async () => {
  assertEquals(await forkAfterAbort(Pool, "popped back"), { ran: 0, saw: SAW.abortError }, "popped back (1 worker)");
  assertEquals(await forkAfterAbort(Pool, "stolen"), { ran: 0, saw: SAW.abortError }, "stolen (2 workers)");
  assertEquals(
    await forkAfterAbort(Pool, "kept inline"),
    { ran: 0, saw: SAW.abortError },
    "kept inline (1 worker, a b of primitive arguments: never forked)",
  );
});

test("timeout counts from the task's start: a task queued longer than its timeout still starts, then times out", async () => {
  await withPool({ workers: 1 }, async (pool) => {
    const hold = probe();
    const blocked = handled(pool.run("blocker", hold, 30_000));
    await within(until(hold, 0), 10_000, "the blocker's start");
    const seen = probe();
    const run = pool.with({ timeout: 50 }).run("spinUntilAborted", seen, 30_000);
    await within(new Promise((resolve) => setTimeout(resolve, 200)), 1_000, "a wait longer than the timeout");
    assertEquals(Atomics.load(seen, 0), 0, "not started while the worker is held");
    release(hold);
    await within(blocked, 10_000, "the blocker");
    const error = await within(assertRejects(run), 10_000, "the timed-out run");
    assertEquals((error as Error).name, "TimeoutError", String(error));
    assertEquals(Atomics.load(seen, 0), 1, "it had started before it timed out");
    assertEquals(await within(until(seen, 2), 10_000, "the task's view"), SAW.timeoutError, "it saw a TimeoutError");
    await within(pool.drain(), 10_000, "drain");
    await assertIdleAccounting(pool, "a task timed out");
  });
});

test("queueTimeout removes a task still waiting to start: it rejects with a TimeoutError and never runs", async () => {
  await withPool({ workers: 1 }, async (pool) => {
    const hold = probe();
    const blocked = handled(pool.run("blocker", hold, 30_000));
    await within(until(hold, 0), 10_000, "the blocker's start");
    const seen = probe();
    const run = pool.with({ queueTimeout: 20 }).run("counted", seen);
    const error = await within(assertRejects(run), 10_000, "the expired run");
    assertEquals((error as Error).name, "TimeoutError", String(error));
    release(hold);
    await within(blocked, 10_000, "the blocker");
    await within(pool.drain(), 10_000, "drain");
    assertEquals(Atomics.load(seen, 1), 0, "it never ran");
    // Started in time, a queueTimeout no longer applies.
    assertEquals(await within(pool.with({ queueTimeout: 10_000 }).run("busy", 30), 10_000, "a started task"), "done");
    await within(pool.drain(), 10_000, "drain");
    await assertIdleAccounting(pool, "a queue timeout");
  });
});

test("bad task options are named errors; an aborted signal rejects with its reason and submits nothing", async () => {
  await withPool({ workers: 1 }, async (pool) => {
    assertThrows(() => pool.with(null as never), TypeError, "must be an object");
    assertThrows(() => pool.with({ signal: {} as AbortSignal }), TypeError, "'signal' must be an AbortSignal");
    assertThrows(() => pool.with({ timeout: -1 }), RangeError, "'timeout' must be a number of ms");
    assertThrows(() => pool.with({ queueTimeout: "5" as never }), TypeError, "'queueTimeout' must be a number of ms");
    assertThrows(() => pool.with({ timeout: NaN }), RangeError, "'timeout' must be a number of ms");
    const seen = probe();
    const before = pool.stats().submitted;
    const reason = new Error("already");
    const error = await within(
      assertRejects(pool.with({ signal: AbortSignal.abort(reason) }).run("counted", seen)),
      5_000,
      "the run",
    );
    assertEquals(error, reason, "rejects with the signal's reason");
    assertEquals(pool.stats().submitted, before, "nothing submitted");
  });
});

test("an aborted spawn reports nothing to onError; a spawn's timeout is reported", async () => {
  const reported: unknown[] = [];
  await withPool({ workers: 1, onError: (error) => reported.push(error) }, async (pool) => {
    const seen = probe();
    const controller = new AbortController();
    pool.with({ signal: controller.signal }).spawn("spinUntilAborted", seen, 30_000);
    await within(until(seen, 0), 10_000, "the spawn's start");
    controller.abort();
    await within(until(seen, 2), 10_000, "the spawn's view");
    const other = probe();
    pool.with({ timeout: 20 }).spawn("spinUntilAborted", other, 30_000);
    await within(pool.drain(), 10_000, "drain");
    await within(until(other, 2), 10_000, "the timed-out spawn's view");
    await new Promise((resolve) => setTimeout(resolve, 0)); // onError runs in a microtask of its own
    assertEquals(reported.map((e) => (e as Error).name), ["TimeoutError"], "only the timeout was reported");
  });
});

test("currentTask(): undefined outside a task; inside, the worker, the submission id, and a fork shares its task's id", async () => {
  const { currentTask } = await import("../../lib/forkjoin/task_context.ts");
  assertEquals(currentTask(), undefined, "the main thread is not a task");
  await withPool({ workers: 2 }, async (pool) => {
    const first = await within(pool.run("context"), 10_000, "context");
    assert(first !== undefined && first.worker >= 0 && first.worker < 2, JSON.stringify(first));
    assertEquals(first!.id, 0, "the pool's first task has id 0");
    assertEquals(first!.aborted, false);
    const second = await within(pool.run("forkContext"), 10_000, "forkContext");
    assertEquals(second, { outer: 1, inner: 1 }, "a fork has its task's id");
  });
});

test("every task settles exactly once when aborts race starts and finishes (random abort times, 2 workers)", async () => {
  await withPool({ workers: 2, taskCapacity: 16 }, async (pool) => {
    let seed = 20261123;
    const random = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
    const settles = new Int32Array(2_000);
    const outcomes = { value: 0, aborted: 0 };
    const runs: Promise<void>[] = [];
    for (let i = 0; i < settles.length; i++) {
      const controller = new AbortController();
      const ms = Math.floor(random() * 3);
      const run = pool.with({ signal: controller.signal }).run("busy", ms).then(
        () => void (settles[i]++, outcomes.value++),
        () => void (settles[i]++, outcomes.aborted++),
      );
      runs.push(run);
      const delay = random() * 4;
      if (random() < 0.7) setTimeout(() => controller.abort(), delay);
      if (i % 64 === 63) await new Promise((resolve) => setTimeout(resolve, 1));
    }
    await within(Promise.all(runs), 60_000, "every run");
    await within(pool.drain(), 10_000, "drain");
    assert(settles.every((n) => n === 1), "every task settled exactly once");
    console.log(`  abort races: ${outcomes.value} resolved, ${outcomes.aborted} aborted`);
    assert(outcomes.aborted > 0 && outcomes.value > 0, "both outcomes happened");
    assertEquals(pool.stats().duplicateReports, 0, "no duplicate reports");
    // Nothing leaked: the whole table runs again.
    const burst = await within(Promise.all(Array.from({ length: 64 }, () => pool.run("busy", 0))), 10_000, "a burst");
    assertEquals(burst.length, 64);
    assertEquals(pool.stats().pending, 0);
    await within(pool.drain(), 10_000, "drain");
    await assertIdleAccounting(pool, "aborts racing starts and finishes");
  });
});
