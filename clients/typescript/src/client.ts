// The client: openapi-fetch over the transport (transport.ts), one method per thing a game client
// does. Anything not wrapped here is at `client.api`, typed from the OpenAPI document.

import createFetchClient, { type Client } from "openapi-fetch";
import { type BattleReplay, type ReplayWire, withNamedEvents } from "./battles.js";
import { CryptidError } from "./errors.js";
import {
  type EventBatch,
  type FollowHandle,
  type FollowOptions,
  type Ticket,
  type WebSocketConstructor,
  follow,
} from "./follow.js";
import type { CryptidCatalogue } from "./resim.js";
import type { components, paths } from "./schema.js";
import { type Player, Sessions, type SignedIn } from "./session.js";
import { MemoryStorage, type SessionStorage } from "./storage.js";
import { DEFAULT_RETRY, type RetryPolicy, transport } from "./transport.js";
import { type Int64, MSGPACK, encodeMsgpack } from "./wire.js";

type Schemas = components["schemas"];
type Api = Client<paths, typeof MSGPACK>;
/** A type with its `seed` exact: a bigint when past 2^53. */
type Seeded<T> = Omit<T, "seed"> & { seed: Int64 };

export type Run = Schemas["Run"];
export type TurnResult = Schemas["TurnResult"];
export type Battle = Seeded<Schemas["Battle"]>;
export type SimulateRequest = Seeded<Schemas["SimulateRequest"]>;
export type SimulateAnswer = Omit<Seeded<Schemas["SimulateAnswer"]>, "replay"> & {
  replay?: BattleReplay;
};
export type MatchState = Schemas["MatchState"];
export type MatchList = Schemas["MatchList"];
export type Joined = Schemas["Joined"];
export type ActionDone = Schemas["ActionDone"];
export type MatchReplay = Seeded<Schemas["MatchReplay"]>;
export type Prompt = Schemas["Prompt"];
export type GameInfo = Schemas["GameInfo"];
export type GameCatalogue = Schemas["GameCatalogue"];
export type Me = Schemas["Me"];
export type { EventBatch, Ticket };

export interface ClientOptions {
  /** The service, e.g. "https://play.example"; in a browser "" (the default) is the page's origin. */
  baseUrl?: string;
  /** Where the device id and the refresh token are kept (default: a MemoryStorage). */
  storage?: SessionStorage;
  /** The fetch to use (default: the global one). */
  fetch?: typeof globalThis.fetch;
  /** The WebSocket constructor for follow() (default: the global one; in Node 20, `ws`'s). */
  WebSocket?: WebSocketConstructor;
  /** How requests are retried (see the README's "Retries"). */
  retry?: Partial<RetryPolicy>;
  /** The clock, in milliseconds, that access tokens' expiry is reckoned by (default: Date.now). */
  now?: () => number;
}

export interface Queued {
  match_id: string;
  seat: number;
  ticket: Ticket;
}

/** The shop moves of end-turn's `moves`. */
export type ShopMove = Schemas["EndTurn"]["moves"] extends (infer M)[] | undefined ? M : never;

function must<T>(result: { data?: T }): T {
  return result.data as T;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function newKey(): string {
  if (typeof crypto.randomUUID === "function") return crypto.randomUUID();
  // Outside a secure context (plain http but localhost) browsers have no randomUUID.
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

export function createClient(options: ClientOptions = {}): CryptidClient {
  return new CryptidClient(options);
}

export class CryptidClient {
  /** The typed client, signed in, for every endpoint: `client.api.GET("/v1/leaderboard", …)`. */
  readonly api: Api;
  private readonly anonymous: Api;
  private readonly sessions: Sessions;
  private readonly baseUrl: string;
  private readonly WebSocket: WebSocketConstructor | undefined;
  private readonly catalogues = new Map<string, Promise<unknown>>();

  constructor(options: ClientOptions = {}) {
    const retry = { ...DEFAULT_RETRY, ...options.retry };
    const fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
    const now = options.now ?? (() => Date.now());
    this.baseUrl = (options.baseUrl ?? "").replace(/\/+$/, "");
    this.WebSocket =
      options.WebSocket ??
      (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket ??
      undefined;
    const common = { fetch, retry, sleep, random: Math.random, newKey };
    const make = (send: (request: Request) => Promise<Response>): Api =>
      createFetchClient<paths, typeof MSGPACK>({
        baseUrl: this.baseUrl,
        fetch: send,
        bodySerializer: (body: unknown) => encodeMsgpack(body),
      });
    this.anonymous = make(transport({ ...common, auth: null }));
    this.sessions = new Sessions(
      options.storage ?? new MemoryStorage(),
      {
        device: async (device_id, name) => {
          const result = await this.anonymous.POST("/v1/auth/device", {
            body: name === undefined ? { device_id } : { device_id, name },
          });
          return { session: must(result), created: result.response.status === 201 };
        },
        refresh: async (refresh_token) =>
          must(await this.anonymous.POST("/v1/auth/refresh", { body: { refresh_token } })),
      },
      now,
    );
    this.api = make(transport({ ...common, auth: this.sessions }));
  }

  // -- sessions --------------------------------------------------------------------------------

  /**
   * Sign in with a device id (POST /v1/auth/device). Without `deviceId`, the one kept in storage
   * is used, else a new one is made and kept. `name` names a player made for a new device.
   */
  signInWithDevice(options: { deviceId?: string; name?: string } = {}): Promise<SignedIn> {
    return this.sessions.signInWithDevice(options);
  }

  /**
   * Sign out (POST /v1/auth/logout): this session, or with `everywhere` every session of yours.
   * Signing out everywhere needs a recent sign-in: it sends the kept refresh token, which proves
   * one however long ago this client signed in (see `recentSignIn`).
   * The refresh token is forgotten; the device id is kept, so signInWithDevice() signs in again.
   */
  async signOut(options: { everywhere?: boolean } = {}): Promise<number> {
    try {
      if (options.everywhere === true) {
        const signedOut = await this.recentSignIn((refresh_token) =>
          this.api.POST("/v1/auth/logout", { body: { everywhere: true, refresh_token } }),
        );
        return signedOut.sessions_revoked;
      }
      const body = { everywhere: false };
      return must(await this.api.POST("/v1/auth/logout", { body })).sessions_revoked;
    } catch (error) {
      if (error instanceof CryptidError && error.status === 401) return 0; // already gone
      throw error;
    } finally {
      await this.sessions.forget();
    }
  }

  /**
   * A change that needs a recent sign-in (docs/api.md, "A recent sign-in": an access token of the
   * last 10 minutes, or a live refresh token in the body), sent with the kept refresh token. The
   * token is renewed first when it is running out, as before any request, so that the refresh
   * token read is the one kept after it. Should the service still answer 403
   * `reauthentication_required` (that refresh token was used meanwhile, by another tab sharing
   * the storage), the session is renewed, which gives an access token issued now, and the change
   * is sent again, once.
   */
  private async recentSignIn<T>(
    send: (refreshToken: string | null) => Promise<{ data?: T }>,
  ): Promise<T> {
    const token = await this.sessions.token();
    try {
      return must(await send(await this.sessions.refreshToken()));
    } catch (error) {
      if (!(error instanceof CryptidError && error.code === "reauthentication_required")) {
        throw error;
      }
      await this.sessions.renew(token); // no refresh when a request renewed it meanwhile
      return must(await send(await this.sessions.refreshToken()));
    }
  }

  /** The player kept in storage, or null: no request is made. */
  player(): Promise<Player | null> {
    return this.sessions.player();
  }

  /**
   * The current access token, renewed first when it is running out (as before any request), for
   * what must send it itself: a page of the service that reads its own token, as `/watch` does.
   * Fails with 401 `not_signed_in` when no session is kept.
   */
  accessToken(): Promise<string> {
    return this.sessions.token();
  }

  /** GET /v1/players/me: you, your devices and your ratings. */
  async me(): Promise<Me> {
    return must(await this.api.GET("/v1/players/me"));
  }

  // -- runs: the autobattler -------------------------------------------------------------------

  readonly runs = {
    /** POST /v1/runs: a new run, in round 1's shop. */
    start: async (): Promise<Run> => must(await this.api.POST("/v1/runs")),
    list: async (): Promise<Schemas["RunList"]> => must(await this.api.GET("/v1/runs")),
    get: async (runId: string): Promise<Run> =>
      must(await this.api.GET("/v1/runs/{run_id}", { params: { path: { run_id: runId } } })),
    buy: async (runId: string, body: Schemas["Buy"]): Promise<Run> =>
      must(await this.api.POST("/v1/runs/{run_id}/buy", { params: this.run(runId), body })),
    sell: async (runId: string, body: Schemas["Sell"]): Promise<Run> =>
      must(await this.api.POST("/v1/runs/{run_id}/sell", { params: this.run(runId), body })),
    reroll: async (runId: string, body: Schemas["Reroll"] = {}): Promise<Run> =>
      must(await this.api.POST("/v1/runs/{run_id}/reroll", { params: this.run(runId), body })),
    freeze: async (runId: string, body: Schemas["Freeze"]): Promise<Run> =>
      must(await this.api.POST("/v1/runs/{run_id}/freeze", { params: this.run(runId), body })),
    /** Move cryptids (`order[i]` = the old position now at i) and pick their abilities. */
    arrange: async (runId: string, body: Schemas["Arrange"]): Promise<Run> =>
      must(await this.api.POST("/v1/runs/{run_id}/arrange", { params: this.run(runId), body })),
    abandon: async (runId: string, body: Schemas["Move"] = {}): Promise<Run> =>
      must(await this.api.POST("/v1/runs/{run_id}/abandon", { params: this.run(runId), body })),
    /**
     * A turn in one request: `moves` (buy, sell, reroll, freeze) are made first, in order, then
     * the battle is fought. Name the round you end (`round`), so that a retry never plays the
     * next one.
     */
    endTurn: async (runId: string, body: Schemas["EndTurn"]): Promise<TurnResult> =>
      must(await this.api.POST("/v1/runs/{run_id}/end-turn", { params: this.run(runId), body })),
  };

  private run(runId: string) {
    return { path: { run_id: runId } };
  }

  // -- battles ---------------------------------------------------------------------------------

  readonly battles = {
    get: async (battleId: number): Promise<Battle> =>
      must(
        await this.api.GET("/v1/battles/{battle_id}", {
          params: { path: { battle_id: String(battleId) } },
        }),
      ),
    /** The replay: its wire events (for verify()) and the same events named (`namedEvents`). */
    replay: async (battleId: number): Promise<BattleReplay> =>
      withNamedEvents(
        must(
          await this.api.GET("/v1/battles/{battle_id}/replay", {
            params: { path: { battle_id: String(battleId) } },
          }),
        ) as ReplayWire,
      ),
    /** POST /v1/battles/simulate: any two warbands, any seed (0 to 2^64 − 1, exact). */
    simulate: async (
      request: SimulateRequest,
      options: { replay?: boolean } = {},
    ): Promise<SimulateAnswer> => {
      const answer = must(
        await this.api.POST("/v1/battles/simulate", {
          params: { query: { replay: options.replay ?? true } },
          body: request as Schemas["SimulateRequest"],
        }),
      ) as unknown as Omit<SimulateAnswer, "replay"> & { replay?: ReplayWire };
      const { replay, ...rest } = answer;
      return replay === undefined ? rest : { ...rest, replay: withNamedEvents(replay) };
    },
  };

  // -- matches ---------------------------------------------------------------------------------

  readonly matches = {
    /** The lobby: matches waiting for players, newest first (`next` is the next page's cursor). */
    lobby: async (page: { limit?: number; cursor?: string } = {}): Promise<MatchList> =>
      must(await this.api.GET("/v1/matches", { params: { query: page } })),
    /** Your matches, the seat you took last first, with `asked`. */
    mine: async (page: { limit?: number; cursor?: string } = {}): Promise<MatchList> =>
      must(await this.api.GET("/v1/matches", { params: { query: { ...page, mine: true } } })),
    create: async (body: Schemas["NewMatch"]): Promise<Joined> =>
      must(await this.api.POST("/v1/matches", { body })),
    join: async (matchId: string, body: Schemas["JoinMatch"] = {}): Promise<Joined> =>
      must(
        await this.api.POST("/v1/matches/{match_id}/join", { params: this.match(matchId), body }),
      ),
    /** The match as your seat sees it: `version`, `prompt`, `view`, `to_act`, `outcome`. */
    get: async (matchId: string): Promise<MatchState> =>
      must(await this.api.GET("/v1/matches/{match_id}", { params: this.match(matchId) })),
    /** Answer your prompt, sending the `version` you were shown. */
    act: async (matchId: string, body: Schemas["NewAction"]): Promise<ActionDone> =>
      must(
        await this.api.POST("/v1/matches/{match_id}/actions", {
          params: this.match(matchId),
          body,
        }),
      ),
    resign: async (matchId: string): Promise<ActionDone> =>
      must(await this.api.POST("/v1/matches/{match_id}/resign", { params: this.match(matchId) })),
    prefer: async (matchId: string, preferences: Record<string, unknown>): Promise<ActionDone> =>
      must(
        await this.api.PUT("/v1/matches/{match_id}/preferences", {
          params: this.match(matchId),
          body: { preferences },
        }),
      ),
    /** One long-poll of the events after `after` (waiting up to `wait` seconds, at most 30). */
    events: async (
      matchId: string,
      query: { after?: number; wait?: number } = {},
      signal?: AbortSignal,
    ): Promise<EventBatch> =>
      must(
        await this.api.GET("/v1/matches/{match_id}/events", {
          params: { ...this.match(matchId), query },
          signal,
        }),
      ),
    /** A finished match: its seed, loadouts, action log and every event revealed. */
    replay: async (matchId: string): Promise<MatchReplay> =>
      must(
        await this.api.GET("/v1/matches/{match_id}/replay", { params: this.match(matchId) }),
      ),
    /**
     * Follow a match's events over its WebSocket from `after` on, resuming from the last
     * sequence delivered after a drop, with the long-poll when no socket can open.
     */
    follow: (matchId: string, options: FollowOptions): FollowHandle => {
      // The token of the last socket opened: the one to renew when the service closes it 4001.
      let token: string | null = null;
      return follow(
        {
          WebSocket: this.WebSocket,
          socketUrl: async (after, expired) => {
            // Renewed when running out, as for any request; and after a 4001 even when this
            // client's clock says it is not (a request may have renewed it meanwhile: then not).
            let current = await this.sessions.token();
            if (expired && current === token) current = await this.sessions.renew(current);
            token = current;
            return this.socketUrl(matchId, after, current);
          },
          poll: (after, wait, signal) => this.matches.events(matchId, { after, wait }, signal),
          sleep,
        },
        options,
      );
    },
  };

  private match(matchId: string) {
    return { path: { match_id: matchId } };
  }

  private socketUrl(matchId: string, after: number, token: string): string {
    const origin = (globalThis as { location?: { href: string } }).location?.href;
    const url = new URL(`${this.baseUrl}/v1/matches/${encodeURIComponent(matchId)}/ws`, origin);
    url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
    url.searchParams.set("after", String(after));
    url.searchParams.set("token", token);
    return url.toString();
  }

  // -- the matchmaking queue -------------------------------------------------------------------

  readonly matchmaking = {
    /**
     * Queue a ticket and wait until it is matched: resolves to the match and your seat. A
     * cancelled ticket rejects with a CryptidError `ticket_cancelled`; so does an aborted
     * `signal`, after cancelling the ticket.
     */
    queue: async (
      request: Schemas["NewTicket"],
      options: { onTicket?: (ticket: Ticket) => void; signal?: AbortSignal } = {},
    ): Promise<Queued> => {
      let ticket = must(await this.api.POST("/v1/matchmaking/tickets", { body: request }));
      options.onTicket?.(ticket);
      const path = { ticket_id: ticket.ticket_id };
      while (ticket.status === "searching") {
        if (options.signal?.aborted) {
          ticket = await this.matchmaking.cancelTicket(ticket.ticket_id).catch(async (error) => {
            // Matched meanwhile: the match is yours after all.
            if (error instanceof CryptidError && error.code === "ticket_not_searching") {
              return this.matchmaking.ticket(ticket.ticket_id);
            }
            throw error;
          });
          break;
        }
        ticket = must(
          await this.api
            .GET("/v1/matchmaking/tickets/{ticket_id}", {
              params: { path, query: { wait: 25 } },
              signal: options.signal,
            })
            .catch((error) => {
              if (options.signal?.aborted) return { data: ticket };
              throw error;
            }),
        );
      }
      if (ticket.status === "matched" && ticket.match_id !== null && ticket.seat !== null) {
        return { match_id: ticket.match_id, seat: ticket.seat, ticket };
      }
      throw new CryptidError(409, "ticket_cancelled", `the ticket was ${ticket.status}`, {
        ticket_id: ticket.ticket_id,
        status: ticket.status,
      });
    },
    /** Read a ticket now. */
    ticket: async (ticketId: string): Promise<Ticket> =>
      must(
        await this.api.GET("/v1/matchmaking/tickets/{ticket_id}", {
          params: { path: { ticket_id: ticketId } },
        }),
      ),
    /** Take a searching ticket out of the queue. */
    cancelTicket: async (ticketId: string): Promise<Ticket> =>
      must(
        await this.api.DELETE("/v1/matchmaking/tickets/{ticket_id}", {
          params: { path: { ticket_id: ticketId } },
        }),
      ),
  };

  // -- games and catalogues --------------------------------------------------------------------

  /** GET /v1/games: each game's seats, options, loadout schema and a ready-made loadout. */
  async games(): Promise<GameInfo[]> {
    return must(await this.api.GET("/v1/games")).games;
  }

  /**
   * A game's catalogue (`GET /v1/content/{game}`), fetched once per (game, ruleset) and kept:
   * a ruleset's content never changes. Without `ruleset`, the current one's, also kept (for
   * the client's lifetime).
   */
  catalogue(game: "cryptids", ruleset?: string): Promise<CryptidCatalogue>;
  catalogue(game: string, ruleset?: string): Promise<GameCatalogue>;
  catalogue(game: string, ruleset?: string): Promise<CryptidCatalogue | GameCatalogue> {
    const key = `${game}\n${ruleset ?? ""}`;
    let kept = this.catalogues.get(key);
    if (kept === undefined) {
      const query = ruleset === undefined ? {} : { ruleset };
      kept = (
        game === "cryptids"
          ? this.anonymous.GET("/v1/content/cryptids", { params: { query } })
          : this.anonymous.GET("/v1/content/{game}", { params: { path: { game }, query } })
      ).then(must);
      kept.catch(() => this.catalogues.delete(key)); // a failure is not kept
      this.catalogues.set(key, kept);
    }
    return kept as Promise<CryptidCatalogue | GameCatalogue>;
  }
}
