/**
 * The owner's handling of a worker's death (`lib/owner/worker_deaths.ts` `WorkerDeaths`), on the shipped
 * module with a real pool memory (`PoolMemory.create`), the owner's task table and a real ledger,
 * single-threaded: which deaths it handles (not after close or terminate), what it counts (crashes, forced
 * kills, deaths inside steps), in which order it tells the broadcaster, repairs (recovery.ts), drains and
 * reports to the completion reader, and starts the replacement; what a failed replacement start does
 * (`startFailed`: the marks and table notes cleared, a given-back slot kept ABSENT, the directed tasks
 * rejected); where a remote producer's task goes (its completion queue, its producer woken); and the
 * queues `poolQueuesOf` names. The reader, broadcaster and workforce are stand-ins that log their calls;
 * the sleep counters are the real ones with `newWork` logged.
 *
 * Written for StrykerJS's survivors of worker_deaths.ts (issue 47, "Mutants nobody here chose").
 */
import { ModuleLoadError, WorkerCrashedError } from "../../lib/errors.ts";
import type { Broadcaster } from "../../lib/owner/broadcast.ts";
import { poolQueuesOf, WorkerDeaths } from "../../lib/owner/worker_deaths.ts";
import type { Workforce } from "../../lib/owner/workforce.ts";
import type { CompletionReader } from "../../lib/producer/completion.ts";
import { type Entry, TaskLedger } from "../../lib/producer/ledger.ts";
import type { PoolStateName } from "../../lib/lifecycle.ts";
import { Injector, QUEUE_EMPTY } from "../../lib/protocol/injector.ts";
import { MARK_WORDS, MarkWords, NOTE_WORDS, NoteWords, SleepWords } from "../../lib/protocol/layout.ts";
import { Level } from "../../lib/protocol/levels.ts";
import { PoolMemory } from "../../lib/protocol/memory.ts";
import { claimSlot, originOf } from "../../lib/protocol/producers.ts";
import { ABSENT, STATE_MASK } from "../../lib/protocol/sleep.ts";
import { GraphRecords, NO_EDGE } from "../../lib/graph/words.ts";
import { RecordWords } from "../../lib/record/fields.ts";
import { Origin, TABLE_NOTE_WORDS, TaskFlags, TaskState, TaskTable } from "../../lib/record/task.ts";
import { assert, assertEquals, runtime, test } from "../_test.ts";

/**
 * Each test's bound (a hang is a failure): far above what these one-thread tests take on a loaded machine
 * (milliseconds), and below StrykerJS's timeout, so that a mutant that leaves a promise pending fails here.
 */
const HANG = 30_000;

const DEAD = 0;
const LIVE = 1;
const CAPACITY = 16;

/** A pool of two workers and one producer slot (1), the owner's parts, stand-ins that log, and the deaths. */
function world(options: { start?: () => Promise<void> } = {}) {
  const real = PoolMemory.create({
    workers: 2,
    dequeCapacity: 4,
    taskCapacity: CAPACITY,
    inlineBytes: 64,
    blockBytes: 256,
    blocks: 16,
    producers: 1,
  });
  TaskTable.init(real);
  assertEquals(claimSlot(real.buffer, real.layout), 1, "slot 1");
  const log: string[] = [];
  // The real sleep counters, with newWork logged.
  const sleep = Object.create(real.sleep, {
    newWork: { value: () => (log.push("newWork"), real.sleep.newWork()) },
  });
  const memory = Object.create(real, { sleep: { value: sleep } }) as PoolMemory;
  const table = new TaskTable(memory);
  const errors: [unknown, string][] = [];
  const ledger = new TaskLedger(CAPACITY, (error, task) => void errors.push([error, task]));
  const reader = {
    drain: () => void log.push("drain"),
    report: (handle: number) => void log.push(`report ${handle}`),
    arm: () => void log.push("arm"),
  } as unknown as CompletionReader;
  const broadcaster = {
    workerDied: (index: number, error: Error) => void log.push(`workerDied ${index} ${error.message}`),
  } as unknown as Broadcaster;
  const dead = new Set<number>();
  const workforce = {
    start: (index: number) => (log.push(`start ${index}`), options.start?.() ?? Promise.resolve()),
    isDead: (worker: number) => dead.has(worker),
  } as unknown as Workforce;
  let state: PoolStateName = "open";
  const shared: SharedArrayBuffer[] = [];
  const deaths = new WorkerDeaths(
    {
      memory,
      table,
      ledger,
      levels: memory.levels(),
      reader,
      broadcaster,
      workforce,
      shareBuffer: (buffer) => (shared.push(buffer), shared.length - 1),
    },
    () => state,
  );
  deaths.replaced = (index) => void log.push(`replaced ${index}`);
  deaths.replaceFailed = (index, error) => void log.push(`replaceFailed ${index} ${(error as Error).message}`);
  // Worker 0's marks and table notes as a worker that ran leaves them between steps.
  memory.notes(DEAD, NoteWords.marks, MARK_WORDS).fill(-1);
  memory.notes(DEAD, NoteWords.table, TABLE_NOTE_WORDS).fill(-1);
  return {
    memory,
    table,
    ledger,
    log,
    errors,
    dead,
    deaths,
    shared,
    setState: (s: PoolStateName) => (state = s),
    reader: reader as unknown as Record<string, unknown>,
  };
}

type World = ReturnType<typeof world>;

/** A record of `origin` in `state` on `worker`: its handle. */
function record(w: World, origin: number, state: number, worker: number, flags = 0, forker = -1): number {
  const handle = w.table.allocate();
  assert(handle >= 0, "a record");
  const i = w.table.indexOf(handle);
  w.table.fields.setOrigin(i, origin);
  w.table.fields.setWorker(i, worker);
  w.table.fields.setFlags(i, flags);
  w.table.fields.setLevel(i, Level.normal);
  w.table.fields.setForker(i, forker);
  w.table.fields.initLatch(i, 0);
  w.table.fields.storeState(i, state);
  return handle;
}

/** A graph node with no edges (its submitter's write: the graph words are 0 in a new memory). */
function node(w: World, origin: number): number {
  const handle = record(w, origin, TaskState.RUNNING, DEAD, TaskFlags.GRAPH | TaskFlags.RETURN);
  new GraphRecords(w.memory.graph).setNextEdge(w.table.indexOf(handle), NO_EDGE);
  return handle;
}

/** A main-thread task placed in a record with its ledger entry; its outcome, read at once. */
function placed(w: World, state: number, worker: number, flags = 0) {
  const handle = record(w, Origin.MAIN, state, worker, flags);
  let entry: Entry | undefined;
  const promise = new Promise((resolve, reject) => (entry = w.ledger.open("job", 0, resolve, reject)));
  // The ledger's hold on the event loop is a pool's, not a test's (Node's runner would never end).
  w.ledger.releaseProcess();
  entry!.handle = handle;
  w.ledger.placed[w.table.indexOf(handle)] = entry;
  const outcome = promise.then(() => undefined, (error) => error as unknown);
  return { handle, entry: entry!, outcome };
}

const stateOf = (w: World, handle: number) => w.table.fields.loadState(w.table.indexOf(handle));
const sleepState = (w: World, index: number) => Atomics.load(w.memory.sleep.words, SleepWords.state(index));
/** Lets the replacement's start settle (its then runs in a microtask). */
const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

test(
  "worker deaths: a crash is counted, told to the broadcaster, repaired, drained, armed, then replaced (in that order)",
  async () => {
    const w = world();
    w.deaths.died(DEAD, "not an Error", false);
    assertEquals([w.deaths.crashes, w.deaths.forcedKills, w.deaths.deathsInSteps], [1, 0, 0], "counts");
    assertEquals(w.log, ["workerDied 0 not an Error", "drain", "arm", "start 0"], "before the start settles");
    await settle();
    assertEquals(w.log.slice(4), ["newWork", "replaced 0"], "after the start: a sleeper woken, then told");
    assertEquals(w.errors, [], "nothing reported");
  },
  HANG,
);

test("worker deaths: a forced kill is counted as one, not as a crash", async () => {
  const w = world();
  w.deaths.died(DEAD, new Error("killed"), true);
  assertEquals([w.deaths.crashes, w.deaths.forcedKills], [0, 1], "crashes, forced kills");
  w.deaths.died(DEAD, new Error("exit"), false);
  assertEquals([w.deaths.crashes, w.deaths.forcedKills], [1, 1], "crashes, forced kills");
  await settle();
}, HANG);

test(
  "worker deaths: after close or terminate a death is not handled (no count, no repair, no replacement)",
  async () => {
    for (const state of ["closed", "terminated"] as const) {
      const w = world();
      const running = placed(w, TaskState.RUNNING, DEAD);
      w.setState(state);
      w.deaths.died(DEAD, new Error("exit"), false);
      w.deaths.died(DEAD, new Error("exit"), true);
      w.deaths.startFailed(DEAD, new ModuleLoadError("file:///m.ts", "boom"));
      assertEquals([w.deaths.crashes, w.deaths.forcedKills], [0, 0], `${state}: counts`);
      assertEquals(w.log, [], `${state}: nothing done`);
      assert(!running.entry.settled, `${state}: the task not rejected here`);
    }
    for (const state of ["open", "closing"] as const) {
      const w = world();
      w.setState(state);
      w.deaths.died(DEAD, new Error("exit"), false);
      assertEquals(w.deaths.crashes, 1, `${state}: counted`);
      await settle();
      assert(w.log.includes("replaced 0"), `${state}: replaced`);
    }
  },
  HANG,
);

test(
  "worker deaths: the dead worker's running task rejects; its finished ones are reported after the drain, if still current and DONE",
  async () => {
    const w = world();
    const running = placed(w, TaskState.RUNNING, DEAD);
    const done = placed(w, TaskState.DONE, DEAD);
    const gone = placed(w, TaskState.DONE, DEAD);
    const redone = placed(w, TaskState.DONE, DEAD);
    // The drain settles and frees `gone`, whose record is taken again for a task another worker finished
    // (DONE under a new generation: only the handle's generation says it is stale), and sees `redone`'s
    // record move on (QUEUED again: its state alone says it is no longer a finished task to report).
    w.reader.drain = () => {
      w.log.push("drain");
      w.table.releaseHandle(gone.handle);
      let reused = false;
      for (let k = 0; k < CAPACITY && !reused; k++) {
        reused = w.table.indexOf(record(w, Origin.MAIN, TaskState.DONE, LIVE)) === w.table.indexOf(gone.handle);
      }
      assert(reused, "gone's record taken again");
      w.table.fields.storeState(w.table.indexOf(redone.handle), TaskState.QUEUED);
    };
    w.deaths.died(DEAD, new Error("exit 3"), false);
    // Settled already (a promise that never settles would hang the test until its timeout).
    assert(running.entry.settled, "running: settled by the repair");
    const error = await running.outcome;
    assert(error instanceof WorkerCrashedError, "the running task rejects with WorkerCrashedError");
    assertEquals(
      w.log.slice(0, 4),
      ["workerDied 0 exit 3", "drain", `report ${done.handle}`, "arm"],
      "only the current DONE one reported, between the drain and the arm",
    );
    await settle();
  },
  HANG,
);

test(
  "worker deaths: a death inside a step (a mark set) is counted in deathsInSteps; the held task goes back to the injector",
  async () => {
    const w = world();
    const task = record(w, Origin.MAIN, TaskState.QUEUED, DEAD);
    w.memory.notes(DEAD, NoteWords.marks, MARK_WORDS)[MarkWords.held] = task;
    w.deaths.died(DEAD, new Error("exit"), false);
    assertEquals(w.deaths.deathsInSteps, 1, "deaths inside steps");
    assertEquals(w.memory.levels().queues[Level.normal].pop(), task, "the held task in the injector");
    w.deaths.died(DEAD, new Error("exit"), false);
    assertEquals(w.deaths.deathsInSteps, 1, "a death outside steps is not counted there");
    await settle();
  },
  HANG,
);

test(
  "worker deaths: a repair that throws is reported through the ledger, and the replacement still starts",
  async () => {
    const w = world();
    const failure = new Error("a repair's bug");
    w.reader.drain = () => {
      throw failure;
    };
    w.deaths.died(DEAD, new Error("exit"), false);
    await settle();
    assertEquals(w.errors, [[failure, "(recovery of worker 0)"]], "reported");
    assert(w.log.includes("start 0") && w.log.includes("replaced 0"), "replaced all the same");
  },
  HANG,
);

test(
  "worker deaths: a replacement that fails to start while the pool is open or closing fails what was posted to it, is reported and told",
  async () => {
    for (const state of ["open", "closing"] as const) {
      const reason = new ModuleLoadError("file:///m.ts", "setup threw");
      let fail: (e: unknown) => void = () => {};
      const w = world({ start: () => new Promise((_, reject) => (fail = reject)) });
      w.deaths.died(DEAD, new Error("exit"), false);
      // Posted to the replacement while it loads: a directed task.
      const directed = placed(w, TaskState.QUEUED, DEAD, TaskFlags.DIRECTED);
      w.setState(state);
      fail(reason);
      await settle();
      // Settled already (a promise that never settles would hang the test until its timeout).
      assert(directed.entry.settled, "directed: settled by the repair");
      const error = await directed.outcome;
      assert(error instanceof WorkerCrashedError, `${state}: the directed task rejects`);
      assert(/failed to start/.test((error as Error).message), `${state}: its message says so (${error})`);
      assertEquals((error as Error).cause, reason, `${state}: its cause`);
      assertEquals(w.errors, [[reason, "(worker replacement)"]], `${state}: reported`);
      assert(w.log.includes(`replaceFailed 0 ${reason.message}`), `${state}: told`);
      assert(!w.log.includes("replaced 0"), `${state}: not replaced`);
    }
    for (const state of ["closed", "terminated"] as const) {
      let fail: (e: unknown) => void = () => {};
      const w = world({ start: () => new Promise((_, reject) => (fail = reject)) });
      w.deaths.died(DEAD, new Error("exit"), false);
      w.setState(state);
      fail(new Error("stopped"));
      await settle();
      assertEquals(w.errors, [], `${state}: a stopped replacement is not reported`);
      assert(!w.log.some((l) => l.startsWith("replaceFailed")), `${state}: not told`);
    }
  },
  HANG,
);

test(
  "worker deaths: startFailed on a never-started index clears its marks and table notes first (no record 0 pushed twice)",
  () => {
    const w = world();
    // Index 1 never ran: its marks and table notes are 0 (record 0, block 0), as the memory was created.
    const zero = record(w, Origin.MAIN, TaskState.QUEUED, LIVE);
    assertEquals(w.table.indexOf(zero), 0, "record 0 in use");
    w.memory.levels().queues[Level.normal].push(zero);
    const reason = new ModuleLoadError("file:///m.ts", "boom");
    w.deaths.startFailed(LIVE, reason);
    assertEquals(
      Array.from(w.memory.notes(LIVE, NoteWords.marks, MARK_WORDS)),
      new Array(MARK_WORDS).fill(-1),
      "marks",
    );
    assertEquals(
      Array.from(w.memory.notes(LIVE, NoteWords.table, TABLE_NOTE_WORDS)),
      new Array(TABLE_NOTE_WORDS).fill(-1),
      "table notes",
    );
    const queue = w.memory.levels().queues[Level.normal];
    assertEquals([queue.pop(), queue.pop()], [zero, QUEUE_EMPTY], "record 0 queued once");
    assertEquals(w.errors, [], "nothing reported");
    assertEquals([w.deaths.crashes, w.deaths.forcedKills], [0, 0], "not a death");
    assertEquals(
      w.log,
      [`workerDied 1 ${reason.message}`, "drain", "arm", "newWork"],
      "told, repaired, a sleeper woken",
    );
  },
  HANG,
);

test(
  "worker deaths: startFailed rejects the directed tasks posted to the index, with the start's error as cause",
  async () => {
    const w = world();
    const reason = new ModuleLoadError("file:///m.ts", "boom");
    const directed = placed(w, TaskState.QUEUED, LIVE, TaskFlags.DIRECTED);
    const other = placed(w, TaskState.QUEUED, DEAD, TaskFlags.DIRECTED);
    w.deaths.startFailed(LIVE, reason);
    // Settled already (a promise that never settles would hang the test until its timeout).
    assert(directed.entry.settled, "directed: settled by the repair");
    const error = await directed.outcome;
    assert(error instanceof WorkerCrashedError, "rejected with WorkerCrashedError");
    assertEquals(
      (error as Error).message,
      "Cannot run task 'job' as worker 1, which its moved buffers were sent to, failed to start: see 'cause'",
      "its message",
    );
    assertEquals((error as Error).cause, reason, "its cause");
    assert(!other.entry.settled, "a task posted to another index is left");
  },
  HANG,
);

test(
  "worker deaths: startFailed keeps a given-back (ABSENT) slot ABSENT; a slot that was not stays as the repair left it",
  () => {
    const w = world();
    const at = SleepWords.state(LIVE);
    Atomics.store(w.memory.sleep.words, at, ABSENT);
    w.deaths.startFailed(LIVE, new ModuleLoadError("file:///m.ts", "boom"));
    assertEquals(sleepState(w, LIVE), ABSENT, "still ABSENT");
    const v = world();
    v.deaths.startFailed(LIVE, new ModuleLoadError("file:///m.ts", "boom"));
    assert((sleepState(v, LIVE) & STATE_MASK) !== ABSENT, "a live slot is not made ABSENT");
  },
  HANG,
);

test("worker deaths: a repair that throws in startFailed is reported, and a sleeper is still woken", () => {
  const w = world();
  const failure = new Error("bug");
  w.reader.drain = () => {
    throw failure;
  };
  w.deaths.startFailed(LIVE, new ModuleLoadError("file:///m.ts", "boom"));
  assertEquals(w.errors.length, 0, "reported in a microtask");
  return settle().then(() => {
    assertEquals(w.errors, [[failure, "(recovery after worker 1's failed start)"]], "reported");
    assert(w.log.includes("newWork"), "a sleeper woken");
  });
}, HANG);

test(
  "worker deaths: a remote producer's task on the dead worker is failed into its slot's completion queue, and its producer woken",
  async () => {
    const w = world();
    const task = record(w, originOf(1), TaskState.RUNNING, DEAD);
    const channel = w.memory.channels[1];
    Atomics.store(channel.words, channel.waiting, 1);
    w.deaths.died(DEAD, new Error("exit"), false);
    assertEquals(stateOf(w, task), TaskState.DONE, "failed: DONE");
    const queue = new Injector(channel.queue);
    assertEquals([queue.pop(), queue.pop()], [task, QUEUE_EMPTY], "queued once to slot 1's completions");
    assertEquals(Atomics.load(channel.words, channel.waiting), 0, "its producer woken");
    const own = new Injector(w.memory.channels[0].queue);
    assertEquals(own.pop(), QUEUE_EMPTY, "nothing in the owner's completion queue");
    await settle();
  },
  HANG,
);

test(
  "worker deaths: a graph node the dead worker ran is walked; the owner's record it publishes is reported, DONE",
  async () => {
    const w = world();
    const owned = node(w, Origin.MAIN);
    w.deaths.died(DEAD, new Error("exit"), false);
    assertEquals(stateOf(w, owned), TaskState.DONE, "published: DONE");
    assertEquals(w.log.slice(0, 4), ["workerDied 0 exit", "drain", `report ${owned}`, "arm"], "reported");
    // Only what the walk published is reported: with record 0 current under generation 0 (after a wrap) and
    // DONE by a living worker, nothing but the node is reported (a stray entry would read as handle 0).
    const u = world();
    const zero = u.table.allocate();
    assertEquals(u.table.indexOf(zero), 0, "record 0");
    const base = u.table.fields.stateWord(0) - RecordWords.state;
    Atomics.store(u.table.words, base + RecordWords.generation, 0);
    u.table.fields.setWorker(0, LIVE);
    u.table.fields.storeState(0, TaskState.DONE);
    const later = node(u, Origin.MAIN);
    u.deaths.died(DEAD, new Error("exit"), false);
    assertEquals(u.log.filter((l) => l.startsWith("report")), [`report ${later}`], "reported: the node only");
    // A remote producer's node goes to its completion queue instead.
    const v = world();
    const remote = node(v, originOf(1));
    v.deaths.died(DEAD, new Error("exit"), false);
    assertEquals(stateOf(v, remote), TaskState.DONE, "published: DONE");
    assertEquals(new Injector(v.memory.channels[1].queue).pop(), remote, "in slot 1's completions");
    assert(!v.log.some((l) => l.startsWith("report")), "not reported by the owner");
    await settle();
  },
  HANG,
);

test(
  "worker deaths: a fork of another dead worker is freed; a fork whose forker lives (or is -1) is failed for its joiner",
  async () => {
    const w = world();
    w.dead.add(LIVE);
    const ofDead = record(w, Origin.FORK, TaskState.RUNNING, DEAD, 0, LIVE);
    w.deaths.died(DEAD, new Error("exit"), false);
    assert(!w.table.isCurrent(ofDead) || stateOf(w, ofDead) === TaskState.FREE, "a dead forker's fork freed");
    const v = world();
    const ofLiving = record(v, Origin.FORK, TaskState.RUNNING, DEAD, 0, LIVE);
    v.deaths.died(DEAD, new Error("exit"), false);
    assertEquals(stateOf(v, ofLiving), TaskState.DONE, "a living forker's fork failed (DONE)");
    // The index -1 is no worker (isDead is never asked about it).
    const u = world();
    u.dead.add(-1);
    const ofNone = record(u, Origin.FORK, TaskState.RUNNING, DEAD, 0, -1);
    u.deaths.died(DEAD, new Error("exit"), false);
    assertEquals(stateOf(u, ofNone), TaskState.DONE, "forker -1: failed (DONE), not freed");
    await settle();
  },
  HANG,
);

test(
  "worker deaths: poolQueuesOf names the three injectors, the completions and both free lists, each with the worker's notes",
  () => {
    const { memory } = world();
    const { layout } = memory;
    const queues = poolQueuesOf(memory, LIVE);
    const capacity = layout.shape.taskCapacity;
    assertEquals(
      queues.map((q) => [q.role, q.region.byteOffset, q.region.capacity, q.region.buffer === memory.buffer]),
      [
        ["injector", layout.injector, capacity, true],
        ["injector", layout.injectorHigh, capacity, true],
        ["injector", layout.injectorLow, capacity, true],
        ["completions", layout.completions, capacity, true],
        ["freeRecords", layout.freeRecords, capacity, true],
        ["freeBlocks", layout.freeBlocks, layout.shape.blocks, true],
      ],
      "the queues",
    );
    const at = [
      NoteWords.injector,
      NoteWords.injectorHigh,
      NoteWords.injectorLow,
      NoteWords.completions,
      NoteWords.freeRecords,
      NoteWords.freeBlocks,
    ];
    queues.forEach((q, k) => {
      const notes = memory.notes(LIVE, at[k]);
      assertEquals([q.notes.byteOffset, q.notes.length], [notes.byteOffset, NOTE_WORDS], `queue ${k}'s notes`);
    });
  },
  HANG,
);

/** The reasons of the unhandled rejections raised while `body` runs and two macrotasks after it. */
async function unhandledDuring(body: () => void): Promise<unknown[]> {
  const reasons: unknown[] = [];
  const g = globalThis as unknown as {
    addEventListener(type: string, f: (e: { reason: unknown; preventDefault(): void }) => void): void;
    removeEventListener(type: string, f: unknown): void;
    process: { on(type: string, f: (reason: unknown) => void): void; off(type: string, f: unknown): void };
  };
  const onEvent = (e: { reason: unknown; preventDefault(): void }) => (e.preventDefault(), reasons.push(e.reason));
  const onProcess = (reason: unknown) => void reasons.push(reason);
  if (runtime === "deno") g.addEventListener("unhandledrejection", onEvent);
  else g.process.on("unhandledRejection", onProcess);
  try {
    body();
    await settle();
    await settle();
  } finally {
    if (runtime === "deno") g.removeEventListener("unhandledrejection", onEvent);
    else g.process.off("unhandledRejection", onProcess);
  }
  return reasons;
}

test(
  "worker deaths: with nobody listening (no replaced or replaceFailed), a replacement that starts or fails raises nothing",
  async () => {
    const started = world();
    started.deaths.replaced = undefined;
    const raised = await unhandledDuring(() => started.deaths.died(DEAD, new Error("exit"), false));
    assertEquals(raised, [], "a started replacement: no unhandled rejection");
    assert(started.log.includes("newWork"), "a sleeper woken");
    const failed = world({ start: () => Promise.reject(new Error("setup threw")) });
    failed.deaths.replaceFailed = undefined;
    const raisedToo = await unhandledDuring(() => failed.deaths.died(DEAD, new Error("exit"), false));
    assertEquals(raisedToo, [], "a failed replacement: no unhandled rejection");
    assertEquals(failed.errors.length, 1, "the failure reported through onError");
  },
  HANG,
);

test(
  "worker deaths: a crash's cause that holds a SharedArrayBuffer is encoded by reference (the pool's shareBuffer)",
  async () => {
    const w = world();
    const task = record(w, originOf(1), TaskState.RUNNING, DEAD);
    const buffer = new SharedArrayBuffer(8);
    w.deaths.died(DEAD, Object.assign(new Error("exit"), { memory: buffer }), false);
    assertEquals(stateOf(w, task), TaskState.DONE, "failed: DONE");
    assert(w.shared.includes(buffer), "the cause's buffer registered by the pool's shareBuffer");
    await settle();
  },
  HANG,
);

test(
  "worker deaths: worker 0 is a worker like any other: the fork the dying worker 1 ran for dead worker 0 is freed, not failed",
  async () => {
    const w = world();
    w.memory.notes(LIVE, NoteWords.marks, MARK_WORDS).fill(-1);
    w.memory.notes(LIVE, NoteWords.table, TABLE_NOTE_WORDS).fill(-1);
    w.dead.add(DEAD);
    w.dead.add(LIVE);
    const fork = record(w, Origin.FORK, TaskState.RUNNING, LIVE, 0, DEAD);
    w.deaths.died(LIVE, new Error("exit"), false);
    assert(!w.table.isCurrent(fork) || stateOf(w, fork) === TaskState.FREE, "freed: nobody will join it");
    await settle();
  },
  HANG,
);
