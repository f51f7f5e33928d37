/**
 * One `test()` for three runtimes: registers with `Deno.test`, `bun:test` or `node:test`, whichever runs
 * this file, so every test file is written once and run by each runtime's own runner.
 *
 * @module
 */

/** The runtime running the tests. */
export const runtime: "deno" | "bun" | "node" = "Deno" in globalThis ? "deno" : "Bun" in globalThis ? "bun" : "node";

import { MUTATION_RUN } from "./mutants/mutation_run.ts";

type Body = () => void | Promise<void>;
type Register = (name: string, body: Body, timeoutMs: number) => void;

async function pickRegister(): Promise<Register> {
  if (runtime === "deno") {
    const deno = (globalThis as unknown as {
      Deno: { test(options: { name: string; fn: Body; sanitizeOps: boolean; sanitizeResources: boolean }): void };
    }).Deno;
    // Workers and wait-async timers outlive a body by design in some tests; each test checks its own cleanup.
    // Deno's runner has no per-test timeout: the body races a timer, so a hang fails with a message (a
    // body that blocks its thread is caught by run_all.ts's whole-runner deadline instead).
    return (name, body, timeoutMs) =>
      deno.test({ name, fn: () => withTimeout(name, body, timeoutMs), sanitizeOps: false, sanitizeResources: false });
  }
  if (runtime === "bun") {
    const bunTest = await import("bun:test");
    return (name, body, timeoutMs) => bunTest.test(name, body, timeoutMs);
  }
  const nodeTest = await import("node:test");
  return (name, body, timeoutMs) => {
    nodeTest.test(name, { timeout: timeoutMs }, body);
  };
}

/** Runs `body`, failing with a message if it has not settled within `timeoutMs`. */
async function withTimeout(name: string, body: Body, timeoutMs: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const hang = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`test timed out after ${timeoutMs} ms (a hang is a failure): ${name}`)),
      timeoutMs,
    );
  });
  try {
    await Promise.race([body(), hang]);
  } finally {
    clearTimeout(timer);
  }
}

const register: Register = await pickRegister();

/**
 * Registers a test with the running runtime's test runner.
 *
 * @param name What the test pins down: the property or race, stated as a behaviour.
 * @param body The test; throw (or reject) to fail.
 * @param timeoutMs A generous upper bound, after which the runner fails the test (not a performance check).
 *
 * @example Usage
 * ```ts ignore
 * import { test } from "./_test.ts";
 * test("push then pop returns the pushed value", () => {});
 * ```
 */
export function test(name: string, body: Body, timeoutMs = 120_000): void {
  // The mutation run (tests/mutants/run.ts) patches the real file in a scratch copy and asks the ordinary
  // tests to notice; a suite's own mutant tests would fail there for the wrong reason (their patches no
  // longer match), so that run alone leaves them out. Never set in `npm test`.
  if (MUTATION_RUN && /\bmutants?\b/.test(name)) return;
  register(name, body, timeoutMs);
}

/**
 * Throws an Error with `message` unless `condition` holds.
 *
 * @param condition What must be true.
 * @param message What went wrong, if it is not.
 *
 * @example Usage
 * ```ts ignore
 * import { assert } from "./_test.ts";
 * assert(1 + 1 === 2, "arithmetic");
 * ```
 */
export function assert(condition: unknown, message: string): asserts condition {
  if (!condition) throw new Error(`assertion failed: ${message}`);
}

/**
 * Throws unless `actual` and `expected` are deeply equal (JSON-comparable values).
 *
 * @param actual The value produced.
 * @param expected The value wanted.
 * @param message Context for the failure.
 *
 * @example Usage
 * ```ts ignore
 * import { assertEquals } from "./_test.ts";
 * assertEquals([1, 2], [1, 2], "arrays");
 * ```
 */
export function assertEquals(actual: unknown, expected: unknown, message = "values differ"): void {
  const a = JSON.stringify(actual);
  const e = JSON.stringify(expected);
  if (a !== e) throw new Error(`assertion failed: ${message}: expected ${e}, received ${a}`);
}

/**
 * Throws unless `fn` throws an instance of `errorClass` whose message contains `includes`.
 *
 * @param fn The code that must throw.
 * @param errorClass The class the error must be.
 * @param includes A part of the message that must appear.
 * @returns The error thrown.
 *
 * @example Usage
 * ```ts ignore
 * import { assertThrows } from "./_test.ts";
 * assertThrows(() => { throw new RangeError("bad 'x'"); }, RangeError, "'x'");
 * ```
 */
export function assertThrows(
  fn: () => unknown,
  errorClass: abstract new (...args: never[]) => Error,
  includes: string,
): Error {
  try {
    fn();
  } catch (error) {
    if (!(error instanceof errorClass)) {
      throw new Error(`assertion failed: expected ${errorClass.name}, received ${String(error)}`);
    }
    if (!error.message.includes(includes)) {
      throw new Error(`assertion failed: expected message containing "${includes}", received "${error.message}"`);
    }
    return error;
  }
  throw new Error(`assertion failed: expected ${errorClass.name} containing "${includes}", but nothing was thrown`);
}

/**
 * Awaits `promise` and returns what it rejected with; throws if it resolved.
 *
 * @param promise The promise that must reject.
 * @returns The rejection reason.
 *
 * @example Usage
 * ```ts ignore
 * import { assertRejects } from "./_test.ts";
 * const error = await assertRejects(Promise.reject(new Error("no")));
 * ```
 */
export async function assertRejects(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("assertion failed: expected the promise to reject, but it resolved");
}

/**
 * Resolves with `promise`'s outcome, or rejects naming `what` if it has not settled within `ms`: a wait on
 * the pool that hangs is a failure with a message, not a stuck test.
 *
 * @param promise What to wait for.
 * @param ms The bound, in ms (not a performance check: generous).
 * @param what What is awaited, for the message.
 * @returns What `promise` resolves to.
 *
 * @example Usage
 * ```ts ignore
 * import { within } from "./_test.ts";
 * const result = await within(pool.run("add", 1, 2), 10_000, "add");
 * ```
 */
export async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const hang = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`hang: ${what} did not settle within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, hang]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Every value of an async iterable, in order (a pool's `map`).
 *
 * @example Usage
 * ```ts ignore
 * import { collect } from "./_test.ts";
 * const squares = await collect(pool.map("square", [1, 2])); // [1, 4]
 * ```
 */
export async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const value of iterable) out.push(value);
  return out;
}

/**
 * Runs `body` while counting the unhandled promise rejections of this thread (each one handled here, so
 * that no test runner fails on it); returns their reasons. On Deno the window event, on Node and Bun the
 * process event.
 *
 * @param body What to run.
 * @returns The reasons of the rejections nobody handled while it ran.
 */
export async function unhandledRejectionsDuring(body: () => Promise<void>): Promise<unknown[]> {
  const reasons: unknown[] = [];
  const onDeno = (event: Event) => {
    reasons.push((event as PromiseRejectionEvent).reason);
    event.preventDefault();
  };
  const onNode = (reason: unknown) => void reasons.push(reason);
  const events = globalThis as unknown as {
    addEventListener?: typeof addEventListener;
    removeEventListener?: typeof removeEventListener;
  };
  const process = (globalThis as unknown as {
    process?: { on(e: string, f: (reason: unknown) => void): void; off(e: string, f: (reason: unknown) => void): void };
  }).process;
  if (runtime === "deno") events.addEventListener!("unhandledrejection", onDeno);
  else process!.on("unhandledRejection", onNode);
  try {
    await body();
  } finally {
    if (runtime === "deno") events.removeEventListener!("unhandledrejection", onDeno);
    else process!.off("unhandledRejection", onNode);
  }
  return reasons;
}
