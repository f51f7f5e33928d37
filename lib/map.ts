/**
 * Streaming map: run a task over a (possibly endless, possibly asynchronous) iterable of inputs with a
 * bound on the tasks in flight, and yield the results as an async iterable, in input order or as they
 * finish.
 *
 * What it owns: {@link MapOptions} and {@link mapTasks}, the window between the inputs and the consumer.
 *
 * Invariants:
 * - At most `concurrency` tasks are in flight; in input order, also at most `concurrency` results wait to
 *   be yielded (the window is counted from the oldest result not yet yielded). Inputs are pulled only when
 *   the window has room, so memory stays flat whatever the number of inputs.
 * - Every task started settles (the pool's promise), and its result is yielded, or the iteration ends
 *   first: by the consumer (`break`, `return`), by a task's error (thrown from the iteration), or by the
 *   caller's signal. Then the tasks still in flight are aborted (queued ones never run), and the input
 *   iterator is closed (`return()`).
 *
 * Threads: the thread that created the pool.
 *
 * @module
 */

import type { AbortSignalLike } from "./options.ts";

/** Options of `pool.map`. */
export interface MapOptions {
  /** The most tasks in flight (default 256; an integer from 1). */
  concurrency?: number;
  /** Yield results in the order of their inputs (default `true`), or as they finish (`false`). */
  ordered?: boolean;
  /** Aborts the map: the iteration throws the signal's reason, and tasks in flight are aborted. */
  signal?: AbortSignalLike;
}

/** Inputs of a map: an iterable or an async iterable. */
export type MapInputs<T> = Iterable<T> | AsyncIterable<T>;

/** One settled task of the window. */
interface Done<R> {
  ok: boolean;
  value: R | unknown;
}

/** The default bound on tasks in flight: enough to keep workers busy with tiny tasks. */
export const DEFAULT_MAP_CONCURRENCY = 256;

/**
 * Runs `run(input, signal)` for each input, at most `concurrency` at once, and yields the results.
 *
 * @param inputs The inputs.
 * @param run Submits one task; `signal` aborts it (the map aborts the tasks in flight when it ends early).
 * @param concurrency The most tasks in flight.
 * @param ordered Yield in input order (else as they finish).
 * @param signal The caller's signal, if any.
 * @returns The results, as an async generator.
 *
 * @example Usage
 * ```ts
 * import { mapTasks } from "./map.ts";
 * const squares = mapTasks([1, 2, 3], (n: number) => Promise.resolve(n * n), 2, true, undefined);
 * const out: number[] = [];
 * for await (const square of squares) out.push(square);
 * console.log(out); // [1, 4, 9]
 * ```
 */
export async function* mapTasks<T, R>(
  inputs: MapInputs<T>,
  run: (input: T, signal: AbortSignalLike) => Promise<R>,
  concurrency: number,
  ordered: boolean,
  signal: AbortSignalLike | undefined,
): AsyncGenerator<R, void, undefined> {
  const stop = new AbortController();
  // Results by input index (ordered) or in order of arrival (unordered), and a wake-up for the consumer.
  const results = new Map<number, Done<R>>();
  const arrived: Done<R>[] = [];
  let wake: (() => void) | undefined;
  const awaken = () => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  // The caller's abort stops the tasks in flight and wakes the consumer, which then throws the reason.
  const onAbort = () => {
    stop.abort(signal!.reason);
    awaken();
  };
  signal?.addEventListener("abort", onAbort, { once: true });
  const asyncIterator = (inputs as AsyncIterable<T>)[Symbol.asyncIterator]?.();
  // A sync iterable is pulled without an await per input (that would cost a turn per task).
  const syncIterator = asyncIterator === undefined ? (inputs as Iterable<T>)[Symbol.iterator]() : undefined;
  let started = 0;
  let yielded = 0;
  let exhausted = false;
  let finished = false;
  try {
    for (;;) {
      signal?.throwIfAborted();
      // Fill the window: in order, counted from the oldest result not yet yielded.
      while (!exhausted && started - yielded < concurrency) {
        const next = syncIterator !== undefined ? syncIterator.next() : await asyncIterator!.next();
        if (next.done) {
          exhausted = true;
          break;
        }
        const index = started++;
        run(next.value, stop.signal).then(
          (value) => settled(index, { ok: true, value }),
          (error) => settled(index, { ok: false, value: error }),
        );
      }
      if (yielded === started) {
        finished = true;
        return;
      }
      // Ready already (the common case under load): no extra await.
      const done = ready() ?? await take();
      yielded++;
      if (!done.ok) throw done.value;
      yield done.value as R;
    }
  } finally {
    signal?.removeEventListener("abort", onAbort);
    if (!finished) {
      // Ended early (break, a task's error, the caller's signal): abort what is in flight, close the inputs.
      stop.abort(signal?.aborted ? signal.reason : new DOMException("The map ended early", "AbortError"));
      if (!exhausted) {
        if (syncIterator !== undefined) syncIterator.return?.();
        else await asyncIterator!.return?.();
      }
    }
  }

  function settled(index: number, done: Done<R>): void {
    if (ordered) results.set(index, done);
    else arrived.push(done);
    awaken();
  }

  /** The next result to yield, if it has arrived. */
  function ready(): Done<R> | undefined {
    if (!ordered) return arrived.shift();
    const done = results.get(yielded);
    if (done !== undefined) results.delete(yielded);
    return done;
  }

  async function take(): Promise<Done<R>> {
    for (;;) {
      signal?.throwIfAborted();
      const done = ready();
      if (done !== undefined) return done;
      await new Promise<void>((resolve) => (wake = resolve));
    }
  }
}
