/**
 * The wait for room (`maxQueue`, issue 47 class 1): the shipped code of both sides of the handshake — the
 * waiter's `Room.waitForRoom` with its `CompletionReader`, the settler's `TaskLedger.settle` and
 * `Room.released` — under controlled interleavings, with spec/RoomWait.tla's properties as oracles
 * (tests/lincheck/models/room_wait/model.ts). Random mode and systematic mode; the mutants
 * (tests/mutants/mutants.ts, AUDIT_A_ROOM_MUTANTS: the settler's two accesses swapped, the waiter's count
 * after its check, the wake skipped) are run by the mutation run (`node tests/mutants/run.ts --only
 * audit_a_waits`), which patches the shipped files under this suite.
 *
 * Environment: FILCH_LINCHECK_SEED (default 20261121), FILCH_LINCHECK_ROOM_RUNS (random-mode runs, default
 * 3000), FILCH_LINCHECK_ROOM_PREEMPTIONS (added to each named scenario's bound, default 0),
 * FILCH_LINCHECK_PATH (with the seed: replay one run).
 */
import fc from "fast-check";
import {
  checkRoomExecution,
  describeRoomScenario,
  formatRoomTable,
  ROOM_SCENARIOS,
  ROOM_WAIT,
  type RoomScenario,
  roomScenarioArbitrary,
  waiterBlocked,
} from "./models/room_wait/model.ts";
import { Harness, scheduleArbitrary, scheduleChooser } from "./kernel/harness.ts";
import { exploreModel, runSystematic } from "./kernel/systematic.ts";
import { config, describeViolations, intEnv } from "./kernel/env.ts";
import { assert, assertEquals, runtime, test } from "../_test.ts";

const RUNS = intEnv("FILCH_LINCHECK_ROOM_RUNS", 3000, 0);
const EXTRA = intEnv("FILCH_LINCHECK_ROOM_PREEMPTIONS", 0, 0);
/** One harness (2 threads) for the whole file; the last test closes it. */
const shared = Harness.start(ROOM_WAIT);

test(
  "room-wait harness: a waiter that counted itself and blocked is woken by the settle that makes room",
  async () => {
    const h = await shared;
    const s: RoomScenario = { settler: 2, max: 2, rest: 0 };
    // The waiter first, to its wait (it blocks: the pool is full), then the settler.
    const exec = h.run(s, scheduleChooser(ROOM_WAIT, [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]));
    const table = formatRoomTable(s, exec);
    assertEquals(checkRoomExecution(s, exec), [], `no oracle breaks:\n${table}`);
    assert(exec.accesses.some((a) => a.thread === 1 && a.blocked === true), `the waiter blocked first:\n${table}`);
    assert(exec.accesses.some((a) => a.thread === 0 && (a.woke?.length ?? 0) > 0), `the settler woke it:\n${table}`);
    assert(exec.resolved && !waiterBlocked(exec), `the waiter's wait resolved:\n${table}`);
  },
  60_000,
);

test(
  "room-wait random mode: generated bounds and settlers under generated interleavings satisfy every oracle",
  async () => {
    const { seed, path } = config();
    const h = await shared;
    const started = performance.now();
    let runs = 0;
    let steps = 0;
    let woken = 0;
    const result = fc.check(
      fc.property(roomScenarioArbitrary(), scheduleArbitrary(ROOM_WAIT), (scenario, schedule) => {
        const exec = h.run(scenario, scheduleChooser(ROOM_WAIT, schedule));
        runs++;
        steps += exec.steps;
        if (exec.accesses.some((a) => a.thread === 0 && (a.woke?.length ?? 0) > 0)) woken++;
        const v = checkRoomExecution(scenario, exec);
        if (v.length > 0) throw new Error(describeViolations(v));
      }),
      { seed, numRuns: path === undefined ? RUNS : 1, path },
    );
    const seconds = (performance.now() - started) / 1000;
    console.log(
      `lincheck room-wait random [${runtime}]: seed ${seed}; ${runs} interleavings (${result.numShrinks} shrinks), ` +
        `${steps} steps; ${woken} with the waiter woken from its wait; ${seconds.toFixed(1)} s`,
    );
    if (result.failed) {
      const [scenario, schedule] = result.counterexample!;
      const exec = h.run(scenario, scheduleChooser(ROOM_WAIT, schedule));
      throw new Error(
        `lincheck room-wait random: the shipped code failed; ` +
          `replay: FILCH_LINCHECK_SEED=${result.seed} FILCH_LINCHECK_PATH='${result.counterexamplePath}'\n` +
          `scenario: ${describeRoomScenario(scenario)}\nschedule (JSON): ${JSON.stringify(schedule)}\n` +
          `violations: ${describeViolations(checkRoomExecution(scenario, exec))}\n` + formatRoomTable(scenario, exec),
      );
    }
    // The runs must reach a waiter woken from its wait, not only checks that found the room.
    if (path === undefined && RUNS >= 100) assert(woken > 0, `woken ${woken}`);
  },
  300_000,
);

test(
  "room-wait systematic mode: every schedule within each named scenario's preemption bound satisfies every oracle",
  async () => {
    const h = await shared;
    try {
      const { failures } = runSystematic({
        label: "lincheck room-wait systematic",
        scenarios: ROOM_SCENARIOS,
        bound: ({ preemptions }) => preemptions! + EXTRA,
        exploreOne: exploreModel(h, formatRoomTable),
        describe: describeRoomScenario,
        nameWidth: 30,
      });
      assertEquals(failures, [], "no schedule breaks an oracle");
    } finally {
      await h.close();
    }
  },
  300_000,
);
