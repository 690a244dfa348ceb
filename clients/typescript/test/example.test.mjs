// The README's example, examples/first-turn.mjs, runs as it is against the service.

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { BASE_URL } from "../test-helpers/service.mjs";

const example = fileURLToPath(new URL("../examples/first-turn.mjs", import.meta.url));

test("the README's twenty lines sign in, play a turn and verify its battle", async () => {
  const { stdout } = await promisify(execFile)(process.execPath, [example], {
    env: { ...process.env, CRYPTID_BASE_URL: BASE_URL },
    timeout: 30_000,
  });
  assert.match(stdout, /^signed in as ana#\d{4}$/m);
  assert.match(stdout, /^round 1: winner (player|ghost|draw), lives [45], wins [01]$/m);
  const [, matching, rolls] = /^verified: (\d+) of (\d+) rolls match$/m.exec(stdout) ?? [];
  assert.ok(Number(rolls) > 0, stdout);
  assert.equal(matching, rolls, stdout);
  assert.match(stdout, /kind: 'end'/);
});
