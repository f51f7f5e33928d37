/**
 * A simulated thread of the kill-guard model (`model.ts`): one program per run over the shipped
 * `lib/protocol/kill_guard.ts` (or a mutant of it). The gate, its hand-shake and the loop over runs are the
 * kernel's (`../../kernel/gate.ts`: waits block until a notify on their word, or until the schedule times
 * them out).
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

import { mem } from "../../../../lib/protocol/atomics.ts";
import { StatusWords } from "../../../../lib/protocol/layout.ts";
import { serveModel, type ThreadRun } from "../../kernel/gate.ts";
import { KGlobal, KMAX_HANDLES, KRole, KSTATUS_BYTES, KWork, KWORK_BYTES, KWORK_WORDS } from "./layout.ts";

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

await serveModel({ program });

/** One pool step: the spec's Pool1 and Pool2, each a scheduled access (a kill between them is seen). */
function poolStep(work: Int32Array, inside?: () => void): void {
  mem.store(work, KWork.INPOOL, 1);
  inside?.();
  mem.store(work, KWork.INPOOL, 0);
}

function program({ buffer, gate, ctl, role, p1, p2, modules }: ThreadRun): void {
  const mod = modules[0] as KillGuardModule;
  const handles = Atomics.load(ctl, KGlobal.HANDLES);
  const status = new Int32Array(buffer, KSTATUS_BYTES, StatusWords.count);
  const work = new Int32Array(buffer, KWORK_BYTES, KWORK_WORDS);
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
