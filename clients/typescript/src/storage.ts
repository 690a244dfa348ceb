// Where a client keeps what outlives a page or a process: the device id and the refresh token
// (docs/api.md#players-and-sessions: keep both as you would a password). The access token is
// never stored: it lives in memory and is refreshed when needed.

type Maybe<T> = T | Promise<T>;

/**
 * A small key-value store, shaped like the Web Storage API so that `localStorage`,
 * `sessionStorage`, a keychain or a file can back it. The client uses three keys:
 * `device_id`, `refresh_token` and `player` (the signed-in player, as JSON).
 */
export interface SessionStorage {
  getItem(key: string): Maybe<string | null>;
  setItem(key: string, value: string): Maybe<void>;
  removeItem(key: string): Maybe<void>;
}

/** Kept in memory only: gone when the process or the page ends. */
export class MemoryStorage implements SessionStorage {
  private readonly items = new Map<string, string>();

  getItem(key: string): string | null {
    return this.items.get(key) ?? null;
  }

  setItem(key: string, value: string): void {
    this.items.set(key, value);
  }

  removeItem(key: string): void {
    this.items.delete(key);
  }
}

/** Web Storage with a prefix on every key: `localStorage` by default (browsers). */
export class LocalStorageStorage implements SessionStorage {
  private readonly store: Storage;

  constructor(
    private readonly prefix = "cryptid.",
    store?: Storage,
  ) {
    const found = store ?? (globalThis as { localStorage?: Storage }).localStorage;
    if (found === undefined) throw new Error("LocalStorageStorage needs localStorage (a browser)");
    this.store = found;
  }

  getItem(key: string): string | null {
    return this.store.getItem(this.prefix + key);
  }

  setItem(key: string, value: string): void {
    this.store.setItem(this.prefix + key, value);
  }

  removeItem(key: string): void {
    this.store.removeItem(this.prefix + key);
  }
}

/** A new device id: 32 random bytes in base64url (43 characters), as docs/api.md suggests. */
export function newDeviceId(): string {
  const bytes = new Uint8Array(32);
  crypto.getRandomValues(bytes);
  let text = "";
  for (const byte of bytes) text += String.fromCharCode(byte);
  return btoa(text).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}
