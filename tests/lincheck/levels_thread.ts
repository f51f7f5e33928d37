/**
 * A simulated thread of the levels harness (`levels_harness.ts`): a Worker that runs one program per run
 * over the shipped `lib/protocol/levels.ts` (or a mutant of it) and the real `lib/protocol/injector.ts`,
 * stopping at a gate before every shared-memory access (the sleep harness's gate, `wait_gate.ts`).
 *
 * Programs (the role in the thread block):
 * - PRODUCER: one `Levels` handle; `pushPatiently(101 + i, level of task i)` for each task i in order.
 * - WORKER: one `Levels` handle of its own (its streaks are its own); `take()` until the test's TAKEN word
 *   reaches the number of tasks, recording each task taken with its take count (the OP word: every take,
 *   one that found nothing included). A take after one that found nothing is a poll: its first access is
 *   marked as a yield (YIELD word), so that the controller runs another thread first if one can run
 *   (CHESS's treatment of a spin loop; the pool's worker sleeps instead).
 *
 * The TAKEN word and the records are bookkeeping, written with plain `Atomics` between two scheduled
 * accesses: only one simulated thread runs at a time, so they are as deterministic as the schedule.
 *
 * @module
 */

import { installSharedMemory } from "../../lib/protocol/atomics.ts";
import { Injector, QUEUE_EMPTY } from "../../lib/protocol/injector.ts";
import { CACHE_LINE_WORDS } from "../../lib/protocol/layout.ts";
import { parentPort } from "../../lib/runtime/thread.ts";
import { serveRuns, WaitGate } from "./wait_gate.ts";
import {
  LBlock,
  LCAPACITY,
  LCONTROL_BYTES,
  LGlobal,
  lqueueBytes,
  LRole,
  LWork,
  LWORK_BYTES,
  LWORK_WORDS,
  RECORD_WORDS,
} from "./levels_protocol.ts";
import { SBlock, SGlobal } from "./sleep_protocol.ts";

/** The set-up message. */
export interface LevelsThreadSetup {
  buffer: SharedArrayBuffer;
  thread: number;
  /** Per variant: the URL of its levels module. */
  variants: string[];
}

interface LevelsHandle {
  pushPatiently(handle: number, level: 0 | 1 | 2): void;
  take(): number;
}
interface LevelsModule {
  Levels: new (parts: { queues: readonly [Injector, Injector, Injector]; control: Int32Array }) => LevelsHandle;
}

const port = await parentPort();
port.onMessage(async (message) => {
  const setup = message as LevelsThreadSetup;
  const variants: LevelsModule[] = [];
  for (const url of setup.variants) variants.push(await import(url) as LevelsModule);
  const gate = new LevelsGate(setup.buffer, setup.thread, callerSite);
  installSharedMemory(gate);
  port.post({ ready: setup.thread });
  serveRuns(gate, () => runProgram(setup, gate, variants[Atomics.load(gate.ctl, SGlobal.VARIANT)]));
});

/** The gate, marking a poll's first access as a yield. */
class LevelsGate extends WaitGate {
  /** The next access is a poll's first: mark it as a yield. */
  yieldNext = false;

  protected override beforePark(): void {
    Atomics.store(this.ctl, this.base + LBlock.YIELD, this.yieldNext ? 1 : 0);
    this.yieldNext = false;
  }
}

/** The line of levels.ts (module 1) or injector.ts (module 2) that made the pending access, or none (0, 0). */
function callerSite(): [number, number] {
  const stack = new Error().stack ?? "";
  const m = /\/(levels|injector)\.ts:(\d+):\d+/.exec(stack);
  return m === null ? [0, 0] : [m[1] === "levels" ? 1 : 2, Number(m[2])];
}

function runProgram(setup: LevelsThreadSetup, gate: LevelsGate, mod: LevelsModule): void {
  const ctl = gate.ctl;
  const base = gate.base;
  const role = Atomics.load(ctl, base + SBlock.ROLE);
  const count = Atomics.load(ctl, base + SBlock.PARAM1);
  if (role === LRole.NONE) return;
  const queues = [0, 1, 2].map((level) =>
    new Injector({ buffer: setup.buffer, byteOffset: lqueueBytes(level), capacity: LCAPACITY })
  ) as [Injector, Injector, Injector];
  const control = new Int32Array(setup.buffer, LCONTROL_BYTES, 3 * CACHE_LINE_WORDS);
  const levels = new mod.Levels({ queues, control });
  if (role === LRole.PRODUCER) {
    for (let i = 0; i < count; i++) {
      Atomics.store(ctl, base + LBlock.OP, i);
      levels.pushPatiently(101 + i, Atomics.load(ctl, LGlobal.LEVELS + i) as 0 | 1 | 2);
    }
    return;
  }
  if (role !== LRole.WORKER) throw new Error(`unknown role ${role}`);
  const work = new Int32Array(setup.buffer, LWORK_BYTES, LWORK_WORDS);
  const record = LWork.RECORDS + (setup.thread - 1) * RECORD_WORDS;
  let polled = false;
  for (let op = 0; Atomics.load(work, LWork.TAKEN) < count; op++) {
    Atomics.store(ctl, base + LBlock.OP, op);
    gate.yieldNext = polled;
    const task = levels.take();
    polled = task === QUEUE_EMPTY;
    if (polled) continue;
    const n = Atomics.add(work, record, 1);
    if (1 + 2 * n + 1 >= RECORD_WORDS) throw new Error("too many takes to record");
    Atomics.store(work, record + 1 + 2 * n, task);
    Atomics.store(work, record + 2 + 2 * n, op);
    Atomics.add(work, LWork.TAKEN, 1);
  }
}
