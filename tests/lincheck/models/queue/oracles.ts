/**
 * The oracles every queue run is checked by, in the order a failure is attributed to them:
 *
 * 1. `no-exception` — no simulated thread threw, the run finished within its step bound, and the drain
 *    reached EMPTY.
 * 2. `no-duplicates` — no value was popped twice, and no pop returned a value that no push (returning
 *    true) put in: a phantom is a value word read before its producer wrote it, or a stale one.
 * 3. `conservation` — every value whose push returned true (pushPatiently always does) was popped
 *    exactly once by the end of the drain.
 * 4. `fifo-per-producer` — consumers claim one producer's values in the order it pushed them
 *    (`FifoPerProducer` of spec/Injector.tla): a pop's claim is its successful write of `head`.
 * 5. `linearizability` — the successful operations (pushes that returned true, pops that returned a
 *    value; setup and drain included) have a linearization that a sequential FIFO queue of the same
 *    capacity accepts: Wing & Gong's search with Lowe's memoization. As in `Refinement` of
 *    spec/Injector.tla, EMPTY and a failed push are left out here (they are not linearizable, see 6 and
 *    7) and judged by their own oracles instead.
 * 6. `empty-justified` — a pop that returned EMPTY did so at a moment of its call when the queue was
 *    empty (`head = tail`) or the producer of position `head` had claimed it and not yet published it
 *    (`PopEmptyJustified`; spec/docs/Injector.md: the queue's one non-linearizable EMPTY). A producer is
 *    "claimed" from its successful write of `tail` (PushCasTail) to its next store of a sequence word
 *    (PushPublishSeq).
 * 7. `full-justified` — a push that returned false did so at a moment of its call when `capacity`
 *    positions were taken counting from the oldest one not yet released: `tail - min(head, positions
 *    held by consumers) >= capacity` (`PushFailJustified`: the queue is full, or the consumer of the
 *    position a lap back has claimed it and not yet released its slot). A consumer "holds" a position
 *    from its successful write of `head` (PopCasHead) to its next store of a sequence word
 *    (PopReleaseSeq). A run that stalled (every thread left a patient push failing, see `scenario.ts`)
 *    must have stalled on such a full queue.
 *
 * Oracles 4, 6 and 7 read the claim/publish/release marks off the recorded accesses (the controller sees
 * every write), counting positions from the run's start rather than reading the words; 2, 3 and 5 see
 * only what operations returned.
 *
 * @module
 */

import { InjectorWords } from "../../../../lib/protocol/layout.ts";
import { FN_NAMES } from "../../../../spec/trace/facade_codes.ts";
import {
  describeQueueOp,
  pushedValues,
  type QueueExecution,
  type QueueHistoryOp,
  type QueueScenario,
  queueThreadName,
} from "./scenario.ts";

/** QUEUE_EMPTY as the queue returns it. */
export const QUEUE_EMPTY = -1;

/** Queue oracle names, in attribution order. */
export const QUEUE_ORACLES = [
  "no-exception",
  "no-duplicates",
  "conservation",
  "fifo-per-producer",
  "linearizability",
  "empty-justified",
  "full-justified",
] as const;
export type QueueOracleName = typeof QUEUE_ORACLES[number];

/** A failed oracle with what it saw. */
export interface QueueViolation {
  oracle: QueueOracleName;
  detail: string;
}

/** Runs every oracle; returns the violations in attribution order (empty: the run is correct). */
export function checkQueueExecution(exec: QueueExecution, scenario: QueueScenario): QueueViolation[] {
  const out: QueueViolation[] = [];
  if (exec.failures.length > 0) out.push({ oracle: "no-exception", detail: exec.failures.join("; ") });
  if (exec.aborted) out.push({ oracle: "no-exception", detail: `step bound hit after ${exec.steps} steps` });
  if (exec.drainUnbounded) out.push({ oracle: "no-exception", detail: "the drain did not reach EMPTY" });
  out.push(...checkQueueValues(exec));
  if (!exec.aborted && exec.failures.length === 0) {
    const marks = replayMarks(exec, scenario);
    const fifo = checkFifoPerProducer(exec, scenario, marks);
    if (fifo !== null) out.push({ oracle: "fifo-per-producer", detail: fifo });
    const lin = checkQueueLinearizable(exec.history, scenario.capacity);
    if (lin !== null) out.push({ oracle: "linearizability", detail: lin });
    if (exec.stalled && !fullJustified(marks.moments[exec.steps], scenario.capacity)) {
      out.push({
        oracle: "full-justified",
        detail: `every thread left was a pushPatiently failing again and again on a queue that is not full ` +
          `(${describeMoment(marks.moments[exec.steps])})`,
      });
    }
    for (const h of exec.history) {
      if (h.thread < 0) continue;
      if (h.kind === "pop" && h.ret === QUEUE_EMPTY && !someMoment(h, marks, emptyJustified)) {
        out.push({
          oracle: "empty-justified",
          detail: `${describeQueueOp(h)}: at no step of the call was the queue empty or head's producer between ` +
            `its claim and its publish (${describeMarks(h, marks)})`,
        });
      }
      if (h.kind === "push" && h.ret === 0 && !someMoment(h, marks, (m) => fullJustified(m, scenario.capacity))) {
        out.push({
          oracle: "full-justified",
          detail: `${describeQueueOp(h)}: at no step of the call were ${scenario.capacity} positions taken from ` +
            `the oldest unreleased one (${describeMarks(h, marks)})`,
        });
      }
    }
  }
  return out;
}

/**
 * What a correct run's non-linearizable answers were (for the counts the random mode prints): pops that
 * answered EMPTY at no moment of an empty queue (counting claimed positions, as `AbsQ` of the spec
 * does), only while head's producer was between claim and publish; pushes that answered false at no
 * moment of a full queue, only while a consumer held the position a lap back.
 */
export function notLinearizableAnswers(exec: QueueExecution, scenario: QueueScenario): { empty: number; full: number } {
  if (exec.aborted || exec.failures.length > 0) return { empty: 0, full: 0 };
  const marks = replayMarks(exec, scenario);
  let empty = 0;
  let full = 0;
  for (const h of exec.history) {
    if (h.thread < 0) continue;
    if (h.kind === "pop" && h.ret === QUEUE_EMPTY && !someMoment(h, marks, (m) => m.head === m.tail)) empty++;
    if (
      h.kind === "push" && h.ret === 0 && !someMoment(h, marks, (m) => m.tail - m.head >= scenario.capacity)
    ) full++;
  }
  return { empty, full };
}

/** The no-duplicates and conservation oracles. */
export function checkQueueValues(exec: QueueExecution): QueueViolation[] {
  const out: QueueViolation[] = [];
  const pushed = new Set<number>();
  for (const h of exec.history) if (h.kind !== "pop" && h.ret === 1) pushed.add(h.arg!);
  const takenBy = new Map<number, string[]>();
  for (const h of exec.history) {
    if (h.kind !== "pop" || h.ret === QUEUE_EMPTY) continue;
    takenBy.set(h.ret, [...(takenBy.get(h.ret) ?? []), `${queueThreadName(h.thread)}.pop#${h.index}`]);
  }
  const dups = [...takenBy].filter(([, by]) => by.length > 1).map(([v, by]) => `${v} popped by ${by.join(", ")}`);
  if (dups.length > 0) out.push({ oracle: "no-duplicates", detail: `popped twice: ${dups.join("; ")}` });
  const phantoms = [...takenBy].filter(([v]) => !pushed.has(v)).map(([v, by]) => `${v} (by ${by.join(", ")})`);
  if (phantoms.length > 0) {
    out.push({ oracle: "no-duplicates", detail: `popped but never pushed: ${phantoms.join("; ")}` });
  }
  const lost = [...pushed].filter((v) => !takenBy.has(v));
  if (lost.length > 0) out.push({ oracle: "conservation", detail: `pushed but never popped: ${lost.join(", ")}` });
  return out;
}

/**
 * The claims before each access step: how many positions producers and consumers have claimed (so
 * `head` and `tail` as positions counted from the run's start, not as the words hold them: a mutant may
 * encode the words wrongly, and the oracles judge positions), and which are claimed and not yet
 * published (producers) or released (consumers).
 */
interface Moment {
  head: number;
  tail: number;
  /** Positions claimed by producers and not yet published. */
  inFlight: number[];
  /** Positions claimed by consumers and not yet released. */
  held: number[];
}

interface Marks {
  /** moments[s]: the state before access s; moments[steps]: after the last access. */
  moments: Moment[];
  /** For each (thread, op) of a pop: the step of its last successful write of head (its claim). */
  claimStep: Map<string, number>;
}

const STORE = FN_NAMES.indexOf("store");
const CAS = FN_NAMES.indexOf("cas");

/**
 * Replays the recorded accesses into claim marks. A claim is a write of `tail` (a producer's) or `head`
 * (a consumer's): a compare-exchange that matched, or a plain store (a mutant's). It ends at the
 * thread's next store of a sequence word: the producer's publish, the consumer's release.
 */
function replayMarks(exec: QueueExecution, scenario: QueueScenario): Marks {
  const c = scenario.capacity;
  const isSeq = (w: number) => w >= InjectorWords.seqs && w < InjectorWords.seqs + c;
  let head = 0;
  let tail = exec.history.filter((h) => h.thread === -1 && h.ret === 1).length;
  const inFlight = new Map<number, number>();
  const held = new Map<number, number>();
  const claimStep = new Map<string, number>();
  const moments: Moment[] = [];
  const snapshot = (): Moment => ({ head, tail, inFlight: [...inFlight.values()], held: [...held.values()] });
  for (const a of exec.accesses) {
    moments.push(snapshot());
    const writes = (a.fn === CAS && a.result === a.arg1) || a.fn === STORE;
    if (writes && a.word === InjectorWords.tail) {
      inFlight.set(a.thread, tail++);
    } else if (writes && a.word === InjectorWords.head) {
      held.set(a.thread, head++);
      claimStep.set(`${a.thread}:${a.op}`, a.step);
    } else if (a.fn === STORE && isSeq(a.word)) {
      inFlight.delete(a.thread); // PushPublishSeq
      held.delete(a.thread); // PopReleaseSeq
    }
  }
  moments.push(snapshot());
  return { moments, claimStep };
}

function emptyJustified(m: Moment): boolean {
  return m.head === m.tail || m.inFlight.includes(m.head);
}

function fullJustified(m: Moment, capacity: number): boolean {
  return m.tail - Math.min(m.head, ...m.held) >= capacity;
}

/** Whether `ok` holds before some access of the operation (its reads see that state). */
function someMoment(h: QueueHistoryOp, marks: Marks, ok: (m: Moment) => boolean): boolean {
  for (let s = h.first; s <= h.last; s++) if (ok(marks.moments[s])) return true;
  return false;
}

function describeMoment(x: Moment): string {
  return `head ${x.head} tail ${x.tail}` + (x.inFlight.length ? ` in flight [${x.inFlight}]` : "") +
    (x.held.length ? ` held [${x.held}]` : "");
}

function describeMarks(h: QueueHistoryOp, marks: Marks): string {
  return [...new Set(marks.moments.slice(h.first, h.last + 1).map(describeMoment))].join("; ");
}

/** The fifo-per-producer oracle: each producer's values are claimed in its push order. */
function checkFifoPerProducer(exec: QueueExecution, scenario: QueueScenario, marks: Marks): string | null {
  const claimAt = new Map<number, number>();
  for (const h of exec.history) {
    if (h.kind !== "pop" || h.ret === QUEUE_EMPTY) continue;
    const step = h.thread === -2 ? h.first : (marks.claimStep.get(`${h.thread}:${h.index}`) ?? h.last);
    if (!claimAt.has(h.ret)) claimAt.set(h.ret, step);
  }
  const ok = new Set(exec.history.filter((h) => h.kind !== "pop" && h.ret === 1).map((h) => h.arg!));
  for (const [producer, values] of pushedValues(scenario)) {
    const claimed = values.filter((v) => ok.has(v) && claimAt.has(v));
    for (let i = 1; i < claimed.length; i++) {
      if (claimAt.get(claimed[i])! < claimAt.get(claimed[i - 1])!) {
        return `${queueThreadName(producer)} pushed ${claimed[i - 1]} before ${claimed[i]}, but ${claimed[i]} ` +
          `was claimed first (step ${claimAt.get(claimed[i])} < ${claimAt.get(claimed[i - 1])})`;
      }
    }
  }
  return null;
}

/**
 * Wing–Gong linearizability check with memoization (Lowe) of the successful operations against a
 * sequential FIFO queue of `capacity`. Returns null if some linearization exists, else a description.
 */
export function checkQueueLinearizable(history: readonly QueueHistoryOp[], capacity: number): string | null {
  const ops = history
    .filter((h) => (h.kind === "pop" ? h.ret !== QUEUE_EMPTY : h.ret === 1))
    .sort((a, b) => a.first - b.first);
  const n = ops.length;
  const done = new Uint8Array(n);
  const seen = new Set<string>();
  let explored = 0;
  const dfs = (state: number[], count: number): boolean => {
    if (count === n) return true;
    if (++explored > 2_000_000) throw new Error("queue linearizability search exceeded its bound");
    let minLast = Infinity;
    for (let i = 0; i < n; i++) if (!done[i] && ops[i].last < minLast) minLast = ops[i].last;
    for (let i = 0; i < n; i++) {
      if (done[i]) continue;
      const op = ops[i];
      if (op.first > minLast) break; // sorted by first: no later op can be minimal either
      let next: number[] | null;
      if (op.kind === "pop") next = state.length > 0 && state[0] === op.ret ? state.slice(1) : null;
      else next = state.length < capacity ? [...state, op.arg!] : null;
      if (next === null) continue;
      done[i] = 1;
      const key = done.join("") + "|" + next.join(",");
      if (!seen.has(key)) {
        seen.add(key);
        if (dfs(next, count + 1)) return true;
      }
      done[i] = 0;
    }
    return false;
  };
  if (dfs([], 0)) return null;
  return `no linearization of the ${n} successful operations (capacity ${capacity}):\n    ` +
    [...history].sort((a, b) => a.first - b.first).map(describeQueueOp).join("\n    ");
}
