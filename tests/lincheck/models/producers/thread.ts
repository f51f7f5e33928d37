/**
 * A simulated thread of the producers model (`model.ts`): one program per run over the shipped code — `lib/producer/completion.ts`'s `CompletionReader` (arm, drain, onWake),
 * `lib/worker/marks.ts`'s `Marks.publishDone`, `lib/protocol/producers.ts` (`wakeProducer`,
 * `wakeRecordWaiters`, `claimSlot`, `releaseSlot`) — over real `lib/protocol/injector.ts` queues. The gate, its
 * hand-shake and the loop over runs are the kernel's (`../../kernel/gate.ts`), with `waitAsync` added.
 *
 * Programs (the role in the thread block, the part in the test's words):
 * - PRODUCER: a `CompletionReader` on its slot's channel; `arm()`, then the jobs it queued (its microtasks
 *   and the continuation of its wait), until none of its tasks is pending. A completion read is counted as
 *   received (the ledger knows no entry for it, so the reader frees its record: the stand-in table pushes
 *   it to the free list). A backlog task is placed (and counted done) when `freed()` pops a free record.
 * - FINISHER: a worker's `Marks` publishing the finish of each of its tasks (`publishDone`: DONE, the push
 *   to the completion queue of the slot the record's origin names, the producer's wake).
 * - CLAIMER: `claimSlot`, then `releaseSlot`, for its rounds; a slot is held (counted in HOLDERS) from the
 *   claim's last access to the release's last, and a claim of a slot someone holds is recorded (SHARED).
 *
 * What stands in for the pool around the code under test: the ledger (a count of pending tasks, no
 * entries), the task table (the real `RecordFields` over the harness's records and a real free-record
 * `Injector`; `releaseHandle` pushes the record to the free list), the hooks (the backlog), the pool's
 * event loop (a job queue the program runs: `queueMicrotask` is bound to it while the program runs), and
 * `Atomics.waitAsync`: the gate models it as the futex wait (the producer has nothing else to do, so it
 * blocks until notified), its promise a thenable that queues the continuation.
 *
 * @module
 */

import type { Int32View, WaitAsyncResult } from "../../../../lib/protocol/atomics.ts";
import { Injector } from "../../../../lib/protocol/injector.ts";
import { CACHE_LINE_WORDS } from "../../../../lib/protocol/layout.ts";
import { claimSlot, type ProducerChannel, producerChannel, releaseSlot } from "../../../../lib/protocol/producers.ts";
import { CompletionReader } from "../../../../lib/producer/completion.ts";
import { Marks } from "../../../../lib/worker/marks.ts";
import { RecordFields } from "../../../../lib/record/fields.ts";
import { serveModel, type ThreadRun, WaitGate } from "../../kernel/gate.ts";
import {
  GOT_WORDS,
  handleOf,
  PART_WORDS,
  PCAPACITY,
  PCONTROL_BYTES,
  PFREE_BYTES,
  PPart,
  PRECORD_WORDS,
  PRECORDS_BYTES,
  PRODUCERS_LAYOUT,
  PRole,
  PSLOTS,
  PWork,
  PWORK_BYTES,
  PWORK_WORDS,
} from "./layout.ts";

/** The gate, with `waitAsync` as a futex wait and the records' plain field accesses let through. */
class ProducersGate extends WaitGate {
  /** The program's job queue (its event loop), while it runs. */
  jobs: (() => void)[] = [];

  override waitAsync(view: Int32View, index: number, expected: number, _timeout?: number): WaitAsyncResult {
    // One scheduled step: compare, and block if equal, until a notify (the pool's producer then has
    // nothing to do but wait; a timeout is never asked for by completion.ts).
    if (this.wait(view, index, expected) === "not-equal") return { async: false, value: "not-equal" };
    const jobs = this.jobs;
    const woken = { then: (resume: () => void) => jobs.push(resume) };
    return { async: true, value: woken as unknown as Promise<"ok"> };
  }
  // The record's origin is a plain read (marks.ts), ordered by the publish of the task before the run:
  // not a step of the protocols under test.
  override read(view: Int32View, index: number): number {
    return view[index];
  }
  override write(view: Int32View, index: number, value: number): void {
    view[index] = value;
  }
}

function program({ buffer, thread, gate, role, setOp }: ThreadRun<ProducersGate>): void {
  if (role === PRole.NONE) return;
  const work = new Int32Array(buffer, PWORK_BYTES, PWORK_WORDS);
  const part = PWork.PART + thread * PART_WORDS;
  const control = new Int32Array(buffer, PCONTROL_BYTES, 3 * CACHE_LINE_WORDS);
  const channels = Array.from({ length: PSLOTS + 1 }, (_, s) => producerChannel(buffer, PRODUCERS_LAYOUT, s));
  const queues = channels.map((c) => new Injector(c.queue));
  const fields = new RecordFields(new Int32Array(buffer, PRECORDS_BYTES, PCAPACITY * PRECORD_WORDS), PRECORD_WORDS);
  const free = new Injector({ buffer, byteOffset: PFREE_BYTES, capacity: PCAPACITY });
  if (role === PRole.FINISHER) {
    const count = Atomics.load(work, part + PPart.COUNT);
    const table = { fields, indexOf: (handle: number) => handle & (PCAPACITY - 1) };
    const marks = new Marks({
      memory: { control, channels, sleep: undefined as never },
      words: new Int32Array(16).fill(-1),
      table: table as never,
      deque: undefined as never,
      levels: undefined as never,
      completions: queues,
      forks: undefined as never,
      runs: undefined as never,
    });
    for (let k = 0; k < count; k++) {
      setOp(k);
      const index = Atomics.load(work, part + PPart.TASKS + k);
      marks.publishDone(handleOf(index), index, false);
    }
    return;
  }
  if (role === PRole.CLAIMER) {
    const rounds = Atomics.load(work, part + PPart.SLOT);
    for (let r = 0; r < rounds; r++) {
      setOp(2 * r);
      const slot = claimSlot(buffer, PRODUCERS_LAYOUT);
      if (slot < 0) continue;
      if (Atomics.add(work, PWork.HOLDERS + slot, 1) > 0) {
        const n = Atomics.add(work, PWork.SHARED, 1);
        Atomics.store(work, PWork.SHARED + 1 + 2 * n, thread);
        Atomics.store(work, PWork.SHARED + 2 + 2 * n, slot);
      }
      setOp(2 * r + 1);
      releaseSlot(buffer, PRODUCERS_LAYOUT, slot);
      // Held until the release's last access (its store of FREE): code between two accesses runs with
      // that access, before any other thread's next one, so the count changes with the store.
      Atomics.sub(work, PWork.HOLDERS + slot, 1);
    }
    return;
  }
  if (role !== PRole.PRODUCER) throw new Error(`unknown role ${role}`);
  runProducer(thread, gate, work, control, channels, queues[Atomics.load(work, part + PPart.SLOT)], free);
}

/** A producer: its reader armed, then the jobs it queues run, until none of its tasks is pending. */
function runProducer(
  thread: number,
  gate: ProducersGate,
  work: Int32Array,
  control: Int32Array,
  channels: readonly ProducerChannel[],
  completions: Injector,
  free: Injector,
): void {
  const part = PWork.PART + thread * PART_WORDS;
  const got = PWork.GOT + thread * GOT_WORDS;
  const slot = Atomics.load(work, part + PPart.SLOT);
  const inFlight = Atomics.load(work, part + PPart.COUNT);
  let backlog = Atomics.load(work, part + PPart.BACKLOG);
  let received = 0;
  const table = {
    freeRecords: free,
    indexOf: (handle: number) => handle & (PCAPACITY - 1),
    releaseHandle(handle: number): boolean {
      received++;
      const n = Atomics.add(work, got, 1);
      if (n + 1 >= GOT_WORDS) throw new Error("too many completions to record");
      Atomics.store(work, got + 1 + n, handle);
      free.pushPatiently(handle & (PCAPACITY - 1));
      return true;
    },
    // No private cache here: every freed record goes straight to the shared free list above.
    flushCache: (): number => 0,
    holdFreed: (_hold: boolean): void => {},
  };
  const ledger = {
    placed: [],
    forgotten: new Set<number>(),
    get pending(): number {
      return backlog + inFlight - received;
    },
  };
  const hooks = {
    beforeDrain(): void {},
    freed(): void {
      // The backlog's turn: each task waiting for a record takes one if the free list has it.
      while (backlog > 0 && free.pop() >= 0) backlog--;
    },
    starved: () => backlog > 0,
    waitsForRoom: () => false,
    roomFree: () => false,
    terminated: () => false,
    // No linger: it is a timer, outside the jobs this harness schedules. Lingering, the reader is a main
    // thread slow to arm, which these interleavings already include; its timer's read is a drain.
    backlogLength: () => 0,
  };
  const reader = new CompletionReader({
    // No progress cells: no task of this model has a handler (the reader then touches none).
    memory: { control, channels, progress: new Int32Array(0) },
    channel: channels[slot],
    completions,
    table: table as never,
    ledger: ledger as never,
    buffers: undefined as never,
    hooks,
  });
  const jobs: (() => void)[] = [];
  gate.jobs = jobs;
  const queueMicrotask = globalThis.queueMicrotask;
  globalThis.queueMicrotask = (job: () => void) => jobs.push(job);
  // A job that read no completion and placed no backlog task after one that did neither either is a
  // spin (the re-check counts a push claimed and not yet published, the pop cannot take it): its first
  // access is a yield, so that the controller runs the pushing worker first (the pool's worker runs in
  // parallel; CHESS's treatment of a spin loop).
  const progress = () => received * 64 + backlog;
  let last = -1;
  try {
    reader.arm();
    while (jobs.length > 0) {
      gate.yieldNext = progress() === last;
      last = progress();
      jobs.shift()!();
    }
  } finally {
    globalThis.queueMicrotask = queueMicrotask;
  }
  if (ledger.pending !== 0) throw new Error(`the producer stopped with ${ledger.pending} task(s) pending`);
}

// Last: the gate class above must be defined before the first set-up message makes one.
await serveModel<ProducersGate>({
  program,
  gate: (buffer, thread, site) => new ProducersGate(buffer, thread, site),
});
