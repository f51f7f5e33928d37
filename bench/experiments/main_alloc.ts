/**
 * What the main thread allocates per tiny task (garbage included), by function: V8's sampling heap profiler,
 * asked to keep the objects that minor and major collections freed, over bursts of 100k `add` tasks on 2
 * workers (`run` + `Promise.all`, then `runMany`), after two untimed bursts.
 *
 * Why: a burst of tiny tasks is bounded by the main thread, and on V8 its rounds swing with the heap: every
 * task's promise, resolving functions and entry are alive until the burst ends, so the collector promotes
 * them, and the old generation grows (fresh pages, a fault per 4 KiB on this project's VM) until it is
 * big enough. Fewer bytes a task mean fewer of both.
 *
 * Run: `node bench/experiments/main_alloc.ts` (Node only: Deno and Bun have no `HeapProfiler.startSampling` through
 * `node:inspector`; it says SKIPPED there). `--json` prints one line per form.
 */
import { Pool } from "../../lib/pool.ts";
import { runtimeName } from "../_stats.ts";
import type * as tasks from "../tasks.ts";

const TASKS = 100_000;
const ROUNDS = 4;
/** Bytes between samples: small enough that a 100-byte object per task is sampled thousands of times. */
const SAMPLING_INTERVAL = 1024;

interface ProfileNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: ProfileNode[];
}

interface InspectorSession {
  connect(): void;
  post(method: string, params?: object): Promise<unknown>;
  disconnect(): void;
}

const isNode = typeof (globalThis as { process?: { versions?: { node?: string } } }).process?.versions?.node ===
    "string" && !("Deno" in globalThis) && !("Bun" in globalThis);

if (!isNode) {
  console.log(
    `SKIPPED main_alloc on ${runtimeName()}: it needs V8's sampling heap profiler through node:inspector, which only Node offers`,
  );
} else {
  const { Session } = await import("node:inspector/promises") as unknown as { Session: new () => InspectorSession };
  const json = (globalThis as unknown as { process: { argv: string[] } }).process.argv.includes("--json");
  const pool = await Pool.create<typeof tasks>(new URL("../tasks.ts", import.meta.url), { workers: 2 });
  const args: [number, number][] = [];
  for (let i = 0; i < TASKS; i++) args.push([i, 1]);
  const forms: [string, () => Promise<void>][] = [
    ["run + Promise.all", async () => {
      const all = new Array<Promise<number>>(TASKS);
      for (let i = 0; i < TASKS; i++) all[i] = pool.run("add", i, 1);
      check(await Promise.all(all));
    }],
    ["runMany", async () => check(await pool.runMany("add", args))],
  ];
  for (const [name, burst] of forms) {
    await burst();
    await burst();
    const session = new Session();
    session.connect();
    await session.post("HeapProfiler.enable");
    await session.post("HeapProfiler.startSampling", {
      samplingInterval: SAMPLING_INTERVAL,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    });
    for (let r = 0; r < ROUNDS; r++) await burst();
    const { profile } = await session.post("HeapProfiler.stopSampling") as { profile: { head: ProfileNode } };
    session.disconnect();
    const byFunction = new Map<string, number>();
    let total = 0;
    const walk = (node: ProfileNode) => {
      const frame = node.callFrame;
      const where = `${frame.functionName || "(anonymous)"} ${frame.url.split("/").pop()}:${frame.lineNumber + 1}`;
      total += node.selfSize;
      byFunction.set(where, (byFunction.get(where) ?? 0) + node.selfSize);
      for (const child of node.children) walk(child);
    };
    walk(profile.head);
    const perTask = (bytes: number) => bytes / (TASKS * ROUNDS);
    const top = [...byFunction].sort((a, b) => b[1] - a[1]).filter(([, bytes]) => perTask(bytes) >= 1);
    if (json) {
      console.log(JSON.stringify({
        runtime: runtimeName(),
        form: name,
        bytesPerTask: Math.round(perTask(total)),
        byFunction: Object.fromEntries(top.map(([where, bytes]) => [where, Math.round(perTask(bytes))])),
      }));
    } else {
      console.log(
        `${runtimeName()}  ${name}: ${perTask(total).toFixed(0)} bytes allocated per task on the main thread`,
      );
      for (const [where, bytes] of top) console.log(`  ${perTask(bytes).toFixed(0).padStart(5)}  ${where}`);
    }
  }
  await pool.close();
}

function check(results: number[]): void {
  for (let i = 0; i < TASKS; i++) {
    if (results[i] !== i + 1) throw new Error(`Cannot trust the benchmark as result ${i} was ${results[i]}`);
  }
}
