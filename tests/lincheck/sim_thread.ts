/**
 * A simulated thread of the controlled scheduler: a Worker that runs one program of deque or queue
 * operations per run, stopping at a gate before every shared-memory access so that the controller decides the order.
 *
 * Set-up (one message): the buffer, this thread's number, and the URLs of the modules to load
 * (`lib/protocol/deque.ts` or `lib/protocol/injector.ts` first, then their mutants). It installs its gate as the facade binding of
 * `lib/protocol/atomics.ts` — the same module instance the modules under test import — and then never reads another
 * message: it loops on the EPOCH word (see `protocol.ts`).
 *
 * Everything here that is not the code under test (bookkeeping, results) uses `Atomics` directly, so it
 * is not a preemption point.
 *
 * @module
 */

import { installSharedMemory, type Int32View, type WaitAsyncResult } from "../../lib/protocol/atomics.ts";
import { AbortRun, ParkingFacade } from "./kernel/facade.ts";
import { DequeWords } from "../../lib/protocol/layout.ts";
import { parentPort } from "../../lib/runtime/thread.ts";
import {
  Block,
  blockBase,
  Fn,
  Global,
  MAX_MSG,
  OpCode,
  REGION_BYTES,
  regionOffset,
  REGIONS_BASE_BYTES,
  Result,
  RESULT_WORDS,
  State,
} from "./protocol.ts";

/** The set-up message. */
export interface SimThreadSetup {
  buffer: SharedArrayBuffer;
  thread: number;
  variants: string[];
}

interface DequeModule {
  Deque: new (region: { buffer: SharedArrayBuffer; byteOffset: number; capacity: number }) => DequeHandle;
  Stealer: new (region: { buffer: SharedArrayBuffer; byteOffset: number; capacity: number }) => StealerHandle;
}
interface QueueModule {
  Injector: new (region: { buffer: SharedArrayBuffer; byteOffset: number; capacity: number }) => {
    push(value: number): boolean;
    pushPatiently(value: number): void;
    pop(): number;
  };
}
interface DequeHandle {
  push(value: number): boolean;
  pop(): number;
}
interface StealerHandle {
  steal(): number;
  stealHalfInto(dst: DequeHandle): number;
}

const port = await parentPort();
port.onMessage(async (message) => {
  const setup = message as SimThreadSetup;
  const modules: (DequeModule | QueueModule)[] = [];
  for (const url of setup.variants) modules.push(await import(url) as DequeModule | QueueModule);
  const gate = new Gate(setup.buffer, setup.thread);
  installSharedMemory(gate);
  port.post({ ready: setup.thread });
  loop(setup, gate, modules);
});

/** The facade binding: park, wait for GO, make the one access, publish its result. */
class Gate extends ParkingFacade {
  readonly ctl: Int32Array;
  readonly base: number;

  constructor(buffer: SharedArrayBuffer, thread: number) {
    super();
    this.ctl = new Int32Array(buffer);
    this.base = blockBase(thread);
  }

  park(fn: number, view: Int32View, index: number, a1: number, a2: number): void {
    const ctl = this.ctl;
    const base = this.base;
    const region = view.buffer === ctl.buffer && view.byteOffset >= REGIONS_BASE_BYTES
      ? ((view.byteOffset - REGIONS_BASE_BYTES) / REGION_BYTES) | 0
      : -1;
    Atomics.store(ctl, base + Block.FN, fn);
    Atomics.store(ctl, base + Block.REGION, region);
    Atomics.store(ctl, base + Block.WORD, index);
    Atomics.store(ctl, base + Block.ARG1, a1 | 0);
    Atomics.store(ctl, base + Block.ARG2, a2 | 0);
    Atomics.store(ctl, base + Block.LINE, Atomics.load(ctl, Global.TRACE) === 1 ? callerLine() : 0);
    Atomics.store(ctl, base + Block.STATE, State.PARKED);
    Atomics.notify(ctl, base + Block.STATE);
    let s: number;
    while ((s = Atomics.load(ctl, base + Block.STATE)) === State.PARKED) {
      Atomics.wait(ctl, base + Block.STATE, State.PARKED);
    }
    if (s === State.ABORT) throw new AbortRun();
  }

  done(result: number): number {
    Atomics.store(this.ctl, this.base + Block.RESULT, result);
    return result;
  }

  wait(view: Int32View, index: number, expected: number, _timeout?: number): "ok" | "not-equal" | "timed-out" {
    // Under the scheduler nothing may block: a wait is a check that never sleeps.
    this.park(Fn.wait, view, index, expected, 0);
    const r = Atomics.load(view, index) === expected ? "timed-out" : "not-equal";
    this.done(r === "not-equal" ? 1 : 2);
    return r;
  }
  waitAsync(view: Int32View, index: number, expected: number, _timeout?: number): WaitAsyncResult {
    this.park(Fn.waitAsync, view, index, expected, 0);
    const equal = Atomics.load(view, index) === expected;
    this.done(equal ? 2 : 1);
    return { async: false, value: equal ? "timed-out" : "not-equal" };
  }
  notify(view: Int32View, index: number, count?: number): number {
    this.park(Fn.notify, view, index, count ?? -1, 0);
    return this.done(Atomics.notify(view, index, count));
  }
}

/** The line of the module under test (shipped or mutant: named deque.ts or injector.ts) on the stack. */
function callerLine(): number {
  const stack = new Error().stack ?? "";
  const m = /(?:deque|injector)\.ts:(\d+):\d+/.exec(stack);
  return m === null ? 0 : Number(m[1]);
}

function loop(setup: SimThreadSetup, gate: Gate, modules: (DequeModule | QueueModule)[]): void {
  const ctl = gate.ctl;
  const base = gate.base;
  let epoch = 0;
  for (;;) {
    let e: number;
    while ((e = Atomics.load(ctl, Global.EPOCH)) === epoch) Atomics.wait(ctl, Global.EPOCH, epoch);
    epoch = e;
    if (Atomics.load(ctl, Global.SHUTDOWN) !== 0) {
      Atomics.store(ctl, base + Block.STATE, State.EXITED);
      Atomics.notify(ctl, base + Block.STATE);
      return;
    }
    let final: number = State.DONE;
    try {
      runProgram(setup, ctl, base, modules[Atomics.load(ctl, Global.VARIANT)]);
    } catch (error) {
      if (error instanceof AbortRun) {
        final = State.ABORTED;
      } else {
        final = State.FAILED;
        const text = String(error instanceof Error ? `${error.name}: ${error.message}` : error).slice(0, MAX_MSG);
        Atomics.store(ctl, base + Block.MSG, text.length);
        for (let i = 0; i < text.length; i++) Atomics.store(ctl, base + Block.MSG + 1 + i, text.charCodeAt(i));
      }
    }
    Atomics.store(ctl, base + Block.STATE, final);
    Atomics.notify(ctl, base + Block.STATE);
  }
}

function runProgram(setup: SimThreadSetup, ctl: Int32Array, base: number, mod: DequeModule | QueueModule): void {
  const n = Atomics.load(ctl, base + Block.PROG_LEN);
  if (n === 0) return;
  if ("Injector" in mod) return runQueueProgram(setup, ctl, base, n, mod);
  const capacity = Atomics.load(ctl, Global.CAPACITY);
  const buffer = setup.buffer;
  const region = (k: number) => ({ buffer, byteOffset: regionOffset(k), capacity });
  const isOwner = Atomics.load(ctl, base + Block.ROLE) === 0;
  const owner = isOwner ? new mod.Deque(region(0)) : null;
  // A thief steals from the victim (region 0) or from another thief's own deque (its region): the op's
  // argument says which. One stealer handle per source.
  const stealers = new Map<number, StealerHandle>();
  const stealer = (from: number): StealerHandle => {
    let s = stealers.get(from);
    if (s === undefined) stealers.set(from, s = new mod.Stealer(region(from)));
    return s;
  };
  const dst = isOwner ? null : new mod.Deque(region(setup.thread));
  // The thief's own deque: only this thread writes its bottom and slots during a run, so reads of those
  // here are exact; its top may move under other thieves' steals (room only grows).
  const dstWords = new Int32Array(buffer, regionOffset(setup.thread), DequeWords.slots + capacity);
  for (let k = 0; k < n; k++) {
    Atomics.store(ctl, base + Block.OP, k);
    const code = Atomics.load(ctl, base + Block.PROG + 2 * k);
    const arg = Atomics.load(ctl, base + Block.PROG + 2 * k + 1);
    const out = base + Block.RESULTS + k * RESULT_WORDS;
    if (code === OpCode.PUSH) {
      Atomics.store(ctl, out + Result.RET, owner!.push(arg) ? 1 : 0);
    } else if (code === OpCode.POP) {
      Atomics.store(ctl, out + Result.RET, owner!.pop());
    } else if (code === OpCode.STEAL) {
      Atomics.store(ctl, out + Result.RET, stealer(arg).steal());
    } else if (code === OpCode.STEAL_HALF) {
      const db = Atomics.load(dstWords, DequeWords.bottom);
      const dt = Atomics.load(dstWords, DequeWords.top);
      Atomics.store(ctl, out + Result.ROOM, capacity - ((db - dt) | 0));
      const ret = stealer(arg).stealHalfInto(dst!);
      Atomics.store(ctl, out + Result.RET, ret);
      for (let i = 0; i < ret && i < RESULT_WORDS - Result.MOVED; i++) {
        Atomics.store(
          ctl,
          out + Result.MOVED + i,
          Atomics.load(dstWords, DequeWords.slots + (((db + i) | 0) & (capacity - 1))),
        );
      }
    } else {
      throw new Error(`unknown op code ${code}`);
    }
  }
}

/** A queue program: every thread may push, pushPatiently and pop on the one queue in region 0. */
function runQueueProgram(setup: SimThreadSetup, ctl: Int32Array, base: number, n: number, mod: QueueModule): void {
  const capacity = Atomics.load(ctl, Global.CAPACITY);
  const q = new mod.Injector({ buffer: setup.buffer, byteOffset: regionOffset(0), capacity });
  for (let k = 0; k < n; k++) {
    Atomics.store(ctl, base + Block.OP, k);
    const code = Atomics.load(ctl, base + Block.PROG + 2 * k);
    const arg = Atomics.load(ctl, base + Block.PROG + 2 * k + 1);
    const out = base + Block.RESULTS + k * RESULT_WORDS;
    if (code === OpCode.QUEUE_PUSH) {
      Atomics.store(ctl, out + Result.RET, q.push(arg) ? 1 : 0);
    } else if (code === OpCode.QUEUE_PUSH_PATIENTLY) {
      q.pushPatiently(arg);
      Atomics.store(ctl, out + Result.RET, 1);
    } else if (code === OpCode.QUEUE_POP) {
      Atomics.store(ctl, out + Result.RET, q.pop());
    } else {
      throw new Error(`unknown queue op code ${code}`);
    }
  }
}
