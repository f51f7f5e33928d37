/**
 * The owner (`lib/owner/owner.ts` `Owner`) on the shipped module, assembled as a pool is
 * (`lib/assemble.ts`: a real pool memory, producer, ledger, broadcaster, links and handling of deaths),
 * with a stand-in for its one part that starts threads: the `Workforce`'s methods are replaced on the
 * instance, so no worker thread starts and every start, message, kill and stop is recorded. What each
 * lifecycle call does: the states it moves through (and writes where producers in other threads read them),
 * what it refuses and with which error, what it tells the workers and the pool's events, which worker a
 * directed task goes to and the mail word it counts, and what a pool left with no worker rejects.
 * Single-threaded: no timing beyond a timer of 0 ms.
 *
 * Written for StrykerJS's survivors of owner.ts (issue 47, "Mutants nobody here chose").
 */
import { assemblePool } from "../../lib/assemble.ts";
import { move } from "../../lib/codec/move.ts";
import { lifelineLocks } from "../../lib/runtime/lifeline.ts";
import { resolveOptions } from "../../lib/options.ts";
import type { Owner } from "../../lib/owner/owner.ts";
import type { Workforce } from "../../lib/owner/workforce.ts";
import { ControlWords, SleepWords, StatusWords } from "../../lib/protocol/layout.ts";
import { ABSENT, AWAKE, RETIRING } from "../../lib/protocol/slots.ts";
import { PoolStateCode } from "../../lib/protocol/producers.ts";
import { HANDLE_KIND, HANDLE_VERSION } from "../../lib/producer/handle.ts";
import {
  ModuleLoadError,
  PoolClosedError,
  PoolTerminatedError,
  TaskNotFoundError,
  WorkerCrashedError,
  WorkerTeardownError,
} from "../../lib/errors.ts";
import { assert, assertEquals, assertRejects, test, within } from "../_test.ts";

/**
 * A test of this file: each runs in milliseconds, with no thread, so a hang (a promise a mutant leaves
 * unsettled) fails after 10 s, not the default 2 minutes (StrykerJS pays it for every such mutant).
 */
function ownerTest(name: string, body: () => Promise<void> | void): void {
  test(name, body, 10_000);
}

/** The task names the stand-in workers "load". */
const TASKS = ["add", "echo"];

/** What the stand-in workforce saw. */
interface Seen {
  started: number[];
  sent: [number, unknown][];
  stops: (number | undefined)[];
  kills: [number, string][];
  errors: [unknown, string][];
  events: [string, unknown][];
}

/** An owner of a pool of `workers` workers whose workforce is a stand-in; `start` not yet called. */
function ownerOf(
  workers: number,
  options: Record<string, unknown> = {},
  act: { startFails?: (index: number) => Error | undefined } = {},
): { owner: Owner; seen: Seen; dead: Set<number>; vacancies: Map<number, Error> } {
  const seen: Seen = { started: [], sent: [], stops: [], kills: [], errors: [], events: [] };
  const { owner } = assemblePool(
    "file:///stand-in/tasks.ts",
    resolveOptions({ workers, onError: (error: unknown, task: string) => seen.errors.push([error, task]), ...options }),
  );
  const dead = new Set<number>();
  const vacancies = new Map<number, Error>();
  const workforce = (owner as unknown as { workforce: Workforce }).workforce;
  workforce.start = (index: number) => {
    seen.started.push(index);
    const failure = act.startFails?.(index);
    return failure === undefined ? Promise.resolve([...TASKS]) : Promise.reject(failure);
  };
  workforce.send = (index: number, message: unknown) => void seen.sent.push([index, message]);
  workforce.share = () => {};
  workforce.isDead = (index: number) => dead.has(index);
  workforce.vacancy = (index: number) => vacancies.get(index);
  workforce.stop = (graceMs?: number) => {
    seen.stops.push(graceMs);
    return Promise.resolve();
  };
  workforce.kill = (index: number, cause: Error) => void seen.kills.push([index, cause.message]);
  for (const type of ["workeronline", "workerreplaced", "workerdied", "close", "terminate"]) {
    owner.events.queue.target.addEventListener(
      type,
      (e: Event) => seen.events.push([type, (e as Event & { detail: unknown }).detail]),
    );
  }
  return { owner, seen, dead, vacancies };
}

/** The pool's memory of `owner`. */
function memoryOf(owner: Owner) {
  return (owner as unknown as { memory: import("../../lib/protocol/memory.ts").PoolMemory }).memory;
}

/** Lets the event queue's timer (0 ms) and the microtasks before it run. */
const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

ownerTest("owner: start() starts every worker, takes the task names, and tells workeronline for each", async () => {
  const { owner, seen } = ownerOf(3);
  await owner.start();
  assertEquals(seen.started.sort(), [0, 1, 2], "each index started once");
  assertEquals([...owner.producer.taskNames], TASKS, "the task names the workers loaded");
  await tick();
  const online = seen.events.filter(([type]) => type === "workeronline").map(([, d]) => d);
  assertEquals(online.length, 3, "one workeronline a worker");
  for (const detail of online) {
    assertEquals((detail as { replacement: boolean }).replacement, false, "not a replacement");
  }
  assertEquals(owner.lifecycle, "open", "open");
  await owner.terminate();
});

ownerTest("owner: a start that fails terminates the pool, stops the workers at once, and rethrows", async () => {
  const failure = new Error("load failed");
  const { owner, seen } = ownerOf(2, {}, { startFails: (i) => (i === 1 ? failure : undefined) });
  let thrown: unknown;
  try {
    await owner.start();
  } catch (error) {
    thrown = error;
  }
  assert(thrown === failure, `start() rethrows the start's error (${String(thrown)})`);
  assertEquals(owner.lifecycle, "terminated", "terminated");
  const memory = memoryOf(owner);
  assertEquals(Atomics.load(memory.control, ControlWords.poolState), PoolStateCode.terminated, "written for producers");
  await tick();
  assertEquals(seen.stops, [undefined], "the workers stopped at once (no grace)");
  assertEquals(Atomics.load(memory.control, ControlWords.lifecycle), 1, "the workers' lifecycle word says stop");
});

ownerTest(
  "owner: close() refuses a timeout that is not a non-negative number, with a RangeError naming it",
  async () => {
    const { owner } = ownerOf(1);
    await owner.start();
    for (const timeout of [-1, Number.NaN, "5", null]) {
      const error = await assertRejects(owner.close({ timeout: timeout as number }));
      assert(error instanceof RangeError, `${String(timeout)}: a RangeError (${String(error)})`);
      assert(
        (error as Error).message ===
          `Cannot close pool as 'timeout' must be a non-negative number of ms: received ${timeout}`,
        `${String(timeout)}: its message (${(error as Error).message})`,
      );
      assertEquals(owner.lifecycle, "open", `${String(timeout)}: the pool stays open`);
    }
    await within(owner.close({ timeout: 0 }), 5_000, "close({ timeout: 0 })");
    assertEquals(owner.lifecycle, "closed", "a timeout of 0 is accepted");
  },
);

ownerTest(
  "owner: close() moves open → closing → closed, writes each state, stops the workers with grace, tells close",
  async () => {
    const { owner, seen } = ownerOf(2);
    await owner.start();
    const memory = memoryOf(owner);
    const closing = owner.close({});
    assertEquals(owner.lifecycle, "closing", "closing at once");
    assertEquals(Atomics.load(memory.control, ControlWords.poolState), PoolStateCode.closing, "closing written");
    assertEquals(Atomics.load(memory.control, ControlWords.lifecycle), 0, "the workers not told to stop yet");
    assert(owner.close({}) === closing, "a second close() returns the same promise");
    assert(owner.close({ timeout: 5 }) === closing, "so does one with a timeout");
    await within(closing, 5_000, "close");
    assertEquals(owner.lifecycle, "closed", "closed");
    assertEquals(Atomics.load(memory.control, ControlWords.poolState), PoolStateCode.closed, "closed written");
    assertEquals(Atomics.load(memory.control, ControlWords.lifecycle), 1, "the workers told to stop");
    assertEquals(seen.stops, [2000], "stopped once, with the grace of a cooperative stop");
    await tick();
    assertEquals(seen.events.filter(([t]) => t === "close").length, 1, "close told once");
    assertEquals(seen.events.filter(([t]) => t === "terminate").length, 0, "no terminate");
    assert(owner.terminate() === closing, "terminate() after close() returns close()'s promise");
    assertEquals(owner.lifecycle, "closed", "and keeps 'closed'");
  },
);

ownerTest(
  "owner: close() waits for a pending task; with a timeout that expires, it terminates the pool naming it",
  async () => {
    const { owner, seen } = ownerOf(1);
    await owner.start();
    const task = owner.producer.run("add", [1, 2]);
    task.catch(() => {});
    let closed = false;
    const closing = owner.close({ timeout: 30 }).then(() => (closed = true));
    await tick();
    assert(!closed, "close() waits while a task is pending");
    assertEquals(owner.lifecycle, "closing", "closing meanwhile");
    await within(closing, 5_000, "close");
    const error = await assertRejects(task);
    assert(error instanceof PoolTerminatedError, `the task rejects with PoolTerminatedError (${String(error)})`);
    assert(/close\(\) waited 30 ms for it/.test((error as Error).message), `it names why: ${(error as Error).message}`);
    assertEquals(owner.lifecycle, "terminated", "the pool was terminated");
    assertEquals(seen.stops.length, 2, "stopped at once by the termination, then again by close");
    assertEquals(seen.stops[0], undefined, "the termination's stop has no grace");
    await tick();
    const terminate = seen.events.find(([t]) => t === "terminate")?.[1] as { why: string; rejected: number };
    assertEquals(terminate, { why: "close() waited 30 ms for it", rejected: 1 }, "terminate told why and how many");
  },
);

ownerTest("owner: close() with no timeout and nothing pending closes without terminating", async () => {
  const { owner, seen } = ownerOf(1);
  await owner.start();
  await within(owner.close({}), 5_000, "close");
  await within(owner.close(undefined as unknown as { timeout?: number }), 5_000, "close(undefined)");
  assertEquals(owner.lifecycle, "closed", "closed");
  await tick();
  assertEquals(seen.events.filter(([t]) => t === "terminate").length, 0, "not terminated");
});

ownerTest(
  "owner: terminate() rejects every unsettled task naming why, stops at once, and tells terminate once",
  async () => {
    const { owner, seen } = ownerOf(2);
    await owner.start();
    const memory = memoryOf(owner);
    const tasks = [owner.producer.run("add", [1, 2]), owner.producer.run("echo", [3])];
    for (const t of tasks) t.catch(() => {});
    const stopped = owner.terminate();
    assertEquals(owner.lifecycle, "terminated", "terminated at once");
    assertEquals(Atomics.load(memory.control, ControlWords.poolState), PoolStateCode.terminated, "written");
    assertEquals(Atomics.load(memory.control, ControlWords.lifecycle), 1, "the workers told to stop");
    assert(owner.terminate() === stopped, "a second terminate() returns the same promise");
    assert(owner.close({}) === stopped, "close() after terminate() returns it too");
    await within(stopped, 5_000, "terminate");
    assertEquals(seen.stops, [undefined], "stopped once, at once");
    for (const t of tasks) {
      const error = await assertRejects(t);
      assert(error instanceof PoolTerminatedError, `rejected with PoolTerminatedError (${String(error)})`);
      assert(/terminate\(\) was called/.test((error as Error).message), `naming why: ${(error as Error).message}`);
    }
    await tick();
    const told = seen.events.filter(([t]) => t === "terminate").map(([, d]) => d);
    assertEquals(told, [{ why: "terminate() was called", rejected: 2 }], "terminate told once, with the count");
    assertEquals(owner.lifecycle, "terminated", "stays terminated");
  },
);

ownerTest(
  "owner: broadcast() sends one part to each worker and wakes them; refuses when not open, an unknown task, a move",
  async () => {
    const { owner, seen } = ownerOf(3);
    await owner.start();
    const parts = owner.broadcast("echo", [7]);
    parts.catch(() => {});
    const sent = seen.sent.filter(([, m]) => (m as { type: string }).type === "broadcast");
    assertEquals(sent.map(([w]) => w), [0, 1, 2], "one part a worker, by index");
    const unknown = await assertRejects(owner.broadcast("nope", []));
    assert(unknown instanceof TaskNotFoundError, `an unknown task: TaskNotFoundError (${String(unknown)})`);
    const moved = await assertRejects(owner.broadcast("echo", [move(new ArrayBuffer(8))]));
    assert(
      moved instanceof TypeError &&
        /a broadcast's arguments cannot be moved \(every worker gets its own copy\): pass it without move\(\)/.test(
          moved.message,
        ),
      `a moved buffer is refused, saying why: ${String(moved)}`,
    );
    void owner.close({});
    const closed = await assertRejects(owner.broadcast("echo", [1]));
    assert(
      closed instanceof PoolClosedError && !(closed instanceof PoolTerminatedError),
      `closing: PoolClosedError (${closed})`,
    );
    await owner.terminate();
    const terminated = await assertRejects(owner.broadcast("echo", [1]));
    assert(terminated instanceof PoolTerminatedError, `terminated: PoolTerminatedError (${String(terminated)})`);
    const error = await assertRejects(parts);
    assert(error instanceof PoolTerminatedError, `the parts in flight reject at terminate (${String(error)})`);
  },
);

ownerTest("owner: a broadcast whose getter closes the pool is refused, and nothing is sent", async () => {
  const { owner, seen } = ownerOf(2);
  await owner.start();
  const args = {
    get x() {
      void owner.close({});
      return 1;
    },
  };
  const error = await assertRejects(owner.broadcast("echo", [args]));
  assert(error instanceof PoolClosedError, `refused: ${String(error)}`);
  assertEquals(seen.sent.filter(([, m]) => (m as { type: string }).type === "broadcast").length, 0, "nothing sent");
  await owner.terminate();
});

ownerTest(
  "owner: pickWorker() takes live workers in turn, counting each one's mail; with none live, the next in turn",
  async () => {
    const { owner, dead } = ownerOf(3);
    await owner.start();
    const memory = memoryOf(owner);
    const mail = (w: number) => Atomics.load(memory.status, w * StatusWords.count + StatusWords.mail);
    assertEquals(
      [owner.pickWorker(), owner.pickWorker(), owner.pickWorker(), owner.pickWorker()],
      [0, 1, 2, 0],
      "in turn",
    );
    assertEquals([mail(0), mail(1), mail(2)], [2, 1, 1], "each pick counted in its worker's mail word");
    dead.add(1);
    assertEquals([owner.pickWorker(), owner.pickWorker()], [2, 0], "a dead worker skipped");
    assertEquals([mail(0), mail(1), mail(2)], [3, 1, 2], "not counted for the dead one");
    dead.add(0);
    dead.add(2);
    const next = owner.pickWorker();
    assertEquals(next, 1, "none live: the next in turn");
    assertEquals(mail(1), 2, "counted there too (recovery or post gives it back)");
    assertEquals(owner.pickWorker(), 1, "and again, the turn not moved");
    await owner.terminate();
  },
);

ownerTest(
  "owner: died() while open hands the death over and tells workerdied; while stopping it tells nothing",
  async () => {
    const { owner, seen } = ownerOf(2);
    await owner.start();
    const deaths = (owner as unknown as { deaths: { died: (i: number, c: unknown, f: boolean) => void } }).deaths;
    const handed: unknown[][] = [];
    deaths.died = (i, c, f) => void handed.push([i, c, f]);
    const cause = new Error("boom");
    owner.died(1, cause, true);
    assertEquals(handed, [[1, cause, true]], "handed to the handling of deaths");
    await tick();
    const told = seen.events.filter(([t]) => t === "workerdied").map(([, d]) =>
      d as { worker: number; forced: boolean }
    );
    assertEquals(told.map((d) => [d.worker, d.forced]), [[1, true]], "workerdied told");
    void owner.close({});
    owner.died(0, cause, false);
    await tick();
    assertEquals(seen.events.filter(([t]) => t === "workerdied").length, 2, "told while closing too");
    await owner.terminate();
    owner.died(0, cause, false);
    await tick();
    assertEquals(seen.events.filter(([t]) => t === "workerdied").length, 2, "not told once stopped");
  },
);

ownerTest(
  "owner: handle() gives a handle with the pool's shape; refuses when closed, terminated or without producer slots",
  async () => {
    const { owner } = ownerOf(1, { producers: 2, maxQueue: 64 });
    await owner.start();
    const handle = owner.handle();
    assertEquals(handle.kind, HANDLE_KIND, "kind");
    assertEquals(handle.version, HANDLE_VERSION, "version");
    assertEquals(handle.tasks, TASKS, "the task names");
    assertEquals(handle.maxPending, 65, "the pool's maxPending (workers + maxQueue)");
    assert(handle.slot >= 1, `a producer slot (${handle.slot})`);
    assert(handle.buffer === memoryOf(owner).buffer, "the pool's buffer");
    assertEquals(handle.transfer.length, 1, "its port transferred");
    assert(handle.transfer[0] === handle.port, "the port is what is transferred");
    assert(!("elastic" in handle), "a fixed pool's handle says nothing of elastic");
    if (lifelineLocks() === undefined) assert(!("lifeline" in handle), "no Web Locks here: no lifeline (absent)");
    else assert(typeof handle.lifeline === "string", "a lifeline lock's name");
    handle.port.close();
    void owner.close({});
    let error: unknown;
    try {
      owner.handle();
    } catch (e) {
      error = e;
    }
    assert(error instanceof PoolClosedError && !(error instanceof PoolTerminatedError), `closing: ${String(error)}`);
    assertEquals(
      (error as Error).message,
      "Cannot make a pool handle as the pool is closing: create a new pool",
      "its message names the state",
    );
    await owner.terminate();
    try {
      owner.handle();
    } catch (e) {
      error = e;
    }
    assert(error instanceof PoolTerminatedError, `terminated: ${String(error)}`);

    const none = ownerOf(1, { producers: 0 }).owner;
    await none.start();
    try {
      none.handle();
    } catch (e) {
      error = e;
    }
    assert(error instanceof RangeError && /no producer slots/.test(error.message), `no slots: ${String(error)}`);
    await none.terminate();
  },
);

ownerTest(
  "owner: handleRequest() replies with the handle and its port transferred, or with the error's name and message",
  async () => {
    const { owner } = ownerOf(1, { producers: 1 });
    await owner.start();
    const replies: [unknown, unknown][] = [];
    owner.handleRequest(7, (message, transfer) => void replies.push([message, transfer]));
    const [message, transfer] = replies[0] as [{ type: string; id: number; handle: { port: MessagePort } }, unknown[]];
    assertEquals([message.type, message.id], ["handle-reply", 7], "a reply to request 7");
    assert(
      Array.isArray(transfer) && transfer.length === 1 && transfer[0] === message.handle.port,
      "its port transferred",
    );
    message.handle.port.close();
    owner.handleRequest(8, (message, transfer) => void replies.push([message, transfer]));
    assertEquals(
      replies[1],
      [{
        type: "handle-reply",
        id: 8,
        error: { name: "RangeError", message: (replies[1][0] as { error: { message: string } }).error.message },
      }, undefined],
      "every slot taken: the error, nothing transferred",
    );
    assert(/slot/.test((replies[1][0] as { error: { message: string } }).error.message), "naming the slots");
    await owner.terminate();
  },
);

ownerTest(
  "owner: a fixed pool whose every index has a failed start rejects what waits and later tasks, tells onError once",
  async () => {
    const { owner, seen, vacancies } = ownerOf(2);
    await owner.start();
    const task = owner.producer.run("add", [1, 2]);
    task.catch(() => {});
    const noWorkersLeft = (owner as unknown as { noWorkersLeft: (i: number, e: unknown) => void }).noWorkersLeft.bind(
      owner,
    );
    const cause = new Error("the start failed");
    vacancies.set(0, cause);
    noWorkersLeft(0, cause);
    await tick();
    assertEquals(seen.errors.length, 0, "one index still live: nothing rejected, nothing told");
    vacancies.set(1, cause);
    noWorkersLeft(1, cause);
    const error = await assertRejects(task);
    assert(error instanceof WorkerCrashedError, `the waiting task rejects with WorkerCrashedError (${String(error)})`);
    assert(/no worker left/.test((error as Error).message), `saying why: ${(error as Error).message}`);
    assert((error as Error).cause === cause, "its cause is the failed start");
    const later = await assertRejects(owner.producer.run("add", [3, 4]));
    assert(later instanceof WorkerCrashedError, `a later task rejects too (${String(later)})`);
    noWorkersLeft(1, cause);
    await tick();
    const told = seen.errors.filter(([e]) =>
      e instanceof WorkerCrashedError && /No task can run/.test((e as Error).message)
    );
    assertEquals(told.length, 1, "onError told once");
    assertEquals(told[0][1], "(no workers)", "where");
    assertEquals(
      (told[0][0] as Error).message,
      "No task can run as the pool has no worker left: every worker died or was recycled and its replacement " +
        "failed to start (see cause); close or terminate it and create a new pool",
      "what it says",
    );
    assert((told[0][0] as Error).cause === cause, "its cause: the failed start");
    await owner.terminate();
  },
);

/** What the owner's handling of deaths was asked (its methods replaced on the instance). */
function watchDeaths(owner: Owner): { died: unknown[][]; startFailed: unknown[][] } {
  const deaths = (owner as unknown as {
    deaths: { died: (...a: unknown[]) => void; startFailed: (...a: unknown[]) => void };
  }).deaths;
  const seen = { died: [] as unknown[][], startFailed: [] as unknown[][] };
  deaths.died = (...a) => void seen.died.push(a);
  deaths.startFailed = (...a) => void seen.startFailed.push(a);
  return seen;
}

/** Sets worker `index`'s slot state word (an elastic pool's). */
function setSlot(owner: Owner, index: number, state: number): void {
  Atomics.store(memoryOf(owner).sleep.words, SleepWords.state(index), state);
}

ownerTest(
  "owner: close() then terminate() while a task is pending: the pool stays terminated, close() still resolves",
  async () => {
    const { owner, seen } = ownerOf(1);
    await owner.start();
    const task = owner.producer.run("add", [1, 2]);
    task.catch(() => {});
    const closing = owner.close({ timeout: 20 });
    await tick();
    const stopped = owner.terminate();
    assert(stopped !== closing, "terminate() during close() stops now (its own promise)");
    await within(closing, 5_000, "close");
    await within(stopped, 5_000, "terminate");
    await new Promise((resolve) => setTimeout(resolve, 40));
    assertEquals(owner.lifecycle, "terminated", "never moved back to closed");
    const memory = memoryOf(owner);
    assertEquals(Atomics.load(memory.control, ControlWords.poolState), PoolStateCode.terminated, "terminated written");
    const told = seen.events.filter(([t]) => t === "terminate").map(([, d]) => d);
    assertEquals(told, [{ why: "terminate() was called", rejected: 1 }], "terminated once, by terminate()");
    const error = await assertRejects(task);
    assert(/terminate\(\) was called/.test((error as Error).message), `the task names terminate(): ${error}`);
  },
);

ownerTest(
  "owner: post() fails a directed task posted to an index whose start failed, after the submission; nothing else",
  async () => {
    const { owner, seen, vacancies } = ownerOf(2);
    await owner.start();
    const deaths = watchDeaths(owner);
    const failure = new Error("start failed");
    vacancies.set(1, failure);
    owner.post(0, { type: "directed", handle: 1 });
    owner.post(1, { type: "cancel", handle: 2 });
    await Promise.resolve();
    assertEquals(deaths.startFailed.length, 0, "a message that carries no task fails nothing");
    owner.post(1, { type: "directed", handle: 3 });
    assertEquals(
      seen.sent.map(([w, m]) => [w, (m as { handle: number }).handle]),
      [[0, 1], [1, 2], [1, 3]],
      "each sent",
    );
    assertEquals(deaths.startFailed.length, 0, "not inside the submission");
    await Promise.resolve();
    assertEquals(deaths.startFailed, [[1, failure]], "the directed task to the failed index fails as its start did");
    await owner.terminate();
  },
);

ownerTest("owner: noWorkersLeft() once the pool is closed or terminated rejects and tells nothing", async () => {
  for (const end of ["close", "terminate"] as const) {
    const { owner, seen, vacancies } = ownerOf(1);
    await owner.start();
    const cause = new Error("the start failed");
    vacancies.set(0, cause);
    if (end === "close") await owner.close({});
    else await owner.terminate();
    (owner as unknown as { noWorkersLeft: (i: number, e: unknown) => void }).noWorkersLeft(0, cause);
    await tick();
    assertEquals(seen.errors.length, 0, `${end}: onError not told`);
  }
});

ownerTest("owner: an elastic pool broadcasts to the workers it has now, each claimed by its mail count", async () => {
  const { owner, seen, dead } = ownerOf(3, { workers: { min: 1, max: 3 } });
  await owner.start();
  const memory = memoryOf(owner);
  const mail = (w: number) => Atomics.load(memory.status, w * StatusWords.count + StatusWords.mail);
  const parts = (from: number) =>
    seen.sent.slice(from).filter(([, m]) => (m as { type: string }).type === "broadcast").map(([w]) => w);
  owner.broadcast("echo", [1]).catch(() => {});
  assertEquals(parts(0), [0], "the one worker it has (slots 1 and 2 ABSENT)");
  assertEquals([mail(0), mail(1), mail(2)], [1, 0, 0], "its part counted in its mail; none left on the others");
  setSlot(owner, 2, AWAKE);
  let from = seen.sent.length;
  owner.broadcast("echo", [2]).catch(() => {});
  assertEquals(parts(from), [0, 2], "a worker grown since gets its part");
  assertEquals([mail(0), mail(1), mail(2)], [2, 0, 1], "counted");
  dead.add(0);
  from = seen.sent.length;
  owner.broadcast("echo", [3]).catch(() => {});
  assertEquals(parts(from), [2], "a dead worker is no target");
  assertEquals([mail(0), mail(1), mail(2)], [2, 0, 2], "nor counted");
  const handle = owner.handle();
  assertEquals(handle.elastic, true, "an elastic pool's handle says so");
  handle.port.close();
  await owner.terminate();
});

ownerTest(
  "owner: an elastic pool's pickWorker() skips the slots that are not live and counts the one it picks",
  async () => {
    const { owner } = ownerOf(3, { workers: { min: 1, max: 3 } });
    await owner.start();
    const memory = memoryOf(owner);
    const mail = (w: number) => Atomics.load(memory.status, w * StatusWords.count + StatusWords.mail);
    assertEquals([owner.pickWorker(), owner.pickWorker()], [0, 0], "slot 0 only");
    assertEquals([mail(0), mail(1), mail(2)], [2, 0, 0], "counted on 0 only");
    setSlot(owner, 1, AWAKE);
    assertEquals([owner.pickWorker(), owner.pickWorker()], [1, 0], "slot 1 once live, in turn");
    assertEquals([mail(0), mail(1), mail(2)], [3, 1, 0], "counted");
    await owner.terminate();
  },
);

ownerTest(
  "owner: an elastic pool's worker that dies while retiring is not replaced: its slot ABSENT, counted retired, told",
  async () => {
    const { owner, seen } = ownerOf(3, { workers: { min: 1, max: 3 } });
    await owner.start();
    const deaths = watchDeaths(owner);
    setSlot(owner, 1, RETIRING);
    const retiredBefore = owner.elasticCounts()!.retired;
    const cause = new Error("teardown threw");
    owner.died(1, cause, false);
    assertEquals(deaths.died.length, 0, "not handed to the handling of deaths (not replaced)");
    assertEquals(memoryOf(owner).sleep.words[SleepWords.state(1)] & 7, ABSENT, "its slot ABSENT");
    assertEquals(owner.elasticCounts()!.retired, retiredBefore + 1, "counted retired");
    await tick();
    const told = seen.events.filter(([t]) => t === "workerdied").map(([, d]) => (d as { worker: number }).worker);
    assertEquals(told, [1], "workerdied told (the pool is open)");
    // After its RetireStoreAbsent: not told again, still not replaced.
    owner.died(1, cause, false);
    await tick();
    assertEquals(deaths.died.length, 0, "an ABSENT slot's death is not replaced");
    assertEquals(seen.events.filter(([t]) => t === "workerdied").length, 1, "nor told");
    assertEquals(owner.elasticCounts()!.retired, retiredBefore + 2, "counted");
    // A live slot's death is a death.
    owner.died(0, cause, true);
    assertEquals(deaths.died.length, 1, "a live worker's death is handled");
    await owner.terminate();
    // While stopped: a retiring one's death is not told.
    setSlot(owner, 2, RETIRING);
    owner.died(2, cause, false);
    await tick();
    assertEquals(seen.events.filter(([t]) => t === "workerdied").length, 2, "not told once the pool stopped");
  },
);

ownerTest(
  "owner: a broadcast of an unknown task, or one that cannot be encoded, to a pool not open is refused as closed",
  async () => {
    const { owner } = ownerOf(2);
    await owner.start();
    void owner.close({});
    for (const [task, args] of [["nope", []], ["echo", [move(new ArrayBuffer(8))]]] as const) {
      const error = await assertRejects(owner.broadcast(task, [...args]));
      assert(error instanceof PoolClosedError, `${task}: PoolClosedError first (${String(error)})`);
    }
    await owner.terminate();
  },
);

ownerTest(
  "owner: an elastic pool starts min workers; one that dies retiring while the pool closes is told, its parts fail",
  async () => {
    const { owner, seen } = ownerOf(3, { workers: { min: 1, max: 3 } });
    await owner.start();
    assertEquals(seen.started, [0], "min (1) started, not max");
    watchDeaths(owner);
    setSlot(owner, 2, AWAKE);
    const parts = owner.broadcast("echo", [1]);
    parts.catch(() => {});
    const task = owner.producer.run("add", [1, 2]);
    task.catch(() => {});
    void owner.close({});
    assertEquals(owner.lifecycle, "closing", "closing (a task pending)");
    setSlot(owner, 2, RETIRING);
    owner.died(2, "a thrown string", false);
    await tick();
    const told = seen.events.filter(([t]) => t === "workerdied").map(([, d]) => (d as { worker: number }).worker);
    assertEquals(told, [2], "told while closing");
    const error = await assertRejects(parts);
    assert(error instanceof WorkerCrashedError, `its broadcast part fails with WorkerCrashedError (${String(error)})`);
    const cause = (error as Error).cause;
    assert(
      cause instanceof Error && cause.message === "a thrown string",
      `a non-Error cause wrapped: ${String(cause)}`,
    );
    await owner.terminate();
  },
);

ownerTest(
  "owner: noWorkersLeft() tells the producers in other threads, permanently, with the cause; a non-Error cause wrapped",
  async () => {
    const { owner, vacancies } = ownerOf(1, { producers: 1 });
    await owner.start();
    const notes: unknown[] = [];
    const links = (owner as unknown as { links: { noWorkers: (note: unknown) => void } }).links;
    links.noWorkers = (note) => void notes.push(note);
    const task = owner.producer.run("add", [1, 2]);
    task.catch(() => {});
    vacancies.set(0, new Error("unused"));
    (owner as unknown as { noWorkersLeft: (i: number, e: unknown) => void }).noWorkersLeft(0, "a thrown string");
    const error = await assertRejects(task);
    const cause = (error as Error).cause;
    assert(
      cause instanceof Error && cause.message === "a thrown string",
      `a non-Error cause wrapped: ${String(cause)}`,
    );
    assertEquals(notes.length, 1, "the links told once");
    const note = notes[0] as { type: string; what: string; worker: number; cause: unknown; permanent: boolean };
    assertEquals(note.type, "no-workers", "its type");
    assert(/no worker left/.test(note.what), `what: ${note.what}`);
    assertEquals(note.worker, 0, "the worker");
    assertEquals(note.cause, { name: "Error", message: "a thrown string" }, "the cause, as plain data");
    assertEquals(note.permanent, true, "a fixed pool: permanent");
    await owner.terminate();
  },
);

ownerTest(
  "owner: an elastic pool left with no worker fails a directed task posted to an ABSENT index, after the submission",
  async () => {
    const { owner } = ownerOf(3, { workers: { min: 1, max: 3 } });
    await owner.start();
    const calls: unknown[][] = [];
    const internals = owner as unknown as {
      lastStartFailure: Error | undefined;
      noWorkerLive: (i: number, e: unknown) => boolean;
    };
    internals.noWorkerLive = (...a: unknown[]) => (calls.push(a), true);
    const cause = new Error("every start failed");
    owner.post(1, { type: "directed", handle: 1 });
    await Promise.resolve();
    assertEquals(calls.length, 0, "no start failed yet: nothing");
    internals.lastStartFailure = cause;
    owner.post(0, { type: "directed", handle: 2 });
    owner.post(1, { type: "cancel", handle: 3 });
    await Promise.resolve();
    assertEquals(calls.length, 0, "a directed task to a live index, or a message with no task: nothing");
    owner.post(1, { type: "directed", handle: 4 });
    assertEquals(calls.length, 0, "not inside the submission");
    await Promise.resolve();
    assertEquals(calls, [[1, cause]], "only the directed task to the ABSENT index, with the last start's failure");
    await owner.terminate();
  },
);

ownerTest(
  "owner: terminate() during close({ timeout }) while producers in other threads stay busy: the timeout terminates nothing again",
  async () => {
    const { owner, seen } = ownerOf(1, { producers: 1 });
    await owner.start();
    // A producer in another thread with tasks in flight: the links never quiet.
    (owner as unknown as { links: { quiet: () => Promise<void> } }).links.quiet = () => new Promise(() => {});
    const closing = owner.close({ timeout: 20 });
    await owner.terminate();
    await within(closing, 5_000, "close");
    assertEquals(owner.lifecycle, "terminated", "terminated");
    assertEquals(seen.stops, [undefined, 2000], "stopped by terminate(), then close() ends as usual");
    await tick();
    assertEquals(
      seen.events.filter(([t]) => t === "terminate").length,
      1,
      "terminate told once: the timeout found it done",
    );
  },
);

ownerTest("owner: the note for other threads names a failed load's URL, and no URL for other causes", async () => {
  for (const cause of [new ModuleLoadError("file:///x/tasks.ts", "it threw"), new Error("other")]) {
    const { owner, vacancies } = ownerOf(1, { producers: 1 });
    await owner.start();
    const notes: { cause: Record<string, unknown> }[] = [];
    const links = (owner as unknown as { links: { noWorkers: (note: { cause: Record<string, unknown> }) => void } })
      .links;
    links.noWorkers = (note) => void notes.push(note);
    vacancies.set(0, cause);
    (owner as unknown as { noWorkersLeft: (i: number, e: unknown) => void }).noWorkersLeft(0, cause);
    assertEquals(notes.length, 1, `${cause.name}: told`);
    assertEquals(notes[0].cause.name, cause.name, "its name");
    assertEquals(notes[0].cause.message, cause.message, "its message");
    if (cause instanceof ModuleLoadError) assertEquals(notes[0].cause.url, "file:///x/tasks.ts", "the URL");
    else assert(!("url" in notes[0].cause), "no URL");
    await owner.terminate();
  }
});

/**
 * Cuts `owner`'s next submission short inside the pool's own steps (as a stack overflow at the edge of the
 * stack would: the submitter's enqueue throws once, after the task was counted): the pool's next call must
 * complete it (producer/admission.ts `repairIfCut`).
 */
async function cutOne(owner: Owner): Promise<void> {
  const submitter = (owner.producer as unknown as { submitter: { enqueue: (...a: unknown[]) => void } }).submitter;
  const enqueue = submitter.enqueue;
  submitter.enqueue = () => {
    submitter.enqueue = enqueue;
    throw new RangeError("Maximum call stack size exceeded (stand-in)");
  };
  await assertRejects(owner.producer.run("add", [1, 2]));
  assertEquals(owner.producer.ledger.pending, 1, "the cut task still counted (its repair is the next call's)");
}

ownerTest("owner: broadcast(), close() and terminate() first complete a submission cut short", async () => {
  {
    const { owner } = ownerOf(3);
    await owner.start();
    await cutOne(owner);
    owner.broadcast("echo", [1]).catch(() => {});
    assertEquals(owner.producer.ledger.pending, 3, "broadcast: the cut task settled, the 3 parts pending");
    await owner.terminate();
  }
  {
    const { owner } = ownerOf(1);
    await owner.start();
    await cutOne(owner);
    await within(owner.close({}), 5_000, "close: the cut task settled, so the pool drains");
  }
  {
    const { owner, seen } = ownerOf(1);
    await owner.start();
    await cutOne(owner);
    await owner.terminate();
    await tick();
    const told = seen.events.filter(([t]) => t === "terminate").map(([, d]) => d);
    assertEquals(told, [{ why: "terminate() was called", rejected: 0 }], "terminate: the cut task was not pending");
  }
});

ownerTest(
  "owner: close({ timeout }) that settles in time clears its timer (a pending one would hold the process)",
  async () => {
    const { owner } = ownerOf(1);
    await owner.start();
    const g = globalThis as unknown as {
      setTimeout: (f: () => void, ms: number) => unknown;
      clearTimeout: (id: unknown) => void;
    };
    const { setTimeout: set, clearTimeout: clear } = g;
    const made: unknown[] = [];
    const cleared: unknown[] = [];
    g.setTimeout = (f, ms) => {
      const id = set(f, ms);
      if (ms === 60_000) made.push(id);
      return id;
    };
    g.clearTimeout = (id) => {
      cleared.push(id);
      clear(id);
    };
    try {
      await within(owner.close({ timeout: 60_000 }), 5_000, "close");
    } finally {
      g.setTimeout = set;
      g.clearTimeout = clear;
    }
    assertEquals(made.length, 1, "one timer for the timeout");
    assert(cleared.includes(made[0]), "and it was cleared once the pool drained");
  },
);

ownerTest(
  "owner: a broadcast and the pool's stop wake every worker (the wake-all bump of the sleep counters)",
  async () => {
    for (const how of ["broadcast", "close", "terminate"] as const) {
      const { owner } = ownerOf(2);
      await owner.start();
      const words = memoryOf(owner).sleep.words;
      const before = Atomics.load(words, SleepWords.counters);
      if (how === "broadcast") owner.broadcast("echo", [1]).catch(() => {});
      else if (how === "close") await within(owner.close({}), 5_000, "close");
      else await owner.terminate();
      assert(Atomics.load(words, SleepWords.counters) !== before, `${how}: the sleep counters moved (wake all)`);
      await owner.terminate();
    }
  },
);

ownerTest("owner: an elastic pool's peak counts the workers it started with, after one of them is gone", async () => {
  const { owner } = ownerOf(3, { workers: { min: 2, max: 3 } });
  await owner.start();
  assertEquals(owner.elasticCounts()!.current, 2, "min started");
  // Worker 1 died and its replacement failed: its slot given back (ABSENT).
  setSlot(owner, 1, ABSENT);
  const counts = owner.elasticCounts()!;
  assertEquals([counts.current, counts.peak], [1, 2], "one now; the peak is the two it started with");
  await owner.terminate();
});

ownerTest("owner: the pool's stop closes the links of its producers in other threads", async () => {
  for (const how of ["close", "terminate"] as const) {
    const { owner } = ownerOf(1, { producers: 2 });
    await owner.start();
    const handle = owner.handle();
    const links = (owner as unknown as { links: { bySlot: Map<number, unknown> } }).links;
    assertEquals(links.bySlot.size, 1, `${how}: one link open`);
    if (how === "close") await within(owner.close({}), 5_000, "close");
    else await owner.terminate();
    assertEquals(links.bySlot.size, 0, `${how}: every link closed`);
    handle.port.close();
  }
});

ownerTest("owner: a forced kill waits for its worker to leave the pool's steps; the pool's stop drops it", async () => {
  for (const stop of [false, true]) {
    const { owner, seen } = ownerOf(1);
    await owner.start();
    // Task 5 runs on worker 0, which is inside one of the pool's steps (its guard up).
    let looks = 0;
    (owner.producer.shared.table as unknown as { runsOn: () => boolean }).runsOn = () => (looks++, true);
    const status = memoryOf(owner).status;
    Atomics.store(status, StatusWords.guard, 1);
    owner.kill(0, 5, new Error("forced"));
    await tick();
    assertEquals(seen.kills.length, 0, `${stop}: not killed inside a step`);
    assert(looks > 1, `${stop}: the killer keeps looking while the guard is up (${looks})`);
    if (stop) {
      // A thread terminated inside a step leaves its guard up: the killer must not poll it for ever.
      await owner.terminate();
      const after = looks;
      await new Promise((resolve) => setTimeout(resolve, 30));
      assertEquals(looks, after, "the pool stopped: the kill was dropped, nothing polls");
    }
    Atomics.store(status, StatusWords.guard, 0);
    await new Promise((resolve) => setTimeout(resolve, 30));
    if (stop) assertEquals(seen.kills.length, 0, "and nothing is killed later");
    else assertEquals(seen.kills, [[0, "forced"]], "the kill lands once the worker left the step");
    await owner.terminate();
  }
});

ownerTest("owner: a waitForRoom() pending when the pool stops resolves (the room is given up)", async () => {
  for (const how of ["close", "terminate"] as const) {
    const { owner } = ownerOf(1, { maxQueue: 1 });
    await owner.start();
    const tasks = [owner.producer.run("add", [1, 2]), owner.producer.run("add", [3, 4])];
    for (const t of tasks) t.catch(() => {});
    let resolved = false;
    const waiting = owner.producer.waitForRoom().then(() => (resolved = true));
    await tick();
    assert(!resolved, `${how}: the queue is full (2 of 2): waitForRoom() waits`);
    if (how === "close") await within(owner.close({ timeout: 10 }), 5_000, "close");
    else await owner.terminate();
    await within(waiting, 5_000, `${how}: waitForRoom()`);
  }
});

ownerTest(
  "owner: the pool's stop gives back a backlog grown by a burst and uncounts its producer's record wait",
  async () => {
    const { owner } = ownerOf(1, { taskCapacity: 16 });
    await owner.start();
    const backlog = (owner.producer as unknown as { submitter: { backlog: { bytes: Uint8Array } } }).submitter.backlog;
    const small = backlog.bytes.length;
    const big = "x".repeat(4096);
    for (let i = 0; i < 600; i++) owner.producer.run("echo", [big]).catch(() => {});
    assert(backlog.bytes.length > 1 << 20, `the burst grew its buffer past what it keeps (${backlog.bytes.length})`);
    const control = memoryOf(owner).control;
    await tick();
    assertEquals(Atomics.load(control, ControlWords.recordWaiters), 1, "its producer counted waiting for a record");
    await owner.terminate();
    assertEquals(backlog.bytes.length, small, "given back at the stop");
    assertEquals(Atomics.load(control, ControlWords.recordWaiters), 0, "it stopped reading: no longer counted waiting");
  },
);

/** The owner's private parts, as these tests reach them. */
interface Internals {
  workforce: { setup: (index: number) => Record<string, unknown>; options: Record<string, unknown> };
  deaths: {
    crashes: number;
    forcedKills: number;
    deathsInSteps: number;
    replaced: (index: number) => void;
    replaceFailed: (index: number, error: unknown) => void;
    startFailed: (index: number, error: unknown) => void;
  };
  recycler: {
    count: number;
    parts: {
      state: () => string;
      recycled: (index: number, reason: "tasks" | "heap") => void;
      failed: (index: number, error: unknown) => void;
    };
  };
  producerDeaths: { inSteps: number; count: number; parts: { running: () => boolean } };
  elastic: {
    slots: { size: number };
    growth: {
      due: () => void;
      retired: number;
      parts: { running: () => boolean; start: (i: number) => Promise<void>; failed: (i: number, e: unknown) => void };
    };
  };
  links: {
    acts: {
      post: (w: number, m: unknown) => void;
      share: (id: number, sab: SharedArrayBuffer) => void;
      kill: (w: number, h: number, c: Error) => void;
      buffers: () => [number, SharedArrayBuffer][];
      report: (e: unknown, where: string) => void;
      grow: () => void;
    };
  };
  noWorkersLeft: (index: number, error: unknown) => void;
  noWorkerLive: (index: number, error: unknown) => boolean;
  emptyTold: boolean;
  lastStartFailure: Error | undefined;
}

/** The owner's private parts. */
const internals = (owner: Owner) => owner as unknown as Internals;

ownerTest(
  "owner: deathCounts sums the deaths of each kind, the steps' deaths of workers and producers together",
  () => {
    const { owner } = ownerOf(1);
    const o = internals(owner);
    Object.assign(o.deaths, { crashes: 2, forcedKills: 3, deathsInSteps: 4 });
    o.producerDeaths.inSteps = 5;
    o.producerDeaths.count = 6;
    o.recycler.count = 7;
    assertEquals(
      owner.deathCounts,
      { workersRecycled: 7, workerCrashes: 2, forcedKills: 3, deathsInSteps: 9, producerDeaths: 6 },
      "each count",
    );
  },
);

ownerTest("owner: a worker's failed teardown goes to onError as a WorkerTeardownError saying why", async () => {
  const { owner, seen } = ownerOf(1);
  const boom = new Error("boom");
  owner.teardownFailed(0, true, undefined);
  owner.teardownFailed(1, false, boom);
  owner.teardownFailed(2, false, "a string");
  await tick();
  const errors = seen.errors.map(([e, where]) => [(e as Error).message, (e as Error).cause, where]);
  assertEquals(errors.length, 3, "each told");
  for (const [, , where] of errors) assertEquals(where, "(worker teardown)", "where");
  assert(/did not finish in time \(see docs\/elastic\.md\)/.test(errors[0][0] as string), `timed out: ${errors[0][0]}`);
  assertEquals(errors[0][1], undefined, "a timeout has no cause");
  assert(/it threw: boom/.test(errors[1][0] as string), `threw: ${errors[1][0]}`);
  assert(errors[1][1] === boom, "its cause");
  assert(/it threw: a string/.test(errors[2][0] as string), `a thrown string: ${errors[2][0]}`);
  for (const [e] of seen.errors) assert(e instanceof WorkerTeardownError, `a WorkerTeardownError (${e})`);
});

ownerTest("owner: each worker's set-up carries the pool's options; an elastic pool's its bounds", () => {
  const workerData = { answer: 42 };
  const { owner } = ownerOf(2, { asyncTasksPerWorker: 3, workerData, name: "named", loadTimeout: 1234 });
  const setup = internals(owner).workforce.setup(1);
  const memory = memoryOf(owner);
  assertEquals(setup.index, 1, "its index");
  assert(setup.buffer === memory.buffer && setup.layout === memory.layout, "the pool's buffer and layout");
  assertEquals(setup.moduleUrl, "file:///stand-in/tasks.ts", "the module");
  assertEquals(setup.asyncTasksPerWorker, 3, "asyncTasksPerWorker");
  assert(setup.workerData === workerData, "workerData");
  assertEquals(setup.metrics, undefined, "no metrics");
  assert(!("elastic" in setup), "a fixed pool's worker has no elastic part");
  const options = internals(owner).workforce.options;
  assertEquals([options.name, options.loadTimeout], ["named", 1234], "the workforce's name and load timeout");
  assert(typeof options.workerUrl === "string" && options.workerUrl !== "", "a worker URL");
  const elastic = internals(ownerOf(3, { workers: { min: 1, max: 3 }, idleTimeout: 500, metrics: true }).owner);
  const set = elastic.workforce.setup(2);
  assertEquals(set.elastic, { min: 1, idleTimeout: 500 }, "an elastic worker's bounds");
  const metrics = set.metrics as { since: number; histograms: unknown };
  assert(typeof metrics.since === "number" && metrics.histograms !== undefined, "with metrics: since and histograms");
});

ownerTest(
  "owner: a replacement that starts is online (a replacement) and staffs the pool; one that fails ends a fixed pool",
  async () => {
    const { owner, seen } = ownerOf(2);
    await owner.start();
    const o = internals(owner);
    o.emptyTold = true;
    o.lastStartFailure = new Error("x");
    o.deaths.replaced(1);
    assertEquals([o.emptyTold, o.lastStartFailure], [false, undefined], "staffed again");
    await tick();
    const online = seen.events.filter(([t]) => t === "workeronline").map(([, d]) => d);
    assertEquals(online[online.length - 1], { worker: 1, replacement: true }, "online, a replacement");
    assertEquals(seen.events.filter(([t]) => t === "workerreplaced").map(([, d]) => d), [{ worker: 1 }], "replaced");
    const calls: unknown[][] = [];
    o.noWorkersLeft = (...a) => void calls.push(a);
    const error = new Error("replacement failed");
    o.deaths.replaceFailed(0, error);
    assertEquals(calls, [[0, error]], "a fixed pool looks whether any worker is left");
    await owner.terminate();
  },
);

ownerTest(
  "owner: an elastic pool's failed replacement gives its slot back; growth looks unless no worker is left",
  async () => {
    const { owner } = ownerOf(3, { workers: { min: 2, max: 3 } });
    await owner.start();
    const o = internals(owner);
    const dues: number[] = [];
    o.elastic.growth.due = () => void dues.push(1);
    let none = false;
    const lives: unknown[][] = [];
    o.noWorkerLive = (...a) => (lives.push(a), none);
    const size = o.elastic.slots.size;
    const error = new Error("replacement failed");
    o.deaths.replaceFailed(1, error);
    assertEquals(o.elastic.slots.size, size - 1, "its size given back");
    assertEquals(memoryOf(owner).sleep.words[SleepWords.state(1)] & 7, ABSENT, "its slot ABSENT");
    assertEquals(lives, [[1, error]], "looks whether any worker is live");
    assertEquals(dues.length, 1, "a worker is: growth looks");
    none = true;
    o.deaths.replaceFailed(0, error);
    assertEquals(dues.length, 1, "none is: what waits was rejected, growth waits for a submission");
    await owner.terminate();
  },
);

ownerTest(
  "owner: growth runs while the pool is open or closing; its start is online and staffs; its failure fails and tells",
  async () => {
    const { owner, seen } = ownerOf(3, { workers: { min: 1, max: 3 } });
    await owner.start();
    const o = internals(owner);
    const parts = o.elastic.growth.parts;
    assertEquals(parts.running(), true, "open");
    o.emptyTold = true;
    o.lastStartFailure = new Error("x");
    const before = seen.started.length;
    await parts.start(2);
    assertEquals(seen.started.slice(before), [2], "the workforce started it");
    assertEquals([o.emptyTold, o.lastStartFailure], [false, undefined], "staffed again");
    await tick();
    const online = seen.events.filter(([t]) => t === "workeronline").map(([, d]) => d);
    assertEquals(online[online.length - 1], { worker: 2, replacement: false }, "online, not a replacement");
    const failed: unknown[][] = [];
    o.deaths.startFailed = (...a) => void failed.push(a);
    const lives: unknown[][] = [];
    o.noWorkerLive = (...a) => (lives.push(a), false);
    const error = new Error("growth start failed");
    parts.failed(1, error);
    assertEquals(failed, [[1, error]], "its directed tasks and parts fail");
    assertEquals(lives, [[1, error]], "looks whether any worker is live");
    await tick();
    assert(seen.errors.some(([e, where]) => e === error && where === "starting a worker"), "onError told where");
    const task = owner.producer.run("add", [1, 2]);
    task.catch(() => {});
    void owner.close({});
    assertEquals(parts.running(), true, "closing");
    await owner.terminate();
    assertEquals(parts.running(), false, "terminated");
    const closed = ownerOf(3, { workers: { min: 1, max: 3 } }).owner;
    await closed.start();
    await closed.close({});
    assertEquals(internals(closed).elastic.growth.parts.running(), false, "closed");
  },
);

ownerTest(
  "owner: a recycled worker is online and staffs the pool; a failed recycle fails its tasks and ends a fixed pool",
  async () => {
    const { owner, seen } = ownerOf(2);
    await owner.start();
    const o = internals(owner);
    const parts = o.recycler.parts;
    assertEquals(parts.state(), "open", "the recycler reads the state");
    o.emptyTold = true;
    parts.recycled(1, "heap");
    assertEquals(o.emptyTold, false, "staffed");
    await tick();
    assertEquals(
      seen.events.filter(([t]) => t === "workeronline").pop()?.[1],
      { worker: 1, replacement: true },
      "online",
    );
    const failed: unknown[][] = [];
    o.deaths.startFailed = (...a) => void failed.push(a);
    const left: unknown[][] = [];
    o.noWorkersLeft = (...a) => void left.push(a);
    const error = new Error("recycle failed");
    parts.failed(0, error);
    assertEquals(failed, [[0, error]], "its held tasks fail");
    assertEquals(left, [[0, error]], "a fixed pool looks whether any worker is left");
    await tick();
    assert(seen.errors.some(([e, where]) => e === error && where === "(worker recycle)"), "onError told where");
    await owner.terminate();
  },
);

ownerTest(
  "owner: an elastic pool's failed recycle gives the slot back; what waits rejects only if it was the last worker",
  async () => {
    const { owner } = ownerOf(3, { workers: { min: 2, max: 3 } });
    await owner.start();
    const o = internals(owner);
    o.deaths.startFailed = () => {};
    const dues: number[] = [];
    o.elastic.growth.due = () => void dues.push(1);
    let none = false;
    const lives: unknown[][] = [];
    o.noWorkerLive = (...a) => (lives.push(a), none);
    const error = new Error("recycle failed");
    const size = o.elastic.slots.size;
    o.recycler.parts.failed(0, error);
    // (Before: with another worker live the slot stayed AWAKE, with no thread in it, for ever.)
    assertEquals(
      memoryOf(owner).sleep.words[SleepWords.state(0)] & 7,
      ABSENT,
      "another worker is live: slot given back",
    );
    assertEquals(o.elastic.slots.size, size - 1, "and its size");
    assertEquals(lives, [[0, error]], "looks whether any worker is live");
    assertEquals(dues.length, 1, "a worker is: growth looks");
    none = true;
    o.recycler.parts.failed(1, error);
    assertEquals(memoryOf(owner).sleep.words[SleepWords.state(1)] & 7, ABSENT, "the last worker: its slot given back");
    assertEquals(o.elastic.slots.size, size - 2, "and its size");
    assertEquals(lives, [[0, error], [1, error]], "what waits is rejected");
    assertEquals(dues.length, 1, "none is: growth waits for a submission");
    await owner.terminate();
  },
);

ownerTest(
  "owner: noWorkerLive() rejects what waits only in an elastic pool that runs with every slot ABSENT; onError told once",
  async () => {
    const fixed = ownerOf(1).owner;
    await fixed.start();
    assertEquals(internals(fixed).noWorkerLive(0, new Error("x")), false, "a fixed pool: never");
    await fixed.terminate();

    const { owner, seen } = ownerOf(2, { workers: { min: 1, max: 2 }, producers: 1 });
    await owner.start();
    const o = internals(owner);
    const notes: { permanent: boolean; what: string }[] = [];
    (o.links as unknown as { noWorkers: (n: { permanent: boolean; what: string }) => void }).noWorkers = (n) =>
      void notes.push(n);
    const task = owner.producer.run("add", [1, 2]);
    task.catch(() => {});
    assertEquals(o.noWorkerLive(0, new Error("x")), false, "slot 0 live: no");
    setSlot(owner, 0, ABSENT);
    assertEquals(o.noWorkerLive(0, "a thrown string"), true, "every slot ABSENT: yes");
    const error = await assertRejects(task);
    assert(error instanceof WorkerCrashedError && /every start of a worker failed/.test(error.message), `${error}`);
    assert((error as Error).cause instanceof Error, "its cause wrapped as an Error");
    assertEquals(o.lastStartFailure?.message, "a thrown string", "kept for a directed task posted later");
    assertEquals(notes.map((n) => n.permanent), [false], "the links told, not for good");
    assert(/a later submission starts one again/.test(notes[0].what), `what: ${notes[0].what}`);
    assertEquals(o.noWorkerLive(1, new Error("again")), true, "again");
    await tick();
    const told = seen.errors.filter(([e]) => /No task can run/.test((e as Error).message));
    assertEquals(told.length, 1, "onError told once");
    assertEquals(told[0][1], "(no workers)", "where");
    assertEquals(
      (told[0][0] as Error).message,
      "No task can run as the pool has no worker left: every start of a worker failed (see cause); a later " +
        "submission starts one again",
      "what it says",
    );
    assert(((told[0][0] as Error).cause as Error).message === "a thrown string", "its cause: the failed start");
    const later = owner.producer.run("add", [3, 4]);
    later.catch(() => {});
    await tick();
    assert(owner.producer.ledger.pending >= 1, "a later submission is admitted (it grows the pool again)");
    void owner.close({});
    setSlot(owner, 0, ABSENT);
    assertEquals(o.noWorkerLive(0, new Error("x")), true, "closing: still");
    await owner.terminate();
    assertEquals(o.noWorkerLive(0, new Error("x")), false, "terminated: no");
  },
);

ownerTest(
  "owner: the owner's small forwards: retired, grow, elasticCounts, buffers, payloads, kills, recycles",
  async () => {
    const { owner, seen } = ownerOf(3, { workers: { min: 1, max: 3 }, producers: 1 });
    await owner.start();
    const o = internals(owner);
    const dues: number[] = [];
    o.elastic.growth.due = () => void dues.push(1);
    owner.retired(2);
    assertEquals([o.elastic.growth.retired, dues.length], [1, 1], "retired: counted, growth looks");
    owner.grow();
    assertEquals(dues.length, 2, "grow: growth looks");
    memoryOf(owner).sleep.onNobodyWoken!();
    assertEquals(dues.length, 3, "nobody woken: growth looks");
    o.links.acts.grow();
    assertEquals(dues.length, 4, "a link's producer found nobody: growth looks");
    const counts = owner.elasticCounts()!;
    assertEquals(
      [counts.min, counts.max, counts.current, counts.peak, counts.started, counts.retired],
      [1, 3, 1, 1, 0, 1],
      "elastic counts",
    );
    const sab = new SharedArrayBuffer(8);
    const producerGot: unknown[][] = [];
    const linksGot: unknown[][] = [];
    const producer = owner.producer as unknown as {
      bufferArrived: (...a: unknown[]) => void;
      payloadArrived: (...a: unknown[]) => void;
    };
    producer.bufferArrived = (...a) => void producerGot.push(["buffer", ...a]);
    producer.payloadArrived = (...a) => void producerGot.push(["payload", ...a]);
    const links = o.links as unknown as {
      bufferArrived: (...a: unknown[]) => void;
      payloadArrived: (...a: unknown[]) => boolean;
    };
    let mine = false;
    links.bufferArrived = (...a) => void linksGot.push(["buffer", ...a]);
    links.payloadArrived = (...a) => (linksGot.push(["payload", ...a]), mine);
    owner.buffer(4, sab);
    assertEquals([producerGot.length, linksGot.length], [1, 1], "a buffer: to the producer and the links");
    assert(producerGot[0][2] === sab && linksGot[0][2] === sab && producerGot[0][1] === 4, "with its id and buffer");
    const bytes = new Uint8Array([1]);
    owner.payload(9, bytes, undefined);
    assertEquals(producerGot.length, 2, "a payload not a link's: the producer's");
    assert(producerGot[1][1] === 9 && producerGot[1][2] === bytes, "with its handle and bytes");
    mine = true;
    owner.payload(10, bytes, undefined);
    assertEquals(producerGot.length, 2, "a link's payload: not the producer's");
    assertEquals(linksGot.length, 3, "asked the links each time");
    const shared: unknown[] = [];
    (o.workforce as unknown as { share: (...a: unknown[]) => void }).share = (...a) => void shared.push(a);
    owner.shareBuffer(5, sab);
    o.links.acts.share(6, sab);
    assertEquals(shared.map((a) => (a as unknown[])[0]), [5, 6], "shared with the workers, the owner's and a link's");
    assert(o.links.acts.buffers().some(([id, b]) => id === 6 && b === sab), "a link's buffer registered");
    o.links.acts.post(1, { type: "x" });
    assertEquals(seen.sent.pop(), [1, { type: "x" }], "a link's post goes to the worker");
    o.links.acts.report(new Error("r"), "(link)");
    await tick();
    assert(seen.errors.some(([e, w]) => (e as Error).message === "r" && w === "(link)"), "a link's report: onError");
    const ready: unknown[][] = [];
    (o.recycler as unknown as { ready: (...a: unknown[]) => void }).ready = (...a) => void ready.push(a);
    owner.recycleReady(2, "tasks");
    assertEquals(ready, [[2, "tasks"]], "a recycle's readiness: to the recycler");
    assertEquals(owner.state(), "open", "state()");
    assertEquals(owner.lifecycle, "open", "lifecycle");
    assertEquals(owner.producerCounts().length, 0, "no producer slot held yet");
    const handle = owner.handle();
    assertEquals(owner.producerCounts().length, 1, "a count a producer slot held");
    handle.port.close();
    assertEquals(o.producerDeaths.parts.running(), true, "producer deaths: running while open");
    await owner.terminate();
    assertEquals(o.producerDeaths.parts.running(), false, "not once terminated");
    assertEquals(owner.state(), "terminated", "state()");
    const fixed = ownerOf(1).owner;
    assertEquals(fixed.elasticCounts(), undefined, "a fixed pool has no elastic counts");
    fixed.retired(0);
    fixed.grow();
    await fixed.start();
    fixed.producer.run("add", [1, 2]).catch(() => {});
    const closing = fixed.close({ timeout: 10 });
    assertEquals(internals(fixed).producerDeaths.parts.running(), true, "producer deaths: running while closing");
    await within(closing, 5_000, "close");
    const closed = ownerOf(1).owner;
    await closed.start();
    await within(closed.close({}), 5_000, "close");
    assertEquals(closed.lifecycle, "closed", "closed");
    assertEquals(internals(closed).producerDeaths.parts.running(), false, "not once closed");
  },
);

ownerTest(
  "owner: a link's kill request and the owner's kill reach the killer; a broadcast part to a dead worker fails",
  async () => {
    const { owner, dead } = ownerOf(2);
    await owner.start();
    const o = internals(owner);
    const requests: unknown[][] = [];
    (o as unknown as { killer: { request: (...a: unknown[]) => void } }).killer.request = (...a) =>
      void requests.push(a);
    const cause = new Error("c");
    owner.kill(1, 7, cause);
    o.links.acts.kill(0, 8, cause);
    assertEquals(requests, [[1, 7, cause], [0, 8, cause]], "each request");
    dead.add(1);
    const error = await assertRejects(owner.broadcast("echo", [1]));
    assert(
      error instanceof WorkerCrashedError && /being replaced/.test(error.message),
      `the dead one's part: ${error}`,
    );
    await owner.terminate();
  },
);

ownerTest(
  "owner: an elastic pool grows for queued work that nobody asleep can take, not while a worker sleeps",
  async () => {
    for (const asleep of [1, 0]) {
      const { owner, seen } = ownerOf(3, { workers: { min: 1, max: 3 } });
      await owner.start();
      const words = memoryOf(owner).sleep.words;
      // Worker 0 counted asleep (or not) in the sleep counters.
      Atomics.store(words, SleepWords.counters, asleep);
      owner.producer.run("add", [1, 2]).catch(() => {});
      internals(owner).elastic.growth.due();
      await new Promise((resolve) => setTimeout(resolve, 50));
      if (asleep) {
        assertEquals(seen.started, [0], "a worker asleep: it is woken for the work, no start");
      } else {
        const grown = seen.started.slice(1);
        assert(grown.length > 0 && !grown.includes(0), `none asleep: grown (${seen.started})`);
      }
      Atomics.store(words, SleepWords.counters, 0);
      await owner.terminate();
    }
  },
);

ownerTest(
  "owner: a death once the pool is closed or terminated is neither counted, repaired nor replaced",
  async () => {
    for (const end of ["close", "terminate"] as const) {
      const { owner, seen } = ownerOf(2);
      await owner.start();
      if (end === "close") await within(owner.close({}), 5_000, "close");
      else await owner.terminate();
      owner.died(0, new Error("late"), false);
      owner.died(1, new Error("late, forced"), true);
      await tick();
      assertEquals([owner.deathCounts.workerCrashes, owner.deathCounts.forcedKills], [0, 0], `${end}: not counted`);
      assertEquals(seen.started.length, 2, `${end}: not replaced`);
      assertEquals(seen.errors.length, 0, `${end}: nothing reported`);
    }
  },
);

ownerTest(
  "owner: a handle carries its link's lifeline lock name where the runtime has Web Locks (browsers)",
  async () => {
    const { owner } = ownerOf(1, { producers: 1 });
    await owner.start();
    const links = internals(owner).links as unknown as {
      open: () => { port: MessagePort; slot: number; lifeline: string | undefined };
    };
    const open = links.open.bind(links);
    links.open = () => ({ ...open(), lifeline: "filch.producer.test" });
    const handle = owner.handle();
    assertEquals(handle.lifeline, "filch.producer.test", "the link's lifeline, for the producer to hold");
    handle.port.close();
    await owner.terminate();
  },
);
