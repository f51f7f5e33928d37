/**
 * The pool's lifecycle states: open, closing, closed, terminated.
 *
 * What it owns: the names of the states only. The state itself belongs to the owner (the thread that
 * started the workers, `owner/owner.ts`), which moves it forward and never back; the producer side reads it to
 * refuse a submission once the pool began to close.
 *
 * Threads: any.
 *
 * @module
 */

/** The pool's lifecycle. */
export const PoolState: Readonly<{ OPEN: "open"; CLOSING: "closing"; CLOSED: "closed"; TERMINATED: "terminated" }> =
  Object.freeze({
    /** Accepting tasks. */
    OPEN: "open",
    /** `close()` called: refusing new tasks, letting submitted ones settle. */
    CLOSING: "closing",
    /** Closed: workers exited. */
    CLOSED: "closed",
    /** Terminated: unsettled tasks rejected, workers stopped. */
    TERMINATED: "terminated",
  });

/** One of the {@link PoolState} values. */
export type PoolStateName = (typeof PoolState)[keyof typeof PoolState];
