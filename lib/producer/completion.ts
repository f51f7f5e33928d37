/**
 * The main thread's side of task completion: wait for workers to queue finished tasks, read their
 * results, settle them, free their records.
 *
 * What it owns: the completion-wait protocol with the workers (the `mainWaiting` control word), the
 * completions that cannot be settled yet (their result names a SharedArrayBuffer whose message has not
 * arrived, or travels by message itself), and the result payloads that came by message.
 *
 * The protocol: workers push finished handles into the completion queue and notify the main thread only
 * if it said it waits: the main thread stores `mainWaiting = 1`, re-checks the queue, and waits with
 * `Atomics.waitAsync`; a worker that sees the word exchanges it back to 0 and notifies. One wake settles
 * a whole batch (spec: `SleepWake.tla`, the Main* and Finish* actions). While the producer's backlog holds
 * tasks, or many of its tasks are in flight, the reader lingers instead of waiting: it reads again after
 * 1 to 16 ms (`LINGER_MS`, doubling while the workers hold work for many lingers: `LINGER_MAX_MS`) with its
 * word left at 0, so no worker notifies it; to the protocol that is a main thread slow
 * to arm, which the specs allow (the queue keeps every completion until it is read), and the timer always
 * fires, so no read is lost.
 *
 * Invariants:
 * - A record is freed once per generation ({@link TaskTable.releaseHandle}): a completion whose task was
 *   settled already (terminated, or failed by a worker's death) only frees its record, and a stale report
 *   (a handle whose record has been reused) frees nothing.
 * - Reading completions never runs user code (the ledger defers `onError`), so {@link CompletionReader.drain}
 *   cannot be re-entered by the code it calls; a guard makes a nested call a no-op all the same.
 *
 * Threads: its producer's thread (for the pool's own producer, the thread that created the pool).
 *
 * @module
 */

import { mem } from "../protocol/atomics.ts";
import { type BufferRegistry, MissingBuffer } from "../codec/buffers.ts";
import { decode, type ErrorClasses } from "../codec/codec.ts";
import { type Injector, QUEUE_EMPTY } from "../protocol/injector.ts";
import { ControlWords } from "../protocol/layout.ts";
import type { PoolMemory } from "../protocol/memory.ts";
import { Settled, type TaskLedger } from "./ledger.ts";
import { originOf, type ProducerChannel, wakeProducer, wakeRecordWaiters } from "../protocol/producers.ts";
import { Outcome, PAYLOAD_BY_MESSAGE, TaskState, type TaskTable } from "../record/task.ts";
import { ProgressReader } from "./progress_reader.ts";

/** What the reader calls on its producer: at the start of each drain, and after it freed records. */
export interface CompletionHooks {
  /** At the start of each drain, from the event loop at a shallow depth (a submission cut short is completed there). */
  beforeDrain(): void;
  /** After records were freed (backlog entries are placed). */
  freed(): void;
  /** Whether tasks wait in the producer's backlog for a record (another producer's freed record may serve them). */
  starved(): boolean;
  /** Whether the producer waits for room in the pool's queue (room.ts): then it waits with nothing pending. */
  waitsForRoom(): boolean;
  /** Whether the producer waits for room and there is room now (read after its waiting word's store). */
  roomFree(): boolean;
  /** Whether the pool was terminated (its owner wakes every producer when it is: see Producer). */
  terminated(): boolean;
  /**
   * How many tasks wait in the producer's backlog. While any do, every record it may take is in flight, so
   * the workers have work queued, and the reader may read completions in batches (it lingers: see
   * `LINGER_MS`).
   */
  backlogLength(): number;
}

/**
 * While its backlog holds tasks, the reader reads completions once every this many ms (a linger) instead
 * of waiting for the next one. A wake costs the main thread 10–40 µs of CPU (the runtime's waitAsync, its
 * event loop, the kernel's switch; bench/experiments/main_cpu.ts) and the notifying worker about as much, once for
 * every completion when tasks take longer than that. With a backlog the tasks are waiting anyway, and the
 * records in flight keep the workers busy meanwhile, so one read a millisecond settles the same tasks for
 * a fraction of the CPU. A linger that found more than half of the records it left in flight completed
 * (tiny tasks, few records, many workers: the workers may have run dry) is followed by a wait for the
 * next completion instead, as without a backlog.
 *
 * Not in a browser: there a page's timers in a background tab run once a second or less often, so a
 * linger could hold the pool's results for that long. (Deno clamps a chain of timers to about 2–4 ms.)
 */
const LINGER_MS = 1;
/**
 * With no backlog, the reader lingers too while at least this many of its tasks are in flight. Nothing is
 * left to feed the workers then, so a linger costs only the time a result waits to be settled (at most
 * the linger, and the timer's slack), against tasks that wait in the workers' queues for longer: with 64 in
 * flight on 16 workers, each has four queued. Without it, the end of a burst (every record in flight, the
 * backlog empty: 4,096 tasks by default) cost a wake per completion, the main thread's 10–40 µs each and
 * the notifying worker's too: most of the main thread's CPU in the demo's shape (2.7 µs a task on Node,
 * bench/experiments/main_cpu.ts, 2026-11-27). A linger that ran dry (see above) ends it, as with a backlog.
 */
const LINGER_IN_FLIGHT = 64;
/**
 * The longest linger, in ms. A linger doubles (from `LINGER_MS`) while each read finds under an eighth of
 * the records it left in flight completed: the workers then hold work for eight lingers or more, so a
 * result waits at most about an eighth of what the tasks queued with it wait, and each linger saves a
 * timer's turn of the event loop, which cost the main thread 50–130 µs of CPU on this project's machine
 * (313 `setTimeout(0)` turns: 18 ms on Node, 41 on Deno, 15 on Bun, 2026-11-27). It halves when a read finds
 * over a quarter completed, and starts again at `LINGER_MS` after a wait for a wake. In the demo's shape
 * (20,000 tasks, 4,096 in flight) the lingers fell from 364 a burst to 51 (at most 8 ms then; 35–41 at 16),
 * and the main thread's CPU a task by 8% (Node), 18% (Deno) and 27% (Bun) (docs/benchmarks.md). 16 ms,
 * not 8: a turn's price grows more slowly than the sleep before it (`bench/experiments/turn_cost.ts` with two threads
 * spinning, Node: 75, 88 and 117 µs after 8, 16 and 32 ms), so half as many turns cost less. Paired runs
 * of the demo's shape (25 rounds, 2026-11-28): the main thread's CPU a task 0.832 (95% interval
 * 0.735–0.943) on Deno, 0.920 (0.798–1.057) on Node, 1.033 (0.878–1.198) on Bun. The eighth above still
 * bounds a result's wait.
 */
const LINGER_MAX_MS = 16;
/** Whether the reader lingers at all: where a `process` exists (Node, Deno, Bun), not in a browser. */
const LINGERS = typeof (globalThis as { process?: unknown }).process !== "undefined";

/** What a completion reader is built from. */
export interface CompletionParts {
  /**
   * The pool's memory: its control words, and every producer's channel (those waiting for a record are
   * woken when this one frees some).
   */
  readonly memory: Pick<PoolMemory, "control" | "channels" | "progress">;
  /** This producer's completion channel (its waiting word; protocol/producers.ts). */
  readonly channel: ProducerChannel;
  /** This producer's completion queue (the channel's). */
  readonly completions: Injector;
  /** The task records. */
  readonly table: TaskTable;
  /** The submitted tasks. */
  readonly ledger: TaskLedger;
  /** Shared buffers passed by reference. */
  readonly buffers: BufferRegistry;
  /** What runs before each drain and after records were freed (see {@link CompletionHooks}). */
  readonly hooks: CompletionHooks;
  /** The error classes results and errors are decoded with (the pool's `errorClasses`). */
  readonly errorClasses?: ErrorClasses;
}

/**
 * Reads the completion queue and settles finished tasks.
 *
 * @example Usage
 * ```ts ignore
 * const reader = new CompletionReader({ memory, channel, completions, table, ledger, buffers, hooks: producer });
 * reader.arm(); // after a submission: wait for its completion
 * ```
 */
export class CompletionReader {
  private waiting = false;
  /** A linger's timer is set: `arm` waits for it (it reads and arms), and no worker is asked to wake us. */
  private lingering = false;
  /** The records in flight when the current linger began. */
  private inFlightAtLinger = 0;
  /** The next linger's length, ms: from `LINGER_MS` to `LINGER_MAX_MS` (see there). */
  private lingerMs = LINGER_MS;
  private draining = false;
  /** Set by {@link CompletionReader.expectStrays}; cleared once no record of this producer is out. */
  private strays = false;
  /** Error classes the pool's caller registered: results and errors are decoded with them. */
  private readonly errorClasses: ErrorClasses | undefined;
  private stopped = false;
  /** Completions that named a shared buffer not arrived yet: retried at each drain. */
  private deferred: number[] = [];
  /** Completions whose payload travels by message, not arrived yet: each is retried when its own arrives. */
  private readonly awaitingPayload = new Set<number>();
  /** Result payloads that came by message (no free blocks), by handle, until their completion is read. */
  private readonly messagePayloads = new Map<number, Uint8Array>();
  /** The buffers moved with a payload that came by message, by handle. */
  private readonly movedPayloads = new Map<number, ArrayBuffer[]>();

  private readonly control: Int32Array;
  private readonly channel: ProducerChannel;
  private readonly channels: readonly ProducerChannel[];
  private readonly completions: Injector;
  /** Whether this producer counts itself in `ControlWords.recordWaiters` (its backlog waits for records). */
  private countedWaiting = false;
  private readonly table: TaskTable;
  private readonly ledger: TaskLedger;
  private readonly buffers: BufferRegistry;
  private readonly hooks: CompletionHooks;
  /** The progress of this producer's tasks that have a handler (lib/producer/progress_reader.ts). */
  readonly progress: ProgressReader;
  /**
   * @param parts What the reader works with (see {@link CompletionParts}).
   */
  constructor(parts: CompletionParts) {
    this.control = parts.memory.control;
    this.channel = parts.channel;
    this.channels = parts.memory.channels;
    this.completions = parts.completions;
    this.table = parts.table;
    this.ledger = parts.ledger;
    this.buffers = parts.buffers;
    this.hooks = parts.hooks;
    this.errorClasses = parts.errorClasses;
    this.progress = new ProgressReader({
      cells: parts.memory.progress,
      channel: parts.channel,
      ledger: parts.ledger,
      errorClasses: parts.errorClasses,
      // A cell found mid-write is read again by a drain of its own (see ProgressReader.retryLater).
      wake: () => {
        this.drain();
      },
    });
  }

  /**
   * Waits for the next completion (once), unless nothing is pending or the pool stopped. Called again
   * while it waits (after each submission), it brings its count of waiting for a record up to date: a
   * task that went to the backlog after the wait began must be counted, or nobody wakes this producer
   * when another frees a record (with no task of its own in flight, no completion of its own comes).
   */
  arm(): void {
    if (this.stopped || this.lingering) return;
    if (this.ledger.pending === 0 && !this.hooks.waitsForRoom() && !this.straysOut()) return;
    if (this.waiting) {
      this.recountWaiting();
      return;
    }
    const { words, waiting } = this.channel;
    // Tasks of ours wait for a record that another producer may free: say so first (whoever frees one
    // then wakes us), then look at the free list below, after our waiting word is set.
    const starved = this.hooks.starved();
    this.countWaiting(starved);
    // Say we wait, then look once more: a worker that pushed before seeing the word is found here.
    mem.store(words, waiting, 1); // spec: MainAnnounceWaiting
    // And room in the pool's queue, for a producer that waits for it, after the store too: a settle
    // elsewhere between a check in the drain and this store woke a word that was 0 (RoomWait.tla,
    // mutant CheckBeforeArm: the order before this line, which lost that wake).
    const found = this.completions.length > 0 || // spec: MainRecheckCompletions
      // A report that filled a cell before our store raised the progress word first (progress/reporter.ts).
      this.progress.noticed();
    const recordFree = !found && starved && this.table.freeRecords.length > 0; // spec: ArmRecheckFree
    if (found || recordFree || this.hooks.terminated() || this.hooks.roomFree()) {
      mem.store(words, waiting, 0); // spec: MainRetractWaiting
      this.waiting = true;
      // A record free is all it found, where the reader never lingers (a page): its feed may be unable to
      // place the backlog there (no free block for a payload), and then the read arms again and finds the
      // same record. On microtasks that loop held the thread (no timer, message or render ran) until a
      // worker's completion freed a block; a macrotask between reads lets the event loop run. (Where it
      // lingers, that read lingers instead: a starved backlog is not empty.)
      if (recordFree && !LINGERS) setTimeout(() => this.onWake(), 0);
      else queueMicrotask(() => this.onWake());
      return;
    }
    const result = mem.waitAsync(words, waiting, 1); // spec: MainWaitAsync
    // The wake-up first, then the mark: a throw between (a stack overflow at a call) leaves the reader
    // unmarked, and the next arm arms again, rather than marked waiting with nothing to wake it.
    if (result.async) result.value.then(() => this.onWake());
    else queueMicrotask(() => this.onWake());
    this.waiting = true;
  }

  /** The pool stopped: read nothing more. */
  stop(): void {
    this.stopped = true;
    this.strays = false;
    this.countWaiting(false);
  }

  /**
   * Tasks of this producer were settled before their records came back, by a path that does not name
   * them in `ledger.forgotten` (Producer.rejectForNoWorkers: a graph's nodes cancelled with no worker, whose
   * records a worker started later walks and sends back through this producer's completion queue, its
   * cancelled roots and dependants with no entry among them). From here the reader waits for completions
   * even with nothing pending, until none of this producer's records is out ({@link straysOut}), and
   * waits now: without that, with nothing pending, the records would wait in the queue until this
   * producer's next submission or drain.
   */
  expectStrays(): void {
    this.strays = true;
    this.arm();
  }

  /**
   * Whether records of tasks settled early may still reach this producer's completion queue, so that the
   * reader waits for them with nothing pending: the forgotten ones (aborted or timed out while running:
   * each one's completion comes, cancellation.ts), or, after {@link expectStrays}, any record that names
   * this producer and is not free (a scan, made only on that rare path: at each arm with nothing pending
   * until it finds none, which clears it). Never true on the normal path, which adds no wake-ups: a
   * completion wakes the reader only if it is pushed to this producer's queue, and only strays are then.
   */
  private straysOut(): boolean {
    if (this.ledger.forgotten.size > 0) return true;
    if (!this.strays) return false;
    const { table } = this;
    const fields = table.fields;
    const mine = originOf(this.channel.slot);
    for (let i = 0, n = table.indexMask + 1; i < n; i++) {
      const state = fields.loadState(i);
      if (state !== TaskState.FREE && state !== TaskState.CACHED && fields.origin(i) === mine) return true;
    }
    this.strays = false;
    return false;
  }

  /**
   * While this producer waits: counts it waiting for a record if its backlog now starves (or uncounts it),
   * then looks at the free list, after the count, as `arm` does: a record freed before the count was
   * seen by no wake, so if one is free now, this producer wakes itself.
   */
  private recountWaiting(): void {
    const starved = this.hooks.starved();
    if (starved === this.countedWaiting) return;
    this.countWaiting(starved);
    if (starved && this.table.freeRecords.length > 0) wakeProducer(this.channel); // spec: RecountRecheckFree
  }

  /** Counts this producer in `ControlWords.recordWaiters` while its backlog waits for records, and only then. */
  private countWaiting(starved: boolean): void {
    if (starved === this.countedWaiting) return;
    this.countedWaiting = starved;
    mem.add(this.control, ControlWords.recordWaiters, starved ? 1 : -1); // spec: RecordCountWaiting
    // Its channel's counted word too, after the count (the spec folds the two into one step: a wake that
    // reads the count between them passes over this producer, whose re-check of the free list comes after
    // both): a record's wake goes only to a producer that says so (protocol/producers.ts
    // wakeRecordWaiters). A producer in another thread's word is in its slot's line: if it dies counted,
    // the owner uncounts it (releaseSlot). (Dead between the two, it is counted once too often: the other
    // producers then keep to their fair share of records while any waits; nothing is lost.)
    mem.store(this.channel.words, this.channel.counted, starved ? 1 : 0);
  }

  /** Whether a producer other than this one waits for a record (this one then keeps to its share). */
  othersWaitForRecords(): boolean {
    return mem.load(this.control, ControlWords.recordWaiters) > (this.countedWaiting ? 1 : 0);
  }

  /**
   * Settles every completion queued now (and deferred ones that can be), then lets the backlog in.
   *
   * @returns How many completions it read from the queue.
   */
  drain(): number {
    if (this.draining || this.stopped) return 0;
    this.hooks.beforeDrain();
    if (this.stopped) return 0;
    this.draining = true;
    let read = 0;
    // The records these completions free stay ours until the backlog's feed below (freed), which takes
    // them first; what it leaves past the cache's bound goes back to the shared list there.
    this.table.holdFreed(true);
    try {
      // Progress first: a value read here is delivered before the settle of its task read below.
      this.progress.poll();
      for (;;) {
        const handle = this.completions.pop(); // spec: MainPopCompletion
        if (handle === QUEUE_EMPTY) break;
        read++;
        if (!this.tryComplete(handle)) this.defer(handle);
      }
      if (this.deferred.length > 0) {
        const again = this.deferred;
        this.deferred = [];
        for (const handle of again) if (!this.tryComplete(handle)) this.defer(handle);
      }
    } finally {
      this.draining = false;
    }
    this.freed();
    if (!this.hooks.starved()) this.countWaiting(false);
    return read;
  }

  /**
   * After records may have been freed: our backlog first (the hook), then another producer's, if one
   * waits: the records our private cache kept go back to the shared list, and if any are free there now,
   * one waiter is woken (protocol/producers.ts `wakeRecordWaiters`: one a batch, in turn). Called by a
   * producer woken for a record too, after its own feed: records still free (it could take only some, or
   * none), it passes the wake on to the next waiter instead of swallowing it; none free (another took
   * them), there is nothing to pass on, and whoever frees the next one wakes the next waiter.
   */
  private freed(): void {
    this.hooks.freed();
    this.table.holdFreed(false);
    if (this.othersWaitForRecords()) this.table.flushCache();
    if (this.table.freeRecords.length > 0) wakeRecordWaiters(this.channels, this.control); // spec: FreedReadFree
  }

  /**
   * A result payload that travelled by message (it found no free blocks, or its result moved buffers).
   *
   * @param handle The task's handle.
   * @param bytes Its encoded outcome.
   * @param moved The buffers its result moved (`move()`), which the bytes refer to.
   */
  payloadArrived(handle: number, bytes: Uint8Array, moved?: ArrayBuffer[]): void {
    this.messagePayloads.set(handle, bytes);
    if (moved !== undefined && moved.length > 0) this.movedPayloads.set(handle, moved);
    // Its completion came first: settle it alone (retrying every waiting one here made a burst of
    // results by message quadratic: 20,000 moved results took seconds).
    if (this.stopped || !this.awaitingPayload.delete(handle)) return;
    if (!this.tryComplete(handle)) this.defer(handle);
    this.freed();
  }

  /**
   * A finished task whose completion its worker may not have queued (it died first; recovery.ts): settled
   * as if read from the queue. Idempotent, as every report is: if its completion was read already (the
   * record was freed or reused), nothing happens.
   *
   * @param handle The task's handle.
   */
  report(handle: number): void {
    if (this.stopped) return;
    if (!this.tryComplete(handle)) this.defer(handle);
    this.freed();
  }

  /** Keeps a completion that cannot settle yet, where what it waits for will retry it. */
  private defer(handle: number): void {
    const table = this.table;
    const byMessage = table.fields.payloadLength(table.indexOf(handle)) === PAYLOAD_BY_MESSAGE;
    if (byMessage && !this.messagePayloads.has(handle)) this.awaitingPayload.add(handle);
    else this.deferred.push(handle);
  }

  /** A shared buffer arrived: completions that named it may settle now. */
  bufferArrived(): void {
    if (this.deferred.length > 0) this.drain();
  }

  private onWake(): void {
    this.waiting = false;
    mem.store(this.channel.words, this.channel.waiting, 0); // spec: MainClearWaiting
    this.readThenWait();
  }

  /**
   * Reads what is queued, then waits: for a wake, or, while the backlog holds tasks, for a linger's timer
   * (the reader is then not waiting, as for a slow event loop: completions queue up, no worker notifies,
   * and the timer's read finds them all).
   */
  private readThenWait(lingered = false): void {
    const read = this.drain();
    const ranDry = lingered && read * 2 > this.inFlightAtLinger;
    const backlog = this.hooks.backlogLength();
    const inFlight = this.ledger.pending - backlog;
    if (LINGERS && !ranDry && !this.stopped && (backlog > 0 || inFlight >= LINGER_IN_FLIGHT)) {
      if (lingered) {
        // The work the workers hold, measured by what one linger took of it (see LINGER_MAX_MS).
        if (read * 8 < this.inFlightAtLinger) this.lingerMs = Math.min(this.lingerMs * 2, LINGER_MAX_MS);
        else if (read * 4 > this.inFlightAtLinger) this.lingerMs = Math.max(this.lingerMs / 2, LINGER_MS);
      }
      this.lingering = true;
      this.inFlightAtLinger = inFlight;
      setTimeout(this.endLinger, this.lingerMs);
      return;
    }
    this.lingerMs = LINGER_MS;
    this.arm();
  }

  private readonly endLinger = (): void => {
    this.lingering = false;
    this.readThenWait(true);
  };

  /**
   * Settles a DONE record's task; false if its result waits for a message (a shared buffer it names, or
   * the payload itself when it found no free blocks) that has not arrived yet.
   */
  private tryComplete(handle: number): boolean {
    const table = this.table;
    const index = table.indexOf(handle);
    const entry = this.ledger.placed[index];
    if (entry === undefined || entry.handle !== handle) {
      // Settled already (terminated, or its worker was declared dead): only the record is left to free,
      // if this report is current (releaseHandle checks the generation).
      this.messagePayloads.delete(handle);
      this.ledger.forgotten.delete(handle);
      this.movedPayloads.delete(handle);
      table.releaseHandle(handle);
      return true;
    }
    // Plain reads: ordered by the completion-queue pop that handed us the handle.
    const outcome = table.fields.outcome(index);
    const byMessage = table.fields.payloadLength(index) === PAYLOAD_BY_MESSAGE;
    const bytes = byMessage ? this.messagePayloads.get(handle) : undefined;
    if (byMessage && bytes === undefined) return false; // its message has not arrived yet
    let value: unknown;
    let how = outcome === Outcome.VALUE ? Settled.VALUE : Settled.ERROR;
    try {
      value = bytes !== undefined
        ? decode(bytes, 0, bytes.length, this.buffers.resolve, this.errorClasses, this.movedPayloads.get(handle))
        : decode(
          table.payloadBytes(index),
          table.payloadStart(index),
          table.fields.payloadLength(index),
          this.buffers.resolve,
          this.errorClasses,
        );
    } catch (error) {
      if (error instanceof MissingBuffer) return false;
      value = error;
      how = Settled.ERROR;
    }
    // The task's last report, read before it settles (delivered after this drain, before its reactions).
    if (entry.onProgress !== undefined) this.progress.settling(index, entry);
    this.ledger.placed[index] = undefined;
    if (byMessage) {
      this.messagePayloads.delete(handle);
      this.movedPayloads.delete(handle);
      table.fields.setPayloadLength(index, 0);
    }
    table.releaseHandle(handle);
    this.ledger.settle(entry, how, value);
    return true;
  }
}
