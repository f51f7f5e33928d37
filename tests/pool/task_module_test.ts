/**
 * How a pool names its task module and its tasks: a file path given as the module is refused with the fix
 * for a path (`pathToFileURL`), a relative string with the fix for a module beside the caller (`new URL`);
 * a function given as the task is a TypeError that says tasks are the module's named exports (and shows
 * no source text: nothing is evaluated from it); a default export is the task named "default".
 */
import { fileURLToPath, pathToFileURL } from "node:url";
import { Pool } from "../../lib/pool.ts";
import { TaskNotFoundError } from "../../lib/errors.ts";
import type * as tasks from "../fixtures/tasks.ts";
import { add } from "../fixtures/tasks.ts";
import type * as defaults from "../fixtures/default_tasks.ts";
import { assert, assertEquals, assertRejects, test, within } from "../_test.ts";

const moduleUrl = new URL("../fixtures/tasks.ts", import.meta.url);

test("a file path as the task module is refused with the fix for a path: pathToFileURL(path), from node:url", async () => {
  const path = fileURLToPath(moduleUrl);
  for (const given of [path, "C:\\app\\tasks.ts", "\\\\server\\share\\tasks.ts"]) {
    const error = await assertRejects(Pool.create(given, { workers: 1 }));
    const message = (error as Error).message;
    assert(error instanceof TypeError, `a TypeError: ${String(error)}`);
    assert(message.includes(`received '${given}', a file path`), message);
    assert(message.includes(`pathToFileURL(${JSON.stringify(given)})`) && message.includes('"node:url"'), message);
  }
  // The fix it names works.
  const pool = await Pool.create<typeof tasks>(pathToFileURL(path), { workers: 1 });
  try {
    assertEquals(await within(pool.run("add", 2, 3), 10_000, "run"), 5, "a pool of pathToFileURL(path)");
  } finally {
    await pool.close();
  }
});

test("a relative string as the task module is refused with the fix for a module beside the caller: new URL(...)", async () => {
  const error = await assertRejects(Pool.create("./tasks.ts", { workers: 1 }));
  const message = (error as Error).message;
  assert(error instanceof TypeError, `a TypeError: ${String(error)}`);
  assert(message.includes(`new URL("./tasks.ts", import.meta.url)`), message);
  assert(!message.includes("', a file path"), `not taken for a path: ${message}`);
  const worker = await assertRejects(Pool.create(moduleUrl, { workers: 1, workerUrl: "/srv/worker_thread.js" }));
  assert((worker as Error).message.includes('pathToFileURL("/srv/worker_thread.js")'), String(worker));
});

test("pool.run(fn) is a TypeError saying tasks are the module's named exports, run by name; no source text in it", async () => {
  const spawned: unknown[] = [];
  const pool = await Pool.create<typeof tasks>(moduleUrl, { workers: 1, onError: (error) => spawned.push(error) });
  try {
    // A function whose source holds a marker: the message must not quote it.
    const local = (x: number): number => x + 0xbad; // MARKER_IN_SOURCE
    const submit = pool as unknown as Pool;
    const refusals: [string, unknown][] = [
      ["run(an exported function)", await assertRejects(submit.run(add as never, 1, 2))],
      ["run(a local arrow)", await assertRejects(submit.run(local as never, 1))],
      ["runMany", await assertRejects(submit.runMany(add as never, [[1, 2]]))],
      ["with(...).run", await assertRejects(submit.with({ timeout: 1_000 }).run(add as never, 1, 2))],
      [
        "map",
        await assertRejects((async () => {
          for await (const _ of submit.map(local as never, [1])) {
            // nothing: the first step refuses
          }
        })()),
      ],
      ["broadcast", await assertRejects(submit.broadcast(add as never, 1, 2))],
    ];
    submit.spawn(add as never, 1, 2);
    await new Promise((resolve) => setTimeout(resolve, 10));
    refusals.push(["spawn (to onError)", spawned[0]]);
    for (const [call, error] of refusals) {
      const message = (error as Error)?.message ?? "";
      assert(error instanceof TypeError && !(error instanceof TaskNotFoundError), `${call}: a TypeError: ${error}`);
      assert(message.includes("exported functions, run by name"), `${call}: says tasks are named exports: ${message}`);
      assert(message.includes("never evaluates code from a string"), `${call}: says nothing is evaluated: ${message}`);
      assert(!message.includes("MARKER_IN_SOURCE") && !message.includes("0xbad") && !message.includes("=>"), message);
      assert(!message.includes("return a + b"), `${call}: no source text: ${message}`);
    }
    const exported = (refusals[0][1] as Error).message;
    assert(exported.includes(`a function ('add')`) && exported.includes(`pool.run("add", ...args)`), exported);
    // A name still gets TaskNotFoundError, with the nearest name.
    const named = await assertRejects(submit.run("ad", 1, 2));
    assert(named instanceof TaskNotFoundError && named.nearest === "add", String(named));
  } finally {
    await pool.close();
  }
  // Closed: a broadcast reads the state before the name; still no source text.
  const closed = await assertRejects((pool as unknown as Pool).broadcast(add as never, 1, 2));
  assert(!(closed as Error).message.includes("return a + b"), `no source text after close: ${closed}`);
});

test('a default export is the task named "default", beside the named ones', async () => {
  const pool = await Pool.create<typeof defaults>(new URL("../fixtures/default_tasks.ts", import.meta.url), {
    workers: 2,
  });
  try {
    assertEquals(pool.tasks, ["default", "half"], "the task names");
    assertEquals(await within(pool.run("default", 6, 7), 10_000, "default"), 42, "run('default', 6, 7)");
    assertEquals(await within(pool.runMany("default", [[2, 3], [4, 5]]), 10_000, "runMany"), [6, 20], "runMany");
    assertEquals(await within(pool.run("half", 9), 10_000, "half"), 4.5, "a named task beside it");
  } finally {
    await pool.close();
  }
});
