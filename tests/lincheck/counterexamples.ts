/**
 * Recorded counterexamples: shrunk (scenario, schedule) pairs printed by the suite for a mutant, kept so
 * that a replay test feeds each back and checks it still fails on its mutant — and passes on the shipped
 * deque. A new one is added by copying the `scenario (JSON)` and `schedule (JSON)` lines of a report.
 *
 * @module
 */

import type { Scenario } from "./scenario.ts";

/** A recorded failing run. */
export interface Recorded {
  mutant: string;
  /** The oracle that must fail on replay. */
  oracle: string;
  scenario: Scenario;
  schedule: number[];
}

/** Recorded counterexamples (the first written by hand from a shrunk report, then checked by replay). */
export const RECORDED: readonly Recorded[] = [
  {
    // Thief 2 reads top 0 and bottom 1; the owner pops 101 without the compare-exchange on the last
    // task (4 accesses); thief 2 then reads slot 0 and wins its compare-exchange: 101 is taken twice.
    mutant: "pop_no_cas_last",
    oracle: "no-duplicates",
    scenario: {
      capacity: 2,
      initialIndex: 0,
      prefill: 1,
      owner: ["pop", "pop"],
      thieves: [["steal", "steal"], ["steal", "steal"]],
    },
    schedule: [2, 2, 0, 0, 0, 0, 2, 2],
  },
];
