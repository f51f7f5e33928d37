/**
 * Task graphs and continuations (issue 48): the API a submitter builds a graph with, and what it does with
 * the records that come back.
 *
 * A graph is built on the submitting thread without awaiting anything: `g.run(task, ...args)` adds a node
 * and returns a {@link GraphNode}, which later nodes take as arguments where the task's parameter has the
 * node's result type; the rest of their arguments are constants. A node can only name nodes made before
 * it, so a cycle cannot be built. `g.result(node)` asks for a node's result; `g.submit()` places the whole
 * graph (graph/submit.ts) and from then on it runs without this thread: each node starts on the worker
 * that finished its last input (graph/walk.ts). Only the results asked for are decoded here; an
 * intermediate result goes from record to record in shared memory, and an intermediate node has no promise.
 *
 * What it owns: the nodes as built, the promises of the results asked for and of the graph, the mapping of
 * what a node's record carries back (its value, its own error, or the failed input it names) to those
 * promises, and the graph's cancellation (its signal and its timeout).
 *
 * Invariants:
 * - A node's record comes back here if its result was asked for, if it is a sink (its error would
 *   otherwise be lost; its value is not sent), if the graph can be cancelled (graph/submit.ts), or if it
 *   has a progress handler (the record's return ends the node's progress, as a task's settle does); each
 *   such node has one ledger entry, settled once (ledger.ts). Every other node's walker frees its record.
 * - Progress (`onProgress`): every node carries TaskFlags.PROGRESS and an entry whose `onProgress` names
 *   the node; its cell is watched from its placement to its record's return, read by this thread's
 *   progress reader as a task's (lib/progress/README.md). Without a handler no node carries the flag.
 * - `submit()` resolves once every node whose record comes back has settled; it rejects with the first
 *   failure of a sink whose result was not asked for (an asked-for result rejects its own promise), or
 *   with the reason the graph could not be placed (the pool closed, an argument that cannot cross threads,
 *   not enough free records).
 *
 * Threads: the thread of the submitter that made it (the pool's owner, or a producer in another thread).
 *
 * @module
 */

import { resolveRunOptions, type RunOptions, signalAborted, signalReason } from "../options.ts";
import type { LevelIndex } from "../protocol/levels.ts";
import { type Entry, Settled } from "../producer/ledger.ts";
import { timeoutError } from "../producer/cancellation.ts";
import { backgroundTimeout } from "../runtime/timer.ts";
import { reserveStack } from "../runtime/stack.ts";
import { TaskNotFoundError } from "../errors.ts";
import { TaskFlags } from "../record/task.ts";
import { GraphInputError } from "./input_error.ts";
import type { GraphHost } from "../producer/graph_host.ts";
import { cancelGraph, type PlacedNode, placeGraph } from "./submit.ts";
import { GRAPH_INPUT } from "./walk.ts";
import { CANCEL } from "./words.ts";
import type { TaskArgs, TaskName, TaskResult } from "../task_types.ts";

/**
 * The options of a whole graph (`pool.graph(options)`): its priority, its cancellation, and its progress
 * handler. A signal that aborts, or a timeout that passes (counted from `submit()`), cancels every node not
 * started: each rejects with the signal's reason (or a `TimeoutError`); a running node sees its signal
 * (`currentTask().signal`) and settles as its code decides.
 *
 * @typeParam P The type of the nodes' progress values (`currentTask<P>().progress(value)` in their tasks).
 *
 * @example Usage
 * ```ts
 * import type { GraphOptions } from "@filch/filch";
 * const options: GraphOptions<number> = {
 *   priority: "high",
 *   onProgress: (fraction, node) => console.log(node.number, fraction),
 * };
 * console.log(options.priority); // high
 * ```
 */
export type GraphOptions<P = unknown> = Pick<RunOptions, "signal" | "timeout" | "priority"> & {
  /**
   * Receives the progress reports of every node (`currentTask().progress(value)` in its task, and in its
   * forks), on the submitting thread, with the node that made them: as `pool.with({ onProgress })` does for
   * a task (docs/progress.md), per node. Coalesced per node (the handler sees each node's latest value),
   * in order per node, none for a node after it settled; each node's last report is delivered before that
   * node's settle is seen (its result's promise, or `submit()`'s). A throw goes to `onError` (else an
   * unhandled rejection) and the graph goes on. With a handler, every node's record comes back to this
   * thread (one ledger entry a node, as in a cancellable graph); without one, a graph costs nothing more.
   */
  onProgress?: (value: P, node: GraphNode<unknown>) => void;
};

/** A graph's progress handler, as the graph keeps it. */
type GraphProgress = (value: unknown, node: GraphNode<unknown>) => void;

/** What a node's record carries back when it was rejected without running (graph/walk.ts). */
interface InputFailure {
  readonly [GRAPH_INPUT]: number;
  readonly bytes: Uint8Array | undefined;
}

/**
 * A node of a {@link TaskGraph}: the future result of one task, of type `T`, which later nodes of the same
 * graph take as an argument. It is not a promise: ask for its value with {@link TaskGraph.result}.
 *
 * @typeParam T The node's result type.
 *
 * @example Usage
 * ```ts ignore
 * const a: GraphNode<number> = g.run("add", 1, 2);
 * const b = g.run("add", a, 10); // 13, once a is done
 * ```
 */
export class GraphNode<T> {
  /** Its number in its graph: 1 for the first node made, and so on. */
  readonly number: number;
  /** Its task's name. */
  readonly task: string;
  /** @internal The graph that made it. */
  readonly graph: object;
  /** The result type, for the type checker only (never set). */
  declare readonly result?: T;

  /** @internal Made by {@link TaskGraph.run} only. */
  constructor(graph: object, number: number, task: string) {
    this.graph = graph;
    this.number = number;
    this.task = task;
  }
}

/** A task's arguments as a graph node takes them: each one a value, or a node whose result has its type. */
export type GraphArgs<A extends readonly unknown[]> = { [I in keyof A]: A[I] | GraphNode<A[I]> };

/** The inputs of a root (shared by every root: never written). */
const NO_INPUTS: { node: number; position: number }[] = [];

/**
 * Whether `args` are the same primitives, one for one, as `previous`, whose encoding is then theirs too (an
 * encoding of primitives runs no user code and depends on nothing else: a chain's or a map's nodes, whose
 * constant arguments repeat, are encoded once).
 */
function samePrimitives(args: readonly unknown[], previous: readonly unknown[] | undefined): boolean {
  if (previous === undefined || args.length !== previous.length) return false;
  for (let i = 0; i < args.length; i++) {
    const value = args[i];
    if ((typeof value === "object" && value !== null) || typeof value === "function") return false;
    if (!Object.is(value, previous[i])) return false;
  }
  return true;
}

/**
 * A node as built, and then as placed: one object a node for both (a graph of thousands of nodes is
 * retained until it is placed, and each object more a node is young-generation work on this thread).
 * `submit()` fills in what placing reads (`taskId`, `bytes`, `level`, `flags`, `entry`); every field is
 * made at `run()`, so that every node has one shape.
 */
interface BuiltNode extends PlacedNode {
  readonly node: GraphNode<unknown>;
  /** Its arguments as given (the inputs' places emptied); none once placed. */
  args: unknown[];
  readonly inputs: { node: number; position: number }[];
  /** How many nodes take it as an input. */
  dependants: number;
  /** The promise asked for with `result`, if any. */
  asked: PromiseWithResolvers<unknown> | undefined;
  taskId: number;
  bytes: Uint8Array;
  level: LevelIndex;
  flags: number;
  entry: Entry | undefined;
}

/** The constants of a node not yet encoded, or placed. */
const NOT_ENCODED = new Uint8Array(0);
/** The arguments of a node placed (its constants are in its record). */
const NO_ARGS: unknown[] = [];

/**
 * The encoded constants of a graph's nodes, in a few large buffers instead of an array a node: each node's
 * bytes are a view into the current buffer, and a full buffer is left to the views into it as the next,
 * twice as large (up to {@link ConstantBytes.MAX_CHUNK}), is made. An array of its own a node is a
 * separate allocation of its backing store outside the heap for any but the smallest (a few hundred bytes
 * of constants, as the wavefront's two strings of 256 characters, cost this thread more there than
 * encoding them, and the external memory they add makes the runtime collect sooner).
 */
class ConstantBytes {
  static readonly FIRST_CHUNK = 1024;
  static readonly MAX_CHUNK = 1 << 20;
  #buffer = NOT_ENCODED;
  #used = 0;

  /** Copies an encoding in; returns the view of it (valid while the graph is being placed). */
  add(encoded: { readonly length: number; copyTo(target: Uint8Array, offset: number): void }): Uint8Array {
    const n = encoded.length;
    if (this.#used + n > this.#buffer.length) {
      const next = Math.min(ConstantBytes.MAX_CHUNK, Math.max(ConstantBytes.FIRST_CHUNK, 2 * this.#buffer.length));
      this.#buffer = new Uint8Array(Math.max(n, next));
      this.#used = 0;
    }
    const from = this.#used;
    encoded.copyTo(this.#buffer, from);
    this.#used = from + n;
    return this.#buffer.subarray(from, from + n);
  }
}

/**
 * A task graph being built, then submitted once. Made by `pool.graph()` (or a producer's).
 *
 * @typeParam M The task module's type (as the pool's).
 *
 * @example Usage
 * ```ts ignore
 * const g = pool.graph();
 * const a = g.run("parse", source);        // a root: no inputs
 * const b = g.run("analyse", a, options);  // a continuation, with a constant argument beside a's result
 * const c = g.run("merge", a, b);          // a join (and a is fanned out to b and c)
 * console.log(await g.submit(c));          // only c's result comes back to this thread
 * ```
 */
export class TaskGraph<M extends object = Record<string, (...args: never[]) => unknown>> {
  readonly #host: GraphHost;
  readonly #nodes: BuiltNode[] = [];
  readonly #level: LevelIndex;
  readonly #signal: RunOptions["signal"];
  readonly #timeout: number | undefined;
  readonly #onProgress: GraphProgress | undefined;
  #submitted: Promise<void> | undefined = undefined;

  /**
   * @internal Made by a submitter's `graph()`.
   *
   * @param host Its producer's parts.
   * @param options The graph's options.
   */
  constructor(host: GraphHost, options: GraphOptions<never> = {}) {
    // Checked as a task's options are (each property read once; `onProgress` must be a function): the
    // handler takes a second argument, the node, which the checks do not look at.
    const resolved = resolveRunOptions(options as RunOptions);
    this.#host = host;
    this.#level = resolved.level;
    this.#signal = resolved.signal;
    this.#timeout = resolved.timeout;
    this.#onProgress = resolved.onProgress as GraphProgress | undefined;
  }

  /**
   * Adds a node that runs `task` once every node among `args` has resolved, with their results in their
   * places and the other arguments as given (copied now, as `pool.run` copies them at its call). Nothing
   * runs before {@link TaskGraph.submit}.
   *
   * @param task The task's name.
   * @param args Its arguments: values, or nodes of this graph whose result has the parameter's type.
   * @returns The new node.
   * @throws {Error} If the graph was submitted already.
   * @throws {TypeError} If an argument is a node of another graph.
   *
   * @example Usage
   * ```ts ignore
   * const sum = g.run("add", g.run("square", 3), g.run("square", 4)); // 25
   * ```
   */
  run<K extends TaskName<M>>(task: K, ...args: GraphArgs<TaskArgs<M, K>>): GraphNode<TaskResult<M, K>> {
    if (this.#submitted !== undefined) {
      throw new Error(`Cannot add task '${task}' to the graph as it was submitted already: build a new graph`);
    }
    const number = this.#nodes.length + 1;
    const node = new GraphNode<TaskResult<M, K>>(this, number, task);
    // The rest parameter is a new array of this call's: kept as the node's own (no copy), its inputs'
    // places emptied below.
    const values = args as unknown[];
    let inputs: { node: number; position: number }[] = NO_INPUTS;
    for (let position = 0; position < values.length; position++) {
      const value = values[position];
      if (!(value instanceof GraphNode)) continue;
      if (value.graph !== this) {
        throw new TypeError(
          `Cannot add task '${task}' to the graph as its argument ${position} is a node of another graph: a node feeds only the graph that made it`,
        );
      }
      if (inputs === NO_INPUTS) inputs = [];
      inputs.push({ node: value.number, position });
      values[position] = undefined;
    }
    // The node first, then its inputs' counts of dependants: a throw between (a stack overflow) leaves an
    // input counted short, so taken for a sink, whose record comes back and whose failure is reported;
    // the other order would leave one counted for a node that is not there, its failure unreported.
    this.#nodes.push({
      node: node as GraphNode<unknown>,
      args: values,
      inputs,
      dependants: 0,
      asked: undefined,
      number,
      task,
      taskId: -1,
      bytes: NOT_ENCODED,
      level: this.#level,
      flags: 0,
      entry: undefined,
      handle: -1,
    });
    for (let k = 0; k < inputs.length; k++) this.#nodes[inputs[k].node - 1].dependants++;
    return node;
  }

  /**
   * Asks for a node's result: the promise resolves with it once the graph runs it, or rejects with its
   * error, with a {@link GraphInputError} if an input failed (it never ran), or with the graph's
   * cancellation reason. Only the results asked for are decoded on this thread. Ask before `submit()`.
   *
   * @param node A node of this graph.
   * @returns Its result.
   * @throws {Error} If the graph was submitted already.
   * @throws {TypeError} If the node is of another graph.
   *
   * @example Usage
   * ```ts ignore
   * const total = g.result(sum);
   * await g.submit();
   * console.log(await total); // 25
   * ```
   */
  result<T>(node: GraphNode<T>): Promise<T> {
    if (!(node instanceof GraphNode) || node.graph !== this) {
      throw new TypeError("Cannot ask for a result as the node is not one of this graph's");
    }
    if (this.#submitted !== undefined) {
      throw new Error(
        `Cannot ask for node ${node.number}'s result as the graph was submitted already: ask before submit()`,
      );
    }
    const built = this.#nodes[node.number - 1];
    built.asked ??= Promise.withResolvers<unknown>();
    return built.asked.promise as Promise<T>;
  }

  /**
   * Places the graph in the pool: its roots are queued now, and every other node starts on the worker that
   * finishes its last input. Called once.
   *
   * @returns A promise that resolves once every node has settled (it rejects with the first failure of a
   * sink whose result nobody asked for, or with why the graph could not be placed; the results asked for
   * settle their own promises).
   * @throws {Error} If the graph was submitted already.
   *
   * @example Usage
   * ```ts ignore
   * const total = g.result(sum);
   * await g.submit();
   * console.log(await total); // 25
   * ```
   */
  submit(): Promise<void>;
  /**
   * Places the graph in the pool, as {@link TaskGraph.submit} without a node, and returns `node`'s result.
   *
   * @param node A node whose result to return (as {@link TaskGraph.result} then `submit()`).
   * @returns Its result.
   * @throws {Error} If the graph was submitted already.
   *
   * @example Usage
   * ```ts ignore
   * console.log(await g.submit(sum)); // 25
   * ```
   */
  submit<T>(node: GraphNode<T>): Promise<T>;
  submit<T>(node?: GraphNode<T>): Promise<T | void> {
    // Before any change: placing a graph has no repair, so a stack overflow halfway (a graph submitted from
    // deep in a recursion) would strand its records and entries (runtime/stack.ts). Throws that RangeError
    // here instead, with nothing done.
    reserveStack();
    const result = node === undefined ? undefined : this.result(node);
    if (this.#submitted !== undefined) throw new Error("Cannot submit the graph as it was submitted already");
    const done = Promise.withResolvers<void>();
    this.#submitted = done.promise;
    this.#place(done);
    if (result === undefined) return done.promise;
    // The graph's own promise is the caller's only through the result: a failure it reports is not lost
    // (it is the result's too, or a sink's the caller did not ask for).
    done.promise.catch(() => {});
    return result;
  }

  /** {@link TaskGraph.submit}'s work: checks, encodes, places; settles `done` when every entry settled. */
  #place(done: PromiseWithResolvers<void>): void {
    const host = this.#host;
    const nodes = this.#nodes;
    const refuse = (error: unknown) => {
      for (const built of nodes) built.asked?.reject(error);
      done.reject(error);
    };
    // A refusal after the first entries were opened (a later node's task unknown, or its constants not
    // encodable): those entries are counted pending in the ledger, and no record will ever settle them;
    // settled here with the refusal, or the pool's drain and close would wait for them for ever. The
    // graph's promises first: an entry's settle counts the graph's open entries down, and its last would
    // resolve `done`.
    const refuseOpened = (error: unknown) => {
      refuse(error);
      for (const built of nodes) if (built.entry !== undefined) host.ledger.settle(built.entry, Settled.ERROR, error);
    };
    if (nodes.length === 0) {
      done.resolve();
      return;
    }
    if (!host.open()) return refuse(host.closedError(nodes[0].node.task));
    const signal = this.#signal;
    if (signal !== undefined && signalAborted(signal)) return refuse(signalReason(signal));
    const cancellable = signal !== undefined || this.#timeout !== undefined;
    // With a progress handler every node reports (PROGRESS) and its record comes back (RETURN), as a
    // cancellable graph's do: the record's return is what ends its progress (its cell is read a last time
    // then, and the record unwatched: completion.ts, producer/progress_reader.ts), exactly as a task's settle does.
    const onProgress = this.#onProgress;
    let open = 0;
    let firstFailure: { error: unknown } | undefined;
    const settled = () => {
      if (--open > 0) return;
      if (firstFailure !== undefined) done.reject(firstFailure.error);
      else done.resolve();
    };
    let cancelled: { reason: unknown } | undefined;
    // The last node's task and encoded constants, reused by a node with the same (see samePrimitives).
    let lastTask: string | undefined = undefined;
    let lastTaskId: number | undefined = undefined;
    let lastArgs: unknown[] | undefined = undefined;
    let bytes: Uint8Array = NOT_ENCODED;
    const constants = new ConstantBytes();
    for (const built of nodes) {
      const task = built.node.task;
      const taskId: number | undefined = task === lastTask ? lastTaskId : host.taskId(task);
      if (taskId === undefined) return refuseOpened(new TaskNotFoundError(task, host.taskNames));
      lastTask = task;
      lastTaskId = taskId;
      if (!samePrimitives(built.args, lastArgs)) {
        try {
          bytes = constants.add(host.encode(built.args));
        } catch (error) {
          return refuseOpened(error);
        }
        lastArgs = built.args;
      }
      const sink = built.dependants === 0;
      const asked = built.asked;
      const returns = asked !== undefined || sink || cancellable || onProgress !== undefined;
      const flags = (asked === undefined ? TaskFlags.QUIET : 0) | (returns ? TaskFlags.RETURN : 0) |
        (onProgress !== undefined ? TaskFlags.PROGRESS : 0);
      let entry: Entry | undefined;
      if (returns) {
        open++;
        const number = built.node.number;
        entry = host.ledger.open(task, taskId, (value) => {
          asked?.resolve(value);
          settled();
        }, (error) => {
          const reason = this.#reason(number, error, cancelled);
          if (asked !== undefined) asked.reject(reason);
          else if (sink && firstFailure === undefined) firstFailure = { error: reason };
          settled();
        });
        if (onProgress !== undefined) {
          // Watched at its placement (submit.ts); the reader calls it with each value read from its cell.
          const node = built.node;
          entry.onProgress = (value) => onProgress(value, node);
        }
      }
      built.taskId = taskId;
      built.bytes = bytes;
      built.flags = flags;
      built.entry = entry;
    }
    // (The encodes ran getters, user code: the pool may have closed meanwhile.)
    const refused = host.open() ? placeGraph(host, nodes) : host.closedError(nodes[0].node.task);
    // Nothing was placed: the entries opened above settle with the refusal (no record to free).
    if (refused !== undefined) return refuseOpened(refused);
    // Placed: the constants are in the records now. Not kept while the graph runs (the nodes are, for its
    // promises and its cancellation): less for this thread's young-generation collections to copy.
    for (const built of nodes) {
      built.args = NO_ARGS;
      built.bytes = NOT_ENCODED;
    }
    if (!cancellable) return;
    // The graph's cancellation: its signal, its timeout (counted from now).
    const cancel = (reason: unknown, timedOut: boolean) => {
      if (cancelled !== undefined) return;
      cancelled = { reason };
      cancelGraph(host, nodes, timedOut);
    };
    const stops: (() => void)[] = [];
    if (this.#timeout !== undefined) {
      const ms = this.#timeout;
      stops.push(backgroundTimeout(() => cancel(timeoutError(`The graph did not finish within ${ms} ms`), true), ms));
    }
    if (signal !== undefined) {
      const onAbort = () => cancel(signalReason(signal), false);
      (signal as EventTarget).addEventListener("abort", onAbort, { once: true });
      stops.push(() => (signal as EventTarget).removeEventListener("abort", onAbort));
    }
    const stop = () => {
      for (const s of stops) s();
    };
    done.promise.then(stop, stop);
  }

  /** What a node's promise rejects with, from what its record carried back. */
  #reason(number: number, error: unknown, cancelled: { reason: unknown } | undefined): unknown {
    if (typeof error !== "object" || error === null || !(GRAPH_INPUT in error)) return error;
    const failure = error as InputFailure;
    const cause = failure[GRAPH_INPUT];
    if (cause === CANCEL) return cancelled?.reason ?? new DOMException("The graph was cancelled", "AbortError");
    const task = this.#nodes[number - 1].node.task;
    let inputError: unknown = undefined;
    if (failure.bytes !== undefined) {
      try {
        inputError = this.#host.decode(failure.bytes);
      } catch (error) {
        inputError = error; // (a value that cannot be decoded here: why, as the cause)
      }
    }
    return new GraphInputError(task, number, cause, this.#nodes[cause - 1].node.task, inputError);
  }
}
