/**
 * A thread of the stress mode: real parallelism, no scheduler (the facade's production binding). Per
 * round it waits for the controller's ROUND word, meets the other threads at a spinning barrier, runs its
 * program stamping each operation's invocation and response with a shared clock (`Atomics.add` on one
 * word, so stamps are a total order consistent with real time), writes the results, and reports done.
 *
 * @module
 */

import { parentPort } from "../../../../lib/runtime/thread.ts";
import { DequeWords } from "../../../../lib/protocol/layout.ts";
import { OpCode } from "./layout.ts";
import { StressLayout, type StressSetup } from "./stress.ts";

interface DequeModule {
  Deque: new (region: Region) => { push(v: number): boolean; pop(): number };
  Stealer: new (region: Region) => { steal(): number; stealHalfInto(dst: unknown): number };
}
interface Region {
  buffer: SharedArrayBuffer;
  byteOffset: number;
  capacity: number;
}

const port = await parentPort();
port.onMessage(async (message) => {
  const setup = message as StressSetup;
  const mod = await import(setup.variant) as DequeModule;
  port.post({ ready: setup.thread });
  loop(setup, mod);
});

function loop(setup: StressSetup, mod: DequeModule): void {
  const ctl = new Int32Array(setup.buffer, 0, StressLayout.CTL_WORDS);
  const L = StressLayout;
  let round = 0;
  for (;;) {
    let r: number;
    while ((r = Atomics.load(ctl, L.ROUND)) === round) Atomics.wait(ctl, L.ROUND, round);
    round = r;
    if (Atomics.load(ctl, L.SHUTDOWN) !== 0) {
      Atomics.add(ctl, L.EXITED, 1);
      Atomics.notify(ctl, L.EXITED);
      return;
    }
    const capacity = Atomics.load(ctl, L.CAPACITY);
    const threads = Atomics.load(ctl, L.THREADS);
    if (setup.thread >= threads) {
      // Not in this round.
      Atomics.add(ctl, L.DONE, 1);
      Atomics.notify(ctl, L.DONE);
      continue;
    }
    const victim = { buffer: setup.buffer, byteOffset: L.region(0), capacity };
    const me = setup.thread;
    const owner = me === 0 ? new mod.Deque(victim) : null;
    const stealer = me === 0 ? null : new mod.Stealer(victim);
    const dstRegion = { buffer: setup.buffer, byteOffset: L.region(me), capacity };
    const dst = me === 0 ? null : new mod.Deque(dstRegion);
    const dstWords = new Int32Array(setup.buffer, L.region(me), DequeWords.slots + capacity);
    const prog = L.prog(me);
    const out = L.results(me);
    const n = Atomics.load(ctl, prog);
    const jitter = Atomics.load(ctl, L.JITTER);
    let x = (Atomics.load(ctl, L.JITTER_SEED) + me * 0x9e3779b1) | 0 || 1;
    let sink = 0;
    // Barrier: everyone starts together, so operations overlap for real.
    // Spin briefly (peers on other cores arrive within microseconds), then sleep, so that a peer the OS
    // has not scheduled yet gets the core instead of a spinning thread.
    if (Atomics.add(ctl, L.ARRIVED, 1) + 1 === threads) Atomics.notify(ctl, L.ARRIVED);
    let arrived: number;
    let spins = 0;
    while ((arrived = Atomics.load(ctl, L.ARRIVED)) < threads) {
      if (++spins > 5000) Atomics.wait(ctl, L.ARRIVED, arrived, 1);
    }
    // Everyone is awake now; a short pure spin lines the starts up to within a few hundred nanoseconds
    // (waking from a sleep takes tens of microseconds, far longer than a whole program). Bounded, so a
    // peer without a core delays this thread only briefly.
    Atomics.add(ctl, L.RUNNING, 1);
    for (let i = 0; i < 200_000 && Atomics.load(ctl, L.RUNNING) < threads; i++) { /* spin */ }
    for (let k = 0; k < n; k++) {
      const code = Atomics.load(ctl, prog + 1 + 2 * k);
      const arg = Atomics.load(ctl, prog + 2 + 2 * k);
      const o = out + k * L.RESULT_WORDS;
      let room = 0;
      let db = 0;
      if (code === OpCode.STEAL_HALF) {
        db = Atomics.load(dstWords, DequeWords.bottom);
        room = capacity - ((db - Atomics.load(dstWords, DequeWords.top)) | 0);
      }
      if (jitter > 0) {
        x ^= x << 13;
        x ^= x >>> 17;
        x ^= x << 5;
        const spins = (x >>> 0) % jitter;
        for (let i = 0; i < spins; i++) sink = (sink + i) | 0;
      }
      const inv = Atomics.add(ctl, L.CLOCK, 1);
      let ret: number;
      if (code === OpCode.PUSH) ret = owner!.push(arg) ? 1 : 0;
      else if (code === OpCode.POP) ret = owner!.pop();
      else if (code === OpCode.STEAL) ret = stealer!.steal();
      else ret = stealer!.stealHalfInto(dst);
      const res = Atomics.add(ctl, L.CLOCK, 1);
      Atomics.store(ctl, o, ret);
      Atomics.store(ctl, o + 1, inv);
      Atomics.store(ctl, o + 2, res);
      Atomics.store(ctl, o + 3, room);
      for (let i = 0; i < ret && code === OpCode.STEAL_HALF; i++) {
        Atomics.store(ctl, o + 4 + i, Atomics.load(dstWords, DequeWords.slots + (((db + i) | 0) & (capacity - 1))));
      }
    }
    if (sink === 0x7fffffff) console.log(""); // keeps the busy-wait from being optimised away
    Atomics.add(ctl, L.DONE, 1);
    Atomics.notify(ctl, L.DONE);
  }
}
