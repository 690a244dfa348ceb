// A match of each turn-based game played to its end against a bot, answering the prompts as they
// come, followed over the WebSocket; then a socket dropped mid-match, a socket closed as its
// token expires (4001), and a socket that cannot open at all (nor past the service's cap of
// sockets): none loses or repeats an event. A socket closed because its session was signed out
// (4002) stops its follower.

import assert from "node:assert/strict";
import { test } from "node:test";
import WebSocket from "ws";
import { CryptidError } from "cryptid-client";
import {
  BASE_URL,
  SHORT_TOKEN_BASE_URL,
  allEvents,
  collector,
  playToEnd,
  random,
  signedIn,
  sleep,
} from "../test-helpers/service.mjs";

const short = { skip: SHORT_TOKEN_BASE_URL ? false : "CRYPTID_SHORT_TOKEN_BASE_URL is not set" };

const GAMES = ["necromancers", "fate-duel", "loyalty", "medianokte"];

function assertInOrderOnce(seqs, expected) {
  assert.deepEqual(seqs, [...new Set(seqs)], "no event delivered twice");
  assert.deepEqual(seqs, [...seqs].sort((x, y) => x - y), "events in order");
  assert.deepEqual(seqs, expected, "every event the seat may see, none missed");
}

for (const [index, game] of GAMES.entries()) {
  test(`${game}: a match against a bot, played to its end from the prompts`, async (t) => {
    const { client, player } = await signedIn(`${game}-player`);
    const info = (await client.games()).find((g) => g.id === game);
    assert.ok(info, `${game} is on offer`);
    const created = await client.matches.create({
      game,
      seats: 2,
      bots: [1],
      loadout: info.sample_loadout,
    });
    assert.equal(created.seat, 0);
    const seen = collector();
    const matched = [];
    const follower = client.matches.follow(created.match_id, {
      onBatch: seen.onBatch,
      onMatched: (ticket) => matched.push(ticket),
    });
    const { state, answers } = await playToEnd(client, created.match_id, random(index + 1), {
      nudge: seen.nudge,
    });
    await follower.done;
    assert.equal(state.status, "finished");
    assert.ok(state.outcome, "a finished match has its outcome");
    assert.ok(answers > 0);
    t.diagnostic(`${game}: ${answers} answers, ${seen.seqs.length} events, outcome ${JSON.stringify(state.outcome)}`);
    assert.equal(follower.transport, "closed");
    assertInOrderOnce(seen.seqs, (await allEvents(client, created.match_id)).map((e) => e.seq));
    assert.deepEqual(matched, []);
    const mine = await client.matches.mine();
    assert.ok(mine.matches.some((m) => m.match_id === created.match_id));
    const replay = await client.matches.replay(created.match_id);
    assert.equal(replay.seats[0].player_id, player.player_id);
  });
}

test("a socket dropped mid-match is resumed from the last event: nothing missed, nothing twice", async () => {
  const sockets = [];
  class Tracked extends WebSocket {
    constructor(url) {
      super(url);
      sockets.push(this);
    }
  }
  const { client } = await signedIn("dropped", { WebSocket: Tracked });
  const created = await client.matches.create({ game: "necromancers", seats: 2, bots: [1] });
  const seen = collector();
  let drops = 0;
  const follower = client.matches.follow(created.match_id, {
    onBatch(batch) {
      seen.onBatch(batch);
      // Twice, cut the connection under the open socket, as a network would.
      const socket = sockets.at(-1);
      if (drops < 2 && seen.seqs.length >= 10 * (drops + 1) && socket.readyState === WebSocket.OPEN) {
        drops += 1;
        socket.terminate();
      }
    },
  });
  await playToEnd(client, created.match_id, random(7), { nudge: seen.nudge });
  await follower.done;
  assert.equal(drops, 2, "the match lasted long enough to drop the socket twice");
  assert.ok(sockets.length >= 3, `${sockets.length} sockets opened`);
  const everything = (await allEvents(client, created.match_id)).map((e) => e.seq);
  assertInOrderOnce(seen.seqs, everything);
  const urls = sockets.map((s) => new URL(s.url).searchParams.get("after"));
  assert.equal(urls[0], "0");
  assert.notEqual(urls[1], "0", "the second socket resumes after the last event delivered");
});

/** A `ws` WebSocket that keeps every socket made: `closed` resolves to its close code. */
function trackedSockets() {
  const sockets = [];
  class Tracked extends WebSocket {
    constructor(url) {
      super(url);
      this.failure = null;
      this.closed = new Promise((resolve) => this.once("close", (code) => resolve(code)));
      this.on("error", (error) => (this.failure = error.message));
      sockets.push(this);
    }
  }
  return { sockets, Tracked };
}

/** A follower of `matchId` for `client`, and a promise for its first batch with events. */
function following(client, matchId, options = {}) {
  const seen = collector();
  let first;
  const started = new Promise((resolve) => (first = resolve));
  const follower = client.matches.follow(matchId, {
    ...options,
    onBatch(batch) {
      seen.onBatch(batch);
      if (seen.seqs.length > 0) first();
    },
  });
  return { follower, seen, started };
}

test("a socket closed 4001 as its token expires is reopened with a renewed token, from the last event", short, async () => {
  const { sockets, Tracked } = trackedSockets();
  const { client } = await signedIn("expiring-socket", { baseUrl: SHORT_TOKEN_BASE_URL, WebSocket: Tracked });
  const created = await client.matches.create({ game: "necromancers", seats: 2, bots: [1] });
  const { follower, seen, started } = following(client, created.match_id);
  try {
    await started;
    // The socket's token lasts 2 s (its `exp` rounded up to the second: 3 s at most), and the
    // service closes the socket then, 4001. The follower carries on.
    const code = await Promise.race([sockets[0].closed, sleep(5000).then(() => "still open")]);
    assert.equal(code, 4001, "closed as its token expired");
    await playToEnd(client, created.match_id, random(13), { nudge: seen.nudge });
    await follower.done;
  } finally {
    follower.close();
  }
  assert.ok(sockets.length >= 2, `${sockets.length} sockets opened`);
  assert.deepEqual(sockets.map((s) => s.failure).filter(Boolean), [], "every socket opened");
  const params = sockets.map((s) => new URL(s.url).searchParams);
  assert.notEqual(params[1].get("token"), params[0].get("token"), "reopened with a renewed token");
  assert.notEqual(params[1].get("after"), "0", "from the last event delivered");
  assertInOrderOnce(seen.seqs, (await allEvents(client, created.match_id)).map((e) => e.seq));
});

test("a socket closed 4002 as its session is signed out stops the follower with a 401: no socket again", async () => {
  const { sockets, Tracked } = trackedSockets();
  const { client } = await signedIn("signed-out", { WebSocket: Tracked });
  const created = await client.matches.create({ game: "necromancers", seats: 2, bots: [1] });
  const errors = [];
  const { follower, started } = following(client, created.match_id, { onError: (error) => errors.push(error) });
  try {
    await started;
    assert.equal(follower.transport, "socket");
    assert.equal(await client.signOut(), 1);
    await assert.rejects(
      follower.done,
      (error) => error instanceof CryptidError && error.status === 401 && error.details.close_code === 4002,
    );
    await sleep(1500); // long enough for a reconnection, were one tried
  } finally {
    follower.close();
  }
  assert.equal(sockets.length, 1, "no socket opened again");
  assert.equal(await sockets[0].closed, 4002);
  assert.equal(errors.length, 1);
  assert.equal(follower.transport, "closed");
  assert.equal(await client.player(), null, "the follower signed nobody back in");
  await client.signInWithDevice();
  await client.matches.resign(created.match_id);
});

test("a handshake refused 409 too_many_sockets: the follower long-polls, and opens no socket again", async () => {
  const { sockets, Tracked } = trackedSockets();
  const { client } = await signedIn("crowded", { WebSocket: Tracked });
  const created = await client.matches.create({ game: "necromancers", seats: 2, bots: [1] });
  // The player holds MAX_SOCKETS_PER_PLAYER (10) sockets already.
  const token = await client.accessToken();
  const url = `${BASE_URL.replace(/^http/, "ws")}/v1/matches/${created.match_id}/ws?after=0&token=${token}`;
  const held = Array.from({ length: 10 }, () => new WebSocket(url));
  let follower = null;
  let seen = null;
  try {
    await Promise.all(
      held.map((socket) => new Promise((resolve, reject) => socket.once("open", resolve).once("error", reject))),
    );
    ({ follower, seen } = following(client, created.match_id));
    await playToEnd(client, created.match_id, random(17), { nudge: seen.nudge });
    await follower.done;
  } finally {
    follower?.close();
    for (const socket of held) socket.terminate();
  }
  assert.equal(sockets.length, 1, "no socket tried again");
  assert.match(sockets[0].failure, /409/);
  assertInOrderOnce(seen.seqs, (await allEvents(client, created.match_id)).map((e) => e.seq));
});

test("where no socket opens, the follower long-polls the events instead", async () => {
  class Refused extends WebSocket {
    constructor(url) {
      super(url.replace("/ws?", "/no-socket-here?"));
    }
  }
  const { client } = await signedIn("polled", { WebSocket: Refused });
  const created = await client.matches.create({ game: "necromancers", seats: 2, bots: [1] });
  const seen = collector();
  const follower = client.matches.follow(created.match_id, { onBatch: seen.onBatch });
  await playToEnd(client, created.match_id, random(11), { nudge: seen.nudge });
  await follower.done;
  assertInOrderOnce(seen.seqs, (await allEvents(client, created.match_id)).map((e) => e.seq));
});

test("close() stops a follower at once", async () => {
  const { client } = await signedIn("closer");
  const created = await client.matches.create({ game: "necromancers", seats: 2, bots: [1] });
  const follower = client.matches.follow(created.match_id, { onBatch() {} });
  follower.close();
  await follower.done;
  assert.equal(follower.transport, "closed");
  const state = await client.matches.get(created.match_id);
  const resigned = await client.matches.resign(created.match_id);
  assert.equal(resigned.status, "finished");
  assert.equal(state.status, "active");
});

test("a match waiting in the lobby is found and joined by another player", async () => {
  const [ana, bea] = await Promise.all([signedIn("ana"), signedIn("bea")]);
  const created = await ana.client.matches.create({ game: "necromancers", seats: 2 });
  assert.equal(created.status, "waiting");
  let found = null;
  let cursor;
  do {
    const page = await bea.client.matches.lobby({ limit: 100, cursor });
    found = page.matches.find((m) => m.match_id === created.match_id) ?? null;
    cursor = page.next ?? undefined;
  } while (found === null && cursor !== undefined);
  assert.ok(found, "the waiting match is in the lobby");
  assert.equal(found.free_seats, 1);
  const joined = await bea.client.matches.join(created.match_id);
  assert.deepEqual([joined.seat, joined.status], [1, "active"]);
  const seen = await ana.client.matches.get(created.match_id);
  assert.equal(seen.status, "active");
  assert.ok(seen.view, "a view once every seat is taken");
  await ana.client.matches.resign(created.match_id);
  assert.equal((await bea.client.matches.get(created.match_id)).status, "finished");
});

test("a follower whose onBatch throws stops, and says why", async () => {
  const { client } = await signedIn("thrower");
  const created = await client.matches.create({ game: "necromancers", seats: 2, bots: [1] });
  const errors = [];
  const follower = client.matches.follow(created.match_id, {
    onBatch() {
      throw new Error("the table could not be drawn");
    },
    onError: (error) => errors.push(error),
  });
  await assert.rejects(follower.done, /could not be drawn/);
  assert.equal(errors.length, 1);
  assert.equal(follower.transport, "closed");
  await client.matches.resign(created.match_id);
});
