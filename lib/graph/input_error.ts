/**
 * The error of a task graph's node that never ran because an input of it (or an input of an input) failed.
 *
 * What it owns: the error class and its message's pattern. It is made on the thread that submitted the
 * graph (graph/graph.ts), from what the node's record carried back: the failed node's number and its error,
 * which becomes the `cause`. It never crosses threads itself.
 *
 * Threads: any.
 *
 * @module
 */

/**
 * A graph node was rejected without running: one of the nodes it depends on failed (its task threw, or its
 * worker died running it). `input` names the failed node, `cause` is its error.
 *
 * @example Usage
 * ```ts
 * import { GraphInputError } from "@filch/filch";
 * const error = new GraphInputError("merge", 3, 1, "parse", new SyntaxError("bad input"));
 * console.log(error.name, error.input, (error.cause as Error).message); // GraphInputError parse bad input
 * console.log(error.message);
 * // Cannot run node 3 ('merge') as its input node 1 ('parse') failed: SyntaxError: bad input
 * ```
 */
export class GraphInputError extends Error {
  /** The task of the failed node upstream. */
  readonly input: string;
  /** The failed node's number in its graph (from 1, in the order the graph made its nodes). */
  readonly inputNode: number;
  /** This node's number in its graph. */
  readonly node: number;

  /**
   * Creates the error.
   *
   * @param task This node's task.
   * @param node This node's number.
   * @param inputNode The failed node's number.
   * @param input The failed node's task.
   * @param cause The failed node's error.
   */
  constructor(task: string, node: number, inputNode: number, input: string, cause: unknown) {
    super(
      `Cannot run node ${node} ('${task}') as its input node ${inputNode} ('${input}') failed: ${describe(cause)}`,
      { cause },
    );
    this.name = "GraphInputError";
    this.input = input;
    this.inputNode = inputNode;
    this.node = node;
  }
}

/** An error's name and message, or the thrown value as a string. */
function describe(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  // An object's own toString is user code (it may throw): its tag instead.
  return typeof error === "object" && error !== null ? Object.prototype.toString.call(error) : String(error);
}
