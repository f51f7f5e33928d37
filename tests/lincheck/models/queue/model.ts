/**
 * The queue model: the shipped `lib/protocol/injector.ts` (the bounded MPMC queue) — every thread may push,
 * pushPatiently and pop — in one SharedArrayBuffer under the kernel's controlled interleavings
 * (`../../kernel/harness.ts`), with the kernel's second yield policy: a patient push yields after it starts
 * another attempt, and a run in which only such pushes are left, none of them able to succeed, stalls. The
 * run's set-up (the queue initialised at its starting position, the prefill pushed by the controller) and
 * its end (the history, the drain); the programs are `thread.ts`, the layout the deque model's
 * (`../deque/layout.ts`). Scenarios and tables are `scenario.ts`, the oracles `oracles.ts`.
 * Variant 0 is the shipped module, variant k the k-th of `QUEUE_MUTANTS` (when loaded).
 *
 * The set-up and the drain run on the controller with every shared access counted: a mutant's pop can spin
 * for ever in its retry loop on a sequence word it misreads as "a lap ahead", and the controller must not
 * hang with it.
 *
 * @module
 */

import { atomicsBinding, installSharedMemory } from "../../../../lib/protocol/atomics.ts";
import { InjectorWords } from "../../../../lib/protocol/layout.ts";
import { Fn } from "../../../../spec/trace/facade_codes.ts";
import { QUEUE_MUTANTS, SHIPPED_QUEUE } from "../../../mutants/mutants.ts";
import { type Access as KernelAccess, Harness, type Model, type RunEnd, type RunSetup } from "../../kernel/harness.ts";
import { pushedValues, type QueueHistoryOp, type QueueScenario } from "./scenario.ts";
import { checkQueueExecution, type QueueViolation } from "./oracles.ts";
import {
  BUFFER_BYTES,
  DGlobal,
  DRole,
  OpCode,
  REGION_BYTES,
  regionOffset,
  regionWord,
  Result,
} from "../deque/layout.ts";
import {
  type Access,
  completed,
  DMAX_STEPS,
  DTHREADS,
  opSteps,
  regionAccesses,
  resultBase,
  writeProgram,
} from "../deque/model.ts";

/** What the queue model reads at the end of a run (the kernel adds the rest of `QueueExecution`). */
export interface QueueObserved {
  accesses: Access[];
  history: QueueHistoryOp[];
  drainUnbounded: boolean;
}

/** The kernel's harness of the queue model. */
export type QueueHarness = Harness<QueueScenario, QueueObserved, QueueViolation>;

interface QueueRegion {
  buffer: SharedArrayBuffer;
  byteOffset: number;
  capacity: number;
}
interface QueueModule {
  initInjector(region: QueueRegion): void;
  Injector: new (region: QueueRegion) => { push(v: number): boolean; pop(): number };
  QUEUE_EMPTY: number;
}

const CODES = { push: OpCode.QUEUE_PUSH, pushPatiently: OpCode.QUEUE_PUSH_PATIENTLY, pop: OpCode.QUEUE_POP };

/** Each thread's program: its operations with the values it pushes. */
function programs(s: QueueScenario) {
  const pushed = pushedValues(s);
  return s.threads.map((ops, t) => {
    const values = [...pushed.get(t)!];
    return ops.map((kind) => ({ code: CODES[kind], arg: kind === "pop" ? 0 : values.shift()!, kind }));
  });
}

/**
 * The queue model, with `QUEUE_MUTANTS` as variants 1.. if `withMutants` (none in the mutation run). Made
 * per harness: its set-up's history waits here for the run's end.
 */
export function queueModel(withMutants: boolean): Model<QueueScenario, QueueObserved, QueueViolation> {
  let setup: QueueHistoryOp[] = [];
  let setupUnbounded = false;
  return {
    name: "queue",
    thread: new URL("./thread.ts", import.meta.url),
    threads: DTHREADS,
    bufferBytes: BUFFER_BYTES,
    maxSteps: DMAX_STEPS,
    modules: [SHIPPED_QUEUE],
    mutants: withMutants ? QUEUE_MUTANTS : [],
    traced: ["injector.ts"],
    loadHere: true,
    continuation: "same-or-lowest",
    schedules: { maxLength: 160, maxSegment: 12, maxSegments: 24, timeouts: false, stepMax: 11 },
    threadCount: (s) => s.threads.length,
    threadName: (_s, t) => `t${t}`,
    // A patient push yields each time it starts an attempt again (its second and later loads of tail):
    // after a failed push, and also after a lost race (another producer progressed, so a switch costs
    // nothing). Told by the access pattern, not by the words' values, so a mutant that encodes them
    // differently yields the same way.
    yieldAfter(s: QueueScenario): (a: KernelAccess) => boolean {
      const progs = programs(s);
      const tailLoads = new Map<string, number>();
      return (a) => {
        if (progs[a.thread]?.[a.op]?.kind !== "pushPatiently" || a.fn !== Fn.load) return false;
        if (regionWord(a.addr).word !== InjectorWords.tail) return false;
        const key = `${a.thread}:${a.op}`;
        const n = (tailLoads.get(key) ?? 0) + 1;
        tailLoads.set(key, n);
        return n >= 2;
      };
    },
    prepare(run: RunSetup, s: QueueScenario): void {
      const mod = run.modules[0] as QueueModule;
      const capacity = s.capacity;
      const region: QueueRegion = { buffer: run.buffer, byteOffset: regionOffset(0), capacity };
      new Int32Array(run.buffer, regionOffset(0), REGION_BYTES / 4).fill(0);
      mod.initInjector(region);
      if (s.initialPos !== 0) {
        // The state initInjector would have left after initialPos pushes and pops: head = tail = p, and
        // each slot free for its position of the lap that starts at p. (initInjector starts at 0 only.)
        const words = new Int32Array(run.buffer, regionOffset(0), InjectorWords.seqs + 2 * capacity);
        const p = s.initialPos | 0;
        Atomics.store(words, InjectorWords.head, p);
        Atomics.store(words, InjectorWords.tail, p);
        for (let i = 0; i < capacity; i++) {
          Atomics.store(words, InjectorWords.seqs + (((p + i) | 0) & (capacity - 1)), (p + i) | 0);
        }
      }
      setup = [];
      setupUnbounded = false;
      const q = new mod.Injector(region);
      bounded(() => {
        pushedValues(s).get(-1)!.forEach((v, i) => {
          const ok = q.push(v);
          setup.push({
            thread: -1,
            index: i,
            kind: "push",
            arg: v,
            ret: ok ? 1 : 0,
            first: -1000 + i,
            last: -1000 + i,
          });
        });
      }, () => setupUnbounded = true);
      Atomics.store(run.ctl, DGlobal.CAPACITY, capacity);
      programs(s).forEach((prog, t) => {
        writeProgram(run.ctl, t, prog);
        run.assign(t, DRole.QUEUE);
      });
    },
    observe(run: RunEnd, s: QueueScenario): QueueObserved {
      const mod = run.modules[0] as QueueModule;
      const accesses = regionAccesses(run.accesses);
      const progs = programs(s);
      const { first, last } = opSteps(accesses, progs.map((p) => p.length));
      const history: QueueHistoryOp[] = [...setup];
      let drainUnbounded = setupUnbounded;
      progs.forEach((prog, t) => {
        prog.forEach((p, k) => {
          if (first[t][k] < 0) return; // never started
          if (!completed(run, t, k)) return; // pending (aborted, stalled or failed inside it)
          const ret = Atomics.load(run.ctl, resultBase(t, k) + Result.RET);
          const h: QueueHistoryOp = { thread: t, index: k, kind: p.kind, ret, first: first[t][k], last: last[t][k] };
          if (p.kind !== "pop") h.arg = p.arg;
          history.push(h);
        });
      });
      const bound = s.capacity + 4;
      const drain = new mod.Injector({ buffer: run.buffer, byteOffset: regionOffset(0), capacity: s.capacity });
      bounded(() => {
        for (let i = 0; i < bound; i++) {
          const v = drain.pop();
          history.push({ thread: -2, index: i, kind: "pop", ret: v, first: run.steps + i, last: run.steps + i });
          if (v === mod.QUEUE_EMPTY) break;
          if (i === bound - 1) drainUnbounded = true;
        }
      }, () => drainUnbounded = true);
      return { accesses, history, drainUnbounded };
    },
    check: (s, exec) => checkQueueExecution(exec, s),
  };
}

/** Starts the queue model's harness (its four threads), with the mutants as variants if `withMutants`. */
export function startQueueModel(withMutants: boolean): Promise<QueueHarness> {
  return Harness.start(queueModel(withMutants));
}

/** Shared accesses the single-threaded setup or drain may make before it counts as spinning for ever. */
const PHASE_BOUND = 10_000;

class PhaseUnbounded extends Error {}

/**
 * Runs the setup or the drain (on this thread, outside the scheduler) with every shared access counted;
 * past the bound, `onUnbounded` is called.
 */
function bounded(phase: () => void, onUnbounded: () => void): void {
  let accesses = 0;
  const count = () => {
    if (++accesses > PHASE_BOUND) throw new PhaseUnbounded("the setup or the drain did not end");
  };
  const restore = installSharedMemory({
    ...atomicsBinding,
    load: (v, i) => (count(), atomicsBinding.load(v, i)),
    store: (v, i, x) => (count(), atomicsBinding.store(v, i, x)),
    compareExchange: (v, i, e, r) => (count(), atomicsBinding.compareExchange(v, i, e, r)),
  });
  try {
    phase();
  } catch (error) {
    if (!(error instanceof PhaseUnbounded)) throw error;
    onUnbounded();
  } finally {
    restore();
  }
}
