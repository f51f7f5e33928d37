/**
 * A worker's search for work and its idle path (`lib/worker/search.ts`), on one thread: the order of the
 * search (own deque newest first, the injector one task at a time oldest first, then half of another
 * worker's deque), which victims a thief tries, the wakes it posts, its counters, and each idle round's
 * outcome (spin, doze, the sleep protocol's answers, an elastic pool's retirement). These pin the values
 * StrykerJS changed without the pool suites noticing (issue 47, "Mutants nobody here chose").
 *
 * The shipped `Search` of worker 0 on a real pool memory, with that worker's real deque, levels, marks,
 * task table and counters, driven in this thread; the sleep words' handle, the mail, the encoder and an
 * elastic pool's slots are stand-ins that record what the search asked of them (the sleep protocol itself
 * is tests/protocol/sleep_test.ts's and the sleep harness's). No worker runs: nothing depends on timing.
 */
import type { Encoder } from "../../lib/codec/codec.ts";
import { atomicsBinding, installSharedMemory } from "../../lib/protocol/atomics.ts";
import { EMPTY, RETRY, type Stealer } from "../../lib/protocol/deque.ts";
import { Injector } from "../../lib/protocol/injector.ts";
import { ControlWords, MARK_WORDS, NOTE_WORDS, NoteWords, StatusWords } from "../../lib/protocol/layout.ts";
import { Level } from "../../lib/protocol/levels.ts";
import { PoolMemory } from "../../lib/protocol/memory.ts";
import {
  IDLE_ASLEEP,
  IDLE_POSTED,
  IDLE_STOPPING,
  type Retirement,
  type Sleep,
  SLEPT_RETIRED,
  SLEPT_TIMED_OUT,
  SLEPT_WOKEN,
} from "../../lib/protocol/sleep.ts";
import type { Slots } from "../../lib/protocol/slots.ts";
import { TaskState, TaskTable } from "../../lib/record/task.ts";
import { Forks } from "../../lib/worker/forks.ts";
import type { Mail } from "../../lib/worker/mail.ts";
import { Marks } from "../../lib/worker/marks.ts";
import { Runs } from "../../lib/worker/runs.ts";
import {
  DOZE_MS,
  DOZE_ROUNDS,
  Search,
  SEARCH_AGAIN,
  SEARCH_RETIRE,
  SEARCH_SLEEP_ASYNC,
  SEARCH_STOP,
  type SearchElastic,
  SPIN_ROUNDS,
} from "../../lib/worker/search.ts";
import { WorkerStats } from "../../lib/worker/stats.ts";
import { assert, assertEquals, test } from "../_test.ts";

/**
 * A stand-in for the sleep words' handle: records each call; `idle` runs the late search and the stop check
 * as the protocol does (Sleep.idle), then answers `asleep` (IDLE_ASLEEP or IDLE_POSTED).
 */
class FakeSleep {
  calls: string[] = [];
  onNobodyWoken: (() => void) | undefined = undefined;
  /** What `idle` answers when the late search found nothing and the pool is not stopping. */
  asleep: number = IDLE_ASLEEP;
  /** What `sleep` and `sleepAsync` answer (woken by a poster). */
  woken = false;
  /** What `sleepOrRetire` answers. */
  slept: number = SLEPT_TIMED_OUT;
  /** The retirement `sleepOrRetire` was given. */
  retirement: Retirement | undefined = undefined;

  newWork(): void {
    this.calls.push("newWork");
  }
  idle(index: number, search: () => number, stopping: () => boolean): number {
    this.calls.push(`idle ${index}`);
    const late = search();
    if (late >= 0) return late;
    if (stopping()) return IDLE_STOPPING;
    return this.asleep;
  }
  doze(index: number, ms: number): void {
    this.calls.push(`doze ${index} ${ms}`);
  }
  sleep(index: number, timeoutMs?: number): boolean {
    this.calls.push(`sleep ${index} ${timeoutMs}`);
    return this.woken;
  }
  sleepOrRetire(index: number, timeoutMs: number, retirement: Retirement): number {
    this.calls.push(`sleepOrRetire ${index} ${timeoutMs}`);
    this.retirement = retirement;
    return this.slept;
  }
  sleepAsync(index: number): Promise<boolean> {
    this.calls.push(`sleepAsync ${index}`);
    return Promise.resolve(this.woken);
  }
  /** The calls made since the last look, and forget them. */
  take(): string[] {
    const calls = this.calls;
    this.calls = [];
    return calls;
  }
}

/** What the world is made with. */
interface WorldOptions {
  workers?: number;
  /** This worker's index (default 0). */
  index?: number;
  /** An elastic pool's part (its slots a stand-in); undefined: a fixed pool. */
  elastic?: SearchElastic;
  /** Stand-ins for some workers' stealers (by index). */
  stealers?: Record<number, Stealer>;
}

/** A pool memory of `workers` workers and the search of worker `index`, its parts laid bare. */
function newWorld(options: WorldOptions = {}) {
  const workers = options.workers ?? 3;
  const index = options.index ?? 0;
  const memory = PoolMemory.create({
    workers,
    dequeCapacity: 16,
    taskCapacity: 256,
    inlineBytes: 64,
    blockBytes: 128,
    blocks: 4,
    producers: 0,
  });
  TaskTable.init(memory);
  const notes = (worker: number, at: number) => memory.notes(worker, at);
  const words = memory.notes(index, NoteWords.marks, MARK_WORDS);
  words.fill(-1);
  const deques = Array.from({ length: workers }, (_, i) => memory.deque(i, notes(i, NoteWords.deque)));
  const deque = deques[index];
  const levels = memory.levels([
    notes(index, NoteWords.injectorHigh),
    notes(index, NoteWords.injector),
    notes(index, NoteWords.injectorLow),
  ]);
  const completions = memory.channels.map((channel) =>
    new Injector(
      channel.queue,
      notes(
        index,
        channel.slot === 0 ? NoteWords.completions : NoteWords.producerCompletions + (channel.slot - 1) * NOTE_WORDS,
      ),
    )
  );
  const table = new TaskTable(memory, { owner: index });
  const forks = new Forks(table);
  const runs = new Runs();
  const marks = new Marks({ memory, words, table, deque, levels, completions, forks, runs });
  let mainWakes = 0;
  marks.wakeMain = () => void mainWakes++;
  const stats = new WorkerStats(memory, index, undefined);
  const sleep = new FakeSleep();
  let trims = 0;
  const encoder = { trim: () => void trims++ } as unknown as Encoder;
  const mailbox = { waiting: false, looks: 0 };
  const mail = {
    waiting: () => {
      mailbox.looks++;
      return mailbox.waiting;
    },
  } as unknown as Mail;
  const stealers = memory.stealers.map((s, i) => options.stealers?.[i] ?? s);
  const search = new Search({
    index,
    memory: { control: memory.control, stealers, sleep: sleep as unknown as Sleep },
    deque,
    levels,
    table,
    encoder,
    marks,
    mail,
    stats,
    elastic: options.elastic,
  });
  /** A counter of this worker's status line. */
  const count = (field: number) => memory.status[index * StatusWords.count + field];
  /** The loop's part once a search returned a task: registered and claimed, no longer held. */
  const run = (task: number) => {
    assertEquals(words[0] === task || words.includes(task), true, `task ${task} is held while the search returns it`);
    marks.taken();
    marks.claimed();
    return task;
  };
  return {
    memory,
    deques,
    deque,
    levels,
    table,
    marks,
    words,
    stats,
    sleep,
    search,
    mailbox,
    count,
    run,
    mainWakes: () => mainWakes,
    trims: () => trims,
  };
}

type World = ReturnType<typeof newWorld>;

/** Calls findWork and does the loop's part with what it found; -1 if nothing. */
function find(world: World): number {
  const task = world.search.findWork();
  if (task >= 0) world.run(task);
  return task;
}

test("search: own deque first, newest first; then the injector; then a steal; else -1", () => {
  const world = newWorld();
  world.deque.push(10);
  world.deque.push(11);
  world.levels.pushPatiently(20, Level.normal);
  world.deques[1].push(30);
  assertEquals(find(world), 11, "own deque, newest first");
  assertEquals(find(world), 10, "own deque, then the older");
  assertEquals(world.count(StatusWords.injectorPops), 0, "no injector pop while our deque had work");
  assertEquals(find(world), 20, "the injector once our deque is empty");
  assertEquals(world.count(StatusWords.injectorPops), 1, "one injector pop counted");
  assertEquals(world.count(StatusWords.stealAttempts), 0, "no steal while the injector had work");
  assertEquals(find(world), 30, "stolen from worker 1 once the injector is empty");
  assertEquals(world.count(StatusWords.successfulSteals), 1, "one successful steal");
  assertEquals(world.count(StatusWords.stolen), 1, "one task stolen");
  assertEquals(find(world), -1, "nothing left anywhere");
  assertEquals(world.deques[1].length, 0, "worker 1's deque emptied");
});

test("search: the injector one task at a time, oldest first; a sleeper woken for the rest while any is left", () => {
  const world = newWorld();
  for (const task of [40, 41, 42]) world.levels.pushPatiently(task, Level.normal);
  assertEquals(find(world), 40, "the oldest first");
  assertEquals(world.deque.length, 0, "nothing moved into our deque");
  assertEquals(world.sleep.take(), ["newWork"], "two left: one wake");
  assertEquals(find(world), 41, "then the next");
  assertEquals(world.sleep.take(), ["newWork"], "one left: still a wake (the last task must not wait for us)");
  assertEquals(find(world), 42, "then the last");
  assertEquals(world.sleep.take(), [], "none left: no wake");
  assertEquals(world.count(StatusWords.injectorPops), 3, "three pops counted");
  assertEquals(find(world), -1, "empty");
  assertEquals(world.sleep.take(), [], "no wake for an empty search");
});

test("search: a steal takes half of the victim's deque, oldest first, counts it, and wakes a sleeper when it moved more than one", () => {
  const world = newWorld({ workers: 2 });
  for (const task of [50, 51, 52, 53]) world.deques[1].push(task);
  assertEquals(find(world), 51, "half (50, 51) moved into our deque; our pop takes the newest of them");
  assertEquals(world.deques[1].length, 2, "the victim keeps the newer half");
  assertEquals(world.deque.length, 1, "the other stolen task waits in our deque");
  assertEquals(world.count(StatusWords.stealAttempts), 1, "one attempt");
  assertEquals(world.count(StatusWords.successfulSteals), 1, "one successful steal");
  assertEquals(world.count(StatusWords.stolen), 2, "two tasks stolen");
  assertEquals(world.sleep.take(), ["newWork"], "two moved: one left in our deque to be stolen, so a wake");
  assertEquals(find(world), 50, "our own deque's task next");
  assertEquals(world.sleep.take(), [], "own pop: no wake");

  const one = newWorld({ workers: 2 });
  one.deques[1].push(60);
  assertEquals(find(one), 60, "a single task stolen");
  assertEquals(one.count(StatusWords.stolen), 1, "one task stolen");
  assertEquals(one.sleep.take(), [], "one moved and run by us: nothing left to wake anyone for");
});

test("search: a thief tries every other worker once per search, never itself", () => {
  for (const index of [0, 1, 2, 3]) {
    const world = newWorld({ workers: 4, index });
    const searches = 25;
    for (let i = 0; i < searches; i++) assertEquals(find(world), -1, "nothing anywhere");
    assertEquals(world.count(StatusWords.stealAttempts), 3 * searches, `worker ${index}: 3 attempts a search`);
    assertEquals(world.count(StatusWords.successfulSteals), 0, "no steal succeeded");
    // Whichever other worker has work, a single search finds it.
    for (const victim of [0, 1, 2, 3]) {
      if (victim === index) continue;
      for (let i = 0; i < 8; i++) {
        world.deques[victim].push(70 + victim);
        assertEquals(find(world), 70 + victim, `worker ${index} finds worker ${victim}'s task in one search`);
      }
    }
    // Our own deque is never "stolen" from: a task there is popped, and counted as no steal.
    world.deques[index].push(99);
    const attempts = world.count(StatusWords.stealAttempts);
    assertEquals(find(world), 99, "own task");
    assertEquals(world.count(StatusWords.stealAttempts), attempts, "no attempt for an own task");
  }
});

test("search: one worker alone never tries to steal", () => {
  const world = newWorld({ workers: 1 });
  assertEquals(find(world), -1, "nothing");
  assertEquals(world.count(StatusWords.stealAttempts), 0, "no attempt: there is no other worker");
});

test("search: victims are chosen at random: successive searches start at different workers", () => {
  for (const index of [0, 1]) {
    const world = newWorld({ workers: 4, index });
    const first = new Set<number>();
    for (let i = 0; i < 40; i++) {
      for (let v = 0; v < 4; v++) if (v !== index) world.deques[v].push(100 + v);
      first.add(find(world) - 100);
      // Empty the others again for the next round.
      for (let v = 0; v < 4; v++) while (world.deques[v].pop() !== EMPTY);
    }
    assertEquals(first.has(index), false, "never our own deque");
    assertEquals(first.size, 3, `worker ${index}: every other worker was the first victim some time`);
  }
});

test("search: a steal that lost a race (RETRY) is tried once more on the same victim, then the next", () => {
  const world0 = newWorld({ workers: 2 });
  let tries = 0;
  const real = world0.memory.stealers[1];
  const flaky = {
    stealHalfInto: (dst: Parameters<Stealer["stealHalfInto"]>[0]) => tries++ === 0 ? RETRY : real.stealHalfInto(dst),
  } as unknown as Stealer;
  const world = newWorld({ workers: 2, stealers: { 1: flaky } });
  // The flaky stand-in steals from world0's memory into world's deque: a task there reaches us.
  world0.deques[1].push(80);
  assertEquals(find(world), 80, "found on the second try");
  assertEquals(tries, 2, "two tries");
  assertEquals(world.count(StatusWords.stealAttempts), 1, "counted as one attempt");

  let always = 0;
  const lost = { stealHalfInto: () => (always++, RETRY) } as unknown as Stealer;
  const other = newWorld({ workers: 3, stealers: { 1: lost } });
  other.deques[2].push(81);
  assertEquals(find(other), 81, "worker 2's task found after worker 1 lost twice");
  assert(always === 0 || always === 2, `worker 1 tried twice or not at all (it came after 2): ${always}`);
});

test("search: an elastic pool's thief skips slots that are not live", () => {
  const live = [true, true, false, true];
  const asked: number[] = [];
  const slots = {
    live: (i: number) => (asked.push(i), live[i]),
    retireReserve: () => true,
    retireUnreserve: () => {},
    wantWorker: () => false,
  } as unknown as Slots;
  const world = newWorld({ workers: 4, elastic: { slots, min: 1, idleTimeout: 100, wantWorker: () => {} } });
  // A task in a slot not live (it cannot hold one, spec/Elastic.tla): skipped, not stolen.
  world.deques[2].push(90);
  for (let i = 0; i < 10; i++) assertEquals(find(world), -1, "slot 2 skipped");
  assertEquals(world.count(StatusWords.stealAttempts), 20, "two attempts a search (slots 1 and 3)");
  assertEquals(asked.includes(0), false, "our own slot is not asked about");
  live[2] = true;
  assertEquals(find(world), 90, "once live, its task is stolen");
});

test("search: an elastic pool's newWork that woke nobody asks the owner for a worker while tasks are queued, once a flag", () => {
  let wants = 0;
  let flag = true;
  const slots = { live: () => true, wantWorker: () => flag } as unknown as Slots;
  const world = newWorld({
    workers: 2,
    elastic: { slots, min: 1, idleTimeout: 100, wantWorker: () => void wants++ },
  });
  const nobody = world.sleep.onNobodyWoken;
  assert(nobody !== undefined, "an elastic pool's search sets the hook");
  nobody();
  assertEquals(wants, 0, "nothing queued: no grow message");
  world.levels.pushPatiently(1, Level.normal);
  nobody();
  assertEquals(wants, 1, "a task queued, the flag was ours: one grow message");
  flag = false;
  nobody();
  assertEquals(wants, 1, "the flag was already set (a burst is one message): none");
  flag = true;
  world.levels.pushPatiently(2, Level.low);
  world.levels.take();
  world.levels.take();
  assertEquals(world.levels.queued, 0, "drained");
  nobody();
  assertEquals(wants, 1, "drained: none");
  // A task queued at another level than normal counts too (queued, not length).
  const high = newWorld({ workers: 2, elastic: { slots, min: 1, idleTimeout: 100, wantWorker: () => void wants++ } });
  high.memory.levels([new Int32Array(4), new Int32Array(4), new Int32Array(4)]).pushPatiently(3, Level.high);
  high.sleep.onNobodyWoken!();
  assertEquals(wants, 2, "a high task queued by another thread: one grow message");

  const fixed = newWorld({ workers: 2 });
  assertEquals(fixed.sleep.onNobodyWoken, undefined, "a fixed pool's search sets no hook");
});

test("search: idle rounds spin SPIN_ROUNDS times, then doze DOZE_ROUNDS times, then go to sleep; found() starts over", () => {
  const world = newWorld();
  for (let round = 1; round <= SPIN_ROUNDS; round++) {
    assertEquals(world.search.idle(false), SEARCH_AGAIN, `spin round ${round}`);
  }
  assertEquals(world.sleep.take(), [], "spinning asks nothing of the sleep words");
  for (let round = 1; round <= DOZE_ROUNDS; round++) {
    assertEquals(world.search.idle(false), SEARCH_AGAIN, `doze round ${round}`);
  }
  assertEquals(world.sleep.take(), Array(DOZE_ROUNDS).fill(`doze 0 ${DOZE_MS}`), "DOZE_ROUNDS dozes of DOZE_MS");
  world.sleep.asleep = IDLE_POSTED;
  assertEquals(world.search.idle(false), SEARCH_AGAIN, "the round after: the sleep protocol (work posted)");
  assertEquals(world.sleep.take(), ["idle 0"], "the protocol's idle, after the last doze");
  // It starts over: spin again.
  assertEquals(world.search.idle(false), SEARCH_AGAIN, "spin");
  assertEquals(world.sleep.take(), [], "a spin again after the sleep attempt");
  // found() starts over too.
  for (let round = 1; round < SPIN_ROUNDS + DOZE_ROUNDS; round++) world.search.idle(false);
  world.sleep.take();
  world.search.found();
  assertEquals(world.search.idle(false), SEARCH_AGAIN, "spin after found()");
  assertEquals(world.sleep.take(), [], "found() reset the rounds: a spin, not a sleep");
  for (let round = 2; round <= SPIN_ROUNDS; round++) world.search.idle(false);
  assertEquals(world.sleep.take(), [], "spins only, up to SPIN_ROUNDS");
  world.search.idle(false);
  assertEquals(world.sleep.take(), [`doze 0 ${DOZE_MS}`], "then a doze");
});

test("search: with async tasks pending a worker never dozes: after its spins it sleeps asynchronously", () => {
  const world = newWorld({ index: 1 });
  for (let round = 1; round <= SPIN_ROUNDS; round++) assertEquals(world.search.idle(true), SEARCH_AGAIN, "spin");
  assertEquals(world.search.idle(true), SEARCH_SLEEP_ASYNC, "straight to the asynchronous sleep");
  assertEquals(world.sleep.take(), ["idle 1"], "no doze, no blocking sleep");
  assertEquals(world.count(StatusWords.sleeps), 1, "a sleep counted");
});

/** A world whose next idle round goes to sleep (its spins and dozes done). */
function sleepy(options: WorldOptions = {}): World {
  const world = newWorld(options);
  for (let round = 0; round < SPIN_ROUNDS + DOZE_ROUNDS; round++) world.search.idle(false);
  world.sleep.take();
  return world;
}

test("search: going to sleep gives the cached records back (telling the main thread only if any went back) and trims the encoder", () => {
  const world = sleepy();
  // Two records freed into this worker's cache.
  const a = world.table.allocate();
  const b = world.table.allocate();
  world.table.release(world.table.indexOf(a));
  world.table.release(world.table.indexOf(b));
  assert(world.table.cachedHere > 0, "records cached here");
  world.sleep.asleep = IDLE_POSTED;
  assertEquals(world.search.idle(false), SEARCH_AGAIN, "work posted meanwhile");
  assertEquals(world.table.cachedHere, 0, "the cache went back to the shared list");
  assertEquals(world.mainWakes(), 1, "the main thread was told once");
  assertEquals(world.trims(), 1, "the encoder trimmed");
  const again = sleepy();
  again.sleep.asleep = IDLE_POSTED;
  again.search.idle(false);
  assertEquals(again.mainWakes(), 0, "nothing went back: nobody told");
  assertEquals(again.trims(), 1, "trimmed all the same");
});

test("search: the sleep protocol's answers: a late task, stopping, work posted", () => {
  const world = sleepy();
  world.levels.pushPatiently(7, Level.normal);
  assertEquals(world.search.idle(false), 7, "the late search's task is returned, held");
  world.run(7);
  assertEquals(world.sleep.take(), ["idle 0"], "no sleep after a late task");
  assertEquals(world.count(StatusWords.sleeps), 0, "not counted as a sleep");

  const stopping = sleepy();
  stopping.memory.control[ControlWords.lifecycle] = 1;
  assertEquals(stopping.search.stopping(), true, "stopping read from the lifecycle word");
  assertEquals(stopping.search.idle(false), SEARCH_STOP, "stopping");
  assertEquals(stopping.sleep.take(), ["idle 0"], "no sleep");
  assertEquals(stopping.count(StatusWords.sleeps), 0, "not counted as a sleep");
  const running = newWorld();
  assertEquals(running.search.stopping(), false, "a running pool is not stopping");

  const posted = sleepy();
  posted.sleep.asleep = IDLE_POSTED;
  assertEquals(posted.search.idle(false), SEARCH_AGAIN, "posted meanwhile: search again");
  assertEquals(posted.sleep.take(), ["idle 0"], "no sleep");
  assertEquals(posted.count(StatusWords.sleeps), 0, "not counted as a sleep");
});

test("search: mail seen by the last search: no search of the queues, and a sleep of 0 ms that leaves the sleeping state at once", () => {
  const world = sleepy({ index: 2 });
  world.levels.pushPatiently(8, Level.normal);
  world.mailbox.waiting = true;
  assertEquals(world.search.idle(false), SEARCH_AGAIN, "search again (the loop reads the mail)");
  assertEquals(world.sleep.take(), ["idle 2", "sleep 2 0"], "a sleep of 0 ms: the protocol's timed-out sleep");
  assertEquals(world.levels.length, 1, "the queues were not searched: the task is still queued");
  assertEquals(world.count(StatusWords.sleeps), 0, "not counted as a sleep");
  assertEquals(world.count(StatusWords.wakes), 0, "nor a wake");
  // The next time round, with no mail, it sleeps for real (mailSeen does not stick).
  world.mailbox.waiting = false;
  world.levels.take();
  for (let round = 0; round < SPIN_ROUNDS + DOZE_ROUNDS; round++) world.search.idle(false);
  world.sleep.take();
  assertEquals(world.search.idle(false), SEARCH_AGAIN, "slept");
  assertEquals(world.sleep.take(), ["idle 2", "sleep 2 undefined"], "a real sleep, no timeout");
  assertEquals(world.count(StatusWords.sleeps), 1, "one sleep counted");
});

test("search: a fixed pool's worker sleeps with no timeout and counts a wake only when woken by a poster", () => {
  const world = sleepy({ index: 1 });
  world.sleep.woken = false;
  assertEquals(world.search.idle(false), SEARCH_AGAIN, "search again after the sleep");
  assertEquals(world.sleep.take(), ["idle 1", "sleep 1 undefined"], "slept, no timeout");
  assertEquals(world.count(StatusWords.sleeps), 1, "a sleep counted");
  assertEquals(world.count(StatusWords.wakes), 0, "not woken by a poster: no wake counted");
  for (let round = 0; round < SPIN_ROUNDS + DOZE_ROUNDS; round++) world.search.idle(false);
  world.sleep.take();
  world.sleep.woken = true;
  assertEquals(world.search.idle(false), SEARCH_AGAIN, "search again");
  assertEquals(world.count(StatusWords.sleeps), 2, "two sleeps");
  assertEquals(world.count(StatusWords.wakes), 1, "one wake");
});

test("search: an elastic pool's worker sleeps at most its idle timeout, retires when the protocol says so, counts a wake only when woken", () => {
  const reserved: number[] = [];
  let unreserved = 0;
  const slots = {
    live: () => true,
    retireReserve: (min: number) => (reserved.push(min), true),
    retireUnreserve: () => void unreserved++,
    wantWorker: () => false,
  } as unknown as Slots;
  const elastic = { slots, min: 2, idleTimeout: 1234, wantWorker: () => {} };
  const world = sleepy({ workers: 3, index: 1, elastic });
  world.sleep.slept = SLEPT_RETIRED;
  assertEquals(world.search.idle(false), SEARCH_RETIRE, "retired");
  assertEquals(world.sleep.take(), ["idle 1", "sleepOrRetire 1 1234"], "slept up to the idle timeout");
  assertEquals(world.count(StatusWords.sleeps), 1, "a sleep counted");
  assertEquals(world.count(StatusWords.wakes), 0, "no wake");
  // The retirement it passed: the size word's steps with the pool's min, and this worker's mail.
  const retirement = world.sleep.retirement!;
  assertEquals(retirement.reserve(), true, "reserve answered by the slots");
  assertEquals(reserved, [2], "reserve with the pool's min");
  retirement.unreserve();
  assertEquals(unreserved, 1, "unreserve reaches the slots");
  assertEquals(retirement.mail(), false, "no mail");
  world.mailbox.waiting = true;
  assertEquals(retirement.mail(), true, "mail waiting");
  world.mailbox.waiting = false;

  for (const [slept, wakes] of [[SLEPT_TIMED_OUT, 0], [SLEPT_WOKEN, 1]]) {
    const w = sleepy({ workers: 3, index: 1, elastic });
    w.sleep.slept = slept;
    assertEquals(w.search.idle(false), SEARCH_AGAIN, "stays: search again");
    assertEquals(w.count(StatusWords.wakes), wakes, `wakes counted for ${slept}`);
    assertEquals(w.sleep.take(), ["idle 1", "sleepOrRetire 1 1234"], "never the fixed pool's sleep");
  }
  // With async tasks pending, an elastic worker sleeps asynchronously too (it cannot retire then).
  const pending = newWorld({ workers: 3, index: 1, elastic });
  for (let round = 0; round < SPIN_ROUNDS; round++) pending.search.idle(true);
  assertEquals(pending.search.idle(true), SEARCH_SLEEP_ASYNC, "asynchronous sleep");
  assertEquals(pending.sleep.take(), ["idle 1"], "no sleepOrRetire");
});

test("search: sleepAsync counts a wake only when woken by a poster", async () => {
  const world = newWorld({ index: 2 });
  world.sleep.woken = false;
  await world.search.sleepAsync();
  assertEquals(world.sleep.take(), ["sleepAsync 2"], "this worker's asynchronous sleep");
  assertEquals(world.count(StatusWords.wakes), 0, "timed out or stopped: no wake");
  world.sleep.woken = true;
  await world.search.sleepAsync();
  assertEquals(world.count(StatusWords.wakes), 1, "woken: one wake");
});

test("search: a task held by a search that was cut short before its run was registered is put back first, then found again", () => {
  const world = newWorld();
  // A submitted task, QUEUED, in our deque.
  const main = new TaskTable(world.memory);
  const handle = main.allocate();
  main.fields.storeState(main.indexOf(handle), TaskState.QUEUED);
  world.deque.push(handle);
  assertEquals(world.search.findWork(), handle, "taken, held");
  // Cut short here: the loop never registered it (no taken(), no claimed()); the next search repairs first.
  assertEquals(world.search.findWork(), handle, "put back by the repair, then found again: not lost");
  world.run(handle);
  assertEquals(find(world), -1, "once only");
});

test("search: a steal whose tasks another thief took from our deque before our pop goes on to the next victim", () => {
  // Worker 1 reports tasks moved into our deque, which a thief emptied before our pop (a race no thread
  // here can stage): the search must not give up, but try worker 2, whose task waits.
  const gone = { stealHalfInto: () => 1 } as unknown as Stealer;
  const world = newWorld({ workers: 3, stealers: { 1: gone } });
  let beforeTwo = 0;
  for (let i = 0; i < 20; i++) {
    world.deques[2].push(200 + i);
    const attempts = world.count(StatusWords.stealAttempts);
    assertEquals(find(world), 200 + i, `search ${i}: worker 2's task found`);
    if (world.count(StatusWords.stealAttempts) - attempts === 2) beforeTwo++;
  }
  assert(beforeTwo > 0, "worker 1 came first in some search (else this test shows nothing)");
});

test("search: each spin round is 32 pause hints and no shared access", () => {
  const world = newWorld();
  let pauses = 0;
  let accesses = 0;
  const counting = { ...atomicsBinding };
  for (const key of Object.keys(atomicsBinding) as (keyof typeof atomicsBinding)[]) {
    if (key === "pause") continue;
    const real = atomicsBinding[key] as (...args: unknown[]) => unknown;
    (counting as Record<string, unknown>)[key] = (...args: unknown[]) => (accesses++, real(...args));
  }
  counting.pause = () => void pauses++;
  const restore = installSharedMemory(counting);
  try {
    for (let round = 1; round <= SPIN_ROUNDS; round++) {
      world.search.idle(false);
      assertEquals(pauses, 32 * round, `spin round ${round}: 32 pause hints`);
    }
  } finally {
    restore();
  }
  assertEquals(accesses, 0, "no shared access while spinning");
});

test("search: the late search's task of handle 0 is returned (0 is a task, not 'none')", () => {
  const world = sleepy();
  world.levels.pushPatiently(0, Level.normal);
  assertEquals(world.search.idle(false), 0, "task 0 returned, held");
  world.run(0);
  assertEquals(world.sleep.take(), ["idle 0"], "no sleep");
  assertEquals(world.count(StatusWords.sleeps), 0, "not counted as a sleep");
});

test("search: different workers try their victims in different orders (their random states differ)", () => {
  const workers = 8;
  /** The first victim of each of 40 searches by worker `index`, every other worker having a task. */
  const firsts = (index: number) => {
    const world = newWorld({ workers, index });
    const found: number[] = [];
    for (let i = 0; i < 40; i++) {
      for (let v = 0; v < workers; v++) if (v !== index) world.deques[v].push(300 + v);
      found.push(find(world) - 300);
      for (let v = 0; v < workers; v++) while (world.deques[v].pop() !== EMPTY);
    }
    return found;
  };
  const a = firsts(0);
  const b = firsts(1);
  const same = a.filter((v, i) => v === b[i]).length;
  // Two workers with one random state pick the same first victim whenever it is neither of them (6 in 8).
  assert(same < 20, `workers 0 and 1 chose the same first victim in ${same} of 40 searches`);
});
