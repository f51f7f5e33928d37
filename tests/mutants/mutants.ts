/**
 * The known bugs of the shipped protocols, as mutants of their modules: the deque bugs of DESIGN.md
 * (`lib/protocol/deque.ts`) and the queue bugs of `spec/mutants/Injector*.tla`'s counterparts (`lib/protocol/injector.ts`).
 *
 * Mechanism (small on purpose): `lib/` is never edited. {@link materializeMutant} reads the module the
 * mutant names, applies the mutant's patches — each an exact string replacement that must match exactly
 * `count` times, or the build fails loudly (so a mutant cannot silently stop applying when the module
 * changes) — rewrites its two imports to absolute `file:` URLs of the real `lib/protocol/atomics.ts` and
 * `lib/protocol/layout.ts`, and writes the result to a temporary directory, under the module's own file name. Because the imports point at the real facade module, the mutant
 * shares the `mem` binding the harness installs in each simulated thread: it runs under the same
 * controlled scheduler as the shipped code.
 *
 * @module
 */

import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

/** One exact replacement. */
export interface Patch {
  find: string;
  replace: string;
  /** How many times `find` must occur (all are replaced). Default 1. */
  count?: number;
}

/** The modules mutants patch. */
export type MutatedModule = "deque.ts" | "injector.ts" | "sleep.ts" | "latch.ts" | "kill_guard.ts";

/** A known bug, as patches to one module of `lib/`. */
export interface Mutant {
  /** Short name, used for the directory and in reports. */
  name: string;
  /** The module of `lib/` it patches. */
  module: MutatedModule;
  /** The bug, in one sentence. */
  bug: string;
  patches: Patch[];
}

/**
 * Every mutant, of every module: the deque's are DESIGN.md's ("Known bugs that the specs and the
 * fast-check suite must both catch") and one the review found the harness blind to; the queue's mirror
 * the TLA+ mutants of `spec/mutants/Injector*.tla` and the bugs issue 11 names.
 */
export const ALL_MUTANTS: readonly Mutant[] = [
  {
    name: "pop_no_cas_last",
    module: "deque.ts",
    bug: "pop takes the last task without the compare-exchange on top, so a thief can take it too",
    patches: [{ find: "    if (size > 0) {\n", replace: "    if (size >= 0) {\n" }],
  },
  {
    name: "pop_no_restore_bottom",
    module: "deque.ts",
    bug: "pop that loses the race for the last task does not restore bottom (bottom = top - 1 remains)",
    patches: [{
      find: "    mem.store(words, DequeWords.bottom, (t + 1) | 0); // spec: PopRestoreBottom\n",
      replace: "    if (won) mem.store(words, DequeWords.bottom, (t + 1) | 0); // mutant: no restore when lost\n",
    }],
  },
  {
    name: "steal_uses_slot_after_lost_cas",
    module: "deque.ts",
    bug: "steal ignores a lost compare-exchange on top and returns the slot value it read anyway",
    patches: [{
      find:
        "    if (mem.compareExchange(words, DequeWords.top, t, (t + 1) | 0) !== t) return RETRY; // spec: StealCasTop\n",
      replace: "    mem.compareExchange(words, DequeWords.top, t, (t + 1) | 0); // mutant: result ignored\n",
    }],
  },
  {
    name: "steal_half_copy_before_claim",
    module: "deque.ts",
    bug: "stealHalf copies a batch of n slots into dst first, then claims them all with one CAS top t -> t+n, " +
      "racing the owner's CAS-free pop of the batch's newest tasks",
    patches: [{
      find: `    for (;;) {
      const value = mem.load(words, DequeWords.slots + (t & this.mask)); // spec: HalfReadSlot
      // Claim before copy: the task becomes ours only if top is still t.
      if (mem.compareExchange(words, DequeWords.top, t, (t + 1) | 0) !== t) break; // spec: HalfCasTop
      // Plain stores, not calls: a call here could itself be cut short, and the claimed task lost.
      dst.note[CUT_VALUE] = value;
      // Invisible to dst's thieves until the publish below.
      mem.store(dstWords, DequeWords.slots + (((db + taken) | 0) & dst.mask), value); // spec: HalfWriteDst
      taken++;
      dst.note[CUT_COUNT] = taken;
      dst.note[CUT_VALUE] = EMPTY;
      t = (t + 1) | 0;
      if (taken === want) break;
      // As a fresh steal would: top (now t, our own claim) first, then bottom, so a task the owner
      // popped meanwhile is not claimed twice.
      const b2 = mem.load(words, DequeWords.bottom); // spec: HalfRecheckBottom
      if (((b2 - t) | 0) <= 0) break;
    }
    if (taken === 0) {
      dst.note[CUT] = WHOLE;
      return RETRY;
    }
`,
      replace: `    // mutant: copy the whole batch first, then claim it with one compare-exchange.
    for (let i = 0; i < want; i++) {
      const value = mem.load(words, DequeWords.slots + (((t + i) | 0) & this.mask));
      mem.store(dstWords, DequeWords.slots + (((db + i) | 0) & dst.mask), value);
    }
    if (mem.compareExchange(words, DequeWords.top, t, (t + want) | 0) !== t) return RETRY;
    taken = want;
`,
    }],
  },
  {
    name: "narrow_indices",
    module: "deque.ts",
    bug: "indices wrap at 3 bits (sign-extended, compared by wrapping difference): a full deque of 4 reads " +
      "as size -4, so push overwrites a live slot and steal sees empty",
    patches: [
      { find: ") | 0", replace: ") << 29 >> 29", count: 22 },
      // The initial indices too, so that every stored index is a 3-bit one.
      { find: "DequeWords.top, initialIndex);", replace: "DequeWords.top, initialIndex << 29 >> 29);" },
      { find: "DequeWords.bottom, initialIndex);", replace: "DequeWords.bottom, initialIndex << 29 >> 29);" },
    ],
  },
  {
    name: "steal_half_publishes_bottom_before_copy",
    module: "deque.ts",
    bug: "stealHalf publishes its own deque's bottom before it copies each claimed task into the slot, so a " +
      "thief stealing from the thief's deque can take a slot not yet written",
    patches: [{
      find: "      // Invisible to dst's thieves until the publish below.\n",
      replace:
        "      mem.store(dstWords, DequeWords.bottom, (db + taken + 1) | 0); // mutant: publish before the copy\n",
    }],
  },
  // The queue (lib/protocol/injector.ts).
  {
    name: "push_claims_taken_slot",
    module: "injector.ts",
    bug: "push claims its position even when the slot's sequence says the slot still holds the value of the " +
      "position a lap back (the sequence check weakened from 'free' to 'free or taken'): a full queue is overwritten",
    patches: [{
      find: "      const dif = (seq - pos) | 0;\n      if (dif === 0) {\n",
      replace: "      const dif = (seq - pos) | 0;\n      if (dif <= 0) { // mutant: a taken slot is claimed too\n",
    }],
  },
  {
    name: "pop_empty_after_lost_cas",
    module: "injector.ts",
    bug: "a consumer that loses the compare-exchange on head answers EMPTY instead of reading head again",
    patches: [{
      find: "(pos + 1) | 0) !== pos) continue; // spec: PopCasHead\n",
      replace: "(pos + 1) | 0) !== pos) return QUEUE_EMPTY; // mutant: gives up\n",
    }],
  },
  {
    name: "publish_before_write",
    module: "injector.ts",
    bug: "push publishes the slot's sequence before it writes the value (spec/mutants.ts: PublishBeforeWrite)",
    patches: [{
      find: `        mem.store(words, this.valuesAt + (pos & this.mask), value); // spec: PushWriteValue
        // Publishes the value: a consumer that reads this seq reads the value above.
        mem.store(words, InjectorWords.seqs + (pos & this.mask), (pos + 1) | 0); // spec: PushPublishSeq
`,
      replace:
        `        mem.store(words, InjectorWords.seqs + (pos & this.mask), (pos + 1) | 0); // mutant: publish first
        mem.store(words, this.valuesAt + (pos & this.mask), value); // mutant: then write
`,
    }],
  },
  {
    name: "pop_without_cas_head",
    module: "injector.ts",
    bug: "pop claims its position by storing head = pos + 1, whatever head holds, instead of a compare-exchange " +
      "(spec/mutants.ts: PopWithoutCasHead)",
    patches: [{
      find:
        "        if (mem.compareExchange(words, InjectorWords.head, pos, (pos + 1) | 0) !== pos) continue; // spec: PopCasHead\n",
      replace: "        mem.store(words, InjectorWords.head, (pos + 1) | 0); // mutant: no compare-exchange\n",
    }],
  },
  {
    name: "release_wrong_seq",
    module: "injector.ts",
    bug: "pop releases the slot with sequence pos + 1 (the value it already held) instead of pos + capacity: the " +
      "slot is never freed (spec/mutants.ts: ReleaseWrongSeq)",
    patches: [{
      find: "(pos + this.capacity) | 0); // spec: PopReleaseSeq\n",
      replace: "(pos + 1) | 0); // mutant: wrong sequence\n",
    }],
  },
  {
    name: "release_before_read",
    module: "injector.ts",
    bug: "pop frees the slot before it reads the value, so a producer a lap ahead can overwrite it first " +
      "(spec/mutants.ts: ReleaseBeforeRead)",
    patches: [{
      find: `        const value = mem.load(words, this.valuesAt + (pos & this.mask)); // spec: PopReadValue
        // Frees the slot for position pos + capacity.
        mem.store(words, InjectorWords.seqs + (pos & this.mask), (pos + this.capacity) | 0); // spec: PopReleaseSeq
`,
      replace:
        `        mem.store(words, InjectorWords.seqs + (pos & this.mask), (pos + this.capacity) | 0); // mutant: first
        const value = mem.load(words, this.valuesAt + (pos & this.mask)); // mutant: then read
`,
    }],
  },
  {
    name: "narrow_positions",
    module: "injector.ts",
    bug: "positions and sequence differences wrap at 2 bits (sign-extended): with capacity 4 a full queue's " +
      "difference -3 reads as +1, 'a lap ahead', and push retries for ever (spec/mutants.ts: NarrowPositions)",
    patches: [{ find: ") | 0", replace: ") << 30 >> 30", count: 11 }],
  },
];

/**
 * Bugs in the repair of operations cut short by a throw or by the thread's death (`Deque.repair`,
 * `Injector.repair`, the notes they read): caught by tests/protocol/cut_short_test.ts, which cuts each operation at
 * every shared access and repairs it by the same handle, or (a death) by an heir's handle on its notes.
 * Kept apart from
 * {@link ALL_MUTANTS}: the interleaving suites never cut an operation short, so they cannot see these.
 */
export const CUT_MUTANTS: readonly Mutant[] = [
  {
    name: "pop_forgets_won_last_task",
    module: "deque.ts",
    bug: "pop does not note the last task it won before restoring bottom: cut short there, the task is lost",
    patches: [{
      find: "      this.note[CUT_VALUE] = value;\n      this.note[CUT] = POP_TAKEN;\n",
      replace: "      // mutant: the won task is not noted\n",
    }],
  },
  {
    name: "pop_repair_leaves_bottom_lowered",
    module: "deque.ts",
    bug: "the repair of a pop cut short after its reserve does not put bottom back: the task there stays hidden",
    patches: [{
      find:
        "      if (mem.load(words, DequeWords.bottom) === i) mem.store(words, DequeWords.bottom, (i + 1) | 0);\n      this.note[CUT] = WHOLE;\n      return;\n",
      replace: "      this.note[CUT] = WHOLE; // mutant: bottom not put back\n      return;\n",
    }],
  },
  {
    name: "steal_half_claim_not_noted",
    module: "deque.ts",
    bug: "steal-half does not note a task it claimed before writing it into dst: cut short there, it is lost",
    patches: [{
      find: "      dst.note[CUT_VALUE] = value;\n      // Invisible",
      replace: "      // mutant: claim not noted\n      // Invisible",
    }],
  },
  {
    name: "queue_pop_repair_drops_value",
    module: "injector.ts",
    bug: "the repair of a pop cut short releases the slot but drops its value instead of pushing it again",
    patches: [{
      find:
        "      note[NOTE_VALUE] = mem.load(words, this.valuesAt + (pos & this.mask));\n      note[NOTE_CUT] = RETURNING;\n",
      replace:
        "      if (mem.load(words, seqAt) === ((pos + 1) | 0)) mem.store(words, seqAt, (pos + this.capacity) | 0);\n      note[NOTE_CUT] = WHOLE; // mutant: the value is dropped\n      return;\n",
    }],
  },
  {
    name: "queue_push_claim_not_noted",
    module: "injector.ts",
    bug: "push does not note the position it claimed: cut short before publishing, the slot stays claimed",
    patches: [{
      find: "        note[NOTE_VALUE] = value;\n        note[NOTE_CUT] = PUSHING;\n",
      replace: "        // mutant: claim not noted\n",
    }],
  },
  {
    name: "pop_notes_before_its_last_access",
    module: "deque.ts",
    bug: "pop notes the last task it won for its caller before restoring bottom: cut short there, the task is " +
      "both noted for the caller (a worker's held mark) and put back by the repair, and runs twice",
    patches: [{
      find: "    if (won && into !== undefined) into[at] = value;\n",
      replace: "",
    }, {
      find: "      this.note[CUT] = POP_TAKEN;\n",
      replace:
        "      this.note[CUT] = POP_TAKEN;\n      if (into !== undefined) into[at] = value; // mutant: too early\n",
    }],
  },
  {
    name: "queue_pop_notes_nothing",
    module: "injector.ts",
    bug: "pop does not note the value it takes for its caller: a worker that dies as the pop returns has the " +
      "task in no queue and no mark, and it is lost (QUEUED for ever)",
    patches: [{
      find: "        if (into !== undefined) into[at] = value;\n",
      replace: "        // mutant: nothing noted\n",
    }],
  },
  {
    name: "queue_notes_die_with_the_handle",
    module: "injector.ts",
    bug: "a queue handle keeps its notes in its own heap, not the words it was given: a thread that dies " +
      "with a position claimed takes the note with it, and the slot stays claimed",
    patches: [{
      find: "    this.note = notes;\n",
      replace: "    this.note = new Int32Array(3); // mutant: the given notes are ignored\n",
    }],
  },
  {
    name: "deque_notes_die_with_the_handle",
    module: "deque.ts",
    bug: "a deque handle keeps its notes in its own heap, not the words it was given: an owner that dies " +
      "inside a pop or a steal-half takes the note with it, and a task stays hidden or is lost",
    patches: [{
      find: "    this.note = notes;\n",
      replace: "    this.note = new Int32Array(4); // mutant: the given notes are ignored\n",
    }],
  },
];

/** The deque's mutants, in {@link ALL_MUTANTS} order (variant k + 1 of a deque harness is MUTANTS[k]). */
export const MUTANTS: readonly Mutant[] = ALL_MUTANTS.filter((m) => m.module === "deque.ts");

/** The queue's mutants (variant k + 1 of a queue harness is QUEUE_MUTANTS[k]). */
export const QUEUE_MUTANTS: readonly Mutant[] = ALL_MUTANTS.filter((m) => m.module === "injector.ts");

/** Applies `mutant`'s patches to `source`; throws if a patch does not match exactly `count` times. */
export function applyPatches(source: string, mutant: Pick<Mutant, "name" | "patches"> & { module: string }): string {
  let out = source;
  for (const p of mutant.patches) {
    const found = out.split(p.find).length - 1;
    const want = p.count ?? 1;
    if (found !== want) {
      throw new Error(
        `Cannot build mutant '${mutant.name}' as a patch target occurs ${found} times in lib/${mutant.module} ` +
          `(expected ${want}): ` +
          JSON.stringify(p.find.slice(0, 120)),
      );
    }
    out = out.split(p.find).join(p.replace);
  }
  return out;
}

const LIB = new URL("../../lib/", import.meta.url);
/** Where the single-module mutants' modules live: the shared-memory protocols. */
const PROTOCOL = new URL("../../lib/protocol/", import.meta.url);

/** The relative imports of each mutated module, rewritten to the real modules' absolute URLs. */
export const REWRITTEN_IMPORTS: Readonly<Record<MutatedModule, readonly string[]>> = {
  "deque.ts": ["atomics.ts", "layout.ts"],
  "injector.ts": ["atomics.ts", "layout.ts"],
  "sleep.ts": ["atomics.ts", "layout.ts"],
  "latch.ts": ["atomics.ts"],
  "kill_guard.ts": ["atomics.ts", "layout.ts"],
};

/** Rewrites the module's relative imports to the real modules' absolute URLs; throws if they moved. */
export function rewriteImports(source: string, module: MutatedModule = "deque.ts"): string {
  let out = source;
  for (const name of REWRITTEN_IMPORTS[module] ?? []) {
    const from = `from "./${name}";`;
    if (!out.includes(from)) {
      throw new Error(`Cannot build mutant as lib/protocol/${module} no longer imports "./${name}"`);
    }
    out = out.split(from).join(`from "${new URL(name, PROTOCOL).href}";`);
  }
  if (/^import[^\n]*from "\.\//m.test(out)) {
    throw new Error(`Cannot build mutant as lib/protocol/${module} has a relative import not rewritten`);
  }
  return out;
}

let dir: string | null = null;

/** Writes `mutant` as a module in a temporary directory; returns its `file:` URL. */
export function materializeMutant(mutant: Mutant): URL {
  const source = readFileSync(new URL(mutant.module, PROTOCOL), "utf8");
  const text =
    `// GENERATED by tests/mutants/mutants.ts from lib/protocol/${mutant.module}: mutant '${mutant.name}': ${mutant.bug}\n` +
    rewriteImports(applyPatches(source, mutant), mutant.module);
  if (dir === null) {
    dir = mkdtempSync(join(tmpdir(), "filch-mutants-"));
    // Node decides ESM vs CommonJS for a .ts file by the nearest package.json.
    writeFileSync(join(dir, "package.json"), '{ "type": "module" }\n');
  }
  const sub = join(dir, mutant.name);
  mkdirSync(sub, { recursive: true });
  const file = join(sub, mutant.module);
  writeFileSync(file, text);
  return pathToFileURL(file);
}

/**
 * A bug of the pool's own code around the protocols: built as a whole copy of `lib/` with one module
 * patched, so that a pool created from the copy's `pool.ts` starts its workers from the copy too.
 */
export interface PoolMutant {
  name: string;
  module:
    | "worker/runner.ts"
    | "worker/fork_join.ts"
    | "protocol/kill_guard.ts"
    | "record/slabs.ts"
    | "codec/decoder.ts"
    | "codec/encoder.ts"
    | "codec/scratch.ts";
  bug: string;
  patches: Patch[];
  /** The scenario of `tests/pool/cancel_test.ts` that catches it. */
  caughtBy: "abortWhileQueued" | "forkPoppedBackAfterAbort" | "forkStolenAfterAbort" | "forkKeptInlineAfterAbort";
}

/** A bug of the large-payload transport, and the scenario of `tests/pool/payload_test.ts` that catches it. */
export interface PayloadMutant extends Omit<PoolMutant, "caughtBy"> {
  caughtBy: "everySize" | "steadyStream" | "smallArena" | "deferredArgs" | "transferredResults";
}

/** The payload mutants: each is caught by a scenario of tests/pool/payload_test.ts. */
export const PAYLOAD_MUTANTS: readonly PayloadMutant[] = [
  {
    name: "slab_never_given",
    module: "record/slabs.ts",
    bug: "a freed slab is not given back: every large payload carves new bytes, and the arena only grows",
    patches: [{
      find:
        "    mem.store(this.words, HEADER_WORDS + slot * SLOT_WORDS + SlotWords.state, SlabState.FREE); // spec: FreeGive\n",
      replace: "    void slot; // BUG: never FREE again\n",
    }],
    caughtBy: "steadyStream",
  },
  {
    name: "reset_ignores_held",
    module: "record/slabs.ts",
    bug: "the arena is reset while slabs are held: new slabs overlap the bytes of payloads in flight",
    patches: [{
      find: "      const claimed = (state === SlabState.FREE || state === SlabState.EMPTY) &&\n",
      replace: "      const claimed = state !== SlabState.MAKING && // BUG: held slabs are claimed too\n",
    }],
    caughtBy: "smallArena",
  },
  {
    name: "run_padding_not_skipped",
    module: "codec/decoder.ts",
    bug: "the decoder does not skip the alignment padding of a long run of bytes: it reads them shifted",
    patches: [{ find: "      this.pos += pad;\n", replace: "      void pad; // BUG: padding read as data\n" }],
    caughtBy: "everySize",
  },
  {
    name: "defer_padding_ignores_deferred",
    module: "codec/scratch.ts",
    bug: "a long run's alignment padding is counted from the scratch, not the encoding: after a deferred run of " +
      "odd length, the next run is padded wrongly and decodes shifted",
    patches: [{
      find: "      for (let pad = -(pos + this.deferredBytes) & (RUN_ALIGN - 1); pad > 0; pad--) out[pos++] = 0;\n",
      replace:
        "      for (let pad = -pos & (RUN_ALIGN - 1); pad > 0; pad--) out[pos++] = 0; // BUG: deferred bytes not counted\n",
    }],
    caughtBy: "deferredArgs",
  },
  {
    name: "defer_despite_getters",
    module: "codec/scratch.ts",
    bug: "runs are deferred whatever follows them: a getter read after a large argument rewrites its bytes " +
      "before they are copied",
    patches: [{
      find: "  if (value === null) return true;\n  if (ArrayBuffer.isView(value))",
      replace: "  return true; // BUG: every object counted inert\n  if (ArrayBuffer.isView(value))",
    }],
    caughtBy: "deferredArgs",
  },
  {
    name: "transfer_takes_the_original",
    module: "codec/encoder.ts",
    bug: "a large result's own buffer is transferred, not a copy of its bytes: the task's buffer is detached " +
      "under it, and a view at an offset arrives as the wrong bytes",
    patches: [{
      find: "      const index = this.moved.push(new Uint8Array(buffer, value.byteOffset, n).slice().buffer) - 1;\n",
      replace: "      const index = this.moved.push(buffer as ArrayBuffer) - 1; // BUG: the original, not a copy\n",
    }],
    caughtBy: "transferredResults",
  },
];

/**
 * A bug of how long strings and long runs of bytes are written and read (issue 31), caught by
 * `tests/codec/codec_test.ts`: its round trips, and the alignment property of long runs.
 */
export interface TextMutant {
  name: string;
  module: "codec/decoder.ts" | "codec/format.ts" | "codec/text.ts";
  bug: string;
  patches: Patch[];
}

/**
 * The long-string mutants. The checks run under Deno, which writes with `encodeInto` (text.ts): the Node
 * branch (`latin1Write` after the wide-character test) is not mutated here, and runs in the Node suite.
 */
export const TEXT_MUTANTS: readonly TextMutant[] = [
  {
    name: "utf8_drops_bom",
    module: "codec/decoder.ts",
    bug: "the UTF-8 decoder is the default one, which drops a leading U+FEFF as a byte-order mark",
    patches: [{
      find: 'const utf8Decoder = new TextDecoder("utf-8", { ignoreBOM: true, fatal: true });\n',
      replace: 'const utf8Decoder = new TextDecoder("utf-8", { fatal: true }); // BUG: drops a leading U+FEFF\n',
    }],
  },
  {
    name: "one_byte_any_width",
    module: "codec/text.ts",
    bug: "a string counts as one byte a code unit when encodeInto read all of it, whatever it wrote (Latin-1 " +
      "above ASCII takes two bytes, a wide unit three): UTF-8 bytes are sent as Latin-1",
    patches: [{
      find: "  return read === n && written === n;\n",
      replace: "  return read === n; // BUG: written not checked\n",
    }],
  },
  {
    name: "runs_aligned_to_8",
    module: "codec/format.ts",
    bug: "long runs of bytes are aligned to 8 from the encoding's start, not 16 (encoder and decoder alike, so " +
      "every value still round-trips): Bun copied 64 KiB into shared memory three times slower",
    // One constant of the format, which the encoder's padding (scratch.ts) and the decoder's skip read.
    patches: [{ find: "export const RUN_ALIGN = 16;\n", replace: "export const RUN_ALIGN = 8; // BUG: 8\n" }],
  },
  {
    name: "one_byte_read_short",
    module: "codec/text.ts",
    bug: "the runtime's Latin-1 read stops a byte short: every long one-byte string loses its last code unit",
    patches: [{
      find: "  return latin1?.latin1Slice.call(bytes, p, p + n);\n",
      replace: "  return latin1?.latin1Slice.call(bytes, p, p + n - 1); // BUG: one short\n",
    }],
  },
];

/** A bug of the kill guard (lib/protocol/kill_guard.ts and its uses), caught by `tests/pool/force_test.ts`'s forced churn. */
export type ForceMutant = Omit<PoolMutant, "caughtBy">;

/**
 * The kill-guard mutants: each lets a forced kill land inside one of the pool's own steps, which the
 * forced churn of tests/pool/force_test.ts must notice (a stranded record or task). The Dekker order of the
 * handshake (a worker reading the epoch before it raises its guard, the main thread reading the guard before
 * it moves the epoch) is not among them: its window is a few instructions wide, which no pool test hits; TLC
 * shows those bugs (spec/mutants.ts, GuardReadsEpochFirst), and so does the interleaving harness on the
 * module itself (KILL_GUARD_MUTANTS below, tests/lincheck/kill_guard_test.ts).
 */
export const FORCE_MUTANTS: readonly ForceMutant[] = [
  {
    name: "kill_ignores_guard",
    module: "protocol/kill_guard.ts",
    bug: "the main thread terminates a worker without reading its guard: the kill can land inside a pool step",
    patches: [{
      find: "    if (mem.load(this.status, at + StatusWords.guard) === 0) { // spec: KillReadGuard\n",
      replace: "    if (mem.load(this.status, at + StatusWords.guard) !== 2) { // BUG: the guard is not read\n",
    }],
  },
  {
    name: "join_keeps_guard_down",
    module: "worker/fork_join.ts",
    bug: "join does not raise the guard: a worker killed while in user code may be inside join's steps",
    patches: [{
      find: "  joinForked(handle: number): unknown {\n    this.guard.enter();\n",
      replace: "  joinForked(handle: number): unknown {\n    // BUG: the guard stays down in join\n",
    }],
  },
];

/** The pool mutants: each a bug the pool-level tests must catch (tests/pool/cancel_test.ts). */
export const POOL_MUTANTS: readonly PoolMutant[] = [
  {
    name: "start_stores_running",
    module: "worker/runner.ts",
    bug: "a worker starts a task with a store of RUNNING, not a compare-exchange from QUEUED: a cancelled task runs",
    patches: [{
      find: "const before = mem.compareExchange(words, stateAt, TaskState.QUEUED, TaskState.RUNNING);",
      replace:
        "const before = mem.exchange(words, stateAt, TaskState.RUNNING) === -1 ? -1 : TaskState.QUEUED; // BUG: a store, whatever the state",
    }],
    caughtBy: "abortWhileQueued",
  },
  {
    name: "thief_runs_aborted_fork",
    module: "worker/runner.ts",
    bug: "a worker starting a fork does not read its root's abort mark: a thief runs the fork of an aborted task",
    patches: [{
      find:
        "    // joiner goes on; a submitted task, if the abort came while it was handed back to the queue (below).\n" +
        "    if ((flags & TaskFlags.ABORTED) !== 0) {\n",
      replace:
        "    // joiner goes on; a submitted task, if the abort came while it was handed back to the queue (below).\n" +
        "    if (false) { // BUG: the root's abort mark is not read\n",
    }],
    caughtBy: "forkStolenAfterAbort",
  },
  {
    name: "joiner_runs_aborted_fork",
    module: "worker/fork_join.ts",
    bug: "a joiner that pops its fork back runs it although the task that made it was aborted",
    patches: [{
      find: "    // Cancelled with the task that made it: not run (as a thief would not run it).\n" +
        "    const reason = root >= 0 ? this.signals.abortReason(root) : undefined;\n",
      replace: "    // Cancelled with the task that made it: not run (as a thief would not run it).\n" +
        "    const reason = undefined; // BUG: the root's abort mark is not read\n",
    }],
    caughtBy: "forkPoppedBackAfterAbort",
  },
  {
    name: "kept_inline_runs_aborted",
    module: "worker/fork_join.ts",
    bug: "a join's b kept inline (never forked) runs although the task that made it was aborted",
    patches: [{
      find: "    // One load of the root's flags, as runInline makes for a fork popped back.\n" +
        "    const reason = root >= 0 ? this.signals.abortReason(root) : undefined;\n",
      replace: "    // One load of the root's flags, as runInline makes for a fork popped back.\n" +
        "    const reason = undefined; // BUG: the root's abort mark is not read\n",
    }],
    caughtBy: "forkKeptInlineAfterAbort",
  },
];

/** A bug of the lazy join (lib/worker/fork_join.ts `keepsInline`), and the scenario of `tests/pool/join_test.ts` that catches it. */
export interface JoinMutant extends Omit<PoolMutant, "caughtBy"> {
  caughtBy: "snapshotKeptInline" | "stealsOnTwo" | "nothingForkedOnOne";
}

/** The lazy-join mutants: each is caught by a scenario of tests/pool/join_test.ts. */
export const JOIN_MUTANTS: readonly JoinMutant[] = [
  {
    name: "kept_inline_takes_objects",
    module: "worker/fork_join.ts",
    bug: "a join keeps b inline even with an object argument: b sees what a did to it, not the value at the fork",
    patches: [{
      find:
        '      if (type === "object" ? v !== null && !isShared(v as object) : type === "function" || type === "symbol") {\n',
      replace: '      if (type === "function" || type === "symbol") { // BUG: every object kept inline too\n',
    }],
    caughtBy: "snapshotKeptInline",
  },
  {
    name: "join_never_forks",
    module: "worker/fork_join.ts",
    bug: "a join never forks a b of primitive arguments: idle workers find nothing to steal",
    patches: [{
      find: "    if (this.workers !== 1 && this.dequeDepth() < LAZY_DEQUE_DEPTH) return false;\n",
      replace:
        "    if (LAZY_DEQUE_DEPTH < 0) return false; // BUG: the deque is not asked: kept inline whenever its arguments allow\n",
    }],
    caughtBy: "stealsOnTwo",
  },
  {
    name: "join_always_forks",
    module: "worker/fork_join.ts",
    bug: "a join forks every b, even on a pool of one worker where nobody can steal it (the eager join)",
    patches: [{
      find: "    if (this.workers !== 1 && this.dequeDepth() < LAZY_DEQUE_DEPTH) return false;\n",
      replace: "    if (LAZY_DEQUE_DEPTH > 0) return false; // BUG: never kept inline\n",
    }],
    caughtBy: "nothingForkedOnOne",
  },
];

/** A bug of the submission backlog (lib/producer/backlog.ts), caught by tests/pool/backlog_test.ts's model check. */
export interface BacklogMutant {
  name: string;
  module: "producer/backlog.ts";
  bug: string;
  patches: Patch[];
}

/** The backlog's mutants. */
export const BACKLOG_MUTANTS: readonly BacklogMutant[] = [
  {
    name: "backlog_moves_bytes_keeps_base",
    module: "producer/backlog.ts",
    bug: "moving the live bytes to the buffer's front does not update where position 0 is: every waiting " +
      "entry's bytes are read from the wrong place",
    patches: [{ find: "    this.base = this.start;\n", replace: "    // BUG: base not moved with the bytes\n" }],
  },
  {
    name: "backlog_leave_frees_all",
    module: "producer/backlog.ts",
    bug: "an entry that leaves releases every byte up to the end, those of the entries still waiting too: " +
      "a compaction then overwrites them",
    patches: [{
      find: "    this.start = entry.bytesAt + entry.bytesLength;\n",
      replace: "    this.start = this.end; // BUG: frees the bytes of the entries still waiting\n",
    }],
  },
  {
    name: "backlog_ring_grows_from_slot_zero",
    module: "producer/backlog.ts",
    bug: "the ring, grown, copies its entries from slot 0 rather than from the oldest: once it has wrapped, " +
      "entries are placed out of order, twice or never",
    patches: [{
      find: "    for (let i = 0; i < this.count; i++) next[i] = ring[(this.head + i) & (ring.length - 1)];\n",
      replace: "    for (let i = 0; i < this.count; i++) next[i] = ring[i]; // BUG: ignores where the oldest is\n",
    }],
  },
  {
    name: "backlog_shift_keeps_entry",
    module: "producer/backlog.ts",
    bug: "an entry that leaves stays in its slot: the backlog keeps every placed entry (and its promise's " +
      "resolving functions) alive until the slot is reused",
    patches: [{
      find: "    ring[this.head] = undefined;\n",
      replace: "    // BUG: the slot keeps the entry\n",
    }],
  },
  {
    name: "backlog_trim_while_waiting",
    module: "producer/backlog.ts",
    bug: "a trim gives back a grown buffer while entries wait in it: their bytes are lost",
    patches: [{
      find:
        "    return this.count === 0 && (this.buffer.length > RETAINED_BYTES || this.ring.length > RETAINED_ENTRIES);\n",
      replace:
        "    return this.buffer.length > RETAINED_BYTES || this.ring.length > RETAINED_ENTRIES; // BUG: entries may wait\n",
    }],
  },
];

/** A bug of `pool.map` (lib/producer/map.ts), caught by tests/pool/backpressure_test.ts in the mutation run. */
export interface MapMutant {
  name: string;
  module: "producer/map.ts";
  bug: string;
  patches: Patch[];
}

/** The map's mutants. */
export const MAP_MUTANTS: readonly MapMutant[] = [
  {
    name: "map_end_aborts_nothing",
    module: "producer/map.ts",
    bug: "a map that ends early (break, error, signal) does not abort its tasks in flight: those still " +
      "queued run after the map has ended",
    patches: [{
      find:
        '      stop.abort(signal?.aborted ? signal.reason : new DOMException("The map ended early", "AbortError"));\n',
      replace: "      // BUG: nothing in flight is aborted\n",
    }],
  },
];

/** A bug of the completion reader's linger (lib/producer/completion.ts), caught by tests/pool/order_test.ts. */
export interface LingerMutant {
  name: string;
  module: "producer/completion.ts";
  bug: string;
  patches: Patch[];
}

/**
 * The linger's mutants: a reader that lingers and never reads again hangs every pool with a backlog
 * (order_test's 16-record pool). The rule that stops lingering once the workers may run dry is a matter of
 * speed only, measured in bench/experiments/main_cpu.ts, not a test's.
 */
export const LINGER_MUTANTS: readonly LingerMutant[] = [
  {
    name: "linger_never_reads",
    module: "producer/completion.ts",
    bug: "a linger's timer ends the linger but reads nothing and arms nothing: with a backlog, the reader " +
      "never reads again and every task still in flight or waiting hangs",
    patches: [{ find: "    this.readThenWait(true);\n", replace: "    // BUG: the linger reads nothing\n" }],
  },
];

/**
 * A bug of a worker's own repair of a step in the order that its copy in the pool's buffer (what recovery
 * reads if the thread dies) and the repair itself are written; caught by tests/pool/death_test.ts, which ends a
 * real worker at each access to a region, in the mutation run (group death).
 */
export interface DeathMutant {
  name: string;
  module: "worker/marks.ts";
  bug: string;
  patches: Patch[];
}

/** The death mutants: a mark's shared copy cleared before the record it names is freed. */
export const DEATH_MUTANTS: readonly DeathMutant[] = [
  {
    name: "refused_fork_mark_cleared_first",
    module: "worker/marks.ts",
    bug: "the repair of a fork refused by a full deque clears the pushing mark's shared copy before it frees " +
      "the record: a worker that dies in the release leaves a QUEUED fork in no deque and no mark, stranded",
    patches: [
      {
        find: "  private repairPushing(): void {\n",
        replace: "  private repairPushing(): void {\n    this.words[MarkWords.pushing] = -1; // BUG: cleared first\n",
      },
    ],
  },
];

/**
 * A bug of the sorts of `examples/sort/tasks.ts` against the runtime's own sort (issue 31): the split by
 * value (`sortBySplit`), the merges' order of -0 and +0, and the bucket sort (`sortByBuckets`); caught by
 * tests/examples/sort_split_test.ts or tests/examples/sort_buckets_test.ts in the mutation run.
 */
export interface SortMutant {
  name: string;
  module: "sort/tasks.ts";
  bug: string;
  patches: Patch[];
}

/**
 * The sort mutants: a split that loses values, sides sorted while the other is still being placed, a merge
 * that holds -0 and +0 equal, and bucket sorts that misplace values (parts writing over each other, values
 * above the sample's range or NaN counted in the first cell).
 */
export const SORT_MUTANTS: readonly SortMutant[] = [
  {
    name: "split_back_moves_with_front",
    module: "sort/tasks.ts",
    bug: "the split's back end moves when a value went to the front: high values overwrite each other",
    patches: [{ find: "    back -= 1 - below;\n", replace: "    back -= below; // BUG\n" }],
  },
  {
    name: "split_side_sorts_before_other_placed",
    module: "sort/tasks.ts",
    bug: "each side of a split is placed and sorted in one step: a side's sort uses its range of the scratch " +
      "array while the other side may still be copying its pieces out of it",
    patches: [
      {
        find: "  join(\n    () => place(a, b, lo, low1, mid, low2, lo),\n",
        replace: "  join(\n    () => placeThenSort(a, b, lo, low1, mid, low2, lo, cutoff),\n",
      },
      {
        find: "    place,\n    a,\n    b,\n    lo + low1,\n",
        replace: "    placeThenSort,\n    a,\n    b,\n    lo + low1,\n",
      },
      { find: "    cut,\n  );\n", replace: "    cut,\n    cutoff,\n  );\n  return;\n" },
      {
        find: "/**\n * The median of 255",
        replace:
          "export function placeThenSort(\n  a: Sortable,\n  b: Sortable,\n  from1: number,\n  length1: number,\n" +
          "  from2: number,\n  length2: number,\n  to: number,\n  cutoff: number,\n): void {\n" +
          "  place(a, b, from1, length1, from2, length2, to);\n" +
          "  sortBySplit(a, b, to, to + length1 + length2, cutoff);\n}\n\n/**\n * The median of 255",
      },
    ],
  },
  {
    name: "merge_holds_zeros_equal",
    module: "sort/tasks.ts",
    bug: "the merges and the insertion sort compare with `<` alone: +0 can end up before -0, where the " +
      "runtime's sort puts -0 first",
    patches: [{ find: "  return x < y || (x === y && 1 / x < 1 / y);\n", replace: "  return x < y; // BUG\n" }],
  },
  {
    name: "bucket_places_ignore_earlier_part",
    module: "sort/tasks.ts",
    bug: "each part's places in a bucket skip the values of the part itself, not of the part before: parts " +
      "write over each other's values in the scratch array",
    patches: [
      {
        find: "next[p * buckets + cellBucket[c]] += counts[(p - 1) * CELLS + c];",
        replace: "next[p * buckets + cellBucket[c]] += counts[p * CELLS + c]; // BUG",
      },
    ],
  },
  {
    name: "int32_above_sample_in_first_cell",
    module: "sort/tasks.ts",
    bug: "an int32 above the sample's greatest value counts (and is copied) into the first cell, not the last",
    patches: [{ find: "x > greatest ? CELLS - 1 :", replace: "x > greatest ? 0 :", count: 2 }],
  },
  {
    name: "nan_in_first_cell",
    module: "sort/tasks.ts",
    bug: "a float64 whose cell is not a number (NaN) counts into the first cell, where the runtime's sort puts " +
      "NaN last",
    patches: [{ find: ": (c < 0 ? 0 : CELLS - 1);", replace: ": 0; // BUG" }],
  },
];

/**
 * A bug of the order in which workers take tasks from outside (lib/worker/search.ts, issue 30), caught by
 * tests/pool/order_test.ts in the mutation run.
 */
export interface OrderMutant {
  name: string;
  module: "worker/search.ts";
  bug: string;
  patches: Patch[];
}

/** The order mutants: each moves a batch from the injector into the worker's deque, as the code once did. */
export const ORDER_MUTANTS: readonly OrderMutant[] = [
  {
    name: "injector_batch_runs_newest_first",
    module: "worker/search.ts",
    bug: "a worker moves a batch from the injector into its own deque, which it pops newest first: each " +
      "batch runs in reverse, and other workers take newer tasks from the injector meanwhile",
    patches: [{
      find: "      this.stats.bump(StatusWords.injectorPops);\n",
      replace: "      // BUG: a batch moved into our deque, popped newest first\n" +
        "      const want = Math.min((this.levels.length / this.stealers.length) | 0, this.deque.capacity >> 1, 64);\n" +
        "      for (let moved = 0; moved < want; moved++) {\n" +
        "        const next = this.levels.take();\n" +
        "        if (next === QUEUE_EMPTY) break;\n" +
        "        if (!this.deque.push(next)) {\n" +
        "          this.levels.pushPatiently(next, 1);\n" +
        "          break;\n" +
        "        }\n" +
        "      }\n" +
        "      this.stats.bump(StatusWords.injectorPops);\n",
    }],
  },
  {
    name: "injector_batch_kept_in_order",
    module: "worker/search.ts",
    bug: "a worker moves a batch from the injector into its own deque in reverse, so that it runs the batch " +
      "oldest first; but while its deque holds the batch, other workers take newer tasks from the injector",
    patches: [{
      find: "      this.stats.bump(StatusWords.injectorPops);\n",
      replace: "      // BUG: a batch moved into our deque, newest pushed first so that we pop it oldest first\n" +
        "      const want = Math.min((this.levels.length / this.stealers.length) | 0, this.deque.capacity >> 1, 64);\n" +
        "      const batch: number[] = [];\n" +
        "      while (batch.length < want) {\n" +
        "        const next = this.levels.take();\n" +
        "        if (next === QUEUE_EMPTY) break;\n" +
        "        batch.push(next);\n" +
        "      }\n" +
        "      for (let k = batch.length - 1; k >= 0; k--) {\n" +
        "        if (!this.deque.push(batch[k])) this.levels.pushPatiently(batch[k], 1);\n" +
        "      }\n" +
        "      this.stats.bump(StatusWords.injectorPops);\n",
    }],
  },
];

/**
 * A bug of the priority levels (lib/protocol/levels.ts, issue 30), caught by tests/pool/priority_test.ts in the
 * mutation run.
 */
export interface LevelsMutant {
  name: string;
  module: "protocol/levels.ts";
  bug: string;
  patches: Patch[];
}

/**
 * The levels' mutants: a level never served, the levels served upside down, a level never announced, a
 * streak never restarted, a lower level looked at by popping (its order lost).
 */
export const LEVELS_MUTANTS: readonly LevelsMutant[] = [
  {
    name: "level_quota_ignored",
    module: "protocol/levels.ts",
    bug: "a worker never serves a lower level first, however long it waited: low tasks starve under a " +
      "stream of higher ones",
    patches: [{
      find: "      if (streaks[level] < LEVEL_QUOTA) continue;\n",
      replace: "      if (streaks[level] >= 0) continue; // BUG: never first\n",
    }],
  },
  {
    name: "levels_served_low_first",
    module: "protocol/levels.ts",
    bug: "a worker takes from the lowest level with tasks first: priorities upside down",
    patches: [{
      find:
        "    for (let level = 0; level < LEVELS; level++) {\n      const task = queues[level].pop(into, at); // spec: FindPopLevel\n",
      replace:
        "    for (let level = LEVELS - 1; level >= 0; level--) { // BUG: low first\n      const task = queues[level].pop(into, at); // spec: FindPopLevel\n",
    }],
  },
  {
    name: "level_never_announced",
    module: "protocol/levels.ts",
    bug: "a producer pushes into the high or low queue without announcing the level: workers that never " +
      "saw it announced take from the normal queue alone, and those tasks never run",
    patches: [{
      find: "      mem.or(this.control, ControlWords.levels, 1 << level); // spec: SubmitAnnounceLevel\n",
      replace: "      // BUG: not announced\n",
    }],
  },
  {
    name: "streak_not_restarted",
    module: "protocol/levels.ts",
    bug: "a level's streak is not restarted when it is served: once starved, it is served first for good, " +
      "ahead of every higher level",
    patches: [{
      find: "    this.streaks[level] = 0;\n    for (let lower",
      replace: "    // BUG: the streak goes on\n    for (let lower",
    }],
  },
  {
    name: "lower_level_peeked_by_popping",
    module: "protocol/levels.ts",
    bug: "after a take, a worker looks at each lower level by popping its oldest task and pushing it back " +
      "instead of reading its length: that task loses its place, and the level is no longer taken in " +
      "submission order (caught by tests/lincheck/levels_test.ts's taken-in-order)",
    patches: [{
      find: "      if (this.queues[lower].length > 0) this.streaks[lower]++; // spec: TookCountLower\n",
      replace: "      const peeked = this.queues[lower].pop(); // BUG: a look that moves the task to the back\n" +
        "      if (peeked !== QUEUE_EMPTY) {\n" +
        "        this.queues[lower].pushPatiently(peeked);\n" +
        "        this.streaks[lower]++;\n" +
        "      }\n",
    }],
  },
];

/**
 * A bug of the pool memory (`lib/protocol/memory.ts`, the views every part takes), caught by a real pool's
 * checks in the mutation run: the memory is wiring, not a protocol of its own, so its mutants open a region
 * in the wrong place, and the protocol that lives there shows it.
 */
export interface MemoryMutant {
  name: string;
  module: "protocol/memory.ts";
  bug: string;
  patches: Patch[];
}

/** The pool memory's mutants. */
export const MEMORY_MUTANTS: readonly MemoryMutant[] = [
  {
    name: "levels_share_one_queue",
    module: "protocol/memory.ts",
    bug: "the pool memory opens the normal level's region for every level: the three priorities become one " +
      "FIFO queue, and a high task waits behind every older normal or low one",
    patches: [{
      find: "    return levelRegions(layout).map((byteOffset) => ({ buffer, byteOffset, capacity })) as [\n",
      replace:
        "    return levelRegions(layout).map(() => ({ buffer, byteOffset: levelRegions(layout)[1], capacity })) as [ // BUG: one region\n",
    }],
  },
];

/**
 * A bug of progress from a task to its caller (lib/progress/, issue 51), caught by
 * tests/pool/progress_test.ts in the mutation run.
 */
export interface ProgressMutant {
  name: string;
  module: "producer/progress_reader.ts" | "progress/reporter.ts" | "progress/cell.ts";
  bug: string;
  patches: Patch[];
}

/** Progress's mutants. */
export const PROGRESS_MUTANTS: readonly ProgressMutant[] = [
  {
    name: "progress_delivered_after_settle",
    module: "producer/progress_reader.ts",
    bug: "a value read before its task settled by another way (an abort, here by another task's handler) is " +
      "still delivered, after the settle",
    patches: [{
      find: "      if (entry.settled && !completed.has(entry)) continue;\n",
      replace: "      // BUG: delivered whatever settled meanwhile\n",
    }],
  },
  {
    name: "progress_notice_lost",
    module: "progress/reporter.ts",
    bug: "a report that fills an empty cell never raises its producer's progress word: the caller hears of " +
      "nothing until the task ends (only the last value, read at its settle)",
    patches: [{
      find: "    if (cells.write(root, handle, length) !== Filled.NOTICE) return;\n",
      replace: "    if (cells.write(root, handle, length) !== Filled.DROPPED) return; // BUG: no notice\n",
    }],
  },
];

/**
 * A bug of task graphs: of their walk (lib/graph/walk.ts, spec/Graph.tla's mutants in the code), caught by
 * tests/pool/graph_test.ts, or of their nodes' progress and forks (lib/graph/graph.ts, lib/worker/runner.ts),
 * caught by tests/pool/graph_progress_test.ts, in the mutation run (group graph).
 */
export interface GraphMutant {
  name: string;
  module: "graph/walk.ts" | "graph/graph.ts" | "worker/runner.ts";
  bug: string;
  patches: Patch[];
}

/** The graph walk's mutants. */
export const GRAPH_MUTANTS: readonly GraphMutant[] = [
  {
    name: "graph_no_stack_reserve",
    module: "graph/graph.ts",
    bug: "submit() does not reserve stack before placing: a graph submitted near the stack's limit is cut " +
      "halfway, its records and entries stranded (tests/pool/graph_stack_test.ts)",
    patches: [{
      find: "    reserveStack();\n",
      replace: "    // BUG: no reserve (reserveStack not called)\n",
    }],
  },
  {
    name: "graph_nested_node_no_stack_reserve",
    module: "worker/runner.ts",
    bug: "a graph node taken inside a join's wait runs with no stack reserved: at the join's depth its walk is " +
      "cut short by the stack's limit, a dependant never counted down (or counted twice by the repair) " +
      "(tests/pool/graph_join_depth_test.ts)",
    patches: [{
      find: "TaskFlags.GRAPH) !== 0) reserveStack();\n",
      replace: "TaskFlags.GRAPH) !== 0) void 0; // BUG: no reserve\n",
    }],
  },
  {
    name: "graph_decrement_twice",
    module: "graph/walk.ts",
    bug: "a walk decrements a dependant's count again when the first decrement did not reach zero " +
      "(spec mutant CountDecrementedTwice): a join starts before its other input published its result",
    patches: [{
      find: "      if (graph.decrement(ti) === 1) this.own(target, ti); // spec: WalkDecrement\n",
      replace:
        "      if (graph.decrement(ti) === 1 || graph.decrement(ti) === 1) this.own(target, ti); // BUG: twice\n",
    }],
  },
  {
    name: "graph_start_at_two",
    module: "graph/walk.ts",
    bug: "the decrement that reads 2, not 1, owns the dependant (spec mutant StartAtOne): a join starts early, " +
      "a continuation never",
    patches: [{
      find: "      if (graph.decrement(ti) === 1) this.own(target, ti); // spec: WalkDecrement\n",
      replace: "      if (graph.decrement(ti) === 2) this.own(target, ti); // BUG: the wrong decrement\n",
    }],
  },
  {
    name: "graph_rejected_leaves_waiting",
    module: "graph/walk.ts",
    bug: "a failed node's walk marks its dependants' cause but does not decrement their counts " +
      "(spec mutant RejectedInputLeavesWaiting): they wait for ever, and so does the graph",
    patches: [{
      find: "      if (graph.decrement(ti) === 1) this.own(target, ti); // spec: WalkDecrement\n",
      replace:
        "      if (cause === 0 && graph.decrement(ti) === 1) this.own(target, ti); // BUG: no decrement after a failure\n",
    }],
  },
  {
    name: "graph_zero_ignores_cause",
    module: "graph/walk.ts",
    bug: "the decrement that reaches zero queues the dependant without reading its cause " +
      "(spec mutant ZeroIgnoresCause): a node downstream of a failure runs",
    patches: [{
      find: "    const cause = this.graph.loadCause(index);\n    const to = cause === 0",
      replace: "    const cause = 0; // BUG: the cause is not read\n    const to = cause === 0",
    }],
  },
  {
    name: "graph_progress_not_returned",
    module: "graph/graph.ts",
    bug: "a graph with a progress handler marks its nodes PROGRESS but brings back only the records it did " +
      "without one: an intermediate node has no entry and no watched cell, so its reports reach nobody",
    patches: [{
      find: "      const returns = asked !== undefined || sink || cancellable || onProgress !== undefined;\n",
      replace:
        "      const returns = asked !== undefined || sink || cancellable; // BUG: progress does not bring nodes back\n",
    }],
  },
  {
    name: "graph_fork_gathers_slots",
    module: "worker/runner.ts",
    bug: "a fork of a graph node (its root's flags say GRAPH) gathers argument slots from its own record's " +
      "stale graph words, as the node does: a join inside a node returns garbage",
    patches: [{
      find: "    const node = !forked && (flags & TaskFlags.GRAPH) !== 0;\n",
      replace: "    const node = (flags & TaskFlags.GRAPH) !== 0; // BUG: a fork gathers as its node\n",
    }],
  },
];

/**
 * A bug of the graph's concurrency (lib/graph/walk.ts, lib/graph/submit.ts): an order or an atomicity that
 * only a race breaks, caught by the interleaving harness (tests/lincheck/graph_test.ts, group
 * graph_lincheck); tests/pool/graph_test.ts runs real workers and sees them rarely if at all.
 */
export interface GraphLincheckMutant {
  name: string;
  module: "graph/walk.ts" | "graph/submit.ts";
  bug: string;
  patches: Patch[];
}

/** The graph's race mutants: a publish order, a cause order, two compare-exchanges made plain. */
export const GRAPH_LINCHECK_MUTANTS: readonly GraphLincheckMutant[] = [
  {
    name: "graph_slot_after_decrement",
    module: "graph/walk.ts",
    bug: "a resolved input's walk writes its result into the dependant's slot after its decrement, not before " +
      "(spec mutant ReadBeforePublish): the walker that takes the count to zero starts the node, which reads " +
      "a slot not written yet",
    patches: [
      {
        find: "      if (cause === 0) {\n        this.writeSlot(at, source!);\n",
        replace: "      // BUG: a resolved input decrements before its slot's write\n" +
          "      const early = cause === 0 && graph.decrement(ti) === 1;\n" +
          "      if (cause === 0) {\n        this.writeSlot(at, source!);\n",
      },
      {
        find: "      if (graph.decrement(ti) === 1) this.own(target, ti); // spec: WalkDecrement\n",
        replace: "      if (cause === 0 ? early : graph.decrement(ti) === 1) this.own(target, ti);\n",
      },
    ],
  },
  {
    name: "graph_cause_after_decrement",
    module: "graph/walk.ts",
    bug: "a failed input's walk marks the dependant's cause after its decrement, not before: a resolved " +
      "input's walker that takes the count to zero in between reads no cause and starts a node whose input failed",
    patches: [
      {
        find: "      } else if (graph.markCause(ti, cause) === 0 && source !== undefined) { // spec: WalkMarkCause\n",
        replace:
          "      }\n      const last = graph.decrement(ti) === 1; // BUG: the decrement before the cause's mark\n" +
          "      if (cause !== 0 && graph.markCause(ti, cause) === 0 && source !== undefined) {\n",
      },
      {
        find: "      if (graph.decrement(ti) === 1) this.own(target, ti); // spec: WalkDecrement\n",
        replace: "      if (last) this.own(target, ti);\n",
      },
    ],
  },
  {
    name: "graph_zero_store_not_cas",
    module: "graph/walk.ts",
    bug: "the walker that takes a count to zero stores QUEUED (or REJECTED) instead of its compare-exchange from " +
      "WAITING: when the owner's cancellation moved the node to CANCELLED first, both win, and a cancelled node runs",
    patches: [{
      find: "    const found = this.table.fields.casState(index, TaskState.WAITING, to); // spec: ZeroCasState\n",
      replace: "    this.table.fields.storeState(index, to); // BUG: a store, not the compare-exchange\n" +
        "    const found: number = TaskState.WAITING;\n",
    }],
  },
  {
    name: "graph_cancel_store_not_cas",
    module: "graph/submit.ts",
    bug: "the cancellation's visit loads a node's state and stores CANCELLED if it was WAITING or QUEUED, " +
      "instead of its compare-exchanges: a zero-reacher or a claim in between wins too, and the store " +
      "overwrites REJECTED, QUEUED or RUNNING",
    patches: [{
      find:
        "    let was = mem.compareExchange(words, state, TaskState.WAITING, TaskState.CANCELLED); // spec: CancelCasNode\n" +
        "    if (was === TaskState.QUEUED) was = mem.compareExchange(words, state, TaskState.QUEUED, TaskState.CANCELLED);\n",
      replace: "    const was = mem.load(words, state); // BUG: a load, then a store, not the compare-exchange\n" +
        "    if (was === TaskState.WAITING || was === TaskState.QUEUED) mem.store(words, state, TaskState.CANCELLED);\n",
    }],
  },
];

/**
 * A bug of the bound on a worker's async tasks (the pool's `asyncTasksPerWorker`, issue 30), caught by
 * tests/pool/async_bound_test.ts in the mutation run.
 */
export interface AsyncBoundMutant {
  name: string;
  module: "worker/runner.ts" | "worker/loop.ts" | "worker/fork_join.ts" | "options.ts";
  bug: string;
  patches: Patch[];
}

/** A mutant of an elastic pool's code (issue 49; spec/Elastic.tla): a file of `lib/`. */
export interface ElasticMutant {
  name: string;
  module: "protocol/sleep.ts" | "protocol/slots.ts" | "owner/growth.ts" | "worker/loop.ts";
  bug: string;
  patches: Patch[];
}

/**
 * The elastic pool's mutants (group elastic): caught by tests/protocol/slots_test.ts (the retirement's
 * steps at the windows Elastic.tla's mutants exploit, one thread playing each side) or by
 * tests/pool/elastic_test.ts (real pools that grow and shrink). Elastic.tla's "a thief that steals from a
 * retired slot" is not kept: a slot that is not live has an empty deque (NoStrandedTask), so skipping it is
 * a saving, and a thief that reads it takes nothing (spec/docs/Elastic.md says why).
 */
export const ELASTIC_MUTANTS: readonly ElasticMutant[] = [
  {
    name: "retire_cas_is_store",
    module: "protocol/sleep.ts",
    bug: "the retirement stores RETIRING instead of its compare-exchange from SLEEPING: a wake that landed " +
      "after its reservation is overwritten, and the worker it woke leaves (Elastic.tla RetireStoresRetiring)",
    patches: [{
      find:
        "    if (mem.compareExchange(this.words, stateAt, SLEEPING, RETIRING) !== SLEEPING) { // spec: RetireCasSlot\n",
      replace: "    if (mem.store(this.words, stateAt, RETIRING) !== RETIRING) { // mutant: a store, not the CAS\n",
    }],
  },
  {
    name: "retire_without_uncount",
    module: "protocol/sleep.ts",
    bug: "the retiring worker never undoes its sleep count: posters scan for a sleeper that left, and the " +
      "owner, seeing one counted, does not grow (Elastic.tla RetireLeavesCount)",
    patches: [{
      find: "    mem.sub(this.words, SleepWords.counters, 1); // spec: RetireUncount\n",
      replace: "    // mutant: the sleep count is left behind\n",
    }],
  },
  {
    name: "retire_below_min",
    module: "protocol/slots.ts",
    bug: "the retirement's reservation checks the size against 0, not the minimum: the pool shrinks below " +
      "it (Elastic.tla RetireBelowMin)",
    patches: [{
      find: "      if (n <= min) return false;\n",
      replace: "      if (n <= 0) return false; // mutant: was n <= min\n",
    }],
  },
  {
    name: "growth_starts_none",
    module: "owner/growth.ts",
    bug: "the owner's growth marks a slot STARTING and reserves the size, but starts no thread: queued work " +
      "waits for workers that never come (Elastic.tla GrowthStartsNone)",
    patches: [{
      find: "    this.parts.start(index).then(\n",
      replace: "    Promise.resolve().then( // mutant: no thread started\n",
    }],
  },
  {
    name: "retire_tells_nobody",
    module: "worker/loop.ts",
    bug: "a retired worker does not tell the owner: its retirement is never counted, and the owner does not " +
      "look at growth after it (Elastic.tla NoGrowthAfterRetire)",
    patches: [{
      find: '    this.post({ type: "retired" });\n',
      replace: "    // mutant: the owner is not told\n",
    }],
  },
];

/** The bound's mutants. */
export const ASYNC_BOUND_MUTANTS: readonly AsyncBoundMutant[] = [
  {
    name: "async_bound_ignored",
    module: "worker/runner.ts",
    bug: "a worker never counts itself full: it takes tasks however many async ones it holds, so one worker " +
      "takes most of a burst and its death fails them all",
    patches: [{
      find: "    return this.pending >= this.asyncBound;\n",
      replace: "    return false; // BUG: the bound is ignored\n",
    }],
  },
  {
    name: "async_bound_room_never_wakes",
    module: "worker/runner.ts",
    bug: "an async task that settles does not end the loop's wait for room: a worker at its bound never " +
      "takes another task",
    patches: [{
      find: "    if (this.pending < this.asyncBound) this.wakeRoom();\n",
      replace: "    // BUG: the loop's wait for room is not ended\n",
    }],
  },
  {
    name: "async_bound_blocks_broadcasts",
    module: "worker/loop.ts",
    bug: "a broadcast part that reaches a worker waiting at its bound waits until one of its async tasks " +
      "settles: a broadcast those tasks wait for never runs",
    patches: [{
      find: "    this.mail.broadcast(id, taskId, bytes);\n    // A loop waiting",
      replace:
        "    this.mail.broadcast(id, taskId, bytes);\n    return; // BUG: the loop is not woken\n    // A loop waiting",
    }],
  },
  {
    name: "async_bound_join_searches",
    module: "worker/fork_join.ts",
    bug: "a join's wait searches for work whatever the bound: a worker waiting in a join takes every " +
      "queued async task",
    patches: [{
      find: "this.runner.full() ? -1 : this.search.findWork();",
      replace: "this.search.findWork(); // BUG: the bound is not asked",
    }],
  },
  {
    name: "async_bound_unchecked",
    module: "options.ts",
    bug: "asyncTasksPerWorker is not checked: 0 makes every worker full before its first task",
    patches: [{
      find: "  if (asyncTasksPerWorker !== Infinity) {\n",
      replace: "  if (false) { // BUG: never checked\n",
    }],
  },
];

/**
 * A bug of setup once per worker or of recycling (issue 49: lib/worker/setup.ts, lib/worker/boot.ts,
 * lib/worker/loop.ts, lib/owner/workforce.ts), or of what becomes of the tasks posted to a replacement that
 * fails to start (lib/owner/owner.ts, lib/owner/worker_deaths.ts), caught by
 * tests/pool/replacement_failure_test.ts, tests/pool/worker_setup_test.ts and tests/pool/recycle_test.ts in
 * the mutation run (group setup).
 */
export interface SetupMutant {
  name: string;
  module:
    | "worker/boot.ts"
    | "worker/loop.ts"
    | "owner/workforce.ts"
    | "owner/owner.ts"
    | "owner/worker_deaths.ts"
    | "owner/links.ts"
    | "producer/producer.ts";
  bug: string;
  patches: Patch[];
}

/**
 * A bug of issue 47's classes 5 to 8 (auditB): the wake for the rest of a burst, the async bound on a
 * directed task's path, the state changes on the recovery paths, the event loop held for a pool handle's
 * reply; caught by tests/pool/audit_b_test.ts and tests/protocol/recovery_paths_test.ts in the mutation run
 * (group audit_b).
 */
export interface AuditBMutant {
  name: string;
  module:
    | "worker/search.ts"
    | "worker/loop.ts"
    | "worker/handles.ts"
    | "worker/marks.ts"
    | "owner/recovery.ts"
    | "owner/producer_deaths.ts";
  bug: string;
  patches: Patch[];
}

/** Setup's and recycling's mutants. */
export const SETUP_MUTANTS: readonly SetupMutant[] = [
  {
    name: "setup_data_not_to_replacements",
    module: "owner/workforce.ts",
    bug: "a replacement's start message carries no workerData: only the first workers are set up with it",
    patches: [
      {
        find: "    this.slots[index] = slot;\n",
        replace:
          "    const replacement = this.slots[index] !== undefined; // BUG: below\n    this.slots[index] = slot;\n",
      },
      {
        find: '      thread.post({ type: "start", setup: this.setup(index) });\n',
        replace:
          '      thread.post({ type: "start", setup: { ...this.setup(index), ...(replacement ? { workerData: undefined } : {}) } });\n',
      },
    ],
  },
  {
    name: "setup_not_awaited",
    module: "worker/boot.ts",
    bug: "the worker reports ready without waiting for its setup: a task may run before it, and a setup " +
      "that throws is no load error",
    patches: [{
      find: "      await runWorkerSetup(module, setup.workerData",
      replace: "      void runWorkerSetup(module, setup.workerData", // BUG: not awaited
    }],
  },
  {
    name: "setup_exports_are_tasks",
    module: "worker/boot.ts",
    bug: "setupWorker and teardownWorker are not left out of the task functions: they run as tasks",
    patches: [{
      find: '    typeof module[name] === "function" && !RESERVED_EXPORTS.includes(name)',
      replace: '    typeof module[name] === "function" && RESERVED_EXPORTS.length > 0 // BUG: reserved names kept',
    }],
  },
  {
    name: "recycle_leaves_async_running",
    module: "worker/loop.ts",
    bug: "a recycling worker leaves without waiting for its async tasks: they never settle",
    patches: [{
      find: "    if (!this.leaveAllowed || this.pendingAsync() > 0 || mail.hasParts() || mail.hasDirected()) {\n",
      replace:
        "    if (!this.leaveAllowed || mail.hasParts() || mail.hasDirected()) { // BUG: async tasks not awaited\n",
    }],
  },
  {
    name: "recycle_drops_deque",
    module: "worker/loop.ts",
    bug: "a recycling worker empties its deque as it leaves: the tasks queued there are lost",
    patches: [{
      find: '    this.post({ type: "recycle-ready", reason });\n',
      replace: '    this.post({ type: "recycle-ready", reason });\n' +
        "    // deno-lint-ignore no-explicit-any\n" +
        "    while ((this.search as any).deque.pop() >= 0); // BUG: the deque's tasks are dropped\n",
    }],
  },
  {
    name: "recycle_failure_drops_held",
    module: "owner/owner.ts",
    bug: "a recycled worker's replacement that fails to start fails only its broadcast parts: the directed " +
      "tasks kept for it (their buffers moved) never settle",
    patches: [{
      find: '        this.deaths.startFailed(index, error);\n        ledger.report(error, "(worker recycle)");\n',
      replace:
        "        this.broadcaster.workerDied(index, error instanceof Error ? error : new Error(String(error))); " +
        '// BUG: its directed tasks are left pending\n        ledger.report(error, "(worker recycle)");\n',
    }],
  },
  {
    name: "replacement_failure_drops_posted",
    module: "owner/worker_deaths.ts",
    bug: "a dead worker's replacement that fails to start is only reported: directed tasks posted to it while " +
      "it loaded never settle",
    patches: [{
      find: "          this.startFailed(index, error);\n",
      replace: "          // BUG: what was posted to it is left pending\n",
    }],
  },
  {
    name: "vacant_index_post_dropped",
    module: "owner/owner.ts",
    bug: "a directed task posted to an index whose start failed (no worker left) is dropped: it never settles",
    patches: [{
      find: "    if (failure !== undefined) queueMicrotask(() => this.deaths.startFailed(worker, failure));\n",
      replace: "    if (failure !== undefined && failure === null) queueMicrotask(() => {}); // BUG: dropped\n",
    }],
  },
  {
    name: "replacement_failure_slot_kept",
    module: "owner/owner.ts",
    bug: "an elastic pool's dead worker whose replacement fails keeps its slot and size: it counts as current, " +
      "and growth never reuses the slot",
    patches: [{
      find: "      this.giveBack(index, error);\n    };\n",
      replace: "      // BUG: the slot and the size are not given back\n" +
        "      if (!this.noWorkerLive(index, error)) this.elastic!.growth.due();\n    };\n",
    }],
  },
  {
    name: "no_workers_left_ignored",
    module: "owner/owner.ts",
    bug: "a fixed pool whose every worker's start failed keeps its queued tasks and takes new ones: nothing " +
      "runs them, they never settle (the gap of tests/pool/no_workers_test.ts re-opened)",
    patches: [{
      find: "    for (let i = 0; i < this.workers; i++) if (this.workforce.vacancy(i) === undefined) return;\n",
      replace: "    return; // BUG: a pool with no worker left goes on taking tasks\n",
    }],
  },
  {
    name: "elastic_no_worker_waits",
    module: "owner/owner.ts",
    bug: "an elastic pool whose every start failed, with no worker live or starting, keeps the tasks queued: " +
      "no event starts a worker, they wait for ever (brief elasticnoworker, defect 1)",
    patches: [{
      find: "    for (let i = 0; i < this.workers; i++) if (elastic.slots.state(i) !== ABSENT) return false;\n",
      replace: "    if (elastic !== null) return false; // BUG: the pool with no worker is not noticed\n",
    }],
  },
  {
    name: "no_workers_not_told_to_producers",
    module: "owner/links.ts",
    bug: "the producers in other threads are not told that the pool has no worker: their queued tasks and, " +
      "in a fixed pool, their later submissions never settle (brief elasticnoworker, defect 2)",
    patches: [{
      find: "    for (const end of this.bySlot.values()) end.postMessage(note satisfies ToProducer);\n",
      replace: "    // BUG: the producers are not told\n",
    }],
  },
  {
    name: "no_workers_rejected_left_queued",
    module: "producer/producer.ts",
    bug: "an elastic pool with no worker rejects the queued tasks but leaves their records QUEUED: the worker " +
      "started later runs tasks whose promises rejected",
    patches: [
      {
        find: "        const cancelled = graph ? this.cancelNode(index) : mem.compareExchange(\n",
        replace:
          "        const cancelled = graph ? this.cancelNode(index) : false && mem.compareExchange( // BUG: left queued\n",
      },
      {
        find: "        else if (!permanent) continue;\n",
        replace: "        else if (!permanent && graph) continue;\n",
      },
    ],
  },
  {
    name: "no_workers_graph_waits",
    module: "producer/producer.ts",
    bug: "an elastic pool with no worker rejects the queued tasks but not a graph's nodes: nothing starts a " +
      "worker, the graph's promises wait for ever",
    patches: [{
      find: "        const cancelled = graph ? this.cancelNode(index) : mem.compareExchange(\n",
      replace: "        const cancelled = graph ? false : mem.compareExchange( // BUG: a graph's node waits\n",
    }],
  },
  {
    name: "no_workers_graph_roots_left_queued",
    module: "owner/owner.ts",
    bug: "an elastic pool with no worker rejects a graph's entries but leaves its roots QUEUED: the worker " +
      "started later runs nodes of a graph whose promises rejected",
    patches: [{
      find: "    cancelQueuedNodes(this.producer.table);\n",
      replace: "    // BUG: the graphs' queued nodes are left queued\n",
    }],
  },
  {
    name: "failed_start_zero_marks",
    module: "owner/worker_deaths.ts",
    bug: "the repair after a failed start reads the marks and table notes of an index where no worker ever ran " +
      "(0: record 0 held, block 0 in hand) and pushes them a second time",
    patches: [{
      find: "      for (let k = 0; k < words; k++) mem.store(notes, k, -1);\n",
      replace: "      for (let k = 0; k < words && notes === null; k++) mem.store(notes, k, -1); // BUG: not cleared\n",
    }],
  },
  {
    name: "failed_start_slot_looks_live",
    module: "owner/worker_deaths.ts",
    bug: "the repair after a failed start leaves an elastic pool's given-back slot AWAKE (Sleep.forget's store): " +
      "it counts as current, looks live to thieves and posts, and growth never starts there again",
    patches: [{
      find: "    if (absent) mem.store(this.sleep.words, stateAt, ABSENT);\n",
      replace: "    // BUG: the slot's word is left as the repair wrote it\n",
    }],
  },
  {
    name: "elastic_recycle_failure_waits",
    module: "owner/owner.ts",
    bug: "an elastic pool whose only worker's recycle replacement fails keeps its slot and the tasks queued: " +
      "no event starts a worker, they wait for ever",
    patches: [{
      find: "        else this.giveBack(index, error);\n",
      replace: "        // BUG: not noticed: the slot kept, nothing rejected, growth not told\n",
    }],
  },
  {
    name: "growth_failure_drops_posted",
    module: "owner/owner.ts",
    bug: "an elastic pool's growth start that fails is only reported: directed tasks and broadcast parts " +
      "posted to the starting slot never settle",
    patches: [{
      find: '          this.deaths.startFailed(index, error);\n          ledger.report(error, "starting a worker");\n',
      replace: '          ledger.report(error, "starting a worker"); // BUG: what was posted to it is left pending\n',
    }],
  },
];

/**
 * A bug of an elastic pool's vacancies (the leftovers of issue 49): a recycled or dead worker's replacement
 * that fails while other workers are live (its slot given back, its deque's tasks moved: owner.ts
 * `giveBack`), a directed task with no worker live or starting (it starts one: owner.ts `pickWorker`,
 * growth.ts `startNow`), and the records of tasks settled early that come back with nothing pending
 * (completion.ts `expectStrays`); caught by tests/pool/replacement_failure_test.ts and
 * tests/pool/no_workers_test.ts in the mutation run (group vacancy).
 */
export interface VacancyMutant {
  name: string;
  module: "owner/owner.ts" | "producer/completion.ts" | "producer/producer.ts";
  bug: string;
  patches: Patch[];
}

/** The vacancies' mutants. */
export const VACANCY_MUTANTS: readonly VacancyMutant[] = [
  {
    name: "recycle_failure_slot_awake",
    module: "owner/owner.ts",
    bug: "an elastic pool's recycled worker whose replacement fails while others are live keeps its slot AWAKE " +
      "with no thread: counted current for ever, growth never starts a worker there again",
    patches: [{
      find: "        else this.giveBack(index, error);\n",
      replace: "        // BUG: with other workers live, the slot stays as it is\n" +
        "        else if (this.elastic!.growth.current() <= 1) this.giveBack(index, error);\n",
    }],
  },
  {
    name: "vacated_deque_left",
    module: "owner/owner.ts",
    bug: "a slot given back after a failed replacement keeps its deque's tasks: thieves skip an ABSENT slot, so " +
      "they wait until a worker starts there again",
    patches: [{
      find: "      levels.pushPatiently(handle, table.levelOf(handle));\n      moved++;\n",
      replace: "      break; // BUG: the tasks stay in the deque\n",
    }],
  },
  {
    name: "directed_starts_no_worker",
    module: "owner/owner.ts",
    bug: "a directed task that finds no worker live or starting starts none: it rejects even once starts would " +
      "succeed, where a queued task grows the pool",
    patches: [{
      find: "      const started = this.elastic!.growth.startNow();\n",
      replace: "      const started = -1; // BUG: no start for a directed task\n",
    }],
  },
  {
    name: "strays_not_awaited",
    module: "producer/producer.ts",
    bug: "after a rejection for no worker, the reader does not wait for the rejected graphs' records with nothing " +
      "pending: they wait in the completion queue until the producer's next submission",
    patches: [{
      find: "    this.reader.expectStrays();\n",
      replace: "    // BUG: the strays are not awaited\n",
    }],
  },
];

/** auditB's mutants. */
export const AUDIT_B_MUTANTS: readonly AuditBMutant[] = [
  {
    name: "wake_rest_only_if_many",
    module: "worker/search.ts",
    bug: "a worker that takes a task from the injector wakes a sleeper for the rest only when more than one " +
      "task is left: the last task of a burst posted with one wake waits for a busy worker",
    patches: [{
      find: "      if (this.levels.length > 0) this.sleep.newWork(); // spec: FindInjectorLeft\n",
      replace: "      if (this.levels.length > 1) this.sleep.newWork(); // BUG: only when more than one is left\n",
    }],
  },
  {
    name: "async_bound_directed_bypass",
    module: "worker/loop.ts",
    bug: "a worker at its bound of async tasks still takes a task directed to it (its buffers moved): the " +
      "path only one worker can run bypasses asyncTasksPerWorker",
    patches: [{
      find: "      if (runner.full()) {\n        stats.endBusy();\n        return this.resumeAfter(runner.room());\n",
      replace: "      if (runner.full() && !mail.hasDirected()) { // BUG: directed tasks bypass the bound\n" +
        "        stats.endBusy();\n        return this.resumeAfter(runner.room());\n",
    }],
  },
  {
    name: "held_mark_cleared_before_push",
    module: "worker/marks.ts",
    bug: "the repair of a held task clears its shared mark before the push (the order before issue 47): a " +
      "worker killed between the clear and the push's publishing store loses the task",
    patches: [{
      find: "    const handle = this.held;\n    // A CANCELLED one goes back too",
      replace: "    const handle = this.held;\n    this.words[MarkWords.held] = -1; // BUG: cleared before the push\n" +
        "    // A CANCELLED one goes back too",
    }],
  },
  {
    name: "repair_held_pushes_again",
    module: "worker/marks.ts",
    bug: "a held task's repair cut short inside its injector push (after the claim) pushes it again when " +
      "repaired: the queue's own repair had published it, so it is queued twice",
    patches: [{
      find: "this.queued(handle) && !this.inInjector(handle) && !this.deque.push(handle)",
      replace: "this.queued(handle) && !this.deque.push(handle) /* BUG: pushed again */",
    }],
  },
  {
    name: "recovery_held_queued_only",
    module: "owner/recovery.ts",
    bug: "recovery puts back a dead worker's held or moving task only if it is QUEUED: a CANCELLED one it " +
      "held is in no queue, and its record is never freed",
    patches: [{
      find: "    if (state !== TaskState.QUEUED && state !== TaskState.CANCELLED) continue;\n",
      replace: "    if (state !== TaskState.QUEUED) continue; // BUG: CANCELLED left out\n",
    }],
  },
  {
    name: "repair_held_queued_only",
    module: "worker/marks.ts",
    bug: "a worker's repair puts a held task back only if it is QUEUED: a CANCELLED one it held is dropped, " +
      "its record never freed",
    patches: [{
      find: "    return this.current(handle, TaskState.QUEUED) || this.current(handle, TaskState.CANCELLED);\n",
      replace: "    return this.current(handle, TaskState.QUEUED); // BUG: CANCELLED left out\n",
    }],
  },
  {
    name: "producer_sweep_cancel_store",
    module: "owner/producer_deaths.ts",
    bug: "the sweep after a producer's death cancels a QUEUED task by a store, not a compare-exchange: a " +
      "worker's claim between the sweep's read and its store is overwritten, the running task CANCELLED",
    patches: [{
      find: "              mem.compareExchange(table.words, table.fields.stateWord(i), TaskState.QUEUED, " +
        "TaskState.CANCELLED) === // spec: DiedCancelQueued\n",
      replace: "              (mem.store(table.words, table.fields.stateWord(i), TaskState.CANCELLED), " +
        "TaskState.QUEUED) === // BUG: a store\n",
    }],
  },
  {
    name: "handle_request_no_hold",
    module: "worker/handles.ts",
    bug: "a worker that asks the owner for a pool handle does not hold its event loop until the reply: a " +
      "task that returns at once leaves the worker asleep blocking, and the reply is never read",
    patches: [
      { find: "      holdEventLoop();\n", replace: "      // BUG: the event loop is not held\n" },
      { find: "    releaseEventLoop();\n", replace: "    // BUG: (nor released)\n" },
    ],
  },
];

/**
 * A bug of producers in other threads (issue 29): the routing of a completion to its producer's slot, the
 * completion and record wake protocols, the slot claim; caught by tests/lincheck/producers_test.ts in the
 * mutation run (group producers).
 */
export interface ProducersMutant {
  name: string;
  module: "protocol/producers.ts" | "worker/marks.ts" | "producer/completion.ts";
  bug: string;
  patches: Patch[];
}

/** The producers' mutants: a wrong producer, three lost wakeups, a slot shared. */
export const PRODUCERS_MUTANTS: readonly ProducersMutant[] = [
  {
    name: "completion_to_slot_zero",
    module: "worker/marks.ts",
    bug: "a worker pushes every finished task to the owner's completion queue (slot 0), whatever producer " +
      "the record's origin names: another thread's producer never hears of its tasks",
    patches: [{
      find: "    const slot = slotOf(table.fields.origin(index));\n",
      replace: "    const slot = slotOf(table.fields.origin(index)) * 0; // BUG: always slot 0\n",
    }],
  },
  {
    name: "wake_producer_without_notify",
    module: "protocol/producers.ts",
    bug: "a finisher takes the producer's waiting word (1 to 0) and does not notify it: the producer sleeps " +
      "on with its completion queued",
    patches: [{
      find: "      mem.notify(channel.words, channel.waiting, 1); // spec: FinishNotifyMain\n",
      replace: "      // BUG: not notified\n",
    }],
  },
  {
    name: "arm_announces_after_recheck",
    module: "producer/completion.ts",
    bug: "a producer looks at its completion queue before it sets its waiting word: a completion pushed " +
      "between the look and the store finds the word 0, and nobody wakes the producer",
    patches: [
      { find: "    mem.store(words, waiting, 1); // spec: MainAnnounceWaiting\n", replace: "" },
      {
        find: "    const result = mem.waitAsync(words, waiting, 1); // spec: MainWaitAsync\n",
        replace: "    mem.store(words, waiting, 1); // BUG: said after the re-check\n" +
          "    const result = mem.waitAsync(words, waiting, 1); // spec: MainWaitAsync\n",
      },
    ],
  },
  {
    name: "record_waiters_never_woken",
    module: "protocol/producers.ts",
    bug: "whoever frees a record never wakes the producers that wait for one: a backlog with no task in " +
      "flight waits for good",
    patches: [{
      find: "  if (mem.load(control, ControlWords.recordWaiters) === 0) return false; // spec: FreedReadWaiters\n",
      replace: "  if (mem.load(control, ControlWords.recordWaiters) >= 0) return false; // BUG: always\n",
    }],
  },
  {
    name: "record_waiter_counted_after_recheck",
    module: "producer/completion.ts",
    bug: "a producer whose backlog waits for a record counts itself in recordWaiters after its re-check of " +
      "the free list: a record freed between the two finds the count 0, and nobody wakes it",
    patches: [
      {
        find: "    const starved = this.hooks.starved();\n    this.countWaiting(starved);\n",
        replace: "    const starved = this.hooks.starved();\n",
      },
      {
        find: "    const result = mem.waitAsync(words, waiting, 1); // spec: MainWaitAsync\n",
        replace: "    this.countWaiting(starved); // BUG: counted after the re-check\n" +
          "    const result = mem.waitAsync(words, waiting, 1); // spec: MainWaitAsync\n",
      },
    ],
  },
  {
    name: "woken_waiter_wakes_nobody",
    module: "producer/completion.ts",
    bug: "issue 50's one wake a batch without its pass-on: only a drain that read completions of its own wakes " +
      "a record waiter, so a woken waiter that took one record of two wakes nobody, and another waiter sleeps " +
      "with a record free (spec/RecordWait.tla WokenWakesNobody)",
    patches: [{
      find: "    this.freed();\n    if (!this.hooks.starved()) this.countWaiting(false);\n",
      replace: "    if (read > 0) this.freed(); // BUG: a woken waiter that read nothing passes nothing on\n" +
        "    else (this.hooks.freed(), this.table.holdFreed(false));\n" +
        "    if (!this.hooks.starved()) this.countWaiting(false);\n",
    }],
  },
  {
    name: "record_wake_skips_last_slot",
    module: "protocol/producers.ts",
    bug: "the record wake's ring one slot short (modulo n - 1): the last slot is never looked at, and its " +
      "producer, waiting for a record with nothing in flight, is skipped for ever (spec/RecordWait.tla " +
      "WakeSkipsLastSlot)",
    patches: [{
      find: "    const channel = channels[(turn + k) % n];\n",
      replace: "    const channel = channels[(turn + k) % (n - 1)]; // BUG: one short\n",
    }],
  },
  {
    name: "record_wake_wakes_all",
    module: "protocol/producers.ts",
    bug: "the wake before issue 50: every counted waiting producer is woken for one freed batch (up to 8 " +
      "wake-ups a record with 8 producers), not one in turn",
    patches: [{
      find: "    if (wakeProducer(channel)) return true; // spec: FreedWakeWaiter\n",
      replace: "    wakeProducer(channel); // BUG: every waiter\n",
    }],
  },
  {
    name: "record_wake_stops_at_awake",
    module: "protocol/producers.ts",
    bug: "the record wake gives up at the first counted slot whose producer is awake (a woken waiter passing " +
      "the wake on finds itself first) instead of passing it over: a waiter further round the ring sleeps " +
      "with a record free (spec/RecordWait.tla StopsAtAwakeWaiter)",
    patches: [{
      find: "    if (wakeProducer(channel)) return true; // spec: FreedWakeWaiter\n",
      replace: "    return wakeProducer(channel); // BUG: stops at the first counted slot\n",
    }],
  },
  {
    name: "claim_slot_load_then_store",
    module: "protocol/producers.ts",
    bug: "claimSlot reads a slot's state and then stores OPEN instead of one compare-exchange: two threads " +
      "that read FREE both claim the same slot",
    patches: [{
      find:
        "    if (mem.compareExchange(line, ProducerWords.state, SlotState.FREE, SlotState.OPEN) === SlotState.FREE) { // spec: OwnerClaimSlot\n",
      replace: "    if (mem.load(line, ProducerWords.state) === SlotState.FREE) { // BUG: no compare-exchange\n" +
        "      mem.store(line, ProducerWords.state, SlotState.OPEN);\n",
    }],
  },
];

/**
 * A bug of a producer in another thread's life with its owner (issue 29): its close, the owner's close and
 * terminate, a worker's death under its tasks, its own death, the wake of a producer that waits for a record; caught by
 * tests/pool/producers_test.ts (real producer threads) in the mutation run (group producer_threads, not fast: a
 * mutant that strands a producer is caught by the test's deadline).
 */
export interface ProducerThreadMutant {
  name: string;
  module:
    | "pool_producer.ts"
    | "owner/links.ts"
    | "owner/owner.ts"
    | "owner/recovery.ts"
    | "producer/producer.ts"
    | "producer/completion.ts"
    | "producer/room.ts"
    | "worker/loop.ts";
  bug: string;
  patches: Patch[];
}

/** The producer threads' mutants. */
export const PRODUCER_THREAD_MUTANTS: readonly ProducerThreadMutant[] = [
  {
    name: "close_before_records_back",
    module: "pool_producer.ts",
    bug: "a producer closes once its tasks settled, without waiting for the completions of tasks that timed " +
      "out while they ran: they reach a slot nobody reads, and their records never come back",
    patches: [{ find: "      await this.producer.recordsBack();\n", replace: "" }],
  },
  {
    name: "death_not_noticed",
    module: "owner/links.ts",
    bug: "the owner forgets a producer whose link closed without 'closed': its slot stays taken and what it " +
      "held is stranded",
    patches: [{ find: "      this.deaths.died(slot);\n", replace: "      // BUG: not taken back\n" }],
  },
  {
    name: "close_ignores_producers",
    module: "owner/owner.ts",
    bug: "the pool's close waits for its own tasks only: the workers stop under the tasks of producers in " +
      "other threads, which never settle",
    patches: [{
      find: "      const settled = Promise.all([this.producer.ledger.drain(), this.links.quiet()]);\n",
      replace: "      const settled = Promise.all([this.producer.ledger.drain()]); // BUG\n",
    }],
  },
  {
    name: "terminate_wakes_no_producer",
    module: "owner/links.ts",
    bug: "terminate writes the pool's state but wakes no producer: one that waits for its completions waits " +
      "for good, its tasks never rejected",
    patches: [{
      find: "      for (const channel of this.channels) wakeProducer(channel); // spec: OwnerWakeProducer\n",
      replace: "    // BUG: nobody woken\n",
    }],
  },
  {
    name: "worker_death_skips_remote_tasks",
    module: "owner/recovery.ts",
    bug: "a dead worker's recovery leaves the tasks of producers in other threads as they are: one that ran " +
      "there never settles",
    patches: [{
      find:
        "      if (recoverRemoteTask(scope, i, handle, origin, state, worker, dead, reason)) recovered.rejected++;\n",
      replace: "      // BUG: not recovered\n",
    }],
  },
  {
    name: "freed_records_wake_nobody",
    module: "producer/completion.ts",
    bug: "a producer that frees records wakes no other producer: one whose tasks all wait for a record, with " +
      "none in flight, sleeps on after the records it waits for came free",
    patches: [{
      find:
        "    if (this.table.freeRecords.length > 0) wakeRecordWaiters(this.channels, this.control); // spec: FreedReadFree\n",
      replace: "    // BUG: nobody woken\n",
    }],
  },
  {
    name: "worker_loop_ignores_holds",
    module: "worker/loop.ts",
    bug: "a worker whose thread has a producer with tasks pending (opened by a task that returned) sleeps " +
      "blocking its event loop: the producer never reads its completions, and its close never ends",
    patches: [{
      find: "    return this.runner.pending + this.mail.pending + eventLoopHolds();\n",
      replace: "    return this.runner.pending + this.mail.pending; // BUG: holds ignored\n",
    }],
  },
  {
    name: "room_without_turns",
    module: "producer/room.ts",
    bug: "no turns for room in a bounded pool: a producer submitting as soon as its own task settles takes " +
      "every place that frees, and one waiting for room across threads waits until it stops",
    patches: [{
      find: "      if (mine >= Math.max(1, Math.floor(max / open))) return false;\n",
      replace: "      // BUG: no share while others wait\n",
    }],
  },
  {
    name: "room_wakes_nobody",
    module: "producer/room.ts",
    bug: "a producer whose task settles wakes no producer waiting for room: one with nothing of its own " +
      "pending waits on after the pool has room",
    patches: [{
      find:
        "    for (const channel of this.channels) if (channel.slot !== this.slot) wakeProducer(channel); // spec: RoomWakeProducer\n",
      replace: "    // BUG: nobody woken\n",
    }],
  },
  {
    name: "backlog_not_counted_while_waiting",
    module: "producer/completion.ts",
    bug: "a producer already waiting when its task goes to the backlog does not count itself as waiting for " +
      "a record: with no task of its own in flight, nobody wakes it when another producer frees records",
    patches: [{
      find: "    if (this.waiting) {\n      this.recountWaiting();\n",
      replace: "    if (this.waiting) {\n      // BUG: the count stays as it was when the wait began\n",
    }],
  },
];

/**
 * A bug of the task records' accounting: a generation not advanced when a record is reused, or a record
 * not returned on one of the paths that free it; caught by a scenario of tests/pool/accounting_test.ts (the idle
 * accounting oracle, lib/record/census.ts, or the stale-handle checks).
 */
export interface RecordMutant {
  name: string;
  module:
    | "record/task.ts"
    | "producer/completion.ts"
    | "worker/runner.ts"
    | "worker/fork_join.ts"
    | "owner/recovery.ts"
    | "producer/submission.ts";
  bug: string;
  patches: Patch[];
  /** The scenario of tests/pool/accounting_test.ts that catches it. */
  caughtBy:
    | "settle"
    | "forks"
    | "stolenFork"
    | "cancelWhileQueued"
    | "cancelWhileRunning"
    | "timeout"
    | "crash"
    | "blocksExhausted"
    | "staleHandleTable"
    | "staleHandlePool";
}

/** The record mutants (issue 32): generations that do not advance, and records not returned, path by path. */
export const RECORD_MUTANTS: readonly RecordMutant[] = [
  {
    name: "generation_not_advanced",
    module: "record/task.ts",
    bug: "allocate does not advance the record's generation: a stale handle names the record's next task",
    patches: [{
      find: "    const generation = (mem.read(this.words, genAt) + 1) & this.generationMask;\n",
      replace: "    const generation = mem.read(this.words, genAt) & this.generationMask; // BUG: not advanced\n",
    }],
    caughtBy: "settle",
  },
  {
    name: "generation_not_advanced_from_cache",
    module: "record/task.ts",
    bug: "a record reused from the thread's private cache keeps its generation (only one from the shared " +
      "free list advances): the common duplicate, a record freed and taken again by the same thread",
    patches: [
      { find: "    let index: number;\n", replace: "    let index: number;\n    let reused = 0; // BUG\n" },
      { find: "      index = this.cache.pop()!;\n", replace: "      index = this.cache.pop()!;\n      reused = 1;\n" },
      {
        find: "    const generation = (mem.read(this.words, genAt) + 1) & this.generationMask;\n",
        replace: "    const generation = (mem.read(this.words, genAt) + 1 - reused) & this.generationMask;\n",
      },
    ],
    caughtBy: "settle",
  },
  {
    name: "generation_masked_to_one_bit",
    module: "record/task.ts",
    bug: "generations wrap at 2, not 2^(31 - indexBits): a handle is current again two reuses later",
    patches: [{
      find: "    this.generationMask = 2 ** (31 - this.indexBits) - 1;\n",
      replace: "    this.generationMask = 1; // BUG: masked to one bit\n",
    }],
    caughtBy: "staleHandleTable",
  },
  {
    name: "release_ignores_generation",
    module: "record/task.ts",
    bug: "releaseHandle does not compare generations: a late or duplicate report frees the record under the " +
      "task that holds it next",
    patches: [{
      find: "    if (!this.isCurrent(handle) || state === TaskState.FREE || state === TaskState.CACHED) {\n",
      replace: "    if (state === TaskState.FREE || state === TaskState.CACHED) { // BUG: generation not compared\n",
    }],
    caughtBy: "staleHandlePool",
  },
  {
    name: "runs_on_ignores_generation",
    module: "record/task.ts",
    bug: "runsOn (the kill guard's question) does not compare generations: a forced kill aimed at a finished " +
      "task kills the worker running the record's next task",
    patches: [{
      find: "    if (!this.isCurrent(handle)) return false;\n    const index = handle & this.indexMask;\n",
      replace: "    const index = handle & this.indexMask; // BUG: generation not compared\n",
    }],
    caughtBy: "staleHandleTable",
  },
  {
    name: "completion_matches_index_only",
    module: "producer/completion.ts",
    bug: "a completion is matched to its task by record index, not by handle: a late report of a finished " +
      "task settles the task that holds its record now",
    patches: [{
      find: "    if (entry === undefined || entry.handle !== handle) {\n",
      replace: "    if (entry === undefined) { // BUG: the handle's generation is not compared\n",
    }],
    caughtBy: "staleHandlePool",
  },
  {
    name: "drain_keeps_freed_records",
    module: "record/task.ts",
    bug: "the records a drain freed past the main thread's cache bound stay in its cache after the backlog's " +
      "feed, not given back: the workers' forks and the other producers find fewer free records",
    patches: [{
      find: "    if (!hold) this.trimCache(this.cacheBound);\n",
      replace: "    // BUG: what the backlog left stays cached\n",
    }],
    caughtBy: "settle",
  },
  {
    name: "settle_keeps_record",
    module: "producer/completion.ts",
    bug: "the main thread settles a finished task without freeing its record",
    patches: [{
      find: "    table.releaseHandle(handle);\n    this.ledger.settle(entry, how, value);\n",
      replace: "    this.ledger.settle(entry, how, value); // BUG: the record is not freed\n",
    }],
    caughtBy: "settle",
  },
  {
    name: "late_completion_keeps_record",
    module: "producer/completion.ts",
    bug: "the completion of a task settled already (aborted or timed out while it ran) does not free its record",
    patches: [{
      find: "      this.movedPayloads.delete(handle);\n      table.releaseHandle(handle);\n      return true;\n",
      replace: "      this.movedPayloads.delete(handle);\n      return true; // BUG: the record is not freed\n",
    }],
    caughtBy: "cancelWhileRunning",
  },
  {
    name: "late_completion_keeps_record_timeout",
    module: "producer/completion.ts",
    bug: "as late_completion_keeps_record, seen through a timeout rather than an abort",
    patches: [{
      find: "      this.movedPayloads.delete(handle);\n      table.releaseHandle(handle);\n      return true;\n",
      replace: "      this.movedPayloads.delete(handle);\n      return true; // BUG: the record is not freed\n",
    }],
    caughtBy: "timeout",
  },
  {
    name: "cancelled_record_kept",
    module: "worker/runner.ts",
    bug: "the worker that takes a cancelled task's handle skips it without freeing its record",
    patches: [{
      find: "        if (before === TaskState.CANCELLED) table.releaseHandle(handle);\n",
      replace: "        // BUG: the record is not freed\n",
    }],
    caughtBy: "cancelWhileQueued",
  },
  {
    name: "popped_fork_kept",
    module: "worker/fork_join.ts",
    bug: "a fork its joiner pops back and runs inline keeps its record",
    patches: [{
      find: "    const root = table.fields.root(index);\n    this.forks.forget(handle);\n    table.release(index);\n",
      replace:
        "    const root = table.fields.root(index);\n    this.forks.forget(handle); // BUG: the record is not freed\n",
    }],
    caughtBy: "forks",
  },
  {
    name: "stolen_fork_kept",
    module: "worker/fork_join.ts",
    bug: "a fork a thief ran keeps its record once its joiner has read the result",
    patches: [{
      find:
        "    } finally {\n      this.forks.forget(handle);\n      table.release(index);\n      marks.clearConsuming();\n",
      replace:
        "    } finally {\n      this.forks.forget(handle); // BUG: the record is not freed\n      marks.clearConsuming();\n",
    }],
    caughtBy: "stolenFork",
  },
  {
    name: "crash_keeps_record",
    module: "owner/recovery.ts",
    bug: "the record of a task whose worker died while running it is not freed by recovery",
    patches: [{
      find:
        "      // The dead thread can no longer touch the record (its arguments were freed when it decoded them).\n" +
        "      if (table.releaseHandle(handle)) recovered.freed++;\n",
      replace: "      // BUG: the record of the task that was running is not freed\n",
    }],
    caughtBy: "crash",
  },
  {
    name: "failed_placement_keeps_record",
    module: "producer/submission.ts",
    bug: "a submission whose arguments find no free blocks goes to the backlog without giving its record back",
    patches: [{
      find: "    if (!written) {\n      table.release(index);\n      return false;\n",
      replace: "    if (!written) {\n      return false; // BUG: the record is not given back\n",
    }],
    caughtBy: "blocksExhausted",
  },
];

/** Writes a copy of `lib/` with `mutant` applied; returns the `file:` URL of the copy's `pool.ts`. */
export function materializePoolMutant(
  mutant: PoolMutant | ForceMutant | JoinMutant | BacklogMutant | RecordMutant,
): URL {
  // A directory of its own, removed by removePoolMutant: another suite's removeMaterializedMutants (Bun
  // runs test files side by side in one process) must not delete a copy whose workers are still starting.
  const own = mkdtempSync(join(tmpdir(), "filch-pool-mutant-"));
  writeFileSync(join(own, "package.json"), '{ "type": "module" }\n');
  const lib = join(own, mutant.name, "lib");
  cpSync(LIB, lib, { recursive: true });
  const file = join(lib, mutant.module);
  writeFileSync(
    file,
    `// GENERATED by tests/mutants/mutants.ts from lib/${mutant.module}: mutant '${mutant.name}': ${mutant.bug}\n` +
      applyPatches(readFileSync(file, "utf8"), mutant),
  );
  return pathToFileURL(join(lib, "pool.ts"));
}

/**
 * Deletes the directory of a pool mutant written by {@link materializePoolMutant} (its pool is terminated).
 *
 * @param url What materializePoolMutant returned.
 */
export function removePoolMutant(url: URL): void {
  // <own>/<name>/lib/pool.ts
  rmSync(dirname(dirname(dirname(fileURLToPath(url)))), { recursive: true, force: true });
}

/** Deletes the temporary directory of the mutants written so far (modules already loaded stay loaded). */
export function removeMaterializedMutants(): void {
  if (dir === null) return;
  rmSync(dir, { recursive: true, force: true });
  dir = null;
}

/** The URL of the shipped deque. */
export const SHIPPED_DEQUE: URL = new URL("deque.ts", PROTOCOL);

/** The URL of the shipped queue. */
export const SHIPPED_QUEUE: URL = new URL("injector.ts", PROTOCOL);

// ---------------------------------------------------------------------------------------------------------
// The sleep/wake and latch mutants (lib/protocol/sleep.ts, lib/protocol/latch.ts), run by tests/lincheck/sleep_test.ts.
// Kept apart from MUTANTS, which the deque suite loads as deque modules.

/** The known sleep/wake and latch bugs, as patches to `lib/protocol/sleep.ts` or `lib/protocol/latch.ts`. */
export const SLEEP_MUTANTS: readonly Mutant[] = [
  {
    name: "sleep_skips_final_check",
    module: "sleep.ts",
    bug: "fallAsleep counts itself without comparing the JEC with getSleepy's: a post since then is ignored",
    patches: [{
      find: "      if (jecOf(c) !== jec) { // spec: FallAsleepUndo\n",
      replace: "      if (false) { // mutant: the JEC test dropped\n",
    }],
  },
  {
    name: "poster_never_wakes",
    module: "sleep.ts",
    bug: "newWork moves the JEC but never wakes a sleeping worker",
    patches: [{
      find:
        "    if ((c & SLEEPERS_MASK) === 0) return this.wokeNobody();\n    return this.wakeOne() || this.wokeNobody();\n",
      replace: "    return false; // mutant: the JEC moved, nobody woken\n",
    }],
  },
  {
    // Safe only while a second worker is awake: with one worker, its only sleeper is never woken.
    name: "poster_wakes_only_if_two_sleep",
    module: "sleep.ts",
    bug: "newWork wakes a sleeper only when more than one sleeps: a lone sleeper is left asleep",
    patches: [{
      find: "    if ((c & SLEEPERS_MASK) === 0) return this.wokeNobody();\n",
      replace: "    if ((c & SLEEPERS_MASK) <= 1) return this.wokeNobody(); // mutant: was === 0\n",
    }],
  },
  {
    name: "counted_before_sleeping",
    module: "sleep.ts",
    bug: "fallAsleep counts itself before storing SLEEPING, so a poster that sees the count finds no word to wake",
    patches: [
      {
        find: "    mem.store(this.words, stateAt, SLEEPING); // spec: FallAsleepStoreSleeping\n",
        replace: "    // mutant: SLEEPING is stored after counting (below)\n",
      },
      {
        find: "        mem.store(this.words, SleepWords.counted(index), 1);\n        return true;\n",
        replace:
          "        mem.store(this.words, SleepWords.counted(index), 1);\n        mem.store(this.words, stateAt, SLEEPING); // mutant\n        return true;\n",
      },
    ],
  },
  {
    name: "search_before_sleepy",
    module: "sleep.ts",
    bug: "the worker's last search comes before it announces itself sleepy, so a post in between is missed",
    patches: [{
      find:
        "    const jec = this.getSleepy(); // spec: GetSleepy\n    // One more search after announcing: work posted before the announcement is found here.\n    const late = search();\n",
      replace:
        "    const late = search(); // mutant: searched before getting sleepy\n    const jec = this.getSleepy();\n",
    }],
  },
  {
    name: "wake_without_notify",
    module: "sleep.ts",
    bug: "a poster's wake stores AWAKE in the sleeper's word but does not notify it",
    patches: [{ find: "    mem.notify(this.words, stateAt, 1); // spec: WakeNotify\n", replace: "" }],
  },
  {
    name: "wake_all_keeps_jec",
    module: "sleep.ts",
    bug: "wakeAll does not move the JEC, so a sleepy worker that read the stop word before it falls asleep after it",
    patches: [{
      find: "    mem.add(this.words, SleepWords.counters, 2 << JEC_SHIFT); // spec: WakeAllBump\n",
      replace: "",
    }],
  },
  {
    name: "latch_set_without_notify",
    module: "latch.ts",
    bug: "setLatch stores SET but does not notify: a joiner already blocked on the word sleeps on",
    patches: [{ find: "  mem.notify(words, at); // spec: FinishNotifyLatch\n", replace: "" }],
  },
  {
    name: "joiner_waits_on_stale_value",
    module: "latch.ts",
    bug: "waitLatch waits on the value it reads now instead of on UNSET: the wait no longer re-checks, so a " +
      "joiner that reads SET blocks on it",
    patches: [{
      find: "  mem.wait(words, at, UNSET, timeoutMs); // spec: JoinWaitLatch\n",
      replace: "  mem.wait(words, at, mem.load(words, at), timeoutMs); // mutant: stale expected value\n",
    }],
  },
];

/** The URLs of the shipped sleep and latch modules. */
export const SHIPPED_SLEEP: URL = new URL("sleep.ts", PROTOCOL);
export const SHIPPED_LATCH: URL = new URL("latch.ts", PROTOCOL);

// ---------------------------------------------------------------------------------------------------------
// The kill-guard mutants (lib/protocol/kill_guard.ts), run by tests/lincheck/kill_guard_test.ts under the
// interleaving harness. Each side of the handshake gets its TLA+ counterparts (spec/mutants.ts, KillGuard.tla:
// KillReadsGuardFirst, KillIgnoresGuard, GuardReadsEpochFirst, HaltSkipsRecheck, HaltKeepsGuard,
// WithdrawForgetsEpoch), a worker raising its guard without reading the epoch after (issue 32), and a worker
// that does not raise its guard at all (the one bug that breaks guard-covers-pool-steps first). (FORCE_MUTANTS' kill_ignores_guard is the same bug as
// killer_ignores_guard, built as a whole-pool copy for tests/pool/force_test.ts.)

/** The known kill-guard bugs, as patches to `lib/protocol/kill_guard.ts`. */
export const KILL_GUARD_MUTANTS: readonly Mutant[] = [
  {
    name: "killer_reads_guard_before_epoch",
    module: "kill_guard.ts",
    bug: "the main thread reads the guard (and decides) before it moves the epoch: Dekker's order swapped on the " +
      "main side, so a worker that raises its guard in between reads the old epoch and enters a pool step " +
      "(KillReadsGuardFirst.tla)",
    patches: [{
      find: "    mem.store(this.status, epochAt, (from + 1) | 0); // spec: KillBumpEpoch\n" +
        "    const request: KillRequest = { from, handles: [handle], cause, timer: undefined };\n" +
        "    this.requests.set(worker, request);\n" +
        "    this.attempt(worker, request);\n",
      replace: "    const request: KillRequest = { from, handles: [handle], cause, timer: undefined };\n" +
        "    this.requests.set(worker, request);\n" +
        "    this.attempt(worker, request); // mutant: the guard is read first ...\n" +
        "    mem.store(this.status, epochAt, (from + 1) | 0); // ... and the epoch moved after\n",
    }],
  },
  {
    name: "killer_ignores_guard",
    module: "kill_guard.ts",
    bug: "the main thread terminates the worker without looking at the guard it reads (KillIgnoresGuard.tla)",
    patches: [{
      find: "    if (mem.load(this.status, at + StatusWords.guard) === 0) { // spec: KillReadGuard\n",
      replace: "    if (mem.load(this.status, at + StatusWords.guard) !== 2) { // mutant: whatever the guard says\n",
    }],
  },
  {
    name: "guard_reads_epoch_first",
    module: "kill_guard.ts",
    bug: "the worker reads the epoch before it raises its guard: Dekker's order swapped on the worker side " +
      "(GuardReadsEpochFirst.tla)",
    patches: [{
      find: "    mem.store(this.status, this.guardAt, 1); // spec: GuardRaise\n" +
        "    if (mem.load(this.status, this.epochAt) !== this.epoch) this.halt(); // spec: GuardReadEpoch\n",
      replace:
        "    const moved = mem.load(this.status, this.epochAt) !== this.epoch; // mutant: the epoch first ...\n" +
        "    mem.store(this.status, this.guardAt, 1); // ... then the guard\n" +
        "    if (moved) this.halt();\n",
    }],
  },
  {
    name: "enter_skips_epoch_check",
    module: "kill_guard.ts",
    bug: "the worker raises its guard and goes into its pool step without reading the epoch: a kill decided while " +
      "it was in user code lands in the step",
    patches: [{
      find: "    if (mem.load(this.status, this.epochAt) !== this.epoch) this.halt(); // spec: GuardReadEpoch\n",
      replace: "    // mutant: no look at the epoch after raising the guard\n",
    }],
  },
  {
    name: "enter_keeps_guard_down",
    module: "kill_guard.ts",
    bug: "the worker back from user code reads the epoch but does not raise its guard: its pool steps run with " +
      "the guard down, killable (as FORCE_MUTANTS' join_keeps_guard_down, in the guard itself)",
    patches: [{
      find: "    mem.store(this.status, this.guardAt, 1); // spec: GuardRaise\n",
      replace: "    // mutant: the guard is not raised\n",
    }],
  },
  {
    name: "halt_skips_recheck",
    module: "kill_guard.ts",
    bug: "the worker leaving its halt raises its guard and goes on without reading the epoch again: a new request " +
      "that saw the guard down meanwhile kills it in its pool step (HaltSkipsRecheck.tla)",
    patches: [{
      find: "      if (mem.load(status, epochAt) === epoch) return; // spec: HaltRecheckEpoch\n",
      replace: "      return; // mutant: no second look at the epoch\n",
    }],
  },
  {
    name: "halt_keeps_guard",
    module: "kill_guard.ts",
    bug: "the halting worker does not lower its guard, so the main thread's poll never sees it down and the kill " +
      "never comes (HaltKeepsGuard.tla)",
    patches: [{
      find: "      mem.store(status, guardAt, 0); // spec: HaltLower\n",
      replace: "      // mutant: the guard stays up while halted\n",
    }],
  },
  {
    name: "withdraw_forgets_epoch",
    module: "kill_guard.ts",
    bug: "withdrawing a kill does not give the worker its epoch back, so a halted worker never resumes " +
      "(WithdrawForgetsEpoch.tla)",
    patches: [{
      find: "      mem.store(this.status, at + StatusWords.epoch, request.from); // spec: KillWithdraw\n",
      replace: "      // mutant: the epoch is left moved\n",
    }],
  },
];

/** The URL of the shipped kill guard. */
export const SHIPPED_KILL_GUARD: URL = new URL("kill_guard.ts", PROTOCOL);

/**
 * A bug of the classes of issue 47's outside audit that the project's checks missed (auditA: classes 2–4;
 * class 1's are in the producers model's group), caught by the tests written for the class: a loop over
 * the producer slots that stops one short (tests/protocol/producer_slots_test.ts, every slot claimed), a
 * fair share with a party left out of its divisor (tests/pool/fair_share_test.ts), a starving level found
 * empty that keeps its streak (tests/protocol/levels_quota_test.ts).
 */
export interface AuditAMutant {
  name: string;
  module:
    | "protocol/producers.ts"
    | "producer/room.ts"
    | "owner/links.ts"
    | "record/task.ts"
    | "producer/producer.ts"
    | "protocol/levels.ts";
  bug: string;
  patches: Patch[];
}

/** The audit's classes 2–4, one mutant a loop or a rule. */
export const AUDIT_A_MUTANTS: readonly AuditAMutant[] = [
  {
    name: "slot_claim_stops_short",
    module: "protocol/producers.ts",
    bug: "the claim looks at slots 1 to producers − 1: the last slot is never handed out",
    patches: [{
      find: "  for (let slot = 1; slot <= producers; slot++) {\n",
      replace: "  for (let slot = 1; slot < producers; slot++) { // BUG: one short\n",
    }],
  },
  {
    name: "room_lines_stop_short",
    module: "producer/room.ts",
    bug: "the room opens the lines of slots 1 to producers − 1: the last slot's pending tasks are never summed",
    patches: [{
      find: "    for (let s = 1; s <= memory.producers; s++) this.lines[s] = memory.slotLine(s);\n",
      replace: "    for (let s = 1; s < memory.producers; s++) this.lines[s] = memory.slotLine(s); // BUG: one short\n",
    }],
  },
  {
    name: "room_sum_stops_short",
    module: "producer/room.ts",
    bug: "the room's sum stops before the last slot's line: its pending tasks do not count against the bound",
    patches: [{
      find: "    for (let s = 1; s < lines.length; s++) {\n",
      replace: "    for (let s = 1; s < lines.length - 1; s++) { // BUG: one short\n",
    }],
  },
  {
    name: "record_wake_ring_stops_short",
    module: "protocol/producers.ts",
    bug: "a freed record's wake looks at n − 1 slots round the ring: the slot just before the turn's is " +
      "never woken from that turn",
    patches: [{
      find: "  for (let k = 0; k < n; k++) {\n",
      replace: "  for (let k = 0; k < n - 1; k++) { // BUG: one short\n",
    }],
  },
  {
    name: "owner_pending_stops_short",
    module: "owner/links.ts",
    bug: "the owner's sum of its producers' pending tasks stops before the last slot: close ends while the " +
      "last slot's tasks are pending",
    patches: [{
      find: "    let sum = 0;\n    for (let slot = 1; slot <= this.channels.length; slot++) {\n",
      replace: "    let sum = 0;\n    for (let slot = 1; slot < this.channels.length; slot++) { // BUG: one short\n",
    }],
  },
  {
    name: "owner_counts_stop_short",
    module: "owner/links.ts",
    bug: "the stats' producer counts stop before the last slot: its producer is missing from `stats()`",
    patches: [{
      find: "    const all: SlotCounts[] = [];\n    for (let slot = 1; slot <= this.channels.length; slot++) {\n",
      replace:
        "    const all: SlotCounts[] = [];\n    for (let slot = 1; slot < this.channels.length; slot++) { // BUG: one short\n",
    }],
  },
  {
    name: "accounting_slots_stop_short",
    module: "record/task.ts",
    bug: "the records' accounting opens the counts of slots 1 to producers − 1: the last slot's allocations " +
      "and releases are not summed",
    patches: [{
      find: "    this.remoteCounts = Array.from({ length: memory.producers }, (_, i) => memory.slotCounts(i + 1));\n",
      replace:
        "    this.remoteCounts = Array.from({ length: memory.producers - 1 }, (_, i) => memory.slotCounts(i + 1)); // BUG\n",
    }],
  },
  {
    name: "record_share_leaves_owner_out",
    module: "producer/producer.ts",
    bug: "the fair share of records divides among the producers in other threads, leaving the owner's out " +
      "of the divisor: while another waits, each may hold more than the records divided among all",
    patches: [{
      find: "    const open = mem.load(this.memory.control, ControlWords.producersOpen) + 1;\n",
      replace:
        "    const open = mem.load(this.memory.control, ControlWords.producersOpen); // BUG: the owner left out\n",
    }],
  },
  {
    name: "room_share_leaves_owner_out",
    module: "producer/room.ts",
    bug: "the fair share of the room divides the bound among the producers in other threads, leaving the " +
      "owner's out of the divisor",
    patches: [{
      find: "      const open = mem.load(control, ControlWords.producersOpen) + 1;\n",
      replace: "      const open = mem.load(control, ControlWords.producersOpen); // BUG: the owner left out\n",
    }],
  },
  {
    name: "starving_empty_keeps_streak",
    module: "protocol/levels.ts",
    bug: "a starving level found empty keeps its streak: a task that reaches it later is taken at once, " +
      "ahead of the higher levels, without waiting its LEVEL_QUOTA takes",
    patches: [{
      find: "      streaks[level] = 0; // it no longer waits\n",
      replace: "      // BUG: the streak is kept\n",
    }],
  },
];

/**
 * A bug of either side of the wait for room (`maxQueue`; issue 47, class 1: the settling side of a
 * handshake), caught by tests/lincheck/room_wait_test.ts, the shipped code of both sides under the
 * interleaving harness with spec/RoomWait.tla's properties as oracles.
 */
export interface AuditARoomMutant {
  name: string;
  module: "producer/ledger.ts" | "producer/room.ts" | "producer/completion.ts";
  bug: string;
  patches: Patch[];
}

/**
 * The room wait's mutants: the settler's two accesses swapped, the waiter's count after its check, the wake
 * skipped; and the record wait's settling side (issue 50's one wake a batch), whose waiter's count and
 * re-check and whose wake the `producers` group already swaps and skips: the freer's read of the waiters
 * moved before its frees (caught by tests/lincheck/producers_test.ts).
 */
export const AUDIT_A_ROOM_MUTANTS: readonly AuditARoomMutant[] = [
  {
    name: "room_settle_reads_count_first",
    module: "producer/ledger.ts",
    bug: "the settler reads the room's waiters (and wakes them) before it takes its pending word down: a waiter " +
      "woken then checks, finds no room, waits again, and the settle's room comes with nobody to wake it",
    patches: [
      {
        find:
          "    if (this.shared !== undefined) mem.sub(this.shared.words, this.shared.at, 1); // spec: SettleReleasePending\n",
        replace: "",
      },
      {
        find: "    this.released?.();\n",
        replace: "    this.released?.();\n" +
          "    if (this.shared !== undefined) mem.sub(this.shared.words, this.shared.at, 1); // BUG: after the wake\n",
      },
    ],
  },
  {
    name: "room_count_after_check",
    module: "producer/room.ts",
    bug: "the waiter counts itself after its last check for room: a settle between the check and the count " +
      "reads no waiter and wakes nobody, and the waiter sleeps with room",
    patches: [{
      find: "      this.count(true);\n      this.host.arm();\n      if (this.hasRoom()) this.resolveWaiters();\n",
      replace:
        "      this.host.arm();\n      if (this.hasRoom()) this.resolveWaiters();\n      this.count(true); // BUG: counted last\n",
    }],
  },
  {
    name: "room_wake_skipped",
    module: "producer/room.ts",
    bug: "a settle that sees producers waiting for room wakes none of them",
    patches: [{
      find:
        "    for (const channel of this.channels) if (channel.slot !== this.slot) wakeProducer(channel); // spec: RoomWakeProducer\n",
      replace: "    // BUG: no wake\n",
    }],
  },
  {
    name: "record_freer_reads_waiters_first",
    module: "producer/completion.ts",
    bug: "a producer that frees records reads recordWaiters at the start of its drain, before the frees, and " +
      "wakes a record waiter only if it saw one then: a waiter that counts itself and re-checks the free list " +
      "between that read and the frees sleeps with records free",
    patches: [
      {
        find: 'const LINGERS = typeof (globalThis as { process?: unknown }).process !== "undefined";\n',
        replace: 'const LINGERS = typeof (globalThis as { process?: unknown }).process !== "undefined";\n' +
          "let waitersSeen = 0; // BUG: the freer's read of the waiters, before its frees\n",
      },
      {
        find: "    this.hooks.beforeDrain();\n",
        replace:
          "    this.hooks.beforeDrain();\n    waitersSeen = mem.load(this.control, ControlWords.recordWaiters); // BUG: first\n",
      },
      {
        find:
          "    if (this.table.freeRecords.length > 0) wakeRecordWaiters(this.channels, this.control); // spec: FreedReadFree\n",
        replace:
          "    if (waitersSeen > 0 && this.table.freeRecords.length > 0) wakeRecordWaiters(this.channels, this.control);\n",
      },
    ],
  },
];

/**
 * A bug of the elastic pool's retirement or of a directed post's claim (issue 49), caught by
 * tests/lincheck/elastic_test.ts: the shipped `lib/protocol/sleep.ts` and `lib/protocol/slots.ts` under the
 * interleaving harness with spec/Elastic.tla's properties as oracles (group elastic_lincheck).
 */
export interface ElasticLincheckMutant {
  name: string;
  module: "protocol/sleep.ts" | "protocol/slots.ts";
  bug: string;
  patches: Patch[];
}

/**
 * The retirement's compare-exchange as a store, its uncount moved after the compare-exchange, its mail
 * read moved before it; a directed post that reads the slot before it counts its mail.
 */
export const ELASTIC_LINCHECK_MUTANTS: readonly ElasticLincheckMutant[] = [
  {
    name: "lincheck_retire_cas_is_store",
    module: "protocol/sleep.ts",
    bug: "the retirement stores RETIRING instead of its compare-exchange from SLEEPING: a poster's wake that " +
      "landed after the worker's look at its word is overwritten, and the worker it woke leaves with the work",
    patches: [{
      find:
        "    if (mem.compareExchange(this.words, stateAt, SLEEPING, RETIRING) !== SLEEPING) { // spec: RetireCasSlot\n",
      replace: "    if (mem.store(this.words, stateAt, RETIRING) !== RETIRING) { // BUG: a store, not the CAS\n",
    }],
  },
  {
    name: "lincheck_retire_uncount_after_cas",
    module: "protocol/sleep.ts",
    bug: "the retirement uncounts itself after its compare-exchange, not before: a worker whose compare-" +
      "exchange fails (a poster woke it) returns still counted as sleeping, its count left behind",
    patches: [
      { find: "    mem.sub(this.words, SleepWords.counters, 1); // spec: RetireUncount\n", replace: "" },
      {
        find: "      return SLEPT_WOKEN;\n    }\n    if (retirement.mail()) {\n",
        replace: "      return SLEPT_WOKEN;\n    }\n" +
          "    mem.sub(this.words, SleepWords.counters, 1); // BUG: after the compare-exchange\n" +
          "    if (retirement.mail()) {\n",
      },
    ],
  },
  {
    name: "lincheck_retire_reads_mail_first",
    module: "protocol/sleep.ts",
    bug: "the retirement reads its mail before its compare-exchange: a post that counts its mail and reads " +
      "SLEEPING between the two is sent to a worker that leaves",
    patches: [
      {
        find:
          "    if (mem.compareExchange(this.words, stateAt, SLEEPING, RETIRING) !== SLEEPING) { // spec: RetireCasSlot\n",
        replace: "    const mailFirst = retirement.mail(); // BUG: before the compare-exchange\n" +
          "    if (mem.compareExchange(this.words, stateAt, SLEEPING, RETIRING) !== SLEEPING) { // spec: RetireCasSlot\n",
      },
      { find: "    if (retirement.mail()) {\n", replace: "    if (mailFirst) {\n" },
    ],
  },
  {
    name: "lincheck_post_reads_slot_first",
    module: "protocol/slots.ts",
    bug: "a directed post reads the slot before it counts its mail: a worker that retires between the two " +
      "reads no mail, and the post goes to the slot it left",
    patches: [
      { find: "    mem.add(this.status, mailAt, 1);\n", replace: "" },
      {
        find: "    const state = mem.load(this.sleep, SleepWords.state(index)) & STATE_MASK; // spec: DirectCasSlot\n",
        replace:
          "    const state = mem.load(this.sleep, SleepWords.state(index)) & STATE_MASK; // spec: DirectCasSlot\n" +
          "    mem.add(this.status, mailAt, 1); // BUG: counted after the slot's read\n",
      },
    ],
  },
];

/**
 * A bug of a live thread's overflow blocks after a step cut short by a throw (one block, or a chain, neither
 * in a free list nor in a record that will be freed): the notes of the block in hand (lib/record/payload.ts
 * `[BLOCK]`) not completed before they are reused, or completed wrongly; a fork cut short before it was
 * QUEUED (still marked cached) not freed with its arguments' blocks by the pushing mark's repair
 * (lib/worker/marks.ts); a record's note (a record being taken or given back) cleared before its step is
 * done, so that a thread killed in its own repair strands the record. Caught by
 * tests/record/payload_cut_test.ts, tests/worker/marks_test.ts and tests/owner/recovery_test.ts.
 */
export interface BlockNoteMutant {
  name: string;
  module: "record/payload.ts" | "worker/marks.ts" | "record/task.ts";
  bug: string;
  patches: Patch[];
}

/** The block notes' mutants. */
export const BLOCK_NOTE_MUTANTS: readonly BlockNoteMutant[] = [
  {
    name: "block_note_reused_before_repair",
    module: "record/payload.ts",
    bug: "freePayload reuses the block notes without completing the step a throw cut short: the next payload " +
      "step of the thread, before its loop's repair, overwrites the note of the block in hand, which is lost",
    patches: [{ find: "    if (this.note[BLOCK] !== -1) this.repairBlockNote();\n", replace: "" }],
  },
  {
    name: "block_pop_keeps_published",
    module: "record/payload.ts",
    bug: "writeBlocks keeps the free list's `published` from this handle's last push: a block it freed last " +
      "and takes again, cut short before its link, is taken by the repair for pushed, and is lost",
    patches: [{
      find: "      this.freeBlocks.published = QUEUE_EMPTY;\n      mem.write(",
      replace: "      mem.write(",
    }],
  },
  {
    name: "pushing_repair_leaves_cached_fork",
    module: "worker/marks.ts",
    bug: "the pushing mark's repair frees its fork only through releaseHandle, which refuses a record still " +
      "marked cached: a fork cut short while its arguments were written keeps its record and blocks",
    patches: [{
      find: "    if (!this.table.releaseUnpublished(this.pushing)) this.table.releaseHandle(this.pushing);\n",
      replace: "    this.table.releaseHandle(this.pushing);\n",
    }],
  },
  {
    name: "unpublished_released_from_cache",
    module: "record/task.ts",
    bug: "releaseUnpublished frees a record that is back in the thread's cache already (place() released it " +
      "and was cut short before the mark's clear): the record is in the cache twice",
    patches: [{
      find: "this.owner || this.cache.includes(index)) {\n",
      replace: "this.owner) {\n",
    }],
  },
  {
    name: "allocating_note_cleared_first",
    module: "record/task.ts",
    bug: "repairCut clears the note of a record it was taking before it pushes the record back: killed at " +
      "the state's load or in the push, the record is FREE, in no list and in no note (the fault-injection " +
      "suite on Bun: 'the free list holds 7 records, but 8 are FREE')",
    patches: [
      {
        find: "    const allocating = this.note[ALLOCATING];\n",
        replace:
          "    const allocating = this.note[ALLOCATING];\n    this.note[ALLOCATING] = -1; // BUG: before the push\n",
      },
    ],
  },
  {
    name: "reclaim_without_note",
    module: "record/task.ts",
    bug: "reclaimCachedBy stores FREE and pushes with no note (not a give-back): a thread killed between, in " +
      "its own repair of records marked cached by it, leaves a record FREE and in no list",
    patches: [{
      find: "      this.giveBack(i);\n",
      replace: "      mem.store(this.words, this.at(i, RecordWords.state), TaskState.FREE); // BUG: no note\n" +
        "      this.freeRecords.pushPatiently(i);\n",
    }],
  },
  {
    name: "allocating_repush_counted_twice",
    module: "record/task.ts",
    bug: "recoverNotes skips only a give-back's record that the repair of the free list published, not a " +
      "taken record's re-push killed between its claim and publish: that record is pushed twice",
    patches: [{
      find: "|| index === published) continue;\n",
      replace: "|| (which === RELEASING && index === published)) continue; // BUG\n",
    }],
  },
];

/**
 * A bug of a step cut short by a throw at a call that is no shared access (a stack overflow in a task that
 * recursed deep and then forked, or in a `run` called at the edge of the stack): a record taken and held
 * by nobody between two calls, or a repair that frees another thread's. Caught by
 * tests/worker/fork_join_test.ts and tests/producer/admission_test.ts, which cut at every call of the
 * step's parts too (tests/protocol/_cut_at.ts `cutRun`'s `calls`).
 */
export interface StackCutMutant {
  name: string;
  module: "worker/fork_join.ts" | "producer/admission.ts";
  bug: string;
  patches: Patch[];
}

/** The stack-cut mutants (group stack_cut). */
export const STACK_CUT_MUTANTS: readonly StackCutMutant[] = [
  {
    name: "fork_marked_after_allocate",
    module: "worker/fork_join.ts",
    bug: "place() allocates the fork's record, then sets the pushing mark by a call: a throw at that call " +
      "leaves the record marked cached by the worker, in no cache and no mark, held by nobody",
    patches: [{
      find: "    const handle = marks.allocatePushing();\n    if (handle === NO_RECORD) return -1;\n",
      replace: "    const handle = table.allocate(); // BUG: marked by a call after\n" +
        "    if (handle === NO_RECORD) return -1;\n    marks.setPushing(handle);\n",
    }],
  },
  {
    name: "submission_repair_reclaims_owners",
    module: "producer/admission.ts",
    bug: "a cut submission's repair reclaims the records and slabs marked -1 (the owner's) whatever thread it " +
      "runs in: a producer in another thread strands its own record and frees the owner's cached ones",
    patches: [{
      find: "      table.reclaimOwn();\n",
      replace: "      table.flushCache(); // BUG: -1, the owner's, not this thread's\n" +
        "      table.reclaimCachedBy(-1);\n      table.reclaimSlabsOf(-1);\n      table.repairCut();\n",
    }],
  },
];
