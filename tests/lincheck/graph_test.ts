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
import fc from "fast-check";
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
import { Harness, scheduleArbitrary, scheduleChooser } from "./kernel/harness.ts";
import { exploreModel, runSystematic } from "./kernel/systematic.ts";
import { config, describeViolations, intEnv } from "./kernel/env.ts";
import { assert, assertEquals, runtime, test } from "../_test.ts";

const RUNS = intEnv("FILCH_LINCHECK_GRAPH_RUNS", 1500, 0);
const EXTRA = intEnv("FILCH_LINCHECK_GRAPH_PREEMPTIONS", 0, 0);
/** One harness (4 threads) for the whole file; the last test closes it. */
const shared = Harness.start(GRAPH);

test(
  "graph harness: a diamond on two workers, one schedule each way: every node starts once with its inputs' results",
  async () => {
    const h = await shared;
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
    const { seed, path } = config();
    const h = await shared;
    const started = performance.now();
    let runs = 0;
    let steps = 0;
    let rejected = 0;
    let cancelled = 0;
    let stolen = 0;
    const scenarios = new Set<string>();
    const result = fc.check(
      fc.property(graphScenarioArbitrary(), scheduleArbitrary(GRAPH), (scenario, schedule) => {
        const exec = h.run(scenario, scheduleChooser(GRAPH, schedule));
        runs++;
        steps += exec.steps;
        scenarios.add(JSON.stringify(scenario));
        if (exec.kinds.includes(Settled.INPUT)) rejected++;
        if (exec.kinds.includes(Settled.CANCELLED)) cancelled++;
        if (scenario.workers > 1) stolen++;
        const v = checkGraphExecution(scenario, exec);
        if (v.length > 0) throw new Error(describeViolations(v));
      }),
      { seed, numRuns: path === undefined ? RUNS : 1, path },
    );
    const seconds = (performance.now() - started) / 1000;
    console.log(
      `lincheck graph random [${runtime}]: seed ${seed}; ${runs} interleavings (${result.numShrinks} shrinks) ` +
        `of ${scenarios.size} distinct scenarios, ${steps} steps; ${rejected} with a node rejected by its input, ` +
        `${cancelled} with a node cancelled, ${stolen} with 2-3 workers; ${seconds.toFixed(1)} s`,
    );
    if (result.failed) {
      const [scenario, schedule] = result.counterexample!;
      const exec = h.run(scenario, scheduleChooser(GRAPH, schedule));
      throw new Error(
        `lincheck graph random: the shipped code failed; ` +
          `replay: FILCH_LINCHECK_SEED=${result.seed} FILCH_LINCHECK_PATH='${result.counterexamplePath}'\n` +
          `scenario: ${describeGraphScenario(scenario)}\nscenario (JSON): ${JSON.stringify(scenario)}\n` +
          `schedule (JSON): ${JSON.stringify(schedule)}\n` +
          `violations: ${describeViolations(checkGraphExecution(scenario, exec))}\n` +
          formatGraphTable(scenario, exec),
      );
    }
    if (path === undefined && RUNS >= 200) {
      assert(rejected > 0 && cancelled > 0, `rejected ${rejected}, cancelled ${cancelled}`);
    }
  },
  300_000,
);

test(
  "graph systematic mode: every schedule within each named scenario's preemption bound satisfies every oracle",
  async () => {
    const h = await shared;
    try {
      const { failures } = runSystematic({
        label: "lincheck graph systematic",
        scenarios: GRAPH_SCENARIOS,
        bound: ({ preemptions = 1 }) => preemptions + EXTRA,
        exploreOne: exploreModel(h, formatGraphTable),
        describe: describeGraphScenario,
        nameWidth: 38,
      });
      assertEquals(failures, [], "no schedule breaks an oracle");
    } finally {
      await h.close();
    }
  },
  300_000,
);
