// One table renderer for every game, drawn from a view and the catalogue alone, in the one shape
// every game's view has (docs/architecture.md#views): zones are `{count, cards}` (`cards` null
// where you may not look), a card is `{id, card, …}` named by the catalogue, seats are integers
// (per-seat data is a list indexed by seat, or objects with a `seat`), and what is in play keeps
// its `printed` values beside the current ones. The same words describe prompts' actions and
// events, so a card is called by one name everywhere.

import { h } from "../app.js";
import { type GameHints, isSeatField } from "./hints.js";
import type { Entry, Names } from "./names.js";

export interface TableContext {
  hints: GameHints;
  names: Names;
  /** The seat the view is for; null for a spectator or a replay. */
  seat: number | null;
  /** How many seats the match has. */
  seats: number;
  /** A seat as the player reads it ("you", "seat 1 (bot)"). */
  seatName(seat: number): string;
  /** The seats asked something now. */
  toAct: readonly number[];
  /** The view drawn, for what the actions name by their place in it. */
  view: Json | null;
}

export type Json = Record<string, unknown>;
type Zone = { count: number; cards: unknown[] | null };
type Card = Json & { card: string };

export const isObject = (value: unknown): value is Json =>
  value !== null && typeof value === "object" && !Array.isArray(value);

const isZone = (value: unknown): value is Zone =>
  isObject(value) &&
  typeof value.count === "number" &&
  (value.cards === null || Array.isArray(value.cards));

const isCard = (value: unknown): value is Card => isObject(value) && typeof value.card === "string";

const isScalar = (value: unknown): value is string | number | boolean | bigint =>
  ["string", "number", "boolean", "bigint"].includes(typeof value);

/** The view's envelope and a replay's secrets: shown elsewhere (or never), not on the table. */
const ENVELOPE = new Set(["game", "ruleset", "seat", "seed", "rng", "to_act", "outcome"]);
/** A series' own fields (docs/architecture.md#series), shown in the match's header. */
const SERIES = new Set(["best_of", "leg", "score", "legs", "inner"]);
/** Parts of a card that are drawn as its name or not at all. */
const CARD_OWN = new Set(["id", "card", "name", "printed", "seat", "index"]);
/** An event's details are cut after this many characters: the table shows the rest. */
const EVENT_DETAILS = 160;
/** Flags whose usual value is true: only their absence is news. */
const USUALLY_TRUE = new Set(["alive", "standing"]);

/** A field name in words: `attack_zone` → "attack zone". */
export function words(key: string): string {
  return key.replace(/[_-]+/g, " ").trim();
}

export function capitalised(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** One value as text: seats by name, cards by their catalogue name, other words spaced out. */
export function scalarText(key: string, value: unknown, ctx: TableContext): string {
  if (typeof value === "boolean") return value ? "yes" : "no";
  if (typeof value === "number" && Number.isInteger(value) && isSeatField(ctx.hints, key)) {
    return ctx.seatName(value);
  }
  if (typeof value === "string") {
    const entry = ctx.names.entry(value);
    return entry !== undefined ? entry.name : value.includes(" ") ? value : words(value);
  }
  return String(value);
}

/** Any value in a few words, for action buttons, events and prompt data. */
export function describe(value: unknown, key: string, ctx: TableContext, depth = 0): string {
  if (value === null || value === undefined) return "none";
  if (isScalar(value)) return scalarText(key, value, ctx);
  if (Array.isArray(value)) {
    if (value.length === 0) return "none";
    const joiner = value.every(Array.isArray) ? " > " : ", ";
    return value.map((item) => describe(item, key, ctx, depth + 1)).join(joiner);
  }
  if (isCard(value)) return ctx.names.name(value.card);
  if (isZone(value)) {
    if (value.cards === null) return `${value.count} hidden`;
    return value.cards.length === 0 ? "none" : describe(value.cards, key, ctx, depth + 1);
  }
  if (depth > 3 || !isObject(value)) return "…";
  const parts = Object.entries(value)
    .filter(([field, item]) => !CARD_OWN.has(field) && item !== null && item !== undefined)
    .map(([field, item]) => `${words(field)} ${describe(item, field, ctx, depth + 1)}`);
  const seat = value.seat;
  if (typeof seat === "number") parts.unshift(ctx.seatName(seat));
  return parts.join(", ");
}

/** An action as its button says it: its type, then what it names ("Play: Lobo de niebla"). */
export function actionText(action: Json, ctx: TableContext): string {
  const type = typeof action.type === "string" ? capitalised(words(action.type)) : "Action";
  const named = new Map<string, string>();
  const folded = new Set(["type", "loses"]);
  for (const [field, hint] of Object.entries(ctx.hints.indexes)) {
    const index = action[field];
    const seat = hint.seat === undefined ? ctx.seat : action[hint.seat];
    const card = typeof index === "number" ? indexed(ctx, hint.zone, seat, index) : undefined;
    if (card === undefined) continue;
    const name = ctx.names.name(card.card);
    if (hint.seat === undefined || typeof seat !== "number") {
      named.set(field, name);
    } else {
      // The seat that owns the card is said with it, not apart.
      named.set(field, seat === ctx.seat ? `your ${name}` : `${ctx.seatName(seat)}'s ${name}`);
      folded.add(hint.seat);
    }
  }
  const parts = Object.entries(action)
    .filter(([field]) => !folded.has(field))
    .map(([field, value]) => {
      // A seat or a card is said by its name alone; anything else with its field's name.
      if (field === "seat" || field === "card" || isCard(value)) return describe(value, field, ctx);
      return `${words(field)} ${named.get(field) ?? describe(value, field, ctx)}`;
    });
  return parts.length === 0 ? type : `${type}: ${parts.join(", ")}`;
}

/** The card at `index` of a list on the table, or of a zone of `seat`'s record. */
function indexed(ctx: TableContext, zone: string, seat: unknown, index: number): Card | undefined {
  const view = ctx.view;
  if (view === null) return undefined;
  const body = isObject(view.inner) ? view.inner : view;
  const list = body[zone];
  if (Array.isArray(list)) return isCard(list[index]) ? list[index] : undefined;
  if (typeof seat !== "number") return undefined;
  for (const value of Object.values(body)) {
    if (!Array.isArray(value)) continue;
    const record = value.find((item) => isObject(item) && item.seat === seat) ?? value[seat];
    const cards = isObject(record) && isZone(record[zone]) ? record[zone].cards : null;
    const card = cards?.[index];
    if (isCard(card)) return card;
  }
  return undefined;
}

/** An event as the log says it: who did it, what happened, and its details. */
export function eventText(kind: string, data: Json, ctx: TableContext): string {
  const what = capitalised(words(kind));
  const rest: Json = { ...data };
  let who = "";
  if (typeof rest.seat === "number") {
    who = `${capitalised(ctx.seatName(rest.seat))}: `;
    delete rest.seat;
  }
  const details = describe(rest, "", ctx);
  const short = details.length > EVENT_DETAILS ? `${details.slice(0, EVENT_DETAILS)}…` : details;
  return `${who}${what}${short ? ` (${short})` : ""}`;
}

// -- the table ------------------------------------------------------------------------------

/** Whether `value` holds one entry per seat, each naming its seat (`crews`, `players`). */
function isSeatList(value: unknown, seats: number): value is Json[] {
  if (!Array.isArray(value) || value.length !== seats || seats === 0) return false;
  const named = value.map((item) => (isObject(item) ? item.seat : undefined));
  return named.every((seat, index) => named.indexOf(seat) === index && typeof seat === "number");
}

/**
 * Whether `value` is a list indexed by seat: of zones (`hands`, `decks`) or of records (`sides`).
 * A list of cards (`dice`) is what lies on the table, whatever its length.
 */
function isSeatIndexed(key: string, value: unknown, ctx: TableContext): value is unknown[] {
  if (!Array.isArray(value) || value.length !== ctx.seats || ctx.seats === 0) return false;
  if (value.every((item) => isZone(item) || (isObject(item) && !isCard(item)))) return true;
  return value.every(isScalar) && !isSeatField(ctx.hints, key);
}

/** The view's table: the other seats, what is shared, then your own seat. */
export function drawTable(view: Json, ctx: TableContext): HTMLElement {
  ctx.names.learn(view);
  const body = isObject(view.inner) ? view.inner : view;
  const shared: [string, unknown][] = [];
  const perSeat: [string, unknown][][] = Array.from({ length: ctx.seats }, () => []);
  for (const [key, value] of Object.entries(body)) {
    if (ENVELOPE.has(key) || (body === view && SERIES.has(key))) continue;
    if (value === null || value === undefined) continue;
    const onTable = ctx.hints.shared.includes(key);
    if (!onTable && isSeatList(value, ctx.seats)) {
      for (const item of value) perSeat[item.seat as number]?.push([key, item]);
    } else if (!onTable && isSeatIndexed(key, value, ctx)) {
      value.forEach((item, seat) => perSeat[seat]?.push([key, item]));
    } else {
      shared.push([key, value]);
    }
  }
  const seatArea = (seat: number) => {
    const asked = ctx.toAct.includes(seat);
    const area = h(
      "section",
      {
        class: `area seat${seat === ctx.seat ? " mine" : ""}${asked ? " asked" : ""}`,
        "data-seat": String(seat),
        "aria-label": capitalised(ctx.seatName(seat)),
      },
      h(
        "h3",
        {},
        capitalised(ctx.seatName(seat)),
        asked ? h("span", { class: "flag" }, "to play") : null,
      ),
    );
    const entries: [string, unknown][] = [];
    for (const [key, value] of perSeat[seat] ?? []) {
      // A seat's own record (a crew, a player, a side) is spread out over its area.
      if (isObject(value) && !isCard(value) && !isZone(value)) {
        const printed = isObject(value.printed) ? value.printed : {};
        for (const [field, item] of Object.entries(value)) {
          if (!CARD_OWN.has(field)) entries.push([field, withPrinted(item, printed[field])]);
        }
      } else {
        entries.push([key, value]);
      }
    }
    area.append(...drawFields(entries, ctx));
    return area;
  };
  const seats = Array.from({ length: ctx.seats }, (_, seat) => seat);
  const others = seats.filter((seat) => seat !== ctx.seat);
  const table = h("div", { class: "table" });
  if (others.length > 0) table.append(h("div", { class: "others" }, ...others.map(seatArea)));
  if (shared.length > 0) {
    table.append(
      h(
        "section",
        { class: "area shared", "aria-label": "On the table" },
        ...drawFields(shared, ctx),
      ),
    );
  }
  if (ctx.seat !== null && ctx.seat < ctx.seats) table.append(seatArea(ctx.seat));
  return table;
}

/** A value spread out of its record keeps that record's printed value beside it. */
class Printed {
  constructor(
    readonly now: unknown,
    readonly printed: unknown,
  ) {}
}

function withPrinted(value: unknown, printed: unknown): unknown {
  return printed === undefined || isObject(value) ? value : new Printed(value, printed);
}

/** Fields drawn in order: plain values as a list of facts first, then zones, cards and groups. */
export function drawFields(entries: [string, unknown][], ctx: TableContext): HTMLElement[] {
  const facts = h("dl", { class: "facts" });
  const blocks: HTMLElement[] = [];
  for (const [key, raw] of entries) {
    const value = raw instanceof Printed ? raw.now : raw;
    const printed = raw instanceof Printed ? raw.printed : undefined;
    if (value === null || value === undefined) continue;
    if (isScalar(value)) {
      facts.append(fact(key, number(key, value, printed, ctx)));
    } else if (isZone(value)) {
      blocks.push(drawZone(key, value, ctx));
    } else if (isCard(value)) {
      blocks.push(group(key, h("div", { class: "tiles" }, drawCard(value, ctx))));
    } else if (Array.isArray(value)) {
      if (value.length === 0) continue;
      if (value.every(isCard)) {
        blocks.push(
          group(key, h("div", { class: "tiles" }, ...value.map((c) => drawCard(c, ctx)))),
        );
      } else if (value.every(isObject)) {
        const items = value.map((item, index) =>
          h(
            "section",
            { class: "item" },
            h(
              "h5",
              {},
              typeof item.seat === "number" ? capitalised(ctx.seatName(item.seat)) : `${index + 1}`,
            ),
            ...drawFields(
              Object.entries(item).filter(([field]) => field !== "seat"),
              ctx,
            ),
          ),
        );
        blocks.push(group(key, h("div", { class: "items" }, ...items)));
      } else {
        facts.append(fact(key, describe(value, key, ctx)));
      }
    } else if (isObject(value)) {
      const printedOf = isObject(value.printed) ? value.printed : {};
      const inner = Object.entries(value)
        .filter(([field]) => field !== "printed")
        .map(([field, item]): [string, unknown] => [field, withPrinted(item, printedOf[field])]);
      blocks.push(group(key, ...drawFields(inner, ctx)));
    }
  }
  return facts.childElementCount > 0 ? [facts, ...blocks] : blocks;
}

function fact(key: string, value: Node | string): HTMLElement {
  return h("div", { "data-field": key }, h("dt", {}, capitalised(words(key))), h("dd", {}, value));
}

function group(key: string, ...children: Node[]): HTMLElement {
  return h(
    "section",
    { class: "group", "data-field": key },
    h("h4", {}, capitalised(words(key))),
    ...children,
  );
}

/** A value with its printed one beside it when they differ ("4, printed 6"). */
function number(key: string, value: unknown, printed: unknown, ctx: TableContext): Node | string {
  const text = scalarText(key, value, ctx);
  if (printed === undefined || printed === value) return text;
  const up = typeof value === "number" && typeof printed === "number" && value > printed;
  return h(
    "span",
    { class: `changed ${up ? "up" : "down"}` },
    text,
    h("span", { class: "printed" }, ` (printed ${scalarText(key, printed, ctx)})`),
  );
}

function drawZone(key: string, zone: Zone, ctx: TableContext): HTMLElement {
  const cards =
    zone.cards === null
      ? [h("div", { class: "tile back" }, `${zone.count} hidden`)]
      : zone.cards.map((card) =>
          isCard(card)
            ? drawCard(card, ctx)
            : h("div", { class: "tile" }, describe(card, key, ctx)),
        );
  return h(
    "section",
    { class: "group zone", "data-field": key, "data-count": String(zone.count) },
    h("h4", {}, capitalised(words(key)), " ", h("span", { class: "count" }, String(zone.count))),
    cards.length > 0 ? h("div", { class: "tiles" }, ...cards) : h("p", { class: "empty" }, "empty"),
  );
}

/** A card: its catalogue name and kind, its numbers (now, and printed where they differ), its
 * marks and its text. */
export function drawCard(card: Card, ctx: TableContext): HTMLElement {
  const entry: Entry | undefined = ctx.names.entry(card.card);
  const name = entry?.name ?? (typeof card.name === "string" ? card.name : card.card);
  const printed = isObject(card.printed) ? card.printed : {};
  const numbers = h("dl", { class: "card-numbers" });
  const marks: string[] = [];
  const inside: HTMLElement[] = [];
  let out = false;
  const shown = new Set<string>();
  const addNumber = (field: string, value: unknown, was: unknown) => {
    shown.add(field);
    numbers.append(fact(field, number(field, value, was, ctx)));
  };
  for (const [field, value] of Object.entries(card)) {
    if (CARD_OWN.has(field) || value === null || value === undefined) continue;
    if (typeof value === "number" || typeof value === "bigint") {
      addNumber(field, value, printed[field]);
    } else if (typeof value === "boolean") {
      if (USUALLY_TRUE.has(field)) out ||= !value;
      else if (value) marks.push(words(field));
    } else if (typeof value === "string") {
      marks.push(scalarText(field, value, ctx));
    } else if (isCard(value)) {
      inside.push(drawCard(value, ctx));
    } else if (isZone(value)) {
      inside.push(drawZone(field, value, ctx));
    } else if (isObject(value) && Object.values(value).every((v) => typeof v === "number")) {
      const was = isObject(printed[field]) ? printed[field] : {};
      for (const [part, n] of Object.entries(value)) addNumber(part, n, was[part]);
    } else if (Array.isArray(value) && value.length > 0) {
      const text = value.every((v) => typeof v === "number")
        ? value.join("/")
        : value
            .map((v) =>
              isObject(v) && typeof v.name === "string" ? v.name : describe(v, field, ctx),
            )
            .join(", ");
      numbers.append(fact(field, text));
    }
  }
  // A card in play carries its numbers, current and printed; one in a hand or a deck, only
  // its name: its numbers are the catalogue's.
  if (shown.size === 0) {
    for (const [field, value] of Object.entries(entry?.numbers ?? {})) {
      if (typeof value === "number") addNumber(field, value, undefined);
    }
  }
  if (out) marks.unshift("out");
  const kind = [entry?.kind, entry?.family].filter(
    (part): part is string => typeof part === "string",
  );
  const own = [
    h("h5", { class: "card-name" }, name),
    kind.length > 0 ? h("p", { class: "card-kind" }, kind.map(words).join(" · ")) : null,
    numbers.childElementCount > 0 ? numbers : null,
    marks.length > 0
      ? h("p", { class: "marks" }, ...marks.map((m) => h("span", { class: "mark" }, m)))
      : null,
    entry?.text ? h("p", { class: "card-text" }, entry.text) : null,
  ];
  const attributes = {
    "data-card": card.card,
    "data-id": typeof card.id === "string" ? card.id : undefined,
  };
  if (inside.length === 0) {
    return h("article", { class: `tile${out ? " out" : ""}`, ...attributes }, ...own);
  }
  // A card that holds others (a necromancer and his troops) lays them out beside itself.
  return h(
    "article",
    { class: `tile holder${out ? " out" : ""}`, ...attributes },
    h("div", { class: "own" }, ...own),
    h("div", { class: "tiles" }, ...inside),
  );
}
