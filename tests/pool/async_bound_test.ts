/**
 * The bound on a worker's async tasks (the pool's `asyncTasksPerWorker`, issue 30): a worker holding that
 * many takes no task until one settles, so the others take them (a join's wait included); a worker's death
 * fails at most that many; broadcast parts and close() still reach a worker at its bound; and a bad bound
 * is refused by name.
 *
 * The tasks (tests/fixtures/async_bound_tasks.ts) count themselves per worker in shared memory as they
 * start and uncount themselves before they settle, and wait for the test to release their ticket: the
 * most any worker held at once is recorded there, so no moment of excess escapes the check. Caught by
 * ASYNC_BOUND_MUTANTS in the mutation run (tests/mutants/run.ts, group async_bound).
 */
import { PoolTerminatedError, WorkerCrashedError } from "../../lib/errors.ts";
import { Pool } from "../../lib/pool.ts";
import type * as tasks from "../fixtures/async_bound_tasks.ts";
import { PROBE } from "../fixtures/async_bound_tasks.ts";
import { assert, assertEquals, assertRejects, test, within } from "../_test.ts";
import { tableOf } from "./_accounting.ts";

const TASKS = new URL("../fixtures/async_bound_tasks.ts", import.meta.url);

function newProbe(): Int32Array {
  return new Int32Array(new SharedArrayBuffer(PROBE.length * 4));
}

/** Resolves once `condition` holds (polled every 2 ms); `within` bounds the wait. */
function until(condition: () => boolean, what: string): Promise<void> {
  return within(
    new Promise<void>((resolve) => {
      const poll = () => (condition() ? resolve() : setTimeout(poll, 2));
      poll();
    }),
    20_000,
    what,
  );
}

/**
 * Marks `promises` handled (they are awaited later, or not at all if an assertion fails first: then the
 * pool's terminate() rejects them, which must fail the test, not the file).
 */
function handled<T>(promises: Promise<T>[]): Promise<T>[] {
  for (const promise of promises) promise.catch(() => {});
  return promises;
}

/**
 * Wakes every thread waiting on a task record's latch (a join's wait: fork_join.ts `awaitFork`), and says
 * how many there were. A debug view through the pool's internals (as tests/pool/_accounting.ts's): the
 * join's wait is timed and rechecks its latch, so a wake changes nothing but when it looks again.
 */
function wakeJoinWaiters(pool: unknown): number {
  const table = tableOf(pool);
  let woken = 0;
  for (let i = 0; i <= table.indexMask; i++) woken += Atomics.notify(table.words, table.fields.latchWord(i));
  return woken;
}

/** The tasks each slot (worker) holds now, for the slots taken so far. */
function heldBySlot(probe: Int32Array): number[] {
  const slots = Atomics.load(probe, PROBE.slots);
  return Array.from({ length: slots }, (_, s) => Atomics.load(probe, PROBE.held + s));
}

test(
  "2 workers, a bound of 2: no worker ever holds more than 2 async tasks; the rest start one by one as room frees, and all settle",
  async () => {
    const K = 2, N = 10;
    const pool = await Pool.create<typeof tasks>(TASKS, { workers: 2, asyncTasksPerWorker: K });
    try {
      const probe = newProbe();
      const all = handled(Array.from({ length: N }, () => pool.run("held", probe)));
      for (let released = 0; released < N; released++) {
        // `released` tickets let go (and finished, or finishing): 2K more at most may have started.
        const expected = Math.min(2 * K + released, N);
        // The first check waits for a state the design defines, not a delay: both workers took tasks and
        // then let their event loops turn (a held task of each polled). A worker's loop yields only at its
        // bound, with nothing left to take, or after 16 tasks (loop.ts): so there each worker that obeys
        // the bound holds K, the rest still queued, and one that ignores it had taken all N first.
        await until(
          () =>
            Atomics.load(probe, PROBE.started) >= expected &&
            (released > 0 ||
              (Atomics.load(probe, PROBE.slots) === 2 && [0, 1].every((s) => Atomics.load(probe, PROBE.polled + s)))),
          `${expected} tasks started${released === 0 ? ", and both workers' event loops turned" : ""}`,
        );
        assertEquals(Atomics.load(probe, PROBE.started), expected, `tasks started with ${released} released`);
        if (released === 0) assertEquals(heldBySlot(probe), [K, K], "each worker holds K: the other took the rest");
        Atomics.store(probe, PROBE.released, released + 1);
      }
      const tickets = await within(Promise.all(all), 20_000, "every task");
      assertEquals([...tickets].sort((a, b) => a - b), Array.from({ length: N }, (_, i) => i), "tickets");
      assertEquals(Atomics.load(probe, PROBE.maxHeld), K, "the most async tasks one worker held at once");
    } finally {
      await within(pool.terminate(), 10_000, "terminate");
    }
  },
  60_000,
);

test(
  "a worker that dies with the bound at 3 takes at most 3 async tasks down (the killer included); every other task resolves",
  async () => {
    const K = 3;
    const pool = await Pool.create<typeof tasks>(TASKS, { workers: 2, asyncTasksPerWorker: K });
    try {
      const probe = newProbe();
      const first = handled(Array.from({ length: 2 * K }, () => pool.run("held", probe)));
      await until(() => Atomics.load(probe, PROBE.started) >= 2 * K, "both workers at their bound");
      assertEquals(heldBySlot(probe), [K, K], "each worker holds K");
      // Queued behind the full workers: the killer first, then more. Ticket 0 let go: its worker has room
      // for one, and takes the killer; it dies holding K - 1 tasks and the killer, and takes no more.
      const [killed] = handled([pool.run("killer", probe)]);
      const rest = handled(Array.from({ length: 12 }, () => pool.run("held", probe)));
      Atomics.store(probe, PROBE.released, 1);
      const error = await within(assertRejects(killed), 20_000, "the killer");
      assert(error instanceof WorkerCrashedError, `the killer: WorkerCrashedError, received ${String(error)}`);
      Atomics.store(probe, PROBE.released, 1_000_000);
      const settled = await within(Promise.allSettled([...first, ...rest]), 30_000, "every other task");
      const crashed = settled.filter((s) => s.status === "rejected" && s.reason instanceof WorkerCrashedError);
      const others = settled.filter((s) => !(s.status === "rejected" && s.reason instanceof WorkerCrashedError));
      assert(crashed.length + 1 <= K, `tasks failed by the death, the killer included: ${crashed.length + 1} > ${K}`);
      assertEquals(others.filter((s) => s.status !== "fulfilled").length, 0, "other tasks that did not resolve");
      assert(Atomics.load(probe, PROBE.maxHeld) <= K, `one worker held ${Atomics.load(probe, PROBE.maxHeld)} > ${K}`);
      assertEquals(pool.stats().workerCrashes, 1, "one death");
    } finally {
      await within(pool.terminate(), 10_000, "terminate");
    }
  },
  60_000,
);

test(
  "a broadcast reaches workers waiting at their bound: its parts run while their async tasks still wait",
  async () => {
    const K = 2;
    const pool = await Pool.create<typeof tasks>(TASKS, { workers: 2, asyncTasksPerWorker: K });
    try {
      const probe = newProbe();
      const all = handled(Array.from({ length: 2 * K + 2 }, () => pool.run("held", probe)));
      await until(() => Atomics.load(probe, PROBE.started) >= 2 * K, "both workers at their bound");
      // Nothing is released until the broadcast has settled: its parts must run on full workers.
      const parts = await within(pool.broadcast("mark", probe), 20_000, "the broadcast to full workers");
      assertEquals(parts.length, 2, "one part per worker");
      assertEquals(Atomics.load(probe, PROBE.started), 2 * K, "no task started meanwhile");
      Atomics.store(probe, PROBE.released, 1_000_000);
      await within(Promise.all(all), 20_000, "every task");
    } finally {
      await within(pool.terminate(), 10_000, "terminate");
    }
  },
  60_000,
);

test(
  "a worker waiting in a join at its bound of 1 takes no more async tasks there: its join's search stops at the bound",
  async () => {
    const K = 1, N = 6;
    const pool = await Pool.create<typeof tasks>(TASKS, { workers: 2, asyncTasksPerWorker: K });
    try {
      const probe = newProbe();
      // b is stolen by the other worker and holds it; the joiner waits in its join, searching for work,
      // once the N tasks are queued (its `a` returns only then): each of its searches sees all of them.
      const joined = handled([pool.run("joinWithStolenB", probe)]);
      await until(() => Atomics.load(probe, PROBE.bStarted) === 1, "b started on the other worker");
      const all = handled(Array.from({ length: N }, () => pool.run("held", probe)));
      Atomics.store(probe, PROBE.queued, 1);
      // The check is made at a point the design defines, not after a delay: once the joiner has taken a
      // task and then waits on its latch (the join's wait does so only when it found nothing to run).
      // There a joiner that obeys the bound holds 1, the rest still queued; one whose join went on
      // searching took all N before its search came back empty (nothing else can take them: the other
      // worker is in b). Before, the check came right after the first start: a joiner delayed there by a
      // loaded machine took the rest only later, after b was released, and the mutant passed.
      await until(
        () => Atomics.load(probe, PROBE.started) >= 1 && wakeJoinWaiters(pool) > 0,
        "the joiner took one async task, then waited on its latch",
      );
      assertEquals(Atomics.load(probe, PROBE.started), 1, "async tasks the joiner took at its bound of 1");
      Atomics.store(probe, PROBE.bReleased, 1);
      Atomics.notify(probe, PROBE.bReleased);
      assertEquals(await within(joined[0], 20_000, "the join"), 2, "b's result");
      Atomics.store(probe, PROBE.released, 1_000_000);
      await within(Promise.all(all), 20_000, "every task");
      assertEquals(Atomics.load(probe, PROBE.maxHeld), K, "the most async tasks one worker held at once");
    } finally {
      await within(pool.terminate(), 10_000, "terminate");
    }
  },
  60_000,
);

test(
  "close() while both workers are at their bound: the queued tasks still run as room frees, and close resolves",
  async () => {
    const K = 2;
    const pool = await Pool.create<typeof tasks>(TASKS, { workers: 2, asyncTasksPerWorker: K });
    try {
      const probe = newProbe();
      const all = handled(Array.from({ length: 3 * K }, () => pool.run("held", probe)));
      await until(() => Atomics.load(probe, PROBE.started) >= 2 * K, "both workers at their bound");
      const closing = pool.close();
      Atomics.store(probe, PROBE.released, 1_000_000);
      await within(closing, 20_000, "close");
      assertEquals((await Promise.all(all)).length, 3 * K, "every task resolved");
      assertEquals(Atomics.load(probe, PROBE.started), 3 * K, "the queued ones ran");
    } finally {
      // Closed already, this does nothing; after a close that hung, it stops the workers.
      await within(pool.terminate(), 10_000, "terminate");
    }
  },
  60_000,
);

test(
  "terminate() while both workers are at their bound: every unsettled task rejects with PoolTerminatedError",
  async () => {
    const K = 2;
    const pool = await Pool.create<typeof tasks>(TASKS, { workers: 2, asyncTasksPerWorker: K });
    const probe = newProbe();
    const all = handled(Array.from({ length: 3 * K }, () => pool.run("held", probe)));
    await until(() => Atomics.load(probe, PROBE.started) >= 2 * K, "both workers at their bound");
    await within(pool.terminate(), 10_000, "terminate");
    const settled = await within(Promise.allSettled(all), 10_000, "every task");
    assertEquals(
      settled.filter((s) => !(s.status === "rejected" && s.reason instanceof PoolTerminatedError)).length,
      0,
      "tasks that did not reject with PoolTerminatedError",
    );
  },
  60_000,
);

test("bad input: asyncTasksPerWorker must be a positive integer or Infinity, named in the error", async () => {
  for (const bad of [0, -1, 1.5, NaN, -Infinity]) {
    const error = await assertRejects(Pool.create(TASKS, { workers: 1, asyncTasksPerWorker: bad }));
    assert(error instanceof RangeError, `RangeError for ${bad}: ${String(error)}`);
    assert(
      (error as Error).message.includes(
        `Cannot create pool as 'asyncTasksPerWorker' must be a positive integer, or Infinity: received ${bad}`,
      ),
      `message for ${bad}: ${(error as Error).message}`,
    );
  }
  const typed = await assertRejects(Pool.create(TASKS, { workers: 1, asyncTasksPerWorker: "2" as unknown as number }));
  assert(typed instanceof TypeError && (typed as Error).message.includes("received '2' (a string)"), String(typed));
  for (const good of [1, Infinity]) {
    const pool = await Pool.create(TASKS, { workers: 1, asyncTasksPerWorker: good });
    await within(pool.terminate(), 10_000, "terminate");
  }
}, 60_000);
