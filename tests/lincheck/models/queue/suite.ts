/**
 * The queue suite's runners, shared by `tests/lincheck/queue_test.ts` and `tests/lincheck/replay_queue.ts`: the harness
 * with `lib/protocol/injector.ts` and its mutants loaded, the random mode's property, the mutant hunt, the
 * minimizer and the failure report, and the small named scenarios of the systematic mode.
 *
 * Environment (read by the tests only; see tests/lincheck/README.md): `FILCH_LINCHECK_SEED` (shared with
 * the deque suite), `FILCH_LINCHECK_QUEUE_RUNS` (random-mode interleavings, default
 * {@link DEFAULT_QUEUE_RUNS}), `FILCH_LINCHECK_QUEUE_PATH` (with the seed: replay one fast-check run),
 * `FILCH_LINCHECK_QUEUE_MUTANT` (run the random mode on that mutant), `FILCH_LINCHECK_QUEUE_PREEMPTIONS`
 * (the systematic mode's bound, default 2), `FILCH_LINCHECK_OUT` (where traces go).
 *
 * @module
 */

import fc from "fast-check";
import { type QueueHarness as Harness, startQueueModel } from "./model.ts";
import { minimizeRuns } from "../deque/minimize.ts";
import {
  formatQueueTable,
  NEAR_WRAP,
  type QueueExecution,
  type QueueScenario,
  queueScenarioArbitrary,
  queueTraceNdjson,
  shrinkQueueScenario,
} from "./scenario.ts";
import { checkQueueExecution, notLinearizableAnswers, type QueueViolation } from "./oracles.ts";
import { specActions, traceDir } from "../deque/report.ts";
import { scheduleArbitrary, scheduleChooser } from "../deque/scenario.ts";
import { config, env } from "../../kernel/env.ts";
import { QUEUE_MUTANTS } from "../../../mutants/mutants.ts";
import { writeFileSync } from "node:fs";
import { join } from "node:path";

/** Random-mode interleavings in CI. */
export const DEFAULT_QUEUE_RUNS = 20_000;

function intEnv(name: string, fallback: number): number {
  const raw = env(name);
  if (raw === undefined || raw === "") return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n)) throw new RangeError(`Cannot read ${name} as it must be an integer: received ${raw}`);
  return n;
}

/** The queue suite's configuration in force. */
export function queueConfig(): {
  seed: number;
  runs: number;
  path: string | undefined;
  mutant: string | undefined;
  preemptions: number;
} {
  return {
    seed: config().seed,
    runs: intEnv("FILCH_LINCHECK_QUEUE_RUNS", DEFAULT_QUEUE_RUNS),
    path: env("FILCH_LINCHECK_QUEUE_PATH") || undefined,
    mutant: env("FILCH_LINCHECK_QUEUE_MUTANT") || undefined,
    preemptions: intEnv("FILCH_LINCHECK_QUEUE_PREEMPTIONS", 2),
  };
}

/** The variant number of a queue mutant (0: the shipped queue). */
export function queueVariantOf(mutant: string | undefined): number {
  if (mutant === undefined) return 0;
  const i = QUEUE_MUTANTS.findIndex((m) => m.name === mutant);
  if (i < 0) {
    throw new RangeError(
      `Cannot pick queue mutant as it must be one of ${QUEUE_MUTANTS.map((m) => m.name).join(", ")}: ` +
        `received ${mutant}`,
    );
  }
  return i + 1;
}

/** Starts a harness with `lib/protocol/injector.ts` as variant 0 and every queue mutant after it. */
export function startQueueHarness(wanted: boolean): Promise<Harness> {
  // In the mutation run the shipped module itself carries the mutant: the kernel's loader loads no others.
  return startQueueModel(wanted);
}

/** What a random-mode run saw. */
export interface QueueStats {
  runs: number;
  steps: number;
  scenarios: Set<string>;
  /** Runs with a pop that returned EMPTY, with a push that returned false, that stalled on a full queue. */
  empties: number;
  fulls: number;
  stalls: number;
  /** Answers that are not linearizable but justified (see `notLinearizableAnswers`). */
  emptyWhileQueued: number;
  fullWhileRoom: number;
  /** The first failing run's violations (before shrinking). */
  firstFailure?: { run: number; violations: QueueViolation[] };
}

/** Fresh counters. */
export function queueStats(): QueueStats {
  return {
    runs: 0,
    steps: 0,
    scenarios: new Set(),
    empties: 0,
    fulls: 0,
    stalls: 0,
    emptyWhileQueued: 0,
    fullWhileRoom: 0,
  };
}

/** A run that broke an oracle. */
export class QueueLincheckFailure extends Error {
  readonly violations: QueueViolation[];
  constructor(violations: QueueViolation[]) {
    super(violations.map((v) => `[${v.oracle}] ${v.detail}`).join("\n"));
    this.name = "QueueLincheckFailure";
    this.violations = violations;
  }
}

/** The random-mode property: one generated scenario under one generated schedule, every oracle. */
export function queueProperty(harness: Harness, variant: number, stats: QueueStats) {
  return fc.property(queueScenarioArbitrary(), scheduleArbitrary(), (scenario, schedule) => {
    const exec = harness.run(scenario, scheduleChooser(schedule), variant);
    stats.runs++;
    stats.steps += exec.steps;
    stats.scenarios.add(JSON.stringify(scenario));
    if (exec.history.some((h) => h.thread >= 0 && h.kind === "pop" && h.ret === -1)) stats.empties++;
    if (exec.history.some((h) => h.thread >= 0 && h.kind === "push" && h.ret === 0)) stats.fulls++;
    if (exec.stalled) stats.stalls++;
    const violations = checkQueueExecution(exec, scenario);
    if (violations.length === 0) {
      const odd = notLinearizableAnswers(exec, scenario);
      stats.emptyWhileQueued += odd.empty;
      stats.fullWhileRoom += odd.full;
      return;
    }
    if (stats.firstFailure === undefined) stats.firstFailure = { run: stats.runs, violations };
    throw new QueueLincheckFailure(violations);
  });
}

/** The human report of a run, and its trace written as ndjson. */
export function reportQueueRun(
  harness: Harness,
  variant: number,
  scenario: QueueScenario,
  schedule: number[],
  name: string,
  meta: Record<string, unknown>,
): { text: string; exec: QueueExecution; violations: QueueViolation[]; tracePath: string } {
  // Trace mode: each access also carries its source line, mapped to the TLA+ action named there.
  const exec = harness.run(scenario, scheduleChooser(schedule), variant, undefined, true);
  const violations = checkQueueExecution(exec, scenario);
  const actions = specActions(harness.variants[variant][0]);
  const tracePath = join(traceDir(env), `${name}.ndjson`);
  writeFileSync(tracePath, queueTraceNdjson(scenario, exec, { ...meta, schedule, violations }, actions));
  const text = [
    `scenario (JSON): ${JSON.stringify(scenario)}`,
    `schedule (JSON): ${JSON.stringify(schedule)}`,
    "violations:",
    ...violations.map((v) => `  [${v.oracle}] ${v.detail}`),
    "",
    formatQueueTable(scenario, exec),
  ].join("\n");
  return { text, exec, violations, tracePath };
}

/** A minimized queue counterexample. */
export interface QueueMinimal {
  scenario: QueueScenario;
  schedule: number[];
  preemptions: number;
  runs: number;
  text: string;
  tracePath: string;
  oracles: string[];
}

/** Minimizes a failing scenario (fewest preemptions, then fewest threads, ops, prefill) and reports it. */
export function minimalQueueCounterexample(
  harness: Harness,
  variant: number,
  scenario: QueueScenario,
  name: string,
  meta: Record<string, unknown>,
): QueueMinimal | null {
  const m = minimizeRuns(
    (s: QueueScenario, choose) => harness.run(s, choose, variant),
    shrinkQueueScenario,
    scenario,
    (exec, s) => checkQueueExecution(exec, s).length > 0,
  );
  if (m === null) return null;
  const rep = reportQueueRun(harness, variant, m.scenario, m.schedule, `${name}-minimal`, {
    ...meta,
    preemptions: m.preemptions,
  });
  return { ...m, text: rep.text, tracePath: rep.tracePath, oracles: [...new Set(rep.violations.map((v) => v.oracle))] };
}

/** The outcome of hunting one queue mutant with the random mode. */
export interface QueueHunt {
  name: string;
  caught: boolean;
  /** Interleavings run until the first failure (that run included). */
  interleavings: number;
  /** The oracle that failed first on the first failing run. */
  oracle: string;
  shrinks: number;
  seed: number;
  minimal?: QueueMinimal | null;
}

/** Runs the random mode against queue mutant `variant` until it fails (at most `maxRuns`). */
export function huntQueueMutant(
  harness: Harness,
  variant: number,
  name: string,
  seed: number,
  maxRuns: number,
  minimal: boolean,
): QueueHunt {
  const stats = queueStats();
  const result = fc.check(queueProperty(harness, variant, stats), { seed, numRuns: maxRuns });
  if (!result.failed || result.counterexample === null) {
    return { name, caught: false, interleavings: stats.runs, oracle: "-", shrinks: 0, seed };
  }
  return {
    name,
    caught: true,
    interleavings: result.numRuns,
    oracle: stats.firstFailure?.violations[0].oracle ?? "?",
    shrinks: result.numShrinks,
    seed,
    minimal: minimal
      ? minimalQueueCounterexample(harness, variant, result.counterexample[0], `queue-mutant-${name}`, {
        mutant: name,
      })
      : undefined,
  };
}

/** Small queue scenarios explored exhaustively (≤ 2 preemptions), named after their race. */
export const SMALL_QUEUE_SCENARIOS: readonly { name: string; scenario: QueueScenario }[] = [
  {
    // Two producers race for one position while a consumer polls: a lost compare-exchange on tail, and
    // EMPTY while a producer sits between its claim and its publish.
    name: "two_pushes_vs_pop",
    scenario: { capacity: 2, initialPos: 0, prefill: 0, threads: [["push", "pop"], ["push"], ["pop", "pop"]] },
  },
  {
    // Two consumers race for the same head; the loser must read head again, not answer EMPTY.
    name: "two_pops_race_for_head",
    scenario: { capacity: 2, initialPos: 0, prefill: 2, threads: [["pop"], ["pop", "push"]] },
  },
  {
    // A full queue: push must fail only while capacity positions are taken, counting a slot a consumer
    // has claimed and not yet released; the second lap reuses each slot.
    name: "full_push_vs_release",
    scenario: { capacity: 2, initialPos: 0, prefill: 2, threads: [["push", "push"], ["pop", "pop"]] },
  },
  {
    // The same across the int32 wrap, with a patient producer waiting for a consumer's release.
    name: "wrap_patient_push",
    scenario: { capacity: 2, initialPos: NEAR_WRAP, prefill: 2, threads: [["pushPatiently"], ["pop", "pop"]] },
  },
  {
    // Capacity 4, three threads: per-producer FIFO across two producers and two consumers.
    name: "fifo_two_producers_cap4",
    scenario: {
      capacity: 4,
      initialPos: NEAR_WRAP,
      prefill: 1,
      threads: [["push", "push"], ["pop", "pop"], ["push", "pop"]],
    },
  },
];
