// The table renderer for the replay viewer (/watch/matches/{id}), built into
// web/watch/match-view.js and its stylesheet: a finished match's table, every card revealed, and
// its events in the words the web client uses, both named from the game's catalogue.

import "../../table.css";
import { h } from "../app.js";
import { hintsFor } from "./hints.js";
import { type CatalogueLike, Names } from "./names.js";
import {
  capitalised,
  describe,
  drawTable,
  eventText,
  isObject,
  type Json,
  type TableContext,
} from "./render.js";

export interface ReplayLike {
  game: string;
  seats: { seat: number; bot: boolean }[];
  events: { kind: string; data: Json }[];
  final: Json;
}

export interface MatchView {
  /** The table at the end: one per leg of a series. */
  table: HTMLElement;
  /** An event in words. */
  event(kind: string, data: Json): string;
  /** A seat's loadout in words. */
  loadout(value: unknown): string;
  /** The game's name. */
  name: string;
}

export function matchView(
  replay: ReplayLike,
  catalogue: CatalogueLike | null,
  name: string,
): MatchView {
  const names = new Names(catalogue);
  for (const event of replay.events) names.learn(event.data);
  const bots = new Set(replay.seats.filter((seat) => seat.bot).map((seat) => seat.seat));
  const hints = hintsFor(replay.game);
  const ctx: TableContext = {
    hints,
    names,
    seat: null,
    seats: replay.seats.length,
    seatName: (seat) => `seat ${seat}${bots.has(seat) ? " (bot)" : ""}`,
    toAct: [],
    view: replay.final,
  };
  // A series' end holds each leg's table, revealed; a single game's end is its one table.
  const legs = Array.isArray(replay.final.legs) ? replay.final.legs.filter(isObject) : [];
  const tables =
    legs.length > 0 && legs.every((leg) => Object.keys(leg).length > 2)
      ? legs.map((leg, index) =>
          h(
            "section",
            { class: "leg-table" },
            h("h3", {}, `Game ${typeof leg.leg === "number" ? leg.leg : index + 1}`),
            drawTable(leg, ctx),
          ),
        )
      : [drawTable(replay.final, ctx)];
  return {
    table: h("div", { class: "tabletop match-table" }, ...tables),
    event: (kind, data) => eventText(kind, data, ctx),
    loadout: (value) =>
      value === null || value === undefined ? "no loadout" : capitalised(describe(value, "", ctx)),
    name,
  };
}
