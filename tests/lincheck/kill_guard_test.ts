/**
 * The forced-kill handshake, the shipped `lib/protocol/kill_guard.ts` — the worker's guard around the
 * pool's own steps and its look at the epoch, against the main thread's kill (move the epoch, read the
 * guard, terminate, poll again or withdraw) — under controlled interleavings (see tests/lincheck/README.md,
 * "The kill guard"). The oracles are spec/KillGuard.tla's properties; random mode, systematic mode, and every
 * kill-guard mutant (tests/mutants/mutants.ts, KILL_GUARD_MUTANTS) caught with its minimal counterexample.
 *
 * Environment: FILCH_LINCHECK_SEED (default 20261121), FILCH_LINCHECK_KILL_RUNS (random-mode runs,
 * default 15000), FILCH_LINCHECK_KILL_HUNT (most random runs per mutant hunt, default 10000),
 * FILCH_LINCHECK_KILL_PREEMPTIONS (systematic bound, default 3), FILCH_LINCHECK_KILL_MUTANT (run the random
 * mode on this mutant instead, to see its report), FILCH_LINCHECK_PATH (with the seed: replay one run).
 */
import fc from "fast-check";
import {
  checkKillExecution,
  describeKAccess,
  describeKillScenario,
  formatKillTable,
  KILL_GUARD,
  KILL_SCENARIOS,
  type KillGuardScenario,
  killScenarioArbitrary,
} from "./models/kill_guard/model.ts";
import { exploreModel, runSystematic } from "./kernel/systematic.ts";
import { Harness, huntMutant, replayChooser, scheduleArbitrary, scheduleChooser } from "./kernel/harness.ts";
import { Fn } from "../../spec/trace/facade_codes.ts";
import { State } from "./kernel/words.ts";
import { config, describeViolations, intEnv, mutantFromEnv } from "./kernel/env.ts";
import { KILL_GUARD_MUTANTS } from "../mutants/mutants.ts";
import { assert, assertEquals, runtime, test } from "../_test.ts";

const RUNS = intEnv("FILCH_LINCHECK_KILL_RUNS", 15_000, 0);
const HUNT = intEnv("FILCH_LINCHECK_KILL_HUNT", 10_000, 0);
const PREEMPTIONS = intEnv("FILCH_LINCHECK_KILL_PREEMPTIONS", 3, 0);
/** One harness (3 threads, the shipped module and every mutant loaded) for the whole file; the last test closes it. */
const shared = Harness.start(KILL_GUARD);

/**
 * The oracles each mutant's minimal counterexample must break, all in one run: its TLA+ counterpart's
 * properties (spec/check.ts's `expect`), and for withdraw_forgets_epoch also the epoch word's own check.
 */
const EXPECTED: Readonly<Record<string, readonly string[]>> = {
  killer_reads_guard_before_epoch: ["never-killed-in-pool-step"],
  killer_ignores_guard: ["never-killed-in-pool-step"],
  guard_reads_epoch_first: ["never-killed-in-pool-step"],
  enter_skips_epoch_check: ["never-killed-in-pool-step"],
  enter_keeps_guard_down: ["guard-covers-pool-steps"],
  halt_skips_recheck: ["never-killed-in-pool-step"],
  halt_keeps_guard: ["killed-unless-withdrawn", "halted-worker-resumes"],
  withdraw_forgets_epoch: ["halted-worker-resumes", "withdraw-restores-epoch"],
};

const describe = describeViolations;

test(
  "kill-guard harness: a kill asked while the worker is in user code lands there; asked inside a pool step, it waits for the halt",
  async () => {
    const h = await shared;
    const s: KillGuardScenario = { cycles: 1, finish: false, requests: 1, settle: [], epoch: 0 };
    // The worker runs to its end (in user code, guard down), then the main thread kills it.
    const late = h.run(s, replayChooser(KILL_GUARD, [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1]), 0, undefined, true);
    assertEquals(late.accesses.map((a) => `${a.thread === 0 ? "worker" : "main"}: ${describeKAccess(a)}`), [
      "worker: store guard ← 1",
      "worker: load epoch → 0",
      "worker: store inpool ← 1 (pool step begins)",
      "worker: store inpool ← 0 (pool step ends)",
      "worker: GuardLower: store guard ← 0",
      "worker: GuardRaise: store guard ← 1",
      "worker: GuardReadEpoch: load epoch → 0",
      "worker: store inpool ← 1 (pool step begins)",
      "worker: store inpool ← 0 (pool step ends)",
      "worker: GuardLower: store guard ← 0",
      "main: load task[1] → 1",
      "main: load epoch → 0",
      "main: KillBumpEpoch: store epoch ← 1",
      "main: load task[1] → 1",
      "main: KillReadGuard: load guard → 0",
      "main: store killed ← 1",
    ], "the steps");
    assertEquals(checkKillExecution(s, late), [], "no oracle breaks");
    // The main thread moves the epoch while the worker is inside its first pool step: the poll sees the
    // guard up and yields; the worker, back from user code, halts (guard down), and the next poll kills it.
    const early = h.run(s, replayChooser(KILL_GUARD, [0, 1, 1, 1, 1, 1]), 0, undefined, true);
    const rows = early.accesses.map((a) => `${a.thread === 0 ? "worker" : "main"}: ${describeKAccess(a)}`);
    assert(rows.includes("worker: HaltLower: store guard ← 0"), `the worker halts:\n${rows.join("\n")}`);
    assertEquals(rows.at(-1), "main: store killed ← 1", "then it is killed");
    assertEquals(early.states[0], State.BLOCKED, "halted in its wait, until the termination lands");
    assertEquals(checkKillExecution(s, early), [], "no oracle breaks");
  },
  60_000,
);

test("kill-guard random mode: generated scenarios under generated interleavings satisfy every oracle", async () => {
  const { seed, path } = config();
  const { mutant, variant } = mutantFromEnv("FILCH_LINCHECK_KILL_MUTANT", KILL_GUARD_MUTANTS);
  const h = await shared;
  const started = performance.now();
  let runs = 0;
  let steps = 0;
  let kills = 0;
  let withdrawn = 0;
  let halts = 0;
  const scenarios = new Set<string>();
  const result = fc.check(
    fc.property(killScenarioArbitrary(), scheduleArbitrary(KILL_GUARD), (scenario, schedule) => {
      const exec = h.run(scenario, scheduleChooser(KILL_GUARD, schedule), variant);
      runs++;
      steps += exec.steps;
      if (exec.killed === 1) kills++;
      else if (exec.accesses.some((a) => a.thread === 1 && a.fn === Fn.store && a.arg1 === scenario.epoch)) {
        withdrawn++;
      }
      if (exec.accesses.some((a) => a.thread === 0 && a.fn === Fn.wait)) halts++;
      scenarios.add(JSON.stringify(scenario));
      const v = checkKillExecution(scenario, exec);
      if (v.length > 0) throw new Error(describe(v));
    }),
    { seed, numRuns: path === undefined ? RUNS : 1, path },
  );
  const seconds = (performance.now() - started) / 1000;
  console.log(
    `lincheck kill-guard random [${runtime}]${mutant ? ` MUTANT ${mutant}` : ""}: seed ${seed}; ` +
      `${runs} interleavings (${result.numShrinks} shrinks) of ${scenarios.size} distinct scenarios, ${steps} steps; ` +
      `${kills} killed, ${withdrawn} withdrawn, ${halts} with a halt; ${seconds.toFixed(1)} s`,
  );
  if (result.failed) {
    const [scenario, schedule] = result.counterexample!;
    const exec = h.run(scenario, scheduleChooser(KILL_GUARD, schedule), variant, undefined, true);
    throw new Error(
      `lincheck kill-guard random: ${mutant ? `mutant ${mutant}` : "the shipped code"} failed; ` +
        `replay: FILCH_LINCHECK_SEED=${result.seed} FILCH_LINCHECK_PATH='${result.counterexamplePath}'\n` +
        `scenario (JSON): ${JSON.stringify(scenario)}\nschedule (JSON): ${JSON.stringify(schedule)}\n` +
        `violations: ${describe(checkKillExecution(scenario, exec))}\n${formatKillTable(scenario, exec)}`,
    );
  }
  // The runs must reach the window, not only its ends: kills, withdrawals and halts all happen.
  assert(kills > 0 && withdrawn > 0 && halts > 0, `kills ${kills}, withdrawals ${withdrawn}, halts ${halts}`);
}, 300_000);

test(
  "kill-guard systematic mode: every schedule with at most 3 preemptions of the small scenarios satisfies every oracle",
  async () => {
    const h = await shared;
    const { failures } = runSystematic({
      label: "lincheck kill-guard systematic",
      scenarios: KILL_SCENARIOS,
      bound: () => PREEMPTIONS,
      exploreOne: exploreModel(h),
      describe: describeKillScenario,
      nameWidth: 40,
      header: PREEMPTIONS,
    });
    assertEquals(failures, [], "no schedule breaks an oracle");
  },
  300_000,
);

test(
  "kill-guard mutants: each bug of either side of the handshake is caught, by its property, with its minimal counterexample",
  async () => {
    const { seed } = config();
    const h = await shared;
    try {
      const started = performance.now();
      const rows: string[] = [];
      const minimal: string[] = [];
      const missed: string[] = [];
      for (let m = 0; m < KILL_GUARD_MUTANTS.length; m++) {
        const mutant = KILL_GUARD_MUTANTS[m];
        const variant = m + 1;
        // Systematic: the fewest preemptions first, then the first named scenario that breaks the property.
        // Random: how many generated interleavings until the first failure.
        const { found, explored, random } = huntMutant(h, variant, KILL_SCENARIOS, PREEMPTIONS, {
          scenarios: killScenarioArbitrary(),
          seed,
          runs: HUNT,
        }, EXPECTED[mutant.name]);
        const randomText = random ? `random: run ${random.run} (${random.oracle})` : `random: NOT caught in ${HUNT}`;
        if (!random) missed.push(`${mutant.name} (random mode, ${HUNT} runs)`);
        if (found === undefined) {
          missed.push(`${mutant.name} (systematic, ${explored} schedules)`);
          rows.push(`  ${mutant.name.padEnd(32)} NOT CAUGHT systematically (${explored} schedules); ${randomText}`);
          continue;
        }
        const exec = h.run(found.scenario, replayChooser(KILL_GUARD, found.choices), variant, undefined, true);
        const violations = checkKillExecution(found.scenario, exec);
        const oracles = [...new Set(violations.map((v) => v.oracle))];
        const expected = EXPECTED[mutant.name] ?? [];
        if (expected.length === 0 || !expected.every((o) => oracles.includes(o))) {
          missed.push(`${mutant.name} (caught by ${oracles.join("+")}, expected ${expected.join("+")})`);
        }
        rows.push(
          `  ${mutant.name.padEnd(32)} ${oracles.join("+").padEnd(28)} ${found.name} (${found.preemptions} ` +
            `preemption${found.preemptions === 1 ? "" : "s"}, ${explored} schedules in all); ${randomText}`,
        );
        minimal.push(
          `--- ${mutant.name}: ${mutant.bug}\nscenario (JSON): ${JSON.stringify(found.scenario)}\n` +
            `choices (JSON): ${JSON.stringify(found.choices)}\nviolations: ${describe(violations)}\n` +
            formatKillTable(found.scenario, exec),
        );
      }
      const seconds = (performance.now() - started) / 1000;
      console.log(
        `lincheck kill-guard mutants [${runtime}]: seed ${seed}, systematic <= ${PREEMPTIONS} preemptions, ` +
          `random hunt <= ${HUNT} runs, ${seconds.toFixed(1)} s\n${rows.join("\n")}`,
      );
      console.log(minimal.join("\n\n"));
      assertEquals(missed, [], "every kill-guard mutant is caught, by the property its TLA+ counterpart breaks");
    } finally {
      await h.close();
    }
  },
  300_000,
);
