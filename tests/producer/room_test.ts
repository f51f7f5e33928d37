/**
 * The room in the pool's queue (`lib/producer/room.ts`, `maxQueue`), one producer's side on one thread:
 * what `hasRoom` answers for each pending count, the count in `ControlWords.roomWaiters` that a wait adds
 * and when it is taken back, the order of the waiter's steps (count, arm, check again), and which channels
 * the settler's `released` wakes. The interleavings of the two sides are run under the harness
 * (tests/lincheck/room_wait_test.ts, spec/RoomWait.tla); these pin the values each call reads and writes,
 * which StrykerJS changed without the pool's suites noticing (issue 47, "Mutants nobody here chose").
 *
 * The shipped `Room` on a real pool memory (`PoolMemory.create`), its host a plain object: no worker runs,
 * and nothing here depends on timing (the uncount after a resolve is awaited, never timed).
 */
import { resolveOptions } from "../../lib/options.ts";
import { PoolMemory } from "../../lib/protocol/memory.ts";
import { ControlWords, ProducerWords } from "../../lib/protocol/layout.ts";
import { claimSlot, SlotState } from "../../lib/protocol/producers.ts";
import { Room } from "../../lib/producer/room.ts";
import { assertEquals, test } from "../_test.ts";

/** A pool memory with `open` producer slots claimed (slots 1 to `open`) of 4. */
function newMemory(open = 0): PoolMemory {
  const memory = PoolMemory.create(resolveOptions({ workers: 1, producers: 4 }).shape);
  for (let s = 1; s <= open; s++) assertEquals(claimSlot(memory.buffer, memory.layout), s, `claim ${s}`);
  return memory;
}

/** A room host whose pending count the test sets, and which counts its arms. */
function newHost(pending = 0) {
  const host = {
    mine: pending,
    arms: 0,
    onArm: () => {},
    pending: () => host.mine,
    arm: () => {
      host.arms++;
      host.onArm();
    },
  };
  return host;
}

/** Whether `promise` has resolved, after the microtasks now queued ran (no macrotask: no timer fires). */
async function resolved(promise: Promise<void>): Promise<boolean> {
  let done = false;
  promise.then(() => done = true);
  for (let i = 0; i < 10; i++) await null;
  return done;
}

/** Resolves after `check()` holds, awaiting macrotasks; fails (a hang, with `what`) after 10 s. */
async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`hang: ${what} not seen in 10 s`);
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

function waiters(memory: PoolMemory): number {
  return Atomics.load(memory.control, ControlWords.roomWaiters);
}

/** Every channel's waiting word set, as producers waiting on their channels. */
function allWaiting(memory: PoolMemory): void {
  for (const channel of memory.channels) Atomics.store(channel.words, channel.waiting, 1);
}

/** The slots whose channel was woken (their waiting word taken from 1 to 0). */
function woken(memory: PoolMemory): number[] {
  return memory.channels.filter((c) => Atomics.load(c.words, c.waiting) === 0).map((c) => c.slot);
}

test("an unbounded room has room at any count, counts no wait and wakes nobody when a task settles", async () => {
  const memory = newMemory(1);
  const host = newHost(1_000_000);
  const room = new Room(Infinity, host, memory, 0);
  Atomics.store(memory.control, ControlWords.ownerPending, 1_000_000);
  assertEquals(room.hasRoom(), true, "room at any count");
  assertEquals(await resolved(room.waitForRoom()), true, "waitForRoom resolves at once");
  assertEquals({ waiters: waiters(memory), arms: host.arms }, { waiters: 0, arms: 0 }, "no count, no arm");
  // Even with a count in the word (nothing shared: an unbounded pool's producers never count themselves).
  Atomics.store(memory.control, ControlWords.roomWaiters, 1);
  allWaiting(memory);
  room.released();
  assertEquals(woken(memory), [], "nobody woken");
  room.stop();
  assertEquals(waiters(memory), 1, "stop() changes no word either");
});

test("room exactly below the bound: the pool's sum (owner's word, every open slot's) and this producer's own count", () => {
  const memory = newMemory(2);
  const host = newHost();
  const room = new Room(5, host, memory, 0);
  for (
    const [owner, one, two, want] of [[4, 0, 0, true], [5, 0, 0, false], [0, 4, 0, true], [0, 0, 5, false], [
      1,
      2,
      1,
      true,
    ], [1, 2, 2, false]] as const
  ) {
    Atomics.store(memory.control, ControlWords.ownerPending, owner);
    Atomics.store(memory.slotLine(1), ProducerWords.pending, one);
    Atomics.store(memory.slotLine(2), ProducerWords.pending, two);
    assertEquals(room.pendingInPool(), owner + one + two, `the sum of ${owner}, ${one}, ${two}`);
    assertEquals(room.hasRoom(), want, `room with ${owner} + ${one} + ${two} pending of 5`);
  }
  // This producer's own count alone, whatever the words say (its ledger leads its word).
  Atomics.store(memory.control, ControlWords.ownerPending, 0);
  Atomics.store(memory.slotLine(1), ProducerWords.pending, 0);
  Atomics.store(memory.slotLine(2), ProducerWords.pending, 0);
  host.mine = 4;
  assertEquals(room.hasRoom(), true, "4 of its own pending of 5");
  host.mine = 5;
  assertEquals(room.hasRoom(), false, "5 of its own pending of 5");
});

test("the pool's sum counts open and dead slots, not free ones (whatever a free slot's word says)", () => {
  const memory = newMemory(2);
  const room = new Room(100, newHost(), memory, 1);
  Atomics.store(memory.slotLine(1), ProducerWords.pending, 3);
  Atomics.store(memory.slotLine(2), ProducerWords.pending, 7);
  Atomics.store(memory.slotLine(3), ProducerWords.pending, 11);
  assertEquals(room.pendingInPool(), 10, "slots 1 and 2 open, 3 free");
  Atomics.store(memory.slotLine(2), ProducerWords.state, SlotState.DEAD);
  assertEquals(room.pendingInPool(), 10, "a dead slot's tasks still count");
  Atomics.store(memory.slotLine(2), ProducerWords.state, SlotState.FREE);
  assertEquals(room.pendingInPool(), 3, "a free slot's word is left out");
});

test("turns: a producer counted alone keeps the whole bound; with another waiting (counted or not) it keeps to its share", () => {
  // The owner and one other producer open: two parties, share ⌊8 / 2⌋ = 4.
  const memory = newMemory(1);
  const host = newHost(4);
  const room = new Room(8, host, memory, 1);
  assertEquals(room.hasRoom(), true, "nobody waits: 4 of 8");
  Atomics.store(memory.control, ControlWords.roomWaiters, 1);
  assertEquals(room.hasRoom(), false, "another waits: 4 is the share");
  host.mine = 3;
  assertEquals(room.hasRoom(), true, "another waits: 3 is below the share");
  // This producer counts itself (it waits: the pool is full), then the pool has room again.
  Atomics.store(memory.control, ControlWords.roomWaiters, 0);
  host.mine = 5;
  Atomics.store(memory.slotLine(1), ProducerWords.pending, 5);
  Atomics.store(memory.control, ControlWords.ownerPending, 3);
  const wait = room.waitForRoom();
  assertEquals(waiters(memory), 1, "counted");
  Atomics.store(memory.control, ControlWords.ownerPending, 0);
  assertEquals(room.hasRoom(), true, "counted alone: 5 of 8, past its share, has room");
  Atomics.store(memory.control, ControlWords.roomWaiters, 2);
  assertEquals(room.hasRoom(), false, "counted and another counted: its share holds");
  room.stop();
  void wait;
});

test("the share divides the bound among the open producers and the owner, at least 1", () => {
  for (const [open, bound, share] of [[0, 7, 7], [1, 7, 3], [2, 7, 2], [3, 7, 1], [3, 2, 1], [4, 3, 1]] as const) {
    const memory = newMemory(open);
    const host = newHost();
    const room = new Room(bound, host, memory, 0);
    Atomics.store(memory.control, ControlWords.roomWaiters, 1);
    host.mine = share - 1;
    assertEquals(room.hasRoom(), true, `${open + 1} parties, bound ${bound}: ${host.mine} pending, below ${share}`);
    host.mine = share;
    assertEquals(room.hasRoom(), false, `${open + 1} parties, bound ${bound}: ${share}`);
  }
});

test("a wait with room resolves at once and counts nothing; without room it counts itself, arms, and waits", async () => {
  const memory = newMemory(1);
  const host = newHost();
  const room = new Room(2, host, memory, 1);
  assertEquals(await resolved(room.waitForRoom()), true, "room: at once");
  assertEquals({ waiters: waiters(memory), arms: host.arms, waiting: room.waiting }, {
    waiters: 0,
    arms: 0,
    waiting: false,
  }, "nothing counted");
  host.mine = 2;
  const wait = room.waitForRoom();
  assertEquals(await resolved(wait), false, "no room: it waits");
  assertEquals(room.waiting, true, "waiting");
  assertEquals(waiters(memory), 1, "counted in roomWaiters");
  assertEquals(Atomics.load(memory.slotLine(1), ProducerWords.countedRoom), 1, "and in its slot's line");
  assertEquals(host.arms, 1, "armed");
  // A second wait while counted counts nothing more.
  const again = room.waitForRoom();
  assertEquals(waiters(memory), 1, "counted once");
  room.stop();
  assertEquals(await resolved(wait) && await resolved(again), true, "stop() resolves every waiter");
  assertEquals(waiters(memory), 0, "stop() uncounts");
  assertEquals(Atomics.load(memory.slotLine(1), ProducerWords.countedRoom), 0, "in its slot's line too");
});

test("the waiter's order: counted before it arms, armed before it checks again; room at the check resolves it", async () => {
  const memory = newMemory();
  const host = newHost(3);
  const room = new Room(3, host, memory, 0);
  const seen: string[] = [];
  host.onArm = () => {
    seen.push(`arm with ${waiters(memory)} counted`);
    // A task settles between the arm and the check: only the check can see it (no settle comes after).
    host.mine = 1;
  };
  const wait = room.waitForRoom();
  assertEquals(seen, ["arm with 1 counted"], "counted, then armed");
  assertEquals(await resolved(wait), true, "the check after the arm saw the room");
  assertEquals(room.waiting, false, "no waiter left");
  // The owner has no slot line: its count is in roomWaiters alone.
  assertEquals(waiters(memory), 1, "still counted until the next macrotask");
  await until(() => waiters(memory) === 0, "the uncount after the macrotask");
});

test("after its waiters resolve a producer stays counted until the next macrotask, then uncounts (unless it waits again)", async () => {
  const memory = newMemory(1);
  const host = newHost(2);
  const room = new Room(2, host, memory, 1);
  const wait = room.waitForRoom();
  host.mine = 1;
  room.check();
  assertEquals(await resolved(wait), true, "the check resolved it");
  assertEquals(waiters(memory), 1, "counted after its waiter resolved (the submission after the await comes first)");
  await until(() => waiters(memory) === 0, "the uncount");
  assertEquals(Atomics.load(memory.slotLine(1), ProducerWords.countedRoom), 0, "the slot's line says uncounted");
  // Resolved, then waiting again before the macrotask: the uncount is cancelled, it stays counted.
  host.mine = 2;
  const first = room.waitForRoom();
  host.mine = 1;
  room.check();
  assertEquals(await resolved(first), true, "the first wait resolved");
  host.mine = 2;
  const second = room.waitForRoom();
  assertEquals(waiters(memory), 1, "counted once");
  await new Promise((resolve) => setTimeout(resolve, 20));
  assertEquals(waiters(memory), 1, "still counted: it waits again");
  assertEquals(room.waiting, true, "the second wait is pending");
  room.stop();
  assertEquals(await resolved(second), true, "stop() resolves it");
  assertEquals(waiters(memory), 0, "uncounted");
});

test("a wait that finds the pool still full stays counted across macrotasks", async () => {
  const memory = newMemory();
  const host = newHost(1);
  const room = new Room(1, host, memory, 0);
  const wait = room.waitForRoom();
  room.check();
  await new Promise((resolve) => setTimeout(resolve, 20));
  assertEquals({ waiters: waiters(memory), resolved: await resolved(wait) }, { waiters: 1, resolved: false });
  room.stop();
});

test("check() resolves this producer's waiters only when there is room", async () => {
  const memory = newMemory();
  const host = newHost(2);
  const room = new Room(2, host, memory, 0);
  const wait = room.waitForRoom();
  room.check();
  assertEquals(await resolved(wait), false, "still full");
  host.mine = 1;
  room.check();
  assertEquals(await resolved(wait), true, "room");
  room.stop();
});

test("released(): its own waiters when there is room; every other producer's channel when another counted itself", async () => {
  const memory = newMemory(3);
  const host = newHost();
  const room = new Room(4, host, memory, 2);
  // Nobody counted: nobody woken.
  allWaiting(memory);
  room.released();
  assertEquals(woken(memory), [], "nobody counted: nobody woken");
  // Another producer counted: every channel but this producer's own is woken.
  Atomics.store(memory.control, ControlWords.roomWaiters, 1);
  room.released();
  assertEquals(woken(memory), [0, 1, 3, 4], "every other producer's channel (a free slot's too)");
  // This producer waits (counted) with the pool full; a settle of its own makes room: its waiter resolves,
  // and with only itself counted nobody else is woken.
  Atomics.store(memory.control, ControlWords.roomWaiters, 0);
  host.mine = 4;
  const wait = room.waitForRoom();
  assertEquals(waiters(memory), 1, "counted");
  allWaiting(memory);
  room.released();
  assertEquals(await resolved(wait), false, "still full: still waiting");
  assertEquals(woken(memory), [], "counted alone: nobody else woken");
  host.mine = 3;
  room.released();
  assertEquals(await resolved(wait), true, "room: its waiter resolved");
  assertEquals(woken(memory), [], "still nobody else");
  // Itself and another counted: the others are woken.
  Atomics.store(memory.control, ControlWords.roomWaiters, 2);
  room.released();
  assertEquals(woken(memory), [0, 1, 3, 4], "another counted too: every other channel");
  room.stop();
});
