/**
 * The graph model's stand-in for a `TaskTable` (lib/record/task.ts), over the harness's records: the parts
 * of it that lib/graph/walk.ts and lib/graph/submit.ts use. A real table needs a whole pool's memory (free
 * lists, overflow blocks, status lines); what the graph protocol touches of it is its records' words, which
 * here are the real `RecordFields` over the harness's buffer, so every access to a state, outcome, flags or
 * payload-length word goes through the facade as in the pool. Payloads are inline only (a record has room
 * for an encoded error); their bytes are copied with plain typed-array writes, as the real table's
 * `copyInline` does, and published by the payload-length and outcome words written after them.
 *
 * What is not the pool's: `allocate` hands out the records in order (the controller's placement only);
 * `releaseHandle` counts the free in the test's words, then stores FREE (one scheduled step), without the
 * generation check or a free list; no overflow blocks.
 *
 * Threads: each thread makes its own (the controller for the placement, each simulated thread for its run).
 *
 * @module
 */

import { RecordFields } from "../../../../lib/record/fields.ts";
import { RECORD_HEADER_WORDS } from "../../../../lib/protocol/layout.ts";
import { TaskState } from "../../../../lib/record/task.ts";
import {
  GCAPACITY,
  GINLINE_BYTES,
  GRECORD_WORDS,
  GRECORDS_BYTES,
  GWork,
  GWORK_BYTES,
  GWORK_WORDS,
  handleOf,
  indexOf,
} from "./layout.ts";

/** What a payload's source offers (an `Encoder`). */
interface Source {
  readonly length: number;
  copyTo(bytes: Uint8Array, at: number): void;
}

/** The stand-in table. */
export class GraphTable {
  readonly words: Int32Array;
  readonly bytes: Uint8Array;
  readonly fields: RecordFields;
  private readonly work: Int32Array;
  private next = 0;

  constructor(buffer: SharedArrayBuffer) {
    this.words = new Int32Array(buffer, GRECORDS_BYTES, GCAPACITY * GRECORD_WORDS);
    this.bytes = new Uint8Array(buffer, GRECORDS_BYTES, GCAPACITY * GRECORD_WORDS * 4);
    this.fields = new RecordFields(this.words, GRECORD_WORDS);
    this.work = new Int32Array(buffer, GWORK_BYTES, GWORK_WORDS);
  }

  indexOf(handle: number): number {
    return indexOf(handle);
  }
  levelOf(_handle: number): 1 {
    return 1;
  }
  /** The placement's records, in order. */
  allocate(): number {
    if (this.next >= GCAPACITY) return -1;
    return handleOf(this.next++);
  }
  release(_index: number): void {
    throw new Error("the graph model never gives a placement back");
  }
  payloadBytes(_index: number): Uint8Array {
    return this.bytes;
  }
  payloadStart(index: number): number {
    return (index * GRECORD_WORDS + RECORD_HEADER_WORDS) * 4;
  }
  maxPayloadBytes(): number {
    return GINLINE_BYTES;
  }
  writePayload(index: number, bytes: Uint8Array): boolean {
    return this.writeRange(index, bytes, 0, bytes.length);
  }
  writeRange(index: number, bytes: Uint8Array, from: number, length: number): boolean {
    if (length > GINLINE_BYTES) throw new Error(`a payload of ${length} bytes does not fit the model's records`);
    this.bytes.set(bytes.subarray(from, from + length), this.payloadStart(index));
    this.fields.setPayloadLength(index, length);
    return true;
  }
  writeEncoded(index: number, source: Source): boolean {
    if (source.length > GINLINE_BYTES) {
      throw new Error(`a payload of ${source.length} bytes does not fit the model's records`);
    }
    source.copyTo(this.bytes, this.payloadStart(index));
    this.fields.setPayloadLength(index, source.length);
    return true;
  }
  freePayload(_index: number): void {}
  /** Counts the free (test's words), then stores FREE: one scheduled step. */
  releaseHandle(handle: number): boolean {
    const index = indexOf(handle);
    Atomics.add(this.work, GWork.FREED + index, 1);
    this.fields.storeState(index, TaskState.FREE);
    return true;
  }
}
