/**
 * The runs under way on a worker's stack: the task the loop runs, and those a join's wait runs inside it
 * (outermost first), each with the submitted task it belongs to. A fork made in a run carries that root;
 * `currentTask()` answers from the innermost run.
 *
 * What it owns (thread-private): `running`, the handles of the tasks being run synchronously (`execute`
 * entered, not returned), of which the first `depth` are live; `roots` beside it; and `interrupted`, the
 * runs found cut short. Invariant: at the top of the loop no join is in progress, so `depth` is 0 there
 * unless a throw cut a run short (a stack overflow in a deep recursion, caught by the user's code): the
 * runner's `repairInterrupted` then completes them.
 *
 * Threads: made and used by its worker thread only.
 *
 * @module
 */

/** The stack of runs under way on this thread. */
export class Runs {
  /** The handles of the tasks being run synchronously (`execute` entered, not returned), outermost first. */
  private readonly running: number[] = [];
  /** How many of {@link Runs.running} are live. */
  private depth = 0;
  /**
   * Beside {@link Runs.running}: the record index of the submitted task each run belongs to (itself, or a
   * fork's root), or -1. Forks made there carry it; their signal is its.
   */
  private readonly roots: number[] = [];
  /** Tasks whose `execute` was cut short (found when an enclosing `execute` returned): not finished. */
  private readonly interrupted: number[] = [];

  /** This thread. A run of `handle` begins; returns the depth to give {@link Runs.exit}. */
  enter(handle: number): number {
    const depth = this.depth;
    this.running[depth] = handle;
    this.depth = depth + 1;
    return depth;
  }

  /** This thread. The run entered at `depth` returned. */
  exit(depth: number): void {
    // Runs nested inside this one (in a join's wait) that never returned were cut short: keep them.
    if (this.depth !== depth + 1) this.strand(depth + 1);
    this.depth = depth;
  }

  /** Moves the entries of {@link Runs.running} from `from` up to {@link Runs.interrupted}. */
  private strand(from: number): void {
    for (let i = from; i < this.depth; i++) this.interrupted.push(this.running[i]);
  }

  /** This thread. How many runs are under way. */
  runDepth(): number {
    return this.depth;
  }

  /** This thread. The innermost run's task is no longer ours to finish if cut short (handed back). */
  handBack(): void {
    this.running[this.depth - 1] = -1;
  }

  /** This thread. The innermost run belongs to the submitted task in record `root` (or -1: none). */
  setRoot(root: number): void {
    this.roots[this.depth - 1] = root;
  }

  /** This thread. The innermost run's task, or -1 if none runs (or it was handed back). */
  currentRun(): number {
    return this.depth === 0 ? -1 : this.running[this.depth - 1];
  }

  /** The record index of the submitted task the synchronous run under way belongs to, or -1 (see `roots`). */
  currentRoot(): number {
    return this.depth > 0 ? this.roots[this.depth - 1] : -1;
  }

  /** This thread. Whether a run was cut short (any under way at the top of the loop, or found stranded). */
  cutShort(): boolean {
    return this.depth !== 0 || this.interrupted.length !== 0;
  }

  /** This thread, at the top of the loop. Every run still under way was cut short: takes them all. */
  takeInterrupted(): number[] {
    if (this.depth !== 0) this.strand(0);
    this.depth = 0;
    return this.interrupted.splice(0);
  }
}
