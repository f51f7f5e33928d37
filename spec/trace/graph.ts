/**
 * The main thread of a traced pool running task graphs (`spec/trace/run.ts`, scenario `graph`), a thread
 * of its own so that the supervisor's deadline fires even if this one spins. Installs the tracing binding
 * (role `"setup"`), starts a pool of the `lib/` under test (2 workers) whose task module
 * (`spec/trace/tasks.ts`) installs the binding in each worker, and submits, one after the other (each
 * awaited before the next, so that spec/trace.ts can cut the log into one graph each), the shapes
 * spec/Graph.tla models, numbered as it numbers them (a node's number is its order of building): a
 * diamond, a join, a chain, a diamond whose node 2 throws, and a diamond cancelled by its signal while its
 * root runs (the root runs until it sees its signal). Checks each outcome, closes the pool, and reports.
 *
 * @module
 */
import { parentPort, workerData } from "node:worker_threads";
import type { PoolShape } from "../../lib/protocol/layout.ts";
import { traceThisThread } from "./binding.ts";

const { root, shape, rounds } = workerData as { root: string; shape: PoolShape; rounds: number };
await traceThisThread(root, "setup");

interface Node {
  readonly number: number;
}
interface GraphLike {
  run(task: string, ...args: unknown[]): Node;
  submit(node?: Node): Promise<unknown>;
}
interface PoolLike {
  graph(options?: object): GraphLike;
  close(): Promise<void>;
}
const { Pool } = await import(new URL("mod.ts", root).href) as {
  Pool: { create(url: URL, options: object): Promise<PoolLike> };
};

let failure = "";
const expect = (what: string, got: unknown, want: unknown) => {
  if (got !== want) failure ||= `${what}: ${String(got)}, not ${String(want)}`;
};
try {
  const pool = await Pool.create(new URL("./tasks.ts", import.meta.url), { ...shape });
  for (let round = 0; round < rounds; round++) {
    // diamond: 1 -> 2, 1 -> 3, {2, 3} -> 4
    let g = pool.graph();
    let a = g.run("node");
    let d = g.run("node", g.run("node", a), g.run("node", a));
    expect("the diamond", await g.submit(d), 5);
    // join: {1, 2} -> 3
    g = pool.graph();
    expect("the join", await g.submit(g.run("node", g.run("node"), g.run("node"))), 3);
    // chain: 1 -> 2 -> 3
    g = pool.graph();
    expect("the chain", await g.submit(g.run("node", g.run("node", g.run("node")))), 3);
    // a diamond whose node 2 throws: 4 rejects naming it, and never runs
    g = pool.graph();
    a = g.run("node");
    d = g.run("node", g.run("fail", a), g.run("node", a));
    try {
      await g.submit(d);
      failure ||= "the failing diamond resolved";
    } catch (error) {
      expect("the failing diamond's error", (error as Error).name, "GraphInputError");
    }
    // a diamond cancelled while its root runs: 2, 3 and 4 are cancelled, and never run
    const controller = new AbortController();
    g = pool.graph({ signal: controller.signal });
    a = g.run("slow", 5_000);
    d = g.run("node", g.run("node", a), g.run("node", a));
    const submitted = g.submit(d);
    setTimeout(() => controller.abort(new Error("cancelled by the traced run")), 10);
    try {
      await submitted;
      failure ||= "the cancelled diamond resolved";
    } catch (error) {
      expect("the cancelled diamond's reason", (error as Error).message, "cancelled by the traced run");
    }
  }
  await pool.close();
} catch (error) {
  failure ||= `the pool failed: ${String(error)}`;
}
parentPort!.postMessage({ failure });
