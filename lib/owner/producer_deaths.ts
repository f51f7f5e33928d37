/**
 * A producer in another thread that died: what the owner takes back, so that nothing it held is stranded
 * and neither the pool nor any other producer is disturbed.
 *
 * How a death is noticed: the owner listens to its end of each producer's link (owner/links.ts); when the
 * producer's thread ends (it exited, threw, or was terminated) without having said `closed`, the runtime
 * closes the link, and its `close` event reaches the owner (Node, Deno and Bun fire it; see
 * docs/producers.md for browsers).
 *
 * What it takes back, in this order (the dead thread can no longer touch anything):
 * 1. the steps it died in, from its notes in the pool's buffer (laid out as a worker's): a claimed
 *    position of an injector, of a free list or of its completion queue (`Injector.repair`); a record or
 *    block it was taking or giving back (`TaskTable.recoverNotes`); a task it had published (QUEUED) and
 *    not yet pushed (its slot's `placing` note, told apart from one it pushed by the last push its level's
 *    notes claimed): pushed now, so that every QUEUED task is in a queue;
 * 2. records it had cached or was filling (marked CACHED with its thread id) and slabs it held unnamed;
 * 3. its tasks: each still QUEUED is cancelled (QUEUED → CANCELLED, a compare-exchange that a worker's
 *    claim may win; the worker that takes a CANCELLED handle frees its record), each that runs is left to
 *    finish; then, every few ms, the owner reads the dead slot's completion queue itself and frees each
 *    record, and frees a DONE task's record that it found DONE twice in a row without its completion (the
 *    dead producer had popped it); once no task of the slot is QUEUED, RUNNING or DONE, the slot is FREE.
 * Nobody waits for a dead producer's tasks: its promises died with its thread.
 *
 * Invariants: a record is freed once per generation (`TaskTable.releaseHandle` refuses a stale handle), so
 * a completion a worker pushes late, after its record was freed here, frees nothing; the slot is not
 * reused before it is FREE, so no other producer reads a completion of the dead one's tasks.
 *
 * Threads: the owner's.
 *
 * @module
 */

import { mem } from "../protocol/atomics.ts";
import { Injector, lastClaimedPush, QUEUE_EMPTY } from "../protocol/injector.ts";
import { Level, type Levels } from "../protocol/levels.ts";
import { NoteWords, SlotCountWords } from "../protocol/layout.ts";
import type { PoolMemory } from "../protocol/memory.ts";
import { originOf, producerThreadId, ProducerWords, releaseSlot, SlotState } from "../protocol/producers.ts";
import { TABLE_NOTE_WORDS, tableNotesInStep, TaskState, type TaskTable } from "../record/task.ts";

/** How often the owner looks again at a dead producer's tasks still under way (ms). */
const SWEEP_MS = 5;

/** What a cleanup needs of the owner. */
export interface ProducerDeathsParts {
  /** The pool's memory as the owner sees it (the slot's line, notes and channel; the sleep words: a task put back wakes a worker). */
  readonly memory: PoolMemory;
  /** The owner's view of the task records. */
  readonly table: TaskTable;
  /** The owner's handles on the injectors (a task published and not queued goes into its level's). */
  readonly levels: Levels;
  /** Whether the pool still runs (a terminated pool's records are not taken back). */
  readonly running: () => boolean;
}

/**
 * The deaths of producers in other threads, and what the owner took back from each.
 *
 * @example Usage
 * ```ts ignore
 * const deaths = new ProducerDeaths({ memory, table, levels, running: () => true });
 * deaths.died(3); // slot 3's thread ended without closing its producer
 * ```
 */
export class ProducerDeaths {
  /** Producers whose thread died without closing (counted when noticed). */
  count = 0;
  /** Tasks of dead producers cancelled before they started. */
  cancelled = 0;
  /**
   * Of those deaths, the ones that caught a producer inside one of the pool's own steps (a queue or table
   * step noted, a task published and not yet queued, a record taken and not yet published), which the
   * owner completed: as a worker's (`PoolStats.deathsInSteps`), they may fall between a record's
   * allocation and its count.
   */
  inSteps = 0;
  private readonly parts: ProducerDeathsParts;
  /** Cleanups under way, by slot: they end when every task of the slot is done with. */
  private readonly sweeping = new Map<number, Promise<void>>();

  /** @param parts What a cleanup needs. */
  constructor(parts: ProducerDeathsParts) {
    this.parts = parts;
  }

  /**
   * The thread of slot `slot`'s producer ended without closing it: takes back what it held; the slot is
   * FREE again once its last task is done with.
   *
   * @param slot The slot.
   */
  died(slot: number): void {
    const line = this.parts.memory.slotLine(slot);
    if (mem.load(line, ProducerWords.state) !== SlotState.OPEN) return;
    this.count++;
    mem.store(line, ProducerWords.state, SlotState.DEAD); // spec: OwnerNoticeDeath
    // Its tasks still pending are nobody's now: counted apart (`stats().producers[i].abandoned`). The thread
    // ended, so its two counts move no more; the owner is the counts line's writer of `abandoned`.
    const counts = this.parts.memory.slotCounts(slot);
    const left = mem.load(counts, SlotCountWords.submitted) - mem.load(counts, SlotCountWords.completed);
    mem.store(counts, SlotCountWords.abandoned, left);
    this.repairSteps(slot);
    this.sweeping.set(slot, this.sweep(slot));
  }

  /** Resolves once every cleanup under way has ended (for `close` and the tests). */
  async settled(): Promise<void> {
    while (this.sweeping.size > 0) await Promise.all([...this.sweeping.values()]);
  }

  /** Step 1 and 2 of the module doc: the dead thread's steps in progress, its cached records and slabs. */
  private repairSteps(slot: number): void {
    const { memory, table, levels } = this.parts;
    const { buffer, layout } = memory;
    const capacity = layout.shape.taskCapacity;
    const notes = (at: number) => memory.slotNotes(slot, at);
    let putBack = false;
    let inStep = false;
    // Its handles on the three injectors (in level order: high, normal, low), each completed.
    const levelNotes = [notes(NoteWords.injectorHigh), notes(NoteWords.injector), notes(NoteWords.injectorLow)];
    memory.levelRegions().forEach((region, level) => {
      const queue = new Injector(region, levelNotes[level]);
      if (queue.cutShort) {
        queue.repair();
        putBack = inStep = true;
      }
    });
    const repaired = (region: { byteOffset: number; capacity: number }, at: number) => {
      const queue = new Injector({ buffer, ...region }, notes(at));
      if (!queue.cutShort) return QUEUE_EMPTY;
      inStep = true;
      queue.repair();
      return queue.published;
    };
    repaired(memory.channels[slot].queue, NoteWords.completions);
    const freeListPushed = repaired({ byteOffset: layout.freeRecords, capacity }, NoteWords.freeRecords);
    const freeBlocksPushed = repaired(
      { byteOffset: layout.freeBlocks, capacity: layout.shape.blocks },
      NoteWords.freeBlocks,
    );
    const tableNotes = memory.slotNotes(slot, NoteWords.table, TABLE_NOTE_WORDS);
    if (tableNotesInStep(tableNotes)) inStep = true;
    table.recoverNotes(tableNotes, freeListPushed, freeBlocksPushed);
    // A task it published (QUEUED) and may not have pushed: pushed, unless its level's notes say the last
    // push they claimed was this one (then the push, or its repair above, put it in).
    const line = memory.slotLine(slot);
    const placing = mem.read(line, ProducerWords.placing);
    if (placing >= 0) inStep = true;
    if (placing >= 0 && table.isCurrent(placing)) {
      const index = table.indexOf(placing);
      const level = table.levelOf(placing);
      if (
        table.fields.loadState(index) === TaskState.QUEUED &&
        table.fields.loadOrigin(index) === originOf(slot) &&
        lastClaimedPush(levelNotes[level] ?? levelNotes[Level.normal]) !== placing
      ) {
        levels.pushPatiently(placing, level);
        putBack = true;
      }
    }
    mem.write(line, ProducerWords.placing, -1);
    // What it marked as its own: records it cached or was filling, slabs it held and no record names.
    const id = producerThreadId(layout, slot);
    // (It keeps no cache: a record marked with its id is one it took for a task and had not published.)
    if (table.reclaimCachedBy(id) > 0) inStep = true; // spec: DiedReclaimCached
    if (table.reclaimSlabsOf(id) > 0) inStep = true;
    if (inStep) this.inSteps++;
    if (putBack) memory.sleep.newWork();
  }

  /** Step 3 of the module doc, until no task of the slot is left; then the slot is FREE. */
  private async sweep(slot: number): Promise<void> {
    const { memory, table, running } = this.parts;
    const origin = originOf(slot);
    const completions = new Injector(memory.channels[slot].queue);
    const capacity = table.indexMask + 1;
    let doneBefore = new Set<number>();
    // After `died` has registered this sweep (one that ends at once must still be removed after that).
    await null;
    try {
      while (running()) {
        // Its completions: each frees its record (once: a stale or repeated handle frees nothing).
        for (let handle = completions.pop(); handle !== QUEUE_EMPTY; handle = completions.pop()) { // spec: DiedDrainQueue
          table.releaseHandle(handle);
        }
        let left = 0;
        const done = new Set<number>();
        for (let i = 0; i < capacity; i++) {
          const state = table.fields.loadState(i);
          if (state !== TaskState.QUEUED && state !== TaskState.RUNNING && state !== TaskState.DONE) continue;
          if (table.fields.loadOrigin(i) !== origin) continue;
          const handle = table.handleOf(i);
          if (state === TaskState.QUEUED) {
            // Not started: nobody will read its result. Cancelled, unless a worker's claim wins.
            if (
              mem.compareExchange(table.words, table.fields.stateWord(i), TaskState.QUEUED, TaskState.CANCELLED) === // spec: DiedCancelQueued
                TaskState.QUEUED
            ) {
              this.cancelled++;
              continue;
            }
            left++;
          } else if (state === TaskState.DONE) {
            // Its completion was read above, or the dead producer had popped it (or a worker is between
            // the DONE store and the push: then that push, later, frees nothing). Seen DONE twice: freed.
            if (doneBefore.has(handle)) table.releaseHandle(handle);
            else {
              done.add(handle);
              left++;
            }
          } else {
            left++;
          }
        }
        doneBefore = done;
        if (left === 0) break;
        await new Promise((resolve) => setTimeout(resolve, SWEEP_MS));
      }
      if (running()) releaseSlot(memory.buffer, memory.layout, slot);
    } finally {
      this.sweeping.delete(slot);
    }
  }
}
