/**
 * The owner: the side of the pool that only the thread that started the workers can be. It starts them,
 * notices their deaths and repairs what they held, replaces them, kills one to force an abort, broadcasts,
 * and closes and terminates the pool; it holds the lifecycle state ({@link PoolState}) and moves it
 * forward, never back.
 *
 * What it owns: the Worker objects (workforce.ts), the handling of deaths (worker_deaths.ts, recovery.ts),
 * the killer (the main side of protocol/kill_guard.ts), the broadcasts in flight (broadcast.ts), the
 * lifecycle, and its own producer (lib/producer/producer.ts), which it builds and serves as the producer's
 * {@link OwnerPort}. Its parts are built in dependency order, each passed its collaborators: the producer
 * (its port: this owner, which it calls only later), the workforce (its events: this owner, which forwards
 * them to parts built by then: no worker starts before {@link Owner.start}), the killer, the broadcaster,
 * the handling of deaths (given the workforce, built before it).
 *
 * Lifecycle: `close()` refuses new tasks, lets every submitted task settle, then stops the workers
 * cooperatively (lifecycle word + wake all; Deno cannot terminate a thread blocked in `Atomics.wait`);
 * with a `timeout`, tasks still unsettled then are terminated. `terminate()` rejects every unsettled task
 * with a `PoolTerminatedError` naming it and stops the workers. Once closed or terminated, the state
 * does not change again.
 *
 * Process lifetime: while tasks are pending a timer keeps the process alive (a pending `waitAsync` does
 * not); an idle open pool lets the process exit (worker threads are unref'd; see `runtime/thread.ts`).
 *
 * Threads: the thread that created the pool (usually the main thread).
 *
 * @module
 */

import { Broadcaster } from "./broadcast.ts";
import { mem } from "../protocol/atomics.ts";
import { Killer } from "../protocol/kill_guard.ts";
import {
  PoolClosedError,
  PoolTerminatedError,
  unknownTaskError,
  WorkerCrashedError,
  WorkerTeardownError,
} from "../errors.ts";
import { HANDLE_KIND, HANDLE_VERSION, type PoolHandle } from "../producer/handle.ts";
import { ProducerLinks, type SlotCounts } from "./links.ts";
import { ProducerDeaths } from "./producer_deaths.ts";
import { ControlWords, StatusWords } from "../protocol/layout.ts";
import type { PoolMemory } from "../protocol/memory.ts";
import type { PoolMetrics } from "../metrics.ts";
import type { Entry } from "../producer/ledger.ts";
import type { ResolvedOptions } from "../options.ts";
import type { OwnerPort } from "../producer/owner_port.ts";
import type { NoWorkersNote } from "../producer/owner_link.ts";
import { Producer } from "../producer/producer.ts";
import { cancelQueuedNodes } from "../graph/submit.ts";
import { Workforce, type WorkforceEvents } from "./workforce.ts";
import { WorkerDeaths } from "./worker_deaths.ts";
import { Recycler } from "./recycle.ts";
import { OwnerEvents } from "./pool_events.ts";
import { defaultWorkerUrl } from "../worker_url.ts";
import { type ElasticStats, Growth } from "./growth.ts";
import { ABSENT, RETIRING, Slots } from "../protocol/slots.ts";
import { EMPTY, RETRY, Stealer } from "../protocol/deque.ts";

import { PoolState, type PoolStateName } from "../lifecycle.ts";

/** What an owner is built from (lib/assemble.ts). */
export interface OwnerParts {
  /** The pool's memory, set up (protocol/memory.ts `PoolMemory.create`). */
  readonly memory: PoolMemory;
  /** The task module's URL. */
  readonly moduleUrl: string;
  /** The pool's options, resolved. */
  readonly options: ResolvedOptions;
  /** With the `metrics` option: the pool's metrics. */
  readonly metrics: PoolMetrics | undefined;
  /** When the pool was created (epoch ms), for the workers' metrics. */
  readonly since: number;
}

/** Counts a directed message in worker `index`'s mail word (a fixed pool's, where no worker retires). */
function countMail(memory: PoolMemory, index: number): true {
  mem.add(memory.status, index * StatusWords.count + StatusWords.mail, 1);
  return true;
}

/** Why a broadcast's arguments cannot move buffers (the end of the encoder's TypeError). */
const BROADCAST_MOVE_REFUSAL =
  "and a broadcast's arguments cannot be moved (every worker gets its own copy): pass it without move()";

/** The note for the producers in other threads that no worker is left (producer/owner_link.ts). */
function noWorkersNote(what: string, worker: number, cause: Error, permanent: boolean): NoWorkersNote {
  const url = (cause as { url?: unknown }).url;
  return {
    type: "no-workers",
    what,
    worker,
    cause: { name: cause.name, message: cause.message, ...(typeof url === "string" ? { url } : {}) },
    permanent,
  };
}

/** How long close() waits for workers to leave their loops before terminating their threads. */
const STOP_GRACE_MS = 2000;

/**
 * The owner of a pool's workers, and of its lifecycle.
 *
 * @example Usage
 * ```ts ignore
 * const owner = new Owner({ memory, moduleUrl, options, metrics: undefined, since: Date.now() });
 * await owner.start();
 * await owner.producer.run("add", [1, 2]);
 * await owner.close();
 * ```
 */
export class Owner implements OwnerPort, WorkforceEvents {
  /** The owner's own producer (the pool's `run`, `spawn`, … go to it). */
  readonly producer: Producer;
  /** The pool's events (`pool.events` is `events.queue.target`). */
  readonly events: OwnerEvents;
  private readonly workforce: Workforce;
  private readonly killer: Killer;
  private readonly broadcaster: Broadcaster;
  private readonly deaths: WorkerDeaths;
  private readonly recycler: Recycler;
  private readonly workers: number;
  private current: PoolStateName = PoolState.OPEN;
  private closing: Promise<void> | undefined;
  private stopped: Promise<void> | undefined;
  private nextDirected = 0;
  /** The producers in other threads: their handles and links. */
  private readonly links: ProducerLinks;
  /** The producers in other threads whose thread died: what the owner took back. */
  readonly producerDeaths: ProducerDeaths;
  private readonly memory: PoolMemory;
  private readonly maxPending: number;
  /** An elastic pool's slots and growth (growth.ts); undefined for a fixed pool. */
  private readonly elastic: { slots: Slots; growth: Growth; min: number; max: number } | undefined;

  /**
   * Builds the owner's parts and its producer; starts no worker (see {@link Owner.start}).
   *
   * @param parts The memory, the module, the options, the metrics.
   */
  constructor(parts: OwnerParts) {
    const { memory, moduleUrl, options, metrics, since } = parts;
    const { buffer, layout, arena, status } = memory;
    this.memory = memory;
    this.workers = memory.workers;
    const producer = new Producer({ memory, port: this, options, metrics });
    this.producer = producer;
    // The pool's events (lib/events.ts): noted by the parts below where things happen, dispatched later.
    this.events = new OwnerEvents(producer.ledger, producer.room);
    producer.ledger.watch = this.events;
    // What the owner's parts share with its producer, handles of this one thread: the task records, the
    // ledger (deaths settle tasks, broadcasts open entries), the injectors, the completion reader, the
    // registry of shared buffers.
    const { table, ledger, levels, reader, buffers } = producer.shared;
    const workforce = new Workforce(
      {
        name: options.name,
        moduleUrl,
        loadTimeout: options.loadTimeout,
        resourceLimits: options.resourceLimits,
        workerUrl: options.workerUrl ?? defaultWorkerUrl().href,
      },
      this,
      (index) => ({
        buffer,
        layout,
        index,
        moduleUrl,
        buffers: buffers.entries(),
        arena,
        asyncTasksPerWorker: options.asyncTasksPerWorker,
        workerData: options.workerData,
        recycle: options.recycle,
        metrics: metrics === undefined ? undefined : { since, histograms: metrics.histograms },
        ...(options.elastic === undefined
          ? {}
          : { elastic: { min: options.elastic.min, idleTimeout: options.elastic.idleTimeout } }),
      }),
    );
    this.workforce = workforce;
    // ---- an elastic pool (issue 49): its slots, its growth, and the owner's newWork that found nobody ----
    if (options.elastic !== undefined) {
      const { min, max } = options.elastic;
      const slots = new Slots(memory.control, memory.sleep.words, status, memory.workers);
      slots.initElastic(min, max);
      const growth = new Growth({
        slots,
        sleeping: () => memory.sleep.sleeping,
        queued: () => levels.queued,
        max,
        running: () => this.current === PoolState.OPEN || this.current === PoolState.CLOSING,
        start: async (index) => {
          await workforce.start(index);
          this.staffed();
          this.events.online(index, false);
        },
        failed: (index, error) => {
          // A starting slot takes directed tasks and broadcast parts (Slots.claimMail: its thread reads them
          // once loaded), which nothing will run now: they fail as a failed replacement's do.
          this.deaths.startFailed(index, error);
          ledger.report(error, "starting a worker");
          this.noWorkerLive(index, error);
        },
      });
      memory.sleep.onNobodyWoken = () => growth.due();
      this.elastic = { slots, growth, min, max };
    }
    this.killer = new Killer(
      status,
      (handle, worker) => table.runsOn(handle, worker),
      (worker, cause) => workforce.kill(worker, cause),
    );
    this.broadcaster = new Broadcaster({
      ledger,
      memory,
      post: (worker, message) => workforce.send(worker, message),
      isDead: (worker) => workforce.isDead(worker),
      resolveBuffer: buffers.resolve,
      errorClasses: options.errorClasses,
    });
    this.producerDeaths = new ProducerDeaths({
      memory,
      table,
      levels,
      running: () => this.current !== PoolState.TERMINATED && this.current !== PoolState.CLOSED,
    });
    this.links = new ProducerLinks(memory, table, {
      post: (worker, message) => workforce.send(worker, message),
      share: (id, sab) => {
        buffers.add(id, sab);
        workforce.share(id, sab);
      },
      kill: (worker, handle, cause) => this.killer.request(worker, handle, cause),
      buffers: () => buffers.entries(),
      report: (error, where) => ledger.report(error, where),
      grow: () => this.grow(),
    }, this.producerDeaths);
    this.maxPending = options.maxPending;
    this.deaths = new WorkerDeaths(
      {
        memory,
        table,
        ledger,
        levels,
        reader,
        broadcaster: this.broadcaster,
        workforce,
        shareBuffer: buffers.share,
      },
      () => this.current,
    );
    this.deaths.replaced = (index) => {
      this.staffed();
      this.events.online(index, true);
    };
    // An elastic pool's dead worker whose replacement failed: its slot given back (giveBack), as for a
    // growth start that fails (spec/Elastic.tla), so that the count is right and growth may use it.
    this.deaths.replaceFailed = (index, error) => {
      if (this.elastic === undefined) return this.noWorkersLeft(index, error);
      this.giveBack(index, error);
    };
    this.recycler = new Recycler({
      workforce,
      sleep: memory.sleep,
      state: () => this.current,
      recycled: (index, reason) => {
        this.staffed();
        this.events.recycled(index, reason);
      },
      failed: (index, error) => {
        // The directed tasks and broadcast parts kept for the replacement fail (worker_deaths.ts).
        this.deaths.startFailed(index, error);
        ledger.report(error, "(worker recycle)");
        // An elastic pool's slot given back, as a failed replacement's, whether other workers are live
        // or not (giveBack): no longer a worker to growth, posts and the counts.
        if (this.elastic === undefined) this.noWorkersLeft(index, error);
        else this.giveBack(index, error);
      },
    });
  }

  /**
   * Starts every worker and waits until each has loaded the task module; on a failure, stops them all.
   *
   * @returns Resolves when every worker is ready.
   * @throws {ModuleLoadError} If a worker cannot load the module.
   */
  async start(): Promise<void> {
    try {
      const first = this.elastic === undefined ? this.workers : this.elastic.min;
      const names = await Promise.all(Array.from({ length: first }, async (_, i) => {
        const names = await this.workforce.start(i);
        this.events.online(i, false);
        return names;
      }));
      this.producer.setTasks(names[0]);
      this.elastic?.growth.notePeak();
      this.events.queue.release();
    } catch (error) {
      this.moveTo(PoolState.TERMINATED);
      void this.stopWorkers(false);
      throw error;
    }
  }

  /** The pool's lifecycle state. */
  get lifecycle(): PoolStateName {
    return this.current;
  }

  /** Deaths counted so far: crashes, forced kills, and those that caught a worker inside a pool step. */
  get deathCounts(): {
    workerCrashes: number;
    forcedKills: number;
    deathsInSteps: number;
    producerDeaths: number;
    workersRecycled: number;
  } {
    const deaths = this.deaths;
    return {
      workersRecycled: this.recycler.count,
      workerCrashes: deaths.crashes,
      forcedKills: deaths.forcedKills,
      deathsInSteps: deaths.deathsInSteps + this.producerDeaths.inSteps,
      producerDeaths: this.producerDeaths.count,
    };
  }

  /**
   * The counts of each producer slot in another thread that holds or held a producer (see
   * `ProducerLinks.counts`).
   *
   * @returns One entry a slot, by slot.
   */
  producerCounts(): SlotCounts[] {
    return this.links.counts();
  }

  /**
   * Runs `task` with `args` once on every worker (see `Pool.broadcast`). The owner's, not a producer's:
   * parts go and results come back by message, and a worker's death fails its part (see broadcast.ts).
   *
   * @param task The task's name.
   * @param args Its arguments (encoded once, sent to each worker).
   * @returns The results, by worker index.
   */
  broadcast(task: string, args: unknown[]): Promise<unknown[]> {
    const producer = this.producer;
    producer.repairIfCut();
    if (this.current !== PoolState.OPEN) return Promise.reject(producer.closedError(task));
    const taskId = producer.taskId(task);
    if (taskId === undefined) return Promise.reject(unknownTaskError(task, producer.taskNames));
    let bytes: Uint8Array;
    try {
      // Runs the arguments' getters: user code.
      bytes = producer.encodeCopy(args, { refuse: BROADCAST_MOVE_REFUSAL });
    } catch (error) {
      return Promise.reject(error);
    }
    // A getter may have closed or terminated the pool meanwhile.
    if (this.current !== PoolState.OPEN) return Promise.reject(producer.closedError(task));
    const entries: Entry[] = [];
    const ledger = producer.ledger;
    // An elastic pool's broadcast goes to the workers it has now (a worker started later does not run it,
    // as a replacement does not): each claimed by its mail count, so that none retires before it reads it.
    const slots = this.elastic?.slots;
    let targets: number[] | undefined;
    if (slots !== undefined) {
      targets = [];
      for (let i = 0; i < this.workers; i++) if (!this.workforce.isDead(i) && slots.claimMail(i)) targets.push(i);
    }
    const parts = Array.from(
      { length: targets?.length ?? this.workers },
      () =>
        new Promise<unknown>((resolve, reject) => {
          entries.push(ledger.open(task, taskId, resolve, reject));
        }),
    );
    this.broadcaster.send(entries, taskId, bytes, targets);
    // Every worker, sleeping or about to: each one reads its messages before it sleeps again.
    this.memory.sleep.wakeAll();
    return Promise.all(parts);
  }

  /**
   * Closes the pool gracefully (see `Pool.close`).
   *
   * @param options `timeout`: the most ms to wait for submitted tasks (read after a cut submission's repair).
   * @returns Resolves when the workers have exited (or were stopped).
   * @throws {RangeError} (rejects) If `timeout` is not a non-negative number.
   */
  close(options: { timeout?: number }): Promise<void> {
    this.producer.repairIfCut();
    const timeout = options?.timeout;
    if (timeout !== undefined && (typeof timeout !== "number" || !(timeout >= 0))) {
      return Promise.reject(
        new RangeError(`Cannot close pool as 'timeout' must be a non-negative number of ms: received ${timeout}`),
      );
    }
    if (this.closing !== undefined) return this.closing;
    if (this.current === PoolState.TERMINATED) return this.stopped ?? Promise.resolve();
    this.moveTo(PoolState.CLOSING);
    this.closing = (async () => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const expired = timeout === undefined
        ? undefined
        : new Promise<"expired">((resolve) => (timer = setTimeout(() => resolve("expired"), timeout)));
      // Its own tasks, and those of its producers in other threads (which submit no more now).
      const settled = Promise.all([this.producer.ledger.drain(), this.links.quiet()]);
      const outcome = await Promise.race([settled, ...(expired ? [expired] : [])]);
      clearTimeout(timer);
      if (outcome === "expired" && this.current === PoolState.CLOSING) {
        this.terminateNow(`close() waited ${timeout} ms for it`);
      }
      if (this.current === PoolState.CLOSING) this.moveTo(PoolState.CLOSED);
      await this.stopWorkers(true);
      this.events.closed();
    })();
    return this.closing;
  }

  /**
   * Stops the pool now (see `Pool.terminate`).
   *
   * @returns Resolves when the workers have been told to stop and terminated.
   */
  terminate(): Promise<void> {
    this.producer.repairIfCut();
    if (this.current === PoolState.TERMINATED || this.current === PoolState.CLOSED) {
      return this.stopped ?? this.closing ?? Promise.resolve();
    }
    this.terminateNow("terminate() was called");
    return this.stopped!;
  }

  // ---- the producer's port ----

  /** The lifecycle state, as the producer reads it. */
  state(): PoolStateName {
    return this.current;
  }

  /** Posts a message to worker `worker` (if it is alive). */
  post(worker: number, message: unknown, transfer?: ArrayBuffer[]): void {
    this.workforce.send(worker, message, transfer);
    // An index whose start failed runs nothing posted to it: a directed task posted there (pickWorker's
    // fallback when no worker is live) fails as a dead worker's does; after this submission, not inside it.
    const directed = (message as { type?: string }).type === "directed";
    const failure = directed ? this.workforce.vacancy(worker) : undefined;
    if (failure !== undefined) queueMicrotask(() => this.deaths.startFailed(worker, failure));
    else if (directed && this.lastStartFailure !== undefined && this.elastic?.slots.state(worker) === ABSENT) {
      // An elastic pool left with no worker, where pickWorker could start none for it (growth.ts
      // `startNow`: a start in flight, or the pool stopping): its index has no thread, and the task is not
      // queued for any worker: it fails as the tasks queued did.
      const cause = this.lastStartFailure;
      queueMicrotask(() => this.noWorkerLive(worker, cause));
    }
  }

  /** Shares a SharedArrayBuffer with every worker. */
  shareBuffer(id: number, buffer: SharedArrayBuffer): void {
    this.workforce.share(id, buffer);
  }

  /** Kills `worker` once it is outside the pool's steps, unless task `handle` stops running there first. */
  kill(worker: number, handle: number, cause: Error): void {
    this.killer.request(worker, handle, cause);
  }

  /**
   * The next worker a task that moves buffers is posted to: live ones in turn (any, if none is). Its mail
   * word counts the message from here (the caller posts it): in an elastic pool, that count is what keeps
   * the worker from retiring meanwhile (protocol/slots.ts `claimMail`).
   */
  pickWorker(): number {
    const n = this.workers;
    const slots = this.elastic?.slots;
    for (let k = 0; k < n; k++) {
      const worker = (this.nextDirected + k) % n;
      if (
        !this.workforce.isDead(worker) &&
        (slots === undefined ? countMail(this.memory, worker) : slots.claimMail(worker))
      ) {
        this.nextDirected = (worker + 1) % n;
        return worker;
      }
    }
    // An elastic pool with no worker live or starting: one is started for it now, as a queued task's
    // submission grows the pool (growth.ts `startNow`); its slot is STARTING, which takes mail (its thread
    // reads it once loaded), and if the start fails, the task fails with it (growth's `failed`).
    if (slots !== undefined) {
      const started = this.elastic!.growth.startNow();
      if (started >= 0 && slots.claimMail(started)) {
        this.nextDirected = (started + 1) % n;
        return started;
      }
    }
    // Every worker is being replaced (killed, its death not yet handled): recovery rejects the task; or
    // none is left (their replacements failed to start): `post` rejects it.
    countMail(this.memory, this.nextDirected);
    return this.nextDirected;
  }

  // ---- the workforce's events ----

  /** A worker died after it was ready: its death is handled (repair, replacement). */
  died(index: number, cause: unknown, forced: boolean): void {
    const elastic = this.elastic;
    if (elastic !== undefined) {
      const state = elastic.slots.state(index);
      if (state === RETIRING || state === ABSENT) {
        // A death during a retirement (its teardown: user code), or after its RetireStoreAbsent: its count
        // and its size were undone and its deque and mail are empty (spec/Elastic.tla, RecoverStoreAbsent).
        // Not replaced: the retirement ends here, and the owner looks at growth.
        if (state === RETIRING && (this.current === PoolState.OPEN || this.current === PoolState.CLOSING)) {
          this.events.died(index, cause, forced);
        }
        elastic.slots.recoverStoreAbsent(index);
        this.broadcaster.workerDied(index, cause instanceof Error ? cause : new Error(String(cause)));
        this.retired(index);
        return;
      }
    }
    // (A death while the pool stops is not handled, nor told.)
    const told = this.current === PoolState.OPEN || this.current === PoolState.CLOSING;
    this.deaths.died(index, cause, forced);
    if (told) this.events.died(index, cause, forced);
    // An elastic pool looks at growth after a death too (spec/Elastic.tla): its replacement is one start,
    // and queued work may want more.
    this.elastic?.growth.due();
  }

  /** An elastic pool's worker retired (its slot ABSENT): counted, and the owner looks at growth. */
  retired(_index: number): void {
    const elastic = this.elastic;
    if (elastic === undefined) return;
    elastic.growth.retired++;
    elastic.growth.due();
  }

  /** An elastic pool's worker (or producer thread) found queued work and nobody asleep. */
  grow(): void {
    this.elastic?.growth.due();
  }

  /**
   * An elastic pool's worker counts: `undefined` for a fixed pool.
   *
   * @returns The current, peak, started and retired workers, and the bounds.
   */
  elasticCounts(): ElasticStats | undefined {
    const elastic = this.elastic;
    if (elastic === undefined) return undefined;
    const { growth, min, max } = elastic;
    const current = growth.current();
    return {
      min,
      max,
      current,
      peak: Math.max(growth.peak, current),
      started: growth.started,
      retired: growth.retired,
    };
  }

  /** A running worker passed a SharedArrayBuffer by reference: every producer registers it. */
  buffer(id: number, buffer: SharedArrayBuffer): void {
    this.producer.bufferArrived(id, buffer);
    this.links.bufferArrived(id, buffer);
  }

  /** A result payload came by message: the producer that waits for it takes it (here, or in its thread). */
  payload(handle: number, bytes: Uint8Array, moved: ArrayBuffer[] | undefined): void {
    if (!this.links.payloadArrived(handle, bytes, moved)) this.producer.payloadArrived(handle, bytes, moved);
  }

  // ---- producers in other threads ----

  /**
   * A handle from which another thread opens a producer (see `Pool.handle`).
   *
   * @returns The handle, with its port to transfer.
   * @throws {PoolClosedError} If the pool is not open ({@link PoolTerminatedError} if it was terminated).
   * @throws {RangeError} If the pool was created with `producers: 0`, or every producer slot is taken.
   */
  handle<M extends object>(): PoolHandle<M> {
    if (this.current !== PoolState.OPEN) {
      const message = `Cannot make a pool handle as the pool is ${this.current}: create a new pool`;
      throw this.current === PoolState.TERMINATED ? new PoolTerminatedError(message) : new PoolClosedError(message);
    }
    const { buffer, arena, layout } = this.memory;
    if ((layout.shape.producers ?? 0) === 0) {
      throw new RangeError(
        "Cannot make a pool handle as the pool has no producer slots: create it with a 'producers' option of 1 or more",
      );
    }
    const { port, slot, lifeline } = this.links.open();
    return {
      kind: HANDLE_KIND,
      version: HANDLE_VERSION,
      buffer,
      arena,
      layout, // plain data: posting the handle copies it
      tasks: [...this.producer.taskNames],
      slot,
      maxPending: this.maxPending,
      ...(lifeline === undefined ? {} : { lifeline }),
      ...(this.elastic === undefined ? {} : { elastic: true as const }),
      port,
      transfer: [port],
    };
  }

  /**
   * A task on a worker asked for a pool handle (`poolHandle()`): the handle, its port transferred, or the
   * name and message of the error {@link Owner.handle} threw (the worker rejects with them).
   */
  handleRequest(id: number, reply: (message: unknown, transfer?: Transferable[]) => void): void {
    let handle: PoolHandle<object>;
    try {
      handle = this.handle();
    } catch (error) {
      const { name, message } = error as Error;
      reply({ type: "handle-reply", id, error: { name, message } });
      return;
    }
    reply({ type: "handle-reply", id, handle }, handle.transfer as Transferable[]);
  }

  /** Worker `index` is due to be recycled: it leaves, and a replacement starts (recycle.ts). */
  recycleReady(index: number, reason: "tasks" | "heap"): void {
    this.recycler.ready(index, reason);
  }

  /** A leaving worker's teardown failed (worker/setup.ts): to `onError`, as a {@link WorkerTeardownError}. */
  teardownFailed(index: number, timedOut: boolean, cause: unknown): void {
    const why = timedOut
      ? "it did not finish in time (see docs/elastic.md)"
      : `it threw: ${cause instanceof Error ? cause.message : String(cause)}`;
    this.producer.ledger.report(
      new WorkerTeardownError(index, why, timedOut ? undefined : { cause }),
      "(worker teardown)",
    );
  }

  /** Moves the lifecycle forward, where the producers in other threads read it too. */
  private moveTo(state: PoolStateName): void {
    this.current = state;
    this.links.stateChanged(state);
  }

  /** A broadcast part finished on a worker. */
  broadcastResult(id: number, bytes: Uint8Array, failed: boolean): void {
    this.broadcaster.result(id, bytes, failed);
  }

  /**
   * A fixed pool's start on `index` failed (a dead or recycled worker's replacement): if no index has a
   * live or loading worker now (every one's start failed, and nothing starts on them again in a fixed
   * pool), nothing will ever run a task, so every task not yet settled and every later submission rejects
   * with a WorkerCrashedError whose cause is `error` (the last failed start), and onError is told once.
   * (An elastic pool grows again on the next submission: there a failed start gives its slot back.)
   */
  private noWorkersLeft(index: number, error: unknown): void {
    if (this.unstaffed || this.current === PoolState.CLOSED || this.current === PoolState.TERMINATED) return;
    for (let i = 0; i < this.workers; i++) if (this.workforce.vacancy(i) === undefined) return;
    this.unstaffed = true;
    const cause = error instanceof Error ? error : new Error(String(error));
    const what = "the pool has no worker left: every worker died or was recycled and its replacement " +
      "failed to start (see cause); close or terminate it and create a new pool";
    this.producer.rejectForNoWorkers((task) =>
      new WorkerCrashedError(`Cannot run task '${task}' as ${what}`, index, { cause })
    );
    this.producer.ledger.report(new WorkerCrashedError(`No task can run as ${what}`, index, { cause }), "(no workers)");
    // And the producers in other threads: their waiting tasks and later submissions too.
    this.links.noWorkers(noWorkersNote(what, index, cause, true));
  }
  /** Set once {@link Owner.noWorkersLeft} found no worker left. */
  private unstaffed = false;

  /**
   * An elastic pool's start on `index` failed (a growth start, a dead worker's replacement), its slot given
   * back: if no slot is live, starting or retiring now (every one ABSENT), no event will come that starts a
   * worker (a death's replacement, a retirement's end, a start's end all look at growth), so the tasks
   * waiting (queued, in the backlog, directed ones) would wait for ever. They reject with a
   * WorkerCrashedError whose cause is `error`, here and in every producer in another thread, and onError
   * is told once until a start succeeds again. Later submissions are admitted: they grow the pool again, at
   * growth's rate (a transient failure does not end the pool; a module that always fails is tried once
   * per submission that finds the pool empty, at least GROW_INTERVAL_MS apart).
   *
   * @returns Whether no worker was live or starting (and what waited was rejected).
   */
  private noWorkerLive(index: number, error: unknown): boolean {
    const elastic = this.elastic;
    if (elastic === undefined || (this.current !== PoolState.OPEN && this.current !== PoolState.CLOSING)) return false;
    for (let i = 0; i < this.workers; i++) if (elastic.slots.state(i) !== ABSENT) return false;
    const cause = error instanceof Error ? error : new Error(String(error));
    this.lastStartFailure = cause;
    const what = "the pool has no worker left: every start of a worker failed (see cause); a later " +
      "submission starts one again";
    this.producer.rejectForNoWorkers(
      (task) => new WorkerCrashedError(`Cannot run task '${task}' as ${what}`, index, { cause }),
      false,
    );
    // The graphs' queued nodes without an entry (roots and continuations nobody asked for): cancelled
    // before the producers in other threads hear of it (see cancelQueuedNodes).
    cancelQueuedNodes(this.producer.table);
    this.links.noWorkers(noWorkersNote(what, index, cause, false));
    if (!this.emptyTold) {
      this.emptyTold = true;
      this.producer.ledger.report(
        new WorkerCrashedError(`No task can run as ${what}`, index, { cause }),
        "(no workers)",
      );
    }
    return true;
  }
  /** Set when {@link Owner.noWorkerLive} told onError that no worker is left; cleared by a start that succeeds. */
  private emptyTold = false;
  /** The last start that left an elastic pool with no worker (the cause of a directed task posted then). */
  private lastStartFailure: Error | undefined = undefined;

  /**
   * An elastic pool's slot whose thread is gone and whose replacement failed to start (a dead or recycled
   * worker's): given back. Its deque's tasks go to the injector first, each into its own level's queue:
   * no thread owns that deque now (nothing pushes to it), and once the slot is ABSENT thieves skip it, so
   * a task left there would wait until a worker started on the index again (for ever, if none is needed).
   * The owner takes them as a thief does (a thief that races it wins or loses each by its compare-exchange).
   * Then the slot ABSENT and its size back (Slots.growRelease). With no worker live or starting then, what
   * waits rejects (noWorkerLive: a min worker's included, the moved tasks too), and the next submission
   * grows the pool again; else a sleeper is woken for the moved tasks (nobody asleep: the sleep protocol
   * tells growth) and growth looks (queued work may want the slot).
   *
   * @param index The slot.
   * @param error Why its start failed.
   */
  private giveBack(index: number, error: unknown): void {
    const { levels, table } = this.producer.shared;
    const stealer = new Stealer(this.memory.dequeRegion(index));
    let moved = 0;
    for (;;) {
      const handle = stealer.steal();
      if (handle === EMPTY) break;
      if (handle === RETRY) continue;
      levels.pushPatiently(handle, table.levelOf(handle));
      moved++;
    }
    this.elastic!.slots.growRelease(index);
    if (this.noWorkerLive(index, error)) return;
    if (moved > 0) this.memory.sleep.newWork();
    this.elastic!.growth.due();
  }

  /** A worker started (grown, or a replacement): the pool has a worker again. */
  private staffed(): void {
    this.emptyTold = false;
    this.lastStartFailure = undefined;
  }

  // ---- the end ----

  /** Rejects every unsettled task with a `PoolTerminatedError` naming it, and stops the workers. */
  private terminateNow(why: string): void {
    this.moveTo(PoolState.TERMINATED);
    this.producer.stopReading();
    const rejected = this.producer.ledger.pending;
    this.broadcaster.terminate(why);
    this.producer.rejectUnsettled(why);
    this.stopped = this.stopWorkers(false);
    this.events.terminated(why, rejected);
  }

  /** Tells the workers to stop and waits for them (a graceful stop lets them finish first). */
  private async stopWorkers(graceful: boolean): Promise<void> {
    this.killer.stop();
    mem.store(this.memory.control, ControlWords.lifecycle, 1); // spec: StopStoreLifecycle
    this.memory.sleep.wakeAll();
    await this.workforce.stop(graceful ? STOP_GRACE_MS : undefined);
    this.producer.dispose();
    this.links.closeAll();
  }
}
