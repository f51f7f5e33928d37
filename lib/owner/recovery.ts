/**
 * What the main thread does with the shared state a dead worker leaves behind, so that a crash loses no
 * task and no capacity.
 *
 * What it owns: the repair step run once per death, after the thread is gone (its error or exit event
 * was seen and it was terminated) and before its replacement starts on the same deque.
 *
 * What a worker may hold when it dies, and what becomes of it:
 * - a task from the main thread it was running (RUNNING, `worker` = it): it may have started, so it is
 *   not run again: its promise rejects with {@link WorkerCrashedError} and its record is freed;
 * - a forked task it was running for another worker (a stolen `b`): its error is written and its latch
 *   set, so the joiner goes on (and frees the record); if its forker is dead too, the record is freed;
 * - tasks it forked and had not joined (in any deque, running elsewhere, or finished): nobody will join
 *   them, so their latch is marked ORPHANED: whoever finishes one frees its record, and one that has
 *   finished already is freed here (see latch.ts: an exchange against a compare-exchange, so
 *   exactly one side frees it);
 * - the free records of its private cache, and any it had just taken (state CACHED, `worker` = it):
 *   returned to the shared free list;
 * - an operation on a queue (the injector, the completion queue, a free list) or on its own deque that it
 *   died in the middle of (its notes, in the pool's buffer: layout.ts NoteWords): completed first, as the
 *   worker's own repair would have after a throw there (`Injector.repair`, `Deque.repair`), through
 *   handles on its notes: a claimed queue position is published or released, a value popped but never
 *   returned goes back to its queue, a pop's reserved or won task goes back into the deque, tasks a
 *   steal-half had claimed reach the deque;
 * - a task it had taken and not yet claimed, or was moving between the injector and its deque (its `held`
 *   and `moving` marks): back to the injector; a fork it was placing, or had popped back and not yet
 *   released (`pushing`, `consuming`), and an orphan it finished and had not yet freed (`freeing`): freed;
 *   a record it was taking from the free list or giving back (its table's notes): back to the list;
 * - a payload's overflow blocks: linked into its record's chain as they are taken and unlinked one at a
 *   time as they are freed, so they go with the record; the one in hand (its table's notes) goes back to
 *   the free list if it is in neither;
 * - a task it finished and had not yet reported (DONE, its completion not queued or its latch not set):
 *   reported by the caller (`unreported`), or its latch set here;
 * - its deque: left to its replacement (and to thieves meanwhile); if the worker died inside a pop,
 *   between lowering `bottom` and restoring it, `bottom` is put back (by the repair above; and at `top`
 *   if it is still below it);
 * - its sleep registration: uncounted (`Sleep.forget`).
 *
 * Assumed: a worker dies where its runtime checks for interrupts (at a call or a loop's back edge, where
 * a stack overflow surfaces too), and every note above is written before such a point follows the claim
 * it records. Specified: spec/InjectorDeath.tla (the queues), spec/ChaseLevDeath.tla (the deques); the
 * rest is tested by killing real workers (tests/pool/death_test.ts).
 *
 * Threads: the thread that created the pool.
 *
 * @module
 */

import { mem } from "../protocol/atomics.ts";
import type { Encoder } from "../codec/codec.ts";
import { Deque, type DequeRegion, repairAbandonedPop } from "../protocol/deque.ts";
import { Injector, type InjectorRegion, QUEUE_EMPTY } from "../protocol/injector.ts";
import type { Levels } from "../protocol/levels.ts";
import { MarkWords } from "../protocol/layout.ts";
import { crashError, ModuleLoadError, toError, WorkerCrashedError } from "../errors.ts";
import { Settled, type TaskLedger } from "../producer/ledger.ts";
import { encodeOutcome } from "../codec/outcome.ts";
import type { Sleep } from "../protocol/sleep.ts";
import { ORPHANED, orphanLatch, SET, setLatch, UNSET } from "../protocol/latch.ts";
import { slotOf } from "../protocol/producers.ts";
import { Origin, Outcome, tableNotesInStep, TaskFlags, TaskState, type TaskTable } from "../record/task.ts";

/** What one repair did, for the pool's stats and the tests. */
export interface Recovered {
  /** Main-thread tasks rejected with WorkerCrashedError. */
  rejected: number;
  /** Forked tasks failed (their joiners go on). */
  forksFailed: number;
  /** Forks of the dead worker marked orphaned (freed by whoever finishes them). */
  orphaned: number;
  /** Records freed here. */
  freed: number;
  /** Cached free records returned to the shared list. */
  reclaimed: number;
  /**
   * Main-thread tasks the dead worker finished (DONE) whose completion it may not have queued: it died
   * between the DONE store and the push. The caller reports each to its completion reader once the queue
   * is drained (a report is idempotent: a second one of the same task frees nothing).
   */
  unreported: number[];
  /**
   * Whether the worker died inside one of the pool's own steps: some note of a step under way was set
   * (a queue or deque operation, a mark, a table note), which this repair completed.
   */
  inStep: boolean;
}

/** The shared state and main-thread state a repair works on. */
export interface RecoveryScope {
  table: TaskTable;
  ledger: TaskLedger;
  sleep: Sleep;
  encoder: Encoder;
  /** The dead worker's deque region. */
  deque: DequeRegion;
  /** The queues the dead worker had handles on, each with its notes of that handle (layout.ts NoteWords). */
  queues: {
    region: InjectorRegion;
    notes: Int32Array;
    role: "injector" | "completions" | "freeRecords" | "freeBlocks";
  }[];
  /** The dead worker's notes of its own deque. */
  dequeNotes: Int32Array;
  /** The dead worker's marks (layout.ts NoteWords.marks, MarkWords). */
  marks: Int32Array;
  /** The dead worker's task-table notes (layout.ts NoteWords.table). */
  tableNotes: Int32Array;
  /** This thread's handles on the injectors, where a task the dead worker held goes back (to its level's). */
  levels: Levels;
  /** Whether a worker index belongs to a dead worker not yet replaced (its forks are orphans too). */
  isDead: (worker: number) => boolean;
  /**
   * Queues the completion of `handle` (DONE) for remote producer slot `slot` and wakes that producer if it
   * waits (protocol/producers.ts).
   */
  complete: (slot: number, handle: number) => void;
  /**
   * Rejects and walks a graph node the dead worker ran (lib/graph/walk.ts `GraphWalker.died`); returns the
   * handles of the owner's records it published, for the caller to report (a remote producer's go to its
   * completion queue at once). Undefined: no graph walk.
   */
  graph?: { died(handle: number, error: Error): number[] };
}

/**
 * Repairs after worker `dead` died. Call once per death, after the thread is gone.
 *
 * @param scope The pool's state.
 * @param dead The dead worker's index.
 * @param cause What killed it (any value; kept as the `cause` of the errors it produces).
 * @returns Counts of what was repaired.
 *
 * @example Usage
 * ```ts ignore
 * const recovered = recoverDeadWorker(scope, 1, new Error("worker 1 exited with code 3"));
 * console.log(recovered.rejected);
 * ```
 */
export function recoverDeadWorker(scope: RecoveryScope, dead: number, cause: unknown): Recovered {
  const { table, ledger } = scope;
  const reason = toError(cause);
  const recovered: Recovered = {
    rejected: 0,
    forksFailed: 0,
    orphaned: 0,
    freed: 0,
    reclaimed: 0,
    unreported: [],
    inStep: inStep(scope),
  };
  // First the operations it died in the middle of: a claimed queue position holds up every thread behind
  // it, and a task a half-done operation took must be where the scan below (and the threads) can find it.
  if (completeCutOperations(scope)) scope.sleep.newWork();
  const capacity = table.indexMask + 1;
  for (let i = 0; i < capacity; i++) {
    const state = table.fields.loadState(i);
    if (state === TaskState.FREE || state === TaskState.CACHED) continue;
    const origin = table.fields.loadOrigin(i);
    const worker = table.fields.loadWorker(i);
    const handle = table.handleOf(i);
    if (origin !== Origin.MAIN && origin !== Origin.FORK) {
      // A task of a producer in another thread (protocol/producers.ts): its ledger is that thread's, so the
      // repair reaches it the way a finish does, through its completion queue.
      if (recoverRemoteTask(scope, i, handle, origin, state, worker, dead, reason)) recovered.rejected++;
      continue;
    }
    if (origin === Origin.MAIN) {
      if (state === TaskState.DONE && worker === dead) {
        recovered.unreported.push(handle);
        continue;
      }
      // A task posted to it with moved buffers that it had not started: the buffers died with it (one its
      // caller cancelled meanwhile was settled then; only its record is left).
      if (
        (state === TaskState.QUEUED || state === TaskState.CANCELLED) && worker === dead &&
        (table.fields.loadFlags(i) & TaskFlags.DIRECTED) !== 0
      ) {
        const entry = ledger.placed[i];
        if (entry !== undefined && entry.handle === handle) {
          ledger.placed[i] = undefined;
          ledger.settle(
            entry,
            Settled.ERROR,
            crashError(
              `Cannot run task '${entry.task}' as worker ${dead}, which its moved buffers were sent to, ${
                neverStarted(reason) ? "failed to start" : "died first"
              }: see 'cause'`,
              dead,
              reason,
            ),
          );
          recovered.rejected++;
        }
        if (table.releaseHandle(handle)) recovered.freed++;
        continue;
      }
      if (state !== TaskState.RUNNING || worker !== dead) continue;
      if (scope.graph !== undefined && (table.fields.loadFlags(i) & TaskFlags.GRAPH) !== 0) {
        // A graph node: rejected and walked like any failed node (lib/graph/walk.ts): its dependants are
        // rejected in turn, and its record comes back with the error if its submitter reads it.
        const crash = crashError(
          `Cannot finish graph node ${table.fields.id(i)} as worker ${dead} died while running it: see 'cause'`,
          dead,
          reason,
        );
        const entry = ledger.placed[i];
        if (entry !== undefined && entry.handle === handle) {
          // Its own promise settles here, with the error itself; the record's report then only frees it.
          ledger.placed[i] = undefined;
          ledger.settle(entry, Settled.ERROR, crash);
        }
        recovered.unreported.push(...scope.graph.died(handle, crash));
        recovered.rejected++;
        continue;
      }
      const entry = ledger.placed[i];
      if (entry !== undefined && entry.handle === handle) { // spec: DiedRejectRunning
        ledger.placed[i] = undefined;
        ledger.settle(
          entry,
          Settled.ERROR,
          crashError(
            `Cannot finish task '${entry.task}' as worker ${dead} died while running it: see 'cause'`,
            dead,
            reason,
          ),
        );
        recovered.rejected++;
      }
      // The dead thread can no longer touch the record (its arguments were freed when it decoded them).
      if (table.releaseHandle(handle)) recovered.freed++;
      continue;
    }
    const forker = table.fields.loadForker(i);
    if (state === TaskState.DONE && worker === dead) {
      // A fork it finished, and perhaps had not published: it may have died between the DONE store and
      // setting the latch (UNSET: the joiner would wait for good), or before freeing an orphan's record
      // (ORPHANED). Nobody will join it (its forker is dead too) or it is an orphan: free the record.
      // UNSET: set the latch in its place (the outcome is written). SET: the joiner reads it as usual (it
      // may be reading it now, so it is not touched).
      const latchAt = table.fields.latchWord(i);
      const latch = mem.load(table.words, latchAt);
      if (forker === dead || scope.isDead(forker) || latch === ORPHANED) {
        if (table.releaseHandle(handle)) recovered.freed++;
      } else if (latch === UNSET && !setLatch(table.words, latchAt) && table.releaseHandle(handle)) {
        recovered.freed++;
      }
      continue;
    }
    if (state === TaskState.RUNNING && worker === dead) {
      // A forked task it ran: fail it, so its joiner goes on; or free it, if nobody will join it.
      if (forker === dead || scope.isDead(forker)) {
        if (table.releaseHandle(handle)) recovered.freed++;
        continue;
      }
      failFork(scope, i, handle, dead, reason);
      recovered.forksFailed++;
      continue;
    }
    if (forker !== dead) continue;
    // A fork of the dead worker, queued somewhere, running elsewhere, or finished: nobody will join it.
    const latchAt = table.fields.latchWord(i);
    const before = orphanLatch(table.words, latchAt);
    if (before === UNSET) recovered.orphaned++;
    else if (before === SET && table.releaseHandle(handle)) recovered.freed++;
  }
  recovered.reclaimed = table.reclaimCachedBy(dead);
  // Slabs it took for a payload and never put in a record (before its replacement takes any).
  table.reclaimSlabsOf(dead);
  repairAbandonedPop(scope.deque);
  // If it died counted as sleeping (at the await in sleepAsync), uncount it, so posters do not look for it.
  scope.sleep.forget(dead);
  return recovered;
}

/**
 * Completes the queue and deque operations the dead worker noted as under way (its handles' notes), in
 * its place: the dead thread can no longer publish or release what it claimed. Whether work may have
 * become visible (a task back in a queue or the deque): then a sleeper is woken to look.
 */
function completeCutOperations(scope: RecoveryScope): boolean {
  let repaired = false;
  // What the repairs of its injector (one handle a level) and free-list handles pushed (a value being
  // pushed when it died).
  const injectorPushed: number[] = [];
  let freeListPushed = QUEUE_EMPTY;
  let freeBlocksPushed = QUEUE_EMPTY;
  for (const { region, notes, role } of scope.queues) {
    const queue = new Injector(region, notes);
    if (!queue.cutShort) continue;
    queue.repair();
    if (role === "injector") injectorPushed.push(queue.published);
    else if (role === "freeRecords") freeListPushed = queue.published;
    else if (role === "freeBlocks") freeBlocksPushed = queue.published;
    repaired = true;
  }
  // The deque has no owner until the replacement starts: this thread is its owner for the repair.
  const deque = new Deque(scope.deque, scope.dequeNotes);
  if (deque.cutShort) {
    deque.repair();
    repaired = true;
  }
  const { table, marks } = scope;
  // A record it was taking from the free list or giving back to it; a payload block in hand. First: a
  // block linked at a record's head is told apart by that link, which freeing the record (below) undoes.
  if (table.recoverNotes(scope.tableNotes, freeListPushed, freeBlocksPushed) > 0) repaired = true;
  const take = (mark: number) => {
    const handle = marks[mark];
    marks[mark] = -1;
    return handle;
  };
  // A task it had taken (its operation returned it) and not yet claimed, or was moving between the
  // injector and its deque (not in the deque: the push that publishes it is followed by the mark's clear
  // with no call between; in the injector only if the repair above pushed it): still QUEUED (or CANCELLED:
  // the worker that takes it frees it), never started. Back to the injector.
  for (const handle of [take(MarkWords.held), take(MarkWords.moving)]) {
    if (handle === -1 || injectorPushed.includes(handle)) continue;
    const state = stateOf(table, handle);
    if (state !== TaskState.QUEUED && state !== TaskState.CANCELLED) continue;
    // Into its own level's queue (the record's level word; its producer wrote it before publishing).
    scope.levels.pushPatiently(handle, table.levelOf(handle));
    repaired = true;
  }
  // A fork it was placing (QUEUED, not yet in its deque), or its own fork it had popped back to run inline
  // and not yet released (QUEUED, out of the deque): nobody else has it, nobody will run it. Free it.
  // (Still CACHED, it is among the records returned by reclaimCachedBy; consumed after it ran elsewhere,
  // DONE, the scan below frees it.)
  for (const handle of [take(MarkWords.pushing), take(MarkWords.consuming)]) {
    if (handle !== -1 && stateOf(table, handle) === TaskState.QUEUED) table.releaseHandle(handle);
  }
  // An orphaned fork it finished and had not yet freed: its latch says SET by now (setLatch's exchange),
  // so only this mark tells that nobody will read it. Free it.
  const freeing = take(MarkWords.freeing);
  if (freeing !== -1 && stateOf(table, freeing) === TaskState.DONE) table.releaseHandle(freeing);
  return repaired;
}

/** Whether any of the dead worker's notes says a step was under way (read before they are completed). */
function inStep(scope: RecoveryScope): boolean {
  for (const { region, notes } of scope.queues) if (new Injector(region, notes).cutShort) return true;
  if (new Deque(scope.deque, scope.dequeNotes).cutShort) return true;
  return scope.marks.some((m) => m !== -1) || tableNotesInStep(scope.tableNotes);
}

/**
 * The state of the record `handle` names, or -1 if the handle is stale (the record was reused).
 *
 * No test reaches a stale mark here (issue 32): each mark names a record the dead worker held alone (a
 * task taken and not yet claimed, or moved, which only its taker frees; a fork it was pushing or
 * consuming; an orphan it was freeing), and a mark outlives its record's release only if the thread died
 * between the release and the mark's clear, inside the pool's own step, where a forced kill waits for it
 * to leave (spec/KillGuard.tla) and a task's own exit cannot land (only a fatal error at that instant,
 * such as the heap running out, could); then another thread must reuse the record before recovery runs. For the pushing, consuming and freeing marks the check is also redundant:
 * releaseHandle compares the generation itself. For held and moving it is not: a stale handle would be
 * pushed to the injector and claim the record's next task when taken (execute's claim compares states).
 */
function stateOf(table: TaskTable, handle: number): number {
  if (!table.isCurrent(handle)) return -1;
  return table.fields.loadState(table.indexOf(handle));
}

/** Writes a WorkerCrashedError as fork `i`'s outcome and sets its latch (or frees it if orphaned). */
/**
 * A task of remote producer slot `slotOf(origin)` on record `i`, as the scan finds it. DONE by the dead
 * worker: its completion may not have been queued (it died between the DONE store and the push), so it is
 * queued again (a second completion of the same handle frees nothing: completion.ts). RUNNING on it, or
 * posted to it and not started: failed with a WorkerCrashedError written into the record, as a finish
 * writes an outcome, then queued. Whether it failed the task.
 */
function recoverRemoteTask(
  scope: RecoveryScope,
  i: number,
  handle: number,
  origin: number,
  state: number,
  worker: number,
  dead: number,
  reason: Error,
): boolean {
  if (worker !== dead) return false;
  const { table } = scope;
  // The scan read the state before the handle. Its producer runs meanwhile: a DONE task may have been
  // read, freed and reused in between. Read again after the handle: still DONE means `handle` was DONE
  // when read (a duplicate of a completion already queued is then harmless: completion.ts).
  if (table.fields.loadState(i) !== state) return false;
  if (state === TaskState.RUNNING && scope.graph !== undefined && (table.fields.loadFlags(i) & TaskFlags.GRAPH) !== 0) {
    // A graph node: rejected and walked as the owner's are (its published records go to their producer).
    scope.graph.died(
      handle,
      crashError(
        `Cannot finish graph node ${table.fields.id(i)} as worker ${dead} died while running it: see 'cause'`,
        dead,
        reason,
      ),
    );
    return true;
  }
  const directed = (table.fields.loadFlags(i) & TaskFlags.DIRECTED) !== 0;
  let failed = false;
  if (state === TaskState.RUNNING || (state === TaskState.QUEUED && directed)) {
    writeCrash(scope, i, dead, reason, "a task", state === TaskState.QUEUED);
    table.fields.storeState(i, TaskState.DONE);
    failed = true;
  } else if (state !== TaskState.DONE) {
    return false;
  }
  scope.complete(slotOf(origin), handle);
  return failed;
}

/**
 * Whether the repair is for a thread that never ran its loop: a start that failed (worker_deaths.ts
 * `startFailed`), whose error is always the workforce's ModuleLoadError; a death's cause never is one.
 */
function neverStarted(reason: Error): boolean {
  return reason instanceof ModuleLoadError;
}

/**
 * Writes a WorkerCrashedError outcome into record `i` (a short one if blocks are short). `queued`: the task
 * was posted to the worker and not started (a directed task), so its message says so, and says whether the
 * worker died or never started (its messages must be true: they are what a user reads).
 */
function writeCrash(scope: RecoveryScope, i: number, dead: number, reason: Error, what: string, queued = false): void {
  const { table, encoder } = scope;
  const error = new WorkerCrashedError(
    !queued
      ? `Cannot finish ${what} as worker ${dead} died while running it: see 'cause'`
      : `Cannot run ${what} as worker ${dead}, which it was posted to, ${
        neverStarted(reason) ? "failed to start" : "died before running it"
      }: see 'cause'`,
    dead,
    { cause: reason },
  );
  encodeOutcome(encoder, error, true);
  if (!table.writeEncoded(i, encoder)) {
    // No blocks for the full error: a short one without a stack fits in the record itself.
    const short = new WorkerCrashedError(`worker ${dead} died`, dead);
    delete (short as { stack?: string }).stack;
    encodeOutcome(encoder, short, true);
    table.writeEncoded(i, encoder);
  }
  table.fields.storeOutcome(i, Outcome.ERROR);
}

function failFork(scope: RecoveryScope, i: number, handle: number, dead: number, reason: Error): void {
  const { table } = scope;
  writeCrash(scope, i, dead, reason, "a forked task");
  table.fields.storeState(i, TaskState.DONE);
  // The latch protocol's set, then wake, made for the dead worker: setLatch's two accesses are these
  // actions of Lifecycle.tla when the main thread makes them.
  // spec: DiedSetLatch
  // spec: DiedNotifyLatch
  if (!setLatch(table.words, table.fields.latchWord(i))) table.releaseHandle(handle);
}
