/**
 * One traced run of a real pool, for trace validation (`spec/trace.ts`): arms a trace
 * (`tests/_trace.ts`), starts a pool of the `lib/` under test whose task module installs the tracing
 * binding in every pool thread, runs a fork-join and a burst of tiny tasks (every protocol: deque push,
 * pop, steal and steal-half; the injector, the free list and the completion queue), closes the pool and
 * writes the trace as JSON.
 *
 * Usage: `_trace_run.ts --out FILE [--root DIR_URL] [--workers N] [--fib N] [--tiny N]`
 * (`--root`: a directory holding `mod.ts` and `lib/`, default the repository). Exits 0 with the trace
 * written, 1 with a message if the pool failed (a mutant may hang or lose tasks: the trace up to the
 * deadline is written anyway, and says so).
 *
 * @module
 */
import { writeFileSync } from "node:fs";
import process from "node:process";
import { setEnvironmentData, threadId } from "node:worker_threads";
import type { SharedMemory } from "../lib/atomics.ts";
import type { PoolLayout, PoolShape } from "../lib/layout.ts";
import { armTrace, createTrace, readTrace, ROOT_KEY, TRACE_KEY, tracingBinding } from "./_trace.ts";

function option(name: string, fallback: string): string {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 && at + 1 < process.argv.length ? process.argv[at + 1] : fallback;
}

const out = option("out", "");
if (out === "") throw new Error("Cannot run _trace_run.ts as '--out FILE' is missing: give the trace's path");
const root = option("root", new URL("../", import.meta.url).href);
const workers = Number(option("workers", "3"));
const fibN = Number(option("fib", "13"));
const tiny = Number(option("tiny", "150"));
const deadlineMs = Number(option("deadline", "30000"));

// Small capacities, so that full deques and queues are part of the run.
const shape: PoolShape = {
  workers,
  dequeCapacity: 8,
  taskCapacity: 16,
  inlineBytes: 192,
  blockBytes: 1024,
  blocks: 16,
};
const lib = await import(new URL("lib/layout.ts", root).href) as { poolLayout(s: PoolShape): PoolLayout };
const layout = lib.poolLayout(shape);

const trace = createTrace(400_000, layout.totalBytes);
armTrace(trace, layout.totalBytes);
setEnvironmentData(TRACE_KEY, trace);
setEnvironmentData(ROOT_KEY, root);
const facade = await import(new URL("lib/atomics.ts", root).href) as {
  atomicsBinding: Readonly<SharedMemory>;
  installSharedMemory(binding: SharedMemory): () => void;
};
facade.installSharedMemory(tracingBinding(trace, threadId, facade.atomicsBinding));

interface PoolLike {
  run(name: string, ...args: unknown[]): Promise<unknown>;
  close(): Promise<void>;
  terminate(): Promise<void>;
}
const { Pool } = await import(new URL("mod.ts", root).href) as {
  Pool: { create(url: URL, options: object): Promise<PoolLike> };
};

let failure = "";
const pool = await Pool.create(new URL("./_trace_tasks.ts", import.meta.url), {
  workers,
  dequeCapacity: shape.dequeCapacity,
  taskCapacity: shape.taskCapacity,
  inlineBytes: shape.inlineBytes,
  blockBytes: shape.blockBytes,
  blocks: shape.blocks,
});
const expectedFib = (n: number): number => (n < 2 ? n : expectedFib(n - 1) + expectedFib(n - 2));
const work = (async () => {
  const jobs: Promise<unknown>[] = [];
  for (let i = 0; i < 2; i++) {
    jobs.push(
      pool.run("fib", fibN, 3).then((v) => {
        if (v !== expectedFib(fibN)) failure ||= `fib(${fibN}) returned ${String(v)}`;
      }),
    );
  }
  for (let i = 0; i < tiny; i++) {
    jobs.push(
      pool.run("add", i, 1).then((v) => {
        if (v !== i + 1) failure ||= `add(${i}, 1) returned ${String(v)}`;
      }),
    );
  }
  await Promise.all(jobs);
  await pool.close();
})();
let timer: ReturnType<typeof setTimeout> | undefined;
const deadline = new Promise<void>((resolve) => {
  timer = setTimeout(() => {
    failure ||= `the run did not finish within ${deadlineMs} ms`;
    resolve();
  }, deadlineMs);
});
await Promise.race([work.catch((e) => void (failure ||= `the run failed: ${String(e)}`)), deadline]);
clearTimeout(timer);
const { snapshot, events, overflow } = readTrace(trace);
writeFileSync(
  out,
  JSON.stringify({
    runtime: "Deno" in globalThis ? "deno" : "Bun" in globalThis ? "bun" : "node",
    layout,
    overflow,
    failure,
    snapshot: [...snapshot],
    events: events.map((e) => [e.thread, e.kind, e.word, e.a, e.b, e.old, e.now]),
  }),
);
console.log(
  `trace: ${events.length} accesses${overflow ? " (log full: a prefix)" : ""}${failure ? `; FAILED: ${failure}` : ""}`,
);
if (failure !== "") {
  await pool.terminate().catch(() => {});
  process.exit(1);
}
process.exit(0);
