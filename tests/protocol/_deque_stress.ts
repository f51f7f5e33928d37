/**
 * The deque stress run, shared by the stress test and the demo: one owner and several thieves on real
 * threads move `tasks` ids through deques in one SharedArrayBuffer; afterwards every id's take count
 * must be exactly 1.
 */
import { initDeque } from "../../lib/protocol/deque.ts";
import { dequeRegionBytes, roundUpToLine } from "../../lib/protocol/layout.ts";
import { startThread } from "../../lib/runtime/thread.ts";
import type { StressReport, StressSetup } from "./_stress_worker.ts";

export type { StressReport };

/** Runs the stress once; returns the per-thread reports after checking every id was taken once. */
export async function runDequeStress(tasks: number, thieves: number, capacity: number, seed: number) {
  const regionBytes = dequeRegionBytes(capacity);
  const regions = Array.from({ length: thieves + 1 }, (_, i) => i * regionBytes);
  const controlOffset = (thieves + 1) * regionBytes;
  const countsOffset = controlOffset + 64;
  const buffer = new SharedArrayBuffer(roundUpToLine(countsOffset + tasks * 4));
  for (const byteOffset of regions) initDeque({ buffer, byteOffset, capacity }, 2 ** 31 - 1000);
  const threads = regions.map((_, role) =>
    startThread(new URL("./_stress_worker.ts", import.meta.url), `stress-${role}`)
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
    if (lost !== 0 || duplicated !== 0) {
      throw new Error(`deque stress: ${lost} ids lost and ${duplicated} duplicated of ${tasks}`);
    }
    const taken = reports.reduce((sum, r) => sum + r.taken, 0);
    if (taken !== tasks) throw new Error(`deque stress: the threads took ${taken} tasks, not ${tasks}`);
    return reports;
  } finally {
    for (const thread of threads) thread.terminate();
  }
}
