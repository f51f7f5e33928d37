/**
 * A simulated thread of the levels model (`model.ts`): one program per run over the shipped
 * `lib/protocol/levels.ts` (or a mutant of it) and the real `lib/protocol/injector.ts`. The gate, its
 * hand-shake and the loop over runs are the kernel's (`../../kernel/gate.ts`).
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

import { Injector, QUEUE_EMPTY } from "../../../../lib/protocol/injector.ts";
import { CACHE_LINE_WORDS } from "../../../../lib/protocol/layout.ts";
import { serveModel, type ThreadRun } from "../../kernel/gate.ts";
import {
  LCAPACITY,
  LCONTROL_BYTES,
  LGlobal,
  lqueueBytes,
  LRole,
  LWork,
  LWORK_BYTES,
  LWORK_WORDS,
  RECORD_WORDS,
} from "./layout.ts";

interface LevelsHandle {
  pushPatiently(handle: number, level: 0 | 1 | 2): void;
  take(): number;
}
interface LevelsModule {
  Levels: new (parts: { queues: readonly [Injector, Injector, Injector]; control: Int32Array }) => LevelsHandle;
}

await serveModel({ program });

function program({ buffer, thread, gate, ctl, role, p1: count, modules, setOp }: ThreadRun): void {
  const mod = modules[0] as LevelsModule;
  if (role === LRole.NONE) return;
  const queues = [0, 1, 2].map((level) =>
    new Injector({ buffer: buffer, byteOffset: lqueueBytes(level), capacity: LCAPACITY })
  ) as [Injector, Injector, Injector];
  const control = new Int32Array(buffer, LCONTROL_BYTES, 3 * CACHE_LINE_WORDS);
  const levels = new mod.Levels({ queues, control });
  if (role === LRole.PRODUCER) {
    for (let i = 0; i < count; i++) {
      setOp(i);
      levels.pushPatiently(101 + i, Atomics.load(ctl, LGlobal.LEVELS + i) as 0 | 1 | 2);
    }
    return;
  }
  if (role !== LRole.WORKER) throw new Error(`unknown role ${role}`);
  const work = new Int32Array(buffer, LWORK_BYTES, LWORK_WORDS);
  const record = LWork.RECORDS + (thread - 1) * RECORD_WORDS;
  let polled = false;
  for (let op = 0; Atomics.load(work, LWork.TAKEN) < count; op++) {
    setOp(op);
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
