/**
 * The accounting oracle of the pool tests: once a scenario has left the pool at rest, every record,
 * overflow block and slab is free again, and each allocation advanced its record's generation exactly
 * once (lib/record/census.ts). It reaches the pool's task table through its internals, as a debug view.
 *
 * "At rest" is more than drained: `drain()` resolves once every task has settled, but a task cancelled
 * while queued, or aborted (or timed out) while running, settles at once and its record comes back later:
 * when a worker takes the cancelled handle from its queue, or when the aborted task's completion arrives.
 * And the completion of a task settled already (aborted or timed out while it ran) is read only at the main
 * thread's next wake for completions, which it arms only while some task is pending (completion.ts `arm`):
 * with nothing pending, that record stays DONE in the completion queue until the next submission's
 * completion is read. So the helper reads the completion queue itself, as that next wake would.
 * So {@link assertIdleAccounting} first waits, with a bound, until no record is in use and every thread's
 * allocations are matched by releases (and every FREE record is in the free list), then checks every rule at that instant (the pool at rest stays so:
 * nothing is submitted meanwhile).
 */
import { idleAccountingErrors, type RecordCensus, recordCensus } from "../../lib/record/census.ts";
import type { TaskTable } from "../../lib/record/task.ts";

/** The main thread's task table of a pool (its producer's). */
export function tableOf(pool: unknown): TaskTable {
  return (pool as { producer: { table: TaskTable } }).producer.table;
}

/** The census of a pool's task table, now. */
export function censusOf(pool: unknown): RecordCensus {
  return recordCensus(tableOf(pool));
}

/**
 * Waits (up to `ms`) until the pool's records are all back, then asserts the idle accounting rules; call
 * it after `await pool.drain()`, with nothing submitted since. Returns the census it checked.
 *
 * @param pool A pool (or a pool of a mutant copy of lib/).
 * @param what The scenario, for the message.
 * @param options `ms`: the bound on the wait (default 10 s); `counts: false` skips the allocation counts
 * and generations (after a worker was killed from outside, which can cut `allocate` short); `read: false`
 * leaves the main thread's completion queue to its reader (a test that the reader itself reads what
 * comes back with nothing pending).
 */
export async function assertIdleAccounting(
  pool: unknown,
  what: string,
  options: { ms?: number; counts?: boolean; read?: boolean } = {},
): Promise<RecordCensus> {
  const errors = await idleAccountingProblems(pool, options);
  if (errors.length > 0) throw new Error(`${what}: accounting of an idle pool: ${errors.join("; ")}`);
  return censusOf(pool);
}

/** {@link assertIdleAccounting}'s check: the broken rules (none if the pool is at rest and accounted). */
export async function idleAccountingProblems(
  pool: unknown,
  options: { ms?: number; counts?: boolean; read?: boolean } = {},
): Promise<string[]> {
  const table = tableOf(pool);
  const reader = (pool as { producer: { reader: { drain(): void } } }).producer.reader;
  const deadline = Date.now() + (options.ms ?? 10_000);
  for (;;) {
    if (options.read !== false) reader.drain(); // (see the module's doc: completions of tasks settled already, which nothing else reads now)
    const census = recordCensus(table);
    const inUse = Object.values(census.inUse).reduce((a, b) => a + b, 0);
    // (A worker emptying its cache before it sleeps marks a record FREE just before its push: let it finish.)
    const settled = inUse === 0 && census.freeList === census.free &&
      (options.counts === false || census.allocations === census.releases);
    if (settled || Date.now() > deadline) {
      const errors = idleAccountingErrors(census, options.counts !== false);
      return settled ? errors : [`not at rest after ${options.ms ?? 10_000} ms`, ...errors];
    }
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}
