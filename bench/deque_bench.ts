/**
 * Deque micro-benchmark: ns per push+pop pair, per uncontended steal, and per stealHalf of 64, for the
 * shipped deque (every access through the `mem` facade) and for the same source with each `mem.` call
 * rewritten to a direct `Atomics.` call, side by side in one run, alternating, several runs each.
 *
 * The direct variant is generated at run time from lib/protocol/deque.ts (text replacement into a temp file), so
 * the two differ in nothing but the indirection.
 *
 * Run: `deno run -A bench/deque_bench.ts`, `bun bench/deque_bench.ts`, `node bench/deque_bench.ts`.
 * Prints one JSON line per measurement when given `--json`, else a table.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import * as facade from "../lib/protocol/deque.ts";
import { dequeRegionBytes } from "../lib/protocol/layout.ts";
import { format, runtimeName, summarize, type Summary } from "./_stats.ts";

type DequeModule = typeof facade;

/** Writes lib/protocol/deque.ts with `mem.x(` → `Atomics.x(` to a temp dir and imports it. */
async function loadDirectVariant(): Promise<DequeModule> {
  const source = readFileSync(fileURLToPath(new URL("../lib/protocol/deque.ts", import.meta.url).href), "utf8");
  const layoutUrl = new URL("../lib/protocol/layout.ts", import.meta.url).href;
  const direct = source
    .replace(/^import \{ mem \} from "\.\/atomics\.ts";$/m, "")
    .replace(/from "\.\/layout\.ts"/, `from "${layoutUrl}"`)
    .replaceAll("mem.", "Atomics.");
  if (direct.includes("mem.") || !direct.includes("Atomics.compareExchange")) {
    throw new Error("Cannot build the direct-Atomics variant: lib/protocol/deque.ts no longer has the expected shape");
  }
  const dir = mkdtempSync(join(tmpdir(), "filch-bench-"));
  const path = join(dir, "deque_direct.ts");
  writeFileSync(path, direct);
  return await import(pathToFileURL(path).href) as DequeModule;
}

function pushPopNs(m: DequeModule, pairs: number): number {
  const region = { buffer: new SharedArrayBuffer(dequeRegionBytes(256)), byteOffset: 0, capacity: 256 };
  m.initDeque(region);
  const owner = new m.Deque(region);
  let sink = 0;
  const start = performance.now();
  for (let i = 0; i < pairs; i++) {
    owner.push(i & 0xffff);
    sink += owner.pop();
  }
  const ns = ((performance.now() - start) * 1e6) / pairs;
  if (sink < 0) throw new Error("unreachable: pop returned EMPTY after a push");
  return ns;
}

function stealNs(m: DequeModule, tasks: number): number {
  const capacity = 2 ** Math.ceil(Math.log2(tasks));
  const region = { buffer: new SharedArrayBuffer(dequeRegionBytes(capacity)), byteOffset: 0, capacity };
  m.initDeque(region);
  const owner = new m.Deque(region);
  for (let i = 0; i < tasks; i++) owner.push(i);
  const thief = new m.Stealer(region);
  let sink = 0;
  const start = performance.now();
  for (let i = 0; i < tasks; i++) sink += thief.steal();
  const ns = ((performance.now() - start) * 1e6) / tasks;
  if (sink !== (tasks * (tasks - 1)) / 2) throw new Error("steal lost or reordered tasks");
  return ns;
}

function stealHalf64Ns(m: DequeModule, victims: number): number {
  const victimBytes = dequeRegionBytes(128);
  const dstCapacity = 2 ** Math.ceil(Math.log2(64 * victims));
  const buffer = new SharedArrayBuffer(victims * victimBytes + dequeRegionBytes(dstCapacity));
  const stealers = [];
  for (let v = 0; v < victims; v++) {
    const region = { buffer, byteOffset: v * victimBytes, capacity: 128 };
    m.initDeque(region);
    const owner = new m.Deque(region);
    for (let i = 0; i < 128; i++) owner.push(i);
    stealers.push(new m.Stealer(region));
  }
  const dstRegion = { buffer, byteOffset: victims * victimBytes, capacity: dstCapacity };
  m.initDeque(dstRegion);
  const dst = new m.Deque(dstRegion);
  let moved = 0;
  const start = performance.now();
  for (let v = 0; v < victims; v++) moved += stealers[v].stealHalfInto(dst);
  const ns = ((performance.now() - start) * 1e6) / victims;
  if (moved !== 64 * victims) throw new Error(`stealHalf of 128 moved ${moved / victims}, not 64`);
  return ns;
}

/** One benchmark's results for both variants. */
export interface DequeBenchRow {
  runtime: string;
  op: string;
  facade: Summary;
  direct: Summary;
}

/**
 * Runs every measurement `runs` times per variant, alternating facade and direct.
 *
 * @param runs Runs per variant (the first warm-up run is discarded).
 * @returns One row per operation.
 */
export async function benchDeque(runs = 7): Promise<DequeBenchRow[]> {
  const direct = await loadDirectVariant();
  const ops: [string, (m: DequeModule) => number][] = [
    ["push+pop pair", (m) => pushPopNs(m, 2_000_000)],
    ["steal (uncontended)", (m) => stealNs(m, 1 << 16)],
    ["stealHalf of 64", (m) => stealHalf64Ns(m, 2000)],
  ];
  const rows: DequeBenchRow[] = [];
  for (const [op, measure] of ops) {
    measure(facade); // warm-up, discarded
    measure(direct);
    const f: number[] = [];
    const d: number[] = [];
    for (let r = 0; r < runs; r++) {
      if (r % 2 === 0) {
        f.push(measure(facade));
        d.push(measure(direct));
      } else {
        d.push(measure(direct));
        f.push(measure(facade));
      }
    }
    rows.push({ runtime: runtimeName(), op, facade: summarize(f), direct: summarize(d) });
  }
  return rows;
}

if (import.meta.main ?? (globalThis as { process?: { argv: string[] } }).process?.argv[1]?.endsWith("deque_bench.ts")) {
  const json = ((globalThis as { process?: { argv: string[] } }).process?.argv ?? []).includes("--json");
  const rows = await benchDeque();
  for (const row of rows) {
    if (json) console.log(JSON.stringify(row));
    else {
      console.log(
        `${row.runtime.padEnd(14)} ${row.op.padEnd(20)} facade ${format(row.facade)} ns   direct ${
          format(row.direct)
        } ns   ratio ${(row.facade.median / row.direct.median).toFixed(2)}`,
      );
    }
  }
}
