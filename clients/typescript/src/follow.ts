// Following a match (docs/api.md#turn-based-matches): its WebSocket pushes the events you may
// see, from `after` on; when it drops, the follower reads what it missed and opens a new one from
// the last sequence it delivered; when a socket cannot open at all, it long-polls the events
// endpoint instead. Every event is delivered once, in order.

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
  socketUrl(after: number): Promise<string>;
  poll(after: number, wait: number, signal: AbortSignal): Promise<EventBatch>;
  sleep(ms: number): Promise<void>;
}

/** The long-poll's wait, in seconds (the service allows at most 30). */
export const POLL_WAIT_SECONDS = 25;
/** Waits before reopening a dropped socket, by drops since one last delivered a frame. */
const RECONNECT_MS = [0, 500, 1000, 2000, 4000, 8000];

const OVER = new Set(["finished", "expired"]);

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

  private async open(): Promise<void> {
    const Socket = this.deps.WebSocket!;
    const url = await this.deps.socketUrl(this.lastSeq);
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
    socket.onclose = () => {
      if (this.socket !== socket) return;
      this.socket = null;
      this.then(() => this.dropped(opened));
    };
  }

  /** The socket closed without our asking: read what was missed, then go on. */
  private async dropped(opened: boolean): Promise<void> {
    await this.deliver(await this.deps.poll(this.lastSeq, 0, this.abort.signal));
    if (this.stopped) return;
    if (!opened) {
      // The socket cannot open here (no WebSocket through this proxy, a refused handshake…).
      await this.pollUntilOver();
      return;
    }
    const wait = RECONNECT_MS[Math.min(this.drops, RECONNECT_MS.length - 1)]!;
    this.drops += 1;
    if (wait > 0) await this.deps.sleep(wait);
    if (!this.stopped) await this.open();
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
