/**
 * `Runner`, a worker's run of one task (`lib/worker/runner.ts`), on one thread: the claim (a compare-exchange
 * from QUEUED: a cancelled task is freed and never run, any other state is left alone), the run and its
 * outcome in the record (a value, a thrown error, an abort seen at the start, an async task's settlement),
 * the bound on async tasks and its waiter, the result that goes by message (no free blocks, moved buffers),
 * the stamps of metrics and the repair of runs cut short. The pool suites cross it through real workers;
 * these pin each rule on its own, with worker 0's real parts on a real pool memory built in this thread
 * (tests/worker/_world.ts): nothing depends on timing. Issue 47, "Mutants nobody here chose".
 */
import { Encoder } from "../../lib/codec/codec.ts";
import { move } from "../../lib/codec/move.ts";
import { ControlWords, MarkWords, StatusWords } from "../../lib/protocol/layout.ts";
import { Level } from "../../lib/protocol/levels.ts";
import { originOf } from "../../lib/protocol/producers.ts";
import { type PlacedNode, placeGraph } from "../../lib/graph/submit.ts";
import { GraphRecords } from "../../lib/graph/words.ts";
import type { GraphHost } from "../../lib/producer/graph_host.ts";
import { Origin, Outcome, PAYLOAD_BY_MESSAGE, TaskFlags, TaskState } from "../../lib/record/task.ts";
import { FORK_MOVE_REFUSAL, RESULT_TRANSFER_FROM } from "../../lib/worker/runner.ts";
import { assert, assertEquals, test } from "../_test.ts";
import { newWorld, outcomeOf, stateOf, submit, type World } from "./_world.ts";

/**
 * A few turns of the event loop: every promise job and macrotask that an in-thread settlement queues has run
 * after them (the tests look at the outcome then, rather than await a promise a mutant may never settle).
 */
async function turns(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setTimeout(resolve, 0));
}

/** A unit test: everything runs in this thread, so a hang is a bug found, failed in 10 s (not 120). */
function unit(name: string, body: () => void | Promise<void>): void {
  test(name, body, 10_000);
}

/** Worker 0's count of tasks executed. */
function executed(world: World): number {
  return Atomics.load(world.status, StatusWords.executed);
}

unit("runner: a queued task is claimed, run with its arguments, and finished DONE with its value", () => {
  const seen: unknown[] = [];
  const world = newWorld({ fns: [(a, b) => (seen.push([a, b]), `${a}-${b}`)] });
  const handle = submit(world, 0, ["x", 7]);
  assertEquals(world.runner.execute(handle), undefined, "no wait for a buffer");
  assertEquals(seen, [["x", 7]], "run once, with its arguments");
  assertEquals(outcomeOf(world, handle), { outcome: Outcome.VALUE, value: "x-7" });
  assertEquals(world.main.fields.loadWorker(world.main.indexOf(handle)), 0, "ran on worker 0");
  assertEquals(executed(world), 1, "counted once");
  assertEquals(world.runs.runDepth(), 0, "the run is over");
  assertEquals(world.runner.pending, 0, "no async task");
});

unit("runner: a task that throws finishes DONE with its error as the outcome", () => {
  const world = newWorld({
    fns: [() => {
      throw new RangeError("no");
    }],
  });
  const handle = submit(world, 0, []);
  world.runner.execute(handle);
  const { outcome, value } = outcomeOf(world, handle);
  assertEquals(outcome, Outcome.ERROR, "an error");
  assert(value instanceof RangeError && value.message === "no", `its own error: ${value}`);
  assertEquals(executed(world), 1, "counted once");
});

unit(
  "runner: a cancelled task loses the claim: never run, its record freed; a RUNNING or DONE one is left alone",
  () => {
    let runs = 0;
    const world = newWorld({ fns: [() => runs++] });
    const cancelled = submit(world, 0, [1]);
    world.main.fields.storeState(world.main.indexOf(cancelled), TaskState.CANCELLED);
    world.runner.execute(cancelled);
    assertEquals(runs, 0, "not run");
    assertEquals(stateOf(world, cancelled), TaskState.CACHED, "its record freed (to this worker's cache)");
    for (const state of [TaskState.RUNNING, TaskState.DONE]) {
      const other = submit(world, 0, [1]);
      world.main.fields.storeState(world.main.indexOf(other), state);
      world.runner.execute(other);
      assertEquals(runs, 0, "not run");
      assertEquals(stateOf(world, other), state, "state unchanged");
      assertEquals(world.table.accounting().releases, 1, "its record not freed (only the cancelled one was)");
    }
    assertEquals(executed(world), 0, "nothing executed");
  },
);

unit("runner: a task aborted before its start finishes with the abort's error and never runs", () => {
  let runs = 0;
  const world = newWorld({ fns: [() => runs++] });
  const aborted = submit(world, 0, [1], TaskFlags.ABORTED);
  world.runner.execute(aborted);
  const first = outcomeOf(world, aborted);
  assertEquals(first.outcome, Outcome.ERROR);
  assertEquals((first.value as Error).name, "AbortError");
  const timedOut = submit(world, 0, [1], TaskFlags.ABORTED | TaskFlags.TIMED_OUT);
  world.runner.execute(timedOut);
  assertEquals((outcomeOf(world, timedOut).value as Error).name, "TimeoutError");
  assertEquals(runs, 0, "never run");
});

unit("runner: an async task stays pending until it settles; at the bound full() is true and room() waits", async () => {
  const resolvers: ((v: unknown) => void)[] = [];
  const world = newWorld({
    fns: [() => new Promise((resolve) => resolvers.push(resolve)), () => Promise.reject(new TypeError("t"))],
    asyncBound: 2,
  });
  const runner = world.runner;
  assertEquals(runner.full(), false, "empty");
  const a = submit(world, 0, []);
  const b = submit(world, 0, []);
  runner.execute(a);
  assertEquals([runner.pending, runner.full()], [1, false], "one pending, below the bound");
  runner.execute(b);
  assertEquals([runner.pending, runner.full()], [2, true], "at the bound");
  assertEquals(stateOf(world, a), TaskState.RUNNING, "still running");
  let woke = false;
  void runner.room().then(() => (woke = true));
  resolvers[0]("done a");
  await turns();
  assert(woke, "room once one settled");
  assertEquals([runner.pending, runner.full()], [1, false], "one pending");
  assertEquals(outcomeOf(world, a), { outcome: Outcome.VALUE, value: "done a" });
  const c = submit(world, 1, []);
  runner.execute(c);
  await turns();
  const failed = outcomeOf(world, c);
  assertEquals(failed.outcome, Outcome.ERROR, "a rejection is an error");
  assert(failed.value instanceof TypeError, "its reason");
  resolvers[1]("done b");
  await turns();
  assertEquals(outcomeOf(world, b), { outcome: Outcome.VALUE, value: "done b" });
  assertEquals(runner.pending, 0, "none pending");
  assertEquals(executed(world), 3, "each counted once");
});

unit("runner: room() resolves only when pending drops below the bound, or on wakeRoom()", async () => {
  const resolvers: ((v: unknown) => void)[] = [];
  const world = newWorld({ fns: [() => new Promise((resolve) => resolvers.push(resolve))], asyncBound: 1 });
  const runner = world.runner;
  runner.wakeRoom(); // no waiter: nothing to do
  const a = submit(world, 0, []);
  runner.execute(a);
  assertEquals(runner.full(), true, "at a bound of 1");
  let woke = 0;
  void runner.room().then(() => woke++);
  runner.wakeRoom();
  await Promise.resolve();
  assertEquals(woke, 1, "wakeRoom ends the wait");
  runner.wakeRoom();
  await Promise.resolve();
  assertEquals(woke, 1, "once only");
  void runner.room().then(() => woke++);
  resolvers[0](1);
  await turns();
  assertEquals(woke, 2, "a settlement below the bound ends it");
});

unit("runner: with an unbounded async count the waiter is still woken at a settlement", async () => {
  const resolvers: ((v: unknown) => void)[] = [];
  const world = newWorld({ fns: [() => new Promise((resolve) => resolvers.push(resolve))] });
  const runner = world.runner;
  runner.execute(submit(world, 0, []));
  runner.execute(submit(world, 0, []));
  assertEquals([runner.pending, runner.full()], [2, false], "never full");
  let woke = 0;
  void runner.room().then(() => woke++);
  resolvers[0](1);
  await turns();
  assertEquals(woke, 1, "woken");
});

unit("runner: a fork that returns a promise fails with the async-fork TypeError; no task is left pending", () => {
  const world = newWorld({ fns: [() => Promise.resolve(1)] });
  const handle = world.host.fork(world.functions.all[0] as never, []);
  assert(handle >= 0, "forked");
  world.runner.execute(handle);
  const index = world.table.indexOf(handle);
  assertEquals(world.table.fields.outcome(index), Outcome.ERROR, "an error");
  assertEquals(world.runner.pending, 0, "not pending");
});

unit("runner: a result larger than the pool's payload memory fails with a RangeError naming result or error", () => {
  const world = newWorld({
    fns: [() => "x".repeat(4000), () => {
      throw new Error("y".repeat(4000));
    }],
    blocks: 2,
  });
  const big = submit(world, 0, []);
  world.runner.execute(big);
  const r = outcomeOf(world, big);
  assertEquals(r.outcome, Outcome.ERROR);
  assert(r.value instanceof RangeError && /task's result as it encodes/.test(r.value.message), String(r.value));
  const bigError = submit(world, 1, []);
  world.runner.execute(bigError);
  const e = outcomeOf(world, bigError);
  assertEquals(e.outcome, Outcome.ERROR);
  assert(e.value instanceof RangeError && /task's error as it encodes/.test(e.value.message), String(e.value));
});

unit("runner: a result that finds no free blocks goes by message: PAYLOAD_BY_MESSAGE, its bytes transferred", () => {
  const world = newWorld({ fns: [() => "z".repeat(300)], blocks: 4 });
  const handle = submit(world, 0, []);
  // Every block held (by the main thread's arguments of other tasks).
  const hog = new Encoder();
  hog.encodeArgs(["h".repeat(4 * 128 - 40)]);
  const other = world.main.allocate();
  assert(world.main.writeEncoded(world.main.indexOf(other), hog), "the hog holds the blocks");
  world.runner.execute(handle);
  const index = world.main.indexOf(handle);
  assertEquals(world.main.fields.payloadLength(index), PAYLOAD_BY_MESSAGE, "by message");
  const sent = world.posted.filter((p) => p.message.type === "payload");
  assertEquals(sent.length, 1, "one message");
  assertEquals(sent[0].transfer?.length, 1, "its bytes transferred");
  assertEquals(outcomeOf(world, handle), { outcome: Outcome.VALUE, value: "z".repeat(300) });
});

unit("runner: a task started with force lowers the kill guard while it runs, and releases it at its finish", () => {
  const during: boolean[] = [];
  const world = newWorld({ fns: [() => during.push(world.guard.lowered)] });
  world.guard.enter();
  const forced = submit(world, 0, [], TaskFlags.FORCE);
  world.runner.execute(forced);
  const plain = submit(world, 0, []);
  world.runner.execute(plain);
  assertEquals(during, [true, false], "down only while the forceable task ran");
  world.guard.leave();
  assertEquals(world.guard.lowered, false, "released: leaving pool code no longer lowers it");
  assertEquals(Atomics.load(world.status, StatusWords.guard), 1, "the guard word is up");
});

unit("runner: a fork of a forceable task does not hold the guard (only the submitted task may be forced)", () => {
  const during: boolean[] = [];
  const world = newWorld({ fns: [() => during.push(world.guard.lowered)] });
  const root = submit(world, 0, [], TaskFlags.FORCE);
  // Forked while the root runs (its record the fork's root), then run by itself, as a thief runs it.
  const depth = world.runs.enter(root);
  world.runs.setRoot(world.main.indexOf(root));
  const fork = world.host.fork(world.functions.all[0] as never, []);
  world.runs.exit(depth);
  assert(fork >= 0, "forked");
  assertEquals(world.deque.pop(), fork, "popped back, as a thief would take it");
  world.guard.enter();
  world.runner.execute(fork);
  assertEquals(during, [false], "the fork ran with the guard up");
  assertEquals(world.table.fields.outcome(world.table.indexOf(fork)), Outcome.VALUE, "finished");
});

unit("runner: a result marked with move() goes back by message with its buffer transferred", () => {
  const world = newWorld({ fns: [() => move(new Uint8Array([1, 2, 3]))] });
  const handle = submit(world, 0, []);
  world.runner.execute(handle);
  const index = world.main.indexOf(handle);
  assertEquals(world.main.fields.payloadLength(index), PAYLOAD_BY_MESSAGE, "by message");
  const sent = world.posted.filter((p) => p.message.type === "payload");
  assertEquals(sent.length, 1, "one message");
  assertEquals((sent[0].message.moved as ArrayBuffer[]).length, 1, "one moved buffer");
  assertEquals(sent[0].transfer?.length, 2, "the bytes and the moved buffer transferred");
  const { outcome, value } = outcomeOf(world, handle);
  assertEquals(outcome, Outcome.VALUE);
  assertEquals([...(value as Uint8Array)], [1, 2, 3], "its bytes");
});

unit("runner: a moved result of a producer's task (another thread) is copied into the record, not posted", () => {
  const world = newWorld({ fns: [() => move(new Uint8Array([4, 5]))], producers: 1 });
  const handle = submit(world, 0, [], 0, new Encoder(), originOf(1));
  world.runner.execute(handle);
  assertEquals(world.posted.filter((p) => p.message.type === "payload").length, 0, "no message");
  const { outcome, value } = outcomeOf(world, handle);
  assertEquals(outcome, Outcome.VALUE);
  assertEquals([...(value as Uint8Array)], [4, 5], "its bytes, copied");
});

unit("runner: after a finish the encoder refuses move() again (the mode of fork arguments is restored)", () => {
  const world = newWorld({ fns: [() => move(new Uint8Array([1])), () => 1] });
  world.runner.execute(submit(world, 0, []));
  assertEquals(world.encoder.moves, FORK_MOVE_REFUSAL, "after a moved result");
  world.runner.execute(submit(world, 1, []));
  assertEquals(world.encoder.moves, FORK_MOVE_REFUSAL, "after a plain one");
});

unit("runner: moved buffers that cannot be posted fail the task with a TypeError that says why", () => {
  const world = newWorld({ fns: [() => move(new Uint8Array([1]))] });
  const posted = world.posted;
  // The post of the moved result throws (a DataCloneError, say); the error's own post goes through.
  let first = true;
  (world.runner as unknown as { post: (m: unknown, t?: ArrayBuffer[]) => void }).post = (m, t) => {
    if (first && (m as { moved?: unknown }).moved !== undefined) {
      first = false;
      throw new DOMException("no", "DataCloneError");
    }
    posted.push({ message: m as Record<string, unknown>, transfer: t });
  };
  const handle = submit(world, 0, []);
  world.runner.execute(handle);
  const { outcome, value } = outcomeOf(world, handle);
  assertEquals(outcome, Outcome.ERROR, "failed");
  assert(
    (value as Error).name === "TypeError" &&
      (value as Error).message.startsWith("Cannot move the task's result's buffers back: "),
    String(value),
  );
  assertEquals(world.encoder.moves, FORK_MOVE_REFUSAL, "the fork mode restored");
  // (What its cause says differs by runtime: on Bun a DOMException is no Error and cannot cross, so the
  // cause is the encoder's stand-in for it; on Deno and Node it is the DataCloneError itself.)
  assertEquals(
    (value as Error).cause instanceof Error,
    true,
    "it has a cause",
  );
  assertEquals(
    world.main.fields.payloadLength(world.main.indexOf(handle)) !== PAYLOAD_BY_MESSAGE,
    true,
    "written to the record",
  );
  assertEquals(world.posted.filter((p) => p.message.type === "payload").length, 0, "nothing posted");
});

unit("runner: a task whose shared buffer has not arrived waits for it, then runs without a second claim", async () => {
  let seen: unknown;
  const world = newWorld({ fns: [(view) => (seen = (view as Int32Array)[0])] });
  const sab = new SharedArrayBuffer(4);
  new Int32Array(sab)[0] = 42;
  const handle = submit(world, 0, [new Int32Array(sab)], TaskFlags.WATCH_START, new Encoder({ shareBuffer: () => 5 }));
  const wait = world.runner.execute(handle);
  assert(wait instanceof Promise, "it waits for the buffer");
  assertEquals(stateOf(world, handle), TaskState.RUNNING, "claimed, RUNNING while it waits");
  // Its start was notified at the claim: the resumed run (claimed already) does not notify again.
  const waitAsync = (Atomics as unknown as { waitAsync?: typeof Atomics.waitAsync }).waitAsync;
  const index = world.main.indexOf(handle);
  const again = waitAsync?.(world.main.words, world.main.fields.stateWord(index), TaskState.RUNNING, 100);
  world.mail.addBuffer(5, sab);
  await turns();
  assertEquals(seen, 42, "run with the buffer");
  if (again !== undefined && again.async) assertEquals(await again.value, "timed-out", "no second notify");
  assertEquals(outcomeOf(world, handle).outcome, Outcome.VALUE, "finished");
});

unit("runner: inside a join (requeue) a task whose buffer has not arrived is handed back QUEUED, not run", () => {
  let runs = 0;
  const world = newWorld({ fns: [() => runs++] });
  const handle = submit(world, 0, [new Int32Array(new SharedArrayBuffer(4))], 0, new Encoder({ shareBuffer: () => 6 }));
  assertEquals(world.runner.execute(handle, true), undefined, "no wait");
  assertEquals(runs, 0, "not run");
  assertEquals(stateOf(world, handle), TaskState.QUEUED, "QUEUED again");
  assertEquals(world.levels.take(), handle, "in the injector");
});

unit("runner: a directed task runs with the buffers its arguments moved, then forgets them", () => {
  let seen: unknown;
  const world = newWorld({ fns: [(bytes) => (seen = [...(bytes as Uint8Array)])] });
  const buffer = new Uint8Array([9, 8]).buffer;
  const handle = submit(
    world,
    0,
    [move(new Uint8Array(buffer))],
    TaskFlags.DIRECTED,
    new Encoder({ moves: "transfer" }),
  );
  world.mail.directed(handle, [buffer]);
  world.runner.execute(handle);
  assertEquals(seen, [9, 8], "its moved bytes");
  assertEquals(world.mail.moved(handle), undefined, "forgotten");
  const cancelled = submit(world, 0, [move(new Uint8Array(2))], TaskFlags.DIRECTED, new Encoder({ moves: "transfer" }));
  world.mail.directed(cancelled, [new ArrayBuffer(2)]);
  world.main.fields.storeState(world.main.indexOf(cancelled), TaskState.CANCELLED);
  world.runner.execute(cancelled);
  assertEquals(world.mail.moved(cancelled), undefined, "a cancelled one's forgotten too");
});

unit("runner: a task whose timeout counts from its start notifies its state word at the claim", async () => {
  const waitAsync = (Atomics as unknown as { waitAsync?: typeof Atomics.waitAsync }).waitAsync;
  if (typeof waitAsync !== "function") return; // (no Atomics.waitAsync on this runtime)
  const world = newWorld({ fns: [() => 1] });
  for (const [flags, expected] of [[TaskFlags.WATCH_START, "ok"], [0, "timed-out"]] as const) {
    const handle = submit(world, 0, [], flags);
    const index = world.main.indexOf(handle);
    const waited = waitAsync(world.main.words, world.main.fields.stateWord(index), TaskState.QUEUED, 200);
    assert(waited.async, "waits");
    world.runner.execute(handle);
    assertEquals(await waited.value, expected, `flags ${flags}`);
  }
});

unit("runner: the run names this worker in the record's worker word, whatever it held", () => {
  const world = newWorld({ fns: [() => 1] });
  const handle = submit(world, 0, []);
  world.main.fields.storeWorker(world.main.indexOf(handle), 7);
  world.runner.execute(handle);
  assertEquals(world.main.fields.loadWorker(world.main.indexOf(handle)), 0, "worker 0");
});

unit("runner: a task the search took is no longer held once run or found cancelled (nothing is put back)", () => {
  let runs = 0;
  const world = newWorld({ fns: [() => runs++] });
  const a = submit(world, 0, []);
  const b = submit(world, 0, []);
  world.main.fields.storeState(world.main.indexOf(b), TaskState.CANCELLED);
  world.levels.pushPatiently(a, Level.normal);
  world.levels.pushPatiently(b, Level.normal);
  for (const expected of [a, b]) {
    const found = world.search.findWork();
    assertEquals(found, expected, "found in the injector");
    assertEquals(world.markWords[MarkWords.held], found, "held while in hand");
    world.runner.execute(found);
    assertEquals(world.markWords[MarkWords.held], -1, "not held once claimed or found cancelled");
  }
  assertEquals(world.search.findWork(), -1, "nothing put back");
  assertEquals(world.marks.cutShort(), false, "no step left to repair");
  assertEquals(runs, 1, "a ran once, b never");
});

unit("runner: a fork's result that finds no blocks waits, giving back the blocks of our finished forks", () => {
  // One worker: the word the wait sleeps on is the last of our own status line (the only line).
  const world = newWorld({ fns: [(n) => "r".repeat(n as number)], workers: 1, blocks: 4 });
  const host = world.host;
  const first = host.fork(world.functions.all[0] as never, [400]);
  const second = host.fork(world.functions.all[0] as never, [400]);
  assertEquals(world.deque.pop(), second, "taken");
  assertEquals(world.deque.pop(), first, "taken");
  world.runner.execute(first);
  // The first's result holds most blocks, unjoined: the second's waits until it is stashed.
  world.runner.execute(second);
  assertEquals(world.table.fields.outcome(world.table.indexOf(second)), Outcome.VALUE, "the second finished");
  assertEquals(host.joinForked(second), "r".repeat(400), "the second's result");
  assertEquals(host.joinForked(first), "r".repeat(400), "the first's, from its stash");
});

unit("runner: arguments in overflow blocks are freed at the start (run or aborted): all blocks free afterwards", () => {
  const world = newWorld({ fns: [(s) => (s as string).length], blocks: 4 });
  const big = "a".repeat(400);
  for (const flags of [0, TaskFlags.ABORTED]) {
    const handle = submit(world, 0, [big], flags);
    world.runner.execute(handle);
    assertEquals(stateOf(world, handle), TaskState.DONE, "finished");
    // Every block free again: another task's arguments of the same size fit.
    const probe = world.main.allocate();
    const encoder = new Encoder();
    encoder.encodeArgs([big]);
    assert(world.main.writeEncoded(world.main.indexOf(probe), encoder), `blocks free again (flags ${flags})`);
    world.main.release(world.main.indexOf(probe));
    world.main.release(world.main.indexOf(handle));
  }
});

unit("runner: runs cut short are repaired: a started one fails with a RangeError, a queued one is put back", () => {
  let runs = 0;
  const world = newWorld({ fns: [() => runs++] });
  const started = submit(world, 0, []);
  const queued = submit(world, 0, []);
  const elsewhere = submit(world, 0, []);
  for (const [h, state, worker] of [[started, TaskState.RUNNING, 0], [elsewhere, TaskState.RUNNING, 1]]) {
    world.main.fields.storeState(world.main.indexOf(h), state);
    world.main.fields.storeWorker(world.main.indexOf(h), worker);
  }
  // Three runs entered and never exited (a throw cut them short), one of them handed back (-1).
  world.runs.enter(started);
  world.runs.enter(queued);
  world.runs.enter(elsewhere);
  world.runs.enter(-1);
  world.runner.repairInterrupted();
  const failed = outcomeOf(world, started);
  assertEquals(failed.outcome, Outcome.ERROR, "the started one failed");
  assert(/its run was cut short/.test((failed.value as Error).message), String(failed.value));
  assertEquals((failed.value as Error).name, "RangeError", "a RangeError");
  assertEquals(stateOf(world, queued), TaskState.QUEUED, "the queued one still QUEUED");
  assertEquals(world.deque.pop(), queued, "put back on our deque");
  assertEquals(stateOf(world, elsewhere), TaskState.RUNNING, "another worker's run untouched");
  assertEquals(world.runs.runDepth(), 0, "no run left");
  assertEquals(world.marks.cutShort(), false, "nothing left to repair");
  assertEquals(runs, 0, "nothing run");
});

unit("runner: repairInterrupted gives the records of its cache to the shared list", () => {
  const world = newWorld({ fns: [() => 1] });
  const cancelled = submit(world, 0, []);
  world.main.fields.storeState(world.main.indexOf(cancelled), TaskState.CANCELLED);
  world.runner.execute(cancelled);
  assertEquals(stateOf(world, cancelled), TaskState.CACHED, "freed to this worker's cache");
  world.runner.repairInterrupted();
  assertEquals(stateOf(world, cancelled), TaskState.FREE, "flushed to the shared free list");
});

unit(
  "runner: with metrics, a task run by the loop leaves its finish time for the next start; a nested one does not",
  () => {
    const during: number[] = [];
    const world = newWorld({ fns: [() => during.push(world.stats.lastFinish)], metrics: true });
    world.stats.lastFinish = 5;
    const before = Date.now();
    world.runner.execute(submit(world, 0, []));
    assertEquals(during, [-1], "time passes in the task: no finish time while it runs");
    assert(world.stats.lastFinish >= before - 1, `the finish time kept: ${world.stats.lastFinish}`);
    world.stats.lastFinish = -1;
    world.runs.enter(-1);
    world.runner.execute(submit(world, 0, []));
    world.runs.exit(0);
    assertEquals(world.stats.lastFinish, -1, "nested in another run: not the loop's finish");
    const plain = newWorld({ fns: [() => 1] });
    plain.runner.execute(submit(plain, 0, []));
    assertEquals(plain.stats.lastFinish, -1, "without metrics: none kept");
  },
);

unit("runner: a result of exactly the pool's largest payload is a value; one byte more is the RangeError", () => {
  const world = newWorld({ fns: [(n) => "m".repeat(n as number)], blocks: 4 });
  const max = world.table.maxPayloadBytes();
  const probe = new Encoder();
  let n = 0;
  while ((probe.encode("m".repeat(n + 1)), probe.length) <= max) n++;
  probe.encode("m".repeat(n));
  assertEquals(probe.length, max, "a string that encodes to exactly the largest payload");
  const fits = submit(world, 0, [n]);
  world.runner.execute(fits);
  assertEquals(outcomeOf(world, fits), { outcome: Outcome.VALUE, value: "m".repeat(n) }, "exactly the largest");
  world.main.release(world.main.indexOf(fits));
  const over = submit(world, 0, [n + 1]);
  world.runner.execute(over);
  assertEquals(outcomeOf(world, over).outcome, Outcome.ERROR, "one more: refused");
});

unit("runner: a result whose then getter throws fails the task with that error; the worker goes on", () => {
  const world = newWorld({
    fns: [() => ({
      get then() {
        throw new EvalError("then getter");
      },
    }), () => 2],
  });
  const handle = submit(world, 0, []);
  world.runner.execute(handle);
  const { outcome, value } = outcomeOf(world, handle);
  assertEquals([outcome, (value as Error).name, (value as Error).message], [Outcome.ERROR, "EvalError", "then getter"]);
  assertEquals(world.runner.pending, 0, "not pending");
  const next = submit(world, 1, []);
  world.runner.execute(next);
  assertEquals(outcomeOf(world, next), { outcome: Outcome.VALUE, value: 2 }, "the next task runs");
});

unit("runner: arguments that cannot be decoded fail the task with the decoder's error, unrun", () => {
  let runs = 0;
  const world = newWorld({ fns: [() => runs++] });
  const handle = submit(world, 0, [1, 2]);
  const index = world.main.indexOf(handle);
  world.main.payloadBytes(index).fill(0xff, world.main.payloadStart(index), world.main.payloadStart(index) + 2);
  world.runner.execute(handle);
  assertEquals(outcomeOf(world, handle).outcome, Outcome.ERROR, "failed");
  assertEquals(runs, 0, "not run");
});

unit("runner: the error of moved buffers not posted goes by message itself when no blocks are free", () => {
  const world = newWorld({ fns: [() => move(new Uint8Array([1]))], blocks: 4 });
  const posted = world.posted;
  let first = true;
  (world.runner as unknown as { post: (m: unknown, t?: ArrayBuffer[]) => void }).post = (m, t) => {
    if (first && (m as { moved?: unknown }).moved !== undefined) {
      first = false;
      throw new DOMException("no", "DataCloneError");
    }
    posted.push({ message: m as Record<string, unknown>, transfer: t });
  };
  const handle = submit(world, 0, []);
  const hog = new Encoder();
  hog.encodeArgs(["h".repeat(4 * 128 - 40)]);
  assert(world.main.writeEncoded(world.main.indexOf(world.main.allocate()), hog), "the hog holds the blocks");
  world.runner.execute(handle);
  assertEquals(world.main.fields.payloadLength(world.main.indexOf(handle)), PAYLOAD_BY_MESSAGE, "by message");
  const { outcome, value } = outcomeOf(world, handle);
  assertEquals(outcome, Outcome.ERROR, "failed");
  assert(/Cannot move the task's result's buffers back/.test((value as Error).message), String(value));
});

unit("runner: after a finish, a fork's argument marked with move() is refused with the reason a fork gives", () => {
  const world = newWorld({ fns: [() => move(new Uint8Array([1])), () => 1], workers: 2 });
  world.runner.execute(submit(world, 0, []));
  let error: unknown;
  try {
    world.host.fork(world.functions.all[1] as never, [move(new Uint8Array(4))]);
  } catch (e) {
    error = e;
  }
  assert(error instanceof TypeError, `refused: ${error}`);
  assert(
    error.message.endsWith(
      "and a forked task's arguments cannot be moved (any worker may steal the fork): pass it without move() to copy it, or in a SharedArrayBuffer",
    ),
    error.message,
  );
});

/** A freed record's state: in a thread's cache, or on the shared list. */
function assertFreed(state: number, what: string): void {
  assert(state === TaskState.CACHED || state === TaskState.FREE, `${what} freed: state ${state}`);
}

/** A graph of two nodes placed by the main thread: `a(2)`, then `b(a's result, 10)` (a sink, RETURN). */
function chain(world: World): PlacedNode[] {
  const bytes = (args: unknown[]) => {
    const encoder = new Encoder();
    encoder.encodeArgs(args);
    return encoder.snapshot();
  };
  const nodes: PlacedNode[] = [
    {
      number: 1,
      task: "a",
      taskId: 0,
      bytes: bytes([2]),
      inputs: [],
      level: Level.normal,
      flags: 0,
      entry: undefined,
      handle: -1,
    },
    {
      number: 2,
      task: "b",
      taskId: 1,
      bytes: bytes([undefined, 10]),
      inputs: [{ node: 1, position: 0 }],
      level: Level.normal,
      flags: TaskFlags.RETURN,
      entry: undefined,
      handle: -1,
    },
  ];
  const host = {
    table: world.main,
    graph: world.memory.graph,
    levels: world.levels,
    sleep: world.memory.sleep,
    ledger: { placed: [] },
    origin: Origin.MAIN,
    arm() {},
    watch() {},
  } as unknown as GraphHost;
  assertEquals(placeGraph(host, nodes), undefined, "placed");
  return nodes;
}

unit("runner: a graph node runs with its input's result gathered from its slot; its walk queues the dependant", () => {
  const seen: unknown[] = [];
  const world = newWorld({
    fns: [
      (x) => (seen.push(["a", x]), (x as number) + 1),
      (x, y) => (seen.push(["b", x, y]), (x as number) * (y as number)),
    ],
  });
  const [a, b] = chain(world);
  const slot = new GraphRecords(world.memory.graph).nextSlot(world.main.indexOf(b.handle));
  assertEquals(world.levels.take(), a.handle, "the root is queued");
  world.runner.execute(a.handle);
  assertEquals(world.deque.pop(), b.handle, "the dependant, queued by a's walk on our deque");
  world.runner.execute(b.handle);
  assertEquals(seen, [["a", 2], ["b", 3, 10]], "b ran with a's result and its constant");
  assertEquals(outcomeOf(world, b.handle), { outcome: Outcome.VALUE, value: 30 }, "the sink's value comes back");
  assertEquals(executed(world), 2, "each counted");
  assertFreed(stateOf(world, a.handle), "a's record (nobody reads it)");
  assertFreed(stateOf(world, slot), "b's slot");
});

unit("runner: a graph root found cancelled is walked: its dependant is cancelled, nothing runs", () => {
  let runs = 0;
  const world = newWorld({ fns: [() => runs++, () => runs++] });
  const [a, b] = chain(world);
  world.main.fields.storeState(world.main.indexOf(a.handle), TaskState.CANCELLED);
  assertEquals(world.levels.take(), a.handle, "taken");
  world.runner.execute(a.handle);
  assertEquals(runs, 0, "nothing ran");
  assertEquals(world.deque.pop(), -1, "nothing queued");
  assertEquals(outcomeOf(world, b.handle).outcome, Outcome.ERROR, "the sink comes back failed");
});

unit("runner: a graph node aborted before its start fails with the abort, its slots freed, unrun", () => {
  let runs = 0;
  const world = newWorld({ fns: [(x) => x, () => runs++] });
  const [a, b] = chain(world);
  const slot = new GraphRecords(world.memory.graph).nextSlot(world.main.indexOf(b.handle));
  world.runner.execute(world.levels.take());
  assertEquals(world.deque.pop(), b.handle, "queued");
  world.main.fields.orFlags(world.main.indexOf(b.handle), TaskFlags.ABORTED);
  world.runner.execute(b.handle);
  assertEquals(runs, 0, "b never ran");
  const { outcome, value } = outcomeOf(world, b.handle);
  assertEquals([outcome, (value as Error).name], [Outcome.ERROR, "AbortError"], "its abort");
  assertFreed(stateOf(world, a.handle), "a's record (nobody reads it)");
  assertFreed(stateOf(world, slot), "b's slot");
});

unit("runner: a task handed back from a join is taken again once, not put back twice by a stale held mark", () => {
  let runs = 0;
  const world = newWorld({ fns: [() => runs++] });
  const sab = new SharedArrayBuffer(4);
  const handle = submit(world, 0, [new Int32Array(sab)], 0, new Encoder({ shareBuffer: () => 6 }));
  world.levels.pushPatiently(handle, Level.normal);
  assertEquals(world.search.findWork(), handle, "found");
  world.runner.execute(handle, true);
  assertEquals(stateOf(world, handle), TaskState.QUEUED, "handed back");
  world.mail.addBuffer(6, sab);
  assertEquals(world.search.findWork(), handle, "found again");
  world.runner.execute(handle);
  assertEquals(runs, 1, "run");
  assertEquals(world.search.findWork(), -1, "once only: nothing put back by a stale mark");
});

unit(
  "runner: a fork of a task whose timeout counts from its start does not notify (only the task's own claim does)",
  async () => {
    const waitAsync = (Atomics as unknown as { waitAsync?: typeof Atomics.waitAsync }).waitAsync;
    if (typeof waitAsync !== "function") return; // (no Atomics.waitAsync on this runtime)
    const world = newWorld({ fns: [() => 1], workers: 2 });
    const root = submit(world, 0, [], TaskFlags.WATCH_START);
    const depth = world.runs.enter(root);
    world.runs.setRoot(world.main.indexOf(root));
    const fork = world.host.fork(world.functions.all[0] as never, [{}]);
    world.runs.exit(depth);
    assertEquals(world.deque.pop(), fork, "taken");
    const index = world.table.indexOf(fork);
    const waited = waitAsync(world.table.words, world.table.fields.stateWord(index), TaskState.QUEUED, 100);
    world.runner.execute(fork);
    assertEquals(await waited.value, "timed-out", "not notified");
  },
);

unit("runner: a task's arguments' blocks are free while its own code runs", () => {
  const big = "a".repeat(400);
  let fitted: boolean | undefined;
  const world = newWorld({
    fns: [() => {
      const probe = world.main.allocate();
      const encoder = new Encoder();
      encoder.encodeArgs([big]);
      fitted = world.main.writeEncoded(world.main.indexOf(probe), encoder);
      world.main.release(world.main.indexOf(probe));
    }],
    blocks: 4,
  });
  world.runner.execute(submit(world, 0, [big]));
  assertEquals(fitted, true, "another payload of the same size fitted meanwhile");
});

unit("runner: a graph node's moved result is copied into its dependant's slot, not sent", () => {
  const world = newWorld({
    fns: [(x) => move(new Uint8Array([x as number, 7])), (bytes, y) => [...(bytes as Uint8Array), y]],
  });
  const [a, b] = chain(world);
  world.runner.execute(world.levels.take());
  assertEquals(world.deque.pop(), b.handle, "queued");
  world.runner.execute(b.handle);
  assertEquals(outcomeOf(world, b.handle), { outcome: Outcome.VALUE, value: [2, 7, 10] }, "b got a's bytes");
  assertEquals(world.posted.filter((p) => p.message.type === "payload").length, 0, "nothing posted");
  void a;
});

unit(
  "runner: a forced task that throws, or settles later, raises the guard again before the pool's own steps",
  async () => {
    const resolvers: ((v: unknown) => void)[] = [];
    const during: boolean[] = [];
    const world = newWorld({
      fns: [() => {
        throw new Error("x");
      }, () => new Promise((r) => resolvers.push(r))],
    });
    const guard = world.guard;
    guard.enter();
    world.runner.execute(submit(world, 0, [], TaskFlags.FORCE));
    assertEquals(guard.lowered, false, "up after a throw");
    const first = submit(world, 1, [], TaskFlags.FORCE);
    world.runner.execute(first);
    world.runner.execute(submit(world, 1, [], TaskFlags.FORCE));
    guard.leave(); // back to the event loop: down, forced async tasks pending
    assertEquals(guard.lowered, true, "down while forced async tasks are pending");
    // Each finish publishes through the marks: look at the guard there.
    const publish = world.marks.publishDone.bind(world.marks);
    world.marks.publishDone = (h, i, f) => {
      during.push(guard.lowered);
      publish(h, i, f);
    };
    resolvers[0](1);
    await turns();
    assertEquals(outcomeOf(world, first).value, 1, "the first finished");
    assertEquals(during, [false], "up during its finish");
    assertEquals(guard.lowered, true, "down again after it: the other forced task is still pending");
    resolvers[1](2);
    await turns();
    assertEquals(during, [false, false], "up during the second's finish");
    assertEquals(world.runner.pending, 0, "none pending");
    assertEquals(guard.lowered, false, "nothing held: left up");
  },
);

unit("runner: a graph node whose arguments cannot be decoded fails, and its slots are freed", () => {
  let runs = 0;
  const world = newWorld({ fns: [(x) => x, () => runs++] });
  const [, b] = chain(world);
  const slot = new GraphRecords(world.memory.graph).nextSlot(world.main.indexOf(b.handle));
  world.runner.execute(world.levels.take());
  assertEquals(world.deque.pop(), b.handle, "queued");
  const index = world.main.indexOf(b.handle);
  world.main.payloadBytes(index).fill(0xff, world.main.payloadStart(index), world.main.payloadStart(index) + 2);
  world.runner.execute(b.handle);
  assertEquals(runs, 0, "not run");
  assertEquals(outcomeOf(world, b.handle).outcome, Outcome.ERROR, "failed");
  assertFreed(stateOf(world, slot), "b's slot");
});

unit(
  "runner: the repair leaves a finished run alone, clears the held mark, orphans forks never joined, completes marks",
  () => {
    const world = newWorld({ fns: [() => 1], workers: 2 });
    const done = submit(world, 0, []);
    world.runner.execute(done);
    const before = outcomeOf(world, done);
    const started = submit(world, 0, []);
    world.main.fields.storeState(world.main.indexOf(started), TaskState.RUNNING);
    world.main.fields.storeWorker(world.main.indexOf(started), 0);
    // A fork never joined, a placing mark left by a fork cut short, a held mark naming the started run.
    const fork = world.host.fork(world.functions.all[0] as never, [{}]);
    assert(fork >= 0, "forked");
    const placing = world.table.allocate();
    world.marks.setPushing(placing);
    world.markWords[MarkWords.held] = started;
    world.runs.enter(done);
    world.runs.enter(started);
    world.runner.repairInterrupted();
    assertEquals(outcomeOf(world, done), before, "the finished run keeps its outcome");
    const failed = outcomeOf(world, started);
    assertEquals(
      (failed.value as Error).message,
      "Cannot finish the task as its run was cut short inside the pool's fork-join code (a stack overflow in a join nested that deep): recurse less deeply, or raise the stack size",
      "the started one's error",
    );
    assertEquals(world.markWords[MarkWords.held], -1, "the held mark cleared");
    assertEquals(world.markWords[MarkWords.pushing], -1, "the placing mark completed");
    assertEquals(world.marks.cutShort(), false, "nothing left: the fork orphaned, the marks repaired");
  },
);

unit(
  "runner: with metrics, a task's start is stamped with the loop's last finish if it kept one (0 included), else now",
  () => {
    const world = newWorld({ fns: [() => 1], metrics: true });
    const stamps = world.stats.stamps!;
    const calls: [number, number][] = [];
    const started = stamps.started.bind(stamps);
    stamps.started = (index, at) => {
      calls.push([index, at]);
      started(index, at);
    };
    for (const last of [250, 0]) {
      world.stats.lastFinish = last;
      const handle = submit(world, 0, []);
      world.runner.execute(handle);
      assertEquals(calls.at(-1), [world.main.indexOf(handle), last], `stamped with the last finish ${last}`);
      world.main.release(world.main.indexOf(handle));
    }
    world.stats.lastFinish = -1;
    const before = Date.now();
    const handle = submit(world, 0, []);
    world.runner.execute(handle);
    const [index, at] = calls.at(-1)!;
    assertEquals(index, world.main.indexOf(handle), "its record");
    assert(at >= before - 1, `none kept: stamped now (${at} against ${before})`);
    assertEquals(calls.length, 3, "once a task");
  },
);

unit("runner: a stale handle of a finished graph node is not walked again (only a cancelled node is)", () => {
  const world = newWorld({ fns: [(x) => x, (x, y) => (x as number) * (y as number)] });
  const [, b] = chain(world);
  world.runner.execute(world.levels.take());
  assertEquals(world.deque.pop(), b.handle, "queued");
  world.runner.execute(b.handle);
  const done = outcomeOf(world, b.handle);
  assertEquals(done, { outcome: Outcome.VALUE, value: 20 }, "b's value");
  world.runner.execute(b.handle); // a duplicate handle: DONE, not QUEUED
  assertEquals(outcomeOf(world, b.handle), done, "left as it was");
});

unit("runner: the repair wakes a waiting owner only if it gave records back to the shared list", () => {
  const world = newWorld({ fns: [() => 1] });
  const channel = world.memory.channels[0];
  Atomics.store(channel.words, channel.waiting, 1);
  world.runner.repairInterrupted();
  assertEquals(Atomics.load(channel.words, channel.waiting), 1, "nothing given back: not woken");
  const cancelled = submit(world, 0, []);
  world.main.fields.storeState(world.main.indexOf(cancelled), TaskState.CANCELLED);
  world.runner.execute(cancelled);
  world.runner.repairInterrupted();
  assertEquals(stateOf(world, cancelled), TaskState.FREE, "given back");
  assertEquals(Atomics.load(channel.words, channel.waiting), 0, "the owner woken");
});

unit("runner: a graph walk that frees a node's record wakes a producer counted as waiting for one", () => {
  const world = newWorld({ fns: [(x) => x, (x, y) => (x as number) * (y as number)] });
  const channel = world.memory.channels[0];
  chain(world);
  Atomics.store(world.memory.control, ControlWords.recordWaiters, 1);
  Atomics.store(channel.words, channel.counted, 1);
  Atomics.store(channel.words, channel.waiting, 1);
  world.runner.execute(world.levels.take()); // a's record, read by nobody, is freed by its walk
  assertEquals(Atomics.load(channel.words, channel.waiting), 0, "the waiting producer woken");
});

unit("runner: the repair makes an encoder left mid-encoding (its cleanup cut short) usable again", () => {
  const world = newWorld({ fns: [() => ({ ok: 1 })] });
  (world.encoder as unknown as { encoding: boolean }).encoding = true;
  world.runner.repairInterrupted();
  const handle = submit(world, 0, []);
  world.runner.execute(handle);
  assertEquals(outcomeOf(world, handle), { outcome: Outcome.VALUE, value: { ok: 1 } }, "its result encoded");
});

unit(
  "runner: a resumed task that still misses a buffer waits again (it is not handed back outside a join)",
  async () => {
    let seen: unknown;
    const world = newWorld({ fns: [(a, b) => (seen = [(a as Int32Array)[0], (b as Int32Array)[0]])] });
    const one = new SharedArrayBuffer(4);
    const two = new SharedArrayBuffer(4);
    new Int32Array(one)[0] = 1;
    new Int32Array(two)[0] = 2;
    let id = 20;
    const handle = submit(
      world,
      0,
      [new Int32Array(one), new Int32Array(two)],
      0,
      new Encoder({ shareBuffer: () => id++ }),
    );
    assert(world.runner.execute(handle) instanceof Promise, "waits for the first");
    world.mail.addBuffer(20, one);
    await turns();
    assertEquals(stateOf(world, handle), TaskState.RUNNING, "still ours, waiting for the second");
    assertEquals(world.levels.take(), -1, "not handed back");
    world.mail.addBuffer(21, two);
    await turns();
    assertEquals(seen, [1, 2], "run with both");
    assertEquals(outcomeOf(world, handle).outcome, Outcome.VALUE, "finished");
  },
);

unit("runner: a resumed run raises the guard for its pool steps and leaves it as the event loop had it", async () => {
  const during: boolean[] = [];
  const world = newWorld({ fns: [() => new Promise(() => {}), (v) => (v as Int32Array)[0]] });
  const guard = world.guard;
  guard.enter();
  world.runner.execute(submit(world, 0, [], TaskFlags.FORCE)); // a forced async task stays pending
  const sab = new SharedArrayBuffer(4);
  const handle = submit(world, 1, [new Int32Array(sab)], 0, new Encoder({ shareBuffer: () => 30 }));
  assert(world.runner.execute(handle) instanceof Promise, "waits for its buffer");
  guard.leave(); // back to the event loop: down (the forced task is pending)
  const publish = world.marks.publishDone.bind(world.marks);
  world.marks.publishDone = (h, i, f) => {
    during.push(guard.lowered);
    publish(h, i, f);
  };
  const taken = world.marks.taken.bind(world.marks);
  world.marks.taken = () => {
    during.push(guard.lowered);
    taken();
  };
  world.mail.addBuffer(30, sab);
  await turns();
  assertEquals(outcomeOf(world, handle).outcome, Outcome.VALUE, "the resumed task finished");
  assertEquals(during, [false, false], "up from its first step (the run's registration) to its finish");
  assertEquals(guard.lowered, true, "down again after it, as the event loop had it");
});

unit("runner: a graph walk that finds no blocks for its result gives back our finished forks' blocks meanwhile", () => {
  const world = newWorld({
    fns: [
      () => {
        // A fork finished (by a thief, here by us) and never joined: its result holds most of the blocks.
        const fork = world.host.fork(world.functions.all[2] as never, [400]);
        assertEquals(world.deque.pop(), fork, "taken");
        world.runner.execute(fork);
        return "a".repeat(400);
      },
      (x, y) => [(x as string).length, y],
      (n) => "f".repeat(n as number),
    ],
    blocks: 4,
  });
  const [, b] = chain(world);
  world.runner.execute(world.levels.take());
  assertEquals(world.deque.pop(), b.handle, "b queued: a's result reached its slot");
  world.runner.execute(b.handle);
  assertEquals(outcomeOf(world, b.handle), { outcome: Outcome.VALUE, value: [400, 10] }, "b got a's result");
});

unit(
  "runner: a submitted task's result of RESULT_TRANSFER_FROM bytes or more is copied to a buffer of its own and transferred",
  () => {
    const world = newWorld({ fns: [() => new Uint8Array(RESULT_TRANSFER_FROM).fill(3)] });
    const handle = submit(world, 0, []);
    world.runner.execute(handle);
    const sent = world.posted.filter((p) => p.message.type === "payload");
    assertEquals(sent.length, 1, "by message");
    assertEquals(
      (sent[0].message.moved as ArrayBuffer[] | undefined)?.length,
      1,
      "its bytes moved, on a buffer of their own",
    );
    const { outcome, value } = outcomeOf(world, handle);
    assertEquals([outcome, (value as Uint8Array).length, (value as Uint8Array)[7]], [
      Outcome.VALUE,
      RESULT_TRANSFER_FROM,
      3,
    ]);
  },
);
