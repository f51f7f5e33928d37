/**
 * Kill anywhere, in the pool's queue and deque operations: a worker that dies in the middle of one of them
 * (its completion push, an injector pop, a free-list pop, a fork's push or a join's pop on its own deque)
 * leaves a queue position claimed or a deque index reserved that only it could complete, and a task or a
 * record taken half-way. Its notes are in the pool's buffer (layout.ts NoteWords), and the main thread's
 * recovery completes the operation in its place (recovery.ts), then reports a task it had finished but not
 * queued. Each scenario sweeps the death over the operation's accesses (tests/fixtures/death_tasks.ts ends
 * the thread at the k-th access to one region): every submitted task settles exactly once with what it
 * must (the dying task with its value if it had finished, or a WorkerCrashedError if it was running; the
 * others with their values), the death is counted, and a full-capacity burst runs afterwards.
 */
import type { PoolLayout } from "../../lib/protocol/layout.ts";
import { Pool } from "../../mod.ts";
import { settledAs } from "./_force.ts";
import { assertIdleAccounting } from "./_accounting.ts";
import { assert, assertEquals, test, within } from "../_test.ts";
import type * as tasks from "../fixtures/death_tasks.ts";

const TASKS = new URL("../fixtures/death_tasks.ts", import.meta.url);
const CAPACITY = 16;
type DeathPool = Pool<typeof tasks>;

/** The pool's layout (a test's look inside: where each region is). */
function layoutOf(pool: DeathPool): PoolLayout {
  return (pool as unknown as { layout: PoolLayout }).layout;
}

/** Every record usable at once: `CAPACITY` tasks that wait for each other at a barrier. */
async function fullCapacity(pool: DeathPool, what: string): Promise<void> {
  const counter = new Int32Array(new SharedArrayBuffer(4));
  const all = await within(
    Promise.all(Array.from({ length: CAPACITY }, () => pool.run("barrier", counter, CAPACITY, 5_000))),
    20_000,
    `${what}: ${CAPACITY} barrier tasks`,
  );
  assert(all.every((b) => b), `${what}: a record was stranded (the barrier tasks were not all in flight at once)`);
}

/** Resolves once word 0 of `flag` is set (polled every millisecond). */
async function untilSet(flag: Int32Array): Promise<void> {
  while (Atomics.load(flag, 0) === 0) await new Promise((resolve) => setTimeout(resolve, 1));
}

/** Every overflow block is back in the free list (a test's look inside: the block queue's two ends). */
function assertAllBlocksFree(pool: DeathPool, what: string): void {
  const layout = layoutOf(pool);
  const words = new Int32Array((pool as unknown as { buffer: SharedArrayBuffer }).buffer, layout.freeBlocks, 32);
  // InjectorWords: tail at word 0, head at word 16 (a cache line apart).
  const queued = (words[0] - words[16]) | 0;
  assertEquals(queued, layout.shape.blocks, `${what}: free overflow blocks`);
}

/**
 * One death: a fresh pool of one worker, `dying` submitted (it makes its worker die), then bystanders
 * (once word 0 of `started` is set, if given: the dying task sets it when it runs, so that the worker finds
 * the bystanders in the injector after its task, not moved into its deque in a batch with it). Returns how
 * the dying task settled; checks the bystanders, the death count, the capacity and the idle accounting
 * (tests/pool/_accounting.ts), with the allocation counts and generations unless `counts` is false: a death
 * inside `allocate` or `release` (the task records' and the block free list's sweeps) can fall between a
 * record's generation bump or its recovery and the count of the dying thread.
 */
async function oneDeath(
  what: string,
  dying: (pool: DeathPool, layout: PoolLayout) => Promise<unknown>,
  started?: Int32Array,
  counts = true,
  dequeCapacity?: number,
): Promise<string> {
  const pool = await Pool.create<typeof tasks>(TASKS, { workers: 1, taskCapacity: CAPACITY, dequeCapacity });
  try {
    const outcome = settledAs(dying(pool, layoutOf(pool)));
    if (started !== undefined) await within(untilSet(started), 10_000, `${what}: the dying task's start`);
    const bystanders = Array.from({ length: 8 }, (_, i) => settledAs(pool.run("add", i, 1)));
    const settled = await within(outcome, 10_000, `${what}: the dying task`);
    assertEquals(
      await within(Promise.all(bystanders), 10_000, `${what}: the bystanders`),
      Array.from({ length: 8 }, (_, i) => `ok:${i + 1}`),
      `${what}: the bystanders`,
    );
    assertEquals(pool.stats().workerCrashes, 1, `${what}: deaths`);
    await fullCapacity(pool, what);
    assertAllBlocksFree(pool, what);
    await within(pool.drain(), 10_000, `${what}: drain`);
    await assertIdleAccounting(pool, what, { counts });
    return settled;
  } finally {
    await within(pool.terminate(), 10_000, `${what}: terminate`);
  }
}

test("a worker that dies at any access of its completion push: the task it finished settles with its value, nothing else is held up", async () => {
  // A push makes 5 accesses (read tail, read seq, claim, write the value, publish); past them the worker
  // dies in a bystander's push.
  for (let k = 0; k < 7; k++) {
    const what = `completion push, death at access ${k}`;
    const settled = await oneDeath(what, (pool, layout) => pool.run("dieAfter", layout.completions, k, 42));
    assertEquals(settled, "ok:42", `${what}: the dying task`);
  }
});

test("a worker that dies at any access of its injector pops: the task it was taking runs elsewhere, the queue is not held up", async () => {
  // The dying task spins 30 ms while the bystanders are queued; after it, the worker pops them from the
  // injector (a pop makes 5 accesses; the batch that follows reads the queue's length and pops more).
  // The bystanders go in only once the dying task runs: queued with it, they could be moved into the
  // worker's deque in one batch and run before its first injector access, and its death would come after
  // the test had read the count (a Bun run failed so: "deaths: expected 1, received 0").
  for (let k = 0; k < 12; k++) {
    const what = `injector pop, death at access ${k}`;
    const started = new Int32Array(new SharedArrayBuffer(4));
    const settled = await oneDeath(
      what,
      (pool, layout) => pool.run("dieAfter", layout.injector, k, 5, 30, started),
      started,
    );
    assertEquals(settled, "ok:5", `${what}: the dying task`);
  }
});

test("a worker that dies at any access of a free-list pop in a fork: its task is rejected, the record comes back", async () => {
  for (let k = 0; k < 5; k++) {
    const what = `free-list pop, death at access ${k}`;
    const settled = await oneDeath(what, (pool, layout) => pool.run("dieInJoins", layout.freeRecords, k, 6));
    assertEquals(settled, "crashed", `${what}: the dying task`);
  }
});

test("a worker that dies at any access to its own deque in fork-join: its task is rejected, its forks are freed, the deque works", async () => {
  for (let k = 0; k < 14; k++) {
    const what = `own deque, death at access ${k}`;
    const settled = await oneDeath(what, (pool, layout) => pool.run("dieInJoins", layout.deques, k, 6));
    assertEquals(settled, "crashed", `${what}: the dying task`);
  }
});

/**
 * Deaths swept over the accesses a fork-join task makes to one region: `count` (a task of the fixture)
 * tells how many it makes without dying; each access of the first `dense`, then every `stride`-th, gets a
 * real worker that dies there running `die`. The dying task was running: it must reject as crashed. Its
 * pool's deques hold `dequeCapacity` tasks (the pool's default if not given).
 */
async function sweepJoins(
  what: string,
  region: "records" | "freeBlocks",
  count: "accessesInJoins" | "accessesInPaddedJoins",
  die: "dieInJoins" | "dieInPaddedJoins",
  n: number,
  dense: number,
  stride: number,
  dequeCapacity?: number,
): Promise<void> {
  const probe = await Pool.create<typeof tasks>(TASKS, { workers: 1, taskCapacity: CAPACITY, dequeCapacity });
  let total: number;
  try {
    total = await within(probe.run(count, layoutOf(probe)[region], n), 10_000, `${what}: the count`);
  } finally {
    await within(probe.terminate(), 10_000, "terminate");
  }
  assert(total > dense, `${what}: fib(${n})'s joins made only ${total} accesses`);
  for (let k = 0; k < total; k++) {
    if (k >= dense && k % stride !== 0) continue;
    const at = `${what}, death at access ${k} of ${total}`;
    const settled = await oneDeath(
      at,
      (pool, layout) => pool.run(die, layout[region], k, n),
      undefined,
      false,
      dequeCapacity,
    );
    assertEquals(settled, "crashed", `${at}: the dying task`);
  }
}

test(
  "a worker that dies at any access to the task records in fork-join: every task settles once, no record is stranded",
  async () => {
    // Covers the steps between the queue operations: a task taken and not yet claimed, a fork placed or
    // popped back, a record taken from the free list, a task finished and not yet reported (about 80 deaths).
    await sweepJoins("task records", "records", "accessesInJoins", "dieInJoins", 6, 48, 11);
  },
  300_000,
);

test(
  "a worker that dies at any access to the block free list in fork-join with large arguments: no block is stranded",
  async () => {
    // Each fork's 3,000-byte arguments take overflow blocks, which are linked into its record as they are
    // taken and unlinked one at a time as they are freed; the block in hand is noted.
    await sweepJoins("block free list", "freeBlocks", "accessesInPaddedJoins", "dieInPaddedJoins", 5, 40, 7);
  },
  300_000,
);

test(
  "a worker that dies at any access to the task records while its deque is full: the fork its push refused is freed, not stranded",
  async () => {
    // A deque of 2: past the second nested fork every push is refused, and the fork placed is freed on the
    // spot by the pushing mark's own repair (Marks.placeFork). A death inside that free, after the shared
    // mark was cleared, once left a QUEUED fork in no deque and no mark: recovery orphaned it, and nobody
    // ever ran or freed it (found by the fault-injection suite on Bun, 1 run in 20 with a busy second core).
    await sweepJoins("task records, deque full", "records", "accessesInJoins", "dieInJoins", 4, 64, 1, 2);
  },
  300_000,
);
