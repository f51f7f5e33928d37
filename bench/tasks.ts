/** The task module of the pool benchmarks and the demo. */
import { move } from "../lib/codec/move.ts";

/** The tiny task of the throughput and latency benchmarks. */
export function add(a: number, b: number): number {
  return a + b;
}

/** A task of `units` thousand loop iterations, for uneven workloads. */
export function work(units: number): number {
  let x = 0;
  // Math.imul keeps every value an int32, so the JIT never switches the loop to doubles (which made the
  // inline baseline vary 2.5x between rounds). The bound is computed once: with `i < units * 1000` in the
  // loop's test, V8 ran the main thread's copy at 1.55 s or 0.67 s a round, depending on its tier.
  const n = units * 1000;
  for (let i = 0; i < n; i++) x = (Math.imul(x, 31) + i) | 0;
  return x;
}

/**
 * Spins for `us` microseconds (by the clock, so the same length on every runtime and tier); returns the
 * loop's count (≥ 0), for the main-thread CPU benchmark.
 */
export function busy(us: number): number {
  const end = performance.now() + us / 1000;
  let i = 0;
  while (performance.now() < end) i++;
  return i;
}

/** n + 1: the one-argument tiny task of the streaming benchmark (`pool.map`). */
export function inc(n: number): number {
  return n + 1;
}

/**
 * The payload benchmark's argument task: takes bytes, returns a small checksum the caller can verify (their
 * length plus their first and last byte).
 */
export function takeBytes(bytes: Uint8Array): number {
  return bytes.length + bytes[0] + bytes[bytes.length - 1];
}

/**
 * The payload benchmark's text task (`--text`): takes a string, returns a small object the caller can
 * verify (its length and its first and last code units).
 */
export function takeText(text: string): { length: number; first: number; last: number } {
  return { length: text.length, first: text.charCodeAt(0), last: text.charCodeAt(text.length - 1) };
}

/**
 * The payload benchmark's result task: returns `size` fresh bytes. Only the first and last bytes are set
 * (1 and 2, which the caller checks), so the task's own work stays small next to moving the bytes.
 */
export function makeBytes(size: number): Uint8Array {
  const bytes = new Uint8Array(size);
  bytes[0] = 1;
  bytes[size - 1] = 2;
  return bytes;
}

/** {@link makeBytes}, moved back to the caller (`move()`: no copy). */
export function makeBytesMoved(size: number): Uint8Array {
  return move(makeBytes(size));
}
