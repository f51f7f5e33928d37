/**
 * Every submitting call of a {@link TaskSubmitter}, tried once, and how each was refused: shared by
 * tests/pool/terminated_test.ts (the pool's own) and tests/fixtures/terminated_producer.ts (a producer in
 * another thread), so that both are held to the same list.
 */
import { PoolClosedError, PoolTerminatedError } from "../../lib/errors.ts";
import type { TaskSubmitter } from "../../lib/submitter.ts";
import type * as tasks from "../fixtures/tasks.ts";

/** How one call ended: its error's name and message, and its classes; or "resolved" for a call that did not refuse. */
export interface Refusal {
  call: string;
  name: string;
  message: string;
  closed: boolean;
  terminated: boolean;
}

/** `error` as a {@link Refusal} of `call`. */
export function refusal(call: string, error: unknown): Refusal {
  return {
    call,
    name: (error as Error)?.name ?? typeof error,
    message: (error as Error)?.message ?? String(error),
    closed: error instanceof PoolClosedError,
    terminated: error instanceof PoolTerminatedError,
  };
}

const RESOLVED = (call: string): Refusal => ({ call, name: "resolved", message: "", closed: false, terminated: false });

/**
 * Tries each submitting call of `submitter` once: `run`, `spawn` (its error is the one `spawned` holds
 * after a turn), `runMany` (one by one, and a long batch that goes in chunks), `map`, `with(...).run` and
 * `with(...).spawn`; then `waitForRoom` and `drain`, which never reject (they must resolve, not hang).
 *
 * @param submitter A pool or a producer.
 * @param spawned The errors its `onError` received, in order (read after each spawn).
 * @returns How each call ended, in that order.
 */
export async function tryEverySubmission(
  submitter: TaskSubmitter<typeof tasks>,
  spawned: unknown[],
): Promise<Refusal[]> {
  const out: Refusal[] = [];
  const settle = async (call: string, promise: Promise<unknown>): Promise<void> => {
    out.push(await promise.then(() => RESOLVED(call), (error) => refusal(call, error)));
  };
  const spawnReport = async (call: string, spawn: () => void): Promise<void> => {
    const before = spawned.length;
    spawn();
    await new Promise((resolve) => setTimeout(resolve, 10)); // onError is called in a later microtask
    out.push(spawned.length > before ? refusal(call, spawned[before]) : RESOLVED(call));
  };
  await settle("run", submitter.run("add", 1, 2));
  await spawnReport("spawn", () => submitter.spawn("add", 1, 2));
  await settle("runMany", submitter.runMany("add", [[1, 2], [3, 4]]));
  await settle("runMany in chunks", submitter.runMany("add", Array.from({ length: 512 }, (_, i) => [i, 1])));
  await settle(
    "map",
    (async () => {
      for await (const _ of submitter.map("squareOf", [1, 2, 3])) {
        // nothing: the first step refuses
      }
    })(),
  );
  await settle("with(...).run", submitter.with({ timeout: 5_000 }).run("add", 1, 2));
  await spawnReport("with(...).spawn", () => submitter.with({ timeout: 5_000 }).spawn("add", 1, 2));
  await settle("waitForRoom", submitter.waitForRoom());
  await settle("drain", submitter.drain());
  return out;
}
