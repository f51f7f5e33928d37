/** Small statistics for benchmarks: medians and spread, never a single run. */

/** A median with its spread over several runs. */
export interface Summary {
  median: number;
  min: number;
  max: number;
  /** The first and third quartiles: the middle half of the runs lies between them. */
  q1: number;
  q3: number;
  runs: number;
}

/**
 * A full garbage collection, where the runtime offers one (Bun.gc; V8's gc, exposed at run time through
 * node:v8 and node:vm on Node and Deno); undefined where it does not. A benchmark that calls it before each
 * timed burst starts every contender from a collected heap, so that no burst pays for another's garbage.
 */
export const collectGarbage: (() => void) | undefined = await (async () => {
  const bun = (globalThis as { Bun?: { gc(force: boolean): void } }).Bun;
  if (bun !== undefined) return () => bun.gc(true);
  const exposed = (globalThis as { gc?: () => void }).gc;
  if (typeof exposed === "function") return exposed;
  try {
    const v8 = await import("node:v8");
    const vm = await import("node:vm");
    v8.setFlagsFromString("--expose-gc");
    const gc = vm.runInNewContext("gc") as unknown;
    return typeof gc === "function" ? gc as () => void : undefined;
  } catch {
    return undefined;
  }
})();

/**
 * Summarizes samples as median, min and max.
 *
 * @param samples One number per run.
 * @returns The median and the range.
 *
 * @example Usage
 * ```ts
 * import { summarize } from "./_stats.ts";
 * console.log(summarize([3, 1, 2]).median); // 2
 * ```
 */
export function summarize(samples: number[]): Summary {
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    median: quantile(sorted, 0.5),
    min: sorted[0],
    max: sorted[sorted.length - 1],
    q1: quantile(sorted, 0.25),
    q3: quantile(sorted, 0.75),
    runs: sorted.length,
  };
}

/**
 * A 95% confidence interval for the median of the population the samples come from, distribution-free:
 * the order statistics at ranks n/2 ∓ 0.98·√n (the binomial(n, ½) count of samples below the median, in its
 * normal approximation). Needs 6 samples or more; undefined below that.
 *
 * @param samples One number per run.
 * @returns The interval's ends, or undefined for fewer than 6 samples.
 *
 * @example Usage
 * ```ts
 * import { medianInterval } from "./_stats.ts";
 * const [lo, hi] = medianInterval([5, 1, 4, 2, 3, 6, 7, 8, 9, 10])!;
 * console.log(lo <= 5.5 && 5.5 <= hi); // true
 * ```
 */
export function medianInterval(samples: number[]): [number, number] | undefined {
  const n = samples.length;
  if (n < 6) return undefined;
  const sorted = [...samples].sort((a, b) => a - b);
  const half = 0.98 * Math.sqrt(n);
  // 1-based ranks, clamped to the samples.
  const lo = Math.max(1, Math.floor(n / 2 - half));
  const hi = Math.min(n, Math.ceil(n / 2 + half) + 1);
  return [sorted[lo - 1], sorted[hi - 1]];
}

/**
 * {@link medianInterval} as text, `lo–hi` with `digits` decimals, or "n/a" for fewer than 6 samples.
 *
 * @param samples One number per run.
 * @param digits Decimals to show.
 * @returns The text.
 *
 * @example Usage
 * ```ts
 * import { intervalText } from "./_stats.ts";
 * console.log(intervalText([1, 2, 3])); // "n/a"
 * ```
 */
export function intervalText(samples: number[], digits = 2): string {
  const ci = medianInterval(samples);
  return ci === undefined ? "n/a" : `${ci[0].toFixed(digits)}–${ci[1].toFixed(digits)}`;
}

/** The `q` quantile of sorted samples, interpolated between the two nearest (the median of an even count). */
function quantile(sorted: number[], q: number): number {
  const at = (sorted.length - 1) * q;
  const below = Math.floor(at);
  const above = Math.min(below + 1, sorted.length - 1);
  return sorted[below] + (sorted[above] - sorted[below]) * (at - below);
}

/**
 * Formats a summary as `median (min–max)` with `digits` decimals.
 *
 * @param s The summary.
 * @param digits Decimals to show.
 * @returns The text.
 *
 * @example Usage
 * ```ts
 * import { format, summarize } from "./_stats.ts";
 * console.log(format(summarize([1, 2, 3]), 1)); // "2.0 (1.0–3.0)"
 * ```
 */
export function format(s: Summary, digits = 1): string {
  return `${s.median.toFixed(digits)} (${s.min.toFixed(digits)}–${s.max.toFixed(digits)})`;
}

/** The runtime running this code, with its version. */
export function runtimeName(): string {
  const g = globalThis as {
    Deno?: { version: { deno: string } };
    Bun?: { version: string };
    process?: { version: string };
  };
  if (g.Deno) return `Deno ${g.Deno.version.deno}`;
  if (g.Bun) return `Bun ${g.Bun.version}`;
  return `Node ${g.process?.version ?? "?"}`;
}

/**
 * Runs two measurements `rounds` times, interleaved, alternating which goes first (so that neither always
 * follows the other's warm-up).
 *
 * @param rounds Rounds.
 * @param a One measurement (a rate, say).
 * @param b The other.
 * @returns The samples of each, in round order.
 */
export async function interleaved(
  rounds: number,
  a: () => Promise<number>,
  b: () => Promise<number>,
): Promise<[number[], number[]]> {
  const as: number[] = [];
  const bs: number[] = [];
  for (let r = 0; r < rounds; r++) {
    if (r % 2 === 0) {
      as.push(await a());
      bs.push(await b());
    } else {
      bs.push(await b());
      as.push(await a());
    }
  }
  return [as, bs];
}
