/**
 * What every simulated thread's gate shares (the kernel's `gate.ts`, and a model's subclass of it): the facade binding of `lib/protocol/atomics.ts` in
 * which each atomic access first parks (the controller decides when it happens), then is made for real and
 * its result published. A gate supplies `park` (its hand-shake), `done`, and the waits and notify, which
 * the harnesses model differently; plain reads and writes are refused.
 *
 * Runs on a simulated thread (a Worker) only, installed with `installSharedMemory`.
 *
 * @module
 */

import type { Int32View, SharedMemory, WaitAsyncResult } from "../../../lib/protocol/atomics.ts";
import { Fn } from "../../../spec/trace/facade_codes.ts";

/** The thrown message that unwinds a simulated thread when the controller aborts a run. */
export const ABORT_MESSAGE = "filch-lincheck: run aborted by the controller";

/** Thrown by a gate told to ABORT: unwinds the program (the code under test has no try/catch to swallow it). */
export class AbortRun extends Error {
  constructor() {
    super(ABORT_MESSAGE);
  }
}

/** A gate: every read-modify-write, load and store is one scheduled step (park, then the access, then done). */
export abstract class ParkingFacade implements SharedMemory {
  /** Stops before an access of `fn` to word `index` of `view` until the controller releases it. */
  abstract park(fn: number, view: Int32View, index: number, a1: number, a2: number): void;
  /** Publishes the access's result to the controller; returns it. */
  abstract done(result: number): number;
  abstract wait(view: Int32View, index: number, expected: number, timeout?: number): "ok" | "not-equal" | "timed-out";
  abstract waitAsync(view: Int32View, index: number, expected: number, timeout?: number): WaitAsyncResult;
  abstract notify(view: Int32View, index: number, count?: number): number;

  load(view: Int32View, index: number): number {
    this.park(Fn.load, view, index, 0, 0);
    return this.done(Atomics.load(view, index));
  }
  store(view: Int32View, index: number, value: number): number {
    this.park(Fn.store, view, index, value, 0);
    return this.done(Atomics.store(view, index, value));
  }
  compareExchange(view: Int32View, index: number, expected: number, replacement: number): number {
    this.park(Fn.compareExchange, view, index, expected, replacement);
    return this.done(Atomics.compareExchange(view, index, expected, replacement));
  }
  add(view: Int32View, index: number, value: number): number {
    this.park(Fn.add, view, index, value, 0);
    return this.done(Atomics.add(view, index, value));
  }
  sub(view: Int32View, index: number, value: number): number {
    this.park(Fn.sub, view, index, value, 0);
    return this.done(Atomics.sub(view, index, value));
  }
  exchange(view: Int32View, index: number, value: number): number {
    this.park(Fn.exchange, view, index, value, 0);
    return this.done(Atomics.exchange(view, index, value));
  }
  or(view: Int32View, index: number, value: number): number {
    this.park(Fn.or, view, index, value, 0);
    return this.done(Atomics.or(view, index, value));
  }
  and(view: Int32View, index: number, value: number): number {
    this.park(Fn.and, view, index, value, 0);
    return this.done(Atomics.and(view, index, value));
  }
  pause(): void {}
  // The code under test: every access is a preemption point, so it must make no plain (unordered) access: one here
  // would be a step the schedule cannot place. Refuse it loudly rather than run it unscheduled.
  read(_view: Int32View, index: number): number {
    throw new Error(`Cannot schedule a plain read of word ${index}: the code under test must use atomic loads only`);
  }
  write(_view: Int32View, index: number, _value: number): void {
    throw new Error(`Cannot schedule a plain write of word ${index}: the code under test must use atomic stores only`);
  }
}
