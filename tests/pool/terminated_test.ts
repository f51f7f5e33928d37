/**
 * After `terminate()`, the pool's state is one error: every new submission — `run`, `spawn`, `runMany`,
 * `map`, `with(...)`, `broadcast`, `pool.handle()`, from the pool and from a producer in another thread,
 * and `openProducer` on a handle made before — rejects (or throws) with `PoolTerminatedError`, which
 * extends `PoolClosedError` so that a check for either sees it; `waitForRoom` and `drain` resolve. After
 * `close()` the error stays `PoolClosedError`, not the subclass.
 */
import { Pool } from "../../lib/pool.ts";
import { PoolClosedError, PoolTerminatedError } from "../../lib/errors.ts";
import { startThread } from "../../lib/runtime/thread.ts";
import { type Refusal, refusal, tryEverySubmission } from "./_refusals.ts";
import type * as tasks from "../fixtures/tasks.ts";
import { assert, assertEquals, assertRejects, test, within } from "../_test.ts";

const moduleUrl = new URL("../fixtures/tasks.ts", import.meta.url);
const threadUrl = new URL("../fixtures/terminated_producer.ts", import.meta.url);

/** Every refusal is a PoolTerminatedError (and so a PoolClosedError) that says "terminated"; waitForRoom and drain resolve. */
function assertTerminatedRefusals(refusals: Refusal[], who: string): void {
  for (const r of refusals) {
    if (r.call === "waitForRoom" || r.call === "drain") {
      assertEquals(r.name, "resolved", `${who}: ${r.call} resolves after terminate()`);
      continue;
    }
    assertEquals(
      [r.name, r.terminated, r.closed],
      ["PoolTerminatedError", true, true],
      `${who}: ${r.call} after terminate(): ${r.message}`,
    );
    assert(r.message.includes("terminated"), `${who}: ${r.call}'s message says terminated: ${r.message}`);
  }
}

test("PoolTerminatedError is a PoolClosedError: an instanceof check for the older class still sees it", () => {
  const error = new PoolTerminatedError("stopped");
  assert(error instanceof PoolClosedError && error instanceof Error, "a PoolClosedError and an Error");
  assertEquals(error.name, "PoolTerminatedError", "its own name");
  assert(!(new PoolClosedError("closed") instanceof PoolTerminatedError), "not the other way round");
});

test("after terminate(), every new submission of the pool rejects with PoolTerminatedError", async () => {
  const spawned: unknown[] = [];
  const pool = await Pool.create<typeof tasks>(moduleUrl, { workers: 2, onError: (error) => spawned.push(error) });
  await within(pool.terminate(), 10_000, "terminate");
  const refusals = await within(tryEverySubmission(pool, spawned), 10_000, "the submissions");
  refusals.push(
    await pool.broadcast("add", 1, 2).then(() => refusal("broadcast", undefined), (e) => refusal("broadcast", e)),
  );
  let handle: Refusal;
  try {
    pool.handle();
    handle = refusal("handle()", undefined);
  } catch (error) {
    handle = refusal("handle()", error);
  }
  refusals.push(handle);
  assertEquals(refusals.length, 11, "every call tried");
  assertTerminatedRefusals(refusals, "the pool");
});

test("after terminate(), a producer in another thread: its waiting task rejects at once (the owner wakes it), every new submission rejects with PoolTerminatedError, and openProducer throws it", async () => {
  const pool = await Pool.create<typeof tasks>(moduleUrl, { workers: 2 });
  const thread = startThread(threadUrl, "terminated-producer");
  try {
    const replies: Record<string, unknown>[] = [];
    let wake: () => void = () => {};
    thread.onMessage((message) => {
      replies.push(message as Record<string, unknown>);
      wake();
    });
    thread.onError((error) => replies.push({ error: String(error) }));
    const next = async (what: string): Promise<Record<string, unknown>> => {
      const count = replies.length;
      await within(new Promise<void>((resolve) => (wake = resolve)), 30_000, what);
      const reply = replies[count];
      if (reply.error !== undefined) throw new Error(`the producer thread failed (${what}): ${reply.error}`);
      return reply;
    };
    const opened = next("the producer opens");
    const handle = pool.handle();
    // Made while the pool is open, kept by the thread, and opened there after the pool was terminated.
    const spare = pool.handle();
    thread.post(
      { kind: "open", handle, spare },
      [...handle.transfer, ...spare.transfer] as unknown as ArrayBuffer[],
    );
    await opened;
    // One task of the producer's holds a worker; the producer waits for it, woken by nothing of its own.
    const gate = new Int32Array(new SharedArrayBuffer(4));
    try {
      const held = next("the producer submits its task");
      thread.post({ kind: "hold", view: gate });
      await held;
      const settled = next("the producer's waiting task settles after terminate()");
      await new Promise((resolve) => setTimeout(resolve, 50)); // it is waiting now
      await within(pool.terminate(), 10_000, "terminate");
      const reply = await within(settled, 5_000, "the waiting task's rejection (the owner's wake)");
      assertTerminatedRefusals([reply.settled as Refusal], "the held task");
    } finally {
      // Only now: a gate opened earlier would let the task finish on a thread that terminate() did not
      // stop (Deno), and its completion would wake the producer in the owner's stead.
      Atomics.store(gate, 0, 1);
      Atomics.notify(gate, 0);
    }
    const submitted = next("the producer's submissions");
    thread.post({ kind: "submit" });
    const refusals = (await submitted).refusals as Refusal[];
    assertEquals(refusals.length, 9, "every call tried");
    assertTerminatedRefusals(refusals, "the producer");
    const reopened = next("openProducer after terminate");
    thread.post({ kind: "reopen" });
    assertTerminatedRefusals([(await reopened).reopened as Refusal], "openProducer");
  } finally {
    thread.terminate();
    await within(pool.terminate(), 10_000, "terminate");
  }
});

test("after close(), a new submission rejects with PoolClosedError, not PoolTerminatedError", async () => {
  const pool = await Pool.create<typeof tasks>(moduleUrl, { workers: 1 });
  await within(pool.close(), 10_000, "close");
  const error = await within(assertRejects(pool.run("add", 1, 2)), 5_000, "run after close");
  assert(error instanceof PoolClosedError && !(error instanceof PoolTerminatedError), String(error));
  assert((error as Error).message.includes("closed"), String(error));
});
