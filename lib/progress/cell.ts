/**
 * A task's progress cell: the one place in shared memory where a running task leaves its latest progress
 * value for its caller (design: README.md beside this file).
 *
 * What it owns: the words of a cell ({@link CellWords}), its phases ({@link CellPhase}), and the three
 * steps on it: {@link ProgressCells.write} (a task's report, on a worker), {@link ProgressCells.take} (its
 * caller's read, which empties the cell), and {@link ProgressCells.reset} (its caller's, when it places a
 * task with a handler in the record).
 *
 * The cell is a sequence lock with a consuming read. Its state word holds a phase in its low two bits and
 * a sequence number above them, bumped by every writer's lock:
 * - a writer takes the cell by a compare-exchange from EMPTY or FULL to WRITING (sequence + 1), writes the
 *   handle, the length and the value with plain writes, and publishes them with the store of FULL;
 * - a reader loads the state, and if it is FULL copies the words out with plain reads, then empties the
 *   cell by a compare-exchange from exactly the state it loaded. If that fails, a writer took the cell
 *   meanwhile (every lock changes the word) and the copy may be torn: it reads again.
 * So writers never wait for the reader, and the reader never waits for a writer (it leaves a cell it finds
 * WRITING for a later read). Two writers (forks of one task on two workers) exclude each other: the second
 * spins for a bounded while and then drops its report, as if the first had overwritten it at once.
 *
 * Invariants:
 * - Bounded: a cell holds one value of at most {@link PROGRESS_VALUE_BYTES} bytes; a write over an unread
 *   value replaces it (the caller sees the latest one: coalescing).
 * - A write reports {@link Filled.NOTICE} exactly when the cell did not hold an unread value of the same
 *   task (it was EMPTY, or held a stale task's value): then, and only then, its writer raises its caller's
 *   progress word (reporter.ts), so a caller is told once per value it has not been told of, and a value
 *   written over an unread one of the same task is found by the read the first one's notice asks for.
 * - The cell names the task it holds a value of (its handle, with the generation): a reader delivers a
 *   value only to the task placed in that record under that handle, so a stale write (a fork that outlived
 *   its task) is read and dropped, never delivered to the record's next task.
 *
 * Threads: `write` on a worker (the task's, or a fork's); `take` and `reset` on the task's producer thread.
 *
 * @module
 */

import { mem } from "../protocol/atomics.ts";
import { PROGRESS_CELL_WORDS } from "../protocol/layout.ts";

/** Word offsets in a progress cell. */
export const CellWords = Object.freeze({
  /** The phase ({@link CellPhase}, low two bits) and the sequence number (the bits above). */
  state: 0,
  /** The handle of the task whose value the cell holds (its root's, for a fork's report). */
  handle: 1,
  /** The value's length in bytes, or {@link NUMBER_LENGTH} for a number stored as a float64. */
  length: 2,
  /** The first word of the value's bytes. */
  data: 4,
});

/** The phases of a cell. */
export const CellPhase = Object.freeze({
  /** No unread value. */
  EMPTY: 0,
  /** An unread value, published by the writer's store. */
  FULL: 1,
  /** A writer holds the cell: its words are being written. */
  WRITING: 2,
});

/** The phase bits of the state word. */
const PHASE = 3;

/** The most bytes a progress value may encode to (the cell's data words). */
export const PROGRESS_VALUE_BYTES = (PROGRESS_CELL_WORDS - CellWords.data) * 4;

/** The `length` word of a value that is a number (its float64 in the first two data words). */
export const NUMBER_LENGTH = -1;

/** How many times a writer retries a cell another writer holds before it drops its report. */
const WRITER_SPINS = 1_000;

/** What {@link ProgressCells.write} did. */
export const Filled = Object.freeze({
  /** Another writer held the cell all along: the report was dropped (the other's value stands). */
  DROPPED: 0,
  /** The cell held no unread value of this task: its caller must be told (raise its progress word). */
  NOTICE: 1,
  /** It replaced an unread value of the same task, whose notice is still to be read: nothing to tell. */
  REPLACED: 2,
});

/** What {@link ProgressCells.take} found. */
export const Taken = Object.freeze({
  /** No unread value. */
  EMPTY: -1,
  /** A writer holds the cell: read it later. */
  BUSY: -2,
});

/**
 * One thread's handle on the pool's progress cells, with its own scratch for a value's words.
 *
 * @example Usage
 * ```ts
 * import { Filled, ProgressCells } from "./cell.ts";
 * const cells = new ProgressCells(new Int32Array(new SharedArrayBuffer(4 * 16 * 4)));
 * cells.scratchF64[0] = 0.5;
 * console.log(cells.write(2, 77, -1) === Filled.NOTICE); // true
 * cells.scratchF64[0] = 0.75;
 * console.log(cells.write(2, 77, -1) === Filled.REPLACED); // true: coalesced
 * const reader = new ProgressCells(cells.words);
 * console.log(reader.take(2), reader.length, reader.scratchF64[0]); // 77 -1 0.75
 * console.log(reader.take(2)); // -1 (empty)
 * ```
 */
export class ProgressCells {
  /** The cells, {@link PROGRESS_CELL_WORDS} words each, by record index. */
  readonly words: Int32Array;
  /** This thread's copy of a value's data words (written before `write`, read after `take`). */
  readonly scratch: Int32Array = new Int32Array(PROGRESS_CELL_WORDS - CellWords.data);
  /** The scratch as bytes (an encoded value). */
  readonly scratchBytes: Uint8Array = new Uint8Array(this.scratch.buffer);
  /** The scratch's first two words as a float64 (a number). */
  readonly scratchF64: Float64Array = new Float64Array(this.scratch.buffer, 0, 1);
  /** After a successful {@link ProgressCells.take}: the value's length word. */
  length = 0;

  /**
   * @param words The progress cells' region (`PoolMemory.progress`).
   */
  constructor(words: Int32Array) {
    this.words = words;
  }

  /**
   * A worker, in a task's report. Writes the scratch's value (`length` bytes, or a number) into record
   * `index`'s cell for task `handle`, over any unread value.
   *
   * @param index The root task's record index.
   * @param handle The root task's handle.
   * @param length The value's bytes in the scratch, or {@link NUMBER_LENGTH}.
   * @returns What it did ({@link Filled}).
   */
  write(index: number, handle: number, length: number): number {
    const words = this.words;
    const at = index * PROGRESS_CELL_WORDS;
    let state = 0;
    for (let spins = 0;; spins++) {
      // Observes the last writer's FULL store, or the reader's emptying compare-exchange.
      state = mem.load(words, at + CellWords.state);
      if ((state & PHASE) !== CellPhase.WRITING) {
        const locked = (((state >>> 2) + 1) << 2) | CellPhase.WRITING;
        // Takes the cell: from here no reader's compare-exchange from the state it loaded can succeed, so a
        // copy it makes of the words below while we write them is thrown away.
        if (mem.compareExchange(words, at + CellWords.state, state, locked) === state) break;
      } else if (spins >= WRITER_SPINS) {
        return Filled.DROPPED; // another writer (a fork of the same task) holds it: its value stands
      }
      mem.pause();
    }
    const unreadOfThis = (state & PHASE) === CellPhase.FULL && mem.read(words, at + CellWords.handle) === handle;
    mem.write(words, at + CellWords.handle, handle);
    mem.write(words, at + CellWords.length, length);
    const scratch = this.scratch;
    const n = length === NUMBER_LENGTH ? 2 : (length + 3) >>> 2;
    for (let i = 0; i < n; i++) mem.write(words, at + CellWords.data + i, scratch[i]);
    // Publishes the handle, length and value written above to the reader whose load sees FULL.
    mem.store(words, at + CellWords.state, (((state >>> 2) + 1) << 2) | CellPhase.FULL);
    return unreadOfThis ? Filled.REPLACED : Filled.NOTICE;
  }

  /**
   * The task's producer. Takes the unread value of record `index`'s cell, if any: its words into the
   * scratch, its length into {@link ProgressCells.length}, and the cell emptied.
   *
   * @param index A record index.
   * @returns The handle of the task the value is of, or {@link Taken.EMPTY}, or {@link Taken.BUSY} if a
   * writer holds the cell.
   */
  take(index: number): number {
    const words = this.words;
    const at = index * PROGRESS_CELL_WORDS;
    for (;;) {
      // Observes a writer's FULL store (and so the words it wrote before it).
      const state = mem.load(words, at + CellWords.state);
      const phase = state & PHASE;
      if (phase === CellPhase.EMPTY) return Taken.EMPTY;
      if (phase === CellPhase.WRITING) return Taken.BUSY;
      const handle = mem.read(words, at + CellWords.handle);
      const length = mem.read(words, at + CellWords.length);
      const n = length === NUMBER_LENGTH ? 2 : (length + 3) >>> 2;
      // A torn copy has any length: only a whole one is used (the compare-exchange below says which).
      const scratch = this.scratch;
      const whole = n >= 0 && n <= scratch.length;
      if (whole) { for (let i = 0; i < n; i++) scratch[i] = mem.read(words, at + CellWords.data + i); }
      // Empties the cell if no writer took it since the load: pairs with the writer's locking
      // compare-exchange (exactly one of the two moves on from `state`).
      if (mem.compareExchange(words, at + CellWords.state, state, (state & ~PHASE) | CellPhase.EMPTY) === state) {
        // (A length no writer writes, from a cell never written whole: nothing to deliver.)
        if (!whole) return Taken.EMPTY;
        this.length = length;
        return handle;
      }
    }
  }

  /**
   * The task's producer, placing a task with a progress handler in record `index` (the record is its own:
   * not yet published). Empties the cell, whatever it holds: a value of the record's earlier task, or a
   * WRITING phase left by a worker that died in a write.
   *
   * @param index A record index.
   */
  reset(index: number): void {
    const at = index * PROGRESS_CELL_WORDS + CellWords.state;
    const state = mem.load(this.words, at);
    // Empty already (the common case: its last task's value was read at its settle): no store, which
    // would take the line for writing once a task for nothing.
    if ((state & PHASE) === CellPhase.EMPTY) return;
    // A new sequence number: a reader's copy begun before this store can no longer empty the cell.
    mem.store(this.words, at, (((state >>> 2) + 1) << 2) | CellPhase.EMPTY);
  }
}

/**
 * The phase ({@link CellPhase}) of a cell's state word: for tests and diagnostics.
 *
 * @param state A cell's state word.
 * @returns Its phase.
 *
 * @example Usage
 * ```ts
 * import { CellPhase, phaseOf } from "./cell.ts";
 * console.log(phaseOf((7 << 2) | CellPhase.FULL) === CellPhase.FULL); // true
 * ```
 */
export function phaseOf(state: number): number {
  return state & PHASE;
}
