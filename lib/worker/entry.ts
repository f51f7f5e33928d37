/**
 * The module each pool thread starts from (see `worker_boot.ts` for what the thread does). Written as a
 * file of its own so that the pool can name it literally, `new URL("./entry.ts", import.meta.url)`,
 * where bundlers look for worker entries.
 *
 * Threads: runs only as a pool worker thread.
 *
 * @module
 */

import { bootWorker } from "./boot.ts";

bootWorker();
