/**
 * A simulated thread of the sleep/latch model: one program per run — the worker loop's idle path over the
 * shipped `Sleep` (`idle`, `sleep`), a poster (`newWork`, `wakeAll`), a latch finisher (`setLatch`) or a
 * joiner (`latchIsSet`, `waitLatch`) — over the variant's `sleep.ts` and `latch.ts`. The gate, its hand-shake
 * and the loop over runs are the kernel's (`../../kernel/gate.ts`); waits block for real (in the model).
 *
 * The work source and the stop word are the test's own code, but they too go through the facade, so
 * every search and every stop check is a scheduled step, as `findWork`'s and `stopping`'s are.
 *
 * @module
 */

import { type Int32View, mem } from "../../../../lib/protocol/atomics.ts";
import { serveModel, type ThreadRun } from "../../kernel/gate.ts";
import { Role, SLEEP_REGION_BYTES, SleepBlock, SleepGlobal, Work, WORK_BYTES, WORK_WORDS } from "./layout.ts";

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

await serveModel({ program });

/** Takes one work item if any is visible: the search of the worker loop, in miniature. */
function take(work: Int32Array): number {
  for (;;) {
    const n = mem.load(work, Work.AVAIL);
    if (n <= 0) return -1;
    if (mem.compareExchange(work, Work.AVAIL, n, n - 1) === n) return n;
  }
}

function program({ buffer, ctl, base, role, p1, p2, modules }: ThreadRun): void {
  const [sleepModule, latch] = modules as [SleepModule, LatchModule];
  const work = new Int32Array(buffer, WORK_BYTES, WORK_WORDS);
  if (role === Role.NONE) return;
  if (role === Role.FINISHER) {
    latch.setLatch(work, Work.LATCH);
    return;
  }
  if (role === Role.JOINER) {
    // joinForked's skeleton: check, (nothing to help with), wait on UNSET with a timeout, check again.
    while (!latch.latchIsSet(work, Work.LATCH)) latch.waitLatch(work, Work.LATCH, 1);
    return;
  }
  const sleep = new sleepModule.Sleep(buffer, SLEEP_REGION_BYTES, Atomics.load(ctl, SleepGlobal.WORKERS));
  if (role === Role.POSTER) {
    for (let i = 0; i < p1; i++) {
      mem.add(work, Work.AVAIL, 1); // make the work visible (an injector or deque push) …
      if (sleep.newWork()) Atomics.add(ctl, base + SleepBlock.WOKE, 1); // … then tell a sleeper
    }
    if (p2 === 1) {
      mem.store(work, Work.STOP, 1); // the pool's close: the lifecycle word, then wake everyone
      Atomics.add(ctl, base + SleepBlock.WOKE, sleep.wakeAll());
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
      Atomics.add(ctl, base + SleepBlock.TAKEN, 1);
      continue;
    }
    const late = sleep.idle(index, search, stopping);
    if (late >= 0) {
      Atomics.add(ctl, base + SleepBlock.TAKEN, 1);
      continue;
    }
    if (late === sleepModule.IDLE_STOPPING) break;
    if (late === sleepModule.IDLE_POSTED) continue;
    sleep.sleep(index);
  }
}
