/**
 * A timer that does not keep the process alive, on every runtime filch runs on.
 *
 * What it owns: one function, {@link backgroundTimeout}. Node's and Bun's `setTimeout` return an object
 * with `unref()`; Deno's returns a number, unref'd by `Deno.unrefTimer`; a browser has no process to keep
 * alive, so its timer is left as it is.
 *
 * Threads: any.
 *
 * @module
 */

/** The part of Deno's namespace used here (absent elsewhere). */
interface DenoTimers {
  unrefTimer?(id: number): void;
}

/**
 * Calls `callback` after `ms` ms, without keeping the process alive meanwhile: for housekeeping (giving
 * memory back) that must not delay a program's exit.
 *
 * @param callback What to call. It must not throw: an exception in a timer is uncaught.
 * @param ms The delay, in ms.
 * @returns A function that cancels the timer (a no-op once it has fired).
 *
 * @example Usage
 * ```ts
 * import { backgroundTimeout } from "./timer.ts";
 * const cancel = backgroundTimeout(() => console.log("never printed"), 1_000);
 * cancel();
 * ```
 */
export function backgroundTimeout(callback: () => void, ms: number): () => void {
  const id: unknown = setTimeout(callback, ms);
  if (typeof id === "object" && id !== null && typeof (id as { unref?: unknown }).unref === "function") {
    (id as { unref(): void }).unref(); // Node, Bun
  } else if (typeof id === "number") {
    (globalThis as { Deno?: DenoTimers }).Deno?.unrefTimer?.(id); // Deno; a browser: nothing to do
  }
  return () => clearTimeout(id as ReturnType<typeof setTimeout>);
}
