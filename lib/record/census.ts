/**
 * The accounting view of the task table: where every record, overflow block and slab is, and whether the
 * generations advanced as often as records were allocated. A debug view for tests and diagnostics (not
 * exported by `mod.ts`); it changes nothing.
 *
 * What it owns: nothing but the reading ({@link recordCensus}) and the rules an idle pool's view must
 * satisfy ({@link idleAccountingErrors}).
 *
 * The rules, for a pool at rest (no task queued, running or unsettled, and no record in a thread's hands):
 * - every record is free: FREE (in the shared free list, which then holds exactly those) or CACHED (in a
 *   thread's private cache, which counts as free: only its thread reuses it, and a worker empties its
 *   cache before it sleeps); the records marked cached by the main thread are exactly those in its cache;
 * - every overflow block is in the block free list, and every slab made is FREE;
 * - records allocated = records released, each counted by its thread (task.ts `TaskTable.accounting`), at
 *   another place than the generation bump;
 * - the generation advances summed over the records (each record's generation minus its initial 0, modulo
 *   the generation's range) = the records allocated, modulo that range: each allocation advanced exactly
 *   one generation. (Not kept when a worker was killed from outside inside `allocate` or `release`, where
 *   the main thread may return the record between the bump or the release and the dying thread's count;
 *   nor, for releases, when a throw (a stack overflow) cuts a release short after its count, in the
 *   payload's freeing, and the repair then releases the record again; nor, for allocations, when a throw
 *   cuts `allocate` short after its count, at the field writes that follow it: the record, marked cached by
 *   its thread and in no cache, goes back to the free list by that thread's repair (`repairCut`) with no
 *   release counted. Seen under a sweep of stack overflows across join depths with main-thread tasks
 *   queued: 9 more allocations than releases in about 86,000. An allocation's bump and count have no call
 *   between them, so a throw leaves both done or neither: the generation rule holds.)
 *
 * Threads: the main thread (it reads the counts of every thread; see `TaskTable.accounting`). Exact only
 * while no thread allocates or frees; a reading made while one does is a snapshot of moving parts.
 *
 * @module
 */

import { mem } from "../protocol/atomics.ts";
import { InjectorWords } from "../protocol/layout.ts";
import { TaskState, type TaskTable } from "./task.ts";

/** The names of the record states, by value (for reports). */
const STATE_NAMES: readonly string[] = ["FREE", "QUEUED", "RUNNING", "DONE", "CACHED", "CANCELLED"];

/** What {@link recordCensus} reports. */
export interface RecordCensus {
  /** Task records in all. */
  capacity: number;
  /** Records FREE. */
  free: number;
  /** Records in the shared free list (its length). */
  freeList: number;
  /**
   * Where the free list and the FREE marks disagree: the FREE records the list does not hold (lost to
   * every allocation), and the values it holds more than once or that are not FREE (a record pushed twice:
   * it would be handed out twice). Looked for only when {@link RecordCensus.freeList} and
   * {@link RecordCensus.free} differ (else both empty).
   */
  freeListStrays: { notListed: number[]; listedWrongly: number[] };
  /** Records CACHED, by the thread whose cache holds them ("-1" the main thread). */
  cached: Record<string, number>;
  /** Records in the main thread's private cache (its length: those CACHED by it should be exactly these). */
  mainCache: number;
  /** The most records the main thread's cache keeps between its drains (see `TaskTable.holdFreed`). */
  mainCacheBound: number;
  /** Records neither FREE nor CACHED, by state name: in use. */
  inUse: Record<string, number>;
  /** Overflow blocks in the block free list, and in all. */
  blocks: { free: number; total: number };
  /** Slabs made (slots not EMPTY), and FREE. */
  slabs: { made: number; free: number };
  /** Records allocated and released, summed over the threads. */
  allocations: number;
  releases: number;
  /** The generation advances summed over the records, modulo {@link RecordCensus.generations}. */
  generationAdvances: number;
  /** The range of a generation (it wraps at this). */
  generations: number;
}

/**
 * Reads where every record, block and slab is, and the counts.
 *
 * @param table The main thread's task table (the pool's producer's).
 * @returns The census.
 *
 * @example Usage
 * ```ts
 * import { PoolMemory } from "../protocol/memory.ts";
 * import { TaskTable } from "./task.ts";
 * import { idleAccountingErrors, recordCensus } from "./census.ts";
 * const memory = PoolMemory.create({ workers: 1, dequeCapacity: 4, taskCapacity: 4, inlineBytes: 64, blockBytes: 128, blocks: 4 });
 * TaskTable.init(memory);
 * const table = new TaskTable(memory);
 * const handle = table.allocate();
 * console.log(recordCensus(table).allocations); // 1
 * table.release(table.indexOf(handle));
 * console.log(idleAccountingErrors(recordCensus(table))); // []
 * ```
 */
export function recordCensus(table: TaskTable): RecordCensus {
  const capacity = table.indexMask + 1;
  // From the handle's shape, not the table's mask: a mask set wrong must not hide itself.
  const generations = 2 ** (31 - table.indexBits);
  const cached: Record<string, number> = {};
  const inUse: Record<string, number> = {};
  let free = 0;
  let generationAdvances = 0;
  for (let i = 0; i < capacity; i++) {
    const state = table.fields.loadState(i);
    if (state === TaskState.FREE) free++;
    else if (state === TaskState.CACHED) {
      const owner = String(table.fields.loadWorker(i));
      cached[owner] = (cached[owner] ?? 0) + 1;
    } else {
      const name = STATE_NAMES[state] ?? `state ${state}`;
      inUse[name] = (inUse[name] ?? 0) + 1;
    }
    // Initially 0: the current generation is the advances, modulo the range.
    generationAdvances = (generationAdvances + (table.handleOf(i) >>> table.indexBits)) % generations;
  }
  const { allocations, releases } = table.accounting();
  const freeList = table.freeRecords.length;
  return {
    capacity,
    free,
    freeList,
    // Read only when the counts disagree (the idle-accounting helper takes a census every few ms while it waits).
    freeListStrays: freeList === free ? { notListed: [], listedWrongly: [] } : freeListStrays(table),
    cached,
    mainCache: table.cachedHere,
    mainCacheBound: table.cacheBoundHere,
    inUse,
    blocks: { free: table.freeBlocks.length, total: table.freeBlocks.capacity },
    slabs: table.slabs.census(),
    allocations,
    releases,
    generationAdvances,
    generations,
  };
}

/**
 * Compares the free list's values (the positions from its head to its tail) with the FREE marks.
 *
 * @param table The main thread's task table.
 * @returns The FREE records not listed, and the listed values listed twice or not FREE.
 */
function freeListStrays(table: TaskTable): RecordCensus["freeListStrays"] {
  const list = table.freeRecords;
  const head = mem.load(list.words, InjectorWords.head);
  const tail = mem.load(list.words, InjectorWords.tail);
  const times = new Map<number, number>();
  for (let pos = head; pos !== tail && ((pos - head) | 0) < list.capacity; pos = (pos + 1) | 0) {
    const value = mem.load(list.words, list.valuesAt + (pos & list.mask));
    times.set(value, (times.get(value) ?? 0) + 1);
  }
  const notListed: number[] = [];
  for (let i = 0; i <= table.indexMask; i++) {
    if (table.fields.loadState(i) === TaskState.FREE && !times.has(i)) notListed.push(i);
  }
  const listedWrongly = [...times].flatMap(([value, n]) =>
    n > 1 || value < 0 || value > table.indexMask || table.fields.loadState(value) !== TaskState.FREE ? [value] : []
  );
  return { notListed, listedWrongly };
}

/**
 * What an idle pool's census breaks of the rules above (see the module's doc): one line each, or none.
 *
 * @param census A census of a pool at rest.
 * @param counts Whether to check the counts and generations (not after a worker was killed from outside).
 * @returns The broken rules, described.
 *
 * @example Usage
 * ```ts ignore
 * assertEquals(idleAccountingErrors(recordCensus(table)), []);
 * ```
 */
export function idleAccountingErrors(census: RecordCensus, counts = true): string[] {
  const errors: string[] = [];
  const inUse = Object.values(census.inUse).reduce((a, b) => a + b, 0);
  if (inUse !== 0) errors.push(`${inUse} records in use: ${JSON.stringify(census.inUse)}`);
  if (census.freeList !== census.free) {
    const { notListed, listedWrongly } = census.freeListStrays;
    errors.push(
      `the free list holds ${census.freeList} records, but ${census.free} are FREE (FREE and not listed: [${notListed}]; ` +
        `listed twice or not FREE: [${listedWrongly}])`,
    );
  }
  // A record marked cached by the main thread and in no cache is held by nobody (a worker's cache cannot be
  // seen from here: it is empty once the worker sleeps, and reclaimed if it dies).
  if ((census.cached["-1"] ?? 0) !== census.mainCache) {
    errors.push(
      `${census.cached["-1"] ?? 0} records marked cached by the main thread, but its cache holds ${census.mainCache}`,
    );
  }
  // A drain may keep the records it freed past the bound, for the backlog; what the backlog left must be back
  // in the shared list, or the workers' forks could find none while the main thread sits on them.
  if (census.mainCache > census.mainCacheBound) {
    errors.push(
      `the main thread's cache holds ${census.mainCache} records, past its bound of ${census.mainCacheBound}`,
    );
  }
  if (census.blocks.free !== census.blocks.total) {
    errors.push(`${census.blocks.total - census.blocks.free} of ${census.blocks.total} overflow blocks not free`);
  }
  if (census.slabs.free !== census.slabs.made) {
    errors.push(`${census.slabs.made - census.slabs.free} of ${census.slabs.made} slabs not free`);
  }
  if (counts) {
    if (census.allocations !== census.releases) {
      errors.push(`${census.allocations} records allocated but ${census.releases} released`);
    }
    if (census.generationAdvances !== census.allocations % census.generations) {
      errors.push(
        `the generations advanced ${census.generationAdvances} times in all, for ${census.allocations} allocations`,
      );
    }
  }
  return errors;
}
