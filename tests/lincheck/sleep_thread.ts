/**
 * A simulated thread of the sleep/latch harness: a Worker that runs one program per run — the worker
 * loop's idle path over the shipped `Sleep` (`idle`, `sleep`), a poster (`newWork`, `wakeAll`), a latch
 * finisher (`setLatch`) or a joiner (`latchIsSet`, `waitLatch`) — stopping at a gate before every
 * shared-memory access. Waits block for real (in the model): see `sleep_protocol.ts`.
 *
 * The work source and the stop word are the test's own code, but they too go through the facade, so
 * every search and every stop check is a scheduled step, as `findWork`'s and `stopping`'s are.
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
import { parentPort } from "../../lib/runtime/thread.ts";
import { ABORT_MESSAGE, Fn } from "./protocol.ts";
import {
  Role,
  SBlock,
  sblockBase,
  SGlobal,
  SLEEP_REGION_BYTES,
  SMAX_MSG,
  SState,
  Work,
  WORK_BYTES,
  WORK_WORDS,
} from "./sleep_protocol.ts";

/** The set-up message. */
export interface SleepThreadSetup {
  buffer: SharedArrayBuffer;
  thread: number;
  /** Per variant: the URLs of its sleep and latch modules. */
  variants: { sleep: string; latch: string }[];
}

interface SleepHandle {
  idle(index: number, search: () => number, stopping: () => boolean): number;
  sleep(index: number, timeoutMs?: number): boolean;
  newWork(): boolean;
  wakeAll(): number;
}
interface SleepModule {
  Sleep: new (buffer: SharedArrayBuffer, byteOffset: number, workers: number) => SleepHandle;
  IDLE_STOPPING: number;
  IDLE_POSTED: number;
  IDLE_ASLEEP: number;
}
interface LatchModule {
  setLatch(words: Int32View, at: number): void;
  latchIsSet(words: Int32View, at: number): boolean;
  waitLatch(words: Int32View, at: number, timeoutMs: number): void;
}
interface Variant {
  sleep: SleepModule;
  latch: LatchModule;
}

const port = await parentPort();
port.onMessage(async (message) => {
  const setup = message as SleepThreadSetup;
  const variants: Variant[] = [];
  for (const v of setup.variants) {
    variants.push({ sleep: await import(v.sleep) as SleepModule, latch: await import(v.latch) as LatchModule });
  }
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
    if (Atomics.load(ctl, SGlobal.TRACE) === 1) {
      const [file, line] = callerSite();
      Atomics.store(ctl, base + SBlock.SITE_FILE, file);
      Atomics.store(ctl, base + SBlock.SITE_LINE, line);
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

/** The module (1 sleep.ts, 2 latch.ts) and line of the code under test that made the pending access. */
function callerSite(): [number, number] {
  const stack = new Error().stack ?? "";
  const m = /\/(sleep|latch)\.ts:(\d+):\d+/.exec(stack);
  return m === null ? [0, 0] : [m[1] === "sleep" ? 1 : 2, Number(m[2])];
}

function loop(setup: SleepThreadSetup, gate: Gate, variants: Variant[]): void {
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
      runProgram(setup, ctl, base, variants[Atomics.load(ctl, SGlobal.VARIANT)]);
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

/** Takes one work item if any is visible: the search of the worker loop, in miniature. */
function take(work: Int32Array): number {
  for (;;) {
    const n = mem.load(work, Work.AVAIL);
    if (n <= 0) return -1;
    if (mem.compareExchange(work, Work.AVAIL, n, n - 1) === n) return n;
  }
}

function runProgram(setup: SleepThreadSetup, ctl: Int32Array, base: number, mod: Variant): void {
  const role = Atomics.load(ctl, base + SBlock.ROLE);
  const p1 = Atomics.load(ctl, base + SBlock.PARAM1);
  const p2 = Atomics.load(ctl, base + SBlock.PARAM2);
  const work = new Int32Array(setup.buffer, WORK_BYTES, WORK_WORDS);
  if (role === Role.NONE) return;
  if (role === Role.FINISHER) {
    mod.latch.setLatch(work, Work.LATCH);
    return;
  }
  if (role === Role.JOINER) {
    // joinForked's skeleton: check, (nothing to help with), wait on UNSET with a timeout, check again.
    while (!mod.latch.latchIsSet(work, Work.LATCH)) mod.latch.waitLatch(work, Work.LATCH, 1);
    return;
  }
  const sleep = new mod.sleep.Sleep(setup.buffer, SLEEP_REGION_BYTES, Atomics.load(ctl, SGlobal.WORKERS));
  if (role === Role.POSTER) {
    for (let i = 0; i < p1; i++) {
      mem.add(work, Work.AVAIL, 1); // make the work visible (an injector or deque push) …
      if (sleep.newWork()) Atomics.add(ctl, base + SBlock.WOKE, 1); // … then tell a sleeper
    }
    if (p2 === 1) {
      mem.store(work, Work.STOP, 1); // the pool's close: the lifecycle word, then wake everyone
      Atomics.add(ctl, base + SBlock.WOKE, sleep.wakeAll());
    }
    return;
  }
  if (role !== Role.WORKER) throw new Error(`unknown role ${role}`);
  // WorkerLoop.run without tasks, spinning and dozing (lib/worker/search.ts, Search.idle): the search, then the
  // path to sleep.
  const index = p1;
  const search = (): number => take(work);
  const stopping = (): boolean => mem.load(work, Work.STOP) !== 0;
  while (!stopping()) {
    if (search() >= 0) {
      Atomics.add(ctl, base + SBlock.TAKEN, 1);
      continue;
    }
    const late = sleep.idle(index, search, stopping);
    if (late >= 0) {
      Atomics.add(ctl, base + SBlock.TAKEN, 1);
      continue;
    }
    if (late === mod.sleep.IDLE_STOPPING) break;
    if (late === mod.sleep.IDLE_POSTED) continue;
    sleep.sleep(index);
  }
}
