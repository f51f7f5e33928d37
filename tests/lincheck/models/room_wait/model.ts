/**
 * The room-wait model (issue 47, class 1: the settling side of a handshake): the shipped code of both
 * sides of the wait for room in the pool's queue (`maxQueue`) under controlled interleavings — the waiter's
 * `Room.waitForRoom` (count in `ControlWords.roomWaiters`, arm its `CompletionReader`, check again) and the
 * settler's `TaskLedger.settle` (its pending word down) with `Room.released` (read the count, wake every
 * other producer's channel) — with `spec/RoomWait.tla`'s properties as oracles. See `thread.ts` for the
 * programs and what stands in for the pool.
 *
 * The handshake (room.ts's module doc): either the waiter's check after its count sees the room, or the
 * settle after the room came sees the count and wakes it. The oracles:
 * - `no-exception`: no thread threw; the step bound was not reached;
 * - `no-lost-wake` (RoomWait.tla `RoomServed`, at the end of a run): once the settler settled every task,
 *   so that the pool has room, the waiter's `waitForRoom()` resolved; it is not left blocked in its wait, nor
 *   ended with its wait unresolved;
 * - `waiters-count` (`WaitersCount`): `roomWaiters` is the number of producers that say they are counted
 *   (their line's `countedRoom`; the waiter stays counted until a macrotask this run never reaches).
 *
 * The settler is thread 0: its tasks' opens are the model's set-up steps (the pool is full before any
 * choice). Scenarios: the settler the owner's producer (slot 0, `ControlWords.ownerPending`) or a remote one
 * (slot 2), the bound 1 or 2, and another producer's pending task or none.
 *
 * @module
 */

import fc from "fast-check";
import { initInjector } from "../../../../lib/protocol/injector.ts";
import { CACHE_LINE_WORDS, ControlWords, injectorRegionBytes } from "../../../../lib/protocol/layout.ts";
import { ProducerWords, slotLine, SlotState } from "../../../../lib/protocol/producers.ts";
import { Fn, FN_NAMES } from "../../../../spec/trace/facade_codes.ts";
import type { Execution, Model, RunEnd, RunSetup, Violation } from "../../kernel/harness.ts";
import { type GateAccess, gateStateName, stepTable } from "../../kernel/run.ts";
import { State } from "../../kernel/words.ts";
import {
  PBUFFER_BYTES,
  PCAPACITY,
  PCOMPLETIONS_BYTES,
  PCONTROL_BYTES,
  PFREE_BYTES,
  PLINES_BYTES,
  PQUEUES_BYTES,
  PRODUCERS_LAYOUT,
  PSLOTS,
} from "../producers/layout.ts";
import { RRole, RWork, RWORK_BYTES, RWORK_WORDS, SETUP_STEPS, TASKS, WAITER_SLOT } from "./layout.ts";

/** One run: the settler's slot (0: the owner's), the bound (`workers + maxQueue`), another's pending tasks. */
export interface RoomScenario {
  settler: 0 | 2;
  max: number;
  /** Pending tasks of the producer that is neither (slot 2's if the settler is the owner, else the owner's). */
  rest: number;
}

/** Steps per run before it is cut. */
export const RMAX_STEPS = 600;

/** What a run leaves that the oracles judge. */
export interface RoomEnd {
  settled: number;
  resolved: boolean;
  roomWaiters: number;
  /** Each remote slot's `countedRoom` (index 0 unused). */
  countedRoom: number[];
  /** The pool's pending sum at the end (the owner's word and every open slot's). */
  pendingAtEnd: number;
}

/** Everything one run produced. */
export type RoomExecution = Execution<RoomEnd>;

/** The thread running role `t`. */
export function roomThreadName(s: RoomScenario, t: number): string {
  return t === 0 ? `settler@${s.settler}` : `waiter@${WAITER_SLOT}`;
}

function queueBytes(slot: number): number {
  return slot === 0 ? PCOMPLETIONS_BYTES : PQUEUES_BYTES + (slot - 1) * injectorRegionBytes(PCAPACITY);
}

function prepare({ buffer, assign }: RunSetup, s: RoomScenario): void {
  // The controller's binding of `mem` is the plain one: the set-up is no scheduled step.
  new Uint8Array(buffer, PCONTROL_BYTES, RWORK_BYTES - PCONTROL_BYTES).fill(0);
  new Int32Array(buffer, RWORK_BYTES, RWORK_WORDS).fill(0);
  for (let slot = 0; slot <= PSLOTS; slot++) {
    initInjector({ buffer, byteOffset: queueBytes(slot), capacity: PCAPACITY });
  }
  initInjector({ buffer, byteOffset: PFREE_BYTES, capacity: PCAPACITY });
  const control = new Int32Array(buffer, PCONTROL_BYTES, 3 * CACHE_LINE_WORDS);
  // Both remote slots open (the waiter's, and the settler's or the other producer's).
  for (let slot = 1; slot <= PSLOTS; slot++) {
    Atomics.store(slotLine(buffer, PRODUCERS_LAYOUT, slot), ProducerWords.state, SlotState.OPEN);
  }
  control[ControlWords.producersOpen] = PSLOTS;
  if (s.settler === 0) slotLine(buffer, PRODUCERS_LAYOUT, 2)[ProducerWords.pending] = s.rest;
  else control[ControlWords.ownerPending] = s.rest;
  assign(0, RRole.SETTLER, s.settler, s.max);
  assign(1, RRole.WAITER, 0, s.max);
}

function observe({ buffer }: RunEnd, _s: RoomScenario): RoomEnd {
  const work = new Int32Array(buffer, RWORK_BYTES, RWORK_WORDS);
  const control = new Int32Array(buffer, PCONTROL_BYTES, 3 * CACHE_LINE_WORDS);
  const countedRoom = [0];
  let pendingAtEnd = control[ControlWords.ownerPending];
  for (let slot = 1; slot <= PSLOTS; slot++) {
    const line = slotLine(buffer, PRODUCERS_LAYOUT, slot);
    countedRoom.push(line[ProducerWords.countedRoom]);
    pendingAtEnd += line[ProducerWords.pending];
  }
  return {
    settled: work[RWork.SETTLED],
    resolved: work[RWork.RESOLVED] === 1,
    roomWaiters: control[ControlWords.roomWaiters],
    countedRoom,
    pendingAtEnd,
  };
}

/** The oracles (see the module doc), in the order a failure is attributed. */
export function checkRoomExecution(s: RoomScenario, exec: RoomExecution): Violation[] {
  const out: Violation[] = [];
  for (const f of exec.failures) out.push({ oracle: "no-exception", detail: f });
  if (exec.aborted) out.push({ oracle: "no-exception", detail: `step bound ${RMAX_STEPS} reached` });
  if (out.length > 0) return out;
  if (exec.settled === TASKS && exec.pendingAtEnd < s.max && !exec.resolved) {
    out.push({
      oracle: "no-lost-wake",
      detail: `the pool has room (${exec.pendingAtEnd} pending of ${s.max}) and the waiter's wait did not resolve: ` +
        `it ended ${gateStateName(exec.states[1])}`,
    });
  }
  const counted = exec.countedRoom.reduce((a, b) => a + b, 0);
  if (exec.roomWaiters !== counted) {
    out.push({ oracle: "waiters-count", detail: `roomWaiters ${exec.roomWaiters}, counted slots ${counted}` });
  }
  return out;
}

/** The room-wait model (`Harness.start(ROOM_WAIT)`): two threads over the shipped code (no variants). */
export const ROOM_WAIT: Model<RoomScenario, RoomEnd> = {
  name: "room-wait",
  thread: new URL("./thread.ts", import.meta.url),
  threads: 2,
  bufferBytes: PBUFFER_BYTES,
  maxSteps: RMAX_STEPS,
  setupSteps: SETUP_STEPS,
  continuation: "round-robin",
  schedules: { maxLength: 60, maxSegment: 10, maxSegments: 8, timeouts: false },
  threadCount: () => 2,
  threadName: roomThreadName,
  prepare,
  observe,
  check: checkRoomExecution,
};

// ---------------------------------------------------------------------------------------------------------
// Scenarios.

/** The named scenarios of the systematic mode, each with its preemption bound. */
export const ROOM_SCENARIOS: readonly { name: string; scenario: RoomScenario; preemptions: number }[] = [
  // A remote producer settles; the first settle makes room.
  { name: "remote_settler_room_at_first", scenario: { settler: 2, max: 2, rest: 0 }, preemptions: 3 },
  // The owner settles; room only after both settles (another's task pending).
  { name: "owner_settler_room_at_second", scenario: { settler: 0, max: 2, rest: 1 }, preemptions: 3 },
  // A bound of 1: room only when the settler has nothing pending.
  { name: "remote_settler_bound_one", scenario: { settler: 2, max: 1, rest: 0 }, preemptions: 3 },
];

/** Random scenarios: either settler, a bound of 1 or 2, another's pending task or none (the pool full). */
export function roomScenarioArbitrary(): fc.Arbitrary<RoomScenario> {
  return fc.record({
    settler: fc.constantFrom<0 | 2>(0, 2),
    max: fc.integer({ min: 1, max: 2 }),
    rest: fc.integer({ min: 0, max: 1 }),
  });
}

// ---------------------------------------------------------------------------------------------------------
// Reports.

const CONTROL = PCONTROL_BYTES >> 2;
function lineAt(slot: number): number {
  return (PLINES_BYTES >> 2) + (slot - 1) * 2 * CACHE_LINE_WORDS;
}
const NAMES = new Map<number, string>([
  [CONTROL + ControlWords.ownerPending, "ownerPending"],
  [CONTROL + ControlWords.roomWaiters, "roomWaiters"],
  [CONTROL + ControlWords.producersOpen, "producersOpen"],
  [CONTROL + ControlWords.recordWaiters, "recordWaiters"],
  [CONTROL + ControlWords.mainWaiting, "waiting@0"],
]);
for (let slot = 1; slot <= PSLOTS; slot++) {
  for (const [word, at] of Object.entries(ProducerWords)) NAMES.set(lineAt(slot) + at, `${word}@${slot}`);
}

/** A word's name (or its index). */
function wordName(addr: number): string {
  return NAMES.get(addr) ?? (addr >= PFREE_BYTES >> 2 && addr < (PFREE_BYTES >> 2) + 64 ? `free[${addr}]` : `w${addr}`);
}

/** One access, as the table shows it. */
export function describeRAccess(a: GateAccess): string {
  const w = wordName(a.addr);
  if (a.fn === Fn.load) return `load ${w} → ${a.result}`;
  if (a.fn === Fn.store) return `store ${w} ← ${a.arg1}`;
  if (a.fn === Fn.wait) return `wait ${w} =${a.arg1}${a.blocked ? " (blocks)" : " (not-equal)"}`;
  if (a.fn === Fn.notify) return `notify ${w} (woke ${a.woke?.length ?? 0})`;
  return `${FN_NAMES[a.fn] ?? `fn${a.fn}`} ${w} ${a.arg1} → ${a.result}`;
}

/** The interleaving as a table, then the end state. */
export function formatRoomTable(s: RoomScenario, exec: RoomExecution): string {
  const out = stepTable([0, 1].map((t) => roomThreadName(s, t)), exec.accesses, describeRAccess);
  out.push(
    `end: ${exec.states.map((st, t) => `${roomThreadName(s, t)} ${gateStateName(st)}`).join("; ")}; settled ` +
      `${exec.settled}; resolved ${exec.resolved}; pending ${exec.pendingAtEnd} of ${s.max}; roomWaiters ` +
      `${exec.roomWaiters}${exec.aborted ? "; step bound" : ""}`,
  );
  return out.join("\n");
}

/** A scenario in one line. */
export function describeRoomScenario(s: RoomScenario): string {
  return `settler slot ${s.settler} (${TASKS} tasks) | waiter slot ${WAITER_SLOT} | bound ${s.max} | other pending ${s.rest}`;
}

/** Whether the waiter ended blocked in its wait (the run's record). */
export function waiterBlocked(exec: RoomExecution): boolean {
  return exec.states[1] === State.BLOCKED;
}
