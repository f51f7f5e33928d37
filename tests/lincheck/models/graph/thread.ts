/**
 * A simulated thread of the graph model (`model.ts`): one program per run over the shipped
 * `lib/graph/walk.ts` (`GraphWalker`: `gather`, `finished`, `takeCancelled`, `died`) and `lib/graph/submit.ts`
 * (`cancelGraph`), with real `lib/protocol/deque.ts` deques, the real codec and the real `RecordFields` and
 * `GraphRecords` over the harness's buffer. The gate, its hand-shake and the loop over runs are the kernel's
 * (`../../kernel/gate.ts`).
 *
 * Programs (the role in the thread block):
 * - WORKER w: a `GraphWalker` over deque w. Pops its deque, else steals from the other workers' (the
 *   runner's order), and starts each node it took as `lib/worker/runner.ts` starts a graph node: the worker
 *   word, the compare-exchange from QUEUED to RUNNING (one that finds CANCELLED: `takeCancelled`), the flags
 *   (ABORTED: fails without running), the constant arguments decoded and `gather`; then the node's "task"
 *   (returns 10 n, or throws if the scenario says so), the outcome encoded (`encodeOutcome`) and
 *   `finished`. Until every node has settled; a take that found nothing is a poll (its first access a
 *   yield; the pool's worker would sleep).
 * - OWNER: `GraphWalker.died` of the node a dead worker left RUNNING (the owner's recovery), then, if asked,
 *   `cancelGraph` over every node (the graph's signal fired; no completion has been read, so every node's
 *   entry is unsettled).
 *
 * The stand-ins (what the pool's wiring gives a walker): the table (`table.ts`), `publish` (the test counts
 * the settle and reads what it published, then the DONE store: marks.ts `publishDone`'s, without the
 * completion push), `levels` (never used: a deque of {@link GDEQUE_CAPACITY} never fills), `sleep.newWork`
 * (nothing sleeps here), `waitForBlocks` (never: no overflow blocks).
 *
 * The gate schedules the code's plain reads and writes too (`mem.read`, `mem.write`: a slot's result, its
 * payload length and outcome, the edge words), each as one step, so that a write moved after the decrement
 * that publishes it can be seen by the node's start on another thread.
 *
 * @module
 */

import { decode, Encoder } from "../../../../lib/codec/codec.ts";
import { encodeOutcome } from "../../../../lib/codec/outcome.ts";
import { Deque, Stealer } from "../../../../lib/protocol/deque.ts";
import type { Int32View } from "../../../../lib/protocol/atomics.ts";
import { Outcome, RecordWords, TaskFlags, TaskState } from "../../../../lib/record/fields.ts";
import { GRAPH_INPUT, GraphWalker } from "../../../../lib/graph/walk.ts";
import { cancelGraph } from "../../../../lib/graph/submit.ts";
import { GraphRecords } from "../../../../lib/graph/words.ts";
import { abortError } from "../../../../lib/worker/signals.ts";
import { Fn } from "../../../../spec/trace/facade_codes.ts";
import { serveModel, type ThreadRun, WaitGate } from "../../kernel/gate.ts";
import {
  GDEQUE_CAPACITY,
  gdequeBytes,
  GGRAPH_BYTES,
  GGRAPH_WORDS,
  GNodeWord,
  GRECORD_WORDS,
  GRole,
  GWork,
  GWORK_BYTES,
  GWORK_WORDS,
  indexOf,
  NODE_WORDS,
  Settled,
  valueOf,
} from "./layout.ts";
import { GraphTable } from "./table.ts";

/** The gate, with the plain reads and writes scheduled as loads and stores (one step each). */
class GraphGate extends WaitGate {
  override read(view: Int32View, index: number): number {
    this.park(Fn.load, view, index, 0, 0);
    return this.done(view[index]);
  }
  override write(view: Int32View, index: number, value: number): void {
    this.park(Fn.store, view, index, value, 0);
    view[index] = value;
    this.done(value);
  }
}

function program({ buffer, gate, role, p1, p2 }: ThreadRun<GraphGate>): void {
  if (role === GRole.NONE) return;
  const work = new Int32Array(buffer, GWORK_BYTES, GWORK_WORDS);
  const table = new GraphTable(buffer);
  const graph = new GraphRecords(new Int32Array(buffer, GGRAPH_BYTES, GGRAPH_WORDS));
  const nodes = Atomics.load(work, GWork.NODES);
  // The node a record is (its id word: bookkeeping, not a step).
  const nodeOf = (index: number) => Atomics.load(table.words, index * GRECORD_WORDS + RecordWords.id);
  const encoder = new Encoder();
  const region = (w: number) => ({ buffer, byteOffset: gdequeBytes(w), capacity: GDEQUE_CAPACITY });
  const deque = role === GRole.WORKER ? new Deque(region(p1)) : undefined;
  const walker = new GraphWalker({
    table: table as never,
    graph,
    deque,
    levels: {
      pushPatiently: () => {
        throw new Error("a deque of the model filled up");
      },
    } as never,
    sleep: { newWork: () => {} } as never,
    encoder,
    resolve: undefined,
    waitForBlocks: () => {
      throw new Error("the model has no overflow blocks to wait for");
    },
    publish: (_handle, index) => {
      // The test's count, and what the record carries (thread-local reads: only this thread runs now).
      const node = nodeOf(index);
      const at = GWork.NODE + node * NODE_WORDS;
      const outcome = Atomics.load(table.words, index * GRECORD_WORDS + RecordWords.outcome);
      const length = Atomics.load(table.words, index * GRECORD_WORDS + RecordWords.payloadLength);
      const value = decode(table.bytes, table.payloadStart(index), length);
      let kind: number = Settled.VALUE;
      if (outcome !== Outcome.VALUE) {
        const cause = typeof value === "object" && value !== null && GRAPH_INPUT in value
          ? (value as Record<string, number>)[GRAPH_INPUT]
          : undefined;
        kind = cause === undefined ? Settled.OWN_ERROR : cause < 0 ? Settled.CANCELLED : Settled.INPUT;
        if (cause !== undefined) Atomics.store(work, at + GNodeWord.CAUSE, cause);
      } else if (value !== valueOf(node)) kind = Settled.WRONG_VALUE;
      Atomics.add(work, at + GNodeWord.SETTLES, 1);
      Atomics.store(work, at + GNodeWord.KIND, kind);
      Atomics.add(work, GWork.SETTLED_TOTAL, 1);
      // marks.ts publishDone's store (the completion push is the producers model's).
      table.fields.storeState(index, TaskState.DONE);
    },
    freed: () => {},
  });

  if (role === GRole.OWNER) {
    if (p1 !== 0) {
      const crashed = new Error(`the worker running node ${p1} died`);
      crashed.name = "WorkerCrashedError";
      crashed.stack = "";
      walker.died(Atomics.load(work, GWork.NODE + p1 * NODE_WORDS + GNodeWord.HANDLE), crashed);
    }
    if (p2 !== 0) {
      const placed = Array.from({ length: nodes }, (_, n) => ({
        handle: Atomics.load(work, GWork.NODE + (n + 1) * NODE_WORDS + GNodeWord.HANDLE),
        entry: { settled: false },
      }));
      const host = {
        table,
        abort: () => void Atomics.add(work, GWork.ABORTS, 1),
      };
      cancelGraph(host as never, placed as never, false);
    }
    return;
  }
  if (role !== GRole.WORKER) throw new Error(`unknown role ${role}`);
  const workers = Atomics.load(work, GWork.WORKERS);
  const stealers = Array.from({ length: workers }, (_, w) => (w === p1 ? undefined : new Stealer(region(w))));

  /** runner.ts's start of a graph node, and its finish. */
  const execute = (handle: number) => {
    const index = indexOf(handle);
    table.fields.storeWorker(index, p1);
    const before = table.fields.casState(index, TaskState.QUEUED, TaskState.RUNNING); // runner: ExecCasRunning
    if (before !== TaskState.QUEUED) {
      if (before === TaskState.CANCELLED && (table.fields.loadFlags(index) & TaskFlags.GRAPH) !== 0) {
        walker.takeCancelled(handle);
        return;
      }
      throw new Error(`took node record ${index} in state ${before}`);
    }
    const flags = table.fields.loadFlags(index);
    const node = nodeOf(index);
    const at = GWork.NODE + node * NODE_WORDS;
    let outcome: number = Outcome.VALUE;
    let value: unknown;
    if ((flags & TaskFlags.ABORTED) !== 0) {
      walker.freeSlots(index);
      outcome = Outcome.ERROR;
      value = abortError(flags);
    } else {
      let args: unknown[];
      try {
        args = decode(table.bytes, table.payloadStart(index), table.fields.payloadLength(index)) as unknown[];
        walker.gather(index, args);
      } catch (error) {
        walker.freeSlots(index);
        args = [error];
        outcome = Outcome.ERROR;
        value = error;
      }
      // The node starts (its task's code would run now): counted, and its arguments judged.
      const starts = Atomics.add(work, at + GNodeWord.STARTS, 1);
      if (starts === 0) {
        const inputs = Atomics.load(work, at + GNodeWord.INPUTS);
        let ok = outcome === Outcome.VALUE && args.length === inputs;
        for (let p = 0; ok && p < inputs; p++) {
          ok = args[p] === valueOf(Atomics.load(work, at + GNodeWord.INPUT + p));
        }
        Atomics.store(work, at + GNodeWord.ARGS, ok ? 1 : 2);
      }
      if (outcome === Outcome.VALUE) {
        if (Atomics.load(work, at + GNodeWord.FAILS) !== 0) {
          const failure = new Error(`node ${node} failed`);
          failure.stack = "";
          outcome = Outcome.ERROR;
          value = failure;
        } else value = valueOf(node);
      }
    }
    // runner.ts finish: one load of the graph flags, the outcome encoded, then the walk.
    const graphFlags = table.fields.loadFlags(index) & (TaskFlags.GRAPH | TaskFlags.QUIET | TaskFlags.RETURN);
    outcome = encodeOutcome(encoder, value, outcome === Outcome.ERROR);
    walker.finished(handle, index, outcome, graphFlags);
  };

  let polled = false;
  while (Atomics.load(work, GWork.SETTLED_TOTAL) < nodes) {
    gate.yieldNext = polled;
    let handle = deque!.pop();
    for (let k = 1; handle < 0 && k < workers; k++) {
      const s = stealers[(p1 + k) % workers];
      if (s !== undefined) handle = s.steal();
    }
    polled = handle < 0;
    if (polled) continue;
    execute(handle);
  }
}

// Last: the gate class above must be defined before the first set-up message makes one.
await serveModel<GraphGate>({
  program,
  gate: (buffer, thread, site) => new GraphGate(buffer, thread, site),
});
