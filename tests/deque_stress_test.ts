/**
 * Concurrent stress on real threads: one owner pushing and popping, three thieves stealing one and
 * stealing half from the owner and from each other, 1M tasks, indices started near 2^31 so they wrap.
 * Every task must be taken exactly once: no loss, no duplicate, checked by counting every id.
 */
import { initDeque } from "../lib/deque.ts";
import { dequeRegionBytes, roundUpToLine } from "../lib/layout.ts";
import { startThread } from "../lib/runtime/thread.ts";
import type { StressReport, StressSetup } from "./_stress_worker.ts";
import { assert, assertEquals, test } from "./_test.ts";

const TASKS = 1_000_000;
const THIEVES = 3;

/** Runs the stress once; returns the per-thread reports after checking every id was taken once. */
export async function runDequeStress(tasks: number, thieves: number, capacity: number, seed: number) {
  const regionBytes = dequeRegionBytes(capacity);
  const regions = Array.from({ length: thieves + 1 }, (_, i) => i * regionBytes);
  const controlOffset = (thieves + 1) * regionBytes;
  const countsOffset = controlOffset + 64;
  const buffer = new SharedArrayBuffer(roundUpToLine(countsOffset + tasks * 4));
  for (const byteOffset of regions) initDeque({ buffer, byteOffset, capacity }, 2 ** 31 - 1000);
  const threads = await Promise.all(
    regions.map((_, role) => startThread(new URL("./_stress_worker.ts", import.meta.url), `stress-${role}`)),
  );
  try {
    const reports = await Promise.all(threads.map((thread, role) =>
      new Promise<StressReport>((resolve, reject) => {
        thread.onMessage((message) => resolve(message as StressReport));
        thread.onError(reject);
        const setup: StressSetup = { buffer, regions, capacity, countsOffset, controlOffset, tasks, role, seed };
        thread.post(setup);
      })
    ));
    const counts = new Int32Array(buffer, countsOffset, tasks);
    let lost = 0;
    let duplicated = 0;
    for (let id = 0; id < tasks; id++) {
      if (counts[id] === 0) lost++;
      else if (counts[id] > 1) duplicated++;
    }
    assertEquals({ lost, duplicated }, { lost: 0, duplicated: 0 }, "every id is taken exactly once");
    const taken = reports.reduce((sum, r) => sum + r.taken, 0);
    assertEquals(taken, tasks, "the threads' own tallies add up to the tasks pushed");
    return reports;
  } finally {
    for (const thread of threads) thread.terminate();
  }
}

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
