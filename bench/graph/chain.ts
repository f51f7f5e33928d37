/**
 * The chain benchmark of task graphs (issue 48): N dependent tiny tasks (`add(previous, 1)`, N = 10,000 by
 * default), each starting with its predecessor's result, three ways:
 * - "graph": filch's continuation graph, built without awaiting (`g.run("add", previous, 1)` N times) and
 *   submitted once; only the last node's result comes back to this thread. Each node starts on the worker
 *   that finished its input;
 * - "await filch": the loop users write today, `v = await pool.run("add", v, 1)`, on the same pool;
 * - "await piscina": the same loop on piscina 5 (`await piscina.run({ a: v, b: 1 })`,
 *   bench/peers/piscina_worker.mjs), min = max = the same number of threads.
 * Every run's result must be N.
 *
 * - "graph, R chains" (`--repeat R`, default 8): R such graphs one after another in one run, each awaited:
 *   the main thread's CPU a node of the graph, from a run long enough for its CPU clock. That clock moves
 *   in ticks of up to 4 ms (Linux's per-thread schedstat, as process.threadCpuUsage: checked here, both
 *   step by 4 ms or at a switch), and one chain of 10,000 costs the main thread about 4 ms, so a run of
 *   one chain reads 0, 4 or 8 ms: the per-run figures of "graph" scatter by ±100%, those of R chains by
 *   ±100/R%. Its wall time is R chains' (so its nodes a second are the warm rate: the workers do not fall
 *   asleep between its chains); the throughput ratios use "graph" alone.
 *
 * Figures: nodes a second of each (N ÷ wall time), the main thread's CPU a node (its own CPU clock over
 * the run, bench/_owner_cpu.ts, ÷ N: for the graph, building, submitting and awaiting the last result),
 * and the per-round throughput ratios graph ÷ await filch and graph ÷ await piscina (median [95%
 * interval]). The goals: ≥ 5× the await chain, ≤ 1 µs of the submitting thread's CPU a node (read on
 * "graph, R chains"). Then the graph's main-thread CPU a node split by phase (building, `submit`'s
 * synchronous part, waiting for the result): where that CPU goes.
 *
 * The graph is placed whole: one record a node and one an edge, so the pool has `taskCapacity` the power
 * of two ≥ 2N (32,768 for 10,000).
 *
 * Run: `node bench/graph/chain.ts`, `deno run -A bench/graph/chain.ts`, `bun bench/graph/chain.ts`.
 * Options: `--rounds R` (default 15), `--nodes N` (default 10,000), `--workers W` (default 2), `--repeat R`
 * (default 8), `--quick` (3 rounds, 1,000 nodes, 2 chains: for development and the smoke test), `--json` (one JSON line a figure),
 * `--verbose` (each run on stderr).
 *
 * @module
 */
import process from "node:process";
import { format, medianInterval, summarize, type Summary } from "../_stats.ts";
import { withTimeout } from "../_deadline.ts";
import { ownerCpuNs } from "../_owner_cpu.ts";
import { checkOwnerCpu, type Contender, type Ratio, ratio, ratioText, rounds } from "./_rounds.ts";
import { closePools, finish, openPool, printTable, settings } from "./_cli.ts";

/** The chain benchmark's settings. */
export interface ChainSettings {
  rounds: number;
  nodes: number;
  workers: number;
  /** The chains of the "graph, R chains" contender's run. */
  repeat: number;
}

/** One contender's figures over the rounds. */
export interface ChainRow {
  contender: string;
  nodesPerSecond: Summary;
  /** The main thread's CPU a node, µs. */
  cpuMicrosPerNode: Summary;
  /** Its median's 95% interval (undefined for fewer than 6 rounds). */
  cpuInterval: [number, number] | undefined;
}

/** What {@link benchChain} found. */
export interface ChainReport {
  rows: ChainRow[];
  /** "graph ÷ await filch", "graph ÷ await piscina": throughput ratios per round. */
  ratios: Map<string, Ratio>;
  skipped: string[];
  cpuProblem: string | undefined;
  /**
   * The graph's main-thread CPU a node, ns, by phase, one sample a chain (the warm-up's too): building the
   * nodes (`g.run`), `g.submit`'s synchronous part (encoding each node's constants, placing the records and
   * edges, pushing the root), and from then until the last node's result is in hand. The CPU clock moves
   * in ticks of a few ms, so read the medians.
   */
  phases: { build: number[]; submit: number[]; result: number[] };
}

/**
 * Runs the chain benchmark (see the module doc).
 *
 * @param s The settings.
 * @returns The figures.
 *
 * @example Usage
 * ```ts ignore
 * const report = await benchChain({ rounds: 15, nodes: 10_000, workers: 2, repeat: 8 });
 * ```
 */
export async function benchChain(s: ChainSettings): Promise<ChainReport> {
  const cpuProblem = checkOwnerCpu();
  const pool = await openPool(s.workers, 2 * s.nodes);
  const skipped: string[] = [];
  const phases: ChainReport["phases"] = { build: [], submit: [], result: [] };
  const clock = cpuProblem === undefined ? ownerCpuNs : () => NaN;
  /** One chain as a graph, its phases' CPU noted. */
  const chain = async () => {
    const c0 = clock();
    const g = pool.graph();
    let node = g.run("add", 0, 1);
    for (let i = 1; i < s.nodes; i++) node = g.run("add", node, 1);
    const c1 = clock();
    const result = g.submit(node);
    const c2 = clock();
    const v = await result;
    const c3 = clock();
    phases.build.push((c1 - c0) / s.nodes);
    phases.submit.push((c2 - c1) / s.nodes);
    phases.result.push((c3 - c2) / s.nodes);
    return v;
  };
  const repeated = `graph, ${s.repeat} chains`;
  const contenders: Contender<number>[] = [
    { name: "graph", run: chain },
    {
      name: repeated,
      async run() {
        let v = 0;
        for (let k = 0; k < s.repeat; k++) v = await chain();
        return v;
      },
    },
    {
      name: "await filch",
      async run() {
        let v = 0;
        for (let i = 0; i < s.nodes; i++) v = await pool.run("add", v, 1);
        return v;
      },
    },
  ];
  let piscina: { run(task: unknown): Promise<unknown>; destroy(): Promise<void> } | undefined;
  try {
    const { Piscina } = await import("piscina");
    const made = new Piscina({
      filename: new URL("../peers/piscina_worker.mjs", import.meta.url).href,
      minThreads: s.workers,
      maxThreads: s.workers,
    });
    piscina = made;
    await withTimeout(made.run({ a: 1, b: 2 }), 10_000, "piscina did not run a task within 10 s");
    contenders.push({
      name: "await piscina",
      async run() {
        let v = 0;
        for (let i = 0; i < s.nodes; i++) v = await made.run({ a: v, b: 1 }) as number;
        return v;
      },
    });
  } catch (error) {
    skipped.push(`await piscina: ${String(error).split("\n")[0]}`);
  }
  try {
    const measured = await rounds(contenders, (v) => v === s.nodes, s.rounds, 60_000 + s.nodes * 2);
    const rows = contenders.map((c): ChainRow => {
      const nodes = c.name === repeated ? s.nodes * s.repeat : s.nodes;
      return {
        contender: c.name,
        nodesPerSecond: summarize(measured.ms.get(c.name)!.map((ms) => nodes / ms * 1000)),
        cpuMicrosPerNode: summarize(measured.cpuMs.get(c.name)!.map((ms) => ms * 1000 / nodes)),
        cpuInterval: medianInterval(measured.cpuMs.get(c.name)!.map((ms) => ms * 1000 / nodes)),
      };
    });
    const ratios = new Map<string, Ratio>();
    const graphMs = measured.ms.get("graph")!;
    for (const c of contenders.slice(2)) ratios.set(`graph ÷ ${c.name}`, ratio(measured.ms.get(c.name)!, graphMs));
    return { rows, ratios, skipped, cpuProblem, phases };
  } finally {
    await closePools(pool);
    await piscina?.destroy().catch(() => {});
  }
}

if (import.meta.main ?? process.argv[1]?.endsWith("chain.ts")) {
  const s: ChainSettings = settings({ rounds: [15, 3], nodes: [10_000, 1_000], workers: [2, 2], repeat: [8, 2] });
  const report = await benchChain(s);
  const what = `a chain of ${s.nodes} dependent tiny tasks, ${s.workers} workers, ${s.rounds} rounds; ` +
    `median (min–max); ratios per round: median [95% interval of the median].`;
  finish(what, report.rows, report.ratios, () => {
    for (const line of report.skipped) console.log(`SKIPPED ${line}`);
    if (report.cpuProblem !== undefined) console.log(`SKIPPED main thread CPU: ${report.cpuProblem}`);
    const interval = (ci: [number, number] | undefined) =>
      ci === undefined ? "n/a" : `${ci[0].toFixed(3)}–${ci[1].toFixed(3)}`;
    printTable(
      ["contender", "nodes/s", "main thread CPU µs a node", "its 95% interval"],
      report.rows.map((row) => [
        row.contender,
        format(row.nodesPerSecond, 0),
        format(row.cpuMicrosPerNode, 3),
        interval(row.cpuInterval),
      ]),
    );
    printTable(["ratio", "throughput"], [...report.ratios].map(([name, r]) => [name, ratioText(r)]));
    if (report.cpuProblem === undefined) {
      const p = report.phases;
      const phase = (ns: number[]) => format(summarize(ns), 0);
      console.log(
        `\nThe graph's main-thread CPU a node by phase, ns, median (min–max): build ${phase(p.build)}, ` +
          `submit ${phase(p.submit)}, until the result ${phase(p.result)}.`,
      );
    }
  });
}
