/**
 * Recorded counterexamples of the queue: the minimal failing run of each queue mutant, kept so that a replay
 * test feeds each back and checks it still fails on its mutant — and passes on the shipped queue. A new
 * one is added by copying the `scenario (JSON)` and `schedule (JSON)` lines of a report.
 *
 * @module
 */

import type { QueueScenario } from "./scenario.ts";

/** A recorded failing run of the queue (`lib/protocol/injector.ts`). */
export interface QueueRecorded {
  mutant: string;
  /** The oracle that must fail on replay. */
  oracle: string;
  scenario: QueueScenario;
  schedule: number[];
}

/**
 * The queue mutants' minimal counterexamples (fast-check's counterexample from seed 20261121, then the
 * minimizer's fewest preemptions and smallest scenario): each must fail again on its mutant and pass on
 * the shipped queue.
 */
export const QUEUE_RECORDED: readonly QueueRecorded[] = [
  {
    // No race needed: the third push onto a full queue of 2 claims position 2, whose slot still holds
    // 101, and overwrites it; the drain then spins on a sequence word a lap ahead.
    mutant: "push_claims_taken_slot",
    oracle: "conservation",
    scenario: { capacity: 2, initialPos: 0, prefill: 0, threads: [["push"], ["push", "push"]] },
    schedule: [0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1],
  },
  {
    // t0 reads head 0 and 101 published; t1 pushes 102 and pops 101 (its compare-exchange on head
    // wins); t0's compare-exchange fails and it answers EMPTY with 102 queued and no producer in flight.
    mutant: "pop_empty_after_lost_cas",
    oracle: "empty-justified",
    scenario: { capacity: 2, initialPos: 0, prefill: 1, threads: [["pop"], ["push", "pop"]] },
    schedule: [0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0],
  },
  {
    // t1 claims position 0 and publishes its sequence before writing 101; t0 pops position 0 and reads
    // the value word, still 0: a phantom, and 101 is lost.
    mutant: "publish_before_write",
    oracle: "no-duplicates",
    scenario: { capacity: 2, initialPos: 0, prefill: 0, threads: [["pop"], ["push"]] },
    schedule: [1, 1, 1, 1, 0, 0, 0, 0, 0, 1],
  },
  {
    // Both consumers read head 0 and 101 published; t1 stores head 1 and returns 101; t0 stores head 1
    // too and returns 101 again.
    mutant: "pop_without_cas_head",
    oracle: "no-duplicates",
    scenario: { capacity: 2, initialPos: 0, prefill: 1, threads: [["pop"], ["pop"]] },
    schedule: [0, 0, 1, 1, 1, 1, 1, 0, 0, 0],
  },
  {
    // Sequential: t0 pushes 101 and pops it, "freeing" slot 0 with sequence 1; t1 pushes 102 at position
    // 1, then its push of 103 at position 2 (slot 0) reads 1 and fails as full on a queue holding one value.
    mutant: "release_wrong_seq",
    oracle: "full-justified",
    scenario: { capacity: 2, initialPos: 0, prefill: 0, threads: [["push", "pop"], ["push", "push"]] },
    schedule: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1],
  },
  {
    // t1 pushes 102 (patiently) and 103, then claims position 0 and frees slot 0 before reading it;
    // t0's push of 101 takes position 2, slot 0, and writes it; t1 reads 101: 101 is popped twice (t1,
    // then the drain), and 102 is lost.
    mutant: "release_before_read",
    oracle: "no-duplicates",
    scenario: { capacity: 2, initialPos: 0, prefill: 0, threads: [["push"], ["pushPatiently", "push", "pop"]] },
    schedule: [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 1],
  },
  {
    // One thread: capacity 4 and 2-bit positions; the fifth push finds the queue full, but the difference
    // -3 reads as +1, "a lap ahead", and push reads tail again for ever (the step bound unwinds it).
    mutant: "narrow_positions",
    oracle: "no-exception",
    scenario: { capacity: 4, initialPos: 0, prefill: 2, threads: [["pushPatiently", "pushPatiently", "push"]] },
    schedule: [],
  },
];
