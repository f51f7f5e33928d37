/**
 * A simulated thread of the queue model (`model.ts`): one program per run over the shipped
 * `lib/protocol/injector.ts` (or a mutant of it): push, pushPatiently and pop on the one queue in region 0,
 * the operations in the thread's program area (the deque model's layout, `../deque/layout.ts`). The gate,
 * its hand-shake and the loop over runs are the kernel's (`../../kernel/gate.ts`). Results are bookkeeping,
 * written with plain `Atomics` between two scheduled accesses.
 *
 * @module
 */

import { serveModel, type ThreadRun } from "../../kernel/gate.ts";
import { DGlobal, DRole, OpCode, Prog, progBase, regionOffset, Result, RESULT_WORDS } from "../deque/layout.ts";

interface QueueModule {
  Injector: new (region: { buffer: SharedArrayBuffer; byteOffset: number; capacity: number }) => {
    push(value: number): boolean;
    pushPatiently(value: number): void;
    pop(): number;
  };
}

await serveModel({ program });

function program({ buffer, thread, ctl, role, modules, setOp }: ThreadRun): void {
  if (role === DRole.NONE) return;
  if (role !== DRole.QUEUE) throw new Error(`unknown role ${role}`);
  const mod = modules[0] as QueueModule;
  const prog = progBase(thread);
  const n = Atomics.load(ctl, prog + Prog.LEN);
  if (n === 0) return;
  const capacity = Atomics.load(ctl, DGlobal.CAPACITY);
  const q = new mod.Injector({ buffer, byteOffset: regionOffset(0), capacity });
  for (let k = 0; k < n; k++) {
    setOp(k);
    const code = Atomics.load(ctl, prog + Prog.OPS + 2 * k);
    const arg = Atomics.load(ctl, prog + Prog.OPS + 2 * k + 1);
    const out = prog + Prog.RESULTS + k * RESULT_WORDS;
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
