/**
 * The elastic pool (issue 49; spec/Elastic.tla): `workers: { min, max }` and `idleTimeout`. The pool starts
 * `min`; queued work with every worker busy grows it, one at a time, to at most `max`; a worker that slept
 * for the idle timeout retires, down to `min`; a retired slot is reused; every task runs exactly once across
 * grow and shrink cycles, with joins inside tasks, producers and broadcasts. Timing is never asserted: the
 * tests poll `stats()` with generous deadlines.
 */
import { Pool } from "../../lib/pool.ts";
import { openProducer } from "../../lib/pool_producer.ts";
import { move } from "../../mod.ts";
import { assertIdleAccounting } from "./_accounting.ts";
import { resolveOptions } from "../../lib/options.ts";
import type * as tasks from "../fixtures/elastic_tasks.ts";
import { assert, assertEquals, test, within } from "../_test.ts";

const moduleUrl = new URL("../fixtures/elastic_tasks.ts", import.meta.url);

/** Polls `check` every 10 ms until it holds; fails after `ms` with `what`. */
async function until(check: () => boolean, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`hang: ${what} did not happen within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

test("the elastic options are checked with named errors, and a fixed pool has no elastic part", () => {
  const fixed = resolveOptions({ workers: 2 });
  assertEquals(fixed.elastic, undefined);
  const elastic = resolveOptions({ workers: { min: 1, max: 3 }, idleTimeout: 50 });
  assertEquals(elastic.elastic, { min: 1, max: 3, idleTimeout: 50 });
  assertEquals(elastic.shape.workers, 3, "the memory is laid out for the maximum");
  assertEquals(resolveOptions({ workers: { min: 2, max: 2 } }).elastic?.idleTimeout, 60_000);
  const message = (options: unknown) => {
    try {
      resolveOptions(options);
    } catch (error) {
      return `${(error as Error).name}: ${(error as Error).message}`;
    }
    return "accepted";
  };
  assertEquals(
    message({ workers: { min: 0, max: 2 } }),
    "RangeError: Cannot create pool as 'workers.min' must be an integer from 1 to 'workers.max' (2): received 0",
  );
  assertEquals(
    message({ workers: { min: 3, max: 2 } }),
    "RangeError: Cannot create pool as 'workers.min' must be an integer from 1 to 'workers.max' (2): received 3",
  );
  assertEquals(
    message({ workers: { min: 1, max: 2000 } }),
    "RangeError: Cannot create pool as 'workers.max' must be an integer from 1 to 1023: received 2000",
  );
  assertEquals(
    message({ workers: { min: 1, max: 2, most: 3 } }),
    "TypeError: Cannot create pool as 'workers.most' is not an option (workers takes { min, max })",
  );
  assertEquals(
    message({ workers: 2, idleTimeout: 10 }),
    "TypeError: Cannot create pool as 'idleTimeout' applies only to an elastic pool: pass 'workers: { min, max }' with it",
  );
  assertEquals(
    message({ workers: { min: 1, max: 2 }, idleTimeout: 0 }),
    "RangeError: Cannot create pool as 'idleTimeout' must be a number of ms from 1 to 2^31 - 1: received 0",
  );
});

test("a pool starts min, a burst grows it to at most max, idle workers retire to min, and slots are reused", async () => {
  const pool = await Pool.create<typeof tasks>(moduleUrl, { workers: { min: 1, max: 3 }, idleTimeout: 100 });
  try {
    const first = pool.stats().elastic!;
    assertEquals([first.min, first.max, first.current, first.started, first.retired], [1, 3, 1, 0, 0]);
    for (let cycle = 0; cycle < 2; cycle++) {
      // Four tasks that hold their workers: the pool grows to three (its max) and the fourth waits.
      const view = new Int32Array(new SharedArrayBuffer(8));
      const held = Array.from({ length: 4 }, () => pool.run("hold", view));
      await until(() => Atomics.load(view, 0) === 3, 30_000, "three workers holding tasks");
      const grown = pool.stats().elastic!;
      assertEquals(grown.current, 3, `cycle ${cycle}: grown to max`);
      assert(grown.peak <= 3, "never above max");
      Atomics.store(view, 1, 1);
      Atomics.notify(view, 1);
      const workers = await within(Promise.all(held), 30_000, "the held tasks");
      assertEquals(new Set(workers).size, 3, `cycle ${cycle}: three workers ran them`);
      // Idle past the timeout: back to min.
      // (A retirement's slot says ABSENT a moment before its message reaches the owner, which counts it.)
      await until(
        () => {
          const { current, retired } = pool.stats().elastic!;
          return current === 1 && retired === 2 * (cycle + 1);
        },
        30_000,
        "the shrink back to min",
      );
      const shrunk = pool.stats().elastic!;
      assertEquals(shrunk.retired, 2 * (cycle + 1), `cycle ${cycle}: two retired`);
      assertEquals(shrunk.started, 2 * (cycle + 1), `cycle ${cycle}: two started`);
    }
    assertEquals(pool.stats().elastic!.peak, 3);
    // Four starts into the two slots above min: the retired slots were reused.
    assertEquals(pool.stats().elastic!.started, 4);
    // Still runs: the one worker left takes it.
    assertEquals((await within(pool.run("whoAmI", "after"), 10_000, "a task after shrinking")).tag, "after");
  } finally {
    await within(pool.close(), 20_000, "close");
  }
});

test("every task runs exactly once across grow and shrink cycles: joins in tasks, a producer, broadcasts, directed tasks", async () => {
  const pool = await Pool.create<typeof tasks>(moduleUrl, { workers: { min: 1, max: 4 }, idleTimeout: 20 });
  const producer = openProducer<typeof tasks>(pool.handle());
  try {
    const n = 60;
    for (let cycle = 0; cycle < 4; cycle++) {
      const runs = new Int32Array(new SharedArrayBuffer(4 * (2 * n + 8)));
      const mine = Array.from({ length: n }, (_, i) => pool.run("mark", runs, i, 4));
      const theirs = Array.from({ length: n }, (_, i) => producer.run("mark", runs, n + i, 3));
      const parts = pool.broadcast("whoAmI", `cycle ${cycle}`);
      // Tasks whose argument moves a buffer are posted to one worker each (directed): to live workers only.
      const moved = Array.from({ length: 8 }, (_, k) => {
        const bytes = new Uint8Array(1024).fill(1);
        return pool.run("markMoved", move(bytes), runs, 2 * n + k);
      });
      const sums = await within(Promise.all([...mine, ...theirs]), 60_000, `cycle ${cycle}'s tasks`);
      assertEquals(sums, [...mine.map(() => 16), ...theirs.map(() => 8)], "every join returned its sum");
      assertEquals(await within(Promise.all(moved), 30_000, "the directed tasks"), moved.map(() => 1024));
      const seen = await within(parts, 30_000, `cycle ${cycle}'s broadcast`);
      assertEquals(new Set(seen.map((s) => s.worker)).size, seen.length, "one part per worker");
      assert(seen.every((s) => s.tag === `cycle ${cycle}`), "each part ran its own broadcast");
      for (let i = 0; i < 2 * n + 8; i++) assertEquals(runs[i], 1, `cycle ${cycle}: task ${i} ran once`);
      // Idle: let workers retire before the next burst (some cycles start from fewer workers).
      await until(
        () => {
          const { current, started, retired } = pool.stats().elastic!;
          return current === 1 && started === retired;
        },
        30_000,
        `cycle ${cycle}'s shrink`,
      );
    }
    const stats = pool.stats();
    assert(stats.elastic!.peak <= 4, "never above max");
    assert(stats.elastic!.started > 0, "the bursts grew the pool");
    assertEquals(stats.elastic!.started, stats.elastic!.retired, "every started worker retired again");
    assertEquals(stats.pending, 0);
    // Retired workers gave back their cached records before they slept: every record is accounted for.
    await within(pool.drain(), 10_000, "drain");
    await assertIdleAccounting(pool, "after grow and shrink cycles");
  } finally {
    await within(producer.close(), 20_000, "producer close");
    await within(pool.close(), 20_000, "close");
  }
});

test("a producer's submissions grow the pool while its only worker is busy", async () => {
  const pool = await Pool.create<typeof tasks>(moduleUrl, { workers: { min: 1, max: 2 }, idleTimeout: 50 });
  const producer = openProducer<typeof tasks>(pool.handle());
  try {
    const view = new Int32Array(new SharedArrayBuffer(8));
    const held = pool.run("hold", view);
    await until(() => Atomics.load(view, 0) === 1, 30_000, "the one worker holding a task");
    // The one worker is held: only a new worker can run this.
    const other = await within(producer.run("whoAmI", "second"), 30_000, "the producer's task, on a new worker");
    assertEquals(other.tag, "second");
    Atomics.store(view, 1, 1);
    Atomics.notify(view, 1);
    assert(other.worker !== (await within(held, 10_000, "the held task")), "a second worker ran it");
  } finally {
    await within(producer.close(), 20_000, "producer close");
    await within(pool.close(), 20_000, "close");
  }
});

test("close and terminate while workers retire settle everything and stop every thread", async () => {
  for (const how of ["close", "terminate"] as const) {
    const pool = await Pool.create<typeof tasks>(moduleUrl, { workers: { min: 1, max: 3 }, idleTimeout: 1 });
    const view = new Int32Array(new SharedArrayBuffer(8));
    const held = Array.from({ length: 3 }, () => pool.run("hold", view));
    await until(() => Atomics.load(view, 0) === 3, 30_000, "three workers holding tasks");
    Atomics.store(view, 1, 1);
    Atomics.notify(view, 1);
    await within(Promise.all(held), 30_000, "the held tasks");
    // Retirements are under way (a 1 ms idle timeout): stop now.
    if (how === "close") await within(pool.close(), 20_000, "close");
    else await within(pool.terminate(), 20_000, "terminate");
    assertEquals(pool.stats().pending, 0, `${how}: nothing pending`);
  }
});

test("a worker that dies while it retires is recovered: its slot is reused and tasks still run", async () => {
  const pool = await Pool.create<typeof tasks>(moduleUrl, { workers: { min: 1, max: 2 }, idleTimeout: 20 });
  const errors: unknown[] = [];
  pool.events.addEventListener("workerdied", (event) => errors.push(event));
  try {
    for (let round = 0; round < 3; round++) {
      const view = new Int32Array(new SharedArrayBuffer(8));
      // Each armed: whichever of the two retires dies in its teardown, with its slot RETIRING.
      const held = [pool.run("hold", view, true), pool.run("hold", view, true)];
      await until(() => Atomics.load(view, 0) === 2, 30_000, "two workers holding tasks");
      Atomics.store(view, 1, 1);
      Atomics.notify(view, 1);
      await within(Promise.all(held), 30_000, "the held tasks");
      await until(
        () => {
          const { current, retired } = pool.stats().elastic!;
          // (The death's event is dispatched a moment after the owner handled it.)
          return current === 1 && retired === round + 1 && errors.length === round + 1;
        },
        30_000,
        `round ${round}'s shrink`,
      );
    }
    const stats = pool.stats().elastic!;
    assertEquals(stats.retired, 3, "each death during a retirement ends that retirement");
    assertEquals(errors.length, 3, "each was told as a death");
    assertEquals((await within(pool.run("whoAmI", "after"), 10_000, "a task after")).tag, "after");
  } finally {
    await within(pool.close(), 20_000, "close");
  }
});
