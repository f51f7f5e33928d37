/**
 * The one pool memory (lib/protocol/memory.ts): every view a thread opens on a pool's buffer is the region
 * the layout gives it, with the length its structure needs, for the worker or slot asked; the owner's
 * `create` sets up every queue; the bounds of worker and slot indexes are refused with named errors. The
 * pool's suites reach one layout and see a wrong view only when two views they use at once overlap; these
 * pin each view against the layout (issue 47: StrykerJS's mutants of the file).
 */
import { Injector } from "../../lib/protocol/injector.ts";
import {
  ControlWords,
  injectorRegionBytes,
  MARK_WORDS,
  NoteWords,
  poolLayout,
  type PoolShape,
  ProducerWords,
} from "../../lib/protocol/layout.ts";
import {
  allChannels,
  controlWords,
  notesOf,
  PoolMemory,
  producerChannel,
  slotCounts,
  slotLine,
  slotNotes,
} from "../../lib/protocol/memory.ts";
import { assert, assertEquals, assertThrows, test } from "../_test.ts";

const SHAPE: PoolShape = {
  workers: 3,
  dequeCapacity: 8,
  taskCapacity: 16,
  inlineBytes: 64,
  blockBytes: 128,
  blocks: 4,
  producers: 2,
};

/** Where a view starts and how many elements it has. */
function at(view: ArrayBufferView & { length: number }): [number, number] {
  return [view.byteOffset, view.length];
}

test("the pool-wide views are the layout's regions, each as long as what it holds", () => {
  const arena = new SharedArrayBuffer(64);
  const memory = PoolMemory.create(SHAPE, arena);
  const l = memory.layout;
  assertEquals(l, poolLayout(SHAPE), "the layout of the shape");
  assertEquals(memory.buffer.byteLength, l.totalBytes, "a buffer of the layout's size");
  assert(memory.arena === arena, "the arena it was given");
  assertEquals([memory.workers, memory.producers], [3, 2]);
  assertEquals(at(memory.control), [l.control, 48], "the control words: three lines");
  assertEquals(at(controlWords(memory.buffer, l)), [l.control, 48]);
  assertEquals(at(memory.status), [l.status, 3 * 16], "a status line a worker");
  assertEquals(at(memory.sleep.words), [l.sleep, 4 * 16], "the sleep region: the counters' line and a line a worker");
  assertEquals(memory.sleep.workers, 3);
  assertEquals(at(memory.progress), [l.progress, 16 * 16], "a progress line a record");
  assertEquals(at(memory.graph), [l.graph, 16 * 8], "eight graph words a record");
  const r = memory.records;
  assertEquals(at(r.words), [l.records, (16 * l.recordBytes) / 4], "the records' words");
  assertEquals(at(r.bytes), [l.records, 16 * l.recordBytes], "the records' bytes, the same memory");
  assertEquals(at(r.blockWords), [l.blockArea, (4 * 128) / 4], "the blocks' words");
  assertEquals(at(r.blockBytes), [l.blockArea, 4 * 128], "the blocks' bytes, the same memory");
  assertEquals(at(r.slabWords), [l.slabs, 1040], "the slab table");
  assertEquals([r.freeRecords.byteOffset, r.freeRecords.capacity], [l.freeRecords, 16], "the free records' queue");
  assertEquals([r.freeBlocks.byteOffset, r.freeBlocks.capacity], [l.freeBlocks, 4], "the free blocks' queue");
  assert(r.freeRecords.buffer === memory.buffer && r.freeBlocks.buffer === memory.buffer, "in the pool's buffer");
  for (const view of [memory.control, memory.status, memory.progress, memory.graph, r.words, r.slabWords]) {
    assert(view.buffer === memory.buffer, "every view is of the pool's buffer");
  }
}, 10_000);

test("each worker's deque, stealer and notes are its own, where the layout puts worker i", () => {
  const memory = PoolMemory.create(SHAPE);
  const l = memory.layout;
  assertEquals(memory.stealers.length, 3, "a stealer a worker");
  for (let i = 0; i < 3; i++) {
    const region = memory.dequeRegion(i);
    assertEquals([region.byteOffset, region.capacity], [l.deques + i * l.dequeBytes, 8], `deque ${i}'s region`);
    assert(region.buffer === memory.buffer, "in the pool's buffer");
    assertEquals(memory.stealers[i].words.byteOffset, l.deques + i * l.dequeBytes, `stealer ${i} on deque ${i}`);
    assertEquals(memory.deque(i, new Int32Array(4)).words.byteOffset, region.byteOffset, `worker ${i}'s deque`);
    const notes = memory.notes(i, NoteWords.injector);
    assertEquals(at(notes), [l.notes + i * l.notesBytes + NoteWords.injector * 4, 4], `worker ${i}'s notes`);
    assertEquals(at(memory.notes(i, NoteWords.marks, MARK_WORDS)), [l.notes + i * l.notesBytes + 80, 8]);
    assertEquals(at(notesOf(memory.buffer, l, i, NoteWords.table)), [l.notes + i * l.notesBytes + 112, 4]);
  }
  // A task pushed on worker 1's deque is stolen from worker 1's stealer alone, and noted in the notes given.
  const notes = new Int32Array(4);
  assert(memory.deque(1, notes).push(7), "pushed");
  assertEquals([memory.stealers[0].length, memory.stealers[1].length, memory.stealers[2].length], [0, 1, 0]);
  assertEquals(memory.stealers[1].steal(), 7, "stolen from worker 1");
}, 10_000);

test("the owner's create sets up every queue: the three levels and every producer's completion queue", () => {
  const memory = PoolMemory.create(SHAPE);
  const l = memory.layout;
  const regions = memory.levelRegions();
  assertEquals(regions.map((r) => [r.byteOffset, r.capacity]), [
    [l.injectorHigh, 16],
    [l.injector, 16],
    [l.injectorLow, 16],
  ], "high, normal, low");
  assert(regions.every((r) => r.buffer === memory.buffer), "in the pool's buffer");
  const queues = [...regions, ...memory.channels.map((c) => c.queue)];
  assertEquals(queues.length, 6, "three levels and three completion queues");
  for (const region of queues) {
    // An initialized queue's sequence word i holds i (injector.ts): a push into it works.
    const seqs = new Int32Array(region.buffer, region.byteOffset + 128, region.capacity);
    assertEquals([...seqs], [...Array(region.capacity).keys()], `the queue at ${region.byteOffset} is set up`);
    const queue = new Injector(region);
    assert(queue.push(5), "it takes a task");
    assertEquals(queue.pop(), 5, "and gives it back");
  }
  // The deques start empty.
  assert(memory.stealers.every((s) => s.length === 0), "every deque empty");
}, 10_000);

test("the levels' handles are the three queues, high to low, each with its own notes", () => {
  const memory = PoolMemory.create(SHAPE);
  const l = memory.layout;
  const notes = [new Int32Array(4), new Int32Array(4), new Int32Array(4)] as const;
  const levels = memory.levels(notes);
  assertEquals(levels.queues.map((q) => q.words.byteOffset), [l.injectorHigh, l.injector, l.injectorLow]);
  assertEquals(memory.levels().queues.map((q) => q.words.byteOffset), [l.injectorHigh, l.injector, l.injectorLow]);
  assert(levels.queues[2].push(9), "pushed on the low queue");
  assertEquals([...notes[0], ...notes[1]], [0, 0, 0, 0, 0, 0, 0, 0], "the other queues' notes untouched");
  assert(notes[2].includes(9), "the low queue's handle noted its push in its own notes");
  assertEquals(levels.queued, 1, "the levels see it");
  levels.pushPatiently(4, 0);
  assert(Atomics.load(memory.control, ControlWords.levels) !== 0, "a high push marks the pool's control words");
  assertEquals(levels.take(), 4, "high first");
}, 10_000);

test("each producer slot's channel: the owner's on the control words, slot k on its own line and queue", () => {
  const memory = PoolMemory.create(SHAPE);
  const l = memory.layout;
  const queueBytes = injectorRegionBytes(16);
  assertEquals(memory.channels.length, 3, "the owner's and two slots'");
  assertEquals(allChannels(memory.buffer, l).length, 3);
  const owner = memory.channels[0];
  assertEquals([owner.slot, owner.queue.byteOffset, owner.queue.capacity], [0, l.completions, 16]);
  assertEquals(at(owner.words), [l.control, 48], "the owner's waiting words are control words");
  assertEquals([owner.waiting, owner.progress, owner.counted], [
    ControlWords.mainWaiting,
    ControlWords.progressPending,
    ControlWords.ownerCountedWaiting,
  ]);
  for (const k of [1, 2]) {
    const c = memory.channels[k];
    assertEquals(c.slot, k);
    assertEquals([c.queue.byteOffset, c.queue.capacity], [l.producerQueues + (k - 1) * queueBytes, 16], `slot ${k}`);
    assert(c.queue.buffer === memory.buffer && c.words.buffer === memory.buffer, "in the pool's buffer");
    assertEquals(at(c.words), [l.producerLines + (k - 1) * 128, 16], `slot ${k}'s line: the first of its two`);
    assertEquals([c.waiting, c.progress, c.counted], [
      ProducerWords.waiting,
      ProducerWords.progressPending,
      ProducerWords.countedWaiting,
    ]);
    assert(memory.slotLine(k) === c.words, "slotLine is the channel's line");
    assertEquals(at(slotLine(memory.buffer, l, k)), at(c.words));
    assertEquals(at(memory.slotCounts(k)), [l.producerLines + (k - 1) * 128 + 64, 16], `slot ${k}'s counts line`);
    assertEquals(at(slotCounts(memory.buffer, l, k)), at(memory.slotCounts(k)));
    const notesAt = l.producerNotes + (k - 1) * l.notesBytes;
    assertEquals(at(memory.slotNotes(k, NoteWords.completions)), [notesAt + 32, 4], `slot ${k}'s notes`);
    assertEquals(at(slotNotes(memory.buffer, l, k, NoteWords.marks, 8)), [notesAt + 80, 8]);
  }
}, 10_000);

test("a pool without producer slots has the owner's channel alone", () => {
  const memory = PoolMemory.create({ ...SHAPE, producers: undefined });
  assertEquals([memory.producers, memory.channels.length], [0, 1]);
  const layout = { ...memory.layout, shape: { ...memory.layout.shape, producers: undefined } };
  assertEquals(new PoolMemory(memory.buffer, layout).producers, 0, "a shape with no producers has none");
  assertEquals(allChannels(memory.buffer, layout).length, 1);
  assertEquals(producerChannel(memory.buffer, layout, 0).slot, 0);
  assertThrows(() => producerChannel(memory.buffer, layout, 1), RangeError, "from 0 to 0: received 1");
}, 10_000);

test("another thread's memory on the same buffer opens the same views and writes nothing", () => {
  const owner = PoolMemory.create(SHAPE);
  const before = new Uint8Array(owner.buffer).slice();
  const mine = new PoolMemory(owner.buffer, owner.layout);
  assertEquals(new Uint8Array(owner.buffer), before, "opening writes nothing");
  assertEquals(mine.arena, undefined, "no arena unless given");
  assertEquals(at(mine.control), at(owner.control));
  assertEquals(at(mine.records.words), at(owner.records.words));
  assertEquals(mine.channels.map((c) => c.queue.byteOffset), owner.channels.map((c) => c.queue.byteOffset));
}, 10_000);

test("a worker or producer slot out of range is refused with a RangeError naming the range", () => {
  const memory = PoolMemory.create(SHAPE);
  const l = memory.layout;
  for (const worker of [-1, 3, 1.5]) {
    const message = `Cannot open notes as 'worker' must be an integer from 0 to 2: received ${worker}`;
    const error = assertThrows(() => memory.notes(worker, NoteWords.deque), RangeError, message);
    assertEquals(error.message, message);
  }
  for (const slot of [-1, 3, 0.5]) {
    const message = `Cannot open producer slot as 'slot' must be an integer from 0 to 2: received ${slot}`;
    const error = assertThrows(() => producerChannel(memory.buffer, l, slot), RangeError, message);
    assertEquals(error.message, message);
  }
  assertEquals(notesOf(memory.buffer, l, 0, NoteWords.deque).byteOffset, l.notes, "worker 0 is in range");
  assertEquals(producerChannel(memory.buffer, l, 2).slot, 2, "the last slot is in range");
}, 10_000);

test("the owner's create sets up its workers' deques alone: a shape whose deques are most of the buffer opens", () => {
  // One deque of 2^16 slots (256 KiB) and little else: a deque region set up past the last worker's would
  // not fit in the buffer.
  const shape = { workers: 1, dequeCapacity: 2 ** 16, taskCapacity: 2, inlineBytes: 0, blockBytes: 128, blocks: 2 };
  const memory = PoolMemory.create(shape);
  assert(memory.layout.totalBytes - memory.layout.injector < memory.layout.dequeBytes, "the rest is smaller");
  const deque = memory.deque(0, new Int32Array(4));
  assert(deque.push(3), "its deque takes a task");
  assertEquals(memory.stealers[0].steal(), 3, "and a thief takes it");
}, 10_000);
