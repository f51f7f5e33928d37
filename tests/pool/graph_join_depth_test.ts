/**
 * A graph node taken by a worker that waits in a join deep in a recursion: the worker helps (its `b` was
 * stolen) with whatever the injector holds, a graph's nodes among them, at the depth of its join. Swept
 * across the stack's limit (tests/_stack_limit.ts), the node's start, its run and its walk (its result into
 * each dependant's slot, the decrements, the push of the dependant it started) each meet the limit at one
 * call in turn. Every graph settles exactly once with its value (or with the overflow of its own code), none
 * is left waiting on a dependant that was never counted down, and every record comes back.
 */
import { Pool } from "../../lib/pool.ts";
import { HelpWords } from "../fixtures/graph_tasks.ts";
import type * as tasks from "../fixtures/graph_tasks.ts";
import { assertIdleAccounting } from "./_accounting.ts";
import { assert, assertEquals, test, within } from "../_test.ts";

const moduleUrl = new URL("../fixtures/graph_tasks.ts", import.meta.url);
/** The dependants of each graph's root, all of them inputs of its sink. */
const FAN = 6;
/** Sweeps across the limit, and the depths each spans. */
const SWEEPS = 3;
const SPAN = 1_200;

/** Runs one sweep (the joiner's task), submitting a graph whenever the joiner asks; the graphs' outcomes. */
async function sweep(pool: Pool<typeof tasks>): Promise<{ overflowed: number; asked: number; outcomes: string[] }> {
  const ctl = new Int32Array(new SharedArrayBuffer(4 * 8));
  let done = false;
  const joiner = pool.run("helpAcrossStackLimit", SPAN, ctl).finally(() => (done = true));
  const outcomes: Promise<string>[] = [];
  let last = 0;
  while (!done) {
    const step = Atomics.load(ctl, HelpWords.ask);
    if (step === last) {
      await new Promise((resolve) => setTimeout(resolve, 0));
      continue;
    }
    last = step;
    // Its root goes to the injector, where only the joiner looks (the other worker holds its `b`); a
    // fan-out and a join, so that each walk makes several slot writes, decrements and pushes.
    const g = pool.graph();
    const root = g.run("add", step, 1);
    const graph = g.submit(g.run("sum", ...Array.from({ length: FAN }, (_, i) => g.run("add", root, i))));
    Atomics.store(ctl, HelpWords.submitted, step);
    const expected = FAN * (step + 1) + (FAN * (FAN - 1)) / 2;
    outcomes.push(graph.then(
      (v) => (v === expected ? "ok" : `step ${step}: resolved with ${v}, not ${expected}`),
      // A node's own code at the limit: its overflow is the graph's error (a RangeError, or the sink's
      // GraphInputError that names it), settled once like any failure.
      (e) =>
        e instanceof RangeError || (e as Error).cause instanceof RangeError
          ? "overflowed"
          : `step ${step}: rejected with ${e}`,
    ));
    // Done with the step once the graph settled, or after 50 ms (a node given back runs later, elsewhere).
    await Promise.race([graph.catch(() => {}), new Promise((resolve) => setTimeout(resolve, 50))]);
    Atomics.store(ctl, HelpWords.go, step);
    Atomics.notify(ctl, HelpWords.go);
  }
  const overflowed = await within(joiner, 60_000, "the sweep");
  return {
    overflowed,
    asked: Atomics.load(ctl, HelpWords.asked),
    outcomes: await within(Promise.all(outcomes), 30_000, "every graph of the sweep"),
  };
}

test(
  "a graph's nodes run and walked inside a join's wait at the stack's limit: every graph settles once, every record comes back",
  async () => {
    const pool = await Pool.create<typeof tasks>(moduleUrl, { workers: 2, taskCapacity: 4096 });
    try {
      for (let round = 0; round < SWEEPS; round++) {
        const { overflowed, asked, outcomes } = await sweep(pool);
        assertEquals(
          outcomes.filter((o) => o !== "ok" && o !== "overflowed"),
          [],
          `sweep ${round}: the graphs' outcomes`,
        );
        // The scenario was reached: many joins had their `b` stolen and ran a graph inside their wait, and the
        // limit fell inside some of them.
        assert(asked >= 100 && outcomes.length === asked, `sweep ${round}: joins that helped with a graph: ${asked}`);
        assert(overflowed > 0, `sweep ${round}: some joins overflowed`);
        await within(pool.drain(), 10_000, "drain");
        await assertIdleAccounting(pool, `after sweep ${round}`);
      }
    } finally {
      await within(pool.terminate(), 10_000, "terminate");
    }
  },
  240_000,
);
