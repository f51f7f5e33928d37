/**
 * The parsing benchmark's work (bench/experiments/parse.ts): a tokenizer that builds what a parser builds, and so
 * allocates as one does. Each token becomes an object with an ESTree-style location (three more objects),
 * brackets nest the tokens into a tree, and a second pass lists every token with its depth and a hash and
 * keeps a symbol table of every identifier's positions. It is not a JavaScript parser, but its garbage and
 * its live objects per character are of a parser's order. The corpus is real source text (see `corpus`).
 *
 * @module
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

interface Position {
  line: number;
  column: number;
}
interface Token {
  kind: number;
  text: string;
  start: number;
  end: number;
  loc: { start: Position; end: Position };
}
interface Node {
  open: string;
  children: (Node | Token)[];
  start: number;
}

function isIdentifier(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95 || c === 36 || (c >= 48 && c <= 57) || c > 127;
}

/**
 * Tokenizes `text` into a bracket tree, then walks it (see the module doc).
 *
 * @param text Source text.
 * @returns A count of what it built (tokens, brackets, symbols, listed tokens), the same on every thread.
 */
export function parse(text: string): number {
  const root: Node = { open: "", children: [], start: 0 };
  const stack: Node[] = [root];
  let count = 0;
  const n = text.length;
  let i = 0;
  let line = 1;
  let lineStart = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 10) {
      line++;
      lineStart = i + 1;
    }
    if (c === 32 || c === 9 || c === 10 || c === 13) {
      i++;
      continue;
    }
    const start = i;
    let kind = 0;
    if (c === 47 && text.charCodeAt(i + 1) === 47) {
      while (i < n && text.charCodeAt(i) !== 10) i++;
      kind = 1;
    } else if (c === 47 && text.charCodeAt(i + 1) === 42) {
      i = text.indexOf("*/", i + 2);
      i = i < 0 ? n : i + 2;
      kind = 1;
    } else if (c === 34 || c === 39 || c === 96) {
      i++;
      while (i < n && text.charCodeAt(i) !== c) {
        if (text.charCodeAt(i) === 92) i++;
        i++;
      }
      i++;
      kind = 2;
    } else if (isIdentifier(c)) {
      while (i < n && isIdentifier(text.charCodeAt(i))) i++;
      kind = 3;
    } else if (c === 40 || c === 91 || c === 123) {
      const node: Node = { open: text[i], children: [], start: i };
      stack[stack.length - 1].children.push(node);
      stack.push(node);
      i++;
      count++;
      continue;
    } else if (c === 41 || c === 93 || c === 125) {
      if (stack.length > 1) stack.pop();
      i++;
      continue;
    } else {
      i++;
      kind = 4;
    }
    const token: Token = {
      kind,
      text: text.slice(start, i),
      start,
      end: i,
      loc: { start: { line, column: start - lineStart }, end: { line, column: i - lineStart } },
    };
    stack[stack.length - 1].children.push(token);
    count++;
  }
  const symbols = new Map<string, { count: number; at: number[] }>();
  const listed: { depth: number; kind: number; hash: number; parent: Node }[] = [];
  const walk = (node: Node, depth: number) => {
    for (const child of node.children) {
      if ("children" in child) {
        walk(child, depth + 1);
        continue;
      }
      let hash = 0;
      for (let k = 0; k < child.text.length; k++) hash = (Math.imul(hash, 31) + child.text.charCodeAt(k)) | 0;
      listed.push({ depth, kind: child.kind, hash, parent: node });
      if (child.kind === 3) {
        let entry = symbols.get(child.text);
        if (entry === undefined) symbols.set(child.text, entry = { count: 0, at: [] });
        entry.count++;
        entry.at.push(child.start);
      }
    }
  };
  walk(root, 0);
  return count + symbols.size + listed.length;
}

/**
 * Parses `text` `passes` times (a parser's cost is several times this tokenizer's).
 *
 * @param text Source text.
 * @param passes How many times.
 * @returns The sum of the counts.
 */
export function parsePasses(text: string, passes: number): number {
  let sum = 0;
  for (let k = 0; k < passes; k++) sum += parse(text);
  return sum;
}

/**
 * The corpus: every .js, .mjs, .cjs and .ts file of 2–300 KB under this repository's `node_modules`,
 * `lib` and `tests` (in sorted order, so every thread reads the same list), up to `limit` characters.
 *
 * @param limit The most characters to read.
 * @returns The files' text.
 */
export function corpus(limit = 8e6): string[] {
  const root = fileURLToPath(new URL("../..", import.meta.url));
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name);
      const stat = statSync(path);
      if (stat.isDirectory()) walk(path);
      else if (/\.(js|mjs|cjs|ts)$/.test(name) && stat.size >= 2000 && stat.size <= 300_000) files.push(path);
    }
  };
  for (const dir of ["node_modules", "lib", "tests"]) walk(join(root, dir));
  const texts: string[] = [];
  let total = 0;
  for (const file of files) {
    if (total >= limit) break;
    const text = readFileSync(file, "utf8");
    texts.push(text);
    total += text.length;
  }
  return texts;
}

let local: string[] | undefined;
/**
 * Parses file `i` of the corpus as read by this thread (the first call reads it): the same work as
 * {@link parsePasses} with no text crossing threads.
 *
 * @param i The file's index in {@link corpus}.
 * @param passes How many times.
 * @returns The sum of the counts.
 */
export function parseFile(i: number, passes: number): number {
  local ??= corpus();
  return parsePasses(local[i], passes);
}
