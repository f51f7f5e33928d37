/**
 * Streaming map: run a task over a (possibly endless, possibly asynchronous) iterable of inputs with a
 * bound on the tasks in flight, and yield the results as an async iterable, in input order or as they
 * finish.
 *
 * What it owns: {@link MapOptions} and {@link mapTasks}, the window between the inputs and the consumer;
 * and {@link startMap}, `pool.map`'s side of it: its options checked at the call, its submissions (one
 * task, or one chunk) tracked so that the map's end aborts them, and its chunks' size.
 *
 * Invariants:
 * - At most `concurrency` tasks are in flight; in input order, also at most `concurrency` results wait to
 *   be yielded (the window is counted from the oldest result not yet yielded). Inputs are pulled only when
 *   the window has room, so memory stays flat whatever the number of inputs.
 * - Every task started settles (the pool's promise), and its result is yielded, or the iteration ends
 *   first: by the consumer (`break`, `return`), by a task's error (thrown from the iteration), or by the
 *   caller's signal. Then the tasks still in flight are aborted (queued ones never run), and the input
 *   iterator is closed (`return()`).
 * - With {@link MapChunks} (`pool.map` for a task of the module), consecutive inputs of a synchronous
 *   iterable that fit go in chunks of up to `limit`, each one submission (lib/producer/batch.ts), from the second
 *   window on, and not the last few: a chunk counts as its inputs in the window, and its results are
 *   yielded as if its tasks had run one by one: every result before the first failing input, then that
 *   input's error.
 *
 * Threads: its producer's thread (for the pool's own producer, the thread that created the pool).
 *
 * @module
 */

import { chunkable, mapChunkArgs, mapChunkLimit } from "./batch.ts";
import type { Entry } from "./ledger.ts";
import { type AbortSignalLike, type Priority, resolveRunOptions, signalReason } from "../options.ts";
import type { LevelIndex } from "../protocol/levels.ts";

/** Options of `pool.map`. */
export interface MapOptions {
  /** The most tasks in flight (default 256; an integer from 1). */
  concurrency?: number;
  /** Yield results in the order of their inputs (default `true`), or as they finish (`false`). */
  ordered?: boolean;
  /** Aborts the map: the iteration throws the signal's reason, and tasks in flight are aborted. */
  signal?: AbortSignalLike;
  /** The priority of its tasks (see `RunOptions.priority`): `"high"`, `"normal"` (the default) or `"low"`. */
  priority?: Priority;
}

/** Inputs of a map: an iterable or an async iterable. */
export type MapInputs<T> = Iterable<T> | AsyncIterable<T>;

/** One settled task of the window. */
interface Done<R> {
  ok: boolean;
  value: R | unknown;
}

/**
 * How a map may send several inputs as one chunk (see `pool.map`): consecutive inputs that fit, from a
 * synchronous iterable.
 */
export interface MapChunks<T, R> {
  /** The most inputs in one chunk: at least 2. */
  limit: number;
  /** Whether `input` may go in a chunk. */
  fits(input: T): boolean;
  /**
   * Submits a chunk of `inputs`; `signal` aborts it. Resolves with `[errorAt, error, results]`: the smallest
   * index of an input whose task failed (-1 if none) and what it threw, and the other tasks' results.
   */
  run(inputs: T[], signal: AbortSignalLike): Promise<[number, unknown, R[]]>;
}

/** What {@link startMap} needs of the pool. */
export interface MapHost {
  /**
   * Submits the task with `args`, or the built-in `builtinId` (a chunk) with `args` as its arguments;
   * returns the entry that tracks it, if it was admitted (a refusal calls `reject`).
   */
  submit(
    args: unknown[],
    resolve: (value: unknown) => void,
    reject: (error: unknown) => void,
    builtinId: number | undefined,
    level: LevelIndex,
  ): Entry | undefined;
  /** Aborts a submitted task (a queued one never runs) with `reason`. */
  cancel(entry: Entry, reason: unknown): void;
  /** Whether a submission now would not be refused for `maxQueue`. */
  hasRoom(): boolean;
  /** Resolves when {@link MapHost.hasRoom} may be true. */
  waitForRoom(): Promise<void>;
  /** The task's id, or undefined if the module exports no such function (then nothing goes in chunks). */
  taskId: number | undefined;
  /** The chunk task's id. */
  chunkId: number;
  /** How many workers the pool has. */
  workers: number;
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
 * @param chunks How to send inputs in chunks, if the caller can (only a synchronous iterable's inputs go
 * in chunks: an asynchronous one's arrive one at a time, and holding one back for a chunk would delay it).
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
  chunks?: MapChunks<T, R>,
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
      // The first window goes one by one, as without chunks: a map of fewer inputs than that is not cut
      // (its few tasks may be long, and each worker should get some), as runMany leaves a short batch.
      if (chunks !== undefined && syncIterator !== undefined && started >= concurrency) {
        fillInChunks(chunks, syncIterator);
      } else {
        while (!exhausted && started - yielded < concurrency) {
          const next = syncIterator !== undefined ? syncIterator.next() : await asyncIterator!.next();
          if (next.done) {
            exhausted = true;
            break;
          }
          submitOne(next.value);
        }
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

  function submitOne(input: T): void {
    const index = started++;
    run(input, stop.signal).then(
      (value) => settled(index, { ok: true, value }),
      (error) => settled(index, { ok: false, value: error }),
    );
  }

  /**
   * Fills the window from a synchronous iterator, consecutive inputs that fit in chunks, the others one by
   * one. An input pulled counts against the window at once, so that a chunk never overfills it; a chunk
   * is begun only while a whole one fits (a window refilled one result at a time would send chunks of
   * one), so chunks fall short only before an input that does not fit. The inputs held when the iterator
   * ends go one by one: the map's last tasks spread over the workers. If the iterator throws, the inputs
   * held for a chunk are not submitted (the map ends with that error).
   */
  function fillInChunks(chunks: MapChunks<T, R>, iterator: Iterator<T>): void {
    const held: T[] = [];
    while (!exhausted) {
      const room = concurrency - (started - yielded) - held.length;
      if (room <= 0 || (held.length === 0 && room < chunks.limit)) break;
      const next = iterator.next();
      if (next.done) {
        exhausted = true;
        for (const input of held.splice(0)) submitOne(input);
        break;
      }
      if (chunks.fits(next.value)) {
        held.push(next.value);
        if (held.length === chunks.limit) submitChunk(chunks, held);
      } else {
        submitChunk(chunks, held);
        submitOne(next.value);
      }
    }
    submitChunk(chunks, held);
  }

  /** Submits the inputs held (and empties `held`): a chunk, or one task for a single input. */
  function submitChunk(chunks: MapChunks<T, R>, held: T[]): void {
    if (held.length < 2) {
      if (held.length === 1) submitOne(held.pop()!);
      return;
    }
    const base = started;
    const count = held.length;
    started += count;
    chunks.run(held.splice(0), stop.signal).then(
      ([errorAt, error, values]) => {
        // In input order: the results before the first failure, then that failure. The tasks after it
        // ran, but the iteration ends at the failure, so they settle with it (never yielded).
        for (let k = 0; k < count; k++) {
          settled(
            base + k,
            errorAt === -1 || k < errorAt ? { ok: true, value: values[k] } : { ok: false, value: error },
          );
        }
      },
      (error) => {
        // The chunk as a whole failed (refused, aborted, its worker died, its results not sendable).
        for (let k = 0; k < count; k++) settled(base + k, { ok: false, value: error });
      },
    );
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

/**
 * `pool.map`: checks its options (named errors at the call, before anything runs) and starts
 * {@link mapTasks} with submissions to `host`, in chunks where they fit (see the module doc).
 *
 * @param host The pool's side.
 * @param inputs The inputs: an iterable or an async iterable.
 * @param options `concurrency` (default 256), `ordered` (default true), `signal`.
 * @returns The results, as an async generator.
 * @throws {TypeError} If an option or the inputs have the wrong type.
 * @throws {RangeError} If `concurrency` is not an integer from 1.
 *
 * @example Usage
 * ```ts ignore
 * for await (const square of startMap(host, [1, 2, 3], {})) console.log(square); // 1, 4, 9
 * ```
 */
export function startMap<T, R>(
  host: MapHost,
  inputs: MapInputs<T>,
  options: MapOptions,
): AsyncGenerator<R, void, undefined> {
  if (options === null || typeof options !== "object") {
    throw new TypeError(
      `Cannot map as its options must be an object: received ${options === null ? "null" : typeof options}`,
    );
  }
  const concurrency = options.concurrency ?? DEFAULT_MAP_CONCURRENCY;
  if (typeof concurrency !== "number" || !Number.isInteger(concurrency) || concurrency < 1) {
    throw new (typeof concurrency === "number" ? RangeError : TypeError)(
      `Cannot map as 'concurrency' must be an integer from 1: received ${String(concurrency)}`,
    );
  }
  const ordered = options.ordered ?? true;
  if (typeof ordered !== "boolean") {
    throw new TypeError(`Cannot map as 'ordered' must be a boolean: received ${typeof ordered}`);
  }
  const { signal, level } = resolveRunOptions({ signal: options.signal, priority: options.priority });
  const iterable = inputs as unknown as Record<symbol, unknown> | null;
  if (
    iterable === null || typeof iterable !== "object" && typeof iterable !== "string" ||
    typeof iterable[Symbol.iterator] !== "function" && typeof iterable[Symbol.asyncIterator] !== "function"
  ) {
    throw new TypeError(`Cannot map as 'inputs' must be an iterable or an async iterable: received ${typeof inputs}`);
  }
  // The tasks in flight, so that the map's end aborts them: one listener for the whole map, not one per
  // task (a listener per task made the map ~2.5x slower than batched runs).
  const inFlight = new Set<Entry>();
  let listening = false;
  // One task (its argument list), or one chunk with `builtinId` (the chunk task's arguments).
  const submit = (args: unknown[], stop: AbortSignalLike, builtinId?: number): Promise<unknown> => {
    if (!listening) {
      listening = true;
      stop.addEventListener("abort", () => {
        for (const entry of inFlight) host.cancel(entry, signalReason(stop));
      }, { once: true });
    }
    if (!host.hasRoom()) return host.waitForRoom().then(() => submit(args, stop, builtinId));
    return new Promise((resolve, reject) => {
      let entry: Entry | undefined = undefined;
      entry = host.submit(
        args,
        (value) => {
          inFlight.delete(entry!);
          resolve(value);
        },
        (error) => {
          if (entry !== undefined) inFlight.delete(entry);
          reject(error);
        },
        builtinId,
        level,
      );
      if (entry !== undefined && !entry.settled) inFlight.add(entry);
    });
  };
  const run = (input: T, stop: AbortSignalLike) => submit([input], stop) as Promise<R>;
  const taskId = host.taskId;
  const limit = mapChunkLimit(concurrency, host.workers);
  const chunks: MapChunks<T, R> | undefined = taskId === undefined || limit < 2 ? undefined : {
    limit,
    fits: chunkable,
    run: (chunk, stop) => submit(mapChunkArgs(taskId, chunk), stop, host.chunkId) as Promise<[number, unknown, R[]]>,
  };
  return mapTasks(inputs, run, concurrency, ordered, signal, chunks);
}
