/** Helpers of the pool tests. */
import { Pool, type PoolOptions } from "../../lib/pool.ts";
import { openProducer } from "../../lib/pool_producer.ts";
import { assertIdleAccounting } from "./_accounting.ts";
import { within } from "../_test.ts";

/**
 * Creates a pool of the task module at `moduleUrl`, runs `body` with it, and terminates it whatever
 * happened (so that a failed test leaves no worker behind).
 *
 * A body that returns with the pool still open leaves it at rest: then its tasks are drained and the idle
 * accounting is asserted (tests/pool/_accounting.ts: every record, block and slab free, each allocation one
 * generation advanced), so that every scenario of the suites built on this helper checks that nothing it
 * did kept a resource. The allocation counts are left out after a death inside one of the pool's steps,
 * which can fall between a generation's bump and its count. `atRest: false` is for a body that ends with
 * tasks deliberately still held (it says why at its call).
 */
export async function withTerminatedPool<M extends object>(
  moduleUrl: URL,
  options: PoolOptions,
  body: (pool: Pool<M>) => void | Promise<void>,
  atRest = true,
): Promise<void> {
  const pool = await Pool.create<M>(moduleUrl, options);
  try {
    await body(pool);
    if (atRest && pool.lifecycle === "open") {
      await within(pool.drain(), 10_000, "drain at the end of the scenario");
      await assertIdleAccounting(pool, "at the end of the scenario", { counts: pool.stats().deathsInSteps === 0 });
    }
  } finally {
    await within(pool.terminate(), 10_000, "terminate");
  }
}

/**
 * Resolves once `pool` can make a handle again (a producer slot came back) and that probe's slot is free
 * again too; fails after `ms`, saying `what` did not come back.
 *
 * The probe is opened as a producer and closed, and its close resolves only once the owner released the
 * slot. Closing the probe's port alone would give the slot back only when the owner's end sees the close
 * event, later and at a time of the runtime's choosing: a caller that went on to claim a slot at once
 * found the probe's still taken (Node, CI of stop 37: "a free slot: expected none, received RangeError").
 */
export async function slotComesBack<M extends object>(pool: Pool<M>, what: string, ms = 20_000): Promise<void> {
  await within(
    (async () => {
      for (;;) {
        let handle;
        try {
          handle = pool.handle();
        } catch (error) {
          if (!(error instanceof RangeError)) throw error;
          await new Promise((resolve) => setTimeout(resolve, 5));
          continue;
        }
        return await openProducer(handle).close();
      }
    })(),
    ms,
    what,
  );
}
