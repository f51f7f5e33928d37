/**
 * Batches (`pool.runMany`, lib/producer/batch.ts): tiny tasks travel in chunks, and cutting a batch into chunks
 * keeps what `Promise.all` of as many `run` calls promises: results in input order, each task run once,
 * one settlement of the batch with the first error, whatever the tasks return or throw, and each argument
 * list read once. `pool.map` sends tiny inputs of a synchronous iterable in chunks too, and yields as if
 * its tasks ran one by one: every result before the first failing input, then that input's error.
 *
 * @module
 */
import { mapChunkLimit, MAX_CHUNK } from "../../lib/producer/batch.ts";
import { PoolClosedError, PoolTerminatedError, WorkerCrashedError } from "../../lib/errors.ts";
import type { Pool } from "../../lib/pool.ts";
import { withTerminatedPool } from "./_pool.ts";
import { assertIdleAccounting } from "./_accounting.ts";
import type * as tasks from "../fixtures/batch_tasks.ts";
import { describe } from "../fixtures/batch_tasks.ts";
import { assert, assertEquals, assertRejects, collect, test, within } from "../_test.ts";

const moduleUrl = new URL("../fixtures/batch_tasks.ts", import.meta.url);

/** A pool of 2 workers whose tasks count their runs into `started` and `finished` (by task index). */
async function withCounters(
  n: number,
  body: (pool: Pool<typeof tasks>, started: Int32Array, finished: Int32Array) => Promise<void>,
): Promise<void> {
  await withTerminatedPool<typeof tasks>(moduleUrl, { workers: 2 }, async (pool) => {
    const started = new Int32Array(new SharedArrayBuffer(4 * n));
    const finished = new Int32Array(new SharedArrayBuffer(4 * n));
    await within(pool.broadcast("install", started, finished), 10_000, "install the counters");
    await body(pool, started, finished);
  });
}

/** The indices whose count is not 1, as a short string for a message ("" if none). */
function notOnce(counts: Int32Array): string {
  const bad: string[] = [];
  counts.forEach((c, i) => {
    if (c !== 1 && bad.length < 5) bad.push(`${i} ran ${c} times`);
  });
  return bad.join(", ");
}

test("runMany of tiny tasks runs them in chunks: one submission per chunk of up to 64, results in input order", async () => {
  await withCounters(0, async (pool) => {
    const n = 100_000;
    const before = pool.stats().submitted;
    const sums = await within(
      pool.runMany("add", Array.from({ length: n }, (_, i): [number, number] => [i, 1])),
      60_000,
      "100k",
    );
    const submissions = pool.stats().submitted - before;
    assertEquals(sums.length, n);
    assert(sums.every((v, i) => v === i + 1), "every result in input order");
    assertEquals(submissions, Math.ceil(n / MAX_CHUNK), "one submission per full chunk");
    // A short batch is not cut: its few tasks may be long, and each worker should get some.
    const few = pool.stats().submitted;
    assertEquals(await within(pool.runMany("add", [[1, 2], [3, 4], [5, 6]]), 10_000, "3 tasks"), [3, 7, 11]);
    assertEquals(pool.stats().submitted - few, 3, "a batch shorter than 8 chunks a worker goes task by task");
    await within(pool.drain(), 30_000, "drain");
    await assertIdleAccounting(pool, "runMany in chunks");
  });
});

test("every task of a chunked batch runs once when some throw: the batch rejects once, with the first error", async () => {
  const n = 5_000;
  await withCounters(n, async (pool, started) => {
    const error = await within(
      assertRejects(pool.runMany("mark", Array.from({ length: n }, (_, i): [number, number, number] => [i, 97, 50]))),
      60_000,
      "a batch with failures",
    );
    assert(error instanceof RangeError && /^task \d+ fails$/.test(error.message), String(error));
    await within(pool.drain(), 30_000, "drain");
    assertEquals(notOnce(started), "", "each task ran exactly once");
    assertEquals(pool.stats().pending, 0, "every chunk settled");
    await assertIdleAccounting(pool, "a chunked batch with failures");
  });
});

test("a chunk finishes only once every promise and thenable of its tasks settled; hostile thenables settle once", async () => {
  const n = 2_000;
  await withCounters(n, async (pool, started, finished) => {
    const error = await within(
      assertRejects(pool.runMany("markAsync", Array.from({ length: n }, (_, i): [number] => [i]))),
      60_000,
      "an async batch",
    );
    assert(error instanceof Error && /^task \d+('s then getter throws| rejects)$/.test(error.message), String(error));
    await within(pool.drain(), 30_000, "drain");
    // A chunk that finished at its first rejection would let drain() resolve with timers still pending.
    assertEquals(notOnce(started), "", "each task ran exactly once");
    assertEquals(notOnce(finished), "", "each task's promise settled before its chunk finished");
    // Without failures: the resolved values, in order.
    const ok = Array.from({ length: 400 }, (_, i): [number] => [i * 4 + (i % 2) * 2]);
    const values = await within(pool.runMany("markAsync", ok), 30_000, "an async batch that succeeds");
    assertEquals(values, ok.map(([i]) => i), "each promise's or thenable's first value");
  });
});

test("argument lists that are not all small primitives go on their own: objects, long strings, symbols, other arities", async () => {
  await withCounters(0, async (pool) => {
    const long = "x".repeat(300);
    const kinds: unknown[][] = [[1, 2], [null, undefined], [true, 5n], [{ v: 1 }], [long], [], ["s", 1, 2], [[1]]];
    const argsList = Array.from({ length: 4_000 }, (_, i) => kinds[i % kinds.length]);
    const before = pool.stats().submitted;
    const described = await within(pool.runMany("describe", argsList), 60_000, "a mixed batch");
    // The task itself, run here, is the oracle: the worker's result must be what a local call gives.
    const expected = argsList.map((args) => describe(...args));
    assertEquals(described, expected, "every result, in input order");
    // Of each 8 lists, the 3 of two primitives in a row share a chunk; those with an object, a long string or
    // an array go alone, and the lists of 0 and 3 arguments break the chunk (one arity a chunk): 6 a round.
    assertEquals(pool.stats().submitted - before, (argsList.length / kinds.length) * 6, "submissions");
    const symbol = await within(
      assertRejects(pool.runMany("describe", Array.from({ length: 1_000 }, (_, i) => i === 500 ? [Symbol("s")] : [i]))),
      30_000,
      "a batch with a symbol",
    );
    assert(symbol instanceof TypeError, `a symbol cannot cross threads: ${String(symbol)}`);
    await within(pool.drain(), 30_000, "drain");
    assertEquals(pool.stats().pending, 0, "every submission settled");
  });
});

test("each argument list of a batch is read once: a getter runs once whether its list is chunked or not", async () => {
  await withCounters(0, async (pool) => {
    let primitiveReads = 0;
    let objectReads = 0;
    const argsList: unknown[][] = Array.from({ length: 2_000 }, (_, i) => [i, 1]);
    argsList[100] = Object.defineProperty([0, 1], 0, { get: () => (primitiveReads++, 41), enumerable: true });
    argsList[200] = Object.defineProperty([0, 1], 0, { get: () => (objectReads++, { a: 1 }), enumerable: true });
    const results = await within(pool.runMany("describe", argsList), 30_000, "a batch with getters");
    assertEquals(results[100], "2:number 41,number 1");
    assertEquals(results[200], '2:object {"a":1},number 1');
    assertEquals([primitiveReads, objectReads], [1, 1], "each getter ran once");
  });
});

test("a worker that dies running a chunk rejects the batch once with WorkerCrashedError; the pool goes on", async () => {
  const n = 2_000;
  await withCounters(n, async (pool, started) => {
    const error = await within(
      assertRejects(pool.runMany("dieAt", Array.from({ length: n }, (_, i): [number, number] => [i, 1_000]))),
      60_000,
      "a batch whose worker dies",
    );
    assert(error instanceof WorkerCrashedError, `WorkerCrashedError, received ${String(error)}`);
    await within(pool.drain(), 30_000, "drain");
    assert(started.every((c) => c <= 1), `no task ran twice: ${notOnce(started)}`);
    assertEquals(pool.stats().workerCrashes, 1, "one crash");
    assertEquals(pool.stats().pending, 0, "every chunk settled");
    const sums = await within(
      pool.runMany("add", Array.from({ length: 1_000 }, (_, i): [number, number] => [i, 1])),
      30_000,
      "after",
    );
    assert(sums.every((v, i) => v === i + 1), "the replacement serves the next batch");
    await within(pool.drain(), 30_000, "drain");
    await assertIdleAccounting(pool, "a worker died running a chunk");
  });
});

/**
 * Runs a batch of `n` lists of `mark(i)` whose list `at` has a getter (for its first value) that calls
 * `end` once (closing or terminating the pool); waits for the batch to reject and for `end`'s promise.
 * Returns the batch's error and how many times the batch settled, counted until the caller asks.
 */
async function batchEndedByGetter(
  pool: Pool<typeof tasks>,
  n: number,
  at: number,
  end: () => Promise<void>,
): Promise<{ error: unknown; settlements: () => number }> {
  const argsList: [number, number, number][] = Array.from({ length: n }, (_, i) => [i, n + 1, n]);
  let ending: Promise<void> | undefined;
  argsList[at] = Object.defineProperty([0, n + 1, n], 0, { get: () => (ending ??= end(), at), enumerable: true });
  let settlements = 0;
  const batch = pool.runMany("mark", argsList);
  batch.then(() => settlements++, () => settlements++);
  const error = await within(assertRejects(batch), 30_000, "a batch whose getter ends the pool");
  assert(ending !== undefined, "the getter ran");
  await within(ending, 30_000, "the pool's end");
  return { error, settlements: () => settlements };
}

test("a getter that closes the pool midway through a batch: the batch rejects once with PoolClosedError; what was submitted runs once, the rest never", async () => {
  const n = 2_000;
  const at = 500;
  await withCounters(n, async (pool, started) => {
    const { error, settlements } = await batchEndedByGetter(pool, n, at, () => pool.close());
    assert(error instanceof PoolClosedError, `PoolClosedError, received ${String(error)}`);
    // Chunks of 64 (2,000 lists, 2 workers): those before the getter's chunk were submitted before close.
    const submitted = Math.floor(at / MAX_CHUNK) * MAX_CHUNK;
    const ranOnce = started.subarray(0, submitted);
    assert(ranOnce.every((c) => c === 1), `what was submitted before close ran once: ${notOnce(ranOnce)}`);
    assert(started.subarray(submitted).every((c) => c === 0), "nothing refused ran");
    assertEquals(pool.stats().pending, 0, "every submission settled");
    assertEquals(settlements(), 1, "the batch settled once");
  });
});

test("a getter that terminates the pool midway through a batch: the batch rejects once, with PoolTerminatedError (the chunks in flight fail first); no task runs twice", async () => {
  const n = 2_000;
  await withCounters(n, async (pool, started) => {
    const { error, settlements } = await batchEndedByGetter(pool, n, 500, () => pool.terminate());
    assert(error instanceof PoolTerminatedError, `PoolTerminatedError, received ${String(error)}`);
    assert(started.every((c) => c <= 1), `no task ran twice: ${notOnce(started)}`);
    assertEquals(settlements(), 1, "the batch settled once");
  });
});

test("map of tiny inputs sends whole chunks: one submission per chunk, results in input order", async () => {
  await withCounters(0, async (pool) => {
    const limit = mapChunkLimit(256, 2); // the default concurrency, 2 workers
    assertEquals(limit, 16);
    // The first window (256) goes one by one; then chunks; 10,000 - 256 is a multiple of 16, so every
    // chunk is whole and nothing is held at the end.
    const n = 10_000;
    const before = pool.stats().submitted;
    const out = await within(collect(pool.map("describe", Array.from({ length: n }, (_, i) => i))), 30_000, "map");
    assertEquals(out.length, n);
    assert(out.every((v, i) => v === `1:number ${i}`), "every result in input order");
    assertEquals(pool.stats().submitted - before, 256 + (n - 256) / limit, "one submission per chunk, no short ones");
    const unordered = await within(
      collect(pool.map("describe", Array.from({ length: 1_000 }, (_, i) => i), { ordered: false })),
      30_000,
      "unordered",
    );
    assertEquals(
      [...unordered].sort(),
      Array.from({ length: 1_000 }, (_, i) => `1:number ${i}`).sort(),
      "unordered: every input once",
    );
    await within(pool.drain(), 30_000, "drain");
    await assertIdleAccounting(pool, "map in chunks");
  });
});

test("map sends one by one what does not fit a chunk: objects and long strings between tiny inputs, async iterables, narrow windows", async () => {
  await withCounters(0, async (pool) => {
    const inputs: unknown[] = Array.from({ length: 1_000 }, (_, i) => i);
    inputs[10] = { a: 1 };
    inputs[500] = "x".repeat(300);
    inputs[600] = { b: [2] };
    const out = await within(collect(pool.map("describe", inputs as number[])), 30_000, "mixed");
    assertEquals(out, inputs.map((v) => describe(v)), "every result in input order");
    let before = pool.stats().submitted;
    assertEquals((await within(collect(pool.map("describe", [1, 2, 3])), 30_000, "short")).length, 3);
    assertEquals(pool.stats().submitted - before, 3, "a map within its first window goes one by one");
    before = pool.stats().submitted;
    const tail = Array.from({ length: 256 + 16 + 5 }, (_, i) => i);
    assertEquals((await within(collect(pool.map("describe", tail)), 30_000, "a tail")).length, tail.length);
    assertEquals(pool.stats().submitted - before, 256 + 1 + 5, "a chunk after the first window; the last 5 one by one");
    async function* slowly() {
      for (let i = 0; i < 100; i++) yield i;
    }
    before = pool.stats().submitted;
    assertEquals((await within(collect(pool.map("describe", slowly())), 30_000, "async")).length, 100);
    assertEquals(pool.stats().submitted - before, 100, "an async iterable's inputs go one by one");
    before = pool.stats().submitted;
    const narrow = Array.from({ length: 100 }, (_, i) => i);
    assertEquals(
      (await within(collect(pool.map("describe", narrow, { concurrency: 31 })), 30_000, "narrow")).length,
      100,
    );
    assertEquals(pool.stats().submitted - before, 100, "a window of fewer than 32 sends no chunks on 2 workers");
  });
});

/** Maps `task` over the inputs 0 to n - 1, which must fail: the error, and the results yielded before it. */
async function failingMap(
  pool: Pool<typeof tasks>,
  task: "markOne" | "failLate",
  n: number,
): Promise<{ error: unknown; seen: unknown[] }> {
  const seen: unknown[] = [];
  const error = await within(
    assertRejects((async () => {
      for await (const v of pool.map(task, Array.from({ length: n }, (_, i) => i))) seen.push(v);
    })()),
    30_000,
    `a failing map of ${task}`,
  );
  return { error, seen };
}

test("map over chunks yields every result before the first failing input, then its error; no task runs twice", async () => {
  const n = 5_000;
  await withCounters(n, async (pool, started) => {
    const { error, seen } = await failingMap(pool, "markOne", n);
    assertEquals((error as Error).message, "input 777 fails");
    assertEquals(seen, Array.from({ length: 777 }, (_, i) => i * 2), "every result before input 777, in order");
    await within(pool.drain(), 30_000, "drain");
    assert(started.every((c) => c <= 1), `no task ran twice: ${notOnce(started)}`);
    assert(started.subarray(0, 778).every((c) => c === 1), "every input up to the failing one ran");
    await assertIdleAccounting(pool, "map over chunks ended by an error");
  });
});

test("a chunk's first failure is by input, not by time: a later rejection at a smaller index wins over an earlier throw", async () => {
  const n = 1_024;
  await withCounters(n, async (pool) => {
    const before = pool.stats().submitted;
    const { error, seen } = await failingMap(pool, "failLate", n);
    // 256 one by one, then chunks of 16 from 256 on: inputs 995 and 999 share the chunk of 992-1007.
    assert(pool.stats().submitted - before <= 256 + (n - 256) / 16, "the inputs after the first window went in chunks");
    assertEquals((error as Error).message, "input 995 rejects");
    assertEquals(seen, Array.from({ length: 995 }, (_, i) => i));
  });
});

test("map over chunks ends on break: what is in flight is aborted, no task runs twice, the inputs are closed", async () => {
  const n = 100_000;
  await withCounters(n, async (pool, started) => {
    let closed = false;
    let pulled = 0;
    function* inputs() {
      try {
        for (let i = 0; i < n; i++) {
          pulled++;
          yield i;
        }
      } finally {
        closed = true;
      }
    }
    const before = pool.stats().submitted;
    let seen = 0;
    for await (const _ of pool.map("markOne", inputs())) {
      if (++seen === 700) break; // (before input 777, which fails)
    }
    assert(closed, "the input generator was closed");
    assert(pulled <= 700 + 256, `inputs pulled only as the window had room: ${pulled}`);
    assert(pool.stats().submitted - before < pulled, "inputs went in chunks before the break");
    await within(pool.drain(), 30_000, "drain");
    assert(started.every((c) => c <= 1), `no task ran twice: ${notOnce(started)}`);
    assertEquals(pool.stats().pending, 0, "every chunk settled");
    await assertIdleAccounting(pool, "map over chunks ended by break (chunks in flight aborted)");
  });
});
