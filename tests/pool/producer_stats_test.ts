/**
 * `pool.stats()` counts every producer's tasks (issue 51): the pool-wide `submitted`, `completed` and
 * `pending` include the tasks of producers in other threads, and `stats().producers` gives each slot's
 * counts (slot 0: the pool's own), which each producer's thread writes in its slot's counts line
 * (protocol/layout.ts `SlotCountWords`) and the owner reads. Real threads; gate tasks hold every task in
 * flight until the test opens the gate, so the counts in flight are exact too.
 */
import type { Pool } from "../../lib/pool.ts";
import { startThread, type ThreadHandle } from "../../lib/runtime/thread.ts";
import { withTerminatedPool } from "./_pool.ts";
import type { CountingReport } from "../fixtures/counting_producer.ts";
import type * as tasks from "../fixtures/tasks.ts";
import { assert, assertEquals, test, within } from "../_test.ts";

const moduleUrl = new URL("../fixtures/tasks.ts", import.meta.url);
const threadUrl = new URL("../fixtures/counting_producer.ts", import.meta.url);

/** A producer thread of the fixture, and its reports as they come. */
interface Counting {
  thread: ThreadHandle;
  next(kind: CountingReport["kind"]): Promise<CountingReport>;
}

function countingThread(pool: Pool<typeof tasks>, view: Int32Array, n: number, name: string): Counting {
  const thread = startThread(threadUrl, name);
  const reports: CountingReport[] = [];
  const waiting: (() => void)[] = [];
  thread.onMessage((message) => {
    reports.push(message as CountingReport);
    for (const wake of waiting.splice(0)) wake();
  });
  const handle = pool.handle();
  thread.post({ handle, view, n }, handle.transfer as unknown as ArrayBuffer[]);
  const next = async (kind: CountingReport["kind"]): Promise<CountingReport> => {
    for (;;) {
      const error = reports.find((r) => r.kind === "error");
      if (error !== undefined) throw new Error(`thread ${name}: ${(error as { error: string }).error}`);
      const found = reports.find((r) => r.kind === kind);
      if (found !== undefined) return found;
      await new Promise<void>((resolve) => waiting.push(resolve));
    }
  };
  return { thread, next: (kind) => within(next(kind), 30_000, `thread ${name}: '${kind}'`) };
}

/** Polls until `check()` holds (at most 30 s). */
async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`hang: ${what} not reached in 30 s`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const counts = (pool: Pool<typeof tasks>) =>
  pool.stats().producers.map(({ slot, open, submitted, completed, pending, abandoned }) => ({
    slot,
    open,
    submitted,
    completed,
    pending,
    abandoned,
  }));

test("stats() counts every producer thread's tasks, in flight and settled, pool-wide and per slot", async () => {
  await withTerminatedPool<typeof tasks>(moduleUrl, { workers: 2 }, async (pool) => {
    await Promise.all([pool.run("add", 1, 2), pool.run("add", 3, 4)]);
    const view = new Int32Array(new SharedArrayBuffer(12));
    const n = 25;
    const threads = [0, 1, 2].map((i) => countingThread(pool, view, n, `counting-${i}`));
    await until(() => Atomics.load(view, 1) === 3, "three producers submitted");

    // In flight: every gate task holds (the gate is shut), none of them settled.
    const held = pool.stats();
    assertEquals(
      [held.submitted, held.completed, held.pending],
      [2 + 3 * n, 2, 3 * n],
      "pool-wide submitted, completed, pending in flight",
    );
    assertEquals(counts(pool), [
      { slot: 0, open: true, submitted: 2, completed: 2, pending: 0, abandoned: 0 },
      { slot: 1, open: true, submitted: n, completed: 0, pending: n, abandoned: 0 },
      { slot: 2, open: true, submitted: n, completed: 0, pending: n, abandoned: 0 },
      { slot: 3, open: true, submitted: n, completed: 0, pending: n, abandoned: 0 },
    ], "per slot, in flight");
    assert(held.queued >= 3 * n - 2, `queued counts the held tasks waiting: ${held.queued}`);

    // Settled: exact at rest.
    Atomics.store(view, 0, 1);
    Atomics.notify(view, 0);
    for (const t of threads) assertEquals(await t.next("settled"), { kind: "settled", resolved: n, rejected: 0 });
    const rest = pool.stats();
    assertEquals([rest.submitted, rest.completed, rest.pending], [2 + 3 * n, 2 + 3 * n, 0], "pool-wide at rest");
    assertEquals(
      counts(pool).map((c) => [c.slot, c.submitted, c.completed, c.pending]),
      [[0, 2, 2, 0], [1, n, n, 0], [2, n, n, 0], [3, n, n, 0]],
      "per slot at rest",
    );

    // Closed: the slots are free, their counts stay (a slot's next producer adds to them).
    Atomics.store(view, 2, 1);
    for (const t of threads) await t.next("closed");
    for (const t of threads) t.thread.terminate();
    await until(() => counts(pool).every((c) => c.slot === 0 || !c.open), "the slots given back");
    assertEquals(
      counts(pool).map((c) => [c.slot, c.open, c.submitted, c.completed]),
      [[0, true, 2, 2], [1, false, n, n], [2, false, n, n], [3, false, n, n]],
      "per slot once closed",
    );
    const open = new Int32Array(new SharedArrayBuffer(12));
    open[0] = 1; // the gate open, the producer kept open after its tasks settled
    const again = countingThread(pool, open, 3, "counting-again");
    await again.next("settled");
    const reused = counts(pool).find((c) => c.open && c.slot !== 0)!;
    assertEquals([reused.submitted, reused.completed], [n + 3, n + 3], "a reused slot adds to its counts");
    assertEquals(pool.stats().submitted, 2 + 3 * n + 3, "pool-wide, with the reused slot");
    again.thread.terminate();
  });
});

test("stats(): a producer thread that dies with tasks in flight leaves them counted as abandoned", async () => {
  await withTerminatedPool<typeof tasks>(moduleUrl, { workers: 2 }, async (pool) => {
    const view = new Int32Array(new SharedArrayBuffer(12));
    const n = 10;
    const doomed = countingThread(pool, view, n, "counting-doomed");
    await until(() => Atomics.load(view, 1) === 1, "the producer submitted");
    doomed.thread.terminate();
    await until(() => pool.stats().producerDeaths === 1, "its death noticed");
    Atomics.store(view, 0, 1);
    Atomics.notify(view, 0);
    const [own, dead] = counts(pool);
    assertEquals(own, { slot: 0, open: true, submitted: 0, completed: 0, pending: 0, abandoned: 0 }, "slot 0");
    assertEquals(
      [dead.open, dead.submitted, dead.completed, dead.pending, dead.abandoned],
      [false, n, 0, 0, n],
      "the dead producer's slot",
    );
    const { submitted, completed, pending } = pool.stats();
    assertEquals([submitted, completed, pending], [n, 0, 0], "pool-wide: submitted = completed + pending + abandoned");
  });
});
