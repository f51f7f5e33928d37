/**
 * Codec micro-benchmark: ns per round trip of one value the way the pool carries it — `encode` into the
 * encoder's scratch, `copyTo` a SharedArrayBuffer payload area, `decode` from there — beside
 * `structuredClone` of the same value (the cost postMessage would pay to copy it, without the message hop),
 * in the same run, alternating, several runs each. Also ns for encode alone and decode alone.
 *
 * Values: two small ints (`[1, 2]`, a typical argument list), a float, a 10-character string (the same one
 * each time, so the decoder's intern table always hits; and 4096 different ones, so it mostly misses), a
 * small object `{ a: 1, b: "x", c: [1, 2] }`, and a 1 KiB Float64Array (128 elements, copied).
 *
 * Run: `deno run -A bench/codec_bench.ts`, `bun bench/codec_bench.ts`, `node bench/codec_bench.ts`.
 * Prints a table: median (min–max) over the runs.
 */
import { readFileSync } from "node:fs";
import { decode, Encoder } from "../lib/codec/codec.ts";
import { format, runtimeName, summarize, type Summary } from "./_stats.ts";

const RUNS = 21;
/** Each run lasts about this long. */
const RUN_MS = 25;

/** 4096 different 10-character strings: more than the decoder's intern table holds, so most decodes miss it. */
const distinctStrings = Array.from({ length: 4096 }, (_, i) => `s${String(i * 7919).padStart(9, "0")}`);

/** This project's own source text (ASCII but for a few dashes, arrows and signs), repeated to `n` characters. */
function sourceText(n: number): string {
  // From the format table on, so that even the first KiB holds a few characters above Latin-1 (×, ≥).
  const file = readFileSync(new URL("../lib/codec/format.ts", import.meta.url), "utf8");
  const text = file.slice(file.indexOf(" * | tag"));
  return text.repeat(Math.ceil(n / text.length)).slice(0, n);
}

/** JSON text (ASCII) of `n` characters: an array of small records, cut to length. */
function jsonText(n: number): string {
  const rows = Array.from({ length: Math.ceil(n / 40) }, (_, i) => ({ id: i, name: `row ${i}`, ok: i % 3 === 0 }));
  return JSON.stringify(rows).slice(0, n);
}

/** Each case cycles through its values (a power-of-two count); all but one case have a single value. */
const cases: [string, unknown[]][] = [
  ["two small ints [1, 2]", [[1, 2]]],
  ["a float 3.14159", [3.14159]],
  ['a 10-char string "abcdefghij"', ["abcdefghij"]],
  ["4096 distinct 10-char strings", distinctStrings],
  ['{ a: 1, b: "x", c: [1, 2] }', [{ a: 1, b: "x", c: [1, 2] }]],
  ["1 KiB Float64Array", [new Float64Array(128).map((_, i) => i * 0.5)]],
  ["1 KiB JSON text", [jsonText(1024)]],
  ["1 KiB source text", [sourceText(1024)]],
  ["64 KiB JSON text", [jsonText(64 * 1024)]],
  ["64 KiB source text", [sourceText(64 * 1024)]],
  ["1 MiB JSON text", [jsonText(1024 * 1024)]],
  ["1 MiB source text", [sourceText(1024 * 1024)]],
];

const encoder = new Encoder();
const payload = new Uint8Array(new SharedArrayBuffer(1 << 23));
/** Consumed results, so that no engine drops the work as dead code. */
let sink = 0;

function observe(value: unknown): void {
  sink = (sink + (typeof value === "object" ? 1 : typeof value === "number" ? 2 : 3)) | 0;
}

type Loop = (values: unknown[], iterations: number) => void;

const roundTrip: Loop = (values, iterations) => {
  const mask = values.length - 1;
  for (let i = 0; i < iterations; i++) {
    const n = encoder.encode(values[i & mask]);
    encoder.copyTo(payload, 8);
    observe(decode(payload, 8, n));
  }
};

const encodeOnly: Loop = (values, iterations) => {
  const mask = values.length - 1;
  for (let i = 0; i < iterations; i++) sink = (sink + encoder.encode(values[i & mask])) | 0;
};

/** Decodes pre-encoded copies of the values, laid out one after another in the payload area. */
const decodeOnly: Loop = (values, iterations) => {
  const mask = values.length - 1;
  const offsets: number[] = [];
  const lengths: number[] = [];
  let at = 0;
  for (const value of values) {
    const n = encoder.encode(value);
    encoder.copyTo(payload, at);
    offsets.push(at);
    lengths.push(n);
    at += n;
  }
  for (let i = 0; i < iterations; i++) observe(decode(payload, offsets[i & mask], lengths[i & mask]));
};

const clone: Loop = (values, iterations) => {
  const mask = values.length - 1;
  for (let i = 0; i < iterations; i++) observe(structuredClone(values[i & mask]));
};

/** Iterations that take about RUN_MS for `loop` on `value`. */
function calibrate(loop: Loop, value: unknown[], start: number): number {
  let iterations = start;
  for (;;) {
    const start = performance.now();
    loop(value, iterations);
    const ms = performance.now() - start;
    if (ms >= RUN_MS / 4) return Math.max(start, Math.round((iterations * RUN_MS) / ms));
    iterations *= 4;
  }
}

function nsPerOp(loop: Loop, value: unknown[], iterations: number): number {
  const start = performance.now();
  loop(value, iterations);
  return ((performance.now() - start) * 1e6) / iterations;
}

const loops: [string, Loop][] = [
  ["codec round trip", roundTrip],
  ["structuredClone", clone],
  ["encode", encodeOnly],
  ["decode", decodeOnly],
];

const rows: { name: string; bytes: number; results: Summary[] }[] = [];
for (const [name, value] of cases) {
  const bytes = encoder.encode(value[0]);
  // Warm up every loop on this value, then calibrate, then alternate the loops run by run.
  // Long values start with fewer iterations (20,000 warm-up round trips of 1 MiB would take a minute).
  const scale = Math.max(1, Math.ceil(bytes / 256));
  const iterations = loops.map(([, loop]) => {
    loop(value, Math.ceil(20_000 / scale));
    return calibrate(loop, value, Math.ceil(1000 / scale));
  });
  const samples: number[][] = loops.map(() => []);
  for (let run = 0; run < RUNS; run++) {
    loops.forEach(([, loop], i) => samples[i].push(nsPerOp(loop, value, iterations[i])));
  }
  rows.push({ name, bytes, results: samples.map(summarize) });
}

console.log(`codec_bench on ${runtimeName()}: ns per operation, median (min–max) of ${RUNS} runs of ~${RUN_MS} ms`);
const header = ["value", "bytes", ...loops.map(([name]) => name), "clone / codec"];
const table = rows.map((row) => [
  row.name,
  String(row.bytes),
  ...row.results.map((s) => format(s, s.median < 100 ? 1 : 0)),
  `${(row.results[1].median / row.results[0].median).toFixed(1)}×`,
]);
const widths = header.map((h, i) => Math.max(h.length, ...table.map((r) => r[i].length)));
const line = (cells: string[]) =>
  cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join("  ");
console.log(line(header));
for (const r of table) console.log(line(r));
if (sink === 0x7fffffff) console.log("(sink)");
