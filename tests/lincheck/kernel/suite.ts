/**
 * A kernel model's test file, the parts every such file wrote out the same: its sizes from the environment,
 * its one harness, the random mode's loop (generated scenarios under generated schedules, the model's
 * oracles, a printed line of counts, a failure's replay) and the systematic mode's test (every named
 * scenario within its bound, the harness closed after). room_wait_test.ts, graph_test.ts and
 * producers_test.ts each copied the others' opening and both loops; they now differ only in what they pass
 * here and in the tests of their own.
 *
 * What it owns: the environment names `FILCH_LINCHECK_<ENV>_RUNS` and `FILCH_LINCHECK_<ENV>_PREEMPTIONS`,
 * the random mode's printed line and failure text. What it does not: the model (its oracles are
 * `model.check`), the search and the systematic table (`systematic.ts`), the seed and the replay path
 * (`env.ts`'s `config`).
 *
 * Called on the controller's thread only (the test's main thread). The harness is started when the suite is
 * opened (so that its threads load while the first test is registered) and closed by
 * {@link systematicMode}, which must therefore be the file's last test.
 *
 * @module
 */

import fc from "fast-check";
import { assertEquals, runtime } from "../../_test.ts";
import { config, describeViolations, intEnv } from "./env.ts";
import {
  type Execution,
  Harness,
  type Model,
  type NamedScenario,
  scheduleArbitrary,
  scheduleChooser,
  type Violation,
} from "./harness.ts";
import { exploreModel, runSystematic } from "./systematic.ts";

/** What a suite is opened with. */
export interface SuiteOptions<S, X extends object> {
  /** The middle of its environment names: `GRAPH` reads `FILCH_LINCHECK_GRAPH_RUNS` and `…_PREEMPTIONS`. */
  env: string;
  /** The random mode's runs when the environment sets none. */
  runs: number;
  /** A scenario in one line. */
  describe(scenario: S): string;
  /** A run's table of steps, for a failure's report. */
  table(scenario: S, exec: Execution<X>): string;
}

/** An opened suite: its model, sizes and harness. */
export interface Suite<S, X extends object, V extends Violation> extends SuiteOptions<S, X> {
  model: Model<S, X, V>;
  /** The harness, started once for the whole file. */
  harness: Promise<Harness<S, X, V>>;
  /** Added to each named scenario's preemption bound in the systematic mode. */
  extra: number;
}

/**
 * Reads the suite's sizes and starts its harness.
 *
 * @param model The model under test.
 * @param options The environment's names, the default runs and the model's formatters.
 * @returns The suite, for the tests of the file.
 *
 * @example Usage
 * ```ts ignore
 * const suite = openSuite(ROOM_WAIT, { env: "ROOM", runs: 3000, describe: describeRoomScenario, table: formatRoomTable });
 * ```
 */
export function openSuite<S, X extends object, V extends Violation>(
  model: Model<S, X, V>,
  options: SuiteOptions<S, X>,
): Suite<S, X, V> {
  return {
    ...options,
    model,
    runs: intEnv(`FILCH_LINCHECK_${options.env}_RUNS`, options.runs, 0),
    extra: intEnv(`FILCH_LINCHECK_${options.env}_PREEMPTIONS`, 0, 0),
    harness: Harness.start(model),
  };
}

/** What the random mode counts besides runs and steps. */
export interface RandomOptions<S, X extends object> {
  scenarios: fc.Arbitrary<S>;
  /** Called for every run before its oracles: counts what the run reached. */
  count?(scenario: S, exec: Execution<X>): void;
  /** The counts as printed after the steps (e.g. "12 with the waiter woken from its wait"). */
  counted(): string;
  /** Counts the distinct scenarios (by their JSON) and prints how many. */
  distinct?: boolean;
}

/**
 * The random mode: `suite.runs` generated scenarios under generated schedules (one, the replayed one, if
 * `FILCH_LINCHECK_PATH` is set), each checked by the model's oracles; prints one line of counts and throws
 * a failure's replay (seed and path, scenario, schedule, violations, table).
 *
 * @param suite The opened suite.
 * @param options The scenarios and what to count.
 * @returns Whether a single run was replayed (so the caller skips its assertions on the counts).
 *
 * @example Usage
 * ```ts ignore
 * let woken = 0;
 * const { replaying } = await randomMode(suite, {
 *   scenarios: roomScenarioArbitrary(),
 *   count: (_, exec) => void (exec.accesses.some((a) => a.woke?.length) && woken++),
 *   counted: () => `${woken} with the waiter woken from its wait`,
 * });
 * ```
 */
export async function randomMode<S, X extends object, V extends Violation>(
  suite: Suite<S, X, V>,
  options: RandomOptions<S, X>,
): Promise<{ replaying: boolean }> {
  const { seed, path } = config();
  const h = await suite.harness;
  const model = suite.model;
  const started = performance.now();
  let runs = 0;
  let steps = 0;
  const scenarios = new Set<string>();
  const result = fc.check(
    fc.property(options.scenarios, scheduleArbitrary(model), (scenario, schedule) => {
      const exec = h.run(scenario, scheduleChooser(model, schedule));
      runs++;
      steps += exec.steps;
      if (options.distinct) scenarios.add(JSON.stringify(scenario));
      options.count?.(scenario, exec);
      const v = model.check(scenario, exec);
      if (v.length > 0) throw new Error(describeViolations(v));
    }),
    { seed, numRuns: path === undefined ? suite.runs : 1, path },
  );
  const seconds = (performance.now() - started) / 1000;
  const label = `lincheck ${model.name} random`;
  const of = options.distinct ? ` of ${scenarios.size} distinct scenarios, ` : ", ";
  console.log(
    `${label} [${runtime}]: seed ${seed}; ${runs} interleavings (${result.numShrinks} shrinks)${of}` +
      `${steps} steps; ${options.counted()}; ${seconds.toFixed(1)} s`,
  );
  if (result.failed) {
    const [scenario, schedule] = result.counterexample!;
    const exec = h.run(scenario, scheduleChooser(model, schedule));
    throw new Error(
      `${label}: the shipped code failed; ` +
        `replay: FILCH_LINCHECK_SEED=${result.seed} FILCH_LINCHECK_PATH='${result.counterexamplePath}'\n` +
        `scenario: ${suite.describe(scenario)}\nscenario (JSON): ${JSON.stringify(scenario)}\n` +
        `schedule (JSON): ${JSON.stringify(schedule)}\n` +
        `violations: ${describeViolations(model.check(scenario, exec))}\n` +
        suite.table(scenario, exec),
    );
  }
  return { replaying: path !== undefined };
}

/**
 * The systematic mode, the file's last test: explores every named scenario within its own bound (1 if it
 * has none) plus `suite.extra` preemptions, prints the table, asserts that no schedule breaks an oracle,
 * and closes the harness whatever happened.
 *
 * @param suite The opened suite.
 * @param scenarios The named scenarios.
 * @param nameWidth The width of the printed table's name column.
 *
 * @example Usage
 * ```ts ignore
 * test("room-wait systematic mode: …", () => systematicMode(suite, ROOM_SCENARIOS, 30), 300_000);
 * ```
 */
export async function systematicMode<S, X extends object, V extends Violation>(
  suite: Suite<S, X, V>,
  scenarios: readonly NamedScenario<S>[],
  nameWidth: number,
): Promise<void> {
  const h = await suite.harness;
  try {
    const { failures } = runSystematic({
      label: `lincheck ${suite.model.name} systematic`,
      scenarios,
      bound: ({ preemptions = 1 }) => preemptions + suite.extra,
      exploreOne: exploreModel(h, suite.table),
      describe: suite.describe,
      nameWidth,
    });
    assertEquals(failures, [], "no schedule breaks an oracle");
  } finally {
    await h.close();
  }
}
