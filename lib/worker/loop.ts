/**
 * The worker loop: what each pool thread does, from start to exit.
 *
 * What it owns: one worker's side of the scheduling state — its deque (owner handle), its status line
 * (stats and the task it runs), its sleep word — and the order in which it looks for work:
 * 1. pop its own deque (newest first: the cache-warm end);
 * 2. pop the injector (tasks from outside the workers), moving a batch along into its own deque so that
 *    idle workers can steal from it (a burst submitted from the main thread spreads by stealing);
 * 3. steal half of a random other worker's deque (oldest first), trying each other worker once;
 * 4. spin a little, then doze (timed waits that no poster has to end, a few ms in all), then sleep by the
 *    protocol of `sleep.ts` (announce sleepy, search once more, sleep only if no work was posted meanwhile).
 *
 * Running a task: decode its arguments from the record (freeing overflow blocks at once), call the task
 * function, encode the result or the thrown error into the same record, publish DONE, queue the handle as a
 * completion and wake the main thread if it waits. A task that returns a promise is left running while the
 * worker goes on with other tasks; the worker then yields to its event loop between tasks, and sleeps with
 * `Atomics.waitAsync` rather than `Atomics.wait`, so the promise can settle.
 *
 * Forking (the {@link ForkJoinHost} of `join.ts`): a join's `b` is pushed on this worker's deque, unless no
 * thief could want it and running it inline is unobservable (`keepsInline`: a lazy join); a join waiting
 * for a stolen `b` helps with other work.
 *
 * Exit is cooperative (Deno cannot terminate a thread blocked in `Atomics.wait`): the pool sets the
 * lifecycle word to stopping and wakes every sleeper; the loop sees it at its next check and returns.
 *
 * Threads: a `WorkerLoop` is made and run by its own worker thread only.
 *
 * @module
 */

import { mem } from "../protocol/atomics.ts";
import { BufferRegistry, MissingBuffer } from "../codec/buffers.ts";
import { decode, Encoder } from "../codec/codec.ts";
import { Deque, EMPTY, RETRY, Stealer } from "../protocol/deque.ts";
import { Injector, QUEUE_EMPTY } from "../protocol/injector.ts";
import { latchIsSet, orphanLatch, SET, setLatch, UNSET, waitLatch } from "../protocol/latch.ts";
import { WorkerGuard } from "../protocol/kill_guard.ts";
import {
  ControlWords,
  MARK_WORDS,
  MarkWords,
  notesOf,
  NoteWords,
  type PoolLayout,
  StatusWords,
} from "../protocol/layout.ts";
import { IDLE_POSTED, IDLE_STOPPING, Sleep } from "../protocol/sleep.ts";
import { SLAB_FROM } from "../record/slabs.ts";
import { asyncForkError, callInline, isThenable } from "../forkjoin/join.ts";
import { type ForkJoinHost, setForkJoinHost, type TaskFunction as ForkFunction } from "../forkjoin/host.ts";
import { encodeOutcome } from "../codec/outcome.ts";
import { BUILTINS } from "./chunk.ts";
import { adopt, thenOf } from "./thenable.ts";
import { epochMs, TaskRecorder } from "../metrics.ts";
import { NO_RECORD, Origin, Outcome, PAYLOAD_BY_MESSAGE, TaskFlags, TaskState, TaskTable } from "../record/task.ts";
import { type PollingSignal, pollingSignal, type TaskContext } from "../forkjoin/task_context.ts";

/** What the pool sends a new worker thread. */
export interface WorkerSetup {
  /** The pool's buffer. */
  buffer: SharedArrayBuffer;
  /** Where everything lives in it. */
  layout: PoolLayout;
  /** This worker's index. */
  index: number;
  /** The task module to import. */
  moduleUrl: string;
  /** SharedArrayBuffers already passed by reference, by id. */
  buffers: [number, SharedArrayBuffer][];
  /** The payload arena of large payloads (slabs.ts), or undefined for none. */
  arena?: SharedArrayBuffer;
  /**
   * With metrics: when the pool was created (epoch ms), and the workers' histograms (see metrics.ts);
   * undefined without.
   */
  metrics?: { since: number; histograms: SharedArrayBuffer };
}

/** A task function as the worker calls it. */
type TaskFunction = (...args: unknown[]) => unknown;

/**
 * Idle rounds that spin (each a search and 32 pause hints) before dozing. Long enough to catch the next
 * task of a caller that awaits each one before it submits the next: a doze is a timed wait that no poster
 * ends, and with the kernel's timer slack one of 50 µs lasted about 100, so with 16 rounds a one-at-a-time
 * round trip took 100–105 µs on Node here, and 50–75 with 64 (bench: 7 × 2,000 sequential tasks, two
 * interleaved runs); 256 rounds gained nothing more. Tiny-task bursts were no slower.
 */
const SPIN_ROUNDS = 64;
/** Idle rounds that doze (each a search and a timed wait of DOZE_MS) before sleeping: a few ms in all. */
const DOZE_ROUNDS = 40;
/** One doze, in ms. */
const DOZE_MS = 0.05;
/** Why a forked task's arguments cannot move buffers (the end of the encoder's TypeError). */
const FORK_MOVE_REFUSAL = {
  refuse:
    "and a forked task's arguments cannot be moved (any worker may steal the fork): pass it without move() to copy it, or in a SharedArrayBuffer",
};

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
const RESULT_TRANSFER_FROM = 64 * 1024;

/** The most tasks a worker moves from the injector into its deque at once. */
const MAX_INJECTOR_BATCH = 64;

/**
 * One worker's loop over the pool's shared state.
 *
 * @example Usage
 * ```ts ignore
 * // In a pool thread (see worker_thread.ts):
 * const loop = new WorkerLoop(setup, functions, (id, sab) => port.post({ type: "buffer", id, sab }));
 * await loop.run();
 * ```
 */
export class WorkerLoop implements ForkJoinHost {
  private readonly index: number;
  private readonly control: Int32Array;
  private readonly status: Int32Array;
  private readonly statusAt: number;
  private readonly deque: Deque;
  private readonly stealers: Stealer[];
  private readonly injector: Injector;
  private readonly completions: Injector;
  private readonly sleep: Sleep;
  private readonly table: TaskTable;
  private readonly functions: TaskFunction[];
  /** Task id of each function (the module's exports, then the built-in tasks of `join.ts`). */
  private readonly ids = new Map<ForkFunction, number>();
  private lastForked: ForkFunction | undefined;
  private lastForkedId = -1;
  private readonly builtinIds = new Map<string, number>();
  private readonly encoder: Encoder;
  /**
   * By record index: the arguments of a task we forked with primitive arguments only, kept until we pop
   * it back (and run it with them) or read its result after a thief ran it. Thread-private.
   */
  private readonly forkedArgs: (unknown[] | undefined)[] = [];
  /**
   * Handles of the tasks we forked and have not joined yet, oldest first. While we wait (for a latch, or
   * for blocks to write a result into), the finished ones among them give their overflow blocks back: we
   * copy their payloads into {@link WorkerLoop.stashed}. Without that, a joiner that joins its forks in
   * one order while they finish in another could wait for a result that waits for blocks that an earlier
   * result holds, which the joiner reads only later: a deadlock on space.
   */
  private readonly outstanding: number[] = [];
  /** By record index: the payload bytes of a finished fork, copied out to free its blocks. */
  private readonly stashed = new Map<number, Uint8Array>();
  /*
   * Steps cut short. A stack overflow in a deep recursion (or any throw) can surface at any call inside
   * the pool's own code that a task reached through `join`, `scope` or a loop: the user's code catches it
   * and goes on, and the step it cut short would otherwise strand its record (a fork never joined, a
   * nested task never finished). These marks are plain field stores, which cannot themselves overflow;
   * at the top of the loop, where no join is in progress on this thread, `repairInterrupted` completes
   * what they show was cut short.
   */
  /** The handles of the tasks being run synchronously (`execute` entered, not returned), outermost first. */
  private readonly running: number[] = [];
  /** How many of {@link WorkerLoop.running} are live. */
  private runDepth = 0;
  /**
   * Beside {@link WorkerLoop.running}: the record index of the submitted task each run belongs to (itself,
   * or a fork's root), or -1. Forks made there carry it; their signal is its.
   */
  private readonly roots: number[] = [];
  /** The signals handed to tasks (`currentTask()`), by root record index, with the root's handle. */
  private readonly signals = new Map<number, { handle: number; polling: PollingSignal }>();
  /** The signal of a run that belongs to no submitted task: never aborted. */
  private readonly unowned = new AbortController().signal;
  /** Tasks whose `execute` was cut short (found when an enclosing `execute` returned): not finished. */
  private readonly interrupted: number[] = [];
  /** The fork being placed (allocated, not yet published by the deque push), or -1. */
  private pushing = -1;
  /** Our fork being consumed (popped back, or its result being read), not yet released, or -1. */
  private consuming = -1;
  /** The task being finished (DONE may be published, its completion or latch not yet), or -1. */
  private finishing = -1;
  /** A task taken from a queue and not yet registered by `execute` (see `running`), or -1. */
  private held = -1;
  /**
   * Marks in the pool's buffer (layout.ts NoteWords.marks, MarkWords), for the main thread if this thread
   * dies (recovery.ts): the task {@link WorkerLoop.held} names, until `start` has claimed it (QUEUED to
   * RUNNING); and what {@link WorkerLoop.pushing}, {@link WorkerLoop.moving}, {@link WorkerLoop.consuming}
   * and {@link WorkerLoop.freeing} name. Set with those fields and cleared with them (or, where this
   * thread repairs a mark itself, first: it takes over from the main thread). Plain element stores, not
   * facade calls (see the deque's notes): a call could be where the thread dies.
   */
  private readonly marks: Int32Array;
  /** A task moving from the injector into our deque (a batch), or -1. */
  private moving = -1;
  /** A record we must free and have not finished freeing (an orphan we finished), or -1. */
  private freeing = -1;
  private readonly buffers: BufferRegistry;
  private readonly bufferWaiters = new Map<number, () => void>();
  private readonly post: (message: unknown, transfer?: ArrayBuffer[]) => void;
  private pendingAsync = 0;
  private random: number;
  /** With metrics: this worker's task times and histograms, and its busy period (see metrics.ts). */
  private readonly stamps: TaskRecorder | undefined;
  private readonly metricsSince: number;
  private busySince = -1;
  private busyTotal = 0;
  /**
   * With metrics: the time the last task finished (or the busy period began), while the loop went straight
   * on to the next task (then its start): one clock read per task instead of two. -1 once another task
   * starts, or the loop runs broadcast parts, idles or yields.
   */
  private lastFinish = -1;
  /** Where this worker's `mail` word is (broadcast parts posted and not yet taken up: see broadcast.ts). */
  private readonly mailAt: number;
  /** The last search before sleeping saw mail: do not sleep (see `slice`). */
  private mailSeen = false;
  /** A broadcast part runs now, synchronously: `currentTask()` answers for it. */
  private broadcasting = false;
  /** Broadcast parts delivered and not yet run (the loop runs them, as it runs tasks). */
  private readonly parts: { id: number; taskId: number; bytes: Uint8Array }[] = [];
  /** Tasks posted to this worker because their arguments move buffers (DIRECTED), in order: run first. */
  private readonly directedIn: number[] = [];
  /** The buffers each of those tasks' arguments moved, by handle, until it starts. */
  private readonly movedIn = new Map<number, ArrayBuffer[]>();
  private readonly broadcastEncoder: Encoder;
  /**
   * The kill guard (kill_guard.ts): while this worker holds a task that may be forced, it is down in user
   * code and between slices, and raised before every pool step. Entries: the loop's slice, the host
   * methods that task code calls (fork, join), the callbacks of async tasks and messages.
   */
  private readonly guard: WorkerGuard;

  /**
   * Opens this worker's view of the pool.
   *
   * @param setup What the pool sent.
   * @param functions The task module's functions, in the order of their sorted names.
   * @param post Sends a message to the main thread (rare events: a SharedArrayBuffer a result passes by
   * reference, a payload that found no free blocks).
   */
  constructor(
    setup: WorkerSetup,
    functions: TaskFunction[],
    post: (message: unknown, transfer?: ArrayBuffer[]) => void,
  ) {
    const { buffer, layout, index } = setup;
    const { workers, dequeCapacity, taskCapacity } = layout.shape;
    this.index = index;
    this.control = new Int32Array(buffer, layout.control, 3 * 16);
    this.status = new Int32Array(buffer, layout.status, workers * StatusWords.count);
    this.statusAt = index * StatusWords.count;
    const region = (i: number) => ({
      buffer,
      byteOffset: layout.deques + i * layout.dequeBytes,
      capacity: dequeCapacity,
    });
    // Notes in the pool's buffer: if this thread dies inside an operation, the main thread completes it.
    const notes = (at: number) => notesOf(buffer, layout, index, at);
    this.deque = new Deque(region(index), notes(NoteWords.deque));
    this.marks = notesOf(buffer, layout, index, NoteWords.marks, MARK_WORDS);
    // (The main thread's recovery of this worker's predecessor, if any, is done.)
    this.marks.fill(-1);
    this.stealers = Array.from({ length: workers }, (_, i) => new Stealer(region(i)));
    this.injector = new Injector(
      { buffer, byteOffset: layout.injector, capacity: taskCapacity },
      notes(NoteWords.injector),
    );
    this.completions = new Injector(
      { buffer, byteOffset: layout.completions, capacity: taskCapacity },
      notes(NoteWords.completions),
    );
    this.sleep = new Sleep(buffer, layout.sleep, workers);
    this.table = new TaskTable(buffer, layout, index, setup.arena);
    this.functions = [...functions];
    for (const [name, fn] of Object.entries(BUILTINS)) {
      this.builtinIds.set(name, this.functions.length);
      this.functions.push(fn as TaskFunction);
    }
    this.functions.forEach((fn, id) => this.ids.set(fn as ForkFunction, id));
    setForkJoinHost(this);
    this.post = post;
    this.buffers = new BufferRegistry(this.control, ControlWords.nextBufferId, (id, buffer) => {
      this.post({ type: "buffer", id, buffer });
    });
    for (const [id, sab] of setup.buffers) this.addBuffer(id, sab);
    // A large fork argument or fork result is copied once, into its slab (see EncoderOptions.deferFrom); a
    // very large result of a submitted task is copied here and transferred (EncoderOptions.transferFrom).
    this.encoder = new Encoder({
      shareBuffer: this.buffers.share,
      moves: FORK_MOVE_REFUSAL,
      deferFrom: SLAB_FROM,
      transferFrom: RESULT_TRANSFER_FROM,
    });
    this.random = (index * 0x9e3779b1 + 1) | 0;
    this.mailAt = this.statusAt + StatusWords.mail;
    this.broadcastEncoder = new Encoder({ shareBuffer: this.buffers.share });
    this.guard = new WorkerGuard(this.status, index);
    this.stamps = setup.metrics === undefined
      ? undefined
      : new TaskRecorder(buffer, layout, setup.metrics.histograms, index);
    this.metricsSince = setup.metrics?.since ?? 0;
    if (this.stamps !== undefined) {
      // A replacement goes on from its predecessor's total; the period that death cut off is not counted.
      this.busyTotal = mem.load(this.status, this.statusAt + StatusWords.busyMs);
      mem.store(this.status, this.statusAt + StatusWords.busySinceMs, -1);
    }
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

  /**
   * This thread. Runs until the pool stops.
   *
   * @returns When the lifecycle word says stopping.
   */
  run(): Promise<void> {
    return new Promise((resolve) => {
      this.finished = resolve;
      // Every slice of the loop starts in a macrotask of its own, never in a promise job: Deno stalls a
      // worker that reaches its heap limit inside a promise job instead of ending it (the task would
      // never settle); in a macrotask the worker dies of ERR_WORKER_OUT_OF_MEMORY, and the pool
      // recovers. (An async task's own code after an await still runs in promise jobs.)
      macrotask(() => this.slice());
    });
  }

  /** Resolves `run()`'s promise. */
  private finished: () => void = () => {};
  private idle = 0;
  private sinceYield = 0;

  /** Continues the loop in a new macrotask once `wait` settles. */
  private resumeAfter(wait: Promise<unknown>): void {
    wait.then(
      () => macrotask(() => this.slice()),
      // Never expected; but a loop that silently stopped would strand its deque: die loudly instead (the
      // pool notices, recovers what this worker held, and starts a replacement).
      (error) =>
        macrotask(() => {
          throw error;
        }),
    );
  }

  /**
   * Runs the loop until it must wait for the event loop (a shared buffer to arrive, async tasks to make
   * progress, an asynchronous sleep) or the pool stops; then schedules its own continuation.
   */
  private slice(): void {
    this.guard.enter();
    try {
      this.loop();
    } finally {
      this.guard.leave();
    }
  }

  /** {@link WorkerLoop.slice}'s work. */
  private loop(): void {
    while (!this.stopping()) { // spec: LoopReadLifecycle
      // No join is in progress here: any fork not joined, or step not completed, was cut short.
      if (this.cutShort()) this.repairInterrupted();
      if (this.parts.length !== 0) {
        this.lastFinish = -1;
        this.runParts();
      }
      // A broadcast part waits in this thread's messages: let the event loop deliver it.
      if (mem.load(this.status, this.mailAt) !== 0) {
        this.endBusy();
        return macrotask(() => this.slice());
      }
      // A task posted to us with moved buffers first (only we can run it), else one from the queues.
      const handle = this.directedIn.length !== 0 ? this.takeDirected() : this.findWork(); // held (see `held`)
      if (handle >= 0) {
        this.idle = 0;
        if (this.stamps !== undefined && this.busySince < 0) this.beginBusy();
        const pending = this.execute(handle);
        if (pending !== undefined) {
          this.endBusy();
          return this.resumeAfter(pending);
        }
        // Async tasks settle only when the event loop runs: let it, now and then, while they are pending.
        if (this.pendingAsync > 0 && ++this.sinceYield >= 16) {
          this.sinceYield = 0;
          this.endBusy();
          return macrotask(() => this.slice());
        }
        continue;
      }
      if (this.busySince >= 0) this.endBusy();
      this.idle++;
      if (this.idle <= SPIN_ROUNDS) {
        for (let i = 0; i < 32; i++) mem.pause();
        continue;
      }
      // Doze (timed waits nobody has to wake) before sleeping; not with async tasks pending, whose
      // event loop must run: those workers go straight to sleepAsync.
      if (this.idle <= SPIN_ROUNDS + DOZE_ROUNDS && this.pendingAsync === 0) {
        this.sleep.doze(this.index, DOZE_MS);
        continue;
      }
      this.idle = 0;
      // Going to sleep: our cached free records go back to the shared list, where others can use them;
      // the main thread may be waiting for records (its backlog), so it is told as for a completion.
      if (this.table.flushCache() > 0) this.wakeMain();
      // And a scratch buffer grown by large payloads is not kept while we sleep.
      this.encoder.trim();
      this.mailSeen = false;
      const late = this.sleep.idle(this.index, () => this.lastSearch(), () => this.stopping());
      if (late >= 0) {
        const pending = this.execute(late); // held by findWork

        if (pending !== undefined) return this.resumeAfter(pending);
        continue;
      }
      if (late === IDLE_STOPPING) break;
      if (late === IDLE_POSTED) continue;
      if (this.mailSeen) {
        // Mail came after the loop's check: counted as sleeping already, leave that state at once (a
        // sleep of 0 ms, the protocol's timed-out sleep) and go read it.
        this.sleep.sleep(this.index, 0);
        continue;
      }
      this.bump(StatusWords.sleeps);
      if (this.pendingAsync > 0) {
        return this.resumeAfter(
          this.sleep.sleepAsync(this.index).then((woken) => {
            if (woken) this.bump(StatusWords.wakes);
          }),
        );
      }
      if (this.sleep.sleep(this.index)) this.bump(StatusWords.wakes);
    }
    // Let async tasks still running finish and report, so none is lost on a graceful close.
    if (this.pendingAsync > 0) {
      yieldToEventLoop().then(() => this.slice());
      return;
    }
    this.finished();
  }

  /** With metrics: a busy period begins (published, so that utilization counts it while it lasts). */
  private beginBusy(): void {
    this.busySince = epochMs();
    this.lastFinish = this.busySince; // the task about to start starts now
    mem.store(this.status, this.statusAt + StatusWords.busySinceMs, Math.floor(this.busySince - this.metricsSince));
  }

  /**
   * With metrics: the busy period under way (if any) ends (at the last task's finish, if the loop went
   * straight on from it); its time is added and published.
   */
  private endBusy(): void {
    const end = this.lastFinish;
    this.lastFinish = -1;
    if (this.busySince < 0) return;
    this.busyTotal += (end >= 0 ? end : epochMs()) - this.busySince;
    this.busySince = -1;
    mem.store(this.status, this.statusAt + StatusWords.busyMs, Math.floor(this.busyTotal));
    mem.store(this.status, this.statusAt + StatusWords.busySinceMs, -1);
  }

  /** The search before sleeping (after announcing it): work, or mail, which must not wait for a wake. */
  private lastSearch(): number {
    if (mem.load(this.status, this.mailAt) !== 0) {
      this.mailSeen = true;
      return -1;
    }
    return this.findWork();
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

  /** The next posted task whose record is still its own (a submission cut short may have freed one), or -1. */
  private takeDirected(): number {
    while (this.directedIn.length !== 0) {
      const handle = this.directedIn.shift()!;
      if (this.table.isCurrent(handle)) return handle;
      this.movedIn.delete(handle);
    }
    return -1;
  }

  /** Runs the broadcast parts taken so far, in order. */
  private runParts(): void {
    for (const part of this.parts.splice(0)) this.runPart(part.id, part.taskId, part.bytes);
  }

  /** Runs one broadcast part and posts its encoded outcome; an async task's when it settles. */
  private runPart(id: number, taskId: number, bytes: Uint8Array): void {
    const report = (failed: boolean, value: unknown) => {
      const encoder = this.broadcastEncoder;
      const outcome = encodeOutcome(encoder, value, failed);
      this.post({ type: "broadcast-result", id, bytes: encoder.snapshot(), failed: outcome === Outcome.ERROR });
    };
    let result: unknown;
    let then: unknown;
    this.broadcasting = true;
    try {
      const args = decode(bytes, 0, bytes.length, this.buffers.resolve) as unknown[];
      result = this.functions[taskId](...args);
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
    this.pendingAsync++;
    adopt(result, then).then(
      (value) => {
        this.pendingAsync--;
        report(false, value);
      },
      (error) => {
        this.pendingAsync--;
        report(true, error);
      },
    );
  }

  private stopping(): boolean {
    return mem.load(this.control, ControlWords.lifecycle) !== 0;
  }

  /**
   * Counts an event in our status words. This worker is their only writer, so a plain increment does:
   * the main thread's `stats()` reads whatever recent value is there (an atomic add cost 6–12 ns a task).
   */
  private bump(field: number, amount = 1): void {
    const at = this.statusAt + field;
    mem.write(this.status, at, mem.read(this.status, at) + amount);
  }

  /**
   * Own deque (newest first); then the injector, taking a batch along into our deque (Tokio's move): a
   * fair share of what is queued, at most half our deque, so that idle workers can steal from us; then
   * half of a random other worker's deque.
   */
  private findWork(): number {
    // What it returns is held (see `held`) until `execute` registers it: a stale mark is completed first.
    if ((this.held & this.moving) !== -1) this.repairMarks();
    const own = this.deque.pop(); // spec: FindPopOwn
    if (own !== EMPTY) {
      this.held = this.marks[MarkWords.held] = own;
      return own;
    }
    const injected = this.injector.pop(); // spec: FindPopInjector
    if (injected !== QUEUE_EMPTY) {
      this.held = this.marks[MarkWords.held] = injected;
      const workers = this.stealers.length;
      const want = Math.min((this.injector.length / workers) | 0, this.deque.capacity >> 1, MAX_INJECTOR_BATCH);
      let moved = 0;
      while (moved < want) {
        const next = this.injector.pop(); // spec: BatchPopInjector
        if (next === QUEUE_EMPTY) break;
        this.moving = this.marks[MarkWords.moving] = next;
        if (!this.deque.push(next)) { // spec: BatchPushOwn
          this.injector.pushPatiently(next);
          this.moving = this.marks[MarkWords.moving] = -1;
          break;
        }
        this.moving = this.marks[MarkWords.moving] = -1;
        moved++;
      }
      this.bump(StatusWords.injectorPops, moved + 1);
      // Work others could steal from us now: tell a sleeper, if there is one.
      if (moved > 0) this.sleep.newWork();
      return injected;
    }
    const workers = this.stealers.length;
    if (workers > 1) {
      let r = this.random;
      r ^= r << 13;
      r ^= r >>> 17;
      r ^= r << 5;
      this.random = r;
      const start = (r >>> 0) % workers;
      for (let k = 0; k < workers; k++) {
        const victim = (start + k) % workers;
        if (victim === this.index) continue;
        this.bump(StatusWords.stealAttempts);
        let moved = this.stealers[victim].stealHalfInto(this.deque); // spec: FindStealHalf
        if (moved === RETRY) moved = this.stealers[victim].stealHalfInto(this.deque);
        if (moved > 0) {
          this.bump(StatusWords.successfulSteals);
          this.bump(StatusWords.stolen, moved);
          if (moved > 1) this.sleep.newWork();
          const mine = this.deque.pop(); // spec: FindPopStolen
          if (mine !== EMPTY) {
            this.held = this.marks[MarkWords.held] = mine;
            return mine;
          }
        }
      }
    }
    return -1;
  }

  /**
   * Runs one task; returns a promise only if it must wait for a shared buffer to arrive first. Inside a
   * join (`requeue`) the event loop cannot run, so that buffer's message could not arrive: the task goes
   * back to the injector instead, for a worker that has the buffer (its forker does).
   */
  private execute(handle: number, requeue = false, claimed = false): Promise<void> | undefined {
    const depth = this.runDepth;
    this.running[depth] = handle;
    this.runDepth = depth + 1;
    this.held = -1;
    const pending = this.start(handle, requeue, claimed);
    // Runs nested inside this one (in a join's wait) that never returned were cut short: keep them.
    if (this.runDepth !== depth + 1) this.strand(depth + 1);
    this.runDepth = depth;
    return pending;
  }

  /** Moves the entries of {@link WorkerLoop.running} from `from` up to {@link WorkerLoop.interrupted}. */
  private strand(from: number): void {
    for (let i = from; i < this.runDepth; i++) this.interrupted.push(this.running[i]);
  }

  /** {@link WorkerLoop.execute}'s work. */
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
      if (mem.compareExchange(words, stateAt, TaskState.QUEUED, TaskState.RUNNING) !== TaskState.QUEUED) { // spec: ExecCasRunning
        // CANCELLED: its caller aborted it while it waited, and forgot the record: ours to free, never run.
        this.marks[MarkWords.held] = -1;
        if (this.movedIn.size !== 0) this.movedIn.delete(handle);
        table.release(index);
        return undefined;
      }
    }
    // Claimed (RUNNING, ours): a death from here on is the running task's (the main thread rejects it).
    this.marks[MarkWords.held] = -1;
    const root = forked ? table.fields.root(index) : index;
    this.roots[this.runDepth - 1] = root;
    // One load of the flags that matter here: a submitted task's own, or a fork's root's.
    const flags = root >= 0 ? table.fields.loadFlags(root) : 0;
    if (!claimed && !forked) {
      // A submitted task whose timeout counts from its start: the main thread waits on the state word.
      if ((flags & TaskFlags.WATCH_START) !== 0) mem.notify(words, stateAt);
      if (this.stamps !== undefined) this.stamps.started(index, this.lastFinish >= 0 ? this.lastFinish : epochMs());
    }
    // Time passes in this task: the next one's start needs a clock read (or this one's finish).
    this.lastFinish = -1;
    // Aborted already: a fork, with the task that made it (through any depth of forks), so that its
    // joiner goes on; a submitted task, if the abort came while it was handed back to the queue (below).
    if ((flags & TaskFlags.ABORTED) !== 0) {
      table.freePayload(index);
      this.finish(handle, Outcome.ERROR, abortError(flags));
      return undefined;
    }
    let args: unknown;
    try {
      const moved = this.movedIn.size === 0 ? undefined : this.movedIn.get(handle);
      args = table.readPayload(index, this.buffers.resolve, undefined, moved);
      if (moved !== undefined) this.movedIn.delete(handle);
    } catch (error) {
      if (error instanceof MissingBuffer) {
        if (requeue) {
          // Handed back, not run: no longer ours to finish if cut short (see `running`), but in hand
          // until the push below.
          this.running[this.runDepth - 1] = -1;
          if (this.moving !== -1) this.repairMoving();
          this.moving = this.marks[MarkWords.moving] = handle;
          table.fields.storeState(index, TaskState.QUEUED);
          this.injector.pushPatiently(handle);
          this.moving = this.marks[MarkWords.moving] = -1;
          this.sleep.newWork();
          return undefined;
        }
        // Still RUNNING and ours while we wait (a death now is a death in a running task): resumed
        // without the claim.
        return this.waitForBuffer(error.id).then(() => {
          this.guard.enter();
          try {
            return this.execute(handle, false, true);
          } finally {
            this.guard.leave();
          }
        });
      }
      this.finish(handle, Outcome.ERROR, error);
      return undefined;
    }
    table.freePayload(index);
    const fn = this.functions[table.fields.task(index)];
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
    this.pendingAsync++;
    adopt(result, then).then(
      (value) => this.settleAsync(handle, Outcome.VALUE, value),
      (error) => this.settleAsync(handle, Outcome.ERROR, error),
    );
    return undefined;
  }

  /** An async task settled (in a promise job, outside the loop's slices): finishes it, guard raised. */
  private settleAsync(handle: number, outcome: number, value: unknown): void {
    this.guard.enter();
    this.pendingAsync--;
    this.finish(handle, outcome, value);
    this.guard.leave();
  }

  // ---- ForkJoinHost: join, scope and the parallel loops of join.ts call these on this thread ----

  /** The task id of an exported (or built-in) task function. */
  taskId(fn: ForkFunction): number {
    // A recursive fork names the same function again and again: skip the map for it.
    if (fn === this.lastForked) return this.lastForkedId;
    const id = this.ids.get(fn);
    if (id === undefined) {
      throw new TypeError(
        `Cannot fork '${fn.name || "anonymous"}' as it is not an exported function of the pool's task module: ` +
          "only exported functions can run on another worker (pass a closure as join's first argument instead)",
      );
    }
    this.lastForked = fn;
    this.lastForkedId = id;
    return id;
  }

  /** The task function with id `id`. */
  task(id: number): ForkFunction {
    return this.functions[id] as ForkFunction;
  }

  /** A built-in task of `join.ts`. */
  builtin(name: string): ForkFunction {
    return this.functions[this.builtinIds.get(name)!] as ForkFunction;
  }

  /** The task running synchronously now (see task_context.ts), or undefined between tasks. */
  context(): TaskContext | undefined {
    const depth = this.runDepth;
    if (depth === 0 && this.broadcasting) return { worker: this.index, id: -1, signal: this.unowned };
    if (depth === 0 || this.running[depth - 1] < 0) return undefined;
    const root = this.roots[depth - 1];
    if (root < 0) return { worker: this.index, id: -1, signal: this.unowned };
    const table = this.table;
    const handle = table.handleOf(root);
    let known = this.signals.get(root);
    if (known === undefined || known.handle !== handle) {
      known = { handle, polling: pollingSignal(() => this.abortReason(root)) };
      this.signals.set(root, known);
    }
    return {
      worker: this.index,
      id: table.fields.id(root),
      signal: known.polling.signal,
    };
  }

  /**
   * This thread. The main thread aborted the submitted task `handle`, which this worker runs: if the task
   * holds its signal, abort it now, so that its listeners run (an asynchronous task's, at an await).
   *
   * @param handle The task's handle.
   */
  aborted(handle: number): void {
    const known = this.signals.get(this.table.indexOf(handle));
    if (known !== undefined && known.handle === handle) known.polling.check();
  }

  /**
   * Why the submitted task in record `root` was aborted (an AbortError or a TimeoutError), or undefined
   * if it was not. One atomic load: pairs with the main thread's OR into the flags word.
   */
  private abortReason(root: number): unknown {
    const flags = this.table.fields.loadFlags(root);
    return (flags & TaskFlags.ABORTED) === 0 ? undefined : abortError(flags);
  }

  /**
   * Pushes `fn(...args)` on our deque as a forked task; -1 if it must run inline (no record, room, blocks),
   * or, for a `lazy` fork (join's b), if no thief needs it (see {@link WorkerLoop.keepsInline}).
   */
  fork(fn: ForkFunction, args: unknown[], lazy = false): number {
    const taskId = this.taskId(fn); // (first: a b that is not a task is an error whoever would run it)
    if (lazy && this.keepsInline(args)) return -1;
    this.guard.enter();
    try {
      return this.place(taskId, args);
    } finally {
      this.guard.leave();
    }
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
   * part of it. Reads two words, our deque's ends: it writes nothing, so no protocol step changes.
   */
  private keepsInline(args: unknown[]): boolean {
    // The deque first: a join that must fork anyway (a shallow deque, a thief about) does not scan its
    // arguments twice, here and in encoding them. Its two loads are `LengthRead` in ChaseLevTrace.tla.
    if (this.stealers.length !== 1 && this.deque.length < LAZY_DEQUE_DEPTH) return false;
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
   * A join's b or a spawn that {@link WorkerLoop.fork} did not fork, run inline by the task that made it:
   * not if that task was aborted (as its fork, popped back or stolen, would not run), and a promise from it
   * is an error (one contract, whoever runs it).
   */
  inline(fn: ForkFunction, args: unknown[]): unknown {
    const root = this.currentRoot();
    // One load of the root's flags, as runInline makes for a fork popped back.
    const reason = root >= 0 ? this.abortReason(root) : undefined;
    if (reason !== undefined) throw reason;
    return callInline(fn, args);
  }

  /** The record index of the submitted task the synchronous run under way belongs to, or -1 (see `roots`). */
  private currentRoot(): number {
    return this.runDepth > 0 ? this.roots[this.runDepth - 1] : -1;
  }

  /** {@link WorkerLoop.fork}'s work, guard raised. */
  private place(taskId: number, args: unknown[]): number {
    const table = this.table;
    this.encoder.encodeArgs(args); // a move() in them is refused (the encoder's mode, see finish)
    // (Checked after the arguments' getters ran: they are user code, which may have forked.)
    if (this.pushing !== -1) this.repairPushing();
    const handle = table.allocate();
    if (handle === NO_RECORD) return -1;
    // Ours alone until the deque push publishes it: if a step is cut short before, the repair frees it.
    this.pushing = this.marks[MarkWords.pushing] = handle;
    const index = table.indexOf(handle);
    if (!table.writeEncoded(index, this.encoder)) {
      table.release(index);
      this.pushing = this.marks[MarkWords.pushing] = -1;
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
    const root = this.currentRoot();
    table.fields.setRoot(index, root);
    table.fields.setId(index, root >= 0 ? table.fields.id(root) : -1);
    table.fields.setState(index, TaskState.QUEUED);
    // A push cut short published nothing (its one publishing store is its last step); one that returned
    // did, and the plain stores after it cannot be cut short: the fork is then outstanding.
    if (!this.deque.push(handle)) { // spec: ForkPushDeque
      table.release(index);
      this.pushing = this.marks[MarkWords.pushing] = -1;
      return -1;
    }
    this.outstanding[this.outstanding.length] = handle;
    this.pushing = this.marks[MarkWords.pushing] = -1;
    // Primitive arguments decode to equal values: if we pop the task back, we call it with these and skip
    // the decode. (Objects are decoded even then, so `b` sees a copy made at the fork whoever runs it.)
    if (this.encoder.flat) this.forkedArgs[index] = args;
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

  /** {@link WorkerLoop.joinForked}'s work, guard raised. */
  private awaitFork(handle: number): unknown {
    const table = this.table;
    const index = table.indexOf(handle);
    const latchAt = table.fields.latchWord(index);
    // It stays outstanding until consumed: a wait cut short leaves it there for the repair.
    let idle = 0;
    while (!latchIsSet(table.words, latchAt)) {
      // (Marks are checked in the loop: the tasks run below are user code, which may have been cut short.)
      if ((this.consuming & this.held) !== -1) this.repairMarks();
      const own = this.deque.pop(); // spec: JoinPopOwn
      if (own === handle) {
        this.consuming = this.marks[MarkWords.consuming] = handle;
        return this.runInline(handle);
      }
      if (own !== EMPTY) this.held = this.marks[MarkWords.held] = own;
      // Not ours: b was stolen, and this is older work of an enclosing join (or a batch). Run it.
      const work = own !== EMPTY ? own : this.findWork(); // held (see `held`) until `execute` registers it
      if (work >= 0) {
        idle = 0;
        void this.execute(work, true);
        continue;
      }
      if (this.stopping()) { // spec: JoinReadLifecycle
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
      // Our other finished forks give their blocks back while we wait (see `outstanding`).
      if (idle === SPIN_ROUNDS + 1 || (idle & 15) === 0) this.stashFinishedForks();
      // A wait is outside the pool's steps: killable there (recovery orphans our forks).
      this.guard.leave();
      waitLatch(table.words, latchAt, idle <= SPIN_ROUNDS + DOZE_ROUNDS ? DOZE_MS : 1);
      this.guard.enter();
    }
    // Done by a thief (or by us while helping): the latch store published its outcome and payload.
    // Ordered by the latch load that saw SET (the finisher wrote the outcome before its latch exchange).
    if (this.consuming !== -1) this.repairConsuming();
    this.consuming = this.marks[MarkWords.consuming] = handle;
    const ok = table.fields.outcome(index) === Outcome.VALUE;
    this.forkedArgs[index] = undefined;
    const stash = this.stashed.get(index);
    let value: unknown;
    try {
      if (stash !== undefined) {
        this.stashed.delete(index);
        value = decode(stash, 0, stash.length, this.buffers.resolve);
      } else {
        value = table.readPayload(index, this.buffers.resolve);
      }
    } finally {
      this.forget(handle);
      table.release(index);
      this.consuming = this.marks[MarkWords.consuming] = -1;
    }
    if (!ok) throw value;
    return value;
  }

  /** Removes `handle` from the forks not yet joined (usually the newest). */
  private forget(handle: number): void {
    const outstanding = this.outstanding;
    if (outstanding[outstanding.length - 1] === handle) outstanding.pop();
    else {
      const at = outstanding.lastIndexOf(handle);
      if (at >= 0) outstanding.splice(at, 1);
    }
  }

  /** Copies out the payloads of our finished, not yet joined forks that hold overflow blocks, freeing them. */
  private stashFinishedForks(): void {
    const table = this.table;
    for (const handle of this.outstanding) {
      const index = table.indexOf(handle);
      if (this.stashed.has(index) || !table.holdsBlocks(index)) continue;
      // The latch load that sees SET orders the finisher's payload writes before our reads.
      if (!latchIsSet(table.words, table.fields.latchWord(index))) continue;
      this.stashed.set(index, table.takePayloadBytes(index));
    }
  }

  /** Runs a forked task we popped back, on this stack, without encoding its result; throws its error. */
  private runInline(handle: number): unknown {
    const table = this.table;
    const index = table.indexOf(handle);
    let args = this.forkedArgs[index];
    if (args !== undefined) this.forkedArgs[index] = undefined;
    else {
      try {
        args = table.readPayload(index, this.buffers.resolve) as unknown[];
      } catch (error) {
        this.forget(handle);
        table.release(index);
        this.consuming = this.marks[MarkWords.consuming] = -1;
        throw error;
      }
    }
    const fn = this.functions[table.fields.task(index)];
    const root = table.fields.root(index);
    this.forget(handle);
    table.release(index);
    this.consuming = this.marks[MarkWords.consuming] = -1;
    // Cancelled with the task that made it: not run (as a thief would not run it).
    const reason = root >= 0 ? this.abortReason(root) : undefined;
    if (reason !== undefined) throw reason;
    let result: unknown;
    this.guard.leave();
    try {
      result = fn(...args);
    } finally {
      this.guard.enter();
      this.bump(StatusWords.executed);
    }
    // One shape whoever runs b: a thief reports a promise as this same error (see execute).
    if (isThenable(result)) throw asyncForkError(fn);
    return result;
  }

  private waitForBuffer(id: number): Promise<void> {
    return new Promise((resolve) => this.bufferWaiters.set(id, resolve));
  }

  /** Writes the outcome into the record, publishes DONE, and queues the completion. */
  private finish(handle: number, outcome: number, value: unknown): void {
    this.guard.release(handle);
    const table = this.table;
    const index = table.indexOf(handle);
    const encoder = this.encoder;
    const forked = table.fields.origin(index) === Origin.FORK;
    // A submitted task's result may move buffers back (move()); a fork's is copied to its joiner.
    encoder.moves = forked ? "copy" : "transfer";
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
    if (!forked && this.signals.size !== 0) this.signals.delete(index);
    if (!forked && this.stamps !== undefined) {
      const now = epochMs();
      this.stamps.finished(index, now);
      // The loop's own task (not one nested in a join's wait, nor an async one settling later): the loop
      // goes on to the next task from here.
      if (this.runDepth === 1) this.lastFinish = now;
    }
    // A forked task's joiner is a worker and cannot take a message: wait for blocks (1 ms steps) instead,
    // giving back the blocks of our own finished forks meanwhile (see `outstanding`).
    while (forked && !table.writeEncoded(index, encoder)) {
      this.stashFinishedForks();
      mem.wait(this.status, this.statusAt + StatusWords.count - 1, 0, 1);
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
    this.bump(StatusWords.executed);
    if (this.finishing !== -1) this.repairFinishing();
    this.finishing = handle;
    // Publishes the payload and outcome written above to the thread that pops this completion.
    table.fields.storeState(index, TaskState.DONE); // spec: FinishStoreDone
    if (forked) {
      // Set, then wake: a joiner that checked the latch before this store waits on the word with the
      // value UNSET and is woken by the notify; one that checks after it sees SET and does not wait.
      // If the forker died, the main thread orphaned the task: nobody will join it, the record is ours.
      this.publishFork(handle);
      return;
    }
    // Reset, so that a repair can tell whether this push got as far as publishing (see repairMarks).
    this.completions.published = QUEUE_EMPTY;
    this.completions.pushPatiently(handle); // spec: FinishPushCompletion
    this.finishing = -1;
    this.wakeMain();
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

  /** Sets a finished fork's latch (its joiner goes on), or frees it if it is an orphan. */
  private publishFork(handle: number): void {
    const table = this.table;
    if (!setLatch(table.words, table.fields.latchWord(table.indexOf(handle)))) {
      // The latch says SET now: a repair could no longer tell that this orphan is ours to free.
      if (this.freeing !== -1) this.repairFreeing();
      this.freeing = this.marks[MarkWords.freeing] = handle;
      this.finishing = -1;
      table.releaseHandle(handle);
      this.freeing = this.marks[MarkWords.freeing] = -1;
      // The main thread may have tasks waiting for a record (its backlog) and no completion coming to
      // tell it one is free: the orphan's forker was its task, already rejected. Tell it.
      this.wakeMain();
      return;
    }
    this.finishing = -1;
  }

  /** Whether any step was cut short (see `running`); at the top of the loop, where no join is in progress. */
  private cutShort(): boolean {
    return this.outstanding.length !== 0 || this.runDepth !== 0 || this.interrupted.length !== 0 ||
      this.marked() || this.deque.cutShort || this.injector.cutShort || this.completions.cutShort ||
      this.table.cutShort;
  }

  /**
   * Whether a single step's mark is set. Each mark is -1 when clear (all bits set) and a handle, which is
   * non-negative, when set: their AND is -1 only if all are clear.
   */
  private marked(): boolean {
    return (this.held & this.moving & this.pushing & this.consuming & this.finishing & this.freeing) !== -1;
  }

  /**
   * Completes the single steps a throw cut short (see `running`). Each mark is checked before it is set
   * (a step cut short must be completed before its mark is reused) and all of them at the top of the
   * loop. Each is cleared only once its repair is done: cut short itself, a repair resumes next time.
   */
  private repairMarks(): void {
    // The shared structures first: a claimed queue position or a hidden deque task holds up other threads.
    this.deque.repair();
    this.injector.repair();
    this.completions.repair();
    if (this.table.repairCut() > 0) this.wakeMain();
    if (this.freeing !== -1) this.repairFreeing();
    if (this.pushing !== -1) this.repairPushing();
    if (this.consuming !== -1) this.repairConsuming();
    if (this.held !== -1) this.repairHeld();
    if (this.moving !== -1) this.repairMoving();
    if (this.finishing !== -1) this.repairFinishing();
  }

  /** Whether `handle` is still the record's current handle and the record is in `state`. */
  private current(handle: number, state: number): boolean {
    const table = this.table;
    return table.isCurrent(handle) &&
      table.fields.loadState(table.indexOf(handle)) === state;
  }

  /** Whether `handle` is current and waits to be taken: QUEUED, or CANCELLED (to be freed by its taker). */
  private queued(handle: number): boolean {
    return this.current(handle, TaskState.QUEUED) || this.current(handle, TaskState.CANCELLED);
  }

  /** A record ours to free (an orphan we finished): free it. */
  private repairFreeing(): void {
    this.marks[MarkWords.freeing] = -1; // (this thread takes over from the main thread: see repairHeld)
    this.drop(this.freeing);
    this.table.releaseHandle(this.freeing);
    this.freeing = -1;
  }

  /** A fork cut short before its push published it: free its record. */
  private repairPushing(): void {
    // This thread frees it, not the main thread (see repairHeld).
    this.marks[MarkWords.pushing] = -1;
    this.drop(this.pushing);
    this.table.releaseHandle(this.pushing);
    this.pushing = -1;
  }

  /** Our fork, popped back or finished, cut short while consumed: forget it and free its record. */
  private repairConsuming(): void {
    this.marks[MarkWords.consuming] = -1; // (this thread takes over from the main thread: see repairHeld)
    this.forget(this.consuming);
    this.drop(this.consuming);
    this.table.releaseHandle(this.consuming);
    this.consuming = -1;
  }

  /** A task taken and not started: back to our deque (we run it soon), or the injector if it is full. */
  private repairHeld(): void {
    const handle = this.held;
    // This thread puts it back, not the main thread (were it to die before the push, it would be lost
    // rather than run twice).
    this.marks[MarkWords.held] = -1;
    // A CANCELLED one goes back too: whoever takes it next frees it.
    if (this.queued(handle) && !this.deque.push(handle)) this.injector.pushPatiently(handle);
    this.held = -1;
    this.sleep.newWork();
  }

  /** A task on its way between the injector and our deque: into our deque, or back to the injector. */
  private repairMoving(): void {
    this.marks[MarkWords.moving] = -1; // (this thread takes over from the main thread: see repairHeld)
    if (!this.deque.push(this.moving)) this.injector.pushPatiently(this.moving);
    this.moving = -1;
    this.sleep.newWork();
  }

  /**
   * A finish cut short after publishing DONE: publish it again (a latch set twice is still set; a
   * completion is pushed again only if the queue's published mark says it did not get there).
   */
  private repairFinishing(): void {
    const handle = this.finishing;
    if (this.current(handle, TaskState.DONE)) {
      const table = this.table;
      if (table.fields.origin(table.indexOf(handle)) === Origin.FORK) {
        this.publishFork(handle);
      } else if (this.completions.published !== handle) {
        this.completions.pushPatiently(handle);
        this.wakeMain();
      }
    }
    this.finishing = -1;
  }

  /** Forgets what this thread keeps for record `handle` outside the table (forked arguments, a stash). */
  private drop(handle: number): void {
    const index = this.table.indexOf(handle);
    this.forkedArgs[index] = undefined;
    this.stashed.delete(index);
  }

  /**
   * Completes what a throw cut short inside the pool's own code (see {@link WorkerLoop.running}). Called
   * at the top of the loop, where no join is in progress on this thread, so every record this thread
   * still holds there is such a step's: the single steps' marks (see `repairMarks`); runs cut short (not
   * started: run again; started: failed with a RangeError that says so); forks never joined (orphaned,
   * so that whoever finishes them frees them, or freed if finished).
   */
  private repairInterrupted(): void {
    const table = this.table;
    // This thread puts back what it held, not the main thread (see repairHeld).
    this.marks[MarkWords.held] = -1;
    this.repairMarks();
    if (this.runDepth !== 0) this.strand(0);
    this.runDepth = 0;
    this.encoder.reset();
    // Runs cut short: one that had not started (still QUEUED: cut short before its first step) goes
    // back to be run; one that had started fails (its caller, a promise or a joiner, goes on).
    for (const handle of this.interrupted.splice(0)) {
      if (handle === -1) continue;
      if (this.queued(handle)) {
        if (!this.deque.push(handle)) this.injector.pushPatiently(handle);
        this.sleep.newWork();
        continue;
      }
      if (!this.current(handle, TaskState.RUNNING)) continue;
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
    // Forks never joined: nobody will join them now.
    for (const handle of this.outstanding.splice(0)) {
      if (!table.isCurrent(handle)) continue;
      this.drop(handle);
      // Finished already: free it here; else whoever finishes it frees it.
      const before = orphanLatch(table.words, table.fields.latchWord(table.indexOf(handle)));
      if (before === SET) table.releaseHandle(handle);
    }
    // Records freed above may have gone to our cache: give them to the shared list (the main thread's
    // backlog may be waiting for them, with no completion coming to tell it).
    if (table.flushCache() > 0) this.wakeMain();
  }

  /** Wakes the main thread, only if it said it waits (it sets the word, then re-checks the queue). */
  private wakeMain(): void {
    if (mem.load(this.control, ControlWords.mainWaiting) === 1) { // spec: FinishReadMainWaiting
      if (mem.exchange(this.control, ControlWords.mainWaiting, 0) === 1) { // spec: FinishTakeMainWaiting
        mem.notify(this.control, ControlWords.mainWaiting, 1); // spec: FinishNotifyMain
      }
    }
  }
}

/** The error an aborted task's signal and forks see, from its flags: a TimeoutError or an AbortError. */
function abortError(flags: number): DOMException {
  return (flags & TaskFlags.TIMED_OUT) !== 0
    ? new DOMException("The task ran past its timeout", "TimeoutError")
    : new DOMException("The task's caller aborted it", "AbortError");
}

/** Calls `callback` in a macrotask of its own (setImmediate where there is one, else a 0 ms timer). */
function macrotask(callback: () => void): void {
  const immediate = (globalThis as { setImmediate?: (callback: () => void) => unknown }).setImmediate;
  if (immediate !== undefined) immediate(callback);
  else setTimeout(callback, 0);
}

function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}
