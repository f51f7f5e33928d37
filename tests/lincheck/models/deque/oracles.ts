/**
 * The oracles every run is checked by, in the order a failure is attributed to them:
 *
 * 1. `no-exception` — no simulated thread threw, the run finished within its step bound, and the drain
 *    reached EMPTY.
 * 2. `no-duplicates` — no value was taken twice (popped, stolen, or drained), and no value was taken
 *    that was never pushed (a phantom: a stale or empty slot read as a task).
 * 3. `conservation` — every value whose push returned true was taken exactly once by the end of the
 *    drain (a value moved by stealHalf is still in the system, in the thief's deque, until drained), and
 *    each thief's deque drained exactly the values its stealHalf calls reported moving.
 * 4. `linearizability` — the history of every deque (setup pushes, the threads' operations with
 *    invocation and response steps, the drains' pops) has a linearization that sequential bounded
 *    deques accept: Wing & Gong's search with Lowe's memoization of (linearized set, model state).
 *    The model: push fails iff full; pop takes the newest, or is EMPTY iff empty; steal takes the oldest
 *    of its source (the victim or a thief's deque), or is EMPTY iff empty; RETRY changes nothing;
 *    stealHalf that moved k tasks is k successive steals of the source's oldest task, each at its own
 *    point inside the call, in order, then one step that appends the k tasks to the thief's own deque
 *    (its one store of bottom publishes them; the deque must have room for them then), and EMPTY iff
 *    the source was empty or the thief's deque had no room.
 * 5. `retry-justified` — a steal or stealHalf that returned RETRY overlapped, in real time, an operation
 *    of another thread that took a task (only such an operation moves `top` under it).
 *
 * Advisory (counted and printed, not failing), for runs that pass: two stricter stealHalf models.
 * - atomic: stealHalf moves its k oldest in ONE step. `lib/protocol/deque.ts` claims one task per compare-exchange,
 *   so the owner can observe the batch half-taken: found by the stress mode (capacity 4, prefill 4: a
 *   thief has claimed 102 of [102, 103]; the owner pushes 105, 106, 107 and its push of 108 sees the
 *   deque full — full only if 103 is still there while 102 is gone).
 * - half bound: atomic and k <= ceil(size / 2). `lib/protocol/deque.ts` computes "half" from its first, possibly
 *   stale, reads, so when the owner pops meanwhile a stealHalf can take every task left (found by the
 *   random mode: prefill 4, the owner pops 3 and pushes 1, the thief moves both remaining tasks).
 * Neither loses or duplicates a task, so neither fails the suite; they are reported so that the deque's
 * contract ("about half") and the TLA+ refinement mapping (each HalfCasTop is its own steal) agree.
 *
 * @module
 */

import type { Execution, HistoryOp } from "./model.ts";
import type { Scenario } from "./scenario.ts";

/** EMPTY and RETRY as the deque returns them. */
export const EMPTY = -1;
export const RETRY = -2;

/** Oracle names, in attribution order. */
export const ORACLES = ["no-exception", "no-duplicates", "conservation", "linearizability", "retry-justified"] as const;
export type OracleName = typeof ORACLES[number];

/** A failed oracle with what it saw. */
export interface Violation {
  oracle: OracleName;
  detail: string;
}

/** Runs every oracle; returns the violations in attribution order (empty: the run is correct). */
export function checkExecution(exec: Execution, scenario: Scenario): Violation[] {
  const out: Violation[] = [];
  if (exec.failures.length > 0) out.push({ oracle: "no-exception", detail: exec.failures.join("; ") });
  if (exec.aborted) out.push({ oracle: "no-exception", detail: `step bound hit after ${exec.steps} steps` });
  if (exec.drainUnbounded) out.push({ oracle: "no-exception", detail: "a drain did not reach EMPTY" });
  out.push(...checkValues(exec));
  if (!exec.aborted && exec.failures.length === 0) {
    const lin = checkLinearizable(exec.history, scenario.capacity);
    if (lin !== null) out.push({ oracle: "linearizability", detail: lin });
    const retry = checkRetries(exec.history);
    if (retry !== null) out.push({ oracle: "retry-justified", detail: retry });
  }
  return out;
}

function taken(h: HistoryOp): number[] {
  if ((h.kind === "pop" || h.kind === "steal") && h.ret >= 0) return [h.ret];
  return [];
}

/** The no-duplicates and conservation oracles. */
export function checkValues(exec: Execution): Violation[] {
  const out: Violation[] = [];
  const pushed = new Set<number>();
  for (const h of exec.history) if (h.kind === "push" && h.ret === 1) pushed.add(h.arg!);
  const count = new Map<number, number>();
  const takenBy = new Map<number, string[]>();
  const note = (v: number, who: string) => {
    count.set(v, (count.get(v) ?? 0) + 1);
    takenBy.set(v, [...(takenBy.get(v) ?? []), who]);
  };
  for (const h of exec.history) {
    for (const v of taken(h)) note(v, `${who(h)}.${h.kind}${h.deque ? `(D${h.deque})` : ""}`);
  }
  if (!exec.drainsInHistory) exec.dstDrained.forEach((vs, k) => vs.forEach((v) => note(v, `drain(D${k})`)));
  const dups = [...count].filter(([, c]) => c > 1).map(([v]) => `${v} taken by ${takenBy.get(v)!.join(", ")}`);
  const phantoms = [...count.keys()].filter((v) => !pushed.has(v)).map((v) =>
    `${v} (by ${takenBy.get(v)!.join(", ")})`
  );
  if (dups.length > 0) out.push({ oracle: "no-duplicates", detail: `taken twice: ${dups.join("; ")}` });
  if (phantoms.length > 0) {
    out.push({ oracle: "no-duplicates", detail: `taken but never pushed: ${phantoms.join("; ")}` });
  }
  const lost = [...pushed].filter((v) => !count.has(v));
  if (lost.length > 0) out.push({ oracle: "conservation", detail: `pushed but never taken: ${lost.join(", ")}` });
  // What each thief's stealHalf calls moved must be exactly what its deque drained — when nothing else
  // touches that deque (the stress mode); otherwise linearizability judges the thieves' deques too.
  for (let k = 1; k < exec.dstDrained.length && !exec.drainsInHistory; k++) {
    const moved = exec.history.filter((h) => h.thread === k && h.kind === "stealHalf").flatMap((h) => h.values ?? []);
    const a = [...moved].sort((x, y) => x - y).join(",");
    const b = [...exec.dstDrained[k]].sort((x, y) => x - y).join(",");
    if (a !== b) {
      out.push({ oracle: "conservation", detail: `thief ${k}'s deque: stealHalf moved [${a}] but drained [${b}]` });
    }
  }
  return out;
}

function who(h: HistoryOp): string {
  return h.thread === -1 ? "setup" : h.thread === -2 ? "drain" : h.thread === 0 ? "owner" : `thief${h.thread}`;
}

/** Renders one history operation: `thief1.stealHalf#0 → 2 [101,102] @3..9`. */
export function describeOp(h: HistoryOp): string {
  const arg = h.kind === "push" ? `(${h.arg})` : "";
  const ret = h.kind === "push"
    ? (h.ret === 1 ? "true" : "false")
    : h.ret === EMPTY
    ? "EMPTY"
    : h.ret === RETRY
    ? "RETRY"
    : h.kind === "stealHalf"
    ? `${h.ret} [${(h.values ?? []).join(",")}] room ${h.room}`
    : String(h.ret);
  const on = h.deque ? `(D${h.deque})` : "";
  return `${who(h)}.${h.kind}${on}${arg}#${h.index} → ${ret} @${h.first}..${h.last}`;
}

/** How the model treats stealHalf. */
export interface ModelOptions {
  /** One atomic step that moves the k oldest (else: k successive steals, each at its own point). */
  atomicHalf: boolean;
  /** With atomicHalf: k <= ceil(size / 2) at that point. */
  halfBound: boolean;
}

/** The model the linearizability oracle fails on: stealHalf is k successive steals of the oldest. */
export const SHIPPED_MODEL: ModelOptions = { atomicHalf: false, halfBound: false };

interface Entry {
  op: HistoryOp;
  /**
   * For a stealHalf split into parts: which part (0..k-1 take one task each from the source, k appends
   * the k tasks to the destination at once, as its one store of bottom publishes them), and the entry
   * index of the previous part.
   */
  part: number;
  prev: number;
}

/** The model's state: one sequence of tasks per deque (index 0 the victim, k thief k's own deque). */
type State = number[][];

/**
 * Wing–Gong linearizability check with memoization (Lowe). Returns null if some linearization exists,
 * else a description of the history.
 */
export function checkLinearizable(
  history: readonly HistoryOp[],
  capacity: number,
  model: ModelOptions = SHIPPED_MODEL,
): string | null {
  const sorted = [...history].sort((a, b) => a.first - b.first);
  const entries: Entry[] = [];
  for (const op of sorted) {
    if (op.kind === "stealHalf" && op.ret > 0 && !model.atomicHalf) {
      if ((op.values ?? []).length !== op.ret) return describeFailure(sorted, capacity);
      for (let i = 0; i <= op.ret; i++) entries.push({ op, part: i, prev: i === 0 ? -1 : entries.length - 1 });
    } else {
      entries.push({ op, part: -1, prev: -1 });
    }
  }
  const n = entries.length;
  const done = new Uint8Array(n);
  const seen = new Set<string>();
  let explored = 0;
  const limit = 2_000_000;

  const dfs = (state: State, count: number): boolean => {
    if (count === n) return true;
    if (++explored > limit) throw new Error("linearizability search exceeded its bound");
    let minLast = Infinity;
    for (let i = 0; i < n; i++) if (!done[i] && entries[i].op.last < minLast) minLast = entries[i].op.last;
    for (let i = 0; i < n; i++) {
      if (done[i]) continue;
      const e = entries[i];
      if (e.op.first > minLast) break; // sorted by first: no later entry can be minimal either
      if (e.prev >= 0 && !done[e.prev]) continue; // a stealHalf's parts go in order
      const next = e.part >= 0
        ? halfPart(state, e.op, e.part, capacity)
        : apply(state, e.op, capacity, model.halfBound);
      if (next === null) continue;
      done[i] = 1;
      const key = keyOf(done) + "|" + next.map((d) => d.join(",")).join("|");
      if (!seen.has(key)) {
        seen.add(key);
        if (dfs(next, count + 1)) return true;
      }
      done[i] = 0;
    }
    return false;
  };
  if (dfs([[], [], [], []], 0)) return null;
  return describeFailure(sorted, capacity);
}

function describeFailure(ops: readonly HistoryOp[], capacity: number): string {
  return `no linearization of ${ops.length} operations (capacity ${capacity}):\n    ` +
    ops.map(describeOp).join("\n    ");
}

/** The state with deque `k` replaced. */
function withDeque(state: State, k: number, d: number[]): State {
  const out = [...state];
  out[k] = d;
  return out;
}

/** One part of a stealHalf of k tasks: a take of the source's oldest (parts 0..k-1), or the publish (k). */
function halfPart(state: State, op: HistoryOp, part: number, capacity: number): State | null {
  const values = op.values!;
  if (part < op.ret) {
    const src = state[op.deque ?? 0];
    return src.length > 0 && src[0] === values[part] ? withDeque(state, op.deque ?? 0, src.slice(1)) : null;
  }
  const dst = state[op.dst ?? op.thread];
  return dst.length + op.ret <= capacity ? withDeque(state, op.dst ?? op.thread, [...dst, ...values]) : null;
}

function keyOf(done: Uint8Array): string {
  let s = "";
  for (let i = 0; i < done.length; i += 16) {
    let w = 0;
    for (let j = i; j < i + 16 && j < done.length; j++) w = (w << 1) | done[j];
    s += String.fromCharCode(w + 1);
  }
  return s;
}

/** The sequential model: the state after `op`, or null if `op`'s response is impossible in `state`. */
export function apply(state: State, op: HistoryOp, capacity: number, halfBound: boolean): State | null {
  const k = op.deque ?? 0;
  const d = state[k];
  const size = d.length;
  switch (op.kind) {
    case "push":
      if (op.ret === 1) return size < capacity ? withDeque(state, k, [...d, op.arg!]) : null;
      return size >= capacity ? state : null;
    case "pop":
      if (op.ret === EMPTY) return size === 0 ? state : null;
      return size > 0 && d[size - 1] === op.ret ? withDeque(state, k, d.slice(0, size - 1)) : null;
    case "steal":
      if (op.ret === RETRY) return state;
      if (op.ret === EMPTY) return size === 0 ? state : null;
      return size > 0 && d[0] === op.ret ? withDeque(state, k, d.slice(1)) : null;
    case "stealHalf": {
      if (op.ret === RETRY) return state;
      if (op.ret === EMPTY) return size === 0 || (op.room ?? 0) <= 0 ? state : null;
      // Atomic: the n oldest leave the source and enter the destination in one step.
      const n = op.ret;
      const to = op.dst ?? op.thread;
      if (n < 1 || n > (halfBound ? size - (size >> 1) : size) || state[to].length + n > capacity) return null;
      const vs = op.values ?? [];
      for (let i = 0; i < n; i++) if (d[i] !== vs[i]) return null;
      return withDeque(withDeque(state, k, d.slice(n)), to, [...state[to], ...vs]);
    }
  }
}

/** Advisory findings for a run that passed every oracle (see the module doc). */
export interface Advisory {
  /** Linearizable only if stealHalf's claims are separate steps (not one atomic move). */
  notAtomicHalf: boolean;
  /** Atomic, but only if stealHalf may take more than half. */
  overHalf: boolean;
}

/** The advisory checks: the stricter stealHalf models. */
export function advisory(exec: Execution, capacity: number): Advisory {
  if (!exec.history.some((h) => h.kind === "stealHalf" && h.ret > 1)) return { notAtomicHalf: false, overHalf: false };
  const atomic = checkLinearizable(exec.history, capacity, { atomicHalf: true, halfBound: false }) === null;
  if (!atomic) return { notAtomicHalf: true, overHalf: false };
  const bounded = checkLinearizable(exec.history, capacity, { atomicHalf: true, halfBound: true }) === null;
  return { notAtomicHalf: false, overHalf: !bounded };
}

/** The retry-justified oracle. */
export function checkRetries(history: readonly HistoryOp[]): string | null {
  const takers = history.filter((h) =>
    h.thread >= 0 && (((h.kind === "pop" || h.kind === "steal") && h.ret >= 0) || (h.kind === "stealHalf" && h.ret > 0))
  );
  for (const h of history) {
    if (h.thread < 0 || h.ret !== RETRY) continue;
    const ok = takers.some((o) => o.thread !== h.thread && o.first <= h.last && o.last >= h.first);
    if (!ok) return `${describeOp(h)} overlapped no operation of another thread that took a task`;
  }
  return null;
}
