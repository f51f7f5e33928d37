/**
 * The producer registry's own steps (`lib/protocol/producers.ts`), on one thread with a real pool memory:
 * what a claim resets of a slot a past producer left dirty (and nothing past that slot), what a release
 * undoes and gives back, the ids and origin words a slot maps to, the lifecycle codes as the words other
 * threads read, the wake of one producer (exchange, then exactly one notify), and the ring order of the
 * record waiters' wake. Every slot loop with every slot claimed is tests/protocol/producer_slots_test.ts's;
 * the interleavings are tests/lincheck/producers_test.ts's. These pin what StrykerJS's mutants of the file
 * changed and no suite noticed (issue 47).
 *
 * Deterministic: one thread, no timing.
 */
import { resolveOptions } from "../../lib/options.ts";
import { atomicsBinding, installSharedMemory, type SharedMemory } from "../../lib/protocol/atomics.ts";
import { ControlWords, NoteWords, ProducerWords } from "../../lib/protocol/layout.ts";
import { PoolMemory } from "../../lib/protocol/memory.ts";
import {
  claimSlot,
  originOf,
  PoolStateCode,
  type ProducerChannel,
  producerThreadId,
  releaseSlot,
  slotNotes,
  slotOf,
  SlotState,
  wakeProducer,
  wakeRecordWaiters,
} from "../../lib/protocol/producers.ts";
import { assertEquals, test } from "../_test.ts";

/** A pool memory with `slots` producer slots, none claimed. */
function newMemory(slots = 3, workers = 2): PoolMemory {
  return PoolMemory.create(resolveOptions({ workers, producers: slots, taskCapacity: 64 }).shape);
}

/**
 * Runs `op` with a facade that records each `notify` call (index, count) and counts every binding's calls
 * (the shared accesses, by kind), forwarding each.
 */
function notifies<T>(op: () => T): { value: T; calls: [number, number][]; counts: Record<string, number> } {
  const calls: [number, number][] = [];
  const counts: Record<string, number> = {};
  const binding = {} as Record<string, unknown>;
  for (const key of Object.keys(atomicsBinding) as (keyof SharedMemory)[]) {
    const real = atomicsBinding[key] as (...args: unknown[]) => unknown;
    binding[key] = (...args: unknown[]) => {
      if (key === "notify") calls.push([args[1] as number, args[2] as number]);
      counts[key] = (counts[key] ?? 0) + 1;
      return real(...args);
    };
  }
  const restore = installSharedMemory(binding as unknown as SharedMemory);
  try {
    return { value: op(), calls, counts };
  } finally {
    restore();
  }
}

const wordsOf = (memory: PoolMemory, slot: number) => memory.slotLine(slot);

test(
  "producers: a claim resets every word of a slot a past producer left dirty, and its notes, and no other slot's",
  () => {
    const memory = newMemory();
    const { buffer, layout } = memory;
    const noteWords = layout.notesBytes / 4;
    // Every slot's line and notes dirty, as past producers (dead ones included) may leave them.
    for (let s = 1; s <= 3; s++) {
      const line = wordsOf(memory, s);
      for (const w of [ProducerWords.pending, ProducerWords.waiting, ProducerWords.countedWaiting]) line[w] = 7;
      line[ProducerWords.countedRoom] = 7;
      line[ProducerWords.placing] = 7;
      slotNotes(buffer, layout, s, 0, noteWords).fill(7);
    }
    assertEquals(claimSlot(buffer, layout), 1, "the first free slot");
    assertEquals(claimSlot(buffer, layout), 2, "the next");
    for (const s of [1, 2]) {
      const line = wordsOf(memory, s);
      assertEquals(
        [ProducerWords.state, ProducerWords.pending, ProducerWords.waiting, ProducerWords.countedWaiting].map((w) =>
          line[w]
        ),
        [SlotState.OPEN, 0, 0, 0],
        `slot ${s}: open, nothing pending, not waiting, not counted`,
      );
      assertEquals([line[ProducerWords.countedRoom], line[ProducerWords.placing]], [0, -1], `slot ${s}: room, placing`);
      const notes = Array.from(slotNotes(buffer, layout, s, 0, noteWords));
      // The level queues' handles say they claimed no push (value -1: zeroed, they would say handle 0).
      const noPush = [NoteWords.injectorHigh, NoteWords.injector, NoteWords.injectorLow].map((at) => at + 2);
      const want = notes.map((_, i) =>
        (i >= NoteWords.table && i < NoteWords.table + 4) || noPush.includes(i) ? -1 : 0
      );
      assertEquals(notes, want, `slot ${s}: notes clear, the table's -1, no level push claimed`);
    }
    // Slot 3 is not claimed: its line and notes are as they were.
    const third = wordsOf(memory, 3);
    assertEquals([third[ProducerWords.state], third[ProducerWords.pending]], [SlotState.FREE, 7], "slot 3 untouched");
    assertEquals(
      Array.from(slotNotes(buffer, layout, 3, 0, noteWords)).every((v) => v === 7),
      true,
      "slot 3's notes untouched",
    );
    assertEquals(Atomics.load(memory.control, ControlWords.producersOpen), 2, "two open");
  },
  10_000,
);

test("producers: a claim skips a slot that is not free (open or dead) and leaves it as it is", () => {
  const memory = newMemory();
  const { buffer, layout } = memory;
  Atomics.store(wordsOf(memory, 1), ProducerWords.state, SlotState.DEAD);
  wordsOf(memory, 1)[ProducerWords.pending] = 5;
  assertEquals(claimSlot(buffer, layout), 2, "slot 1 is dead: slot 2");
  assertEquals(
    [wordsOf(memory, 1)[ProducerWords.state], wordsOf(memory, 1)[ProducerWords.pending]],
    [2, 5],
    "slot 1 as it was",
  );
  assertEquals(claimSlot(buffer, layout), 3, "then slot 3");
  assertEquals(claimSlot(buffer, layout), -1, "then none");
  assertEquals(Atomics.load(memory.control, ControlWords.producersOpen), 2, "only the claims count");
}, 10_000);

test("producers: a pool without producer slots has none to claim", () => {
  const memory = newMemory(0);
  assertEquals(claimSlot(memory.buffer, memory.layout), -1, "no slot");
  assertEquals(Atomics.load(memory.control, ControlWords.producersOpen), 0, "none open");
  // A layout whose shape does not say (no `producers`): none either.
  const layout = { ...memory.layout, shape: { ...memory.layout.shape, producers: undefined } };
  assertEquals(claimSlot(memory.buffer, layout), -1, "no slot when the shape names none");
}, 10_000);

test("producers: a release frees the slot and uncounts it; waits it did not count are left to the others", () => {
  const memory = newMemory();
  const { buffer, layout, control } = memory;
  assertEquals([claimSlot(buffer, layout), claimSlot(buffer, layout)], [1, 2], "two claims");
  // Another producer counts itself waiting for a record and for room; slot 1 counted neither.
  Atomics.store(control, ControlWords.recordWaiters, 1);
  Atomics.store(control, ControlWords.roomWaiters, 1);
  releaseSlot(buffer, layout, 1);
  assertEquals(wordsOf(memory, 1)[ProducerWords.state], SlotState.FREE, "slot 1 free");
  assertEquals(wordsOf(memory, 2)[ProducerWords.state], SlotState.OPEN, "slot 2 still open");
  assertEquals(Atomics.load(control, ControlWords.producersOpen), 1, "one open");
  assertEquals(
    [Atomics.load(control, ControlWords.recordWaiters), Atomics.load(control, ControlWords.roomWaiters)],
    [1, 1],
    "the other producer's waits still counted",
  );
  // Slot 2 counted a record wait only: that one is undone, the room wait stays.
  Atomics.store(wordsOf(memory, 2), ProducerWords.countedWaiting, 1);
  releaseSlot(buffer, layout, 2);
  assertEquals(
    [Atomics.load(control, ControlWords.recordWaiters), Atomics.load(control, ControlWords.roomWaiters)],
    [0, 1],
    "its record wait uncounted, the room wait left",
  );
  assertEquals(wordsOf(memory, 2)[ProducerWords.countedWaiting], 0, "its counted word cleared");
  // Then a slot that counted a room wait only.
  assertEquals(claimSlot(buffer, layout), 1, "slot 1 again");
  Atomics.store(wordsOf(memory, 1), ProducerWords.countedRoom, 1);
  releaseSlot(buffer, layout, 1);
  assertEquals(
    [Atomics.load(control, ControlWords.recordWaiters), Atomics.load(control, ControlWords.roomWaiters)],
    [0, 0],
    "its room wait uncounted",
  );
  assertEquals(wordsOf(memory, 1)[ProducerWords.countedRoom], 0, "its counted-room word cleared");
  assertEquals(Atomics.load(control, ControlWords.producersOpen), 0, "none open");
}, 10_000);

test("producers: a remote slot's thread id is past every worker's index, one a slot", () => {
  for (const workers of [1, 3]) {
    const { layout } = newMemory(3, workers);
    assertEquals(
      [1, 2, 3].map((s) => producerThreadId(layout, s)),
      [workers, workers + 1, workers + 2],
      `${workers} workers`,
    );
  }
}, 10_000);

test("producers: origin words name the owner as 0 and slot s as s + 1, and slotOf reads them back", () => {
  assertEquals([0, 1, 2, 64].map(originOf), [0, 2, 3, 65], "originOf");
  assertEquals([0, 2, 3, 65].map(slotOf), [0, 1, 2, 64], "slotOf");
}, 10_000);

test("producers: the lifecycle codes are the words producers read, open being a fresh buffer's 0", () => {
  assertEquals({ ...PoolStateCode }, { open: 0, closing: 1, closed: 2, terminated: 3 }, "the codes");
  assertEquals({ ...SlotState }, { FREE: 0, OPEN: 1, DEAD: 2 }, "a slot's states, FREE a fresh buffer's 0");
  const memory = newMemory();
  assertEquals(Atomics.load(memory.control, ControlWords.poolState), PoolStateCode.open, "a fresh pool is open");
}, 10_000);

test("producers: wakeProducer takes a waiting word from 1 to 0 and notifies it once; a word at 0 is left alone", () => {
  const memory = newMemory();
  const channel: ProducerChannel = memory.channels[2];
  Atomics.store(channel.words, channel.waiting, 1);
  const woke = notifies(() => wakeProducer(channel));
  assertEquals(woke.value, true, "it woke the producer");
  assertEquals(woke.calls, [[channel.waiting, 1]], "one notify, of one waiter, on the waiting word");
  assertEquals(Atomics.load(channel.words, channel.waiting), 0, "the word taken to 0");
  const again = notifies(() => wakeProducer(channel));
  assertEquals([again.value, again.calls.length], [false, 0], "not waiting: no wake, no notify");
}, 10_000);

test("producers: the record wake goes to the first counted waiter from the turn's slot on, round the ring", () => {
  const memory = newMemory(4);
  const { channels, control } = memory; // slots 0 to 4
  const arm = (slot: number, counted: number, waiting: number) => {
    Atomics.store(channels[slot].words, channels[slot].counted, counted);
    Atomics.store(channels[slot].words, channels[slot].waiting, waiting);
  };
  const waiting = () => channels.map((c) => Atomics.load(c.words, c.waiting));
  // Nobody counted: no wake, and the turn is not taken.
  Atomics.store(control, ControlWords.recordWakeTurn, 3);
  arm(1, 1, 1);
  assertEquals(wakeRecordWaiters(channels, control), false, "no record waiters counted: no wake");
  assertEquals(Atomics.load(control, ControlWords.recordWakeTurn), 3, "the turn untouched");
  Atomics.store(control, ControlWords.recordWaiters, 2);
  // Waiters at slots 1 and 4; turn 3: slot 4 first (3 is not waiting), then the ring wraps to 1.
  arm(4, 1, 1);
  assertEquals(wakeRecordWaiters(channels, control), true, "turn 3: a wake");
  assertEquals(waiting(), [0, 1, 0, 0, 0], "slot 4 woken, slot 1 still waits");
  assertEquals(Atomics.load(control, ControlWords.recordWakeTurn), 4, "the turn taken");
  arm(4, 1, 1);
  Atomics.store(control, ControlWords.recordWakeTurn, 2);
  assertEquals(wakeRecordWaiters(channels, control), true, "turn 2");
  assertEquals(waiting(), [0, 1, 0, 0, 0], "slot 4 again: the first from slot 2 on");
  Atomics.store(control, ControlWords.recordWakeTurn, 0);
  arm(4, 1, 1);
  assertEquals(wakeRecordWaiters(channels, control), true, "turn 0");
  assertEquals(waiting(), [0, 0, 0, 0, 1], "slot 1, the first from slot 0 on");
  // A waiting word of a producer that is not counted is passed over; one counted but not waiting too.
  arm(1, 0, 1);
  arm(2, 1, 0);
  Atomics.store(control, ControlWords.recordWakeTurn, 1);
  assertEquals(wakeRecordWaiters(channels, control), true, "turn 1");
  assertEquals(waiting(), [0, 1, 0, 0, 0], "slot 4: slot 1 is not counted, slot 2 not waiting");
  // Nobody left that is both: no wake, and the turn still moves on.
  assertEquals(wakeRecordWaiters(channels, control), false, "none to wake");
  assertEquals(Atomics.load(control, ControlWords.recordWakeTurn), 3, "two turns taken");
}, 10_000);

test("producers: the record wake's turn keeps the ring's order past 2^31 (read unsigned)", () => {
  const memory = newMemory(4);
  const { channels, control } = memory; // 5 channels
  Atomics.store(control, ControlWords.recordWaiters, 1);
  for (let slot = 0; slot < channels.length; slot++) Atomics.store(channels[slot].words, channels[slot].counted, 1);
  // The turn word at 2^31 - 1, then 2^31 (-2^31 as an int32), …: unsigned 2147483647 % 5 = 2, then 3, 4, 0.
  Atomics.store(control, ControlWords.recordWakeTurn, 0x7fffffff);
  const woken: number[] = [];
  for (let i = 0; i < 4; i++) {
    for (const c of channels) Atomics.store(c.words, c.waiting, 1);
    assertEquals(wakeRecordWaiters(channels, control), true, `wake ${i}`);
    woken.push(channels.findIndex((c) => Atomics.load(c.words, c.waiting) === 0));
  }
  assertEquals(woken, [2, 3, 4, 0], "the slots woken in ring order across the wrap");
}, 10_000);

test("producers: a wake of a producer that does not wait only reads its word: no write to its line", () => {
  const memory = newMemory();
  const channel = memory.channels[1];
  // Its waiting word shares the slot's line with the words its producer writes (pending …): a wake that
  // finds it not waiting leaves the line alone (the load filters; the exchange is for a waiting one).
  const { value, counts } = notifies(() => wakeProducer(channel));
  assertEquals([value, counts], [false, { load: 1 }], "one load, nothing else");
}, 10_000);

test(
  "producers: a record wake looks at each slot once: with none waiting, one load a slot after the count and the turn",
  () => {
    for (const slots of [1, 4]) {
      const memory = newMemory(slots);
      const { channels, control } = memory;
      Atomics.store(control, ControlWords.recordWaiters, 1);
      for (const turn of [0, slots]) {
        Atomics.store(control, ControlWords.recordWakeTurn, turn);
        const { value, counts } = notifies(() => wakeRecordWaiters(channels, control));
        // recordWaiters, then each channel's counted word once: nobody counted, so no waiting word is read.
        assertEquals([value, counts], [false, { load: 1 + channels.length, add: 1 }], `${slots} slots, turn ${turn}`);
      }
    }
  },
  10_000,
);
