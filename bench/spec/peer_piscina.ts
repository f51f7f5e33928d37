/**
 * piscina's worker for the specification's benchmark (bench/spec/run.ts): piscina calls the default export
 * with the submitted object, `{ i, n }`, and this runs workload 1's micro-task, the body filch's workers
 * run (work.ts).
 *
 * Threads: a piscina worker thread.
 *
 * @module
 */
import { micro } from "./work.ts";

/**
 * Runs one micro-task.
 *
 * @param task The task's index and the loop's rounds.
 * @returns `i + 1`.
 *
 * @example Usage
 * ```ts
 * import run from "./peer_piscina.ts";
 * console.log(run({ i: 1, n: 10 })); // 2
 * ```
 */
export default function run(task: { i: number; n: number }): number {
  return micro(task.i, task.n);
}
