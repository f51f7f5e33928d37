/**
 * `Growth`, an elastic pool's growth (lib/owner/growth.ts), on one thread with real slot words over plain
 * memory, a stand-in clock (`Date.now`) and a stand-in timer (`setTimeout` records the delay it was asked
 * for; the test fires it): a look starts a worker only when work is queued and nobody is counted asleep,
 * after the settle delay, at least GROW_INTERVAL_MS after the last start ended, one start at a time, in the
 * first ABSENT slot, within the maximum; a failed start gives its slot and size back and is reported while
 * the pool runs; the counts `stats().elastic` shows (started, peak, current) follow. The pool tests
 * (tests/pool/elastic_test.ts) cross it through real workers.
 */
import { GROW_INTERVAL_MS, GROW_SETTLE_MS, Growth } from "../../lib/owner/growth.ts";
import { ControlWords, sleepRegionBytes, SleepWords } from "../../lib/protocol/layout.ts";
import { Sleep } from "../../lib/protocol/sleep.ts";
import { ABSENT, AWAKE, RETIRING, SLEEPING, Slots, STARTING } from "../../lib/protocol/slots.ts";
import { assertEquals, test } from "../_test.ts";

/** Settles pending microtasks (a `due()`'s look, a start's `then`). */
async function drain(): Promise<void> {
  for (let i = 0; i < 5; i++) await Promise.resolve();
}

/**
 * An elastic pool of `min`..`max` slots, the first `min` AWAKE, a growth over them with stand-in parts,
 * and a stand-in clock and timer, installed for `body` and restored after it.
 */
async function withGrowth(
  min: number,
  max: number,
  body: (g: ReturnType<typeof parts>) => Promise<void> | void,
): Promise<void> {
  const realNow = Date.now;
  const realSetTimeout = globalThis.setTimeout;
  const g = parts(min, max);
  Date.now = () => g.clock.now;
  // deno-lint-ignore no-explicit-any
  (globalThis as any).setTimeout = (fn: () => void, ms: number) => {
    g.timers.push({ fn, ms });
    return 0;
  };
  try {
    await body(g);
  } finally {
    Date.now = realNow;
    globalThis.setTimeout = realSetTimeout;
  }
}

function parts(min: number, max: number) {
  const buffer = new SharedArrayBuffer(sleepRegionBytes(max));
  const sleep = new Sleep(buffer, 0, max);
  const control = new Int32Array(64);
  const status = new Int32Array(max * 16);
  const slots = new Slots(control, sleep.words, status, max);
  slots.initElastic(min, max);
  for (let i = 0; i < min; i++) slots.bootStoreAwake(i);
  const clock = { now: 1000 };
  const timers: { fn: () => void; ms: number }[] = [];
  const world = { queued: 1, sleeping: 0, running: true, looks: 0 };
  const starts: { index: number; resolve: () => void; reject: (e: unknown) => void }[] = [];
  const failures: [number, unknown][] = [];
  const growth = new Growth({
    slots,
    sleeping: () => world.sleeping,
    queued: () => {
      world.looks++;
      return world.queued;
    },
    max,
    running: () => world.running,
    start: (index) =>
      new Promise<void>((resolve, reject) => {
        starts.push({ index, resolve, reject });
      }),
    failed: (index, error) => failures.push([index, error]),
  });
  /** Fires the one pending timer (asserting there is exactly one) and returns the delay it was set for. */
  const fire = (): number => {
    assertEquals(timers.length, 1, "one timer pending");
    const { fn, ms } = timers.shift()!;
    fn();
    return ms;
  };
  /** Stores slot `index`'s state directly (a worker's own transition). */
  const setState = (index: number, state: number) => Atomics.store(sleep.words, SleepWords.state(index), state);
  return { slots, control, clock, timers, world, starts, failures, growth, fire, setState };
}

test("growth: work queued and nobody asleep starts one worker, in the first ABSENT slot, after the settle delay", async () => {
  await withGrowth(1, 3, ({ slots, clock, timers, starts, growth, fire }) => {
    growth.check();
    assertEquals(starts.length, 0, "no start before the settle delay");
    assertEquals(timers.map((t) => t.ms), [GROW_SETTLE_MS], "a look again after the settle delay");
    assertEquals(slots.state(1), ABSENT, "no slot marked yet");
    assertEquals(slots.size, 1, "no size reserved yet");
    clock.now += GROW_SETTLE_MS;
    fire();
    assertEquals(starts.map((s) => s.index), [1], "one start, in slot 1 (the first ABSENT)");
    assertEquals(slots.state(1), STARTING, "slot 1 STARTING");
    assertEquals(slots.state(2), ABSENT, "slot 2 untouched");
    assertEquals(slots.size, 2, "the size reserved");
    assertEquals(growth.started, 1, "counted as started");
    assertEquals(timers.length, 0, "no look pending while the start is in flight");
  });
});

test("growth: a later look that still finds work after the settle delay starts at once (no second wait)", async () => {
  await withGrowth(1, 3, ({ clock, timers, starts, growth }) => {
    growth.check();
    assertEquals(timers.length, 1, "waits first");
    timers.length = 0;
    clock.now += GROW_SETTLE_MS + 1;
    growth.check();
    assertEquals(starts.length, 1, "the wait counted from the first look: started");
    assertEquals(timers.length, 0, "no further wait");
  });
});

test("growth: a look that found no work or a sleeper restarts the settle delay", async () => {
  await withGrowth(1, 3, ({ world, clock, timers, starts, growth }) => {
    growth.check(); // waiting since 1000
    timers.length = 0;
    clock.now += 1;
    world.queued = 0;
    growth.check();
    assertEquals(timers.length, 0, "nothing queued: no look scheduled");
    world.queued = 1;
    clock.now += GROW_SETTLE_MS;
    growth.check();
    assertEquals(starts.length, 0, "the settle delay restarted: no start yet");
    assertEquals(timers.map((t) => t.ms), [GROW_SETTLE_MS], "a whole settle delay again");
    timers.length = 0;
    clock.now += 1;
    world.sleeping = 1;
    growth.check();
    assertEquals(timers.length, 0, "a sleeper: no look scheduled");
    world.sleeping = 0;
    clock.now += GROW_SETTLE_MS;
    growth.check();
    assertEquals(starts.length, 0, "the settle delay restarted after the sleeper: no start yet");
    assertEquals(timers.map((t) => t.ms), [GROW_SETTLE_MS], "a whole settle delay again");
  });
});

test("growth: nothing queued, or a worker counted asleep, starts nothing however long it lasts", async () => {
  await withGrowth(1, 3, ({ world, clock, timers, starts, slots, growth }) => {
    world.queued = 0;
    for (let i = 0; i < 3; i++) {
      growth.check();
      clock.now += 100;
    }
    world.queued = 5;
    world.sleeping = 1;
    for (let i = 0; i < 3; i++) {
      growth.check();
      clock.now += 100;
    }
    assertEquals(starts.length, 0, "no start");
    assertEquals(timers.length, 0, "no look scheduled");
    assertEquals(slots.size, 1, "the size unchanged");
    assertEquals(growth.started, 0, "nothing started");
  });
});

test("growth: a pool that no longer runs starts nothing and leaves the grow want set", async () => {
  await withGrowth(1, 3, ({ world, clock, timers, starts, control, growth }) => {
    Atomics.store(control, ControlWords.growWanted, 1);
    world.running = false;
    growth.check();
    clock.now += 100;
    growth.check();
    assertEquals(starts.length, 0, "no start");
    assertEquals(timers.length, 0, "no look scheduled");
    assertEquals(world.looks, 0, "the queue not even looked at");
    assertEquals(Atomics.load(control, ControlWords.growWanted), 1, "the want untouched");
    world.running = true;
    growth.check();
    assertEquals(Atomics.load(control, ControlWords.growWanted), 0, "a look clears the want");
  });
});

test("growth: the grow want is cleared by a look even when nothing is queued", async () => {
  await withGrowth(1, 3, ({ world, control, growth }) => {
    Atomics.store(control, ControlWords.growWanted, 1);
    world.queued = 0;
    growth.check();
    assertEquals(Atomics.load(control, ControlWords.growWanted), 0, "cleared");
  });
});

test("growth: one start at a time; when it ends, the next waits GROW_INTERVAL_MS from its end", async () => {
  await withGrowth(1, 4, async ({ slots, clock, timers, starts, growth, fire }) => {
    growth.check();
    clock.now += GROW_SETTLE_MS;
    fire();
    assertEquals(starts.length, 1, "one start in flight");
    clock.now += 100;
    growth.check();
    growth.due();
    await drain();
    assertEquals(starts.length, 1, "no second start while one is in flight");
    assertEquals(timers.length, 0, "no look scheduled while in flight");
    slots.bootStoreAwake(starts[0].index);
    starts[0].resolve();
    await drain();
    // The end looks again (due): work still waits, and the last start ended just now.
    assertEquals(timers.map((t) => t.ms), [GROW_INTERVAL_MS], "the next look GROW_INTERVAL_MS after the end");
    assertEquals(starts.length, 1, "not yet");
    clock.now += GROW_INTERVAL_MS - 1;
    timers.length = 0;
    growth.check();
    assertEquals(starts.length, 1, "still not, 1 ms before");
    assertEquals(timers.map((t) => t.ms), [1], "1 ms left");
    clock.now += 1;
    fire();
    assertEquals(starts.map((s) => s.index), [1, 2], "the second start, in slot 2");
    assertEquals(slots.size, 3, "two reserved");
    assertEquals(growth.started, 2, "two started");
  });
});

test("growth: after a start ends, work that comes later still waits the settle delay (the wait restarts)", async () => {
  await withGrowth(1, 4, async ({ slots, world, clock, timers, starts, growth, fire }) => {
    growth.check();
    clock.now += GROW_SETTLE_MS;
    fire();
    slots.bootStoreAwake(1);
    world.queued = 0;
    starts[0].resolve();
    await drain();
    assertEquals(timers.length, 0, "nothing queued at the end: no look scheduled");
    clock.now += 50;
    world.queued = 1;
    growth.check();
    assertEquals(starts.length, 1, "no start at once: the settle delay again");
    assertEquals(timers.map((t) => t.ms), [GROW_SETTLE_MS], "a whole settle delay");
  });
});

test("growth: the peak counts the workers live after each start; current counts AWAKE, SLEEPING and RETIRING", async () => {
  await withGrowth(2, 5, async ({ slots, clock, starts, growth, fire, setState }) => {
    assertEquals(growth.current(), 2, "two AWAKE");
    assertEquals(growth.peak, 0, "no peak noted yet");
    growth.notePeak();
    assertEquals(growth.peak, 2, "the start's peak");
    growth.check();
    clock.now += GROW_SETTLE_MS;
    fire();
    assertEquals(slots.state(2), STARTING, "slot 2 STARTING");
    assertEquals(growth.current(), 2, "a STARTING slot is not current");
    slots.bootStoreAwake(2);
    starts[0].resolve();
    await drain();
    assertEquals(growth.peak, 3, "the peak after the start");
    assertEquals(growth.current(), 3, "three current");
    // A RETIRING and a SLEEPING slot count; an ABSENT one does not; the peak never goes down.
    setState(0, SLEEPING);
    setState(1, RETIRING);
    assertEquals(growth.current(), 3, "SLEEPING, RETIRING, AWAKE");
    setState(1, ABSENT);
    assertEquals(growth.current(), 2, "an ABSENT slot is not current");
    growth.notePeak();
    assertEquals(growth.peak, 3, "unchanged");
  });
});

test("growth: a start in every free slot up to the maximum, then none (the size full, the slot given back)", async () => {
  await withGrowth(1, 2, async ({ slots, clock, timers, starts, growth, fire }) => {
    growth.check();
    clock.now += GROW_SETTLE_MS;
    fire();
    assertEquals(starts.length, 1, "one start");
    slots.bootStoreAwake(1);
    starts[0].resolve();
    await drain();
    clock.now += GROW_INTERVAL_MS;
    fire();
    assertEquals(starts.length, 1, "no slot ABSENT: no second start");
    assertEquals(growth.started, 1, "one started");
    assertEquals(timers.length, 0, "no look scheduled");
  });
});

test("growth: a free slot but the size at the maximum (a retirement not yet ended): no start, the slot ABSENT again", async () => {
  await withGrowth(1, 3, ({ slots, control, clock, timers, starts, growth, fire }) => {
    Atomics.store(control, ControlWords.poolSize, 3); // two more reserved elsewhere
    growth.check();
    clock.now += GROW_SETTLE_MS;
    fire();
    assertEquals(starts.length, 0, "no start");
    assertEquals(slots.state(1), ABSENT, "slot 1 given back");
    assertEquals(slots.size, 3, "the size unchanged");
    assertEquals(growth.started, 0, "nothing started");
    assertEquals(timers.length, 0, "no look scheduled");
    // Once the size comes down, the next look starts at once (still waiting since the first look).
    Atomics.store(control, ControlWords.poolSize, 2);
    growth.check();
    assertEquals(starts.map((s) => s.index), [1], "started in slot 1");
  });
});

test("growth: a failed start gives its slot and size back, is uncounted, reported while the pool runs, and spaced", async () => {
  await withGrowth(1, 3, async ({ slots, clock, timers, starts, failures, growth, fire }) => {
    growth.check();
    clock.now += GROW_SETTLE_MS;
    fire();
    const error = new Error("no module");
    starts[0].reject(error);
    await drain();
    assertEquals(slots.state(1), ABSENT, "slot 1 ABSENT again");
    assertEquals(slots.size, 1, "the size given back");
    assertEquals(growth.started, 0, "uncounted");
    assertEquals(failures, [[1, error]], "reported with its slot and error");
    assertEquals(timers.length, 0, "not retried at once");
    assertEquals(growth.peak, 0, "no peak noted for a failed start");
    // The next event looks again: a start is in flight no more, spaced from the failure's end.
    growth.check();
    assertEquals(starts.length, 1, "not at once");
    assertEquals(timers.map((t) => t.ms), [GROW_INTERVAL_MS], "GROW_INTERVAL_MS after the failure");
    clock.now += GROW_INTERVAL_MS;
    fire();
    assertEquals(starts.map((s) => s.index), [1, 1], "slot 1 again");
  });
});

test("growth: a start that fails once the pool stopped running is not reported", async () => {
  await withGrowth(1, 3, async ({ slots, world, clock, starts, failures, growth, fire }) => {
    growth.check();
    clock.now += GROW_SETTLE_MS;
    fire();
    world.running = false;
    starts[0].reject(new Error("terminated"));
    await drain();
    assertEquals(failures.length, 0, "not reported");
    assertEquals(slots.state(1), ABSENT, "slot 1 given back all the same");
    assertEquals(slots.size, 1, "the size given back all the same");
  });
});

test("growth: due() schedules one look in a microtask, however often it is called", async () => {
  await withGrowth(1, 3, async ({ world, timers, growth }) => {
    world.queued = 0;
    growth.due();
    growth.due();
    growth.due();
    assertEquals(world.looks, 0, "not looked at synchronously");
    await drain();
    assertEquals(world.looks, 1, "one look");
    growth.due();
    await drain();
    assertEquals(world.looks, 2, "a later due looks again");
    world.queued = 1;
    growth.due();
    await drain();
    assertEquals(timers.length, 1, "the look waits the settle delay");
    growth.due();
    await drain();
    assertEquals(world.looks, 3, "a look already scheduled (the timer): due adds none");
  });
});

test("growth: a start goes to the first ABSENT slot, past SLEEPING, RETIRING and STARTING ones", async () => {
  await withGrowth(1, 5, ({ slots, control, clock, starts, growth, fire, setState }) => {
    setState(1, SLEEPING);
    setState(2, RETIRING);
    setState(3, STARTING);
    Atomics.store(control, ControlWords.poolSize, 2);
    growth.check();
    clock.now += GROW_SETTLE_MS;
    fire();
    assertEquals(starts.map((s) => s.index), [4], "slot 4, the only ABSENT");
    assertEquals(
      [slots.state(1), slots.state(2), slots.state(3)],
      [SLEEPING, RETIRING, STARTING],
      "the others untouched",
    );
    assertEquals(slots.state(0), AWAKE, "slot 0 untouched");
  });
});

test("growth: a look long after a failed start still waits the settle delay (the wait restarts at the reservation)", async () => {
  await withGrowth(1, 3, async ({ clock, timers, starts, growth, fire }) => {
    growth.check();
    clock.now += GROW_SETTLE_MS;
    fire();
    starts[0].reject(new Error("no module"));
    await drain();
    // Nothing looks until the next event, long after the failure's spacing.
    clock.now += 50;
    growth.check();
    assertEquals(starts.length, 1, "no start at once: the work has not waited the settle delay since");
    assertEquals(timers.map((t) => t.ms), [GROW_SETTLE_MS], "a whole settle delay");
  });
});

test("growth: the settle delay counts from a look at any time, time 0 included (only -1 means not waiting)", async () => {
  await withGrowth(1, 3, ({ clock, timers, starts, growth }) => {
    clock.now = 0;
    growth.check();
    assertEquals(timers.map((t) => t.ms), [GROW_SETTLE_MS], "waiting since time 0");
    timers.length = 0;
    clock.now = 1;
    growth.check();
    assertEquals(timers.map((t) => t.ms), [GROW_SETTLE_MS - 1], "still waiting since time 0: 1 ms left");
    timers.length = 0;
    clock.now = GROW_SETTLE_MS;
    growth.check();
    assertEquals(starts.length, 1, "started GROW_SETTLE_MS after time 0");
  });
});
