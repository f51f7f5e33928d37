/**
 * A worker's side of fork-join: the {@link ForkJoinHost} that join, scope and the parallel loops of
 * forkjoin/join.ts call on this thread.
 *
 * A join's `b` is pushed on this worker's deque as a forked task (a record, its arguments encoded), unless
 * no thief could want it and running it inline is unobservable (`keepsInline`: a lazy join). The joiner
 * then pops it back and runs it on its own stack (`runInline`, no result encoded), or, if a thief took it,
 * helps with other work (its own deque, then the search) until the fork's latch is set, and reads the
 * result from the record.
 *
 * What it owns: nothing of its own beyond its collaborators: the forks not joined live in forks.ts, the
 * marks of a fork being placed or consumed in marks.ts, the runs in runs.ts. Its shared accesses are
 * actions of spec/Lifecycle.tla (ForkPushDeque, JoinPopOwn, JoinReadLifecycle) and spec/SleepWake.tla
 * (ForkPushDeque, JoinPopOwn: the poster from a worker's own deque).
 *
 * Threads: made by its worker thread and called from task code on it. The kill guard is raised in every
 * entry (`fork`, `joinForked`), lowered around user code and the latch wait.
 *
 * @module
 */

import { mem } from "../protocol/atomics.ts";
import type { BufferRegistry } from "../codec/buffers.ts";
import { decode, type Encoder } from "../codec/codec.ts";
import { type Deque, EMPTY } from "../protocol/deque.ts";
import { latchIsSet, UNSET, waitLatch } from "../protocol/latch.ts";
import type { WorkerGuard } from "../protocol/kill_guard.ts";
import { DequeWords, StatusWords } from "../protocol/layout.ts";
import type { Sleep } from "../protocol/sleep.ts";
import { asyncForkError, callInline, isThenable } from "../forkjoin/join.ts";
import type { ForkJoinHost, TaskFunction as ForkFunction } from "../forkjoin/host.ts";
import type { TaskContext } from "../forkjoin/task_context.ts";
import { NO_RECORD, Origin, Outcome, TaskState, type TaskTable } from "../record/task.ts";
import type { Forks } from "./forks.ts";
import type { TaskFunctions } from "./functions.ts";
import type { Marks } from "./marks.ts";
import type { Runner } from "./runner.ts";
import type { Runs } from "./runs.ts";
import { DOZE_MS, DOZE_ROUNDS, type Search, SPIN_ROUNDS } from "./search.ts";
import type { TaskSignals } from "./signals.ts";
import type { WorkerStats } from "./stats.ts";
import type { HandleRequests } from "./handles.ts";

/** Whether `value` is a SharedArrayBuffer or a view of one (the codec passes both by reference). */
function isShared(value: object): boolean {
  const buffer = ArrayBuffer.isView(value) ? value.buffer : value;
  return typeof SharedArrayBuffer !== "undefined" && buffer instanceof SharedArrayBuffer;
}

/**
 * A join forks its b onto the deque only while the deque holds fewer tasks than this (see `keepsInline`).
 * Chosen, not tuned: bench/lazy_join.ts measures it against forking every b.
 */
const LAZY_DEQUE_DEPTH = 2;

/** The collaborators a {@link ForkJoin} is built from. */
export interface ForkJoinParts {
  /** This worker's index. */
  index: number;
  /** How many workers the pool has. */
  workers: number;
  /** The task records. */
  table: TaskTable;
  /** Our deque (owner handle). */
  deque: Deque;
  /** The sleep protocol (a fork is new work). */
  sleep: Sleep;
  /** The encoder of fork arguments (and results). */
  encoder: Encoder;
  /** SharedArrayBuffers passed by reference. */
  buffers: BufferRegistry;
  /** The task functions. */
  functions: TaskFunctions;
  /** Our forks not yet joined. */
  forks: Forks;
  /** Our marks. */
  marks: Marks;
  /** The runs under way. */
  runs: Runs;
  /** Runs the tasks a join's wait helps with. */
  runner: Runner;
  /** Finds those tasks. */
  search: Search;
  /** The signals of the tasks we run. */
  signals: TaskSignals;
  /** Our counters. */
  stats: WorkerStats;
  /** Our kill guard. */
  guard: WorkerGuard;
  /** Pool handles asked of the owner (`poolHandle()`). */
  handles: HandleRequests;
}

/** This worker's fork-join host. */
export class ForkJoin implements ForkJoinHost {
  private readonly index: number;
  /** How many workers the pool has (with one, nothing can ever steal from us). */
  private readonly workers: number;
  private readonly table: TaskTable;
  private readonly deque: Deque;
  private readonly sleep: Sleep;
  private readonly encoder: Encoder;
  private readonly buffers: BufferRegistry;
  private readonly functions: TaskFunctions;
  private readonly forks: Forks;
  private readonly marks: Marks;
  private readonly runs: Runs;
  private readonly runner: Runner;
  private readonly search: Search;
  private readonly signals: TaskSignals;
  private readonly stats: WorkerStats;
  private readonly guard: WorkerGuard;
  private readonly handles: HandleRequests;

  /**
   * This thread.
   *
   * @param parts Its collaborators.
   */
  constructor(parts: ForkJoinParts) {
    this.index = parts.index;
    this.workers = parts.workers;
    this.table = parts.table;
    this.deque = parts.deque;
    this.sleep = parts.sleep;
    this.encoder = parts.encoder;
    this.buffers = parts.buffers;
    this.functions = parts.functions;
    this.forks = parts.forks;
    this.marks = parts.marks;
    this.runs = parts.runs;
    this.runner = parts.runner;
    this.search = parts.search;
    this.signals = parts.signals;
    this.stats = parts.stats;
    this.guard = parts.guard;
    this.handles = parts.handles;
  }

  /** Asks the owner for a handle of this pool (`poolHandle()`; handles.ts). */
  poolHandle(): Promise<unknown> {
    return this.handles.request();
  }

  /** The task id of an exported (or built-in) task function. */
  taskId(fn: ForkFunction): number {
    return this.functions.taskId(fn);
  }

  /** The task function with id `id`. */
  task(id: number): ForkFunction {
    return this.functions.all[id] as ForkFunction;
  }

  /** A built-in task of `chunk.ts`. */
  builtin(name: string): ForkFunction {
    return this.functions.builtin(name);
  }

  /** The task running synchronously now (see task_context.ts), or undefined between tasks. */
  context(): TaskContext | undefined {
    return this.signals.context();
  }

  /** Pushes `fn(...args)` on our deque as a forked task; -1 if it must run inline (no record, room, blocks). */
  fork(fn: ForkFunction, args: unknown[]): number {
    const taskId = this.functions.taskId(fn); // (first: a b that is not a task is an error whoever would run it)
    this.guard.enter();
    try {
      return this.place(taskId, args);
    } finally {
      this.guard.leave();
    }
  }

  /**
   * Our deque's depth, roughly, for {@link ForkJoin.keepsInline}: its two ends read plainly, not with the
   * deque's atomic `length`. Every answer is correct there (a stale one only decides whether b is
   * published), the read is no step of the deque's protocol (so it lives here, outside the model-checked
   * file), and it is made at every join: on V8 an atomic load is a call (7–12 ns on this project's
   * machine) and a plain read under 1 ns. A thief's CAS of `top` may be seen a moment late; negative while
   * a pop and a steal race, which reads as shallow. Tear-free, as every aligned int32 access is; plain
   * reads are not in a trace.
   */
  private dequeDepth(): number {
    const words = this.deque.words;
    return (mem.read(words, DequeWords.bottom) - mem.read(words, DequeWords.top)) | 0;
  }

  /**
   * Whether a join's b may skip the deque and run inline after a, as the join's caller then does: when no
   * thief could want it. Publishing a fork (a record, its arguments encoded, a deque push and pop) is most
   * of a join's cost, and a fork nobody steals pays it for nothing. Two cases, both with arguments that b
   * would receive unchanged either way, so that running it inline is unobservable: primitives, and
   * SharedArrayBuffers and views of them (shared memory passes by reference: a fork's copy of such a view
   * is another view of the same bytes), but no other object (a fork gives b a copy made at the fork, and a
   * may change the original before an inline b would see it):
   * - there is no other worker (a pool of one): nothing can ever steal from us;
   * - our deque already holds {@link LAZY_DEQUE_DEPTH} tasks or more, older than this fork: a thief takes
   *   the oldest first (a larger piece of the same recursion), and the forks we make once those are gone
   *   (stolen, or popped back at their joins) are published again.
   * Like Rayon's adaptive splitting, which splits a parallel iterator further only when a thief has taken
   * part of it. Reads two words, our deque's ends, plainly: it writes nothing, so no protocol step changes.
   *
   * @throws {TypeError} If `fn` is not a function of the task module (whoever would run it).
   */
  keepsInline(fn: ForkFunction, args: unknown[]): boolean {
    this.functions.taskId(fn); // (a b that is not a task is an error, kept inline or not)
    // The deque first: a join that must fork anyway (a shallow deque, a thief about) does not scan its
    // arguments twice, here and in encoding them.
    if (this.workers !== 1 && this.dequeDepth() < LAZY_DEQUE_DEPTH) return false;
    for (let i = 0; i < args.length; i++) {
      const v = args[i];
      const type = typeof v;
      if (type === "object" ? v !== null && !isShared(v as object) : type === "function" || type === "symbol") {
        return false;
      }
    }
    return true;
  }

  /**
   * A join's b or a spawn that {@link ForkJoin.fork} did not fork, run inline by the task that made it:
   * not if that task was aborted (as its fork, popped back or stolen, would not run), and a promise from it
   * is an error (one contract, whoever runs it).
   */
  inline(fn: ForkFunction, args: unknown[]): unknown {
    const root = this.runs.currentRoot();
    // One load of the root's flags, as runInline makes for a fork popped back.
    const reason = root >= 0 ? this.signals.abortReason(root) : undefined;
    if (reason !== undefined) throw reason;
    return callInline(fn, args);
  }

  /** {@link ForkJoin.fork}'s work, guard raised. */
  private place(taskId: number, args: unknown[]): number {
    const table = this.table;
    const marks = this.marks;
    this.encoder.encodeArgs(args); // a move() in them is refused (the encoder's mode, see Runner.finish)
    // (Checked after the arguments' getters ran: they are user code, which may have forked.)
    marks.checkPushing();
    // Ours alone until the deque push publishes it: if a step is cut short before, the repair frees it.
    // Allocated into the pushing mark, with no call between (see Marks.allocatePushing).
    const handle = marks.allocatePushing();
    if (handle === NO_RECORD) return -1;
    const index = table.indexOf(handle);
    if (!table.writeEncoded(index, this.encoder)) {
      table.release(index);
      marks.clearPushing();
      return -1;
    }
    // Plain writes: the record is ours until the deque push below publishes it (its store of bottom) to
    // the thief whose steal reads that bottom (or to ourselves when we pop it back). A racing scan by the
    // main thread reads FREE or QUEUED as state, and skips the record either way.
    table.fields.setTask(index, taskId);
    table.fields.setOrigin(index, Origin.FORK);
    table.fields.initLatch(index, UNSET);
    table.fields.setForker(index, this.index);
    // The submitted task this fork belongs to (its abort cancels the fork), and that task's id.
    const root = this.runs.currentRoot();
    table.fields.setRoot(index, root);
    table.fields.setId(index, root >= 0 ? table.fields.id(root) : -1);
    table.fields.setState(index, TaskState.QUEUED);
    // Outstanding before it is published: once published, no call may come before the mark's clear (see
    // Marks.placeFork); cut short before, the mark's repair forgets it and frees it.
    this.forks.add(handle);
    // A push cut short published nothing (its one publishing store is its last step); one that returned
    // did, and cleared the mark with plain stores; a full deque freed the fork.
    if (!marks.placeFork(handle)) return -1;
    // Primitive arguments decode to equal values: if we pop the task back, we call it with these and skip
    // the decode. (Objects are decoded even then, so `b` sees a copy made at the fork whoever runs it.)
    if (this.encoder.flat) this.forks.keepArgs(index, args);
    this.sleep.newWork();
    return handle;
  }

  /** Waits for forked task `handle`: pops it back and runs it, or helps until its latch is set. */
  joinForked(handle: number): unknown {
    this.guard.enter();
    try {
      return this.awaitFork(handle);
    } finally {
      this.guard.leave();
    }
  }

  /** {@link ForkJoin.joinForked}'s work, guard raised. */
  private awaitFork(handle: number): unknown {
    const table = this.table;
    const marks = this.marks;
    const index = table.indexOf(handle);
    const latchAt = table.fields.latchWord(index);
    // It stays outstanding until consumed: a wait cut short leaves it there for the repair.
    let idle = 0;
    while (!latchIsSet(table.words, latchAt)) {
      // (Marks are checked in the loop: the tasks run below are user code, which may have been cut short.)
      marks.checkJoin();
      const own = marks.popHeld(); // spec: JoinPopOwn
      if (own === handle) {
        marks.consumeHeld(handle);
        return this.runInline(handle);
      }
      // Not ours: b was stolen, and this is older work of an enclosing join (or a batch). Run it.
      // At the bound of async tasks (asyncTasksPerWorker), no search: it could take a submitted async task.
      const work = own !== EMPTY ? own : this.runner.full() ? -1 : this.search.findWork(); // held (see marks.ts) until `execute` registers it
      if (work >= 0) {
        idle = 0;
        void this.runner.execute(work, true);
        continue;
      }
      if (this.search.stopping()) { // spec: JoinReadLifecycle
        throw new Error("Cannot finish join as the pool is stopping: the forked task's worker has stopped");
      }
      // Nothing to help with: spin a little, then wait on the latch (the thief notifies it). The wait is
      // timed because work can appear that nobody tells us about: the thief forks pieces of b onto its
      // own deque, and only sleeping workers are woken for that. Short waits first (like the main loop's
      // doze), so that we steal those pieces within about DOZE_MS, then 1 ms ones for a long b.
      if (++idle <= SPIN_ROUNDS) {
        for (let i = 0; i < 32; i++) mem.pause();
        continue;
      }
      // Our other finished forks give their blocks back while we wait (see forks.ts).
      if (idle === SPIN_ROUNDS + 1 || (idle & 15) === 0) this.forks.stashFinished();
      // A wait is outside the pool's steps: killable there (recovery orphans our forks).
      this.guard.leave();
      waitLatch(table.words, latchAt, idle <= SPIN_ROUNDS + DOZE_ROUNDS ? DOZE_MS : 1);
      this.guard.enter();
    }
    // Done by a thief (or by us while helping): the latch store published its outcome and payload.
    // Ordered by the latch load that saw SET (the finisher wrote the outcome before its latch exchange).
    marks.checkConsuming();
    marks.setConsuming(handle);
    const ok = table.fields.outcome(index) === Outcome.VALUE;
    this.forks.clearArgs(index);
    const stash = this.forks.takeStash(index);
    let value: unknown;
    try {
      if (stash !== undefined) {
        value = decode(stash, 0, stash.length, this.buffers.resolve);
      } else {
        value = decode(
          table.payloadBytes(index),
          table.payloadStart(index),
          table.fields.payloadLength(index),
          this.buffers.resolve,
        );
      }
    } finally {
      this.forks.forget(handle);
      table.release(index);
      marks.clearConsuming();
    }
    if (!ok) throw value;
    return value;
  }

  /** Runs a forked task we popped back, on this stack, without encoding its result; throws its error. */
  private runInline(handle: number): unknown {
    const table = this.table;
    const index = table.indexOf(handle);
    let args = this.forks.takeArgs(index);
    if (args === undefined) {
      try {
        args = decode(
          table.payloadBytes(index),
          table.payloadStart(index),
          table.fields.payloadLength(index),
          this.buffers.resolve,
        ) as unknown[];
      } catch (error) {
        this.forks.forget(handle);
        table.release(index);
        this.marks.clearConsuming();
        throw error;
      }
    }
    const fn = this.functions.all[table.fields.task(index)];
    const root = table.fields.root(index);
    this.forks.forget(handle);
    table.release(index);
    this.marks.clearConsuming();
    // Cancelled with the task that made it: not run (as a thief would not run it).
    const reason = root >= 0 ? this.signals.abortReason(root) : undefined;
    if (reason !== undefined) throw reason;
    let result: unknown;
    this.guard.leave();
    try {
      result = fn(...args);
    } finally {
      this.guard.enter();
      this.stats.bump(StatusWords.executed);
    }
    // One shape whoever runs b: a thief reports a promise as this same error (see Runner.execute).
    if (isThenable(result)) throw asyncForkError(fn);
    return result;
  }
}
