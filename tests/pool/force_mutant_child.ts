/**
 * A child process of tests/pool/force_test.ts: builds the kill-guard mutant named by its argument, runs the
 * forced churn against it, prints `FAILURES <n>` and exits (ending whatever the corrupted pool left).
 */
import process from "node:process";
import type { Pool } from "../../lib/pool.ts";
import { FORCE_MUTANTS, materializePoolMutant, removePoolMutant } from "../mutants/mutants.ts";
import { forcedChurn } from "./_force.ts";

const name = process.argv[process.argv.length - 1];
const mutant = FORCE_MUTANTS.find((m) => m.name === name);
if (mutant === undefined) throw new Error(`Cannot run mutant as '${name}' is not in FORCE_MUTANTS`);
const url = materializePoolMutant(mutant);
try {
  const { Pool: MutantPool } = await import(url.href) as { Pool: typeof Pool };
  console.log(`FAILURES ${await forcedChurn(MutantPool, 20)}`);
} finally {
  removePoolMutant(url);
}
process.exit(0);
