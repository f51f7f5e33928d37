/**
 * The bounded MPMC queue (`lib/protocol/injector.ts`, shipped) on plain memory, one thread: what its calls
 * return and leave behind — FIFO order over several laps and across the int32 wrap of positions, a full
 * queue's refusal, the initializer, the handle's checks and notes, the length, `pushPatiently`'s patience —
 * and the races a push or a pop can lose, made by running another handle's operation at a chosen shared
 * access of the first (the facade's binding, `installSharedMemory`, so the interleaving is deterministic).
 * The protocol itself is model-checked (spec/Injector.tla) and its schedules explored by
 * tests/lincheck/queue_test.ts; these pin what StrykerJS's mutants showed the suites did not (issue 47).
 */
import { atomicsBinding, installSharedMemory, type SharedMemory } from "../../lib/protocol/atomics.ts";
import { clearNotes, initInjector, Injector, lastClaimedPush, QUEUE_EMPTY } from "../../lib/protocol/injector.ts";
import { injectorRegionBytes, InjectorWords } from "../../lib/protocol/layout.ts";
import { assert, assertEquals, test } from "../_test.ts";
import { cutAt } from "./_cut_at.ts";

/** A fresh queue region of `capacity` slots, initialized. */
function region(capacity: number) {
  const r = { buffer: new SharedArrayBuffer(injectorRegionBytes(capacity)), byteOffset: 0, capacity };
  initInjector(r);
  return r;
}

/** Pops until empty. */
function drain(q: Injector): number[] {
  const got: number[] = [];
  for (let v = q.pop(); v !== QUEUE_EMPTY; v = q.pop()) got.push(v);
  return got;
}

/**
 * Runs `op`; just before its `at`-th shared access (from 0; `pause` not counted) runs `other` (another
 * thread's step, on the real binding). Returns what `op` returned; fails if `op` made fewer accesses.
 */
function interleave<T>(op: () => T, at: number, other: () => void): T {
  let count = 0;
  let ran = false;
  const binding = {} as Record<string, unknown>;
  for (const key of Object.keys(atomicsBinding) as (keyof SharedMemory)[]) {
    const real = atomicsBinding[key] as (...args: unknown[]) => unknown;
    binding[key] = (...args: unknown[]) => {
      if (key !== "pause" && !ran && count++ === at) {
        ran = true;
        restore();
        try {
          other();
        } finally {
          installSharedMemory(binding as unknown as SharedMemory);
        }
      }
      return real(...args);
    };
  }
  const restore = installSharedMemory(binding as unknown as SharedMemory);
  try {
    const value = op();
    assert(ran, `the operation made fewer than ${at + 1} shared accesses`);
    return value;
  } finally {
    restore();
  }
}

/**
 * Runs `body` with `Date.now` answering `clock()`; puts the real one back after.
 */
function withClock<T>(clock: () => number, body: () => T): T {
  const real = Date.now;
  Date.now = clock;
  try {
    return body();
  } finally {
    Date.now = real;
  }
}

test("a queue hands values back in FIFO order over several laps, between any of its handles", () => {
  const r = region(4);
  const a = new Injector(r);
  const b = new Injector(r);
  let next = 0;
  let expected = 0;
  for (let lap = 0; lap < 5; lap++) {
    for (let i = 0; i < 3; i++) assert((lap % 2 === 0 ? a : b).push(next++), `lap ${lap}: push ${i}`);
    assertEquals(a.length, 3, `lap ${lap}: three queued`);
    for (let i = 0; i < 3; i++) assertEquals((lap % 2 === 0 ? b : a).pop(), expected++, `lap ${lap}: pop ${i}`);
    assertEquals(a.pop(), QUEUE_EMPTY, `lap ${lap}: drained`);
    assertEquals(b.length, 0, `lap ${lap}: none queued`);
  }
}, 10_000);

test(
  "a queue refuses a push when full, takes it again once a value is popped, and says QUEUE_EMPTY (-1) when empty",
  () => {
    assertEquals(QUEUE_EMPTY, -1, "QUEUE_EMPTY");
    const q = new Injector(region(2));
    assertEquals(q.pop(), QUEUE_EMPTY, "a fresh queue is empty");
    assertEquals([q.push(1), q.push(2), q.push(3)], [true, true, false], "two slots");
    assertEquals(q.length, 2, "full");
    assertEquals(q.pop(), 1, "oldest first");
    assertEquals(q.push(4), true, "a slot freed");
    assertEquals(q.push(5), false, "full again");
    assertEquals(drain(q), [2, 4], "what was accepted, in order");
  },
  10_000,
);

test("a queue keeps FIFO order across the int32 wrap of its positions", () => {
  const capacity = 4;
  const r = region(capacity);
  const q = new Injector(r);
  // The state after 2^31 - 2 pushes and pops: head = tail = p, slot (p + i) & mask free for position p + i.
  const p = 0x7fff_fffe;
  q.words[InjectorWords.head] = p;
  q.words[InjectorWords.tail] = p;
  for (let i = 0; i < capacity; i++) q.words[InjectorWords.seqs + (((p + i) | 0) & q.mask)] = (p + i) | 0;
  let next = 0;
  let expected = 0;
  for (let round = 0; round < 3; round++) {
    for (let i = 0; i < capacity; i++) assert(q.push(next++), `round ${round}: push ${i}`);
    assertEquals(q.push(-7), false, `round ${round}: full`);
    assertEquals(q.length, capacity, `round ${round}: length`);
    for (let i = 0; i < capacity; i++) assertEquals(q.pop(), expected++, `round ${round}: pop ${i}`);
    assertEquals(q.pop(), QUEUE_EMPTY, `round ${round}: drained`);
  }
  assertEquals(q.words[InjectorWords.tail], (p + 3 * capacity) | 0, "the tail wrapped");
}, 10_000);

test("the queue's initializer makes a used region empty, whatever its words held", () => {
  const capacity = 8;
  const r = { buffer: new SharedArrayBuffer(injectorRegionBytes(capacity) + 128), byteOffset: 64, capacity };
  const all = new Int32Array(r.buffer);
  for (let i = 0; i < all.length; i++) all[i] = (i * 2654435761) | 0;
  initInjector(r);
  const q = new Injector(r);
  assertEquals(q.words[InjectorWords.head], 0, "head");
  assertEquals(q.words[InjectorWords.tail], 0, "tail");
  for (let i = 0; i < capacity; i++) assertEquals(q.words[InjectorWords.seqs + i], i, `seq ${i}`);
  assertEquals(q.length, 0, "empty");
  assertEquals(q.pop(), QUEUE_EMPTY, "nothing to pop");
  for (let i = 0; i < capacity; i++) assert(q.push(10 + i), `push ${i}`);
  assertEquals(q.push(99), false, "a full lap");
  assertEquals(drain(q), Array.from({ length: capacity }, (_, i) => 10 + i), "in order");
  assertEquals(all[15], (15 * 2654435761) | 0, "the word before the region is untouched");
}, 10_000);

test("the queue's handle refuses a bad capacity, offset, buffer or notes, and says which", () => {
  const good = region(4);
  const message = (open: () => unknown, type: ErrorConstructor): string => {
    try {
      open();
    } catch (e) {
      return e instanceof type ? (e as Error).message : `not a ${type.name}: ${e}`;
    }
    return "no error";
  };
  assertEquals(
    message(() => new Injector({ ...good, capacity: 3 }), RangeError),
    "Cannot create queue as 'capacity' must be a power of two: received 3",
    "capacity",
  );
  assertEquals(
    message(() => new Injector({ ...good, byteOffset: 4 }), RangeError),
    "Cannot create queue as 'byteOffset' must be a non-negative multiple of 64: received 4",
    "offset",
  );
  assertEquals(
    message(() => new Injector({ ...good, capacity: 16 }), RangeError),
    "Cannot create queue as the buffer is too small: 256 bytes at offset 0 need 256, but 'buffer.byteLength' is 192",
    "a buffer too small",
  );
  const notesMessage = "Cannot open queue as 'notes' must be an Int32Array of at least 3 words";
  assertEquals(message(() => new Injector(good, new Int32Array(2)), TypeError), notesMessage, "two note words");
  assertEquals(
    message(() => new Injector(good, new Uint32Array(3) as unknown as Int32Array), TypeError),
    notesMessage,
    "notes of another type",
  );
  assertEquals(message(() => new Injector(good, new Int32Array(3)), TypeError), "no error", "three note words");
  const q = new Injector(good);
  assertEquals([q.capacity, q.mask, q.valuesAt], [4, 3, InjectorWords.seqs + 4], "the handle's shape");
}, 10_000);

test("the queue's handle says what its last push published, and its notes what its last push claimed", () => {
  const r = region(2);
  const notes = new Int32Array(3);
  assertEquals(lastClaimedPush(notes), 0, "nothing pushed yet");
  const q = new Injector(r, notes);
  assertEquals(q.published, QUEUE_EMPTY, "a fresh handle published nothing");
  assertEquals(q.cutShort, false, "nothing cut short");
  q.push(41);
  assertEquals([q.published, lastClaimedPush(notes), q.cutShort], [41, 41, false], "after a push");
  let clockReads = 0;
  withClock(() => ++clockReads, () => q.pushPatiently(42));
  assertEquals(clockReads, 0, "a patient push that goes in at once never reads the clock");
  assertEquals([q.published, lastClaimedPush(notes), q.cutShort], [42, 42, false], "after a patient push");
  assertEquals(q.push(43), false, "full");
  assertEquals([q.published, lastClaimedPush(notes)], [42, 42], "a refused push claims and publishes nothing");
  assertEquals(q.pop(), 41, "a pop");
  assertEquals([q.published, lastClaimedPush(notes), q.cutShort], [42, 42, false], "a pop leaves them");
  q.repair();
  assertEquals(drain(q), [42], "a repair with nothing cut short changes nothing");
}, 10_000);

test("a queue pop notes the value it took in the word it is given, and nothing when empty", () => {
  const q = new Injector(region(4));
  const into = new Int32Array(3).fill(-5);
  assertEquals(q.pop(into, 1), QUEUE_EMPTY, "empty");
  assertEquals([...into], [-5, -5, -5], "nothing noted");
  q.push(6);
  q.push(7);
  assertEquals(q.pop(into, 2), 6, "a pop");
  assertEquals([...into], [-5, -5, 6], "noted at 2");
  assertEquals(q.pop(into), 7, "a pop, at word 0 by default");
  assertEquals([...into], [7, -5, 6], "noted at 0");
}, 10_000);

test("a queue push that finds its position taken by another producer moves on to the next one", () => {
  const r = region(4);
  const q = new Injector(r);
  const other = new Injector(r);
  // After the push read the tail (access 0), before it reads the slot's seq (access 1): the seq says
  // position 0 holds a value, the tail has moved on.
  assert(interleave(() => q.push(2), 1, () => assert(other.push(1), "the other push")), "the push");
  // After it read the seq, before its compare-exchange on the tail (access 2): the exchange fails.
  assert(interleave(() => q.push(4), 2, () => assert(other.push(3), "the other push")), "the push");
  assertEquals(drain(q), [1, 2, 3, 4], "both pushes, each at its own position");
}, 10_000);

test("a queue pop that loses the head to another consumer takes the next value", () => {
  const r = region(4);
  const q = new Injector(r);
  const other = new Injector(r);
  for (const v of [1, 2, 3, 4]) q.push(v);
  // Before the pop reads the seq (access 1) and before its compare-exchange on the head (access 2).
  assertEquals(interleave(() => q.pop(), 1, () => assertEquals(other.pop(), 1, "the other pop")), 2, "pop");
  assertEquals(interleave(() => q.pop(), 2, () => assertEquals(other.pop(), 3, "the other pop")), 4, "pop");
  assertEquals(q.pop(), QUEUE_EMPTY, "each value once");
  // The losing pop finds the queue empty after the other took the last value.
  q.push(5);
  assertEquals(
    interleave(() => q.pop(), 2, () => assertEquals(other.pop(), 5, "the other pop")),
    QUEUE_EMPTY,
    "nothing left",
  );
}, 10_000);

test("a queue pop answers QUEUE_EMPTY while the oldest position's producer has claimed but not published", () => {
  const r = region(4);
  const q = new Injector(r);
  const consumer = new Injector(r);
  let seen = 0;
  // The push's fourth access is its store of the value: between its claim and its publish, a pop.
  interleave(() => q.push(8), 3, () => {
    seen = consumer.pop();
  });
  assertEquals(seen, QUEUE_EMPTY, "not yet published");
  assertEquals(consumer.pop(), 8, "published");
}, 10_000);

test(
  "the queue's length counts what is queued, clamped to the capacity when others move on between its two reads",
  () => {
    const r = region(4);
    const q = new Injector(r);
    const other = new Injector(r);
    for (let n = 0; n <= 4; n++) {
      assertEquals(q.length, n, `${n} queued`);
      q.push(n);
    }
    // Between its read of the head (0) and its read of the tail, five pops and five pushes: the tail read
    // is 9, more than a capacity ahead of the head read.
    const length = interleave(() => q.length, 1, () => {
      for (let i = 0; i < 4; i++) other.pop();
      for (let i = 0; i < 4; i++) other.push(i);
      other.pop();
      other.push(9);
    });
    assertEquals(length, 4, "clamped to the capacity");
    // Others make 2^31 + 5 pushes and 2^31 + 3 pops between its two reads (fast-forwarded: the words written
    // as they would leave them): the tail read is 2^31 + 5 past the head read, a negative int32 difference.
    const w = new Injector(region(4));
    const ahead = interleave(() => w.length, 1, () => {
      const tail = (2 ** 31 + 5) | 0;
      const head = (tail - 2) | 0;
      w.words[InjectorWords.tail] = tail;
      w.words[InjectorWords.head] = head;
      for (let p = (head - 2) | 0; p !== tail; p = (p + 1) | 0) {
        // Positions head - 2 and head - 1 popped (their slots free for a lap on), head and head + 1 queued.
        w.words[InjectorWords.seqs + (p & w.mask)] = p === head || p === ((head + 1) | 0) ? (p + 1) | 0 : (p + 4) | 0;
      }
    });
    assertEquals(ahead, 0, "clamped to zero, not negative");
  },
  10_000,
);

test("a queue's patient push retries through a full queue until a slot frees, without giving up before 10 s", () => {
  const r = region(2);
  const q = new Injector(r);
  const other = new Injector(r);
  q.push(1);
  q.push(2);
  let now = 1_000_000;
  let loads = 0;
  let clockReads = 0;
  const restore = installSharedMemory({
    ...atomicsBinding,
    load: (view, index) => {
      // Some 5,000 retries (past the first look at the clock, at 4,096), then a consumer frees a slot.
      if (++loads === 10_000) {
        assertEquals(Atomics.load(view, InjectorWords.seqs), 1, "slot 0 still holds position 0's value");
        Atomics.store(view, InjectorWords.head, 1);
        Atomics.store(view, InjectorWords.seqs, 2);
      }
      return Atomics.load(view, index);
    },
  });
  try {
    // The clock stands exactly 10 s after the start: the push has not yet failed for more than 10 s.
    withClock(() => {
      clockReads++;
      const t = now;
      now = 1_010_000;
      return t;
    }, () => q.pushPatiently(3));
  } finally {
    restore();
  }
  assert(loads >= 10_000, "it retried until the slot freed");
  // The clock costs more than a retry: read at the first failure, then once every 4,096 retries.
  assertEquals(clockReads, 2, "the clock read at the start and after 4,096 retries");
  assertEquals(drain(other), [2, 3], "the patient push went in after the freed slot's successor");
}, 60_000);

test(
  "a queue's patient push on a queue that stays full throws once more than 10 s have passed, and says why; it looks at the clock once every 4,096 retries",
  () => {
    const q = new Injector(region(2));
    q.push(1);
    q.push(2);
    let now = 5_000;
    let message = "";
    let clockReads = 0;
    try {
      withClock(() => {
        clockReads++;
        const t = now;
        now += 10_001;
        return t;
      }, () => q.pushPatiently(3));
    } catch (e) {
      message = (e as Error).message;
    }
    assertEquals(
      message,
      "Cannot push 3 as the queue has stayed full for 10 s: a value was pushed twice (a bug in filch)",
      "the error",
    );
    assertEquals(clockReads, 2, "the start, then one look after 4,096 retries");
    assertEquals(drain(q), [1, 2], "nothing pushed");
    // A handle that threw is whole: nothing was claimed.
    assertEquals(q.cutShort, false, "not cut short");
  },
  60_000,
);

/**
 * A push or pop of one handle cut short at access `n`, then its repair cut short at access `m`, another
 * handle popping and pushing after each; then the repair completes. Checks that every value is in the
 * queue once (a pop cut short gave its value to nobody; a push cut short after its claim is completed,
 * one cut before it pushed nothing) and that no position stays claimed, once the handle's `next` operation
 * (which repairs first) or an explicit repair ran. Returns whether the operation and
 * the repair were cut (a run whose operation was not cut checks nothing).
 */
function cutTwice(
  op: "push" | "pop" | "pushPatiently",
  size: number,
  n: number,
  m: number,
  next: "repair" | "push" | "pop" | "pushPatiently" = "repair",
  start = 0,
): { opCut: boolean; repairCut: boolean } {
  const r = region(8); // room for every value: a patient push must never meet a full queue
  const notes = new Int32Array(3);
  const mine = new Injector(r, notes);
  const other = new Injector(r);
  // `start` values through the queue first, so that the cut position is not slot 0.
  for (let i = 0; i < start; i++) other.push(-1 - i), other.pop();
  const expected = Array.from({ length: size }, (_, i) => 100 + i);
  for (const v of expected) other.push(v);
  const noted = new Int32Array(1).fill(-1);
  const opCut = cutAt(n, () => op === "pop" ? mine.pop(noted) : op === "push" ? mine.push(7) : mine.pushPatiently(7));
  if (!opCut) return { opCut, repairCut: false };
  // Whether the push claimed a position (its notes name the value from its claim on).
  const claimed = op === "pop" ? mine.words[InjectorWords.head] !== start : lastClaimedPush(notes) === 7;
  if (op !== "pop" && claimed) expected.push(7);
  assertEquals(mine.cutShort, claimed, `${op} cut at access ${n}: cut short once it claimed a position`);
  const got: number[] = [];
  // The others pop and push `rounds` times (pushing only while 6 or fewer are queued or claimed: room is
  // left for the cut push's value and the next push); enough rounds reuse the cut position's slot.
  const othersGoOn = (tag: number, rounds: number) => {
    for (let i = 0; i < rounds; i++) {
      const v = other.pop(); // QUEUE_EMPTY if the cut position's value is not yet back or published
      if (v !== QUEUE_EMPTY) got.push(v);
      if (other.length < 6 && other.push(tag + i)) expected.push(tag + i);
    }
  };
  othersGoOn(200, 1);
  const repairCut = cutAt(m, () => mine.repair());
  othersGoOn(300, 9);
  // The handle's next operation repairs first (or an explicit repair).
  if (next === "repair") mine.repair();
  else if (next === "pop") {
    const v = mine.pop();
    if (v !== QUEUE_EMPTY) got.push(v);
  } else if (next === "push" ? mine.push(400) : (mine.pushPatiently(400), true)) expected.push(400);
  const what = `${op} (${size} queued) cut at access ${n}, its repair cut at access ${m}, then ${next}`;
  assert(!mine.cutShort, `${what}: whole after the repair`);
  assertEquals(noted[0], -1, `${what}: a pop cut short noted nothing`);
  sameSet([...got, ...drain(other)], expected, `${what}: every value once`);
  for (let i = 0; i < 8; i++) assert(other.push(i), `${what}: push ${i} of a full lap`);
  assertEquals(drain(mine), [0, 1, 2, 3, 4, 5, 6, 7], `${what}: a full lap, in order`);
  return { opCut, repairCut };
}

/** Every value of `expected` exactly once in `got` (in any order). */
function sameSet(got: number[], expected: number[], what: string): void {
  assertEquals([...got].sort((a, b) => a - b), [...expected].sort((a, b) => a - b), what);
}

test(
  "a queue repair cut short at any access resumes at the next, or at the handle's next push or pop: nothing lost or duplicated while others push and pop between",
  () => {
    let cases = 0;
    for (const op of ["push", "pop", "pushPatiently"] as const) {
      for (const size of [1, 3]) {
        for (let n = 0; cutTwice(op, size, n, 0).opCut; n++) {
          for (let m = 0; cutTwice(op, size, n, m).repairCut; m++) {
            for (const next of ["push", "pop", "pushPatiently"] as const) cutTwice(op, size, n, m, next);
            cutTwice(op, size, n, m, "repair", 3);
            cases++;
          }
        }
      }
    }
    assert(cases > 30, `too few cases (${cases})`);
  },
  60_000,
);

test("a queue handle's notes cleared say that it claimed no push, even of 0, and its next push repairs nothing", () => {
  const notes = new Int32Array([7, 7, 0, 7]); // dirty: what a past thread's handle left, its value 0
  clearNotes(notes);
  assertEquals(lastClaimedPush(notes), QUEUE_EMPTY, "no push claimed: not 0, which is a handle");
  assertEquals([notes[0], notes[1], notes[3]], [0, 0, 7], "nothing half done, position 0; the spare word untouched");
  const r = region(4);
  const q = new Injector(r, notes);
  assert(q.push(0), "a push of 0 on the cleared notes");
  assertEquals(lastClaimedPush(notes), 0, "now it claimed 0");
  assertEquals(drain(new Injector(r, new Int32Array(4))), [0], "pushed once, nothing repaired before it");
});
