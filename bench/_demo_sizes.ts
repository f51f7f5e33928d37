/**
 * The demo's task sizes (bench/pool_demo.ts, and the demo's row of bench/experiments/main_cpu.ts): one seeded draw, the
 * same every run.
 *
 * @module
 */

/**
 * Task sizes in thousands of loop iterations: 90% 1–10, 9% 100, 1% 2,000 (xorshift from a fixed seed).
 *
 * @param count How many sizes.
 * @returns The sizes.
 */
export function demoSizes(count: number): number[] {
  let seed = 0x2545f491;
  const next = () => {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return (seed >>> 0) / 2 ** 32;
  };
  return Array.from({ length: count }, () => {
    const r = next();
    return r < 0.9 ? 1 + Math.floor(next() * 10) : r < 0.99 ? 100 : 2000;
  });
}
