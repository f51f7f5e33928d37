/**
 * The codes of the facade's functions (`lib/protocol/atomics.ts`'s `mem`), as the recorders number them: the
 * tracing binding (`binding.ts`) writes them into a trace, `spec/trace.ts` names them in its messages, and the
 * interleaving harness (`tests/lincheck/`) writes them into a gate's block. One numbering, here, so that
 * `spec/` needs nothing from `tests/` and a trace and a harness block can never disagree.
 *
 * @module
 */

/** Facade function codes (0 is no function). */
export const Fn = Object.freeze({
  load: 1,
  store: 2,
  compareExchange: 3,
  add: 4,
  sub: 5,
  exchange: 6,
  or: 7,
  and: 8,
  wait: 9,
  waitAsync: 10,
  notify: 11,
});

/** The short name of each code, by code (`FN_NAMES[Fn.compareExchange]` is "cas"), for tables and messages. */
export const FN_NAMES: readonly string[] = [
  "?",
  "load",
  "store",
  "cas",
  "add",
  "sub",
  "xchg",
  "or",
  "and",
  "wait",
  "waitAsync",
  "notify",
];
