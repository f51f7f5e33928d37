/**
 * Fault injection: seeded random mixes of tasks that succeed, throw anything, return odd thenables, fork,
 * join with large results, overflow the stack inside fork-join code, end their worker thread, or (in rounds
 * with heap limits, not on Bun) run out of memory; `spawn`s whose `onError` submits again; then
 * close, close with a timeout, or terminate at random with tasks in flight. Oracles: every submitted task
 * settles exactly once (counted) with the right outcome, drain, close and terminate return within a bound,
 * no duplicate report reaches the ledger, and capacity is intact afterwards (every record free once the
 * work left over from crashes has run, and a full-capacity burst runs). It prints its figures.
 *
 * Environment (tests only): `FILCH_FAULT_SEED` (default 20261122), `FILCH_FAULT_ROUNDS` (default 10 per
 * runtime in CI; raise it for a long run: `FILCH_FAULT_ROUNDS=2000`).
 *
 * Workers are also killed from outside at random moments (about half the rounds, one or two kills):
 * terminated by the main thread wherever they are, inside the pool's own steps included (a queue or deque
 * operation, a fork being placed or joined), as the runtime or an out-of-memory kill can; the pool
 * completes what they were doing from their notes in shared memory (lib/owner/recovery.ts). Not on Deno, which
 * prints SKIPPED for them: there `terminate()` does not stop a thread that is running JavaScript (it
 * reports the exit at once and the thread runs on, denoland/deno#35657), so the pool would recover a
 * worker that is still at work.
 */
import { Pool } from "../../lib/pool.ts";
import { DequeWords } from "../../lib/protocol/layout.ts";
import { Injector } from "../../lib/protocol/injector.ts";
import type * as hostile from "../fixtures/hostile_tasks.ts";
import { assertIdleAccounting, tableOf } from "./_accounting.ts";
import { assert, assertEquals, test, within } from "../_test.ts";

const TASKS = new URL("../fixtures/hostile_tasks.ts", import.meta.url);
const env = (globalThis as unknown as { process?: { env: Record<string, string | undefined> } }).process?.env ?? {};
const SEED = Number(env.FILCH_FAULT_SEED ?? 20261122);
const ROUNDS = Number(env.FILCH_FAULT_ROUNDS ?? 10);
/** The first round to run (to replay one round of a seed: rounds are seeded by their number). */
const FIRST = Number(env.FILCH_FAULT_FIRST_ROUND ?? 0);

/** xorshift32: the suite's only randomness, so a seed replays a round exactly (up to thread timing). */
/**
 * Whether `e` says the task's worker died under it: a task on a worker that another task's exit (or a kill
 * from outside) kills rejects with WorkerCrashedError, whatever it was (ResourceLimitError, its subclass,
 * if the worker ran out of memory); a scope whose part ran on that worker rejects with an AggregateError
 * that holds it.
 */
function crashed(e: unknown): boolean {
  return ["WorkerCrashedError", "ResourceLimitError"].includes((e as Error)?.name) ||
    ((e as Error)?.name === "AggregateError" && (e as AggregateError).errors.some(crashed));
}

function random(seed: number): () => number {
  let x = seed | 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
}

/** Whether this runtime's `terminate()` stops a thread that is running JavaScript (not Deno's: see above). */
const KILLS_FROM_OUTSIDE = !("Deno" in globalThis);

/**
 * Terminates worker `index` from outside, wherever it is: the runtime stops it at its next interrupt check,
 * in the pool's own steps as likely as in a task. (A test's reach into the pool: `Workforce.kill`, which
 * the pool itself calls only with the worker's kill guard down, is called here without looking at it.)
 */
function killFromOutside(pool: Pool<typeof hostile>, index: number): void {
  (pool as unknown as { owner: { workforce: { kill(i: number, cause: Error): void } } }).owner.workforce.kill(
    index,
    new Error(`worker ${index} killed from outside by the fault-injection suite`),
  );
}

/** Resolves once every task record is free (FREE, or CACHED by some thread): nothing leaked. */
async function quiescent(pool: Pool<typeof hostile>, ms: number, what: string): Promise<void> {
  const table = (pool as unknown as {
    producer: { table: { words: Int32Array; at(i: number, f: number): number; indexMask: number } };
  })
    .producer.table;
  const deadline = Date.now() + ms;
  for (;;) {
    let busy = 0;
    for (let i = 0; i <= table.indexMask; i++) {
      const state = Atomics.load(table.words, table.at(i, 0));
      if (state !== 0 && state !== 4) busy++;
    }
    if (busy === 0) return;
    if (Date.now() > deadline) {
      throw new Error(`hang: ${what}: ${busy} records still in use after ${ms} ms (${census(pool)}); ${stuck(pool)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/**
 * Diagnostics for a hang with records in use: each such record's words (state, generation, worker, origin,
 * latch, forker, flags, root), where its handle is (the deques' live ranges, by worker), and each deque's
 * ends. A record in use that no deque holds is in a queue or in no place at all.
 */
function stuck(pool: Pool<typeof hostile>): string {
  const inner = pool as unknown as {
    layout: {
      deques: number;
      dequeBytes: number;
      injector: number;
      injectorHigh: number;
      injectorLow: number;
      shape: { workers: number; dequeCapacity: number; taskCapacity: number };
    };
    buffer: SharedArrayBuffer;
  };
  const table = tableOf(pool);
  const { layout, buffer } = inner;
  const lines: string[] = [];
  const deques = Array.from({ length: layout.shape.workers }, (_, d) => {
    const words = new Int32Array(buffer, layout.deques + d * layout.dequeBytes, layout.dequeBytes / 4);
    const top = Atomics.load(words, DequeWords.top);
    const bottom = Atomics.load(words, DequeWords.bottom);
    const live: number[] = [];
    for (let k = top; k < bottom && k - top < layout.shape.dequeCapacity; k++) {
      live.push(Atomics.load(words, DequeWords.slots + (k & (layout.shape.dequeCapacity - 1))));
    }
    lines.push(`deque ${d}: top ${top} bottom ${bottom}`);
    return live;
  });
  for (let i = 0; i <= table.indexMask; i++) {
    const state = Atomics.load(table.words, table.at(i, 0));
    if (state === 0 || state === 4) continue;
    const word = (f: number) => Atomics.load(table.words, table.at(i, f));
    const handle = table.handleOf(i);
    const where = deques.flatMap((live, d) => (live.includes(handle) ? [`deque ${d}`] : []));
    lines.push(
      `record ${i} (handle ${handle}): state ${state} gen ${word(1)} worker ${word(6)} origin ${word(7)} latch ${
        word(8)
      } forker ${word(9)} flags ${word(10)} root ${word(11)}; in ${where.join(", ") || "no deque"}`,
    );
  }
  // A record in use in no deque: in an injector (then no worker looked: a lost wake), or nowhere (lost).
  const queued = (["injectorHigh", "injector", "injectorLow"] as const).map((level) =>
    `${level} ${new Injector({ buffer, byteOffset: layout[level], capacity: layout.shape.taskCapacity }).length}`
  );
  lines.push(`queued: ${queued.join(", ")}; stats: ${JSON.stringify(pool.stats())}`);
  return lines.join("; ");
}

/** Diagnostics for a failure: how many records are in each state, by state and worker word. */
function census(pool: Pool<typeof hostile>): string {
  const table = (pool as unknown as {
    producer: { table: { words: Int32Array; at(i: number, f: number): number; indexMask: number } };
  })
    .producer.table;
  const counts: Record<string, number> = {};
  for (let i = 0; i <= table.indexMask; i++) {
    const key = `${Atomics.load(table.words, table.at(i, 0))}/${Atomics.load(table.words, table.at(i, 6))}`;
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return JSON.stringify(counts);
}

type Kind =
  | "oom"
  | "add"
  | "fail"
  | "async"
  | "twice"
  | "thenThrows"
  | "getter"
  | "exit"
  | "deep"
  | "big"
  | "spawnRetry"
  | "overflow";
const KINDS: Kind[] = [
  "add",
  "add",
  "add",
  "fail",
  "async",
  "twice",
  "thenThrows",
  "getter",
  "exit",
  "deep",
  "big",
  "spawnRetry",
  "overflow",
];

test(
  `fault injection: every task settles exactly once with the right outcome (seed ${SEED}, ${ROUNDS} rounds)`,
  async () => {
    const figures = {
      tasks: 0,
      settled: 0,
      crashes: 0,
      kills: 0,
      killsSkipped: 0,
      retries: 0,
      rounds: 0,
      ooms: 0,
      terminated: 0,
    };
    for (let round = FIRST; round < FIRST + ROUNDS; round++) {
      const rand = random(SEED + round * 7919);
      const taskCapacity = [8, 64, 4096][Math.floor(rand() * 3)];
      // Some rounds bound the workers' heaps, and one task there runs out of memory (Bun has no limits).
      const limited = !("Bun" in globalThis) && rand() < 0.3;
      let retrySettled = 0;
      let retries = 0;
      const retryPromises: Promise<unknown>[] = [];
      const wrongRetries: string[] = [];
      const pool: Pool<typeof hostile> = await Pool.create<typeof hostile>(TASKS, {
        workers: 2,
        taskCapacity,
        ...(limited ? { resourceLimits: { maxOldGenerationSizeMb: 128 } } : {}),
        // A handler that submits again (a retry), as applications do.
        onError: () => {
          retries++;
          // A retry settles once like any task: with its result, or with a crash if its own worker dies
          // under it (a kill from outside, another task's exit), which is a right outcome too.
          if (pool.lifecycle === "open") {
            retryPromises.push(
              pool.run("add", 1, 1).then(
                (v) => {
                  retrySettled++;
                  if (v !== 2) wrongRetries.push(`round ${round}: a retry resolved with ${String(v)}`);
                },
                (e) => {
                  retrySettled++;
                  if (!crashed(e)) wrongRetries.push(`round ${round}: a retry rejected with ${String(e)}`);
                },
              ),
            );
          }
        },
      });
      const n = 40 + Math.floor(rand() * 80);
      // Kills from outside, at random moments of the submissions below (each fires when the main thread
      // next yields to its timers).
      const kills = rand() < 0.5 ? 1 + Math.floor(rand() * 2) : 0;
      if (!KILLS_FROM_OUTSIDE) figures.killsSkipped += kills;
      for (let k = 0; k < kills; k++) {
        const victim = Math.floor(rand() * 2);
        setTimeout(() => {
          if (!KILLS_FROM_OUTSIDE || pool.lifecycle !== "open") return;
          figures.kills++;
          killFromOutside(pool, victim);
        }, Math.floor(rand() * 30));
      }
      const settledCount = new Int32Array(n);
      /** Each task's kind, for a hang's report (undefined: not submitted). */
      const kinds: (Kind | "oom" | undefined)[] = new Array(n);
      const checks: Promise<void>[] = [];
      const wrong: string[] = [];
      let exits = 0;
      let oom = limited ? Math.floor(rand() * 40) : -1; // the index of the task that runs out of memory
      for (let i = 0; i < n; i++) {
        const kind: Kind | "oom" = i === oom ? "oom" : KINDS[Math.floor(rand() * KINDS.length)];
        if (kind === "exit" && exits >= 3) continue; // a few crashes a round: each costs a thread start
        kinds[i] = kind;
        const expect = (p: Promise<unknown>, ok: (v: unknown) => boolean, err: (e: unknown) => boolean) => {
          checks.push(p.then(
            (v) => {
              settledCount[i]++;
              if (!ok(v)) wrong.push(`round ${round} task ${i} (${kind}) resolved with ${String(v)}`);
            },
            (e) => {
              settledCount[i]++;
              if (!err(e) && !crashed(e)) wrong.push(`round ${round} task ${i} (${kind}) rejected with ${String(e)}`);
            },
          ));
        };
        const never = () => false;
        switch (kind) {
          case "add":
            expect(pool.run("add", i, 1), (v) => v === i + 1, never);
            break;
          case "fail":
            expect(pool.run("fail", `f${i}`), never, (e) => (e as Error).message === `f${i}`);
            break;
          case "async":
            expect(pool.run("asyncAdd", i, 2), (v) => v === i + 2, never);
            break;
          case "twice":
            expect(pool.run("resolveTwice", i), (v) => v === i, never);
            break;
          case "thenThrows":
            expect(pool.run("thenThrows"), never, (e) => e instanceof RangeError);
            break;
          case "getter":
            expect(pool.run("getterThrows"), never, (e) => e instanceof Error);
            break;
          case "oom":
            oom = -1;
            figures.ooms++;
            // ResourceLimitError (or WorkerCrashedError, if another task's exit killed its worker first).
            expect(pool.run("exhaustHeap"), never, (e) => (e as Error).name === "ResourceLimitError");
            break;
          case "exit":
            exits++;
            expect(pool.run("exitThread", 3), never, (e) => (e as Error).name === "WorkerCrashedError");
            break;
          case "deep":
            expect(pool.run("deepJoin", 6), (v) => v === 64, (e) => (e as Error).name === "WorkerCrashedError");
            break;
          case "big":
            expect(
              pool.run("scopeOfBigResults", 4, 20_000),
              (v) => v === 80_000,
              (e) => (e as Error).name === "WorkerCrashedError",
            );
            break;
          case "overflow":
            expect(pool.run("deepChain", 100_000), never, (e) => e instanceof RangeError);
            break;
          case "spawnRetry":
            settledCount[i]++; // a spawn has no promise: its failure reaches onError, which retries
            pool.spawn("fail", "spawned");
            break;
        }
        figures.tasks++;
        if (rand() < 0.2) await new Promise((resolve) => setTimeout(resolve, Math.floor(rand() * 5)));
      }
      try {
        await within(Promise.all(checks), 60_000, `round ${round}: every task`);
      } catch (error) {
        // A hang must say what hung: the tasks not settled (index and kind), the records by state and
        // worker word, and the pool's counters.
        const unsettled = kinds.flatMap((
          kind,
          i,
        ) => (kind !== undefined && settledCount[i] === 0 ? [`${i} ${kind}`] : []));
        throw new Error(
          `${(error as Error).message}; unsettled: ${unsettled.join(", ")}; records: ${census(pool)}; stats: ${
            JSON.stringify(pool.stats())
          }`,
        );
      }
      assertEquals(wrong, [], `round ${round}: outcomes`);
      await within(pool.drain(), 30_000, `round ${round}: drain`);
      await within(Promise.all(retryPromises), 30_000, `round ${round}: retries`);
      for (let i = 0; i < n; i++) {
        assert(
          settledCount[i] <= 1,
          `round ${round} task ${i} settled ${settledCount[i]} times`,
        );
      }
      assertEquals(retrySettled, retryPromises.length, `round ${round}: retries settled`);
      assertEquals(wrongRetries, [], `round ${round}: retries' outcomes`);
      // Capacity intact: once the work left over from crashes (orphaned forks) has run, every record is
      // free again (none leaked), and a full-capacity burst runs.
      await quiescent(pool, 20_000, `round ${round}: every record free`);
      // And accounted: blocks and slabs free, every FREE record in the free list, and each allocation
      // advanced one generation — unless a worker was killed from outside, or a stack overflow was thrown
      // inside the pool's own code ("overflow": a join at the stack's limit), either of which can cut
      // `allocate` or `release` short between a record's generation bump and its thread's counts (see
      // lib/record/census.ts: the counts are exact only when no step is cut short).
      const cutShort = (KILLS_FROM_OUTSIDE && kills > 0) || kinds.includes("overflow");
      await assertIdleAccounting(pool, `round ${round}`, { counts: !cutShort });
      const burst = taskCapacity;
      const sums = await within(
        Promise.all(Array.from({ length: burst }, (_, i) => pool.run("add", i, 1))),
        30_000,
        `round ${round}: capacity burst`,
      );
      assertEquals(sums.filter((v, i) => v !== i + 1).length, 0, `round ${round}: burst results`);
      const stats = pool.stats();
      assertEquals(stats.pending, 0, `round ${round}: pending`);
      assertEquals(stats.duplicateReports, 0, `round ${round}: duplicate reports`);
      figures.crashes += stats.workerCrashes;
      figures.retries += retries;
      figures.settled += checks.length;
      figures.rounds++;
      // The end, at random: close, close with a timeout over tasks that never settle, or terminate, with
      // tasks still in flight; each of those settles exactly once, and the ending returns.
      const ending = ["close", "close-timeout", "terminate"][Math.floor(rand() * 3)];
      const tail = Array.from({ length: 20 }, (_, i) => {
        const stuck = ending !== "close" && i % 5 === 0;
        return (stuck ? pool.run("never") : pool.run("add", i, 1)).then(
          (v) => (v === i + 1 ? "ok" : `wrong ${String(v)}`),
          (e) => (e as Error).name,
        );
      });
      if (ending === "terminate") figures.terminated++;
      if (ending === "terminate") await within(pool.terminate(), 20_000, `round ${round}: terminate`);
      else await within(pool.close({ timeout: ending === "close" ? undefined : 200 }), 20_000, `round ${round}: close`);
      const tailOutcomes = await within(Promise.all(tail), 10_000, `round ${round}: tasks in flight at the end`);
      const badTail = tailOutcomes.filter((o) => o !== "ok" && o !== "PoolTerminatedError");
      assertEquals(badTail, [], `round ${round} (${ending}): outcomes of the tasks in flight at the end`);
      if (ending === "close") assertEquals(tailOutcomes.filter((o) => o !== "ok"), [], `round ${round}: close ran all`);
      assertEquals(pool.stats().pending, 0, `round ${round} (${ending}): pending after the end`);
    }
    if (figures.killsSkipped > 0) {
      console.log(
        `SKIPPED: ${figures.killsSkipped} kills from outside: on this runtime terminate() does not stop a thread ` +
          `running JavaScript (denoland/deno#35657), so recovery would race a worker still at work`,
      );
    }
    console.log(
      `fault injection (seed ${SEED}): ${figures.rounds} rounds, ${figures.tasks} tasks, ${figures.settled} awaited ` +
        `settled exactly once, ${figures.crashes} worker crashes (${figures.ooms} out of memory), ` +
        `${figures.kills} workers killed from outside, ` +
        `${figures.retries} onError retries, ${figures.terminated} rounds ended by terminate()`,
    );
  },
  600_000,
);
