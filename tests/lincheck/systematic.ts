/**
 * Systematic mode: every schedule of a scenario with at most `maxPreemptions` preemptions, by stateless
 * depth-first search (re-running the scenario from the start for each schedule, as CHESS does).
 *
 * A preemption is a switch away from a thread that could have continued; a switch forced because the
 * running thread finished is free. At each step the explorer tries first the thread that ran last (no
 * preemption), then — while budget remains — every other runnable thread. With a bound of 2 the number of
 * schedules grows polynomially in the number of steps, so small scenarios are explored completely.
 *
 * Named small scenarios (after the race they pin down, as Tokio's loom tests are) live here too.
 *
 * @module
 */

import type { Execution, Harness } from "./harness.ts";
import type { Chooser, Scenario } from "./scenario.ts";

/** The outcome of exploring one scenario. */
export interface Exploration {
  schedules: number;
  steps: number;
  /** The first schedule (thread per step) for which `check` returned a failure, if any. */
  failure?: { schedule: number[]; message: string; index: number };
}

interface Frame {
  options: number[];
  next: number;
}

/**
 * Explores every schedule of `scenario` with at most `maxPreemptions` preemptions.
 *
 * @param check Returns a failure message for a bad execution, or null.
 * @param stopAtFirst Stop at the first failure (mutants) instead of counting all schedules.
 */
export function explore(
  harness: Harness,
  scenario: Scenario,
  variant: number,
  maxPreemptions: number,
  check: (exec: Execution) => string | null,
  stopAtFirst = true,
): Exploration {
  return exploreRuns((choose) => harness.run(scenario, choose, variant), maxPreemptions, check, stopAtFirst);
}

/**
 * {@link explore} for any protocol: `run` makes one run under the chooser it is given (the deque's
 * `Harness.run`, the queue's `runQueue`).
 */
export function exploreRuns<E extends { steps: number }>(
  run: (choose: Chooser) => E,
  maxPreemptions: number,
  check: (exec: E) => string | null,
  stopAtFirst = true,
): Exploration {
  const stack: Frame[] = [];
  let schedules = 0;
  let steps = 0;
  let failure: Exploration["failure"];
  for (;;) {
    const taken: number[] = [];
    let preemptions = 0;
    const choose: Chooser = (step, runnable, current) => {
      let pick: number;
      if (step < stack.length) {
        const f = stack[step];
        pick = f.options[f.next];
      } else {
        const canContinue = runnable.includes(current);
        const options = canContinue ? [current] : [...runnable];
        if (canContinue && preemptions < maxPreemptions) {
          for (const t of runnable) if (t !== current) options.push(t);
        }
        stack.push({ options, next: 0 });
        pick = options[0];
      }
      if (runnable.includes(current) && pick !== current) preemptions++;
      taken.push(pick);
      return pick;
    };
    const exec = run(choose);
    schedules++;
    steps += exec.steps;
    // A run shorter than the stack (cannot happen for a deterministic run) would leave stale frames.
    stack.length = Math.min(stack.length, exec.steps);
    const message = check(exec);
    if (message !== null && failure === undefined) {
      failure = { schedule: taken, message, index: schedules };
      if (stopAtFirst) break;
    }
    while (stack.length > 0 && ++stack[stack.length - 1].next >= stack[stack.length - 1].options.length) stack.pop();
    if (stack.length === 0) break;
  }
  return { schedules, steps, failure };
}

/** A chooser that replays a recorded thread-per-step schedule (from {@link explore}). */
export function replayChooser(schedule: readonly number[]): Chooser {
  return (step, runnable, current) => {
    const t = step < schedule.length ? schedule[step] : (runnable.includes(current) ? current : runnable[0]);
    if (!runnable.includes(t)) throw new Error(`replay: thread ${t} is not runnable at step ${step}`);
    return t;
  };
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
