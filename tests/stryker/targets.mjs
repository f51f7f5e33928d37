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
  // Left out: tests/lincheck/random_test.ts (over a minute alone on the unmutated file; the systematic
  // mode covers the same scenarios' small schedules in 8 s) and deque_stress_test.ts (real threads, timing).
  // cut_short_test.ts is the only suite that reaches repair() and the notes.
  "lib/protocol/deque.ts": [
    "tests/protocol/deque_model_test.ts",
    "tests/protocol/deque_test.ts",
    "tests/protocol/deque_bad_input_test.ts",
    "tests/protocol/cut_short_test.ts",
    "tests/lincheck/systematic_test.ts",
  ],
  "lib/protocol/producers.ts": ["tests/lincheck/producers_test.ts"],
  "lib/protocol/slots.ts": [
    "tests/protocol/slots_test.ts",
    "tests/lincheck/elastic_test.ts",
    "tests/pool/elastic_test.ts",
  ],
  "lib/protocol/memory.ts": [
    "tests/protocol/memory_test.ts",
    "tests/protocol/producer_slots_test.ts",
    "tests/protocol/record_words_test.ts",
    "tests/pool/pool_test.ts",
  ],
  "lib/protocol/layout.ts": [
    "tests/protocol/layout_test.ts",
    "tests/protocol/memory_test.ts",
    "tests/protocol/record_words_test.ts",
    "tests/pool/pool_test.ts",
  ],
  // The owner's side of producer links: the slot unit tests first (fast, and they pin the sums over every
  // slot), then the pool tests that open, use, close and terminate producers in other threads.
  "lib/owner/links.ts": [
    "tests/owner/links_test.ts",
    "tests/protocol/producer_slots_test.ts",
    "tests/pool/producer_stats_test.ts",
    "tests/pool/inner_producer_test.ts",
    "tests/pool/producers_test.ts",
  ],
  // The sweep after a producer's death: its unit tests first, then the death tests of the other suites.
  "lib/owner/producer_deaths.ts": [
    "tests/owner/producer_deaths_test.ts",
    "tests/protocol/recovery_paths_test.ts",
    "tests/protocol/producer_slots_test.ts",
    "tests/pool/producer_stats_test.ts",
    "tests/pool/producers_test.ts",
  ],
};

/** The filter of `memory.ts` and `layout.ts` (see {@link FILTER}). */
const POOL_MEMORY_FILTER = "/^(every |slots: |each |the |another |a shape |a size |a capacity |a region|a pool " +
  "without|a worker or producer slot|sync and async task functions|payloads larger than a record|several " +
  "producers submitting)/";

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
  // The layout and the views opened on it: every test of the unit files (protocol/memory_test.ts,
  // layout_test.ts, producer_slots_test.ts, record_words_test.ts), then three short pool tests of
  // pool/pool_test.ts that cross every region a pool uses (codecs through records, overflow blocks, several
  // producers' completions); the rest of pool_test.ts (a million tasks, deaths) adds minutes to every
  // survivor and reaches no view the unit tests do not pin.
  "lib/protocol/memory.ts": POOL_MEMORY_FILTER,
  "lib/protocol/layout.ts": POOL_MEMORY_FILTER,
  // Every test of the unit files (owner/links_test.ts "links: …", producer_slots_test.ts "slots: …"),
  // producer_stats_test.ts ("stats…") and inner_producer_test.ts ("a task…", "poolHandle…"); of
  // pool/producers_test.ts (70 s whole) the tests that open, refuse, use and close links. Left out: the
  // 8 × 5,000-task throughput test, the room and fairness tests (the room's waits, not the links), close()
  // and terminate() while 8 producers submit (15 s together; links_test.ts pins stateChanged's store and
  // wakes) and the random kills (producer_deaths.ts's suite): ~20 s on the unmutated file instead of ~75.
  "lib/owner/links.ts": "/^(links: |slots: |stats|a task|poolHandle|a producer.s slot comes back|a handle is " +
    "refused|a producer thread has the submitting API)/",
  // The producer death tests: every test of owner/producer_deaths_test.ts ("deaths: …"), recovery_paths's
  // sweep racing a worker's claim, producer_slots's dead last slot, producer_stats's abandoned tasks and
  // producers_test's random kills (7 s); the rest of those suites never lets a producer die.
  "lib/owner/producer_deaths.ts": "/^(deaths: |class 7: a producer|slots: the last slot given back|stats\\(\\): a " +
    "producer thread that dies|producers killed at random)/",
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
