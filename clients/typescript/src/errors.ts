/**
 * An answer outside 2xx, as the service wrote it: `{"error": {"code", "message", "details"}}`
 * (docs/api.md#the-wire-contract), with the HTTP status. Branch on `code` (and, for a refused
 * action, on `details.reason`); show `message` to the player.
 */
export class CryptidError extends Error {
  readonly status: number;
  readonly code: string;
  readonly details: Record<string, unknown>;
  /** Seconds, from the `Retry-After` header of a 429 or a 503, when it had one. */
  readonly retryAfter: number | null;
  /** The `X-Request-Id` the service logged the request under. */
  readonly requestId: string | null;

  constructor(
    status: number,
    code: string,
    message: string,
    details: Record<string, unknown> = {},
    retryAfter: number | null = null,
    requestId: string | null = null,
  ) {
    super(message);
    this.name = "CryptidError";
    this.status = status;
    this.code = code;
    this.details = details;
    this.retryAfter = retryAfter;
    this.requestId = requestId;
  }
}

/** The error of an answer's decoded body, or a stand-in when the body is not the usual shape. */
export function errorOf(
  status: number,
  body: unknown,
  retryAfter: number | null,
  requestId: string | null,
): CryptidError {
  const error =
    body !== null && typeof body === "object" && "error" in body
      ? (body as { error: unknown }).error
      : null;
  if (error !== null && typeof error === "object") {
    const { code, message, details } = error as Record<string, unknown>;
    return new CryptidError(
      status,
      typeof code === "string" ? code : `http_${status}`,
      typeof message === "string" ? message : `HTTP ${status}`,
      details !== null && typeof details === "object" ? (details as Record<string, unknown>) : {},
      retryAfter,
      requestId,
    );
  }
  return new CryptidError(status, `http_${status}`, `HTTP ${status}`, {}, retryAfter, requestId);
}
