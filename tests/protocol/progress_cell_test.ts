/**
 * The progress cell's steps (lib/progress/cell.ts), one thread playing every role: a write raises a notice
 * only when the cell held no unread value of its task; a take empties the cell and returns the latest
 * value; a take that races a writer's lock throws its copy away; a cell left mid-write is skipped by the
 * reader and dropped by a second writer, and `reset` frees it.
 */
import { CellPhase, CellWords, Filled, phaseOf, ProgressCells, Taken } from "../../lib/progress/cell.ts";
import { PROGRESS_CELL_WORDS } from "../../lib/protocol/layout.ts";
import { installSharedMemory, mem } from "../../lib/protocol/atomics.ts";
import { assertEquals, test } from "../_test.ts";

function cells(records = 4): ProgressCells {
  return new ProgressCells(new Int32Array(new SharedArrayBuffer(records * PROGRESS_CELL_WORDS * 4)));
}

function writeNumber(c: ProgressCells, index: number, handle: number, value: number): number {
  c.scratchF64[0] = value;
  return c.write(index, handle, -1);
}

test("a write raises a notice from empty, coalesces over its own unread value, and notices over a stale one", () => {
  const c = cells();
  assertEquals(writeNumber(c, 1, 10, 0.1), Filled.NOTICE, "empty cell");
  assertEquals(writeNumber(c, 1, 10, 0.2), Filled.REPLACED, "its own unread value: no second notice");
  assertEquals(writeNumber(c, 1, 11, 0.3), Filled.NOTICE, "another task's unread value: a notice of its own");
  const reader = new ProgressCells(c.words);
  assertEquals(reader.take(1), 11, "the latest writer's handle");
  assertEquals(reader.scratchF64[0], 0.3, "the latest value");
  assertEquals(reader.take(1), Taken.EMPTY, "a take empties the cell");
  assertEquals(writeNumber(c, 1, 11, 0.4), Filled.NOTICE, "empty again: a notice");
});

test("encoded values round-trip whole words, and other records' cells are untouched", () => {
  const c = cells();
  const bytes = new TextEncoder().encode("frame 12/40 (a string)");
  c.scratchBytes.set(bytes);
  assertEquals(c.write(2, 7, bytes.length), Filled.NOTICE, "written");
  const reader = new ProgressCells(c.words);
  assertEquals(reader.take(1), Taken.EMPTY, "record 1 untouched");
  assertEquals(reader.take(2), 7, "record 2's");
  assertEquals(new TextDecoder().decode(reader.scratchBytes.subarray(0, reader.length)), "frame 12/40 (a string)");
});

test("a take whose copy races a writer's lock throws it away and reads the newer value", () => {
  const c = cells();
  writeNumber(c, 0, 5, 1);
  const reader = new ProgressCells(c.words);
  // A writer locks and publishes between the reader's load of the state and its emptying compare-exchange:
  // the compare-exchange fails (the sequence moved on) and the reader reads again.
  let raced = false;
  const restore = installSharedMemory({
    ...mem,
    compareExchange: (view, index, expected, replacement) => {
      if (!raced && view === c.words && index === CellWords.state && phaseOf(replacement) === CellPhase.EMPTY) {
        raced = true;
        restore();
        writeNumber(c, 0, 5, 2);
        return Atomics.compareExchange(view, index, expected, replacement);
      }
      return Atomics.compareExchange(view, index, expected, replacement);
    },
  });
  try {
    assertEquals(reader.take(0), 5, "the task's");
  } finally {
    if (!raced) restore();
  }
  assertEquals(raced, true, "the race happened");
  assertEquals(reader.scratchF64[0], 2, "the newer value, not the torn copy of the older");
  assertEquals(reader.take(0), Taken.EMPTY, "and the cell is empty");
});

test("a cell left mid-write (its writer died): the reader skips it, a writer drops its report, reset frees it", () => {
  const c = cells();
  Atomics.store(c.words, CellWords.state, (3 << 2) | CellPhase.WRITING);
  assertEquals(new ProgressCells(c.words).take(0), Taken.BUSY, "the reader does not wait");
  assertEquals(writeNumber(c, 0, 9, 1), Filled.DROPPED, "a writer gives up after its bounded spin");
  c.reset(0);
  assertEquals(phaseOf(Atomics.load(c.words, CellWords.state)), CellPhase.EMPTY, "reset empties it");
  assertEquals(writeNumber(c, 0, 9, 1), Filled.NOTICE, "and the next task's report goes in");
});
