// Sessions: a device signs in, the access token is refreshed before it runs out and once after a
// 401, the refresh token and the device id outlive the client in its SessionStorage, and signing
// out revokes the session, and signing out everywhere proves a recent sign-in with the kept
// refresh token; accessToken() gives the token requests send, renewed as they would.
// The refresh tests run against a service whose access tokens last 2 s.

import assert from "node:assert/strict";
import { test } from "node:test";
import { CryptidError, decodeMsgpack, LocalStorageStorage, MemoryStorage, newDeviceId } from "cryptid-client";
import { BASE_URL, SHORT_TOKEN_BASE_URL, newClient, recordingFetch, sleep } from "../test-helpers/service.mjs";

const short = { skip: SHORT_TOKEN_BASE_URL ? false : "CRYPTID_SHORT_TOKEN_BASE_URL is not set" };

/** A refresh sent by someone else, with nothing of the client. */
function refreshWith(baseUrl, refreshToken) {
  return fetch(`${baseUrl}/v1/auth/refresh`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ refresh_token: refreshToken }),
  });
}

function calls(log) {
  return log.map((entry) => `${entry.method} ${entry.path} ${entry.status}`);
}

test("a call after the access token expired is made with a refreshed one", short, async () => {
  const recorder = recordingFetch();
  const client = newClient({ baseUrl: SHORT_TOKEN_BASE_URL, fetch: recorder.fetch });
  const player = await client.signInWithDevice({ name: "expiring" });
  await sleep(2500);
  const me = await client.me();
  assert.equal(me.player_id, player.player_id);
  // The client knew the token was out of date: it refreshed first, and nothing was refused.
  assert.deepEqual(calls(recorder.log), [
    "POST /v1/auth/device 201",
    "POST /v1/auth/refresh 200",
    "GET /v1/players/me 200",
  ]);
});

test("a 401 is answered by one refresh and the request sent again", short, async () => {
  const recorder = recordingFetch();
  // A clock that stands still: to this client the token never expires, as with a skewed clock.
  const client = newClient({ baseUrl: SHORT_TOKEN_BASE_URL, fetch: recorder.fetch, now: () => 0 });
  const player = await client.signInWithDevice({ name: "skewed" });
  // Past the token's `exp`, which the service rounds up to the second: 3 s at most.
  await sleep(3100);
  const [a, b] = await Promise.all([client.me(), client.runs.list()]);
  assert.equal(a.player_id, player.player_id);
  assert.ok(Array.isArray(b.runs));
  const log = calls(recorder.log);
  assert.equal(log.filter((c) => c.startsWith("POST /v1/auth/refresh")).length, 1, log.join("\n"));
  assert.deepEqual(log.filter((c) => c.includes(" 401")).length, 2, "both calls were refused once");
  assert.ok(log.includes("GET /v1/players/me 200") && log.includes("GET /v1/runs 200"));
});

test("a refresh refused signs in again with the kept device id", short, async () => {
  const storage = new MemoryStorage();
  const recorder = recordingFetch();
  const client = newClient({ baseUrl: SHORT_TOKEN_BASE_URL, storage, fetch: recorder.fetch });
  const player = await client.signInWithDevice({ name: "reused" });
  // Someone else used the refresh token, and the pair it gave: the client's refresh is then a
  // reuse, which the service refuses, revoking the session.
  const stolen = storage.getItem("refresh_token");
  const taken = await refreshWith(SHORT_TOKEN_BASE_URL, stolen);
  assert.equal(taken.status, 200);
  const again = await refreshWith(SHORT_TOKEN_BASE_URL, (await taken.json()).refresh_token);
  assert.equal(again.status, 200);
  await sleep(2500);
  const me = await client.me();
  assert.equal(me.player_id, player.player_id, "the same player, by its device");
  assert.notEqual(storage.getItem("refresh_token"), stolen);
  assert.deepEqual(calls(recorder.log), [
    "POST /v1/auth/device 201",
    "POST /v1/auth/refresh 401",
    "POST /v1/auth/device 200",
    "GET /v1/players/me 200",
  ]);
});

test("a new client resumes from the storage: the refresh token, then the player", async () => {
  const storage = new MemoryStorage();
  const first = newClient({ storage });
  const player = await first.signInWithDevice({ name: "resumed" });
  const second = newClient({ storage });
  assert.deepEqual(await second.player(), {
    player_id: player.player_id,
    name: player.name,
    tag: player.tag,
    handle: player.handle,
  });
  const me = await second.me();
  assert.equal(me.player_id, player.player_id);
});

test("accessToken() is the token requests send: good for the service, made once", async () => {
  const recorder = recordingFetch();
  const storage = new MemoryStorage();
  const client = newClient({ storage, fetch: recorder.fetch });
  const player = await client.signInWithDevice({ name: "watcher" });
  const token = await client.accessToken();
  assert.equal(await client.accessToken(), token, "kept in memory, not made again");
  assert.deepEqual(calls(recorder.log), ["POST /v1/auth/device 201"]);
  const me = await fetch(`${BASE_URL}/v1/players/me`, { headers: { Authorization: `Bearer ${token}` } });
  assert.equal(me.status, 200);
  assert.equal((await me.json()).player_id, player.player_id);
  // A new client on the same storage has no token in memory: it renews the session for one.
  const resumed = newClient({ storage, fetch: recorder.fetch });
  const renewed = await resumed.accessToken();
  assert.deepEqual(calls(recorder.log), ["POST /v1/auth/device 201", "POST /v1/auth/refresh 200"]);
  const again = await fetch(`${BASE_URL}/v1/runs`, { headers: { Authorization: `Bearer ${renewed}` } });
  assert.equal(again.status, 200);
  await client.signOut();
  await assert.rejects(client.accessToken(), (error) => error instanceof CryptidError && error.code === "not_signed_in");
});

test("accessToken() renews a token that is running out", short, async () => {
  const recorder = recordingFetch();
  const client = newClient({ baseUrl: SHORT_TOKEN_BASE_URL, fetch: recorder.fetch });
  await client.signInWithDevice({ name: "renewing" });
  const first = await client.accessToken();
  await sleep(2500);
  const second = await client.accessToken();
  assert.notEqual(second, first);
  assert.deepEqual(calls(recorder.log), ["POST /v1/auth/device 201", "POST /v1/auth/refresh 200"]);
  const me = await fetch(`${SHORT_TOKEN_BASE_URL}/v1/players/me`, { headers: { Authorization: `Bearer ${second}` } });
  assert.equal(me.status, 200);
});

test("signing in with a device id: 201 makes the player, the same id signs it in again", async () => {
  const deviceId = newDeviceId();
  assert.match(deviceId, /^[A-Za-z0-9_-]{43}$/);
  const made = await newClient().signInWithDevice({ deviceId, name: "twin" });
  assert.equal(made.created, true);
  const again = await newClient().signInWithDevice({ deviceId });
  assert.equal(again.created, false);
  assert.equal(again.player_id, made.player_id);
});

test("signing out revokes the session and forgets it; the device id stays", async () => {
  const storage = new MemoryStorage();
  const client = newClient({ storage });
  const player = await client.signInWithDevice({ name: "leaving" });
  const refresh = storage.getItem("refresh_token");
  assert.equal(await client.signOut(), 1);
  assert.equal(storage.getItem("refresh_token"), null);
  assert.equal(await client.player(), null);
  await assert.rejects(client.me(), (error) => error instanceof CryptidError && error.code === "not_signed_in");
  // The revoked refresh token is refused by the service.
  assert.equal((await refreshWith(BASE_URL, refresh)).status, 401);
  const back = await client.signInWithDevice();
  assert.equal(back.player_id, player.player_id, "signed in again by the kept device id");
  assert.equal(await client.signOut({ everywhere: true }), 1);
});

test("signing out everywhere sends the kept refresh token: it needs no sign-in of the last minutes", short, async () => {
  const storage = new MemoryStorage();
  const recorder = recordingFetch(async (url, init, entry, send) => {
    if (entry.path === "/v1/auth/logout") {
      entry.body = decodeMsgpack(init.body);
      entry.kept = storage.getItem("refresh_token");
    }
    return send();
  });
  const client = newClient({ baseUrl: SHORT_TOKEN_BASE_URL, storage, fetch: recorder.fetch });
  const player = await client.signInWithDevice({ name: "everywhere" });
  const signedInWith = storage.getItem("refresh_token");
  // A second session of the player: another client signed in with the same device id.
  const otherStorage = new MemoryStorage();
  const other = newClient({ baseUrl: SHORT_TOKEN_BASE_URL, storage: otherStorage });
  assert.equal((await other.signInWithDevice({ deviceId: storage.getItem("device_id") })).player_id, player.player_id);
  // The access token of the sign-in expires: the service would no longer take it as a recent
  // sign-in (nor, after 10 minutes, the one a refresh gives). The refresh token proves one.
  await sleep(2500);
  assert.equal(await client.signOut({ everywhere: true }), 2);
  assert.deepEqual(calls(recorder.log), [
    "POST /v1/auth/device 201",
    "POST /v1/auth/refresh 200",
    "POST /v1/auth/logout 200",
  ]);
  const [logout] = recorder.log.filter((entry) => entry.path === "/v1/auth/logout");
  assert.equal(logout.body.everywhere, true);
  assert.equal(logout.body.refresh_token, logout.kept, "the refresh token kept when it was sent");
  assert.notEqual(logout.body.refresh_token, signedInWith, "the one kept after the refresh, not a used one");
  assert.equal(storage.getItem("refresh_token"), null);
  // Every session of the player is revoked: the other client's refresh token is refused too.
  assert.equal((await refreshWith(SHORT_TOKEN_BASE_URL, logout.body.refresh_token)).status, 401);
  assert.equal((await refreshWith(SHORT_TOKEN_BASE_URL, otherStorage.getItem("refresh_token"))).status, 401);
});

test("signing out everywhere refused 403 reauthentication_required renews the session and is sent again", async () => {
  // As when the kept refresh token was used meanwhile (another tab sharing the storage): the
  // service refuses the proof; a refresh gives an access token issued now, which is one.
  const storage = new MemoryStorage();
  let refused = false;
  const recorder = recordingFetch(async (url, init, entry, send) => {
    if (entry.path !== "/v1/auth/logout") return send();
    entry.body = decodeMsgpack(init.body);
    if (refused) return send();
    refused = true;
    const error = { code: "reauthentication_required", message: "sign in again", details: { fresh_seconds: 600 } };
    return new Response(JSON.stringify({ error }), { status: 403, headers: { "Content-Type": "application/json" } });
  });
  const client = newClient({ storage, fetch: recorder.fetch });
  await client.signInWithDevice({ name: "proving" });
  const signedInWith = storage.getItem("refresh_token");
  assert.equal(await client.signOut({ everywhere: true }), 1);
  assert.deepEqual(calls(recorder.log), [
    "POST /v1/auth/device 201",
    "POST /v1/auth/logout 403",
    "POST /v1/auth/refresh 200",
    "POST /v1/auth/logout 200",
  ]);
  const [first, second] = recorder.log.filter((entry) => entry.path === "/v1/auth/logout");
  assert.equal(first.body.refresh_token, signedInWith);
  assert.notEqual(second.body.refresh_token, signedInWith, "sent again with the refreshed one");
  assert.equal(storage.getItem("refresh_token"), null);
  // Any other refusal is thrown, once; the session is forgotten all the same.
  await client.signInWithDevice();
  const forbidden = recordingFetch(async (url, init, entry, send) =>
    entry.path === "/v1/auth/logout"
      ? new Response(JSON.stringify({ error: { code: "forbidden", message: "no", details: {} } }), {
          status: 403,
          headers: { "Content-Type": "application/json" },
        })
      : send(),
  );
  const stubborn = newClient({ storage, fetch: forbidden.fetch });
  await assert.rejects(stubborn.signOut({ everywhere: true }), (error) => error instanceof CryptidError && error.code === "forbidden");
  assert.deepEqual(calls(forbidden.log), ["POST /v1/auth/refresh 200", "POST /v1/auth/logout 403"]);
});

test("LocalStorageStorage keeps the session under its prefix in a Web Storage", async () => {
  const items = new Map();
  const webStorage = {
    getItem: (key) => items.get(key) ?? null,
    setItem: (key, value) => void items.set(key, String(value)),
    removeItem: (key) => void items.delete(key),
  };
  const client = newClient({ storage: new LocalStorageStorage("game.", webStorage) });
  await client.signInWithDevice({ name: "browser" });
  assert.deepEqual([...items.keys()].sort(), ["game.device_id", "game.player", "game.refresh_token"]);
  assert.throws(() => new LocalStorageStorage(), /localStorage/);
});
