/**
 * Scenarios: what each simulated thread does in one run, and the fast-check arbitraries that generate
 * them and their schedules.
 *
 * A scenario is one owner (push / pop on the victim deque), two or three thieves (steal / stealHalf from
 * the victim into their own deque), two to six operations each, on capacities 2 and 4 so that full,
 * wrap-around and steal-half all happen; a setup phase may prefill the victim first, and a drain phase
 * empties every deque after the threads finish. Pushed values are unique (101, 102, … in push order),
 * so a duplicate or a phantom is visible.
 *
 * @module
 */

import fc from "fast-check";
import { continuation } from "../../kernel/harness.ts";
import {
  exploreWaits,
  type WaitChooser,
  waitReplayChooser,
  waitScheduleArbitrary,
  waitScheduleChooser,
} from "../../kernel/explore.ts";
import type { DequeHarness, Execution } from "./model.ts";
import { MAX_THREADS as DTHREADS } from "../../kernel/words.ts";

/** The owner's operations. */
export type OwnerOp = "push" | "pop";
/**
 * A thief's operations: steal one task, or stealHalf into the thief's own deque, from the victim
 * (`steal`, `stealHalf`) or from thief k's own deque (`steal@k`, `stealHalf@k`: a thief's deque is a
 * victim too, as every worker's is in the pool).
 */
export type ThiefOp = "steal" | "stealHalf" | `steal@${number}` | `stealHalf@${number}`;

/** A thief op's kind and the deque it takes from (0: the victim; k: thief k's own deque). */
export function thiefOpParts(op: ThiefOp): { kind: "steal" | "stealHalf"; from: number } {
  const [kind, from] = op.split("@");
  return { kind: kind as "steal" | "stealHalf", from: from === undefined ? 0 : Number(from) };
}

/** One run's work. */
export interface Scenario {
  /** Slots in the victim and in each thief's own deque: a power of two. */
  capacity: number;
  /** Both indices of every deque start here (near 2^31 the run crosses the int32 wrap). */
  initialIndex: number;
  /** Tasks the setup phase pushes (single-threaded) before the threads start. */
  prefill: number;
  /** The owner's program. */
  owner: OwnerOp[];
  /** Each thief's program; thief k is thread k. */
  thieves: ThiefOp[][];
  /**
   * Tasks the setup phase pushes into each thief's own deque (index k - 1 for thief k), so that a
   * stealHalf lands in a non-empty deque; absent: none.
   */
  dstPrefill?: number[];
}

/**
 * The value of the i-th push of a scenario: the victim's setup pushes first, then the owner's in program
 * order, then each thief's deque's setup pushes (thief 1's first).
 */
export function pushValue(i: number): number {
  return 101 + i;
}

/** A short, one-line rendering: `cap4 idx0 prefill2 | owner: push pop | t1: steal stealHalf | t2: …`. */
export function describeScenario(s: Scenario): string {
  const parts = [`cap${s.capacity} idx${s.initialIndex} prefill${s.prefill}`, `owner: ${s.owner.join(" ")}`];
  s.thieves.forEach((ops, k) => {
    const pre = s.dstPrefill?.[k] ? ` (own deque prefill${s.dstPrefill[k]})` : "";
    parts.push(`t${k + 1}${pre}: ${ops.join(" ")}`);
  });
  return parts.join(" | ");
}

/** Thread names for tables and traces. */
export function threadName(thread: number): string {
  return thread === 0 ? "owner" : `thief${thread}`;
}

const ownerOp: fc.Arbitrary<OwnerOp> = fc.oneof(
  { arbitrary: fc.constant<OwnerOp>("push"), weight: 3 },
  { arbitrary: fc.constant<OwnerOp>("pop"), weight: 2 },
);
// The source: the victim most of the time, else a thief's deque (3 is mapped to the victim when there is
// no thief 3, and a thief's own number to the victim: stealing from oneself is not a race).
const thiefOp: fc.Arbitrary<[string, number]> = fc.tuple(
  fc.constantFrom("steal", "stealHalf"),
  fc.oneof({ arbitrary: fc.constant(0), weight: 3 }, { arbitrary: fc.integer({ min: 1, max: 3 }), weight: 1 }),
);

function thiefProgram(ops: [string, number][], self: number, thieves: number): ThiefOp[] {
  return ops.map(([kind, from]) =>
    (from === 0 || from === self || from > thieves ? kind : `${kind}@${from}`) as ThiefOp
  );
}

/**
 * Random scenarios, as the issue asks: one owner, two or three thieves, two to six operations each,
 * capacity 2 or 4, indices starting at 0 or just below the int32 wrap; a quarter of the thieves' steals
 * take from another thief's deque, and a thief's own deque may be prefilled (steal-half into a non-empty
 * deque). Shrinks towards fewer operations, pushes and steals, steals from the victim, and no prefill.
 */
export function scenarioArbitrary(): fc.Arbitrary<Scenario> {
  return fc.record({
    capacity: fc.constantFrom(2, 4),
    initialIndex: fc.constantFrom(0, 0x7ffffffe),
    prefill: fc.integer({ min: 0, max: 4 }),
    owner: fc.array(ownerOp, { minLength: 2, maxLength: 6 }),
    thieves: fc.array(fc.array(thiefOp, { minLength: 2, maxLength: 6 }), { minLength: 2, maxLength: 3 }),
    dstPrefill: fc.array(fc.oneof({ arbitrary: fc.constant(0), weight: 2 }, fc.integer({ min: 1, max: 3 })), {
      minLength: 3,
      maxLength: 3,
    }),
  }).map((s) => {
    const thieves = s.thieves.map((ops, k) => thiefProgram(ops, k + 1, s.thieves.length));
    const dstPrefill = s.dstPrefill.slice(0, thieves.length).map((n) => Math.min(n, s.capacity - 1));
    const out: Scenario = { ...s, prefill: Math.min(s.prefill, s.capacity), thieves, dstPrefill };
    if (dstPrefill.every((n) => n === 0)) delete out.dstPrefill;
    return out;
  });
}

/**
 * A schedule: at step i the controller runs thread `schedule[i] % 4` if it is runnable, else the next
 * runnable thread after it (cyclically); past the end it keeps running the thread it ran last (no further
 * preemption) or, if that one finished, the lowest runnable thread. The kernel's schedules
 * (`kernel/explore.ts`), four threads wide, with per-step entries 0..11 and no timeouts (nothing here waits).
 *
 * Half the schedules choose a thread at every step (many short preemptions); the other half are segments
 * — run a thread for 1 to 12 accesses, then another — which put a whole operation of one thread between
 * two accesses of another (the steal-half race needs two pops there). Shrinking shortens the schedule and
 * lowers the choices, towards fewer context switches. The queue's schedules are the same.
 */
export function scheduleArbitrary(): fc.Arbitrary<number[]> {
  return waitScheduleArbitrary(DTHREADS, 160, 12, 24, false, 11);
}

/** Chooses the thread to advance (the kernel's chooser; nothing here is ever timed out). */
export type Chooser = WaitChooser;

/** The {@link Chooser} of a schedule array (see {@link scheduleArbitrary}). */
export function scheduleChooser(schedule: readonly number[]): Chooser {
  return waitScheduleChooser(DTHREADS, schedule, continuation("same-or-lowest"));
}

/** Replays a thread-per-step schedule exactly (a systematic failure's); a thread not runnable throws. */
export function replayChooser(schedule: readonly number[]): Chooser {
  return waitReplayChooser(DTHREADS, schedule, continuation("same-or-lowest"));
}

/** The outcome of exploring a scenario systematically. */
export interface Exploration {
  schedules: number;
  steps: number;
  /** The first schedule (thread per step) for which `check` returned a failure, if any. */
  failure?: { schedule: number[]; message: string; index: number };
}

/**
 * Every schedule with at most `maxPreemptions` preemptions of the runs `run` makes (the kernel's
 * {@link exploreWaits}, four threads wide), each judged by `check` (a message, or null if it passes). A
 * preemption is a switch away from a thread that could have gone on; the first schedule has none.
 */
export function exploreRuns<E extends { steps: number }>(
  run: (choose: Chooser) => E,
  maxPreemptions: number,
  check: (exec: E) => string | null,
  stopAtFirst = true,
): Exploration {
  const r = exploreWaits<string>(DTHREADS, maxPreemptions, (choose) => {
    const exec = run(choose);
    const message = check(exec);
    return { steps: exec.steps, violations: message === null ? [] : [message], broken: message !== null };
  }, stopAtFirst);
  const failure = r.failure &&
    { schedule: r.failure.choices, message: r.failure.violations[0], index: r.failure.index };
  return { schedules: r.schedules, steps: r.steps, failure };
}

/** {@link exploreRuns} of a deque scenario on `harness`'s module `variant`. */
export function explore(
  harness: DequeHarness,
  scenario: Scenario,
  variant: number,
  maxPreemptions: number,
  check: (exec: Execution) => string | null,
  stopAtFirst = true,
): Exploration {
  return exploreRuns((choose) => harness.run(scenario, choose, variant), maxPreemptions, check, stopAtFirst);
}

/** Small scenarios explored exhaustively (≤ 2 preemptions), named after their race. */
export const SMALL_SCENARIOS: readonly { name: string; scenario: Scenario }[] = [
  {
    name: "pop_last_vs_two_steals",
    scenario: { capacity: 2, initialIndex: 0, prefill: 1, owner: ["pop", "push"], thieves: [["steal"], ["steal"]] },
  },
  {
    name: "steal_half_vs_pops",
    scenario: {
      capacity: 4,
      initialIndex: 0,
      prefill: 4,
      owner: ["pop", "pop", "pop"],
      thieves: [["stealHalf"], ["steal"]],
    },
  },
  {
    name: "steal_overflow",
    scenario: {
      capacity: 2,
      initialIndex: 0,
      prefill: 2,
      owner: ["push", "pop", "push"],
      thieves: [["steal"], ["stealHalf"]],
    },
  },
  {
    name: "wrap_pop_vs_steal",
    scenario: {
      capacity: 2,
      initialIndex: 0x7ffffffe,
      prefill: 1,
      owner: ["push", "pop", "pop"],
      thieves: [["steal"], ["stealHalf"]],
    },
  },
  {
    name: "chained_steal_half",
    scenario: {
      capacity: 4,
      initialIndex: 0,
      prefill: 3,
      owner: ["pop", "push"],
      thieves: [["stealHalf", "steal"], ["stealHalf"]],
    },
  },
  {
    // Thief 1 moves the victim's tasks into its own deque while thief 2 steals from thief 1's deque: a
    // thief's deque is a victim too, and its bottom must not be published before the copy.
    name: "thief_steals_from_thief",
    scenario: { capacity: 2, initialIndex: 0, prefill: 2, owner: [], thieves: [["stealHalf"], ["steal@1", "steal@1"]] },
  },
  {
    // stealHalf into a deque that already holds tasks (its slots wrap), while another thief steals the
    // old ones from it and the owner pops the victim.
    name: "steal_half_into_nonempty",
    scenario: {
      capacity: 4,
      initialIndex: 0x7ffffffe,
      prefill: 3,
      owner: ["pop"],
      thieves: [["stealHalf"], ["steal@1"]],
      dstPrefill: [2, 0],
    },
  },
  {
    name: "full_push_vs_steal",
    scenario: {
      capacity: 4,
      initialIndex: 0,
      prefill: 4,
      owner: ["push", "push", "pop"],
      thieves: [["steal"], ["steal"]],
    },
  },
];
