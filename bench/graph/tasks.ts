/**
 * The task module of the graph benchmarks (bench/graph/): the chain's tiny task, the pipeline's stages and
 * the wavefront's tile. Every function here also runs on the main thread as the benchmarks' inline
 * baseline and correctness reference, so a task and its baseline are one body.
 *
 * - `add` (from bench/tasks.ts): the chain's node, `a + b`.
 * - The pipeline over the `.js` files of an installed package: `readText` (the file's text, read by the
 *   worker), `scan` (a hand-written JavaScript tokenizer: every token's kind, and the identifiers in
 *   order), `summarise` (a file's counts: tokens by kind, and each identifier's count), `merge` (several
 *   summaries into one). The intermediate results are real sizes: a file's text, then its identifiers.
 * - The wavefront: `tile`, one square of the edit-distance table of two strings, from the last row of the
 *   tile above and the last column of the tile on the left (see {@link tile}).
 *
 * Threads: any (pure functions, but `readText`, which reads a file).
 *
 * @module
 */
import { readFileSync } from "node:fs";

export { add } from "../tasks.ts";

/**
 * Reads a file as UTF-8 text.
 *
 * @param path An absolute path.
 * @returns Its text.
 *
 * @example Usage
 * ```ts ignore
 * const text = readText("/etc/hostname");
 * ```
 */
export function readText(path: string): string {
  return readFileSync(path, "utf8");
}

/** The token kinds {@link scan} counts, by index. */
export const KINDS = ["identifier", "keyword", "number", "string", "punctuator", "comment"] as const;

/** What {@link scan} finds in a text: its length, its tokens by kind, and its identifiers in order. */
export interface Scanned {
  chars: number;
  kinds: number[];
  identifiers: string[];
}

const KEYWORDS = new Set(
  ("break case catch class const continue debugger default delete do else export extends false finally for " +
    "function if import in instanceof let new null return super switch this throw true try typeof var void " +
    "while with yield async await of static get set undefined").split(" "),
);

function identifierPart(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95 || c === 36 || c > 127;
}

/**
 * Tokenizes JavaScript text: whitespace is skipped; comments (`//`, `/* *\/`), strings (quotes and
 * template literals, escapes honoured, a template's `${…}` kept inside the string), numbers, identifiers
 * and keywords, and one-character punctuators are told apart. A regular expression literal counts as
 * punctuators and identifiers: telling it from a division needs a parser, and every thread scans alike.
 *
 * @param text Source text.
 * @returns Its length, the count of each kind ({@link KINDS}), and the identifiers (not keywords) in order.
 *
 * @example Usage
 * ```ts
 * import { scan } from "./tasks.ts";
 * console.log(scan("const x = 1; // one").kinds); // [ 1, 1, 1, 0, 2, 1 ]
 * ```
 */
export function scan(text: string): Scanned {
  const kinds = [0, 0, 0, 0, 0, 0];
  const identifiers: string[] = [];
  const n = text.length;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 32 || c === 9 || c === 10 || c === 13) {
      i++;
      continue;
    }
    const next = i + 1 < n ? text.charCodeAt(i + 1) : 0;
    if (c === 47 && next === 47) { // a line comment
      const end = text.indexOf("\n", i);
      i = end === -1 ? n : end;
      kinds[5]++;
    } else if (c === 47 && next === 42) { // a block comment
      const end = text.indexOf("*/", i + 2);
      i = end === -1 ? n : end + 2;
      kinds[5]++;
    } else if (c === 34 || c === 39 || c === 96) { // a string: ", ' or `
      i++;
      while (i < n && text.charCodeAt(i) !== c) i += text.charCodeAt(i) === 92 ? 2 : 1;
      i++;
      kinds[3]++;
    } else if (c >= 48 && c <= 57) { // a number (digits, letters of hex, exponents, separators, a point)
      i++;
      while (i < n && (identifierPart(text.charCodeAt(i)) || text.charCodeAt(i) === 46)) i++;
      kinds[2]++;
    } else if (identifierPart(c)) {
      const start = i;
      i++;
      while (i < n && identifierPart(text.charCodeAt(i))) i++;
      const word = text.slice(start, i);
      if (KEYWORDS.has(word)) kinds[1]++;
      else {
        kinds[0]++;
        identifiers.push(word);
      }
    } else {
      i++;
      kinds[4]++;
    }
  }
  return { chars: n, kinds, identifiers };
}

/** A summary of one file or several: files, characters, tokens by kind, and each identifier's count. */
export interface Summary {
  files: number;
  chars: number;
  kinds: number[];
  names: Map<string, number>;
}

/**
 * Summarises one file's scan.
 *
 * @param scanned What {@link scan} found.
 * @returns The file's summary.
 *
 * @example Usage
 * ```ts
 * import { scan, summarise } from "./tasks.ts";
 * console.log(summarise(scan("a = a + b")).names); // Map(2) { "a" => 2, "b" => 1 }
 * ```
 */
export function summarise(scanned: Scanned): Summary {
  const names = new Map<string, number>();
  for (const name of scanned.identifiers) names.set(name, (names.get(name) ?? 0) + 1);
  return { files: 1, chars: scanned.chars, kinds: scanned.kinds, names };
}

/**
 * Merges summaries: sums their counts (identifiers in the order first met, part by part).
 *
 * @param parts The summaries.
 * @returns Their sum.
 *
 * @example Usage
 * ```ts
 * import { merge, scan, summarise } from "./tasks.ts";
 * console.log(merge(summarise(scan("a")), summarise(scan("a b"))).names); // Map(2) { "a" => 2, "b" => 1 }
 * ```
 */
export function merge(...parts: Summary[]): Summary {
  const names = new Map<string, number>();
  const kinds = KINDS.map(() => 0);
  let files = 0;
  let chars = 0;
  for (const part of parts) {
    files += part.files;
    chars += part.chars;
    for (let k = 0; k < kinds.length; k++) kinds[k] += part.kinds[k];
    for (const [name, count] of part.names) names.set(name, (names.get(name) ?? 0) + count);
  }
  return { files, chars, kinds, names };
}

/**
 * A tile's edges, as its neighbours below and on the right read them: `bottom`, the table's row on the
 * tile's last row, from the column left of the tile to its last (width + 1 values: the first is the
 * corner the tile below needs); `right`, the table's column on the tile's last column, for each of its
 * rows (height values).
 */
export interface Edges {
  bottom: Int32Array;
  right: Int32Array;
}

/**
 * One tile of the edit-distance (Levenshtein) table `D` of strings `a` (rows) and `b` (columns), where
 * `D[r][c]` is the distance between `a`'s first r characters and `b`'s first c. The tile holds rows
 * `row0 + 1 … row0 + aPart.length` and columns `col0 + 1 … col0 + bPart.length`; it needs `D`'s row `row0`
 * over columns `col0 … col0 + width` (the `bottom` of the tile above, or the first row of the table) and
 * column `col0` over its rows (the `right` of the tile on the left, or the first column). So each tile
 * depends only on the tile above and the tile on the left: the corner comes with the row above.
 *
 * @param aPart `a`'s characters of the tile's rows.
 * @param bPart `b`'s characters of the tile's columns.
 * @param row0 The row above the tile.
 * @param col0 The column left of the tile.
 * @param above The tile above's edges, or null on the table's first row of tiles.
 * @param left The tile on the left's edges, or null on the first column of tiles.
 * @returns The tile's edges; `D` at the table's last cell is the last tile's `bottom[width]`.
 *
 * @example Usage
 * ```ts
 * import { tile } from "./tasks.ts";
 * console.log(tile("kitten", "sitting", 0, 0, null, null).bottom.at(-1)); // 3
 * ```
 */
export function tile(
  aPart: string,
  bPart: string,
  row0: number,
  col0: number,
  above: Edges | null,
  left: Edges | null,
): Edges {
  const height = aPart.length;
  const width = bPart.length;
  // One row of the tile at a time, with the corner at index 0.
  let previous = new Int32Array(width + 1);
  let current = new Int32Array(width + 1);
  if (above === null) { for (let c = 0; c <= width; c++) previous[c] = col0 + c; }
  else previous.set(above.bottom);
  const right = new Int32Array(height);
  const b = new Uint16Array(width);
  for (let c = 0; c < width; c++) b[c] = bPart.charCodeAt(c);
  for (let r = 0; r < height; r++) {
    current[0] = left === null ? row0 + r + 1 : left.right[r];
    const ar = aPart.charCodeAt(r);
    for (let c = 1; c <= width; c++) {
      const substitute = previous[c - 1] + (b[c - 1] === ar ? 0 : 1);
      const remove = previous[c] + 1;
      const insert = current[c - 1] + 1;
      current[c] = substitute < remove
        ? (substitute < insert ? substitute : insert)
        : (remove < insert ? remove : insert);
    }
    right[r] = current[width];
    const swap = previous;
    previous = current;
    current = swap;
  }
  return { bottom: previous, right };
}
