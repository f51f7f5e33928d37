/**
 * The main thread of a traced pool (`tests/_trace_run.ts`, scenario `pool`), run as a thread of its own so
 * that the supervisor's deadline fires even if this one spins. Installs the tracing binding (role
 * `"setup"`: its set-up of the buffer is not logged; everything after the first worker access is), starts a
 * pool of the `lib/` under test whose task module (`tests/_trace_tasks.ts`) installs the binding in each
 * worker, runs a fork-join and a burst of tiny tasks, checks the results, closes the pool, and reports.
 *
 * @module
 */
import { getEnvironmentData, parentPort, threadId, workerData } from "node:worker_threads";
import type { SharedMemory } from "../lib/atomics.ts";
import type { PoolShape } from "../lib/layout.ts";
import { TRACE_KEY, tracingBinding } from "./_trace.ts";

const { root, shape, fib, tiny } = workerData as { root: string; shape: PoolShape; fib: number; tiny: number };
const trace = getEnvironmentData(TRACE_KEY) as SharedArrayBuffer;
const facade = await import(new URL("lib/atomics.ts", root).href) as {
  atomicsBinding: Readonly<SharedMemory>;
  installSharedMemory(binding: SharedMemory): () => void;
};
facade.installSharedMemory(tracingBinding(trace, threadId, facade.atomicsBinding, "setup"));

interface PoolLike {
  run(name: string, ...args: unknown[]): Promise<unknown>;
  close(): Promise<void>;
}
const { Pool } = await import(new URL("mod.ts", root).href) as {
  Pool: { create(url: URL, options: object): Promise<PoolLike> };
};

let failure = "";
try {
  const pool = await Pool.create(new URL("./_trace_tasks.ts", import.meta.url), { ...shape });
  const expected = (n: number): number => (n < 2 ? n : expected(n - 1) + expected(n - 2));
  const jobs: Promise<unknown>[] = [];
  for (let i = 0; i < 2; i++) {
    jobs.push(
      pool.run("fib", fib, 3).then((v) => {
        if (v !== expected(fib)) failure ||= `fib(${fib}) returned ${String(v)}, not ${expected(fib)}`;
      }),
    );
  }
  for (let i = 0; i < tiny; i++) {
    jobs.push(
      pool.run("add", i, 1).then((v) => {
        if (v !== i + 1) failure ||= `add(${i}, 1) returned ${String(v)}`;
      }),
    );
  }
  await Promise.all(jobs);
  await pool.close();
} catch (error) {
  failure ||= `the pool failed: ${String(error)}`;
}
parentPort!.postMessage({ failure });
