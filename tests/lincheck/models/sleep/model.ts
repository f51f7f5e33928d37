/**
 * The sleep/latch model: the shipped `lib/protocol/sleep.ts` (the worker loop's path to sleep, `Sleep.idle`,
 * then `sleep`; posters' `newWork` and `wakeAll`) and `lib/protocol/latch.ts` (`setLatch` against `latchIsSet` /
 * `waitLatch`) under the kernel's controlled interleavings (`../../kernel/harness.ts`), with `Atomics.wait`
 * modelled as blocking (futex semantics: compare and block in one step; woken by a notify on the word; a
 * timed wait may time out when the schedule says so). Scenarios, the run's set-up and end state, oracles,
 * reports and the named scenarios of the systematic mode; the programs are `thread.ts`, the layout
 * `layout.ts`. Variant 0 is the shipped pair, variant k the k-th of `SLEEP_MUTANTS` (a mutant of one module
 * runs with the other shipped).
 *
 * @module
 */

import fc from "fast-check";
import { SleepWords } from "../../../../lib/protocol/layout.ts";
import { FN_NAMES } from "../../../../spec/trace/facade_codes.ts";
import { SHIPPED_LATCH, SHIPPED_SLEEP, SLEEP_MUTANTS } from "../../../mutants/mutants.ts";
import type { Access, Execution, Model, RunEnd, RunSetup, Violation } from "../../kernel/harness.ts";
import { gateStateName, stepTable } from "../../kernel/run.ts";
import { blockBase, State } from "../../kernel/words.ts";
import {
  Role,
  SLEEP_BUFFER_BYTES,
  SLEEP_REGION_BYTES,
  SLEEP_THREADS,
  SleepBlock,
  SleepGlobal,
  Work,
  WORK_BYTES,
  WORK_WORDS,
} from "./layout.ts";

/** One run's work. */
export type SleepScenario =
  /** Workers 0..workers-1 run the idle path; then one poster per entry of `posts` (items it posts). */
  | { kind: "sleep"; workers: number; posts: number[]; stop: boolean }
  /** Thread 0 joins (check, then wait on UNSET, 1 ms timeout); thread 1 finishes (set, then notify). */
  | { kind: "latch" };

/** One step the controller took. */
export type SAccess = Access;

/** What a run leaves that the oracles judge (beside the kernel's record: accesses, states, blocked …). */
export interface SleepEnd {
  /** The shared words at the end. */
  counters: number;
  stateWords: number[];
  countedWords: number[];
  avail: number;
  stop: number;
  latch: number;
  /** Items each thread took; what each poster's wakes reported. */
  taken: number[];
  woke: number[];
}

/** Everything one run produced. */
export type SExecution = Execution<SleepEnd>;

/** A broken property. */
export type SViolation = Violation;

/** The number of simulated threads a scenario uses. */
export function threadCount(s: SleepScenario): number {
  return s.kind === "latch" ? 2 : s.workers + s.posts.length;
}

/** The sleep and latch words cleared, each thread's role given, the Sleep handle's worker count written. */
function prepare({ buffer, ctl, assign }: RunSetup, scenario: SleepScenario): void {
  const n = threadCount(scenario);
  new Int32Array(buffer, SLEEP_REGION_BYTES, (WORK_BYTES - SLEEP_REGION_BYTES) / 4).fill(0);
  new Int32Array(buffer, WORK_BYTES, WORK_WORDS).fill(0);
  for (let t = 0; t < n; t++) {
    if (scenario.kind === "latch") assign(t, t === 0 ? Role.JOINER : Role.FINISHER);
    else if (t < scenario.workers) assign(t, Role.WORKER, t);
    else {
      const k = t - scenario.workers;
      assign(t, Role.POSTER, scenario.posts[k], scenario.stop && k === scenario.posts.length - 1 ? 1 : 0);
    }
  }
  Atomics.store(ctl, SleepGlobal.WORKERS, scenario.kind === "sleep" ? scenario.workers : 1);
}

/** The end state: the sleep words, the work words, what each thread counted. */
function observe({ buffer, ctl, threads: n }: RunEnd, scenario: SleepScenario): SleepEnd {
  const workers = scenario.kind === "sleep" ? scenario.workers : 1;
  const words = new Int32Array(buffer, SLEEP_REGION_BYTES, (WORK_BYTES - SLEEP_REGION_BYTES) / 4);
  const work = new Int32Array(buffer, WORK_BYTES, WORK_WORDS);
  return {
    counters: Atomics.load(words, SleepWords.counters),
    stateWords: Array.from({ length: workers }, (_, i) => Atomics.load(words, SleepWords.state(i))),
    countedWords: Array.from({ length: workers }, (_, i) => Atomics.load(words, SleepWords.counted(i))),
    avail: Atomics.load(work, Work.AVAIL),
    stop: Atomics.load(work, Work.STOP),
    latch: Atomics.load(work, Work.LATCH),
    taken: Array.from({ length: n }, (_, t) => Atomics.load(ctl, blockBase(t) + SleepBlock.TAKEN)),
    woke: Array.from({ length: n }, (_, t) => Atomics.load(ctl, blockBase(t) + SleepBlock.WOKE)),
  };
}

/**
 * The sleep/latch model (`Harness.start(SLEEP)`): four threads, the shipped sleep.ts and latch.ts and each
 * sleep/latch mutant, 600 steps a run; past a schedule's end the thread run last goes on, else the lowest.
 */
export const SLEEP: Model<SleepScenario, SleepEnd> = {
  name: "sleep",
  thread: new URL("./thread.ts", import.meta.url),
  threads: SLEEP_THREADS,
  bufferBytes: SLEEP_BUFFER_BYTES,
  maxSteps: 600,
  modules: [SHIPPED_SLEEP, SHIPPED_LATCH],
  mutants: SLEEP_MUTANTS,
  traced: ["sleep.ts", "latch.ts"],
  continuation: "same-or-lowest",
  schedules: { maxLength: 200, maxSegment: 16, maxSegments: 24 },
  threadCount,
  threadName: sThreadName,
  prepare,
  observe,
  check: checkSleepExecution,
};

// ---------------------------------------------------------------------------------------------------------
// Names and reports.

/** Thread names for tables: `w0`, `w1`, `poster`, `poster2`, `joiner`, `finisher`. */
export function sThreadName(s: SleepScenario, t: number): string {
  if (s.kind === "latch") return t === 0 ? "joiner" : "finisher";
  if (t < s.workers) return `w${t}`;
  const k = t - s.workers;
  return s.posts.length === 1 ? "poster" : `poster${k + 1}`;
}

/** A short rendering: `sleep w2 | posts 1,1 | stop` or `latch`. */
export function describeSleepScenario(s: SleepScenario): string {
  if (s.kind === "latch") return "latch: joiner vs finisher";
  return `sleep: ${s.workers} worker${s.workers === 1 ? "" : "s"} | posts ${s.posts.join(",")}${
    s.stop ? " | stop" : ""
  }`;
}

/** Names a word of the harness buffer: `counters`, `state[1]`, `counted[0]`, `avail`, `stop`, `latch`. */
export function sWordName(addr: number): string {
  const sleepBase = SLEEP_REGION_BYTES >> 2;
  const workBase = WORK_BYTES >> 2;
  if (addr >= workBase && addr < workBase + WORK_WORDS) {
    const w = addr - workBase;
    return w === Work.AVAIL ? "avail" : w === Work.STOP ? "stop" : w === Work.LATCH ? "latch" : `work.w${w}`;
  }
  if (addr >= sleepBase && addr < workBase) {
    const w = addr - sleepBase;
    if (w === SleepWords.counters) return "counters";
    for (let i = 0; i < SLEEP_THREADS; i++) {
      if (w === SleepWords.state(i)) return `state[${i}]`;
      if (w === SleepWords.counted(i)) return `counted[${i}]`;
    }
    return `sleep.w${w}`;
  }
  return `w${addr}`;
}

/** The counters word as `jec J / sleeping S`. */
function counters(c: number): string {
  return `jec ${(c >>> 10) & 0x1fffff}/${c & 0x3ff}`;
}

/** One step as text: `load avail → 1`, `cas counters …`, `wait state[0]=1 → blocked`, `notify state[0] → woke w0`. */
export function describeSAccess(s: SleepScenario, a: SAccess): string {
  const w = sWordName(a.addr);
  const isCounters = w === "counters";
  const v = (x: number) => (isCounters ? `(${counters(x)})` : String(x));
  const tag = a.action ? `${a.action}: ` : "";
  if (a.fn === -1) return `${tag}wait ${w} times out`;
  const name = FN_NAMES[a.fn] ?? `fn${a.fn}`;
  if (name === "load") return `${tag}load ${w} → ${v(a.result)}`;
  if (name === "store") return `${tag}store ${w} ← ${v(a.arg1)}`;
  if (name === "cas") {
    return `${tag}cas ${w} ${v(a.arg1)}→${v(a.arg2)} ${a.result === a.arg1 ? "ok" : `FAIL (${v(a.result)})`}`;
  }
  if (name === "wait") {
    return `${tag}wait ${w}=${a.arg1}${a.arg2 ? " (timed)" : ""} → ${a.blocked ? "BLOCKS" : "not-equal"}`;
  }
  if (name === "notify") {
    const woke = (a.woke ?? []).map((t) => sThreadName(s, t));
    return `${tag}notify ${w} → ${woke.length === 0 ? "nobody" : `wakes ${woke.join(", ")}`}`;
  }
  if (name === "add" || name === "sub") return `${tag}${name} ${w} ${a.arg1} (was ${v(a.result)})`;
  return `${tag}${name} ${w} ${a.arg1} → ${a.result}`;
}

/** The interleaving as a fixed-width table: a column per thread, a row per step. */
export function formatSleepTable(s: SleepScenario, exec: SExecution): string {
  const n = threadCount(s);
  const cols = Array.from({ length: n }, (_, t) => sThreadName(s, t));
  const out = stepTable(cols, exec.accesses, (a) => describeSAccess(s, a));
  const end = exec.states.map((st, t) => {
    const b = exec.blocked.find((x) => x.thread === t);
    const what = b ? `blocked on ${sWordName(b.addr)}=${b.expected}${b.timed ? " (timed)" : ""}` : stateName(st);
    return `${sThreadName(s, t)} ${what}`;
  });
  out.push(
    `end: ${end.join("; ")}; ${counters(exec.counters)}; state words ${JSON.stringify(exec.stateWords)}; ` +
      (s.kind === "latch" ? `latch ${exec.latch}` : `avail ${exec.avail}; stop ${exec.stop}`),
  );
  return out.join("\n");
}

const stateName = gateStateName;

// ---------------------------------------------------------------------------------------------------------
// Oracles.

/**
 * Every oracle, on the end state of a run (when no thread can take a step without a timeout):
 * - `no-exception`: no thread threw, the step bound was not hit.
 * - `no-lost-wakeup`: work is never visible while every worker is blocked in a wait with no wake pending.
 * - `woken-means-woken` (no stranded waiter): no thread is blocked on a word that no longer holds the value
 *   it waited on — its waker changed the word (a poster's SLEEPING→AWAKE, a finisher's latch store) and no
 *   notify followed; only a timeout would end that wait. Covers "every sleeper newWork targeted is woken".
 * - `stop-reaches-every-worker`: after the stop word and wakeAll, every worker has left its loop.
 * - `conservation`: items taken + items still visible = items posted; never negative.
 * - `sleep-words`: the sleeping count equals the workers blocked in `sleep`; every blocked worker's word is
 *   SLEEPING and it is marked counted; every other worker's word is AWAKE and not counted.
 * - `joiner-returns`: the finisher set the latch, and the joiner is not left waiting: it returned.
 */
export function checkSleepExecution(s: SleepScenario, exec: SExecution): SViolation[] {
  const v: SViolation[] = [];
  const name = (t: number) => sThreadName(s, t);
  for (const f of exec.failures) v.push({ oracle: "no-exception", detail: f });
  if (exec.aborted) v.push({ oracle: "no-exception", detail: `step bound hit after ${exec.steps} steps` });
  for (const b of exec.blocked) {
    // What the word holds now (the controller's end-state snapshot).
    const now = wordValue(exec, b.addr);
    if (now !== undefined && now !== b.expected) {
      v.push({
        oracle: "woken-means-woken",
        detail:
          `${name(b.thread)} is blocked on ${sWordName(b.addr)} waiting while it is ${b.expected}, but it is ${now}: ` +
          `its waker changed the word and no notify followed`,
      });
    }
  }
  if (s.kind === "latch") {
    if (exec.latch !== 1) {
      v.push({ oracle: "joiner-returns", detail: `the finisher ended with the latch ${exec.latch}` });
    } else if (exec.states[0] !== State.DONE) {
      v.push({
        oracle: "joiner-returns",
        detail: `the latch is set, but the joiner is ${
          exec.blocked.some((b) => b.thread === 0)
            ? "blocked in its wait (only its timeout would end it)"
            : stateName(exec.states[0])
        }`,
      });
    }
    return v;
  }
  const posted = s.posts.reduce((a, b) => a + b, 0);
  const taken = exec.taken.slice(0, s.workers).reduce((a, b) => a + b, 0);
  if (exec.avail < 0 || taken + exec.avail !== posted) {
    v.push({ oracle: "conservation", detail: `posted ${posted}, taken ${taken}, still visible ${exec.avail}` });
  }
  const sleepers = Array.from({ length: s.workers }, (_, t) => t).filter((t) =>
    exec.blocked.some((b) => b.thread === t && b.addr === (SLEEP_REGION_BYTES >> 2) + SleepWords.state(t))
  );
  if (!s.stop && exec.avail > 0 && sleepers.length === s.workers) {
    v.push({
      oracle: "no-lost-wakeup",
      detail: `${exec.avail} item${exec.avail === 1 ? "" : "s"} visible while every worker sleeps (${
        sleepers.map(name).join(", ")
      }) and no wake is pending`,
    });
  }
  if (s.stop) {
    const left = Array.from({ length: s.workers }, (_, t) => t).filter((t) => exec.states[t] !== State.DONE);
    if (left.length > 0) {
      v.push({
        oracle: "stop-reaches-every-worker",
        detail: `after stop and wakeAll, ${left.map((t) => `${name(t)} is ${stateName(exec.states[t])}`).join(", ")}`,
      });
    }
  }
  if (exec.failures.length === 0 && !exec.aborted) {
    const counted = exec.counters & 0x3ff;
    const problems: string[] = [];
    if (counted !== sleepers.length) problems.push(`sleeping count ${counted}, workers asleep ${sleepers.length}`);
    for (let t = 0; t < s.workers; t++) {
      const asleep = sleepers.includes(t);
      if (asleep && exec.countedWords[t] !== 1) problems.push(`${name(t)} sleeps uncounted`);
      if (!asleep && (exec.stateWords[t] !== 0 || exec.countedWords[t] !== 0)) {
        problems.push(`${name(t)} is awake with state ${exec.stateWords[t]}, counted ${exec.countedWords[t]}`);
      }
    }
    if (problems.length > 0) v.push({ oracle: "sleep-words", detail: problems.join("; ") });
  }
  return v;
}

function wordValue(exec: SExecution, addr: number): number | undefined {
  const name = sWordName(addr);
  if (name === "latch") return exec.latch;
  const m = /^state\[(\d+)\]$/.exec(name);
  if (m) return exec.stateWords[Number(m[1])];
  return undefined;
}

// ---------------------------------------------------------------------------------------------------------
// Scenarios.

/** Scenarios for the random mode: 1–3 workers, 1–2 posters of 1–2 items (at most 4 threads), maybe a stop; or the latch. */
export function sleepScenarioArbitrary(): fc.Arbitrary<SleepScenario> {
  const sleep = fc.record({
    workers: fc.integer({ min: 1, max: 3 }),
    posts: fc.array(fc.integer({ min: 1, max: 2 }), { minLength: 1, maxLength: 2 }),
    stop: fc.boolean(),
  }).map(({ workers, posts, stop }): SleepScenario => ({
    kind: "sleep",
    workers,
    posts: posts.slice(0, 4 - workers),
    stop,
  }));
  return fc.oneof({ arbitrary: sleep, weight: 5 }, {
    arbitrary: fc.constant<SleepScenario>({ kind: "latch" }),
    weight: 1,
  });
}

/** Small scenarios explored with every schedule of at most 2 preemptions, smallest first, named after the race. */
export const SLEEP_SCENARIOS: readonly { name: string; scenario: SleepScenario }[] = [
  { name: "latch_set_vs_wait", scenario: { kind: "latch" } },
  { name: "post_vs_sleepy_worker", scenario: { kind: "sleep", workers: 1, posts: [1], stop: false } },
  { name: "stop_vs_sleepy_worker", scenario: { kind: "sleep", workers: 1, posts: [0], stop: true } },
  { name: "post_then_stop", scenario: { kind: "sleep", workers: 1, posts: [1], stop: true } },
  { name: "two_posters_one_sleeper", scenario: { kind: "sleep", workers: 1, posts: [1, 1], stop: false } },
  { name: "stop_vs_two_sleepy_workers", scenario: { kind: "sleep", workers: 2, posts: [0], stop: true } },
  { name: "post_vs_two_sleepers", scenario: { kind: "sleep", workers: 2, posts: [1], stop: false } },
];

/** Larger scenarios, explored too in the long mode (`FILCH_LINCHECK_SLEEP_LONG=1`): about 2 minutes more. */
export const SLEEP_SCENARIOS_LONG: readonly { name: string; scenario: SleepScenario }[] = [
  { name: "two_posts_two_sleepers", scenario: { kind: "sleep", workers: 2, posts: [2], stop: false } },
  { name: "post_then_stop_two_workers", scenario: { kind: "sleep", workers: 2, posts: [1], stop: true } },
  { name: "post_vs_three_sleepers", scenario: { kind: "sleep", workers: 3, posts: [1], stop: false } },
];
