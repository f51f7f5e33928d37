/**
 * Fork-join inside tasks (`lib/forkjoin/join.ts`) through a real pool, on each runtime: each parallel helper
 * against its sequential version on random inputs and grains (fast-check), scope results and errors,
 * joins nested 20 and 500 deep, the error order of joins whose branches throw (stolen or not), a pool of
 * one worker (no deadlock), and `close()` / `terminate()` while joins are in flight.
 *
 * The fast-check seed is fixed (override with FILCH_SEED to replay) and printed.
 */
import fc from "fast-check";
import { PoolClosedError, PoolTerminatedError } from "../../lib/errors.ts";
import { Pool, type PoolOptions, type PoolStats } from "../../lib/pool.ts";
import * as tasks from "../fixtures/join_tasks.ts";
import { JOIN_MUTANTS, type JoinMutant, materializePoolMutant, removePoolMutant } from "../mutants/mutants.ts";
import { assert, assertEquals, assertRejects, test } from "../_test.ts";

const SEED = Number(readEnv("FILCH_SEED") ?? 20261121);
const RUNS = Number(readEnv("FILCH_JOIN_RUNS") ?? 100);
console.log(`join_test: fast-check seed ${SEED}, ${RUNS} runs a property (replay with FILCH_SEED=${SEED})`);

function readEnv(name: string): string | undefined {
  const process = (globalThis as { process?: { env: Record<string, string | undefined> } }).process;
  return process?.env[name];
}

const TASKS = new URL("../fixtures/join_tasks.ts", import.meta.url);

function create(options: PoolOptions = {}): Promise<Pool<typeof tasks>> {
  return Pool.create<typeof tasks>(TASKS, { workers: 2, ...options });
}

/** Runs `body` with a fresh pool, closing it afterwards whatever happens. */
async function withPool(options: PoolOptions, body: (pool: Pool<typeof tasks>) => Promise<void>): Promise<void> {
  const pool = await create(options);
  try {
    await body(pool);
  } finally {
    await pool.close();
  }
}

function sharedInt32(length: number): Int32Array {
  return new Int32Array(new SharedArrayBuffer(Math.max(1, length) * 4), 0, length);
}

function stolen(before: PoolStats, after: PoolStats): number {
  return after.workers.reduce((sum, w, i) => sum + w.stolen - before.workers[i].stolen, 0);
}

test("outside a pool, join, scope and the loops run inline with the sequential results", () => {
  assertEquals(tasks.fib(15, 0), 610, "fib(15) with a join at every level");
  assertEquals(tasks.deepJoin(10), 1024, "deepJoin(10)");
  assertEquals(tasks.scopeSquares(5), [0, 1, 4, 9, 16], "scope results in spawn order");
  const out = sharedInt32(10);
  tasks.parallelFill(out, 3);
  assertEquals([...out], [0, 3, 6, 9, 12, 15, 18, 21, 24, 27], "parallelFor");
  const data = sharedInt32(5);
  data.set([1, 2, 3, 4, 5]);
  assertEquals(tasks.parallelSumSquares(data, 2), 55, "parallelReduce");
  assertEquals(tasks.joinOrder("both", 0, 0, sharedInt32(2)).message, "a threw", "a's error first, inline");
});

test(
  `parallelFor over random ranges and grains visits every index once, in pieces of at most grain (seed ${SEED})`,
  async () => {
    await withPool({}, async (pool) => {
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: -1000, max: 1000 }),
          fc.integer({ min: 0, max: 3000 }),
          fc.integer({ min: 1, max: 400 }),
          async (start, length, grain) => {
            const out = sharedInt32(length);
            const visits = sharedInt32(length);
            const flags = sharedInt32(2);
            await pool.run("forMarks", start, start + length, grain, out, visits, flags);
            for (let k = 0; k < length; k++) {
              if (visits[k] !== 1) throw new Error(`index ${start + k} visited ${visits[k]} times`);
              if (out[k] !== tasks.mix(start + k)) throw new Error(`index ${start + k} holds a wrong value`);
            }
            // An empty range: the pool calls body once with an empty piece (the inline path calls it never);
            // both leave nothing to check but the visits.
            if (length > 0) assertEquals(flags[0], 0, "pieces empty or larger than the grain");
            assert(flags[1] >= Math.ceil(length / grain), `at least ceil(length / grain) pieces: ${flags[1]}`);
          },
        ),
        { seed: SEED, numRuns: RUNS },
      );
    });
  },
  60_000,
);

test(`parallelReduce over random data equals the sequential fold, combined in index order (seed ${SEED})`, async () => {
  await withPool({}, async (pool) => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: -500, max: 500 }),
        fc.array(fc.integer({ min: -1_000_000, max: 1_000_000 }), { minLength: 1, maxLength: 2000 }),
        fc.integer({ min: 1, max: 300 }),
        async (start, values, grain) => {
          const data = sharedInt32(values.length);
          data.set(values);
          const got = await pool.run("reduceSegments", start, start + values.length, grain, data);
          const want = tasks.segmentOf(start, start + values.length, data, start);
          assertEquals(got.adjacent, true, "every combine joined neighbouring segments, left before right");
          assertEquals(got.lo, start, "first index");
          assertEquals(got.hi, want.hi, "last index");
          assertEquals(got.sum, want.sum, "sum");
          assertEquals(got.text, want.text, "values in index order");
          assert(got.largest <= grain, `largest piece ${got.largest} within grain ${grain}`);
          assert(got.pieces >= Math.ceil(values.length / grain), `pieces ${got.pieces}`);
        },
      ),
      { seed: SEED, numRuns: RUNS },
    );
  });
}, 60_000);

/** A typed-array constructor, as the parallelMapInPlace property uses it. */
interface ViewKind {
  readonly name: string;
  readonly BYTES_PER_ELEMENT: number;
  new (buffer: ArrayBufferLike, byteOffset: number, length: number): NumberView;
  new (length: number): NumberView;
}
type NumberView = { length: number; [i: number]: number; set(values: ArrayLike<number>): void };

const KINDS = [
  Int8Array,
  Uint8Array,
  Int16Array,
  Uint16Array,
  Int32Array,
  Uint32Array,
  Float32Array,
  Float64Array,
] as ViewKind[];

test(`parallelMapInPlace on random typed arrays of every kind equals the sequential map (seed ${SEED})`, async () => {
  await withPool({}, async (pool) => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: KINDS.length - 1 }),
        fc.array(fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }), { maxLength: 3000 }),
        fc.integer({ min: 1, max: 500 }),
        async (kind, values, grain) => {
          const Kind = KINDS[kind];
          const data = new Kind(
            new SharedArrayBuffer(Math.max(1, values.length) * Kind.BYTES_PER_ELEMENT),
            0,
            values.length,
          );
          data.set(values);
          const want = new Kind(values.length);
          want.set(data);
          for (let i = 0; i < want.length; i++) want[i] = tasks.affine(want[i], i);
          await pool.run("mapAffine", data as unknown as Int32Array, grain);
          for (let i = 0; i < values.length; i++) {
            if (data[i] !== want[i]) {
              throw new Error(`${Kind.name} element ${i}: expected ${want[i]}, received ${data[i]}`);
            }
          }
        },
      ),
      { seed: SEED, numRuns: RUNS },
    );
  });
}, 60_000);

test(
  `scope returns the body's result and every spawned result in spawn order, nested joins included (seed ${SEED})`,
  async () => {
    await withPool({}, async (pool) => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.integer({ min: -1000, max: 1000 }), { maxLength: 120 }),
          fc.boolean(),
          async (xs, nested) => {
            const got = await pool.run("scopeAffine", xs, nested);
            assertEquals(got.body, xs.length, "body's result");
            assertEquals(got.results, xs.map((x, i) => tasks.affine(x, i)), "spawned results in spawn order");
          },
        ),
        { seed: SEED, numRuns: RUNS },
      );
    });
  },
  60_000,
);

test("scope: spawned tasks that throw and a body that throws give one AggregateError, body's error first", async () => {
  await withPool({}, async (pool) => {
    const error = await assertRejects(pool.run("scopeThrowing", 40, [3, 17, 39], true));
    assert(error instanceof AggregateError, `an AggregateError: ${String(error)}`);
    const messages = error.errors.map((e: Error) => e.message);
    assertEquals(messages[0], "body threw", "the body's error first");
    assertEquals(
      [...messages.slice(1)].sort(),
      ["b threw at 17", "b threw at 3", "b threw at 39"],
      "the spawned errors",
    );
    assertEquals(await pool.run("scopeThrowing", 40, [], false), 40, "no error: the body's return");
  });
});

test(
  "joins nested 20 deep (2^20 leaves) and chains of 500 nested joins on either side return the right values",
  async () => {
    await withPool({}, async (pool) => {
      const before = pool.stats();
      assertEquals(await pool.run("deepJoin", 20), 2 ** 20, "deepJoin(20)");
      assertEquals(await pool.run("chainA", 500), 500, "500 joins nested on the a side");
      assertEquals(await pool.run("chainB", 500), 500, "500 joins nested on the b side");
      assertEquals(await pool.run("fib", 24, 0), 46368, "fib(24) with a join at every level");
      console.log(`  nested joins: ${stolen(before, pool.stats())} tasks stolen`);
    });
  },
  60_000,
);

test("join with throwing branches: a's error wins, and join throws only after both sides have settled", async () => {
  await withPool({}, async (pool) => {
    const before = pool.stats();
    for (let round = 0; round < 5; round++) {
      // A slow a: b is stolen by the idle worker (or popped back); b's error waits for a.
      let r = await pool.run("joinOrder", "b", 30, 0, sharedInt32(2));
      assertEquals([r.threw, r.name, r.message, r.aDone, r.bDone], [true, "RangeError", "b threw", 1, 1], "b threw");
      // A slow b: a's error waits for b.
      r = await pool.run("joinOrder", "a", 0, 30, sharedInt32(2));
      assertEquals([r.threw, r.name, r.message, r.aDone, r.bDone], [true, "TypeError", "a threw", 1, 1], "a threw");
      for (const [aMs, bMs] of [[30, 0], [0, 30]]) {
        r = await pool.run("joinOrder", "both", aMs, bMs, sharedInt32(2));
        assertEquals([r.threw, r.message, r.aDone, r.bDone], [true, "a threw", 1, 1], "both threw: a's error");
      }
      r = await pool.run("joinOrder", "none", 30, 0, sharedInt32(2));
      assertEquals([r.threw, r.value], [false, 3], "neither threw");
    }
    const steals = stolen(before, pool.stats());
    console.log(`  throwing branches: ${steals} tasks stolen in 25 joins`);
    assert(steals > 0, "some b was stolen (the error crossed threads)");
    // The task's own error reaches the main thread with its class and message.
    const a = await assertRejects(pool.run("joinThrowing", "a"));
    assert(a instanceof TypeError && a.message === "a threw", `a: ${String(a)}`);
    const b = await assertRejects(pool.run("joinThrowing", "b"));
    assert(b instanceof RangeError && b.message === "b threw at 3", `b: ${String(b)}`);
    const both = await assertRejects(pool.run("joinThrowing", "both"));
    assert(both instanceof TypeError && both.message === "a threw", `both: ${String(both)}`);
  });
}, 60_000);

test("b sees its arguments as they were at the fork, whether it was stolen or popped back and run inline", async () => {
  for (const workers of [1, 2]) {
    await withPool({ workers }, async (pool) => {
      const before = pool.stats();
      for (let round = 0; round < 6; round++) {
        // a = 0 ms: b is popped back (inline); a = 50 ms on 2 workers: the idle worker steals b.
        const aMs = workers === 2 && round % 2 === 1 ? 50 : 0;
        assertEquals(await pool.run("joinSnapshot", 7 + round, aMs), [7 + round, 7 + round], `round ${round}`);
      }
      if (workers === 2) assert(stolen(before, pool.stats()) > 0, "some b was stolen");
    });
  }
});

/**
 * The lazy join's scenarios (lib/worker/fork_join.ts `keepsInline`), each on a pool of the class given (the shipped
 * one, or a mutant's); each returns what it found wrong, empty if nothing.
 */
const LAZY_SCENARIOS: Record<JoinMutant["caughtBy"], (PoolClass: typeof Pool) => Promise<string[]>> = {
  // A b with an object argument, on a pool of one (where a b of primitives is kept inline): still forked,
  // so b sees the object as it was at the fork, not as a left it.
  snapshotKeptInline: async (PoolClass) => {
    const pool = await PoolClass.create<typeof tasks>(TASKS, { workers: 1 });
    try {
      const [boxed] = await pool.run("joinSnapshot", 7, 0);
      return boxed === 7 ? [] : [`b saw the object's field as ${boxed}, not the 7 it held at the fork`];
    } finally {
      await pool.close();
    }
  },
  // On 2 workers, fib's joins (a number each) are forked while the deque is short: the idle worker steals.
  stealsOnTwo: async (PoolClass) => {
    const pool = await PoolClass.create<typeof tasks>(TASKS, { workers: 2 });
    try {
      const before = pool.stats();
      for (let round = 0; round < 5 && stolen(before, pool.stats()) === 0; round++) {
        assertEquals(await pool.run("fib", 24, 0), tasks.fib(24, 0), "fib(24)");
      }
      return stolen(before, pool.stats()) > 0 ? [] : ["nothing was stolen in 5 runs of fib(24) on 2 workers"];
    } finally {
      await pool.close();
    }
  },
  // On a pool of one, nobody can steal: fib(20)'s 10,945 joins (numbers) and parallelFor's (numbers and a
  // view of shared memory) fork nothing: two tasks executed, the two submitted.
  nothingForkedOnOne: async (PoolClass) => {
    const pool = await PoolClass.create<typeof tasks>(TASKS, { workers: 1 });
    try {
      const before = pool.stats().workers[0].executed;
      assertEquals(await pool.run("fib", 20, 0), 6765, "fib(20)");
      const out = sharedInt32(1000);
      await pool.run("parallelFill", out, 7);
      assert(out.every((v, i) => v === 3 * i), "parallelFor");
      await pool.drain();
      const executed = pool.stats().workers[0].executed - before;
      return executed === 2 ? [] : [`${executed} tasks executed for fib(20) and a parallelFor: their joins forked`];
    } finally {
      await pool.close();
    }
  },
};

test("a join keeps b inline only when no thief could want it, and only with primitives and shared memory", async () => {
  for (const [name, scenario] of Object.entries(LAZY_SCENARIOS)) {
    assertEquals(await scenario(Pool), [], name);
  }
}, 60_000);

test("the lazy-join scenarios catch every join mutant (tests/mutants/mutants.ts, JOIN_MUTANTS)", async () => {
  for (const mutant of JOIN_MUTANTS) {
    const url = materializePoolMutant(mutant);
    try {
      const { Pool: MutantPool } = await import(url.href) as { Pool: typeof Pool };
      const wrong = await LAZY_SCENARIOS[mutant.caughtBy](MutantPool);
      console.log(`  join mutant '${mutant.name}' caught by ${mutant.caughtBy}: ${wrong.join("; ")}`);
      assert(wrong.length > 0, `join mutant '${mutant.name}' not caught by ${mutant.caughtBy}`);
    } finally {
      removePoolMutant(url);
    }
  }
}, 120_000);

test("join refuses a closure as b with a TypeError that says to pass it as a; big b results cross", async () => {
  await withPool({}, async (pool) => {
    const error = await assertRejects(pool.run("joinClosureB"));
    assert(error instanceof TypeError, `a TypeError: ${String(error)}`);
    assert(String(error.message).includes("not an exported function"), error.message);
    assertEquals(await pool.run("joinBigResult", 20_000), 60_000, "a 20,000-element result of b");
  });
});

test("a pool of one worker runs every fork-join shape to completion (no deadlock)", async () => {
  await withPool({ workers: 1 }, async (pool) => {
    assertEquals(await pool.run("fib", 20, 0), 6765, "fib(20), a join at every level");
    assertEquals(await pool.run("deepJoin", 14), 2 ** 14, "deepJoin(14)");
    assertEquals(await pool.run("chainB", 300), 300, "chainB(300)");
    assertEquals(await pool.run("scopeSquares", 50), Array.from({ length: 50 }, (_, i) => i * i), "scope");
    const out = sharedInt32(1000);
    await pool.run("parallelFill", out, 7);
    assert(out.every((v, i) => v === 3 * i), "parallelFor");
    const data = sharedInt32(1000).fill(2);
    assertEquals(await pool.run("parallelSumSquares", data, 9), 4000, "parallelReduce");
    const r = await pool.run("joinOrder", "both", 5, 5, sharedInt32(2));
    assertEquals([r.message, r.aDone, r.bDone], ["a threw", 1, 1], "throwing branches");
    // Many joining tasks at once: the one worker takes them one after another.
    const all = await Promise.all(Array.from({ length: 30 }, (_, i) => pool.run("fib", 10 + (i % 8), 0)));
    assertEquals(all, Array.from({ length: 30 }, (_, i) => tasks.fib(10 + (i % 8), 0)), "30 joining tasks");
    assertEquals(pool.stats().workers[0].stolen, 0, "nothing to steal from");
  });
}, 60_000);

test("many joining tasks at once on 2 workers: a worker waiting in a join helps with others; all correct", async () => {
  await withPool({}, async (pool) => {
    const ns = Array.from({ length: 60 }, (_, i) => 8 + (i * 7) % 12);
    const all = await Promise.all(ns.map((n) => pool.run("fib", n, 0)));
    assertEquals(all, ns.map((n) => tasks.fib(n, 0)), "results");
  });
}, 60_000);

test(
  "close() while joins are in flight: every task settles once with its result, then submissions reject",
  async () => {
    const pool = await create();
    const ns = [22, 20, 23, 18, 21, 22, 19, 23];
    let settled = 0;
    const results = ns.map((n) =>
      pool.run("fib", n, 0).then((value) => {
        settled++;
        return value;
      })
    );
    const data = sharedInt32(50_000).fill(3);
    const sums = [pool.run("parallelSumSquares", data, 64), pool.run("deepJoin", 16)];
    const closing = pool.close();
    assertEquals(pool.lifecycle, "closing", "state while closing");
    const refused = await assertRejects(pool.run("fib", 5, 0));
    assert(refused instanceof PoolClosedError, `a new task during close: ${String(refused)}`);
    assertEquals(await Promise.all(results), ns.map((n) => tasks.fib(n, 0)), "results");
    assertEquals(await Promise.all(sums), [450_000, 2 ** 16], "loop and deep join results");
    await closing;
    assertEquals(settled, ns.length, "each fib task settled once");
    assertEquals(pool.lifecycle, "closed", "state after close");
    assertEquals(pool.stats().completed, ns.length + 2, "completed count");
    const after = await assertRejects(pool.run("fib", 5, 0));
    assert(after instanceof PoolClosedError, `a task after close: ${String(after)}`);
  },
  60_000,
);

test("terminate() while joins are in flight: every unsettled task rejects once with PoolTerminatedError", async () => {
  const pool = await create();
  const outcomes: string[] = [];
  const all = Array.from({ length: 6 }, () =>
    pool.run("fib", 28, 0).then(
      () => outcomes.push("resolved"),
      (error) => outcomes.push(error instanceof PoolTerminatedError ? "terminated" : `other: ${String(error)}`),
    ));
  await new Promise((resolve) => setTimeout(resolve, 30));
  await pool.terminate();
  await Promise.all(all);
  assertEquals(outcomes.length, 6, "each task settled once");
  assert(outcomes.every((o) => o === "resolved" || o === "terminated"), outcomes.join(", "));
  assert(outcomes.includes("terminated"), "tasks still running were rejected");
  assertEquals(pool.lifecycle, "terminated", "state");
}, 60_000);

test("forks that name a SharedArrayBuffer made inside a task are stolen and run (the buffer reaches the thief)", async () => {
  const pool = await create();
  try {
    const n = 64;
    assertEquals(await pool.run("fillFreshBuffer", n, 4, 2), (n * (n + 1)) / 2, "sum of the filled buffer");
    const stolen = pool.stats().workers.reduce((sum, w) => sum + w.stolen, 0);
    assert(stolen > 0, "pieces were stolen (so the thief needed the buffer)");
  } finally {
    await pool.close();
  }
});
