/**
 * The owner's side of producer links (`lib/owner/links.ts` `ProducerLinks`), on the shipped module with a
 * real pool memory (`PoolMemory.create`) and stand-ins for the rest of the owner (`LinkActs`,
 * `ProducerDeaths`): what a link's messages make the owner do, which slot each claims and gives back, the
 * sums it reads over every slot, the state it writes and the producers it wakes. Single-threaded but for
 * the message ports each link opens: no timing beyond a message's delivery.
 *
 * Written for StrykerJS's survivors of links.ts (issue 47, "Mutants nobody here chose").
 */
import { resolveOptions } from "../../lib/options.ts";
import { PoolMemory } from "../../lib/protocol/memory.ts";
import { ControlWords, ProducerWords, SlotCountWords } from "../../lib/protocol/layout.ts";
import { originOf, PoolStateCode, SlotState } from "../../lib/protocol/producers.ts";
import { type LinkActs, ProducerLinks } from "../../lib/owner/links.ts";
import type { ProducerDeaths } from "../../lib/owner/producer_deaths.ts";
import type { TaskTable } from "../../lib/record/task.ts";
import { assert, assertEquals, test, within } from "../_test.ts";

/** A pool memory with `slots` producer slots, none claimed. */
function memoryOf(slots: number): PoolMemory {
  return PoolMemory.create(resolveOptions({ workers: 1, producers: slots, taskCapacity: 256 }).shape);
}

test("links: pending() sums the pending words of the OPEN slots only", () => {
  const memory = memoryOf(3);
  const links = new ProducerLinks(memory, {} as never, {} as never, {} as never);
  for (let s = 1; s <= 3; s++) Atomics.store(memory.slotLine(s), ProducerWords.pending, s);
  assertEquals(links.pending(), 0, "no slot open: nothing counted");
  Atomics.store(memory.slotLine(2), ProducerWords.state, SlotState.OPEN);
  assertEquals(links.pending(), 2, "slot 2 open");
  Atomics.store(memory.slotLine(1), ProducerWords.state, SlotState.OPEN);
  Atomics.store(memory.slotLine(3), ProducerWords.state, SlotState.OPEN);
  assertEquals(links.pending(), 6, "every slot open");
  assertEquals(Atomics.load(memory.control, ControlWords.producersOpen), 0, "pending() claims nothing");
});

test("links: stateChanged() writes each state's code; only terminate wakes every waiting producer", () => {
  const memory = memoryOf(3);
  const links = new ProducerLinks(memory, {} as never, {} as never, {} as never);
  const remote = memory.channels.slice(1);
  for (const channel of remote) Atomics.store(channel.words, channel.waiting, 1);
  for (const state of ["open", "closing", "closed"] as const) {
    links.stateChanged(state);
    assertEquals(Atomics.load(memory.control, ControlWords.poolState), PoolStateCode[state], state);
    for (const channel of remote) {
      assertEquals(Atomics.load(channel.words, channel.waiting), 1, `${state}: slot ${channel.slot} not woken`);
    }
  }
  links.stateChanged("terminated");
  assertEquals(Atomics.load(memory.control, ControlWords.poolState), PoolStateCode.terminated, "terminated");
  for (const channel of remote) {
    assertEquals(Atomics.load(channel.words, channel.waiting), 0, `terminated: slot ${channel.slot} woken`);
  }
});

/** What the stand-ins saw: every act the links asked, every death they reported, every error. */
interface Seen {
  acts: unknown[][];
  died: number[];
  reported: [unknown, string][];
}

/** A `ProducerLinks` on `memory` with stand-in acts and deaths that record their calls. */
function linksOf(
  memory: PoolMemory,
  options: { buffers?: [number, SharedArrayBuffer][]; dieThrows?: boolean; table?: TaskTable } = {},
): { links: ProducerLinks; seen: Seen } {
  const seen: Seen = { acts: [], died: [], reported: [] };
  const acts: LinkActs = {
    post: (worker, message) => seen.acts.push(["post", worker, message]),
    share: (id, buffer) => seen.acts.push(["share", id, buffer]),
    kill: (worker, handle, cause) => seen.acts.push(["kill", worker, handle, cause.message]),
    buffers: () => options.buffers ?? [],
    grow: () => seen.acts.push(["grow"]),
    report: (error, where) => seen.reported.push([error, where]),
  };
  const deaths = {
    died: (slot: number) => {
      seen.died.push(slot);
      if (options.dieThrows) throw new Error(`death of ${slot}`);
    },
  } as unknown as ProducerDeaths;
  return { links: new ProducerLinks(memory, options.table ?? ({} as never), acts, deaths), seen };
}

/** A producer's end of a link, as a test sees it: the messages it received, in order. */
interface End {
  port: MessagePort;
  slot: number;
  received: { type: string; [key: string]: unknown }[];
}

/** Opens a link and listens to its producer's end. */
function openEnd(links: ProducerLinks): End {
  const { port, slot, lifeline } = links.open();
  assertEquals(lifeline, undefined, "no lifeline where the runtime fires the link's close event");
  const end: End = { port: port as unknown as MessagePort, slot, received: [] };
  end.port.onmessage = (event: MessageEvent) => end.received.push(event.data);
  // A listened port keeps Node's event loop alive: the tests' own timers wait for what they expect.
  (end.port as unknown as { unref?: () => void }).unref?.();
  return end;
}

/** Waits (a macrotask at a time, 200 at most: a message in this thread arrives in a few) until `done()` holds. */
async function until(done: () => boolean, what: string): Promise<void> {
  for (let i = 0; !done(); i++) {
    if (i > 200) throw new Error(`never: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

/** Lets every message already posted arrive (a few macrotasks). */
async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setTimeout(resolve, 1));
}

test("links: open() claims the free slots in order, sends each the buffers shared so far, then refuses", async () => {
  const memory = memoryOf(2);
  const shared: [number, SharedArrayBuffer][] = [[7, new SharedArrayBuffer(8)], [9, new SharedArrayBuffer(16)]];
  const { links, seen } = linksOf(memory, { buffers: shared });
  const a = openEnd(links);
  const b = openEnd(links);
  assertEquals([a.slot, b.slot], [1, 2], "slots 1 and 2");
  for (const s of [1, 2]) {
    assertEquals(Atomics.load(memory.slotLine(s), ProducerWords.state), SlotState.OPEN, `slot ${s}`);
  }
  let refused: unknown;
  try {
    links.open();
  } catch (error) {
    refused = error;
  }
  assert(refused instanceof RangeError, `a third open is a RangeError: ${refused}`);
  assert(
    (refused as Error).message.includes("all 2 producer slots are taken"),
    `the message names the slots: ${(refused as Error).message}`,
  );
  await until(() => a.received.length === 2 && b.received.length === 2, "the shared buffers");
  for (const end of [a, b]) {
    assertEquals(end.received.map((m) => [m.type, m.id, m.buffer]), [["buffer", 7, shared[0][1]], [
      "buffer",
      9,
      shared[1][1],
    ]], `slot ${end.slot}'s buffers`);
  }
  assertEquals(seen.reported, [], "nothing reported");
  links.closeAll();
});

test("links: a producer's post, kill and grow reach the owner's acts with their fields", async () => {
  const { links, seen } = linksOf(memoryOf(1));
  const end = openEnd(links);
  end.port.postMessage({ type: "post", worker: 3, message: { type: "x" } });
  end.port.postMessage({ type: "kill", worker: 2, handle: 41, reason: "stuck" });
  end.port.postMessage({ type: "grow" });
  await until(() => seen.acts.length === 3, "three acts");
  assertEquals(seen.acts, [["post", 3, { type: "x" }], ["kill", 2, 41, "stuck"], ["grow"]], "the acts");
  assertEquals(seen.reported, [], "nothing reported");
  links.closeAll();
});

test("links: a shared buffer reaches the owner's share and every other producer, not its sender", async () => {
  const { links, seen } = linksOf(memoryOf(3));
  const [a, b, c] = [openEnd(links), openEnd(links), openEnd(links)];
  const buffer = new SharedArrayBuffer(8);
  b.port.postMessage({ type: "share", id: 5, buffer });
  await until(() => a.received.length === 1 && c.received.length === 1, "the buffer at a and c");
  await settle();
  assertEquals(seen.acts.map((x) => [x[0], x[1]]), [["share", 5]], "the owner shared it");
  for (const end of [a, c]) assertEquals(end.received.map((m) => [m.type, m.id]), [["buffer", 5]], `slot ${end.slot}`);
  assertEquals(b.received, [], "not sent back to its sender");
  // A buffer a worker passed reaches every producer.
  links.bufferArrived(6, buffer);
  await until(() => [a, b, c].every((e) => e.received.some((m) => m.id === 6)), "buffer 6 everywhere");
  for (const end of [a, b, c]) {
    assertEquals(
      end.received.filter((m) => m.id === 6).map((m) => [m.type, m.buffer]),
      [["buffer", buffer]],
      "a buffer",
    );
  }
  assertEquals(seen.reported, [], "nothing reported");
  links.closeAll();
});

test("links: 'holding' with no lifeline does nothing; an unknown type is reported by name", async () => {
  const { links, seen } = linksOf(memoryOf(1));
  const end = openEnd(links);
  end.port.postMessage({ type: "holding" });
  end.port.postMessage({ type: "grow" });
  await until(() => seen.acts.length === 1, "the grow after the holding");
  assertEquals(seen.reported, [], "holding without a lifeline is no error");
  end.port.postMessage({ type: "bogus" });
  await until(() => seen.reported.length === 1, "the report");
  const [error, where] = seen.reported[0];
  assert(error instanceof TypeError, "a TypeError");
  assert((error as Error).message.includes("its type is unknown: bogus"), (error as Error).message);
  assertEquals(where, "(a producer's message)", "where");
  end.port.postMessage(null);
  await until(() => seen.reported.length === 2, "the report of null");
  assert((seen.reported[1][0] as Error).message.includes("unknown: undefined"), String(seen.reported[1][0]));
  links.closeAll();
});

test("links: 'closed' gives the slot back, answers 'released', and the end is forgotten (no death)", async () => {
  const memory = memoryOf(2);
  const { links, seen } = linksOf(memory);
  const a = openEnd(links);
  const b = openEnd(links);
  assertEquals(Atomics.load(memory.control, ControlWords.producersOpen), 2, "two open");
  a.port.postMessage({ type: "closed" });
  await until(() => a.received.length === 1, "released");
  assertEquals(a.received, [{ type: "released" }], "released");
  assertEquals(Atomics.load(memory.slotLine(1), ProducerWords.state), SlotState.FREE, "slot 1 FREE");
  assertEquals(Atomics.load(memory.slotLine(2), ProducerWords.state), SlotState.OPEN, "slot 2 still OPEN");
  assertEquals(Atomics.load(memory.control, ControlWords.producersOpen), 1, "one open");
  // Forgotten: a buffer no longer reaches it, and its end's close is no death.
  links.bufferArrived(1, new SharedArrayBuffer(8));
  await until(() => b.received.length === 1, "the buffer at b");
  // The owner closed its end: the producer's later messages reach nobody.
  const acts = seen.acts.length;
  a.port.postMessage({ type: "grow" });
  await settle();
  assertEquals(seen.acts.length, acts, "no act after released");
  a.port.close();
  await settle();
  assertEquals(a.received.length, 1, "nothing after released");
  assertEquals(seen.died, [], "a closed producer did not die");
  // Its slot is claimed again by the next handle.
  const c = openEnd(links);
  assertEquals(c.slot, 1, "slot 1 again");
  assertEquals(seen.reported, [], "nothing reported");
  links.closeAll();
});

/**
 * The owner's privates a runtime's close event reaches: where a producer's thread ends, the runtime closes
 * its end of the link and the owner's end fires `close` (Deno fires it only when the other end's thread
 * ends, not for a close in the same thread), which calls `ended(slot, end)`. The test plays that event.
 */
interface LinksInside {
  bySlot: Map<number, unknown>;
  ended(slot: number, end: unknown): void;
  received(slot: number, end: unknown, message: unknown): void;
}

test("links: a link that ends without 'closed' is a death of its slot, reported if the recovery throws", async () => {
  const memory = memoryOf(2);
  const { links, seen } = linksOf(memory, { dieThrows: true });
  const inside = links as unknown as LinksInside;
  const a = openEnd(links);
  const b = openEnd(links);
  const endA = inside.bySlot.get(1);
  const endB = inside.bySlot.get(2);
  assert(endA !== undefined && endB !== undefined && endA !== endB, "an end a slot");
  inside.ended(2, endA); // a stale event: not slot 2's end
  assertEquals(seen.died, [], "another slot's end is no death of slot 2");
  inside.ended(2, endB);
  assertEquals(seen.died, [2], "slot 2 died");
  assertEquals(seen.reported.length, 1, "the recovery's error reported");
  assertEquals(seen.reported[0][1], "(recovery of producer slot 2)", "where");
  assertEquals((seen.reported[0][0] as Error).message, "death of 2", "the error");
  inside.ended(2, endB);
  assertEquals(seen.died, [2], "died once");
  // A 'closed' that reaches the owner from the dead slot's old end gives nothing back (the death's sweep does).
  inside.received(2, endB, { type: "closed" });
  assertEquals(Atomics.load(memory.slotLine(2), ProducerWords.state), SlotState.OPEN, "slot 2 not released");
  assertEquals(Atomics.load(memory.control, ControlWords.producersOpen), 2, "still two open");
  // Forgotten: a buffer reaches only slot 1.
  links.bufferArrived(3, new SharedArrayBuffer(8));
  await until(() => a.received.length === 1, "the buffer at a");
  await settle();
  assertEquals(b.received, [], "nothing to the dead slot");
  // A producer that said 'closed' is forgotten too: its end's close later is no death.
  a.port.postMessage({ type: "closed" });
  await until(() => a.received.length === 2, "released");
  inside.ended(1, endA);
  assertEquals(seen.died, [2], "a closed producer did not die");
  // closeAll forgets every end first: their close events are no deaths.
  const c = openEnd(links);
  const endC = inside.bySlot.get(c.slot);
  links.closeAll();
  inside.ended(c.slot, endC);
  assertEquals(seen.died, [2], "closeAll's closes are no deaths");
});

test("links: closeAll() closes every link: the producers' ends see no more messages", async () => {
  const { links, seen } = linksOf(memoryOf(2));
  const [a, b] = [openEnd(links), openEnd(links)];
  links.closeAll();
  links.bufferArrived(4, new SharedArrayBuffer(8));
  a.port.postMessage({ type: "grow" });
  await settle();
  assertEquals([a.received, b.received], [[], []], "no buffer after closeAll");
  assertEquals(seen.acts, [], "no act after closeAll");
  assertEquals(seen.died, [], "no death");
});

test("links: a payload goes to its task's producer slot by the record's origin; slot 0's and unknown are not", async () => {
  const memory = memoryOf(2);
  let origin = 0;
  const table = { indexOf: (handle: number) => handle & 255, fields: { loadOrigin: () => origin } } as never;
  const { links } = linksOf(memory, { table });
  const [a, b] = [openEnd(links), openEnd(links)];
  assertEquals(links.payloadArrived(1, new Uint8Array(4), undefined), false, "origin 0: the owner's");
  origin = originOf(3);
  assertEquals(links.payloadArrived(2, new Uint8Array(4), undefined), false, "slot 3 is past the last");
  origin = originOf(2);
  const bytes = new Uint8Array([1, 2, 3]);
  assertEquals(links.payloadArrived(3, bytes, undefined), true, "slot 2's");
  origin = originOf(1);
  const moved = new ArrayBuffer(5);
  assertEquals(links.payloadArrived(4, new Uint8Array([9]), [moved]), true, "slot 1's");
  await until(() => a.received.length === 1 && b.received.length === 1, "the payloads");
  assertEquals(b.received.map((m) => [m.type, m.handle, [...(m.bytes as Uint8Array)], m.moved]), [[
    "payload",
    3,
    [1, 2, 3],
    undefined,
  ]], "slot 2's payload");
  assertEquals(a.received.map((m) => [m.type, m.handle, (m.moved as ArrayBuffer[]).map((x) => x.byteLength)]), [[
    "payload",
    4,
    [5],
  ]], "slot 1's payload with its moved buffer");
  assertEquals(bytes.byteLength, 0, "the bytes were transferred");
  assertEquals(moved.byteLength, 0, "the moved buffer was transferred");
  // A slot in range with no link (its producer died): nobody reads it, and nothing throws.
  links.closeAll();
  origin = originOf(2);
  assertEquals(links.payloadArrived(5, new Uint8Array([1]), undefined), true, "slot 2's, its link gone");
});

test("links: counts() lists the slots held or that counted a task, with pending net of completed and abandoned", () => {
  const memory = memoryOf(3);
  const { links } = linksOf(memory);
  assertEquals(links.counts(), [], "no slot held, none counted");
  Atomics.store(memory.slotLine(3), ProducerWords.state, SlotState.OPEN);
  assertEquals(
    links.counts(),
    [{ slot: 3, open: true, submitted: 0, completed: 0, pending: 0, abandoned: 0 }],
    "3 held",
  );
  const counts = (s: number, submitted: number, completed: number, abandoned: number) => {
    const line = memory.slotCounts(s);
    Atomics.store(line, SlotCountWords.submitted, submitted);
    Atomics.store(line, SlotCountWords.completed, completed);
    Atomics.store(line, SlotCountWords.abandoned, abandoned);
  };
  counts(1, 10, 4, 3); // FREE, counted: listed, not open
  counts(2, 5, 1, 0);
  Atomics.store(memory.slotLine(2), ProducerWords.state, SlotState.DEAD);
  counts(3, 6, 6, 2); // more settled and abandoned than submitted: pending 0, not negative
  assertEquals(links.counts(), [
    { slot: 1, open: false, submitted: 10, completed: 4, pending: 3, abandoned: 3 },
    { slot: 2, open: false, submitted: 5, completed: 1, pending: 4, abandoned: 0 },
    { slot: 3, open: true, submitted: 6, completed: 6, pending: 0, abandoned: 2 },
  ], "every slot");
});

test("links: quiet() resolves at once with nothing pending, and only once the pending tasks are gone", async () => {
  const memory = memoryOf(2);
  const { links } = linksOf(memory);
  await within(links.quiet(), 10_000, "quiet with nothing pending");
  Atomics.store(memory.slotLine(2), ProducerWords.state, SlotState.OPEN);
  Atomics.store(memory.slotLine(2), ProducerWords.pending, 1);
  let quiet = false;
  const done = links.quiet().then(() => (quiet = true));
  await settle();
  assertEquals(quiet, false, "not quiet while slot 2 has a task pending");
  Atomics.store(memory.slotLine(2), ProducerWords.pending, 0);
  await within(done, 10_000, "quiet once nothing is pending");
  assertEquals(quiet, true, "quiet");
});

/** A stand-in for the Web Locks API: the requests made, each with its callback (called to grant it). */
interface FakeLocks {
  requests: { name: string; signal: AbortSignal | undefined; grant: () => void }[];
}

/**
 * Runs `body` as in a browser: no `process` global and a `navigator.locks` stand-in (runtime/lifeline.ts
 * then asks for a lifeline). Synchronous only: the globals are back before anything else runs.
 */
function asInABrowser(body: (locks: FakeLocks) => void): void {
  const fake: FakeLocks = { requests: [] };
  const locks = {
    request(name: string, options: { signal?: AbortSignal }, callback: () => unknown) {
      fake.requests.push({ name, signal: options.signal, grant: () => void callback() });
      return new Promise(() => {});
    },
  };
  const saved = ["process", "navigator"].map((key) => [key, Object.getOwnPropertyDescriptor(globalThis, key)] as const);
  Object.defineProperty(globalThis, "process", { value: undefined, configurable: true, writable: true });
  Object.defineProperty(globalThis, "navigator", { value: { locks }, configurable: true, writable: true });
  try {
    body(fake);
  } finally {
    for (const [key, descriptor] of saved) {
      if (descriptor === undefined) delete (globalThis as Record<string, unknown>)[key];
      else Object.defineProperty(globalThis, key, descriptor);
    }
  }
}

/** The owner's privates a lifeline reaches (`received` is what a message to its end calls). */
interface LinksWithLifelines extends LinksInside {
  lifelines: Map<number, { name: string; cancel: (() => void) | undefined }>;
}

test("links: in a browser a link has a lifeline: watched once its producer holds it, its release is the death", () => {
  asInABrowser((locks) => {
    const { links, seen } = linksOf(memoryOf(4));
    const inside = links as unknown as LinksWithLifelines;
    const opened = [links.open(), links.open(), links.open(), links.open()];
    for (const { port } of opened) (port as unknown as MessagePort).close();
    const names = opened.map((o) => o.lifeline);
    for (const name of names) assert(name !== undefined && name.startsWith("filch.producer."), `a lifeline: ${name}`);
    assertEquals(new Set(names).size, 4, "one name a link");
    assertEquals(locks.requests, [], "not watched before the producer holds it");
    // Slot 1 holds its lifeline: watched once, by its name.
    const end1 = inside.bySlot.get(1);
    inside.received(1, end1, { type: "holding" });
    inside.received(1, end1, { type: "holding" });
    assertEquals(locks.requests.map((r) => r.name), [names[0]], "watched once, by slot 1's name");
    // A stale end's holding is not watched.
    inside.received(2, end1, { type: "holding" });
    assertEquals(locks.requests.length, 1, "another end's holding: not watched");
    // The lock granted: slot 1's producer released it without closing (its thread ended): a death.
    locks.requests[0].grant();
    assertEquals(seen.died, [1], "slot 1 died");
    assertEquals(inside.lifelines.has(1), false, "its lifeline dropped");
    assertEquals(locks.requests[0].signal?.aborted, true, "its watch cancelled");
    // Slot 2 holds, then says closed: its watch is cancelled, and no death.
    const end2 = inside.bySlot.get(2);
    inside.received(2, end2, { type: "holding" });
    assertEquals(locks.requests[1].name, names[1], "slot 2 watched");
    inside.received(2, end2, { type: "closed" });
    assertEquals(locks.requests[1].signal?.aborted, true, "slot 2's watch cancelled by its close");
    assertEquals(inside.lifelines.has(2), false, "slot 2's lifeline dropped");
    locks.requests[1].grant();
    assertEquals(seen.died, [1], "a closed producer did not die");
    // Slot 3 holds, slot 4 has not said so yet (nothing to cancel); the pool stops: every watch is cancelled.
    inside.received(3, inside.bySlot.get(3), { type: "holding" });
    links.closeAll();
    assertEquals(locks.requests[2].signal?.aborted, true, "slot 3's watch cancelled by closeAll");
    assertEquals(inside.lifelines.size, 0, "no lifeline left");
    assertEquals(seen.reported, [], "nothing reported");
  });
});

test("links: open() where the runtime has no MessageChannel is a TypeError, and claims no slot", () => {
  const memory = memoryOf(1);
  const { links } = linksOf(memory);
  const saved = Object.getOwnPropertyDescriptor(globalThis, "MessageChannel");
  Object.defineProperty(globalThis, "MessageChannel", { value: undefined, configurable: true, writable: true });
  let refused: unknown;
  try {
    links.open();
  } catch (error) {
    refused = error;
  } finally {
    if (saved === undefined) delete (globalThis as Record<string, unknown>).MessageChannel;
    else Object.defineProperty(globalThis, "MessageChannel", saved);
  }
  assert(refused instanceof TypeError, `a TypeError: ${refused}`);
  assert((refused as Error).message.includes("no MessageChannel"), (refused as Error).message);
  assertEquals(Atomics.load(memory.slotLine(1), ProducerWords.state), SlotState.FREE, "slot 1 not claimed");
  assertEquals(Atomics.load(memory.control, ControlWords.producersOpen), 0, "none open");
});

test("links: noWorkers() tells every open link; a fixed pool's note (permanent) reaches links opened later, an elastic pool's does not", async () => {
  const memory = memoryOf(3);
  const { links } = linksOf(memory);
  const note = (permanent: boolean) => ({
    type: "no-workers" as const,
    what: "the pool has no worker left",
    worker: 0,
    cause: { name: "ModuleLoadError", message: "boom" },
    permanent,
  });
  const a = openEnd(links);
  links.noWorkers(note(false));
  await until(() => a.received.length === 1, "the open link told");
  assertEquals(a.received.map((m) => [m.type, m.permanent]), [["no-workers", false]], "the elastic note");
  const b = openEnd(links);
  await settle();
  assertEquals(b.received, [], "a link opened after an elastic pool's note is not told it: growth may start a worker");
  links.noWorkers(note(true));
  const c = openEnd(links);
  await until(() => c.received.length === 1 && b.received.length === 1, "the fixed pool's note");
  assertEquals(c.received.map((m) => [m.type, m.permanent]), [["no-workers", true]], "a link opened later is told");
  links.closeAll();
});
