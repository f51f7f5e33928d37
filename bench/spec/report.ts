/**
 * The report of the specification's benchmark: its rows (issue 50's table: the four workloads and the
 * summary), the specification's figures for 8 workers, issue 50's goals where it sets one, and a function
 * that lays this run's figures beside them, one column per runtime, each also per worker (throughput ÷
 * workers, speedup ÷ workers) so that a run on 2 cores and the specification's on 8 compare.
 *
 * A cell is the median over rounds with its 95% interval (bench/_stats.ts `medianInterval`, 6 rounds or
 * more) in brackets; the median alone with fewer rounds (`--quick`), or for a figure measured once. Pure: no I/O; main.ts prints it.
 *
 * @module
 */
import { medianInterval, summarize } from "../_stats.ts";
import type { Measured } from "./run.ts";

/** One row of the report. */
export interface Row {
  /** The workload: "1" to "4", or "summary". */
  workload: Measured["workload"];
  /** What the row measures. */
  label: string;
  /** The specification's figure (8 workers). */
  spec: string;
  /** The specification's figure per worker, where one applies. */
  specPerWorker: string;
  /** Issue 50's goal for this row, where it sets one. */
  goal?: string;
  /** This run's cell, from the workload's figures; undefined if they lack it. */
  cell(m: Measured): string | undefined;
  /** This run's cell per worker, where one applies. */
  perWorker?(m: Measured): string | undefined;
  /** How the goal is decided from this run's figures (one figure each part), where the row has a goal. */
  decide?: Decision[];
}

/**
 * A goal decided by one figure's rounds: MET where the 95% interval of its median (after `scale`) lies
 * wholly on the goal's side of `bound`, NOT MET where wholly on the other, else not decided (the interval
 * holds the bound); with fewer than 6 rounds (no interval) the median alone decides, marked so.
 */
export interface Decision {
  figure: string;
  bound: number;
  /** Whether the goal asks for at least (true) or at most (false) the bound. */
  atLeast: boolean;
  /** Applied to each round's value first (per worker, say). */
  scale?(m: Measured): (v: number) => number;
  /** Decimals of the median and interval shown with the verdict (default 2). */
  digits?: number;
  /** After each number shown (default "×"). */
  unit?: string;
}

/** The workloads' titles, as the specification names them. */
export const WORKLOADS: Record<Measured["workload"], string> = {
  "1": "100,000 micro-tasks of about 1 µs each",
  "2": "fork-join parallel quicksort of 10M integers",
  "3": "heterogeneous: 10,000 tasks, 80% ~1 µs, 15% ~100 µs, 5% ~10 ms",
  "4": "stress: 1,000,000 tasks from 8 external threads, 125,000 each",
  "summary": "summary",
  "goals": "the last performance issue's goals, restated against this machine's floor",
};

/** A number with thousands separators and `digits` decimals. */
function num(value: number, digits = 0): string {
  if (!Number.isFinite(value)) return "n/a";
  return value.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/**
 * Samples as `median [lo–hi]`, with the 95% interval of the median (the median alone under 6 samples);
 * after `map` (per worker, say) on each sample.
 *
 * @param samples One value per round.
 * @param digits Decimals.
 * @param unit Appended to each number.
 * @param map Applied to every sample first.
 * @returns The text, or undefined without samples.
 *
 * @example Usage
 * ```ts
 * import { median } from "./report.ts";
 * console.log(median([1, 2, 3], 1, " ms")); // "2.0 ms"
 * ```
 */
export function median(
  samples: number[] | undefined,
  digits = 0,
  unit = "",
  map: (v: number) => number = (v) => v,
): string | undefined {
  if (samples === undefined || samples.length === 0) return undefined;
  const values = samples.map(map).filter((v) => Number.isFinite(v));
  if (values.length === 0) return "n/a";
  const m = `${num(summarize(values).median, digits)}${unit}`;
  const ci = medianInterval(values);
  return ci === undefined ? m : `${m} [${num(ci[0], digits)}–${num(ci[1], digits)}]`;
}

/**
 * A goal's verdict from a figure's rounds (see {@link Decision}).
 *
 * @param d The decision.
 * @param m The workload's figures.
 * @returns "MET", "NOT MET" or "not decided", with the median and interval; undefined without the figure.
 *
 * @example Usage
 * ```ts
 * import { verdict } from "./report.ts";
 * const m = { runtime: "node", workers: 2, workload: "goals" as const, sizes: {}, skipped: [], figures: { r: [2, 2, 2, 2, 2, 2] } };
 * console.log(verdict({ figure: "r", bound: 1.5, atLeast: false }, m)); // NOT MET: 2.00× … (goal ≤ 1.5)
 * ```
 */
export function verdict(d: Decision, m: Measured): string | undefined {
  const samples = m.figures[d.figure]?.map(d.scale?.(m) ?? ((v) => v)).filter((v) => Number.isFinite(v));
  if (samples === undefined || samples.length === 0) return undefined;
  const digits = d.digits ?? 2;
  const med = summarize(samples).median;
  const ci = medianInterval(samples);
  const [lo, hi] = ci ?? [med, med];
  const good = (v: number) => d.atLeast ? v >= d.bound : v <= d.bound;
  const word = good(lo) && good(hi) ? "MET" : !good(lo) && !good(hi) ? "NOT MET" : "not decided";
  const unit = d.unit ?? "×";
  const shown = ci === undefined
    ? `${num(med, digits)}${unit} (median of ${samples.length}, no interval)`
    : `${num(med, digits)}${unit} [${num(lo, digits)}–${num(hi, digits)}]`;
  const per = d.scale === undefined ? "" : " per worker";
  return `${word}: ${shown}${per} (goal ${d.atLeast ? "≥" : "≤"} ${d.bound.toLocaleString("en-US")}${unit})`;
}

/** The median of a figure, or NaN. */
function mid(m: Measured, name: string): number {
  const samples = m.figures[name];
  return samples === undefined || samples.length === 0 ? NaN : summarize(samples).median;
}

const perWorker = (m: Measured) => (v: number) => v / m.workers;

/** The report's rows, in order. */
export const ROWS: Row[] = [
  {
    workload: "1",
    label: "the task's length (main thread)",
    spec: "about 1 µs",
    specPerWorker: "",
    cell: (m) => median(m.figures.microTaskMicros, 2, " µs"),
  },
  {
    workload: "1",
    label: "submission",
    spec: "12.3 ms (8.1M tasks/s)",
    specPerWorker: "",
    cell: (m) =>
      m.figures.submitMs && `${median(m.figures.submitMs, 1, " ms")}; ${median(m.figures.submitPerSecond, 0)} tasks/s`,
  },
  {
    workload: "1",
    label: "completion",
    spec: "145 ms",
    specPerWorker: "",
    cell: (m) => median(m.figures.completeMs, 1, " ms"),
  },
  {
    workload: "1",
    label: "throughput, tasks/s",
    goal: "≥ 86,000 per worker",
    spec: "689,655",
    specPerWorker: "86,207",
    decide: [{ figure: "tasksPerSecond", bound: 86_000, atLeast: true, scale: perWorker, digits: 0, unit: " tasks/s" }],
    cell: (m) => median(m.figures.tasksPerSecond),
    perWorker: (m) => median(m.figures.tasksPerSecond, 0, "", perWorker(m)),
  },
  {
    workload: "1",
    label: "per-worker share of the tasks (÷ an even share)",
    spec: "11.4–12.9%",
    specPerWorker: "0.91–1.03",
    cell: (m) =>
      m.figures.shareMin && `${num(mid(m, "shareMin") * 100, 1)}–${num(mid(m, "shareMax") * 100, 1)}% (medians)`,
    perWorker: (m) =>
      m.figures.shareMin && `${num(mid(m, "shareMin") * m.workers, 2)}–${num(mid(m, "shareMax") * m.workers, 2)}`,
  },
  {
    workload: "1",
    label: "steal attempts; successful",
    spec: "1,247; 71.5%",
    specPerWorker: "",
    cell: (m) =>
      m.figures.stealAttempts && `${median(m.figures.stealAttempts)}; ${median(m.figures.stealSuccessPercent, 1, "%")}`,
  },
  {
    workload: "1",
    label: "the spec's steal attempts here: injector takes; deque steals that got work",
    spec: "—",
    specPerWorker: "",
    cell: (m) => m.figures.injectorTakes && `${median(m.figures.injectorTakes)}; ${median(m.figures.dequeSteals)}`,
  },
  {
    workload: "1",
    label: "against piscina (tasks/s ÷ tasks/s)",
    spec: "2.3× std::async",
    specPerWorker: "",
    cell: (m) =>
      m.figures.over_piscina &&
      `${median(m.figures.over_piscina, 2, "×")} (piscina ${median(m.figures.piscinaPerSecond)} tasks/s)`,
  },
  {
    workload: "1",
    label: "against a central-queue pool (bare postMessage round robin)",
    spec: "1.8×",
    specPerWorker: "",
    cell: (m) =>
      m.figures.over_central &&
      `${median(m.figures.over_central, 2, "×")} (it: ${median(m.figures.centralPerSecond)} tasks/s)`,
  },
  {
    workload: "2",
    label: "sequential quicksort",
    spec: "890 ms",
    specPerWorker: "",
    cell: (m) => median(m.figures.sequentialMs, 0, " ms"),
  },
  {
    workload: "2",
    label: "parallel quicksort",
    spec: "118 ms",
    specPerWorker: "",
    cell: (m) => median(m.figures.parallelMs, 0, " ms"),
  },
  {
    workload: "2",
    label: "speedup; efficiency",
    goal: "efficiency ≥ 94% (≥ 1.88× on 2 workers)",
    spec: "7.54×; 94.3%",
    specPerWorker: "0.94×",
    decide: [{ figure: "efficiencyPercent", bound: 94, atLeast: true, digits: 1, unit: "%" }],
    cell: (m) =>
      m.figures.speedup && `${median(m.figures.speedup, 2, "×")}; ${median(m.figures.efficiencyPercent, 1, "%")}`,
    perWorker: (m) => median(m.figures.speedup, 2, "×", perWorker(m)),
  },
  {
    workload: "2",
    label: "against the runtime's own sort (its ms ÷ parallel ms)",
    spec: "—",
    specPerWorker: "",
    cell: (m) =>
      m.figures.overNative &&
      `${median(m.figures.overNative, 2, "×")} (sort(): ${median(m.figures.nativeMs, 0, " ms")})`,
    perWorker: (m) => median(m.figures.overNative, 2, "×", perWorker(m)),
  },
  {
    workload: "2",
    label: "depth; subtasks (forks)",
    spec: "20; 131,071",
    specPerWorker: "",
    cell: (m) => m.figures.depth && `${median(m.figures.depth)}; ${median(m.figures.subtasks)}`,
  },
  {
    workload: "2",
    label: "tasks stolen",
    spec: "2,847",
    specPerWorker: "",
    cell: (m) => median(m.figures.steals),
  },
  {
    workload: "2",
    label: "max worker deviation (elements partitioned or sorted)",
    spec: "3.2%",
    specPerWorker: "",
    cell: (m) => median(m.figures.deviationPercent, 1, "%"),
  },
  {
    workload: "3",
    label: "all done",
    spec: "524 ms",
    specPerWorker: "",
    cell: (m) => m.figures.ms && `${median(m.figures.ms, 0, " ms")} (floor: ${num(mid(m, "idealMs"), 0)} ms)`,
  },
  {
    workload: "3",
    label: "average active time",
    goal: "≥ 96%",
    spec: "96.2%",
    specPerWorker: "",
    decide: [{ figure: "activePercent", bound: 96, atLeast: true, digits: 1, unit: "%" }],
    cell: (m) => median(m.figures.activePercent, 1, "%"),
  },
  {
    workload: "3",
    label: "max idle gap",
    spec: "1.2 ms",
    specPerWorker: "",
    cell: (m) => median(m.figures.maxGapMs, 2, " ms"),
  },
  {
    workload: "3",
    label: "against round-robin distribution (its ms ÷ ours)",
    goal: "≥ 1.6×",
    spec: "1.6×",
    specPerWorker: "",
    decide: [{ figure: "overRoundRobin", bound: 1.6, atLeast: true }],
    cell: (m) =>
      m.figures.overRoundRobin &&
      `${median(m.figures.overRoundRobin, 2, "×")} (it: ${median(m.figures.roundRobinMs, 0, " ms")}, active ${
        median(m.figures.roundRobinActivePercent, 1, "%")
      })`,
  },
  {
    workload: "4",
    label: "all complete; tasks/s",
    goal: "≤ 4.8 s on 2 workers (104,000 per worker)",
    spec: "1.2 s; 833,333",
    specPerWorker: "104,167",
    decide: [{ figure: "seconds", bound: 4.8, atLeast: false, digits: 2, unit: " s" }],
    cell: (m) => m.figures.seconds && `${median(m.figures.seconds, 2, " s")}; ${median(m.figures.filchPerSecond)}`,
    perWorker: (m) => median(m.figures.filchPerSecond, 0, "", perWorker(m)),
  },
  {
    workload: "4",
    label: "every result checked",
    goal: "every one",
    spec: "no races",
    specPerWorker: "",
    // run.ts throws on a wrong or failed result: a report exists only if every one was right.
    cell: (m) => m.figures.filchPerSecond && `all ${num(m.sizes.tasks)} a run, every run, none wrong`,
  },
  {
    workload: "4",
    label: "clean shutdown",
    goal: "yes",
    spec: "yes",
    specPerWorker: "",
    cell: (m) =>
      m.figures.shutdownWarnings &&
      (mid(m, "shutdownWarnings") === 0 && mid(m, "pendingAtClose") === 0
        ? "yes (every pool and producer closed in time)"
        : `no: ${mid(m, "shutdownWarnings")} closes late, ${mid(m, "pendingAtClose")} pending`),
  },
  {
    workload: "4",
    label: "against the relay users write today",
    goal: "≥ 3×",
    spec: "—",
    specPerWorker: "",
    decide: [{ figure: "over_relay", bound: 3, atLeast: true }],
    cell: (m) =>
      m.figures.over_relay &&
      `${median(m.figures.over_relay, 2, "×")} (it: ${median(m.figures.relayPerSecond)} tasks/s)`,
  },
  {
    workload: "4",
    label: "against the main thread alone",
    goal: "> 1×",
    spec: "—",
    specPerWorker: "",
    decide: [{ figure: "over_mainAlone", bound: 1, atLeast: true }],
    cell: (m) =>
      m.figures.over_mainAlone &&
      `${median(m.figures.over_mainAlone, 2, "×")} (it: ${median(m.figures.mainAlonePerSecond)} tasks/s)`,
  },
  {
    workload: "4",
    label: "tasks of 40 µs: tasks/s; ÷ the relay",
    goal: "≥ 45,000 on 2 workers; > 1×",
    spec: "—",
    specPerWorker: "",
    decide: [
      { figure: "filchSpinPerSecond", bound: 45_000, atLeast: true, digits: 0, unit: " tasks/s" },
      { figure: "over_relaySpin", bound: 1, atLeast: true },
    ],
    cell: (m) =>
      m.figures.filchSpinPerSecond &&
      `${median(m.figures.filchSpinPerSecond)}; ${median(m.figures.over_relaySpin, 2, "×")}`,
    perWorker: (m) => median(m.figures.filchSpinPerSecond, 0, "", perWorker(m)),
  },
  {
    workload: "summary",
    label: "fork (spawn) overhead, ns per join",
    goal: "< 200 ns",
    spec: "~80 ns",
    specPerWorker: "",
    decide: [{ figure: "forkNs", bound: 200, atLeast: false, digits: 0, unit: " ns" }],
    cell: (m) => median(m.figures.forkNs, 0, " ns"),
  },
  {
    workload: "summary",
    label: "steal latency, push to the thief's start, the thief searching: median; fastest tenth",
    spec: "~200 ns",
    specPerWorker: "",
    cell: (m) =>
      m.figures.stealWarmNs &&
      `${median(m.figures.stealWarmNs, 0, " ns")}; fastest tenth ${median(m.figures.stealWarmP10Ns, 0, " ns")} (${
        median(m.figures.stealWarmStolenPercent, 0, "%")
      } stolen)`,
  },
  {
    workload: "summary",
    label: "steal latency, the thief asleep (with its wake-up): median; fastest tenth",
    spec: "—",
    specPerWorker: "",
    cell: (m) =>
      m.figures.stealColdNs &&
      `${median(m.figures.stealColdNs, 0, " ns")}; fastest tenth ${median(m.figures.stealColdP10Ns, 0, " ns")} (${
        median(m.figures.stealColdStolenPercent, 0, "%")
      } stolen)`,
  },
  {
    workload: "summary",
    label: "shared memory per task in flight",
    spec: "~64 bytes",
    specPerWorker: "",
    cell: (m) =>
      m.figures.bytesPerTask &&
      `${num(mid(m, "bytesPerTask"))} bytes (buffer ${num(mid(m, "sharedBytes"))} bytes for ${
        num(mid(m, "taskCapacity"))
      } tasks)`,
  },
  {
    workload: "summary",
    label: "idle CPU of an open pool, ms per s",
    goal: "< 1 ms",
    spec: "near zero",
    specPerWorker: "",
    decide: [{ figure: "idleCpuMsPerSecond", bound: 1, atLeast: false, digits: 2, unit: " ms" }],
    cell: (m) =>
      m.figures.idleCpuMsPerSecond &&
      `${median(m.figures.idleCpuMsPerSecond, 2, " ms")} over ${num(m.sizes.idleMs / 1000)} s`,
  },
  {
    workload: "goals",
    label:
      "the submitting thread's CPU a task, the demo's shape ÷ its floor (promises held as the demo's, no pool work)",
    goal: "≤ 1.5×",
    spec: "—",
    specPerWorker: "",
    decide: [{ figure: "cpuOverHeldFloor", bound: 1.5, atLeast: false }],
    cell: (m) =>
      m.figures.cpuOverHeldFloor &&
      `${median(m.figures.cpuOverHeldFloor, 2, "×")} (${median(m.figures.demoCpuUs, 2, " µs")} ÷ ${
        median(m.figures.heldFloorUs, 2, " µs")
      }; ÷ promises resolved at once ${median(m.figures.cpuOverBareFloor, 2, "×")}, ${
        median(m.figures.bareFloorUs, 2, " µs")
      })`,
  },
  {
    workload: "goals",
    label: "the join's overhead with nothing stolen, 2 workers ÷ 1 (the issue's goal is Bun's)",
    goal: "≤ 1.3× (Bun)",
    spec: "—",
    specPerWorker: "",
    decide: [{ figure: "joinTwoOverOne", bound: 1.3, atLeast: false }],
    cell: (m) =>
      m.figures.joinTwoOverOne &&
      `${median(m.figures.joinTwoOverOne, 2, "×")} (${median(m.figures.joinTwoNs, 0, " ns")} ÷ ${
        median(m.figures.joinOneNs, 0, " ns")
      })`,
  },
  {
    workload: "goals",
    label: "64 KiB arguments; results: tasks/s ÷ the bare postMessage loop's",
    goal: "≥ 0.9× each",
    spec: "—",
    specPerWorker: "",
    decide: [
      { figure: "payloadArgumentOverBare", bound: 0.9, atLeast: true },
      { figure: "payloadResultOverBare", bound: 0.9, atLeast: true },
    ],
    cell: (m) =>
      m.figures.payloadArgumentOverBare &&
      `${median(m.figures.payloadArgumentOverBare, 2, "×")}; ${median(m.figures.payloadResultOverBare, 2, "×")}`,
  },
];

/** One runtime's results: its workloads, or why it gave none. */
export interface RuntimeResult {
  runtime: string;
  measured: Measured[];
  error?: string;
}

/**
 * The report as a Markdown table: the rows, the specification's figures and one column pair (the figure,
 * per worker) for each runtime; then what did not run.
 *
 * @param results Each runtime's workloads.
 * @returns The table and its notes.
 *
 * @example Usage
 * ```ts
 * import { render } from "./report.ts";
 * console.log(render([]).includes("fork (spawn) overhead")); // true
 * ```
 */
export function render(results: RuntimeResult[]): string {
  const head = ["#", "workload: figure", "specification (8 workers)", "per worker", "issue 50's goal"];
  for (const r of results) {
    const workers = r.measured[0]?.workers;
    head.push(`${r.runtime}${workers === undefined ? "" : ` (${workers} workers)`}`, "per worker");
  }
  const lines = [`| ${head.join(" | ")} |`, `|${head.map(() => "---").join("|")}|`];
  let last = "";
  for (const row of ROWS) {
    const cells = [row.workload === last ? "" : row.workload === "summary" ? "" : row.workload];
    cells.push(row.workload === last ? row.label : `${WORKLOADS[row.workload]}: ${row.label}`);
    cells.push(row.spec, row.specPerWorker, row.goal ?? "");
    for (const r of results) {
      const m = r.measured.find((x) => x.workload === row.workload);
      if (m === undefined) cells.push(r.error === undefined ? "not run" : "did not run", "");
      else cells.push(row.cell(m) ?? "n/a", row.perWorker?.(m) ?? "");
    }
    lines.push(`| ${cells.join(" | ")} |`);
    last = row.workload;
  }
  const verdicts: string[] = [];
  for (const r of results) {
    for (const row of ROWS) {
      const m = r.measured.find((x) => x.workload === row.workload);
      if (m === undefined || row.decide === undefined) continue;
      const where = row.workload === "summary" || row.workload === "goals" ? "" : `#${row.workload} `;
      for (const d of row.decide) {
        const v = verdict(d, m);
        if (v !== undefined) verdicts.push(`- ${r.runtime}, ${where}${row.label} (${d.figure}): ${v}`);
      }
    }
  }
  const notes: string[] = [];
  for (const r of results) {
    if (r.error !== undefined) notes.push(`- ${r.runtime} did not finish: ${r.error}`);
    for (const m of r.measured) {
      for (const skip of m.skipped) notes.push(`- ${r.runtime}, workload ${m.workload}: not run: ${skip}`);
    }
  }
  return [
    ...lines,
    ...(verdicts.length > 0
      ? ["", "Goals, decided by the 95% interval of the median over rounds:", "", ...verdicts]
      : []),
    ...(notes.length > 0 ? ["", ...notes] : []),
  ].join("\n");
}
