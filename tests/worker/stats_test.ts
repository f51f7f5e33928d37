/**
 * `WorkerStats`, a worker's own numbers in its status line, on one thread: `bump` counts in this worker's
 * line only; without metrics nothing else is written; with metrics a replacement goes on from its
 * predecessor's busy total, a busy period is published while it lasts (`busySinceMs`, ms since the pool
 * was created) and, when it ends, adds its time (to the last task's finish when the loop went straight on
 * from it) to `busyMs`. The pool tests (tests/pool/metrics_test.ts) read the same words through `stats()`
 * and utilization; these pin each rule with a real pool memory of two workers (this is worker 1).
 */
import { epochMs, histogramBytes } from "../../lib/metrics.ts";
import { StatusWords } from "../../lib/protocol/layout.ts";
import { PoolMemory } from "../../lib/protocol/memory.ts";
import { WorkerStats } from "../../lib/worker/stats.ts";
import { assert, assertEquals, test } from "../_test.ts";

/** Worker 1's stats over a pool memory of two workers, with metrics since `since` (or none). */
function fresh(since: number | undefined, predecessorBusyMs = 0) {
  const memory = PoolMemory.create({
    workers: 2,
    dequeCapacity: 4,
    taskCapacity: 8,
    inlineBytes: 64,
    blockBytes: 128,
    blocks: 4,
  });
  const line = StatusWords.count;
  memory.status[line + StatusWords.busyMs] = predecessorBusyMs;
  memory.status[line + StatusWords.busySinceMs] = 12345; // what a dead predecessor left
  const before = Array.from(memory.status);
  const stats = new WorkerStats(
    memory,
    1,
    since === undefined ? undefined : { since, histograms: new SharedArrayBuffer(histogramBytes(2)) },
  );
  const word = (field: number) => memory.status[line + field];
  return { stats, status: memory.status, line, word, before };
}

test("stats: bump counts in this worker's own line only, by one or by the amount given", () => {
  const { stats, status, line, before } = fresh(undefined);
  stats.bump(StatusWords.count - 1);
  stats.bump(StatusWords.count - 1);
  stats.bump(0, 5);
  const expected = before.slice();
  expected[line + StatusWords.count - 1] += 2;
  expected[line] += 5;
  assertEquals(Array.from(status), expected, "two bumps of the last field, one of 5 of the first, in line 1");
});

test("stats: without metrics there are no stamps and no busy periods: nothing but bump writes", () => {
  const { stats, status, before } = fresh(undefined, 40);
  assertEquals(stats.stamps, undefined, "no task recorder without metrics");
  assertEquals(Array.from(status), before, "the constructor writes nothing");
  stats.busy();
  assertEquals(stats.lastFinish, -1, "no busy period began");
  stats.idle();
  stats.endBusy();
  assertEquals(Array.from(status), before, "busy, idle and endBusy write nothing");
});

test("stats: with metrics, a replacement goes on from its predecessor's busy total; the cut-off period is closed", () => {
  const { stats, word } = fresh(epochMs(), 40);
  assert(stats.stamps !== undefined, "a task recorder with metrics");
  assertEquals(word(StatusWords.busySinceMs), -1, "no busy period under way");
  stats.busy();
  stats.lastFinish += 7.5; // the last task finished 7.5 ms after the period began
  stats.endBusy();
  assertEquals(word(StatusWords.busyMs), 47, "the predecessor's 40 ms, then 7 whole ms");
  assertEquals(word(StatusWords.busySinceMs), -1, "the period ended");
  assertEquals(stats.lastFinish, -1, "the loop no longer goes straight on");
});

test("stats: a busy period is published while it lasts, in ms since the pool was created", () => {
  const since = epochMs() - 100_000;
  const { stats, word } = fresh(since);
  const before = epochMs();
  stats.busy();
  const after = epochMs();
  const published = word(StatusWords.busySinceMs);
  assert(
    published >= Math.floor(before - since) && published <= Math.floor(after - since),
    `busySinceMs ${published} is when the period began, since the pool was created`,
  );
  assert(stats.lastFinish >= before && stats.lastFinish <= after, "the task about to start starts now");
  assertEquals(word(StatusWords.busyMs), 0, "nothing added while the period lasts");
});

test("stats: busy() during a busy period begins no other one", () => {
  const { stats } = fresh(epochMs() - 50_000);
  stats.busy();
  const first = stats.lastFinish;
  stats.lastFinish = -1; // a task started: the loop no longer goes straight on
  stats.busy();
  assertEquals(stats.lastFinish, -1, "the period under way goes on: no new start");
  stats.lastFinish = first + 3;
  stats.endBusy();
  assertEquals(stats.lastFinish, -1, "ended");
  stats.endBusy();
  stats.idle();
});

test("stats: idle() ends the period under way at the clock when the loop did not go straight on", () => {
  const { stats, word } = fresh(epochMs(), 10);
  stats.busy();
  const began = stats.lastFinish;
  stats.lastFinish = -1;
  stats.idle();
  const after = epochMs();
  const total = word(StatusWords.busyMs);
  assert(total >= 10 && total <= 10 + Math.ceil(after - began), `busyMs ${total}: 10 plus the period's time`);
  assertEquals(word(StatusWords.busySinceMs), -1, "the period ended");
  assertEquals(stats.lastFinish, -1, "not going straight on");
});

test("stats: with no busy period under way, idle() and endBusy() add and publish nothing", () => {
  const { stats, status, line } = fresh(epochMs(), 10);
  status[line + StatusWords.busySinceMs] = 77;
  status[line + StatusWords.busyMs] = 33;
  const before = Array.from(status);
  stats.idle();
  stats.lastFinish = 5;
  stats.endBusy();
  assertEquals(Array.from(status), before, "no word written");
  assertEquals(stats.lastFinish, -1, "endBusy() always ends going straight on");
  // A period that began, ended, then a second one: the total adds both.
  stats.busy();
  stats.lastFinish += 4;
  stats.endBusy();
  stats.busy();
  stats.lastFinish += 6;
  stats.idle();
  assertEquals(status[line + StatusWords.busyMs], 20, "the constructor's 10, then 4 and 6");
});

test("stats: idle() ends going straight on even with no busy period (a late task's start is not an earlier finish)", () => {
  // The loop runs a task found late, in search.idle(), outside any busy period; its finish sets lastFinish.
  // If the next search finds nothing and the worker sleeps until another late task, that task's start must
  // be read from the clock, not taken from the first one's finish (its run time would count the sleep).
  const { stats, status } = fresh(epochMs(), 10);
  const before = Array.from(status);
  stats.lastFinish = epochMs(); // a late task finished, no busy period under way
  stats.idle();
  assertEquals(stats.lastFinish, -1, "idling: the next task's start needs a clock read");
  assertEquals(Array.from(status), before, "no period to end: no word written");
});
