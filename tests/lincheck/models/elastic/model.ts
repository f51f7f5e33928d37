/**
 * The elastic model (issue 49): the shipped retirement and growth code of an elastic pool under controlled
 * interleavings — `lib/protocol/sleep.ts`'s `Sleep.idle` and `sleepOrRetire` (RetireReserve, RetireUncount,
 * RetireCasSlot, then the mail's load), `newWork` and `wakeAll`; `lib/protocol/slots.ts`'s `claimMail` (a
 * directed post: the mail counted, then the slot read), `retireStoreAbsent`, `growStoreStarting`,
 * `growReserve`, `bootStoreAwake` — with `spec/Elastic.tla`'s properties as oracles. The programs are
 * `thread.ts`, the layout `layout.ts`. No variants: the mutants (tests/mutants/mutants.ts,
 * ELASTIC_LINCHECK_MUTANTS) are patches of the shipped files, run by `tests/mutants/run.ts --only
 * elastic_lincheck` under this suite.
 *
 * The oracles, in the order a failure is attributed:
 * - `no-exception`: no thread threw; the step bound was not reached;
 * - `within-bounds` (`WithinBounds`, after every step): every value the size word takes is in [min, max];
 * - `conservation`: every item and message posted is taken, still in the injector, or posted to a worker
 *   and counted in its mail word (at the end, each mail word counts exactly the messages posted there);
 * - `no-mail-in-retired-slot` (the mail half of `NoStrandedTask`): at the end no RETIRING or ABSENT slot's
 *   mail word counts a message (a post to a worker that left);
 * - `no-lost-wake`: work left in the injector (or a live worker's mail) while every live worker sleeps;
 * - `no-stranded-task` (`NoStrandedTask`): work left in the injector with no live worker, and no post's
 *   `newWork` found nobody to wake (which is what tells the growth to start one);
 * - `counters-consistent` (`CountersConsistent`, at rest): the sleeping count is the number of SLEEPING slot
 *   words and of workers blocked in their sleep, each one's counted word says so, and the size word is the
 *   number of slots that hold or are starting a worker (AWAKE, SLEEPING, STARTING).
 *
 * @module
 */

import fc from "fast-check";
import { ControlWords, SleepWords, StatusWords } from "../../../../lib/protocol/layout.ts";
import { ABSENT, AWAKE, RETIRING, SLEEPING, Slots, STARTING } from "../../../../lib/protocol/slots.ts";
import { Fn, FN_NAMES } from "../../../../spec/trace/facade_codes.ts";
import type { Access, Execution, Model, RunEnd, RunSetup, Violation } from "../../kernel/harness.ts";
import { gateStateName, stepTable } from "../../kernel/run.ts";
import { blockBase } from "../../kernel/words.ts";
import {
  EBlock,
  EBUFFER_BYTES,
  ECONTROL_BYTES,
  ECONTROL_WORDS,
  EGlobal,
  ELASTIC_THREADS,
  ERole,
  ESLEEP_BYTES,
  ESTATUS_BYTES,
  EWork,
  EWORK_BYTES,
  EWORK_WORDS,
} from "./layout.ts";

/** One run's work. */
export interface ElasticScenario {
  /** Workers running on slots 0..workers-1 at the start (the size word); the other slots ABSENT. */
  workers: number;
  /** Slots: the pool's maximum. */
  max: number;
  /** The pool's minimum. */
  min: number;
  /** One poster per entry: the items it pushes to the injector. */
  posts: number[];
  /** Directed messages the owner posts (0: no directed poster). */
  direct: number;
  /** The owner grows slot `max - 1`, and a thread starts there if it reserved. */
  grow: boolean;
}

/** Steps per run before it is cut. */
export const EMAX_STEPS = 800;

/** What a run leaves that the oracles judge. */
export interface ElasticEnd {
  size: number;
  counters: number;
  stateWords: number[];
  countedWords: number[];
  mail: number[];
  /** Messages posted to each slot and not yet taken (the test's MSG words). */
  msgs: number[];
  avail: number;
  /** Per thread (the test's bookkeeping). */
  taken: number[];
  retired: number[];
  nobody: number[];
  started: number[];
}

/** Everything one run produced. */
export type ElasticExecution = Execution<ElasticEnd>;

/** What thread `t` runs: its role and its slot (workers, grown) or count. */
export function roles(s: ElasticScenario): { role: number; p: number }[] {
  const out: { role: number; p: number }[] = [];
  for (let i = 0; i < s.workers; i++) out.push({ role: ERole.WORKER, p: i });
  for (const n of s.posts) out.push({ role: ERole.POSTER, p: n });
  if (s.direct > 0) out.push({ role: ERole.DIRECTOR, p: s.direct });
  if (s.grow) {
    out.push({ role: ERole.GROWER, p: s.max - 1 });
    out.push({ role: ERole.GROWN, p: s.max - 1 });
  }
  return out;
}

/** The number of simulated threads a scenario uses. */
export function elasticThreadCount(s: ElasticScenario): number {
  return roles(s).length;
}

/** Thread names: `w0`, `w1`, `poster`, `owner` (directed), `grower`, `grown1`. */
export function elasticThreadName(s: ElasticScenario, t: number): string {
  const { role, p } = roles(s)[t];
  if (role === ERole.WORKER) return `w${p}`;
  if (role === ERole.POSTER) return s.posts.length === 1 ? "poster" : `poster${t - s.workers + 1}`;
  if (role === ERole.DIRECTOR) return "director";
  if (role === ERole.GROWER) return "grower";
  return `grown${p}`;
}

function sleepView(buffer: SharedArrayBuffer, max: number): Int32Array {
  return new Int32Array(buffer, ESLEEP_BYTES, SleepWords.state(max));
}

function prepare({ buffer, ctl, assign }: RunSetup, s: ElasticScenario): void {
  // The controller's binding of `mem` is the plain one: the set-up is no scheduled step.
  new Uint8Array(buffer, ESLEEP_BYTES, EBUFFER_BYTES - ESLEEP_BYTES).fill(0);
  const slots = new Slots(
    new Int32Array(buffer, ECONTROL_BYTES, ECONTROL_WORDS),
    sleepView(buffer, s.max),
    new Int32Array(buffer, ESTATUS_BYTES, s.max * StatusWords.count),
    s.max,
  );
  slots.initElastic(s.workers, s.max); // the slots from `workers` on ABSENT, the size `workers`
  Atomics.store(ctl, EGlobal.SLOTS, s.max);
  Atomics.store(ctl, EGlobal.MIN, s.min);
  roles(s).forEach(({ role, p }, t) => assign(t, role, p));
}

function observe({ buffer, ctl, threads: n }: RunEnd, s: ElasticScenario): ElasticEnd {
  const sleep = sleepView(buffer, s.max);
  const status = new Int32Array(buffer, ESTATUS_BYTES, s.max * StatusWords.count);
  const work = new Int32Array(buffer, EWORK_BYTES, EWORK_WORDS);
  const slotsOf = (f: (i: number) => number) => Array.from({ length: s.max }, (_, i) => f(i));
  const perThread = (w: number) => Array.from({ length: n }, (_, t) => Atomics.load(ctl, blockBase(t) + w));
  return {
    size: Atomics.load(new Int32Array(buffer, ECONTROL_BYTES, ECONTROL_WORDS), ControlWords.poolSize),
    counters: Atomics.load(sleep, SleepWords.counters),
    stateWords: slotsOf((i) => Atomics.load(sleep, SleepWords.state(i))),
    countedWords: slotsOf((i) => Atomics.load(sleep, SleepWords.counted(i))),
    mail: slotsOf((i) => Atomics.load(status, i * StatusWords.count + StatusWords.mail)),
    msgs: slotsOf((i) => Atomics.load(work, EWork.MSG + i)),
    avail: Atomics.load(work, EWork.AVAIL),
    taken: perThread(EBlock.TAKEN),
    retired: perThread(EBlock.RETIRED),
    nobody: perThread(EBlock.NOBODY),
    started: perThread(EBlock.STARTED),
  };
}

/** The size word's index in the harness buffer. */
const SIZE_ADDR = (ECONTROL_BYTES >> 2) + ControlWords.poolSize;

/** The value an access left in its word (undefined for a read or a failed compare-exchange). */
function written(a: Access): number | undefined {
  if (a.fn === Fn.store || a.fn === Fn.exchange) return a.arg1;
  if (a.fn === Fn.compareExchange) return a.result === a.arg1 ? a.arg2 : undefined;
  if (a.fn === Fn.add) return (a.result + a.arg1) | 0;
  if (a.fn === Fn.sub) return (a.result - a.arg1) | 0;
  return undefined;
}

/** The oracles (see the module doc), in the order a failure is attributed. */
export function checkElasticExecution(s: ElasticScenario, exec: ElasticExecution): Violation[] {
  const v: Violation[] = [];
  const name = (t: number) => elasticThreadName(s, t);
  for (const f of exec.failures) v.push({ oracle: "no-exception", detail: f });
  if (exec.aborted) v.push({ oracle: "no-exception", detail: `step bound ${EMAX_STEPS} reached` });
  for (const a of exec.accesses) {
    if (a.addr !== SIZE_ADDR) continue;
    const size = written(a);
    if (size !== undefined && (size < s.min || size > s.max)) {
      v.push({
        oracle: "within-bounds",
        detail: `step ${a.step}: ${name(a.thread)} made the size ${size}, outside [${s.min}, ${s.max}]`,
      });
      break;
    }
  }
  if (v.length > 0) return v;
  const posted = s.posts.reduce((a, b) => a + b, 0) + s.direct;
  const taken = exec.taken.reduce((a, b) => a + b, 0);
  const mailed = exec.msgs.reduce((a, b) => a + b, 0);
  const mailCounts = exec.mail.every((m, i) => m === exec.msgs[i]);
  if (exec.avail < 0 || exec.msgs.some((m) => m < 0) || taken + exec.avail + mailed !== posted || !mailCounts) {
    v.push({
      oracle: "conservation",
      detail:
        `posted ${posted}, taken ${taken}, in the injector ${exec.avail}, messages ${JSON.stringify(exec.msgs)}, ` +
        `mail words ${JSON.stringify(exec.mail)}`,
    });
  }
  for (let i = 0; i < s.max; i++) {
    const state = exec.stateWords[i] & 7;
    if ((state === RETIRING || state === ABSENT) && (exec.mail[i] !== 0 || exec.msgs[i] !== 0)) {
      v.push({
        oracle: "no-mail-in-retired-slot",
        detail: `slot ${i} is ${slotStateName(state)}: ${exec.msgs[i]} message(s) posted to it, its mail word ${
          exec.mail[i]
        }`,
      });
    }
  }
  // The live workers: the threads running a worker loop on their slot (not retired; a grown one started).
  const rs = roles(s);
  const live = rs.map((r, t) => ({ ...r, t })).filter(({ role, t }) =>
    (role === ERole.WORKER ||
      (role === ERole.GROWN && exec.accesses.some((a) => a.thread === t && a.fn === Fn.store))) &&
    exec.retired[t] === 0
  );
  const sleepBase = ESLEEP_BYTES >> 2;
  const asleep = live.filter(({ t, p }) =>
    exec.blocked.some((b) => b.thread === t && b.addr === sleepBase + SleepWords.state(p))
  );
  const liveMail = live.reduce((sum, { p }) => sum + exec.msgs[p], 0);
  if (live.length > 0 && asleep.length === live.length && exec.avail + liveMail > 0) {
    v.push({
      oracle: "no-lost-wake",
      detail: `${exec.avail} item(s) in the injector, ${liveMail} in mail, while every live worker sleeps (${
        asleep.map(({ t }) => name(t)).join(", ")
      })`,
    });
  }
  if (live.length === 0 && exec.avail > 0 && exec.nobody.every((n) => n === 0)) {
    v.push({
      oracle: "no-stranded-task",
      detail: `${exec.avail} item(s) in the injector, no live worker, and no newWork found nobody to wake`,
    });
  }
  if (exec.failures.length === 0 && !exec.aborted) {
    const problems: string[] = [];
    const counted = exec.counters & 0x3ff;
    const sleepingWords = exec.stateWords.filter((w) => (w & 7) === SLEEPING).length;
    if (counted !== sleepingWords || counted !== asleep.length) {
      problems.push(`sleeping count ${counted}, SLEEPING words ${sleepingWords}, workers asleep ${asleep.length}`);
    }
    for (let i = 0; i < s.max; i++) {
      const sleeping = (exec.stateWords[i] & 7) === SLEEPING ? 1 : 0;
      if (exec.countedWords[i] !== sleeping) {
        problems.push(`slot ${i}: counted ${exec.countedWords[i]}, SLEEPING ${sleeping}`);
      }
    }
    const kept = exec.stateWords.filter((w) => [AWAKE, SLEEPING, STARTING].includes(w & 7)).length;
    if (exec.size !== kept) problems.push(`size ${exec.size}, slots kept (AWAKE, SLEEPING, STARTING) ${kept}`);
    if (problems.length > 0) v.push({ oracle: "counters-consistent", detail: problems.join("; ") });
  }
  return v;
}

/** The elastic model (`Harness.start(ELASTIC)`): up to four threads over the shipped code (no variants). */
export const ELASTIC: Model<ElasticScenario, ElasticEnd> = {
  name: "elastic",
  thread: new URL("./thread.ts", import.meta.url),
  threads: ELASTIC_THREADS,
  bufferBytes: EBUFFER_BYTES,
  maxSteps: EMAX_STEPS,
  continuation: "same-or-lowest",
  schedules: { maxLength: 160, maxSegment: 16, maxSegments: 20 },
  threadCount: elasticThreadCount,
  threadName: elasticThreadName,
  prepare,
  observe,
  check: checkElasticExecution,
};

// ---------------------------------------------------------------------------------------------------------
// Scenarios.

/** The named scenarios of the systematic mode, each with its preemption bound, smallest first. */
export const ELASTIC_SCENARIOS: readonly { name: string; scenario: ElasticScenario; preemptions: number }[] = [
  // The last worker (min 0) retiring while a poster pushes and wakes.
  {
    name: "last_sleeper_retires_vs_post",
    scenario: { workers: 1, max: 1, min: 0, posts: [1], direct: 0, grow: false },
    preemptions: 2,
  },
  // The last worker (min 0) retiring while the owner posts it a message (claimMail, then wakeAll): the
  // post's two accesses between the retirement's compare-exchange and its mail read take three switches.
  {
    name: "last_sleeper_retires_vs_directed",
    scenario: { workers: 1, max: 1, min: 0, posts: [], direct: 1, grow: false },
    preemptions: 3,
  },
  // Two workers, min 1: both time out, one may retire.
  {
    name: "two_retire_min_one",
    scenario: { workers: 2, max: 2, min: 1, posts: [], direct: 0, grow: false },
    preemptions: 2,
  },
  // A retirement racing a directed post (claimMail, then wakeAll), another worker there (1 preemption: 640
  // schedules; 2 take 24,556, about 20 s).
  {
    name: "retire_vs_directed_post",
    scenario: { workers: 2, max: 2, min: 1, posts: [], direct: 1, grow: false },
    preemptions: 1,
  },
  // A sleeper retiring while a poster pushes work and wakes, another worker there (1 preemption; 2: 12,248).
  {
    name: "retire_vs_post",
    scenario: { workers: 2, max: 2, min: 1, posts: [1], direct: 0, grow: false },
    preemptions: 1,
  },
  // The owner grows slot 1 while worker 0 (at the minimum until then) times out and may retire.
  {
    name: "grow_vs_retire",
    scenario: { workers: 1, max: 2, min: 1, posts: [], direct: 0, grow: true },
    preemptions: 2,
  },
];

/** Random scenarios: 1–2 workers of 1–2 slots, min 0–2, posters, a directed post, a growth (at most 4 threads). */
export function elasticScenarioArbitrary(): fc.Arbitrary<ElasticScenario> {
  return fc.record({
    max: fc.integer({ min: 1, max: 2 }),
    workers: fc.integer({ min: 1, max: 2 }),
    min: fc.integer({ min: 0, max: 2 }),
    posts: fc.array(fc.integer({ min: 1, max: 2 }), { maxLength: 2 }),
    direct: fc.integer({ min: 0, max: 1 }),
    grow: fc.boolean(),
  }).map((r): ElasticScenario => {
    const workers = Math.min(r.workers, r.max);
    const min = Math.min(r.min, workers);
    const grow = r.grow && r.max > 1;
    let room = ELASTIC_THREADS - workers - (grow ? 2 : 0);
    const direct = r.direct > 0 && room > 0 ? 1 : 0;
    room -= direct;
    return { workers, max: r.max, min, posts: r.posts.slice(0, Math.max(0, room)), direct, grow };
  });
}

// ---------------------------------------------------------------------------------------------------------
// Reports.

const STATE_NAMES = ["AWAKE", "SLEEPING", "RETIRING", "ABSENT", "STARTING"];
function slotStateName(state: number): string {
  return STATE_NAMES[state] ?? `state ${state}`;
}

/** A word's name: `counters`, `slot[1]`, `counted[0]`, `mail[1]`, `size`, `growWanted`, `avail`, `start`. */
export function elasticWordName(addr: number): string {
  const sleepBase = ESLEEP_BYTES >> 2;
  const statusBase = ESTATUS_BYTES >> 2;
  const workBase = EWORK_BYTES >> 2;
  if (addr === SIZE_ADDR) return "size";
  if (addr === (ECONTROL_BYTES >> 2) + ControlWords.growWanted) return "growWanted";
  if (addr === workBase + EWork.AVAIL) return "avail";
  if (addr === workBase + EWork.START) return "start";
  if (addr >= workBase + EWork.MSG && addr < workBase + EWork.MSG + ELASTIC_THREADS) {
    return `msg[${addr - workBase - EWork.MSG}]`;
  }
  if (addr === sleepBase + SleepWords.counters) return "counters";
  for (let i = 0; i < ELASTIC_THREADS; i++) {
    if (addr === sleepBase + SleepWords.state(i)) return `slot[${i}]`;
    if (addr === sleepBase + SleepWords.counted(i)) return `counted[${i}]`;
    if (addr === statusBase + i * StatusWords.count + StatusWords.mail) return `mail[${i}]`;
  }
  return `w${addr}`;
}

/** One access, as the table shows it. */
export function describeEAccess(a: Access): string {
  const w = elasticWordName(a.addr);
  const v = (x: number) => (w === "counters" ? `(jec ${(x >>> 10) & 0x1fffff}/${x & 0x3ff})` : String(x));
  if (a.fn === -1) return `wait ${w} times out`;
  if (a.fn === Fn.load) return `load ${w} → ${v(a.result)}`;
  if (a.fn === Fn.store) return `store ${w} ← ${v(a.arg1)}`;
  if (a.fn === Fn.compareExchange) {
    return `cas ${w} ${v(a.arg1)}→${v(a.arg2)} ${a.result === a.arg1 ? "ok" : `FAIL (${v(a.result)})`}`;
  }
  if (a.fn === Fn.wait) return `wait ${w}=${a.arg1} → ${a.blocked ? "BLOCKS" : "not-equal"}`;
  if (a.fn === Fn.notify) return `notify ${w} (woke ${a.woke?.length ?? 0})`;
  return `${FN_NAMES[a.fn] ?? `fn${a.fn}`} ${w} ${a.arg1} (was ${v(a.result)})`;
}

/** The interleaving as a table, then the end state. */
export function formatElasticTable(s: ElasticScenario, exec: ElasticExecution): string {
  const n = elasticThreadCount(s);
  const out = stepTable(Array.from({ length: n }, (_, t) => elasticThreadName(s, t)), exec.accesses, describeEAccess);
  out.push(
    `end: ${
      exec.states.map((st, t) => `${elasticThreadName(s, t)} ${gateStateName(st)}`).join("; ")
    }; size ${exec.size}; ` +
      `slots ${exec.stateWords.map((w) => slotStateName(w & 7)).join(",")}; sleeping ${exec.counters & 0x3ff}; ` +
      `mail ${JSON.stringify(exec.mail)}; messages ${JSON.stringify(exec.msgs)}; avail ${exec.avail}; taken ${
        JSON.stringify(exec.taken)
      }; retired ${JSON.stringify(exec.retired)}${exec.aborted ? "; step bound" : ""}`,
  );
  return out.join("\n");
}

/** A scenario in one line. */
export function describeElasticScenario(s: ElasticScenario): string {
  return `${s.workers} worker(s) of ${s.max} slot(s), min ${s.min}` +
    (s.posts.length > 0 ? ` | posts ${s.posts.join(",")}` : "") +
    (s.direct > 0 ? ` | directed ${s.direct}` : "") + (s.grow ? ` | grow slot ${s.max - 1}` : "");
}
