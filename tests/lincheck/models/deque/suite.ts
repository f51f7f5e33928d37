/**
 * The deque suite's runners, shared by its test files (random, systematic, mutants, replay): the harness
 * with or without the mutants, the random mode (fast-check generates scenarios and schedules, shrinks
 * failures), the counterexample's report and minimization, and the mutant hunt. The environment they read
 * is `../../kernel/env.ts`'s.
 *
 * @module
 */

import fc from "fast-check";
import { type DequeHarness as Harness, type Execution, startDequeHarness } from "./model.ts";
import { advisory, checkExecution, type Violation } from "./oracles.ts";
import { minimize } from "./minimize.ts";
import { formatFailure, specActions, traceDir, writeTrace } from "./report.ts";
import { type Scenario, scenarioArbitrary, scheduleArbitrary, scheduleChooser } from "./scenario.ts";
import { MUTANTS } from "../../../mutants/mutants.ts";
import { env } from "../../kernel/env.ts";

/** The variant number of a mutant in a harness started with mutants (0: the shipped deque). */
export function variantOf(mutant: string | undefined): number {
  if (mutant === undefined) return 0;
  const i = MUTANTS.findIndex((m) => m.name === mutant);
  if (i < 0) {
    throw new RangeError(
      `Cannot pick mutant as it must be one of ${MUTANTS.map((m) => m.name).join(", ")}: received ${mutant}`,
    );
  }
  return i + 1;
}

/** Starts a harness with the shipped deque as variant 0 and every mutant after it, in MUTANTS order. */
export function startHarness(wanted: boolean): Promise<Harness> {
  // In the mutation run the shipped module itself carries the mutant: the kernel's loader loads no others.
  return startDequeHarness(wanted);
}

/** What a random-mode run saw. */
export interface RandomStats {
  runs: number;
  steps: number;
  scenarios: Set<string>;
  /** Advisory (see oracles.ts): runs linearizable only with stealHalf as separate steals. */
  notAtomicHalf: number;
  /** Advisory: runs where stealHalf took more than half. */
  overHalf: number;
  /** The first failing run's violations (before shrinking). */
  firstFailure?: { run: number; violations: Violation[] };
}

/** The random-mode property: one run of a generated scenario under a generated schedule, all oracles. */
export function randomProperty(harness: Harness, variant: number, stats: RandomStats) {
  return fc.property(scenarioArbitrary(), scheduleArbitrary(), (scenario, schedule) => {
    const exec = harness.run(scenario, scheduleChooser(schedule), variant);
    stats.runs++;
    stats.steps += exec.steps;
    stats.scenarios.add(JSON.stringify(scenario));
    const violations = checkExecution(exec, scenario);
    if (violations.length === 0) {
      const a = advisory(exec, scenario.capacity);
      if (a.notAtomicHalf) stats.notAtomicHalf++;
      if (a.overHalf) stats.overHalf++;
      return;
    }
    if (stats.firstFailure === undefined) stats.firstFailure = { run: stats.runs, violations };
    throw new LincheckFailure(violations);
  });
}

/** A run that broke an oracle. */
export class LincheckFailure extends Error {
  readonly violations: Violation[];
  constructor(violations: Violation[]) {
    super(violations.map((v) => `[${v.oracle}] ${v.detail}`).join("\n"));
    this.name = "LincheckFailure";
    this.violations = violations;
  }
}

/** Re-runs a counterexample, writes its trace, and returns the printable report. */
export function reportCounterexample(
  harness: Harness,
  variant: number,
  scenario: Scenario,
  schedule: number[],
  name: string,
  meta: Record<string, unknown>,
): { text: string; exec: Execution; violations: Violation[]; tracePath: string } {
  // Trace mode: each access also carries its source line, mapped to the TLA+ action named there.
  const exec = harness.run(scenario, scheduleChooser(schedule), variant, undefined, true);
  const violations = checkExecution(exec, scenario);
  const actions = specActions(harness.variants[variant][0]);
  const tracePath = writeTrace(traceDir(env), name, scenario, exec, { ...meta, schedule, violations }, actions);
  return { text: formatFailure(scenario, schedule, exec, violations), exec, violations, tracePath };
}

/** A minimized counterexample's report. */
export interface MinimalReport {
  scenario: Scenario;
  schedule: number[];
  preemptions: number;
  runs: number;
  text: string;
  tracePath: string;
}

/**
 * Minimizes a failing (scenario) with the systematic search (see minimize.ts) and reports the result:
 * the smallest scenario found with a schedule of the fewest preemptions. Null if none within 2.
 */
export function minimalCounterexample(
  harness: Harness,
  variant: number,
  scenario: Scenario,
  name: string,
  meta: Record<string, unknown>,
): MinimalReport | null {
  const m = minimize(harness, variant, scenario, (exec, s) => checkExecution(exec, s).length > 0);
  if (m === null) return null;
  const rep = reportCounterexample(harness, variant, m.scenario, m.schedule, `${name}-minimal`, {
    ...meta,
    preemptions: m.preemptions,
  });
  return { ...m, text: rep.text, tracePath: rep.tracePath };
}

/** The outcome of hunting one mutant with the random mode. */
export interface MutantHunt {
  name: string;
  caught: boolean;
  /** Interleavings run until the first failure (that run included). */
  interleavings: number;
  /** The oracle that failed first on the first failing run. */
  oracle: string;
  /** The oracle(s) that fail on the shrunk counterexample. */
  shrunkOracles: string[];
  shrinks: number;
  seed: number;
  path?: string;
  counterexample?: { scenario: Scenario; schedule: number[] };
  report?: string;
  tracePath?: string;
  /** The minimized counterexample (see {@link minimalCounterexample}), if asked for. */
  minimal?: MinimalReport | null;
}

/** Runs the random mode against mutant `variant` until it fails (at most `maxRuns`), then shrinks. */
export function huntMutant(
  harness: Harness,
  variant: number,
  name: string,
  seed: number,
  maxRuns: number,
  minimal = false,
): MutantHunt {
  const stats: RandomStats = { runs: 0, steps: 0, scenarios: new Set(), notAtomicHalf: 0, overHalf: 0 };
  const result = fc.check(randomProperty(harness, variant, stats), { seed, numRuns: maxRuns });
  if (!result.failed || result.counterexample === null) {
    return { name, caught: false, interleavings: stats.runs, oracle: "-", shrunkOracles: [], shrinks: 0, seed };
  }
  const [scenario, schedule] = result.counterexample;
  const rep = reportCounterexample(harness, variant, scenario, schedule, `mutant-${name}`, {
    mutant: name,
    seed: result.seed,
    path: result.counterexamplePath,
  });
  return {
    name,
    caught: true,
    interleavings: result.numRuns,
    oracle: stats.firstFailure?.violations[0].oracle ?? "?",
    shrunkOracles: [...new Set(rep.violations.map((v) => v.oracle))],
    shrinks: result.numShrinks,
    seed: result.seed,
    path: result.counterexamplePath ?? undefined,
    counterexample: { scenario, schedule },
    report: rep.text,
    tracePath: rep.tracePath,
    minimal: minimal
      ? minimalCounterexample(harness, variant, scenario, `mutant-${name}`, { mutant: name })
      : undefined,
  };
}
