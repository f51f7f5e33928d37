/**
 * Large payloads: one contiguous slab each, in a growable shared arena, reused by size.
 *
 * What it owns: the payload arena (a growable SharedArrayBuffer of at most `payloadMemory` bytes, made by
 * the pool and sent to every worker at start, so that no thread ever waits for a message to reach it) and
 * the slab table in the pool's buffer that carves it up. A payload of {@link SLAB_FROM} bytes or more is
 * copied into one slab in a single bulk copy and decoded straight from it, instead of being split into a
 * chain of small blocks (task.ts), which costs a free-list pop and push and two copies per block.
 *
 * A slab is a slot of the table: its state, the offset and size of its bytes in the arena. Slabs are made
 * by bumping the arena's top (and growing the arena when the top passes its length) and are then kept:
 * a freed slab goes back to FREE and is taken again by a payload of a size it fits (at least the payload,
 * at most twice its size class), so that a steady workload allocates nothing after its first round.
 *
 * States of a slot ({@link SlabState}): EMPTY (no bytes), MAKING (claimed by the main thread to reset the
 * arena), FREE, and HELD by a thread (`HELD + 1 + thread`, the main thread being thread -1): the thread
 * that took or is making it, which puts it in a record's payload. Whoever owns the record
 * then owns the slab (it travels with the record, see task.ts) and gives it back when it frees the payload.
 *
 * Invariants:
 * - A slab is taken by one thread: the compare-exchange FREE → HELD (or EMPTY → HELD for a new one)
 *   decides, so two payloads never share bytes.
 * - A slab's offset and size are written before the store that makes it HELD, and read after the record
 *   hand-over that passes it on (a queue push and pop, the DONE store, a latch): seq-cst atomics order them.
 * - The arena's top only grows, except in {@link SlabTable.reset}, which the main thread makes only when it
 *   has claimed every slot (so no slab is held or being made): fragmentation is undone when the pool is
 *   quiet, which is also when a payload that fits nowhere waits (the submission backlog).
 * - A slab held by a worker that died before it put the slab in a record is freed by
 *   {@link SlabTable.reclaim} (the main thread, after the death, when no record names it). Its owner's
 *   give-back frees the slot before it clears the record's reference, so a slot no record names and still
 *   held by the dead worker is one it never handed on.
 *
 * Threads: any thread may take, read and give slabs, following the record ownership. Reset is the main
 * thread's; reclaim is the main thread's for a dead worker, and a thread's own for itself, at the repair
 * of a step a throw cut short (`TaskTable.repairCut`, the pool's `repairSubmission`).
 *
 * @module
 */

import { mem } from "../protocol/atomics.ts";
import { SLAB_HEADER_WORDS, SLAB_SLOT_WORDS, SLAB_SLOTS } from "../protocol/layout.ts";

export { SLAB_REGION_BYTES, SLAB_SLOTS } from "../protocol/layout.ts";

/** Words per slot. */
const SLOT_WORDS = SLAB_SLOT_WORDS;
/** Words before the first slot: the arena's top, its cap, and the count of resets. */
const HEADER_WORDS = SLAB_HEADER_WORDS;

/**
 * Payloads of at least this many bytes go to a slab (smaller ones to the record and its blocks), per
 * runtime. bench/experiments/payload_crossover.ts (2 workers, 5 rounds, slabs ÷ blocks) put the crossover
 * between 8 and 16 KiB on Node 24 (0.79 at 4 KiB, 1.21 at 16 KiB), between 4 and 16 KiB on Bun (0.98,
 * 1.43) and between 16 and 64 KiB on Deno (0.87 at 16 KiB, 1.64 at 64 KiB); at 64 KiB slabs won 1.3 to 2.7
 * times everywhere.
 */
export const SLAB_FROM: number = "Deno" in globalThis ? 32768 : "Bun" in globalThis ? 8192 : 16384;
/** The smallest slab made, in bytes. */
const MIN_SLAB = 16384;
/** The arena grows in steps of at least this many bytes (fewer grow calls). */
const GROW_STEP = 2 ** 20;

/** Header words of the slab region. */
const HeaderWords = Object.freeze({
  /** Bytes of the arena handed out to slabs so far. */
  top: 0,
  /** The arena's cap (`payloadMemory`), bytes. */
  cap: 1,
  /** Times the main thread reset the arena. */
  resets: 2,
});

/** Words of a slot. */
const SlotWords = Object.freeze({ state: 0, offset: 1, size: 2 });

/** The states of a slab slot. */
export const SlabState = Object.freeze({
  /** No slab. */
  EMPTY: 0,
  /** Claimed by the main thread while it resets the arena. */
  MAKING: 1,
  /** A slab nobody holds. */
  FREE: 2,
  /** `HELD + 1 + thread`: held by `thread` (-1 the main thread) or by the record it put it in. */
  HELD: 3,
});

/** Returned by {@link SlabTable.take} when no slab can be had. */
export const NO_SLAB = -1;

/** The size of the slab made for a payload of `n` bytes: n rounded up to an eighth of its power of two. */
export function slabSize(n: number): number {
  if (n <= MIN_SLAB) return MIN_SLAB;
  const step = 2 ** (Math.floor(Math.log2(n)) - 3);
  return Math.ceil(n / step) * step;
}

/**
 * One thread's handle on the slab table and the arena.
 *
 * @example Usage
 * ```ts
 * import { SLAB_REGION_BYTES, SlabTable } from "./slabs.ts";
 * const words = new Int32Array(new SharedArrayBuffer(SLAB_REGION_BYTES));
 * const arena = new SharedArrayBuffer(0, { maxByteLength: 2 ** 20 });
 * SlabTable.init(words, arena);
 * const slabs = new SlabTable(words, arena, -1);
 * const slot = slabs.take(100_000);
 * slabs.bytes(slot).set([1, 2, 3]);
 * console.log(slabs.bytes(slot)[2]); // 3
 * slabs.give(slot);
 * ```
 */
export class SlabTable {
  private readonly words: Int32Array;
  private readonly arena: SharedArrayBuffer | undefined;
  /** A length-tracking view of the arena: it sees every growth, by any thread. */
  private readonly view: Uint8Array;
  private readonly held: number;

  /**
   * Writes the initial state: no slabs, the arena's cap.
   *
   * @param words The slab region ({@link SLAB_REGION_BYTES}) of a new pool's buffer.
   * @param arena The payload arena (growable), or undefined for none (`payloadMemory: 0`).
   */
  static init(words: Int32Array, arena: SharedArrayBuffer | undefined): void {
    mem.store(words, HeaderWords.cap, arena === undefined ? 0 : arena.maxByteLength);
  }

  /**
   * @param words The slab region of the pool's buffer.
   * @param arena The payload arena the pool made (undefined for none).
   * @param thread This thread: a worker index, or -1 for the main thread.
   */
  constructor(words: Int32Array, arena: SharedArrayBuffer | undefined, thread: number) {
    this.words = words;
    this.arena = arena;
    this.view = arena === undefined ? new Uint8Array(0) : new Uint8Array(arena);
    this.held = SlabState.HELD + 1 + thread;
  }

  /** The largest payload a slab can hold (0 without an arena). */
  get maxBytes(): number {
    return mem.load(this.words, HeaderWords.cap);
  }

  /** Times the main thread reset the arena (for stats and tests). */
  get resets(): number {
    return mem.load(this.words, HeaderWords.resets);
  }

  /** Bytes of the arena handed out to slabs. */
  get used(): number {
    return mem.load(this.words, HeaderWords.top);
  }

  /**
   * For tests and diagnostics: how many slots hold a slab (made, not EMPTY) and how many of those are FREE.
   * Exact only while no thread takes, gives or resets.
   *
   * @returns The counts.
   */
  census(): { made: number; free: number } {
    let made = 0;
    let free = 0;
    for (let slot = 0; slot < SLAB_SLOTS; slot++) {
      const state = mem.load(this.words, HEADER_WORDS + slot * SLOT_WORDS + SlotWords.state);
      if (state !== SlabState.EMPTY) made++;
      if (state === SlabState.FREE) free++;
    }
    return { made, free };
  }

  /**
   * Takes a slab of at least `n` bytes: a free one that fits, or a new one.
   *
   * @param n The payload's length.
   * @returns The slot, or {@link NO_SLAB} if every fitting slab is held and the arena (or the table) is full.
   */
  take(n: number): number {
    const words = this.words;
    const cap = mem.load(words, HeaderWords.cap);
    if (n > cap) return NO_SLAB;
    const size = slabSize(n);
    let empty = -1;
    for (let slot = 0; slot < SLAB_SLOTS; slot++) {
      const at = HEADER_WORDS + slot * SLOT_WORDS;
      const state = mem.load(words, at + SlotWords.state); // spec: TakeReadState
      if (state === SlabState.EMPTY) {
        if (empty < 0) empty = slot;
        continue;
      }
      if (state !== SlabState.FREE) continue;
      // A free slab's size was written before the store that made it FREE, which this load read.
      const has = mem.load(words, at + SlotWords.size); // spec: TakeReadSize
      if (has < n || has > 2 * size) continue;
      // Losing this race (another thread took it, or the main thread is resetting) is not an error: go on.
      if (mem.compareExchange(words, at + SlotWords.state, SlabState.FREE, this.held) === SlabState.FREE) { // spec: TakeClaimFree
        // Nothing tied the size read above to this claim: meanwhile the main thread may have reset the
        // arena and remade this slot smaller (Slabs.tla found it: the payload's copy then threw). Ours
        // now, so its size is stable: keep it if it still fits, else give it back and go on.
        if (mem.load(words, at + SlotWords.size) >= n) return slot; // spec: TakeRecheckSize
        mem.store(words, at + SlotWords.state, SlabState.FREE); // spec: TakeGiveBackSmall
      }
    }
    for (let slot = empty < 0 ? SLAB_SLOTS : empty; slot < SLAB_SLOTS; slot++) {
      const at = HEADER_WORDS + slot * SLOT_WORDS;
      // Held from the claim on: a death before the offset and size are written leaves a slot that
      // reclaim empties, never a FREE one with another slab's bytes.
      if (mem.compareExchange(words, at + SlotWords.state, SlabState.EMPTY, this.held) !== SlabState.EMPTY) { // spec: TakeClaimEmpty
        continue;
      }
      const offset = this.carve(size, cap);
      if (offset < 0) {
        mem.store(words, at + SlotWords.state, SlabState.EMPTY); // spec: TakeUndoClaim
        return NO_SLAB;
      }
      // Read by other threads only once the slab is FREE (the give-back's store publishes them).
      mem.store(words, at + SlotWords.offset, offset); // spec: TakeWriteOffset
      mem.store(words, at + SlotWords.size, size); // spec: TakeWriteSize
      return slot;
    }
    return NO_SLAB;
  }

  /** Bumps the arena's top by `size` bytes and grows the arena to cover them; -1 if over the cap. */
  private carve(size: number, cap: number): number {
    const words = this.words;
    let top = mem.load(words, HeaderWords.top); // spec: CarveReadTop
    for (;;) {
      if (top + size > cap) return -1;
      const seen = mem.compareExchange(words, HeaderWords.top, top, top + size); // spec: CarveCasTop
      if (seen === top) break;
      top = seen;
    }
    const end = top + size;
    const arena = this.arena!;
    if (arena.byteLength < end) {
      try {
        arena.grow(Math.min(cap, Math.max(end, arena.byteLength + GROW_STEP)));
      } catch (error) {
        // Another thread grew it past our length meanwhile (a grow that would shrink throws): fine if it
        // covers us. Otherwise the memory was refused: the bytes stay carved (unused until a reset).
        if (arena.byteLength < end) {
          if (error instanceof RangeError) return -1;
          throw error;
        }
      }
    }
    return top;
  }

  /**
   * The bytes of slab `slot`: a view of exactly its size. The caller holds it (or owns the record it is in).
   *
   * @param slot A slot from {@link SlabTable.take}.
   */
  bytes(slot: number): Uint8Array {
    const at = HEADER_WORDS + slot * SLOT_WORDS;
    const offset = mem.load(this.words, at + SlotWords.offset); // spec: BytesReadOffset
    return this.view.subarray(offset, offset + mem.load(this.words, at + SlotWords.size)); // spec: BytesReadSize
  }

  /**
   * Gives slab `slot` back (FREE): the thread that holds it, or owns the record it is in.
   *
   * @param slot A slot from {@link SlabTable.take}.
   */
  give(slot: number): void {
    mem.store(this.words, HEADER_WORDS + slot * SLOT_WORDS + SlotWords.state, SlabState.FREE); // spec: FreeGive
  }

  /**
   * The main thread. Frees the whole arena for new slabs when no slab is held or being made: every slot
   * is claimed first (FREE or EMPTY → MAKING), so no other thread can take or make one meanwhile.
   *
   * @returns `true` if it reset; `false` (nothing changed) if some slab is in use.
   */
  reset(): boolean {
    const words = this.words;
    const was: number[] = [];
    for (let slot = 0; slot < SLAB_SLOTS; slot++) {
      const at = HEADER_WORDS + slot * SLOT_WORDS + SlotWords.state;
      const state = mem.load(words, at); // spec: ResetReadState
      const claimed = (state === SlabState.FREE || state === SlabState.EMPTY) &&
        mem.compareExchange(words, at, state, SlabState.MAKING) === state; // spec: ResetClaim
      if (!claimed) {
        // In use: put back what we claimed, as it was.
        for (let back = 0; back < was.length; back++) {
          mem.store(words, HEADER_WORDS + back * SLOT_WORDS + SlotWords.state, was[back]); // spec: ResetRestore
        }
        return false;
      }
      was.push(state);
    }
    mem.store(words, HeaderWords.top, 0); // spec: ResetTop
    mem.add(words, HeaderWords.resets, 1); // spec: ResetCount
    for (let slot = 0; slot < SLAB_SLOTS; slot++) {
      mem.store(words, HEADER_WORDS + slot * SLOT_WORDS + SlotWords.state, SlabState.EMPTY); // spec: ResetEmpty
    }
    return true;
  }

  /**
   * The main thread, after worker `dead` died (and its records were repaired), before its replacement
   * starts (which takes slabs under the same index). Empties the slots it held and never put in a record
   * (it died between taking or making a slab and handing it on): EMPTY, not FREE, because a slot it was
   * making may lack its offset and size; the bytes stay carved until a reset.
   *
   * @param dead The dead worker's index.
   * @param named Whether some record's payload names a slot.
   * @returns How many came back.
   */
  reclaim(dead: number, named: (slot: number) => boolean): number {
    const words = this.words;
    const held = SlabState.HELD + 1 + dead;
    let back = 0;
    for (let slot = 0; slot < SLAB_SLOTS; slot++) {
      const at = HEADER_WORDS + slot * SLOT_WORDS + SlotWords.state;
      if (mem.load(words, at) !== held || named(slot)) continue; // spec: ReclaimReadState
      // A slot the dead worker handed on is freed by its record's owner before the record stops naming
      // it: not named now means freed already (then this exchange fails) or never handed on.
      if (mem.compareExchange(words, at, held, SlabState.EMPTY) === held) back++; // spec: ReclaimCas
    }
    return back;
  }
}
