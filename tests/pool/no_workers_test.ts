/**
 * A fixed pool left with no worker (every worker died and every replacement failed to start: its
 * `setupWorker` throws) settles every task all the same (the house rule): tasks queued in the injector
 * reject with `WorkerCrashedError` whose `cause` is the last failed start's `ModuleLoadError`, a submission
 * after that rejects at once with the same, `onError` says so once, and close() still settles.
 *
 * Every wait has a timeout that fails the test (a task that never settles is the bug this test catches).
 */
import { ModuleLoadError, move, Pool, WorkerCrashedError } from "../../mod.ts";
import { openProducer } from "../../lib/pool_producer.ts";
import type * as tasks from "../fixtures/setup_tasks.ts";
import { assert, assertEquals, runtime, test, within } from "../_test.ts";
import { assertIdleAccounting } from "./_accounting.ts";
import { type ProducerChannel, wakeProducer } from "../../lib/protocol/producers.ts";

const TASKS = new URL("../fixtures/setup_tasks.ts", import.meta.url);

type Settled = { ok: true; value: unknown } | { ok: false; error: unknown };

function settle(promise: Promise<unknown>): Promise<Settled> {
  return promise.then((value) => ({ ok: true, value }), (error) => ({ ok: false, error }));
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * An elastic pool of one worker (up to `max`; its workers count their starts under `label`) whose starts
 * fail while `refuse[0]` is set (`producers`: the pool's slots for producers in other threads, if not its default).
 */
async function refusingPool(
  label: string,
  options: { producers?: number; max?: number; onError?: (error: unknown) => void } = {},
): Promise<{ pool: Pool<typeof tasks>; refuse: Int32Array }> {
  const refuse = new Int32Array(new SharedArrayBuffer(4));
  const pool = await within(
    Pool.create<typeof tasks>(TASKS, {
      workers: { min: 1, max: options.max ?? 1 },
      ...(options.producers === undefined ? {} : { producers: options.producers }),
      workerData: { label, counts: new Int32Array(new SharedArrayBuffer(8)), refuse },
      onError: options.onError ?? (() => {}),
    }),
    30_000,
    "create",
  );
  return { pool, refuse };
}

/** Sets the refusal and kills the one worker: its replacement fails. Returns after the crashing task rejects. */
async function killWithRefusal(pool: Pool<typeof tasks>, refuse: Int32Array): Promise<void> {
  Atomics.store(refuse, 0, 1);
  const crashed = await within(settle(pool.run("exitThread", 3)), 20_000, "the crash");
  assert(!crashed.ok && crashed.error instanceof WorkerCrashedError, "the crashing task rejects");
}

/**
 * Runs a first task on `pool`'s worker, then sets the refusal and submits a task that kills that worker:
 * its replacement will fail. Returns that task's outcome and a `hold` flag (word 1 set: the held task
 * returns at once) for the graphs queued behind it.
 */
async function crashWithRefusal(
  pool: Pool<typeof tasks>,
  refuse: Int32Array,
): Promise<{ crash: Promise<Settled>; ran: Int32Array }> {
  assertEquals(await within(pool.run("add", 1, 2), 20_000, "a first task"), 3, "runs");
  Atomics.store(refuse, 0, 1);
  const crash = settle(pool.run("exitThread", 3));
  const ran = new Int32Array(new SharedArrayBuffer(8));
  Atomics.store(ran, 1, 1);
  return { crash, ran };
}

function noWorkerLeft(outcome: Settled, what: string): void {
  assert(!outcome.ok, `${what}: rejected (got ${outcome.ok ? String(outcome.value) : ""})`);
  const error = outcome.error;
  assert(error instanceof WorkerCrashedError, `${what}: a WorkerCrashedError (got ${String(error)})`);
  assert(/no worker left/.test(error.message), `${what}: says no worker is left (${error.message})`);
  assert(error.cause instanceof ModuleLoadError, `${what}: its cause is the failed start (${String(error.cause)})`);
}

test(
  `no workers on ${runtime}: a 1-worker pool whose worker dies and whose replacement's setup throws rejects its queued and later tasks`,
  async () => {
    const errors: unknown[] = [];
    const pool = await within(
      Pool.create<typeof tasks>(TASKS, {
        workers: 1,
        workerData: { label: "n", counts: new Int32Array(new SharedArrayBuffer(8)), failAfter: 1 },
        onError: (error) => errors.push(error),
      }),
      30_000,
      "create",
    );
    try {
      const view = new Int32Array(new SharedArrayBuffer(8));
      const held = settle(pool.run("hold", view));
      while (Atomics.load(view, 0) === 0) await within(sleep(5), 1000, "sleep");
      // Queued behind the held task: the one that kills the worker first, then others.
      const crash = settle(pool.run("exitThread", 3));
      const queued = Array.from({ length: 8 }, (_, i) => settle(pool.run("add", i, 1)));
      Atomics.store(view, 1, 1);
      Atomics.notify(view, 1);
      assertEquals(await within(held, 20_000, "the held task"), { ok: true, value: 1 }, "the held task runs");
      const crashed = await within(crash, 20_000, "the crash");
      assert(!crashed.ok && crashed.error instanceof WorkerCrashedError, "the crashing task rejects");
      for (const [i, outcome] of (await within(Promise.all(queued), 20_000, "every queued task settles")).entries()) {
        if (outcome.ok) assertEquals(outcome.value, i + 1, "a queued task ran (before the crash)");
        else noWorkerLeft(outcome, `queued task ${i}`);
      }
      // A submission now rejects at once (settled within a turn of the event loop, no worker asked).
      const late = settle(pool.run("add", 1, 2));
      const lateDirected = settle(pool.run("lengthOf", move(new ArrayBuffer(8))));
      noWorkerLeft(await within(late, 1000, "a later submission"), "a later submission");
      noWorkerLeft(await within(lateDirected, 1000, "a later directed submission"), "a later directed submission");
      // onError: the failed start, and once that no worker is left.
      const told = errors.filter((e) => e instanceof WorkerCrashedError && /no worker left/.test(e.message));
      assertEquals(told.length, 1, `onError told once that no worker is left (${errors.map(String).join("; ")})`);
      assert(errors.some((e) => e instanceof ModuleLoadError), "onError got the failed start");
      await within(pool.close(), 20_000, "close settles");
    } finally {
      await within(pool.terminate(), 20_000, "terminate");
    }
  },
);

test(
  `no workers on ${runtime}: a directed task posted to a replacement that then fails to start says so (not that a worker died running it)`,
  async () => {
    const errors: unknown[] = [];
    const pool = await within(
      Pool.create<typeof tasks>(TASKS, {
        workers: 1,
        workerData: { label: "m", counts: new Int32Array(new SharedArrayBuffer(8)), failAfter: 1, failDelay: 300 },
        onError: (error) => errors.push(error),
      }),
      30_000,
      "create",
    );
    try {
      const crashed = await within(settle(pool.run("exitThread", 3)), 20_000, "the crash");
      assert(!crashed.ok && crashed.error instanceof WorkerCrashedError, "the crashing task rejects");
      // Its death was handled (that rejected it): the replacement is loading, and fails in 300 ms.
      const directed = await within(settle(pool.run("lengthOf", move(new ArrayBuffer(8)))), 20_000, "directed");
      assert(!directed.ok && directed.error instanceof WorkerCrashedError, "the directed task rejects");
      const message = (directed.error as Error).message;
      assert(/failed to start/.test(message) && !/died/.test(message), `its message is true: ${message}`);
      assert((directed.error as Error).cause instanceof ModuleLoadError, "its cause is the failed start");
    } finally {
      await within(pool.terminate(), 20_000, "terminate");
    }
  },
);

test(
  `no workers on ${runtime}: an elastic pool left with no worker rejects a directed task posted to the index whose start failed`,
  async () => {
    const errors: unknown[] = [];
    const { pool, refuse } = await refusingPool("v", { onError: (error) => errors.push(error) });
    try {
      await killWithRefusal(pool, refuse);
      const end = Date.now() + 20_000;
      while (!errors.some((e) => e instanceof ModuleLoadError) && Date.now() < end) await sleep(10);
      assert(errors.some((e) => e instanceof ModuleLoadError), "onError got the failed replacement");
      // No worker, and its index's start failed: the directed task (posted there) must not be dropped.
      const directed = await within(settle(pool.run("lengthOf", move(new ArrayBuffer(8)))), 20_000, "directed");
      assert(!directed.ok && directed.error instanceof WorkerCrashedError, "the directed task rejects");
      assert((directed.error as Error).cause instanceof ModuleLoadError, "its cause is the failed start");
      // As the task of an index whose start failed (owner.ts post: Workforce.vacancy), which it was posted to.
      const message = (directed.error as Error).message;
      assert(/failed to start/.test(message), `its message names its worker's failed start: ${message}`);
    } finally {
      await within(pool.terminate(), 20_000, "terminate");
    }
  },
);

test(
  `no workers on ${runtime}: directed tasks held for a recycled worker whose replacement fails reject as their worker's failed start, before no worker is left`,
  async () => {
    const errors: unknown[] = [];
    const pool = await within(
      Pool.create<typeof tasks>(TASKS, {
        workers: 1,
        recycle: { afterTasks: 1 },
        workerData: { label: "h", counts: new Int32Array(new SharedArrayBuffer(8)), failAfter: 1, failDelay: 300 },
        onError: (error) => errors.push(error),
      }),
      30_000,
      "create",
    );
    try {
      assertEquals(await within(pool.run("add", 1, 2), 20_000, "the task that makes it due"), 3, "runs");
      const directed: Promise<Settled>[] = [];
      const end = Date.now() + 20_000;
      while (errors.length === 0 && Date.now() < end) {
        directed.push(settle(pool.run("lengthOf", move(new ArrayBuffer(8)))));
        await sleep(10);
      }
      const outcomes = await within(Promise.all(directed), 20_000, "every directed task settles");
      const own = outcomes.filter((o) =>
        !o.ok && o.error instanceof WorkerCrashedError && /failed to start/.test(o.error.message) &&
        !/no worker left/.test(o.error.message)
      );
      assert(own.length > 0, "some held directed tasks reject with their worker's failed start");
    } finally {
      await within(pool.terminate(), 20_000, "terminate");
    }
  },
);

test(
  `no workers on ${runtime}: an elastic pool whose every start failed rejects the tasks queued with no worker (its own and a producer's), tells onError, and grows again later`,
  async () => {
    const errors: unknown[] = [];
    const refuse = new Int32Array(new SharedArrayBuffer(4));
    const pool = await within(
      Pool.create<typeof tasks>(TASKS, {
        workers: { min: 1, max: 2 },
        producers: 1,
        workerData: { label: "q", counts: new Int32Array(new SharedArrayBuffer(8)), refuse },
        onError: (error) => errors.push(error),
      }),
      30_000,
      "create",
    );
    const producer = openProducer<typeof tasks>(pool.handle());
    try {
      // A directed task first (run by worker 0): the next one is posted to index 1, where a start failed.
      assertEquals(await within(pool.run("lengthOf", move(new ArrayBuffer(8))), 20_000, "a directed task"), 8, "runs");
      Atomics.store(refuse, 0, 1);
      // The one worker dies on the first task; the rest wait in the queue. Its replacement and every growth
      // start fail: no worker is live or starting, and nothing else happens unless something is submitted.
      const crash = settle(pool.run("exitThread", 3));
      // (hold counts itself in ran[0] and returns at once: ran[1] is set. A rejected task must never run.)
      const ran = new Int32Array(new SharedArrayBuffer(8));
      Atomics.store(ran, 1, 1);
      const queued = Array.from({ length: 6 }, () => settle(pool.run("hold", ran)));
      const remote = Array.from({ length: 3 }, () => settle(producer.run("hold", ran)));
      const crashed = await within(crash, 20_000, "the crash");
      assert(!crashed.ok && crashed.error instanceof WorkerCrashedError, "the crashing task rejects");
      for (const [i, outcome] of (await within(Promise.all(queued), 20_000, "every queued task settles")).entries()) {
        noWorkerLeft(outcome, `queued task ${i}`);
      }
      for (
        const [i, outcome] of (await within(Promise.all(remote), 20_000, "every producer's task settles")).entries()
      ) {
        noWorkerLeft(outcome, `the producer's queued task ${i}`);
      }
      assert(errors.some((e) => e instanceof ModuleLoadError), "onError got the failed start");
      const told = errors.filter((e) => e instanceof WorkerCrashedError && /no worker left/.test(e.message));
      assertEquals(told.length, 1, `onError told once that no worker is left (${errors.map(String).join("; ")})`);
      // Directed tasks (their arguments move a buffer: posted to one index) find no worker either.
      for (let i = 0; i < 2; i++) {
        const directed = settle(pool.run("lengthOf", move(new ArrayBuffer(8))));
        const outcome = await within(directed, 20_000, "a directed task");
        assert(!outcome.ok && outcome.error instanceof WorkerCrashedError, `directed task ${i} rejects`);
        assert((outcome.error as Error).cause instanceof ModuleLoadError, "its cause is the failed start");
      }
      // Their failure leaves the slots given back (none looks live: growth may start there again).
      assertEquals(pool.stats().elastic!.current, 0, "no worker counted current");
      // Nothing else went wrong on the way (a repair of an index that never ran its loop finds no held task).
      const others = errors.filter((e) => !(e instanceof ModuleLoadError) && !(e instanceof WorkerCrashedError));
      assertEquals(others.map(String), [], "onError got only the failed starts and that no worker is left");
      // A transient failure does not end the pool: starts allowed again, a later submission grows it.
      Atomics.store(refuse, 0, 0);
      assertEquals(await within(pool.run("add", 2, 3), 20_000, "a later task, on a grown worker"), 5, "runs");
      assertEquals(await within(producer.run("add", 2, 4), 20_000, "a later producer's task"), 6, "runs");
      assert(pool.stats().elastic!.current >= 1, "a worker again");
      // The grown worker took the rejected tasks' records before the later ones (the queue is FIFO), and
      // freed them without running them.
      assertEquals(Atomics.load(ran, 0), 0, "no rejected task ran");
    } finally {
      await within(pool.terminate(), 20_000, "terminate");
      await within(producer.close(), 20_000, "producer close");
    }
  },
);

test(
  `no workers on ${runtime}: a fixed pool with no worker left refuses a producer's submissions in another thread too, and rejects its queued tasks`,
  async () => {
    const errors: unknown[] = [];
    const pool = await within(
      Pool.create<typeof tasks>(TASKS, {
        workers: 1,
        producers: 2,
        workerData: { label: "p", counts: new Int32Array(new SharedArrayBuffer(8)), failAfter: 1 },
        onError: (error) => errors.push(error),
      }),
      30_000,
      "create",
    );
    const producer = openProducer<typeof tasks>(pool.handle());
    try {
      const crash = settle(pool.run("exitThread", 3));
      const remote = Array.from({ length: 3 }, (_, i) => settle(producer.run("add", i, 10)));
      const crashed = await within(crash, 20_000, "the crash");
      assert(!crashed.ok && crashed.error instanceof WorkerCrashedError, "the crashing task rejects");
      for (
        const [i, outcome] of (await within(Promise.all(remote), 20_000, "every producer's task settles")).entries()
      ) {
        noWorkerLeft(outcome, `the producer's queued task ${i}`);
      }
      noWorkerLeft(await within(settle(producer.run("add", 1, 2)), 20_000, "a later submission"), "a later submission");
      // A producer opened after that is refused too.
      const late = openProducer<typeof tasks>(pool.handle());
      try {
        noWorkerLeft(
          await within(settle(late.run("add", 1, 2)), 20_000, "a new producer's submission"),
          "a new producer's",
        );
      } finally {
        await within(late.close(), 20_000, "the new producer closes");
      }
    } finally {
      await within(pool.terminate(), 20_000, "terminate");
      await within(producer.close(), 20_000, "producer close");
    }
  },
);

test(
  `no workers on ${runtime}: an elastic pool whose only worker is recycled and whose replacement fails rejects what waits, and grows again later`,
  async () => {
    const errors: unknown[] = [];
    const refuse = new Int32Array(new SharedArrayBuffer(4));
    const pool = await within(
      Pool.create<typeof tasks>(TASKS, {
        workers: { min: 1, max: 1 },
        recycle: { afterTasks: 1 },
        workerData: { label: "c", counts: new Int32Array(new SharedArrayBuffer(8)), refuse, failDelay: 100 },
        onError: (error) => errors.push(error),
      }),
      30_000,
      "create",
    );
    try {
      Atomics.store(refuse, 0, 1);
      // The first task makes the worker due; its replacement fails; the others wait for it.
      const first = settle(pool.run("add", 1, 1));
      const queued = Array.from({ length: 5 }, (_, i) => settle(pool.run("add", i, 1)));
      assertEquals(await within(first, 20_000, "the first task"), { ok: true, value: 2 }, "the first task runs");
      for (const [i, outcome] of (await within(Promise.all(queued), 20_000, "every queued task settles")).entries()) {
        if (outcome.ok) assertEquals(outcome.value, i + 1, "a queued task ran (before the recycle)");
        else noWorkerLeft(outcome, `queued task ${i}`);
      }
      assertEquals(pool.stats().elastic!.current, 0, "the failed replacement's slot is given back");
      Atomics.store(refuse, 0, 0);
      assertEquals(await within(pool.run("add", 2, 3), 20_000, "a later task, on a grown worker"), 5, "runs");
    } finally {
      await within(pool.terminate(), 20_000, "terminate");
    }
  },
);

test(
  `no workers on ${runtime}: an elastic pool whose every start failed rejects the graphs that wait with no worker (its own and a producer's), none of their nodes runs, and every record comes back`,
  async () => {
    const { pool, refuse } = await refusingPool("g", { producers: 1 });
    const producer = openProducer<typeof tasks>(pool.handle());
    try {
      // The one worker dies on its next task; the graphs queue behind it, and its replacement fails: no
      // worker is live or starting, and nothing is submitted after, so nothing else would start one.
      const { crash, ran } = await crashWithRefusal(pool, refuse);
      // A diamond whose middle result is asked for (b) and whose sink is the submit's (d); a producer's chain.
      const g = pool.graph();
      const a = g.run("hold", ran);
      const b = g.run("add", a, 1);
      const c = g.run("add", a, 2);
      const d = g.run("add", b, c);
      const asked = settle(g.result(b));
      const sink = settle(g.submit(d));
      // The producer's root is asked for (an entry of its own): the owner's scan cancels it before the
      // producer hears of it, and the producer must still reject it.
      const h = producer.graph();
      const remoteRoot = h.run("hold", ran);
      const remoteAsked = settle(h.result(remoteRoot));
      const remote = settle(h.submit(h.run("add", remoteRoot, 1)));
      const crashed = await within(crash, 20_000, "the crash");
      assert(!crashed.ok && crashed.error instanceof WorkerCrashedError, "the crashing task rejects");
      noWorkerLeft(await within(asked, 20_000, "the asked node settles"), "the asked node");
      noWorkerLeft(await within(sink, 20_000, "the graph settles"), "the graph's sink");
      noWorkerLeft(await within(remote, 20_000, "the producer's graph settles"), "the producer's graph");
      noWorkerLeft(await within(remoteAsked, 20_000, "the producer's asked root settles"), "the producer's root");
      // Starts allowed again: a later task grows the pool; the rejected graphs' records come back (their
      // cancelled roots are walked by the new worker) and none of their nodes ran.
      Atomics.store(refuse, 0, 0);
      assertEquals(await within(pool.run("add", 2, 3), 20_000, "a later task, on a grown worker"), 5, "runs");
      // (The rejected nodes' records come back to their producers after the new worker walked them; each
      // producer's reader reads them even with nothing pending: the test after the next.)
      assertEquals(await within(producer.run("add", 2, 4), 20_000, "a later producer's task"), 6, "runs");
      await assertIdleAccounting(pool, "after the rejected graphs");
      assertEquals(Atomics.load(ran, 0), 0, "no node of a rejected graph ran");
    } finally {
      await within(pool.terminate(), 20_000, "terminate");
      await within(producer.close(), 20_000, "producer close");
    }
  },
);

test(
  `no workers on ${runtime}: an elastic pool left with no worker starts one for a directed task, which runs there (or fails with the start)`,
  async () => {
    const errors: unknown[] = [];
    const { pool, refuse } = await refusingPool("d", { max: 2, onError: (error) => errors.push(error) });
    try {
      await killWithRefusal(pool, refuse);
      const end = Date.now() + 20_000;
      while (pool.stats().elastic!.current !== 0 || !errors.some((e) => e instanceof ModuleLoadError)) {
        assert(Date.now() < end, "the replacement's failure is reported and its slot given back");
        await within(sleep(10), 1000, "sleep");
      }
      // No worker live or starting, starts still refused: the directed task's own start fails, and so does it.
      const refused = await within(settle(pool.run("lengthOf", move(new ArrayBuffer(8)))), 20_000, "refused");
      assert(!refused.ok && refused.error instanceof WorkerCrashedError, "a directed task whose start fails rejects");
      assert((refused.error as Error).cause instanceof ModuleLoadError, "its cause is the failed start");
      const said = (refused.error as Error).message;
      assert(/failed to start/.test(said), `its message names its worker's failed start: ${said}`);
      // Starts allowed again: a directed task starts a worker, as a queued task would, and runs there.
      Atomics.store(refuse, 0, 0);
      const directed = settle(pool.run("lengthOf", move(new ArrayBuffer(16))));
      assertEquals(await within(directed, 20_000, "a directed task"), { ok: true, value: 16 }, "runs on a new worker");
      assert(pool.stats().elastic!.current >= 1, "a worker again");
      assertEquals(await within(pool.run("add", 2, 3), 20_000, "a later task"), 5, "runs");
    } finally {
      await within(pool.terminate(), 20_000, "terminate");
    }
  },
);

test(
  `no workers on ${runtime}: the records of graphs rejected with no worker come back to producers with nothing pending, without a later submission of theirs`,
  async () => {
    const { pool, refuse } = await refusingPool("s", { producers: 2 });
    const producer = openProducer<typeof tasks>(pool.handle());
    const other = openProducer<typeof tasks>(pool.handle());
    try {
      const { crash, ran } = await crashWithRefusal(pool, refuse);
      // Graphs of the pool's own producer and of another, queued behind the crash: rejected with no worker.
      const g = pool.graph();
      const a = g.run("hold", ran);
      const sink = settle(g.submit(g.run("add", g.run("add", a, 1), g.run("add", a, 2))));
      const h = producer.graph();
      const remote = settle(h.submit(h.run("add", h.run("hold", ran), 1)));
      const crashed = await within(crash, 20_000, "the crash");
      assert(!crashed.ok && crashed.error instanceof WorkerCrashedError, "the crashing task rejects");
      noWorkerLeft(await within(sink, 20_000, "the graph settles"), "the graph's sink");
      noWorkerLeft(await within(remote, 20_000, "the producer's graph settles"), "the producer's graph");
      // Each reader's wait, armed while the graphs were pending, ends now, as when it reads a first record
      // of theirs and more are still to come: it finds nothing pending then.
      for (const p of [pool, producer]) {
        const reader = (p as unknown as { producer: { reader: unknown } }).producer.reader;
        wakeProducer((reader as { channel: ProducerChannel }).channel);
      }
      await within(sleep(20), 1000, "sleep");
      // A third producer's task grows the pool: the new worker walks the cancelled graphs and sends their
      // records back to the two producers, which have nothing pending and submit nothing more.
      Atomics.store(refuse, 0, 0);
      // (A growth start that read the refusal before it was lifted may still fail, and reject this task as
      // no worker's: then a later one starts a worker again.)
      const end = Date.now() + 20_000;
      for (;;) {
        const outcome = await within(settle(other.run("add", 2, 3)), 20_000, "another producer's task");
        if (outcome.ok) {
          assertEquals(outcome.value, 5, "runs");
          break;
        }
        noWorkerLeft(outcome, "another producer's task, rejected by a start begun before");
        assert(Date.now() < end, "another producer's task runs within 20 s");
        await within(sleep(20), 1000, "sleep");
      }
      // Read by their own readers (the helper reads no queue itself here): before, they waited there.
      await assertIdleAccounting(pool, "the rejected graphs' records, with nothing pending", { read: false });
      assertEquals(Atomics.load(ran, 0), 0, "no node of a rejected graph ran");
    } finally {
      await within(pool.terminate(), 20_000, "terminate");
      await within(producer.close(), 20_000, "producer close");
      await within(other.close(), 20_000, "other producer close");
    }
  },
);
