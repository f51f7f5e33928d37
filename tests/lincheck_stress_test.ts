/**
 * Stress mode of the linearizability suite: the shipped deque on real parallel Workers (no scheduler),
 * in short rounds from fresh deques; each round's timestamped history is checked for no duplicates,
 * conservation and linearizability (see tests/lincheck/stress.ts).
 */
import { SHIPPED_DEQUE } from "./mutants/mutants.ts";
import { runStress } from "./lincheck/stress.ts";
import { config } from "./lincheck/suite.ts";
import { assert, runtime, test } from "./_test.ts";

test(
  "stress mode: timestamped histories of real parallel rounds are conservative, duplicate-free and linearizable",
  async () => {
    const { seed, stressRounds } = config();
    const started = performance.now();
    const out = await runStress({ variant: SHIPPED_DEQUE, rounds: stressRounds, thieves: 2, seed });
    const seconds = (performance.now() - started) / 1000;
    console.log(
      `lincheck stress [${runtime}]: seed ${seed}; ${out.rounds} rounds of 1 owner + 2 thieves on real Workers, ` +
        `${out.operations} operations (${out.overlapping} overlapped another thread's), ${seconds.toFixed(1)} s; ` +
        `advisory: ${out.notAtomicHalf} rounds linearizable only with stealHalf as separate steals, ` +
        `${out.overHalf} where it took more than half`,
    );
    assert(
      out.failure === undefined,
      `round ${out.failure?.round}: ${
        out.failure?.violations.map((v) => `[${v.oracle}] ${v.detail}`).join("; ")
      }\n  ${out.failure?.history}`,
    );
  },
  300_000,
);
