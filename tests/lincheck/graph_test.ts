/**
 * Task graphs (issue 48): the shipped walk (`lib/graph/walk.ts`: `GraphWalker`), the cancellation's visit
 * (`lib/graph/submit.ts` `cancelGraph`) and the placement (`placeGraph`) under controlled interleavings, with
 * spec/Graph.tla's properties as oracles (see tests/lincheck/README.md, "Task graphs"). Random mode and
 * systematic mode; the mutants (tests/mutants/mutants.ts, GRAPH_LINCHECK_MUTANTS) are run by the mutation
 * run (`node tests/mutants/run.ts --only graph_lincheck`), which patches the shipped files under this suite.
 *
 * Environment: FILCH_LINCHECK_SEED (default 20261121), FILCH_LINCHECK_GRAPH_RUNS (random-mode runs, default
 * 1500), FILCH_LINCHECK_GRAPH_PREEMPTIONS (added to each named scenario's bound, default 0),
 * FILCH_LINCHECK_PATH (with the seed: replay one run).
 */
import {
  checkGraphExecution,
  describeGraphScenario,
  formatGraphTable,
  GRAPH,
  GRAPH_SCENARIOS,
  type GraphScenario,
  graphScenarioArbitrary,
} from "./models/graph/model.ts";
import { Settled } from "./models/graph/layout.ts";
import { scheduleChooser } from "./kernel/harness.ts";
import { openSuite, randomMode, systematicMode } from "./kernel/suite.ts";
import { assert, assertEquals, test } from "../_test.ts";

/** One harness (4 threads) for the whole file; the last test closes it. */
const suite = openSuite(GRAPH, { env: "GRAPH", runs: 1500, describe: describeGraphScenario, table: formatGraphTable });

test(
  "graph harness: a diamond on two workers, one schedule each way: every node starts once with its inputs' results",
  async () => {
    const h = await suite.harness;
    const s: GraphScenario = {
      nodes: [{ inputs: [] }, { inputs: [1] }, { inputs: [1] }, { inputs: [2, 3] }, { inputs: [4], fails: true }],
      workers: 2,
      roots: [0],
    };
    for (const schedule of [[], [0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1]]) {
      const exec = h.run(s, scheduleChooser(GRAPH, schedule));
      const table = formatGraphTable(s, exec);
      assertEquals(checkGraphExecution(s, exec), [], `no oracle breaks:\n${table}`);
      assertEquals(exec.starts, [1, 1, 1, 1, 1], `each node started once:\n${table}`);
      assertEquals(exec.kinds, [1, 1, 1, 1, 2].map((k) => k === 1 ? Settled.VALUE : Settled.OWN_ERROR), table);
    }
  },
  60_000,
);

test(
  "graph random mode: generated graphs, failures, deaths and cancellations under generated interleavings satisfy every oracle",
  async () => {
    let rejected = 0;
    let cancelled = 0;
    let stolen = 0;
    const { replaying } = await randomMode(suite, {
      scenarios: graphScenarioArbitrary(),
      distinct: true,
      count(scenario, exec) {
        if (exec.kinds.includes(Settled.INPUT)) rejected++;
        if (exec.kinds.includes(Settled.CANCELLED)) cancelled++;
        if (scenario.workers > 1) stolen++;
      },
      counted: () =>
        `${rejected} with a node rejected by its input, ${cancelled} with a node cancelled, ${stolen} with 2-3 workers`,
    });
    if (!replaying && suite.runs >= 200) {
      assert(rejected > 0 && cancelled > 0, `rejected ${rejected}, cancelled ${cancelled}`);
    }
  },
  300_000,
);

test(
  "graph systematic mode: every schedule within each named scenario's preemption bound satisfies every oracle",
  () => systematicMode(suite, GRAPH_SCENARIOS, 38),
  300_000,
);
