/**
 * A worker's marks of its single steps (`lib/worker/marks.ts`), on one thread: what each setter writes to
 * the shared copy and what each repair does with the task or record a mark names — the held task back in
 * a queue once, a fork cut short freed, a finish republished once, a hand-back's task queued at its level —
 * and which producers each step wakes. The deaths inside these repairs are swept by
 * tests/protocol/recovery_paths_test.ts; these pin the values StrykerJS changed without the suites
 * noticing (issue 47, "Mutants nobody here chose").
 *
 * The shipped `Marks` of worker 0 on a real pool memory, with that worker's real deque, levels, completion
 * queues and task table, driven in this thread: no worker runs, and nothing depends on timing.
 */
import { EMPTY } from "../../lib/protocol/deque.ts";
import { Injector, QUEUE_EMPTY } from "../../lib/protocol/injector.ts";
import { ControlWords, MARK_WORDS, MarkWords, NOTE_WORDS, NoteWords } from "../../lib/protocol/layout.ts";
import { Level } from "../../lib/protocol/levels.ts";
import { orphanLatch, SET } from "../../lib/protocol/latch.ts";
import { claimSlot, originOf } from "../../lib/protocol/producers.ts";
import { PoolMemory } from "../../lib/protocol/memory.ts";
import { Origin, TaskState, TaskTable } from "../../lib/record/task.ts";
import { Forks } from "../../lib/worker/forks.ts";
import { Marks } from "../../lib/worker/marks.ts";
import { Runs } from "../../lib/worker/runs.ts";
import { assert, assertEquals, test } from "../_test.ts";
import { cutAt } from "../protocol/_cut_at.ts";

const DEQUE_CAPACITY = 4;

/** A pool memory of one worker (0) and one producer slot, that worker's parts, and the main thread's table. */
function newWorld() {
  const memory = PoolMemory.create({
    workers: 1,
    dequeCapacity: DEQUE_CAPACITY,
    taskCapacity: 16,
    inlineBytes: 64,
    blockBytes: 128,
    blocks: 4,
    producers: 1,
  });
  TaskTable.init(memory);
  assertEquals(claimSlot(memory.buffer, memory.layout), 1, "slot 1 claimed");
  const notes = (at: number) => memory.notes(0, at);
  const words = memory.notes(0, NoteWords.marks, MARK_WORDS);
  words.fill(-1);
  const deque = memory.deque(0, notes(NoteWords.deque));
  const levels = memory.levels([
    notes(NoteWords.injectorHigh),
    notes(NoteWords.injector),
    notes(NoteWords.injectorLow),
  ]);
  const completions = memory.channels.map((channel) =>
    new Injector(
      channel.queue,
      notes(
        channel.slot === 0 ? NoteWords.completions : NoteWords.producerCompletions + (channel.slot - 1) * NOTE_WORDS,
      ),
    )
  );
  const table = new TaskTable(memory, { owner: 0 });
  const runs = new Runs();
  const forks = new Forks(table);
  const marks = new Marks({ memory, words, table, deque, levels, completions, forks, runs });
  const main = new TaskTable(memory);
  return { memory, words, deque, levels, completions, table, runs, forks, marks, main };
}

type World = ReturnType<typeof newWorld>;

/** A task of the main thread (or of `slot`), at `level`, in state `state`; its handle. */
function newTask(world: World, state: number, level: number = Level.normal, origin: number = Origin.MAIN): number {
  const handle = world.main.allocate();
  const index = world.main.indexOf(handle);
  world.main.fields.setLevel(index, level);
  world.main.fields.setOrigin(index, origin);
  world.main.fields.storeState(index, state);
  return handle;
}

/** A fork of worker 0 (its own table), QUEUED; its handle. */
function newFork(world: World): number {
  const handle = world.table.allocate();
  const index = world.table.indexOf(handle);
  world.table.fields.setLevel(index, Level.normal);
  world.table.fields.setOrigin(index, Origin.FORK);
  world.table.fields.storeState(index, TaskState.QUEUED);
  return handle;
}

function stateOf(world: World, handle: number): number {
  return world.main.fields.loadState(world.main.indexOf(handle));
}

/** Whether the record of `handle` was freed (FREE or CACHED: no longer the task's). */
function freed(world: World, handle: number): boolean {
  const state = stateOf(world, handle);
  return state === TaskState.FREE || state === TaskState.CACHED;
}

/** Everything in `queue`, popped. */
function drain(queue: { pop(): number }, empty: number): number[] {
  const out: number[] = [];
  for (let v = queue.pop(); v !== empty; v = queue.pop()) out.push(v);
  return out;
}

/** Every queue's contents: our deque, and each level's injector. */
function queued(world: World): { deque: number[]; high: number[]; normal: number[]; low: number[] } {
  const deque = drain(world.deque, EMPTY);
  const [high, normal, low] = [Level.high, Level.normal, Level.low].map((l) =>
    drain(world.levels.queues[l], QUEUE_EMPTY)
  );
  return { deque, high, normal, low };
}

/** Whether the work-posted signal moved: the JEC a sleepy worker saw before `op` is stale after it. */
function postsWork(world: World, op: () => void): boolean {
  const jec = world.memory.sleep.getSleepy();
  op();
  return world.memory.sleep.getSleepy() !== jec;
}

/** Every producer channel's waiting word set, as producers waiting on their channels. */
function allWaiting(world: World): void {
  for (const channel of world.memory.channels) Atomics.store(channel.words, channel.waiting, 1);
}

/** The slots whose channel was woken (waiting word taken from 1 to 0). */
function woken(world: World): number[] {
  return world.memory.channels.filter((c) => Atomics.load(c.words, c.waiting) === 0).map((c) => c.slot);
}

test("popHeld and takeHeld write the task into the held mark (shared and private), and leave it clear when empty", () => {
  const world = newWorld();
  const { marks, words } = world;
  assertEquals(marks.popHeld(), EMPTY, "an empty deque");
  assertEquals(marks.takeHeld(), QUEUE_EMPTY, "empty injectors");
  assertEquals({ held: words[MarkWords.held], cut: marks.cutShort() }, { held: -1, cut: false }, "nothing held");
  const a = newTask(world, TaskState.QUEUED);
  world.deque.push(a);
  assertEquals(marks.popHeld(), a, "the pop");
  assertEquals({ held: words[MarkWords.held], cut: marks.cutShort() }, { held: a, cut: true }, "held");
  marks.taken();
  assertEquals(marks.cutShort(), false, "taken: the private mark is clear");
  assertEquals(words[MarkWords.held], a, "the shared mark stays until the claim");
  marks.claimed();
  assertEquals(words[MarkWords.held], -1, "claimed: the shared mark clear");
  const b = newTask(world, TaskState.QUEUED, Level.high);
  world.levels.pushPatiently(b, Level.high);
  assertEquals(marks.takeHeld(), b, "the take");
  assertEquals({ held: words[MarkWords.held], cut: marks.cutShort() }, { held: b, cut: true }, "held");
  marks.taken();
  marks.repairedRuns();
  assertEquals(words[MarkWords.held], -1, "repairedRuns clears the shared held mark");
});

test("a held task not yet run goes back to our deque once at the next search's check (QUEUED or CANCELLED); nothing else is repaired", () => {
  for (const state of [TaskState.QUEUED, TaskState.CANCELLED]) {
    const world = newWorld();
    const a = newTask(world, state);
    world.levels.pushPatiently(a, Level.normal);
    assertEquals(world.marks.takeHeld(), a, "the take");
    assertEquals(postsWork(world, () => world.marks.checkSearch()), true, "the repair posts work");
    assertEquals({ held: world.words[MarkWords.held], cut: world.marks.cutShort() }, { held: -1, cut: false });
    assertEquals(
      queued(world),
      { deque: [a], high: [], normal: [], low: [] },
      `state ${state}: back in our deque once`,
    );
  }
  // A held task that is no longer waiting (claimed: RUNNING) is not put back.
  const world = newWorld();
  const a = newTask(world, TaskState.QUEUED);
  world.levels.pushPatiently(a, Level.normal);
  world.marks.takeHeld();
  world.main.fields.storeState(world.main.indexOf(a), TaskState.RUNNING);
  world.marks.checkSearch();
  assertEquals(queued(world), { deque: [], high: [], normal: [], low: [] }, "a RUNNING task is not put back");
  assertEquals(world.words[MarkWords.held], -1, "the mark cleared");
});

test("a held task whose deque is full goes to its own level's injector", () => {
  const world = newWorld();
  const a = newTask(world, TaskState.QUEUED, Level.low);
  world.levels.pushPatiently(a, Level.low);
  world.marks.takeHeld();
  for (let i = 0; i < DEQUE_CAPACITY; i++) world.deque.push(1000 + i);
  world.marks.checkSearch();
  const q = queued(world);
  assertEquals({ high: q.high, normal: q.normal, low: q.low }, { high: [], normal: [], low: [a] }, "the low injector");
});

test("the search's check repairs only held or moving marks; the join's only consuming or held ones", () => {
  const world = newWorld();
  const fork = newFork(world);
  world.marks.setConsuming(fork);
  world.marks.checkSearch();
  assertEquals(world.words[MarkWords.consuming], fork, "the search leaves a consuming mark");
  world.marks.checkJoin();
  assertEquals(world.words[MarkWords.consuming], -1, "the join's check repairs it");
  assert(freed(world, fork), "the consumed fork's record freed");
  // The join's check repairs a held task too.
  const a = newTask(world, TaskState.QUEUED);
  world.deque.push(a);
  world.marks.popHeld();
  world.marks.checkJoin();
  assertEquals(world.words[MarkWords.held], -1, "held repaired by the join's check");
  assertEquals(queued(world).deque, [a], "back in the deque");
  // Nothing marked: neither check touches anything.
  const b = newTask(world, TaskState.QUEUED);
  world.deque.push(b);
  world.marks.checkJoin();
  world.marks.checkSearch();
  assertEquals(queued(world).deque, [b], "nothing repaired");
});

test("consumeHeld moves our popped fork from the held mark to the consuming mark; checkConsuming frees it", () => {
  const world = newWorld();
  const fork = newFork(world);
  world.forks.add(fork);
  world.deque.push(fork);
  assertEquals(world.marks.popHeld(), fork, "popped back");
  world.marks.consumeHeld(fork);
  assertEquals(
    { consuming: world.words[MarkWords.consuming], held: world.words[MarkWords.held] },
    { consuming: fork, held: -1 },
    "consuming, not held",
  );
  // Nothing to complete when clear; a consume cut short is completed: forgotten, freed.
  world.marks.checkConsuming();
  assertEquals({ any: world.forks.any(), freed: freed(world, fork) }, { any: false, freed: true }, "consumed");
  assertEquals(world.words[MarkWords.consuming], -1, "cleared");
  world.marks.setConsuming(fork);
  world.marks.clearConsuming();
  assertEquals({ mark: world.words[MarkWords.consuming], cut: world.marks.cutShort() }, { mark: -1, cut: false });
});

test("a fork placed: published and the pushing mark clear; refused by a full deque: freed and forgotten", () => {
  const world = newWorld();
  const fork = newFork(world);
  world.marks.checkPushing();
  world.marks.setPushing(fork);
  assertEquals({ mark: world.words[MarkWords.pushing], cut: world.marks.cutShort() }, { mark: fork, cut: true });
  assertEquals(world.marks.placeFork(fork), true, "placed");
  assertEquals({ mark: world.words[MarkWords.pushing], cut: world.marks.cutShort() }, { mark: -1, cut: false });
  assertEquals(queued(world).deque, [fork], "in the deque");
  assertEquals(freed(world, fork), false, "not freed");
  // A full deque: refused.
  for (let i = 0; i < DEQUE_CAPACITY; i++) world.deque.push(1000 + i);
  const refused = newFork(world);
  world.forks.add(refused);
  world.marks.setPushing(refused);
  assertEquals(world.marks.placeFork(refused), false, "refused");
  assertEquals(
    { mark: world.words[MarkWords.pushing], any: world.forks.any(), freed: freed(world, refused) },
    { mark: -1, any: false, freed: true },
    "forgotten and freed",
  );
  // A fork cut short before its push: the next placement's check frees it.
  const cut = newFork(world);
  world.marks.setPushing(cut);
  world.marks.checkPushing();
  assertEquals({ mark: world.words[MarkWords.pushing], freed: freed(world, cut) }, { mark: -1, freed: true });
  // Cleared by hand: nothing to free.
  const kept = newFork(world);
  world.marks.setPushing(kept);
  world.marks.clearPushing();
  assertEquals(world.words[MarkWords.pushing], -1, "clearPushing clears the shared mark");
  world.marks.checkPushing();
  assertEquals({ mark: world.words[MarkWords.pushing], freed: freed(world, kept) }, { mark: -1, freed: false });
});

test("a hand-back queues the task at its own level, QUEUED, its moving mark clear, and posts work", () => {
  for (const level of [Level.high, Level.normal, Level.low]) {
    const world = newWorld();
    const a = newTask(world, TaskState.RUNNING, level);
    world.runs.enter(a);
    assert(
      postsWork(world, () => world.marks.handBack(a, world.table.indexOf(a))),
      "work posted",
    );
    assertEquals(stateOf(world, a), TaskState.QUEUED, "QUEUED again");
    assertEquals(world.deque.length, 0, "nothing pushed on our deque (not even a clear mark's -1)");
    assertEquals(world.runs.currentRun(), -1, "no longer the run's to finish");
    assertEquals({ mark: world.words[MarkWords.moving], cut: world.marks.cutShort() }, { mark: -1, cut: true });
    const q = queued(world);
    const want = { deque: [] as number[], high: [] as number[], normal: [] as number[], low: [] as number[] };
    want[(["high", "normal", "low"] as const)[level]].push(a);
    assertEquals(q, want, `level ${level}`);
  }
});

test("a hand-back cut short before its push is completed once, into our deque, by the next hand-back or search", () => {
  for (const next of ["handBack", "search"] as const) {
    let cases = 0;
    for (let m = 0;; m++) {
      const world = newWorld();
      const a = newTask(world, TaskState.RUNNING);
      world.runs.enter(a);
      const cut = cutAt(m, () => world.marks.handBack(a, world.table.indexOf(a)));
      if (!cut) break;
      if (world.words[MarkWords.moving] !== a || world.levels.queues[Level.normal].length !== 0) continue;
      cases++;
      if (next === "handBack") {
        const b = newTask(world, TaskState.RUNNING);
        world.runs.exit(0);
        world.runs.enter(b);
        world.marks.handBack(b, world.table.indexOf(b));
        assertEquals(
          queued(world),
          { deque: [a], high: [], normal: [b], low: [] },
          `cut at ${m}: a repaired, b queued`,
        );
      } else {
        assert(postsWork(world, () => world.marks.checkSearch()), "the repair posts work");
        assertEquals(world.words[MarkWords.moving], -1, "the moving mark cleared");
        assertEquals(queued(world), { deque: [a], high: [], normal: [], low: [] }, `cut at ${m}: back once`);
      }
    }
    assert(cases > 0, `${next}: a hand-back cut with the task in its moving mark only`);
  }
});

test("putBack: a run cut short before its claim goes back once (deque, or injector when full); a claimed one does not", () => {
  const world = newWorld();
  const a = newTask(world, TaskState.QUEUED);
  world.deque.push(a);
  world.marks.popHeld();
  world.marks.taken();
  assert(postsWork(world, () => assertEquals(world.marks.putBack(a), true, "put back")), "work posted");
  assertEquals(world.words[MarkWords.held], -1, "the shared held mark naming it cleared");
  assertEquals(queued(world).deque, [a], "in the deque");
  // A held mark naming another task stays.
  const b = newTask(world, TaskState.CANCELLED);
  world.words[MarkWords.held] = 999;
  assertEquals(world.marks.putBack(b), true, "a CANCELLED one goes back too");
  assertEquals(world.words[MarkWords.held], 999, "another task's held mark stays");
  assertEquals(queued(world).deque, [b], "in the deque");
  // Deque full: the injector.
  for (let i = 0; i < DEQUE_CAPACITY; i++) world.deque.push(1000 + i);
  const c = newTask(world, TaskState.QUEUED, Level.high);
  world.marks.putBack(c);
  assertEquals(queued(world).high, [c], "its level's injector");
  // Claimed (RUNNING), DONE or stale: not put back.
  const d = newTask(world, TaskState.RUNNING);
  assertEquals(postsWork(world, () => assertEquals(world.marks.putBack(d), false, "RUNNING")), false, "no work");
  const e = newTask(world, TaskState.QUEUED);
  world.main.release(world.main.indexOf(e));
  assertEquals(world.marks.putBack(e), false, "a stale handle");
  assertEquals(queued(world), { deque: [], high: [], normal: [], low: [] }, "nothing queued");
  assertEquals(world.marks.current(d, TaskState.RUNNING), true, "current and RUNNING");
  assertEquals(world.marks.current(d, TaskState.QUEUED), false, "not QUEUED");
  assertEquals(world.marks.current(e, TaskState.QUEUED), false, "stale");
});

test("publishDone of a submitted task: DONE, its completion to its producer's queue, that producer woken, nothing left marked", () => {
  for (const slot of [0, 1]) {
    const world = newWorld();
    const a = newTask(world, TaskState.RUNNING, Level.normal, originOf(slot));
    allWaiting(world);
    world.marks.publishDone(a, world.main.indexOf(a), false);
    assertEquals(stateOf(world, a), TaskState.DONE, "DONE");
    assertEquals(drain(world.completions[slot], QUEUE_EMPTY), [a], `slot ${slot}: its completion`);
    assertEquals(drain(world.completions[1 - slot], QUEUE_EMPTY), [], "not the other producer's");
    assertEquals(woken(world), [slot], `slot ${slot} woken`);
    assertEquals(world.marks.cutShort(), false, "nothing marked");
  }
});

test("a finish cut short after DONE is published again at the top of the loop: its completion once, its producer woken", () => {
  let cases = 0;
  for (const slot of [0, 1]) {
    for (let m = 0;; m++) {
      const world = newWorld();
      const a = newTask(world, TaskState.RUNNING, Level.normal, originOf(slot));
      const cut = cutAt(m, () => world.marks.publishDone(a, world.main.indexOf(a), false));
      if (!cut) break;
      if (stateOf(world, a) !== TaskState.DONE) continue;
      if (!world.marks.cutShort()) {
        // Cut in the wake, after the push: the finish was whole (its mark cleared).
        assertEquals(drain(world.completions[slot], QUEUE_EMPTY), [a], `slot ${slot}, cut at ${m}: pushed`);
        continue;
      }
      cases++;
      // Not pushed at all before the cut (nothing claimed in the queue): the republish pushes and wakes.
      const unpushed = world.completions[slot].length === 0 && !world.completions[slot].cutShort;
      allWaiting(world);
      world.marks.repairAll();
      assertEquals(drain(world.completions[slot], QUEUE_EMPTY), [a], `slot ${slot}, cut at ${m}: completion once`);
      assertEquals(world.marks.cutShort(), false, "repaired");
      if (unpushed) assertEquals(woken(world), [slot], `slot ${slot}, cut at ${m}: its producer woken`);
    }
  }
  assert(cases > 0, "finishes cut short after DONE");
  // A finish cut short whose record was freed and reused since: nothing republished.
  const world = newWorld();
  const a = newTask(world, TaskState.RUNNING);
  assert(cutAt(1, () => world.marks.publishDone(a, world.main.indexOf(a), false)), "cut after DONE");
  assertEquals(stateOf(world, a), TaskState.DONE, "DONE, not yet pushed");
  world.main.release(world.main.indexOf(a));
  world.marks.repairAll();
  assertEquals(drain(world.completions[0], QUEUE_EMPTY), [], "a stale finish publishes nothing");
  assertEquals(world.marks.cutShort(), false, "the finishing mark cleared");
});

test("publishDone of a fork sets its latch; of an orphan frees its record and wakes the owner", () => {
  const world = newWorld();
  const fork = newFork(world);
  const index = world.table.indexOf(fork);
  allWaiting(world);
  world.marks.publishDone(fork, index, true);
  assertEquals(Atomics.load(world.table.words, world.table.fields.latchWord(index)), SET, "the latch set");
  assertEquals({ freed: freed(world, fork), cut: world.marks.cutShort() }, { freed: false, cut: false });
  assertEquals(woken(world), [], "nobody woken for a joined fork");
  // An orphan: the forker's side gave it up.
  const orphan = newFork(world);
  const at = world.table.indexOf(orphan);
  orphanLatch(world.table.words, world.table.fields.latchWord(at));
  world.marks.publishDone(orphan, at, true);
  assertEquals({ freed: freed(world, orphan), cut: world.marks.cutShort() }, { freed: true, cut: false });
  assertEquals(world.words[MarkWords.freeing], -1, "the freeing mark clear");
  assertEquals(woken(world), [0], "the owner woken");
});

test("wakeMain wakes the owner and a producer counted waiting for a record; wakeRecordWaiters only the latter", () => {
  const world = newWorld();
  const { control, channels } = world.memory;
  allWaiting(world);
  world.marks.wakeRecordWaiters();
  assertEquals(woken(world), [], "nobody counted: nobody");
  Atomics.store(control, ControlWords.recordWaiters, 1);
  Atomics.store(channels[1].words, channels[1].counted, 1);
  world.marks.wakeRecordWaiters();
  assertEquals(woken(world), [1], "the counted producer");
  allWaiting(world);
  world.marks.wakeMain();
  assertEquals(woken(world), [0, 1], "the owner and the counted producer");
  Atomics.store(control, ControlWords.recordWaiters, 0);
  allWaiting(world);
  world.marks.wakeMain();
  assertEquals(woken(world), [0], "the owner alone");
});

test("cutShort: a fork not joined, a run under way, or any mark set", () => {
  const world = newWorld();
  assertEquals(world.marks.cutShort(), false, "nothing");
  const fork = newFork(world);
  world.forks.add(fork);
  assertEquals(world.marks.cutShort(), true, "a fork not joined");
  world.forks.forget(fork);
  const depth = world.runs.enter(fork);
  assertEquals(world.marks.cutShort(), true, "a run under way");
  world.runs.exit(depth);
  assertEquals(world.marks.cutShort(), false, "nothing again");
});

test("a finish cut short after DONE is completed before the next finish overwrites its mark: both completions pushed", () => {
  const world = newWorld();
  const a = newTask(world, TaskState.RUNNING);
  assert(cutAt(1, () => world.marks.publishDone(a, world.main.indexOf(a), false)), "cut after DONE");
  assertEquals(stateOf(world, a), TaskState.DONE, "DONE, not yet pushed");
  const b = newTask(world, TaskState.RUNNING);
  world.marks.publishDone(b, world.main.indexOf(b), false);
  assertEquals(drain(world.completions[0], QUEUE_EMPTY).sort(), [a, b].sort(), "both completions");
});

test("a fork's finish cut short after DONE: the repair sets its latch (no completion); an orphan's, frees it", () => {
  const world = newWorld();
  const fork = newFork(world);
  const index = world.table.indexOf(fork);
  assert(cutAt(1, () => world.marks.publishDone(fork, index, true)), "cut after DONE");
  assertEquals(world.table.fields.loadState(index), TaskState.DONE, "DONE");
  assert(Atomics.load(world.table.words, world.table.fields.latchWord(index)) !== SET, "the latch not yet set");
  world.marks.repairAll();
  assertEquals(Atomics.load(world.table.words, world.table.fields.latchWord(index)), SET, "the repair set the latch");
  assertEquals(drain(world.completions[0], QUEUE_EMPTY), [], "no completion for a fork");
  assertEquals(world.marks.cutShort(), false, "repaired");
});

test("an orphan's free cut short is completed by the repair, or before the next orphan's free: freed once, its kept data dropped", () => {
  for (const next of ["repair", "orphan"] as const) {
    let cases = 0;
    for (let m = 0;; m++) {
      const world = newWorld();
      const orphan = newFork(world);
      const at = world.table.indexOf(orphan);
      orphanLatch(world.table.words, world.table.fields.latchWord(at));
      world.forks.keepArgs(at, [1, 2]);
      const cut = cutAt(m, () => world.marks.publishDone(orphan, at, true));
      if (!cut) break;
      if (world.words[MarkWords.freeing] !== orphan || freed(world, orphan)) continue;
      cases++;
      if (next === "repair") {
        world.marks.repairAll();
      } else {
        const other = newFork(world);
        const at2 = world.table.indexOf(other);
        orphanLatch(world.table.words, world.table.fields.latchWord(at2));
        world.marks.publishDone(other, at2, true);
        assert(freed(world, other), "the second orphan freed");
      }
      assertEquals(
        { freed: freed(world, orphan), mark: world.words[MarkWords.freeing], args: world.forks.takeArgs(at) },
        { freed: true, mark: -1, args: undefined },
        `${next}, cut at ${m}: freed, mark clear, kept args dropped`,
      );
      assertEquals(world.table.duplicateReleases, 0, "no release of a stale or -1 handle");
    }
    assert(cases > 0, `${next}: an orphan's free cut short with its freeing mark set`);
  }
});

test("a fork cut short before its push, or while consumed, is freed by the repair at the top of the loop, its kept data dropped", () => {
  for (const mark of ["pushing", "consuming"] as const) {
    const world = newWorld();
    const fork = newFork(world);
    const at = world.table.indexOf(fork);
    world.forks.add(fork);
    world.forks.keepArgs(at, [3]);
    if (mark === "pushing") world.marks.setPushing(fork);
    else world.marks.setConsuming(fork);
    world.marks.repairAll();
    assertEquals(
      {
        freed: freed(world, fork),
        mark: world.words[MarkWords[mark]],
        args: world.forks.takeArgs(at),
        any: world.forks.any(),
      },
      { freed: true, mark: -1, args: undefined, any: false },
      `${mark}: freed, forgotten, its kept args dropped`,
    );
  }
});

test("with no mark set, the checks and the repair touch no other record (the one a -1 handle would name) and push nothing", () => {
  const world = newWorld();
  // The record a handle of -1 would name (index mask: the last), holding a fork's kept arguments.
  const last = world.table.indexOf(-1);
  world.forks.keepArgs(last, ["kept"]);
  world.marks.checkPushing();
  world.marks.checkConsuming();
  // The repair run for a held task alone: nothing else is marked.
  const a = newTask(world, TaskState.QUEUED);
  world.levels.pushPatiently(a, Level.normal);
  world.marks.takeHeld();
  world.marks.repairAll();
  assertEquals(world.deque.length, 1, "the held task alone pushed (no clear mark's -1)");
  assertEquals(world.forks.takeArgs(last), ["kept"], "the last record's kept arguments stay");
  assertEquals(world.table.duplicateReleases, 0, "no release of a -1 handle");
  // A joined fork's finish (its latch set, not an orphan) touches no freeing mark either.
  world.forks.keepArgs(last, ["kept"]);
  const fork = newFork(world);
  world.marks.publishDone(fork, world.table.indexOf(fork), true);
  const orphan = newFork(world);
  const at = world.table.indexOf(orphan);
  orphanLatch(world.table.words, world.table.fields.latchWord(at));
  world.marks.publishDone(orphan, at, true);
  assertEquals(world.forks.takeArgs(last), ["kept"], "still kept");
  assertEquals(world.table.duplicateReleases, 0, "still no release of a -1 handle");
});

test("a hand-back cut short with our deque full is completed into its level's injector", () => {
  let cases = 0;
  for (let m = 0;; m++) {
    const world = newWorld();
    const a = newTask(world, TaskState.RUNNING, Level.high);
    world.runs.enter(a);
    const cut = cutAt(m, () => world.marks.handBack(a, world.table.indexOf(a)));
    if (!cut) break;
    if (world.words[MarkWords.moving] !== a || world.levels.queues[Level.high].length !== 0) continue;
    if (world.levels.queues[Level.high].cutShort) continue;
    cases++;
    for (let i = 0; i < DEQUE_CAPACITY; i++) world.deque.push(1000 + i);
    world.marks.checkSearch();
    assertEquals(drain(world.levels.queues[Level.high], QUEUE_EMPTY), [a], `cut at ${m}: in the high injector once`);
  }
  assert(cases > 0, "hand-backs cut short before their push");
});

test("cutShort counts a completion queue cut short (any one of them), and the repair completes it and a cut deque", () => {
  let queues = 0;
  for (let m = 0;; m++) {
    const w = newWorld();
    if (!cutAt(m, () => w.completions[1].push(7))) break;
    if (!w.completions[1].cutShort) continue;
    queues++;
    assertEquals(w.marks.cutShort(), true, `push cut at ${m}: one completion queue cut short`);
    w.marks.repairAll();
    assertEquals(w.completions[1].cutShort, false, `push cut at ${m}: repaired`);
  }
  assert(queues > 0, "completion pushes cut short");
  // A deque pop cut short: the repair completes it.
  let seen = 0;
  for (let m = 0;; m++) {
    const w = newWorld();
    w.deque.push(5);
    w.deque.push(6);
    if (!cutAt(m, () => w.deque.pop())) break;
    if (!w.deque.cutShort) continue;
    seen++;
    assertEquals(w.marks.cutShort(), true, `pop cut at ${m}: cut short`);
    w.marks.repairAll();
    assertEquals(w.deque.cutShort, false, `pop cut at ${m}: the repair completed it`);
  }
  assert(seen > 0, "deque pops cut short");
});

test("the repair wakes the owner when it completes a record release cut short", () => {
  let woke = 0;
  for (let m = 0;; m++) {
    const world = newWorld();
    const fork = newFork(world);
    if (!cutAt(m, () => world.table.releaseHandle(fork))) break;
    if (!world.table.cutShort) continue;
    allWaiting(world);
    world.marks.repairAll();
    assertEquals(world.table.cutShort, false, `release cut at ${m}: repaired`);
    if (woken(world).includes(0)) woke++;
  }
  assert(woke > 0, "a repaired release woke the owner");
});

test("hand-backs at every level one after another, then a held task's repair: each task queued once, nothing else", () => {
  const world = newWorld();
  const tasks = [Level.high, Level.normal, Level.low, Level.normal].map((level) => {
    const a = newTask(world, TaskState.RUNNING, level);
    const depth = world.runs.enter(a);
    world.marks.handBack(a, world.table.indexOf(a));
    world.runs.exit(depth);
    return a;
  });
  // Every level's injector has had a push of ours (its published mark names a task): a repair with no task
  // in a clear mark must still push nothing.
  const held = newTask(world, TaskState.QUEUED);
  world.deque.push(held);
  world.marks.popHeld();
  world.marks.repairAll();
  assertEquals(queued(world), {
    deque: [held],
    high: [tasks[0]],
    normal: [tasks[1], tasks[3]],
    low: [tasks[2]],
  }, "each task once");
});

test("a repair with no task to put back posts no work (a fork cut short before its push)", () => {
  const world = newWorld();
  const fork = newFork(world);
  world.marks.setPushing(fork);
  assertEquals(postsWork(world, () => world.marks.repairAll()), false, "no work posted");
  assert(freed(world, fork), "the fork freed");
});

test("a finish cut short anywhere after DONE, once repaired, has its completion queued once and its producer woken", () => {
  let cases = 0;
  for (const slot of [0, 1]) {
    for (let m = 0;; m++) {
      const world = newWorld();
      const a = newTask(world, TaskState.RUNNING, Level.normal, originOf(slot));
      allWaiting(world);
      const cut = cutAt(m, () => world.marks.publishDone(a, world.main.indexOf(a), false));
      if (!cut) break;
      if (stateOf(world, a) !== TaskState.DONE) continue;
      cases++;
      // Cut short in the push (after its claim) or in the wake: the producer must still hear of it.
      world.marks.repairAll();
      assertEquals(
        { queued: drain(world.completions[slot], QUEUE_EMPTY), woken: woken(world) },
        { queued: [a], woken: [slot] },
        `slot ${slot}, cut at ${m}: the completion once, its producer woken`,
      );
    }
  }
  assert(cases > 0, "finishes cut short after DONE");
});

test(
  "a fork cut short before it was QUEUED (still marked cached, its arguments in blocks): record and blocks come back",
  () => {
    const world = newWorld();
    world.marks.checkPushing();
    const fork = world.table.allocate(); // marked CACHED by worker 0 until place() publishes it
    world.marks.setPushing(fork);
    const index = world.table.indexOf(fork);
    // A throw after the chain was written (or midway: its blocks are linked as they are taken).
    assert(world.table.writePayload(index, new Uint8Array(64 + 2 * 124).fill(5)), "arguments in 2 blocks");
    world.marks.checkPushing();
    assertEquals(world.words[MarkWords.pushing], -1, "the mark cleared");
    assertEquals(world.table.holdsBlocks(index), false, "the record's blocks freed");
    assertEquals(new Injector(world.memory.records.freeBlocks).length, 4, "every block in the free list");
    const state = stateOf(world, fork);
    assert(
      state === TaskState.FREE || (state === TaskState.CACHED && world.table.cachedHere === 1),
      `the record free or in the worker's cache (state ${state}, cached here ${world.table.cachedHere})`,
    );
    // Released already (place()'s path for a full deque) and cut short before the mark's clear: left there.
    const again = world.table.allocate();
    world.marks.setPushing(again);
    world.table.release(world.table.indexOf(again));
    const cached = world.table.cachedHere;
    world.marks.checkPushing();
    assertEquals(
      { cached: world.table.cachedHere, state: stateOf(world, again) },
      { cached, state: TaskState.CACHED },
      "a record released already (into the cache) is not released again",
    );
  },
  30_000,
);
