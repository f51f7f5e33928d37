/**
 * What one turn of the event loop costs the main thread in CPU time, by how long it slept before the turn,
 * while other threads keep the cores busy: the question behind the floor of the demo's shape (issue 31).
 * A demo burst takes about 40 turns on the main thread (the completion reader's lingers, `setTimeout` of 1
 * to 16 ms, and a few wakes); `bench/experiments/main_cpu.ts`'s "promises-held" cell charges them to the floor. This
 * benchmark asks whether a turn's price depends on the sleep before it, which decides what a longer or a
 * shorter linger saves.
 *
 * For each gap (0, 1, 2, 4, 8, 16 and 32 ms) it chains timer turns (`setTimeout(next, gap)`, each doing nothing)
 * for {@link RUN_MS} ms, reads the main thread's CPU time before and after (Linux's per-thread
 * `/proc/self/task/<pid>/schedstat`), and divides by the turns it counted. The gaps are rotated from round to round.
 * Meanwhile `--busy=N` other threads (default 2, the demo's workers) spin on a loop of integer additions. No
 * pool is involved: the figures say what the runtime and this machine charge for waking a sleeping thread.
 *
 * Printed: a Markdown table, one row per gap, of µs of main-thread CPU a turn (median of the rounds, with
 * its range and the 95% interval of `_stats.ts`' medianInterval).
 *
 * Run: `node bench/experiments/turn_cost.ts [rounds] [--busy=N]` (default 15 rounds), `deno run -A …`, `bun …`.
 *
 * @module
 */
import { readFileSync } from "node:fs";
import process from "node:process";
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";
import { medianInterval, runtimeName, summarize } from "../_stats.ts";

const GAPS = [0, 1, 2, 4, 8, 16, 32];
/**
 * How long one run of turns lasts, ms: the per-thread clock moves only at scheduler ticks (4 ms on this
 * machine's kernel), so a run must be long beside a tick (here a reading's lag is at most 1% of a run).
 */
const RUN_MS = 400;

if (!isMainThread) {
  // A busy thread: spins until the main thread sets the stop word, then says how far it counted.
  const stop = workerData as Int32Array;
  let sum = 0;
  while (Atomics.load(stop, 0) === 0) for (let i = 0; i < 100_000; i++) sum = (sum + i) | 0;
  parentPort!.postMessage(sum);
} else {
  const args = process.argv.slice(2);
  const rounds = Number(args.find((a) => /^\d+$/.test(a)) ?? 15);
  const busy = Number(args.find((a) => a.startsWith("--busy="))?.slice(7) ?? 2);
  if (!Number.isInteger(rounds) || rounds < 1 || !Number.isInteger(busy) || busy < 0) {
    throw new RangeError(`Cannot run turn_cost as rounds and --busy must be whole numbers: received ${args}`);
  }
  const schedstat = `/proc/self/task/${process.pid}/schedstat`;
  const mainCpuUs = (): number => {
    try {
      return Number(readFileSync(schedstat, "utf8").split(" ")[0]) / 1e3;
    } catch (error) {
      throw new Error(`Cannot read the main thread's CPU time as ${schedstat} is unreadable (${error}): run on Linux`);
    }
  };

  const stop = new Int32Array(new SharedArrayBuffer(4));
  const spinners = Array.from({ length: busy }, () => new Worker(new URL(import.meta.url), { workerData: stop }));
  const spun = spinners.map((w) => new Promise((resolve) => w.once("message", resolve)));
  // Let the spinners start before the first timed turn.
  await new Promise((resolve) => setTimeout(resolve, 200));

  /** µs of main-thread CPU a turn, over RUN_MS ms of turns `gap` ms apart. */
  const turns = async (gap: number): Promise<number> => {
    const start = mainCpuUs();
    const end = performance.now() + RUN_MS;
    let count = 0;
    await new Promise<void>((done) => {
      const next = () => {
        count++;
        if (performance.now() >= end) done();
        else setTimeout(next, gap);
      };
      setTimeout(next, gap);
    });
    return (mainCpuUs() - start) / count;
  };

  const perGap = GAPS.map(() => [] as number[]);
  await turns(1); // warm-up: the timer path compiled
  for (let r = 0; r < rounds; r++) {
    for (let k = 0; k < GAPS.length; k++) {
      const g = (k + r) % GAPS.length;
      perGap[g].push(await turns(GAPS[g]));
    }
  }
  Atomics.store(stop, 0, 1);
  await Promise.all(spun);
  for (const w of spinners) await w.terminate();

  console.log(
    `turn_cost on ${runtimeName()}: main-thread CPU a timer turn, runs of ${RUN_MS} ms, ${busy} busy thread(s), ${rounds} rounds\n`,
  );
  console.log("| sleep before the turn | µs a turn, median (range) | 95% interval |");
  console.log("|---|---|---|");
  GAPS.forEach((gap, g) => {
    const s = summarize(perGap[g]);
    const ci = medianInterval(perGap[g]);
    const interval = ci === undefined ? "— (under 6 rounds)" : `${ci[0].toFixed(1)}–${ci[1].toFixed(1)}`;
    console.log(`| ${gap} ms | ${s.median.toFixed(1)} (${s.min.toFixed(1)}–${s.max.toFixed(1)}) | ${interval} |`);
  });
}
