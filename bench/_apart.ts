/**
 * Runs a benchmark's contenders in processes of their own, one after another (never two at once), in
 * passes with the order rotated each pass: in one process the contenders share a heap, and a burst may pay
 * for the garbage of the one before it, or find a heap already grown by it. Each process is the benchmark
 * script itself, asked for one contender and JSON lines on stdout (`--json`); bench/pool_bench.ts and
 * bench/payload_bench.ts (`--processes=P`) merge what the processes print.
 *
 * @module
 */
import { spawnSync } from "node:child_process";

/** Terminal colour codes (Deno colours its errors), stripped from a process's stderr. */
const ANSI_COLOR = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, "g");

/** What one process of {@link runApart} gave: the JSON lines it printed, or why it printed none. */
export interface ApartRun<Row> {
  /** The contender it ran. */
  name: string;
  /** Its pass, from 0. */
  pass: number;
  /** Each line of its stdout that starts with `{`, parsed. */
  rows: Row[];
  /** Why it printed no row (it failed to start, crashed or hung), or undefined. */
  error?: string;
}

/**
 * Runs `script` once per contender in each of `passes` passes, the order of `names` rotated by one each
 * pass, with the runtime running this code; calls `each` with every process's rows as it ends.
 *
 * @param script The benchmark's file path.
 * @param names The contenders, in the order of the first pass.
 * @param passes Processes per contender.
 * @param argsOf The arguments of a contender's process (after the script).
 * @param timeoutMs How long a process may run before it is taken to have hung (and killed).
 * @param each Called with each process's rows, in the order they ran.
 *
 * @example Usage
 * ```ts ignore
 * runApart(script, ["filch", "piscina"], 3, (name) => ["4", `--only=${name}`, "--json"], 600_000, (run) => {
 *   console.log(run.name, run.pass, run.rows.length, run.error);
 * });
 * ```
 */
export function runApart<Row>(
  script: string,
  names: readonly string[],
  passes: number,
  argsOf: (name: string) => string[],
  timeoutMs: number,
  each: (run: ApartRun<Row>) => void,
): void {
  const process = (globalThis as unknown as { process: { execPath: string; env: Record<string, string> } }).process;
  const prefix = "Deno" in globalThis ? ["run", "-A"] : [];
  for (let pass = 0; pass < passes; pass++) {
    for (let c = 0; c < names.length; c++) {
      const name = names[(c + pass) % names.length];
      console.error(`pass ${pass}: ${name} in a process of its own`);
      const child = spawnSync(process.execPath, [...prefix, script, ...argsOf(name)], {
        encoding: "utf8",
        timeout: timeoutMs,
        env: process.env,
      });
      const rows = (child.stdout ?? "").split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l) as Row);
      // The line that names the error if there is one (Node ends a crash with its version), else the last.
      const lines = (child.stderr ?? "").replace(ANSI_COLOR, "").trim().split("\n");
      const why = lines.findLast((l) => /error/i.test(l)) ?? lines.at(-1);
      const error = rows.length > 0
        ? undefined
        : `its process ended with ${child.error?.message ?? `status ${child.status}`}: ${why}`;
      each({ name, pass, rows, ...(error === undefined ? {} : { error }) });
    }
  }
}
