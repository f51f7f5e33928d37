/**
 * Stress mode of the linearizability suite: the shipped deque on real parallel Workers (no scheduler),
 * in short rounds from fresh deques (1 owner with 1 or 2 thieves); each round's timestamped history is checked for no duplicates,
 * conservation and linearizability (see tests/lincheck/stress.ts).
 */
import { materializeMutant, MUTANTS, removeMaterializedMutants, SHIPPED_DEQUE } from "../mutants/mutants.ts";
import { runStress } from "./models/deque/stress.ts";
import { config } from "./kernel/env.ts";
import { assert, runtime, test } from "../_test.ts";

test(
  "stress mode: timestamped histories of real parallel rounds are conservative, duplicate-free and linearizable",
  async () => {
    const { seed, stressRounds } = config();
    const started = performance.now();
    const out = await runStress({
      variant: SHIPPED_DEQUE,
      rounds: stressRounds,
      thieves: 2,
      seed,
      minOverlapping: stressRounds * 3,
      maxSeconds: 60,
    });
    const seconds = (performance.now() - started) / 1000;
    console.log(
      `lincheck stress [${runtime}]: seed ${seed}; ${out.rounds} rounds of 1 owner + 1 or 2 thieves on real Workers, ` +
        `${out.operations} operations (${out.overlapping} = ${(100 * out.overlapping / out.operations).toFixed(1)}% ` +
        `overlapped another thread's; rounds go on past ${stressRounds} until ${stressRounds * 3} did, or 60 s), ` +
        `${seconds.toFixed(1)} s; ` +
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

test("stress mode on the mutants (informational: real-thread timing decides, so nothing is asserted)", async () => {
  const { seed } = config();
  const rounds = 1_000;
  const rows: string[] = [];
  for (const m of MUTANTS) {
    const variant = materializeMutant(m);
    const out = await runStress({ variant, rounds, thieves: 2, seed });
    rows.push(
      `  ${m.name.padEnd(34)} ${
        out.failure
          ? `caught in round ${out.failure.round + 1} by ${out.failure.violations[0].oracle}`
          : `not caught in ${out.rounds} rounds`
      }`,
    );
  }
  removeMaterializedMutants();
  console.log(`lincheck stress mutants [${runtime}]: seed ${seed}, at most ${rounds} rounds each\n${rows.join("\n")}`);
}, 300_000);
