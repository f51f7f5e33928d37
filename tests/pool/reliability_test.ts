/**
 * Every submitted task settles exactly once, whatever user code does: the twenty failures of the review
 * (issue "Every task settles exactly once, under faults"), one test each (or one per mechanism), named
 * after the property. Each failed before the fix it pins down.
 *
 * A hang is a failure: every wait on the pool goes through {@link within}, which fails with a message.
 */
import {
  ModuleLoadError,
  PoolClosedError,
  PoolTerminatedError,
  ResourceLimitError,
  WorkerCrashedError,
} from "../../lib/errors.ts";
import { Pool, type PoolOptions } from "../../lib/pool.ts";
import type * as hostile from "../fixtures/hostile_tasks.ts";
import { runScript } from "./_child.ts";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { assert, assertEquals, assertRejects, runtime, test, unhandledRejectionsDuring, within } from "../_test.ts";

const TASKS = new URL("../fixtures/hostile_tasks.ts", import.meta.url);

function create(options: PoolOptions = {}): Promise<Pool<typeof hostile>> {
  return Pool.create<typeof hostile>(TASKS, { workers: 2, ...options });
}

/** Settles to "ok:<value>" or "err:<name>" (never rejects). */
function outcome(promise: Promise<unknown>): Promise<string> {
  return promise.then((v) => `ok:${String(v)}`, (e) => `err:${(e as Error)?.name ?? String(e)}`);
}

/** Blocks the main thread for `ms` (so workers finish tasks whose completions then wait to be read). */
function busyWait(ms: number): void {
  const end = Date.now() + ms;
  while (Date.now() < end) { /* the workers run meanwhile */ }
}

// ---- re-entrancy (review items 1–5) ----

test("an onError that submits while submit() drains completions does not change the outer task's arguments (1)", async () => {
  for (let round = 0; round < 5; round++) {
    const inner: Promise<unknown>[] = [];
    const pool = await create({
      taskCapacity: 2,
      onError: () => void inner.push(pool.run("echo", "INNER")),
    });
    try {
      pool.spawn("fail", "a");
      pool.spawn("fail", "b");
      busyWait(100); // both fail; their completions hold the only two records
      const outer = pool.run("echo", 0); // no record: submit() drains completions, which reports the failures
      assertEquals(await within(outer, 10_000, "outer run"), 0, "the outer task's result");
      await within(pool.drain(), 10_000, "drain");
      assertEquals(await within(Promise.all(inner), 10_000, "inner runs"), ["INNER", "INNER"], "inner results");
    } finally {
      await within(pool.close(), 10_000, "close");
    }
  }
});

test("terminate() called from onError during a submit: the submitted task still settles, once (3)", async () => {
  const pool = await create({ taskCapacity: 2, onError: () => void pool.terminate() });
  pool.spawn("fail", "a");
  pool.spawn("fail", "b");
  busyWait(100);
  const settled = await within(outcome(pool.run("echo", 1)), 10_000, "the run submitted while onError terminates");
  assert(settled === "ok:1" || settled === "err:PoolTerminatedError", `settled as ${settled}`);
  await within(pool.terminate(), 10_000, "terminate");
});

test("an onError that throws: its error is an unhandled rejection, later tasks settle, and terminate() settles all (4)", () => {
  // In a child process: test runners (node --test) fail a test on any unhandled rejection, which is here
  // the documented fate of the handler's own error; the child counts them with a global handler instead.
  const script = `
    const seen = [];
    if ("Deno" in globalThis) addEventListener("unhandledrejection", (e) => { e.preventDefault(); seen.push(e.reason); });
    else process.on("unhandledRejection", (r) => seen.push(r));
    const { Pool } = await import(${JSON.stringify(new URL("../../lib/pool.ts", import.meta.url).href)});
    const onError = () => { throw new Error("onError threw"); };
    const pool = await Pool.create(new URL(${JSON.stringify(TASKS.href)}), { workers: 2, onError });
    for (let i = 0; i < 10; i++) pool.spawn("fail", "f" + i);
    await pool.drain();
    const results = await Promise.all(Array.from({ length: 1000 }, (_, i) => pool.run("add", i, 1)));
    const wrong = results.filter((r, i) => r !== i + 1).length;
    for (let i = 0; i < 50; i++) pool.spawn("spin", 5);
    const runs = Array.from({ length: 50 }, () => pool.run("spin", 5).then(() => "ok", (e) => e.name));
    await pool.terminate();
    const after = await Promise.all(runs);
    await new Promise((r) => setTimeout(r, 50));
    const reported = seen.filter((r) => r && r.message === "onError threw").length;
    const bad = after.filter((o) => o !== "ok" && o !== "PoolTerminatedError").length;
    console.log("wrong " + wrong + " reported " + reported + " bad " + bad + " pending " + pool.stats().pending);`;
  const output = runChild(script, 60_000);
  const match = output.match(/wrong (\d+) reported (\d+) bad (\d+) pending (\d+)/);
  assert(match !== null, `the child printed its counts: ${output}`);
  const [, wrong, reported, bad, pending] = match!.map(Number);
  assertEquals(wrong, 0, "wrong results after a throwing onError");
  assert(reported >= 10, `the handler's errors were reported as unhandled rejections: ${reported}`);
  assertEquals(bad, 0, "runs that settled other than ok or PoolTerminatedError");
  assertEquals(pending, 0, "pending after terminate");
});

/** Runs `script` as a module in a child process of this runtime; returns its stdout and stderr. */
function runChild(script: string, timeoutMs: number): string {
  const child = runScript(script, timeoutMs);
  if (child.error !== undefined) throw new Error(`the child failed to run or timed out: ${child.error}`);
  return `${child.stdout}\n${child.stderr}`;
}

test("a getter in the arguments that calls terminate() or close(): that task settles, rejected (5)", async () => {
  for (const how of ["terminate", "close"] as const) {
    const pool = await create();
    const args = {
      get x(): number {
        void pool[how]();
        return 1;
      },
    };
    const error = await within(assertRejects(pool.run("echo", args)), 10_000, `run with a getter that calls ${how}`);
    assert(error instanceof PoolClosedError, `${how}: ${String(error)}`);
    await within(pool.terminate(), 10_000, "terminate");
  }
});

test("a getter in the arguments that submits again: both tasks get their own arguments", async () => {
  const pool = await create();
  try {
    let nested: Promise<unknown> | undefined;
    const args = {
      get x(): string {
        nested = pool.run("echo", "nested");
        return "outer";
      },
    };
    const outer = await within(pool.run("echo", args), 10_000, "outer");
    assertEquals(outer, { x: "outer" }, "outer result");
    assertEquals(await within(nested!, 10_000, "nested"), "nested", "nested result");
  } finally {
    await within(pool.close(), 10_000, "close");
  }
});

// ---- crashes and records (6–11) ----

test("a worker that dies of a thrown non-Error: the pool survives, its task rejects with WorkerCrashedError (6)", async () => {
  const pool = await create();
  try {
    const error = await within(assertRejects(pool.run("crashWithNonError")), 20_000, "crashing task");
    assert(error instanceof WorkerCrashedError, `WorkerCrashedError, received ${String(error)}`);
    assert((error as Error).cause instanceof Error, "its cause is an Error");
    assertEquals(await within(pool.run("add", 1, 2), 20_000, "a run after the crash"), 3, "the pool goes on");
  } finally {
    await within(pool.close(), 10_000, "close");
  }
});

test("a worker that exits while a fork is in flight: the pool survives and every task settles (6, 9)", async () => {
  const pool = await create();
  try {
    for (let i = 0; i < 4; i++) {
      const settled = await within(outcome(pool.run("exitInFork", 3)), 20_000, "exitInFork");
      assert(settled === "err:WorkerCrashedError", `exitInFork settled as ${settled}`);
    }
    assertEquals(await within(pool.run("add", 1, 2), 20_000, "a run after the crashes"), 3, "the pool goes on");
    assert(pool.stats().workerCrashes >= 4, `crashes counted: ${pool.stats().workerCrashes}`);
  } finally {
    await within(pool.close(), 10_000, "close");
  }
});

test("crashes leak no records: after 12 crashing tasks with taskCapacity 8, a full burst still runs (7, 9)", async () => {
  const pool = await create({ taskCapacity: 8 });
  try {
    for (let i = 0; i < 12; i++) {
      const error = await within(assertRejects(pool.run("exitThread", 3)), 20_000, `crash ${i}`);
      assert(error instanceof WorkerCrashedError, `crash ${i}: ${String(error)}`);
    }
    assertEquals(pool.stats().workerCrashes, 12, "every exit noticed (Bun included)");
    const counter = new Int32Array(new SharedArrayBuffer(4));
    const all = await within(
      Promise.all(Array.from({ length: 8 }, () => pool.run("barrier", counter, 8, 15_000))),
      30_000,
      "a full-capacity burst after the crashes",
    );
    assert(all.every((b) => b), `all 8 tasks were in flight at once: ${all.join(",")}`);
  } finally {
    await within(pool.close(), 10_000, "close");
  }
});

test("records freed by orphaned forks reach the main thread's backlog at once (no completion is coming to tell it)", async () => {
  const pool = await create({ taskCapacity: 8 });
  try {
    // The other worker, busy for longer than the barrier waits: its completion must not be what frees
    // the backlog; the orphans are run (and their records freed) by the dead worker's replacement.
    const busy = pool.run("spin", 6_000);
    const crashed = await within(assertRejects(pool.run("forkThenExit", 6)), 20_000, "forkThenExit");
    assert(crashed instanceof WorkerCrashedError, String(crashed));
    // Six records are held by orphans and one by spin: most of these wait in the backlog until the
    // orphans run and free their records. Nothing else completes meanwhile (they wait for each other).
    const counter = new Int32Array(new SharedArrayBuffer(4));
    const all = await within(
      Promise.all(Array.from({ length: 7 }, () => pool.run("barrier", counter, 7, 4_000))),
      30_000,
      "7 barrier tasks",
    );
    assertEquals(all.filter((b) => !b).length, 0, "barrier tasks not in flight at once (a backlog left waiting)");
    await within(busy, 10_000, "spin");
  } finally {
    await within(pool.close(), 10_000, "close");
  }
});

test("deep fork-join does not strand records in worker caches: 256 tasks are in flight at once after it (8)", async () => {
  const pool = await create({ taskCapacity: 256 });
  try {
    for (let i = 0; i < 2; i++) {
      assertEquals(await within(pool.run("deepJoin", 12), 60_000, "deepJoin"), 4096, "deepJoin result");
    }
    const counter = new Int32Array(new SharedArrayBuffer(4));
    const all = await within(
      Promise.all(Array.from({ length: 256 }, () => pool.run("barrier", counter, 256, 15_000))),
      30_000,
      "256 barrier tasks",
    );
    assertEquals(all.filter((b) => !b).length, 0, "tasks that timed out at the barrier (records stranded)");
  } finally {
    await within(pool.close(), 10_000, "close");
  }
});

test("a task over its worker's heap limit rejects with ResourceLimitError (a WorkerCrashedError); the process and the pool go on (10)", async () => {
  if (runtime === "bun") {
    console.log("SKIPPED on Bun: its workers have no heap limits (resourceLimits is refused there, tested below)");
    const error = await assertRejects(create({ resourceLimits: { maxOldGenerationSizeMb: 64 } }));
    assert(error instanceof TypeError && error.message.includes("Bun"), String(error));
    return;
  }
  const pool = await create({ resourceLimits: { maxOldGenerationSizeMb: 64 } });
  try {
    const error = await within(assertRejects(pool.run("exhaustHeap")), 60_000, "the OOM task");
    assert(
      error instanceof ResourceLimitError && error instanceof WorkerCrashedError && error.name === "ResourceLimitError",
      `a named error of its own: received ${String(error)} (cause ${String((error as Error).cause)})`,
    );
    assertEquals(await within(pool.run("add", 1, 2), 20_000, "a run after the OOM"), 3, "the pool goes on");
  } finally {
    await within(pool.close(), 10_000, "close");
  }
});

test("stack overflows inside fork-join code: each task rejects with RangeError, records and workers intact (8)", async () => {
  const pool = await create({ taskCapacity: 256 });
  try {
    for (let round = 0; round < 10; round++) {
      const error = await within(assertRejects(pool.run("deepChain", 100_000)), 30_000, `deepChain round ${round}`);
      assert(error instanceof RangeError, `round ${round}: ${String(error)}`);
    }
    const counter = new Int32Array(new SharedArrayBuffer(4));
    const all = await within(
      Promise.all(Array.from({ length: 256 }, () => pool.run("barrier", counter, 256, 15_000))),
      30_000,
      "256 barrier tasks after the overflows",
    );
    assertEquals(all.filter((b) => !b).length, 0, "tasks not in flight at once (records stranded)");
    assertEquals(pool.stats().workerCrashes, 0, "no worker died");
    assertEquals(await within(pool.run("deepJoin", 8), 10_000, "a join after"), 256, "fork-join still works");
  } finally {
    await within(pool.close(), 10_000, "close");
  }
});

test("a stack overflow at any step of fork, join or its wait leaks nothing: every task settles, every record comes back (8)", async () => {
  const pool = await create({ taskCapacity: 64 });
  try {
    for (let round = 0; round < 3; round++) {
      // Main-thread tasks queued meanwhile: a join's wait runs them nested, at the overflowing depth.
      const others = Array.from({ length: 32 }, (_, i) => pool.run("add", i, 1));
      const overflowed = await within(pool.run("joinAcrossStackLimit", 400), 60_000, `sweep round ${round}`);
      assert(overflowed > 0, `round ${round}: no join overflowed (the sweep missed the limit)`);
      const sums = await within(Promise.all(others), 30_000, `round ${round}: the tasks run nested in the joins`);
      assertEquals(sums.filter((v, i) => v !== i + 1).length, 0, `round ${round}: their results`);
    }
    const counter = new Int32Array(new SharedArrayBuffer(4));
    const all = await within(
      Promise.all(Array.from({ length: 64 }, () => pool.run("barrier", counter, 64, 15_000))),
      30_000,
      "64 barrier tasks after the overflows",
    );
    assertEquals(all.filter((b) => !b).length, 0, "tasks not in flight at once (records leaked)");
    assertEquals(pool.stats().workerCrashes, 0, "no worker died");
  } finally {
    await within(pool.close(), 10_000, "close");
  }
});

test("a run at the edge of the main thread's stack: every promise it returns settles, and capacity is intact", async () => {
  const pool = await create({ taskCapacity: 64 });
  try {
    let reached = 0;
    let unwound = 0;
    // Not a tail call (JavaScriptCore runs those in constant stack): it must use stack.
    const descend = (n: number, then: () => void): void => {
      reached++;
      if (n <= 0) return then();
      descend(n - 1, then);
      unwound++;
    };
    const promises: Promise<unknown>[] = [];
    let overflowed = 0;
    for (let k = 0; k < 600; k++) {
      reached = 0;
      try {
        descend(1e9, () => {});
      } catch {
        // The limit: `reached` frames.
      }
      const limit = reached;
      try {
        descend(limit - k, () => void promises.push(pool.run("add", k, 1)));
      } catch (error) {
        if (!(error instanceof RangeError)) throw error;
        overflowed++;
      }
    }
    assert(overflowed > 0 && promises.length > 0, `the sweep missed the limit (${overflowed} overflowed)`);
    const outcomes = await within(Promise.allSettled(promises), 30_000, "the promises run returned");
    const wrong = outcomes.filter((o) => o.status === "rejected" && !((o.reason as Error) instanceof RangeError));
    assertEquals(
      wrong.length,
      0,
      `rejections other than the overflow: ${wrong.map((o) => String((o as PromiseRejectedResult).reason))}`,
    );
    const counter = new Int32Array(new SharedArrayBuffer(4));
    const all = await within(
      Promise.all(Array.from({ length: 64 }, () => pool.run("barrier", counter, 64, 15_000))),
      30_000,
      "64 barrier tasks after the sweep",
    );
    assertEquals(all.filter((b) => !b).length, 0, "tasks not in flight at once (records leaked)");
    await within(pool.drain(), 10_000, "drain (no entry left open)");
    assertEquals(pool.stats().pending, 0, "pending");
    console.log(
      `main-thread sweep [${runtime}]: ${overflowed} calls overflowed, ${promises.length} promises, ` +
        `${outcomes.filter((o) => o.status === "rejected").length} rejected with the overflow, all settled`,
    );
  } finally {
    await within(pool.close(), 10_000, "close");
  }
});

// ---- fork-join (12–14) ----

test("fork-join never deadlocks on space: 16 forks returning 800 KB each, 20 rounds (12)", async () => {
  const pool = await create();
  try {
    for (let round = 0; round < 20; round++) {
      const total = await within(pool.run("scopeOfBigResults", 16, 100_000), 30_000, `round ${round}`);
      assertEquals(total, 1_600_000, "elements received");
    }
    const many = await within(pool.run("scopeOfBigResults", 600, 10_000), 60_000, "600 × 80 KB");
    assertEquals(many, 6_000_000, "elements received");
  } finally {
    await within(pool.close(), 10_000, "close");
  }
});

test("join with an async b has one contract: a TypeError whether b was stolen or popped back (13)", async () => {
  const pool = await create();
  try {
    const seen = new Set<string>();
    for (let i = 0; i < 20; i++) {
      const error = await within(assertRejects(pool.run("joinAsync", i % 2 === 0 ? 0 : 20)), 10_000, "joinAsync");
      assert(error instanceof TypeError && error.message.includes("synchronous"), `received ${String(error)}`);
      seen.add((error as Error).name);
    }
    assertEquals([...seen], ["TypeError"], "one shape");
  } finally {
    await within(pool.close(), 10_000, "close");
  }
});

test("parallelMapInPlace in a pool task on a non-shared array is a TypeError naming the fix (14)", async () => {
  const pool = await create();
  try {
    const error = await within(assertRejects(pool.run("mapNotShared", 1024)), 10_000, "mapNotShared");
    assert(error instanceof TypeError && error.message.includes("SharedArrayBuffer"), `received ${String(error)}`);
  } finally {
    await within(pool.close(), 10_000, "close");
  }
});

// ---- results and modules (15–19) ----

test("a thenable that resolves twice settles its task once and leaves the pool intact (15)", async () => {
  const pool = await create();
  try {
    const results = await within(
      Promise.all(Array.from({ length: 2000 }, (_, i) => pool.run("resolveTwice", i))),
      30_000,
      "resolveTwice × 2,000",
    );
    assertEquals(results.filter((r, i) => r !== i).length, 0, "first resolve wins");
    const later = await within(
      Promise.all(Array.from({ length: 20_000 }, (_, i) => pool.run("add", i, 1))),
      30_000,
      "20,000 later runs",
    );
    assertEquals(later.filter((r, i) => r !== i + 1).length, 0, "later results");
    assertEquals(pool.stats().duplicateReports, 0, "no task reported twice");
  } finally {
    await within(pool.close(), 10_000, "close");
  }
});

test("a thenable whose then throws, a throwing getter, a throwing then getter: that task rejects, the worker lives (16)", async () => {
  const pool = await create();
  try {
    const a = await within(assertRejects(pool.run("thenThrows")), 10_000, "thenThrows");
    assert(a instanceof RangeError && a.message === "then threw", `thenThrows: ${String(a)}`);
    const b = await within(assertRejects(pool.run("getterThrows")), 10_000, "getterThrows");
    assert(b instanceof Error && b.message.includes("getter threw"), `getterThrows: ${String(b)}`);
    const c = await within(assertRejects(pool.run("thenGetterThrows")), 10_000, "thenGetterThrows");
    assert(c instanceof EvalError, `thenGetterThrows: ${String(c)}`);
    const d = await within(assertRejects(pool.run("throwsProxy")), 10_000, "throwsProxy");
    assert(d instanceof Error, `throwsProxy: ${String(d)}`);
    assertEquals(pool.stats().workerCrashes, 0, "no worker died");
    assertEquals(await pool.run("add", 1, 2), 3, "the pool goes on");
  } finally {
    await within(pool.close(), 10_000, "close");
  }
});

test("a task module that exits or never finishes loading rejects Pool.create with ModuleLoadError (17)", async () => {
  const exits = new URL("../fixtures/exits_while_loading.ts", import.meta.url);
  const a = await within(assertRejects(Pool.create(exits, { workers: 2 })), 20_000, "create (exits)");
  assert(a instanceof ModuleLoadError && a.url === exits.href && a.message.includes("exited"), String(a));
  const never = new URL("../fixtures/never_loads.ts", import.meta.url);
  const b = await within(assertRejects(Pool.create(never, { workers: 2, loadTimeout: 500 })), 20_000, "create (tla)");
  assert(b instanceof ModuleLoadError && b.url === never.href && b.message.includes("500 ms"), String(b));
});

test("close({ timeout }) returns while a task never settles: that task rejects with PoolTerminatedError (18)", async () => {
  const pool = await create();
  const stuck = outcome(pool.run("never"));
  const done = outcome(pool.run("add", 1, 2));
  await within(pool.close({ timeout: 200 }), 10_000, "close with a timeout");
  assertEquals(await within(done, 1000, "done"), "ok:3", "a task that finished");
  assertEquals(await within(stuck, 1000, "stuck"), "err:PoolTerminatedError", "the task that never settles");
  assertEquals(pool.lifecycle, "terminated", "close's timeout terminated the pool");
});

test("load errors carry the loader's message; a cyclic cause keeps the task's own message (19)", async () => {
  // Written at run time: a file that imports a missing module would fail the repository's type check.
  const dir = mkdtempSync(join(tmpdir(), "filch-missing-"));
  writeFileSync(join(dir, "package.json"), '{ "type": "module" }');
  writeFileSync(
    join(dir, "imports_missing.mjs"),
    'import { nothing } from "./no_such_dependency.mjs";\nexport function never() {\n  return nothing;\n}\n',
  );
  const missing = pathToFileURL(join(dir, "imports_missing.mjs"));
  const a = await within(assertRejects(Pool.create(missing, { workers: 1 })), 20_000, "create (missing import)");
  assert(a instanceof ModuleLoadError, `ModuleLoadError: ${String(a)}`);
  assert((a as Error).message.includes("no_such_dependency"), `names the import: ${(a as Error).message}`);
  const pool = await create();
  try {
    const b = await within(assertRejects(pool.run("cyclicCause")), 10_000, "cyclicCause");
    assert(b instanceof Error && b.message === "my own message", `own message kept: ${String(b)}`);
  } finally {
    await within(pool.close(), 10_000, "close");
  }
});

test("a load error names where the task module threw (file:line), on every runtime; a thrown string has none to give", async () => {
  // Written at run time, as test 19's: modules that throw while loading.
  const dir = mkdtempSync(join(tmpdir(), "filch-throws-"));
  writeFileSync(join(dir, "package.json"), '{ "type": "module" }');
  writeFileSync(
    join(dir, "throws_at_load.mjs"),
    'export function never() {\n  return 0;\n}\nthrow new TypeError("broken at line 4");\n',
  );
  writeFileSync(join(dir, "throws_string.mjs"), 'export function never() {\n  return 0;\n}\nthrow "a bare string";\n');
  const throws = pathToFileURL(join(dir, "throws_at_load.mjs"));
  const a = await within(assertRejects(Pool.create(throws, { workers: 1 })), 20_000, "create (throws)");
  assert(a instanceof ModuleLoadError && a.url === throws.href, `ModuleLoadError: ${String(a)}`);
  const message = (a as Error).message;
  assert(message.includes("broken at line 4"), `the original message: ${message}`);
  assert(/throws_at_load\.mjs:4(:\d+)?\)/.test(message), `where it threw, file:line: ${message}`);
  const bare = pathToFileURL(join(dir, "throws_string.mjs"));
  const b = await within(assertRejects(Pool.create(bare, { workers: 1 })), 20_000, "create (string)");
  assert(
    b instanceof ModuleLoadError && (b as Error).message.endsWith("it threw while loading: a bare string"),
    String(b),
  );
});

// ---- smaller (20) ----

test("option errors name the option, its rule and the value as given (20)", async () => {
  const cases: [unknown, string][] = [
    [{ workers: "2" }, "'workers' must be an integer from 1 to 1023: received '2' (a string)"],
    [{ taskCapacity: 2 ** 21 }, "'taskCapacity' must be a power of two from 2 to 2^20: received 2097152"],
    [{ dequeCapacity: 3 }, "'dequeCapacity' must be a power of two from 2 to 2^28: received 3"],
    [{ blocks: 0 }, "'blocks' must be a power of two from 2 to 2^28: received 0"],
    [null, "'options' must be an object: received null"],
    [{ loadTimeout: -1 }, "'loadTimeout' must be a positive number"],
    [
      { workerUrl: "./worker_thread.js" },
      "'workerUrl' must be a URL or an absolute URL string: received './worker_thread.js'",
    ],
    [{ workerUrl: 7 }, "'workerUrl' must be a URL or an absolute URL string: received 7"],
  ];
  for (const [options, message] of cases) {
    const error = await assertRejects(Pool.create(TASKS, options as PoolOptions));
    assert((error as Error).message.includes(message), `expected "${message}", received "${(error as Error).message}"`);
  }
});

test("workerUrl: a pool started from an explicit worker entry (where a bundler put it) runs a fork-join task", async () => {
  // The entry a bundler would have emitted: here the package's own, named explicitly.
  const workerUrl = new URL("../../lib/worker_thread.ts", import.meta.url);
  const pool = await Pool.create<typeof import("../fixtures/join_tasks.ts")>(
    new URL("../fixtures/join_tasks.ts", import.meta.url),
    { workers: 2, workerUrl: { href: workerUrl.href } },
  );
  try {
    assertEquals(await within(pool.run("fib", 25, 12), 30_000, "fib"), 75025, "fib(25)");
  } finally {
    await within(pool.close(), 10_000, "close");
  }
});

test("a deeply nested argument's error message stays short; PoolTerminatedError names its task; terminate() after close() keeps 'closed' (20)", async () => {
  const pool = await create();
  let deep: unknown = 1;
  for (let i = 0; i < 1001; i++) deep = [deep];
  const error = await within(assertRejects(pool.run("echo", deep)), 10_000, "deep");
  assert((error as Error).message.length < 400, `message of ${(error as Error).message.length} characters`);
  const stuck = pool.run("never");
  await pool.terminate();
  const terminated = await assertRejects(stuck);
  assert(terminated instanceof PoolTerminatedError && terminated.message.includes("'never'"), String(terminated));
  const other = await create();
  await other.close();
  await other.terminate();
  assertEquals(other.lifecycle, "closed", "terminate() on a closed pool");
});

test("terminate() while a dead worker's replacement is loading reports nothing (no unhandled rejection)", async () => {
  const unhandled = await unhandledRejectionsDuring(async () => {
    for (let round = 0; round < 3; round++) {
      const pool = await Pool.create<typeof hostile>(TASKS, { workers: 1 });
      const crashed = await within(assertRejects(pool.run("exitThread", 3)), 20_000, "the crashing task");
      assert(crashed instanceof WorkerCrashedError, String(crashed));
      // The replacement is loading now: stop the pool under it.
      await within(pool.terminate(), 10_000, "terminate");
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  });
  assertEquals(unhandled.length, 0, "no unhandled rejection from a replacement stopped while it loaded");
});
