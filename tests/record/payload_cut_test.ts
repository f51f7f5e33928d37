/**
 * A payload step of a live thread cut short by a throw (a stack overflow at a shared access, in a task
 * that recursed deep and then forked or joined) leaves one overflow block in hand, noted in the table's
 * notes (`[BLOCK]`, `[BLOCK_RECORD]`, lib/record/payload.ts); the thread repairs it later (`repairCut`, at the
 * top of its loop). Between the cut and that repair the thread goes on: the task's error is written into
 * its record, another fork's arguments are written. These tests cut `freePayload` and `writePayload` at
 * every shared access, run such a step before the repair, and check that every block is then free exactly
 * once (in the free list once, in no chain). The fault-injection suite saw one block lost so
 * (tests/pool/fault_injection_test.ts, "1 of 4096 overflow blocks not free").
 */
import { Injector, QUEUE_EMPTY } from "../../lib/protocol/injector.ts";
import { PoolMemory } from "../../lib/protocol/memory.ts";
import { TaskTable } from "../../lib/record/task.ts";
import { assert, assertEquals, test } from "../_test.ts";
import { cutRun } from "../protocol/_cut_at.ts";

const HANG = 30_000;
const BLOCKS = 16;
/** Inline bytes, and each block's payload bytes (its first word links the next). */
const INLINE = 64;
const PER_BLOCK = 256 - 4;

/** A pool's memory of one worker, and worker 0's table handle (its notes in the pool's buffer). */
function world(): { memory: PoolMemory; table: TaskTable } {
  const memory = PoolMemory.create({
    workers: 1,
    dequeCapacity: 4,
    taskCapacity: 8,
    inlineBytes: INLINE,
    blockBytes: PER_BLOCK + 4,
    blocks: BLOCKS,
  });
  TaskTable.init(memory);
  return { memory, table: new TaskTable(memory, { owner: 0 }) };
}

/** A payload that takes `blocks` overflow blocks. */
function payloadOf(blocks: number): Uint8Array {
  return new Uint8Array(INLINE + blocks * PER_BLOCK).fill(blocks);
}

/** Frees the given records' payloads, repairs, and asserts every block is in the free list exactly once. */
function assertEveryBlockFreeOnce(memory: PoolMemory, table: TaskTable, indices: number[], what: string): void {
  for (const i of indices) table.freePayload(i);
  table.repairCut();
  assert(!table.cutShort, `${what}: repaired`);
  const queue = new Injector(memory.records.freeBlocks);
  const free: number[] = [];
  for (let v = queue.pop(); v !== QUEUE_EMPTY; v = queue.pop()) free.push(v);
  assertEquals(free.sort((a, b) => a - b), Array.from({ length: BLOCKS }, (_, i) => i), `${what}: the free blocks`);
}

test(
  "payload: a block step cut short at any access, then another payload step before the repair: every block free once",
  () => {
    let cuts = 0;
    for (const step of ["freePayload", "writePayload"] as const) {
      for (let n = 0;; n++) {
        const { memory, table } = world();
        const [a, b, c] = [table.allocate(), table.allocate(), table.allocate()].map((h) => table.indexOf(h));
        assert(table.writePayload(a, payloadOf(4)), "a's chain written");
        const run = cutRun(
          n,
          () => step === "freePayload" ? table.freePayload(a) : table.writePayload(b, payloadOf(4)),
        );
        // The thread goes on before its repair: a payload written (its free, then its blocks' takes).
        assert(table.writePayload(c, payloadOf(3)), "c's chain written after the cut");
        assertEveryBlockFreeOnce(memory, table, [a, b, c], `${step} cut at access ${n}${run.cut ? "" : " (whole)"}`);
        if (!run.cut) break;
        cuts++;
      }
    }
    assert(cuts >= 20, `steps cut short (${cuts})`);
  },
  HANG,
);

test(
  "payload: a block taken again by the handle that freed it last, cut short before its link: back in the free list",
  () => {
    let cuts = 0;
    for (let n = 0;; n++) {
      const { memory, table } = world();
      const [a, b, c] = [table.allocate(), table.allocate(), table.allocate()].map((h) => table.indexOf(h));
      // Every block taken, then freed: the last one this handle pushes (its `published`) is the list's last.
      assert(table.writePayload(a, payloadOf(BLOCKS)), "a takes every block");
      table.freePayload(a);
      // All but that one taken again, so that the next take is that block.
      assert(table.writePayload(b, payloadOf(BLOCKS - 1)), "b takes all but one");
      const run = cutRun(n, () => table.writePayload(c, payloadOf(1)));
      assertEveryBlockFreeOnce(memory, table, [a, b, c], `c's write cut at access ${n}${run.cut ? "" : " (whole)"}`);
      if (!run.cut) break;
      cuts++;
    }
    assert(cuts >= 3, `writes cut short (${cuts})`);
  },
  HANG,
);
