/**
 * Setup once per worker (issue 49; lib/worker/setup.ts): the pool's `workerData` reaches every worker's
 * `setupWorker` before it takes a task, the first workers and a replacement after a death; a setup may be
 * async; a setup that throws fails `Pool.create` with `ModuleLoadError` (first workers) or, for a
 * replacement, is reported to `onError` while the pool runs on; `teardownWorker` runs on close, and its
 * failures (a throw, a hang) reach `onError` as `WorkerTeardownError` while close still settles; the two
 * exports are not tasks (a type error, and `TaskNotFoundError` at run time).
 */
import { ModuleLoadError, Pool, TaskNotFoundError, WorkerTeardownError } from "../../mod.ts";
import type * as tasks from "../fixtures/setup_tasks.ts";
import { counts, errorsOf, TASKS } from "./_setup.ts";
import { assert, assertEquals, runtime, test, within } from "../_test.ts";

test(`setup on ${runtime}: workerData reaches every worker's async setupWorker before its first task`, async () => {
  const c = counts();
  const pool = await within(
    Pool.create<typeof tasks>(TASKS, { workers: 3, workerData: { label: "three", counts: c } }),
    30_000,
    "create",
  );
  try {
    // Every worker is set up (awaited, once) before create resolves.
    assertEquals(Atomics.load(c, 0), 3, "setups run");
    const seen = await within(pool.broadcast("seen"), 20_000, "broadcast");
    assertEquals(seen, [1, 2, 3].map(() => ({ label: "three", setups: 1 })), "each worker saw the data once");
    const results = await within(Promise.all(Array.from({ length: 30 }, () => pool.run("seen"))), 20_000, "runs");
    assert(results.every((r) => r.label === "three"), "every task ran on a set-up worker");
  } finally {
    await within(pool.close(), 20_000, "close");
  }
  assertEquals(Atomics.load(c, 1), 3, "teardownWorker ran once on each worker at close");
});

test(`setup on ${runtime}: a replacement after a worker's death is set up with the same data`, async () => {
  const c = counts();
  const pool = await within(
    Pool.create<typeof tasks>(TASKS, { workers: 2, workerData: { label: "again", counts: c } }),
    30_000,
    "create",
  );
  try {
    const replaced = new Promise<void>((resolve) => pool.events.addEventListener("workerreplaced", () => resolve()));
    await within(pool.run("exitThread", 3).catch(() => undefined), 20_000, "the crash");
    await within(replaced, 20_000, "the replacement");
    assertEquals(Atomics.load(c, 0), 3, "the replacement ran setup");
    const seen = await within(pool.broadcast("seen"), 20_000, "broadcast");
    assertEquals(seen, [{ label: "again", setups: 1 }, { label: "again", setups: 1 }], "both workers set up");
  } finally {
    await within(pool.close(), 20_000, "close");
  }
});

test(`setup on ${runtime}: a setupWorker that throws fails Pool.create with ModuleLoadError (its cause)`, async () => {
  const error = await within(
    Pool.create<typeof tasks>(TASKS, { workers: 2, workerData: { label: "x", counts: counts(), failAfter: 0 } })
      .then(() => undefined, (e: unknown) => e),
    30_000,
    "create",
  );
  assert(error instanceof ModuleLoadError, `create rejected with ${String(error)}`);
  assert(/setupWorker threw/.test(error.message), error.message);
  assert(error.cause instanceof Error && /setup \d refused/.test(error.cause.message), `cause: ${error.cause}`);
});

test(`setup on ${runtime}: a replacement whose setup throws goes to onError; the pool runs on the others`, async () => {
  const reported = errorsOf();
  const pool = await within(
    Pool.create<typeof tasks>(TASKS, {
      workers: 2,
      workerData: { label: "x", counts: counts(), failAfter: 2 },
      onError: reported.onError,
    }),
    30_000,
    "create",
  );
  try {
    await within(pool.run("exitThread", 3).catch(() => undefined), 20_000, "the crash");
    const error = await within(reported.next(), 20_000, "onError");
    assert(error instanceof ModuleLoadError && /setupWorker threw/.test(error.message), `onError got ${error}`);
    const sums = await within(
      Promise.all(Array.from({ length: 50 }, (_, i) => pool.run("add", i, 1))),
      20_000,
      "tasks after the failed start",
    );
    assertEquals(sums, Array.from({ length: 50 }, (_, i) => i + 1), "every task ran");
  } finally {
    await within(pool.close(), 20_000, "close");
  }
});

test(`setup on ${runtime}: a teardown that throws or hangs reaches onError as WorkerTeardownError; close settles`, async () => {
  for (const teardown of ["throw", "hang"] as const) {
    const reported = errorsOf();
    const pool = await within(
      Pool.create<typeof tasks>(TASKS, {
        workers: 1,
        workerData: { label: "x", counts: counts(), teardown },
        onError: reported.onError,
      }),
      30_000,
      "create",
    );
    assertEquals(await within(pool.run("add", 1, 2), 20_000, "a task"), 3, "runs");
    await within(pool.close(), 20_000, `close with a teardown that ${teardown}s`);
    const error = await within(reported.next(), 20_000, `onError (${teardown})`);
    assert(error instanceof WorkerTeardownError, `${teardown}: onError got ${error}`);
    assertEquals(error.worker, 0, "the worker");
    if (teardown === "throw") assert(error.cause instanceof Error && error.cause.message === "teardown boom", "cause");
  }
});

test(`setup on ${runtime}: setupWorker and teardownWorker are not tasks; uncarriable workerData is refused`, async () => {
  const pool = await within(
    Pool.create<typeof tasks>(TASKS, { workers: 1, workerData: { label: "x", counts: counts() } }),
    30_000,
    "create",
  );
  try {
    for (const name of ["setupWorker", "teardownWorker"] as const) {
      // @ts-expect-error: the worker's own setup and teardown are not task names
      const error = await within(pool.run(name).then(() => undefined, (e: unknown) => e), 20_000, name);
      assert(error instanceof TaskNotFoundError, `${name}: ${String(error)}`);
      assert(!error.known.includes(name), `${name} is not listed as a task`);
    }
  } finally {
    await within(pool.close(), 20_000, "close");
  }
  const refused = await within(
    Pool.create(TASKS, { workers: 1, workerData: { f: () => 1 } }).then(() => undefined, (e: unknown) => e),
    20_000,
    "create with a function in workerData",
  );
  assert(refused instanceof TypeError && /'workerData' cannot be sent/.test(refused.message), String(refused));
});

test(
  `setup on ${runtime}: an elastic pool's grown workers are set up with the data, and each retiring one tears down before its slot is reused`,
  async () => {
    const c = counts();
    const pool = await within(
      Pool.create<typeof tasks>(TASKS, {
        workers: { min: 1, max: 2 },
        idleTimeout: 50,
        workerData: { label: "elastic", counts: c, teardown: "slow" },
      }),
      30_000,
      "create",
    );
    try {
      for (let cycle = 1; cycle <= 2; cycle++) {
        // Two tasks that hold their workers: the pool grows to two, and the grown worker was set up first.
        const view = new Int32Array(new SharedArrayBuffer(8));
        const held = [pool.run("hold", view), pool.run("hold", view)];
        while (Atomics.load(view, 0) < 2) await new Promise((resolve) => setTimeout(resolve, 10));
        Atomics.store(view, 1, 1);
        const setups = await within(Promise.all(held), 20_000, "the held tasks");
        assertEquals(setups, [1, 1], `cycle ${cycle}: both workers set up once`);
        // Idle past the timeout: the grown worker retires, and its teardown has run by then.
        while (pool.stats().elastic!.retired < cycle) await new Promise((resolve) => setTimeout(resolve, 10));
        assertEquals(Atomics.load(c, 0), 1 + cycle, `cycle ${cycle}: a setup for the first worker and each grown one`);
        assertEquals(
          Atomics.load(c, 1),
          cycle,
          `cycle ${cycle}: a teardown for each retired worker, before it is counted`,
        );
      }
    } finally {
      await within(pool.close(), 20_000, "close");
    }
    assertEquals(Atomics.load(c, 1), 3, "and the last worker's at close");
  },
  60_000,
);
