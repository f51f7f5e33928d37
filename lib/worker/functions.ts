/**
 * The task functions a worker can run, by task id: the task module's exports (in the order of their sorted
 * names), then the built-in tasks of `chunk.ts`. A fork names its function (`taskId`), a record its id.
 *
 * What it owns: the id table, and the last function looked up (a recursive fork names the same one again
 * and again). Thread-private: no shared memory.
 *
 * Threads: made and used by its worker thread only (the loop, the runner, the fork-join host, the mail).
 *
 * @module
 */

import type { TaskFunction as ForkFunction } from "../forkjoin/host.ts";
import { BUILTINS } from "./chunk.ts";

/** A task function as the worker calls it. */
export type TaskFunction = (...args: unknown[]) => unknown;

/** This worker's task functions by id, and their ids. */
export class TaskFunctions {
  /** By task id: the module's functions, then the built-ins. */
  readonly all: TaskFunction[];
  /** Task id of each function (the module's exports, then the built-in tasks). */
  private readonly ids = new Map<ForkFunction, number>();
  private readonly builtinIds = new Map<string, number>();
  private lastForked: ForkFunction | undefined;
  private lastForkedId = -1;

  /**
   * This thread. Numbers the module's functions, then the built-ins.
   *
   * @param functions The task module's functions, in the order of their sorted names.
   */
  constructor(functions: TaskFunction[]) {
    this.all = [...functions];
    for (const [name, fn] of Object.entries(BUILTINS)) {
      this.builtinIds.set(name, this.all.length);
      this.all.push(fn as TaskFunction);
    }
    this.all.forEach((fn, id) => this.ids.set(fn as ForkFunction, id));
  }

  /** This thread. The task id of an exported (or built-in) task function; a TypeError for any other. */
  taskId(fn: ForkFunction): number {
    // A recursive fork names the same function again and again: skip the map for it.
    if (fn === this.lastForked) return this.lastForkedId;
    const id = this.ids.get(fn);
    if (id === undefined) {
      throw new TypeError(
        `Cannot fork '${fn.name || "anonymous"}' as it is not an exported function of the pool's task module: ` +
          "only exported functions can run on another worker (pass a closure as join's first argument instead)",
      );
    }
    this.lastForked = fn;
    this.lastForkedId = id;
    return id;
  }

  /** This thread. A built-in task of `chunk.ts`, by name. */
  builtin(name: string): ForkFunction {
    return this.all[this.builtinIds.get(name)!] as ForkFunction;
  }
}
