/**
 * The mutant specs: each known bug as a few exact replacements in the real spec it breaks.
 *
 * Mechanism (the same as `tests/mutants/mutants.ts` for the TypeScript): the real spec is never copied.
 * {@link applyMutant} reads the base module, applies the mutant's patches — each an exact string
 * replacement that must match exactly `count` times (default 1) — and returns the mutated text, which
 * `check.ts` writes under the base module's own name into the run's temporary directory, beside the
 * mutant's configuration (`spec/mutants/<config>.cfg`). A patch that no longer matches (the real spec
 * changed under it) throws {@link PatchError}: `check.ts` reports that run as FAIL, never as a skip,
 * so a mutant cannot silently stop testing anything.
 *
 * Each replacement marks its change with `BUG:` so that a counterexample's trace can be read against it.
 *
 * @module
 */

/** One exact replacement. */
export interface SpecPatch {
  /** The text to find, exactly (whitespace included). */
  readonly find: string;
  /** What replaces every occurrence. */
  readonly replace: string;
  /** How many times `find` must occur. Default 1. */
  readonly count?: number;
}

/** A known bug, as patches to one real spec. */
export interface SpecMutant {
  /** The mutant's name (its configurations are `spec/mutants/<name>*.cfg`). */
  readonly name: string;
  /** The real module it patches, relative to `spec/` (the mutant keeps that module's name). */
  readonly base: string;
  /** The bug, in one sentence. */
  readonly bug: string;
  readonly patches: readonly SpecPatch[];
}

/** A patch that does not match its base spec the expected number of times. */
export class PatchError extends Error {}

/** Every mutant spec, by name. */
export const SPEC_MUTANTS: readonly SpecMutant[] = [
  // ---- ChaseLev.tla (lib/protocol/deque.ts) ----
  {
    name: "PopWithoutCas",
    base: "ChaseLev.tla",
    bug: "pop takes the last task without the compare-exchange on top",
    patches: [{
      find: "       IF Diff(loc[i].b, loc[i].t) > 0\n",
      replace: "       IF Diff(loc[i].b, loc[i].t) >= 0   \\* BUG: was > 0; the last task is taken without the CAS\n",
    }],
  },
  {
    name: "PopNoRestore",
    base: "ChaseLev.tla",
    bug: "pop that loses the race for the last task does not restore bottom",
    patches: [{
      find: '       /\\ loc\' = [loc EXCEPT ![i].pc = "PopRestoreBottom", ![i].won = won]\n',
      replace: "       \\* BUG: was always PopRestoreBottom; after losing, bottom is left at top - 1\n" +
        '       /\\ IF won THEN loc\' = [loc EXCEPT ![i].pc = "PopRestoreBottom", ![i].won = won] ELSE Done(i, EMPTY)\n',
    }],
  },
  {
    name: "StealUseAfterFailedCas",
    base: "ChaseLev.tla",
    bug: "steal ignores a failed compare-exchange on top and returns the slot value it read anyway",
    patches: [{
      find: "         ELSE /\\ UNCHANGED <<top, taken>>                  \\* lost: returns RETRY, drops the value\n" +
        "              /\\ Done(i, RETRY)\n",
      replace: "         ELSE /\\ UNCHANGED top                          \\* BUG: lost, but returns the value anyway\n" +
        "              /\\ taken' = [taken EXCEPT ![loc[i].v] = @ + 1]\n" +
        "              /\\ Done(i, loc[i].v)\n",
    }],
  },
  {
    name: "StealEmptyAfterFailedCas",
    base: "ChaseLev.tla",
    bug: "steal answers EMPTY instead of RETRY after a failed compare-exchange, although the deque may hold tasks",
    patches: [{
      find: "              /\\ Done(i, RETRY)\n",
      replace: "              /\\ Done(i, EMPTY)                       \\* BUG: was RETRY\n",
    }],
  },
  {
    name: "PopEmptyAfterWin",
    base: "ChaseLev.tla",
    bug: "pop answers EMPTY for the last task even when its compare-exchange won it (the task is lost)",
    patches: [{
      find: "    /\\ Done(i, IF loc[i].won THEN loc[i].v ELSE EMPTY)\n",
      replace: "    /\\ Done(i, EMPTY)                                   \\* BUG: was won ? value : EMPTY\n",
    }],
  },
  {
    name: "HalfRecheckOffByOne",
    base: "ChaseLev.tla",
    bug: "steal-half's recheck of bottom is off by one: it claims another task when bottom = its next top " +
      "(the source is empty)",
    patches: [{
      find: "    /\\ loc' = [loc EXCEPT ![i].pc = IF Diff(bottom[loc[i].vic], loc[i].t) <= 0 THEN \"HalfPublishDst\"\n",
      replace: "    /\\ loc' = [loc EXCEPT ![i].pc = IF Diff(bottom[loc[i].vic], loc[i].t) < 0 THEN \"HalfPublishDst\"  \\* BUG: was <= 0\n",
    }],
  },
  {
    name: "HalfCopiesBeforeClaim",
    base: "ChaseLev.tla",
    bug: "steal-half copies a batch before claiming it with one compare-exchange t -> t + n (Tokio-style), " +
      "racing the owner's CAS-free pop",
    patches: [
      {
        find: "HalfReadSlot(i) ==\n    /\\ loc[i].pc = \"HalfReadSlot\"\n" +
          "    /\\ loc' = [loc EXCEPT ![i].pc = \"HalfCasTop\", ![i].v = slot[loc[i].vic][Slot(loc[i].t)]]\n",
        replace: "HalfReadSlot(i) ==   \\* BUG: reads slot t + got and copies it before any claim\n" +
          "    /\\ loc[i].pc = \"HalfReadSlot\"\n" +
          "    /\\ loc' = [loc EXCEPT ![i].pc = \"HalfWriteDst\", ![i].v = slot[loc[i].vic][Slot(loc[i].t + loc[i].got)]]\n",
      },
      {
        find: "         THEN /\\ top' = [top EXCEPT ![d] = @ + 1]       \\* claimed: the task is ours\n" +
          "              /\\ loc' = [loc EXCEPT ![i].pc = \"HalfWriteDst\"]\n" +
          "         ELSE /\\ UNCHANGED top                          \\* lost: RETRY if nothing claimed yet\n" +
          "              /\\ IF loc[i].got = 0 THEN Done(i, RETRY)\n" +
          "                 ELSE loc' = [loc EXCEPT ![i].pc = \"HalfPublishDst\", ![i].v = 0]\n",
        replace: "         THEN /\\ top' = [top EXCEPT ![d] = @ + loc[i].want]   \\* BUG: claims the whole batch at once\n" +
          "              /\\ loc' = [loc EXCEPT ![i].pc = \"HalfPublishDst\"]\n" +
          "         ELSE /\\ UNCHANGED top                          \\* lost: RETRY; the copies stay unpublished\n" +
          "              /\\ Done(i, RETRY)\n",
      },
      {
        find: "    /\\ loc' = [loc EXCEPT ![i].pc = IF loc[i].got + 1 = loc[i].want THEN \"HalfPublishDst\"\n" +
          "                                    ELSE \"HalfRecheckBottom\",\n" +
          "                          ![i].got = @ + 1, ![i].t = @ + 1, ![i].v = 0]\n",
        replace:
          "    /\\ loc' = [loc EXCEPT ![i].pc = IF loc[i].got + 1 = loc[i].want THEN \"HalfCasTop\"   \\* BUG: claim after copy\n" +
          "                                    ELSE \"HalfReadSlot\",\n" +
          "                          ![i].got = @ + 1, ![i].v = 0]\n",
      },
      {
        find: "AbsHand(i) ==\n    [k \\in 1..loc[i].got |-> slot[i][Slot(loc[i].db + k - 1)]]\n" +
          "    \\o (IF loc[i].pc = \"HalfWriteDst\" THEN << loc[i].v >> ELSE << >>)\n",
        replace: "AbsHand(i) ==   \\* BUG (its mapping): the copies are the thief's only once its batch claim succeeded\n" +
          "    IF loc[i].pc = \"HalfPublishDst\" THEN [k \\in 1..loc[i].got |-> slot[i][Slot(loc[i].db + k - 1)]] ELSE << >>\n",
      },
    ],
  },
  {
    name: "NarrowCounters",
    base: "ChaseLev.tla",
    bug: "index words too narrow for the model: CountersWideEnough dropped, the configurations choose the modulus",
    patches: [{
      find: "ASSUME CountersWideEnough == Modulus >= 2 * (Pushes + Capacity) + 2\n",
      replace: "\\* BUG: the assumption is dropped, so the configurations may make the words too narrow.\n",
    }],
  },
  // ---- SleepWake.tla (lib/protocol/sleep.ts, lib/worker/: loop.ts, search.ts, marks.ts; lib/producer/, lib/owner/owner.ts) ----
  {
    name: "SkipFinalCheck",
    base: "SleepWake.tla",
    bug: "a sleeper that skips its final check before sleeping",
    patches: [{
      find: "    /\\ IF JecOf(counters) /= loc[w].tok\n",
      replace: "    /\\ IF FALSE                                        \\* BUG: the JEC is not compared with the token\n",
    }],
  },
  {
    name: "PosterNoWake",
    base: "SleepWake.tla",
    bug: "a poster that bumps the counter but never wakes a sleeper",
    patches: [{
      find: "    IF Sleepers(c) = 0\n",
      replace: "    IF TRUE                                             \\* BUG: never looks for a sleeper to wake\n",
    }],
  },
  {
    // Safe only while a second worker is awake to find the task: caught with one worker (SleepWake1), not
    // with two (SleepWake.cfg passes it: the worker a poster leaves asleep is never the only one).
    name: "PosterNeedsTwoSleepers",
    base: "SleepWake.tla",
    bug: "a poster wakes a sleeper only when more than one sleeps",
    patches: [{
      find: "    IF Sleepers(c) = 0\n",
      replace: "    IF Sleepers(c) <= 1                                 \\* BUG: was = 0; one sleeper is left asleep\n",
    }],
  },
  {
    name: "SleepNarrowCounters",
    base: "SleepWake.tla",
    bug: "the counters word's fields too narrow: CountersWideEnough dropped, the configurations choose the fields",
    patches: [{
      find: "ASSUME CountersWideEnough ==\n" +
        "    /\\ SleepersModulus > Cardinality(Workers)\n" +
        "    /\\ JecModulus > MaxJecMoves\n",
      replace: "\\* BUG: no ASSUME CountersWideEnough: the configurations choose fields too narrow for the model.\n",
    }],
  },
  // ---- Lifecycle.tla (lib/worker/: loop.ts, search.ts, runner.ts, fork_join.ts, marks.ts; lib/producer/, lib/owner/owner.ts) ----
  {
    name: "LatchSetNoNotify",
    base: "Lifecycle.tla",
    bug: "the thief sets the latch but does not notify the joiner waiting on it",
    patches: [{
      find: 'ELSE IF t \\in Workers /\\ pc[t] = "LatchBlocked" THEN "JoinRead"',
      replace: 'ELSE IF FALSE THEN "JoinRead" \\* BUG: no notify',
      count: 2,
    }],
  },
  {
    // Safe only while a second worker is awake to steal the subtask: caught with one worker, not with two.
    name: "JoinerWaitsForThief",
    base: "Lifecycle.tla",
    bug: "a joiner whose subtask is not done waits on the latch without popping its own deque first, " +
      "leaving the subtask to a thief",
    patches: [{
      find: '                    ELSE /\\ Go(w, "JoinPop") /\\ UNCHANGED <<joining, rstate, frees>>\n',
      replace: '                    ELSE /\\ Go(w, "JoinStop") /\\ UNCHANGED <<joining, rstate, frees>>  \\* BUG: was JoinPop\n',
    }],
  },
  {
    name: "TerminateForgetsDeque",
    base: "Lifecycle.tla",
    bug: "terminate forgets the tasks in a dead worker's deque",
    patches: [{
      find: '    /\\ Settle({k \\in MainTasks : entry[k] = "placed" /\\ ~settledFlag[k]})\n',
      replace: '    /\\ Settle({k \\in MainTasks : entry[k] = "placed" /\\ ~settledFlag[k]\n' +
        "                                  /\\ ~\\E w \\in Workers : ~alive[w] /\\ k \\in dq[w]})  \\* BUG\n",
    }],
  },
  {
    name: "RecoverySkipsOrphans",
    base: "Lifecycle.tla",
    bug: "recovery does not orphan the unjoined subtask of a dead forker: its record stays in use for good",
    patches: [{
      find: '                       orphan == forked /\\ forker = w /\\ rstate[Child] /= "FREE"\n',
      replace: "                       orphan == FALSE  \\* BUG: a dead forker's subtask is not orphaned\n",
    }],
  },
  {
    name: "FinisherStoresLatch",
    base: "Lifecycle.tla",
    bug: "the finisher stores the latch instead of exchanging it, so it never sees that its subtask was orphaned",
    patches: [{
      find: "    /\\ IF latch = 2\n         THEN /\\ Free({Child}) /\\ Return(w)\n",
      replace: "    /\\ IF FALSE  \\* BUG: a store, not an exchange: ORPHANED goes unseen\n" +
        "         THEN /\\ Free({Child}) /\\ Return(w)\n",
    }],
  },
  {
    name: "RecoveryFreesUnsetOrphan",
    base: "Lifecycle.tla",
    bug: "recovery frees a dead forker's subtask whose latch is still unset (as well as orphaning it): its finisher frees it again",
    patches: [{
      find: "Free(R \\cup (IF orphan /\\ latch = 1 THEN {Child} ELSE {}))",
      replace: "Free(R \\cup (IF orphan THEN {Child} ELSE {}))  \\* BUG: also when the latch is unset",
    }],
  },
  {
    name: "StartStoresRunning",
    base: "Lifecycle.tla",
    bug: "a worker starts a task with a store of RUNNING, not a compare-exchange from QUEUED: it runs a task its caller cancelled",
    patches: [{
      find: '       IF rstate[t] = "QUEUED"\n',
      replace: '       IF TRUE  \\* BUG: a store of RUNNING; a CANCELLED task is run anyway\n',
    }],
  },
  {
    name: "CancelFreesRecord",
    base: "Lifecycle.tla",
    bug: "cancel frees the cancelled record itself, although its handle is still in a queue: the worker that takes it frees it again",
    patches: [
      {
        find: '              THEN /\\ rstate\' = [rstate EXCEPT ![k] = "CANCELLED"] /\\ cancelled\' = cancelled \\cup {k}\n' +
          "              ELSE UNCHANGED <<rstate, cancelled>>\n",
        replace: "              THEN /\\ Free({k}) /\\ cancelled' = cancelled \\cup {k}  \\* BUG: freed while its handle is queued\n" +
          "              ELSE UNCHANGED <<rstate, cancelled, frees>>\n",
      },
      {
        find: "    /\\ UNCHANGED workerVars /\\ UNCHANGED <<frees, forker, forkerGone, lateRuns>>\n",
        replace: "    /\\ UNCHANGED workerVars /\\ UNCHANGED <<forker, forkerGone, lateRuns>>\n",
      },
    ],
  },
  {
    name: "ThiefRunsAbortedFork",
    base: "Lifecycle.tla",
    bug: "a thief runs the subtask of a task its caller aborted (start ignores the root's abort mark)",
    patches: [{
      find: "              /\\ runs' = IF t = Child /\\ Parent \\in aborted THEN runs ELSE [runs EXCEPT ![t] = @ + 1]\n",
      replace: "              /\\ runs' = [runs EXCEPT ![t] = @ + 1]  \\* BUG: the root's abort mark is not read\n",
    }],
  },
  {
    name: "JoinerRunsAbortedFork",
    base: "Lifecycle.tla",
    bug: "a joiner that pops its subtask back runs it although its task was aborted",
    patches: [{
      find: "              /\\ runs' = IF Parent \\in aborted THEN runs ELSE [runs EXCEPT ![Child] = @ + 1]  \\* not run if aborted\n",
      replace: "              /\\ runs' = [runs EXCEPT ![Child] = @ + 1]  \\* BUG: runs b inline though task 1 was aborted\n",
    }],
  },
  // ---- Injector.tla (lib/protocol/injector.ts) ----
  {
    name: "PublishBeforeWrite",
    base: "Injector.tla",
    bug: "the producer publishes the sequence word before it writes the value",
    patches: [
      {
        find: '              /\\ loc\' = [loc EXCEPT ![i].pc = "PushWriteValue", ![i].pos = tail]\n',
        replace: '              /\\ loc\' = [loc EXCEPT ![i].pc = "PushPublishSeq", ![i].pos = tail]  \\* BUG: publish first\n',
      },
      {
        find: '    /\\ loc\' = [loc EXCEPT ![i].pc = "PushPublishSeq"]\n',
        replace: "    /\\ Done(i, TRUE)                                  \\* BUG: the value is written last\n",
      },
      {
        find: "    /\\ Done(i, TRUE)                                  \\* returns true\n",
        replace: '    /\\ loc\' = [loc EXCEPT ![i].pc = "PushWriteValue"]  \\* BUG: was Done: the value is not written yet\n',
      },
    ],
  },
  {
    name: "PopWithoutCasHead",
    base: "Injector.tla",
    bug: "the consumer claims its position with a plain store of head, not a compare-exchange",
    patches: [{
      find: "    /\\ IF Wrap(head) = Wrap(loc[i].pos)\n" +
        "         THEN /\\ head' = head + 1\n" +
        '              /\\ loc\' = [loc EXCEPT ![i].pc = "PopReadValue", ![i].pos = head, ![i].claim = PosValue(head)]\n' +
        "         ELSE /\\ Retry(i, \"PopReadHead\")             \\* another consumer claimed pos: read head again\n" +
        "              /\\ UNCHANGED head\n",
      replace: "    \\* BUG: mem.store(head, pos + 1) instead of the compare-exchange: always \"wins\".\n" +
        "    /\\ head' = loc[i].pos + 1\n" +
        '    /\\ loc\' = [loc EXCEPT ![i].pc = "PopReadValue", ![i].claim = PosValue(loc[i].pos)]\n',
    }],
  },
  {
    name: "PopEmptyAfterLostCas",
    base: "Injector.tla",
    bug: "a consumer that loses the compare-exchange on head answers EMPTY instead of reading head again",
    patches: [{
      find: "         ELSE /\\ Retry(i, \"PopReadHead\")             \\* another consumer claimed pos: read head again\n",
      replace: "         ELSE /\\ Done(i, EMPTY)                       \\* BUG: was Retry: lost the race, answers EMPTY\n",
    }],
  },
  {
    name: "ReleaseBeforeRead",
    base: "Injector.tla",
    bug: "the consumer releases the slot before it reads the value",
    patches: [
      {
        find: 'HandPCs == {"PopReadValue"}\n',
        replace: 'HandPCs == {"PopReleaseSeq", "PopReadValue"}  \\* BUG (its mapping): the release comes first\n',
      },
      {
        find: '              /\\ loc\' = [loc EXCEPT ![i].pc = "PopReadValue", ![i].pos = head, ![i].claim = PosValue(head)]\n',
        replace:
          '              /\\ loc\' = [loc EXCEPT ![i].pc = "PopReleaseSeq", ![i].pos = head, ![i].claim = PosValue(head)]  \\* BUG\n',
      },
      {
        find: '       /\\ loc\' = [loc EXCEPT ![i].pc = "PopReleaseSeq", ![i].v = v, ![i].claim = Unwritten]\n',
        replace: "       /\\ Done(i, v)                                 \\* BUG: returns v after the release\n",
      },
      {
        find: "    /\\ Done(i, loc[i].v)                              \\* returns the value read\n",
        replace: '    /\\ loc\' = [loc EXCEPT ![i].pc = "PopReadValue"]   \\* BUG: was Done: the value is read after the release\n',
      },
    ],
  },
  {
    name: "ReleaseWrongSeq",
    base: "Injector.tla",
    bug: "the consumer releases the slot with seq = pos + 1 (was pos + capacity)",
    patches: [{
      find: "    /\\ seq' = [seq EXCEPT ![Slot(loc[i].pos)] = loc[i].pos + Capacity]\n",
      replace: "    /\\ seq' = [seq EXCEPT ![Slot(loc[i].pos)] = loc[i].pos + 1]  \\* BUG: was pos + Capacity\n",
    }],
  },
  {
    name: "NarrowPositions",
    base: "Injector.tla",
    bug: "positions and sequence words too narrow for the model: CountersWideEnough dropped",
    patches: [{
      find: "ASSUME CountersWideEnough == Modulus >= 2 * (Pushes + Capacity)\n",
      replace: "\\* BUG: the assumption is dropped, so the configurations may make the words too narrow.\n",
    }],
  },
  // ---- Levels.tla (lib/protocol/levels.ts) ----
  {
    name: "LevelQuotaIgnored",
    base: "Levels.tla",
    bug: "a worker never gives a starving level its turn (the TypeScript mutant level_quota_ignored): a low " +
      "task waits behind every high one",
    patches: [{
      find: "    /\\ IF StarvingAt(w, lvl[w]) = {}\n",
      replace: "    /\\ IF TRUE \\* BUG: was StarvingAt(w, lvl[w]) = {}; no level ever gets its turn\n",
    }],
  },
  {
    name: "LevelsServedLowFirst",
    base: "Levels.tla",
    bug: "a worker tries the levels from low to high (the TypeScript mutant levels_served_low_first)",
    patches: [
      {
        find: "/\\ pc' = [pc EXCEPT ![w] = \"Pop\"] /\\ lvl' = [lvl EXCEPT ![w] = 0]",
        replace: "/\\ pc' = [pc EXCEPT ![w] = \"Pop\"] /\\ lvl' = [lvl EXCEPT ![w] = 2] \\* BUG: low first",
        count: 2,
      },
      {
        find: "IF l = 2 THEN /\\ pc' = [pc EXCEPT ![w] = \"Top\"] /\\ UNCHANGED lvl   \\* QUEUE_EMPTY\n" +
          "                           ELSE /\\ lvl' = [lvl EXCEPT ![w] = l + 1] /\\ UNCHANGED pc\n",
        replace: "IF l = 0 THEN /\\ pc' = [pc EXCEPT ![w] = \"Top\"] /\\ UNCHANGED lvl   \\* QUEUE_EMPTY\n" +
          "                           ELSE /\\ lvl' = [lvl EXCEPT ![w] = l - 1] /\\ UNCHANGED pc \\* BUG: upwards\n",
      },
    ],
  },
  {
    name: "LevelNeverAnnounced",
    base: "Levels.tla",
    bug: "the producer pushes a high or low task without announcing its level (the TypeScript mutant " +
      "level_never_announced): workers keep taking from the normal queue alone",
    patches: [{
      find: "           THEN /\\ announced' = announced \\cup {l}\n",
      replace: "           THEN /\\ announced' = announced \\* BUG: the level is not announced\n",
    }],
  },
  {
    name: "LevelPopsNewest",
    base: "Levels.tla",
    bug: "a take removes the newest task of its level, not the oldest: the order within a level is broken",
    patches: [
      {
        find: "Head(q[l])",
        replace: "q[l][Len(q[l])]",
        count: 2,
      },
      {
        find: "    /\\ q' = [q EXCEPT ![l] = Tail(@)]\n",
        replace: "    /\\ q' = [q EXCEPT ![l] = SubSeq(@, 1, Len(@) - 1)] \\* BUG: the newest leaves\n",
      },
    ],
  },
  // ---- KillGuard.tla (lib/protocol/kill_guard.ts) ----
  {
    name: "KillIgnoresGuard",
    base: "KillGuard.tla",
    bug: "the main thread terminates the worker without looking at its guard",
    patches: [{
      find: "    /\\ guard = 0        \\* a load that sees 1 changes nothing: the main thread polls again later\n",
      replace: "    /\\ TRUE             \\* BUG: was guard = 0; the main thread kills whatever the guard says\n",
    }],
  },
  {
    name: "KillReadsGuardFirst",
    base: "KillGuard.tla",
    bug: "the main thread reads the guard, and decides, before it moves the epoch (Dekker's order swapped on the " +
      "main side; the TypeScript mutant killer_reads_guard_before_epoch)",
    patches: [
      {
        find: "KillBumpEpoch(t) ==\n" +
          "    /\\ t = Main /\\ mpc = \"idle\" /\\ requests < MaxRequests\n" +
          "    /\\ epoch' = epoch + 1\n" +
          "    /\\ mpc' = \"poll\"\n" +
          "    /\\ requests' = requests + 1\n" +
          "    /\\ UNCHANGED <<guard, mine, wpc, alive, killed>>\n",
        replace: "KillBumpEpoch(t) ==   \\* BUG: the request reads the guard first; the epoch moves in KillLateBump\n" +
          "    /\\ t = Main /\\ mpc = \"idle\" /\\ requests < MaxRequests\n" +
          "    /\\ mpc' = IF guard = 0 THEN \"decided\" ELSE \"late\"\n" +
          "    /\\ requests' = requests + 1\n" +
          "    /\\ UNCHANGED <<guard, epoch, mine, wpc, alive, killed>>\n\n" +
          "\\* BUG: ... then moves the epoch, and acts on the guard it read before (later polls are in order)\n" +
          "KillLateBump(t) ==\n" +
          "    /\\ t = Main /\\ mpc \\in {\"decided\", \"late\"}\n" +
          "    /\\ epoch' = epoch + 1\n" +
          "    /\\ mpc' = IF mpc = \"decided\" THEN \"killed\" ELSE \"poll\"\n" +
          "    /\\ killed' = (killed \\/ mpc = \"decided\")\n" +
          "    /\\ UNCHANGED <<guard, mine, wpc, alive, requests>>\n",
      },
      {
        find: "    \\/ KillBumpEpoch(t) \\/ KillReadGuard(t) \\/ KillWithdraw(t)\n",
        replace: "    \\/ KillBumpEpoch(t) \\/ KillReadGuard(t) \\/ KillWithdraw(t) \\/ KillLateBump(t)   \\* BUG: one step more\n",
      },
      {
        find: "    /\\ mpc \\in {\"idle\", \"poll\", \"killed\"}\n",
        replace: "    /\\ mpc \\in {\"idle\", \"poll\", \"killed\", \"decided\", \"late\"}   \\* BUG (its states)\n",
      },
    ],
  },
  {
    name: "GuardReadsEpochFirst",
    base: "KillGuard.tla",
    bug: "the worker loads the epoch before it raises its guard (Dekker's order swapped)",
    patches: [
      {
        find: '    /\\ Go(Worker, "Raise") /\\ wpc = "User"\n',
        replace: '    /\\ Go(Worker, "ReadEpoch") /\\ wpc = "User"   \\* BUG: the epoch first, then the guard\n',
      },
      {
        find: '    /\\ Go(t, IF epoch = mine THEN "Pool1" ELSE "HaltLower") /\\ wpc = "ReadEpoch"\n',
        replace:
          '    /\\ Go(t, IF epoch = mine THEN "Raise" ELSE "HaltLower") /\\ wpc = "ReadEpoch"  \\* BUG: raises after the load\n',
      },
      {
        find: '    /\\ Go(t, "ReadEpoch") /\\ wpc = "Raise"\n',
        replace: '    /\\ Go(t, "Pool1") /\\ wpc = "Raise"   \\* BUG: into the pool step on the epoch read before\n',
      },
    ],
  },
  {
    name: "HaltSkipsRecheck",
    base: "KillGuard.tla",
    bug: "the worker leaving its halt raises its guard and enters the pool step without reading the epoch again",
    patches: [{
      find: '    /\\ Go(t, "HaltRecheck") /\\ wpc = "HaltRaise"\n',
      replace: '    /\\ Go(t, "Pool1") /\\ wpc = "HaltRaise"   \\* BUG: was HaltRecheck; no second look at the epoch\n',
    }],
  },
  {
    name: "HaltKeepsGuard",
    base: "KillGuard.tla",
    bug: "the halting worker does not lower its guard, so the main thread's poll never succeeds",
    patches: [{
      find: '    /\\ Go(t, "HaltRead") /\\ wpc = "HaltLower"\n    /\\ guard\' = 0\n',
      replace: '    /\\ Go(t, "HaltRead") /\\ wpc = "HaltLower"\n    /\\ guard\' = guard   \\* BUG: was 0; the halted worker keeps its guard up\n',
    }],
  },
  {
    name: "WithdrawForgetsEpoch",
    base: "KillGuard.tla",
    bug: "withdrawing a request does not restore the epoch, so a halted worker never resumes",
    patches: [{
      find: "    /\\ epoch' = mine\n",
      replace: "    /\\ epoch' = epoch   \\* BUG: was mine; the request is never taken back\n",
    }],
  },
  // ---- Slabs.tla (lib/record/slabs.ts, lib/record/payload.ts) ----
  {
    name: "TakeSkipsRecheck",
    base: "Slabs.tla",
    bug: "take keeps the slab it claimed without reading its size again: a reset may have remade it smaller",
    patches: [{
      find: "       IF size[s] >= Len(t)\n       THEN /\\ Took(t, s)\n",
      replace: "       IF TRUE   \\* BUG: was size[s] >= Len(t) (the size is not read again after the claim)\n" +
        "       THEN /\\ Took(t, s)\n",
    }],
  },
  {
    name: "TakeStoresHeld",
    base: "Slabs.tla",
    bug: "take claims a FREE slab with a plain store instead of a compare-exchange: two takers share it",
    patches: [{
      find: "       IF state[s] = FREE\n       THEN /\\ state' = [state EXCEPT ![s] = t]\n",
      replace: "       IF TRUE   \\* BUG: was state[s] = FREE (a compare-exchange); a plain store claims it whatever its state\n" +
        "       THEN /\\ state' = [state EXCEPT ![s] = t]\n",
    }],
  },
  {
    name: "ResetClaimsHeld",
    base: "Slabs.tla",
    bug: "reset claims held slots too (the TypeScript mutant reset_ignores_held): the arena is reset under " +
      "payloads in flight",
    patches: [{
      find: "       IF st \\in {FREE, EMPTY}\n",
      replace: "       IF st /= MAKING   \\* BUG: was st \\in {FREE, EMPTY}; a held slot is claimed too\n",
    }],
  },
  {
    name: "FreeClearsFirst",
    base: "Slabs.tla",
    bug: "freePayload clears the record's reference before it gives the slot back: a reclaim in between " +
      "empties a slot that the late give-back then frees under its next holder",
    patches: [
      {
        find: "    /\\ At(t, \"FreeGive\")\n    /\\ state' = [state EXCEPT ![l[t].i] = FREE]\n",
        replace: "    /\\ At(t, \"FreeGive\")   \\* BUG: the reference is cleared first\n" +
          "    /\\ rec' = [rec EXCEPT ![l[t].p] = 0]\n",
      },
      {
        find: "    /\\ UNCHANGED <<offset, size, top>> /\\ UNCHANGED <<arena, rec, recOwner, writer, len, slotOf, made>>\n",
        replace: "    /\\ UNCHANGED <<offset, size, top, state>> /\\ UNCHANGED <<arena, recOwner, writer, len, slotOf, made>>\n",
      },
      {
        find: "    /\\ At(t, \"FreeClearRecord\")\n    /\\ rec' = [rec EXCEPT ![l[t].p] = 0]\n",
        replace: "    /\\ At(t, \"FreeClearRecord\")   \\* BUG: the give-back comes second\n" +
          "    /\\ state' = [state EXCEPT ![l[t].i] = FREE]\n",
      },
      {
        find: "    /\\ UNCHANGED slabVars /\\ UNCHANGED <<arena, writer, len, slotOf, made>> /\\ UNCHANGED envVars\n",
        replace: "    /\\ UNCHANGED <<offset, size, top, rec>> /\\ UNCHANGED <<arena, writer, len, slotOf, made>>\n" +
          "    /\\ UNCHANGED envVars\n",
      },
    ],
  },
  {
    name: "ReclaimIgnoresRecords",
    base: "Slabs.tla",
    bug: "reclaim empties every slot the dead worker held without checking that no record names it",
    patches: [{
      find: "       THEN l' = [l EXCEPT ![t].pc = \"ReclaimReadRecord\", ![t].j = 1]\n",
      replace: "       THEN l' = [l EXCEPT ![t].pc = \"ReclaimCas\", ![t].j = 0]   \\* BUG: was ReclaimReadRecord (named?)\n",
    }],
  },
  // ---- ChaseLevDeath.tla (lib/protocol/deque.ts notes, lib/owner/recovery.ts) ----
  {
    name: "DequeRecoverySkipped",
    base: "ChaseLevDeath.tla",
    bug: "the replacement starts on a dead owner's deque without the repair of the operation it died in",
    patches: [
      { find: "       IN CASE Popping(i) ->\n", replace: "       IN CASE FALSE ->   \\* BUG: no repair (was Popping(i))\n" },
      { find: "            [] PopTaken(i) ->\n", replace: "            [] FALSE ->   \\* BUG: (was PopTaken(i))\n" },
      { find: "            [] Receiving(i) ->\n", replace: "            [] FALSE ->   \\* BUG: (was Receiving(i))\n" },
    ],
  },
  {
    name: "DequeRecoveryDropsWonTask",
    base: "ChaseLevDeath.tla",
    bug: "the repair of a pop that won the last task restores bottom but does not push the task back",
    patches: [{
      find: "                 /\\ slot' = [slot EXCEPT ![i][Slot(b + 1)] = loc[i].v]\n" +
        "                 /\\ bottom' = [bottom EXCEPT ![i] = b + 2]\n" +
        "                 /\\ taken' = [taken EXCEPT ![loc[i].v] = @ - 1]\n",
      replace: "                 /\\ bottom' = [bottom EXCEPT ![i] = b + 1]   \\* BUG: the won task is dropped\n" +
        "                 /\\ UNCHANGED <<slot, taken>>\n",
    }],
  },
  {
    name: "DequeRecoveryLosesClaimed",
    base: "ChaseLevDeath.tla",
    bug: "the repair of a steal-half publishes the tasks written but not the one claimed and not yet written",
    patches: [{
      find: "           written == IF loc[i].pc = \"HalfWriteDst\" THEN g + 1 ELSE g\n",
      replace: "           written == g   \\* BUG: the claimed task is not counted\n",
    }],
  },
  // ---- InjectorDeath.tla (lib/protocol/injector.ts notes, lib/owner/recovery.ts) ----
  {
    name: "DeathRecoverySkipped",
    base: "InjectorDeath.tla",
    bug: "the main thread does not complete a dead thread's queue operation (recovery.ts completeCutOperations skipped)",
    patches: [{
      find: "Recover(i) == RecoverNothing(i) \\/ RecoverPublish(i) \\/ RecoverRelease(i)\n",
      replace: "Recover(i) == FALSE   \\* BUG: the dead are never recovered\n",
    }],
  },
  {
    name: "DeathRecoveryDropsValue",
    base: "InjectorDeath.tla",
    bug: "the recovery of a pop releases its position but drops the value the pop never returned",
    patches: [{
      find: "          /\\ returning' = << v >>\n",
      replace: "          /\\ returning' = << >>   \\* BUG: the value is dropped, not pushed again\n",
    }],
  },
  {
    name: "DeathRecoveryLeavesClaim",
    base: "InjectorDeath.tla",
    bug: "the recovery of a push forgets its note: the claimed position is never published",
    patches: [{
      find: "       IF seq[Slot(p)] = p\n",
      replace: "       IF FALSE   \\* BUG: the claimed position is left unpublished\n",
    }],
  },
  // ---- Order.tla (lib/worker/search.ts: the start order of tasks from outside) ----
  {
    // The code before issue 30: with a task in hand, a fair share of the injector moved into our deque.
    name: "BatchRunsReversed",
    base: "Order.tla",
    bug: "a take from the injector moves a batch into the taker's deque, which its owner pops newest first " +
      "(the code before issue 30)",
    patches: [{
      find: "    /\\ inj' = Tail(inj)\n" +
        "    /\\ Take(w, Head(inj))\n" +
        "    /\\ UNCHANGED <<submitted, dq, started>>\n",
      replace: "    \\* BUG: a fair share of what is left moves along into our deque, oldest pushed first (newest at the bottom)\n" +
        "    /\\ LET k == (Len(inj) - 1) \\div Cardinality(Workers) IN\n" +
        "       /\\ inj' = SubSeq(inj, k + 2, Len(inj))\n" +
        "       /\\ dq' = [dq EXCEPT ![w] = @ \\o SubSeq(inj, 2, k + 1)]\n" +
        "    /\\ Take(w, Head(inj))\n" +
        "    /\\ UNCHANGED <<submitted, started>>\n",
    }],
  },
  {
    // Even a batch the owner runs oldest first is out of order: while it waits in one deque, the other
    // workers take newer tasks from the injector. Why no batch is moved at all.
    name: "BatchKeptInOrder",
    base: "Order.tla",
    bug: "a take from the injector moves a batch into the taker's deque in reverse, so that its owner runs it " +
      "oldest first; other workers meanwhile take newer tasks from the injector",
    patches: [{
      find: "    /\\ inj' = Tail(inj)\n" +
        "    /\\ Take(w, Head(inj))\n" +
        "    /\\ UNCHANGED <<submitted, dq, started>>\n",
      replace: "    \\* BUG: a fair share of what is left moves along into our deque, newest pushed first (oldest at the bottom)\n" +
        "    /\\ LET k == (Len(inj) - 1) \\div Cardinality(Workers)\n" +
        "           b == SubSeq(inj, 2, k + 1) IN\n" +
        "       /\\ inj' = SubSeq(inj, k + 2, Len(inj))\n" +
        "       /\\ dq' = [dq EXCEPT ![w] = @ \\o [i \\in 1..Len(b) |-> b[Len(b) + 1 - i]]]\n" +
        "    /\\ Take(w, Head(inj))\n" +
        "    /\\ UNCHANGED <<submitted, started>>\n",
    }],
  },
  {
    name: "InjectorPopsNewest",
    base: "Order.tla",
    bug: "the injector pops its tail (the newest task), a stack, not a queue",
    patches: [{
      find: "    /\\ inj' = Tail(inj)\n" +
        "    /\\ Take(w, Head(inj))\n",
      replace: "    /\\ inj' = SubSeq(inj, 1, Len(inj) - 1)   \\* BUG: the newest task, not the oldest\n" +
        "    /\\ Take(w, inj[Len(inj)])\n",
    }],
  },
  {
    name: "InjectorKeepsLast",
    base: "Order.tla",
    bug: "a worker takes from the injector only while more than one task is queued: the last one stays",
    patches: [{
      find: "    /\\ hand[w] = NONE /\\ dq[w] = << >> /\\ inj /= << >>\n",
      replace: "    /\\ hand[w] = NONE /\\ dq[w] = << >> /\\ Len(inj) > 1   \\* BUG: was inj /= << >>\n",
    }],
  },
  // ---- Producers.tla (producers in other threads: slots, routing, close, terminate, death) ----
  {
    name: "CompletionToOwnerSlot",
    base: "Producers.tla",
    bug: "a worker pushes every completion into slot 0's queue (the owner's), whatever the record's origin",
    patches: [{
      find: "    /\\ LET s == origin[wrec[w]] IN\n         /\\ cq' = [cq EXCEPT ![s] = @ \\cup {wrec[w]}]\n",
      replace: "    /\\ LET s == 0 IN   \\* BUG: was origin[wrec[w]]\n         /\\ cq' = [cq EXCEPT ![s] = @ \\cup {wrec[w]}]\n",
    }],
  },
  {
    name: "CompletionToOtherSlot",
    base: "Producers.tla",
    bug: "a worker pushes a completion into another producer's slot (the origin decoded off by one, wrapping)",
    patches: [{
      find: "    /\\ LET s == origin[wrec[w]] IN\n         /\\ cq' = [cq EXCEPT ![s] = @ \\cup {wrec[w]}]\n",
      replace: "    /\\ LET s == (origin[wrec[w]] % Slots) + 1 IN   \\* BUG: was origin[wrec[w]]\n" +
        "         /\\ cq' = [cq EXCEPT ![s] = @ \\cup {wrec[w]}]\n",
    }],
  },
  {
    name: "DeadCleanupSkipsCancel",
    base: "Producers.tla",
    bug: "the cleanup after a producer's death does not cancel its QUEUED records: they run later and their " +
      "completions reach the slot after it was freed",
    patches: [{
      find: "    /\\ IF \\E r \\in R : origin[r] = s /\\ rstate[r] = \"QUEUED\"\n",
      replace: "    /\\ IF FALSE   \\* BUG: its QUEUED records are not cancelled\n",
    }],
  },
  {
    name: "DeadCleanupSkipsDrain",
    base: "Producers.tla",
    bug: "the cleanup after a producer's death frees the slot without reading its completion queue: the records " +
      "there (and those still running) never come back",
    patches: [{
      find: "    /\\ IF cq[s] # {}\n         THEN \\E r \\in cq[s] :\n",
      replace: "    /\\ IF FALSE   \\* BUG: the dead slot's completions are not read\n         THEN \\E r \\in cq[s] :\n",
    }, {
      find: "         ELSE /\\ ~\\E r \\in R : origin[r] = s /\\ rstate[r] \\in {\"RUNNING\", \"DONE\"}\n",
      replace: "         ELSE /\\ TRUE   \\* BUG: nor waited for\n",
    }],
  },
  {
    name: "DeadCleanupNeverDrains",
    base: "Producers.tla",
    bug: "the cleanup after a producer's death waits for its records to leave RUNNING and DONE without reading " +
      "its completion queue: the DONE ones there never do, its records and slot never come back",
    patches: [{
      find: "    /\\ IF cq[s] # {}\n         THEN \\E r \\in cq[s] :\n",
      replace: "    /\\ IF FALSE   \\* BUG: the dead slot's completions are not read\n         THEN \\E r \\in cq[s] :\n",
    }],
  },
  {
    name: "MarkClearedAtStore",
    base: "Producers.tla",
    bug: "a producer's mark on a taken record ends at its QUEUED store, not at the injector push: a producer " +
      "that dies between the two leaves a record that no worker will ever see and the owner does not reclaim",
    patches: [{
      find: "         /\\ rstate' = [rstate EXCEPT ![r] = \"QUEUED\"]\n",
      replace: "         /\\ rstate' = [rstate EXCEPT ![r] = \"QUEUED\"]\n" +
        "         /\\ cachedBy' = [cachedBy EXCEPT ![r] = 0]   \\* BUG: the mark ends here, before the push\n",
    }, {
      find: "    /\\ UNCHANGED <<pool, sstate, pending, waitw, cq, inj, cachedBy, hslot, next, cur, forgotten, settles, admitted,\n",
      replace: "    /\\ UNCHANGED <<pool, sstate, pending, waitw, cq, inj, hslot, next, cur, forgotten, settles, admitted,\n",
    }],
  },
  {
    name: "CloseBeforeRecordsBack",
    base: "Producers.tla",
    bug: "a producer's close sends `closed` once every task is settled, without waiting for the completions of " +
      "its forgotten tasks: the slot is freed while one is still coming",
    patches: [{
      find: "    /\\ placed[h] = {} /\\ forgotten[h] = {}\n",
      replace: "    /\\ placed[h] = {}   \\* BUG: forgotten records may still be out\n",
    }],
  },
  {
    name: "ClosedFreesReusedSlot",
    base: "Producers.tla",
    bug: "the owner frees the slot named by a `closed` message without checking that the sender still holds " +
      "it: an old producer's late message frees a slot reused since",
    patches: [{
      find: "         IF h \\in ends /\\ holder[s] = h\n",
      replace: "         IF TRUE   \\* BUG: was h \\in ends /\\ holder[s] = h\n",
    }],
  },
  {
    name: "ClaimsSlotNotFree",
    base: "Producers.tla",
    bug: "a new handle claims a slot that is not FREE (one still OPEN)",
    patches: [{
      find: "         /\\ sstate[s] = \"FREE\"\n         /\\ sstate' = [sstate EXCEPT ![s] = \"OPEN\"]\n",
      replace: "         /\\ sstate[s] # \"DEAD\"   \\* BUG: was = \"FREE\"\n" +
        "         /\\ sstate' = [sstate EXCEPT ![s] = \"OPEN\"]\n",
    }],
  },
  {
    name: "TerminateWithoutWake",
    base: "Producers.tla",
    bug: "terminate stores TERMINATED but wakes no producer: one asleep waiting for completions (which no " +
      "stopped worker will push) never rejects its tasks",
    patches: [{
      find: "         THEN /\\ waitw' = [waitw EXCEPT ![cursor] = 0]\n",
      replace: "         THEN /\\ UNCHANGED waitw   \\* BUG: the waiting word is left, nobody notified\n",
    }],
  },
  {
    name: "AdmitReadsStateFirst",
    base: "Producers.tla",
    bug: "admission reads the pool's state before the task counts pending (the order of lib/producer/admission.ts " +
      "and ledger.ts when this spec was written): a close that reads the count 0 in between stops the workers " +
      "with the task on its way into the injector",
    patches: [{
      find: "Live == {\"Idle\", \"ReadState\",",
      replace: "Live == {\"Idle\", \"ReadState\", \"Counted\",",
    }, {
      // The count comes second, after the read ("Counted" is the step between the two) ...
      find: "    /\\ h \\in H /\\ hpc[h] = \"Idle\" /\\ next[h] <= Tasks\n    /\\ pending' =",
      replace: "    /\\ h \\in H /\\ hpc[h] = \"Counted\"   \\* BUG: the count, after the read\n    /\\ pending' =",
    }, {
      find: "    /\\ hpc' = [hpc EXCEPT ![h] = \"ReadState\"]\n",
      replace: "    /\\ hpc' = [hpc EXCEPT ![h] = \"Take\"]\n",
    }, {
      // ... and the read first, with nothing counted to take back on a refusal.
      find: "    /\\ h \\in H /\\ hpc[h] = \"ReadState\"\n",
      replace: "    /\\ h \\in H /\\ hpc[h] = \"Idle\" /\\ next[h] <= Tasks   \\* BUG: the read, first\n",
    }, {
      find: "         THEN /\\ hpc' = [hpc EXCEPT ![h] = \"Take\"]\n",
      replace: "         THEN /\\ hpc' = [hpc EXCEPT ![h] = \"Counted\"]\n",
    }, {
      find: "         ELSE /\\ pending' = [pending EXCEPT ![hslot[h]] = @ - 1]\n",
      replace: "         ELSE /\\ UNCHANGED pending\n",
    }],
  },
  // ---- RecordWait.tla (the backlog's wait for a record another producer frees) ----
  {
    name: "BacklogUncountedWhileWaiting",
    base: "RecordWait.tla",
    bug: "the code before the fix: arm() while already waiting returns at once, and admission does not arm again " +
      "after the task went to the backlog: a producer whose first arm found no backlog waits uncounted in " +
      "recordWaiters, and a producer that frees the record reads 0 and wakes nobody",
    patches: [{
      find: '    ELSE IF isWaiting THEN "RecountCount"\n',
      replace: "    ELSE IF isWaiting THEN r   \\* BUG: already waiting, arm returns (no recount)\n",
    }, {
      find: "                     /\\ pc' = [pc EXCEPT ![p] = ArmPc(\"Idle\", waiting[p], Pending(p))]\n" +
        "                     /\\ ret' = [ret EXCEPT ![p] = \"Idle\"]\n",
      replace: "                     /\\ pc' = [pc EXCEPT ![p] = \"Idle\"]   \\* BUG: no arm after the backlog push\n" +
        "                     /\\ UNCHANGED ret\n",
    }],
  },
  {
    name: "RecountSkipsFreeCheck",
    base: "RecordWait.tla",
    bug: "the recount counts the producer but does not look at the free list after it: a record freed between " +
      "the failed take and the count was read with a count of 0 by the producer that freed it, and nobody wakes " +
      "this one",
    patches: [{
      find: "    /\\ IF counted[p] /\\ free > 0 THEN waitw' = [waitw EXCEPT ![p] = 0] ELSE UNCHANGED waitw\n",
      replace: "    /\\ UNCHANGED waitw   \\* BUG: no look at the free list after the count\n",
    }],
  },
  {
    name: "WokenWakesNobody",
    base: "RecordWait.tla",
    bug: "issue 50's one wake a batch without its pass-on: only a producer that read completions of its own " +
      "wakes a record waiter, so a woken waiter that took one record of two (or none) wakes nobody, and another " +
      "counted waiter sleeps while a record is free (tests/mutants/mutants.ts woken_waiter_wakes_nobody)",
    patches: [{
      find: "    /\\ pc' = [pc EXCEPT ![p] = IF free > 0 THEN \"ReadWaiters\" ELSE \"Uncount\"]\n",
      replace: "    /\\ pc' = [pc EXCEPT ![p] = IF free > 0 /\\ popped[p] THEN \"ReadWaiters\" ELSE \"Uncount\"]   \\* BUG\n",
    }],
  },
  {
    name: "WakeSkipsLastSlot",
    base: "RecordWait.tla",
    bug: "the wake's ring one slot short (its modulo Producers - 1): the last slot is never looked at, and its " +
      "producer, waiting for a record with nothing in flight, is skipped for ever (tests/mutants/mutants.ts " +
      "record_wake_skips_last_slot)",
    patches: [{
      find: "NextSlot(c) == (c % Producers) + 1\n",
      replace: "NextSlot(c) == (c % (Producers - 1)) + 1   \\* BUG: one short\n",
    }, {
      find: "    /\\ cursor' = [cursor EXCEPT ![p] = turn + 1]\n",
      replace: "    /\\ cursor' = [cursor EXCEPT ![p] = (turn % (Producers - 1)) + 1]   \\* BUG: one short\n",
    }],
  },
  {
    name: "StopsAtAwakeWaiter",
    base: "RecordWait.tla",
    bug: "the wake gives up at the first counted slot whose producer is awake (its word 0: the freer itself, " +
      "still counted until after its wake, or one between its count and its look) instead of passing it over: " +
      "a counted producer asleep further round the ring is never woken (tests/mutants/mutants.ts " +
      "record_wake_stops_at_awake)",
    patches: [{
      find: "         ELSE /\\ LookNext(p) /\\ UNCHANGED waitw\n",
      replace: "         ELSE /\\ pc' = [pc EXCEPT ![p] = \"Uncount\"] /\\ UNCHANGED <<waitw, cursor, looked>>   \\* BUG\n",
    }],
  },
  // ---- RoomWait.tla (the wait for room in the pool's queue, for the pool as a whole) ----
  {
    name: "RoomWakesNobody",
    base: "RoomWait.tla",
    bug: "the code's mutant room_wakes_nobody: a producer whose task settles wakes no other producer, whatever " +
      "the count says: one waiting for room with nothing of its own pending waits on after the pool has room",
    patches: [{
      find: "    /\\ IF roomWaiters > (IF counted[p] THEN 1 ELSE 0)\n",
      replace: "    /\\ IF FALSE   \\* BUG: nobody woken\n",
    }],
  },
  {
    name: "CountAfterRecheck",
    base: "RoomWait.tla",
    bug: "waitForRoom arms and checks for room before it counts itself: a settle between the check and the count " +
      "reads a count of 0 and wakes nobody, and the producer, counted too late, waits for a wake that came before",
    patches: [{
      // No room: armed at once, uncounted ...
      find: "                  /\\ IF counted[p] THEN Arm(p, \"SumOwner\", waiting[p], pw[p], TRUE)\n" +
        "                     ELSE /\\ pc' = [pc EXCEPT ![p] = \"Count\"] /\\ UNCHANGED ret\n",
      replace: "                  /\\ Arm(p, \"SumOwner\", waiting[p], pw[p], TRUE)   \\* BUG: armed and checked first\n",
    }, {
      // ... counted after the check (whatever its answer) ...
      find: "           /\\ CASE hret[p] = \"Recheck\" -> pc' = [pc EXCEPT ![p] = \"Idle\"] /\\ UNCHANGED ret\n",
      replace: "           /\\ CASE hret[p] = \"Recheck\" -> pc' = [pc EXCEPT ![p] = IF counted[p] THEN \"Idle\" ELSE \"Count\"]\n" +
        "                                      /\\ UNCHANGED ret   \\* BUG: the count after the check\n",
    }, {
      // ... and nothing after the count.
      find: "          /\\ Arm(p, \"SumOwner\", waiting[p], pw[p], TRUE)\n          /\\ UNCHANGED timer\n",
      replace: "          /\\ pc' = [pc EXCEPT ![p] = \"Idle\"] /\\ UNCHANGED ret   \\* BUG: the count, last\n" +
        "          /\\ UNCHANGED timer\n",
    }],
  },
  {
    name: "ArmWithoutRoomHook",
    base: "RoomWait.tla",
    bug: "the completion reader's arm returns at once when nothing of its own is pending (no waitsForRoom hook): " +
      "a producer waiting for room with nothing pending is counted and woken, but its reader does not wait on its " +
      "word, so the wake finds the word 0 and nothing runs",
    patches: [{
      find: "    /\\ ~(pend = 0 /\\ ~forRoom)\n",
      replace: "    /\\ pend > 0   \\* BUG: nothing pending, nothing to wait for (a wait for room ignored)\n",
    }],
  },
  {
    name: "CheckBeforeArm",
    base: "RoomWait.tla",
    bug: "the code's order when RoomWait.tla was written: a producer woken while it waits for room checks room in " +
      "the drain's freed hook, before onWake arms its reader again; a settle between the check and the arm's " +
      "store of 1 wakes a word that is 0, and the producer then waits with room in the pool and nobody to wake it",
    patches: [{
      find: "                   THEN /\\ Arm(p, \"SumOwner\", waiting[p], pw[p], TRUE) /\\ hret' = [hret EXCEPT ![p] = \"Check\"]\n",
      replace: "                   THEN /\\ pc' = [pc EXCEPT ![p] = \"SumOwner\"] /\\ hret' = [hret EXCEPT ![p] = \"Check\"]\n" +
        "                        /\\ UNCHANGED ret   \\* BUG: the check first, in the drain\n",
    }, {
      find: "                [] hret[p] = \"Check\" -> pc' = [pc EXCEPT ![p] = \"Idle\"] /\\ UNCHANGED ret\n",
      replace: "                [] hret[p] = \"Check\" -> Arm(p, \"Idle\", waiting[p], pw[p], ~has)   \\* BUG: armed after\n",
    }],
  },
  // ---- Graph.tla (issue 48's dependency protocol, specified before its code) ----
  {
    name: "CountDecrementedTwice",
    base: "Graph.tla",
    bug: "a walk decrements a dependant's count and, not having reached zero, decrements it again (the walk does " +
      "not move on): a join's count reaches zero while its other input still runs, and the node starts early",
    patches: [{
      find: '    /\\ IF pending[At(t)] = 1 THEN /\\ Go(t, "Zero") /\\ UNCHANGED di ELSE Next1(t)\n',
      replace: '    /\\ IF pending[At(t)] = 1 THEN /\\ Go(t, "Zero") /\\ UNCHANGED di\n' +
        '       ELSE /\\ Go(t, "Walk") /\\ UNCHANGED di   \\* BUG: the same dependant again\n',
    }],
  },
  {
    name: "StartAtOne",
    base: "Graph.tla",
    bug: "the decrement that takes the count to one (it read 2), not to zero, owns the dependant and pushes it: a " +
      "join starts with one input still running (and a node of one input never starts)",
    patches: [{
      find: '    /\\ IF pending[At(t)] = 1 THEN /\\ Go(t, "Zero") /\\ UNCHANGED di ELSE Next1(t)\n',
      replace: '    /\\ IF pending[At(t)] = 2 THEN /\\ Go(t, "Zero") /\\ UNCHANGED di ELSE Next1(t)   \\* BUG: was = 1\n',
    }],
  },
  {
    name: "StartOnEveryDecrement",
    base: "Graph.tla",
    bug: "every decrement, not only the one that reaches zero, goes on to the compare-exchange and the push: a join " +
      "starts at its first input's decrement",
    patches: [{
      find: '    /\\ IF pending[At(t)] = 1 THEN /\\ Go(t, "Zero") /\\ UNCHANGED di ELSE Next1(t)\n',
      replace: '    /\\ Go(t, "Zero") /\\ UNCHANGED di   \\* BUG: whatever the count read\n',
    }],
  },
  {
    name: "CancelledInputLeavesWaiting",
    base: "Graph.tla",
    bug: "the walk of a cancelled node marks its dependants but does not decrement their counts: a dependant whose " +
      "input was cancelled waits for ever, and its record never comes back",
    patches: [{
      find: '    /\\ Go(t, "Dec")\n    /\\ UNCHANGED <<state, pending, args, rworker, cur, di, stack>>',
      replace: '    /\\ IF Mark(cur[t]) = CANCEL THEN Next1(t) ELSE /\\ Go(t, "Dec") /\\ UNCHANGED di   \\* BUG: no decrement\n' +
        "    /\\ UNCHANGED <<state, pending, args, rworker, cur, stack>>",
    }],
  },
  {
    name: "RejectedInputLeavesWaiting",
    base: "Graph.tla",
    bug: "the walk of a rejected node marks its dependants but does not decrement their counts: a dependant " +
      "downstream of a failure waits for ever instead of rejecting, and its record never comes back",
    patches: [{
      find: '    /\\ Go(t, "Dec")\n    /\\ UNCHANGED <<state, pending, args, rworker, cur, di, stack>>',
      replace: '    /\\ IF Mark(cur[t]) > 0 THEN Next1(t) ELSE /\\ Go(t, "Dec") /\\ UNCHANGED di   \\* BUG: no decrement\n' +
        "    /\\ UNCHANGED <<state, pending, args, rworker, cur, stack>>",
    }],
  },
  {
    name: "ReadBeforePublish",
    base: "Graph.tla",
    bug: "a resolved node's walk decrements a dependant's count before it publishes its result into the " +
      "dependant's slot: the other input's decrement reaches zero in between, and the dependant starts and reads " +
      "a slot not yet written",
    patches: [{
      // A resolved node's walk goes to the decrement first (its mark is 0: the compare-exchange writes nothing) ...
      find: "    /\\ pc[t] = \"Walk\" /\\ di[t] <= Len(Deps(cur[t])) /\\ Mark(cur[t]) /= 0\n",
      replace: "    /\\ pc[t] = \"Walk\" /\\ di[t] <= Len(Deps(cur[t]))   \\* BUG: a resolved node too: decrement first\n",
    }, {
      // ... whose step, for a resolved node, publishes next ...
      find: '    /\\ IF pending[At(t)] = 1 THEN /\\ Go(t, "Zero") /\\ UNCHANGED di ELSE Next1(t)\n',
      replace: '    /\\ IF Mark(cur[t]) = 0 THEN /\\ Go(t, IF pending[At(t)] = 1 THEN "PubZero" ELSE "Pub") /\\ UNCHANGED di\n' +
        '       ELSE IF pending[At(t)] = 1 THEN /\\ Go(t, "Zero") /\\ UNCHANGED di ELSE Next1(t)\n',
    }, {
      // ... and the publish, after the decrement, goes on as the decrement did.
      find: "    /\\ pc[t] = \"Walk\" /\\ di[t] <= Len(Deps(cur[t])) /\\ Mark(cur[t]) = 0\n",
      replace: '    /\\ pc[t] \\in {"Pub", "PubZero"}   \\* BUG: the publish after the decrement\n',
    }, {
      find: '    /\\ Go(t, "Dec")\n    /\\ UNCHANGED <<state, pending, cause, rworker, cur, di, stack>>',
      replace: '    /\\ IF pc[t] = "PubZero" THEN /\\ Go(t, "Zero") /\\ UNCHANGED di ELSE Next1(t)\n' +
        "    /\\ UNCHANGED <<state, pending, cause, rworker, cur, stack>>",
    }],
  },
  {
    name: "DeathLeavesDependantsWaiting",
    base: "Graph.tla",
    bug: "the owner's recovery rejects the dead worker's running node but does not walk it: its dependants' counts " +
      "never reach zero, they never settle, and their records never come back",
    patches: [{
      find: "                     /\\ Walk(t, n)\n",
      replace: "                     /\\ UNCHANGED <<cur, di, pc>>   \\* BUG: no walk\n",
    }],
  },
  {
    name: "ZeroStoresQueued",
    base: "Graph.tla",
    bug: "the decrement that reaches zero stores QUEUED instead of its compare-exchange from WAITING: it overwrites " +
      "the owner's CANCELLED, and the cancelled node runs (the race of the last decrement with the cancellation " +
      "has two winners)",
    patches: [{
      find: '       IF state[d] = "WAITING" /\\ cause[d] = 0\n',
      replace: '       IF state[d] \\in {"WAITING", "CANCELLED"} /\\ cause[d] = 0   \\* BUG: a store, over CANCELLED too\n',
    }],
  },
  {
    name: "ZeroIgnoresCause",
    base: "Graph.tla",
    bug: "the decrement that reaches zero pushes the dependant without reading its cause word: a node downstream " +
      "of a failed input runs",
    patches: [{
      find: '       IF state[d] = "WAITING" /\\ cause[d] = 0\n',
      replace: '       IF state[d] = "WAITING" /\\ cause[d] /= CANCEL   \\* BUG: a failed input not looked at\n',
    }],
  },
  {
    name: "CancelStoresCancelled",
    base: "Graph.tla",
    bug: "the owner's cancellation stores CANCELLED over any node not settled, a RUNNING one too, instead of its " +
      "compare-exchange from WAITING or QUEUED: a node that started is settled twice, cancelled and then by its " +
      "worker",
    patches: [{
      find: '    /\\ IF state[cidx] \\in {"WAITING", "QUEUED"}\n',
      replace: '    /\\ IF state[cidx] \\in {"WAITING", "QUEUED", "RUNNING"}   \\* BUG: a store, over RUNNING too\n',
    }],
  },
  // ---- Elastic.tla (issue 49's retirement and growth, specified before its code) ----
  {
    name: "RetireNonEmptyDeque",
    base: "Elastic.tla",
    bug: "a worker retires at the top of its loop when its idle clock says so (a compare-exchange of its slot " +
      "word from AWAKE, not from SLEEPING), without its search: the task it spawned onto its own deque is left " +
      "in a slot that thieves skip",
    patches: [{
      find: "Next ==\n    \\/ \\E t \\in Threads : Step(t)\n    \\/ \\E w \\in Workers : SleepTimeout(w) \\/ Die(w)\n",
      replace: "\\* BUG: retirement from the loop's top, its own deque not looked at.\n" +
        "LoopRetire(w) ==\n" +
        '    /\\ pc[w] = "Top" /\\ retires < MaxRetires /\\ size > Min /\\ slot[w] = [st |-> AWAKE, mail |-> {}]\n' +
        "    /\\ retires' = retires + 1 /\\ size' = size - 1 /\\ slot' = WithSt(w, RETIRING)\n" +
        '    /\\ GoFresh(w, "Teardown")\n' +
        "    /\\ UNCHANGED <<jec, sleepers, inj, dq, due, died, posted, runs, deaths, starts>>\n\n" +
        "Next ==\n    \\/ \\E t \\in Threads : Step(t)\n" +
        "    \\/ \\E w \\in Workers : SleepTimeout(w) \\/ Die(w) \\/ LoopRetire(w)\n",
    }],
  },
  {
    name: "RetireLeavesCount",
    base: "Elastic.tla",
    bug: "a retiring worker never takes itself out of the sleeping count: posters then scan for a sleeper that " +
      "is gone, and the owner, seeing one counted, does not grow",
    patches: [{
      find: "    /\\ pc[w] = \"RetireUncount\"\n    /\\ sleepers' = sleepers - 1\n",
      replace: "    /\\ pc[w] = \"RetireUncount\"\n    /\\ sleepers' = sleepers   \\* BUG: the count left behind\n",
    }],
  },
  {
    name: "GrowthStartsNone",
    base: "Elastic.tla",
    bug: "the owner's growth reserves the size word and marks the slot STARTING but never starts the thread: a " +
      "pool at its minimum of 0 never runs anything",
    patches: [{
      find: "              /\\ pc' = [pc EXCEPT ![t] = \"MainIdle\", ![w] = \"Boot\"]\n",
      replace: "              /\\ pc' = [pc EXCEPT ![t] = \"MainIdle\"]   \\* BUG: no thread started\n",
    }],
  },
  {
    name: "DirectToRetiring",
    base: "Elastic.tla",
    bug: "a directed push takes a RETIRING slot for a live one (it skips only ABSENT and STARTING slots) and " +
      "adds its task to that slot's mail: the task is lost with the leaving worker",
    patches: [{
      find: "         IF slot[w].st \\in ACTIVE\n" +
        "           THEN /\\ slot' = [slot EXCEPT ![w] = [st |-> AWAKE, mail |-> @.mail \\cup {posted + 1}]]\n",
      replace: "         IF slot[w].st \\in ACTIVE \\cup {RETIRING}   \\* BUG: a leaving worker taken for a live one\n" +
        "           THEN /\\ slot' = [slot EXCEPT ![w] = [st |-> IF @.st = RETIRING THEN RETIRING ELSE AWAKE,\n" +
        "                                                 mail |-> @.mail \\cup {posted + 1}]]\n",
    }],
  },
  {
    name: "RetireBelowMin",
    base: "Elastic.tla",
    bug: "the retirement's reservation checks the size word against 0, not the minimum: two sleepers that time " +
      "out together both leave a pool whose minimum is one",
    patches: [{
      find: "    /\\ IF size > Min\n         THEN /\\ size' = size - 1 /\\ Go(w, \"RetireUncount\")\n",
      replace: "    /\\ IF size > 0   \\* BUG: was size > Min\n         THEN /\\ size' = size - 1 /\\ Go(w, \"RetireUncount\")\n",
    }],
  },
  {
    name: "RetireStoresRetiring",
    base: "Elastic.tla",
    bug: "the retirement stores RETIRING instead of its compare-exchange from (no mail, SLEEPING): a directed " +
      "push that landed after the timeout is overwritten, and its task leaves with the worker",
    patches: [{
      find: "    /\\ IF slot[w] = [st |-> SLEEPING, mail |-> {}]\n         THEN /\\ slot' = WithSt(w, RETIRING)",
      replace: "    /\\ IF TRUE   \\* BUG: a store, whatever a wake or a push did\n" +
        "         THEN /\\ slot' = WithSt(w, RETIRING)",
    }],
  },
  {
    name: "NoGrowthAfterRetire",
    base: "Elastic.tla",
    bug: "a worker's retirement does not tell the owner: a task that came while every slot was taken (the " +
      "owner's check then found no ABSENT slot) waits for ever once the leaving worker is gone",
    patches: [{
      find: "    /\\ slot' = WithSt(w, ABSENT)\n    /\\ due' = TRUE\n    /\\ GoFresh(w, \"None\")\n",
      replace: "    /\\ slot' = WithSt(w, ABSENT)\n    /\\ UNCHANGED due   \\* BUG: the owner is not told\n" +
        "    /\\ GoFresh(w, \"None\")\n",
    }],
  },
  {
    name: "NoGrowthWhenNobodyWoken",
    base: "Elastic.tla",
    bug: "the owner does not look at growth after a newWork that woke nobody: a task submitted while the last " +
      "sleeper retires, or to a pool of no worker, waits for ever",
    patches: [{
      find: "    /\\ due' = (due \\/ t = Main)\n",
      replace: "    /\\ UNCHANGED due   \\* BUG: no growth check after a newWork that woke nobody\n",
    }],
  },
];

/**
 * Applies a mutant's patches to the text of its base module.
 *
 * @param mutant The mutant.
 * @param baseText The text of `spec/<mutant.base>`.
 * @returns The mutated module text (same module name as the base).
 * @throws {PatchError} If a patch's `find` does not occur exactly `count` times.
 */
export function applyMutant(mutant: SpecMutant, baseText: string): string {
  let text = baseText;
  mutant.patches.forEach((patch, index) => {
    const expected = patch.count ?? 1;
    const found = text.split(patch.find).length - 1;
    if (found !== expected) {
      throw new PatchError(
        `mutant ${mutant.name}: patch ${index + 1} of ${mutant.patches.length} matches spec/${mutant.base} ` +
          `${found} time(s), not ${expected}: the real spec changed under it; update spec/mutants.ts`,
      );
    }
    text = text.split(patch.find).join(patch.replace);
  });
  return text;
}

/**
 * The mutant of this name.
 *
 * @param name A mutant's name.
 * @returns The mutant.
 * @throws {RangeError} If there is none.
 */
export function mutantNamed(name: string): SpecMutant {
  const found = SPEC_MUTANTS.find((m) => m.name === name);
  if (found === undefined) throw new RangeError(`Cannot find mutant as 'name' names none: received ${name}`);
  return found;
}
