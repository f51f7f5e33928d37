/**
 * Moving buffers instead of copying them: {@link move} marks an ArrayBuffer (or the buffer of a typed array
 * or DataView) so that the pool transfers it, as `postMessage` does with a transfer list: the sender's
 * buffer is detached, and the receiver gets the same memory without a copy.
 *
 * What it owns: the marks. They live in one WeakSet per realm, found through `Symbol.for`, so that two
 * copies of filch in one program (a bundle and a package, say) see each other's marks.
 *
 * Where a move takes effect: the arguments of `run`, `spawn`, `runMany` and `map` (the task is then
 * delivered by message to one worker, which runs it), and a task's result (which then travels back by
 * message). Where it cannot, it is refused by name, never turned into a silent copy: a forked task's
 * arguments (`join`, `scope`: any worker may steal the fork) and broadcast arguments (every worker gets
 * them). A forked task's result is copied to its joiner, which is the same thread or another worker
 * reading shared memory; the mark is then moot, as the task's own copy is dropped.
 *
 * Threads: any.
 *
 * @module
 */

const MARKS = Symbol.for("filch.move.marks");

/** The marked buffers of this realm (shared by every copy of filch loaded in it). */
const marks: WeakSet<ArrayBuffer> = ((globalThis as { [MARKS]?: WeakSet<ArrayBuffer> })[MARKS] ??= new WeakSet());

/** Whether this runtime has `ArrayBuffer.prototype.detached` (ES2024; Node 22 and later, not Node 20). */
const HAS_DETACHED = "detached" in ArrayBuffer.prototype;

/**
 * Whether `buffer` is detached (moved away, or transferred): `buffer.detached` where the runtime has it;
 * on Node 20, which lacks it, a buffer of length 0 on which no view can be made (a detached buffer's length
 * reads 0, and a view on it throws a TypeError).
 *
 * @param buffer An ordinary ArrayBuffer.
 * @returns `true` if its contents are gone.
 *
 * @example Usage
 * ```ts
 * import { isDetached } from "./move.ts";
 * const buffer = new ArrayBuffer(8);
 * structuredClone(buffer, { transfer: [buffer] });
 * console.log(isDetached(buffer), isDetached(new ArrayBuffer(0))); // true false
 * ```
 */
export function isDetached(buffer: ArrayBuffer): boolean {
  if (HAS_DETACHED) return buffer.detached;
  if (buffer.byteLength !== 0) return false;
  try {
    new Uint8Array(buffer);
    return false;
  } catch (error) {
    if (error instanceof TypeError) return true;
    throw error;
  }
}

/**
 * Marks `value`'s memory to be moved, not copied, when it crosses to a task or back: an ArrayBuffer, or a
 * typed array or DataView (its whole buffer moves, and the view arrives with its offset and length). After
 * the crossing, the sender's buffer is detached (length 0). A SharedArrayBuffer (or a view on one) is
 * returned as it is: it always passes by reference.
 *
 * @param value The buffer or view to move.
 * @returns `value` itself, so that a call reads `pool.run("task", move(bytes))`.
 * @throws {TypeError} If `value` is not an ArrayBuffer, typed array or DataView, or its buffer is detached.
 *
 * @example Usage
 * ```ts ignore
 * import { move, Pool } from "@filch/filch";
 * const pool = await Pool.create(new URL("../tasks.ts", import.meta.url));
 * const pixels = new Uint8Array(64 << 20);
 * const result = await pool.run("blur", move(pixels)); // no copy; pixels.length is now 0
 * // in tasks.ts: export function blur(p: Uint8Array) { ...; return move(p); }
 * ```
 */
export function move<T>(value: T): T {
  const buffer = value instanceof ArrayBuffer ? value : ArrayBuffer.isView(value) ? value.buffer : undefined;
  if (buffer === undefined) {
    if (typeof SharedArrayBuffer !== "undefined" && value instanceof SharedArrayBuffer) return value;
    throw new TypeError(
      `Cannot move value as it is not an ArrayBuffer, typed array or DataView: received ${
        value === null ? "null" : typeof value
      }`,
    );
  }
  if (!(buffer instanceof ArrayBuffer)) return value; // a view on shared memory: by reference already
  if (isDetached(buffer)) throw new TypeError("Cannot move value as its ArrayBuffer is detached (moved already)");
  marks.add(buffer);
  return value;
}

/**
 * Whether `buffer` was marked by {@link move}.
 *
 * @param buffer An ordinary ArrayBuffer.
 * @returns `true` if it is to be moved.
 *
 * @example Usage
 * ```ts
 * import { isMarkedForMove, move } from "./move.ts";
 * const buffer = new ArrayBuffer(8);
 * console.log(isMarkedForMove(buffer)); // false
 * move(buffer);
 * console.log(isMarkedForMove(buffer)); // true
 * ```
 */
export function isMarkedForMove(buffer: ArrayBuffer): boolean {
  return marks.has(buffer);
}

/**
 * Takes the memory of `buffers` into new ArrayBuffer objects, detaching the originals (the sender's side
 * of a move), without copying where the runtime can (`ArrayBuffer.prototype.transfer`, else a transferring
 * `structuredClone`).
 *
 * @param buffers Buffers marked by {@link move}, none detached.
 * @returns The new buffers, in order.
 *
 * @example Usage
 * ```ts
 * import { detach } from "./move.ts";
 * const buffer = new ArrayBuffer(8);
 * const [taken] = detach([buffer]);
 * console.log(buffer.byteLength, taken.byteLength); // 0 8
 * ```
 */
export function detach(buffers: readonly ArrayBuffer[]): ArrayBuffer[] {
  return buffers.map((buffer) => {
    const transfer = (buffer as { transfer?: () => ArrayBuffer }).transfer;
    return transfer !== undefined ? transfer.call(buffer) : structuredClone(buffer, { transfer: [buffer] });
  });
}
