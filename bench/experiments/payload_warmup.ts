/**
 * How a fresh pool warms up on large payloads, burst by burst: the MB/s of each burst, and each thread's
 * CPU time and page faults in it (issue 31: Bun's 64 KiB results ran at 290–620 MB/s for the first bursts of
 * a process and at 1,400–3,300 MB/s later, which a benchmark with a few bursts of warm-up measures half
 * way).
 *
 * A burst is 32 MiB of payload: 512 tasks of 64 KiB by default, submitted at once and awaited. "result"
 * runs `makeBytes(size)` (each task returns a fresh Uint8Array of the size), "argument" runs
 * `takeBytes(bytes)` with one Uint8Array of the size, made once. Per burst it prints the wall time, MB/s,
 * and for each thread of the process that used over 1 ms of CPU in it: its name (the main thread is MAIN,
 * the pool's workers `filch-0`, `filch-1` on Node and Bun, `worker-1`, `worker-2` on Deno; the rest are the runtime's: compiler, collector, allocator
 * threads), its CPU ms, and its minor page faults (a fresh page costs one; about 7 µs each on this VM).
 * Threads are read from Linux's `/proc/self/task`; elsewhere the benchmark stops with a named error.
 *
 * Run: `bun bench/experiments/payload_warmup.ts [bursts] [--argument] [--size=BYTES]` (default 12 bursts, results of
 * 64 KiB); `node …` and `deno run -A …` as well.
 *
 * @module
 */
import { readdirSync, readFileSync } from "node:fs";
import process from "node:process";
import { Pool } from "../../lib/pool.ts";
import { runtimeName } from "../_stats.ts";
import type * as tasks from "../tasks.ts";

const args = process.argv.slice(2);
const bursts = Number(args.find((a) => /^\d+$/.test(a)) ?? 12);
const size = Number(args.find((a) => a.startsWith("--size="))?.slice(7) ?? 65536);
const argument = args.includes("--argument");
const count = Math.max(1, Math.floor(32 * 2 ** 20 / size));

/** Per thread id: [CPU ns, minor page faults, name]. */
function threads(): Map<string, [number, number, string]> {
  let ids: string[];
  try {
    ids = readdirSync("/proc/self/task");
  } catch (error) {
    throw new Error(`Cannot read the process's threads as /proc/self/task is unreadable (${error}): run on Linux`);
  }
  const out = new Map<string, [number, number, string]>();
  for (const id of ids) {
    try {
      const cpu = Number(readFileSync(`/proc/self/task/${id}/schedstat`, "utf8").split(" ")[0]);
      const stat = readFileSync(`/proc/self/task/${id}/stat`, "utf8");
      // Fields after the name's closing parenthesis: state is the first, minflt the eighth.
      const faults = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[7]);
      const name = id === String(process.pid) ? "MAIN" : readFileSync(`/proc/self/task/${id}/comm`, "utf8").trim();
      out.set(id, [cpu, faults, name]);
    } catch {
      // The thread ended between the listing and the read: it is not in this burst's figures.
    }
  }
  return out;
}

const pool = await Pool.create<typeof tasks>(new URL("../tasks.ts", import.meta.url), { workers: 2 });
const bytes = new Uint8Array(size).fill(7);
console.log(
  `payload_warmup on ${runtimeName()}: ${
    argument ? "arguments" : "results"
  } of ${size} bytes, ${count} tasks a burst, a fresh pool of 2 workers\n`,
);
console.log("| burst | wall ms | MB/s | threads: CPU ms / minor page faults |");
console.log("|---|---|---|---|");
for (let b = 1; b <= bursts; b++) {
  const before = threads();
  const start = performance.now();
  const all = new Array<Promise<unknown>>(count);
  for (let i = 0; i < count; i++) all[i] = argument ? pool.run("takeBytes", bytes) : pool.run("makeBytes", size);
  const results = await Promise.all(all);
  const wall = performance.now() - start;
  const after = threads();
  for (const r of results) {
    // takeBytes returns the length plus the first and last byte (7 each); makeBytes a fresh array.
    const ok = argument ? r === size + 14 : r instanceof Uint8Array && r.length === size;
    if (!ok) throw new Error(`Cannot trust burst ${b} as a task returned ${String(r).slice(0, 60)}`);
  }
  const parts: string[] = [];
  for (const [id, [cpu, faults, name]] of after) {
    const [cpu0, faults0] = before.get(id) ?? [0, 0];
    const ms = (cpu - cpu0) / 1e6;
    if (ms > 1) parts.push(`${name} ${ms.toFixed(0)} / ${faults - faults0}`);
  }
  console.log(`| ${b} | ${wall.toFixed(0)} | ${(count * size / 1e3 / wall).toFixed(0)} | ${parts.join(", ")} |`);
}
await pool.close();
