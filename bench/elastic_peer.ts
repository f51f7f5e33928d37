/**
 * piscina's task module for bench/elastic.ts: piscina calls the default export with the submitted object.
 * `{ units }` runs bench/tasks.ts `work` (the burst's CPU task, the same body filch's workers run);
 * `{ a, b }` adds (the first task after the idle gap). Threads: piscina's workers.
 *
 * @module
 */
import { add, work } from "./tasks.ts";

/**
 * One piscina task.
 *
 * @param task `{ units }` for a CPU task, `{ a, b }` for a tiny one.
 * @returns The task's result.
 *
 * @example Usage
 * ```ts ignore
 * new Piscina({ filename: new URL("./elastic_peer.ts", import.meta.url).href }).run({ a: 1, b: 2 });
 * ```
 */
export default function task(task: { units: number } | { a: number; b: number }): number {
  return "units" in task ? work(task.units) : add(task.a, task.b);
}
