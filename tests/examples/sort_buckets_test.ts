/**
 * The bucket sort of `examples/sort/tasks.ts` (`sortByBuckets`): whatever the values, it leaves the array
 * as the runtime's own sort does — inline, and on a pool of workers where the parts count and scatter at
 * once into one scratch array, each part writing only its own places in each bucket.
 *
 * The cells come from a sample of 1,023 values, so arrays longer than that have values outside the
 * sample's range (they must keep their order in the end cells); NaN, -0 and the infinities must land where
 * the runtime's sort puts them; many equal values send the sort down its fallback.
 */
import fc from "fast-check";
import { Pool } from "../../mod.ts";
import * as tasks from "../../examples/sort/tasks.ts";
import { assertSame, shared } from "./_sort.ts";
import { test, within } from "../_test.ts";

const moduleUrl = new URL("../../examples/sort/tasks.ts", import.meta.url);

/** Integers: few distinct ones, any int32, runs already in order, and a narrow band with far outliers. */
const integers = (maxLength: number) =>
  fc.oneof(
    fc.array(fc.integer({ min: -5, max: 5 }), { maxLength, size: "max" }),
    fc.array(fc.integer({ min: -2_147_483_648, max: 2_147_483_647 }), { maxLength, size: "max" }),
    fc.array(fc.integer({ min: -2_147_483_648, max: 2_147_483_647 }), { maxLength, size: "max" }).map((xs) =>
      xs.sort((x, y) => x - y)
    ),
    fc.array(
      fc.oneof(
        { weight: 20, arbitrary: fc.integer({ min: 1_000, max: 1_100 }) },
        { weight: 1, arbitrary: fc.constantFrom(-2_147_483_648, 2_147_483_647, 0, 999, 1_101) },
      ),
      { maxLength, size: "max" },
    ),
  );

/** Doubles: any (NaN too), and the awkward ones (-0 beside +0, infinities, the largest finite). */
const doubles = (maxLength: number) =>
  fc.oneof(
    fc.array(fc.double(), { maxLength, size: "max" }),
    fc.array(fc.constantFrom(-0, 0, 1.5, -1.5, Number.MAX_VALUE, -Infinity, Infinity, NaN), { maxLength, size: "max" }),
    fc.array(
      fc.oneof(
        { weight: 20, arbitrary: fc.double({ min: 1, max: 2, noNaN: true }) },
        { weight: 1, arbitrary: fc.constantFrom(-Infinity, Infinity, NaN, -0, 1e300, -1e300) },
      ),
      { maxLength, size: "max" },
    ),
  );

const arrays = (maxLength: number) =>
  fc.oneof(
    integers(maxLength).map((values) => ({ values, float: false })),
    doubles(maxLength).map((values) => ({ values, float: true })),
  );

test(
  "buckets sort like the runtime's sort (inline): values outside the sample's range, NaN, -0 and +0, equal values",
  () => {
    fc.assert(
      fc.property(
        arrays(3_000),
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 1, max: 400 }),
        ({ values, float }, pieces, bucketLength) => {
          const { a, b } = shared(values, float);
          const expected = a.slice().sort();
          tasks.sortByBuckets(a, b, 0, a.length, pieces, bucketLength);
          assertSame(a, expected);
        },
      ),
      // Shrinking arrays of thousands runs for minutes, synchronously: the test's timeout could not end it.
      { numRuns: 300, interruptAfterTimeLimit: 15_000, markInterruptAsFailure: true },
    );
  },
  120_000,
);

test("buckets sort like the runtime's sort on 2 workers: the parts count and scatter at once", async () => {
  const pool = await Pool.create<typeof tasks>(moduleUrl, { workers: 2 });
  try {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 3_100, max: 30_000 }),
        fc.integer(),
        fc.boolean(),
        fc.integer({ min: 2, max: 4 }),
        fc.integer({ min: 64, max: 2_000 }),
        async (n, seed, float, pieces, bucketLength) => {
          // Random values with an outlier at each end, placed where the sample does not look.
          const ints = new Int32Array(n);
          tasks.fillRandom(ints, seed | 1);
          const values = Array.from(ints, (x) => float ? x / 65_536 : x % 1_000_000);
          values[1] = float ? -Infinity : -2_147_483_648;
          values[n - 2] = float ? NaN : 2_147_483_647;
          const { a, b } = shared(values, float);
          const expected = a.slice().sort();
          await within(pool.run("sortByBuckets", a, b, 0, n, pieces, bucketLength), 20_000, "sortByBuckets");
          assertSame(a, expected);
        },
      ),
      { numRuns: 40, interruptAfterTimeLimit: 15_000, markInterruptAsFailure: true },
    );
  } finally {
    await within(pool.terminate(), 10_000, "terminate");
  }
}, 120_000);
