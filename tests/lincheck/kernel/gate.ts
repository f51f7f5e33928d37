/**
 * The simulated thread's side of the kernel: the gate (the facade binding that parks before every access
 * and models `Atomics.wait` as a futex: compare and block in one step, then sleep until the controller
 * resumes it, woken by a notify or timed out when the schedule says), the loop that runs one program per
 * run, and {@link serveModel}, the whole of a thread module but its programs. The controller's side is
 * `run.ts` and `harness.ts`; the words both use are `words.ts`.
 *
 * A model's thread module is one call: `serveModel({ program })`, where `program` runs the role written in
 * the thread's block over the variant's modules. Nothing else of the hand-shake is the model's.
 *
 * Runs on a simulated thread (a Worker) only. Invariant: between runs the thread waits on the EPOCH word with
 * its STATE a final one (DONE, FAILED with its message in MSG, ABORTED) or EXITED after SHUTDOWN.
 *
 * @module
 */

import { installSharedMemory, type Int32View, type WaitAsyncResult } from "../../../lib/protocol/atomics.ts";
import { parentPort } from "../../../lib/runtime/thread.ts";
import { Fn } from "../../../spec/trace/facade_codes.ts";
import { AbortRun, ParkingFacade } from "./facade.ts";
import { Block, blockBase, Global, MAX_MSG, State } from "./words.ts";

/** What the controller posts to each simulated thread once (`harness.ts`). */
export interface ThreadSetup {
  buffer: SharedArrayBuffer;
  thread: number;
  /** Per variant: the URLs of its modules, in the model's order. */
  variants: string[][];
  /** The file names (`sleep.ts` …) whose lines name an access in trace mode: file 1, 2, … */
  traced: string[];
}

/** The facade binding: park, wait for GO, make the one access (a wait may block), publish its result. */
export class WaitGate extends ParkingFacade {
  readonly ctl: Int32Array;
  readonly base: number;
  /** The next access is a yield (a poll's first): the controller runs another thread first if one can. */
  yieldNext = false;
  /** In trace mode: the traced module (1, 2, …; 0 for none) and line of the code under test that made the access. */
  private readonly site: () => [number, number];

  constructor(buffer: SharedArrayBuffer, thread: number, site: () => [number, number]) {
    super();
    this.ctl = new Int32Array(buffer);
    this.base = blockBase(thread);
    this.site = site;
  }

  park(fn: number, view: Int32View, index: number, a1: number, a2: number): void {
    const ctl = this.ctl;
    const base = this.base;
    if (view.buffer !== ctl.buffer) throw new Error("Cannot schedule an access outside the harness's buffer");
    Atomics.store(ctl, base + Block.FN, fn);
    Atomics.store(ctl, base + Block.ADDR, (view.byteOffset >> 2) + index);
    Atomics.store(ctl, base + Block.ARG1, a1 | 0);
    Atomics.store(ctl, base + Block.ARG2, a2 | 0);
    Atomics.store(ctl, base + Block.YIELD, this.yieldNext ? 1 : 0);
    this.yieldNext = false;
    if (Atomics.load(ctl, Global.TRACE) === 1) {
      const [file, line] = this.site();
      Atomics.store(ctl, base + Block.SITE_FILE, file);
      Atomics.store(ctl, base + Block.SITE_LINE, line);
    }
    Atomics.store(ctl, base + Block.STATE, State.PARKED);
    Atomics.notify(ctl, base + Block.STATE);
    this.hold(State.PARKED);
  }

  /** Sleeps while STATE is `state`; throws on ABORT; returns the new state. */
  hold(state: number): number {
    const ctl = this.ctl;
    const at = this.base + Block.STATE;
    let s: number;
    while ((s = Atomics.load(ctl, at)) === state) Atomics.wait(ctl, at, state);
    if (s === State.ABORT) throw new AbortRun();
    return s;
  }

  done(result: number): number {
    Atomics.store(this.ctl, this.base + Block.RESULT, result);
    return result;
  }

  wait(view: Int32View, index: number, expected: number, timeout?: number): "ok" | "not-equal" | "timed-out" {
    const timed = timeout !== undefined && timeout !== Infinity;
    this.park(Fn.wait, view, index, expected, timed ? 1 : 0);
    // Released: compare and block in one step (nobody else runs until we say BLOCKED or park again).
    if (Atomics.load(view, index) !== expected) {
      this.done(0);
      return "not-equal";
    }
    const ctl = this.ctl;
    this.done(1);
    Atomics.store(ctl, this.base + Block.STATE, State.BLOCKED);
    Atomics.notify(ctl, this.base + Block.STATE);
    this.hold(State.BLOCKED); // RESUME (or ABORT, which throws)
    return Atomics.load(ctl, this.base + Block.WAKE) === 0 ? "ok" : "timed-out";
  }
  waitAsync(_view: Int32View, index: number, _expected: number, _timeout?: number): WaitAsyncResult {
    throw new Error(`Cannot schedule a waitAsync on word ${index}: the harness models Atomics.wait only`);
  }
  notify(view: Int32View, index: number, count?: number): number {
    this.park(Fn.notify, view, index, count ?? -1, 0);
    // The controller woke the waiters before releasing us, and says how many.
    return this.done(Atomics.load(this.ctl, this.base + Block.NOTIFIED));
  }
}

/**
 * The thread's loop: per EPOCH move, runs `runProgram`, then publishes DONE, FAILED (with the message) or
 * ABORTED; after SHUTDOWN, publishes EXITED and returns.
 */
export function serveRuns(gate: WaitGate, runProgram: () => void): void {
  const ctl = gate.ctl;
  const base = gate.base;
  let epoch = 0;
  for (;;) {
    let e: number;
    while ((e = Atomics.load(ctl, Global.EPOCH)) === epoch) Atomics.wait(ctl, Global.EPOCH, epoch);
    epoch = e;
    if (Atomics.load(ctl, Global.SHUTDOWN) !== 0) {
      Atomics.store(ctl, base + Block.STATE, State.EXITED);
      Atomics.notify(ctl, base + Block.STATE);
      return;
    }
    let final: number = State.DONE;
    try {
      runProgram();
    } catch (error) {
      if (error instanceof AbortRun) {
        final = State.ABORTED;
      } else {
        final = State.FAILED;
        const text = String(error instanceof Error ? `${error.name}: ${error.message}` : error).slice(0, MAX_MSG);
        Atomics.store(ctl, base + Block.MSG, text.length);
        for (let i = 0; i < text.length; i++) Atomics.store(ctl, base + Block.MSG + 1 + i, text.charCodeAt(i));
      }
    }
    Atomics.store(ctl, base + Block.STATE, final);
    Atomics.notify(ctl, base + Block.STATE);
  }
}

/** What a model's program is given for one run: its thread, its block's words, the run's variant. */
export interface ThreadRun<G extends WaitGate = WaitGate> {
  buffer: SharedArrayBuffer;
  thread: number;
  gate: G;
  /** The whole harness buffer as words (the gate words and the model's). */
  ctl: Int32Array;
  /** The word index of this thread's block. */
  base: number;
  /** The role and parameters the controller wrote (`Harness.run`'s `assign`). */
  role: number;
  p1: number;
  p2: number;
  /** The variant's modules, loaded, in the model's order. */
  modules: readonly unknown[];
  /** Writes the operation under way (the OP word), for a model that records it. */
  setOp(op: number): void;
}

/** A model's thread module, but its programs. */
export interface ThreadModel<G extends WaitGate = WaitGate> {
  /** Runs the program of `run.role` (0 is no program: return at once). */
  program(run: ThreadRun<G>): void;
  /** A gate of the model's own (a subclass: `waitAsync` as a wait, say); the kernel's by default. */
  gate?(buffer: SharedArrayBuffer, thread: number, site: () => [number, number]): G;
}

/**
 * The whole of a simulated thread: answers the controller's set-up (loads every variant's modules, installs
 * the gate as the facade binding, says it is ready), then runs one program per run until SHUTDOWN.
 */
export async function serveModel<G extends WaitGate = WaitGate>(model: ThreadModel<G>): Promise<void> {
  const port = await parentPort();
  port.onMessage(async (message) => {
    const setup = message as ThreadSetup;
    const variants: unknown[][] = [];
    for (const urls of setup.variants) {
      const modules: unknown[] = [];
      for (const url of urls) modules.push(await import(url));
      variants.push(modules);
    }
    const site = siteFinder(setup.traced);
    const gate = model.gate?.(setup.buffer, setup.thread, site) ??
      new WaitGate(setup.buffer, setup.thread, site) as G;
    installSharedMemory(gate);
    port.post({ ready: setup.thread });
    const { ctl, base } = gate;
    serveRuns(gate, () =>
      model.program({
        buffer: setup.buffer,
        thread: setup.thread,
        gate,
        ctl,
        base,
        role: Atomics.load(ctl, base + Block.ROLE),
        p1: Atomics.load(ctl, base + Block.PARAM1),
        p2: Atomics.load(ctl, base + Block.PARAM2),
        modules: variants[Atomics.load(ctl, Global.VARIANT)],
        setOp: (op) => Atomics.store(ctl, base + Block.OP, op),
      }));
  });
}

/**
 * The traced module (1 for the first of `traced`, …) and line of the innermost frame of the stack in one of
 * them, or (0, 0): the code under test that made the pending access.
 */
function siteFinder(traced: readonly string[]): () => [number, number] {
  if (traced.length === 0) return () => [0, 0];
  const names = traced.map((name) => name.replace(/\.ts$/, ""));
  const pattern = new RegExp(`/(${names.join("|")})\\.ts:(\\d+):\\d+`);
  return () => {
    const m = pattern.exec(new Error().stack ?? "");
    return m === null ? [0, 0] : [names.indexOf(m[1]) + 1, Number(m[2])];
  };
}
