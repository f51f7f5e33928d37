/**
 * "Did you mean …?": the known name nearest to a name that was not found, for the messages of misused
 * options and task names.
 *
 * What it owns: the distance ({@link editDistance}: Damerau–Levenshtein, optimal string alignment, so a
 * swapped pair of letters costs one edit) and the rule for when a name is near enough to suggest
 * ({@link nearestName}). Nothing here runs on a hot path: only when a call is about to throw.
 *
 * Threads: any.
 *
 * @module
 */

/**
 * Edits (insert, delete, substitute, swap two adjacent characters) that turn `a` into `b`.
 *
 * @param a One string.
 * @param b The other.
 * @returns The number of edits.
 *
 * @example Usage
 * ```ts
 * import { editDistance } from "./nearest.ts";
 * console.log(editDistance("worker", "workers"), editDistance("wokrers", "workers")); // 1 1
 * ```
 */
export function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[] = new Array(rows * cols);
  for (let i = 0; i < rows; i++) d[i * cols] = i;
  for (let j = 0; j < cols; j++) d[j] = j;
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(d[(i - 1) * cols + j] + 1, d[i * cols + j - 1] + 1, d[(i - 1) * cols + j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        best = Math.min(best, d[(i - 2) * cols + j - 2] + 1);
      }
      d[i * cols + j] = best;
    }
  }
  return d[rows * cols - 1];
}

/**
 * The known name nearest to `name`, if one is near enough to be what was meant: the same name in another
 * case, or one within a third of the name's length in edits (at least one edit, at most three). Ties go to
 * the first in `known`.
 *
 * @param name The name that was not found.
 * @param known The names that exist.
 * @returns The suggestion, or undefined if none is near.
 *
 * @example Usage
 * ```ts
 * import { nearestName } from "./nearest.ts";
 * const options = ["workers", "name", "maxQueue"];
 * console.log(nearestName("worker", options), nearestName("maxqueue", options), nearestName("colour", options));
 * // workers maxQueue undefined
 * ```
 */
export function nearestName(name: string, known: readonly string[]): string | undefined {
  const lower = name.toLowerCase();
  const sameButCase = known.find((k) => k.toLowerCase() === lower);
  if (sameButCase !== undefined) return sameButCase;
  const limit = Math.min(3, Math.max(1, Math.floor(name.length / 3)));
  let best: string | undefined;
  let bestDistance = limit + 1;
  for (const k of known) {
    const distance = editDistance(lower, k.toLowerCase());
    if (distance < bestDistance) {
      best = k;
      bestDistance = distance;
    }
  }
  return best;
}
