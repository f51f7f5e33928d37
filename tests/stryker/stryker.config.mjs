/**
 * StrykerJS's configuration for one target file, named by the environment variable `FILCH_STRYKER_TARGET`
 * (the driver `tests/stryker/run.mjs` sets it; the table is `targets.mjs`).
 *
 * - The command runner runs the file's focused Deno suites (no coverage analysis: every mutant runs them
 *   all, so a target's cost is its mutants × its suites' time).
 * - Concurrency 1: the machine is shared, and the suites are themselves multi-threaded.
 * - Incremental, with the file kept in the repository: a later run re-tests only the mutants whose code
 *   changed. The command runner knows no test files, so a change to the suites alone does not re-run
 *   anything: pass `--force` to the driver after one.
 * - Timeouts generous (twice the dry run, plus a minute): a lincheck suite under load takes tens of seconds; a mutant
 *   that hangs the suite counts as a timeout (detected, as Stryker counts it).
 *
 * @module
 */
import { commandFor, incrementalFileFor, reportFileFor } from "./targets.mjs";

const target = process.env.FILCH_STRYKER_TARGET;
if (target === undefined) throw new Error("FILCH_STRYKER_TARGET is not set: run tests/stryker/run.mjs");

/** @type {import("@stryker-mutator/api/core").PartialStrykerOptions} */
export default {
  testRunner: "command",
  commandRunner: { command: commandFor(target) },
  mutate: [target],
  concurrency: 1,
  incremental: true,
  incrementalFile: incrementalFileFor(target),
  timeoutMS: 60_000,
  timeoutFactor: 2,
  disableTypeChecks: false,
  // Stryker rewrites the named tsconfig's paths that leave the sandbox with TypeScript's JS API, which the
  // project's TypeScript 7 (the native port) does not have; tsconfig.json has no such paths, so name none.
  tsconfigFile: "tests/stryker/no-tsconfig.json",
  checkers: [],
  reporters: ["clear-text", "progress-append-only", "json"],
  jsonReporter: { fileName: reportFileFor(target) },
  clearTextReporter: { allowColor: false, logTests: false },
  cleanTempDir: true,
  ignorePatterns: ["dist", "tests/stryker/.reports", "tests/stryker/incremental", "*.log"],
  thresholds: { high: 90, low: 80, break: null },
};
