/**
 * A simulated thread of the kill-guard harness (`kill_guard_harness.ts`): a Worker that runs one program per
 * run over the shipped `lib/protocol/kill_guard.ts` (or a mutant of it), stopping at a gate before every
 * shared-memory access. The gate and its hand-shake are the sleep harness's (`sleep_protocol.ts`: waits block
 * until a notify on their word, or until the schedule times them out).
 *
 * Programs (the role in the thread block):
 * - WORKER: `new WorkerGuard` (its two accesses run before the schedule starts: a task can be asked to die
 *   only once its thread runs it), `hold` of every handle (their TASK words are 1 from the start), a pool
 *   step; then per cycle `leave` (user code),
 *   `enter`, a pool step; then either the task finishes (its pool step clears every TASK word, `release`) or
 *   the worker stays in user code for good. A pool step is two facade stores of the INPOOL word (1, then 0):
 *   the spec's Pool1 and Pool2, so that a kill between them is seen.
 * - MAIN: `new Killer`; one `request(0, h, …)` per handle h = 1..n, each followed by its timers run to the
 *   end (the poll); stops after a terminate. `runsOn(h)` loads TASK[h]; `terminate` stores KILLED.
 * - SETTLER: stores TASK[h] := 0 for the handles in its mask (the spec's free choice "the task finished
 *   meanwhile": the reason to withdraw).
 *
 * Timers: the MAIN program replaces `setTimeout` / `clearTimeout` with a queue it runs itself (a poll is
 * `setTimeout(attempt, 1)`); the first access of each timer callback is marked as a yield (YIELD word), so
 * that the controller runs another thread first if one can run: a poll that sees the guard up again changes
 * nothing, and polling while the worker stands still is not a schedule worth exploring (CHESS's yield).
 *
 * @module
 */

import {
  installSharedMemory,
  type Int32View,
  mem,
  type SharedMemory,
  type WaitAsyncResult,
} from "../../lib/protocol/atomics.ts";
import { StatusWords } from "../../lib/protocol/layout.ts";
import { parentPort } from "../../lib/runtime/thread.ts";
import { ABORT_MESSAGE, Fn } from "./protocol.ts";
import {
  KBlock,
  KGlobal,
  KMAX_HANDLES,
  KRole,
  KSTATUS_BYTES,
  KWork,
  KWORK_BYTES,
  KWORK_WORDS,
} from "./kill_guard_protocol.ts";
import { SBlock, sblockBase, SGlobal, SMAX_MSG, SState } from "./sleep_protocol.ts";

/** The set-up message. */
export interface KillGuardThreadSetup {
  buffer: SharedArrayBuffer;
  thread: number;
  /** Per variant: the URL of its kill_guard module. */
  variants: string[];
}

interface WorkerGuardHandle {
  hold(handle: number): void;
  release(handle: number): void;
  leave(): void;
  enter(): void;
}
interface KillerHandle {
  request(worker: number, handle: number, cause: Error): void;
}
interface KillGuardModule {
  WorkerGuard: new (status: Int32Array, index: number) => WorkerGuardHandle;
  Killer: new (
    status: Int32Array,
    runsOn: (handle: number, worker: number) => boolean,
    terminate: (worker: number, cause: Error) => void,
  ) => KillerHandle;
}

const port = await parentPort();
port.onMessage(async (message) => {
  const setup = message as KillGuardThreadSetup;
  const variants: KillGuardModule[] = [];
  for (const url of setup.variants) variants.push(await import(url) as KillGuardModule);
  const gate = new Gate(setup.buffer, setup.thread);
  installSharedMemory(gate);
  port.post({ ready: setup.thread });
  loop(setup, gate, variants);
});

class AbortRun extends Error {
  constructor() {
    super(ABORT_MESSAGE);
  }
}

/** The facade binding: park, wait for GO, make the one access (a wait may block), publish its result. */
class Gate implements SharedMemory {
  readonly ctl: Int32Array;
  readonly base: number;
  /** The next access is a poll's first: mark it as a yield. */
  yieldNext = false;

  constructor(buffer: SharedArrayBuffer, thread: number) {
    this.ctl = new Int32Array(buffer);
    this.base = sblockBase(thread);
  }

  park(fn: number, view: Int32View, index: number, a1: number, a2: number): void {
    const ctl = this.ctl;
    const base = this.base;
    if (view.buffer !== ctl.buffer) throw new Error("Cannot schedule an access outside the harness's buffer");
    Atomics.store(ctl, base + SBlock.FN, fn);
    Atomics.store(ctl, base + SBlock.ADDR, (view.byteOffset >> 2) + index);
    Atomics.store(ctl, base + SBlock.ARG1, a1 | 0);
    Atomics.store(ctl, base + SBlock.ARG2, a2 | 0);
    Atomics.store(ctl, base + KBlock.YIELD, this.yieldNext ? 1 : 0);
    this.yieldNext = false;
    if (Atomics.load(ctl, SGlobal.TRACE) === 1) {
      Atomics.store(ctl, base + SBlock.SITE_LINE, callerLine());
    }
    Atomics.store(ctl, base + SBlock.STATE, SState.PARKED);
    Atomics.notify(ctl, base + SBlock.STATE);
    this.hold(SState.PARKED);
  }

  /** Sleeps while STATE is `state`; throws on ABORT; returns the new state. */
  hold(state: number): number {
    const ctl = this.ctl;
    const at = this.base + SBlock.STATE;
    let s: number;
    while ((s = Atomics.load(ctl, at)) === state) Atomics.wait(ctl, at, state);
    if (s === SState.ABORT) throw new AbortRun();
    return s;
  }

  done(result: number): number {
    Atomics.store(this.ctl, this.base + SBlock.RESULT, result);
    return result;
  }

  load(view: Int32View, index: number): number {
    this.park(Fn.load, view, index, 0, 0);
    return this.done(Atomics.load(view, index));
  }
  store(view: Int32View, index: number, value: number): number {
    this.park(Fn.store, view, index, value, 0);
    return this.done(Atomics.store(view, index, value));
  }
  compareExchange(view: Int32View, index: number, expected: number, replacement: number): number {
    this.park(Fn.compareExchange, view, index, expected, replacement);
    return this.done(Atomics.compareExchange(view, index, expected, replacement));
  }
  add(view: Int32View, index: number, value: number): number {
    this.park(Fn.add, view, index, value, 0);
    return this.done(Atomics.add(view, index, value));
  }
  sub(view: Int32View, index: number, value: number): number {
    this.park(Fn.sub, view, index, value, 0);
    return this.done(Atomics.sub(view, index, value));
  }
  exchange(view: Int32View, index: number, value: number): number {
    this.park(Fn.exchange, view, index, value, 0);
    return this.done(Atomics.exchange(view, index, value));
  }
  or(view: Int32View, index: number, value: number): number {
    this.park(Fn.or, view, index, value, 0);
    return this.done(Atomics.or(view, index, value));
  }
  and(view: Int32View, index: number, value: number): number {
    this.park(Fn.and, view, index, value, 0);
    return this.done(Atomics.and(view, index, value));
  }
  wait(view: Int32View, index: number, expected: number, timeout?: number): "ok" | "not-equal" | "timed-out" {
    const timed = timeout !== undefined && timeout !== Infinity;
    this.park(Fn.wait, view, index, expected, timed ? 1 : 0);
    // Released: compare and block in one step (nobody else runs until we say BLOCKED or park again).
    if (Atomics.load(view, index) !== expected) {
      this.done(0);
      return "not-equal";
    }
    const ctl = this.ctl;
    this.done(1);
    Atomics.store(ctl, this.base + SBlock.STATE, SState.BLOCKED);
    Atomics.notify(ctl, this.base + SBlock.STATE);
    this.hold(SState.BLOCKED); // RESUME (or ABORT, which throws)
    return Atomics.load(ctl, this.base + SBlock.WAKE) === 0 ? "ok" : "timed-out";
  }
  waitAsync(_view: Int32View, index: number, _expected: number, _timeout?: number): WaitAsyncResult {
    throw new Error(`Cannot schedule a waitAsync on word ${index}: the harness models Atomics.wait only`);
  }
  notify(view: Int32View, index: number, count?: number): number {
    this.park(Fn.notify, view, index, count ?? -1, 0);
    // The controller woke the waiters before releasing us, and says how many.
    return this.done(Atomics.load(this.ctl, this.base + SBlock.NOTIFIED));
  }
  pause(): void {}
  read(_view: Int32View, index: number): number {
    throw new Error(`Cannot schedule a plain read of word ${index}: the protocol must use atomic loads only`);
  }
  write(_view: Int32View, index: number, _value: number): void {
    throw new Error(`Cannot schedule a plain write of word ${index}: the protocol must use atomic stores only`);
  }
}

/** The line of kill_guard.ts (shipped or mutant) that made the pending access, or 0. */
function callerLine(): number {
  const m = /\/kill_guard\.ts:(\d+):\d+/.exec(new Error().stack ?? "");
  return m === null ? 0 : Number(m[1]);
}

function loop(setup: KillGuardThreadSetup, gate: Gate, variants: KillGuardModule[]): void {
  const ctl = gate.ctl;
  const base = gate.base;
  let epoch = 0;
  for (;;) {
    let e: number;
    while ((e = Atomics.load(ctl, SGlobal.EPOCH)) === epoch) Atomics.wait(ctl, SGlobal.EPOCH, epoch);
    epoch = e;
    if (Atomics.load(ctl, SGlobal.SHUTDOWN) !== 0) {
      Atomics.store(ctl, base + SBlock.STATE, SState.EXITED);
      Atomics.notify(ctl, base + SBlock.STATE);
      return;
    }
    let final: number = SState.DONE;
    try {
      runProgram(setup, gate, variants[Atomics.load(ctl, SGlobal.VARIANT)]);
    } catch (error) {
      if (error instanceof AbortRun) {
        final = SState.ABORTED;
      } else {
        final = SState.FAILED;
        const text = String(error instanceof Error ? `${error.name}: ${error.message}` : error).slice(0, SMAX_MSG);
        Atomics.store(ctl, base + SBlock.MSG, text.length);
        for (let i = 0; i < text.length; i++) Atomics.store(ctl, base + SBlock.MSG + 1 + i, text.charCodeAt(i));
      }
    }
    Atomics.store(ctl, base + SBlock.STATE, final);
    Atomics.notify(ctl, base + SBlock.STATE);
  }
}

/** One pool step: the spec's Pool1 and Pool2, each a scheduled access (a kill between them is seen). */
function poolStep(work: Int32Array, inside?: () => void): void {
  mem.store(work, KWork.INPOOL, 1);
  inside?.();
  mem.store(work, KWork.INPOOL, 0);
}

function runProgram(setup: KillGuardThreadSetup, gate: Gate, mod: KillGuardModule): void {
  const ctl = gate.ctl;
  const base = gate.base;
  const role = Atomics.load(ctl, base + SBlock.ROLE);
  const p1 = Atomics.load(ctl, base + SBlock.PARAM1);
  const p2 = Atomics.load(ctl, base + SBlock.PARAM2);
  const handles = Atomics.load(ctl, KGlobal.HANDLES);
  const status = new Int32Array(setup.buffer, KSTATUS_BYTES, StatusWords.count);
  const work = new Int32Array(setup.buffer, KWORK_BYTES, KWORK_WORDS);
  if (role === KRole.NONE) return;
  if (role === KRole.SETTLER) {
    for (let h = 1; h <= KMAX_HANDLES; h++) if ((p1 & (1 << h)) !== 0) mem.store(work, KWork.TASK + h, 0);
    return;
  }
  if (role === KRole.WORKER) {
    // The worker loop around a task started with force: true (lib/worker/runner.ts, fork_join.ts).
    const guard = new mod.WorkerGuard(status, 0);
    // The task runs here from the start (the controller set its TASK words: runsOn is true), as in the spec's
    // Init: the worker is inside a pool step of it, guard up.
    for (let h = 1; h <= handles; h++) guard.hold(h);
    poolStep(work);
    for (let c = 0; c < p1; c++) {
      guard.leave(); // into user code: killable
      guard.enter(); // back: halts here if killed
      const last = c === p1 - 1;
      if (last && p2 === 1) {
        // The task returned: its record is finished in a pool step, and it is no longer held.
        poolStep(work, () => {
          for (let h = 1; h <= handles; h++) mem.store(work, KWork.TASK + h, 0);
        });
        for (let h = 1; h <= handles; h++) guard.release(h);
        guard.leave(); // nothing held: a no-op (the guard stays up)
        return;
      }
      poolStep(work);
    }
    guard.leave(); // user code (or an await) for good: killable
    return;
  }
  if (role !== KRole.MAIN) throw new Error(`unknown role ${role}`);
  // The main thread's event loop, in miniature: timers run in order, each callback to its end.
  const timers: { id: number; fn: () => void }[] = [];
  let nextId = 1;
  const g = globalThis as unknown as Record<string, unknown>;
  const realSet = g.setTimeout;
  const realClear = g.clearTimeout;
  g.setTimeout = (fn: () => void) => {
    const id = nextId++;
    timers.push({ id, fn });
    return id;
  };
  g.clearTimeout = (id: number) => {
    const at = timers.findIndex((t) => t.id === id);
    if (at >= 0) timers.splice(at, 1);
  };
  try {
    let killed = false;
    const killer = new mod.Killer(
      status,
      (handle) => mem.load(work, KWork.TASK + handle) === 1,
      () => {
        mem.store(work, KWork.KILLED, 1);
        killed = true;
      },
    );
    for (let h = 1; h <= p1 && !killed; h++) {
      killer.request(0, h, new Error("forced"));
      while (timers.length > 0) {
        const t = timers.shift()!;
        gate.yieldNext = true;
        t.fn();
      }
    }
  } finally {
    g.setTimeout = realSet;
    g.clearTimeout = realClear;
  }
}
