/**
 * The worker loop: what each pool thread does, from start to exit, and the assembly of its parts.
 *
 * The parts, one concern a file, each owning its state (collaborators are passed to constructors, in the
 * order built below):
 * - search.ts: where work is found (own deque, the injector one task at a time, stealing) and the idle path (spin, doze,
 *   the sleep protocol of protocol/sleep.ts);
 * - runner.ts: claiming, running and finishing a task;
 * - fork_join.ts: the {@link ForkJoinHost} of forkjoin/join.ts (fork, lazy join, join's wait);
 * - marks.ts: the marks of single steps in progress, their repairs, and the publishing step of a finish;
 *   runs.ts: the runs under way; forks.ts: the forks not yet joined;
 * - mail.ts: broadcast parts, directed tasks, the mail word, buffers on their way;
 * - signals.ts: the task context and its AbortSignal; stats.ts: counters and busy time; functions.ts:
 *   task ids.
 *
 * The loop itself: at each turn it completes steps cut short (none is in progress at the top of the loop),
 * runs broadcast parts, lets the event loop deliver mail, runs a directed task or one the search finds, and
 * otherwise takes one idle round. A task that returns a promise is left running while the worker goes on
 * with other tasks; the worker then yields to its event loop between tasks, and sleeps with
 * `Atomics.waitAsync` rather than `Atomics.wait`, so the promise can settle. With a bound on async tasks
 * (the pool's `asyncTasksPerWorker`), a worker holding that many takes no task until one settles: it ends
 * its slice and resumes on the runner's `room()` promise (no busy loop; awake for the sleep protocol, so
 * posters wake a sleeper instead; broadcast parts still wake it to run).
 *
 * Exit is cooperative (Deno cannot terminate a thread blocked in `Atomics.wait`): the pool sets the
 * lifecycle word to stopping and wakes every sleeper; the loop sees it at its next check and returns.
 *
 * Threads: a `WorkerLoop` is made and run by its own worker thread only.
 *
 * @module
 */

import { BufferRegistry } from "../codec/buffers.ts";
import { Encoder } from "../codec/codec.ts";
import { Injector } from "../protocol/injector.ts";
import { WorkerGuard } from "../protocol/kill_guard.ts";
import { ControlWords, MARK_WORDS, NOTE_WORDS, NoteWords, type PoolLayout } from "../protocol/layout.ts";
import { PoolMemory } from "../protocol/memory.ts";
import { ProgressReporter } from "../progress/reporter.ts";
import { type HandleReply, HandleRequests } from "./handles.ts";
import { eventLoopHolds } from "../runtime/holds.ts";
import { SLAB_FROM } from "../record/slabs.ts";
import { type ForkJoinHost, setForkJoinHost } from "../forkjoin/host.ts";
import { TaskTable } from "../record/task.ts";
import { ForkJoin } from "./fork_join.ts";
import { Forks } from "./forks.ts";
import { type TaskFunction, TaskFunctions } from "./functions.ts";
import { Mail } from "./mail.ts";
import { Marks } from "./marks.ts";
import { FORK_MOVE_REFUSAL, RESULT_TRANSFER_FROM, Runner } from "./runner.ts";
import { Runs } from "./runs.ts";
import { Search, SEARCH_RETIRE, SEARCH_SLEEP_ASYNC, SEARCH_STOP, type SearchElastic } from "./search.ts";
import { Slots } from "../protocol/slots.ts";
import { TaskSignals } from "./signals.ts";
import { WorkerStats } from "./stats.ts";
import { type RecycleBounds, RecycleWatch } from "./setup.ts";
import type { Sleep } from "../protocol/sleep.ts";

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
   * The most async tasks this worker holds at once (the pool's `asyncTasksPerWorker`; Infinity for no
   * bound): at it, the loop takes no task until one settles.
   */
  asyncTasksPerWorker: number;
  /**
   * With metrics: when the pool was created (epoch ms), and the workers' histograms (see metrics.ts);
   * undefined without.
   */
  metrics?: { since: number; histograms: SharedArrayBuffer };
  /** The pool's `workerData` (structured-cloned), for the module's `setupWorker` (setup.ts). */
  workerData?: unknown;
  /** The pool's `recycle` bounds (setup.ts), or undefined for none. */
  recycle?: RecycleBounds;
  /**
   * An elastic pool's bounds (issue 49, protocol/slots.ts): the fewest workers it keeps and how long a
   * worker sleeps before it retires. Undefined for a fixed pool.
   */
  elastic?: { min: number; idleTimeout: number };
}

/**
 * One worker's loop over the pool's shared state.
 *
 * @example Usage
 * ```ts ignore
 * // In a pool thread (see boot.ts):
 * const loop = new WorkerLoop(setup, functions, (message, transfer) => port.post(message, transfer));
 * await loop.run();
 * ```
 */
export class WorkerLoop {
  private readonly search: Search;
  private readonly runner: Runner;
  private readonly mail: Mail;
  /** Pool handles asked of the owner by tasks (`poolHandle()`). */
  private readonly handles: HandleRequests;
  private readonly marks: Marks;
  private readonly signals: TaskSignals;
  private readonly stats: WorkerStats;
  /**
   * The kill guard (kill_guard.ts): while this worker holds a task that may be forced, it is down in user
   * code and between slices, and raised before every pool step. Entries: the loop's slice, the host
   * methods that task code calls (fork, join), the callbacks of async tasks and messages.
   */
  private readonly guard: WorkerGuard;
  /** Resolves `run()`'s promise. */
  private finished: () => void = () => {};
  /** An elastic pool's slots (protocol/slots.ts); undefined in a fixed pool. */
  private readonly slots: Slots | undefined = undefined;
  private readonly index: number;
  private readonly post: (message: unknown, transfer?: ArrayBuffer[]) => void;
  /** Tasks run since the loop last yielded to the event loop while async tasks were pending. */
  private sinceYield = 0;
  /** With the pool's `recycle` option: when this worker is due to leave (setup.ts). */
  private readonly recycle: RecycleWatch | undefined;
  /** Due to be recycled: takes no task from the queues any more (see {@link WorkerLoop.leaving}). */
  private recycling = false;
  /** The owner's `leave`: everything it posted to this worker before it deferred its posts has arrived. */
  private leaveAllowed = false;
  private readonly sleep: Sleep;

  /**
   * Opens this worker's view of the pool and builds its parts.
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
    const index = setup.index;
    // This thread's views of the pool's memory, opened once; every part takes what it needs from it.
    const memory = new PoolMemory(setup.buffer, setup.layout, setup.arena);
    const { control, status, workers } = memory;
    this.handles = new HandleRequests((message) => post(message));
    // Notes in the pool's buffer: if this thread dies inside an operation, the main thread completes it.
    const notes = (at: number) => memory.notes(index, at);
    const deque = memory.deque(index, notes(NoteWords.deque));
    const markWords = memory.notes(index, NoteWords.marks, MARK_WORDS);
    // (The main thread's recovery of this worker's predecessor, if any, is done.)
    markWords.fill(-1);
    const levels = memory.levels([
      notes(NoteWords.injectorHigh),
      notes(NoteWords.injector),
      notes(NoteWords.injectorLow),
    ]);
    // Each producer's completion queue (slot 0: the owner's), with this worker's notes on each.
    const completions = memory.channels.map((channel) =>
      new Injector(
        channel.queue,
        notes(
          channel.slot === 0 ? NoteWords.completions : NoteWords.producerCompletions + (channel.slot - 1) * NOTE_WORDS,
        ),
      )
    );
    const sleep = memory.sleep;
    const table = new TaskTable(memory, { owner: index });
    const tasks = new TaskFunctions(functions);
    const buffers = new BufferRegistry(control, ControlWords.nextBufferId, (id, buffer) => {
      post({ type: "buffer", id, buffer });
    });
    // A large fork argument or fork result is copied once, into its slab (see EncoderOptions.deferFrom); a
    // very large result of a submitted task is copied here and transferred (EncoderOptions.transferFrom).
    const encoder = new Encoder({
      shareBuffer: buffers.share,
      moves: FORK_MOVE_REFUSAL,
      deferFrom: SLAB_FROM,
      transferFrom: RESULT_TRANSFER_FROM,
    });
    const guard = new WorkerGuard(status, index);
    const stats = new WorkerStats(memory, index, setup.metrics);
    const forks = new Forks(table);
    const runs = new Runs();
    const marks = new Marks({ memory, words: markWords, table, deque, levels, completions, forks, runs });
    const mail = new Mail({ memory, index, table, functions: tasks, buffers, post, guard });
    for (const [id, sab] of setup.buffers) mail.addBuffer(id, sab);
    const signals = new TaskSignals(index, table, runs, mail, new ProgressReporter(memory, table, guard));
    // ---- an elastic pool (issue 49): this worker's slot, its retirement, its asks for growth ----
    let elastic: SearchElastic | undefined;
    if (setup.elastic !== undefined) {
      const slots = new Slots(control, sleep.words, status, workers);
      elastic = { slots, ...setup.elastic, wantWorker: () => post({ type: "grow" }) };
      this.slots = slots;
    }
    const search = new Search({ index, memory, deque, levels, table, encoder, marks, mail, stats, elastic });
    const runner = new Runner({
      index,
      status,
      table,
      encoder,
      buffers,
      functions: tasks,
      marks,
      runs,
      forks,
      mail,
      signals,
      stats,
      guard,
      post,
      asyncBound: setup.asyncTasksPerWorker,
      graph: { words: memory.graph, deque, levels, sleep },
    });
    const host: ForkJoinHost = new ForkJoin({
      index,
      workers,
      table,
      deque,
      sleep,
      encoder,
      buffers,
      functions: tasks,
      forks,
      marks,
      runs,
      runner,
      search,
      signals,
      stats,
      guard,
      handles: this.handles,
    });
    setForkJoinHost(host);
    this.search = search;
    this.runner = runner;
    this.mail = mail;
    this.marks = marks;
    this.signals = signals;
    this.stats = stats;
    this.guard = guard;
    this.sleep = sleep;
    this.index = index;
    this.post = post;
    this.recycle = setup.recycle === undefined ? undefined : new RecycleWatch(setup.recycle);
    // Loaded: STARTING → AWAKE, from here thieves and directed posts see this worker (a replacement of a
    // dead worker finds its slot AWAKE already).
    this.slots?.bootStoreAwake(index);
  }

  /**
   * This thread, from its message handler: the owner's `leave`, answering our `recycle-ready` (see
   * {@link WorkerLoop.leaving}).
   */
  leave(): void {
    this.leaveAllowed = true;
  }

  /**
   * This thread, from its message handler. The owner's answer to a task's `poolHandle()` (handles.ts).
   *
   * @param reply The reply.
   */
  handleReply(reply: HandleReply): void {
    this.handles.reply(reply);
  }

  /**
   * This thread. Records a SharedArrayBuffer passed by reference (sent by the main thread).
   *
   * @param id Its id.
   * @param buffer The buffer.
   */
  addBuffer(id: number, buffer: SharedArrayBuffer): void {
    this.mail.addBuffer(id, buffer);
  }

  /**
   * This thread, from its message handler. Takes a broadcast part (see mail.ts).
   *
   * @param id The part's id.
   * @param taskId The task.
   * @param bytes Its encoded arguments.
   */
  broadcast(id: number, taskId: number, bytes: Uint8Array): void {
    this.mail.broadcast(id, taskId, bytes);
    // A loop waiting for room below its bound of async tasks still runs broadcast parts: those tasks
    // may be waiting for this part's effect.
    this.runner.wakeRoom();
  }

  /**
   * This thread, from its message handler. Takes a task posted to this worker with the buffers its
   * arguments moved (see mail.ts).
   *
   * @param handle The task's handle.
   * @param moved The moved buffers its arguments refer to.
   */
  directed(handle: number, moved: ArrayBuffer[]): void {
    this.mail.directed(handle, moved);
  }

  /**
   * This thread. The main thread aborted the submitted task `handle`, which this worker runs (see
   * signals.ts).
   *
   * @param handle The task's handle.
   */
  aborted(handle: number): void {
    this.signals.aborted(handle);
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

  /**
   * Async tasks and broadcast parts started and not yet settled, and whatever else in this thread needs
   * its event loop (a producer opened in a task, a pool handle on its way: runtime/holds.ts).
   */
  private pendingAsync(): number {
    return this.runner.pending + this.mail.pending + eventLoopHolds();
  }

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

  /** Counts a task the loop ran; when the worker is due to be recycled, starts leaving. */
  private ranOne(): void {
    const reason = this.recycle!.ranOne();
    if (reason === undefined || this.recycling) return;
    this.recycling = true;
    this.post({ type: "recycle-ready", reason });
    // Tasks left in our deque (moved there from the injector) stay stealable, and stay for our replacement
    // on this deque; a sleeper woken now steals them rather than wait for it (no wake is owed to us: a poster
    // wakes sleepers, and we never sleep again).
    this.sleep.newWork();
  }

  /**
   * A recycling worker's slices, after its loop stopped taking tasks from the queues: it runs what was
   * posted to it alone (broadcast parts, directed tasks: only it can run them) until the owner's `leave`
   * says nothing more comes (the owner defers later posts to the replacement), lets its async tasks settle,
   * then finishes, holding nothing: boot.ts runs the teardown and posts `exited`, and the owner starts the
   * replacement on this deque.
   */
  private leaving(): void {
    const mail = this.mail;
    this.stats.endBusy();
    if (this.marks.cutShort()) this.runner.repairInterrupted();
    if (mail.hasParts()) mail.runParts();
    if (mail.hasDirected()) {
      const handle = mail.takeDirected();
      if (handle >= 0) {
        this.search.found();
        const pending = this.runner.execute(handle);
        if (pending !== undefined) return this.resumeAfter(pending);
        return macrotask(() => this.slice());
      }
    }
    if (!this.leaveAllowed || this.pendingAsync() > 0 || mail.hasParts() || mail.hasDirected()) {
      setTimeout(() => this.slice(), LEAVE_POLL_MS);
      return;
    }
    this.finished();
  }

  /** {@link WorkerLoop.slice}'s work. */
  private loop(): void {
    const search = this.search;
    const runner = this.runner;
    const mail = this.mail;
    const stats = this.stats;
    while (!search.stopping() && !this.recycling) { // spec: LoopReadLifecycle
      // No join is in progress here: any fork not joined, or step not completed, was cut short.
      if (this.marks.cutShort()) runner.repairInterrupted();
      if (mail.hasParts()) {
        stats.lastFinish = -1;
        mail.runParts();
      }
      // A broadcast part waits in this thread's messages: let the event loop deliver it.
      if (mail.waiting()) {
        stats.endBusy();
        return macrotask(() => this.slice());
      }
      // At the bound of async tasks (asyncTasksPerWorker): take nothing, neither directed nor searched, until
      // one settles; the others take what is queued. Not asleep for the sleep protocol (a poster's wake
      // goes to a sleeper, who can take the task); holding nothing it has not started.
      if (runner.full()) {
        stats.endBusy();
        return this.resumeAfter(runner.room());
      }
      // A task posted to us with moved buffers first (only we can run it), else one from the queues.
      const handle = mail.hasDirected() ? mail.takeDirected() : search.findWork(); // held (see marks.ts)
      if (handle >= 0) {
        search.found();
        stats.busy();
        const pending = runner.execute(handle); // spec: RunTask
        if (this.recycle !== undefined) this.ranOne();
        if (pending !== undefined) {
          stats.endBusy();
          return this.resumeAfter(pending);
        }
        // Async tasks settle only when the event loop runs: let it, now and then, while they are pending.
        if (this.pendingAsync() > 0 && ++this.sinceYield >= 16) {
          this.sinceYield = 0;
          stats.endBusy();
          return macrotask(() => this.slice());
        }
        continue;
      }
      stats.idle();
      const late = search.idle(this.pendingAsync() !== 0);
      if (late >= 0) {
        const pending = runner.execute(late); // held by findWork
        if (this.recycle !== undefined) this.ranOne();
        if (pending !== undefined) return this.resumeAfter(pending);
        continue;
      }
      if (late === SEARCH_STOP) break;
      if (late === SEARCH_RETIRE) {
        void this.retire();
        return;
      }
      if (late === SEARCH_SLEEP_ASYNC) return this.resumeAfter(search.sleepAsync());
    }
    if (this.recycling && !search.stopping()) return this.leaving();
    // Let async tasks still running finish and report, so none is lost on a graceful close.
    if (this.pendingAsync() > 0) {
      yieldToEventLoop().then(() => this.slice());
      return;
    }
    this.finished();
  }

  /**
   * This thread, an elastic pool's worker whose sleep ended in a retirement (its slot RETIRING, its sleep
   * count and its size undone, its deque and mail empty): the teardown — THE CALL SITE of the per-worker
   * teardown — then RetireStoreAbsent, then the "retired" message, on which the owner terminates this
   * thread and looks at growth. The loop does not run again.
   */
  private async retire(): Promise<void> {
    try {
      await retireTeardown();
    } catch {
      // The worker leaves all the same; reporting the teardown's error is the setup's part.
    }
    this.slots!.retireStoreAbsent(this.index);
    this.post({ type: "retired" });
    this.finished();
  }
}

/**
 * The teardown a retiring worker of an elastic pool runs before its slot says ABSENT (issue 49: the task
 * module's teardown, which the per-worker setup wires here). Called once, from `WorkerLoop.retire`, with
 * the slot RETIRING: nothing is in this worker's deque or mail, and no task runs. A death here is
 * recovered by the owner (RecoverStoreAbsent); a rejection is ignored (the worker leaves all the same).
 */
let retireTeardown: () => void | Promise<void> = () => {};

/**
 * This thread. Sets the teardown a retirement runs (see `WorkerLoop.retire`); the default does nothing.
 *
 * @param teardown Runs once when this worker retires, before it leaves.
 *
 * @example Usage
 * ```ts ignore
 * setRetireTeardown(async () => await connection.close());
 * ```
 */
export function setRetireTeardown(teardown: () => void | Promise<void>): void {
  retireTeardown = teardown;
}

/** How often a recycling worker looks whether it may leave, in ms (a few times, while it waits). */
const LEAVE_POLL_MS = 2;

/** Calls `callback` in a macrotask of its own (setImmediate where there is one, else a 0 ms timer). */
function macrotask(callback: () => void): void {
  const immediate = (globalThis as { setImmediate?: (callback: () => void) => unknown }).setImmediate;
  if (immediate !== undefined) immediate(callback);
  else setTimeout(callback, 0);
}

function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}
