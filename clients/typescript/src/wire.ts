// The wire: msgpack both ways, with 64-bit integers exact, and a JSON reader that keeps them exact
// too (a WebSocket opened by a browser cannot ask for msgpack, so its frames come as JSON text).
//
// An integer is a `number` when it is a safe integer (|n| ≤ 2^53 − 1) and a `bigint` otherwise,
// in both readers. `@msgpack/msgpack` with `useBigInt64` decodes every int64/uint64 as a bigint,
// and the server writes the smallest msgpack integer that holds a value, so values from 2^32 up
// arrive as 64-bit integers: they are turned back into numbers here when they are safe.

import { Decoder, Encoder } from "@msgpack/msgpack";

export const MSGPACK = "application/msgpack";

/** An integer that may not fit a double: seeds are 0 to 2^64 − 1. */
export type Int64 = number | bigint;

const encoder = new Encoder({ useBigInt64: true, ignoreUndefined: true });
const decoder = new Decoder({ useBigInt64: true });

const INT32_MIN = -0x80000000;
const UINT32_LIMIT = 0x100000000;

/**
 * Before encoding: with `useBigInt64`, @msgpack/msgpack writes a safe integer outside the 32-bit
 * range as a float64, which the server refuses where an integer is expected. Such numbers are
 * sent as 64-bit integers instead.
 */
function widen(value: unknown): unknown {
  if (typeof value === "number") {
    if (Number.isInteger(value) && (value >= UINT32_LIMIT || value < INT32_MIN)) {
      return BigInt(value);
    }
    return value;
  }
  if (Array.isArray(value)) return value.map(widen);
  if (value !== null && typeof value === "object" && !(value instanceof Uint8Array)) {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[key] = widen(item);
    return out;
  }
  return value;
}

/** After decoding: a bigint that is a safe integer becomes a number. */
function narrow(value: unknown): unknown {
  if (typeof value === "bigint") {
    return value <= BigInt(Number.MAX_SAFE_INTEGER) && value >= BigInt(Number.MIN_SAFE_INTEGER)
      ? Number(value)
      : value;
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = narrow(value[i]);
    return value;
  }
  if (value !== null && typeof value === "object" && !(value instanceof Uint8Array)) {
    const record = value as Record<string, unknown>;
    for (const key of Object.keys(record)) record[key] = narrow(record[key]);
    return record;
  }
  return value;
}

export function encodeMsgpack(value: unknown): Uint8Array {
  return encoder.encode(widen(value));
}

export function decodeMsgpack(bytes: ArrayBuffer | Uint8Array): unknown {
  return narrow(decoder.decode(bytes));
}

/**
 * JSON.parse, but an integer literal that is not a safe integer becomes a bigint (a seed of
 * 2^64 − 1 stays 18446744073709551615n, where JSON.parse would give 18446744073709552000).
 */
export function parseJson(text: string): unknown {
  let at = 0;
  const fail = (): never => {
    throw new SyntaxError(`bad JSON at position ${at}`);
  };
  const space = () => {
    while (at < text.length && " \t\n\r".includes(text[at] as string)) at++;
  };
  const literal = (word: string, value: unknown) => {
    if (text.startsWith(word, at)) {
      at += word.length;
      return value;
    }
    return fail();
  };
  const string = (): string => {
    const start = at;
    at++; // the opening quote
    while (at < text.length && text[at] !== '"') at += text[at] === "\\" ? 2 : 1;
    if (at >= text.length) fail();
    at++;
    return JSON.parse(text.slice(start, at)) as string;
  };
  const number = (): number | bigint => {
    const match = /^-?(?:0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(at, at + 400));
    if (match === null) return fail();
    at += match[0].length;
    const value = Number(match[0]);
    if (match[1] === undefined && match[2] === undefined && !Number.isSafeInteger(value)) {
      return BigInt(match[0]);
    }
    return value;
  };
  const value = (): unknown => {
    space();
    const c = text[at];
    if (c === "{") {
      at++;
      const out: Record<string, unknown> = {};
      space();
      if (text[at] === "}") {
        at++;
        return out;
      }
      for (;;) {
        space();
        if (text[at] !== '"') fail();
        const key = string();
        space();
        if (text[at] !== ":") fail();
        at++;
        out[key] = value();
        space();
        if (text[at] === ",") at++;
        else if (text[at] === "}") {
          at++;
          return out;
        } else fail();
      }
    }
    if (c === "[") {
      at++;
      const out: unknown[] = [];
      space();
      if (text[at] === "]") {
        at++;
        return out;
      }
      for (;;) {
        out.push(value());
        space();
        if (text[at] === ",") at++;
        else if (text[at] === "]") {
          at++;
          return out;
        } else fail();
      }
    }
    if (c === '"') return string();
    if (c === "t") return literal("true", true);
    if (c === "f") return literal("false", false);
    if (c === "n") return literal("null", null);
    return number();
  };
  const result = value();
  space();
  if (at !== text.length) fail();
  return result;
}
