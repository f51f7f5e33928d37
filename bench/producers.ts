/**
 * Producers benchmark (issue 29): throughput of N tasks submitted from P producer threads (P = 1, 2, 4, 8),
 * for filch's producers in other threads against the relay users write today, and the CPU time each costs
 * the pool's own thread (its owner, here the main thread).
 *
 * Workload. N tasks in all, split evenly across the P threads (bench/producers_thread.ts); each thread
 * keeps up to `--window` tasks in flight (default 1,000; a new one as each settles) and checks that every
 * result is its own (`i + base`, `base` distinct per thread). Two tasks (bench/producers_tasks.ts): `add`,
 * tiny, whose cost is all the pool's, and `spinAdd`, which busy-spins `--us` µs (default 40) first.
 *
 * Contenders, all with `--workers` workers (default 2, this machine's cores):
 * - "filch": each thread opens a producer once (`pool.handle()` posted with `handle.transfer`, then
 *   `openProducer`) and submits with `producer.run`;
 * - "relay": each thread posts every task to the main thread as a message (`{ id, task, args }`), which
 *   submits it with `pool.run` on the same filch pool and posts the result back (`{ id, value }`): one
 *   message each way per task;
 * - "piscina": the same relay, the main thread calling `piscina.run({ task, args })` (piscina 5, min = max
 *   = `--workers` threads, loaded as bench/latency.ts does).
 *
 * Reuse. One filch pool (`producers: 8`), one piscina and 8 producer threads are made once and serve every
 * round: a thread's producer stays open for the whole benchmark (opening costs a thread start and a slot,
 * which is not what is measured, and slots are limited), and the same threads relay for "relay" and
 * "piscina", so every contender is fed by the same, equally warm, threads. A run of P uses the first P.
 * "filch" and "relay" share the one filch pool (the same workers, equally warm): the difference between
 * them is the path of a task, nothing else.
 *
 * Measurement. Contenders alternate within each round, for each (P, task) in turn, the order rotated each
 * round; between runs the main thread collects garbage (where the runtime allows) and rests 30 ms. A run's
 * throughput is N ÷ (time from posting "go" to the P threads to the last thread's "done"). The ratios
 * filch ÷ relay and filch ÷ piscina are taken per round (both ran seconds apart, which cancels the
 * machine's drift) and reported as their median with the range and a distribution-free 95% interval of the
 * median (bench/_stats.ts `medianInterval`).
 *
 * Owner CPU. The main thread's own CPU time over each run, read from Linux's per-thread
 * `/proc/<pid>/task/<pid>/schedstat` (its first field: ns on a CPU; the main thread's id is the process
 * id), checked at start against `process.cpuUsage()` while only the main thread works. It is CPU time,
 * not wall time: a thread waiting for a core is not charged, unlike `performance.eventLoopUtilization()`,
 * which counts wall time outside the event loop's wait (and which returns all zeros on Deno 2.9 and Bun
 * 1.4: checked with a 100 ms spin between two calls). Divided by N it is the owner's CPU per task,
 * and 1 ÷ that is the throughput at which the owner thread saturates, whatever the number of cores: the
 * bound the owner sets on a machine of 16 cores or more. Where /proc is missing or the check fails, the
 * column says SKIPPED with the reason. Beside it, the whole process's CPU per task (`process.cpuUsage()`:
 * every thread, the owner, the workers and the producer threads), which shows what the P threads cost
 * where they share the cores with the workers.
 *
 * Run: `node bench/producers.ts`, `deno run -A bench/producers.ts`, `bun bench/producers.ts`. Options:
 * `--rounds N` (default 15), `--tasks N` (the `add` tasks per run, default 20,000; the issue's stress shape
 * is `--tasks 1000000`, 125,000 from each of 8 threads), `--spin-tasks N` (default 6,000), `--us U` (default
 * 40), `--window W` (default 1,000), `--workers W` (default 2), `--producers 1,2,4,8`, `--capacity C`
 * (one more contender: filch's producers on a second pool with `taskCapacity: C`, to compare with the
 * default 4,096 records when P × window exceeds them), `--json` (one JSON line per row, then per ratio). Every run has a deadline (bench/_deadline.ts): a hang fails with a message.
 */
import process from "node:process";
import { Pool } from "../lib/pool.ts";
import { startThread, type ThreadHandle } from "../lib/runtime/thread.ts";
import { collectGarbage, format, medianInterval, runtimeName, summarize, type Summary } from "./_stats.ts";
import { withTimeout } from "./_deadline.ts";
import { ownerCpuNs, ownerCpuProblem } from "./_owner_cpu.ts";
import type * as tasks from "./producers_tasks.ts";
import type { FromThread, Go, ToThread } from "./producers_thread.ts";

function option(name: string): string | undefined {
  const args = process.argv.slice(2);
  const i = args.findIndex((a) => a === `--${name}` || a.startsWith(`--${name}=`));
  if (i === -1) return undefined;
  return args[i].includes("=") ? args[i].slice(args[i].indexOf("=") + 1) : args[i + 1];
}

/** One task kind of the workload. */
interface Kind {
  task: Go["task"];
  label: string;
  n: number;
}

/** A contender: how its runs are fed. */
interface Contender {
  name: string;
  via: Go["via"];
  /** With `via: "producer"`: which pool's producer each thread uses (0: the shared pool). */
  pool: number;
  /** For a relay: runs one relayed task on the main thread. */
  runOnMain?: (task: string, args: number[]) => Promise<number>;
}

/** One run's figures. */
interface RunFigures {
  tasksPerSecond: number;
  /** The owner's (main thread's) CPU time per task, µs; NaN where it cannot be read. */
  ownerMicros: number;
  /** The owner's CPU time as a share of the run's wall time, %. */
  ownerPercent: number;
  /** The whole process's CPU time (every thread: owner, workers, producer threads) per task, µs. */
  processMicros: number;
}

/** A (contender, P, task) cell over the rounds. */
export interface ProducersRow {
  runtime: string;
  contender: string;
  producers: number;
  task: string;
  tasks: number;
  tasksPerSecond: Summary;
  ownerMicrosPerTask: Summary;
  ownerPercentOfWall: Summary;
  processMicrosPerTask: Summary;
  samples: number[];
}

/** filch's throughput ÷ another's, per round, at one (P, task). */
export interface ProducersRatio {
  runtime: string;
  ratio: string;
  producers: number;
  task: string;
  value: Summary;
  interval95?: [number, number];
}

// ---- the benchmark ----

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

const THREAD_URL = new URL("./producers_thread.ts", import.meta.url);
const TASKS_URL = new URL("./producers_tasks.ts", import.meta.url);

/** The benchmark's settings. */
export interface Settings {
  rounds: number;
  tasks: number;
  spinTasks: number;
  us: number;
  window: number;
  workers: number;
  producers: number[];
  /** If set, a second filch pool with this `taskCapacity`, as one more contender (`--capacity`). */
  capacity?: number;
  /** False leaves piscina out (bench/spec/run.ts: behind the relay it runs at a sixth of filch's rate). */
  piscina?: boolean;
}

/**
 * Runs every contender that starts on this runtime, `rounds` rounds, alternated (see the module doc).
 *
 * @param s The settings.
 * @returns The rows, the ratios, and the contenders that did not run, with why.
 */
export async function benchProducers(
  s: Settings,
): Promise<{ rows: ProducersRow[]; ratios: ProducersRatio[]; skipped: string[]; cpuProblem?: string }> {
  const maxP = Math.max(...s.producers);
  const skipped: string[] = [];
  const cpuProblem = ownerCpuProblem();
  if (cpuProblem !== undefined) console.error(`SKIPPED owner CPU per task: ${cpuProblem}`);

  const pool = await withTimeout(
    Pool.create<typeof tasks>(TASKS_URL, { workers: s.workers, producers: maxP }),
    20_000,
    "the filch pool did not start within 20 s",
  );
  let piscina: { run(task: unknown): Promise<unknown>; destroy(): Promise<void> } | undefined;

  // The threads, and what each of them is awaited for.
  const threads: ThreadHandle[] = [];
  const awaited: ((message: FromThread) => void)[] = [];
  let route: ((task: string, args: number[]) => Promise<number>) | undefined;
  const next = (p: number) => new Promise<FromThread>((resolve) => (awaited[p] = resolve));
  for (let p = 0; p < maxP; p++) {
    const thread = startThread(THREAD_URL, `producer-${p}`);
    threads.push(thread);
    thread.onError((error) => console.error(`producer thread ${p} died:`, error));
    thread.onMessage((data) => {
      const message = data as FromThread;
      if (message.type === "task") {
        route!(message.task, message.args).then(
          (value) => thread.post({ type: "result", id: message.id, value } satisfies ToThread),
          () => thread.post({ type: "result", id: message.id, value: NaN } satisfies ToThread),
        );
      } else awaited[p]?.(message);
    });
  }

  const contenders: Contender[] = [];
  /** Opens a producer on `target` in every thread, as that thread's producer number `index`. */
  async function openAll(target: Pool<typeof tasks>, index: number): Promise<void> {
    const opened = await withTimeout(
      Promise.all(threads.map((thread, p) => {
        const reply = next(p);
        const handle = target.handle();
        thread.post(
          { type: "open", handle, pool: index } satisfies ToThread,
          handle.transfer as unknown as ArrayBuffer[],
        );
        return reply;
      })),
      20_000,
      "the producer threads did not open their producers within 20 s",
    );
    const failed = opened.find((m) => m.type === "opened" && m.error !== undefined);
    if (failed !== undefined && failed.type === "opened") throw new Error(failed.error);
  }
  // (a) filch's producers: one handle per thread, opened there.
  try {
    await openAll(pool, 0);
    contenders.push({ name: "filch", via: "producer", pool: 0 });
  } catch (error) {
    skipped.push(`filch (producers in other threads): ${String(error).split("\n")[0]}`);
  }
  // With --capacity: filch again, on a pool of its own with that many task records.
  let second: Pool<typeof tasks> | undefined;
  if (s.capacity !== undefined) {
    const name = `filch taskCapacity ${s.capacity}`;
    try {
      second = await withTimeout(
        Pool.create<typeof tasks>(TASKS_URL, { workers: s.workers, producers: maxP, taskCapacity: s.capacity }),
        20_000,
        `the ${name} pool did not start within 20 s`,
      );
      await openAll(second, 1);
      contenders.push({ name, via: "producer", pool: 1 });
    } catch (error) {
      skipped.push(`${name}: ${String(error).split("\n")[0]}`);
    }
  }
  // (b) the relay onto the same filch pool.
  contenders.push({
    name: "relay",
    via: "relay",
    pool: 0,
    runOnMain: (task, args) => (pool.run as (t: string, ...a: number[]) => Promise<number>)(task, ...args),
  });
  // (c) piscina behind the same relay.
  try {
    if (s.piscina === false) throw new Error("left out (piscina: false)");
    const { Piscina } = await import("piscina");
    const made = new Piscina({
      filename: new URL("./peers/producers_piscina_worker.mjs", import.meta.url).href,
      minThreads: s.workers,
      maxThreads: s.workers,
    });
    piscina = made;
    await withTimeout(made.run({ task: "add", args: [1, 2] }), 10_000, "piscina did not run a task within 10 s");
    contenders.push({
      name: "piscina",
      via: "relay",
      pool: 0,
      runOnMain: (task, args) => made.run({ task, args }) as Promise<number>,
    });
  } catch (error) {
    skipped.push(`piscina: ${String(error).split("\n")[0]}`);
  }
  for (const line of skipped) console.error(`SKIPPED ${line}`);

  const kinds: Kind[] = [
    { task: "add", label: "add (tiny)", n: s.tasks },
    { task: "spinAdd", label: `spin ${s.us} µs`, n: s.spinTasks },
  ];

  /** One run: `kind.n` tasks from `P` threads through `contender`. */
  async function run(contender: Contender, P: number, kind: Kind): Promise<RunFigures> {
    route = contender.runOnMain;
    collectGarbage?.();
    // The deadline: 60 s, plus 1 s per 5,000 tasks of the worst rate seen here (a hang is a failure).
    const deadline = 60_000 + kind.n / 5;
    const cpu0 = cpuProblem === undefined ? ownerCpuNs() : NaN;
    const usage0 = process.cpuUsage();
    const start = performance.now();
    const replies = threads.slice(0, P).map((thread, p) => {
      const reply = next(p);
      // An even split; the first n mod P threads take one more.
      const n = Math.floor(kind.n / P) + (p < kind.n % P ? 1 : 0);
      thread.post(
        {
          type: "go",
          via: contender.via,
          pool: contender.pool,
          n,
          base: p * 10_000_000,
          task: kind.task,
          us: s.us,
          window: s.window,
        } satisfies ToThread,
      );
      return reply;
    });
    const done = await withTimeout(
      Promise.all(replies),
      deadline,
      `hang: ${contender.name} with ${P} producers did not finish ${kind.n} ${kind.task} tasks within ${
        deadline / 1000
      } s`,
    );
    const seconds = (performance.now() - start) / 1000;
    const cpu1 = cpuProblem === undefined ? ownerCpuNs() : NaN;
    const usage = process.cpuUsage(usage0);
    for (const message of done) {
      if (message.type !== "done") throw new Error(`unexpected reply ${message.type}`);
      if (message.error !== undefined || message.wrong > 0 || message.failed > 0) {
        throw new Error(
          `${contender.name} with ${P} producers: ${message.wrong} wrong results, ${message.failed} failed tasks${
            message.error === undefined ? "" : `, ${message.error}`
          }`,
        );
      }
    }
    return {
      tasksPerSecond: kind.n / seconds,
      ownerMicros: (cpu1 - cpu0) / 1000 / kind.n,
      ownerPercent: (cpu1 - cpu0) / 1e7 / seconds,
      processMicros: (usage.user + usage.system) / kind.n,
    };
  }

  // Warm-up: one small run of each contender and kind at the largest P.
  for (const contender of contenders) {
    for (const kind of kinds) await run(contender, maxP, { ...kind, n: Math.min(kind.n, 2_000 * maxP) });
  }

  // figures[contender][P][kind][round]
  const figures = contenders.map(() => s.producers.map(() => kinds.map(() => [] as RunFigures[])));
  for (let r = 0; r < s.rounds; r++) {
    for (let pi = 0; pi < s.producers.length; pi++) {
      for (let ki = 0; ki < kinds.length; ki++) {
        for (let c = 0; c < contenders.length; c++) {
          const k = (c + r) % contenders.length;
          const figure = await run(contenders[k], s.producers[pi], kinds[ki]);
          figures[k][pi][ki].push(figure);
          console.error(
            `round ${r} P=${s.producers[pi]} ${kinds[ki].task} ${contenders[k].name}: ${
              figure.tasksPerSecond.toFixed(0)
            } tasks/s, owner ${figure.ownerMicros.toFixed(2)} µs/task`,
          );
          await sleep(30);
        }
      }
    }
  }

  // The end: producers closed, then the pools; every step bounded.
  await withTimeout(
    Promise.all(threads.map((thread, p) => {
      const reply = next(p);
      thread.post({ type: "close" } satisfies ToThread);
      return reply;
    })),
    10_000,
    "the producers did not close within 10 s",
  ).catch((error) => console.error(`WARNING ${error}`));
  for (const thread of threads) thread.terminate();
  for (const target of second === undefined ? [pool] : [pool, second]) {
    await withTimeout(target.close(), 10_000, "a filch pool did not close within 10 s")
      .catch((error) => console.error(`WARNING ${error}`));
  }
  if (piscina !== undefined) {
    await withTimeout(piscina.destroy(), 5_000, "piscina did not close within 5 s")
      .catch((error) => console.error(`WARNING ${error}`));
  }

  const rows: ProducersRow[] = [];
  const ratios: ProducersRatio[] = [];
  for (let pi = 0; pi < s.producers.length; pi++) {
    for (let ki = 0; ki < kinds.length; ki++) {
      for (let c = 0; c < contenders.length; c++) {
        const runs = figures[c][pi][ki];
        rows.push({
          runtime: runtimeName(),
          contender: contenders[c].name,
          producers: s.producers[pi],
          task: kinds[ki].label,
          tasks: kinds[ki].n,
          tasksPerSecond: summarize(runs.map((f) => f.tasksPerSecond)),
          ownerMicrosPerTask: summarize(runs.map((f) => f.ownerMicros)),
          ownerPercentOfWall: summarize(runs.map((f) => f.ownerPercent)),
          processMicrosPerTask: summarize(runs.map((f) => f.processMicros)),
          samples: runs.map((f) => f.tasksPerSecond),
        });
      }
      const f = contenders.findIndex((c) => c.name === "filch");
      if (f === -1) continue;
      for (let c = 0; c < contenders.length; c++) {
        if (c === f) continue;
        const per = figures[f][pi][ki].map((fig, r) => fig.tasksPerSecond / figures[c][pi][ki][r].tasksPerSecond);
        ratios.push({
          runtime: runtimeName(),
          ratio: `filch ÷ ${contenders[c].name}`,
          producers: s.producers[pi],
          task: kinds[ki].label,
          value: summarize(per),
          interval95: medianInterval(per),
        });
      }
    }
  }
  return { rows, ratios, skipped, cpuProblem };
}

if (import.meta.main ?? process.argv[1]?.endsWith("producers.ts")) {
  const settings: Settings = {
    rounds: Number(option("rounds") ?? 15),
    tasks: Number(option("tasks") ?? 20_000),
    spinTasks: Number(option("spin-tasks") ?? 6_000),
    us: Number(option("us") ?? 40),
    window: Number(option("window") ?? 1_000),
    workers: Number(option("workers") ?? 2),
    producers: (option("producers") ?? "1,2,4,8").split(",").map(Number),
    capacity: option("capacity") === undefined ? undefined : Number(option("capacity")),
  };
  const { rounds, tasks, spinTasks, us, window, workers, producers } = settings;
  if (
    !(rounds >= 1 && tasks >= 1 && spinTasks >= 1 && us >= 0 && window >= 1 && workers >= 1) ||
    !producers.every((p) => Number.isInteger(p) && p >= 1 && p <= 64) ||
    !(settings.capacity === undefined || (Number.isInteger(settings.capacity) && settings.capacity >= 1))
  ) {
    throw new Error(
      "Cannot run with those settings: --rounds, --tasks, --spin-tasks, --window, --workers ≥ 1, --us ≥ 0, --producers integers 1–64, --capacity an integer ≥ 1",
    );
  }
  const { rows, ratios, skipped, cpuProblem } = await benchProducers(settings);
  if (process.argv.includes("--json")) {
    for (const row of rows) console.log(JSON.stringify(row));
    for (const ratio of ratios) console.log(JSON.stringify(ratio));
  } else {
    console.log(
      `\n${runtimeName()}, ${workers} workers, ${rounds} rounds; add: ${tasks} tasks per run, spin ${us} µs: ${spinTasks}; ` +
        `up to ${window} in flight per producer thread. tasks/s: median over rounds (min–max); ratios taken per ` +
        `round: median (min–max) [95% interval of the median].\n`,
    );
    for (const line of skipped) console.log(`SKIPPED ${line}`);
    const names = [...new Set(rows.map((r) => r.contender))];
    const others = names.filter((n) => n !== "filch");
    console.log(
      `| P | task | ${names.map((n) => `${n} tasks/s`).join(" | ")} | ${
        others.map((n) => `filch ÷ ${n}`).join(" | ")
      } |`,
    );
    console.log(`|---|---|${names.map(() => "---|").join("")}${others.map(() => "---|").join("")}`);
    const cells = [...new Set(rows.map((r) => `${r.producers}|${r.task}`))];
    for (const cell of cells) {
      const [p, task] = cell.split("|");
      const mine = rows.filter((r) => `${r.producers}|${r.task}` === cell);
      const rates = names.map((n) => format(mine.find((r) => r.contender === n)!.tasksPerSecond, 0));
      const quotients = others.map((n) => {
        const q = ratios.find((x) => `${x.producers}|${x.task}` === cell && x.ratio === `filch ÷ ${n}`);
        if (q === undefined) return "";
        const ci = q.interval95 === undefined ? "" : ` [${q.interval95[0].toFixed(2)}–${q.interval95[1].toFixed(2)}]`;
        return `${format(q.value, 2)}${ci}`;
      });
      console.log(`| ${p} | ${task} | ${rates.join(" | ")} | ${quotients.join(" | ")} |`);
    }
    console.log(
      `\nThe owner (main) thread's CPU per task, µs (per-thread schedstat), median over rounds (min–max), and the ` +
        `throughput at which it saturates (1 ÷ the median), tasks/s; its CPU as a share of the run's wall time, %, median (min–max); the whole process's CPU per task (every thread, process.cpuUsage), µs:\n`,
    );
    if (cpuProblem !== undefined) console.log(`SKIPPED owner CPU per task: ${cpuProblem}`);
    else {
      console.log(
        "| P | task | contender | owner CPU µs/task | owner CPU % of wall | owner saturates at, tasks/s | process CPU µs/task |",
      );
      console.log("|---|---|---|---|---|---|---|");
      for (const row of rows) {
        console.log(
          `| ${row.producers} | ${row.task} | ${row.contender} | ${format(row.ownerMicrosPerTask, 3)} | ${
            format(row.ownerPercentOfWall, 1)
          } | ${(1e6 / row.ownerMicrosPerTask.median).toFixed(0)} | ${format(row.processMicrosPerTask, 2)} |`,
        );
      }
    }
  }
  // Stray handles of peers must not keep the process up.
  process.exit(0);
}
