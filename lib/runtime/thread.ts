/**
 * The runtime adapter: start a thread running a module, and talk to it during set-up.
 *
 * What it owns: the one difference between the runtimes: how a thread is started. Node and Deno start
 * threads with `node:worker_threads`, Bun and browsers with the web `Worker` (`type: "module"`); see
 * {@link threadApi}. Everything above this file sees one
 * {@link ThreadHandle} on the parent side and one {@link ParentPort} inside the thread. Messages are used
 * only to set a thread up and to report its death; scheduling goes through shared memory.
 *
 * Threads: {@link startThread} from any thread that may create workers; {@link parentPort} only inside a
 * thread that {@link startThread} started.
 *
 * @module
 */

import type { ResourceLimits } from "../options.ts";

/** The runtime family running this code. */
export const runtimeFamily: "web" | "node" = "Deno" in globalThis || "Bun" in globalThis || !isNodeLike()
  ? "web"
  : "node";

/**
 * The Node built-in module `node:name`, on the runtimes that have one (Node, Deno, Bun), through
 * `process.getBuiltinModule` (Node 20.16 and later, Deno 2, Bun). Not an `import`: a browser bundler
 * (esbuild, Vite) building a page that uses filch never sees a `node:` specifier to resolve, and `deno
 * publish` has no dynamic import it cannot analyze. A browser never takes the paths that call this (its
 * {@link threadApi} is "web").
 *
 * @throws {Error} On a runtime without `process.getBuiltinModule` (Node before 20.16), naming it.
 */
function builtin<T>(name: string): T {
  const process = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown; version?: string } })
    .process;
  if (typeof process?.getBuiltinModule !== "function") {
    throw new Error(
      `Cannot load node:${name} as this runtime has no process.getBuiltinModule (${
        process?.version ?? "no process object"
      }): filch needs Node 20.16 or later, Deno 2 or Bun`,
    );
  }
  return process.getBuiltinModule(`node:${name}`) as T;
}

/**
 * How this runtime starts threads: `node:worker_threads` on Node and on Deno (whose implementation of it,
 * unlike its web `Worker`, can `unref` a thread, so that an idle pool lets the process exit), the web
 * `Worker` on Bun (which can `unref` its web workers) and in browsers.
 */
export const threadApi: "worker_threads" | "web" = runtimeFamily === "node" || "Deno" in globalThis
  ? "worker_threads"
  : "web";

function isNodeLike(): boolean {
  const process = (globalThis as { process?: { versions?: { node?: string } } }).process;
  return typeof process?.versions?.node === "string";
}

/**
 * The argument a pool thread started from the task module itself gets in its `process.argv` (Bun; see
 * `task_entry.ts`).
 *
 * @example Usage
 * ```ts
 * import { TASK_ENTRY_MARK } from "./thread.ts";
 * console.log(TASK_ENTRY_MARK); // --filch-task-entry
 * ```
 */
export const TASK_ENTRY_MARK = "--filch-task-entry";

/**
 * Whether this code runs inside a Bun single-file executable (its modules live under Bun's embedded
 * file system, `/$bunfs/` on Linux and macOS, `B:/~BUN/` on Windows).
 *
 * @param moduleUrl An `import.meta.url` of this package.
 * @returns `true` in a `bun build --compile` binary.
 *
 * @example Usage
 * ```ts
 * import { inBunExecutable } from "./thread.ts";
 * console.log(inBunExecutable("file:///$bunfs/root/app")); // true
 * ```
 */
export function inBunExecutable(moduleUrl: string): boolean {
  return "Bun" in globalThis && (moduleUrl.includes("/$bunfs/") || moduleUrl.includes("/~BUN/"));
}

/** The parent's handle on a started thread. */
export interface ThreadHandle {
  /**
   * Sends a structured-clonable message (a SharedArrayBuffer is shared, not copied); the ArrayBuffers in
   * `transfer` are moved, not copied (detached here).
   */
  post(message: unknown, transfer?: ArrayBuffer[]): void;
  /** Calls `listener` for each message the thread sends. */
  onMessage(listener: (message: unknown) => void): void;
  /** Calls `listener` when the thread dies of an uncaught error, with that error. */
  onError(listener: (error: unknown) => void): void;
  /** Calls `listener` when the thread has exited, with its exit code (worker_threads, and Bun's web Worker). */
  onExit(listener: (code: number) => void): void;
  /** Stops the thread (forcibly where the runtime can; see DESIGN.md on Deno and `Atomics.wait`). */
  terminate(): void;
  /** Lets the process exit while this thread runs, where the runtime allows (Node, Deno, Bun); no-op in browsers. */
  unref(): void;
  /** Undoes {@link ThreadHandle.unref}. */
  ref(): void;
}

/** A thread's side of the channel to its parent. */
export interface ParentPort {
  /** Sends a structured-clonable message to the parent; the ArrayBuffers in `transfer` are moved, not copied. */
  post(message: unknown, transfer?: ArrayBuffer[]): void;
  /** Calls `listener` for each message the parent sends. */
  onMessage(listener: (message: unknown) => void): void;
}

/**
 * Starts a thread running the ES module at `url`.
 *
 * @param url The module to run, as a URL (a `file:` URL on Deno, Bun and Node).
 * @param name A name for debuggers and error messages.
 * @param resourceLimits Heap limits (node:worker_threads only).
 * @param argv Strings appended to the thread's `process.argv` (Bun's web Worker only).
 * @returns The parent's handle on the thread.
 *
 * @example Usage
 * ```ts ignore
 * import { startThread } from "./thread.ts";
 * const thread = startThread(new URL("./my_worker.ts", import.meta.url), "worker-0");
 * thread.onMessage((m) => console.log(m));
 * thread.post({ hello: "thread" });
 * ```
 */
export function startThread(
  url: URL,
  name: string,
  resourceLimits?: ResourceLimits,
  argv?: string[],
): ThreadHandle {
  if (threadApi === "worker_threads") {
    const { Worker } = builtin<typeof import("node:worker_threads")>("worker_threads");
    const { fileURLToPath } = builtin<typeof import("node:url")>("url");
    // Deno kills the whole process (a V8 fatal error) when a worker without resource limits runs out of
    // memory; with limits, only the worker dies (ERR_WORKER_OUT_OF_MEMORY), as on Node. So Deno's workers
    // always get the main heap's own limit unless the pool was given one.
    const limits = resourceLimits ?? ("Deno" in globalThis ? mainHeapLimits() : undefined);
    const worker = new Worker(url.protocol === "file:" ? fileURLToPath(url.href) : remoteEntry(url), {
      name,
      ...(limits === undefined ? {} : { resourceLimits: limits }),
    });
    return {
      post: (message, transfer) => worker.postMessage(message, transfer ?? []),
      onMessage: (listener) => void worker.on("message", listener),
      onError: (listener) => void worker.on("error", listener),
      onExit: (listener) => void worker.on("exit", listener),
      terminate: () => void worker.terminate(),
      unref: () => worker.unref(),
      ref: () => worker.ref(),
    };
  }
  // `argv` is Bun's extension (appended to the thread's process.argv); browsers ignore it.
  const worker = new Worker(url, { type: "module", name, ...(argv === undefined ? {} : { argv }) } as WorkerOptions);
  const maybeRef = worker as unknown as { unref?: () => void; ref?: () => void };
  return {
    post: (message, transfer) => worker.postMessage(message, transfer ?? []),
    onMessage: (listener) => worker.addEventListener("message", (event) => listener((event as MessageEvent).data)),
    onError: (listener) =>
      worker.addEventListener("error", (event) => {
        // The thread's uncaught error: stop the runtime from also reporting it as our own.
        event.preventDefault();
        listener((event as ErrorEvent).error ?? new Error((event as ErrorEvent).message));
      }),
    // Bun's web Worker reports its thread's end (process.exit in it, or terminate) as a "close" event with
    // the exit code; browsers report none (a browser worker dies only by an uncaught error, seen above).
    onExit: (listener) =>
      worker.addEventListener("close", (event) => listener((event as unknown as { code?: number }).code ?? 0)),
    terminate: () => worker.terminate(),
    // Bun's web Worker has unref/ref; browsers' do not.
    unref: () => maybeRef.unref?.(),
    ref: () => maybeRef.ref?.(),
  };
}

/**
 * What node:worker_threads is given for a thread module that is not a file: Deno's implementation takes
 * only file paths and `file:` or `data:` URLs, and filch loaded from JSR (or any https URL) runs its
 * worker entry from https. The thread then starts from a one-line `data:` module that imports the entry
 * (Deno loads remote modules there as anywhere; the entry may import the user's local task module).
 */
function remoteEntry(url: URL): string | URL {
  if (url.protocol === "data:" || !("Deno" in globalThis)) return url.href;
  return new URL(`data:text/javascript,${encodeURIComponent(`import ${JSON.stringify(url.href)};`)}`);
}

/** The main heap's limit, as worker resource limits (Deno's default for a worker is none at all). */
function mainHeapLimits(): ResourceLimits {
  const v8 = builtin<typeof import("node:v8")>("v8");
  return { maxOldGenerationSizeMb: Math.floor(v8.getHeapStatistics().heap_size_limit / 2 ** 20) };
}

/**
 * Inside a started thread: the channel to the parent.
 *
 * @returns The port to the thread that started this one.
 * @throws {Error} If called on a main thread.
 *
 * @example Usage
 * ```ts ignore
 * import { parentPort } from "./thread.ts";
 * const port = parentPort();
 * port.onMessage((m) => port.post(m)); // echo
 * ```
 */
export function parentPort(): ParentPort {
  if (threadApi === "worker_threads") {
    const threads = builtin<typeof import("node:worker_threads")>("worker_threads");
    const port = threads.parentPort;
    if (port === null) throw new Error("Cannot open the parent port as this is the main thread: call it in a worker");
    return {
      post: (message, transfer) => port.postMessage(message, transfer ?? []),
      onMessage: (listener) => void port.on("message", listener),
    };
  }
  const scope = globalThis as unknown as {
    postMessage(message: unknown, transfer: ArrayBuffer[]): void;
    addEventListener(type: "message", listener: (event: MessageEvent) => void): void;
  };
  return {
    post: (message, transfer) => scope.postMessage(message, transfer ?? []),
    onMessage: (listener) => scope.addEventListener("message", (event) => listener(event.data)),
  };
}
