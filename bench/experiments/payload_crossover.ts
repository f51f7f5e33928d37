/**
 * Where large payloads should leave the block chain for a slab (lib/record/slabs.ts `SLAB_FROM`), per runtime:
 * the throughput of bursts of echo tasks with a Uint8Array argument (it crosses twice) of 256 B to 64 KiB,
 * on a pool that keeps every payload in blocks (`payloadMemory: 0`) against one that puts every payload past
 * the record into a slab. The second pool runs a copy of lib/ with `SLAB_FROM` lowered to 200 bytes and the
 * smallest slab to 1 KiB (a patch of the shipped file, written to a temporary directory), so that slabs are
 * measured below the shipped threshold too. Rounds interleave the two, alternating which goes first; each
 * cell is the median ratio (slabs ÷ blocks) with its range.
 *
 * Run: `node bench/experiments/payload_crossover.ts`, `deno run -A bench/experiments/payload_crossover.ts`, `bun
 * bench/experiments/payload_crossover.ts` (a number sets the rounds, default 5).
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { Pool } from "../../lib/pool.ts";
import { format, interleaved, runtimeName, summarize } from "../_stats.ts";

const SIZES = [256, 512, 1024, 4096, 16384, 65536];
const argv = (globalThis as { process?: { argv: string[] } }).process?.argv ?? [];
const rounds = Number(argv.slice(2).find((a) => /^\d+$/.test(a)) ?? 5);

/** Writes lib/ with every payload past the record in a slab, and a task module; returns their URLs. */
function slabFirstCopy(dir: string): { pool: string; tasks: string } {
  const lib = join(dir, "lib");
  cpSync(fileURLToPath(new URL("../../lib", import.meta.url)), lib, { recursive: true });
  const file = join(lib, "record", "slabs.ts");
  const source = readFileSync(file, "utf8");
  const patched = source
    .replace(/^export const SLAB_FROM: number = .*$/m, "export const SLAB_FROM: number = 200;")
    .replace(/^const MIN_SLAB = .*$/m, "const MIN_SLAB = 1024;");
  if (patched === source || !patched.includes("SLAB_FROM: number = 200;") || !patched.includes("MIN_SLAB = 1024;")) {
    throw new Error("Cannot patch lib/record/slabs.ts: its SLAB_FROM or MIN_SLAB line changed; update this benchmark");
  }
  writeFileSync(file, patched);
  writeFileSync(join(dir, "package.json"), '{ "type": "module" }\n');
  writeFileSync(join(dir, "tasks.ts"), "export function echo(value: unknown): unknown {\n  return value;\n}\n");
  return { pool: pathToFileURL(join(lib, "pool.ts")).href, tasks: pathToFileURL(join(dir, "tasks.ts")).href };
}

/** Echoes as many `size`-byte arrays at once as make 16 MiB (500 to 4,000); returns tasks per second. */
async function burst(pool: Pool<{ echo(value: unknown): unknown }>, size: number): Promise<number> {
  const bytes = new Uint8Array(size).fill(1);
  const n = Math.min(4000, Math.max(500, Math.floor((16 << 20) / size)));
  const start = performance.now();
  const results = await Promise.all(Array.from({ length: n }, () => pool.run("echo", bytes)));
  const ms = performance.now() - start;
  if (!results.every((r) => r instanceof Uint8Array && r.length === size && r[size - 1] === 1)) {
    throw new Error("Cannot trust the benchmark as an echo came back wrong");
  }
  return (n / ms) * 1000;
}

const dir = mkdtempSync(join(tmpdir(), "filch-crossover-"));
try {
  const copy = slabFirstCopy(dir);
  const { Pool: SlabPool } = await import(copy.pool) as { Pool: typeof Pool };
  type Echo = { echo(value: unknown): unknown };
  const blocks = await SlabPool.create<Echo>(copy.tasks, { workers: 2, payloadMemory: 0, blocks: 2 ** 15 });
  const slabs = await SlabPool.create<Echo>(copy.tasks, { workers: 2 });
  try {
    for (const size of SIZES) {
      await burst(blocks, size);
      await burst(slabs, size);
    }
    console.log(`${runtimeName()}, 2 workers, ${rounds} rounds: echo of a Uint8Array, slabs ÷ blocks (median, range)`);
    for (const size of SIZES) {
      const [b, s] = await interleaved(rounds, () => burst(blocks, size), () => burst(slabs, size));
      const ratios = s.map((x, i) => x / b[i]);
      console.log(`${String(size).padStart(6)} B  ${format(summarize(ratios), 2)}`);
    }
  } finally {
    await blocks.close();
    await slabs.close();
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
