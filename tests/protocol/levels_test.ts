/**
 * The priority levels' own bookkeeping (`lib/protocol/levels.ts`), on one thread with plain memory: the
 * announcement of a level (once a handle, never for normal), the normal queue alone until a level was
 * seen announced, the estimates (`length`, `queued`), the cut-short state and repair of each of the three
 * queues, the note of a take (`into`), and the pure helpers (`levelRegions`, `asLevel`, `levelOf`). The
 * quota's sequences of takes are tests/protocol/levels_quota_test.ts's; the interleavings are
 * tests/lincheck/levels_test.ts's. These pin what StrykerJS's mutants of the file changed and no suite
 * noticed (issue 47).
 *
 * Deterministic: one thread, the queues in a SharedArrayBuffer, no timing.
 */
import { atomicsBinding, installSharedMemory, type SharedMemory } from "../../lib/protocol/atomics.ts";
import { initInjector, Injector, QUEUE_EMPTY } from "../../lib/protocol/injector.ts";
import { ControlWords, injectorRegionBytes, poolLayout } from "../../lib/protocol/layout.ts";
import { asLevel, Level, LEVEL_QUOTA, levelOf, levelRegions, LEVELS, Levels } from "../../lib/protocol/levels.ts";
import { assertEquals, assertThrows, test } from "../_test.ts";

/** Three queues of 16, the control words, and a handle to push with. */
function setUp(): { queues: [Injector, Injector, Injector]; control: Int32Array; producer: Levels } {
  const queues = [0, 1, 2].map(() => {
    const region = { buffer: new SharedArrayBuffer(injectorRegionBytes(16)), byteOffset: 0, capacity: 16 };
    initInjector(region);
    return new Injector(region);
  }) as [Injector, Injector, Injector];
  const control = new Int32Array(new SharedArrayBuffer(1024));
  return { queues, control, producer: new Levels({ queues, control }) };
}

/**
 * Runs `op` with a facade that counts each binding's calls and notes each access's view and index (and
 * throws at access `cutAt`, if given).
 */
function counting<T>(
  op: () => T,
  cutAt = -1,
): {
  counts: Record<string, number>;
  accesses: { key: string; view: unknown; index: unknown }[];
  value?: T;
  cut: boolean;
} {
  const counts: Record<string, number> = {};
  const accesses: { key: string; view: unknown; index: unknown }[] = [];
  let n = 0;
  const binding = {} as Record<string, unknown>;
  for (const key of Object.keys(atomicsBinding) as (keyof SharedMemory)[]) {
    const real = atomicsBinding[key] as (...args: unknown[]) => unknown;
    binding[key] = (...args: unknown[]) => {
      if (key !== "pause" && n++ === cutAt) throw new RangeError("cut");
      counts[key] = (counts[key] ?? 0) + 1;
      accesses.push({ key, view: args[0], index: args[1] });
      return real(...args);
    };
  }
  const restore = installSharedMemory(binding as unknown as SharedMemory);
  try {
    return { counts, accesses, value: op(), cut: false };
  } catch (error) {
    if (!(error instanceof RangeError) || error.message !== "cut") throw error;
    return { counts, accesses, cut: true };
  } finally {
    restore();
  }
}

const levelsWord = (control: Int32Array) => Atomics.load(control, ControlWords.levels);

test("levels: a push into the normal level announces nothing; high and low each set their own bit", () => {
  const { control, producer } = setUp();
  producer.pushPatiently(1, Level.normal);
  assertEquals(levelsWord(control), 0, "normal is never announced");
  producer.pushPatiently(2, Level.low);
  assertEquals(levelsWord(control), 1 << Level.low, "low's bit");
  producer.pushPatiently(3, Level.high);
  assertEquals(levelsWord(control), (1 << Level.low) | (1 << Level.high), "and high's");
}, 10_000);

test(
  "levels: a handle announces a level once: its later pushes into that level make no access to the levels word",
  () => {
    for (const level of [Level.high, Level.low]) {
      const { control, producer } = setUp();
      assertEquals(
        counting(() => producer.pushPatiently(1, level)).counts.or,
        1,
        `the first push into ${level} announces`,
      );
      assertEquals(counting(() => producer.pushPatiently(2, level)).counts.or, undefined, `the second does not`);
      // The other level is still announced on its first push, and only then.
      const other = level === Level.high ? Level.low : Level.high;
      assertEquals(counting(() => producer.pushPatiently(3, other)).counts.or, 1, `the first push into ${other}`);
      assertEquals(counting(() => producer.pushPatiently(4, other)).counts.or, undefined, `its second`);
      assertEquals(counting(() => producer.pushPatiently(5, level)).counts.or, undefined, `${level} again`);
      assertEquals(levelsWord(control), (1 << Level.high) | (1 << Level.low), "both bits");
    }
  },
  10_000,
);

test("levels: until a level other than normal is seen announced, a worker takes from the normal queue alone", () => {
  const { queues, control, producer } = setUp();
  // Tasks in the high and low queues that no handle announced (as a worker reading the word before a
  // producer's announcement sees the queues): a worker that read the word as 0 does not look there.
  queues[Level.high].pushPatiently(10);
  queues[Level.low].pushPatiently(30);
  producer.pushPatiently(20, Level.normal);
  const worker = new Levels({ queues, control });
  assertEquals(worker.length, 1, "length: the normal queue alone");
  assertEquals(worker.queued, 3, "queued: all three, whatever was announced");
  assertEquals(worker.take(), 20, "the normal task");
  assertEquals(worker.take(), QUEUE_EMPTY, "then none: the high and low queues are not looked at");
  assertEquals(worker.length, 0, "length still the normal queue's");
  // A producer announces low: the worker's next take serves every level, the highest first.
  producer.pushPatiently(31, Level.low);
  assertEquals(worker.take(), 10, "the high task first");
  assertEquals(worker.length, 2, "length: all three queues once a level was seen");
  assertEquals(worker.queued, 2, "queued");
  assertEquals([worker.take(), worker.take(), worker.take()], [30, 31, QUEUE_EMPTY], "then the low ones in order");
  // Seen once, served for good: the word is not what decides any more.
  Atomics.store(control, ControlWords.levels, 0);
  queues[Level.high].pushPatiently(11);
  assertEquals(worker.take(), 11, "a high task after the word reads 0 again");
}, 10_000);

test("levels: a worker reads the levels word at each take until it sees a bit, and no more after", () => {
  const { queues, control, producer } = setUp();
  const worker = new Levels({ queues, control });
  /** How many times a take reads the levels word. */
  const reads = (run: { accesses: { key: string; view: unknown; index: unknown }[] }) =>
    run.accesses.filter((a) => a.view === control && a.index === ControlWords.levels).length;
  producer.pushPatiently(1, Level.normal);
  const first = counting(() => worker.take());
  assertEquals([first.value, reads(first)], [1, 1], "a take while the word is 0 reads it once");
  const empty = counting(() => worker.take());
  assertEquals([empty.value, reads(empty)], [QUEUE_EMPTY, 1], "so does the next, on empty queues");
  producer.pushPatiently(2, Level.high);
  const sees = counting(() => worker.take());
  assertEquals([sees.value, reads(sees)], [2, 1], "the take that sees the bit reads it once");
  for (let i = 0; i < 3; i++) {
    const after = counting(() => worker.take());
    assertEquals([after.value, reads(after)], [QUEUE_EMPTY, 0], `take ${i} after it: no read of the word`);
  }
}, 10_000);

test("levels: length and queued sum the three queues, each counted once", () => {
  const { queues, control, producer } = setUp();
  producer.pushPatiently(1, Level.high);
  producer.pushPatiently(2, Level.normal);
  producer.pushPatiently(3, Level.normal);
  for (let i = 0; i < 4; i++) producer.pushPatiently(10 + i, Level.low);
  assertEquals(producer.queued, 7, "queued: 1 + 2 + 4");
  const worker = new Levels({ queues, control });
  assertEquals(worker.length, 2, "before any take: the normal queue alone");
  assertEquals(worker.take(), 1, "the high task");
  assertEquals(worker.length, 6, "then all three: 0 + 2 + 4");
  assertEquals(worker.queued, 6, "queued the same");
}, 10_000);

test("levels: a take notes the task it took in `into` at `at`, from whichever level and on either path", () => {
  const { queues, control, producer } = setUp();
  const into = new Int32Array(4);
  const worker = new Levels({ queues, control });
  producer.pushPatiently(7, Level.normal);
  assertEquals(worker.take(into, 1), 7, "normal alone");
  assertEquals(Array.from(into), [0, 7, 0, 0], "noted at word 1");
  producer.pushPatiently(9, Level.low);
  for (let i = 0; i < LEVEL_QUOTA; i++) producer.pushPatiently(100 + i, Level.high);
  for (let i = 0; i < LEVEL_QUOTA; i++) {
    assertEquals(worker.take(into, 2), 100 + i, `high take ${i}`);
    assertEquals(into[2], 100 + i, `noted ${i}`);
  }
  assertEquals(worker.take(into, 3), 9, "the starving low level's turn");
  assertEquals(Array.from(into), [0, 7, 100 + LEVEL_QUOTA - 1, 9], "noted at word 3");
}, 10_000);

test("levels: cutShort sees a cut-short operation on each of the three queues, and repair completes it", () => {
  for (let level = 0; level < LEVELS; level++) {
    // A push cut at each of its accesses in turn: whenever its queue was left half done, the handle says so.
    let halfDone = 0;
    for (let n = 0;; n++) {
      const { queues, control } = setUp();
      const handle = new Levels({ queues, control });
      assertEquals(handle.cutShort, false, "nothing cut short yet");
      const { cut } = counting(() => handle.pushPatiently(40 + level, level as 0 | 1 | 2), n);
      if (!cut) break;
      assertEquals(handle.cutShort, queues[level].cutShort, `cutShort is queue ${level}'s (cut at ${n})`);
      if (!handle.cutShort) continue;
      halfDone++;
      handle.repair();
      assertEquals(handle.cutShort, false, `repaired (${level}, cut at ${n})`);
      assertEquals(
        [queues[level].pop(), queues[level].pop()],
        [40 + level, QUEUE_EMPTY],
        `the push completed (${level})`,
      );
    }
    assertEquals(halfDone > 0, true, `some cut leaves queue ${level} half done`);
  }
}, 10_000);

test("levels: levelRegions are the layout's high, normal and low queues, in that order", () => {
  const layout = poolLayout({
    workers: 2,
    dequeCapacity: 256,
    taskCapacity: 64,
    inlineBytes: 192,
    blockBytes: 1024,
    blocks: 64,
  });
  assertEquals(levelRegions(layout), [layout.injectorHigh, layout.injector, layout.injectorLow], "the offsets");
}, 10_000);

test("levels: asLevel keeps high and low, and reads any other word as normal", () => {
  assertEquals([0, 1, 2, 3, -1, 7].map(asLevel), [0, 1, 2, 1, 1, 1], "the levels");
}, 10_000);

test(
  "levels: levelOf takes high, normal, low or nothing, and refuses anything else with a message naming the choices",
  () => {
    assertEquals([levelOf("high"), levelOf("normal"), levelOf(undefined), levelOf("low")], [0, 1, 1, 2], "the levels");
    const choices = `Cannot run task as 'priority' must be "high", "normal" or "low": received`;
    for (
      const [bad, said] of [["urgent", '"urgent"'], ["", '""'], [0, "number"], [null, "object"], [2, "number"]] as const
    ) {
      assertThrows(() => levelOf(bad), TypeError, `${choices} ${said}`);
    }
  },
  10_000,
);
