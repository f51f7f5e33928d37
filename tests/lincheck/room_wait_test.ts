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
import { scheduleChooser } from "./kernel/harness.ts";
import { openSuite, randomMode, systematicMode } from "./kernel/suite.ts";
import { assert, assertEquals, test } from "../_test.ts";

/** One harness (2 threads) for the whole file; the last test closes it. */
const suite = openSuite(ROOM_WAIT, { env: "ROOM", runs: 3000, describe: describeRoomScenario, table: formatRoomTable });

test(
  "room-wait harness: a waiter that counted itself and blocked is woken by the settle that makes room",
  async () => {
    const h = await suite.harness;
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
    let woken = 0;
    const { replaying } = await randomMode(suite, {
      scenarios: roomScenarioArbitrary(),
      count(_, exec) {
        if (exec.accesses.some((a) => a.thread === 0 && (a.woke?.length ?? 0) > 0)) woken++;
      },
      counted: () => `${woken} with the waiter woken from its wait`,
    });
    // The runs must reach a waiter woken from its wait, not only checks that found the room.
    if (!replaying && suite.runs >= 100) assert(woken > 0, `woken ${woken}`);
  },
  300_000,
);

test(
  "room-wait systematic mode: every schedule within each named scenario's preemption bound satisfies every oracle",
  () => systematicMode(suite, ROOM_SCENARIOS, 30),
  300_000,
);
