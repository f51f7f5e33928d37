/**
 * The codec's contract: every supported value survives encode → copy into shared memory → decode with its
 * types intact (a property over generated values), every unsupported kind is rejected with a TypeError that
 * names its path, shared memory travels by reference, and corrupt or truncated bytes throw.
 *
 * The seed is fixed (override with FILCH_SEED to replay) and printed.
 */
import fc from "fast-check";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { decode, Encoder, MAX_DEPTH } from "../../lib/codec/codec.ts";
import { startThread } from "../../lib/runtime/thread.ts";
import type { CodecEchoReply, CodecEchoRequest } from "./_codec_worker.ts";
import { assert, assertEquals, assertThrows, test } from "../_test.ts";

const SEED = Number(readEnv("FILCH_SEED") ?? 20261121);
const RUNS = Number(readEnv("FILCH_CODEC_RUNS") ?? 1000);
console.log(`codec_test: fast-check seed ${SEED}, ${RUNS} runs (replay with FILCH_SEED=${SEED})`);

function readEnv(name: string): string | undefined {
  const process = (globalThis as { process?: { env: Record<string, string | undefined> } }).process;
  return process?.env[name];
}

type ViewConstructor = new (buffer: ArrayBufferLike, byteOffset?: number, length?: number) => ArrayBufferView;
const Float16ArrayConstructor = (globalThis as { Float16Array?: ViewConstructor & { from(xs: number[]): unknown } })
  .Float16Array;

// ---------------------------------------------------------------------------------------------------------
// A strict deep equality: -0 is not 0, NaN is NaN, a Map is not an object, prototypes must match.

/** The first difference between `a` and `b` as text, or undefined if they are equal. */
function difference(a: unknown, b: unknown, path = "value"): string | undefined {
  if (typeof a !== typeof b) return `${path}: ${typeof a} vs ${typeof b}`;
  if (typeof a !== "object" || a === null || b === null) {
    return Object.is(a, b) ? undefined : `${path}: ${show(a)} vs ${show(b)}`;
  }
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  if (Object.getPrototypeOf(x) !== Object.getPrototypeOf(y)) return `${path}: prototypes differ`;
  if (Array.isArray(x)) {
    const ya = y as unknown as unknown[];
    if (x.length !== ya.length) return `${path}: length ${x.length} vs ${ya.length}`;
    for (let i = 0; i < x.length; i++) {
      const d = difference(x[i], ya[i], `${path}[${i}]`);
      if (d !== undefined) return d;
    }
    return undefined;
  }
  if (x instanceof Map) {
    const ea = [...x];
    const eb = [...(y as unknown as Map<unknown, unknown>)];
    return difference(ea, eb, `${path}<entries>`);
  }
  if (x instanceof Set) return difference([...x], [...(y as unknown as Set<unknown>)], `${path}<values>`);
  if (x instanceof Date) {
    return Object.is(x.getTime(), (y as unknown as Date).getTime()) ? undefined : `${path}: dates differ`;
  }
  if (x instanceof Error) {
    const ye = y as unknown as Error;
    for (const field of ["name", "message", "stack"] as const) {
      if (x[field] !== ye[field]) return `${path}.${field}: ${show(x[field])} vs ${show(ye[field])}`;
    }
    if (Object.hasOwn(x, "cause") !== Object.hasOwn(ye, "cause")) return `${path}.cause: presence differs`;
    return difference(x.cause, ye.cause, `${path}.cause`) ??
      difference((x as { code?: unknown }).code, (ye as { code?: unknown }).code, `${path}.code`) ??
      difference((x as { errors?: unknown }).errors, (ye as { errors?: unknown }).errors, `${path}.errors`);
  }
  if (ArrayBuffer.isView(x)) {
    const yv = y as unknown as ArrayBufferView;
    if ("length" in x && x.length !== (yv as Uint8Array).length) return `${path}: element count differs`;
    return sameBytes(bytesOf(x), bytesOf(yv)) ? undefined : `${path}: bytes differ`;
  }
  if (x instanceof ArrayBuffer || x instanceof SharedArrayBuffer) {
    return sameBytes(new Uint8Array(x), new Uint8Array(y as unknown as ArrayBuffer)) ? undefined : `${path}: bytes`;
  }
  const ka = Object.keys(x);
  const kb = Object.keys(y);
  if (ka.join("\u0000") !== kb.join("\u0000")) return `${path}: keys ${show(ka)} vs ${show(kb)}`;
  for (const k of ka) {
    const d = difference(x[k], y[k], `${path}[${JSON.stringify(k)}]`);
    if (d !== undefined) return d;
  }
  return undefined;
}

function bytesOf(view: ArrayBufferView): Uint8Array {
  return new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function show(value: unknown): string {
  if (typeof value === "bigint") return `${value}n`;
  if (Object.is(value, -0)) return "-0";
  if (typeof value === "number" || value === undefined) return String(value);
  try {
    return JSON.stringify(value) ?? String(value);
  } catch (error) {
    return `<${(error as Error).message}>`;
  }
}

function assertSame(actual: unknown, expected: unknown, message: string): void {
  const d = difference(expected, actual);
  if (d !== undefined) throw new Error(`assertion failed: ${message}: ${d}`);
}

// ---------------------------------------------------------------------------------------------------------
// The path the pool takes: encode, copy into a SharedArrayBuffer at an odd offset, decode from there.

const payload = { bytes: new Uint8Array(new SharedArrayBuffer(1 << 16)) };

function roundTrip(value: unknown, encoder = new Encoder(), resolve?: (id: number) => SharedArrayBuffer): unknown {
  const length = encoder.encode(value, "args");
  assertEquals(encoder.length, length, "length getter");
  assertEquals(encoder.bytes.length, length, "bytes getter");
  if (length + 3 > payload.bytes.length) {
    payload.bytes = new Uint8Array(new SharedArrayBuffer(2 ** Math.ceil(Math.log2(length + 3))));
  }
  encoder.copyTo(payload.bytes, 3);
  return decode(payload.bytes, 3, length, resolve);
}

function assertRoundTrip(value: unknown, message: string): unknown {
  const out = roundTrip(value);
  assertSame(out, value, message);
  return out;
}

// ---------------------------------------------------------------------------------------------------------
// Arbitraries for every supported kind.

const surrogateHeavy = fc.string({
  unit: fc.oneof(
    fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c)),
    fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)),
  ),
});
const latin1 = fc.string({ unit: fc.integer({ min: 0, max: 0xff }).map((c) => String.fromCharCode(c)) });
/** Strings long enough (128 code units and more) for the runtime's own text calls and the UTF-8 tag. */
const long = { minLength: 120, maxLength: 600 };
const longString = fc.oneof(
  fc.string(long),
  fc.string({ ...long, unit: fc.integer({ min: 0, max: 0xff }).map((c) => String.fromCharCode(c)) }),
  fc.string({ ...long, unit: "binary" }),
  fc.string({ ...long, unit: "grapheme" }),
  fc.string({
    ...long,
    unit: fc.oneof(
      fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c)),
      fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)),
    ),
  }),
  // Mostly ASCII with a few wide characters at any place: the first write fails late, not at once.
  fc.tuple(fc.string(long), fc.nat(), fc.constantFrom("\u20ac", "\ufeff", "😀", "\u0100", "é")).map(([t, at, c]) =>
    t.slice(0, at % (t.length + 1)) + c + t.slice(at % (t.length + 1))
  ),
);
const anyString = fc.oneof(fc.string(), latin1, fc.string({ unit: "binary" }), surrogateHeavy, longString);

const number = fc.oneof(
  fc.integer(),
  fc.integer({ min: -300, max: 300 }),
  fc.double(),
  fc.constantFrom(-0, 0, NaN, Infinity, -Infinity, 127, 128, -1, 2 ** 31, -(2 ** 31), 2 ** 31 - 1, 2 ** 53, 5e-324),
);

const bigint = fc.oneof(
  fc.bigInt(),
  fc.bigInt({ min: -(2n ** 300n), max: 2n ** 300n }),
  fc.constantFrom(0n, -1n, 2n ** 63n - 1n, 2n ** 63n, -(2n ** 63n), -(2n ** 63n) - 1n, 2n ** 64n, 255n, 256n),
);

/** A view of `bytes`, at an offset inside a larger buffer when `pad` says so. */
function placed<T>(make: (buffer: ArrayBuffer, byteOffset: number, length: number) => T, size: number) {
  return fc.tuple(fc.uint8Array({ maxLength: 48 }), fc.integer({ min: 0, max: 3 })).map(([data, pad]) => {
    const length = Math.floor(data.length / size);
    const buffer = new ArrayBuffer(pad * size + length * size + size);
    new Uint8Array(buffer, pad * size).set(data.subarray(0, length * size));
    return make(buffer, pad * size, length);
  });
}

const typedArrayConstructors: [ViewConstructor, number][] = [
  [Int8Array, 1],
  [Uint8Array, 1],
  [Uint8ClampedArray, 1],
  [Int16Array, 2],
  [Uint16Array, 2],
  [Int32Array, 4],
  [Uint32Array, 4],
  [Float32Array, 4],
  [Float64Array, 8],
  [BigInt64Array, 8],
  [BigUint64Array, 8],
];
if (Float16ArrayConstructor !== undefined) typedArrayConstructors.push([Float16ArrayConstructor, 2]);

const binary = fc.oneof(
  ...typedArrayConstructors.map(([ctor, size]) => placed((b, o, n) => new ctor(b, o, n), size)),
  fc.float64Array(),
  fc.bigInt64Array(),
  placed((b, o, n) => new DataView(b, o, n), 1),
  fc.uint8Array().map((a) => a.slice().buffer),
);

const date = fc.oneof(fc.date(), fc.constant(null).map(() => new Date(NaN)));

const leaf = fc.oneof(
  number,
  anyString,
  fc.boolean(),
  fc.constantFrom(null, undefined),
  bigint,
  date,
  binary,
);

const key = fc.oneof(
  fc.string(),
  anyString,
  fc.constantFrom("__proto__", "constructor", "toString", "0", "1", "10", "-1", "4294967295", "", "a b", "x.y"),
);

const errorConstructors = [Error, TypeError, RangeError, SyntaxError, ReferenceError, EvalError, URIError];

const { value: anyValue } = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    leaf,
    tie("array"),
    tie("object"),
    tie("map"),
    tie("set"),
    tie("error"),
  ),
  array: fc.array(tie("value"), { maxLength: 6 }),
  // Sometimes with a null prototype (fast-check's default for dictionaries).
  object: fc.dictionary(key, tie("value"), { maxKeys: 6 }),
  map: fc.array(fc.tuple(tie("value"), tie("value")), { maxLength: 4 }).map((entries) => new Map(entries)),
  set: fc.array(tie("value"), { maxLength: 4 }).map((values) => new Set(values)),
  error: fc.record({
    kind: fc.integer({ min: 0, max: errorConstructors.length }),
    message: anyString,
    name: fc.option(anyString, { nil: undefined }),
    hasCause: fc.boolean(),
    cause: tie("value"),
    code: fc.option(fc.oneof(fc.string(), fc.integer()), { nil: undefined }),
    errors: fc.array(tie("value"), { maxLength: 3 }),
  }).map(({ kind, message, name, hasCause, cause, code, errors }) => {
    const options = hasCause ? { cause } : undefined;
    const error = kind === errorConstructors.length
      ? new AggregateError(errors, message, options)
      : new errorConstructors[kind](message, options);
    if (name !== undefined) error.name = name;
    if (code !== undefined) (error as Error & { code: unknown }).code = code;
    return error;
  }),
}));

// ---------------------------------------------------------------------------------------------------------
// Properties.

test(`decode(encode(v)) equals v with types kept, for generated values (seed ${SEED})`, () => {
  const encoder = new Encoder({ initialCapacity: 16 });
  fc.assert(
    fc.property(anyValue, (value) => {
      const out = roundTrip(value, encoder);
      const d = difference(value, out);
      if (d !== undefined) throw new Error(`round trip changed the value: ${d}`);
    }),
    { seed: SEED, numRuns: RUNS },
  );
});

test(`encodeArgs writes the same bytes as encode(args, "args"), and says when every argument was primitive (seed ${SEED})`, () => {
  const viaArgs = new Encoder({ initialCapacity: 16 });
  const viaEncode = new Encoder({ initialCapacity: 16 });
  const primitive = fc.oneof(
    fc.double(),
    fc.integer(),
    fc.string({ unit: "binary" }),
    fc.boolean(),
    fc.bigInt(),
    fc.constant(undefined),
    fc.constant(null),
  );
  fc.assert(
    fc.property(fc.array(fc.oneof(primitive, primitive, anyValue), { maxLength: 6 }), (args) => {
      const n = viaArgs.encodeArgs(args);
      const m = viaEncode.encode(args, "args");
      assertEquals(n, m, "length");
      assertEquals([...viaArgs.bytes], [...viaEncode.bytes], "bytes");
      const allPrimitive = args.every((a) => a === null || (typeof a !== "object" && typeof a !== "function"));
      assertEquals(viaArgs.flat, allPrimitive, "flat");
    }),
    { seed: SEED, numRuns: RUNS },
  );
  // A function argument is refused as encode refuses it, with the same path.
  let message = "";
  try {
    viaArgs.encodeArgs([1, () => 0]);
  } catch (error) {
    message = (error as Error).message;
  }
  assert(message.startsWith("Cannot encode value as 'args[1]' is a function"), message);
});

/** A typed array (or ArrayBuffer) of 256 to 3,000 bytes, often at an odd offset: a run a deferring encoder defers. */
const longBinary = fc.tuple(
  fc.integer({ min: 256, max: 3000 }),
  fc.integer({ min: 0, max: 7 }),
  fc.integer({ min: 0, max: 255 }),
  fc.constantFrom("u8", "f64", "dv", "ab"),
).map(([n, pad, seed, kind]) => {
  const buffer = new ArrayBuffer(pad + n + 8);
  const bytes = new Uint8Array(buffer, pad, n);
  for (let i = 0; i < n; i++) bytes[i] = (i * 7 + seed) & 255;
  if (kind === "ab") return bytes.slice().buffer;
  if (kind === "dv") return new DataView(buffer, pad, n);
  if (kind === "f64") return new Float64Array(buffer.slice(0, 8 * Math.floor(n / 8)));
  return bytes;
});

test(`with deferFrom, copyTo, bytes and snapshot give the bytes of an encoder without it (seed ${SEED})`, () => {
  const deferring = new Encoder({ initialCapacity: 16, deferFrom: 256 });
  const plain = new Encoder({ initialCapacity: 16 });
  const argument = fc.oneof(longBinary, longBinary, number, anyString, fc.constant(undefined), anyValue);
  fc.assert(
    fc.property(
      fc.oneof(fc.array(argument, { maxLength: 6 }), longBinary, anyValue),
      fc.integer({ min: 0, max: 15 }),
      (value, offset) => {
        const n = deferring.encode(value);
        assertEquals(n, plain.encode(value), "length");
        const expected = [...plain.bytes];
        const target = new Uint8Array(new SharedArrayBuffer(offset + n + 3));
        deferring.copyTo(target, offset);
        assertEquals([...target.subarray(offset, offset + n)], expected, "copyTo");
        assertEquals([...deferring.bytes], expected, "bytes");
        assertEquals([...deferring.snapshot()], expected, "snapshot");
      },
    ),
    { seed: SEED, numRuns: RUNS },
  );
});

test("a deferred run is read at copyTo (one copy), only where nothing read after it runs user code", () => {
  const encoder = new Encoder({ deferFrom: 1024 });
  const big = new Uint8Array(4096).fill(1);
  // Deferred: the bytes are read at the copy, not at the encoding.
  for (const value of [big, [big, 2, "three", new Float64Array(200)], big.buffer]) {
    const n = encoder.encode(value);
    big.fill(9);
    const out = decode(encoder.snapshot(), 0, n) as unknown;
    const bytes = new Uint8Array(
      Array.isArray(out) ? out[0] : ArrayBuffer.isView(out) ? out.buffer : out as ArrayBuffer,
    );
    assertEquals(bytes[0], 9, "read at the copy");
    big.fill(1);
  }
  // Not deferred: a getter read after the run could change its bytes, so they are copied as they are read.
  const withGetter = [big, {
    get later() {
      big.fill(5);
      return 1;
    },
  }];
  let n = encoder.encode(withGetter);
  const [first] = decode(encoder.snapshot(), 0, n) as [Uint8Array];
  assertEquals(first[0], 1, "copied before the getter ran");
  assertEquals(big[0], 5, "the getter ran");
  big.fill(1);
  // A subclass could redefine `buffer` or `byteOffset`: not deferred either.
  class Sub extends Uint8Array {}
  n = encoder.encode([new Sub(big)]);
  big.fill(3);
  assertEquals((decode(encoder.snapshot(), 0, n) as [Uint8Array])[0][0], 1, "a subclass's bytes copied at once");
  // A deferred buffer detached before the copy: a named error, not a short or shifted copy.
  const doomed = new Uint8Array(4096);
  n = encoder.encode([doomed]);
  doomed.buffer.transfer();
  let message = "";
  try {
    encoder.copyTo(new Uint8Array(n), 0);
  } catch (error) {
    message = (error as Error).message;
  }
  assert(message.startsWith("Cannot copy encoding as a buffer of 4096 bytes it refers to now holds 0"), message);
  // trim forgets the caller's buffers.
  encoder.encode(big);
  encoder.trim();
  assertEquals(encoder.length, 0, "trim drops a deferred encoding");
});

test(`encoding is deterministic and every proper prefix of an encoding throws (seed ${SEED})`, () => {
  const encoder = new Encoder();
  fc.assert(
    fc.property(anyValue, (value) => {
      const n = encoder.encode(value);
      const bytes = encoder.bytes.slice();
      assertEquals(new Encoder().encode(value), n, "same length from a fresh encoder");
      // Check up to 64 prefixes, spread over the encoding.
      const step = Math.max(1, Math.floor(n / 64));
      for (let k = 0; k < n; k += step) {
        assertThrows(() => decode(bytes, 0, k), Error, "corrupt or truncated");
      }
    }),
    { seed: SEED, numRuns: Math.ceil(RUNS / 4) },
  );
});

test(`decoding arbitrary bytes returns or throws a 'Cannot decode' error, never hangs (seed ${SEED})`, () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
      try {
        decode(bytes, 0, bytes.length, () => new SharedArrayBuffer(8));
      } catch (error) {
        if (!(error instanceof Error) || !error.message.startsWith("Cannot decode")) throw error;
      }
    }),
    { seed: SEED, numRuns: RUNS * 5 },
  );
});

// ---------------------------------------------------------------------------------------------------------
// Fixed values: the edges the arbitraries may miss.

test("numbers keep -0, NaN, ±Infinity and every int32 edge", () => {
  for (const n of [0, -0, NaN, Infinity, -Infinity, 1, -1, 127, 128, 2 ** 31 - 1, -(2 ** 31), 2 ** 31, 0.1, 1e308]) {
    assertRoundTrip(n, `number ${show(n)}`);
  }
});

test("small integers take one byte, strings two bytes of header and one per Latin-1 code unit", () => {
  const encoder = new Encoder();
  assertEquals([...encoder.bytes], [], "nothing encoded yet");
  assertEquals(encoder.encode(1), 1, "small int");
  assertEquals([...encoder.bytes], [0x81], "small int bytes");
  assertEquals(encoder.encode(-1), 5, "int32");
  assertEquals(encoder.encode(-0), 9, "-0 is a float64");
  assertEquals(encoder.encode("hi"), 4, "Latin-1 string");
  assertEquals([...encoder.bytes], [0x06, 4, 104, 105], "Latin-1 bytes");
  assertEquals(encoder.encode("\u0100"), 4, "wide string: tag, header, one code unit of two bytes");
  assertEquals([...encoder.bytes], [0x06, 3, 0x00, 0x01], "wide bytes");
});

test("the format table in format.ts's module doc names the tag each kind is encoded with", () => {
  const source = readFileSync(fileURLToPath(new URL("../../lib/codec/format.ts", import.meta.url).href), "utf8");
  const tableRows = source.split("\n").filter((line) => /^ \* \| 0x/.test(line)).join("\n");
  const sab = new SharedArrayBuffer(8);
  const encoder = new Encoder({ shareBuffer: () => 0 });
  const kinds: [number, unknown][] = [
    [0x80 + 5, 5],
    [0x00, undefined],
    [0x01, null],
    [0x02, false],
    [0x03, true],
    [0x04, -1],
    [0x05, 0.5],
    [0x06, "s"],
    [0x07, 1n],
    [0x08, 2n ** 64n],
    [0x09, []],
    [0x0a, {}],
    [0x0b, Object.create(null)],
    [0x0c, new Map()],
    [0x0d, new Set()],
    [0x0e, new Date(0)],
    [0x0f, new Error("e")],
    [0x10, new ArrayBuffer(1)],
    [0x11, new Uint8Array(1)],
    [0x12, sab],
    [0x13, new Int32Array(sab)],
  ];
  for (const [tag, value] of kinds) {
    encoder.encode(value);
    assertEquals(encoder.bytes[0], tag, `tag of ${Object.prototype.toString.call(value)}`);
    const named = tag >= 0x80 ? "0x80 + n" : `0x${tag.toString(16).padStart(2, "0")}`;
    assert(tableRows.includes(named), `the module doc's table has a row for ${named}`);
  }
  const prose = source.replace(/\n \* /g, " ");
  const viewKinds = [...prose.split("A view kind byte is")[1].split(".")[0].matchAll(/(\d+) (\w+)/g)];
  const errorKinds = [...prose.split("An error kind byte is")[1].split(".")[0].matchAll(/(\d+) (\w+)/g)];
  assertEquals([viewKinds.length, errorKinds.length], [13, 8], "kinds listed in the module doc");
  const globals = globalThis as unknown as Record<string, new (...args: unknown[]) => object>;
  for (const [, kind, name] of viewKinds) {
    if (globals[name] === undefined) continue;
    encoder.encode(new globals[name](new ArrayBuffer(8)));
    assertEquals([encoder.bytes[0], encoder.bytes[1]], [0x11, Number(kind)], `view kind of ${name}`);
  }
  for (const [, kind, name] of errorKinds) {
    encoder.encode(name === "AggregateError" ? new AggregateError([]) : new globals[name]());
    assertEquals([encoder.bytes[0], encoder.bytes[1]], [0x0f, Number(kind)], `error kind of ${name}`);
  }
});

test("strings keep lone surrogates, astral characters and Latin-1, at every length", () => {
  for (const s of ["", "a", "é", "\ud800", "\udfff x \ud800", "😀", "a\u0000b", "ÿ".repeat(300)]) {
    assertRoundTrip(s, `string ${JSON.stringify(s)}`);
  }
  for (const length of [15, 16, 17, 4095, 4096, 4097, 100_000]) {
    assertRoundTrip("x".repeat(length), `ASCII of ${length}`);
    assertRoundTrip("é".repeat(length - 1) + "\ud83d", `wide of ${length}`);
  }
});

test("long strings (128 code units and more) take the runtime's own calls and still round-trip exactly", () => {
  const cases: [string, string][] = [
    ["ASCII", "x".repeat(200)],
    ["Latin-1 above ASCII", "é".repeat(200)],
    ["a leading byte-order mark", "\ufeff" + "y".repeat(200)],
    ["a wide character at the end", "z".repeat(300) + "\u20ac"],
    ["astral characters", "😀".repeat(100)],
    ["a lone surrogate", "w".repeat(200) + "\ud800" + "w"],
    ["127 code units (below the threshold)", "q".repeat(127)],
    ["a NUL", "\u0000".repeat(130)],
  ];
  for (const [name, s] of cases) assertRoundTrip(s, `a long string with ${name}`);
  const encoder = new Encoder();
  // Latin-1 that the runtime wrote in one call, or the Str loop: the same bytes either way.
  encoder.encode("a".repeat(128));
  assertEquals([...encoder.bytes.subarray(0, 4)], [0x06, 0x80, 0x02, 97], "128 ASCII code units are a Latin-1 Str");
  // A well-formed wide string is UTF-8 behind tag 0x16 and a 4-byte byte count.
  const n = encoder.encode("\u20ac".repeat(128));
  assertEquals([...encoder.bytes.subarray(0, 8)], [0x16, 0x80, 0x01, 0, 0, 0xe2, 0x82, 0xac], "UTF-8 bytes");
  assertEquals(n, 5 + 128 * 3, "tag, count and 3 bytes a code unit");
  // A lone surrogate cannot be UTF-8: the Str with two bytes a unit.
  encoder.encode("\ud800".repeat(128));
  assertEquals(encoder.bytes[0], 0x06, "a string that is not well-formed takes the Str");
});

test("UTF-8 bytes that are not UTF-8 throw a 'Cannot decode' error", () => {
  const bytes = new Uint8Array([0x16, 2, 0, 0, 0, 0xff, 0xfe]);
  assertThrows(() => decode(bytes, 0, bytes.length), Error, "Cannot decode");
  const short = new Uint8Array([0x16, 9, 0, 0, 0, 0x41]);
  assertThrows(() => decode(short, 0, short.length), Error, "Cannot decode");
});

test("bigints of any size and sign round-trip", () => {
  for (
    const b of [0n, 1n, -1n, 2n ** 63n - 1n, -(2n ** 63n), 2n ** 63n, -(2n ** 63n) - 1n, 2n ** 100_000n, -(3n ** 5000n)]
  ) {
    assertRoundTrip(b, `bigint of ${b.toString(16).length} hex digits`);
  }
});

test("short strings decoded through the intern table are never confused, even when their slots collide", () => {
  // 5000 distinct keys into a table of 1024 slots: many collisions, each must still decode to its own key.
  const keys = Array.from({ length: 5000 }, (_, i) => `k${i.toString(36)}`);
  for (let round = 0; round < 2; round++) {
    const out = roundTrip(Object.fromEntries(keys.map((k, i) => [k, i]))) as Record<string, number>;
    assertEquals(Object.keys(out).join(), keys.join(), `keys, round ${round}`);
    keys.forEach((k, i) => assert(out[k] === i, `value of ${k}`));
  }
  for (let n = 0; n <= 30; n++) assertRoundTrip("ab\u00ff".repeat(n).slice(0, n), `Latin-1 of length ${n}`);
});

test("an encoder's scratch grows for a large value and is replaced by a small one afterwards", () => {
  const encoder = new Encoder({ initialCapacity: 16 });
  const big = new Uint8Array(3 << 20).fill(1);
  assertSame(roundTrip(big, encoder), big, "3 MiB");
  assertSame(roundTrip({ small: [1, "x"] }, encoder), { small: [1, "x"] }, "small after large");
  assertSame(roundTrip("y".repeat(300), encoder), "y".repeat(300), "growing again from the small scratch");
});

test("dates keep their time value, invalid dates stay invalid", () => {
  assertRoundTrip(new Date(0), "epoch");
  assertRoundTrip(new Date(8.64e15), "the last date");
  const invalid = roundTrip(new Date(NaN)) as Date;
  assert(invalid instanceof Date && Number.isNaN(invalid.getTime()), "invalid date");
});

test("objects keep own enumerable string keys in order, a null prototype, and '__proto__' as a key", () => {
  assertRoundTrip({ b: 1, a: 2, 10: 3, 2: 4 }, "key order");
  const nullProto = Object.assign(Object.create(null), { x: 1 });
  assertRoundTrip(nullProto, "null prototype");
  const withProtoKey = JSON.parse('{"__proto__": {"polluted": true}, "y": 2}');
  const out = assertRoundTrip(withProtoKey, "'__proto__' as an own key") as Record<string, unknown>;
  assert(Object.getPrototypeOf(out) === Object.prototype, "prototype untouched");
  assert(({} as Record<string, unknown>).polluted === undefined, "Object.prototype untouched");
  const hidden = Object.defineProperty({ shown: 1 }, "hidden", { value: 2, enumerable: false });
  assertSame(roundTrip(Object.assign(hidden, { [Symbol("s")]: 3 })), { shown: 1 }, "non-enumerable and symbol keys");
});

test("objects of 127, 128, 16383 and 16384 keys round-trip (the count's varint grows after the entries)", () => {
  for (const n of [127, 128, 16383, 16384]) {
    assertRoundTrip(Object.fromEntries(Array.from({ length: n }, (_, i) => [`key${i}`, i % 3 ? i : "v"])), `${n}`);
  }
});

test("an enumerable property added to Object.prototype is not sent as an own key", () => {
  const proto = Object.prototype as Record<string, unknown>;
  proto.polluted = "inherited";
  try {
    const out = roundTrip({ own: 1 }) as Record<string, unknown>;
    assertEquals(Object.keys(out), ["own"], "own keys only");
  } finally {
    delete proto.polluted;
  }
});

test("a getter is read once and arrives as a plain data property", () => {
  let reads = 0;
  const value = {
    get x() {
      reads++;
      return 5;
    },
  };
  const out = roundTrip(value) as { x: number };
  assertEquals(reads, 1, "one read");
  assertEquals(Object.getOwnPropertyDescriptor(out, "x")?.value, 5, "a data property");
});

test("array holes arrive as undefined; a shared (non-cyclic) reference arrives as two copies", () => {
  // deno-lint-ignore no-sparse-arrays
  const sparse = [1, , 3];
  const out = roundTrip(sparse) as unknown[];
  assertEquals(out.length, 3, "length kept");
  assert(1 in out && out[1] === undefined, "the hole is an undefined element");
  const shared = { x: 1 };
  const twice = roundTrip([shared, shared]) as unknown[];
  assertSame(twice, [shared, shared], "both copies equal");
  assert(twice[0] !== twice[1], "identity not kept");
});

test("Map and Set keep order, object keys, and nested containers", () => {
  assertRoundTrip(new Map<unknown, unknown>([[1, "a"], ["1", "b"], [{ k: 1 }, [2]], [NaN, new Set([1, "1"])]]), "map");
  assertRoundTrip(new Set<unknown>([3, 1, 2, { a: [] }, new Map()]), "set");
});

test("an error's own data fields cross (those that cannot are left out, getters never run), and errorClasses restores its class", () => {
  class QuotaError extends Error {
    limit = 3;
    detail = { user: "ada", tags: ["a"] };
    callback = () => 1; // cannot cross: left out, the error still arrives
  }
  let getterRan = false;
  const error = new QuotaError("over quota");
  Object.defineProperty(error, "lazy", { get: () => (getterRan = true), enumerable: true });
  Object.defineProperty(error, "__proto__", { value: "plain", enumerable: true, writable: true, configurable: true });
  const plain = roundTrip(error) as Error & Record<string, unknown>;
  assert(plain instanceof Error && !(plain instanceof QuotaError), "without classes: its standard kind");
  assertEquals(plain.name, "Error", "its name (not set by the class)");
  assertEquals([plain.limit, plain.detail], [3, { user: "ada", tags: ["a"] }], "its fields");
  assert(!("callback" in plain) && !("lazy" in plain) && !getterRan, "a function and a getter are left out");
  assert(Object.getPrototypeOf(plain) === Error.prototype, "a '__proto__' field does not change the prototype");
  assertEquals(Object.getOwnPropertyDescriptor(plain, "__proto__")?.value, "plain", "it stays an own field");
  const encoder = new Encoder();
  encoder.encode(error);
  const classes = new Map([["QuotaError", QuotaError]]);
  const typed = decode(encoder.bytes, 0, encoder.length, undefined, classes) as QuotaError;
  assert(typed instanceof QuotaError && typed instanceof Error, "decoded as the registered class (by class name)");
  assertEquals([typed.message, typed.limit], ["over quota", 3]);
  // By `name` when the class name was not sent (a plain Error named like the class).
  encoder.encode(Object.assign(new Error("named"), { name: "QuotaError" }));
  assert(decode(encoder.bytes, 0, encoder.length, undefined, classes) instanceof QuotaError, "matched by name");
  // Nested errors too: a cause of the registered class.
  encoder.encode(new TypeError("outer", { cause: new QuotaError("inner") }));
  const outer = decode(encoder.bytes, 0, encoder.length, undefined, classes) as TypeError;
  assert(outer instanceof TypeError && outer.cause instanceof QuotaError, "a cause is restored too");
});

test("errors keep kind, name, message, stack, cause, code and AggregateError's errors", () => {
  const cause = new RangeError("inner", { cause: { detail: 1 } });
  const outer = Object.assign(new TypeError("outer", { cause }), { code: "E_OUTER" });
  const out = assertRoundTrip(outer, "TypeError with cause") as TypeError;
  assert(out instanceof TypeError && out.cause instanceof RangeError, "constructors restored");
  const aggregate = new AggregateError([new Error("a"), new URIError("b")], "several", { cause: 7 });
  assert(roundTrip(aggregate) instanceof AggregateError, "AggregateError");
  assertRoundTrip(aggregate, "AggregateError's errors");
  class HttpError extends RangeError {
    override name = "HttpError";
    status = 404;
  }
  const http = roundTrip(new HttpError("not found")) as Error & { status?: number };
  assert(http instanceof RangeError && http.name === "HttpError", "a subclass arrives as its standard base");
  assertEquals(http.status, 404, "its own fields arrive");
  const custom = Object.assign(new Error("x"), { name: "CustomError", code: 42 });
  assertRoundTrip(custom, "custom name, numeric code");
  const noCode = Object.assign(new Error("x"), { code: { not: "sent" } });
  assert(!("code" in (roundTrip(noCode) as Error)), "a code that is not a string or number is dropped");
  const stackless = new Error("no stack");
  Object.defineProperty(stackless, "stack", { value: undefined });
  assertEquals((roundTrip(stackless) as Error).stack, undefined, "no stack stays no stack");
  assert(Object.hasOwn(roundTrip(new Error("x", { cause: undefined })) as Error, "cause"), "undefined cause kept");
});

test("typed arrays, DataView and ArrayBuffer on ordinary memory are copied, as a view of exactly their bytes", () => {
  const buffer = new ArrayBuffer(64);
  new Uint8Array(buffer).forEach((_, i, a) => (a[i] = i));
  const view = new Float64Array(buffer, 16, 2);
  const out = assertRoundTrip(view, "offset view") as Float64Array;
  assert(out.buffer !== buffer && out.byteOffset === 0 && out.buffer.byteLength === 16, "a fresh, exact buffer");
  assertRoundTrip(new DataView(buffer, 3, 5), "DataView");
  assertRoundTrip(buffer, "ArrayBuffer");
  assertRoundTrip(new BigInt64Array([-1n, 2n ** 63n - 1n]), "BigInt64Array");
  assertRoundTrip(new Uint8Array(1 << 20).fill(7), "1 MiB, beyond the retained scratch");
  if (Float16ArrayConstructor !== undefined) {
    assertRoundTrip(Float16ArrayConstructor.from([1.5, -0, NaN, Infinity]), "Float16Array");
  }
  const nodeBuffer = (globalThis as { Buffer?: { from(s: string): Uint8Array } }).Buffer;
  if (nodeBuffer !== undefined) {
    const out = roundTrip(nodeBuffer.from("abc")) as Uint8Array;
    assert(Object.getPrototypeOf(out) === Uint8Array.prototype && out[2] === 99, "a Buffer arrives as a Uint8Array");
  }
});

test("a SharedArrayBuffer and views on one travel by reference: same buffer, offset and length, shared writes", () => {
  const registry: SharedArrayBuffer[] = [];
  const encoder = new Encoder({
    shareBuffer: (sab) => {
      const id = registry.indexOf(sab);
      return id >= 0 ? id : registry.push(sab) - 1;
    },
  });
  const sab = new SharedArrayBuffer(64);
  const other = new SharedArrayBuffer(8);
  const value = {
    sab,
    ints: new Int32Array(sab, 8, 4),
    view: new DataView(sab, 3, 10),
    floats: new Float64Array(other),
  };
  const out = roundTrip(value, encoder, (id) => registry[id]) as typeof value;
  assertEquals(registry.length, 2, "two buffers registered");
  assert(out.sab === sab && out.ints.buffer === sab && out.view.buffer === sab, "the same buffer object");
  assert(out.floats.buffer === other, "the other buffer");
  assertEquals([out.ints.byteOffset, out.ints.length], [8, 4], "Int32Array offset and length");
  assertEquals([out.view.byteOffset, out.view.byteLength], [3, 10], "DataView offset and length");
  out.ints[1] = 42;
  assertEquals(value.ints[1], 42, "a write through the decoded view is seen through the original");
  out.view.setUint8(0, 9);
  assertEquals(new Uint8Array(sab)[3], 9, "and through the DataView");

  const growable = new SharedArrayBuffer(8, { maxByteLength: 64 });
  const tracking = roundTrip(new Uint8Array(growable), encoder, (id) => registry[id]) as Uint8Array;
  assert(tracking.buffer === growable && tracking.length === 8, "a length-tracking view arrives at its length");

  assertThrows(() => roundTrip(sab, encoder), TypeError, "no 'resolveBuffer' was given");
  assertThrows(() => roundTrip(sab, encoder, () => new ArrayBuffer(8) as never), TypeError, "must return a Shared");
  const small = new Int32Array(sab, 32, 8);
  assertThrows(() => roundTrip(small, encoder, () => new SharedArrayBuffer(16)), Error, "does not fit shared buffer");
});

test("shared memory without a 'shareBuffer' option, or with a bad id, is rejected", () => {
  const sab = new SharedArrayBuffer(16);
  assertThrows(() => new Encoder().encode({ memory: sab }, "args"), TypeError, "'args.memory' is shared memory");
  assertThrows(() => new Encoder().encode([new Int32Array(sab)], "args"), TypeError, "'args[0]' is shared memory");
  assertThrows(() => new Encoder({ shareBuffer: () => -1 }).encode(sab), RangeError, "returned -1 for 'value'");
  assertThrows(() => new Encoder({ shareBuffer: () => 1.5 }).encode(sab), RangeError, "an id must be an integer");
});

// ---------------------------------------------------------------------------------------------------------
// Rejections: each names the kind and the path.

class Point {
  x = 1;
}

test("every unsupported kind is rejected with a TypeError naming its type and path", () => {
  const encoder = new Encoder();
  const cases: [unknown, string][] = [
    [[1, { user: { save() {} } }], "'args[1].user.save' is a function: only data can cross threads"],
    [[Symbol("s")], "'args[0]' is a symbol: only data can cross threads"],
    [[new Point()], "'args[0]' is an instance of class Point: only primitives"],
    [[/re/], "'args[0]' is a RegExp"],
    [[new WeakMap()], "'args[0]' is a WeakMap"],
    [[new WeakSet()], "'args[0]' is a WeakSet"],
    [[new WeakRef({})], "'args[0]' is a WeakRef"],
    [[Promise.resolve(1)], "'args[0]' is a Promise"],
    [[Object(1)], "'args[0]' is a boxed number (a Number object)"],
    [[Object("s")], "'args[0]' is a boxed string"],
    [[Object.create({ inherited: 1 })], "'args[0]' is an object whose prototype is neither Object.prototype nor null"],
    [[new (class Registry extends Map {})()], "'args[0]' is an instance of class Registry"],
    [[{ "a b": { [`c`]: () => 1 } }], `'args[0]["a b"].c' is a function`],
    [[new Map([["k", () => 1]])], `'args[0].get("k")' is a function`],
    [[new Map([[Symbol("key"), 1]])], "'args[0].keys()[0]' is a symbol"],
    [[new Map([[{}, () => 1]])], "'args[0].values()[0]' is a function"],
    [[new Set([1, Math.max])], "'args[0].values()[1]' is a function"],
    [[new Error("x", { cause: () => 1 })], "'args[0].cause' is a function"],
    [[new AggregateError([new Error("a"), Symbol()])], "'args[0].errors[1]' is a symbol"],
    [[new Proxy(() => 1, {})], "'args[0]' is a function"],
    [[Object.create(Array.prototype)], "'args[0]' is an object with Array.prototype as its prototype but not an array"],
    [[[[[new Point()]]]], "'args[0][0][0][0]' is an instance of class Point"],
  ];
  for (const [value, message] of cases) {
    const error = assertThrows(() => encoder.encode(value, "args"), TypeError, message);
    assert(error.message.startsWith("Cannot encode value as 'args"), `pattern: ${error.message}`);
  }
  assertThrows(() => encoder.encode(() => 1, "result"), TypeError, "'result' is a function");
  assertThrows(() => encoder.encode(Symbol.iterator), TypeError, "'value' is a symbol");
});

test("a detached ArrayBuffer, or a view on one, is rejected", () => {
  const buffer = new ArrayBuffer(8);
  const view = new Uint8Array(buffer);
  buffer.transfer();
  assertThrows(() => new Encoder().encode({ buffer }), TypeError, "'value.buffer' is a detached ArrayBuffer");
  assertThrows(() => new Encoder().encode([view]), TypeError, "'value[0]' is a Uint8Array on a detached ArrayBuffer");
});

test("a cycle is rejected with a TypeError naming where it closes and what it refers back to", () => {
  const a: Record<string, unknown> = { b: { list: [1] } };
  (a.b as Record<string, unknown[]>).list.push(a);
  assertThrows(() => new Encoder().encode([a], "args"), TypeError, "'args[0].b.list[1]' refers back to 'args[0]'");
  const self: unknown[] = [];
  self.push(self);
  assertThrows(() => new Encoder().encode(self), TypeError, "'value[0]' refers back to 'value': cyclic data");
  const map = new Map<string, unknown>();
  map.set("me", map);
  assertThrows(() => new Encoder().encode(map), TypeError, `'value.get("me")' refers back to 'value'`);
  const error = new Error("loop");
  error.cause = error;
  assertThrows(() => new Encoder().encode(error), TypeError, "'value.cause' refers back to 'value'");
  // Deeper than the linear scan: the cycle closes at depth 40 back to depth 35.
  const root: Record<string, unknown> = {};
  let node = root;
  let target: Record<string, unknown> = root;
  for (let d = 1; d <= 40; d++) {
    const next: Record<string, unknown> = {};
    node.n = next;
    node = next;
    if (d === 35) target = next;
  }
  node.back = target;
  const error40 = assertThrows(() => new Encoder().encode(root), TypeError, "cyclic data cannot cross threads");
  assert(error40.message.includes(`'value${".n".repeat(40)}.back' refers back to 'value${".n".repeat(35)}'`), "deep");
});

test("a value reached again beside (not inside) itself, deep or shallow, is not a cycle", () => {
  let chain: Record<string, unknown> = { leaf: true };
  for (let d = 0; d < 60; d++) chain = { n: chain };
  const shared = { chain };
  assertRoundTrip([shared, shared, { again: shared }], "shared deep chain");
});

test(`nesting up to MAX_DEPTH (${MAX_DEPTH}) round-trips; one level more is a RangeError`, () => {
  let ok: unknown = 1;
  for (let d = 0; d < MAX_DEPTH; d++) ok = [ok];
  assertRoundTrip(ok, "MAX_DEPTH levels");
  assertThrows(() => new Encoder().encode([ok], "args"), RangeError, "is nested deeper than 1000 levels");
});

test("an encoder stays usable after a rejection, and refuses to be re-entered", () => {
  const encoder = new Encoder();
  assertThrows(() => encoder.encode({ f() {} }), TypeError, "'value.f' is a function");
  assertEquals(encoder.length, 0, "no encoding after a failure");
  assertRoundTrip({ a: 1 }, "fresh encoder");
  assertSame(roundTrip({ a: [1, "x"] }, encoder), { a: [1, "x"] }, "same encoder after a failure");
  const sneaky = {
    get x() {
      return encoder.encode(1);
    },
  };
  assertThrows(() => encoder.encode(sneaky), Error, "already encoding");
  assertSame(roundTrip(2, encoder), 2, "still usable");
});

test("bad arguments are a TypeError or RangeError in the house pattern", () => {
  assertThrows(() => new Encoder({ shareBuffer: 1 as never }), TypeError, "'shareBuffer' must be a function");
  assertThrows(() => new Encoder({ initialCapacity: 1 }), RangeError, "'initialCapacity' must be an integer");
  const bytes = new Uint8Array([0x81]);
  assertThrows(() => decode([0x81] as never, 0, 1), TypeError, "'bytes' must be a Uint8Array");
  assertThrows(() => decode(bytes, 2, 0), RangeError, "'offset' must be an integer from 0 to 1");
  assertThrows(() => decode(bytes, 0, 2), RangeError, "'length' must be an integer from 0 to 1");
  assertThrows(() => decode(bytes, 0, 1, 5 as never), TypeError, "'resolveBuffer' must be a function");
  const encoder = new Encoder();
  encoder.encode("four");
  assertThrows(() => encoder.copyTo(new Uint8Array(8), 5), RangeError, "must leave room for 6 bytes");
});

test("corrupt bytes throw a clear Error: truncation, trailing bytes, unknown tags, huge counts, deep nesting", () => {
  const encoder = new Encoder();
  const n = encoder.encode({ a: [1, 2.5, "x", 2n ** 70n], m: new Map([[1, new Date(0)]]), e: new TypeError("t") });
  const bytes = encoder.bytes.slice();
  for (let k = 0; k < n; k++) assertThrows(() => decode(bytes, 0, k), Error, "corrupt or truncated");
  const longer = new Uint8Array(n + 1);
  longer.set(bytes);
  assertThrows(() => decode(longer, 0, n + 1), Error, `the value ends at byte ${n} but the length is ${n + 1}`);
  assertThrows(() => decode(new Uint8Array([0x7f]), 0, 1), Error, "byte 0 holds the unknown tag 0x7f");
  assertThrows(() => decode(new Uint8Array([]), 0, 0), Error, "byte 0 needs 1 more but only 0 remain");
  // An array claiming 2^32 - 1 elements in 6 bytes: refused before allocating anything.
  assertThrows(() => decode(new Uint8Array([0x09, 0xff, 0xff, 0xff, 0xff, 0x0f]), 0, 6), Error, "exceeds the bytes");
  assertThrows(() => decode(new Uint8Array([0x09, 0xff, 0xff, 0xff, 0xff, 0xff]), 0, 6), Error, "longer than 5");
  const deep = new Uint8Array(2 * (MAX_DEPTH + 1) + 1).fill(1);
  for (let i = 0; i < deep.length - 1; i += 2) deep[i] = 0x09;
  deep[deep.length - 1] = 0x80;
  assertThrows(() => decode(deep, 0, deep.length), Error, "deeper than 1000 levels");
  assertThrows(() => decode(new Uint8Array([0x11, 99, 0]), 0, 3), Error, "unknown view kind 99");
  assertThrows(() => decode(new Uint8Array([0x11, 5, 3, 1, 2, 3]), 0, 6), Error, "cannot hold elements of 4 bytes");
  assertThrows(() => decode(new Uint8Array([0x08, 0, 1, 0]), 0, 4), Error, "bad sign or length");
  assertThrows(() => decode(new Uint8Array([0x0f, 9]), 0, 2), Error, "unknown error kind 9");
});

test("a run of 256 bytes or more starts at a multiple of 16 from the encoding's start, whatever comes before it", () => {
  // The format's alignment (format.ts ALIGN_FROM): the runtimes copy into and out of shared memory fast only
  // when both ends are aligned alike; 8 was not enough for Bun (docs/benchmarks.md). Deferred runs count:
  // a run after one of odd length is aligned from the encoding's start, not the scratch's.
  fc.assert(
    fc.property(
      fc.string({ maxLength: 40 }),
      fc.integer({ min: 256, max: 1200 }),
      fc.integer({ min: 4, max: 300 }),
      (prefix, n, first) => {
        const marked = (length: number, mark: number) => {
          const bytes = new Uint8Array(length).fill(1);
          bytes.set([mark, 0xfe, mark, 0xfd]);
          return bytes;
        };
        const run = marked(n, 0xab);
        // A deferred encoder (as the pool's): the first run, if long, is left out of the scratch.
        const encoder = new Encoder({ deferFrom: 256 });
        const length = encoder.encodeArgs([prefix, marked(first, 0xcd), run]);
        const bytes = new Uint8Array(length);
        encoder.copyTo(bytes, 0);
        let at = -1;
        for (let i = 0; i + 4 <= length && at < 0; i++) {
          if (bytes[i] === 0xab && bytes[i + 1] === 0xfe && bytes[i + 2] === 0xab && bytes[i + 3] === 0xfd) at = i;
        }
        assert(at >= 0, "the run's bytes were not found in the encoding");
        assertEquals(at % 16, 0, `the run of ${n} bytes starts at byte ${at}`);
        assertEquals(difference(decode(bytes, 0, length), [prefix, marked(first, 0xcd), run]), undefined);
      },
    ),
    { seed: SEED, numRuns: 200 },
  );
});

test("decoding reads only its own range of a larger buffer, from any offset", () => {
  const encoder = new Encoder();
  const big = new Uint8Array(new SharedArrayBuffer(100)).fill(0xff);
  const n = encoder.encode(["a", 1]);
  encoder.copyTo(big, 50);
  assertSame(decode(big, 50, n), ["a", 1], "at offset 50 with garbage around");
  assertSame(decode(big.subarray(50), 0, n), ["a", 1], "through a subarray");
});

test("a value crosses to a worker thread and back through shared memory: MAX_DEPTH nesting, a shared view", async () => {
  const thread = startThread(new URL("./_codec_worker.ts", import.meta.url), "codec-echo");
  try {
    const sab = new SharedArrayBuffer(16);
    const registry = [sab];
    let deep: unknown = "bottom";
    // The root object is depth 0, so MAX_DEPTH - 1 arrays reach the deepest depth allowed.
    for (let d = 0; d < MAX_DEPTH - 1; d++) deep = [deep];
    const value = {
      deep,
      shared: new Int32Array(sab, 4, 2),
      error: new TypeError("typed", { cause: [1n, -0] }),
      text: "\ud800é",
      map: new Map<unknown, unknown>([[1, new Date(0)], ["f", new Float64Array([NaN, -0])]]),
    };
    const payload = new SharedArrayBuffer(1 << 16);
    const encoder = new Encoder({ shareBuffer: (b) => registry.indexOf(b) });
    const length = encoder.encode(value, "args");
    encoder.copyTo(new Uint8Array(payload), 0);
    const reply = await new Promise<CodecEchoReply>((resolve, reject) => {
      thread.onMessage((m) => resolve(m as CodecEchoReply));
      thread.onError(reject);
      thread.post({ payload, buffers: registry, offset: 0, length } satisfies CodecEchoRequest);
    });
    if (!reply.ok) throw new Error(`the worker failed: ${reply.message}`);
    const back = decode(new Uint8Array(payload), reply.offset, reply.length, (id) => registry[id]) as typeof value;
    assertEquals(value.shared[0], 1, "the worker's write through its decoded view is seen here");
    assert(back.shared.buffer === sab && back.shared.byteOffset === 4, "the same buffer, by reference");
    assertSame(back, value, "the value after the trip there and back");
  } finally {
    thread.terminate();
  }
});
