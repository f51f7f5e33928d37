/**
 * Broadcast: a task run once on every worker (warm a cache, reload configuration), resolving with the
 * per-worker results.
 *
 * What it owns: the parts in flight (one per worker, each a ledger entry of its own) and the one step
 * that settles a part. A part travels by message, not through the task records: the main thread adds one
 * to the worker's `mail` word (its status line) and posts the part; the worker's loop yields to its event
 * loop while `mail` is not 0 (and does not sleep: its last search before sleeping looks at `mail` too), the
 * message handler runs the task there and posts its encoded outcome back.
 *
 * Invariants:
 * - Every part settles exactly once, through the ledger: with its outcome, or with `WorkerCrashedError` if
 *   its worker dies first (or was dead when it was sent), or with `PoolTerminatedError` on `terminate()`.
 *   A result that comes after the part settled is ignored.
 * - A worker that replaces a dead one does not run the broadcasts sent before it started (they failed
 *   with the death); its `mail` word starts at 0.
 * - No user code runs here: settling calls only the promise's native functions (see ledger.ts).
 *
 * Where it belongs: with the owner, not the producer. A broadcast is a message to every worker, and its
 * results come back as messages, which only the thread holding the Worker objects receives; a worker's
 * death, which only the owner notices, fails its part. So the owner broadcasts, and its parts are entries
 * of the owner's own producer's ledger (drain, close and terminate see them as any task); a producer in
 * another thread has no broadcast.
 *
 * Threads: the owner, the thread that started the workers (the worker's side is `WorkerLoop.broadcast`).
 *
 * @module
 */

import { mem } from "../protocol/atomics.ts";
import { decode, type ErrorClasses } from "../codec/codec.ts";
import { crashError, PoolTerminatedError, type WorkerCrashedError } from "../errors.ts";
import { StatusWords } from "../protocol/layout.ts";
import type { PoolMemory } from "../protocol/memory.ts";
import { type Entry, Settled, type TaskLedger } from "../producer/ledger.ts";

/** What a broadcast part's message carries to its worker. */
export interface BroadcastMessage {
  type: "broadcast";
  /** The part's id, which its result names. */
  id: number;
  /** The task's index in the module's sorted export names. */
  taskId: number;
  /** The encoded arguments. */
  bytes: Uint8Array;
}

/** What the broadcaster is built from. */
export interface BroadcastParts {
  /** The submitted tasks (each part is an entry). */
  readonly ledger: TaskLedger;
  /** The pool's memory: the workers' status lines (their `mail` words). */
  readonly memory: Pick<PoolMemory, "status">;
  /** Sends a message to a live worker. */
  readonly post: (worker: number, message: BroadcastMessage) => void;
  /** Whether a worker is dead and not yet replaced. */
  readonly isDead: (worker: number) => boolean;
  /** Maps a shared-buffer id to its buffer. */
  readonly resolveBuffer: (id: number) => SharedArrayBuffer;
  /** The error classes results are decoded with (the pool's `errorClasses`). */
  readonly errorClasses?: ErrorClasses;
}

/**
 * The broadcast parts in flight, and how each settles.
 *
 * @example Usage
 * ```ts ignore
 * const parts = broadcaster.send(entries, taskId, bytes); // one entry per worker
 * // ... a worker posts { type: "broadcast-result", id, bytes, failed }:
 * broadcaster.result(id, bytes, failed);
 * ```
 */
export class Broadcaster {
  private readonly parts = new Map<number, { entry: Entry; worker: number }>();
  private nextId = 0;
  private readonly ledger: TaskLedger;
  private readonly status: Int32Array;
  private readonly post: (worker: number, message: BroadcastMessage) => void;
  private readonly isDead: (worker: number) => boolean;
  private readonly resolveBuffer: (id: number) => SharedArrayBuffer;
  /** Error classes the results are decoded with (the pool's `errorClasses`). */
  private readonly errorClasses: ErrorClasses | undefined;

  /**
   * @param parts What broadcasting works with (see {@link BroadcastParts}).
   */
  constructor(parts: BroadcastParts) {
    this.ledger = parts.ledger;
    this.status = parts.memory.status;
    this.post = parts.post;
    this.isDead = parts.isDead;
    this.resolveBuffer = parts.resolveBuffer;
    this.errorClasses = parts.errorClasses;
  }

  /**
   * Sends part `w` of a broadcast to worker `w`, for each entry (the caller then wakes every worker).
   *
   * @param entries One open entry per worker, by worker index.
   * @param taskId The task.
   * @param bytes Its encoded arguments (each worker gets a copy by message).
   * @param targets An elastic pool's: the worker of each entry (its mail counted already); else entry `w`
   * goes to worker `w`.
   */
  send(entries: Entry[], taskId: number, bytes: Uint8Array, targets?: readonly number[]): void {
    for (let k = 0; k < entries.length; k++) {
      const entry = entries[k];
      const worker = targets === undefined ? k : targets[k];
      if (this.isDead(worker)) {
        // (An elastic pool's target counted its part already: taken back, as the worker's replacement
        // starts from a mail of 0.)
        if (targets !== undefined) mem.sub(this.status, worker * StatusWords.count + StatusWords.mail, 1);
        this.ledger.settle(entry, Settled.ERROR, crashed(entry, worker, "was being replaced when it was sent"));
        continue;
      }
      const id = this.nextId++;
      this.parts.set(id, { entry, worker });
      // Counted before it is posted: the worker never sees its message without the count (it would not
      // know to read its messages before sleeping). An elastic pool's targets were counted by the owner's
      // `Slots.claimMail`, which is what keeps each from retiring meanwhile.
      if (targets === undefined) mem.add(this.status, worker * StatusWords.count + StatusWords.mail, 1);
      this.post(worker, { type: "broadcast", id, taskId, bytes });
    }
  }

  /**
   * A worker posted a part's outcome.
   *
   * @param id The part.
   * @param bytes Its encoded value or error.
   * @param failed Whether it is an error.
   */
  result(id: number, bytes: Uint8Array, failed: boolean): void {
    const part = this.parts.get(id);
    if (part === undefined) return; // settled already (its worker was declared dead, or terminate)
    this.parts.delete(id);
    let value: unknown;
    let how = failed ? Settled.ERROR : Settled.VALUE;
    try {
      value = decode(bytes, 0, bytes.length, this.resolveBuffer, this.errorClasses);
    } catch (error) {
      value = error;
      how = Settled.ERROR;
    }
    this.ledger.settle(part.entry, how, value);
  }

  /**
   * Worker `index` died: its parts fail with WorkerCrashedError, and its `mail` word is reset for its
   * replacement.
   *
   * @param index The worker.
   * @param cause What killed it.
   */
  workerDied(index: number, cause: Error): void {
    for (const [id, part] of this.parts) {
      if (part.worker !== index) continue;
      this.parts.delete(id);
      this.ledger.settle(part.entry, Settled.ERROR, crashed(part.entry, index, "died before it finished", cause));
    }
    mem.store(this.status, index * StatusWords.count + StatusWords.mail, 0);
  }

  /**
   * `terminate()`: every part in flight fails with PoolTerminatedError.
   *
   * @param why What terminated the pool, for the message.
   */
  terminate(why: string): void {
    for (const part of this.parts.values()) {
      this.ledger.settle(
        part.entry,
        Settled.ERROR,
        new PoolTerminatedError(
          `Cannot finish broadcast '${part.entry.task}' on worker ${part.worker} as the pool was terminated (${why})`,
        ),
      );
    }
    this.parts.clear();
  }
}

function crashed(entry: Entry, worker: number, what: string, cause?: Error): WorkerCrashedError {
  return crashError(`Cannot finish broadcast '${entry.task}' on worker ${worker} as the worker ${what}`, worker, cause);
}
