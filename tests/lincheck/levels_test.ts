/**
 * The priority levels, the shipped `lib/protocol/levels.ts` over three real `lib/protocol/injector.ts`
 * queues — a producer's `pushPatiently` (announce a level other than normal, then push) against one or two
 * workers' `take` (the levels word until a bit is seen, then the quota rule) — under controlled
 * interleavings (see tests/lincheck/README.md, "The priority levels"). The oracles are spec/Levels.tla's
 * properties; random mode, systematic mode, and every levels mutant (tests/mutants/mutants.ts,
 * LEVELS_MUTANTS) caught with its counterexample.
 *
 * Environment: FILCH_LINCHECK_SEED (default 20261121), FILCH_LINCHECK_LEVELS_RUNS (random-mode runs,
 * default 1500), FILCH_LINCHECK_LEVELS_HUNT (most random runs per mutant hunt, default 400),
 * FILCH_LINCHECK_LEVELS_PREEMPTIONS (added to each named scenario's systematic bound, default 0),
 * FILCH_LINCHECK_LEVELS_MUTANT (run the random mode on this mutant instead, to see its report),
 * FILCH_LINCHECK_PATH (with the seed: replay one run).
 */
import fc from "fast-check";
import {
  checkLevelsExecution,
  describeLAccess,
  describeLevelsScenario,
  formatLevelsTable,
  LAddr,
  LEVELS,
  LEVELS_SCENARIOS,
  type LevelsScenario,
  levelsScenarioArbitrary,
  type LExecution,
  type LTake,
  lThreadName,
} from "./models/levels/model.ts";
import { exploreModel, runSystematic } from "./kernel/systematic.ts";
import { Harness, huntMutant, replayChooser, scheduleArbitrary, scheduleChooser } from "./kernel/harness.ts";
import { config, describeViolations, intEnv, mutantFromEnv } from "./kernel/env.ts";
import { LEVELS_MUTANTS } from "../mutants/mutants.ts";
import { assert, assertEquals, runtime, test } from "../_test.ts";

const RUNS = intEnv("FILCH_LINCHECK_LEVELS_RUNS", 1500, 0);
const HUNT = intEnv("FILCH_LINCHECK_LEVELS_HUNT", 400, 0);
const EXTRA = intEnv("FILCH_LINCHECK_LEVELS_PREEMPTIONS", 0, 0);
/** One harness (3 threads, the shipped module and every mutant loaded) for the whole file; the last test closes it. */
const shared = Harness.start(LEVELS);

/**
 * The oracle each mutant's counterexample must break: its TLA+ counterpart's property (spec/check.ts's
 * `expect`; lower_level_peeked_by_popping has none there: the order within a level, TakenInOrder).
 */
const EXPECTED: Readonly<Record<string, readonly string[]>> = {
  level_quota_ignored: ["bounded-overtake"],
  levels_served_low_first: ["no-inversion"],
  level_never_announced: ["conservation"],
  streak_not_restarted: ["no-inversion"],
  lower_level_peeked_by_popping: ["taken-in-order"],
};

const describe = describeViolations;

test(
  "levels harness: with everything published first, one worker takes eight high tasks, then the starving low one, then the rest",
  async () => {
    const h = await shared;
    const s: LevelsScenario = { levels: [2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], workers: 1 };
    // The producer runs to its end (a schedule of its steps alone, past them the next thread), then the worker takes.
    const exec = h.run(s, scheduleChooser(LEVELS, new Array(80).fill(0)), 0, undefined, true);
    const order = exec.takes.map((k) => k.task);
    assertEquals(order, [103, 104, 105, 106, 107, 108, 109, 110, 101, 111, 112, 102], "the order of the takes");
    const rows = exec.accesses.map((a) => `${lThreadName(a.thread)}: ${describeLAccess(a)}`);
    assertEquals(rows.slice(0, 2), [
      "producer: SubmitAnnounceLevel: or levels 4 → 0",
      "producer: PushReadTail: load L.tail → 0",
    ], "the low level is announced before its first push");
    // The take of 101 is the low level's turn (FindStarving): it pops the low queue first, before the high one.
    const turn = exec.takes.find((k) => k.task === 101)!;
    const first = exec.accesses.find((a) => a.thread === 1 && a.op === turn.op)!;
    assertEquals(describeLAccess(first), "PopReadHead: load L.head → 0", `the low level's turn:\n${rows.join("\n")}`);
    assertEquals(checkLevelsExecution(s, exec), [], "no oracle breaks");
  },
  60_000,
);

test(
  "levels harness: a starving level found empty starts its streak again: the next low task waits behind the published highs",
  async () => {
    const h = await shared;
    // Issue 47, class 4: low 101 and eight highs published; worker1 takes the eight (its low streak at the
    // quota); worker2 takes 101; worker1's starving look finds the low level empty; then low 110 and highs
    // 111, 112 are published: the highs are taken before 110 (worker1's streak started again).
    const s: LevelsScenario = { levels: [2, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0], workers: 2 };
    const steps = (schedule: number[], t: number, ops: number) =>
      h.run(s, scheduleChooser(LEVELS, schedule)).accesses.filter((a) => a.thread === t && a.op < ops).length;
    const run = (t: number, n: number) => new Array<number>(n).fill(t);
    // Each phase's length, measured on the runs that lead to it (the schedule of every step before it).
    const pushes = steps(run(0, 400), 0, 9);
    const highs = steps([...run(0, pushes), ...run(1, 400)], 1, 8);
    const before = [...run(0, pushes), ...run(1, highs)];
    // worker2's take of 101 and one look that finds nothing: it then yields, as worker1 does after its look.
    const low = steps([...before, ...run(2, 100)], 2, 2);
    const look = steps([...before, ...run(2, low), ...run(1, 100)], 1, 9) - highs;
    const rest = steps(run(0, 400), 0, s.levels.length) - pushes;
    const schedule = [...before, ...run(2, low), ...run(1, look), ...run(0, rest), ...run(1, 400)];
    const exec = h.run(s, scheduleChooser(LEVELS, schedule));
    const rows = exec.accesses.map((a) => `${lThreadName(a.thread)}: ${describeLAccess(a)}`).join("\n");
    const taken = (t: number) => exec.takes.filter((k) => k.worker === t).map((k) => k.task);
    assertEquals(taken(1).slice(0, 8), [102, 103, 104, 105, 106, 107, 108, 109], `worker1's first takes:\n${rows}`);
    assertEquals(taken(2)[0], 101, `worker2 takes the low task:\n${rows}`);
    // worker1's op 8 looked at the low level first (its starving turn) and took nothing.
    const first = exec.accesses.find((a) => a.thread === 1 && a.op === 8)!;
    assertEquals(describeLAccess(first), "load L.head → 1", `worker1's starving look:\n${rows}`);
    // Then both workers' low streaks are 0 (worker2's since its take of 101): 110 waits behind 111 and 112,
    // which no-inversion checks from worker1's empty look on (a kept streak takes 110 at once).
    assertEquals(checkLevelsExecution(s, exec), [], `no oracle breaks:\n${rows}`);
  },
  60_000,
);

test("levels random mode: generated submissions under generated interleavings satisfy every oracle", async () => {
  const { seed, path } = config();
  const { mutant, variant } = mutantFromEnv("FILCH_LINCHECK_LEVELS_MUTANT", LEVELS_MUTANTS);
  const h = await shared;
  const started = performance.now();
  let runs = 0;
  let steps = 0;
  let starving = 0;
  let polls = 0;
  const scenarios = new Set<string>();
  const result = fc.check(
    fc.property(levelsScenarioArbitrary(), scheduleArbitrary(LEVELS), (scenario, schedule) => {
      const exec = h.run(scenario, scheduleChooser(LEVELS, schedule), variant);
      runs++;
      steps += exec.steps;
      scenarios.add(JSON.stringify(scenario));
      // A lower level's turn (FindStarving): a take that begins with a pop of the normal or the low queue.
      if (exec.takes.some((k) => quotaTurn(exec, k))) starving++;
      if (exec.takes.some((k, j) => j > 0 && k.op > exec.takes[j - 1].op + 1)) polls++;
      const v = checkLevelsExecution(scenario, exec);
      if (v.length > 0) throw new Error(describe(v));
    }),
    { seed, numRuns: path === undefined ? RUNS : 1, path },
  );
  const seconds = (performance.now() - started) / 1000;
  console.log(
    `lincheck levels random [${runtime}]${mutant ? ` MUTANT ${mutant}` : ""}: seed ${seed}; ` +
      `${runs} interleavings (${result.numShrinks} shrinks) of ${scenarios.size} distinct scenarios, ${steps} steps; ` +
      `${starving} with a lower level's quota turn, ${polls} with a worker finding nothing; ${seconds.toFixed(1)} s`,
  );
  if (result.failed) {
    const [scenario, schedule] = result.counterexample!;
    const exec = h.run(scenario, scheduleChooser(LEVELS, schedule), variant, undefined, true);
    throw new Error(
      `lincheck levels random: ${mutant ? `mutant ${mutant}` : "the shipped code"} failed; ` +
        `replay: FILCH_LINCHECK_SEED=${result.seed} FILCH_LINCHECK_PATH='${result.counterexamplePath}'\n` +
        `scenario (JSON): ${JSON.stringify(scenario)}\nschedule (JSON): ${JSON.stringify(schedule)}\n` +
        `violations: ${describe(checkLevelsExecution(scenario, exec))}\n${formatLevelsTable(scenario, exec)}`,
    );
  }
  // The runs must reach the quota's turn, and workers that find nothing, not only the easy orders.
  if (path === undefined && RUNS >= 100) {
    assert(starving > 0 && polls > 0, `starving turns ${starving}, polls ${polls}`);
  }
}, 300_000);

/** Whether take `k` began with a pop of the normal or the low queue: the quota's turn of that level. */
function quotaTurn(exec: LExecution, k: LTake): boolean {
  const first = exec.accesses.find((a) => a.thread === k.worker && a.op === k.op);
  return first !== undefined && (first.addr === LAddr.head(1) || first.addr === LAddr.head(2));
}

test(
  "levels systematic mode: every schedule within each named scenario's preemption bound satisfies every oracle",
  async () => {
    const h = await shared;
    const { failures } = runSystematic({
      label: "lincheck levels systematic",
      scenarios: LEVELS_SCENARIOS,
      bound: ({ preemptions }) => preemptions! + EXTRA,
      exploreOne: exploreModel(h),
      describe: describeLevelsScenario,
      nameWidth: 36,
    });
    assertEquals(failures, [], "no schedule breaks an oracle");
  },
  300_000,
);

test(
  "levels mutants: each bug of the quota rule, the level order or the announcement is caught, by its property",
  async () => {
    const { seed } = config();
    const h = await shared;
    try {
      const started = performance.now();
      const rows: string[] = [];
      const reports: string[] = [];
      const missed: string[] = [];
      for (let m = 0; m < LEVELS_MUTANTS.length; m++) {
        const mutant = LEVELS_MUTANTS[m];
        const variant = m + 1;
        const want = EXPECTED[mutant.name] ?? [];
        // Systematic: the fewest preemptions first, then the first named scenario that breaks the property.
        // Random: how many generated interleavings until the first failure.
        const most = Math.max(...LEVELS_SCENARIOS.map((x) => x.preemptions));
        const { found, explored, random } = huntMutant(h, variant, LEVELS_SCENARIOS, most, {
          scenarios: levelsScenarioArbitrary(),
          seed,
          runs: HUNT,
        }, want);
        const randomText = random ? `random: run ${random.run} (${random.oracle})` : `random: NOT caught in ${HUNT}`;
        if (!random) missed.push(`${mutant.name} (random mode, ${HUNT} runs)`);
        if (found === undefined) {
          missed.push(`${mutant.name} (systematic, ${explored} schedules)`);
          rows.push(`  ${mutant.name.padEnd(30)} NOT CAUGHT systematically (${explored} schedules); ${randomText}`);
          continue;
        }
        const exec = h.run(found.scenario, replayChooser(LEVELS, found.choices), variant, undefined, true);
        const violations = checkLevelsExecution(found.scenario, exec);
        const oracles = [...new Set(violations.map((x) => x.oracle))];
        if (want.length === 0 || !want.every((o) => oracles.includes(o))) {
          missed.push(`${mutant.name} (caught by ${oracles.join("+")}, expected ${want.join("+")})`);
        }
        rows.push(
          `  ${mutant.name.padEnd(30)} ${oracles.join("+").padEnd(28)} ${found.name} (${found.preemptions} ` +
            `preemption${found.preemptions === 1 ? "" : "s"}, ${explored} schedules in all); ${randomText}`,
        );
        reports.push(
          `--- ${mutant.name}: ${mutant.bug}\nscenario (JSON): ${JSON.stringify(found.scenario)}\n` +
            `choices (JSON): ${JSON.stringify(found.choices)}\nviolations: ${describe(violations)}\n` +
            formatLevelsTable(found.scenario, exec).split("\n").slice(-2).join("\n"),
        );
      }
      const seconds = (performance.now() - started) / 1000;
      console.log(
        `lincheck levels mutants [${runtime}]: seed ${seed}, random hunt <= ${HUNT} runs, ${seconds.toFixed(1)} s\n` +
          rows.join("\n"),
      );
      console.log(reports.join("\n\n"));
      assertEquals(missed, [], "every levels mutant is caught, by the property its TLA+ counterpart breaks");
    } finally {
      await h.close();
    }
  },
  300_000,
);
