/**
 * `Admission`, a producer's admission of a submission (`lib/producer/admission.ts`), on one thread with a
 * real pool memory, task table, ledger, queues, room, submitter, canceller and completion reader: each
 * refusal (its order, its error, that it records nothing), what an admitted task leaves in shared memory,
 * and the repair of a submission cut short at each of its shared accesses (a stack overflow there: the
 * test's binding throws before the n-th access, tests/protocol/_cut_at.ts). The pool's suites reach these
 * through workers; these pin the values, which StrykerJS changed without the pool's suites noticing
 * (issue 47, "Mutants nobody here chose").
 *
 * No worker runs: a task "runs" when the test takes its handle from its queue. Nothing depends on timing.
 */
import { BufferRegistry } from "../../lib/codec/buffers.ts";
import { move } from "../../lib/codec/move.ts";
import { PoolClosedError, PoolTerminatedError, QueueFullError } from "../../lib/errors.ts";
import type { PoolStateName } from "../../lib/lifecycle.ts";
import type { PoolMetrics } from "../../lib/metrics.ts";
import { resolveOptions, resolveRunOptions } from "../../lib/options.ts";
import { Admission } from "../../lib/producer/admission.ts";
import { Canceller } from "../../lib/producer/cancellation.ts";
import { CompletionReader } from "../../lib/producer/completion.ts";
import { Settled, TaskLedger } from "../../lib/producer/ledger.ts";
import { Room } from "../../lib/producer/room.ts";
import { Submitter } from "../../lib/producer/submission.ts";
import { Injector } from "../../lib/protocol/injector.ts";
import { ControlWords, SleepWords } from "../../lib/protocol/layout.ts";
import { originOf, producerThreadId, ProducerWords } from "../../lib/protocol/producers.ts";
import { Level } from "../../lib/protocol/levels.ts";
import { PoolMemory } from "../../lib/protocol/memory.ts";
import { AWAKE, SLEEPING } from "../../lib/protocol/sleep.ts";
import { recordCensus } from "../../lib/record/census.ts";
import { TaskFlags, TaskState, TaskTable } from "../../lib/record/task.ts";
import { cutAt, cutRun } from "../protocol/_cut_at.ts";
import { assert, assertEquals, test } from "../_test.ts";

/** The worlds a test made: their ledgers hold the event loop while tasks are pending (none runs here). */
const made: { ledger: TaskLedger; stop?: () => void }[] = [];

/** `test`, letting go of every world it made when it ends (else Node's runner waits for their timers). */
function worldTest(name: string, fn: () => void | Promise<void>): void {
  test(name, async () => {
    try {
      await fn();
    } finally {
      for (const w of made.splice(0)) {
        w.stop?.();
        w.ledger.releaseProcess();
      }
    }
  });
}

/** How a task's promise settled, as its resolve and reject saw it. */
type Outcome = { value: unknown } | { error: unknown } | "pending";

/** A pool of one worker (none runs) with `taskCapacity` records and `maxQueue`, its owner's producer's parts. */
function world(
  options: { taskCapacity?: number; maxQueue?: number; payloadMemory?: number } = {},
  setup: { metrics?: PoolMetrics; state?: () => PoolStateName; names?: boolean; slot?: number; arena?: boolean } = {},
) {
  const resolved = resolveOptions({ workers: 1, producers: 2, taskCapacity: options.taskCapacity ?? 8, ...options });
  const shape = resolved.shape;
  // With an arena: payloads of SLAB_FROM bytes or more go in slabs (as lib/assemble.ts makes it).
  const arena = setup.arena ? new SharedArrayBuffer(0, { maxByteLength: resolved.payloadMemory }) : undefined;
  const memory = PoolMemory.create(shape, arena);
  TaskTable.init(memory);
  // The owner's producer (slot 0), or a producer in another thread (its own slot, notes and records' mark).
  const slot = setup.slot ?? 0;
  const table = new TaskTable(memory, { slot });
  const levels = memory.levels();
  const reported: { error: unknown; task: string }[] = [];
  const bounded = resolved.maxPending !== Infinity;
  const ledger = new TaskLedger(
    shape.taskCapacity,
    (error: unknown, task?: string) => reported.push({ error, task: task ?? "" }),
    bounded ? { words: memory.control, at: ControlWords.ownerPending } : undefined,
  );
  const life = { state: "open" as PoolStateName };
  let admission: Admission | undefined = undefined;
  let submitter: Submitter | undefined = undefined;
  let room: Room | undefined = undefined;
  const hooks = {
    beforeDrain: (): void => admission!.repairIfCut(),
    freed: (): void => submitter!.feed(),
    starved: (): boolean => submitter!.starved,
    waitsForRoom: (): boolean => room!.waiting,
    roomFree: (): boolean => room!.waiting && room!.hasRoom(),
    terminated: (): boolean => life.state === "terminated",
    backlogLength: (): number => submitter!.backlogLength,
  };
  made.push({ ledger, stop: () => reader.stop() });
  const channel = memory.channels[slot];
  const buffers = new BufferRegistry(memory.control, ControlWords.nextBufferId, () => {});
  const reader: CompletionReader = new CompletionReader({
    memory,
    channel,
    completions: new Injector(channel.queue),
    table,
    ledger,
    buffers,
    hooks,
  });
  room = new Room(resolved.maxPending, { pending: () => ledger.pending, arm: () => reader.arm() }, memory, 0);
  const told: unknown[] = [];
  const canceller = new Canceller(table, ledger, (_worker, message) => told.push(message), () => {});
  const directed: { worker: number; handle: number; moved: ArrayBuffer[] }[] = [];
  submitter = new Submitter({
    table,
    levels,
    sleep: memory.sleep,
    ledger,
    shareBuffer: buffers.share,
    producer: slot === 0 ? undefined : {
      origin: originOf(slot),
      moves: "transfer",
      share: () => Infinity,
      placing: { words: memory.slotLine(slot), at: ProducerWords.placing },
    },
    placement: {
      placed: (entry) => canceller.placed(entry),
      pickWorker: () => 0,
      direct: (worker, handle, moved) => void directed.push({ worker, handle, moved }),
    },
  });
  admission = new Admission(
    { ledger, room, submitter, reader, canceller, table, levels, sleep: memory.sleep, metrics: setup.metrics },
    setup.state ?? (() => life.state),
  );
  if (setup.names !== false) admission.setTasks(["add", "mul", "sum"]);
  return {
    memory,
    table,
    levels,
    ledger,
    room,
    reader,
    submitter,
    canceller,
    reported,
    told,
    directed,
    admission,
    capacity: shape.taskCapacity,
    get state(): PoolStateName {
      return life.state;
    },
    set state(state: PoolStateName) {
      life.state = state;
    },
  };
}

type World = ReturnType<typeof world>;

/** Submits `task` as `run` does: its outcome, and the entry (undefined if refused). */
function run(w: World, task: unknown, args: unknown[] = [1, 2], options?: unknown, level?: 0 | 1 | 2) {
  let outcome: Outcome = "pending";
  const entry = w.admission.submit(
    task as string,
    args,
    (value: unknown) => outcome = { value },
    (error: unknown) => outcome = { error },
    options === undefined ? undefined : resolveRunOptions(options),
    undefined,
    level,
  );
  return { entry, outcome: () => outcome };
}

/** The error a refused `run` rejected with (fails if it did not reject). */
function refusal(w: World, task: unknown, args?: unknown[], options?: unknown): Error {
  const r = run(w, task, args, options);
  const outcome = r.outcome();
  assertEquals(r.entry, undefined, `${String(task)}: refused, no entry`);
  assert(outcome !== "pending" && "error" in outcome, `${String(task)}: rejected (${JSON.stringify(outcome)})`);
  return outcome.error as Error;
}

/** The handles queued at `level`, taken as a worker would. */
function takeAll(w: World, level: number = Level.normal): number[] {
  const handles: number[] = [];
  for (let h = w.levels.queues[level].pop(); h !== -1; h = w.levels.queues[level].pop()) handles.push(h);
  return handles;
}

/** What the pool holds: pending entries, records in use, handles queued (all levels). */
function held(w: World) {
  let used = 0;
  for (let i = 0; i < w.capacity; i++) {
    const state = w.table.fields.loadState(i);
    if (state !== TaskState.FREE && state !== TaskState.CACHED) used++;
  }
  return { pending: w.ledger.pending, used, queued: w.levels.queued };
}

worldTest(
  "admission: an admitted task is recorded, placed in a record with its task id and queued at its level",
  () => {
    const w = world();
    const r = run(w, "mul", [6, 7]);
    assert(r.entry !== undefined, "admitted");
    assertEquals(r.outcome(), "pending", "not settled");
    assertEquals({ task: r.entry.task, taskId: r.entry.taskId, level: r.entry.level }, {
      task: "mul",
      taskId: 1,
      level: Level.normal,
    }, "its entry");
    assertEquals(held(w), { pending: 1, used: 1, queued: 1 }, "one entry, one record, one queued");
    const index = w.table.indexOf(r.entry.handle);
    assertEquals(w.table.fields.loadState(index), TaskState.QUEUED, "QUEUED");
    assertEquals(w.ledger.placed[index], r.entry, "placed by its index");
    assertEquals(takeAll(w), [r.entry.handle], "in the normal queue");
    // A level: from the options, else the caller's.
    const high = run(w, "add", [1, 2], { priority: "high" });
    assertEquals(high.entry?.level, Level.high, "from the options");
    assertEquals(takeAll(w, Level.high), [high.entry!.handle], "in the high queue");
    const low = run(w, "add", [1, 2], undefined, Level.low);
    assertEquals(low.entry?.level, Level.low, "the caller's level without options");
    assertEquals(takeAll(w, Level.low), [low.entry!.handle], "in the low queue");
    assertEquals(w.admission.taskNames, ["add", "mul", "sum"], "the names");
    assertEquals([w.admission.taskId("add"), w.admission.taskId("sum"), w.admission.taskId("x")], [0, 2, undefined]);
  },
);

worldTest("admission: each refusal rejects with its error and records nothing, in the order of the checks", () => {
  const w = world({ maxQueue: 1 });
  const unknown = refusal(w, "nope");
  assert(unknown instanceof TypeError || unknown instanceof Error, "an error");
  assert(/nope/.test(unknown.message) && /add, mul, sum|add/.test(unknown.message), `names it: ${unknown.message}`);
  const notName = refusal(w, () => 1);
  assert(/a task is named by a string: received a function/.test(notName.message), `not a name: ${notName.message}`);
  assert(!/=>/.test(notName.message), "no source text");
  // Arguments that cannot cross threads.
  const bad = refusal(w, "add", [() => 1]);
  assert(bad instanceof TypeError, `a TypeError: ${bad}`);
  assertEquals(held(w), { pending: 0, used: 0, queued: 0 }, "nothing recorded");
  // An aborted signal: rejects with its reason, before the room check.
  const controller = new AbortController();
  controller.abort(new Error("why"));
  assertEquals(refusal(w, "add", [1, 2], { signal: controller.signal }).message, "why", "the signal's reason");
  // The room: workers (1) + maxQueue (1) pending at most.
  assert(run(w, "add").entry !== undefined && run(w, "add").entry !== undefined, "two admitted");
  const full = refusal(w, "add");
  assert(full instanceof QueueFullError, `a QueueFullError: ${full}`);
  assert(
    /queue is full: 2 tasks pending, at most 2 \(workers \+ maxQueue\), 2 of them this producer's/.test(full.message),
    `its counts: ${full.message}`,
  );
  assert(/waitForRoom\(\)/.test(full.message), `names the fix: ${full.message}`);
  // The room check comes before the name check, and the abort before the room.
  assert(refusal(w, "nope") instanceof QueueFullError, "full before unknown");
  assertEquals(refusal(w, "add", [1, 2], { signal: controller.signal }).message, "why", "aborted before full");
  assertEquals(held(w), { pending: 2, used: 2, queued: 2 }, "the refused recorded nothing");
});

worldTest(
  "admission: a closed or terminated pool, a closed producer and an unstaffed pool refuse before anything else",
  () => {
    for (const state of ["closing", "closed", "terminated"] as const) {
      const w = world();
      w.state = state;
      const error = refusal(w, "nope");
      assert(error instanceof PoolClosedError, `${state}: a PoolClosedError (${error})`);
      assertEquals(error instanceof PoolTerminatedError, state === "terminated", `${state}: terminated or not`);
      assert(error.message.includes(state === "terminated" ? "was terminated" : `is ${state}`), error.message);
      assert(error.message.includes("'nope'"), `names the task: ${error.message}`);
      assertEquals(w.admission.open(), false, `${state}: not open`);
    }
    const w = world();
    assertEquals(w.admission.open(), true, "open");
    w.admission.unstaffed = (task: string) => new Error(`no worker for ${task}`);
    assertEquals(refusal(w, "add").message, "no worker for add", "unstaffed");
    w.admission.unstaffed = undefined;
    w.admission.close();
    assertEquals(w.admission.open(), false, "a closed producer");
    const closed = refusal(w, "add");
    assert(closed instanceof PoolClosedError && !(closed instanceof PoolTerminatedError), `${closed}`);
    assert(/this producer was closed/.test(closed.message), closed.message);
    w.state = "terminated";
    assert(refusal(w, "add") instanceof PoolTerminatedError, "terminated wins over the producer's close");
    // A function as the task: the closed error does not show its source either.
    assert(/\(not a task name\)/.test(w.admission.closedError((() => 1) as unknown as string).message), "no source");
    assertEquals(held(w), { pending: 0, used: 0, queued: 0 }, "nothing recorded");
  },
);

worldTest(
  "admission: a spawn's refusal is reported to onError, not thrown; an aborted spawn reports nothing",
  async () => {
    const w = world();
    assertEquals(w.admission.submit("nope", [], undefined, undefined), undefined, "refused");
    const controller = new AbortController();
    controller.abort();
    assertEquals(
      w.admission.submit("add", [1, 2], undefined, undefined, resolveRunOptions({ signal: controller.signal })),
      undefined,
      "aborted",
    );
    for (let i = 0; i < 10; i++) await null;
    assertEquals(w.reported.length, 1, "one report: the unknown task, not the abort");
    assert(/nope/.test(String(w.reported[0].error)), String(w.reported[0].error));
    assertEquals(w.reported[0].task, "nope", "reported with its task's name");
    // A function as a spawn's task: reported under a placeholder, not its source text.
    assertEquals(w.admission.submit((() => 1) as unknown as string, [], undefined, undefined), undefined, "refused");
    for (let i = 0; i < 10; i++) await null;
    assertEquals(w.reported.map((r) => r.task), ["nope", "(not a task name)"], "the placeholder");
  },
);

worldTest("admission: a getter that closes or terminates the pool refuses its own task, recording nothing", () => {
  for (const state of ["closing", "terminated"] as const) {
    const w = world();
    const args = [{
      get x() {
        w.state = state;
        return 1;
      },
    }];
    const error = refusal(w, "add", args);
    assert(error instanceof PoolClosedError, `${state}: ${error}`);
    assertEquals(held(w), { pending: 0, used: 0, queued: 0 }, `${state}: nothing recorded`);
    assertEquals(w.ledger.submitted, 0, `${state}: refused before its entry was opened`);
  }
});

worldTest("admission: a payload over the pool's bound is a RangeError naming its size and the bound", () => {
  const w = world({ payloadMemory: 1 << 16 });
  const max = w.table.maxPayloadBytes();
  const error = refusal(w, "add", [new Uint8Array(max + 64)]);
  assert(error instanceof RangeError, `${error}`);
  assert(new RegExp(`the pool holds at most ${max}:`).test(error.message), error.message);
  assert(/arguments encode to \d+ bytes/.test(error.message), error.message);
  assertEquals(held(w), { pending: 0, used: 0, queued: 0 }, "nothing recorded");
  // Exactly at the bound: admitted.
  let k = max;
  while (w.submitter.encode([new Uint8Array(k)]).length > max) k--;
  assertEquals(w.submitter.encode([new Uint8Array(k)]).length, max, "arguments of exactly the bound");
  const at = run(w, "add", [new Uint8Array(k)]);
  assertEquals(at.outcome(), "pending", `at the bound: admitted (${JSON.stringify(at.outcome())})`);
});

worldTest("admission: moved buffers are detached only once admitted, and the task is directed", () => {
  const w = world();
  const kept = new ArrayBuffer(8);
  assert(refusal(w, "nope", [move(kept)]) !== undefined, "refused");
  assertEquals(kept.byteLength, 8, "a refused task's buffer stays the caller's");
  const buffer = new ArrayBuffer(16);
  const r = run(w, "add", [move(buffer)]);
  assert(r.entry !== undefined, "admitted");
  assertEquals(buffer.byteLength, 0, "detached");
  assertEquals(w.directed.length, 1, "posted to a worker");
  assertEquals(w.directed[0].moved[0].byteLength, 16, "with its buffer");
  const index = w.table.indexOf(r.entry.handle);
  assert((w.table.fields.loadFlags(index) & TaskFlags.DIRECTED) !== 0, "DIRECTED");
  assertEquals(held(w).queued, 0, "not pushed");
  // A buffer detached by a getter after it was encoded: refused.
  const late = new ArrayBuffer(8);
  const error = refusal(w, "add", [move(late), {
    get x() {
      structuredClone(late, { transfer: [late] });
      return 1;
    },
  }]);
  assert(error instanceof Error, `refused: ${error}`);
});

worldTest(
  "admission: with options, the canceller watches the task; a getter that aborts cancels it once enqueued",
  () => {
    const w = world();
    const controller = new AbortController();
    const r = run(w, "add", [1, 2], { signal: controller.signal, timeout: 1000 });
    assert(r.entry?.control !== undefined, "controlled");
    assert((w.table.fields.loadFlags(w.table.indexOf(r.entry.handle)) & TaskFlags.WATCH_START) !== 0, "watched");
    controller.abort(new Error("stop"));
    assert(r.outcome() !== "pending", "the abort settled it");
    const late = new AbortController();
    const s = run(w, "add", [{
      get x() {
        late.abort(new Error("late"));
        return 1;
      },
    }], { signal: late.signal });
    const outcome = s.outcome();
    assert(outcome !== "pending" && "error" in outcome, "cancelled once enqueued");
    assertEquals((outcome.error as Error).message, "late", "with the reason");
    const progress = run(w, "add", [1, 2], { onProgress: () => {} });
    assert(progress.entry?.onProgress !== undefined, "its progress handler");
  },
);

/** Worker 0 counted as sleeping (as its idle path leaves it), so that a repair's wake can be seen. */
function asleep(w: World): World {
  const jec = w.memory.sleep.getSleepy();
  assert(w.memory.sleep.fallAsleep(0, jec), "worker 0 asleep");
  return w;
}

function workerState(w: World): number {
  return Atomics.load(w.memory.sleep.words as Int32Array, SleepWords.state(0));
}

for (const maxQueue of [undefined, 4]) {
  worldTest(
    `admission: a submission cut short at any shared access is completed by repairIfCut (maxQueue ${maxQueue}): settled, or queued and the sleeper woken`,
    () => {
      let n = 0;
      const seen = new Set<string>();
      for (;; n++) {
        const w = asleep(world({ maxQueue }));
        let outcome: Outcome = "pending";
        const cut = cutAt(n, () => {
          w.admission.submit(
            "add",
            [1, 2],
            (value: unknown) => outcome = { value },
            (error: unknown) => outcome = { error },
          );
        });
        if (!cut) break;
        w.admission.repairIfCut();
        const h = held(w);
        const o = outcome as Outcome;
        if (h.queued === 1) {
          seen.add("published");
          // Published: it runs (its entry stays pending, its record in use) and the sleeper was told.
          assertEquals(
            { pending: h.pending, used: h.used, outcome: o },
            { pending: 1, used: 1, outcome: "pending" },
            `cut at ${n}`,
          );
          const handle = w.levels.queues[Level.normal].pop();
          const index = w.table.indexOf(handle);
          assertEquals(w.table.fields.loadState(index), TaskState.QUEUED, `cut at ${n}: QUEUED`);
          assertEquals(w.ledger.placed[index]?.task, "add", `cut at ${n}: placed`);
          assertEquals(workerState(w), AWAKE, `cut at ${n}: the sleeper woken`);
        } else {
          // Not published: its record given back and its entry settled (rejected with the overflow), or, cut
          // before its entry was opened, nothing recorded (the caller saw the throw).
          assertEquals(h.used, 0, `cut at ${n}: no record held`);
          assertEquals(workerState(w), SLEEPING, `cut at ${n}: nobody woken for a task never published`);
          if (o !== "pending") {
            seen.add("settled");
            assertEquals(h.pending, 0, `cut at ${n}: its entry settled`);
            assert("error" in o && o.error instanceof RangeError && /cut short/.test(o.error.message), `cut at ${n}`);
          } else {
            // Cut before admission noted its entry (inside the ledger's open included: at its shared count's
            // add, nothing is counted yet): nothing pending, here or in the shared count.
            seen.add("before");
            assertEquals(h.pending, 0, `cut at ${n}: nothing pending`);
            if (maxQueue !== undefined) {
              assertEquals(Atomics.load(w.memory.control, ControlWords.ownerPending), 0, `cut at ${n}: nor shared`);
            }
          }
          assertEquals(w.ledger.placed.every((e: unknown) => e === undefined), true, `cut at ${n}: no entry placed`);
        }
        if (maxQueue !== undefined && o !== "pending") {
          assertEquals(
            Atomics.load(w.memory.control, ControlWords.ownerPending),
            h.pending,
            `cut at ${n}: the shared count`,
          );
        }
        // Repaired once: a second call changes nothing; the next submission is admitted and queued.
        const before = held(w);
        w.admission.repairIfCut();
        assertEquals(held(w), before, `cut at ${n}: repaired once`);
        const next = run(w, "add");
        assert(next.entry !== undefined, `cut at ${n}: the next is admitted`);
        assertEquals(takeAll(w), [next.entry.handle], `cut at ${n}: the next is queued`);
      }
      assert(n > 3 && seen.has("published") && seen.has("settled"), `cut points: ${n}, ${[...seen]}`);
    },
  );
}

worldTest("admission: no task names before the module loaded; the names and ids after", () => {
  const w = world({}, { names: false });
  assertEquals(w.admission.taskNames, [], "none yet");
  assertEquals(w.admission.taskId("add"), undefined, "no id");
  w.admission.setTasks(["b", "a"]);
  assertEquals([w.admission.taskNames, w.admission.taskId("b"), w.admission.taskId("a")], [["b", "a"], 0, 1]);
});

worldTest("admission: with metrics, an admitted task carries its submission time; without, none", () => {
  const clock = { submitClock: () => 42.5 } as unknown as PoolMetrics;
  const w = world({}, { metrics: clock });
  assertEquals(run(w, "add").entry?.submittedAt, 42.5, "stamped");
  assertEquals(run(world(), "add").entry?.submittedAt, 0, "not stamped without metrics");
});

worldTest(
  "admission: the reader is armed for an admitted task; a task that went to the backlog is counted waiting for a record",
  () => {
    const w = world({ taskCapacity: 2 });
    const channel = w.memory.channels[0];
    assertEquals(Atomics.load(channel.words, channel.waiting), 0, "not armed with nothing pending");
    run(w, "add");
    assertEquals(Atomics.load(channel.words, channel.waiting), 1, "armed: waiting for the completion");
    run(w, "add");
    assertEquals(Atomics.load(channel.words, channel.counted), 0, "no record waited for yet");
    const third = run(w, "add");
    assertEquals([third.entry?.handle, w.submitter.backlogLength], [-1, 1], "the third in the backlog");
    assertEquals(Atomics.load(channel.words, channel.counted), 1, "counted waiting for a record");
  },
);

worldTest(
  "admission: the pool closed between the pending count and the state's second read (spec: SubmitReadState): refused, settled, nothing placed",
  () => {
    for (const state of ["closing", "terminated"] as const) {
      let reads = 0;
      let after = Infinity;
      const w = world({ maxQueue: 4 }, {
        state: () => reads++ >= after ? state : "open",
      });
      // The reads of an admitted submission: the first check, the check after encoding, the one after the count.
      reads = 0;
      run(w, "add");
      takeAll(w);
      const perSubmission = reads;
      assertEquals(perSubmission, 3, "three reads of the state");
      reads = 0;
      after = 2;
      const r = run(w, "add");
      assertEquals(r.entry, undefined, `${state}: refused`);
      const o = r.outcome();
      assert(o !== "pending" && "error" in o && o.error instanceof PoolClosedError, `${state}: rejected`);
      assertEquals((o.error as Error) instanceof PoolTerminatedError, state === "terminated", `${state}: its class`);
      assertEquals(held(w), { pending: 1, used: 1, queued: 0 }, `${state}: only the first task held`);
      assertEquals(Atomics.load(w.memory.control, ControlWords.ownerPending), 1, `${state}: the shared count back`);
    }
  },
);

worldTest(
  "admission: a submission cut once published and told (in its timeout's start watch) returns its entry: it runs",
  () => {
    const options = { timeout: 60_000 };
    const whole = asleep(world());
    const total = cutRun(Number.MAX_SAFE_INTEGER, () => run(whole, "add", [1, 2], options)).accesses;
    let returned = 0;
    for (let n = 0; n < total; n++) {
      const w = asleep(world());
      let entry: unknown;
      const cut = cutAt(n, () => {
        entry = w.admission.submit("add", [1, 2], () => {}, () => {}, resolveRunOptions(options));
      });
      if (cut) continue;
      // Not thrown though cut: submit caught the throw after the task was published and told.
      returned++;
      assert(entry !== undefined, `cut at ${n}: its entry returned`);
      const before = held(w);
      w.admission.repairIfCut();
      assertEquals(held(w), before, `cut at ${n}: nothing left to repair`);
      assertEquals(before, { pending: 1, used: 1, queued: 1 }, `cut at ${n}: queued, pending`);
      assertEquals(workerState(w), AWAKE, `cut at ${n}: told`);
      // Started (as its worker would), so that its start watch ends.
      const index = w.table.indexOf((entry as { handle: number }).handle);
      w.table.fields.storeState(index, TaskState.RUNNING);
      Atomics.notify(w.table.words as Int32Array, w.table.fields.stateWord(index));
    }
    assert(returned > 0 && returned < total, `some cuts landed after the task was told: ${returned} of ${total}`);
  },
);

worldTest(
  "admission: after a cut submission's repair every record can be taken again (none left marked as the producer's)",
  () => {
    // 8 records: the producer keeps no cache (its records come from the shared free list); 64: its own
    // cache keeps up to 4 (cacheLimit), and one is there when the submission is cut.
    for (const taskCapacity of [8, 64]) {
      for (let n = 0;; n++) {
        const w = world({ taskCapacity });
        // A record in the producer's own cache (freed here by an earlier completion), as in a running pool.
        const earlier = run(w, "add").entry!;
        takeAll(w);
        w.ledger.placed[w.table.indexOf(earlier.handle)] = undefined;
        w.ledger.settle(earlier, Settled.VALUE, 3);
        w.table.release(w.table.indexOf(earlier.handle));
        assertEquals(w.table.cachedHere, taskCapacity === 64 ? 1 : 0, "records in the producer's cache");
        const cut = cutAt(n, () => {
          w.admission.submit("add", [new Uint8Array(300)], () => {}, () => {});
        });
        // Named by its entry when cut (its handle set, placed by index), the record's release may find it
        // still marked as ours (CACHED, the QUEUED store not made): counted a duplicate, then reclaimed.
        const named = w.ledger.placed.some((e) => e !== undefined);
        w.admission.repairIfCut();
        const used = held(w).used;
        const free = new Set<number>();
        for (let h = w.table.allocate(); h !== -1; h = w.table.allocate()) {
          assert(!free.has(w.table.indexOf(h)), `cut at ${n}: record ${w.table.indexOf(h)} handed out twice`);
          free.add(w.table.indexOf(h));
        }
        assertEquals(free.size + used, w.capacity, `cut at ${n}: every record in use or free`);
        if (!named) assertEquals(w.table.duplicateReleases, 0, `cut at ${n}: no release of a record never named`);
        if (!cut) break;
      }
    }
  },
);

worldTest(
  "admission: a submission cut at any call or shared access (the owner's producer, or one in another thread): the repair frees its own record, blocks and slab, never another thread's",
  () => {
    for (const slot of [0, 1]) {
      // Inline, in overflow blocks, in a slab (40,000 bytes: past SLAB_FROM on every runtime).
      for (const args of [[1, 2], [new Uint8Array(300)], [new Uint8Array(40_000)]]) {
        for (let n = 0;; n++) {
          const w = world({ taskCapacity: 64, payloadMemory: 1 << 20 }, { slot, arena: true });
          const id = slot === 0 ? -1 : producerThreadId(w.memory.layout, slot);
          // The owner's table (the producer's own for slot 0; else the owner's thread, meanwhile) with a
          // record in its private cache (marked cached by -1), as in a running pool.
          const owner = slot === 0 ? w.table : new TaskTable(w.memory);
          owner.release(owner.indexOf(owner.allocate()));
          // (A cut at the encoder's call is caught as an encoding error: the submission refused, not cut.)
          const reached = cutRun(
            n,
            () => void w.admission.submit("add", args, () => {}, () => {}),
            [w.table, w.table.fields, w.submitter, w.ledger],
          ).accesses > n;
          w.admission.repairIfCut();
          const census = recordCensus(owner);
          const used = held(w).used;
          const at = `slot ${slot}, ${args.length === 2 ? "inline" : (args[0] as Uint8Array).length}, cut at ${n}`;
          assertEquals(
            census.cached["-1"] ?? 0,
            owner.cachedHere,
            `${at}: the records marked the owner's are those in its cache`,
          );
          if (slot !== 0) {
            assertEquals(owner.cachedHere, 1, `${at}: the owner's cache untouched`);
            assertEquals(census.cached[String(id)], undefined, `${at}: no record left marked the producer's`);
          }
          assertEquals(census.free + owner.cachedHere + used, census.capacity, `${at}: every record free or in use`);
          if (used === 0) {
            assertEquals(census.slabs.free, census.slabs.made, `${at}: no slab held`);
            assertEquals(census.blocks.free, census.blocks.total, `${at}: no block held`);
          }
          if (!reached) {
            assert(n > 20 && used === 1, `${at}: submitted whole after ${n} cut points`);
            break;
          }
        }
      }
    }
  },
);
