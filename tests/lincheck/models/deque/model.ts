/**
 * The deque model: the shipped `lib/protocol/deque.ts` — the owner's push and pop on the victim against
 * thieves' steal and stealHalf, a thief's own deque a victim too — in one SharedArrayBuffer under the
 * kernel's controlled interleavings (`../../kernel/harness.ts`; nothing here blocks or yields). The run's
 * set-up (the regions initialised, the prefills pushed by the controller) and its end (the history of every
 * operation, the drains); the programs are `thread.ts`, the layout `layout.ts`. The scenarios, schedules
 * and named scenarios are `scenario.ts`, the oracles `oracles.ts`, the reports `report.ts`.
 * Variant 0 is the shipped module, variant k the k-th of `MUTANTS` (when loaded).
 *
 * Threads of a run: 0 the owner, 1..3 the thieves (thread k has its own deque, region k).
 *
 * Time in a history is the step number: an operation's `first` is the step of its first access and its
 * `last` the step of its last; A precedes B in real time iff `A.last < B.first`. The set-up's operations
 * come before step 0, the drains' after the last step.
 *
 * @module
 */

import { DequeWords } from "../../../../lib/protocol/layout.ts";
import { MUTANTS, SHIPPED_DEQUE } from "../../../mutants/mutants.ts";
import { type Access as KernelAccess, Harness, type Model, type RunEnd, type RunSetup } from "../../kernel/harness.ts";
import { Block, blockBase, MAX_THREADS, State } from "../../kernel/words.ts";
import { checkExecution, type Violation } from "./oracles.ts";
import { pushValue, type Scenario, thiefOpParts, threadName } from "./scenario.ts";
import {
  BUFFER_BYTES,
  DGlobal,
  DRole,
  MAX_CAPACITY,
  MAX_OPS,
  OpCode,
  Prog,
  PROG_WORDS,
  progBase,
  REGION_BYTES,
  regionOffset,
  regionWord,
  Result,
  RESULT_WORDS,
} from "./layout.ts";

/** Simulated threads of the deque and queue models (the old controller's four: schedules read entries modulo 4). */
export const DTHREADS = MAX_THREADS;
/** The step bound of a run, unless the caller gives one. */
export const DMAX_STEPS = 2000;

/** One shared access, as the controller saw it, with its region and word. */
export interface Access {
  step: number;
  thread: number;
  /** Index of the operation in the thread's program. */
  op: number;
  /** Facade function code (`Fn` of spec/trace/facade_codes.ts). */
  fn: number;
  /** Region (0 = victim or queue, k = thief k's deque), or -1 outside the regions. */
  region: number;
  word: number;
  arg1: number;
  arg2: number;
  result: number;
  /** In trace mode, the source line of the module under test that made the access (0 if unknown). */
  line: number;
}

/** Operation kinds in a history. */
export type OpKind = "push" | "pop" | "steal" | "stealHalf";

/** One operation on a deque, with its response. */
export interface HistoryOp {
  /** -1: the setup phase; -2: the drain phase; else the simulated thread. */
  thread: number;
  /** Index in the thread's program (or in the phase). */
  index: number;
  kind: OpKind;
  /** The pushed value. */
  arg?: number;
  /** push: 1 / 0; pop, steal: the value, EMPTY (-1) or RETRY (-2); stealHalf: the count, EMPTY or RETRY. */
  ret: number;
  /** stealHalf: the values moved into the thief's deque, oldest first. */
  values?: number[];
  /** stealHalf: free slots in the thief's deque before the operation. */
  room?: number;
  /** The deque it acts on: 0 the victim (absent: 0), k thief k's own deque (a steal's source). */
  deque?: number;
  /** stealHalf: the deque it moves tasks into (absent: the thread's own). */
  dst?: number;
  /** Step of the first access (invocation) and of the last access (response). */
  first: number;
  last: number;
}

/** Everything one run produced (the stress mode's rounds produce the same, without a controller). */
export interface Execution {
  accesses: Access[];
  /** Operations: setup, threads, drain. */
  history: HistoryOp[];
  /** Values the drain phase popped from each thief's own deque (index = thief). */
  dstDrained: number[][];
  /**
   * The drains of the thieves' deques are also in `history` (pops on deque k), so the oracles count them
   * there (the stress mode's executions leave them only in `dstDrained`).
   */
  drainsInHistory?: boolean;
  /** "thread: message" for every thread that threw. */
  failures: string[];
  /** The step bound was hit; the threads were unwound. */
  aborted: boolean;
  /** A drain did not reach EMPTY within its bound. */
  drainUnbounded: boolean;
  steps: number;
}

/** What the deque model reads at the end of a run (the kernel adds the rest of {@link Execution}). */
export interface DequeObserved {
  accesses: Access[];
  history: HistoryOp[];
  dstDrained: number[][];
  drainsInHistory: true;
  drainUnbounded: boolean;
}

/** The kernel's harness of the deque model. */
export type DequeHarness = Harness<Scenario, DequeObserved, Violation>;

interface Region {
  buffer: SharedArrayBuffer;
  byteOffset: number;
  capacity: number;
}
interface DequeModule {
  initDeque(region: Region, initialIndex?: number): void;
  Deque: new (region: Region) => { push(v: number): boolean; pop(): number };
  EMPTY: number;
}

/** The kernel's accesses with their region and word, and the line in trace mode (0 otherwise). */
export function regionAccesses(accesses: readonly KernelAccess[]): Access[] {
  return accesses.map((a) => {
    const { region, word } = regionWord(a.addr);
    return {
      step: a.step,
      thread: a.thread,
      op: a.op,
      fn: a.fn,
      region,
      word,
      arg1: a.arg1,
      arg2: a.arg2,
      result: a.result,
      line: a.line ?? 0,
    };
  });
}

/** Per thread and operation, the step of its first and of its last access (-1: it never started). */
export function opSteps(accesses: readonly Access[], ops: readonly number[]): { first: number[][]; last: number[][] } {
  const first = ops.map((n) => new Array<number>(n).fill(-1));
  const last = ops.map((n) => new Array<number>(n).fill(-1));
  for (const a of accesses) {
    if (first[a.thread][a.op] < 0) first[a.thread][a.op] = a.step;
    last[a.thread][a.op] = a.step;
  }
  return { first, last };
}

/** Writes thread `t`'s program (its results cleared) into its program area. */
export function writeProgram(ctl: Int32Array, t: number, prog: readonly { code: number; arg: number }[]): void {
  if (prog.length > MAX_OPS) throw new RangeError(`Cannot run scenario: ${prog.length} operations`);
  const base = progBase(t);
  ctl.fill(0, base, base + PROG_WORDS);
  Atomics.store(ctl, base + Prog.LEN, prog.length);
  prog.forEach((p, k) => {
    Atomics.store(ctl, base + Prog.OPS + 2 * k, p.code);
    Atomics.store(ctl, base + Prog.OPS + 2 * k + 1, p.arg);
  });
}

/** Where thread `t`'s operation `k` wrote its results (the word index of its RET). */
export function resultBase(t: number, k: number): number {
  return progBase(t) + Prog.RESULTS + k * RESULT_WORDS;
}

/** Whether thread `t`'s operation `k` completed: a later one began, or the thread finished. */
export function completed(run: RunEnd, t: number, k: number): boolean {
  return k < Atomics.load(run.ctl, blockBase(t) + Block.OP) || run.states[t] === State.DONE;
}

/** The programs of a scenario's threads: the owner's, then each thief's. */
function programs(s: Scenario): { code: number; arg: number; kind: OpKind }[][] {
  let pushes = s.prefill;
  const out: { code: number; arg: number; kind: OpKind }[][] = [
    s.owner.map((k) =>
      k === "push"
        ? { code: OpCode.PUSH, arg: pushValue(pushes++), kind: "push" as const }
        : { code: OpCode.POP, arg: 0, kind: "pop" as const }
    ),
  ];
  for (const ops of s.thieves) {
    out.push(ops.map((op) => {
      const { kind, from } = thiefOpParts(op);
      return { code: kind === "steal" ? OpCode.STEAL : OpCode.STEAL_HALF, arg: from, kind };
    }));
  }
  return out;
}

/**
 * The deque model, with `MUTANTS` as variants 1.. if `withMutants` (in the mutation run the shipped module
 * carries the mutant and none is loaded). Made per harness: its set-up's history waits here for the run's end.
 */
export function dequeModel(withMutants: boolean): Model<Scenario, DequeObserved, Violation> {
  let setup: HistoryOp[] = [];
  const regions = (buffer: SharedArrayBuffer, capacity: number): Region[] =>
    Array.from({ length: MAX_THREADS }, (_, k) => ({ buffer, byteOffset: regionOffset(k), capacity }));
  return {
    name: "deque",
    thread: new URL("./thread.ts", import.meta.url),
    threads: DTHREADS,
    bufferBytes: BUFFER_BYTES,
    maxSteps: DMAX_STEPS,
    modules: [SHIPPED_DEQUE],
    mutants: withMutants ? MUTANTS : [],
    traced: ["deque.ts"],
    loadHere: true,
    continuation: "same-or-lowest",
    schedules: { maxLength: 160, maxSegment: 12, maxSegments: 24, timeouts: false, stepMax: 11 },
    threadCount: (s) => s.thieves.length + 1,
    threadName: (_s, t) => threadName(t),
    prepare(run: RunSetup, s: Scenario): void {
      const mod = run.modules[0] as DequeModule;
      const capacity = s.capacity;
      if (capacity > MAX_CAPACITY) throw new RangeError(`Cannot run scenario: capacity ${capacity}`);
      // Clean regions, fresh indices, prefills single-threaded (this thread's binding is Atomics).
      new Int32Array(run.buffer, regionOffset(0), (MAX_THREADS * REGION_BYTES) / 4).fill(0);
      const rs = regions(run.buffer, capacity);
      for (const r of rs) mod.initDeque(r, s.initialIndex);
      setup = [];
      let pushes = 0;
      const owner = new mod.Deque(rs[0]);
      for (let i = 0; i < s.prefill; i++) {
        const v = pushValue(pushes++);
        const ok = owner.push(v);
        setup.push({ thread: -1, index: i, kind: "push", arg: v, ret: ok ? 1 : 0, first: -1000 + i, last: -1000 + i });
      }
      const progs = programs(s);
      pushes += s.owner.filter((k) => k === "push").length;
      // Each thief's own deque's setup pushes, after the owner's values (see pushValue).
      s.thieves.forEach((_, i) => {
        const k = i + 1;
        const d = new mod.Deque(rs[k]);
        for (let j = 0; j < (s.dstPrefill?.[i] ?? 0); j++) {
          const v = pushValue(pushes++);
          const ok = d.push(v);
          setup.push({
            thread: -1,
            index: j,
            kind: "push",
            arg: v,
            ret: ok ? 1 : 0,
            first: -900 + j,
            last: -900 + j,
            deque: k,
          });
        }
      });
      Atomics.store(run.ctl, DGlobal.CAPACITY, capacity);
      progs.forEach((prog, t) => {
        writeProgram(run.ctl, t, prog);
        run.assign(t, t === 0 ? DRole.OWNER : DRole.THIEF);
      });
    },
    observe(run: RunEnd, s: Scenario): DequeObserved {
      const mod = run.modules[0] as DequeModule;
      const ctl = run.ctl;
      const accesses = regionAccesses(run.accesses);
      const progs = programs(s);
      const { first, last } = opSteps(accesses, progs.map((p) => p.length));
      const history: HistoryOp[] = [...setup];
      progs.forEach((prog, t) => {
        prog.forEach((p, k) => {
          if (first[t][k] < 0) return; // never started (aborted or failed before it)
          if (!completed(run, t, k)) return; // pending: left out of the history (the oracles see values)
          const out = resultBase(t, k);
          const ret = Atomics.load(ctl, out + Result.RET);
          const h: HistoryOp = { thread: t, index: k, kind: p.kind, ret, first: first[t][k], last: last[t][k] };
          if (p.kind === "push") h.arg = p.arg;
          if (t > 0) h.deque = p.arg;
          if (p.kind === "stealHalf") {
            h.dst = t;
            h.room = Atomics.load(ctl, out + Result.ROOM);
            h.values = [];
            for (let i = 0; i < ret; i++) h.values.push(Atomics.load(ctl, out + Result.MOVED + i));
          }
          history.push(h);
        });
      });
      // Drain, single-threaded, with the same module.
      const step = run.steps;
      let drainUnbounded = false;
      const bound = s.capacity + 4;
      const rs = regions(run.buffer, s.capacity);
      const drainOwner = new mod.Deque(rs[0]);
      for (let i = 0; i < bound; i++) {
        const v = drainOwner.pop();
        history.push({ thread: -2, index: i, kind: "pop", ret: v, first: step + i, last: step + i });
        if (v === mod.EMPTY) break;
        if (i === bound - 1) drainUnbounded = true;
      }
      const dstDrained: number[][] = [[]];
      let at = step + bound;
      for (let k = 1; k < progs.length; k++) {
        const d = new mod.Deque(rs[k]);
        const got: number[] = [];
        for (let i = 0; i < bound; i++) {
          const v = d.pop();
          history.push({ thread: -2, index: i, kind: "pop", ret: v, first: at, last: at, deque: k });
          at++;
          if (v === mod.EMPTY) break;
          got.push(v);
          if (i === bound - 1) drainUnbounded = true;
        }
        dstDrained.push(got);
      }
      return { accesses, history, dstDrained, drainsInHistory: true, drainUnbounded };
    },
    check: (s, exec) => checkExecution(exec, s),
  };
}

/** Starts the deque model's harness (its four threads), with the mutants as variants if `withMutants`. */
export function startDequeHarness(withMutants: boolean): Promise<DequeHarness> {
  return Harness.start(dequeModel(withMutants));
}

/** Names a word for tables and traces: `V.top`, `V.bottom`, `V[2]`, `D1.bottom`, `D1[0]`. */
export function wordName(region: number, word: number): string {
  const r = region === 0 ? "V" : region > 0 ? `D${region}` : "?";
  if (word === DequeWords.top) return `${r}.top`;
  if (word === DequeWords.bottom) return `${r}.bottom`;
  if (word >= DequeWords.slots) return `${r}[${word - DequeWords.slots}]`;
  return `${r}.w${word}`;
}
