/**
 * The preemption-bounded systematic search of the kernel's models (`harness.ts`'s `explore`): every schedule
 * of a run with at most `maxPreemptions` preemptions, by stateless depth-first search (the run is repeated
 * from the start for each schedule, as CHESS does). A model whose threads never block (the deque, the
 * queue) simply has no timeouts to choose.
 *
 * A choice is a thread to release (0..threads-1) or a thread whose timed wait to time out
 * (threads..2·threads-1): the encoding of each harness's replay chooser, so a failing schedule's choices
 * replay there unchanged. A preemption is releasing another thread while the one released last could go on,
 * or timing a wait out (the environment's choice); a switch forced because the last thread blocked, finished
 * (or yielded: it is not offered then) is free. At each step the thread released
 * last comes first, so the first schedule is the one without preemptions.
 *
 * Also the schedules of the random mode and of replays in that encoding ({@link waitScheduleArbitrary},
 * {@link waitScheduleChooser}, {@link waitReplayChooser}). The harness runs the schedule (calling the chooser
 * once per free choice, in the controller's thread) and judges the run.
 *
 * @module
 */

import fc from "fast-check";

/** Picks the next step among `parked` threads, or (`timeout`) times out one of `timed`. */
export type WaitChooser = (
  step: number,
  parked: readonly number[],
  timed: readonly number[],
  current: number,
) => { thread: number; timeout: boolean };

/** What the search needs of one run: its steps (for the total), and whether it counts as the failure. */
export interface ExploredRun<V> {
  steps: number;
  violations: V[];
  /** This run is the failure the search looks for. */
  broken: boolean;
}

/** The outcome of exploring a scenario systematically. */
export interface WaitExploration<V> {
  schedules: number;
  steps: number;
  /** The first broken schedule: its choices (replay them with the harness's systematic chooser). */
  failure?: { choices: number[]; violations: V[]; index: number; preemptions: number };
}

interface Frame {
  options: number[];
  costs: number[];
  next: number;
}

/**
 * Every schedule with at most `maxPreemptions` preemptions of the run `runOnce` makes, `threads` threads
 * wide. With `stopAtFirst` false the search goes on past the first broken run (and still reports that one).
 *
 * @param runOnce Runs the scenario once under the given chooser and judges it.
 */
export function exploreWaits<V>(
  threads: number,
  maxPreemptions: number,
  runOnce: (choose: WaitChooser) => ExploredRun<V>,
  stopAtFirst = true,
): WaitExploration<V> {
  const stack: Frame[] = [];
  let schedules = 0;
  let steps = 0;
  let failure: WaitExploration<V>["failure"];
  for (;;) {
    const taken: number[] = [];
    let preemptions = 0;
    const choose: WaitChooser = (step, parked, timed, current) => {
      let pick: number;
      let cost: number;
      if (step < stack.length) {
        const f = stack[step];
        pick = f.options[f.next];
        cost = f.costs[f.next];
      } else {
        const options: number[] = [];
        const costs: number[] = [];
        const canContinue = parked.includes(current);
        if (canContinue) {
          options.push(current);
          costs.push(0);
        }
        for (const t of parked) {
          if (t === current) continue;
          if (!canContinue) {
            options.push(t);
            costs.push(0);
          } else if (preemptions < maxPreemptions) {
            options.push(t);
            costs.push(1);
          }
        }
        if (preemptions < maxPreemptions) {
          for (const t of timed) {
            options.push(threads + t);
            costs.push(1);
          }
        }
        stack.push({ options, costs, next: 0 });
        pick = options[0];
        cost = costs[0];
      }
      preemptions += cost;
      taken.push(pick);
      return { thread: pick % threads, timeout: pick >= threads };
    };
    const run = runOnce(choose);
    schedules++;
    steps += run.steps;
    // The run made one choice per frame it used: frames past them (none, for a deterministic run) are stale.
    stack.length = Math.min(stack.length, taken.length);
    if (run.broken && failure === undefined) {
      failure = { choices: taken, violations: run.violations, index: schedules, preemptions };
      if (stopAtFirst) break;
    }
    while (stack.length > 0 && ++stack[stack.length - 1].next >= stack[stack.length - 1].options.length) stack.pop();
    if (stack.length === 0) break;
  }
  return { schedules, steps, failure };
}

/** Where a schedule has no choice left: the harness's default among `parked` (never a timeout). */
export type Continuation = (parked: readonly number[], current: number) => number;

/**
 * The chooser of a generated schedule: entry `e` at step i means thread `e % threads`; with `e >= threads`,
 * time out that thread's timed wait if it is in one. Otherwise that thread if it can run, else the next one
 * after it that can. Past the end of the schedule: `rest`.
 */
export function waitScheduleChooser(threads: number, schedule: readonly number[], rest: Continuation): WaitChooser {
  return (step, parked, timed, current) => {
    if (step < schedule.length) {
      const e = schedule[step];
      const want = e % threads;
      if (e >= threads && timed.includes(want)) return { thread: want, timeout: true };
      for (let d = 0; d < threads; d++) {
        if (parked.includes((want + d) % threads)) return { thread: (want + d) % threads, timeout: false };
      }
    }
    return { thread: rest(parked, current), timeout: false };
  };
}

/**
 * A systematic schedule replayed exactly: per step, a thread to release (0..threads-1) or to time out
 * (threads..2·threads-1); a choice that is impossible at its step throws. Past the end: `rest`.
 */
export function waitReplayChooser(threads: number, choices: readonly number[], rest: Continuation): WaitChooser {
  return (step, parked, timed, current) => {
    if (step >= choices.length) return { thread: rest(parked, current), timeout: false };
    const c = choices[step];
    const timeout = c >= threads;
    const t = c % threads;
    if (timeout ? !timed.includes(t) : !parked.includes(t)) {
      throw new Error(`replay: choice ${c} impossible at step ${step}`);
    }
    return { thread: t, timeout };
  };
}

/**
 * Generated schedules for {@link waitScheduleChooser}: per-step choices (up to `maxLength`), or up to
 * `maxSegments` segments of one thread, each 1..`maxSegment` steps long (its first step may be a timeout,
 * unless `timeouts` is false). `stepMax`, if given, is the largest per-step entry instead (the deque and
 * queue models draw 0..11 and read it modulo the thread count, as their schedules always have).
 */
export function waitScheduleArbitrary(
  threads: number,
  maxLength: number,
  maxSegment: number,
  maxSegments: number,
  timeouts = true,
  stepMax?: number,
): fc.Arbitrary<number[]> {
  // Without timeouts an entry is a thread only (a model whose waits are never timed draws no timeout).
  const entries = timeouts ? 2 * threads - 1 : threads - 1;
  const perStep = fc.array(fc.nat({ max: stepMax ?? entries }), { maxLength });
  const segments = fc.array(fc.tuple(fc.nat({ max: entries }), fc.integer({ min: 1, max: maxSegment })), {
    maxLength: maxSegments,
  }).map((segs) => segs.flatMap(([e, length]) => [e, ...Array.from({ length: length - 1 }, () => e % threads)]));
  return fc.oneof(perStep, segments);
}
