/**
 * The central-queue and round-robin contender's worker (bench/spec/run.ts): a bare thread with no pool,
 * one message in and one message out per task, running the same bodies as filch's workers (work.ts).
 * A message `{ i, k, n, s, w }`: `k` -1 runs `micro(i, n)` (workload 1), 0–2 runs `mixed(i, k, n, s, w)`
 * (workload 3); the reply is `{ i, r }` with the task's result.
 *
 * Threads: a thread that startThread (lib/runtime/thread.ts) started; nothing else.
 *
 * @module
 */
import { parentPort } from "../../lib/runtime/thread.ts";
import { micro, mixed } from "./work.ts";

/** A task, as the main thread posts it. */
export interface BareTask {
  i: number;
  k: number;
  n: number;
  s: number;
  w: number;
}

const port = parentPort();
port.onMessage((data) => {
  const m = data as BareTask;
  port.post({ i: m.i, r: m.k === -1 ? micro(m.i, m.n) : mixed(m.i, m.k, m.n, m.s, m.w) });
});
