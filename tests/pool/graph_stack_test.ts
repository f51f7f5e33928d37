/**
 * A graph submitted at the stack's limit (a task graph built and submitted from deep in a recursion of the
 * caller's): `submit()` either places the graph whole or throws a RangeError with nothing placed, and every
 * graph it placed settles; no record, block or ledger entry is left behind, and the pool drains. The
 * limit is swept across every call of `submit()` (tests/_stack_limit.ts).
 */
import { Pool } from "../../lib/pool.ts";
import { acrossStackLimit } from "../_stack_limit.ts";
import { assertIdleAccounting } from "./_accounting.ts";
import type * as tasks from "../fixtures/graph_tasks.ts";
import { assert, assertEquals, test, unhandledRejectionsDuring, within } from "../_test.ts";

const moduleUrl = new URL("../fixtures/graph_tasks.ts", import.meta.url);

test("a graph submitted at the stack's limit is placed whole or refused with nothing placed; the pool drains and every record comes back", async () => {
  // Records for every graph the sweeps place (6 each; none settles before the sweeps end): a strand shows in
  // the accounting at rest. The sweep spans more than the reserve (runtime/stack.ts: about 670 of the sweep's
  // frames), so it reaches the depths where the graph is placed.
  const pool = await Pool.create<typeof tasks>(moduleUrl, { workers: 2, taskCapacity: 32_768 });
  try {
    let overflowed = 0;
    const placed: Promise<number>[] = [];
    const others: string[] = [];
    // A graph whose own promise rejects unhandled is a refusal that went astray: counted, and none allowed.
    const unhandled = await unhandledRejectionsDuring(async () => {
      // Two kinds of sweep, each twice (the frames' sizes change as the code tiers up). Built at the depth,
      // the graph's own building reaches deeper than some of the placing does, and the limit cannot fall on
      // those steps; built at the caller's depth, only `submit()` runs at the limit, and the limit falls on
      // each step of the placing that goes deeper than the ones before it.
      const build = () => {
        const g = pool.graph();
        const a = g.run("add", 1, 2);
        const b = g.run("add", a, 3);
        return { g, sink: g.run("add", b, a) };
      };
      const submit = ({ g, sink }: ReturnType<typeof build>) => {
        try {
          placed.push(g.submit(sink));
        } catch (error) {
          if (!(error instanceof RangeError)) others.push(String(error));
          throw error;
        }
      };
      for (let round = 0; round < 2; round++) {
        overflowed += acrossStackLimit(1_500, () => submit(build()));
        // `before` builds each graph at the caller's depth, ahead of its descent.
        let built: ReturnType<typeof build> | undefined;
        overflowed += acrossStackLimit(1_500, () => submit(built!), () => built = build());
      }
      assertEquals(others, [], "submit() throws nothing but the overflow");
      assert(
        overflowed > 0 && placed.length > 0,
        `the sweep crossed the limit: ${overflowed} overflowed, ${placed.length} placed`,
      );
      const outcomes = await within(Promise.allSettled(placed), 20_000, "every placed graph settles");
      // Ran (9), or refused by a step that overflowed before anything was placed: its promise rejects with
      // the RangeError, as a graph refused for any other reason (an argument that cannot be encoded, say).
      // (Not the refusal for want of records: with a strand, the records run out.)
      const overflow = (reason: unknown) =>
        reason instanceof RangeError && !reason.message.startsWith("Cannot submit the graph");
      const wrong = outcomes.filter((o) => o.status === "fulfilled" ? o.value !== 9 : !overflow(o.reason))
        .map((o) => o.status === "fulfilled" ? o.value : String(o.reason));
      assertEquals(wrong, [], "every placed graph ran or was refused with the overflow");
      await new Promise((resolve) => setTimeout(resolve, 50));
    });
    assertEquals(unhandled.map(String), [], "no graph's promise rejected unhandled");
    await within(pool.drain(), 10_000, "drain");
    await assertIdleAccounting(pool, "after the sweep");
    // And the pool still takes graphs.
    const g = pool.graph();
    assertEquals(await within(g.submit(g.run("add", g.run("add", 1, 2), 3)), 10_000, "a graph after"), 6);
  } finally {
    await within(pool.terminate(), 10_000, "terminate");
  }
});
