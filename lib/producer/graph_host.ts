/**
 * What a producer offers a task graph's submission (lib/graph/submit.ts): its records, queues, ledger and
 * checks, as one value `Producer.graphHost()` builds.
 *
 * It lives on the producer's side because the producer is what it describes: lib/graph/ imports it (as it
 * imports the ledger), and the producer implements it without importing anything of lib/graph/, so the
 * two folders depend one way.
 *
 * Threads: the thread of the graph's producer (the owner's, or a producer's in another thread).
 *
 * @module
 */

import type { Levels } from "../protocol/levels.ts";
import type { Sleep } from "../protocol/sleep.ts";
import type { TaskTable } from "../record/task.ts";
import type { TaskLedger } from "./ledger.ts";

/** What a graph's submission needs of its producer (`Producer.graphHost` builds it). */
export interface GraphHost {
  /** The task records, as this thread sees them. */
  readonly table: TaskTable;
  /** The graph words (`PoolMemory.graph`). */
  readonly graph: Int32Array;
  /** The queues workers take submitted tasks from. */
  readonly levels: Levels;
  /** The sleep protocol (the roots are new work). */
  readonly sleep: Sleep;
  /** The producer's ledger: a node whose record comes back has an entry. */
  readonly ledger: TaskLedger;
  /** The origin word of the producer's records (its completion queue). */
  readonly origin: number;
  /** The task names of the pool's module, sorted. */
  readonly taskNames: readonly string[];
  /** Whether the pool (and the producer) accept submissions. */
  open(): boolean;
  /** The error of a submission the pool's state refuses. */
  closedError(task: string): Error;
  /** A task's id, or undefined. */
  taskId(task: string): number | undefined;
  /**
   * Encodes a node's constant arguments (getters run: user code); the encoding is good until the next call,
   * which is when the graph copies it out.
   */
  encode(args: unknown[]): { readonly length: number; copyTo(target: Uint8Array, offset: number): void };
  /** After a submission: the completion reader waits for completions. */
  arm(): void;
  /** Tells `worker` that the node `handle` it runs was aborted (its signal fires). */
  abort(worker: number, handle: number): void;
  /** Decodes a failed input's encoded error, with the pool's error classes (it throws what decode throws). */
  decode(bytes: Uint8Array): unknown;
  /**
   * Placing a node with a progress handler (its entry's `onProgress`) in record `index`, before the roots'
   * publication: its cell is emptied and read from now on (lib/producer/progress_reader.ts `watch`).
   */
  watch(index: number): void;
  /**
   * With the pool's `metrics` option (undefined without): the submission clock, and the note of a node's
   * submission time in its record, which its worker's wait time counts from (a dependant's wait includes
   * its inputs' run: it waits from its graph's submission, as a task from its own).
   */
  readonly metrics: {
    /** The submission clock (epoch ms, `PoolMetrics.submitClock`). */
    now(): number;
    /** Notes record `index`'s submission time, before its publication. */
    submitted(index: number, at: number): void;
  } | undefined;
}
