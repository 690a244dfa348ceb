// Following a match (docs/api.md#turn-based-matches): its WebSocket pushes the events you may
// see, from `after` on; when it drops, the follower reads what it missed and opens a new one from
// the last sequence it delivered; when a socket cannot open at all, it long-polls the events
// endpoint instead. Every event is delivered once, in order. A socket closed because its access
// token expired (4001) is reopened with a renewed one; one closed because its session was revoked
// (4002) stops the follower with a 401.

import { CryptidError } from "./errors.js";
import type { components } from "./schema.js";
import { decodeMsgpack, parseJson } from "./wire.js";

export type WireEvent = components["schemas"]["WireEvent"];
export type EventBatch = components["schemas"]["EventBatch"];
export type Ticket = components["schemas"]["TicketState"];

/** The part of the WebSocket API the follower uses: the browser's, Node 22's or `ws`'s. */
export interface WebSocketLike {
  binaryType: string;
  onopen: ((event: any) => void) | null;
  onmessage: ((event: { data: unknown }) => void) | null;
  onclose: ((event: any) => void) | null;
  onerror: ((event: any) => void) | null;
  close(code?: number, reason?: string): void;
}

export type WebSocketConstructor = new (url: string) => WebSocketLike;

export interface FollowOptions {
  /** Deliver the events after this sequence (0: from the start). */
  after?: number;
  /** Each batch of new events, in order; the next waits until the promise it returns settles. */
  onBatch: (batch: EventBatch) => void | Promise<void>;
  /** One of your matchmaking tickets was matched (sent on an open socket only). */
  onMatched?: (ticket: Ticket) => void;
  /** The follower stopped on an error: `done` rejects with it too. */
  onError?: (error: unknown) => void;
}

export interface FollowHandle {
  /** Stop following. `done` resolves. */
  close(): void;
  /** Settles when the match is over and its last events were delivered, or on close(). */
  readonly done: Promise<void>;
  /** The last sequence delivered. */
  readonly lastSeq: number;
  /** How events arrive now: "socket", "poll" (the socket could not open), or "closed". */
  readonly transport: "socket" | "poll" | "closed";
}

export interface FollowDeps {
  WebSocket: WebSocketConstructor | undefined;
  /**
   * The socket's address from `after` on, with an access token; `expired`: the service closed
   * the last socket because its token expired (4001), so renew that token rather than reuse it.
   */
  socketUrl(after: number, expired: boolean): Promise<string>;
  poll(after: number, wait: number, signal: AbortSignal): Promise<EventBatch>;
  sleep(ms: number): Promise<void>;
}

/** The long-poll's wait, in seconds (the service allows at most 30). */
export const POLL_WAIT_SECONDS = 25;
/** Waits before reopening a dropped socket, by drops since one last delivered a frame. */
const RECONNECT_MS = [0, 500, 1000, 2000, 4000, 8000];

const OVER = new Set(["finished", "expired"]);

/** The service closed the socket: its access token expired (refresh it, then reconnect). */
export const CLOSE_TOKEN_EXPIRED = 4001;
/** The service closed the socket: its session was revoked (signed out, deleted): sign in again. */
export const CLOSE_SESSION_REVOKED = 4002;

export function follow(deps: FollowDeps, options: FollowOptions): FollowHandle {
  return new Follower(deps, options);
}

class Follower implements FollowHandle {
  lastSeq: number;
  transport: "socket" | "poll" | "closed" = "socket";
  readonly done: Promise<void>;
  private status: string | null = null;
  private socket: WebSocketLike | null = null;
  private drops = 0;
  private chain: Promise<void> = Promise.resolve();
  private readonly abort = new AbortController();
  private resolve!: () => void;
  private reject!: (error: unknown) => void;

  constructor(
    private readonly deps: FollowDeps,
    private readonly options: FollowOptions,
  ) {
    this.lastSeq = options.after ?? 0;
    this.done = new Promise<void>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    // `done` may go unawaited: its rejection is also given to onError, and is not unhandled.
    this.done.catch(() => undefined);
    if (deps.WebSocket === undefined) this.then(() => this.pollUntilOver());
    else this.then(() => this.open());
  }

  close(): void {
    if (this.transport === "closed") return;
    this.transport = "closed";
    this.abort.abort();
    const socket = this.socket;
    this.socket = null;
    socket?.close(1000);
    this.resolve();
  }

  private get stopped(): boolean {
    return this.transport === "closed";
  }

  /** Runs `step` after every step queued before it: deliveries never overlap or reorder. */
  private then(step: () => Promise<void> | void): void {
    this.chain = this.chain.then(async () => {
      if (this.stopped) return;
      try {
        await step();
      } catch (error) {
        if (this.stopped) return;
        this.fail(error);
      }
    });
  }

  private fail(error: unknown): void {
    this.transport = "closed";
    this.abort.abort();
    this.socket?.close(1000);
    this.socket = null;
    this.options.onError?.(error);
    this.reject(error);
  }

  private async deliver(batch: EventBatch): Promise<void> {
    if (this.stopped) return;
    const fresh = batch.events.filter((event) => event.seq > this.lastSeq);
    const changed = batch.status !== this.status;
    this.status = batch.status;
    if (fresh.length > 0) this.lastSeq = fresh[fresh.length - 1]!.seq;
    this.lastSeq = Math.max(this.lastSeq, batch.last_seq);
    if (fresh.length > 0 || changed) await this.options.onBatch({ ...batch, events: fresh });
    if (OVER.has(batch.status)) this.finish();
  }

  private finish(): void {
    if (this.stopped) return;
    this.transport = "closed";
    const socket = this.socket;
    this.socket = null;
    socket?.close(1000);
    this.resolve();
  }

  private async open(expired = false): Promise<void> {
    const Socket = this.deps.WebSocket!;
    const url = await this.deps.socketUrl(this.lastSeq, expired);
    if (this.stopped) return;
    const socket = new Socket(url);
    socket.binaryType = "arraybuffer";
    this.socket = socket;
    this.transport = "socket";
    let opened = false;
    socket.onopen = () => {
      opened = true;
    };
    socket.onmessage = (event) => {
      if (this.socket !== socket) return;
      this.drops = 0; // a socket that works: the next drop is answered at once again
      let frame: unknown;
      try {
        frame = decodeFrame(event.data);
      } catch (error) {
        this.then(() => {
          throw error;
        });
        return;
      }
      if (frame === null || typeof frame !== "object") return;
      if ("matched" in frame) {
        this.options.onMatched?.((frame as { matched: Ticket }).matched);
      } else if ("events" in frame) {
        this.then(() => this.deliver(frame as EventBatch));
      }
    };
    socket.onerror = () => undefined; // a close always follows
    socket.onclose = (event: { code?: number; reason?: string } | undefined) => {
      if (this.socket !== socket) return;
      this.socket = null;
      const code = event?.code;
      if (code === CLOSE_SESSION_REVOKED) {
        // Signed out (here or everywhere), or the account deleted: nothing is read again, and
        // no session is renewed or made for it. The follower stops as a request would, on a 401.
        const reason = event?.reason || "the session was revoked: sign in again";
        this.then(() => {
          throw new CryptidError(401, "unauthorized", reason, { close_code: code });
        });
        return;
      }
      this.then(() => this.dropped(opened, code === CLOSE_TOKEN_EXPIRED));
    };
  }

  /**
   * The socket closed without our asking: read what was missed, then go on. `expired`: it was
   * closed because its access token expired (4001), and the next one opens with a renewed token.
   */
  private async dropped(opened: boolean, expired: boolean): Promise<void> {
    await this.deliver(await this.deps.poll(this.lastSeq, 0, this.abort.signal));
    if (this.stopped) return;
    if (!opened && !expired) {
      // The socket cannot open here (no WebSocket through this proxy, a handshake refused, as
      // the service refuses one past its cap with a 409 too_many_sockets): no socket is tried
      // again, the events are long-polled.
      await this.pollUntilOver();
      return;
    }
    const wait = RECONNECT_MS[Math.min(this.drops, RECONNECT_MS.length - 1)]!;
    this.drops += 1;
    if (wait > 0) await this.deps.sleep(wait);
    if (!this.stopped) await this.open(expired);
  }

  private async pollUntilOver(): Promise<void> {
    this.transport = "poll";
    while (!this.stopped) {
      await this.deliver(await this.deps.poll(this.lastSeq, POLL_WAIT_SECONDS, this.abort.signal));
    }
  }
}

function decodeFrame(data: unknown): unknown {
  if (typeof data === "string") return parseJson(data);
  if (data instanceof ArrayBuffer || ArrayBuffer.isView(data)) {
    return decodeMsgpack(data as ArrayBuffer | Uint8Array);
  }
  throw new Error("a WebSocket frame neither text nor binary");
}
