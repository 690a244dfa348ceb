// A catalogue is fetched once per (game, ruleset) and kept.

import assert from "node:assert/strict";
import { test } from "node:test";
import { recordingFetch, signedIn } from "../test-helpers/service.mjs";

test("catalogue() asks once per game and ruleset", async () => {
  const recorder = recordingFetch();
  const { client } = await signedIn("reader", { fetch: recorder.fetch });
  const [first, second] = await Promise.all([client.catalogue("necromancers"), client.catalogue("necromancers")]);
  assert.equal(first, second);
  assert.equal(first.game, "necromancers");
  assert.ok(first.entries.length > 0);
  const named = await client.catalogue("necromancers", first.ruleset);
  assert.equal(named.ruleset, first.ruleset);
  await client.catalogue("necromancers");
  await client.catalogue("necromancers", first.ruleset);
  const cryptids = await client.catalogue("cryptids");
  assert.equal(cryptids.game, "cryptids");
  await client.catalogue("cryptids");
  const asked = recorder.log.filter((e) => e.path.startsWith("/v1/content/")).map((e) => e.path);
  assert.deepEqual(asked, ["/v1/content/necromancers", "/v1/content/necromancers", "/v1/content/cryptids"]);
});

test("an unknown game is an error, and the failure is not kept", async () => {
  const recorder = recordingFetch();
  const { client } = await signedIn("reader", { fetch: recorder.fetch });
  await assert.rejects(client.catalogue("chess"), (error) => error.status === 404);
  await assert.rejects(client.catalogue("chess"), (error) => error.status === 404);
  assert.equal(recorder.log.filter((e) => e.path === "/v1/content/chess").length, 2);
});
