/**
 * Boots a pool thread that was started from the task module itself. In a Bun single-file executable
 * (`bun build --compile ./main.ts ./tasks.ts`) the only worker entries are the files named on the
 * command line, and filch's own worker entry is not one of them: there the pool starts its threads from
 * the task module, with {@link TASK_ENTRY_MARK} in their `process.argv`. The task module imports filch, and
 * so this module (the package entry imports it for this effect), which sees the mark and boots the thread.
 * Anywhere else (the main thread, a thread of filch's own entry, any other worker) it does nothing.
 *
 * Threads: any; acts only in a thread whose `process.argv` carries the mark.
 *
 * @module
 */

import { TASK_ENTRY_MARK } from "../runtime/thread.ts";
import { bootWorker } from "./boot.ts";

const argv = (globalThis as { process?: { argv?: unknown } }).process?.argv;
// Not awaited: the task module that imported us is still being evaluated, and the pool's set-up message
// (which imports that module again, getting this same instance) is handled once it has finished.
if (Array.isArray(argv) && argv.includes(TASK_ENTRY_MARK)) bootWorker();
