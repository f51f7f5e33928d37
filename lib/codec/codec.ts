/**
 * The argument and result codec: turns a task's arguments (or its result, or the error it threw) into bytes
 * that the pool copies into a SharedArrayBuffer, and turns those bytes back into values on the other thread.
 * It replaces the structured clone that `postMessage` would do. This module is its surface for the rest of
 * `lib/`: {@link Encoder}, {@link decode} and their types.
 *
 * The codec, a file a concept:
 * - `format.ts`: the byte format (its table of tags, kind bytes, limits);
 * - `scratch.ts`: the encoder's scratch buffer, the writers of the format's primitives, deferred runs;
 * - `encoder.ts`: the walk over a value, and the policy for shared memory, moved buffers and large runs;
 * - `decoder.ts`: `decode`, bounds-checked;
 * - `error_values.ts`: what of an Error crosses, taken apart and put back together;
 * - `describe.ts`: the path and descriptions that rejections name;
 * - `text.ts`: the runtime's fast string calls; `buffers.ts`: SharedArrayBuffers by id; `move.ts`: `move()`;
 *   `outcome.ts`: a task's outcome as bytes.
 *
 * It does not touch the pool's shared memory: the encoder writes its own scratch and copies it out where
 * it is told (`copyTo`), and the decoder reads the bytes it is given; where they live in the pool
 * (`record/payload.ts`) and publishing them are the pool's job (through `atomics.ts`). The codec imports
 * nothing of `record/`, nor `record/` of it.
 *
 * Invariants:
 * - `decode(encode(v))` equals `v` with every type kept, for the kinds listed in {@link Encoder}; anything
 *   else is rejected by `encode` with a TypeError naming its path, before any byte is used.
 * - The bytes are meant for another thread of the same process (format.ts): not a storage or wire format.
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
 * Threads: any thread may create an Encoder and call `decode`; an Encoder belongs to the thread that made it.
 *
 * @module
 */

export { decode } from "./decoder.ts";
export { Encoder, type EncoderOptions } from "./encoder.ts";
export type { ErrorClasses } from "./error_values.ts";
export { MAX_DEPTH } from "./format.ts";
