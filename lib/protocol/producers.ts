/**
 * The producer registry: the slots through which threads other than the owner submit to one pool, and
 * where each producer's completions go.
 *
 * What it owns:
 * - the producer slots: slot 0 is the owner's own producer (the thread that created the pool); slots 1 to
 *   `shape.producers` are claimed by producers in other threads ({@link claimSlot}) and given back when
 *   they close ({@link releaseSlot}). Each remote slot has a line of {@link ProducerWords};
 * - each slot's completion channel ({@link ProducerChannel}): a completion queue of its own (slot 0's is
 *   `layout.completions`) and a waiting word (slot 0's is `ControlWords.mainWaiting`), with the same
 *   protocol as the owner's (completion.ts: the producer stores 1, re-checks its queue, waits; a worker
 *   that finished one of its tasks exchanges the word to 0 and notifies);
 * - how a record names its producer: its `origin` word ({@link originOf}; `Origin.MAIN` is slot 0,
 *   `Origin.FORK` a fork, and `slot + 1` a task of remote slot `slot`);
 * - the pool's lifecycle as a word ({@link PoolStateCode} in `ControlWords.poolState`), written by the
 *   owner, read by every producer before it admits a task;
 * - the wake of producers whose tasks wait for a record ({@link wakeRecordWaiters}): records are shared
 *   by all producers, so one producer's freed record may be what another's backlog waits for.
 *
 * Invariants:
 * - A slot is OPEN from its claim (a compare-exchange FREE → OPEN, so two threads never share a slot)
 *   until its producer released it, which it does only once every task it submitted settled and every
 *   record it held was freed: no completion is ever pushed to a FREE slot's queue, and a slot reused by a
 *   new producer starts with an empty queue.
 * - A record's origin is written by its producer before the QUEUED store that publishes it, and read by the
 *   worker that finishes it (ordered by that store and the take) or by the owner's recovery.
 *
 * Threads: any. A slot's waiting word is set by its producer and cleared by workers (or the owner, at
 * terminate); its lines are written by its producer alone; `poolState` by the owner alone.
 *
 * @module
 */

import { mem } from "./atomics.ts";
import { clearNotes } from "./injector.ts";
import { ControlWords, NoteWords, type PoolLayout, ProducerWords } from "./layout.ts";
import { controlWords, type ProducerChannel, slotLine, slotNotes } from "./memory.ts";

// The views of a slot and its channel are made in memory.ts (the one place that opens the pool's buffer),
// and its line's words are laid out in layout.ts; they are re-exported here, the registry's protocol, for
// the record layer and the interleaving harness, which open a slot by the registry's names.
export {
  allChannels,
  controlWords,
  type ProducerChannel,
  producerChannel,
  slotCounts,
  slotLine,
  slotNotes,
} from "./memory.ts";
export { ProducerWords } from "./layout.ts";

/** Words of a task table's notes (`TABLE_NOTE_WORDS` of record/task.ts, which imports this file). */
const TABLE_NOTES = 4;

/** A producer slot's state. */
export const SlotState = Object.freeze({
  /** Nobody's: a producer may claim it. */
  FREE: 0,
  /** A producer's, from its claim (the owner's, when it made a handle) until it closed. */
  OPEN: 1,
  /** Its producer's thread died: the owner is taking back what it held (owner/producer_deaths.ts). */
  DEAD: 2,
});

/** The pool's lifecycle as a number in `ControlWords.poolState` (the owner's {@link PoolState} names). */
export const PoolStateCode = Object.freeze({ open: 0, closing: 1, closed: 2, terminated: 3 });

/**
 * The owner, when it makes a handle. Claims a free slot (FREE → OPEN by compare-exchange, so that no two
 * handles share one) and counts it open.
 *
 * @param buffer The pool's buffer.
 * @param layout Its layout.
 * @returns The slot, or -1 if every slot is taken (the caller throws a named error).
 */
export function claimSlot(buffer: SharedArrayBuffer, layout: PoolLayout): number {
  const producers = layout.shape.producers ?? 0;
  for (let slot = 1; slot <= producers; slot++) {
    const line = slotLine(buffer, layout, slot);
    if (mem.compareExchange(line, ProducerWords.state, SlotState.FREE, SlotState.OPEN) === SlotState.FREE) { // spec: OwnerClaimSlot
      mem.store(line, ProducerWords.pending, 0);
      mem.store(line, ProducerWords.waiting, 0);
      mem.store(line, ProducerWords.countedWaiting, 0);
      mem.store(line, ProducerWords.countedRoom, 0);
      mem.write(line, ProducerWords.placing, -1);
      // Its notes start clear (nothing half done; the table's notes say -1), whatever a past producer of
      // this slot left: the owner reads them if this one dies, maybe before it opened its handles.
      const notes = slotNotes(buffer, layout, slot, 0, layout.notesBytes / 4);
      notes.fill(0);
      notes.fill(-1, NoteWords.table, NoteWords.table + TABLE_NOTES);
      // Its level queues' handles claimed no push yet: zeroed, they would say they pushed handle 0 (a task's,
      // once record 0's generation wraps), and that task, placed when this producer died, would be left out
      // of every queue by the owner's repair (owner/producer_deaths.ts).
      for (const at of [NoteWords.injectorHigh, NoteWords.injector, NoteWords.injectorLow]) {
        clearNotes(notes.subarray(at, at + 4));
      }
      mem.add(controlWords(buffer, layout), ControlWords.producersOpen, 1);
      return slot;
    }
  }
  return -1;
}

/**
 * The owner, once the slot's producer said it closed (every task it submitted settled and every record it
 * held was freed), or once the owner took back what a dead one held: gives the slot back (a later handle
 * may claim it).
 *
 * @param buffer The pool's buffer.
 * @param layout Its layout.
 * @param slot The slot its {@link claimSlot} returned.
 */
export function releaseSlot(buffer: SharedArrayBuffer, layout: PoolLayout, slot: number): void {
  const line = slotLine(buffer, layout, slot);
  mem.add(controlWords(buffer, layout), ControlWords.producersOpen, -1);
  // A producer that died counted as waiting for a record: uncounted, or every producer would keep to its
  // fair share for good.
  if (mem.exchange(line, ProducerWords.countedWaiting, 0) === 1) {
    mem.add(controlWords(buffer, layout), ControlWords.recordWaiters, -1);
  }
  // The same for room in the pool's queue: counted, it would keep every other producer to its share.
  if (mem.exchange(line, ProducerWords.countedRoom, 0) === 1) {
    mem.add(controlWords(buffer, layout), ControlWords.roomWaiters, -1);
  }
  mem.store(line, ProducerWords.state, SlotState.FREE);
}

/**
 * The thread id a remote slot's producer marks the records it caches or allocates with, and the slabs it
 * holds (the `worker` word of a CACHED record, a slab's HELD state): past every worker index, so that the
 * owner can take back exactly what a dead producer held (`TaskTable.reclaimCachedBy`, `reclaimSlabsOf`).
 *
 * @param layout The pool's layout.
 * @param slot The slot (1 to `shape.producers`).
 * @returns The id.
 */
export function producerThreadId(layout: PoolLayout, slot: number): number {
  return layout.shape.workers + slot - 1;
}

/**
 * The origin word of a task submitted by producer slot `slot` (`Origin.MAIN`, 0, for slot 0).
 *
 * @param slot The producer's slot.
 * @returns The value of the record's origin word.
 */
export function originOf(slot: number): number {
  return slot === 0 ? 0 : slot + 1;
}

/**
 * The producer slot a submitted task's origin word names (not for a fork's, `Origin.FORK`).
 *
 * @param origin The record's origin word.
 * @returns The slot.
 */
export function slotOf(origin: number): number {
  return origin === 0 ? 0 : origin - 1;
}

/**
 * Wakes the producer of `channel` if it said it waits (its waiting word is 1): exchanged to 0, then
 * notified, so that one wake serves one wait. Pairs with the producer's store of 1 and its re-check.
 *
 * @param channel The producer's channel.
 * @returns Whether this call woke it (its exchange took the word from 1 to 0).
 */
export function wakeProducer(channel: ProducerChannel): boolean {
  if (mem.load(channel.words, channel.waiting) === 1) { // spec: FinishReadMainWaiting
    if (mem.exchange(channel.words, channel.waiting, 0) === 1) { // spec: FinishTakeMainWaiting
      mem.notify(channel.words, channel.waiting, 1); // spec: FinishNotifyMain
      return true;
    }
  }
  return false;
}

/**
 * After records were freed to the shared list: wakes ONE producer that waits for a record, if any producer
 * said it waits for one (`ControlWords.recordWaiters`). A producer counts itself there (and raises its
 * channel's counted word) before it stores its waiting word and re-checks the free list, so a record freed
 * after that re-check finds the count non-zero, the counted word 1 and the waiting word 1.
 *
 * Which one: the wake takes the next turn (`ControlWords.recordWakeTurn`, a fetch-add) and looks at the
 * slots from that turn's slot on, round the ring, waking the first counted producer whose waiting word it
 * takes from 1 to 0; so every waiting producer's turn comes, whoever else waits (none is skipped for
 * ever). A counted producer that is not waiting (awake, or between its count and its re-check) is passed
 * over: it looks at the free list itself before it waits.
 *
 * One wake a batch, not one a waiter (before, every waiting producer was woken: up to 8 wake-ups a record
 * with 8 producers): the woken producer takes what it may and, if records are still free and others still
 * wait, calls this again (completion.ts `freed`), so the wake passes on instead of being swallowed by a
 * producer that found the records taken or could take only some.
 *
 * @param channels Every producer's channel (slot 0 first).
 * @param control The pool's control words.
 * @returns Whether a producer was woken.
 */
export function wakeRecordWaiters(channels: readonly ProducerChannel[], control: Int32Array): boolean {
  if (mem.load(control, ControlWords.recordWaiters) === 0) return false; // spec: FreedReadWaiters
  const n = channels.length;
  // Unsigned, so that the turn's wrap past 2^31 keeps the ring's order.
  const turn = mem.add(control, ControlWords.recordWakeTurn, 1) >>> 0; // spec: FreedTakeTurn
  for (let k = 0; k < n; k++) {
    const channel = channels[(turn + k) % n];
    if (mem.load(channel.words, channel.counted) !== 1) continue; // spec: FreedReadCounted
    if (wakeProducer(channel)) return true; // spec: FreedWakeWaiter
  }
  return false;
}
