/**
 * lib/runtime/timer.ts: a background timeout fires unless cancelled, and does not keep the process alive
 * (the pool's idle trim of its backlog buffer relies on it: an idle pool must let its program exit).
 */
import { backgroundTimeout } from "../../lib/runtime/timer.ts";
import { runScript } from "./_child.ts";
import { assert, test } from "../_test.ts";

test("a background timeout fires after its delay; a cancelled one never fires", async () => {
  let fired = 0;
  let cancelledFired = 0;
  backgroundTimeout(() => fired++, 10);
  const cancel = backgroundTimeout(() => cancelledFired++, 10);
  cancel();
  // A ref'd timer of our own keeps this test's process alive while we wait for the unref'd one.
  const until = Date.now() + 10_000;
  while (fired === 0 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 20));
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert(fired === 1, `the timeout fired ${fired} times, not once`);
  assert(cancelledFired === 0, "a cancelled timeout fired");
});

test("a background timeout does not keep the process alive (a 60 s one: the process ends at once)", () => {
  const script = `
    const { backgroundTimeout } = await import(${
    JSON.stringify(new URL("../../lib/runtime/timer.ts", import.meta.url).href)
  });
    backgroundTimeout(() => console.log("fired"), 60_000);
    console.log("armed");`;
  // Kept alive by the timer, the child would run 60 s: the 20 s limit ends it with a signal, status null.
  const child = runScript(script, 20_000);
  assert(child.stdout.includes("armed"), `the script ran: ${child.stdout} ${child.stderr}`);
  assert(
    child.status === 0 && !child.stdout.includes("fired"),
    `the process exited by itself, before the timer: status ${child.status}, signal ${child.signal}`,
  );
});
