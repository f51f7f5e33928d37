/**
 * Where the owner's parts say what happened to the pool, for its events (lib/events.ts): each method notes
 * one event on the pool's {@link EventQueue}, which dispatches it later, in a task of its own, once the
 * step that caused it is whole. No user code runs here.
 *
 * What it owns: the state the queue events need (whether the pool's queue is full, the poll that notices
 * room made by producers in other threads), and the rule of which events are noted always (the lifecycle's
 * and the workers': rare) and which only once a listener of their type was added (`drain`, `queuefull`,
 * `queueroom`: one per task at worst).
 *
 * Invariants: `queuefull` and `queueroom` alternate, `queuefull` first; `drain` is noted when the owner's
 * own pending count reaches 0 (a settle, so some were pending); `close` and `terminate` once each at most.
 *
 * Threads: the owner's.
 *
 * @module
 */

import { EventQueue, PoolEvents } from "../events.ts";
import type { LedgerWatch, TaskLedger } from "../producer/ledger.ts";
import type { Room } from "../producer/room.ts";
import { backgroundTimeout } from "../runtime/timer.ts";
import { toError } from "../errors.ts";

/** How often, while the pool's queue is full, the owner looks for room that other threads' settles made (ms). */
const ROOM_POLL_MS = 5;

/**
 * The owner's side of the pool's events.
 *
 * @example Usage
 * ```ts ignore
 * const events = new OwnerEvents(ledger, room);
 * ledger.watch = events;
 * events.online(0, false);
 * ```
 */
export class OwnerEvents implements LedgerWatch {
  /** The queue the events go through; its target is `pool.events`. */
  readonly queue: EventQueue;
  private readonly ledger: TaskLedger;
  private readonly room: Room;
  /** Whether a `queuefull` was noted and no `queueroom` since. */
  private full = false;
  /** Stops the poll for room while the queue is full. */
  private stopPoll: (() => void) | undefined;

  /**
   * @param ledger The owner's producer's ledger (its counts: `drain`).
   * @param room The owner's producer's room (the pool's pending count and bound: the queue events).
   */
  constructor(ledger: TaskLedger, room: Room) {
    this.queue = new EventQueue(new PoolEvents());
    // Until the pool is created (Owner.start): its first events wait for the listeners added after it.
    this.queue.hold();
    this.ledger = ledger;
    this.room = room;
  }

  /** A task was submitted through the pool: did the pool's queue reach its bound? */
  opened(): void {
    if (this.full || this.room.maxPending === Infinity) return;
    if (!this.queue.heard("queuefull") && !this.queue.heard("queueroom")) return;
    const pending = this.room.pendingInPool();
    if (pending < this.room.maxPending) return;
    this.full = true;
    this.queue.emit("queuefull", { pending, maxPending: this.room.maxPending });
    this.pollForRoom();
  }

  /** A task of the pool's own settled: drained? room again? */
  settled(): void {
    if (this.ledger.pending === 0 && this.queue.heard("drain")) {
      this.queue.emit("drain", { completed: this.ledger.completed });
    }
    if (this.full) this.checkRoom();
  }

  /** Worker `worker` loaded the module and is ready (a replacement if `replacement`). */
  online(worker: number, replacement: boolean): void {
    this.queue.emit("workeronline", { worker, replacement });
    if (replacement) this.queue.emit("workerreplaced", { worker });
  }

  /** Worker `worker` was recycled (recycle.ts): its replacement is ready. */
  recycled(worker: number, reason: "tasks" | "heap"): void {
    this.queue.emit("workeronline", { worker, replacement: true });
    this.queue.emit("workerrecycled", { worker, reason });
  }

  /** Worker `worker` died (after its repair). */
  died(worker: number, cause: unknown, forced: boolean): void {
    this.queue.emit("workerdied", { worker, error: toError(cause), forced });
  }

  /** `close()` finished. */
  closed(): void {
    this.stop();
    this.queue.emit("close", {});
  }

  /** The pool was terminated: `rejected` tasks of this thread rejected, for `why`. */
  terminated(why: string, rejected: number): void {
    this.stop();
    this.queue.emit("terminate", { why, rejected });
  }

  /** Notes `queueroom` if the pool's pending tasks are under the bound again. */
  private checkRoom(): void {
    const pending = this.room.pendingInPool();
    if (pending >= this.room.maxPending) return;
    this.full = false;
    this.stopPoll?.();
    this.stopPoll = undefined;
    this.queue.emit("queueroom", { pending, maxPending: this.room.maxPending });
  }

  /** While full: looks for room every few ms (producers in other threads settle where the owner cannot see). */
  private pollForRoom(): void {
    this.stopPoll = backgroundTimeout(() => {
      this.stopPoll = undefined;
      if (!this.full) return;
      this.checkRoom();
      if (this.full) this.pollForRoom();
    }, ROOM_POLL_MS);
  }

  /** The pool stopped: no more polling. */
  private stop(): void {
    this.stopPoll?.();
    this.stopPoll = undefined;
    this.full = false;
  }
}
