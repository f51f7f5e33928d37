/**
 * The join latch's handshake of who frees a forked task's record (`lib/protocol/latch.ts`), on one thread:
 * the finisher's exchange ({@link setLatch}) against the orphaning compare-exchange ({@link orphanLatch}),
 * in both orders, and what each side is told. Exactly one side frees the record: the finisher when it
 * sees ORPHANED, the orphaning side when it sees SET. The interleavings themselves are model-checked
 * (spec/Lifecycle.tla) and run under the harness (tests/lincheck/sleep_test.ts); these pin the values each
 * call returns, which the pool's suites did not notice when StrykerJS changed them (issue 47).
 */
import { latchIsSet, ORPHANED, orphanLatch, SET, setLatch, UNSET } from "../../lib/protocol/latch.ts";
import { assertEquals, test } from "../_test.ts";

function word(): Int32Array {
  return new Int32Array(new SharedArrayBuffer(4));
}

test("a finisher that comes after the orphaning is told nobody will join: it frees the record", () => {
  const words = word();
  assertEquals(orphanLatch(words, 0), UNSET, "the orphaning finds the task running: the finisher frees");
  assertEquals(setLatch(words, 0), false, "the finisher sees ORPHANED: the record is its to free");
  assertEquals(Atomics.load(words, 0), SET, "the word ends SET");
}, 10_000);

test("an orphaning that comes after the finisher is told the task finished: it frees the record", () => {
  const words = word();
  assertEquals(setLatch(words, 0), true, "no orphaning yet: a joiner will read it, the finisher frees nothing");
  assertEquals(latchIsSet(words, 0), true, "the joiner sees it set");
  assertEquals(orphanLatch(words, 0), SET, "the orphaning finds SET: the record is its to free");
  assertEquals(Atomics.load(words, 0), SET, "and leaves the word SET");
}, 10_000);

test("a second orphaning is told the latch was orphaned already, and changes nothing", () => {
  const words = word();
  assertEquals(orphanLatch(words, 0), UNSET, "the first orphans it");
  assertEquals(Atomics.load(words, 0), ORPHANED, "the word is ORPHANED");
  assertEquals(orphanLatch(words, 0), ORPHANED, "the second finds ORPHANED");
  assertEquals(Atomics.load(words, 0), ORPHANED, "still ORPHANED");
}, 10_000);
