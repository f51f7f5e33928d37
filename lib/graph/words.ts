/**
 * The graph words of the task records (`GraphWords`, protocol/layout.ts): a thread's typed view of them,
 * one accessor per word and access kind, as `record/fields.ts` is for a record's own words.
 *
 * What it owns: the arithmetic from (record index, graph word) to a word of the graph region, and the facade
 * call each access makes. The protocol that moves them is spec/Graph.tla (spec/docs/Graph.md); who writes
 * each word, and when:
 * - a node's `pending`, `cause` (0), `nextEdge`, `nextSlot`, and an edge's `nextEdge`, `nextSlot`, `target`,
 *   `position`, `source`: its submitter (graph/submit.ts), plain writes, before the injector push that
 *   publishes the graph's roots; read-only after, but for `pending` and `cause`;
 * - a node's `pending`: each input's walker, one atomic subtraction (the one that reads 1 owns the node);
 * - a node's `cause`: a failed or cancelled input's walker, a compare-exchange from 0 (the first is named),
 *   read by the walker whose subtraction reached zero, after it (nobody writes it after the last one).
 *
 * Threads: any; each thread makes its own view (over `PoolMemory.graph`).
 *
 * @module
 */

import { mem } from "../protocol/atomics.ts";
import { GRAPH_WORDS, GraphWords } from "../protocol/layout.ts";

/** The cause word of a node whose input was cancelled (a node's number is from 1). */
export const CANCEL = -1;

/** The end of an edge list. */
export const NO_EDGE = -1;

/**
 * A thread's view of the graph words.
 *
 * @example Usage
 * ```ts
 * import { GraphRecords } from "./words.ts";
 * const graph = new GraphRecords(new Int32Array(new SharedArrayBuffer(4 * 8 * 4)));
 * graph.setPending(1, 2);
 * console.log(graph.decrement(1), graph.decrement(1)); // 2 1: the second owns node 1
 * ```
 */
export class GraphRecords {
  /** The graph region, as int32 words. */
  readonly words: Int32Array;

  /** @param words The graph region (`PoolMemory.graph`). */
  constructor(words: Int32Array) {
    this.words = words;
  }

  /** Plain write of a node's count of inputs (its submitter, before publication). */
  setPending(i: number, count: number): void {
    mem.write(this.words, i * GRAPH_WORDS + GraphWords.pending, count);
  }
  /** The atomic subtraction of one input's walk: returns the count it read (1: the caller owns the node). */
  decrement(i: number): number {
    return mem.sub(this.words, i * GRAPH_WORDS + GraphWords.pending, 1);
  }

  /** Plain write of a node's cause (its submitter: 0). */
  setCause(i: number, cause: number): void {
    mem.write(this.words, i * GRAPH_WORDS + GraphWords.cause, cause);
  }
  /** Compare-exchange of a node's cause from 0: returns what it found (0: this call named the cause). */
  markCause(i: number, cause: number): number {
    return mem.compareExchange(this.words, i * GRAPH_WORDS + GraphWords.cause, 0, cause);
  }
  /** Atomic read of a node's cause (the owner of the node, after the last decrement). */
  loadCause(i: number): number {
    return mem.load(this.words, i * GRAPH_WORDS + GraphWords.cause);
  }

  /** Plain read of a node's first out-edge, or an edge's next one (a handle, or {@link NO_EDGE}). */
  nextEdge(i: number): number {
    return mem.read(this.words, i * GRAPH_WORDS + GraphWords.nextEdge);
  }
  /** Plain write of the same (the submitter). */
  setNextEdge(i: number, edge: number): void {
    mem.write(this.words, i * GRAPH_WORDS + GraphWords.nextEdge, edge);
  }
  /** Plain read of a node's first argument slot, or a slot's next one (a handle, or {@link NO_EDGE}). */
  nextSlot(i: number): number {
    return mem.read(this.words, i * GRAPH_WORDS + GraphWords.nextSlot);
  }
  /** Plain write of the same (the submitter). */
  setNextSlot(i: number, slot: number): void {
    mem.write(this.words, i * GRAPH_WORDS + GraphWords.nextSlot, slot);
  }
  /** Plain read of an edge's dependant (a handle). */
  target(i: number): number {
    return mem.read(this.words, i * GRAPH_WORDS + GraphWords.target);
  }
  /** Plain write of the same (the submitter). */
  setTarget(i: number, handle: number): void {
    mem.write(this.words, i * GRAPH_WORDS + GraphWords.target, handle);
  }
  /** Plain read of an edge's argument position in its dependant's call. */
  position(i: number): number {
    return mem.read(this.words, i * GRAPH_WORDS + GraphWords.position);
  }
  /** Plain write of the same (the submitter). */
  setPosition(i: number, position: number): void {
    mem.write(this.words, i * GRAPH_WORDS + GraphWords.position, position);
  }
  /** Plain read of an edge's input (its node number). */
  source(i: number): number {
    return mem.read(this.words, i * GRAPH_WORDS + GraphWords.source);
  }
  /** Plain write of the same (the submitter). */
  setSource(i: number, node: number): void {
    mem.write(this.words, i * GRAPH_WORDS + GraphWords.source, node);
  }
}
