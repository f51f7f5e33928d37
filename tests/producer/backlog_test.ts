/**
 * Unit tests of the submission backlog (lib/producer/backlog.ts) on the shipped module, each named for the
 * property it pins: the ring's size check, what an empty backlog answers, where a pushed entry's bytes go,
 * and when the buffer and the ring are kept or given back. The model check over generated plans is
 * tests/pool/backlog_test.ts; these pin the edges a generated plan reaches rarely (StrykerJS's survivors,
 * issue 47).
 */
import { Backlog } from "../../lib/producer/backlog.ts";
import { Encoder } from "../../lib/codec/codec.ts";
import type { Entry } from "../../lib/producer/ledger.ts";
import { assert, test } from "../_test.ts";

/** An entry as the ledger makes it (only the fields the backlog reads and writes matter). */
function entryOf(seq: number): Entry {
  return {
    seq,
    task: "t",
    taskId: 0,
    handle: -1,
    resolve: undefined,
    reject: undefined,
    bytesAt: 0,
    bytesLength: 0,
    moved: undefined,
    settled: false,
    control: undefined,
    onProgress: undefined,
    submittedAt: 0,
    level: 1,
  };
}

/** Whether `make` throws a RangeError. */
function throwsRange(make: () => unknown): boolean {
  try {
    make();
  } catch (error) {
    return error instanceof RangeError;
  }
  return false;
}

test("backlog: the ring's first size must be a power of two from 1 to 2^30", () => {
  // (Not 2^31 nor 2^30: V8 cannot fill an array that long, and a process that tries runs out of memory.)
  for (const bad of [0, -1, 3, 6, 1.5, NaN, 2 ** 32, 2 ** 30 + 2 ** 29]) {
    assert(throwsRange(() => new Backlog(bad)), `new Backlog(${bad}) did not throw a RangeError`);
  }
  for (const good of [1, 2, 4, 1024, 2 ** 20]) {
    const backlog = new Backlog(good);
    assert(backlog.slots === good && backlog.length === 0, `new Backlog(${good}) has ${backlog.slots} slots`);
  }
  assert(new Backlog().slots === 1024, "the default ring is not 1024 slots");
});

test("backlog: an empty backlog has no first entry, waits for none and holds none", () => {
  const backlog = new Backlog(4);
  assert(backlog.first() === undefined && backlog.length === 0, "a new backlog has a first entry");
  assert([...backlog.waiting()].length === 0 && backlog.held === 0, "a new backlog holds entries");
  assert(!backlog.trimmable, "a new backlog is trimmable");
});

test("backlog: a bad ring size is named in the error, with the value received", () => {
  let message = "";
  try {
    new Backlog(3);
  } catch (error) {
    message = (error as Error).message;
  }
  assert(
    message ===
      "Cannot create a backlog as 'initialSlots' must be a power of two from 1 to 2^30: received 3",
    `the error says: ${message}`,
  );
});

/** Encodes into `encoder` a byte array whose encoding is exactly `total` bytes long. */
function encodeExactly(encoder: Encoder, total: number): void {
  for (let payload = total; payload >= 0 && payload > total - 64; payload--) {
    encoder.encode(new Uint8Array(payload));
    if (encoder.length === total) return;
  }
  throw new Error(`no byte array encodes to ${total} bytes`);
}

const KIB = 1024;

test("backlog: entries' bytes go back to back from position 0, and an emptied backlog starts at 0 again", () => {
  const backlog = new Backlog(4);
  const encoder = new Encoder();
  const entries = [entryOf(0), entryOf(1), entryOf(2)];
  for (const [i, entry] of entries.entries()) {
    encodeExactly(encoder, 100 + i);
    backlog.push(entry, encoder);
  }
  assert(entries[0].bytesAt === 0 && entries[0].bytesLength === 100, "the first entry's bytes are not at 0");
  assert(entries[1].bytesAt === 100 && entries[2].bytesAt === 201, "the entries' bytes are not back to back");
  assert(backlog.offsetOf(entries[2]) === 201, "a fresh buffer's offsets are not the positions");
  while (backlog.first() !== undefined) backlog.shift();
  const next = entryOf(3);
  encodeExactly(encoder, 50);
  backlog.push(next, encoder);
  assert(next.bytesAt === 0 && backlog.offsetOf(next) === 0, `emptied, the next entry's bytes are at ${next.bytesAt}`);
});

test("backlog: waiting() yields exactly the waiting entries, oldest first, across the ring's wrap", () => {
  const backlog = new Backlog(4);
  const encoder = new Encoder();
  encoder.encode(1);
  const entries = Array.from({ length: 6 }, (_, i) => entryOf(i));
  for (const entry of entries.slice(0, 3)) backlog.push(entry, encoder);
  backlog.shift();
  backlog.shift();
  for (const entry of entries.slice(3)) backlog.push(entry, encoder); // wraps: slots 3, 0, 1
  const waiting = [...backlog.waiting()];
  assert(waiting.length === 4 && backlog.length === 4, `${waiting.length} entries yielded, 4 wait`);
  for (let i = 0; i < 4; i++) assert(waiting[i] === entries[i + 2], `entry ${i} is not the ${i + 2}nd pushed`);
  assert(backlog.first() === entries[2] && backlog.slots === 4, "the wrapped ring grew or lost its head");
});

test("backlog: clear() forgets every waiting entry and lets go of their slots", () => {
  const backlog = new Backlog(4);
  const encoder = new Encoder();
  encoder.encode("x");
  for (let i = 0; i < 3; i++) backlog.push(entryOf(i), encoder);
  backlog.shift(); // head at slot 1: the clear must walk from it
  backlog.clear();
  assert(backlog.length === 0 && backlog.first() === undefined, "cleared, entries still wait");
  assert(backlog.held === 0, `cleared, ${backlog.held} slots still hold an entry`);
  const next = entryOf(9);
  backlog.push(next, encoder);
  assert(next.bytesAt === 0 && backlog.first() === next, "cleared, the backlog did not start over");
});

test("backlog: a push that fills the buffer exactly neither grows nor moves it", () => {
  const backlog = new Backlog(4);
  const encoder = new Encoder();
  const first = backlog.bytes;
  assert(first.length === 64 * KIB, `the first buffer has ${first.length} bytes`);
  encodeExactly(encoder, 64 * KIB);
  const entry = entryOf(0);
  backlog.push(entry, encoder);
  assert(backlog.bytes === first && backlog.offsetOf(entry) === 0, "a push that fits exactly replaced the buffer");
});

test("backlog: the buffer doubles to the first size that fits, no further", () => {
  const backlog = new Backlog(4);
  const encoder = new Encoder();
  encodeExactly(encoder, 64 * KIB);
  backlog.push(entryOf(0), encoder);
  backlog.push(entryOf(1), encoder); // 128 KiB live: exactly twice the first buffer
  assert(backlog.bytes.length === 128 * KIB, `128 KiB of bytes grew the buffer to ${backlog.bytes.length}`);
  encodeExactly(encoder, 128 * KIB);
  backlog.push(entryOf(2), encoder); // 256 KiB live: one doubling
  assert(backlog.bytes.length === 256 * KIB, `256 KiB of bytes grew the buffer to ${backlog.bytes.length}`);
  encodeExactly(encoder, 512 * KIB);
  backlog.push(entryOf(3), encoder); // 768 KiB live: two doublings, to 1 MiB
  assert(backlog.bytes.length === 1024 * KIB, `768 KiB of bytes grew the buffer to ${backlog.bytes.length}`);
});

test("backlog: the bytes of entries that left are reused: a push compacts the live bytes rather than grow", () => {
  const backlog = new Backlog(4);
  const encoder = new Encoder();
  const first = backlog.bytes;
  encodeExactly(encoder, 40 * KIB);
  backlog.push(entryOf(0), encoder);
  encodeExactly(encoder, KIB);
  const kept = entryOf(1);
  backlog.push(kept, encoder);
  backlog.shift(); // 1 KiB live, at 40 KiB
  encodeExactly(encoder, 30 * KIB);
  const next = entryOf(2);
  backlog.push(next, encoder); // 41 + 30 KiB do not fit; 1 + 30 KiB fit in half: compact
  assert(backlog.bytes === first, "a push that fits once compacted grew the buffer");
  assert(backlog.offsetOf(kept) === 0 && backlog.offsetOf(next) === KIB, "the live bytes were not moved to the front");
  assert(kept.bytesAt === 40 * KIB && next.bytesAt === 41 * KIB, "compaction changed an entry's position");
  // The buffer now starts at position 40 KiB, 31 KiB used: 33 KiB more fill it exactly, in place.
  encodeExactly(encoder, 33 * KIB);
  const last = entryOf(3);
  backlog.push(last, encoder);
  assert(backlog.bytes === first && backlog.offsetOf(last) === 31 * KIB, "a push that fits after compaction moved");
});

test("backlog: live bytes and the push that fill exactly half the buffer are compacted, not grown", () => {
  const backlog = new Backlog(4);
  const encoder = new Encoder();
  const first = backlog.bytes;
  encodeExactly(encoder, 48 * KIB);
  backlog.push(entryOf(0), encoder);
  encodeExactly(encoder, 16 * KIB);
  const kept = entryOf(1);
  backlog.push(kept, encoder); // the buffer is full
  backlog.shift(); // 16 KiB live
  encodeExactly(encoder, 16 * KIB);
  backlog.push(entryOf(2), encoder); // 16 + 16 KiB: exactly half
  assert(backlog.bytes === first && backlog.offsetOf(kept) === 0, "live + new = half the buffer grew it");
  const backlog2 = new Backlog(4);
  const first2 = backlog2.bytes;
  encodeExactly(encoder, 48 * KIB);
  backlog2.push(entryOf(0), encoder);
  encodeExactly(encoder, 16 * KIB);
  backlog2.push(entryOf(1), encoder);
  backlog2.shift();
  encodeExactly(encoder, 16 * KIB + 1);
  backlog2.push(entryOf(2), encoder); // one byte past half: grow
  assert(backlog2.bytes !== first2 && backlog2.bytes.length === 128 * KIB, "live + new past half compacted");
});

test("backlog: an emptied backlog is trimmable only past 1 MiB of buffer or 2^16 slots of ring", () => {
  // A buffer of exactly 1 MiB (and a ring of 4 slots): kept.
  const backlog = new Backlog(4);
  const encoder = new Encoder();
  encodeExactly(encoder, 1024 * KIB);
  backlog.push(entryOf(0), encoder);
  assert(backlog.bytes.length === 1024 * KIB, `1 MiB of bytes grew the buffer to ${backlog.bytes.length}`);
  backlog.shift();
  assert(!backlog.trimmable, "an emptied backlog with a 1 MiB buffer is trimmable");
  const buffer = backlog.bytes;
  backlog.trim();
  assert(backlog.bytes === buffer, "a trim gave back a 1 MiB buffer");
  // A ring of exactly 2^16 slots: kept.
  const ring = new Backlog(1 << 16);
  ring.push(entryOf(1), encoder);
  ring.shift();
  assert(!ring.trimmable, "an emptied backlog with a 2^16-slot ring is trimmable");
});

test("backlog: a trim gives back only what grew past its bound (the ring or the buffer, each on its own)", () => {
  const encoder = new Encoder();
  // A ring past 2^16 slots, a buffer of exactly 1 MiB: the ring goes, the buffer stays.
  const a = new Backlog(1 << 17);
  encodeExactly(encoder, 1024 * KIB);
  a.push(entryOf(0), encoder);
  a.shift();
  const buffer = a.bytes;
  assert(a.trimmable, "an emptied backlog with a 2^17-slot ring is not trimmable");
  a.trim();
  assert(a.slots === 1 << 17 && a.bytes === buffer, "the trim changed a ring it starts with, or a 1 MiB buffer");
  // A ring of exactly 2^16 slots, a buffer past 1 MiB: the buffer goes, the ring stays.
  const b = new Backlog(1 << 16);
  encodeExactly(encoder, 1024 * KIB + 1);
  b.push(entryOf(1), encoder);
  b.shift();
  assert(b.trimmable, "an emptied backlog with a 2 MiB buffer is not trimmable");
  b.trim();
  assert(b.slots === 1 << 16 && b.bytes.length === 64 * KIB, "the trim kept a 2 MiB buffer or changed the ring");
  // A ring grown (from 2 slots) to exactly 2^16, a buffer past 1 MiB: the buffer goes, the grown ring stays.
  const c = new Backlog(2);
  encoder.encode(1);
  for (let i = 0; i < (1 << 16) - 1; i++) c.push(entryOf(i), encoder);
  encodeExactly(encoder, 1024 * KIB + 1);
  c.push(entryOf(1 << 16), encoder);
  assert(c.slots === 1 << 16, `2^16 entries grew the ring to ${c.slots} slots`);
  while (c.first() !== undefined) c.shift();
  c.trim();
  assert(c.slots === 1 << 16 && c.bytes.length === 64 * KIB, `the trim left a ring of ${c.slots} slots`);
});

test("backlog: a push cut short at the copy (after the ring grew) leaves no entry in the ring", () => {
  const backlog = new Backlog(2);
  const encoder = new Encoder();
  encoder.encode("x");
  const entries = [entryOf(0), entryOf(1)];
  for (const entry of entries) backlog.push(entry, encoder);
  // An encoder whose copy throws, as a stack overflow at that call would: the ring has grown by then.
  const cut = {
    length: 1,
    copyTo(): void {
      throw new RangeError("Maximum call stack size exceeded");
    },
  } as unknown as Encoder;
  let threw = false;
  try {
    backlog.push(entryOf(2), cut);
  } catch {
    threw = true;
  }
  assert(threw && backlog.length === 2 && backlog.slots === 4, "the cut-short push did not throw, or committed");
  assert(backlog.held === 2, `after a cut-short push, ${backlog.held} slots hold an entry, 2 wait`);
  while (backlog.first() !== undefined) backlog.shift();
  assert((backlog.held as number) === 0, `emptied after a cut-short push, ${backlog.held} slots still hold an entry`);
});
