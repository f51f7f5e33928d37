/**
 * Running one task on a worker: claiming it, calling its function, finishing it.
 *
 * `execute` registers the task as a run (runs.ts), claims it (a compare-exchange from QUEUED to RUNNING:
 * the main thread cancels a queued task by its own compare-exchange, and exactly one wins), decodes its
 * arguments from the record (freeing overflow blocks at once), calls the task function, and `finish`
 * encodes the result or the thrown error into the same record; marks.ts then publishes DONE, sets a fork's
 * latch or queues a submitted task's completion, and wakes the main thread if it waits. A task that returns
 * a promise is left running while the worker goes on with other tasks (`pending`); it finishes when it
 * settles. A result that moves buffers, or that found no free blocks, goes to the main thread by message.
 *
 * The bound on async tasks (the pool's `asyncTasksPerWorker`): at `pending` = the bound, `full()` is true
 * and the loop (and a join's wait) takes no new task; `room()` is the promise the loop waits on then,
 * resolved by `settleAsync` when `pending` drops below the bound (or by `wakeRoom`, for mail). Only
 * `start` raises `pending`, and only for a task the loop took while not full, so `pending` never exceeds
 * the bound (docs/reliability.md: a worker's death fails at most that many async tasks).
 *
 * What it owns: the count of async tasks pending, the waiter for room below the bound, and the encoder's mode while it writes a result (the
 * same encoder writes fork arguments, in the mode FORK_MOVE_REFUSAL, which it restores). Its shared
 * accesses are actions of spec/Lifecycle.tla (ExecCasRunning).
 *
 * Threads: made and used by its worker thread only (the loop, a join's wait, and async tasks' callbacks).
 * The kill guard (kill_guard.ts) is raised on entry and lowered around the task's own code.
 *
 * @module
 */

import { mem } from "../protocol/atomics.ts";
import { type BufferRegistry, MissingBuffer } from "../codec/buffers.ts";
import { decode, type Encoder } from "../codec/codec.ts";
import type { WorkerGuard } from "../protocol/kill_guard.ts";
import { StatusWords } from "../protocol/layout.ts";
import { asyncForkError } from "../forkjoin/join.ts";
import { encodeOutcome } from "../codec/outcome.ts";
import { epochMs } from "../metrics.ts";
import { Origin, Outcome, PAYLOAD_BY_MESSAGE, TaskFlags, TaskState, type TaskTable } from "../record/task.ts";
import type { Deque } from "../protocol/deque.ts";
import type { Levels } from "../protocol/levels.ts";
import type { Sleep } from "../protocol/sleep.ts";
import { GraphWalker } from "../graph/walk.ts";
import { reserveStack } from "../runtime/stack.ts";
import { GraphRecords } from "../graph/words.ts";
import type { Forks } from "./forks.ts";
import type { TaskFunctions } from "./functions.ts";
import type { Mail } from "./mail.ts";
import type { Marks } from "./marks.ts";
import type { Runs } from "./runs.ts";
import { abortError, type TaskSignals } from "./signals.ts";
import type { WorkerStats } from "./stats.ts";
import { adopt, thenOf } from "./thenable.ts";

/** Why a forked task's arguments cannot move buffers (the end of the encoder's TypeError). */
export const FORK_MOVE_REFUSAL = {
  refuse:
    "and a forked task's arguments cannot be moved (any worker may steal the fork): pass it without move() to copy it, or in a SharedArrayBuffer",
};

/**
 * A submitted task's result holding a typed array or ArrayBuffer of at least this many bytes is sent to the
 * main thread by message, its bytes copied here (on the worker) into a buffer of their own and transferred,
 * rather than through a slab: the main thread, the bottleneck of a burst, then neither allocates nor copies
 * them (a fresh allocation costs a page fault per 4 KiB on this VM). Measured on 2 workers, bursts of
 * `makeBytes` results, 8–10 rounds, MB/s with it from the size against without: Node 1,861 and 1,557 against
 * 1,366 and 1,470 at 64 KiB, about 2,900 against 1,800 at 256 KiB, 3,322 against 1,653 at 1 MiB (32 KiB:
 * no clear difference); Bun 1,235 against 270 at 64 KiB, 491 against 461 at 1 MiB; Deno 1,353 against
 * 1,553 at 64 KiB, 2,989 against 2,130 at 1 MiB.
 */
export const RESULT_TRANSFER_FROM = 64 * 1024;

/** The collaborators a {@link Runner} is built from. */
export interface RunnerParts {
  /** This worker's index. */
  index: number;
  /** The workers' status lines (a finish that waits for blocks waits on a word of ours). */
  status: Int32Array;
  /** The task records. */
  table: TaskTable;
  /** The encoder of results and fork arguments. */
  encoder: Encoder;
  /** SharedArrayBuffers passed by reference. */
  buffers: BufferRegistry;
  /** The task functions. */
  functions: TaskFunctions;
  /** Our marks, and the publishing step of a finish. */
  marks: Marks;
  /** The runs under way. */
  runs: Runs;
  /** Our forks not yet joined. */
  forks: Forks;
  /** Our mail (moved buffers of directed tasks, buffers on their way). */
  mail: Mail;
  /** The signals of the tasks we run. */
  signals: TaskSignals;
  /** Our counters and busy time. */
  stats: WorkerStats;
  /** Our kill guard. */
  guard: WorkerGuard;
  /** Sends a message to the main thread. */
  post: (message: unknown, transfer?: ArrayBuffer[]) => void;
  /** The most async tasks pending at once (the pool's `asyncTasksPerWorker`), or Infinity. */
  asyncBound: number;
  /** What the walk of a finished graph node works with (lib/graph/walk.ts): the graph words, our deque. */
  graph: { words: Int32Array; deque: Deque; levels: Levels; sleep: Sleep };
}

/** Claims, runs and finishes tasks on this worker. */
export class Runner {
  private readonly index: number;
  private readonly status: Int32Array;
  /** The word of our status line a finish waits on (1 ms steps) for blocks: nobody notifies it. */
  private readonly waitAt: number;
  private readonly table: TaskTable;
  private readonly encoder: Encoder;
  private readonly buffers: BufferRegistry;
  private readonly functions: TaskFunctions;
  private readonly marks: Marks;
  private readonly runs: Runs;
  private readonly forks: Forks;
  private readonly mail: Mail;
  private readonly signals: TaskSignals;
  private readonly stats: WorkerStats;
  private readonly guard: WorkerGuard;
  private readonly post: (message: unknown, transfer?: ArrayBuffer[]) => void;
  /** Async tasks started and not yet settled (the loop then yields to its event loop, see `WorkerLoop`). */
  pending = 0;
  /** The most async tasks pending at once: at it, no new task is taken (see {@link Runner.full}). */
  private readonly asyncBound: number;
  /** Resolves the loop's wait for room below the bound ({@link Runner.room}), if it waits. */
  private roomWaiter: (() => void) | undefined = undefined;
  /** Gathers a graph node's arguments and walks a finished one (lib/graph/walk.ts). */
  private readonly graph: GraphWalker;

  /**
   * This thread.
   *
   * @param parts Its collaborators.
   */
  constructor(parts: RunnerParts) {
    this.index = parts.index;
    this.status = parts.status;
    this.waitAt = parts.index * StatusWords.count + StatusWords.count - 1;
    this.table = parts.table;
    this.encoder = parts.encoder;
    this.buffers = parts.buffers;
    this.functions = parts.functions;
    this.marks = parts.marks;
    this.runs = parts.runs;
    this.forks = parts.forks;
    this.mail = parts.mail;
    this.signals = parts.signals;
    this.stats = parts.stats;
    this.guard = parts.guard;
    this.post = parts.post;
    this.asyncBound = parts.asyncBound;
    this.graph = new GraphWalker({
      table: parts.table,
      graph: new GraphRecords(parts.graph.words),
      deque: parts.graph.deque,
      levels: parts.graph.levels,
      sleep: parts.graph.sleep,
      encoder: parts.encoder,
      resolve: parts.buffers.resolve,
      waitForBlocks: () => {
        this.forks.stashFinished();
        mem.wait(this.status, this.waitAt, 0, 1);
      },
      publish: (handle, index) => this.marks.publishDone(handle, index, false),
      // Only a producer that waits for a record is woken: the owner no longer wakes for every freed node.
      freed: () => this.marks.wakeRecordWaiters(),
    });
  }

  /**
   * This thread. Whether async tasks pending are at the bound: the loop, and a join's wait, take no new
   * task (from the search or directed) until one settles.
   */
  full(): boolean {
    return this.pending >= this.asyncBound;
  }

  /**
   * This thread, from the loop, when {@link Runner.full}. Resolves once an async task settles and room is
   * below the bound, or on {@link Runner.wakeRoom}. One waiter at a time (the loop's only slice).
   */
  room(): Promise<void> {
    return new Promise((resolve) => (this.roomWaiter = resolve));
  }

  /** This thread. Ends the loop's wait for room, if it waits (mail came that the loop must run). */
  wakeRoom(): void {
    const waiter = this.roomWaiter;
    if (waiter === undefined) return;
    this.roomWaiter = undefined;
    waiter();
  }

  /**
   * This thread. Runs one task; returns a promise only if it must wait for a shared buffer to arrive
   * first. Inside a join (`requeue`) the event loop cannot run, so that buffer's message could not arrive:
   * the task goes back to the injector instead, for a worker that has the buffer (its forker does).
   */
  execute(handle: number, requeue = false, claimed = false): Promise<void> | undefined {
    // A graph node taken inside a join's wait runs at the join's depth, however deep, and its walk (its
    // result into each dependant's slot, each decrement) has no repair: cut short by a stack overflow, a
    // dependant is never counted down and its graph never settles. So the stack is reserved first: at the
    // limit, the RangeError comes here, before the claim, as at any call of the join's wait (the held mark
    // gives the node back), and a node that starts has room to finish and walk. (Only there: the loop runs
    // nodes from the top of the stack. The flags of a record not yet ours are only read: GRAPH never changes.)
    if (requeue && (this.table.fields.loadFlags(this.table.indexOf(handle)) & TaskFlags.GRAPH) !== 0) reserveStack();
    const depth = this.runs.enter(handle);
    this.marks.taken();
    const pending = this.start(handle, requeue, claimed);
    this.runs.exit(depth);
    return pending;
  }

  /** {@link Runner.execute}'s work. */
  private start(handle: number, requeue: boolean, claimed: boolean): Promise<void> | undefined {
    const table = this.table;
    const words = table.words;
    const index = table.indexOf(handle);
    table.fields.storeWorker(index, this.index);
    // A compare-exchange, not a store: the main thread cancels a queued task by its own compare-exchange
    // from QUEUED (CancelCasQueued, cancellation.ts), and exactly one of the two wins.
    const stateAt = table.fields.stateWord(index);
    const forked = table.fields.origin(index) === Origin.FORK;
    if (!claimed) {
      const before = mem.compareExchange(words, stateAt, TaskState.QUEUED, TaskState.RUNNING); // spec: ExecCasRunning
      if (before !== TaskState.QUEUED) {
        // CANCELLED: its caller aborted it while it waited, and forgot the record: ours to free, never run.
        // Anything else is a handle that should not exist (a duplicate, or a stale one): it frees nothing,
        // and releaseHandle's generation check keeps a stale one from freeing the record's next task.
        this.marks.claimed();
        this.mail.forgetMoved(handle);
        // A graph node's dependants are cancelled in turn: ours to walk (lib/graph/walk.ts).
        if (before === TaskState.CANCELLED && (table.fields.loadFlags(index) & TaskFlags.GRAPH) !== 0) {
          this.graph.takeCancelled(handle);
          return undefined;
        }
        if (before === TaskState.CANCELLED) table.releaseHandle(handle);
        return undefined;
      }
    }
    // Claimed (RUNNING, ours): a death from here on is the running task's (the main thread rejects it).
    this.marks.claimed();
    const root = forked ? table.fields.root(index) : index;
    this.runs.setRoot(root);
    // One load of the flags that matter here: a submitted task's own, or a fork's root's.
    const flags = root >= 0 ? table.fields.loadFlags(root) : 0;
    // A graph node itself, not a fork of one (a fork reads its root's flags, GRAPH among them, but has no
    // argument slots: its record's graph words are stale, and gathering from them decoded garbage).
    const node = !forked && (flags & TaskFlags.GRAPH) !== 0;
    const stats = this.stats;
    if (!claimed && !forked) {
      // A submitted task whose timeout counts from its start: the main thread waits on the state word.
      if ((flags & TaskFlags.WATCH_START) !== 0) mem.notify(words, stateAt);
      if (stats.stamps !== undefined) stats.stamps.started(index, stats.lastFinish >= 0 ? stats.lastFinish : epochMs());
    }
    // Time passes in this task: the next one's start needs a clock read (or this one's finish).
    stats.lastFinish = -1;
    // Aborted already: a fork, with the task that made it (through any depth of forks), so that its
    // joiner goes on; a submitted task, if the abort came while it was handed back to the queue (below).
    if ((flags & TaskFlags.ABORTED) !== 0) {
      table.freePayload(index);
      if (node) this.graph.freeSlots(index);
      this.finish(handle, Outcome.ERROR, abortError(flags));
      return undefined;
    }
    let args: unknown;
    try {
      const moved = this.mail.moved(handle);
      args = decode(
        table.payloadBytes(index),
        table.payloadStart(index),
        table.fields.payloadLength(index),
        this.buffers.resolve,
        undefined,
        moved,
      );
      if (moved !== undefined) this.mail.forgetMoved(handle);
      // A graph node: its inputs' results, from its slots (lib/graph/walk.ts); kept if one names a buffer
      // not here yet (then as for a task's own arguments, below), freed below if the start fails.
      if (node) this.graph.gather(index, args as unknown[]);
    } catch (error) {
      if (error instanceof MissingBuffer) {
        if (requeue) {
          // Handed back, not run: no longer ours to finish if cut short (see runs.ts), but in hand until
          // the push (see marks.ts).
          this.marks.handBack(handle, index);
          return undefined;
        }
        // Still RUNNING and ours while we wait (a death now is a death in a running task): resumed
        // without the claim.
        return this.mail.waitForBuffer(error.id).then(() => {
          this.guard.enter();
          try {
            return this.execute(handle, false, true);
          } finally {
            this.guard.leave();
          }
        });
      }
      if (node) this.graph.freeSlots(index);
      this.finish(handle, Outcome.ERROR, error);
      return undefined;
    }
    table.freePayload(index);
    const fn = this.functions.all[table.fields.task(index)];
    // Asked to be forceable: from here to its finish, this worker is killable outside the pool's steps.
    if ((flags & TaskFlags.FORCE) !== 0 && !forked) this.guard.hold(handle);
    let result: unknown;
    let then: unknown;
    this.guard.leave();
    try {
      result = fn(...(args as unknown[]));
      // Read once, here: a getter on `then` is user code and may throw (the task then fails).
      then = thenOf(result);
    } catch (error) {
      this.guard.enter();
      this.finish(handle, Outcome.ERROR, error);
      return undefined;
    }
    this.guard.enter();
    if (typeof then !== "function") {
      this.finish(handle, Outcome.VALUE, result);
      return undefined;
    }
    if (forked) {
      this.finish(handle, Outcome.ERROR, asyncForkError(fn));
      return undefined;
    }
    // A thenable is adopted through a real promise: its `then` may throw (a rejection), call back twice
    // or call both callbacks (the first call wins); the task finishes exactly once either way.
    this.pending++;
    adopt(result, then).then(
      (value) => this.settleAsync(handle, Outcome.VALUE, value),
      (error) => this.settleAsync(handle, Outcome.ERROR, error),
    );
    return undefined;
  }

  /** An async task settled (in a promise job, outside the loop's slices): finishes it, guard raised. */
  private settleAsync(handle: number, outcome: number, value: unknown): void {
    this.guard.enter();
    this.pending--;
    this.finish(handle, outcome, value);
    // Room below the bound: the loop, if it waits for it, goes on taking tasks (in a macrotask of its own).
    if (this.pending < this.asyncBound) this.wakeRoom();
    this.guard.leave();
  }

  /** Writes the outcome into the record, publishes DONE, and queues the completion. */
  private finish(handle: number, outcome: number, value: unknown): void {
    this.guard.release(handle);
    const table = this.table;
    const index = table.indexOf(handle);
    const encoder = this.encoder;
    const origin = table.fields.origin(index);
    const forked = origin === Origin.FORK;
    const graph = forked ? 0 : table.fields.loadFlags(index) & (TaskFlags.GRAPH | TaskFlags.QUIET | TaskFlags.RETURN);
    // A submitted task's result may move buffers back (move()) by message to the owner's thread; a fork's
    // is copied to its joiner, and so is the result of a producer in another thread: a message would reach
    // it only through the owner's thread (protocol/producers.ts), so its bytes go through shared memory; a
    // graph node's is copied into its dependants' slots.
    encoder.moves = origin === Origin.MAIN && graph === 0 ? "transfer" : "copy";
    // Never throws: a result that cannot cross threads fails the task with the reason, and an error that
    // cannot be encoded is replaced by a stand-in with its name and message (see outcome.ts).
    outcome = encodeOutcome(encoder, value, outcome === Outcome.ERROR);
    // Back to the mode of fork arguments, which this encoder also writes (kept off the fork's path).
    encoder.moves = FORK_MOVE_REFUSAL;
    if (encoder.length > table.maxPayloadBytes()) {
      const what = outcome === Outcome.VALUE ? "result" : "error";
      outcome = Outcome.ERROR;
      this.encoder.encode(
        new RangeError(
          `Cannot return the task's ${what} as it encodes to ${encoder.length} bytes and the pool holds at most ${table.maxPayloadBytes()}: pass large data in a SharedArrayBuffer, or raise the pool's 'payloadMemory'`,
        ),
        "error",
      );
    }
    if (!forked) this.signals.forget(index);
    const stats = this.stats;
    if (!forked && stats.stamps !== undefined) {
      const now = epochMs();
      stats.stamps.finished(index, now);
      // The loop's own task (not one nested in a join's wait, nor an async one settling later): the loop
      // goes on to the next task from here.
      if (this.runs.runDepth() === 1) stats.lastFinish = now;
    }
    if (graph !== 0) {
      // Its walk: the result into its dependants' slots, and the record back (lib/graph/walk.ts).
      stats.bump(StatusWords.executed);
      this.graph.finished(handle, index, outcome, graph);
      return;
    }
    // A forked task's joiner is a worker and cannot take a message: wait for blocks (1 ms steps) instead,
    // giving back the blocks of our own finished forks meanwhile (see forks.ts).
    while (forked && !table.writeEncoded(index, encoder)) {
      this.forks.stashFinished();
      mem.wait(this.status, this.waitAt, 0, 1);
    }
    if (!forked && encoder.moved.length !== 0) outcome = this.postMoved(handle, outcome);
    else if (!forked && !table.writeEncoded(index, encoder)) {
      // No free blocks: queued tasks' arguments may hold them all, and waiting for them could deadlock
      // (the main thread places more arguments as blocks free up). The payload goes by message instead;
      // the main thread settles the task when both the completion and the message have arrived.
      // A copy of our own, transferred: the message does not copy it twice more (structured clone).
      const bytes = encoder.snapshot();
      this.post({ type: "payload", handle, bytes }, [bytes.buffer]);
      table.fields.setPayloadLength(index, PAYLOAD_BY_MESSAGE);
    }
    table.fields.setOutcome(index, outcome);
    stats.bump(StatusWords.executed);
    this.marks.publishDone(handle, index, forked);
  }

  /**
   * Sends a submitted task's outcome whose value moves buffers by message, with those buffers (transferred,
   * not copied); the record says PAYLOAD_BY_MESSAGE. A buffer that cannot be transferred fails the task.
   *
   * @returns The outcome as sent.
   */
  private postMoved(handle: number, outcome: number): number {
    const table = this.table;
    const index = table.indexOf(handle);
    const encoder = this.encoder;
    const bytes = encoder.snapshot();
    const moved = [...encoder.moved];
    try {
      this.post({ type: "payload", handle, bytes, moved }, [bytes.buffer, ...moved]);
      table.fields.setPayloadLength(index, PAYLOAD_BY_MESSAGE);
      return outcome;
    } catch (error) {
      // Not sent (a DataCloneError: a Wasm memory's buffer, say): the task fails with why.
      encoder.moves = "copy";
      encodeOutcome(
        encoder,
        new TypeError(`Cannot move the task's result's buffers back: ${String(error)}`, { cause: error }),
        true,
      );
      encoder.moves = FORK_MOVE_REFUSAL;
      if (!table.writeEncoded(index, encoder)) {
        this.post({ type: "payload", handle, bytes: encoder.snapshot() });
        table.fields.setPayloadLength(index, PAYLOAD_BY_MESSAGE);
      }
      return Outcome.ERROR;
    }
  }

  /**
   * This thread, at the top of the loop, where no join is in progress: completes what a throw cut short
   * inside the pool's own code, so every record this thread still holds there is such a step's: the single
   * steps' marks (see marks.ts); runs cut short (not started: run again; started: failed with a RangeError
   * that says so); forks never joined (orphaned, so that whoever finishes them frees them, or freed if
   * finished).
   */
  repairInterrupted(): void {
    const table = this.table;
    const marks = this.marks;
    marks.repairAll();
    const interrupted = this.runs.takeInterrupted();
    this.encoder.reset();
    // Runs cut short: one that had not started (still QUEUED: cut short before its first step) goes
    // back to be run; one that had started fails (its caller, a promise or a joiner, goes on).
    for (const handle of interrupted) {
      if (handle === -1) continue;
      if (marks.putBack(handle)) continue;
      if (!marks.current(handle, TaskState.RUNNING)) continue;
      if (table.fields.loadWorker(table.indexOf(handle)) !== this.index) continue;
      this.finish(
        handle,
        Outcome.ERROR,
        new RangeError(
          "Cannot finish the task as its run was cut short inside the pool's fork-join code " +
            "(a stack overflow in a join nested that deep): recurse less deeply, or raise the stack size",
        ),
      );
    }
    marks.repairedRuns();
    // Forks never joined: nobody will join them now.
    this.forks.orphanAll();
    // Records freed above may have gone to our cache: give them to the shared list (the main thread's
    // backlog may be waiting for them, with no completion coming to tell it).
    if (table.flushCache() > 0) marks.wakeMain();
  }
}
