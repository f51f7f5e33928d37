/**
 * A task graph's submission and cancellation, on the thread that submits it (spec/Graph.tla:
 * SubmitPushRoots, CancelCasNode).
 *
 * What it owns: placing a built graph in shared memory, all at once, and visiting its nodes to cancel them.
 * Placing takes one record per node and one per edge (an argument slot: the record an input's walker writes
 * its result into, for one dependant), writes every record (a node's task, constant arguments, number,
 * flags, level; its count of inputs and its lists of edges and slots, `graph/words.ts`; a non-root node
 * WAITING), and only then publishes the roots: QUEUED, pushed into their level's injector. Until that push
 * no other thread can reach any of the records, so every write before it is plain.
 *
 * Invariants:
 * - A graph is placed whole or not at all: if the records or blocks it needs are not free, everything it
 *   took goes back and it is refused with a RangeError (no backlog: a graph larger than the free table
 *   cannot wait for its own nodes to finish).
 * - A node's record is the graph's until its walker frees it (a node nobody reads) or its completion
 *   reaches this thread, which frees it and then settles its ledger entry. A graph that can be cancelled
 *   has every node's record come back here (`TaskFlags.RETURN`), each with an entry, so that the
 *   cancellation's visit touches only records that are still the graph's (their entries unsettled), never
 *   one another task holds now. So does a graph with a progress handler (`TaskFlags.PROGRESS` too): each
 *   node's cell is watched before the roots are published, and read a last time at its record's return.
 * - The cancellation's compare-exchange from WAITING or QUEUED to CANCELLED races the zero-reacher's from
 *   WAITING (graph/walk.ts) and the taker's from QUEUED (worker/runner.ts): exactly one wins. The loser,
 *   if it is a worker, owns the CANCELLED node and walks it; this thread walks nothing.
 *
 * Threads: the thread of the graph's producer (the owner's, or a producer's in another thread).
 *
 * @module
 */

import { mem } from "../protocol/atomics.ts";
import type { LevelIndex } from "../protocol/levels.ts";
import type { GraphHost } from "../producer/graph_host.ts";
import type { Entry } from "../producer/ledger.ts";
import { NO_RECORD, TaskFlags, TaskState, type TaskTable } from "../record/task.ts";
import { SLOT_EMPTY } from "./walk.ts";
import { GraphRecords, NO_EDGE } from "./words.ts";

/** One node as its submission places it. */
export interface PlacedNode {
  /** Its number in its graph, from 1. */
  readonly number: number;
  /** Its task's name. */
  readonly task: string;
  /** Its task's id. */
  readonly taskId: number;
  /** Its encoded constant arguments (the inputs' positions empty). */
  readonly bytes: Uint8Array;
  /** Its inputs: the input node's number and the argument position it fills. */
  readonly inputs: readonly { readonly node: number; readonly position: number }[];
  /** Its priority level. */
  readonly level: LevelIndex;
  /** TaskFlags beyond GRAPH (QUIET, RETURN). */
  readonly flags: number;
  /** Its ledger entry, if its record comes back with an outcome the graph reads; placed here. */
  readonly entry: Entry | undefined;
  /** Its record's handle once placed. */
  handle: number;
}

/**
 * Places a graph's nodes (in number order: an input before its dependants) and publishes its roots. Runs
 * no user code.
 *
 * @param host The producer's parts.
 * @param nodes The nodes, `nodes[i].number === i + 1`.
 * @returns Undefined once placed; else the RangeError that refuses it (nothing was placed).
 */
export function placeGraph(host: GraphHost, nodes: PlacedNode[]): RangeError | undefined {
  const table = host.table;
  const fields = table.fields;
  const graph = new GraphRecords(host.graph);
  const count = nodes.length;
  let edges = 0;
  for (let n = 0; n < count; n++) edges += nodes[n].inputs.length;
  const total = count + edges;
  // One pass over the records, each taken, then written at once (a graph's records are more than a core's
  // cache holds: a pass for the taking, one for the payloads and one for the words each missed on every
  // record). The graph is still placed whole or not at all: a record or a block not free, everything taken
  // so far goes back; nobody else saw any of it.
  const taken = new Int32Array(total);
  let t = 0;
  const noRecord = () => {
    giveBack(table, taken, t);
    return new RangeError(
      `Cannot submit the graph as it needs ${total} task records (${count} nodes, ${edges} edges) and only ${t} are free: raise the pool's 'taskCapacity', or submit the graph in parts`,
    );
  };
  // Plain writes, in number order (an input is written before its dependants, whose edges push at the
  // head of its list): nobody else can reach these records before the roots' push below publishes them.
  const origin = host.origin;
  // With metrics: every node's submission time, the graph's (one clock read), published with the rest.
  const metrics = host.metrics;
  const submittedAt = metrics === undefined ? 0 : metrics.now();
  for (let n = 0; n < count; n++) {
    const node = nodes[n];
    const handle = table.allocate();
    if (handle === NO_RECORD) return noRecord();
    taken[t++] = handle;
    const index = table.indexOf(handle);
    if (!table.writePayload(index, node.bytes)) {
      giveBack(table, taken, t);
      return new RangeError(
        `Cannot submit the graph as its nodes' arguments need more overflow blocks than are free: raise the pool's 'payloadMemory', or submit the graph in parts`,
      );
    }
    node.handle = handle;
    const inputs = node.inputs;
    fields.setTask(index, node.taskId);
    fields.setOrigin(index, origin);
    fields.setId(index, node.number);
    fields.setFlags(index, TaskFlags.GRAPH | node.flags);
    fields.setLevel(index, node.level);
    if (metrics !== undefined) metrics.submitted(index, submittedAt);
    graph.setPending(index, inputs.length);
    graph.setCause(index, 0);
    graph.setNextEdge(index, NO_EDGE);
    let slots = NO_EDGE;
    for (let k = 0; k < inputs.length; k++) {
      const input = inputs[k];
      const slot = table.allocate();
      if (slot === NO_RECORD) return noRecord();
      taken[t++] = slot;
      const at = table.indexOf(slot);
      const from = table.indexOf(nodes[input.node - 1].handle);
      fields.setState(at, TaskState.SLOT);
      fields.setOrigin(at, origin);
      fields.setPayloadLength(at, 0);
      fields.setOutcome(at, SLOT_EMPTY);
      graph.setTarget(at, handle);
      graph.setPosition(at, input.position);
      graph.setSource(at, input.node);
      // Pushed at the head of the input's out-edges and of the dependant's slots.
      graph.setNextEdge(at, graph.nextEdge(from));
      graph.setNextEdge(from, slot);
      graph.setNextSlot(at, slots);
      slots = slot;
    }
    graph.setNextSlot(index, slots);
    if (inputs.length > 0) fields.setState(index, TaskState.WAITING);
  }
  // Placed whole: the ledger's entries now (a refusal above had opened none of its records to them).
  for (let n = 0; n < count; n++) {
    const node = nodes[n];
    const entry = node.entry;
    if (entry === undefined) continue;
    const index = table.indexOf(node.handle);
    entry.handle = node.handle;
    entry.level = node.level;
    // A graph with a progress handler (flag PROGRESS, set above): watched before any node is published,
    // as a task is before its QUEUED store (submission.ts), so that no report lands in an unwatched cell.
    if (entry.onProgress !== undefined) host.watch(index);
    host.ledger.placed[index] = entry;
  }
  // Publishes every record written above to the worker that pops a root (and, through the walks, to the
  // workers of the rest).
  for (let n = 0; n < count; n++) {
    const node = nodes[n];
    if (node.inputs.length > 0) continue;
    fields.storeState(table.indexOf(node.handle), TaskState.QUEUED);
    host.levels.pushPatiently(node.handle, node.level); // spec: SubmitPushRoots
  }
  host.sleep.newWork();
  host.arm();
  return undefined;
}

/** A refused placement: the first `n` records taken go back (their payloads, if written, with them). */
function giveBack(table: TaskTable, taken: Int32Array, n: number): void {
  for (let k = 0; k < n; k++) table.release(table.indexOf(taken[k]));
}

/**
 * Cancels a placed graph (its signal fired, or its timeout passed): every node not started is moved to
 * CANCELLED (its worker, the one that finds it so, walks it and cancels its dependants in turn); a running
 * node is marked aborted and its worker told, so that its signal fires. Only nodes whose records this
 * thread has not freed are visited (every node of a cancellable graph has an entry, and comes back here).
 *
 * @param host The producer's parts.
 * @param nodes The graph's nodes, placed.
 * @param timedOut Whether a timeout cancels it (its running nodes' signals say TimeoutError).
 */
export function cancelGraph(host: GraphHost, nodes: readonly PlacedNode[], timedOut: boolean): void {
  const table = host.table;
  const words = table.words;
  for (const node of nodes) {
    const handle = node.handle;
    // Its completion came (this thread freed the record, then settled the entry), or the pool settled it
    // (terminate, a death): not the graph's record any more, or not to be touched.
    if (handle < 0 || node.entry === undefined || node.entry.settled) continue;
    const index = table.indexOf(handle);
    const state = table.fields.stateWord(index);
    let was = mem.compareExchange(words, state, TaskState.WAITING, TaskState.CANCELLED); // spec: CancelCasNode
    if (was === TaskState.QUEUED) was = mem.compareExchange(words, state, TaskState.QUEUED, TaskState.CANCELLED);
    if (was !== TaskState.RUNNING) continue;
    // Running: it runs on, and sees its signal (as a running task's abort does, cancellation.ts).
    table.fields.orFlags(index, TaskFlags.ABORTED | (timedOut ? TaskFlags.TIMED_OUT : 0));
    const worker = table.fields.loadWorker(index);
    if (worker >= 0) host.abort(worker, handle);
  }
}

/**
 * The owner of an elastic pool left with no worker live or starting (owner.ts `noWorkerLive`): every queued
 * node of every graph (of any producer) moves from QUEUED to CANCELLED (spec: CancelCasNode), so that a
 * worker started later walks it (its dependants cancelled, the records that come back freed by their
 * producers, whose entries the no-worker note rejected) and runs none of them. The nodes with an entry
 * their producer cancels too (producer.ts `rejectForNoWorkers`); a root or a node whose count reached zero
 * has no entry if no one asked for it, and only this scan reaches it.
 *
 * Why a scan of every record is safe here: with no worker live, and none starting while this runs (only
 * the owner starts workers, and this runs on it), no record leaves QUEUED but by a cancellation, and a
 * queued graph node's record cannot be freed and reused meanwhile; a producer in another thread that
 * places a graph meanwhile has its roots cancelled too, and the owner's note, sent after this scan,
 * rejects that graph's entries. Runs no user code.
 *
 * @param table The owner's task table (the pool's records).
 * @returns How many nodes it cancelled.
 *
 * @example Usage
 * ```ts ignore
 * producer.rejectForNoWorkers(error, false);
 * cancelQueuedNodes(producer.table); // before the producers in other threads are told
 * ```
 */
export function cancelQueuedNodes(table: TaskTable): number {
  const words = table.words;
  const fields = table.fields;
  let cancelled = 0;
  for (let index = 0; index <= table.indexMask; index++) {
    const state = fields.stateWord(index);
    if (mem.load(words, state) !== TaskState.QUEUED) continue;
    if ((fields.loadFlags(index) & TaskFlags.GRAPH) === 0) continue;
    // The graph's cancellation's compare-exchange (cancelGraph's, above), on a node nobody can take now.
    if (mem.compareExchange(words, state, TaskState.QUEUED, TaskState.CANCELLED) === TaskState.QUEUED) cancelled++;
  }
  return cancelled;
}
