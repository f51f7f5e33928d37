/**
 * filch: a work-stealing thread pool for JavaScript, with a model-checked core.
 *
 * All scheduling state lives in one SharedArrayBuffer: a Chase-Lev deque per worker (the owner pops the
 * newest task, thieves steal the oldest from a random victim), an injector for tasks submitted from
 * outside, Rayon's sleep/wake protocol, and task records whose arguments and results are encoded in shared
 * memory — so a task costs a few atomic operations, not a message. Inside tasks, `join`, `scope`,
 * `parallelFor` and `parallelReduce` fork work that idle workers steal.
 *
 * Tasks are the exported functions of a module that every worker imports. The examples import
 * `@filch/filch`, the name `deno add jsr:@filch/filch` maps (or `jsr:@filch/filch`); in the npm package's
 * declarations they import `filch`, its npm name (npm, Bun, and Deno through `npm:filch`): the npm build
 * rewrites the name. The README and `docs/` have complete programs for each feature, run as tests on Deno,
 * Bun and Node.
 *
 * @example Usage
 * ```ts ignore
 * // tasks.ts
 * import { join } from "@filch/filch";
 * export function fib(n: number): number {
 *   if (n < 20) return n < 2 ? n : fib(n - 1) + fib(n - 2);
 *   const [a, b] = join(() => fib(n - 1), fib, n - 2);
 *   return a + b;
 * }
 *
 * // main.ts
 * import { Pool } from "@filch/filch";
 * import type * as tasks from "./tasks.ts";
 * await using pool = await Pool.create<typeof tasks>(new URL("./tasks.ts", import.meta.url), { workers: 2 });
 * console.log(await pool.run("fib", 30)); // 832040
 * ```
 *
 * @module
 */

// For its effect only: boots a pool thread started from the task module (a Bun single-file executable).
import "./lib/worker/task_entry.ts";

export {
  type AbortSignalLike,
  type AnyFunction,
  type BatchOptions,
  type CloseOptions,
  type EventLike,
  type EventTargetLike,
  type HistogramSummary,
  type MapInputs,
  type MapOptions,
  type MetricsStats,
  type ModuleLocation,
  Pool,
  PoolEvent,
  type PoolEventListener,
  type PoolEventMap,
  PoolEvents,
  type PoolEventType,
  type PoolListenerOptions,
  type PoolOptions,
  PoolState,
  type PoolStateName,
  type PoolStats,
  type Priority,
  type RunOptions,
  RuntimeEvent,
  RuntimeEventTarget,
  type SlotCounts,
  type TaskArgs,
  type TaskName,
  type TaskResult,
  type TaskRunner,
  TaskSubmitter,
  type UnaryTaskName,
  type WorkerMetrics,
  type WorkerStats,
} from "./lib/pool.ts";
export { openProducer, PoolProducer, type ProducerOptions, type ProducerStats } from "./lib/pool_producer.ts";
export type { PoolHandle } from "./lib/producer/handle.ts";
export { currentTask, type TaskContext } from "./lib/forkjoin/task_context.ts";
export { poolHandle } from "./lib/producer/pool_handle.ts";
export { move } from "./lib/codec/move.ts";
export {
  join,
  parallelFor,
  parallelMapInPlace,
  parallelReduce,
  type Scope,
  scope,
  type TaskFunction,
} from "./lib/forkjoin/join.ts";
export {
  ForkJoinProtocolError,
  ModuleLoadError,
  PoolClosedError,
  PoolTerminatedError,
  QueueFullError,
  ResourceLimitError,
  TaskNotFoundError,
  WorkerCrashedError,
  WorkerTeardownError,
} from "./lib/errors.ts";
export type { ElasticWorkers, RecycleOptions, ResourceLimits } from "./lib/options.ts";
export type { ElasticStats } from "./lib/owner/growth.ts";
export { type GraphArgs, GraphNode, type GraphOptions, TaskGraph } from "./lib/graph/graph.ts";
export { GraphInputError } from "./lib/graph/input_error.ts";
export { Deque, type DequeRegion, EMPTY, initDeque, MAX_TASK_VALUE, RETRY, Stealer } from "./lib/protocol/deque.ts";
export { dequeRegionBytes, MAX_DEQUE_CAPACITY, MIN_DEQUE_CAPACITY } from "./lib/protocol/layout.ts";
