/**
 * A thread of the traced stress run (`spec/trace/run.ts`, scenario `stress`): the deque and the queue of
 * the `lib/` under test on real threads, every access recorded (role `"run"`).
 *
 * Deques: thread 0 owns deque 0 and pushes ids 1..ids, popping about one in two and now and then draining
 * to the last task (so that its pops race thieves for it); every other thread steals one task or half of
 * another deque (the owner's three times in four, else another thief's) into its own, and pops its own. Queue: every thread
 * pushes up to three of its values every fourth round into the 4-slot queue (a full queue makes push return false:
 * it tries later) and pops one. Every id and value taken adds 1 to its counter (plain `Atomics` on words outside the
 * traced regions: bookkeeping, not protocol), so the supervisor's report can say whether each was taken
 * exactly once. A thread ends when the owner is done, the deques are empty and every value was popped.
 *
 * @module
 */
import { parentPort, workerData } from "node:worker_threads";
import { traceThisThread } from "./binding.ts";

interface Setup {
  root: string;
  buffer: SharedArrayBuffer;
  role: number;
  threads: number;
  dequeBytes: number;
  dequeCapacity: number;
  queueAt: number;
  queueCapacity: number;
  controlAt: number;
  countsAt: number;
  ids: number;
  valuesEach: number;
  seed: number;
}
interface DequeLike {
  push(v: number): boolean;
  pop(): number;
}
interface StealerLike {
  steal(): number;
  stealHalfInto(dst: DequeLike): number;
}
interface QueueLike {
  push(v: number): boolean;
  pop(): number;
}

const s = workerData as Setup;
await traceThisThread(s.root, "run");
const dq = await import(new URL("lib/protocol/deque.ts", s.root).href) as {
  Deque: new (r: object) => DequeLike;
  Stealer: new (r: object) => StealerLike;
  EMPTY: number;
  RETRY: number;
};
const iq = await import(new URL("lib/protocol/injector.ts", s.root).href) as {
  Injector: new (r: object) => QueueLike;
  QUEUE_EMPTY: number;
};

// control[0]: the owner has pushed every id; control[1]: values popped so far; control[2]: threads started.
const control = new Int32Array(s.buffer, s.controlAt, 16);
const idCounts = new Int32Array(s.buffer, s.countsAt, s.ids + 1);
const valueCounts = new Int32Array(s.buffer, s.countsAt + 4 * (s.ids + 1), s.threads * s.valuesEach + 1);
const region = (d: number) => ({ buffer: s.buffer, byteOffset: d * s.dequeBytes, capacity: s.dequeCapacity });
const mine = new dq.Deque(region(s.role));
const victims = Array.from({ length: s.threads }, (_, d) => new dq.Stealer(region(d)));
const queue = new iq.Injector({ buffer: s.buffer, byteOffset: s.queueAt, capacity: s.queueCapacity });
const totalValues = s.threads * s.valuesEach;

let rng = s.seed | 1;
const next = (): number => {
  rng ^= rng << 13;
  rng ^= rng >>> 17;
  rng ^= rng << 5;
  return rng >>> 0;
};
const takeId = (id: number) => void Atomics.add(idCounts, id, 1);
let produced = 0;
// One queue round: push up to three of this thread's values (a full queue makes push return false: it
// tries again next round), then pop one.
const queueRound = (): void => {
  for (let k = 0; k < 3 && produced < s.valuesEach; k++) {
    if (!queue.push(s.role * s.valuesEach + produced + 1)) break;
    produced++;
  }
  const v = queue.pop();
  if (v !== iq.QUEUE_EMPTY) {
    Atomics.add(valueCounts, v, 1);
    Atomics.add(control, 1, 1);
  }
};
const popOwn = (): boolean => {
  const got = mine.pop();
  if (got === dq.EMPTY) return false;
  takeId(got);
  return true;
};

// Start together: a thread starts tens of milliseconds after the one before it, and an owner that started
// alone would push and pop every id before any thief arrived.
Atomics.add(control, 2, 1);
while (Atomics.load(control, 2) < s.threads) Atomics.wait(control, 15, 0, 0.1);

let pushed = 0;
let idle = 0;
for (let rounds = 0;; rounds++) {
  let busy = false;
  if (s.role === 0 && pushed < s.ids) {
    busy = true;
    if (mine.push(pushed + 1)) pushed++;
    else popOwn();
    const r = next();
    if ((r & 1) === 0) popOwn();
    else if ((r & 15) === 1) { while (popOwn()); }
    if (pushed === s.ids) Atomics.store(control, 0, 1);
  } else {
    // Mostly the owner's deque (where the pushes are), now and then another thief's.
    const r = next();
    const v = (r & 3) !== 0 ? 0 : (r >>> 2) % s.threads;
    if (v !== s.role) {
      const half = (next() & 1) === 0;
      const got = half ? victims[v].stealHalfInto(mine) : victims[v].steal();
      if (got === dq.RETRY) busy = true;
      else if (got !== dq.EMPTY) {
        busy = true;
        if (!half) takeId(got);
      }
    }
    if ((busy || (rounds & 3) === 0) && popOwn()) busy = true;
  }
  // The queue every fourth round: its accesses would otherwise crowd out the deques'.
  if ((rounds & 3) === 0 || Atomics.load(control, 0) === 1) queueRound();
  // Long idle (the owner has not pushed for a while, or the run is ending): wait a little for the others,
  // or an idle thread's empty steals would fill the log.
  idle = busy ? 0 : idle + 1;
  if (idle > 64) Atomics.wait(control, 15, 0, 0.05);
  if (
    !busy && Atomics.load(control, 0) === 1 && produced === s.valuesEach &&
    Atomics.load(control, 1) === totalValues && rounds % 4 === 3
  ) {
    // A last sweep of every deque (a steal-half may have moved tasks into a deque after its owner looked).
    let found = false;
    for (let d = 0; d < s.threads; d++) {
      if (d === s.role) continue;
      for (let got = victims[d].steal(); got !== dq.EMPTY; got = victims[d].steal()) {
        if (got !== dq.RETRY) takeId(got);
        found = true;
      }
    }
    while (popOwn()) found = true;
    if (!found) break;
  }
}
// Thread 0 waits until the others are done, then reports the counts for everyone.
parentPort!.postMessage({ failure: "" });
