/**
 * Random mode of the linearizability suite: fast-check generates scenarios (one owner, two or three
 * thieves, two to six operations each, capacity 2 or 4) and schedules, and the shipped `lib/protocol/deque.ts`
 * runs each under the controlled scheduler with every oracle checked (see tests/lincheck/README.md).
 *
 * Counts and the seed are printed. Replay a failure with the printed FILCH_LINCHECK_SEED and
 * FILCH_LINCHECK_PATH.
 */
import fc from "fast-check";
import { config } from "./kernel/env.ts";
import {
  minimalCounterexample,
  randomProperty,
  type RandomStats,
  reportCounterexample,
  startHarness,
  variantOf,
} from "./models/deque/suite.ts";
import { runtime, test } from "../_test.ts";

test(
  "random mode: generated scenarios under generated interleavings satisfy every oracle on lib/protocol/deque.ts",
  async () => {
    const { seed, runs, path, mutant } = config();
    const variant = variantOf(mutant);
    const harness = await startHarness(mutant !== undefined);
    const stats: RandomStats = { runs: 0, steps: 0, scenarios: new Set(), notAtomicHalf: 0, overHalf: 0 };
    const started = performance.now();
    try {
      const result = fc.check(randomProperty(harness, variant, stats), {
        seed,
        numRuns: path === undefined ? runs : 1,
        path,
      });
      const seconds = (performance.now() - started) / 1000;
      console.log(
        `lincheck random [${runtime}]${mutant ? ` MUTANT ${mutant}` : ""}: seed ${seed}${
          path ? ` path ${path}` : ""
        }; ${stats.runs} interleavings ` +
          `(${result.numRuns} passed generation, ${result.numShrinks} shrinks) of ${stats.scenarios.size} distinct ` +
          `scenarios, ${stats.steps} shared accesses, ${seconds.toFixed(1)} s (${
            (stats.runs / seconds).toFixed(0)
          }/s); ` +
          `advisory: ${stats.notAtomicHalf} runs linearizable only with stealHalf as separate steals, ` +
          `${stats.overHalf} where it took more than half`,
      );
      if (result.failed) {
        const [scenario, schedule] = result.counterexample!;
        const rep = reportCounterexample(harness, variant, scenario, schedule, `random-seed${seed}`, {
          seed: result.seed,
          path: result.counterexamplePath,
        });
        const min = minimalCounterexample(harness, variant, scenario, `random-seed${seed}`, { seed: result.seed });
        throw new Error(
          `lincheck random: ${
            mutant ? `mutant ${mutant}` : "the shipped deque"
          } failed after ${stats.firstFailure?.run} interleavings; ` +
            `replay: FILCH_LINCHECK_SEED=${result.seed} FILCH_LINCHECK_PATH='${result.counterexamplePath}'\n` +
            `trace: ${rep.tracePath}\n${rep.text}\n\n` +
            (min === null
              ? "no schedule with <= 2 preemptions of that scenario fails (the minimizer found nothing smaller)"
              : `minimal counterexample (${min.preemptions} preemptions; trace ${min.tracePath}):\n${min.text}`),
        );
      }
    } finally {
      await harness.close();
    }
  },
  600_000,
);
