/**
 * Fairness as values (issue 47, class 3): who gets how much while whom waits. docs/producers.md, "Order,
 * fairness and bounds": while a producer waits for a record, every other keeps to its fair share of the
 * records (the records divided among the open producers, the owner's included); while one waits for room,
 * every other keeps to its share of the bound (`workers + maxQueue` divided among the open producers). The
 * owner's producer is one of the parties: `ControlWords.producersOpen` counts the producers in other threads,
 * the divisor is that plus one.
 *
 * Before this file, the shares were checked by what they are for (the light producer finishes first; the
 * flooding owner is refused once past its share), not by their values: a share that left one party out of
 * its divisor passed the record test (the light producer still finished first).
 *
 * - The room's share: the shipped `Room.hasRoom` on a real pool memory, with k parties open and another
 *   counted waiting, for several bounds: room exactly below ⌊bound / k⌋ (at least 1).
 * - The records' share: a real pool whose every record the owner holds (gated tasks) while a producer in
 *   another thread waits for one; records freed one settle at a time; the owner takes back records for its
 *   backlog only up to its share, ⌊records / 2⌋ with two parties, and the rest go to the waiting thread.
 *   Checked at a point the design defines (every released task settled), not by timing.
 */
import { resolveOptions } from "../../lib/options.ts";
import { PoolMemory } from "../../lib/protocol/memory.ts";
import { ControlWords } from "../../lib/protocol/layout.ts";
import { claimSlot } from "../../lib/protocol/producers.ts";
import { Room } from "../../lib/producer/room.ts";
import type { Pool } from "../../lib/pool.ts";
import { startThread } from "../../lib/runtime/thread.ts";
import type { Report, Scenario } from "../fixtures/producer_thread.ts";
import type * as tasks from "../fixtures/tasks.ts";
import { withTerminatedPool } from "./_pool.ts";
import { assertEquals, test, within } from "../_test.ts";

test("fair share of the room: with k parties open and another waiting, each has room below ⌊bound / k⌋ (at least 1)", () => {
  for (const parties of [1, 2, 3, 5]) {
    for (const bound of [2, 7, 12, 30]) {
      const memory = PoolMemory.create(resolveOptions({ workers: 1, producers: 8 }).shape);
      for (let s = 1; s < parties; s++) claimSlot(memory.buffer, memory.layout);
      let mine = 0;
      const room = new Room(bound, { pending: () => mine, arm: () => {} }, memory, 0);
      Atomics.store(memory.control, ControlWords.ownerPending, 0);
      const share = Math.max(1, Math.floor(bound / parties));
      const what = `${parties} parties, bound ${bound}`;
      // Nobody waits: room up to the bound.
      mine = bound - 1;
      assertEquals(room.hasRoom(), true, `${what}: nobody waits, ${mine} pending`);
      // Another producer counted waiting for room: this one keeps to its share.
      Atomics.store(memory.control, ControlWords.roomWaiters, 1);
      mine = share - 1;
      assertEquals(room.hasRoom(), true, `${what}: another waits, ${mine} pending (share ${share})`);
      mine = share;
      assertEquals(room.hasRoom(), false, `${what}: another waits, ${mine} pending (share ${share})`);
    }
  }
});

const moduleUrl = new URL("../fixtures/tasks.ts", import.meta.url);
const threadUrl = new URL("../fixtures/producer_thread.ts", import.meta.url);

/** What the test reads of the owner's producer (internals: the share's effect on its backlog). */
interface OwnerProducer {
  memory: PoolMemory;
  ledger: { pending: number };
  submitter: { backlogLength: number };
}

/** Resolves once `check()` holds; fails (a hang, with `what`) after 30 s. */
async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`hang: ${what} not seen in 30 s`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

test(
  "fair share of records: while a producer thread waits for one, the owner takes back records only up to ⌊records / 2⌋",
  async () => {
    const CAPACITY = 16;
    await withTerminatedPool<typeof tasks>(
      moduleUrl,
      { workers: 1, taskCapacity: CAPACITY, producers: 1 },
      async (pool) => {
        const owner = (pool as unknown as { producer: OwnerProducer }).producer;
        const control = owner.memory.control;
        // The owner holds every record: CAPACITY gated tasks (the worker runs them one at a time, in order).
        const gates = Array.from({ length: CAPACITY }, () => new Int32Array(new SharedArrayBuffer(4)));
        const held = gates.map((gate) => pool.run("gate", gate));
        // A failed assertion terminates the pool: its tasks then reject, which is not the failure to report.
        for (const promise of held) promise.catch(() => {});
        assertEquals(owner.submitter.backlogLength, 0, "the owner's gated tasks each took a record");
        // A producer thread submits 20 tasks: no record free, so they wait in its backlog, and it counts itself.
        const report = startProducer(pool, { kind: "sums", n: 20, base: 1 });
        await until(() => Atomics.load(control, ControlWords.recordWaiters) === 1, "the thread waiting for a record");
        // The owner's backlog: 10 more gated tasks, behind its records (nobody else waits for the owner).
        const later = Array.from({ length: 10 }, () => new Int32Array(new SharedArrayBuffer(4)));
        const queued = later.map((gate) => pool.run("gate", gate));
        for (const promise of queued) promise.catch(() => {});
        assertEquals(owner.submitter.backlogLength, 10, "the owner's later tasks wait for records");
        // 12 of the owner's tasks settle, one at a time: 12 records freed at the owner while the thread waits.
        const RELEASED = 12;
        for (let i = 0; i < RELEASED; i++) {
          Atomics.store(gates[i], 0, 1);
          Atomics.notify(gates[i], 0);
        }
        await within(Promise.all(held.slice(0, RELEASED)), 20_000, "the released tasks");
        // Two parties open (the owner and the thread): the owner's share is the records divided between
        // them, ⌊CAPACITY / 2⌋ = 8. It held CAPACITY − RELEASED = 4 when the settles came; it takes records for
        // its backlog up to 8, and no more while the thread waits.
        const share = Math.floor(CAPACITY / 2);
        const inRecords = owner.ledger.pending - owner.submitter.backlogLength;
        assertEquals(
          { inRecords, backlog: owner.submitter.backlogLength },
          { inRecords: share, backlog: 10 - (share - (CAPACITY - RELEASED)) },
          `the owner's tasks in records and in its backlog while the thread waits (its share: ${share})`,
        );
        // Let everything go: every task settles.
        for (const gate of [...gates, ...later]) {
          Atomics.store(gate, 0, 1);
          Atomics.notify(gate, 0);
        }
        await within(Promise.all([...held, ...queued]), 30_000, "the owner's tasks");
        const r = await report;
        assertEquals({ resolved: r.resolved, wrong: r.wrong, twice: r.settledTwice }, {
          resolved: 20,
          wrong: 0,
          twice: 0,
        }, "the thread's tasks");
      },
    );
  },
  120_000,
);

/** Starts a producer thread on `pool` with `scenario`; resolves with its report, then ends the thread. */
function startProducer(pool: Pool<typeof tasks>, scenario: Scenario): Promise<Report> {
  const thread = startThread(threadUrl, "fair-share");
  const handle = pool.handle();
  const report = new Promise<Report>((resolve, reject) => {
    thread.onMessage((message) => resolve(message as Report));
    thread.onError((error) => reject(error));
  });
  thread.post({ handle, scenario }, handle.transfer as unknown as ArrayBuffer[]);
  return within(report, 60_000, `producer thread (${scenario.kind})`).then(
    (r) => {
      thread.terminate();
      if (r.error !== undefined) throw new Error(`the producer thread failed: ${r.error}`);
      return r;
    },
    (error) => {
      thread.terminate();
      throw error;
    },
  );
}
