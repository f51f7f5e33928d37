/**
 * A worker's mail: what reaches it by message rather than through the queues. Broadcast parts (see
 * owner/broadcast.ts), tasks posted to this worker because their arguments move buffers (DIRECTED, see
 * producer/submission.ts), and SharedArrayBuffers passed by reference that arrive after a task naming
 * them.
 *
 * What it owns: the parts delivered and not yet run, the directed tasks (in order) and the buffers each
 * one's arguments moved (until it starts), the waiters for buffers still on their way, and this worker's
 * `mail` word: the main thread adds one per part or directed task it posts, this thread subtracts one per
 * message taken up; non-zero means a message waits in this thread's event loop, which the loop must run
 * before it searches or sleeps (see `WorkerLoop.loop` and `Search.idle`).
 *
 * Threads: made and used by its worker thread only: `broadcast`, `directed` and `addBuffer` from its
 * message handler, the rest from the loop.
 *
 * @module
 */

import { mem } from "../protocol/atomics.ts";
import type { BufferRegistry } from "../codec/buffers.ts";
import { decode, Encoder } from "../codec/codec.ts";
import { encodeOutcome } from "../codec/outcome.ts";
import type { WorkerGuard } from "../protocol/kill_guard.ts";
import { StatusWords } from "../protocol/layout.ts";
import type { PoolMemory } from "../protocol/memory.ts";
import { Outcome, type TaskTable } from "../record/task.ts";
import type { TaskFunctions } from "./functions.ts";
import { adopt, thenOf } from "./thenable.ts";

/** What a worker's mail is built from. */
export interface MailParts {
  /** The pool's memory: the workers' status lines (this worker's `mail` word). */
  readonly memory: Pick<PoolMemory, "status">;
  /** This worker's index. */
  readonly index: number;
  /** The task records (a directed task's record may have been freed meanwhile). */
  readonly table: TaskTable;
  /** The task functions. */
  readonly functions: TaskFunctions;
  /** SharedArrayBuffers passed by reference. */
  readonly buffers: BufferRegistry;
  /** Sends a message to the main thread. */
  readonly post: (message: unknown, transfer?: ArrayBuffer[]) => void;
  /** This worker's kill guard. */
  readonly guard: WorkerGuard;
}

/** A worker's broadcast parts, directed tasks and buffers on their way. */
export class Mail {
  private readonly status: Int32Array;
  /** Where this worker's `mail` word is (broadcast parts posted and not yet taken up: see broadcast.ts). */
  private readonly mailAt: number;
  private readonly table: TaskTable;
  private readonly functions: TaskFunctions;
  private readonly buffers: BufferRegistry;
  private readonly bufferWaiters = new Map<number, () => void>();
  private readonly post: (message: unknown, transfer?: ArrayBuffer[]) => void;
  private readonly guard: WorkerGuard;
  /** Broadcast parts delivered and not yet run (the loop runs them, as it runs tasks). */
  private readonly parts: { id: number; taskId: number; bytes: Uint8Array }[] = [];
  /** Tasks posted to this worker because their arguments move buffers (DIRECTED), in order: run first. */
  private readonly directedIn: number[] = [];
  /** The buffers each of those tasks' arguments moved, by handle, until it starts. */
  private readonly movedIn = new Map<number, ArrayBuffer[]>();
  private readonly encoder: Encoder;
  /** A broadcast part runs now, synchronously: `currentTask()` answers for it. */
  broadcasting = false;
  /** Async broadcast parts not yet settled (the loop then yields to its event loop, see `WorkerLoop`). */
  pending = 0;

  /**
   * This thread. Opens the mail of worker `index`.
   *
   * @param parts What the mail works with (see {@link MailParts}).
   */
  constructor(parts: MailParts) {
    this.status = parts.memory.status;
    this.mailAt = parts.index * StatusWords.count + StatusWords.mail;
    this.table = parts.table;
    this.functions = parts.functions;
    this.buffers = parts.buffers;
    this.post = parts.post;
    this.guard = parts.guard;
    this.encoder = new Encoder({ shareBuffer: parts.buffers.share });
  }

  /** This thread. Whether a message waits in this thread's event loop (the `mail` word is not zero). */
  waiting(): boolean {
    return mem.load(this.status, this.mailAt) !== 0;
  }

  /**
   * This thread. Records a SharedArrayBuffer passed by reference (sent by the main thread).
   *
   * @param id Its id.
   * @param buffer The buffer.
   */
  addBuffer(id: number, buffer: SharedArrayBuffer): void {
    this.buffers.add(id, buffer);
    this.bufferWaiters.get(id)?.();
    this.bufferWaiters.delete(id);
  }

  /** This thread. Resolves once the buffer with id `id` has arrived (see `addBuffer`). */
  waitForBuffer(id: number): Promise<void> {
    return new Promise((resolve) => this.bufferWaiters.set(id, resolve));
  }

  /**
   * This thread, from its message handler. Takes a broadcast part (see broadcast.ts): the loop runs it
   * next, from its own macrotask as it runs tasks (a part that ends the thread, or runs out of memory,
   * then dies as a task does, and is noticed as quickly).
   *
   * @param id The part's id.
   * @param taskId The task.
   * @param bytes Its encoded arguments.
   */
  broadcast(id: number, taskId: number, bytes: Uint8Array): void {
    this.guard.enter();
    this.parts.push({ id, taskId, bytes });
    mem.sub(this.status, this.mailAt, 1);
    this.guard.leave();
  }

  /**
   * This thread, from its message handler. Takes a task posted to this worker with the buffers its
   * arguments moved (see submission.ts): the loop runs it next.
   *
   * @param handle The task's handle.
   * @param moved The moved buffers its arguments refer to.
   */
  directed(handle: number, moved: ArrayBuffer[]): void {
    this.guard.enter();
    this.directedIn.push(handle);
    this.movedIn.set(handle, moved);
    mem.sub(this.status, this.mailAt, 1);
    this.guard.leave();
  }

  /** This thread. Whether a directed task waits to be run. */
  hasDirected(): boolean {
    return this.directedIn.length !== 0;
  }

  /**
   * This thread. The next posted task whose record is still its own, or -1.
   *
   * The generation check is a guard no scenario of the tests reaches (issue 32): a posted handle's record
   * is freed before we take it only by the main thread's repair of a submission cut short before it was
   * committed (admission.ts `repair`, stage 0), and the post is the submission's last call before its
   * commit (submission.ts `place`: `direct`, then `stage = 1` with no call between), so that takes a throw
   * out of the runtime's postMessage after it queued the message. (Recovery frees the directed tasks of a
   * dead worker, whose thread takes no more messages; a cancelled one is freed by us when we take it.) A
   * stale handle let through here would reach `Runner.execute`, whose claim (a compare-exchange of the
   * state word) does not compare generations, and would run the task that holds the record now.
   */
  takeDirected(): number {
    while (this.directedIn.length !== 0) {
      const handle = this.directedIn.shift()!;
      if (this.table.isCurrent(handle)) return handle;
      this.movedIn.delete(handle);
    }
    return -1;
  }

  /** This thread. The buffers task `handle`'s arguments moved, if it was posted with any, else undefined. */
  moved(handle: number): ArrayBuffer[] | undefined {
    return this.movedIn.size === 0 ? undefined : this.movedIn.get(handle);
  }

  /** This thread. Forgets the moved buffers of task `handle` (it started, or was freed unrun). */
  forgetMoved(handle: number): void {
    if (this.movedIn.size !== 0) this.movedIn.delete(handle);
  }

  /** This thread. Whether broadcast parts wait to be run. */
  hasParts(): boolean {
    return this.parts.length !== 0;
  }

  /** This thread. Runs the broadcast parts taken so far, in order. */
  runParts(): void {
    for (const part of this.parts.splice(0)) this.runPart(part.id, part.taskId, part.bytes);
  }

  /** Runs one broadcast part and posts its encoded outcome; an async task's when it settles. */
  private runPart(id: number, taskId: number, bytes: Uint8Array): void {
    const report = (failed: boolean, value: unknown) => {
      const encoder = this.encoder;
      const outcome = encodeOutcome(encoder, value, failed);
      this.post({ type: "broadcast-result", id, bytes: encoder.snapshot(), failed: outcome === Outcome.ERROR });
    };
    let result: unknown;
    let then: unknown;
    this.broadcasting = true;
    try {
      const args = decode(bytes, 0, bytes.length, this.buffers.resolve) as unknown[];
      result = this.functions.all[taskId](...args);
      then = thenOf(result);
    } catch (error) {
      report(true, error);
      return;
    } finally {
      this.broadcasting = false;
    }
    if (typeof then !== "function") {
      report(false, result);
      return;
    }
    // Pending like an async task's: the loop then sleeps with waitAsync, so that this promise can settle.
    this.pending++;
    adopt(result, then).then(
      (value) => {
        this.pending--;
        report(false, value);
      },
      (error) => {
        this.pending--;
        report(true, error);
      },
    );
  }
}
