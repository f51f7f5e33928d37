/**
 * The forced-kill handshake: the main thread terminates a worker (to force the abort of a task that
 * ignores its signal, `force: true`) only while that worker is outside the pool's own shared-memory steps.
 *
 * Why: crash recovery (recovery.ts) repairs what a worker leaves when it dies in task code, at an await or
 * in a wait; a thread terminated from outside in the middle of a deque pop, a queue push or a record's
 * allocation could strand tasks and records that no repair finds (docs/reliability.md, Known limits). So a kill is
 * asked for, and lands only where recovery is sound.
 *
 * What it owns: two words of each worker's status line (see {@link StatusWords}):
 * - `guard`: 1 while the worker may be inside a pool step; 0 while it runs user code or waits for its event
 *   loop (killable). Only the worker writes it, and only while it holds a task that may be forced: with
 *   none, it stays 1 and costs nothing but two plain field checks per pool entry.
 * - `epoch`: which thread of that index may run pool steps. A thread remembers the epoch it started with;
 *   the main thread asks for a kill by moving the word on, and withdraws by moving it back.
 *
 * The protocol (`spec/KillGuard.tla`), a Dekker handshake over sequentially consistent words: the worker
 * stores its guard up, then reads the epoch; the main thread stores the epoch on, then reads the guard.
 * In the one total order of these accesses either the main thread's read sees the guard up (it waits and
 * reads again), or the worker's read sees the epoch moved (it halts before its pool step, with its guard
 * down). So when the main thread sees the guard down, the worker is outside a pool step and will not enter
 * another: terminating it then is a death in task code.
 *
 * Invariants:
 * - A worker whose epoch moved takes no pool step: it halts at its next entry, guard down, until the epoch
 *   comes back (a withdrawn kill) or its thread ends.
 * - The main thread terminates a worker only after it read that worker's guard down, with the epoch moved.
 * - A new thread on an index starts with its guard up and the epoch as it finds it (the main thread
 *   starts it only after the killed thread has exited: see workforce.ts).
 *
 * Threads: {@link WorkerGuard} on its worker thread; {@link Killer} on the thread that created the pool.
 *
 * @module
 */

import { mem } from "./atomics.ts";
import { StatusWords } from "./layout.ts";

/** How often the main thread reads the guard of a worker it is killing, in ms. */
const POLL_MS = 1;
/** How long a halted worker waits at a time for its epoch to come back (its termination lands meanwhile). */
const HALT_WAIT_MS = 5;

/**
 * A worker's side: lowers its guard before user code (when it holds a task that may be forced) and raises
 * it before pool steps, halting there if the main thread is killing it.
 *
 * @example Usage
 * ```ts ignore
 * const guard = new WorkerGuard(status, index);
 * guard.hold(handle);   // a task started with force: true
 * guard.leave();        // user code runs: killable
 * guard.enter();        // back in the pool's code
 * guard.release(handle);
 * ```
 */
export class WorkerGuard {
  private readonly status: Int32Array;
  private readonly guardAt: number;
  private readonly epochAt: number;
  private readonly epoch: number;
  /** The handles of the tasks that may be forced, started here and not finished. */
  private readonly held: number[] = [];
  /** Whether the guard word is 0 now (this thread is its only writer). */
  private down = false;

  /**
   * @param status The workers' status lines.
   * @param index This worker's index.
   */
  constructor(status: Int32Array, index: number) {
    this.status = status;
    const at = index * StatusWords.count;
    this.guardAt = at + StatusWords.guard;
    this.epochAt = at + StatusWords.epoch;
    // Up from the start: the thread that held this index before us may have left it down when it died.
    mem.store(status, this.guardAt, 1);
    this.epoch = mem.load(status, this.epochAt);
  }

  /**
   * A task that may be forced starts here (in a pool step: the guard is up).
   *
   * @param handle Its handle.
   */
  hold(handle: number): void {
    this.held.push(handle);
  }

  /**
   * A task finished (any task: a no-op unless it was held).
   *
   * @param handle Its handle.
   */
  release(handle: number): void {
    const held = this.held;
    if (held.length === 0) return;
    const at = held.lastIndexOf(handle);
    if (at >= 0) held.splice(at, 1);
  }

  /** Whether the guard is down now (this thread in user code, holding a task that may be forced). */
  get lowered(): boolean {
    return this.down;
  }

  /** Pool code ends (into user code, or back to the event loop): killable, if a held task may be forced. */
  leave(): void {
    if (this.held.length !== 0 && !this.down) {
      this.down = true;
      mem.store(this.status, this.guardAt, 0); // spec: GuardLower
    }
  }

  /** Pool code begins (from user code or the event loop), before any shared access: halts if killed. */
  enter(): void {
    if (!this.down) return;
    this.down = false;
    // Up, then the epoch: the order that the main thread's (epoch on, then guard) pairs with.
    mem.store(this.status, this.guardAt, 1); // spec: GuardRaise
    if (mem.load(this.status, this.epochAt) !== this.epoch) this.halt(); // spec: GuardReadEpoch
  }

  /**
   * The main thread is killing this thread: wait, guard down, for the termination (or for the kill to be
   * withdrawn: the epoch comes back, and the pool step goes on). Timed waits, so that a termination lands.
   */
  private halt(): void {
    const { status, guardAt, epochAt, epoch } = this;
    for (;;) {
      mem.store(status, guardAt, 0); // spec: HaltLower
      for (;;) {
        const now = mem.load(status, epochAt); // spec: HaltReadEpoch
        if (now === epoch) break;
        mem.wait(status, epochAt, now, HALT_WAIT_MS);
      }
      mem.store(status, guardAt, 1); // spec: HaltRaise
      if (mem.load(status, epochAt) === epoch) return; // spec: HaltRecheckEpoch
    }
  }
}

/**
 * The main thread's side: kills the worker running a task that must be forced, once its guard is down;
 * withdraws if the task finished first.
 *
 * @example Usage
 * ```ts ignore
 * const killer = new Killer(status, (handle, worker) => records.runsOn(handle, worker), (worker, cause) =>
 *   workforce.kill(worker, cause));
 * killer.request(worker, handle, () => new Error("forced"));
 * ```
 */
export class Killer {
  private readonly status: Int32Array;
  private readonly runsOn: (handle: number, worker: number) => boolean;
  private readonly terminate: (worker: number, cause: Error) => void;
  /** By worker: the kill under way (the epoch it moved from, the tasks that must end, why). */
  private readonly requests = new Map<number, KillRequest>();

  /**
   * @param status The workers' status lines.
   * @param runsOn Whether task `handle` is still running on `worker` (its record not yet finished, freed
   * or reused): the task records' answer, so that this protocol needs only the status lines.
   * @param terminate Terminates a worker's thread and recovers it as a death with `cause`.
   */
  constructor(
    status: Int32Array,
    runsOn: (handle: number, worker: number) => boolean,
    terminate: (worker: number, cause: Error) => void,
  ) {
    this.status = status;
    this.runsOn = runsOn;
    this.terminate = terminate;
  }

  /**
   * Kills `worker` once it is outside the pool's steps, unless task `handle` stops running there first.
   *
   * @param worker The worker running the task.
   * @param handle The task (a submitted task, aborted and settled already).
   * @param cause What the worker's other tasks' WorkerCrashedError names as its cause.
   */
  request(worker: number, handle: number, cause: Error): void {
    const known = this.requests.get(worker);
    if (known !== undefined) {
      known.handles.push(handle);
      return;
    }
    // Finished already, or its thread died (recovery freed it): nothing to force. Checked before the epoch
    // moves, so that the epoch moves only under a live thread, which read it when it started.
    if (!this.runsOn(handle, worker)) return;
    const epochAt = worker * StatusWords.count + StatusWords.epoch;
    const from = mem.load(this.status, epochAt);
    mem.store(this.status, epochAt, (from + 1) | 0); // spec: KillBumpEpoch
    const request: KillRequest = { from, handles: [handle], cause, timer: undefined };
    this.requests.set(worker, request);
    this.attempt(worker, request);
  }

  /** Every kill under way is dropped (the pool stops: its threads are terminated anyway). */
  stop(): void {
    for (const request of this.requests.values()) clearTimeout(request.timer);
    this.requests.clear();
  }

  private attempt(worker: number, request: KillRequest): void {
    request.timer = undefined;
    if (this.requests.get(worker) !== request) return;
    const at = worker * StatusWords.count;
    if (!request.handles.some((handle) => this.runsOn(handle, worker))) {
      // Finished (or failed) first: the worker goes on; if it halted meanwhile, it resumes.
      this.requests.delete(worker);
      mem.store(this.status, at + StatusWords.epoch, request.from); // spec: KillWithdraw
      mem.notify(this.status, at + StatusWords.epoch);
      return;
    }
    if (mem.load(this.status, at + StatusWords.guard) === 0) { // spec: KillReadGuard
      this.requests.delete(worker);
      this.terminate(worker, request.cause);
      return;
    }
    request.timer = setTimeout(() => this.attempt(worker, request), POLL_MS);
  }
}

/** A kill under way. */
interface KillRequest {
  /** The epoch before the request moved it on. */
  readonly from: number;
  /** The tasks to force (more may come while the first waits). */
  readonly handles: number[];
  readonly cause: Error;
  timer: ReturnType<typeof setTimeout> | undefined;
}
