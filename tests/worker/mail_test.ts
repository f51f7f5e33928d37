/**
 * `Mail`, a worker's messages outside the queues, on one thread: the `mail` word (one posted message less
 * per part or directed task taken up), the directed tasks in order with the buffers they moved (a stale
 * handle skipped and its buffers forgotten), the broadcast parts run in order with their outcomes posted,
 * and the buffers passed by reference with their waiters. The pool tests (broadcast_test.ts,
 * payload_test.ts) cross it through real workers; these pin each rule on its own, with a plain
 * SharedArrayBuffer for the status words and small stand-ins for the task table and the kill guard.
 */
import { BufferRegistry } from "../../lib/codec/buffers.ts";
import { decode, Encoder } from "../../lib/codec/codec.ts";
import type { WorkerGuard } from "../../lib/protocol/kill_guard.ts";
import { StatusWords } from "../../lib/protocol/layout.ts";
import type { TaskTable } from "../../lib/record/task.ts";
import type { TaskFunctions } from "../../lib/worker/functions.ts";
import { Mail } from "../../lib/worker/mail.ts";
import { assert, assertEquals, test, within } from "../_test.ts";

/** One message the mail posted to the main thread. */
interface Posted {
  type: string;
  id: number;
  bytes: Uint8Array;
  failed: boolean;
}

/** A mail of worker 1 of 2, with what it works with laid bare. */
function fresh(fns: ((...args: unknown[]) => unknown)[] = [], stale: number[] = []) {
  const status = new Int32Array(new SharedArrayBuffer(2 * StatusWords.count * 4));
  const mailAt = 1 * StatusWords.count + StatusWords.mail;
  const posted: Posted[] = [];
  const guard = {
    depth: 0,
    entered: 0,
    enter() {
      this.depth++, this.entered++;
    },
    leave() {
      this.depth--;
    },
  };
  const table = { isCurrent: (handle: number) => !stale.includes(handle) } as unknown as TaskTable;
  const buffers = new BufferRegistry(new Int32Array(new SharedArrayBuffer(4)), 0, () => {});
  const mail = new Mail({
    memory: { status },
    index: 1,
    table,
    functions: { all: fns } as unknown as TaskFunctions,
    buffers,
    post: (message) => posted.push(message as Posted),
    guard: guard as unknown as WorkerGuard,
  });
  return { mail, status, mailAt, posted, guard, buffers };
}

/** The bytes of a broadcast part's arguments. */
function args(...values: unknown[]): Uint8Array {
  const encoder = new Encoder();
  encoder.encode(values);
  return encoder.snapshot();
}

/** A posted outcome's value. */
function valueOf(p: Posted): unknown {
  return decode(p.bytes, 0, p.bytes.length, () => {
    throw new Error("no buffers here");
  });
}

test("mail: waiting() reads this worker's own mail word: non-zero while a message waits", () => {
  const { mail, status, mailAt } = fresh();
  assertEquals(mail.waiting(), false, "no mail");
  Atomics.store(status, mailAt - StatusWords.count, 5);
  assertEquals(mail.waiting(), false, "worker 0's mail is not ours");
  Atomics.store(status, mailAt, 1);
  assertEquals(mail.waiting(), true, "one message posted");
  Atomics.store(status, mailAt, -1);
  assertEquals(mail.waiting(), true, "taken up before the post counted it: still not zero");
});

test("mail: a broadcast part taken up counts one message less, inside the kill guard, and waits to be run", () => {
  const { mail, status, mailAt, guard } = fresh([() => 1]);
  Atomics.store(status, mailAt, 2);
  assertEquals(mail.hasParts(), false, "none yet");
  mail.broadcast(7, 0, args());
  assertEquals(Atomics.load(status, mailAt), 1, "one message less");
  assertEquals([guard.entered, guard.depth], [1, 0], "entered once, left");
  assertEquals(mail.hasParts(), true, "the part waits");
  assertEquals(mail.hasDirected(), false, "a part is not a directed task");
});

test("mail: broadcast parts run in order, each posting its result by part id; none is left afterwards", () => {
  const seen: unknown[] = [];
  const { mail, posted } = fresh([(a, b) => (seen.push([a, b]), `${a}${b}`), (x) => (seen.push(x), 2 * (x as number))]);
  mail.broadcast(3, 0, args("a", "b"));
  mail.broadcast(4, 1, args(21));
  mail.runParts();
  assertEquals(seen, [["a", "b"], 21], "run in order, with their arguments");
  assertEquals(posted.map((p) => [p.type, p.id, p.failed, valueOf(p)]), [
    ["broadcast-result", 3, false, "ab"],
    ["broadcast-result", 4, false, 42],
  ], "results posted by part id");
  assertEquals(mail.hasParts(), false, "none left");
  mail.runParts();
  assertEquals(posted.length, 2, "run once only");
});

test("mail: a part runs with broadcasting set (currentTask answers for it), cleared after it returns or throws", () => {
  const during: boolean[] = [];
  const made = fresh([() => during.push(made.mail.broadcasting), () => {
    during.push(made.mail.broadcasting);
    throw new RangeError("no");
  }]);
  const mail = made.mail;
  assertEquals(mail.broadcasting, false, "not before");
  mail.broadcast(1, 0, args());
  mail.runParts();
  assertEquals(mail.broadcasting, false, "cleared after a return");
  mail.broadcast(2, 1, args());
  mail.runParts();
  assertEquals(mail.broadcasting, false, "cleared after a throw");
  assertEquals(during, [true, true], "set while each ran");
});

test("mail: a part that throws posts failed with its error; the parts after it still run", () => {
  const { mail, posted } = fresh([() => {
    throw new RangeError("bad part");
  }, () => "after"]);
  mail.broadcast(1, 0, args());
  mail.broadcast(2, 1, args());
  mail.runParts();
  assertEquals(posted.map((p) => [p.id, p.failed]), [[1, true], [2, false]], "the throw fails its part only");
  const error = valueOf(posted[0]);
  assert(error instanceof Error && error.message === "bad part", "the error is posted");
  assertEquals(valueOf(posted[1]), "after", "the next part's result");
});

test("mail: an async part is pending until it settles, then posts its value or its rejection", async () => {
  let resolve!: (v: unknown) => void;
  let reject!: (e: unknown) => void;
  const { mail, posted } = fresh([
    () => new Promise((r) => resolve = r),
    () => new Promise((_, r) => reject = r),
  ]);
  mail.broadcast(1, 0, args());
  mail.broadcast(2, 1, args());
  mail.runParts();
  assertEquals(mail.pending, 2, "both pending");
  assertEquals(posted.length, 0, "nothing posted before they settle");
  resolve("done");
  await within(new Promise((r) => setTimeout(r, 0)), 10_000, "a turn");
  assertEquals(mail.pending, 1, "one settled");
  assertEquals(posted.map((p) => [p.id, p.failed, valueOf(p)]), [[1, false, "done"]], "its value");
  reject(new TypeError("nope"));
  await within(new Promise((r) => setTimeout(r, 0)), 10_000, "a turn");
  assertEquals(mail.pending, 0, "both settled");
  assertEquals([posted[1].id, posted[1].failed], [2, true], "the rejection fails its part");
  const error = valueOf(posted[1]);
  assert(error instanceof TypeError && error.message === "nope", "the rejection's error");
});

test("mail: a directed task taken up counts one message less, inside the kill guard, and keeps its moved buffers", () => {
  const { mail, status, mailAt, guard } = fresh();
  Atomics.store(status, mailAt, 3);
  const moved = [new ArrayBuffer(4)];
  assertEquals(mail.hasDirected(), false, "none yet");
  mail.directed(12, moved);
  assertEquals(Atomics.load(status, mailAt), 2, "one message less");
  assertEquals([guard.entered, guard.depth], [1, 0], "entered once, left");
  assertEquals(mail.hasDirected(), true, "it waits");
  assertEquals(mail.hasParts(), false, "a directed task is not a part");
  assertEquals(mail.moved(12), moved, "its moved buffers");
  assertEquals(mail.moved(13), undefined, "another task moved none");
});

test("mail: directed tasks are taken in the order posted, then -1", () => {
  const { mail } = fresh();
  mail.directed(5, []);
  mail.directed(9, []);
  mail.directed(2, []);
  assertEquals([mail.takeDirected(), mail.takeDirected(), mail.takeDirected()], [5, 9, 2], "in order");
  assertEquals(mail.hasDirected(), false, "none left");
  assertEquals(mail.takeDirected(), -1, "then none");
});

test("mail: a directed task whose record is no longer its own is skipped and its moved buffers forgotten", () => {
  const { mail } = fresh([], [5]);
  const moved5 = [new ArrayBuffer(1)];
  const moved9 = [new ArrayBuffer(2)];
  mail.directed(5, moved5);
  mail.directed(9, moved9);
  assertEquals(mail.takeDirected(), 9, "the stale handle is skipped");
  assertEquals(mail.moved(5), undefined, "its buffers forgotten");
  assertEquals(mail.moved(9), moved9, "the taken task's kept until it starts");
  const only = fresh([], [3]);
  only.mail.directed(3, []);
  assertEquals(only.mail.takeDirected(), -1, "only a stale one: none");
});

test("mail: forgetMoved forgets one task's moved buffers and keeps the others'", () => {
  const { mail } = fresh();
  const a = [new ArrayBuffer(1)];
  const b = [new ArrayBuffer(2)];
  mail.directed(1, a);
  mail.directed(2, b);
  mail.forgetMoved(1);
  assertEquals(mail.moved(1), undefined, "forgotten");
  assertEquals(mail.moved(2), b, "the other kept");
  mail.forgetMoved(2);
  assertEquals(mail.moved(2), undefined, "both forgotten");
  mail.forgetMoved(3);
  assertEquals(mail.moved(3), undefined, "forgetting a task that moved none is harmless");
});

test("mail: a buffer that arrives resolves its waiter once, is resolvable, and its waiter is forgotten", async () => {
  const { mail, buffers } = fresh();
  const sab = new SharedArrayBuffer(8);
  mail.addBuffer(4, new SharedArrayBuffer(4)); // no waiter: nothing to call
  let arrived = false;
  const waiting = mail.waitForBuffer(6).then(() => arrived = true);
  await within(new Promise((r) => setTimeout(r, 0)), 10_000, "a turn");
  assertEquals(arrived, false, "not before it arrives");
  mail.addBuffer(6, sab);
  await within(waiting, 10_000, "the waiter resolves");
  assertEquals(buffers.resolve(6), sab, "recorded");
  const waiters = (mail as unknown as { bufferWaiters: Map<number, unknown> }).bufferWaiters;
  assertEquals(waiters.size, 0, "no waiter kept once its buffer arrived");
});

test("mail: a part's result that holds a SharedArrayBuffer posts it by reference, shared through the registry", () => {
  const sab = new SharedArrayBuffer(16);
  const { mail, posted, buffers } = fresh([() => ({ memory: sab })]);
  mail.broadcast(1, 0, args());
  mail.runParts();
  assertEquals(posted.map((p) => [p.id, p.failed]), [[1, false]], "posted as a value");
  const value = decode(posted[0].bytes, 0, posted[0].bytes.length, buffers.resolve) as { memory: unknown };
  assert(value.memory === sab, "the same buffer, by its id in the registry, not a copy");
});
