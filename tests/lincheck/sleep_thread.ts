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

import { installSharedMemory, type Int32View, mem } from "../../lib/protocol/atomics.ts";
import { parentPort } from "../../lib/runtime/thread.ts";
import { serveRuns, WaitGate } from "./wait_gate.ts";
import { Role, SBlock, SGlobal, SLEEP_REGION_BYTES, Work, WORK_BYTES, WORK_WORDS } from "./sleep_protocol.ts";

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
  const gate = new WaitGate(setup.buffer, setup.thread, callerSite);
  installSharedMemory(gate);
  port.post({ ready: setup.thread });
  serveRuns(gate, () => runProgram(setup, gate.ctl, gate.base, variants[Atomics.load(gate.ctl, SGlobal.VARIANT)]));
});

/** The module (1 sleep.ts, 2 latch.ts) and line of the code under test that made the pending access. */
function callerSite(): [number, number] {
  const stack = new Error().stack ?? "";
  const m = /\/(sleep|latch)\.ts:(\d+):\d+/.exec(stack);
  return m === null ? [0, 0] : [m[1] === "sleep" ? 1 : 2, Number(m[2])];
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
