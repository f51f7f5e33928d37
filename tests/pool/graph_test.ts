/**
 * Task graphs and continuations (issue 48, lib/graph/): a node starts once, on the worker that finished its
 * last input, with its inputs' results in its arguments; only the results asked for come back; an input's
 * failure rejects every node downstream with a GraphInputError, and none of them runs; a graph's signal or
 * timeout cancels the nodes not started, and a running node sees its signal; close lets a submitted graph
 * finish, terminate rejects what is unsettled. Each scenario ends at rest with every record back
 * (tests/pool/_accounting.ts, through withTerminatedPool).
 */
import { Pool, type PoolOptions } from "../../lib/pool.ts";
import { GraphInputError } from "../../lib/graph/input_error.ts";
import { GraphNode } from "../../lib/graph/graph.ts";
import { PoolTerminatedError, WorkerCrashedError } from "../../lib/errors.ts";
import { openProducer } from "../../lib/pool_producer.ts";
import { withTerminatedPool } from "./_pool.ts";
import type * as tasks from "../fixtures/graph_tasks.ts";
import { assert, assertEquals, assertRejects, assertThrows, test, within } from "../_test.ts";

const moduleUrl = new URL("../fixtures/graph_tasks.ts", import.meta.url);

function withPool(options: PoolOptions, body: (pool: Pool<typeof tasks>) => void | Promise<void>): Promise<void> {
  return withTerminatedPool(moduleUrl, options, body);
}

function probe(): Int32Array {
  return new Int32Array(new SharedArrayBuffer(64));
}

/** Resolves once `probe[index]` is not 0 (polled every 2 ms; the caller bounds it with `within`). */
async function until(probe: Int32Array, index: number): Promise<void> {
  while (Atomics.load(probe, index) === 0) await new Promise((resolve) => setTimeout(resolve, 2));
}

/** Tasks the producer submitted since its creation (one ledger entry per node whose record comes back). */
function entries(pool: unknown): number {
  return (pool as { producer: { ledger: { submitted: number } } }).producer.ledger.submitted;
}

test("a continuation runs with its input's result, and a join with all of its inputs' and its constants", async () => {
  await withPool({ workers: 2 }, async (pool) => {
    const g = pool.graph();
    const a = g.run("square", 3);
    const b = g.run("square", 4);
    const c = g.run("add", a, b); // a join
    const d = g.run("describe", c, "sum"); // a continuation, with a constant beside the input
    const e = g.run("sum", a, 100, b, c, 1000); // inputs and constants interleaved
    const described = g.result(d);
    // Awaited together: a rejection of either fails this test, never an unhandled one.
    const [summed, text] = await within(Promise.all([g.submit(e), described]), 10_000, "the graph");
    assertEquals(summed, 9 + 100 + 16 + 25 + 1000);
    assertEquals(text, "sum: 25");
  });
});

test("nodes whose constants repeat, or differ only by the sign of a zero, each run with their own", async () => {
  await withPool({ workers: 2 }, async (pool) => {
    // Consecutive nodes with the same primitives share one encoding (graph.ts samePrimitives): each must
    // still get exactly its own arguments, as pool.run would pass them.
    const pairs: [number, number][] = [[0, -0], [-0, -0], [-0, 0], [NaN, 1], [NaN, 1], [1, 1], [1, 1], [1, 2]];
    const g = pool.graph();
    const asked = pairs.map(([a, b]) => g.result(g.run("add", a, b)));
    const last = g.run("describe", 7, "x");
    const again = g.run("describe", 7, "x");
    const other = g.run("describe", 7, "y");
    const texts = [g.result(last), g.result(again), g.result(other)];
    await within(g.submit(), 10_000, "the graph");
    const got = await Promise.all(asked);
    for (let i = 0; i < pairs.length; i++) {
      const want = await within(pool.run("add", ...pairs[i]), 10_000, "pool.run");
      assert(Object.is(got[i], want), `node ${i} (add ${pairs[i]}) gave ${got[i]}, pool.run ${want}`);
    }
    assertEquals(await Promise.all(texts), ["x: 7", "x: 7", "y: 7"]);
  });
});

test("a graph runs to its end while the submitting thread is blocked: no node needs a step of it", async () => {
  await withPool({ workers: 2 }, async (pool) => {
    const seen = probe();
    const g = pool.graph();
    let x = g.run("add", 0, 1);
    for (let i = 1; i < 200; i++) x = g.run(i % 2 === 0 ? "add" : "sum", x, 1);
    const done = g.submit(g.run("reached", seen, x));
    // Blocked (no event loop, no completion read) until the last node wakes it: every node started on a
    // worker, from another node's walk. ("not-equal": the graph ended before the wait began, with this
    // thread in synchronous code since submit() returned: no step of it either.)
    const waited = Atomics.wait(seen, 1, 0, 20_000);
    assert(waited === "ok" || waited === "not-equal", `the last node ran while this thread was blocked: ${waited}`);
    assertEquals(Atomics.load(seen, 1), 200, "with its inputs' results");
    assertEquals(await within(done, 10_000, "the graph"), 200);
  });
});

test("fan-out: one node feeds several, runs once, and every node starts exactly once", async () => {
  await withPool({ workers: 3 }, async (pool) => {
    const seen = probe();
    const g = pool.graph();
    const root = g.run("counted", seen, 1, 7);
    const fanned = [2, 3, 4, 5, 6].map((n) => g.run("add", g.run("counted", seen, n, 0), root));
    const total = g.run("sum", ...fanned);
    assertEquals(await within(g.submit(total), 10_000, "the graph"), 35);
    for (let n = 1; n <= 6; n++) assertEquals(Atomics.load(seen, n), 1, `node counted ${n} ran once`);
  });
});

test("an async node's result feeds its dependants once its promise resolves", async () => {
  await withPool({ workers: 2 }, async (pool) => {
    const g = pool.graph();
    const a = g.run("later", 20);
    const b = g.run("later", 22);
    assertEquals(await within(g.submit(g.run("add", a, b)), 10_000, "the graph"), 42);
  });
});

test("a result that holds a SharedArrayBuffer reaches every dependant by reference, on any worker", async () => {
  await withPool({ workers: 2 }, async (pool) => {
    for (let round = 0; round < 10; round++) {
      const g = pool.graph();
      const buffer = g.run("sharedWords", 100);
      const sums = [1, 2, 3].map(() => g.result(g.run("sumWords", buffer)));
      const [, ...results] = await within(Promise.all([g.submit(), ...sums]), 10_000, "the graph");
      assertEquals(results, [4950, 4950, 4950], `round ${round}`);
    }
  });
});

test("a graph of thousands of nodes is built without awaiting, and only the results asked for come back", async () => {
  await withPool({ workers: 2, taskCapacity: 8192 }, async (pool) => {
    const before = entries(pool);
    const g = pool.graph();
    // A chain of 2,000 continuations, and a fan of 1,000 beside it joined by one node.
    let chain = g.run("add", 0, 1);
    for (let i = 1; i < 2000; i++) chain = g.run("add", chain, 1);
    const root = g.run("square", 2);
    const wide = Array.from({ length: 1000 }, () => g.run("add", root, 1));
    const joined = g.run("sum", ...wide);
    const chainResult = g.result(chain);
    const [wideSum, chainEnd] = await within(Promise.all([g.submit(joined), chainResult]), 30_000, "the graph");
    assertEquals(wideSum, 5000);
    assertEquals(chainEnd, 2000);
    // Two nodes asked for (both sinks): two entries, two records back. The other 3,000 had no promise.
    assertEquals(entries(pool) - before, 2, "ledger entries of the graph");
  });
});

test("the graph's types: a node feeds only a parameter of its result's type, and names only tasks", () => {
  // Checked by the type checker (deno check / tsc): never run.
  const typed = (pool: Pool<typeof tasks>) => {
    const g = pool.graph();
    const n = g.run("square", 2);
    const s = g.run("describe", n, "label");
    g.run("words", s);
    // @ts-expect-error: a string result fed to a number parameter
    g.run("square", s);
    // @ts-expect-error: no such task
    g.run("nope", 1);
    const r: Promise<string> = g.result(s);
    return r;
  };
  assert(typeof typed === "function", "typed");
});

test("a cycle cannot be built: a node names only nodes made before it, of its own graph", async () => {
  await withPool({ workers: 1 }, async (pool) => {
    const g = pool.graph();
    const other = pool.graph();
    const a = g.run("square", 2);
    assertThrows(() => other.run("square", a), TypeError, "a node of another graph");
    assert(a instanceof GraphNode && a.number === 1, "nodes are numbered in the order they are made");
    assertEquals(await g.submit(a), 4);
    assertThrows(() => g.run("square", 3), Error, "submitted already");
    await other.submit();
  });
});

test("an input's rejection rejects every node downstream with a GraphInputError naming it, and none runs", async () => {
  await withPool({ workers: 2 }, async (pool) => {
    const seen = probe();
    const g = pool.graph();
    const ok = g.run("counted", seen, 1, 1);
    const bad = g.run("countedFail", seen, 2, ok);
    const next = g.run("counted", seen, 3, bad as unknown as number);
    const last = g.run("add", next, ok);
    const own = g.result(bad);
    own.catch(() => {}); // (awaited below, after the graph's own promise)
    const error = await within(assertRejects(g.submit(last)), 10_000, "the graph");
    assert(error instanceof GraphInputError, `a GraphInputError: ${String(error)}`);
    assertEquals(error.inputNode, 2, "names the failed node");
    assertEquals(error.input, "countedFail", "names the failed task");
    assert(error.cause instanceof RangeError && error.cause.message === "node 2 failed", "its error is the cause");
    assert(error.message.includes("node 4 ('add')"), `names the node: ${error.message}`);
    const ownError = await assertRejects(own);
    assert(ownError instanceof RangeError, "the failed node itself rejects with its own error");
    assertEquals(Atomics.load(seen, 1), 1, "the input upstream ran");
    assertEquals(Atomics.load(seen, 2), 1, "the failed node ran once");
    assertEquals(Atomics.load(seen, 3), 0, "downstream of it nothing ran");
  });
});

test("submit() rejects with a failed sink's error when nobody asked for its result, after every node settled", async () => {
  await withPool({ workers: 2 }, async (pool) => {
    const g = pool.graph();
    const a = g.run("fail", "the input");
    g.run("add", a, 1);
    g.run("square", 3);
    const error = await within(assertRejects(g.submit()), 10_000, "the graph");
    assert(error instanceof GraphInputError && error.cause instanceof SyntaxError, `${String(error)}`);
  });
});

test("a producer submits graphs as the pool's owner does: results, failures and every record back", async () => {
  await withTerminatedPool<typeof tasks>(moduleUrl, { workers: 2, producers: 1 }, async (pool) => {
    const producer = openProducer(pool.handle());
    try {
      const g = producer.graph();
      const a = g.run("square", 3);
      const c = g.run("add", a, g.run("square", 4));
      assertEquals(await within(g.submit(g.run("describe", c, "sum")), 10_000, "the graph"), "sum: 25");
      const cancellable = producer.graph({ signal: new AbortController().signal });
      const failed = cancellable.run("fail", "x");
      const error = await within(assertRejects(cancellable.submit(cancellable.run("add", failed, 1))), 10_000, "g2");
      assert(error instanceof GraphInputError && error.cause instanceof SyntaxError, `${String(error)}`);
    } finally {
      await within(producer.close(), 10_000, "the producer's close");
    }
  });
});

test("a graph's signal cancels the nodes not started, a running node sees its signal, and none of the rest runs", async () => {
  await withPool({ workers: 1 }, async (pool) => {
    const seen = probe();
    const controller = new AbortController();
    const g = pool.graph({ signal: controller.signal });
    const hold = g.run("blocker", seen, 20_000);
    const after = g.run("counted", seen, 1, 1);
    const dependant = g.run("add", after, 1);
    const held = g.result(hold);
    held.catch(() => {}); // (awaited below)
    const result = g.submit(dependant);
    result.catch(() => {}); // (awaited below)
    await within(until(seen, 0), 10_000, "the blocker's start");
    controller.abort();
    const error = await within(assertRejects(result), 10_000, "the cancelled node");
    assertEquals((error as Error).name, "AbortError", "rejects with the signal's reason");
    assertEquals(await within(held, 10_000, "the running node"), "AbortError", "the running node saw its signal");
    assertEquals(Atomics.load(seen, 1), 0, "a cancelled node never ran");
  });
});

test("a graph's timeout cancels the nodes not started with a TimeoutError", async () => {
  await withPool({ workers: 1 }, async (pool) => {
    const seen = probe();
    const g = pool.graph({ timeout: 100 });
    const hold = g.run("blocker", seen, 20_000);
    const next = g.run("counted", seen, 1, 1);
    g.result(hold).catch(() => {});
    const error = await within(assertRejects(g.submit(next)), 10_000, "the timed-out graph");
    assertEquals((error as Error).name, "TimeoutError", "a TimeoutError");
    assertEquals(Atomics.load(seen, 1), 0, "the node not started never ran");
  });
});

test("a graph whose signal aborted already is refused, and nothing runs", async () => {
  await withPool({ workers: 1 }, async (pool) => {
    const seen = probe();
    const g = pool.graph({ signal: AbortSignal.abort() });
    const error = await assertRejects(g.submit(g.run("counted", seen, 1, 1)));
    assertEquals((error as Error).name, "AbortError", "the signal's reason");
    assertEquals(Atomics.load(seen, 1), 0, "nothing ran");
  });
});

test("a graph's priority is every node's: a high graph's root starts before normal tasks queued earlier", async () => {
  await withPool({ workers: 1 }, async (pool) => {
    const seen = probe();
    const hold = pool.run("blocker", seen, 20_000);
    hold.catch(() => {}); // (awaited below)
    await within(until(seen, 0), 10_000, "the blocker's start");
    const order: string[] = [];
    const normal = [1, 2, 3].map((n) => pool.run("square", n).then(() => order.push(`normal ${n}`)));
    const g = pool.graph({ priority: "high" });
    const graph = g.submit(g.run("add", g.run("square", 5), 1)).then(() => order.push("graph"));
    Atomics.store(seen, 15, 1);
    Atomics.notify(seen, 15);
    await within(Promise.all([hold, graph, ...normal]), 10_000, "the tasks");
    assertEquals(order[0], "graph", `the graph first: ${order.join(", ")}`);
  });
});

test("a graph too large for the free records is refused whole with a RangeError, and nothing leaks", async () => {
  await withPool({ workers: 1, taskCapacity: 16 }, async (pool) => {
    const g = pool.graph();
    let x = g.run("add", 0, 1);
    for (let i = 0; i < 20; i++) x = g.run("add", x, 1);
    const error = await assertRejects(g.submit(x));
    assert(error instanceof RangeError && /taskCapacity/.test(error.message), `${String(error)}`);
    assertEquals(await pool.run("add", 1, 2), 3, "the pool goes on");
  });
});

test("a graph refused at a later node (its constants cannot cross, or its task is unknown) leaves no entry pending: the pool drains", async () => {
  // The nodes before the refused one opened ledger entries (a result asked for, a sink); before the fix
  // they stayed pending for ever and withPool's drain at rest timed out.
  await withPool({ workers: 1 }, async (pool) => {
    const seen = probe();
    const g = pool.graph();
    const a = g.run("counted", seen, 1, 7);
    const asked = assertRejects(g.result(a)); // (handled from now: it rejects inside submit())
    g.run("sum", a, (() => 1) as unknown as number); // a function: cannot be encoded
    const error = await within(assertRejects(g.submit()), 10_000, "the refused graph");
    assert(error instanceof TypeError && /function/.test(error.message), `${String(error)}`);
    assertEquals(await within(asked, 10_000, "the asked result"), error, "the asked result too");

    const h = pool.graph();
    const b = h.run("square", 3); // a sink: its entry is opened before the next node's task is looked up
    h.run("nowhere" as "square", b);
    const missing = await within(assertRejects(h.submit()), 10_000, "the graph naming no task");
    assertEquals((missing as Error).name, "TaskNotFoundError", `${String(missing)}`);
    assertEquals(Atomics.load(seen, 1), 0, "nothing ran");
    assertEquals(pool.stats().pending, 0, "no entry pending");
    assertEquals(await pool.run("add", 1, 2), 3, "the pool goes on");
  });
});

test("a worker's death while it runs a node rejects it and every node downstream, and every record comes back", async () => {
  await withPool({ workers: 2 }, async (pool) => {
    const seen = probe();
    const g = pool.graph();
    const a = g.run("counted", seen, 1, 1);
    const dies = g.run("exitThread", 9, a);
    const next = g.run("counted", seen, 2, dies);
    const last = g.run("add", next, a);
    const beside = g.run("add", a, 1); // not downstream of the death: resolves
    const own = g.result(dies);
    own.catch(() => {});
    const besideResult = g.result(beside);
    besideResult.catch(() => {}); // (awaited below, after the graph's own promise)
    const error = await within(assertRejects(g.submit(last)), 20_000, "the graph");
    assert(error instanceof GraphInputError && error.inputNode === 2, `names the dead node: ${String(error)}`);
    assert(error.cause instanceof WorkerCrashedError, `its cause is the crash: ${String(error.cause)}`);
    assert((await assertRejects(own)) instanceof WorkerCrashedError, "the node itself rejects with the crash");
    assertEquals(await besideResult, 2, "a node beside it resolves");
    assertEquals(Atomics.load(seen, 2), 0, "nothing downstream ran");
    // The pool goes on (a replacement), and withPool checks every record came back.
    assertEquals(await within(pool.run("add", 2, 3), 20_000, "a task after the death"), 5);
  });
});

test("a worker's death in a node of a producer's graph rejects the nodes downstream, and every record comes back", async () => {
  await withTerminatedPool<typeof tasks>(moduleUrl, { workers: 2, producers: 1 }, async (pool) => {
    const producer = openProducer(pool.handle());
    try {
      const seen = probe();
      const g = producer.graph();
      const dies = g.run("exitThread", 9, g.run("square", 2));
      const last = g.run("counted", seen, 1, dies);
      const error = await within(assertRejects(g.submit(last)), 20_000, "the graph");
      assert(error instanceof GraphInputError && error.inputNode === 2, `names the dead node: ${String(error)}`);
      assert(error.cause instanceof WorkerCrashedError, `its cause is the crash: ${String(error.cause)}`);
      assertEquals(Atomics.load(seen, 1), 0, "nothing downstream ran");
      assertEquals(await within(producer.run("add", 2, 3), 20_000, "a task after the death"), 5);
    } finally {
      await within(producer.close(), 10_000, "the producer's close");
    }
  });
});

test("close lets a submitted graph finish; terminate rejects what is unsettled", async () => {
  const pool = await Pool.create<typeof tasks>(moduleUrl, { workers: 2 });
  try {
    const g = pool.graph();
    let x = g.run("later", 0);
    for (let i = 0; i < 100; i++) x = g.run("add", x, 1);
    const result = g.submit(x);
    const closed = pool.close();
    assertEquals(await within(result, 10_000, "the graph"), 100);
    await within(closed, 10_000, "close");
  } finally {
    await pool.terminate();
  }
  const other = await Pool.create<typeof tasks>(moduleUrl, { workers: 1 });
  try {
    const seen = probe();
    const g = other.graph();
    const next = g.run("counted", seen, 1, g.run("blocker", seen, 20_000) as unknown as number);
    const result = g.submit(next);
    result.catch(() => {}); // (awaited below)
    await within(until(seen, 0), 10_000, "the blocker's start");
    const terminated = other.terminate();
    const error = await within(assertRejects(result), 10_000, "the unsettled node");
    assert(error instanceof PoolTerminatedError, `a PoolTerminatedError: ${String(error)}`);
    await terminated;
  } finally {
    await other.terminate();
  }
});
