/**
 * Strict options: a key that is not an option of its call (`Pool.create`, `pool.with()`) is refused with a
 * TypeError naming the key, the call and the nearest option, instead of being ignored (a plain-JavaScript
 * caller's `{ worker: 2 }` got the default with no word). And an unknown task name names the nearest task.
 */
import { TaskNotFoundError } from "../../lib/errors.ts";
import { editDistance, nearestName } from "../../lib/nearest.ts";
import {
  POOL_OPTION_KEYS,
  type PoolOptions,
  resolveOptions,
  resolveRunOptions,
  RUN_OPTION_KEYS,
} from "../../lib/options.ts";
import { Pool } from "../../lib/pool.ts";
import type * as tasks from "../fixtures/tasks.ts";
import { assert, assertEquals, assertRejects, assertThrows, test } from "../_test.ts";

const TASKS = new URL("../fixtures/tasks.ts", import.meta.url);

/** The message of what `fn` threw (a TypeError), or a failure. */
function typeErrorOf(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    assert(error instanceof TypeError, `a TypeError, received ${String(error)}`);
    return error.message;
  }
  throw new Error("nothing was thrown");
}

test("a misspelled option of Pool.create rejects, naming the key, the call and the nearest option", async () => {
  const error = await assertRejects(Pool.create(TASKS, { worker: 2 } as unknown as PoolOptions));
  assert(error instanceof TypeError, `a TypeError, received ${String(error)}`);
  assertEquals(error.message, "Cannot create pool as 'worker' is not an option: did you mean 'workers'?");
  assertEquals(
    typeErrorOf(() => resolveOptions({ maxqueue: 4 })),
    "Cannot create pool as 'maxqueue' is not an option: did you mean 'maxQueue'?",
  );
  assertEquals(
    typeErrorOf(() => resolveOptions({ taksCapacity: 64 })),
    "Cannot create pool as 'taksCapacity' is not an option: did you mean 'taskCapacity'?",
  );
});

test("an option of pool.with() given to Pool.create is refused with the call it belongs to", () => {
  const message = typeErrorOf(() => resolveOptions({ workers: 1, timeout: 100 }));
  assertEquals(
    message,
    "Cannot create pool as 'timeout' is not an option: it is an option of pool.with(), not of Pool.create",
  );
  assertEquals(
    typeErrorOf(() => resolveRunOptions({ workers: 2 })),
    "Cannot run task as 'workers' is not an option: it is an option of Pool.create, not of pool.with()",
  );
});

test("a key near no option lists every option of the call", () => {
  const message = typeErrorOf(() => resolveOptions({ colour: "blue" }));
  assert(
    message.startsWith("Cannot create pool as 'colour' is not an option: the options of Pool.create are "),
    message,
  );
  for (const key of POOL_OPTION_KEYS) assert(message.includes(`'${key}'`), `lists '${key}': ${message}`);
  const run = typeErrorOf(() => resolveRunOptions({ colour: "blue" }));
  assertEquals(
    run,
    "Cannot run task as 'colour' is not an option: the options of pool.with() are 'signal', 'timeout', 'queueTimeout', 'force', 'priority', 'onProgress'",
  );
});

test("pool.with() refuses a misspelled option at the call, before anything is submitted", async () => {
  const pool = await Pool.create<typeof tasks>(TASKS, { workers: 1 });
  try {
    const message = typeErrorOf(() => pool.with({ timout: 5 } as unknown as { timeout: number }));
    assertEquals(message, "Cannot run task as 'timout' is not an option: did you mean 'timeout'?");
    assertEquals(pool.stats().submitted, 0, "nothing was submitted");
    assertEquals(await pool.with({ timeout: 5_000 }).run("add", 1, 2), 3, "a right option still runs");
  } finally {
    await pool.close();
  }
});

test("every documented option is accepted by its own call", () => {
  const valid: Required<Omit<PoolOptions, "resourceLimits">> = {
    workers: { min: 1, max: 1 },
    idleTimeout: 1_000,
    name: "strict",
    dequeCapacity: 64,
    taskCapacity: 64,
    inlineBytes: 128,
    blockBytes: 256,
    blocks: 64,
    payloadMemory: 0,
    onError: () => {},
    loadTimeout: 1_000,
    workerUrl: new URL("../../lib/worker_thread.ts", import.meta.url).href,
    maxQueue: 4,
    asyncTasksPerWorker: 8,
    errorClasses: [RangeError],
    producers: 2,
    metrics: true,
    workerData: { table: [1, 2, 3] },
    recycle: { afterTasks: 100, heapMB: 512 },
  };
  // resourceLimits is refused on Bun by design (its workers ignore heap limits): given where it is taken.
  const options = "Bun" in globalThis ? valid : { ...valid, resourceLimits: { maxOldGenerationSizeMb: 512 } };
  assertEquals(resolveOptions(options).shape.workers, 1);
  assertEquals(
    Object.keys({ ...valid, resourceLimits: 0 }).sort(),
    [...POOL_OPTION_KEYS].sort(),
    "the list is the interface",
  );
  const run = resolveRunOptions({
    signal: new AbortController().signal,
    timeout: 10,
    queueTimeout: 10,
    force: true,
    priority: "low",
    onProgress: () => {},
  });
  assertEquals(run.force, true);
  assertEquals(run.level, 2);
  assertEquals([...RUN_OPTION_KEYS].sort(), ["force", "onProgress", "priority", "queueTimeout", "signal", "timeout"]);
});

test("an unknown task name rejects with TaskNotFoundError naming the nearest task and listing them all", async () => {
  const pool = await Pool.create<typeof tasks>(TASKS, { workers: 1 });
  try {
    const error = await assertRejects((pool as unknown as Pool).run("ad", 1, 2)) as TaskNotFoundError;
    assert(error instanceof TaskNotFoundError, `TaskNotFoundError, received ${String(error)}`);
    assertEquals(error.nearest, "add");
    assert(error.message.includes("did you mean 'add'? Known tasks are "), error.message);
    assert(error.message.includes("'echo'"), `it lists the tasks: ${error.message}`);
    const far = await assertRejects((pool as unknown as Pool).run("zzzzzzzz")) as TaskNotFoundError;
    assertEquals(far.nearest, undefined);
    assert(far.message.includes(": known tasks are "), far.message);
  } finally {
    await pool.close();
  }
});

test("nearestName suggests a name in another case or a few edits away, and nothing far", () => {
  const known = ["workers", "name", "maxQueue", "loadTimeout"];
  assertEquals(nearestName("Workers", known), "workers", "case only");
  assertEquals(nearestName("wokrers", known), "workers", "a swapped pair is one edit");
  assertEquals(nearestName("nam", known), "name", "one edit on a short name");
  assertEquals(nearestName("timeout", known), undefined, "four edits from loadTimeout is too far");
  assertEquals(nearestName("x", []), undefined);
  assertEquals(editDistance("kitten", "sitting"), 3);
  assertEquals(editDistance("", "abc"), 3);
  assertThrows(() => resolveOptions({ [""]: 1 }), TypeError, "is not an option");
});
