/**
 * Error values in the codec: what of an Error crosses threads, and how one is taken apart for the encoder
 * and put back together for the decoder. The bytes themselves (tag 0x0f, see format.ts) are written by
 * `encoder.ts` and read by `decoder.ts`, in the order of the flags below.
 *
 * What it owns: the error kinds (the standard constructors, by kind byte), the flags that say which
 * optional parts follow, the class registry's type ({@link ErrorClasses}), and the rules: an error keeps its
 * kind (the nearest standard constructor on its prototype chain), `name`, `message`, `stack`, `cause`, a
 * string or number `code`, an AggregateError's `errors`, its class's name, and its own enumerable data
 * fields (read through descriptors, never getters).
 *
 * Invariants: kind bytes and flags are part of the format (append only); a decoded error's `name`,
 * `stack` and fields are defined, never assigned (a field named `__proto__` stays a field), and it shows
 * the original's stack or none, never the decoding thread's.
 *
 * Threads: any.
 *
 * @module
 */

// Flags of an Error's payload: which optional fields follow, in this order.
/** A Str `stack` follows. */
export const ERROR_HAS_STACK = 1;
/** A `cause` value follows (the property exists, even if it is undefined). */
export const ERROR_HAS_CAUSE = 2;
/** A `code` value (a string or number) follows. */
export const ERROR_HAS_CODE = 4;
/** An `errors` array follows (AggregateError). */
export const ERROR_HAS_ERRORS = 8;
/** A Str follows: the name of the error's class, a subclass of its standard kind (`class MyError extends Error`). */
export const ERROR_HAS_CLASS = 16;
/** Own fields follow: a 4-byte little-endian count, then for each a Str key and a value. */
export const ERROR_HAS_FIELDS = 32;
/** Every error flag. */
export const ERROR_FLAGS = 63;
/** An error's properties that its other parts carry: never sent as own fields. */
const ERROR_KEYS_CARRIED: ReadonlySet<string> = new Set(["name", "message", "stack", "cause", "code", "errors"]);

/**
 * The classes errors are decoded as, by class name: a decoded error whose class (or, failing that, whose
 * `name`) is registered gets that class's prototype, so that `instanceof` holds (see `decode`).
 */
export type ErrorClasses = ReadonlyMap<string, abstract new (...args: never[]) => Error>;

/** The standard error constructors, by kind byte; kind 0 is Error, and any other error is sent as Error. */
export const ERROR_CONSTRUCTORS: readonly ErrorConstructor[] = [
  Error,
  TypeError,
  RangeError,
  SyntaxError,
  ReferenceError,
  EvalError,
  URIError,
  AggregateError as unknown as ErrorConstructor,
];
/** The kind byte of AggregateError, whose constructor takes `errors` first. */
export const AGGREGATE_ERROR_KIND = 7;
const ERROR_PROTOTYPES: readonly object[] = ERROR_CONSTRUCTORS.map((c) => c.prototype);

/**
 * The kind byte of an error whose prototype is `proto`: its nearest standard prototype's, 0 (Error) if none.
 *
 * @param proto The error's prototype.
 * @returns The kind byte.
 */
export function errorKind(proto: object): number {
  for (let p: object | null = proto; p !== null; p = Object.getPrototypeOf(p)) {
    const k = ERROR_PROTOTYPES.indexOf(p);
    if (k >= 0) return k;
  }
  return 0;
}

/**
 * The name of an error's own class when it is a subclass of its standard kind (`class MyError extends
 * Error`), read through descriptors (never a getter); undefined for a standard error.
 *
 * @param proto The error's prototype.
 * @param kind Its kind byte ({@link errorKind}).
 * @returns The class name, or undefined.
 */
export function errorClassName(proto: object, kind: number): string | undefined {
  const ctor = Object.getOwnPropertyDescriptor(proto, "constructor")?.value;
  const ctorName = typeof ctor === "function" ? Object.getOwnPropertyDescriptor(ctor, "name")?.value : undefined;
  return typeof ctorName === "string" && ctorName !== "" && ctor !== ERROR_CONSTRUCTORS[kind] ? ctorName : undefined;
}

/**
 * The keys of an error's own enumerable fields that its other parts do not carry: the candidates to send
 * as fields (the encoder keeps those that are data properties and can cross).
 *
 * @param value The error.
 * @returns The keys, in property order.
 */
export function errorFieldKeys(value: Error): string[] {
  return Object.keys(value).filter((key) => !ERROR_KEYS_CARRIED.has(key));
}

/** The parts of an encoded error, as the decoder read them (see {@link makeError}). */
export interface ErrorParts {
  kind: number;
  name: string;
  message: string;
  flags: number;
  stack: string | undefined;
  cause: unknown;
  code: unknown;
  errors: unknown[] | undefined;
  className: string | undefined;
  /** Own fields, flat: key, value, key, value … */
  fields: unknown[] | undefined;
}

/**
 * Builds the decoded error from its parts: an instance of its standard kind with the original name, stack
 * (or none), cause, code and fields, given the prototype of a registered class when `classes` names its
 * class (or, failing that, its `name`).
 *
 * @param parts The parts read from the bytes.
 * @param classes The registered error classes, by name.
 * @returns The error.
 */
export function makeError(parts: ErrorParts, classes: ErrorClasses | undefined): Error {
  const { kind, name, message, flags, stack, cause, code, errors, className, fields } = parts;
  const options = (flags & ERROR_HAS_CAUSE) !== 0 ? { cause } : undefined;
  const error = kind === AGGREGATE_ERROR_KIND
    ? new AggregateError(errors ?? [], message, options)
    : new ERROR_CONSTRUCTORS[kind](message, options);
  if (error.name !== name) {
    Object.defineProperty(error, "name", { value: name, writable: true, enumerable: false, configurable: true });
  }
  if (stack !== undefined) {
    Object.defineProperty(error, "stack", { value: stack, writable: true, enumerable: false, configurable: true });
  } else {
    // The original had no string stack; do not show this thread's instead.
    Object.defineProperty(error, "stack", {
      value: undefined,
      writable: true,
      enumerable: false,
      configurable: true,
    });
  }
  if (code !== undefined) (error as { code?: unknown }).code = code;
  if (fields !== undefined) {
    // Own data properties, defined (never assigned: a key like "__proto__" stays a plain field).
    for (let i = 0; i < fields.length; i += 2) {
      Object.defineProperty(error, fields[i] as string, {
        value: fields[i + 1],
        writable: true,
        enumerable: true,
        configurable: true,
      });
    }
  }
  if (classes !== undefined) {
    const registered = classes.get(className ?? name) ?? (className !== undefined ? classes.get(name) : undefined);
    if (registered !== undefined) Object.setPrototypeOf(error, registered.prototype);
  }
  return error;
}
