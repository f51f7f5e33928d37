/**
 * Issue 47, classes 5, 6 and 8 (the audit's classes that passed every check), each closed by a test on the
 * shipped code that fails for any bug of its class, deterministically (a bug makes the test wait for a
 * state that never comes, and the generous bound of that wait fails it; no wall-clock assertion):
 *
 * - Class 5, the wake for the rest of a burst (worker/search.ts FindInjectorLeft): with every worker
 *   asleep, a burst posted with one wake (a graph's roots: graph/submit.ts wakes once for all of them)
 *   starts all its tasks while the first one still holds its worker, so each woken worker must wake the
 *   next while tasks are left.
 * - Class 6, the async bound (`asyncTasksPerWorker`) on every path that hands a worker a task: a task only
 *   one worker can run (a directed task: its buffers moved, posted to that worker) and a graph's
 *   continuations (pushed on the deque of the worker that finished their input: its own deque's pop, and
 *   the other worker's steal) here; the injector's take, a join's search and broadcast parts (which the
 *   bound leaves out by design) in tests/pool/async_bound_test.ts. Every path goes through the loop's one
 *   check (loop.ts `runner.full()`) or the join's (fork_join.ts), before the take.
 * - Class 8, a thread's event loop while a reply is on its way: a task that asks for `poolHandle()` and
 *   returns at once gets its handle (the worker sleeps without blocking its event loop while the request
 *   is on its way) and can use it.
 *
 * Caught by AUDIT_B_MUTANTS in the mutation run (tests/mutants/run.ts, group audit_b).
 */
import { Pool } from "../../lib/pool.ts";
import type { PoolMemory } from "../../lib/protocol/memory.ts";
import { move } from "../../lib/codec/move.ts";
import type * as tasks from "../fixtures/audit_b_tasks.ts";
import { HANDLE, WAKE } from "../fixtures/audit_b_tasks.ts";
import { PROBE } from "../fixtures/async_bound_tasks.ts";
import { assert, assertEquals, test, within } from "../_test.ts";
import { withTerminatedPool } from "./_pool.ts";

const TASKS = new URL("../fixtures/audit_b_tasks.ts", import.meta.url);

/** Generous: a wait this long means the state never comes (a bug), not a slow machine. */
const BOUND_MS = 30_000;

/** The pool's memory as its main thread sees it (a debug view through its internals). */
function memoryOf(pool: unknown): PoolMemory {
  return (pool as { producer: { memory: PoolMemory } }).producer.memory;
}

/** Resolves once `condition` holds (polled every 2 ms); fails after {@link BOUND_MS}, saying `what`. */
function until(condition: () => boolean, what: string): Promise<void> {
  return within(
    new Promise<void>((resolve) => {
      const poll = () => (condition() ? resolve() : setTimeout(poll, 2));
      poll();
    }),
    BOUND_MS,
    what,
  );
}

function words(length: number): Int32Array {
  return new Int32Array(new SharedArrayBuffer(length * 4));
}

for (const workers of [2, 3]) {
  test(
    `class 5, ${workers} workers all asleep: a graph's ${workers} roots (one wake for all) all start while each holds its worker`,
    async () => {
      await withTerminatedPool<typeof tasks>(TASKS, { workers }, async (pool) => {
        const probe = words(WAKE.length);
        const sleep = memoryOf(pool).sleep;
        try {
          // Every worker counted asleep (the sleep protocol's own count): no worker spins or dozes, so a
          // root is taken only by a worker someone woke.
          await until(() => sleep.sleeping === workers, `all ${workers} workers asleep`);
          const g = pool.graph();
          for (let i = 0; i < workers; i++) g.run("blockUntilReleased", probe);
          const done = g.submit();
          done.catch(() => {});
          // The graph's submit wakes one worker; each root holds the worker that took it until released.
          // So every root starts only if each worker that took one woke the next while roots were left.
          await until(
            () => Atomics.load(probe, WAKE.started) === workers,
            `every root started while the others held their workers (started: ${Atomics.load(probe, WAKE.started)})`,
          );
          Atomics.store(probe, WAKE.release, 1);
          await within(done, BOUND_MS, "the graph");
          assertEquals(Atomics.load(probe, WAKE.started), workers, "each root ran once");
        } finally {
          Atomics.store(probe, WAKE.release, 1);
        }
      });
    },
  );
}

/** The tasks each slot (worker) holds now, for the slots taken so far. */
function heldBySlot(probe: Int32Array): number[] {
  const slots = Atomics.load(probe, PROBE.slots);
  return Array.from({ length: slots }, (_, s) => Atomics.load(probe, PROBE.held + s));
}

test(
  "class 6, 1 worker, a bound of 2: directed tasks (buffers moved, only that worker can run them) respect the bound",
  async () => {
    const K = 2, N = 8;
    const pool = await Pool.create<typeof tasks>(TASKS, { workers: 1, asyncTasksPerWorker: K });
    try {
      const probe = words(PROBE.length);
      const all = Array.from({ length: N }, () => pool.run("heldMoved", probe, move(new Uint8Array(8))));
      for (const promise of all) promise.catch(() => {});
      for (let released = 0; released < N; released++) {
        // The worker holds K, and has let its event loop turn (one of them polled), so every directed
        // task posted so far has reached its messages: one that ignored the bound had taken them.
        const expected = Math.min(K + released, N);
        await until(
          () => Atomics.load(probe, PROBE.started) >= expected && Atomics.load(probe, PROBE.polled) === 1,
          `${expected} started and the worker's event loop turned`,
        );
        Atomics.store(probe, PROBE.polled, 0);
        await until(() => Atomics.load(probe, PROBE.polled) === 1, "the worker's event loop turned again");
        assert(
          Atomics.load(probe, PROBE.maxHeld) <= K,
          `a worker held ${Atomics.load(probe, PROBE.maxHeld)} > ${K} async tasks (now: ${heldBySlot(probe)})`,
        );
        assert(
          Atomics.load(probe, PROBE.started) <= K + released,
          `${Atomics.load(probe, PROBE.started)} started with ${released} released, bound ${K}`,
        );
        Atomics.store(probe, PROBE.released, released + 1);
      }
      assertEquals((await within(Promise.all(all), BOUND_MS, "all")).sort((a, b) => a - b), [
        ...Array(N).keys(),
      ]);
      assertEquals(Atomics.load(probe, PROBE.maxHeld), K, "the most held at once");
    } finally {
      await within(pool.terminate(), 10_000, "terminate");
    }
  },
);

test(
  "class 6, 2 workers, a bound of 2: a graph's continuations (pushed on the deque of the worker that finished their input, stolen by the other) respect the bound",
  async () => {
    const K = 2, N = 8;
    const pool = await Pool.create<typeof tasks>(TASKS, { workers: 2, asyncTasksPerWorker: K });
    try {
      const probe = words(PROBE.length);
      const g = pool.graph();
      const root = g.run("ping", 0);
      const nodes = Array.from({ length: N }, () => g.run("heldAfter", probe, root));
      const results = nodes.map((node) => g.result(node));
      for (const promise of results) promise.catch(() => {});
      const done = g.submit();
      done.catch(() => {});
      // The worker that ran the root queued every continuation on its own deque at once; at its bound it
      // takes no more, and the other worker (woken) steals what it leaves: 2K start, then none until a
      // release. Both let their event loops turn (a held task of each polled) before the check.
      await until(
        () =>
          Atomics.load(probe, PROBE.started) >= 2 * K && Atomics.load(probe, PROBE.polled) === 1 &&
          Atomics.load(probe, PROBE.polled + 1) === 1,
        `${2 * K} started, on both workers, and their event loops turned`,
      );
      assert(
        Atomics.load(probe, PROBE.maxHeld) <= K,
        `a worker held ${Atomics.load(probe, PROBE.maxHeld)} > ${K} async tasks (now: ${heldBySlot(probe)})`,
      );
      assertEquals(Atomics.load(probe, PROBE.started), 2 * K, "started before any release");
      Atomics.store(probe, PROBE.released, N);
      await within(done, BOUND_MS, "the graph");
      assertEquals((await Promise.all(results)).sort((a, b) => a - b), [...Array(N).keys()]);
      assert(Atomics.load(probe, PROBE.maxHeld) <= K, `the most held at once: ${Atomics.load(probe, PROBE.maxHeld)}`);
    } finally {
      await within(pool.terminate(), 10_000, "terminate");
    }
  },
);

test(
  "class 8, 1 worker: a task that asks for poolHandle() and returns at once gets the handle, usable, after it returned",
  async () => {
    await withTerminatedPool<typeof tasks>(TASKS, { workers: 1, producers: 2 }, async (pool) => {
      const probe = words(HANDLE.length);
      const sleep = memoryOf(pool).sleep;
      assertEquals(await within(pool.run("askHandleAndReturn", probe), BOUND_MS, "the asking task"), 7);
      // The request is on its way to this thread, which reads it only when its event loop turns: hold that
      // until the worker, its task done, is counted asleep (bounded: it must sleep with nothing to run). A
      // worker that slept blocking its event loop would then never read the reply.
      const blocker = words(1);
      const deadline = Date.now() + BOUND_MS;
      while (sleep.sleeping !== 1 && Date.now() < deadline) Atomics.wait(blocker, 0, 0, 1);
      assertEquals(sleep.sleeping, 1, "the worker asleep after the asking task returned");
      await until(
        () => Atomics.load(probe, HANDLE.result) !== 0 || Atomics.load(probe, HANDLE.refused) !== 0,
        "the handle's reply read and the handle used",
      );
      assertEquals(Atomics.load(probe, HANDLE.refused), 0, "the request was answered with a handle");
      assertEquals(Atomics.load(probe, HANDLE.result), 42, "the run through the handle's producer");
    });
  },
);
