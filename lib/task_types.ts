/**
 * The types that name a task module's tasks, their arguments and their results: what the submitting surface
 * (lib/submitter.ts) and a task graph (lib/graph/graph.ts) both type their calls with. A file of their own so
 * that the graph, which the submitting surface builds, need not import the surface back.
 *
 * Threads: types only.
 *
 * @module
 */

/** Any function: what a task module's task exports are. */
// deno-lint-ignore no-explicit-any
export type AnyFunction = (...args: any[]) => unknown;

/**
 * The names of `M`'s exports that are functions, but `setupWorker` and `teardownWorker` (the worker's own
 * setup and teardown, lib/worker/setup.ts, which the pool calls itself): the tasks a pool of module `M` can
 * run.
 */
export type TaskName<M> = Exclude<
  { [K in keyof M]: M[K] extends AnyFunction ? K : never }[keyof M] & string,
  "setupWorker" | "teardownWorker"
>;

/** The names of `M`'s tasks that take one argument (or none): the tasks `Pool.map` can run. */
export type UnaryTaskName<M> =
  & { [K in keyof M]: M[K] extends (arg: infer _A) => unknown ? K : never }[keyof M]
  & TaskName<M>;

/** The parameters of task `K` of module `M`. */
export type TaskArgs<M, K extends keyof M> = M[K] extends (...args: infer A) => unknown ? A : never;

/** What task `K` of module `M` resolves to. */
export type TaskResult<M, K extends keyof M> = M[K] extends (...args: infer _A) => infer R ? Awaited<R> : never;
