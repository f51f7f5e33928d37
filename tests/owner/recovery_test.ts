/**
 * The main thread's repair after a worker's death (`lib/owner/recovery.ts` `recoverDeadWorker`), on the
 * shipped module with a real pool memory (`PoolMemory.create`), the owner's task table and a real ledger,
 * single-threaded: for each kind of record the dead worker may leave (a task of the main thread, of a
 * remote producer, a fork it ran, a fork of its own, a graph node, a task posted to it with moved buffers),
 * what the repair does to it (settled, failed with which error, freed, orphaned, reported, left alone), what
 * it counts, and what it does with the dead worker's marks and its sleep registration. Worker 0 is the dead
 * one, worker 1 lives; the sleep counters, the completion queue and the graph walker are stand-ins that
 * record their calls.
 *
 * Written for StrykerJS's survivors of recovery.ts (issue 47, "Mutants nobody here chose").
 */
import { decode, Encoder } from "../../lib/codec/codec.ts";
import { ModuleLoadError, WorkerCrashedError } from "../../lib/errors.ts";
import { recoverDeadWorker, type Recovered, type RecoveryScope } from "../../lib/owner/recovery.ts";
import { poolQueuesOf } from "../../lib/owner/worker_deaths.ts";
import { type Entry, TaskLedger } from "../../lib/producer/ledger.ts";
import { Deque, EMPTY, RETRY, Stealer } from "../../lib/protocol/deque.ts";
import { Injector, QUEUE_EMPTY } from "../../lib/protocol/injector.ts";
import { MARK_WORDS, MarkWords, NoteWords } from "../../lib/protocol/layout.ts";
import { ORPHANED, SET, UNSET } from "../../lib/protocol/latch.ts";
import { atomicsBinding, installSharedMemory, type SharedMemory } from "../../lib/protocol/atomics.ts";
import { RecordWords } from "../../lib/record/fields.ts";
import { Level } from "../../lib/protocol/levels.ts";
import { PoolMemory } from "../../lib/protocol/memory.ts";
import { claimSlot, originOf } from "../../lib/protocol/producers.ts";
import type { Sleep } from "../../lib/protocol/sleep.ts";
import { Origin, Outcome, TABLE_NOTE_WORDS, TaskFlags, TaskState, TaskTable } from "../../lib/record/task.ts";
import { assert, assertEquals, test } from "../_test.ts";
import { cutAt as killAt } from "../protocol/_cut_at.ts";

/**
 * Each test's bound (a hang is a failure): far above what these one-thread tests take on a loaded machine
 * (milliseconds), and below StrykerJS's timeout, so that a mutant that leaves a promise pending fails here.
 */
const HANG = 30_000;

/** The dead worker, and one that lives. */
const DEAD = 0;
const LIVE = 1;
/** Records in the pool (small: the repair walks every one). */
const CAPACITY = 16;

/** A pool of two workers and one producer slot (1, claimed), its table, a real ledger and the stand-ins. */
function world(options: { blocks?: number; blockBytes?: number; arena?: SharedArrayBuffer } = {}) {
  const memory = PoolMemory.create({
    workers: 2,
    dequeCapacity: 4,
    taskCapacity: CAPACITY,
    inlineBytes: 64,
    blockBytes: options.blockBytes ?? 256,
    blocks: options.blocks ?? 16,
    producers: 1,
  }, options.arena);
  TaskTable.init(memory);
  assertEquals(claimSlot(memory.buffer, memory.layout), 1, "slot 1");
  const table = new TaskTable(memory);
  const ledger = new TaskLedger(CAPACITY, undefined);
  const marks = memory.notes(DEAD, NoteWords.marks, MARK_WORDS);
  marks.fill(-1);
  // As the dead worker's table left them between its steps (its TaskTable sets them so at its start).
  const tableNotes = memory.notes(DEAD, NoteWords.table, TABLE_NOTE_WORDS);
  tableNotes.fill(-1);
  const calls = {
    newWork: 0,
    forgotten: [] as number[],
    completed: [] as [number, number][],
    died: [] as [number, Error][],
  };
  const sleep = {
    newWork: () => void calls.newWork++,
    forget: (worker: number) => (calls.forgotten.push(worker), false),
  } as unknown as Sleep;
  const dead = new Set([DEAD]);
  /** What the graph walker's died() returns (the records it published). */
  let published: number[] = [];
  const graph = {
    died(handle: number, error: Error) {
      calls.died.push([handle, error]);
      return published;
    },
  };
  const scope = (withGraph: boolean): RecoveryScope => ({
    table,
    ledger,
    sleep,
    encoder: new Encoder(),
    deque: memory.dequeRegion(DEAD),
    dequeNotes: memory.notes(DEAD, NoteWords.deque),
    marks,
    tableNotes,
    levels: memory.levels(),
    queues: poolQueuesOf(memory, DEAD),
    isDead: (worker) => dead.has(worker),
    complete: (slot, handle) => void calls.completed.push([slot, handle]),
    graph: withGraph ? graph : undefined,
  });
  return {
    memory,
    table,
    ledger,
    marks,
    calls,
    dead,
    setPublished: (handles: number[]) => (published = handles),
    recover: (cause: unknown = new Error("worker 0 exited with code 3"), withGraph = true): Recovered =>
      recoverDeadWorker(scope(withGraph), DEAD, cause),
  };
}

type World = ReturnType<typeof world>;

/** A record of `origin` in `state`, run (or finished) by `worker`, with `flags`: its handle. */
function record(
  w: World,
  origin: number,
  state: number,
  worker: number,
  fields: { flags?: number; forker?: number; latch?: number; level?: number } = {},
): number {
  const handle = w.table.allocate();
  assert(handle >= 0, "a record");
  const i = w.table.indexOf(handle);
  w.table.fields.setOrigin(i, origin);
  w.table.fields.setWorker(i, worker);
  w.table.fields.setFlags(i, fields.flags ?? 0);
  w.table.fields.setLevel(i, fields.level ?? Level.normal);
  if (fields.forker !== undefined) w.table.fields.setForker(i, fields.forker);
  if (fields.latch !== undefined) w.table.fields.initLatch(i, fields.latch);
  w.table.fields.storeState(i, state);
  return handle;
}

/** A task of the main thread placed in a record, with its ledger entry: the handle, entry and promise. */
function placed(w: World, state: number, worker: number, flags = 0, name = "work") {
  const handle = record(w, Origin.MAIN, state, worker, { flags });
  let entry: Entry | undefined;
  const promise = new Promise((resolve, reject) => (entry = w.ledger.open(name, 0, resolve, reject)));
  // The ledger holds the event loop while a task is pending (a pool's promise must keep its process
  // alive); a test's entries may stay pending, so the hold is dropped at once, or Node's runner never ends.
  w.ledger.releaseProcess();
  entry!.handle = handle;
  w.ledger.placed[w.table.indexOf(handle)] = entry;
  // Read at once, so that a rejection is never unhandled.
  const outcome = promise.then((value) => ({ value, error: undefined }), (error) => ({ value: undefined, error }));
  return { handle, entry: entry!, outcome };
}

const stateOf = (w: World, handle: number) => w.table.fields.loadState(w.table.indexOf(handle));
const freed = (w: World, handle: number) =>
  !w.table.isCurrent(handle) || [TaskState.FREE, TaskState.CACHED as number].includes(stateOf(w, handle));
const latchOf = (w: World, handle: number) => w.table.words[w.table.fields.latchWord(w.table.indexOf(handle))];

/** The error a record's outcome holds (as a completion reader decodes it). */
function errorIn(w: World, handle: number): Error {
  const i = w.table.indexOf(handle);
  assertEquals(w.table.fields.outcome(i), Outcome.ERROR, "the record's outcome");
  const value = decode(w.table.payloadBytes(i), w.table.payloadStart(i), w.table.fields.payloadLength(i));
  assert(value instanceof Error, `an error in the record (${String(value)})`);
  return value;
}

/** Every handle in the injector of `level`, popped. */
function drained(w: World, level: number): number[] {
  const queue = w.memory.levels().queues[level];
  const out: number[] = [];
  for (let v = queue.pop(); v !== QUEUE_EMPTY; v = queue.pop()) out.push(v);
  return out;
}

const NOTHING = { rejected: 0, forksFailed: 0, orphaned: 0, freed: 0, reclaimed: 0, unreported: [], inStep: false };

test(
  "recovery: a death with nothing held repairs nothing: zero counts, no wake, its sleep registration forgotten",
  () => {
    const w = world();
    // Records of the living worker and the main thread, in every state: none is the dead worker's.
    const others = [
      placed(w, TaskState.RUNNING, LIVE).handle,
      placed(w, TaskState.DONE, LIVE).handle,
      record(w, Origin.FORK, TaskState.RUNNING, LIVE, { forker: LIVE, latch: UNSET }),
      record(w, Origin.FORK, TaskState.DONE, LIVE, { forker: LIVE, latch: UNSET }),
      record(w, originOf(1), TaskState.RUNNING, LIVE),
    ];
    const recovered = w.recover();
    assertEquals(recovered, NOTHING, "what the repair did");
    assertEquals(w.calls.newWork, 0, "no wake: no step was under way");
    assertEquals(w.calls.forgotten, [DEAD], "the dead worker's sleep registration forgotten, once");
    assertEquals(w.calls.completed, [], "no completion queued");
    for (const h of others) assert(!freed(w, h), "another worker's record is left alone");
    assertEquals(latchOf(w, others[2]), UNSET, "another worker's fork's latch is left alone");
  },
  HANG,
);

test(
  "recovery: a main-thread task the dead worker ran is rejected with WorkerCrashedError (task, worker, cause) and its record freed",
  async () => {
    const w = world();
    const running = placed(w, TaskState.RUNNING, DEAD, 0, "crunch");
    const elsewhere = placed(w, TaskState.RUNNING, LIVE, 0, "other");
    const queued = placed(w, TaskState.QUEUED, DEAD, 0, "queued");
    const cause = new Error("worker 0 exited with code 3");
    const recovered = w.recover(cause);
    assertEquals([recovered.rejected, recovered.freed], [1, 1], "rejected, freed");
    // Settled already (a promise that never settles would hang the test until its timeout).
    assert(running.entry.settled, "running: settled by the repair");
    const { error } = await running.outcome;
    assert(error instanceof WorkerCrashedError, "a WorkerCrashedError");
    assertEquals(
      error.message,
      "Cannot finish task 'crunch' as worker 0 died while running it: see 'cause'",
      "its message",
    );
    assertEquals([error.worker, error.cause], [DEAD, cause], "its worker and cause");
    assert(freed(w, running.handle), "its record freed");
    assertEquals(w.ledger.placed[w.table.indexOf(running.handle)], undefined, "its entry taken out of the record");
    assertEquals(w.ledger.pending, 2, "the other two still pending");
    assert(!elsewhere.entry.settled && !freed(w, elsewhere.handle), "a task of another worker is left alone");
    assert(!queued.entry.settled, "a queued task (not directed) is left alone: another worker will run it");
    assertEquals(stateOf(w, queued.handle), TaskState.QUEUED, "the queued task's state");
  },
  HANG,
);

test("recovery: a main-thread task whose entry is gone (settled already, or another handle's) is only freed", () => {
  const w = world();
  const { handle, entry } = placed(w, TaskState.RUNNING, DEAD);
  // The entry placed in the record names another handle (this one was forgotten and the entry reused).
  entry.handle = handle + 1;
  const recovered = w.recover();
  assertEquals([recovered.rejected, recovered.freed], [0, 1], "rejected, freed");
  assert(!entry.settled, "the other handle's entry is not settled");
  assert(freed(w, handle), "the record freed");
  // Without an entry at all.
  const v = world();
  const bare = record(v, Origin.MAIN, TaskState.RUNNING, DEAD);
  assertEquals([v.recover().rejected, freed(v, bare)], [0, true], "no entry: not rejected, freed");
}, HANG);

test(
  "recovery: a main-thread task the dead worker finished is reported by the caller (unreported), not freed here",
  () => {
    const w = world();
    const done = placed(w, TaskState.DONE, DEAD);
    const theirs = placed(w, TaskState.DONE, LIVE);
    const recovered = w.recover();
    assertEquals(recovered.unreported, [done.handle], "the dead worker's finished task, to report");
    assertEquals([recovered.rejected, recovered.freed], [0, 0], "rejected, freed");
    assert(!freed(w, done.handle) && !done.entry.settled, "its record and entry wait for the report");
    assert(!freed(w, theirs.handle), "the living worker's finished task is left alone");
  },
  HANG,
);

test(
  "recovery: a task posted to the dead worker with moved buffers is rejected (died first, or failed to start); a cancelled one only freed",
  async () => {
    for (
      const [cause, words] of [[new Error("exit 1"), "died first"], [
        new ModuleLoadError("file:///m.ts", "boom"),
        "failed to start",
      ]] as const
    ) {
      const w = world();
      const moved = placed(w, TaskState.QUEUED, DEAD, TaskFlags.DIRECTED, "mover");
      const recovered = w.recover(cause);
      assertEquals([recovered.rejected, recovered.freed], [1, 1], `${words}: rejected, freed`);
      // Settled already (a promise that never settles would hang the test until its timeout).
      assert(moved.entry.settled, "moved: settled by the repair");
      const { error } = await moved.outcome;
      assert(error instanceof WorkerCrashedError, `${words}: a WorkerCrashedError`);
      assertEquals(
        error.message,
        `Cannot run task 'mover' as worker 0, which its moved buffers were sent to, ${words}: see 'cause'`,
        `${words}: its message`,
      );
      assertEquals([error.worker, error.cause], [DEAD, cause], `${words}: its worker and cause`);
      assert(freed(w, moved.handle), `${words}: its record freed`);
      assertEquals(w.ledger.placed[w.table.indexOf(moved.handle)], undefined, `${words}: the entry taken out`);
    }
    const w = world();
    // Cancelled while queued: its caller settled it then; only the record is left.
    const cancelled = record(w, Origin.MAIN, TaskState.CANCELLED, DEAD, { flags: TaskFlags.DIRECTED });
    // Posted to the other worker, or not directed: not the dead worker's to run.
    const theirs = placed(w, TaskState.QUEUED, LIVE, TaskFlags.DIRECTED);
    const plain = record(w, Origin.MAIN, TaskState.CANCELLED, DEAD);
    const recovered = w.recover();
    assertEquals([recovered.rejected, recovered.freed], [0, 1], "rejected, freed");
    assert(freed(w, cancelled), "the cancelled moved task's record freed");
    assert(!theirs.entry.settled && !freed(w, theirs.handle), "a task posted to another worker is left alone");
    assertEquals(stateOf(w, plain), TaskState.CANCELLED, "a cancelled queued task, not directed: left to its taker");
    // A stale entry: the record freed, the entry not settled.
    const v = world();
    const stale = placed(v, TaskState.QUEUED, DEAD, TaskFlags.DIRECTED);
    stale.entry.handle = -1;
    assertEquals([v.recover().rejected, freed(v, stale.handle), stale.entry.settled], [0, true, false], "stale entry");
  },
  HANG,
);

test(
  "recovery: a graph node the dead worker ran is settled with the crash and walked; the records the walk published are reported",
  async () => {
    const w = world();
    const node = placed(w, TaskState.RUNNING, DEAD, TaskFlags.GRAPH);
    w.table.fields.setId(w.table.indexOf(node.handle), 7);
    w.setPublished([101, 102]);
    const recovered = w.recover(new Error("gone"));
    assertEquals(recovered.rejected, 1, "rejected");
    assertEquals(recovered.unreported, [101, 102], "the walk's published records, to report");
    assertEquals(w.calls.died.length, 1, "the walker told once");
    const [handle, crash] = w.calls.died[0];
    assertEquals(handle, node.handle, "the node walked");
    assert(crash instanceof WorkerCrashedError, "walked with a WorkerCrashedError");
    assertEquals(crash.message, "Cannot finish graph node 7 as worker 0 died while running it: see 'cause'", "message");
    // Settled already (a promise that never settles would hang the test until its timeout).
    assert(node.entry.settled, "node: settled by the repair");
    const { error } = await node.outcome;
    assert(error === crash, "its own promise settles with the same error");
    assertEquals(w.ledger.placed[w.table.indexOf(node.handle)], undefined, "the entry taken out");
    assert(!freed(w, node.handle), "its record comes back through the walk, not freed here");
    // A node whose entry is gone: walked all the same. Without a walker: an ordinary task (freed).
    const v = world();
    const bare = record(v, Origin.MAIN, TaskState.RUNNING, DEAD, { flags: TaskFlags.GRAPH });
    assertEquals([v.recover().rejected, v.calls.died.length], [1, 1], "no entry: walked");
    assert(!freed(v, bare), "not freed");
    const u = world();
    const plain = placed(u, TaskState.RUNNING, DEAD, TaskFlags.GRAPH);
    assertEquals(u.recover(undefined, false).freed, 1, "no walker: freed");
    assert(plain.entry.settled && freed(u, plain.handle), "no walker: settled and freed");
    // A node of another worker: not walked.
    const t = world();
    placed(t, TaskState.RUNNING, LIVE, TaskFlags.GRAPH);
    assertEquals([t.recover().rejected, t.calls.died.length], [0, 0], "another worker's node");
  },
  HANG,
);

test(
  "recovery: a fork the dead worker ran for a living forker is failed (crash outcome, DONE, latch SET); for a dead forker, freed",
  () => {
    const w = world();
    const fork = record(w, Origin.FORK, TaskState.RUNNING, DEAD, { forker: LIVE, latch: UNSET });
    const recovered = w.recover(new Error("exit"));
    assertEquals([recovered.forksFailed, recovered.freed], [1, 0], "failed, freed");
    assertEquals(stateOf(w, fork), TaskState.DONE, "its state");
    assertEquals(latchOf(w, fork), SET, "its latch, for the joiner");
    const error = errorIn(w, fork);
    assertEquals(error.name, "WorkerCrashedError", "the error's name");
    assertEquals(
      error.message,
      "Cannot finish a forked task as worker 0 died while running it: see 'cause'",
      "its message",
    );
    // The joiner gave up on it (its latch ORPHANED): nobody reads it, so it is freed.
    const v = world();
    const orphan = record(v, Origin.FORK, TaskState.RUNNING, DEAD, { forker: LIVE, latch: ORPHANED });
    assertEquals(v.recover().forksFailed, 1, "failed");
    assert(freed(v, orphan), "an orphan's record freed");
    // Its forker is the dead worker, or another dead one: nobody joins it.
    for (const forker of [DEAD, 2]) {
      const u = world();
      u.dead.add(2);
      const f = record(u, Origin.FORK, TaskState.RUNNING, DEAD, { forker, latch: UNSET });
      const r = u.recover();
      assertEquals([r.forksFailed, r.freed, r.orphaned], [0, 1, 0], `forker ${forker}: failed, freed, orphaned`);
      assert(freed(u, f), `forker ${forker}: freed`);
    }
  },
  HANG,
);

test("recovery: a crash that does not fit the blocks is written short (no stack), still a WorkerCrashedError", () => {
  const w = world({ blocks: 2, blockBytes: 128 });
  const fork = record(w, Origin.FORK, TaskState.RUNNING, DEAD, { forker: LIVE, latch: UNSET });
  w.recover(new Error("x".repeat(2000)));
  const error = errorIn(w, fork);
  assertEquals([error.name, error.message], ["WorkerCrashedError", "worker 0 died"], "the short error");
  assertEquals([error.stack, error.cause], [undefined, undefined], "the short error's stack and cause");
  assertEquals(stateOf(w, fork), TaskState.DONE, "its state");
}, HANG);

test(
  "recovery: a fork the dead worker finished: its latch set for a living joiner, freed if orphaned or its forker is dead, left if SET",
  () => {
    const cases = [
      { forker: LIVE, latch: UNSET, latchAfter: SET, freed: false },
      { forker: LIVE, latch: SET, latchAfter: SET, freed: false },
      { forker: LIVE, latch: ORPHANED, latchAfter: ORPHANED, freed: true },
      { forker: DEAD, latch: UNSET, latchAfter: UNSET, freed: true },
      { forker: 2, latch: UNSET, latchAfter: UNSET, freed: true },
    ];
    for (const c of cases) {
      const w = world();
      w.dead.add(2);
      const fork = record(w, Origin.FORK, TaskState.DONE, DEAD, { forker: c.forker, latch: c.latch });
      const r = w.recover();
      const what = `forker ${c.forker}, latch ${c.latch}`;
      assertEquals([r.freed, freed(w, fork)], [c.freed ? 1 : 0, c.freed], `${what}: freed`);
      if (!c.freed) {
        assertEquals([latchOf(w, fork), stateOf(w, fork)], [c.latchAfter, TaskState.DONE], `${what}: latch`);
      }
      assertEquals([r.forksFailed, r.orphaned], [0, 0], `${what}: failed, orphaned`);
    }
  },
  HANG,
);

test(
  "recovery: the dead worker's own forks elsewhere are orphaned (queued, running), or freed if finished (latch SET)",
  () => {
    const w = world();
    const queued = record(w, Origin.FORK, TaskState.QUEUED, DEAD, { forker: DEAD, latch: UNSET });
    const running = record(w, Origin.FORK, TaskState.RUNNING, LIVE, { forker: DEAD, latch: UNSET });
    const done = record(w, Origin.FORK, TaskState.DONE, LIVE, { forker: DEAD, latch: SET });
    const theirs = record(w, Origin.FORK, TaskState.QUEUED, LIVE, { forker: LIVE, latch: UNSET });
    const r = w.recover();
    assertEquals([r.orphaned, r.freed, r.forksFailed], [2, 1, 0], "orphaned, freed, failed");
    assertEquals([latchOf(w, queued), latchOf(w, running)], [ORPHANED, ORPHANED], "the latches of the unfinished");
    assert(!freed(w, queued) && !freed(w, running), "the unfinished are freed by whoever finishes them");
    assert(freed(w, done), "the finished one freed here");
    assertEquals([latchOf(w, theirs), freed(w, theirs)], [UNSET, false], "a living worker's fork is left alone");
  },
  HANG,
);

test(
  "recovery: a remote producer's task the dead worker ran is failed (crash outcome, DONE) and queued to its producer",
  () => {
    for (
      const [state, flags, cause, message] of [
        [
          TaskState.RUNNING,
          0,
          new Error("exit"),
          "Cannot finish a task as worker 0 died while running it: see 'cause'",
        ],
        [
          TaskState.QUEUED,
          TaskFlags.DIRECTED,
          new Error("exit"),
          "Cannot run a task as worker 0, which it was posted to, died before running it: see 'cause'",
        ],
        [
          TaskState.QUEUED,
          TaskFlags.DIRECTED,
          new ModuleLoadError("file:///m.ts", "boom"),
          "Cannot run a task as worker 0, which it was posted to, failed to start: see 'cause'",
        ],
      ] as const
    ) {
      const w = world();
      const task = record(w, originOf(1), state, DEAD, { flags });
      const r = w.recover(cause);
      assertEquals(r.rejected, 1, `${message}: rejected`);
      assertEquals(stateOf(w, task), TaskState.DONE, `${message}: its state`);
      assertEquals(w.calls.completed, [[1, task]], `${message}: queued to slot 1`);
      const error = errorIn(w, task);
      assertEquals([error.name, error.message], ["WorkerCrashedError", message], "the error");
    }
  },
  HANG,
);

test(
  "recovery: a remote task the dead worker finished is queued again; one queued, cancelled or another worker's is left alone",
  () => {
    const w = world();
    const done = record(w, originOf(1), TaskState.DONE, DEAD);
    const queued = record(w, originOf(1), TaskState.QUEUED, DEAD);
    const cancelled = record(w, originOf(1), TaskState.CANCELLED, DEAD, { flags: TaskFlags.DIRECTED });
    const theirs = record(w, originOf(1), TaskState.RUNNING, LIVE);
    const r = w.recover();
    assertEquals(r.rejected, 0, "rejected");
    assertEquals(w.calls.completed, [[1, done]], "only the finished one queued, to slot 1");
    assertEquals(stateOf(w, queued), TaskState.QUEUED, "a queued task (not directed) waits for another worker");
    assertEquals(stateOf(w, cancelled), TaskState.CANCELLED, "a cancelled one is left to its taker");
    assertEquals(stateOf(w, theirs), TaskState.RUNNING, "another worker's is left alone");
    assertEquals(w.table.fields.outcome(w.table.indexOf(done)), 0, "the finished one's outcome untouched");
  },
  HANG,
);

test("recovery: a remote graph node the dead worker ran is walked with the crash, not written or queued here", () => {
  const w = world();
  const node = record(w, originOf(1), TaskState.RUNNING, DEAD, { flags: TaskFlags.GRAPH });
  w.table.fields.setId(w.table.indexOf(node), 3);
  const r = w.recover();
  assertEquals(r.rejected, 1, "rejected");
  assertEquals(w.calls.died.map(([h, e]) => [h, e.message]), [[
    node,
    "Cannot finish graph node 3 as worker 0 died while running it: see 'cause'",
  ]], "walked");
  assert(w.calls.died[0][1] instanceof WorkerCrashedError, "with a WorkerCrashedError");
  assertEquals(w.calls.completed, [], "not queued here");
  assertEquals(stateOf(w, node), TaskState.RUNNING, "its state left to the walk");
  // Without a walker: an ordinary remote task.
  const v = world();
  const plain = record(v, originOf(1), TaskState.RUNNING, DEAD, { flags: TaskFlags.GRAPH });
  v.recover(undefined, false);
  assertEquals([stateOf(v, plain), v.calls.completed], [TaskState.DONE, [[1, plain]]], "no walker: failed, queued");
}, HANG);

test("recovery: the records the dead worker cached are reclaimed and counted; another thread's cache is left", () => {
  const w = world();
  const mine = [record(w, Origin.MAIN, TaskState.CACHED, DEAD), record(w, Origin.MAIN, TaskState.CACHED, DEAD)];
  const theirs = record(w, Origin.MAIN, TaskState.CACHED, LIVE);
  const r = w.recover();
  assertEquals([r.reclaimed, r.freed], [2, 0], "reclaimed, freed");
  for (const h of mine) assertEquals(stateOf(w, h), TaskState.FREE, "a reclaimed record is FREE");
  assertEquals(stateOf(w, theirs), TaskState.CACHED, "the living worker's cache is left");
}, HANG);

test(
  "recovery: a task in the held or moving mark (QUEUED or CANCELLED) goes back to its level's injector, once; the marks are cleared",
  () => {
    for (const mark of [MarkWords.held, MarkWords.moving]) {
      for (const state of [TaskState.QUEUED, TaskState.CANCELLED]) {
        const w = world();
        const task = record(w, Origin.MAIN, state, DEAD, { level: Level.high });
        w.marks[mark] = task;
        const r = w.recover();
        const what = `mark ${mark}, state ${state}`;
        assert(r.inStep, `${what}: in a step`);
        assertEquals(drained(w, Level.high), [task], `${what}: in the high injector`);
        assertEquals([drained(w, Level.normal), drained(w, Level.low)], [[], []], `${what}: in no other`);
        assertEquals(w.marks[mark], -1, `${what}: the mark cleared`);
        assertEquals(w.calls.newWork, 1, `${what}: a sleeper woken to look`);
        assertEquals(stateOf(w, task), state, `${what}: its state`);
      }
    }
  },
  HANG,
);

test("recovery: a held or moving mark whose task started, finished or was reused is not pushed", () => {
  for (const mark of [MarkWords.held, MarkWords.moving]) {
    for (const state of [TaskState.RUNNING, TaskState.DONE]) {
      const w = world();
      const task = record(w, Origin.MAIN, state, LIVE);
      w.marks[mark] = task;
      const r = w.recover();
      assert(r.inStep, "in a step");
      assertEquals(drained(w, Level.normal), [], `mark ${mark}, state ${state}: pushed nowhere`);
      assertEquals([w.marks[mark], w.calls.newWork], [-1, 0], `mark ${mark}, state ${state}: cleared, no wake`);
    }
    // A stale handle: its record freed and taken again for another task, QUEUED.
    const w = world();
    const old = record(w, Origin.MAIN, TaskState.QUEUED, DEAD);
    w.table.releaseHandle(old);
    let next = -1;
    for (let k = 0; k < CAPACITY && w.table.indexOf(next) !== w.table.indexOf(old); k++) {
      next = record(w, Origin.MAIN, TaskState.QUEUED, LIVE);
    }
    assertEquals(w.table.indexOf(next), w.table.indexOf(old), "the record reused");
    w.marks[mark] = old;
    w.recover();
    assertEquals(drained(w, Level.normal), [], `mark ${mark}: a stale handle is not pushed`);
  }
}, HANG);

test("recovery: a fork in the pushing or consuming mark still QUEUED is freed; started or finished, it is not", () => {
  for (const mark of [MarkWords.pushing, MarkWords.consuming]) {
    const w = world();
    const fork = record(w, Origin.FORK, TaskState.QUEUED, DEAD, { forker: LIVE, latch: UNSET });
    w.marks[mark] = fork;
    const r = w.recover();
    assert(r.inStep, "in a step");
    assert(freed(w, fork), `mark ${mark}: freed`);
    assertEquals(w.marks[mark], -1, `mark ${mark}: cleared`);
    assertEquals(drained(w, Level.normal), [], `mark ${mark}: not queued`);
    const v = world();
    const running = record(v, Origin.FORK, TaskState.RUNNING, LIVE, { forker: LIVE, latch: UNSET });
    v.marks[mark] = running;
    v.recover();
    assertEquals(stateOf(v, running), TaskState.RUNNING, `mark ${mark}: a running fork is left`);
  }
}, HANG);

test("recovery: an orphan in the freeing mark (DONE) is freed; any other state is left", () => {
  const w = world();
  const orphan = record(w, Origin.FORK, TaskState.DONE, LIVE, { forker: LIVE, latch: SET });
  w.marks[MarkWords.freeing] = orphan;
  const r = w.recover();
  assert(r.inStep, "in a step");
  assert(freed(w, orphan), "freed");
  assertEquals(w.marks[MarkWords.freeing], -1, "cleared");
  const v = world();
  const running = record(v, Origin.FORK, TaskState.RUNNING, LIVE, { forker: LIVE, latch: UNSET });
  v.marks[MarkWords.freeing] = running;
  v.recover();
  assertEquals(stateOf(v, running), TaskState.RUNNING, "a running fork is left");
}, HANG);

test("recovery: every mark alone says the worker died inside a step; no mark and clean notes say it did not", () => {
  for (const mark of [MarkWords.held, MarkWords.moving, MarkWords.pushing, MarkWords.consuming, MarkWords.freeing]) {
    const w = world();
    // A handle of no current record: the repair ignores it, but it was a step under way.
    w.marks[mark] = CAPACITY * 4 + 1;
    assert(w.recover().inStep, `mark ${mark}: in a step`);
  }
  assert(!world().recover().inStep, "no mark: not in a step");
}, HANG);

/** Every record the main thread can take now (its allocations until none is left), as indices. */
function allFree(w: World): number[] {
  const out: number[] = [];
  for (let h = w.table.allocate(); h >= 0; h = w.table.allocate()) out.push(w.table.indexOf(h));
  return out.sort((a, b) => a - b);
}

test(
  "recovery: a record the dead worker was taking or giving back, killed at any access: every record is free once after recovery",
  () => {
    let deaths = 0;
    for (const step of ["allocate", "flush"] as const) {
      for (let n = 0;; n++) {
        const w = world();
        // The dead worker's own table (its cache and notes, in the pool's buffer).
        const mine = new TaskTable(w.memory, { owner: DEAD });
        let died: boolean;
        if (step === "allocate") died = killAt(n, () => mine.allocate());
        else {
          const taken = [mine.allocate(), mine.allocate(), mine.allocate()];
          for (const h of taken) mine.releaseHandle(h);
          died = killAt(n, () => mine.flushCache());
        }
        const r = w.recover();
        assertEquals(
          allFree(w),
          Array.from({ length: CAPACITY }, (_, i) => i),
          `${step} killed at access ${n}${died ? "" : " (not killed)"}: the records free after recovery`,
        );
        if (died) {
          deaths++;
          assertEquals(r.freed, 0, `${step}, ${n}: no task freed`);
        }
        if (!died) break;
      }
    }
    assert(deaths >= 4, `deaths inside the steps (${deaths})`);
  },
  HANG,
);

test(
  "recovery: a record step cut short by a throw, then its repair killed at any access: every record is free once after recovery",
  () => {
    let deaths = 0;
    for (const step of ["allocate", "release"] as const) {
      for (let cut = 0;; cut++) {
        let stepCut = false;
        for (let n = 0;; n++) {
          const w = world();
          const mine = new TaskTable(w.memory, { owner: DEAD });
          const taken = step === "release" ? mine.allocate() : -1;
          if (taken >= 0) mine.fields.storeState(mine.indexOf(taken), TaskState.RUNNING);
          // The step cut short as a stack overflow at that access leaves it (the thread lives on) ...
          stepCut = killAt(cut, () => step === "allocate" ? mine.allocate() : mine.releaseHandle(taken));
          if (!stepCut) break;
          // ... then the thread's own repair (at the top of its loop) is where it is killed.
          const died = killAt(n, () => mine.repairCut());
          w.recover();
          assertEquals(
            allFree(w),
            Array.from({ length: CAPACITY }, (_, i) => i),
            `${step} cut at access ${cut}, its repair killed at access ${n}${died ? "" : " (not killed)"}`,
          );
          if (!died) break;
          deaths++;
        }
        if (!stepCut) break;
      }
    }
    assert(deaths >= 4, `deaths inside the repairs (${deaths})`);
  },
  HANG,
);

test(
  "recovery: a push into its deque or the injector cut short at any access is completed, counted as a death in a step, and wakes a sleeper",
  () => {
    let cases = 0;
    for (const where of ["deque", "injector"] as const) {
      for (let n = 0;; n++) {
        const w = world();
        const task = record(w, Origin.MAIN, TaskState.QUEUED, DEAD);
        const region = w.memory.dequeRegion(DEAD);
        const dequeNotes = w.memory.notes(DEAD, NoteWords.deque);
        const deque = new Deque(region, dequeNotes);
        // Its handle on the normal level's injector, with its notes (the first of poolQueuesOf's).
        const normal = poolQueuesOf(w.memory, DEAD)[0];
        const injector = new Injector(normal.region, normal.notes);
        const died = killAt(n, () => where === "deque" ? deque.push(task) : injector.push(task));
        if (!died) break;
        const cut = where === "deque" ? new Deque(region, dequeNotes).cutShort : injector.cutShort;
        const r = w.recover();
        assertEquals(r.inStep, cut, `${where}, ${n}: a death in a step iff its notes say one was under way`);
        assertEquals(w.calls.newWork, cut ? 1 : 0, `${where}, ${n}: a sleeper woken iff a step was completed`);
        if (cut) cases++;
        // The task published at most once, wherever the repair left it.
        const heir = new Deque(region, dequeNotes);
        let times = 0;
        for (let v = heir.pop(); v !== EMPTY; v = heir.pop()) if (v === task) times++;
        times += drained(w, Level.normal).filter((v) => v === task).length;
        assert(times <= 1, `${where}, ${n}: queued ${times} times`);
      }
    }
    assert(cases >= 2, `pushes cut short inside their step (${cases})`);
  },
  HANG,
);

/**
 * Runs `op` with the shared-memory facade's accesses to `words[at]` of kind `key` (`load`, `exchange`…)
 * preceded, the first time, by `before()`: another thread's step landing right before this thread's access.
 */
function before(words: Int32Array, at: number, key: string, step: () => void, op: () => void): boolean {
  let landed = false;
  const binding = { ...atomicsBinding } as Record<string, unknown>;
  const real = (atomicsBinding as unknown as Record<string, (...args: unknown[]) => unknown>)[key];
  binding[key] = (...args: unknown[]) => {
    if (!landed && args[0] === words && args[1] === at) {
      landed = true;
      const restoreInner = installSharedMemory(atomicsBinding);
      try {
        step();
      } finally {
        restoreInner();
      }
    }
    return real(...args);
  };
  const restore = installSharedMemory(binding as unknown as SharedMemory);
  try {
    op();
  } finally {
    restore();
  }
  return landed;
}

test(
  "recovery: freed and cached records are skipped whatever their old words say (a fork of the dead worker, a remote task it ran)",
  () => {
    const w = world();
    const old = [
      record(w, Origin.FORK, TaskState.RUNNING, DEAD, { forker: DEAD, latch: UNSET }),
      record(w, Origin.FORK, TaskState.DONE, DEAD, { forker: DEAD, latch: UNSET }),
      record(w, originOf(1), TaskState.RUNNING, DEAD),
      record(w, Origin.MAIN, TaskState.RUNNING, DEAD),
    ];
    // Freed (FREE) or cached by the living worker (CACHED) since: the words of their last task stay.
    old.forEach((h, k) => {
      const i = w.table.indexOf(h);
      if (k % 2 === 0) w.table.fields.storeState(i, TaskState.FREE);
      else {
        w.table.fields.setWorker(i, LIVE);
        w.table.fields.storeState(i, TaskState.CACHED);
      }
    });
    const r = w.recover();
    assertEquals(r, NOTHING, "what the repair did");
    assertEquals(latchOf(w, old[0]), UNSET, "a freed fork's latch is not orphaned");
    assertEquals(latchOf(w, old[1]), UNSET, "a cached fork's latch is not orphaned");
    assertEquals(w.calls.completed, [], "no completion queued");
    assertEquals(
      old.map((h) => stateOf(w, h)),
      [TaskState.FREE, TaskState.CACHED, TaskState.FREE, TaskState.CACHED],
      "their states",
    );
  },
  HANG,
);

test(
  "recovery: a task with moved buffers that the dead worker had started is rejected as running, not as never started",
  () => {
    const w = world();
    const started = placed(w, TaskState.RUNNING, DEAD, TaskFlags.DIRECTED, "mover");
    const r = w.recover();
    assertEquals([r.rejected, r.freed], [1, 1], "rejected, freed");
    assert(started.entry.settled, "settled by the repair");
    return started.outcome.then(({ error }) => {
      assertEquals(
        (error as Error).message,
        "Cannot finish task 'mover' as worker 0 died while running it: see 'cause'",
        "its message",
      );
    });
  },
  HANG,
);

test("recovery: a graph node whose entry names another handle is walked, but that entry is not settled", () => {
  const w = world();
  const node = placed(w, TaskState.RUNNING, DEAD, TaskFlags.GRAPH);
  node.entry.handle = node.handle + 1;
  const r = w.recover();
  assertEquals([r.rejected, w.calls.died.length], [1, 1], "rejected and walked");
  assert(!node.entry.settled, "the other handle's entry is not settled");
  assertEquals(w.ledger.placed[w.table.indexOf(node.handle)], node.entry, "that entry stays placed");
}, HANG);

test(
  "recovery: a fork another worker finished for a living forker, not yet published (latch UNSET), is left to that worker",
  () => {
    const w = world();
    const fork = record(w, Origin.FORK, TaskState.DONE, LIVE, { forker: LIVE, latch: UNSET });
    const r = w.recover();
    assertEquals(r, NOTHING, "what the repair did");
    assertEquals([latchOf(w, fork), stateOf(w, fork)], [UNSET, TaskState.DONE], "its latch and state");
  },
  HANG,
);

test(
  "recovery: a fork the dead worker finished, orphaned by its joiner between the repair's read of the latch and its set, is freed once",
  () => {
    const w = world();
    const fork = record(w, Origin.FORK, TaskState.DONE, DEAD, { forker: LIVE, latch: UNSET });
    const latchAt = w.table.fields.latchWord(w.table.indexOf(fork));
    let r: Recovered | undefined;
    const landed = before(
      w.table.words,
      latchAt,
      "exchange",
      () => Atomics.store(w.table.words, latchAt, ORPHANED),
      () => (r = w.recover()),
    );
    assert(landed, "the joiner's orphaning landed before the repair's set");
    assertEquals(r!.freed, 1, "freed, counted once");
    assert(freed(w, fork), "the record freed");
    assertEquals(r!.forksFailed + r!.orphaned, 0, "not failed, not orphaned");
  },
  HANG,
);

test(
  "recovery: a fork of the dead worker orphaned already (its join cut short) is neither counted nor freed again",
  () => {
    const w = world();
    const fork = record(w, Origin.FORK, TaskState.RUNNING, LIVE, { forker: DEAD, latch: ORPHANED });
    const r = w.recover();
    assertEquals([r.orphaned, r.freed], [0, 0], "orphaned, freed");
    assertEquals([latchOf(w, fork), stateOf(w, fork)], [ORPHANED, TaskState.RUNNING], "its latch and state");
  },
  HANG,
);

/** A record whose generation is 0 (after its generation wrapped): its handle is its index. */
function wrapped(w: World, index: number, origin: number, state: number, worker: number): number {
  const words = w.table.words;
  const base = w.table.fields.stateWord(index) - RecordWords.state;
  Atomics.store(words, base + RecordWords.generation, 0);
  w.table.fields.setOrigin(index, origin);
  w.table.fields.setWorker(index, worker);
  w.table.fields.setFlags(index, 0);
  w.table.fields.setLevel(index, Level.normal);
  w.table.fields.setForker(index, LIVE);
  w.table.fields.initLatch(index, UNSET);
  w.table.fields.storeState(index, state);
  const handle = w.table.handleOf(index);
  assertEquals([handle, w.table.isCurrent(handle)], [index, true], "a current handle of generation 0");
  return handle;
}

test(
  "recovery: marks that name a handle of generation 0 (after a wrap; handle 1 is record 1) are repaired like any other",
  () => {
    // Record 1's handle after its generation wrapped is 1: no mark value but -1 means "none".
    const index = 1;
    for (const mark of [MarkWords.held, MarkWords.moving]) {
      const w = world();
      // Record 1 taken from the free list first, so that it is in no queue.
      while (w.table.indexOf(w.table.allocate()) !== index);
      const task = wrapped(w, index, Origin.MAIN, TaskState.QUEUED, DEAD);
      w.marks[mark] = task;
      w.recover();
      assertEquals(drained(w, Level.normal), [task], `mark ${mark}: handle 1 pushed back`);
    }
    for (const mark of [MarkWords.pushing, MarkWords.consuming, MarkWords.freeing]) {
      const w = world();
      while (w.table.indexOf(w.table.allocate()) !== index);
      const state = mark === MarkWords.freeing ? TaskState.DONE : TaskState.QUEUED;
      const task = wrapped(w, index, Origin.FORK, state, LIVE);
      w.marks[mark] = task;
      w.recover();
      assert(freed(w, task), `mark ${mark}: handle 1 freed`);
    }
  },
  HANG,
);

test("recovery: a remote graph node the dead worker finished is queued again to its producer, not walked", () => {
  const w = world();
  const node = record(w, originOf(1), TaskState.DONE, DEAD, { flags: TaskFlags.GRAPH });
  const r = w.recover();
  assertEquals([r.rejected, w.calls.died.length], [0, 0], "not rejected, not walked");
  assertEquals(w.calls.completed, [[1, node]], "queued again to slot 1");
}, HANG);

test(
  "recovery: a remote task whose record its producer freed and reused between the scan's reads is left to the new task",
  () => {
    const w = world();
    const task = record(w, originOf(1), TaskState.DONE, DEAD);
    const i = w.table.indexOf(task);
    const genAt = w.table.fields.stateWord(i) - RecordWords.state + RecordWords.generation;
    let r: Recovered | undefined;
    // The producer reads the completion, frees the record and takes it for a new task (QUEUED, another
    // generation, worker 0's word still there) right before the scan reads the handle.
    const landed = before(w.table.words, genAt, "load", () => {
      Atomics.store(w.table.words, genAt, Atomics.load(w.table.words, genAt) + 1);
      w.table.fields.storeState(i, TaskState.QUEUED);
    }, () => (r = w.recover()));
    assert(landed, "the reuse landed before the scan's read of the handle");
    assertEquals(r!.rejected, 0, "rejected");
    assertEquals(w.calls.completed, [], "no completion queued for the new task");
    assertEquals(stateOf(w, w.table.handleOf(i)), TaskState.QUEUED, "the new task still QUEUED");
  },
  HANG,
);

test(
  "recovery: the crash written into a record keeps its cause; a cause that cannot be encoded still leaves the crash's message",
  () => {
    const w = world();
    const fork = record(w, Origin.FORK, TaskState.RUNNING, DEAD, { forker: LIVE, latch: UNSET });
    w.recover(new Error("exit 7"));
    const cause = errorIn(w, fork).cause;
    assert(cause instanceof Error, `a cause (${String(cause)})`);
    assertEquals(cause.message, "exit 7", "its message");
    // A cause whose own cause no codec can carry (a function): the crash goes with a stand-in cause.
    const v = world();
    const other = record(v, Origin.FORK, TaskState.RUNNING, DEAD, { forker: LIVE, latch: UNSET });
    v.recover(new Error("exit 8", { cause: () => 1 }));
    const error = errorIn(v, other);
    assertEquals(
      error.message,
      "Cannot finish a forked task as worker 0 died while running it: see 'cause'",
      "the crash's message",
    );
  },
  HANG,
);

test("recovery: a slab the dead worker took for a payload and never put in a record is emptied", () => {
  // A payload arena (large payloads go whole into one of its slabs).
  const w = world({ arena: new SharedArrayBuffer(1 << 20) });
  const mine = new TaskTable(w.memory, { owner: DEAD });
  // The worker's payload path takes a slab before a record names it (record/payload.ts takeSlab).
  const slabs = (mine as unknown as { slabs: { take(n: number): number; census(): { made: number; free: number } } })
    .slabs;
  const slot = slabs.take(4096);
  assert(slot >= 0, `a slab taken (${slot})`);
  assertEquals(slabs.census(), { made: 1, free: 0 }, "held by the dead worker");
  w.recover();
  assertEquals(slabs.census(), { made: 0, free: 0 }, "emptied after recovery (its bytes back to the arena)");
}, HANG);

test(
  "recovery: a record with overflow blocks released by the dead worker, killed at any access: every block is free once after recovery",
  () => {
    let deaths = 0;
    for (let n = 0;; n++) {
      const w = world();
      const mine = new TaskTable(w.memory, { owner: DEAD });
      const h = mine.allocate();
      // Past the inline bytes: a chain of overflow blocks.
      assert(mine.writePayload(mine.indexOf(h), new Uint8Array(1000).fill(7)), "the payload written");
      // Published and run (a CACHED record is the allocator's still, and releaseHandle leaves it).
      mine.fields.storeState(mine.indexOf(h), TaskState.RUNNING);
      const died = killAt(n, () => mine.releaseHandle(h));
      w.recover();
      const queue = new Injector(w.memory.records.freeBlocks);
      const blocks: number[] = [];
      for (let v = queue.pop(); v !== QUEUE_EMPTY; v = queue.pop()) blocks.push(v);
      assertEquals(
        blocks.sort((a, b) => a - b),
        Array.from({ length: 16 }, (_, i) => i),
        `killed at access ${n}${died ? "" : " (not killed)"}: the free blocks after recovery`,
      );
      if (!died) break;
      deaths++;
    }
    assert(deaths >= 4, `deaths inside the release (${deaths})`);
  },
  HANG,
);

test(
  "recovery: a pop of its last task cut short at any access leaves the task to thieves at once (before any heir), once",
  () => {
    let cuts = 0;
    for (let n = 0;; n++) {
      const w = world();
      const task = record(w, Origin.MAIN, TaskState.QUEUED, DEAD);
      const region = w.memory.dequeRegion(DEAD);
      const deque = new Deque(region, w.memory.notes(DEAD, NoteWords.deque));
      assert(deque.push(task), "pushed");
      let popped: number = EMPTY;
      const died = killAt(n, () => (popped = deque.pop()));
      if (!died) {
        assertEquals(popped, task, "a whole pop returns it");
        break;
      }
      const cut = new Deque(region, w.memory.notes(DEAD, NoteWords.deque)).cutShort;
      const r = w.recover();
      assertEquals([r.inStep, w.calls.newWork], [cut, cut ? 1 : 0], `pop killed at ${n}: in a step, woken`);
      if (cut) cuts++;
      // No heir yet: only thieves.
      const thief = new Stealer(region);
      let times = 0;
      for (let v = thief.steal(); v !== EMPTY; v = thief.steal()) if (v !== RETRY && v === task) times++;
      assertEquals(times, 1, `pop killed at access ${n}: times a thief takes the task`);
    }
    assert(cuts >= 3, `pops cut short inside their noted step (${cuts})`);
  },
  HANG,
);
