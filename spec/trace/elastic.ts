/**
 * The main thread of a traced elastic pool (`spec/trace/run.ts`, scenario `elastic`), a thread of its own
 * so that the supervisor's deadline fires even if this one spins. Installs the tracing binding (role
 * `"setup"`), starts an elastic pool of the `lib/` under test (`workers: { min: 1, max: 2 }`, a small
 * idle timeout) whose task module (`spec/trace/tasks.ts`) installs the binding in each worker, and runs
 * bursts separated by idle gaps: each burst queues busy tasks while the one worker runs, so the owner
 * grows the pool to two (GrowStoreStarting, GrowReserve, the new thread's BootStoreAwake); each gap is
 * longer than the idle timeout, so the grown worker sleeps, times out and retires (RetireReserve,
 * RetireUncount, RetireCasSlot, RetireStoreAbsent), and the last one tries to and stays (at the minimum).
 * Checks each burst's results and that the pool grew and shrank, closes the pool, and reports.
 *
 * Nothing of the pool is hooked: the tracing binding records every access to the pool's buffer, and
 * spec/trace.ts keeps those to the slot words, the size word and the counters word (ElasticTrace.tla).
 *
 * Threads: this module runs as the one thread of the run that owns the pool; the pool's workers run
 * `tasks.ts`.
 *
 * @module
 */
import { parentPort, workerData } from "node:worker_threads";
import type { PoolShape } from "../../lib/protocol/layout.ts";
import { traceThisThread } from "./binding.ts";

const { root, shape, min, max, idleTimeout, bursts, gapMs } = workerData as {
  root: string;
  /** The pool's shape, `workers` the maximum (the buffer the recorder knows by its length). */
  shape: PoolShape;
  min: number;
  max: number;
  /** The workers' idle timeout, in ms. */
  idleTimeout: number;
  /** How many bursts. */
  bursts: number;
  /** The idle gap after each burst, in ms (longer than the idle timeout: a worker retires in it). */
  gapMs: number;
};
await traceThisThread(root, "setup");

interface PoolLike {
  run(name: string, ...args: unknown[]): Promise<unknown>;
  stats(): { elastic?: { started: number; retired: number; peak: number } };
  close(): Promise<void>;
}
const { Pool } = await import(new URL("mod.ts", root).href) as {
  Pool: { create(url: URL, options: object): Promise<PoolLike> };
};

/** Busy tasks a burst starts with, and how long each holds its worker (ms). */
const SLOW = 8;
const SLOW_MS = 100;

let failure = "";
try {
  const pool = await Pool.create(new URL("./tasks.ts", import.meta.url), {
    ...shape,
    workers: { min, max },
    idleTimeout,
  });
  for (let burst = 0; burst < bursts; burst++) {
    // Busy tasks that hold a worker a few ms each, and tiny ones behind them: work waits while every
    // worker is busy, which is when the owner grows the pool.
    const jobs: Promise<unknown>[] = [];
    // Long enough that a started thread loads (under the trace's lock) while the burst still runs.
    for (let k = 0; k < SLOW; k++) jobs.push(pool.run("slow", SLOW_MS));
    for (let k = 0; k < 10; k++) jobs.push(pool.run("add", burst, k));
    const results = await Promise.all(jobs);
    for (let k = 0; k < 10; k++) {
      const got = results[SLOW + k];
      if (got !== burst + k) failure ||= `burst ${burst}: add(${burst}, ${k}) gave ${String(got)}`;
    }
    // The gap: the grown worker sleeps, times out and retires.
    await new Promise((resolve) => setTimeout(resolve, gapMs));
  }
  const elastic = pool.stats().elastic;
  if (elastic === undefined) failure ||= "the pool shows no elastic stats: it is not elastic";
  else if (elastic.started < 1 || elastic.retired < 1) {
    failure ||= `the pool did not grow and shrink (started ${elastic.started}, retired ${elastic.retired}): the log would not show it`;
  }
  await pool.close();
} catch (error) {
  failure ||= `the pool failed: ${String(error)}`;
}
parentPort!.postMessage({ failure });
