// Sessions (docs/api.md#players-and-sessions): the access token in memory, the refresh token and
// the device id in a SessionStorage. One refresh at a time: a refresh token is good for one use,
// and the same one sent twice (two requests refreshing at once) would revoke the session.

import { CryptidError } from "./errors.js";
import type { components } from "./schema.js";
import type { Authenticator } from "./transport.js";
import { type SessionStorage, newDeviceId } from "./storage.js";

type Session = components["schemas"]["Session"];

/** Who is signed in. */
export interface Player {
  player_id: string;
  name: string;
  tag: string;
  handle: string;
}

export interface SignedIn extends Player {
  /** True when this sign-in made the player (a device never seen before). */
  created: boolean;
}

export interface SessionCalls {
  device(deviceId: string, name: string | undefined): Promise<{ session: Session; created: boolean }>;
  refresh(refreshToken: string): Promise<Session>;
}

const DEVICE_ID = "device_id";
const REFRESH_TOKEN = "refresh_token";
const PLAYER = "player";

export class Sessions implements Authenticator {
  private access: { token: string; expiresAt: number; lifetime: number } | null = null;
  private renewing: Promise<string> | null = null;

  constructor(
    private readonly storage: SessionStorage,
    private readonly calls: SessionCalls,
    private readonly now: () => number,
  ) {}

  async signInWithDevice(options: { deviceId?: string; name?: string } = {}): Promise<SignedIn> {
    const deviceId = options.deviceId ?? (await this.storage.getItem(DEVICE_ID)) ?? newDeviceId();
    await this.storage.setItem(DEVICE_ID, deviceId);
    const { session, created } = await this.calls.device(deviceId, options.name);
    await this.keep(session);
    return { ...playerOf(session), created };
  }

  /** The player kept in storage, if any (no request is made). */
  async player(): Promise<Player | null> {
    const kept = await this.storage.getItem(PLAYER);
    return kept === null ? null : (JSON.parse(kept) as Player);
  }

  /** The kept refresh token, or null (never signed in here, or signed out). */
  async refreshToken(): Promise<string | null> {
    return this.storage.getItem(REFRESH_TOKEN);
  }

  /** A token good for a while yet: the one in memory, or a new one. */
  async token(): Promise<string> {
    const access = this.access;
    if (access !== null && this.now() < access.expiresAt - margin(access.lifetime)) {
      return access.token;
    }
    return this.renew(access === null ? null : access.token);
  }

  /**
   * A new access token in place of `refused` (the one a 401 refused, or the one running out).
   * When another request has already replaced it, that token is used: the refresh is not sent
   * again.
   */
  renew(refused: string | null): Promise<string> {
    const access = this.access;
    if (access !== null && access.token !== refused) return Promise.resolve(access.token);
    if (this.renewing === null) {
      this.renewing = this.refresh().finally(() => {
        this.renewing = null;
      });
    }
    return this.renewing;
  }

  /** Forget the session (not the device id): after signing out, or when it cannot be renewed. */
  async forget(): Promise<void> {
    this.access = null;
    await this.storage.removeItem(REFRESH_TOKEN);
    await this.storage.removeItem(PLAYER);
  }

  private async refresh(): Promise<string> {
    const refreshToken = await this.storage.getItem(REFRESH_TOKEN);
    if (refreshToken === null) {
      // Never signed in here, or signed out: signing in again is the caller's choice.
      this.access = null;
      throw new CryptidError(401, "not_signed_in", "not signed in: call signInWithDevice first");
    }
    try {
      return await this.keep(await this.calls.refresh(refreshToken));
    } catch (error) {
      if (!(error instanceof CryptidError && error.status === 401)) throw error;
      // The refresh was refused (expired, revoked, reused): sign in again with the device id.
      const deviceId = await this.storage.getItem(DEVICE_ID);
      if (deviceId === null) {
        await this.forget();
        throw error;
      }
      try {
        return this.keep((await this.calls.device(deviceId, undefined)).session);
      } catch (again) {
        if (again instanceof CryptidError && again.status === 401) await this.forget();
        throw again;
      }
    }
  }

  private async keep(session: Session): Promise<string> {
    const lifetime = session.expires_in * 1000;
    this.access = { token: session.access_token, expiresAt: this.now() + lifetime, lifetime };
    await this.storage.setItem(REFRESH_TOKEN, session.refresh_token);
    await this.storage.setItem(PLAYER, JSON.stringify(playerOf(session)));
    return session.access_token;
  }
}

/** How long before its expiry an access token is replaced: a tenth of its life, at most 60 s. */
export function margin(lifetimeMs: number): number {
  return Math.min(60_000, lifetimeMs / 10);
}

function playerOf(session: Session): Player {
  const { player_id, name, tag, handle } = session;
  return { player_id, name, tag, handle };
}
