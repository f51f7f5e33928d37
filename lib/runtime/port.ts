/**
 * The MessagePort adapter: one end of a MessageChannel as filch uses it, on every runtime.
 *
 * What it owns: the differences between the runtimes' MessagePorts that the link between a pool's owner
 * and a producer in another thread meets: how a port says it closed (a web `close` event on Deno, Bun and
 * browsers that have one; Node's `on("close")`), whether a port keeps its thread alive (`ref`/`unref`:
 * Node, Deno and Bun; browsers have none), and that a post on a port whose other end went away may throw.
 * Both ends of that link are a {@link LinkPort}: the owner's (owner/links.ts) and the producer's
 * (pool_producer.ts).
 *
 * Threads: the thread that holds the port (a port is used by one thread; its other end by another).
 *
 * @module
 */

/** The least a MessagePort is here, on every runtime (Node's, Deno's, Bun's and browsers' alike). */
export interface PortLike {
  /** Posts a message. */
  postMessage(message: unknown, transfer?: readonly unknown[]): void;
  /** Closes the port: no message is sent or received any more. */
  close(): void;
}

/** What a MessagePort may have besides {@link PortLike}, by runtime. */
interface RuntimePort extends PortLike {
  onmessage: ((event: { data: unknown }) => void) | null;
  addEventListener?: (type: string, listener: () => void) => void;
  on?: (type: string, listener: () => void) => void;
  unref?: () => void;
  ref?: () => void;
}

/**
 * One end of a link, its messages and its end delivered to the callbacks it listens with.
 *
 * @example Usage
 * ```ts
 * import { LinkPort } from "./port.ts";
 * const channel = new MessageChannel();
 * const a = new LinkPort(channel.port1);
 * const b = new LinkPort(channel.port2);
 * a.listen((data) => {
 *   console.log(data); // "hello"
 *   a.close();
 *   b.close();
 * }, () => {});
 * b.ref(); // keeps this thread alive until the answer (listen unref'd it)
 * b.postMessage("hello");
 * ```
 */
export class LinkPort implements PortLike {
  private readonly port: RuntimePort;

  /**
   * Wraps `port`; nothing is received until {@link LinkPort.listen}.
   *
   * @param port A MessagePort (one end of a MessageChannel, or one that came in a transfer list).
   */
  constructor(port: unknown) {
    this.port = port as RuntimePort;
  }

  /**
   * Listens: each message's data goes to `received`, and `ended` is called once the runtime says the port
   * closed (its other end was closed, or that end's thread ended, where the runtime reports it). The port
   * does not keep this thread alive (see {@link LinkPort.ref}).
   *
   * @param received Called with each message's data.
   * @param ended Called when the port closed.
   */
  listen(received: (data: unknown) => void, ended: () => void): void {
    const port = this.port;
    port.onmessage = (event) => received(event.data);
    if (typeof port.addEventListener === "function") port.addEventListener("close", ended);
    else port.on?.("close", ended);
    // An idle link does not keep the process alive (the pool does not either: runtime/thread.ts).
    port.unref?.();
  }

  /**
   * Posts a message.
   *
   * @param message The message.
   * @param transfer What it transfers.
   * @throws If the port is closed (see {@link LinkPort.send} for a post that may find it so).
   */
  postMessage(message: unknown, transfer?: readonly unknown[]): void {
    if (transfer === undefined) this.port.postMessage(message);
    else this.port.postMessage(message, transfer);
  }

  /**
   * Posts a message if the port is still open: after the other end went away, nobody would act on it, and
   * it is dropped (the runtimes that throw then, throw here into nothing).
   *
   * @param message The message.
   */
  send(message: unknown): void {
    try {
      this.port.postMessage(message);
    } catch {
      // The port was closed: nobody is there to act on the message.
    }
  }

  /** Lets the port keep this thread alive (while an answer is awaited: nothing else may be left to do). */
  ref(): void {
    this.port.ref?.();
  }

  /** Closes the port. */
  close(): void {
    this.port.close();
  }
}
