import { createClient, MemoryStorage, verify } from "cryptid-client";

const client = createClient({
  baseUrl: process.env.CRYPTID_BASE_URL ?? "http://localhost:8080",
  storage: new MemoryStorage(), // in a browser: new LocalStorageStorage()
});
const me = await client.signInWithDevice({ name: "ana" }); // a new device id, kept in storage
console.log(`signed in as ${me.handle}`);

// One autobattler turn in one request: buy the shop's first offer, then fight.
const run = await client.runs.start();
const turn = await client.runs.endTurn(run.run_id, { round: run.round, moves: [{ move: "buy", slot: 0 }] });
console.log(`round ${turn.round}: winner ${turn.winner}, lives ${turn.lives}, wins ${turn.wins}`);

// Re-simulate the battle here, from its seed and warbands, and check every roll.
const replay = await client.battles.replay(turn.battle_id);
const verdict = verify(await client.catalogue("cryptids", replay.ruleset), replay);
console.log(`verified: ${verdict.matching} of ${verdict.rolls} rolls match`);
console.log(replay.namedEvents.at(-1)); // { kind: "end", winner: "a", reason: "wipe", … }
