// What the tests share: the service under test (CRYPTID_BASE_URL; CRYPTID_SHORT_TOKEN_BASE_URL is
// one whose access tokens last 2 s), clients on the built bundle, and a player that answers
// prompts as a person picking at random would.

import assert from "node:assert/strict";
import WebSocket from "ws";
import { CryptidError, createClient, MemoryStorage } from "cryptid-client";

export const BASE_URL = process.env.CRYPTID_BASE_URL;
export const SHORT_TOKEN_BASE_URL = process.env.CRYPTID_SHORT_TOKEN_BASE_URL;
assert.ok(BASE_URL, "CRYPTID_BASE_URL names the service under test");

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export function newClient(options = {}) {
  return createClient({ baseUrl: BASE_URL, storage: new MemoryStorage(), WebSocket, ...options });
}

export async function signedIn(name, options = {}) {
  const client = newClient(options);
  const player = await client.signInWithDevice({ name });
  return { client, player };
}

/** A fetch that records every request (method, path, status, Idempotency-Key) it passes on. */
export function recordingFetch(intercept = null) {
  const log = [];
  const fetch = async (url, init = {}) => {
    const path = new URL(url).pathname;
    const entry = {
      method: init.method ?? "GET",
      path,
      key: new Headers(init.headers).get("Idempotency-Key"),
      status: null,
    };
    log.push(entry);
    const response = intercept
      ? await intercept(url, init, entry, () => globalThis.fetch(url, init))
      : await globalThis.fetch(url, init);
    entry.status = response.status;
    return response;
  };
  return { fetch, log };
}

/** A small seeded generator (mulberry32), so that a failing game can be played again. */
export function random(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pick = (items, rng) => items[Math.floor(rng() * items.length)];

/** A value a prompt's parameter schema allows, picked at random. */
function paramValue(schema, rng) {
  if ("enum" in schema) return pick(schema.enum, rng);
  if (schema.type === "integer") {
    const low = schema.minimum ?? 0;
    const high = schema.maximum ?? low;
    return low + Math.floor(rng() * (high - low + 1));
  }
  if (schema.type === "array") {
    const items = [...schema.items.enum];
    const count = Math.floor(rng() * (items.length + 1));
    const chosen = [];
    while (chosen.length < count) chosen.push(items.splice(Math.floor(rng() * items.length), 1)[0]);
    return chosen;
  }
  if (schema.type === "boolean") return rng() < 0.5;
  throw new Error(`a parameter schema no client can fill: ${JSON.stringify(schema)}`);
}

/** An answer to `prompt`: one of its actions (not one that loses), or a parameterised one. */
export function choose(prompt, rng) {
  const safe = prompt.actions.filter((action) => !action.loses);
  const options = safe.length > 0 ? safe : prompt.actions;
  const kinds = Object.keys(prompt.params).sort();
  if (kinds.length > 0 && (options.length === 0 || rng() < 0.1)) {
    const type = pick(kinds, rng);
    const fields = prompt.params[type];
    return { type, ...Object.fromEntries(Object.entries(fields).map(([n, s]) => [n, paramValue(s, rng)])) };
  }
  return pick(options, rng);
}

/**
 * Play your seat of a match to its end, answering each prompt with choose(). `nudge` resolves
 * when new events arrive (the follower's), so that a bot's turn is awaited without polling hard.
 */
export async function playToEnd(client, matchId, rng, { nudge = () => sleep(50), maxAnswers = 3000 } = {}) {
  let state = await client.matches.get(matchId);
  let answers = 0;
  while (state.status !== "finished") {
    assert.ok(answers < maxAnswers, `the match did not end in ${maxAnswers} answers`);
    if (state.prompt === null) {
      await nudge();
      state = await client.matches.get(matchId);
      continue;
    }
    answers += 1;
    try {
      const done = await client.matches.act(matchId, { version: state.version, action: choose(state.prompt, rng) });
      state = { ...state, version: done.version, status: done.status, prompt: done.prompt };
    } catch (error) {
      // A parameterised answer may break a rule its schema cannot say: it is refused, with why.
      if (!(error instanceof CryptidError)) throw error;
      assert.equal(error.code, "illegal_action", error.message);
      assert.ok(error.details.reason, "a refusal names its reason");
      state = await client.matches.get(matchId);
    }
  }
  return { state: await client.matches.get(matchId), answers };
}

/** Every event the seat may see, read with the long-poll from the start. */
export async function allEvents(client, matchId) {
  const events = [];
  let after = 0;
  for (;;) {
    const batch = await client.matches.events(matchId, { after });
    events.push(...batch.events);
    if (batch.last_seq === after) return events;
    after = batch.last_seq;
  }
}

/** A follower's batches kept, and a promise for the next one (a bot's move). */
export function collector() {
  const seqs = [];
  let wake = null;
  return {
    seqs,
    onBatch(batch) {
      seqs.push(...batch.events.map((event) => event.seq));
      wake?.();
    },
    nudge() {
      return Promise.race([new Promise((resolve) => (wake = resolve)), sleep(1000)]);
    },
  };
}
