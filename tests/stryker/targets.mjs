/**
 * The table of the StrykerJS run (`npm run stryker`): each target file, with the focused suites whose
 * failure kills a mutant of it. One place, read by the config (`stryker.config.mjs`) and the driver
 * (`run.mjs`).
 *
 * Every command runs under Deno from node_modules, with `FILCH_MUTATION_RUN=1`: the suites' own mutant
 * tests read the shipped file as text to patch it, and in Stryker's sandbox that file is the instrumented
 * one, so they would fail for the wrong reason (the same rule as `tests/mutants/run.ts`). `--fail-fast`
 * stops at the first failing test: a killed mutant costs one failure, not the whole suite.
 *
 * @module
 */

const deno = "FILCH_MUTATION_RUN=1 node_modules/.bin/deno test -A --no-check --fail-fast --quiet";

/**
 * Target file (relative to the repository's root) → the test files that are its focused suites.
 * @type {Record<string, string[]>}
 */
export const TARGETS = {
  "lib/protocol/latch.ts": ["tests/protocol/latch_test.ts", "tests/lincheck/sleep_test.ts", "tests/pool/join_test.ts"],
  "lib/protocol/kill_guard.ts": [
    "tests/protocol/kill_guard_test.ts",
    "tests/lincheck/kill_guard_test.ts",
    "tests/pool/force_test.ts",
  ],
  "lib/protocol/sleep.ts": ["tests/protocol/sleep_test.ts", "tests/lincheck/sleep_test.ts"],
  "lib/protocol/levels.ts": [
    "tests/protocol/levels_test.ts",
    "tests/protocol/levels_quota_test.ts",
    "tests/pool/priority_test.ts",
    "tests/lincheck/levels_test.ts",
  ],
  // Fastest and most killing first (--fail-fast): the unit tests, the cut-short checks, then the harness.
  "lib/protocol/injector.ts": [
    "tests/protocol/injector_test.ts",
    "tests/protocol/cut_short_test.ts",
    "tests/lincheck/queue_test.ts",
  ],
  // Left out: tests/lincheck/random_test.ts (over a minute alone on the unmutated file; the systematic
  // mode covers the same scenarios' small schedules in 8 s) and deque_stress_test.ts (real threads, timing).
  // cut_short_test.ts is the only suite that reaches repair() and the notes.
  "lib/protocol/deque.ts": [
    "tests/protocol/deque_model_test.ts",
    "tests/protocol/deque_test.ts",
    "tests/protocol/deque_bad_input_test.ts",
    "tests/protocol/cut_short_test.ts",
    "tests/lincheck/systematic_test.ts",
  ],
  "lib/protocol/producers.ts": [
    "tests/protocol/producers_test.ts",
    "tests/protocol/producer_slots_test.ts",
    "tests/pool/fair_share_test.ts",
    "tests/lincheck/producers_test.ts",
  ],
  "lib/protocol/slots.ts": [
    "tests/protocol/slots_test.ts",
    "tests/lincheck/elastic_test.ts",
    "tests/pool/elastic_test.ts",
  ],
  "lib/protocol/memory.ts": [
    "tests/protocol/memory_test.ts",
    "tests/protocol/producer_slots_test.ts",
    "tests/protocol/record_words_test.ts",
    "tests/pool/pool_test.ts",
  ],
  "lib/protocol/layout.ts": [
    "tests/protocol/layout_test.ts",
    "tests/protocol/memory_test.ts",
    "tests/protocol/record_words_test.ts",
    "tests/pool/pool_test.ts",
  ],
  // The worker's mail: its unit tests first (one thread, milliseconds), then its pool suites, where it runs
  // in worker threads: the broadcasts, the directed (moved) tasks and the SharedArrayBuffers passed by
  // reference (FILTER names the tests kept).
  "lib/worker/mail.ts": [
    "tests/worker/mail_test.ts",
    "tests/pool/broadcast_test.ts",
    "tests/pool/payload_test.ts",
    "tests/pool/pool_test.ts",
  ],
  // A producer's cancellation: its unit tests first (one thread, a real task table and ledger), then the
  // pool's cancellation tests through real workers (5 s together, unmutated). timer_test.ts tests the
  // runtime's background timer, which this file does not use.
  "lib/producer/cancellation.ts": ["tests/producer/cancellation_test.ts", "tests/pool/cancel_test.ts"],
  // The room wait (maxQueue): the unit tests first (room_test, slots, the fair share), then the pool's
  // backpressure tests (4 s), then the room-wait harness (10 s: both sides of the handshake, spec/RoomWait.tla).
  "lib/producer/room.ts": [
    "tests/producer/room_test.ts",
    "tests/protocol/producer_slots_test.ts",
    "tests/pool/fair_share_test.ts",
    "tests/pool/backpressure_test.ts",
    "tests/lincheck/room_wait_test.ts",
  ],
  // A worker's held marks and their repairs: the unit suites only (marks_test, recovery_paths, cut_short: 1 s). Left
  // out: tests/pool/death_test.ts (46 s on the unmutated file: too slow for ~200 mutants) and the pool's
  // fork-join tests (join_test 8 s); leaving them out can only lower the score.
  "lib/worker/marks.ts": [
    "tests/worker/marks_test.ts",
    "tests/protocol/recovery_paths_test.ts",
    "tests/protocol/cut_short_test.ts",
  ],
  // A worker's counters and busy time: its unit tests first (one thread, milliseconds), then the pool's
  // metrics tests, which read the busy words through stats() and utilization from real workers.
  "lib/worker/stats.ts": ["tests/worker/stats_test.ts", "tests/pool/metrics_test.ts"],
  // A remote producer's link to the owner: its unit tests first (one thread, a stand-in port), then the
  // pool tests where a task opens a producer in a worker (inner_producer_test.ts) and where a pool left
  // with no worker tells its remote producers (no_workers_test.ts): 3.5 s together, unmutated.
  "lib/producer/owner_link.ts": [
    "tests/producer/owner_link_test.ts",
    "tests/pool/inner_producer_test.ts",
    "tests/pool/no_workers_test.ts",
  ],
  // The owner's broadcast: its unit tests first (one thread, a real ledger), then the pool's broadcast
  // tests through real workers (deaths, an elastic pool's targets, terminate).
  "lib/owner/broadcast.ts": ["tests/owner/broadcast_test.ts", "tests/pool/broadcast_test.ts"],
  // Left out: tests/lincheck/producers_test.ts (the record wait's shared side, lib/protocol/producers.ts:
  // it imports nothing of lib/producer/, so it cannot kill a mutant of backlog.ts; its random mode cost
  // every survivor 9 s).
  "lib/producer/backlog.ts": [
    "tests/producer/backlog_test.ts",
    "tests/pool/backlog_test.ts",
    "tests/pool/fair_share_test.ts",
  ],
  "lib/producer/ledger.ts": [
    "tests/producer/ledger_test.ts",
    "tests/lincheck/room_wait_test.ts",
    "tests/pool/producer_stats_test.ts",
    "tests/pool/events_test.ts",
  ],
  // The owner's growth of an elastic pool: its unit tests first (one thread, real slot words, a stand-in
  // clock and timer: milliseconds), then the slot words' unit tests, then the pool's elastic tests through
  // real workers (grow, retire, deaths while retiring).
  "lib/owner/growth.ts": [
    "tests/owner/growth_test.ts",
    "tests/protocol/slots_test.ts",
    "tests/pool/elastic_test.ts",
  ],
  // The owner's side of producer links: the slot unit tests first (fast, and they pin the sums over every
  // slot), then the pool tests that open, use, close and terminate producers in other threads.
  "lib/owner/links.ts": [
    "tests/owner/links_test.ts",
    "tests/protocol/producer_slots_test.ts",
    "tests/pool/producer_stats_test.ts",
    "tests/pool/inner_producer_test.ts",
    "tests/pool/producers_test.ts",
    "tests/pool/no_workers_test.ts",
  ],
  // The sweep after a producer's death: its unit tests first, then the death tests of the other suites.
  "lib/owner/producer_deaths.ts": [
    "tests/owner/producer_deaths_test.ts",
    "tests/protocol/recovery_paths_test.ts",
    "tests/protocol/producer_slots_test.ts",
    "tests/pool/producer_stats_test.ts",
    "tests/pool/producers_test.ts",
  ],
  // A producer's completion reader: its unit tests first (one thread, a real table, ledger and queue; added
  // after the first run began), the fair share of records (the record wait's settler side across producer
  // threads), the producers harness over the shipped reader, then the payload tests that settle a result
  // by message (2 s together, unmutated). See FILTER for what is left out.
  "lib/producer/completion.ts": [
    "tests/producer/completion_test.ts",
    "tests/pool/fair_share_test.ts",
    "tests/lincheck/producers_test.ts",
    "tests/pool/payload_test.ts",
  ],
  // A worker's search and idle path: it runs only in worker threads (no harness runs the shipped file), so
  // its unit tests (worker/search_test.ts: a real pool memory, the search of worker 0 driven in this
  // thread) first, then the pool suites of its paths: the order of takes from the injector (order_test),
  // the wake for the rest of a burst and a graph's stolen continuations (audit_b_test), the counters of
  // steals, sleeps and wakes (metrics_test), the asynchronous sleep (async_bound_test), stealing forks
  // (join_test) and an elastic pool's retirement and "grow" requests (elastic_test). See FILTER.
  "lib/worker/search.ts": [
    "tests/worker/search_test.ts",
    "tests/pool/order_test.ts",
    "tests/pool/audit_b_test.ts",
    "tests/pool/metrics_test.ts",
    "tests/pool/async_bound_test.ts",
    "tests/pool/join_test.ts",
    "tests/pool/elastic_test.ts",
  ],
  // The worker loop and its assembly: its unit tests first (worker/loop_test.ts: a WorkerLoop built in the
  // test thread over a real pool memory, "loop: …"), then the pool suites, where it runs in worker threads,
  // the fastest and most killing first (a broken assembly fails any of them): directed tasks at the async bound
  // and poolHandle()'s reply (audit_b_test), the bound's waits (async_bound_test), broadcast parts
  // (broadcast_test), a producer opened in a task (inner_producer_test: the event loop held), aborts of
  // running tasks (cancel_test), directed tasks with moved buffers (payload_test), buffers passed by
  // reference, async tasks, close and terminate (pool_test), retirement (elastic_test, worker_setup_test's
  // teardown) and recycling (recycle_test). See FILTER.
  "lib/worker/loop.ts": [
    "tests/worker/loop_test.ts",
    "tests/pool/audit_b_test.ts",
    "tests/pool/async_bound_test.ts",
    "tests/pool/broadcast_test.ts",
    "tests/pool/inner_producer_test.ts",
    "tests/pool/cancel_test.ts",
    "tests/pool/payload_test.ts",
    "tests/pool/pool_test.ts",
    "tests/pool/join_test.ts",
    "tests/pool/elastic_test.ts",
    "tests/pool/recycle_test.ts",
  ],
  // A worker's run of one task (claim, run, finish): its unit tests first (worker 0's real parts built in
  // the test's thread: milliseconds), then the pool suites, where it runs in worker threads: pool_test's
  // round trips (sync and async values, thrown errors, results by message), a claim lost to an abort and
  // aborted forks (cancel), the cut-short runs and a thenable's throws (reliability), graph nodes, the start
  // and finish stamps (metrics). 10 s together on the loaded machine, unmutated (see FILTER).
  "lib/worker/runner.ts": [
    "tests/worker/runner_test.ts",
    "tests/pool/pool_test.ts",
    "tests/pool/cancel_test.ts",
    "tests/pool/reliability_test.ts",
    "tests/pool/graph_test.ts",
    "tests/pool/metrics_test.ts",
  ],
  // A worker's fork-join host: its unit tests first (worker 0's real parts built in the test's thread:
  // milliseconds), then the pool's fork-join tests through real workers (join_test: lazy joins, stolen and
  // popped-back b, a pool of one, joins helping), the forks of an aborted task, a join at the bound of
  // async tasks, the stack overflows and async b of reliability_test, forks in metrics.
  "lib/worker/fork_join.ts": [
    "tests/worker/fork_join_test.ts",
    "tests/pool/join_test.ts",
    "tests/pool/cancel_test.ts",
    "tests/pool/async_bound_test.ts",
    "tests/pool/reliability_test.ts",
    "tests/pool/metrics_test.ts",
  ],
  // The producer (the submitting side every pool and producer thread runs): its unit tests first (one
  // thread, a stand-in owner port, the test playing the worker), then the pool suites that reach its own
  // code rather than its parts': stats() and metricsTable(), terminate() and a remote producer's end,
  // a producer in a worker (slot > 0), its stats, the fair share of records and the no-workers rejection
  // (16 s together, unmutated). Left out: cancel_test.ts (cancellation.ts's suite, with a random race
  // test), batch_test.ts (8 s, batch.ts's) and producers_test.ts (70 s whole).
  "lib/producer/producer.ts": [
    "tests/producer/producer_test.ts",
    "tests/pool/metrics_test.ts",
    "tests/pool/terminated_test.ts",
    "tests/pool/inner_producer_test.ts",
    "tests/pool/producer_stats_test.ts",
    "tests/pool/fair_share_test.ts",
    "tests/pool/no_workers_test.ts",
  ],
  // A producer's admission: its unit tests first (one thread, a real table, ledger, queues and room: each
  // refusal, what an admitted task leaves, the repair of a submission cut at each shared access; added after
  // the first run began), then every refusal through the pool (terminated_test: each submission after terminate() and
  // close(), 1 s), the room (backpressure), an aborted signal and the canceller's hooks (cancel), the
  // payload's bound and move()'s detach (payload), the getters that close or submit again and the cut-short
  // repair at the edge of the stack (reliability), a fixed pool left with no worker (no_workers): 16 s
  // together, unmutated. See FILTER.
  "lib/producer/admission.ts": [
    "tests/producer/admission_test.ts",
    "tests/pool/terminated_test.ts",
    "tests/pool/backpressure_test.ts",
    "tests/pool/cancel_test.ts",
    "tests/pool/payload_test.ts",
    "tests/pool/reliability_test.ts",
    "tests/pool/no_workers_test.ts",
  ],
  // The placing of submitted tasks: its unit tests first (one thread, a real table, ledger and queues), the
  // pool's backlog (order, bytes through growth, trims), the fair share of records, the getters and onError
  // handlers that submit again (the nested encoder), move()'s directed tasks and the payload bounds, a level,
  // a progress handler, a task aborted in the backlog, a timeout's start watch and the metrics' stamps:
  // 17 s together, unmutated. See FILTER.
  "lib/producer/submission.ts": [
    "tests/producer/submission_test.ts",
    "tests/pool/backlog_test.ts",
    "tests/pool/fair_share_test.ts",
    "tests/pool/reliability_test.ts",
    "tests/pool/payload_test.ts",
    "tests/pool/priority_test.ts",
    "tests/pool/progress_test.ts",
    "tests/pool/cancel_test.ts",
    "tests/pool/metrics_test.ts",
  ],
  // The repair after a worker's death: its unit tests first (one thread, a real pool memory and a stand-in
  // ledger: milliseconds), recovery_paths (marks and cut-short repairs killed at every access), then the pool
  // tests where a worker dies holding each kind of record: a graph node (the owner's, a producer's), a moved
  // task, a remote producer's task, an async task, a fork in flight, crashes that would leak records, and
  // orphaned forks (20 s together, unmutated). See FILTER for what is left out.
  "lib/owner/recovery.ts": [
    "tests/owner/recovery_test.ts",
    "tests/protocol/recovery_paths_test.ts",
    "tests/pool/graph_test.ts",
    "tests/pool/payload_test.ts",
    "tests/pool/producers_test.ts",
    "tests/pool/pool_test.ts",
    "tests/pool/reliability_test.ts",
  ],
  // The owner's handling of a worker's death: its unit tests first (one thread, a real pool memory, table
  // and ledger, stand-in reader, broadcaster and workforce: milliseconds), then the pool tests where a worker
  // dies or its replacement fails to start (replacement_failure_test.ts whole, the death events, a graph
  // node's or a producer's task on the dead worker, a fork in flight, a death while retiring, a broadcast
  // part): 25 s together, unmutated. See FILTER for what is left out.
  "lib/owner/worker_deaths.ts": [
    "tests/owner/worker_deaths_test.ts",
    "tests/pool/replacement_failure_test.ts",
    "tests/pool/events_test.ts",
    "tests/pool/graph_test.ts",
    "tests/pool/producers_test.ts",
    "tests/pool/reliability_test.ts",
    "tests/pool/elastic_test.ts",
    "tests/pool/broadcast_test.ts",
  ],
  // The owner's lifecycle (start, deaths, replacement, force kills, broadcast, close, terminate): it needs
  // real workers, so its suites are pool tests, fastest first (terminated_test: 1 s), filtered by FILTER.
  // The owner (start, deaths, replacement, force kills, broadcast, close, terminate, its parts' wiring): its
  // unit tests first (owner_test.ts: one thread, the Workforce's thread starts stubbed, ~1 s; each hang fails
  // in 10 s), then the lifecycle's pool tests through real workers, fastest first, filtered by FILTER.
  "lib/owner/owner.ts": [
    "tests/owner/owner_test.ts",
    "tests/pool/terminated_test.ts",
    "tests/pool/broadcast_test.ts",
    "tests/pool/pool_test.ts",
    "tests/pool/reliability_test.ts",
    "tests/pool/inner_producer_test.ts",
    "tests/pool/events_test.ts",
    "tests/pool/no_workers_test.ts",
    "tests/pool/replacement_failure_test.ts",
  ],
};

/** The filter of `memory.ts` and `layout.ts` (see {@link FILTER}). */
const POOL_MEMORY_FILTER = "/^(every |slots: |each |the |another |a shape |a size |a capacity |a region|a pool " +
  "without|a worker or producer slot|sync and async task functions|payloads larger than a record|several " +
  "producers submitting)/";

/**
 * Which tests of a target's suites run, as a Deno `--filter` regex on their names (Deno's regexes have no
 * lookahead, so the kept tests are named, not the left-out ones). Left out: the harness's trace-mode tests,
 * which name each access by the `// spec:` comment on the line of lib/ that made it. StrykerJS's
 * instrumented file has other lines, so in its sandbox they fail on the unmutated code (and the dry run
 * with them). Leaving them out can only lower a score: they are exact step tables that would kill more.
 * @type {Record<string, string>}
 */
export const FILTER = {
  // runner.ts: every test of worker/runner_test.ts ("runner: …"); of pool_test.ts three round trips; of
  // cancel_test.ts the claim's race with an abort and aborted forks; of reliability_test.ts the stack
  // overflows (repairInterrupted) and a thenable's throws; of graph_test.ts a continuation and an input's
  // rejection; of metrics_test.ts the run and wait times. A first run with more (async_bound_test.ts,
  // payload_test.ts's move(), more of these files: 20-23 s) tested 8 mutants in 3 minutes: 281 would not
  // have fitted the session. What it left out, the unit tests pin on one thread (the bound, move(), the
  // start's notify). Leaving them out can only lower the score.
  "lib/worker/runner.ts": "/^(runner: |sync and async task functions|a task.s thrown error|results that find no " +
    "free|a task aborted while queued|forks of an aborted|stack overflows inside|a thenable whose|a continuation " +
    "runs|an input.s rejection|metrics: run and wait)/",
  // fork_join.ts: every test of worker/fork_join_test.ts ("fork-join: …") and of pool/join_test.ts but its
  // mutants test (it patches the shipped file, which is the instrumented one in StrykerJS's sandbox); of
  // cancel_test.ts the forks of an aborted task; of async_bound_test.ts the join at its bound; of
  // reliability_test.ts the records of deep fork-join, the stack overflows in fork-join code, the 800 KB
  // results, an async b; of metrics_test.ts the forking task.
  "lib/worker/fork_join.ts": "/^(fork-join: |outside a pool|scope: |join |b sees|a join keeps|a pool of one|many " +
    "joining|terminate\\(\\) while joins|forks that name|forks of an aborted|a worker waiting in a join|stack " +
    "overflows inside|a stack overflow at any|fork-join never deadlocks|deep fork-join|metrics: a task that forks)/",
  // Of the pool suites, only the tests where a worker dies (the rest never reaches the repair). Left out:
  // death_test.ts (46 s on the unmutated file, killing a worker at every access: every survivor would pay
  // it), fault_injection_test.ts (random, minutes) and force_test.ts (kill-guard timing); leaving them out
  // can only lower the score.
  // Of the pool suites, the tests where a worker dies or a replacement fails to start; the rest of those
  // files never reaches this file. Left out as for recovery.ts: death_test.ts, fault_injection_test.ts,
  // force_test.ts (events_test.ts's forced abort counts a forced kill instead).
  "lib/owner/worker_deaths.ts":
    "/^(worker deaths: |replacement failure|events on deno: (workerdied|a forced abort)|a " +
    "worker.s death |a worker that dies of a thrown|a worker that exits while a fork|a worker that dies while it " +
    "retires|a part that throws)/",
  "lib/owner/recovery.ts": "/^(recovery: |class 7: |a worker.s death |a worker that dies of a thrown|a worker that " +
    "exits while a fork|crashes leak no records|a moved task cancelled while queued|a worker that dies while " +
    "an async|a worker thread that exits while running|records freed by orphaned)/",
  // lincheck/kill_guard_test.ts less "kill-guard harness: …" (trace mode); every test of
  // protocol/kill_guard_test.ts (they start "a ") and of force_test.ts.
  "lib/protocol/kill_guard.ts": "/^(kill-guard (random|systematic) mode|a |without force|force must|forced kills)/",
  // The layout and the views opened on it: every test of the unit files (protocol/memory_test.ts,
  // layout_test.ts, producer_slots_test.ts, record_words_test.ts), then three short pool tests of
  // pool/pool_test.ts that cross every region a pool uses (codecs through records, overflow blocks, several
  // producers' completions); the rest of pool_test.ts (a million tasks, deaths) adds minutes to every
  // survivor and reaches no view the unit tests do not pin.
  "lib/protocol/memory.ts": POOL_MEMORY_FILTER,
  "lib/protocol/layout.ts": POOL_MEMORY_FILTER,
  // protocol/levels_test.ts and levels_quota_test.ts ("levels: …", unit, first: 1 s), priority_test.ts (3 s);
  // lincheck/levels_test.ts (14 s) less its first harness test (trace mode) and the mutants test (it loads
  // the kept mutants as variants, none in a mutation run).
  "lib/protocol/levels.ts":
    "/^(levels: |levels harness: a starving|levels (random|systematic) mode|one worker|no starvation|two workers|runMany and map|priority: )/",
  // protocol/producers_test.ts ("producers: …") and producer_slots_test.ts ("slots: …"), unit, first (2 s);
  // pool/fair_share_test.ts (1 s); lincheck/producers_test.ts's harness test and random mode (8 s), less its
  // systematic mode (93 s alone, more than the rest together: every survivor would pay it).
  "lib/protocol/producers.ts": "/^(producers: |slots: |fair share |producers harness|producers random mode)/",
  // fair_share_test.ts; lincheck/producers_test.ts's harness test (its random mode, 8 s, and systematic
  // mode, 93 s, left out: 278 mutants would not fit the time this target had); of payload_test.ts the
  // results that come by message (a large result, move(), a moved task cancelled). Left out too:
  // pool/producers_test.ts (37 s alone, unmutated). Leaving them out can only lower the score.
  "lib/producer/completion.ts":
    "/^(completion: |fair share |producers harness|move\\(\\): an argument|a moved task|a large result)/",
  // Every test of protocol/injector_test.ts (they start "a queue" or "the queue"), the two queue tests of
  // cut_short_test.ts (its deque tests do not reach the queue), and lincheck/queue_test.ts's systematic
  // mode (5 s: every schedule with at most 2 preemptions of the small scenarios). Left out: its random
  // mode (20,000 generated interleavings, 30 s on a quiet machine, more than the rest together).
  "lib/protocol/injector.ts": "/^(a queue|the queue|queue systematic mode)/",
  // Every test of worker/mail_test.ts (they start "mail: ") and of broadcast_test.ts; of payload_test.ts
  // the two of move() (a directed task and its moved buffers, one cancelled while queued); of pool_test.ts
  // the SharedArrayBuffer passed by reference. The rest of payload_test.ts and pool_test.ts (large
  // payloads, a million tasks) never reaches the mail.
  "lib/worker/mail.ts":
    "/^(mail: |broadcast |a busy worker|a part that throws|terminate\\(\\) rejects the parts|move\\(\\): " +
    "an argument|a moved task cancelled|a SharedArrayBuffer argument is passed)/",
  // producer/backlog_test.ts ("backlog: …", unit, first), pool/backlog_test.ts's model check and its two
  // trim tests (its mutants test skips itself in a mutation run), pool/fair_share_test.ts (a pool whose
  // producer waits for a record).
  "lib/producer/backlog.ts": "/^(backlog: |waiting entries |an emptied backlog |fair share )/",
  // producer/ledger_test.ts ("ledger: …", unit, first); lincheck/room_wait_test.ts's harness test and
  // random mode (the shipped ledger's shared pending word under generated interleavings), less its
  // systematic mode; pool/producer_stats_test.ts's counts test (the slot's counts line) and
  // pool/events_test.ts's drain test (drain() in a pool), less the rest of their files (worker deaths).
  "lib/producer/ledger.ts":
    "/^(ledger: |room-wait harness|room-wait random mode|stats.. counts every|events on deno: drain comes)/",
  // Every test of the unit files (owner/links_test.ts "links: …", producer_slots_test.ts "slots: …"),
  // producer_stats_test.ts ("stats…") and inner_producer_test.ts ("a task…", "poolHandle…"); of
  // pool/producers_test.ts (70 s whole) the tests that open, refuse, use and close links. Left out: the
  // 8 × 5,000-task throughput test, the room and fairness tests (the room's waits, not the links), close()
  // and terminate() while 8 producers submit (15 s together; links_test.ts pins stateChanged's store and
  // wakes) and the random kills (producer_deaths.ts's suite): ~20 s on the unmutated file instead of ~75.
  // Then no_workers_test.ts: a pool with no worker left tells its producers' links, open and later ones.
  "lib/owner/links.ts": "/^(links: |slots: |stats|a task|poolHandle|a producer.s slot comes back|a handle is " +
    "refused|a producer thread has the submitting API|no workers)/",
  // The producer death tests: every test of owner/producer_deaths_test.ts ("deaths: …"), recovery_paths's
  // sweep racing a worker's claim, producer_slots's dead last slot, producer_stats's abandoned tasks and
  // producers_test's random kills (7 s); the rest of those suites never lets a producer die.
  // Of each suite the tests that submit through a refusal, a check or the repair: terminated_test.ts whole;
  // backpressure's maxQueue refusal and map's wait for room; cancel's aborts while queued or backlogged, bad
  // options and an aborted spawn; payload's bound and move()'s three; reliability's getters, terminate()
  // from onError and the run at the edge of the stack; no_workers' first (a fixed pool left unstaffed).
  // Left out: the rest of those files (worker deaths, fork-join, 35 s of reliability_test.ts), which reach
  // admission only through an ordinary submission that the kept tests make too.
  "lib/producer/admission.ts":
    "/^(admission: |after terminate|after close|PoolTerminatedError is|maxQueue: a submission|" +
    "map respects maxQueue|a task aborted while queued|a task aborted in the backlog|bad task options|an " +
    "aborted spawn|a payload beyond payloadMemory|move\\(\\): an argument|move\\(\\) is refused|a moved task " +
    "cancelled|a getter in the arguments|a run at the edge|terminate\\(\\) called from onError|no workers " +
    "on [a-z]+: a 1-worker)/",
  // submission_test.ts ("submission: …", unit, first); of the pool suites one or two tests each that place a
  // task through the path named in TARGETS' comment. Left out: the rest of those files (81 s of
  // reliability_test.ts, progress and cancellation races, priority's starvation bounds), which place tasks
  // only as the kept tests do.
  "lib/producer/submission.ts": "/^(submission: |waiting entries |an emptied backlog |fair share |an onError " +
    "that submits while|a getter in the arguments that submits again|move\\(\\): an argument|a moved task " +
    "cancelled|a payload beyond payloadMemory|large arguments copied straight|one worker: high|progress values " +
    "arrive in order|a task aborted in the backlog|timeout counts from|metrics: run and wait times)/",
  "lib/owner/producer_deaths.ts": "/^(deaths: |class 7: a producer|slots: the last slot given back|stats\\(\\): a " +
    "producer thread that dies|producers killed at random)/",
  // worker/search_test.ts ("search: …", unit, first); order_test's submission-order tests (not its
  // queueTimeout test: a deadline under load); audit_b_test's class 6 and 8; metrics_test and
  // async_bound_test less their bad-input and death tests; of join_test (9 s whole) fib(15), the many joins
  // on 2 workers, the one-worker shapes and the stolen forks' buffers; of elastic_test the grow/retire
  // cycle and a producer's growth (not the deaths and close/terminate: they reach loop.ts, not the search).
  "lib/worker/search.ts": "/^(search: |one worker|two workers: a task starts|class |histogram|metrics: |2 workers, " +
    "a bound|a broadcast reaches|a worker waiting in a join|fib\\(15\\)|many joining tasks|a pool of one worker " +
    "runs|forks that name a SharedArrayBuffer|a pool starts min|a producer.s submissions grow)/",
  // worker/loop_test.ts ("loop: …", unit, first: it kills most mutants of the assembly, the recycling, the
  // retirement, the buffers and the yields), then of each pool suite one or two tests a path of the loop
  // needs in real threads: directed tasks at the bound and poolHandle()'s reply (audit_b class 6 and 8), the
  // bound's waits, broadcast parts, a producer opened in a task, aborts of running tasks, move(), buffers by
  // reference, close with tasks queued, forks naming a buffer made in a task, grow/retire, recycling. The
  // rest of those suites left out: this file's 225 mutants on the loaded machine (9 StrykerJS runs on 2
  // cores) cost ~35 s a survivor with 27 pool tests; leaving them out can only lower the score.
  "lib/worker/loop.ts":
    "/^(loop: |class [68]|2 workers, a bound|a broadcast reaches|close\\(\\) while both|broadcast " +
    "runs|a busy worker|a task opens a producer|a running synchronous task|a running asynchronous task|move\\(\\): an " +
    "argument|a SharedArrayBuffer argument is passed|close with tasks queued|forks that name a SharedArrayBuffer|a pool " +
    "starts min|recycle on [a-z]+: after N)/",
  // The owner's lifecycle: every test of owner/owner_test.ts ("owner: …"), terminated_test.ts,
  // broadcast_test.ts, events_test.ts, no_workers_test.ts and replacement_failure_test.ts; of pool_test.ts
  // the close, terminate, await-using and death tests and a module that fails to load; of
  // reliability_test.ts the tests that close or terminate from user code, close({ timeout }), terminate
  // after close, a module that exits and terminate during a replacement's load; inner_producer_test.ts's
  // poolHandle() refusals. Left out: the rest of those files (100k tasks, stack overflows, fork-join
  // churn), and force_test.ts and elastic_test.ts (3 s more a mutant: 38 s in all with them, unmutated, on
  // the loaded machine; events_test.ts's forced kill, no_workers_test.ts and replacement_failure_test.ts
  // reach the same paths). Leaving them out can only lower the score.
  "lib/owner/owner.ts": "/^(owner: |PoolTerminatedError is|after terminate|after close|broadcast runs|a busy " +
    "worker|a part that throws|terminate\\(\\) rejects the parts|events on |no workers on |replacement failure on |" +
    "close with tasks|terminate with tasks|await using|a worker that dies while|bad input: a module|terminate\\(\\) " +
    "called from|a getter in the arguments that calls|close\\(\\{ timeout|a deeply nested|terminate\\(\\) while a " +
    "dead|a task module that exits|poolHandle)/",
};

/**
 * The shell command that runs `file`'s focused suites.
 * @param {string} file A key of {@link TARGETS}.
 * @returns {string}
 */
export function commandFor(file) {
  const tests = TARGETS[file];
  if (tests === undefined) throw new Error(`no StrykerJS target ${file}: add it to tests/stryker/targets.mjs`);
  const filter = FILTER[file] === undefined ? "" : ` --filter '${FILTER[file]}'`;
  return `${deno}${filter} ${tests.join(" ")}`;
}

/**
 * The incremental file of `file`, kept in the repository: a later run re-tests only the mutants whose
 * code changed.
 * @param {string} file A key of {@link TARGETS}.
 * @returns {string}
 */
export function incrementalFileFor(file) {
  return `tests/stryker/incremental/${file.replace(/^lib\//, "").replaceAll("/", "_").replace(/\.ts$/, "")}.json`;
}

/**
 * The JSON report of `file`'s last run (not kept: the incremental file holds what a later run needs).
 * @param {string} file A key of {@link TARGETS}.
 * @returns {string}
 */
export function reportFileFor(file) {
  return `tests/stryker/.reports/${file.replace(/^lib\//, "").replaceAll("/", "_").replace(/\.ts$/, "")}.json`;
}

/**
 * The triage file of `file`'s surviving mutants (equivalent, or a known hole, each with its reason), kept
 * in the repository, one a target.
 * @param {string} file A key of {@link TARGETS}.
 * @returns {string}
 */
export function triageFileFor(file) {
  return `tests/stryker/triage/${file.replace(/^lib\//, "").replaceAll("/", "_").replace(/\.ts$/, "")}.json`;
}
