/**
 * A thread of the deque stress test: the owner pushes every id and pops some back; thieves steal one or
 * half from random deques (the owner's or another thief's) into their own deque and drain it. Every task
 * taken adds 1 to its id's counter, so the main thread can check that each id was taken exactly once.
 */
import { Deque, EMPTY, RETRY, Stealer } from "../../lib/protocol/deque.ts";
import { parentPort } from "../../lib/runtime/thread.ts";

export interface StressSetup {
  buffer: SharedArrayBuffer;
  /** Byte offsets of the deque regions: [owner's, thief 1's, …]. */
  regions: number[];
  capacity: number;
  /** Byte offset of the Int32Array of per-id take counts. */
  countsOffset: number;
  /** Byte offset of the control words: [0] owner done. */
  controlOffset: number;
  tasks: number;
  /** 0 = the owner, 1.. = thieves. */
  role: number;
  seed: number;
}

/** What a thread reports when it finishes. */
export interface StressReport {
  role: number;
  taken: number;
  steals: number;
  stealHalves: number;
  halfTasks: number;
  retries: number;
  fullPushes: number;
}

const port = parentPort();
port.onMessage((message) => {
  const setup = message as StressSetup;
  port.post(setup.role === 0 ? runOwner(setup) : runThief(setup));
});

function runOwner(s: StressSetup): StressReport {
  const counts = new Int32Array(s.buffer, s.countsOffset, s.tasks);
  const control = new Int32Array(s.buffer, s.controlOffset, 16);
  const deque = new Deque({ buffer: s.buffer, byteOffset: s.regions[0], capacity: s.capacity });
  const report: StressReport = {
    role: 0,
    taken: 0,
    steals: 0,
    stealHalves: 0,
    halfTasks: 0,
    retries: 0,
    fullPushes: 0,
  };
  let rng = s.seed | 1;
  const take = (id: number) => {
    Atomics.add(counts, id, 1);
    report.taken++;
  };
  for (let id = 0; id < s.tasks; id++) {
    while (!deque.push(id)) {
      report.fullPushes++;
      const got = deque.pop();
      if (got !== EMPTY) take(got);
    }
    rng ^= rng << 13;
    rng ^= rng >>> 17;
    rng ^= rng << 5;
    // Pop about one push in three, and now and then drain to the last task so pops race steals for it.
    if ((rng & 3) === 0) {
      const got = deque.pop();
      if (got !== EMPTY) take(got);
    } else if ((rng & 1023) === 1) {
      for (let got = deque.pop(); got !== EMPTY; got = deque.pop()) take(got);
    }
  }
  for (let got = deque.pop(); got !== EMPTY; got = deque.pop()) take(got);
  Atomics.store(control, 0, 1);
  return report;
}

function runThief(s: StressSetup): StressReport {
  const counts = new Int32Array(s.buffer, s.countsOffset, s.tasks);
  const control = new Int32Array(s.buffer, s.controlOffset, 16);
  const mine = new Deque({ buffer: s.buffer, byteOffset: s.regions[s.role], capacity: s.capacity });
  const victims = s.regions.map((byteOffset) => new Stealer({ buffer: s.buffer, byteOffset, capacity: s.capacity }));
  const report: StressReport = {
    role: s.role,
    taken: 0,
    steals: 0,
    stealHalves: 0,
    halfTasks: 0,
    retries: 0,
    fullPushes: 0,
  };
  let rng = (s.seed * (s.role + 7)) | 1;
  for (;;) {
    const ownerDone = Atomics.load(control, 0) === 1;
    let sawWork = false;
    for (let i = 0; i < victims.length; i++) {
      rng ^= rng << 13;
      rng ^= rng >>> 17;
      rng ^= rng << 5;
      const v = (rng >>> 1) % victims.length;
      if (v === s.role) continue;
      const result = (rng & 256) === 0 ? victims[v].steal() : victims[v].stealHalfInto(mine);
      if (result === RETRY) {
        report.retries++;
        sawWork = true;
      } else if (result !== EMPTY) {
        sawWork = true;
        if ((rng & 256) === 0) {
          report.steals++;
          Atomics.add(counts, result, 1);
          report.taken++;
        } else {
          report.stealHalves++;
          report.halfTasks += result;
        }
      }
    }
    // Drain our own deque (other thieves may be stealing from it at the same time).
    for (let got = mine.pop(); got !== EMPTY; got = mine.pop()) {
      Atomics.add(counts, got, 1);
      report.taken++;
      sawWork = true;
    }
    // Tasks only enter our deque through our own stealHalf, so once the owner is done and a full sweep
    // found nothing, nothing can still arrive for us; anything left elsewhere belongs to a live thread.
    if (ownerDone && !sawWork) return report;
  }
}
