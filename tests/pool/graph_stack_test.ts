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
  // Records for every graph the sweep places (6 each; none settles before the sweep ends): a strand shows in
  // the accounting at rest. The sweep spans more than the reserve (runtime/stack.ts: about 670 of the sweep's
  // frames), so it reaches the depths where the graph is placed.
  const pool = await Pool.create<typeof tasks>(moduleUrl, { workers: 2, taskCapacity: 16_384 });
  try {
    let overflowed = 0;
    const placed: Promise<number>[] = [];
    const others: string[] = [];
    // A graph whose own promise rejects unhandled is a refusal that went astray: counted, and none allowed.
    const unhandled = await unhandledRejectionsDuring(async () => {
      overflowed = acrossStackLimit(1_500, () => {
        const g = pool.graph();
        const a = g.run("add", 1, 2);
        const b = g.run("add", a, 3);
        const c = g.run("add", b, a);
        try {
          placed.push(g.submit(c));
        } catch (error) {
          if (!(error instanceof RangeError)) others.push(String(error));
          throw error;
        }
      });
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
