/**
 * The systematic mode's loop, once for every suite: explore each named scenario within its preemption
 * bound, collect each scenario's first failure (with its replay, as the suite formats it), and print the
 * table (a line a scenario, then the totals). Before, each lincheck test file wrote this loop out itself
 * (graph_test.ts copied producers_test.ts's); the suites now differ only in what they pass here.
 *
 * What it owns: the loop and the printed table's format. What it does not: the search (the caller's
 * `exploreOne`: the kernel's {@link explore} for a kernel model, the deque's and the queue's own
 * `exploreRuns`), the oracles, the replay's table.
 *
 * Called on the controller's thread only (the test's main thread); synchronous.
 *
 * @module
 */

import { runtime } from "../../_test.ts";
import { describeViolations } from "./env.ts";
import { explore, type Harness, type NamedScenario, replayChooser, type Violation } from "./harness.ts";

/** What one scenario's exploration found: its counts and, if a schedule broke an oracle, that failure's text. */
export interface ScenarioExploration {
  schedules: number;
  steps: number;
  /** The failure as the suite reports it (without the scenario's name), or undefined. */
  failure?: string;
}

/** How a suite's systematic mode runs and prints. */
export interface SystematicOptions<S> {
  /** The head of the printed table, e.g. "lincheck producers systematic". */
  label: string;
  scenarios: readonly NamedScenario<S>[];
  /** The bound of one scenario (its own plus the environment's extra, or the suite's one bound). */
  bound: (named: NamedScenario<S>) => number;
  /** Explores one scenario within `bound` preemptions. */
  exploreOne: (scenario: S, bound: number) => ScenarioExploration;
  describe: (scenario: S) => string;
  /** The width of the name column. */
  nameWidth: number;
  /**
   * Where the bound is printed: on each scenario's line ("<= n preemptions", bounds of their own), or once
   * in the totals ("(<= n preemptions)", one bound for all, this one).
   */
  header?: number;
  /** The word for the steps in the totals (default "steps"). */
  stepsWord?: string;
}

/** What {@link runSystematic} returns: one failure text a failing scenario ("name: …"), and the counts. */
export interface SystematicResult {
  failures: string[];
  schedules: number;
  steps: number;
}

/**
 * Explores every named scenario, prints the table, returns the failures (the caller asserts there are
 * none: `assertEquals(failures, [], "no schedule breaks an oracle")`).
 *
 * @param options The suite's scenarios, search and format.
 * @returns The failures and the counts.
 */
export function runSystematic<S>(options: SystematicOptions<S>): SystematicResult {
  const { label, scenarios, bound, exploreOne, describe, nameWidth, header, stepsWord = "steps" } = options;
  const started = performance.now();
  const lines: string[] = [];
  const failures: string[] = [];
  let schedules = 0;
  let steps = 0;
  for (const named of scenarios) {
    const b = bound(named);
    const r = exploreOne(named.scenario, b);
    schedules += r.schedules;
    steps += r.steps;
    const count = `${String(r.schedules).padStart(6)} schedules  ${describe(named.scenario)}`;
    lines.push(
      header === undefined
        ? `  ${named.name.padEnd(nameWidth)} <= ${b} preemptions ${count}`
        : `  ${named.name.padEnd(nameWidth)} ${count}`,
    );
    if (r.failure !== undefined) failures.push(`${named.name}: ${r.failure}`);
  }
  const seconds = (performance.now() - started) / 1000;
  const bounds = header === undefined ? "," : ` (<= ${header} preemptions),`;
  console.log(
    `${label} [${runtime}]: ${scenarios.length} scenarios, ${schedules} schedules${bounds} ` +
      `${steps} ${stepsWord}, ${seconds.toFixed(1)} s\n${lines.join("\n")}`,
  );
  return { failures, schedules, steps };
}

/**
 * The `exploreOne` of a kernel model: the kernel's {@link explore} of the shipped code (variant 0); a
 * failure is its choices and violations, and, if `table` is given, the replayed run's table.
 *
 * @param h The model's harness.
 * @param table Formats a replayed run (omit for none).
 * @returns The function {@link runSystematic} calls for each scenario.
 */
export function exploreModel<S, X extends object, V extends Violation>(
  h: Harness<S, X, V>,
  table?: (scenario: S, exec: ReturnType<Harness<S, X, V>["run"]>) => string,
): (scenario: S, bound: number) => ScenarioExploration {
  return (scenario, bound) => {
    const r = explore(h, scenario, 0, bound);
    if (!r.failure) return { schedules: r.schedules, steps: r.steps };
    let failure = `choices ${JSON.stringify(r.failure.choices)}: ${describeViolations(r.failure.violations)}`;
    if (table !== undefined) {
      failure += "\n" + table(scenario, h.run(scenario, replayChooser(h.model, r.failure.choices)));
    }
    return { schedules: r.schedules, steps: r.steps, failure };
  };
}
