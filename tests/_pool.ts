/** Helpers of the pool tests. */
import { Pool, type PoolOptions } from "../lib/pool.ts";
import { within } from "./_test.ts";

/**
 * Creates a pool of the task module at `moduleUrl`, runs `body` with it, and terminates it whatever
 * happened (so that a failed test leaves no worker behind).
 */
export async function withTerminatedPool<M extends object>(
  moduleUrl: URL,
  options: PoolOptions,
  body: (pool: Pool<M>) => void | Promise<void>,
): Promise<void> {
  const pool = await Pool.create<M>(moduleUrl, options);
  try {
    await body(pool);
  } finally {
    await within(pool.terminate(), 10_000, "terminate");
  }
}
