/**
 * The bounded MPMC queue (`lib/protocol/injector.ts`, shipped unchanged) under the controlled scheduler: the
 * random mode (fast-check scenarios and schedules, every oracle of tests/lincheck/models/queue/oracles.ts), the
 * systematic mode (every schedule with at most two preemptions of small named scenarios), the queue's
 * mutants (each must be caught, and the test says by which oracle and after how many interleavings),
 * and the replay of recorded counterexamples. Counts, the seed and the times are printed.
 *
 * Environment: see tests/lincheck/models/queue/suite.ts and tests/lincheck/README.md.
 */
import fc from "fast-check";
import { QUEUE_RECORDED } from "./models/queue/counterexamples.ts";
import { describeQueueScenario } from "./models/queue/scenario.ts";
import { checkQueueExecution } from "./models/queue/oracles.ts";
import {
  huntQueueMutant,
  minimalQueueCounterexample,
  queueConfig,
  queueProperty,
  queueStats,
  queueVariantOf,
  reportQueueRun,
  SMALL_QUEUE_SCENARIOS,
  startQueueHarness,
} from "./models/queue/suite.ts";
import { exploreRuns, scheduleChooser } from "./models/deque/scenario.ts";
import { runSystematic } from "./kernel/systematic.ts";
import { QUEUE_MUTANTS } from "../mutants/mutants.ts";
import { assert, assertEquals, runtime, test } from "../_test.ts";

/** Interleavings a mutant hunt may take before the mutant counts as missed. */
const HUNT_RUNS = 20_000;
/** One harness (3 simulated threads used, every queue mutant loaded) for the file; the last test closes it. */
const shared = startQueueHarness(true);

test(
  "queue random mode: generated scenarios under generated interleavings satisfy every oracle on lib/protocol/injector.ts",
  async () => {
    const { seed, runs, path, mutant } = queueConfig();
    const variant = queueVariantOf(mutant);
    const harness = await shared;
    const stats = queueStats();
    const started = performance.now();
    const result = fc.check(queueProperty(harness, variant, stats), {
      seed,
      numRuns: path === undefined ? runs : 1,
      path,
    });
    const seconds = (performance.now() - started) / 1000;
    console.log(
      `lincheck queue random [${runtime}]${mutant ? ` MUTANT ${mutant}` : ""}: seed ${seed}${
        path ? ` path ${path}` : ""
      }; ${stats.runs} interleavings (${result.numRuns} passed generation, ${result.numShrinks} shrinks) of ` +
        `${stats.scenarios.size} distinct scenarios, ${stats.steps} shared accesses, ${seconds.toFixed(1)} s ` +
        `(${(stats.runs / seconds).toFixed(0)}/s); runs with an EMPTY pop ${stats.empties}, with a push refused ` +
        `${stats.fulls}, stalled on a full queue ${stats.stalls}; not linearizable but justified: ` +
        `${stats.emptyWhileQueued} EMPTY answers with no moment of an empty queue (head's producer in flight), ` +
        `${stats.fullWhileRoom} false answers with no moment of a full one (a consumer holding the slot a lap back)`,
    );
    if (result.failed) {
      const [scenario, schedule] = result.counterexample!;
      const rep = reportQueueRun(harness, variant, scenario, schedule, `queue-random-seed${seed}`, {
        seed: result.seed,
        path: result.counterexamplePath,
      });
      const min = minimalQueueCounterexample(harness, variant, scenario, `queue-random-seed${seed}`, { seed });
      throw new Error(
        `lincheck queue random: ${mutant ? `mutant ${mutant}` : "the shipped queue"} failed after ` +
          `${stats.firstFailure?.run} interleavings; replay: FILCH_LINCHECK_SEED=${result.seed} ` +
          `FILCH_LINCHECK_QUEUE_PATH='${result.counterexamplePath}'\ntrace: ${rep.tracePath}\n${rep.text}\n\n` +
          (min === null
            ? "no schedule with <= 2 preemptions of that scenario fails"
            : `minimal counterexample (${min.preemptions} preemptions; trace ${min.tracePath}):\n${min.text}`),
      );
    }
  },
  // A long run (FILCH_LINCHECK_QUEUE_RUNS) gets 4 ms an interleaving, twice Bun's measured cost.
  Math.max(300_000, queueConfig().runs * 4),
);

test(
  "queue systematic mode: every schedule with at most 2 preemptions of the small queue scenarios passes every oracle",
  async () => {
    const { preemptions } = queueConfig();
    const harness = await shared;
    const { failures } = runSystematic({
      label: "lincheck queue systematic",
      scenarios: SMALL_QUEUE_SCENARIOS,
      bound: () => preemptions,
      exploreOne: (scenario, bound) => {
        const r = exploreRuns((choose) => harness.run(scenario, choose, 0), bound, (exec) => {
          const v = checkQueueExecution(exec, scenario);
          return v.length === 0 ? null : v.map((x) => `[${x.oracle}] ${x.detail}`).join("; ");
        });
        const failure = r.failure && `schedule ${JSON.stringify(r.failure.schedule)}: ${r.failure.message}`;
        return { schedules: r.schedules, steps: r.steps, failure };
      },
      describe: describeQueueScenario,
      nameWidth: 26,
      header: preemptions,
      stepsWord: "shared accesses",
    });
    assertEquals(failures, [], "no schedule breaks an oracle");
  },
  300_000,
);

test(
  "queue mutants: the random and the systematic modes catch every queue mutant, and say which oracle and when",
  async () => {
    const { seed } = queueConfig();
    const harness = await shared;
    const started = performance.now();
    const rows: string[] = [];
    const missed: string[] = [];
    for (let m = 0; m < QUEUE_MUTANTS.length; m++) {
      const name = QUEUE_MUTANTS[m].name;
      const hunt = huntQueueMutant(harness, m + 1, name, seed, HUNT_RUNS, false);
      if (!hunt.caught) missed.push(`${name} (random mode, ${hunt.interleavings} interleavings)`);
      let systematic = "";
      let tried = 0;
      for (const { name: scenarioName, scenario } of SMALL_QUEUE_SCENARIOS) {
        let oracle = "";
        const r = exploreRuns((choose) => harness.run(scenario, choose, m + 1), 2, (exec) => {
          const v = checkQueueExecution(exec, scenario);
          if (v.length > 0) oracle = v[0].oracle;
          return v.length === 0 ? null : oracle;
        });
        tried += r.schedules;
        if (r.failure) {
          systematic = `${scenarioName} after ${r.failure.index} schedules (${tried} in all), by ${oracle}`;
          break;
        }
      }
      if (systematic === "") missed.push(`${name} (systematic mode, ${tried} schedules)`);
      rows.push(
        `  ${name.padEnd(26)} random: ${hunt.caught ? `${hunt.oracle} after ${hunt.interleavings}` : "MISSED"}; ` +
          `systematic: ${systematic || "MISSED"}`,
      );
    }
    console.log(
      `lincheck queue mutants [${runtime}]: seed ${seed}, at most ${HUNT_RUNS} interleavings each, ` +
        `${((performance.now() - started) / 1000).toFixed(1)} s\n${rows.join("\n")}`,
    );
    assertEquals(missed, [], "every queue mutant is caught by both modes");
  },
  300_000,
);

test("queue replay: a mutant's failing run replays from its fast-check seed and path", async () => {
  const { seed } = queueConfig();
  const harness = await shared;
  const variant = queueVariantOf("pop_empty_after_lost_cas");
  const first = fc.check(queueProperty(harness, variant, queueStats()), { seed, numRuns: HUNT_RUNS });
  assert(first.failed, "the mutant is caught");
  const again = fc.check(queueProperty(harness, variant, queueStats()), {
    seed: first.seed,
    path: first.counterexamplePath!,
    numRuns: 1,
    endOnFailure: true,
  });
  assert(again.failed, `replaying seed ${first.seed} path ${first.counterexamplePath} fails again`);
  assertEquals(again.counterexample, first.counterexample, "the replayed counterexample is the recorded one");
  console.log(`lincheck queue replay [${runtime}]: seed ${first.seed} path ${first.counterexamplePath} fails again`);
}, 120_000);

test(
  "queue replay: each recorded counterexample fails again on its mutant and passes on the shipped queue",
  async () => {
    const harness = await shared;
    try {
      for (const r of QUEUE_RECORDED) {
        const variant = queueVariantOf(r.mutant);
        const bad = checkQueueExecution(
          harness.run(r.scenario, scheduleChooser(r.schedule), variant),
          r.scenario,
        );
        assert(
          bad.some((v) => v.oracle === r.oracle),
          `${r.mutant}: ${describeQueueScenario(r.scenario)} under ${JSON.stringify(r.schedule)} fails ${r.oracle}: ` +
            JSON.stringify(bad),
        );
        const good = checkQueueExecution(harness.run(r.scenario, scheduleChooser(r.schedule), 0), r.scenario);
        assertEquals(good, [], `the shipped queue passes ${describeQueueScenario(r.scenario)}`);
      }
      const covered = new Set(QUEUE_RECORDED.map((r) => r.mutant));
      assertEquals(
        QUEUE_MUTANTS.filter((m) => !covered.has(m.name)).map((m) => m.name),
        [],
        "every queue mutant has a recorded counterexample",
      );
      console.log(
        `lincheck queue replay [${runtime}]: ${QUEUE_RECORDED.length} recorded counterexamples fail again on their ` +
          `mutants and pass on lib/protocol/injector.ts`,
      );
    } finally {
      await harness.close();
    }
  },
  120_000,
);
