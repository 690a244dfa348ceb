// A run of the autobattler played to its end, each battle's replay checked roll by roll.

import assert from "node:assert/strict";
import { test } from "node:test";
import { verify } from "cryptid-client";
import { signedIn } from "../test-helpers/service.mjs";

/** This turn's shop moves: buy what the gold and the board allow, cheapest slots first. */
function shopping(run) {
  const moves = [];
  let gold = run.gold;
  let room = 5 - run.warband.length;
  for (const offer of run.shop) {
    if (offer === null || offer.cost > gold || room === 0) continue;
    moves.push({ move: "buy", slot: offer.slot });
    gold -= offer.cost;
    room -= 1;
  }
  return moves;
}

test("a run is played to its end, one request a turn, and every battle verifies", async () => {
  const { client } = await signedIn("runner");
  let run = await client.runs.start();
  assert.equal(run.round, 1);
  // The shop's own moves, each its own request, on the first round.
  run = await client.runs.freeze(run.run_id, { slot: 2 });
  assert.equal(run.shop[2].frozen, true);
  run = await client.runs.reroll(run.run_id, { version: run.version });
  assert.equal(run.shop[2].frozen, true, "a frozen offer stays through a reroll");
  run = await client.runs.buy(run.run_id, { slot: 0 });
  run = await client.runs.buy(run.run_id, { slot: 1 });
  assert.equal(run.warband.length >= 1, true);
  if (run.warband.length === 2) {
    run = await client.runs.arrange(run.run_id, { order: [1, 0] });
  }
  run = await client.runs.sell(run.run_id, { position: 0 });
  const content = await client.catalogue("cryptids", run.ruleset);
  const battles = [];
  while (run.status === "shopping") {
    const turn = await client.runs.endTurn(run.run_id, { round: run.round, moves: shopping(run) });
    assert.equal(turn.round, run.round);
    battles.push(turn.battle_id);
    const replay = await client.battles.replay(turn.battle_id);
    const verdict = verify(content, replay);
    assert.ok(verdict.ok, `battle ${turn.battle_id}: roll ${verdict.firstMismatch} differs`);
    assert.equal(replay.namedEvents.length, replay.events.length);
    const end = replay.namedEvents.at(-1);
    assert.equal(end.kind, "end");
    assert.equal(end.winner, replay.events.at(-1)[1]);
    const ours = { player: "a", ghost: "b", draw: "draw" }[turn.winner];
    assert.equal(end.winner, ours, "side A is the player's warband");
    run = turn.run;
  }
  assert.ok(["won", "lost"].includes(run.status), run.status);
  assert.ok(run.wins === 10 || run.lives === 0);
  assert.ok(battles.length >= run.wins + (5 - run.lives));
  const battle = await client.battles.get(battles[0]);
  assert.equal(battle.round, 1);
  assert.equal(battle.battle_id, battles[0]);
});

test("a run is abandoned, and the list shows it", async () => {
  const { client } = await signedIn("quitter");
  const run = await client.runs.start();
  const abandoned = await client.runs.abandon(run.run_id, { version: run.version });
  assert.equal(abandoned.status, "abandoned");
  const listed = await client.runs.list();
  assert.deepEqual(
    listed.runs.map((r) => [r.run_id, r.status]),
    [[run.run_id, "abandoned"]],
  );
});

