/**
 * The simulated thread's side of the gate with blocking waits (`sleep_protocol.ts`), shared by the sleep/latch
 * harness's threads (`sleep_thread.ts`) and the kill-guard harness's (`kill_guard_thread.ts`): the facade
 * binding that parks before every access and models `Atomics.wait` as a futex (compare and block in one
 * step, then sleep until the controller resumes it: woken by a notify, or timed out when the schedule says),
 * and the loop that runs one program per run. The controller's side is `wait_controller.ts`.
 *
 * Runs on a simulated thread (a Worker) only. Invariant: between runs the thread waits on the EPOCH word with
 * its STATE a final one (DONE, FAILED with its message in MSG, ABORTED) or EXITED after SHUTDOWN.
 *
 * @module
 */

import type { Int32View, WaitAsyncResult } from "../../lib/protocol/atomics.ts";
import { AbortRun, ParkingFacade } from "./gate_facade.ts";
import { Fn } from "./protocol.ts";
import { SBlock, sblockBase, SGlobal, SMAX_MSG, SState } from "./sleep_protocol.ts";

/** The facade binding: park, wait for GO, make the one access (a wait may block), publish its result. */
export class WaitGate extends ParkingFacade {
  readonly ctl: Int32Array;
  readonly base: number;
  /** In trace mode: the module (a harness's own number, 0 for none) and line of the code under test that made the access. */
  private readonly site: () => [number, number];

  constructor(buffer: SharedArrayBuffer, thread: number, site: () => [number, number]) {
    super();
    this.ctl = new Int32Array(buffer);
    this.base = sblockBase(thread);
    this.site = site;
  }

  /** Called just before each park, to write a harness's own words of the thread block. */
  protected beforePark(): void {}

  park(fn: number, view: Int32View, index: number, a1: number, a2: number): void {
    const ctl = this.ctl;
    const base = this.base;
    if (view.buffer !== ctl.buffer) throw new Error("Cannot schedule an access outside the harness's buffer");
    Atomics.store(ctl, base + SBlock.FN, fn);
    Atomics.store(ctl, base + SBlock.ADDR, (view.byteOffset >> 2) + index);
    Atomics.store(ctl, base + SBlock.ARG1, a1 | 0);
    Atomics.store(ctl, base + SBlock.ARG2, a2 | 0);
    this.beforePark();
    if (Atomics.load(ctl, SGlobal.TRACE) === 1) {
      const [file, line] = this.site();
      Atomics.store(ctl, base + SBlock.SITE_FILE, file);
      Atomics.store(ctl, base + SBlock.SITE_LINE, line);
    }
    Atomics.store(ctl, base + SBlock.STATE, SState.PARKED);
    Atomics.notify(ctl, base + SBlock.STATE);
    this.hold(SState.PARKED);
  }

  /** Sleeps while STATE is `state`; throws on ABORT; returns the new state. */
  hold(state: number): number {
    const ctl = this.ctl;
    const at = this.base + SBlock.STATE;
    let s: number;
    while ((s = Atomics.load(ctl, at)) === state) Atomics.wait(ctl, at, state);
    if (s === SState.ABORT) throw new AbortRun();
    return s;
  }

  done(result: number): number {
    Atomics.store(this.ctl, this.base + SBlock.RESULT, result);
    return result;
  }

  wait(view: Int32View, index: number, expected: number, timeout?: number): "ok" | "not-equal" | "timed-out" {
    const timed = timeout !== undefined && timeout !== Infinity;
    this.park(Fn.wait, view, index, expected, timed ? 1 : 0);
    // Released: compare and block in one step (nobody else runs until we say BLOCKED or park again).
    if (Atomics.load(view, index) !== expected) {
      this.done(0);
      return "not-equal";
    }
    const ctl = this.ctl;
    this.done(1);
    Atomics.store(ctl, this.base + SBlock.STATE, SState.BLOCKED);
    Atomics.notify(ctl, this.base + SBlock.STATE);
    this.hold(SState.BLOCKED); // RESUME (or ABORT, which throws)
    return Atomics.load(ctl, this.base + SBlock.WAKE) === 0 ? "ok" : "timed-out";
  }
  waitAsync(_view: Int32View, index: number, _expected: number, _timeout?: number): WaitAsyncResult {
    throw new Error(`Cannot schedule a waitAsync on word ${index}: the harness models Atomics.wait only`);
  }
  notify(view: Int32View, index: number, count?: number): number {
    this.park(Fn.notify, view, index, count ?? -1, 0);
    // The controller woke the waiters before releasing us, and says how many.
    return this.done(Atomics.load(this.ctl, this.base + SBlock.NOTIFIED));
  }
}

/**
 * The thread's loop: per EPOCH bump, runs `runProgram` (the run's program, by the role in its block), then
 * publishes DONE, FAILED (with the message) or ABORTED; after SHUTDOWN, publishes EXITED and returns.
 */
export function serveRuns(gate: WaitGate, runProgram: () => void): void {
  const ctl = gate.ctl;
  const base = gate.base;
  let epoch = 0;
  for (;;) {
    let e: number;
    while ((e = Atomics.load(ctl, SGlobal.EPOCH)) === epoch) Atomics.wait(ctl, SGlobal.EPOCH, epoch);
    epoch = e;
    if (Atomics.load(ctl, SGlobal.SHUTDOWN) !== 0) {
      Atomics.store(ctl, base + SBlock.STATE, SState.EXITED);
      Atomics.notify(ctl, base + SBlock.STATE);
      return;
    }
    let final: number = SState.DONE;
    try {
      runProgram();
    } catch (error) {
      if (error instanceof AbortRun) {
        final = SState.ABORTED;
      } else {
        final = SState.FAILED;
        const text = String(error instanceof Error ? `${error.name}: ${error.message}` : error).slice(0, SMAX_MSG);
        Atomics.store(ctl, base + SBlock.MSG, text.length);
        for (let i = 0; i < text.length; i++) Atomics.store(ctl, base + SBlock.MSG + 1 + i, text.charCodeAt(i));
      }
    }
    Atomics.store(ctl, base + SBlock.STATE, final);
    Atomics.notify(ctl, base + SBlock.STATE);
  }
}
