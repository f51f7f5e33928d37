/**
 * The known deque bugs of DESIGN.md, as mutants of the shipped `lib/deque.ts`.
 *
 * Mechanism (small on purpose): `lib/deque.ts` is never edited. {@link materializeMutant} reads it,
 * applies the mutant's patches — each an exact string replacement that must match exactly `count` times,
 * or the build fails loudly (so a mutant cannot silently stop applying when the deque changes) — rewrites
 * its two imports to absolute `file:` URLs of the real `lib/atomics.ts` and `lib/layout.ts`, and writes
 * the result to a temporary directory. Because the imports point at the real facade module, the mutant
 * shares the `mem` binding the harness installs in each simulated thread: it runs under the same
 * controlled scheduler as the shipped code.
 *
 * @module
 */

import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

/** One exact replacement. */
export interface Patch {
  find: string;
  replace: string;
  /** How many times `find` must occur (all are replaced). Default 1. */
  count?: number;
}

/** A known bug, as patches to `lib/deque.ts` (or to the module it names). */
export interface Mutant {
  /** Short name, used for the file and in reports. */
  name: string;
  /** The bug, in one sentence. */
  bug: string;
  patches: Patch[];
  /** The patched module, a file name in `lib/` (default `deque.ts`). Its relative imports must be in {@link REWRITTEN_IMPORTS}. */
  module?: string;
}

/** The mutants of DESIGN.md ("Known bugs that the specs and the fast-check suite must both catch"). */
export const MUTANTS: readonly Mutant[] = [
  {
    name: "pop_no_cas_last",
    bug: "pop takes the last task without the compare-exchange on top, so a thief can take it too",
    patches: [{ find: "    if (size > 0) return value;\n", replace: "    if (size >= 0) return value;\n" }],
  },
  {
    name: "pop_no_restore_bottom",
    bug: "pop that loses the race for the last task does not restore bottom (bottom = top - 1 remains)",
    patches: [{
      find: "    mem.store(words, DequeWords.bottom, (t + 1) | 0); // spec: PopRestoreBottom\n",
      replace: "    if (won) mem.store(words, DequeWords.bottom, (t + 1) | 0); // mutant: no restore when lost\n",
    }],
  },
  {
    name: "steal_uses_slot_after_failed_cas",
    bug: "steal ignores a failed compare-exchange on top and returns the slot value it read anyway",
    patches: [{
      find:
        "    if (mem.compareExchange(words, DequeWords.top, t, (t + 1) | 0) !== t) return RETRY; // spec: StealCasTop\n",
      replace: "    mem.compareExchange(words, DequeWords.top, t, (t + 1) | 0); // mutant: result ignored\n",
    }],
  },
  {
    name: "steal_half_copy_before_claim",
    bug: "stealHalf copies a batch of n slots into dst first, then claims them all with one CAS top t -> t+n, " +
      "racing the owner's CAS-free pop of the batch's newest tasks",
    patches: [{
      find: `    let taken = 0;
    for (;;) {
      const value = mem.load(words, DequeWords.slots + (t & this.mask)); // spec: HalfReadSlot
      // Claim before copy: the task becomes ours only if top is still t.
      if (mem.compareExchange(words, DequeWords.top, t, (t + 1) | 0) !== t) break; // spec: HalfCasTop
      // Invisible to dst's thieves until the publish below.
      mem.store(dstWords, DequeWords.slots + (((db + taken) | 0) & dst.mask), value); // spec: HalfWriteDst
      taken++;
      t = (t + 1) | 0;
      if (taken === want) break;
      // As a fresh steal would: top (now t, our own claim) first, then bottom, so a task the owner
      // popped meanwhile is not claimed twice.
      const b2 = mem.load(words, DequeWords.bottom); // spec: HalfRecheckBottom
      if (((b2 - t) | 0) <= 0) break;
    }
    if (taken === 0) return RETRY;
`,
      replace: `    // mutant: copy the whole batch first, then claim it with one compare-exchange.
    for (let i = 0; i < want; i++) {
      const value = mem.load(words, DequeWords.slots + (((t + i) | 0) & this.mask));
      mem.store(dstWords, DequeWords.slots + (((db + i) | 0) & dst.mask), value);
    }
    if (mem.compareExchange(words, DequeWords.top, t, (t + want) | 0) !== t) return RETRY;
    const taken = want;
`,
    }],
  },
  {
    name: "narrow_indices",
    bug: "indices wrap at 3 bits (sign-extended, compared by wrapping difference): a full deque of 4 reads " +
      "as size -4, so push overwrites a live slot and steal sees empty",
    patches: [
      { find: ") | 0", replace: ") << 29 >> 29", count: 17 },
      // The initial indices too, so that every stored index is a 3-bit one.
      { find: "DequeWords.top, initialIndex);", replace: "DequeWords.top, initialIndex << 29 >> 29);" },
      { find: "DequeWords.bottom, initialIndex);", replace: "DequeWords.bottom, initialIndex << 29 >> 29);" },
    ],
  },
];

/** Applies `mutant`'s patches to `source`; throws if a patch does not match exactly `count` times. */
export function applyPatches(source: string, mutant: Mutant): string {
  let out = source;
  for (const p of mutant.patches) {
    const found = out.split(p.find).length - 1;
    const want = p.count ?? 1;
    if (found !== want) {
      throw new Error(
        `Cannot build mutant '${mutant.name}' as a patch target occurs ${found} times in lib/${
          mutant.module ?? "deque.ts"
        } (expected ${want}): ` +
          JSON.stringify(p.find.slice(0, 120)),
      );
    }
    out = out.split(p.find).join(p.replace);
  }
  return out;
}

const LIB = new URL("../../lib/", import.meta.url);

/** The relative imports of each mutated module, rewritten to the real modules' absolute URLs. */
export const REWRITTEN_IMPORTS: Readonly<Record<string, readonly string[]>> = {
  "deque.ts": ["atomics.ts", "layout.ts"],
  "sleep.ts": ["atomics.ts", "layout.ts"],
  "latch.ts": ["atomics.ts"],
};

/** Rewrites the module's relative imports to the real modules' absolute URLs; throws if they moved. */
export function rewriteImports(source: string, module = "deque.ts"): string {
  let out = source;
  for (const name of REWRITTEN_IMPORTS[module] ?? []) {
    const from = `from "./${name}";`;
    if (!out.includes(from)) throw new Error(`Cannot build mutant as lib/${module} no longer imports "./${name}"`);
    out = out.split(from).join(`from "${new URL(name, LIB).href}";`);
  }
  if (/^import[^\n]*from "\.\//m.test(out)) {
    throw new Error(`Cannot build mutant as lib/${module} has a relative import not rewritten`);
  }
  return out;
}

let dir: string | null = null;

/** Writes `mutant` as a module in a temporary directory; returns its `file:` URL. */
export function materializeMutant(mutant: Mutant): URL {
  const module = mutant.module ?? "deque.ts";
  const source = readFileSync(new URL(module, LIB), "utf8");
  const text = `// GENERATED by tests/mutants/mutants.ts from lib/${module}: mutant '${mutant.name}': ${mutant.bug}\n` +
    rewriteImports(applyPatches(source, mutant), module);
  if (dir === null) {
    dir = mkdtempSync(join(tmpdir(), "filch-mutants-"));
    // Node decides ESM vs CommonJS for a .ts file by the nearest package.json.
    writeFileSync(join(dir, "package.json"), '{ "type": "module" }\n');
  }
  const sub = join(dir, mutant.name);
  mkdirSync(sub, { recursive: true });
  const file = join(sub, module);
  writeFileSync(file, text);
  return pathToFileURL(file);
}

/** Deletes the temporary directory of the mutants written so far (modules already loaded stay loaded). */
export function removeMaterializedMutants(): void {
  if (dir === null) return;
  rmSync(dir, { recursive: true, force: true });
  dir = null;
}

/** The URL of the shipped deque. */
export const SHIPPED_DEQUE: URL = new URL("deque.ts", LIB);

// ---------------------------------------------------------------------------------------------------------
// The sleep/wake and latch mutants (lib/sleep.ts, lib/latch.ts), run by tests/lincheck_sleep_test.ts.
// Kept apart from MUTANTS, which the deque suite loads as deque modules.

/** The known sleep/wake and latch bugs, as patches to `lib/sleep.ts` or `lib/latch.ts`. */
export const SLEEP_MUTANTS: readonly Mutant[] = [
  {
    name: "sleep_skips_final_check",
    module: "sleep.ts",
    bug: "fallAsleep counts itself without comparing the JEC with getSleepy's: a post since then is ignored",
    patches: [{
      find: "      if (jecOf(c) !== jec) {\n",
      replace: "      if (false) { // mutant: the JEC test dropped\n",
    }],
  },
  {
    name: "poster_never_wakes",
    module: "sleep.ts",
    bug: "newWork moves the JEC but never wakes a sleeping worker",
    patches: [{
      find: "    if ((c & SLEEPERS_MASK) === 0) return false;\n    return this.wakeOne();\n",
      replace: "    return false; // mutant: the JEC moved, nobody woken\n",
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
        "    const jec = this.getSleepy();\n    // One more search after announcing: work posted before the announcement is found here.\n    const late = search();\n",
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
export const SHIPPED_SLEEP: URL = new URL("sleep.ts", LIB);
export const SHIPPED_LATCH: URL = new URL("latch.ts", LIB);
