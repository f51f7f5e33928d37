/**
 * One worker's parts built in the test's own thread, as lib/worker/loop.ts builds them, on a real pool
 * memory: its Runner and its ForkJoin host over the real task table, deque, levels, marks, mail, signals,
 * stats and kill guard, with the main thread's table beside them to submit tasks and read their outcomes.
 * No worker thread runs: a test calls `execute`, `fork` or `joinForked` itself, so nothing depends on
 * timing. Shared by tests/worker/runner_test.ts and fork_join_test.ts (issue 47: the survivors of
 * StrykerJS's runs over lib/worker/runner.ts and fork_join.ts).
 */
import { BufferRegistry } from "../../lib/codec/buffers.ts";
import { decode, Encoder } from "../../lib/codec/codec.ts";
import { Injector } from "../../lib/protocol/injector.ts";
import { WorkerGuard } from "../../lib/protocol/kill_guard.ts";
import { ControlWords, MARK_WORDS, NOTE_WORDS, NoteWords } from "../../lib/protocol/layout.ts";
import { PoolMemory } from "../../lib/protocol/memory.ts";
import { ProgressReporter } from "../../lib/progress/reporter.ts";
import { Origin, PAYLOAD_BY_MESSAGE, TaskState, TaskTable } from "../../lib/record/task.ts";
import { ForkJoin } from "../../lib/worker/fork_join.ts";
import { Forks } from "../../lib/worker/forks.ts";
import { type TaskFunction, TaskFunctions } from "../../lib/worker/functions.ts";
import { HandleRequests } from "../../lib/worker/handles.ts";
import { Mail } from "../../lib/worker/mail.ts";
import { Marks } from "../../lib/worker/marks.ts";
import { FORK_MOVE_REFUSAL, RESULT_TRANSFER_FROM, Runner } from "../../lib/worker/runner.ts";
import { Runs } from "../../lib/worker/runs.ts";
import { Search } from "../../lib/worker/search.ts";
import { TaskSignals } from "../../lib/worker/signals.ts";
import { WorkerStats } from "../../lib/worker/stats.ts";
import { assertEquals } from "../_test.ts";

/** What {@link newWorld} takes. */
export interface WorldOptions {
  /** The task functions, by task id. */
  fns: TaskFunction[];
  /** The workers of the pool (this one is worker 0). Default 1. */
  workers?: number;
  /** The pool's asyncTasksPerWorker. Default Infinity. */
  asyncBound?: number;
  /** Overflow blocks of 128 bytes. Default 64 (room for an error with a long stack, as on Bun). */
  blocks?: number;
  /** The encoder's deferFrom (slabs): default none. */
  deferFrom?: number;
  /** With metrics. */
  metrics?: boolean;
  /** Remote producer slots (their completion queues). Default 0. */
  producers?: number;
}

/** Worker 0's parts on a fresh pool memory, and the main thread's table. */
export function newWorld(options: WorldOptions) {
  const workers = options.workers ?? 1;
  const memory = PoolMemory.create({
    workers,
    dequeCapacity: 8,
    taskCapacity: 16,
    inlineBytes: 64,
    blockBytes: 128,
    blocks: options.blocks ?? 64,
    producers: options.producers ?? 0,
  });
  TaskTable.init(memory);
  const index = 0;
  const { control, status } = memory;
  const notes = (at: number) => memory.notes(index, at);
  const deque = memory.deque(index, notes(NoteWords.deque));
  const markWords = memory.notes(index, NoteWords.marks, MARK_WORDS);
  markWords.fill(-1);
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
  const sleep = memory.sleep;
  const table = new TaskTable(memory, { owner: index });
  const functions = new TaskFunctions(options.fns);
  const posted: { message: Record<string, unknown>; transfer: ArrayBuffer[] | undefined }[] = [];
  const post = (message: unknown, transfer?: ArrayBuffer[]) =>
    void posted.push({ message: message as Record<string, unknown>, transfer });
  const buffers = new BufferRegistry(control, ControlWords.nextBufferId, (id, buffer) => {
    post({ type: "buffer", id, buffer });
  });
  const encoder = new Encoder({
    shareBuffer: buffers.share,
    moves: FORK_MOVE_REFUSAL,
    deferFrom: options.deferFrom,
    transferFrom: RESULT_TRANSFER_FROM,
  });
  const guard = new WorkerGuard(status, index);
  const metrics = options.metrics ? { since: Date.now(), histograms: new SharedArrayBuffer(1 << 16) } : undefined;
  const stats = new WorkerStats(memory, index, metrics);
  const forks = new Forks(table);
  const runs = new Runs();
  const marks = new Marks({ memory, words: markWords, table, deque, levels, completions, forks, runs });
  const mail = new Mail({ memory, index, table, functions, buffers, post, guard });
  const signals = new TaskSignals(index, table, runs, mail, new ProgressReporter(memory, table, guard));
  const search = new Search({ index, memory, deque, levels, table, encoder, marks, mail, stats });
  const runner = new Runner({
    index,
    status,
    table,
    encoder,
    buffers,
    functions,
    marks,
    runs,
    forks,
    mail,
    signals,
    stats,
    guard,
    post,
    asyncBound: options.asyncBound ?? Infinity,
    graph: { words: memory.graph, deque, levels, sleep },
  });
  const handles = new HandleRequests((message) => post(message));
  const host = new ForkJoin({
    index,
    workers,
    table,
    deque,
    sleep,
    encoder,
    buffers,
    functions,
    forks,
    marks,
    runs,
    runner,
    search,
    signals,
    stats,
    guard,
    handles,
  });
  const main = new TaskTable(memory);
  return {
    memory,
    handles,
    status,
    markWords,
    deque,
    levels,
    completions,
    table,
    main,
    functions,
    buffers,
    encoder,
    guard,
    stats,
    forks,
    runs,
    marks,
    mail,
    signals,
    search,
    runner,
    host,
    posted,
  };
}

/** A world of {@link newWorld}. */
export type World = ReturnType<typeof newWorld>;

/**
 * A task submitted by the main thread: task `taskId` with `args`, QUEUED, with `flags` (TaskFlags); its
 * handle. Not pushed anywhere: the test hands it to `execute` itself.
 */
export function submit(
  world: World,
  taskId: number,
  args: unknown[],
  flags = 0,
  encoder: Encoder = new Encoder(),
  origin: number = Origin.MAIN,
): number {
  const main = world.main;
  const handle = main.allocate();
  const index = main.indexOf(handle);
  encoder.encodeArgs(args);
  if (!main.writeEncoded(index, encoder)) throw new Error("no room for the arguments");
  main.fields.setTask(index, taskId);
  main.fields.setOrigin(index, origin);
  if (flags !== 0) main.fields.setFlags(index, flags);
  main.fields.storeState(index, TaskState.QUEUED);
  return handle;
}

/** The state word of `handle`'s record. */
export function stateOf(world: World, handle: number): number {
  return world.main.fields.loadState(world.main.indexOf(handle));
}

/** A finished task's outcome and value, as the main thread reads them (from the record, or from the message). */
export function outcomeOf(world: World, handle: number): { outcome: number; value: unknown } {
  const main = world.main;
  const index = main.indexOf(handle);
  assertEquals(main.fields.loadState(index), TaskState.DONE, "the task is DONE");
  const outcome = main.fields.outcome(index);
  if (main.fields.payloadLength(index) === PAYLOAD_BY_MESSAGE) {
    const sent = world.posted.findLast((p) => p.message.type === "payload" && p.message.handle === handle);
    if (sent === undefined) throw new Error("PAYLOAD_BY_MESSAGE, and no payload message");
    const bytes = sent.message.bytes as Uint8Array;
    const moved = sent.message.moved as ArrayBuffer[] | undefined;
    return { outcome, value: decode(bytes, 0, bytes.length, world.buffers.resolve, undefined, moved) };
  }
  const value = decode(
    main.payloadBytes(index),
    main.payloadStart(index),
    main.fields.payloadLength(index),
    world.buffers.resolve,
  );
  return { outcome, value };
}
