/**
 * The suite's runners, shared by the `tests/lincheck_*_test.ts` files: configuration from the
 * environment (tests may read it; `lib/` never does), the random mode (fast-check generates scenarios and
 * schedules, shrinks failures), and the mutant hunt.
 *
 * Environment:
 * - `FILCH_LINCHECK_SEED`  the fast-check seed (default {@link DEFAULT_SEED}; always printed).
 * - `FILCH_LINCHECK_RUNS`  random-mode interleavings (default 40,000; the long run uses 100,000+).
 * - `FILCH_LINCHECK_PATH`  with a seed: replay one run (fast-check's counterexample path) and stop.
 * - `FILCH_LINCHECK_OUT`   where failing traces (ndjson) go (default `<tmp>/filch-lincheck`).
 * - `FILCH_LINCHECK_MUTANT`  run the random mode on this mutant instead of lib/protocol/deque.ts (to see a failure
 *   report, or to reproduce one).
 * - `FILCH_LINCHECK_STRESS_ROUNDS`  stress-mode rounds (default 3,000).
 *
 * @module
 */

import fc from "fast-check";
import { type DequeHarness as Harness, type Execution, startDequeHarness } from "./models/deque/model.ts";
import { advisory, checkExecution, type Violation } from "./oracles.ts";
import { minimize } from "./minimize.ts";
import { formatFailure, specActions, traceDir, writeTrace } from "./report.ts";
import { type Scenario, scenarioArbitrary, scheduleArbitrary, scheduleChooser } from "./scenario.ts";
import { MUTANTS } from "../mutants/mutants.ts";

/** The fixed CI seed. */
export const DEFAULT_SEED = 20261121;

/** Reads an environment variable on Deno, Bun or Node. */
export function env(name: string): string | undefined {
  const g = globalThis as unknown as {
    Deno?: { env: { get(n: string): string | undefined } };
    process?: { env: Record<string, string | undefined> };
  };
  if (g.Deno) return g.Deno.env.get(name);
  return g.process?.env[name];
}

/** An integer environment variable (at least `min`), or `fallback` when it is unset or empty. */
export function intEnv(name: string, fallback: number, min = -Infinity): number {
  const raw = env(name);
  if (raw === undefined || raw === "") return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) {
    throw new RangeError(
      `Cannot read ${name} as it must be an integer${min > -Infinity ? ` >= ${min}` : ""}: received ${raw}`,
    );
  }
  return n;
}

/**
 * The mutant the environment variable `name` picks for a random-mode run, and its variant number in a
 * harness that loads the shipped module (0) and then `mutants` in order; none set: the shipped module.
 */
export function mutantFromEnv(name: string, mutants: readonly { name: string }[]): {
  mutant: string | undefined;
  variant: number;
} {
  const mutant = env(name) || undefined;
  if (mutant === undefined) return { mutant, variant: 0 };
  const variant = 1 + mutants.findIndex((m) => m.name === mutant);
  if (variant === 0) {
    throw new RangeError(
      `Cannot pick mutant as it must be one of ${mutants.map((m) => m.name).join(", ")}: received ${mutant}`,
    );
  }
  return { mutant, variant };
}

/** Broken properties as one line: `[oracle] detail; [oracle] detail`. */
export function describeViolations(v: readonly { oracle: string; detail: string }[]): string {
  return v.map((x) => `[${x.oracle}] ${x.detail}`).join("; ");
}

/** The configuration in force. */
export function config(): {
  seed: number;
  runs: number;
  path: string | undefined;
  stressRounds: number;
  mutant: string | undefined;
} {
  return {
    seed: intEnv("FILCH_LINCHECK_SEED", DEFAULT_SEED),
    runs: intEnv("FILCH_LINCHECK_RUNS", 40_000),
    path: env("FILCH_LINCHECK_PATH") || undefined,
    stressRounds: intEnv("FILCH_LINCHECK_STRESS_ROUNDS", 3_000),
    mutant: env("FILCH_LINCHECK_MUTANT") || undefined,
  };
}

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
