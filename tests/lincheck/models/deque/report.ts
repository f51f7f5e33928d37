/**
 * Reports of a failing run: the interleaving as a table (a column per thread, a row per shared access,
 * with the value read or written) and the access trace as ndjson (one event a line) for checking against
 * the TLA+ spec later.
 *
 * @module
 */

import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FN_NAMES } from "../../../../spec/trace/facade_codes.ts";
import { type Access, type Execution, type HistoryOp, wordName } from "./model.ts";
import { describeOp, type Violation } from "./oracles.ts";
import { describeScenario, pushValue, type Scenario, threadName } from "./scenario.ts";

/** The operation label of thread `t`'s op `k`: `push(103)`, `pop`, `steal`, `stealHalf`. */
export function opLabel(scenario: Scenario, t: number, k: number): string {
  if (t === 0) {
    const kind = scenario.owner[k];
    if (kind === "pop") return "pop";
    let pushes = scenario.prefill;
    for (let i = 0; i < k; i++) if (scenario.owner[i] === "push") pushes++;
    return `push(${pushValue(pushes)})`;
  }
  return scenario.thieves[t - 1][k];
}

/** One access as text: `load V.bottom → 3`, `store V[1] ← 102`, `cas V.top 0→1 : 0 ok`. */
export function describeAccess(
  a: Access,
  nameWord: (region: number, word: number) => string = wordName,
): string {
  const name = FN_NAMES[a.fn] ?? `fn${a.fn}`;
  const w = nameWord(a.region, a.word);
  if (name === "load") return `load ${w} → ${a.result}`;
  if (name === "store") return `store ${w} ← ${a.arg1}`;
  if (name === "cas") return `cas ${w} ${a.arg1}→${a.arg2} : ${a.result} ${a.result === a.arg1 ? "ok" : "FAIL"}`;
  return `${name} ${w} ${a.arg1} → ${a.result}`;
}

/** The interleaving as a fixed-width table, with the operations' responses after it. */
export function formatTable(scenario: Scenario, exec: Execution): string {
  const threads = scenario.thieves.length + 1;
  const cols = Array.from({ length: threads }, (_, t) => threadName(t));
  const rows: string[][] = [];
  const started = new Set<string>();
  for (const a of exec.accesses) {
    const row = cols.map(() => "");
    const key = `${a.thread}:${a.op}`;
    const label = started.has(key) ? "" : `${opLabel(scenario, a.thread, a.op)}: `;
    started.add(key);
    row[a.thread] = label + describeAccess(a);
    rows.push(row);
  }
  const widths = cols.map((c, i) => Math.max(c.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[], step: string) =>
    `${step.padStart(4)} | ` + cells.map((c, i) => c.padEnd(widths[i])).join(" | ");
  const out = [line(cols, "step"), "-".repeat(7 + widths.reduce((s, w) => s + w + 3, 0))];
  rows.forEach((r, i) => out.push(line(r, String(i))));
  out.push("", "history (setup, threads, drain; @first..last access step):");
  for (const h of [...exec.history].sort(byFirst)) out.push(`  ${describeOp(h)}`);
  if (!exec.drainsInHistory) {
    exec.dstDrained.forEach((vs, k) => {
      if (k > 0) out.push(`  drain(D${k}) → [${vs.join(",")}]`);
    });
  }
  return out.join("\n");
}

function byFirst(a: HistoryOp, b: HistoryOp): number {
  return a.first - b.first;
}

/**
 * The TLA+ action names of a deque module, by source line: every shared access in `lib/protocol/deque.ts` carries
 * a `// spec: Name` comment (a mutant's changed lines may not).
 */
export function specActions(module: URL): Map<number, string> {
  const out = new Map<number, string>();
  readFileSync(module, "utf8").split("\n").forEach((text, i) => {
    const m = /\/\/ spec: (\w+)/.exec(text);
    if (m !== null) out.set(i + 1, m[1]);
  });
  return out;
}

/** The run as ndjson events: one `scenario` line, then `access`, `invoke` and `return` events in order. */
export function traceNdjson(
  scenario: Scenario,
  exec: Execution,
  meta: Record<string, unknown>,
  actions: Map<number, string> = new Map(),
): string {
  const lines: string[] = [JSON.stringify({ event: "scenario", ...meta, scenario, text: describeScenario(scenario) })];
  const invokes = new Map<number, HistoryOp[]>();
  const returns = new Map<number, HistoryOp[]>();
  const drains: string[] = [];
  for (const h of exec.history) {
    if (h.thread < 0) {
      const line = JSON.stringify({
        event: h.thread === -1 ? "setup" : "drain",
        deque: h.deque ? `D${h.deque}` : "V",
        op: h.kind,
        arg: h.arg,
        ret: h.ret,
      });
      (h.thread === -1 ? lines : drains).push(line);
      continue;
    }
    invokes.set(h.first, [...(invokes.get(h.first) ?? []), h]);
    returns.set(h.last, [...(returns.get(h.last) ?? []), h]);
  }
  for (const a of exec.accesses) {
    for (const h of invokes.get(a.step) ?? []) {
      lines.push(
        JSON.stringify({ event: "invoke", step: a.step, thread: threadName(h.thread), op: h.kind, arg: h.arg }),
      );
    }
    lines.push(JSON.stringify({
      event: "access",
      step: a.step,
      thread: threadName(a.thread),
      op: opLabel(scenario, a.thread, a.op),
      opIndex: a.op,
      action: actions.get(a.line) ?? null,
      line: a.line || null,
      fn: FN_NAMES[a.fn],
      word: wordName(a.region, a.word),
      region: a.region,
      index: a.word,
      args: [a.arg1, a.arg2],
      result: a.result,
    }));
    for (const h of returns.get(a.step) ?? []) {
      lines.push(JSON.stringify({
        event: "return",
        step: a.step,
        thread: threadName(h.thread),
        op: h.kind,
        ret: h.ret,
        values: h.values,
      }));
    }
  }
  lines.push(...drains);
  if (!exec.drainsInHistory) {
    exec.dstDrained.forEach((vs, k) => {
      if (k > 0) lines.push(JSON.stringify({ event: "drain", deque: `D${k}`, values: vs }));
    });
  }
  return lines.join("\n") + "\n";
}

/** Where traces go: `$FILCH_LINCHECK_OUT`, else `<tmp>/filch-lincheck`. */
export function traceDir(env: (name: string) => string | undefined): string {
  const dir = env("FILCH_LINCHECK_OUT") ?? join(tmpdir(), "filch-lincheck");
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** Writes the trace of a failing run; returns its path. */
export function writeTrace(
  dir: string,
  name: string,
  scenario: Scenario,
  exec: Execution,
  meta: Record<string, unknown>,
  actions?: Map<number, string>,
): string {
  const file = join(dir, `${name}.ndjson`);
  writeFileSync(file, traceNdjson(scenario, exec, meta, actions));
  return file;
}

/** The full human report of a failing run. */
export function formatFailure(
  scenario: Scenario,
  schedule: readonly number[],
  exec: Execution,
  violations: readonly Violation[],
): string {
  return [
    `scenario: ${describeScenario(scenario)}`,
    `scenario (JSON): ${JSON.stringify(scenario)}`,
    `schedule (JSON): ${JSON.stringify(schedule)}`,
    `violations:`,
    ...violations.map((v) => `  [${v.oracle}] ${v.detail}`),
    "",
    formatTable(scenario, exec),
  ].join("\n");
}
