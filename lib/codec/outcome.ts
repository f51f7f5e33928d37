/**
 * A task's outcome as bytes, whatever the task returned or threw: encoding an outcome never throws.
 *
 * What it owns: the rule that turns any value into an encodable outcome. User code runs while a value is
 * encoded (getters, a Proxy's traps), and a thrown value can be anything (a Proxy that throws on every
 * access, an error whose `cause` is cyclic, Bun's `ResolveMessage`, which is not an `Error`). The worker
 * loop encodes results and errors with {@link encodeOutcome}, so no value a task produces can escape as
 * an exception into the pool's own bookkeeping (where it would kill the worker and every task on it).
 *
 * The fallbacks, in order, each tried only if the one before threw:
 * 1. the value itself;
 * 2. for an error (or an error-like object): an `Error` with the same name, message and stack, whose
 *    `cause` is the reason the original could not be encoded (so the task's own message is kept);
 *    for a result: the encoding error (a `TypeError` naming the path that cannot cross threads);
 * 3. a plain `Error` saying the outcome could not be encoded, which always encodes.
 *
 * Threads: any thread, with its own encoder (an encoder is never shared between threads).
 *
 * @module
 */

import type { Encoder } from "./codec.ts";
import { toError } from "../errors.ts";

/** What {@link encodeOutcome} wrote. */
export const Encoded = Object.freeze({
  /** The value as it was. */
  VALUE: 0,
  /** An error: the task's own, a stand-in for it, or the reason its result could not cross threads. */
  ERROR: 1,
});

/**
 * Encodes a task's result (`failed` false) or thrown error (`failed` true) into `encoder`.
 *
 * @param encoder The calling thread's encoder; its bytes hold the outcome afterwards.
 * @param value The result or the thrown value.
 * @param failed Whether `value` was thrown.
 * @returns {@link Encoded.VALUE} if the result was encoded as a value, else {@link Encoded.ERROR}.
 *
 * @example Usage
 * ```ts
 * import { Encoder } from "./codec.ts";
 * import { encodeOutcome } from "./outcome.ts";
 * const encoder = new Encoder();
 * console.log(encodeOutcome(encoder, { then: 1 }, false)); // 0
 * console.log(encodeOutcome(encoder, () => 1, false)); // 1: a function cannot cross, the TypeError goes instead
 * ```
 */
export function encodeOutcome(encoder: Encoder, value: unknown, failed: boolean): number {
  let first: unknown;
  try {
    encoder.encode(value, failed ? "error" : "result");
    return failed ? Encoded.ERROR : Encoded.VALUE;
  } catch (error) {
    first = error;
  }
  try {
    if (failed) {
      const original = toError(value);
      const standIn = new Error(original.message, { cause: toError(first) });
      standIn.name = typeof original.name === "string" ? original.name : "Error";
      if (typeof original.stack === "string") standIn.stack = original.stack;
      encoder.encode(standIn, "error");
    } else {
      encoder.encode(toError(first), "error");
    }
    return Encoded.ERROR;
  } catch (second) {
    encoder.encode(
      new Error(`Cannot report the task's ${failed ? "error" : "result"} as it could not be encoded`, {
        cause: new Error(toError(second).message),
      }),
      "error",
    );
    return Encoded.ERROR;
  }
}
