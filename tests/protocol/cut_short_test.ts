/**
 * A throw can cut an operation of the deque or of the queue short at any call: a task that recursed deep
 * and then forks or joins reaches them from user code, and a stack overflow surfaces at whichever call
 * comes first past the limit. Each structure notes what an operation has claimed in plain fields, and its
 * repair completes the operation: nothing is lost, nothing duplicated, no position stays claimed.
 *
 * How: a binding of the shared-memory facade (`installSharedMemory`) throws at the N-th access, for every
 * N an operation makes (a throw at a call leaves every access after it undone, as an overflow does), and
 * the structure is then repaired and drained by its owner and by a second handle (a thief, another
 * thread's queue handle). The drained values must be exactly the ones not returned.
 */
import * as shippedDeque from "../../lib/protocol/deque.ts";
import * as shippedQueue from "../../lib/protocol/injector.ts";
import { dequeRegionBytes, injectorRegionBytes } from "../../lib/protocol/layout.ts";
import { CUT_MUTANTS, materializeMutant, removeMaterializedMutants } from "../mutants/mutants.ts";
import { assert, assertEquals, test } from "../_test.ts";
import { cutRun as cutAt } from "./_cut_at.ts";

type DequeModule = typeof shippedDeque;
type QueueModule = typeof shippedQueue;
type Deque = shippedDeque.Deque;
type Stealer = shippedDeque.Stealer;
type Injector = shippedQueue.Injector;
const { EMPTY, RETRY } = shippedDeque;
const { QUEUE_EMPTY } = shippedQueue;

/** A deque region, its owner (with notes in shared memory, as a worker's), a thief, and an heir's opener. */
function newDeque(m: DequeModule, capacity = 16): { owner: Deque; thief: Stealer; heir: () => Deque } {
  const region = { buffer: new SharedArrayBuffer(dequeRegionBytes(capacity)), byteOffset: 0, capacity };
  m.initDeque(region);
  const notes = new Int32Array(new SharedArrayBuffer(16));
  // After the owner's death: the main thread's handle on the same deque and the dead owner's notes.
  return { owner: new m.Deque(region, notes), thief: new m.Stealer(region), heir: () => new m.Deque(region, notes) };
}

/** Takes everything: the thief first (it must not need the owner's repair to see what is published), then the owner. */
function drainDeque(owner: Deque, thief: Stealer, repair: boolean): number[] {
  const got: number[] = [];
  for (let v = thief.steal(); v !== EMPTY; v = thief.steal()) if (v !== RETRY) got.push(v);
  if (repair) owner.repair();
  for (let v = owner.pop(); v !== EMPTY; v = owner.pop()) got.push(v);
  for (let v = thief.steal(); v !== EMPTY; v = thief.steal()) if (v !== RETRY) got.push(v);
  return got;
}

/** Every value of `expected` exactly once in `got` (in any order). */
function sameSet(got: number[], expected: number[], what: string): void {
  assertEquals([...got].sort((a, b) => a - b), [...expected].sort((a, b) => a - b), what);
}

/**
 * A pop given a word to note its value in (`into[1]`): a pop cut short noted nothing (its repair puts the
 * value back), and one that returned a value noted it. A thread that dies right after such a pop returns
 * has the value in its note and nowhere else; a note the caller made after the return would leave that
 * return, and its own call, where the value was in neither (the held mark, marks.ts popHeld).
 */
function checkNoted(into: Int32Array, r: { cut: boolean; value?: unknown }, empty: number, what: string): void {
  const expected = r.cut || r.value === empty ? -1 : r.value;
  assertEquals([into[0], into[1], into[2]], [-1, expected, -1], `${what}: the value noted`);
}

/** Cuts `op` at every access it makes (0, 1, 2, ... until one run completes uncut). */
function everyCut(run: (n: number) => boolean): number {
  let n = 0;
  while (run(n)) n++;
  return n;
}

/**
 * A deque pop cut short at any access, sizes 0 to 3, repaired explicitly or by the owner's next operation;
 * or (`died`) the owner died there: its handle is never used again, and an heir's handle on its notes (the
 * main thread's, recovery.ts) repairs.
 */
function checkDequePop(m: DequeModule, died = false): number {
  let cuts = 0;
  for (const size of [0, 1, 2, 3]) {
    for (const explicit of died ? [true] : [true, false]) {
      cuts += everyCut((n) => {
        const deque = newDeque(m);
        const { thief } = deque;
        let owner = deque.owner;
        const values = Array.from({ length: size }, (_, i) => 100 + i);
        for (const v of values) owner.push(v);
        // The pop notes what it takes (as a worker's held mark, marks.ts popHeld) before it is whole.
        const into = new Int32Array(new SharedArrayBuffer(12)).fill(-1);
        const r = cutAt(n, () => owner.pop(into, 1));
        const returned = !r.cut && r.value !== EMPTY ? [r.value!] : [];
        checkNoted(into, r, EMPTY, `pop, size ${size}, cut at access ${n}`);
        if (died) owner = deque.heir();
        const got = drainDeque(owner, thief, explicit);
        sameSet([...got, ...returned], values, `pop, size ${size}, cut at access ${n}`);
        assert(!owner.cutShort, `pop, size ${size}, cut at ${n}: still cut short after the drain`);
        return r.cut;
      });
    }
  }
  return cuts;
}

/** A deque push cut short at any access published nothing, and the next push works (by an heir, if `died`). */
function checkDequePush(m: DequeModule, died = false): number {
  let cuts = 0;
  for (const size of [0, 1, 7]) {
    cuts += everyCut((n) => {
      const deque = newDeque(m);
      const { thief } = deque;
      let owner = deque.owner;
      const values = Array.from({ length: size }, (_, i) => 100 + i);
      for (const v of values) owner.push(v);
      const r = cutAt(n, () => owner.push(7));
      const pushed = !r.cut && r.value === true ? [7] : [];
      if (died) (owner = deque.heir()).repair();
      assert(owner.push(8), `push, size ${size}, cut at ${n}: the next push`);
      sameSet(drainDeque(owner, thief, false), [...values, ...pushed, 8], `push, size ${size}, cut at ${n}`);
      return r.cut;
    });
  }
  return cuts;
}

/**
 * A steal-half cut short at any access: every task it claimed reaches the thief's deque once repaired (by
 * the thief's next operation, or, if it `died` there, by an heir's handle on its deque's notes).
 */
function checkStealHalf(m: DequeModule, died = false): number {
  let cuts = 0;
  for (const size of [1, 2, 3, 5]) {
    for (const dstSize of [0, 2]) {
      cuts += everyCut((n) => {
        const victim = newDeque(m);
        const dst = newDeque(m);
        const values = Array.from({ length: size }, (_, i) => 100 + i);
        const own = Array.from({ length: dstSize }, (_, i) => 200 + i);
        for (const v of values) victim.owner.push(v);
        for (const v of own) dst.owner.push(v);
        const r = cutAt(n, () => victim.thief.stealHalfInto(dst.owner));
        // The victim's owner and other thieves go on without the thief's repair; the thief repairs on its
        // next operation on its own deque.
        const fromVictim = drainDeque(victim.owner, victim.thief, false);
        const fromDst = died ? drainDeque(dst.heir(), dst.thief, true) : drainDeque(dst.owner, dst.thief, false);
        sameSet(
          [...fromVictim, ...fromDst],
          [...values, ...own],
          `steal-half, size ${size}, dst ${dstSize}, cut at ${n}`,
        );
        return r.cut;
      });
    }
  }
  return cuts;
}

function newQueue(m: QueueModule, capacity = 8): { buffer: SharedArrayBuffer; byteOffset: number; capacity: number } {
  const region = { buffer: new SharedArrayBuffer(injectorRegionBytes(capacity)), byteOffset: 0, capacity };
  m.initInjector(region);
  return region;
}

function drainQueue(q: Injector): number[] {
  const got: number[] = [];
  for (let v = q.pop(); v !== QUEUE_EMPTY; v = q.pop()) got.push(v);
  return got;
}

/**
 * A queue push or pop cut short at any access: repaired by its handle's next operation; or (`died`) its
 * thread died there: that handle is never used again, and an heir's handle on its notes (the main
 * thread's, recovery.ts) repairs.
 */
function checkQueue(m: QueueModule, died = false): number {
  let cuts = 0;
  for (const op of ["push", "pop", "pushPatiently"] as const) {
    for (const size of [0, 1, 3]) {
      cuts += everyCut((n) => {
        const region = newQueue(m);
        const notes = new Int32Array(new SharedArrayBuffer(16));
        let mine = new m.Injector(region, notes);
        const other = new m.Injector(region); // another thread's handle on the same queue
        const values = Array.from({ length: size }, (_, i) => 100 + i);
        for (const v of values) other.push(v);
        const into = new Int32Array(new SharedArrayBuffer(12)).fill(-1);
        const r = cutAt(
          n,
          () => op === "pop" ? mine.pop(into, 1) : op === "push" ? mine.push(7) : mine.pushPatiently(7),
        );
        if (op === "pop") checkNoted(into, r, QUEUE_EMPTY, `pop, size ${size}, cut at ${n}`);
        const added = op !== "pop" && !r.cut && r.value !== false ? [7] : [];
        const returned = op === "pop" && !r.cut && r.value !== QUEUE_EMPTY ? [r.value as number] : [];
        if (died) {
          mine = new m.Injector(region, notes);
          mine.repair();
        }
        // The cut handle's next operation repairs first.
        if (r.cut) assert(mine.push(9), `${op}, size ${size}, cut at ${n}: the next push`);
        else other.push(9);
        const got = [...drainQueue(other), ...drainQueue(mine), ...drainQueue(other)];
        // A push cut short after its claim is completed by the repair: its value is in the queue after all.
        const completed = op !== "pop" && r.cut && got.includes(7) ? [7] : [];
        sameSet([...got, ...returned], [...values, ...added, ...completed, 9], `${op}, size ${size}, cut at ${n}`);
        assert(!mine.cutShort, `${op}, size ${size}, cut at ${n}: still cut short`);
        // No slot stays claimed: the queue holds its full capacity again.
        for (let i = 0; i < region.capacity; i++) assert(other.push(i), `${op}, cut at ${n}: push ${i} of a full lap`);
        assertEquals(drainQueue(mine).length, region.capacity, `${op}, cut at ${n}: a full lap`);
        return r.cut;
      });
    }
  }
  return cuts;
}

test("a deque pop cut short at any access loses and duplicates nothing once repaired (sizes 0 to 3, repair by the next op or explicitly)", () => {
  assert(checkDequePop(shippedDeque) > 20, "too few cut points");
});

test("a deque push cut short at any access published nothing, and the next push works", () => {
  assert(checkDequePush(shippedDeque) > 5, "too few cut points");
});

test("a steal-half cut short at any access: every task it claimed reaches the thief's deque once repaired", () => {
  assert(checkStealHalf(shippedDeque) > 20, "too few cut points");
});

test("a queue push or pop cut short at any access: once its handle's next operation repairs it, nothing is lost or duplicated and no slot stays claimed", () => {
  assert(checkQueue(shippedQueue) > 20, "too few cut points");
});

test("a deque pop whose owner dies at any access loses and duplicates nothing once an heir repairs it from the owner's notes", () => {
  assert(checkDequePop(shippedDeque, true) > 10, "too few death points");
});

test("a deque push whose owner dies at any access published nothing, and an heir's next push works", () => {
  assert(checkDequePush(shippedDeque, true) > 5, "too few death points");
});

test("a steal-half whose thief dies at any access: every task it claimed reaches the thief's deque once an heir repairs it", () => {
  assert(checkStealHalf(shippedDeque, true) > 20, "too few death points");
});

test("a queue push or pop whose thread dies at any access: once an heir repairs it from the notes, nothing is lost or duplicated and no slot stays claimed", () => {
  assert(checkQueue(shippedQueue, true) > 20, "too few death points");
});

test("the cut-short checks catch every repair mutant (tests/mutants/mutants.ts, CUT_MUTANTS)", async () => {
  const missed: string[] = [];
  try {
    for (const mutant of CUT_MUTANTS) {
      const url = materializeMutant(mutant).href;
      const m = await import(url);
      // Cut short, then died: a mutant caught either way is caught.
      const run = mutant.module === "deque.ts"
        ? () => {
          for (const died of [false, true]) {
            checkDequePop(m, died);
            checkDequePush(m, died);
            checkStealHalf(m, died);
          }
        }
        : () => {
          checkQueue(m, false);
          checkQueue(m, true);
        };
      let caught: string | undefined;
      try {
        run();
      } catch (error) {
        caught = (error as Error).message;
      }
      if (caught === undefined) missed.push(mutant.name);
      else {
        // The assertion's prefix is left out: a caught mutant is a pass, and CI's excerpt of a failed run
        // opens at the first line that says "failed".
        const why = caught.replace(/^assertion failed: /, "").slice(0, 160);
        console.log(`cut-short mutant '${mutant.name}' caught: ${why}`);
      }
    }
  } finally {
    removeMaterializedMutants();
  }
  assertEquals(missed, [], "repair mutants no check caught");
});
