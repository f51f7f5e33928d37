/**
 * Starts the sleep/latch harness with the shipped `lib/protocol/sleep.ts` and `lib/protocol/latch.ts` as variant 0 and each
 * sleep/latch mutant after it (in `SLEEP_MUTANTS` order): a mutant of one module runs with the other
 * module shipped.
 *
 * @module
 */

import {
  materializeMutant,
  removeMaterializedMutants,
  SHIPPED_LATCH,
  SHIPPED_SLEEP,
  SLEEP_MUTANTS,
} from "../mutants/mutants.ts";
import { MUTATION_RUN } from "../mutants/mutation_run.ts";
import { SleepHarness, type SVariant } from "./sleep_harness.ts";

/** The harness, variant 0 shipped, variant k the k-th sleep/latch mutant. */
export async function startSleepHarness(): Promise<SleepHarness> {
  const variants: SVariant[] = [{ sleep: SHIPPED_SLEEP, latch: SHIPPED_LATCH }];
  // In the mutation run the shipped module itself carries the mutant: no others beside it.
  for (const m of MUTATION_RUN ? [] : SLEEP_MUTANTS) {
    const url = materializeMutant(m);
    variants.push(
      m.module === "latch.ts" ? { sleep: SHIPPED_SLEEP, latch: url } : { sleep: url, latch: SHIPPED_LATCH },
    );
  }
  return await SleepHarness.start(variants, removeMaterializedMutants);
}
