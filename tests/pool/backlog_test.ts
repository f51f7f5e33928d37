/**
 * The submission backlog (lib/producer/backlog.ts) against a model: entries leave in the order they came, each
 * with exactly the bytes it was pushed with, across the buffer's growth and compaction, with settled
 * entries skipped, trims asked for at any time, the ring of entries wrapped and grown (from 2 slots), the
 * backlog emptied and reused, and no slot holding an entry that left; and its mutants
 * (tests/mutants/mutants.ts, BACKLOG_MUTANTS) fail the same check. Also: an emptied backlog keeps its
 * grown buffer and ring until a trim gives them back.
 */
import fc from "fast-check";
import { Backlog } from "../../lib/producer/backlog.ts";
import { decode, Encoder } from "../../lib/codec/codec.ts";
import type { Entry } from "../../lib/producer/ledger.ts";
import { BACKLOG_MUTANTS, materializePoolMutant, removePoolMutant } from "../mutants/mutants.ts";
import { assert, test } from "../_test.ts";

const env = (globalThis as { process?: { env: Record<string, string | undefined> } }).process?.env ?? {};
const SEED = Number(env.FILCH_SEED ?? 20261124);
const RUNS = Number(env.FILCH_BACKLOG_RUNS ?? 500);

/** An entry as the ledger makes it (only the fields the backlog reads and writes matter). */
function entryOf(seq: number): Entry {
  return {
    seq,
    task: "t",
    taskId: 0,
    handle: -1,
    resolve: undefined,
    reject: undefined,
    bytesAt: 0,
    bytesLength: 0,
    moved: undefined,
    settled: false,
    control: undefined,
    onProgress: undefined,
    submittedAt: 0,
    level: 1,
  };
}

/**
 * A step: push a value of this many bytes (a string), settle the entry at this index, let the oldest
 * leave, or ask for a trim (the submitter's idle timer may fire at any time).
 */
type Step = { push: number } | { settle: number } | { leave: true } | { trim: true };

const steps = fc.array(
  fc.oneof(
    { weight: 5, arbitrary: fc.integer({ min: 0, max: 3000 }).map((n) => ({ push: n })) },
    { weight: 2, arbitrary: fc.integer({ min: 0, max: 40_000 }).map((n) => ({ push: n })) },
    // Rarely, one large enough that a few of them grow the buffer past the 1 MiB a trim keeps.
    { weight: 1, arbitrary: fc.integer({ min: 200_000, max: 600_000 }).map((n) => ({ push: n })) },
    { weight: 1, arbitrary: fc.nat(64).map((i) => ({ settle: i })) },
    { weight: 5, arbitrary: fc.constant({ leave: true as const }) },
    { weight: 1, arbitrary: fc.constant({ trim: true as const }) },
  ),
  { maxLength: 200 },
);

/**
 * Runs `steps` on a backlog made by `BacklogClass` and on a model; returns what differed first, or
 * undefined if nothing did. Each pushed value is a string that names its entry, so a byte from another
 * entry or a shifted view decodes to the wrong string (or does not decode).
 */
function differs(BacklogClass: typeof Backlog, plan: Step[]): string | undefined {
  // Two slots: a few pushes wrap and grow the ring.
  const backlog = new BacklogClass(2);
  const encoder = new Encoder();
  const model: { entry: Entry; value: string }[] = [];
  let seq = 0;
  const check = (): string | undefined => {
    if (backlog.length !== model.length) return `length ${backlog.length}, model ${model.length}`;
    if (backlog.held !== model.length) return `${backlog.held} slots hold an entry, ${model.length} entries wait`;
    const waiting = [...backlog.waiting()];
    for (let i = 0; i < model.length; i++) {
      if (waiting[i] !== model[i].entry) return `entry ${i} is not the model's`;
      const from = backlog.offsetOf(model[i].entry);
      const bytes = backlog.bytes.subarray(from, from + model[i].entry.bytesLength);
      let value: unknown;
      try {
        value = decode(bytes, 0, bytes.length);
      } catch (error) {
        return `entry ${i}'s bytes do not decode: ${(error as Error).message}`;
      }
      if (value !== model[i].value) return `entry ${i}'s bytes hold another value`;
    }
    return undefined;
  };
  for (const step of plan) {
    if ("push" in step) {
      const value = `#${seq}:` + "x".repeat(step.push);
      encoder.encode(value);
      const entry = entryOf(seq++);
      backlog.push(entry, encoder);
      model.push({ entry, value });
    } else if ("trim" in step) {
      backlog.trim();
    } else if ("settle" in step) {
      if (model.length > 0) model[step.settle % model.length].entry.settled = true;
    } else {
      // As the submitter feeds it: settled entries leave unplaced, then one placed entry leaves.
      while (backlog.first()?.settled === true) {
        backlog.shift();
        model.shift();
      }
      if (backlog.first() !== undefined) {
        if (backlog.first() !== model[0].entry) return "the oldest entry is not the model's";
        backlog.shift();
        model.shift();
      }
    }
    const problem = check();
    if (problem !== undefined) return problem;
  }
  return undefined;
}

test(`waiting entries keep their order and their bytes through growth, compaction and reuse (seed ${SEED})`, () => {
  fc.assert(
    fc.property(steps, (plan) => {
      const problem = differs(Backlog, plan);
      if (problem !== undefined) throw new Error(problem);
    }),
    { seed: SEED, numRuns: RUNS },
  );
});

test("an emptied backlog keeps its grown buffer for the next burst, until a trim gives it back", () => {
  const backlog = new Backlog();
  const encoder = new Encoder();
  const first = backlog.bytes;
  const big = new Uint8Array(300_000);
  for (let i = 0; i < 8; i++) {
    encoder.encode(big);
    backlog.push(entryOf(i), encoder);
  }
  const grown = backlog.bytes;
  assert(grown.length > 2_000_000, `the buffer grew to ${grown.length} bytes for 2.4 MB of arguments`);
  backlog.trim(); // entries wait: their bytes are in it
  assert(backlog.bytes === grown, "a trim with entries waiting gave their buffer back");
  while (backlog.first() !== undefined) backlog.shift();
  assert(backlog.length === 0 && backlog.trimmable, "emptied, the grown buffer is trimmable");
  assert(backlog.bytes === grown, "emptied, the backlog gave its buffer back before any trim");
  encoder.encode(big);
  backlog.push(entryOf(8), encoder);
  assert(backlog.bytes === grown, "the next burst did not reuse the grown buffer");
  backlog.shift();
  backlog.trim();
  assert(backlog.bytes.length === first.length && !backlog.trimmable, "the trim kept a buffer past 1 MiB");
});

test("an emptied backlog keeps its grown ring of entries for the next burst, until a trim gives it back", () => {
  const backlog = new Backlog(2);
  const encoder = new Encoder();
  encoder.encode(1);
  for (let i = 0; i < 70_000; i++) backlog.push(entryOf(i), encoder);
  const grown = backlog.slots;
  assert(grown >= 70_000, `the ring grew to ${grown} slots for 70,000 entries`);
  backlog.trim(); // entries wait in it
  assert(backlog.slots === grown && backlog.length === 70_000, "a trim with entries waiting gave their ring back");
  while (backlog.first() !== undefined) backlog.shift();
  assert(backlog.held === 0, `emptied, the ring still holds ${backlog.held} entries that left`);
  assert(backlog.slots === grown && backlog.trimmable, "emptied, the backlog gave its ring back before any trim");
  backlog.trim();
  assert(backlog.slots === 2 && !backlog.trimmable, `the trim kept a ring of ${backlog.slots} slots`);
});

test("the backlog check catches every backlog mutant (tests/mutants/mutants.ts, BACKLOG_MUTANTS)", async () => {
  for (const mutant of BACKLOG_MUTANTS) {
    const url = materializePoolMutant(mutant);
    try {
      const { Backlog: MutantBacklog } = await import(new URL("producer/backlog.ts", url).href) as {
        Backlog: typeof Backlog;
      };
      let caught: string | undefined;
      try {
        fc.assert(
          fc.property(steps, (plan) => differs(MutantBacklog, plan) === undefined),
          // No shrinking: the first plan that shows the bug is enough here.
          { seed: SEED, numRuns: RUNS, endOnFailure: true },
        );
      } catch (error) {
        // (Not fast-check's own words: a passing run's log must not say "failed".)
        const runs = /after (\d+) tests/.exec((error as Error).message)?.[1] ?? "?";
        caught = `caught, by generated plan ${runs}`;
      }
      console.log(`  backlog mutant '${mutant.name}': ${caught ?? "NOT caught"}`);
      assert(caught !== undefined, `backlog mutant '${mutant.name}' not caught`);
    } finally {
      removePoolMutant(url);
    }
  }
});
