/**
 * Where every region lives in the pool's SharedArrayBuffer: pure functions of the options, no state.
 *
 * What it owns: the byte layout of each shared structure and the validation of the numbers that shape it
 * (capacities, offsets, buffer sizes). Every other module asks here where its words are.
 *
 * Invariants:
 * - Every region starts on a 64-byte cache line, and words written by different threads at high rates
 *   (a deque's `top`, written by thieves, and `bottom`, written by its owner) sit on different lines, so
 *   one thread's writes do not invalidate the line the other spins on (false sharing).
 * - Capacities are powers of two, so a wrapping int32 index maps to a slot with `index & (capacity - 1)`
 *   (two's complement makes that right for negative indices too).
 *
 * Threads: pure functions, callable anywhere.
 *
 * @module
 */

/** Slab slots: at most this many large payloads are in flight at once (more fall back to blocks or wait). */
export const SLAB_SLOTS = 256;
/** Words per slab slot (see `record/slabs.ts`). */
export const SLAB_SLOT_WORDS = 4;
/** Words of the slab region before its first slot: the arena's top, its cap, and the count of resets. */
export const SLAB_HEADER_WORDS = 16;
/** The slab region's bytes in the pool's buffer (the slab table of `record/slabs.ts`). */
export const SLAB_REGION_BYTES: number = (SLAB_HEADER_WORDS + SLAB_SLOTS * SLAB_SLOT_WORDS) * 4;

/** Bytes in a cache line on the machines filch targets (x86-64, arm64). */
export const CACHE_LINE_BYTES = 64;

/** Int32 words in a cache line. */
export const CACHE_LINE_WORDS: number = CACHE_LINE_BYTES / 4;

/** Smallest deque capacity: one slot could not tell "full" from "one task" usefully. */
export const MIN_DEQUE_CAPACITY = 2;

/**
 * Largest deque capacity. Indices are int32 and compared by wrapping difference, which is exact while
 * `bottom - top` stays within ±2^30; 2^28 slots (1 GiB) is far past any sensible deque.
 */
export const MAX_DEQUE_CAPACITY: number = 2 ** 28;

/** Word offsets inside a deque region, relative to the region's first word. */
export const DequeWords = Object.freeze({
  /** `top`: the next index a thief takes; advanced only by compare-exchange. Line 0. */
  top: 0,
  /** `bottom`: one past the owner's newest task; written only by the owner. Line 1. */
  bottom: CACHE_LINE_WORDS,
  /** First slot: `capacity` int32 task values follow, from line 2. */
  slots: 2 * CACHE_LINE_WORDS,
});

/**
 * Word offsets inside one worker's notes region (see {@link PoolLayout.notes}): what each of its structure
 * handles noted of an operation under way (a claimed queue position, a deque index reserved or being
 * written), four words each. They live in the pool's buffer rather than in the handle, so that they
 * outlive the thread: if it dies in the middle of an operation, the main thread reads them and completes it
 * (see `Deque.repair`, `Injector.repair`, recovery.ts). Only the worker writes them while it lives.
 */
export const NoteWords = Object.freeze({
  /** Its own deque (owner's handle): `Deque` notes. */
  deque: 0,
  /** Its injector handle. */
  injector: 4,
  /** Its completion queue handle. */
  completions: 8,
  /** Its handle on the free list of task records. */
  freeRecords: 12,
  /** Its handle on the free list of overflow blocks. */
  freeBlocks: 16,
  /** Its marks (`lib/worker/marks.ts`, {@link MarkWords}): {@link MARK_WORDS} words. */
  marks: 20,
  /** Its task table's notes (task.ts `TaskTable.note`, 4 words). */
  table: 28,
  /** Its handle on the injector of high-priority tasks (see levels.ts). */
  injectorHigh: 32,
  /** Its handle on the injector of low-priority tasks (see levels.ts). */
  injectorLow: 36,
  /**
   * Its handles on the completion queues of producer slots 1, 2, … (`protocol/producers.ts`), four words
   * each from here (the owner's producer, slot 0, is `completions`); see {@link notesBytes}.
   */
  producerCompletions: 40,
});

/** The words of a worker's marks (at {@link NoteWords}.marks; `lib/worker/marks.ts`); -1 in each if none. */
export const MarkWords = Object.freeze({
  /** A task it took and has not yet claimed (QUEUED to RUNNING). */
  held: 0,
  /** A fork it is placing and has not yet published by its deque push. */
  pushing: 1,
  /** A task it is handing back to the injector (one it holds and cannot run yet). */
  moving: 2,
  /** Its own fork that it popped back or whose result it reads, not yet released. */
  consuming: 3,
  /** A record it must free and has not yet freed (an orphaned fork it finished). */
  freeing: 4,
});

/** Int32 words of a worker's marks. */
export const MARK_WORDS = 8;

/** Int32 words of notes per structure handle (see {@link NoteWords}). */
export const NOTE_WORDS = 4;

/**
 * Bytes of one worker's notes region: the {@link NoteWords} (40 words), then {@link NOTE_WORDS} for its
 * handle on each other producer's completion queue ({@link NoteWords.producerCompletions}), in whole lines.
 *
 * @param producers The pool's producer slots besides its owner's ({@link PoolShape.producers}).
 * @returns The bytes.
 */
export function notesBytes(producers: number): number {
  return roundUpToLine((NoteWords.producerCompletions + producers * NOTE_WORDS) * 4);
}

/**
 * The size in bytes of a deque region of `capacity` slots, rounded up to whole cache lines.
 *
 * @param capacity Slots in the ring: a power of two from {@link MIN_DEQUE_CAPACITY} to {@link MAX_DEQUE_CAPACITY}.
 * @returns The bytes the region occupies.
 * @throws {RangeError} If `capacity` breaks the rule above.
 *
 * @example Usage
 * ```ts
 * import { dequeRegionBytes } from "@filch/filch";
 * console.log(dequeRegionBytes(256)); // 1152: two header lines and 16 lines of slots
 * ```
 */
export function dequeRegionBytes(capacity: number): number {
  checkCapacity("deque", capacity);
  return roundUpToLine(DequeWords.slots * 4 + capacity * 4);
}

/**
 * Checks that `capacity` is a power of two in the deque's range.
 *
 * @param what The structure being created, for the message.
 * @param capacity The value to check.
 * @throws {RangeError} Naming the value and the rule it breaks.
 *
 * @example Usage
 * ```ts
 * import { checkCapacity } from "./layout.ts";
 * checkCapacity("deque", 64); // fine
 * ```
 */
export function checkCapacity(what: string, capacity: number): void {
  if (!Number.isInteger(capacity)) {
    throw new RangeError(`Cannot create ${what} as 'capacity' must be an integer: received ${String(capacity)}`);
  }
  if (capacity < MIN_DEQUE_CAPACITY || capacity > MAX_DEQUE_CAPACITY) {
    throw new RangeError(
      `Cannot create ${what} as 'capacity' must be from ${MIN_DEQUE_CAPACITY} to 2^28: received ${capacity}`,
    );
  }
  if ((capacity & (capacity - 1)) !== 0) {
    throw new RangeError(`Cannot create ${what} as 'capacity' must be a power of two: received ${capacity}`);
  }
}

/**
 * Checks that `[byteOffset, byteOffset + bytes)` is a cache-line-aligned range inside `buffer`.
 *
 * @param what The structure being placed, for the message.
 * @param buffer The buffer the region lives in.
 * @param byteOffset Where the region starts.
 * @param bytes How long it is.
 * @throws {TypeError} If `buffer` is not an ArrayBuffer or SharedArrayBuffer.
 * @throws {RangeError} If the offset is not a non-negative multiple of 64, or the region does not fit.
 *
 * @example Usage
 * ```ts
 * import { checkRegion } from "./layout.ts";
 * checkRegion("deque", new SharedArrayBuffer(1024), 64, 512); // fine
 * ```
 */
export function checkRegion(
  what: string,
  buffer: SharedArrayBuffer | ArrayBuffer,
  byteOffset: number,
  bytes: number,
): void {
  const isShared = typeof SharedArrayBuffer !== "undefined" && buffer instanceof SharedArrayBuffer;
  if (!isShared && !(buffer instanceof ArrayBuffer)) {
    throw new TypeError(
      `Cannot create ${what} as 'buffer' must be a SharedArrayBuffer: received ${describe(buffer)}`,
    );
  }
  if (!Number.isInteger(byteOffset) || byteOffset < 0 || byteOffset % CACHE_LINE_BYTES !== 0) {
    throw new RangeError(
      `Cannot create ${what} as 'byteOffset' must be a non-negative multiple of ${CACHE_LINE_BYTES}: received ${
        String(byteOffset)
      }`,
    );
  }
  if (byteOffset + bytes > buffer.byteLength) {
    throw new RangeError(
      `Cannot create ${what} as the buffer is too small: ${bytes} bytes at offset ${byteOffset} need ${
        byteOffset + bytes
      }, but 'buffer.byteLength' is ${buffer.byteLength}`,
    );
  }
}

/**
 * Rounds a byte count up to whole cache lines.
 *
 * @param bytes Any non-negative byte count.
 * @returns The smallest multiple of 64 not below `bytes`.
 *
 * @example Usage
 * ```ts
 * import { roundUpToLine } from "./layout.ts";
 * console.log(roundUpToLine(65)); // 128
 * ```
 */
export function roundUpToLine(bytes: number): number {
  return Math.ceil(bytes / CACHE_LINE_BYTES) * CACHE_LINE_BYTES;
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (typeof value === "object") return (value as object).constructor?.name ?? "object";
  return typeof value;
}

/** Word offsets inside a bounded MPMC queue region (see `injector.ts`). */
export const InjectorWords = Object.freeze({
  /** `tail`: the next position a producer claims. Line 0. */
  tail: 0,
  /** `head`: the next position a consumer claims. Line 1. */
  head: CACHE_LINE_WORDS,
  /** First of `capacity` sequence words, then `capacity` value words, from line 2. */
  seqs: 2 * CACHE_LINE_WORDS,
});

/**
 * The size in bytes of a bounded MPMC queue region of `capacity` slots.
 *
 * @param capacity A power of two from 2 to 2^28.
 * @returns The bytes the region occupies, in whole cache lines.
 * @throws {RangeError} If `capacity` breaks the rule above.
 *
 * @example Usage
 * ```ts
 * import { injectorRegionBytes } from "./layout.ts";
 * console.log(injectorRegionBytes(16)); // 256: two header lines and 128 bytes of slots
 * ```
 */
export function injectorRegionBytes(capacity: number): number {
  checkCapacity("queue", capacity);
  return roundUpToLine(InjectorWords.seqs * 4 + capacity * 8);
}

/** Word offsets inside the sleep region (see `sleep.ts`): the counters word, then one line per worker. */
export const SleepWords = Object.freeze({
  /** The jobs event counter and the sleeping count, packed. Line 0. */
  counters: 0,
  /** Worker `i`'s state word, on a line of its own. */
  state: (i: number): number => (i + 1) * CACHE_LINE_WORDS,
  /** 1 while worker `i` is counted in the sleeping count (read only after the worker died), on its line. */
  counted: (i: number): number => (i + 1) * CACHE_LINE_WORDS + 1,
});

/**
 * The size in bytes of the sleep region for `workers` workers.
 *
 * @param workers How many workers.
 * @returns One cache line for the counters and one per worker.
 *
 * @example Usage
 * ```ts
 * import { sleepRegionBytes } from "./layout.ts";
 * console.log(sleepRegionBytes(2)); // 192
 * ```
 */
export function sleepRegionBytes(workers: number): number {
  return (workers + 1) * CACHE_LINE_BYTES;
}

/** The sizes that shape a pool's buffer. */
export interface PoolShape {
  /** Worker threads (and deques). */
  workers: number;
  /** Slots per worker deque (power of two). */
  dequeCapacity: number;
  /** Task records: tasks queued, running or awaiting settlement at once (power of two, 2 to 2^20). */
  taskCapacity: number;
  /** Bytes of payload stored inside each task record (multiple of 64). */
  inlineBytes: number;
  /** Bytes per overflow block, next-block word included (multiple of 64, at least 128). */
  blockBytes: number;
  /** Overflow blocks (power of two). */
  blocks: number;
  /**
   * Producer slots besides the owner's own (slot 0): how many producers in other threads may be open at
   * once, each with its own completion queue (see `protocol/producers.ts`). 0 when absent.
   */
  producers?: number;
}

/** Word offsets inside the control region: one cache line each. */
export const ControlWords = Object.freeze({
  /** The pool's lifecycle as the workers see it: 0 running, 1 stopping. */
  lifecycle: 0,
  /** 1 while the main thread waits for completions (set by it, cleared by the worker that notifies it). */
  mainWaiting: CACHE_LINE_WORDS,
  /**
   * 1 when a task of the owner's producer filled its progress cell (lib/progress/): set by the reporting
   * worker before it wakes the producer, exchanged to 0 by the producer before it reads the cells.
   */
  progressPending: CACHE_LINE_WORDS + 1,
  /** The next id for a SharedArrayBuffer passed by reference. */
  nextBufferId: 2 * CACHE_LINE_WORDS,
  /**
   * The priority levels other than normal that a producer has used, a bit each (`1 << level`; see
   * levels.ts): set once, never cleared; until it is non-zero, workers take from the normal queue alone.
   */
  levels: 2 * CACHE_LINE_WORDS + 1,
  /**
   * The pool's lifecycle as producers in other threads read it (`protocol/producers.ts`, `PoolStateCode`):
   * written by the owner alone, forward only.
   */
  poolState: 2 * CACHE_LINE_WORDS + 2,
  /** Producers open besides the owner's (a producer's fair share of the records is divided by this + 1). */
  producersOpen: 2 * CACHE_LINE_WORDS + 3,
  /** Producers that have tasks waiting for a record: whoever frees a record wakes them (producers.ts). */
  recordWaiters: 2 * CACHE_LINE_WORDS + 4,
  /**
   * The owner's own producer's tasks pending, kept only when the pool is bounded (`maxQueue`): summed with
   * every slot's pending word for the room check (producer/room.ts). Written by the owner alone.
   */
  ownerPending: 2 * CACHE_LINE_WORDS + 5,
  /** Producers waiting for room in the pool's queue: whoever settles a task wakes them (producer/room.ts). */
  roomWaiters: 2 * CACHE_LINE_WORDS + 6,
  /**
   * 1 while the owner's producer (slot 0) counts itself in `recordWaiters`: the remote slots' flag is their
   * line's `ProducerWords.countedWaiting`. Read by whoever wakes a record waiter (producers.ts).
   */
  ownerCountedWaiting: 2 * CACHE_LINE_WORDS + 7,
  /**
   * The record waiters' wake turn: each wake takes the next (a fetch-add) and looks at the slots from that
   * one on, so that every waiting producer's turn comes (producers.ts `wakeRecordWaiters`).
   */
  recordWakeTurn: 2 * CACHE_LINE_WORDS + 8,
  /**
   * An elastic pool's size word (protocol/slots.ts): the workers it keeps, started or starting, less those
   * that reserved their retirement. Raised by the owner (GrowReserve), lowered by a retiring worker
   * (RetireReserve), both by compare-exchange within the bounds. Unused (0) in a fixed pool.
   */
  poolSize: 2 * CACHE_LINE_WORDS + 9,
  /**
   * An elastic pool's "want a worker" flag (protocol/slots.ts): set (0 → 1) by a worker whose wake found
   * nobody while queued work waits, which then tells the owner by message; the owner clears it before it
   * looks at growth. Unused in a fixed pool.
   */
  growWanted: 2 * CACHE_LINE_WORDS + 10,
});

/** Word offsets in a remote producer slot's line (its protocol: `producers.ts`). */
export const ProducerWords = Object.freeze({
  /** The slot's state (`SlotState` of producers.ts). */
  state: 0,
  /** 1 while its producer waits for completions (set by it, cleared by the thread that wakes it). */
  waiting: 1,
  /** Its tasks submitted and not yet settled (kept by its producer; the owner's `close` waits for 0). */
  pending: 2,
  /**
   * 1 while its producer counts itself in `ControlWords.recordWaiters` (undone by the owner if it dies); a
   * wake of a record waiter goes only to a slot that says so.
   */
  countedWaiting: 3,
  /**
   * The handle its producer is placing (from before the QUEUED store to after the injector push), or -1:
   * if the thread dies there, the owner pushes the task it published and did not queue (a plain note, as
   * a worker's marks).
   */
  placing: 4,
  /** 1 while its producer counts itself in `ControlWords.roomWaiters` (undone by the owner if it dies). */
  countedRoom: 5,
  /** 1 when one of its tasks filled its progress cell (as `ControlWords.progressPending` for the owner's). */
  progressPending: 6,
});

/** Word offsets inside a worker's status line. */
export const StatusWords = Object.freeze({
  // Word 0 is unused: who runs a task is in its record (`worker` and `state`), which crash handling reads.
  /** Tasks run to completion. */
  executed: 1,
  /** Tasks obtained by stealing (one or half). */
  stolen: 2,
  /** Steal calls made. */
  stealAttempts: 3,
  /** Steal calls that obtained at least one task. */
  successfulSteals: 4,
  /** Tasks taken from the injector. */
  injectorPops: 5,
  /** Times the worker went to sleep. */
  sleeps: 6,
  /** Times it woke because a poster woke it. */
  wakes: 7,
  /** With metrics: its busy time so far, whole ms (busy periods that ended). */
  busyMs: 8,
  /** With metrics: when its busy period under way began, ms since the pool was created; -1 when idle. */
  busySinceMs: 9,
  /**
   * Broadcast parts sent to this worker by message and not yet taken up: the main thread adds one before
   * it posts a part, the worker subtracts one when its message handler runs it. While it is not 0 the
   * worker's loop yields to its event loop (and does not sleep), so that the message is read.
   */
  mail: 10,
  /**
   * 1 while the worker may be inside one of the pool's steps, 0 while it is killable (in user code, or
   * waiting for its event loop) and holds a task that may be forced (see kill_guard.ts). Written by the
   * worker only.
   */
  guard: 11,
  /** Which thread of this index may take pool steps; moved on by the main thread to kill it (kill_guard.ts). */
  epoch: 12,
  /**
   * Task records this worker allocated (`TaskTable.allocate`), counted apart from the generation bump so
   * that an accounting check can compare the two (lib/record/census.ts). Written by the worker only; a
   * replacement goes on from its predecessor's count.
   */
  allocations: 13,
  /** Task records this worker freed (`TaskTable.release`), for the same check. Written by the worker only. */
  releases: 14,
  /** Words in the line. */
  count: CACHE_LINE_WORDS,
});

/**
 * Word offsets in a remote producer slot's counts line (the second of its two lines, {@link
 * PoolLayout.producerLines}; `protocol/memory.ts` `slotCounts`): counts that the owner reads with atomic
 * loads and that each have one writer at a time. Never reset: a slot's later producers add to them, so that
 * they count every task the slot ever carried (the pool's `stats()` sums them with the owner's own).
 * Words 3 to 12 and 15 are free: a later count per producer slot (a graph's nodes, an elastic pool's
 * requests) takes one of them, so that the one pool memory keeps one line of counts per slot.
 */
export const SlotCountWords = Object.freeze({
  /** Tasks its producers submitted (`TaskLedger.open`). Written by the slot's producer only. */
  submitted: 0,
  /** Tasks of theirs that settled (`TaskLedger.settle`). Written by the slot's producer only. */
  completed: 1,
  /**
   * Tasks that were pending when a producer of the slot died, which nobody settles (their promises died
   * with its thread): written by the owner when it notices the death, after the thread ended (it writes the
   * two words above no more).
   */
  abandoned: 2,
  /** Task records its producers allocated (`StatusWords.allocations`: the table's accounting, census.ts). */
  allocations: StatusWords.allocations,
  /** Task records they freed (`StatusWords.releases`). */
  releases: StatusWords.releases,
});

/**
 * Words of a task record's progress cell (lib/progress/cell.ts): one cache line, in a region of its own
 * beside the records (`PoolLayout.progress`), so that a task's reports do not share a line with the record
 * words its caller and the workers read.
 */
export const PROGRESS_CELL_WORDS = CACHE_LINE_WORDS;

/**
 * The graph words of a task record, in a region of their own beside the records (`PoolLayout.graph`,
 * {@link GRAPH_WORDS} a record): what a node of a task graph (lib/graph/) carries beside a task's words,
 * and what an argument slot (an edge: a record that carries one input's result to one dependant)
 * carries. Who writes each, and when, is lib/graph/words.ts's contract; spec/Graph.tla is the protocol.
 */
export const GraphWords = Object.freeze({
  /** A node: the count of its inputs that have not walked to it yet (the decrement that reads 1 owns it). */
  pending: 0,
  /** A node: 0, or the node number its rejection names (the failed input, or itself), or CANCEL. */
  cause: 1,
  /** A node: the handle of its first out-edge, or -1; an edge: the next out-edge of the same input. */
  nextEdge: 2,
  /** A node: the handle of its first argument slot, or -1; an edge: the next slot of the same dependant. */
  nextSlot: 3,
  /** An edge: the dependant's handle. */
  target: 4,
  /** An edge: the argument position it fills in the dependant's call. */
  position: 5,
  /** An edge: the input's node number (1-based in its graph), which a rejection names. */
  source: 6,
});

/** Int32 words of a record's graph words (see {@link GraphWords}). */
export const GRAPH_WORDS = 8;

/** Words at the start of every task record, before its inline payload. */
export const RECORD_HEADER_WORDS = CACHE_LINE_WORDS;

/** Where each region of a pool's buffer starts, in bytes, and the total. */
export interface PoolLayout {
  /** The shape it was computed from. */
  shape: PoolShape;
  /** Control words (see {@link ControlWords}). */
  control: number;
  /** Sleep region (see {@link SleepWords}). */
  sleep: number;
  /** Worker status lines, one per worker (see {@link StatusWords}). */
  status: number;
  /** First deque region; deque `i` is at `deques + i * dequeBytes`. */
  deques: number;
  /** Bytes per deque region. */
  dequeBytes: number;
  /** The injector of normal-priority tasks (capacity `taskCapacity`): "the injector". */
  injector: number;
  /** The injector of high-priority tasks (capacity `taskCapacity`; see levels.ts). */
  injectorHigh: number;
  /** The injector of low-priority tasks (capacity `taskCapacity`; see levels.ts). */
  injectorLow: number;
  /** Free task records (capacity `taskCapacity`). */
  freeRecords: number;
  /** Completed tasks for the main thread (capacity `taskCapacity`). */
  completions: number;
  /** Free overflow blocks (capacity `blocks`). */
  freeBlocks: number;
  /** Task records; record `i` is at `records + i * recordBytes`. */
  records: number;
  /** Bytes per record. */
  recordBytes: number;
  /** Overflow blocks; block `i` is at `blockArea + i * blockBytes`. */
  blockArea: number;
  /** The slab table of large payloads (see slabs.ts). */
  slabs: number;
  /** The progress cells, one a record, {@link PROGRESS_CELL_WORDS} words each (lib/progress/cell.ts). */
  progress: number;
  /** The workers' notes regions, {@link PoolLayout.notesBytes} each (see {@link NoteWords}). */
  notes: number;
  /** Bytes of one worker's notes region ({@link notesBytes}). */
  notesBytes: number;
  /**
   * The producer slots' lines from slot 1, two a slot: its `ProducerWords` (see `protocol/producers.ts`),
   * then its counts line, {@link SlotCountWords} (its tasks, and its records' allocation counts at a
   * worker's status line's offsets).
   */
  producerLines: number;
  /** The producer slots' completion queues from slot 1, `injectorRegionBytes(taskCapacity)` each. */
  producerQueues: number;
  /**
   * The producer slots' notes regions from slot 1, {@link PoolLayout.notesBytes} each, laid out as a
   * worker's ({@link NoteWords}): a producer in another thread notes its steps there, so that the owner can
   * complete them if the thread dies (see `owner/producer_deaths.ts`).
   */
  producerNotes: number;
  /**
   * The graph words of every task record ({@link GraphWords}, {@link GRAPH_WORDS} a record, by record
   * index): a graph node's count of inputs, its cause, its lists of edges (lib/graph/).
   */
  graph: number;
  /** Total bytes. */
  totalBytes: number;
}

/**
 * Computes where each region of a pool's buffer lives.
 *
 * @param shape The sizes (validated here).
 * @returns The byte offset of each region and the total size.
 * @throws {RangeError} Naming the first size that breaks its rule.
 *
 * @example Usage
 * ```ts
 * import { poolLayout } from "./layout.ts";
 * const layout = poolLayout({ workers: 2, dequeCapacity: 256, taskCapacity: 4096, inlineBytes: 192, blockBytes: 1024, blocks: 4096 });
 * console.log(layout.totalBytes < 16 * 2 ** 20); // true
 * ```
 */
export function poolLayout(shape: PoolShape): PoolLayout {
  const { workers, dequeCapacity, taskCapacity, inlineBytes, blockBytes, blocks } = shape;
  const producers = shape.producers ?? 0;
  if (!Number.isInteger(producers) || producers < 0 || producers > 64) {
    throw new RangeError(
      `Cannot create pool as 'producers' must be an integer from 0 to 64: received ${producers}`,
    );
  }
  if (!Number.isInteger(workers) || workers < 1 || workers > 1023) {
    throw new RangeError(`Cannot create pool as 'workers' must be an integer from 1 to 1023: received ${workers}`);
  }
  checkCapacity("pool deques", dequeCapacity);
  checkCapacity("pool task table", taskCapacity);
  if (taskCapacity > 2 ** 20) {
    throw new RangeError(`Cannot create pool as 'taskCapacity' must be at most 2^20: received ${taskCapacity}`);
  }
  checkCapacity("pool block table", blocks);
  if (!Number.isInteger(inlineBytes) || inlineBytes < 0 || inlineBytes % CACHE_LINE_BYTES !== 0) {
    throw new RangeError(
      `Cannot create pool as 'inlineBytes' must be a non-negative multiple of 64: received ${inlineBytes}`,
    );
  }
  if (!Number.isInteger(blockBytes) || blockBytes < 128 || blockBytes % CACHE_LINE_BYTES !== 0) {
    throw new RangeError(
      `Cannot create pool as 'blockBytes' must be a multiple of 64 from 128: received ${blockBytes}`,
    );
  }
  let at = 0;
  const take = (bytes: number) => {
    const start = at;
    at += roundUpToLine(bytes);
    return start;
  };
  const control = take(3 * CACHE_LINE_BYTES);
  const sleep = take(sleepRegionBytes(workers));
  const status = take(workers * CACHE_LINE_BYTES);
  const dequeBytes = dequeRegionBytes(dequeCapacity);
  const deques = take(workers * dequeBytes);
  const injector = take(injectorRegionBytes(taskCapacity));
  const injectorHigh = take(injectorRegionBytes(taskCapacity));
  const injectorLow = take(injectorRegionBytes(taskCapacity));
  const freeRecords = take(injectorRegionBytes(taskCapacity));
  const completions = take(injectorRegionBytes(taskCapacity));
  const freeBlocks = take(injectorRegionBytes(blocks));
  const recordBytes = RECORD_HEADER_WORDS * 4 + inlineBytes;
  const records = take(taskCapacity * recordBytes);
  const blockArea = take(blocks * blockBytes);
  const slabs = take(SLAB_REGION_BYTES);
  const progress = take(taskCapacity * PROGRESS_CELL_WORDS * 4);
  const perWorkerNotes = notesBytes(producers);
  const notes = take(workers * perWorkerNotes);
  // Two lines a slot: its words (producers.ts), then its allocation counts (a status line's layout).
  const producerLines = take(producers * 2 * CACHE_LINE_BYTES);
  const producerQueues = take(producers * injectorRegionBytes(taskCapacity));
  // Each remote producer's notes, laid out as a worker's (NoteWords): the owner repairs a dead one's steps.
  const producerNotes = take(producers * perWorkerNotes);
  const graph = take(taskCapacity * GRAPH_WORDS * 4);
  return {
    shape: { ...shape, producers },
    control,
    sleep,
    status,
    deques,
    dequeBytes,
    injector,
    injectorHigh,
    injectorLow,
    freeRecords,
    completions,
    freeBlocks,
    records,
    recordBytes,
    blockArea,
    slabs,
    progress,
    notes,
    notesBytes: perWorkerNotes,
    producerLines,
    producerQueues,
    producerNotes,
    graph,
    totalBytes: at,
  };
}
