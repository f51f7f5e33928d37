/**
 * The pool's events: its lifecycle and its workers', as an `EventTarget` (the web platform's type, on Deno,
 * Bun, Node and in browsers), typed by {@link PoolEventMap}. `pool.events` is one {@link PoolEvents}.
 *
 * What it owns: the event types and their details ({@link PoolEventMap}, {@link PoolEvent}), the typed
 * target ({@link PoolEvents}), and the queue that dispatches them ({@link EventQueue}): the pool's parts
 * say what happened (`emit`), and the queue dispatches it later, in order, in a task of its own.
 *
 * Why queued, and why a task (a `setTimeout` of 0) rather than a microtask: a listener is user code, and
 * the pool calls no user code while its state is half-updated (the re-entrancy rule of pool.ts). Events
 * happen inside the pool's steps (a completion read, a death's repair, a submission), so they are noted
 * there and dispatched once those steps and the microtasks they queued (the tasks' promise reactions)
 * have run: a listener finds the pool whole, may submit, close or terminate it, and sees every promise
 * settled that the event speaks of. The events of the pool's creation (the first workers' `workeronline`) are
 * held until it is created, then dispatched in a task after it: the listeners added right after
 * `await Pool.create(...)` (in the microtasks before that task) receive them.
 * Nothing is dispatched from inside a shared-memory step, and no event is dropped for lack of a listener
 * except `drain` and the queue's (the frequent ones, skipped while no listener of their type was ever added).
 *
 * A listener that throws: `dispatchEvent` runs every listener whatever one throws, and the runtime reports
 * the error as it reports an uncaught one (Deno and browsers: the global `error` event; Node and Bun:
 * `uncaughtException`); the pool's state, its other listeners and its tasks' settlements are untouched.
 *
 * Threads: the pool's owner (the thread that created it). A producer in another thread
 * (`openProducer`) has no events; the pool's events speak of the pool as a whole, except `drain`, which
 * counts the owner's own submissions (see {@link PoolEventMap}).
 *
 * @module
 */

import type { AbortSignalLike } from "./options.ts";

/**
 * The web platform's `Event`, as the pool's events are: the global type where the consumer's types declare
 * it (the DOM library, `@types/node`, Deno, Bun), else the part the pool relies on (typed structurally, so
 * that a TypeScript consumer needs neither the DOM library nor `@types/node`).
 *
 * @example Usage
 * ```ts
 * import { type EventLike, PoolEvent } from "@filch/filch";
 * const event: EventLike = new PoolEvent("close", {});
 * console.log(event.type); // close
 * ```
 */
export type EventLike = typeof globalThis extends { Event: { prototype: infer E } } ? E : {
  readonly type: string;
  readonly timeStamp: number;
  readonly defaultPrevented: boolean;
  preventDefault(): void;
  stopPropagation(): void;
  stopImmediatePropagation(): void;
};

/**
 * The web platform's `EventTarget`, as far as {@link PoolEvents} extends it (typed structurally, as
 * {@link EventLike}).
 *
 * @example Usage
 * ```ts
 * import type { EventTargetLike } from "@filch/filch";
 * import { PoolEvents } from "@filch/filch";
 * const target: EventTargetLike = new PoolEvents();
 * console.log(typeof target.dispatchEvent); // function
 * ```
 */
export interface EventTargetLike {
  /** Adds a listener. */
  addEventListener(type: string, listener: unknown, options?: unknown): void;
  /** Removes a listener. */
  removeEventListener(type: string, listener: unknown, options?: unknown): void;
  /** Dispatches an event to the listeners of its type. */
  dispatchEvent(event: EventLike): boolean;
}

/**
 * The options of {@link PoolEvents.addEventListener} (those of any `EventTarget`).
 *
 * @example Usage
 * ```ts
 * import { PoolEvents, type PoolListenerOptions } from "@filch/filch";
 * const options: PoolListenerOptions = { once: true, signal: AbortSignal.timeout(1_000) };
 * new PoolEvents().addEventListener("drain", (event) => console.log(event.detail.completed), options);
 * ```
 */
export interface PoolListenerOptions {
  /** Removed after its first call. */
  once?: boolean;
  /** Removed when this signal aborts. */
  signal?: AbortSignalLike;
  /** Accepted for the `EventTarget` signature; the pool's events have no phases. */
  capture?: boolean;
  /** Accepted for the `EventTarget` signature. */
  passive?: boolean;
}

/**
 * Each event's type, and what its {@link PoolEvent.detail} holds.
 *
 * @example Usage
 * ```ts
 * import type { PoolEventMap } from "@filch/filch";
 * const onDied = (event: PoolEventMap["workerdied"]) => console.log(event.detail.worker, event.detail.error.message);
 * console.log(typeof onDied); // function
 * ```
 */
export interface PoolEventMap {
  /**
   * Every task submitted through the pool in this thread has settled (none pending, none queued), after
   * some were: piscina's `drain`. Tasks of producers in other threads are not counted (their settling
   * happens in their threads). `completed`: the pool's own tasks settled so far.
   */
  drain: PoolEvent<"drain", { completed: number }>;
  /**
   * A worker loaded the task module and is ready: each of the first workers (while `Pool.create` runs),
   * and each replacement (`replacement: true`; a `workerreplaced` follows). piscina's `workerCreate`.
   */
  workeronline: PoolEvent<"workeronline", { worker: number; replacement: boolean }>;
  /**
   * A worker died after it was ready: its thread crashed or exited (`forced: false`; `stats().workerCrashes`),
   * or the pool killed it to force a task's abort (`forced: true`; `stats().forcedKills`). Its tasks were
   * repaired (requeued or rejected, see docs/reliability.md) before this event; a replacement is starting.
   * piscina's `workerDestroy`.
   */
  workerdied: PoolEvent<"workerdied", { worker: number; error: Error; forced: boolean }>;
  /** The replacement of a dead worker is ready, on the same index and deque. */
  workerreplaced: PoolEvent<"workerreplaced", { worker: number }>;
  /**
   * With the `recycle` option: a worker that ran `afterTasks` tasks (`reason: "tasks"`) or passed `heapMB`
   * (`"heap"`) left between tasks, and its replacement is ready on the same index and deque (a
   * `workeronline` with `replacement: true` comes first; `stats().workersRecycled`). Nothing was rejected.
   */
  workerrecycled: PoolEvent<"workerrecycled", { worker: number; reason: "tasks" | "heap" }>;
  /**
   * With `maxQueue`: a submission through the pool in this thread found the pool's pending tasks (every
   * producer's) at the bound, `maxPending` (`workers + maxQueue`): submissions reject with
   * `QueueFullError` until there is room. piscina's `needsDrain`, poolifier's `backPressure`.
   */
  queuefull: PoolEvent<"queuefull", { pending: number; maxPending: number }>;
  /** With `maxQueue`: after a `queuefull`, the pool's pending tasks fell under the bound again. */
  queueroom: PoolEvent<"queueroom", { pending: number; maxPending: number }>;
  /** `close()` finished: every submitted task settled (or `close`'s timeout terminated the rest) and the workers exited. */
  close: PoolEvent<"close", Record<never, never>>;
  /**
   * The pool was terminated (`terminate()`, or `close({ timeout })` when the time ran out): every task not
   * settled then rejected with `PoolTerminatedError`, `rejected` of them in this thread. `why` says which.
   */
  terminate: PoolEvent<"terminate", { why: string; rejected: number }>;
}

/**
 * The type of a pool event: a key of {@link PoolEventMap}.
 *
 * @example Usage
 * ```ts
 * import type { PoolEventType } from "@filch/filch";
 * const watched: PoolEventType[] = ["workerdied", "workerreplaced"];
 * console.log(watched.length); // 2
 * ```
 */
export type PoolEventType = keyof PoolEventMap;

/**
 * The runtime's own `Event` class (every runtime the pool supports has one), typed structurally so that the
 * package's declarations need neither the DOM library nor `@types/node`: the base of {@link PoolEvent}.
 * (A named constant rather than an expression in the `extends` clause: JSR's fast check reads that clause
 * only as an identifier, and `deno doc` wants the base public.)
 *
 * @example Usage
 * ```ts
 * import { RuntimeEvent } from "@filch/filch";
 * console.log(new RuntimeEvent("ping").type); // ping
 * ```
 */
export const RuntimeEvent: new (type: string) => EventLike =
  (globalThis as unknown as { Event: new (type: string) => EventLike }).Event;

/**
 * The runtime's own `EventTarget` class, typed structurally as {@link RuntimeEvent} is: the base of
 * {@link PoolEvents}.
 *
 * @example Usage
 * ```ts
 * import { RuntimeEvent, RuntimeEventTarget } from "@filch/filch";
 * const target = new RuntimeEventTarget();
 * target.addEventListener("ping", () => console.log("pong"));
 * target.dispatchEvent(new RuntimeEvent("ping")); // pong
 * ```
 */
export const RuntimeEventTarget: new () => EventTargetLike =
  (globalThis as unknown as { EventTarget: new () => EventTargetLike }).EventTarget;

/**
 * An event of the pool: an `Event` with a typed `detail`.
 *
 * @example Usage
 * ```ts
 * import { PoolEvent } from "@filch/filch";
 * const event = new PoolEvent("workerreplaced", { worker: 1 });
 * console.log(event.type, event.detail.worker); // workerreplaced 1
 * ```
 */
export class PoolEvent<T extends string = string, D = unknown> extends RuntimeEvent {
  /** What happened (see {@link PoolEventMap}). */
  readonly detail: D;

  /**
   * Makes an event of `type` with `detail` (the pool makes them; a test or a wrapper may too).
   *
   * @param type The event's type.
   * @param detail Its detail.
   */
  constructor(type: T, detail: D) {
    super(type);
    this.detail = detail;
  }

  /** The event's type. */
  declare readonly type: T;
}

/**
 * A listener of events of type `K`: a function or an object with `handleEvent`.
 *
 * @example Usage
 * ```ts
 * import { type PoolEventListener, PoolEvents } from "@filch/filch";
 * const listener: PoolEventListener<"queuefull"> = (event) => console.log(event.detail.pending);
 * new PoolEvents().addEventListener("queuefull", listener);
 * ```
 */
export type PoolEventListener<K extends PoolEventType> =
  | ((event: PoolEventMap[K]) => void)
  | { handleEvent(event: PoolEventMap[K]): void };

/**
 * The pool's events (`pool.events`): an `EventTarget` whose `addEventListener` knows each type's detail.
 *
 * @example Usage
 * ```ts
 * import { PoolEvents } from "@filch/filch";
 * const events = new PoolEvents();
 * events.addEventListener("workerdied", (event) => console.log(event.detail.worker, event.detail.error.message));
 * ```
 */
export class PoolEvents extends RuntimeEventTarget {
  /** The types a listener was ever added for (the frequent events are skipped for the others). */
  private readonly heard = new Set<string>();

  /**
   * Adds a listener of `type` (as `EventTarget.addEventListener`).
   *
   * @param type The event's type (see {@link PoolEventMap}).
   * @param listener The listener.
   * @param options `once`, `signal`, … as for any `EventTarget`.
   */
  override addEventListener<K extends PoolEventType>(
    type: K,
    listener: PoolEventListener<K> | null,
    options?: boolean | PoolListenerOptions,
  ): void;
  /**
   * Adds a listener of any type (as `EventTarget.addEventListener`; the pool dispatches only its own).
   *
   * @param type The event's type.
   * @param listener The listener.
   * @param options `once`, `signal`, … as for any `EventTarget`.
   */
  override addEventListener(
    type: string,
    listener: unknown,
    options?: boolean | PoolListenerOptions,
  ): void;
  override addEventListener(
    type: string,
    listener: unknown,
    options?: boolean | PoolListenerOptions,
  ): void {
    this.heard.add(type);
    super.addEventListener(type, listener, options);
  }

  /**
   * Removes a listener of `type` (as `EventTarget.removeEventListener`).
   *
   * @param type The event's type.
   * @param listener The listener.
   * @param options `capture`, as it was added with.
   */
  override removeEventListener<K extends PoolEventType>(
    type: K,
    listener: PoolEventListener<K> | null,
    options?: boolean | PoolListenerOptions,
  ): void;
  /**
   * Removes a listener of any type (as `EventTarget.removeEventListener`).
   *
   * @param type The event's type.
   * @param listener The listener.
   * @param options `capture`, as it was added with.
   */
  override removeEventListener(
    type: string,
    listener: unknown,
    options?: boolean | PoolListenerOptions,
  ): void;
  override removeEventListener(
    type: string,
    listener: unknown,
    options?: boolean | PoolListenerOptions,
  ): void {
    super.removeEventListener(type, listener, options);
  }

  /**
   * Whether a listener of `type` was ever added (the pool skips the frequent events otherwise).
   *
   * @param type The event's type.
   * @returns `true` if one was.
   */
  heardOf(type: PoolEventType): boolean {
    return this.heard.has(type);
  }
}

/** The detail of an event of type `K`. */
type DetailOf<K extends PoolEventType> = PoolEventMap[K]["detail"];

/**
 * The queue of a pool's events: noted where they happen, dispatched later in one task, in order.
 *
 * @example Usage
 * ```ts
 * import { EventQueue, PoolEvents } from "./events.ts";
 * const events = new PoolEvents();
 * events.addEventListener("close", () => console.log("closed"));
 * new EventQueue(events).emit("close", {}); // "closed", in a later task
 * ```
 */
export class EventQueue {
  /** The target the events are dispatched on. */
  readonly target: PoolEvents;
  private readonly queued: EventLike[] = [];
  private scheduled = false;
  /** Until {@link EventQueue.release}: events are noted, not dispatched (while the pool is being created). */
  private held = false;

  /** @param target The target the events are dispatched on. */
  constructor(target: PoolEvents) {
    this.target = target;
  }

  /**
   * Notes that `type` happened, with `detail`; dispatches it in a later task. No user code runs here.
   *
   * @param type The event's type.
   * @param detail Its detail.
   */
  emit<K extends PoolEventType>(type: K, detail: DetailOf<K>): void {
    this.queued.push(new PoolEvent(type, detail));
    this.schedule();
  }

  /** Notes events without dispatching them until {@link EventQueue.release} (the pool's creation). */
  hold(): void {
    this.held = true;
  }

  /**
   * Dispatches the events noted while held, in a later task: after the code that awaited the pool's
   * creation added its listeners (it runs in the microtasks before that task).
   */
  release(): void {
    this.held = false;
    this.schedule();
  }

  private schedule(): void {
    if (this.scheduled || this.held || this.queued.length === 0) return;
    this.scheduled = true;
    setTimeout(() => this.flush(), 0);
  }

  /**
   * Whether an event of `type` would reach a listener now (for the frequent ones, skipped otherwise).
   *
   * @param type The event's type.
   * @returns `true` if a listener of it was ever added.
   */
  heard(type: PoolEventType): boolean {
    return this.target.heardOf(type);
  }

  /** Dispatches what was noted, in order; an event noted by a listener waits for the next task. */
  private flush(): void {
    this.scheduled = false;
    if (this.held) return;
    const batch = this.queued.splice(0);
    // dispatchEvent runs every listener and never throws: a listener's error is reported by the runtime.
    for (const event of batch) this.target.dispatchEvent(event);
  }
}
