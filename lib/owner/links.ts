/**
 * The owner's side of its producers in other threads: the handles it gives out, the links it listens to,
 * what it does for them, and what it waits for of them when the pool closes or terminates.
 *
 * What it owns:
 * - one MessageChannel per handle ({@link ProducerLinks.open}), made with the producer slot the handle
 *   claims (protocol/producers.ts); the owner keeps one end and listens to it; the producer that opens the
 *   handle takes the other (lib/producer/owner_link.ts);
 * - the slots' lifetimes: claimed here for a handle, given back here when the producer says `closed`, or
 *   after its death was taken care of (owner/producer_deaths.ts) when its link closed without `closed`;
 * - the acts a producer asks of the owner: a message to a worker, a SharedArrayBuffer shared with every
 *   worker, a forced kill;
 * - what reaches the owner's thread for a producer by message: a SharedArrayBuffer a worker passed (sent
 *   on to every producer), a result payload that found no free blocks (sent on to the producer whose
 *   task it is, by the record's origin word);
 * - closing: the count of tasks the producers have pending ({@link ProducerLinks.quiet}), and at
 *   terminate the wake of every producer, which then reads the state word and rejects what it waits for.
 *
 * Invariants: tasks, results and completions never travel here (shared memory carries them); a message
 * here is a rare act (a cancellation, a shared buffer, a forced kill, a payload with no blocks).
 *
 * Threads: the owner's (the thread that created the pool).
 *
 * @module
 */

import { mem } from "../protocol/atomics.ts";
import { ControlWords, SlotCountWords } from "../protocol/layout.ts";
import type { PoolMemory } from "../protocol/memory.ts";
import type { ProducerDeaths } from "./producer_deaths.ts";
import {
  claimSlot,
  PoolStateCode,
  type ProducerChannel,
  ProducerWords,
  releaseSlot,
  slotOf,
  SlotState,
  wakeProducer,
} from "../protocol/producers.ts";
import type { PoolStateName } from "../lifecycle.ts";
import type { NoWorkersNote, ToOwner, ToProducer } from "../producer/owner_link.ts";
import type { TaskTable } from "../record/task.ts";
import type { PoolHandle } from "../producer/handle.ts";
import { lifelineLocks, watchLifeline } from "../runtime/lifeline.ts";
import { LinkPort } from "../runtime/port.ts";

/** What the links ask of the rest of the owner. */
export interface LinkActs {
  /** Posts a message to a worker (if it is alive). */
  post(worker: number, message: unknown): void;
  /** Shares a SharedArrayBuffer, registered as `id`, with every worker and the owner's producer. */
  share(id: number, buffer: SharedArrayBuffer): void;
  /** Kills `worker` once it is outside the pool's steps, unless task `handle` stops running there first. */
  kill(worker: number, handle: number, cause: Error): void;
  /** The SharedArrayBuffers passed by reference so far (a new producer gets them all). */
  buffers(): Iterable<[number, SharedArrayBuffer]>;
  /** An elastic pool: a producer's submission found nobody asleep; the owner looks at growth (growth.ts). */
  grow(): void;
  /** Reports an error no caller can receive (a message of the wrong shape: two copies of filch?). */
  report(error: unknown, where: string): void;
}

/**
 * One producer slot's counts, as `stats().producers` reports them (see `PoolStats`).
 *
 * @example Usage
 * ```ts ignore
 * for (const { slot, open, submitted, completed, pending, abandoned } of pool.stats().producers) {
 *   console.log(slot, open, submitted, completed, pending, abandoned);
 * }
 * ```
 */
export interface SlotCounts {
  /** The slot: 0 for the pool's own submissions (the owner's thread), 1 to `producers` for the others. */
  slot: number;
  /** Whether a producer holds the slot now (false once it closed or its thread died). */
  open: boolean;
  /** Tasks submitted through the slot since the pool was created, by every producer that held it. */
  submitted: number;
  /** Of those, the ones that settled (resolved or rejected) in their producer's thread. */
  completed: number;
  /** Submitted and not yet settled, by a producer that is still there to settle them. */
  pending: number;
  /** Tasks that were pending when their producer's thread died: nobody settles them (0 for slot 0). */
  abandoned: number;
}

/** How often `close()` looks at the producers' pending counts while it waits for them (ms). */
const QUIET_POLL_MS = 5;

/**
 * The owner's producers in other threads.
 *
 * @example Usage
 * ```ts ignore
 * const links = new ProducerLinks(memory, table, acts, deaths);
 * const { port, slot } = links.open(); // for a handle (see Pool.handle)
 * ```
 */
export class ProducerLinks {
  private readonly memory: PoolMemory;
  private readonly table: TaskTable;
  private readonly acts: LinkActs;
  private readonly deaths: ProducerDeaths;
  /** Every remote slot's channel, by slot - 1. */
  private readonly channels: readonly ProducerChannel[];
  /** The open links: each end, by the slot its handle claimed. */
  private readonly bySlot = new Map<number, LinkPort>();

  /**
   * @param memory The pool's memory as the owner sees it.
   * @param table The task records (a payload's producer is its record's origin).
   * @param acts What the owner does for a producer.
   * @param deaths Where a producer whose thread ended without closing is taken care of.
   */
  constructor(memory: PoolMemory, table: TaskTable, acts: LinkActs, deaths: ProducerDeaths) {
    this.memory = memory;
    this.table = table;
    this.acts = acts;
    this.deaths = deaths;
    this.channels = memory.channels.slice(1);
  }

  /**
   * A new link, for a handle: claims a free slot (FREE → OPEN) and makes the channel whose one end the
   * owner listens to.
   *
   * @returns The producer's end of the channel (transfer it with the handle) and the slot.
   * @throws {RangeError} If every slot is taken.
   * @throws {TypeError} If this runtime has no MessageChannel.
   */
  open(): { port: PoolHandle["port"]; slot: number; lifeline: string | undefined } {
    if (typeof MessageChannel !== "function") {
      throw new TypeError("Cannot make a pool handle as this runtime has no MessageChannel");
    }
    const { buffer, layout } = this.memory;
    const slot = claimSlot(buffer, layout);
    if (slot < 0) {
      throw new RangeError(
        `Cannot make a pool handle as all ${layout.shape.producers} producer slots are taken: close a producer first, or create the pool with a larger 'producers' option`,
      );
    }
    const channel = new MessageChannel();
    // The producer's thread ended without closing its producer: the runtime closes the link.
    const end = new LinkPort(channel.port1);
    end.listen((data) => this.received(slot, end, data as ToOwner), () => this.ended(slot, end));
    this.bySlot.set(slot, end);
    // The SharedArrayBuffers passed by reference so far: a result may name any of them.
    for (const [id, buffer] of this.acts.buffers()) end.postMessage({ type: "buffer", id, buffer });
    // A fixed pool with no worker left: this producer refuses its submissions too.
    if (this.unstaffed !== undefined) end.postMessage(this.unstaffed satisfies ToProducer);
    // Where the runtime does not fire that event (browsers), a Web Lock stands in (runtime/lifeline.ts).
    const lifeline = lifelineLocks() === undefined ? undefined : `filch.producer.${crypto.randomUUID()}`;
    if (lifeline !== undefined) this.lifelines.set(slot, { name: lifeline, cancel: undefined });
    return { port: channel.port2 as unknown as PoolHandle["port"], slot, lifeline };
  }

  /** Each slot's lifeline, where the runtime needs one: its lock's name, and the cancel of the owner's watch. */
  private readonly lifelines = new Map<number, { name: string; cancel: (() => void) | undefined }>();

  /** Stops watching `slot`'s lifeline (its producer said `closed`, or the pool stopped). */
  private dropLifeline(slot: number): void {
    this.lifelines.get(slot)?.cancel?.();
    this.lifelines.delete(slot);
  }

  /** The link of `slot` closed: if its producer had not said `closed`, its thread is gone. */
  private ended(slot: number, end: LinkPort): void {
    if (this.bySlot.get(slot) !== end) return;
    this.bySlot.delete(slot);
    this.dropLifeline(slot);
    try {
      this.deaths.died(slot);
    } catch (error) {
      this.acts.report(error, `(recovery of producer slot ${slot})`);
    }
  }

  private received(slot: number, end: LinkPort, message: ToOwner): void {
    try {
      switch (message?.type) {
        case "post":
          this.acts.post(message.worker, message.message);
          return;
        case "share":
          this.acts.share(message.id, message.buffer);
          for (const [other, link] of this.bySlot) {
            if (other !== slot) link.postMessage({ type: "buffer", id: message.id, buffer: message.buffer });
          }
          return;
        case "kill":
          this.acts.kill(message.worker, message.handle, new Error(message.reason));
          return;
        case "grow":
          this.acts.grow();
          return;
        case "holding": {
          // It holds its lifeline: the lock comes free when it closes or its thread ends.
          const lifeline = this.lifelines.get(slot);
          if (lifeline === undefined || lifeline.cancel !== undefined || this.bySlot.get(slot) !== end) return;
          lifeline.cancel = watchLifeline(lifeline.name, () => this.ended(slot, end));
          return;
        }
        case "closed":
          // Every task it submitted settled and every record it held came back (pool_producer.ts close).
          if (this.bySlot.get(slot) !== end) return;
          this.bySlot.delete(slot);
          this.dropLifeline(slot);
          releaseSlot(this.memory.buffer, this.memory.layout, slot); // spec: OwnerReceiveClosed
          end.postMessage({ type: "released" } satisfies ToProducer);
          end.close();
          return;
        default:
          throw new TypeError(
            `Cannot act on a message from a producer as its type is unknown: ${
              String((message as { type?: unknown })?.type)
            } (is a second copy of filch, of another version, using this pool's handle?)`,
          );
      }
    } catch (error) {
      this.acts.report(error, "(a producer's message)");
    }
  }

  /**
   * A SharedArrayBuffer a worker passed by reference: every producer may find it named in a result.
   *
   * @param id Its id.
   * @param buffer The buffer.
   */
  bufferArrived(id: number, buffer: SharedArrayBuffer): void {
    for (const end of this.bySlot.values()) end.postMessage({ type: "buffer", id, buffer });
  }

  /**
   * A result payload that came by message: to the producer in another thread whose task it is, if it is
   * one (the record's origin names it; its completion is not read yet, so the record is still its).
   *
   * @param handle The task's handle.
   * @param bytes Its encoded outcome.
   * @param moved The buffers its result moved.
   * @returns Whether it was for a producer in another thread (false: for the owner's own).
   */
  payloadArrived(handle: number, bytes: Uint8Array, moved: ArrayBuffer[] | undefined): boolean {
    const table = this.table;
    const origin = table.fields.loadOrigin(table.indexOf(handle));
    const slot = slotOf(origin);
    if (slot === 0 || slot > this.channels.length) return false;
    // (A dead producer's: nobody reads it; its record is freed by the cleanup.)
    this.bySlot.get(slot)?.postMessage(
      { type: "payload", handle, bytes, moved } satisfies ToProducer,
      [bytes.buffer as ArrayBuffer, ...(moved ?? [])],
    );
    return true;
  }

  /** Tasks pending in every producer in another thread (their slots' counts). */
  pending(): number {
    let sum = 0;
    for (let slot = 1; slot <= this.channels.length; slot++) {
      const line = this.channels[slot - 1].words;
      if (mem.load(line, ProducerWords.state) === SlotState.OPEN) sum += mem.load(line, ProducerWords.pending); // spec: OwnerQuietRead
    }
    return sum;
  }

  /**
   * The counts of every remote slot that a producer holds now or that ever counted a task, from its counts
   * line (`SlotCountWords`, written by its producers' threads): read with atomic loads, `completed` before
   * `submitted`, so that a snapshot taken while tasks settle never shows more settled than submitted.
   *
   * @returns One entry a slot, by slot.
   */
  counts(): SlotCounts[] {
    const all: SlotCounts[] = [];
    for (let slot = 1; slot <= this.channels.length; slot++) {
      const state = mem.load(this.channels[slot - 1].words, ProducerWords.state);
      const counts = this.memory.slotCounts(slot);
      const abandoned = mem.load(counts, SlotCountWords.abandoned);
      const completed = mem.load(counts, SlotCountWords.completed);
      const submitted = mem.load(counts, SlotCountWords.submitted);
      if (state === SlotState.FREE && submitted === 0) continue;
      const pending = Math.max(0, submitted - completed - abandoned);
      all.push({ slot, open: state === SlotState.OPEN, submitted, completed, pending, abandoned });
    }
    return all;
  }

  /** Resolves once no producer in another thread has a task pending (they submit no more: the pool closes). */
  async quiet(): Promise<void> {
    while (this.pending() > 0) await new Promise((resolve) => setTimeout(resolve, QUIET_POLL_MS));
  }

  /**
   * The pool has no worker live or starting (owner.ts `noWorkersLeft`): every producer is told, and, if it
   * is for good (a fixed pool), every producer that opens a handle later.
   *
   * @param note What they are told.
   */
  noWorkers(note: NoWorkersNote): void {
    if (note.permanent) this.unstaffed = note;
    for (const end of this.bySlot.values()) end.postMessage(note satisfies ToProducer);
  }

  /** Set once a fixed pool has no worker left: told to each link opened later. */
  private unstaffed: NoWorkersNote | undefined = undefined;

  /**
   * The owner moved the pool to `state`: written where producers read it; at terminate, every producer
   * that waits is woken (it reads the state and rejects what it waits for).
   *
   * @param state The new state.
   */
  stateChanged(state: PoolStateName): void {
    mem.store(this.memory.control, ControlWords.poolState, PoolStateCode[state]); // spec: OwnerStorePoolState
    if (state === "terminated") {
      // Each that waits reads the state when it wakes (completion.ts arm re-checks it after its store).
      for (const channel of this.channels) wakeProducer(channel); // spec: OwnerWakeProducer
    }
  }

  /** The pool stopped: every link is closed (a producer's later acts have nobody to act on them). */
  closeAll(): void {
    const ends = [...this.bySlot.values()];
    // Forgotten first: their close events then say nothing of their producers.
    this.bySlot.clear();
    for (const slot of [...this.lifelines.keys()]) this.dropLifeline(slot);
    for (const end of ends) end.close();
  }
}
