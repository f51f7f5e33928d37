/**
 * The split-by-value sort of `examples/sort/tasks.ts` (`sortBySplit`): whatever the values, it leaves the
 * array as the runtime's own sort does, inline and on a pool of workers (where the two sides of each split
 * run at once on shared memory, and a side that began sorting before the other was placed would overwrite
 * it).
 */
import fc from "fast-check";
import { Pool } from "../../mod.ts";
import * as tasks from "../../examples/sort/tasks.ts";
import { assertSame, shared } from "./_sort.ts";
import { test, within } from "../_test.ts";

const moduleUrl = new URL("../../examples/sort/tasks.ts", import.meta.url);

/** Values with many equal ones, runs already in order, -0 beside +0 (float), and the extremes. */
const arrays = fc.oneof(
  fc.array(fc.integer({ min: -5, max: 5 }), { maxLength: 400, size: "max" }),
  fc.array(fc.integer(), { maxLength: 400, size: "max" }),
  fc.array(fc.integer(), { maxLength: 400, size: "max" }).map((xs) => xs.sort((x, y) => x - y)),
  fc.array(fc.constantFrom(-0, 0, 1.5, -1.5, Number.MAX_VALUE, -Infinity), { maxLength: 400, size: "max" }),
  fc.array(fc.double({ noNaN: true }), { maxLength: 400, size: "max" }),
);

test(
  "a split by value sorts like the runtime's sort (inline): equal values, sorted input, -0 and +0, every cutoff",
  () => {
    fc.assert(
      fc.property(arrays, fc.integer({ min: 1, max: 64 }), fc.boolean(), (values, cutoff, float) => {
        const isFloat = float || values.some((x) => !Number.isInteger(x) || Object.is(x, -0));
        const { a, b } = shared(values, isFloat);
        const expected = a.slice().sort();
        tasks.sortBySplit(a, b, 0, a.length, cutoff);
        assertSame(a, expected);
      }),
      // Shrinking arrays of hundreds of values can run long, synchronously: the time limit ends it.
      { numRuns: 300, interruptAfterTimeLimit: 15_000, markInterruptAsFailure: true },
    );
  },
  60_000,
);

test("a split by value sorts like the runtime's sort on 2 workers: both sides of every split at once", async () => {
  const pool = await Pool.create<typeof tasks>(moduleUrl, { workers: 2 });
  try {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer(), { minLength: 1_000, maxLength: 20_000 }),
        fc.integer({ min: 64, max: 2_000 }),
        async (values, cutoff) => {
          const { a, b } = shared(values, false);
          const expected = a.slice().sort();
          await within(pool.run("sortBySplit", a, b, 0, a.length, cutoff), 20_000, "sortBySplit");
          assertSame(a, expected);
        },
      ),
      { numRuns: 40 },
    );
  } finally {
    await within(pool.terminate(), 10_000, "terminate");
  }
}, 120_000);
