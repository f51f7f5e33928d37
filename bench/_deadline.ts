/**
 * A deadline for a benchmark's step that may never end (a peer that does not start, or hangs): the
 * benchmark reports the contender as not run instead of stalling.
 *
 * @module
 */

/**
 * Resolves as `promise` does, or rejects with `message` after `ms`; the timer is cleared either way.
 *
 * @param promise What to wait for.
 * @param ms The deadline.
 * @param message The error's message at the deadline.
 * @returns What `promise` resolves to.
 */
export async function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(message)), ms)));
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
