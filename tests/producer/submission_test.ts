/**
 * `Submitter`, the placing of submitted tasks (`lib/producer/submission.ts`), on one thread with a real
 * pool memory, task table, ledger and level queues: the words a placed task's record holds when its QUEUED
 * store publishes it, its queue and the sleeper's wake, the directed post of a task that moves buffers,
 * the backlog's order (nothing overtakes it) and its feed, the fair share of records, the placing note of
 * a producer in another thread, how far `stage` says a placement got, and the encoder of a nested
 * submission. The pool's suites reach these through workers; these pin the values, which StrykerJS changed
 * without the pool's suites noticing (issue 47, "Mutants nobody here chose").
 *
 * No worker runs: a task "runs" when the test takes its handle from its queue. Nothing depends on timing.
 */
import { Encoder } from "../../lib/codec/codec.ts";
import { move } from "../../lib/codec/move.ts";
import type { TaskStamps } from "../../lib/metrics.ts";
import { resolveOptions } from "../../lib/options.ts";
import { type Entry, Settled, TaskLedger } from "../../lib/producer/ledger.ts";
import type { Backlog } from "../../lib/producer/backlog.ts";
import { type Placement, Submitter } from "../../lib/producer/submission.ts";
import { SleepWords } from "../../lib/protocol/layout.ts";
import { Level, type LevelIndex } from "../../lib/protocol/levels.ts";
import { PoolMemory } from "../../lib/protocol/memory.ts";
import { AWAKE, SLEEPING } from "../../lib/protocol/sleep.ts";
import { Origin, TaskFlags, TaskState, TaskTable } from "../../lib/record/task.ts";
import { cutAt } from "../protocol/_cut_at.ts";
import { assert, assertEquals, test } from "../_test.ts";

/** The worlds a test made: their ledgers hold the event loop while tasks are pending (none runs here). */
const made: { ledger: TaskLedger }[] = [];

/** `test`, letting go of every world it made when it ends (else Node's runner waits for their timers). */
function worldTest(name: string, fn: () => void | Promise<void>): void {
  test(name, async () => {
    try {
      await fn();
    } finally {
      for (const w of made.splice(0)) w.ledger.releaseProcess();
    }
  });
}

/** A pool memory of one worker (none runs) and `taskCapacity` records, and a submitter on it. */
function world(options: {
  taskCapacity?: number;
  share?: () => number;
  origin?: number;
  placing?: boolean;
  stamps?: boolean;
  noProgress?: boolean;
} = {}) {
  const shape = resolveOptions({ workers: 1, producers: 2, taskCapacity: options.taskCapacity ?? 8 }).shape;
  const memory = PoolMemory.create(shape);
  TaskTable.init(memory);
  const table = new TaskTable(memory);
  const levels = memory.levels();
  const ledger = new TaskLedger(shape.taskCapacity, undefined);
  made.push({ ledger });
  const calls: string[] = [];
  const directed: { worker: number; handle: number; moved: ArrayBuffer[] }[] = [];
  const placement: Placement = {
    placed: (entry) => void calls.push(`placed ${entry.seq}`),
    pickWorker: () => 0,
    direct: (worker, handle, moved) => void directed.push({ worker, handle, moved }),
  };
  const stamped: [number, number][] = [];
  const watched: number[] = [];
  const placingWords = new Int32Array(4).fill(-1);
  const shared: SharedArrayBuffer[] = [];
  const submitter = new Submitter({
    table,
    levels,
    sleep: memory.sleep,
    ledger,
    shareBuffer: (buffer) => shared.push(buffer) - 1,
    placement,
    stamps: options.stamps
      ? { submitted: (index: number, at: number) => stamped.push([index, at]) } as unknown as TaskStamps
      : undefined,
    progress: options.noProgress ? undefined : { watch: (index) => void watched.push(index) },
    producer: options.share === undefined && options.origin === undefined && !options.placing ? undefined : {
      origin: options.origin ?? Origin.MAIN,
      moves: "transfer",
      share: options.share ?? (() => Infinity),
      placing: options.placing ? { words: placingWords, at: 2 } : undefined,
    },
  });
  return {
    memory,
    table,
    levels,
    ledger,
    submitter,
    calls,
    directed,
    stamped,
    watched,
    placingWords,
    shared,
    capacity: shape.taskCapacity,
  };
}

type World = ReturnType<typeof world>;

/** A task submitted as admission does (entry opened, arguments encoded, enqueued): its entry. */
function submit(w: World, args: unknown[] = [1, 2], level: LevelIndex = Level.normal, taskId = 3): Entry {
  const encoder = w.submitter.encode(args);
  const entry = w.ledger.open("t", taskId, () => {}, () => {});
  entry.level = level;
  w.submitter.enqueue(entry, encoder);
  return entry;
}

/** The handles queued at `level`, taken as a worker would. */
function takeAll(w: World, level: number = Level.normal): number[] {
  const handles: number[] = [];
  for (let h = w.levels.queues[level].pop(); h !== -1; h = w.levels.queues[level].pop()) handles.push(h);
  return handles;
}

/** Finishes the task of `handle` as the completion reader would: settled, its record freed, the backlog fed. */
function complete(w: World, handle: number): void {
  const index = w.table.indexOf(handle);
  const entry = w.ledger.placed[index]!;
  w.ledger.placed[index] = undefined;
  w.ledger.settle(entry, Settled.VALUE, 0);
  w.table.release(index);
  w.submitter.feed();
}

/** A task's control (cancellation.ts) as placing reads it. */
function control(watchStart: boolean, force: boolean): Entry["control"] {
  return { watchStart, force, detach: () => {} } as unknown as Entry["control"];
}

/** Worker 0 counted as sleeping, as its idle path leaves it. */
function asleep(w: World): void {
  const jec = w.memory.sleep.getSleepy();
  assert(w.memory.sleep.fallAsleep(0, jec), "worker 0 asleep");
}

function workerState(w: World): number {
  return Atomics.load(w.memory.sleep.words, SleepWords.state(0));
}

worldTest(
  "submission: a placed task's record holds its task, origin, id and level, QUEUED, and its handle is in its level's queue",
  () => {
    const w = world({ origin: 5 });
    asleep(w);
    const entry = submit(w, [1, 2], Level.normal, 7);
    assertEquals(w.submitter.stage, 2, "done");
    assert(entry.handle !== -1, "a handle");
    const index = w.table.indexOf(entry.handle);
    assertEquals({
      state: w.table.fields.loadState(index),
      task: w.table.fields.task(index),
      origin: w.table.fields.origin(index),
      id: w.table.fields.id(index),
      level: w.table.fields.level(index),
      flags: w.table.fields.loadFlags(index),
    }, {
      state: TaskState.QUEUED,
      task: 7,
      origin: 5,
      id: entry.seq,
      level: Level.normal,
      flags: 0,
    }, "its record");
    assertEquals(w.ledger.placed[index], entry, "placed by its index");
    assertEquals(workerState(w), AWAKE, "the sleeper woken");
    assertEquals(takeAll(w), [entry.handle], "queued at normal");
    assertEquals(w.calls, [], "no control: placed() not called");
    for (const level of [Level.high, Level.low]) {
      const e = submit(w, [1], level);
      assertEquals(w.table.fields.level(w.table.indexOf(e.handle)), level, `level ${level} in the record`);
      assertEquals(takeAll(w, level), [e.handle], `queued at ${level}`);
    }
  },
);

worldTest("submission: the record's id is the entry's sequence number, less its sign bit", () => {
  const w = world();
  const encoder = w.submitter.encode([1]);
  const entry = w.ledger.open("t", 0, () => {}, () => {});
  (entry as { seq: number }).seq = 0x80000005;
  w.submitter.enqueue(entry, encoder);
  assertEquals(w.table.fields.id(w.table.indexOf(entry.handle)), 5, "0x80000005 & 0x7fffffff");
});

worldTest(
  "submission: a control, a progress handler and moved buffers each set their flag before the QUEUED store",
  () => {
    const w = world();
    const cases: [Partial<Entry>, number][] = [
      [{ control: control(true, false) }, TaskFlags.WATCH_START],
      [{ control: control(false, true) }, TaskFlags.FORCE],
      [{ control: control(true, true) }, TaskFlags.WATCH_START | TaskFlags.FORCE],
      [{ control: control(false, false) }, 0],
      [{ onProgress: () => {} }, TaskFlags.PROGRESS],
      [{ onProgress: () => {}, control: control(true, false) }, TaskFlags.PROGRESS | TaskFlags.WATCH_START],
    ];
    for (const [fields, flags] of cases) {
      const encoder = w.submitter.encode([1]);
      const entry = w.ledger.open("t", 0, () => {}, () => {});
      Object.assign(entry, fields);
      w.submitter.enqueue(entry, encoder);
      const index = w.table.indexOf(entry.handle);
      assertEquals(w.table.fields.loadFlags(index), flags, `flags of ${JSON.stringify(Object.keys(fields))}`);
      assertEquals(w.watched.includes(index), fields.onProgress !== undefined, "watched only with a handler");
      assertEquals(w.calls.at(-1) === `placed ${entry.seq}`, fields.control !== undefined, "placed() with a control");
      takeAll(w);
      complete(w, entry.handle);
      w.watched.length = 0;
    }
  },
);

worldTest(
  "submission: a task that moves buffers is posted to its worker (DIRECTED, its worker word), not pushed, and every sleeper woken",
  () => {
    const w = world();
    asleep(w);
    const buffer = new ArrayBuffer(8);
    const encoder = w.submitter.encode([move(buffer)]);
    const entry = w.ledger.open("t", 0, () => {}, () => {});
    entry.moved = [buffer];
    entry.control = control(false, false);
    w.submitter.enqueue(entry, encoder);
    const index = w.table.indexOf(entry.handle);
    assertEquals(w.table.fields.loadFlags(index), TaskFlags.DIRECTED, "DIRECTED");
    assertEquals(w.table.fields.loadWorker(index), 0, "its worker");
    assertEquals(w.table.fields.loadState(index), TaskState.QUEUED, "published");
    assertEquals(w.directed.map((d) => [d.worker, d.handle, d.moved.length]), [[0, entry.handle, 1]], "posted");
    assertEquals(entry.moved, undefined, "the buffers left the entry");
    assertEquals(w.levels.queued, 0, "not pushed");
    assertEquals(workerState(w), AWAKE, "woken");
    assertEquals(w.submitter.stage, 2, "done");
    assertEquals(w.calls, [`placed ${entry.seq}`], "placed() with a control");
  },
);

worldTest("submission: with metrics, a placed task's submission time goes to its record's stamp", () => {
  const w = world({ stamps: true });
  const encoder = w.submitter.encode([1]);
  const entry = w.ledger.open("t", 0, () => {}, () => {});
  entry.submittedAt = 1234.5;
  w.submitter.enqueue(entry, encoder);
  assertEquals(w.stamped, [[w.table.indexOf(entry.handle), 1234.5]], "stamped");
});

worldTest(
  "submission: out of records a task waits in the backlog, and nothing overtakes it; feed places the oldest first",
  () => {
    const w = world({ taskCapacity: 2 });
    const a = submit(w, [1]);
    const b = submit(w, [2]);
    const c = submit(w, [3]);
    assertEquals([a.handle !== -1, b.handle !== -1, c.handle], [true, true, -1], "the third waits");
    assertEquals(w.submitter.backlogLength, 1, "in the backlog");
    assertEquals(w.submitter.stage, 2, "backlogged is done");
    assertEquals([...w.submitter.waiting()], [c], "waiting");
    const queued = takeAll(w);
    assertEquals(queued, [a.handle, b.handle], "a and b queued");
    // A record frees: c goes in at the feed.
    complete(w, a.handle);
    assert(c.handle !== -1, "c placed by the feed");
    assertEquals(w.submitter.backlogLength, 0, "backlog empty");
    assertEquals(takeAll(w), [c.handle], "c queued");
    // Two wait; one record frees: only the older is placed, and a new submission waits behind the younger.
    const d = submit(w, [4]);
    const e = submit(w, [5]);
    assertEquals([d.handle, e.handle], [-1, -1], "both wait");
    w.table.release(w.table.indexOf(b.handle));
    w.ledger.placed[w.table.indexOf(b.handle)] = undefined;
    const f = submit(w, [6]);
    assertEquals(
      [d.handle, e.handle, f.handle],
      [-1, -1, -1],
      "f does not overtake the backlog, though a record is free",
    );
    w.submitter.feed();
    assert(d.handle !== -1 && e.handle === -1 && f.handle === -1, "the feed placed d, the oldest");
    assertEquals([...w.submitter.waiting()], [e, f], "e, f wait in order");
    // A settled backlog entry (aborted while it waited) is dropped by the feed, not placed.
    w.ledger.settle(e, Settled.ABORTED, new Error("aborted"));
    complete(w, c.handle);
    assertEquals([e.handle, f.handle !== -1], [-1, true], "e skipped, f placed");
    assertEquals(w.submitter.backlogLength, 0, "empty");
    // Their arguments arrive intact from the backlog's bytes.
    assertEquals(w.table.fields.payloadLength(w.table.indexOf(f.handle)), w.submitter.encode([6]).length, "f's bytes");
  },
);

worldTest(
  "submission: a producer keeps to its share of records while another waits; starved means it may take one",
  () => {
    let share = 2;
    const w = world({ taskCapacity: 8, share: () => share });
    const a = submit(w, [1]);
    const b = submit(w, [2]);
    const c = submit(w, [3]);
    assertEquals([a.handle !== -1, b.handle !== -1, c.handle], [true, true, -1], "two of its share; the third waits");
    assertEquals(w.submitter.starved, false, "at its share: not starved (it waits for its own completions)");
    share = 3;
    assertEquals(w.submitter.starved, true, "below its share with a backlog: starved");
    w.submitter.feed();
    assert(c.handle !== -1, "the feed placed it within the new share");
    assertEquals(w.submitter.starved, false, "no backlog: not starved");
    share = 1;
    const d = submit(w, [4]);
    assertEquals(d.handle, -1, "over its share");
    share = Infinity;
    w.submitter.feed();
    assert(d.handle !== -1, "placed once nobody else waits");
  },
);

worldTest("submission: a payload that finds no blocks gives its record back and waits in the backlog", () => {
  const w = world({ taskCapacity: 4 });
  const max = w.table.maxPayloadBytes();
  const big = new Uint8Array(Math.floor(max * 0.7));
  const a = submit(w, [big]);
  assert(a.handle !== -1, "the first fits");
  const b = submit(w, [big]);
  assertEquals(b.handle, -1, "no blocks for the second: backlog");
  let used = 0;
  for (let i = 0; i < w.capacity; i++) if (w.table.fields.loadState(i) === TaskState.QUEUED) used++;
  assertEquals(used, 1, "its record given back");
  // Given back: every other record can be taken (none held by the failed placement).
  const taken: number[] = [];
  for (let h = w.table.allocate(); h !== -1; h = w.table.allocate()) taken.push(h);
  assertEquals(taken.length, w.capacity - 1, "every record but a's free");
  for (const h of taken) w.table.release(w.table.indexOf(h));
  takeAll(w);
  complete(w, a.handle);
  assert(b.handle !== -1, "placed once the blocks came back");
});

worldTest(
  "submission: a producer in another thread notes the handle it places from before the QUEUED store to after the push",
  () => {
    const w = world({ placing: true, origin: 2 });
    const seen: number[] = [];
    const realPush = w.levels.pushPatiently.bind(w.levels);
    w.levels.pushPatiently = (handle, level) => {
      seen.push(w.placingWords[2]);
      const index = w.table.indexOf(handle);
      assertEquals(w.table.fields.loadState(index), TaskState.QUEUED, "published before the push");
      realPush(handle, level);
    };
    const entry = submit(w);
    assertEquals(seen, [entry.handle], "noted at the push");
    assertEquals(w.placingWords[2], -1, "cleared after it");
    assertEquals([w.placingWords[0], w.placingWords[1], w.placingWords[3]], [-1, -1, -1], "only its own word");
  },
);

worldTest(
  "submission: stage says how far a placement got: 0 before it is published, 1 pushed and not told, 2 done",
  () => {
    for (let n = 0;; n++) {
      const w = world();
      asleep(w);
      const encoder = w.submitter.encode([1, 2]);
      const entry = w.ledger.open("t", 0, () => {}, () => {});
      if (!cutAt(n, () => w.submitter.enqueue(entry, encoder))) {
        assertEquals(w.submitter.stage, 2, "whole: done");
        assert(n > 3, `cut points: ${n}`);
        break;
      }
      const queued = w.levels.queues[Level.normal].published === entry.handle && entry.handle !== -1;
      const stage = w.submitter.stage;
      if (stage === 0) assertEquals(workerState(w), SLEEPING, `cut at ${n}: stage 0, nobody told`);
      if (stage === 1) {
        // (Cut inside the wake, the sleeper may be woken already: the repair's wake is one more.)
        assert(queued || w.levels.queued === 1, `cut at ${n}: stage 1, published`);
      }
      if (stage === 2) assertEquals(workerState(w), AWAKE, `cut at ${n}: stage 2, told`);
    }
  },
);

worldTest(
  "submission: a nested encode (a getter that submits) gets its own encoder; the outer's bytes stay its own",
  () => {
    const w = world();
    let inner: Encoder | undefined;
    const outer = w.submitter.encode([{
      get x() {
        inner = w.submitter.encode(["inner", 42]);
        return "outer";
      },
    }]);
    assert(inner !== undefined && inner !== outer, "its own encoder");
    const innerBytes = inner.snapshot();
    const outerBytes = outer.snapshot();
    assert(
      innerBytes.length !== outerBytes.length || innerBytes.some((b, i) => b !== outerBytes[i]),
      "different bytes",
    );
    // After the outer encode, the next one uses the submitter's own encoder again.
    assertEquals(w.submitter.encode([1]), outer, "the shared encoder again");
    assertEquals(w.submitter.encode([2]), outer, "and again");
    // A throwing getter leaves the submitter ready too.
    let threw = false;
    try {
      w.submitter.encode([{
        get x() {
          throw new Error("getter");
        },
      }]);
    } catch {
      threw = true;
    }
    assert(threw, "the getter's throw");
    assertEquals(w.submitter.encode([3]), outer, "the shared encoder after a throw");
    // A broadcast's encode refuses move().
    let refused = false;
    try {
      w.submitter.encode([move(new ArrayBuffer(4))], { refuse: "no moves here" });
    } catch (error) {
      refused = /no moves here/.test(String(error));
    }
    assert(refused, "refused with the caller's words");
  },
);

worldTest(
  "submission: a directed task's stage: 0 until it is posted, then at least 1 (a repair must not free a posted record)",
  () => {
    for (let n = 0;; n++) {
      const w = world();
      asleep(w);
      const buffer = new ArrayBuffer(8);
      const encoder = w.submitter.encode([move(buffer)]);
      const entry = w.ledger.open("t", 0, () => {}, () => {});
      entry.moved = [buffer];
      const cut = cutAt(n, () => w.submitter.enqueue(entry, encoder));
      const posted = w.directed.length === 1;
      assertEquals(w.submitter.stage === 0, !posted, `cut at ${n}: stage ${w.submitter.stage}, posted ${posted}`);
      if (!cut) {
        assertEquals(w.submitter.stage, 2, "whole: done");
        assert(n > 3, `cut points: ${n}`);
        break;
      }
    }
  },
);

/** The submitter's backlog (private: what its trim timer gives back is seen only in its buffer). */
function backlogOf(w: World): Backlog {
  return (w.submitter as unknown as { backlog: Backlog }).backlog;
}

/** Resolves once `check()` holds, awaiting macrotasks; fails (a hang, with `what`) after 10 s. */
async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`hang: ${what} not seen in 10 s`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** A backlog grown past 1 MiB by large arguments, then emptied: every task completed (pending 0). */
function grownAndEmptied(w: World): number {
  submit(w, [1]);
  submit(w, [2]);
  const big = new Uint8Array(300_000);
  for (let i = 0; i < 5; i++) submit(w, [big]);
  assertEquals(w.submitter.backlogLength, 5, "five wait for the two records");
  const grown = backlogOf(w).bytes.length;
  assert(grown > 1 << 20, `grown to ${grown}`);
  for (let round = 0; w.ledger.pending > 0; round++) {
    assert(round < 10, "every task placed in turn");
    for (const handle of takeAll(w)) complete(w, handle);
  }
  return grown;
}

worldTest(
  "submission: an emptied grown backlog is kept for the next burst, given back once the pool stays idle, at once by dispose()",
  async () => {
    const w = world({ taskCapacity: 2 });
    const grown = grownAndEmptied(w);
    assertEquals(backlogOf(w).bytes.length, grown, "kept after the burst");
    await until(() => backlogOf(w).bytes.length < grown, "the idle trim");
    assert(backlogOf(w).bytes.length <= 1 << 20, "given back");
    // Not idle when the timer fires: kept.
    const busy = world({ taskCapacity: 2 });
    const again = grownAndEmptied(busy);
    const task = submit(busy, [1]);
    await until(() => (busy.submitter as unknown as { cancelTrim?: unknown }).cancelTrim === undefined, "the timer");
    assertEquals(backlogOf(busy).bytes.length, again, "a task pending when the timer fired: kept");
    takeAll(busy);
    complete(busy, task.handle);
    await until(() => backlogOf(busy).bytes.length < again, "the next idle trim");
    // dispose(): at once.
    const disposed = world({ taskCapacity: 2 });
    const third = grownAndEmptied(disposed);
    assertEquals(backlogOf(disposed).bytes.length, third, "kept");
    disposed.submitter.dispose();
    assert(backlogOf(disposed).bytes.length < third, "given back at once");
    assertEquals(
      (disposed.submitter as unknown as { cancelTrim?: unknown }).cancelTrim,
      undefined,
      "its timer cancelled",
    );
  },
);

worldTest(
  "submission: the owner's producer by default takes every record: a backlog with records it holds below all is starved",
  () => {
    const w = world({ taskCapacity: 2 });
    submit(w, [1]);
    submit(w, [2]);
    assertEquals(w.submitter.starved, false, "no backlog");
    submit(w, [3]);
    assertEquals(w.submitter.starved, true, "a backlog, and no share to keep to");
    w.submitter.clear();
    assertEquals([w.submitter.backlogLength, [...w.submitter.waiting()].length], [0, 0], "clear() forgets the backlog");
    assertEquals(w.submitter.starved, false, "nothing waits");
  },
);

worldTest(
  "submission: nested encodes, two in one argument list, each get their own encoder; shared buffers are registered in each",
  () => {
    const w = world();
    const inner: Encoder[] = [];
    const sab = new SharedArrayBuffer(8);
    const outer = w.submitter.encode([
      {
        get a() {
          inner.push(w.submitter.encode([new Int32Array(sab)]));
          return 1;
        },
      },
      {
        get b() {
          inner.push(w.submitter.encode(["second"]));
          return 2;
        },
      },
    ]);
    assertEquals(inner.length, 2, "two nested");
    assert(inner[0] !== outer && inner[1] !== outer && inner[0] !== inner[1], "each its own encoder");
    assertEquals(w.shared, [sab], "the nested encode registered the shared buffer");
    // The outer's bytes are its own: placed, its record holds exactly the bytes of the same arguments.
    const expected = world().submitter.encode([{ a: 1 }, { b: 2 }]).snapshot();
    assertEquals([...outer.snapshot()], [...expected], "the outer's bytes");
  },
);

worldTest("submission: the scratch encoder is trimmed once nothing is pending, not before", () => {
  const w = world();
  const big = new Uint8Array(300_000);
  const encoder = w.submitter.encode([big]);
  const a = w.ledger.open("t", 0, () => {}, () => {});
  w.submitter.enqueue(a, encoder);
  const length = encoder.length;
  assert(length > 0, "holds its last encoding");
  // Another task pending, encoded by a fresh encoder (as a nested submission's is), completes first.
  const b = w.ledger.open("t", 0, () => {}, () => {});
  w.submitter.enqueue(b, new Encoder());
  takeAll(w);
  complete(w, b.handle);
  assertEquals(encoder.length, length, "a task pending: not trimmed");
  complete(w, a.handle);
  assertEquals(encoder.length, 0, "nothing pending: trimmed");
  void big;
});

worldTest("submission: placing writes a task's worker word only for a directed task", () => {
  const w = world();
  const e = submit(w, [1]);
  const index = w.table.indexOf(e.handle);
  assertEquals(w.table.fields.loadWorker(index), -1, "left as its allocation marked it (the producer's, -1)");
});

worldTest(
  "submission: without a progress part, a task with a handler is placed with its PROGRESS flag (nothing to watch)",
  () => {
    const w = world({ noProgress: true });
    const encoder = w.submitter.encode([1]);
    const entry = w.ledger.open("t", 0, () => {}, () => {});
    entry.onProgress = () => {};
    w.submitter.enqueue(entry, encoder);
    assertEquals(w.table.fields.loadFlags(w.table.indexOf(entry.handle)), TaskFlags.PROGRESS, "PROGRESS");
  },
);
