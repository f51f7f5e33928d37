/**
 * The module each pool thread starts from (see `worker/boot.ts` for what the thread does).
 *
 * Why it is a file of its own, here: the pool names it literally, `new URL("./worker_thread.ts",
 * import.meta.url)` (`worker_url.ts`), where bundlers look for worker entries, and the two files sit side by
 * side at the top of `lib/` so that the relative URL stays right when a bundler flattens the package into
 * one directory (the esbuild recipe of docs/bundlers.md: `main.js`, `tasks.js` and this entry, flat). The
 * package exports it as `filch/worker` for bundlers that take the entry from the package instead (Vite).
 *
 * Threads: runs only as a pool worker thread.
 *
 * @module
 */

import { bootWorker } from "./worker/boot.ts";

bootWorker();
