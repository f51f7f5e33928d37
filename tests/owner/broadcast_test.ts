/**
 * `Broadcaster`, the owner's broadcast of a task to every worker, on one thread with a real ledger and a
 * plain SharedArrayBuffer for the workers' status lines: each part is counted in its worker's `mail` word
 * before it is posted (an elastic pool's targets were counted by the owner: not again); a part for a dead
 * worker fails at once (an elastic target's count taken back); every part settles exactly once, with its
 * decoded outcome, its worker's death or the pool's termination, and a result after that is ignored; a
 * death resets its worker's `mail` word for the replacement. The pool tests (tests/pool/broadcast_test.ts)
 * cross it through real workers.
 */
import { Encoder, type ErrorClasses } from "../../lib/codec/codec.ts";
import { PoolTerminatedError, WorkerCrashedError } from "../../lib/errors.ts";
import { Broadcaster, type BroadcastMessage } from "../../lib/owner/broadcast.ts";
import { type Entry, TaskLedger } from "../../lib/producer/ledger.ts";
import { StatusWords } from "../../lib/protocol/layout.ts";
import { assert, assertEquals, test } from "../_test.ts";

/** How one entry settled. */
interface Outcome {
  how: "value" | "error";
  value: unknown;
}

/** A broadcaster over 3 workers' status lines, with what it posted and how each entry settled. */
function fresh(
  dead: number[] = [],
  options: { errorClasses?: ErrorClasses; shared?: SharedArrayBuffer[] } = {},
) {
  const status = new Int32Array(new SharedArrayBuffer(3 * StatusWords.count * 4));
  const mail = (w: number) => status[w * StatusWords.count + StatusWords.mail];
  const posted: [number, BroadcastMessage, number][] = []; // worker, message, its mail word when posted
  const ledger = new TaskLedger(8, undefined);
  const outcomes = new Map<Entry, Outcome>();
  const broadcaster = new Broadcaster({
    ledger,
    memory: { status },
    post: (worker, message) => posted.push([worker, message, mail(worker)]),
    isDead: (worker) => dead.includes(worker),
    resolveBuffer: (id) => options.shared![id],
    errorClasses: options.errorClasses,
  });
  const open = (n: number, task = "warm") =>
    Array.from({ length: n }, () => {
      const entry: Entry = ledger.open(
        task,
        4,
        (value) => outcomes.set(entry, { how: "value", value }),
        (value) => outcomes.set(entry, { how: "error", value }),
      );
      return entry;
    });
  return { broadcaster, status, mail, posted, ledger, outcomes, open };
}

/** The bytes of a value, as a worker encodes a part's outcome. */
function bytesOf(value: unknown, shareBuffer?: (sab: SharedArrayBuffer) => number): Uint8Array {
  const encoder = new Encoder(shareBuffer === undefined ? undefined : { shareBuffer });
  encoder.encode(value);
  return encoder.snapshot();
}

test("broadcast: part w goes to worker w, counted in its mail word before it is posted, each with its own id", () => {
  const { broadcaster, mail, posted, open, ledger } = fresh();
  const bytes = new Uint8Array([1, 2, 3]);
  broadcaster.send(open(3), 4, bytes);
  assertEquals(posted.map(([w]) => w), [0, 1, 2], "one part a worker, in order");
  assertEquals(posted.map(([, , m]) => m), [1, 1, 1], "each counted before it was posted");
  assertEquals([mail(0), mail(1), mail(2)], [1, 1, 1], "one message each");
  for (const [, message] of posted) {
    assertEquals(message.type, "broadcast", "a broadcast message");
    assertEquals(message.taskId, 4, "the task");
    assert(message.bytes === bytes, "the arguments' bytes");
  }
  assertEquals(new Set(posted.map(([, m]) => m.id)).size, 3, "three different ids");
  broadcaster.terminate("test over");
  assertEquals(ledger.pending, 0, "every part settled");
});

test("broadcast: an elastic pool's targets get the parts, their mail counted by the owner, not again", () => {
  const { broadcaster, status, mail, posted, open } = fresh();
  status[2 * StatusWords.count + StatusWords.mail] = 1; // Slots.claimMail counted it
  status[0 * StatusWords.count + StatusWords.mail] = 1;
  broadcaster.send(open(2), 4, new Uint8Array(1), [2, 0]);
  assertEquals(posted.map(([w]) => w), [2, 0], "entry k to targets[k]");
  assertEquals([mail(0), mail(1), mail(2)], [1, 0, 1], "no second count");
  broadcaster.terminate("test over");
});

test("broadcast: a part for a dead worker fails at once with WorkerCrashedError, unposted; the others go", async () => {
  const { broadcaster, mail, posted, open, outcomes, ledger } = fresh([1]);
  const entries = open(3, "reload");
  broadcaster.send(entries, 4, new Uint8Array(1));
  assertEquals(posted.map(([w]) => w), [0, 2], "nothing posted to the dead worker");
  assertEquals([mail(0), mail(1), mail(2)], [1, 0, 1], "the dead worker's mail not counted");
  const failed = outcomes.get(entries[1]);
  assert(failed?.how === "error" && failed.value instanceof WorkerCrashedError, "failed with WorkerCrashedError");
  const error = failed.value as WorkerCrashedError;
  assertEquals(error.worker, 1, "its worker");
  assertEquals(
    error.message,
    "Cannot finish broadcast 'reload' on worker 1 as the worker was being replaced when it was sent",
    "what could not be done and why",
  );
  assertEquals(outcomes.size, 1, "the others wait for their results");
  for (const [, message] of posted) broadcaster.result(message.id, bytesOf(message.id), false);
  assertEquals(ledger.pending, 0, "every part settled");
  assertEquals(ledger.duplicateSettles, 0, "each once");
  await Promise.resolve();
});

test("broadcast: an elastic target found dead has its count taken back (its replacement starts from 0)", () => {
  const { broadcaster, status, mail, posted, open, outcomes } = fresh([2]);
  status[2 * StatusWords.count + StatusWords.mail] = 1;
  status[1 * StatusWords.count + StatusWords.mail] = 1;
  const entries = open(2);
  broadcaster.send(entries, 4, new Uint8Array(1), [2, 1]);
  assertEquals(posted.map(([w]) => w), [1], "only the live target");
  assertEquals([mail(1), mail(2)], [1, 0], "the dead target's count taken back, the live one's kept");
  assertEquals(outcomes.get(entries[0])?.how, "error", "the dead target's part failed");
  broadcaster.terminate("test over");
});

test("broadcast: a result settles its part once, with the decoded value, or as an error when failed", () => {
  const { broadcaster, posted, open, outcomes, ledger } = fresh();
  const entries = open(3);
  broadcaster.send(entries, 4, new Uint8Array(1));
  const id = (w: number) => posted.find(([worker]) => worker === w)![1].id;
  broadcaster.result(id(1), bytesOf({ worker: 1, list: [1, 2] }), false);
  assertEquals(outcomes.get(entries[1]), { how: "value", value: { worker: 1, list: [1, 2] } }, "its value");
  broadcaster.result(id(0), bytesOf(new RangeError("no cache")), true);
  const failed = outcomes.get(entries[0]);
  assert(failed?.how === "error" && failed.value instanceof RangeError, "its error, decoded");
  assertEquals((failed.value as Error).message, "no cache", "with its message");
  broadcaster.result(id(1), bytesOf("again"), false);
  broadcaster.result(id(0), bytesOf("again"), false);
  broadcaster.result(999, bytesOf("unknown"), false);
  assertEquals(ledger.duplicateSettles, 0, "a result after its part settled, or for no part, is ignored");
  assertEquals(outcomes.get(entries[1])?.value, { worker: 1, list: [1, 2] }, "unchanged");
  assertEquals(outcomes.has(entries[2]), false, "worker 2's part still waits");
  broadcaster.result(id(2), bytesOf(2), false);
  assertEquals(outcomes.get(entries[2]), { how: "value", value: 2 }, "settled by its own result");
  assertEquals(ledger.pending, 0, "every part settled");
});

test("broadcast: a result that cannot be decoded fails its part with the decoder's error", () => {
  const { broadcaster, posted, open, outcomes, ledger } = fresh();
  const entries = open(1);
  broadcaster.send(entries, 4, new Uint8Array(1));
  broadcaster.result(posted[0][1].id, new Uint8Array([0xff, 0xff, 0xff]), false);
  const failed = outcomes.get(entries[0]);
  assert(failed?.how === "error" && failed.value instanceof Error, "failed, with the decoder's error");
  assertEquals(ledger.pending, 0, "settled");
});

test("broadcast: results are decoded with the pool's error classes and its shared buffers", () => {
  class QuotaError extends Error {}
  const sab = new SharedArrayBuffer(16);
  const { broadcaster, posted, open, outcomes } = fresh([], {
    errorClasses: new Map([["QuotaError", QuotaError]]),
    shared: [new SharedArrayBuffer(4), sab],
  });
  const entries = open(2);
  broadcaster.send(entries, 4, new Uint8Array(1));
  broadcaster.result(posted[0][1].id, bytesOf(new QuotaError("over")), true);
  broadcaster.result(posted[1][1].id, bytesOf(new Int32Array(sab), () => 1), false);
  assert(outcomes.get(entries[0])?.value instanceof QuotaError, "its registered class");
  const view = outcomes.get(entries[1])?.value as Int32Array;
  assert(view instanceof Int32Array && view.buffer === sab, "the buffer its id names, by reference");
});

test("broadcast: a worker's death fails its parts only, with the cause, and resets its mail word", () => {
  const { broadcaster, mail, posted, open, outcomes, ledger } = fresh();
  const first = open(3, "warm");
  const second = open(3, "load");
  broadcaster.send(first, 4, new Uint8Array(1));
  broadcaster.send(second, 5, new Uint8Array(1));
  assertEquals([mail(0), mail(1), mail(2)], [2, 2, 2], "two parts each");
  const cause = new Error("out of luck");
  broadcaster.workerDied(1, cause);
  assertEquals([mail(0), mail(1), mail(2)], [2, 0, 2], "its mail word reset for its replacement");
  for (const [entry, task] of [[first[1], "warm"], [second[1], "load"]] as const) {
    const failed = outcomes.get(entry);
    assert(failed?.how === "error" && failed.value instanceof WorkerCrashedError, `${task}: WorkerCrashedError`);
    const error = failed.value as WorkerCrashedError;
    assertEquals(error.worker, 1, "its worker");
    assertEquals(error.cause, cause, "what killed it");
    assertEquals(error.message, `Cannot finish broadcast '${task}' on worker 1 as the worker died before it finished`);
  }
  assertEquals(outcomes.size, 2, "the other workers' parts still wait");
  for (const [w, message] of posted) broadcaster.result(message.id, bytesOf(w), false);
  assertEquals(ledger.duplicateSettles, 0, "the dead worker's late results are ignored");
  for (const entry of [...first, ...second]) {
    if (entry === first[1] || entry === second[1]) continue;
    assertEquals(outcomes.get(entry)?.how, "value", "settled by its result");
  }
  assertEquals(ledger.pending, 0, "every part settled");
});

test("broadcast: terminate() fails every part in flight with PoolTerminatedError; nothing settles after", () => {
  const { broadcaster, posted, open, outcomes, ledger } = fresh();
  const entries = open(2, "warm");
  broadcaster.send(entries, 4, new Uint8Array(1));
  broadcaster.result(posted[0][1].id, bytesOf(0), false);
  broadcaster.terminate("closed by the test");
  const failed = outcomes.get(entries[1]);
  assert(failed?.how === "error" && failed.value instanceof PoolTerminatedError, "PoolTerminatedError");
  assertEquals(
    (failed.value as Error).message,
    "Cannot finish broadcast 'warm' on worker 1 as the pool was terminated (closed by the test)",
  );
  assertEquals(outcomes.get(entries[0])?.how, "value", "a settled part is not touched");
  broadcaster.result(posted[1][1].id, bytesOf(1), false);
  broadcaster.workerDied(1, new Error("late"));
  broadcaster.terminate("again");
  assertEquals(ledger.duplicateSettles, 0, "no part is left to settle again");
  assertEquals(ledger.pending, 0, "every part settled");
});
