/**
 * Producers in other threads (issue 29): the shipped completion routing (`Marks.publishDone`), the
 * completion and record wake protocols (`CompletionReader.arm` / `drain` / `onWake`, `wakeProducer`,
 * `wakeRecordWaiters`) and the slot registry (`claimSlot`, `releaseSlot`) under controlled interleavings
 * (see tests/lincheck/README.md, "Producers in other threads"). Random mode and systematic mode; the
 * mutants (tests/mutants/mutants.ts, PRODUCERS_MUTANTS) are run by the mutation run
 * (`node tests/mutants/run.ts --only producers`), which patches the shipped files under this suite.
 *
 * Environment: FILCH_LINCHECK_SEED (default 20261121), FILCH_LINCHECK_PRODUCERS_RUNS (random-mode runs,
 * default 5000), FILCH_LINCHECK_PRODUCERS_PREEMPTIONS (added to each named scenario's bound, default 0),
 * FILCH_LINCHECK_PATH (with the seed: replay one run).
 */
import fc from "fast-check";
import {
  checkProducersExecution,
  describePAccess,
  describeProducersScenario,
  formatProducersTable,
  PRODUCERS,
  PRODUCERS_SCENARIOS,
  producersScenarioArbitrary,
  type PScenario,
  pThreadName,
} from "./models/producers/model.ts";
import { Harness, scheduleArbitrary, scheduleChooser } from "./kernel/harness.ts";
import { exploreModel, runSystematic } from "./kernel/systematic.ts";
import { config, describeViolations, intEnv } from "./kernel/env.ts";
import { assert, assertEquals, runtime, test } from "../_test.ts";

const RUNS = intEnv("FILCH_LINCHECK_PRODUCERS_RUNS", 5000, 0);
const EXTRA = intEnv("FILCH_LINCHECK_PRODUCERS_PREEMPTIONS", 0, 0);
/** One harness (4 threads) for the whole file; the last test closes it. */
const shared = Harness.start(PRODUCERS);

test(
  "producers harness: a producer that waited is woken by the worker that finished its task, and reads it from its own queue",
  async () => {
    const h = await shared;
    const s: PScenario = {
      producers: [{ slot: 0, backlog: 0 }, { slot: 1, backlog: 0 }],
      tasks: [{ slot: 1, by: 0 }, { slot: 0, by: 0 }],
      finishers: 1,
    };
    // Both producers arm and block first (threads 0 and 1 to their waits), then the worker runs.
    const exec = h.run(s, scheduleChooser(PRODUCERS, [0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1]));
    const rows = exec.accesses.map((a) => `${pThreadName(s, a.thread)}: ${describePAccess(a)}`);
    const table = formatProducersTable(s, exec);
    assert(rows.includes("producer@1: wait waiting@1 =1 (blocks)"), `producer@1 blocks first:\n${table}`);
    assert(rows.includes("producer@0: wait waiting@0 =1 (blocks)"), `producer@0 blocks first:\n${table}`);
    assert(rows.includes("worker0: notify waiting@1 (woke 1)"), `the worker wakes producer@1:\n${table}`);
    assertEquals(exec.received, [[5], [4]], "each producer read its own task's handle");
    assertEquals(checkProducersExecution(s, exec), [], "no oracle breaks");
  },
  60_000,
);

test(
  "producers random mode: generated routings, record waits and claims under generated interleavings satisfy every oracle",
  async () => {
    const { seed, path } = config();
    const h = await shared;
    const started = performance.now();
    let runs = 0;
    let steps = 0;
    let blockedThenWoken = 0;
    let claims = 0;
    const scenarios = new Set<string>();
    const result = fc.check(
      fc.property(producersScenarioArbitrary(), scheduleArbitrary(PRODUCERS), (scenario, schedule) => {
        const exec = h.run(scenario, scheduleChooser(PRODUCERS, schedule));
        runs++;
        steps += exec.steps;
        scenarios.add(JSON.stringify(scenario));
        if (scenario.claimers !== undefined) claims++;
        // A producer that blocked in its wait and was woken by a notify (not only re-checks that found work).
        if (exec.accesses.some((a) => a.woke !== undefined && a.woke.length > 0)) blockedThenWoken++;
        const v = checkProducersExecution(scenario, exec);
        if (v.length > 0) throw new Error(describeViolations(v));
      }),
      { seed, numRuns: path === undefined ? RUNS : 1, path },
    );
    const seconds = (performance.now() - started) / 1000;
    console.log(
      `lincheck producers random [${runtime}]: seed ${seed}; ${runs} interleavings (${result.numShrinks} shrinks) ` +
        `of ${scenarios.size} distinct scenarios, ${steps} steps; ${blockedThenWoken} with a producer woken from ` +
        `its wait, ${claims} of claimers; ${seconds.toFixed(1)} s`,
    );
    if (result.failed) {
      const [scenario, schedule] = result.counterexample!;
      const exec = h.run(scenario, scheduleChooser(PRODUCERS, schedule));
      throw new Error(
        `lincheck producers random: the shipped code failed; ` +
          `replay: FILCH_LINCHECK_SEED=${result.seed} FILCH_LINCHECK_PATH='${result.counterexamplePath}'\n` +
          `scenario: ${describeProducersScenario(scenario)}\nscenario (JSON): ${JSON.stringify(scenario)}\n` +
          `schedule (JSON): ${JSON.stringify(schedule)}\n` +
          `violations: ${describeViolations(checkProducersExecution(scenario, exec))}\n` +
          formatProducersTable(scenario, exec),
      );
    }
    // The runs must reach a producer woken from its wait, not only re-checks that found the work.
    if (path === undefined && RUNS >= 100) assert(blockedThenWoken > 0 && claims > 0, `woken ${blockedThenWoken}`);
  },
  300_000,
);

test(
  "producers systematic mode: every schedule within each named scenario's preemption bound satisfies every oracle",
  async () => {
    const h = await shared;
    try {
      const { failures } = runSystematic({
        label: "lincheck producers systematic",
        scenarios: PRODUCERS_SCENARIOS,
        bound: ({ preemptions }) => preemptions! + EXTRA,
        exploreOne: exploreModel(h, formatProducersTable),
        describe: describeProducersScenario,
        nameWidth: 44,
      });
      assertEquals(failures, [], "no schedule breaks an oracle");
    } finally {
      await h.close();
    }
  },
  300_000,
);
