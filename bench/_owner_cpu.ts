/**
 * The submitting (main) thread's own CPU time, for benchmarks that report what a pool costs the thread
 * that feeds it: read from Linux's per-thread `/proc/<pid>/task/<pid>/schedstat` (its first field: ns on a
 * CPU; the main thread's id is the process id, on Node, Deno and Bun). It is CPU time, not wall time: a
 * thread waiting for a core is not charged, unlike `performance.eventLoopUtilization()` (which returns all
 * zeros on Deno 2.9 and Bun 1.4). The clock moves in scheduler ticks, so one reading may lag by up to a
 * tick (4 ms here): read it over runs of tens of milliseconds or more. Shared by bench/producers.ts and
 * bench/graph/.
 *
 * Threads: the main thread only (the file names its id).
 *
 * @module
 */
import process from "node:process";
import { readFileSync } from "node:fs";

const statPath = `/proc/${process.pid}/task/${process.pid}/schedstat`;

/**
 * The main thread's CPU time so far, ns (Linux's per-thread schedstat). Check {@link ownerCpuProblem} once
 * first: where it reports a problem, this throws or reads something else.
 *
 * @returns Nanoseconds on a CPU since the thread started.
 *
 * @example Usage
 * ```ts ignore
 * const before = ownerCpuNs();
 * work();
 * console.log((ownerCpuNs() - before) / 1e6, "ms of the main thread's CPU");
 * ```
 */
export function ownerCpuNs(): number {
  return Number(readFileSync(statPath, "utf8").split(" ")[0]);
}

/**
 * Why the owner's CPU cannot be measured here, or undefined if it can. The check: spin on the main thread
 * (before any pool exists) until the file says it spent 50 ms; the whole process's CPU time
 * (`process.cpuUsage()`) must have grown by about as much (45–80 ms: the runtime's own helper threads add
 * a little), so the file is this thread's CPU time, not wall time or another thread's. A runtime's helper
 * threads can disturb one check just after start (a compiler thread, a collection: Node's failed once at
 * the start of a wavefront run, and not in 12 tries after), so the check is made up to three times, and the
 * problem is the last one's.
 *
 * @returns The reason, or undefined.
 *
 * @example Usage
 * ```ts ignore
 * const problem = ownerCpuProblem();
 * if (problem !== undefined) console.error(`SKIPPED owner CPU: ${problem}`);
 * ```
 */
export function ownerCpuProblem(): string | undefined {
  let problem: string | undefined;
  for (let attempt = 0; attempt < 3; attempt++) {
    problem = checkOnce();
    if (problem === undefined) return undefined;
  }
  return problem;
}

/** One check of {@link ownerCpuProblem}'s. */
function checkOnce(): string | undefined {
  try {
    const usage0 = process.cpuUsage();
    const before = ownerCpuNs();
    const wallEnd = performance.now() + 2_000;
    while (ownerCpuNs() - before < 50e6) {
      if (performance.now() > wallEnd) return `${statPath} did not reach 50 ms of CPU in 2 s of spinning`;
    }
    const usage = process.cpuUsage(usage0);
    const processMs = (usage.user + usage.system) / 1000;
    if (!(processMs >= 45 && processMs <= 80)) {
      return `50 ms of main-thread CPU in ${statPath} was ${
        processMs.toFixed(1)
      } ms of the process's (process.cpuUsage)`;
    }
    return undefined;
  } catch (error) {
    return `cannot read ${statPath}: ${String(error).split("\n")[0]}`;
  }
}
