/**
 * The codec's byte format: the tags, the kind bytes and the limits that the encoder (`encoder.ts`,
 * `scratch.ts`) writes and the decoder (`decoder.ts`) reads, described once here. The bytes are meant for
 * another thread of the same process: typed-array contents are copied in the platform's byte order, and a
 * shared buffer travels as an id that only the pool's own registry can resolve. It is not a storage or wire
 * format.
 *
 * Format. A value is a tag byte, then its payload. Lengths and counts are unsigned LEB128 varints (at most
 * 5 bytes, so at most 2^32 - 1); fixed-width numbers are little-endian.
 *
 * | tag         | value                                   | payload                                          |
 * |-------------|-----------------------------------------|--------------------------------------------------|
 * | 0x80 + n    | an integer n from 0 to 127              | none                                             |
 * | 0x00        | undefined                               | none                                             |
 * | 0x01        | null                                    | none                                             |
 * | 0x02        | false                                   | none                                             |
 * | 0x03        | true                                    | none                                             |
 * | 0x04        | other int32 (never -0)                  | 4 bytes                                          |
 * | 0x05        | any other number (-0, NaN, ±Infinity …) | 8 bytes IEEE-754                                 |
 * | 0x06        | string                                  | Str: varint `2 * length + wide`, then `length`   |
 * |             |                                         | bytes (Latin-1, wide = 0) or `length` UTF-16     |
 * |             |                                         | code units of 2 bytes (wide = 1)                 |
 * | 0x07        | bigint in int64 range                   | 8 bytes two's complement                         |
 * | 0x08        | any other bigint                        | sign byte (0, 1 = negative), varint n, n bytes   |
 * |             |                                         | magnitude, most significant first, no leading 0  |
 * | 0x09        | array                                   | varint n, n values                               |
 * | 0x0a        | object with prototype Object.prototype  | varint n, n × (Str key, value)                   |
 * | 0x0b        | object with prototype null              | as 0x0a                                          |
 * | 0x0c        | Map                                     | varint n, n × (key value, value)                 |
 * | 0x0d        | Set                                     | varint n, n values                               |
 * | 0x0e        | Date                                    | 8 bytes: the time value (NaN if invalid)         |
 * | 0x0f        | Error                                   | kind byte, Str name, Str message, flags byte,    |
 * |             |                                         | then if flagged: Str stack, cause, code, errors, |
 * |             |                                         | Str class, u32 count + (Str key, value) fields   |
 * | 0x10        | ArrayBuffer (copied)                    | varint n, Run: n bytes                           |
 * | 0x11        | typed array or DataView (copied)        | view kind byte, varint n, Run (native order)     |
 * | 0x12        | SharedArrayBuffer (by reference)        | varint id                                        |
 * | 0x13        | view on a SharedArrayBuffer (reference) | view kind byte, varint id, varint byteOffset,    |
 * |             |                                         | varint length (elements; bytes for a DataView)   |
 * | 0x14        | ArrayBuffer moved (`move()`)            | varint index in the moved list                   |
 * | 0x15        | view on a moved ArrayBuffer             | view kind byte, varint index, varint byteOffset, |
 * |             |                                         | varint length (elements; bytes for a DataView)   |
 * | 0x16        | string of ≥ 128 code units, not Latin-1 | 4 bytes little-endian byte count n, then n bytes |
 * |             |                                         | of UTF-8 (well-formed strings only)              |
 *
 * A Run of n ≥ 256 bytes starts with 0 to 15 zero bytes, so that its bytes start at a multiple of 16 from
 * the start of the encoding (fast copies between shared and unshared memory); a shorter Run is just its bytes.
 *
 * A view kind byte is 0 Int8Array, 1 Uint8Array, 2 Uint8ClampedArray, 3 Int16Array, 4 Uint16Array,
 * 5 Int32Array, 6 Uint32Array, 7 Float16Array, 8 Float32Array, 9 Float64Array, 10 BigInt64Array,
 * 11 BigUint64Array, 12 DataView. An error kind byte is 0 Error, 1 TypeError, 2 RangeError, 3 SyntaxError,
 * 4 ReferenceError, 5 EvalError, 6 URIError, 7 AggregateError. Error flags: 1 stack, 2 cause, 4 code,
 * 8 errors, 16 class (a subclass's name), 32 own fields.
 *
 * What it owns: the numbers above (a tag, a kind byte, a flag is defined here and nowhere else) and the
 * tables from kind bytes to constructors. The error kinds and flags are `error_values.ts`'s.
 *
 * Invariants: a kind's number never changes and tables are only appended to (the encoder and the decoder
 * of one build always agree; a format change changes both at once).
 *
 * Threads: any (constants and pure functions).
 *
 * @module
 */

/**
 * The deepest nesting of arrays, objects, maps, sets and errors that `encode` and `decode` accept: `encode`
 * refuses any object at depth `MAX_DEPTH` (the root is at depth 0; primitives may sit there), `decode` any
 * container. It bounds the recursion, so encoding
 * or decoding never overflows the stack of a worker thread, whose stack can be smaller than the main one's.
 *
 * @example Usage
 * ```ts
 * import { Encoder, MAX_DEPTH } from "./codec.ts";
 * let nested: unknown = 0;
 * for (let i = 0; i <= MAX_DEPTH; i++) nested = [nested];
 * try {
 *   new Encoder().encode(nested);
 * } catch (error) {
 *   console.log(error instanceof RangeError); // true
 * }
 * ```
 */
export const MAX_DEPTH = 1000;

// Tags. Each names one kind of value; see the table in the module doc.
/** `undefined`. */
export const TAG_UNDEFINED = 0x00;
/** `null`. */
export const TAG_NULL = 0x01;
/** `false`. */
export const TAG_FALSE = 0x02;
/** `true`. */
export const TAG_TRUE = 0x03;
/** An int32 outside 0..127; 4 bytes follow. */
export const TAG_INT32 = 0x04;
/** Any number that is not an int32 (or is -0); 8 bytes follow. */
export const TAG_FLOAT64 = 0x05;
/** A string; a Str follows. */
export const TAG_STRING = 0x06;
/** A bigint from -2^63 to 2^63 - 1; 8 bytes follow. */
export const TAG_BIGINT64 = 0x07;
/** Any other bigint: sign, length, magnitude. */
export const TAG_BIGINT = 0x08;
/** An array. */
export const TAG_ARRAY = 0x09;
/** A plain object whose prototype is Object.prototype. */
export const TAG_OBJECT = 0x0a;
/** A plain object whose prototype is null. */
export const TAG_NULL_OBJECT = 0x0b;
/** A Map. */
export const TAG_MAP = 0x0c;
/** A Set. */
export const TAG_SET = 0x0d;
/** A Date. */
export const TAG_DATE = 0x0e;
/** An Error. */
export const TAG_ERROR = 0x0f;
/** An ordinary ArrayBuffer, copied. */
export const TAG_ARRAY_BUFFER = 0x10;
/** A typed array or DataView on an ordinary ArrayBuffer, copied. */
export const TAG_VIEW = 0x11;
/** A SharedArrayBuffer, by reference. */
export const TAG_SHARED_BUFFER = 0x12;
/** A typed array or DataView on a SharedArrayBuffer, by reference. */
export const TAG_SHARED_VIEW = 0x13;
/** An ArrayBuffer moved (transferred) beside the bytes: its index in the moved list. */
export const TAG_MOVED_BUFFER = 0x14;
/** A typed array or DataView on a moved ArrayBuffer: kind, index, byteOffset, length. */
export const TAG_MOVED_VIEW = 0x15;
/**
 * A long well-formed string as UTF-8: a 4-byte byte count, then the bytes. The runtime's own TextEncoder and
 * TextDecoder move these at memory speed, where the Str path walks code unit by code unit (a 1 MiB string:
 * some 1–3 ms each way, against the structured clone's fraction of one).
 */
export const TAG_UTF8 = 0x16;
/**
 * Strings of at least this many code units are written by the runtime's own calls (`text.ts`, and TAG_UTF8
 * for those that are not one byte a unit), and long Latin-1 Strs are read by them: below it, a call costs
 * more than the loop.
 */
export const LONG_STRING = 128;
/** The first small-integer tag: `TAG_SMALL_INT + n` is the integer n, for n from 0 to 127. */
export const TAG_SMALL_INT = 0x80;

/**
 * Runs of raw bytes of at least {@link ALIGN_FROM} bytes start at a multiple of this many bytes from the
 * encoding's start, after 0 to `RUN_ALIGN - 1` zero bytes (see ALIGN_FROM for why).
 */
export const RUN_ALIGN = 16;

/**
 * Runs of raw bytes (an ArrayBuffer's, a view's) this long or longer start at a multiple of 16 bytes from
 * the encoding's start, after 0 to 15 zero bytes. The pool places large encodings at the start of a slab
 * (slabs.ts: offsets are multiples of 2 KiB), and the runtimes copy between a SharedArrayBuffer and another
 * buffer fast only when both ends are aligned alike: a 64 KiB copy into shared memory took 1.5–2.4 µs with
 * both ends 16-byte aligned and 18–19 µs with the target 4 bytes off (Node and Bun) or 8 bytes off (Bun;
 * Node is fast there). At 8, Bun's 64 KiB arguments went 4 times slower than the bare postMessage loop
 * (docs/benchmarks.md).
 */
export const ALIGN_FROM = 256;

export type ViewConstructor = new (buffer: ArrayBufferLike, byteOffset?: number, length?: number) => ArrayBufferView;

const Float16ArrayConstructor = (globalThis as { Float16Array?: ViewConstructor }).Float16Array;

/**
 * The view kinds, by kind byte: the constructor (undefined where this runtime lacks it) and the element
 * size. The order is part of the format: never reorder, only append.
 */
export const VIEW_CONSTRUCTORS: readonly (ViewConstructor | undefined)[] = [
  Int8Array,
  Uint8Array,
  Uint8ClampedArray,
  Int16Array,
  Uint16Array,
  Int32Array,
  Uint32Array,
  Float16ArrayConstructor,
  Float32Array,
  Float64Array,
  BigInt64Array,
  BigUint64Array,
  DataView,
];
export const VIEW_ELEMENT_SIZES: readonly number[] = [1, 1, 1, 2, 2, 4, 4, 2, 4, 8, 8, 8, 1];
/** The kind byte of DataView. */
export const DATA_VIEW_KIND = 12;
export const VIEW_KIND_BY_NAME: ReadonlyMap<string, number> = new Map([
  ["Int8Array", 0],
  ["Uint8Array", 1],
  ["Uint8ClampedArray", 2],
  ["Int16Array", 3],
  ["Uint16Array", 4],
  ["Int32Array", 5],
  ["Uint32Array", 6],
  ["Float16Array", 7],
  ["Float32Array", 8],
  ["Float64Array", 9],
  ["BigInt64Array", 10],
  ["BigUint64Array", 11],
]);

/** `%TypedArray%.prototype[Symbol.toStringTag]`: a typed array's kind name, or undefined for anything else. */
export const typedArrayName = Object.getOwnPropertyDescriptor(
  Object.getPrototypeOf(Uint8Array.prototype),
  Symbol.toStringTag,
)!.get as (this: unknown) => string | undefined;

/** Undefined where shared memory is unavailable (a browser page that is not cross-origin isolated). */
export const SharedArrayBufferConstructor = (globalThis as { SharedArrayBuffer?: SharedArrayBufferConstructor })
  .SharedArrayBuffer;

export function isSharedArrayBuffer(buffer: unknown): buffer is SharedArrayBuffer {
  return SharedArrayBufferConstructor !== undefined && buffer instanceof SharedArrayBufferConstructor;
}

/** The bytes a varint of `n` takes. */
export function varintSize(n: number): number {
  return n < 0x80 ? 1 : n < 0x4000 ? 2 : n < 0x200000 ? 3 : n < 0x10000000 ? 4 : 5;
}
