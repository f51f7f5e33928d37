/**
 * Every loop over the producer slots, with every slot claimed (issue 47, class 2). A loop over the slots
 * that stops one short passes wherever the tests never fill the last slot while the result matters; here
 * the pool has the most slots the options allow (`producers: 64`), every one is claimed, and each loop's
 * result is checked where only the last slot makes it right:
 *
 * - the claim (`protocol/producers.ts` `claimSlot`): every slot, the last included, then none;
 * - the room's sum (`producer/room.ts` `Room`: its lines, `pendingInPool`): the last slot's pending tasks;
 * - the room's wake (`Room.released`): the last slot's waiting producer;
 * - the record wake (`protocol/producers.ts` `wakeRecordWaiters`): the last slot's waiter, from every turn;
 * - the owner's sums (`owner/links.ts` `ProducerLinks.pending`, `counts`): the last slot's pending and counts;
 * - the records' accounting (`record/task.ts` `TaskTable.accounting`): the last slot's allocations;
 * - the release of a dead producer's slot (`releaseSlot`): the last slot's counts in the waiter words.
 *
 * The shipped code on a real pool memory (`PoolMemory.create`), single-threaded: no timing.
 */
import { resolveOptions } from "../../lib/options.ts";
import { PoolMemory } from "../../lib/protocol/memory.ts";
import { ControlWords, ProducerWords, SlotCountWords } from "../../lib/protocol/layout.ts";
import { claimSlot, releaseSlot, wakeRecordWaiters } from "../../lib/protocol/producers.ts";
import { Room } from "../../lib/producer/room.ts";
import { ProducerLinks } from "../../lib/owner/links.ts";
import { TaskTable } from "../../lib/record/task.ts";
import { assertEquals, test } from "../_test.ts";

/** The most producer slots a pool may have (options.ts: `producers` from 0 to 64). */
const SLOTS = 64;

/** A pool memory with every producer slot claimed (slots 1 to SLOTS). */
function fullMemory(slots = SLOTS): PoolMemory {
  const memory = PoolMemory.create(resolveOptions({ workers: 1, producers: slots, taskCapacity: 256 }).shape);
  for (let s = 1; s <= slots; s++) assertEquals(claimSlot(memory.buffer, memory.layout), s, `claim ${s}`);
  return memory;
}

test("slots: every producer slot can be claimed, the last included, then none; each counts open", () => {
  for (const slots of [1, 2, SLOTS]) {
    const memory = fullMemory(slots);
    assertEquals(claimSlot(memory.buffer, memory.layout), -1, `${slots} slots: a claim past the last`);
    assertEquals(Atomics.load(memory.control, ControlWords.producersOpen), slots, `${slots} slots: producersOpen`);
    // The last slot given back is the one claimed next.
    releaseSlot(memory.buffer, memory.layout, slots);
    assertEquals(claimSlot(memory.buffer, memory.layout), slots, `${slots} slots: the last slot again`);
  }
});

test("slots: the room's sum counts the last slot's pending tasks, and the bound holds with them", () => {
  for (const slots of [1, SLOTS]) {
    const memory = fullMemory(slots);
    const room = new Room(8, { pending: () => 0, arm: () => {} }, memory, 0);
    assertEquals(room.pendingInPool(), 0, "nothing pending");
    assertEquals(room.hasRoom(), true, "room while nothing is pending");
    Atomics.store(memory.slotLine(slots), ProducerWords.pending, 8);
    assertEquals(room.pendingInPool(), 8, `${slots} slots: the last slot's 8`);
    assertEquals(room.hasRoom(), false, `${slots} slots: the last slot holds the whole bound`);
    // Every slot one: the sum is every slot's.
    for (let s = 1; s <= slots; s++) Atomics.store(memory.slotLine(s), ProducerWords.pending, 1);
    Atomics.store(memory.control, ControlWords.ownerPending, 1);
    assertEquals(room.pendingInPool(), slots + 1, `${slots} slots: the owner's and every slot's`);
    // The room of the last slot's own producer sees the same sum.
    const last = new Room(8, { pending: () => 1, arm: () => {} }, memory, slots);
    assertEquals(last.pendingInPool(), slots + 1, `${slots} slots: the sum as the last slot sees it`);
  }
});

test("slots: a settle wakes the producer of the last slot waiting for room", () => {
  const memory = fullMemory();
  const room = new Room(8, { pending: () => 0, arm: () => {} }, memory, 0);
  // The last slot's producer counted itself and waits on its channel.
  Atomics.store(memory.control, ControlWords.roomWaiters, 1);
  const channel = memory.channels[SLOTS];
  assertEquals(channel.slot, SLOTS, "the last channel is the last slot's");
  Atomics.store(channel.words, channel.waiting, 1);
  room.released();
  assertEquals(Atomics.load(channel.words, channel.waiting), 0, "the last slot's waiting word was taken (woken)");
});

test("slots: a freed record's wake reaches the last slot's waiter from every turn", () => {
  const memory = fullMemory();
  const { channels, control } = memory;
  for (let turn = 0; turn < channels.length; turn++) {
    Atomics.store(control, ControlWords.recordWaiters, 1);
    Atomics.store(control, ControlWords.recordWakeTurn, turn);
    const last = channels[SLOTS];
    Atomics.store(last.words, last.counted, 1);
    Atomics.store(last.words, last.waiting, 1);
    assertEquals(wakeRecordWaiters(channels, control), true, `turn ${turn}: a waiter woken`);
    assertEquals(Atomics.load(last.words, last.waiting), 0, `turn ${turn}: the last slot's waiter`);
    Atomics.store(last.words, last.counted, 0);
  }
  // And the owner's (slot 0), the first, from every turn (the ring wraps to it).
  for (let turn = 0; turn < channels.length; turn++) {
    Atomics.store(control, ControlWords.recordWakeTurn, turn);
    const first = channels[0];
    Atomics.store(first.words, first.counted, 1);
    Atomics.store(first.words, first.waiting, 1);
    assertEquals(wakeRecordWaiters(channels, control), true, `turn ${turn}: the owner's waiter woken`);
    assertEquals(Atomics.load(first.words, first.waiting), 0, `turn ${turn}: the owner's waiter`);
    Atomics.store(first.words, first.counted, 0);
  }
});

test("slots: the owner's sums of its producers count the last slot (pending at close, the stats' counts)", () => {
  const memory = fullMemory();
  // Only the sums are called: they read the memory alone.
  const links = new ProducerLinks(memory, {} as never, {} as never, {} as never);
  assertEquals(links.pending(), 0, "nothing pending");
  Atomics.store(memory.slotLine(SLOTS), ProducerWords.pending, 3);
  assertEquals(links.pending(), 3, "the last slot's pending tasks");
  const counts = memory.slotCounts(SLOTS);
  Atomics.store(counts, SlotCountWords.submitted, 5);
  Atomics.store(counts, SlotCountWords.completed, 2);
  const all = links.counts();
  assertEquals(all.length, SLOTS, "every open slot");
  assertEquals(
    all[SLOTS - 1],
    { slot: SLOTS, open: true, submitted: 5, completed: 2, pending: 3, abandoned: 0 },
    "the last slot's counts",
  );
});

test("slots: the records' accounting sums the allocations of the last slot's producer", () => {
  const memory = fullMemory();
  TaskTable.init(memory);
  const owner = new TaskTable(memory);
  const last = new TaskTable(memory, { slot: SLOTS });
  last.release(last.indexOf(last.allocate()));
  assertEquals(owner.accounting(), { allocations: 1, releases: 1 }, "the last slot's allocation and release");
});

test("slots: the last slot given back after its producer died counted waiting uncounts both waits", () => {
  const memory = fullMemory();
  const line = memory.slotLine(SLOTS);
  Atomics.store(line, ProducerWords.countedWaiting, 1);
  Atomics.store(line, ProducerWords.countedRoom, 1);
  Atomics.store(memory.control, ControlWords.recordWaiters, 1);
  Atomics.store(memory.control, ControlWords.roomWaiters, 1);
  releaseSlot(memory.buffer, memory.layout, SLOTS);
  assertEquals(Atomics.load(memory.control, ControlWords.recordWaiters), 0, "recordWaiters");
  assertEquals(Atomics.load(memory.control, ControlWords.roomWaiters), 0, "roomWaiters");
  assertEquals(Atomics.load(memory.control, ControlWords.producersOpen), SLOTS - 1, "producersOpen");
});
