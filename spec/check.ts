/**
 * The model-check command: runs TLC on every real configuration of `spec/` and every mutant
 * configuration of `spec/mutants/`, prints a table (distinct states, depth, time, verdict), and exits
 * non-zero on any unexpected outcome. A real configuration must PASS; a mutant must be CAUGHT, by one of
 * the properties its entry below names, with a counterexample. A mutant that passes is MISSED, and fails
 * the command. A mutant spec is its real spec with the patches of `spec/mutants.ts` applied, written
 * under the real module's name into the run's temporary directory; a patch that no longer applies fails
 * the command (FAIL, never a skip).
 *
 * Where the jar comes from, in order (see spec/README.md):
 * 1. `TLA2TOOLS_JAR`, if set (used as is; if it names a missing file, the run is SKIPPED);
 * 2. the cache, `${XDG_CACHE_HOME:-$HOME/.cache}/filch/tla2tools.jar`, used as is;
 * 3. a download of the pinned official release (v1.7.4), checked against its SHA-256 before it is
 *    stored in the cache.
 * When Java or the jar is missing, it prints SKIPPED and why, and exits 2 (never a pass).
 *
 * Runs under Deno (`deno run -A spec/check.ts`), Node >= 23.6 (`node spec/check.ts`, types stripped) and
 * Bun; it uses only `node:` builtins.
 *
 * Usage: `check.ts [--full] [--workers N] [--only NAME[,NAME...]] [--list]`. `--full`: the full models, the
 * `.cfg` files as they are (`npm run check:tla:full`); without it, CI's smaller models of `CI_SIZES` for the
 * real configurations named there (what `npm test` runs). `--workers`: TLC runs at once, one TLC worker each
 * (default, the cores).
 *
 * @module
 */

import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { availableParallelism, homedir, tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { applyMutant, mutantNamed, PatchError, SPEC_MUTANTS } from "./mutants.ts";

/** The pinned official release, downloaded only when no jar is configured or cached. */
export const PINNED_JAR = {
  version: "1.7.4",
  url: "https://github.com/tlaplus/tlaplus/releases/download/v1.7.4/tla2tools.jar",
  // Source: nixpkgs' tlaplus 1.7.4 derivation; the same value appears in other pins of that release.
  sha256: "936a262061c914694dfd669a543be24573c45d5aa0ff20a8b96b23d01e050e88",
};

/** One TLC run: a module and a configuration, real (must pass) or mutant (must be caught). */
export interface Run {
  /** The name printed in the table (the configuration's file name without `.cfg`). */
  readonly name: string;
  /** The module file, relative to `spec/`; for a mutant, the real module its patches apply to. */
  readonly module: string;
  /** The configuration file, relative to `spec/`. */
  readonly cfg: string;
  /** `real`: TLC must find no error. `mutant`: TLC must report one of `expect` with a trace. */
  readonly kind: "real" | "mutant";
  /** For a mutant: the properties whose violation counts as catching it (several reported at once: each). */
  readonly expect?: readonly string[];
  /** For a mutant: its name in `spec/mutants.ts` (`SPEC_MUTANTS`), whose patches apply to `module`. */
  readonly mutant?: string;
}

// Every property the real configurations check; a mutant is caught by any of them except TypeOK (a
// TypeOK failure would mean the mutant is malformed, not that its bug was found).
const SAFETY = [
  "IndexBounds",
  "WrappingDiffExact",
  "DstCopiesInRange",
  "Conservation",
  "NoDuplicates",
  "Refinement",
  "NoAbaCas",
  "NoStaleRead",
  "TopMonotonic",
  "RetryOnlyAfterProgress",
  "PopEmptyExact",
  "PopLostExact",
  "PushFullExact",
  "DstFullExact",
  "StealEmptyJustified",
] as const;

// The semantic checks: a task lost or taken twice, or a step the atomic deque cannot take. The mutants of
// a step (pop, steal, steal-half) are checked with these alone, so that their traces end at the damage.
const SEMANTIC = ["Conservation", "NoDuplicates", "Refinement"] as const;

// Every invariant the real SleepWake configurations check (TypeOK excepted, as above).
const SLEEP_SAFETY = [
  "CountersConsistent",
  "Conservation",
  "NoLostWakeup",
  "NoLostStopWake",
  "NoLostMainWake",
  "BlockedMeansSleeping",
] as const;

// The semantic checks of the queue (Injector.tla): a value lost, returned twice, stale or out of its
// producer's order, or a step the atomic queue cannot take. The mutants of a step are checked with these.
const QUEUE_SEMANTIC = ["Conservation", "NoDuplicates", "FifoPerProducer", "NoStaleRead", "Refinement"] as const;

// The invariants of Levels.tla (TypeOK excepted, as above).
const LEVELS_SAFETY = ["TakenInOrder", "NoInversion", "BoundedOvertake", "StartsOnce"] as const;

// The invariants of Producers.tla about slots and routing (TypeOK excepted, as above): a completion in the wrong
// queue, or in a FREE slot's, or a slot held twice.
const PRODUCERS_ROUTING = ["CompletionsRouted", "CompletionOnlyToOpenSlot", "SlotExclusive"] as const;

// The liveness properties of RoomWait.tla: a hang breaks them together (the wait, the task after it, the count).
const ROOM_LIVENESS = ["RoomServed", "AllSettled", "CountReturns"] as const;

// The semantic invariants of Graph.tla (TypeOK excepted, as above): a start too early or twice, a settlement
// twice, a cancelled node run, a rejection unnamed, a node run downstream of a failure, a record freed twice or
// left out at rest.
const GRAPH_SAFETY = [
  "StartsAtMostOnce",
  "StartsAfterInputs",
  "SettlesAtMostOnce",
  "CancelledNeverRuns",
  "RejectionNamed",
  "FailureStopsDownstream",
  "FreedAtMostOnce",
  "NoLeakAtRest",
  "TerminateSettlesAll",
  "NothingStartsAfterCancel",
] as const;

// The liveness properties of Graph.tla: a node left waiting breaks them together (it never settles, nor does
// its record come back).
const GRAPH_LIVENESS = ["EveryNodeSettles", "RecordsComeBack"] as const;

// The semantic invariants of Elastic.tla (TypeOK excepted, as above): a sleep count left behind, a SLEEPING word
// with mail, a task stranded in a slot that is not active, a task run twice or lost, the pool out of its bounds, a
// lost wake-up.
const ELASTIC_SAFETY = [
  "CountersConsistent",
  "SleepingWordsHonest",
  "NoStrandedTask",
  "RunsOnce",
  "WithinBounds",
  "NoLostWakeup",
] as const;

/** Every configuration, in the order it runs. A `.cfg` under spec/ that is not listed here fails the command. */
export const RUNS: readonly Run[] = [
  { name: "ChaseLev", module: "ChaseLev.tla", cfg: "ChaseLev.cfg", kind: "real" },
  { name: "ChaseLevCap4", module: "ChaseLev.tla", cfg: "ChaseLevCap4.cfg", kind: "real" },
  { name: "ChaseLevHalf", module: "ChaseLev.tla", cfg: "ChaseLevHalf.cfg", kind: "real" },
  { name: "ChaseLev3Thieves", module: "ChaseLev.tla", cfg: "ChaseLev3Thieves.cfg", kind: "real" },
  { name: "ChaseLevLiveness", module: "ChaseLev.tla", cfg: "ChaseLevLiveness.cfg", kind: "real" },
  { name: "ChaseLevLiveness3", module: "ChaseLev.tla", cfg: "ChaseLevLiveness3.cfg", kind: "real" },
  {
    name: "PopWithoutCas",
    module: "ChaseLev.tla",
    mutant: "PopWithoutCas",
    cfg: "mutants/PopWithoutCas.cfg",
    kind: "mutant",
    expect: SAFETY,
  },
  {
    name: "PopNoRestore",
    module: "ChaseLev.tla",
    mutant: "PopNoRestore",
    cfg: "mutants/PopNoRestore.cfg",
    kind: "mutant",
    expect: SAFETY,
  },
  {
    name: "StealUseAfterFailedCas",
    module: "ChaseLev.tla",
    mutant: "StealUseAfterFailedCas",
    cfg: "mutants/StealUseAfterFailedCas.cfg",
    kind: "mutant",
    expect: SEMANTIC,
  },
  {
    name: "HalfCopiesBeforeClaim",
    module: "ChaseLev.tla",
    mutant: "HalfCopiesBeforeClaim",
    cfg: "mutants/HalfCopiesBeforeClaim.cfg",
    kind: "mutant",
    expect: SEMANTIC,
  },
  {
    name: "HalfCopiesBeforeClaim_Refinement",
    module: "ChaseLev.tla",
    mutant: "HalfCopiesBeforeClaim",
    cfg: "mutants/HalfCopiesBeforeClaim_Refinement.cfg",
    kind: "mutant",
    expect: ["Refinement"],
  },
  {
    // Answers judged, not branches: only the properties of returns can catch these two.
    name: "StealEmptyAfterFailedCas",
    module: "ChaseLev.tla",
    mutant: "StealEmptyAfterFailedCas",
    cfg: "mutants/StealEmptyAfterFailedCas.cfg",
    kind: "mutant",
    expect: ["StealReturns"],
  },
  {
    name: "PopEmptyAfterWin",
    module: "ChaseLev.tla",
    mutant: "PopEmptyAfterWin",
    cfg: "mutants/PopEmptyAfterWin.cfg",
    kind: "mutant",
    expect: ["PopReturns"],
  },
  {
    // Needs a batch of two: ChaseLevHalf's model (ChaseLev.cfg never reaches the recheck).
    name: "HalfRecheckOffByOne",
    module: "ChaseLev.tla",
    mutant: "HalfRecheckOffByOne",
    cfg: "mutants/HalfRecheckOffByOne.cfg",
    kind: "mutant",
    expect: SEMANTIC,
  },
  {
    name: "NarrowCounters_ModCapacity",
    module: "ChaseLev.tla",
    mutant: "NarrowCounters",
    cfg: "mutants/NarrowCounters_ModCapacity.cfg",
    kind: "mutant",
    expect: SAFETY,
  },
  {
    name: "NarrowCounters_TwiceCapacity",
    module: "ChaseLev.tla",
    mutant: "NarrowCounters",
    cfg: "mutants/NarrowCounters_TwiceCapacity.cfg",
    kind: "mutant",
    expect: SAFETY,
  },
  {
    // The ABA itself: a compare-exchange that matches a top one Modulus later.
    name: "NarrowCounters_Aba",
    module: "ChaseLev.tla",
    mutant: "NarrowCounters",
    cfg: "mutants/NarrowCounters_Aba.cfg",
    kind: "mutant",
    expect: [...SEMANTIC, "NoAbaCas"],
  },
  { name: "SleepWake", module: "SleepWake.tla", cfg: "SleepWake.cfg", kind: "real" },
  // A running task forks once: the push onto its worker's deque, then newWork.
  { name: "SleepWakeFork", module: "SleepWake.tla", cfg: "SleepWakeFork.cfg", kind: "real" },
  { name: "SleepWakeLiveness", module: "SleepWake.tla", cfg: "SleepWakeLiveness.cfg", kind: "real" },
  // One worker: nothing passes only because a second worker is awake to find the work.
  { name: "SleepWake1", module: "SleepWake.tla", cfg: "SleepWake1.cfg", kind: "real" },
  { name: "SleepWakeLiveness1", module: "SleepWake.tla", cfg: "SleepWakeLiveness1.cfg", kind: "real" },
  {
    name: "SkipFinalCheck",
    module: "SleepWake.tla",
    mutant: "SkipFinalCheck",
    cfg: "mutants/SkipFinalCheck.cfg",
    kind: "mutant",
    // The skipped check loses whichever wake comes next: for the queued task, or for the stop.
    expect: ["NoLostWakeup", "NoLostStopWake"],
  },
  {
    name: "PosterNoWake",
    module: "SleepWake.tla",
    mutant: "PosterNoWake",
    cfg: "mutants/PosterNoWake.cfg",
    kind: "mutant",
    expect: ["NoLostWakeup"],
  },
  {
    // Missed by the two-worker configurations: the worker left asleep is never the only one.
    name: "PosterNeedsTwoSleepers",
    module: "SleepWake.tla",
    mutant: "PosterNeedsTwoSleepers",
    cfg: "mutants/PosterNeedsTwoSleepers.cfg",
    kind: "mutant",
    expect: ["NoLostWakeup"],
  },
  {
    name: "SleepNarrowCounters_Sleepers",
    module: "SleepWake.tla",
    mutant: "SleepNarrowCounters",
    cfg: "mutants/SleepNarrowCounters_Sleepers.cfg",
    kind: "mutant",
    expect: SLEEP_SAFETY,
  },
  {
    // The same mutant checked for lost wakeups only: the consequence of the overflow, not its cause.
    name: "SleepNarrowCounters_SleepersLost",
    module: "SleepWake.tla",
    mutant: "SleepNarrowCounters",
    cfg: "mutants/SleepNarrowCounters_SleepersLost.cfg",
    kind: "mutant",
    expect: ["NoLostWakeup", "NoLostStopWake", "NoLostMainWake"],
  },
  {
    name: "SleepNarrowCounters_Jec",
    module: "SleepWake.tla",
    mutant: "SleepNarrowCounters",
    cfg: "mutants/SleepNarrowCounters_Jec.cfg",
    kind: "mutant",
    expect: SLEEP_SAFETY,
  },
  { name: "Lifecycle", module: "Lifecycle.tla", cfg: "Lifecycle.cfg", kind: "real" },
  { name: "LifecycleLiveness", module: "Lifecycle.tla", cfg: "LifecycleLiveness.cfg", kind: "real" },
  {
    name: "LifecycleLivenessTerminate",
    module: "Lifecycle.tla",
    cfg: "LifecycleLivenessTerminate.cfg",
    kind: "real",
  },
  // One worker: the joiner gets its subtask back itself; no thief is awake to run it.
  { name: "Lifecycle1", module: "Lifecycle.tla", cfg: "Lifecycle1.cfg", kind: "real" },
  { name: "LifecycleLiveness1", module: "Lifecycle.tla", cfg: "LifecycleLiveness1.cfg", kind: "real" },
  {
    // Missed by the two-worker configurations: the other worker always steals the subtask.
    name: "JoinerWaitsForThief",
    module: "Lifecycle.tla",
    mutant: "JoinerWaitsForThief",
    cfg: "mutants/JoinerWaitsForThief.cfg",
    kind: "mutant",
    expect: ["EveryTaskSettles", "PoolEnds"],
  },
  {
    name: "LatchSetNoNotify",
    module: "Lifecycle.tla",
    mutant: "LatchSetNoNotify",
    cfg: "mutants/LatchSetNoNotify.cfg",
    kind: "mutant",
    expect: ["NoLostLatchWake"],
  },
  {
    name: "TerminateForgetsDeque",
    module: "Lifecycle.tla",
    mutant: "TerminateForgetsDeque",
    cfg: "mutants/TerminateForgetsDeque.cfg",
    kind: "mutant",
    expect: ["TerminateSettlesAll"],
  },
  {
    name: "RecoverySkipsOrphans",
    module: "Lifecycle.tla",
    mutant: "RecoverySkipsOrphans",
    cfg: "mutants/LifecycleRecovery.cfg",
    kind: "mutant",
    expect: ["OrphansComeBack"],
  },
  {
    name: "FinisherStoresLatch",
    module: "Lifecycle.tla",
    mutant: "FinisherStoresLatch",
    cfg: "mutants/LifecycleRecovery.cfg",
    kind: "mutant",
    expect: ["OrphansComeBack"],
  },
  {
    name: "RecoveryFreesUnsetOrphan",
    module: "Lifecycle.tla",
    mutant: "RecoveryFreesUnsetOrphan",
    cfg: "mutants/LifecycleRecovery.cfg",
    kind: "mutant",
    expect: ["FreedAtMostOnce"],
  },
  {
    name: "StartStoresRunning",
    module: "Lifecycle.tla",
    mutant: "StartStoresRunning",
    cfg: "mutants/LifecycleCancel.cfg",
    kind: "mutant",
    expect: ["CancelledNeverRuns"],
  },
  {
    name: "CancelFreesRecord",
    module: "Lifecycle.tla",
    mutant: "CancelFreesRecord",
    cfg: "mutants/LifecycleCancel.cfg",
    kind: "mutant",
    expect: ["FreedAtMostOnce"],
  },
  {
    name: "ThiefRunsAbortedFork",
    module: "Lifecycle.tla",
    mutant: "ThiefRunsAbortedFork",
    cfg: "mutants/LifecycleAbortFork.cfg",
    kind: "mutant",
    expect: ["AbortedForkNotRun"],
  },
  {
    name: "JoinerRunsAbortedFork",
    module: "Lifecycle.tla",
    mutant: "JoinerRunsAbortedFork",
    cfg: "mutants/LifecycleAbortFork.cfg",
    kind: "mutant",
    expect: ["AbortedForkNotRun"],
  },
  { name: "LevelsStarve", module: "Levels.tla", cfg: "LevelsStarve.cfg", kind: "real" },
  { name: "LevelsOrder", module: "Levels.tla", cfg: "LevelsOrder.cfg", kind: "real" },
  { name: "LevelsLiveness", module: "Levels.tla", cfg: "LevelsLiveness.cfg", kind: "real" },
  {
    name: "LevelQuotaIgnored",
    module: "Levels.tla",
    mutant: "LevelQuotaIgnored",
    cfg: "mutants/LevelsStarve.cfg",
    kind: "mutant",
    expect: LEVELS_SAFETY,
  },
  {
    name: "LevelsServedLowFirst",
    module: "Levels.tla",
    mutant: "LevelsServedLowFirst",
    cfg: "mutants/LevelsSafety.cfg",
    kind: "mutant",
    expect: LEVELS_SAFETY,
  },
  {
    name: "LevelNeverAnnounced",
    module: "Levels.tla",
    mutant: "LevelNeverAnnounced",
    cfg: "mutants/LevelsSafety.cfg",
    kind: "mutant",
    expect: LEVELS_SAFETY,
  },
  {
    name: "LevelPopsNewest",
    module: "Levels.tla",
    mutant: "LevelPopsNewest",
    cfg: "mutants/LevelsOrder.cfg",
    kind: "mutant",
    expect: LEVELS_SAFETY,
  },
  { name: "Order", module: "Order.tla", cfg: "Order.cfg", kind: "real" },
  // One worker: the starts are exactly the submission order.
  { name: "Order1", module: "Order.tla", cfg: "Order1.cfg", kind: "real" },
  { name: "Order3", module: "Order.tla", cfg: "Order3.cfg", kind: "real" },
  { name: "OrderLiveness", module: "Order.tla", cfg: "OrderLiveness.cfg", kind: "real" },
  {
    // The code before issue 30, with one worker: the batch in its deque runs newest first.
    name: "BatchRunsReversed",
    module: "Order.tla",
    mutant: "BatchRunsReversed",
    cfg: "mutants/BatchRunsReversed.cfg",
    kind: "mutant",
    expect: ["StartsInOrder"],
  },
  {
    name: "BatchRunsReversed_Fifo",
    module: "Order.tla",
    mutant: "BatchRunsReversed",
    cfg: "mutants/BatchRunsReversed_Fifo.cfg",
    kind: "mutant",
    expect: ["StrictFifo"],
  },
  {
    // Missed by one worker (its batch does run in order): caught by two, the other taking newer tasks.
    name: "BatchKeptInOrder",
    module: "Order.tla",
    mutant: "BatchKeptInOrder",
    cfg: "mutants/BatchKeptInOrder.cfg",
    kind: "mutant",
    expect: ["StartsInOrder"],
  },
  {
    name: "InjectorPopsNewest",
    module: "Order.tla",
    mutant: "InjectorPopsNewest",
    cfg: "mutants/InjectorPopsNewest.cfg",
    kind: "mutant",
    expect: ["StartsInOrder"],
  },
  {
    // The same mutant against each overtake bound alone.
    name: "InjectorPopsNewest_Held",
    module: "Order.tla",
    mutant: "InjectorPopsNewest",
    cfg: "mutants/InjectorPopsNewest_Held.cfg",
    kind: "mutant",
    expect: ["OvertakesOnlyWhileHeld"],
  },
  {
    name: "InjectorPopsNewest_Below",
    module: "Order.tla",
    mutant: "InjectorPopsNewest",
    cfg: "mutants/InjectorPopsNewest_Below.cfg",
    kind: "mutant",
    expect: ["OvertakesBelowWorkers"],
  },
  {
    // Safe but stuck: only the liveness property can catch it.
    name: "InjectorKeepsLast",
    module: "Order.tla",
    mutant: "InjectorKeepsLast",
    cfg: "mutants/InjectorKeepsLast.cfg",
    kind: "mutant",
    expect: ["EveryTaskStarts"],
  },
  { name: "KillGuard", module: "KillGuard.tla", cfg: "KillGuard.cfg", kind: "real" },
  { name: "KillGuardLiveness", module: "KillGuard.tla", cfg: "KillGuardLiveness.cfg", kind: "real" },
  {
    name: "KillIgnoresGuard",
    module: "KillGuard.tla",
    mutant: "KillIgnoresGuard",
    cfg: "mutants/KillGuardSafety.cfg",
    kind: "mutant",
    expect: ["NeverKilledInPoolStep"],
  },
  {
    name: "KillReadsGuardFirst",
    module: "KillGuard.tla",
    mutant: "KillReadsGuardFirst",
    cfg: "mutants/KillGuardSafety.cfg",
    kind: "mutant",
    expect: ["NeverKilledInPoolStep"],
  },
  {
    name: "GuardReadsEpochFirst",
    module: "KillGuard.tla",
    mutant: "GuardReadsEpochFirst",
    cfg: "mutants/KillGuardSafety.cfg",
    kind: "mutant",
    expect: ["NeverKilledInPoolStep"],
  },
  {
    // Needs a second request between the halted worker's load of the epoch and its raise of the guard.
    name: "HaltSkipsRecheck",
    module: "KillGuard.tla",
    mutant: "HaltSkipsRecheck",
    cfg: "mutants/KillGuardSafety.cfg",
    kind: "mutant",
    expect: ["NeverKilledInPoolStep"],
  },
  {
    // Safe but stuck: only the liveness properties can catch these two.
    name: "HaltKeepsGuard",
    module: "KillGuard.tla",
    mutant: "HaltKeepsGuard",
    cfg: "mutants/KillGuardLiveness.cfg",
    kind: "mutant",
    expect: ["KilledUnlessWithdrawn", "HaltedWorkerResumes"],
  },
  {
    name: "WithdrawForgetsEpoch",
    module: "KillGuard.tla",
    mutant: "WithdrawForgetsEpoch",
    cfg: "mutants/KillGuardLiveness.cfg",
    kind: "mutant",
    expect: ["HaltedWorkerResumes"],
  },
  { name: "Slabs", module: "Slabs.tla", cfg: "Slabs.cfg", kind: "real" },
  { name: "SlabsReset", module: "Slabs.tla", cfg: "SlabsReset.cfg", kind: "real" },
  { name: "Slabs1", module: "Slabs.tla", cfg: "Slabs1.cfg", kind: "real" },
  {
    // The bug Slabs.tla found in take (fixed by TakeRecheckSize): a reset remakes the slot smaller between
    // the size read and the claim, and the payload gets a slab too small for it.
    name: "TakeSkipsRecheck",
    module: "Slabs.tla",
    mutant: "TakeSkipsRecheck",
    cfg: "SlabsReset.cfg",
    kind: "mutant",
    expect: ["TakeFits"],
  },
  {
    // Two payloads on one slab: the second taker's claim lands on the first's.
    name: "TakeStoresHeld",
    module: "Slabs.tla",
    mutant: "TakeStoresHeld",
    cfg: "mutants/SlabsSafety.cfg",
    kind: "mutant",
    expect: ["NoOverlap", "ReadsOwnData"],
  },
  {
    name: "ResetClaimsHeld",
    module: "Slabs.tla",
    mutant: "ResetClaimsHeld",
    cfg: "mutants/SlabsSafety.cfg",
    kind: "mutant",
    expect: ["ResetOnlyWhenIdle", "NoOverlap"],
  },
  {
    // The reader has read by then: the damage is the late give-back, over a slot reclaimed and claimed again.
    name: "FreeClearsFirst",
    module: "Slabs.tla",
    mutant: "FreeClearsFirst",
    cfg: "mutants/SlabsDeath.cfg",
    kind: "mutant",
    expect: ["ResetOnlyWhenIdle", "NoOverlap", "FreeSlotsAreCarved"],
  },
  {
    name: "ReclaimIgnoresRecords",
    module: "Slabs.tla",
    mutant: "ReclaimIgnoresRecords",
    cfg: "mutants/SlabsDeath.cfg",
    kind: "mutant",
    expect: ["NoOverlap", "ReadsOwnData"],
  },
  { name: "Injector", module: "Injector.tla", cfg: "Injector.cfg", kind: "real" },
  // Kill anywhere, the deques: a thread dies at any step and the main thread repairs its deque.
  { name: "ChaseLevDeath", module: "ChaseLevDeath.tla", cfg: "ChaseLevDeath.cfg", kind: "real" },
  {
    name: "DequeRecoverySkipped",
    module: "ChaseLevDeath.tla",
    mutant: "DequeRecoverySkipped",
    cfg: "mutants/DequeRecoverySkipped.cfg",
    kind: "mutant",
    expect: ["IndexBounds", "Conservation", "AllTaken", "AllReturned"],
  },
  {
    name: "DequeRecoveryDropsWonTask",
    module: "ChaseLevDeath.tla",
    mutant: "DequeRecoveryDropsWonTask",
    cfg: "mutants/DequeRecoveryDropsWonTask.cfg",
    kind: "mutant",
    // Taken once (by the dead pop), so conservation holds: only its never being returned shows.
    expect: ["AllReturned"],
  },
  {
    name: "DequeRecoveryLosesClaimed",
    module: "ChaseLevDeath.tla",
    mutant: "DequeRecoveryLosesClaimed",
    cfg: "mutants/DequeRecoveryLosesClaimed.cfg",
    kind: "mutant",
    expect: ["Conservation", "AllTaken", "AllReturned"],
  },
  // Kill anywhere, the queue: a thread dies at any step and the main thread recovers it.
  { name: "InjectorDeath", module: "InjectorDeath.tla", cfg: "InjectorDeath.cfg", kind: "real" },
  { name: "InjectorDeath1", module: "InjectorDeath.tla", cfg: "InjectorDeath1.cfg", kind: "real" },
  {
    // A dead thread's claimed position is never completed: the queue is stuck behind it.
    name: "DeathRecoverySkipped",
    module: "InjectorDeath.tla",
    mutant: "DeathRecoverySkipped",
    cfg: "mutants/DeathRecoverySkipped.cfg",
    kind: "mutant",
    expect: ["AllPopped"],
  },
  {
    name: "DeathRecoveryDropsValue",
    module: "InjectorDeath.tla",
    mutant: "DeathRecoveryDropsValue",
    cfg: "mutants/DeathRecoveryDropsValue.cfg",
    kind: "mutant",
    expect: ["Conserved"],
  },
  {
    name: "DeathRecoveryLeavesClaim",
    module: "InjectorDeath.tla",
    mutant: "DeathRecoveryLeavesClaim",
    cfg: "mutants/DeathRecoveryLeavesClaim.cfg",
    kind: "mutant",
    // Its slot says claimed, and no live push holds it (SlotProtocol); nothing behind it is ever popped.
    expect: ["SlotProtocol", "AllPopped"],
  },
  { name: "InjectorSplit", module: "Injector.tla", cfg: "InjectorSplit.cfg", kind: "real" },
  { name: "InjectorCap4", module: "Injector.tla", cfg: "InjectorCap4.cfg", kind: "real" },
  { name: "InjectorLiveness", module: "Injector.tla", cfg: "InjectorLiveness.cfg", kind: "real" },
  // One producer and one consumer: a patient push on a full queue gets room from the one consumer alone.
  { name: "Injector1", module: "Injector.tla", cfg: "Injector1.cfg", kind: "real" },
  { name: "InjectorLiveness1", module: "Injector.tla", cfg: "InjectorLiveness1.cfg", kind: "real" },
  {
    name: "PublishBeforeWrite",
    module: "Injector.tla",
    mutant: "PublishBeforeWrite",
    cfg: "mutants/PublishBeforeWrite.cfg",
    kind: "mutant",
    expect: QUEUE_SEMANTIC,
  },
  {
    name: "PopWithoutCasHead",
    module: "Injector.tla",
    mutant: "PopWithoutCasHead",
    cfg: "mutants/PopWithoutCasHead.cfg",
    kind: "mutant",
    expect: QUEUE_SEMANTIC,
  },
  {
    name: "ReleaseBeforeRead",
    module: "Injector.tla",
    mutant: "ReleaseBeforeRead",
    cfg: "mutants/ReleaseBeforeRead.cfg",
    kind: "mutant",
    expect: QUEUE_SEMANTIC,
  },
  {
    // A lost race answered EMPTY: only PopReturns, which judges the answer, can catch it.
    name: "PopEmptyAfterLostCas",
    module: "Injector.tla",
    mutant: "PopEmptyAfterLostCas",
    cfg: "mutants/PopEmptyAfterLostCas.cfg",
    kind: "mutant",
    expect: ["PopReturns"],
  },
  {
    // A slot that is never freed loses no value: push fails on a queue that is not full.
    name: "ReleaseWrongSeq",
    module: "Injector.tla",
    mutant: "ReleaseWrongSeq",
    cfg: "mutants/ReleaseWrongSeq.cfg",
    kind: "mutant",
    expect: ["PushFailJustified"],
  },
  {
    // The same mutant under fairness: pushPatiently never returns.
    name: "ReleaseWrongSeq_Liveness",
    module: "Injector.tla",
    mutant: "ReleaseWrongSeq",
    cfg: "mutants/ReleaseWrongSeq_Liveness.cfg",
    kind: "mutant",
    expect: ["EveryPushReturns"],
  },
  {
    name: "NarrowPositions_ModCapacity",
    module: "Injector.tla",
    mutant: "NarrowPositions",
    cfg: "mutants/NarrowPositions_ModCapacity.cfg",
    kind: "mutant",
    expect: QUEUE_SEMANTIC,
  },
  {
    // The sequence test misread: a stale difference wraps to the other sign.
    name: "NarrowPositions_TwiceCapacity",
    module: "Injector.tla",
    mutant: "NarrowPositions",
    cfg: "mutants/NarrowPositions_TwiceCapacity.cfg",
    kind: "mutant",
    expect: ["WrappingDiffExact", "PushFailJustified", "PopEmptyJustified"],
  },
  {
    // The ABA itself: a compare-exchange on head that matches a position one Modulus later.
    name: "NarrowPositions_Aba",
    module: "Injector.tla",
    mutant: "NarrowPositions",
    cfg: "mutants/NarrowPositions_Aba.cfg",
    kind: "mutant",
    expect: [...QUEUE_SEMANTIC, "NoAbaCas"],
  },
  { name: "Producers", module: "Producers.tla", cfg: "Producers.cfg", kind: "real" },
  { name: "ProducersTwo", module: "Producers.tla", cfg: "ProducersTwo.cfg", kind: "real" },
  { name: "ProducersClose", module: "Producers.tla", cfg: "ProducersClose.cfg", kind: "real" },
  { name: "ProducersTerminate", module: "Producers.tla", cfg: "ProducersTerminate.cfg", kind: "real" },
  {
    name: "CompletionToOwnerSlot",
    module: "Producers.tla",
    mutant: "CompletionToOwnerSlot",
    cfg: "mutants/ProducersSafety.cfg",
    kind: "mutant",
    expect: ["CompletionsRouted"],
  },
  {
    name: "CompletionToOtherSlot",
    module: "Producers.tla",
    mutant: "CompletionToOtherSlot",
    cfg: "mutants/ProducersTwoSafety.cfg",
    kind: "mutant",
    expect: ["CompletionsRouted"],
  },
  {
    // Its QUEUED record runs after the slot was freed: the completion reaches a FREE slot (or, never read,
    // the record does not come back).
    name: "DeadCleanupSkipsCancel",
    module: "Producers.tla",
    mutant: "DeadCleanupSkipsCancel",
    cfg: "mutants/ProducersDeath.cfg",
    kind: "mutant",
    expect: ["CompletionOnlyToOpenSlot", "RecordsAndSlotsBack"],
  },
  {
    name: "DeadCleanupSkipsDrain",
    module: "Producers.tla",
    mutant: "DeadCleanupSkipsDrain",
    cfg: "mutants/ProducersDeath.cfg",
    kind: "mutant",
    expect: ["CompletionOnlyToOpenSlot", "RecordsAndSlotsBack"],
  },
  {
    // Safe but stuck: the slot stays DEAD, only the liveness property can catch it.
    name: "DeadCleanupNeverDrains",
    module: "Producers.tla",
    mutant: "DeadCleanupNeverDrains",
    cfg: "mutants/ProducersDeath.cfg",
    kind: "mutant",
    expect: ["RecordsAndSlotsBack"],
  },
  {
    // Safe but leaky: only the liveness property can catch it.
    name: "MarkClearedAtStore",
    module: "Producers.tla",
    mutant: "MarkClearedAtStore",
    cfg: "mutants/ProducersDeath.cfg",
    kind: "mutant",
    expect: ["RecordsAndSlotsBack"],
  },
  {
    name: "CloseBeforeRecordsBack",
    module: "Producers.tla",
    mutant: "CloseBeforeRecordsBack",
    cfg: "mutants/ProducersSafety.cfg",
    kind: "mutant",
    expect: ["CompletionOnlyToOpenSlot"],
  },
  {
    name: "ClosedFreesReusedSlot",
    module: "Producers.tla",
    mutant: "ClosedFreesReusedSlot",
    cfg: "mutants/ProducersSafety.cfg",
    kind: "mutant",
    expect: PRODUCERS_ROUTING,
  },
  {
    name: "ClaimsSlotNotFree",
    module: "Producers.tla",
    mutant: "ClaimsSlotNotFree",
    cfg: "mutants/ProducersSafety.cfg",
    kind: "mutant",
    expect: ["SlotExclusive"],
  },
  {
    // Safe but stuck: only a liveness property can catch it.
    name: "TerminateWithoutWake",
    module: "Producers.tla",
    mutant: "TerminateWithoutWake",
    cfg: "mutants/ProducersTerminate.cfg",
    kind: "mutant",
    expect: ["TerminateRejectsAll", "EverySettled"],
  },
  {
    // The order of the code when Producers.tla was written (see spec/docs/Producers.md).
    name: "AdmitReadsStateFirst",
    module: "Producers.tla",
    mutant: "AdmitReadsStateFirst",
    cfg: "mutants/ProducersClose.cfg",
    kind: "mutant",
    expect: ["CloseAbandonsNothing"],
  },
  { name: "RecordWait", module: "RecordWait.tla", cfg: "RecordWait.cfg", kind: "real" },
  {
    // The code before the fix: a producer waits uncounted with a backlog and nothing in flight.
    name: "BacklogUncountedWhileWaiting",
    module: "RecordWait.tla",
    mutant: "BacklogUncountedWhileWaiting",
    cfg: "mutants/RecordWaitSafety.cfg",
    kind: "mutant",
    expect: ["WaitsCounted"],
  },
  {
    // The same mutant without WaitsCounted: the hang itself (the CI hang), under weak fairness.
    name: "BacklogUncountedWhileWaiting_Liveness",
    module: "RecordWait.tla",
    mutant: "BacklogUncountedWhileWaiting",
    cfg: "mutants/RecordWaitLiveness.cfg",
    kind: "mutant",
    expect: ["AllSettled", "BacklogServed"],
  },
  {
    // Counted, but a record freed before the count was seen by no wake: only liveness can catch it.
    name: "RecountSkipsFreeCheck",
    module: "RecordWait.tla",
    mutant: "RecountSkipsFreeCheck",
    cfg: "mutants/RecordWaitLiveness.cfg",
    kind: "mutant",
    expect: ["AllSettled", "BacklogServed", "WaiterServed"],
  },
  {
    // Issue 50: the woken waiter that took one record of two (or none) does not pass the wake on.
    name: "WokenWakesNobody",
    module: "RecordWait.tla",
    mutant: "WokenWakesNobody",
    cfg: "mutants/RecordWaitPass.cfg",
    kind: "mutant",
    expect: ["NoRecordLeftAsleep"],
  },
  {
    // Issue 50: a waiter skipped for ever (the wake's ring one slot short).
    name: "WakeSkipsLastSlot",
    module: "RecordWait.tla",
    mutant: "WakeSkipsLastSlot",
    cfg: "mutants/RecordWaitLiveness.cfg",
    kind: "mutant",
    expect: ["AllSettled", "BacklogServed", "WaiterServed"],
  },
  {
    // Issue 50: the wake gives up at an awake counted producer instead of passing it over.
    name: "StopsAtAwakeWaiter",
    module: "RecordWait.tla",
    mutant: "StopsAtAwakeWaiter",
    cfg: "mutants/RecordWaitPass.cfg",
    kind: "mutant",
    expect: ["NoRecordLeftAsleep"],
  },
  { name: "RoomWait", module: "RoomWait.tla", cfg: "RoomWait.cfg", kind: "real" },
  {
    // The code's room_wakes_nobody: safe, but a producer waiting with nothing pending sleeps on.
    name: "RoomWakesNobody",
    module: "RoomWait.tla",
    mutant: "RoomWakesNobody",
    cfg: "mutants/RoomWaitLiveness.cfg",
    kind: "mutant",
    expect: ROOM_LIVENESS,
  },
  {
    // Counted, but after the check: a settle between them read 0. Only liveness can catch it.
    name: "CountAfterRecheck",
    module: "RoomWait.tla",
    mutant: "CountAfterRecheck",
    cfg: "mutants/RoomWaitLiveness.cfg",
    kind: "mutant",
    expect: ROOM_LIVENESS,
  },
  {
    // A producer waiting for room with nothing pending whose reader does not wait.
    name: "ArmWithoutRoomHook",
    module: "RoomWait.tla",
    mutant: "ArmWithoutRoomHook",
    cfg: "mutants/RoomWaitSafety.cfg",
    kind: "mutant",
    expect: ["WaitsCounted"],
  },
  {
    // The same without WaitsCounted: the hang.
    name: "ArmWithoutRoomHook_Liveness",
    module: "RoomWait.tla",
    mutant: "ArmWithoutRoomHook",
    cfg: "mutants/RoomWaitLiveness.cfg",
    kind: "mutant",
    expect: ROOM_LIVENESS,
  },
  {
    // The order of the code when RoomWait.tla was written (see spec/docs/RoomWait.md).
    name: "CheckBeforeArm",
    module: "RoomWait.tla",
    mutant: "CheckBeforeArm",
    cfg: "mutants/RoomWaitLiveness.cfg",
    kind: "mutant",
    expect: ROOM_LIVENESS,
  },
  { name: "Graph", module: "Graph.tla", cfg: "Graph.cfg", kind: "real" },
  { name: "GraphChain", module: "Graph.tla", cfg: "GraphChain.cfg", kind: "real" },
  { name: "GraphJoin", module: "Graph.tla", cfg: "GraphJoin.cfg", kind: "real" },
  { name: "GraphLiveness", module: "Graph.tla", cfg: "GraphLiveness.cfg", kind: "real" },
  { name: "Graph1", module: "Graph.tla", cfg: "Graph1.cfg", kind: "real" },
  {
    name: "CountDecrementedTwice",
    module: "Graph.tla",
    mutant: "CountDecrementedTwice",
    cfg: "mutants/GraphSafety.cfg",
    kind: "mutant",
    expect: GRAPH_SAFETY,
  },
  {
    name: "StartAtOne",
    module: "Graph.tla",
    mutant: "StartAtOne",
    cfg: "mutants/GraphSafety.cfg",
    kind: "mutant",
    expect: GRAPH_SAFETY,
  },
  {
    // The same on the join, whose first decrement reads 2: the early start itself.
    name: "StartAtOne_Join",
    module: "Graph.tla",
    mutant: "StartAtOne",
    cfg: "mutants/GraphJoinSafety.cfg",
    kind: "mutant",
    expect: ["StartsAfterInputs"],
  },
  {
    name: "StartOnEveryDecrement",
    module: "Graph.tla",
    mutant: "StartOnEveryDecrement",
    cfg: "mutants/GraphSafety.cfg",
    kind: "mutant",
    expect: GRAPH_SAFETY,
  },
  {
    name: "CancelledInputLeavesWaiting",
    module: "Graph.tla",
    mutant: "CancelledInputLeavesWaiting",
    cfg: "mutants/GraphSafety.cfg",
    kind: "mutant",
    expect: GRAPH_SAFETY,
  },
  {
    // The same without NoLeakAtRest: the hang.
    name: "CancelledInputLeavesWaiting_Liveness",
    module: "Graph.tla",
    mutant: "CancelledInputLeavesWaiting",
    cfg: "mutants/GraphLiveness.cfg",
    kind: "mutant",
    expect: GRAPH_LIVENESS,
  },
  {
    name: "RejectedInputLeavesWaiting",
    module: "Graph.tla",
    mutant: "RejectedInputLeavesWaiting",
    cfg: "mutants/GraphSafety.cfg",
    kind: "mutant",
    expect: GRAPH_SAFETY,
  },
  {
    name: "ReadBeforePublish",
    module: "Graph.tla",
    mutant: "ReadBeforePublish",
    cfg: "mutants/GraphSafety.cfg",
    kind: "mutant",
    expect: GRAPH_SAFETY,
  },
  {
    name: "DeathLeavesDependantsWaiting",
    module: "Graph.tla",
    mutant: "DeathLeavesDependantsWaiting",
    cfg: "mutants/GraphSafety.cfg",
    kind: "mutant",
    expect: GRAPH_SAFETY,
  },
  {
    // The same without NoLeakAtRest: the hang.
    name: "DeathLeavesDependantsWaiting_Liveness",
    module: "Graph.tla",
    mutant: "DeathLeavesDependantsWaiting",
    cfg: "mutants/GraphLiveness.cfg",
    kind: "mutant",
    expect: GRAPH_LIVENESS,
  },
  {
    name: "ZeroStoresQueued",
    module: "Graph.tla",
    mutant: "ZeroStoresQueued",
    cfg: "mutants/GraphSafety.cfg",
    kind: "mutant",
    expect: GRAPH_SAFETY,
  },
  {
    name: "ZeroIgnoresCause",
    module: "Graph.tla",
    mutant: "ZeroIgnoresCause",
    cfg: "mutants/GraphSafety.cfg",
    kind: "mutant",
    expect: GRAPH_SAFETY,
  },
  {
    name: "CancelStoresCancelled",
    module: "Graph.tla",
    mutant: "CancelStoresCancelled",
    cfg: "mutants/GraphSafety.cfg",
    kind: "mutant",
    expect: GRAPH_SAFETY,
  },
  { name: "Elastic", module: "Elastic.tla", cfg: "Elastic.cfg", kind: "real" },
  { name: "ElasticLiveness", module: "Elastic.tla", cfg: "ElasticLiveness.cfg", kind: "real" },
  { name: "Elastic1", module: "Elastic.tla", cfg: "Elastic1.cfg", kind: "real" },
  {
    name: "RetireNonEmptyDeque",
    module: "Elastic.tla",
    mutant: "RetireNonEmptyDeque",
    cfg: "mutants/ElasticSafety.cfg",
    kind: "mutant",
    expect: ELASTIC_SAFETY,
  },
  {
    name: "RetireLeavesCount",
    module: "Elastic.tla",
    mutant: "RetireLeavesCount",
    cfg: "mutants/ElasticSafety.cfg",
    kind: "mutant",
    expect: ELASTIC_SAFETY,
  },
  {
    name: "GrowthStartsNone",
    module: "Elastic.tla",
    mutant: "GrowthStartsNone",
    cfg: "mutants/ElasticLiveness.cfg",
    kind: "mutant",
    expect: ["EveryTaskRuns"],
  },
  {
    name: "DirectToRetiring",
    module: "Elastic.tla",
    mutant: "DirectToRetiring",
    cfg: "mutants/ElasticSafety.cfg",
    kind: "mutant",
    expect: ELASTIC_SAFETY,
  },
  {
    name: "RetireBelowMin",
    module: "Elastic.tla",
    mutant: "RetireBelowMin",
    cfg: "mutants/ElasticSafety.cfg",
    kind: "mutant",
    expect: ELASTIC_SAFETY,
  },
  {
    name: "RetireStoresRetiring",
    module: "Elastic.tla",
    mutant: "RetireStoresRetiring",
    cfg: "mutants/ElasticSafety.cfg",
    kind: "mutant",
    expect: ELASTIC_SAFETY,
  },
  {
    name: "NoGrowthAfterRetire",
    module: "Elastic.tla",
    mutant: "NoGrowthAfterRetire",
    cfg: "mutants/ElasticSafety1.cfg",
    kind: "mutant",
    expect: ELASTIC_SAFETY,
  },
  {
    name: "NoGrowthWhenNobodyWoken",
    module: "Elastic.tla",
    mutant: "NoGrowthWhenNobodyWoken",
    cfg: "mutants/ElasticSafety0.cfg",
    kind: "mutant",
    expect: ELASTIC_SAFETY,
  },
  {
    // The same at the minimum of 0 under fairness: the hang.
    name: "NoGrowthWhenNobodyWoken_Liveness",
    module: "Elastic.tla",
    mutant: "NoGrowthWhenNobodyWoken",
    cfg: "mutants/ElasticLiveness.cfg",
    kind: "mutant",
    expect: ["EveryTaskRuns"],
  },
];

/**
 * CI's models: for the real configurations named here, the constants CI's run sets smaller than their `.cfg`
 * (which keeps the full model, run by `--full`: `npm run check:tla:full`). The rule: the smallest model tried
 * that still catches every kept mutant of its family that the full models catch (each mutant was run against
 * the CI models of its family's real configurations: spec/README.md, "CI's model sizes"). The mutant
 * configurations are already that small, and run as they are. A name that is not a real configuration, or a
 * constant its `.cfg` does not set, fails the command.
 */
export const CI_SIZES: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  // The deque: ChaseLev at two pushes catches every deque mutant but HalfRecheckOffByOne, which ChaseLevCap4
  // at three catches (it needs a batch of two). No mutant needs a third thief, nor a second push under the
  // liveness check.
  ChaseLev: { Pushes: "2" },
  ChaseLevCap4: { Pushes: "3" },
  ChaseLev3Thieves: { Pushes: "1" },
  ChaseLevLiveness3: { Pushes: "1" },
  // Sleep and wake: two workers and one submission catch the sleep mutants of two workers (the JEC started
  // two moves before its wrap, as in SleepWakeLiveness, so that it still wraps).
  SleepWake: { Submits: "1", InitJec: "14" },
  // The lifecycle: two tasks and one death catch every lifecycle mutant but JoinerWaitsForThief, which only
  // its own one-worker configuration catches (with two workers the other one always steals the subtask).
  Lifecycle: { Tasks: "2", MaxDeaths: "1" },
  LifecycleLiveness: { Tasks: "1" },
  LifecycleLivenessTerminate: { Tasks: "1" },
  // The queue: Injector at one value a producer catches every queue mutant.
  Injector: { PushesEach: "1" },
  InjectorCap4: { PushesEach: "2" },
  // The levels: one worker catches every levels mutant (LevelNeverAnnounced in LevelsOrder's scenario); with
  // one worker the overtake bound is 2, and "starve" still submits 5 high tasks behind the low one.
  // LevelsLiveness keeps its two workers, and the mutants' configurations theirs.
  LevelsStarve: { Workers: "{w1}" },
  LevelsOrder: { Workers: "{w1}" },
  // The graph: two workers (three in the full models), nodes 2 and 3 that may throw (1 as well in the full
  // models), node 2 alone under the liveness check, catch every graph mutant.
  Graph: { Workers: "{w1, w2}", MayFail: "{2, 3}" },
  GraphLiveness: { Workers: "{w1, w2}", MayFail: "{2}" },
  // The elastic pool: two slots and one idle timeout (three and two in the full model) catch the six elastic
  // mutants that a minimum of one can show (each mutant also has its own configuration, of one or two slots).
  Elastic: { Workers: "{w1, w2}", MaxRetires: "1" },
};

/**
 * The configuration TLC reads for a run: its `.cfg`, with CI's smaller constants (`CI_SIZES`) unless `full`.
 *
 * @param cfgText The `.cfg` file's text.
 * @param run The run.
 * @param full Whether to keep the `.cfg`'s own (full) model.
 * @returns The configuration's text.
 * @throws {RangeError} If a constant of `CI_SIZES` is not set in the `.cfg` as `Name = value` on a line.
 */
export function configText(cfgText: string, run: Run, full: boolean): string {
  const sizes = full || run.kind !== "real" ? undefined : CI_SIZES[run.name];
  if (sizes === undefined) return cfgText;
  let text = cfgText;
  for (const [name, value] of Object.entries(sizes)) {
    const line = new RegExp(`^(\\s*${name}\\s*=\\s*)\\S.*$`, "m");
    if (!line.test(text)) {
      throw new RangeError(`Cannot set CI's ${name} = ${value} in spec/${run.cfg} as it sets no ${name} = ...`);
    }
    text = text.replace(line, `$1${value} \\* CI's model (the full model: npm run check:tla:full)`);
  }
  return text;
}

/** What one TLC run produced, as read from its output. */
export interface Outcome {
  /** Distinct states found (the last count TLC printed), or null if it printed none. */
  distinct: number | null;
  /** Depth of the complete state graph (a passing run), or the length of the counterexample. */
  depth: number | null;
  /** The property TLC reported violated (several temporal ones at once: "A and B"), or null. */
  violated: string | null;
  /** TLC said "No error has been found". */
  clean: boolean;
  /** Number of states in the counterexample TLC printed (0 if none). */
  traceLength: number;
  /** The first line of an error that is not a property violation (parse error, failed ASSUME, ...). */
  otherError: string | null;
}

/**
 * Reads TLC's standard output (the same text on TLC 1.7.4 and 1.8.0).
 *
 * @param text What TLC printed.
 * @param modules The text of each module by name, to name a property TLC reports by its place.
 * @returns The counts and the verdict material in it.
 */
export function parseTlcOutput(text: string, modules: Record<string, string> = {}): Outcome {
  const lastNumber = (re: RegExp): number | null => {
    let found: number | null = null;
    for (const m of text.matchAll(re)) found = Number(m[1].replaceAll(",", ""));
    return found;
  };
  const distinct = lastNumber(/([\d,]+) distinct states? found/g);
  const traceLength = [...text.matchAll(/^State (\d+):/gm)].length;
  const graphDepth = lastNumber(/The depth of the complete state graph search is (\d+)/g);
  let violated: string | null = null;
  const invariant = /Error: Invariant (\w+) is violated/.exec(text);
  // A named property: "Action property Name is violated". A conjunct of a property (such as the
  // [][...]_vars part of Refinement) is reported by place: "Action property line 306, col 30 to line
  // 306, col 63 of module ChaseLev is violated"; name it after the definition that holds that line.
  const placed = /Error: Action property line (\d+), col \d+ to line \d+, col \d+ of module (\w+) is violated/.exec(
    text,
  );
  const action = placed
    ? [placed[0], definitionAt(modules[placed[2]] ?? "", Number(placed[1])) ?? `line ${placed[1]} of ${placed[2]}`]
    : /Error: Action property (\w+)[^\n]*is violated/.exec(text);
  const property = /Error: (?:Temporal )?[Pp]roperty (\w+)[^\n]*violated/.exec(text);
  // One behaviour may break several temporal properties at once: "Temporal properties A and B were
  // violated" (three: "A, B, and C", with TLC's serial comma). They are reported together, as "A and B".
  const properties = /Error: Temporal properties (\w+(?:(?:,? and |, )\w+)+) were violated/.exec(text);
  if (invariant) violated = invariant[1];
  else if (action) violated = action[1];
  else if (property) violated = property[1];
  else if (properties) violated = properties[1].split(/,? and |, /).join(" and ");
  else if (/Error: Temporal properties were violated/.test(text)) violated = "(temporal)";
  const clean = /No error has been found/.test(text);
  let otherError: string | null = null;
  if (!clean && violated === null) {
    const line = text.split("\n").find((l) => /^TIMED OUT/.test(l)) ??
      text.split("\n").find((l) => /^Error|Exception|error/.test(l) && !/^Error: The behavior/.test(l));
    otherError = line?.trim() ?? "TLC ended without a verdict";
  }
  return { distinct, depth: graphDepth ?? (traceLength || null), violated, clean, traceLength, otherError };
}

/**
 * The name of the top-level definition that contains a line of a TLA+ module.
 *
 * @param moduleText The module's text.
 * @param line A 1-based line number.
 * @returns The name of the last definition starting at or before that line, or null.
 */
export function definitionAt(moduleText: string, line: number): string | null {
  const lines = moduleText.split("\n").slice(0, line);
  for (let i = lines.length - 1; i >= 0; i--) {
    const m = /^([A-Za-z_]\w*)\s*(\(.*\))?\s*==/.exec(lines[i]);
    if (m) return m[1];
  }
  return null;
}

/**
 * The verdict for a run: PASS / FAIL for a real configuration, mutant CAUGHT / mutant MISSED for a
 * mutant, ERROR for anything TLC did that is neither (a parse error, a failed assumption, an
 * unexpected property), and whether that verdict is the expected one.
 *
 * @param run The configuration that ran.
 * @param outcome What TLC printed, parsed.
 * @param exitCode TLC's exit code.
 * @returns The verdict text and whether it is expected.
 */
export function verdict(run: Run, outcome: Outcome, exitCode: number | null): { text: string; ok: boolean } {
  if (run.kind === "real") {
    if (outcome.clean && exitCode === 0) return { text: "PASS", ok: true };
    if (outcome.violated) return { text: `FAIL (${outcome.violated} violated)`, ok: false };
    return { text: `FAIL (${outcome.otherError ?? `exit ${exitCode}`})`, ok: false };
  }
  if (outcome.clean) return { text: "mutant MISSED", ok: false };
  // Caught only if every property the counterexample broke is one the mutant is expected to break.
  const broken = outcome.violated?.split(" and ") ?? [];
  if (outcome.violated && outcome.traceLength > 0 && broken.every((p) => (run.expect ?? []).includes(p))) {
    return { text: `mutant CAUGHT (${outcome.violated})`, ok: true };
  }
  if (outcome.violated) {
    return { text: `ERROR (mutant broke ${outcome.violated}, not a property it should)`, ok: false };
  }
  return { text: `ERROR (${outcome.otherError ?? `exit ${exitCode}`})`, ok: false };
}

/**
 * Prints the banner of a check that could not run TLC: SKIPPED, why, and how to give it a jar.
 *
 * @param what The check ("TLA+ model check", "trace validation").
 * @param reason Why TLC cannot run.
 */
export function printSkipped(what: string, reason: string): void {
  console.log("");
  console.log("==================================================================");
  console.log(`SKIPPED: ${what} not run: ${reason}`);
  console.log("Nothing was checked. Set TLA2TOOLS_JAR, or put tla2tools.jar at");
  console.log(`${cachedJarPath()}, or run on a machine with network access.`);
  console.log("==================================================================");
}

/** Why TLC cannot run here (no Java, no jar): the run is SKIPPED, never passed. */
export class Skip extends Error {}

function sha256(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/** The cache path of the jar: `${XDG_CACHE_HOME:-$HOME/.cache}/filch/tla2tools.jar`. */
export function cachedJarPath(env: Record<string, string | undefined> = process.env): string {
  const base = env.XDG_CACHE_HOME && env.XDG_CACHE_HOME !== "" ? env.XDG_CACHE_HOME : join(homedir(), ".cache");
  return join(base, "filch", "tla2tools.jar");
}

/**
 * Finds tla2tools.jar (see the module doc for the order).
 *
 * @returns Its path.
 * @throws {Skip} If there is none and none can be fetched.
 */
export async function findJar(): Promise<string> {
  const fromEnv = process.env.TLA2TOOLS_JAR;
  if (fromEnv !== undefined && fromEnv !== "") {
    if (!existsSync(fromEnv)) throw new Skip(`TLA2TOOLS_JAR is set to ${fromEnv}, which does not exist`);
    console.log(`jar: ${fromEnv} (from TLA2TOOLS_JAR)`);
    return fromEnv;
  }
  const cached = cachedJarPath();
  if (existsSync(cached)) {
    console.log(`jar: ${cached} (cache; sha256 ${sha256(readFileSync(cached)).slice(0, 16)}…)`);
    return cached;
  }
  console.log(
    `jar: none in TLA2TOOLS_JAR or ${cached}; downloading tla2tools ${PINNED_JAR.version} from ${PINNED_JAR.url}`,
  );
  let bytes: Uint8Array;
  try {
    const response = await fetch(PINNED_JAR.url, { signal: AbortSignal.timeout(120_000) });
    if (!response.ok) throw new Error(`HTTP ${response.status} ${response.statusText}`);
    bytes = new Uint8Array(await response.arrayBuffer());
  } catch (error) {
    throw new Skip(`no tla2tools.jar: the download of ${PINNED_JAR.url} failed (${String(error)})`);
  }
  const digest = sha256(bytes);
  if (digest !== PINNED_JAR.sha256) {
    throw new Skip(
      `no tla2tools.jar: the download's SHA-256 is ${digest}, not the pinned ${PINNED_JAR.sha256}; not cached`,
    );
  }
  mkdirSync(dirname(cached), { recursive: true });
  const partial = `${cached}.${process.pid}.partial`;
  writeFileSync(partial, bytes);
  renameSync(partial, cached);
  console.log(`jar: downloaded, SHA-256 verified, cached at ${cached}`);
  return cached;
}

/**
 * Finds Java.
 *
 * @returns The java command.
 * @throws {Skip} If `java -version` fails.
 */
export function findJava(): string {
  const home = process.env.JAVA_HOME;
  const java = home ? join(home, "bin", "java") : "java";
  const probe = spawnSync(java, ["-version"], { encoding: "utf8" });
  if (probe.error || probe.status !== 0) {
    throw new Skip(`no Java: \`${java} -version\` failed (${probe.error?.message ?? `exit ${probe.status}`})`);
  }
  const version = (probe.stderr || probe.stdout).split("\n")[0];
  console.log(`java: ${java} (${version.trim()})`);
  return java;
}

/**
 * The text of a run's module: the real spec, or for a mutant the real spec with its patches applied.
 *
 * @param specDir The `spec/` directory.
 * @param run The run.
 * @returns The module text TLC checks.
 * @throws {PatchError} If a mutant's patch no longer applies.
 */
export function moduleText(specDir: string, run: Run): string {
  const real = readFileSync(join(specDir, run.module), "utf8");
  return run.mutant === undefined ? real : applyMutant(mutantNamed(run.mutant), real);
}

function runTlc(
  java: string,
  jar: string,
  specDir: string,
  run: Run,
  text: string,
  cfg: string,
  workers: number,
): Promise<{ output: string; code: number | null; seconds: number }> {
  // Each run gets its own directory: TLC writes its states/ and any trace files beside the spec.
  const work = mkdtempSync(join(tmpdir(), "filch-tlc-"));
  for (const f of readdirSync(specDir)) if (f.endsWith(".tla")) copyFileSync(join(specDir, f), join(work, f));
  // A mutant keeps the real module's name, so the configuration and any INSTANCE of it work unchanged.
  writeFileSync(join(work, basename(run.module)), text);
  writeFileSync(join(work, basename(run.cfg)), cfg);
  const args = [
    "-XX:+UseParallelGC",
    "-cp",
    jar,
    "tlc2.TLC",
    // Liveness is checked once, on the complete state graph: TLC's periodic checks during the search hung
    // now and then (about one run in four of a mutant whose liveness violation a periodic check found:
    // the main thread ended, a worker waited on the state queue for ever, TLC never exited).
    "-lncheck",
    "final",
    "-workers",
    String(workers),
    "-metadir",
    join(work, "states"),
    "-config",
    basename(run.cfg),
    basename(run.module),
  ];
  return runWithDeadline(java, args, work, RUN_DEADLINE_S, `TLC on ${run.cfg}`).finally(() => rmSync(work, { recursive: true, force: true }));
}

/**
 * Runs a command (TLC, a traced run) in `cwd`, killing it after `deadlineS` seconds: a run that hangs (or
 * outgrows its model) is a failure with a message, not a stuck CI.
 *
 * @param command The command.
 * @param args Its arguments.
 * @param cwd Where it runs.
 * @param deadlineS The most it may take, in seconds.
 * @param what What runs, for the message of a run killed at its deadline ("TLC on ChaseLev.cfg").
 * @param env Its environment (default: this process's).
 * @returns What it printed (stdout and stderr, in order of arrival), its exit code and how long it took.
 */
export function runWithDeadline(
  command: string,
  args: string[],
  cwd: string,
  deadlineS: number,
  what: string,
  env: Record<string, string | undefined> = process.env,
): Promise<{ output: string; code: number | null; seconds: number }> {
  const started = performance.now();
  return new Promise((done) => {
    const child = spawn(command, args, { cwd, env });
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    child.stderr.on("data", (chunk) => (output += chunk));
    const deadline = setTimeout(() => {
      output += `\nTIMED OUT: ${what} ran past ${deadlineS} s; killed\n`;
      child.kill("SIGKILL");
    }, deadlineS * 1000);
    child.on("close", (code) => {
      clearTimeout(deadline);
      done({ output, code, seconds: (performance.now() - started) / 1000 });
    });
  });
}

/** The longest one TLC run may take (the largest configuration takes 2–8 minutes on this 2-core machine). */
const RUN_DEADLINE_S = 20 * 60;

function pad(text: string, width: number, right = false): string {
  return right ? text.padStart(width) : text.padEnd(width);
}

/** The table row of a finished run (and, for an unexpected outcome, TLC's lines that say why). */
function row(
  specDir: string,
  run: Run,
  text: string,
  output: string,
  code: number | null,
  seconds: number,
): { lines: string; ok: boolean } {
  const modules: Record<string, string> = { [basename(run.module, ".tla")]: text };
  for (const path of readdirSync(specDir).filter((f) => f.endsWith(".tla"))) {
    modules[basename(path, ".tla")] ??= readFileSync(join(specDir, path), "utf8");
  }
  const outcome = parseTlcOutput(output, modules);
  const v = verdict(run, outcome, code);
  const patches = run.mutant !== undefined ? `, ${mutantNamed(run.mutant).patches.length} patch(es)` : "";
  const trace = run.kind === "mutant" && outcome.traceLength > 0
    ? ` trace of ${outcome.traceLength} states${patches}`
    : "";
  let lines = `${pad(run.name, 34)} ${pad(run.kind, 6)} ${pad(String(outcome.distinct ?? "-"), 10, true)} ${
    pad(String(outcome.depth ?? "-"), 6, true)
  } ${pad(`${seconds.toFixed(1)}s`, 8, true)}  ${v.text}${trace}`;
  if (!v.ok) {
    lines += "\n" + output.split("\n").filter((l) => /Error|error|violated|Exception|Assumption|TIMED OUT/.test(l))
      .slice(0, 12).map((l) => `    | ${l}`).join("\n");
  }
  return { lines, ok: v.ok };
}

async function main(argv: string[]): Promise<number> {
  const specDir = dirname(fileURLToPath(import.meta.url));
  let workers = Math.max(1, availableParallelism());
  let only: Set<string> | null = null;
  let full = false;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--workers") workers = Number(argv[++i]);
    else if (argv[i] === "--full") full = true;
    else if (argv[i] === "--only") only = new Set(argv[++i].split(","));
    else if (argv[i] === "--list") {
      for (const r of RUNS) {
        const sizes = r.kind === "real" && CI_SIZES[r.name] !== undefined
          ? Object.entries(CI_SIZES[r.name]).map(([k, v]) => `${k} = ${v}`).join(", ")
          : "";
        console.log(`${r.kind}\t${r.name}\t${r.module}\t${r.cfg}\t${r.mutant ?? ""}\t${sizes}`);
      }
      return 0;
    } else {throw new RangeError(
        `Cannot run check.ts as '${argv[i]}' is not an option: use --full, --workers N, --only A,B or --list`,
      );}
  }
  if (!Number.isInteger(workers) || workers < 1) {
    throw new RangeError(`Cannot run check.ts as '--workers' must be a positive integer: received ${workers}`);
  }

  // Every .cfg must be listed, so a new configuration cannot be silently skipped.
  const listed = new Set(RUNS.map((r) => r.cfg));
  // (`*Trace.cfg` are trace validations, run by spec/trace.ts on logs of real runs.)
  const present = [
    ...readdirSync(specDir).filter((f) => f.endsWith(".cfg") && !f.endsWith("Trace.cfg")),
    ...readdirSync(join(specDir, "mutants")).filter((f) => f.endsWith(".cfg")).map((f) => `mutants/${f}`),
  ];
  const unlisted = present.filter((f) => !listed.has(f));
  const missing = RUNS.filter((r) => !existsSync(join(specDir, r.cfg)) || !existsSync(join(specDir, r.module)));
  let problems = 0;
  for (const f of unlisted) {
    console.log(`FAIL: spec/${f} is not listed in spec/check.ts RUNS`);
    problems++;
  }
  for (const r of missing) {
    console.log(`FAIL: ${r.name}: spec/${r.module} or spec/${r.cfg} does not exist`);
    problems++;
  }
  // Every mutant of spec/mutants.ts must be run by some configuration.
  for (const m of SPEC_MUTANTS) {
    if (!RUNS.some((r) => r.mutant === m.name)) {
      console.log(`FAIL: mutant ${m.name} of spec/mutants.ts is run by no entry of spec/check.ts RUNS`);
      problems++;
    }
  }

  // CI's sizes must name real configurations.
  for (const name of Object.keys(CI_SIZES)) {
    if (!RUNS.some((r) => r.kind === "real" && r.name === name)) {
      console.log(`FAIL: CI_SIZES names ${name}, which is no real configuration of spec/check.ts RUNS`);
      problems++;
    }
  }

  // Every mutant's patches must still apply to its real spec, and CI's sizes to their configurations
  // (checked before any TLC run, so that a stale patch fails the command even when Java or the jar is
  // missing).
  const texts = new Map<Run, string>();
  const cfgs = new Map<Run, string>();
  for (const r of RUNS) {
    if (!existsSync(join(specDir, r.module)) || !existsSync(join(specDir, r.cfg))) continue;
    try {
      cfgs.set(r, configText(readFileSync(join(specDir, r.cfg), "utf8"), r, full));
      texts.set(r, moduleText(specDir, r));
    } catch (error) {
      if (!(error instanceof PatchError || error instanceof RangeError)) throw error;
      console.log(`FAIL: ${r.name}: ${error.message}`);
      problems++;
    }
  }

  let java: string;
  let jar: string;
  try {
    java = findJava();
    jar = await findJar();
  } catch (error) {
    if (!(error instanceof Skip)) throw error;
    printSkipped("TLA+ model check", error.message);
    return problems > 0 ? 1 : 2;
  }

  // The real configurations start first, the mutants after them: the longest runs are real ones, and
  // started last they would leave one core idle at the end while the other finishes them; the mutants' short
  // runs fill both cores to the end instead. Rows are printed in this order.
  const chosen = RUNS.filter((r) => only === null || only.has(r.name));
  const runs = [...chosen.filter((r) => r.kind === "real"), ...chosen.filter((r) => r.kind !== "real")];
  const smaller = runs.filter((r) => r.kind === "real" && CI_SIZES[r.name] !== undefined).length;
  console.log(
    `TLC with 1 worker a run, ${workers} run(s) at once; ${runs.length} configuration(s); ${
      full ? "full models (--full)" : `CI's models (${smaller} real configuration(s) smaller than their .cfg; ` +
        "the full ones: npm run check:tla:full)"
    }\n`,
  );
  const header = `${pad("config", 34)} ${pad("kind", 6)} ${pad("distinct", 10, true)} ${pad("depth", 6, true)} ${
    pad("time", 8, true)
  }  verdict`;
  console.log(header);
  console.log("-".repeat(header.length + 30));
  const started = performance.now();
  // Each run is one TLC worker, and `workers` runs go at once (two on this 2-core machine), in the order
  // above (real configurations first); their rows are printed in that order too. One TLC of two workers left a core idle for much of
  // its run: its liveness check (at the end, `-lncheck final`) is single-threaded, and its start, its
  // parse and a mutant's short search hardly use a second worker. The whole command took 35-40 minutes so,
  // at the step's deadline in CI (stop 37's CI was killed there).
  let free = workers;
  let freed: (() => void) | undefined;
  const finished = runs.map(() => {
    let settle!: (row: { lines: string; ok: boolean }) => void;
    const promise = new Promise<{ lines: string; ok: boolean }>((resolve) => (settle = resolve));
    return { promise, settle };
  });
  const printing = (async () => {
    for (const { promise } of finished) {
      const { lines, ok } = await promise;
      console.log(lines);
      if (!ok) problems++;
    }
  })();
  for (const [i, run] of runs.entries()) {
    const text = texts.get(run);
    const cfg = cfgs.get(run);
    if (text === undefined || cfg === undefined) {
      finished[i].settle({ lines: `${pad(run.name, 34)} (not run: its FAIL is counted above)`, ok: true });
      continue;
    }
    // One TLC worker also makes a mutant's breadth-first search deterministic, so the property it reports
    // first (and the verdict) is the same on every run. With several workers, which of two violations of
    // the same depth is found first varies.
    while (free === 0) await new Promise<void>((resolve) => (freed = resolve));
    free--;
    void runTlc(java, jar, specDir, run, text, cfg, 1).then(({ output, code, seconds }) => {
      free++;
      freed?.();
      freed = undefined;
      finished[i].settle(row(specDir, run, text, output, code, seconds));
    });
  }
  await printing;
  const total = ((performance.now() - started) / 1000).toFixed(1);
  console.log("");
  if (problems > 0) {
    console.log(`TLA+ check FAILED: ${problems} unexpected outcome(s) in ${total}s`);
    return 1;
  }
  const what = (only === null
    ? "every real configuration passed and every mutant was caught"
    : `${runs.length} configuration(s) as expected`) + (full ? " (full models)" : " (CI's models)");
  console.log(`TLA+ check ok: ${what}, in ${total}s`);
  return 0;
}

if (import.meta.main ?? process.argv[1] === fileURLToPath(import.meta.url)) {
  const code = await main(process.argv.slice(2));
  // Exits once standard output has flushed: to a slow pipe (tests/run_all.ts parses the summary) a plain
  // exit() can drop the last lines.
  process.stdout.write("", () => process.exit(code));
}
