/**
 * What the tests of setup once per worker and of failed starts share (worker_setup_test.ts,
 * replacement_failure_test.ts): the task module they load, the shared counters its `setupWorker` and
 * `teardownWorker` count in, and an `onError` that records each error and lets a test await the next.
 *
 * @module
 */

/** The task module of those tests (tests/fixtures/setup_tasks.ts). */
export const TASKS: URL = new URL("../fixtures/setup_tasks.ts", import.meta.url);

/** The fixture's counters: [0] setups started, [1] teardowns run. */
export function counts(): Int32Array {
  return new Int32Array(new SharedArrayBuffer(8));
}

/** An `onError` that keeps every error it is given; `next()` resolves with the latest, or the next to come. */
export function errorsOf(): { errors: unknown[]; onError: (error: unknown) => void; next: () => Promise<unknown> } {
  const errors: unknown[] = [];
  const waiters: ((error: unknown) => void)[] = [];
  return {
    errors,
    onError: (error) => {
      errors.push(error);
      waiters.shift()?.(error);
    },
    next: () => errors.length > 0 ? Promise.resolve(errors.at(-1)) : new Promise((resolve) => waiters.push(resolve)),
  };
}
