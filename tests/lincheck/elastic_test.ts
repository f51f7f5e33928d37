/**
 * The elastic pool's retirement and growth (issue 49): the shipped code of `lib/protocol/sleep.ts`
 * (`Sleep.idle`, `sleepOrRetire`, `newWork`, `wakeAll`) and `lib/protocol/slots.ts` (`claimMail`, the
 * retirement's and the growth's size and slot steps, `bootStoreAwake`) under controlled interleavings, with
 * spec/Elastic.tla's properties as oracles (tests/lincheck/models/elastic/model.ts): a sleeper retiring while a
 * poster pushes and wakes, a retirement racing a directed post, two workers retiring at min 1, the owner's
 * growth racing a retirement. Random mode and systematic mode; the mutants (tests/mutants/mutants.ts,
 * ELASTIC_LINCHECK_MUTANTS: the retirement's compare-exchange as a store, its uncount after the
 * compare-exchange, its mail read before it, a post that reads the slot before counting its mail) are run
 * by the mutation run (`node tests/mutants/run.ts --only elastic_lincheck`), which patches the shipped files
 * under this suite.
 *
 * Environment: FILCH_LINCHECK_SEED (default 20261121), FILCH_LINCHECK_ELASTIC_RUNS (random-mode runs,
 * default 3000), FILCH_LINCHECK_ELASTIC_PREEMPTIONS (added to each named scenario's bound, default 0),
 * FILCH_LINCHECK_PATH (with the seed: replay one run).
 */
import {
  checkElasticExecution,
  describeElasticScenario,
  ELASTIC,
  ELASTIC_SCENARIOS,
  type ElasticScenario,
  elasticScenarioArbitrary,
  formatElasticTable,
} from "./models/elastic/model.ts";
import { scheduleChooser } from "./kernel/harness.ts";
import { openSuite, randomMode, systematicMode } from "./kernel/suite.ts";
import { assert, assertEquals, test } from "../_test.ts";

/** One harness (4 threads) for the whole file; the last test closes it. */
const suite = openSuite(ELASTIC, {
  env: "ELASTIC",
  runs: 3000,
  describe: describeElasticScenario,
  table: formatElasticTable,
});

test(
  "elastic harness: a worker above the minimum whose idle timeout passes retires, its slot ABSENT and the size down",
  async () => {
    const h = await suite.harness;
    const s: ElasticScenario = { workers: 2, max: 2, min: 1, posts: [], direct: 0, grow: false };
    // w0 runs until it blocks in its sleep (11 steps); its timeout (choice 4: thread 0's timed wait times
    // out); then w0 goes on (it retires), then w1 to its sleep.
    const exec = h.run(s, scheduleChooser(ELASTIC, [...Array(11).fill(0), 4, ...Array(40).fill(0)]));
    const table = formatElasticTable(s, exec);
    assertEquals(checkElasticExecution(s, exec), [], `no oracle breaks:\n${table}`);
    assertEquals(exec.retired[0], 1, `w0 retired:\n${table}`);
    assertEquals(exec.stateWords[0], 3, `slot 0 is ABSENT:\n${table}`);
    assertEquals(exec.size, 1, `the size is the minimum:\n${table}`);
  },
  60_000,
);

test("elastic random mode: generated scenarios under generated interleavings satisfy every oracle", async () => {
  let retired = 0;
  let grown = 0;
  const { replaying } = await randomMode(suite, {
    scenarios: elasticScenarioArbitrary(),
    count(_, exec) {
      if (exec.retired.some((r) => r === 1)) retired++;
      if (exec.started.some((r) => r === 1)) grown++;
    },
    counted: () => `${retired} with a worker retired, ${grown} with a worker grown`,
  });
  // The runs must reach retirements and growths, not only workers that sleep.
  if (!replaying && suite.runs >= 100) assert(retired > 0 && grown > 0, `retired ${retired}, grown ${grown}`);
}, 300_000);

test(
  "elastic systematic mode: every schedule within each named scenario's preemption bound satisfies every oracle",
  () => systematicMode(suite, ELASTIC_SCENARIOS, 34),
  300_000,
);
