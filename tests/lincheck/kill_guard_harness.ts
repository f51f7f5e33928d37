/**
 * The kill-guard harness: the shipped `lib/protocol/kill_guard.ts` — the worker's `WorkerGuard` (`leave`,
 * `enter` and its halt) around the pool's own steps, and the main thread's `Killer` (`request`: move the
 * epoch, read the guard, terminate or poll again, withdraw) — under controlled interleavings, with
 * `Atomics.wait` modelled as blocking (the sleep harness's gate, `sleep_protocol.ts`). Controller,
 * scenarios, schedules, the oracles of `spec/KillGuard.tla`, systematic search and tables; the simulated
 * threads are `kill_guard_thread.ts`, the layout `kill_guard_protocol.ts`.
 *
 * Threads of a run: 0 the worker, 1 the main thread, 2 (if the scenario settles tasks) the settler.
 *
 * Fairness. The spec's liveness properties assume weak fairness of the worker's steps and of the main
 * thread's poll; the harness gives it two ways. A poll (a timer callback's first access) is a yield: while
 * another thread can run, the yielding one is not offered. And past the end of a schedule the controller
 * runs the parked threads round robin, never timing a wait out. So a run of the shipped code always ends:
 * the worker's program is finite or blocks, and then the main thread's poll sees the guard down.
 *
 * @module
 */

import fc from "fast-check";
import { StatusWords } from "../../lib/protocol/layout.ts";
import type { ThreadHandle } from "../../lib/runtime/thread.ts";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import {
  applyPatches,
  KILL_GUARD_MUTANTS,
  type Mutant,
  rewriteImports,
  SHIPPED_KILL_GUARD,
} from "../mutants/mutants.ts";
import { MUTATION_RUN } from "../mutants/mutation_run.ts";
import {
  KBlock,
  KBUFFER_BYTES,
  KGlobal,
  KMAX_HANDLES,
  KRole,
  KSTATUS_BYTES,
  KWork,
  KWORK_BYTES,
  KWORK_WORDS,
} from "./kill_guard_protocol.ts";
import type { KillGuardThreadSetup } from "./kill_guard_thread.ts";
import {
  type Continuation,
  exploreWaits,
  type WaitChooser,
  type WaitExploration,
  waitReplayChooser,
  waitScheduleArbitrary,
  waitScheduleChooser,
} from "./explore.ts";
import { Fn, FN_NAMES } from "./protocol.ts";
import { sblockBase, SGlobal, SState } from "./sleep_protocol.ts";
import {
  assignRole,
  type Blocked,
  closeGateThreads,
  type GateAccess,
  GateRun,
  gateStateName,
  SpecActions,
  startGateThreads,
  stepTable,
} from "./wait_controller.ts";

/** One run's work. */
export interface KillGuardScenario {
  /** Round trips of the worker into user code and back (1..3). */
  cycles: number;
  /** The task returns after the last one (its pool step clears runsOn); else the worker stays in user code. */
  finish: boolean;
  /** Kill requests the main thread makes, one after the other, for handles 1..requests (1..2). */
  requests: number;
  /** Handles the settler marks as no longer running (the spec's free choice that makes a kill withdrawn). */
  settle: number[];
  /** The epoch word at the start (0, or 2^31 − 1 so that the request's move wraps). */
  epoch: number;
}

/** One step the controller took (`action`, in trace mode: the `// spec:` action on the line of kill_guard.ts). */
export type KAccess = GateAccess;

/** Everything one run produced. */
export interface KExecution {
  accesses: KAccess[];
  /** Final gate state of each thread (DONE, FAILED, BLOCKED, ABORTED, or PARKED if the bound cut it). */
  states: number[];
  blocked: Blocked[];
  failures: string[];
  aborted: boolean;
  /** Ended because only polls could run, and none could read anything new (the main thread polls for ever). */
  stalled: boolean;
  steps: number;
  guard: number;
  epoch: number;
  killed: number;
  inPool: number;
}

/** Picks the next step among `parked` (yields already filtered out), or times out a thread in `timed`. */
export type KChooser = WaitChooser;

/** The controller's name in a hang's message. */
const LABEL = "lincheck kill-guard controller";
/** Steps per run before it is cut (and judged: a main thread still polling then breaks a liveness oracle). */
export const KMAX_STEPS = 600;
/** Steps the controller makes before the schedule's first choice: the worker's WorkerGuard constructor. */
export const KSETUP_STEPS = 2;

/** Absolute word indices of the words the oracles follow. */
export const KAddr = Object.freeze({
  guard: (KSTATUS_BYTES >> 2) + StatusWords.guard,
  epoch: (KSTATUS_BYTES >> 2) + StatusWords.epoch,
  inPool: (KWORK_BYTES >> 2) + KWork.INPOOL,
  killed: (KWORK_BYTES >> 2) + KWork.KILLED,
  task: (h: number) => (KWORK_BYTES >> 2) + KWork.TASK + h,
});

/** The number of simulated threads a scenario uses. */
export function kThreadCount(s: KillGuardScenario): number {
  return s.settle.length > 0 ? 3 : 2;
}

/** Thread names: `worker`, `main`, `settler`. */
export function kThreadName(t: number): string {
  return ["worker", "main", "settler"][t] ?? `t${t}`;
}

/** The controller with its reusable simulated threads (variant 0 the shipped module, then the mutants). */
export class KillGuardHarness {
  readonly buffer: SharedArrayBuffer;
  readonly ctl: Int32Array;
  readonly threads: ThreadHandle[];
  readonly variants: URL[];
  runs = 0;
  totalSteps = 0;
  private closed = false;
  private readonly actions = new SpecActions();
  /** Where the mutants were written. */
  private readonly dir: string;

  private constructor(buffer: SharedArrayBuffer, threads: ThreadHandle[], variants: URL[], dir: string) {
    this.dir = dir;
    this.buffer = buffer;
    this.ctl = new Int32Array(buffer);
    this.threads = threads;
    this.variants = variants;
  }

  /** Starts three simulated threads, each loading the shipped kill guard and every kill-guard mutant. */
  static async start(): Promise<KillGuardHarness> {
    // A directory of its own, removed by close: Bun runs test files side by side in one process, and the
    // shared one of materializeMutant is removed by whichever suite closes first.
    const dir = mkdtempSync(join(tmpdir(), "filch-kill-guard-mutants-"));
    writeFileSync(join(dir, "package.json"), '{ "type": "module" }\n');
    // In the mutation run the shipped module itself carries the mutant: no others beside it.
    const variants = [SHIPPED_KILL_GUARD, ...(MUTATION_RUN ? [] : KILL_GUARD_MUTANTS).map((m) => writeMutant(dir, m))];
    const buffer = new SharedArrayBuffer(KBUFFER_BYTES);
    const urls = variants.map((v) => v.href);
    const threads = await startGateThreads(
      new URL("./kill_guard_thread.ts", import.meta.url),
      "lincheck-kill",
      3,
      (thread): KillGuardThreadSetup => ({ buffer, thread, variants: urls }),
    );
    return new KillGuardHarness(buffer, threads, variants, dir);
  }

  /** Runs `scenario` with module `variant` under `choose`, synchronously. */
  run(scenario: KillGuardScenario, choose: KChooser, variant = 0, maxSteps = KMAX_STEPS, trace = false): KExecution {
    if (this.closed) throw new Error("Cannot run as the kill-guard harness is closed");
    const ctl = this.ctl;
    const n = kThreadCount(scenario);
    const status = new Int32Array(this.buffer, KSTATUS_BYTES, StatusWords.count);
    const work = new Int32Array(this.buffer, KWORK_BYTES, KWORK_WORDS);
    status.fill(0);
    work.fill(0);
    // The spec's Init: the worker starts inside the pool's loop, guard up, with the epoch it finds.
    Atomics.store(status, StatusWords.guard, 1);
    Atomics.store(status, StatusWords.epoch, scenario.epoch);
    // The worker's tasks run on it from the start (runsOn is true for each until it is settled).
    for (let h = 1; h <= scenario.requests; h++) Atomics.store(work, KWork.TASK + h, 1);
    for (let t = 0; t < 3; t++) {
      let role: number = KRole.NONE;
      let p1 = 0;
      let p2 = 0;
      if (t === 0) {
        role = KRole.WORKER;
        p1 = scenario.cycles;
        p2 = scenario.finish ? 1 : 0;
      } else if (t === 1) {
        role = KRole.MAIN;
        p1 = scenario.requests;
      } else if (t < n) {
        role = KRole.SETTLER;
        for (const h of scenario.settle) p1 |= 1 << h;
      }
      assignRole(ctl, t, role, p1, p2);
    }
    Atomics.store(ctl, SGlobal.VARIANT, variant);
    Atomics.store(ctl, KGlobal.HANDLES, scenario.requests);
    Atomics.store(ctl, SGlobal.TRACE, trace ? 1 : 0);
    const gate = new GateRun(ctl, 3, LABEL);
    const action = trace ? (_file: number, line: number) => this.actionAt(variant, line) : undefined;

    const accesses: KAccess[] = [];
    let current = -1;
    let step = 0;
    let aborted = false;
    let stalled = false;
    let lastWrite = -1;
    const polledSince: number[] = [];
    try {
      for (;;) {
        let parked = gate.parked(n);
        if (parked.length === 0) break;
        if (step >= maxSteps) {
          aborted = true;
          break;
        }
        // A yield (a poll's first access) goes after every thread that can run.
        const eager = parked.filter((t) => Atomics.load(ctl, sblockBase(t) + KBlock.YIELD) === 0);
        if (eager.length > 0) parked = eager;
        // The worker's WorkerGuard constructor (its first accesses) runs before any choice: the thread exists,
        // and knows its epoch, before a task of it can be asked to die.
        const forced = step < KSETUP_STEPS;
        if (forced && !parked.includes(0)) throw new Error("the worker did not start with its constructor's accesses");
        // A stall: every thread that can run polls, and each has polled since the last write to shared memory;
        // its next poll reads what the last one did (a timed wait that times out writes nothing either).
        if (!forced && eager.length === 0 && parked.every((p) => (polledSince[p] ?? -1) > lastWrite)) {
          stalled = true;
          break;
        }
        const { thread: t, timeout } = forced
          ? { thread: 0, timeout: false }
          : choose(step - KSETUP_STEPS, parked, gate.timed(), current);
        if (!forced && eager.length === 0) polledSince[t] = step;
        if (timeout) accesses.push(gate.timeOut(step, t));
        else {
          if (!parked.includes(t)) throw new Error(`chooser picked thread ${t}, which is not runnable`);
          const access = gate.release(step, t, action);
          accesses.push(access);
          if (access.fn !== Fn.load && access.fn !== Fn.wait) lastWrite = step;
        }
        current = forced ? -1 : t; // the first choice after the set-up is free
        step++;
      }
    } catch (error) {
      // Leave every thread between runs (a chooser that throws, a hang), so that the next run starts clean.
      gate.unwind(n);
      throw error;
    }

    const exec: KExecution = {
      accesses,
      states: gate.states.slice(0, n),
      blocked: gate.blocked.map((b) => ({ ...b })),
      failures: [],
      aborted,
      stalled,
      steps: step,
      guard: Atomics.load(status, StatusWords.guard),
      epoch: Atomics.load(status, StatusWords.epoch),
      killed: Atomics.load(work, KWork.KILLED),
      inPool: Atomics.load(work, KWork.INPOOL),
    };
    gate.unwind(n);
    for (let t = 0; t < n; t++) {
      const failure = gate.failure(t);
      if (failure !== undefined) exec.failures.push(`${kThreadName(t)}: ${failure}`);
    }
    this.runs++;
    this.totalSteps += step;
    return exec;
  }

  /** The `// spec:` action named on `line` of the variant's kill_guard.ts. */
  private actionAt(variant: number, line: number): string | undefined {
    return line === 0 ? undefined : this.actions.at(this.variants[variant], line);
  }

  /** Asks every simulated thread to leave its loop, waits until it has, terminates the Workers. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await closeGateThreads(this.ctl, this.threads);
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Writes `mutant` of lib/protocol/kill_guard.ts under `dir`, its imports the real modules; returns its URL. */
function writeMutant(dir: string, mutant: Mutant): URL {
  const source = readFileSync(SHIPPED_KILL_GUARD, "utf8");
  const file = join(dir, mutant.name, mutant.module);
  mkdirSync(join(dir, mutant.name), { recursive: true });
  writeFileSync(
    file,
    `// GENERATED by tests/lincheck/kill_guard_harness.ts from lib/protocol/${mutant.module}: mutant '${mutant.name}': ` +
      `${mutant.bug}\n` + rewriteImports(applyPatches(source, mutant), mutant.module),
  );
  return pathToFileURL(file);
}

// ---------------------------------------------------------------------------------------------------------
// Reports.

/** `kill: 2 cycles, task finishes | 2 requests | settles 1 | epoch 0`. */
export function describeKillScenario(s: KillGuardScenario): string {
  return `kill: ${s.cycles} cycle${s.cycles === 1 ? "" : "s"}, ${
    s.finish ? "task finishes" : "stays in user code"
  } | ` +
    `${s.requests} request${s.requests === 1 ? "" : "s"}${
      s.settle.length > 0 ? ` | settles ${s.settle.join(",")}` : ""
    }` +
    ` | epoch ${s.epoch}`;
}

function wordName(addr: number): string {
  if (addr === KAddr.guard) return "guard";
  if (addr === KAddr.epoch) return "epoch";
  if (addr === KAddr.inPool) return "inpool";
  if (addr === KAddr.killed) return "killed";
  for (let h = 1; h <= KMAX_HANDLES; h++) if (addr === KAddr.task(h)) return `task[${h}]`;
  return `w${addr}`;
}

/** One step as text, labelled with its `// spec:` action in trace mode. */
export function describeKAccess(a: KAccess): string {
  const w = wordName(a.addr);
  const tag = a.action ? `${a.action}: ` : "";
  if (a.fn === -1) return `${tag}wait ${w} times out`;
  const name = FN_NAMES[a.fn] ?? `fn${a.fn}`;
  if (name === "load") return `${tag}load ${w} → ${a.result}`;
  if (name === "store") {
    const what = w === "inpool" ? (a.arg1 === 1 ? " (pool step begins)" : " (pool step ends)") : "";
    return `${tag}store ${w} ← ${a.arg1}${what}`;
  }
  if (name === "wait") {
    return `${tag}wait ${w}=${a.arg1}${a.arg2 ? " (timed)" : ""} → ${a.blocked ? "BLOCKS" : "not-equal"}`;
  }
  if (name === "notify") {
    const woke = (a.woke ?? []).map(kThreadName);
    return `${tag}notify ${w} → ${woke.length === 0 ? "nobody" : `wakes ${woke.join(", ")}`}`;
  }
  return `${tag}${name} ${w} ${a.arg1} → ${a.result}`;
}

const stateName = gateStateName;

/** The interleaving as a table: a column per thread, a row per step, then the end state. */
export function formatKillTable(s: KillGuardScenario, exec: KExecution): string {
  const n = kThreadCount(s);
  const cols = Array.from({ length: n }, (_, t) => kThreadName(t));
  const out = stepTable(cols, exec.accesses, describeKAccess);
  const end = exec.states.map((st, t) => {
    const b = exec.blocked.find((x) => x.thread === t);
    return `${kThreadName(t)} ${b ? `blocked on ${wordName(b.addr)}=${b.expected}` : stateName(st)}`;
  });
  out.push(
    `end: ${end.join("; ")}; guard ${exec.guard}; epoch ${exec.epoch}; killed ${exec.killed}; inpool ${exec.inPool}`,
  );
  return out.join("\n");
}

// ---------------------------------------------------------------------------------------------------------
// Oracles.

/** A broken property. */
export interface KViolation {
  oracle: string;
  detail: string;
}

/**
 * Every oracle, on a run's trace and end state (spec/KillGuard.tla's properties):
 * - `no-exception`: no thread threw; the step bound was hit only with the main thread still polling (that
 *   is `killed-unless-withdrawn`'s).
 * - `never-killed-in-pool-step` (NeverKilledInPoolStep): when the main thread terminates the worker, the
 *   worker is not inside a pool step, and it never begins one after (a zombie until the termination lands).
 * - `guard-covers-pool-steps` (GuardCoversPoolSteps): the worker never is inside a pool step with its guard 0.
 * - `killed-unless-withdrawn` (KilledUnlessWithdrawn): every request ends, killed or withdrawn: the main
 *   thread's program returns (it is not left polling at the step bound, or stalled: see {@link KExecution}).
 * - `withdraw-restores-epoch` (the spec's KillWithdraw, `epoch' = mine`): if the main thread killed nobody,
 *   the epoch is the worker's own again at the end.
 * - `halted-worker-resumes` (HaltedWorkerResumes): a worker nobody killed does not end blocked in its halt.
 */
export function checkKillExecution(s: KillGuardScenario, exec: KExecution): KViolation[] {
  const v: KViolation[] = [];
  for (const f of exec.failures) v.push({ oracle: "no-exception", detail: f });
  let guard = 1;
  let poolSince = -1;
  let killedAt = -1;
  for (const a of exec.accesses) {
    if (a.fn !== Fn.store) continue;
    if (a.thread === 0 && a.addr === KAddr.guard) {
      guard = a.arg1;
      if (guard === 0 && poolSince >= 0) {
        v.push({
          oracle: "guard-covers-pool-steps",
          detail: `step ${a.step}: the worker lowers its guard inside the pool step it began at step ${poolSince}`,
        });
      }
    } else if (a.thread === 0 && a.addr === KAddr.inPool) {
      if (a.arg1 === 1) {
        poolSince = a.step;
        if (guard === 0) {
          v.push({
            oracle: "guard-covers-pool-steps",
            detail: `step ${a.step}: the worker begins a pool step with its guard down`,
          });
        }
        if (killedAt >= 0) {
          v.push({
            oracle: "never-killed-in-pool-step",
            detail: `step ${a.step}: the worker, terminated at step ${killedAt} (a zombie until it lands), ` +
              `begins a pool step`,
          });
        }
      } else poolSince = -1;
    } else if (a.thread === 1 && a.addr === KAddr.killed) {
      killedAt = a.step;
      if (poolSince >= 0) {
        v.push({
          oracle: "never-killed-in-pool-step",
          detail:
            `step ${a.step}: the main thread terminates the worker inside the pool step it began at step ${poolSince}`,
        });
      }
    }
  }
  const mainPolling = exec.states[1] === SState.PARKED;
  if (exec.aborted && !mainPolling) {
    v.push({ oracle: "no-exception", detail: `step bound hit after ${exec.steps} steps` });
  }
  if (mainPolling) {
    v.push({
      oracle: "killed-unless-withdrawn",
      detail: `${exec.stalled ? "stalled" : `after ${exec.steps} steps`}: the main thread polls for ever, ` +
        `the kill neither lands nor is withdrawn ` +
        `(guard ${exec.guard}, worker ${stateName(exec.states[0])})`,
    });
  } else if (exec.failures.length === 0 && exec.killed === 0 && exec.epoch !== s.epoch) {
    v.push({
      oracle: "withdraw-restores-epoch",
      detail:
        `the main thread is done, killed nobody, and left the epoch at ${exec.epoch} (the worker's is ${s.epoch})`,
    });
  }
  if (exec.killed === 0 && exec.blocked.some((b) => b.thread === 0 && b.addr === KAddr.epoch)) {
    v.push({
      oracle: "halted-worker-resumes",
      detail: `nobody killed the worker, and it ends halted, blocked on the epoch (now ${exec.epoch})`,
    });
  }
  return v;
}

// ---------------------------------------------------------------------------------------------------------
// Schedules: random (fast-check) and systematic (bounded preemptions).

/** Round robin after `current` among `parked`: the fair continuation past a schedule's end. */
const roundRobin: Continuation = (parked, current) => {
  for (let d = 1; d <= 3; d++) if (parked.includes((current + d) % 3)) return (current + d) % 3;
  return parked[0];
};

/**
 * The chooser of a generated schedule ({@link waitScheduleChooser}, 3 threads): entry `e` at step i means
 * thread `e % 3`, with `e >= 3` a timeout of its wait. Past the end: round robin, never a timeout.
 */
export function killScheduleChooser(schedule: readonly number[]): KChooser {
  return waitScheduleChooser(3, schedule, roundRobin);
}

/** A systematic schedule replayed: per step, a thread to release (0–2) or to time out (3–5); then round robin. */
export function killSystematicChooser(choices: readonly number[]): KChooser {
  return waitReplayChooser(3, choices, roundRobin);
}

/** Scenarios for the random mode. */
export function killScenarioArbitrary(): fc.Arbitrary<KillGuardScenario> {
  return fc.record({
    cycles: fc.integer({ min: 1, max: 3 }),
    finish: fc.boolean(),
    requests: fc.integer({ min: 1, max: 2 }),
    settle: fc.subarray([1, 2]),
    epoch: fc.constantFrom(0, 0x7fffffff),
  }).map((s) => ({ ...s, settle: s.settle.filter((h) => h <= s.requests) }));
}

/** Schedules: per-step choices (0–5: a thread, or a timeout) or segments of one thread. */
export function killScheduleArbitrary(): fc.Arbitrary<number[]> {
  return waitScheduleArbitrary(3, 120, 12, 16);
}

/** The outcome of exploring a scenario systematically (a failure's choices replay with {@link killSystematicChooser}). */
export type KExploration = WaitExploration<KViolation>;

/**
 * Every schedule of `scenario` with at most `maxPreemptions` preemptions ({@link exploreWaits}, 3 threads
 * wide: a choice 0–2 releases a thread, 3–5 times its wait out); the set-up steps are no choices. A yield
 * is not offered while another thread can run, so a switch away from it is free. With `want`, only a run
 * that breaks every one of those oracles counts as the failure.
 */
export function exploreKill(
  harness: KillGuardHarness,
  scenario: KillGuardScenario,
  variant: number,
  maxPreemptions: number,
  want?: readonly string[],
): KExploration {
  return exploreWaits(3, maxPreemptions, (choose) => {
    const exec = harness.run(scenario, choose, variant);
    const violations = checkKillExecution(scenario, exec);
    const broken = want === undefined
      ? violations.length > 0
      : want.every((o) => violations.some((v) => v.oracle === o));
    return { steps: exec.steps, violations, broken };
  });
}

/** Small scenarios explored with every schedule of at most 3 preemptions (by default), named after the race. */
export const KILL_SCENARIOS: readonly { name: string; scenario: KillGuardScenario }[] = [
  {
    name: "kill_vs_return_from_user_code",
    scenario: { cycles: 1, finish: false, requests: 1, settle: [], epoch: 0 },
  },
  {
    name: "kill_vs_task_finishing",
    scenario: { cycles: 1, finish: true, requests: 1, settle: [], epoch: 0 },
  },
  {
    name: "kill_vs_two_round_trips_wrapping_epoch",
    scenario: { cycles: 2, finish: false, requests: 1, settle: [], epoch: 0x7fffffff },
  },
  {
    name: "settled_kill_vs_task_finishing",
    scenario: { cycles: 2, finish: true, requests: 1, settle: [1], epoch: 0 },
  },
  {
    name: "withdrawn_kill_then_second_kill",
    scenario: { cycles: 1, finish: false, requests: 2, settle: [1], epoch: 0 },
  },
];
