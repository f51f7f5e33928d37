/**
 * The encoder's scratch buffer: where an encoding's bytes are written, the writers of the format's
 * primitives (varints, numbers, Strs, long strings, bigints, runs of raw bytes), the deferred runs, and the
 * ways out of it (a view, a copy, a copy into shared memory). {@link Encoder} (`encoder.ts`) extends it with
 * the walk over a value.
 *
 * What it owns: one growable byte array and its DataView; the runs of raw bytes that an encoding refers to
 * in the caller's buffers instead of copying them (`deferFrom`, see EncoderOptions), with the test of what
 * can be read without running user code ({@link readsInert}), on which deferring depends; the alignment
 * padding of long runs (format.ts {@link ALIGN_FROM}).
 *
 * Invariants:
 * - It allocates nothing per call for primitives other than big bigints once it is large enough. It only
 *   grows during a call; one above 1 MiB is replaced by a fresh small one by {@link Scratch.trim}.
 * - The bytes of an encoding are `out[0, pos)` with each deferred run inserted at its place; `written` is
 *   their total length once the encoding succeeded, and 0 after a failure.
 * - A deferred run is copied by {@link Scratch.copyTo} from the caller's buffer, and only if that buffer
 *   still holds as many bytes as when it was read (a detached or shrunk buffer throws).
 *
 * Threads: the thread that made it (one scratch per encoder, one encoder per thread).
 *
 * @module
 */

import * as format from "./format.ts";
import { writeOneByte } from "./text.ts";

// The format's numbers as this module's own constants, as they were when the codec was one file: an imported
// binding is read through its module cell, which measured 5-10% slower on V8 for small values in the loops
// that read a tag at every value.
const {
  ALIGN_FROM,
  RUN_ALIGN,
  TAG_BIGINT,
  TAG_BIGINT64,
  TAG_FLOAT64,
  TAG_INT32,
  TAG_SMALL_INT,
  TAG_STRING,
  TAG_UTF8,
  VIEW_CONSTRUCTORS,
} = format;

/** Whether this engine has `String.prototype.isWellFormed` (ES2024): without it every string takes the Str. */
const HAS_WELL_FORMED = typeof (String.prototype as { isWellFormed?: unknown }).isWellFormed === "function";
const utf8Encoder = new TextEncoder();

/** The largest scratch an Encoder keeps when its thread idles (see {@link Scratch.trim}). */
const RETAINED_CAPACITY = 1 << 20;

/** The prototypes of the views whose `buffer`, `byteOffset` and lengths are the intrinsic getters. */
const PLAIN_VIEW_PROTOTYPES: ReadonlySet<object> = new Set<object>([
  ...VIEW_CONSTRUCTORS.filter((c) => c !== undefined).map((c) => c.prototype as object),
  // Node's Buffer subclasses Uint8Array without redefining them.
  ...(typeof (globalThis as { Buffer?: { prototype: object } }).Buffer === "function"
    ? [(globalThis as unknown as { Buffer: { prototype: object } }).Buffer.prototype]
    : []),
]);

/** `ArrayBuffer.prototype.byteLength`'s getter: throws for anything but an ordinary ArrayBuffer, runs no user code. */
const arrayBufferByteLength = Object.getOwnPropertyDescriptor(ArrayBuffer.prototype, "byteLength")!.get as (
  this: unknown,
) => number;

/**
 * Whether reading `value` for encoding runs no user code: a primitive, a view of a standard kind (not a
 * subclass that could redefine its getters, Node's Buffer excepted), or an ordinary ArrayBuffer. Reads no
 * property; a Proxy's prototype trap may run (as encoding it runs it), and one posing as an ArrayBuffer
 * fails the brand check. Throws nothing for a plain object (the common argument): the brand check, which
 * throws for anything but an ArrayBuffer, runs only for what claims ArrayBuffer's prototype.
 */
export function readsInert(value: unknown): boolean {
  if (typeof value !== "object") return typeof value !== "function" && typeof value !== "symbol";
  if (value === null) return true;
  if (ArrayBuffer.isView(value)) return PLAIN_VIEW_PROTOTYPES.has(Object.getPrototypeOf(value));
  if (Object.getPrototypeOf(value) !== ArrayBuffer.prototype) return false;
  try {
    arrayBufferByteLength.call(value);
    return true;
  } catch {
    return false;
  }
}

/**
 * The bytes of an encoding and the writers of the format's primitives (see the module doc).
 *
 * @example Usage
 * ```ts
 * import { Encoder } from "./codec.ts";
 * const encoder = new Encoder(); // a Scratch with the walk over values
 * encoder.encode("hi");
 * const target = new Uint8Array(8);
 * encoder.copyTo(target, 2);
 * console.log(encoder.length, target); // 4 Uint8Array(8) [ 0, 0, 6, 4, 104, 105, 0, 0 ]
 * ```
 */
export class Scratch {
  protected out: Uint8Array;
  /** A DataView on `out`'s buffer, for the fixed-width numbers. */
  protected outView: DataView;
  /** Where the next byte goes in `out`. */
  protected pos = 0;
  /** The last successful encoding's length (deferred runs included), 0 after a failure. */
  protected written = 0;
  /** Set while an encoding is under way (`trim` leaves the scratch alone then). */
  protected encoding = false;
  private readonly initialCapacity: number;
  /** The shortest run of raw bytes that may be deferred (see EncoderOptions.deferFrom). */
  protected readonly deferFrom: number;
  /** The deferred runs of the last encoding: views of the caller's bytes, in order. */
  protected readonly deferred: Uint8Array[] = [];
  /** Where each deferred run goes: the scratch position it is inserted at. */
  protected readonly deferredAt: number[] = [];
  /** Each deferred run's length when it was read (a buffer detached or shrunk since is caught). */
  protected readonly deferredLengths: number[] = [];
  /** The deferred runs' bytes in all. */
  protected deferredBytes = 0;

  /**
   * Makes an empty scratch.
   *
   * @param initialCapacity Its starting size in bytes (checked by the Encoder).
   * @param deferFrom The shortest run of raw bytes that may be deferred (checked by the Encoder).
   */
  constructor(initialCapacity: number, deferFrom: number) {
    this.initialCapacity = initialCapacity;
    this.deferFrom = deferFrom;
    this.out = new Uint8Array(initialCapacity);
    this.outView = new DataView(this.out.buffer);
  }

  /** Drops the deferred runs (and the references to the caller's buffers). */
  protected forgetDeferred(): void {
    this.deferred.length = 0;
    this.deferredAt.length = 0;
    this.deferredLengths.length = 0;
    this.deferredBytes = 0;
  }

  /**
   * The owning thread only. The last encoding: a view of the scratch buffer, valid until the next
   * `encode`; or, when it deferred runs (see {@link EncoderOptions.deferFrom}), a fresh copy of it. Each
   * read makes a new view object; {@link Encoder.copyTo} copies without one.
   *
   * @returns The bytes of the last successful encoding (empty if the last call threw).
   *
   * @example Usage
   * ```ts
   * import { Encoder } from "./codec.ts";
   * const encoder = new Encoder();
   * encoder.encode(true);
   * console.log(encoder.bytes); // Uint8Array(1) [ 3 ]
   * ```
   */
  get bytes(): Uint8Array {
    return this.deferred.length === 0 ? this.out.subarray(0, this.written) : this.snapshot();
  }

  /**
   * The owning thread only. A copy of the last encoding that the caller may keep (one copy, whether or
   * not runs were deferred).
   *
   * @returns A new array of the encoding's bytes.
   *
   * @example Usage
   * ```ts
   * import { Encoder } from "./codec.ts";
   * const encoder = new Encoder({ deferFrom: 256 });
   * encoder.encode(new Uint8Array(1000).fill(7));
   * const kept = encoder.snapshot();
   * encoder.encode(1);
   * console.log(kept.length, kept[kept.length - 1]); // 1011 7
   * ```
   */
  snapshot(): Uint8Array<ArrayBuffer> {
    if (this.deferred.length === 0) return new Uint8Array(this.out.subarray(0, this.written));
    const bytes = new Uint8Array(this.written);
    this.copyTo(bytes, 0);
    return bytes;
  }

  /**
   * The owning thread only. The length in bytes of the last encoding (0 if the last call threw).
   *
   * @returns The same number the last successful `encode` returned.
   *
   * @example Usage
   * ```ts
   * import { Encoder } from "./codec.ts";
   * const encoder = new Encoder();
   * encoder.encode("hi");
   * console.log(encoder.length); // 4: tag, header, two Latin-1 bytes
   * ```
   */
  get length(): number {
    return this.written;
  }

  /**
   * The owning thread only. Copies the last encoding into `target` at `offset`, without allocating (the
   * pool's path into its payload area; `target` may be a view on a SharedArrayBuffer). Deferred runs are
   * copied here, straight from the caller's buffers.
   *
   * @param target Where to copy.
   * @param offset The index in `target` of the first byte.
   * @throws {RangeError} If the encoding does not fit in `target` at `offset`.
   * @throws {Error} If a buffer whose bytes were deferred was detached or shrunk since the encoding.
   *
   * @example Usage
   * ```ts
   * import { decode, Encoder } from "./codec.ts";
   * const payload = new Uint8Array(new SharedArrayBuffer(64));
   * const encoder = new Encoder();
   * const length = encoder.encode({ a: 1 });
   * encoder.copyTo(payload, 8);
   * console.log(decode(payload, 8, length)); // { a: 1 }
   * ```
   */
  copyTo(target: Uint8Array, offset: number): void {
    const n = this.written;
    if (!Number.isInteger(offset) || offset < 0 || offset + n > target.length) {
      throw new RangeError(
        `Cannot copy encoding as 'offset' must leave room for ${n} bytes in a target of ${target.length}: received ${
          String(offset)
        }`,
      );
    }
    const out = this.out;
    const deferred = this.deferred;
    if (deferred.length !== 0) {
      // Scratch up to each run's place, the run from the caller's buffer, and so on; then the rest.
      let from = 0;
      let at = offset;
      for (let k = 0; k < deferred.length; k++) {
        const run = deferred[k];
        if (run.length !== this.deferredLengths[k]) {
          throw new Error(
            `Cannot copy encoding as a buffer of ${
              this.deferredLengths[k]
            } bytes it refers to now holds ${run.length}: it was detached or shrunk after encoding`,
          );
        }
        const cut = this.deferredAt[k];
        target.set(out.subarray(from, cut), at);
        at += cut - from;
        target.set(run, at);
        at += run.length;
        from = cut;
      }
      target.set(out.subarray(from, this.pos), at);
      return;
    }
    if (n <= 64) {
      for (let i = 0; i < n; i++) target[offset + i] = out[i];
    } else {
      target.set(out.subarray(0, n), offset);
    }
  }

  /**
   * Gives back a scratch buffer that grew past 1 MiB, for a fresh small one, and forgets the caller's
   * buffers a deferred encoding refers to. The pool calls it when its thread runs out of work (a worker
   * before it sleeps, the main thread when no task is pending): a burst of large payloads reuses one
   * scratch (a fresh one per call cost a large allocation and growth copies, 10 times the encoding itself
   * for 1 MiB), and an idle thread keeps neither it nor the caller's data alive.
   *
   * @example Usage
   * ```ts
   * import { Encoder } from "./codec.ts";
   * const encoder = new Encoder();
   * encoder.encode(new Uint8Array(4 << 20));
   * encoder.trim();
   * console.log(encoder.length); // 0
   * ```
   */
  trim(): void {
    if (this.encoding) return;
    const deferred = this.deferred.length !== 0;
    if (!deferred && this.out.length <= RETAINED_CAPACITY) return;
    // The last encoding goes with it.
    this.pos = 0;
    this.written = 0;
    if (deferred) this.forgetDeferred();
    if (this.out.length <= RETAINED_CAPACITY) return;
    this.out = new Uint8Array(this.initialCapacity);
    this.outView = new DataView(this.out.buffer);
  }

  /** Makes room for `n` more bytes after `pos`. */
  protected ensure(n: number): void {
    if (this.pos + n > this.out.length) this.grow(n);
  }

  /** Replaces the scratch with one at least twice as large and room for `n` more bytes, keeping its bytes. */
  protected grow(n: number): void {
    const needed = this.pos + n;
    let capacity = this.out.length * 2;
    while (capacity < needed) capacity *= 2;
    const next = new Uint8Array(capacity);
    next.set(this.out.subarray(0, this.pos));
    this.out = next;
    this.outView = new DataView(next.buffer);
  }

  /** Writes a varint; the caller has ensured 5 bytes. */
  protected varint(n: number): void {
    const out = this.out;
    let pos = this.pos;
    while (n > 0x7f) {
      out[pos++] = (n & 0x7f) | 0x80;
      n >>>= 7;
    }
    out[pos++] = n;
    this.pos = pos;
  }

  /** Writes a number: one byte for 0..127, five for another int32, nine for anything else (and -0). */
  protected number(n: number): void {
    this.ensure(9);
    const out = this.out;
    const pos = this.pos;
    if ((n | 0) === n && (n !== 0 || 1 / n > 0)) {
      if (n >= 0 && n < 128) {
        out[pos] = TAG_SMALL_INT + n;
        this.pos = pos + 1;
        return;
      }
      out[pos] = TAG_INT32;
      out[pos + 1] = n;
      out[pos + 2] = n >> 8;
      out[pos + 3] = n >> 16;
      out[pos + 4] = n >> 24;
      this.pos = pos + 5;
      return;
    }
    out[pos] = TAG_FLOAT64;
    this.outView.setFloat64(pos + 1, n, true);
    this.pos = pos + 9;
  }

  /** Writes a Str: header, then Latin-1 bytes if every code unit fits in one, else UTF-16 code units. */
  protected string(s: string): void {
    const n = s.length;
    this.ensure(5 + n);
    const start = this.pos;
    // `2 * n` and `2 * n + 1` take the same number of varint bytes, so the header is written first and
    // rewritten in place if the string turns out to be wide.
    this.varint(n * 2);
    const out = this.out;
    const data = this.pos;
    let i = 0;
    for (; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c > 0xff) break;
      out[data + i] = c;
    }
    if (i === n) {
      this.pos = data + n;
      return;
    }
    this.pos = start;
    this.ensure(5 + 2 * n);
    this.varint(n * 2 + 1);
    const wide = this.out;
    let p = this.pos;
    for (let j = 0; j < n; j++) {
      const c = s.charCodeAt(j);
      wide[p] = c;
      wide[p + 1] = c >> 8;
      p += 2;
    }
    this.pos = p;
  }

  /**
   * Writes a string of at least LONG_STRING code units, tag included: a Latin-1 Str if the runtime's fast
   * writer takes it (`text.ts`), else TAG_UTF8 if it is well-formed, else the Str loop (lone surrogates).
   */
  protected longString(s: string): void {
    const n = s.length;
    // Room for the worst case (3 bytes a code unit) before either write: Bun's encodeInto, given less room
    // than a string needs, took 70 times as long as with room enough (588 µs against 8 for 64 KiB).
    this.ensure(6 + 3 * n);
    const start = this.pos;
    this.out[start] = TAG_STRING;
    this.pos = start + 1;
    this.varint(n * 2);
    if (writeOneByte(s, this.out, this.pos)) {
      this.pos += n;
      return;
    }
    this.pos = start;
    if (HAS_WELL_FORMED && s.isWellFormed()) return this.utf8(s);
    this.out[this.pos++] = TAG_STRING;
    this.string(s);
  }

  /** Writes a well-formed string as TAG_UTF8, in one `encodeInto` with room for 3 bytes a code unit. */
  protected utf8(s: string): void {
    const n = s.length;
    this.ensure(5 + 3 * n);
    const start = this.pos;
    this.out[start] = TAG_UTF8;
    const { written } = utf8Encoder.encodeInto(s, this.out.subarray(start + 5));
    this.outView.setUint32(start + 1, written, true);
    this.pos = start + 5 + written;
  }

  /** Writes a bigint: nine bytes in int64 range, else sign, length and magnitude. */
  protected bigint(b: bigint): void {
    if (BigInt.asIntN(64, b) === b) {
      this.ensure(9);
      this.out[this.pos] = TAG_BIGINT64;
      this.outView.setBigInt64(this.pos + 1, b, true);
      this.pos += 9;
      return;
    }
    // Hex is linear in the bigint's size in every engine; shifting 64 bits at a time would be quadratic.
    let hex = (b < 0n ? -b : b).toString(16);
    if (hex.length % 2 === 1) hex = "0" + hex;
    const n = hex.length / 2;
    this.ensure(7 + n);
    const out = this.out;
    out[this.pos++] = TAG_BIGINT;
    out[this.pos++] = b < 0n ? 1 : 0;
    this.varint(n);
    let p = this.pos;
    for (let i = 0; i < hex.length; i += 2) {
      out[p++] = (hexDigit(hex.charCodeAt(i)) << 4) | hexDigit(hex.charCodeAt(i + 1));
    }
    this.pos = p;
  }

  /**
   * Writes a varint length, the alignment padding of a long run (see {@link ALIGN_FROM}), and `n` bytes of
   * `buffer` from `offset`, or notes them as a deferred run (see {@link EncoderOptions.deferFrom}) when
   * `mayDefer` (nothing read after them can run user code).
   */
  protected bytesFrom(buffer: ArrayBufferLike, offset: number, n: number, mayDefer: boolean): void {
    const defer = mayDefer && n >= this.deferFrom;
    this.ensure(12 + (defer ? 0 : n));
    this.varint(n);
    const source = new Uint8Array(buffer, offset, n);
    const out = this.out;
    let pos = this.pos;
    if (n >= ALIGN_FROM) {
      // Zeros up to a multiple of 16 from the encoding's start (deferred runs count: they are in it).
      for (let pad = -(pos + this.deferredBytes) & (RUN_ALIGN - 1); pad > 0; pad--) out[pos++] = 0;
    }
    if (defer) {
      this.deferred.push(source);
      this.deferredAt.push(pos);
      this.deferredLengths.push(n);
      this.deferredBytes += n;
      this.pos = pos;
      return;
    }
    if (n <= 32) {
      for (let i = 0; i < n; i++) out[pos + i] = source[i];
    } else {
      out.set(source, pos);
    }
    this.pos = pos + n;
  }
}

function hexDigit(c: number): number {
  return c <= 0x39 ? c - 0x30 : c - 0x57;
}
