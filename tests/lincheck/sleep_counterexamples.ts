/**
 * Recorded counterexamples of the sleep/latch mutants: the minimal failing schedules the mutants test
 * printed (systematic search, fewest preemptions, smallest scenario), kept so that a replay test checks on
 * every run that each still fails on its mutant — with the same oracle — and that the shipped code passes
 * the same scenario. A new one is added by copying the `scenario (JSON)` and `choices (JSON)` lines.
 *
 * `choices`: one entry per step, a thread to release (0–3) or a thread whose timed wait times out (4–7).
 *
 * @module
 */

import type { SleepScenario } from "./sleep_harness.ts";

/** A recorded failing run. */
export interface SleepRecorded {
  mutant: string;
  /** The oracle that must fail on replay. */
  oracle: string;
  scenario: SleepScenario;
  choices: number[];
}

/** Recorded failing runs: each must fail again on its mutant and pass on the shipped code. */
export const SLEEP_RECORDED: readonly SleepRecorded[] = [];
