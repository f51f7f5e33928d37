/** Helpers of tests/pool/force_test.ts, shared with its mutant child process (tests/pool/force_mutant_child.ts). */
import { WorkerCrashedError } from "../../lib/errors.ts";
import type { Pool } from "../../lib/pool.ts";
import type * as tasks from "../fixtures/force_tasks.ts";
import { within } from "../_test.ts";

/** The forced tests' task module. */
export const TASKS: URL = new URL("../fixtures/force_tasks.ts", import.meta.url);

export type ForcePool = Pool<typeof tasks>;

export function probe(): Int32Array {
  return new Int32Array(new SharedArrayBuffer(16));
}

/** Resolves once word 0 of `probe` is set (the task started). */
export async function started(probe: Int32Array): Promise<void> {
  while (Atomics.load(probe, 0) === 0) await new Promise((resolve) => setTimeout(resolve, 1));
}

/** Lets a task that waits on word 3 end (so that a failing test leaves no thread spinning). */
export function release(probe: Int32Array): void {
  Atomics.store(probe, 3, 1);
}

/** Resolves once `stats().forcedKills` reaches `n`. */
export async function killed(pool: ForcePool, n: number): Promise<void> {
  while (pool.stats().forcedKills < n) await new Promise((resolve) => setTimeout(resolve, 2));
}

/**
 * "ok:<value>", "crashed" for a WorkerCrashedError, or "other:<error>" (which the callers reject). Never
 * rejects: a bystander left behind by a failed round must not become an unhandled rejection.
 */
export function settledAs(promise: Promise<unknown>): Promise<string> {
  return promise.then(
    (value) => `ok:${String(value)}`,
    (error) =>
      // By name: a pool mutant's copy of lib/ has its own WorkerCrashedError class.
      error instanceof WorkerCrashedError || (error as Error)?.name === "WorkerCrashedError"
        ? "crashed"
        : `other:${String(error)}`,
  );
}

/** Throws unless every outcome is a value or a WorkerCrashedError. */
export function assertBystanders(outcomes: string[]): void {
  const other = outcomes.find((o) => o.startsWith("other:"));
  if (other !== undefined) {
    throw new Error(`a bystander rejected with something other than WorkerCrashedError: ${other}`);
  }
}

/** Runs `n` full-capacity barrier tasks: true if all were in flight at once (no record stranded). */
export async function fullCapacity(pool: ForcePool, n: number): Promise<boolean> {
  const counter = new Int32Array(new SharedArrayBuffer(4));
  const all = await within(
    Promise.all(Array.from({ length: n }, () => pool.run("barrier", counter, n, 5_000))),
    20_000,
    `${n} barrier tasks`,
  );
  return all.every((b) => b);
}

/**
 * Forced kills of fork-join churn (which spends most of its time in the pool's own fork and join steps)
 * at random moments, with bystanders: returns how many checks failed (0 when every kill landed outside a
 * pool step: everything settled, and a full-capacity burst runs afterwards).
 */
export async function forcedChurn(PoolClass: typeof Pool, rounds: number): Promise<number> {
  let failures = 0;
  const fail = (what: string, error: unknown) => {
    failures++;
    console.log(`  forced churn: ${what}: ${(error as Error)?.message ?? String(error)}`);
  };
  // A report to onError (a recovery that failed, a replacement that could not start) is a failure too.
  const pool = await PoolClass.create<typeof tasks>(TASKS, {
    workers: 2,
    taskCapacity: 64,
    onError: (error, task) => fail(`reported for ${task}`, error),
  });
  const probes: Int32Array[] = [];
  try {
    for (let round = 0; round < rounds && failures === 0; round++) {
      const p = probe();
      probes.push(p);
      const controller = new AbortController();
      const forced = pool.with({ signal: controller.signal, force: true }).run("churn", p, 60_000);
      forced.catch(() => {});
      const bystanders = [settledAs(pool.run("fib", { n: 14 })), settledAs(pool.run("add", round, 1))];
      try {
        await within(started(p), 10_000, "the churn's start");
        await new Promise((resolve) => setTimeout(resolve, 1 + (round * 7) % 13));
        controller.abort();
        await within(killed(pool, round + 1), 10_000, `forced kill ${round + 1}`);
        assertBystanders(await within(Promise.all(bystanders), 10_000, "the bystanders"));
      } catch (error) {
        fail(`round ${round}`, error);
      }
    }
    if (failures === 0) {
      // Recovery would repair a kill that landed inside a pool step (kill anywhere), so nothing stranded
      // no longer shows the guard worked: the deaths recovery found inside a step do.
      const inSteps = pool.stats().deathsInSteps;
      if (inSteps !== 0) fail("the guard", new Error(`${inSteps} forced kills landed inside the pool's own steps`));
    }
    if (failures === 0) {
      try {
        if (!await fullCapacity(pool, 64)) fail("after the kills", new Error("a record was stranded"));
      } catch (error) {
        fail("after the kills", error);
      }
    }
  } finally {
    probes.forEach(release);
    await within(pool.terminate(), 10_000, "terminate");
  }
  return failures;
}
