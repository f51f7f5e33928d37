/**
 * A producer in another thread of a traced pool (`spec/trace/run.ts`, scenario `producers`): it installs
 * the tracing binding (every access of this thread is recorded, as a worker's), opens a producer from the
 * handle the pool's thread posted it, runs tiny tasks in small waves (its injector pushes, its record
 * allocations, its completion queue's pops and its waits), checks their results, closes the producer and
 * reports.
 *
 * @module
 */
import { parentPort } from "node:worker_threads";
import { traceThisThread } from "./binding.ts";

interface ProducerLike {
  run(name: string, ...args: unknown[]): Promise<unknown>;
  close(): Promise<void>;
}

parentPort!.once("message", async (message: { root: string; handle: unknown; tiny: number; base: number }) => {
  const { root, handle, tiny, base } = message;
  let failure = "";
  try {
    await traceThisThread(root, "run");
    const { openProducer } = await import(new URL("mod.ts", root).href) as {
      openProducer(handle: unknown): ProducerLike;
    };
    const producer = openProducer(handle);
    // Waves of 4: the producer waits for its completions between them (its waiting word, its wake).
    for (let i = 0; i < tiny; i += 4) {
      await Promise.all(
        Array.from({ length: Math.min(4, tiny - i) }, (_, k) =>
          producer.run("add", base + i + k, 1).then((v) => {
            if (v !== base + i + k + 1) failure ||= `a producer's add(${base + i + k}, 1) returned ${String(v)}`;
          })),
      );
    }
    await producer.close();
  } catch (error) {
    failure ||= `a producer thread failed: ${String(error)}`;
  }
  parentPort!.postMessage({ failure });
});
