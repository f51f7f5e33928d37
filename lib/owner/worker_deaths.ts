/**
 * What the main thread does when a worker dies after it was ready: count the death, fail what the worker
 * held of a broadcast, repair everything it held in shared memory (recovery.ts), settle the tasks it
 * finished whose completions it never queued, and start its replacement on the same deque.
 *
 * What it owns: the death counters ({@link WorkerDeaths.crashes}, {@link WorkerDeaths.forcedKills},
 * {@link WorkerDeaths.deathsInSteps}) and the encoder recovery encodes its errors with.
 *
 * Invariants:
 * - A death is handled once (the workforce reports each thread's once), and not after the pool closed or
 *   terminated (then nothing it held is pending, or terminate settled it).
 * - Its replacement starts only after the repair: two threads never own one deque (workforce.ts).
 * - Nothing is lost: a repair that throws (a bug) is reported through the ledger, a replacement that cannot
 *   start is reported while the pool is open or closing.
 *
 * Threads: the thread that created the pool.
 *
 * @module
 */

import type { Broadcaster } from "./broadcast.ts";
import { Encoder } from "../codec/codec.ts";
import type { CompletionReader } from "../producer/completion.ts";
import { toError } from "../errors.ts";
import type { Levels } from "../protocol/levels.ts";
import { Injector } from "../protocol/injector.ts";
import { MARK_WORDS, NOTE_WORDS, NoteWords, SleepWords } from "../protocol/layout.ts";
import type { PoolMemory } from "../protocol/memory.ts";
import { type ProducerChannel, slotOf, wakeProducer } from "../protocol/producers.ts";
import type { TaskLedger } from "../producer/ledger.ts";
import type { PoolStateName } from "../lifecycle.ts";
import { recoverDeadWorker, type RecoveryScope } from "./recovery.ts";
import { GraphWalker } from "../graph/walk.ts";
import { GraphRecords } from "../graph/words.ts";
import { mem } from "../protocol/atomics.ts";
import { ABSENT, type Sleep, STATE_MASK } from "../protocol/sleep.ts";
import { TABLE_NOTE_WORDS, TaskState, type TaskTable } from "../record/task.ts";

import type { Workforce } from "./workforce.ts";

/** What the handling of a death works with: the pool's parts. */
export interface WorkerDeathsParts {
  /** The pool's memory as the owner sees it (a dead worker's deque, notes and marks; the sleep words). */
  readonly memory: PoolMemory;
  readonly table: TaskTable;
  readonly ledger: TaskLedger;
  readonly levels: Levels;
  readonly reader: CompletionReader;
  readonly broadcaster: Broadcaster;
  readonly workforce: Workforce;
  /** Registers a SharedArrayBuffer passed by reference (recovery encodes errors). */
  readonly shareBuffer: (buffer: SharedArrayBuffer) => number;
}

/**
 * Handles the deaths of the pool's workers.
 *
 * @example Usage
 * ```ts ignore
 * const deaths = new WorkerDeaths(parts, () => pool.lifecycle);
 * // the workforce's `died` event:
 * deaths.died(0, new Error("out of memory"), false);
 * console.log(deaths.crashes); // 1
 * ```
 */
export class WorkerDeaths {
  /** Workers that died of themselves (an uncaught error, an exit, out of memory). */
  crashes = 0;
  /** Workers the pool terminated to force an abort (`force: true`). */
  forcedKills = 0;
  private readonly memory: PoolMemory;
  private readonly sleep: Sleep;
  private readonly table: TaskTable;
  private readonly ledger: TaskLedger;
  private readonly levels: Levels;
  private readonly reader: CompletionReader;
  private readonly broadcaster: Broadcaster;
  private readonly workforce: Workforce;
  private readonly encoder: Encoder;
  private readonly state: () => PoolStateName;
  /** Rejects and walks a graph node a dead worker ran (lib/graph/walk.ts), its published records kept. */
  private readonly graph: { died(handle: number, error: Error): number[] };
  /** The owner's handles on the other producers' completion queues, by slot - 1 (recovery pushes there). */
  private readonly remote: { channel: ProducerChannel; queue: Injector }[];

  /**
   * @param parts The pool's parts.
   * @param state The pool's lifecycle state now.
   */
  constructor(parts: WorkerDeathsParts, state: () => PoolStateName) {
    this.memory = parts.memory;
    this.sleep = parts.memory.sleep;
    this.table = parts.table;
    this.ledger = parts.ledger;
    this.levels = parts.levels;
    this.reader = parts.reader;
    this.broadcaster = parts.broadcaster;
    this.workforce = parts.workforce;
    this.encoder = new Encoder({ shareBuffer: parts.shareBuffer });
    this.state = state;
    const published: number[] = [];
    const walker = new GraphWalker({
      table: this.table,
      graph: new GraphRecords(this.memory.graph),
      deque: undefined,
      levels: this.levels,
      sleep: this.sleep,
      encoder: this.encoder,
      resolve: undefined,
      // The owner cannot wait for a worker to free blocks: a 1 ms sleep, as a worker's finish does.
      waitForBlocks: () => mem.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1),
      publish: (handle, index) => {
        this.table.fields.storeState(index, TaskState.DONE);
        const slot = slotOf(this.table.fields.origin(index));
        if (slot === 0) published.push(handle);
        else this.completeRemote(slot, handle);
      },
      freed: () => {},
    });
    this.graph = {
      died: (handle, error) => {
        walker.died(handle, error);
        return published.splice(0);
      },
    };
    this.remote = parts.memory.channels.slice(1).map((channel) => ({
      channel,
      queue: new Injector(channel.queue),
    }));
  }

  /** A worker died after it was ready: repair what it held, then start its replacement on its deque. */
  died(index: number, cause: unknown, forced: boolean): void {
    const state = this.state();
    if (state === "closed" || state === "terminated") return;
    if (forced) this.forcedKills++;
    else this.crashes++;
    this.broadcaster.workerDied(index, toError(cause));
    try {
      this.recover(index, cause);
    } catch (error) {
      // A repair that fails (a queue it cannot push to: a bug, see injector.ts) is reported, never lost.
      this.ledger.report(error, `(recovery of worker ${index})`);
    }
    this.workforce.start(index).then(
      () => {
        this.sleep.newWork();
        this.replaced?.(index);
      },
      // A replacement that close() or terminate() stopped while it loaded failed as it should: no report.
      (error) => {
        const state = this.state();
        if (state === "open" || state === "closing") {
          // What was posted to it while it loaded (directed tasks, broadcast parts) fails, then the report.
          this.startFailed(index, error);
          this.ledger.report(error, "(worker replacement)");
          this.replaceFailed?.(index, error);
        }
      },
    );
  }

  /**
   * A start on `index` failed (a dead or recycled worker's replacement whose module or `setupWorker`
   * threw): nothing will run what was posted to it, so it fails here, as a dead worker's does. Its
   * broadcast parts reject (broadcast.ts `workerDied`, which resets its mail word); its directed tasks
   * (QUEUED, DIRECTED, `worker` = index: the records say which, whatever became of the messages) reject
   * with WorkerCrashedError whose cause is `error`, through the death's repair (recovery.ts), which finds
   * nothing else to do for a thread that never ran its loop. Also called for a directed task posted to
   * such an index later (owner.ts `post`); a task settled already is not settled again (its record is
   * DONE, its report refused by generation: completion.ts).
   *
   * @param index The worker index whose start failed.
   * @param error Why (a ModuleLoadError).
   */
  startFailed(index: number, error: unknown): void {
    const state = this.state();
    if (state === "closed" || state === "terminated") return;
    const cause = toError(error);
    this.broadcaster.workerDied(index, cause);
    // A thread whose start failed took no task and no record (its loop is built after its setup, just
    // before `ready`), so its marks and table notes name nothing: they say -1 (left by an earlier thread or
    // its repair), or 0 if no worker ever ran on the index (an elastic pool's slot never started), which
    // the repair would read as record 0 held and block 0 in hand and push both a second time (the
    // injector's push then spins for 10 s and throws "pushed twice"). Cleared first.
    for (const [at, words] of [[NoteWords.marks, MARK_WORDS], [NoteWords.table, TABLE_NOTE_WORDS]]) {
      const notes = this.memory.notes(index, at, words);
      for (let k = 0; k < words; k++) mem.store(notes, k, -1);
    }
    // An elastic pool's slot given back (ABSENT: a growth start that failed, or a failed replacement after
    // its release) stays given back: the repair's Sleep.forget stores AWAKE, which would make the slot look
    // live to growth, thieves and posts. (Only the owner writes an ABSENT slot's word: nothing runs there.)
    const stateAt = SleepWords.state(index);
    const absent = (mem.load(this.sleep.words, stateAt) & STATE_MASK) === ABSENT;
    try {
      this.recover(index, cause);
    } catch (failure) {
      this.ledger.report(failure, `(recovery after worker ${index}'s failed start)`);
    }
    if (absent) mem.store(this.sleep.words, stateAt, ABSENT);
    // The others take what its deque holds: wake one to look.
    this.sleep.newWork();
  }

  /**
   * Told when a dead worker's replacement failed to start, and why (an elastic pool gives its slot back;
   * a fixed pool looks whether any worker is left: owner.ts `noWorkersLeft`).
   */
  replaceFailed: ((index: number, error: unknown) => void) | undefined = undefined;

  /** Told when a dead worker's replacement is ready (the owner's pool events; no user code). */
  replaced: ((index: number) => void) | undefined = undefined;

  /** Deaths that caught a worker inside one of the pool's own steps (see PoolStats.deathsInSteps). */
  deathsInSteps = 0;

  /** Queues `handle`'s completion for remote producer slot `slot` and wakes that producer if it waits. */
  private completeRemote(slot: number, handle: number): void {
    const { queue, channel } = this.remote[slot - 1];
    queue.pushPatiently(handle);
    wakeProducer(channel);
  }

  /** Repairs what dead worker `index` held (recovery.ts), then lets the backlog in. */
  private recover(index: number, cause: unknown): void {
    const memory = this.memory;
    const { buffer } = memory;
    const { unreported, inStep } = recoverDeadWorker(
      {
        table: this.table,
        ledger: this.ledger,
        sleep: this.sleep,
        encoder: this.encoder,
        deque: memory.dequeRegion(index),
        dequeNotes: memory.notes(index, NoteWords.deque),
        marks: memory.notes(index, NoteWords.marks, MARK_WORDS),
        tableNotes: memory.notes(index, NoteWords.table, TABLE_NOTE_WORDS),
        levels: this.levels,
        queues: poolQueuesOf(memory, index).concat(
          // Its handles on the other producers' completion queues (protocol/producers.ts).
          this.remote.map(({ channel }) => ({
            role: "completions" as const,
            region: { buffer, byteOffset: channel.queue.byteOffset, capacity: channel.queue.capacity },
            notes: memory.notes(index, NoteWords.producerCompletions + (channel.slot - 1) * NOTE_WORDS),
          })),
        ),
        isDead: (worker) => worker >= 0 && this.workforce.isDead(worker),
        graph: this.graph,
        complete: (slot, handle) => this.completeRemote(slot, handle),
      },
      index,
      cause,
    );
    if (inStep) this.deathsInSteps++;
    // Freed records may let the backlog in.
    this.reader.drain();
    // Tasks it finished whose completion was not in the queue just drained (it died before the push):
    // still DONE and current. (One whose completion is deferred is reported again: harmless.)
    for (const handle of unreported) {
      // Stale if the drain above settled it and fed the backlog its record. Without this check, the state
      // read below would be the new task's, DONE only if a worker ran it in the instant since, and the
      // report would then still be refused by report's own generation check (completion.ts `tryComplete`,
      // counted in duplicateReports): only a unit test tells them apart (worker_deaths_test.ts logs the reports).
      if (!this.table.isCurrent(handle)) continue;
      const index = this.table.indexOf(handle);
      if (this.table.fields.loadState(index) === TaskState.DONE) {
        this.reader.report(handle);
      }
    }
    this.reader.arm();
  }
}

/**
 * The pool-wide queues worker `index` has handles on, each with that worker's notes of its handle: the three
 * injector levels, the completions, the free records and the free blocks (a producer's own completion queue
 * comes on top, from its channel). What {@link recoverDeadWorker} repairs a dead worker's cut-short steps on.
 *
 * @param memory The pool's memory.
 * @param index The worker.
 * @returns The queues, in the order recovery walks them.
 */
export function poolQueuesOf(memory: PoolMemory, index: number): RecoveryScope["queues"] {
  const { buffer, layout } = memory;
  return ([
    ["injector", layout.injector, layout.shape.taskCapacity, NoteWords.injector],
    ["injector", layout.injectorHigh, layout.shape.taskCapacity, NoteWords.injectorHigh],
    ["injector", layout.injectorLow, layout.shape.taskCapacity, NoteWords.injectorLow],
    ["completions", layout.completions, layout.shape.taskCapacity, NoteWords.completions],
    ["freeRecords", layout.freeRecords, layout.shape.taskCapacity, NoteWords.freeRecords],
    ["freeBlocks", layout.freeBlocks, layout.shape.blocks, NoteWords.freeBlocks],
  ] as const).map(([role, byteOffset, capacity, at]) => ({
    role,
    region: { buffer, byteOffset, capacity },
    notes: memory.notes(index, at),
  }));
}
