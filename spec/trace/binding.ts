/**
 * The tracing facade for trace validation: a shared-memory binding (installed with
 * `installSharedMemory`, in every thread of a real pool) that records every atomic access to the pool's
 * buffer, with its thread and its result, in the one order they really happened.
 *
 * What it owns: the trace buffer (a SharedArrayBuffer every thread of the run shares, handed to the pool's
 * threads through `node:worker_threads`' environment data before the pool starts them), its log, and the
 * snapshot of the pool's buffer the log starts from.
 *
 * How the order is made exact: every access through the binding takes one lock in the trace buffer,
 * performs the real `Atomics` operation, appends its record, and releases the lock. The lock is a ticket
 * lock: threads that want it get it in turn, so the threads' accesses interleave finely (with a lock a
 * running thread could take again at once, one thread would make long runs of accesses, and races that
 * need another thread between two of them would seldom happen). The accesses of all
 * threads are so serialized, and the log's order is the order in which they took effect. JavaScript's
 * `Atomics` are sequentially consistent, so any real run is equivalent to some interleaving of single
 * accesses (the specs' granularity); the lock picks one and writes it down. It does change timing (a
 * traced run is slower and interleaves more coarsely than an untraced one), never what may happen.
 *
 * What is recorded: loads, stores and read-modify-writes on the pool's buffer (recognised by its byte
 * length, which the driver gives when it arms the trace). Plain `read`/`write` (task-record words one thread
 * owns, never a protocol word: tests/repo/facade_rule_test.ts; recorded in a run that asks, {@link PLAIN_KEY}), `wait`, `waitAsync`, `notify` and `pause` pass
 * through unrecorded and without the lock (a thread must never sleep holding it).
 *
 * Where the log starts: at the first access of a thread of the run proper (role `"run"`: a pool worker, a
 * stress thread). Until then only the thread that set the buffer up (role `"setup"`: the pool's main thread)
 * has touched it, and it is between operations; no thread of the run has begun one. The whole buffer is
 * copied into the snapshot, under the lock, and every access from then on is logged, the set-up thread's
 * included. The trace specs start from that snapshot with every thread idle.
 *
 * Threads: {@link tracingBinding} in any thread of the run; {@link createTrace}, {@link armTrace} and
 * {@link readTrace} on the main thread.
 *
 * @module
 */

import { getEnvironmentData, threadId } from "node:worker_threads";
import type { Int32View, SharedMemory } from "../../lib/protocol/atomics.ts";
import { Fn } from "./facade_codes.ts";

/** The environment-data keys of a traced run: the trace buffer, and the root URL of the `lib/` under test. */
export const TRACE_KEY = "filch.trace.buffer";
export const ROOT_KEY = "filch.trace.root";
/** Set (to "1") when every deque and queue operation is to be one recorded step (`spec/trace/ops.ts`). */
export const OPS_KEY = "filch.trace.operations";
/**
 * Set (to "1") when plain writes are recorded too (scenario `graph`: the submitter's placement of a graph
 * names its records, and a walker's write of a slot's outcome is GraphTrace's WalkPublishArg).
 */
export const PLAIN_KEY = "filch.trace.plainWrites";

/** Words of the trace buffer's header. */
export const TraceWords = Object.freeze({
  /** The ticket lock every recorded access holds: the next ticket to hand out. */
  lock: 0,
  /** The ticket lock: the ticket now served. */
  serving: 8,
  /** Records appended so far. */
  count: 1,
  /** The byte length of the traced buffer (0: not armed, nothing recorded). */
  tracedBytes: 2,
  /** 1 once the snapshot is taken (the log has begun). */
  started: 3,
  /** 1 if a record did not fit: the log is a prefix of the run, and says so. */
  overflow: 4,
  /** Records the log can hold. */
  capacity: 5,
  /** Bytes the snapshot area can hold. */
  snapshotCapacity: 6,
  /** Bytes the snapshot holds (the traced buffer's length when it was taken). */
  snapshotLength: 7,
  /** The header's size in words. */
  header: 16,
});

/** Int32 words per record: thread, kind, word index, operand a, operand b, old value, new value, spare. */
export const RECORD_WORDS = 8;

/**
 * The kind of a recorded access: the facade function, coded as the interleaving harness codes it
 * (`facade_codes.ts`, `Fn`: load 1 … notify 11), and whole operations. For `wait` and
 * `waitAsync`, a = the expected value, b = the timeout (-1: none), old = now = the word when it was
 * called; for `notify`, a = the count (-1: all).
 */
export const Kind = Object.freeze({
  ...Fn,
  /**
   * A whole deque or queue operation, made atomic (see {@link TracingBinding.operation}): word = the
   * region's first word, a = the operation ({@link Operation}), b = its argument, now = its result.
   */
  operation: 12,
  /** A plain write (recorded only in a run that asks for it, {@link PLAIN_KEY}): a = old = now = the value. */
  write: 13,
});

/** The operations {@link TracingBinding.operation} records. */
export const Operation = Object.freeze({
  dequePop: 1,
  dequePush: 2,
  /** b: the destination deque's first word. */
  stealHalf: 3,
  steal: 4,
  queuePop: 5,
  /** push or pushPatiently; now: 1 if it pushed. */
  queuePush: 6,
  queueLength: 7,
});

/** A tracing binding, and its way to record a whole operation as one step. */
export interface TracingBinding extends SharedMemory {
  /**
   * Runs `run` (one deque or queue operation) holding the trace lock, so that no other thread's access
   * comes between its accesses, and records it after them as one {@link Kind.operation} record. For the
   * logs of protocols that model those operations as single steps (`SleepWake.tla`). Only for operations
   * that cannot wait for another thread (a `pushPatiently` on a queue that cannot fill).
   */
  operation<T>(region: number, op: number, arg: number, run: () => T, result: (value: T) => number): T;
}

/** One recorded access. `old` is the word before it, `now` the word after it (equal for a load). */
export interface TraceEvent {
  /** The thread's `threadId` (0: the main thread). */
  thread: number;
  kind: number;
  /** The word's index in the pool's buffer, as an Int32Array over the whole buffer. */
  word: number;
  /** compareExchange: the expected value; store, add, sub, exchange, or, and: the operand. */
  a: number;
  /** compareExchange: the replacement. */
  b: number;
  old: number;
  now: number;
}

/** A finished trace: the snapshot the log starts from, and the log. */
export interface Trace {
  /** The pool buffer's words at the log's start. */
  snapshot: Int32Array;
  events: TraceEvent[];
  /** The log filled up: events is a prefix of the run. */
  overflow: boolean;
}

/**
 * Creates a trace buffer.
 *
 * @param capacity Records the log can hold.
 * @param snapshotBytes The largest pool buffer it can snapshot.
 * @returns The buffer, to give to {@link tracingBinding} in every thread.
 */
export function createTrace(capacity: number, snapshotBytes: number): SharedArrayBuffer {
  if (!Number.isInteger(capacity) || capacity < 1 || !Number.isInteger(snapshotBytes) || snapshotBytes % 4 !== 0) {
    throw new RangeError(
      `Cannot create trace as 'capacity' must be a positive integer and 'snapshotBytes' a multiple of 4: received ${capacity}, ${snapshotBytes}`,
    );
  }
  const buffer = new SharedArrayBuffer(TraceWords.header * 4 + snapshotBytes + capacity * RECORD_WORDS * 4);
  const words = new Int32Array(buffer);
  words[TraceWords.capacity] = capacity;
  words[TraceWords.snapshotCapacity] = snapshotBytes;
  return buffer;
}

/**
 * Arms the trace for a pool buffer of `bytes` bytes: from the first access a pool thread makes to such a
 * buffer, everything is recorded. Call before the pool is created.
 *
 * @param trace The trace buffer.
 * @param bytes The pool buffer's byte length (`poolLayout(shape).totalBytes`).
 */
export function armTrace(trace: SharedArrayBuffer, bytes: number): void {
  const words = new Int32Array(trace);
  if (bytes > words[TraceWords.snapshotCapacity]) {
    throw new RangeError(
      `Cannot arm trace as the pool buffer (${bytes} bytes) is larger than its snapshot area (${
        words[TraceWords.snapshotCapacity]
      } bytes): create the trace with more`,
    );
  }
  Atomics.store(words, TraceWords.tracedBytes, bytes);
}

/**
 * Disarms the trace (nothing more is recorded) and reads it.
 *
 * @param trace The trace buffer.
 * @returns The snapshot and the log; the snapshot is empty if no pool thread ever touched the buffer.
 */
export function readTrace(trace: SharedArrayBuffer): Trace {
  const words = new Int32Array(trace);
  // A thread of the run cannot die holding the lock in the runs here (nothing terminates a thread
  // mid-access); should one, the log is read after 2 s anyway, and says so.
  const locked = lock(words, 2000);
  if (!locked) words[TraceWords.overflow] = 1;
  Atomics.store(words, TraceWords.tracedBytes, 0);
  if (locked) unlock(words);
  const bytes = words[TraceWords.snapshotCapacity];
  const started = words[TraceWords.started] === 1;
  const count = words[TraceWords.count];
  const snapshot = started
    ? new Int32Array(trace, TraceWords.header * 4, words[TraceWords.snapshotLength] / 4).slice()
    : new Int32Array(0);
  const base = TraceWords.header + bytes / 4;
  const events: TraceEvent[] = [];
  for (let i = 0; i < count; i++) {
    const r = base + i * RECORD_WORDS;
    events.push({
      thread: words[r],
      kind: words[r + 1],
      word: words[r + 2],
      a: words[r + 3],
      b: words[r + 4],
      old: words[r + 5],
      now: words[r + 6],
    });
  }
  return { snapshot, events, overflow: words[TraceWords.overflow] === 1 };
}

function lock(words: Int32Array, deadlineMs = Infinity): boolean {
  const ticket = Atomics.add(words, TraceWords.lock, 1);
  const until = deadlineMs === Infinity ? Infinity : Date.now() + deadlineMs;
  for (let spins = 0;; spins++) {
    const serving = Atomics.load(words, TraceWords.serving);
    if (serving === ticket) return true;
    // The holder does one access; spin briefly, then sleep until the ticket served changes (unlock
    // notifies; the timeout covers a notify that came between the load and the wait).
    if (spins > 32) {
      Atomics.wait(words, TraceWords.serving, serving, 1);
      if (Date.now() > until) return false;
    }
  }
}

function unlock(words: Int32Array): void {
  Atomics.add(words, TraceWords.serving, 1);
  Atomics.notify(words, TraceWords.serving);
}

/**
 * A binding that performs each access with `real` and records it in `trace`, under the trace's lock.
 *
 * @param trace The trace buffer ({@link createTrace}).
 * @param thread This thread's id, recorded with each of its accesses (its `threadId`).
 * @param real The binding that performs the accesses (`atomicsBinding`).
 * @param role `"setup"` for the thread that lays the buffer out (its accesses before the log begins are
 *   not recorded), `"run"` for the others (the first access of one begins the log).
 * @returns The binding to install with `installSharedMemory`.
 */
export function tracingBinding(
  trace: SharedArrayBuffer,
  thread: number,
  real: Readonly<SharedMemory>,
  role: "setup" | "run",
  plainWrites = false,
): TracingBinding {
  const words = new Int32Array(trace);
  const snapshotWords = words[TraceWords.snapshotCapacity] / 4;
  const base = TraceWords.header + snapshotWords;
  const capacity = words[TraceWords.capacity];
  // > 0 inside an operation (which holds the lock): its accesses do not take it again.
  let holding = 0;

  function append(kind: number, word: number, a: number, b: number, old: number, now: number): void {
    const n = words[TraceWords.count];
    if (n >= capacity) {
      words[TraceWords.overflow] = 1;
      return;
    }
    const r = base + n * RECORD_WORDS;
    words[r] = thread;
    words[r + 1] = kind;
    words[r + 2] = word;
    words[r + 3] = a;
    words[r + 4] = b;
    words[r + 5] = old;
    words[r + 6] = now;
    words[TraceWords.count] = n + 1;
  }

  // True when the log is on for this buffer (taking the snapshot if this access begins it); under the lock.
  function logging(view: Int32View): boolean {
    const bytes = words[TraceWords.tracedBytes];
    if (bytes === 0 || view.buffer.byteLength !== bytes) return false;
    if (words[TraceWords.started] === 0) {
      if (role === "setup") return false; // the set-up, before any thread of the run
      // The first access of a thread of the run: the log begins here, from a copy of the buffer as it is.
      new Int32Array(trace, TraceWords.header * 4, bytes / 4).set(new Int32Array(view.buffer, 0, bytes / 4));
      words[TraceWords.snapshotLength] = bytes;
      words[TraceWords.started] = 1;
    }
    return true;
  }

  // Runs `access` under the lock and records it when it touched the traced buffer. `old` and `now` are
  // the word before and after, computed by the caller from the access's own result.
  function traced(
    view: Int32View,
    index: number,
    kind: number,
    a: number,
    b: number,
    access: () => { result: number; old: number; now: number },
  ): number {
    if (holding === 0) lock(words);
    try {
      const ours = logging(view);
      const { result, old, now } = access();
      if (ours) append(kind, view.byteOffset / 4 + index, a, b, old, now);
      return result;
    } finally {
      if (holding === 0) unlock(words);
    }
  }

  // A wait is recorded (with the word as it is) under the lock, and made after releasing it: a thread
  // must never sleep holding the lock.
  function noteWait(view: Int32View, index: number, kind: number, expected: number, timeout: number | undefined) {
    if (holding === 0) lock(words);
    try {
      if (logging(view)) {
        const v = real.load(view, index);
        append(kind, view.byteOffset / 4 + index, expected, timeout === undefined ? -1 : Math.ceil(timeout), v, v);
      }
    } finally {
      if (holding === 0) unlock(words);
    }
  }

  const rmw =
    (kind: number, op: (v: Int32View, i: number, x: number) => number, f: (o: number, x: number) => number) =>
    (view: Int32View, index: number, value: number): number =>
      traced(view, index, kind, value, 0, () => {
        const old = op(view, index, value);
        return { result: old, old, now: f(old, value) | 0 };
      });

  return {
    load: (view, index) =>
      traced(view, index, Kind.load, 0, 0, () => {
        const v = real.load(view, index);
        return { result: v, old: v, now: v };
      }),
    store: (view, index, value) =>
      traced(view, index, Kind.store, value, 0, () => {
        // The word before a store is not the access's business; record the stored value as both.
        const v = real.store(view, index, value);
        return { result: v, old: value | 0, now: value | 0 };
      }),
    compareExchange: (view, index, expected, replacement) =>
      traced(view, index, Kind.compareExchange, expected, replacement, () => {
        const old = real.compareExchange(view, index, expected, replacement);
        return { result: old, old, now: old === (expected | 0) ? replacement | 0 : old };
      }),
    add: rmw(Kind.add, real.add, (o, x) => o + x),
    sub: rmw(Kind.sub, real.sub, (o, x) => o - x),
    exchange: rmw(Kind.exchange, real.exchange, (_o, x) => x),
    or: rmw(Kind.or, real.or, (o, x) => o | x),
    and: rmw(Kind.and, real.and, (o, x) => o & x),
    read: real.read,
    write: plainWrites
      ? (view, index, value) => {
        traced(view, index, Kind.write, value, 0, () => {
          real.write(view, index, value);
          return { result: 0, old: value | 0, now: value | 0 };
        });
      }
      : real.write,
    wait: (view, index, expected, timeout) => {
      noteWait(view, index, Kind.wait, expected, timeout);
      return real.wait(view, index, expected, timeout);
    },
    waitAsync: (view, index, expected, timeout) => {
      noteWait(view, index, Kind.waitAsync, expected, timeout);
      return real.waitAsync(view, index, expected, timeout);
    },
    notify: (view, index, count) =>
      traced(view, index, Kind.notify, count ?? -1, 0, () => {
        const woken = real.notify(view, index, count);
        return { result: woken, old: 0, now: 0 };
      }),
    pause: real.pause,
    operation<T>(region: number, op: number, arg: number, run: () => T, result: (value: T) => number): T {
      if (holding === 0) lock(words);
      holding++;
      try {
        const value = run();
        // Logged only once the log has begun (an access of the operation may have begun it).
        if (words[TraceWords.started] === 1 && words[TraceWords.tracedBytes] !== 0) {
          append(Kind.operation, region, op, arg, 0, result(value));
        }
        return value;
      } finally {
        holding--;
        if (holding === 0) unlock(words);
      }
    },
  };
}

/**
 * Installs the tracing binding in this thread, on the `lib/` at `root` (the copy the run tests), with the
 * trace buffer from environment data; and, in a run that asks for it ({@link OPS_KEY}), makes every deque
 * and queue operation one recorded step (`spec/trace/ops.ts`). Call before any pool code runs here.
 *
 * @param root The directory holding `lib/`, as a URL with a trailing slash.
 * @param role As for {@link tracingBinding}.
 * @throws {Error} If the thread has no trace buffer (not started by `spec/trace/run.ts`).
 */
export async function traceThisThread(root: string, role: "setup" | "run"): Promise<void> {
  const trace = getEnvironmentData(TRACE_KEY);
  if (!(trace instanceof SharedArrayBuffer)) {
    throw new Error(
      `Cannot trace this thread as environment data has no trace buffer ('${TRACE_KEY}'): run it from spec/trace/run.ts`,
    );
  }
  const facade = await import(new URL("lib/protocol/atomics.ts", root).href) as {
    atomicsBinding: Readonly<SharedMemory>;
    installSharedMemory(binding: SharedMemory): () => void;
  };
  const binding = tracingBinding(trace, threadId, facade.atomicsBinding, role, getEnvironmentData(PLAIN_KEY) === "1");
  facade.installSharedMemory(binding);
  if (getEnvironmentData(OPS_KEY) === "1") {
    const { recordOperations } = await import("./ops.ts");
    await recordOperations(root, binding);
  }
}
