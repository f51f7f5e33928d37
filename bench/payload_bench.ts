/**
 * Payload benchmark: how fast a pool moves bytes, as a task's argument and as its result, at 64 B, 1 KiB,
 * 64 KiB, 1 MiB and 16 MiB, on 2 workers, for filch and, side by side in the same process, a bare
 * postMessage loop (2 workers, round robin, no promises: node:worker_threads on Node, the web Worker on
 * Bun and Deno, whose node:worker_threads is far slower at sending bytes: see `--worker-threads-bare`) and
 * the peers that run here: piscina, tinypool, workerpool, poolifier.
 *
 * - "argument": the caller passes a `Uint8Array` of the size (non-zero bytes, made once per size and
 *   reused); the task returns its length plus its first and last byte, which the caller checks.
 * - "result": the caller passes the size; the task returns a fresh `Uint8Array` of it (first and last byte
 *   set), whose length and those bytes the caller checks.
 *
 * Each cell (a size and a direction) submits its tasks at once and awaits them all (a burst); the count is
 * scaled by the size so that a burst moves some 32–64 MiB (capped at 20,000 tasks for the small sizes), and
 * printed. Every contender gets one untimed warm-up burst (an eighth of the tasks; see `--warmup`) per
 * cell, then the rounds, contenders interleaved (the order rotates each round). Results are medians with
 * the range (min–max) of tasks/s and MB/s (10^6 bytes of payload a second), and filch ÷ bare loop and filch
 * ÷ piscina, computed per round and then medianed. The goals: filch ≥ 1× the bare loop and ≥ 2× piscina at every size.
 *
 * For fairness the bare loop and the peers move bytes by plain structured clone (no transfer list, no
 * `Piscina.move`), as filch copies them, and every contender keeps a burst's results until the burst ends
 * (the pools' `Promise.all`; the bare loop in an array): on Bun, a bare loop that dropped each result as it
 * came moved 64 KiB results at 1,678 MB/s, and 324 MB/s keeping them, as the pools must. One more
 * contender, "filch, move()", shows what the zero-copy path gives: each argument task gets its own copy of
 * the bytes (one copy by the caller), moved to the worker; each result is moved back; its ratio to the bare
 * loop is the last column. If a pool rejects a size (filch with a RangeError naming the
 * bytes its pool holds, say), the cell records that contender as failed with the error's message and the
 * benchmark goes on; filch's pool options are printed.
 *
 * `--text=json` or `--text=source` (issue 31): the argument is a string of the size instead of bytes, JSON
 * text (ASCII) or this project's source text (a few characters above Latin-1 in it, so a two-byte string
 * in V8), and the task returns a small object (`{ length, first, last }`: the string's length and its
 * first and last code units), which the caller checks; only the argument direction runs, and "filch,
 * move()" does not (a string cannot be moved).
 *
 * Run: `node bench/payload_bench.ts`, `deno run -A bench/payload_bench.ts`, `bun bench/payload_bench.ts`.
 * A number sets the rounds (default 3); `--warmup=N` runs N untimed bursts of a cell's full size per
 * contender before its rounds (default: one of an eighth of the tasks); `--quick` drops 16 MiB; `--from=N`
 * drops sizes below N bytes; `--only=a,b` runs only the contenders whose names start with one of those (`--only=filch,bare`, say:
 * piscina's ratio then reads n/a); `--gc` collects garbage before each timed burst (`collectGarbage` in
 * _stats.ts: at these sizes whether a burst's buffers come from recycled memory or from fresh pages, which
 * cost a page fault each on this VM, otherwise depends on which contender's garbage was collected when);
 * `--blocks=N` creates filch's pool with
 * `blocks: N` (overflow blocks of its shared buffer); `--worker-threads-bare` adds, on Deno, a bare loop on
 * node:worker_threads beside the web Worker's; `--json` prints one JSON line per cell
 * ({@link PayloadBenchRow}) and nothing else on stdout.
 *
 * `--processes=P`: each contender runs in processes of its own, one after another (never two at once), in
 * P passes with the order rotated each pass; each process runs every cell for its contender, rounds ÷ P
 * timed rounds each (rounded up), after the cell's warm-up. In one process the contenders share a
 * heap, so a burst may pay for the garbage of the one before it or find a heap grown by it: on Bun, with
 * `--gc`, filch's ratio to the bare loop went from 0.64–0.75 interleaved to 1.2–1.3 with the two in
 * processes apart (1 KiB arguments), and from 1.1–1.6 to 0.5 (1 MiB results). The ratios then
 * pair the k-th round of one pass's process of filch with the k-th round of the same pass's process of
 * the other contender: run close in time, not side by side.
 */
import { readFileSync } from "node:fs";
import { cpus } from "node:os";
import { fileURLToPath } from "node:url";
import { move } from "../lib/codec/move.ts";
import { Pool, type PoolOptions } from "../lib/pool.ts";
import { startThread, threadApi, type ThreadHandle } from "../lib/runtime/thread.ts";
import { runApart } from "./_apart.ts";
import { collectGarbage, format, medianInterval, runtimeName, summarize, type Summary } from "./_stats.ts";
import type * as tasks from "./tasks.ts";
import { withTimeout } from "./_deadline.ts";

const WORKERS = 2;
const KiB = 1024;
const MiB = 1024 * KiB;
/** Payload sizes, and the tasks of one burst at each: 32–64 MiB a burst, at most 20,000 tasks. */
const CELLS: { bytes: number; tasks: number }[] = [
  { bytes: 64, tasks: 20_000 },
  { bytes: KiB, tasks: 20_000 },
  { bytes: 64 * KiB, tasks: 512 },
  { bytes: MiB, tasks: 48 },
  { bytes: 16 * MiB, tasks: 4 },
];
/** The contenders, in the order they start (the second bare loop only with `--worker-threads-bare`, on Deno). */
const CONTENDERS = [
  "filch",
  "filch, move()",
  "bare postMessage loop",
  "piscina",
  "tinypool",
  "workerpool",
  "poolifier",
];

/** A burst that takes longer than this is abandoned, and its contender dropped for the rest of the run. */
const BURST_TIMEOUT_MS = 60_000;

type Direction = "argument" | "result";

/** One pool under test. */
interface Contender {
  name: string;
  /**
   * Submits `n` tasks taking `bytes` (or, with `--text`, a string) at once, awaits all and checks them;
   * returns the elapsed ms.
   */
  argument(bytes: Uint8Array | string, n: number): Promise<number>;
  /** Submits `n` tasks returning `size` bytes at once, awaits all and checks them; returns the elapsed ms. */
  result(size: number, n: number): Promise<number>;
  close(): Promise<void>;
}

/** The checksum the argument task returns for `bytes`; for a string, the text task's object as JSON. */
function checksum(bytes: Uint8Array | string): number | string {
  if (typeof bytes === "string") return JSON.stringify(textSummary(bytes));
  return bytes.length + bytes[0] + bytes[bytes.length - 1];
}

/** What every contender's text task returns for `text` (as `takeText` in tasks.ts and the peers' workers). */
function textSummary(text: string): { length: number; first: number; last: number } {
  return { length: text.length, first: text.charCodeAt(0), last: text.charCodeAt(text.length - 1) };
}

/** Whether `r`, a reply to an argument task, matches `expected` (from {@link checksum}). */
function matches(r: unknown, expected: number | string): boolean {
  return typeof expected === "number" ? r === expected : JSON.stringify(r) === expected;
}

/**
 * A string of `n` code units for `--text`: JSON text of small records, or this project's source text from
 * the codec's format table on (so that even 1 KiB holds characters above Latin-1: ×, ≥), repeated and cut.
 */
function makeText(kind: "json" | "source", n: number): string {
  let text: string;
  if (kind === "json") {
    text = JSON.stringify(Array.from({ length: Math.ceil(n / 30) + 1 }, (_, i) => ({ id: i, name: `row ${i}` })));
  } else {
    const file = readFileSync(new URL("../lib/codec/format.ts", import.meta.url), "utf8");
    text = file.slice(file.indexOf(" * | tag"));
  }
  // Flattened (a copy through an array of code units is overkill; concatenation with "" does not flatten):
  // the same string every burst, as a caller holding its text would pass.
  const cut = text.repeat(Math.ceil(n / text.length)).slice(0, n);
  return cut.split("").join("");
}

/** Whether `value` is the result task's answer for `size` (a view of `size` bytes, first 1 and last 2). */
function isResult(value: unknown, size: number): boolean {
  const bytes = value as Uint8Array | undefined;
  return bytes instanceof Uint8Array && bytes.length === size && bytes[0] === 1 && bytes[size - 1] === 2;
}

/**
 * Runs `run` `n` times at once and awaits all; returns the elapsed ms. On a rejection, waits for the rest
 * to settle (so that no task of this burst runs into the next contender's) and throws the first error.
 */
async function checkedBurst(
  n: number,
  run: () => Promise<unknown>,
  ok: (value: unknown) => boolean,
): Promise<number> {
  const start = performance.now();
  const all = new Array<Promise<unknown>>(n);
  for (let i = 0; i < n; i++) all[i] = run();
  let results: unknown[];
  try {
    results = await Promise.all(all);
  } catch (error) {
    await Promise.allSettled(all);
    throw error;
  }
  const ms = performance.now() - start;
  let bad = 0;
  for (let i = 0; i < n; i++) if (!ok(results[i])) bad++;
  if (bad > 0) throw new Error(`Cannot trust the benchmark as ${bad} of ${n} results were wrong`);
  return ms;
}

async function filch(options: PoolOptions): Promise<Contender> {
  const pool = await Pool.create<typeof tasks>(new URL("./tasks.ts", import.meta.url), options);
  return {
    name: "filch",
    argument: (bytes, n) => {
      const expected = checksum(bytes);
      if (typeof bytes === "string") {
        return checkedBurst(n, () => pool.run("takeText", bytes), (r) => matches(r, expected));
      }
      return checkedBurst(n, () => pool.run("takeBytes", bytes), (r) => r === expected);
    },
    result: (size, n) => checkedBurst(n, () => pool.run("makeBytes", size), (r) => isResult(r, size)),
    close: () => pool.close(),
  };
}

/**
 * filch with `move()`: no copy by the pool either way. An argument burst gives each task its own copy of
 * the bytes (one copy by the caller, as a producer keeping its data would make) and moves it; a result is
 * moved back by the task.
 */
async function filchMove(options: PoolOptions): Promise<Contender> {
  const pool = await Pool.create<typeof tasks>(new URL("./tasks.ts", import.meta.url), options);
  return {
    name: "filch, move()",
    argument: (bytes, n) => {
      const expected = checksum(bytes);
      if (typeof bytes === "string") throw new Error("a string cannot be moved: filch, move() runs no --text cell");
      return checkedBurst(n, () => pool.run("takeBytes", move(bytes.slice())), (r) => r === expected);
    },
    result: (size, n) => checkedBurst(n, () => pool.run("makeBytesMoved", size), (r) => isResult(r, size)),
    close: () => pool.close(),
  };
}

/** A thread for the bare loop: the web Worker, or node:worker_threads (through filch's own adapter). */
function bareThread(api: "web" | "worker_threads", name: string): ThreadHandle {
  const url = new URL(
    api === "web" ? "./peers/payload_bare_web.mjs" : "./peers/payload_bare_node.mjs",
    import.meta.url,
  );
  if (api === threadApi) return startThread(url, name);
  // Deno's web Worker (filch's adapter starts node:worker_threads there).
  const worker = new Worker(url, { type: "module", name });
  return {
    post: (message) => worker.postMessage(message),
    onMessage: (listener) => worker.addEventListener("message", (event) => listener((event as MessageEvent).data)),
    onError: () => {},
    onExit: () => {},
    terminate: () => worker.terminate(),
    unref: () => {},
    ref: () => {},
  };
}

/**
 * The bare postMessage loop: 2 threads, messages round robin, no promises. `api` picks the thread API;
 * see {@link bareApi} for which one is the floor on each runtime.
 */
function bareLoop(api: "web" | "worker_threads", name: string): Contender {
  const threads: ThreadHandle[] = [];
  for (let w = 0; w < WORKERS; w++) threads.push(bareThread(api, `bare-${w}`));
  type Reply = { i: number; r?: unknown; bytes?: Uint8Array };
  let onReply: (message: Reply) => void = () => {};
  for (const t of threads) t.onMessage((m) => onReply(m as Reply));
  /** Posts `n` messages round robin (plain structured clone, no transfer list), awaits `n` checked replies. */
  const burst = (n: number, message: (i: number) => unknown, ok: (m: Reply) => boolean) =>
    new Promise<number>((resolve, reject) => {
      const start = performance.now();
      // Kept until the burst ends and checked then, as the pools' bursts keep theirs (`checkedBurst`'s
      // Promise.all): whether a burst's results are still held when the next one allocates changes what
      // its allocations cost (fresh pages or reused ones).
      const replies = new Array<Reply>(n);
      let left = n;
      onReply = (m) => {
        replies[m.i] = m;
        if (--left > 0) return;
        const ms = performance.now() - start;
        let bad = 0;
        for (let i = 0; i < n; i++) if (!ok(replies[i])) bad++;
        if (bad > 0) reject(new Error(`Cannot trust the benchmark as ${bad} of ${n} results were wrong`));
        else resolve(ms);
      };
      for (let i = 0; i < n; i++) threads[i % WORKERS].post(message(i));
    });
  return {
    name,
    argument: (bytes, n) => {
      const expected = checksum(bytes);
      if (typeof bytes === "string") return burst(n, (i) => ({ i, text: bytes }), (m) => matches(m.r, expected));
      return burst(n, (i) => ({ i, bytes }), (m) => m.r === expected);
    },
    result: (size, n) => burst(n, (i) => ({ i, size }), (m) => isResult(m.bytes, size)),
    close: () => {
      for (const t of threads) t.terminate();
      return Promise.resolve();
    },
  };
}

/** piscina or tinypool, which share an API and a worker file (its default export gets the submitted object). */
async function piscinaLike(name: "piscina" | "tinypool"): Promise<Contender> {
  const PoolClass = name === "piscina" ? (await import("piscina")).Piscina : (await import("tinypool")).Tinypool;
  const pool = new PoolClass({
    filename: new URL("./peers/payload_piscina_worker.mjs", import.meta.url).href,
    minThreads: WORKERS,
    maxThreads: WORKERS,
  });
  return {
    name,
    argument: (bytes, n) => {
      const expected = checksum(bytes);
      const message = typeof bytes === "string" ? { text: bytes } : { bytes };
      return checkedBurst(n, () => pool.run(message), (r) => matches(r, expected));
    },
    result: (size, n) => checkedBurst(n, () => pool.run({ size }), (r) => isResult(r, size)),
    close: () => pool.destroy(),
  };
}

async function workerpool(): Promise<Contender> {
  const wp = (await import("workerpool")).default;
  const { fileURLToPath } = await import("node:url");
  const pool = wp.pool(fileURLToPath(new URL("./peers/payload_workerpool_worker.mjs", import.meta.url).href), {
    minWorkers: WORKERS,
    maxWorkers: WORKERS,
    workerType: "thread",
  });
  return {
    name: "workerpool",
    argument: (bytes, n) => {
      const expected = checksum(bytes);
      const task = typeof bytes === "string" ? "takeText" : "takeBytes";
      return checkedBurst(n, () => pool.exec(task, [bytes]), (r) => matches(r, expected));
    },
    result: (size, n) => checkedBurst(n, () => pool.exec("makeBytes", [size]), (r) => isResult(r, size)),
    close: async () => void await pool.terminate(),
  };
}

async function poolifier(): Promise<Contender> {
  const { FixedThreadPool } = await import("poolifier");
  const { fileURLToPath } = await import("node:url");
  const pool = new FixedThreadPool(
    WORKERS,
    fileURLToPath(new URL("./peers/payload_poolifier_worker.mjs", import.meta.url).href),
  );
  await new Promise((resolve) => setTimeout(resolve, 200)); // let its workers come up
  return {
    name: "poolifier",
    argument: (bytes, n) => {
      const expected = checksum(bytes);
      const message = typeof bytes === "string" ? { text: bytes } : { bytes };
      return checkedBurst(n, () => pool.execute(message), (r) => matches(r, expected));
    },
    result: (size, n) => checkedBurst(n, () => pool.execute({ size }), (r) => isResult(r, size)),
    close: () => pool.destroy(),
  };
}

/**
 * The bare loop's thread API, the fastest postMessage on each runtime: node:worker_threads on Node, the web
 * Worker on Bun and on Deno. (Deno's node:worker_threads, which filch's workers use there, copied a
 * `Uint8Array` sent to a worker at some 10 MB/s, against 50–1,100 MB/s for its web Worker: a floor built
 * on it would flatter filch. It runs too, as "bare loop, worker_threads", for the record.)
 */
const bareApi: "web" | "worker_threads" = "Deno" in globalThis ? "web" : threadApi;

class Timeout extends Error {}

/** The first line of an error's text. */
function firstLine(error: unknown): string {
  return String(error).split("\n")[0];
}

/** One contender's results in one cell. */
export interface PayloadContenderResult {
  name: string;
  tasksPerSecond: Summary;
  /** Payload megabytes (10^6 bytes) a second: tasks/s × the size. */
  megabytesPerSecond: Summary;
  /** Why it has no numbers here: it failed this cell (the error's first line), or did not start at all. */
  error?: string;
  /** Each round's tasks/s, in the order they ran (NaN for a round it failed). */
  samples?: number[];
}

/** One cell of the payload benchmark: a size and a direction, every contender. */
export interface PayloadBenchRow {
  runtime: string;
  direction: Direction;
  /** The payload's size in bytes. */
  bytes: number;
  /** Tasks per burst. */
  tasks: number;
  rounds: number;
  /** The options filch's pool was created with. */
  filchOptions: PoolOptions;
  contenders: PayloadContenderResult[];
  /** filch's tasks/s ÷ the bare loop's, per round, summarized (absent if either failed the cell). */
  filchOverBare?: RatioSummary;
  /** filch's tasks/s ÷ piscina's, per round, summarized (absent if either failed the cell or did not run). */
  filchOverPiscina?: RatioSummary;
  /** filch with move()'s tasks/s ÷ the bare loop's, per round, summarized (absent if either failed). */
  moveOverBare?: RatioSummary;
}

/** Per-round ratios summarized, with a 95% interval for their median (from 6 rounds; bench/_stats.ts). */
export interface RatioSummary extends Summary {
  interval?: [number, number];
}

/** The per-round ratios `pairs`, summarized with the interval of their median. */
function ratioSummary(pairs: number[]): RatioSummary {
  return { ...summarize(pairs), interval: medianInterval(pairs) };
}

/**
 * Runs every cell on every contender that starts on this runtime, `rounds` times each, interleaved.
 *
 * @param rounds Timed rounds per cell (after one warm-up burst).
 * @param filchOptions The options of filch's pool.
 * @param maxBytes The largest size to run.
 * @param onRow Called with each cell's row as it finishes.
 * @returns One row per cell.
 */
export async function benchPayloads(
  rounds = 3,
  filchOptions: PoolOptions = { workers: WORKERS },
  maxBytes = Infinity,
  onRow: (row: PayloadBenchRow) => void = () => {},
  minBytes = 0,
  only: readonly string[] = [],
  gc = false,
  exact = false,
  warmup?: number,
  text?: "json" | "source",
): Promise<PayloadBenchRow[]> {
  if (gc && collectGarbage === undefined) {
    throw new Error("Cannot collect garbage before each burst as this runtime offers no way to: drop --gc");
  }
  const make: Record<string, () => Contender | Promise<Contender>> = {
    "filch": () => filch(filchOptions),
    "filch, move()": () => filchMove(filchOptions),
    "bare postMessage loop": () => bareLoop(bareApi, "bare postMessage loop"),
    "piscina": () => piscinaLike("piscina"),
    "tinypool": () => piscinaLike("tinypool"),
    "workerpool": workerpool,
    "poolifier": poolifier,
  };
  let makers = CONTENDERS.map((name) => [name, make[name]] as [string, () => Contender | Promise<Contender>]);
  // Deno's node:worker_threads copies bytes at 5 to 14 MB/s: a row of its own only when asked (it took
  // most of a 9-minute run).
  const extraBare = (globalThis as { process?: { argv: string[] } }).process?.argv.includes("--worker-threads-bare");
  if (bareApi !== threadApi && extraBare === true) {
    makers.splice(2, 0, [`bare loop, ${threadApi}`, () => bareLoop(threadApi, `bare loop, ${threadApi}`)]);
  }
  if (only.length > 0) {
    makers = makers.filter(([name]) => only.some((prefix) => exact ? name === prefix : name.startsWith(prefix)));
  }
  if (text !== undefined) makers = makers.filter(([name]) => name !== "filch, move()");
  const contenders: Contender[] = [];
  const skipped = new Map<string, string>();
  const small = new Uint8Array(KiB).fill(0x5a);
  for (const [name, make] of makers) {
    try {
      console.error(`starting ${name} …`);
      // Some peers never come up on Deno or Bun (their workers hang at start): give each 10 s.
      const c = await withTimeout(
        (async () => {
          const c = await make();
          await c.argument(small, 200);
          await c.result(KiB, 200);
          return c;
        })(),
        10_000,
        `${name} did not start and finish a warm-up within 10 s`,
      );
      contenders.push(c);
    } catch (error) {
      skipped.set(name, firstLine(error));
      console.error(`SKIPPED ${name}: ${firstLine(error)}`);
    }
  }
  const dropped = new Map<Contender, string>();
  const rows: PayloadBenchRow[] = [];
  const empty = summarize([NaN]);
  for (const cell of CELLS.filter((c) => c.bytes <= maxBytes && c.bytes >= minBytes)) {
    // Non-zero bytes, made once per size and reused by every argument burst.
    const bytes = new Uint8Array(cell.bytes);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i % 251) + 1;
    const payload = text === undefined ? bytes : makeText(text, cell.bytes);
    for (const direction of (text === undefined ? ["argument", "result"] : ["argument"]) as Direction[]) {
      const burst = (c: Contender, n: number) =>
        direction === "argument" ? c.argument(payload, n) : c.result(cell.bytes, n);
      const failed = new Map<Contender, string>();
      /** Runs one burst of `c`, bounded; records a failure (a timeout drops `c` for good). */
      const attempt = async (c: Contender, n: number): Promise<number | undefined> => {
        try {
          return await withTimeout(burst(c, n), BURST_TIMEOUT_MS, `${c.name} took over ${BURST_TIMEOUT_MS} ms`);
        } catch (error) {
          failed.set(c, firstLine(error));
          if (error instanceof Timeout) dropped.set(c, `dropped after an earlier burst: ${firstLine(error)}`);
          console.error(`FAILED ${c.name}, ${direction} ${label(cell.bytes)}: ${firstLine(error)}`);
          return undefined;
        }
      };
      const live = contenders.filter((c) => !dropped.has(c));
      for (const c of dropped.keys()) failed.set(c, dropped.get(c)!);
      console.error(`${direction} ${label(cell.bytes)} × ${cell.tasks}: warm-up`);
      for (const c of live) {
        if (warmup === undefined) await attempt(c, Math.ceil(cell.tasks / 8));
        else for (let w = 0; w < warmup && !failed.has(c); w++) await attempt(c, cell.tasks);
      }
      const ms = new Map<Contender, number[]>(contenders.map((c) => [c, new Array<number>(rounds).fill(NaN)]));
      for (let r = 0; r < rounds; r++) {
        for (let k = 0; k < live.length; k++) {
          const c = live[(k + r) % live.length]; // rotate the order each round
          if (failed.has(c)) continue;
          console.error(`${direction} ${label(cell.bytes)}, round ${r}: ${c.name}`);
          if (gc) collectGarbage!();
          ms.get(c)![r] = (await attempt(c, cell.tasks)) ?? NaN;
        }
      }
      const results: PayloadContenderResult[] = contenders.map((c) => {
        const error = failed.get(c);
        if (error !== undefined) return { name: c.name, tasksPerSecond: empty, megabytesPerSecond: empty, error };
        const rates = ms.get(c)!.map((t) => cell.tasks / t * 1000);
        return {
          name: c.name,
          tasksPerSecond: summarize(rates),
          megabytesPerSecond: summarize(rates.map((rate) => rate * cell.bytes / 1e6)),
          samples: rates,
        };
      });
      for (const [name, error] of skipped) {
        results.push({ name, tasksPerSecond: empty, megabytesPerSecond: empty, error: `did not start: ${error}` });
      }
      /** `of`'s rate ÷ `name`'s, round by round, summarized; undefined if either has no numbers. */
      const ratio = (name: string, of = "filch"): RatioSummary | undefined => {
        const f = contenders.find((c) => c.name === of);
        const o = contenders.find((c) => c.name === name);
        if (f === undefined || o === undefined || failed.has(f) || failed.has(o)) return undefined;
        const fm = ms.get(f)!;
        const om = ms.get(o)!;
        return ratioSummary(fm.map((t, r) => om[r] / t));
      };
      const row: PayloadBenchRow = {
        runtime: runtimeName(),
        direction,
        bytes: cell.bytes,
        tasks: cell.tasks,
        rounds,
        filchOptions,
        contenders: results,
        ...goalRatios(ratio),
      };
      rows.push(row);
      onRow(row);
    }
  }
  for (const c of contenders) {
    // A peer's shutdown has been seen to hang with no handle left (Node then exits with code 13): bound it.
    console.error(`closing ${c.name} …`);
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      c.close().catch(() => {}),
      new Promise<void>((resolve) => (timer = setTimeout(resolve, 3000))),
    ]);
    clearTimeout(timer);
  }
  return rows;
}

/**
 * Runs every contender in processes of its own (see the module doc, `--processes`): `passes` passes, each
 * running one process per contender in turn (the order rotated each pass), each process every cell for
 * its contender, `rounds ÷ passes` rounds (rounded up).
 *
 * @param rounds Rounds per cell and contender in all.
 * @param passes Processes per contender.
 * @param childArgs Arguments every process gets besides its rounds and contender (`--gc`, `--quick`, …).
 * @param onRow Called with each cell's row once every pass has run.
 * @returns One row per cell.
 */
export function benchPayloadsInProcesses(
  rounds: number,
  passes: number,
  childArgs: readonly string[],
  onRow: (row: PayloadBenchRow) => void = () => {},
): PayloadBenchRow[] {
  const extraBare = childArgs.includes("--worker-threads-bare") && bareApi !== threadApi;
  const names = extraBare ? [...CONTENDERS.slice(0, 3), `bare loop, ${threadApi}`, ...CONTENDERS.slice(3)] : CONTENDERS;
  const only = childArgs.find((a) => a.startsWith("--only="))?.slice(7).split(",").filter((x) => x !== "") ?? [];
  const chosen = only.length > 0 ? names.filter((name) => only.some((prefix) => name.startsWith(prefix))) : names;
  const passOn = childArgs.filter((a) => !a.startsWith("--only=") && a !== "--json");
  const perPass = Math.ceil(rounds / passes);
  /** Each cell's row as the first process that ran it gave it, then every contender's samples, by pass. */
  const cells = new Map<string, PayloadBenchRow>();
  const samples = new Map<string, Map<string, number[][]>>();
  const errors = new Map<string, Map<string, string>>();
  /** A process that printed no row (it crashed, or hung): its contender's samples miss that pass. */
  const processErrors = new Map<string, string>();
  const argsOf = (name: string) => [String(perPass), `--contender=${name}`, "--json", ...passOn];
  // A process's cells take seconds to minutes (Deno's 16 MiB cells the longest); 20 minutes means it hung.
  runApart<PayloadBenchRow>(fileURLToPath(import.meta.url), chosen, passes, argsOf, 1_200_000, (run) => {
    const { name, pass } = run;
    if (run.error !== undefined) {
      console.error(`FAILED ${name}, pass ${pass}: ${run.error}`);
      processErrors.set(name, run.error);
      return;
    }
    for (const row of run.rows) {
      const key = `${row.direction} ${row.bytes}`;
      if (!cells.has(key)) {
        cells.set(key, row);
        samples.set(key, new Map());
        errors.set(key, new Map());
      }
      const result = row.contenders.find((r) => r.name === name);
      if (result?.error !== undefined || result?.samples === undefined) {
        errors.get(key)!.set(name, result?.error ?? "no result");
        continue;
      }
      const byPass = samples.get(key)!.get(name) ?? [];
      byPass[pass] = result.samples;
      samples.get(key)!.set(name, byPass);
    }
  });
  const rows: PayloadBenchRow[] = [];
  for (const [key, first] of cells) {
    const got = samples.get(key)!;
    const failed = errors.get(key)!;
    const empty = summarize([NaN]);
    const results: PayloadContenderResult[] = chosen.map((name) => {
      const flat = (got.get(name) ?? []).flat();
      const error = failed.get(name) ?? (flat.length === 0 ? processErrors.get(name) ?? "no result" : undefined);
      if (error !== undefined) return { name, tasksPerSecond: empty, megabytesPerSecond: empty, error };
      return {
        name,
        tasksPerSecond: summarize(flat),
        megabytesPerSecond: summarize(flat.map((rate) => rate * first.bytes / 1e6)),
        samples: flat,
      };
    });
    /** `of`'s rate ÷ `name`'s, the k-th round of a pass against the k-th of the same pass, summarized. */
    const ratio = (name: string, of = "filch"): RatioSummary | undefined => {
      const a = got.get(of);
      const b = got.get(name);
      if (a === undefined || b === undefined || failed.has(of) || failed.has(name)) return undefined;
      const pairs: number[] = [];
      for (let pass = 0; pass < passes; pass++) {
        const x = a[pass] ?? [];
        const y = b[pass] ?? [];
        for (let k = 0; k < Math.min(x.length, y.length); k++) {
          if (Number.isFinite(x[k]) && Number.isFinite(y[k])) pairs.push(x[k] / y[k]);
        }
      }
      return pairs.length === 0 ? undefined : ratioSummary(pairs);
    };
    const row: PayloadBenchRow = {
      ...first,
      rounds: perPass * passes,
      contenders: results,
      ...goalRatios(ratio),
    };
    rows.push(row);
    onRow(row);
  }
  return rows;
}

/** A row's three ratios, from `ratio(name, of)`: `of`'s rate ÷ `name`'s (`of` is filch by default). */
function goalRatios(
  ratio: (name: string, of?: string) => RatioSummary | undefined,
): Pick<PayloadBenchRow, "filchOverBare" | "filchOverPiscina" | "moveOverBare"> {
  return {
    filchOverBare: ratio("bare postMessage loop"),
    filchOverPiscina: ratio("piscina"),
    moveOverBare: ratio("bare postMessage loop", "filch, move()"),
  };
}

/** A size as 64 B, 1 KiB, 64 KiB, 1 MiB, 16 MiB. */
function label(bytes: number): string {
  if (bytes >= MiB) return `${bytes / MiB} MiB`;
  if (bytes >= KiB) return `${bytes / KiB} KiB`;
  return `${bytes} B`;
}

/** A number with thousands separators and `digits` decimals. */
function num(x: number, digits = 0): string {
  return x.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** A summary as `median (min–max)`, with thousands separators. */
function range(s: Summary, digits = 0): string {
  return `${num(s.median, digits)} (${num(s.min, digits)}–${num(s.max, digits)})`;
}

/** A ratio, the 95% interval of its median (from 6 rounds), and whether its median meets `goal`. */
function goal(s: RatioSummary | undefined, at: number): string {
  if (s === undefined) return "n/a";
  const interval = s.interval === undefined ? "" : ` [95%: ${s.interval[0].toFixed(2)}–${s.interval[1].toFixed(2)}]`;
  return `${format(s, 2)}${interval} ${s.median >= at ? "✓" : "✗"}`;
}

function printRow(row: PayloadBenchRow): void {
  const moved = row.bytes * row.tasks / MiB;
  console.log(`\n${row.direction} ${label(row.bytes)} × ${row.tasks} tasks (${num(moved, moved < 10 ? 2 : 0)} MiB)`);
  for (const c of row.contenders) {
    if (c.error?.startsWith("did not start")) console.log(`  ${c.name.padEnd(26)} SKIPPED: ${c.error}`);
    else if (c.error !== undefined) console.log(`  ${c.name.padEnd(26)} FAILED: ${c.error}`);
    else {
      console.log(
        `  ${c.name.padEnd(26)} ${range(c.tasksPerSecond, c.tasksPerSecond.median < 100 ? 1 : 0).padEnd(30)} tasks/s  ${
          range(c.megabytesPerSecond, 1).padEnd(30)
        } MB/s`,
      );
    }
  }
  console.log(
    `  filch ÷ bare loop ${goal(row.filchOverBare, 1)} (goal ≥ 1)   filch ÷ piscina ${
      goal(row.filchOverPiscina, 2)
    } (goal ≥ 2)   filch, move() ÷ bare loop ${goal(row.moveOverBare, 1)}`,
  );
}

const argv = (globalThis as { process?: { argv: string[] } }).process?.argv ?? [];
if (import.meta.main ?? argv[1]?.endsWith("payload_bench.ts")) {
  const args = argv.slice(2);
  const rounds = Number(args.find((a) => /^\d+$/.test(a)) ?? 3);
  const json = args.includes("--json");
  const blocks = args.find((a) => a.startsWith("--blocks="));
  const filchOptions: PoolOptions = { workers: WORKERS, ...(blocks ? { blocks: Number(blocks.slice(9)) } : {}) };
  const maxBytes = args.includes("--quick") ? MiB : Infinity;
  const minBytes = Number(args.find((a) => a.startsWith("--from="))?.slice(7) ?? 0);
  const only = args.find((a) => a.startsWith("--only="))?.slice(7).split(",").filter((s) => s !== "") ?? [];
  // One contender by its exact name: a process of `--processes` runs one.
  const contender = args.find((a) => a.startsWith("--contender="))?.slice(12);
  const processes = Number(args.find((a) => a.startsWith("--processes="))?.slice(12) ?? 0);
  const warmupArg = args.find((a) => a.startsWith("--warmup="))?.slice(9);
  const warmup = warmupArg === undefined ? undefined : Number(warmupArg);
  const textArg = args.find((a) => a.startsWith("--text="))?.slice(7);
  if (textArg !== undefined && textArg !== "json" && textArg !== "source") {
    throw new Error(`Cannot run --text=${textArg} as the kinds are json and source: pass --text=json or --text=source`);
  }
  const text = textArg as "json" | "source" | undefined;
  const log = json ? () => {} : console.log;
  log(
    `Payload benchmark, ${runtimeName()}, ${new Date().toISOString().slice(0, 10)}, ${cpus().length} × ${
      cpus()[0]?.model ?? "cpu"
    }`,
  );
  log(
    `${WORKERS} workers per pool, ${rounds} rounds, ${
      processes > 0 ? `each contender in ${processes} processes of its own` : "contenders interleaved"
    }; median (min–max); MB = 10^6 bytes ` +
      `of payload; nothing transferred (structured clone)${
        text === undefined ? "" : `; arguments are ${text} text (strings), results a small object`
      }`,
  );
  log(
    `filch options: ${JSON.stringify(filchOptions)}; bare loop threads: ${bareApi}; garbage collected before ` +
      `each burst: ${args.includes("--gc") ? "yes" : "no"}`,
  );
  const onRow = (row: PayloadBenchRow) => {
    if (json) console.log(JSON.stringify(row));
    else printRow(row);
  };
  const rows = processes > 0
    ? benchPayloadsInProcesses(
      rounds,
      processes,
      args.filter((a) => !/^\d+$/.test(a) && !a.startsWith("--processes=")),
      onRow,
    )
    : await benchPayloads(
      rounds,
      filchOptions,
      maxBytes,
      onRow,
      minBytes,
      contender === undefined ? only : [contender],
      args.includes("--gc"),
      contender !== undefined,
      warmup,
      text,
    );
  if (!json) {
    console.log(
      "\n| direction | size | tasks | filch, MB/s | filch, move(), MB/s | bare loop, MB/s | piscina, MB/s | filch ÷ bare (≥ 1) | filch ÷ piscina (≥ 2) | move() ÷ bare |",
    );
    console.log("|---|---|---|---|---|---|---|---|---|---|");
    for (const row of rows) {
      const mbs = (name: string) => {
        const c = row.contenders.find((c) => c.name === name);
        return c === undefined ? "n/a" : c.error !== undefined ? "failed" : range(c.megabytesPerSecond, 1);
      };
      console.log(
        `| ${row.direction} | ${label(row.bytes)} | ${row.tasks} | ${mbs("filch")} | ${mbs("filch, move()")} | ${
          mbs("bare postMessage loop")
        } | ${mbs("piscina")} | ${goal(row.filchOverBare, 1)} | ${goal(row.filchOverPiscina, 2)} | ${
          goal(row.moveOverBare, 1)
        } |`,
      );
    }
  }
  // Stray handles of peers must not keep the process up.
  (globalThis as { process?: { exit(code: number): void } }).process?.exit(0);
}
