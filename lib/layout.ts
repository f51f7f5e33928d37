/**
 * Where every region lives in the pool's SharedArrayBuffer: pure functions of the options, no state.
 *
 * What it owns: the byte layout of each shared structure and the validation of the numbers that shape it
 * (capacities, offsets, buffer sizes). Every other module asks here where its words are.
 *
 * Invariants:
 * - Every region starts on a 64-byte cache line, and words written by different threads at high rates
 *   (a deque's `top`, written by thieves, and `bottom`, written by its owner) sit on different lines, so
 *   one thread's writes do not invalidate the line the other spins on (false sharing).
 * - Capacities are powers of two, so a wrapping int32 index maps to a slot with `index & (capacity - 1)`
 *   (two's complement makes that right for negative indices too).
 *
 * Threads: pure functions, callable anywhere.
 *
 * @module
 */

/** Bytes in a cache line on the machines filch targets (x86-64, arm64). */
export const CACHE_LINE_BYTES = 64;

/** Int32 words in a cache line. */
export const CACHE_LINE_WORDS: number = CACHE_LINE_BYTES / 4;

/** Smallest deque capacity: one slot could not tell "full" from "one task" usefully. */
export const MIN_DEQUE_CAPACITY = 2;

/**
 * Largest deque capacity. Indices are int32 and compared by wrapping difference, which is exact while
 * `bottom - top` stays within ±2^30; 2^28 slots (1 GiB) is far past any sensible deque.
 */
export const MAX_DEQUE_CAPACITY: number = 2 ** 28;

/** Word offsets inside a deque region, relative to the region's first word. */
export const DequeWords = Object.freeze({
  /** `top`: the next index a thief takes; advanced only by compare-exchange. Line 0. */
  top: 0,
  /** `bottom`: one past the owner's newest task; written only by the owner. Line 1. */
  bottom: CACHE_LINE_WORDS,
  /** First slot: `capacity` int32 task values follow, from line 2. */
  slots: 2 * CACHE_LINE_WORDS,
});

/**
 * The size in bytes of a deque region of `capacity` slots, rounded up to whole cache lines.
 *
 * @param capacity Slots in the ring: a power of two from {@link MIN_DEQUE_CAPACITY} to {@link MAX_DEQUE_CAPACITY}.
 * @returns The bytes the region occupies.
 * @throws {RangeError} If `capacity` breaks the rule above.
 *
 * @example Usage
 * ```ts
 * import { dequeRegionBytes } from "./layout.ts";
 * console.log(dequeRegionBytes(256)); // 1152: two header lines and 16 lines of slots
 * ```
 */
export function dequeRegionBytes(capacity: number): number {
  checkCapacity("deque", capacity);
  return roundUpToLine(DequeWords.slots * 4 + capacity * 4);
}

/**
 * Checks that `capacity` is a power of two in the deque's range.
 *
 * @param what The structure being created, for the message.
 * @param capacity The value to check.
 * @throws {RangeError} Naming the value and the rule it breaks.
 *
 * @example Usage
 * ```ts
 * import { checkCapacity } from "./layout.ts";
 * checkCapacity("deque", 64); // fine
 * ```
 */
export function checkCapacity(what: string, capacity: number): void {
  if (!Number.isInteger(capacity)) {
    throw new RangeError(`Cannot create ${what} as 'capacity' must be an integer: received ${String(capacity)}`);
  }
  if (capacity < MIN_DEQUE_CAPACITY || capacity > MAX_DEQUE_CAPACITY) {
    throw new RangeError(
      `Cannot create ${what} as 'capacity' must be from ${MIN_DEQUE_CAPACITY} to 2^28: received ${capacity}`,
    );
  }
  if ((capacity & (capacity - 1)) !== 0) {
    throw new RangeError(`Cannot create ${what} as 'capacity' must be a power of two: received ${capacity}`);
  }
}

/**
 * Checks that `[byteOffset, byteOffset + bytes)` is a cache-line-aligned range inside `buffer`.
 *
 * @param what The structure being placed, for the message.
 * @param buffer The buffer the region lives in.
 * @param byteOffset Where the region starts.
 * @param bytes How long it is.
 * @throws {TypeError} If `buffer` is not an ArrayBuffer or SharedArrayBuffer.
 * @throws {RangeError} If the offset is not a non-negative multiple of 64, or the region does not fit.
 *
 * @example Usage
 * ```ts
 * import { checkRegion } from "./layout.ts";
 * checkRegion("deque", new SharedArrayBuffer(1024), 64, 512); // fine
 * ```
 */
export function checkRegion(
  what: string,
  buffer: SharedArrayBuffer | ArrayBuffer,
  byteOffset: number,
  bytes: number,
): void {
  const isShared = typeof SharedArrayBuffer !== "undefined" && buffer instanceof SharedArrayBuffer;
  if (!isShared && !(buffer instanceof ArrayBuffer)) {
    throw new TypeError(
      `Cannot create ${what} as 'buffer' must be a SharedArrayBuffer: received ${describe(buffer)}`,
    );
  }
  if (!Number.isInteger(byteOffset) || byteOffset < 0 || byteOffset % CACHE_LINE_BYTES !== 0) {
    throw new RangeError(
      `Cannot create ${what} as 'byteOffset' must be a non-negative multiple of ${CACHE_LINE_BYTES}: received ${
        String(byteOffset)
      }`,
    );
  }
  if (byteOffset + bytes > buffer.byteLength) {
    throw new RangeError(
      `Cannot create ${what} as the buffer is too small: ${bytes} bytes at offset ${byteOffset} need ${
        byteOffset + bytes
      }, but 'buffer.byteLength' is ${buffer.byteLength}`,
    );
  }
}

/**
 * Rounds a byte count up to whole cache lines.
 *
 * @param bytes Any non-negative byte count.
 * @returns The smallest multiple of 64 not below `bytes`.
 *
 * @example Usage
 * ```ts
 * import { roundUpToLine } from "./layout.ts";
 * console.log(roundUpToLine(65)); // 128
 * ```
 */
export function roundUpToLine(bytes: number): number {
  return Math.ceil(bytes / CACHE_LINE_BYTES) * CACHE_LINE_BYTES;
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (typeof value === "object") return (value as object).constructor?.name ?? "object";
  return typeof value;
}
