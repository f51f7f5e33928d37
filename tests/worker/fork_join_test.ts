/**
 * `ForkJoin`, a worker's fork-join host (`lib/worker/fork_join.ts`), on one thread: which joins keep b
 * inline (the lazy join: no thief could want it, and its arguments pass unchanged), what a fork's record
 * holds when it is published, the refusals that run b inline instead (no record, no blocks), the join that
 * pops b back and runs it, the join whose b a thief finished (its value or its error from the record), the
 * wait that helps with other work (its own deque, then the search; none at the bound of async tasks) and
 * stops with the pool, and an aborted task's forks. The pool suites (join_test.ts, reliability_test.ts) cross
 * it through real workers; these pin each rule on its own, with worker 0's real parts on a real pool memory
 * built in this thread (tests/worker/_world.ts): nothing depends on timing. Issue 47, "Mutants nobody here
 * chose".
 */
import { Encoder } from "../../lib/codec/codec.ts";
import { move } from "../../lib/codec/move.ts";
import { ControlWords, DequeWords, MarkWords, SleepWords, StatusWords } from "../../lib/protocol/layout.ts";
import { Level } from "../../lib/protocol/levels.ts";
import { latchIsSet, UNSET } from "../../lib/protocol/latch.ts";
import { idleAccountingErrors, recordCensus } from "../../lib/record/census.ts";
import { Origin, TaskFlags, TaskState } from "../../lib/record/task.ts";
import { BUILTINS } from "../../lib/worker/chunk.ts";
import type { TaskFunction } from "../../lib/worker/functions.ts";
import { assert, assertEquals, test } from "../_test.ts";
import { cutRun } from "../protocol/_cut_at.ts";
import { newWorld, outcomeOf, stateOf, submit, type World } from "./_world.ts";

/** The world's task function `id`, as fork takes it. */
function fn(world: World, id: number): TaskFunction & ((...args: unknown[]) => unknown) {
  return world.functions.all[id] as never;
}

/** Runs `body` as if inside submitted task `root`'s run (its record the forks' root). */
function inRun<T>(world: World, root: number, body: () => T): T {
  const depth = world.runs.enter(root);
  world.runs.setRoot(world.main.indexOf(root));
  try {
    return body();
  } finally {
    world.runs.exit(depth);
  }
}

/** The throw of `body`, or a failure if it returns. */
function thrown(body: () => unknown): unknown {
  try {
    body();
  } catch (error) {
    return error;
  }
  throw new Error("expected a throw");
}

/** A record's state once freed: in this worker's cache, or back on the shared list. */
function assertFreed(state: number): void {
  assert(state === TaskState.CACHED || state === TaskState.FREE, `its record freed: state ${state}`);
}

/** How many tasks worker 0's deque holds. */
function depth(world: World): number {
  const words = world.deque.words;
  return Atomics.load(words, DequeWords.bottom) - Atomics.load(words, DequeWords.top);
}

/** A unit test: everything runs in this thread, so a hang is a bug found, failed in 10 s (not 120). */
function unit(name: string, body: () => void | Promise<void>): void {
  test(name, body, 10_000);
}

/** A join's fork of b: kept inline (-1) if no thief could want it, else forked (lib/forkjoin/join.ts). */
function lazyFork(host: World["host"], fn: Parameters<World["host"]["fork"]>[0], args: unknown[]): number {
  return host.keepsInline(fn, args) ? -1 : host.fork(fn, args);
}

/** Worker 0's count of tasks executed. */
function executed(world: World): number {
  return Atomics.load(world.status, StatusWords.executed);
}

unit("fork-join: in a pool of one, a lazy join keeps b inline with primitives, null and shared memory only", () => {
  const world = newWorld({ fns: [() => 1] });
  const sab = new SharedArrayBuffer(8);
  for (const args of [[], [1, "s", true, undefined, null, 2n], [sab], [new Int32Array(sab)]]) {
    assertEquals(lazyFork(world.host, fn(world, 0), args), -1, `inline: ${args.length} args`);
  }
  assertEquals(depth(world), 0, "nothing pushed");
  const objects = lazyFork(world.host, fn(world, 0), [1, { a: 1 }]);
  assert(objects >= 0, "an object: forked (b gets a copy made at the fork)");
  const buffer = lazyFork(world.host, fn(world, 0), [new Uint8Array(2)]);
  assert(buffer >= 0, "an unshared buffer: forked");
  assertEquals(depth(world), 2, "both pushed");
  // A function or a symbol cannot be kept inline, nor encoded: the fork's encoding refuses it.
  assert(thrown(() => lazyFork(world.host, fn(world, 0), [() => 1])) instanceof TypeError, "a function");
  assert(thrown(() => lazyFork(world.host, fn(world, 0), [Symbol("s")])) instanceof TypeError, "a symbol");
});

unit(
  "fork-join: a fork that is not lazy is pushed even with primitives; a lazy one with 2 workers only on a deep deque",
  () => {
    const world = newWorld({ fns: [() => 1], workers: 2 });
    const host = world.host;
    assert(host.fork(fn(world, 0), [1]) >= 0, "not lazy: pushed");
    assert(lazyFork(host, fn(world, 0), [2]) >= 0, "lazy, one task on the deque: pushed (a thief may want it)");
    assertEquals(depth(world), 2, "two on the deque");
    assertEquals(lazyFork(host, fn(world, 0), [3]), -1, "lazy, two older tasks on the deque: inline");
    assert(lazyFork(host, fn(world, 0), [{ x: 3 }]) >= 0, "but not with an object");
    assertEquals(depth(world), 3, "three on the deque");
    const one = newWorld({ fns: [() => 1] });
    assert(one.host.fork(fn(one, 0), [1]) >= 0, "a pool of one: not lazy, pushed");
  },
);

unit("fork-join: a fork's record names its task, FORK, UNSET latch, forker, root and root's id, QUEUED", () => {
  const world = newWorld({ fns: [() => 1, () => 2], workers: 2 });
  const root = submit(world, 0, []);
  const rootIndex = world.main.indexOf(root);
  world.main.fields.setId(rootIndex, 77);
  const fork = inRun(world, root, () => world.host.fork(fn(world, 1), [5]));
  const f = world.table.fields;
  const index = world.table.indexOf(fork);
  assertEquals(f.task(index), 1, "task");
  assertEquals(f.origin(index), Origin.FORK, "origin");
  assert(!latchIsSet(world.table.words, f.latchWord(index)), "latch unset");
  assertEquals(Atomics.load(world.table.words, f.latchWord(index)), UNSET, "UNSET");
  assertEquals(f.loadForker(index), 0, "forker");
  assertEquals(f.root(index), rootIndex, "root");
  assertEquals(f.id(index), 77, "its root's id");
  assertEquals(f.loadState(index), TaskState.QUEUED, "QUEUED");
  assertEquals(depth(world), 1, "pushed");
  const orphan = world.host.fork(fn(world, 1), [5]);
  assertEquals(f.root(world.table.indexOf(orphan)), -1, "outside a run: no root");
  assertEquals(f.id(world.table.indexOf(orphan)), -1, "and no id");
});

unit("fork-join: a fork with no free record, or whose arguments find no blocks, returns -1 and leaks nothing", () => {
  const world = newWorld({ fns: [() => 1], workers: 2, blocks: 2 });
  const before = world.table.accounting();
  assertEquals(world.host.fork(fn(world, 0), ["x".repeat(2000)]), -1, "no blocks: inline");
  const after = world.table.accounting();
  assertEquals(after.allocations - before.allocations, after.releases - before.releases, "its record freed");
  assertEquals(depth(world), 0, "nothing pushed");
  // Every record taken: the next fork finds none.
  while (world.main.allocate() !== -1) { /* take them all */ }
  let forks = 0;
  while (world.host.fork(fn(world, 0), [1]) >= 0) forks++;
  assertEquals(world.host.fork(fn(world, 0), [1]), -1, "no record: inline");
  assertEquals(depth(world), forks, "only the forks that got a record");
});

unit("fork-join: a join that pops b back runs it inline with its arguments, counts it, and frees its record", () => {
  const seen: unknown[] = [];
  const world = newWorld({ fns: [(a, b) => (seen.push([a, b]), `${a}${(b as { v: number }).v}`)], workers: 2 });
  const handle = world.host.fork(fn(world, 0), ["p", { v: 4 }]);
  const index = world.table.indexOf(handle);
  assertEquals(world.host.joinForked(handle), "p4", "b's value");
  assertEquals(seen, [["p", { v: 4 }]], "run once, with its arguments");
  assertEquals(executed(world), 1, "counted");
  assertFreed(world.table.fields.loadState(index));
  assertEquals(depth(world), 0, "popped");
  const flat = world.host.fork(fn(world, 0), ["q", 5]);
  seen.length = 0;
  assertEquals(world.host.joinForked(flat), "qundefined", "b's value");
  assertEquals(seen, [["q", 5]], "run with its primitive arguments (kept, not decoded)");
  assertEquals(executed(world), 2, "counted");
});

unit(
  "fork-join: b popped back that returns a promise is the async-fork TypeError; an aborted root's b is not run",
  () => {
    let runs = 0;
    const world = newWorld({ fns: [() => Promise.resolve(1), () => runs++], workers: 2 });
    const asyncFork = world.host.fork(fn(world, 0), []);
    const error = thrown(() => world.host.joinForked(asyncFork)) as Error;
    assert(error instanceof TypeError && /returned a promise/.test(error.message), String(error));
    const root = submit(world, 1, []);
    const fork = inRun(world, root, () => world.host.fork(fn(world, 1), [1]));
    world.main.fields.orFlags(world.main.indexOf(root), TaskFlags.ABORTED);
    const reason = inRun(world, root, () => thrown(() => world.host.joinForked(fork))) as Error;
    assertEquals(reason.name, "AbortError", "the abort's reason");
    assertEquals(runs, 0, "not run");
    assertFreed(world.table.fields.loadState(world.table.indexOf(fork)));
  },
);

unit("fork-join: inline() runs b unless the task that made it was aborted, and refuses a promise", () => {
  const world = newWorld({ fns: [() => 1], workers: 2 });
  assertEquals(world.host.inline((a) => (a as number) + 1, [1]), 2, "outside a run");
  const root = submit(world, 0, []);
  assertEquals(inRun(world, root, () => world.host.inline((a) => (a as number) * 3, [2])), 6, "in a run");
  assert(thrown(() => world.host.inline(() => Promise.resolve(1), [])) instanceof TypeError, "a promise");
  world.main.fields.orFlags(world.main.indexOf(root), TaskFlags.ABORTED | TaskFlags.TIMED_OUT);
  let runs = 0;
  const reason = inRun(world, root, () => thrown(() => world.host.inline(() => runs++, []))) as Error;
  assertEquals([reason.name, runs], ["TimeoutError", 0], "aborted: its reason, not run");
});

unit("fork-join: a join whose b a thief finished reads its value, or throws its error, from the record", () => {
  const world = newWorld({
    fns: [(x) => (x as number) * 2, () => {
      throw new RangeError("bad b");
    }],
    workers: 2,
  });
  const ok = world.host.fork(fn(world, 0), [21]);
  assertEquals(world.deque.pop(), ok, "taken, as a thief takes it");
  world.runner.execute(ok);
  assert(latchIsSet(world.table.words, world.table.fields.latchWord(world.table.indexOf(ok))), "latch set");
  assertEquals(world.host.joinForked(ok), 42, "its value");
  assertFreed(world.table.fields.loadState(world.table.indexOf(ok)));
  const bad = world.host.fork(fn(world, 1), []);
  assertEquals(world.deque.pop(), bad, "taken");
  world.runner.execute(bad);
  const error = thrown(() => world.host.joinForked(bad)) as Error;
  assertEquals([error.name, error.message], ["RangeError", "bad b"], "its error");
  assertEquals(executed(world), 2, "each counted once (by its runner)");
});

unit("fork-join: a join's wait runs newer forks of its own deque first, then pops b back", () => {
  const order: string[] = [];
  const world = newWorld({ fns: [(tag) => (order.push(tag as string), tag)], workers: 2 });
  const a = world.host.fork(fn(world, 0), ["a"]);
  const b = world.host.fork(fn(world, 0), ["b"]);
  assertEquals(world.host.joinForked(a), "a", "a's value");
  assertEquals(order, ["b", "a"], "b (newer) run by the runner first, then a inline");
  const bIndex = world.table.indexOf(b);
  assert(latchIsSet(world.table.words, world.table.fields.latchWord(bIndex)), "b finished through its latch");
  assertEquals(world.host.joinForked(b), "b", "b's value, from its record");
});

unit(
  "fork-join: a join whose b was stolen helps with a queued task (the search); not at the bound of async tasks",
  () => {
    const ran: unknown[] = [];
    let hook = (_: unknown) => {};
    const world = newWorld({
      fns: [(x) => (ran.push(x), hook(x), x), () => new Promise(() => {})],
      workers: 2,
      asyncBound: 1,
    });
    const fork = world.host.fork(fn(world, 0), ["b"]);
    assertEquals(world.deque.pop(), fork, "stolen");
    const queued = submit(world, 0, ["queued"]);
    world.levels.pushPatiently(queued, Level.normal);
    // The thief finishes b while the joiner runs the queued task: the queued task's function does it.
    hook = (x) => x === "queued" && void world.runner.execute(fork);
    assertEquals(world.host.joinForked(fork), "b", "b's value");
    assertEquals(ran, ["queued", "b"], "the queued task ran in the wait");
    assertEquals(outcomeOf(world, queued).value, "queued", "and finished");
    // At the bound: the search is skipped, the queued task is left for the loop; the pool stopping ends it.
    world.runner.execute(submit(world, 1, []));
    assertEquals(world.runner.full(), true, "at the bound");
    const fork2 = world.host.fork(fn(world, 0), ["b2"]);
    assertEquals(world.deque.pop(), fork2, "stolen");
    const left = submit(world, 0, ["left"]);
    world.levels.pushPatiently(left, Level.normal);
    Atomics.store(world.memory.control, ControlWords.lifecycle, 1);
    const error = thrown(() => world.host.joinForked(fork2)) as Error;
    assert(/pool is stopping/.test(error.message), String(error));
    assertEquals(world.main.fields.loadState(world.main.indexOf(left)), TaskState.QUEUED, "not taken at the bound");
  },
);

unit("fork-join: a fork's arguments cannot be moved, and its record holds their copy made at the fork", () => {
  const world = newWorld({ fns: [(o) => (o as { n: number }).n], workers: 2 });
  const arg = { n: 1 };
  const fork = world.host.fork(fn(world, 0), [arg]);
  arg.n = 2;
  assertEquals(world.deque.pop(), fork, "stolen");
  world.runner.execute(fork);
  assertEquals(world.host.joinForked(fork), 1, "the copy made at the fork");
  const error = thrown(() => world.host.fork(fn(world, 0), [move(new Uint8Array(1))])) as Error;
  assert(error instanceof TypeError && /cannot be moved/.test(error.message), String(error));
});

unit("fork-join: the host answers task ids, tasks, built-ins and the running task's context", () => {
  const world = newWorld({ fns: [() => 1, () => 2], workers: 2 });
  assertEquals(world.host.taskId(fn(world, 1)), 1, "taskId");
  assertEquals(world.host.task(1), fn(world, 1), "task");
  assertEquals(typeof world.host.builtin(Object.keys(BUILTINS)[0]), "function", "a built-in");
  assertEquals(world.host.context(), undefined, "no task running");
  const root = submit(world, 0, []);
  world.main.fields.setId(world.main.indexOf(root), 9);
  assertEquals(inRun(world, root, () => world.host.context()?.id), 9, "the running task's id");
  const asked = world.host.poolHandle();
  const request = world.posted.at(-1)?.message;
  assertEquals(request?.type, "handle-request", "a request posted to the owner");
  void asked.catch(() => {});
  // Answered, as the owner would: a request on its way holds this thread's event loop (a process-wide count
  // on Bun, which runs every test file in one context: left held, it kept the next file's loops running).
  world.handles.reply({ type: "handle-reply", id: request?.id as number, error: { name: "Error", message: "none" } });
});

unit("fork-join: a forced task's lowered guard stays lowered across its fork and its join (entered, then left)", () => {
  const world = newWorld({ fns: [() => 1], workers: 2 });
  const guard = world.guard;
  guard.hold(12345);
  guard.leave();
  assert(guard.lowered, "lowered in the forced task's code");
  const fork = world.host.fork(fn(world, 0), [1]);
  assert(guard.lowered, "lowered again after the fork");
  assertEquals(world.host.joinForked(fork), 1, "joined");
  assert(guard.lowered, "lowered again after the join");
  guard.release(12345);
});

unit("fork-join: a fork is outstanding until joined, whoever ran it; then nothing is left to repair", () => {
  const world = newWorld({ fns: [() => 1], workers: 2 });
  const popped = world.host.fork(fn(world, 0), []);
  assertEquals(world.marks.cutShort(), true, "outstanding: a cut would repair it");
  world.host.joinForked(popped);
  assertEquals(world.marks.cutShort(), false, "joined (popped back)");
  const stolen = world.host.fork(fn(world, 0), []);
  assertEquals(world.deque.pop(), stolen, "taken");
  world.runner.execute(stolen);
  assertEquals(world.marks.cutShort(), true, "finished, not joined: outstanding");
  world.host.joinForked(stolen);
  assertEquals(world.marks.cutShort(), false, "joined (finished by a thief)");
});

unit("fork-join: a full deque refuses the fork (b runs inline), and its record is freed", () => {
  const world = newWorld({ fns: [() => 1], workers: 2 });
  const handles: number[] = [];
  for (;;) {
    const h = world.host.fork(fn(world, 0), [{}]);
    if (h < 0) break;
    handles.push(h);
  }
  assertEquals(handles.length, 8, "the deque's capacity");
  const { allocations, releases } = world.table.accounting();
  assertEquals(allocations - releases, 8, "only the pushed forks hold records");
  for (const h of handles.reverse()) world.host.joinForked(h);
  assertEquals(world.marks.cutShort(), false, "nothing left to repair");
});

unit("fork-join: no blocks for the arguments: the fork's record is freed and no placing mark is left", () => {
  const world = newWorld({ fns: [() => 1], workers: 2, blocks: 2 });
  assertEquals(world.host.fork(fn(world, 0), ["x".repeat(2000)]), -1, "inline");
  assertEquals(world.marks.cutShort(), false, "no mark left to repair");
  assertEquals(world.markWords[MarkWords.pushing], -1, "the placing mark cleared");
});

unit("fork-join: b popped back sees its object arguments as they were at the fork", () => {
  const world = newWorld({ fns: [(o) => (o as { n: number }).n], workers: 2 });
  const arg = { n: 1 };
  const fork = world.host.fork(fn(world, 0), [arg]);
  arg.n = 2;
  assertEquals(world.host.joinForked(fork), 1, "the copy made at the fork");
});

unit("fork-join: a fork is new work: a worker about to sleep sees the jobs event counter move", () => {
  const world = newWorld({ fns: [() => 1], workers: 2 });
  const words = world.memory.sleep.words;
  // An odd jobs event counter: a worker announced it is getting sleepy (spec/SleepWake.tla).
  Atomics.store(words, SleepWords.counters, 1 << 10);
  world.host.fork(fn(world, 0), [{}]);
  assertEquals(Atomics.load(words, SleepWords.counters) >>> 10, 2, "bumped to even by the fork");
});

unit("fork-join: b popped back that throws is counted as executed, and its record freed", () => {
  const world = newWorld({
    fns: [() => {
      throw new SyntaxError("b threw");
    }],
    workers: 2,
  });
  const fork = world.host.fork(fn(world, 0), []);
  const error = thrown(() => world.host.joinForked(fork)) as Error;
  assertEquals([error.name, error.message], ["SyntaxError", "b threw"], "its error");
  assertEquals(executed(world), 1, "counted");
  assertFreed(world.table.fields.loadState(world.table.indexOf(fork)));
  assertEquals(world.marks.cutShort(), false, "nothing left to repair");
});

unit("fork-join: a joined fork whose result was stashed (its blocks given back while another waited) reads it", () => {
  const world = newWorld({ fns: [(n) => "r".repeat(n as number)], workers: 2, blocks: 4 });
  const first = world.host.fork(fn(world, 0), [400]);
  const second = world.host.fork(fn(world, 0), [400]);
  assertEquals(world.deque.pop(), second, "taken");
  assertEquals(world.deque.pop(), first, "taken");
  world.runner.execute(first);
  world.runner.execute(second);
  assertEquals(world.host.joinForked(first), "r".repeat(400), "the first's, from its stash");
  assertEquals(world.host.joinForked(second), "r".repeat(400), "the second's, from its record");
  assertEquals(world.marks.cutShort(), false, "nothing left to repair");
});

unit(
  "fork-join: fork and join raise the guard for their pool steps; b popped back runs with it down, as user code",
  () => {
    const seen: [string, boolean][] = [];
    const world = newWorld({ fns: [() => seen.push(["b", world.guard.lowered])], workers: 2 });
    const guard = world.guard;
    guard.hold(999);
    guard.leave();
    const spy = (name: "checkPushing" | "checkJoin") => {
      const original = world.marks[name].bind(world.marks);
      world.marks[name] = () => {
        seen.push([name, guard.lowered]);
        original();
      };
    };
    spy("checkPushing");
    spy("checkJoin");
    const bump = world.stats.bump.bind(world.stats);
    world.stats.bump = (at) => {
      seen.push(["bump", guard.lowered]);
      bump(at);
    };
    const fork = world.host.fork(fn(world, 0), [{}]);
    world.host.joinForked(fork);
    assertEquals(
      seen,
      [["checkPushing", false], ["checkJoin", false], ["b", true], ["bump", false]],
      "up in pool steps, down in b",
    );
    assert(guard.lowered, "left down after the join");
    guard.release(999);
  },
);

unit("fork-join: a lazy join reads its deque's depth as bottom less top: stolen tasks do not count", () => {
  const world = newWorld({ fns: [() => 1], workers: 2 });
  world.host.fork(fn(world, 0), [{}]);
  world.host.fork(fn(world, 0), [{}]);
  const stealer = world.memory.stealers[0];
  assert(stealer.steal() >= 0 && stealer.steal() >= 0, "both stolen: the deque is empty, its ends at 2");
  assert(lazyFork(world.host, fn(world, 0), [1]) >= 0, "lazy, empty deque: pushed (a thief may want it)");
});

unit("fork-join: a fork first repairs a placing mark left by a fork cut short (its record freed)", () => {
  const world = newWorld({ fns: [() => 1], workers: 2 });
  const stale = world.table.allocate();
  world.marks.setPushing(stale);
  assert(world.host.fork(fn(world, 0), [{}]) >= 0, "forked");
  assertFreed(world.table.fields.loadState(world.table.indexOf(stale)));
});

unit("fork-join: b popped back throws its own error object (run inline, not through the record)", () => {
  class Mine extends Error {}
  const thrownByB = new Mine("mine");
  const world = newWorld({
    fns: [() => {
      throw thrownByB;
    }],
    workers: 2,
  });
  const fork = world.host.fork(fn(world, 0), [{}]);
  assert(thrown(() => world.host.joinForked(fork)) === thrownByB, "the very object b threw");
});

unit("fork-join: a join's wait hands back a task whose buffer has not arrived (it cannot wait inside the join)", () => {
  const world = newWorld({ fns: [(x) => x], workers: 2 });
  const fork = world.host.fork(fn(world, 0), ["b"]);
  assertEquals(world.deque.pop(), fork, "stolen");
  const missing = submit(
    world,
    0,
    [new Int32Array(new SharedArrayBuffer(4))],
    0,
    new Encoder({ shareBuffer: () => 40 }),
  );
  world.levels.pushPatiently(missing, Level.normal);
  let taken = false;
  const findWork = world.search.findWork.bind(world.search);
  world.search.findWork = () => {
    const work = findWork();
    if (work === missing) {
      // The second time it is found (handed back the first): the thief finishes b meanwhile.
      if (taken) world.runner.execute(fork);
      taken = true;
    }
    return work;
  };
  assertEquals(world.host.joinForked(fork), "b", "joined");
  assertEquals(stateOf(world, missing), TaskState.QUEUED, "handed back, QUEUED");
});

unit("fork-join: b popped back whose arguments cannot be decoded throws, frees its record, leaves no mark", () => {
  const world = newWorld({ fns: [(o) => o], workers: 2 });
  const fork = world.host.fork(fn(world, 0), [{ a: 1 }]);
  const index = world.table.indexOf(fork);
  world.table.payloadBytes(index).fill(0xff, world.table.payloadStart(index), world.table.payloadStart(index) + 2);
  thrown(() => world.host.joinForked(fork));
  assertFreed(world.table.fields.loadState(index));
  assertEquals(world.markWords[MarkWords.consuming], -1, "no consuming mark left");
  assertEquals(world.marks.cutShort(), false, "nothing left to repair");
});

unit(
  "fork-join: a fork cut short at any call or shared access of its placement strands no record or block",
  () => {
    // Each argument list in turn: inline, in overflow blocks, a deferred run (the world's deferFrom) in blocks.
    for (const args of [[{ x: 1 }], ["x".repeat(300)], [new Uint8Array(4096)]]) {
      for (let n = 0;; n++) {
        const world = newWorld({ fns: [() => 1], workers: 2, deferFrom: 1024 });
        const table = world.table;
        // A throw before any of these calls, or any shared access: a stack overflow there.
        const calls = [world.marks, table, table.fields, world.forks, world.deque];
        const run = cutRun(n, () => world.host.fork(fn(world, 0), args), calls);
        if (!run.cut) {
          assert(run.value! >= 0 && n > 20, `placed whole after ${n} cut points`);
          break;
        }
        // The worker's top of the loop.
        if (world.marks.cutShort()) world.runner.repairInterrupted();
        // A fork published before the cut (its deque push done) is in the deque, an orphan: taken, freed.
        const published = world.deque.pop();
        if (published >= 0) table.releaseHandle(published);
        table.flushCache();
        assertEquals(idleAccountingErrors(recordCensus(world.main), false), [], `${args.length} cut at ${n}`);
        assertEquals(recordCensus(world.main).cached, {}, `cut at ${n}: no record marked cached and in no cache`);
      }
    }
  },
);
