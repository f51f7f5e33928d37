/**
 * Errors keep their class and fields across threads: a task's custom error arrives with its name,
 * message, stack, cause and own fields; with `errorClasses`, as an instance of its class.
 */
import { Pool } from "../../lib/pool.ts";
import type * as tasks from "../fixtures/error_tasks.ts";
import { HttpError, QuietError } from "../fixtures/error_tasks.ts";
import { assert, assertEquals, assertRejects, test, within } from "../_test.ts";

const moduleUrl = new URL("../fixtures/error_tasks.ts", import.meta.url);

test("a task's custom error arrives with its name, message, stack, cause and own fields", async () => {
  const pool = await Pool.create<typeof tasks>(moduleUrl, { workers: 1 });
  try {
    const thrown = await within(assertRejects(pool.run("failHttp", 503)), 10_000, "failHttp");
    assert(thrown instanceof Error && !(thrown instanceof HttpError), "without errorClasses: a plain Error");
    const error = thrown as Error & { status: number; body: unknown };
    assertEquals([error.name, error.message, error.status, error.body], ["HttpError", "status 503", 503, {
      retry: true,
    }]);
    assert(error.cause instanceof RangeError && (error.cause as Error).message === "upstream", "its cause");
    assert(typeof error.stack === "string" && error.stack.includes("failHttp"), `its stack: ${error.stack}`);
  } finally {
    await within(pool.close(), 10_000, "close");
  }
});

test("with errorClasses, errors are instances of their classes: by name, by class name, through a join", async () => {
  const pool = await Pool.create<typeof tasks>(moduleUrl, { workers: 2, errorClasses: [HttpError, QuietError] });
  try {
    const http = await within(assertRejects(pool.run("failHttp", 404)), 10_000, "failHttp");
    assert(http instanceof HttpError, "an HttpError");
    assertEquals([(http as HttpError).status, (http as HttpError).body], [404, { retry: false }]);
    const quiet = await within(assertRejects(pool.run("failQuietly")), 10_000, "failQuietly");
    assert(quiet instanceof QuietError && quiet instanceof TypeError, "a QuietError (no name set: its class name)");
    assertEquals([(quiet as QuietError).code, (quiet as QuietError).attempts], ["E_QUIET", 3]);
    const forked = await within(assertRejects(pool.run("failInFork")), 10_000, "failInFork");
    assert(forked instanceof HttpError && (forked as HttpError).status === 503, "a fork's error, rethrown by join");
  } finally {
    await within(pool.close(), 10_000, "close");
  }
});

test("errorClasses must be named Error classes, each once: other values are named errors", async () => {
  class Unnamed extends Error {}
  Object.defineProperty(Unnamed, "name", { value: "" });
  for (
    const [bad, says] of [
      [HttpError, "must be an array"],
      [[class NotAnError {}], "must be a named class that extends Error"],
      [[Unnamed], "must be a named class that extends Error"],
      [[HttpError, HttpError], "names two classes 'HttpError'"],
    ] as const
  ) {
    const error = await within(
      assertRejects(Pool.create(moduleUrl, { workers: 1, errorClasses: bad as never })),
      10_000,
      "create",
    );
    assert(error instanceof TypeError && error.message.includes(says), String(error));
  }
});
