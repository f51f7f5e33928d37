/**
 * The kill-guard model: the shipped `lib/protocol/kill_guard.ts` — the worker's `WorkerGuard` (`leave`,
 * `enter` and its halt) around the pool's own steps, and the main thread's `Killer` (`request`: move the
 * epoch, read the guard, terminate or poll again, withdraw) — under the kernel's controlled interleavings
 * (`../../kernel/harness.ts`), with `Atomics.wait` modelled as blocking. Scenarios, the run's set-up and end
 * state, the oracles of `spec/KillGuard.tla`, tables and the named scenarios of the systematic mode; the
 * programs are `thread.ts`, the layout `layout.ts`. Variant 0 is the shipped module, variant k the k-th of
 * `KILL_GUARD_MUTANTS`.
 *
 * Threads of a run: 0 the worker, 1 the main thread, 2 (if the scenario settles tasks) the settler.
 *
 * Fairness. The spec's liveness properties assume weak fairness of the worker's steps and of the main
 * thread's poll; the model gives it two ways. A poll (a timer callback's first access) is a yield: while
 * another thread can run, the yielding one is not offered. And past the end of a schedule the controller
 * runs the parked threads round robin, never timing a wait out. So a run of the shipped code always ends:
 * the worker's program is finite or blocks, and then the main thread's poll sees the guard down.
 *
 * @module
 */

import fc from "fast-check";
import { StatusWords } from "../../../../lib/protocol/layout.ts";
import { Fn, FN_NAMES } from "../../../../spec/trace/facade_codes.ts";
import { KILL_GUARD_MUTANTS, SHIPPED_KILL_GUARD } from "../../../mutants/mutants.ts";
import type { Access, Execution, Model, RunEnd, RunSetup, Violation } from "../../kernel/harness.ts";
import { gateStateName, stepTable } from "../../kernel/run.ts";
import { State } from "../../kernel/words.ts";
import {
  KBUFFER_BYTES,
  KGlobal,
  KMAX_HANDLES,
  KRole,
  KSTATUS_BYTES,
  KWork,
  KWORK_BYTES,
  KWORK_WORDS,
} from "./layout.ts";

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

/** One step the controller took (`action`, in trace mode: the `// spec:` action on the line of kill_guard.ts). */
export type KAccess = Access;

/** What a run leaves that the oracles judge (beside the kernel's record; `stalled`: only polls could run). */
export interface KillGuardEnd {
  guard: number;
  epoch: number;
  killed: number;
  inPool: number;
}

/** Everything one run produced. */
export type KExecution = Execution<KillGuardEnd>;

/** A broken property. */
export type KViolation = Violation;

/** The spec's Init written, each thread's program given. */
function prepare({ buffer, ctl, assign }: RunSetup, scenario: KillGuardScenario): void {
  const status = new Int32Array(buffer, KSTATUS_BYTES, StatusWords.count);
  const work = new Int32Array(buffer, KWORK_BYTES, KWORK_WORDS);
  status.fill(0);
  work.fill(0);
  // The spec's Init: the worker starts inside the pool's loop, guard up, with the epoch it finds.
  Atomics.store(status, StatusWords.guard, 1);
  Atomics.store(status, StatusWords.epoch, scenario.epoch);
  // The worker's tasks run on it from the start (runsOn is true for each until it is settled).
  for (let h = 1; h <= scenario.requests; h++) Atomics.store(work, KWork.TASK + h, 1);
  assign(0, KRole.WORKER, scenario.cycles, scenario.finish ? 1 : 0);
  assign(1, KRole.MAIN, scenario.requests);
  if (kThreadCount(scenario) > 2) {
    let mask = 0;
    for (const h of scenario.settle) mask |= 1 << h;
    assign(2, KRole.SETTLER, mask);
  }
  Atomics.store(ctl, KGlobal.HANDLES, scenario.requests);
}

/** The words the oracles follow, at the end. */
function observe({ buffer }: RunEnd): KillGuardEnd {
  const status = new Int32Array(buffer, KSTATUS_BYTES, StatusWords.count);
  const work = new Int32Array(buffer, KWORK_BYTES, KWORK_WORDS);
  return {
    guard: Atomics.load(status, StatusWords.guard),
    epoch: Atomics.load(status, StatusWords.epoch),
    killed: Atomics.load(work, KWork.KILLED),
    inPool: Atomics.load(work, KWork.INPOOL),
  };
}

/**
 * The kill-guard model (`Harness.start(KILL_GUARD)`): three threads, the shipped kill_guard.ts and each
 * kill-guard mutant; the worker's constructor (its first {@link KSETUP_STEPS} accesses) runs before any
 * choice; a poll is a yield, and a run of polls that can read nothing new stalls; round robin past a
 * schedule's end.
 */
export const KILL_GUARD: Model<KillGuardScenario, KillGuardEnd> = {
  name: "kill-guard",
  thread: new URL("./thread.ts", import.meta.url),
  threads: 3,
  bufferBytes: KBUFFER_BYTES,
  maxSteps: KMAX_STEPS,
  modules: [SHIPPED_KILL_GUARD],
  mutants: KILL_GUARD_MUTANTS,
  traced: ["kill_guard.ts"],
  setupSteps: KSETUP_STEPS,
  stalls: true,
  continuation: "round-robin",
  schedules: { maxLength: 120, maxSegment: 12, maxSegments: 16 },
  threadCount: kThreadCount,
  threadName: (_s, t) => kThreadName(t),
  prepare,
  observe,
  check: checkKillExecution,
};

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
  const mainPolling = exec.states[1] === State.PARKED;
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
// Scenarios.

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
