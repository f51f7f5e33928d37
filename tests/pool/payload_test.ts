/**
 * Large payloads (lib/record/slabs.ts, lib/record/task.ts, the codec's aligned runs): arguments and results of every size
 * cross intact, alone and many at once, submitted and forked; slabs are reused; a small arena that a
 * payload fits nowhere in is reset once nothing holds a slab; limits and bad options are named errors.
 * Each scenario counts what went wrong, so that the same scenario also shows that it catches the payload
 * mutants of tests/mutants/mutants.ts.
 */
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { WorkerCrashedError } from "../../lib/errors.ts";
import { move } from "../../lib/codec/move.ts";
import { Pool, type PoolOptions } from "../../lib/pool.ts";
import type * as tasks from "../fixtures/payload_tasks.ts";
import { materializePoolMutant, PAYLOAD_MUTANTS, type PayloadMutant, removePoolMutant } from "../mutants/mutants.ts";
import { assert, assertEquals, assertRejects, test, within } from "../_test.ts";

const TASKS = new URL("../fixtures/payload_tasks.ts", import.meta.url);
const KiB = 1024;
const MiB = 1024 * KiB;

async function withPool<T>(
  PoolClass: typeof Pool,
  options: PoolOptions,
  body: (pool: Pool<typeof tasks>) => Promise<T>,
): Promise<T> {
  const pool = await PoolClass.create<typeof tasks>(TASKS, { workers: 2, ...options });
  try {
    // A hang (a mutant's leaked arena) ends here, and the pool is terminated below.
    return await within(body(pool), 60_000, "the scenario");
  } finally {
    await within(pool.terminate(), 10_000, "terminate");
  }
}

/** The byte `makeBytes(n, seed)` has at `i`. */
function expectedByte(i: number, seed: number): number {
  return (i * 31 + seed) & 255;
}

function bytesOf(n: number, seed: number): Uint8Array {
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = expectedByte(i, seed);
  return out;
}

/** Whether `bytes` is exactly `makeBytes(n, seed)`. */
function intact(bytes: unknown, n: number, seed: number): boolean {
  if (!(bytes instanceof Uint8Array) || bytes.length !== n) return false;
  for (let i = 0; i < n; i++) if (bytes[i] !== expectedByte(i, seed)) return false;
  return true;
}

/** Every size (inline, blocks, slabs) and kind as argument and result, alone and 32 at once: the wrong ones. */
async function everySize(PoolClass: typeof Pool): Promise<number> {
  return await withPool(PoolClass, {}, async (pool) => {
    let wrong = 0;
    for (const n of [100, 5_000, 8 * KiB, 70_000, MiB, 5 * MiB]) {
      if (!intact(await pool.run("echo", bytesOf(n, 1)), n, 1)) wrong++;
      if (!intact(await pool.run("makeBytes", n, 2), n, 2)) wrong++;
      const floats = new Float64Array(Math.ceil(n / 8)).map((_, i) => i * 0.5);
      const back = await pool.run("echo", floats);
      if (!(back instanceof Float64Array) || back.length !== floats.length || back.some((x, i) => x !== i * 0.5)) {
        wrong++;
      }
      const buffer = bytesOf(n, 3).buffer;
      const bufferBack = await pool.run("echo", buffer);
      if (!(bufferBack instanceof ArrayBuffer) || !intact(new Uint8Array(bufferBack), n, 3)) wrong++;
      const text = "é".repeat(Math.min(n, 200_000));
      const pair = await pool.run("echo", { text, bytes: bytesOf(n, 4) }) as { text: string; bytes: Uint8Array };
      if (pair.text !== text || !intact(pair.bytes, n, 4)) wrong++;
      const seeds = Array.from({ length: n > MiB ? 8 : 32 }, (_, i) => i + 10);
      const echoes = await Promise.all(seeds.map((seed) => pool.run("echo", bytesOf(n, seed))));
      wrong += echoes.filter((bytes, i) => !intact(bytes, n, seeds[i])).length;
      const made = await Promise.all(seeds.map((seed) => pool.run("makeBytes", n, seed)));
      wrong += made.filter((bytes, i) => !intact(bytes, n, seeds[i])).length;
    }
    return wrong;
  });
}

/**
 * Ten waves of 16 echoes of 48 KiB (both ways through slabs: a result from 64 KiB on is transferred): 1 if
 * the arena grew more than twice its size after the first wave.
 */
async function steadyStream(PoolClass: typeof Pool): Promise<number> {
  return await withPool(PoolClass, {}, async (pool) => {
    let afterFirst = 0;
    for (let wave = 0; wave < 10; wave++) {
      const echoes = await Promise.all(Array.from({ length: 16 }, (_, i) => pool.run("echo", bytesOf(48 * KiB, i))));
      assert(echoes.every((bytes, i) => intact(bytes, 48 * KiB, i)), "every echo intact");
      if (wave === 0) afterFirst = pool.stats().payloadArena.bytes;
    }
    const last = pool.stats().payloadArena.bytes;
    console.log(`  arena after the first wave: ${afterFirst} bytes; after ten: ${last}`);
    assert(afterFirst > 0, "256 KiB payloads use the arena");
    return last > 2 * afterFirst ? 1 : 0;
  });
}

/**
 * A 256 KiB arena and mixed sizes in flight both ways (arguments and results below 64 KiB, which are not
 * transferred: results hold slabs until the main thread reads them), then a payload that fits only after a
 * reset: the wrong ones.
 */
async function smallArena(PoolClass: typeof Pool): Promise<number> {
  return await withPool(PoolClass, { payloadMemory: 256 * KiB, blocks: 16, blockBytes: 128 }, async (pool) => {
    let wrong = 0;
    const sizes = Array.from({ length: 80 }, (_, i) => (i % 2 === 0 ? 36 * KiB : 60 * KiB));
    const echoes = await within(
      Promise.all(sizes.map((n, i) => pool.run("echo", bytesOf(n, i)))),
      30_000,
      "80 mixed echoes",
    );
    wrong += echoes.filter((bytes, i) => !intact(bytes, sizes[i], i)).length;
    const resetsBefore = pool.stats().payloadArena.resets;
    const small = await within(
      Promise.all(Array.from({ length: 24 }, (_, i) => pool.run("echo", bytesOf(50 * KiB, i)))),
      30_000,
      "24 echoes of 50 KiB",
    );
    wrong += small.filter((bytes, i) => !intact(bytes, 50 * KiB, i)).length;
    if (!intact(await within(pool.run("echo", bytesOf(230 * KiB, 7)), 30_000, "a 230 KiB echo"), 230 * KiB, 7)) {
      wrong++;
    }
    const { resets } = pool.stats().payloadArena;
    console.log(`  arena resets: ${resets} (${resetsBefore} before the 50 KiB and 230 KiB payloads)`);
    assert(resets > resetsBefore, "the 230 KiB payload fitted only after a reset");
    return wrong;
  });
}

test("payloads of every size and kind cross intact as arguments and results, alone and 32 at once", async () => {
  assertEquals(await everySize(Pool), 0, "payloads that arrived wrong");
});

test("a steady stream of large payloads reuses its slabs: the arena stops growing after the first wave", async () => {
  assertEquals(await steadyStream(Pool), 0, "the arena kept growing");
});

test("in a small arena mixed sizes in flight stay intact, and a payload that fits no slab gets one after a reset", async () => {
  assertEquals(await smallArena(Pool), 0, "payloads that arrived wrong");
});

/**
 * Large results, which a worker copies and transfers (worker.ts, RESULT_TRANSFER_FROM): each arrives as
 * exactly its bytes on a buffer of its own, and the task keeps its own buffer (three calls return the same
 * one). Returns the wrong ones (a task that found its buffer taken counts as one).
 */
async function transferredResults(PoolClass: typeof Pool): Promise<number> {
  return await withPool(PoolClass, { workers: 1 }, async (pool) => {
    let wrong = 0;
    for (const n of [64 * KiB - 1, 64 * KiB, 3 * MiB]) {
      for (let call = 0; call < 3; call++) {
        const bytes = await pool.run("returnKept", n, 9).catch(() => undefined) as Uint8Array | undefined;
        if (!intact(bytes, n, 9) || bytes!.byteOffset !== 0 || bytes!.buffer.byteLength !== n) wrong++;
      }
    }
    // A Float64Array, a DataView and an ArrayBuffer in one result.
    const [floats, view, buffer] = await pool.run(
      "echo",
      [new Float64Array(40_000).map((_, i) => i), new DataView(bytesOf(300_000, 3).buffer), bytesOf(300_000, 4).buffer],
    ) as [Float64Array, DataView, ArrayBuffer];
    if (!(floats instanceof Float64Array) || floats.some((x, i) => x !== i)) wrong++;
    if (!(view instanceof DataView) || !intact(new Uint8Array(view.buffer), 300_000, 3)) wrong++;
    if (!(buffer instanceof ArrayBuffer) || !intact(new Uint8Array(buffer), 300_000, 4)) wrong++;
    return wrong;
  });
}

test("a large result is transferred as a copy: exactly its bytes on a buffer of its own; the task keeps its own", async () => {
  assertEquals(await transferredResults(Pool), 0, "results that arrived wrong");
});

test("fork-join passes large arrays between workers: a forked sort of 2^20 doubles", async () => {
  await withPool(Pool, {}, async (pool) => {
    const data = new Float64Array(2 ** 20).map((_, i) => ((i * 7919) % 1_000_003) / 7);
    const sorted = await within(pool.run("sortForked", data, 2 ** 15), 60_000, "the forked sort");
    const expected = data.slice().sort();
    assert(sorted.length === expected.length && sorted.every((x, i) => x === expected[i]), "sorted like the caller");
  });
});

test("a payload beyond payloadMemory and the blocks is a RangeError naming payloadMemory; 0 keeps blocks only", async () => {
  await withPool(Pool, { payloadMemory: 32 * KiB, blocks: 16, blockBytes: 128 }, async (pool) => {
    const args = await assertRejects(pool.run("echo", new Uint8Array(5 * MiB))) as Error;
    assert(args instanceof RangeError && args.message.includes("'payloadMemory'"), String(args));
    const result = await assertRejects(pool.run("makeBytes", 40 * KiB, 0)) as Error;
    assert(result instanceof RangeError && result.message.includes("result"), String(result));
    assert(intact(await pool.run("echo", bytesOf(30 * KiB, 5)), 30 * KiB, 5), "still serving, from the arena");
    // A result from 64 KiB on is copied on the worker and transferred: shared memory's limits do not apply.
    assert(intact(await pool.run("makeBytes", 5 * MiB, 8), 5 * MiB, 8), "a 5 MiB result, transferred");
  });
  await withPool(Pool, { payloadMemory: 0 }, async (pool) => {
    assert(intact(await pool.run("echo", bytesOf(70_000, 6)), 70_000, 6), "a 70 kB payload in blocks");
    assertEquals(pool.stats().payloadArena.bytes, 0, "no arena");
  });
});

test("bad payloadMemory values are named errors", async () => {
  for (const [value, kind] of [[-1, RangeError], [1.5, RangeError], [2 ** 30 + 1, RangeError], ["1", TypeError]]) {
    const error = await assertRejects(Pool.create(TASKS, { workers: 1, payloadMemory: value as number })) as Error;
    assert(
      error instanceof (kind as ErrorConstructor) && error.message.includes("'payloadMemory'"),
      `payloadMemory ${String(value)}: ${String(error)}`,
    );
  }
});

test("move(): an argument's buffer goes to the task without a copy (the caller's is detached), a result's comes back", async () => {
  await withPool(Pool, {}, async (pool) => {
    const bytes = bytesOf(MiB, 9);
    const back = await pool.run("incMoved", move(bytes));
    assertEquals(bytes.length, 0, "the caller's view is detached");
    assert(back instanceof Uint8Array && back.length === MiB && back[0] === expectedByte(0, 9) + 1, "moved back");
    // A view keeps its place in its buffer, which moves whole.
    const buffer = new ArrayBuffer(64);
    const view = new Uint8Array(buffer, 8, 16).fill(1);
    const viewBack = await pool.run("incMoved", move(view));
    assertEquals(buffer.byteLength, 0, "the whole buffer moved");
    assert(viewBack.byteOffset === 8 && viewBack.length === 16 && viewBack.buffer.byteLength === 64, "offset kept");
    assert(viewBack.every((b) => b === 2), "its bytes");
    const made = await pool.run("makeMoved", 100_000, 4);
    assert(made instanceof ArrayBuffer && intact(new Uint8Array(made), 100_000, 4), "an ArrayBuffer result moved");
    // Many at once: each is posted to a worker in turn, and every one settles intact.
    const inputs = Array.from({ length: 200 }, (_, i) => bytesOf(64 * KiB, i));
    const outputs = await Promise.all(inputs.map((input) => pool.run("incMoved", move(input))));
    assert(inputs.every((input) => input.length === 0), "every argument detached");
    assert(
      outputs.every((out, i) => out.length === 64 * KiB && out[5] === ((expectedByte(5, i) + 1) & 255)),
      "200 moved tasks intact",
    );
    assert(pool.stats().workers.every((w) => w.executed > 0), "both workers ran some");
    // A fork's result moves nothing (it is copied to its joiner); the task's own result then moves.
    assert(intact(await pool.run("joinedMoved", 5_000), 5_000, 1), "a fork's moved result");
    const shared = new Uint8Array(new SharedArrayBuffer(4));
    assert(move(shared) === shared, "shared memory passes by reference, move() or not");
  });
});

test("move() is refused by name where it cannot take effect, and for what is not a buffer", async () => {
  await withPool(Pool, {}, async (pool) => {
    const fork = await assertRejects(pool.run("forkMoved", new Uint8Array(8))) as Error;
    assert(fork instanceof TypeError && fork.message.includes("forked task's arguments cannot be moved"), String(fork));
    const kept = new Uint8Array(8);
    const broadcast = await assertRejects(pool.broadcast("echo", move(kept))) as Error;
    assert(broadcast instanceof TypeError && broadcast.message.includes("broadcast"), String(broadcast));
    assertEquals(kept.length, 8, "a refused move detaches nothing");
  });
  for (const bad of [42, "x", null, {}]) {
    let error: unknown;
    try {
      move(bad);
    } catch (e) {
      error = e;
    }
    assert(error instanceof TypeError && error.message.startsWith("Cannot move value"), `move(${String(bad)})`);
  }
  const detached = new ArrayBuffer(8);
  structuredClone(detached, { transfer: [detached] });
  let error: unknown;
  try {
    move(detached);
  } catch (e) {
    error = e;
  }
  assert(error instanceof TypeError && error.message.includes("detached"), String(error));
});

test("a moved task cancelled while queued never runs and frees its record; its worker's death rejects the rest", async () => {
  await withPool(Pool, { workers: 1, taskCapacity: 16 }, async (pool) => {
    const busy = pool.run("spin", 300);
    const controller = new AbortController();
    const cancelled = pool.with({ signal: controller.signal }).run("incMoved", move(new Uint8Array(8)));
    controller.abort();
    assertEquals((await assertRejects(cancelled) as Error).name, "AbortError", "cancelled");
    await busy;
    // Every record is back: 16 moved tasks at once fit.
    const all = await Promise.all(Array.from({ length: 16 }, () => pool.run("incMoved", move(new Uint8Array(8)))));
    assert(all.every((b) => b[0] === 1), "16 moved tasks after the cancel");
    // Moved tasks posted to a worker that dies before it reads them (killed in a long task, force: true):
    // rejected by recovery, never lost.
    const started = new Int32Array(new SharedArrayBuffer(4));
    const killed = pool.with({ timeout: 300, force: true }).run("spinStarted", started, 10_000);
    for (let i = 0; i < 500 && Atomics.load(started, 0) === 0; i++) await new Promise((r) => setTimeout(r, 5));
    const doomed = Array.from({ length: 4 }, () => pool.run("incMoved", move(new Uint8Array(8))));
    const settled = await Promise.allSettled([killed, ...doomed]);
    assertEquals(settled[0].status === "rejected" && (settled[0].reason as Error).name, "TimeoutError", "the spin");
    for (const outcome of settled.slice(1)) {
      assert(
        outcome.status === "rejected" && outcome.reason instanceof WorkerCrashedError &&
          outcome.reason.message.includes("moved buffers"),
        `a doomed task: ${outcome.status === "rejected" ? String(outcome.reason) : "ran"}`,
      );
    }
    assert((await pool.run("incMoved", move(new Uint8Array(8))))[0] === 1, "the replacement runs moved tasks");
  });
});

test("move() marks made by another copy of filch are honoured (one mark set per realm)", async () => {
  const dir = mkdtempSync(join(tmpdir(), "filch-move-copy-"));
  try {
    cpSync(fileURLToPath(new URL("../../lib", import.meta.url)), join(dir, "lib"), { recursive: true });
    const other = await import(
      pathToFileURL(join(dir, "lib", "codec", "move.ts")).href
    ) as typeof import("../../lib/codec/move.ts");
    assert(other.move !== move, "a second copy");
    await withPool(Pool, {}, async (pool) => {
      const bytes = new Uint8Array(16);
      const back = await pool.run("incMoved", other.move(bytes));
      assertEquals(bytes.length, 0, "moved, not copied");
      assert(back[0] === 1, "and back");
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/**
 * Large arguments copied once, straight from the caller's buffers (encoder.ts, `deferFrom`): several runs of
 * odd lengths and offsets in one task; a getter after a large argument that rewrites it (the bytes sent
 * are those read before it ran); and one buffer rewritten between submissions, many of which wait in the
 * backlog of a small arena (each task gets the bytes of its call). Returns the wrong ones.
 */
async function deferredArgs(PoolClass: typeof Pool): Promise<number> {
  return await withPool(PoolClass, { payloadMemory: MiB }, async (pool) => {
    let wrong = 0;
    const odd = bytesOf(70_001, 1);
    const shifted = bytesOf(100_003 + 3, 2).subarray(3);
    const floats = new Float64Array(20_000).map((_, i) => i / 4);
    const back = await pool.run("echoArgs", odd, 7, shifted, "x", floats, bytesOf(40_000, 3).buffer) as unknown[];
    if (!intact(back[0], 70_001, 1) || back[1] !== 7 || back[3] !== "x") wrong++;
    const shiftedBack = back[2] as Uint8Array;
    if (!(shiftedBack instanceof Uint8Array) || shiftedBack.some((b, i) => b !== expectedByte(i + 3, 2))) wrong++;
    const floatsBack = back[4] as Float64Array;
    if (!(floatsBack instanceof Float64Array) || floatsBack.some((x, i) => x !== i / 4)) wrong++;
    if (!(back[5] instanceof ArrayBuffer) || !intact(new Uint8Array(back[5]), 40_000, 3)) wrong++;
    const big = bytesOf(300 * KiB, 4);
    const rewriter = {
      get later() {
        big.fill(0);
        return 1;
      },
    };
    const [sent] = await pool.run("echoArgs", big, rewriter) as [Uint8Array];
    if (!intact(sent, 300 * KiB, 4)) wrong++;
    const reused = new Uint8Array(256 * KiB);
    const echoes: Promise<unknown>[] = [];
    for (let k = 0; k < 24; k++) {
      reused.fill(k);
      echoes.push(pool.run("echo", reused));
    }
    const results = await within(Promise.all(echoes), 30_000, "24 echoes of one rewritten buffer");
    wrong += results.filter((bytes, k) => !(bytes instanceof Uint8Array) || bytes.some((b) => b !== k)).length;
    return wrong;
  });
}

test("large arguments copied straight from the caller's buffers arrive as they were at the call", async () => {
  assertEquals(await deferredArgs(Pool), 0, "arguments that arrived wrong");
});

const SCENARIOS: Record<PayloadMutant["caughtBy"], (PoolClass: typeof Pool) => Promise<number>> = {
  everySize,
  steadyStream,
  smallArena,
  deferredArgs,
  transferredResults,
};

test("the payload scenarios catch every payload mutant (tests/mutants/mutants.ts, PAYLOAD_MUTANTS)", async () => {
  for (const mutant of PAYLOAD_MUTANTS) {
    const url = materializePoolMutant(mutant);
    let wrong: number;
    try {
      const { Pool: MutantPool } = await import(url.href) as { Pool: typeof Pool };
      wrong = await SCENARIOS[mutant.caughtBy](MutantPool);
    } catch (error) {
      // A scenario that throws (a decode error, a hang cut short) caught the mutant too.
      const why = String(error).slice(0, 200);
      console.log(`  payload mutant '${mutant.name}' caught by ${mutant.caughtBy} (it threw): ${why}`);
      wrong = 1;
    }
    console.log(`  payload mutant '${mutant.name}' caught by ${mutant.caughtBy}: ${wrong} wrong`);
    assert(wrong > 0, `payload mutant '${mutant.name}' not caught by ${mutant.caughtBy}`);
    removePoolMutant(url);
  }
}, 300_000);
