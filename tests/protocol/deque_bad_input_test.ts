/** Bad input to the deque throws a RangeError (or TypeError) that names the value and the rule. */
import { Deque, initDeque, Stealer } from "../../lib/protocol/deque.ts";
import { dequeRegionBytes } from "../../lib/protocol/layout.ts";
import { assertThrows, test } from "../_test.ts";

const buffer = new SharedArrayBuffer(8192);

test("a capacity that is not a power of two is a RangeError naming the value", () => {
  assertThrows(() => initDeque({ buffer, byteOffset: 0, capacity: 12 }), RangeError, "power of two: received 12");
  assertThrows(() => new Deque({ buffer, byteOffset: 0, capacity: 12 }), RangeError, "received 12");
  assertThrows(() => new Stealer({ buffer, byteOffset: 0, capacity: 12 }), RangeError, "received 12");
});

test("a capacity that is too small, too large or not an integer is a RangeError naming the value", () => {
  assertThrows(() => initDeque({ buffer, byteOffset: 0, capacity: 1 }), RangeError, "from 2 to 2^28: received 1");
  assertThrows(() => initDeque({ buffer, byteOffset: 0, capacity: 0 }), RangeError, "received 0");
  assertThrows(() => initDeque({ buffer, byteOffset: 0, capacity: -4 }), RangeError, "received -4");
  assertThrows(() => initDeque({ buffer, byteOffset: 0, capacity: 2 ** 29 }), RangeError, "received 536870912");
  assertThrows(() => initDeque({ buffer, byteOffset: 0, capacity: 2.5 }), RangeError, "integer: received 2.5");
  assertThrows(() => initDeque({ buffer, byteOffset: 0, capacity: NaN }), RangeError, "integer: received NaN");
});

test("a misaligned or negative byteOffset is a RangeError naming the value and the 64-byte rule", () => {
  assertThrows(() => initDeque({ buffer, byteOffset: 4, capacity: 4 }), RangeError, "multiple of 64: received 4");
  assertThrows(() => initDeque({ buffer, byteOffset: -64, capacity: 4 }), RangeError, "received -64");
  assertThrows(() => initDeque({ buffer, byteOffset: 0.5, capacity: 4 }), RangeError, "received 0.5");
});

test("a buffer too small for the region is a RangeError giving the bytes needed and the byteLength", () => {
  const small = new SharedArrayBuffer(dequeRegionBytes(64) - 4);
  assertThrows(() => initDeque({ buffer: small, byteOffset: 0, capacity: 64 }), RangeError, "too small");
  assertThrows(
    () => new Deque({ buffer, byteOffset: 8192 - 64, capacity: 4 }),
    RangeError,
    `'buffer.byteLength' is 8192`,
  );
});

test("a buffer that is not an ArrayBuffer or SharedArrayBuffer is a TypeError naming what was passed", () => {
  const notABuffer = new Uint8Array(1024) as unknown as SharedArrayBuffer;
  assertThrows(() => initDeque({ buffer: notABuffer, byteOffset: 0, capacity: 4 }), TypeError, "received Uint8Array");
});

test("pushing a value that is not a non-negative int32 is a RangeError, and nothing is pushed", () => {
  const region = { buffer, byteOffset: 0, capacity: 4 };
  initDeque(region);
  const owner = new Deque(region);
  for (const bad of [-1, 2 ** 31, 1.5, NaN]) {
    assertThrows(() => owner.push(bad), RangeError, `received ${bad}`);
  }
  assertThrows(() => initDeque(region, 2 ** 31), RangeError, "'initialIndex' must be an int32");
  if (owner.length !== 0) throw new Error("a rejected push left something in the deque");
});

test("stealing half into the source deque itself is a RangeError", () => {
  const region = { buffer, byteOffset: 0, capacity: 4 };
  initDeque(region);
  assertThrows(() => new Stealer(region).stealHalfInto(new Deque(region)), RangeError, "another deque");
});
