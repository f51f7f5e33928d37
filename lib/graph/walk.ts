/**
 * The walk of a settled graph node, on the worker that settled it: its result into each dependant's
 * argument slot, one atomic decrement of each dependant's count, and the dependant whose count this worker
 * took to zero onto this worker's own deque (spec/Graph.tla, spec/docs/Graph.md). No message, no step of
 * the submitting thread: a continuation starts where its last input finished, as a fork does.
 *
 * What it owns: the walk and its local stack of settled nodes still to walk (the dependants this worker
 * rejected or found cancelled: walked in turn, not by recursion), and the gathering of a node's arguments
 * from its slots at its start.
 *
 * Invariants (the spec's, each access named after its action):
 * - A node settles once and is walked once, by whoever settled it or found it settled: its own worker when
 *   its code returns or throws, the worker whose decrement took its count to zero and rejected it (an input
 *   failed) or found it CANCELLED (the owner's cancellation won), the worker that took a CANCELLED root.
 * - For each dependant, the slot is written (a resolved input: its result; a failed one: its cause, by a
 *   compare-exchange from 0, and, if that named it, its error) BEFORE the decrement: the decrement that may
 *   let the dependant start publishes them (Atomics are sequentially consistent).
 * - The edge's words (next edge, dependant) are read before the decrement: after it, the dependant may
 *   start on another worker and free its slots.
 * - The decrement that reads 1 owns the dependant: with no cause, its compare-exchange from WAITING to
 *   QUEUED and the push onto this worker's deque; with a cause, from WAITING to REJECTED or CANCELLED; a
 *   compare-exchange that finds CANCELLED (the owner's cancellation won) leaves it ours to walk.
 * - After its walk, a node's record goes back: to its submitter's completion queue if the submitter reads
 *   it (a result asked for, a sink, whose error or end the graph reports), else freed here. A node's slots
 *   are freed by whoever settles it (its worker at its start, its walker if it never runs).
 *
 * A worker's death while a node runs: the owner's recovery rejects the node and walks it with a walker of
 * its own ({@link GraphWalker.died}: no deque; its walks only reject). A walk has no repair, so none may be
 * cut short by the stack's limit: a worker runs nodes from the top of its loop, or inside a join's wait
 * after reserving stack (worker/runner.ts `execute`; tests/pool/graph_join_depth_test.ts). Not covered: a
 * thread that dies between two steps of a walk (not a forced kill, which the kill guard keeps out of the
 * pool's steps; a fatal error at that instant).
 *
 * Threads: made and used by one thread: a worker (the runner calls it), or the owner (its recovery).
 *
 * @module
 */

import { decode, type Encoder } from "../codec/codec.ts";
import { encodeOutcome } from "../codec/outcome.ts";
import type { Deque } from "../protocol/deque.ts";
import type { Levels } from "../protocol/levels.ts";
import type { Sleep } from "../protocol/sleep.ts";
import { Outcome, TaskFlags, TaskState, type TaskTable } from "../record/task.ts";
import { CANCEL, type GraphRecords, NO_EDGE } from "./words.ts";

/**
 * The key of the value a node rejected without running carries back to its submitter (an outcome ERROR):
 * `{ [GRAPH_INPUT]: cause, bytes }`, cause the failed node's number (`bytes` its error, as encoded: decoded
 * only by the submitter, with its error classes) or CANCEL. graph/graph.ts turns it into a GraphInputError
 * or the cancellation's reason.
 */
export const GRAPH_INPUT = "filch.graphInput";

/** The outcome word of a slot nobody wrote an error into. */
export const SLOT_EMPTY = -1;

/** What a {@link GraphWalker} works with. */
export interface GraphWalkerParts {
  /** The task records. */
  readonly table: TaskTable;
  /** The graph words. */
  readonly graph: GraphRecords;
  /**
   * This worker's deque (where a node whose count it took to zero goes); undefined on the owner, whose
   * walks (after a death) only reject, and so never queue a node.
   */
  readonly deque: Deque | undefined;
  /** The injectors (a full deque overflows into its node's level). */
  readonly levels: Levels;
  /** The sleep protocol (a pushed node is new work for thieves). */
  readonly sleep: Sleep;
  /** The encoder of results (the runner's): holds a node's outcome while its walk copies it. */
  readonly encoder: Encoder;
  /** Resolves a SharedArrayBuffer passed by reference (a slot's value may name one), if this thread can. */
  readonly resolve: ((id: number) => SharedArrayBuffer) | undefined;
  /** Waits a little for overflow blocks to free up (a slot's write found none). */
  readonly waitForBlocks: () => void;
  /** Publishes a reported node: its DONE store and its completion push (marks.ts `publishDone`). */
  readonly publish: (handle: number, index: number) => void;
  /** After records were freed with no completion: wakes a producer that waits for a record, if any. */
  readonly freed: () => void;
}

/**
 * Walks settled graph nodes on one worker.
 *
 * @example Usage
 * ```ts ignore
 * // In Runner.finish, once the outcome is encoded:
 * if ((flags & TaskFlags.GRAPH) !== 0) return walker.finished(handle, index, outcome, flags);
 * ```
 */
export class GraphWalker {
  private readonly table: TaskTable;
  private readonly graph: GraphRecords;
  private readonly deque: Deque | undefined;
  private readonly levels: Levels;
  private readonly sleep: Sleep;
  private readonly encoder: Encoder;
  private readonly resolve: ((id: number) => SharedArrayBuffer) | undefined;
  private readonly waitForBlocks: () => void;
  private readonly publish: (handle: number, index: number) => void;
  private readonly freedRecords: () => void;
  /** Settled nodes this worker owns and has still to walk (handles). */
  private readonly owned: number[] = [];

  /** @param parts What it works with. */
  constructor(parts: GraphWalkerParts) {
    this.table = parts.table;
    this.graph = parts.graph;
    this.deque = parts.deque;
    this.levels = parts.levels;
    this.sleep = parts.sleep;
    this.encoder = parts.encoder;
    this.resolve = parts.resolve;
    this.waitForBlocks = parts.waitForBlocks;
    this.publish = parts.publish;
    this.freedRecords = parts.freed;
  }

  /**
   * This thread, at a node's start (claimed: RUNNING). Fills `args` (its constant arguments, decoded from
   * its own payload) with its inputs' results from its slots, and frees the slots. A decode that throws
   * leaves them: a MissingBuffer (a result names a SharedArrayBuffer this worker has not received yet) for
   * the runner to start the node again once the buffer came, as for a task's own arguments; any other
   * error fails the node, and the runner frees them ({@link GraphWalker.freeSlots}).
   *
   * @param index The node's record index.
   * @param args Its arguments, the inputs' positions still empty.
   * @throws What a slot's decode throws, its slots kept.
   */
  gather(index: number, args: unknown[]): void {
    const table = this.table;
    const graph = this.graph;
    for (let slot = graph.nextSlot(index); slot !== NO_EDGE; slot = graph.nextSlot(table.indexOf(slot))) {
      const at = table.indexOf(slot);
      // Plain reads: ordered by the decrement that took our count to zero, which followed the write.
      args[graph.position(at)] = decode(
        table.payloadBytes(at),
        table.payloadStart(at),
        table.fields.payloadLength(at),
        this.resolve,
      );
    }
    this.freeSlots(index);
  }

  /**
   * This thread, in the runner's finish of a graph node, its outcome encoded (the encoder holds it). Settles
   * it, walks it, gives its record back (or publishes it to its submitter), then walks the nodes this walk
   * made ours.
   *
   * @param handle The node's handle.
   * @param index Its record index.
   * @param outcome VALUE or ERROR.
   * @param flags Its TaskFlags.
   */
  finished(handle: number, index: number, outcome: number, flags: number): void {
    const table = this.table;
    const failed = outcome !== Outcome.VALUE;
    // Nothing else moves a RUNNING node while its worker lives: a store is the compare-exchange.
    table.fields.storeState(index, failed ? TaskState.REJECTED : TaskState.DONE); // spec: FinishCasSettled
    const cause = failed ? table.fields.id(index) : 0;
    this.walkEdges(index, cause, this.encoder);
    this.release(handle, index, flags, () => {
      // A result nobody asked for is not sent (an error is: the graph reports a failed sink).
      if (!failed && (flags & TaskFlags.QUIET) !== 0) encodeOutcome(this.encoder, undefined, false);
      return failed ? Outcome.ERROR : Outcome.VALUE;
    });
    this.walkOwned();
  }

  /**
   * The owner, in its recovery after worker `dead` died running graph node `handle` (RUNNING, its worker
   * word the dead one's): rejects it with `error` naming itself and walks it like any failed node (its
   * dependants are rejected in turn, never queued); its record, if its submitter reads it, is published
   * with the error (the caller reports it), else freed.
   *
   * @param handle The node's handle.
   * @param error Its error (a WorkerCrashedError).
   */
  died(handle: number, error: Error): void {
    const table = this.table;
    const index = table.indexOf(handle);
    // The dead thread no longer moves it: a store is the compare-exchange from RUNNING.
    table.fields.storeState(index, TaskState.REJECTED);
    encodeOutcome(this.encoder, error, true);
    this.walkEdges(index, table.fields.id(index), this.encoder);
    this.release(handle, index, table.fields.loadFlags(index), () => Outcome.ERROR);
    this.walkOwned();
  }

  /**
   * This thread: a graph node whose claim found it CANCELLED (the owner's cancellation won the race with
   * our compare-exchange to RUNNING). Ours to walk: its dependants are cancelled in turn.
   *
   * @param handle The node's handle.
   */
  takeCancelled(handle: number): void {
    this.owned.push(handle);
    this.walkOwned();
  }

  /**
   * Walks the settled nodes this thread owns, one at a time (a local stack: a long chain of rejections
   * recurses nowhere).
   */
  private walkOwned(): void {
    const table = this.table;
    const graph = this.graph;
    const owned = this.owned;
    while (owned.length > 0) {
      const handle = owned.pop()!; // spec: WalkTakeOwned
      const index = table.indexOf(handle);
      const state = table.fields.loadState(index);
      const cause = state === TaskState.CANCELLED ? CANCEL : graph.loadCause(index);
      // The failed input's error, from the slot its walk named (a cancellation carries none).
      let source: { bytes: Uint8Array; from: number; length: number } | undefined;
      if (cause !== CANCEL) {
        for (let slot = graph.nextSlot(index); slot !== NO_EDGE; slot = graph.nextSlot(table.indexOf(slot))) {
          const at = table.indexOf(slot);
          if (table.fields.outcome(at) !== Outcome.ERROR) continue;
          const length = table.fields.payloadLength(at);
          source = {
            bytes: table.payloadBytes(at).slice(table.payloadStart(at), table.payloadStart(at) + length),
            from: 0,
            length,
          };
          break;
        }
      }
      this.walkEdges(index, cause, source);
      const flags = table.fields.loadFlags(index);
      // Its slots are ours to free: it never runs.
      this.freeSlots(index);
      this.release(handle, index, flags, () => {
        encodeOutcome(this.encoder, { [GRAPH_INPUT]: cause, bytes: source?.bytes }, true);
        return Outcome.ERROR;
      });
    }
  }

  /**
   * Walks node `index`'s out-edges: for each, publish or mark, then decrement; a dependant whose count we
   * took to zero is ours (queued and pushed, or to walk).
   *
   * @param index The settled node.
   * @param cause 0 (it resolved: `source` holds its result), its failed node's number (`source` holds that
   *   node's error, if any), or CANCEL.
   * @param source The bytes to copy into each slot (an encoder, or a range of bytes).
   */
  private walkEdges(
    index: number,
    cause: number,
    source: Encoder | { bytes: Uint8Array; from: number; length: number } | undefined,
  ): void {
    const table = this.table;
    const graph = this.graph;
    for (let edge = graph.nextEdge(index); edge !== NO_EDGE;) {
      const at = table.indexOf(edge);
      // Read before the decrement: after it, the dependant may start elsewhere and free this slot.
      const next = graph.nextEdge(at);
      const target = graph.target(at);
      const ti = table.indexOf(target);
      if (cause === 0) {
        this.writeSlot(at, source!);
        table.fields.setOutcome(at, Outcome.VALUE); // spec: WalkPublishArg
      } else if (graph.markCause(ti, cause) === 0 && source !== undefined) { // spec: WalkMarkCause
        // We named the cause: our slot carries its error, for the dependant's submitter or its dependants.
        this.writeSlot(at, source);
        table.fields.setOutcome(at, Outcome.ERROR);
      }
      if (graph.decrement(ti) === 1) this.own(target, ti); // spec: WalkDecrement
      edge = next;
    }
  }

  /** Our decrement took node `index`'s count to zero: it is ours to queue, or to walk. */
  private own(handle: number, index: number): void {
    const cause = this.graph.loadCause(index);
    const to = cause === 0 ? TaskState.QUEUED : cause === CANCEL ? TaskState.CANCELLED : TaskState.REJECTED;
    const found = this.table.fields.casState(index, TaskState.WAITING, to); // spec: ZeroCasState
    if (found === TaskState.WAITING && to === TaskState.QUEUED) {
      // Where thieves can take it; a full deque overflows into its level's injector, as a fork's cannot.
      if (this.deque === undefined || !this.deque.push(handle)) { // spec: ZeroPushDeque
        this.levels.pushPatiently(handle, this.table.levelOf(handle));
      }
      this.sleep.newWork();
      return;
    }
    // Rejected or cancelled by us, or found CANCELLED (the owner's cancellation won): ours to walk.
    this.owned.push(handle);
  }

  /** Writes `source` into slot `at`'s payload, waiting for overflow blocks if none is free. */
  private writeSlot(at: number, source: Encoder | { bytes: Uint8Array; from: number; length: number }): void {
    const table = this.table;
    for (;;) {
      const written = "copyTo" in source
        ? table.writeEncoded(at, source)
        : table.writeRange(at, source.bytes, source.from, source.length);
      if (written) return;
      this.waitForBlocks();
    }
  }

  /**
   * This thread. Frees node `index`'s argument slots: a node that never runs, or whose start failed.
   *
   * @param index The node's record index.
   */
  freeSlots(index: number): void {
    const table = this.table;
    for (let slot = this.graph.nextSlot(index); slot !== NO_EDGE;) {
      const next = this.graph.nextSlot(table.indexOf(slot));
      table.releaseHandle(slot);
      slot = next;
    }
  }

  /** Whether a node's record goes back to its submitter (RETURN: see graph/submit.ts). */
  private reported(flags: number): boolean {
    return (flags & TaskFlags.RETURN) !== 0;
  }

  /**
   * The walk done: the record to its submitter (its outcome encoded by `encode`, written, then the DONE
   * store and the completion push), or freed here.
   */
  private release(handle: number, index: number, flags: number, encode: () => number): void {
    const table = this.table;
    if (!this.reported(flags)) {
      table.releaseHandle(handle); // spec: ReleaseFree
      this.freedRecords();
      return;
    }
    const outcome = encode();
    while (!table.writeEncoded(index, this.encoder)) this.waitForBlocks();
    table.fields.setOutcome(index, outcome);
    this.publish(handle, index); // spec: ReleasePushCompletion
  }
}
