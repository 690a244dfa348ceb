// 64-bit integers stay exact both ways: a seed of 2^64 − 1 sent to POST /v1/battles/simulate
// comes back as the same integer, and the battle re-simulates from it.

import assert from "node:assert/strict";
import { test } from "node:test";
import { decodeMsgpack, encodeMsgpack, parseJson, parseReplay, simulate, verify } from "cryptid-client";
import { signedIn } from "../test-helpers/service.mjs";

const a = { cryptids: [{ species: "mothman", ability: 0, level: 2 }, { species: "trauco", ability: 1, level: 1 }] };
const b = { cryptids: [{ species: "alux", ability: 0, level: 3 }] };

for (const seed of [2n ** 64n - 1n, 2n ** 53n + 1n, 5_000_000_000, 42]) {
  test(`seed ${seed} round-trips exactly and the battle re-simulates from it`, async () => {
    const { client } = await signedIn("seeds");
    const answer = await client.battles.simulate({ seed, a, b });
    assert.equal(typeof answer.seed, typeof seed, "a safe integer stays a number, a larger one a bigint");
    assert.equal(answer.seed, seed);
    assert.equal(answer.replay.seed, seed);
    const content = await client.catalogue("cryptids", answer.ruleset);
    const verdict = verify(content, answer.replay);
    assert.ok(verdict.ok, `roll ${verdict.firstMismatch} differs`);
    const mine = simulate(content, seed, answer.replay.a, answer.replay.b);
    assert.equal(mine.seed, BigInt(seed));
    assert.deepEqual(mine.hashes, answer.replay.hashes);
    assert.equal(mine.winner, answer.winner);
  });
}

test("the largest seed sent as a decimal bigint in msgpack is a uint 64", () => {
  const bytes = encodeMsgpack({ seed: 2n ** 64n - 1n, small: 7, wide: 5_000_000_000 });
  const decoded = decodeMsgpack(bytes);
  assert.deepEqual(decoded, { seed: 2n ** 64n - 1n, small: 7, wide: 5_000_000_000 });
  // 0xcf: uint 64 for both the bigint and the number past 32 bits (not a float 64, 0xcb).
  assert.equal(bytes.filter((byte) => byte === 0xcb).length, 0);
});

test("JSON text keeps integers past 2^53 exact, and small ones as numbers", () => {
  const text = '{"seed": 18446744073709551615, "n": [1, -2, 3.5, 1e3], "s": "x\\"y", "t": true, "z": null}';
  assert.deepEqual(parseJson(text), { seed: 18446744073709551615n, n: [1, -2, 3.5, 1000], s: 'x"y', t: true, z: null });
  assert.throws(() => parseJson("{"), SyntaxError);
  assert.equal(parseReplay('{"seed": 18446744073709551615}').seed, 18446744073709551615n);
});
