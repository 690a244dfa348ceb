// Writes are retried with the key they were first sent with, and so are applied once: after a
// lost answer, a 503 `outcome_unknown` (the write may have committed), a 503 or a 429.

import assert from "node:assert/strict";
import { test } from "node:test";
import { CryptidError } from "cryptid-client";
import { recordingFetch, signedIn } from "../test-helpers/service.mjs";

function refusal(status, code, retryAfter) {
  const headers = { "Content-Type": "application/json" };
  if (retryAfter !== undefined) headers["Retry-After"] = String(retryAfter);
  return new Response(JSON.stringify({ error: { code, message: code, details: {} } }), { status, headers });
}

/** Intercept the first `count` requests matching `method` and `suffix` with `what`. */
function interceptFirst(method, suffix, what, count = 1) {
  let left = count;
  return recordingFetch(async (url, init, entry, send) => {
    if (left > 0 && entry.method === method && entry.path.endsWith(suffix)) {
      left -= 1;
      return what(send);
    }
    return send();
  });
}

test("the same write sent twice with one Idempotency-Key is applied once", async () => {
  const { client } = await signedIn("twice");
  const run = await client.runs.start();
  const key = crypto.randomUUID();
  const send = () =>
    client.api.POST("/v1/runs/{run_id}/buy", {
      params: { path: { run_id: run.run_id }, header: { "Idempotency-Key": key } },
      body: { slot: 0 },
    });
  const first = (await send()).data;
  const second = (await send()).data;
  assert.deepEqual(second, first, "the stored answer, again");
  const now = await client.runs.get(run.run_id);
  assert.equal(now.version, run.version + 1, "the version moved once");
  assert.equal(now.gold, run.gold - 3);
  assert.equal(now.warband.length, 1);
});

test("an answer lost on the way back: the write is sent again with its key, and applied once", async () => {
  const lost = interceptFirst("POST", "/buy", async (send) => {
    await send(); // the service applies it...
    throw new TypeError("fetch failed"); // ...and the answer never arrives
  });
  const { client } = await signedIn("lost", { fetch: lost.fetch });
  const run = await client.runs.start();
  const bought = await client.runs.buy(run.run_id, { slot: 0 });
  assert.equal(bought.version, run.version + 1);
  assert.equal(bought.gold, run.gold - 3);
  const buys = lost.log.filter((entry) => entry.path.endsWith("/buy"));
  assert.equal(buys.length, 2);
  assert.ok(buys[0].key, "a write carries an Idempotency-Key");
  assert.equal(buys[1].key, buys[0].key, "the retry carries the same key");
  const now = await client.runs.get(run.run_id);
  assert.equal(now.version, run.version + 1, "applied once");
  assert.equal(now.warband.length, 1);
});

test("a 503 outcome_unknown after the turn committed: the retry answers the same battle", async () => {
  const unknown = interceptFirst("POST", "/end-turn", async (send) => {
    await send();
    return refusal(503, "outcome_unknown", 1);
  });
  const { client } = await signedIn("unknown", { fetch: unknown.fetch });
  const run = await client.runs.start();
  const started = Date.now();
  const turn = await client.runs.endTurn(run.run_id, { round: 1, moves: [{ move: "buy", slot: 0 }] });
  assert.ok(Date.now() - started >= 950, "Retry-After: 1 was waited for");
  const turns = unknown.log.filter((entry) => entry.path.endsWith("/end-turn"));
  assert.deepEqual(turns.map((t) => t.status), [503, 200]);
  assert.equal(turns[1].key, turns[0].key);
  assert.equal(turn.round, 1);
  const now = await client.runs.get(run.run_id);
  assert.equal(now.round, 2, "one battle was fought, not two");
  assert.equal(now.version, run.version + 1);
  const battle = await client.battles.get(turn.battle_id);
  assert.equal(battle.round, 1);
});

test("a match action whose answer was lost is applied once: the version moves once", async () => {
  const lost = interceptFirst("POST", "/actions", async (send) => {
    await send();
    throw new TypeError("fetch failed");
  });
  const { client } = await signedIn("action", { fetch: lost.fetch });
  const created = await client.matches.create({ game: "necromancers", seats: 2, bots: [1] });
  let state = await client.matches.get(created.match_id);
  while (state.prompt === null) state = await client.matches.get(created.match_id);
  const done = await client.matches.act(created.match_id, {
    version: state.version,
    action: state.prompt.actions[0],
  });
  const acts = lost.log.filter((entry) => entry.path.endsWith("/actions"));
  assert.equal(acts.length, 2);
  assert.equal(acts[1].key, acts[0].key);
  assert.ok(done.version > state.version);
  await client.matches.resign(created.match_id);
  const replay = await client.matches.replay(created.match_id);
  const ours = replay.actions.filter((a) => a.seat === 0);
  assert.equal(ours.length, 2, `one action and the resignation: ${JSON.stringify(ours)}`);
  assert.deepEqual(ours[0].action, state.prompt.actions[0]);
});

test("a 429 is waited out per Retry-After, then sent again", async () => {
  const limited = interceptFirst("GET", "/v1/players/me", async () => refusal(429, "rate_limited", 1));
  const { client, player } = await signedIn("limited", { fetch: limited.fetch });
  const started = Date.now();
  const me = await client.me();
  assert.ok(Date.now() - started >= 950);
  assert.equal(me.player_id, player.player_id);
  assert.deepEqual(limited.log.filter((e) => e.path === "/v1/players/me").map((e) => e.status), [429, 200]);
});

test("past its attempts a write gives up with the last error, having used one key", async () => {
  const down = interceptFirst("POST", "/v1/runs", async () => refusal(503, "unavailable", 0), 100);
  const { client } = await signedIn("down", { fetch: down.fetch, retry: { attempts: 3 } });
  await assert.rejects(client.runs.start(), (error) => {
    assert.ok(error instanceof CryptidError);
    assert.equal(error.status, 503);
    assert.equal(error.code, "unavailable");
    return true;
  });
  const starts = down.log.filter((entry) => entry.path === "/v1/runs");
  assert.equal(starts.length, 3);
  assert.equal(new Set(starts.map((e) => e.key)).size, 1);
});

test("a Retry-After past the policy's limit is not waited for", async () => {
  const later = interceptFirst("GET", "/v1/games", async () => refusal(429, "rate_limited", 3600));
  const { client } = await signedIn("later", { fetch: later.fetch });
  const started = Date.now();
  await assert.rejects(client.games(), (error) => error.retryAfter === 3600 && error.code === "rate_limited");
  assert.ok(Date.now() - started < 1000);
});

test("each write has a key of its own, and a key reused for another request is refused", async () => {
  const recorder = recordingFetch();
  const { client } = await signedIn("keys", { fetch: recorder.fetch });
  const run = await client.runs.start();
  await client.runs.buy(run.run_id, { slot: 0 });
  await client.runs.buy(run.run_id, { slot: 1 });
  const keys = recorder.log.filter((e) => e.method === "POST").map((e) => e.key);
  assert.equal(new Set(keys).size, keys.length);
  const reused = client.api.POST("/v1/runs/{run_id}/sell", {
    params: { path: { run_id: run.run_id }, header: { "Idempotency-Key": keys.at(-1) } },
    body: { position: 0 },
  });
  await assert.rejects(reused, (error) => error.status === 409 && error.code === "idempotency_conflict");
  assert.equal((await client.runs.get(run.run_id)).warband.length, 2, "nothing was sold");
});
