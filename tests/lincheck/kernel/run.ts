/**
 * The controller's side of the gate (`words.ts`), one run's hand-shake: starting and closing the simulated
 * threads, starting a run, releasing one access (a notify modelled as a futex wake, a wait that blocks
 * recorded), timing a wait out, unwinding the threads left parked or blocked, and reading a thread's
 * failure; and what every model's report shares (the step table, a state's name, the `// spec:` actions).
 * The run loop over it (what is runnable, what a chooser is offered, when a run ends) is `harness.ts`'s.
 *
 * Called on the controller's thread only (the test's main thread), synchronously within a run.
 *
 * Invariant: after {@link GateRun.unwind} no thread of the run is PARKED or BLOCKED, so the next run starts
 * with every thread waiting on the epoch. A harness calls it at the end of every run, and also when the run
 * throws (a chooser that picks an impossible step, a hang): otherwise the threads of the failed run stay
 * parked, ignore the next epoch, and every later run waits {@link HANG_MS} for them in vain.
 *
 * @module
 */

import { readFileSync } from "node:fs";
import { startThread, type ThreadHandle } from "../../../lib/runtime/thread.ts";
import { Fn } from "../../../spec/trace/facade_codes.ts";
import { Block, blockBase, Global, State } from "./words.ts";

/** Spins of the controller on a gate word before it sleeps on it. */
const SPIN = 2000;
/** A simulated thread that makes no progress this long fails the run (and the test) with a message. */
export const HANG_MS = 20_000;

/**
 * Waits (spin, then sleep) until `ctl[index] !== value`; returns the new value; throws after
 * {@link HANG_MS} with `label` (which controller) in the message.
 */
export function awaitChange(ctl: Int32Array, index: number, value: number, label: string): number {
  for (let i = 0; i < SPIN; i++) {
    const s = Atomics.load(ctl, index);
    if (s !== value) return s;
  }
  for (;;) {
    const s = Atomics.load(ctl, index);
    if (s !== value) return s;
    if (Atomics.wait(ctl, index, value, HANG_MS) === "timed-out" && Atomics.load(ctl, index) === value) {
      throw new Error(`${label}: a simulated thread made no progress for ${HANG_MS} ms (word ${index})`);
    }
  }
}

/** A thread blocked in a wait. */
export interface Blocked {
  thread: number;
  addr: number;
  expected: number;
  timed: boolean;
  /** Order of blocking: a notify wakes the oldest first. */
  seq: number;
}

/** One step the controller took. */
export interface GateAccess {
  step: number;
  thread: number;
  /** `Fn` code, or -1 for "a timed wait timed out". */
  fn: number;
  addr: number;
  arg1: number;
  arg2: number;
  result: number;
  /** A notify: the threads it woke. A wait: whether it blocked. */
  woke?: number[];
  blocked?: boolean;
  /** Trace mode: the `// spec:` action on the line of lib/ that made the access. */
  action?: string;
  /** Trace mode: that line (0 if no traced module was on the stack). */
  line?: number;
}

/**
 * Starts `count` simulated threads running `url`, posts each the set-up `setupFor(thread)` makes, and
 * resolves once every one has answered that it is ready (loaded its modules, bound its gate).
 */
export async function startGateThreads(
  url: URL,
  name: string,
  count: number,
  setupFor: (thread: number) => unknown,
): Promise<ThreadHandle[]> {
  const threads: ThreadHandle[] = [];
  const ready: Promise<void>[] = [];
  for (let thread = 0; thread < count; thread++) {
    const handle = await startThread(url, `${name}-${thread}`);
    threads.push(handle);
    ready.push(
      new Promise<void>((resolve, reject) => {
        handle.onMessage(() => resolve());
        handle.onError(reject);
      }),
    );
    handle.post(setupFor(thread));
  }
  await Promise.all(ready);
  return threads;
}

/** Asks every simulated thread to leave its loop, waits (up to 5 s) until it has, then terminates the Workers. */
export async function closeGateThreads(ctl: Int32Array, threads: readonly ThreadHandle[]): Promise<void> {
  for (let t = 0; t < threads.length; t++) Atomics.store(ctl, blockBase(t) + Block.STATE, State.IDLE);
  Atomics.store(ctl, Global.SHUTDOWN, 1);
  Atomics.add(ctl, Global.EPOCH, 1);
  Atomics.notify(ctl, Global.EPOCH);
  const deadline = Date.now() + 5000;
  for (let t = 0; t < threads.length; t++) {
    while (Atomics.load(ctl, blockBase(t) + Block.STATE) !== State.EXITED && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 5));
    }
  }
  for (const thread of threads) thread.terminate();
}

/** Clears thread `t`'s block for a new run and gives it its program: `role` with two parameters. */
export function assignRole(ctl: Int32Array, t: number, role: number, p1: number, p2: number): void {
  const base = blockBase(t);
  ctl.fill(0, base, base + Block.MSG);
  Atomics.store(ctl, base + Block.ROLE, role);
  Atomics.store(ctl, base + Block.PARAM1, p1);
  Atomics.store(ctl, base + Block.PARAM2, p2);
  Atomics.store(ctl, base + Block.STATE, State.IDLE);
}

/** The `// spec:` actions named on the lines of modules under test, read once per file. */
export class SpecActions {
  private readonly byFile = new Map<string, Map<number, string>>();

  /** The action named on `line` of `url` (`// spec: Name` at the end of the line), if any. */
  at(url: URL, line: number): string | undefined {
    let map = this.byFile.get(url.href);
    if (map === undefined) {
      const found = new Map<number, string>();
      readFileSync(url, "utf8").split("\n").forEach((text, i) => {
        const m = /\/\/\s*spec:\s*([A-Z]\w*)\s*$/.exec(text);
        if (m) found.set(i + 1, m[1]);
      });
      this.byFile.set(url.href, found);
      map = found;
    }
    return map.get(line);
  }
}

/**
 * One run on the controller's side: the gate states of the threads, the threads blocked in a wait. Made
 * after every thread block is assigned ({@link assignRole}) and the run's globals are written.
 */
export class GateRun {
  /** The gate state of each thread, as last seen. */
  readonly states: number[];
  blocked: Blocked[] = [];
  private seq = 0;
  private readonly ctl: Int32Array;
  private readonly label: string;

  /** Starts the run (moves the epoch) and waits until each of `threads` threads has left IDLE. */
  constructor(ctl: Int32Array, threads: number, label: string) {
    this.ctl = ctl;
    this.label = label;
    Atomics.add(ctl, Global.EPOCH, 1);
    Atomics.notify(ctl, Global.EPOCH);
    this.states = new Array<number>(threads);
    for (let t = 0; t < threads; t++) this.states[t] = this.await(t, State.IDLE);
  }

  /** The threads among 0..n-1 that are parked before an access (runnable). */
  parked(n: number): number[] {
    const out: number[] = [];
    for (let t = 0; t < n; t++) if (this.states[t] === State.PARKED) out.push(t);
    return out;
  }

  /** The threads blocked in a timed wait (the schedule may time them out). */
  timed(): number[] {
    return this.blocked.filter((b) => b.timed).map((b) => b.thread);
  }

  /** Times out thread `t`'s timed wait at `step`: it returns "timed-out" and runs on to its next access. */
  timeOut(step: number, t: number): GateAccess {
    const b = this.blocked.find((x) => x.thread === t);
    if (b === undefined || !b.timed) throw new Error(`chooser timed out thread ${t}, which is in no timed wait`);
    this.resume(t, 1);
    return { step, thread: t, fn: -1, addr: b.addr, arg1: b.expected, arg2: 1, result: 0 };
  }

  /**
   * Releases parked thread `t` for its one access at `step` and waits until it parks again, blocks, or
   * ends. A notify wakes, before the notifier goes on, up to its count of the threads blocked on its word,
   * the oldest first (a futex wake). `action`, in trace mode, names the access from the gate's SITE words.
   */
  release(step: number, t: number, action?: (file: number, line: number) => string | undefined): GateAccess {
    const ctl = this.ctl;
    const base = blockBase(t);
    const access: GateAccess = {
      step,
      thread: t,
      fn: Atomics.load(ctl, base + Block.FN),
      addr: Atomics.load(ctl, base + Block.ADDR),
      arg1: Atomics.load(ctl, base + Block.ARG1),
      arg2: Atomics.load(ctl, base + Block.ARG2),
      result: 0,
    };
    if (action !== undefined) {
      access.line = ctl[base + Block.SITE_LINE];
      access.action = action(ctl[base + Block.SITE_FILE], access.line);
    }
    if (access.fn === Fn.notify) {
      const count = access.arg1 < 0 ? undefined : access.arg1;
      const waking = this.blocked.filter((b) => b.addr === access.addr).sort((a, b) => a.seq - b.seq)
        .slice(0, count).map((b) => b.thread);
      for (const w of waking) this.resume(w, 0);
      access.woke = waking;
      Atomics.store(ctl, base + Block.NOTIFIED, waking.length);
    }
    Atomics.store(ctl, base + Block.STATE, State.GO);
    Atomics.notify(ctl, base + Block.STATE);
    this.states[t] = this.await(t, State.GO);
    access.result = Atomics.load(ctl, base + Block.RESULT);
    if (access.fn === Fn.wait) {
      access.blocked = this.states[t] === State.BLOCKED;
      if (access.blocked) {
        this.blocked.push({
          thread: t,
          addr: access.addr,
          expected: access.arg1,
          timed: access.arg2 === 1,
          seq: this.seq++,
        });
      }
    }
    return access;
  }

  /**
   * Unwinds threads 0..n-1 still parked or blocked (ABORT: the gate throws, the thread's program ends), so
   * that the next run starts clean. Their states stay as they were (what the oracles judge).
   */
  unwind(n: number): void {
    for (let t = 0; t < n; t++) {
      const before = this.states[t];
      if (before !== State.PARKED && before !== State.BLOCKED) continue;
      Atomics.store(this.ctl, blockBase(t) + Block.STATE, State.ABORT);
      Atomics.notify(this.ctl, blockBase(t) + Block.STATE);
      this.await(t, State.ABORT);
    }
  }

  /** The message of thread `t`'s exception, if its program threw (FAILED). */
  failure(t: number): string | undefined {
    if (this.states[t] !== State.FAILED) return undefined;
    const base = blockBase(t);
    const len = Atomics.load(this.ctl, base + Block.MSG);
    let text = "";
    for (let i = 0; i < len; i++) text += String.fromCharCode(Atomics.load(this.ctl, base + Block.MSG + 1 + i));
    return text;
  }

  private resume(t: number, how: number): void {
    const base = blockBase(t);
    Atomics.store(this.ctl, base + Block.WAKE, how);
    Atomics.store(this.ctl, base + Block.STATE, State.RESUME);
    Atomics.notify(this.ctl, base + Block.STATE);
    this.states[t] = this.await(t, State.RESUME);
    this.blocked = this.blocked.filter((b) => b.thread !== t);
  }

  private await(t: number, value: number): number {
    return awaitChange(this.ctl, blockBase(t) + Block.STATE, value, this.label);
  }
}

/** A gate state's name in lower case (`parked`, `blocked`, `done`, …). */
export function gateStateName(st: number): string {
  return Object.entries(State).find(([, v]) => v === st)?.[0].toLowerCase() ?? `state ${st}`;
}

/**
 * A run's steps as a fixed-width table: a header of the thread names `cols`, a rule, then a row per step
 * with the access described in its thread's column. The caller adds the end state.
 */
export function stepTable<A extends GateAccess>(
  cols: readonly string[],
  accesses: readonly A[],
  describe: (a: A) => string,
): string[] {
  const rows = accesses.map((a) => cols.map((_, t) => (t === a.thread ? describe(a) : "")));
  const widths = cols.map((c, i) => Math.max(c.length, ...rows.map((r) => r[i].length)));
  const line = (cells: readonly string[], step: string) =>
    `${step.padStart(4)} | ` + cells.map((c, i) => c.padEnd(widths[i])).join(" | ").trimEnd();
  const out = [line(cols, "step"), "-".repeat(7 + widths.reduce((sum, w) => sum + w + 3, 0))];
  rows.forEach((r, i) => out.push(line(r, String(i))));
  return out;
}
