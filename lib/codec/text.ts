/**
 * Long strings at memory speed: the codec's fast ways to write a string's code units as one byte each and
 * to read such bytes back, picked for the runtime it runs on. The codec's own loops walk a string code
 * unit by code unit (a 1 MiB string cost 1–3 ms each way on V8); the structured clone that a bare
 * postMessage does copies it whole. These calls are what each runtime offers to copy it whole too.
 *
 * What it owns: the choice of call per runtime, nothing else (no state, no shared memory: it reads and
 * writes the views it is given, which the codec bounds). Any thread may call it.
 *
 * The choice, measured on this project's 2-core VM (64 KiB of JSON text, µs a call; 2026-11-27):
 *
 * | call                                             | Node 24 | Deno 2 | Bun 1 |
 * |--------------------------------------------------|---------|--------|-------|
 * | `TextEncoder.encodeInto`                         | 104     | 4.6    | 5.6   |
 * | `/[\u0100-\uffff]/.test` + `latin1Write`      | 0.1+2.7 | 0.1+298| 131+2.7 |
 * | `Buffer` `latin1Slice` (read)                    | 13.6    | 18     | 84    |
 * | `TextDecoder` UTF-8 (read, shared memory)        | 18      | 89     | 50    |
 *
 * So Node writes with the regular-expression test (constant time on a V8 one-byte string, which cannot
 * match) and `latin1Write`; Deno and Bun write with `encodeInto` and keep the result only when every code
 * unit took one byte (ASCII: the same bytes as Latin-1). Every runtime with a `Buffer` reads with
 * `latin1Slice`; anything else (a browser) gets `undefined` and the codec's own loop.
 *
 * Node's regular expression is the one call here that may throw (a stack overflow as it compiles, a
 * SyntaxError on V8): {@link writeOneByte} answers false then, so that the overflow, if the stack is still
 * too deep, surfaces from the caller's own loop as the RangeError it is, and no SyntaxError reaches a
 * fork's caller. (No other call answers "any code unit above 0xff?" in constant time on Node.)
 *
 * Invariants: {@link writeOneByte} either writes exactly `s.length` bytes, each a code unit of `s`, and
 * returns true, or returns false (whatever it wrote is then garbage the caller overwrites); it throws only
 * what `encodeInto` or `latin1Write` may throw (a RangeError at the stack's limit);
 * {@link readOneByte} returns the string whose code units are the bytes, or undefined.
 */

/** `Buffer.prototype`'s Latin-1 calls, where the runtime has a global `Buffer` (Node, Deno, Bun). */
interface Latin1Calls {
  latin1Write(this: Uint8Array, s: string, offset: number, length: number): number;
  latin1Slice(this: Uint8Array, start: number, end: number): string;
}

const buffer = (globalThis as { Buffer?: { prototype: Partial<Latin1Calls> } }).Buffer?.prototype;
const latin1 = typeof buffer?.latin1Write === "function" && typeof buffer.latin1Slice === "function"
  ? buffer as Latin1Calls
  : undefined;
/** Node itself: not Deno or Bun, which also define `process` (the table above says why it matters). */
const isNode = typeof (globalThis as { process?: { versions?: { node?: unknown } } }).process?.versions?.node ===
    "string" && !("Deno" in globalThis) && !("Bun" in globalThis);
/** Matches a code unit above 0xff; on V8 a one-byte string is answered without a scan. */
const WIDE = /[\u0100-\uffff]/;
const encoder = new TextEncoder();

/**
 * Writes the `s.length` code units of `s` as one byte each into `out` at `at`, if every one fits and this
 * runtime has a fast way to: see the module doc. `out` must have `3 * s.length` bytes of room at `at`
 * (`encodeInto` is given all of it: given less than a string needs, Bun's took 70 times as long).
 *
 * @param s The string.
 * @param out The bytes to write into (unshared).
 * @param at Where the first byte goes.
 * @returns Whether the bytes were written; if false, the caller writes the string its own way.
 *
 * @example Usage
 * ```ts
 * import { writeOneByte } from "./text.ts";
 * const out = new Uint8Array(16);
 * console.log(writeOneByte("hello", out, 1), out[1]); // true 104
 * console.log(writeOneByte("h\u20acllo", out, 1)); // false
 * ```
 */
export function writeOneByte(s: string, out: Uint8Array, at: number): boolean {
  const n = s.length;
  if (isNode && latin1 !== undefined) {
    let wide: boolean;
    try {
      wide = WIDE.test(s);
    } catch {
      // A stack overflow: V8 compiles the expression on its first runs, again when it tiers up, and again
      // once its GC flushed the code, and a compile at the stack's limit throws a SyntaxError ("Invalid
      // regular expression: ...: Stack overflow"), not a RangeError (tests/codec/text_stack_test.ts).
      // No compile up front can rule that out; the caller's own loop writes the string instead, and an
      // overflow there is the RangeError it is. The expression is left as it was: the next test compiles it.
      return false;
    }
    if (wide) return false;
    return latin1.latin1Write.call(out, s, at, n) === n;
  }
  // UTF-8 equals Latin-1 where every code unit took one byte: ASCII.
  const { read, written } = encoder.encodeInto(s, out.subarray(at));
  return read === n && written === n;
}

/**
 * The string whose code units are the `n` bytes of `bytes` at `p`, by the runtime's own call; undefined
 * where it has none (the caller then builds it its own way).
 *
 * @param bytes The bytes (shared or not).
 * @param p Where they start.
 * @param n How many.
 * @returns The string, or undefined.
 *
 * @example Usage
 * ```ts
 * import { readOneByte } from "./text.ts";
 * const text = readOneByte(new Uint8Array([104, 233]), 0, 2);
 * console.log(text === undefined || text === "h\u00e9"); // true
 * ```
 */
export function readOneByte(bytes: Uint8Array, p: number, n: number): string | undefined {
  return latin1?.latin1Slice.call(bytes, p, p + n);
}
