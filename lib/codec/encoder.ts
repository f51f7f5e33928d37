/**
 * The encoder: the walk over a value that writes it in the codec's format (format.ts) into its scratch
 * (scratch.ts), and the policy for what cannot simply be copied: shared memory passed by reference
 * (`shareBuffer`), buffers marked by `move()` and large buffers moved instead of copied (`moves`,
 * `transferFrom`), large runs read straight from the caller's buffer (`deferFrom`), errors (their parts
 * are error_values.ts's), and the rejections, which name the path of what was refused (describe.ts).
 *
 * What it owns: {@link Encoder} and {@link EncoderOptions}; the path from the root to the value being
 * written (the containers, for the cycle check, and the segments, for messages).
 *
 * Invariants:
 * - Anything that cannot cross threads is rejected with a TypeError naming its path, before any byte is
 *   used; a cycle, or nesting deeper than format.ts {@link MAX_DEPTH}, likewise.
 * - It allocates nothing per call for primitives other than big bigints, nor for arrays and plain objects,
 *   once its scratch is large enough (a Map or Set costs its iterator).
 * - With `deferFrom` (the pool's encoders), a run of at least that many bytes is not copied into the
 *   scratch but read straight from the caller's buffer by `copyTo` (one copy into shared memory instead of
 *   two), and only where nothing read after it can run user code: the encoding's root is that view or
 *   buffer, or a root array (read once, element by element, before anything is encoded) of primitives,
 *   views of the standard kinds and ArrayBuffers. So the bytes sent are the bytes as they were read, as
 *   without it; a buffer detached or shrunk before `copyTo` (which no user code can do in between) throws.
 * - An encoding that throws leaves nothing behind: no deferred run, no reference to the caller's values.
 *
 * Threads: an Encoder belongs to the thread that made it (one scratch buffer, not shared; the pool keeps
 * one per thread).
 *
 * @module
 */

import { isError } from "../errors.ts";
import {
  describeObject,
  describeType,
  pathText,
  SEGMENT_INDEX,
  SEGMENT_MAP_KEY,
  SEGMENT_MAP_VALUE,
  SEGMENT_PROPERTY,
  SEGMENT_SET_ELEMENT,
  SUPPORTED,
} from "./describe.ts";
import {
  AGGREGATE_ERROR_KIND,
  ERROR_HAS_CAUSE,
  ERROR_HAS_CLASS,
  ERROR_HAS_CODE,
  ERROR_HAS_ERRORS,
  ERROR_HAS_FIELDS,
  ERROR_HAS_STACK,
  errorClassName,
  errorFieldKeys,
  errorKind,
} from "./error_values.ts";
import * as format from "./format.ts";
import { isDetached, isMarkedForMove } from "./move.ts";
import { readsInert, Scratch } from "./scratch.ts";

// The format's numbers as this module's own constants, as they were when the codec was one file: an imported
// binding is read through its module cell, which measured 5-10% slower on V8 for small values in the loops
// that read a tag at every value.
const {
  ALIGN_FROM,
  DATA_VIEW_KIND,
  isSharedArrayBuffer,
  LONG_STRING,
  MAX_DEPTH,
  SharedArrayBufferConstructor,
  TAG_ARRAY,
  TAG_ARRAY_BUFFER,
  TAG_DATE,
  TAG_ERROR,
  TAG_FALSE,
  TAG_MAP,
  TAG_MOVED_BUFFER,
  TAG_MOVED_VIEW,
  TAG_NULL,
  TAG_NULL_OBJECT,
  TAG_OBJECT,
  TAG_SET,
  TAG_SHARED_BUFFER,
  TAG_SHARED_VIEW,
  TAG_STRING,
  TAG_TRUE,
  TAG_UNDEFINED,
  TAG_VIEW,
  typedArrayName,
  varintSize,
  VIEW_KIND_BY_NAME,
} = format;

/** The path arrays of an Encoder start this long and grow by this much. */
const PATH_CHUNK = 64;

/** From this depth on, ancestors are also kept in a Set: a linear scan stays cheap only for shallow data. */
const ANCESTOR_SCAN_DEPTH = 32;

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

/** A root array longer than this is encoded as it is read, never with deferred runs (see `deferFrom`). */
const SNAPSHOT_MAX = 64;

/**
 * Encodes values into a reusable scratch buffer. One per thread: it is not safe to share between threads.
 *
 * Accepted: numbers (with -0, NaN and ±Infinity), strings (any UTF-16, lone surrogates included), booleans,
 * null, undefined, bigints, dense arrays, plain objects (prototype Object.prototype or null), Map, Set,
 * Date (invalid ones too), Error and its standard subclasses, ArrayBuffer, every typed array and DataView;
 * a SharedArrayBuffer, and any view on one, by reference through `shareBuffer`. Everything else (functions,
 * symbols, class instances, RegExp, WeakMap, Promise, boxed primitives …), cycles and nesting deeper than
 * {@link MAX_DEPTH} are rejected. The module doc of codec.ts lists what a round trip does not keep.
 *
 * @example Usage
 * ```ts
 * import { decode, Encoder } from "./codec.ts";
 * const encoder = new Encoder();
 * const length = encoder.encode([1, "two", { three: 3n }], "args");
 * console.log(decode(encoder.bytes, 0, length)); // [ 1, "two", { three: 3n } ]
 * ```
 */
export class Encoder extends Scratch {
  private readonly shareBuffer: ((buffer: SharedArrayBuffer) => number) | undefined;
  /** See {@link EncoderOptions.moves}. */
  moves: "transfer" | "copy" | { refuse: string };
  /** The buffers marked by `move()` that the last encoding refers to, in index order (`moves: "transfer"`). */
  readonly moved: ArrayBuffer[] = [];
  /** See {@link EncoderOptions.transferFrom}. */
  private readonly transferFrom: number;
  /**
   * Whether the root argument list being written may defer its runs (every element inert, see `array`).
   * A root view or buffer may always: nothing is read after it.
   */
  private deferring = false;
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
    if (typeof deferFrom !== "number" || !(deferFrom >= ALIGN_FROM)) {
      throw new RangeError(
        `Cannot create encoder as 'deferFrom' must be a number of bytes of at least ${ALIGN_FROM}: received ${
          String(deferFrom)
        }`,
      );
    }
    if (typeof transferFrom !== "number" || !(transferFrom >= 1)) {
      throw new RangeError(
        `Cannot create encoder as 'transferFrom' must be a number of bytes of at least 1: received ${
          String(transferFrom)
        }`,
      );
    }
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
    super(initialCapacity, deferFrom);
    this.moves = moves;
    this.transferFrom = transferFrom;
    this.shareBuffer = shareBuffer;
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
    if (isDetached(buffer as ArrayBuffer)) {
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
    if (isDetached(value)) throw this.reject(depth, "is a detached ArrayBuffer: its contents are gone");
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

  /** Writes an Error: its kind (nearest standard prototype), name, message and optional fields. */
  private error(value: Error, proto: object, depth: number): void {
    const kind = errorKind(proto);
    const name = value.name;
    const message = value.message;
    const stack = value.stack;
    const hasCause = Object.hasOwn(value, "cause");
    const code = (value as { code?: unknown }).code;
    const hasCode = typeof code === "string" || typeof code === "number";
    const errors = kind === AGGREGATE_ERROR_KIND ? (value as AggregateError).errors : undefined;
    const hasErrors = Array.isArray(errors);
    // Read through descriptors, never getters: the class's name, and the own data fields to send.
    const className = errorClassName(proto, kind);
    const fields = errorFieldKeys(value);
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
    return pathText(this.root, depth, this.segmentKinds, this.segmentKeys, this.segmentIndexes);
  }
}

const hasOwnProperty = Object.prototype.hasOwnProperty;
