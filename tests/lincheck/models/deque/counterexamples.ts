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

/** Recorded failing runs: each must fail again on its mutant and pass on the shipped deque. */
export const RECORDED: readonly Recorded[] = [
  {
    // Thief 2 reads top 0 and bottom 1; the owner pops 101 without the compare-exchange on the last
    // task (4 accesses); thief 2 then reads slot 0 and wins its compare-exchange: 101 is taken twice.
    // (Written by hand from a shrunk report, with the generator's two thieves of two operations.)
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
  // The minimized counterexamples the mutants test printed (seed 20261121), one per mutant.
  {
    mutant: "pop_no_cas_last",
    oracle: "no-duplicates",
    scenario: { capacity: 2, initialIndex: 0, prefill: 1, owner: ["pop"], thieves: [["steal"]] },
    schedule: [1, 1, 1, 0, 0, 0, 0, 1],
  },
  {
    // The owner's pop loses the compare-exchange for 101 and leaves bottom = top - 1; its next push
    // writes slot 0 and publishes bottom = top: 102 is lost.
    mutant: "pop_no_restore_bottom",
    oracle: "conservation",
    scenario: { capacity: 2, initialIndex: 0, prefill: 1, owner: ["pop", "push"], thieves: [["steal"]] },
    schedule: [1, 1, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0],
  },
  {
    mutant: "steal_uses_slot_after_lost_cas",
    oracle: "no-duplicates",
    scenario: { capacity: 2, initialIndex: 0, prefill: 1, owner: ["pop"], thieves: [["steal"]] },
    schedule: [1, 1, 1, 0, 0, 0, 0, 0, 0, 1],
  },
  {
    // The thief copies 101 and 102, the owner pops 103 and 102 without a compare-exchange (more than
    // one task left each time), then the thief claims both with one compare-exchange: 102 twice.
    mutant: "steal_half_copy_before_claim",
    oracle: "no-duplicates",
    scenario: { capacity: 4, initialIndex: 0, prefill: 3, owner: ["pop", "pop"], thieves: [["stealHalf"]] },
    schedule: [1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1],
  },
  {
    // Thief 2 claims 101 from the victim and publishes its own deque's bottom before copying 101 into
    // slot 0; thief 1 steals from thief 2's deque in between and takes slot 0's old word, 0: a phantom,
    // and 101 is lost. (Not caught before thieves stole from thieves: nothing read D2 until the drain.)
    mutant: "steal_half_publishes_bottom_before_copy",
    oracle: "no-duplicates",
    scenario: { capacity: 2, initialIndex: 0, prefill: 0, owner: ["push"], thieves: [["steal@2"], ["stealHalf"]] },
    schedule: [0, 0, 0, 0, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 2, 2],
  },
  {
    // Four tasks in a deque of 4 with 3-bit indices: bottom - top reads as -4, so a steal sees empty.
    mutant: "narrow_indices",
    oracle: "linearizability",
    scenario: { capacity: 4, initialIndex: 0, prefill: 4, owner: [], thieves: [["steal"]] },
    schedule: [1, 1],
  },
];
