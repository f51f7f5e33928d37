/**
 * The quota state of the priority levels when a level runs dry (issue 47, class 4): the shipped
 * `lib/protocol/levels.ts` `Levels.take`, single-threaded, with the sequence of levels a worker takes
 * checked as values. The rule (the module doc, docs/scheduling.md): a worker counts, for each lower level,
 * the tasks it took from higher levels while that level was not empty (its streak); at LEVEL_QUOTA the level
 * is taken from first and its streak starts again. A starving level found empty (another worker took its
 * task) no longer waits: its streak starts again too, so a task that reaches it later waits its own
 * LEVEL_QUOTA takes of higher levels, not none. Before this file no test looked at the takes after that
 * empty find: a worker that kept its streak passed every check.
 *
 * Deterministic: one thread, the queues in a SharedArrayBuffer, no timing.
 */
import { initInjector, Injector } from "../../lib/protocol/injector.ts";
import { injectorRegionBytes } from "../../lib/protocol/layout.ts";
import { Level, LEVEL_QUOTA, type LevelIndex, Levels } from "../../lib/protocol/levels.ts";
import { assertEquals, test } from "../_test.ts";

/** Three queues of 64, the control words, and a handle to push with. */
function setUp(): { queues: [Injector, Injector, Injector]; control: Int32Array; producer: Levels } {
  const queues = [0, 1, 2].map(() => {
    const region = { buffer: new SharedArrayBuffer(injectorRegionBytes(64)), byteOffset: 0, capacity: 64 };
    initInjector(region);
    return new Injector(region);
  }) as [Injector, Injector, Injector];
  const control = new Int32Array(new SharedArrayBuffer(1024));
  return { queues, control, producer: new Levels({ queues, control }) };
}

/** Task handles name their level: 1000 × level + a serial. */
let serial = 0;
function push(producer: Levels, level: LevelIndex, count = 1): void {
  for (let i = 0; i < count; i++) producer.pushPatiently(1000 * level + (serial++ % 1000), level);
}

/** The levels of the next `count` takes of `worker` ("H", "N", "L", or "-" for none). */
function takes(worker: Levels, count: number): string {
  let out = "";
  for (let i = 0; i < count; i++) {
    const task = worker.take();
    out += task < 0 ? "-" : "HNL"[Math.floor(task / 1000)];
  }
  return out;
}

const H = (n: number) => "H".repeat(n);

for (const [name, lower] of [["low", Level.low], ["normal", Level.normal]] as const) {
  const L = lower === Level.low ? "L" : "N";

  test(`levels: a starving ${name} level taken from first after LEVEL_QUOTA higher takes, then its streak starts again`, () => {
    const { queues, control, producer } = setUp();
    push(producer, lower, 2);
    push(producer, Level.high, 30);
    const worker = new Levels({ queues, control });
    // LEVEL_QUOTA highs, the waiting level's task, LEVEL_QUOTA highs again, then its next one.
    assertEquals(takes(worker, 2 * LEVEL_QUOTA + 2), H(LEVEL_QUOTA) + L + H(LEVEL_QUOTA) + L, "the takes");
  });

  test(`levels: a starving ${name} level found empty starts its streak again: a task that reaches it later waits LEVEL_QUOTA takes`, () => {
    const { queues, control, producer } = setUp();
    push(producer, lower, 1);
    push(producer, Level.high, 40);
    const worker = new Levels({ queues, control });
    assertEquals(takes(worker, LEVEL_QUOTA), H(LEVEL_QUOTA), "the higher level first, while the lower waits");
    // Another worker takes the waiting task (its own starving take): this worker's starving level is empty.
    queues[lower].pop();
    assertEquals(takes(worker, 1), "H", "the starving level is empty: the next take is the highest with tasks");
    // A task reaches the level again: it waits its own LEVEL_QUOTA takes of the level above, not none.
    push(producer, lower, 1);
    assertEquals(takes(worker, LEVEL_QUOTA + 1), H(LEVEL_QUOTA) + L, "the takes after the level ran dry");
  });

  test(`levels: a starving ${name} level found empty while it stays empty adds nothing to its streak`, () => {
    const { queues, control, producer } = setUp();
    push(producer, lower, 1);
    push(producer, Level.high, 40);
    const worker = new Levels({ queues, control });
    assertEquals(takes(worker, LEVEL_QUOTA), H(LEVEL_QUOTA), "the higher level first");
    queues[lower].pop();
    // Takes from above while the level is empty are not waits of that level.
    assertEquals(takes(worker, 5), H(5), "highs while the level is empty");
    push(producer, lower, 1);
    assertEquals(takes(worker, LEVEL_QUOTA + 1), H(LEVEL_QUOTA) + L, "the takes once a task is back");
  });
}

test("levels: both lower levels starving, the low one found empty: normal is served, and each streak is right after", () => {
  const { queues, control, producer } = setUp();
  push(producer, Level.low, 1);
  push(producer, Level.normal, 1);
  push(producer, Level.high, 40);
  const worker = new Levels({ queues, control });
  assertEquals(takes(worker, LEVEL_QUOTA), H(LEVEL_QUOTA), "the highs while both wait");
  queues[Level.low].pop(); // another worker took the low task
  // The low level is found empty (its streak starts again), the normal one is served.
  assertEquals(takes(worker, 1), "N", "the starving normal level next");
  push(producer, Level.low, 1);
  push(producer, Level.normal, 1);
  // Both streaks at 0: LEVEL_QUOTA highs, then the lowest starving level first, then the normal one.
  assertEquals(takes(worker, LEVEL_QUOTA + 2), H(LEVEL_QUOTA) + "LN", "the takes after");
});
