/**
 * The pool's memory as one thread sees it: the SharedArrayBuffer, its layout and the payload arena, and
 * every typed view of the pool's regions, opened once per thread (as rayon-core's `Registry` and Tokio's
 * `Shared` are built once and handed to every part).
 *
 * What it owns: the views of the buffer's regions, made here and nowhere else in `lib/`: the control
 * words, the workers' status lines, each worker's deque region and its stealer handle, the sleep words,
 * each producer's completion channel, the notes of each worker and of each remote producer slot, the lines
 * of each slot (its waiting word, its counts), the progress cells (lib/progress/), and the task table's
 * regions ({@link RecordMemory}: the records, the overflow blocks, the slab table, the two free lists),
 * which `record/` reads and writes through its own handles. A part of the pool takes from a {@link PoolMemory} the views it needs; a handle
 * that keeps per-thread state (a deque's owner handle, the injectors with a thread's notes, a thread's
 * `TaskTable`) is opened from it by the thread that uses it.
 *
 * Invariants: a {@link PoolMemory} makes no write: opening one on a buffer the owner set up
 * ({@link PoolMemory.create}) changes nothing, so that a thread opens its own at any time. Its handles are
 * this thread's: the sleep handle's round-robin wake position, the stealers (stateless) and the views are
 * never posted to another thread; another thread opens its own memory from the buffer and the layout.
 *
 * Threads: any thread opens its own ({@link PoolMemory} is not shared between threads; the buffer is).
 *
 * @module
 */

import { Deque, type DequeRegion, initDeque, Stealer } from "./deque.ts";
import { initInjector, Injector, type InjectorRegion } from "./injector.ts";
import {
  CACHE_LINE_BYTES,
  CACHE_LINE_WORDS,
  ControlWords,
  GRAPH_WORDS,
  injectorRegionBytes,
  NOTE_WORDS,
  type PoolLayout,
  poolLayout,
  type PoolShape,
  ProducerWords,
  PROGRESS_CELL_WORDS,
  SLAB_REGION_BYTES,
  StatusWords,
} from "./layout.ts";
import { levelRegions, Levels } from "./levels.ts";
import { Sleep } from "./sleep.ts";

/** A producer's completion channel: its queue and its waiting word (see `producers.ts`). */
export interface ProducerChannel {
  /** The producer's slot: 0 for the owner's, 1 to `shape.producers` for others. */
  readonly slot: number;
  /** Its completion queue (capacity `taskCapacity`: it never holds more than every record). */
  readonly queue: InjectorRegion;
  /** The words its waiting word is in. */
  readonly words: Int32Array;
  /** Its waiting word's index in {@link ProducerChannel.words}. */
  readonly waiting: number;
  /** Its progress word's index in {@link ProducerChannel.words}: 1 when a task of it filled its progress cell. */
  readonly progress: number;
  /**
   * Its counted word's index in {@link ProducerChannel.words}: 1 while the producer counts itself waiting for a
   * record (`ControlWords.recordWaiters`), so that a record's wake goes to a producer that waits for one.
   */
  readonly counted: number;
}

/**
 * The task table's regions (read and written through `record/`'s handles: `record/task.ts`,
 * `record/payload.ts`, `record/slabs.ts`).
 */
export interface RecordMemory {
  /** The record area's words: record `i` is `layout.recordBytes / 4` words from word `i * recordBytes / 4`. */
  readonly words: Int32Array;
  /** The record area's bytes (the same memory as {@link RecordMemory.words}). */
  readonly bytes: Uint8Array;
  /** The overflow blocks' words: block `i` from word `i * blockBytes / 4` (its first word: the next block). */
  readonly blockWords: Int32Array;
  /** The overflow blocks' bytes (the same memory as {@link RecordMemory.blockWords}). */
  readonly blockBytes: Uint8Array;
  /** The slab table's words (`SLAB_REGION_BYTES`; `record/slabs.ts`). */
  readonly slabWords: Int32Array;
  /** The free list of records (capacity `taskCapacity`). */
  readonly freeRecords: InjectorRegion;
  /** The free list of overflow blocks (capacity `blocks`). */
  readonly freeBlocks: InjectorRegion;
}

/** The notes of each handle on the three queues of tasks from outside, by level: high, normal, low. */
export type LevelNotes = readonly [Int32Array, Int32Array, Int32Array];

/**
 * One thread's view of a pool's shared memory: every typed view of its regions, opened once.
 *
 * @example Usage
 * ```ts
 * import { PoolMemory } from "./memory.ts";
 * const memory = PoolMemory.create({ workers: 2, dequeCapacity: 16, taskCapacity: 16, inlineBytes: 64, blockBytes: 128, blocks: 16 });
 * console.log(memory.stealers.length, memory.channels.length); // 2 1
 * const mine = new PoolMemory(memory.buffer, memory.layout); // another thread's, on the same buffer
 * console.log(mine.control.length); // 48
 * console.log(mine.records.freeRecords.capacity, mine.records.bytes.length); // 16 2048
 * ```
 */
export class PoolMemory {
  /** The pool's buffer. */
  readonly buffer: SharedArrayBuffer;
  /** Where everything lives in it. */
  readonly layout: PoolLayout;
  /** The arena of large payloads (record/slabs.ts), or undefined with `payloadMemory: 0`. */
  readonly arena: SharedArrayBuffer | undefined;
  /** The worker threads (and deques). */
  readonly workers: number;
  /** The producer slots besides the owner's (slot 0). */
  readonly producers: number;
  /** The control words (`ControlWords`: lifecycle, waiting words, counts of waiters, the pool's state). */
  readonly control: Int32Array;
  /** Every worker's status line, `StatusWords.count` words each, by worker index. */
  readonly status: Int32Array;
  /** Every worker's deque, as a thief sees it (stateless handles), by worker index. */
  readonly stealers: readonly Stealer[];
  /** Each producer's completion channel, by slot (0: the owner's). */
  readonly channels: readonly ProducerChannel[];
  /** The sleep words (protocol/sleep.ts), as this thread wakes and sleeps. */
  readonly sleep: Sleep;
  /** The task table's regions (records, blocks, slabs, free lists), for this thread's `TaskTable`. */
  readonly records: RecordMemory;
  /** The progress cells, `PROGRESS_CELL_WORDS` words a record (lib/progress/cell.ts). */
  readonly progress: Int32Array;
  /** Every record's graph words (`GraphWords`, `GRAPH_WORDS` a record; lib/graph/words.ts reads them). */
  readonly graph: Int32Array;

  /**
   * Opens this thread's views of a pool's buffer (set up by {@link PoolMemory.create} in the owner).
   *
   * @param buffer The pool's buffer.
   * @param layout Its layout.
   * @param arena The arena of large payloads, if any.
   */
  constructor(buffer: SharedArrayBuffer, layout: PoolLayout, arena?: SharedArrayBuffer) {
    this.buffer = buffer;
    this.layout = layout;
    this.arena = arena;
    const { workers } = layout.shape;
    this.workers = workers;
    this.producers = layout.shape.producers ?? 0;
    this.control = controlWords(buffer, layout);
    this.status = new Int32Array(buffer, layout.status, workers * StatusWords.count);
    this.stealers = Array.from({ length: workers }, (_, i) => new Stealer(this.dequeRegion(i)));
    this.channels = allChannels(buffer, layout);
    this.sleep = new Sleep(buffer, layout.sleep, workers);
    this.records = recordMemory(buffer, layout);
    this.progress = new Int32Array(buffer, layout.progress, layout.shape.taskCapacity * PROGRESS_CELL_WORDS);
    this.graph = new Int32Array(buffer, layout.graph, layout.shape.taskCapacity * GRAPH_WORDS);
  }

  /**
   * The owner, once: a new buffer for `shape`, its deques and queues initialized (each deque, the injector
   * of each priority level, each producer's completion queue), opened. The task records and the metrics
   * are set up by their own layers, in this memory's views (record/task.ts `TaskTable.init`,
   * lib/assemble.ts).
   *
   * @param shape The sizes (validated by `poolLayout`).
   * @param arena The arena of large payloads, if any.
   * @returns The owner's memory.
   * @throws {RangeError} If a size breaks its rule.
   */
  static create(shape: PoolShape, arena?: SharedArrayBuffer): PoolMemory {
    const layout = poolLayout(shape);
    const memory = new PoolMemory(new SharedArrayBuffer(layout.totalBytes), layout, arena);
    for (let i = 0; i < memory.workers; i++) initDeque(memory.dequeRegion(i));
    // One injector a priority level (levels.ts).
    for (const region of memory.levelRegions()) initInjector(region);
    // Each producer's completion queue: the owner's (slot 0) and those of the slots of other threads.
    for (const channel of memory.channels) initInjector(channel.queue);
    return memory;
  }

  /**
   * Worker `worker`'s deque region.
   *
   * @param worker The worker's index.
   * @returns Its region.
   */
  dequeRegion(worker: number): DequeRegion {
    const layout = this.layout;
    return {
      buffer: this.buffer,
      byteOffset: layout.deques + worker * layout.dequeBytes,
      capacity: layout.shape.dequeCapacity,
    };
  }

  /**
   * Worker `worker`'s own handle on its deque (push and pop), noting its steps in its notes.
   *
   * @param worker The worker's index.
   * @param notes The handle's notes (the worker's `NoteWords.deque`).
   * @returns The handle.
   */
  deque(worker: number, notes: Int32Array): Deque {
    return new Deque(this.dequeRegion(worker), notes);
  }

  /**
   * The regions of the three queues of tasks from outside, by level: high, normal, low (levels.ts).
   *
   * @returns The regions.
   */
  levelRegions(): readonly [InjectorRegion, InjectorRegion, InjectorRegion] {
    const { buffer, layout } = this;
    const capacity = layout.shape.taskCapacity;
    return levelRegions(layout).map((byteOffset) => ({ buffer, byteOffset, capacity })) as [
      InjectorRegion,
      InjectorRegion,
      InjectorRegion,
    ];
  }

  /**
   * Opens this thread's handles on the three queues of tasks from outside.
   *
   * @param notes The notes of each handle, by level (a worker's, or a remote producer's, are in the pool's
   * buffer: see injector.ts), or none (private notes: the owner's producer).
   * @returns The handles.
   */
  levels(notes?: LevelNotes): Levels {
    const queues = this.levelRegions().map((region, level) => new Injector(region, notes?.[level])) as [
      Injector,
      Injector,
      Injector,
    ];
    return new Levels({ queues, control: this.control });
  }

  /**
   * The notes of one structure handle of worker `worker` (see `NoteWords`).
   *
   * @param worker The worker's index.
   * @param at The structure's offset in `NoteWords`.
   * @param words How many words (`NOTE_WORDS` by default; `MARK_WORDS` for the marks).
   * @returns A view of its words.
   * @throws {RangeError} If there is no such worker.
   */
  notes(worker: number, at: number, words: number = NOTE_WORDS): Int32Array {
    return notesOf(this.buffer, this.layout, worker, at, words);
  }

  /**
   * The notes of remote slot `slot`'s producer for one of its structure handles (`NoteWords` offsets).
   *
   * @param slot The slot (1 to {@link PoolMemory.producers}).
   * @param at The structure's offset in `NoteWords`.
   * @param words How many words (`NOTE_WORDS` by default).
   * @returns A view of its words.
   */
  slotNotes(slot: number, at: number, words: number = NOTE_WORDS): Int32Array {
    return slotNotes(this.buffer, this.layout, slot, at, words);
  }

  /**
   * The line of remote slot `slot` (1 to {@link PoolMemory.producers}): its `ProducerWords`.
   *
   * @param slot The slot.
   * @returns Its words (the channel's, for the same slot).
   */
  slotLine(slot: number): Int32Array {
    return this.channels[slot].words;
  }

  /**
   * The counts line of remote slot `slot` (1 to {@link PoolMemory.producers}): its producers' tasks and
   * record allocations and releases, at `SlotCountWords` (see {@link slotCounts}).
   *
   * @param slot The slot.
   * @returns Its words.
   */
  slotCounts(slot: number): Int32Array {
    return slotCounts(this.buffer, this.layout, slot);
  }
}

/** The task table's regions of a pool's buffer (see {@link RecordMemory}). */
function recordMemory(buffer: SharedArrayBuffer, layout: PoolLayout): RecordMemory {
  const { taskCapacity, blocks, blockBytes } = layout.shape;
  const recordArea = taskCapacity * layout.recordBytes;
  return {
    words: new Int32Array(buffer, layout.records, recordArea / 4),
    bytes: new Uint8Array(buffer, layout.records, recordArea),
    blockWords: new Int32Array(buffer, layout.blockArea, (blocks * blockBytes) / 4),
    blockBytes: new Uint8Array(buffer, layout.blockArea, blocks * blockBytes),
    slabWords: new Int32Array(buffer, layout.slabs, SLAB_REGION_BYTES / 4),
    freeRecords: { buffer, byteOffset: layout.freeRecords, capacity: taskCapacity },
    freeBlocks: { buffer, byteOffset: layout.freeBlocks, capacity: blocks },
  };
}

/**
 * The pool's control words (`ControlWords`).
 *
 * @param buffer The pool's buffer.
 * @param layout Its layout.
 * @returns A view of them.
 *
 * @example Usage
 * ```ts
 * import { controlWords } from "./memory.ts";
 * import { poolLayout } from "./layout.ts";
 * const layout = poolLayout({ workers: 1, dequeCapacity: 8, taskCapacity: 8, inlineBytes: 64, blockBytes: 128, blocks: 8 });
 * console.log(controlWords(new SharedArrayBuffer(layout.totalBytes), layout).length); // 48
 * ```
 */
export function controlWords(buffer: SharedArrayBuffer, layout: PoolLayout): Int32Array {
  return new Int32Array(buffer, layout.control, 3 * CACHE_LINE_WORDS);
}

/**
 * The notes words of one structure handle of worker `worker` (see `NoteWords`).
 *
 * @param buffer The pool's buffer.
 * @param layout Its layout.
 * @param worker The worker's index.
 * @param at The structure's offset in `NoteWords`.
 * @param words How many words (`NOTE_WORDS` by default; `MARK_WORDS` for the marks).
 * @returns A view of its words.
 * @throws {RangeError} If there is no such worker.
 *
 * @example Usage
 * ```ts
 * import { NoteWords, poolLayout } from "./layout.ts";
 * import { notesOf } from "./memory.ts";
 * const layout = poolLayout({ workers: 2, dequeCapacity: 64, taskCapacity: 64, inlineBytes: 64, blockBytes: 128, blocks: 8 });
 * const notes = notesOf(new SharedArrayBuffer(layout.totalBytes), layout, 1, NoteWords.injector);
 * console.log(notes.length); // 4
 * ```
 */
export function notesOf(
  buffer: SharedArrayBuffer | ArrayBuffer,
  layout: PoolLayout,
  worker: number,
  at: number,
  words: number = NOTE_WORDS,
): Int32Array {
  if (!Number.isInteger(worker) || worker < 0 || worker >= layout.shape.workers) {
    throw new RangeError(
      `Cannot open notes as 'worker' must be an integer from 0 to ${layout.shape.workers - 1}: received ${worker}`,
    );
  }
  return new Int32Array(buffer, layout.notes + worker * layout.notesBytes + at * 4, words);
}

/**
 * The line of remote slot `slot` (1 to `shape.producers`): its `ProducerWords`.
 *
 * @param buffer The pool's buffer.
 * @param layout Its layout.
 * @param slot The slot.
 * @returns Its words.
 *
 * @example Usage
 * ```ts
 * import { poolLayout } from "./layout.ts";
 * import { slotLine } from "./memory.ts";
 * const layout = poolLayout({ workers: 1, dequeCapacity: 8, taskCapacity: 8, inlineBytes: 64, blockBytes: 128, blocks: 8, producers: 1 });
 * console.log(slotLine(new SharedArrayBuffer(layout.totalBytes), layout, 1).length); // 16
 * ```
 */
export function slotLine(buffer: SharedArrayBuffer, layout: PoolLayout, slot: number): Int32Array {
  return new Int32Array(buffer, layout.producerLines + (slot - 1) * 2 * CACHE_LINE_BYTES, CACHE_LINE_WORDS);
}

/**
 * The counts line of remote slot `slot`, at `SlotCountWords`: its producers' tasks submitted and completed
 * (the pool's `stats()` sums them with the owner's), those a dead producer left, and its record allocations
 * and releases (at a worker's status line's offsets, `StatusWords.allocations` and `releases`), summed by
 * `TaskTable.accounting` with every worker's. Never reset: a slot's later producers add to them.
 *
 * @param buffer The pool's buffer.
 * @param layout Its layout.
 * @param slot The slot.
 * @returns Its words.
 *
 * @example Usage
 * ```ts
 * import { poolLayout } from "./layout.ts";
 * import { slotCounts } from "./memory.ts";
 * const layout = poolLayout({ workers: 1, dequeCapacity: 8, taskCapacity: 8, inlineBytes: 64, blockBytes: 128, blocks: 8, producers: 1 });
 * console.log(slotCounts(new SharedArrayBuffer(layout.totalBytes), layout, 1).length); // 16
 * ```
 */
export function slotCounts(buffer: SharedArrayBuffer | ArrayBuffer, layout: PoolLayout, slot: number): Int32Array {
  return new Int32Array(buffer, layout.producerLines + ((slot - 1) * 2 + 1) * CACHE_LINE_BYTES, CACHE_LINE_WORDS);
}

/**
 * The notes of remote slot `slot`'s producer for one of its structure handles (`NoteWords` offsets, as a
 * worker's notes).
 *
 * @param buffer The pool's buffer.
 * @param layout Its layout.
 * @param slot The slot (1 to `shape.producers`).
 * @param at The structure's offset in `NoteWords`.
 * @param words How many words (`NOTE_WORDS` by default).
 * @returns A view of its words.
 *
 * @example Usage
 * ```ts
 * import { NoteWords, poolLayout } from "./layout.ts";
 * import { slotNotes } from "./memory.ts";
 * const layout = poolLayout({ workers: 1, dequeCapacity: 8, taskCapacity: 8, inlineBytes: 64, blockBytes: 128, blocks: 8, producers: 1 });
 * console.log(slotNotes(new SharedArrayBuffer(layout.totalBytes), layout, 1, NoteWords.injector).length); // 4
 * ```
 */
export function slotNotes(
  buffer: SharedArrayBuffer | ArrayBuffer,
  layout: PoolLayout,
  slot: number,
  at: number,
  words: number = NOTE_WORDS,
): Int32Array {
  return new Int32Array(buffer, layout.producerNotes + (slot - 1) * layout.notesBytes + at * 4, words);
}

/**
 * The completion channel of producer slot `slot`.
 *
 * @param buffer The pool's buffer.
 * @param layout Its layout.
 * @param slot 0 (the owner's producer) to `layout.shape.producers`.
 * @returns The channel.
 * @throws {RangeError} If there is no such slot.
 *
 * @example Usage
 * ```ts
 * import { poolLayout } from "./layout.ts";
 * import { producerChannel } from "./memory.ts";
 * const layout = poolLayout({ workers: 1, dequeCapacity: 8, taskCapacity: 8, inlineBytes: 64, blockBytes: 128, blocks: 8, producers: 2 });
 * const channel = producerChannel(new SharedArrayBuffer(layout.totalBytes), layout, 2);
 * console.log(channel.queue.capacity); // 8
 * ```
 */
export function producerChannel(buffer: SharedArrayBuffer, layout: PoolLayout, slot: number): ProducerChannel {
  const { taskCapacity } = layout.shape;
  const producers = layout.shape.producers ?? 0;
  if (!Number.isInteger(slot) || slot < 0 || slot > producers) {
    throw new RangeError(
      `Cannot open producer slot as 'slot' must be an integer from 0 to ${producers}: received ${slot}`,
    );
  }
  if (slot === 0) {
    return {
      slot,
      queue: { buffer, byteOffset: layout.completions, capacity: taskCapacity },
      words: controlWords(buffer, layout),
      waiting: ControlWords.mainWaiting,
      progress: ControlWords.progressPending,
      counted: ControlWords.ownerCountedWaiting,
    };
  }
  return {
    slot,
    queue: {
      buffer,
      byteOffset: layout.producerQueues + (slot - 1) * injectorRegionBytes(taskCapacity),
      capacity: taskCapacity,
    },
    words: slotLine(buffer, layout, slot),
    waiting: ProducerWords.waiting,
    progress: ProducerWords.progressPending,
    counted: ProducerWords.countedWaiting,
  };
}

/**
 * Every producer's channel, slot 0 first.
 *
 * @param buffer The pool's buffer.
 * @param layout Its layout.
 * @returns The channels.
 *
 * @example Usage
 * ```ts
 * import { poolLayout } from "./layout.ts";
 * import { allChannels } from "./memory.ts";
 * const layout = poolLayout({ workers: 1, dequeCapacity: 8, taskCapacity: 8, inlineBytes: 64, blockBytes: 128, blocks: 8, producers: 2 });
 * console.log(allChannels(new SharedArrayBuffer(layout.totalBytes), layout).length); // 3
 * ```
 */
export function allChannels(buffer: SharedArrayBuffer, layout: PoolLayout): ProducerChannel[] {
  return Array.from({ length: (layout.shape.producers ?? 0) + 1 }, (_, slot) => producerChannel(buffer, layout, slot));
}
