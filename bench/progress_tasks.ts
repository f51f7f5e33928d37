/** Tasks of bench/progress.ts. */
import { currentTask } from "../mod.ts";

/** A tiny task that never reports. */
export function add(a: number, b: number): number {
  return a + b;
}

/**
 * Reports `n` values in a tight loop (numbers `i / n`, or small objects `{ done: i, of: n }`) and returns
 * the ns one report took, measured here, on the worker (the loop's own cost subtracted: the same loop with
 * no report).
 */
export function reportLoop(n: number, kind: "number" | "object"): number {
  const task = currentTask();
  if (task === undefined) throw new Error("Cannot measure a report outside a pool task");
  let sink = 0;
  const base0 = performance.now();
  for (let i = 0; i < n; i++) sink += i / n;
  const base = performance.now() - base0;
  const t0 = performance.now();
  if (kind === "number") {
    for (let i = 0; i < n; i++) task.progress(i / n);
  } else {
    for (let i = 0; i < n; i++) task.progress({ done: i, of: n });
  }
  const elapsed = performance.now() - t0;
  return sink < 0 ? -1 : (Math.max(0, elapsed - base) * 1e6) / n;
}
