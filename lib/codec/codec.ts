/**
 * The argument and result codec: turns a task's arguments (or its result, or the error it threw) into bytes
 * that the pool copies into a SharedArrayBuffer, and turns those bytes back into values on the other thread.
 * It replaces the structured clone that `postMessage` would do.
 *
 * What it owns: the byte format below, the {@link Encoder} (a reusable, growable scratch buffer and the
 * walk over a value), and {@link decode}. It does not touch shared memory: it writes to its own scratch
 * and reads the bytes it is given; copying into and out of the pool's buffer, and publishing, are the
 * pool's job (through `atomics.ts`).
 *
 * Threads: any thread may create an Encoder and call `decode`. An Encoder belongs to the thread that
 * made it (one scratch buffer, not shared; the pool keeps one per thread). The bytes are meant for another
 * thread of the same process: typed-array contents are copied in the platform's byte order, and a shared
 * buffer travels as an id that only the pool's own registry can resolve. It is not a storage or wire format.
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
 * Invariants:
 * - `decode(encode(v))` equals `v` with every type kept, for the kinds listed in {@link Encoder}; anything
 *   else is rejected by `encode` with a TypeError naming its path, before any byte is used.
 * - Every read in `decode` is bounds-checked against the given length, every count is checked against the
 *   bytes left (each item takes at least one byte), nesting is capped at {@link MAX_DEPTH}, and the value must
 *   end exactly at the given length: corrupt or truncated bytes throw an Error, never loop or allocate
 *   without bound, never return a partial value.
 * - The encoder allocates nothing per call for primitives other than big bigints, nor for arrays and plain
 *   objects, once its scratch is large enough (a Map or Set costs its iterator). Its scratch only grows
 *   during a call; one above 1 MiB is replaced by a fresh small one by {@link Encoder.trim}.
 * - With `deferFrom` (the pool's encoders), a run of at least that many bytes is not copied into the
 *   scratch but read straight from the caller's buffer by `copyTo` (one copy into shared memory instead of
 *   two), and only where nothing read after it can run user code: the encoding's root is that view or
 *   buffer, or a root array (read once, element by element, before anything is encoded) of primitives,
 *   views of the standard kinds and ArrayBuffers. So the bytes sent are the bytes as they were read, as
 *   without it; a buffer detached or shrunk before `copyTo` (which no user code can do in between) throws.
 * - `decode` allocates the values it returns and nothing else on its common path: a short Latin-1 string
 *   that it decoded recently (an object key, typically) comes from a small per-thread intern table.
 *
 * Speed (bench/codec_bench.ts, encode + copy into shared memory + decode): a few numbers, a short string or
 * a small object take tens to about two hundred ns. For objects and arrays that is several times less than
 * `structuredClone` of the same value on V8 (Deno, Node); primitives, and on Bun small arrays and typed
 * arrays, clone about as fast or faster. Either way it is far below the postMessage round trip it replaces
 * (about 50 µs).
 *
 * What is not preserved (as with, or stricter than, the structured clone):
 * - Identity: a value reached twice is encoded twice and decodes as two copies (only cycles are rejected).
 * - Array holes decode as `undefined`; extra non-index properties of arrays are dropped.
 * - Objects keep own enumerable string keys only; a getter is read once and arrives as a plain value
 *   (accessors, non-enumerable and symbol keys, property attributes and frozenness are not carried).
 * - A typed array or DataView on an ordinary ArrayBuffer arrives as a view of exactly its bytes on a new
 *   buffer (byteOffset 0); the rest of the original buffer is not sent, and a resizable buffer arrives
 *   fixed-length. Views and buffers are copied independently even when they share memory. A subclass of a
 *   typed array (such as Node's Buffer) arrives as the base typed array.
 * - An Error keeps its kind (the nearest standard constructor on its prototype chain), `name`, `message`,
 *   `stack`, `cause`, a string or number `code`, an AggregateError's `errors`, its class's name, and its
 *   own enumerable data fields that can cross (others, and getters, are dropped). A subclass of a standard
 *   error arrives as that standard error with the original `name` and fields, or, when `decode` is given
 *   its class (`errorClasses`, by class name or `name`), as an instance of that class.
 * - A length-tracking view on a growable SharedArrayBuffer arrives with its length at encode time.
 *
 * @module
 */

import { isError } from "../errors.ts";
import { isMarkedForMove } from "./move.ts";
import { readOneByte, writeOneByte } from "./text.ts";

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
const TAG_UNDEFINED = 0x00;
/** `null`. */
const TAG_NULL = 0x01;
/** `false`. */
const TAG_FALSE = 0x02;
/** `true`. */
const TAG_TRUE = 0x03;
/** An int32 outside 0..127; 4 bytes follow. */
const TAG_INT32 = 0x04;
/** Any number that is not an int32 (or is -0); 8 bytes follow. */
const TAG_FLOAT64 = 0x05;
/** A string; a Str follows. */
const TAG_STRING = 0x06;
/** A bigint from -2^63 to 2^63 - 1; 8 bytes follow. */
const TAG_BIGINT64 = 0x07;
/** Any other bigint: sign, length, magnitude. */
const TAG_BIGINT = 0x08;
/** An array. */
const TAG_ARRAY = 0x09;
/** A plain object whose prototype is Object.prototype. */
const TAG_OBJECT = 0x0a;
/** A plain object whose prototype is null. */
const TAG_NULL_OBJECT = 0x0b;
/** A Map. */
const TAG_MAP = 0x0c;
/** A Set. */
const TAG_SET = 0x0d;
/** A Date. */
const TAG_DATE = 0x0e;
/** An Error. */
const TAG_ERROR = 0x0f;
/** An ordinary ArrayBuffer, copied. */
const TAG_ARRAY_BUFFER = 0x10;
/** A typed array or DataView on an ordinary ArrayBuffer, copied. */
const TAG_VIEW = 0x11;
/** A SharedArrayBuffer, by reference. */
const TAG_SHARED_BUFFER = 0x12;
/** A typed array or DataView on a SharedArrayBuffer, by reference. */
const TAG_SHARED_VIEW = 0x13;
/** An ArrayBuffer moved (transferred) beside the bytes: its index in the moved list. */
const TAG_MOVED_BUFFER = 0x14;
/** A typed array or DataView on a moved ArrayBuffer: kind, index, byteOffset, length. */
const TAG_MOVED_VIEW = 0x15;
/**
 * A long well-formed string as UTF-8: a 4-byte byte count, then the bytes. The runtime's own TextEncoder and
 * TextDecoder move these at memory speed, where the Str path walks code unit by code unit (a 1 MiB string:
 * some 1–3 ms each way, against the structured clone's fraction of one).
 */
const TAG_UTF8 = 0x16;
/**
 * Strings of at least this many code units are written by the runtime's own calls (`text.ts`, and TAG_UTF8
 * for those that are not one byte a unit), and long Latin-1 Strs are read by them: below it, a call costs
 * more than the loop.
 */
const LONG_STRING = 128;
/** Whether this engine has `String.prototype.isWellFormed` (ES2024): without it every string takes the Str. */
const HAS_WELL_FORMED = typeof (String.prototype as { isWellFormed?: unknown }).isWellFormed === "function";
const utf8Encoder = new TextEncoder();
/**
 * Keeps a leading U+FEFF (the default would drop it as a byte-order mark) and throws on bytes that are not
 * UTF-8, which only corrupt input can hold: the encoder writes well-formed strings only.
 */
const utf8Decoder = new TextDecoder("utf-8", { ignoreBOM: true, fatal: true });
/**
 * Whether `TextDecoder.decode` reads a view on a SharedArrayBuffer. Node, Deno and Bun do; browsers throw
 * (the WHATWG signature does not allow shared views), and there the bytes are copied out first.
 */
const DECODES_SHARED: boolean = (() => {
  try {
    return utf8Decoder.decode(new Uint8Array(new SharedArrayBuffer(1)).subarray(0, 0)) === "";
  } catch {
    return false;
  }
})();
/** The first small-integer tag: `TAG_SMALL_INT + n` is the integer n, for n from 0 to 127. */
const TAG_SMALL_INT = 0x80;

// Flags of an Error's payload: which optional fields follow, in this order.
/** A Str `stack` follows. */
const ERROR_HAS_STACK = 1;
/** A `cause` value follows (the property exists, even if it is undefined). */
const ERROR_HAS_CAUSE = 2;
/** A `code` value (a string or number) follows. */
const ERROR_HAS_CODE = 4;
/** An `errors` array follows (AggregateError). */
const ERROR_HAS_ERRORS = 8;
/** A Str follows: the name of the error's class, a subclass of its standard kind (`class MyError extends Error`). */
const ERROR_HAS_CLASS = 16;
/** Own fields follow: a 4-byte little-endian count, then for each a Str key and a value. */
const ERROR_HAS_FIELDS = 32;
/** Every error flag. */
const ERROR_FLAGS = 63;
/** An error's properties that its other parts carry: never sent as own fields. */
const ERROR_KEYS_CARRIED: ReadonlySet<string> = new Set(["name", "message", "stack", "cause", "code", "errors"]);

/**
 * The classes errors are decoded as, by class name: a decoded error whose class (or, failing that, whose
 * `name`) is registered gets that class's prototype, so that `instanceof` holds (see `decode`).
 */
export type ErrorClasses = ReadonlyMap<string, abstract new (...args: never[]) => Error>;

/** The standard error constructors, by kind byte; kind 0 is Error, and any other error is sent as Error. */
const ERROR_CONSTRUCTORS: readonly ErrorConstructor[] = [
  Error,
  TypeError,
  RangeError,
  SyntaxError,
  ReferenceError,
  EvalError,
  URIError,
  AggregateError as unknown as ErrorConstructor,
];
/** The kind byte of AggregateError, whose constructor takes `errors` first. */
const AGGREGATE_ERROR_KIND = 7;
const ERROR_PROTOTYPES: readonly object[] = ERROR_CONSTRUCTORS.map((c) => c.prototype);

type ViewConstructor = new (buffer: ArrayBufferLike, byteOffset?: number, length?: number) => ArrayBufferView;

const Float16ArrayConstructor = (globalThis as { Float16Array?: ViewConstructor }).Float16Array;

/**
 * The view kinds, by kind byte: the constructor (undefined where this runtime lacks it) and the element
 * size. The order is part of the format: never reorder, only append.
 */
const VIEW_CONSTRUCTORS: readonly (ViewConstructor | undefined)[] = [
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
const VIEW_ELEMENT_SIZES: readonly number[] = [1, 1, 1, 2, 2, 4, 4, 2, 4, 8, 8, 8, 1];
/** The kind byte of DataView. */
const DATA_VIEW_KIND = 12;
const VIEW_KIND_BY_NAME: ReadonlyMap<string, number> = new Map([
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
const typedArrayName = Object.getOwnPropertyDescriptor(
  Object.getPrototypeOf(Uint8Array.prototype),
  Symbol.toStringTag,
)!.get as (this: unknown) => string | undefined;

/** Undefined where shared memory is unavailable (a browser page that is not cross-origin isolated). */
const SharedArrayBufferConstructor = (globalThis as { SharedArrayBuffer?: SharedArrayBufferConstructor })
  .SharedArrayBuffer;

function isSharedArrayBuffer(buffer: unknown): buffer is SharedArrayBuffer {
  return SharedArrayBufferConstructor !== undefined && buffer instanceof SharedArrayBufferConstructor;
}

// Path segments, recorded while encoding so that an error can name where it happened without building a
// string for every value that succeeds.
/** `.key` or `["key"]`: segment key is the property name. */
const SEGMENT_PROPERTY = 0;
/** `[i]`: segment key is the index. */
const SEGMENT_INDEX = 1;
/** A Map key: segment index is the entry's position. */
const SEGMENT_MAP_KEY = 2;
/** A Map value: segment key is the entry's key, segment index its position. */
const SEGMENT_MAP_VALUE = 3;
/** A Set element: segment index is its position. */
const SEGMENT_SET_ELEMENT = 4;

/** The path arrays of an Encoder start this long and grow by this much. */
const PATH_CHUNK = 64;

/** From this depth on, ancestors are also kept in a Set: a linear scan stays cheap only for shallow data. */
const ANCESTOR_SCAN_DEPTH = 32;

/** What `encode` accepts besides primitives; named in its rejections. */
const SUPPORTED = "only primitives, plain objects, arrays, Map, Set, Date, Error, typed arrays, DataView and " +
  "ArrayBuffer can cross threads";

/**
 * Options of an {@link Encoder}.
 *
 * @example Usage
 * ```ts
 * import { Encoder, type EncoderOptions } from "./codec.ts";
 * const options: EncoderOptions = { initialCapacity: 1024 };
 * console.log(new Encoder(options).encode(1)); // 1
 * ```
 */
export interface EncoderOptions {
  /**
   * Registers a SharedArrayBuffer and returns its id, an integer from 0 to 2^32 - 1, that the decoding
   * side's `resolveBuffer` maps back to the same buffer. Called once each time a SharedArrayBuffer, or a
   * view on one, is encoded. Without it, encoding shared memory throws a TypeError.
   */
  shareBuffer?: (buffer: SharedArrayBuffer) => number;
  /** The scratch buffer's starting size in bytes (default 256); it grows as needed. */
  initialCapacity?: number;
  /**
   * What to do with an ArrayBuffer marked by `move()` (see move.ts): `"transfer"` writes a reference to
   * {@link Encoder.moved} (the caller sends those buffers beside the bytes, and `decode` gets them back as
   * its `moved`); `"copy"` (the default) copies it like any other; `{ refuse }` rejects it with a
   * TypeError whose message ends with `refuse` (why it cannot be moved there, and what to do).
   */
  moves?: "transfer" | "copy" | { refuse: string };
  /**
   * Runs of raw bytes (a typed array's, an ArrayBuffer's) at least this long are not copied into the
   * scratch when nothing can run user code between their reading and the copy out: in an encoding whose
   * root is a typed array, a DataView or an ArrayBuffer, or a short array of primitives and those. Then
   * {@link Encoder.copyTo} copies them straight from the caller's buffer, so that a large payload is copied
   * once on its way into shared memory instead of twice. Default: never (`Infinity`).
   */
  deferFrom?: number;
  /**
   * With `moves: "transfer"`: a typed array, DataView or ArrayBuffer of at least this many bytes, not
   * marked by `move()`, is copied into a new ArrayBuffer of exactly its bytes when it is read, and that copy
   * is moved (listed in {@link Encoder.moved}, to be sent in a transfer list): the receiver then takes the
   * bytes as they are, without a copy of its own, and the caller keeps its buffer. A worker sets it for its
   * results, so that the main thread does not copy a large result. Default: never (`Infinity`).
   */
  transferFrom?: number;
}

/** The largest scratch an Encoder keeps when its thread idles (see {@link Encoder.trim}). */
const RETAINED_CAPACITY = 1 << 20;

/**
 * Runs of raw bytes (an ArrayBuffer's, a view's) this long or longer start at a multiple of 16 bytes from
 * the encoding's start, after 0 to 15 zero bytes. The pool places large encodings at the start of a slab
 * (slabs.ts: offsets are multiples of 2 KiB), and the runtimes copy between a SharedArrayBuffer and another
 * buffer fast only when both ends are aligned alike: a 64 KiB copy into shared memory took 1.5–2.4 µs with
 * both ends 16-byte aligned and 18–19 µs with the target 4 bytes off (Node and Bun) or 8 bytes off (Bun;
 * Node is fast there). At 8, Bun's 64 KiB arguments went 4 times slower than the bare postMessage loop
 * (docs/benchmarks.md).
 */
const ALIGN_FROM = 256;

/** A root array longer than this is encoded as it is read, never with deferred runs (see `deferFrom`). */
const SNAPSHOT_MAX = 64;

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
function readsInert(value: unknown): boolean {
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
 * Encodes values into a reusable scratch buffer. One per thread: it is not safe to share between threads.
 *
 * Accepted: numbers (with -0, NaN and ±Infinity), strings (any UTF-16, lone surrogates included), booleans,
 * null, undefined, bigints, dense arrays, plain objects (prototype Object.prototype or null), Map, Set,
 * Date (invalid ones too), Error and its standard subclasses, ArrayBuffer, every typed array and DataView;
 * a SharedArrayBuffer, and any view on one, by reference through `shareBuffer`. Everything else (functions,
 * symbols, class instances, RegExp, WeakMap, Promise, boxed primitives …), cycles and nesting deeper than
 * {@link MAX_DEPTH} are rejected. The module doc lists what a round trip does not keep.
 *
 * @example Usage
 * ```ts
 * import { decode, Encoder } from "./codec.ts";
 * const encoder = new Encoder();
 * const length = encoder.encode([1, "two", { three: 3n }], "args");
 * console.log(decode(encoder.bytes, 0, length)); // [ 1, "two", { three: 3n } ]
 * ```
 */
export class Encoder {
  private out: Uint8Array;
  /** A DataView on `out`'s buffer, for the fixed-width numbers. */
  private outView: DataView;
  private pos = 0;
  private written = 0;
  private encoding = false;
  private readonly initialCapacity: number;
  private readonly shareBuffer: ((buffer: SharedArrayBuffer) => number) | undefined;
  /** See {@link EncoderOptions.moves}. */
  moves: "transfer" | "copy" | { refuse: string };
  /** The buffers marked by `move()` that the last encoding refers to, in index order (`moves: "transfer"`). */
  readonly moved: ArrayBuffer[] = [];
  /** See {@link EncoderOptions.deferFrom}. */
  private readonly deferFrom: number;
  /** See {@link EncoderOptions.transferFrom}. */
  private readonly transferFrom: number;
  /**
   * Whether the root argument list being written may defer its runs (every element inert, see `array`).
   * A root view or buffer may always: nothing is read after it.
   */
  private deferring = false;
  /** The deferred runs of the last encoding: views of the caller's bytes, in order. */
  private readonly deferred: Uint8Array[] = [];
  /** Where each deferred run goes: the scratch position it is inserted at. */
  private readonly deferredAt: number[] = [];
  /** Each deferred run's length when it was read (a buffer detached or shrunk since is caught). */
  private readonly deferredLengths: number[] = [];
  /** The deferred runs' bytes in all. */
  private deferredBytes = 0;
  /** A root array's elements, read once each (see {@link Encoder.array}). */
  private readonly items: unknown[] = [];
  private root = "value";
  // The path from the root to the current value, by depth, in four arrays that `extendPath` lengthens
  // together (kept dense, so that the engine stores them as plain packed arrays).
  /** Containers on the path from the root to the current value, by depth. */
  private readonly ancestors: (object | undefined)[] = new Array(PATH_CHUNK).fill(undefined);
  /** Ancestors at depth `ANCESTOR_SCAN_DEPTH` and deeper, for a constant-time cycle check there. */
  private readonly deepAncestors = new Set<object>();
  /** Deepest ancestor slot filled during this call, so the slots are cleared afterwards. */
  private deepest = -1;
  /** How each value on the path is reached from its parent (depth 0 is the root, named by `root`). */
  private readonly segmentKinds: number[] = new Array(PATH_CHUNK).fill(SEGMENT_PROPERTY);
  /** The property name, index or Map key of each segment. */
  private readonly segmentKeys: unknown[] = new Array(PATH_CHUNK).fill(undefined);
  /** The position of each Map entry or Set element segment. */
  private readonly segmentIndexes: number[] = new Array(PATH_CHUNK).fill(0);

  /**
   * Makes an encoder with an empty scratch buffer.
   *
   * @param options `shareBuffer` to pass shared memory by reference; `initialCapacity` of the scratch.
   * @throws {TypeError} If `shareBuffer` is given and is not a function.
   * @throws {RangeError} If `initialCapacity` is not an integer from 16 to 2^30.
   *
   * @example Usage
   * ```ts
   * import { Encoder } from "./codec.ts";
   * const buffers: SharedArrayBuffer[] = [];
   * const encoder = new Encoder({ shareBuffer: (sab) => buffers.push(sab) - 1 });
   * encoder.encode(new Int32Array(new SharedArrayBuffer(16)));
   * console.log(buffers.length); // 1
   * ```
   */
  constructor(options: EncoderOptions = {}) {
    const { shareBuffer, initialCapacity = 256, moves = "copy", deferFrom = Infinity, transferFrom = Infinity } =
      options;
    this.moves = moves;
    if (typeof deferFrom !== "number" || !(deferFrom >= ALIGN_FROM)) {
      throw new RangeError(
        `Cannot create encoder as 'deferFrom' must be a number of bytes of at least ${ALIGN_FROM}: received ${
          String(deferFrom)
        }`,
      );
    }
    this.deferFrom = deferFrom;
    if (typeof transferFrom !== "number" || !(transferFrom >= 1)) {
      throw new RangeError(
        `Cannot create encoder as 'transferFrom' must be a number of bytes of at least 1: received ${
          String(transferFrom)
        }`,
      );
    }
    this.transferFrom = transferFrom;
    if (shareBuffer !== undefined && typeof shareBuffer !== "function") {
      throw new TypeError(
        `Cannot create encoder as 'shareBuffer' must be a function: received ${describeType(shareBuffer)}`,
      );
    }
    if (!Number.isInteger(initialCapacity) || initialCapacity < 16 || initialCapacity > 2 ** 30) {
      throw new RangeError(
        `Cannot create encoder as 'initialCapacity' must be an integer from 16 to 2^30: received ${
          String(initialCapacity)
        }`,
      );
    }
    this.shareBuffer = shareBuffer;
    this.initialCapacity = initialCapacity;
    this.out = new Uint8Array(initialCapacity);
    this.outView = new DataView(this.out.buffer);
  }

  /**
   * The owning thread only. Encodes `value` into the scratch buffer, replacing the previous encoding.
   *
   * @param value The value to encode.
   * @param path How error messages name `value` (for example `"args"` or `"result"`).
   * @returns The encoding's length in bytes: the first `length` bytes of {@link Encoder.bytes}.
   * @throws {TypeError} If `value` holds something that cannot cross threads (a function, a symbol, a class
   * instance …), a cycle, or a SharedArrayBuffer without a `shareBuffer` option; the message names the path.
   * @throws {RangeError} If nesting is deeper than {@link MAX_DEPTH}, or `shareBuffer` returns a bad id.
   * @throws {Error} If called again from inside an encode (from a getter or `shareBuffer`).
   *
   * @example Usage
   * ```ts
   * import { Encoder } from "./codec.ts";
   * const encoder = new Encoder();
   * console.log(encoder.encode(42)); // 1: small integers take one byte
   * try {
   *   encoder.encode([1, { save() {} }], "args");
   * } catch (error) {
   *   console.log((error as Error).message); // Cannot encode value as 'args[1].save' is a function: …
   * }
   * ```
   */
  encode(value: unknown, path = "value"): number {
    if (this.encoding) {
      throw new Error(
        "Cannot encode value as this encoder is already encoding: a getter or 'shareBuffer' re-entered it",
      );
    }
    try {
      // Set inside the try: a throw at any later step (a stack overflow at a call) clears it again.
      this.encoding = true;
      this.written = 0;
      this.pos = 0;
      this.root = path;
      if (this.moved.length !== 0) this.moved.length = 0;
      if (this.deferredBytes !== 0 || this.deferred.length !== 0) this.forgetDeferred();
      this.value(value, 0);
    } catch (error) {
      this.forgetDeferred();
      throw error;
    } finally {
      this.encoding = false;
      this.deferring = false;
      if (this.deepest >= 0) this.release();
    }
    this.written = this.pos + this.deferredBytes;
    return this.written;
  }

  /** Drops the deferred runs (and the references to the caller's buffers). */
  private forgetDeferred(): void {
    this.deferred.length = 0;
    this.deferredAt.length = 0;
    this.deferredLengths.length = 0;
    this.deferredBytes = 0;
  }

  /**
   * The owning thread only. Encodes a task's argument list: the same bytes as `encode(args, "args")`,
   * written without the path and cycle bookkeeping when every argument is a number, string, boolean,
   * bigint, undefined or null (a fork of `fib(n - 2, cutoff)` pays for nothing else).
   *
   * @param args The arguments.
   * @returns The encoding's length in bytes; {@link Encoder.flat} says which way it went.
   * @throws {TypeError} As {@link Encoder.encode} does, when an argument cannot cross threads.
   *
   * @example Usage
   * ```ts
   * import { Encoder } from "./codec.ts";
   * const encoder = new Encoder();
   * console.log(encoder.encodeArgs([30, "x", true]), encoder.flat); // 6 true
   * console.log(encoder.encodeArgs([[30]]) > 0, encoder.flat); // true false
   * ```
   */
  encodeArgs(args: readonly unknown[]): number {
    const n = args.length;
    for (let i = 0; i < n; i++) {
      const v = args[i];
      const type = typeof v;
      if ((type === "object" && v !== null) || type === "function" || type === "symbol") {
        this.lastFlat = false;
        return this.encode(args, "args");
      }
    }
    if (this.encoding) return this.encode(args, "args"); // throws the re-entry error
    this.lastFlat = true;
    this.written = 0;
    this.pos = 0;
    if (this.moved.length !== 0) this.moved.length = 0;
    if (this.deferredBytes !== 0 || this.deferred.length !== 0) this.forgetDeferred();
    this.ensure(6);
    this.out[this.pos++] = TAG_ARRAY;
    this.varint(n);
    // Primitives only: `value` never reaches the object path, so depth and path segments are not used.
    for (let i = 0; i < n; i++) this.value(args[i], 1);
    this.written = this.pos;
    return this.pos;
  }

  /**
   * Whether the last {@link Encoder.encodeArgs} found only primitive arguments, so that decoding its bytes
   * gives back values equal to the arguments themselves (the caller may keep and reuse them).
   *
   * @returns `true` after a primitives-only `encodeArgs`.
   */
  get flat(): boolean {
    return this.lastFlat;
  }
  private lastFlat = false;

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
   * The owning thread only. Makes the encoder usable again after a throw cut an encoding short at a step
   * where its own cleanup could not run (a stack overflow inside that cleanup).
   *
   * @example Usage
   * ```ts
   * import { Encoder } from "./codec.ts";
   * const encoder = new Encoder();
   * encoder.reset();
   * console.log(encoder.encode(1)); // 1
   * ```
   */
  reset(): void {
    this.encoding = false;
    this.deferring = false;
    this.release();
  }

  /** Forgets the references this call held (ancestors, path keys), so the encoder keeps nothing alive. */
  private release(): void {
    for (let d = 0; d <= this.deepest; d++) this.ancestors[d] = undefined;
    // Path keys are recorded one level below the deepest container (its children).
    for (let d = 0; d <= this.deepest + 1; d++) this.segmentKeys[d] = undefined;
    this.deepest = -1;
    if (this.deepAncestors.size > 0) this.deepAncestors.clear();
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
  private ensure(n: number): void {
    if (this.pos + n > this.out.length) this.grow(n);
  }

  /** Replaces the scratch with one at least twice as large and room for `n` more bytes, keeping its bytes. */
  private grow(n: number): void {
    const needed = this.pos + n;
    let capacity = this.out.length * 2;
    while (capacity < needed) capacity *= 2;
    const next = new Uint8Array(capacity);
    next.set(this.out.subarray(0, this.pos));
    this.out = next;
    this.outView = new DataView(next.buffer);
  }

  /** Writes a varint; the caller has ensured 5 bytes. */
  private varint(n: number): void {
    const out = this.out;
    let pos = this.pos;
    while (n > 0x7f) {
      out[pos++] = (n & 0x7f) | 0x80;
      n >>>= 7;
    }
    out[pos++] = n;
    this.pos = pos;
  }

  /** Writes any value at `depth`: the dispatch on its type. */
  private value(value: unknown, depth: number): void {
    switch (typeof value) {
      case "number":
        return this.number(value);
      case "string":
        if (value.length >= LONG_STRING) return this.longString(value);
        this.ensure(1);
        this.out[this.pos++] = TAG_STRING;
        return this.string(value);
      case "boolean":
        this.ensure(1);
        this.out[this.pos++] = value ? TAG_TRUE : TAG_FALSE;
        return;
      case "undefined":
        this.ensure(1);
        this.out[this.pos++] = TAG_UNDEFINED;
        return;
      case "object":
        if (value === null) {
          this.ensure(1);
          this.out[this.pos++] = TAG_NULL;
          return;
        }
        return this.object(value, depth);
      case "bigint":
        return this.bigint(value);
      case "function":
        throw this.reject(depth, "is a function: only data can cross threads");
      case "symbol":
        throw this.reject(depth, "is a symbol: only data can cross threads");
      default:
        throw this.reject(depth, `is of type '${typeof value}': ${SUPPORTED}`);
    }
  }

  /** Writes a number: one byte for 0..127, five for another int32, nine for anything else (and -0). */
  private number(n: number): void {
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
  private string(s: string): void {
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
  private longString(s: string): void {
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
  private utf8(s: string): void {
    const n = s.length;
    this.ensure(5 + 3 * n);
    const start = this.pos;
    this.out[start] = TAG_UTF8;
    const { written } = utf8Encoder.encodeInto(s, this.out.subarray(start + 5));
    this.outView.setUint32(start + 1, written, true);
    this.pos = start + 5 + written;
  }

  /** Writes a bigint: nine bytes in int64 range, else sign, length and magnitude. */
  private bigint(b: bigint): void {
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

  /** Writes an object at `depth` after the depth and cycle checks: the dispatch on its prototype. */
  private object(value: object, depth: number): void {
    if (depth >= MAX_DEPTH) {
      throw new RangeError(
        `Cannot encode value as '${this.path(depth)}' is nested deeper than ${MAX_DEPTH} levels: ` +
          "flatten the data or send it in parts",
      );
    }
    // The container's children are recorded at depth + 1.
    if (depth + 2 > this.ancestors.length) this.extendPath();
    this.enter(value, depth);
    const proto = Object.getPrototypeOf(value);
    if (proto === Object.prototype || proto === null) {
      this.plainObject(value as Record<string, unknown>, proto === null, depth);
    } else if (proto === Array.prototype && Array.isArray(value)) {
      this.array(value as unknown[], depth);
    } else if (proto === Map.prototype) {
      this.map(value as Map<unknown, unknown>, depth);
    } else if (proto === Set.prototype) {
      this.set(value as Set<unknown>, depth);
    } else if (proto === Date.prototype) {
      this.ensure(9);
      this.out[this.pos] = TAG_DATE;
      this.outView.setFloat64(this.pos + 1, (value as Date).getTime(), true);
      this.pos += 9;
    } else if (ArrayBuffer.isView(value)) {
      this.view(value, depth);
    } else if (proto === ArrayBuffer.prototype) {
      this.arrayBuffer(value as ArrayBuffer, depth);
    } else if (SharedArrayBufferConstructor !== undefined && proto === SharedArrayBufferConstructor.prototype) {
      this.ensure(6);
      this.out[this.pos++] = TAG_SHARED_BUFFER;
      this.varint(this.share(value as SharedArrayBuffer, depth));
    } else if (isError(value)) {
      this.error(value, proto, depth);
    } else {
      throw this.reject(depth, `${describeObject(value, proto)}: ${SUPPORTED}`);
    }
    if (depth >= ANCESTOR_SCAN_DEPTH) this.deepAncestors.delete(value);
  }

  /** Lengthens the four path arrays by `PATH_CHUNK` entries each. */
  private extendPath(): void {
    for (let i = 0; i < PATH_CHUNK; i++) {
      this.ancestors.push(undefined);
      this.segmentKinds.push(SEGMENT_PROPERTY);
      this.segmentKeys.push(undefined);
      this.segmentIndexes.push(0);
    }
  }

  /** Records `value` as the container at `depth`, after checking it is not one of its own ancestors. */
  private enter(value: object, depth: number): void {
    const ancestors = this.ancestors;
    const scan = depth < ANCESTOR_SCAN_DEPTH ? depth : ANCESTOR_SCAN_DEPTH;
    for (let d = 0; d < scan; d++) {
      if (ancestors[d] === value) throw this.cycle(depth, d);
    }
    if (depth >= ANCESTOR_SCAN_DEPTH) {
      // Exact: a container is added on entering and removed on leaving (see `object`), and it cannot be an
      // ancestor twice, as that would be a cycle.
      if (this.deepAncestors.has(value)) {
        for (let d = ANCESTOR_SCAN_DEPTH; d < depth; d++) {
          if (ancestors[d] === value) throw this.cycle(depth, d);
        }
      }
      this.deepAncestors.add(value);
    }
    ancestors[depth] = value;
    if (depth > this.deepest) this.deepest = depth;
  }

  /** Writes a plain object: own enumerable string keys and their values, in property order. */
  private plainObject(value: Record<string, unknown>, nullPrototype: boolean, depth: number): void {
    this.ensure(2);
    this.out[this.pos++] = nullPrototype ? TAG_NULL_OBJECT : TAG_OBJECT;
    // One byte for the count, written after the entries: a count above 127 moves them (rare).
    const countAt = this.pos++;
    const child = depth + 1;
    this.segmentKinds[child] = SEGMENT_PROPERTY;
    let n = 0;
    // `for in` with an own-property check lists what Object.keys would (own enumerable string keys, in the
    // same order) without allocating the list; engines turn this check into a shape check.
    for (const key in value) {
      if (!hasOwnProperty.call(value, key)) continue;
      this.segmentKeys[child] = key;
      this.string(key);
      this.value(value[key], child);
      n++;
    }
    if (n < 0x80) {
      this.out[countAt] = n;
      return;
    }
    const extra = varintSize(n) - 1;
    this.ensure(extra);
    this.out.copyWithin(countAt + 1 + extra, countAt + 1, this.pos);
    const end = this.pos + extra;
    this.pos = countAt;
    this.varint(n);
    this.pos = end;
  }

  /** Writes an array: its length, then every index (a hole is read as `undefined`). */
  private array(value: unknown[], depth: number): void {
    const n = value.length;
    this.ensure(6);
    this.out[this.pos++] = TAG_ARRAY;
    this.varint(n);
    const child = depth + 1;
    this.segmentKinds[child] = SEGMENT_INDEX;
    if (depth === 0 && n <= SNAPSHOT_MAX && this.deferFrom !== Infinity) {
      // A task's argument list: each element read once, up front (an index getter is user code), so that
      // if all are inert, nothing read after a deferred run can run user code and change its bytes.
      const items = this.items;
      let inert = true;
      for (let i = 0; i < n; i++) {
        const item = value[i];
        items[i] = item;
        if (inert && !readsInert(item)) inert = false;
      }
      this.deferring = inert;
      try {
        for (let i = 0; i < n; i++) {
          this.segmentKeys[child] = i;
          this.value(items[i], child);
        }
      } finally {
        this.deferring = false;
        // Emptied slot by slot, not by `length = 0`, which gives the backing store up: it was regrown by
        // every task (about 150 bytes of garbage each on V8).
        for (let i = 0; i < n; i++) items[i] = undefined;
      }
      return;
    }
    for (let i = 0; i < n; i++) {
      this.segmentKeys[child] = i;
      this.value(value[i], child);
    }
  }

  /** Writes a Map: its size, then each key and value in insertion order. */
  private map(value: Map<unknown, unknown>, depth: number): void {
    const n = value.size;
    this.ensure(6);
    this.out[this.pos++] = TAG_MAP;
    this.varint(n);
    const child = depth + 1;
    let i = 0;
    for (const entry of value) {
      if (i === n) break;
      this.segmentKinds[child] = SEGMENT_MAP_KEY;
      this.segmentIndexes[child] = i;
      this.value(entry[0], child);
      this.segmentKinds[child] = SEGMENT_MAP_VALUE;
      this.segmentKeys[child] = entry[0];
      this.value(entry[1], child);
      i++;
    }
    if (i !== n) throw this.reject(depth, "is a Map that lost entries while it was being encoded");
  }

  /** Writes a Set: its size, then each element in insertion order. */
  private set(value: Set<unknown>, depth: number): void {
    const n = value.size;
    this.ensure(6);
    this.out[this.pos++] = TAG_SET;
    this.varint(n);
    const child = depth + 1;
    this.segmentKinds[child] = SEGMENT_SET_ELEMENT;
    let i = 0;
    for (const element of value) {
      if (i === n) break;
      this.segmentIndexes[child] = i;
      this.value(element, child);
      i++;
    }
    if (i !== n) throw this.reject(depth, "is a Set that lost elements while it was being encoded");
  }

  /** The index of a buffer marked by `move()` in {@link Encoder.moved} (added once), or the refusal. */
  private moveIndex(buffer: ArrayBuffer, depth: number): number {
    const moves = this.moves;
    if (typeof moves === "object") throw this.reject(depth, `is marked with move(), ${moves.refuse}`);
    const known = this.moved.indexOf(buffer);
    if (known >= 0) return known;
    this.moved.push(buffer);
    return this.moved.length - 1;
  }

  /** Writes a typed array or DataView: by reference on shared memory, else a copy of its bytes. */
  private view(value: ArrayBufferView, depth: number): void {
    const name = typedArrayName.call(value);
    const kind = name === undefined ? DATA_VIEW_KIND : VIEW_KIND_BY_NAME.get(name);
    if (kind === undefined) throw this.reject(depth, `is a ${name}: ${SUPPORTED}`);
    const buffer = value.buffer;
    if (isSharedArrayBuffer(buffer)) {
      const id = this.share(buffer, depth);
      const length = kind === DATA_VIEW_KIND ? value.byteLength : (value as Uint8Array).length;
      this.ensure(17);
      this.out[this.pos++] = TAG_SHARED_VIEW;
      this.out[this.pos++] = kind;
      this.varint(id);
      this.varint(value.byteOffset);
      this.varint(length);
      return;
    }
    if ((buffer as ArrayBuffer).detached) {
      throw this.reject(depth, `is a ${name ?? "DataView"} on a detached ArrayBuffer: its contents are gone`);
    }
    if (this.moves !== "copy" && isMarkedForMove(buffer as ArrayBuffer)) {
      const index = this.moveIndex(buffer as ArrayBuffer, depth);
      const length = kind === DATA_VIEW_KIND ? value.byteLength : (value as Uint8Array).length;
      this.ensure(17);
      this.out[this.pos++] = TAG_MOVED_VIEW;
      this.out[this.pos++] = kind;
      this.varint(index);
      this.varint(value.byteOffset);
      this.varint(length);
      return;
    }
    const n = value.byteLength;
    if (n >= this.transferFrom && this.moves === "transfer") {
      // A copy of exactly its bytes, moved: the receiver's view of it is what a copy would have given.
      const index = this.moved.push(new Uint8Array(buffer, value.byteOffset, n).slice().buffer) - 1;
      this.ensure(17);
      this.out[this.pos++] = TAG_MOVED_VIEW;
      this.out[this.pos++] = kind;
      this.varint(index);
      this.varint(0);
      this.varint(kind === DATA_VIEW_KIND ? n : (value as Uint8Array).length);
      return;
    }
    this.ensure(2);
    this.out[this.pos++] = TAG_VIEW;
    this.out[this.pos++] = kind;
    this.bytesFrom(buffer, value.byteOffset, n, depth === 0 || this.deferring);
  }

  /** Writes an ordinary ArrayBuffer: a copy of its bytes. */
  private arrayBuffer(value: ArrayBuffer, depth: number): void {
    if (value.detached) throw this.reject(depth, "is a detached ArrayBuffer: its contents are gone");
    if (this.moves !== "copy" && isMarkedForMove(value)) {
      const index = this.moveIndex(value, depth);
      this.ensure(6);
      this.out[this.pos++] = TAG_MOVED_BUFFER;
      this.varint(index);
      return;
    }
    const n = value.byteLength;
    if (n >= this.transferFrom && this.moves === "transfer") {
      // A copy, moved (see EncoderOptions.transferFrom); a resizable buffer's copy is fixed-length, as
      // a copied one arrives.
      const index = this.moved.push(value.slice(0)) - 1;
      this.ensure(6);
      this.out[this.pos++] = TAG_MOVED_BUFFER;
      this.varint(index);
      return;
    }
    this.ensure(1);
    this.out[this.pos++] = TAG_ARRAY_BUFFER;
    this.bytesFrom(value, 0, n, depth === 0 || this.deferring);
  }

  /**
   * Writes a varint length, the alignment padding of a long run (see {@link ALIGN_FROM}), and `n` bytes of
   * `buffer` from `offset`, or notes them as a deferred run (see {@link EncoderOptions.deferFrom}) when
   * `mayDefer` (nothing read after them can run user code).
   */
  private bytesFrom(buffer: ArrayBufferLike, offset: number, n: number, mayDefer: boolean): void {
    const defer = mayDefer && n >= this.deferFrom;
    this.ensure(12 + (defer ? 0 : n));
    this.varint(n);
    const source = new Uint8Array(buffer, offset, n);
    const out = this.out;
    let pos = this.pos;
    if (n >= ALIGN_FROM) {
      // Zeros up to a multiple of 16 from the encoding's start (deferred runs count: they are in it).
      for (let pad = -(pos + this.deferredBytes) & 15; pad > 0; pad--) out[pos++] = 0;
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

  /** Writes an Error: its kind (nearest standard prototype), name, message and optional fields. */
  private error(value: Error, proto: object, depth: number): void {
    let kind = 0;
    for (let p: object | null = proto; p !== null; p = Object.getPrototypeOf(p)) {
      const k = ERROR_PROTOTYPES.indexOf(p);
      if (k >= 0) {
        kind = k;
        break;
      }
    }
    const name = value.name;
    const message = value.message;
    const stack = value.stack;
    const hasCause = Object.hasOwn(value, "cause");
    const code = (value as { code?: unknown }).code;
    const hasCode = typeof code === "string" || typeof code === "number";
    const errors = kind === AGGREGATE_ERROR_KIND ? (value as AggregateError).errors : undefined;
    const hasErrors = Array.isArray(errors);
    // Read through descriptors, never getters: the class's name, and the own data fields to send.
    const ctor = Object.getOwnPropertyDescriptor(proto, "constructor")?.value;
    const ctorName = typeof ctor === "function" ? Object.getOwnPropertyDescriptor(ctor, "name")?.value : undefined;
    const className = typeof ctorName === "string" && ctorName !== "" && ctor !== ERROR_CONSTRUCTORS[kind]
      ? ctorName
      : undefined;
    const fields = Object.keys(value).filter((key) => !ERROR_KEYS_CARRIED.has(key));
    this.ensure(3);
    this.out[this.pos++] = TAG_ERROR;
    this.out[this.pos++] = kind;
    this.string(typeof name === "string" ? name : String(name));
    this.string(typeof message === "string" ? message : String(message));
    const flags = (typeof stack === "string" ? ERROR_HAS_STACK : 0) | (hasCause ? ERROR_HAS_CAUSE : 0) |
      (hasCode ? ERROR_HAS_CODE : 0) | (hasErrors ? ERROR_HAS_ERRORS : 0) |
      (className !== undefined ? ERROR_HAS_CLASS : 0) | (fields.length > 0 ? ERROR_HAS_FIELDS : 0);
    this.ensure(1);
    this.out[this.pos++] = flags;
    if (typeof stack === "string") this.string(stack);
    const child = depth + 1;
    this.segmentKinds[child] = SEGMENT_PROPERTY;
    if (hasCause) {
      this.segmentKeys[child] = "cause";
      this.value(value.cause, child);
    }
    if (hasCode) {
      this.segmentKeys[child] = "code";
      this.value(code, child);
    }
    if (hasErrors) {
      this.segmentKeys[child] = "errors";
      this.value(errors, child);
    }
    if (className !== undefined) this.string(className);
    if (fields.length > 0) this.errorFields(value, fields, child);
  }

  /**
   * Writes an error's own data fields that can cross threads; a field that cannot (a function, a getter,
   * a value the codec refuses) is left out, not a reason to lose the error.
   */
  private errorFields(value: Error, keys: string[], child: number): void {
    this.ensure(4);
    const countAt = this.pos;
    this.pos += 4;
    let count = 0;
    for (const key of keys) {
      const field = Object.getOwnPropertyDescriptor(value, key);
      if (field === undefined || !("value" in field)) continue;
      const at = this.pos;
      try {
        this.string(key);
        this.segmentKeys[child] = key;
        this.value(field.value, child);
        count++;
      } catch {
        this.pos = at;
      }
    }
    const out = this.out;
    out[countAt] = count & 0xff;
    out[countAt + 1] = (count >>> 8) & 0xff;
    out[countAt + 2] = (count >>> 16) & 0xff;
    out[countAt + 3] = count >>> 24;
  }

  /** Registers a shared buffer through `shareBuffer` and returns its checked id. */
  private share(buffer: SharedArrayBuffer, depth: number): number {
    const shareBuffer = this.shareBuffer;
    if (shareBuffer === undefined) {
      throw this.reject(
        depth,
        "is shared memory (a SharedArrayBuffer or a view on one) and this encoder has no 'shareBuffer' option: " +
          "create the Encoder with shareBuffer to pass shared memory by reference",
      );
    }
    const id = shareBuffer(buffer);
    if (!Number.isInteger(id) || id < 0 || id > 0xffffffff) {
      throw new RangeError(
        `Cannot encode value as 'shareBuffer' returned ${String(id)} for '${this.path(depth)}': ` +
          "an id must be an integer from 0 to 2^32 - 1",
      );
    }
    return id;
  }

  /** The TypeError for the value at `depth`: "Cannot encode value as '<path>' <problem>". */
  private reject(depth: number, problem: string): TypeError {
    return new TypeError(`Cannot encode value as '${this.path(depth)}' ${problem}`);
  }

  /** The TypeError for a value at `depth` that is its own ancestor at `ancestorDepth`. */
  private cycle(depth: number, ancestorDepth: number): TypeError {
    return new TypeError(
      `Cannot encode value as '${this.path(depth)}' refers back to '${this.path(ancestorDepth)}': ` +
        "cyclic data cannot cross threads",
    );
  }

  /** The path of the value at `depth`, as source text: `args[1].user.save`. */
  private path(depth: number): string {
    let text = this.root;
    for (let d = 1; d <= depth; d++) {
      // A very deep path is shortened in the middle, so that an error message stays readable.
      if (depth > 2 * PATH_SHOWN && d === PATH_SHOWN + 1) {
        text += `…(${depth - 2 * PATH_SHOWN} more)…`;
        d = depth - PATH_SHOWN;
      }
      const key = this.segmentKeys[d];
      switch (this.segmentKinds[d]) {
        case SEGMENT_PROPERTY:
          text += /^[A-Za-z_$][\w$]*$/.test(key as string) ? `.${key as string}` : `[${JSON.stringify(key)}]`;
          break;
        case SEGMENT_INDEX:
          text += `[${key as number}]`;
          break;
        case SEGMENT_MAP_KEY:
          text += `.keys()[${this.segmentIndexes[d]}]`;
          break;
        case SEGMENT_MAP_VALUE:
          text += mapKeyText(key) ?? `.values()[${this.segmentIndexes[d]}]`;
          break;
        case SEGMENT_SET_ELEMENT:
          text += `.values()[${this.segmentIndexes[d]}]`;
          break;
      }
    }
    return text;
  }
}

/** Segments shown at each end of a shortened path (see `Encoder.path`). */
const PATH_SHOWN = 24;

/** `.get(key)` for a Map value whose key prints as a literal, else undefined. */
function mapKeyText(key: unknown): string | undefined {
  switch (typeof key) {
    case "string":
      return `.get(${JSON.stringify(key)})`;
    case "number":
    case "boolean":
    case "undefined":
      return `.get(${Object.is(key, -0) ? "-0" : String(key)})`;
    case "bigint":
      return `.get(${key}n)`;
    default:
      return key === null ? ".get(null)" : undefined;
  }
}

const hasOwnProperty = Object.prototype.hasOwnProperty;

/** The bytes a varint of `n` takes. */
function varintSize(n: number): number {
  return n < 0x80 ? 1 : n < 0x4000 ? 2 : n < 0x200000 ? 3 : n < 0x10000000 ? 4 : 5;
}

function hexDigit(c: number): number {
  return c <= 0x39 ? c - 0x30 : c - 0x57;
}

/** How a rejected object is named: `is a WeakMap`, `is an instance of class Point`. */
function describeObject(value: object, proto: object): string {
  const tag = Object.prototype.toString.call(value).slice(8, -1);
  const ctor = Object.getOwnPropertyDescriptor(proto, "constructor")?.value;
  const ctorName = typeof ctor === "function" && typeof ctor.name === "string" ? ctor.name : "";
  if (ctorName !== "" && ctor.prototype === proto && (globalThis as Record<string, unknown>)[ctorName] !== ctor) {
    return `is an instance of class ${ctorName}`;
  }
  if (ctorName === "" && tag === "Object") return "is an object whose prototype is neither Object.prototype nor null";
  const name = ctorName !== "" ? ctorName : tag;
  if (name === "Number" || name === "String" || name === "Boolean" || name === "BigInt" || name === "Symbol") {
    return `is a boxed ${name.toLowerCase()} (a ${name} object)`;
  }
  if (name === "Array") return "is an object with Array.prototype as its prototype but not an array";
  return `is ${/^[AEIOU]/.test(name) ? "an" : "a"} ${name}`;
}

/** A short name for the type of a bad argument. */
function describeType(value: unknown): string {
  if (value === null) return "null";
  if (typeof value === "object") return Array.isArray(value) ? "an array" : "an object";
  return typeof value;
}

/** A reusable reader; one is kept for the common, non-reentrant call. */
let idleReader: Reader | undefined;

/**
 * Decodes one value from `length` bytes of `bytes` starting at `offset` — bytes that an {@link Encoder}
 * wrote, possibly copied into (and read here from) a SharedArrayBuffer. Any thread may call it.
 *
 * @param bytes The bytes; a view on an ArrayBuffer or SharedArrayBuffer.
 * @param offset The index in `bytes` of the value's first byte.
 * @param length The value's length in bytes, as `encode` returned it.
 * @param resolveBuffer Maps a shared-buffer id (from the encoding side's `shareBuffer`) back to its
 * SharedArrayBuffer; needed only if the value holds shared memory.
 * @param errorClasses Error classes by name: an error of a registered class (or `name`) is decoded as an
 * instance of it.
 * @param moved The buffers the encoder moved (its `moved`, sent beside the bytes): a moved buffer or view
 * arrives on them, without a copy.
 * @returns The value.
 * @throws {Error} If the bytes are corrupt or truncated: an unknown tag, a read past `length`, a count larger
 * than the bytes left, nesting deeper than {@link MAX_DEPTH}, bytes left over, a view out of its buffer's
 * bounds.
 * @throws {TypeError} If `bytes` is not a Uint8Array, or the value holds shared memory and `resolveBuffer`
 * is missing or does not return a SharedArrayBuffer.
 * @throws {RangeError} If `offset` and `length` do not lie within `bytes`.
 *
 * @example Usage
 * ```ts
 * import { decode, Encoder } from "./codec.ts";
 * const encoder = new Encoder();
 * const length = encoder.encode(new Map([["when", new Date(0)]]));
 * console.log(decode(encoder.bytes, 0, length)); // Map(1) { "when" => 1970-01-01T00:00:00.000Z }
 * ```
 */
export function decode(
  bytes: Uint8Array,
  offset: number,
  length: number,
  resolveBuffer?: (id: number) => SharedArrayBuffer,
  errorClasses?: ErrorClasses,
  moved?: readonly ArrayBuffer[],
): unknown {
  if (!(bytes instanceof Uint8Array)) {
    throw new TypeError(`Cannot decode value as 'bytes' must be a Uint8Array: received ${describeType(bytes)}`);
  }
  if (!Number.isInteger(offset) || offset < 0 || offset > bytes.length) {
    throw new RangeError(
      `Cannot decode value as 'offset' must be an integer from 0 to ${bytes.length}: received ${String(offset)}`,
    );
  }
  if (!Number.isInteger(length) || length < 0 || offset + length > bytes.length) {
    throw new RangeError(
      `Cannot decode value as 'length' must be an integer from 0 to ${bytes.length - offset}: received ${
        String(length)
      }`,
    );
  }
  if (resolveBuffer !== undefined && typeof resolveBuffer !== "function") {
    throw new TypeError(
      `Cannot decode value as 'resolveBuffer' must be a function: received ${describeType(resolveBuffer)}`,
    );
  }
  const reader = idleReader ?? new Reader();
  idleReader = undefined;
  reader.bytes = bytes;
  reader.start = offset;
  reader.pos = offset;
  reader.end = offset + length;
  reader.resolveBuffer = resolveBuffer;
  reader.errorClasses = errorClasses;
  reader.moved = moved;
  try {
    const value = reader.value(0);
    if (reader.pos !== reader.end) {
      throw reader.corrupt(`the value ends at byte ${reader.pos - offset} but the length is ${length}`);
    }
    return value;
  } finally {
    reader.bytes = EMPTY_BYTES;
    reader.resolveBuffer = undefined;
    reader.errorClasses = undefined;
    reader.moved = undefined;
    idleReader = reader;
  }
}

const EMPTY_BYTES = new Uint8Array(0);

/**
 * Latin-1 strings of at most this many code units are interned (object keys, names, short arguments); wide
 * strings this short are built with one `String.fromCharCode` call; longer strings in chunks.
 */
const SHORT_STRING = 24;
/** Slots in the intern table: a power of two. */
const INTERN_SLOTS = 1024;
/** Recently decoded short Latin-1 strings, by a hash of their bytes; a slot holds the latest one. */
const internTable: (string | undefined)[] = new Array(INTERN_SLOTS).fill(undefined);

/**
 * The string of `n` Latin-1 bytes at `p`: the interned one if the table has it, else a new one (which
 * replaces its slot's string). A hit allocates nothing, and costs about as much as building the string
 * would in the fastest engine, so the table helps where strings repeat (keys) and costs little where not.
 */
function internLatin1(bytes: Uint8Array, p: number, n: number): string {
  let h = n;
  for (let i = 0; i < n; i++) h = (Math.imul(h, 31) + bytes[p + i]) | 0;
  const slot = (h ^ (h >>> 13)) & (INTERN_SLOTS - 1);
  const cached = internTable[slot];
  if (cached !== undefined && cached.length === n) {
    let i = 0;
    while (i < n && cached.charCodeAt(i) === bytes[p + i]) i++;
    if (i === n) return cached;
  }
  // One call with n arguments from a reused list: measured here about 1.5–2× faster than n concatenations on
  // V8 and on JavaScriptCore.
  const codes = charCodeLists[n];
  for (let i = 0; i < n; i++) codes[i] = bytes[p + i];
  const s = String.fromCharCode.apply(null, codes);
  internTable[slot] = s;
  return s;
}

/** `charCodeLists[n]` is a reused list of n char codes, for `internLatin1`. */
const charCodeLists: number[][] = Array.from({ length: SHORT_STRING + 1 }, (_, n) => new Array(n).fill(0));
/** Code units per `String.fromCharCode` call for long strings (well below engines' argument limits). */
const STRING_CHUNK = 4096;
const wideChunk = new Uint16Array(STRING_CHUNK);

/** The cursor of one `decode` call: every read is checked against `end`. */
class Reader {
  bytes: Uint8Array = EMPTY_BYTES;
  start = 0;
  pos = 0;
  end = 0;
  resolveBuffer: ((id: number) => SharedArrayBuffer) | undefined = undefined;
  errorClasses: ErrorClasses | undefined = undefined;
  moved: readonly ArrayBuffer[] | undefined = undefined;
  /** See `dataView`. It keeps the last buffer decoded from alive; the pool decodes from one buffer. */
  numbers: DataView | undefined = undefined;
  numbersBuffer: ArrayBufferLike | undefined = undefined;

  corrupt(problem: string): Error {
    return new Error(`Cannot decode value as the bytes are corrupt or truncated: ${problem}`);
  }

  /** Checks that `n` more bytes are there. */
  need(n: number): void {
    if (this.end - this.pos < n) {
      throw this.corrupt(`byte ${this.pos - this.start} needs ${n} more but only ${this.end - this.pos} remain`);
    }
  }

  varint(): number {
    const bytes = this.bytes;
    let result = 0;
    for (let shift = 0; shift < 35; shift += 7) {
      if (this.pos >= this.end) this.need(1);
      const b = bytes[this.pos++];
      result += (b & 0x7f) * 2 ** shift;
      if (b < 0x80) {
        if (result > 0xffffffff) break;
        return result;
      }
    }
    throw this.corrupt(`a length at byte ${this.pos - this.start} is longer than 5 bytes or above 2^32 - 1`);
  }

  /** Reads a count of items that each take at least `minBytes` bytes, and checks they can all be there. */
  count(minBytes: number): number {
    const n = this.varint();
    if (n * minBytes > this.end - this.pos) {
      throw this.corrupt(`a count of ${n} at byte ${this.pos - this.start} exceeds the bytes left`);
    }
    return n;
  }

  value(depth: number): unknown {
    if (this.pos >= this.end) this.need(1);
    const tag = this.bytes[this.pos++];
    if (tag >= TAG_SMALL_INT) return tag - TAG_SMALL_INT;
    switch (tag) {
      case TAG_UNDEFINED:
        return undefined;
      case TAG_NULL:
        return null;
      case TAG_FALSE:
        return false;
      case TAG_TRUE:
        return true;
      case TAG_INT32: {
        this.need(4);
        const b = this.bytes;
        const p = this.pos;
        this.pos = p + 4;
        return b[p] | (b[p + 1] << 8) | (b[p + 2] << 16) | (b[p + 3] << 24);
      }
      case TAG_FLOAT64:
        return this.float64();
      case TAG_STRING:
        return this.string();
      case TAG_UTF8:
        return this.utf8();
      case TAG_BIGINT64: {
        this.need(8);
        const v = this.dataView().getBigInt64(this.bytes.byteOffset + this.pos, true);
        this.pos += 8;
        return v;
      }
      case TAG_BIGINT:
        return this.bigint();
      case TAG_DATE:
        return new Date(this.float64());
      case TAG_ARRAY_BUFFER:
        return this.copyOut(this.run());
      case TAG_VIEW:
        return this.view();
      case TAG_SHARED_BUFFER:
        return this.sharedBuffer(this.varint());
      case TAG_SHARED_VIEW:
        return this.sharedView();
      case TAG_MOVED_BUFFER:
        return this.movedBuffer(this.varint());
      case TAG_MOVED_VIEW:
        return this.movedView();
    }
    if (depth >= MAX_DEPTH) {
      throw this.corrupt(`nesting at byte ${this.pos - 1 - this.start} is deeper than ${MAX_DEPTH} levels`);
    }
    const child = depth + 1;
    switch (tag) {
      case TAG_ARRAY: {
        const n = this.count(1);
        // Argument lists are short: a literal (elements are evaluated left to right) is allocated at its
        // size. Longer arrays grow by push; preallocating with `new Array(n)` measured a little faster on V8
        // but about twice as slow on JavaScriptCore.
        switch (n) {
          case 0:
            return [];
          case 1:
            return [this.value(child)];
          case 2:
            return [this.value(child), this.value(child)];
          case 3:
            return [this.value(child), this.value(child), this.value(child)];
        }
        const array: unknown[] = [];
        for (let i = 0; i < n; i++) array.push(this.value(child));
        return array;
      }
      case TAG_OBJECT:
      case TAG_NULL_OBJECT: {
        const n = this.count(2);
        const object: Record<string, unknown> = tag === TAG_OBJECT ? {} : Object.create(null);
        for (let i = 0; i < n; i++) {
          const key = this.string();
          const value = this.value(child);
          if (key === "__proto__") {
            // Assignment would set the prototype; the original had an own property of that name.
            Object.defineProperty(object, key, { value, writable: true, enumerable: true, configurable: true });
          } else {
            object[key] = value;
          }
        }
        return object;
      }
      case TAG_MAP: {
        const n = this.count(2);
        const map = new Map<unknown, unknown>();
        for (let i = 0; i < n; i++) {
          const key = this.value(child);
          map.set(key, this.value(child));
        }
        return map;
      }
      case TAG_SET: {
        const n = this.count(1);
        const set = new Set<unknown>();
        for (let i = 0; i < n; i++) set.add(this.value(child));
        return set;
      }
      case TAG_ERROR:
        return this.error(child);
    }
    throw this.corrupt(`byte ${this.pos - 1 - this.start} holds the unknown tag 0x${tag.toString(16)}`);
  }

  float64(): number {
    this.need(8);
    const v = this.dataView().getFloat64(this.bytes.byteOffset + this.pos, true);
    this.pos += 8;
    return v;
  }

  /** A DataView on the whole buffer under `bytes`, kept while `decode` is given views of the same buffer. */
  dataView(): DataView {
    const buffer = this.bytes.buffer;
    if (this.numbers === undefined || this.numbersBuffer !== buffer) {
      this.numbers = new DataView(buffer);
      this.numbersBuffer = buffer;
    }
    return this.numbers;
  }

  /** Reads a Str. */
  string(): string {
    const header = this.varint();
    const n = header >>> 1;
    const bytes = this.bytes;
    let p = this.pos;
    let s = "";
    if ((header & 1) === 0) {
      this.need(n);
      this.pos = p + n;
      if (n <= SHORT_STRING) return internLatin1(bytes, p, n);
      if (n >= LONG_STRING) {
        const fast = readOneByte(bytes, p, n);
        if (fast !== undefined) return fast;
      }
      for (let i = 0; i < n; i += STRING_CHUNK) {
        const k = Math.min(STRING_CHUNK, n - i);
        s += String.fromCharCode.apply(null, bytes.subarray(p + i, p + i + k) as unknown as number[]);
      }
      return s;
    }
    this.need(2 * n);
    this.pos = p + 2 * n;
    if (n <= SHORT_STRING) {
      const codes = charCodeLists[n];
      for (let i = 0; i < n; i++, p += 2) codes[i] = bytes[p] | (bytes[p + 1] << 8);
      return String.fromCharCode.apply(null, codes);
    }
    for (let i = 0; i < n; i += STRING_CHUNK) {
      const k = Math.min(STRING_CHUNK, n - i);
      for (let j = 0; j < k; j++, p += 2) wideChunk[j] = bytes[p] | (bytes[p + 1] << 8);
      s += String.fromCharCode.apply(null, wideChunk.subarray(0, k) as unknown as number[]);
    }
    return s;
  }

  /** Reads a TAG_UTF8 string's byte count and bytes. */
  utf8(): string {
    this.need(4);
    const b = this.bytes;
    const p = this.pos;
    const n = (b[p] | (b[p + 1] << 8) | (b[p + 2] << 16) | (b[p + 3] << 24)) >>> 0;
    this.pos = p + 4;
    this.need(n);
    let view = b.subarray(p + 4, p + 4 + n);
    this.pos = p + 4 + n;
    // `slice` copies into a fresh, unshared buffer.
    if (!DECODES_SHARED && !(b.buffer instanceof ArrayBuffer)) view = view.slice();
    try {
      return utf8Decoder.decode(view);
    } catch {
      throw this.corrupt(`the ${n} bytes of UTF-8 at byte ${p + 4 - this.start} are not UTF-8`);
    }
  }

  bigint(): bigint {
    this.need(1);
    const sign = this.bytes[this.pos++];
    const n = this.count(1);
    if (sign > 1 || n === 0 || this.bytes[this.pos] === 0) {
      throw this.corrupt(`the bigint at byte ${this.pos - this.start} has a bad sign or length`);
    }
    let hex = "0x";
    for (let i = 0; i < n; i++) hex += HEX_BYTES[this.bytes[this.pos + i]];
    this.pos += n;
    const magnitude = BigInt(hex);
    return sign === 1 ? -magnitude : magnitude;
  }

  /** The length of a run of raw bytes, checked against the bytes left, with its alignment padding skipped. */
  run(): number {
    const n = this.count(1);
    if (n >= ALIGN_FROM) {
      const pad = -(this.pos - this.start) & 15; // (see ALIGN_FROM)
      if (n + pad > this.end - this.pos) {
        throw this.corrupt(`a run of ${n} bytes at byte ${this.pos - this.start} exceeds the bytes left`);
      }
      this.pos += pad;
    }
    return n;
  }

  /** The next `n` bytes (already checked by the caller), copied into a new ArrayBuffer of exactly `n` bytes. */
  copyOut(n: number): ArrayBuffer {
    const p = this.pos;
    this.pos = p + n;
    // One allocation and a copy, without zero-filling first; a plain ArrayBuffer even if `bytes` is shared.
    return this.bytes.slice(p, p + n).buffer as ArrayBuffer;
  }

  /** Reads a view kind byte, checked to name a constructor this runtime has. */
  viewKind(): number {
    this.need(1);
    const kind = this.bytes[this.pos++];
    if (VIEW_CONSTRUCTORS[kind] === undefined) {
      throw kind === 7
        ? new TypeError("Cannot decode value as it holds a Float16Array and this runtime has no Float16Array")
        : this.corrupt(`byte ${this.pos - 1 - this.start} holds the unknown view kind ${kind}`);
    }
    return kind;
  }

  view(): ArrayBufferView {
    const kind = this.viewKind();
    const n = this.run();
    const size = VIEW_ELEMENT_SIZES[kind];
    if (n % size !== 0) throw this.corrupt(`a view of ${n} bytes cannot hold elements of ${size} bytes`);
    return new VIEW_CONSTRUCTORS[kind]!(this.copyOut(n));
  }

  sharedBuffer(id: number): SharedArrayBuffer {
    const resolve = this.resolveBuffer;
    if (resolve === undefined) {
      throw new TypeError(
        `Cannot decode value as it holds shared buffer ${id} and no 'resolveBuffer' was given: ` +
          "pass the callback that maps ids back to SharedArrayBuffers",
      );
    }
    const buffer = resolve(id);
    if (!isSharedArrayBuffer(buffer)) {
      throw new TypeError(
        `Cannot decode value as 'resolveBuffer' returned ${describeType(buffer)} for shared buffer ${id}: ` +
          "it must return a SharedArrayBuffer",
      );
    }
    return buffer;
  }

  movedBuffer(index: number): ArrayBuffer {
    const buffer = this.moved?.[index];
    if (buffer === undefined) {
      throw this.corrupt(
        `byte ${this.pos - this.start} names moved buffer ${index}, and ${this.moved?.length ?? 0} came`,
      );
    }
    return buffer;
  }

  movedView(): ArrayBufferView {
    return this.referencedView("moved", (index) => this.movedBuffer(index));
  }

  sharedView(): ArrayBufferView {
    return this.referencedView("shared", (id) => this.sharedBuffer(id));
  }

  /** A view by reference: kind, the buffer's number (`buffer` resolves it), byteOffset, length; checked. */
  referencedView(what: string, buffer: (n: number) => ArrayBufferLike): ArrayBufferView {
    const kind = this.viewKind();
    const n = this.varint();
    const byteOffset = this.varint();
    const length = this.varint();
    const target = buffer(n);
    const size = VIEW_ELEMENT_SIZES[kind];
    if (byteOffset % size !== 0 || byteOffset + length * size > target.byteLength) {
      throw this.corrupt(
        `a view at byte offset ${byteOffset} of ${length} elements of ${size} bytes does not fit ${what} buffer ${n} ` +
          `of ${target.byteLength} bytes`,
      );
    }
    return new VIEW_CONSTRUCTORS[kind]!(target, byteOffset, length);
  }

  error(child: number): Error {
    this.need(1);
    const kind = this.bytes[this.pos++];
    if (kind >= ERROR_CONSTRUCTORS.length) {
      throw this.corrupt(`byte ${this.pos - 1 - this.start} holds the unknown error kind ${kind}`);
    }
    const name = this.string();
    const message = this.string();
    this.need(1);
    const flags = this.bytes[this.pos++];
    if (flags > ERROR_FLAGS) {
      throw this.corrupt(`byte ${this.pos - 1 - this.start} holds unknown error flags ${flags}`);
    }
    const stack = (flags & ERROR_HAS_STACK) !== 0 ? this.string() : undefined;
    const cause = (flags & ERROR_HAS_CAUSE) !== 0 ? this.value(child) : undefined;
    const code = (flags & ERROR_HAS_CODE) !== 0 ? this.value(child) : undefined;
    const errors = (flags & ERROR_HAS_ERRORS) !== 0 ? this.value(child) : undefined;
    const className = (flags & ERROR_HAS_CLASS) !== 0 ? this.string() : undefined;
    const fields = (flags & ERROR_HAS_FIELDS) !== 0 ? this.errorFields(child) : undefined;
    if (errors !== undefined && !Array.isArray(errors)) {
      throw this.corrupt("an AggregateError's errors are not an array");
    }
    const options = (flags & ERROR_HAS_CAUSE) !== 0 ? { cause } : undefined;
    const error = kind === AGGREGATE_ERROR_KIND
      ? new AggregateError(errors ?? [], message, options)
      : new ERROR_CONSTRUCTORS[kind](message, options);
    if (error.name !== name) {
      Object.defineProperty(error, "name", { value: name, writable: true, enumerable: false, configurable: true });
    }
    if (stack !== undefined) {
      Object.defineProperty(error, "stack", { value: stack, writable: true, enumerable: false, configurable: true });
    } else {
      // The original had no string stack; do not show this thread's instead.
      Object.defineProperty(error, "stack", {
        value: undefined,
        writable: true,
        enumerable: false,
        configurable: true,
      });
    }
    if (code !== undefined) (error as { code?: unknown }).code = code;
    if (fields !== undefined) {
      // Own data properties, defined (never assigned: a key like "__proto__" stays a plain field).
      for (let i = 0; i < fields.length; i += 2) {
        Object.defineProperty(error, fields[i] as string, {
          value: fields[i + 1],
          writable: true,
          enumerable: true,
          configurable: true,
        });
      }
    }
    const classes = this.errorClasses;
    if (classes !== undefined) {
      const registered = classes.get(className ?? name) ?? (className !== undefined ? classes.get(name) : undefined);
      if (registered !== undefined) Object.setPrototypeOf(error, registered.prototype);
    }
    return error;
  }

  /** Reads an error's own fields: a 4-byte count, then key and value pairs (returned flat). */
  errorFields(child: number): unknown[] {
    this.need(4);
    const bytes = this.bytes;
    const p = this.pos;
    const count = (bytes[p] | (bytes[p + 1] << 8) | (bytes[p + 2] << 16) | (bytes[p + 3] << 24)) >>> 0;
    this.pos = p + 4;
    // Each field takes at least 2 bytes (an empty key, a one-byte value): a larger count is corrupt.
    if (count * 2 > this.end - this.pos) {
      throw this.corrupt(`an error claims ${count} fields in ${this.end - this.pos} bytes`);
    }
    const out: unknown[] = [];
    for (let i = 0; i < count; i++) {
      out.push(this.string());
      out.push(this.value(child));
    }
    return out;
  }
}

/** `HEX_BYTES[b]` is `b` as two hex digits. */
const HEX_BYTES: readonly string[] = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, "0"));
