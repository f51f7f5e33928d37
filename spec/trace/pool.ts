/**
 * The main thread of a traced pool (`spec/trace/run.ts`, scenario `pool`), run as a thread of its own so
 * that the supervisor's deadline fires even if this one spins. Installs the tracing binding (role
 * `"setup"`: its set-up of the buffer is not logged; everything after the first worker access is), starts a
 * pool of the `lib/` under test whose task module (`spec/trace/tasks.ts`) installs the binding in each
 * worker, runs a fork-join and a burst of tiny tasks, checks the results, closes the pool, and reports.
 *
 * @module
 */
import { parentPort, Worker, workerData } from "node:worker_threads";
import type { PoolShape } from "../../lib/protocol/layout.ts";
import { traceThisThread } from "./binding.ts";

const { root, shape, fib, tiny, wave, pauseMs, producers = 0 } = workerData as {
  root: string;
  shape: PoolShape;
  /** The n of the two fork-join fibs to run (one forking every join, one with lazy joins), or 0 for none. */
  fib: number;
  /** Tiny tasks to run. */
  tiny: number;
  /** Tiny tasks submitted at once, each wave awaited before the next (0: all at once). */
  wave: number;
  /** A pause after every fifth wave, so that the workers doze and sleep (ms); 0–5 ms after the others. */
  pauseMs: number;
  /** Producers in other threads (`spec/trace/producer.ts`), each running `tiny` tasks beside this one's. */
  producers?: number;
};
await traceThisThread(root, "setup");

interface PoolLike {
  run(name: string, ...args: unknown[]): Promise<unknown>;
  close(): Promise<void>;
  handle(): { transfer: readonly Transferable[] };
}
const { Pool } = await import(new URL("mod.ts", root).href) as {
  Pool: { create(url: URL, options: object): Promise<PoolLike> };
};

let failure = "";
try {
  const pool = await Pool.create(new URL("./tasks.ts", import.meta.url), { ...shape });
  // The pool's counters word (its buffer is private: reached for the steering below only).
  const buffer = (pool as unknown as { buffer?: SharedArrayBuffer }).buffer;
  const sleepWord = wave > 0 && buffer instanceof SharedArrayBuffer
    ? new Int32Array(buffer, (await import(new URL("lib/protocol/layout.ts", root).href)).poolLayout(shape).sleep, 1)
    : null;
  const expected = (n: number): number => (n < 2 ? n : expected(n - 1) + expected(n - 2));
  const jobs: Promise<unknown>[] = [];
  // Producers in other threads, each with a handle posted to it: they submit while this thread does.
  for (let p = 0; p < producers; p++) {
    const handle = pool.handle();
    const thread = new Worker(new URL("./producer.ts", import.meta.url));
    jobs.push(
      new Promise<void>((resolve) => {
        thread.once("message", (m: { failure: string }) => {
          failure ||= m.failure;
          resolve();
        });
        thread.once("error", (e) => {
          failure ||= `a producer thread failed: ${String(e)}`;
          resolve();
        });
      }).then(() => thread.terminate()),
    );
    thread.postMessage({ root, handle, tiny, base: (p + 1) * 1_000 }, handle.transfer as never);
  }
  // One fib whose joins always fork, one whose joins are lazy (they read the deque's depth first, plainly).
  for (const name of fib > 0 ? ["fib", "fibLazy"] : []) {
    jobs.push(
      pool.run(name, fib, 3).then((v) => {
        if (v !== expected(fib)) failure ||= `${name}(${fib}) returned ${String(v)}, not ${expected(fib)}`;
      }),
    );
  }
  for (let i = 0, waves = 0; i < tiny; i++) {
    jobs.push(
      pool.run("add", i, 1).then((v) => {
        if (v !== i + 1) failure ||= `add(${i}, 1) returned ${String(v)}`;
      }),
    );
    if (wave > 0 && (i + 1) % wave === 0) {
      await Promise.all(jobs);
      // Now and then a long pause (the workers doze and sleep), else a short one of 0–5 ms: a wave then
      // often lands while a worker is on its way to sleep (between getSleepy and fallAsleep's check).
      const pause = ++waves % 5 === 0 ? pauseMs : (waves * 7) % 6;
      if (pause > 0) await new Promise((resolve) => setTimeout(resolve, pause));
      // Steering toward a race: after a short pause, wait (up to 100 ms) until a worker is sleepy and not
      // yet counted as sleeping (the JEC odd, fewer sleepers than workers), then submit at once, so that the
      // post often lands between its announcement and its final check. The test's own peek at the counters
      // word, with Atomics directly: not a step of the pool, and not recorded. A traced worker takes 5–95 ms
      // to get sleepy here (64 spin rounds of recorded searches, then its dozes): with a 10 ms wait, from
      // when the spin rounds grew from 16 to 64, 1–5 waves of 16 found one, and 8 runs of the
      // sleep_skips_final_check mutant once went uncaught in CI; with 100 ms, 15–16 of 16 did, and the mutant
      // was caught in the first run, three times of three.
      if (sleepWord !== null && waves % 5 !== 0) {
        const until = Date.now() + 100;
        for (;;) {
          const c = Atomics.load(sleepWord, 0);
          if ((((c >> 10) & 1) === 1 && (c & 0x3ff) < shape.workers) || Date.now() > until) break;
        }
      }
    }
  }
  await Promise.all(jobs);
  await pool.close();
} catch (error) {
  failure ||= `the pool failed: ${String(error)}`;
}
parentPort!.postMessage({ failure });
