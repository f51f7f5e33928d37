/**
 * A simulated thread of the room-wait model (`model.ts`): both sides of the wait for room in the pool's
 * queue (`maxQueue`) over the shipped code, in the producers model's buffer layout
 * (`../producers/layout.ts`: the control words, the remote slots' lines, the completion queues).
 *
 * Programs (the role in the thread block):
 * - SETTLER (thread 0): a producer (the owner's, slot 0, or a remote one) with `TASKS` tasks pending, the
 *   pool full with them: the shipped `lib/producer/ledger.ts` `TaskLedger` (its shared pending word:
 *   `ControlWords.ownerPending` or its slot line's `pending`) and `lib/producer/room.ts` `Room` as its
 *   `released` hook, as `Producer` wires them. It opens its tasks (the model's set-up steps), then settles
 *   them one by one: `settle` takes its pending word down, then the room reads `roomWaiters` and wakes every
 *   other producer's channel if any is counted.
 * - WAITER (thread 1): a producer on slot 1 with nothing pending that calls `Room.waitForRoom()` (count,
 *   arm, check), its `lib/producer/completion.ts` `CompletionReader` armed through the `waitsForRoom` and
 *   `roomFree` hooks, woken through its channel; then the jobs it queued (the continuation of its wait,
 *   `onWake`, the drain whose `freed` hook checks the room), until none is left. It writes whether its wait
 *   was resolved.
 *
 * What stands in for the pool: the event loop (a job queue the program runs: `queueMicrotask` bound to it),
 * the timers (`setTimeout`, the room's uncount a macrotask later, which never comes in a run: the waiter
 * stays counted, as the spec's idle producer may), and `Atomics.waitAsync` (the futex wait, as the
 * producers model's gate has it). The waiter's task table is a stand-in with a real free list (its reader's
 * `freed` reads it).
 *
 * @module
 */

import type { Int32View, WaitAsyncResult } from "../../../../lib/protocol/atomics.ts";
import { Injector } from "../../../../lib/protocol/injector.ts";
import { CACHE_LINE_WORDS, ControlWords } from "../../../../lib/protocol/layout.ts";
import { producerChannel, ProducerWords, slotLine } from "../../../../lib/protocol/producers.ts";
import { CompletionReader } from "../../../../lib/producer/completion.ts";
import { Settled, TaskLedger } from "../../../../lib/producer/ledger.ts";
import { Room } from "../../../../lib/producer/room.ts";

/** The pool memory as the room reads it (its control words, channels, slot lines): stood in for here. */
type PoolMemory = ConstructorParameters<typeof Room>[2];
import { serveModel, type ThreadRun, WaitGate } from "../../kernel/gate.ts";
import { PCAPACITY, PCONTROL_BYTES, PFREE_BYTES, PRODUCERS_LAYOUT, PSLOTS } from "../producers/layout.ts";
import { RRole, RWork, RWORK_BYTES, RWORK_WORDS, TASKS, WAITER_SLOT } from "./layout.ts";

/** The gate, with `waitAsync` as a futex wait (the producer has nothing else to do but wait). */
class RoomGate extends WaitGate {
  /** The program's job queue (its event loop), while it runs. */
  jobs: (() => void)[] = [];

  override waitAsync(view: Int32View, index: number, expected: number, _timeout?: number): WaitAsyncResult {
    if (this.wait(view, index, expected) === "not-equal") return { async: false, value: "not-equal" };
    const jobs = this.jobs;
    const woken = { then: (resume: () => void) => jobs.push(resume) };
    return { async: true, value: woken as unknown as Promise<"ok"> };
  }
}

function program({ buffer, gate, role, p1: settlerSlot, p2: max, setOp }: ThreadRun<RoomGate>): void {
  if (role === RRole.NONE) return;
  const control = new Int32Array(buffer, PCONTROL_BYTES, 3 * CACHE_LINE_WORDS);
  const channels = Array.from({ length: PSLOTS + 1 }, (_, s) => producerChannel(buffer, PRODUCERS_LAYOUT, s));
  const memory = {
    control,
    channels,
    producers: PSLOTS,
    slotLine: (s: number) => slotLine(buffer, PRODUCERS_LAYOUT, s),
  } as unknown as PoolMemory;
  const work = new Int32Array(buffer, RWORK_BYTES, RWORK_WORDS);
  // Timers: the room's uncount is a macrotask later, after this run (see the module doc).
  const { setTimeout: realSetTimeout, clearTimeout: realClearTimeout, queueMicrotask: realMicrotask } = globalThis;
  globalThis.setTimeout = ((() => 0) as unknown) as typeof setTimeout;
  globalThis.clearTimeout = (() => {}) as typeof clearTimeout;
  const jobs: (() => void)[] = [];
  gate.jobs = jobs;
  globalThis.queueMicrotask = (job: () => void) => jobs.push(job);
  try {
    if (role === RRole.SETTLER) runSettler(memory, settlerSlot, max, work, setOp);
    else if (role === RRole.WAITER) runWaiter(buffer, memory, max, work, jobs, setOp);
    else throw new Error(`unknown role ${role}`);
  } finally {
    globalThis.setTimeout = realSetTimeout;
    globalThis.clearTimeout = realClearTimeout;
    globalThis.queueMicrotask = realMicrotask;
  }
}

/** The settler: its tasks opened (the set-up steps), then settled one by one, each followed by the room's wake. */
function runSettler(
  memory: PoolMemory,
  slot: number,
  max: number,
  work: Int32Array,
  setOp: (op: number) => void,
): void {
  const shared = slot === 0
    ? { words: memory.control, at: ControlWords.ownerPending }
    : { words: memory.slotLine(slot), at: ProducerWords.pending };
  const ledger = new TaskLedger(PCAPACITY, undefined, shared);
  const room = new Room(max, { pending: () => ledger.pending, arm: () => {} }, memory, slot);
  ledger.released = () => room.released();
  const entries = Array.from({ length: TASKS }, (_, i) => ledger.open(`t${i}`, 0, () => {}, () => {}));
  for (let i = 0; i < TASKS; i++) {
    setOp(i);
    ledger.settle(entries[i], Settled.VALUE, i);
  }
  Atomics.store(work, RWork.SETTLED, TASKS);
}

/** The waiter: `waitForRoom()`, then its jobs until none is left; whether its wait resolved. */
function runWaiter(
  buffer: SharedArrayBuffer,
  memory: PoolMemory,
  max: number,
  work: Int32Array,
  jobs: (() => void)[],
  setOp: (op: number) => void,
): void {
  const free = new Injector({ buffer, byteOffset: PFREE_BYTES, capacity: PCAPACITY });
  const table = {
    freeRecords: free,
    indexOf: (handle: number) => handle & (PCAPACITY - 1),
    releaseHandle: (): boolean => true,
    flushCache: (): number => 0,
    holdFreed: (_hold: boolean): void => {},
  };
  const ledger = { placed: [], forgotten: new Set<number>(), pending: 0 };
  const hooks = {
    beforeDrain(): void {},
    // As Producer.freed: the backlog (none here), then room for its waiters.
    freed: () => room.check(),
    starved: () => false,
    waitsForRoom: () => room.waiting,
    roomFree: () => room.waiting && room.hasRoom(),
    terminated: () => false,
    backlogLength: () => 0,
  };
  const reader = new CompletionReader({
    memory: { control: memory.control, channels: memory.channels, progress: new Int32Array(0) },
    channel: memory.channels[WAITER_SLOT],
    completions: new Injector(memory.channels[WAITER_SLOT].queue),
    table: table as never,
    ledger: ledger as never,
    buffers: undefined as never,
    hooks,
  });
  // Declared after the hooks that call it: they run only once the reader is armed, after this line.
  const room = new Room(max, { pending: () => 0, arm: () => reader.arm() }, memory, WAITER_SLOT);
  setOp(0);
  let resolved = false;
  // The promise's reaction is a microtask of the real event loop, after this program: `waiting` says it.
  void room.waitForRoom();
  let op = 1;
  while (jobs.length > 0) {
    setOp(op++);
    jobs.shift()!();
  }
  resolved = !room.waiting;
  Atomics.store(work, RWork.RESOLVED, resolved ? 1 : 0);
}

// Last: the gate class above must be defined before the first set-up message makes one.
await serveModel<RoomGate>({
  program,
  gate: (buffer, thread, site) => new RoomGate(buffer, thread, site),
});
