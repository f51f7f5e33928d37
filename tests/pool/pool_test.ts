/**
 * The pool on each runtime: results, errors, lifecycle (close and terminate with tasks queued and running,
 * each settling exactly once), backlog beyond the shared capacity, payloads beyond a record, shared memory by
 * reference, crashing workers, and every bad input.
 */
import { PoolClosedError, PoolTerminatedError, TaskNotFoundError, WorkerCrashedError } from "../../lib/errors.ts";
import { Pool, type PoolOptions } from "../../lib/pool.ts";
import { runtimeFamily } from "../../lib/runtime/thread.ts";
import type * as tasks from "../fixtures/tasks.ts";
import { runScript } from "./_child.ts";
import { assertIdleAccounting } from "./_accounting.ts";
import { assert, assertEquals, assertRejects, test, within } from "../_test.ts";

const TASKS = new URL("../fixtures/tasks.ts", import.meta.url);

function create(options: PoolOptions = {}): Promise<Pool<typeof tasks>> {
  return Pool.create<typeof tasks>(TASKS, { workers: 2, ...options });
}

/** The end of a scenario that leaves the pool at rest: drained, and every record, block and slab free. */
async function atRest(pool: Pool<typeof tasks>): Promise<void> {
  await within(pool.drain(), 10_000, "drain at the end of the scenario");
  await assertIdleAccounting(pool, "at the end of the scenario");
}

test("100k tasks all resolve to their correct results", async () => {
  const pool = await create();
  try {
    const results = await Promise.all(Array.from({ length: 100_000 }, (_, i) => pool.run("add", i, 1)));
    let wrong = 0;
    for (let i = 0; i < results.length; i++) if (results[i] !== i + 1) wrong++;
    assertEquals(wrong, 0, "results that differ from i + 1");
    const stats = pool.stats();
    assertEquals(stats.completed, 100_000, "completed count");
    assertEquals(stats.pending, 0, "pending after all settled");
    const executed = stats.workers.reduce((sum, w) => sum + w.executed, 0);
    assertEquals(executed, 100_000, "tasks executed across workers");
    await pool.drain();
    await assertIdleAccounting(pool, "100k tasks");
  } finally {
    await pool.close();
  }
});

test(
  "1M tiny tasks from the main thread all settle with correct results (backlog beyond shared capacity)",
  async () => {
    const pool = await create();
    try {
      const n = 1_000_000;
      let sum = 0;
      let settled = 0;
      const all: Promise<void>[] = [];
      for (let i = 0; i < n; i++) {
        all.push(
          pool.run("add", i, 0).then((r) => {
            sum += r;
            settled++;
          }),
        );
      }
      await Promise.all(all);
      assertEquals(settled, n, "settled");
      assertEquals(sum, (n * (n - 1)) / 2, "sum of results");
      await atRest(pool);
    } finally {
      await pool.close();
    }
  },
  300_000,
);

test("sync and async task functions both resolve; values of every codec kind round-trip", async () => {
  const pool = await create();
  try {
    assertEquals(await pool.run("addLater", 2, 3, 5), 5, "async task");
    const value = {
      n: -0.5,
      s: "héllo ☃",
      b: [true, false, null, undefined],
      big: 12345678901234567890n,
      m: new Map([["k", 1]]),
      set: new Set([1, 2]),
      d: new Date(0),
      t: new Float64Array([1, 2]),
    };
    const echoed = await pool.run("echo", value) as typeof value;
    assertEquals(echoed.s, value.s, "string");
    assert(echoed.big === value.big, "bigint");
    assert(echoed.m instanceof Map && echoed.m.get("k") === 1, "Map");
    assert(echoed.set instanceof Set && echoed.set.has(2), "Set");
    assert(echoed.d instanceof Date && echoed.d.getTime() === 0, "Date");
    assert(echoed.t instanceof Float64Array && echoed.t[1] === 2, "Float64Array");
    assertEquals(echoed.b.length, 4, "array with undefined");
    await atRest(pool);
  } finally {
    await pool.close();
  }
});

test("a task's thrown error rejects with its name, message, stack and cause, and the worker goes on", async () => {
  const pool = await create();
  try {
    const error = await assertRejects(pool.run("fail", "boom")) as Error;
    assert(error instanceof TypeError, `a TypeError, received ${String(error)}`);
    assertEquals(error.message, "boom", "message");
    assert(typeof error.stack === "string" && error.stack.includes("fail"), "stack from the worker names the task");
    assert(error.cause instanceof RangeError && error.cause.message === "the cause", "cause kept");
    assertEquals(await assertRejects(pool.run("failWithString", "plain")), "plain", "a thrown non-Error value");
    assertEquals(await pool.run("add", 1, 1), 2, "the pool still serves");
    await atRest(pool);
  } finally {
    await pool.close();
  }
});

test("a result that cannot cross threads rejects with a TypeError naming the path", async () => {
  const pool = await create();
  try {
    const error = await assertRejects(pool.run("returnsFunction")) as Error;
    assert(error instanceof TypeError && error.message.includes("'result'"), `received ${String(error)}`);
    await atRest(pool);
  } finally {
    await pool.close();
  }
});

test("payloads larger than a record travel in overflow blocks; larger than the pool is a RangeError", async () => {
  const pool = await create({ inlineBytes: 64, blockBytes: 128, blocks: 64, payloadMemory: 0 });
  try {
    const big = "x".repeat(5000);
    assertEquals((await pool.run("echo", big) as string).length, 5000, "a 5 kB argument and result");
    const many = await Promise.all(
      Array.from({ length: 50 }, (_, i) => pool.run("echo", `${i}`.repeat(300)) as Promise<string>),
    );
    assert(many.every((s, i) => s === `${i}`.repeat(300)), "50 concurrent large payloads, blocks recycled");
    const tooBig = await assertRejects(pool.run("echo", "y".repeat(100_000))) as Error;
    assert(tooBig instanceof RangeError && tooBig.message.includes("bytes"), `received ${String(tooBig)}`);
    const bigResult = await assertRejects(pool.run("bigResult", 5_000)) as Error;
    assert(bigResult instanceof RangeError && bigResult.message.includes("result"), `received ${String(bigResult)}`);
    // From 64 KiB on, a result's bytes are transferred, not written to the pool's memory.
    assertEquals((await pool.run("bigResult", 100_000) as Float64Array).length, 100_000, "an 800 kB result");
    assertEquals(await pool.run("add", 2, 2), 4, "still serving");
    // Every block back, the records of the refused results too.
    await pool.drain();
    await assertIdleAccounting(pool, "payloads in blocks");
  } finally {
    await pool.close();
  }
});

test("a SharedArrayBuffer argument is passed by reference: the worker reads and writes the caller's memory", async () => {
  const pool = await create();
  try {
    const view = new Int32Array(new SharedArrayBuffer(16)).fill(5);
    assertEquals(await pool.run("sumShared", view), 20, "worker read the shared view");
    await pool.run("writeShared", view, 42);
    assertEquals(view[0], 42, "worker's write is visible to the caller");
    await atRest(pool);
  } finally {
    await pool.close();
  }
});

test("more submissions than records wait in order and all settle (taskCapacity 4, 2,000 tasks)", async () => {
  const pool = await create({ taskCapacity: 4 });
  try {
    const results = await Promise.all(Array.from({ length: 2000 }, (_, i) => pool.run("add", i, i)));
    assert(results.every((r, i) => r === 2 * i), "every result correct");
    await pool.drain();
    await assertIdleAccounting(pool, "2,000 tasks through 4 records");
  } finally {
    await pool.close();
  }
});

test("several producers submitting at once all get their own results", async () => {
  const pool = await create({ taskCapacity: 64 });
  try {
    const producer = async (p: number) => {
      let ok = 0;
      for (let i = 0; i < 500; i++) {
        const batch = [pool.run("add", p * 1e6, i), pool.run("addLater", p, i, 0)];
        const [a, b] = await Promise.all(batch);
        if (a === p * 1e6 + i && b === p + i) ok++;
      }
      return ok;
    };
    const counts = await Promise.all([0, 1, 2, 3, 4].map(producer));
    assertEquals(counts, [500, 500, 500, 500, 500], "correct results per producer");
    await atRest(pool);
  } finally {
    await pool.close();
  }
});

test("spawn reports a task's error to onError and drain waits for spawned tasks", async () => {
  const errors: [unknown, string][] = [];
  const pool = await create({ onError: (error, task) => errors.push([error, task]) });
  try {
    for (let i = 0; i < 100; i++) pool.spawn("add", i, i);
    pool.spawn("fail", "spawned");
    await pool.drain();
    assertEquals(pool.stats().pending, 0, "nothing pending after drain");
    assertEquals(errors.length, 1, "one error reported");
    assertEquals(errors[0][1], "fail", "the task's name");
    assertEquals((errors[0][0] as Error).message, "spawned", "the task's error");
    await assertIdleAccounting(pool, "spawned tasks");
  } finally {
    await pool.close();
  }
});

test("close with tasks queued and running: all run and settle exactly once, then submissions reject", async () => {
  const pool = await create();
  const settled = new Array(200).fill(0);
  const all = Array.from({ length: 200 }, (_, i) =>
    pool.run("spin", i % 50 === 0 ? 20 : 0).then(
      () => settled[i]++,
      () => settled[i]++,
    ));
  const closed = pool.close();
  const late = await assertRejects(pool.run("add", 1, 1));
  assert(late instanceof PoolClosedError, `a submission during close rejects: ${String(late)}`);
  await closed;
  await Promise.all(all);
  assert(settled.every((n) => n === 1), "each of the 200 tasks settled exactly once");
  assertEquals(pool.stats().completed, 200, "all 200 completed (none rejected by close)");
  assertEquals(pool.lifecycle, "closed", "state");
  assert(await assertRejects(pool.run("add", 1, 1)) instanceof PoolClosedError, "a submission after close rejects");
});

test("terminate with tasks queued and running: every unsettled task rejects once with PoolTerminatedError", async () => {
  const pool = await create({ taskCapacity: 8 });
  const outcomes: string[] = new Array(100).fill("");
  const all = Array.from({ length: 100 }, (_, i) =>
    pool.run("spin", 10).then(
      () => (outcomes[i] += "ok"),
      (e) => (outcomes[i] += e instanceof PoolTerminatedError ? "terminated" : `other:${String(e)}`),
    ));
  await new Promise((resolve) => setTimeout(resolve, 30));
  await pool.terminate();
  await Promise.all(all);
  assert(outcomes.every((o) => o === "ok" || o === "terminated"), `each settled once: ${outcomes.join(",")}`);
  assert(outcomes.includes("terminated"), "queued tasks were rejected");
  assert(await assertRejects(pool.run("add", 1, 1)) instanceof PoolClosedError, "a submission after terminate rejects");
  assertEquals(pool.lifecycle, "terminated", "state");
});

test("await using closes the pool", async () => {
  let seen: Pool<typeof tasks> | undefined;
  {
    await using pool = await create();
    seen = pool;
    assertEquals(await pool.run("add", 3, 4), 7, "result");
  }
  assertEquals(seen.lifecycle, "closed", "disposed pool is closed");
});

test("a worker that dies while an async task is pending: that task rejects with WorkerCrashedError, one replacement serves", async () => {
  const pool = await create();
  try {
    const error = await assertRejects(pool.run("crashWhilePending"));
    assert(error instanceof WorkerCrashedError, `WorkerCrashedError, received ${String(error)}`);
    assert((error as WorkerCrashedError).cause instanceof Error, "the crash is the cause");
    // The thread's error is followed by its exit event; give it time to arrive. Counting both would start
    // two replacements on one deque.
    await new Promise((resolve) => setTimeout(resolve, 150));
    assertEquals(pool.stats().workerCrashes, 1, "stats count the crash once (its error and its exit are one death)");
    const results = await Promise.all(Array.from({ length: 1000 }, (_, i) => pool.run("add", i, 1)));
    assert(results.every((r, i) => r === i + 1), "the pool keeps serving after the replacement");
    await pool.drain();
    await assertIdleAccounting(pool, "a worker died with an async task pending");
  } finally {
    await pool.close();
  }
});

if (runtimeFamily === "node") {
  test("a worker thread that exits while running a task: the task rejects with WorkerCrashedError", async () => {
    const pool = await create();
    try {
      const error = await assertRejects(pool.run("exitNow"));
      assert(error instanceof WorkerCrashedError, `WorkerCrashedError, received ${String(error)}`);
      assertEquals(error.name, "WorkerCrashedError", "an exit is not a resource limit");
      assertEquals(await pool.run("add", 1, 2), 3, "the pool keeps serving");
      await pool.drain();
      await assertIdleAccounting(pool, "a worker exited while running a task");
    } finally {
      await pool.close();
    }
  });
}

test("bad input: workers <= 0, NaN or fractional is a RangeError naming the value", async () => {
  for (const workers of [0, -1, NaN, 1.5]) {
    const error = await assertRejects(Pool.create(TASKS, { workers }));
    assert(error instanceof RangeError, `RangeError for ${workers}`);
    assert(
      (error as Error).message.includes(`'workers' must be an integer from 1 to 1023: received ${workers}`),
      `message: ${(error as Error).message}`,
    );
  }
  const size = await assertRejects(Pool.create(TASKS, { workers: 1, taskCapacity: 100 }));
  assert(size instanceof RangeError && (size as Error).message.includes("received 100"), "taskCapacity 100");
});

test("bad input: a module that fails to load rejects creation with the loader's error", async () => {
  const error = await assertRejects(
    Pool.create(new URL("../fixtures/broken_tasks.ts", import.meta.url), { workers: 2 }),
  );
  assert(error instanceof Error && error.message.includes("broken task module"), `received ${String(error)}`);
  const missing = await assertRejects(
    Pool.create(new URL("../fixtures/no_such_module.ts", import.meta.url), { workers: 1 }),
  );
  assert(missing instanceof Error, `a missing module rejects: ${String(missing)}`);
  const relative = await assertRejects(Pool.create("./tasks.ts", { workers: 1 }));
  assert(relative instanceof TypeError && (relative as Error).message.includes("URL"), "a relative string");
});

test("bad input: an unknown task rejects with TaskNotFoundError listing the known ones", async () => {
  const pool = await create();
  try {
    const error = await assertRejects((pool as unknown as Pool).run("nope")) as TaskNotFoundError;
    assert(error instanceof TaskNotFoundError, `TaskNotFoundError, received ${String(error)}`);
    assert(error.message.includes("'nope'") && error.message.includes("'add'"), error.message);
    assert(error.known.includes("echo"), "known lists the exports");
    await atRest(pool);
  } finally {
    await pool.close();
  }
});

test("bad input: a non-encodable argument rejects with a TypeError naming its type and path", async () => {
  const pool = await create();
  try {
    const error = await assertRejects(pool.run("echo", { user: { save() {} } })) as Error;
    assert(error instanceof TypeError, `TypeError, received ${String(error)}`);
    assert(error.message.includes("'args[0].user.save'") && error.message.includes("function"), error.message);
    const symbol = await assertRejects(pool.run("echo", Symbol("s"))) as Error;
    assert(symbol instanceof TypeError && symbol.message.includes("symbol"), symbol.message);
    assertEquals(pool.stats().submitted, 0, "rejected arguments are never submitted");
    await atRest(pool);
  } finally {
    await pool.close();
  }
});

test("bad input: without SharedArrayBuffer, creation says how to enable cross-origin isolation", async () => {
  const g = globalThis as { SharedArrayBuffer?: unknown };
  const saved = g.SharedArrayBuffer;
  delete g.SharedArrayBuffer;
  try {
    const error = await assertRejects(Pool.create(TASKS, { workers: 1 }));
    assert(
      error instanceof TypeError && (error as Error).message.includes("Cross-Origin-Opener-Policy"),
      String(error),
    );
  } finally {
    g.SharedArrayBuffer = saved;
  }
});

test("a backlog buffer grown by a burst is reused by the next burst, and given back once the pool idles", async () => {
  const pool = await create({ workers: 2 });
  // The backlog is private: reached for this check only.
  const backlogBytes = () =>
    (pool as unknown as { producer: { submitter: { backlog: { bytes: Uint8Array } } } }).producer.submitter.backlog
      .bytes;
  try {
    const input = "x".repeat(2_000);
    const burst = async () => {
      // 6,000 arguments of 2 KB: beyond the 4,096 records and the 4 MiB of blocks, most wait in the backlog.
      const outputs = await Promise.all(Array.from({ length: 6_000 }, () => pool.run("echo", input)));
      assert(outputs.every((s) => s === input), "every result arrived intact");
    };
    await burst();
    const grown = backlogBytes();
    assert(grown.length > 1 << 20, `the backlog buffer grew past 1 MiB: ${grown.length} bytes`);
    await burst();
    assert(backlogBytes() === grown, "the next burst did not reuse the grown backlog buffer");
    // Idle now: the pool's trim timer (1 s) gives it back.
    const until = Date.now() + 15_000;
    while (backlogBytes().length > 1 << 20 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    assert(backlogBytes().length <= 1 << 20, `an idle pool kept ${backlogBytes().length} bytes of backlog buffer`);
    await atRest(pool);
  } finally {
    await pool.close();
  }
});

test("an idle open pool lets the process exit (its worker threads are unref'd, on Deno too)", () => {
  const script = `
    const { Pool } = await import(${JSON.stringify(new URL("../../lib/pool.ts", import.meta.url).href)});
    const pool = await Pool.create(new URL(${JSON.stringify(TASKS.href)}), { workers: 2 });
    console.log("result " + String(await pool.run("add", 20, 22)));`;
  const started = Date.now();
  const child = runScript(script, 20_000);
  assert(child.stdout.includes("result 42"), `the task ran: ${child.stdout} ${child.stderr}`);
  assert(child.status === 0 && Date.now() - started < 20_000, `exited by itself: status ${child.status}`);
});

test("results that find no free overflow blocks still arrive (by message), with arguments holding every block", async () => {
  // 8 blocks of 124 payload bytes: each ~600-byte argument takes 5, so queued arguments starve results.
  const pool = await create({ inlineBytes: 64, blockBytes: 128, blocks: 8, payloadMemory: 0 });
  try {
    const inputs = Array.from({ length: 40 }, (_, i) => String(i % 10).repeat(600));
    const outputs = await Promise.all(inputs.map((s) => pool.run("echo", s) as Promise<string>));
    assert(outputs.every((s, i) => s === inputs[i]), "every large result arrived intact");
    // The placements that found no blocks gave their records back; every block is free again.
    await pool.drain();
    await assertIdleAccounting(pool, "arguments holding every block");
  } finally {
    await pool.close();
  }
});

// Type-level checks, compiled by `deno check` and `tsc --noEmit` and never run: a task name the module
// does not export, or arguments of the wrong types or number, are type errors (if one stopped being an
// error, its `@ts-expect-error` would itself fail the check).
function typeChecks(pool: Pool<typeof tasks>): Promise<number> {
  // @ts-expect-error 'nope' is not an exported function of the task module
  void pool.run("nope");
  // @ts-expect-error add takes numbers, not a string
  void pool.run("add", "1", 2);
  // @ts-expect-error add takes two arguments
  void pool.run("add", 1);
  // @ts-expect-error spawn checks its arguments too
  pool.spawn("addLater", 1, 2);
  return pool.run("add", 1, 2); // the result is typed: Promise<number>
}
void typeChecks;
