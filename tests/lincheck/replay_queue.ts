/**
 * Replays one queue (scenario, schedule) under the controlled scheduler and prints its table, its
 * violations and the path of its ndjson trace. Runs on Deno, Bun and Node:
 *
 * ```sh
 * deno run -A tests/lincheck/replay_queue.ts '<scenario JSON>' '<schedule JSON>' [queue mutant name]
 * bun tests/lincheck/replay_queue.ts '<scenario JSON>' '<schedule JSON>' [queue mutant name]
 * node tests/lincheck/replay_queue.ts '<scenario JSON>' '<schedule JSON>' [queue mutant name]
 * ```
 *
 * The two JSON arguments are the `scenario (JSON)` and `schedule (JSON)` lines of a failure report.
 * Exit status 1 if the run breaks an oracle.
 *
 * @module
 */

import type { QueueScenario } from "./models/queue/scenario.ts";
import { queueVariantOf, reportQueueRun, startQueueHarness } from "./models/queue/suite.ts";

const g = globalThis as unknown as {
  Deno?: { args: string[] };
  process?: { argv: string[]; exitCode?: number };
};
const args = g.Deno ? g.Deno.args : g.process!.argv.slice(2);
if (args.length < 2) {
  console.error("usage: replay_queue.ts '<scenario JSON>' '<schedule JSON>' [queue mutant name]");
} else {
  const scenario = JSON.parse(args[0]) as QueueScenario;
  const schedule = JSON.parse(args[1]) as number[];
  const mutant = args[2];
  const variant = queueVariantOf(mutant);
  const harness = await startQueueHarness(mutant !== undefined);
  try {
    const rep = reportQueueRun(harness, variant, scenario, schedule, `queue-replay-${mutant ?? "shipped"}`, { mutant });
    console.log(rep.text);
    console.log(`\n${rep.violations.length === 0 ? "no oracle broken" : "ORACLES BROKEN"}; trace: ${rep.tracePath}`);
    if (rep.violations.length > 0 && g.process) g.process.exitCode = 1;
  } finally {
    await harness.close();
  }
}
