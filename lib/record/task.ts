/**
 * Task records and their payloads in the pool's SharedArrayBuffer.
 *
 * What it owns: the record table (one fixed-size record per task that is queued, running, or done but
 * not yet settled), the generation-tagged handles that name records, the overflow blocks that hold a
 * payload too large for its record, and the free lists of both (bounded MPMC queues, `injector.ts`).
 *
 * A record is a 64-byte header ({@link RecordWords}) and `inlineBytes` of payload. The payload holds the
 * encoded arguments until the worker has decoded them, then the encoded result (value or thrown error).
 * A payload longer than the inline area continues in a chain of blocks; each block starts with the index
 * of the next (-1 at the end). A payload of {@link SLAB_FROM} bytes or more goes whole into one slab of
 * the payload arena instead (slabs.ts), named by its record (`payloadBlock` = -2 - slot) and owned with it.
 *
 * Invariants:
 * - A handle is `generation << indexBits | index`, a non-negative int32. The generation is bumped each time
 *   the record is allocated, so a stale handle (its task settled and the record reused) never matches the
 *   record's generation again until the generation wraps (2^(31 - indexBits) reuses).
 * - Exactly one thread owns a record at a time: the submitter until it publishes the record (state
 *   QUEUED, then the handle goes into a queue), the worker that takes the handle from a queue until it
 *   publishes DONE and queues the handle as a completion, then the settler, which frees it.
 * - Payload bytes and the owner's header fields (generation, task, payload length and block, the block
 *   chain) are plain accesses (`mem.read` / `mem.write`): written before the atomic operation that hands
 *   the record over (a queue push, a deque push, the DONE store, a latch store) and read after the atomic
 *   operation that receives it (a queue pop, a steal's CAS, a latch load). Atomics are sequentially
 *   consistent, so that pair orders the plain accesses too.
 * - The words other threads read while the record is owned (state and worker: the main thread scans them
 *   when a worker dies; the latch: its joiner) are stored atomically once the record is published. Before
 *   that, and when the record is freed, they are plain writes: a racing scan then reads FREE, QUEUED or a
 *   stale value, never RUNNING for this worker, and skips the record either way.
 * - Every record index is in the shared free list, in one thread's private cache of free records (state
 *   CACHED, `worker` = that thread), or owned; every block index is in the free list or owned. The cache
 *   spares a thread that both frees and allocates records the shared queue's atomics; it is bounded
 *   ({@link cacheLimit}) and a worker empties it before it sleeps, so caches never strand the records
 *   another thread needs; a dead worker's cache is reclaimed by the main thread from the CACHED marks.
 *   The main thread's cache may pass its bound only within a drain of completions, whose freed records its
 *   backlog takes right after ({@link TaskTable.holdFreed}); the rest go back then.
 * - A record is freed once per generation: {@link TaskTable.releaseHandle} frees only a record whose
 *   generation is the handle's and which is not already free, so a second report of the same task is a
 *   no-op (counted in {@link TaskTable.duplicateReleases}).
 *
 * Threads: any thread may allocate, write and read through its own `TaskTable` handle, following the
 * ownership above.
 *
 * @module
 */

import { mem } from "../protocol/atomics.ts";
import { RecordFields, RecordWords } from "./fields.ts";

export { RecordFields, RecordWords, submittedAtSlot, TaskFlags } from "./fields.ts";
import { decode, type Encoder, type ErrorClasses } from "../codec/codec.ts";
import { initInjector, Injector, QUEUE_EMPTY } from "../protocol/injector.ts";
import { NoteWords, type PoolLayout, RECORD_HEADER_WORDS, StatusWords } from "../protocol/layout.ts";
import { notesOf } from "../protocol/memory.ts";
import { asLevel, Level, type LevelIndex } from "../protocol/levels.ts";
import { producerThreadId, slotCounts, slotNotes } from "../protocol/producers.ts";
import { NO_SLAB, SLAB_FROM, SLAB_REGION_BYTES, SlabTable } from "./slabs.ts";

/** Who submitted a task, and so how its completion is announced. */
export const Origin = Object.freeze({
  /** Submitted by the main thread: the handle goes to the completion queue. */
  MAIN: 0,
  /** Forked by `join` or `scope` on a worker: the latch word is set and notified. */
  FORK: 1,
});

/** The life of a record. */
export const TaskState = Object.freeze({
  /** In the free list. */
  FREE: 0,
  /** Arguments written; the handle is in a queue or a deque. */
  QUEUED: 1,
  /** A worker took it and is running it. */
  RUNNING: 2,
  /** The result (or error) is written; the handle is in the completion queue. */
  DONE: 3,
  /**
   * Free, in one thread's private cache (the `worker` word says whose: -1 for the main thread), or just
   * taken from it or from the shared free list by that thread. After a worker dies, the main thread
   * returns every record the dead worker had cached (or was taking) to the shared free list.
   */
  CACHED: 4,
  /**
   * A submitted task its caller aborted while it waited in a queue (the main thread's compare-exchange
   * from QUEUED won against the worker's to RUNNING): it never runs; the worker that takes its handle
   * frees the record.
   */
  CANCELLED: 5,
});

/** What a DONE record's payload holds. */
export const Outcome = Object.freeze({
  /** The task's return value (or what its promise resolved to). */
  VALUE: 0,
  /** What the task threw (or its promise rejected with). */
  ERROR: 1,
});

/** Returned by {@link TaskTable.allocate} when every record is in use. */
export const NO_RECORD = -1;

/** A payload length that means: the payload did not fit in shared memory and travels by message. */
export const PAYLOAD_BY_MESSAGE = -1;

/** The most free records one thread keeps in its private cache (fewer in a small table: see cacheLimit). */
export const LOCAL_FREE_RECORDS = 1024;

/**
 * The private cache bound of a thread in a pool of `workers` workers and `taskCapacity` records: at most an
 * eighth of the records per thread, so that caches (which only their own thread can use) never hold most
 * of a small table.
 */
export function cacheLimit(taskCapacity: number, workers: number): number {
  return Math.min(LOCAL_FREE_RECORDS, Math.floor(taskCapacity / (8 * (workers + 1))));
}

/** The table notes' words (see `TaskTable.note`). */
const ALLOCATING = 0;
const RELEASING = 1;
const BLOCK = 2;
const BLOCK_RECORD = 3;
/** How many. */
export const TABLE_NOTE_WORDS = 4;

/**
 * Whether a table's notes (see `TaskTable.note`) say a step is under way: a record or a block in hand.
 * (`[BLOCK_RECORD]` only qualifies `[BLOCK]`, and keeps its last value.)
 *
 * @param notes A worker's table notes (layout.ts NoteWords.table).
 * @returns `true` if a step is under way.
 */
export function tableNotesInStep(notes: Int32Array): boolean {
  return notes[ALLOCATING] !== -1 || notes[RELEASING] !== -1 || notes[BLOCK] !== -1;
}

const NO_BLOCK = -1;
/** A `payloadBlock` word at or below this names slab `SLAB_REF - word` (see slabs.ts) instead of a block. */
const SLAB_REF = -2;

/**
 * A handle on the pool's task records and payload blocks.
 *
 * @example Usage
 * ```ts
 * import { Encoder } from "../codec/codec.ts";
 * import { poolLayout } from "../protocol/layout.ts";
 * import { TaskTable } from "./task.ts";
 * const layout = poolLayout({ workers: 1, dequeCapacity: 4, taskCapacity: 4, inlineBytes: 64, blockBytes: 128, blocks: 4 });
 * const buffer = new SharedArrayBuffer(layout.totalBytes);
 * TaskTable.init(buffer, layout);
 * const table = new TaskTable(buffer, layout);
 * const handle = table.allocate();
 * const encoder = new Encoder();
 * encoder.encode([1, 2]);
 * table.writePayload(table.indexOf(handle), encoder.bytes);
 * console.log(table.readPayload(table.indexOf(handle))); // [ 1, 2 ]
 * ```
 */
export class TaskTable {
  /** Int32 view of the record area. */
  readonly words: Int32Array;
  /** The typed view of the records' fields (`fields.ts`): how code outside `record/` reaches them. */
  readonly fields: RecordFields;
  /** Byte view of the record area. */
  readonly bytes: Uint8Array;
  /** Int32 view of the block area. */
  readonly blockWords: Int32Array;
  /** Byte view of the block area. */
  readonly blockBytes: Uint8Array;
  /** Free record indices. */
  readonly freeRecords: Injector;
  /** Free block indices. */
  readonly freeBlocks: Injector;
  /** The slabs of large payloads. */
  readonly slabs: SlabTable;
  /** Bits of a handle that hold the record index. */
  readonly indexBits: number;
  /** `taskCapacity - 1`. */
  readonly indexMask: number;
  /** Generations wrap at this mask. */
  readonly generationMask: number;
  /** Int32 words per record. */
  readonly recordWords: number;
  /** Payload bytes inside a record. */
  readonly inlineBytes: number;
  /** Bytes per block, its next word included. */
  readonly bytesPerBlock: number;
  /**
   * The main thread, while it reads a run of completions ({@link TaskTable.holdFreed}): the records they
   * free stay in the private cache past its bound, for the backlog it feeds right after.
   */
  private holdingFreed = false;

  /**
   * The main thread (a thread with a cache). Around a run of completions whose freed records the backlog
   * takes right after: `true` keeps every record freed meanwhile in the private cache, past its bound;
   * `false` ends that, and gives back to the shared free list what the cache holds past its bound (what
   * the backlog did not take). A drain frees hundreds of records at once when the tasks are short; within
   * the bound, most of them went through the shared free list twice (a give-back and a pop, about ten
   * atomic operations a task).
   *
   * @param hold Whether to keep freed records past the bound from now on.
   */
  holdFreed(hold: boolean): void {
    // Only a thread with a cache holds (a producer in another thread keeps none: see cacheBound).
    this.holdingFreed = hold && this.cacheBound > 0;
    if (!hold) this.trimCache(this.cacheBound);
  }

  /** Words per block. */
  readonly wordsPerBlock: number;
  private scratch = new Uint8Array(1024);
  /** Free records this thread released and may reuse without touching the shared free list. */
  private readonly cache: number[] = [];
  /** The cache's owner as written in the `worker` word of a CACHED record: a worker index, or -1. */
  private readonly owner: number;
  /** The most records {@link TaskTable.release} keeps in the cache. */
  private readonly cacheBound: number;
  /** Releases of a handle whose record was already free or reused: reports of a task made twice. */
  duplicateReleases = 0;
  /**
   * Where this thread counts its allocations and releases (see {@link TaskTable.accounting}): a worker's
   * status line in the pool's buffer (so that the main thread can read it), or a private line for the
   * main thread, at {@link TaskTable.countsAt}. This thread is their only writer, and a reader takes any
   * recent value (the exact one once the pool is idle: the handovers that made it idle ordered the
   * increments). Plain element increments, not facade calls, as the notes: a call is where a throw (a stack
   * overflow) can cut a step short, and none may fall between an allocation's bump and its count.
   */
  private readonly counts: Int32Array;
  private readonly countsAt: number;
  /** Whether {@link TaskTable.counts} is a private line (the owner's producer), summed on its own. */
  private readonly ownCounts: boolean;
  /** The counts lines of the producer slots of other threads (summed by {@link TaskTable.accounting}). */
  private readonly remoteCounts: Int32Array[];
  /** Every worker's status line: their counts, summed by {@link TaskTable.accounting}. */
  private readonly status: Int32Array;

  /**
   * Writes the initial state: every record and block free.
   *
   * @param buffer The pool's buffer.
   * @param layout Its layout.
   * @param arena The payload arena (a growable SharedArrayBuffer), or undefined for none.
   */
  static init(buffer: SharedArrayBuffer | ArrayBuffer, layout: PoolLayout, arena?: SharedArrayBuffer): void {
    const { taskCapacity, blocks } = layout.shape;
    SlabTable.init(new Int32Array(buffer, layout.slabs, SLAB_REGION_BYTES / 4), arena);
    initInjector({ buffer, byteOffset: layout.freeRecords, capacity: taskCapacity });
    initInjector({ buffer, byteOffset: layout.freeBlocks, capacity: blocks });
    const table = new TaskTable(buffer, layout);
    for (let i = 0; i < taskCapacity; i++) {
      // No payload: a record reclaimed from a dead worker that had just taken it (before allocate wrote
      // this) must not free block 0, which it never held.
      mem.write(table.words, table.at(i, RecordWords.payloadBlock), NO_BLOCK);
      table.freeRecords.pushPatiently(i);
    }
    for (let i = 0; i < blocks; i++) table.freeBlocks.pushPatiently(i);
  }

  /**
   * Opens a handle on the records of an initialized buffer.
   *
   * @param buffer The pool's buffer.
   * @param layout Its layout.
   * @param owner The thread this handle belongs to: a worker index, or -1 for the main thread.
   * @param arena The payload arena the pool made (undefined for none).
   */
  constructor(
    buffer: SharedArrayBuffer | ArrayBuffer,
    layout: PoolLayout,
    owner = -1,
    arena?: SharedArrayBuffer,
    slot = 0,
  ) {
    const { taskCapacity, blocks, inlineBytes, blockBytes, workers } = layout.shape;
    // A producer in another thread (slot > 0) notes its steps in its slot's notes, as a worker does in its
    // own, and marks what it holds with an id past every worker's (protocol/producers.ts).
    const notes = (at: number, words?: number) =>
      slot > 0 ? slotNotes(buffer, layout, slot, at, words) : notesOf(buffer, layout, owner, at, words);
    const shared = owner >= 0 || slot > 0;
    this.owner = slot > 0 ? producerThreadId(layout, slot) : owner;
    this.note = shared ? notes(NoteWords.table, TABLE_NOTE_WORDS) : new Int32Array(TABLE_NOTE_WORDS);
    // (A worker's: the main thread's recovery of its predecessor, if any, is done.)
    this.note.fill(-1);
    // A producer in another thread keeps no cache: every record it marks CACHED is one it took for a task
    // (the owner then knows one it reclaims after the thread died was allocated: a death inside a step).
    this.cacheBound = slot > 0 ? 0 : cacheLimit(taskCapacity, workers);
    this.status = new Int32Array(buffer, layout.status, workers * StatusWords.count);
    // A producer in another thread counts in its slot's counts line (protocol/producers.ts), which the
    // owner's accounting sums with the workers'.
    this.counts = owner >= 0
      ? this.status
      : slot > 0
      ? slotCounts(buffer, layout, slot)
      : new Int32Array(StatusWords.count);
    this.countsAt = owner >= 0 ? owner * StatusWords.count : 0;
    this.ownCounts = owner < 0 && slot === 0;
    this.remoteCounts = Array.from(
      { length: layout.shape.producers ?? 0 },
      (_, i) => slotCounts(buffer, layout, i + 1),
    );
    this.words = new Int32Array(buffer, layout.records, (taskCapacity * layout.recordBytes) / 4);
    this.bytes = new Uint8Array(buffer, layout.records, taskCapacity * layout.recordBytes);
    this.fields = new RecordFields(this.words, layout.recordBytes / 4);
    this.blockWords = new Int32Array(buffer, layout.blockArea, (blocks * blockBytes) / 4);
    this.blockBytes = new Uint8Array(buffer, layout.blockArea, blocks * blockBytes);
    // A worker's notes in the pool's buffer (the main thread completes its operation if it dies in one).
    this.freeRecords = new Injector(
      { buffer, byteOffset: layout.freeRecords, capacity: taskCapacity },
      shared ? notes(NoteWords.freeRecords) : undefined,
    );
    this.freeBlocks = new Injector(
      { buffer, byteOffset: layout.freeBlocks, capacity: blocks },
      shared ? notes(NoteWords.freeBlocks) : undefined,
    );
    this.slabs = new SlabTable(new Int32Array(buffer, layout.slabs, SLAB_REGION_BYTES / 4), arena, this.owner);
    this.indexBits = Math.log2(taskCapacity);
    this.indexMask = taskCapacity - 1;
    this.generationMask = 2 ** (31 - this.indexBits) - 1;
    this.recordWords = layout.recordBytes / 4;
    this.inlineBytes = inlineBytes;
    this.bytesPerBlock = blockBytes;
    this.wordsPerBlock = blockBytes / 4;
  }

  /** The record index a handle names. */
  indexOf(handle: number): number {
    return handle & this.indexMask;
  }

  /**
   * The priority level of the task a handle names (its record's `level` word, written by its producer
   * before the task was published): the queue it goes back into when a worker or recovery returns it.
   */
  levelOf(handle: number): LevelIndex {
    return asLevel(this.fields.level(handle & this.indexMask));
  }

  /** The word index of `field` of record `index`. */
  at(index: number, field: number): number {
    return index * this.recordWords + field;
  }

  /**
   * Any thread. Takes a free record and bumps its generation.
   *
   * @returns The new handle, or {@link NO_RECORD} if every record is in use.
   */
  allocate(): number {
    // Noted until the record is handed over: cut short between (a stack overflow at a call), a record
    // taken from the cache would be marked ours and held by nobody (see repairCut).
    this.busy = true;
    let index: number;
    if (this.cache.length > 0) {
      // Marked CACHED by us when it entered the cache: it stays so marked until the caller publishes it.
      index = this.cache.pop()!;
    } else {
      index = this.freeRecords.pop();
      if (index === QUEUE_EMPTY) {
        this.busy = false;
        return NO_RECORD;
      }
      // Out of the list, not yet marked: noted (no call between the pop's return and this store).
      this.note[ALLOCATING] = index;
      // Marked as ours until the caller publishes it (QUEUED): if this worker dies before that, the main
      // thread finds the mark and frees the record. Whose first, then CACHED: a record marked CACHED
      // names its owner.
      mem.write(this.words, this.at(index, RecordWords.worker), this.owner);
      mem.write(this.words, this.at(index, RecordWords.state), TaskState.CACHED);
      this.note[ALLOCATING] = -1;
    }
    const genAt = this.at(index, RecordWords.generation);
    const generation = (mem.read(this.words, genAt) + 1) & this.generationMask;
    mem.write(this.words, genAt, generation);
    // Counted apart from the bump (the accounting check, census.ts, compares the two), and with no call
    // between them: a throw cut short at a call (a stack overflow) leaves both done or neither.
    this.counts[this.countsAt + StatusWords.allocations]++;
    mem.write(this.words, this.at(index, RecordWords.payloadBlock), NO_BLOCK);
    mem.write(this.words, this.at(index, RecordWords.forker), -1);
    mem.write(this.words, this.at(index, RecordWords.flags), 0);
    mem.write(this.words, this.at(index, RecordWords.root), -1);
    mem.write(this.words, this.at(index, RecordWords.level), Level.normal);
    this.busy = false;
    return ((generation << this.indexBits) | index) >>> 0;
  }

  /**
   * The main thread, for tests and diagnostics. The allocations and releases every thread counted so far:
   * its own and every worker's (a replacement goes on from its predecessor's counts). Exact only while no
   * thread allocates or frees. When the pool is idle, each is the number of generation advances summed
   * over the records (see census.ts), unless a worker died inside `allocate` or `release`.
   *
   * @returns The sums.
   *
   * @example Usage
   * ```ts
   * import { poolLayout } from "../protocol/layout.ts";
   * import { TaskTable } from "./task.ts";
   * const layout = poolLayout({ workers: 1, dequeCapacity: 4, taskCapacity: 4, inlineBytes: 64, blockBytes: 128, blocks: 4 });
   * const buffer = new SharedArrayBuffer(layout.totalBytes);
   * TaskTable.init(buffer, layout);
   * const table = new TaskTable(buffer, layout);
   * table.release(table.indexOf(table.allocate()));
   * console.log(table.accounting()); // { allocations: 1, releases: 1 }
   * ```
   */
  accounting(): { allocations: number; releases: number } {
    let allocations = mem.read(this.counts, this.countsAt + StatusWords.allocations);
    let releases = mem.read(this.counts, this.countsAt + StatusWords.releases);
    if (!this.ownCounts) allocations = releases = 0; // (its own line is summed below with the others)
    for (let at = 0; at < this.status.length; at += StatusWords.count) {
      allocations += mem.load(this.status, at + StatusWords.allocations);
      releases += mem.load(this.status, at + StatusWords.releases);
    }
    for (const line of this.remoteCounts) {
      allocations += mem.load(line, StatusWords.allocations);
      releases += mem.load(line, StatusWords.releases);
    }
    return { allocations, releases };
  }

  /**
   * The handle that names record `index` as it is now (its current generation).
   *
   * @param index The record index.
   * @returns The handle {@link TaskTable.allocate} returned for it last.
   */
  handleOf(index: number): number {
    const generation = mem.load(this.words, this.at(index, RecordWords.generation));
    return ((generation << this.indexBits) | index) >>> 0;
  }

  /**
   * Whether `handle` still names the task it was made for (its record has not been reused since).
   *
   * @param handle A handle from {@link TaskTable.allocate}.
   * @returns `true` if the record's generation matches.
   */
  isCurrent(handle: number): boolean {
    const index = handle & this.indexMask;
    return mem.load(this.words, this.at(index, RecordWords.generation)) === handle >>> this.indexBits;
  }

  /**
   * Whether task `handle` is still running on `worker`: its record not yet finished, freed or reused
   * (what the main thread's side of the kill handshake asks before and while it kills).
   *
   * @param handle A submitted task's handle.
   * @param worker A worker index.
   * @returns `true` if the record is current, RUNNING, and names `worker`.
   */
  runsOn(handle: number, worker: number): boolean {
    if (!this.isCurrent(handle)) return false;
    const index = handle & this.indexMask;
    return mem.load(this.words, this.at(index, RecordWords.state)) === TaskState.RUNNING &&
      mem.load(this.words, this.at(index, RecordWords.worker)) === worker;
  }

  /**
   * The record's owner. Frees its payload blocks and returns it to the free list.
   *
   * @param index The record index.
   */
  release(index: number): void {
    this.counts[this.countsAt + StatusWords.releases]++; // (a plain increment: see `counts`)
    this.freePayload(index);
    if (this.cache.length < this.cacheBound || this.holdingFreed) {
      this.busy = true;
      mem.write(this.words, this.at(index, RecordWords.state), TaskState.CACHED);
      mem.write(this.words, this.at(index, RecordWords.worker), this.owner);
      this.cache.push(index);
      this.busy = false;
    } else {
      this.giveBack(index);
    }
  }

  /** Marks record `index` FREE and pushes it on the shared free list, noting it until the push is done. */
  private giveBack(index: number): void {
    // Cut short between the FREE store and the push, the record would be free and in no list: noted,
    // and the published mark reset, repairCut can tell whether the push happened. A mark left by an
    // earlier cut is completed before it is reused.
    if (this.note[RELEASING] !== -1) this.repairReleasing();
    this.note[RELEASING] = index;
    this.freeRecords.published = QUEUE_EMPTY;
    mem.write(this.words, this.at(index, RecordWords.state), TaskState.FREE);
    this.freeRecords.pushPatiently(index);
    this.note[RELEASING] = -1;
  }

  /**
   * The owning thread only. Whether an operation of this handle was cut short by a throw (a stack
   * overflow at a call) and is not yet repaired: a record taken or given back halfway, or a free list
   * position claimed and not published.
   *
   * @returns `true` if {@link TaskTable.repairCut} has work to do.
   *
   * @example Usage
   * ```ts ignore
   * if (table.cutShort) table.repairCut();
   * ```
   */
  get cutShort(): boolean {
    return this.busy || this.note[RELEASING] !== -1 || this.note[BLOCK] !== -1 || this.freeRecords.cutShort ||
      this.freeBlocks.cutShort;
  }

  /**
   * The owning thread only, while it holds no record between two of its own steps (a worker at the top
   * of its loop). Completes operations cut short: the free lists' (see {@link Injector.repair}), and
   * records marked as cached by this thread but in no cache, which go back to the shared free list.
   *
   * @returns How many records came back.
   *
   * @example Usage
   * ```ts ignore
   * if (table.cutShort) table.repairCut();
   * ```
   */
  repairCut(): number {
    this.freeRecords.repair();
    this.freeBlocks.repair();
    // A block in hand (see `writeBlocks`, `freePayload`): back to the list unless it is linked or the
    // repair above published it (`published` was reset before that push).
    const block = this.note[BLOCK];
    this.note[BLOCK] = -1;
    if (block >= 0 && block !== this.freeBlocks.published && !this.linkedAt(this.note[BLOCK_RECORD], block)) {
      this.freeBlocks.pushPatiently(block);
    }
    let back = 0;
    if (this.note[RELEASING] !== -1) {
      this.repairReleasing();
      back++;
    }
    if (this.busy) {
      back += this.flushCache() + this.reclaimCachedBy(this.owner);
      this.busy = false;
    }
    // A slab taken for a payload that was cut short before its record named it.
    this.reclaimSlabsOf(this.owner);
    return back;
  }

  /** Whether `block` is the head of record `index`'s block chain (a noted block is linked at the head). */
  private linkedAt(index: number, block: number): boolean {
    return index >= 0 && index <= this.indexMask &&
      mem.read(this.words, this.at(index, RecordWords.payloadBlock)) === block;
  }

  /** Completes a give-back cut short (see `giveBack`). */
  private repairReleasing(): void {
    const index = this.note[RELEASING];
    // The push was published (then `published` says so: it was reset before the push), or it never
    // claimed a position (a claimed one is published by the free list's own repair, run first here).
    this.freeRecords.repair();
    if (this.freeRecords.published !== index) {
      mem.write(this.words, this.at(index, RecordWords.state), TaskState.FREE);
      this.freeRecords.pushPatiently(index);
    }
    this.note[RELEASING] = -1;
  }

  /** This thread, for tests and diagnostics: how many free records its private cache holds. */
  get cachedHere(): number {
    return this.cache.length;
  }

  /** This thread, for tests and diagnostics: the most records its private cache keeps outside a drain. */
  get cacheBoundHere(): number {
    return this.cacheBound;
  }

  /** Set while `allocate` or `release` moves a record between the cache and a caller. */
  private busy = false;
  /**
   * This handle's notes: `[ALLOCATING]`, a record `allocate` took from the shared free list and has not yet
   * marked as ours (CACHED); `[RELEASING]`, a record being given back to it (see `giveBack`); `[BLOCK]`, an
   * overflow block in hand, taken for record `[BLOCK_RECORD]`'s payload and not yet linked into its chain,
   * or unlinked from it and not yet given back (see `writeBlocks`, `freePayload`); -1 if none.
   * A worker's are in the pool's buffer (layout.ts NoteWords.table), so that the main thread can complete
   * them if it dies ({@link TaskTable.recoverNotes}). Plain element stores, not facade calls: a call could
   * be where the thread dies (see the deque's notes).
   */
  private readonly note: Int32Array;

  /**
   * The record's owner. Frees the record `handle` names, once: a no-op (counted) if the record was freed
   * already or has been reused since, so that two reports of the same task cannot free a record twice
   * (and free it under the task that holds it next).
   *
   * @param handle A handle from {@link TaskTable.allocate}.
   * @returns `true` if this call freed it.
   */
  releaseHandle(handle: number): boolean {
    const index = handle & this.indexMask;
    const state = mem.read(this.words, this.at(index, RecordWords.state));
    if (!this.isCurrent(handle) || state === TaskState.FREE || state === TaskState.CACHED) {
      this.duplicateReleases++;
      return false;
    }
    this.release(index);
    return true;
  }

  /**
   * This thread. Returns every record of the private cache to the shared free list (before sleeping).
   *
   * @returns How many records it returned.
   */
  flushCache(): number {
    return this.trimCache(0);
  }

  /** Gives back to the shared free list what the private cache holds past `keep` records; returns how many. */
  private trimCache(keep: number): number {
    const cache = this.cache;
    const n = cache.length - keep;
    if (n <= 0) return 0;
    // Cut short between a pop from the cache and the give-back, a record would be marked cached by us and
    // be in no cache: `busy` has repairCut look for such records.
    this.busy = true;
    while (cache.length > keep) this.giveBack(cache.pop()!);
    this.busy = false;
    return n;
  }

  /**
   * The main thread, after a worker died, once its free-list handle's operation is completed (by
   * `Injector.repair` over its notes, which returned `published`, the value that repair pushed, or
   * QUEUE_EMPTY): completes what the dead worker's table notes say, in its place. A record it had taken
   * from the free list and not yet marked (still FREE), or was giving back (FREE, and not the value the
   * repair pushed), goes back to the shared free list; so does an overflow block it held between the free
   * list and a record's chain.
   *
   * @param notes The dead worker's table notes (layout.ts NoteWords.table).
   * @param published The value the repair of its free-list handle pushed, or QUEUE_EMPTY.
   * @param blockPublished The value the repair of its block free-list handle pushed, or QUEUE_EMPTY.
   * @returns How many records went back.
   */
  recoverNotes(notes: Int32Array, published: number, blockPublished: number): number {
    let back = 0;
    // A block in hand: linked at its record's head (taken, then linked), it goes with the record; given
    // back by the repair of the block free list, it is there; else it goes back.
    const block = notes[BLOCK];
    notes[BLOCK] = -1;
    if (block >= 0 && block !== blockPublished && !this.linkedAt(notes[BLOCK_RECORD], block)) {
      this.freeBlocks.pushPatiently(block);
    }
    for (const which of [ALLOCATING, RELEASING]) {
      const index = notes[which];
      notes[which] = -1;
      if (index < 0 || index > this.indexMask || (which === RELEASING && index === published)) continue;
      if (mem.load(this.words, this.at(index, RecordWords.state)) !== TaskState.FREE) continue;
      this.freeRecords.pushPatiently(index);
      back++;
    }
    return back;
  }

  /**
   * The main thread, after worker `worker` died. Returns to the shared free list every record the dead
   * worker had in its private cache or had just taken (state CACHED, `worker` = its index).
   *
   * @param worker The dead worker's index.
   * @returns How many records came back.
   */
  reclaimCachedBy(worker: number): number {
    let reclaimed = 0;
    const capacity = this.indexMask + 1;
    for (let i = 0; i < capacity; i++) {
      if (mem.load(this.words, this.at(i, RecordWords.state)) !== TaskState.CACHED) continue;
      if (mem.load(this.words, this.at(i, RecordWords.worker)) !== worker) continue;
      this.freePayload(i);
      mem.store(this.words, this.at(i, RecordWords.state), TaskState.FREE);
      this.freeRecords.pushPatiently(i);
      reclaimed++;
    }
    return reclaimed;
  }

  /**
   * Copies a record's payload bytes out (inline part and block chain) and frees its blocks: the bytes
   * then live in this thread's memory, and the blocks serve others.
   *
   * @param index The record index.
   * @returns The payload's bytes.
   */
  takePayloadBytes(index: number): Uint8Array {
    const length = mem.read(this.words, this.at(index, RecordWords.payloadLength));
    const start = this.at(index, RECORD_HEADER_WORDS) * 4;
    const slab = SLAB_REF - mem.read(this.words, this.at(index, RecordWords.payloadBlock));
    if (slab >= 0) {
      const bytes = this.slabs.bytes(slab).slice(0, length);
      this.freePayload(index);
      return bytes;
    }
    const out = new Uint8Array(length);
    out.set(this.bytes.subarray(start, start + Math.min(length, this.inlineBytes)), 0);
    const per = this.bytesPerBlock - 4;
    let block = mem.read(this.words, this.at(index, RecordWords.payloadBlock));
    for (let from = this.inlineBytes; from < length; from += per) {
      const chunk = Math.min(per, length - from);
      const at = block * this.bytesPerBlock + 4;
      out.set(this.blockBytes.subarray(at, at + chunk), from);
      block = mem.read(this.blockWords, block * this.wordsPerBlock);
    }
    this.freePayload(index);
    return out;
  }

  /** Whether record `index`'s payload holds overflow blocks or a slab. */
  holdsBlocks(index: number): boolean {
    return mem.read(this.words, this.at(index, RecordWords.payloadBlock)) !== NO_BLOCK;
  }

  /**
   * The record's owner. Stores `source` as the payload: inline, then in blocks; or in one slab.
   *
   * @param index The record index.
   * @param source The encoded bytes, or the encoder holding them (whose deferred runs, see codec.ts, are
   * then copied straight from the caller's buffers into the slab: one copy for a large payload).
   * @returns `true`, or `false` if there are not enough free blocks (nothing is written then).
   */
  writePayload(index: number, source: Uint8Array | Encoder): boolean {
    const length = source.length;
    const inline = this.inlineBytes;
    const start = this.at(index, RECORD_HEADER_WORDS) * 4;
    this.freePayload(index);
    if (length > inline) {
      // Large (or out of blocks): one slab, one bulk copy, decoded in place. Else (or out of slabs): blocks.
      const large = length >= SLAB_FROM;
      if (!large && !(source instanceof Uint8Array)) source = source.bytes;
      if (large || !this.writeBlocks(index, source as Uint8Array)) {
        const slab = this.takeSlab(length);
        if (slab !== NO_SLAB) {
          const bytes = this.slabs.bytes(slab);
          if (source instanceof Uint8Array) bytes.set(source);
          else source.copyTo(bytes, 0);
          mem.write(this.words, this.at(index, RecordWords.payloadBlock), SLAB_REF - slab); // spec: RecordNameSlab
          mem.write(this.words, this.at(index, RecordWords.payloadLength), length);
          return true;
        }
        if (!(source instanceof Uint8Array)) source = source.bytes;
        if (!large || !this.writeBlocks(index, source)) return false;
      }
    }
    this.copyInline(start, source instanceof Uint8Array ? source : source.bytes, 0, length < inline ? length : inline);
    mem.write(this.words, this.at(index, RecordWords.payloadLength), length);
    return true;
  }

  /** Copies `n` bytes of `bytes` from `from` into the records' bytes at `start`: by element when short. */
  private copyInline(start: number, bytes: Uint8Array, from: number, n: number): void {
    const target = this.bytes;
    if (n <= 64) {
      for (let i = 0; i < n; i++) target[start + i] = bytes[from + i];
    } else {
      target.set(bytes.subarray(from, from + n), start);
    }
  }

  /**
   * The record's owner. Stores `length` bytes of `bytes` from `from` as the payload: copied straight into
   * the record when they fit inline (no view made), else as {@link TaskTable.writePayload} does.
   *
   * @param index The record index.
   * @param bytes The buffer holding the encoding.
   * @param from Its first byte's index.
   * @param length Its length.
   * @returns `true`, or `false` if there are not enough free blocks (nothing is written then).
   */
  writeRange(index: number, bytes: Uint8Array, from: number, length: number): boolean {
    if (length > this.inlineBytes) return this.writePayload(index, bytes.subarray(from, from + length));
    this.freePayload(index);
    this.copyInline(this.at(index, RECORD_HEADER_WORDS) * 4, bytes, from, length);
    mem.write(this.words, this.at(index, RecordWords.payloadLength), length);
    return true;
  }

  /** A slab for `length` bytes; the main thread resets the arena (if nothing is in it) before giving up. */
  private takeSlab(length: number): number {
    const slab = this.slabs.take(length);
    // (Not for a payload larger than the arena, nor without one: a reset could not help.)
    if (slab !== NO_SLAB || this.owner !== -1 || length > this.slabs.maxBytes || !this.slabs.reset()) return slab;
    return this.slabs.take(length);
  }

  /**
   * Writes the part of `source` past the inline area into a chain of blocks; false if too few are free.
   * Each block is linked into the record's chain as it is taken (at its head), so that whoever frees the
   * record frees it: a throw or a death between two takes strands none. The block in hand between its
   * take and its link is noted (`[BLOCK]`). The chain ends up in the reverse order of the takes, and the
   * chunks are written along it.
   */
  private writeBlocks(index: number, source: Uint8Array): boolean {
    const length = source.length;
    const inline = this.inlineBytes;
    const per = this.bytesPerBlock - 4;
    const needed = Math.ceil((length - inline) / per);
    const headAt = this.at(index, RecordWords.payloadBlock);
    const note = this.note;
    note[BLOCK_RECORD] = index;
    for (let i = 0; i < needed; i++) {
      const block = this.freeBlocks.pop();
      if (block === QUEUE_EMPTY) {
        this.freePayload(index);
        return false;
      }
      note[BLOCK] = block; // (no call between the pop's return and this store)
      mem.write(this.blockWords, block * this.wordsPerBlock, mem.read(this.words, headAt));
      mem.write(this.words, headAt, block);
      note[BLOCK] = -1;
    }
    let block = mem.read(this.words, headAt);
    for (let from = inline; from < length; from += per) {
      const chunk = Math.min(per, length - from);
      this.blockBytes.set(source.subarray(from, from + chunk), block * this.bytesPerBlock + 4);
      block = mem.read(this.blockWords, block * this.wordsPerBlock);
    }
    return true;
  }

  /**
   * The record's owner. Stores the encoder's last encoding as the payload; without allocating when it fits
   * inline (the common case: the codec copies straight into the record).
   *
   * @param index The record index.
   * @param encoder An encoder whose last `encode` succeeded.
   * @returns `true`, or `false` if there are not enough free blocks (nothing is written then).
   */
  writeEncoded(index: number, encoder: Encoder): boolean {
    const length = encoder.length;
    if (length > this.inlineBytes) return this.writePayload(index, encoder);
    this.freePayload(index);
    encoder.copyTo(this.bytes, this.at(index, RECORD_HEADER_WORDS) * 4);
    mem.write(this.words, this.at(index, RecordWords.payloadLength), length);
    return true;
  }

  /**
   * The record's owner. Decodes the payload, then frees its blocks.
   *
   * @param index The record index.
   * @param resolveBuffer Maps a shared-buffer id to its buffer (see `codec.ts`).
   * @param errorClasses Error classes to decode errors as (see `codec.ts`).
   * @param moved The buffers the payload's value moved (see `codec.ts`), if it moved any.
   * @returns The decoded value.
   * @throws {Error} If the payload does not decode (or a shared buffer cannot be resolved).
   */
  readPayload(
    index: number,
    resolveBuffer?: (id: number) => SharedArrayBuffer,
    errorClasses?: ErrorClasses,
    moved?: readonly ArrayBuffer[],
  ): unknown {
    const length = mem.read(this.words, this.at(index, RecordWords.payloadLength));
    const start = this.at(index, RECORD_HEADER_WORDS) * 4;
    if (length <= this.inlineBytes) return decode(this.bytes, start, length, resolveBuffer, errorClasses, moved);
    const slab = SLAB_REF - mem.read(this.words, this.at(index, RecordWords.payloadBlock));
    if (slab >= 0) return decode(this.slabs.bytes(slab), 0, length, resolveBuffer, errorClasses, moved);
    if (this.scratch.length < length) this.scratch = new Uint8Array(2 ** Math.ceil(Math.log2(length)));
    const scratch = this.scratch;
    scratch.set(this.bytes.subarray(start, start + this.inlineBytes), 0);
    const per = this.bytesPerBlock - 4;
    let block = mem.read(this.words, this.at(index, RecordWords.payloadBlock));
    for (let from = this.inlineBytes; from < length; from += per) {
      const chunk = Math.min(per, length - from);
      const at = block * this.bytesPerBlock + 4;
      scratch.set(this.blockBytes.subarray(at, at + chunk), from);
      block = mem.read(this.blockWords, block * this.wordsPerBlock);
    }
    return decode(scratch, 0, length, resolveBuffer, errorClasses, moved);
  }

  /**
   * The record's owner. Returns the payload's overflow blocks to the free list.
   *
   * @param index The record index.
   */
  freePayload(index: number): void {
    const blockAt = this.at(index, RecordWords.payloadBlock);
    let block = mem.read(this.words, blockAt);
    if (block <= SLAB_REF) {
      // Freed, then forgotten: a slot still named by a record is never taken for a dead worker's (slabs.ts).
      this.slabs.give(SLAB_REF - block);
      // A store, not a plain write: recovery reads it with a load, and must not see the clear before the
      // give-back above (Slabs.tla: the order makes reclaim safe; a plain write would not keep it).
      mem.store(this.words, blockAt, NO_BLOCK); // spec: FreeClearRecord
      return;
    }
    // One block at a time, unlinked from the head of the chain and then given back: the rest stays
    // reachable from the record, so a throw or a death between two frees strands none and frees none
    // twice. The block in hand is noted (`[BLOCK]`), and `published` reset so that a repair can tell
    // whether its push got as far as publishing.
    const note = this.note;
    note[BLOCK_RECORD] = index;
    while (block !== NO_BLOCK) {
      const next = mem.read(this.blockWords, block * this.wordsPerBlock);
      note[BLOCK] = block;
      mem.write(this.words, blockAt, next);
      this.freeBlocks.published = QUEUE_EMPTY;
      this.freeBlocks.pushPatiently(block);
      note[BLOCK] = -1;
      block = next;
    }
  }

  /** The largest payload the pool can ever hold: the inline area plus every block, or a slab of the arena. */
  maxPayloadBytes(): number {
    // Read once: every term is fixed when the pool's memory is set up (the arena's cap is written by its
    // init, before any thread opens a table), and a submission asks for it every time.
    if (this.maxPayload < 0) {
      this.maxPayload = Math.max(
        this.inlineBytes + this.freeBlocks.capacity * (this.bytesPerBlock - 4),
        this.slabs.maxBytes,
      );
    }
    return this.maxPayload;
  }
  private maxPayload = -1;

  /**
   * The main thread, after worker `dead` died and its records were repaired, before its replacement starts:
   * empties the slabs it took and never put in a record (see {@link SlabTable.reclaim}).
   *
   * @param dead The dead worker's index.
   * @returns How many came back.
   */
  reclaimSlabsOf(dead: number): number {
    const capacity = this.indexMask + 1;
    return this.slabs.reclaim(dead, (slab) => {
      for (let i = 0; i < capacity; i++) {
        if (mem.load(this.words, this.at(i, RecordWords.payloadBlock)) === SLAB_REF - slab) return true; // spec: ReclaimReadRecord
      }
      return false;
    });
  }
}
