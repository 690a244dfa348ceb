// The fetch that openapi-fetch calls: msgpack both ways, the bearer token, the Idempotency-Key of
// a write, retries, and the one refresh after a 401. Everything the README says under "Retries"
// is in `send` below.

import { CryptidError, errorOf } from "./errors.js";
import { MSGPACK, decodeMsgpack, parseJson } from "./wire.js";

export interface RetryPolicy {
  /** Tries in all for one request, the first included. */
  attempts: number;
  /** The wait before the first retry; it doubles for each retry after it. */
  baseDelayMs: number;
  /** The doubling stops here. */
  maxDelayMs: number;
  /** A `Retry-After` longer than this is not waited for: the error is thrown at once. */
  maxRetryAfterMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = {
  attempts: 5,
  baseDelayMs: 250,
  maxDelayMs: 8000,
  maxRetryAfterMs: 30000,
};

/** How the transport asks for a token and for a new one after a 401 (see session.ts). */
export interface Authenticator {
  token(): Promise<string>;
  /** Called with the token a 401 refused; resolves to the token to retry with. */
  renew(refused: string): Promise<string>;
}

export interface TransportOptions {
  fetch: typeof globalThis.fetch;
  retry: RetryPolicy;
  sleep: (ms: number) => Promise<void>;
  random: () => number;
  newKey: () => string;
  auth: Authenticator | null;
}

const READS = new Set(["GET", "HEAD"]);

/**
 * A Response whose body was read and decoded here, so that msgpack's 64-bit integers stay exact:
 * openapi-fetch takes `json()` as the answer.
 */
class Decoded extends Response {
  constructor(
    private readonly value: unknown,
    source: Response,
    size: number,
  ) {
    const headers = new Headers(source.headers);
    headers.set("Content-Length", String(size));
    super(null, { status: source.status, statusText: source.statusText, headers });
  }

  override json(): Promise<any> {
    return Promise.resolve(this.value);
  }
}

function decodeBody(response: Response, bytes: Uint8Array): unknown {
  const type = (response.headers.get("Content-Type") ?? "").split(";")[0]?.trim();
  if (bytes.length === 0) return undefined;
  if (type === MSGPACK || type === "application/x-msgpack") return decodeMsgpack(bytes);
  if (type === "application/json") return parseJson(new TextDecoder().decode(bytes));
  return new TextDecoder().decode(bytes);
}

function retryAfterMs(response: Response): number | null {
  const header = response.headers.get("Retry-After");
  if (header === null) return null;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(header);
  return Number.isNaN(date) ? null : Math.max(0, date - Date.now());
}

function isAbort(error: unknown): boolean {
  return error instanceof Error && (error.name === "AbortError" || error.name === "TimeoutError");
}

/** The backoff before retry number `retry` (1, 2, …): doubling, capped, plus up to 25 %. */
export function backoffMs(policy: RetryPolicy, retry: number, random: () => number): number {
  const plain = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (retry - 1));
  return plain + plain * 0.25 * random();
}

/** The fetch handed to openapi-fetch. */
export function transport(options: TransportOptions): (request: Request) => Promise<Response> {
  return (request) => send(options, request);
}

async function send(options: TransportOptions, request: Request): Promise<Response> {
  const { retry, auth } = options;
  const method = request.method.toUpperCase();
  const body = READS.has(method) ? undefined : new Uint8Array(await request.arrayBuffer());
  const headers = new Headers(request.headers);
  headers.set("Accept", MSGPACK);
  if (body !== undefined && body.length > 0) headers.set("Content-Type", MSGPACK);
  else headers.delete("Content-Type");
  // One key for the logical write, whatever number of tries it takes.
  if (!READS.has(method) && !headers.has("Idempotency-Key")) {
    headers.set("Idempotency-Key", options.newKey());
  }
  let token = auth === null ? null : await auth.token();
  let renewed = false;
  let attempt = 0;
  for (;;) {
    attempt += 1;
    if (token !== null) headers.set("Authorization", `Bearer ${token}`);
    let response: Response;
    let bytes: Uint8Array;
    try {
      response = await options.fetch(request.url, {
        method,
        headers,
        body: body === undefined || body.length === 0 ? undefined : body,
        signal: request.signal,
      });
      // The answer is read here: a connection lost while reading it is a lost answer too.
      bytes = new Uint8Array(await response.arrayBuffer());
    } catch (error) {
      if (isAbort(error) || attempt >= retry.attempts) throw error;
      await options.sleep(backoffMs(retry, attempt, options.random));
      continue;
    }
    if (response.ok) {
      let value: unknown;
      try {
        value = decodeBody(response, bytes);
      } catch {
        throw new CryptidError(response.status, "undecodable_answer", "the answer did not decode");
      }
      return new Decoded(value, response, bytes.length);
    }
    let decoded: unknown = null;
    try {
      decoded = decodeBody(response, bytes);
    } catch {
      // an error page that is not ours (a proxy's): errorOf names it by its status
    }
    const wait = retryAfterMs(response);
    const error = errorOf(
      response.status,
      decoded,
      wait === null ? null : wait / 1000,
      response.headers.get("X-Request-Id"),
    );
    if (response.status === 401 && auth !== null && token !== null && !renewed) {
      renewed = true;
      token = await auth.renew(token);
      attempt -= 1; // the try with the new token is not one of the attempts
      continue;
    }
    if ((response.status === 503 || response.status === 429) && attempt < retry.attempts) {
      if (wait !== null && wait > retry.maxRetryAfterMs) throw error;
      await options.sleep(wait ?? backoffMs(retry, attempt, options.random));
      continue;
    }
    throw error;
  }
}
