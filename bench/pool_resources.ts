/**
 * What an open pool costs when it does nothing, and what it holds in memory: CPU used by an idle pool of
 * 2 workers over 5 s (goal: under 1% of a core), the shared buffer's size with the default options and per
 * task in flight, and the process's resident memory with and without the pool.
 *
 * Run: `node bench/pool_resources.ts`, `deno run -A bench/pool_resources.ts`, `bun bench/pool_resources.ts`.
 */
import { Pool } from "../lib/pool.ts";
import { runtimeName } from "./_stats.ts";
import type * as tasks from "./tasks.ts";

const proc = (globalThis as unknown as {
  process: { cpuUsage(): { user: number; system: number }; memoryUsage(): { rss: number } };
}).process;

const rssBefore = proc.memoryUsage().rss;
const pool = await Pool.create<typeof tasks>(new URL("./tasks.ts", import.meta.url), { workers: 2 });
// Warm up, then let the workers pass their spin and doze phases into sleep.
await Promise.all(Array.from({ length: 10_000 }, (_, i) => pool.run("add", i, 1)));
await new Promise((resolve) => setTimeout(resolve, 200));
const rssWithPool = proc.memoryUsage().rss;
const cpu0 = proc.cpuUsage();
const t0 = performance.now();
await new Promise((resolve) => setTimeout(resolve, 5000));
const cpu1 = proc.cpuUsage();
const wallMs = performance.now() - t0;
const cpuMs = (cpu1.user - cpu0.user + cpu1.system - cpu0.system) / 1000;
const memory = pool.memory;
await pool.close();
console.log(JSON.stringify({
  runtime: runtimeName(),
  idleCpuPercentOfOneCore: (cpuMs / wallMs) * 100,
  idleWallMs: wallMs,
  sharedBytes: memory.sharedBytes,
  sharedBytesPerTask: memory.bytesPerTask,
  taskCapacity: memory.taskCapacity,
  rssBeforeMiB: rssBefore / 2 ** 20,
  rssWithPoolMiB: rssWithPool / 2 ** 20,
}));
