/**
 * A replacement or a grown worker that fails to start (its `setupWorker` throws): every task settles
 * exactly once all the same (the house rule). A directed task (its arguments move a buffer, so it is
 * posted to one worker only: lib/worker/mail.ts) that was held for a recycled worker's replacement, or
 * posted to a dead worker's replacement while it loaded, or posted to an index left empty, rejects with
 * `WorkerCrashedError` whose `cause` is the start's `ModuleLoadError`; broadcast parts held for it fail
 * likewise; an elastic pool's growth start that fails reaches `onError`, gives its slot and size back
 * (spec/Elastic.tla), and the pool runs its queued tasks on the others and grows again later.
 *
 * Every wait has a timeout that fails the test (a task that never settles is the bug these tests catch).
 */
import { ModuleLoadError, move, Pool, WorkerCrashedError } from "../../mod.ts";
import type * as tasks from "../fixtures/setup_tasks.ts";
import { counts, errorsOf, TASKS } from "./_setup.ts";
import { assert, assertEquals, runtime, test, within } from "../_test.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** What one submission came to: its value, or its error. */
type Settled = { ok: true; value: unknown } | { ok: false; error: unknown };

function settle(promise: Promise<unknown>): Promise<Settled> {
  return promise.then((value) => ({ ok: true, value }), (error) => ({ ok: false, error }));
}

/**
 * Submits a directed task (and, with `broadcasts`, a broadcast) every 10 ms until `onError` reported the
 * failed start, waits until those settle (by then nothing else is posted to the index: the failure's own
 * handling must settle them), then submits a few more (posted to an index left empty); returns every
 * submission's outcome, in order, and how many came before the report.
 */
async function submitAcross(
  pool: Pool<typeof tasks>,
  reported: { errors: unknown[] },
  broadcasts: boolean,
): Promise<{ directed: Settled[]; parts: Settled[]; before: number }> {
  const directed: Promise<Settled>[] = [];
  const parts: Promise<Settled>[] = [];
  const submit = () => {
    directed.push(settle(pool.run("lengthOf", move(new ArrayBuffer(8)))));
    if (broadcasts) parts.push(settle(pool.broadcast("add", 1, 2)));
  };
  const end = Date.now() + 20_000;
  while (reported.errors.length === 0 && Date.now() < end) {
    submit();
    await sleep(10);
  }
  assert(reported.errors.length > 0, "onError reported the failed start within 20 s");
  const before = directed.length;
  await within(Promise.all(directed), 20_000, "every directed task submitted before the report settles");
  await within(Promise.all(parts), 20_000, "every broadcast submitted before the report settles");
  for (let i = 0; i < 3; i++) submit();
  return {
    directed: await within(Promise.all(directed), 20_000, "every directed task settles"),
    parts: await within(Promise.all(parts), 20_000, "every broadcast settles"),
    before,
  };
}

/**
 * Each outcome is a value, or a WorkerCrashedError (a directed task's: its cause the failed start); some of
 * the first `before` (submitted before onError heard of the failure: held for the start, or posted to the
 * loading thread) are the latter.
 */
function checkOutcomes(outcomes: Settled[], value: unknown, what: string, before: number): void {
  let failed = 0;
  for (const [i, outcome] of outcomes.entries()) {
    if (outcome.ok) {
      assertEquals(outcome.value, value, `${what}: a value`);
      continue;
    }
    const error = outcome.error;
    assert(error instanceof WorkerCrashedError, `${what}: rejected with ${String(error)}`);
    if (i < before) failed++;
  }
  assert(failed > 0, `${what}: some of the ${before} submitted before the failure was reported were held for it`);
}

test(
  `replacement failure on ${runtime}: directed tasks and broadcast parts held for a recycled worker whose replacement's setup throws reject`,
  async () => {
    const reported = errorsOf();
    const pool = await within(
      Pool.create<typeof tasks>(TASKS, {
        workers: 1,
        recycle: { afterTasks: 1 },
        workerData: { label: "r", counts: counts(), failAfter: 1, failDelay: 300 },
        onError: reported.onError,
      }),
      30_000,
      "create",
    );
    try {
      assertEquals(await within(pool.run("add", 1, 2), 20_000, "the task that makes it due"), 3, "runs");
      const { directed, parts, before } = await submitAcross(pool, reported, true);
      const error = reported.errors[0];
      assert(error instanceof ModuleLoadError && /setupWorker threw/.test(error.message), `onError got ${error}`);
      checkOutcomes(directed, 8, "directed tasks", before);
      for (const outcome of directed) {
        if (!outcome.ok) {
          const cause = (outcome.error as Error).cause;
          assert(cause instanceof ModuleLoadError, `a held directed task's cause is the failed start: ${cause}`);
        }
      }
      checkOutcomes(parts, [3], "broadcasts", before);
    } finally {
      await within(pool.terminate(), 20_000, "terminate");
    }
  },
);

test(
  `replacement failure on ${runtime}: directed tasks waiting for a worker that died, whose replacement's setup throws, reject`,
  async () => {
    const reported = errorsOf();
    const pool = await within(
      Pool.create<typeof tasks>(TASKS, {
        workers: 1,
        workerData: { label: "d", counts: counts(), failAfter: 1, failDelay: 300 },
        onError: reported.onError,
      }),
      30_000,
      "create",
    );
    try {
      const crash = settle(pool.run("exitThread", 3));
      const { directed, before } = await submitAcross(pool, reported, false);
      const crashed = await within(crash, 20_000, "the crash");
      assert(!crashed.ok && crashed.error instanceof WorkerCrashedError, "the crashing task rejects");
      const error = reported.errors[0];
      assert(error instanceof ModuleLoadError && /setupWorker threw/.test(error.message), `onError got ${error}`);
      checkOutcomes(directed, 8, "directed tasks", before);
      for (const outcome of directed.slice(before)) {
        assert(!outcome.ok && outcome.error instanceof WorkerCrashedError, "posted with no worker left: rejects");
        assert(outcome.error.cause instanceof ModuleLoadError, `its cause is the failed start: ${outcome.error.cause}`);
      }
    } finally {
      await within(pool.terminate(), 20_000, "terminate");
    }
  },
);

test(
  `replacement failure on ${runtime}: an elastic pool's growth start that fails reaches onError, gives its slot back, and grows later`,
  async () => {
    const reported = errorsOf();
    const refuse = new Int32Array(new SharedArrayBuffer(4));
    const pool = await within(
      Pool.create<typeof tasks>(TASKS, {
        workers: { min: 1, max: 2 },
        workerData: { label: "e", counts: counts(), refuse },
        onError: reported.onError,
      }),
      30_000,
      "create",
    );
    try {
      Atomics.store(refuse, 0, 1);
      const view = new Int32Array(new SharedArrayBuffer(8));
      const held = pool.run("hold", view);
      while (Atomics.load(view, 0) === 0) await within(sleep(5), 1000, "sleep");
      // Queued behind the held worker, with nobody asleep: the pool grows, and the start fails.
      const queued = Array.from({ length: 10 }, (_, i) => pool.run("add", i, 1));
      const error = await within(reported.next(), 20_000, "onError for the failed start");
      assert(error instanceof ModuleLoadError && /setupWorker threw/.test(error.message), `onError got ${error}`);
      assertEquals(pool.stats().elastic!.current, 1, "the failed start is not counted current");
      Atomics.store(view, 1, 1);
      Atomics.notify(view, 1);
      await within(held, 20_000, "the held task");
      assertEquals(
        await within(Promise.all(queued), 20_000, "the queued tasks run on the worker left"),
        Array.from({ length: 10 }, (_, i) => i + 1),
        "every queued task ran",
      );
      assertEquals(pool.stats().elastic!.current, 1, "still one worker");
      // Starts allowed again: the next growth succeeds on the slot given back.
      Atomics.store(refuse, 0, 0);
      const again = new Int32Array(new SharedArrayBuffer(8));
      const heldAgain = pool.run("hold", again);
      while (Atomics.load(again, 0) === 0) await within(sleep(5), 1000, "sleep");
      const more = Array.from({ length: 10 }, (_, i) => pool.run("add", i, 2));
      const end = Date.now() + 20_000;
      while (pool.stats().elastic!.current < 2 && Date.now() < end) await sleep(10);
      assertEquals(pool.stats().elastic!.current, 2, "the pool grew again after the failed start");
      assertEquals(
        await within(Promise.all(more), 20_000, "the tasks queued for the grown worker"),
        Array.from({ length: 10 }, (_, i) => i + 2),
        "every task ran",
      );
      Atomics.store(again, 1, 1);
      Atomics.notify(again, 1);
      await within(heldAgain, 20_000, "the second held task");
    } finally {
      await within(pool.terminate(), 20_000, "terminate");
    }
  },
);

test(
  `replacement failure on ${runtime}: an elastic pool's dead worker whose replacement fails gives its slot and size back; the pool grows again`,
  async () => {
    const reported = errorsOf();
    const refuse = new Int32Array(new SharedArrayBuffer(4));
    const pool = await within(
      Pool.create<typeof tasks>(TASKS, {
        workers: { min: 1, max: 2 },
        workerData: { label: "e", counts: counts(), refuse },
        onError: reported.onError,
      }),
      30_000,
      "create",
    );
    try {
      Atomics.store(refuse, 0, 1);
      const crash = await within(settle(pool.run("exitThread", 3)), 20_000, "the crash");
      assert(!crash.ok && crash.error instanceof WorkerCrashedError, "the crashing task rejects");
      const error = await within(reported.next(), 20_000, "onError for the failed replacement");
      assert(error instanceof ModuleLoadError && /setupWorker threw/.test(error.message), `onError got ${error}`);
      // (A growth start may fail too, and be the first report: the count is what tells the replacement's.)
      const end = Date.now() + 20_000;
      while (pool.stats().elastic!.current !== 0 && Date.now() < end) await sleep(10);
      assertEquals(pool.stats().elastic!.current, 0, "the failed replacement's slot is given back");
      // Starts allowed again: queued work makes the pool grow into a slot given back.
      Atomics.store(refuse, 0, 0);
      assertEquals(
        await within(Promise.all(Array.from({ length: 10 }, (_, i) => pool.run("add", i, 3))), 20_000, "tasks"),
        Array.from({ length: 10 }, (_, i) => i + 3),
        "every task ran on a grown worker",
      );
      assert(pool.stats().elastic!.current >= 1, "a worker again");
    } finally {
      await within(pool.terminate(), 20_000, "terminate");
    }
  },
);

test(
  `replacement failure on ${runtime}: directed tasks and broadcast parts posted to an elastic pool's growing worker whose start fails reject`,
  async () => {
    const reported = errorsOf();
    const refuse = new Int32Array(new SharedArrayBuffer(4));
    const pool = await within(
      Pool.create<typeof tasks>(TASKS, {
        workers: { min: 1, max: 2 },
        workerData: { label: "g", counts: counts(), refuse, failDelay: 300 },
        onError: reported.onError,
      }),
      30_000,
      "create",
    );
    try {
      Atomics.store(refuse, 0, 1);
      const view = new Int32Array(new SharedArrayBuffer(8));
      const held = pool.run("hold", view);
      while (Atomics.load(view, 0) === 0) await within(sleep(5), 1000, "sleep");
      // Queued behind the held worker, with nobody asleep: the pool grows; the start fails after 300 ms.
      const queued = Array.from({ length: 4 }, (_, i) => pool.run("add", i, 1));
      // Meanwhile directed tasks and broadcasts go to the live worker and to the starting one in turn (a
      // starting slot takes messages: its thread reads them once loaded).
      const directed: Promise<Settled>[] = [];
      const parts: Promise<Settled>[] = [];
      const end = Date.now() + 20_000;
      while (reported.errors.length === 0 && Date.now() < end) {
        directed.push(settle(pool.run("lengthOf", move(new ArrayBuffer(8)))));
        parts.push(settle(pool.broadcast("add", 1, 2)));
        await sleep(10);
      }
      const error = reported.errors[0];
      assert(error instanceof ModuleLoadError && /setupWorker threw/.test(error.message), `onError got ${error}`);
      Atomics.store(view, 1, 1);
      Atomics.notify(view, 1);
      await within(held, 20_000, "the held task");
      const directedOutcomes = await within(Promise.all(directed), 20_000, "every directed task settles");
      const partOutcomes = await within(Promise.all(parts), 20_000, "every broadcast settles");
      checkOutcomes(directedOutcomes, 8, "directed tasks", directedOutcomes.length);
      for (const outcome of directedOutcomes) {
        if (!outcome.ok) {
          const cause = (outcome.error as Error).cause;
          assert(cause instanceof ModuleLoadError, `a directed task's cause is the failed start: ${cause}`);
        }
      }
      for (const outcome of partOutcomes) {
        if (outcome.ok) assertEquals(outcome.value, [3], "a broadcast to the live worker alone");
        else assert(outcome.error instanceof WorkerCrashedError, `a broadcast rejected with ${String(outcome.error)}`);
      }
      assertEquals(
        await within(Promise.all(queued), 20_000, "the queued tasks"),
        Array.from({ length: 4 }, (_, i) => i + 1),
        "run on the worker left",
      );
    } finally {
      await within(pool.terminate(), 20_000, "terminate");
    }
  },
);

test(
  `replacement failure on ${runtime}: an elastic pool's recycled worker whose replacement fails while another is live gives its slot back, its deque's task runs elsewhere, and the pool grows again`,
  async () => {
    const reported = errorsOf();
    const refuse = new Int32Array(new SharedArrayBuffer(4));
    const pool = await within(
      Pool.create<typeof tasks>(TASKS, {
        workers: { min: 2, max: 2 },
        recycle: { afterTasks: 1 },
        workerData: { label: "r", counts: counts(), refuse },
        onError: reported.onError,
      }),
      30_000,
      "create",
    );
    try {
      // One worker (A) held; the other (B) runs the graph's root, so the node it enables goes onto B's own
      // deque (worker/loop.ts), and B, due after that task, leaves with the node still there.
      const view = new Int32Array(new SharedArrayBuffer(8));
      const held = settle(pool.run("hold", view));
      while (Atomics.load(view, 0) === 0) await within(sleep(5), 1000, "sleep");
      Atomics.store(refuse, 0, 1);
      const g = pool.graph();
      const sink = settle(g.submit(g.run("add", g.run("add", 1, 2), 1)));
      const error = await within(reported.next(), 20_000, "onError for B's failed replacement");
      assert(error instanceof ModuleLoadError && /setupWorker threw/.test(error.message), `onError got ${error}`);
      // B's slot is given back: no worker is counted there (before: its slot stayed AWAKE with no thread in
      // it, counted current for ever, and growth could never start a worker there again).
      const end = Date.now() + 20_000;
      while (pool.stats().elastic!.current !== 1 && Date.now() < end) await sleep(10);
      assertEquals(pool.stats().elastic!.current, 1, "the failed replacement's slot is given back");
      // A is released (and recycled: starts allowed again): the node left in B's deque runs on a live
      // worker (a slot given back is skipped by thieves: it was moved to the injector).
      Atomics.store(refuse, 0, 0);
      Atomics.store(view, 1, 1);
      Atomics.notify(view, 1);
      assert((await within(held, 20_000, "the held task")).ok, "the held task runs");
      assertEquals(
        await within(sink, 20_000, "the node left in the failed slot's deque"),
        { ok: true, value: 4 },
        "runs",
      );
      // And the pool grows into the slot given back when work waits.
      const again = new Int32Array(new SharedArrayBuffer(8));
      const heldAgain = settle(pool.run("hold", again));
      while (Atomics.load(again, 0) === 0) await within(sleep(5), 1000, "sleep");
      const more = Array.from({ length: 6 }, (_, i) => settle(pool.run("add", i, 2)));
      const grown = Date.now() + 20_000;
      while (pool.stats().elastic!.current < 2 && Date.now() < grown) await sleep(10);
      assertEquals(pool.stats().elastic!.current, 2, "the pool grew again into the slot given back");
      assertEquals(
        await within(Promise.all(more), 20_000, "the tasks queued for the grown worker"),
        Array.from({ length: 6 }, (_, i) => ({ ok: true, value: i + 2 })),
        "every task ran",
      );
      Atomics.store(again, 1, 1);
      Atomics.notify(again, 1);
      assert((await within(heldAgain, 20_000, "the second held task")).ok, "the second held task runs");
      const others = reported.errors.filter((e) => !(e instanceof ModuleLoadError));
      assertEquals(others.map(String), [], "onError got only failed starts");
    } finally {
      await within(pool.terminate(), 20_000, "terminate");
    }
  },
);
