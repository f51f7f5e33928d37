/**
 * The rounds the graph benchmarks (bench/graph/chain.ts, pipeline.ts, wavefront.ts) share: contenders run
 * one after another in each round, the order rotated each round (so that none always follows another's
 * warm-up or garbage), each run timed on the wall clock and on the main thread's own CPU clock
 * (bench/_owner_cpu.ts), and its result checked against the reference in every round. Ratios are taken
 * per round (two runs seconds apart share the machine's drift) and reported as a median with its 95%
 * interval (bench/_stats.ts `medianInterval`).
 *
 * Threads: the main thread.
 *
 * @module
 */
import process from "node:process";
import { medianInterval, summarize, type Summary } from "../_stats.ts";
import { withTimeout } from "../_deadline.ts";
import { ownerCpuNs, ownerCpuProblem } from "../_owner_cpu.ts";

/** A contender: one run, whose result must equal the reference (`same`). */
export interface Contender<R> {
  readonly name: string;
  run(): Promise<R>;
}

/** What the rounds measured, by contender name: one entry per round. */
export interface Measured {
  /** Wall ms per run. */
  ms: Map<string, number[]>;
  /** The main thread's CPU ms per run (NaN where it cannot be read: see `cpuProblem`). */
  cpuMs: Map<string, number[]>;
  /** The whole process's CPU ms per run (every thread: `process.cpuUsage()`). */
  processCpuMs: Map<string, number[]>;
  /** Why the main thread's CPU could not be read, or undefined. */
  cpuProblem: string | undefined;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The main thread's CPU check, made once a process (it spins 50 ms), before any pool starts. */
let cpuChecked: { problem: string | undefined } | undefined;

/**
 * Checks once whether the main thread's CPU can be read; call before starting pools (the check spins the
 * main thread 50 ms and compares with the whole process's CPU, which workers would disturb).
 *
 * @returns Why it cannot, or undefined.
 *
 * @example Usage
 * ```ts ignore
 * const problem = checkOwnerCpu();
 * ```
 */
export function checkOwnerCpu(): string | undefined {
  cpuChecked ??= { problem: ownerCpuProblem() };
  return cpuChecked.problem;
}

/**
 * Runs every contender once unmeasured (a warm-up, checked), then `rounds` rounds, rotated (see the
 * module doc); between runs the main thread rests 20 ms. No collection is forced between runs: each run
 * pays for the garbage it makes, and the rotation spreads what one leaves over the others. A forced full
 * collection (`bench/_stats.ts` `collectGarbage`) before each run, as these rounds did until 2026-11-30,
 * left Deno 2.9's heap cold for the next run: a chain of 10,000 nodes then cost its main thread 1.25–1.40
 * µs a node, 0.35 [0.32–0.39] without it (same machine, same hour, 15 rounds; building the graph 5–8×
 * slower by the wall clock), while the await chains it was compared with gained from it (7.0 µs a task
 * with it, 7.9 without: their garbage was collected outside their runs).
 * Every run has a deadline: a hang fails with a message.
 *
 * @param contenders The contenders.
 * @param same Whether a run's result is the reference's (throws a message naming the contender if not).
 * @param rounds Rounds.
 * @param deadlineMs One run's deadline.
 * @returns The times.
 *
 * @example Usage
 * ```ts ignore
 * const { ms } = await rounds([{ name: "graph", run }], (r) => r === 42, 15, 60_000);
 * ```
 */
export async function rounds<R>(
  contenders: readonly Contender<R>[],
  same: (result: R) => boolean,
  rounds: number,
  deadlineMs: number,
): Promise<Measured> {
  const cpuProblem = checkOwnerCpu();
  const ms = new Map<string, number[]>(contenders.map((c) => [c.name, []]));
  const cpuMs = new Map<string, number[]>(contenders.map((c) => [c.name, []]));
  const processCpuMs = new Map<string, number[]>(contenders.map((c) => [c.name, []]));
  const once = async (c: Contender<R>, round: number) => {
    await sleep(20);
    const cpu0 = cpuProblem === undefined ? ownerCpuNs() : NaN;
    const usage0 = process.cpuUsage();
    const start = performance.now();
    const result = await withTimeout(c.run(), deadlineMs, `hang: ${c.name} did not finish within ${deadlineMs} ms`);
    const wall = performance.now() - start;
    const cpu = cpuProblem === undefined ? (ownerCpuNs() - cpu0) / 1e6 : NaN;
    const usage = process.cpuUsage(usage0);
    if (!same(result)) throw new Error(`Cannot trust the benchmark as ${c.name}'s result differs from the reference's`);
    if (round >= 0) {
      ms.get(c.name)!.push(wall);
      cpuMs.get(c.name)!.push(cpu);
      processCpuMs.get(c.name)!.push((usage.user + usage.system) / 1000);
      if (process.argv.includes("--verbose")) {
        console.error(`round ${round}: ${c.name} ${wall.toFixed(1)} ms, main thread CPU ${cpu.toFixed(1)} ms`);
      }
    }
  };
  for (const c of contenders) await once(c, -1);
  for (let r = 0; r < rounds; r++) {
    for (let k = 0; k < contenders.length; k++) await once(contenders[(r + k) % contenders.length], r);
  }
  return { ms, cpuMs, processCpuMs, cpuProblem };
}

/** A ratio taken per round: its median, spread and 95% interval. */
export interface Ratio {
  value: Summary;
  interval95: [number, number] | undefined;
}

/**
 * The per-round ratio `numerator[r] / denominator[r]`, summarized.
 *
 * @param numerator One sample per round.
 * @param denominator One sample per round, the same rounds.
 * @returns Its median, spread and 95% interval.
 *
 * @example Usage
 * ```ts ignore
 * const speedup = ratio(ms.get("await")!, ms.get("graph")!); // > 1: the graph is faster
 * ```
 */
export function ratio(numerator: number[], denominator: number[]): Ratio {
  const per = numerator.map((x, r) => x / denominator[r]);
  return { value: summarize(per), interval95: medianInterval(per) };
}

/**
 * A ratio as a table cell: `median [lo–hi]`, or `median (n/a)` for fewer than 6 rounds.
 *
 * @param r The ratio.
 * @param digits Decimals.
 * @returns The text.
 *
 * @example Usage
 * ```ts ignore
 * console.log(ratioText(ratio([2, 4], [1, 2]))); // "2.00 (n/a)"
 * ```
 */
export function ratioText(r: Ratio, digits = 2): string {
  const ci = r.interval95;
  return `${r.value.median.toFixed(digits)} ${
    ci === undefined ? "(n/a)" : `[${ci[0].toFixed(digits)}–${ci[1].toFixed(digits)}]`
  }`;
}
