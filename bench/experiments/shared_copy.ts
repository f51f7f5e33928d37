/**
 * What a 64 KiB copy into shared memory costs the thread that makes it, with and without another thread
 * reading the same bytes: the question behind the main thread's slab copy of a large argument (issue 31,
 * Bun's 64 KiB arguments at about half the bare postMessage loop's throughput).
 *
 * Two measurements, each over rings of 64 KiB slots in one SharedArrayBuffer of 64 KiB to 32 MiB:
 * - "alone": this thread `set`s a 64 KiB Uint8Array into slot after slot, round the ring (every slot written
 *   once before, so no page is fresh); nobody else touches the ring;
 * - "read behind": the same, while a second thread copies each slot out (`slice`, as a worker decodes an
 *   argument) as soon as it is written; the writer never overtakes the reader by a whole ring.
 *
 * Printed: µs per 64 KiB copy on the writing thread, the median of 5 runs of 2,000 copies (alone) or one run
 * of 4,000 (read behind). No pool is involved: the figures say what the machine charges for writing lines
 * that another core has read, or that have left the caches.
 *
 * Run: `node bench/experiments/shared_copy.ts`, `deno run -A …`, `bun …`.
 *
 * @module
 */
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";
import { runtimeName, summarize } from "../_stats.ts";

const SLOT = 65536;
/** Ring sizes, in slots: 64 KiB, 128 KiB, 1 MiB, 8 MiB and 32 MiB. */
const RINGS = [1, 2, 16, 128, 512];

/** Control words: [0] slots written, [1] slots read, [2] set once the writer wrote its last slot. */
interface ReaderData {
  ring: SharedArrayBuffer;
  control: Int32Array;
  slots: number;
}

if (!isMainThread) {
  // The reader: copies each slot out once it is written, and says how far it got.
  const { ring, control, slots } = workerData as ReaderData;
  const bytes = new Uint8Array(ring);
  let read = 0;
  let sum = 0;
  for (;;) {
    if (Atomics.load(control, 0) === read) {
      // Caught up: done once the writer says it wrote its last slot, else wait for the next one.
      if (Atomics.load(control, 2) !== 0) break;
      continue;
    }
    const at = (read % slots) * SLOT;
    sum += bytes.slice(at, at + SLOT)[SLOT - 1];
    read++;
    Atomics.store(control, 1, read);
  }
  parentPort!.postMessage(sum);
} else {
  const source = new Uint8Array(SLOT).fill(7);

  const alone = (slots: number): number => {
    const ring = new Uint8Array(new SharedArrayBuffer(slots * SLOT));
    for (let i = 0; i < slots; i++) ring.set(source, i * SLOT); // no fresh pages in the timed loop
    const runs: number[] = [];
    for (let r = 0; r < 5; r++) {
      const start = performance.now();
      for (let i = 0; i < 2000; i++) ring.set(source, (i % slots) * SLOT);
      runs.push((performance.now() - start) / 2000 * 1000);
    }
    return summarize(runs).median;
  };

  const readBehind = async (slots: number): Promise<number> => {
    const buffer = new SharedArrayBuffer(slots * SLOT);
    const ring = new Uint8Array(buffer);
    for (let i = 0; i < slots; i++) ring.set(source, i * SLOT);
    const control = new Int32Array(new SharedArrayBuffer(12));
    const reader = new Worker(new URL(import.meta.url), { workerData: { ring: buffer, control, slots } });
    const done = new Promise((resolve, reject) => {
      reader.once("message", resolve);
      reader.once("error", reject);
    });
    await new Promise((resolve) => setTimeout(resolve, 200)); // the reader started
    let spent = 0;
    for (let written = 0; written < 4000; written++) {
      // Never overwrite a slot the reader has not copied yet.
      const waitedFrom = performance.now();
      while (written - Atomics.load(control, 1) >= Math.max(1, slots - 1)) {
        if (performance.now() - waitedFrom > 10_000) {
          throw new Error(`Cannot measure the ring of ${slots} slots as its reader thread stopped reading`);
        }
      }
      const start = performance.now();
      ring.set(source, (written % slots) * SLOT);
      spent += performance.now() - start;
      Atomics.store(control, 0, written + 1);
    }
    Atomics.store(control, 2, 1);
    await done;
    await reader.terminate();
    return spent / 4000 * 1000;
  };

  console.log(`shared_copy on ${runtimeName()}: µs per 64 KiB copy into a ring of slots (median)\n`);
  console.log("| ring | alone | another thread reads behind |");
  console.log("|---|---|---|");
  for (const slots of RINGS) {
    const size = slots * SLOT >= 2 ** 20 ? `${slots * SLOT / 2 ** 20} MiB` : `${slots * SLOT / 1024} KiB`;
    const behind = slots === 1 ? "—" : (await readBehind(slots)).toFixed(2);
    console.log(`| ${size} (${slots} slot${slots === 1 ? "" : "s"}) | ${alone(slots).toFixed(2)} | ${behind} |`);
  }
}
