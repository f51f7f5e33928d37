/**
 * Model-based test of the deque on one thread: random sequences of push / pop / steal / stealHalfInto
 * against a plain-array model, with indices started anywhere in int32 (near 2^31 to cross the wrap).
 */
import fc from "fast-check";
import { Deque, EMPTY, initDeque, MAX_TASK_VALUE, RETRY, Stealer } from "../../lib/protocol/deque.ts";
import { dequeRegionBytes } from "../../lib/protocol/layout.ts";
import { assert, assertEquals, test } from "../_test.ts";

const SEED = Number(readEnv("FILCH_SEED") ?? 20261121);
const RUNS = Number(readEnv("FILCH_MODEL_RUNS") ?? 300);

function readEnv(name: string): string | undefined {
  const process = (globalThis as { process?: { env: Record<string, string | undefined> } }).process;
  return process?.env[name];
}

/** Two deques (a victim and a thief's own) and their array models. */
interface Real {
  victim: Deque;
  victimStealer: Stealer;
  mine: Deque;
  mineStealer: Stealer;
}
interface Model {
  victim: number[]; // oldest first
  mine: number[];
  capacity: number;
  nextValue: number;
}

class Push implements fc.Command<Model, Real> {
  readonly onMine: boolean;
  constructor(onMine: boolean) {
    this.onMine = onMine;
  }
  check(): boolean {
    return true;
  }
  run(m: Model, r: Real): void {
    const value = m.nextValue++ % (MAX_TASK_VALUE + 1);
    const list = this.onMine ? m.mine : m.victim;
    const pushed = (this.onMine ? r.mine : r.victim).push(value);
    assertEquals(pushed, list.length < m.capacity, "push reports full exactly when the model is full");
    if (pushed) list.push(value);
  }
  toString(): string {
    return `push(${this.onMine ? "mine" : "victim"})`;
  }
}

class Pop implements fc.Command<Model, Real> {
  readonly onMine: boolean;
  constructor(onMine: boolean) {
    this.onMine = onMine;
  }
  check(): boolean {
    return true;
  }
  run(m: Model, r: Real): void {
    const list = this.onMine ? m.mine : m.victim;
    const got = (this.onMine ? r.mine : r.victim).pop();
    assertEquals(got, list.length === 0 ? EMPTY : list.pop(), "pop returns the newest task (LIFO)");
  }
  toString(): string {
    return `pop(${this.onMine ? "mine" : "victim"})`;
  }
}

class Steal implements fc.Command<Model, Real> {
  check(): boolean {
    return true;
  }
  run(m: Model, r: Real): void {
    const got = r.victimStealer.steal();
    assert(got !== RETRY, "an uncontended steal never reports RETRY");
    assertEquals(got, m.victim.length === 0 ? EMPTY : m.victim.shift(), "steal returns the oldest task (FIFO)");
  }
  toString(): string {
    return "steal(victim)";
  }
}

class StealHalf implements fc.Command<Model, Real> {
  check(): boolean {
    return true;
  }
  run(m: Model, r: Real): void {
    const got = r.victimStealer.stealHalfInto(r.mine);
    const room = m.capacity - m.mine.length;
    const want = Math.min(m.victim.length - (m.victim.length >> 1), room);
    if (want <= 0) {
      assertEquals(got, EMPTY, "stealHalf with nothing to take or no room reports EMPTY");
      return;
    }
    assertEquals(got, want, "stealHalf moves ceil(n/2) tasks, bounded by the room in dst");
    m.mine.push(...m.victim.splice(0, want));
  }
  toString(): string {
    return "stealHalfInto(mine)";
  }
}

class Lengths implements fc.Command<Model, Real> {
  check(): boolean {
    return true;
  }
  run(m: Model, r: Real): void {
    assertEquals(r.victim.length, m.victim.length, "victim length is exact when quiescent");
    assertEquals(r.mineStealer.length, m.mine.length, "dst length is exact when quiescent");
    assertEquals(r.mine.length, m.mine.length, "the owner handle's length too (a lazy join asks it)");
  }
  toString(): string {
    return "lengths";
  }
}

const commands = [
  fc.boolean().map((b) => new Push(b)),
  fc.boolean().map((b) => new Pop(b)),
  fc.constant(new Steal()),
  fc.constant(new StealHalf()),
  fc.constant(new Lengths()),
];

const setup = fc.record({
  capacityLog2: fc.integer({ min: 1, max: 4 }),
  // Anywhere in int32, with extra weight just below the wrap at 2^31.
  start: fc.oneof(
    fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
    fc.integer({ min: 2 ** 31 - 40, max: 2 ** 31 - 1 }),
  ),
  start2: fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
  firstValue: fc.oneof(fc.nat(), fc.constant(MAX_TASK_VALUE - 20)),
});

test(`deque agrees with an array model for random push/pop/steal/stealHalf sequences (seed ${SEED}, ${RUNS} runs)`, () => {
  fc.assert(
    fc.property(setup, fc.commands(commands, { maxCommands: 120, size: "max" }), (s, cmds) => {
      const capacity = 2 ** s.capacityLog2;
      const bytes = dequeRegionBytes(capacity);
      const buffer = new SharedArrayBuffer(2 * bytes);
      const victimRegion = { buffer, byteOffset: 0, capacity };
      const mineRegion = { buffer, byteOffset: bytes, capacity };
      initDeque(victimRegion, s.start);
      initDeque(mineRegion, s.start2);
      const real: Real = {
        victim: new Deque(victimRegion),
        victimStealer: new Stealer(victimRegion),
        mine: new Deque(mineRegion),
        mineStealer: new Stealer(mineRegion),
      };
      fc.modelRun(() => ({ model: { victim: [], mine: [], capacity, nextValue: s.firstValue }, real }), cmds);
    }),
    { seed: SEED, numRuns: RUNS },
  );
});

test("indices cross the int32 wrap: 1,000 push/steal rounds starting at 2^31 - 3 keep FIFO and LIFO order", () => {
  const region = { buffer: new SharedArrayBuffer(dequeRegionBytes(4)), byteOffset: 0, capacity: 4 };
  initDeque(region, 2 ** 31 - 3);
  const owner = new Deque(region);
  const thief = new Stealer(region);
  let next = 0;
  let expectSteal = 0;
  for (let round = 0; round < 1000; round++) {
    assert(owner.push(next++), "push into a deque with room");
    assert(owner.push(next++), "push into a deque with room");
    assertEquals(thief.steal(), expectSteal, "steal takes the oldest across the wrap");
    expectSteal += 2;
    assertEquals(owner.pop(), next - 1, "pop takes the newest across the wrap");
  }
  const words = new Int32Array(region.buffer);
  assert(words[0] < 0, "top wrapped past 2^31 into negative int32");
});
