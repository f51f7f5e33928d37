/**
 * A simulated thread of the deque model (`model.ts`): one program per run over the shipped
 * `lib/protocol/deque.ts` (or a mutant of it). The gate, its hand-shake and the loop over runs are the
 * kernel's (`../../kernel/gate.ts`).
 *
 * Programs (the role in the thread block; the operations in the thread's program area, `layout.ts`):
 * - OWNER: a `Deque` handle on region 0 (the victim); push and pop.
 * - THIEF: steal from region `arg` (0 the victim, k thief k's own deque: one `Stealer` per source), and
 *   stealHalf into its own deque (its own region, a `Deque` handle). Before a stealHalf it notes the room
 *   its deque had, after it the values moved (only this thread writes its deque's bottom and slots during a
 *   run, so those reads are exact; its top may move under other thieves' steals: room only grows).
 *
 * The results are bookkeeping, written with plain `Atomics` between two scheduled accesses.
 *
 * @module
 */

import { DequeWords } from "../../../../lib/protocol/layout.ts";
import { serveModel, type ThreadRun } from "../../kernel/gate.ts";
import { DGlobal, DRole, OpCode, Prog, progBase, regionOffset, Result, RESULT_WORDS } from "./layout.ts";

interface Region {
  buffer: SharedArrayBuffer;
  byteOffset: number;
  capacity: number;
}
interface DequeHandle {
  push(value: number): boolean;
  pop(): number;
}
interface StealerHandle {
  steal(): number;
  stealHalfInto(dst: DequeHandle): number;
}
interface DequeModule {
  Deque: new (region: Region) => DequeHandle;
  Stealer: new (region: Region) => StealerHandle;
}

await serveModel({ program });

function program({ buffer, thread, ctl, role, modules, setOp }: ThreadRun): void {
  if (role === DRole.NONE) return;
  const mod = modules[0] as DequeModule;
  const prog = progBase(thread);
  const n = Atomics.load(ctl, prog + Prog.LEN);
  if (n === 0) return;
  const capacity = Atomics.load(ctl, DGlobal.CAPACITY);
  const region = (k: number): Region => ({ buffer, byteOffset: regionOffset(k), capacity });
  const isOwner = role === DRole.OWNER;
  const owner = isOwner ? new mod.Deque(region(0)) : null;
  const stealers = new Map<number, StealerHandle>();
  const stealer = (from: number): StealerHandle => {
    let s = stealers.get(from);
    if (s === undefined) stealers.set(from, s = new mod.Stealer(region(from)));
    return s;
  };
  const dst = isOwner ? null : new mod.Deque(region(thread));
  const dstWords = new Int32Array(buffer, regionOffset(thread), DequeWords.slots + capacity);
  for (let k = 0; k < n; k++) {
    setOp(k);
    const code = Atomics.load(ctl, prog + Prog.OPS + 2 * k);
    const arg = Atomics.load(ctl, prog + Prog.OPS + 2 * k + 1);
    const out = prog + Prog.RESULTS + k * RESULT_WORDS;
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
