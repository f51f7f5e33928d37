/**
 * Contenders against an inline baseline, in one process, rotated each round: what bench/experiments/rows.ts and
 * bench/experiments/parse.ts share. Each contender is started and checked once (a warm-up whose result must equal the
 * baseline's); one that does not start, or does not finish its warm-up within 10 s, is left out and named
 * with SKIPPED. Each round then runs the baseline, then every contender, the first changing each round; a
 * result that differs from the baseline's stops the benchmark.
 *
 * @module
 */
import { withTimeout } from "../_deadline.ts";

/** A contender: one run (returns a checksum to compare with the baseline's), and its close. */
export interface Contender {
  run(): Promise<number>;
  close(): Promise<void>;
}

/** What {@link rotatedRounds} measured: the baseline's ms and each contender's, round by round. */
export interface Rounds {
  inlineMs: number[];
  /** By contender name, in the order of `makers` (those left out have none). */
  ms: Map<string, number[]>;
  /** One line a contender that was left out: `name: SKIPPED (why)`. */
  skipped: string[];
}

/**
 * Starts the contenders, checks each with `warmups` runs, then times `rounds` rounds; closes them all.
 *
 * @param makers Each contender's name and how to start it.
 * @param inline The baseline: one run on this thread, returning the checksum every contender must return.
 * @param rounds Timed rounds.
 * @param warmups Untimed checked runs of each contender before the rounds.
 * @returns The times, and the contenders left out.
 *
 * @example Usage
 * ```ts ignore
 * const { inlineMs, ms } = await rotatedRounds([["a pool", async () => ({ run, close })]], () => 42, 15);
 * ```
 */
export async function rotatedRounds(
  makers: readonly [string, () => Promise<Contender>][],
  inline: () => number,
  rounds: number,
  warmups = 1,
): Promise<Rounds> {
  const expected = inline();
  const check = (name: string, got: number) => {
    if (got !== expected) throw new Error(`Cannot trust the benchmark as ${name} computed ${got}, not ${expected}`);
  };
  const contenders: [string, Contender][] = [];
  const skipped: string[] = [];
  for (const [name, make] of makers) {
    let contender: Contender | undefined;
    try {
      contender = await withTimeout(make(), 10_000, `${name} did not start within 10 s`);
      for (let k = 0; k < warmups; k++) {
        check(name, await withTimeout(contender.run(), 10_000, `${name} did not finish a warm-up within 10 s`));
      }
      contenders.push([name, contender]);
    } catch (error) {
      await contender?.close().catch(() => {});
      if ((error as Error).message.startsWith("Cannot trust")) throw error;
      skipped.push(`${name}: SKIPPED (${(error as Error).message})`);
    }
  }
  const inlineMs: number[] = [];
  const ms = new Map<string, number[]>(contenders.map(([name]) => [name, []]));
  try {
    for (let round = 0; round < rounds; round++) {
      let start = performance.now();
      check("the inline run", inline());
      inlineMs.push(performance.now() - start);
      for (let k = 0; k < contenders.length; k++) {
        const [name, c] = contenders[(round + k) % contenders.length];
        start = performance.now();
        const got = await c.run();
        ms.get(name)!.push(performance.now() - start);
        check(name, got);
      }
    }
  } finally {
    for (const [, c] of contenders) await c.close();
  }
  return { inlineMs, ms, skipped };
}
