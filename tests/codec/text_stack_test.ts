/**
 * A long string encoded at the stack's limit (a fork's argument in a task that recursed deep): the
 * overflow surfaces as what it is, a RangeError, never as another error from inside the runtime, and the
 * encoder goes on as before. On Node the fast writer (lib/codec/text.ts) tests the string with a regular
 * expression, which V8 compiles on its first runs (and again once its GC flushed the code): a compile at
 * the limit throws a SyntaxError ("Invalid regular expression: ...: Stack overflow"). Its own file, so
 * that on Node (a process a file) the expression is first run here, at the limit.
 */
import { decode, Encoder } from "../../lib/codec/codec.ts";
import { writeOneByte } from "../../lib/codec/text.ts";
import { acrossStackLimit } from "../_stack_limit.ts";
import { assert, assertEquals, test } from "../_test.ts";

test("a long string encoded at every depth near the stack's limit: a RangeError or its bytes, and the encoder goes on", () => {
  const encoder = new Encoder();
  const text = "a fork's argument, long enough for the fast writer: ".repeat(8);
  const wide = "\u20ac".repeat(200);
  let written = 0;
  // Any error but a RangeError is thrown on by the sweep, and fails the test.
  const overflowed = acrossStackLimit(600, () => {
    encoder.encode([text, wide], "args");
    written++;
  });
  assert(overflowed > 0 && written > 0, `the sweep missed the limit (${overflowed} overflowed, ${written} written)`);
  for (const value of [[text, wide], ["x".repeat(300)], [text]]) {
    const length = encoder.encode(value, "args");
    const bytes = new Uint8Array(length);
    encoder.copyTo(bytes, 0);
    assertEquals(decode(bytes, 0, length), value, "round trip after the sweep");
  }
  const out = new Uint8Array(3 * 200);
  assertEquals([writeOneByte(text, out, 0), writeOneByte(wide, out, 0)], [true, false], "the fast writer after");
});
