// The matchmaking queue: a ticket long-polled until matched, and a ticket cancelled.

import assert from "node:assert/strict";
import { test } from "node:test";
import { CryptidError } from "cryptid-client";
import { signedIn } from "../test-helpers/service.mjs";

test("two players queued for one game are seated in one match", async () => {
  const [cal, dev] = await Promise.all([signedIn("cal"), signedIn("dev")]);
  const tickets = [];
  const [one, two] = await Promise.all([
    cal.client.matchmaking.queue({ game: "necromancers", seats: 2 }, { onTicket: (t) => tickets.push(t) }),
    dev.client.matchmaking.queue({ game: "necromancers", seats: 2 }, { onTicket: (t) => tickets.push(t) }),
  ]);
  assert.equal(tickets.length, 2);
  assert.ok(tickets.every((t) => t.status === "searching" || t.status === "matched"));
  assert.equal(one.match_id, two.match_id);
  assert.deepEqual([one.seat, two.seat].sort(), [0, 1]);
  const state = await cal.client.matches.get(one.match_id);
  assert.equal(state.status, "active");
  assert.equal(state.seat, one.seat);
  await cal.client.matches.resign(one.match_id);
});

test("a queued ticket is cancelled by cancelTicket, or by aborting the wait", async () => {
  const { client } = await signedIn("patient");
  const controller = new AbortController();
  let ticketId = null;
  const waiting = client.matchmaking.queue(
    { game: "fate-duel", seats: 4, loadout: { crew: "gremio" } },
    {
      signal: controller.signal,
      onTicket: (ticket) => {
        ticketId = ticket.ticket_id;
        setTimeout(() => controller.abort(), 200);
      },
    },
  );
  await assert.rejects(waiting, (error) => error instanceof CryptidError && error.code === "ticket_cancelled");
  assert.equal((await client.matchmaking.ticket(ticketId)).status, "cancelled");

  const { data: ticket } = await client.api.POST("/v1/matchmaking/tickets", {
    body: { game: "fate-duel", seats: 4, loadout: { crew: "vecinos" } },
  });
  const cancelled = await client.matchmaking.cancelTicket(ticket.ticket_id);
  assert.equal(cancelled.status, "cancelled");
  await assert.rejects(
    client.matchmaking.cancelTicket(ticket.ticket_id),
    (error) => error.status === 409 && error.code === "ticket_not_searching",
  );
});
