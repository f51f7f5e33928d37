/**
 * A thread's step cut short at a chosen shared access, for the tests of what a repair or a recovery does
 * with a step left half done: {@link cutAt} runs an operation with a facade binding that throws {@link Cut}
 * just before its `n`-th shared access (`pause`, a CPU hint, not counted), as a stack overflow at that call
 * or the thread's death there would leave it. One place for what the recovery, marks, producer-death and
 * injector tests each wrote out.
 *
 * Called on the test's own thread; the real binding is back in place when it returns or throws.
 *
 * @module
 */

import { atomicsBinding, installSharedMemory, type SharedMemory } from "../../lib/protocol/atomics.ts";

/** The throw that cuts an operation short (a death, or a stack overflow at the access). */
export class Cut extends Error {}

/** What {@link cutRun} saw: whether `op` was cut, what it returned if not, and how many accesses it made. */
export interface CutRun<T> {
  /** Whether `op` was cut short. */
  cut: boolean;
  /** What `op` returned (ran whole only). */
  value?: T;
  /** The shared accesses it made (cut: `n`). */
  accesses: number;
}

/**
 * Runs `op` with a binding that throws {@link Cut} before its `n`-th shared access (from 0). Given
 * `calls`, the calls of those objects' methods (their classes', own or inherited: `TaskTable`'s,
 * `Marks`'s) count too, and a cut at one throws before the method runs, as a stack overflow at that call
 * does: the points between two accesses where a step holds something in no mark (a record just allocated,
 * before the call that marks it) are then cut at as well.
 *
 * @param n The access (or call) to cut at.
 * @param op The operation (a thread's step, or a repair).
 * @param calls Objects whose method calls count as cut points too.
 * @returns Whether it was cut, its value if not, and its accesses and calls (the cut-short tests stop at
 *   the first `n` past the last).
 *
 * @example Usage
 * ```ts ignore
 * for (let n = 0;; n++) {
 *   const r = cutRun(n, () => deque.pop());
 *   if (!r.cut) break;
 *   deque.repair();
 * }
 * ```
 */
export function cutRun<T>(n: number, op: () => T, calls: readonly object[] = []): CutRun<T> {
  let count = 0;
  const binding = {} as Record<string, unknown>;
  for (const key of Object.keys(atomicsBinding) as (keyof SharedMemory)[]) {
    const real = atomicsBinding[key] as (...args: unknown[]) => unknown;
    binding[key] = (...args: unknown[]) => {
      if (key !== "pause" && count++ === n) throw new Cut(`cut at access ${n}`);
      return real(...args);
    };
  }
  // Each method shadowed by an own property of the object that counts and then calls the class's.
  const shadowed: [Record<string, unknown>, string][] = [];
  for (const target of calls as Record<string, unknown>[]) {
    for (let proto = Object.getPrototypeOf(target); proto !== null && proto !== Object.prototype;) {
      for (const key of Object.getOwnPropertyNames(proto)) {
        const real = Object.getOwnPropertyDescriptor(proto, key)?.value;
        if (key === "constructor" || typeof real !== "function" || Object.hasOwn(target, key)) continue;
        target[key] = function (this: unknown, ...args: unknown[]) {
          if (count++ === n) throw new Cut(`cut at call ${n} (${key})`);
          return real.apply(this, args);
        };
        shadowed.push([target, key]);
      }
      proto = Object.getPrototypeOf(proto);
    }
  }
  const restore = installSharedMemory(binding as unknown as SharedMemory);
  try {
    return { cut: false, value: op(), accesses: count };
  } catch (error) {
    if (!(error instanceof Cut)) throw error;
    return { cut: true, accesses: count };
  } finally {
    restore();
    for (const [target, key] of shadowed) delete target[key];
  }
}

/**
 * Runs `op` with a binding that throws {@link Cut} before its `n`-th shared access (from 0).
 *
 * @param n The access to cut at.
 * @param op The operation (a thread's step, or a repair).
 * @returns Whether `op` was cut (false: it made fewer than `n + 1` accesses and ran whole).
 *
 * @example Usage
 * ```ts ignore
 * for (let n = 0; cutAt(n, () => queue.push(7)); n++) queue.repair();
 * ```
 */
export function cutAt(n: number, op: () => unknown): boolean {
  return cutRun(n, op).cut;
}
