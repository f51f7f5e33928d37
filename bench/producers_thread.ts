/**
 * A producer thread of the producers benchmark (bench/producers.ts). It lives for the whole benchmark and
 * submits its share of each run in one of two ways, as the main thread's "go" message says:
 *
 * - `via: "producer"`: through one of filch's producers in this thread (`openProducer` on a handle the
 *   main thread posted once, at "open": one per pool under test);
 * - `via: "relay"`: by message to the main thread, one `{ id, task, args }` per task, which runs it (on
 *   filch's pool or piscina, the main thread decides) and posts `{ id, value }` back: the relay users write
 *   today.
 *
 * Either way it keeps up to `window` tasks in flight (a new one as each settles), checks every result is
 * its own (`i + base`), and reports `{ type: "done", wrong, failed }`.
 */
import { openProducer, type PoolProducer } from "../mod.ts";
import { parentPort } from "../lib/runtime/thread.ts";
import type * as tasks from "./producers_tasks.ts";

/** A run's orders. */
export interface Go {
  type: "go";
  via: "producer" | "relay";
  /** With `via: "producer"`: which of this thread's producers (one per pool, in the order opened). */
  pool: number;
  /** How many tasks this thread submits. */
  n: number;
  /** Added to each task's index: results of different threads differ. */
  base: number;
  task: "add" | "spinAdd";
  /** The spin task's length, µs. */
  us: number;
  /** The most tasks in flight at once. */
  window: number;
}

/** What the main thread sends. */
export type ToThread =
  | { type: "open"; handle: unknown; pool: number }
  | Go
  | { type: "result"; id: number; value: number }
  | { type: "close" };

/** What this thread sends. */
export type FromThread =
  | { type: "opened"; error?: string }
  | { type: "task"; id: number; task: string; args: number[] }
  | { type: "done"; wrong: number; failed: number; error?: string }
  | { type: "closed" };

const port = parentPort();
/** This thread's producers, one per pool. */
const producers: PoolProducer<typeof tasks>[] = [];
/** The relay's unanswered tasks, by id. */
const waiting = new Map<number, (value: number) => void>();
let nextId = 0;

function relay(task: string, args: number[]): Promise<number> {
  const id = nextId++;
  return new Promise<number>((resolve) => {
    waiting.set(id, resolve);
    port.post({ type: "task", id, task, args } satisfies FromThread);
  });
}

async function drive(go: Go): Promise<{ wrong: number; failed: number }> {
  const producer = producers[go.pool];
  const submit: (i: number) => Promise<number> = go.via === "producer"
    ? (go.task === "add" ? (i) => producer!.run("add", i, go.base) : (i) => producer!.run("spinAdd", i, go.base, go.us))
    : (go.task === "add" ? (i) => relay("add", [i, go.base]) : (i) => relay("spinAdd", [i, go.base, go.us]));
  let next = 0;
  let wrong = 0;
  let failed = 0;
  // `window` lanes, each submitting its next task when its last settled.
  const lane = async () => {
    while (next < go.n) {
      const i = next++;
      try {
        if ((await submit(i)) !== i + go.base) wrong++;
      } catch {
        failed++;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(go.window, go.n) }, lane));
  return { wrong, failed };
}

port.onMessage((data) => {
  const message = data as ToThread;
  if (message.type === "result") {
    const resolve = waiting.get(message.id)!;
    waiting.delete(message.id);
    resolve(message.value);
  } else if (message.type === "go") {
    if (message.via === "producer" && producers[message.pool] === undefined) {
      port.post({ type: "done", wrong: 0, failed: 0, error: "no producer open in this thread" } satisfies FromThread);
      return;
    }
    drive(message).then(
      (counts) => port.post({ type: "done", ...counts } satisfies FromThread),
      (error) => port.post({ type: "done", wrong: 0, failed: 0, error: String(error) } satisfies FromThread),
    );
  } else if (message.type === "open") {
    try {
      producers[message.pool] = openProducer<typeof tasks>(message.handle as never);
      port.post({ type: "opened" } satisfies FromThread);
    } catch (error) {
      port.post({ type: "opened", error: String(error) } satisfies FromThread);
    }
  } else if (message.type === "close") {
    Promise.all(producers.map((p) => p.close())).then(() => port.post({ type: "closed" } satisfies FromThread));
  }
});
