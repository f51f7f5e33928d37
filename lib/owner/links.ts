/**
 * The owner's side of its producers in other threads: the handles it gives out, the links it listens to,
 * what it does for them, and what it waits for of them when the pool closes or terminates.
 *
 * What it owns:
 * - one MessageChannel per handle ({@link ProducerLinks.handle}); the owner keeps one end and listens to
 *   it; the producer that opens the handle takes the other (lib/producer/owner_link.ts);
 * - the map from a producer's slot (protocol/producers.ts) to its link, made when its `hello` arrives;
 * - the acts a producer asks of the owner: a message to a worker, a SharedArrayBuffer shared with every
 *   worker, a forced kill;
 * - what reaches the owner's thread for a producer by message: a SharedArrayBuffer a worker passed (sent
 *   on to every producer), a result payload that found no free blocks (sent on to the producer whose
 *   task it is, by the record's origin word; kept until that producer's `hello` if it came first);
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
import { ControlWords, type PoolLayout } from "../protocol/layout.ts";
import {
  allChannels,
  PoolStateCode,
  type ProducerChannel,
  ProducerWords,
  slotLine,
  slotOf,
  SlotState,
  wakeProducer,
} from "../protocol/producers.ts";
import type { PoolStateName } from "../lifecycle.ts";
import type { ToOwner, ToProducer } from "../producer/owner_link.ts";
import type { TaskTable } from "../record/task.ts";
import type { PoolLayoutData } from "../producer/handle.ts";

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
  /** Reports an error no caller can receive (a message of the wrong shape: two copies of filch?). */
  report(error: unknown, where: string): void;
}

/** A port as the owner uses it (a MessagePort on every runtime). */
interface OwnerEnd {
  postMessage(message: unknown, transfer?: Transferable[]): void;
  close(): void;
  onmessage: ((event: MessageEvent) => void) | null;
  unref?: () => void;
}

/** How often `close()` looks at the producers' pending counts while it waits for them (ms). */
const QUIET_POLL_MS = 5;

/**
 * The owner's producers in other threads.
 *
 * @example Usage
 * ```ts ignore
 * const links = new ProducerLinks(buffer, layout, table, acts);
 * const port = links.handle(); // for a producer, with the pool's buffer (see Pool.handle)
 * ```
 */
export class ProducerLinks {
  private readonly buffer: SharedArrayBuffer;
  private readonly layout: PoolLayout;
  private readonly table: TaskTable;
  private readonly acts: LinkActs;
  private readonly control: Int32Array;
  /** Every remote slot's channel, by slot - 1. */
  private readonly channels: ProducerChannel[];
  /** Links by slot, once the producer said hello. */
  private readonly bySlot = new Map<number, OwnerEnd>();
  /** Every end handed out and not yet closed. */
  private readonly ends = new Set<OwnerEnd>();
  /** Messages for a slot whose producer has not said hello yet. */
  private readonly early = new Map<number, { message: ToProducer; transfer: Transferable[] }[]>();

  /**
   * @param buffer The pool's buffer.
   * @param layout Its layout.
   * @param table The task records (a payload's producer is its record's origin).
   * @param acts What the owner does for a producer.
   */
  constructor(buffer: SharedArrayBuffer, layout: PoolLayout, table: TaskTable, acts: LinkActs) {
    this.buffer = buffer;
    this.layout = layout;
    this.table = table;
    this.acts = acts;
    this.control = new Int32Array(buffer, layout.control, 3 * 16);
    this.channels = allChannels(buffer, layout).slice(1);
  }

  /**
   * A new link: the end a producer opens (the owner listens to the other).
   *
   * @returns The producer's end of the channel (transfer it with the handle).
   * @throws {TypeError} If this runtime has no MessageChannel.
   */
  open(): MessagePort {
    if (typeof MessageChannel !== "function") {
      throw new TypeError("Cannot make a pool handle as this runtime has no MessageChannel");
    }
    const channel = new MessageChannel();
    const end = channel.port1 as unknown as OwnerEnd;
    this.ends.add(end);
    end.onmessage = (event) => this.received(end, event.data as ToOwner);
    // An idle link does not keep the process alive (the pool does not either: runtime/thread.ts).
    end.unref?.();
    return channel.port2;
  }

  /** The layout as plain data, for a handle. */
  layoutData(): PoolLayoutData {
    return { ...this.layout, shape: { ...this.layout.shape } };
  }

  private received(end: OwnerEnd, message: ToOwner): void {
    try {
      switch (message?.type) {
        case "hello": {
          this.bySlot.set(message.slot, end);
          for (const [id, buffer] of this.acts.buffers()) end.postMessage({ type: "buffer", id, buffer });
          for (const { message: early, transfer } of this.early.get(message.slot) ?? []) {
            end.postMessage(early, transfer);
          }
          this.early.delete(message.slot);
          return;
        }
        case "post":
          this.acts.post(message.worker, message.message);
          return;
        case "share":
          this.acts.share(message.id, message.buffer);
          for (const [slot, other] of this.bySlot) {
            if (other !== end) this.sendTo(slot, { type: "buffer", id: message.id, buffer: message.buffer }, []);
          }
          return;
        case "kill":
          this.acts.kill(message.worker, message.handle, new Error(message.reason));
          return;
        case "closed":
          this.bySlot.delete(message.slot);
          this.ends.delete(end);
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

  /** Sends `message` to the producer of `slot` (kept until its hello, if it has not said it yet). */
  private sendTo(slot: number, message: ToProducer, transfer: Transferable[]): void {
    const end = this.bySlot.get(slot);
    if (end !== undefined) {
      end.postMessage(message, transfer);
      return;
    }
    const waiting = this.early.get(slot) ?? [];
    waiting.push({ message, transfer });
    this.early.set(slot, waiting);
  }

  /**
   * A SharedArrayBuffer a worker passed by reference: every producer may find it named in a result.
   *
   * @param id Its id.
   * @param buffer The buffer.
   */
  bufferArrived(id: number, buffer: SharedArrayBuffer): void {
    for (const slot of this.bySlot.keys()) this.sendTo(slot, { type: "buffer", id, buffer }, []);
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
    this.sendTo(slot, { type: "payload", handle, bytes, moved }, [bytes.buffer as ArrayBuffer, ...(moved ?? [])]);
    return true;
  }

  /** Tasks pending in every producer in another thread (their slots' counts). */
  pending(): number {
    let sum = 0;
    for (let slot = 1; slot <= this.channels.length; slot++) {
      const line = slotLine(this.buffer, this.layout, slot);
      if (mem.load(line, ProducerWords.state) === SlotState.OPEN) sum += mem.load(line, ProducerWords.pending);
    }
    return sum;
  }

  /** Resolves once no producer in another thread has a task pending (they submit no more: the pool closes). */
  async quiet(): Promise<void> {
    while (this.pending() > 0) await new Promise((resolve) => setTimeout(resolve, QUIET_POLL_MS));
  }

  /**
   * The owner moved the pool to `state`: written where producers read it; at terminate, every producer
   * that waits is woken (it reads the state and rejects what it waits for).
   *
   * @param state The new state.
   */
  stateChanged(state: PoolStateName): void {
    mem.store(this.control, ControlWords.poolState, PoolStateCode[state]);
    if (state === "terminated") { for (const channel of this.channels) wakeProducer(channel); }
  }

  /** The pool stopped: every link is closed (a producer's later acts have nobody to act on them). */
  closeAll(): void {
    for (const end of this.ends) end.close();
    this.ends.clear();
    this.bySlot.clear();
    this.early.clear();
  }
}
