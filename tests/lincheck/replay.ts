/**
 * Replays one (scenario, schedule) under the controlled scheduler and prints its table, its violations
 * and the path of its ndjson trace. Runs on Deno, Bun and Node:
 *
 * ```sh
 * deno run -A tests/lincheck/replay.ts '<scenario JSON>' '<schedule JSON>' [mutant name]
 * bun tests/lincheck/replay.ts '<scenario JSON>' '<schedule JSON>' [mutant name]
 * node tests/lincheck/replay.ts '<scenario JSON>' '<schedule JSON>' [mutant name]
 * ```
 *
 * The two JSON arguments are the `scenario (JSON)` and `schedule (JSON)` lines of a failure report.
 * Exit status 1 if the run breaks an oracle.
 *
 * @module
 */

import { MUTANTS } from "../mutants/mutants.ts";
import type { Scenario } from "./models/deque/scenario.ts";
import { reportCounterexample, startHarness } from "./models/deque/suite.ts";

const g = globalThis as unknown as {
  Deno?: { args: string[]; exit(c: number): never };
  process?: { argv: string[]; exitCode?: number };
};
const args = g.Deno ? g.Deno.args : g.process!.argv.slice(2);
if (args.length < 2) {
  console.error("usage: replay.ts '<scenario JSON>' '<schedule JSON>' [mutant name]");
} else {
  const scenario = JSON.parse(args[0]) as Scenario;
  const schedule = JSON.parse(args[1]) as number[];
  const mutant = args[2];
  const variant = mutant === undefined ? 0 : 1 + MUTANTS.findIndex((m) => m.name === mutant);
  if (variant < 0) throw new Error(`Cannot replay as there is no mutant '${mutant}'`);
  const harness = await startHarness(mutant !== undefined);
  try {
    const rep = reportCounterexample(harness, variant, scenario, schedule, `replay-${mutant ?? "shipped"}`, { mutant });
    console.log(rep.text);
    console.log(`\n${rep.violations.length === 0 ? "no oracle broken" : "ORACLES BROKEN"}; trace: ${rep.tracePath}`);
    if (rep.violations.length > 0) {
      if (g.process) g.process.exitCode = 1;
    }
  } finally {
    await harness.close();
  }
}
