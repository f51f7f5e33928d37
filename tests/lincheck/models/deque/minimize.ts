/**
 * Minimal failing interleavings, beyond fast-check's shrinking (which keeps the generator's bounds: two
 * thieves, two operations each). Given a failing scenario, it finds the fewest preemptions that still
 * fail (systematic search with a bound of 0, then 1, then 2, …), then greedily removes whatever it can —
 * a thief, an operation, a prefilled task, half the capacity — keeping each removal only if some schedule
 * with no more preemptions still fails. The result is a small scenario with a schedule of the fewest
 * preemptions, in the spirit of Lincheck's model-checking mode.
 *
 * @module
 */

import type { DequeHarness, Execution } from "./model.ts";
import { type Chooser, exploreRuns, type Scenario, type ThiefOp, thiefOpParts } from "./scenario.ts";

/** A minimized counterexample. */
export interface Minimized<S = Scenario> {
  scenario: S;
  /** The thread for each step (replay with `replayChooser`). */
  schedule: number[];
  preemptions: number;
  /** Runs the minimizer made. */
  runs: number;
}

/** Preemptions in a thread-per-step schedule: switches away from a thread that had not finished. */
export function countPreemptions(schedule: readonly number[]): number {
  let n = 0;
  for (let i = 1; i < schedule.length; i++) {
    // A switch is free only if the previous thread never runs again.
    if (schedule[i] !== schedule[i - 1] && schedule.indexOf(schedule[i - 1], i) >= 0) n++;
  }
  return n;
}

/** `s` without thief k + 1: the later thieves move down, and steals from the removed one's deque go to the victim. */
function withoutThief(s: Scenario, k: number): Scenario {
  const gone = k + 1;
  const thieves = s.thieves.filter((_, j) => j !== k).map((ops, j) =>
    ops.map((op) => {
      const { kind, from } = thiefOpParts(op);
      const to = from === gone ? 0 : from > gone ? from - 1 : from;
      return (to === 0 || to === j + 1 ? kind : `${kind}@${to}`) as ThiefOp;
    })
  );
  const out: Scenario = { ...s, thieves };
  if (s.dstPrefill) out.dstPrefill = s.dstPrefill.filter((_, j) => j !== k);
  return out;
}

function candidates(s: Scenario): Scenario[] {
  const out: Scenario[] = [];
  for (let k = 0; k < s.thieves.length; k++) {
    if (s.thieves.length > 1) out.push(withoutThief(s, k));
  }
  (s.dstPrefill ?? []).forEach((n, k) => {
    if (n > 0) out.push({ ...s, dstPrefill: s.dstPrefill!.map((m, j) => (j === k ? m - 1 : m)) });
  });
  for (let k = 0; k < s.thieves.length; k++) {
    for (let i = 0; i < s.thieves[k].length; i++) {
      const ops = s.thieves[k].filter((_, j) => j !== i);
      if (ops.length === 0) continue;
      out.push({ ...s, thieves: s.thieves.map((o, j) => (j === k ? ops : o)) });
    }
  }
  for (let i = 0; i < s.owner.length; i++) out.push({ ...s, owner: s.owner.filter((_, j) => j !== i) });
  if (s.prefill > 0) out.push({ ...s, prefill: s.prefill - 1 });
  if (s.capacity > 2 && s.prefill <= s.capacity / 2 && (s.dstPrefill ?? []).every((n) => n < s.capacity / 2)) {
    out.push({ ...s, capacity: s.capacity / 2 });
  }
  if (s.initialIndex !== 0) out.push({ ...s, initialIndex: 0 });
  return out;
}

/**
 * Minimizes a failing scenario against deque module `variant`.
 *
 * @param fails Whether an execution counts as the failure being minimized (e.g. breaks any oracle).
 * @param maxPreemptions The largest bound tried.
 * @param budget Stop improving after this many runs (the best so far is returned).
 * @returns The minimized counterexample, or null if no schedule within the bound fails.
 */
export function minimize(
  harness: DequeHarness,
  variant: number,
  scenario: Scenario,
  fails: (exec: Execution, s: Scenario) => boolean,
  maxPreemptions = 2,
  budget = 40_000,
): Minimized | null {
  return minimizeRuns(
    (s, choose) => harness.run(s, choose, variant),
    candidates,
    scenario,
    fails,
    maxPreemptions,
    budget,
  );
}

/**
 * {@link minimize} for any protocol: `run` makes one run of a scenario under a chooser, `shrink` lists
 * the smaller scenarios to try (each one step smaller).
 */
export function minimizeRuns<S, E extends { steps: number }>(
  run: (s: S, choose: Chooser) => E,
  shrink: (s: S) => S[],
  scenario: S,
  fails: (exec: E, s: S) => boolean,
  maxPreemptions = 2,
  budget = 40_000,
): Minimized<S> | null {
  let runs = 0;
  const search = (s: S, bound: number): { schedule: number[]; preemptions: number } | null => {
    for (let p = 0; p <= bound; p++) {
      const r = exploreRuns((choose) => run(s, choose), p, (exec) => (fails(exec, s) ? "fails" : null));
      runs += r.schedules;
      if (r.failure) return { schedule: r.failure.schedule, preemptions: p };
      if (runs > budget) return null;
    }
    return null;
  };
  const first = search(scenario, maxPreemptions);
  if (first === null) return null;
  let best: Minimized<S> = { scenario, schedule: first.schedule, preemptions: first.preemptions, runs };
  let improved = true;
  while (improved && runs <= budget) {
    improved = false;
    for (const c of shrink(best.scenario)) {
      const found = search(c, best.preemptions);
      if (found !== null) {
        best = { scenario: c, schedule: found.schedule, preemptions: found.preemptions, runs };
        improved = true;
        break;
      }
      if (runs > budget) break;
    }
  }
  best.runs = runs;
  best.preemptions = Math.min(best.preemptions, countPreemptions(best.schedule));
  return best;
}
