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
  "lib/protocol/levels.ts": [
    "tests/protocol/levels_test.ts",
    "tests/protocol/levels_quota_test.ts",
    "tests/pool/priority_test.ts",
    "tests/lincheck/levels_test.ts",
  ],
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
  "lib/protocol/producers.ts": [
    "tests/protocol/producers_test.ts",
    "tests/protocol/producer_slots_test.ts",
    "tests/pool/fair_share_test.ts",
    "tests/lincheck/producers_test.ts",
  ],
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
  // Left out: tests/lincheck/producers_test.ts (the record wait's shared side, lib/protocol/producers.ts:
  // it imports nothing of lib/producer/, so it cannot kill a mutant of backlog.ts; its random mode cost
  // every survivor 9 s).
  "lib/producer/backlog.ts": [
    "tests/producer/backlog_test.ts",
    "tests/pool/backlog_test.ts",
    "tests/pool/fair_share_test.ts",
  ],
  "lib/producer/ledger.ts": [
    "tests/producer/ledger_test.ts",
    "tests/lincheck/room_wait_test.ts",
    "tests/pool/producer_stats_test.ts",
    "tests/pool/events_test.ts",
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
  // protocol/levels_test.ts and levels_quota_test.ts ("levels: …", unit, first: 1 s), priority_test.ts (3 s);
  // lincheck/levels_test.ts (14 s) less its first harness test (trace mode) and the mutants test (it loads
  // the kept mutants as variants, none in a mutation run).
  "lib/protocol/levels.ts":
    "/^(levels: |levels harness: a starving|levels (random|systematic) mode|one worker|no starvation|two workers|runMany and map|priority: )/",
  // protocol/producers_test.ts ("producers: …") and producer_slots_test.ts ("slots: …"), unit, first (2 s);
  // pool/fair_share_test.ts (1 s); lincheck/producers_test.ts's harness test and random mode (8 s), less its
  // systematic mode (93 s alone, more than the rest together: every survivor would pay it).
  "lib/protocol/producers.ts": "/^(producers: |slots: |fair share |producers harness|producers random mode)/",
  // producer/backlog_test.ts ("backlog: …", unit, first), pool/backlog_test.ts's model check and its two
  // trim tests (its mutants test skips itself in a mutation run), pool/fair_share_test.ts (a pool whose
  // producer waits for a record).
  "lib/producer/backlog.ts": "/^(backlog: |waiting entries |an emptied backlog |fair share )/",
  // producer/ledger_test.ts ("ledger: …", unit, first); lincheck/room_wait_test.ts's harness test and
  // random mode (the shipped ledger's shared pending word under generated interleavings), less its
  // systematic mode; pool/producer_stats_test.ts's counts test (the slot's counts line) and
  // pool/events_test.ts's drain test (drain() in a pool), less the rest of their files (worker deaths).
  "lib/producer/ledger.ts":
    "/^(ledger: |room-wait harness|room-wait random mode|stats.. counts every|events on deno: drain comes)/",
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
