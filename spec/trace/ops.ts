/**
 * Makes every deque and queue operation of the `lib/` under test one recorded step (for the `sleep`
 * scenario of `spec/trace/run.ts`): wraps the methods of its `Deque`, `Stealer` and `Injector` classes so
 * that each call runs under the trace lock and is logged as one {@link Kind.operation} record with its
 * result (`TracingBinding.operation`). `SleepWake.tla` models those operations as single steps; with this,
 * a real pool's log can be judged against it. The operations' own accesses are still logged (between the
 * lock's taking and the record), and the deque and queue logs of such a run are still behaviours of their
 * specs (every operation then runs alone, one of the interleavings they allow).
 *
 * @module
 */
import { Operation, type TracingBinding } from "./binding.ts";

type Method = (this: { words: Int32Array }, ...args: never[]) => unknown;

/**
 * Wraps the classes of the `lib/` at `root` (a directory URL). Call once per thread, before any pool code
 * runs on it, with the binding that thread installed.
 *
 * @param root The directory holding `lib/`.
 * @param binding This thread's tracing binding.
 */
export async function recordOperations(root: string, binding: TracingBinding): Promise<void> {
  const dq = await import(new URL("lib/protocol/deque.ts", root).href) as {
    Deque: { prototype: Record<string, Method> };
    Stealer: { prototype: Record<string, Method> };
  };
  const iq = await import(new URL("lib/protocol/injector.ts", root).href) as { Injector: { prototype: object } };
  const regionOf = (self: { words: Int32Array }) => self.words.byteOffset / 4;
  const wrap = (
    proto: Record<string, Method>,
    name: string,
    op: number,
    arg: (args: unknown[]) => number,
    result: (value: unknown) => number,
  ) => {
    const original = proto[name];
    if (typeof original !== "function") throw new TypeError(`Cannot record operations as ${name} is not a method`);
    proto[name] = function (this: { words: Int32Array }, ...args: never[]) {
      return binding.operation(regionOf(this), op, arg(args), () => original.apply(this, args), result);
    } as Method;
  };
  const none = () => 0;
  const asNumber = (v: unknown) => v as number;
  wrap(dq.Deque.prototype, "pop", Operation.dequePop, none, asNumber);
  wrap(dq.Deque.prototype, "push", Operation.dequePush, (a) => a[0] as number, (v) => (v ? 1 : 0));
  wrap(dq.Stealer.prototype, "steal", Operation.steal, none, asNumber);
  wrap(
    dq.Stealer.prototype,
    "stealHalfInto",
    Operation.stealHalf,
    (a) => regionOf(a[0] as { words: Int32Array }),
    asNumber,
  );
  const injector = iq.Injector.prototype as Record<string, Method>;
  wrap(injector, "pop", Operation.queuePop, none, asNumber);
  wrap(injector, "push", Operation.queuePush, (a) => a[0] as number, (v) => (v ? 1 : 0));
  wrap(injector, "pushPatiently", Operation.queuePush, (a) => a[0] as number, () => 1);
  const length = Object.getOwnPropertyDescriptor(iq.Injector.prototype, "length");
  if (length?.get === undefined) throw new TypeError("Cannot record operations as Injector has no length getter");
  const get = length.get;
  Object.defineProperty(iq.Injector.prototype, "length", {
    ...length,
    get(this: { words: Int32Array }) {
      return binding.operation(regionOf(this), Operation.queueLength, 0, () => get.call(this) as number, asNumber);
    },
  });
}
