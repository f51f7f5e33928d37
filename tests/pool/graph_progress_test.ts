/**
 * Progress from graph nodes to the graph's caller (issue 51's last point; lib/graph/ with lib/progress/):
 * `pool.graph({ onProgress })` receives every node's reports (and its forks'), tagged with the node, in
 * order per node, each node's last one before its settle is seen, none for a node after it settled; a
 * throwing handler breaks no settle; a graph without a handler carries no PROGRESS flag and keeps its
 * intermediate nodes' records on the workers, as before. Each scenario ends at rest with every record back
 * (tests/pool/_accounting.ts, through withTerminatedPool).
 */
import type { Pool } from "../../lib/pool.ts";
import { GraphNode } from "../../lib/graph/graph.ts";
import { TaskFlags, TaskState, type TaskTable } from "../../lib/record/task.ts";
import { withTerminatedPool } from "./_pool.ts";
import type * as tasks from "../fixtures/progress_tasks.ts";
import { assert, assertEquals, test, within } from "../_test.ts";

const moduleUrl = new URL("../fixtures/progress_tasks.ts", import.meta.url);
type Tasks = typeof tasks;

/** One delivered report: its node and value. */
interface Seen {
  readonly node: GraphNode<unknown>;
  readonly value: number;
}

/** The values delivered for `node`, in delivery order. */
function of(seen: readonly Seen[], node: GraphNode<unknown>): number[] {
  return seen.filter((s) => s.node === node).map((s) => s.value);
}

/** Whether `values` rise strictly (in order per node: each report read once, none out of order). */
function rising(values: number[]): boolean {
  return values.every((v, i) => i === 0 || v > values[i - 1]);
}

/** The pool's owner-side producer internals a test looks at. */
interface Internals {
  producer: { table: TaskTable; ledger: { submitted: number }; reader: { progress: { watching: number } } };
}

function internals(pool: Pool<Tasks>): Internals["producer"] {
  return (pool as unknown as Internals).producer;
}

/** The flags of the graph node RUNNING now, once one runs (polled; the caller bounds it with `within`). */
async function runningNodeFlags(pool: Pool<Tasks>): Promise<number> {
  const table = internals(pool).table;
  const capacity = table.indexMask + 1;
  for (;;) {
    for (let i = 0; i < capacity; i++) {
      if (table.fields.loadState(i) !== TaskState.RUNNING) continue;
      const flags = table.fields.loadFlags(i);
      if ((flags & TaskFlags.GRAPH) !== 0) return flags;
    }
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

test("a graph's onProgress receives every node's reports with its node, in order per node, each last one before submit() resolves", async () => {
  await withTerminatedPool<Tasks>(moduleUrl, { workers: 3 }, async (pool) => {
    for (let round = 0; round < 3; round++) {
      const seen: Seen[] = [];
      const g = pool.graph<number>({ onProgress: (value, node) => seen.push({ node, value }) });
      const a = g.run("steps", 5, 3); // a root: reports 1..5
      const b = g.run("steps", a, 3); // its continuation: 1..5 again (only the node tells them apart)
      const c = g.run("reportThenReturn", 42, 0); // another root, a sink
      const d = g.run("reportThenReturn", b, 0); // b's continuation, a sink: reports 5
      let atD: number[] | undefined;
      const dResult = g.result(d).then((value) => {
        atD = of(seen, d); // in d's promise's reaction: its last report is there already
        return value;
      });
      await within(g.submit(), 30_000, "the graph");
      assertEquals(await dResult, 5, "d's result");
      assertEquals(atD, [5], `round ${round}: d's report before its promise's reaction`);
      for (const [node, last] of [[a, 5], [b, 5], [c, 42], [d, 5]] as const) {
        const values = of(seen, node);
        assert(rising(values), `round ${round}: node ${node.number} in order: ${values}`);
        assertEquals(values.at(-1), last, `round ${round}: node ${node.number}'s last report, before submit()`);
      }
      assert(
        seen.every((s) => s.node instanceof GraphNode && ([a, b, c, d] as GraphNode<unknown>[]).includes(s.node)),
        "only its nodes",
      );
    }
  });
});

test("a node's forks report with their node, to the graph's caller", async () => {
  await withTerminatedPool<Tasks>(moduleUrl, { workers: 3 }, async (pool) => {
    for (let round = 0; round < 3; round++) {
      const seen: Seen[] = [];
      const g = pool.graph<number>({ onProgress: (value, node) => seen.push({ node, value }) });
      const root = g.run("steps", 2, 1);
      const t = g.run("tree", 20); // joins two leaves (forks), each reporting its id; then reports 100
      const last = g.run("reportThenReturn", root, 0);
      const [tree] = await within(Promise.all([g.result(t), g.submit(last)]), 30_000, "the graph");
      assertEquals(tree, 3, "the tree's result");
      const values = of(seen, t);
      assertEquals(values.at(-1), 100, `the node's own report is last: ${values}`);
      for (const v of values) assert(v === 1 || v === 2 || v === 100, `only its forks' and its own: ${values}`);
      assertEquals(of(seen, last), [2], "its continuation's");
    }
  });
});

test("nothing is delivered for a node after it settled (a leftover timer's report is dropped)", async () => {
  await withTerminatedPool<Tasks>(moduleUrl, { workers: 1 }, async (pool) => {
    const settled = new Set<GraphNode<unknown>>();
    const after: Seen[] = [];
    const seen: Seen[] = [];
    const onProgress = (value: number, node: GraphNode<unknown>) =>
      (settled.has(node) ? after : seen).push({ node, value });
    const g = pool.graph<number>({ onProgress });
    const late = g.run("reportsLate", 20); // reports 1, returns, and reports 2 from a timer 20 ms later
    const next = g.run("reportThenReturn", 7, 0);
    g.result(late).then(() => settled.add(late));
    g.result(next).then(() => settled.add(next));
    await within(g.submit(), 30_000, "the graph");
    assertEquals(of(seen, late), [1], "the report made while it ran");
    // The late report lands while other graphs' nodes (with handlers, in the same records) run.
    for (let i = 0; i < 10; i++) {
      const h = pool.graph<number>({ onProgress });
      const x = h.run("reportThenReturn", 10 + i, 5);
      await within(h.submit(h.run("reportThenReturn", x, 0)), 10_000, "a later graph");
    }
    await new Promise((resolve) => setTimeout(resolve, 30));
    assertEquals(after, [], "nothing for a node after its settle");
    assert(!seen.some((s) => s.value === 2), `the late value reached nobody: ${seen.map((s) => s.value)}`);
  });
});

test("a producer in another thread receives its own graph's reports, with their nodes", async () => {
  await withTerminatedPool<Tasks>(moduleUrl, { workers: 2, producers: 1 }, async (pool) => {
    const owner: Seen[] = [];
    const g = pool.graph<number>({ onProgress: (value, node) => owner.push({ node, value }) });
    const mine = g.run("steps", 3, 5);
    const [inner] = await within(
      Promise.all([pool.run("producerGraphSees", 6, 5), g.submit(mine)]),
      30_000,
      "producerGraphSees",
    );
    assertEquals(inner.result, 6, "the producer's graph's result");
    const first = inner.seen.filter((s) => s.startsWith("1:")).map((s) => Number(s.slice(2)));
    assert(rising(first), `node 1 in order: ${inner.seen}`);
    assertEquals(first.at(-1), 6, `node 1's last report: ${inner.seen}`);
    assertEquals(inner.seen.filter((s) => s.startsWith("2:")), ["2:6"], "node 2's report");
    assertEquals(of(owner, mine).at(-1), 3, "the owner saw its own graph's");
    assert(owner.every((s) => s.node === mine), "and none of the producer's");
  });
});

test("a cancelled graph: the running node's report arrives, the nodes that never ran report nothing", async () => {
  await withTerminatedPool<Tasks>(moduleUrl, { workers: 2 }, async (pool) => {
    const controller = new AbortController();
    const seen: Seen[] = [];
    const g = pool.graph<number>({
      signal: controller.signal,
      onProgress: (value, node) => {
        seen.push({ node, value });
        controller.abort(); // from the handler: the running node sees its signal
      },
    });
    const gate = new Int32Array(new SharedArrayBuffer(4));
    const a = g.run("reportInTurn", 1, gate, 0, 20_000); // reports 1, then runs until its signal aborts
    const b = g.run("reportThenReturn", a, 0);
    const outcomes = await within(
      Promise.all([g.result(a), g.submit(b)].map((p) => p.then(() => "resolved", (e) => (e as Error).name))),
      20_000,
      "the cancelled graph",
    );
    assertEquals(outcomes, ["AbortError", "AbortError"], "the running node and its dependant");
    await new Promise((resolve) => setTimeout(resolve, 20));
    assertEquals(of(seen, a), [1], "the running node's report");
    assertEquals(of(seen, b), [], "none from the node that never ran");
  });
});

test("a throwing graph handler: each throw goes to onError, and every node still settles once", async () => {
  const errors: unknown[] = [];
  await withTerminatedPool<Tasks>(moduleUrl, { workers: 2, onError: (error) => errors.push(error) }, async (pool) => {
    let calls = 0;
    const g = pool.graph<number>({
      onProgress: () => {
        calls++;
        throw new Error("handler");
      },
    });
    const roots = Array.from({ length: 8 }, (_, i) => g.run("reportThenReturn", i, 1));
    const next = roots.map((root) => g.run("reportThenReturn", root, 0));
    const results = await within(Promise.all([...next.map((n) => g.result(n)), g.submit()]), 30_000, "the graph");
    assertEquals(results.slice(0, 8), Array.from({ length: 8 }, (_, i) => i), "every node's result");
    assertEquals(calls, 16, "each node's report reached the handler");
    await new Promise((resolve) => setTimeout(resolve, 10));
    assertEquals(errors.length, 16, "each throw reported to onError");
    assertEquals((errors[0] as Error).message, "handler", "the handler's error");
    assertEquals(pool.stats().pending, 0, "none pending");
  });
});

test("a graph without onProgress carries no PROGRESS flag and keeps its intermediate records on the workers; with one, every node reports and comes back", async () => {
  await withTerminatedPool<Tasks>(moduleUrl, { workers: 2 }, async (pool) => {
    const producer = internals(pool);
    for (const handler of [false, true]) {
      const gate = new Int32Array(new SharedArrayBuffer(4));
      const seen: Seen[] = [];
      const g = handler
        ? pool.graph<number>({ onProgress: (value, node) => seen.push({ node, value }) })
        : pool.graph();
      const a = g.run("reportInTurn", 1, gate, 1, 0); // waits for the gate, reports 1, returns 1
      const b = g.run("reportThenReturn", a, 0);
      const before = producer.ledger.submitted;
      const result = g.submit(b);
      const flags = await within(runningNodeFlags(pool), 10_000, "the first node running");
      const watching = producer.reader.progress.watching;
      Atomics.store(gate, 0, 1);
      Atomics.notify(gate, 0);
      assertEquals(await within(result, 10_000, "the graph"), 1, "its result");
      const entries = producer.ledger.submitted - before;
      if (!handler) {
        assertEquals(flags & (TaskFlags.PROGRESS | TaskFlags.RETURN), 0, "an intermediate node: no flag added");
        assertEquals(watching, 0, "no cell watched");
        assertEquals(entries, 1, "only the asked result has an entry");
        assertEquals(seen, [], "nothing delivered");
      } else {
        assertEquals(flags & TaskFlags.PROGRESS, TaskFlags.PROGRESS, "every node reports");
        assertEquals(flags & TaskFlags.RETURN, TaskFlags.RETURN, "and comes back");
        assertEquals(watching, 2, "both nodes' cells watched");
        assertEquals(entries, 2, "an entry a node");
        assertEquals(of(seen, a), [1], "the intermediate node's report");
        assertEquals(of(seen, b), [1], "the sink's report");
      }
    }
  });
});

test("a graph's onProgress must be a function", async () => {
  await withTerminatedPool<Tasks>(moduleUrl, { workers: 1 }, (pool) => {
    let error: unknown;
    try {
      pool.graph({ onProgress: 3 as unknown as () => void });
    } catch (e) {
      error = e;
    }
    assert(error instanceof TypeError, `a TypeError: ${error}`);
  });
});
