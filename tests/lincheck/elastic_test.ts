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
import fc from "fast-check";
import {
  checkElasticExecution,
  describeElasticScenario,
  ELASTIC,
  ELASTIC_SCENARIOS,
  type ElasticScenario,
  elasticScenarioArbitrary,
  formatElasticTable,
} from "./models/elastic/model.ts";
import { Harness, replayChooser, scheduleArbitrary, scheduleChooser } from "./kernel/harness.ts";
import { exploreModel, runSystematic } from "./kernel/systematic.ts";
import { config, describeViolations, intEnv } from "./kernel/env.ts";
import { assert, assertEquals, runtime, test } from "../_test.ts";

const RUNS = intEnv("FILCH_LINCHECK_ELASTIC_RUNS", 3000, 0);
const EXTRA = intEnv("FILCH_LINCHECK_ELASTIC_PREEMPTIONS", 0, 0);
/** One harness (4 threads) for the whole file; the last test closes it. */
const shared = Harness.start(ELASTIC);

test(
  "elastic harness: a worker above the minimum whose idle timeout passes retires, its slot ABSENT and the size down",
  async () => {
    const h = await shared;
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
  const { seed, path } = config();
  const h = await shared;
  const started = performance.now();
  let runs = 0;
  let steps = 0;
  let retired = 0;
  let grown = 0;
  const result = fc.check(
    fc.property(elasticScenarioArbitrary(), scheduleArbitrary(ELASTIC), (scenario, schedule) => {
      const exec = h.run(scenario, scheduleChooser(ELASTIC, schedule));
      runs++;
      steps += exec.steps;
      if (exec.retired.some((r) => r === 1)) retired++;
      if (exec.started.some((r) => r === 1)) grown++;
      const v = checkElasticExecution(scenario, exec);
      if (v.length > 0) throw new Error(describeViolations(v));
    }),
    { seed, numRuns: path === undefined ? RUNS : 1, path },
  );
  const seconds = (performance.now() - started) / 1000;
  console.log(
    `lincheck elastic random [${runtime}]: seed ${seed}; ${runs} interleavings (${result.numShrinks} shrinks), ` +
      `${steps} steps; ${retired} with a worker retired, ${grown} with a worker grown; ${seconds.toFixed(1)} s`,
  );
  if (result.failed) {
    const [scenario, schedule] = result.counterexample!;
    const exec = h.run(scenario, scheduleChooser(ELASTIC, schedule));
    throw new Error(
      `lincheck elastic random: the shipped code failed; ` +
        `replay: FILCH_LINCHECK_SEED=${result.seed} FILCH_LINCHECK_PATH='${result.counterexamplePath}'\n` +
        `scenario (JSON): ${JSON.stringify(scenario)}\nschedule (JSON): ${JSON.stringify(schedule)}\n` +
        `violations: ${describeViolations(checkElasticExecution(scenario, exec))}\n` +
        formatElasticTable(scenario, exec),
    );
  }
  // The runs must reach retirements and growths, not only workers that sleep.
  if (path === undefined && RUNS >= 100) assert(retired > 0 && grown > 0, `retired ${retired}, grown ${grown}`);
}, 300_000);

test(
  "elastic systematic mode: every schedule within each named scenario's preemption bound satisfies every oracle",
  async () => {
    const h = await shared;
    try {
      const { failures } = runSystematic({
        label: "lincheck elastic systematic",
        scenarios: ELASTIC_SCENARIOS,
        bound: ({ preemptions }) => preemptions! + EXTRA,
        exploreOne: exploreModel(h, formatElasticTable),
        describe: describeElasticScenario,
        nameWidth: 34,
      });
      assertEquals(failures, [], "no schedule breaks an oracle");
    } finally {
      await h.close();
    }
  },
  300_000,
);

void replayChooser;
