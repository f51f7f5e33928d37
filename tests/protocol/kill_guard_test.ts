/**
 * The forced-kill handshake's bookkeeping on each side (`lib/protocol/kill_guard.ts`), on one thread: the
 * worker's guard (which tasks it holds, when it lowers and raises its guard word) and the main thread's
 * killer (a request's epoch move, more tasks joining a request under way, the withdrawal that moves the
 * epoch back, a stop that drops every request). The handshake's interleavings are model-checked
 * (spec/KillGuard.tla) and run under the harness (tests/lincheck/kill_guard_test.ts); these pin what each
 * call does alone, which the suites did not notice when StrykerJS changed it (issue 47).
 */
import { StatusWords } from "../../lib/protocol/layout.ts";
import { Killer, WorkerGuard } from "../../lib/protocol/kill_guard.ts";
import { assertEquals, test } from "../_test.ts";

const guardAt = (worker: number) => worker * StatusWords.count + StatusWords.guard;
const epochAt = (worker: number) => worker * StatusWords.count + StatusWords.epoch;

function statusOf(workers: number): Int32Array {
  return new Int32Array(new SharedArrayBuffer(workers * StatusWords.count * 4));
}

/** A killer over `status` whose tasks run where `running` says, recording the workers it terminates. */
function killerOf(status: Int32Array, running: Map<number, number>): { killer: Killer; terminated: number[] } {
  const terminated: number[] = [];
  const killer = new Killer(status, (handle, worker) => running.get(handle) === worker, (worker) => {
    terminated.push(worker);
  });
  return { killer, terminated };
}

/** Longer than the killer's poll (1 ms), so that a pending poll has run. */
const polls = () => new Promise((resolve) => setTimeout(resolve, 30));

test("a worker's guard starts up, and lowers on leaving only while it holds a task that may be forced", () => {
  const status = statusOf(1);
  const guard = new WorkerGuard(status, 0);
  assertEquals(Atomics.load(status, guardAt(0)), 1, "a new thread's guard is up");
  assertEquals(guard.lowered, false, "not lowered");
  guard.leave();
  assertEquals(Atomics.load(status, guardAt(0)), 1, "holding nothing, leaving keeps the guard up");
  assertEquals(guard.lowered, false, "still not lowered");
  guard.hold(7);
  guard.leave();
  assertEquals(Atomics.load(status, guardAt(0)), 0, "holding a forceable task, leaving lowers it");
  assertEquals(guard.lowered, true, "lowered");
  guard.enter();
  assertEquals(Atomics.load(status, guardAt(0)), 1, "entering raises it");
  assertEquals(guard.lowered, false, "not lowered");
}, 10_000);

test("a released task is held no more: leaving after its release keeps the guard up", () => {
  const status = statusOf(1);
  const guard = new WorkerGuard(status, 0);
  guard.hold(3);
  guard.hold(4);
  guard.release(3); // the first held (index 0), not the last
  guard.leave();
  assertEquals(Atomics.load(status, guardAt(0)), 0, "task 4 is still held: the guard lowers");
  guard.enter();
  guard.release(4);
  guard.leave();
  assertEquals(Atomics.load(status, guardAt(0)), 1, "nothing held: the guard stays up");
  guard.release(99); // a task never held: nothing changes
  guard.hold(5);
  guard.leave();
  assertEquals(guard.lowered, true, "a task held again lowers it");
}, 10_000);

test("a kill of a task not running on the worker moves no epoch and kills nothing", async () => {
  const status = statusOf(2);
  const { killer, terminated } = killerOf(status, new Map([[1, 1]]));
  Atomics.store(status, guardAt(0), 0);
  killer.request(0, 1, new Error("force")); // task 1 runs on worker 1, not 0
  await polls();
  assertEquals(Atomics.load(status, epochAt(0)), 0, "the epoch did not move");
  assertEquals(terminated, [], "nothing terminated");
  killer.stop();
}, 10_000);

test("a kill moves the worker's epoch on, and lands once its guard is down", async () => {
  const status = statusOf(1);
  const { killer, terminated } = killerOf(status, new Map([[1, 0]]));
  Atomics.store(status, guardAt(0), 1); // inside a pool step
  killer.request(0, 1, new Error("force"));
  assertEquals(Atomics.load(status, epochAt(0)), 1, "the epoch moved on by one");
  await polls();
  assertEquals(terminated, [], "not while the guard is up");
  Atomics.store(status, guardAt(0), 0);
  await polls();
  assertEquals(terminated, [0], "terminated once the guard is down");
  killer.stop();
}, 10_000);

test("a task that joins a kill under way keeps it going after the first task finished", async () => {
  const status = statusOf(1);
  const running = new Map([[1, 0], [2, 0]]);
  const { killer, terminated } = killerOf(status, running);
  Atomics.store(status, guardAt(0), 1);
  killer.request(0, 1, new Error("force 1"));
  killer.request(0, 2, new Error("force 2"));
  assertEquals(Atomics.load(status, epochAt(0)), 1, "one request, one move of the epoch");
  running.delete(1); // task 1 finished; task 2 still runs and must be forced
  Atomics.store(status, guardAt(0), 0);
  await polls();
  assertEquals(terminated, [0], "the kill lands for task 2");
  killer.stop();
}, 10_000);

test("a withdrawn kill moves the epoch back to where it was, and a later kill starts afresh", async () => {
  const status = statusOf(1);
  const running = new Map([[1, 0], [2, 0]]);
  const { killer, terminated } = killerOf(status, running);
  Atomics.store(status, guardAt(0), 1);
  killer.request(0, 1, new Error("force 1"));
  killer.request(0, 2, new Error("force 2"));
  running.clear(); // both finished inside the pool's step
  await polls();
  assertEquals(Atomics.load(status, epochAt(0)), 0, "withdrawn: the epoch is back");
  assertEquals(terminated, [], "nothing terminated");
  running.set(3, 0);
  Atomics.store(status, guardAt(0), 0);
  killer.request(0, 3, new Error("force 3"));
  assertEquals(Atomics.load(status, epochAt(0)), 1, "a new request moves the epoch again");
  assertEquals(terminated, [0], "and lands at once: the guard is down");
  killer.stop();
}, 10_000);

test("a stopped killer drops its kills under way: none lands afterwards", async () => {
  const status = statusOf(1);
  const { killer, terminated } = killerOf(status, new Map([[1, 0]]));
  Atomics.store(status, guardAt(0), 1);
  killer.request(0, 1, new Error("force"));
  killer.stop();
  Atomics.store(status, guardAt(0), 0);
  await polls();
  assertEquals(terminated, [], "no kill after stop");
}, 10_000);
