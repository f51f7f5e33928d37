/**
 * The sweep after a producer thread's death (`lib/owner/producer_deaths.ts` `ProducerDeaths`), on the
 * shipped module with a real pool memory (`PoolMemory.create`) and the owner's task table, single-threaded:
 * which slot's death is noticed, what it counts (deaths, abandoned tasks, deaths inside steps, cancelled
 * tasks), what it takes back (a task published and not pushed, records taken and not published, every
 * record of the slot's tasks, the last one included), and when the slot is FREE again. The sweep's rounds
 * run on timers; a test waits for a round with a macrotask (the first round runs after one microtask, the
 * next after a few ms) and for the sweep's end with `settled()`.
 *
 * Written for StrykerJS's survivors of producer_deaths.ts (issue 47, "Mutants nobody here chose").
 */
import { ControlWords, NoteWords, ProducerWords, SlotCountWords } from "../../lib/protocol/layout.ts";
import { RecordWords } from "../../lib/record/fields.ts";
import { Injector, QUEUE_EMPTY } from "../../lib/protocol/injector.ts";
import { Level } from "../../lib/protocol/levels.ts";
import { PoolMemory } from "../../lib/protocol/memory.ts";
import { claimSlot, originOf, SlotState } from "../../lib/protocol/producers.ts";
import { ProducerDeaths } from "../../lib/owner/producer_deaths.ts";
import { TABLE_NOTE_WORDS, tableNotesInStep, TaskState, TaskTable } from "../../lib/record/task.ts";
import { assert, assertEquals, test, within } from "../_test.ts";
import { cutAt as killAt } from "../protocol/_cut_at.ts";

/** Records in the pool (small: the sweep walks every one). */
const CAPACITY = 8;

/** A pool memory with two producer slots, both claimed (1 and 2), its table and the deaths. */
function world(running: () => boolean = () => true) {
  const memory = PoolMemory.create({
    workers: 1,
    dequeCapacity: 4,
    taskCapacity: CAPACITY,
    inlineBytes: 64,
    blockBytes: 128,
    blocks: 4,
    producers: 2,
  });
  TaskTable.init(memory);
  const table = new TaskTable(memory);
  assertEquals(claimSlot(memory.buffer, memory.layout), 1, "slot 1");
  assertEquals(claimSlot(memory.buffer, memory.layout), 2, "slot 2");
  const deaths = new ProducerDeaths({ memory, table, levels: memory.levels(), running });
  return { memory, table, deaths };
}

type World = ReturnType<typeof world>;

/** A task of `slot` (0: the owner's) in `state`: its handle. */
function task(w: World, slot: number, state: number): number {
  const handle = w.table.allocate();
  assert(handle >= 0, "a record");
  const index = w.table.indexOf(handle);
  w.table.fields.setOrigin(index, originOf(slot));
  w.table.fields.storeState(index, state);
  return handle;
}

const stateOf = (w: World, handle: number) => w.table.fields.loadState(w.table.indexOf(handle));
const slotState = (w: World, slot: number) => Atomics.load(w.memory.slotLine(slot), ProducerWords.state);
const freed = (w: World, handle: number) =>
  !w.table.isCurrent(handle) || [TaskState.FREE, TaskState.CACHED as number].includes(stateOf(w, handle));

/** One macrotask: the sweep's first round (after one microtask) has run, its second (a few ms on) not. */
const round = () => new Promise((resolve) => setTimeout(resolve, 0));

test("deaths: died() on a slot that is not OPEN (FREE, or already DEAD) does nothing", async () => {
  const w = world();
  const { memory, deaths } = w;
  Atomics.store(memory.slotLine(2), ProducerWords.state, SlotState.FREE);
  Atomics.store(memory.slotCounts(2), SlotCountWords.submitted, 3);
  deaths.died(2);
  assertEquals([deaths.count, slotState(w, 2)], [0, SlotState.FREE], "a FREE slot: no death");
  assertEquals(Atomics.load(memory.slotCounts(2), SlotCountWords.abandoned), 0, "nothing abandoned");
  deaths.died(1);
  deaths.died(1);
  assertEquals(deaths.count, 1, "slot 1's death counted once");
  await within(deaths.settled(), 10_000, "the sweep's end");
});

test("deaths: died() marks the slot DEAD, counts its death and its abandoned tasks, and frees it once nothing is left", async () => {
  const w = world();
  const { memory, deaths } = w;
  const counts = memory.slotCounts(1);
  Atomics.store(counts, SlotCountWords.submitted, 7);
  Atomics.store(counts, SlotCountWords.completed, 3);
  const running = task(w, 1, TaskState.RUNNING);
  deaths.died(1);
  assertEquals(deaths.count, 1, "one death");
  assertEquals(slotState(w, 1), SlotState.DEAD, "slot 1 DEAD");
  assertEquals(slotState(w, 2), SlotState.OPEN, "slot 2 untouched");
  assertEquals(Atomics.load(counts, SlotCountWords.abandoned), 4, "submitted - completed abandoned");
  assertEquals(deaths.inSteps, 0, "no step in progress");
  // Its running task holds the slot DEAD, round after round.
  for (let i = 0; i < 3; i++) await new Promise((resolve) => setTimeout(resolve, 10));
  assertEquals(slotState(w, 1), SlotState.DEAD, "DEAD while its task runs");
  assertEquals(Atomics.load(memory.control, ControlWords.producersOpen), 2, "still counted open");
  // The worker finishes it and pushes its completion: the sweep frees the record, then the slot.
  w.table.fields.storeState(w.table.indexOf(running), TaskState.DONE);
  new Injector(memory.channels[1].queue).push(running);
  await within(deaths.settled(), 10_000, "the sweep's end");
  assert(freed(w, running), "the finished task's record freed");
  assertEquals(slotState(w, 1), SlotState.FREE, "slot 1 FREE");
  assertEquals(Atomics.load(memory.control, ControlWords.producersOpen), 1, "one open");
  assertEquals(deaths.cancelled, 0, "nothing cancelled");
});

test("deaths: every QUEUED task of the dead slot is cancelled, the last record included; others' are left", async () => {
  const w = world();
  const { deaths } = w;
  // Every record: slot 1's at 0, 3, 5 and the last; slot 2's and the owner's between.
  const slots = [1, 2, 0, 1, 2, 1, 0, 1];
  const handles = slots.map((slot) => task(w, slot, TaskState.QUEUED));
  assertEquals(handles.map((h) => w.table.indexOf(h)), [0, 1, 2, 3, 4, 5, 6, 7], "every record, in order");
  deaths.died(1);
  await round();
  assertEquals(
    handles.map((h) => stateOf(w, h)),
    slots.map((s) => s === 1 ? TaskState.CANCELLED : TaskState.QUEUED),
    "slot 1's cancelled, the others QUEUED",
  );
  assertEquals(deaths.cancelled, 4, "four cancelled");
  await within(deaths.settled(), 10_000, "the sweep's end");
  assertEquals(slotState(w, 1), SlotState.FREE, "nothing of slot 1 left: FREE");
  assertEquals(slotState(w, 2), SlotState.OPEN, "slot 2 OPEN");
});

test("deaths: a DONE task whose completion the producer popped is freed when seen DONE twice, not once", async () => {
  const w = world();
  const { deaths } = w;
  const done = task(w, 1, TaskState.DONE);
  const last = task(w, 1, TaskState.RUNNING);
  // The owner's and slot 2's DONE tasks are not the sweep's.
  const owners = task(w, 0, TaskState.DONE);
  const others = task(w, 2, TaskState.DONE);
  deaths.died(1);
  await round();
  assertEquals(stateOf(w, done), TaskState.DONE, "seen DONE once: not freed (its completion may be on its way)");
  await new Promise((resolve) => setTimeout(resolve, 30));
  assert(freed(w, done), "seen DONE twice: freed");
  assertEquals(slotState(w, 1), SlotState.DEAD, "its RUNNING task holds the slot");
  w.table.fields.storeState(w.table.indexOf(last), TaskState.DONE);
  await within(deaths.settled(), 10_000, "the sweep's end");
  assert(freed(w, last), "the last task freed");
  assertEquals(slotState(w, 1), SlotState.FREE, "slot 1 FREE");
  assertEquals([stateOf(w, owners), stateOf(w, others)], [TaskState.DONE, TaskState.DONE], "others' untouched");
});

test("deaths: the sweep of a terminated pool stops, leaving the slot DEAD; one ending at once is removed", async () => {
  let running = true;
  const w = world(() => running);
  const { deaths } = w;
  task(w, 1, TaskState.RUNNING);
  deaths.died(1);
  await round();
  running = false;
  await within(deaths.settled(), 10_000, "the sweep's end");
  assertEquals(slotState(w, 1), SlotState.DEAD, "not given back: the pool stopped");
  // Not running from the start: no round, not given back, and settled() ends.
  deaths.died(2);
  await within(deaths.settled(), 10_000, "the second sweep's end");
  assertEquals(slotState(w, 2), SlotState.DEAD, "slot 2 DEAD");
});

test("deaths: a task published and not pushed (its placing note) is pushed into its level's queue once", async () => {
  for (const level of [Level.high, Level.normal, Level.low]) {
    const w = world();
    const { memory, deaths } = w;
    const handle = task(w, 1, TaskState.QUEUED);
    w.table.fields.setLevel(w.table.indexOf(handle), level);
    const line = memory.slotLine(1);
    Atomics.store(line, ProducerWords.placing, handle);
    const token = memory.sleep.getSleepy(); // a worker found nothing and is about to sleep
    deaths.died(1);
    assertEquals(memory.sleep.fallAsleep(0, token), false, "the task put back moved the JEC: it does not sleep");
    assertEquals(Atomics.load(line, ProducerWords.placing), -1, "the placing note cleared");
    assertEquals(deaths.inSteps, 1, "a death inside a step");
    const levels = memory.levels();
    assertEquals(levels.take(), handle, `level ${level}: pushed`);
    assertEquals(levels.take() < 0, true, "once");
    await within(deaths.settled(), 10_000, "the sweep's end");
  }
});

test("deaths: a placing note is not pushed when the task is not the slot's, not QUEUED, or not current", async () => {
  for (const kind of ["other slot", "running", "stale", "none"] as const) {
    const w = world();
    const { memory, deaths } = w;
    const handle = task(w, kind === "other slot" ? 2 : 1, kind === "running" ? TaskState.RUNNING : TaskState.QUEUED);
    const line = memory.slotLine(1);
    const placed = kind === "stale" ? (handle + CAPACITY) >>> 0 : handle; // a later generation: not current
    Atomics.store(line, ProducerWords.placing, kind === "none" ? -1 : placed);
    const token = memory.sleep.getSleepy();
    deaths.died(1);
    assertEquals(memory.sleep.fallAsleep(0, token), true, `${kind}: nothing put back, no new work`);
    assertEquals(Atomics.load(line, ProducerWords.placing), -1, `${kind}: the note cleared`);
    assertEquals(deaths.inSteps, kind === "none" ? 0 : 1, `${kind}: in a step when the note is set`);
    assert(memory.levels().take() < 0, `${kind}: nothing pushed`);
    await new Promise((resolve) => setTimeout(resolve, 20));
    w.table.fields.storeState(w.table.indexOf(handle), TaskState.FREE);
    await within(deaths.settled(), 10_000, `${kind}: the sweep's end`);
  }
});

test("deaths: a record the producer took and had not published is taken back, as a death inside a step", async () => {
  const w = world();
  const { memory, deaths } = w;
  const producer = new TaskTable(memory, { slot: 1 });
  const taken = producer.allocate();
  assertEquals(stateOf(w, taken), TaskState.CACHED, "marked the producer's");
  deaths.died(1);
  assertEquals(deaths.inSteps, 1, "inside a step");
  assert(stateOf(w, taken) === TaskState.FREE, "back in the free list");
  await within(deaths.settled(), 10_000, "the sweep's end");
  assertEquals(slotState(w, 1), SlotState.FREE, "slot 1 FREE");
});

test("deaths: a producer killed at any access of its push to any level: the push is completed or undone, once", async () => {
  const notesAt = [NoteWords.injectorHigh, NoteWords.injector, NoteWords.injectorLow];
  for (const level of [Level.high, Level.normal, Level.low]) {
    let cuts = 0;
    for (let n = 0;; n++) {
      const w = world();
      const { memory, deaths } = w;
      const region = memory.levelRegions()[level];
      const producer = new Injector(region, memory.slotNotes(1, notesAt[level]));
      const died = killAt(n, () => producer.push(77));
      const cut = new Injector(region, memory.slotNotes(1, notesAt[level])).cutShort;
      if (cut) cuts++;
      const token = memory.sleep.getSleepy();
      deaths.died(1);
      assertEquals(deaths.inSteps, cut ? 1 : 0, `level ${level}, killed at ${n}: a death inside a step iff cut short`);
      assertEquals(memory.sleep.fallAsleep(0, token), !cut, `level ${level}, killed at ${n}: new work iff repaired`);
      // The queue holds 77 at most once, and works on: a push and its pop after the repair.
      const owner = new Injector(region);
      const taken: number[] = [];
      for (let v = owner.pop(); v !== QUEUE_EMPTY; v = owner.pop()) taken.push(v);
      assert(taken.length <= 1 && taken.every((v) => v === 77), `level ${level}, killed at ${n}: ${taken}`);
      if (!died || cut) assertEquals(taken, [77], `level ${level}, killed at ${n}: a push past its claim is completed`);
      assertEquals(owner.push(5), true, "a push after the repair");
      assertEquals([owner.pop(), owner.pop()], [5, QUEUE_EMPTY], "its pop");
      await within(deaths.settled(), 10_000, "the sweep's end");
      if (!died) break;
    }
    assert(cuts > 0, `level ${level}: some kill landed inside the push's step`);
  }
});

test("deaths: a producer killed at any access of a pop of its completion queue: the queue works on, its record freed", async () => {
  let cuts = 0;
  for (let n = 0;; n++) {
    const w = world();
    const { memory, deaths } = w;
    const handle = task(w, 1, TaskState.DONE);
    const queue = memory.channels[1].queue;
    new Injector(queue).push(handle);
    const producer = new Injector(queue, memory.slotNotes(1, NoteWords.completions));
    let popped = QUEUE_EMPTY;
    const died = killAt(n, () => (popped = producer.pop()));
    const cut = new Injector(queue, memory.slotNotes(1, NoteWords.completions)).cutShort;
    if (cut) cuts++;
    deaths.died(1);
    assertEquals(deaths.inSteps, cut ? 1 : 0, `killed at ${n}: a death inside a step iff cut short`);
    await within(deaths.settled(), 10_000, `killed at ${n}: the sweep's end`);
    assert(freed(w, handle), `killed at ${n}: the record freed (its completion read, or seen DONE twice)`);
    const owner = new Injector(queue);
    assertEquals(owner.push(5), true, `killed at ${n}: a push after the repair`);
    assertEquals([owner.pop(), owner.pop()], [5, QUEUE_EMPTY], `killed at ${n}: its pop`);
    if (!died) {
      assertEquals(popped, handle, "the whole pop");
      break;
    }
  }
  assert(cuts > 0, "some kill landed inside the pop's step");
});

/** Every record of `w`'s table, taken by the owner: each once, then none (nothing stranded, nothing twice). */
function everyRecordOnce(w: World, what: string): void {
  const indices = new Set<number>();
  for (let i = 0; i < CAPACITY; i++) {
    const handle = w.table.allocate();
    assert(handle >= 0, `${what}: record ${i} of ${CAPACITY} taken`);
    indices.add(w.table.indexOf(handle));
  }
  assertEquals(indices.size, CAPACITY, `${what}: every record once`);
  assert(w.table.allocate() < 0, `${what}: then none`);
}

test("deaths: a producer killed at any access of a record's allocation or release: every record comes back once", async () => {
  for (const op of ["allocate", "release"] as const) {
    for (let n = 0;; n++) {
      const w = world();
      const { memory, deaths } = w;
      const producer = new TaskTable(memory, { slot: 1 });
      // A record the producer holds, to release (its task done and its completion read).
      const held = op === "release" ? producer.allocate() : -1;
      if (held >= 0) {
        w.table.fields.setOrigin(w.table.indexOf(held), originOf(1));
        w.table.fields.storeState(w.table.indexOf(held), TaskState.DONE);
      }
      const died = killAt(n, () => op === "allocate" ? producer.allocate() : producer.releaseHandle(held));
      const inTable = tableNotesInStep(memory.slotNotes(1, NoteWords.table, TABLE_NOTE_WORDS));
      deaths.died(1);
      if (inTable) assertEquals(deaths.inSteps, 1, `${op} killed at ${n}: inside a table step`);
      await within(deaths.settled(), 10_000, `${op} killed at ${n}: the sweep's end`);
      everyRecordOnce(w, `${op} killed at ${n}`);
      if (!died) break;
    }
  }
});

test("deaths: a task the producer pushed whole before it died with its placing note set is not pushed again", async () => {
  const notesAt = [NoteWords.injectorHigh, NoteWords.injector, NoteWords.injectorLow];
  for (const level of [Level.high, Level.normal, Level.low]) {
    const w = world();
    const { memory, deaths } = w;
    const handle = task(w, 1, TaskState.QUEUED);
    w.table.fields.setLevel(w.table.indexOf(handle), level);
    Atomics.store(memory.slotLine(1), ProducerWords.placing, handle);
    new Injector(memory.levelRegions()[level], memory.slotNotes(1, notesAt[level])).push(handle);
    deaths.died(1);
    const queue = new Injector(memory.levelRegions()[level]);
    assertEquals([queue.pop(), queue.pop()], [handle, QUEUE_EMPTY], `level ${level}: queued once`);
    await within(deaths.settled(), 10_000, "the sweep's end");
  }
});

test("deaths: a placing note of -1 pushes nothing, even with the last record QUEUED by the slot", async () => {
  const w = world();
  const { memory, deaths } = w;
  const handles = Array.from({ length: CAPACITY }, () => task(w, 2, TaskState.QUEUED));
  w.table.fields.setOrigin(w.table.indexOf(handles[CAPACITY - 1]), originOf(1));
  const token = memory.sleep.getSleepy();
  deaths.died(1);
  assertEquals(deaths.inSteps, 0, "no step");
  assertEquals(memory.sleep.fallAsleep(0, token), true, "nothing put back, no new work");
  const queue = new Injector(memory.levelRegions()[Level.normal]);
  assertEquals(queue.push(5), true, "a push");
  assertEquals([queue.pop(), queue.pop()], [5, QUEUE_EMPTY], "the queue held nothing before it");
  await within(deaths.settled(), 10_000, "the sweep's end");
});

test("deaths: a completion in the dead slot's queue frees its record in the sweep's first round", async () => {
  const w = world();
  const { memory, deaths } = w;
  const handle = task(w, 1, TaskState.DONE);
  const running = task(w, 1, TaskState.RUNNING);
  new Injector(memory.channels[1].queue).push(handle);
  deaths.died(1);
  await round();
  assert(freed(w, handle), "freed in the first round (its completion read), not on a second sight");
  w.table.fields.storeState(w.table.indexOf(running), TaskState.DONE);
  await within(deaths.settled(), 10_000, "the sweep's end");
});

test("deaths: a placed task whose handle is 0 (record 0 after its generation wrapped) is pushed, not taken for pushed", async () => {
  const w = world();
  const { memory, deaths, table } = w;
  // Record 0's generation at its last value: its next allocation wraps to generation 0, handle 0.
  const genAt = table.at(0, RecordWords.generation);
  Atomics.store(table.fields.words, genAt, table.generationMask);
  let handle = -1;
  const others: number[] = [];
  for (let i = 0; i < CAPACITY && handle !== 0; i++) {
    const h = table.allocate();
    if (table.indexOf(h) === 0) handle = h;
    else others.push(h);
  }
  assertEquals(handle, 0, "record 0 wrapped to handle 0");
  for (const h of others) table.release(table.indexOf(h));
  table.fields.setOrigin(0, originOf(1));
  table.fields.storeState(0, TaskState.QUEUED);
  // The producer of slot 1 published it and died before its push: the placing note names handle 0, and
  // its level handles never pushed anything (their notes as its claim left them).
  Atomics.store(memory.slotLine(1), ProducerWords.placing, 0);
  deaths.died(1);
  const levels = memory.levels();
  assertEquals(levels.take(), 0, "handle 0 pushed into its level's queue");
  assertEquals(levels.take() < 0, true, "once");
  await within(deaths.settled(), 10_000, "the sweep's end");
});
