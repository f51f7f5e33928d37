/**
 * What a lazy join saves and what it could cost: the shipped worker, whose `join` skips the deque when no
 * thief could want `b` (lib/worker/fork_join.ts `keepsInline`), against an eager copy of it that forks every `b` (a
 * patch of the shipped file, written to a temporary directory: `keepsInline` answers false), side by side
 * in one process, rounds interleaved, alternating which goes first:
 * 1. ns per join when nothing is stolen, `fib(25)` with a join at every level against the plain recursive
 *    fib, both timed on the worker: on a pool of 1 worker, and on a pool of 2 whose other worker is held
 *    busy (blocked in a task) so that it cannot steal;
 * 2. the four demos of `examples/` on 2 workers: time per run, lazy ÷ eager (below 1: lazy is faster),
 *    with the tasks stolen per run on each.
 *
 * In part 1 a third contender, a copy that never forks (`keepsInline` skips its deque check, so every b whose
 * arguments allow it runs inline), shows what the rare forks of the lazy join cost apart from their own
 * work: on Bun, the compiles of `join` they cause (its DFG compiles in the worker, from `bun:jsc`, are
 * printed per contender).
 *
 * With `--hog`, a process that spins on one core runs beside the demos: a worker then loses its core now
 * and then, and what it kept inline cannot be stolen meanwhile (where a lazy join could lose to an eager one).
 *
 * Run: `node bench/lazy_join.ts`, `deno run -A bench/lazy_join.ts`, `bun bench/lazy_join.ts` (a number sets
 * the rounds, default 7; `--overhead` measures the join overhead only).
 */
import { spawn } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { fileURLToPath, pathToFileURL } from "node:url";
import { mem } from "../lib/protocol/atomics.ts";
import { Pool } from "../lib/pool.ts";
import { demos } from "./_demos.ts";
import { format, intervalText, runtimeName, summarize } from "./_stats.ts";
import * as tasks from "./forkjoin_tasks.ts";

const argv = process.argv;
const rounds = Number(argv.slice(2).find((a) => /^\d+$/.test(a)) ?? 7);
const hog = argv.includes("--hog");
const overheadOnly = argv.includes("--overhead");
const url = new URL("./forkjoin_tasks.ts", import.meta.url);
type Tasks = typeof tasks;

/** The first line of `keepsInline`, which the two copies patch. */
const DEQUE_CHECK = "    if (this.workers !== 1 && this.dequeDepth() < LAZY_DEQUE_DEPTH) return false;";

/**
 * Writes lib/ into `dir` with `keepsInline`'s deque check replaced by `line`; returns the URL of its
 * pool.ts.
 */
function patchedCopy(dir: string, line: string): string {
  const lib = join(dir, "lib");
  cpSync(fileURLToPath(new URL("../lib", import.meta.url)), lib, { recursive: true });
  const file = join(lib, "worker", "fork_join.ts");
  const source = readFileSync(file, "utf8");
  if (!source.includes(DEQUE_CHECK)) {
    throw new Error(
      "Cannot patch lib/worker/fork_join.ts: the first line of keepsInline changed; update this benchmark",
    );
  }
  writeFileSync(file, source.replace(DEQUE_CHECK, line));
  writeFileSync(join(dir, "package.json"), '{ "type": "module" }\n');
  return pathToFileURL(join(lib, "pool.ts")).href;
}

/** ns per join on `pool`: fib(n) with joins against plain fib, both timed on the worker that runs them. */
async function perJoin(pool: Pool<Tasks>, n: number): Promise<number> {
  const [plain, plainValue] = await pool.run("timePlainFib", n);
  const [joined, joinedValue] = await pool.run("timeJoinFib", n);
  if (plainValue !== joinedValue) throw new Error(`Cannot trust the benchmark as fib(${n}) gave two values`);
  return ((joined - plain) / tasks.fibJoins(n, 1)) * 1e6;
}

/** A pool of 2 with one worker blocked in `holdWorker` (it cannot steal), and its release and close. */
async function heldPool(create: typeof Pool.create): Promise<{ pool: Pool<Tasks>; release(): Promise<void> }> {
  const pool = await create<Tasks>(url, { workers: 2 });
  const flag = new Int32Array(new SharedArrayBuffer(8));
  const held = pool.run("holdWorker", flag);
  // The holder sets flag[1] once it runs; from then on every task goes to the other worker.
  const until = performance.now() + 10_000;
  while (mem.load(flag, 1) === 0) {
    if (performance.now() > until) throw new Error("Cannot hold a worker: holdWorker did not start in 10 s");
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  return {
    pool,
    async release() {
      mem.store(flag, 0, 1);
      mem.notify(flag, 0);
      await held;
      await pool.close();
    },
  };
}

const dir = mkdtempSync(join(tmpdir(), "filch-lazy-join-"));
try {
  // Every b forked: keepsInline answers false.
  const eagerUrl = patchedCopy(join(dir, "eager"), "    if (LAZY_DEQUE_DEPTH > 0) return false;");
  // No b forked whose arguments allow it to run inline: the deque is not read.
  const inlineUrl = patchedCopy(join(dir, "inline"), "    // (patched: the deque is not read)");
  const { Pool: EagerPool } = await import(eagerUrl) as { Pool: typeof Pool };
  const { Pool: InlinePool } = await import(inlineUrl) as { Pool: typeof Pool };
  const n = 25;
  console.log(
    `${runtimeName()}, ${rounds} rounds, lazy (shipped), never forking and eager (every b forked) side by side`,
  );
  console.log(`\nns per join when nothing is stolen, fib(${n}), ${tasks.fibJoins(n, 1)} joins: median (range)\n`);
  const bun = "Bun" in globalThis;
  const compiles = bun ? " DFG compiles of join (lazy, never forking, eager) |" : "";
  console.log(`| pool | lazy | lazy: 95% interval of the median | never forking | eager |${compiles}`);
  console.log(`|---|---|---|---|---|${bun ? "---|" : ""}`);
  for (const workers of [1, 2]) {
    const open = async (create: typeof Pool.create) => {
      if (workers === 2) return await heldPool(create);
      const pool = await create<Tasks>(url, { workers: 1 });
      return { pool, release: () => pool.close() };
    };
    // In this order in the table: lazy, never forking, eager.
    const pools = [
      await open(Pool.create.bind(Pool)),
      await open(InlinePool.create.bind(InlinePool)),
      await open(EagerPool.create.bind(EagerPool)),
    ];
    try {
      for (let i = 0; i < 3; i++) for (const p of pools) await perJoin(p.pool, n);
      const times: number[][] = pools.map(() => []);
      // Each round runs the three in a rotated order, so that none always follows the same one.
      for (let r = 0; r < rounds * 2; r++) {
        for (let k = 0; k < pools.length; k++) {
          const c = (r + k) % pools.length;
          times[c].push(await perJoin(pools[c].pool, n));
        }
      }
      const what = workers === 1 ? "1 worker" : "2 workers, the other held busy";
      const [lazyNs, neverNs, eagerNs] = times;
      const cells = [
        format(summarize(lazyNs), 0),
        intervalText(lazyNs, 0),
        format(summarize(neverNs), 0),
        format(summarize(eagerNs), 0),
      ];
      if (bun) cells.push((await Promise.all(pools.map((p) => p.pool.run("joinCompiles")))).join(", "));
      console.log(`| ${what} | ${cells.join(" | ")} |`);
    } finally {
      for (const p of pools) await p.release();
    }
  }

  if (!overheadOnly) await demosSideBySide(EagerPool);
} finally {
  rmSync(dir, { recursive: true, force: true });
}

/** The demos on a lazy and an eager pool of 2, side by side. */
async function demosSideBySide(EagerPool: typeof Pool): Promise<void> {
  // A spinning process of this same runtime (deno eval, or -e for Node and Bun), killed at the end.
  const spinner = hog
    ? spawn(process.execPath, ["Deno" in globalThis ? "eval" : "-e", "for (;;);"], { stdio: "ignore" })
    : undefined;
  const beside = hog ? ", beside a process spinning on one core" : "";
  console.log(`\nThe demos on 2 workers${beside}: ms per run, median (range), and lazy ÷ eager per round\n`);
  console.log("| demo | lazy, ms | eager, ms | lazy ÷ eager | tasks stolen a run: lazy | eager |");
  console.log("|---|---|---|---|---|---|");
  const lazy = await Pool.create<Tasks>(url, { workers: 2 });
  const eager = await EagerPool.create<Tasks>(url, { workers: 2 });
  try {
    for (const demo of demos()) {
      await demo.warm(lazy);
      await demo.warm(eager);
      demo.prepare?.("sequential");
      const expected = demo.sequential();
      const timed = async (pool: Pool<Tasks>, stolen: number[]): Promise<number> => {
        demo.prepare?.("pool");
        const before = pool.stats().workers.reduce((s, w) => s + w.stolen, 0);
        const start = performance.now();
        const got = await demo.parallel(pool);
        const ms = performance.now() - start;
        demo.check(expected, got);
        stolen.push(pool.stats().workers.reduce((s, w) => s + w.stolen, 0) - before);
        return ms;
      };
      const unused: number[] = [];
      // Full-size warm-up of both, untimed (each worker's JIT reaches its top tier).
      for (let i = 0; i < 3; i++) {
        await timed(lazy, unused);
        await timed(eager, unused);
      }
      const l: number[] = [];
      const e: number[] = [];
      const lStolen: number[] = [];
      const eStolen: number[] = [];
      for (let r = 0; r < rounds; r++) {
        if (r % 2 === 0) {
          l.push(await timed(lazy, lStolen));
          e.push(await timed(eager, eStolen));
        } else {
          e.push(await timed(eager, eStolen));
          l.push(await timed(lazy, lStolen));
        }
      }
      const ratio = summarize(l.map((v, i) => v / e[i]));
      console.log(
        `| ${demo.name} | ${format(summarize(l))} | ${format(summarize(e))} | ${format(ratio, 2)} | ${
          format(summarize(lStolen), 0)
        } | ${format(summarize(eStolen), 0)} |`,
      );
    }
  } finally {
    spinner?.kill();
    await lazy.close();
    await eager.close();
  }
}
