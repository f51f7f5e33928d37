/**
 * `Sleep.forget`, the pool's repair of the sleep words when a worker dies: the sleeping count loses the
 * dead worker exactly when it was counted, including the case its state word cannot tell (a poster had
 * already stored AWAKE to wake it, and it died before it uncounted itself). The protocol itself is
 * model-checked (spec/SleepWake.tla); these are single-thread checks of the bookkeeping around it.
 */
import { sleepRegionBytes, SleepWords } from "../../lib/protocol/layout.ts";
import {
  AWAKE,
  IDLE_ASLEEP,
  type Retirement,
  RETIRING,
  Sleep,
  SLEEPING,
  SLEPT_RETIRED,
  SLEPT_TIMED_OUT,
  SLEPT_WOKEN,
} from "../../lib/protocol/sleep.ts";
import { assertEquals, test } from "../_test.ts";

function fresh(workers: number): Sleep {
  return new Sleep(new SharedArrayBuffer(sleepRegionBytes(workers)), 0, workers);
}

test("forget uncounts a worker that died counted as sleeping, still SLEEPING", () => {
  const sleep = fresh(2);
  assertEquals(sleep.fallAsleep(0, sleep.getSleepy()), true, "worker 0 counts itself");
  assertEquals(sleep.sleeping, 1, "counted");
  assertEquals(sleep.forget(0), true, "forget says it was counted");
  assertEquals(sleep.sleeping, 0, "uncounted");
  assertEquals(Atomics.load(sleep.words, SleepWords.state(0)), AWAKE, "its word is a fresh worker's");
});

test("forget uncounts a worker a poster had woken (state AWAKE) that died before uncounting itself", () => {
  const sleep = fresh(2);
  sleep.fallAsleep(1, sleep.getSleepy());
  assertEquals(sleep.newWork(), true, "a poster wakes worker 1: its state word goes back to AWAKE");
  assertEquals(Atomics.load(sleep.words, SleepWords.state(1)), AWAKE, "the state word says awake");
  assertEquals(sleep.sleeping, 1, "but worker 1 is still counted until it runs again");
  assertEquals(sleep.forget(1), true, "forget knows it was counted");
  assertEquals(sleep.sleeping, 0, "uncounted");
});

test("forget leaves the count alone for a worker that was not counted, and a second forget is a no-op", () => {
  const sleep = fresh(2);
  sleep.fallAsleep(0, sleep.getSleepy()); // worker 0 sleeps and stays counted
  const token = sleep.getSleepy();
  sleep.newWork(); // the JEC moves: worker 1's fallAsleep fails after it stored SLEEPING, then AWAKE
  assertEquals(sleep.fallAsleep(1, token), false, "worker 1 did not count itself");
  assertEquals(sleep.forget(1), false, "worker 1 was not counted");
  assertEquals(sleep.sleeping, 1, "worker 0 is still counted");
  // Worker 0 wakes normally (a poster's wake, then its own awaken): counted goes back to 0 with it.
  Atomics.store(sleep.words, SleepWords.state(0), SLEEPING);
  assertEquals(sleep.sleep(0, 0), false, "a sleep that times out at once");
  assertEquals(sleep.sleeping, 0, "worker 0 uncounted itself");
  assertEquals(sleep.forget(0), false, "and forget finds nothing to undo");
  assertEquals(sleep.sleeping, 0, "the count never goes below zero");
});

// The calls' own results, which the suites did not notice when StrykerJS changed them (issue 47).

test("the sleep words take from 1 to 1023 workers, a whole number, and say so otherwise", () => {
  for (const workers of [0, -1, 1.5, 1024, Number.NaN]) {
    let message = "";
    try {
      new Sleep(new SharedArrayBuffer(sleepRegionBytes(2000)), 0, workers);
    } catch (e) {
      message = e instanceof RangeError ? e.message : `not a RangeError: ${e}`;
    }
    assertEquals(
      message,
      `Cannot create sleep words as 'workers' must be from 1 to 1023: received ${workers}`,
      `${workers} workers`,
    );
  }
  assertEquals(fresh(1).workers, 1, "1 worker");
  assertEquals(fresh(1023).workers, 1023, "1023 workers");
}, 10_000);

test("new work with nobody counted wakes nobody, and says so", () => {
  const sleep = fresh(2);
  assertEquals(sleep.newWork(), false, "nobody sleeps");
  sleep.fallAsleep(0, sleep.getSleepy());
  assertEquals(sleep.newWork(), true, "worker 0 is woken");
  assertEquals(sleep.newWork(), false, "worker 0 is awake (still counted until it runs): nobody more to wake");
}, 10_000);

test("wakeAll wakes every sleeping worker and says how many", () => {
  const sleep = fresh(3);
  sleep.fallAsleep(0, sleep.getSleepy());
  sleep.fallAsleep(2, sleep.getSleepy());
  assertEquals(sleep.wakeAll(), 2, "workers 0 and 2");
  assertEquals(Atomics.load(sleep.words, SleepWords.state(0)), AWAKE, "worker 0 awake");
  assertEquals(Atomics.load(sleep.words, SleepWords.state(2)), AWAKE, "worker 2 awake");
}, 10_000);

test("new work wakes the sleepers in turn: the next one after the last woken, not the same again", () => {
  const sleep = fresh(3);
  for (const i of [0, 1, 2]) sleep.fallAsleep(i, sleep.getSleepy());
  assertEquals(sleep.newWork(), true, "one is woken");
  assertEquals(Atomics.load(sleep.words, SleepWords.state(0)), AWAKE, "worker 0 first");
  assertEquals(sleep.sleep(0, 0), true, "worker 0 finds itself woken and uncounts itself");
  sleep.fallAsleep(0, sleep.getSleepy()); // and sleeps again
  assertEquals(sleep.newWork(), true, "one more is woken");
  assertEquals(Atomics.load(sleep.words, SleepWords.state(1)), AWAKE, "worker 1, the next in turn");
  assertEquals(Atomics.load(sleep.words, SleepWords.state(0)), SLEEPING, "worker 0 sleeps on");
}, 10_000);

// The second StrykerJS round on sleep.ts (issue 47): what its survivors showed the suites did not check.

test("idle runs a task handle 0 that the late search found, as any other handle", () => {
  const sleep = fresh(1);
  assertEquals(sleep.idle(0, () => 0, () => false), 0, "handle 0 is a task, not 'none'");
  assertEquals(sleep.idle(0, () => -1, () => false), IDLE_ASLEEP, "nothing found: counted as sleeping");
}, 10_000);

test("a JEC seen before new work stays stale: another worker's getSleepy after it does not bring it back", () => {
  const sleep = fresh(2);
  const stale = sleep.getSleepy(); // worker 0 announces …
  sleep.newWork(); // … work is posted …
  const fresher = sleep.getSleepy(); // … and worker 1 announces
  assertEquals(fresher === stale, false, "the JEC moved on, not back");
  assertEquals(sleep.fallAsleep(0, stale), false, "worker 0 searches again");
  assertEquals(sleep.fallAsleep(1, fresher), true, "worker 1 sleeps");
}, 10_000);

test("new work with nobody sleepy (an even JEC) leaves the counters word alone", () => {
  const sleep = fresh(2);
  const before = Atomics.load(sleep.words, SleepWords.counters);
  assertEquals(sleep.newWork(), false, "nobody to wake");
  assertEquals(Atomics.load(sleep.words, SleepWords.counters), before, "JEC still even, unchanged");
  sleep.getSleepy();
  sleep.newWork(); // moves the odd JEC to even
  const moved = Atomics.load(sleep.words, SleepWords.counters);
  sleep.newWork();
  assertEquals(Atomics.load(sleep.words, SleepWords.counters), moved, "a second post moves nothing");
}, 10_000);

test("new work goes by the count: a worker that stored SLEEPING but has not counted itself is not woken", () => {
  const sleep = fresh(2);
  let nobody = 0;
  sleep.onNobodyWoken = () => nobody++;
  // Worker 0 between FallAsleepStoreSleeping and FallAsleepCas: it will see the JEC moved and undo.
  Atomics.store(sleep.words, SleepWords.state(0), SLEEPING);
  assertEquals(sleep.newWork(), false, "nobody counted: nobody woken");
  assertEquals(Atomics.load(sleep.words, SleepWords.state(0)), SLEEPING, "its word is left to it");
  assertEquals(nobody, 1, "the elastic owner hears that nobody was woken");
}, 10_000);

test("sleepAsync waits until a poster wakes it, then says it was woken and uncounts itself", async () => {
  const sleep = fresh(2);
  assertEquals(sleep.fallAsleep(0, sleep.getSleepy()), true, "worker 0 counts itself");
  const woken = sleep.sleepAsync(0); // no timeout: only a wake ends it
  assertEquals(sleep.newWork(), true, "a poster wakes worker 0");
  assertEquals(await woken, true, "woken by the poster");
  assertEquals(sleep.sleeping, 0, "uncounted");
  sleep.fallAsleep(1, sleep.getSleepy());
  assertEquals(await sleep.sleepAsync(1, 0), false, "a timeout with nobody waking: false");
  assertEquals(Atomics.load(sleep.words, SleepWords.state(1)), AWAKE, "it left SLEEPING itself");
  assertEquals(sleep.sleeping, 0, "uncounted");
}, 10_000);

/** A retirement whose answers the test sets, counting its calls. */
function retirement(reserves: boolean, mail: boolean, onReserve = () => {}) {
  const calls = { reserve: 0, unreserve: 0, mail: 0 };
  const r: Retirement = {
    reserve: () => (calls.reserve++, onReserve(), reserves),
    unreserve: () => void calls.unreserve++,
    mail: () => (calls.mail++, mail),
  };
  return { r, calls };
}

test("sleepOrRetire with its timeout passed and the pool above its minimum retires: RETIRING, uncounted", () => {
  const sleep = fresh(2);
  sleep.fallAsleep(0, sleep.getSleepy());
  const { r, calls } = retirement(true, false);
  assertEquals(sleep.sleepOrRetire(0, 0, r), SLEPT_RETIRED, "retired");
  assertEquals(Atomics.load(sleep.words, SleepWords.state(0)), RETIRING, "its word says RETIRING");
  assertEquals(sleep.sleeping, 0, "uncounted");
  assertEquals(sleep.forget(0), false, "and its counted word says so");
  assertEquals(calls, { reserve: 1, unreserve: 0, mail: 1 }, "reserved once, mail looked at, kept reserved");
}, 10_000);

test("sleepOrRetire at the pool's minimum stays: timed out, awake, uncounted, nothing to unreserve", () => {
  const sleep = fresh(2);
  sleep.fallAsleep(0, sleep.getSleepy());
  const { r, calls } = retirement(false, false);
  assertEquals(sleep.sleepOrRetire(0, 0, r), SLEPT_TIMED_OUT, "timed out, stays");
  assertEquals(Atomics.load(sleep.words, SleepWords.state(0)), AWAKE, "awake");
  assertEquals(sleep.sleeping, 0, "uncounted");
  assertEquals(sleep.forget(0), false, "and its counted word says so");
  assertEquals(calls, { reserve: 1, unreserve: 0, mail: 0 }, "only the reserve was asked");
}, 10_000);

test("sleepOrRetire with mail counted stays: awake, uncounted, its reserve given back", () => {
  const sleep = fresh(2);
  sleep.fallAsleep(0, sleep.getSleepy());
  const { r, calls } = retirement(true, true);
  assertEquals(sleep.sleepOrRetire(0, 0, r), SLEPT_WOKEN, "stays to read its mail");
  assertEquals(Atomics.load(sleep.words, SleepWords.state(0)), AWAKE, "awake");
  assertEquals(sleep.sleeping, 0, "uncounted");
  assertEquals(calls, { reserve: 1, unreserve: 1, mail: 1 }, "reserve given back");
}, 10_000);

test("sleepOrRetire woken before its timeout stays as sleep does, and asks for no reserve", () => {
  const sleep = fresh(2);
  sleep.fallAsleep(0, sleep.getSleepy());
  assertEquals(sleep.newWork(), true, "a poster wakes worker 0");
  const { r, calls } = retirement(true, false);
  assertEquals(sleep.sleepOrRetire(0, 0, r), SLEPT_WOKEN, "woken");
  assertEquals(Atomics.load(sleep.words, SleepWords.state(0)), AWAKE, "awake");
  assertEquals(sleep.sleeping, 0, "uncounted");
  assertEquals(sleep.forget(0), false, "and its counted word says so");
  assertEquals(calls, { reserve: 0, unreserve: 0, mail: 0 }, "no reserve asked");
}, 10_000);

test("sleepOrRetire woken after its reserve (RetireCasSlot fails) stays, awake, its reserve given back", () => {
  const sleep = fresh(2);
  sleep.fallAsleep(0, sleep.getSleepy());
  let wokeIt = false;
  const { r, calls } = retirement(true, false, () => wokeIt = sleep.newWork());
  assertEquals(sleep.sleepOrRetire(0, 0, r), SLEPT_WOKEN, "woken, stays");
  assertEquals(wokeIt, true, "the poster saw it counted and woke it");
  assertEquals(Atomics.load(sleep.words, SleepWords.state(0)), AWAKE, "awake, not RETIRING");
  assertEquals(sleep.sleeping, 0, "uncounted once, not twice");
  assertEquals(calls, { reserve: 1, unreserve: 1, mail: 0 }, "reserve given back, no mail needed");
}, 10_000);
