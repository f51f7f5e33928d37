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

import type { SleepScenario } from "./model.ts";

/** One worker, one poster of one item: where most of the sleep mutants fail. */
const ONE_POST: SleepScenario = { kind: "sleep", workers: 1, posts: [1], stop: false };

/** A recorded failing run. */
export interface SleepRecorded {
  mutant: string;
  /** The oracle that must fail on replay. */
  oracle: string;
  scenario: SleepScenario;
  choices: number[];
}

/** Recorded failing runs: each must fail again on its mutant and pass on the shipped code. */
export const SLEEP_RECORDED: readonly SleepRecorded[] = [
  {
    // w0 gets sleepy (JEC 1) and reads the counters; the poster posts and moves the JEC to 2; w0's
    // compare-exchange fails, it reloads — and, with the JEC test gone, counts itself and sleeps.
    mutant: "sleep_skips_final_check",
    oracle: "no-lost-wakeup",
    scenario: ONE_POST,
    choices: [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0],
  },
  {
    // w0 sleeps counted; the poster posts, moves the JEC, and returns without waking anyone.
    mutant: "poster_never_wakes",
    oracle: "no-lost-wakeup",
    scenario: ONE_POST,
    choices: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1],
  },
  {
    // w0 sleeps counted (the count is 1); the poster posts, moves the JEC, and returns: it wakes only
    // when more than one sleeps.
    mutant: "poster_wakes_only_if_two_sleep",
    oracle: "no-lost-wakeup",
    scenario: ONE_POST,
    choices: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1],
  },
  {
    // w0 counts itself while its word still says AWAKE; the poster sees 1 sleeper, finds no SLEEPING
    // word, gives up; w0 then stores SLEEPING and waits.
    mutant: "counted_before_sleeping",
    oracle: "no-lost-wakeup",
    scenario: ONE_POST,
    choices: [0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0],
  },
  {
    // w0's last search (empty) comes before getSleepy; the poster posts while the JEC is still even, so
    // it has nothing to move and nobody to wake; w0 gets sleepy after it and sleeps.
    mutant: "search_before_sleepy",
    oracle: "no-lost-wakeup",
    scenario: ONE_POST,
    choices: [0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0],
  },
  {
    // The poster stores AWAKE in w0's word without the notify: w0 waits on SLEEPING that is gone.
    mutant: "wake_without_notify",
    oracle: "woken-means-woken",
    scenario: ONE_POST,
    choices: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1],
  },
  {
    // w0 reads the stop word (0) after getting sleepy; the stopper stores 1 and wakes nobody (w0 is not
    // SLEEPING yet) without moving the JEC, so w0's fallAsleep succeeds after the stop.
    mutant: "wake_all_keeps_jec",
    oracle: "stop-reaches-every-worker",
    scenario: { kind: "sleep", workers: 1, posts: [0], stop: true },
    choices: [0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0],
  },
  {
    // The joiner reads UNSET and blocks; the finisher stores SET and does not notify.
    mutant: "latch_set_without_notify",
    oracle: "woken-means-woken",
    scenario: { kind: "latch" },
    choices: [0, 0, 1],
  },
  {
    // The joiner reads UNSET; the finisher sets and notifies (nobody waits yet); the joiner's wait reads
    // SET and waits on SET: blocked after the latch is set, with nobody left to wake it.
    mutant: "joiner_waits_on_stale_value",
    oracle: "joiner-returns",
    scenario: { kind: "latch" },
    choices: [0, 1, 1, 0, 0],
  },
];
