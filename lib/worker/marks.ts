/**
 * The marks a worker keeps of its single steps in progress, their repairs when a step is cut short, and
 * the last step of a finish, which the `finishing` mark covers: publishing DONE, then the fork's latch or
 * the completion, then waking the main thread.
 *
 * Why marks. A stack overflow in a deep recursion (or any throw) can surface at any call inside the pool's
 * own code that a task reached through `join`, `scope` or a loop: the user's code catches it and goes on,
 * and the step it cut short would otherwise strand its record (a fork never joined, a nested task never
 * finished, a task taken from a queue and never run). These marks are plain field stores, which cannot
 * themselves overflow; each is checked before it is set (a step cut short must be completed before its
 * mark is reused), and all of them at the top of the loop (see `cutShort`), where no join is in progress
 * on this thread. Each is cleared only once its repair is done: cut short itself, a repair resumes next
 * time.
 *
 * What it owns: the six single-step marks, each -1 when clear (all bits set) and a handle, which is
 * non-negative, when set; and their copies in the pool's buffer (layout.ts NoteWords.marks, MarkWords), for
 * the main thread if this thread dies (owner/recovery.ts): `held` until `start` has claimed the task
 * (QUEUED to RUNNING), and `pushing`, `moving`, `consuming` and `freeing`. Those are set with the fields
 * and cleared with them. Where this thread repairs a mark itself, the copy of a mark whose repair puts a
 * task back in a queue (`held`, `moving`) is cleared right after the push, with no call between the push's
 * publishing store and the clear (as `placeFork` clears `pushing`): a death before the publishing store
 * leaves the mark, and recovery puts the task back (the push published nothing); no death can land after
 * it with the mark still set (which would have recovery put it back again, to run twice). Cleared before
 * the push, as it once was, a death between the clear and the push lost the task, QUEUED in no queue and
 * no mark (issue 47, class 7; tests/protocol/recovery_paths_test.ts kills the worker at every access of
 * these repairs). The copy of a mark whose
 * repair frees a record (`pushing`, `consuming`, `freeing`) is cleared last: recovery frees only a record
 * still current and in the mark's state, so a death after the release frees nothing twice, and a death
 * before it leaves the record to recovery rather than stranded. Plain element stores, not facade calls (see
 * the deque's notes): a call could be where the thread dies. For the same reason a mark that records what a
 * queue operation did is written with no call between it and that operation's last shared access: the held
 * mark by the pop itself (`popHeld`, `takeHeld`: Deque.pop's and Injector.pop's `into`), the pushing mark's
 * clear right after the publishing push (`placeFork`). Set or cleared by a method called after the
 * operation returned, the mark left that call as a point where a thread cut short (a stack overflow there,
 * or killed there) had the task in no queue and no mark (lost, QUEUED for ever), or published and marked to
 * be freed (a record freed twice): the fault-injection suite found both on Bun. `finishing` has no copy:
 * the main thread repairs a dead worker's finish from the record.
 *
 * The publishing step lives here, beside its repair (`repairFinishing` repeats it), so that neither needs
 * the other's class. Its shared accesses are actions of spec/Lifecycle.tla (FinishStoreDone,
 * FinishPushCompletion, RepairHeldPush) and spec/SleepWake.tla (FinishPushCompletion, FinishReadMainWaiting,
 * FinishTakeMainWaiting, FinishNotifyMain).
 *
 * Threads: made and used by its worker thread only.
 *
 * @module
 */

import { type Deque, EMPTY } from "../protocol/deque.ts";
import { type Injector, QUEUE_EMPTY } from "../protocol/injector.ts";
import type { Levels } from "../protocol/levels.ts";
import type { PoolMemory } from "../protocol/memory.ts";
import { setLatch } from "../protocol/latch.ts";
import { MarkWords } from "../protocol/layout.ts";
import { type ProducerChannel, slotOf, wakeProducer, wakeRecordWaiters } from "../protocol/producers.ts";
import type { Sleep } from "../protocol/sleep.ts";
import { NO_RECORD, Origin, TaskState, type TaskTable } from "../record/task.ts";
import type { Forks } from "./forks.ts";
import type { Runs } from "./runs.ts";

/** What a worker's marks are built from (see {@link Marks}'s constructor). */
export interface MarksParts {
  /** The pool's memory: the views the marks read (control words, channels, sleep words). */
  readonly memory: Pick<PoolMemory, "control" | "channels" | "sleep">;
  /** This worker's marks in the pool's buffer (`NoteWords.marks`), clear (-1). */
  readonly words: Int32Array;
  /** The task records. */
  readonly table: TaskTable;
  /** Our deque. */
  readonly deque: Deque;
  /** The injectors, one per priority level. */
  readonly levels: Levels;
  /** Each producer's completion queue, by slot (this worker's handles, with notes). */
  readonly completions: readonly Injector[];
  /** Our forks not yet joined. */
  readonly forks: Forks;
  /** The runs under way. */
  readonly runs: Runs;
}

/** A worker's marks of single steps in progress, and their repairs. */
export class Marks {
  /** The marks' copies in the pool's buffer, for the main thread if this thread dies (see the module doc). */
  private readonly words: Int32Array;
  /** A task taken from a queue and not yet registered by `execute` (see `Runs`), or -1. */
  private held = -1;
  /** A task on its way back to the injector (handed back), or -1. */
  private moving = -1;
  /** The fork being placed (allocated, not yet published by the deque push), or -1. */
  private pushing = -1;
  /** Our fork being consumed (popped back, or its result being read), not yet released, or -1. */
  private consuming = -1;
  /** The task being finished (DONE may be published, its completion or latch not yet), or -1. */
  private finishing = -1;
  /** A record we must free and have not finished freeing (an orphan we finished), or -1. */
  private freeing = -1;
  /**
   * The held or moving task whose repair's push into the injector is under way (its queue's `published`
   * reset first), or -1: a push cut short after its claim is published by the queue's own repair, which
   * `repair` runs first, and must not be made again (see `inInjector`).
   */
  private injecting = -1;
  private readonly control: Int32Array;
  private readonly channels: readonly ProducerChannel[];
  private readonly table: TaskTable;
  private readonly deque: Deque;
  private readonly levels: Levels;
  /** Each producer's completion queue, by slot (0: the owner's). */
  private readonly completions: readonly Injector[];
  private readonly sleep: Sleep;
  private readonly forks: Forks;
  private readonly runs: Runs;

  /**
   * This thread.
   *
   * @param parts What the marks work with: the pool's memory (its control words, the count of producers
   * waiting for a record; each producer's completion channel, by slot; the sleep words), this worker's
   * marks in the pool's buffer (clear, -1), the task records, our deque, the injectors, each producer's
   * completion queue by slot (this worker's handles, with notes), our forks not yet joined and the runs
   * under way.
   */
  constructor(parts: MarksParts) {
    this.words = parts.words;
    this.control = parts.memory.control;
    this.channels = parts.memory.channels;
    this.table = parts.table;
    this.deque = parts.deque;
    this.levels = parts.levels;
    this.completions = parts.completions;
    this.sleep = parts.memory.sleep;
    this.forks = parts.forks;
    this.runs = parts.runs;
  }

  // ---- Setting and clearing (each set after its stale mark, if any, was repaired) ----

  /**
   * This thread. Pops our deque's newest task into the held mark (held until `execute` registers it), or
   * returns EMPTY. The pop itself writes the shared mark before it is whole (Deque.pop's `into`): a mark
   * set here after the pop returned would leave this method's own call (or the caller's) between, where a
   * thread cut short (a stack overflow at the call, or killed there) had the task in no queue and no mark:
   * lost, QUEUED for ever (the fault-injection suite found it on Bun). The private copy follows with no
   * call between.
   */
  popHeld(): number {
    const task = this.deque.pop(this.words, MarkWords.held);
    if (task !== EMPTY) this.held = task;
    return task;
  }

  /** This thread. Takes the injectors' next task into the held mark as {@link Marks.popHeld} does, or QUEUE_EMPTY. */
  takeHeld(): number {
    const task = this.levels.take(this.words, MarkWords.held);
    if (task !== QUEUE_EMPTY) this.held = task;
    return task;
  }

  /**
   * This thread. The held task is our own fork `handle`, popped back in its join: consumed from here on.
   * The consuming mark first, then the held one cleared, with no call between.
   */
  consumeHeld(handle: number): void {
    this.consuming = this.words[MarkWords.consuming] = handle;
    this.held = this.words[MarkWords.held] = -1;
  }

  /** This thread. The held task is registered as a run (see `Runs`); its shared mark stays until `claimed`. */
  taken(): void {
    this.held = -1;
  }

  /** This thread. The task taken was claimed (QUEUED to RUNNING) or found cancelled: not held any more. */
  claimed(): void {
    this.words[MarkWords.held] = -1;
  }

  /** This thread. Before placing a fork: a fork cut short before its push is freed first. */
  checkPushing(): void {
    if (this.pushing !== -1) this.repairPushing();
  }

  /**
   * This thread. Allocates the record of a fork to place straight into the pushing mark, or returns
   * NO_RECORD: `allocate` writes the shared mark as its last store (TaskTable.allocate's `into`), and the
   * private copy follows with no call between, as {@link Marks.popHeld} does for the held mark. A mark set
   * by a call after `allocate` returned left that call as a point where a thread cut short (a stack
   * overflow at it) had the record marked cached by itself, in no cache and no mark: held by nobody, and
   * free to every census (tests/worker/fork_join_test.ts, "a fork cut short at any call ...").
   */
  allocatePushing(): number {
    const handle = this.table.allocate(this.words, MarkWords.pushing);
    if (handle !== NO_RECORD) this.pushing = handle;
    return handle;
  }

  /** This thread. Fork `handle` is ours alone until the deque push publishes it (tests: see allocatePushing). */
  setPushing(handle: number): void {
    this.pushing = this.words[MarkWords.pushing] = handle;
  }

  /** This thread. The fork was freed. */
  clearPushing(): void {
    this.pushing = this.words[MarkWords.pushing] = -1;
  }

  /**
   * This thread. Publishes the fork being placed (the `pushing` mark's) by the deque push, and clears the
   * mark with no call between the push's publishing store and the clear: a mark cleared by a call after
   * the push returned left that call where a thread cut short (a stack overflow, or killed) had the fork
   * both published and marked ours to free; its repair then freed a record a thief or the deque still held
   * (a record freed twice: the fault-injection suite found it on Bun). Returns false if the deque is full:
   * the fork was never published, and the mark's own repair forgets it and frees its record.
   */
  placeFork(handle: number): boolean {
    if (!this.deque.push(handle)) { // spec: ForkPushDeque
      this.repairPushing();
      return false;
    }
    this.pushing = this.words[MarkWords.pushing] = -1;
    return true;
  }

  /** This thread. Before consuming our fork: a consume cut short is completed first. */
  checkConsuming(): void {
    if (this.consuming !== -1) this.repairConsuming();
  }

  /** This thread. Our fork `handle` is being consumed (popped back, or its result read). */
  setConsuming(handle: number): void {
    this.consuming = this.words[MarkWords.consuming] = handle;
  }

  /** This thread. The fork was consumed and its record released. */
  clearConsuming(): void {
    this.consuming = this.words[MarkWords.consuming] = -1;
  }

  /** This thread, before a search. A stale held or moving mark is completed first. */
  checkSearch(): void {
    // What the search returns is held until `execute` registers it.
    if ((this.held & this.moving) !== -1) this.repair();
  }

  /** This thread, in a join's wait. (The tasks run there are user code, which may have been cut short.) */
  checkJoin(): void {
    if ((this.consuming & this.held) !== -1) this.repair();
  }

  /**
   * This thread. Hands the task `handle` (record `index`), which the innermost run holds and cannot run
   * yet, back to the injector: no longer ours to finish if cut short, but in hand until the push.
   */
  handBack(handle: number, index: number): void {
    this.runs.handBack();
    if (this.moving !== -1) this.repairMoving();
    this.moving = this.words[MarkWords.moving] = handle;
    this.table.fields.storeState(index, TaskState.QUEUED);
    this.toInjector(handle);
    this.moving = this.words[MarkWords.moving] = -1;
    this.sleep.newWork();
  }

  // ---- The publishing step of a finish ----

  /**
   * This thread. Publishes the finish of task `handle` (record `index`, whose outcome and payload are
   * written): DONE, then a fork's latch (or its freeing, for an orphan) or a submitted task's completion.
   */
  publishDone(handle: number, index: number, forked: boolean): void {
    const table = this.table;
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
    // To the producer that submitted it (its slot is in the origin word, written before the QUEUED store
    // that published the task to us).
    const slot = slotOf(table.fields.origin(index));
    const completions = this.completions[slot];
    // Reset, so that a repair can tell whether this push got as far as publishing (see repairMarks).
    completions.published = QUEUE_EMPTY;
    completions.pushPatiently(handle); // spec: FinishPushCompletion
    wakeProducer(this.channels[slot]); // spec: FinishWakeProducer
    // Cleared after the wake, not before: cut short in the wake, the mark's repair wakes the producer (a
    // finish cut short there once left its completion queued and its producer asleep).
    this.finishing = -1;
  }

  /** Sets a finished fork's latch (its joiner goes on), or frees it if it is an orphan. */
  private publishFork(handle: number): void {
    const table = this.table;
    if (!setLatch(table.words, table.fields.latchWord(table.indexOf(handle)))) {
      // The latch says SET now: a repair could no longer tell that this orphan is ours to free.
      if (this.freeing !== -1) this.repairFreeing();
      this.freeing = this.words[MarkWords.freeing] = handle;
      this.finishing = -1;
      table.releaseHandle(handle);
      this.freeing = this.words[MarkWords.freeing] = -1;
      // The main thread may have tasks waiting for a record (its backlog) and no completion coming to
      // tell it one is free: the orphan's forker was its task, already rejected. Tell it.
      this.wakeMain();
      return;
    }
    this.finishing = -1;
  }

  /**
   * This thread, after it freed records with no completion to say so: wakes the owner's producer, only if
   * it said it waits (it sets the word, then re-checks the queue), and any other producer whose tasks wait
   * for a record (producers.ts).
   */
  wakeMain(): void {
    wakeProducer(this.channels[0]);
    wakeRecordWaiters(this.channels, this.control);
  }

  /**
   * This thread, after a graph walk freed a node's record (graph/walk.ts `release`): wakes a producer only
   * if one said it waits for a record (its counted word, `ControlWords.recordWaiters`: the owner's too), not
   * the owner for every freed record as {@link Marks.wakeMain} does. A producer not counted needs no wake:
   * its backlog is empty, or it holds its share and its own completions wake it; a counted one counts
   * itself before it looks at the free list, so a record pushed before its look is found by the look, and
   * one pushed after finds the count (protocol/producers.ts, spec/RecordWait.tla). A record that went to
   * this worker's cache is of no use to a waiter until the flush before this worker sleeps, which wakes as
   * wakeMain does (worker/search.ts).
   */
  wakeRecordWaiters(): void {
    wakeRecordWaiters(this.channels, this.control);
  }

  // ---- Repairs ----

  /**
   * This thread, at the top of the loop, where no join is in progress. Whether any step was cut short: a
   * fork not joined, a run under way, a single step's mark, a shared structure's own step.
   */
  cutShort(): boolean {
    return this.forks.any() || this.runs.cutShort() ||
      this.marked() || this.deque.cutShort || this.levels.cutShort || this.completions.some((q) => q.cutShort) ||
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
   * This thread, at the top of the loop: completes every single step cut short, this thread taking over
   * the held task from the main thread (see repairHeld).
   */
  repairAll(): void {
    // The shared held mark stays until the task it names is back in a queue (repairHeld, or putBack for a
    // run registered before its claim, which clears it right after the push): see the module doc.
    this.repair();
  }

  /**
   * This thread, after the runs cut short were put back or failed (Runner.repairInterrupted): the shared
   * held mark names no task waiting to be taken any more (putBack cleared it if it named one), so clear it.
   */
  repairedRuns(): void {
    this.words[MarkWords.held] = -1;
  }

  /**
   * Completes the single steps a throw cut short (see the module doc). The shared structures first: a
   * claimed queue position or a hidden deque task holds up other threads.
   */
  private repair(): void {
    this.deque.repair();
    this.levels.repair();
    for (const completions of this.completions) completions.repair();
    if (this.table.repairCut() > 0) this.wakeMain();
    if (this.freeing !== -1) this.repairFreeing();
    if (this.pushing !== -1) this.repairPushing();
    if (this.consuming !== -1) this.repairConsuming();
    if (this.held !== -1) this.repairHeld();
    if (this.moving !== -1) this.repairMoving();
    if (this.finishing !== -1) this.repairFinishing();
  }

  /**
   * This thread. Whether `handle` is still the record's current handle and the record is in `state`.
   *
   * The generation matters for a finish cut short after it was published (a stack overflow at a call
   * after the completion push, `wakeMain`, or after a fork's latch was set): the main thread, or the
   * fork's joiner, may have freed the record and reused it by the time the top of the loop repairs the
   * run (Runner.repairInterrupted: `putBack`) or the finish (`repairFinishing`). Without it the stale
   * handle would be put back and run (`Runner.execute` claims by the state alone) and take the record's
   * new task, or set the latch of the fork that holds the record now. No test reaches it (issue 32): it
   * takes an overflow landing at that one call, in a task run nested in a join's wait, and a reuse before
   * the repair. A sweep of overflows across 400 join depths (three rounds, lanes of main-thread tasks
   * queued meanwhile) ran 3 tasks nested in a join's wait in all, and left no run to repair.
   */
  current(handle: number, state: number): boolean {
    const table = this.table;
    return table.isCurrent(handle) &&
      table.fields.loadState(table.indexOf(handle)) === state;
  }

  /** Whether `handle` is current and waits to be taken: QUEUED, or CANCELLED (to be freed by its taker). */
  private queued(handle: number): boolean {
    return this.current(handle, TaskState.QUEUED) || this.current(handle, TaskState.CANCELLED);
  }

  /**
   * This thread. A run cut short before its first step (`handle` still waits to be taken) goes back to be
   * run: into our deque, or the injector if it is full. Returns whether it did.
   */
  putBack(handle: number): boolean {
    if (!this.queued(handle)) return false;
    if (!this.deque.push(handle)) this.toInjector(handle);
    // Right after the push's publishing store, with no call between (see the module doc): the shared
    // held mark may still name this run (registered, cut short before its claim).
    if (this.words[MarkWords.held] === handle) this.words[MarkWords.held] = -1;
    this.sleep.newWork();
    return true;
  }

  /**
   * A record ours to free (an orphan we finished): free it. The shared mark is cleared last, once the
   * record is released (see repairPushing).
   */
  private repairFreeing(): void {
    this.forks.drop(this.freeing);
    this.table.releaseHandle(this.freeing);
    this.freeing = this.words[MarkWords.freeing] = -1;
  }

  /**
   * A fork cut short before its push published it, or refused by a full deque (placeFork): free its record.
   *
   * The shared mark is cleared last, after the release, unlike the held mark (see repairHeld): a thread
   * that dies after clearing it first, inside `forget`, `drop` or the release, leaves a QUEUED fork in no
   * deque and no mark, which recovery orphans and nobody ever runs or frees (tests/pool/death_test.ts, "... while
   * its deque is full"; found by the fault-injection suite). Cleared last, a death before the clear leaves
   * the mark to recovery, which frees the record only if it is still current and QUEUED: once released it
   * is CACHED or FREE, and reused it has a new generation, so it is never freed twice.
   */
  private repairPushing(): void {
    // Outstanding from before its push (fork_join.ts place): never published, so never to be joined.
    this.forks.forget(this.pushing);
    this.forks.drop(this.pushing);
    // Cut short before its QUEUED store (its arguments being written), it is still marked cached by us and
    // in no cache, which releaseHandle refuses: freed as such, its blocks with it (else they stayed out of
    // the free list until this thread's next repair of an allocation, or its death).
    if (!this.table.releaseUnpublished(this.pushing)) this.table.releaseHandle(this.pushing);
    this.pushing = this.words[MarkWords.pushing] = -1;
  }

  /**
   * Our fork, popped back or finished, cut short while consumed: forget it and free its record. The shared
   * mark is cleared last, once the record is released (see repairPushing).
   */
  private repairConsuming(): void {
    this.forks.forget(this.consuming);
    this.forks.drop(this.consuming);
    this.table.releaseHandle(this.consuming);
    this.consuming = this.words[MarkWords.consuming] = -1;
  }

  /** A task taken and not started: back to our deque (we run it soon), or the injector if it is full. */
  private repairHeld(): void {
    const handle = this.held;
    // A CANCELLED one goes back too: whoever takes it next frees it.
    if (this.queued(handle) && !this.inInjector(handle) && !this.deque.push(handle)) this.injectOnce(handle); // spec: RepairHeldPush
    // Cleared right after the push's publishing store, with no call between: a death before it leaves the
    // mark, and recovery puts the task back; cleared before the push, a death there lost it (module doc).
    this.held = this.words[MarkWords.held] = -1;
    this.injecting = -1;
    this.sleep.newWork();
  }

  /**
   * Whether this repair's own push of `handle` into the injector was cut short after its claim (a stack
   * overflow inside it) and published since by the queue's repair (`repair` runs it first): then the task
   * is in the injector already, and a second push would queue it twice (run twice, or a CANCELLED one
   * freed twice).
   */
  private inInjector(handle: number): boolean {
    return this.injecting === handle && this.levels.queues.some((queue) => queue.published === handle);
  }

  /** Task `handle` into its level's injector, noted as {@link Marks.injecting} (see `inInjector`). */
  private injectOnce(handle: number): void {
    const level = this.table.levelOf(handle);
    this.levels.queues[level].published = QUEUE_EMPTY;
    this.injecting = handle;
    this.levels.pushPatiently(handle, level);
  }

  /** Task `handle` (current, held by us) into its own level's injector (its record's level word). */
  private toInjector(handle: number): void {
    this.levels.pushPatiently(handle, this.table.levelOf(handle));
  }

  /** A task on its way back to the injector (handed back): into our deque, or back to the injector. */
  private repairMoving(): void {
    if (!this.inInjector(this.moving) && !this.deque.push(this.moving)) this.injectOnce(this.moving);
    // Cleared right after the push's publishing store, with no call between (see repairHeld).
    this.moving = this.words[MarkWords.moving] = -1;
    this.injecting = -1;
    this.sleep.newWork();
  }

  /**
   * A finish cut short after publishing DONE: publish it again (a latch set twice is still set; a
   * completion is pushed again only if the queue's published mark says it did not get there), and wake its
   * producer again.
   */
  private repairFinishing(): void {
    const handle = this.finishing;
    if (this.current(handle, TaskState.DONE)) {
      const table = this.table;
      if (table.fields.origin(table.indexOf(handle)) === Origin.FORK) {
        this.publishFork(handle);
      } else {
        const slot = slotOf(table.fields.origin(table.indexOf(handle)));
        if (this.completions[slot].published !== handle) this.completions[slot].pushPatiently(handle);
        // Woken whether or not the push got there: a push cut short after its claim was published by the
        // queue's repair (`repair` runs it first), with no wake; a spare wake costs only a read of the queue.
        wakeProducer(this.channels[slot]);
      }
    }
    this.finishing = -1;
  }
}
