/**
 * A producer thread's lifeline where the runtime does not say when a link's other end is gone: in browsers,
 * a MessagePort's `close` event is not fired for a terminated Worker's end (Chromium 156, checked by
 * tests/consumers/browser_consumer.ts), so the owner would never learn that a producer's thread died, and its close
 * would wait for that producer's tasks for ever. There, the Web Locks API stands in: the producer holds an
 * exclusive lock named for its handle until it closes, and the owner asks for the same lock once the
 * producer said it holds it: the owner gets it when the producer released it (it closed) or when its
 * thread ended (the browser frees a dead context's locks). The owner then treats the lock as the link's
 * `close` event (owner/links.ts: a producer that had not said `closed` died).
 *
 * Where the runtime fires the close event (Node, Deno and Bun, checked by tests/pool/producers_test.ts), no lock
 * is taken: one mechanism a runtime.
 *
 * Threads: any (the owner watches, a producer holds).
 *
 * @module
 */

/** What filch uses of `navigator.locks`. */
interface LockManagerLike {
  request(
    name: string,
    options: { mode: "exclusive"; signal?: AbortSignal },
    callback: () => Promise<void> | void,
  ): Promise<unknown>;
}

/**
 * The lock manager, where a lifeline is needed and possible: a browser (no `process` global: Node, Deno
 * and Bun all have one, and fire the link's close event) with the Web Locks API; else undefined.
 *
 * @returns The lock manager, or undefined.
 */
export function lifelineLocks(): LockManagerLike | undefined {
  const g = globalThis as { process?: unknown; navigator?: { locks?: LockManagerLike } };
  if (g.process !== undefined) return undefined;
  const locks = g.navigator?.locks;
  return locks !== undefined && typeof locks.request === "function" ? locks : undefined;
}

/**
 * The producer's side: holds the lock `name` until the returned release is called (or the thread ends),
 * calling `held` once it holds it.
 *
 * @param name The handle's lifeline name.
 * @param held Called once the lock is held (the producer then tells the owner, who starts watching).
 * @returns The release (idempotent).
 *
 * @example Usage
 * ```ts ignore
 * const release = holdLifeline(handle.lifeline, () => link.send({ type: "holding" }));
 * // ... when the producer closed:
 * release();
 * ```
 */
export function holdLifeline(name: string, held: () => void): () => void {
  const locks = lifelineLocks();
  if (locks === undefined) return () => {};
  let release!: () => void;
  const until = new Promise<void>((resolve) => (release = resolve));
  locks.request(name, { mode: "exclusive" }, () => {
    held();
    return until;
  }).catch(() => {});
  return release;
}

/**
 * The owner's side: calls `ended` once the lock `name` is free (its producer released it or died).
 *
 * @param name The handle's lifeline name.
 * @param ended Called once, when the owner got the lock (it lets it go at once).
 * @returns A cancel (the producer said `closed`, or the pool stopped): `ended` is then never called.
 *
 * @example Usage
 * ```ts ignore
 * const cancel = watchLifeline(name, () => links.ended(slot));
 * ```
 */
export function watchLifeline(name: string, ended: () => void): () => void {
  const locks = lifelineLocks();
  if (locks === undefined) return () => {};
  const controller = new AbortController();
  locks.request(name, { mode: "exclusive", signal: controller.signal }, () => {
    if (!controller.signal.aborted) ended();
  }).catch(() => {}); // aborted while waiting: nothing to do
  return () => controller.abort();
}
