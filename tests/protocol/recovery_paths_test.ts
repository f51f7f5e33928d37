/**
 * Issue 47, class 7: the state changes on the recovery paths.
 *
 * First, the sweep after a producer's death (lib/owner/producer_deaths.ts) raced with a worker's claim: the
 * sweep cancels each of the dead producer's tasks still QUEUED by a compare-exchange that a worker's claim
 * (QUEUED to RUNNING) may win; a claim made between the sweep's read of the state and its write must
 * stand (the task runs, and is freed once it is done), never be overwritten by CANCELLED.
 *
 * Then the repairs that put a task a worker held back in a queue (lib/worker/marks.ts
 * `repairHeld`, `putBack`, `repairMoving`), killed at every shared access they make, then recovered by the
 * main thread's real repair (lib/owner/recovery.ts `recoverDeadWorker`) from the dead worker's marks and
 * notes in the pool's buffer. Oracle: the task is then in exactly one queue (the dead worker's deque, as its
 * heir drains it, or an injector), never lost and never twice, QUEUED or CANCELLED (a cancelled one is
 * freed by whoever takes it next, so it must be taken once too).
 *
 * The known hole this closes: the repairs cleared the shared mark before the push, so a worker killed
 * between the clear and the push's publishing store lost the task (QUEUED in no queue and no mark:
 * recovery could not tell a pushed handle from an unpushed one). Now the mark is cleared right after the
 * publishing store, with no call between, where no death can land (a thread dies at a call: the kill here
 * is a facade call that throws before its access, as death_tasks.ts's exit does).
 *
 * How: a real PoolMemory of one worker, that worker's real Marks, deque, levels and task table, driven in
 * this thread; a binding of the shared-memory facade throws at the n-th access (for every n the repair
 * makes), and from there the worker's objects are never used again, as after a death.
 */
import { atomicsBinding, installSharedMemory, type SharedMemory } from "../../lib/protocol/atomics.ts";
import { Deque, EMPTY } from "../../lib/protocol/deque.ts";
import { Injector, QUEUE_EMPTY } from "../../lib/protocol/injector.ts";
import { MARK_WORDS, MarkWords, NOTE_WORDS, NoteWords } from "../../lib/protocol/layout.ts";
import { Level } from "../../lib/protocol/levels.ts";
import { claimSlot, originOf } from "../../lib/protocol/producers.ts";
import { ProducerDeaths } from "../../lib/owner/producer_deaths.ts";
import { PoolMemory } from "../../lib/protocol/memory.ts";
import { TaskState, TaskTable } from "../../lib/record/task.ts";
import { TABLE_NOTE_WORDS } from "../../lib/record/task.ts";
import { recoverDeadWorker } from "../../lib/owner/recovery.ts";
import { poolQueuesOf } from "../../lib/owner/worker_deaths.ts";
import type { TaskLedger } from "../../lib/producer/ledger.ts";
import type { Encoder } from "../../lib/codec/codec.ts";
import { Forks } from "../../lib/worker/forks.ts";
import { Marks } from "../../lib/worker/marks.ts";
import { Runs } from "../../lib/worker/runs.ts";
import { assert, assertEquals, test, within } from "../_test.ts";
import { cutAt as killAt } from "./_cut_at.ts";

const DEQUE_CAPACITY = 4;

/** A pool's memory of one worker (0), that worker's parts, and the main thread's table and levels. */
function newWorld() {
  const memory = PoolMemory.create({
    workers: 1,
    dequeCapacity: DEQUE_CAPACITY,
    taskCapacity: 8,
    inlineBytes: 64,
    blockBytes: 128,
    blocks: 4,
  });
  TaskTable.init(memory);
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
  const marks = new Marks({ memory, words, table, deque, levels, completions, forks: new Forks(table), runs });
  const main = new TaskTable(memory);
  return { memory, words, deque, levels, table, runs, marks, main };
}

type World = ReturnType<typeof newWorld>;

/** A task from the main thread, in state `state` (QUEUED or CANCELLED), normal level; its handle. */
function newTask(world: World, state: number): number {
  const handle = world.main.allocate();
  const index = world.main.indexOf(handle);
  world.main.fields.setLevel(index, Level.normal);
  world.main.fields.storeState(index, state);
  return handle;
}

/** The main thread's repair of dead worker 0 (as owner/worker_deaths.ts calls it). */
function recover(world: World): void {
  const { memory } = world;
  recoverDeadWorker(
    {
      table: world.main,
      ledger: { placed: [] } as unknown as TaskLedger,
      sleep: memory.sleep,
      encoder: {} as Encoder,
      deque: memory.dequeRegion(0),
      dequeNotes: memory.notes(0, NoteWords.deque),
      marks: memory.notes(0, NoteWords.marks, MARK_WORDS),
      tableNotes: memory.notes(0, NoteWords.table, TABLE_NOTE_WORDS),
      levels: memory.levels(),
      queues: poolQueuesOf(memory, 0),
      isDead: () => true,
      complete: () => {},
    },
    0,
    new Error("worker 0 killed"),
  );
}

/** How many times `handle` is in a queue: the dead worker's deque (drained by its heir) and every injector. */
function timesQueued(world: World, handle: number): number {
  const { memory } = world;
  let times = 0;
  const heir = new Deque(memory.dequeRegion(0), memory.notes(0, NoteWords.deque));
  heir.repair();
  for (let v = heir.pop(); v !== EMPTY; v = heir.pop()) if (v === handle) times++;
  for (const queue of memory.levels().queues) {
    for (let v = queue.pop(); v !== QUEUE_EMPTY; v = queue.pop()) if (v === handle) times++;
  }
  return times;
}

/**
 * Sweeps a death over every access of `repair` (run on a fresh world made ready by `setUp`, which returns
 * the held task): after the death and recovery, or after the repair ran whole, the task is queued once.
 */
function sweep(
  what: string,
  setUp: (world: World, state: number) => number,
  repair: (world: World, handle: number) => void,
): number {
  let deaths = 0;
  for (const state of [TaskState.QUEUED, TaskState.CANCELLED]) {
    for (const full of [false, true]) {
      for (let n = 0;; n++) {
        const world = newWorld();
        // A full deque sends the repair's push to the injector.
        if (full) { for (let i = 0; i < DEQUE_CAPACITY; i++) world.deque.push(1000 + i); }
        const handle = setUp(world, state);
        const died = killAt(n, () => repair(world, handle));
        const where = `${what}, ${state === TaskState.QUEUED ? "QUEUED" : "CANCELLED"}, deque ${
          full ? "full" : "not full"
        }, killed at access ${n}`;
        if (died) {
          recover(world);
          deaths++;
        } else {
          assertEquals(world.words[MarkWords.held], -1, `${what}: the held mark after a whole repair`);
          assertEquals(world.words[MarkWords.moving], -1, `${what}: the moving mark after a whole repair`);
        }
        assertEquals(timesQueued(world, handle), 1, `${where}${died ? "" : " (not killed)"}: times the task is queued`);
        if (!died) break;
      }
    }
  }
  return deaths;
}

/** The worker took `handle` from the injector into its held mark (marks.ts takeHeld). */
function takeFromInjector(world: World, state: number): number {
  const handle = newTask(world, state);
  world.levels.pushPatiently(handle, Level.normal);
  assertEquals(world.marks.takeHeld(), handle, "the take");
  assertEquals(world.words[MarkWords.held], handle, "the held mark after the take");
  return handle;
}

test("class 7: a held task's repair killed at any access: recovery puts it back once (QUEUED or CANCELLED, into the deque or the injector)", () => {
  const deaths = sweep("repairHeld", takeFromInjector, (world) => world.marks.checkSearch());
  assert(deaths >= 8, `the sweep killed the repair inside it (${deaths} deaths)`);
});

test("class 7: a run cut short before its claim, put back (Runner.repairInterrupted's order) and killed at any access: recovery puts it back once", () => {
  const deaths = sweep(
    "putBack",
    (world, state) => {
      const handle = takeFromInjector(world, state);
      // Registered as a run (Runner.execute), its claim not yet made: the shared held mark stays.
      world.runs.enter(handle);
      world.marks.taken();
      return handle;
    },
    (world) => {
      // As Runner.repairInterrupted: the marks' repairs, then each run cut short put back.
      world.marks.repairAll();
      for (const run of world.runs.takeInterrupted()) world.marks.putBack(run);
      world.marks.repairedRuns();
    },
  );
  assert(deaths >= 8, `the sweep killed the repair inside it (${deaths} deaths)`);
});

test("class 7: a hand-back cut short before its push, its repair killed at any access: recovery puts the task back once", () => {
  let cases = 0;
  // The hand-back (marks.ts handBack) cut short by a throw at its m-th access (a stack overflow), for
  // each m that leaves the task QUEUED in the moving mark and in no queue; then its repair (repairMoving),
  // killed at any access.
  for (let m = 0;; m++) {
    const probe = newWorld();
    const handle = newTask(probe, TaskState.RUNNING);
    probe.runs.enter(handle);
    const cut = killAt(m, () => probe.marks.handBack(handle, probe.table.indexOf(handle)));
    if (!cut) break;
    const pending = probe.words[MarkWords.moving] === handle &&
      probe.main.fields.loadState(probe.main.indexOf(handle)) === TaskState.QUEUED &&
      probe.levels.queues[Level.normal].length === 0;
    if (!pending) continue;
    cases++;
    for (let n = 0;; n++) {
      const world = newWorld();
      const task = newTask(world, TaskState.RUNNING);
      world.runs.enter(task);
      assert(killAt(m, () => world.marks.handBack(task, world.table.indexOf(task))), "the same cut");
      const died = killAt(n, () => world.marks.checkSearch());
      if (died) recover(world);
      else assertEquals(world.words[MarkWords.moving], -1, "the moving mark after a whole repair");
      assertEquals(timesQueued(world, task), 1, `hand-back cut at ${m}, its repair killed at ${n}: times queued`);
      if (!died) break;
    }
  }
  assert(cases > 0, "a hand-back cut short with the task in its moving mark only");
});

/**
 * A producer's death swept while a worker claims one of its QUEUED tasks: the claim lands right before
 * the sweep's first write to the task's state word (after the sweep read it QUEUED), or (`claim` false)
 * never. Returns the task's state right after the sweep's first round, and what the sweep counted.
 */
async function sweepRacingAClaim(claim: boolean): Promise<{ state: number; cancelled: number; freed: boolean }> {
  const memory = PoolMemory.create({
    workers: 1,
    dequeCapacity: 4,
    taskCapacity: 8,
    inlineBytes: 64,
    blockBytes: 128,
    blocks: 4,
    producers: 1,
  });
  TaskTable.init(memory);
  const table = new TaskTable(memory);
  // The slot claimed as the owner claims it for a handle (its notes clear, its placing note -1).
  const slot = claimSlot(memory.buffer, memory.layout);
  assertEquals(slot, 1, "the slot claimed");
  const handle = table.allocate();
  const index = table.indexOf(handle);
  table.fields.setOrigin(index, originOf(slot));
  table.fields.storeState(index, TaskState.QUEUED);
  const stateAt = table.fields.stateWord(index);
  const deaths = new ProducerDeaths({ memory, table, levels: memory.levels(), running: () => true });
  // The worker's claim (runner.ts: QUEUED to RUNNING, a compare-exchange), made just before the sweep's
  // first write to the state word: any write that assumes the QUEUED it read is then stale.
  let claimed = false;
  const binding = { ...atomicsBinding } as Record<string, unknown>;
  for (const key of ["store", "compareExchange", "exchange", "write"] as const) {
    const real = (atomicsBinding as unknown as Record<string, (...args: unknown[]) => unknown>)[key];
    if (real === undefined) continue;
    binding[key] = (...args: unknown[]) => {
      if (claim && !claimed && args[0] === table.words && args[1] === stateAt) {
        claimed = true;
        atomicsBinding.compareExchange(table.words, stateAt, TaskState.QUEUED, TaskState.RUNNING);
      }
      return real(...args);
    };
  }
  const restore = installSharedMemory(binding as unknown as SharedMemory);
  try {
    deaths.died(slot);
    // The sweep's first round runs after one await, then waits a few ms for the next.
    await new Promise((resolve) => setTimeout(resolve, 0));
  } finally {
    restore();
  }
  assertEquals(claimed, claim, "the claim was made inside the sweep's round");
  const state = table.fields.loadState(index);
  if (state === TaskState.RUNNING) {
    // The worker finishes it and queues its completion to the dead producer's slot; the sweep frees it.
    table.fields.storeState(index, TaskState.DONE);
    new Injector(memory.channels[slot].queue).push(handle);
  } else if (state === TaskState.CANCELLED) {
    // The worker that takes a CANCELLED handle frees it.
    table.releaseHandle(handle);
  }
  await within(deaths.settled(), 10_000, "the sweep's end");
  const after = table.fields.loadState(index);
  return { state, cancelled: deaths.cancelled, freed: after === TaskState.FREE || after === TaskState.CACHED };
}

test("class 7: a producer's death swept while a worker claims its QUEUED task: the claim stands, the task runs and is freed once done", async () => {
  const raced = await sweepRacingAClaim(true);
  assertEquals(raced.state, TaskState.RUNNING, "the claimed task's state after the sweep's round (not CANCELLED)");
  assertEquals(raced.cancelled, 0, "tasks the sweep cancelled");
  assert(raced.freed, "the task's record freed once done");
  const alone = await sweepRacingAClaim(false);
  assertEquals(alone.state, TaskState.CANCELLED, "an unclaimed task's state after the sweep's round");
  assertEquals(alone.cancelled, 1, "tasks the sweep cancelled");
  assert(alone.freed, "the cancelled task's record freed by its taker");
});

test("class 7: a held task's repair cut short by a throw at any access (a stack overflow), then repaired again: the task is queued once", () => {
  let cuts = 0;
  for (const state of [TaskState.QUEUED, TaskState.CANCELLED]) {
    for (const full of [false, true]) {
      for (let m = 0;; m++) {
        const world = newWorld();
        if (full) { for (let i = 0; i < DEQUE_CAPACITY; i++) world.deque.push(1000 + i); }
        const handle = takeFromInjector(world, state);
        const cut = killAt(m, () => world.marks.checkSearch());
        // The next search's check completes it (or finds nothing left to do).
        world.marks.checkSearch();
        assertEquals(world.words[MarkWords.held], -1, "the held mark after the repair");
        assertEquals(
          timesQueued(world, handle),
          1,
          `${state === TaskState.QUEUED ? "QUEUED" : "CANCELLED"}, deque ${
            full ? "full" : "not full"
          }, cut at ${m}: times queued`,
        );
        if (!cut) break;
        cuts++;
      }
    }
  }
  assert(cuts >= 8, `repairs cut short (${cuts})`);
});
