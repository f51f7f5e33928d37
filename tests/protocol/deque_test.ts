/**
 * Single-thread unit tests of the shipped deque (`lib/protocol/deque.ts`) on plain shared memory: the
 * properties that the model test (`deque_model_test.ts`, one thread, no race), the cut-short checks
 * (`cut_short_test.ts`) and the interleaving harness do not pin on their own, each named for what it pins.
 * Written for StrykerJS's survivors (tests/stryker/, target `lib/protocol/deque.ts`).
 *
 * A race is played on one thread: a binding of the shared-memory facade (`installSharedMemory`) runs
 * another handle's whole operation just before the N-th access of the operation under test (the other
 * handle's accesses pass straight through), which is the schedule "the other thread ran in that gap". A
 * throw at the N-th access instead cuts the operation short there, as a stack overflow would.
 */
import { atomicsBinding, installSharedMemory, type SharedMemory } from "../../lib/protocol/atomics.ts";
import {
  Deque,
  EMPTY,
  initDeque,
  MAX_TASK_VALUE,
  repairAbandonedPop,
  RETRY,
  Stealer,
} from "../../lib/protocol/deque.ts";
import { dequeRegionBytes, DequeWords } from "../../lib/protocol/layout.ts";
import { assert, assertEquals, assertThrows, test } from "../_test.ts";

type Region = { buffer: SharedArrayBuffer; byteOffset: number; capacity: number };

/** A fresh deque region of `capacity` slots with both indices at `start`. */
function region(capacity: number, start = 0): Region {
  const r = { buffer: new SharedArrayBuffer(dequeRegionBytes(capacity)), byteOffset: 0, capacity };
  initDeque(r, start);
  return r;
}

/** Two regions in one buffer (a victim and a thief's own deque), as in a pool. */
function twoRegions(capacity: number): [Region, Region] {
  const bytes = dequeRegionBytes(capacity);
  const buffer = new SharedArrayBuffer(2 * bytes);
  const a = { buffer, byteOffset: 0, capacity };
  const b = { buffer, byteOffset: bytes, capacity };
  initDeque(a);
  initDeque(b);
  return [a, b];
}

/** `[top, bottom]` of a region, read directly. */
function indices(r: Region): [number, number] {
  const words = new Int32Array(r.buffer, r.byteOffset);
  return [words[DequeWords.top], words[DequeWords.bottom]];
}

/** Sets `top` and `bottom` of a region directly (a state another thread's operation leaves for a moment). */
function setIndices(r: Region, top: number, bottom: number): void {
  const words = new Int32Array(r.buffer, r.byteOffset);
  words[DequeWords.top] = top;
  words[DequeWords.bottom] = bottom;
}

/** Thrown at the chosen access to cut an operation short. */
class Cut extends Error {}

/**
 * Runs `op` with a facade that, just before its `n`-th shared access (from 0; `pause` not counted), runs
 * `between` (whose own accesses are not counted and pass straight through), or throws {@link Cut} if
 * `between` is "cut"; `actions` may name several accesses. Returns what `op` returned, or `Cut` if it was
 * cut short.
 */
function atAccesses<T>(actions: Record<number, (() => void) | "cut">, op: () => T): T | typeof Cut {
  let count = 0;
  let inside = false;
  const binding = {} as Record<string, unknown>;
  for (const key of Object.keys(atomicsBinding) as (keyof SharedMemory)[]) {
    const real = atomicsBinding[key] as (...args: unknown[]) => unknown;
    binding[key] = (...args: unknown[]) => {
      const between = !inside && key !== "pause" ? actions[count++] : undefined;
      if (between !== undefined) {
        if (between === "cut") throw new Cut(`cut at access ${count - 1}`);
        inside = true;
        try {
          between();
        } finally {
          inside = false;
        }
      }
      return real(...args);
    };
  }
  const restore = installSharedMemory(binding as unknown as SharedMemory);
  try {
    return op();
  } catch (error) {
    if (error instanceof Cut) return Cut;
    throw error;
  } finally {
    restore();
  }
}

/** {@link atAccesses} with one action, just before access `n`. */
function atAccess<T>(n: number, between: (() => void) | "cut", op: () => T): T | typeof Cut {
  return atAccesses({ [n]: between }, op);
}

/** Everything left in a deque: the thief's steals (oldest first), then the owner's pops. */
function drain(owner: Deque, thief: Stealer): number[] {
  const got: number[] = [];
  for (let v = thief.steal(); v !== EMPTY; v = thief.steal()) if (v !== RETRY) got.push(v);
  for (let v = owner.pop(); v !== EMPTY; v = owner.pop()) got.push(v);
  return got;
}

test("a fresh deque has top = bottom = the initial index and nothing to pop or steal", () => {
  const r = region(4, 12345);
  assertEquals(indices(r), [12345, 12345], "both indices start there");
  assertEquals(new Deque(r).pop(), EMPTY, "nothing to pop");
  assertEquals(new Stealer(r).steal(), EMPTY, "nothing to steal");
  assertEquals(indices(r), [12345, 12345], "an empty pop and steal leave the indices as they were");
});

test("initDeque accepts every int32 as the initial index, the extremes included", () => {
  for (const start of [-(2 ** 31), 2 ** 31 - 1, -1]) {
    const r = region(2, start);
    assertEquals(indices(r), [start, start], `start ${start}`);
  }
});

test("repairAbandonedPop sets bottom back to top only when a pop left it below top", () => {
  const fresh = region(4, 10);
  assertEquals(repairAbandonedPop(fresh), false, "an empty deque needs no repair");
  assertEquals(indices(fresh), [10, 10], "and is left as it was");

  const full = region(4, 10);
  const owner = new Deque(full);
  owner.push(1);
  owner.push(2);
  assertEquals(repairAbandonedPop(full), false, "a deque holding tasks needs no repair");
  assertEquals(indices(full), [10, 12], "and keeps them");

  const abandoned = region(4, 10);
  setIndices(abandoned, 10, 9); // a pop of an empty deque reserved bottom - 1 and died there
  assertEquals(repairAbandonedPop(abandoned), true, "a bottom below top is repaired");
  assertEquals(indices(abandoned), [10, 10], "to top: empty");
});

test("repairAbandonedPop compares the indices by wrapping difference, across 2^31", () => {
  const below = region(4);
  setIndices(below, -(2 ** 31), 2 ** 31 - 1); // bottom one below top across the wrap
  assertEquals(repairAbandonedPop(below), true, "bottom = top - 1 across the wrap is repaired");
  assertEquals(indices(below), [-(2 ** 31), -(2 ** 31)], "to top");

  const holding = region(4);
  setIndices(holding, 2 ** 31 - 1, -(2 ** 31)); // one task across the wrap
  assertEquals(repairAbandonedPop(holding), false, "one task across the wrap is not an abandoned pop");
  assertEquals(indices(holding), [2 ** 31 - 1, -(2 ** 31)], "and is left as it was");
});

test("the owner's notes must be an Int32Array of at least 4 words; 4 shared words are used as given", () => {
  const r = region(4);
  assertThrows(() => new Deque(r, new Int32Array(3)), TypeError, "'notes' must be an Int32Array of at least 4 words");
  assertThrows(() => new Deque(r, new Uint32Array(4) as unknown as Int32Array), TypeError, "'notes'");
  const notes = new Int32Array(new SharedArrayBuffer(16));
  const owner = new Deque(r, notes);
  assert(owner.note === notes, "the handle notes in the words given");
  assertEquals(new Deque(r).note.length, 4, "by default, 4 private words");
});

test("length is clamped to [0, capacity] when the two indices are read in a passing state", () => {
  const r = region(4, 100);
  const owner = new Deque(r);
  const thief = new Stealer(r);
  setIndices(r, 100, 99); // a pop's reservation on an empty deque
  assertEquals([owner.length, thief.length], [0, 0], "bottom below top reads as empty");
  setIndices(r, 100, 100 + 6); // a stale top: more than capacity apart
  assertEquals([owner.length, thief.length], [4, 4], "more than capacity apart reads as full");
  setIndices(r, 100, 104);
  assertEquals([owner.length, thief.length], [4, 4], "exactly full");
  setIndices(r, 2 ** 31 - 1, -(2 ** 31) + 2);
  assertEquals([owner.length, thief.length], [3, 3], "by wrapping difference across 2^31");
});

test("pop with a word to note into: it notes the value taken (more than one task, or the last one) and nothing when empty", () => {
  const r = region(4);
  const owner = new Deque(r);
  owner.push(5);
  owner.push(6);
  const into = new Int32Array(3).fill(-7);
  assertEquals(owner.pop(into, 1), 6, "the newest");
  assertEquals([...into], [-7, 6, -7], "noted at the word given, with more than one task");
  assertEquals(owner.pop(into, 2), 5, "the last");
  assertEquals([...into], [-7, 6, 5], "noted at the word given, for the last task");
  assertEquals(owner.pop(into, 0), EMPTY, "empty");
  assertEquals([...into], [-7, 6, 5], "nothing noted when empty");
  assertEquals(owner.pop(), EMPTY, "without a word to note into, as before");
  assertEquals(indices(r), [1, 1], "the last pop's compare-exchange moved top, and bottom followed");
});

test("a pop that loses the last task to a thief returns EMPTY, notes nothing, and leaves the deque empty and whole", () => {
  const r = region(4);
  const owner = new Deque(r);
  const thief = new Stealer(r);
  owner.push(9);
  const words = new Int32Array(r.buffer);
  const into = new Int32Array(1).fill(-1);
  // A thief that read top = 0, bottom = 1 and slot 0 before the owner's PopReserveBottom makes its
  // StealCasTop between the owner's PopReadSlot (access 3) and PopCasTop (access 4), and wins task 9.
  let claimed = -1;
  const got = atAccess(
    4,
    () => (claimed = atomicsBinding.compareExchange(words, DequeWords.top, 0, 1)),
    () => owner.pop(into, 0),
  );
  assertEquals(claimed, 0, "the thief's claim succeeded");
  assertEquals(got, EMPTY, "the owner lost the compare-exchange: EMPTY, not the task again");
  assertEquals(into[0], -1, "and noted nothing: the task is the thief's");
  assert(!owner.cutShort, "the pop is whole");
  assertEquals(indices(r), [1, 1], "bottom restored to match top");
  owner.repair();
  assertEquals(drain(owner, thief), [], "nothing comes back by a repair");
  assert(owner.push(10), "the next push");
  assertEquals(drain(owner, thief), [10], "and only it is in the deque");
});

test("a pop that wins the last task leaves nothing for a repair to push back", () => {
  const r = region(4);
  const owner = new Deque(r);
  const thief = new Stealer(r);
  owner.push(9);
  assertEquals(owner.pop(), 9, "won");
  assert(!owner.cutShort, "whole");
  owner.repair();
  assertEquals(drain(owner, thief), [], "a repair after a whole pop puts nothing back");
});

test("a steal that loses its claim to another thief returns RETRY, and the task is taken once", () => {
  const r = region(4);
  const owner = new Deque(r);
  owner.push(1);
  owner.push(2);
  const first = new Stealer(r);
  const second = new Stealer(r);
  let other: number | undefined;
  // The second thief steals between the first's StealReadSlot (access 2) and its StealCasTop (access 3).
  const got = atAccess(3, () => (other = second.steal()), () => first.steal());
  assertEquals([got, other], [RETRY, 1], "the other thief took task 1; the loser reports RETRY");
  assertEquals(first.steal(), 2, "a retry takes the next one");
  assertEquals(drain(owner, first), [], "nothing twice");
});

test("a steal-half that loses its first claim returns RETRY and leaves the thief's deque untouched and whole", () => {
  const [victim, mine] = twoRegions(4);
  const owner = new Deque(victim);
  for (const v of [1, 2, 3]) owner.push(v);
  const myDeque = new Deque(mine);
  myDeque.push(50);
  const rival = new Stealer(victim);
  let other: number | undefined;
  // HalfReadTop, HalfReadBottom, HalfReadDstBottom, HalfReadDstTop, HalfReadSlot (4), HalfCasTop (5).
  const got = atAccess(5, () => (other = rival.steal()), () => new Stealer(victim).stealHalfInto(myDeque));
  assertEquals([got, other], [RETRY, 1], "the rival took task 1 first: RETRY");
  assert(!myDeque.cutShort, "the thief's deque is whole");
  assertEquals(indices(mine), [0, 1], "its bottom was not moved");
  assertEquals(drain(myDeque, new Stealer(mine)), [50], "and it holds only its own task");
  assertEquals(drain(owner, rival), [2, 3], "the victim keeps the rest");
});

test("a steal-half re-reads bottom before each further claim: a task the owner popped meanwhile is not claimed", () => {
  const [victim, mine] = twoRegions(8);
  const owner = new Deque(victim);
  for (const v of [1, 2, 3, 4]) owner.push(v); // size 4: the thief wants 2
  const myDeque = new Deque(mine);
  const popped: number[] = [];
  // After the first claim and copy (HalfWriteDst, access 6), before HalfRecheckBottom (access 7), the
  // owner pops 4, 3 and (racing for the last one, and winning) 2.
  const got = atAccess(7, () => {
    for (let v = owner.pop(); v !== EMPTY; v = owner.pop()) popped.push(v);
  }, () => new Stealer(victim).stealHalfInto(myDeque));
  assertEquals(popped, [4, 3, 2], "the owner took the rest");
  assertEquals(got, 1, "the thief stops at the task it claimed");
  assertEquals(drain(myDeque, new Stealer(mine)), [1], "and has only it: nothing twice");
  assertEquals(indices(victim), [2, 2], "the victim is empty and whole");
});

test("a steal-half claims what the owner left after its first claim, and stops where the owner's pops reached", () => {
  const [victim, mine] = twoRegions(8);
  const owner = new Deque(victim);
  for (const v of [1, 2, 3, 4, 5]) owner.push(v); // size 5: the thief wants 3
  const myDeque = new Deque(mine);
  const popped: number[] = [];
  const got = atAccess(7, () => {
    popped.push(owner.pop(), owner.pop(), owner.pop());
  }, () => new Stealer(victim).stealHalfInto(myDeque));
  assertEquals(popped, [5, 4, 3], "the owner popped three after the first claim");
  assertEquals(got, 2, "the thief claims 1 and then 2, one short of what it wanted");
  assertEquals(drain(owner, new Stealer(victim)), [], "the victim is empty");
  assertEquals(drain(myDeque, new Stealer(mine)), [1, 2], "the thief's deque holds 1 and 2");
});

test("a push after a pop cut short right after its reservation repairs first: the reserved task is not overwritten", () => {
  const r = region(4);
  const owner = new Deque(r);
  owner.push(1);
  owner.push(2);
  // PopReadBottom (0), PopReserveBottom (1): cut before PopReadTop (2), with bottom lowered over task 2.
  assertEquals(atAccess(2, "cut", () => owner.pop()), Cut, "cut short");
  assert(owner.cutShort, "noted as cut short");
  assert(owner.push(3), "the next push");
  assert(!owner.cutShort, "repaired by it");
  assertEquals(drain(owner, new Stealer(r)), [1, 2, 3], "every task once, in order");
});

test("a steal-half into a deque whose pop was cut short repairs that deque first: its reserved task is kept", () => {
  const [victim, mine] = twoRegions(4);
  const owner = new Deque(victim);
  for (const v of [1, 2]) owner.push(v);
  const myDeque = new Deque(mine);
  myDeque.push(50);
  myDeque.push(51);
  assertEquals(atAccess(2, "cut", () => myDeque.pop()), Cut, "the thief's own pop cut short after its reservation");
  assertEquals(new Stealer(victim).stealHalfInto(myDeque), 1, "one of two moves");
  assert(!myDeque.cutShort, "repaired");
  assertEquals(drain(myDeque, new Stealer(mine)), [50, 51, 1], "the reserved task 51 is still there, then 1");
  assertEquals(drain(owner, new Stealer(victim)), [2], "the victim keeps 2");
});

test("a region that is not an object is a TypeError naming what was passed, from every opener", () => {
  for (const bad of [null, undefined, 5, "deque"]) {
    const region = bad as unknown as Region;
    assertThrows(() => initDeque(region), TypeError, `'region' must be an object: received ${String(bad)}`);
    assertThrows(() => new Deque(region), TypeError, `received ${String(bad)}`);
    assertThrows(() => new Stealer(region), TypeError, `received ${String(bad)}`);
    assertThrows(() => repairAbandonedPop(region), TypeError, `received ${String(bad)}`);
  }
});

test("0 and 2^31 - 1 are tasks: both push, pop and steal as themselves", () => {
  const r = region(4);
  const owner = new Deque(r);
  const thief = new Stealer(r);
  assert(owner.push(0), "push 0");
  assert(owner.push(MAX_TASK_VALUE), "push 2^31 - 1");
  assertEquals([thief.steal(), owner.pop()], [0, MAX_TASK_VALUE], "each comes back as itself");
});

test("a pop that lost the last task and is cut short before its restore gives nothing back on repair", () => {
  const r = region(4);
  const owner = new Deque(r);
  const thief = new Stealer(r);
  owner.push(9);
  const words = new Int32Array(r.buffer);
  // The thief wins task 9 before PopCasTop (access 4); the pop is cut short at PopRestoreBottom (access 5).
  const got = atAccesses(
    { 4: () => atomicsBinding.compareExchange(words, DequeWords.top, 0, 1), 5: "cut" },
    () => owner.pop(),
  );
  assertEquals(got, Cut, "cut short after losing");
  owner.repair();
  assert(!owner.cutShort, "repaired");
  assertEquals(indices(r), [1, 1], "empty: bottom put back to top");
  assertEquals(drain(owner, thief), [], "the thief's task is not pushed back");
});

test("a steal-half cut short before its first claim leaves the thief's deque as it was once repaired", () => {
  const [victim, mine] = twoRegions(8);
  const owner = new Deque(victim);
  for (const v of [1, 2, 3, 4]) owner.push(v);
  const myDeque = new Deque(mine);
  myDeque.push(50);
  // HalfReadSlot is access 4, HalfCasTop access 5: cut there, after the receiving note, before any claim.
  assertEquals(atAccess(5, "cut", () => new Stealer(victim).stealHalfInto(myDeque)), Cut, "cut short");
  assert(myDeque.cutShort, "noted as cut short");
  myDeque.repair();
  assert(!myDeque.cutShort, "repaired");
  assertEquals(indices(mine), [0, 1], "nothing published: bottom as it was");
  assertEquals(myDeque.length, 1, "the thief's deque holds its own task only");
  assertEquals(drain(myDeque, new Stealer(mine)), [50], "and nothing else");
  assertEquals(drain(owner, new Stealer(victim)), [1, 2, 3, 4], "the victim keeps all four");
});

test("a steal-half cut short after a whole claim and copy publishes exactly what it claimed once repaired", () => {
  const [victim, mine] = twoRegions(8);
  const owner = new Deque(victim);
  for (const v of [1, 2, 3, 4]) owner.push(v); // the thief wants 2
  const myDeque = new Deque(mine);
  myDeque.push(50);
  // After the first claim (HalfCasTop, 5) and copy (HalfWriteDst, 6): cut at HalfRecheckBottom (7).
  assertEquals(atAccess(7, "cut", () => new Stealer(victim).stealHalfInto(myDeque)), Cut, "cut short");
  myDeque.repair();
  assertEquals(indices(mine), [0, 2], "one task published");
  assertEquals(drain(myDeque, new Stealer(mine)), [50, 1], "the thief's own task and the one it claimed");
  assertEquals(drain(owner, new Stealer(victim)), [2, 3, 4], "the victim keeps the rest");
});

test("a steal-half into a full deque moves nothing; into one with room for one, it moves one", () => {
  const [victim, mine] = twoRegions(4);
  const owner = new Deque(victim);
  for (const v of [1, 2, 3, 4]) owner.push(v); // the thief would want 2
  const myDeque = new Deque(mine);
  for (const v of [50, 51, 52, 53]) myDeque.push(v);
  assertEquals(new Stealer(victim).stealHalfInto(myDeque), EMPTY, "no room: EMPTY");
  assertEquals(indices(victim), [0, 4], "the victim lost nothing");
  assertEquals(indices(mine), [0, 4], "the thief's deque unchanged");
  assertEquals(myDeque.pop(), 53, "the thief makes room for one");
  assertEquals(new Stealer(victim).stealHalfInto(myDeque), 1, "room for one: one moves");
  assertEquals(
    drain(myDeque, new Stealer(mine)),
    [50, 51, 52, 1],
    "the thief's tasks, then the oldest of the victim's",
  );
  assertEquals(drain(owner, new Stealer(victim)), [2, 3, 4], "the victim keeps the rest");
});

test("a steal-half of n tasks moves ceil(n/2) of them, the oldest, in order", () => {
  for (const n of [1, 2, 3, 4, 5, 7]) {
    const [victim, mine] = twoRegions(8);
    const owner = new Deque(victim);
    const values = Array.from({ length: n }, (_, i) => 10 + i);
    for (const v of values) owner.push(v);
    const myDeque = new Deque(mine);
    const want = n - (n >> 1);
    assertEquals(new Stealer(victim).stealHalfInto(myDeque), want, `${n} tasks: ${want} move`);
    assertEquals(drain(myDeque, new Stealer(mine)), values.slice(0, want), `${n} tasks: the oldest, in order`);
    assertEquals(drain(owner, new Stealer(victim)), values.slice(want), `${n} tasks: the victim keeps the rest`);
  }
});

test("a bad region's message names the deque", () => {
  const buffer = new SharedArrayBuffer(4096);
  assertThrows(
    () => new Deque({ buffer, byteOffset: 0, capacity: 3 }),
    RangeError,
    "Cannot create deque as 'capacity'",
  );
  assertThrows(
    () => new Stealer({ buffer, byteOffset: 4, capacity: 4 }),
    RangeError,
    "Cannot create deque as 'byteOffset'",
  );
});
