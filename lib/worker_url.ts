/**
 * Where a pool thread starts: the URL of `worker_thread.ts` (or the `.js` of the npm build), written
 * literally beside the entry so that bundlers see it and a flat bundle keeps it right (see
 * `worker_thread.ts`).
 *
 * Threads: the owner's (the thread that starts the workers).
 *
 * @module
 */

/**
 * The default worker entry: `worker_thread.ts` beside this module, or `worker_thread.js` in the npm build
 * (and in a bundle whose output names it so). The `workerUrl` option overrides it.
 *
 * @returns The entry's URL.
 *
 * @example Usage
 * ```ts
 * import { defaultWorkerUrl } from "./worker_url.ts";
 * console.log(defaultWorkerUrl().pathname.endsWith("/lib/worker_thread.ts")); // true
 * ```
 */
export function defaultWorkerUrl(): URL {
  return import.meta.url.endsWith(".ts")
    ? new URL("./worker_thread.ts", import.meta.url)
    : new URL("./worker_thread.js", import.meta.url);
}
