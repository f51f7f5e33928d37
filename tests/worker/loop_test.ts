/**
 * The worker loop and its assembly (`lib/worker/loop.ts`), on one thread: a `WorkerLoop` built in the test
 * thread over a real pool memory (no worker thread, no task module), its messages recorded. What a worker
 * leaves in shared memory when built (its marks cleared, an elastic slot AWAKE), a loop that finds the pool
 * stopping, a broadcast part run while async work holds the event loop (the loop then sleeps with
 * `Atomics.waitAsync`, so this thread is never blocked), and an elastic worker's retirement: its teardown,
 * its slot ABSENT, its "retired" message. These pin values StrykerJS changed without the pool suites noticing
 * (issue 47, "Mutants nobody here chose"); the pool suites run the same loop in real worker threads.
 */
import { decode, Encoder } from "../../lib/codec/codec.ts";
import { atomicsBinding, installSharedMemory } from "../../lib/protocol/atomics.ts";
import { ControlWords, MARK_WORDS, NOTE_WORDS, NoteWords, SleepWords, StatusWords } from "../../lib/protocol/layout.ts";
import { epochMs, histogramBytes } from "../../lib/metrics.ts";
import { Level } from "../../lib/protocol/levels.ts";
import { PoolMemory } from "../../lib/protocol/memory.ts";
import { claimSlot, originOf } from "../../lib/protocol/producers.ts";
import { ABSENT, AWAKE, SLEEPING, STARTING } from "../../lib/protocol/sleep.ts";
import { Slots } from "../../lib/protocol/slots.ts";
import { TaskFlags } from "../../lib/record/fields.ts";
import { Origin, TaskState, TaskTable } from "../../lib/record/task.ts";
import { eventLoopHolds, holdEventLoop, releaseEventLoop } from "../../lib/runtime/holds.ts";
import type { TaskFunction } from "../../lib/worker/functions.ts";
import { setRetireTeardown, WorkerLoop, type WorkerSetup } from "../../lib/worker/loop.ts";
import { DOZE_MS, DOZE_ROUNDS } from "../../lib/worker/search.ts";
import { assert, assertEquals, test as baseTest, within } from "../_test.ts";

/**
 * Every test of this file: the loop runs in the test thread, so a wait with no timeout (a synchronous sleep
 * nobody here would end) must never happen; if it does (a bug, or a mutant) it throws at once instead of
 * blocking the thread, where no timeout of the test could fire.
 */
function test(name: string, body: () => void | Promise<void>): void {
  baseTest(name, async () => {
    // A loop finishes only once its thread's event-loop holds are undone (loop.ts `pendingWork`): a hold
    // another test file left (Bun runs every file in one context) would keep each loop here running.
    assertEquals(eventLoopHolds(), 0, "no event-loop hold left by an earlier test (a request or ledger never settled)");
    const restore = installSharedMemory({
      ...atomicsBinding,
      wait: (view, index, expected, timeout) => {
        if (timeout === undefined) throw new Error("the loop slept synchronously: it would block the test thread");
        return atomicsBinding.wait(view, index, expected, timeout);
      },
    });
    try {
      await body();
    } finally {
      restore();
    }
  });
}

/** A message the loop posted. */
interface Posted {
  type: string;
  [key: string]: unknown;
}

/** A pool memory of `workers` workers and the setup of worker `index` (an elastic pool's if `elastic`). */
function newWorld(
  options: {
    workers?: number;
    index?: number;
    elastic?: { min: number; idleTimeout: number };
    recycle?: { afterTasks: number; heapMB: number };
    buffers?: [number, SharedArrayBuffer][];
    producers?: number;
    metrics?: boolean;
    asyncTasksPerWorker?: number;
  } = {},
) {
  const workers = options.workers ?? 2;
  const index = options.index ?? 1;
  const memory = PoolMemory.create({
    workers,
    dequeCapacity: 16,
    taskCapacity: 256,
    inlineBytes: 64,
    blockBytes: 128,
    blocks: 4,
    producers: options.producers ?? 0,
  });
  TaskTable.init(memory);
  const setup: WorkerSetup = {
    buffer: memory.buffer,
    layout: memory.layout,
    index,
    moduleUrl: "unused: the functions are given",
    buffers: options.buffers ?? [],
    arena: memory.arena,
    asyncTasksPerWorker: options.asyncTasksPerWorker ?? Infinity,
    elastic: options.elastic,
    recycle: options.recycle,
    metrics: options.metrics
      ? { since: epochMs(), histograms: new SharedArrayBuffer(histogramBytes(workers)) }
      : undefined,
  };
  const posted: Posted[] = [];
  const post = (message: unknown) => void posted.push(message as Posted);
  const build = (functions: TaskFunction[] = []) => new WorkerLoop(setup, functions, post);
  const stop = () => {
    Atomics.store(memory.control, ControlWords.lifecycle, 1);
    memory.sleep.wakeAll();
  };
  // The main thread's side of a submission (as producer/submission.ts places one): a record written and
  // published QUEUED, pushed to the normal queue, a sleeper woken.
  const main = new TaskTable(memory);
  const levels = memory.levels([new Int32Array(4), new Int32Array(4), new Int32Array(4)]);
  const submit = (task: number, args: unknown[], origin: number = Origin.MAIN, flags = 0) => {
    const handle = main.allocate();
    const at = main.indexOf(handle);
    const encoder = new Encoder();
    encoder.encodeArgs(args);
    assert(main.writeEncoded(at, encoder), "arguments written");
    main.fields.setTask(at, task);
    main.fields.setOrigin(at, origin);
    if (flags !== 0) main.fields.setFlags(at, flags);
    main.fields.storeState(at, TaskState.QUEUED);
    levels.pushPatiently(handle, Level.normal);
    memory.sleep.newWork();
    return handle;
  };
  return { memory, setup, posted, build, stop, index, submit };
}

/** Polls (each turn a timer) until `done()` holds; a hang fails through `within`. */
async function until(done: () => boolean, what: string): Promise<void> {
  await within(
    (async () => {
      while (!done()) await new Promise((resolve) => setTimeout(resolve, 1));
    })(),
    20_000,
    what,
  );
}

test("loop: a worker built clears its marks in shared memory (no stale mark for recovery to repair)", () => {
  const world = newWorld({ index: 1 });
  const marks = world.memory.notes(1, NoteWords.marks, MARK_WORDS);
  marks.fill(7); // a predecessor's marks, recovered already
  world.build();
  assertEquals([...marks], Array(MARK_WORDS).fill(-1), "every mark word -1 (clear)");
  assertEquals(world.posted, [], "nothing posted by building");
});

test("loop: a loop that finds the pool stopping returns at once, posting nothing", async () => {
  const world = newWorld();
  const loop = world.build();
  world.stop();
  await within(loop.run(), 20_000, "run() of a stopped pool");
  assertEquals(world.posted, [], "nothing posted");
});

test("loop: a broadcast part runs while async work holds the event loop, its result is posted, and the loop stops once told", async () => {
  const world = newWorld({ index: 1 });
  const calls: unknown[][] = [];
  const loop = world.build([(...args: unknown[]) => (calls.push(args), (args[0] as number) * 2)]);
  holdEventLoop();
  let finished = false;
  let running: Promise<void>;
  try {
    running = loop.run().then(() => void (finished = true));
    // Let it go round to its asynchronous sleep (it must not block this thread).
    await new Promise((resolve) => setTimeout(resolve, 5));
    // The owner's broadcast: the mail word counts the part before it is posted, then every worker is woken.
    Atomics.add(world.memory.status, world.index * StatusWords.count + StatusWords.mail, 1);
    const encoder = new Encoder();
    encoder.encode([21]);
    loop.broadcast(5, 0, encoder.snapshot()); // task 0: the first function
    world.memory.sleep.wakeAll();
    await until(() => world.posted.some((m) => m.type === "broadcast-result"), "the part's result");
    assertEquals(calls, [[21]], "the part ran once with its arguments");
    const result = world.posted.find((m) => m.type === "broadcast-result")!;
    assertEquals(result.id, 5, "the part's id");
    assertEquals(result.failed, false, "not failed");
    const bytes = result.bytes as Uint8Array;
    assertEquals(
      decode(bytes, 0, bytes.length, () => {
        throw new Error("no buffers");
      }),
      42,
      "its value",
    );
    assertEquals(finished, false, "still running: the pool is not stopping");
    world.stop();
  } finally {
    releaseEventLoop();
  }
  await within(running!, 20_000, "run() once stopping");
  assert(finished, "finished");
});

test("loop: an elastic pool's worker is AWAKE once built; idle past its timeout it retires: teardown, slot ABSENT, then 'retired'", async () => {
  const world = newWorld({ workers: 2, index: 1, elastic: { min: 1, idleTimeout: 1 } });
  const { memory } = world;
  const slots = new Slots(memory.control, memory.sleep.words, memory.status, 2);
  slots.initElastic(1, 2);
  slots.bootStoreAwake(0);
  // The owner grows the pool by slot 1.
  assert(slots.growStoreStarting(1), "slot 1 STARTING");
  assert(slots.growReserve(1, 2), "size reserved");
  assertEquals(slots.state(1), STARTING, "starting");
  const order: string[] = [];
  setRetireTeardown(() => {
    order.push(`teardown, slot ${slots.state(1)}`);
  });
  try {
    const loop = world.build();
    assertEquals(slots.state(1), AWAKE, "AWAKE once built: thieves and directed posts see it");
    const posting = world.posted;
    const run = loop.run();
    await within(run, 20_000, "run() of a worker that retires");
    order.push(`run resolved, slot ${slots.state(1)}`);
    assertEquals(
      order,
      [`teardown, slot ${2}`, `run resolved, slot ${ABSENT}`],
      "teardown while RETIRING, then ABSENT",
    );
    assertEquals(posting.map((m) => m.type), ["retired"], "one 'retired' message");
    assertEquals(slots.size, 1, "the size back to min");
  } finally {
    setRetireTeardown(() => {});
  }
});

test("loop: a worker due to be recycled says so once, takes no more tasks, and leaves only after the owner's leave", async () => {
  const world = newWorld({ workers: 2, index: 1, recycle: { afterTasks: 2, heapMB: Infinity } });
  const ran: number[] = [];
  const loop = world.build([(x: unknown) => void ran.push(x as number)]);
  holdEventLoop();
  let held = true;
  let finished = false;
  try {
    const running = loop.run().then(() => void (finished = true));
    for (const x of [1, 2, 3]) world.submit(0, [x]);
    await until(() => world.posted.some((m) => m.type === "recycle-ready"), "recycle-ready");
    assertEquals(
      world.posted.filter((m) => m.type === "recycle-ready"),
      [{ type: "recycle-ready", reason: "tasks" }],
      "one recycle-ready, for its tasks",
    );
    // Nothing holds its event loop now (it takes no task, so it never sleeps again: it polls, with timers).
    releaseEventLoop();
    held = false;
    // Give its leaving slices turns: without the owner's leave it must not finish.
    for (let i = 0; i < 20; i++) await new Promise((resolve) => setTimeout(resolve, 1));
    assertEquals(ran, [1, 2], "two tasks ran, the third left queued for the others");
    assertEquals(finished, false, "not finished before leave()");
    loop.leave();
    await within(running, 20_000, "run() after leave()");
    assertEquals(ran, [1, 2], "still two");
    assertEquals(world.posted.filter((m) => m.type === "recycle-ready").length, 1, "said once");
  } finally {
    if (held) releaseEventLoop();
  }
});

/** A broadcast part's arguments, its SharedArrayBuffers passed by reference under the ids `ids` gives. */
function partArgs(values: unknown[], ids: Map<SharedArrayBuffer, number> = new Map()): Uint8Array {
  const encoder = new Encoder({ shareBuffer: (sab) => ids.get(sab)! });
  encoder.encode(values);
  return encoder.snapshot();
}

test("loop: SharedArrayBuffers passed by reference before it started (a replacement's setup) and since (addBuffer) reach its tasks", async () => {
  const early = new SharedArrayBuffer(4);
  const late = new SharedArrayBuffer(4);
  const world = newWorld({ index: 1, buffers: [[3, early]] });
  const loop = world.build([(sab: unknown) => void Atomics.add(new Int32Array(sab as SharedArrayBuffer), 0, 1)]);
  loop.addBuffer(4, late);
  const ids = new Map([[early, 3], [late, 4]]);
  holdEventLoop();
  let running: Promise<void>;
  try {
    running = loop.run();
    const mailAt = world.index * StatusWords.count + StatusWords.mail;
    Atomics.add(world.memory.status, mailAt, 2);
    loop.broadcast(1, 0, partArgs([early], ids));
    loop.broadcast(2, 0, partArgs([late], ids));
    world.memory.sleep.wakeAll();
    await until(() => world.posted.filter((m) => m.type === "broadcast-result").length === 2, "both parts' results");
    assertEquals(world.posted.map((m) => m.failed), [false, false], "neither failed");
    assertEquals(new Int32Array(early)[0], 1, "the setup's buffer reached the first part: the same memory");
    assertEquals(new Int32Array(late)[0], 1, "the added buffer reached the second");
    world.stop();
  } finally {
    releaseEventLoop();
  }
  await within(running!, 20_000, "run() once stopping");
});

test("loop: with an async task pending, a stream of sync tasks yields to the event loop now and then, so the async task settles before the stream ends", async () => {
  const world = newWorld({ index: 1 });
  let settled = false;
  const seen: boolean[] = [];
  const loop = world.build([
    async () => {
      // A macrotask (setImmediate: Deno, Bun and Node have it), queued before the loop's own next slice.
      await new Promise((resolve) =>
        (globalThis as unknown as { setImmediate: (f: (v?: unknown) => void) => void }).setImmediate(resolve)
      );
      settled = true;
    },
    () => void seen.push(settled),
  ]);
  const sync = 200;
  world.submit(0, []);
  for (let i = 0; i < sync; i++) world.submit(1, []);
  // Held, so that the loop never blocks this thread in a synchronous sleep once everything ran.
  holdEventLoop();
  let running: Promise<void>;
  try {
    running = loop.run();
    await until(() => seen.length === sync && settled, "every task");
    assert(seen.includes(true), "some sync task ran after the async task settled: the loop yielded to the event loop");
    assertEquals(seen[0], false, "the stream started before it settled (else this test shows nothing)");
    world.stop();
  } finally {
    releaseEventLoop();
  }
  await within(running!, 20_000, "run() once stopping");
});

test("loop: a worker's queue steps leave their notes in its own notes region (what recovery reads if it dies there)", async () => {
  const world = newWorld({ index: 1, producers: 2 });
  assertEquals(claimSlot(world.memory.buffer, world.memory.layout), 1, "producer slot 1 claimed");
  assertEquals(claimSlot(world.memory.buffer, world.memory.layout), 2, "producer slot 2 claimed");
  const notes = (at: number) => [...world.memory.notes(world.index, at)];
  const zeros = [0, 0, 0, 0];
  assertEquals(notes(NoteWords.injector), zeros, "untouched before");
  assertEquals(notes(NoteWords.completions), zeros, "untouched before");
  const loop = world.build([(x: unknown) => x]);
  holdEventLoop();
  let running: Promise<void>;
  try {
    running = loop.run();
    const handles = [1, 2, 3].map((x) => world.submit(0, [x]));
    handles.push(world.submit(0, [4], originOf(1))); // a task of producer slot 1: its completion queue
    handles.push(world.submit(0, [5], originOf(2))); // and one of slot 2
    const main = new TaskTable(world.memory);
    await until(() => handles.every((h) => main.fields.loadState(main.indexOf(h)) === TaskState.DONE), "five done");
    world.stop();
  } finally {
    releaseEventLoop();
  }
  await within(running!, 20_000, "run() once stopping");
  // Five pops from the normal queue, three completions pushed to the owner's queue and one to each producer
  // slot's, each step noted (its position, then the step whole) in this worker's words for that queue.
  assert(notes(NoteWords.injector).some((w) => w !== 0), `its injector notes: ${notes(NoteWords.injector)}`);
  assert(notes(NoteWords.completions).some((w) => w !== 0), `its completion notes: ${notes(NoteWords.completions)}`);
  assert(
    notes(NoteWords.producerCompletions).some((w) => w !== 0),
    `its notes on slot 1's completion queue: ${notes(NoteWords.producerCompletions)}`,
  );
  assert(
    notes(NoteWords.producerCompletions + NOTE_WORDS).some((w) => w !== 0),
    `its notes on slot 2's completion queue: ${notes(NoteWords.producerCompletions + NOTE_WORDS)}`,
  );
  assertEquals(notes(NoteWords.injectorHigh), zeros, "no step on the high queue");
  assertEquals(notes(NoteWords.injectorLow), zeros, "no step on the low queue");
  assertEquals([...world.memory.notes(0, NoteWords.injector)], zeros, "worker 0's notes untouched");
  // A fixed pool's worker: tasks queued, nobody asleep to wake, and still no "grow" (only an elastic pool's asks).
  assertEquals(world.posted, [], "nothing posted: its outcomes went by the queues");
});

/** A promise and its resolver. */
function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/** Posts a broadcast part of function 0 with `args` to the world's worker (the owner's steps). */
function postPart(world: ReturnType<typeof newWorld>, loop: WorkerLoop, id: number, args: unknown[]): void {
  Atomics.add(world.memory.status, world.index * StatusWords.count + StatusWords.mail, 1);
  loop.broadcast(id, 0, partArgs(args));
  world.memory.sleep.wakeAll();
}

test("loop: a recycling worker still runs what only it can (a broadcast part), and leaves after leave() only once its async task settled", async () => {
  const world = newWorld({ workers: 2, index: 1, recycle: { afterTasks: 2, heapMB: Infinity } });
  const gate = deferred();
  const parts: unknown[] = [];
  const loop = world.build([
    (x: unknown) => void parts.push(x), // 0: the broadcast part's function, and a sync task
    () => gate.promise, // 1: an async task that settles when the test says
  ]);
  holdEventLoop();
  let held = true;
  let finished = false;
  try {
    const running = loop.run().then(() => void (finished = true));
    world.submit(1, []);
    world.submit(0, ["task"]);
    await until(() => world.posted.some((m) => m.type === "recycle-ready"), "recycle-ready");
    releaseEventLoop();
    held = false;
    postPart(world, loop, 7, ["part"]);
    await until(() => world.posted.some((m) => m.type === "broadcast-result"), "the part's result while recycling");
    assertEquals(parts, ["task", "part"], "the task, then the part");
    loop.leave();
    for (let i = 0; i < 20; i++) await new Promise((resolve) => setTimeout(resolve, 1));
    assertEquals(finished, false, "allowed to leave, but its async task is still pending");
    gate.resolve();
    await within(running, 20_000, "run() once the async task settled");
  } finally {
    if (held) releaseEventLoop();
  }
});

test("loop: a worker due to be recycled when the pool stops finishes without waiting for leave()", async () => {
  const world = newWorld({ workers: 2, index: 1, recycle: { afterTasks: 1, heapMB: Infinity } });
  const loop = world.build([() => {}]);
  holdEventLoop();
  let held = true;
  try {
    const running = loop.run();
    world.submit(0, []);
    await until(() => world.posted.some((m) => m.type === "recycle-ready"), "recycle-ready");
    releaseEventLoop();
    held = false;
    world.stop();
    await within(running, 20_000, "run() of a stopped pool's recycling worker, no leave()");
  } finally {
    if (held) releaseEventLoop();
  }
});

test("loop: a pool that stops while an async task is pending: the loop finishes only once it settled", async () => {
  const world = newWorld({ index: 1 });
  const gate = deferred();
  let settled = false;
  const loop = world.build([() => gate.promise.then(() => void (settled = true))]);
  const handle = world.submit(0, []);
  let finished = false;
  const running = loop.run().then(() => void (finished = true));
  const main = new TaskTable(world.memory);
  // Started (RUNNING), pending: the loop sleeps asynchronously meanwhile.
  await until(() => main.fields.loadState(main.indexOf(handle)) === TaskState.RUNNING, "the task started");
  world.stop();
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setTimeout(resolve, 1));
  assertEquals(finished, false, "stopping, but its async task is pending: not finished");
  gate.resolve();
  await within(running, 20_000, "run() once the task settled");
  assert(settled, "the task settled first");
  assertEquals(main.fields.loadState(main.indexOf(handle)), TaskState.DONE, "and its outcome was published");
});

test("loop: an elastic worker whose teardown throws retires all the same", async () => {
  const world = newWorld({ workers: 2, index: 1, elastic: { min: 1, idleTimeout: 1 } });
  const { memory } = world;
  const slots = new Slots(memory.control, memory.sleep.words, memory.status, 2);
  slots.initElastic(1, 2);
  slots.bootStoreAwake(0);
  assert(slots.growStoreStarting(1) && slots.growReserve(1, 2), "slot 1 grown");
  let teardowns = 0;
  setRetireTeardown(() => {
    teardowns++;
    return Promise.reject(new Error("teardown refused"));
  });
  try {
    const loop = world.build();
    await within(loop.run(), 20_000, "run() of a worker whose teardown throws");
    assertEquals(teardowns, 1, "its teardown ran once");
    assertEquals(slots.state(1), ABSENT, "its slot ABSENT");
    assertEquals(world.posted.map((m) => m.type), ["retired"], "'retired' posted");
  } finally {
    setRetireTeardown(() => {});
  }
});

test("loop: work found while dozing starts the idle rounds over: after it, the worker spins again, then dozes DOZE_ROUNDS times before it sleeps", async () => {
  const world = newWorld({ index: 1 });
  let ran = 0;
  const loop = world.build([() => void ran++]);
  const events: string[] = [];
  let dozes = 0;
  // The sleep words' waits, answered at once (no thread blocks): a doze (a timed wait of DOZE_MS) is
  // counted, and the 5th queues a task; the sleep (no timeout) stops the pool, so the loop ends there.
  const restore = installSharedMemory({
    ...atomicsBinding,
    wait: (view, index, expected, timeout) => {
      if (timeout === DOZE_MS) {
        events.push("doze");
        if (++dozes === 5) world.submit(0, []);
        return "timed-out";
      }
      if (timeout === undefined) {
        events.push("sleep");
        atomicsBinding.store(world.memory.control, ControlWords.lifecycle, 1);
        return "timed-out";
      }
      return atomicsBinding.wait(view, index, expected, timeout);
    },
  });
  try {
    await within(loop.run(), 20_000, "run()");
  } finally {
    restore();
  }
  assertEquals(ran, 1, "the task ran");
  const sleepAt = events.indexOf("sleep");
  assert(sleepAt > 0, `it went to sleep: ${events.length} events`);
  assertEquals(sleepAt, 5 + DOZE_ROUNDS, "5 dozes before the task, then DOZE_ROUNDS after it, then the sleep");
});

test("loop: an elastic pool's worker that finds tasks queued and nobody asleep to wake asks the owner for a worker, once", async () => {
  const world = newWorld({ workers: 2, index: 0, elastic: { min: 1, idleTimeout: 60_000 } });
  const { memory } = world;
  const slots = new Slots(memory.control, memory.sleep.words, memory.status, 2);
  slots.initElastic(1, 2);
  let ran = 0;
  const loop = world.build([() => void ran++]);
  assertEquals(slots.state(0), AWAKE, "AWAKE once built");
  holdEventLoop();
  let running: Promise<void>;
  try {
    running = loop.run();
    for (let i = 0; i < 4; i++) world.submit(0, []);
    await until(() => ran === 4, "four tasks");
    assertEquals(world.posted, [{ type: "grow" }], "one grow message for the burst");
    world.stop();
  } finally {
    releaseEventLoop();
  }
  await within(running!, 20_000, "run() once stopping");
});

test("loop: a pool that stops while an async broadcast part is pending: the loop finishes only once the part settled", async () => {
  const world = newWorld({ index: 1 });
  const gate = deferred();
  let started = false;
  const loop = world.build([() => (started = true, gate.promise)]);
  // Held until the part is pending (then the part itself keeps the loop asleep asynchronously).
  holdEventLoop();
  let held = true;
  let finished = false;
  try {
    const running = loop.run().then(() => void (finished = true));
    postPart(world, loop, 3, []);
    await until(() => started, "the part started");
    releaseEventLoop();
    held = false;
    world.stop();
    for (let i = 0; i < 20; i++) await new Promise((resolve) => setTimeout(resolve, 1));
    assertEquals(finished, false, "stopping, but its part is pending: not finished");
    gate.resolve();
    await within(running, 20_000, "run() once the part settled");
    assert(world.posted.some((m) => m.type === "broadcast-result"), "the part's result was posted");
  } finally {
    if (held) releaseEventLoop();
  }
});

test("loop: a worker that becomes due to be recycled wakes a sleeper (for what it leaves behind), as it never sleeps again", async () => {
  const world = newWorld({ workers: 2, index: 1, recycle: { afterTasks: 1, heapMB: Infinity } });
  const { memory } = world;
  const loop = world.build([() => {}]);
  world.submit(0, []);
  // Worker 0 asleep by the protocol (after the submission's wake, which found nobody).
  const jec = memory.sleep.getSleepy();
  assert(memory.sleep.fallAsleep(0, jec), "worker 0 counted asleep");
  const state0 = () => Atomics.load(memory.sleep.words, SleepWords.state(0));
  assertEquals(state0(), SLEEPING, "worker 0 SLEEPING");
  const running = loop.run();
  await until(() => world.posted.some((m) => m.type === "recycle-ready"), "recycle-ready");
  assertEquals(state0(), AWAKE, "worker 0 woken by the recycling worker");
  world.stop();
  await within(running, 20_000, "run() once stopping");
});

test("loop: a recycling worker still runs a task directed to it (only it can), then leaves after leave()", async () => {
  const world = newWorld({ workers: 2, index: 1, recycle: { afterTasks: 1, heapMB: Infinity } });
  const ran: unknown[] = [];
  const loop = world.build([(x: unknown) => void ran.push(x)]);
  holdEventLoop();
  let held = true;
  try {
    const running = loop.run();
    world.submit(0, ["queued"]);
    await until(() => world.posted.some((m) => m.type === "recycle-ready"), "recycle-ready");
    releaseEventLoop();
    held = false;
    // The owner's directed post: a record QUEUED for this worker alone, its mail counted, then the message.
    const main = new TaskTable(world.memory);
    const handle = main.allocate();
    const at = main.indexOf(handle);
    const encoder = new Encoder();
    encoder.encodeArgs(["directed"]);
    assert(main.writeEncoded(at, encoder), "arguments written");
    main.fields.setTask(at, 0);
    main.fields.setOrigin(at, Origin.MAIN);
    main.fields.setFlags(at, TaskFlags.DIRECTED);
    main.fields.setWorker(at, world.index);
    main.fields.storeState(at, TaskState.QUEUED);
    Atomics.add(world.memory.status, world.index * StatusWords.count + StatusWords.mail, 1);
    loop.directed(handle, []);
    await until(() => main.fields.loadState(at) === TaskState.DONE, "the directed task done");
    assertEquals(ran, ["queued", "directed"], "the queued task, then the directed one");
    loop.leave();
    await within(running, 20_000, "run() after leave()");
  } finally {
    if (held) releaseEventLoop();
  }
});

/**
 * Runs `loop` with a task submitted at the moment the loop announces it is about to sleep (its first CAS on
 * the sleep counters: getSleepy), so that the last search before sleeping finds it (search.idle returns it,
 * held): the loop's "late" path. The task stops the pool, so the loop ends after it.
 */
async function runWithLateTask(world: ReturnType<typeof newWorld>, loop: WorkerLoop, args: unknown[]): Promise<void> {
  let armed = true;
  const counters = SleepWords.counters;
  // The loop's own views over the same memory (it builds them from the setup): matched by where they lie.
  const words = world.memory.sleep.words;
  const isCounters = (view: Int32Array, index: number) =>
    view.buffer === words.buffer && view.byteOffset === words.byteOffset && index === counters;
  const restore = installSharedMemory({
    ...atomicsBinding,
    compareExchange: (view, index, expected, replacement) => {
      if (armed && isCounters(view as Int32Array, index)) {
        armed = false;
        world.submit(0, args);
      }
      return atomicsBinding.compareExchange(view, index, expected, replacement);
    },
    wait: (view, index, expected, timeout) => {
      if (timeout === undefined) throw new Error("the loop slept synchronously: it would block the test thread");
      return atomicsBinding.wait(view, index, expected, timeout);
    },
  });
  try {
    await within(loop.run(), 20_000, "run()");
  } finally {
    restore();
  }
  assertEquals(armed, false, "the loop announced its sleep (else this test shows nothing)");
}

test("loop: a task found by the last search before sleeping runs (the late path), and the loop carries on", async () => {
  const world = newWorld({ index: 1 });
  const ran: unknown[] = [];
  const loop = world.build([(x: unknown) => {
    ran.push(x);
    world.stop();
  }]);
  await runWithLateTask(world, loop, ["late"]);
  assertEquals(ran, ["late"], "the late task ran");
});

test("loop: a task found by the last search before sleeping counts for recycling like any other", async () => {
  const world = newWorld({ workers: 2, index: 1, recycle: { afterTasks: 1, heapMB: Infinity } });
  const ran: unknown[] = [];
  const loop = world.build([(x: unknown) => {
    ran.push(x);
    world.stop();
  }]);
  await runWithLateTask(world, loop, ["late"]);
  assertEquals(ran, ["late"], "the late task ran");
  assertEquals(
    world.posted.filter((m) => m.type === "recycle-ready"),
    [{ type: "recycle-ready", reason: "tasks" }],
    "its one task made it due",
  );
});

test("loop: with no async task pending, a stream of sync tasks runs without yielding to the event loop", async () => {
  const world = newWorld({ index: 1 });
  const count = 40;
  let macrotaskRan = false;
  const seen: boolean[] = [];
  const loop = world.build([
    () => {
      // A macrotask queued by the first task: it runs only if the loop lets its event loop turn.
      // (setImmediate, not a timer: a 0 ms timer may not be due yet at a yield of the loop, an immediate is.)
      if (seen.length === 0) {
        (globalThis as unknown as { setImmediate: (f: () => void) => void }).setImmediate(() =>
          void (macrotaskRan = true)
        );
      }
      seen.push(macrotaskRan);
      if (seen.length === count) world.stop();
    },
  ]);
  for (let i = 0; i < count; i++) world.submit(0, []);
  await within(loop.run(), 20_000, "run()");
  assertEquals(seen.length, count, "every task ran");
  assertEquals(seen.includes(true), false, "no task ran after a turn of the event loop: the loop never yielded");
});

test("loop: with an async task pending, the loop yields to the event loop once every 16 tasks (the async one counts)", async () => {
  const world = newWorld({ index: 1 });
  const gate = deferred();
  let macrotaskRan = false;
  const seen: boolean[] = [];
  const sync = 40;
  const loop = world.build([
    () => {
      // Queued before any yield of the loop: it runs at the loop's first yield, before the loop's next slice.
      (globalThis as unknown as { setImmediate: (f: () => void) => void }).setImmediate(() =>
        void (macrotaskRan = true)
      );
      return gate.promise;
    },
    () => {
      seen.push(macrotaskRan);
      if (seen.length === sync) {
        world.stop();
        gate.resolve();
      }
    },
  ]);
  world.submit(0, []);
  for (let i = 0; i < sync; i++) world.submit(1, []);
  await within(loop.run(), 20_000, "run()");
  assertEquals(seen.length, sync, "every sync task ran");
  assertEquals(
    seen.indexOf(true),
    15,
    "the async task and 15 sync tasks ran in the first slice, the 16th after a yield",
  );
});

test("loop: where the runtime has no setImmediate (as in a browser), the loop's yields go through a 0 ms timer", async () => {
  const global = globalThis as { setImmediate?: unknown };
  const saved = global.setImmediate;
  delete global.setImmediate;
  try {
    const world = newWorld({ index: 1 });
    const gate = deferred();
    let ran = 0;
    const loop = world.build([
      () => gate.promise,
      () => {
        if (++ran === 40) {
          world.stop();
          gate.resolve();
        }
      },
    ]);
    world.submit(0, []);
    for (let i = 0; i < 40; i++) world.submit(1, []);
    // 40 sync tasks with an async one pending: the loop yields twice (every 16 tasks), through macrotask().
    await within(loop.run(), 20_000, "run()");
    assertEquals(ran, 40, "every task ran, across the loop's yields");
  } finally {
    global.setImmediate = saved;
  }
});

/** With metrics: when worker `index`'s busy period under way began (ms since the pool's creation), -1 if none. */
function busySince(world: ReturnType<typeof newWorld>): number {
  return Atomics.load(world.memory.status, world.index * StatusWords.count + StatusWords.busySinceMs);
}

test("loop: with metrics, a worker is busy (for utilization) while its task runs, and not once it idles", async () => {
  const world = newWorld({ index: 1, metrics: true });
  const during: number[] = [];
  const loop = world.build([() => void during.push(busySince(world))]);
  world.submit(0, []);
  let dozing: number | undefined;
  // Its first doze (a timed wait, answered at once): what utilization reads while it idles; then the pool stops.
  const restore = installSharedMemory({
    ...atomicsBinding,
    wait: (view, index, expected, timeout) => {
      if (timeout === DOZE_MS && dozing === undefined) {
        dozing = busySince(world);
        world.stop();
        return "timed-out";
      }
      if (timeout === undefined) throw new Error("the loop slept synchronously: it would block the test thread");
      return atomicsBinding.wait(view, index, expected, timeout);
    },
  });
  try {
    await within(loop.run(), 20_000, "run()");
  } finally {
    restore();
  }
  assertEquals(during.length, 1, "the task ran");
  assert(during[0] >= 0, `busy while the task ran: ${during[0]}`);
  assertEquals(dozing, -1, "not busy while it dozes");
});

test("loop: with metrics, a worker that yields to its event loop (async tasks pending) is not busy meanwhile", async () => {
  const world = newWorld({ index: 1, metrics: true });
  const gate = deferred();
  let atYield: number | undefined;
  let ran = 0;
  const loop = world.build([
    () => {
      // Runs at the loop's first yield (queued before the loop's own next slice).
      (globalThis as unknown as { setImmediate: (f: () => void) => void }).setImmediate(() =>
        void (atYield = busySince(world))
      );
      return gate.promise;
    },
    () => {
      if (++ran === 20) {
        world.stop();
        gate.resolve();
      }
    },
  ]);
  world.submit(0, []);
  for (let i = 0; i < 20; i++) world.submit(1, []);
  await within(loop.run(), 20_000, "run()");
  assertEquals(ran, 20, "every task ran");
  assertEquals(atYield, -1, "not busy while its event loop ran");
});

test("loop: with metrics, a worker at its bound of async tasks is not busy while it waits for room", async () => {
  const world = newWorld({ index: 1, metrics: true, asyncTasksPerWorker: 1 });
  const gate = deferred();
  let started = false;
  let ran = false;
  const loop = world.build([
    () => (started = true, gate.promise),
    () => {
      ran = true;
      world.stop();
    },
  ]);
  world.submit(0, []);
  world.submit(1, []);
  // Held until the async task is pending (then the loop never sleeps synchronously: it waits for room).
  holdEventLoop();
  let held = true;
  let waiting: number;
  try {
    const running = loop.run();
    await until(() => started, "the async task started");
    releaseEventLoop();
    held = false;
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setTimeout(resolve, 1));
    waiting = busySince(world);
    assertEquals(ran, false, "the sync task waits for room (else this test shows nothing)");
    gate.resolve();
    await within(running, 20_000, "run()");
  } finally {
    if (held) releaseEventLoop();
  }
  assertEquals(waiting!, -1, "not busy while it waited for room");
  assert(ran, "the sync task ran once there was room");
});

test("loop: with metrics, a worker that lets its event loop deliver a broadcast part is not busy meanwhile", async () => {
  const world = newWorld({ index: 1, metrics: true });
  let meanwhile: number | undefined;
  let partRan = false;
  const loop: WorkerLoop = world.build([
    () => {
      partRan = true;
      world.stop();
    },
    () => {
      // The owner's broadcast, as it does it: the mail counted first, the message delivered later.
      Atomics.add(world.memory.status, world.index * StatusWords.count + StatusWords.mail, 1);
      (globalThis as unknown as { setImmediate: (f: () => void) => void }).setImmediate(() => {
        meanwhile = busySince(world);
        loop.broadcast(3, 0, partArgs([]));
      });
    },
  ]);
  world.submit(1, []);
  await within(loop.run(), 20_000, "run()");
  assert(partRan, "the part ran");
  assertEquals(meanwhile, -1, "not busy while it waited for the part's message");
});

test("loop: with metrics, a recycling worker waiting for the owner's leave is not busy meanwhile", async () => {
  const world = newWorld({ workers: 2, index: 1, metrics: true, recycle: { afterTasks: 1, heapMB: Infinity } });
  const loop = world.build([() => {}]);
  holdEventLoop();
  let held = true;
  try {
    const running = loop.run();
    world.submit(0, []);
    await until(() => world.posted.some((m) => m.type === "recycle-ready"), "recycle-ready");
    releaseEventLoop();
    held = false;
    // Its leaving slices poll (timers) until leave(): give them turns.
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setTimeout(resolve, 1));
    assertEquals(busySince(world), -1, "not busy while it waits to leave");
    loop.leave();
    await within(running, 20_000, "run() after leave()");
  } finally {
    if (held) releaseEventLoop();
  }
});

test("loop: with metrics, a task run after a broadcast part has its run time measured from its own start", async () => {
  const since = epochMs();
  const world = newWorld({ index: 1, metrics: true });
  let runs = 0;
  const loop: WorkerLoop = world.build([
    // The part, then the queued task: the second run stops the pool.
    () => {
      if (++runs === 2) world.stop();
    },
    // The first task: a broadcast part posted meanwhile (it runs between this task and the next).
    () => postPart(world, loop, 3, []),
  ]);
  world.submit(1, []);
  world.submit(0, []);
  await within(loop.run(), 20_000, "run()");
  assertEquals(runs, 2, "the part and the task ran");
  // The run-time histogram of this worker: its words are the buckets, the count, the sum and the maximum.
  const words = histogramBytes(1) / 2 / 8;
  const run = new Float64Array(world.setup.metrics!.histograms, world.index * 2 * words * 8, words);
  const longest = run[words - 1];
  assert(longest <= epochMs() - since, `no task ran longer than the test: ${longest} ms`);
});

test("loop: a worker holding a forceable async task ends its slice with the kill guard down (killable while its event loop runs)", async () => {
  const world = newWorld({ index: 1 });
  const gate = deferred();
  let started = false;
  const loop = world.build([() => (started = true, gate.promise)]);
  const guard = () => Atomics.load(world.memory.status, world.index * StatusWords.count + StatusWords.guard);
  world.submit(0, [], Origin.MAIN, TaskFlags.FORCE);
  // Held until the task is pending (then the pending task keeps the loop's sleep asynchronous).
  holdEventLoop();
  let held = true;
  try {
    const running = loop.run();
    await until(() => started, "the task started");
    releaseEventLoop();
    held = false;
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setTimeout(resolve, 1));
    assertEquals(guard(), 0, "the guard down between slices, the forceable task held");
    world.stop();
    gate.resolve();
    await within(running, 20_000, "run() once stopping");
  } finally {
    if (held) releaseEventLoop();
  }
});
