/**
 * `CompletionReader`, a producer's reader of its completion queue (`lib/producer/completion.ts`), on one
 * thread with a real pool memory, task table, ledger and queue: what a drain settles and frees, the
 * record's generation that makes a second report of a task a no-op, the order of `arm`'s steps (its count
 * of waiting for a record, its waiting word, the re-checks that take the word back), the wake of another
 * producer that waits for a record (the settler side of spec/RecordWait.tla), results that come by
 * message, and when the reader lingers instead of waiting. The interleavings of the two sides are run
 * under the harness (tests/lincheck/producers_test.ts); these pin the values each call reads and writes,
 * which StrykerJS changed without the pool's suites noticing (issue 47, "Mutants nobody here chose").
 *
 * No worker runs: the test writes each result as a worker would (its encoded outcome in the record, its
 * handle pushed to the queue). Nothing depends on timing: waits are awaited, never timed.
 */
import { BufferRegistry } from "../../lib/codec/buffers.ts";
import { Encoder } from "../../lib/codec/codec.ts";
import { encodeOutcome } from "../../lib/codec/outcome.ts";
import { resolveOptions } from "../../lib/options.ts";
import { CompletionReader } from "../../lib/producer/completion.ts";
import { TaskLedger } from "../../lib/producer/ledger.ts";
import { Injector } from "../../lib/protocol/injector.ts";
import { ControlWords, PROGRESS_CELL_WORDS } from "../../lib/protocol/layout.ts";
import { PoolMemory } from "../../lib/protocol/memory.ts";
import { claimSlot } from "../../lib/protocol/producers.ts";
import { CellPhase, CellWords, NUMBER_LENGTH, ProgressCells } from "../../lib/progress/cell.ts";
import { PAYLOAD_BY_MESSAGE, TaskState, TaskTable } from "../../lib/record/task.ts";
import { assertEquals, test, within } from "../_test.ts";

/** A producer's hooks whose answers the test sets, and which count their calls. */
function newHooks() {
  return {
    drains: 0,
    freedCalls: 0,
    starving: false,
    waitingForRoom: false,
    room: false,
    ended: false,
    backlog: 0,
    beforeDrain(): void {
      this.drains++;
    },
    freed(): void {
      this.freedCalls++;
    },
    starved(): boolean {
      return this.starving;
    },
    waitsForRoom(): boolean {
      return this.waitingForRoom;
    },
    roomFree(): boolean {
      return this.room;
    },
    terminated(): boolean {
      return this.ended;
    },
    backlogLength(): number {
      return this.backlog;
    },
  };
}

/**
 * `CompletionReader` as a page loads it: completion.ts imported again (a module instance of its own, by
 * the query) while `process` is hidden, so that its `LINGERS` is false, as in a browser. Its own imports
 * resolve to the modules the rest of this file uses. (Bun ignores a query on a file URL, not on a relative
 * specifier: hence the relative one.)
 */
async function browserReader(): Promise<typeof CompletionReader> {
  const g = globalThis as { process?: unknown };
  const descriptor = Object.getOwnPropertyDescriptor(globalThis, "process");
  delete g.process;
  try {
    assertEquals(typeof g.process, "undefined", "process hidden");
    const specifier: string = "../../lib/producer/completion.ts?browser";
    const module: { CompletionReader: typeof CompletionReader } = await import(specifier);
    assertEquals(module.CompletionReader === CompletionReader, false, "a module instance of its own");
    return module.CompletionReader;
  } finally {
    if (descriptor !== undefined) Object.defineProperty(globalThis, "process", descriptor);
  }
}

/** The reader of a page (see {@link browserReader}). */
const BrowserCompletionReader = await browserReader();

/** A pool memory with two producer slots (slot 1 claimed), slot 0's reader, its table, ledger and queue. */
function world(Reader: typeof CompletionReader = CompletionReader) {
  const shape = resolveOptions({ workers: 1, producers: 2, taskCapacity: 128 }).shape;
  const memory = PoolMemory.create(shape);
  TaskTable.init(memory);
  assertEquals(claimSlot(memory.buffer, memory.layout), 1, "slot 1 claimed");
  const table = new TaskTable(memory);
  const channel = memory.channels[0];
  const completions = new Injector(channel.queue);
  const ledger = new TaskLedger(shape.taskCapacity, undefined);
  const buffers = new BufferRegistry(new Int32Array(1), 0, () => {});
  const hooks = newHooks();
  const reader = new Reader({ memory, channel, completions, table, ledger, buffers, hooks });
  return { memory, table, channel, completions, ledger, buffers, hooks, reader, capacity: shape.taskCapacity };
}

type World = ReturnType<typeof world>;

/** How a task's promise settled. */
type Settlement = { value: unknown } | { error: unknown } | "pending";

/** A task submitted and placed in a fresh record (not finished yet). */
function submit(w: World, onSettle?: () => void) {
  let outcome: Settlement = "pending";
  const entry = w.ledger.open("t", 0, (value) => {
    outcome = { value };
    onSettle?.();
  }, (error) => outcome = { error });
  const handle = w.table.allocate();
  const index = w.table.indexOf(handle);
  w.table.fields.storeState(index, TaskState.QUEUED);
  entry.handle = handle;
  w.ledger.placed[index] = entry;
  return { entry, handle, index, outcome: () => outcome };
}

/** Writes `value` as a worker would (in the record, or `byMessage`), without queueing the completion. */
function write(w: World, index: number, value: unknown, failed = false, byMessage = false): Uint8Array {
  const encoder = new Encoder();
  const outcome = encodeOutcome(encoder, value, failed);
  const bytes = encoder.snapshot();
  w.table.fields.storeState(index, TaskState.DONE);
  if (byMessage) w.table.fields.setPayloadLength(index, PAYLOAD_BY_MESSAGE);
  else assertEquals(w.table.writeEncoded(index, encoder), true, "the payload fits");
  w.table.fields.setOutcome(index, outcome);
  return bytes;
}

/** A task submitted, finished with `value` and its completion queued. */
function finish(w: World, value: unknown, failed = false, onSettle?: () => void) {
  const task = submit(w, onSettle);
  write(w, task.index, value, failed);
  assertEquals(w.completions.push(task.handle), true, "queued");
  return task;
}

/** Every free record taken (as by other tasks, queued): their handles. */
function takeAll(w: World): number[] {
  const taken: number[] = [];
  for (let h = w.table.allocate(); h !== -1; h = w.table.allocate()) {
    w.table.fields.storeState(w.table.indexOf(h), TaskState.QUEUED);
    taken.push(h);
  }
  return taken;
}

/** Whether record `index` is free (in the shared list or a cache). */
function isFree(w: World, index: number): boolean {
  const state = w.table.fields.loadState(index);
  return state === TaskState.FREE || state === TaskState.CACHED;
}

function waitingWord(w: World, slot = 0): number {
  return Atomics.load(w.memory.channels[slot].words, w.memory.channels[slot].waiting);
}

function countedWord(w: World, slot = 0): number {
  return Atomics.load(w.memory.channels[slot].words, w.memory.channels[slot].counted);
}

function recordWaiters(w: World): number {
  return Atomics.load(w.memory.control, ControlWords.recordWaiters);
}

/** Lets timers and promise reactions run. */
function turn(ms = 0): Promise<void> {
  return within(new Promise((r) => setTimeout(r, ms)), 30_000, "a turn of the event loop");
}

/** Resolves after `check()` holds, awaiting macrotasks; fails (a hang, with `what`) after 10 s. */
async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`hang: ${what} not seen in 10 s`);
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

test("completion: a drain settles each queued task with its value or error, frees its record, and says how many it read", () => {
  const w = world();
  const a = finish(w, 42);
  const b = finish(w, new RangeError("no"), true);
  assertEquals(w.ledger.pending, 2, "two pending");
  assertEquals(w.reader.drain(), 2, "two read");
  assertEquals(a.outcome(), { value: 42 }, "the value");
  const error = (b.outcome() as { error: unknown }).error;
  assertEquals(error instanceof RangeError && error.message, "no", "the error, as the class it was");
  assertEquals([w.ledger.placed[a.index], w.ledger.placed[b.index]], [undefined, undefined], "no longer placed");
  assertEquals(w.ledger.pending, 0, "none pending");
  assertEquals([isFree(w, a.index), isFree(w, b.index)], [true, true], "both records freed");
  assertEquals({ drains: w.hooks.drains, freed: w.hooks.freedCalls }, { drains: 1, freed: 1 }, "the hooks");
  assertEquals(w.reader.drain(), 0, "nothing more to read");
});

test("completion: a completion of a task settled already frees its record once; a second report frees nothing", () => {
  const w = world();
  const a = finish(w, 1);
  // Settled already (a worker's death, say): no longer placed.
  w.ledger.placed[a.index] = undefined;
  w.ledger.settle(a.entry, 0, "early");
  w.ledger.forgotten.add(a.handle);
  assertEquals(w.reader.drain(), 1, "read");
  assertEquals(isFree(w, a.index), true, "its record freed");
  assertEquals(w.ledger.forgotten.has(a.handle), false, "no longer forgotten");
  assertEquals(a.outcome(), { value: "early" }, "settled once, as before");
  // Its record reused by another task: the stale report leaves that one alone.
  const others: number[] = [];
  let b = submit(w);
  while (b.index !== a.index) {
    others.push(b.handle);
    w.ledger.placed[b.index] = undefined;
    w.ledger.settle(b.entry, 0, null);
    b = submit(w);
  }
  w.reader.report(a.handle);
  assertEquals(isFree(w, b.index), false, "the new task's record is kept");
  assertEquals(b.outcome(), "pending", "and its task pending");
  write(w, b.index, "b");
  w.reader.report(b.handle);
  assertEquals(b.outcome(), { value: "b" }, "a report settles as a read does");
  assertEquals(isFree(w, b.index), true, "and frees the record");
  for (const h of others) w.table.releaseHandle(h);
});

test("completion: a drain inside a drain, and a drain of a stopped reader, read nothing", () => {
  const w = world();
  let inner = -1;
  // A drain begun from a settle (user code would run there, were it not deferred) is guarded.
  finish(w, 1, false, () => {
    inner = w.reader.drain();
  });
  const b = finish(w, 2);
  assertEquals(w.reader.drain(), 2, "both read by the outer drain");
  assertEquals(inner, 0, "the nested drain read nothing");
  assertEquals(b.outcome(), { value: 2 }, "b settled");
  const c = finish(w, 3);
  w.reader.stop();
  assertEquals(w.reader.drain(), 0, "a stopped reader reads nothing");
  assertEquals(w.completions.length, 1, "c stays queued");
  assertEquals(c.outcome(), "pending", "and pending");
  w.reader.report(c.handle);
  assertEquals(c.outcome(), "pending", "a report to a stopped reader does nothing");
  w.ledger.settle(c.entry, 0, null);
});

test("completion: a reader stopped in its beforeDrain hook reads nothing", () => {
  const w = world();
  const a = finish(w, 1);
  w.hooks.beforeDrain = () => w.reader.stop();
  assertEquals(w.reader.drain(), 0, "nothing read");
  assertEquals(w.completions.length, 1, "still queued");
  w.ledger.settle(a.entry, 0, null);
});

test("completion: arm with nothing pending does not wait; with a task pending it stores its waiting word and a wake settles it", async () => {
  const w = world();
  w.reader.arm();
  assertEquals(waitingWord(w), 0, "nothing pending: no wait");
  const a = submit(w);
  w.reader.arm();
  assertEquals(waitingWord(w), 1, "waits: the word says so");
  assertEquals(recordWaiters(w), 0, "not starved: not counted");
  // The worker's side: result, push, then the wake (protocol/producers.ts wakeProducer).
  write(w, a.index, "done");
  w.completions.push(a.handle);
  assertEquals(Atomics.exchange(w.channel.words, w.channel.waiting, 0), 1, "the worker takes the word");
  Atomics.notify(w.channel.words, w.channel.waiting, 1);
  await until(() => a.outcome() !== "pending", "the woken reader's settle");
  assertEquals(a.outcome(), { value: "done" }, "settled by the wake");
  assertEquals(waitingWord(w), 0, "no longer waiting");
  w.reader.arm();
  assertEquals(waitingWord(w), 0, "nothing pending now: no wait");
});

test("completion: arm finds a completion queued before its store, takes its word back and reads it", async () => {
  const w = world();
  const a = finish(w, 7);
  w.reader.arm();
  assertEquals(waitingWord(w), 0, "word taken back (MainRetractWaiting)");
  await Promise.resolve();
  assertEquals(a.outcome(), { value: 7 }, "read without a wake, in a microtask (no timer's turn first)");
  await turn();
  assertEquals(waitingWord(w), 0, "and not waiting after: nothing pending");
});

test("completion: arm takes its word back when the pool was terminated, or when the room it waits for is free", async () => {
  const w = world();
  const a = submit(w);
  w.hooks.ended = true;
  w.reader.arm();
  assertEquals(waitingWord(w), 0, "terminated: no wait");
  // Settled before the read that follows (else it arms again and again: a terminated pool stops it).
  w.hooks.ended = false;
  w.ledger.placed[a.index] = undefined;
  w.ledger.settle(a.entry, 0, null);
  await turn();
  // Waiting for room with nothing pending of its own: it arms.
  const v = world();
  v.hooks.waitingForRoom = true;
  v.reader.arm();
  assertEquals(waitingWord(v), 1, "waits for room with nothing pending");
  v.reader.stop();
  const u = world();
  u.hooks.waitingForRoom = true;
  u.hooks.room = true;
  u.reader.arm();
  assertEquals(waitingWord(u), 0, "room free after the store: the word taken back");
  u.hooks.waitingForRoom = false;
  await turn();
});

test("completion: a starved arm counts itself waiting for a record, before its word; a free record takes the word back", async () => {
  const w = world();
  const a = submit(w);
  w.hooks.starving = true;
  // Every other record taken: none free.
  const taken = takeAll(w);
  assertEquals(w.table.freeRecords.length, 0, "none free");
  w.reader.arm();
  assertEquals({ waiters: recordWaiters(w), counted: countedWord(w), waiting: waitingWord(w) }, {
    waiters: 1,
    counted: 1,
    waiting: 1,
  }, "counted, and waiting");
  assertEquals(w.reader.othersWaitForRecords(), false, "only itself waits");
  Atomics.add(w.memory.control, ControlWords.recordWaiters, 1);
  assertEquals(w.reader.othersWaitForRecords(), true, "another waits too");
  Atomics.sub(w.memory.control, ControlWords.recordWaiters, 1);
  // Woken with nothing read, still starved: still counted.
  Atomics.store(w.channel.words, w.channel.waiting, 0);
  Atomics.notify(w.channel.words, w.channel.waiting, 1);
  await turn();
  assertEquals({ waiters: recordWaiters(w), counted: countedWord(w) }, { waiters: 1, counted: 1 }, "still counted");
  assertEquals(waitingWord(w), 1, "and waiting again");
  // A record freed (by another producer): this one's wake comes; starved with one free, arm retracts.
  w.table.releaseHandle(taken.pop()!);
  Atomics.store(w.channel.words, w.channel.waiting, 0);
  Atomics.notify(w.channel.words, w.channel.waiting, 1);
  await turn();
  w.hooks.starving = false;
  write(w, a.index, 1);
  w.completions.push(a.handle);
  w.reader.drain();
  assertEquals({ waiters: recordWaiters(w), counted: countedWord(w) }, { waiters: 0, counted: 0 }, "uncounted");
  for (const h of taken) w.table.releaseHandle(h);
});

test("completion: starved with a record free, arm takes its word back at once (ArmRecheckFree)", async () => {
  const w = world();
  const a = submit(w);
  w.hooks.starving = true;
  w.reader.arm();
  assertEquals(waitingWord(w), 0, "a record is free: no wait");
  assertEquals(recordWaiters(w), 1, "counted all the same");
  w.hooks.starving = false;
  await Promise.resolve();
  assertEquals(w.hooks.drains, 1, "read in a microtask where the reader lingers (no timer's turn first)");
  await turn();
  assertEquals(recordWaiters(w), 0, "the drain uncounts it");
  w.reader.stop();
  w.ledger.placed[a.index] = undefined;
  w.ledger.settle(a.entry, 0, null);
});

test("completion: armed again while it waits, it counts a newly starved backlog and wakes itself if a record is free", async () => {
  const w = world();
  const a = submit(w);
  const taken = takeAll(w);
  w.reader.arm();
  assertEquals({ waiting: waitingWord(w), waiters: recordWaiters(w) }, { waiting: 1, waiters: 0 }, "waits, uncounted");
  w.hooks.starving = true;
  w.reader.arm();
  assertEquals({ waiters: recordWaiters(w), counted: countedWord(w) }, { waiters: 1, counted: 1 }, "counted now");
  assertEquals(waitingWord(w), 1, "none free: still waiting");
  w.reader.arm();
  assertEquals(recordWaiters(w), 1, "counted once");
  w.hooks.starving = false;
  w.reader.arm();
  assertEquals({ waiters: recordWaiters(w), counted: countedWord(w) }, { waiters: 0, counted: 0 }, "uncounted");
  assertEquals(waitingWord(w), 1, "still waiting");
  w.table.releaseHandle(taken.pop()!);
  w.table.flushCache();
  assertEquals(w.table.freeRecords.length, 1, "one free in the shared list");
  w.hooks.starving = true;
  w.reader.arm();
  assertEquals(waitingWord(w), 0, "a record free: it woke itself (RecountRecheckFree)");
  w.reader.stop();
  assertEquals({ waiters: recordWaiters(w), counted: countedWord(w) }, { waiters: 0, counted: 0 }, "stop uncounts");
  w.ledger.placed[a.index] = undefined;
  w.ledger.settle(a.entry, 0, null);
  await turn();
  for (const h of taken) w.table.releaseHandle(h);
});

test("completion: records freed by a drain wake one other producer that waits for one, and only while one is free", () => {
  const w = world();
  const a = finish(w, 1);
  const other = w.memory.channels[1];
  // Slot 1 waits for a record: counted, its word set.
  Atomics.add(w.memory.control, ControlWords.recordWaiters, 1);
  Atomics.store(other.words, other.counted, 1);
  Atomics.store(other.words, other.waiting, 1);
  w.reader.drain();
  assertEquals(waitingWord(w, 1), 0, "woken (FreedReadFree)");
  assertEquals(w.table.cachedHere, 0, "the records it held went back to the shared list");
  assertEquals(a.outcome(), { value: 1 }, "settled");
  // None free: no wake.
  const taken = takeAll(w);
  Atomics.store(other.words, other.waiting, 1);
  w.reader.drain();
  assertEquals(waitingWord(w, 1), 1, "none free: not woken");
  for (const h of taken) w.table.releaseHandle(h);
});

test("completion: a result by message settles when both its completion and its payload came, in either order", () => {
  const w = world();
  // The completion first.
  const a = submit(w);
  const bytes = write(w, a.index, { big: "a" }, false, true);
  w.completions.push(a.handle);
  assertEquals(w.reader.drain(), 1, "read");
  assertEquals(a.outcome(), "pending", "its payload has not come");
  assertEquals(isFree(w, a.index), false, "its record kept");
  const freedBefore = w.hooks.freedCalls;
  w.reader.payloadArrived(a.handle, bytes);
  assertEquals(a.outcome(), { value: { big: "a" } }, "settled when it came");
  assertEquals(isFree(w, a.index), true, "record freed");
  assertEquals(w.table.fields.payloadLength(a.index), 0, "its length no longer says by message");
  assertEquals(w.hooks.freedCalls, freedBefore + 1, "the backlog told");
  // The payload first.
  const b = submit(w);
  const bBytes = write(w, b.index, "b", true, true);
  w.reader.payloadArrived(b.handle, bBytes);
  assertEquals(b.outcome(), "pending", "no completion yet");
  w.completions.push(b.handle);
  w.reader.drain();
  assertEquals(b.outcome(), { error: "b" }, "settled at the read, as an error");
  // A payload that came twice (or for a task read already) settles nothing again.
  w.reader.payloadArrived(b.handle, bBytes);
  assertEquals(w.ledger.duplicateSettles, 0, "no second settle");
});

test("completion: a payload for a stopped reader is not settled", () => {
  const w = world();
  const a = submit(w);
  const bytes = write(w, a.index, 5, false, true);
  w.completions.push(a.handle);
  w.reader.drain();
  w.reader.stop();
  w.reader.payloadArrived(a.handle, bytes);
  assertEquals(a.outcome(), "pending", "not settled");
  w.ledger.settle(a.entry, 0, null);
});

test("completion: a result naming a shared buffer not arrived yet waits for it, then settles with it", () => {
  const w = world();
  const sab = new SharedArrayBuffer(8);
  const remote = new BufferRegistry(new Int32Array(1), 0, () => {});
  const a = submit(w);
  const encoder = new Encoder({ shareBuffer: remote.share });
  w.table.fields.setOutcome(a.index, encodeOutcome(encoder, sab, false));
  assertEquals(w.table.writeEncoded(a.index, encoder), true, "fits");
  w.completions.push(a.handle);
  assertEquals(w.reader.drain(), 1, "read");
  assertEquals(a.outcome(), "pending", "its buffer has not come");
  w.reader.bufferArrived();
  assertEquals(a.outcome(), "pending", "still not");
  w.buffers.add(remote.share(sab), sab);
  w.reader.bufferArrived();
  assertEquals(a.outcome(), { value: sab }, "settled with the buffer");
  assertEquals(isFree(w, a.index), true, "record freed");
});

test("completion: with 64 tasks in flight it lingers (no waiting word), with 63 it waits; a backlog makes it linger too", async () => {
  const w = world();
  // 64 in flight and one finished: the wake reads it, then 64 stay in flight.
  const tasks = Array.from({ length: 64 }, () => submit(w));
  const done = finish(w, 0);
  w.reader.arm();
  await turn();
  assertEquals(done.outcome(), { value: 0 }, "read");
  w.reader.arm();
  assertEquals(waitingWord(w), 0, "lingering: no word stored, no worker notifies");
  // One finishes: 63 in flight; the linger's read finds it and the reader waits as usual.
  const last = tasks.pop()!;
  write(w, last.index, 1);
  w.completions.push(last.handle);
  await until(() => last.outcome() !== "pending", "the linger's read");
  await until(() => waitingWord(w) === 1, "the wait after the linger");
  // A backlog makes it linger with fewer in flight (its tasks are pending but not in flight).
  w.hooks.backlog = 1;
  const next = tasks.pop()!;
  write(w, next.index, 2);
  w.completions.push(next.handle);
  Atomics.store(w.channel.words, w.channel.waiting, 0);
  Atomics.notify(w.channel.words, w.channel.waiting, 1);
  await until(() => next.outcome() !== "pending", "the woken read");
  await turn(5);
  assertEquals(waitingWord(w), 0, "lingering with a backlog");
  w.reader.stop();
  for (const t of tasks) {
    w.ledger.placed[t.index] = undefined;
    w.ledger.settle(t.entry, 0, null);
  }
  await turn(20);
});

test("completion: without lingers (a page), starved with a record free that its feed cannot place, it reads again on a macrotask: a timer runs between its reads", async () => {
  const w = world(BrowserCompletionReader);
  const a = submit(w);
  // Its backlog starves with records free, which its feed cannot place (no free block for a payload, say:
  // the hooks place nothing). Nothing wakes the reader then (it takes its word back, ArmRecheckFree); it
  // reads again until the feed places the backlog, but must let the event loop run between its reads.
  w.hooks.starving = true;
  w.hooks.backlog = 1;
  assertEquals(w.table.freeRecords.length > 0, true, "records free");
  /** Reads since the interval's last tick, and the most seen between two ticks. */
  let sinceTick = 0;
  let most = 0;
  let ticks = 0;
  const SPIN = 1_000;
  w.hooks.beforeDrain = () => {
    w.hooks.drains++;
    most = Math.max(most, ++sinceTick);
    // A reader that never yields would hold the thread until the feed placed the backlog (a worker's
    // completion freed a block): end the situation here, so that such a reader fails below, not hangs.
    if (sinceTick >= SPIN) w.hooks.starving = false;
  };
  const interval = setInterval(() => {
    ticks++;
    sinceTick = 0;
  }, 0);
  try {
    w.reader.arm();
    await until(() => ticks >= 20 || !w.hooks.starving, "twenty ticks of an interval while starved");
  } finally {
    clearInterval(interval);
  }
  assertEquals(most < SPIN, true, `${most} reads between two ticks of a timer: it spins on microtasks`);
  assertEquals(w.hooks.drains >= 2, true, "it read again while starved (nothing else would wake it)");
  // The feed placed the backlog (a block was freed): the next read waits for the task's completion.
  w.hooks.starving = false;
  w.hooks.backlog = 0;
  await until(() => waitingWord(w) === 1, "the wait once the backlog is placed");
  write(w, a.index, "a");
  w.completions.push(a.handle);
  assertEquals(Atomics.exchange(w.channel.words, w.channel.waiting, 0), 1, "the worker takes the word");
  Atomics.notify(w.channel.words, w.channel.waiting, 1);
  await until(() => a.outcome() !== "pending", "the woken reader's settle");
  assertEquals(a.outcome(), { value: "a" }, "settled by the wake");
  assertEquals(recordWaiters(w), 0, "no longer counted");
});

/**
 * How many payloads by message (and their moved buffers) the reader keeps: private state, read here
 * because a payload kept after its task settled is a leak of one result per task, which no outcome shows.
 */
function keptPayloads(w: World): { messages: number; moved: number } {
  const r = w.reader as unknown as { messagePayloads: Map<number, unknown>; movedPayloads: Map<number, unknown> };
  return { messages: r.messagePayloads.size, moved: r.movedPayloads.size };
}

test("completion: a page's reader never lingers: with a backlog and 64 or more in flight it waits for a wake, and a completion found with a free record is read in a microtask", async () => {
  const w = world(BrowserCompletionReader);
  w.hooks.backlog = 1;
  const tasks = Array.from({ length: 70 }, () => submit(w));
  const done = finish(w, 0);
  w.reader.arm();
  await turn();
  assertEquals(done.outcome(), { value: 0 }, "read");
  assertEquals(waitingWord(w), 1, "waits: its word stored (a linger leaves it 0)");
  // Starved with a record free and a completion queued: the completion is read at once (a microtask).
  w.hooks.starving = true;
  const next = tasks.pop()!;
  write(w, next.index, 1);
  w.completions.push(next.handle);
  assertEquals(Atomics.exchange(w.channel.words, w.channel.waiting, 0), 1, "the worker takes the word");
  Atomics.notify(w.channel.words, w.channel.waiting, 1);
  await until(() => next.outcome() !== "pending", "the woken read");
  const last = tasks.pop()!;
  write(w, last.index, 2);
  w.completions.push(last.handle);
  Atomics.exchange(w.channel.words, w.channel.waiting, 0);
  w.reader.stop();
  const fresh = world(BrowserCompletionReader);
  fresh.hooks.starving = true;
  const a = finish(fresh, 3);
  fresh.reader.arm();
  await Promise.resolve();
  assertEquals(a.outcome(), { value: 3 }, "read in a microtask, not after a timer");
  fresh.reader.stop();
  for (const t of [...tasks, last]) {
    w.ledger.placed[t.index] = undefined;
    w.ledger.settle(t.entry, 0, null);
  }
  Atomics.notify(w.channel.words, w.channel.waiting);
  Atomics.notify(fresh.channel.words, fresh.channel.waiting);
  await turn();
});

test("completion: armed again and again before it is woken, it waits once: one wake reads once", async () => {
  // Taken back (a completion found): a second arm before the read does not queue a second one.
  const w = world();
  const a = finish(w, 1);
  const b = submit(w);
  w.reader.arm();
  w.reader.arm();
  await turn();
  assertEquals(a.outcome(), { value: 1 }, "read");
  assertEquals(w.hooks.drains, 1, "one read");
  assertEquals(waitingWord(w), 1, "then waits for b");
  // Waiting: arming again (after each submission) adds no second wait.
  w.reader.arm();
  w.reader.arm();
  write(w, b.index, 2);
  w.completions.push(b.handle);
  assertEquals(Atomics.exchange(w.channel.words, w.channel.waiting, 0), 1, "the worker takes the word");
  assertEquals(Atomics.notify(w.channel.words, w.channel.waiting), 1, "one waiter on the word");
  await until(() => b.outcome() !== "pending", "the woken read");
  assertEquals(w.hooks.drains, 2, "one read for the wake");
});

test("completion: a worker's wake between the waiting word's store and the wait (the wait finds 0) is read at once", async () => {
  const w = world();
  const a = submit(w);
  // The last re-check (room) is where a worker finishes a: its push, then its exchange of the word.
  w.hooks.roomFree = () => {
    write(w, a.index, "late");
    w.completions.push(a.handle);
    assertEquals(Atomics.exchange(w.channel.words, w.channel.waiting, 0), 1, "the worker takes the word");
    w.hooks.roomFree = () => false;
    return false;
  };
  w.reader.arm();
  await until(() => a.outcome() !== "pending", "the read after a wait that found the word 0");
  assertEquals(a.outcome(), { value: "late" }, "read");
});

test("completion: armed again while counted and starved, with a record free, it leaves the wake to whoever freed it", async () => {
  const w = world();
  const a = submit(w);
  const taken = takeAll(w);
  w.hooks.starving = true;
  w.hooks.backlog = 1;
  w.reader.arm();
  assertEquals({ waiting: waitingWord(w), waiters: recordWaiters(w) }, { waiting: 1, waiters: 1 }, "counted, waiting");
  // A record freed by another thread, whose freer wakes a counted waiter (FreedReadFree): not this arm.
  w.table.releaseHandle(taken.pop()!);
  w.table.flushCache();
  w.reader.arm();
  assertEquals(waitingWord(w), 1, "still waiting: a recount that changes nothing wakes nothing");
  w.reader.stop();
  w.ledger.placed[a.index] = undefined;
  w.ledger.settle(a.entry, 0, null);
  Atomics.notify(w.channel.words, w.channel.waiting);
  await turn();
  for (const h of taken) w.table.releaseHandle(h);
});

test("completion: the records a drain frees stay in its private cache until its backlog's feed (the freed hook), past the cache's bound; what is left goes back after", () => {
  const w = world();
  const bound = w.table.cacheBoundHere;
  const n = bound + 2;
  assertEquals(n <= w.capacity, true, "room for bound + 2 tasks");
  const tasks = Array.from({ length: n }, () => finish(w, 0));
  let cachedAtFeed = -1;
  w.hooks.freed = () => {
    cachedAtFeed = w.table.cachedHere;
  };
  assertEquals(w.reader.drain(), n, "read");
  assertEquals(cachedAtFeed >= n, true, `all ${n} freed records cached at the feed (cached ${cachedAtFeed})`);
  assertEquals(w.table.cachedHere <= bound, true, "the cache back within its bound after");
  assertEquals(tasks.every((t) => isFree(w, t.index)), true, "every record free");
});

test("completion: a drain delivers the progress a worker reported (its word raised), and a task's last report, read at its completion", async () => {
  const w = world();
  const got: unknown[] = [];
  const a = submit(w);
  a.entry.onProgress = (value) => got.push(value);
  w.reader.progress.watch(a.index);
  const cells = new ProgressCells(w.memory.progress);
  cells.scratchF64[0] = 0.5;
  cells.write(a.index, a.handle, NUMBER_LENGTH);
  Atomics.store(w.channel.words, w.channel.progress, 1);
  w.reader.drain();
  await turn();
  assertEquals(got, [0.5], "delivered by the drain's poll");
  // Its last report, the word not raised (a report that replaced an unread one), then its completion.
  cells.scratchF64[0] = 0.75;
  cells.write(a.index, a.handle, NUMBER_LENGTH);
  write(w, a.index, "r");
  w.completions.push(a.handle);
  w.reader.drain();
  assertEquals(a.outcome(), { value: "r" }, "settled by the drain");
  assertEquals(w.reader.progress.watching, 0, "no longer watched");
  await turn();
  assertEquals(got, [0.5, 0.75], "the last report delivered");
});

test("completion: a progress cell found mid-write is read again by a drain of its own, with no completion or notice", async () => {
  const w = world();
  const got: unknown[] = [];
  const a = submit(w);
  a.entry.onProgress = (value) => got.push(value);
  w.reader.progress.watch(a.index);
  const state = a.index * PROGRESS_CELL_WORDS + CellWords.state;
  // A worker holds the cell (WRITING) when the word it raised is read.
  Atomics.store(w.memory.progress, state, (1 << 2) | CellPhase.WRITING);
  Atomics.store(w.channel.words, w.channel.progress, 1);
  w.reader.drain();
  assertEquals(w.hooks.drains, 1, "one drain");
  // Its write ends (as if from EMPTY: the test's stand-in for the rest of that write), raising nothing.
  Atomics.store(w.memory.progress, state, (1 << 2) | CellPhase.EMPTY);
  const cells = new ProgressCells(w.memory.progress);
  cells.scratchF64[0] = 0.25;
  cells.write(a.index, a.handle, NUMBER_LENGTH);
  await until(() => got.length > 0, "the retry's delivery");
  assertEquals(got, [0.25], "delivered");
  assertEquals(w.hooks.drains >= 2, true, "by a drain the retry ran");
  w.reader.stop();
  w.ledger.placed[a.index] = undefined;
  w.ledger.settle(a.entry, 0, null);
});

test("completion: a report, or a payload by message, whose result names a shared buffer not arrived yet settles when it comes; a buffer's arrival with none deferred reads nothing", () => {
  const w = world();
  const remote = new BufferRegistry(new Int32Array(1), 0, () => {});
  const sab = new SharedArrayBuffer(8);
  const encoder = new Encoder({ shareBuffer: remote.share });
  // A: its result in the record, reported (a worker's death: recovery.ts), not read from the queue.
  const a = submit(w);
  w.table.fields.setOutcome(a.index, encodeOutcome(encoder, sab, false));
  assertEquals(w.table.writeEncoded(a.index, encoder), true, "fits");
  w.table.fields.storeState(a.index, TaskState.DONE);
  const freed = w.hooks.freedCalls;
  w.reader.report(a.handle);
  assertEquals(a.outcome(), "pending", "its buffer has not come");
  assertEquals(w.hooks.freedCalls, freed + 1, "the report told the backlog");
  // B: its result by message, the completion read first.
  const b = submit(w);
  const bEncoder = new Encoder({ shareBuffer: remote.share });
  w.table.fields.setOutcome(b.index, encodeOutcome(bEncoder, sab, false));
  const bBytes = bEncoder.snapshot();
  w.table.fields.setPayloadLength(b.index, PAYLOAD_BY_MESSAGE);
  w.table.fields.storeState(b.index, TaskState.DONE);
  w.completions.push(b.handle);
  w.reader.drain();
  w.reader.payloadArrived(b.handle, bBytes);
  assertEquals(b.outcome(), "pending", "b's buffer has not come");
  w.reader.bufferArrived();
  assertEquals([a.outcome(), b.outcome()], ["pending", "pending"], "still not");
  w.buffers.add(remote.share(sab), sab);
  w.reader.bufferArrived();
  assertEquals([a.outcome(), b.outcome()], [{ value: sab }, { value: sab }], "both settled with the buffer");
  assertEquals([isFree(w, a.index), isFree(w, b.index)], [true, true], "records freed");
  // Nothing deferred now: a buffer's arrival reads nothing (a completion queued waits for the wake's read).
  const c = finish(w, 3);
  const drains = w.hooks.drains;
  w.reader.bufferArrived();
  assertEquals({ drains: w.hooks.drains, queued: w.completions.length }, { drains, queued: 1 }, "no drain");
  assertEquals(w.reader.drain(), 1, "c read by a drain");
  assertEquals(c.outcome(), { value: 3 }, "c settled");
  assertEquals(w.table.duplicateReleases, 0, "no record released twice, none released by a stray handle");
  assertEquals(keptPayloads(w), { messages: 0, moved: 0 }, "no payload kept");
});

test("completion: a result by message whose bytes cannot be decoded settles its task with the decoder's error", () => {
  const w = world();
  const a = submit(w);
  write(w, a.index, 0, false, true);
  w.completions.push(a.handle);
  w.reader.drain();
  w.reader.payloadArrived(a.handle, new Uint8Array([0x7f]));
  const outcome = a.outcome();
  assertEquals(
    typeof outcome === "object" && "error" in outcome && outcome.error instanceof Error,
    true,
    "settled with an Error",
  );
  assertEquals(isFree(w, a.index), true, "its record freed");
});

test("completion: payloads by message and their moved buffers are forgotten once read: at the settle, and for a task settled already", () => {
  const w = world();
  const a = submit(w);
  const bytes = write(w, a.index, "a", false, true);
  w.reader.payloadArrived(a.handle, bytes, [new ArrayBuffer(8)]);
  assertEquals(keptPayloads(w), { messages: 1, moved: 1 }, "kept until its completion is read");
  w.completions.push(a.handle);
  w.reader.drain();
  assertEquals(a.outcome(), { value: "a" }, "settled");
  assertEquals(keptPayloads(w), { messages: 0, moved: 0 }, "forgotten at the settle");
  // Settled already (terminated, or its worker's death): its payload and completion still come.
  const b = submit(w);
  const bBytes = write(w, b.index, "b", false, true);
  w.ledger.placed[b.index] = undefined;
  w.ledger.settle(b.entry, 0, "early");
  w.reader.payloadArrived(b.handle, bBytes, [new ArrayBuffer(8)]);
  w.completions.push(b.handle);
  w.reader.drain();
  assertEquals(isFree(w, b.index), true, "its record freed");
  assertEquals(keptPayloads(w), { messages: 0, moved: 0 }, "forgotten with it");
});

test("completion: a linger's length doubles while a read finds under an eighth of what it left in flight, halves over a quarter, from 1 to 16 ms; over half ends the lingers; a wait starts again at 1 ms", async () => {
  const w = world();
  w.hooks.backlog = 1;
  // The linger's timers, run by the test: no clock is read.
  const timers: { fn: () => void; ms: number }[] = [];
  const realSetTimeout = globalThis.setTimeout;
  const realTurn = () => new Promise<void>((resolve) => realSetTimeout(resolve, 0));
  const flying: ReturnType<typeof submit>[] = [];
  const backlogged = submit(w); // pending, counted in the backlog (not in flight)
  const add = (n: number) => {
    for (let i = 0; i < n; i++) flying.push(submit(w));
  };
  const complete = (n: number) => {
    for (let i = 0; i < n; i++) {
      const t = flying.shift()!;
      write(w, t.index, 0);
      w.completions.push(t.handle);
    }
  };
  /** The linger's timer fires after `read` completions and `added` submissions: the next linger's ms, or "waits". */
  const step = (read: number, added: number): number | string => {
    assertEquals(timers.length, 1, "one linger's timer set");
    const { fn } = timers.shift()!;
    complete(read);
    add(added);
    fn();
    if (timers.length === 1) return timers[0].ms;
    return waitingWord(w) === 1 ? "waits" : "neither";
  };
  globalThis.setTimeout = ((fn: () => void, ms?: number) => {
    timers.push({ fn, ms: ms ?? 0 });
    return 0;
  }) as unknown as typeof setTimeout;
  try {
    add(8);
    finish(w, 0);
    w.reader.arm();
    await Promise.resolve();
    assertEquals(timers.map((t) => t.ms), [1], "the first linger: 1 ms, 8 in flight");
    const seen: (number | string)[] = [];
    // [read, added]: 8 in flight at each linger unless said.
    const plan: [number, number][] = [
      [0, 0], // 0 of 8: doubles, 2
      [1, 1], // 1 of 8 (an eighth, not under): 2
      [0, 0], // 4
      [2, 2], // 2 of 8 (a quarter, not over): 4
      [0, 0], // 8
      [0, 0], // 16
      [0, 0], // 16 at most
      [4, 4], // 4 of 8 (half, not over: lingers on); over a quarter: halves, 8
      [3, 3], // 4
      [3, 3], // 2
      [3, 3], // 1
      [3, 3], // 1 at least
      [0, 0], // 2
      [0, 0], // 4
      [0, 0], // 8
      [0, 8], // 16 in flight now: 16
      [9, 0], // 9 of 16, over half: it ran dry, waits
    ];
    for (const [read, added] of plan) seen.push(step(read, added));
    assertEquals(seen, [2, 2, 4, 4, 8, 16, 16, 8, 4, 2, 1, 1, 2, 4, 8, 16, "waits"], "each linger's length");
    // A wake after the wait: its read lingers from 1 ms again (1 of 7 read: not under an eighth of the
    // 16 the last linger left, which a wake's read is not measured against).
    complete(1);
    assertEquals(Atomics.exchange(w.channel.words, w.channel.waiting, 0), 1, "the worker takes the word");
    Atomics.notify(w.channel.words, w.channel.waiting, 1);
    for (let i = 0; i < 1000 && timers.length === 0; i++) await realTurn();
    assertEquals(timers.map((t) => t.ms), [1], "a linger of 1 ms after the wake");
  } finally {
    globalThis.setTimeout = realSetTimeout;
  }
  w.reader.stop();
  for (const t of [...flying, backlogged]) {
    w.ledger.placed[t.index] = undefined;
    w.ledger.settle(t.entry, 0, null);
  }
});
