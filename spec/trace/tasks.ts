/**
 * The task module of a traced pool (`spec/trace/run.ts`): before the worker loop starts (a pool thread
 * imports its task module first), it installs the tracing binding of `spec/trace/binding.ts` on the `lib/` the
 * run uses, so that every access of this thread is recorded from its first.
 *
 * The trace buffer and the root of the `lib/` under test come through `node:worker_threads`' environment
 * data, which the pool's threads inherit from the main thread (Node, Deno and Bun, web Workers included).
 * The root is the repository, or a copy of `mod.ts` and `lib/` with a mutant applied.
 *
 * @module
 */
import { getEnvironmentData } from "node:worker_threads";
import { ROOT_KEY, traceThisThread } from "./binding.ts";

const root = getEnvironmentData(ROOT_KEY);
if (typeof root !== "string") {
  throw new Error(
    `Cannot load spec/trace/tasks.ts as the lib root is missing from environment data ('${ROOT_KEY}'): run it from spec/trace/run.ts`,
  );
}
await traceThisThread(root, "run");

type Join = <A, B, P extends unknown[]>(a: () => A, b: (...args: P) => B, ...args: P) => [A, B];
const { join, currentTask } = await import(new URL("mod.ts", root).href) as {
  join: Join;
  currentTask(): { signal: AbortSignal } | undefined;
};

/** Fork-join Fibonacci, joining above `cutoff`: pushes, pops, steals and steal-halves. */
export function fib(n: number, cutoff: number): number {
  if (n <= cutoff || n < 2) return n < 2 ? n : fibLeaf(n - 1) + fibLeaf(n - 2);
  // b's arguments in an object: a join always forks such a b (a lazy join may keep a b of numbers inline,
  // lib/worker/fork_join.ts `keepsInline`), so that every join reaches the deque whose accesses are validated.
  const [a, b] = join(() => fib(n - 1, cutoff), fibPiece, { n: n - 2, cutoff });
  return a + b;
}

/** {@link fib} as a forked piece: its arguments in an object. */
export function fibPiece(box: { n: number; cutoff: number }): number {
  return fib(box.n, box.cutoff);
}

/**
 * {@link fib} with `b`'s arguments as numbers: a lazy join reads its own deque's ends (plain reads,
 * `dequeDepth`, which the log does not hold) and keeps `b` inline when the deque already holds two older
 * tasks, so the log has its forks and inline joins mixed.
 */
export function fibLazy(n: number, cutoff: number): number {
  if (n <= cutoff || n < 2) return fibLeaf(n);
  const [a, b] = join(() => fibLazy(n - 1, cutoff), fibLazy, n - 2, cutoff);
  return a + b;
}

function fibLeaf(n: number): number {
  return n < 2 ? n : fibLeaf(n - 1) + fibLeaf(n - 2);
}

/** A tiny task: the injector, the free list and the completion queue. */
export function add(a: number, b: number): number {
  return a + b;
}

/** A graph node (scenario `graph`): its inputs' results summed, plus one. */
export function node(...inputs: number[]): number {
  return inputs.reduce((a, b) => a + b, 1);
}

/** A graph node that throws (scenario `graph`: an input's failure). */
export function fail(): number {
  throw new RangeError("the failing node of the traced graph");
}

/**
 * A graph root that runs until its graph is cancelled (scenario `graph`), at most `ms`: a running node sees
 * its signal at once (its flags word, read every 2 ms), so the cancellation always lands while it runs,
 * however late the submitting thread's timer fires on a loaded machine.
 */
export function slow(ms: number): number {
  const signal = currentTask()?.signal;
  const until = Date.now() + ms;
  for (let next = Date.now(); Date.now() < until;) {
    if (Date.now() < next) continue; // busy: the worker is inside the node's code
    if (signal?.aborted) break;
    next = Date.now() + 2;
  }
  return 1;
}
