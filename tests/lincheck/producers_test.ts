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
import { scheduleChooser } from "./kernel/harness.ts";
import { openSuite, randomMode, systematicMode } from "./kernel/suite.ts";
import { assert, assertEquals, test } from "../_test.ts";

/** One harness (4 threads) for the whole file; the last test closes it. */
const suite = openSuite(PRODUCERS, {
  env: "PRODUCERS",
  runs: 5000,
  describe: describeProducersScenario,
  table: formatProducersTable,
});

test(
  "producers harness: a producer that waited is woken by the worker that finished its task, and reads it from its own queue",
  async () => {
    const h = await suite.harness;
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
    let blockedThenWoken = 0;
    let claims = 0;
    const { replaying } = await randomMode(suite, {
      scenarios: producersScenarioArbitrary(),
      distinct: true,
      count(scenario, exec) {
        if (scenario.claimers !== undefined) claims++;
        // A producer that blocked in its wait and was woken by a notify (not only re-checks that found work).
        if (exec.accesses.some((a) => a.woke !== undefined && a.woke.length > 0)) blockedThenWoken++;
      },
      counted: () => `${blockedThenWoken} with a producer woken from its wait, ${claims} of claimers`,
    });
    // The runs must reach a producer woken from its wait, not only re-checks that found the work.
    if (!replaying && suite.runs >= 100) assert(blockedThenWoken > 0 && claims > 0, `woken ${blockedThenWoken}`);
  },
  300_000,
);

test(
  "producers systematic mode: every schedule within each named scenario's preemption bound satisfies every oracle",
  () => systematicMode(suite, PRODUCERS_SCENARIOS, 44),
  300_000,
);
