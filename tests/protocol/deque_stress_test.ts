/**
 * Concurrent stress on real threads: one owner pushing and popping, three thieves stealing one and
 * stealing half from the owner and from each other, 1M tasks, indices started near 2^31 so they wrap.
 * Every task must be taken exactly once: no loss, no duplicate, checked by counting every id.
 */
import { runDequeStress } from "./_deque_stress.ts";
import { assert, test } from "../_test.ts";

const TASKS = 1_000_000;
const THIEVES = 3;

test(`1M tasks through one owner and ${THIEVES} thieves (steal and stealHalf): each taken exactly once`, async () => {
  const reports = await runDequeStress(TASKS, THIEVES, 256, 0x5eed);
  const thieves = reports.slice(1);
  const stolen = thieves.reduce((sum, r) => sum + r.steals + r.halfTasks, 0);
  console.log(
    `stress: ${TASKS} tasks; owner took ${reports[0].taken}; thieves: ${
      thieves.map((r) =>
        `#${r.role} steals ${r.steals}, halves ${r.stealHalves} (${r.halfTasks} tasks), retries ${r.retries}`
      )
        .join("; ")
    }`,
  );
  assert(stolen > 0, "the thieves actually stole (otherwise the race was never exercised)");
  assert(thieves.some((r) => r.stealHalves > 0), "stealHalf actually moved tasks");
}, 300_000);

test(
  "a tiny deque (capacity 2) under four threads loses and duplicates nothing (full and last-task races)",
  async () => {
    await runDequeStress(200_000, THIEVES, 2, 0xbeef);
  },
  300_000,
);
