/**
 * The table of the StrykerJS run (`npm run stryker`): each target file, with the focused suites whose
 * failure kills a mutant of it. One place, read by the config (`stryker.config.mjs`) and the driver
 * (`run.mjs`).
 *
 * Every command runs under Deno from node_modules, with `FILCH_MUTATION_RUN=1`: the suites' own mutant
 * tests read the shipped file as text to patch it, and in Stryker's sandbox that file is the instrumented
 * one, so they would fail for the wrong reason (the same rule as `tests/mutants/run.ts`). `--fail-fast`
 * stops at the first failing test: a killed mutant costs one failure, not the whole suite.
 *
 * @module
 */

const deno = "FILCH_MUTATION_RUN=1 node_modules/.bin/deno test -A --no-check --fail-fast --quiet";

/**
 * Target file (relative to the repository's root) → the test files that are its focused suites.
 * @type {Record<string, string[]>}
 */
export const TARGETS = {
  "lib/protocol/latch.ts": ["tests/protocol/latch_test.ts", "tests/lincheck/sleep_test.ts", "tests/pool/join_test.ts"],
  "lib/protocol/kill_guard.ts": [
    "tests/protocol/kill_guard_test.ts",
    "tests/lincheck/kill_guard_test.ts",
    "tests/pool/force_test.ts",
  ],
  "lib/protocol/sleep.ts": ["tests/protocol/sleep_test.ts", "tests/lincheck/sleep_test.ts"],
  "lib/protocol/levels.ts": ["tests/lincheck/levels_test.ts", "tests/pool/priority_test.ts"],
  "lib/protocol/injector.ts": ["tests/lincheck/queue_test.ts", "tests/protocol/cut_short_test.ts"],
  "lib/protocol/deque.ts": [
    "tests/protocol/deque_model_test.ts",
    "tests/protocol/deque_bad_input_test.ts",
    "tests/lincheck/systematic_test.ts",
    "tests/lincheck/random_test.ts",
  ],
  "lib/protocol/producers.ts": ["tests/lincheck/producers_test.ts"],
  // The room wait (maxQueue): the unit tests first (room_test, slots, the fair share), then the pool's
  // backpressure tests (4 s), then the room-wait harness (10 s: both sides of the handshake, spec/RoomWait.tla).
  "lib/producer/room.ts": [
    "tests/producer/room_test.ts",
    "tests/protocol/producer_slots_test.ts",
    "tests/pool/fair_share_test.ts",
    "tests/pool/backpressure_test.ts",
    "tests/lincheck/room_wait_test.ts",
  ],
  // A worker's held marks and their repairs: the unit suites only (marks_test, recovery_paths, cut_short: 1 s). Left
  // out: tests/pool/death_test.ts (46 s on the unmutated file: too slow for ~200 mutants) and the pool's
  // fork-join tests (join_test 8 s); leaving them out can only lower the score.
  "lib/worker/marks.ts": [
    "tests/worker/marks_test.ts",
    "tests/protocol/recovery_paths_test.ts",
    "tests/protocol/cut_short_test.ts",
  ],
};

/**
 * Which tests of a target's suites run, as a Deno `--filter` regex on their names (Deno's regexes have no
 * lookahead, so the kept tests are named, not the left-out ones). Left out: the harness's trace-mode tests,
 * which name each access by the `// spec:` comment on the line of lib/ that made it. StrykerJS's
 * instrumented file has other lines, so in its sandbox they fail on the unmutated code (and the dry run
 * with them). Leaving them out can only lower a score: they are exact step tables that would kill more.
 * @type {Record<string, string>}
 */
export const FILTER = {
  // lincheck/kill_guard_test.ts less "kill-guard harness: …" (trace mode); every test of
  // protocol/kill_guard_test.ts (they start "a ") and of force_test.ts.
  "lib/protocol/kill_guard.ts": "/^(kill-guard (random|systematic) mode|a |without force|force must|forced kills)/",
};

/**
 * The shell command that runs `file`'s focused suites.
 * @param {string} file A key of {@link TARGETS}.
 * @returns {string}
 */
export function commandFor(file) {
  const tests = TARGETS[file];
  if (tests === undefined) throw new Error(`no StrykerJS target ${file}: add it to tests/stryker/targets.mjs`);
  const filter = FILTER[file] === undefined ? "" : ` --filter '${FILTER[file]}'`;
  return `${deno}${filter} ${tests.join(" ")}`;
}

/**
 * The incremental file of `file`, kept in the repository: a later run re-tests only the mutants whose
 * code changed.
 * @param {string} file A key of {@link TARGETS}.
 * @returns {string}
 */
export function incrementalFileFor(file) {
  return `tests/stryker/incremental/${file.replace(/^lib\//, "").replaceAll("/", "_").replace(/\.ts$/, "")}.json`;
}

/**
 * The JSON report of `file`'s last run (not kept: the incremental file holds what a later run needs).
 * @param {string} file A key of {@link TARGETS}.
 * @returns {string}
 */
export function reportFileFor(file) {
  return `tests/stryker/.reports/${file.replace(/^lib\//, "").replaceAll("/", "_").replace(/\.ts$/, "")}.json`;
}

/**
 * The triage file of `file`'s surviving mutants (equivalent, or a known hole, each with its reason), kept
 * in the repository, one a target.
 * @param {string} file A key of {@link TARGETS}.
 * @returns {string}
 */
export function triageFileFor(file) {
  return `tests/stryker/triage/${file.replace(/^lib\//, "").replaceAll("/", "_").replace(/\.ts$/, "")}.json`;
}
