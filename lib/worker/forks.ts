/**
 * What a worker keeps, outside the task table, of the forks it made: which are not joined yet, the
 * arguments of those it may pop back, and the payloads of finished ones copied out to free their blocks.
 *
 * What it owns (all thread-private, by record index or handle):
 * - `outstanding`: handles of the tasks we forked and have not joined yet, oldest first. While we wait (for
 *   a latch, or for blocks to write a result into), the finished ones among them give their overflow blocks
 *   back: we copy their payloads into `stashed`. Without that, a joiner that joins its forks in one order
 *   while they finish in another could wait for a result that waits for blocks that an earlier result
 *   holds, which the joiner reads only later: a deadlock on space.
 * - `forkedArgs`: the arguments of a fork with primitive arguments only, kept until we pop it back (and run
 *   it with them) or read its result after a thief ran it.
 * - `stashed`: the payload bytes of a finished fork, copied out to free its blocks.
 * Invariant: an entry exists only for a record this thread still holds as a fork it made; `drop` forgets
 * a record's entries when it is freed.
 *
 * Threads: made and used by its worker thread only (the fork-join host, the runner's finish, the marks'
 * repairs).
 *
 * @module
 */

import { latchIsSet, orphanLatch, SET } from "../protocol/latch.ts";
import type { TaskTable } from "../record/task.ts";

/** The forks this worker made and has not joined. */
export class Forks {
  private readonly table: TaskTable;
  /** By record index: the arguments of a fork with primitive arguments only (see the module doc). */
  private readonly forkedArgs: (unknown[] | undefined)[] = [];
  /** Handles of the tasks we forked and have not joined yet, oldest first (see the module doc). */
  private readonly outstanding: number[] = [];
  /** By record index: the payload bytes of a finished fork, copied out to free its blocks. */
  private readonly stashed = new Map<number, Uint8Array>();

  /**
   * This thread.
   *
   * @param table The task records.
   */
  constructor(table: TaskTable) {
    this.table = table;
  }

  /** This thread. Whether any fork is not joined yet (at the top of the loop: a join was cut short). */
  any(): boolean {
    return this.outstanding.length !== 0;
  }

  /** This thread. Fork `handle` was published (pushed on our deque): outstanding until joined. */
  add(handle: number): void {
    this.outstanding[this.outstanding.length] = handle;
  }

  /** This thread. Keeps the primitive arguments of the fork in record `index` (see `forkedArgs`). */
  keepArgs(index: number, args: unknown[]): void {
    this.forkedArgs[index] = args;
  }

  /** This thread. The kept arguments of the fork in record `index`, forgotten; undefined if none. */
  takeArgs(index: number): unknown[] | undefined {
    const args = this.forkedArgs[index];
    if (args !== undefined) this.forkedArgs[index] = undefined;
    return args;
  }

  /** This thread. Forgets the kept arguments of the fork in record `index`. */
  clearArgs(index: number): void {
    this.forkedArgs[index] = undefined;
  }

  /** This thread. The stashed payload of the fork in record `index`, forgotten; undefined if none. */
  takeStash(index: number): Uint8Array | undefined {
    const stash = this.stashed.get(index);
    if (stash !== undefined) this.stashed.delete(index);
    return stash;
  }

  /** This thread. Removes `handle` from the forks not yet joined (usually the newest). */
  forget(handle: number): void {
    const outstanding = this.outstanding;
    if (outstanding[outstanding.length - 1] === handle) outstanding.pop();
    else {
      const at = outstanding.lastIndexOf(handle);
      if (at >= 0) outstanding.splice(at, 1);
    }
  }

  /** This thread. Forgets what this thread keeps for record `handle` outside the table (arguments, a stash). */
  drop(handle: number): void {
    const index = this.table.indexOf(handle);
    this.forkedArgs[index] = undefined;
    this.stashed.delete(index);
  }

  /**
   * This thread. Copies out the payloads of our finished, not yet joined forks that hold overflow blocks,
   * freeing them.
   */
  stashFinished(): void {
    const table = this.table;
    for (const handle of this.outstanding) {
      const index = table.indexOf(handle);
      if (this.stashed.has(index) || !table.holdsBlocks(index)) continue;
      // The latch load that sees SET orders the finisher's payload writes before our reads.
      if (!latchIsSet(table.words, table.fields.latchWord(index))) continue;
      this.stashed.set(index, table.takePayloadBytes(index));
    }
  }

  /**
   * This thread, at the top of the loop (a join was cut short). Forks never joined: nobody will join them
   * now. Each is orphaned, so that whoever finishes it frees it, or freed here if finished already.
   */
  orphanAll(): void {
    const table = this.table;
    for (const handle of this.outstanding.splice(0)) {
      // A guard no scenario reaches (issue 32): an outstanding fork's record is freed only by its joiner
      // (us), which forgets the handle before it releases the record (fork_join.ts), or by the finisher
      // or recovery once it is orphaned, which this thread does here after taking it out of the list, or
      // recovery does once we are dead. Were it stale, orphanLatch below would orphan another task's fork.
      if (!table.isCurrent(handle)) continue;
      this.drop(handle);
      // Finished already: free it here; else whoever finishes it frees it.
      const before = orphanLatch(table.words, table.fields.latchWord(table.indexOf(handle)));
      if (before === SET) table.releaseHandle(handle);
    }
  }
}
