/**
 * The queue under the controlled scheduler: scenarios of `lib/protocol/injector.ts` (the bounded MPMC queue),
 * their fast-check arbitraries, and a run's table and ndjson trace. A run is the kernel's, of the queue model
 * (`models/queue/model.ts`: its set-up, programs, yields and drain).
 *
 * A scenario is two or three threads, each a program of two to five operations — push, pushPatiently,
 * pop — on one queue of capacity 2 or 4, after a setup phase that pushes `prefill` values, with the
 * positions starting at 0 or just below the int32 wrap; after the threads finish a drain phase pops the
 * queue empty. Pushed values are unique (101, 102, …: the setup's first, then thread 0's in program
 * order, then thread 1's, …), so a duplicate, a phantom or a reordering is visible.
 *
 * pushPatiently waits for a consumer preempted between its claim and its release: after each failed
 * attempt the thread yields (the kernel's second yield policy, `Model.yieldAfter`), so that consumer runs. On a queue that is really full
 * with nobody left to pop (which the pool's sizing excludes) it would wait for ever: the run stalls, is
 * unwound, and the patient push is left pending; the full-justified oracle then checks that the queue
 * really was full (a mutant that never frees a slot stalls on a queue that is not).
 *
 * @module
 */

import fc from "fast-check";
import { InjectorWords } from "../../../../lib/protocol/layout.ts";
import { FN_NAMES } from "../../../../spec/trace/facade_codes.ts";
import type { Access } from "../deque/model.ts";
import { describeAccess } from "../deque/report.ts";
import { pushValue } from "../deque/scenario.ts";

/** A queue operation; every thread may run any of them. */
export type QueueOp = "push" | "pushPatiently" | "pop";

/** One run's work on the queue. */
export interface QueueScenario {
  /** Slots: 2 or 4. */
  capacity: number;
  /** `head` and `tail` start here (near 2^31 the run crosses the int32 wrap). */
  initialPos: number;
  /** Values the setup phase pushes (single-threaded) before the threads start. */
  prefill: number;
  /** Each thread's program; thread t is simulated thread t. */
  threads: QueueOp[][];
}

/** One operation on the queue, with its response. */
export interface QueueHistoryOp {
  /** -1: the setup phase; -2: the drain phase; else the simulated thread. */
  thread: number;
  /** Index in the thread's program (or in the phase). */
  index: number;
  kind: QueueOp;
  /** The pushed value. */
  arg?: number;
  /** push: 1 / 0; pushPatiently: 1; pop: the value or QUEUE_EMPTY (-1). */
  ret: number;
  /** Step of the first access (invocation) and of the last access (response). */
  first: number;
  last: number;
}

/** Everything one queue run produced. */
export interface QueueExecution {
  accesses: Access[];
  /** Setup, threads, drain. */
  history: QueueHistoryOp[];
  failures: string[];
  aborted: boolean;
  /**
   * Every thread left was a patient push that kept failing, and nothing wrote shared memory for a whole
   * round (the kernel's `Model.yieldAfter`): the run was unwound. Legitimate only on a queue really full (the
   * full-justified oracle decides); those pushes are pending, left out of the history.
   */
  stalled: boolean;
  drainUnbounded: boolean;
  steps: number;
}

/** The int32 wrap's neighbourhood: two positions below 2^31, so a run's positions cross it. */
export const NEAR_WRAP = 0x7ffffffe;

/** A one-line rendering: `cap2 pos0 prefill1 | t0: push pop | t1: pop`. */
export function describeQueueScenario(s: QueueScenario): string {
  return [
    `cap${s.capacity} pos${s.initialPos} prefill${s.prefill}`,
    ...s.threads.map((o, t) => `t${t}: ${o.join(" ")}`),
  ]
    .join(" | ");
}

/** The values each thread pushes, in program order (thread -1 is the setup). */
export function pushedValues(s: QueueScenario): Map<number, number[]> {
  const out = new Map<number, number[]>();
  let n = 0;
  out.set(-1, Array.from({ length: s.prefill }, () => pushValue(n++)));
  s.threads.forEach((ops, t) => out.set(t, ops.filter((o) => o !== "pop").map(() => pushValue(n++))));
  return out;
}

const queueOp: fc.Arbitrary<QueueOp> = fc.oneof(
  { arbitrary: fc.constant<QueueOp>("push"), weight: 3 },
  { arbitrary: fc.constant<QueueOp>("pushPatiently"), weight: 1 },
  { arbitrary: fc.constant<QueueOp>("pop"), weight: 3 },
);

/**
 * Random queue scenarios: two or three threads of two to five operations, capacity 2 or 4, a prefill
 * of 0 to capacity, positions from 0 or just below the int32 wrap. Shrinks towards fewer threads and
 * operations, and no prefill.
 */
export function queueScenarioArbitrary(): fc.Arbitrary<QueueScenario> {
  return fc.record({
    capacity: fc.constantFrom(2, 4),
    initialPos: fc.constantFrom(0, NEAR_WRAP),
    prefill: fc.integer({ min: 0, max: 4 }),
    threads: fc.array(fc.array(queueOp, { minLength: 2, maxLength: 5 }), { minLength: 2, maxLength: 3 }),
  }).map((s) => ({ ...s, prefill: Math.min(s.prefill, s.capacity) }));
}

/** Names a queue word: `Q.tail`, `Q.head`, `Q.seq[1]`, `Q.val[0]`. */
export function queueWordName(capacity: number): (region: number, word: number) => string {
  return (_region, word) => {
    if (word === InjectorWords.tail) return "Q.tail";
    if (word === InjectorWords.head) return "Q.head";
    if (word >= InjectorWords.seqs && word < InjectorWords.seqs + capacity) {
      return `Q.seq[${word - InjectorWords.seqs}]`;
    }
    if (word >= InjectorWords.seqs + capacity && word < InjectorWords.seqs + 2 * capacity) {
      return `Q.val[${word - InjectorWords.seqs - capacity}]`;
    }
    return `Q.w${word}`;
  };
}

/** Thread names for queue tables and traces. */
export function queueThreadName(t: number): string {
  return t === -1 ? "setup" : t === -2 ? "drain" : `t${t}`;
}

/** Renders one queue operation: `t1.pop#0 → 101 @3..9`. */
export function describeQueueOp(h: QueueHistoryOp): string {
  const arg = h.arg !== undefined ? `(${h.arg})` : "";
  const ret = h.kind === "pop"
    ? (h.ret === -1 ? "EMPTY" : String(h.ret))
    : h.kind === "push"
    ? (h.ret === 1 ? "true" : "false")
    : "done";
  return `${queueThreadName(h.thread)}.${h.kind}${arg}#${h.index} → ${ret} @${h.first}..${h.last}`;
}

/** The operation label of thread t's op k: `push(103)`, `pushPatiently(104)`, `pop`. */
function queueOpLabel(s: QueueScenario, t: number, k: number): string {
  const kind = s.threads[t][k];
  if (kind === "pop") return "pop";
  const values = pushedValues(s).get(t)!;
  const i = s.threads[t].slice(0, k).filter((o) => o !== "pop").length;
  return `${kind}(${values[i]})`;
}

/** The interleaving as a table (a column per thread, a row per access), then the history. */
export function formatQueueTable(s: QueueScenario, exec: QueueExecution): string {
  const cols = s.threads.map((_, t) => queueThreadName(t));
  const name = queueWordName(s.capacity);
  const rows: string[][] = [];
  const started = new Set<string>();
  for (const a of exec.accesses) {
    const row = cols.map(() => "");
    const key = `${a.thread}:${a.op}`;
    row[a.thread] = (started.has(key) ? "" : `${queueOpLabel(s, a.thread, a.op)}: `) + describeAccess(a, name);
    started.add(key);
    rows.push(row);
  }
  const widths = cols.map((c, i) => Math.max(c.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[], step: string) =>
    `${step.padStart(4)} | ` + cells.map((c, i) => c.padEnd(widths[i])).join(" | ");
  const out = [line(cols, "step"), "-".repeat(7 + widths.reduce((n, w) => n + w + 3, 0))];
  rows.forEach((r, i) => out.push(line(r, String(i))));
  out.push("", "history (setup, threads, drain; @first..last access step):");
  for (const h of [...exec.history].sort((a, b) => a.first - b.first)) out.push(`  ${describeQueueOp(h)}`);
  return out.join("\n");
}

/**
 * The run as ndjson: one `scenario` line, the setup's pushes, then `invoke`, `access` (with the TLA+
 * action of `spec/Injector.tla` named on the source line, in trace mode) and `return` events, then the
 * drain.
 */
export function queueTraceNdjson(
  s: QueueScenario,
  exec: QueueExecution,
  meta: Record<string, unknown>,
  actions: Map<number, string> = new Map(),
): string {
  const name = queueWordName(s.capacity);
  const lines: string[] = [JSON.stringify({ event: "scenario", ...meta, scenario: s, text: describeQueueScenario(s) })];
  const at = (m: Map<number, QueueHistoryOp[]>, k: number, h: QueueHistoryOp) => m.set(k, [...(m.get(k) ?? []), h]);
  const invokes = new Map<number, QueueHistoryOp[]>();
  const returns = new Map<number, QueueHistoryOp[]>();
  const drains: string[] = [];
  for (const h of exec.history) {
    if (h.thread < 0) {
      const e = JSON.stringify({ event: h.thread === -1 ? "setup" : "drain", op: h.kind, arg: h.arg, ret: h.ret });
      (h.thread === -1 ? lines : drains).push(e);
    } else {
      at(invokes, h.first, h);
      at(returns, h.last, h);
    }
  }
  for (const a of exec.accesses) {
    for (const h of invokes.get(a.step) ?? []) {
      lines.push(JSON.stringify({ event: "invoke", step: a.step, thread: `t${h.thread}`, op: h.kind, arg: h.arg }));
    }
    lines.push(JSON.stringify({
      event: "access",
      step: a.step,
      thread: `t${a.thread}`,
      op: queueOpLabel(s, a.thread, a.op),
      opIndex: a.op,
      action: actions.get(a.line) ?? null,
      line: a.line || null,
      fn: FN_NAMES[a.fn],
      word: name(a.region, a.word),
      index: a.word,
      args: [a.arg1, a.arg2],
      result: a.result,
    }));
    for (const h of returns.get(a.step) ?? []) {
      lines.push(JSON.stringify({ event: "return", step: a.step, thread: `t${h.thread}`, op: h.kind, ret: h.ret }));
    }
  }
  lines.push(...drains);
  return lines.join("\n") + "\n";
}

/** Smaller scenarios, each one step smaller, for the minimizer. */
export function shrinkQueueScenario(s: QueueScenario): QueueScenario[] {
  const out: QueueScenario[] = [];
  for (let t = 0; t < s.threads.length; t++) {
    if (s.threads.length > 1) out.push({ ...s, threads: s.threads.filter((_, j) => j !== t) });
  }
  for (let t = 0; t < s.threads.length; t++) {
    for (let i = 0; i < s.threads[t].length; i++) {
      const ops = s.threads[t].filter((_, j) => j !== i);
      if (ops.length > 0) out.push({ ...s, threads: s.threads.map((o, j) => (j === t ? ops : o)) });
    }
  }
  if (s.prefill > 0) out.push({ ...s, prefill: s.prefill - 1 });
  if (s.capacity > 2 && s.prefill <= s.capacity / 2) out.push({ ...s, capacity: s.capacity / 2 });
  if (s.initialPos !== 0) out.push({ ...s, initialPos: 0 });
  return out;
}
