/**
 * What the sort tests share (`sort_split_test.ts`, `sort_buckets_test.ts`): arrays in shared memory, and
 * the check that a sort left them as the runtime's own sort does, -0 and NaN included.
 */
import type * as tasks from "../../examples/sort/tasks.ts";

/** A shared copy of `values` as the given kind, and scratch of its length. */
export function shared(values: readonly number[], float: boolean): { a: tasks.Sortable; b: tasks.Sortable } {
  const make = (n: number) =>
    float ? new Float64Array(new SharedArrayBuffer(n * 8)) : new Int32Array(new SharedArrayBuffer(n * 4));
  const a = make(values.length);
  a.set(values);
  return { a, b: make(values.length) };
}

/** Throws at the first index where `actual` and `expected` differ (`Object.is`: -0 is not +0, NaN is NaN). */
export function assertSame(actual: tasks.Sortable, expected: tasks.Sortable): void {
  if (actual.length !== expected.length) throw new Error(`length ${actual.length}, expected ${expected.length}`);
  for (let i = 0; i < actual.length; i++) {
    if (!Object.is(actual[i], expected[i])) {
      throw new Error(`not sorted as the runtime sorts: index ${i} holds ${actual[i]}, expected ${expected[i]}`);
    }
  }
}
