/**
 * The priority levels model: the shipped `lib/protocol/levels.ts` — a producer's `pushPatiently` (announce
 * a level other than normal, then push into its queue) against workers' `take` (read the levels word until
 * a bit is seen, then the quota rule over three queues) — over three real `lib/protocol/injector.ts` queues
 * in one SharedArrayBuffer, under the kernel's controlled interleavings (`../../kernel/harness.ts`; nothing
 * here blocks). Scenarios, the run's set-up and end state, the oracles of `spec/Levels.tla`, tables and the
 * named scenarios of the systematic mode; the programs are `thread.ts`, the layout `layout.ts`. Variant 0
 * is the shipped module, variant k the k-th of `LEVELS_MUTANTS`.
 *
 * Threads of a run: 0 the producer, 1 and (if the scenario has two workers) 2 the workers, each with its
 * own `Levels` handle (its streaks are its own, as a pool worker's).
 *
 * Fairness: a worker's take after one that found nothing is a poll, its first access a yield (not offered
 * while another thread can run). Past the end of a schedule the controller runs the parked threads round
 * robin. A run ends when every thread has returned (every task taken), or stalls: only polls can run and
 * each polled since the last write to shared memory (nothing new to find: the tasks left are lost).
 *
 * @module
 */

import fc from "fast-check";
import { initInjector } from "../../../../lib/protocol/injector.ts";
import { CACHE_LINE_WORDS, ControlWords, InjectorWords } from "../../../../lib/protocol/layout.ts";
import { LEVEL_QUOTA, type LevelIndex } from "../../../../lib/protocol/levels.ts";
import { Fn, FN_NAMES } from "../../../../spec/trace/facade_codes.ts";
import { LEVELS_MUTANTS } from "../../../mutants/mutants.ts";
import type { Access, Execution, Model, RunEnd, RunSetup, Violation } from "../../kernel/harness.ts";
import { type GateAccess, gateStateName, stepTable } from "../../kernel/run.ts";
import {
  LBUFFER_BYTES,
  LCAPACITY,
  LCONTROL_BYTES,
  LGlobal,
  LMAX_TASKS,
  lqueueBytes,
  LRole,
  LWork,
  LWORK_BYTES,
  LWORK_WORDS,
  RECORD_WORDS,
} from "./layout.ts";

/** The shipped levels module. */
export const SHIPPED_LEVELS: URL = new URL("../../../../lib/protocol/levels.ts", import.meta.url);

/** One run's work. */
export interface LevelsScenario {
  /** The level of each task, in submission order (task i is the value 101 + i). */
  levels: LevelIndex[];
  /** Worker threads taking (1 or 2). */
  workers: number;
}

/** A task a worker took: its value, the worker's thread (1, 2) and its take count then (from 0). */
export interface LTake {
  worker: number;
  task: number;
  op: number;
}

/** Steps per run before it is cut (a mutant that loops). */
export const LMAX_STEPS = 3000;
/** Threads of the model: the producer and two workers. */
export const LTHREADS = 3;

/** Absolute word indices of the words the oracles follow. */
export const LAddr = Object.freeze({
  levels: (LCONTROL_BYTES >> 2) + ControlWords.levels,
  head: (level: number) => (lqueueBytes(level) >> 2) + InjectorWords.head,
  tail: (level: number) => (lqueueBytes(level) >> 2) + InjectorWords.tail,
  seq: (level: number, i: number) => (lqueueBytes(level) >> 2) + InjectorWords.seqs + i,
  value: (level: number, i: number) => (lqueueBytes(level) >> 2) + InjectorWords.seqs + LCAPACITY + i,
});

/** Thread names: `producer`, `worker1`, `worker2`. */
export function lThreadName(t: number): string {
  return t === 0 ? "producer" : `worker${t}`;
}

/** One step the controller took, with the operation under way in its thread (a push index, a take count). */
export type LAccess = Access;

/** What a run leaves that the oracles judge (beside the kernel's record; `stalled`: only polls could run). */
export interface LevelsEnd {
  takes: LTake[];
  /** The levels word at the end. */
  announced: number;
}

/** Everything one run produced. */
export type LExecution = Execution<LevelsEnd>;

/** A broken property. */
export type LViolation = Violation;

/** The control words and the three queues fresh, the levels written, each thread's program given. */
function prepare({ buffer, ctl, assign }: RunSetup, scenario: LevelsScenario): void {
  const n = scenario.levels.length;
  if (n > LMAX_TASKS || scenario.workers < 1 || scenario.workers > 2) {
    throw new RangeError(`Cannot run a levels scenario of ${n} tasks and ${scenario.workers} workers`);
  }
  new Int32Array(buffer, LCONTROL_BYTES, 3 * CACHE_LINE_WORDS).fill(0);
  new Int32Array(buffer, LWORK_BYTES, LWORK_WORDS).fill(0);
  // The controller's binding of `mem` is the plain one: the set-up is no scheduled step.
  for (let level = 0; level < 3; level++) {
    initInjector({ buffer, byteOffset: lqueueBytes(level), capacity: LCAPACITY });
  }
  for (let i = 0; i < LMAX_TASKS; i++) Atomics.store(ctl, LGlobal.LEVELS + i, scenario.levels[i] ?? 1);
  for (let t = 0; t < 1 + scenario.workers; t++) assign(t, t === 0 ? LRole.PRODUCER : LRole.WORKER, n);
}

/** What each worker took, and the levels word. */
function observe({ buffer, ctl, threads }: RunEnd): LevelsEnd {
  const work = new Int32Array(buffer, LWORK_BYTES, LWORK_WORDS);
  const takes: LTake[] = [];
  for (let w = 1; w < threads; w++) {
    const at = LWork.RECORDS + (w - 1) * RECORD_WORDS;
    const count = Atomics.load(work, at);
    for (let k = 0; k < count; k++) {
      takes.push({ worker: w, task: Atomics.load(work, at + 1 + 2 * k), op: Atomics.load(work, at + 2 + 2 * k) });
    }
  }
  return { takes, announced: Atomics.load(ctl, LAddr.levels) };
}

/**
 * The levels model (`Harness.start(LEVELS)`): a producer and one or two workers, the shipped levels.ts and
 * each levels mutant over the real injector; each access records its operation; a poll is a yield, and a
 * run of polls that can read nothing new stalls; round robin past a schedule's end.
 */
export const LEVELS: Model<LevelsScenario, LevelsEnd> = {
  name: "levels",
  thread: new URL("./thread.ts", import.meta.url),
  threads: LTHREADS,
  bufferBytes: LBUFFER_BYTES,
  maxSteps: LMAX_STEPS,
  modules: [SHIPPED_LEVELS],
  mutants: LEVELS_MUTANTS,
  traced: ["levels.ts", "injector.ts"],
  stalls: true,
  continuation: "round-robin",
  schedules: { maxLength: 160, maxSegment: 24, maxSegments: 16 },
  threadCount: (s) => 1 + s.workers,
  threadName: (_s, t) => lThreadName(t),
  prepare,
  observe,
  check: checkLevelsExecution,
};

// ---------------------------------------------------------------------------------------------------------
// Reports.

const LEVEL_NAMES = ["high", "normal", "low"];

/** `levels: low low high×10 | 1 worker`. */
export function describeLevelsScenario(s: LevelsScenario): string {
  const parts: string[] = [];
  for (let i = 0; i < s.levels.length;) {
    let j = i;
    while (j < s.levels.length && s.levels[j] === s.levels[i]) j++;
    parts.push(`${LEVEL_NAMES[s.levels[i]]}${j - i > 1 ? `×${j - i}` : ""}`);
    i = j;
  }
  return `levels: ${parts.join(" ")} | ${s.workers} worker${s.workers === 1 ? "" : "s"}`;
}

function wordName(addr: number): string {
  if (addr === LAddr.levels) return "levels";
  for (let level = 0; level < 3; level++) {
    const q = "HNL"[level];
    if (addr === LAddr.head(level)) return `${q}.head`;
    if (addr === LAddr.tail(level)) return `${q}.tail`;
    for (let i = 0; i < LCAPACITY; i++) {
      if (addr === LAddr.seq(level, i)) return `${q}.seq[${i}]`;
      if (addr === LAddr.value(level, i)) return `${q}.val[${i}]`;
    }
  }
  return `w${addr}`;
}

/** One step as text, labelled with its `// spec:` action in trace mode. */
export function describeLAccess(a: GateAccess): string {
  const w = wordName(a.addr);
  const tag = a.action ? `${a.action}: ` : "";
  const name = FN_NAMES[a.fn] ?? `fn${a.fn}`;
  if (name === "load") return `${tag}load ${w} → ${a.result}`;
  if (name === "store") return `${tag}store ${w} ← ${a.arg1}`;
  if (name === "cas") return `${tag}cas ${w} ${a.arg1}→${a.arg2} : ${a.result} ${a.result === a.arg1 ? "ok" : "fail"}`;
  return `${tag}${name} ${w} ${a.arg1} → ${a.result}`;
}

/** The interleaving as a table: a column per thread, a row per step, then the takes and the end state. */
export function formatLevelsTable(s: LevelsScenario, exec: LExecution): string {
  const cols = Array.from({ length: 1 + s.workers }, (_, t) => lThreadName(t));
  const out = stepTable(cols, exec.accesses, describeLAccess);
  const takes = exec.takes.map((k) => {
    const i = k.task - 101;
    return `${lThreadName(k.worker)}#${k.op}:${k.task}(${LEVEL_NAMES[s.levels[i]] ?? "?"})`;
  });
  out.push(`takes: ${takes.join(" ")}`);
  out.push(
    `end: ${exec.states.map((st, t) => `${lThreadName(t)} ${gateStateName(st)}`).join("; ")}; ` +
      `levels word ${exec.announced}${exec.stalled ? "; STALLED" : ""}${exec.aborted ? "; step bound" : ""}`,
  );
  return out.join("\n");
}

// ---------------------------------------------------------------------------------------------------------
// Oracles.

/**
 * Each task's publish step (the producer's store of its sequence word in the task's queue, PushPublishSeq),
 * or Infinity if it was never published.
 */
function publishSteps(s: LevelsScenario, exec: LExecution): number[] {
  const out = s.levels.map(() => Infinity);
  for (const a of exec.accesses) {
    if (a.thread !== 0 || a.fn !== Fn.store || a.op >= s.levels.length) continue;
    const level = s.levels[a.op];
    if (a.addr >= LAddr.seq(level, 0) && a.addr < LAddr.seq(level, LCAPACITY)) out[a.op] = a.step;
  }
  return out;
}

/** A take as the oracles see it: its task's index and level, its first step, and its claim (PopCasHead). */
interface Claim {
  worker: number;
  op: number;
  index: number;
  level: number;
  first: number;
  claim: number;
}

/** The level of the queue a word belongs to, or -1. */
function queueLevel(addr: number): number {
  for (let level = 0; level < 3; level++) {
    if (addr >= LAddr.head(level) && addr < LAddr.value(level, LCAPACITY)) return level;
  }
  return -1;
}

/**
 * The ops of `worker` whose first queue access was to `level`'s queue, a lower level than high, and that
 * claimed no task of it: a starving look (`FindStarving`, which comes before the look from the highest
 * level down) that found the level empty. (A worker that never saw a level announced looks at the normal
 * queue alone, first too: it took nothing of a higher level, so counting from there changes nothing.)
 */
function emptyFinds(exec: LExecution, worker: number, level: number): number[] {
  const first = new Map<number, number>();
  const claimed = new Set<number>();
  for (const a of exec.accesses) {
    if (a.thread !== worker) continue;
    const l = queueLevel(a.addr);
    if (l < 0) continue;
    if (!first.has(a.op)) first.set(a.op, l);
    if (l === level && a.fn === Fn.compareExchange && a.addr === LAddr.head(level) && a.result === a.arg1) {
      claimed.add(a.op);
    }
  }
  return [...first].filter(([op, l]) => l === level && level > 0 && !claimed.has(op)).map(([op]) => op);
}

/**
 * Every oracle, on a run's trace and end state (spec/Levels.tla's properties, on the shipped code's steps):
 * - `no-exception`: no thread threw, the step bound was not reached.
 * - `conservation` (StartsOnce, and AllStart on a finite run): every task is taken exactly once, and the run
 *   did not stall with tasks left (a stall: only polls could run, and none could find anything new).
 * - `taken-in-order` (TakenInOrder): within a level, the claims (a take's successful compare-exchange of its
 *   queue's head) follow the submission order.
 * - `no-inversion` (NoInversion): a take of level l passes over no task of a higher level that was published
 *   before the take's first step and not claimed before the take's claim, unless it may be a starving
 *   level's turn: its worker took at least LEVEL_QUOTA tasks of levels above l since its own last take of
 *   level l or its last starving look that found level l empty (a streak counts such takes alone, and starts
 *   again at either).
 * - `bounded-overtake` (BoundedOvertake): while a published task waits in its level (not claimed), at most
 *   (LEVEL_QUOTA + 1) × workers tasks of higher levels are claimed before a task of that level is (the
 *   spec's `passed`, restarted by each claim of the level).
 */
export function checkLevelsExecution(s: LevelsScenario, exec: LExecution): LViolation[] {
  const v: LViolation[] = [];
  for (const f of exec.failures) v.push({ oracle: "no-exception", detail: f });
  if (exec.aborted) v.push({ oracle: "no-exception", detail: `the step bound (${LMAX_STEPS}) was reached` });
  const n = s.levels.length;
  // Conservation.
  const takenBy = new Map<number, LTake>();
  for (const k of exec.takes) {
    const i = k.task - 101;
    if (!Number.isInteger(i) || i < 0 || i >= n) {
      v.push({ oracle: "conservation", detail: `${lThreadName(k.worker)} took ${k.task}, which was never submitted` });
      continue;
    }
    const before = takenBy.get(i);
    if (before !== undefined) {
      v.push({
        oracle: "conservation",
        detail: `${k.task} taken twice: by ${lThreadName(before.worker)} and ${lThreadName(k.worker)}`,
      });
    } else takenBy.set(i, k);
  }
  const missing = s.levels.map((_, i) => i).filter((i) => !takenBy.has(i));
  if (missing.length > 0 && !exec.aborted && exec.failures.length === 0) {
    v.push({
      oracle: "conservation",
      detail: `never taken: ${missing.map((i) => `${101 + i} (${LEVEL_NAMES[s.levels[i]]})`).join(", ")}${
        exec.stalled ? " (the workers poll, and nothing they read changes)" : ""
      }`,
    });
  }
  // The claims, in step order.
  const published = publishSteps(s, exec);
  const claims: Claim[] = [];
  for (const [i, k] of takenBy) {
    const level = s.levels[i];
    let first = Infinity;
    let claim = -1;
    for (const a of exec.accesses) {
      if (a.thread !== k.worker || a.op !== k.op) continue;
      first = Math.min(first, a.step);
      if (a.fn === Fn.compareExchange && a.addr === LAddr.head(level) && a.result === a.arg1) claim = a.step;
    }
    if (claim < 0) {
      v.push({ oracle: "conservation", detail: `${101 + i} was taken without a claim of its queue's head` });
      continue;
    }
    claims.push({ worker: k.worker, op: k.op, index: i, level, first, claim });
  }
  claims.sort((a, b) => a.claim - b.claim);
  // TakenInOrder.
  for (let level = 0; level < 3; level++) {
    const order = claims.filter((c) => c.level === level).map((c) => c.index);
    for (let j = 1; j < order.length; j++) {
      if (order[j] < order[j - 1]) {
        v.push({
          oracle: "taken-in-order",
          detail: `${LEVEL_NAMES[level]}: ${101 + order[j]} claimed after ${101 + order[j - 1]}, submitted later`,
        });
      }
    }
  }
  const claimOf = new Map<number, number>(claims.map((c) => [c.index, c.claim]));
  const waiting = (i: number, at: number) => published[i] < at && (claimOf.get(i) ?? Infinity) > at;
  // NoInversion.
  for (const c of claims) {
    if (c.level === 0) continue;
    const passed = s.levels.map((_, i) => i).filter((i) =>
      s.levels[i] < c.level && published[i] < c.first && (claimOf.get(i) ?? Infinity) > c.claim
    );
    if (passed.length === 0) continue;
    // Its worker's takes before it, back to its own last take of this level or to its last starving look
    // that found this level empty (the streak starts again there too: the module doc, issue 47 class 4):
    // how many of higher levels. A take in the op of that look counts (the streak may count it again if a
    // task reached the level before its length was read).
    const mine = claims.filter((o) => o.worker === c.worker && o.op < c.op).sort((a, b) => b.op - a.op);
    const restart = emptyFinds(exec, c.worker, c.level).filter((op) => op < c.op).reduce((a, b) => Math.max(a, b), -1);
    let above = 0;
    for (const o of mine) {
      if (o.level === c.level || o.op < restart) break;
      if (o.level < c.level) above++;
    }
    if (above >= LEVEL_QUOTA) continue;
    v.push({
      oracle: "no-inversion",
      detail: `${lThreadName(c.worker)}'s take #${c.op} (steps ${c.first}..${c.claim}) took ${101 + c.index} ` +
        `(${LEVEL_NAMES[c.level]}) over ${passed.map((i) => `${101 + i} (${LEVEL_NAMES[s.levels[i]]})`).join(", ")}, ` +
        `published before it began, after only ${above} higher take${above === 1 ? "" : "s"} since its last ` +
        `${LEVEL_NAMES[c.level]} take or empty look (a starving turn needs ${LEVEL_QUOTA})`,
    });
  }
  // BoundedOvertake.
  const bound = (LEVEL_QUOTA + 1) * s.workers;
  const passedCount = [0, 0, 0];
  const reported = [false, false, false];
  for (const c of claims) {
    passedCount[c.level] = 0;
    for (let m = c.level + 1; m < 3; m++) {
      if (!s.levels.some((l, i) => l === m && waiting(i, c.claim))) continue;
      passedCount[m]++;
      if (passedCount[m] > bound && !reported[m]) {
        reported[m] = true;
        v.push({
          oracle: "bounded-overtake",
          detail: `${passedCount[m]} higher-level tasks claimed (the last ${101 + c.index} at step ${c.claim}) ` +
            `while a ${LEVEL_NAMES[m]} task waited at the head of its queue: more than (${LEVEL_QUOTA} + 1) × ` +
            `${s.workers}`,
        });
      }
    }
  }
  return v;
}

// ---------------------------------------------------------------------------------------------------------
// Scenarios.

/**
 * Scenarios for the random mode: 1 to 14 tasks, a third of them long enough for the quota to matter
 * (a low task or two ahead of ten or more higher ones), one or two workers.
 */
export function levelsScenarioArbitrary(): fc.Arbitrary<LevelsScenario> {
  const level = fc.constantFrom<LevelIndex>(0, 1, 2);
  const short = fc.array(level, { minLength: 1, maxLength: 6 });
  const long = fc.tuple(
    fc.array(fc.constantFrom<LevelIndex>(1, 2), { minLength: 1, maxLength: 2 }),
    fc.array(fc.constantFrom<LevelIndex>(0, 0, 0, 1), { minLength: 10, maxLength: 12 }),
  ).map(([low, high]) => [...low, ...high]);
  return fc.record({ levels: fc.oneof(short, short, long), workers: fc.integer({ min: 1, max: 2 }) });
}

const high10: LevelIndex[] = Array.from({ length: 10 }, () => 0);

/**
 * Scenarios explored systematically, named after the race, each with its preemption bound (the long one
 * has ~200 steps; two preemptions of the five-task scenarios are ~10,000 schedules each, 40 s: a long run's).
 */
export const LEVELS_SCENARIOS: readonly { name: string; scenario: LevelsScenario; preemptions: number }[] = [
  {
    name: "two_low_behind_ten_high_one_worker",
    scenario: { levels: [2, 2, ...high10], workers: 1 },
    preemptions: 1,
  },
  { name: "mixed_levels_two_workers", scenario: { levels: [2, 1, 0, 2, 0], workers: 2 }, preemptions: 1 },
  { name: "normal_then_announce_two_workers", scenario: { levels: [1, 2, 1, 0], workers: 2 }, preemptions: 1 },
  { name: "one_of_each_level_two_workers", scenario: { levels: [2, 0, 1], workers: 2 }, preemptions: 2 },
];
