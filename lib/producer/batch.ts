/**
 * Batches (`pool.runMany`): many tasks of one function in one call, and the chunks that carry them (for
 * `pool.map` too).
 *
 * What it owns: how a batch is cut into submissions ({@link submitBatch}), the chunk task's id
 * ({@link chunkTaskId}: the worker side, `worker/chunk.ts`, runs a chunk and registers it after the
 * module's own exports); for `pool.map` (`producer/map.ts` cuts its window), the size of its chunks
 * ({@link mapChunkLimit}) and their arguments ({@link mapChunkArgs}).
 *
 * Why chunks: a tiny task costs the main thread far more than the worker (an entry, a record, a queue
 * push, a completion, a promise callback); a chunk of up to {@link MAX_CHUNK} tasks pays those once. A
 * chunk holds consecutive argument lists of one length whose arguments are all primitives (numbers,
 * booleans, null, undefined, bigints, strings of up to {@link MAX_CHUNK_STRING} characters), flattened
 * into one argument list: `[taskId, arity, count, outcomes, ...arguments]` (see `runChunk` (`worker/chunk.ts`)). Any
 * other argument list (an object or a long string in it, more than {@link MAX_CHUNK_ARITY} arguments, not
 * an array) is submitted on its own, exactly as `run` would submit it. Chunks are cut only when the batch
 * is long enough that every worker gets at least {@link CHUNKS_PER_WORKER} of them, so that a batch of
 * few, long tasks is spread as before.
 *
 * Invariants:
 * - Each argument list is read once (its length, then each argument), in order; a getter on it is user
 *   code and runs once. What was read is what is sent: a list submitted on its own is a copy of the values
 *   read, not the caller's array read again (a list this module never reads, in a batch too short to cut
 *   or of more than {@link MAX_CHUNK_ARITY} arguments, goes as the caller's array, read by the encoder
 *   alone). A chunk's arguments are primitives, so encoding it runs no user code.
 * - Each task runs at most once, and the batch's promise settles once: with every result in input order
 *   once every submission resolved, or with the first error (a chunk's first error, or a single task's,
 *   or a refusal). A chunk runs every one of its tasks even when one throws, and finishes only once every
 *   promise its tasks returned has settled, so that no task of a chunk still runs once its record is done.
 * - A chunk is one task to the pool: one record, one entry in `stats()` (submitted, completed), one run
 *   and wait time in the metrics, one `currentTask().id` for the tasks it runs; its results share one
 *   payload (the pool's `payloadMemory` bounds them together; typed arrays of 64 KiB or more travel
 *   apart, transferred). A worker that dies running a chunk rejects the batch with `WorkerCrashedError`;
 *   that chunk's tasks after the one that was running never run.
 *
 * Threads: {@link submitBatch} on a producer's thread (the thread that created the pool).
 *
 * @module
 */

import { BUILTIN_TASKS } from "../forkjoin/join.ts";

/** The most tasks in one chunk. */
export const MAX_CHUNK = 64;
/** The most arguments a task may take to go in a chunk. */
export const MAX_CHUNK_ARITY = 8;
/** The longest string argument that goes in a chunk (in UTF-16 units); a longer one goes on its own. */
export const MAX_CHUNK_STRING = 256;
/** Chunks are cut only when each worker gets at least this many of them. */
export const CHUNKS_PER_WORKER = 8;

/**
 * The chunk task's id in a pool whose module exports `moduleTasks` functions.
 *
 * @param moduleTasks How many task functions the module exports.
 * @returns The id of `runChunk` (`worker/chunk.ts`) on every worker of that pool.
 *
 * @example Usage
 * ```ts
 * import { chunkTaskId } from "./batch.ts";
 * import { BUILTINS } from "../worker/chunk.ts";
 * console.log(chunkTaskId(3) === 3 + Object.keys(BUILTINS).indexOf("runChunk")); // true
 * ```
 */
export function chunkTaskId(moduleTasks: number): number {
  return moduleTasks + CHUNK_INDEX;
}

/** The chunk task registers right after the loops' built-ins (`worker/chunk.ts`, `BUILTINS`). */
const CHUNK_INDEX = Object.keys(BUILTIN_TASKS).length;

/**
 * The largest chunk `pool.map` sends with a window of `concurrency` tasks on `workers` workers: small
 * enough that the window holds {@link CHUNKS_PER_WORKER} chunks for each worker (a few long tasks stay
 * spread over the workers), at most {@link MAX_CHUNK}. Below 2, the map sends no chunks.
 *
 * @param concurrency The map's bound on tasks in flight.
 * @param workers How many workers the pool has.
 * @returns The most inputs in one of the map's chunks.
 *
 * @example Usage
 * ```ts
 * import { mapChunkLimit } from "./batch.ts";
 * console.log(mapChunkLimit(256, 2), mapChunkLimit(8, 2)); // 16 0
 * ```
 */
export function mapChunkLimit(concurrency: number, workers: number): number {
  return Math.min(MAX_CHUNK, Math.floor(concurrency / (workers * CHUNKS_PER_WORKER)));
}

/**
 * A map's chunk: the arguments of `runChunk` (`worker/chunk.ts`) for one-argument tasks of `taskId` over `inputs`, with
 * outcomes (so that the map can yield every result before the first failure).
 *
 * @param taskId The task function's id.
 * @param inputs The inputs, each {@link chunkable}.
 * @returns `[taskId, 1, inputs.length, 1, ...inputs]`.
 *
 * @example Usage
 * ```ts
 * import { mapChunkArgs } from "./batch.ts";
 * console.log(mapChunkArgs(5, [1, 2])); // [5, 1, 2, 1, 1, 2]
 * ```
 */
export function mapChunkArgs(taskId: number, inputs: readonly unknown[]): unknown[] {
  const flat: unknown[] = [taskId, 1, inputs.length, 1];
  for (let i = 0; i < inputs.length; i++) flat.push(inputs[i]);
  return flat;
}

/** How {@link submitBatch} submits: one task as `run` would, or one chunk (arguments for `runChunk` (`worker/chunk.ts`)). */
export interface BatchSubmitter {
  /** Submits one task with `args`; a refusal calls `reject`. May throw (a submission cut short). */
  one(args: unknown[], resolve: (value: unknown) => void, reject: (error: unknown) => void): void;
  /** Submits a chunk; `resolve` receives its results array. A refusal calls `reject`. May throw. */
  chunk(flat: unknown[], resolve: (value: unknown) => void, reject: (error: unknown) => void): void;
}

/**
 * Submits a batch: each argument list of `argsList` as one task, consecutive ones of primitives in chunks
 * (see the module doc). Resolves with the results in input order, or rejects with the first error.
 *
 * @param task The task's name (for error messages).
 * @param taskId The task's id, or undefined if the module exports no such function (then nothing is
 * chunked, and each submission is refused as `run`'s would be).
 * @param argsList The argument lists.
 * @param workers How many workers the pool has.
 * @param submit How to submit one task or one chunk.
 * @returns The results, in the order of `argsList`.
 *
 * @example Usage
 * ```ts ignore
 * const sums = await submitBatch("add", addId, [[1, 2], [3, 4]], 2, submitter); // [3, 7]
 * ```
 */
export function submitBatch(
  task: string,
  taskId: number | undefined,
  argsList: readonly unknown[],
  workers: number,
  submit: BatchSubmitter,
): Promise<unknown[]> {
  const n = argsList.length;
  const results = new Array<unknown>(n);
  if (n === 0) return Promise.resolve(results);
  const limit = taskId === undefined ? 1 : Math.min(MAX_CHUNK, Math.floor(n / (workers * CHUNKS_PER_WORKER)));
  return new Promise((resolve, reject) => {
    // Submissions not yet resolved, plus one for the loop below, so that the batch cannot resolve before
    // every argument list was submitted.
    let left = 1;
    let failed = false;
    const fail = (error: unknown) => {
      if (failed) return;
      failed = true;
      reject(error);
    };
    const done = () => {
      if (--left === 0 && !failed) resolve(results);
    };
    let flat: unknown[] = [];
    let base = 0;
    let count = 0;
    let arity = -1;
    const flush = () => {
      if (count === 0) return;
      const from = base;
      const many = count;
      flat[2] = many;
      const chunk = flat;
      flat = [];
      count = 0;
      left++;
      submit.chunk(chunk, (values) => {
        const got = values as unknown[];
        for (let j = 0; j < many; j++) results[from + j] = got[j];
        done();
      }, fail);
    };
    const one = (i: number, args: unknown[]) => {
      left++;
      submit.one(args, (value) => {
        results[i] = value;
        done();
      }, fail);
    };
    try {
      for (let i = 0; i < n; i++) {
        const args = argsList[i];
        if (!Array.isArray(args)) {
          flush();
          fail(new TypeError(`Cannot run task '${task}' as argsList[${i}] must be an array of arguments`));
          continue;
        }
        if (limit <= 1) {
          one(i, args);
          continue;
        }
        const length = args.length;
        if (length > MAX_CHUNK_ARITY) {
          flush();
          one(i, args);
          continue;
        }
        if (count === limit || (count !== 0 && length !== arity)) flush();
        if (count === 0) {
          base = i;
          arity = length;
          flat.push(taskId, length, 0, 0);
        }
        // Read once, into the chunk: what goes on is these values (a getter on the list runs here only).
        const start = flat.length;
        let j = 0;
        for (; j < length; j++) {
          const value = args[j];
          flat.push(value);
          if (!chunkable(value)) break;
        }
        if (j < length) {
          // Not for a chunk: on its own, with the values read (the rest read now, once).
          const values = flat.splice(start);
          for (j++; j < length; j++) values.push(args[j]);
          if (count === 0) flat = [];
          flush();
          one(i, values);
          continue;
        }
        count++;
      }
      flush();
    } catch (error) {
      // A getter's throw, or a submission cut short (a stack overflow): the batch fails with it; what was
      // submitted runs and settles on its own.
      fail(error);
      return;
    }
    done();
  });
}

/**
 * Whether an argument may go in a chunk: a primitive that encodes small and runs no code.
 *
 * @param value An argument.
 * @returns Whether it is a number, boolean, undefined, null, bigint or a string of at most
 * {@link MAX_CHUNK_STRING} characters.
 *
 * @example Usage
 * ```ts
 * import { chunkable } from "./batch.ts";
 * console.log(chunkable(1), chunkable("a"), chunkable({})); // true true false
 * ```
 */
export function chunkable(value: unknown): boolean {
  switch (typeof value) {
    case "number":
    case "boolean":
    case "undefined":
    case "bigint":
      return true;
    case "string":
      return (value as string).length <= MAX_CHUNK_STRING;
    default:
      return value === null;
  }
}
