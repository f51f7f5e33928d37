/**
 * Record accounting and stale handles (issue 32): every path that frees a task record returns it, each
 * allocation advances its record's generation exactly once, and a handle kept across its record's release
 * and reuse is refused everywhere a generation is checked.
 *
 * Oracles: the idle accounting of lib/record/census.ts (read through tests/pool/_accounting.ts once the pool is
 * at rest), and the stale-handle checks, at the record table (`isCurrent`, `releaseHandle`, `runsOn`, the
 * kill guard's question) and at the pool (a late or duplicate completion report, an abort of the finished
 * task). Each scenario runs on the shipped code, where it must find nothing, and on the record mutants of
 * tests/mutants/mutants.ts (RECORD_MUTANTS), each of which one scenario must catch.
 */
import { Pool } from "../../lib/pool.ts";
import type * as cancelTasks from "../fixtures/cancel_tasks.ts";
import type * as hostile from "../fixtures/hostile_tasks.ts";
import { idleAccountingProblems, tableOf } from "./_accounting.ts";
import { materializePoolMutant, RECORD_MUTANTS, type RecordMutant, removePoolMutant } from "../mutants/mutants.ts";
import { assert, assertEquals, assertRejects, test, within } from "../_test.ts";

const HOSTILE = new URL("../fixtures/hostile_tasks.ts", import.meta.url);
const CANCEL = new URL("../fixtures/cancel_tasks.ts", import.meta.url);
/** The shipped lib/: where the scenarios find `record/task.ts` and `protocol/layout.ts` of the code under test. */
const SHIPPED_POOL = new URL("../../lib/pool.ts", import.meta.url);

/** A scenario: runs against the lib/ whose pool.ts is at `poolUrl`; returns what it found wrong (none: passed). */
type Scenario = (PoolClass: typeof Pool, poolUrl: URL, ms: number) => Promise<string[]>;

function probe(): Int32Array {
  return new Int32Array(new SharedArrayBuffer(16));
}

/** Resolves once `probe[index]` is not 0 (polled; the caller bounds it with `within`). */
async function until(probe: Int32Array, index: number): Promise<void> {
  while (Atomics.load(probe, index) === 0) await new Promise((resolve) => setTimeout(resolve, 2));
}

function open(probe: Int32Array): void {
  Atomics.store(probe, 3, 1);
  Atomics.notify(probe, 3);
}

/** Marks a promise handled (a scenario that fails early must not leave an unhandled rejection behind). */
function handled<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => {});
  return promise;
}

/** Runs `body` with a new pool of `PoolClass`, then terminates it; returns what `body` returned. */
async function withPool<M extends object, T>(
  PoolClass: typeof Pool,
  module: URL,
  options: Record<string, unknown>,
  body: (pool: Pool<M>) => Promise<T>,
): Promise<T> {
  const pool = await PoolClass.create<M>(module, options);
  try {
    return await body(pool);
  } finally {
    await within(pool.terminate(), 10_000, "terminate");
  }
}

/** The pool's internals the stale-handle scenario reaches: the ledger's placed entries and the reader. */
interface Internals {
  producer: {
    ledger: { placed: ({ handle: number; task: string } | undefined)[] };
    reader: { report(handle: number): void };
  };
}

/** The handle of the one placed, unsettled task named `task` (-1 if none). */
function placedHandle(pool: unknown, task: string): number {
  const found = (pool as unknown as Internals).producer.ledger.placed.filter((e) => e !== undefined && e.task === task);
  return found.length === 1 ? found[0]!.handle : -1;
}

const SCENARIOS: Record<RecordMutant["caughtBy"], Scenario> = {
  /** Tasks settled the ordinary way, with inline, block and slab payloads. */
  settle: (PoolClass, _url, ms) =>
    withPool<typeof hostile, string[]>(PoolClass, HOSTILE, { workers: 2, taskCapacity: 64 }, async (pool) => {
      // A first wave within the records (a record kept by a bug shows here, before waves wait for records).
      const first = await within(
        Promise.all(Array.from({ length: 40 }, (_, i) => pool.run("add", i, 1))),
        30_000,
        "adds",
      );
      assertEquals(first.filter((v, i) => v !== i + 1).length, 0, "sums");
      await within(pool.drain(), 10_000, "drain");
      const early = await idleAccountingProblems(pool, { ms });
      if (early.length > 0) return early;
      for (let wave = 0; wave < 5; wave++) {
        const sums = await within(
          Promise.all(Array.from({ length: 80 }, (_, i) => pool.run("add", i, wave))),
          30_000,
          "a wave of adds",
        );
        assertEquals(sums.filter((v, i) => v !== i + wave).length, 0, "sums");
      }
      const medium = "x".repeat(3000); // past the inline area: overflow blocks
      const large = new Uint8Array(200_000).fill(7); // a slab
      const echoed = await within(
        Promise.all([...Array.from({ length: 10 }, () => pool.run("echo", medium)), pool.run("echo", large)]),
        30_000,
        "echoes",
      );
      assertEquals(echoed.filter((v) => v !== medium).length, 1, "medium echoes");
      assertEquals((echoed[10] as Uint8Array).length, large.length, "the large echo");
      await within(pool.drain(), 10_000, "drain");
      return await idleAccountingProblems(pool, { ms });
    }),

  /** Fork-join: forks popped back by their joiner (and some stolen by the other worker, as it happens). */
  forks: (PoolClass, _url, ms) =>
    withPool<typeof hostile, string[]>(PoolClass, HOSTILE, { workers: 2, taskCapacity: 1024 }, async (pool) => {
      const results = await within(
        Promise.all(Array.from({ length: 12 }, () => pool.run("deepJoin", 8))),
        60_000,
        "joins",
      );
      assertEquals(results.filter((v) => v !== 256).length, 0, "deepJoin results");
      await within(pool.drain(), 10_000, "drain");
      return await idleAccountingProblems(pool, { ms });
    }),

  /**
   * A fork stolen for certain: its forker blocks in the join's first half until the other worker has run
   * the fork, then reads its result (and frees its record).
   */
  stolenFork: (PoolClass, _url, ms) =>
    withPool<typeof cancelTasks, string[]>(PoolClass, CANCEL, { workers: 2, taskCapacity: 8 }, async (pool) => {
      for (let i = 0; i < 3; i++) {
        const seen = probe();
        const run = handled(pool.run("forkWhileBlocked", seen, 30_000));
        await within(until(seen, 1), 10_000, "the fork run by the thief");
        open(seen);
        assertEquals(await within(run, 10_000, "the forker"), 1, "the stolen fork's result");
      }
      await within(pool.drain(), 10_000, "drain");
      return await idleAccountingProblems(pool, { ms });
    }),

  /** Tasks aborted while queued behind a blocker: the worker that takes each handle frees the record. */
  cancelWhileQueued: (PoolClass, _url, ms) =>
    withPool<typeof cancelTasks, string[]>(PoolClass, CANCEL, { workers: 1, taskCapacity: 8 }, async (pool) => {
      const hold = probe();
      const blocked = handled(pool.run("blocker", hold, 30_000));
      await within(until(hold, 0), 10_000, "the blocker's start");
      const seen = probe();
      const controllers = Array.from({ length: 5 }, () => new AbortController());
      const runs = controllers.map((c) => handled(pool.with({ signal: c.signal }).run("counted", seen)));
      for (const c of controllers) c.abort();
      for (const run of runs) await within(assertRejects(run), 5_000, "an aborted run");
      open(hold);
      await within(blocked, 10_000, "the blocker");
      await within(pool.drain(), 10_000, "drain");
      const problems = await idleAccountingProblems(pool, { ms });
      assertEquals(Atomics.load(seen, 1), 0, "no cancelled task ran");
      return problems;
    }),

  /** A task aborted while it runs: settled at once; its record comes back with its completion. */
  cancelWhileRunning: (PoolClass, _url, ms) =>
    withPool<typeof cancelTasks, string[]>(PoolClass, CANCEL, { workers: 1, taskCapacity: 8 }, async (pool) => {
      for (let i = 0; i < 3; i++) {
        const seen = probe();
        const controller = new AbortController();
        const run = pool.with({ signal: controller.signal }).run("spinUntilAborted", seen, 30_000);
        await within(until(seen, 0), 10_000, "the task's start");
        controller.abort();
        await within(assertRejects(run), 5_000, "the aborted run");
      }
      await within(pool.drain(), 10_000, "drain");
      return await idleAccountingProblems(pool, { ms });
    }),

  /** A task that runs past its timeout: settled with a TimeoutError; its record comes back with its completion. */
  timeout: (PoolClass, _url, ms) =>
    withPool<typeof cancelTasks, string[]>(PoolClass, CANCEL, { workers: 1, taskCapacity: 8 }, async (pool) => {
      for (let i = 0; i < 3; i++) {
        const error = await within(
          assertRejects(pool.with({ timeout: 20 }).run("spinUntilAborted", probe(), 30_000)),
          10_000,
          "the timed-out run",
        );
        assertEquals((error as Error).name, "TimeoutError", String(error));
      }
      await within(pool.drain(), 10_000, "drain");
      return await idleAccountingProblems(pool, { ms });
    }),

  /** A task that ends its worker thread: recovery frees its record (and the worker is replaced). */
  crash: (PoolClass, _url, ms) =>
    withPool<typeof hostile, string[]>(PoolClass, HOSTILE, { workers: 2, taskCapacity: 8 }, async (pool) => {
      for (let i = 0; i < 2; i++) {
        const error = await within(assertRejects(pool.run("exitThread", 3)), 20_000, "the crashing task");
        assertEquals((error as Error).name, "WorkerCrashedError", String(error));
      }
      assertEquals(await within(pool.run("add", 1, 2), 20_000, "a task after the crashes"), 3);
      await within(pool.drain(), 10_000, "drain");
      return await idleAccountingProblems(pool, { ms });
    }),

  /**
   * Arguments that find no free overflow blocks: their placement fails and gives its record back, and the
   * task waits in the backlog (8 blocks of 124 bytes; each 600-byte argument takes 5).
   */
  blocksExhausted: (PoolClass, _url, ms) =>
    withPool<typeof hostile, string[]>(
      PoolClass,
      HOSTILE,
      { workers: 2, inlineBytes: 64, blockBytes: 128, blocks: 8, payloadMemory: 0 },
      async (pool) => {
        const inputs = Array.from({ length: 40 }, (_, i) => String(i % 10).repeat(600));
        const outputs = await within(
          Promise.all(inputs.map((s) => pool.run("echo", s) as Promise<string>)),
          30_000,
          "echoes",
        );
        assertEquals(outputs.filter((s, i) => s !== inputs[i]).length, 0, "every large result intact");
        await within(pool.drain(), 10_000, "drain");
        return await idleAccountingProblems(pool, { ms });
      },
    ),

  /**
   * At the record table: a handle kept across its record's release and reuses is never current again
   * (over enough reuses to pass a narrow generation), is refused by releaseHandle (the record stays with
   * its new task) and by runsOn (the kill guard's question), while the new handle is accepted.
   */
  staleHandleTable: async (_PoolClass, poolUrl) => {
    const { TaskTable, TaskState } = await import(
      new URL("record/task.ts", poolUrl).href
    ) as typeof import("../../lib/record/task.ts");
    const { PoolMemory } = await import(
      new URL("protocol/memory.ts", poolUrl).href
    ) as typeof import("../../lib/protocol/memory.ts");
    const memory = PoolMemory.create({
      workers: 1,
      dequeCapacity: 4,
      taskCapacity: 2,
      inlineBytes: 64,
      blockBytes: 128,
      blocks: 4,
    });
    TaskTable.init(memory);
    const table = new TaskTable(memory);
    const problems: string[] = [];
    /** Allocates record `index` (others taken and given back), publishes it as RUNNING on worker 0. */
    const take = (index: number): number => {
      for (;;) {
        const handle = table.allocate();
        if (table.indexOf(handle) === index) {
          table.fields.setWorker(index, 0);
          table.fields.storeState(index, TaskState.RUNNING);
          return handle;
        }
        table.release(table.indexOf(handle));
      }
    };
    const old = take(0);
    if (!table.releaseHandle(old)) problems.push("a current handle was refused by releaseHandle");
    for (let reuse = 1; reuse <= 6; reuse++) {
      const next = take(0);
      if (next === old) problems.push(`reuse ${reuse}: the new handle equals the stale one (${old})`);
      if (table.isCurrent(old)) problems.push(`reuse ${reuse}: the stale handle is current`);
      if (!table.isCurrent(next)) problems.push(`reuse ${reuse}: the new handle is not current`);
      if (table.runsOn(old, 0)) problems.push(`reuse ${reuse}: runsOn accepts the stale handle`);
      if (!table.runsOn(next, 0)) problems.push(`reuse ${reuse}: runsOn refuses the current handle`);
      const before = table.duplicateReleases;
      if (table.releaseHandle(old)) problems.push(`reuse ${reuse}: releaseHandle freed the record for a stale handle`);
      if (table.duplicateReleases !== before + 1) problems.push(`reuse ${reuse}: the stale release was not counted`);
      if (table.fields.loadState(0) !== TaskState.RUNNING) {
        problems.push(`reuse ${reuse}: the new task lost its record`);
      }
      if (!table.releaseHandle(next)) problems.push(`reuse ${reuse}: the current handle's release was refused`);
    }
    return problems;
  },

  /**
   * At the pool: task A finishes, its record is reused by B (running, held at a gate); then a late report
   * of A's completion and an abort of A's signal arrive. B must keep its record, must not settle early
   * or be aborted, and must finish with its own result; the kill guard's question refuses A's handle.
   */
  staleHandlePool: (PoolClass, _url, ms) =>
    withPool<typeof cancelTasks, string[]>(PoolClass, CANCEL, { workers: 2, taskCapacity: 2 }, async (pool) => {
      const problems: string[] = [];
      const table = tableOf(pool);
      const controller = new AbortController();
      const a = pool.with({ signal: controller.signal }).run("whoAmI", "A");
      const handleA = placedHandle(pool, "whoAmI");
      assertEquals((await within(a, 10_000, "A")).tag, "A");
      // Two records: C holds one, B takes the other, which is A's (the free list is first in, first out).
      const holdC = probe();
      const c = handled(pool.run("blocker", holdC, 30_000));
      await within(until(holdC, 0), 10_000, "C's start");
      const holdB = probe();
      let bSettled = false;
      const b = handled(pool.run("spinUntilAborted", holdB, 1_000).finally(() => (bSettled = true)));
      await within(until(holdB, 0), 10_000, "B's start");
      const running = (pool as unknown as Internals).producer.ledger.placed.filter((e) =>
        e?.task === "spinUntilAborted"
      );
      const handleB = running.length === 1 ? running[0]!.handle : -1;
      assertEquals(table.indexOf(handleB), table.indexOf(handleA), "B reuses A's record");
      if (handleB === handleA) problems.push(`B's handle is A's (${handleA}): the generation did not advance`);
      const index = table.indexOf(handleB);
      const worker = table.fields.loadWorker(index);
      if (table.runsOn(handleA, worker)) problems.push("the kill guard's runsOn accepts A's stale handle");
      // A late (or duplicate) report of A's completion, as recovery makes for a worker that died after
      // queueing it; then A's caller aborts A, long finished.
      (pool as unknown as Internals).producer.reader.report(handleA);
      controller.abort();
      await new Promise((resolve) => setTimeout(resolve, 0)); // (the report settles synchronously; its reactions run by now)
      if (bSettled) problems.push("B settled on A's late report");
      const state = table.fields.loadState(index);
      if (state !== 2) problems.push(`B's record left RUNNING on A's late report (state ${state})`);
      if ((table.fields.loadFlags(index) & 1) !== 0) problems.push("B was aborted by A's abort");
      // Caught already: stop here (a record freed under B would be freed twice when B finishes, which the
      // free list refuses by a throw, after 10 s, in the pool's own reading of completions).
      if (problems.length > 0) return problems;
      // B spins until its signal aborts or 1 s passes: it must run out, not be aborted.
      const outcome = await within(b.then((v) => v, (e) => `rejected: ${String(e)}`), 10_000, "B");
      if (outcome !== "ran out") problems.push(`B finished with ${String(outcome)}, not its own result`);
      open(holdC);
      await within(c, 10_000, "C");
      await within(pool.drain(), 10_000, "drain");
      problems.push(...await idleAccountingProblems(pool, { ms }));
      return problems;
    }),
};

for (const [name, scenario] of Object.entries(SCENARIOS)) {
  test(`record accounting: scenario '${name}' finds nothing wrong in the shipped code`, async () => {
    assertEquals(await scenario(Pool, SHIPPED_POOL, 10_000), [], name);
  });
}

test("the record accounting and stale-handle scenarios catch every record mutant (RECORD_MUTANTS)", async () => {
  for (const mutant of RECORD_MUTANTS) {
    const url = materializePoolMutant(mutant);
    try {
      const { Pool: MutantPool } = await import(url.href) as { Pool: typeof Pool };
      let problems: string[];
      try {
        problems = await SCENARIOS[mutant.caughtBy](MutantPool, url, 3_000);
      } catch (error) {
        // A scenario's own assertion (a wrong result, a hang) is a catch too: said as such.
        problems = [`the scenario threw: ${(error as Error).message}`];
      }
      console.log(`  record mutant '${mutant.name}' caught by ${mutant.caughtBy}: ${problems.join("; ")}`);
      assert(problems.length > 0, `record mutant '${mutant.name}' not caught by ${mutant.caughtBy}`);
    } finally {
      removePoolMutant(url);
    }
  }
}, 600_000);
