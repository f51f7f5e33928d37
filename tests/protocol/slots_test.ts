/**
 * An elastic pool's slot words and size word (lib/protocol/slots.ts, `Sleep.sleepOrRetire`), one thread
 * playing each side in turn: a retirement reserves above the minimum only, leaves no sleep count behind,
 * loses to a wake that lands between its reservation and its compare-exchange, and stays when a post was
 * counted in its mail; a growth marks STARTING before it reserves, within the maximum. The protocol is
 * model-checked in spec/Elastic.tla; these pin the code's steps, deterministically, at the windows the
 * spec's mutants exploit.
 */
import { ControlWords, sleepRegionBytes, SleepWords, StatusWords } from "../../lib/protocol/layout.ts";
import { Sleep, SLEPT_RETIRED, SLEPT_TIMED_OUT, SLEPT_WOKEN } from "../../lib/protocol/sleep.ts";
import { ABSENT, AWAKE, RETIRING, SLEEPING, Slots, STARTING } from "../../lib/protocol/slots.ts";
import { assertEquals, test } from "../_test.ts";

function fresh(min: number, max: number) {
  const buffer = new SharedArrayBuffer(sleepRegionBytes(max));
  const sleep = new Sleep(buffer, 0, max);
  const control = new Int32Array(64);
  const status = new Int32Array(max * StatusWords.count);
  const slots = new Slots(control, sleep.words, status, max);
  slots.initElastic(min, max);
  for (let i = 0; i < min; i++) slots.bootStoreAwake(i);
  const retirement = (min: number, before?: () => void) => ({
    reserve: () => {
      const reserved = slots.retireReserve(min);
      before?.();
      return reserved;
    },
    unreserve: () => slots.retireUnreserve(),
    mail: () => Atomics.load(status, StatusWords.mail) !== 0,
  });
  return { sleep, slots, control, status, retirement };
}

/** Worker 0 falls asleep (counted) and its idle timeout passes (a 1 ms wait). */
function asleep(sleep: Sleep): void {
  assertEquals(sleep.fallAsleep(0, sleep.getSleepy()), true, "worker 0 counts itself asleep");
}

test("a worker whose sleep timed out retires above the minimum: RETIRING, uncounted, the size lowered", () => {
  const { sleep, slots, retirement } = fresh(1, 3);
  slots.growStoreStarting(1);
  slots.growReserve(1, 3);
  slots.bootStoreAwake(1);
  assertEquals(slots.size, 2);
  asleep(sleep);
  assertEquals(sleep.sleepOrRetire(0, 1, retirement(1)), SLEPT_RETIRED);
  assertEquals(slots.state(0), RETIRING, "its slot says RETIRING");
  assertEquals(sleep.sleeping, 0, "no sleep count left behind");
  assertEquals(Atomics.load(sleep.words, SleepWords.counted(0)), 0, "nor its counted mark");
  assertEquals(slots.size, 1, "the size lowered");
  assertEquals(slots.live(0), false, "thieves skip it");
  slots.retireStoreAbsent(0);
  assertEquals(slots.state(0), ABSENT);
  assertEquals(sleep.newWork(), false, "nobody to wake: its word is no sleeper's");
});

test("at the minimum a timed-out worker stays: AWAKE, uncounted, the size unchanged", () => {
  const { sleep, slots, retirement } = fresh(1, 2);
  asleep(sleep);
  assertEquals(sleep.sleepOrRetire(0, 1, retirement(1)), SLEPT_TIMED_OUT);
  assertEquals(slots.state(0), AWAKE);
  assertEquals(sleep.sleeping, 0);
  assertEquals(slots.size, 1, "never below the minimum");
});

test("a wake between the reservation and the compare-exchange wins: the worker stays, the size back", () => {
  const { sleep, slots, retirement } = fresh(1, 2);
  slots.growStoreStarting(1);
  slots.growReserve(1, 2);
  slots.bootStoreAwake(1);
  asleep(sleep);
  let woke = false;
  // The poster reads the count (1) and wakes worker 0 right after its reservation.
  const slept = sleep.sleepOrRetire(0, 1, retirement(1, () => (woke = sleep.newWork())));
  assertEquals(woke, true, "the poster woke worker 0");
  assertEquals(slept, SLEPT_WOKEN, "so worker 0 does not retire");
  assertEquals(slots.state(0), AWAKE, "its slot says AWAKE");
  assertEquals(sleep.sleeping, 0, "uncounted once");
  assertEquals(slots.size, 2, "its reservation given back");
});

test("a post counted in the mail before the compare-exchange keeps the worker: it stays AWAKE", () => {
  const { sleep, slots, status, retirement } = fresh(1, 2);
  slots.growStoreStarting(1);
  slots.growReserve(1, 2);
  slots.bootStoreAwake(1);
  asleep(sleep);
  let claimed = false;
  // The owner counts a directed post and sees SLEEPING (it will post to worker 0), before the CAS.
  const slept = sleep.sleepOrRetire(0, 1, retirement(1, () => (claimed = slots.claimMail(0))));
  assertEquals(claimed, true, "the owner may post to worker 0");
  assertEquals(slept, SLEPT_WOKEN, "worker 0 stays to read it");
  assertEquals(slots.state(0), AWAKE);
  assertEquals(slots.size, 2);
  assertEquals(Atomics.load(status, StatusWords.mail), 1, "the post is counted");
});

test("a post to an ABSENT slot is refused and leaves no count; a STARTING or live one is claimed", () => {
  const { slots, status } = fresh(1, 3);
  assertEquals(slots.claimMail(1), false, "ABSENT: refused");
  assertEquals(Atomics.load(status, StatusWords.count + StatusWords.mail), 0, "its count taken back");
  slots.growStoreStarting(1);
  assertEquals(slots.claimMail(1), true, "STARTING: the thread reads its messages once loaded");
  assertEquals(slots.claimMail(0), true, "AWAKE: yes");
});

test("growth marks a slot STARTING before it reserves, within the maximum; a refused one goes back", () => {
  const { slots, control } = fresh(1, 2);
  assertEquals(slots.growStoreStarting(0), false, "a live slot is not ABSENT");
  assertEquals(slots.growStoreStarting(1), true);
  assertEquals(slots.state(1), STARTING);
  assertEquals(slots.growReserve(1, 2), true);
  assertEquals(slots.size, 2);
  slots.growRelease(1);
  assertEquals([slots.state(1), slots.size], [ABSENT, 1], "a failed start gives both back");
  Atomics.store(control, ControlWords.poolSize, 2);
  slots.growStoreStarting(1);
  assertEquals(slots.growReserve(1, 2), false, "at the maximum: refused");
  assertEquals(slots.state(1), ABSENT, "and the slot back to ABSENT");
  assertEquals(slots.wantWorker(), true, "the first want tells the owner");
  assertEquals(slots.wantWorker(), false, "a second does not, until the owner looked");
  slots.takeWanted();
  assertEquals(slots.wantWorker(), true);
  assertEquals(SLEEPING, 1);
});

test("a slot is live (a thief may steal there) while AWAKE or SLEEPING, and not while RETIRING, ABSENT or STARTING", () => {
  const { sleep, slots } = fresh(1, 2);
  const at = SleepWords.state(1);
  const liveness = (state: number) => {
    Atomics.store(sleep.words, at, state);
    return [slots.state(1), slots.live(1)];
  };
  assertEquals(liveness(AWAKE), [AWAKE, true], "AWAKE: live");
  assertEquals(liveness(SLEEPING), [SLEEPING, true], "SLEEPING: live (a sleeper's deque may still be stolen from)");
  assertEquals(liveness(RETIRING), [RETIRING, false], "RETIRING: not live");
  assertEquals(liveness(ABSENT), [ABSENT, false], "ABSENT: not live");
  assertEquals(liveness(STARTING), [STARTING, false], "STARTING: not live (its deque is not yet the thread's)");
  assertEquals(slots.live(0), true, "worker 0, booted, is live");
});
