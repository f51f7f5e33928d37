/**
 * The pool buffer's layout (lib/protocol/layout.ts), as plain numbers: where each region starts, how many
 * bytes it is given, the word offsets inside the regions, and the rules each size must keep (with the
 * message that names the first one broken). The pool's suites run on one layout and see a wrong offset
 * only if two regions that a test uses at once collide; these pin the layout itself, computed here
 * independently of the module's helpers (issue 47: StrykerJS's mutants of the file).
 */
import {
  CACHE_LINE_BYTES,
  CACHE_LINE_WORDS,
  checkCapacity,
  checkRegion,
  ControlWords,
  dequeRegionBytes,
  DequeWords,
  GRAPH_WORDS,
  GraphWords,
  injectorRegionBytes,
  InjectorWords,
  MARK_WORDS,
  MarkWords,
  MAX_DEQUE_CAPACITY,
  MIN_DEQUE_CAPACITY,
  NOTE_WORDS,
  notesBytes,
  NoteWords,
  poolLayout,
  type PoolShape,
  ProducerWords,
  PROGRESS_CELL_WORDS,
  RECORD_HEADER_WORDS,
  roundUpToLine,
  SLAB_HEADER_WORDS,
  SLAB_REGION_BYTES,
  SLAB_SLOT_WORDS,
  SLAB_SLOTS,
  sleepRegionBytes,
  SleepWords,
  SlotCountWords,
  StatusWords,
} from "../../lib/protocol/layout.ts";
import { assert, assertEquals, assertThrows, test } from "../_test.ts";

/** `n` rounded up to whole 64-byte lines, written out here (not the module's `roundUpToLine`). */
function lines(n: number): number {
  return Math.ceil(n / 64) * 64;
}

/**
 * Each region of `shape`'s buffer in the order the layout places them, with the bytes its structure needs
 * (from the structures' own rules: a deque is 2 header lines and a word a slot, a queue 2 header lines and
 * two words a slot, a record a header line and its inline bytes, …).
 */
function expectedRegions(shape: Required<PoolShape>): [string, number][] {
  const { workers, dequeCapacity, taskCapacity, inlineBytes, blockBytes, blocks, producers } = shape;
  const queue = (capacity: number) => lines(128 + 8 * capacity);
  const notes = lines((40 + 4 * producers) * 4);
  return [
    ["control", 192],
    ["sleep", 64 * (workers + 1)],
    ["status", 64 * workers],
    ["deques", workers * lines(128 + 4 * dequeCapacity)],
    ["injector", queue(taskCapacity)],
    ["injectorHigh", queue(taskCapacity)],
    ["injectorLow", queue(taskCapacity)],
    ["freeRecords", queue(taskCapacity)],
    ["completions", queue(taskCapacity)],
    ["freeBlocks", queue(blocks)],
    ["records", taskCapacity * (64 + inlineBytes)],
    ["blockArea", blocks * blockBytes],
    ["slabs", lines(4 * (16 + 256 * 4))],
    ["progress", taskCapacity * 64],
    ["notes", workers * notes],
    ["producerLines", producers * 128],
    ["producerQueues", producers * queue(taskCapacity)],
    ["producerNotes", producers * notes],
    ["graph", taskCapacity * 8 * 4],
  ];
}

const SHAPES: Required<PoolShape>[] = [
  { workers: 1, dequeCapacity: 2, taskCapacity: 2, inlineBytes: 0, blockBytes: 128, blocks: 2, producers: 0 },
  { workers: 3, dequeCapacity: 64, taskCapacity: 16, inlineBytes: 192, blockBytes: 256, blocks: 8, producers: 1 },
  { workers: 2, dequeCapacity: 8, taskCapacity: 32, inlineBytes: 64, blockBytes: 192, blocks: 4, producers: 7 },
];

test("each region of the pool's buffer starts where the one before ends, with the bytes its structure needs", () => {
  for (const shape of SHAPES) {
    const layout = poolLayout(shape) as unknown as Record<string, number>;
    let at = 0;
    for (const [name, bytes] of expectedRegions(shape)) {
      assertEquals(layout[name], at, `${JSON.stringify(shape)}: ${name} starts after the regions before it`);
      at += bytes;
    }
    assertEquals(layout.totalBytes, at, `${JSON.stringify(shape)}: the total ends the last region`);
    assertEquals(layout.dequeBytes, lines(128 + 4 * shape.dequeCapacity), "a deque region's bytes");
    assertEquals(layout.recordBytes, 64 + shape.inlineBytes, "a record's bytes: its header line and inline bytes");
    assertEquals(layout.notesBytes, lines((40 + 4 * shape.producers) * 4), "a notes region's bytes");
  }
}, 10_000);

test("a shape without producers is laid out with none, and the layout keeps the shape it was given", () => {
  const shape = { workers: 2, dequeCapacity: 16, taskCapacity: 16, inlineBytes: 64, blockBytes: 128, blocks: 8 };
  const layout = poolLayout(shape);
  assertEquals(layout.shape, { ...shape, producers: 0 }, "producers: 0 filled in");
  assertEquals(poolLayout({ ...shape, producers: 0 }), layout, "the same layout as producers: 0");
  assertEquals(layout.producerLines, layout.producerQueues, "no producer lines");
  assertEquals(layout.producerQueues, layout.producerNotes, "no producer queues");
}, 10_000);

test("the region sizes: deques, queues, sleep, notes and lines are whole lines of what they hold", () => {
  assertEquals(CACHE_LINE_BYTES, 64);
  assertEquals(CACHE_LINE_WORDS, 16);
  assertEquals([roundUpToLine(0), roundUpToLine(1), roundUpToLine(64), roundUpToLine(65)], [0, 64, 64, 128]);
  assertEquals([dequeRegionBytes(2), dequeRegionBytes(256)], [192, 1152], "two header lines, a word a slot");
  assertEquals([injectorRegionBytes(2), injectorRegionBytes(16)], [192, 256], "two header lines, two words a slot");
  assertEquals([sleepRegionBytes(1), sleepRegionBytes(2)], [128, 192], "the counters' line and a line a worker");
  assertEquals([notesBytes(0), notesBytes(1), notesBytes(6), notesBytes(7)], [192, 192, 256, 320]);
  assertEquals(SLAB_REGION_BYTES, (SLAB_HEADER_WORDS + SLAB_SLOTS * SLAB_SLOT_WORDS) * 4);
  assertEquals([SLAB_HEADER_WORDS, SLAB_SLOTS, SLAB_SLOT_WORDS, SLAB_REGION_BYTES], [16, 256, 4, 4160]);
  assertEquals([MIN_DEQUE_CAPACITY, MAX_DEQUE_CAPACITY], [2, 2 ** 28]);
  assertEquals([NOTE_WORDS, MARK_WORDS, GRAPH_WORDS, RECORD_HEADER_WORDS, PROGRESS_CELL_WORDS], [4, 8, 8, 16, 16]);
}, 10_000);

test("the word offsets inside the regions: each structure's words where its protocol reads them", () => {
  assertEquals(DequeWords, { top: 0, bottom: 16, slots: 32 }, "a deque: top, bottom, each on its line");
  assertEquals(InjectorWords, { tail: 0, head: 16, seqs: 32 }, "a queue: tail, head, each on its line");
  assertEquals([SleepWords.counters, SleepWords.state(0), SleepWords.state(2)], [0, 16, 48], "a line a worker");
  assertEquals([SleepWords.counted(0), SleepWords.counted(2)], [17, 49], "the counted mark beside the state");
  assertEquals(ControlWords, {
    lifecycle: 0,
    mainWaiting: 16,
    progressPending: 17,
    nextBufferId: 32,
    levels: 33,
    poolState: 34,
    producersOpen: 35,
    recordWaiters: 36,
    ownerPending: 37,
    roomWaiters: 38,
    ownerCountedWaiting: 39,
    recordWakeTurn: 40,
    poolSize: 41,
    growWanted: 42,
  });
  assertEquals(ProducerWords, {
    state: 0,
    waiting: 1,
    pending: 2,
    countedWaiting: 3,
    placing: 4,
    countedRoom: 5,
    progressPending: 6,
  });
  assertEquals(StatusWords, {
    executed: 1,
    stolen: 2,
    stealAttempts: 3,
    successfulSteals: 4,
    injectorPops: 5,
    sleeps: 6,
    wakes: 7,
    busyMs: 8,
    busySinceMs: 9,
    mail: 10,
    guard: 11,
    epoch: 12,
    allocations: 13,
    releases: 14,
    count: 16,
  });
  assertEquals(SlotCountWords, { submitted: 0, completed: 1, abandoned: 2, allocations: 13, releases: 14 });
  assertEquals(NoteWords, {
    deque: 0,
    injector: 4,
    completions: 8,
    freeRecords: 12,
    freeBlocks: 16,
    marks: 20,
    table: 28,
    injectorHigh: 32,
    injectorLow: 36,
    producerCompletions: 40,
  });
  assertEquals(MarkWords, { held: 0, pushing: 1, moving: 2, consuming: 3, freeing: 4 });
  assertEquals(GraphWords, {
    pending: 0,
    cause: 1,
    nextEdge: 2,
    nextSlot: 3,
    target: 4,
    position: 5,
    source: 6,
  });
  // The control words fit the control region (three lines), each distinct.
  const control = Object.values(ControlWords);
  assertEquals(new Set(control).size, control.length, "no two control words share an offset");
  assert(control.every((w) => w >= 0 && w < 3 * CACHE_LINE_WORDS), "every control word in its three lines");
}, 10_000);

/** The shape of the boundary tests: the smallest valid one, with one size changed. */
const SMALL: PoolShape = { workers: 1, dequeCapacity: 2, taskCapacity: 2, inlineBytes: 0, blockBytes: 128, blocks: 2 };

test("each size at the edge of its rule is accepted", () => {
  for (
    const change of [
      { producers: 0 },
      { producers: 64 },
      { workers: 1 },
      { workers: 1023 },
      { taskCapacity: 2 ** 20 },
      { inlineBytes: 0 },
      { inlineBytes: 64 },
      { blockBytes: 128 },
      { blockBytes: 192 },
      { dequeCapacity: 4 },
    ]
  ) {
    const layout = poolLayout({ ...SMALL, ...change });
    assert(layout.totalBytes > 0, `accepted: ${JSON.stringify(change)}`);
  }
}, 10_000);

test("a size that breaks its rule is refused with a RangeError that names it and the rule", () => {
  const cases: [Partial<PoolShape>, string][] = [
    [{ producers: 1.5 }, "Cannot create pool as 'producers' must be an integer from 0 to 64: received 1.5"],
    [{ producers: -1 }, "Cannot create pool as 'producers' must be an integer from 0 to 64: received -1"],
    [{ producers: 65 }, "Cannot create pool as 'producers' must be an integer from 0 to 64: received 65"],
    [{ workers: 1.5 }, "Cannot create pool as 'workers' must be an integer from 1 to 1023: received 1.5"],
    [{ workers: 0 }, "Cannot create pool as 'workers' must be an integer from 1 to 1023: received 0"],
    [{ workers: 1024 }, "Cannot create pool as 'workers' must be an integer from 1 to 1023: received 1024"],
    [{ dequeCapacity: 3 }, "Cannot create pool deques as 'capacity' must be a power of two: received 3"],
    [{ taskCapacity: 1 }, "Cannot create pool task table as 'capacity' must be from 2 to 2^28: received 1"],
    [{ taskCapacity: 2 ** 21 }, "Cannot create pool as 'taskCapacity' must be at most 2^20: received 2097152"],
    [{ blocks: 6 }, "Cannot create pool block table as 'capacity' must be a power of two: received 6"],
    [{ inlineBytes: -64 }, "Cannot create pool as 'inlineBytes' must be a non-negative multiple of 64: received -64"],
    [{ inlineBytes: 32 }, "Cannot create pool as 'inlineBytes' must be a non-negative multiple of 64: received 32"],
    [{ blockBytes: 64 }, "Cannot create pool as 'blockBytes' must be a multiple of 64 from 128: received 64"],
    [{ blockBytes: 160 }, "Cannot create pool as 'blockBytes' must be a multiple of 64 from 128: received 160"],
  ];
  for (const [change, message] of cases) {
    const error = assertThrows(() => poolLayout({ ...SMALL, ...change }), RangeError, message);
    assertEquals(error.message, message, `the message for ${JSON.stringify(change)}`);
  }
}, 10_000);

test("a capacity is a power of two from 2 to 2^28, and the message names the structure and the rule", () => {
  for (const capacity of [2, 4, 1024, 2 ** 28]) checkCapacity("deque", capacity);
  const cases: [number, string][] = [
    [2.5, "Cannot create deque as 'capacity' must be an integer: received 2.5"],
    [NaN, "Cannot create deque as 'capacity' must be an integer: received NaN"],
    [1, "Cannot create deque as 'capacity' must be from 2 to 2^28: received 1"],
    [0, "Cannot create deque as 'capacity' must be from 2 to 2^28: received 0"],
    [2 ** 29, "Cannot create deque as 'capacity' must be from 2 to 2^28: received 536870912"],
    [3, "Cannot create deque as 'capacity' must be a power of two: received 3"],
    [12, "Cannot create deque as 'capacity' must be a power of two: received 12"],
  ];
  for (const [capacity, message] of cases) {
    const error = assertThrows(() => checkCapacity("deque", capacity), RangeError, message);
    assertEquals(error.message, message, `the message for ${capacity}`);
  }
  assertThrows(() => dequeRegionBytes(3), RangeError, "Cannot create deque as");
  assertThrows(() => injectorRegionBytes(3), RangeError, "Cannot create queue as");
}, 10_000);

test("a region must be line-aligned inside a buffer: either kind fits exactly, one byte more is refused", () => {
  checkRegion("deque", new SharedArrayBuffer(1024), 64, 960);
  checkRegion("deque", new ArrayBuffer(1024), 0, 1024);
  checkRegion("deque", new SharedArrayBuffer(128), 128, 0);
  const ranges: [unknown, string][] = [
    [-64, "Cannot create deque as 'byteOffset' must be a non-negative multiple of 64: received -64"],
    [32, "Cannot create deque as 'byteOffset' must be a non-negative multiple of 64: received 32"],
    [64.5, "Cannot create deque as 'byteOffset' must be a non-negative multiple of 64: received 64.5"],
  ];
  for (const [byteOffset, message] of ranges) {
    const error = assertThrows(
      () => checkRegion("deque", new SharedArrayBuffer(1024), byteOffset as number, 64),
      RangeError,
      message,
    );
    assertEquals(error.message, message, `the message for ${byteOffset}`);
  }
  const tooSmall = "Cannot create deque as the buffer is too small: 961 bytes at offset 64 need 1025, " +
    "but 'buffer.byteLength' is 1024";
  const error = assertThrows(() => checkRegion("deque", new SharedArrayBuffer(1024), 64, 961), RangeError, tooSmall);
  assertEquals(error.message, tooSmall);
}, 10_000);

test("a region's buffer that is not a buffer is refused with a TypeError that names what it was", () => {
  const cases: [unknown, string][] = [
    [null, "null"],
    [undefined, "undefined"],
    [42, "number"],
    [{}, "Object"],
    [new Int32Array(4), "Int32Array"],
    [Object.create(null), "object"],
  ];
  for (const [buffer, what] of cases) {
    const message = `Cannot create queue as 'buffer' must be a SharedArrayBuffer: received ${what}`;
    const error = assertThrows(
      () => checkRegion("queue", buffer as SharedArrayBuffer, 0, 0),
      TypeError,
      message,
    );
    assertEquals(error.message, message, `the message for ${what}`);
  }
}, 10_000);

test(
  "the region check works where SharedArrayBuffer is not defined (no cross-origin isolation): an ArrayBuffer passes",
  () => {
    const g = globalThis as { SharedArrayBuffer?: typeof SharedArrayBuffer };
    const saved = g.SharedArrayBuffer;
    // Synchronous from here to the finally: no other code runs while the global is gone.
    delete g.SharedArrayBuffer;
    try {
      assertEquals(typeof g.SharedArrayBuffer, "undefined", "the global is gone");
      checkRegion("deque", new ArrayBuffer(256), 64, 192);
      const message = "Cannot create deque as 'buffer' must be a SharedArrayBuffer: received Object";
      const error = assertThrows(() => checkRegion("deque", {} as ArrayBuffer, 0, 0), TypeError, message);
      assertEquals(error.message, message);
    } finally {
      g.SharedArrayBuffer = saved;
    }
    assert(typeof SharedArrayBuffer === "function", "the global is back");
  },
  10_000,
);
