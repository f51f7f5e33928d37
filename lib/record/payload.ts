/**
 * Where a task record's payload lives, and the bytes in and out of it: the record area, the overflow
 * blocks and their free list, the slabs of the payload arena; writing a payload, handing its bytes
 * to the caller, freeing it. The bytes are opaque here: the codec (`codec/`) makes and reads them, and this
 * layer imports nothing of it (a {@link PayloadSource} is anything that can copy its bytes out, as the
 * codec's Encoder can).
 *
 * What it owns: {@link Payloads}, the part of a thread's table handle (`task.ts`'s TaskTable extends it)
 * that knows where a record's payload bytes are. A record is a 64-byte header (`fields.ts` RecordWords)
 * and `inlineBytes` of payload. A payload longer than the inline area continues in a chain of blocks; each
 * block starts with the index of the next (-1 at the end). A payload of {@link SLAB_FROM} bytes or more goes
 * whole into one slab of the payload arena instead (slabs.ts), named by its record (`payloadBlock` = -2 -
 * slot) and owned with it. Its `payloadLength` word says how many bytes (or PAYLOAD_BY_MESSAGE, fields.ts).
 * The typed views of these regions are the pool memory's (`protocol/memory.ts` `PoolMemory.records`,
 * opened once per thread); a handle takes them in its constructor and opens none of its own.
 *
 * Invariants:
 * - Payload bytes, the payload words of a record and the block chain are plain accesses (`mem.read` /
 *   `mem.write`): written by the record's owner before the atomic operation that hands the record over,
 *   read after the one that receives it (see task.ts).
 * - Every block index is in the free list or owned; a block is linked into its record's chain as it is
 *   taken, and unlinked one at a time as it is freed, so a throw or a death between two steps strands none
 *   and frees none twice. The one block in hand between the free list and a chain is noted
 *   (`[BLOCK]`, `[BLOCK_RECORD]` of the table notes), in the pool's buffer for a worker or another
 *   thread's producer, so that a repair (task.ts `repairCut`, `recoverNotes`) can complete the step.
 * - A slab named by a record is given back before the record stops naming it (Slabs.tla: FreeClearRecord).
 *
 * Threads: a record's owner writes, reads and frees its payload; the main thread reclaims the slabs of a
 * dead thread. Each thread opens its own handle.
 *
 * @module
 */

import { mem } from "../protocol/atomics.ts";
import { Injector, QUEUE_EMPTY } from "../protocol/injector.ts";
import { NoteWords, RECORD_HEADER_WORDS } from "../protocol/layout.ts";
import type { PoolMemory } from "../protocol/memory.ts";
import { producerThreadId } from "../protocol/producers.ts";
import { RecordFields, RecordWords } from "./fields.ts";
import { NO_SLAB, SLAB_FROM, SlabTable } from "./slabs.ts";

// The table notes' words (see `Payloads.note`).
/** A record `allocate` took from the shared free list and has not yet marked as ours (task.ts). */
export const ALLOCATING = 0;
/** A record being given back to the shared free list (task.ts `giveBack`). */
export const RELEASING = 1;
/** An overflow block in hand: taken for `[BLOCK_RECORD]`'s payload and not yet linked, or unlinked and not yet freed. */
export const BLOCK = 2;
/** The record whose chain `[BLOCK]` belongs to (it keeps its last value: it only qualifies `[BLOCK]`). */
export const BLOCK_RECORD = 3;
/** How many. */
export const TABLE_NOTE_WORDS = 4;

/**
 * Whether a table's notes (see `Payloads.note`) say a step is under way: a record or a block in hand.
 * (`[BLOCK_RECORD]` only qualifies `[BLOCK]`, and keeps its last value.)
 *
 * @param notes A worker's table notes (layout.ts NoteWords.table).
 * @returns `true` if a step is under way.
 */
export function tableNotesInStep(notes: Int32Array): boolean {
  return notes[ALLOCATING] !== -1 || notes[RELEASING] !== -1 || notes[BLOCK] !== -1;
}

/** A `payloadBlock` word: no overflow block, no slab. */
export const NO_BLOCK = -1;
/** A `payloadBlock` word at or below this names slab `SLAB_REF - word` (see slabs.ts) instead of a block. */
const SLAB_REF = -2;

/**
 * What a payload can be written from besides a plain byte array: its bytes as one view, and a copy of them
 * into a target without allocating. The codec's Encoder is one; its deferred runs (a large argument's bytes
 * read straight from the caller's buffer) are copied by `copyTo`, so that a large payload is copied once.
 */
export interface PayloadSource {
  /** The payload's length in bytes. */
  readonly length: number;
  /** The payload's bytes in one view (may make one: the slow paths use it). */
  readonly bytes: Uint8Array;
  /** Copies the payload into `target` at `offset`. */
  copyTo(target: Uint8Array, offset: number): void;
}

/**
 * Whose handle on the task records a `TaskTable` (or its {@link Payloads}) is: a worker's, the owner's
 * producer's (the main thread), or a producer's in another thread.
 */
export interface TableThread {
  /** A worker index, or -1 (the default) for a producer: the owner's or another thread's. */
  readonly owner?: number;
  /** The producer slot of a producer in another thread (1 to `shape.producers`); 0 (the default) else. */
  readonly slot?: number;
}

/**
 * The notes array of the thread a handle belongs to: a worker's own (`owner` ≥ 0), a producer slot's in
 * another thread (`slot` > 0), each in the pool's buffer.
 *
 * @returns The `words` notes words at `at` of that thread.
 */
export function threadNotes(
  memory: PoolMemory,
  owner: number,
  slot: number,
  at: number,
  words?: number,
): Int32Array {
  return slot > 0 ? memory.slotNotes(slot, at, words) : memory.notes(owner, at, words);
}

/**
 * The payload side of a thread's handle on the task records (see the module doc); `TaskTable` (task.ts)
 * extends it with handles, allocation and the free records.
 *
 * @example Usage
 * ```ts
 * import { PoolMemory } from "../protocol/memory.ts";
 * import { TaskTable } from "./task.ts";
 * const memory = PoolMemory.create({ workers: 1, dequeCapacity: 4, taskCapacity: 4, inlineBytes: 64, blockBytes: 128, blocks: 4 });
 * TaskTable.init(memory);
 * const table = new TaskTable(memory);
 * const index = table.indexOf(table.allocate());
 * table.writePayload(index, new Uint8Array(200).fill(7)); // inline, then a chain of blocks
 * const bytes = table.payloadBytes(index);
 * const start = table.payloadStart(index);
 * console.log(bytes[start + 199], table.fields.payloadLength(index)); // 7 200
 * ```
 */
export class Payloads {
  /** Int32 view of the record area. */
  readonly words: Int32Array;
  /** The typed view of the records' fields (`fields.ts`): how code outside `record/` reaches them. */
  readonly fields: RecordFields;
  /** Byte view of the record area. */
  readonly bytes: Uint8Array;
  /** Int32 view of the block area. */
  readonly blockWords: Int32Array;
  /** Byte view of the block area. */
  readonly blockBytes: Uint8Array;
  /** Free block indices. */
  readonly freeBlocks: Injector;
  /** The slabs of large payloads. */
  readonly slabs: SlabTable;
  /** Int32 words per record. */
  readonly recordWords: number;
  /** Payload bytes inside a record. */
  readonly inlineBytes: number;
  /** Bytes per block, its next word included. */
  readonly bytesPerBlock: number;
  /** Words per block. */
  readonly wordsPerBlock: number;
  /** How many records the table holds. */
  protected readonly recordCount: number;
  /** The thread this handle belongs to as the records and slabs name it: a worker index, -1, or a producer's id. */
  protected readonly owner: number;
  /**
   * This handle's notes: `[ALLOCATING]` and `[RELEASING]` (task.ts), `[BLOCK]`, an overflow block in hand,
   * taken for record `[BLOCK_RECORD]`'s payload and not yet linked into its chain, or unlinked from it and
   * not yet given back (see `writeBlocks`, `freePayload`); -1 if none. A worker's are in the pool's buffer
   * (layout.ts NoteWords.table), so that the main thread can complete them if it dies (task.ts
   * `recoverNotes`). Plain element stores, not facade calls: a call could be where the thread dies (see the
   * deque's notes).
   */
  protected readonly note: Int32Array;
  /** Where a payload in a block chain is gathered for its reader (see {@link Payloads.payloadBytes}). */
  private scratch = new Uint8Array(1024);
  /** See {@link Payloads.maxPayloadBytes}. */
  private maxPayload = -1;

  /**
   * Takes the payload views of an initialized pool from this thread's memory (see `TaskTable`'s
   * constructor).
   *
   * @param memory This thread's memory of the pool (its records' regions, its notes, its arena).
   * @param thread Whose handle this is (a worker's, or a producer's: the owner's or a remote slot's).
   */
  constructor(memory: PoolMemory, thread: TableThread = {}) {
    const { owner = -1, slot = 0 } = thread;
    const { layout, records } = memory;
    const { taskCapacity, inlineBytes, blockBytes } = layout.shape;
    // A producer in another thread (slot > 0) notes its steps in its slot's notes, as a worker does in its
    // own, and marks what it holds with an id past every worker's (protocol/producers.ts).
    const shared = owner >= 0 || slot > 0;
    this.owner = slot > 0 ? producerThreadId(layout, slot) : owner;
    this.note = shared
      ? threadNotes(memory, owner, slot, NoteWords.table, TABLE_NOTE_WORDS)
      : new Int32Array(TABLE_NOTE_WORDS);
    // (A worker's: the main thread's recovery of its predecessor, if any, is done.)
    this.note.fill(-1);
    this.words = records.words;
    this.bytes = records.bytes;
    this.fields = new RecordFields(this.words, layout.recordBytes / 4);
    this.blockWords = records.blockWords;
    this.blockBytes = records.blockBytes;
    // A worker's notes in the pool's buffer (the main thread completes its operation if it dies in one).
    this.freeBlocks = new Injector(
      records.freeBlocks,
      shared ? threadNotes(memory, owner, slot, NoteWords.freeBlocks) : undefined,
    );
    this.slabs = new SlabTable(records.slabWords, memory.arena, this.owner);
    this.recordCount = taskCapacity;
    this.recordWords = layout.recordBytes / 4;
    this.inlineBytes = inlineBytes;
    this.bytesPerBlock = blockBytes;
    this.wordsPerBlock = blockBytes / 4;
  }

  /** The word index of `field` of record `index`. */
  at(index: number, field: number): number {
    return index * this.recordWords + field;
  }

  /**
   * Copies a record's payload bytes out (inline part and block chain) and frees its blocks: the bytes
   * then live in this thread's memory, and the blocks serve others.
   *
   * @param index The record index.
   * @returns The payload's bytes.
   */
  takePayloadBytes(index: number): Uint8Array {
    const length = mem.read(this.words, this.at(index, RecordWords.payloadLength));
    const start = this.at(index, RECORD_HEADER_WORDS) * 4;
    const slab = SLAB_REF - mem.read(this.words, this.at(index, RecordWords.payloadBlock));
    if (slab >= 0) {
      const bytes = this.slabs.bytes(slab).slice(0, length);
      this.freePayload(index);
      return bytes;
    }
    const out = new Uint8Array(length);
    out.set(this.bytes.subarray(start, start + Math.min(length, this.inlineBytes)), 0);
    const per = this.bytesPerBlock - 4;
    let block = mem.read(this.words, this.at(index, RecordWords.payloadBlock));
    for (let from = this.inlineBytes; from < length; from += per) {
      const chunk = Math.min(per, length - from);
      const at = block * this.bytesPerBlock + 4;
      out.set(this.blockBytes.subarray(at, at + chunk), from);
      block = mem.read(this.blockWords, block * this.wordsPerBlock);
    }
    this.freePayload(index);
    return out;
  }

  /** Whether record `index`'s payload holds overflow blocks or a slab. */
  holdsBlocks(index: number): boolean {
    return mem.read(this.words, this.at(index, RecordWords.payloadBlock)) !== NO_BLOCK;
  }

  /**
   * The record's owner. Stores `source` as the payload: inline, then in blocks; or in one slab.
   *
   * @param index The record index.
   * @param source The bytes, or a source holding them (an Encoder, whose deferred runs are then copied
   * straight from the caller's buffers into the slab: one copy for a large payload).
   * @returns `true`, or `false` if there are not enough free blocks (nothing is written then).
   */
  writePayload(index: number, source: Uint8Array | PayloadSource): boolean {
    const length = source.length;
    const inline = this.inlineBytes;
    const start = this.at(index, RECORD_HEADER_WORDS) * 4;
    this.freePayload(index);
    if (length > inline) {
      // Large (or out of blocks): one slab, one bulk copy, read in place. Else (or out of slabs): blocks.
      const large = length >= SLAB_FROM;
      if (!large && !(source instanceof Uint8Array)) source = source.bytes;
      if (large || !this.writeBlocks(index, source as Uint8Array)) {
        const slab = this.takeSlab(length);
        if (slab !== NO_SLAB) {
          const bytes = this.slabs.bytes(slab);
          if (source instanceof Uint8Array) bytes.set(source);
          else source.copyTo(bytes, 0);
          mem.write(this.words, this.at(index, RecordWords.payloadBlock), SLAB_REF - slab); // spec: RecordNameSlab
          mem.write(this.words, this.at(index, RecordWords.payloadLength), length);
          return true;
        }
        if (!(source instanceof Uint8Array)) source = source.bytes;
        if (!large || !this.writeBlocks(index, source)) return false;
      }
    }
    this.copyInline(start, source instanceof Uint8Array ? source : source.bytes, 0, length < inline ? length : inline);
    mem.write(this.words, this.at(index, RecordWords.payloadLength), length);
    return true;
  }

  /** Copies `n` bytes of `bytes` from `from` into the records' bytes at `start`: by element when short. */
  private copyInline(start: number, bytes: Uint8Array, from: number, n: number): void {
    const target = this.bytes;
    if (n <= 64) {
      for (let i = 0; i < n; i++) target[start + i] = bytes[from + i];
    } else {
      target.set(bytes.subarray(from, from + n), start);
    }
  }

  /**
   * The record's owner. Stores `length` bytes of `bytes` from `from` as the payload: copied straight into
   * the record when they fit inline (no view made), else as {@link Payloads.writePayload} does.
   *
   * @param index The record index.
   * @param bytes The buffer holding the payload.
   * @param from Its first byte's index.
   * @param length Its length.
   * @returns `true`, or `false` if there are not enough free blocks (nothing is written then).
   */
  writeRange(index: number, bytes: Uint8Array, from: number, length: number): boolean {
    if (length > this.inlineBytes) return this.writePayload(index, bytes.subarray(from, from + length));
    this.freePayload(index);
    this.copyInline(this.at(index, RECORD_HEADER_WORDS) * 4, bytes, from, length);
    mem.write(this.words, this.at(index, RecordWords.payloadLength), length);
    return true;
  }

  /**
   * The record's owner. Stores a source's bytes as the payload; without allocating when they fit inline
   * (the common case: the source copies straight into the record).
   *
   * @param index The record index.
   * @param source The bytes' source: an encoder whose last `encode` succeeded, typically.
   * @returns `true`, or `false` if there are not enough free blocks (nothing is written then).
   */
  writeEncoded(index: number, source: PayloadSource): boolean {
    const length = source.length;
    if (length > this.inlineBytes) return this.writePayload(index, source);
    this.freePayload(index);
    source.copyTo(this.bytes, this.at(index, RECORD_HEADER_WORDS) * 4);
    mem.write(this.words, this.at(index, RecordWords.payloadLength), length);
    return true;
  }

  /** A slab for `length` bytes; the main thread resets the arena (if nothing is in it) before giving up. */
  private takeSlab(length: number): number {
    const slab = this.slabs.take(length);
    // (Not for a payload larger than the arena, nor without one: a reset could not help.)
    if (slab !== NO_SLAB || this.owner !== -1 || length > this.slabs.maxBytes || !this.slabs.reset()) return slab;
    return this.slabs.take(length);
  }

  /**
   * Writes the part of `source` past the inline area into a chain of blocks; false if too few are free.
   * Each block is linked into the record's chain as it is taken (at its head), so that whoever frees the
   * record frees it: a throw or a death between two takes strands none. The block in hand between its
   * take and its link is noted (`[BLOCK]`). The chain ends up in the reverse order of the takes, and the
   * chunks are written along it.
   */
  private writeBlocks(index: number, source: Uint8Array): boolean {
    const length = source.length;
    const inline = this.inlineBytes;
    const per = this.bytesPerBlock - 4;
    const needed = Math.ceil((length - inline) / per);
    const headAt = this.at(index, RecordWords.payloadBlock);
    const note = this.note;
    // (A block step cut short earlier was completed by writePayload's freePayload, before these notes' reuse.)
    note[BLOCK_RECORD] = index;
    for (let i = 0; i < needed; i++) {
      const block = this.freeBlocks.pop();
      if (block === QUEUE_EMPTY) {
        this.freePayload(index);
        return false;
      }
      note[BLOCK] = block; // (no call between the pop's return and this store)
      // Whatever this handle pushed last may be this very block (freed by us, then round the list): a
      // repair of a cut here must not take it for published by a push of ours.
      this.freeBlocks.published = QUEUE_EMPTY;
      mem.write(this.blockWords, block * this.wordsPerBlock, mem.read(this.words, headAt));
      mem.write(this.words, headAt, block);
      note[BLOCK] = -1;
    }
    let block = mem.read(this.words, headAt);
    for (let from = inline; from < length; from += per) {
      const chunk = Math.min(per, length - from);
      this.blockBytes.set(source.subarray(from, from + chunk), block * this.bytesPerBlock + 4);
      block = mem.read(this.blockWords, block * this.wordsPerBlock);
    }
    return true;
  }

  /**
   * The record's owner. The bytes that hold record `index`'s payload in one piece, from
   * {@link Payloads.payloadStart} for its `payloadLength` (fields.ts): the record area itself when the
   * payload is inline, its slab, or, for a block chain, this handle's scratch with the chain gathered into
   * it (valid until the next call). Allocates nothing but a larger scratch. Frees nothing: the blocks go
   * with the record.
   *
   * @param index The record index.
   * @returns The view the payload is in.
   */
  payloadBytes(index: number): Uint8Array {
    const length = mem.read(this.words, this.at(index, RecordWords.payloadLength));
    if (length <= this.inlineBytes) return this.bytes;
    const slab = SLAB_REF - mem.read(this.words, this.at(index, RecordWords.payloadBlock));
    if (slab >= 0) return this.slabs.bytes(slab);
    const start = this.at(index, RECORD_HEADER_WORDS) * 4;
    if (this.scratch.length < length) this.scratch = new Uint8Array(2 ** Math.ceil(Math.log2(length)));
    const scratch = this.scratch;
    scratch.set(this.bytes.subarray(start, start + this.inlineBytes), 0);
    const per = this.bytesPerBlock - 4;
    let block = mem.read(this.words, this.at(index, RecordWords.payloadBlock));
    for (let from = this.inlineBytes; from < length; from += per) {
      const chunk = Math.min(per, length - from);
      const at = block * this.bytesPerBlock + 4;
      scratch.set(this.blockBytes.subarray(at, at + chunk), from);
      block = mem.read(this.blockWords, block * this.wordsPerBlock);
    }
    return scratch;
  }

  /**
   * The record's owner. Where record `index`'s payload starts in the view {@link Payloads.payloadBytes}
   * returns for it: in the record when it is inline, else at 0.
   *
   * @param index The record index.
   * @returns The index of the payload's first byte in that view.
   */
  payloadStart(index: number): number {
    const length = mem.read(this.words, this.at(index, RecordWords.payloadLength));
    return length <= this.inlineBytes ? this.at(index, RECORD_HEADER_WORDS) * 4 : 0;
  }

  /**
   * The record's owner. Returns the payload's overflow blocks to the free list.
   *
   * @param index The record index.
   */
  freePayload(index: number): void {
    // A block step an earlier throw cut short is completed before its notes are reused (here, or by the
    // writeBlocks that follows a free of a slab): else the block in hand would be in no chain, no list and
    // no note, lost for good (as a stack overflow in a task's join, freeing a fork's result, then the
    // task's error written into its record, would leave it).
    if (this.note[BLOCK] !== -1) this.repairBlockNote();
    const blockAt = this.at(index, RecordWords.payloadBlock);
    let block = mem.read(this.words, blockAt);
    if (block <= SLAB_REF) {
      // Freed, then forgotten: a slot still named by a record is never taken for a dead worker's (slabs.ts).
      this.slabs.give(SLAB_REF - block);
      // A store, not a plain write: recovery reads it with a load, and must not see the clear before the
      // give-back above (Slabs.tla: the order makes reclaim safe; a plain write would not keep it).
      mem.store(this.words, blockAt, NO_BLOCK); // spec: FreeClearRecord
      return;
    }
    // One block at a time, unlinked from the head of the chain and then given back: the rest stays
    // reachable from the record, so a throw or a death between two frees strands none and frees none
    // twice. The block in hand is noted (`[BLOCK]`), and `published` reset so that a repair can tell
    // whether its push got as far as publishing.
    const note = this.note;
    note[BLOCK_RECORD] = index;
    while (block !== NO_BLOCK) {
      const next = mem.read(this.blockWords, block * this.wordsPerBlock);
      note[BLOCK] = block;
      mem.write(this.words, blockAt, next);
      this.freeBlocks.published = QUEUE_EMPTY;
      this.freeBlocks.pushPatiently(block);
      note[BLOCK] = -1;
      block = next;
    }
  }

  /**
   * The owning thread. Completes the block step a throw cut short (`[BLOCK]` still set: see `writeBlocks`,
   * `freePayload`): the block goes back to the free list, unless it is linked at its record's head (then it
   * goes with the record) or the repair of the list's own cut push published it (`published` was reset
   * after the block's pop and before its push). Cut short itself, it resumes next time: the note stays
   * until the block is placed, and `published` is reset before the push that places it.
   */
  protected repairBlockNote(): void {
    const note = this.note;
    const block = note[BLOCK];
    if (block === -1) return;
    const freeBlocks = this.freeBlocks;
    freeBlocks.repair();
    if (block !== freeBlocks.published && !this.linkedAt(note[BLOCK_RECORD], block)) {
      freeBlocks.published = QUEUE_EMPTY;
      freeBlocks.pushPatiently(block);
    }
    note[BLOCK] = -1;
  }

  /** Whether `block` is the head of record `index`'s block chain (a noted block is linked at the head). */
  protected linkedAt(index: number, block: number): boolean {
    return index >= 0 && index < this.recordCount &&
      mem.read(this.words, this.at(index, RecordWords.payloadBlock)) === block;
  }

  /** The largest payload the pool can ever hold: the inline area plus every block, or a slab of the arena. */
  maxPayloadBytes(): number {
    // Read once: every term is fixed when the pool's memory is set up (the arena's cap is written by its
    // init, before any thread opens a table), and a submission asks for it every time.
    if (this.maxPayload < 0) {
      this.maxPayload = Math.max(
        this.inlineBytes + this.freeBlocks.capacity * (this.bytesPerBlock - 4),
        this.slabs.maxBytes,
      );
    }
    return this.maxPayload;
  }

  /**
   * The main thread, after worker `dead` died and its records were repaired, before its replacement starts:
   * empties the slabs it took and never put in a record (see {@link SlabTable.reclaim}).
   *
   * @param dead The dead worker's index.
   * @returns How many came back.
   */
  reclaimSlabsOf(dead: number): number {
    const capacity = this.recordCount;
    return this.slabs.reclaim(dead, (slab) => {
      for (let i = 0; i < capacity; i++) {
        if (mem.load(this.words, this.at(i, RecordWords.payloadBlock)) === SLAB_REF - slab) return true; // spec: ReclaimReadRecord
      }
      return false;
    });
  }
}
