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
 * - its deque: left to its replacement (and to thieves meanwhile); if the worker died inside a pop,
 *   between lowering `bottom` and restoring it, `bottom` is put back at `top`;
 * - its sleep registration: uncounted (`Sleep.forget`).
 *
 * Limits: the repair assumes the worker died between two of the pool's own steps of these kinds: in task
 * code, at an await, or in a wait. A worker killed in the middle of a queue operation (the injector, a
 * free list) or of a payload write can still strand a slot or blocks (see README, Reliability).
 *
 * Threads: the thread that created the pool.
 *
 * @module
 */

import { mem } from "./atomics.ts";
import type { Encoder } from "./codec.ts";
import { repairAbandonedPop } from "./deque.ts";
import { crashError, toError, WorkerCrashedError } from "./errors.ts";
import { Settled, type TaskLedger } from "./ledger.ts";
import { encodeOutcome } from "./outcome.ts";
import type { Sleep } from "./sleep.ts";
import { orphanLatch, SET, setLatch, UNSET } from "./latch.ts";
import { Origin, Outcome, RecordWords, TaskFlags, TaskState, type TaskTable } from "./task.ts";

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
}

/** The shared state and main-thread state a repair works on. */
export interface RecoveryScope {
  table: TaskTable;
  ledger: TaskLedger;
  sleep: Sleep;
  encoder: Encoder;
  /** The dead worker's deque region. */
  deque: { buffer: SharedArrayBuffer; byteOffset: number; capacity: number };
  /** Whether a worker index belongs to a dead worker not yet replaced (its forks are orphans too). */
  isDead: (worker: number) => boolean;
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
  const recovered: Recovered = { rejected: 0, forksFailed: 0, orphaned: 0, freed: 0, reclaimed: 0 };
  const capacity = table.indexMask + 1;
  for (let i = 0; i < capacity; i++) {
    const state = mem.load(table.words, table.at(i, RecordWords.state));
    if (state === TaskState.FREE || state === TaskState.CACHED) continue;
    const origin = mem.load(table.words, table.at(i, RecordWords.origin));
    const worker = mem.load(table.words, table.at(i, RecordWords.worker));
    const handle = table.handleOf(i);
    if (origin === Origin.MAIN) {
      // A task posted to it with moved buffers that it had not started: the buffers died with it (one its
      // caller cancelled meanwhile was settled then; only its record is left).
      if (
        (state === TaskState.QUEUED || state === TaskState.CANCELLED) && worker === dead &&
        (mem.load(table.words, table.at(i, RecordWords.flags)) & TaskFlags.DIRECTED) !== 0
      ) {
        const entry = ledger.placed[i];
        if (entry !== undefined && entry.handle === handle) {
          ledger.placed[i] = undefined;
          ledger.settle(
            entry,
            Settled.ERROR,
            crashError(
              `Cannot run task '${entry.task}' as worker ${dead}, which its moved buffers were sent to, died first: see 'cause'`,
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
    const forker = mem.load(table.words, table.at(i, RecordWords.forker));
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
    const latchAt = table.at(i, RecordWords.latch);
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

/** Writes a WorkerCrashedError as fork `i`'s outcome and sets its latch (or frees it if orphaned). */
function failFork(scope: RecoveryScope, i: number, handle: number, dead: number, reason: Error): void {
  const { table, encoder } = scope;
  const error = new WorkerCrashedError(
    `Cannot finish a forked task as worker ${dead} died while running it: see 'cause'`,
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
  mem.store(table.words, table.at(i, RecordWords.outcome), Outcome.ERROR);
  mem.store(table.words, table.at(i, RecordWords.state), TaskState.DONE);
  // The latch protocol's set, then wake, made for the dead worker: setLatch's two accesses are these
  // actions of Lifecycle.tla when the main thread makes them.
  // spec: DiedSetLatch
  // spec: DiedNotifyLatch
  if (!setLatch(table.words, table.at(i, RecordWords.latch))) table.releaseHandle(handle);
}
