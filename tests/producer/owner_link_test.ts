/**
 * `OwnerLink`, a producer's end of its link to the owner, on one thread with a stand-in port: the
 * lifecycle is read from the pool's state word (an unknown code reads as "terminated"); each call sends
 * exactly its message (a forced kill carries the cause's message only, a message carries no class), and
 * close() closes the port. `noWorkersCause` makes the owner's note's cause an error again, a
 * `ModuleLoadError` with its URL when the note carries one. The pool tests (tests/pool/inner_producer_test.ts,
 * no_workers_test.ts) cross the same link between real threads.
 */
import { ModuleLoadError } from "../../lib/errors.ts";
import { noWorkersCause, type NoWorkersNote, OwnerLink } from "../../lib/producer/owner_link.ts";
import { ControlWords } from "../../lib/protocol/layout.ts";
import type { LinkPort } from "../../lib/runtime/port.ts";
import { assert, assertEquals, test } from "../_test.ts";

/** A link over a stand-in port that records what is sent, and the control words it reads. */
function fresh() {
  const sent: unknown[] = [];
  let closed = 0;
  const port = { send: (message: unknown) => sent.push(message), close: () => closed++ };
  const control = new Int32Array(new SharedArrayBuffer((ControlWords.poolState + 4) * 4));
  const link = new OwnerLink(port as unknown as LinkPort, control);
  return { link, sent, control, closed: () => closed };
}

test("owner link: the lifecycle is the pool's state word by its code; an unknown code reads as terminated", () => {
  const { link, control } = fresh();
  const names = ["open", "closing", "closed", "terminated"];
  for (let code = 0; code < names.length; code++) {
    control[ControlWords.poolState] = code;
    assertEquals(link.state(), names[code], `code ${code}`);
  }
  for (const code of [4, 7, -1]) {
    control[ControlWords.poolState] = code;
    assertEquals(link.state(), "terminated", `unknown code ${code}`);
  }
  control[ControlWords.poolState - 1] = 1;
  control[ControlWords.poolState + 1] = 2;
  control[ControlWords.poolState] = 0;
  assertEquals(link.state(), "open", "its own word, not a neighbour");
});

test("owner link: post, shareBuffer and kill each send exactly their message to the owner", () => {
  const { link, sent, closed } = fresh();
  const buffer = new SharedArrayBuffer(8);
  link.post(3, { cancel: 12 });
  link.shareBuffer(5, buffer);
  link.kill(2, 9, new TypeError("too slow"));
  link.send({ type: "grow" });
  assertEquals(sent.length, 4, "one message a call");
  assertEquals(sent[0], { type: "post", worker: 3, message: { cancel: 12 } }, "a note for worker 3");
  assertEquals(sent[1], { type: "share", id: 5, buffer }, "the buffer by reference, with its id");
  assert((sent[1] as { buffer: unknown }).buffer === buffer, "the same buffer");
  assertEquals(sent[2], { type: "kill", worker: 2, handle: 9, reason: "too slow" }, "the cause's message only");
  assertEquals(sent[3], { type: "grow" }, "send passes a message as it is");
  assertEquals(closed(), 0, "nothing closed yet");
  assertEquals(link.pickWorker(), 0, "a remote producer directs no task: worker 0 is never used");
  link.close();
  assertEquals(closed(), 1, "close() closes the port, once");
  assertEquals(sent.length, 4, "closing sends nothing");
});

/** A note whose cause is `cause`. */
function note(cause: NoWorkersNote["cause"]): NoWorkersNote {
  return { type: "no-workers", what: "no worker is live", worker: 1, cause, permanent: false };
}

test("owner link: a no-workers note's cause with a URL is a ModuleLoadError again, with its URL, name and message", () => {
  const error = noWorkersCause(note({ name: "ModuleLoadError", message: "boom", url: "file:///app/tasks.ts" }));
  assert(error instanceof ModuleLoadError, "a ModuleLoadError");
  assertEquals((error as ModuleLoadError).url, "file:///app/tasks.ts", "its URL");
  assertEquals(error.message, "boom", "the message as it travelled");
  assertEquals(error.name, "ModuleLoadError", "its name");
});

test("owner link: a no-workers note's cause without a URL is a plain Error with the name and message it carried", () => {
  const error = noWorkersCause(note({ name: "TypeError", message: "bad start" }));
  assert(!(error instanceof ModuleLoadError), "not a ModuleLoadError");
  assertEquals(Object.getPrototypeOf(error), Error.prototype, "a plain Error");
  assertEquals(error.message, "bad start", "the message");
  assertEquals(error.name, "TypeError", "the name it carried");
});
