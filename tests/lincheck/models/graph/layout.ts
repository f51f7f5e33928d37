/**
 * The graph model's layout: where the controller's side (`model.ts`) and the simulated threads
 * (`thread.ts`) find the code under test's words — one real `lib/protocol/deque.ts` region per worker, the
 * graph words (`GraphWords`, {@link GRAPH_WORDS} a record) and the task records (`RecordWords` and an inline
 * payload) — and the test's own (what each node did: its starts, what it gathered, how it settled; which
 * records were freed). The gate words and states are the kernel's (`../../kernel/words.ts`).
 *
 * Handles are those of a `TaskTable` of {@link GCAPACITY} records, generation 1: record `i` is handle
 * `GCAPACITY + i` (never 0, never negative), so `handle & (GCAPACITY - 1)` is its index.
 *
 * @module
 */

import { GRAPH_WORDS, RECORD_HEADER_WORDS } from "../../../../lib/protocol/layout.ts";
import { MODEL_BYTES } from "../../kernel/words.ts";

/** Records in a run (nodes and argument slots together), at most. */
export const GCAPACITY = 16;
/** Nodes of a scenario, at most (numbered from 1). */
export const GMAX_NODES = 8;
/** Inputs of one node, at most. */
export const GMAX_INPUTS = 3;
/** Worker threads, at most (each with its deque); the owner, if any, is the thread after them. */
export const GMAX_WORKERS = 3;
/** Capacity of each worker's deque (every node of a scenario fits). */
export const GDEQUE_CAPACITY = 8;
/** Byte offset of worker `w`'s deque region. */
export function gdequeBytes(w: number): number {
  return MODEL_BYTES + w * 512;
}
/** Byte offset of the graph words ({@link GRAPH_WORDS} per record). */
export const GGRAPH_BYTES = 6144;
/** Byte offset of the test's own words ({@link GWork}). */
export const GWORK_BYTES = 8192;
export const GWORK_WORDS = 1024;
/** Byte offset of the task records. */
export const GRECORDS_BYTES = 12288;
/** Int32 words per record: the header (`RecordWords`) and an inline payload (an encoded error fits). */
export const GRECORD_WORDS = 512;
/** Bytes of a record's inline payload. */
export const GINLINE_BYTES = (GRECORD_WORDS - RECORD_HEADER_WORDS) * 4;
export const GBUFFER_BYTES = GRECORDS_BYTES + GCAPACITY * GRECORD_WORDS * 4;
/** Words of the graph region. */
export const GGRAPH_WORDS = GCAPACITY * GRAPH_WORDS;

/** The handle of record `index`. */
export function handleOf(index: number): number {
  return GCAPACITY + index;
}
/** The record index of a handle. */
export function indexOf(handle: number): number {
  return handle & (GCAPACITY - 1);
}

/** The test's words, read and written by the threads with plain `Atomics` (bookkeeping, not scheduled). */
export const GWork = Object.freeze({
  /** Nodes settled so far (each publish): a worker stops looking for work once it reaches {@link NODES}. */
  SETTLED_TOTAL: 0,
  /** The scenario's node count. */
  NODES: 1,
  /** How many times the owner's cancellation told a worker its running node was aborted. */
  ABORTS: 2,
  /** The scenario's worker count. */
  WORKERS: 3,
  /** FREED + i: how many times record i was freed (`releaseHandle`). */
  FREED: 16,
  /** Per node n (1 …): NODE + n * NODE_WORDS, its words ({@link GNodeWord}). */
  NODE: 64,
});
export const NODE_WORDS = 16;

/** A node's words in the test's part, at GWork.NODE + n * NODE_WORDS. */
export const GNodeWord = Object.freeze({
  /** Set by the controller: its record's handle. */
  HANDLE: 0,
  /** Set by the controller: 1 if its task throws. */
  FAILS: 1,
  /** Set by the controller: its inputs' count, then their node numbers, by argument position. */
  INPUTS: 2,
  INPUT: 3,
  /** Starts (a claim that went on to gather its arguments). */
  STARTS: 8,
  /** At its (first) start: 1 if every argument it gathered was its input's result, else 2. */
  ARGS: 9,
  /** Publishes of its record (its settle: exactly one). */
  SETTLES: 10,
  /** How it settled ({@link Settled}). */
  KIND: 11,
  /** A node rejected by an input: the cause its outcome names (a node number, or CANCEL). */
  CAUSE: 12,
});

/** How a node settled, as its published record says. */
export const Settled = Object.freeze({
  NONE: 0,
  /** It ran and returned its value (node n returns 10 n). */
  VALUE: 1,
  /** It failed by itself: its task threw, or its worker died running it. */
  OWN_ERROR: 2,
  /** Rejected without running: an input failed (CAUSE names the failed node). */
  INPUT: 3,
  /** Rejected without running: cancelled. */
  CANCELLED: 4,
  /** It ran and returned something else than its value (its arguments were wrong). */
  WRONG_VALUE: 5,
});

/** What a simulated thread runs. */
export const GRole = Object.freeze({
  NONE: 0,
  /** A worker: PARAM1 its worker index (its deque). Pops, else steals, runs graph nodes, until all settled. */
  WORKER: 1,
  /**
   * The owner: PARAM1 the node whose worker died running it (0: none), walked by `GraphWalker.died`;
   * PARAM2 1 to cancel the graph (`cancelGraph`) after that.
   */
  OWNER: 2,
});

/** What a node returns: 10 times its number (its inputs' results are checked at its start instead). */
export function valueOf(node: number): number {
  return 10 * node;
}
