/**
 * The decoder: turns bytes that an Encoder wrote (format.ts), possibly copied into and read here from a
 * SharedArrayBuffer, back into a value. It replaces the structured clone's deserialization.
 *
 * What it owns: {@link decode}, its reusable cursor (`Reader`), the per-thread intern table of short
 * strings, and the checks that make corrupt bytes an error rather than a wrong value.
 *
 * Invariants:
 * - Every read is bounds-checked against the given length, every count is checked against the bytes left
 *   (each item takes at least one byte), nesting is capped at format.ts {@link MAX_DEPTH}, and the value
 *   must end exactly at the given length: corrupt or truncated bytes throw an Error, never loop or allocate
 *   without bound, never return a partial value.
 * - It allocates the values it returns and nothing else on its common path: a short Latin-1 string that it
 *   decoded recently (an object key, typically) comes from a small per-thread intern table.
 * - It reads the bytes it is given and nothing else: it never writes them, and it does not touch shared
 *   memory other than through that view (ordering the reads is its caller's job, through `atomics.ts`).
 *
 * Threads: any thread may call `decode` (each thread has its own module state: the cursor kept for reuse,
 * the intern table).
 *
 * @module
 */

import { describeType } from "./describe.ts";
import {
  ERROR_CONSTRUCTORS,
  ERROR_FLAGS,
  ERROR_HAS_CAUSE,
  ERROR_HAS_CLASS,
  ERROR_HAS_CODE,
  ERROR_HAS_ERRORS,
  ERROR_HAS_FIELDS,
  ERROR_HAS_STACK,
  type ErrorClasses,
  makeError,
} from "./error_values.ts";
import * as format from "./format.ts";
import { readOneByte } from "./text.ts";

// The format's numbers as this module's own constants, as they were when the codec was one file: an imported
// binding is read through its module cell, which measured 5-10% slower on V8 for small values in the loops
// that read a tag at every value.
const {
  ALIGN_FROM,
  isSharedArrayBuffer,
  LONG_STRING,
  MAX_DEPTH,
  RUN_ALIGN,
  TAG_ARRAY,
  TAG_ARRAY_BUFFER,
  TAG_BIGINT,
  TAG_BIGINT64,
  TAG_DATE,
  TAG_ERROR,
  TAG_FALSE,
  TAG_FLOAT64,
  TAG_INT32,
  TAG_MAP,
  TAG_MOVED_BUFFER,
  TAG_MOVED_VIEW,
  TAG_NULL,
  TAG_NULL_OBJECT,
  TAG_OBJECT,
  TAG_SET,
  TAG_SHARED_BUFFER,
  TAG_SHARED_VIEW,
  TAG_SMALL_INT,
  TAG_STRING,
  TAG_TRUE,
  TAG_UNDEFINED,
  TAG_UTF8,
  TAG_VIEW,
  VIEW_CONSTRUCTORS,
  VIEW_ELEMENT_SIZES,
} = format;

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
      const pad = -(this.pos - this.start) & (RUN_ALIGN - 1); // (see ALIGN_FROM)
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
    return makeError(
      { kind, name, message, flags, stack, cause, code, errors: errors as unknown[] | undefined, className, fields },
      this.errorClasses,
    );
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
