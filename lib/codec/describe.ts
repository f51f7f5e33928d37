/**
 * How the codec names what it refuses: the path of a value inside the encoded one (`args[1].user.save`),
 * and short descriptions of a rejected object (`is an instance of class Point`) or of a bad argument's
 * type. Only the messages of errors are built here, and only when an error is thrown: while encoding, the
 * encoder records each step of the path as a segment (a kind and a key or position, in arrays it reuses),
 * and {@link pathText} turns them into text.
 *
 * What it owns: the segment kinds, the path's text (shortened in the middle when very deep), the
 * descriptions, and the list of what can cross ({@link SUPPORTED}) that rejections end with.
 *
 * Invariants: nothing here runs while an encoding succeeds (the encoder records segments, and text is made
 * only for an error); a path names the value as source text would reach it from the root, and a path deeper
 * than 48 segments shows its first and last 24 with the count of those left out.
 *
 * Threads: any (pure functions).
 *
 * @module
 */

// Path segments, recorded while encoding so that an error can name where it happened without building a
// string for every value that succeeds.
/** `.key` or `["key"]`: segment key is the property name. */
export const SEGMENT_PROPERTY = 0;
/** `[i]`: segment key is the index. */
export const SEGMENT_INDEX = 1;
/** A Map key: segment index is the entry's position. */
export const SEGMENT_MAP_KEY = 2;
/** A Map value: segment key is the entry's key, segment index its position. */
export const SEGMENT_MAP_VALUE = 3;
/** A Set element: segment index is its position. */
export const SEGMENT_SET_ELEMENT = 4;

/** What `encode` accepts besides primitives; named in its rejections. */
export const SUPPORTED = "only primitives, plain objects, arrays, Map, Set, Date, Error, typed arrays, DataView and " +
  "ArrayBuffer can cross threads";

/** Segments shown at each end of a shortened path (see {@link pathText}). */
const PATH_SHOWN = 24;

/**
 * The path of the value at `depth`, as source text (`args[1].user.save`): the root's name, then each
 * segment from depth 1 on.
 *
 * @param root How the root is named (`"args"`, `"result"`).
 * @param depth The value's depth.
 * @param kinds Each depth's segment kind (SEGMENT_*).
 * @param keys Each depth's property name, index or Map key.
 * @param indexes Each depth's position of a Map entry or Set element.
 * @returns The text.
 */
export function pathText(
  root: string,
  depth: number,
  kinds: readonly number[],
  keys: readonly unknown[],
  indexes: readonly number[],
): string {
  let text = root;
  for (let d = 1; d <= depth; d++) {
    // A very deep path is shortened in the middle, so that an error message stays readable.
    if (depth > 2 * PATH_SHOWN && d === PATH_SHOWN + 1) {
      text += `…(${depth - 2 * PATH_SHOWN} more)…`;
      d = depth - PATH_SHOWN;
    }
    const key = keys[d];
    switch (kinds[d]) {
      case SEGMENT_PROPERTY:
        text += /^[A-Za-z_$][\w$]*$/.test(key as string) ? `.${key as string}` : `[${JSON.stringify(key)}]`;
        break;
      case SEGMENT_INDEX:
        text += `[${key as number}]`;
        break;
      case SEGMENT_MAP_KEY:
        text += `.keys()[${indexes[d]}]`;
        break;
      case SEGMENT_MAP_VALUE:
        text += mapKeyText(key) ?? `.values()[${indexes[d]}]`;
        break;
      case SEGMENT_SET_ELEMENT:
        text += `.values()[${indexes[d]}]`;
        break;
    }
  }
  return text;
}

/** `.get(key)` for a Map value whose key prints as a literal, else undefined. */
function mapKeyText(key: unknown): string | undefined {
  switch (typeof key) {
    case "string":
      return `.get(${JSON.stringify(key)})`;
    case "number":
    case "boolean":
    case "undefined":
      return `.get(${Object.is(key, -0) ? "-0" : String(key)})`;
    case "bigint":
      return `.get(${key}n)`;
    default:
      return key === null ? ".get(null)" : undefined;
  }
}

/** How a rejected object is named: `is a WeakMap`, `is an instance of class Point`. */
export function describeObject(value: object, proto: object): string {
  const tag = Object.prototype.toString.call(value).slice(8, -1);
  const ctor = Object.getOwnPropertyDescriptor(proto, "constructor")?.value;
  const ctorName = typeof ctor === "function" && typeof ctor.name === "string" ? ctor.name : "";
  if (ctorName !== "" && ctor.prototype === proto && (globalThis as Record<string, unknown>)[ctorName] !== ctor) {
    return `is an instance of class ${ctorName}`;
  }
  if (ctorName === "" && tag === "Object") return "is an object whose prototype is neither Object.prototype nor null";
  const name = ctorName !== "" ? ctorName : tag;
  if (name === "Number" || name === "String" || name === "Boolean" || name === "BigInt" || name === "Symbol") {
    return `is a boxed ${name.toLowerCase()} (a ${name} object)`;
  }
  if (name === "Array") return "is an object with Array.prototype as its prototype but not an array";
  return `is ${/^[AEIOU]/.test(name) ? "an" : "a"} ${name}`;
}

/** A short name for the type of a bad argument. */
export function describeType(value: unknown): string {
  if (value === null) return "null";
  if (typeof value === "object") return Array.isArray(value) ? "an array" : "an object";
  return typeof value;
}
