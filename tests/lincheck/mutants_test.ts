/**
 * The suite must catch every known deque bug of DESIGN.md. Each mutant (tests/mutants/mutants.ts) is a
 * patched copy of lib/protocol/deque.ts run under the same controlled scheduler; the random mode hunts it from
 * several seeds, and the test prints which oracle caught it and after how many interleavings. Replay is
 * tested too: a fast-check (seed, path) and a recorded counterexample must fail again on their mutant.
 */
import fc from "fast-check";
import { RECORDED } from "./models/deque/counterexamples.ts";
import { checkExecution } from "./models/deque/oracles.ts";
import { describeScenario, scheduleChooser } from "./models/deque/scenario.ts";
import { config } from "./kernel/env.ts";
import { huntMutant, type MutantHunt, randomProperty, type RandomStats, startHarness } from "./models/deque/suite.ts";
import { MUTANTS } from "../mutants/mutants.ts";
import { assert, assertEquals, runtime, test } from "../_test.ts";

const SEEDS = 5;
const MAX_RUNS = 20_000;
/** One harness (4 workers, every mutant loaded) for the whole file; the last test closes it. */
const shared = startHarness(true);

test(
  "mutants: the random mode catches every known deque bug, and says which oracle and after how many interleavings",
  async () => {
    const { seed } = config();
    const harness = await shared;
    {
      const rows: string[] = [];
      const missed: string[] = [];
      const minimal: string[] = [];
      for (let m = 0; m < MUTANTS.length; m++) {
        const hunts: MutantHunt[] = [];
        for (let s = 0; s < SEEDS; s++) {
          hunts.push(huntMutant(harness, m + 1, MUTANTS[m].name, seed + s, MAX_RUNS, s === 0));
        }
        const caught = hunts.filter((h) => h.caught);
        if (caught.length < SEEDS) missed.push(`${MUTANTS[m].name} (${SEEDS - caught.length} of ${SEEDS} seeds)`);
        const counts = caught.map((h) => h.interleavings).sort((a, b) => a - b);
        const oracles = [...new Set(caught.map((h) => h.oracle))].join(", ");
        const first = hunts[0];
        const min = first.minimal;
        rows.push(
          `  ${MUTANTS[m].name.padEnd(34)} ${oracles.padEnd(28)} ` +
            `${String(first.interleavings).padStart(6)} ${
              `${counts[0]}/${counts[counts.length >> 1]}/${counts[counts.length - 1]}`.padStart(18)
            }  ${first.shrunkOracles.join("+")} (${first.shrinks} shrinks)` +
            (min
              ? `; minimal: ${min.scenario.thieves.length + 1} threads, ${min.preemptions} preemption${
                min.preemptions === 1 ? "" : "s"
              }`
              : ""),
        );
        if (min) {
          minimal.push(
            `--- ${MUTANTS[m].name}: ${MUTANTS[m].bug}\n` +
              `minimal counterexample (${min.preemptions} preemption${
                min.preemptions === 1 ? "" : "s"
              }, found in ${min.runs} systematic runs; ` +
              `trace ${min.tracePath}):\n${min.text}`,
          );
        }
      }
      console.log(
        `lincheck mutants [${runtime}]: seeds ${seed}..${seed + SEEDS - 1}, at most ${MAX_RUNS} interleavings each\n` +
          `  ${"mutant".padEnd(34)} ${"caught first by".padEnd(28)} ${"seed0".padStart(6)} ${
            "min/median/max".padStart(18)
          }  fast-check's shrunk counterexample fails; minimized\n` + rows.join("\n"),
      );
      // Every mutant's minimal failing interleaving, as a developer sees it.
      console.log(minimal.join("\n\n"));
      assertEquals(missed, [], "every mutant is caught from every seed");
    }
  },
  600_000,
);

test("replay: a mutant's failing run replays from its fast-check seed and path", async () => {
  const { seed } = config();
  const harness = await shared;
  {
    const variant = 1 + MUTANTS.findIndex((m) => m.name === "pop_no_restore_bottom");
    const stats = (): RandomStats => ({ runs: 0, steps: 0, scenarios: new Set(), notAtomicHalf: 0, overHalf: 0 });
    const first = fc.check(randomProperty(harness, variant, stats()), { seed, numRuns: MAX_RUNS });
    assert(first.failed, "the mutant is caught");
    const again = fc.check(randomProperty(harness, variant, stats()), {
      seed: first.seed,
      path: first.counterexamplePath!,
      numRuns: 1,
      endOnFailure: true,
    });
    assert(again.failed, `replaying seed ${first.seed} path ${first.counterexamplePath} fails again`);
    assertEquals(again.counterexample, first.counterexample, "the replayed counterexample is the recorded one");
    console.log(`lincheck replay [${runtime}]: seed ${first.seed} path ${first.counterexamplePath} fails again`);
  }
}, 300_000);

test("replay: each recorded counterexample fails again on its mutant and passes on the shipped deque", async () => {
  const harness = await shared;
  try {
    for (const r of RECORDED) {
      const variant = 1 + MUTANTS.findIndex((m) => m.name === r.mutant);
      assert(variant > 0, `mutant ${r.mutant} exists`);
      const bad = checkExecution(harness.run(r.scenario, scheduleChooser(r.schedule), variant), r.scenario);
      assert(
        bad.some((v) => v.oracle === r.oracle),
        `${r.mutant}: ${describeScenario(r.scenario)} under ${JSON.stringify(r.schedule)} fails ${r.oracle}`,
      );
      const good = checkExecution(harness.run(r.scenario, scheduleChooser(r.schedule), 0), r.scenario);
      assertEquals(good, [], `the shipped deque passes ${describeScenario(r.scenario)}`);
    }
    console.log(
      `lincheck replay [${runtime}]: ${RECORDED.length} recorded counterexamples fail again on their mutants`,
    );
  } finally {
    await harness.close();
  }
}, 300_000);
