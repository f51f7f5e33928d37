/**
 * The controller of the controlled scheduler: starts one Worker per simulated thread (`sim_thread.ts`),
 * reuses them for every run, and runs a {@link Scenario} under a {@link Chooser} one shared access at a
 * time, recording every access (the trace) and every operation's invocation and response (the history).
 *
 * Determinism: only the controller lets a thread advance, and only by one facade call; everything the
 * code under test computes between two calls is thread-local. So a scenario and a schedule give the same
 * trace on every run and every runtime, and a failure replays from its schedule.
 *
 * Time in a history is the step number: an operation's `first` is the step of its first access and its
 * `last` the step of its last; A precedes B in real time iff `A.last < B.first`.
 *
 * @module
 */

import { DequeWords } from "../../lib/protocol/layout.ts";
import { startThread, type ThreadHandle } from "../../lib/runtime/thread.ts";
import {
  Block,
  blockBase,
  BUFFER_BYTES,
  Fn,
  Global,
  MAX_CAPACITY,
  MAX_OPS,
  MAX_THREADS,
  OpCode,
  REGION_BYTES,
  regionOffset,
  Result,
  RESULT_WORDS,
  State,
} from "./protocol.ts";
import { type Chooser, pushValue, type Scenario, thiefOpParts } from "./scenario.ts";
import type { SimThreadSetup } from "./sim_thread.ts";
import { awaitChange } from "./kernel/run.ts";

/** One shared access, as the controller saw it. */
export interface Access {
  step: number;
  thread: number;
  /** Index of the operation in the thread's program. */
  op: number;
  /** Facade function code (see `Fn` in protocol.ts). */
  fn: number;
  /** Region (0 = victim, k = thief k's deque), or -1 outside the deque regions. */
  region: number;
  word: number;
  arg1: number;
  arg2: number;
  result: number;
  /** In trace mode, the source line of the deque module that made the access (0 if unknown). */
  line: number;
}

/** Operation kinds in a history. */
export type OpKind = "push" | "pop" | "steal" | "stealHalf";

/** One operation on the victim deque, with its response. */
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

/** Everything one run produced. */
export interface Execution {
  accesses: Access[];
  /** Victim operations: setup, threads, drain. */
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

interface DequeModule {
  initDeque(region: Region, initialIndex?: number): void;
  Deque: new (region: Region) => { push(v: number): boolean; pop(): number };
  EMPTY: number;
}
interface Region {
  buffer: SharedArrayBuffer;
  byteOffset: number;
  capacity: number;
}

/** Options of {@link Harness.start}. */
export interface HarnessOptions {
  /**
   * The modules a run may use: the first is the shipped one (`lib/protocol/deque.ts`, or `lib/protocol/injector.ts` for the
   * queue harness), the rest its mutants.
   */
  variants: URL[];
  /** Called by {@link Harness.close} after the Workers are terminated (e.g. to delete mutant files). */
  onClose?: () => void;
}

/** The controller's name in a hang's message. */
const LABEL = "lincheck controller";

/** The controller with its reusable simulated threads. */
export class Harness {
  readonly buffer: SharedArrayBuffer;
  readonly ctl: Int32Array;
  readonly threads: ThreadHandle[];
  readonly modules: DequeModule[];
  readonly variants: URL[];
  /** Runs and steps since start, for the counts the tests print. */
  runs = 0;
  totalSteps = 0;
  private closed = false;
  onClose: (() => void) | undefined;

  private constructor(buffer: SharedArrayBuffer, threads: ThreadHandle[], modules: DequeModule[], variants: URL[]) {
    this.buffer = buffer;
    this.ctl = new Int32Array(buffer);
    this.threads = threads;
    this.modules = modules;
    this.variants = variants;
  }

  /** Starts the simulated threads and loads every variant in them and here (for setup and drain). */
  static async start(options: HarnessOptions): Promise<Harness> {
    const buffer = new SharedArrayBuffer(BUFFER_BYTES);
    const urls = options.variants.map((u) => u.href);
    const modules: DequeModule[] = [];
    for (const url of urls) modules.push(await import(url) as DequeModule);
    const threads: ThreadHandle[] = [];
    const ready: Promise<void>[] = [];
    for (let thread = 0; thread < MAX_THREADS; thread++) {
      const handle = await startThread(new URL("./sim_thread.ts", import.meta.url), `lincheck-${thread}`);
      threads.push(handle);
      ready.push(
        new Promise<void>((resolve, reject) => {
          handle.onMessage(() => resolve());
          handle.onError(reject);
        }),
      );
      const setup: SimThreadSetup = { buffer, thread, variants: urls };
      handle.post(setup);
    }
    await Promise.all(ready);
    const harness = new Harness(buffer, threads, modules, options.variants);
    harness.onClose = options.onClose;
    return harness;
  }

  /**
   * Runs `scenario` with deque module `variant` under `choose`, synchronously.
   *
   * @param maxSteps The step bound; past it the run is aborted (and reported as such).
   */
  run(scenario: Scenario, choose: Chooser, variant = 0, maxSteps = 2000, trace = false): Execution {
    if (this.closed) throw new Error("Cannot run as the harness is closed");
    const ctl = this.ctl;
    const mod = this.modules[variant];
    const capacity = scenario.capacity;
    if (capacity > MAX_CAPACITY || scenario.thieves.length + 1 > MAX_THREADS) {
      throw new RangeError(`Cannot run scenario: capacity ${capacity}, ${scenario.thieves.length} thieves`);
    }
    // Setup: clean regions, fresh indices, prefill single-threaded (this thread's binding is Atomics).
    new Int32Array(this.buffer, regionOffset(0), (MAX_THREADS * REGION_BYTES) / 4).fill(0);
    const regions: Region[] = [];
    for (let k = 0; k < MAX_THREADS; k++) {
      regions.push({ buffer: this.buffer, byteOffset: regionOffset(k), capacity });
      mod.initDeque(regions[k], scenario.initialIndex);
    }
    const history: HistoryOp[] = [];
    let pushes = 0;
    const setupOwner = new mod.Deque(regions[0]);
    for (let i = 0; i < scenario.prefill; i++) {
      const v = pushValue(pushes++);
      const ok = setupOwner.push(v);
      history.push({ thread: -1, index: i, kind: "push", arg: v, ret: ok ? 1 : 0, first: -1000 + i, last: -1000 + i });
    }
    // Programs.
    const programs: { code: number; arg: number; kind: OpKind }[][] = [];
    programs.push(
      scenario.owner.map((k) =>
        k === "push"
          ? { code: OpCode.PUSH, arg: pushValue(pushes++), kind: "push" as const }
          : { code: OpCode.POP, arg: 0, kind: "pop" as const }
      ),
    );
    for (const ops of scenario.thieves) {
      programs.push(
        ops.map((op) => {
          const { kind, from } = thiefOpParts(op);
          return { code: kind === "steal" ? OpCode.STEAL : OpCode.STEAL_HALF, arg: from, kind };
        }),
      );
    }
    // Each thief's own deque's setup pushes, after the owner's values (see pushValue).
    scenario.thieves.forEach((_, i) => {
      const k = i + 1;
      const d = new mod.Deque(regions[k]);
      for (let j = 0; j < (scenario.dstPrefill?.[i] ?? 0); j++) {
        const v = pushValue(pushes++);
        const ok = d.push(v);
        history.push({
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
    Atomics.store(ctl, Global.VARIANT, variant);
    Atomics.store(ctl, Global.CAPACITY, capacity);
    const { accesses, first, last, states, aborted, steps: step } = this.drive(
      programs,
      programs.map((_, t) => (t === 0 ? 0 : 1)),
      choose,
      maxSteps,
      trace,
    );

    // Responses.
    const failures: string[] = [];
    for (let t = 0; t < programs.length; t++) {
      const base = blockBase(t);
      if (states[t] === State.FAILED) failures.push(this.failureOf(t));
      programs[t].forEach((p, k) => {
        if (first[t][k] < 0) return; // never started (aborted or failed before it)
        const complete = k < Atomics.load(ctl, base + Block.OP) || states[t] === State.DONE;
        if (!complete) return; // pending: left out of the history (it took effect or not; oracles see values)
        const out = base + Block.RESULTS + k * RESULT_WORDS;
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
    }

    // Drain, single-threaded, with the same module.
    let drainUnbounded = false;
    const bound = capacity + 4;
    const drainOwner = new mod.Deque(regions[0]);
    for (let i = 0; i < bound; i++) {
      const v = drainOwner.pop();
      history.push({ thread: -2, index: i, kind: "pop", ret: v, first: step + i, last: step + i });
      if (v === mod.EMPTY) break;
      if (i === bound - 1) drainUnbounded = true;
    }
    const dstDrained: number[][] = [[]];
    let at = step + bound;
    for (let k = 1; k < programs.length; k++) {
      const d = new mod.Deque(regions[k]);
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
    this.runs++;
    this.totalSteps += step;
    return { accesses, history, dstDrained, drainsInHistory: true, failures, aborted, drainUnbounded, steps: step };
  }

  /**
   * Runs one program per simulated thread under `choose`, one shared access at a time: the part of a run
   * that does not depend on the protocol. The caller has initialised the regions and written VARIANT and
   * CAPACITY; this writes the programs, starts the epoch and records every access.
   *
   * @param roles Each thread's ROLE word (read by `sim_thread.ts`).
   * @param yieldAfter Called after each access; true means the thread has just found it must wait for
   * another thread (a spin loop's failed attempt), so the next step goes to another runnable thread if
   * there is one — a free switch, not a preemption (as CHESS treats a yield in a spin loop). Without it a
   * schedule that keeps running a spinning thread would never end. When every runnable thread is
   * yielding, each may try again; if two such rounds pass with no write to shared memory, none ever will
   * succeed: the run is unwound and reported `stalled` (the caller's oracles judge whether that wait was
   * legitimate).
   */
  drive(
    programs: readonly { code: number; arg: number }[][],
    roles: readonly number[],
    choose: Chooser,
    maxSteps: number,
    trace: boolean,
    yieldAfter?: (a: Access) => boolean,
  ): {
    accesses: Access[];
    first: number[][];
    last: number[][];
    states: number[];
    aborted: boolean;
    stalled: boolean;
    steps: number;
  } {
    const ctl = this.ctl;
    for (let t = 0; t < MAX_THREADS; t++) {
      const base = blockBase(t);
      const prog = programs[t] ?? [];
      if (prog.length > MAX_OPS) throw new RangeError(`Cannot run scenario: ${prog.length} operations`);
      Atomics.store(ctl, base + Block.ROLE, roles[t] ?? 0);
      Atomics.store(ctl, base + Block.PROG_LEN, prog.length);
      prog.forEach((p, k) => {
        Atomics.store(ctl, base + Block.PROG + 2 * k, p.code);
        Atomics.store(ctl, base + Block.PROG + 2 * k + 1, p.arg);
      });
      ctl.fill(0, base + Block.RESULTS, base + Block.RESULTS + MAX_OPS * RESULT_WORDS);
      Atomics.store(ctl, base + Block.STATE, State.IDLE);
    }
    Atomics.store(ctl, Global.TRACE, trace ? 1 : 0);
    Atomics.add(ctl, Global.EPOCH, 1);
    Atomics.notify(ctl, Global.EPOCH);

    const states = new Array<number>(MAX_THREADS);
    for (let t = 0; t < MAX_THREADS; t++) states[t] = awaitChange(ctl, blockBase(t) + Block.STATE, State.IDLE, LABEL);

    const accesses: Access[] = [];
    const first: number[][] = programs.map((p) => p.map(() => -1));
    const last: number[][] = programs.map((p) => p.map(() => -1));
    const yielding = new Array<boolean>(MAX_THREADS).fill(false);
    let current = -1;
    let step = 0;
    let aborted = false;
    let stalled = false;
    // Steps of the last write to shared memory and of the last two rounds in which every thread yielded.
    let lastWrite = -1;
    let lastRound = -1;
    let roundBefore = -1;
    const runnable: number[] = [];
    const eligible: number[] = [];
    for (;;) {
      runnable.length = 0;
      for (let t = 0; t < MAX_THREADS; t++) if (states[t] === State.PARKED) runnable.push(t);
      if (runnable.length === 0) break;
      eligible.length = 0;
      for (const t of runnable) if (!yielding[t]) eligible.push(t);
      if (eligible.length === 0) {
        // Two rounds: in the first each thread may still finish an attempt begun on stale reads; only in
        // the second are all its reads fresh.
        if (roundBefore >= 0 && lastWrite < roundBefore) stalled = true;
        roundBefore = lastRound;
        lastRound = step;
        yielding.fill(false);
        eligible.push(...runnable);
      }
      if (step >= maxSteps || stalled) {
        aborted = !stalled;
        for (const t of runnable) {
          Atomics.store(ctl, blockBase(t) + Block.STATE, State.ABORT);
          Atomics.notify(ctl, blockBase(t) + Block.STATE);
          states[t] = awaitChange(ctl, blockBase(t) + Block.STATE, State.ABORT, LABEL);
        }
        break;
      }
      const t = choose(step, eligible, current);
      if (states[t] !== State.PARKED) throw new Error(`chooser picked thread ${t}, which is not runnable`);
      const base = blockBase(t);
      const op = Atomics.load(ctl, base + Block.OP);
      const access: Access = {
        step,
        thread: t,
        op,
        fn: Atomics.load(ctl, base + Block.FN),
        region: Atomics.load(ctl, base + Block.REGION),
        word: Atomics.load(ctl, base + Block.WORD),
        arg1: Atomics.load(ctl, base + Block.ARG1),
        arg2: Atomics.load(ctl, base + Block.ARG2),
        result: 0,
        line: Atomics.load(ctl, base + Block.LINE),
      };
      if (first[t][op] < 0) first[t][op] = step;
      last[t][op] = step;
      Atomics.store(ctl, base + Block.STATE, State.GO);
      Atomics.notify(ctl, base + Block.STATE);
      states[t] = awaitChange(ctl, base + Block.STATE, State.GO, LABEL);
      access.result = Atomics.load(ctl, base + Block.RESULT);
      accesses.push(access);
      if (writes(access)) lastWrite = step;
      yielding[t] = yieldAfter !== undefined && yieldAfter(access);
      current = t;
      step++;
    }
    return { accesses, first, last, states, aborted, stalled, steps: step };
  }

  /** The index of the operation thread `t` reached (after a run: its last started one). */
  opOf(t: number): number {
    return Atomics.load(this.ctl, blockBase(t) + Block.OP);
  }

  /** What thread `t`'s operation `k` returned (its RET result word). */
  resultOf(t: number, k: number): number {
    return Atomics.load(this.ctl, blockBase(t) + Block.RESULTS + k * RESULT_WORDS + Result.RET);
  }

  /** The message of a simulated thread that ended FAILED: "thread t (op k): Error: …". */
  failureOf(t: number): string {
    const ctl = this.ctl;
    const base = blockBase(t);
    const len = Atomics.load(ctl, base + Block.MSG);
    let text = "";
    for (let i = 0; i < len; i++) text += String.fromCharCode(Atomics.load(ctl, base + Block.MSG + 1 + i));
    return `thread ${t} (op ${Atomics.load(ctl, base + Block.OP)}): ${text}`;
  }

  /** Asks every simulated thread to leave its loop, waits until it has, then terminates the Workers. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const ctl = this.ctl;
    for (let t = 0; t < MAX_THREADS; t++) Atomics.store(ctl, blockBase(t) + Block.STATE, State.IDLE);
    Atomics.store(ctl, Global.SHUTDOWN, 1);
    Atomics.add(ctl, Global.EPOCH, 1);
    Atomics.notify(ctl, Global.EPOCH);
    const deadline = Date.now() + 5000;
    for (let t = 0; t < MAX_THREADS; t++) {
      while (Atomics.load(ctl, blockBase(t) + Block.STATE) !== State.EXITED && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 5));
      }
    }
    for (const thread of this.threads) thread.terminate();
    this.onClose?.();
  }
}

/** Whether an access changed shared memory (a store, a compare-exchange that matched, a read-modify-write). */
function writes(a: Access): boolean {
  if (a.fn === Fn.load || a.fn === Fn.wait || a.fn === Fn.waitAsync || a.fn === Fn.notify) return false;
  if (a.fn === Fn.compareExchange) return a.result === a.arg1;
  return true;
}

/** Names a word for tables and traces: `V.top`, `V.bottom`, `V[2]`, `D1.bottom`, `D1[0]`. */
export function wordName(region: number, word: number): string {
  const r = region === 0 ? "V" : region > 0 ? `D${region}` : "?";
  if (word === DequeWords.top) return `${r}.top`;
  if (word === DequeWords.bottom) return `${r}.bottom`;
  if (word >= DequeWords.slots) return `${r}[${word - DequeWords.slots}]`;
  return `${r}.w${word}`;
}
