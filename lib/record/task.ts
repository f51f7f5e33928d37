/**
 * Task records in the pool's SharedArrayBuffer: the table, its handles, and the free records.
 *
 * What it owns: the record table (one fixed-size record per task that is queued, running, or done but
 * not yet settled), the generation-tagged handles that name records, the free list of records (a bounded
 * MPMC queue, `injector.ts`) and each thread's private cache of free ones, and the counts of allocations
 * and releases. Where a record's payload lives (inline, overflow blocks, a slab) and the bytes in and out
 * of it are `payload.ts`'s, which {@link TaskTable} extends; the fields' offsets and values are `fields.ts`'s.
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
import { initInjector, Injector, QUEUE_EMPTY } from "../protocol/injector.ts";
import { NoteWords, StatusWords } from "../protocol/layout.ts";
import { asLevel, Level, type LevelIndex } from "../protocol/levels.ts";
import type { PoolMemory } from "../protocol/memory.ts";
import { RecordWords, TaskState } from "./fields.ts";
import {
  ALLOCATING,
  BLOCK,
  BLOCK_RECORD,
  NO_BLOCK,
  Payloads,
  RELEASING,
  type TableThread,
  threadNotes,
} from "./payload.ts";
import { SlabTable } from "./slabs.ts";

export {
  Origin,
  Outcome,
  PAYLOAD_BY_MESSAGE,
  RecordFields,
  RecordWords,
  submittedAtSlot,
  TaskFlags,
  TaskState,
} from "./fields.ts";
export { type PayloadSource, TABLE_NOTE_WORDS, tableNotesInStep, type TableThread } from "./payload.ts";

/** Returned by {@link TaskTable.allocate} when every record is in use. */
export const NO_RECORD = -1;

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

/**
 * A thread's handle on the pool's task records: handles, allocation and release, the free records; and,
 * from {@link Payloads} (payload.ts), their payloads.
 *
 * @example Usage
 * ```ts
 * import { PoolMemory } from "../protocol/memory.ts";
 * import { TaskTable } from "./task.ts";
 * const memory = PoolMemory.create({ workers: 1, dequeCapacity: 4, taskCapacity: 4, inlineBytes: 64, blockBytes: 128, blocks: 4 });
 * TaskTable.init(memory);
 * const table = new TaskTable(memory); // the main thread's; a worker's: new TaskTable(memory, { owner: 0 })
 * const handle = table.allocate();
 * const index = table.indexOf(handle);
 * table.writePayload(index, new Uint8Array([1, 2, 3]));
 * console.log(table.payloadBytes(index)[table.payloadStart(index) + 2], table.isCurrent(handle)); // 3 true
 * ```
 */
export class TaskTable extends Payloads {
  /** Free record indices. */
  readonly freeRecords: Injector;
  /** Bits of a handle that hold the record index. */
  readonly indexBits: number;
  /** `taskCapacity - 1`. */
  readonly indexMask: number;
  /** Generations wrap at this mask. */
  readonly generationMask: number;
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

  /** Free records this thread released and may reuse without touching the shared free list. */
  private readonly cache: number[] = [];
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
   * The owner, once, on a new pool's memory: writes the initial state, every record and block free (and
   * the slab table, over the memory's arena if any).
   *
   * @param memory The owner's memory of the new pool (`PoolMemory.create`).
   */
  static init(memory: PoolMemory): void {
    const { taskCapacity, blocks } = memory.layout.shape;
    const { records } = memory;
    SlabTable.init(records.slabWords, memory.arena);
    initInjector(records.freeRecords);
    initInjector(records.freeBlocks);
    const table = new TaskTable(memory);
    for (let i = 0; i < taskCapacity; i++) {
      // No payload: a record reclaimed from a dead worker that had just taken it (before allocate wrote
      // this) must not free block 0, which it never held.
      mem.write(table.words, table.at(i, RecordWords.payloadBlock), NO_BLOCK);
      table.freeRecords.pushPatiently(i);
    }
    for (let i = 0; i < blocks; i++) table.freeBlocks.pushPatiently(i);
  }

  /**
   * Opens a handle on the records of an initialized pool, with the views of this thread's memory.
   *
   * @param memory This thread's memory of the pool (its records' regions, status lines, notes, arena).
   * @param thread Whose handle this is: `owner`, a worker index, or -1 (the default) for a producer;
   * `slot`, the producer slot of a producer in another thread (0, the default, for the owner's producer
   * and a worker).
   */
  constructor(memory: PoolMemory, thread: TableThread = {}) {
    super(memory, thread);
    const { owner = -1, slot = 0 } = thread;
    const { taskCapacity, workers } = memory.layout.shape;
    const shared = owner >= 0 || slot > 0;
    // A producer in another thread keeps no cache: every record it marks CACHED is one it took for a task
    // (the owner then knows one it reclaims after the thread died was allocated: a death inside a step).
    this.cacheBound = slot > 0 ? 0 : cacheLimit(taskCapacity, workers);
    this.status = memory.status;
    // A producer in another thread counts in its slot's counts line (protocol/memory.ts), which the
    // owner's accounting sums with the workers'.
    this.counts = owner >= 0 ? this.status : slot > 0 ? memory.slotCounts(slot) : new Int32Array(StatusWords.count);
    this.countsAt = owner >= 0 ? owner * StatusWords.count : 0;
    this.ownCounts = owner < 0 && slot === 0;
    this.remoteCounts = Array.from({ length: memory.producers }, (_, i) => memory.slotCounts(i + 1));
    // A worker's notes in the pool's buffer (the main thread completes its operation if it dies in one).
    this.freeRecords = new Injector(
      memory.records.freeRecords,
      shared ? threadNotes(memory, owner, slot, NoteWords.freeRecords) : undefined,
    );
    this.indexBits = Math.log2(taskCapacity);
    this.indexMask = taskCapacity - 1;
    this.generationMask = 2 ** (31 - this.indexBits) - 1;
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

  /**
   * Any thread. Takes a free record and bumps its generation.
   *
   * @param into Where to note the new handle, if given: `into[at]` is set to it as `allocate`'s last
   *   shared store, with no call after it, so that a caller's mark of the record it holds (a fork's
   *   `pushing` mark, Marks.allocatePushing) leaves no call between the allocation and the mark where a
   *   throw (a stack overflow) would leave the record marked cached by this thread, in no cache and no
   *   mark: held by nobody, and counted free by every census. A cut before that store leaves `busy` set,
   *   and {@link TaskTable.repairCut} reclaims the record.
   * @param at The word of `into`.
   * @returns The new handle, or {@link NO_RECORD} if every record is in use (`into` untouched).
   */
  allocate(into?: Int32Array, at = 0): number {
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
    const handle = ((generation << this.indexBits) | index) >>> 0;
    // A plain element store (a facade call could be where the thread is cut short), then no call.
    if (into !== undefined) into[at] = handle;
    this.busy = false;
    return handle;
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
   * import { PoolMemory } from "../protocol/memory.ts";
   * import { TaskTable } from "./task.ts";
   * const memory = PoolMemory.create({ workers: 1, dequeCapacity: 4, taskCapacity: 4, inlineBytes: 64, blockBytes: 128, blocks: 4 });
   * TaskTable.init(memory);
   * const table = new TaskTable(memory);
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
    this.repairBlockNote();
    let back = 0;
    if (this.note[RELEASING] !== -1) {
      this.repairReleasing();
      back++;
    }
    // A record taken from the free list and not yet marked ours (cut at the mark's store: still FREE, in no
    // list and no cache): back to the list, as recoverNotes does for a dead thread's.
    // The note is cleared only after the push, with no call between (killed at the load or in the push, the
    // record is still noted, and recoverNotes returns it once: a claimed push is published by the repair of
    // the dead thread's free-list handle, which then names it, and recoverNotes skips the value it names).
    const allocating = this.note[ALLOCATING];
    if (allocating >= 0 && mem.load(this.words, this.at(allocating, RecordWords.state)) === TaskState.FREE) {
      this.freeRecords.published = QUEUE_EMPTY;
      this.freeRecords.pushPatiently(allocating);
      back++;
    }
    this.note[ALLOCATING] = -1;
    if (this.busy) {
      back += this.flushCache() + this.reclaimCachedBy(this.owner);
      this.busy = false;
    }
    // A slab taken for a payload that was cut short before its record named it.
    this.reclaimSlabsOf(this.owner);
    return back;
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
   * This thread, repairing a step cut short. Frees a record it allocated and never published: still marked
   * cached by this thread, and in no cache (`allocate` hands it out so, and {@link TaskTable.releaseHandle}
   * refuses such a record). Its payload goes with it: a fork cut short while its arguments were written
   * holds blocks. A record back in this thread's cache already (a release of it that ran) is left.
   *
   * @param handle A handle from {@link TaskTable.allocate}.
   * @returns `true` if this call freed it.
   */
  releaseUnpublished(handle: number): boolean {
    const index = handle & this.indexMask;
    if (!this.isCurrent(handle) || mem.read(this.words, this.at(index, RecordWords.state)) !== TaskState.CACHED) {
      return false;
    }
    if (mem.read(this.words, this.at(index, RecordWords.worker)) !== this.owner || this.cache.includes(index)) {
      return false;
    }
    this.release(index);
    return true;
  }

  /**
   * This thread, a producer repairing a submission cut short before it was published (a stack overflow
   * in `run`): gives back every record marked cached by this thread (its cache's, and one it allocated and
   * never published: in no cache, which {@link TaskTable.releaseHandle} refuses) with its payload, and the
   * slabs it holds that no record names, then completes what {@link TaskTable.repairCut} completes. Only
   * this thread's own marks: a producer in another thread marks its records and slabs with its own id
   * (protocol/producers.ts `producerThreadId`), so the owner's cache, and a record the owner is placing
   * meanwhile, are left alone (marked -1, they were once taken here by a producer's repair: a record then
   * both in the free list and in the owner's cache, handed out twice).
   *
   * @returns How many records came back.
   */
  reclaimOwn(): number {
    const back = this.flushCache() + this.reclaimCachedBy(this.owner);
    this.reclaimSlabsOf(this.owner);
    return back + this.repairCut();
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
      // The value the repair of its free-list handle published is in the list already: a give-back's, or
      // the re-push of a record it was taking (repairCut's, killed between the push's claim and publish).
      if (index < 0 || index > this.indexMask || index === published) continue;
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
      // Noted until pushed, as every give-back is: this thread killed between the FREE store and the push
      // (a worker's or a producer's own repair) would leave it free and in no list.
      this.giveBack(i);
      reclaimed++;
    }
    return reclaimed;
  }
}
