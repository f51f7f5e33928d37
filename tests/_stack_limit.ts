/**
 * A real stack overflow swept across every call of an operation: {@link acrossStackLimit} measures how
 * deep a recursion can go, recurses to `k` frames short of that and runs the operation there, for each
 * `k` of a span. At some `k` the limit falls at each call the operation makes in turn, inside the pool's
 * code or the runtime's (a regular expression's compile, say), as in a task that recursed deep and then
 * forked or joined. Where `cutRun` (tests/protocol/_cut_at.ts) simulates a throw at a chosen shared
 * access, this one is the runtime's own overflow, whatever it throws.
 *
 * Any thread; used by the reliability fixture (tests/fixtures/hostile_tasks.ts, in a worker) and the codec
 * tests (on the test's thread).
 *
 * @module
 */

let reached = 0;
let unwound = 0;

/**
 * Recurses `n` frames, then calls `then` there (counting the frames it made in `reached`). Work after
 * the call keeps it from being a tail call: JavaScriptCore (Bun) runs tail calls in constant stack (even
 * `const r = f(); return r;`), and this must use stack.
 */
function descend(n: number, then: () => unknown): unknown {
  reached++;
  if (n <= 0) return then();
  const result = descend(n - 1, then);
  unwound++;
  return result;
}

/**
 * Runs `at` at `k` frames short of the stack's limit, for each `k` in `[0, span)` (the limit measured
 * again each time: it varies with the tier the code runs in). A RangeError (the overflow) is counted;
 * anything else `at` throws is thrown on.
 *
 * @param span How many depths, from the limit up.
 * @param at The operation.
 * @param before Run before each descent, at the caller's depth (to reset what `at` reads).
 * @returns How many runs of `at` overflowed.
 *
 * @example Usage
 * ```ts ignore
 * const overflowed = acrossStackLimit(400, () => encoder.encode(["x".repeat(200)]));
 * ```
 */
export function acrossStackLimit(span: number, at: () => unknown, before?: () => void): number {
  let overflowed = 0;
  for (let k = 0; k < span; k++) {
    reached = 0;
    try {
      descend(1e9, () => 0);
    } catch {
      // The limit: `reached` frames.
    }
    const limit = reached;
    before?.();
    try {
      descend(limit - k, at);
    } catch (error) {
      if (!(error instanceof RangeError)) throw error;
      overflowed++;
    }
  }
  return overflowed;
}
