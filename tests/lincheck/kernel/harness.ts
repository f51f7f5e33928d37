/**
 * The kernel's controller: one {@link Harness} for every model of a protocol under controlled
 * interleavings. It starts the simulated threads (each a Worker running the model's thread module through
 * `gate.ts`), loads the shipped modules and their mutants in them (`mutants.ts`), and runs a scenario under
 * a chooser one shared access at a time: the run loop (what is runnable, what the chooser is offered, yields
 * and stalls, the set-up steps no schedule chooses, the step bound), the end of a run (the threads unwound,
 * their failures read) and the counts. Also the model's schedules: the chooser of a generated schedule, the
 * replay of a systematic one, the generator of the random mode, the systematic search ({@link explore}) and
 * the hunt for a mutant both ways ({@link huntMutant}).
 *
 * A {@link Model} is what a protocol adds: its buffer, its threads' roles and the words it sets before a run
 * ({@link Model.prepare}), what it reads after ({@link Model.observe}), its oracles ({@link Model.check}),
 * its names; its programs are its thread module's (`gate.ts`'s `serveModel`). A new protocol costs its
 * model, not a copy of this file.
 *
 * Determinism: only the controller lets a thread advance, and only by one facade call; everything the code
 * under test computes between two calls is thread-local. So a scenario and a schedule give the same run on
 * every runtime, and a failure replays from its schedule.
 *
 * Called on the controller's thread only (the test's main thread); {@link Harness.run} is synchronous.
 *
 * @module
 */

import fc from "fast-check";
import type { ThreadHandle } from "../../../lib/runtime/thread.ts";
import { Fn } from "../../../spec/trace/facade_codes.ts";
import {
  type Continuation,
  exploreWaits,
  type WaitChooser,
  type WaitExploration,
  waitReplayChooser,
  waitScheduleArbitrary,
  waitScheduleChooser,
} from "./explore.ts";
import type { ThreadSetup } from "./gate.ts";
import { type LoadableMutant, MutantVariants } from "./mutants.ts";
import {
  assignRole,
  type Blocked,
  closeGateThreads,
  type GateAccess,
  GateRun,
  SpecActions,
  startGateThreads,
} from "./run.ts";
import { Block, blockBase, Global, MAX_THREADS } from "./words.ts";

/** A broken property: the oracle's name and what it saw. */
export interface Violation {
  oracle: string;
  detail: string;
}

/** One step the controller took, with the thread's operation under way (its OP word: 0 unless the model writes it). */
export interface Access extends GateAccess {
  op: number;
}

/** What every run produces, whatever the model. */
export interface RunRecord {
  accesses: Access[];
  /** Final gate state of each thread of the scenario (DONE, FAILED, BLOCKED, ABORTED, or PARKED if cut). */
  states: number[];
  /** Threads still blocked in a wait at the end (before the controller unwound them). */
  blocked: Blocked[];
  /** "thread name: message" for every thread that threw. */
  failures: string[];
  /** The step bound was hit. */
  aborted: boolean;
  /** Ended because only polls could run, and none could read anything new (a model with `stalls`). */
  stalled: boolean;
  steps: number;
}

/** A run's record and what the model read at its end. */
export type Execution<X> = RunRecord & X;

/** What a model's {@link Model.prepare} is given to set a run up. */
export interface RunSetup {
  buffer: SharedArrayBuffer;
  ctl: Int32Array;
  /** The run's variant (0: the shipped modules). */
  variant: number;
  /** Its modules loaded on this thread, in the model's order (empty unless {@link Model.loadHere}). */
  modules: readonly unknown[];
  /** Gives thread `t` its program: a role of the model's thread module, and two parameters (all 0: none). */
  assign(t: number, role: number, p1?: number, p2?: number): void;
}

/** What a model's {@link Model.observe} is given at the end of a run (before the threads are unwound). */
export interface RunEnd extends RunRecord {
  buffer: SharedArrayBuffer;
  ctl: Int32Array;
  /** As in {@link RunSetup}: the run's variant and its modules loaded on this thread. */
  variant: number;
  modules: readonly unknown[];
  /** The scenario's thread count. */
  threads: number;
}

/** How the model's random schedules are drawn ({@link waitScheduleArbitrary}). */
export interface ScheduleShape {
  maxLength: number;
  maxSegment: number;
  maxSegments: number;
  /** Entries may ask a timed wait to time out (default true). */
  timeouts?: boolean;
  /** The largest per-step entry, read modulo the thread count (default: a thread's or a timeout's). */
  stepMax?: number;
}

/** A protocol under the kernel: everything that is its own. */
export interface Model<S, X extends object, V extends Violation = Violation> {
  /** A short name, for thread names and messages (`sleep`, `kill-guard` …). */
  name: string;
  /** The model's thread module (its programs, served by `gate.ts`'s `serveModel`). */
  thread: URL;
  /** Simulated threads started (at most {@link MAX_THREADS}); a scenario uses the first {@link threadCount}. */
  threads: number;
  bufferBytes: number;
  /** The step bound of a run, unless the caller gives one. */
  maxSteps: number;
  /** The shipped modules the threads load as variant 0 (the rest are imported statically by the threads). */
  modules?: readonly URL[];
  /** Mutants of those modules, one variant each after variant 0 (in this order). */
  mutants?: readonly LoadableMutant[];
  /** File names whose `// spec:` lines name an access in trace mode (a variant's module, or lib/protocol's). */
  traced?: readonly string[];
  /** Steps the controller makes for thread 0 before the first choice (a constructor's accesses). */
  setupSteps?: number;
  /** A run ends `stalled` when only yields can run and each has yielded since the last write. */
  stalls?: boolean;
  /**
   * The second yield policy, decided by the controller after an access instead of by the thread before it
   * (a model with this leaves `stalls` unset; its threads never mark a yield). Made once per run: true for
   * an access means its thread has just found it must wait for another (a spin loop's failed attempt), so
   * the next step goes to another runnable thread if there is one (a free switch: it is not offered).
   * When every runnable thread is yielding, each may try again (a round); if two rounds pass with no write
   * to shared memory (a store, a read-modify-write, a compare-exchange that matched; a notify is none),
   * none ever will succeed: the run ends `stalled`, its threads unwound, and the model's oracles judge
   * whether that wait was legitimate. Two rounds, since in the first each thread may still finish an
   * attempt begun on stale reads. (The queue's patient push: CHESS's treatment of a yield in a spin loop.)
   */
  yieldAfter?(s: S): (a: Access) => boolean;
  /** The controller imports every variant's modules too (for a set-up or drain it makes itself). */
  loadHere?: boolean;
  /** Past the end of a schedule: `round-robin` (fair), or `same-or-lowest` (the last thread, else the lowest). */
  continuation: "round-robin" | "same-or-lowest";
  /** The random mode's schedules. */
  schedules: ScheduleShape;
  threadCount(s: S): number;
  threadName(s: S, t: number): string;
  /** Clears and writes the model's words and assigns each thread its role (unassigned threads run nothing). */
  prepare(run: RunSetup, s: S): void;
  /** Reads the end state the oracles judge. */
  observe(run: RunEnd, s: S): X;
  /** Every oracle, in the order a failure is attributed. */
  check(s: S, exec: Execution<X>): V[];
}

/** The controller with its reusable simulated threads, for one model. */
export class Harness<S, X extends object, V extends Violation = Violation> {
  readonly model: Model<S, X, V>;
  readonly buffer: SharedArrayBuffer;
  readonly ctl: Int32Array;
  readonly threads: ThreadHandle[];
  /** Per variant, its modules: variant 0 the shipped ones, then one per mutant. */
  readonly variants: URL[][];
  /** Per variant, its modules loaded on this thread ({@link Model.loadHere}; else empty lists). */
  readonly loaded: unknown[][];
  /** Runs and steps since start, for the counts the tests print. */
  runs = 0;
  totalSteps = 0;
  private closed = false;
  private readonly mutants: MutantVariants;
  private readonly actions = new SpecActions();
  private readonly label: string;

  private constructor(
    model: Model<S, X, V>,
    buffer: SharedArrayBuffer,
    threads: ThreadHandle[],
    m: MutantVariants,
    loaded: unknown[][],
  ) {
    this.model = model;
    this.loaded = loaded;
    this.buffer = buffer;
    this.ctl = new Int32Array(buffer);
    this.threads = threads;
    this.mutants = m;
    this.variants = m.variants;
    this.label = `lincheck ${model.name} controller`;
  }

  /** Starts the model's simulated threads, each loading every variant. */
  static async start<S, X extends object, V extends Violation>(model: Model<S, X, V>): Promise<Harness<S, X, V>> {
    if (model.threads > MAX_THREADS) {
      throw new RangeError(`Cannot start ${model.threads} threads: at most ${MAX_THREADS}`);
    }
    const mutants = new MutantVariants(model.modules ?? [], model.mutants ?? []);
    const buffer = new SharedArrayBuffer(model.bufferBytes);
    const variants = mutants.variants.map((v) => v.map((url) => url.href));
    const traced = [...(model.traced ?? [])];
    const threads = await startGateThreads(
      model.thread,
      `lincheck-${model.name}`,
      model.threads,
      (thread): ThreadSetup => ({ buffer, thread, variants, traced }),
    );
    const loaded: unknown[][] = [];
    for (const v of mutants.variants) {
      loaded.push(model.loadHere ? await Promise.all(v.map((u) => import(u.href))) : []);
    }
    return new Harness(model, buffer, threads, mutants, loaded);
  }

  /**
   * Runs `s` with module set `variant` under `choose`, synchronously.
   *
   * @param maxSteps Past this many steps the run is unwound and reported as aborted.
   * @param trace Record, for each access, the `// spec:` action on the line that made it.
   */
  run(s: S, choose: WaitChooser, variant = 0, maxSteps = this.model.maxSteps, trace = false): Execution<X> {
    const model = this.model;
    if (this.closed) throw new Error(`Cannot run as the ${model.name} harness is closed`);
    const ctl = this.ctl;
    const n = model.threadCount(s);
    if (n > model.threads) {
      throw new RangeError(`Cannot run scenario as it needs ${n} threads: at most ${model.threads}`);
    }
    const assigned = new Set<number>();
    const modules = this.loaded[variant];
    model.prepare({
      buffer: this.buffer,
      ctl,
      variant,
      modules,
      assign: (t, role, p1 = 0, p2 = 0) => {
        assigned.add(t);
        assignRole(ctl, t, role, p1, p2);
      },
    }, s);
    for (let t = 0; t < model.threads; t++) if (!assigned.has(t)) assignRole(ctl, t, 0, 0, 0);
    Atomics.store(ctl, Global.VARIANT, variant);
    Atomics.store(ctl, Global.TRACE, trace ? 1 : 0);
    const gate = new GateRun(ctl, model.threads, this.label);
    const action = trace ? (file: number, line: number) => this.actionAt(variant, file, line) : undefined;
    const setup = model.setupSteps ?? 0;

    const accesses: Access[] = [];
    let current = -1;
    let step = 0;
    let aborted = false;
    let stalled = false;
    let lastWrite = -1;
    const polledSince: number[] = [];
    // The second policy's state: who yields, the steps of the last two rounds in which every thread did.
    const yieldAfter = model.yieldAfter?.(s);
    const yielding = new Array<boolean>(n).fill(false);
    let lastRound = -1;
    let roundBefore = -1;
    try {
      for (;;) {
        let parked = gate.parked(n);
        if (parked.length === 0) break;
        if (yieldAfter !== undefined) {
          const eligible = parked.filter((t) => !yielding[t]);
          if (eligible.length === 0) {
            if (roundBefore >= 0 && lastWrite < roundBefore) stalled = true;
            roundBefore = lastRound;
            lastRound = step;
            yielding.fill(false);
          } else parked = eligible;
          if (stalled) break;
        }
        if (step >= maxSteps) {
          aborted = true;
          break;
        }
        // A yield (a poll's first access) goes after every thread that can run.
        const eager = parked.filter((t) => Atomics.load(ctl, blockBase(t) + Block.YIELD) === 0);
        if (eager.length > 0) parked = eager;
        // The set-up steps run before any choice (thread 0's constructor, say).
        const forced = step < setup;
        if (forced && !parked.includes(0)) throw new Error(`thread 0 did not start with its ${setup} set-up steps`);
        // A stall: every thread that can run polls, and each has polled since the last write to shared memory;
        // its next poll reads what the last one did (a timed wait that times out writes nothing either).
        if (model.stalls && !forced && eager.length === 0 && parked.every((p) => (polledSince[p] ?? -1) > lastWrite)) {
          stalled = true;
          break;
        }
        const { thread: t, timeout } = forced
          ? { thread: 0, timeout: false }
          : choose(step - setup, parked, gate.timed(), current);
        if (!forced && eager.length === 0) polledSince[t] = step;
        if (timeout) accesses.push({ ...gate.timeOut(step, t), op: Atomics.load(ctl, blockBase(t) + Block.OP) });
        else {
          if (!parked.includes(t)) throw new Error(`chooser picked thread ${t}, which is not runnable`);
          const op = Atomics.load(ctl, blockBase(t) + Block.OP);
          const access: Access = { ...gate.release(step, t, action), op };
          accesses.push(access);
          if (yieldAfter === undefined ? access.fn !== Fn.load && access.fn !== Fn.wait : writes(access)) {
            lastWrite = step;
          }
          if (yieldAfter !== undefined) yielding[t] = yieldAfter(access);
        }
        current = forced ? -1 : t; // the first choice after the set-up is free
        step++;
      }
    } catch (error) {
      // A chooser that throws (an impossible replay), a hang: leave no thread parked for the next run.
      gate.unwind(n);
      throw error;
    }

    const record: RunRecord = {
      accesses,
      states: gate.states.slice(0, n),
      blocked: gate.blocked.map((b) => ({ ...b })),
      failures: [],
      aborted,
      stalled,
      steps: step,
    };
    const observed = model.observe({ ...record, buffer: this.buffer, ctl, variant, modules, threads: n }, s);
    gate.unwind(n);
    for (let t = 0; t < n; t++) {
      const failure = gate.failure(t);
      if (failure !== undefined) record.failures.push(`${model.threadName(s, t)}: ${failure}`);
    }
    this.runs++;
    this.totalSteps += step;
    return { ...record, ...observed };
  }

  /** The `// spec:` action named on `line` of traced file `file` (1, 2, …): the variant's module, or lib/protocol's. */
  private actionAt(variant: number, file: number, line: number): string | undefined {
    const name = this.model.traced?.[file - 1];
    if (name === undefined) return undefined;
    const url = this.variants[variant].find((u) => u.pathname.endsWith(`/${name}`)) ??
      new URL(`../../../lib/protocol/${name}`, import.meta.url);
    return this.actions.at(url, line);
  }

  /** Asks every simulated thread to leave its loop, waits until it has, terminates the Workers, removes the mutants. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await closeGateThreads(this.ctl, this.threads);
    this.mutants.remove();
  }
}

/** Whether an access changed shared memory (a store, a compare-exchange that matched, a read-modify-write). */
function writes(a: GateAccess): boolean {
  if (a.fn === Fn.load || a.fn === Fn.wait || a.fn === Fn.waitAsync || a.fn === Fn.notify) return false;
  if (a.fn === Fn.compareExchange) return a.result === a.arg1;
  return true;
}

// ---------------------------------------------------------------------------------------------------------
// The model's schedules.

/** Past the end of a schedule: the thread run last if it can go on, else the lowest that can. */
const sameOrLowest: Continuation = (parked, current) => (parked.includes(current) ? current : parked[0]);

/** Past the end of a schedule: the next parked thread after the one run last (round robin, fair). */
const roundRobin: Continuation = (parked, current) => parked.find((t) => t > current) ?? parked[0];

/** Where a schedule has no choice left, by its name (a model's {@link Model.continuation}). */
export function continuation(kind: "round-robin" | "same-or-lowest"): Continuation {
  return kind === "round-robin" ? roundRobin : sameOrLowest;
}

/**
 * The chooser of a generated schedule ({@link waitScheduleChooser}, the model's threads wide): entry `e` at
 * step i means thread `e % threads`, with `e >= threads` a timeout of its wait. Past the end: the model's
 * continuation, never a timeout.
 */
export function scheduleChooser<S>(model: Model<S, object>, schedule: readonly number[]): WaitChooser {
  return waitScheduleChooser(model.threads, schedule, continuation(model.continuation));
}

/** A systematic schedule replayed exactly: per step, a thread to release or (threads + t) to time out. */
export function replayChooser<S>(model: Model<S, object>, choices: readonly number[]): WaitChooser {
  return waitReplayChooser(model.threads, choices, continuation(model.continuation));
}

/** The random mode's schedules for `model`: per-step choices or segments of one thread. */
export function scheduleArbitrary<S>(model: Model<S, object>): fc.Arbitrary<number[]> {
  const { maxLength, maxSegment, maxSegments, timeouts, stepMax } = model.schedules;
  return waitScheduleArbitrary(model.threads, maxLength, maxSegment, maxSegments, timeouts ?? true, stepMax);
}

/** What {@link explore} counts as the failure it looks for. */
export interface ExploreOptions {
  /** Only a run that breaks every one of these oracles (default: any violation). */
  want?: readonly string[];
  /** Stop at the first such run (default true); otherwise search on and report the first. */
  stopAtFirst?: boolean;
}

/**
 * Every schedule of `s` with at most `maxPreemptions` preemptions ({@link exploreWaits}, the model's threads
 * wide: a choice below the thread count releases a thread, above it times its wait out); the set-up steps
 * are no choices, and a yield is not offered while another thread can run, so a switch away from it is free.
 * A failure's choices replay with {@link replayChooser}.
 */
export function explore<S, X extends object, V extends Violation>(
  h: Harness<S, X, V>,
  s: S,
  variant: number,
  maxPreemptions: number,
  options: ExploreOptions = {},
): WaitExploration<V> {
  const { want, stopAtFirst = true } = options;
  return exploreWaits(h.model.threads, maxPreemptions, (choose) => {
    const exec = h.run(s, choose, variant);
    const violations = h.model.check(s, exec);
    const broken = want === undefined
      ? violations.length > 0
      : want.every((o) => violations.some((v) => v.oracle === o));
    return { steps: exec.steps, violations, broken };
  }, stopAtFirst);
}

/** A named scenario of a model's systematic mode, with its own preemption bound if it has one. */
export interface NamedScenario<S> {
  name: string;
  scenario: S;
  preemptions?: number;
}

/** How a mutant was caught: systematically (its minimal failing schedule) and by the random mode. */
export interface MutantHunt<S, V> {
  /** The first failing schedule, fewest preemptions first, then the first named scenario (none: not caught). */
  found?: { name: string; scenario: S; choices: number[]; preemptions: number; index: number; violations: V[] };
  /** Schedules explored until then (or in all). */
  explored: number;
  /** The random hunt: the generated run that failed first and the first oracle it broke (none: not caught). */
  random?: { run: number; oracle: string };
}

/**
 * Hunts the mutant of `variant` both ways. Systematically: for 0, 1, … `maxPreemptions` preemptions, each
 * named scenario in order (one with its own smaller bound skipped past it), every schedule ({@link explore},
 * with `want`), until one breaks. Randomly: generated scenarios under generated schedules (the model's), from
 * `seed`, at most `runs`, until one breaks any oracle.
 */
export function huntMutant<S, X extends object, V extends Violation>(
  h: Harness<S, X, V>,
  variant: number,
  scenarios: readonly NamedScenario<S>[],
  maxPreemptions: number,
  random: { scenarios: fc.Arbitrary<S>; seed: number; runs: number },
  want?: readonly string[],
): MutantHunt<S, V> {
  const model = h.model;
  const hunt: MutantHunt<S, V> = { explored: 0 };
  for (let p = 0; p <= maxPreemptions && hunt.found === undefined; p++) {
    for (const { name, scenario, preemptions } of scenarios) {
      if (preemptions !== undefined && p > preemptions) continue;
      const r = explore(h, scenario, variant, p, { want });
      hunt.explored += r.schedules;
      if (r.failure) {
        hunt.found = { name, scenario, ...r.failure };
        break;
      }
    }
  }
  let oracle = "";
  const result = fc.check(
    fc.property(random.scenarios, scheduleArbitrary(model), (scenario, schedule) => {
      const v = model.check(scenario, h.run(scenario, scheduleChooser(model, schedule), variant));
      if (v.length > 0) {
        oracle ||= v[0].oracle;
        return false;
      }
      return true;
    }),
    { seed: random.seed, numRuns: random.runs, endOnFailure: true },
  );
  if (result.failed) hunt.random = { run: result.numRuns, oracle };
  return hunt;
}
