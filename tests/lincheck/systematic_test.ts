/**
 * Systematic mode of the linearizability suite: for each small named scenario, every schedule with at
 * most two preemptions, on the shipped deque (all must pass every oracle) and on each mutant (each must
 * be caught by at least one scenario; the test prints which and after how many schedules).
 */
import { checkExecution } from "./models/deque/oracles.ts";
import { describeScenario, explore, SMALL_SCENARIOS } from "./models/deque/scenario.ts";
import { startHarness } from "./models/deque/suite.ts";
import { MUTANTS } from "../mutants/mutants.ts";
import { runSystematic } from "./kernel/systematic.ts";
import { assertEquals, runtime, test } from "../_test.ts";

const PREEMPTIONS = 2;
const harness = startHarness(true);

test(
  "systematic mode: every schedule with at most 2 preemptions of the small scenarios passes every oracle",
  async () => {
    const h = await harness;
    const { failures } = runSystematic({
      label: "lincheck systematic",
      scenarios: SMALL_SCENARIOS,
      bound: () => PREEMPTIONS,
      exploreOne: (scenario, bound) => {
        const r = explore(h, scenario, 0, bound, (exec) => {
          const v = checkExecution(exec, scenario);
          return v.length === 0 ? null : v.map((x) => `[${x.oracle}] ${x.detail}`).join("; ");
        });
        const failure = r.failure && `schedule ${JSON.stringify(r.failure.schedule)}: ${r.failure.message}`;
        return { schedules: r.schedules, steps: r.steps, failure };
      },
      describe: describeScenario,
      nameWidth: 24,
      header: PREEMPTIONS,
      stepsWord: "shared accesses",
    });
    assertEquals(failures, [], "no schedule breaks an oracle");
  },
  600_000,
);

test("systematic mode: every mutant is caught by some small scenario within 2 preemptions", async () => {
  const h = await harness;
  try {
    const rows: string[] = [];
    const missed: string[] = [];
    for (let m = 0; m < MUTANTS.length; m++) {
      let found = "";
      let tried = 0;
      for (const { name, scenario } of SMALL_SCENARIOS) {
        let oracle = "";
        const r = explore(h, scenario, m + 1, PREEMPTIONS, (exec) => {
          const v = checkExecution(exec, scenario);
          if (v.length > 0) oracle = v[0].oracle;
          return v.length === 0 ? null : oracle;
        });
        tried += r.schedules;
        if (r.failure) {
          found = `${name} after ${r.failure.index} schedules (${tried} in all), by ${oracle}; ` +
            `threads per step ${JSON.stringify(r.failure.schedule)}`;
          break;
        }
      }
      if (found === "") missed.push(MUTANTS[m].name);
      rows.push(`  ${MUTANTS[m].name.padEnd(34)} ${found || `NOT CAUGHT in ${tried} schedules`}`);
    }
    console.log(`lincheck systematic mutants [${runtime}]:\n${rows.join("\n")}`);
    assertEquals(missed, [], "every mutant is caught systematically");
  } finally {
    await h.close();
  }
}, 600_000);
