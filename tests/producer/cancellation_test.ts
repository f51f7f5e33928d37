/**
 * `Canceller`, the main thread's cancellation of a task, on one thread with a real task table and ledger:
 * a queued task is removed by the compare-exchange QUEUED → CANCELLED and never runs; a started one is
 * marked ABORTED (and TIMED_OUT for a deadline) for its worker, which is told, and forced only when asked;
 * a settled task is never touched again (its record may be another task's by then); the queue deadline
 * removes only a task that has not started; the timeout counts from the start the worker announces on
 * the state word. The pool tests (tests/pool/cancel_test.ts) cross the same steps through real workers;
 * the race of the compare-exchange with a worker's start is model-checked (spec/Lifecycle.tla).
 */
import { resolveRunOptions } from "../../lib/options.ts";
import { Canceller, timeoutError } from "../../lib/producer/cancellation.ts";
import { type Entry, Settled, TaskLedger } from "../../lib/producer/ledger.ts";
import { mem } from "../../lib/protocol/atomics.ts";
import { PoolMemory } from "../../lib/protocol/memory.ts";
import { TaskFlags, TaskState, TaskTable } from "../../lib/record/task.ts";
import { assert, assertEquals, test, within } from "../_test.ts";

/** A pool's memory of one worker, the main thread's table and ledger, and what the canceller sent. */
function world() {
  const memory = PoolMemory.create({
    workers: 1,
    dequeCapacity: 4,
    taskCapacity: 8,
    inlineBytes: 64,
    blockBytes: 128,
    blocks: 4,
  });
  TaskTable.init(memory);
  const table = new TaskTable(memory);
  const reported: [unknown, string][] = [];
  const ledger = new TaskLedger(8, (error, task) => reported.push([error, task]));
  const told: [number, unknown][] = [];
  const forced: [number, number, string][] = [];
  const canceller = new Canceller(
    table,
    ledger,
    (worker, message) => told.push([worker, message]),
    (worker, handle, task) => forced.push([worker, handle, task]),
  );
  return { table, ledger, canceller, told, forced, reported };
}

type World = ReturnType<typeof world>;

/** How a task's promise settled. */
type Outcome = { value: unknown } | { error: unknown } | "pending";

/** A task opened with `options` (a run, or a spawn: no promise), its control given. */
function submit(w: World, options: Record<string, unknown> = {}, spawn = false) {
  let outcome: Outcome = "pending";
  const entry = w.ledger.open(
    "fib",
    0,
    spawn ? undefined : (value) => outcome = { value },
    spawn ? undefined : (error) => outcome = { error },
  );
  w.canceller.control(entry, resolveRunOptions(options));
  return { entry, outcome: () => outcome };
}

/**
 * Places `entry` in a fresh record in state `state`, run by `worker` (-1: none yet), and tells the
 * canceller unless it has no control; its record index.
 */
function place(w: World, entry: Entry, state: number, worker = -1, controlled = true): number {
  const handle = w.table.allocate();
  const index = w.table.indexOf(handle);
  w.table.fields.storeState(index, state);
  w.table.fields.storeWorker(index, worker);
  w.table.fields.setFlags(index, 0);
  entry.handle = handle;
  w.ledger.placed[index] = entry;
  if (controlled) w.canceller.placed(entry); // as the submitter calls it: for a task with a control
  return index;
}

/** Lets timers and promise reactions run. */
function turn(ms = 0): Promise<void> {
  return within(new Promise((r) => setTimeout(r, ms)), 30_000, "a turn of the event loop");
}

test("cancellation: a queued task is CANCELLED in its record, leaves placed, is not forgotten, rejects with the reason", () => {
  const w = world();
  const { entry, outcome } = submit(w);
  const index = place(w, entry, TaskState.QUEUED);
  const reason = new Error("stop");
  w.canceller.cancel(entry, reason, false);
  assertEquals(w.table.fields.loadState(index), TaskState.CANCELLED, "the worker that takes it frees it");
  assertEquals(w.ledger.placed[index], undefined, "no longer placed");
  assertEquals(w.ledger.forgotten.has(entry.handle), false, "not forgotten: no completion will come");
  assertEquals(w.table.fields.loadFlags(index), 0, "no flag: it never runs");
  assertEquals(w.told.length, 0, "no worker told");
  assertEquals(outcome(), { error: reason }, "rejects with the reason");
  assertEquals(entry.settled, true, "settled");
});

test("cancellation: a started task is marked ABORTED, its worker told, forgotten; its state is the worker's", () => {
  const w = world();
  const { entry, outcome } = submit(w);
  const index = place(w, entry, TaskState.RUNNING, 0);
  w.canceller.cancel(entry, "why", false);
  assertEquals(w.table.fields.loadState(index), TaskState.RUNNING, "the state stays the worker's");
  assertEquals(w.table.fields.loadFlags(index), TaskFlags.ABORTED, "aborted, not timed out");
  assertEquals(w.told, [[0, { type: "abort", handle: entry.handle }]], "worker 0 is told");
  assertEquals(w.forced.length, 0, "not forced unless asked");
  assertEquals(w.ledger.placed[index], undefined, "no longer placed");
  assertEquals(w.ledger.forgotten.has(entry.handle), true, "forgotten: its completion only frees the record");
  assertEquals(outcome(), { error: "why" }, "rejects at once with the reason");
});

test("cancellation: a deadline marks TIMED_OUT too, with an OR that keeps the other flags", () => {
  const w = world();
  const { entry } = submit(w);
  const index = place(w, entry, TaskState.RUNNING, 2);
  w.table.fields.setFlags(index, TaskFlags.WATCH_START);
  w.canceller.cancel(entry, timeoutError("late"), true);
  assertEquals(
    w.table.fields.loadFlags(index),
    TaskFlags.WATCH_START | TaskFlags.ABORTED | TaskFlags.TIMED_OUT,
    "ABORTED | TIMED_OUT added, WATCH_START kept",
  );
  assertEquals(w.told, [[2, { type: "abort", handle: entry.handle }]], "its worker is told");
});

test("cancellation: force kills the worker of a started task; no worker yet, nobody is told or forced", () => {
  const w = world();
  const forcedTask = submit(w, { force: true, signal: new AbortController().signal });
  const index = place(w, forcedTask.entry, TaskState.RUNNING, 1);
  w.canceller.cancel(forcedTask.entry, "x", false);
  assertEquals(w.forced, [[1, forcedTask.entry.handle, "fib"]], "its worker is forced");
  assertEquals(w.table.fields.loadFlags(index), TaskFlags.ABORTED, "and marked");
  const noWorker = submit(w, { force: true, signal: new AbortController().signal });
  const other = place(w, noWorker.entry, TaskState.DONE, -1);
  w.canceller.cancel(noWorker.entry, "y", false);
  assertEquals([w.told.length, w.forced.length], [1, 1], "no worker: none told, none forced");
  assertEquals(w.table.fields.loadFlags(other), TaskFlags.ABORTED, "marked all the same");
  assertEquals(w.ledger.forgotten.has(noWorker.entry.handle), true, "forgotten");
  assertEquals(noWorker.outcome(), { error: "y" }, "rejects");
});

test("cancellation: a spawn's abort reports nothing; a spawn's deadline is reported to onError", async () => {
  const w = world();
  const aborted = submit(w, {}, true);
  place(w, aborted.entry, TaskState.RUNNING, 0);
  w.canceller.cancel(aborted.entry, "aborted", false);
  const timed = submit(w, {}, true);
  place(w, timed.entry, TaskState.QUEUED);
  w.canceller.cancel(timed.entry, "deadline", true);
  await turn();
  assertEquals(w.reported, [["deadline", "fib"]], "only the deadline is reported");
  assertEquals([aborted.entry.settled, timed.entry.settled], [true, true], "both settled");
});

test("cancellation: a settled task is not touched again, though its record is QUEUED (another task's now)", () => {
  const w = world();
  const { entry, outcome } = submit(w);
  const index = place(w, entry, TaskState.QUEUED);
  w.ledger.settle(entry, Settled.VALUE, 7);
  w.ledger.placed[index] = entry;
  w.canceller.cancel(entry, "late", false);
  w.canceller.queueExpired(entry, 5);
  assertEquals(w.table.fields.loadState(index), TaskState.QUEUED, "the record's state is left alone");
  assert(w.ledger.placed[index] === entry, "placed is left alone");
  assertEquals(w.table.fields.loadFlags(index), 0, "no flag");
  assertEquals(w.ledger.duplicateSettles, 0, "not settled twice");
  assertEquals(outcome(), { value: 7 }, "its value stands");
});

test("cancellation: a task in the backlog (no record yet) is settled, and no record is touched", () => {
  const w = world();
  const { entry, outcome } = submit(w);
  w.canceller.cancel(entry, "gone", false);
  assertEquals(outcome(), { error: "gone" }, "rejects");
  const late = submit(w);
  w.canceller.queueExpired(late.entry, 40);
  const result = late.outcome();
  assert(typeof result === "object" && "error" in result, "the queue deadline rejects it");
  assertEquals((result.error as Error).name, "TimeoutError", "with a TimeoutError");
});

test("cancellation: the queue deadline removes a task still queued, with a TimeoutError naming the wait", () => {
  const w = world();
  const { entry, outcome } = submit(w);
  const index = place(w, entry, TaskState.QUEUED);
  w.canceller.queueExpired(entry, 25);
  assertEquals(w.table.fields.loadState(index), TaskState.CANCELLED, "removed");
  assertEquals(w.ledger.placed[index], undefined, "no longer placed");
  const result = outcome();
  assert(typeof result === "object" && "error" in result, "rejects");
  const error = result.error as Error;
  assertEquals(error.name, "TimeoutError", "a TimeoutError");
  assertEquals(error.message, "Task 'fib' waited 25 ms in the queue without starting", "naming the wait");
});

test("cancellation: the queue deadline leaves a started task to run (and to its own timeout)", () => {
  const w = world();
  const { entry, outcome } = submit(w);
  const index = place(w, entry, TaskState.RUNNING, 0);
  w.canceller.queueExpired(entry, 25);
  assertEquals(outcome(), "pending", "not settled");
  assertEquals(entry.settled, false, "still pending");
  assertEquals(w.table.fields.loadState(index), TaskState.RUNNING, "still running");
  assert(w.ledger.placed[index] === entry, "still placed");
  assertEquals(w.table.fields.loadFlags(index), 0, "not marked");
  w.ledger.settle(entry, Settled.VALUE, 0);
});

test("cancellation: an aborted signal cancels at begin; a live one cancels when it aborts; none after settling", async () => {
  const w = world();
  const already = submit(w, { signal: AbortSignal.abort("early") });
  w.canceller.begin(already.entry);
  assertEquals(already.outcome(), { error: "early" }, "aborted before begin: cancelled at once");

  const controller = new AbortController();
  const live = submit(w, { signal: controller.signal });
  const index = place(w, live.entry, TaskState.QUEUED);
  w.canceller.begin(live.entry);
  assertEquals(live.outcome(), "pending", "waits");
  controller.abort("now");
  assertEquals(live.outcome(), { error: "now" }, "cancelled when it aborts");
  assertEquals(w.table.fields.loadState(index), TaskState.CANCELLED, "removed from the queue");

  const later = new AbortController();
  const done = submit(w, { signal: later.signal });
  const doneIndex = place(w, done.entry, TaskState.QUEUED);
  w.canceller.begin(done.entry);
  w.ledger.settle(done.entry, Settled.VALUE, 1);
  later.abort("too late");
  await turn();
  assertEquals(done.outcome(), { value: 1 }, "its value stands");
  assertEquals(w.table.fields.loadState(doneIndex), TaskState.QUEUED, "its record is left alone");
});

test("cancellation: a control detached before begin starts nothing", async () => {
  const w = world();
  const controller = new AbortController();
  const { entry, outcome } = submit(w, { signal: controller.signal, queueTimeout: 1 });
  const index = place(w, entry, TaskState.QUEUED);
  w.ledger.settle(entry, Settled.VALUE, 3);
  w.ledger.placed[index] = entry;
  w.canceller.begin(entry);
  controller.abort();
  await turn(20);
  assertEquals(outcome(), { value: 3 }, "its value stands");
  assertEquals(w.table.fields.loadState(index), TaskState.QUEUED, "its record is left alone");
});

test("cancellation: queueTimeout fires queueExpired after its delay for a task still queued", async () => {
  const w = world();
  const { entry, outcome } = submit(w, { queueTimeout: 5 });
  const index = place(w, entry, TaskState.QUEUED);
  w.canceller.begin(entry);
  for (let i = 0; i < 3000 && outcome() === "pending"; i++) await turn(1);
  const result = outcome();
  assert(typeof result === "object" && "error" in result, "rejects");
  assertEquals((result.error as Error).message, "Task 'fib' waited 5 ms in the queue without starting", "the wait");
  assertEquals(w.table.fields.loadState(index), TaskState.CANCELLED, "removed");
});

test("cancellation: the timeout counts from the start the worker announces, then times the task out", async () => {
  const w = world();
  const { entry, outcome } = submit(w, { timeout: 5 });
  const index = place(w, entry, TaskState.QUEUED, -1);
  await turn(30);
  assertEquals(outcome(), "pending", "queued: its timeout has not started");
  w.table.fields.storeWorker(index, 0);
  w.table.fields.storeState(index, TaskState.RUNNING);
  Atomics.notify(w.table.words, w.table.fields.stateWord(index));
  for (let i = 0; i < 3000 && outcome() === "pending"; i++) await turn(1);
  const result = outcome();
  assert(typeof result === "object" && "error" in result, "times out");
  const error = result.error as Error;
  assertEquals([error.name, error.message], ["TimeoutError", "Task 'fib' ran for 5 ms, its timeout"], "named");
  assertEquals(w.table.fields.loadFlags(index), TaskFlags.ABORTED | TaskFlags.TIMED_OUT, "marked timed out");
  assertEquals(w.told, [[0, { type: "abort", handle: entry.handle }]], "its worker is told");
});

test("cancellation: a task with no timeout does not wait for its start", async () => {
  const w = world();
  const { entry, outcome } = submit(w, { queueTimeout: 10_000 });
  const index = place(w, entry, TaskState.QUEUED, 0);
  w.table.fields.storeState(index, TaskState.RUNNING);
  Atomics.notify(w.table.words, w.table.fields.stateWord(index));
  await turn(20);
  assertEquals(outcome(), "pending", "nothing times it out");
  w.ledger.settle(entry, Settled.VALUE, 0);
});

test("cancellation: a task that settles while its start is awaited starts no timeout", async () => {
  const w = world();
  const { entry, outcome } = submit(w, { timeout: 1 });
  const index = place(w, entry, TaskState.QUEUED, 0);
  w.ledger.settle(entry, Settled.VALUE, 9);
  w.table.fields.storeState(index, TaskState.RUNNING);
  Atomics.notify(w.table.words, w.table.fields.stateWord(index));
  await turn(30);
  assertEquals(outcome(), { value: 9 }, "its value stands");
  assertEquals(w.table.fields.loadFlags(index), 0, "never marked");
});

test("cancellation: timeoutError is a DOMException named TimeoutError, as AbortSignal.timeout's", () => {
  const error = timeoutError("Task 'fib' ran for 5 ms, its timeout");
  assert(error instanceof DOMException, "a DOMException");
  assertEquals([error.name, error.message], ["TimeoutError", "Task 'fib' ran for 5 ms, its timeout"], "named");
});

/** Counts the calls a task's control makes to the canceller (it calls them as its methods). */
function spy(w: World): { cancels: unknown[][]; expiries: unknown[][] } {
  const cancels: unknown[][] = [];
  const expiries: unknown[][] = [];
  const { canceller } = w;
  const cancel = canceller.cancel.bind(canceller);
  const queueExpired = canceller.queueExpired.bind(canceller);
  canceller.cancel = (entry, reason, timedOut) => {
    cancels.push([reason, timedOut]);
    cancel(entry, reason, timedOut);
  };
  canceller.queueExpired = (entry, ms) => {
    expiries.push([ms]);
    queueExpired(entry, ms);
  };
  return { cancels, expiries };
}

test("cancellation: settling detaches the control: its listener is removed and its queue timer cleared", async () => {
  const w = world();
  const calls = spy(w);
  const controller = new AbortController();
  const { entry } = submit(w, { signal: controller.signal, queueTimeout: 5 });
  place(w, entry, TaskState.QUEUED);
  w.canceller.begin(entry);
  w.ledger.settle(entry, Settled.VALUE, 1);
  controller.abort("late");
  await turn(40);
  assertEquals([calls.cancels, calls.expiries], [[], []], "nothing of a settled task fires");
});

test("cancellation: a control detached before begin listens to nothing and starts no timer", async () => {
  const w = world();
  const calls = spy(w);
  const controller = new AbortController();
  const { entry } = submit(w, { signal: controller.signal, queueTimeout: 5, timeout: 5 });
  place(w, entry, TaskState.QUEUED);
  w.ledger.settle(entry, Settled.VALUE, 1);
  w.canceller.begin(entry);
  (entry.control as unknown as { started(): void }).started();
  controller.abort("late");
  await turn(40);
  assertEquals([calls.cancels, calls.expiries], [[], []], "nothing fires");
});

test("cancellation: a start clears the queue timer and starts one run timer, however often it is announced", async () => {
  const w = world();
  const calls = spy(w);
  const { entry, outcome } = submit(w, { queueTimeout: 5, timeout: 10 });
  const index = place(w, entry, TaskState.QUEUED, 0);
  w.canceller.begin(entry);
  w.table.fields.storeState(index, TaskState.RUNNING); // started: announced below, by hand, twice
  const control = entry.control as unknown as { started(): void };
  control.started();
  control.started();
  for (let i = 0; i < 3000 && outcome() === "pending"; i++) await turn(1);
  await turn(40);
  assertEquals(calls.expiries, [], "the queue deadline no longer counts");
  assertEquals(calls.cancels.length, 1, "one timeout");
  assertEquals(calls.cancels[0][1], true, "a deadline");
  assertEquals(w.table.fields.loadFlags(index), TaskFlags.ABORTED | TaskFlags.TIMED_OUT, "timed out");
});

test("cancellation: a run timer cleared when the task settles first never fires", async () => {
  const w = world();
  const calls = spy(w);
  const { entry } = submit(w, { timeout: 5 });
  place(w, entry, TaskState.RUNNING, 0);
  await turn(1);
  w.ledger.settle(entry, Settled.VALUE, 1);
  await turn(40);
  assertEquals(calls.cancels, [], "no timeout after it settled");
});

test(
  "cancellation: a task still queued after one wait for its start waits again; its timeout counts from the start",
  async () => {
    const w = world();
    const { entry, outcome } = submit(w, { timeout: 5 });
    const index = place(w, entry, TaskState.QUEUED);
    await turn(1300); // longer than one wait for the start (a second)
    assertEquals(outcome(), "pending", "still queued: no timeout yet");
    w.table.fields.storeState(index, TaskState.RUNNING);
    Atomics.notify(w.table.words, w.table.fields.stateWord(index));
    for (let i = 0; i < 3000 && outcome() === "pending"; i++) await turn(1);
    const result = outcome();
    assert(typeof result === "object" && "error" in result, "then it times out");
  },
  60_000,
);

test("cancellation: a task placed already started (the wait answers not-equal at once) has its timeout started", async () => {
  const w = world();
  const { entry, outcome } = submit(w, { timeout: 5 });
  place(w, entry, TaskState.RUNNING, 0);
  for (let i = 0; i < 3000 && outcome() === "pending"; i++) await turn(1);
  const result = outcome();
  assert(typeof result === "object" && "error" in result, "it times out");
  assertEquals((result.error as Error).name, "TimeoutError", "with a TimeoutError");
});

/** Counts the announced starts a task's control acts on (`TaskControl.started`). */
function spyStarted(entry: Entry): { count: number } {
  const counted = { count: 0 };
  const control = entry.control as unknown as { started(): void };
  const started = control.started.bind(control);
  control.started = () => {
    counted.count++;
    started();
  };
  return counted;
}

test("cancellation: a signal aborted before begin cancels as an abort, not a deadline (a spawn reports nothing)", async () => {
  const w = world();
  const calls = spy(w);
  const { entry } = submit(w, { signal: AbortSignal.abort("early") }, true);
  const index = place(w, entry, TaskState.QUEUED);
  w.canceller.begin(entry);
  await turn();
  assertEquals(calls.cancels, [["early", false]], "cancelled once, as an abort");
  assertEquals(w.reported, [], "an aborted spawn reports nothing");
  assertEquals(w.table.fields.loadState(index), TaskState.CANCELLED, "removed from the queue");
});

test("cancellation: a started task with no control of its own (a map's) is told, never forced", () => {
  const w = world();
  let rejected: unknown;
  const entry = w.ledger.open("fib", 0, () => {}, (error) => rejected = error);
  const index = place(w, entry, TaskState.RUNNING, 1, false);
  w.canceller.cancel(entry, "stop", false);
  assertEquals(w.told, [[1, { type: "abort", handle: entry.handle }]], "its worker is told");
  assertEquals(w.forced, [], "not forced");
  assertEquals(w.table.fields.loadFlags(index), TaskFlags.ABORTED, "marked");
  assertEquals(rejected, "stop", "rejects");
});

test("cancellation: only a task with a timeout has its start watched (announced by its worker)", async () => {
  const w = world();
  const none = submit(w, {});
  assertEquals(none.entry.control!.watchStart, false, "no options: not watched");
  const queueOnly = submit(w, { queueTimeout: 5 });
  assertEquals(queueOnly.entry.control!.watchStart, false, "a queue deadline alone: not");
  const timed = submit(w, { timeout: 10_000 });
  assertEquals(timed.entry.control!.watchStart, true, "a timeout: watched");
  const plain = submit(w, { queueTimeout: 10_000 });
  const started = spyStarted(plain.entry);
  const index = place(w, plain.entry, TaskState.QUEUED, 0);
  w.table.fields.storeState(index, TaskState.RUNNING);
  Atomics.notify(w.table.words, w.table.fields.stateWord(index));
  await turn(30);
  assertEquals(started.count, 0, "no wait for the start of a task without a timeout");
  for (const task of [none, queueOnly, plain, timed]) w.ledger.settle(task.entry, Settled.VALUE, 0);
});

test("cancellation: the start of a task that settled while it was awaited is not acted on", async () => {
  const w = world();
  const { entry } = submit(w, { timeout: 10_000 });
  const started = spyStarted(entry);
  const index = place(w, entry, TaskState.QUEUED, 0);
  w.ledger.settle(entry, Settled.VALUE, 1);
  w.table.fields.storeState(index, TaskState.RUNNING);
  Atomics.notify(w.table.words, w.table.fields.stateWord(index));
  await turn(30);
  assertEquals(started.count, 0, "not acted on");
});

test("cancellation: a start announced for a task without a timeout starts no timer", async () => {
  const w = world();
  const calls = spy(w);
  const { entry, outcome } = submit(w, {});
  place(w, entry, TaskState.RUNNING, 0);
  (entry.control as unknown as { started(): void }).started();
  await turn(30);
  assertEquals(calls.cancels, [], "nothing times it out");
  assertEquals(outcome(), "pending", "pending");
  w.ledger.settle(entry, Settled.VALUE, 0);
});

test("cancellation: placing a task that has settled waits for no start", () => {
  const w = world();
  const { entry } = submit(w, { timeout: 10_000 });
  w.ledger.settle(entry, Settled.VALUE, 1);
  let waits = 0;
  const waitAsync = mem.waitAsync;
  mem.waitAsync = (...args) => (waits++, waitAsync(...args));
  try {
    place(w, entry, TaskState.QUEUED, 0);
  } finally {
    mem.waitAsync = waitAsync;
  }
  assertEquals(waits, 0, "no wait");
});

test("cancellation: a start announced twice leaves one run timer, cleared when the task settles first", async () => {
  const w = world();
  const calls = spy(w);
  const { entry, outcome } = submit(w, { timeout: 5 });
  const index = place(w, entry, TaskState.QUEUED, 0);
  w.table.fields.storeState(index, TaskState.RUNNING); // started: announced below, by hand, twice
  const control = entry.control as unknown as { started(): void };
  control.started();
  control.started();
  w.ledger.settle(entry, Settled.VALUE, 2);
  await turn(40);
  assertEquals(calls.cancels, [], "no timer left to fire");
  assertEquals(outcome(), { value: 2 }, "its value stands");
});
