// The task module of the npm build smoke test (tests/consumers/npm_smoke.mjs): plain JavaScript, so that the
// machine's own Node (20, which cannot strip types) loads it; it imports filch from the built package (by a
// computed URL, so that `deno check tests/` does not follow it into dist/, which may not be built yet).
const { join } = await import(new URL("../../dist/mod.js", import.meta.url).href);

/** Two numbers added. */
export function add(a, b) {
  return a + b;
}

/** Fibonacci with a join inside the task: the forks go through the pool's deques. */
export function fib(n) {
  if (n < 12) return n < 2 ? n : fib(n - 1) + fib(n - 2);
  const [a, b] = join(() => fib(n - 1), fib, n - 2);
  return a + b;
}

/** One argument, for map. */
export function square(x) {
  return x * x;
}
