/**
 * The pool assembled in one place: the shared memory set up from the resolved options, then the owner,
 * which builds its producer and its own parts in dependency order (lib/owner/owner.ts). Every part is
 * given its collaborators when it is built; none is assigned into afterwards.
 *
 * The order:
 * 1. the shared memory ({@link PoolMemory.create}): the buffer of `poolLayout(shape)`, each deque and queue
 *    (the injector of each priority level, each producer slot's completions) initialized; the payload
 *    arena, the task records' free lists, and with `metrics` the workers' histograms and their
 *    `busySinceMs` words;
 * 2. the owner ({@link Owner}): its producer (views, ledger, buffers, cancellation, submission, completion,
 *    admission), its workforce, killer, broadcaster and the handling of deaths.
 * No worker starts here: `Owner.start` starts them.
 *
 * Threads: the thread that creates the pool.
 *
 * @module
 */

import { epochMs, PoolMetrics } from "./metrics.ts";
import { StatusWords } from "./protocol/layout.ts";
import { mem } from "./protocol/atomics.ts";
import { PoolMemory } from "./protocol/memory.ts";
import type { ResolvedOptions } from "./options.ts";
import { Owner } from "./owner/owner.ts";
import type { Producer } from "./producer/producer.ts";
import { TaskTable } from "./record/task.ts";

/** A pool's parts, assembled: its memory, its owner and the owner's producer. */
export interface AssembledPool {
  /** The shared memory, as the owner's thread sees it. */
  readonly memory: PoolMemory;
  /** The owner: workers, deaths, lifecycle. */
  readonly owner: Owner;
  /** The owner's producer: submission and completion. */
  readonly producer: Producer;
}

/**
 * Sets up a pool's shared memory and builds its parts; starts no worker.
 *
 * @param moduleUrl The task module's URL.
 * @param options The pool's options, resolved.
 * @returns The parts.
 * @throws {TypeError} If `payloadMemory` is not 0 and this runtime's SharedArrayBuffer cannot grow.
 *
 * @example Usage
 * ```ts ignore
 * const { owner, producer } = assemblePool(moduleUrl, resolveOptions({ workers: 2 }));
 * await owner.start();
 * ```
 */
export function assemblePool(moduleUrl: string, options: ResolvedOptions): AssembledPool {
  // Step 1: the buffer, its deques and queues (protocol/memory.ts), the records, the metrics.
  const memory = PoolMemory.create(options.shape, payloadArena(options.payloadMemory));
  TaskTable.init(memory);
  const since = epochMs();
  let metrics: PoolMetrics | undefined;
  if (options.metrics) {
    const status = memory.status;
    metrics = new PoolMetrics(memory.workers, status, since);
    for (let i = 0; i < memory.workers; i++) {
      mem.store(status, i * StatusWords.count + StatusWords.busySinceMs, -1);
    }
  }
  // Step 2: the owner and its parts.
  const owner = new Owner({ memory, moduleUrl, options, metrics, since });
  return { memory, owner, producer: owner.producer };
}

/**
 * The growable arena of large payloads, up to `bytes` (none for 0).
 *
 * @throws {TypeError} If this runtime's SharedArrayBuffer cannot grow (the option then has to be 0).
 */
function payloadArena(bytes: number): SharedArrayBuffer | undefined {
  if (bytes === 0) return undefined;
  const arena = new SharedArrayBuffer(0, { maxByteLength: bytes });
  if (!arena.growable) {
    throw new TypeError(
      "Cannot create pool as this runtime's SharedArrayBuffer cannot grow (needed for large payloads): pass payloadMemory: 0 to keep every payload in blocks",
    );
  }
  return arena;
}
