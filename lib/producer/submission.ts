/**
 * The main thread's side of submission: encode a task's arguments, place it in a record and publish it
 * to the workers, or keep it in order in the backlog until a record frees up.
 *
 * What it owns: the main thread's encoder, the backlog (backlog.ts: the waiting tasks and their bytes),
 * and placing (take a record, write the payload, publish QUEUED, push the handle into its level's injector, wake a
 * sleeping worker: spec `SubmitPushInjector`).
 * A task whose arguments move buffers (`move()`, see move.ts) is not pushed: it is posted, with its
 * buffers, to one worker (flag DIRECTED, its `worker` word naming that worker), which runs it.
 *
 * Invariants:
 * - Submission order: nothing overtakes the backlog; an entry is placed only when every older one was.
 * - The encoder is never live across a call into user code. Encoding runs user code (getters in the
 *   arguments) and a getter may submit again: a nested submission gets an encoder of its own
 *   ({@link Submitter.encode}), and the outer one's bytes are consumed (placed or copied into the
 *   backlog) before anything else can run — settling never calls user code synchronously (see ledger.ts).
 *
 * Threads: its producer's thread (for the pool's own producer, the thread that created the pool).
 *
 * @module
 */

import { Encoder } from "../codec/codec.ts";
import { Backlog } from "./backlog.ts";
import { Level, type Levels } from "../protocol/levels.ts";
import type { Entry, TaskLedger } from "./ledger.ts";
import type { TaskStamps } from "../metrics.ts";
import type { Sleep } from "../protocol/sleep.ts";
import { backgroundTimeout } from "../runtime/timer.ts";
import { SLAB_FROM } from "../record/slabs.ts";
import { NO_RECORD, Origin, TaskFlags, TaskState, type TaskTable } from "../record/task.ts";

/**
 * How long the pool must stay idle before a backlog buffer grown past 1 MiB is given back (ms): back to
 * back bursts reuse it (see backlog.ts), and an idle pool holds no more than 1 MiB of it for long.
 */
const BACKLOG_TRIM_MS = 1_000;

/** What placing a task asks of the producer that owns the submitter. None of them runs user code. */
export interface Placement {
  /** Called after a task with a control (see cancellation.ts) is placed in its record. */
  placed(entry: Entry): void;
  /** The worker a task that moves buffers goes to (a live one, in turn). */
  pickWorker(): number;
  /**
   * Posts a published DIRECTED task's handle and moved buffers to `worker` (its `mail` word counted first);
   * the post is its last step, so a throw in it (a stack overflow) means nothing was sent.
   */
  direct(worker: number, handle: number, moved: ArrayBuffer[]): void;
}

/** What a submitter is built from. */
export interface SubmitterParts {
  /** The task records. */
  readonly table: TaskTable;
  /** The queues workers take submitted tasks from, one per priority level. */
  readonly levels: Levels;
  /** The sleep protocol (to wake a worker for new work). */
  readonly sleep: Sleep;
  /** The submitted tasks (entries are placed by record index). */
  readonly ledger: TaskLedger;
  /** Registers a SharedArrayBuffer passed by reference; returns its id. */
  readonly shareBuffer: (buffer: SharedArrayBuffer) => number;
  /** What placing a task asks of its producer (see {@link Placement}). */
  readonly placement: Placement;
  /** With metrics: where a placed task's submission time goes. */
  readonly stamps?: TaskStamps;
  /** Where a task placed with a progress handler is watched (lib/producer/progress_reader.ts). */
  readonly progress?: { watch(index: number): void };
  /**
   * Its producer: the record origin word of its slot, what its tasks may do with moved buffers, the most
   * records it may hold now (see {@link Submitter.place}), and in another thread the note of the handle
   * it is placing. Default: the owner's own producer (origin MAIN, moves transferred, no share).
   */
  readonly producer?: {
    readonly origin: number;
    readonly moves: Encoder["moves"];
    readonly share: () => number;
    readonly placing?: { words: Int32Array; at: number };
  };
}

/**
 * Places submitted tasks in shared memory, in order.
 *
 * @example Usage
 * ```ts ignore
 * const encoder = submitter.encode(args); // may run getters, may throw a TypeError
 * const entry = ledger.open("add", taskId, resolve, reject);
 * submitter.enqueue(entry, encoder);
 * ```
 */
export class Submitter {
  private readonly encoder: Encoder;
  private encoding = false;
  private readonly backlog = new Backlog();

  private readonly table: TaskTable;
  private readonly levels: Levels;
  private readonly sleep: Sleep;
  private readonly ledger: TaskLedger;
  private readonly shareBuffer: (buffer: SharedArrayBuffer) => number;
  private readonly placement: Placement;
  /** With metrics: where a placed task's submission time goes (its worker records its wait from it). */
  private readonly stamps: TaskStamps | undefined;
  /** Its producer's slot as a record's origin word (protocol/producers.ts `originOf`). */
  private readonly origin: number;
  /** What a task's arguments may do with buffers marked by `move()` (refused by a producer in another thread). */
  private readonly taskMoves: Encoder["moves"];
  /** The most records this producer may hold now (its fair share while other producers wait for one). */
  private readonly share: () => number;
  /**
   * A producer in another thread: the note of the handle it is placing, from before the QUEUED store to
   * after the injector push (protocol/producers.ts `ProducerWords.placing`), for the owner if it dies there.
   */
  private readonly placing: { words: Int32Array; at: number } | undefined;
  /** See {@link SubmitterParts.progress}. */
  private readonly progress: { watch(index: number): void } | undefined;
  /**
   * @param parts What placing tasks works with (see {@link SubmitterParts}).
   */
  constructor(parts: SubmitterParts) {
    const producer = parts.producer ?? { origin: Origin.MAIN, moves: "transfer", share: () => Infinity };
    this.origin = producer.origin;
    this.taskMoves = producer.moves;
    this.share = producer.share;
    this.placing = producer.placing;
    this.table = parts.table;
    this.levels = parts.levels;
    this.sleep = parts.sleep;
    this.ledger = parts.ledger;
    const shareBuffer = parts.shareBuffer;
    this.shareBuffer = shareBuffer;
    this.placement = parts.placement;
    this.stamps = parts.stamps;
    this.progress = parts.progress;

    // Large arguments are copied once, from the caller's buffer into their slab (see EncoderOptions.deferFrom).
    this.encoder = new Encoder({ shareBuffer, deferFrom: SLAB_FROM });
  }

  /**
   * Encodes a task's arguments. Runs user code (getters); a nested call, from such a getter, uses an
   * encoder of its own.
   *
   * @param args The arguments.
   * @param moves What to do with buffers marked by `move()` (see `EncoderOptions.moves`): `"transfer"` for
   * a task, a refusal for a broadcast.
   * @returns The encoder holding them, valid until the caller's {@link Submitter.enqueue}.
   * @throws {TypeError} If an argument cannot cross threads (the message names its path).
   */
  encode(args: unknown[], moves: Encoder["moves"] = this.taskMoves): Encoder {
    const encoder = this.encoding ? new Encoder({ shareBuffer: this.shareBuffer, deferFrom: SLAB_FROM }) : this.encoder;
    encoder.moves = moves;
    const outer = !this.encoding;
    this.encoding = true;
    try {
      // Primitives only (the common task): the same bytes without the path and cycle bookkeeping.
      encoder.encodeArgs(args);
    } finally {
      if (outer) this.encoding = false;
    }
    return encoder;
  }

  /**
   * Places `entry` now, or appends it to the backlog. Runs no user code.
   *
   * @param entry The ledger's entry for the task.
   * @param encoder Its encoded arguments (from {@link Submitter.encode}).
   */
  enqueue(entry: Entry, encoder: Encoder): void {
    this.stage = 0;
    if (this.backlog.length === 0 && this.place(entry, encoder)) return;
    // Out of records or blocks: it waits in the backlog, which the completion reader feeds as records free
    // (settling completions here, at the caller's depth, could be cut short by a stack overflow).
    this.backlog.push(entry, encoder); // committed by its last step, an index store
    this.stage = 2;
  }

  /**
   * How far the last `enqueue` got (the pool reads it after a throw cut it short): 0, not committed; 1,
   * published to the injector but the workers not yet told; 2, done (published and told, or backlogged).
   */
  stage = 2;

  /** Places backlog entries, oldest first, while records are free. */
  feed(): void {
    const backlog = this.backlog;
    for (let entry = backlog.first(); entry !== undefined; entry = backlog.first()) {
      if (!entry.settled && !this.place(entry, backlog)) break;
      backlog.shift();
    }
    if (this.ledger.pending === 0) {
      // Nothing pending: a scratch buffer grown by large arguments is not kept (see Encoder.trim).
      this.encoder.trim();
      // A grown backlog buffer is kept for the next burst, and given back if none comes soon.
      if (backlog.trimmable && this.cancelTrim === undefined) {
        this.cancelTrim = backgroundTimeout(() => this.trimIfIdle(), BACKLOG_TRIM_MS);
      }
    }
  }

  /** Cancels the pending trim of the backlog's buffer, if any. */
  private cancelTrim: (() => void) | undefined = undefined;

  /** The backlog trim's timer: gives the buffer back if the pool is idle now, else waits for its next idle. */
  private trimIfIdle(): void {
    this.cancelTrim = undefined;
    if (this.ledger.pending === 0) this.backlog.trim();
  }

  /** The pool stopped: gives back the backlog's buffer and cancels its trim timer. */
  dispose(): void {
    this.cancelTrim?.();
    this.cancelTrim = undefined;
    this.backlog.trim();
  }

  /** The entries waiting for a record, in order. */
  waiting(): Iterable<Entry> {
    return this.backlog.waiting();
  }

  /** How many entries wait for a record. */
  get backlogLength(): number {
    return this.backlog.length;
  }

  /**
   * Whether the backlog waits for a record it may take: it is not empty, and this producer holds fewer
   * than its share. (At its share, it waits for its own completions, which free records it then takes:
   * counted as starved there, a free record it may not take would wake it again and again.)
   */
  get starved(): boolean {
    return this.backlog.length > 0 && this.ledger.pending - this.backlog.length < this.share();
  }

  /** Forgets the backlog (its entries were settled by terminate). */
  clear(): void {
    this.backlog.clear();
  }

  /** Takes a record, writes the payload (the encoder's, or the entry's in the backlog), publishes the task. */
  private place(entry: Entry, payload: Encoder | Backlog): boolean {
    const table = this.table;
    // Records are shared by every producer: while another waits for one, this one keeps to its share (the
    // tasks it holds in records: pending, less those in the backlog, less this one if it is not there).
    const held = this.ledger.pending - this.backlog.length - (payload instanceof Backlog ? 0 : 1);
    if (held >= this.share()) return false;
    const handle = table.allocate(); // spec: SubmitTakeRecord
    if (handle === NO_RECORD) return false;
    const index = table.indexOf(handle);
    const written = payload instanceof Backlog
      ? table.writeRange(index, payload.bytes, payload.offsetOf(entry), entry.bytesLength)
      : table.writeEncoded(index, payload);
    if (!written) {
      table.release(index);
      return false;
    }
    table.fields.setTask(index, entry.taskId);
    table.fields.setOrigin(index, this.origin);
    table.fields.setId(index, entry.seq & 0x7fffffff);
    // The queue it goes back into if a worker hands it back or dies holding it (normal from allocation).
    if (entry.level !== Level.normal) table.fields.setLevel(index, entry.level);
    const control = entry.control;
    const moved = entry.moved;
    const target = moved === undefined ? -1 : this.placement.pickWorker();
    if (control !== undefined || moved !== undefined || entry.onProgress !== undefined) {
      const flags = (control?.watchStart ? TaskFlags.WATCH_START : 0) | (control?.force ? TaskFlags.FORCE : 0) |
        (moved !== undefined ? TaskFlags.DIRECTED : 0);
      // With a handler: its cell emptied and watched before the QUEUED store publishes the flag below.
      if (entry.onProgress !== undefined) this.progress?.watch(index);
      const all = flags | (entry.onProgress !== undefined ? TaskFlags.PROGRESS : 0);
      if (all !== 0) table.fields.setFlags(index, all);
    }
    // Read by recovery if that worker dies first (published by the QUEUED store below).
    if (target >= 0) table.fields.setWorker(index, target);
    if (this.stamps !== undefined) this.stamps.submitted(index, entry.submittedAt);
    entry.handle = handle;
    this.ledger.placed[index] = entry;
    const placing = this.placing;
    // Noted before it is published: a thread that dies between the QUEUED store and the push would leave a
    // task that no queue holds (the owner pushes it: owner/producer_deaths.ts). A plain note, as a worker's.
    if (placing !== undefined) placing.words[placing.at] = handle;
    // Publishes the record (payload, task, id, flags, submission time) to the worker that pops the handle.
    table.fields.storeState(index, TaskState.QUEUED); // spec: SubmitStoreQueued
    if (moved !== undefined) {
      // Posted, not pushed: the buffers are in this message alone (detached here once it is sent).
      entry.moved = undefined;
      this.placement.direct(target, handle, moved);
      this.stage = 1;
      // The worker reads its messages before it sleeps again (as for a broadcast part).
      this.sleep.wakeAll();
      this.stage = 2;
      if (control !== undefined) this.placement.placed(entry);
      return true;
    }
    this.levels.pushPatiently(handle, entry.level); // spec: SubmitPushInjector
    // (Its level's queue notes say it is in, from its publish on: the owner reads both.)
    if (placing !== undefined) placing.words[placing.at] = -1;
    this.stage = 1;
    this.sleep.newWork();
    this.stage = 2;
    if (control !== undefined) this.placement.placed(entry);
    return true;
  }
}
