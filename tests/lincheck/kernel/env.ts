/**
 * The environment every suite of tests/lincheck reads (tests may read it; `lib/` never does), and the
 * one-line rendering of a run's violations. Read on the controller's thread (the test's main thread).
 *
 * Environment:
 * - `FILCH_LINCHECK_SEED`  the fast-check seed (default {@link DEFAULT_SEED}; always printed).
 * - `FILCH_LINCHECK_RUNS`  the deque's random-mode interleavings (default 40,000; the long run uses 100,000+).
 * - `FILCH_LINCHECK_PATH`  with a seed: replay one run (fast-check's counterexample path) and stop.
 * - `FILCH_LINCHECK_OUT`   where failing traces (ndjson) go (default `<tmp>/filch-lincheck`).
 * - `FILCH_LINCHECK_MUTANT`  run the deque's random mode on this mutant instead of lib/protocol/deque.ts (to
 *   see a failure report, or to reproduce one).
 * - `FILCH_LINCHECK_STRESS_ROUNDS`  stress-mode rounds (default 3,000).
 * Each model's suite reads its own besides (`FILCH_LINCHECK_QUEUE_RUNS`, `FILCH_LINCHECK_SLEEP_RUNS` …).
 *
 * @module
 */

/** The fixed CI seed. */
export const DEFAULT_SEED = 20261121;

/** Reads an environment variable on Deno, Bun or Node. */
export function env(name: string): string | undefined {
  const g = globalThis as unknown as {
    Deno?: { env: { get(n: string): string | undefined } };
    process?: { env: Record<string, string | undefined> };
  };
  if (g.Deno) return g.Deno.env.get(name);
  return g.process?.env[name];
}

/** An integer environment variable (at least `min`), or `fallback` when it is unset or empty. */
export function intEnv(name: string, fallback: number, min = -Infinity): number {
  const raw = env(name);
  if (raw === undefined || raw === "") return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) {
    throw new RangeError(
      `Cannot read ${name} as it must be an integer${min > -Infinity ? ` >= ${min}` : ""}: received ${raw}`,
    );
  }
  return n;
}

/**
 * The mutant the environment variable `name` picks for a random-mode run, and its variant number in a
 * harness that loads the shipped module (0) and then `mutants` in order; none set: the shipped module.
 */
export function mutantFromEnv(name: string, mutants: readonly { name: string }[]): {
  mutant: string | undefined;
  variant: number;
} {
  const mutant = env(name) || undefined;
  if (mutant === undefined) return { mutant, variant: 0 };
  const variant = 1 + mutants.findIndex((m) => m.name === mutant);
  if (variant === 0) {
    throw new RangeError(
      `Cannot pick mutant as it must be one of ${mutants.map((m) => m.name).join(", ")}: received ${mutant}`,
    );
  }
  return { mutant, variant };
}

/** Broken properties as one line: `[oracle] detail; [oracle] detail`. */
export function describeViolations(v: readonly { oracle: string; detail: string }[]): string {
  return v.map((x) => `[${x.oracle}] ${x.detail}`).join("; ");
}

/** The configuration in force. */
export function config(): {
  seed: number;
  runs: number;
  path: string | undefined;
  stressRounds: number;
  mutant: string | undefined;
} {
  return {
    seed: intEnv("FILCH_LINCHECK_SEED", DEFAULT_SEED),
    runs: intEnv("FILCH_LINCHECK_RUNS", 40_000),
    path: env("FILCH_LINCHECK_PATH") || undefined,
    stressRounds: intEnv("FILCH_LINCHECK_STRESS_ROUNDS", 3_000),
    mutant: env("FILCH_LINCHECK_MUTANT") || undefined,
  };
}
