/**
 * The sleep/wake protocol (the worker loop's path to sleep: `Sleep.idle`, then `sleep`; posters'
 * `newWork` and `wakeAll`) and the join latch (`setLatch` against `latchIsSet` / `waitLatch`), the shipped
 * `lib/protocol/sleep.ts` and `lib/protocol/latch.ts`, under controlled interleavings with blocking waits modelled (see
 * tests/lincheck/README.md, "Sleep/wake and the latch"). Random mode, systematic mode, every mutant caught
 * with its minimal counterexample, and the recorded counterexamples replayed.
 *
 * Environment: FILCH_LINCHECK_SEED (default 20261121), FILCH_LINCHECK_SLEEP_RUNS (random-mode runs,
 * default 3000), FILCH_LINCHECK_SLEEP_HUNT (most random runs per mutant hunt, default 3000),
 * FILCH_LINCHECK_SLEEP_PREEMPTIONS (systematic bound, default 2), FILCH_LINCHECK_SLEEP_MUTANT (run the random
 * mode on this mutant instead, to see its report), FILCH_LINCHECK_PATH (with the seed: replay one run),
 * FILCH_LINCHECK_SLEEP_LONG=1 (the systematic mode explores the larger scenarios too).
 */
import fc from "fast-check";
import {
  checkSleepExecution,
  describeSAccess,
  describeSleepScenario,
  formatSleepTable,
  SLEEP,
  SLEEP_SCENARIOS,
  SLEEP_SCENARIOS_LONG,
  type SleepScenario,
  sleepScenarioArbitrary,
} from "./models/sleep/model.ts";
import { exploreModel, runSystematic } from "./kernel/systematic.ts";
import { Harness, huntMutant, replayChooser, scheduleArbitrary, scheduleChooser } from "./kernel/harness.ts";
import { State } from "./kernel/words.ts";
import { SLEEP_RECORDED } from "./models/sleep/counterexamples.ts";
import { config, describeViolations, intEnv, mutantFromEnv } from "./kernel/env.ts";
import { SLEEP_MUTANTS } from "../mutants/mutants.ts";
import { assert, assertEquals, runtime, test } from "../_test.ts";

const RUNS = intEnv("FILCH_LINCHECK_SLEEP_RUNS", 15_000, 0);
const HUNT = intEnv("FILCH_LINCHECK_SLEEP_HUNT", 3000, 0);
const PREEMPTIONS = intEnv("FILCH_LINCHECK_SLEEP_PREEMPTIONS", 2, 0);
const LONG = intEnv("FILCH_LINCHECK_SLEEP_LONG", 0, 0) === 1;
/** One harness (4 threads, the shipped modules and every mutant loaded) for the whole file; the last test closes it. */
const shared = Harness.start(SLEEP);

const describe = describeViolations;

test(
  "sleep harness: a wait blocks until a notify on its word; a timed wait times out only when the schedule says so",
  async () => {
    const h = await shared;
    const latch: SleepScenario = { kind: "latch" };
    // Joiner: read UNSET, wait (blocks); time it out; read UNSET, wait (blocks); then the finisher runs.
    const exec = h.run(latch, replayChooser(SLEEP, [0, 0, 4, 0, 0, 1, 1]), 0);
    const rows = exec.accesses.map((a) => describeSAccess(latch, a));
    assertEquals(rows, [
      "load latch → 0",
      "wait latch=0 (timed) → BLOCKS",
      "wait latch times out",
      "load latch → 0",
      "wait latch=0 (timed) → BLOCKS",
      "xchg latch 1 → 0",
      "notify latch → wakes joiner",
      "load latch → 1",
    ], "the steps");
    assertEquals(checkSleepExecution(latch, exec), [], "no oracle breaks");
    // Without a timeout choice and with the finisher never run first, the run ends when the joiner blocks
    // and the finisher is parked? No: the finisher is runnable, so the default continues with it.
    const plain = h.run(latch, scheduleChooser(SLEEP, [0, 0]), 0);
    assertEquals(plain.accesses.filter((a) => a.fn === -1).length, 0, "no timeout unless chosen");
    assertEquals(plain.states, [State.DONE, State.DONE], "both threads finish");
    // A worker alone with nothing posted ends blocked in sleep, counted, with no oracle broken.
    const lone: SleepScenario = { kind: "sleep", workers: 1, posts: [0], stop: false };
    const asleep = h.run(lone, scheduleChooser(SLEEP, []), 0);
    assertEquals(asleep.blocked.map((b) => b.thread), [0], "the worker sleeps");
    assertEquals(asleep.counters & 0x3ff, 1, "counted as sleeping");
    assertEquals(checkSleepExecution(lone, asleep), [], "no oracle breaks");
  },
  60_000,
);

test(
  "sleep harness: a run whose chooser throws unwinds its threads, so the next run starts clean",
  async () => {
    const h = await shared;
    const s: SleepScenario = { kind: "sleep", workers: 1, posts: [1], stop: false };
    // Step 0 releases the poster; step 1 asks to time out thread 3, which is in no wait: the replay throws
    // with the worker and the poster parked before an access.
    let threw = "";
    try {
      h.run(s, replayChooser(SLEEP, [1, 7]), 0);
    } catch (error) {
      threw = String(error);
    }
    assert(threw.includes("choice 7 impossible at step 1"), `the replay throws: ${threw || "it did not"}`);
    // The same scenario again, run to its end by the default schedule: both threads start from their
    // program's first access (none picks up where the thrown run left it), and every oracle holds.
    const exec = h.run(s, scheduleChooser(SLEEP, []), 0);
    const baseline = h.run(s, scheduleChooser(SLEEP, []), 0);
    assertEquals(exec.accesses, baseline.accesses, "the run after the throw is the run of a clean harness");
    assertEquals(exec.states, [State.BLOCKED, State.DONE], "the worker took the item and sleeps; the poster is done");
    assertEquals(exec.taken[0], 1, "the worker took the one item");
    assertEquals(checkSleepExecution(s, exec), [], "no oracle breaks");
  },
  60_000,
);

test("sleep random mode: generated scenarios under generated interleavings satisfy every oracle", async () => {
  const { seed, path } = config();
  const { mutant, variant } = mutantFromEnv("FILCH_LINCHECK_SLEEP_MUTANT", SLEEP_MUTANTS);
  const h = await shared;
  const started = performance.now();
  let runs = 0;
  let steps = 0;
  let timeouts = 0;
  const scenarios = new Set<string>();
  const result = fc.check(
    fc.property(sleepScenarioArbitrary(), scheduleArbitrary(SLEEP), (scenario, schedule) => {
      const exec = h.run(scenario, scheduleChooser(SLEEP, schedule), variant);
      runs++;
      steps += exec.steps;
      timeouts += exec.accesses.filter((a) => a.fn === -1).length;
      scenarios.add(JSON.stringify(scenario));
      const v = checkSleepExecution(scenario, exec);
      if (v.length > 0) throw new Error(describe(v));
    }),
    { seed, numRuns: path === undefined ? RUNS : 1, path },
  );
  const seconds = (performance.now() - started) / 1000;
  console.log(
    `lincheck sleep random [${runtime}]${mutant ? ` MUTANT ${mutant}` : ""}: seed ${seed}${
      path ? ` path ${path}` : ""
    }; ` +
      `${runs} interleavings (${result.numShrinks} shrinks) of ${scenarios.size} distinct scenarios, ` +
      `${steps} steps (${timeouts} timed-out waits), ${seconds.toFixed(1)} s (${(runs / seconds).toFixed(0)}/s)`,
  );
  if (result.failed) {
    const [scenario, schedule] = result.counterexample!;
    const exec = h.run(scenario, scheduleChooser(SLEEP, schedule), variant, undefined, true);
    throw new Error(
      `lincheck sleep random: ${mutant ? `mutant ${mutant}` : "the shipped code"} failed; ` +
        `replay: FILCH_LINCHECK_SEED=${result.seed} FILCH_LINCHECK_PATH='${result.counterexamplePath}'\n` +
        `scenario (JSON): ${JSON.stringify(scenario)}\nschedule (JSON): ${JSON.stringify(schedule)}\n` +
        `violations: ${describe(checkSleepExecution(scenario, exec))}\n${formatSleepTable(scenario, exec)}`,
    );
  }
}, 300_000);

test(
  "sleep systematic mode: every schedule with at most 2 preemptions of the small scenarios passes every oracle",
  async () => {
    const h = await shared;
    const { failures } = runSystematic({
      label: "lincheck sleep systematic",
      scenarios: LONG ? [...SLEEP_SCENARIOS, ...SLEEP_SCENARIOS_LONG] : SLEEP_SCENARIOS,
      bound: () => PREEMPTIONS,
      exploreOne: exploreModel(h),
      describe: describeSleepScenario,
      nameWidth: 26,
      header: PREEMPTIONS,
    });
    assertEquals(failures, [], "no schedule breaks an oracle");
  },
  300_000,
);

test(
  "sleep mutants: each known sleep/latch bug is caught, by which oracle, with its minimal counterexample",
  async () => {
    const { seed } = config();
    const h = await shared;
    const started = performance.now();
    const rows: string[] = [];
    const minimal: string[] = [];
    const missed: string[] = [];
    for (let m = 0; m < SLEEP_MUTANTS.length; m++) {
      const mutant = SLEEP_MUTANTS[m];
      const variant = m + 1;
      // Systematic: the fewest preemptions first, then the smallest scenario. Random: runs until the first failure.
      const { found: min, explored, random } = huntMutant(h, variant, SLEEP_SCENARIOS, PREEMPTIONS, {
        scenarios: sleepScenarioArbitrary(),
        seed,
        runs: HUNT,
      });
      const randomText = random ? `random: run ${random.run} (${random.oracle})` : `random: NOT caught in ${HUNT}`;
      if (!random) missed.push(`${mutant.name} (random mode, ${HUNT} runs)`);
      if (min === undefined) {
        missed.push(mutant.name);
        rows.push(`  ${mutant.name.padEnd(28)} NOT CAUGHT systematically (${explored} schedules); ${randomText}`);
        continue;
      }
      const oracles = [...new Set(min.violations.map((v) => v.oracle))].join("+");
      rows.push(
        `  ${mutant.name.padEnd(28)} ${oracles.padEnd(26)} ${min.name} (${min.preemptions} preemption${
          min.preemptions === 1 ? "" : "s"
        }, schedule ${min.index} of that bound, ${explored} in all); ${randomText}`,
      );
      const exec = h.run(min.scenario, replayChooser(SLEEP, min.choices), variant, undefined, true);
      minimal.push(
        `--- ${mutant.name} (${mutant.module}): ${mutant.bug}\n` +
          `scenario (JSON): ${JSON.stringify(min.scenario)}\nchoices (JSON): ${JSON.stringify(min.choices)}\n` +
          `violations: ${describe(checkSleepExecution(min.scenario, exec))}\n${formatSleepTable(min.scenario, exec)}`,
      );
    }
    const seconds = (performance.now() - started) / 1000;
    console.log(
      `lincheck sleep mutants [${runtime}]: seed ${seed}, systematic <= ${PREEMPTIONS} preemptions, random hunt <= ${HUNT} runs, ` +
        `${seconds.toFixed(1)} s\n${rows.join("\n")}`,
    );
    console.log(minimal.join("\n\n"));
    assertEquals(missed, [], "every sleep/latch mutant is caught");
  },
  300_000,
);

test(
  "sleep replay: each recorded counterexample fails again on its mutant and passes on the shipped code",
  async () => {
    const h = await shared;
    try {
      for (const r of SLEEP_RECORDED) {
        const variant = 1 + SLEEP_MUTANTS.findIndex((m) => m.name === r.mutant);
        assert(variant > 0, `mutant ${r.mutant} exists`);
        const scenario: SleepScenario = r.scenario;
        const bad = checkSleepExecution(scenario, h.run(scenario, replayChooser(SLEEP, r.choices), variant));
        assert(
          bad.some((v) => v.oracle === r.oracle),
          `${r.mutant}: ${describeSleepScenario(scenario)} under ${JSON.stringify(r.choices)} fails ${r.oracle}: got ${
            describe(bad) || "no violation"
          }`,
        );
        // The shipped code may take a different path under the same choices; replay leniently (past a
        // choice that is impossible there, the chooser's default continues).
        const good = checkSleepExecution(scenario, h.run(scenario, scheduleChooser(SLEEP, r.choices), 0));
        assertEquals(good, [], `the shipped code passes ${describeSleepScenario(scenario)}`);
      }
      console.log(
        `lincheck sleep replay [${runtime}]: ${SLEEP_RECORDED.length} recorded counterexamples fail again on their mutants`,
      );
    } finally {
      await h.close();
    }
  },
  120_000,
);
