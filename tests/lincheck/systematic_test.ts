/**
 * Systematic mode of the linearizability suite: for each small named scenario, every schedule with at
 * most two preemptions, on the shipped deque (all must pass every oracle) and on each mutant (each must
 * be caught by at least one scenario; the test prints which and after how many schedules).
 */
import { checkExecution } from "./models/deque/oracles.ts";
import { describeScenario, explore, SMALL_SCENARIOS } from "./models/deque/scenario.ts";
import { startHarness } from "./models/deque/suite.ts";
import { MUTANTS } from "../mutants/mutants.ts";
import { assertEquals, runtime, test } from "../_test.ts";

const PREEMPTIONS = 2;
const harness = startHarness(true);

test(
  "systematic mode: every schedule with at most 2 preemptions of the small scenarios passes every oracle",
  async () => {
    const h = await harness;
    const started = performance.now();
    const lines: string[] = [];
    const failures: string[] = [];
    let schedules = 0;
    let steps = 0;
    for (const { name, scenario } of SMALL_SCENARIOS) {
      const r = explore(h, scenario, 0, PREEMPTIONS, (exec) => {
        const v = checkExecution(exec, scenario);
        return v.length === 0 ? null : v.map((x) => `[${x.oracle}] ${x.detail}`).join("; ");
      });
      schedules += r.schedules;
      steps += r.steps;
      lines.push(`  ${name.padEnd(24)} ${String(r.schedules).padStart(6)} schedules  ${describeScenario(scenario)}`);
      if (r.failure) failures.push(`${name}: schedule ${JSON.stringify(r.failure.schedule)}: ${r.failure.message}`);
    }
    const seconds = (performance.now() - started) / 1000;
    console.log(
      `lincheck systematic [${runtime}]: ${SMALL_SCENARIOS.length} scenarios, ${schedules} schedules ` +
        `(<= ${PREEMPTIONS} preemptions), ${steps} shared accesses, ${seconds.toFixed(1)} s\n${lines.join("\n")}`,
    );
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
