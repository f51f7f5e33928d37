/**
 * Whether this process runs a check for the mutation run (`tests/mutants/run.ts`), which sets
 * `FILCH_MUTATION_RUN=1` for the checks it runs on a scratch copy whose real file carries a mutant.
 *
 * In that run the suites' own mutant machinery must stand aside: a mutant test would fail for the wrong
 * reason (its patches no longer match the mutated file), and a harness that loads every mutant beside the
 * shipped module could not build them. So `tests/_test.ts` leaves out the tests whose names say "mutant",
 * and the harnesses start with the shipped variant alone. `npm test` never sets it.
 *
 * @module
 */

/** True in a check run by the mutation run. */
export const MUTATION_RUN: boolean =
  (globalThis as { process?: { env: Record<string, string | undefined> } }).process?.env.FILCH_MUTATION_RUN === "1";
