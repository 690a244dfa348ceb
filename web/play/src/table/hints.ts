// The little the table renderer is told about each game beyond what its view's shape says: which
// integer fields hold seats
// (docs/architecture.md#views: seats are integers, and so are counters), which top-level fields
// lie on the table though their shape could be a seat's, and which fields of an action name a card
// by its place (a model by its index in the crew). Everything else is drawn from the view alone.

/** An action's field that names a card by its index. */
export interface IndexHint {
  /** The cards indexed: a list on the table (`dice`), or a zone of a seat's record (`models`). */
  zone: string;
  /** The action's field naming the seat whose zone it is; without one, the player's own. */
  seat?: string;
}

export interface GameHints {
  /** Fields whose integers are seats, besides those every game shares (SEAT_FIELDS). */
  seats: readonly string[];
  /** Top-level fields shared by the table: a stack of entries, each with its seat, is one. */
  shared: readonly string[];
  /** Fields of actions that name a card by its index. */
  indexes: Readonly<Record<string, IndexHint>>;
}

/** Fields that hold seats in every game: the kernel's own (to_act, outcome) and the usual words. */
export const SEAT_FIELDS: ReadonlySet<string> = new Set([
  "seat",
  "to_act",
  "winners",
  "ranking",
  "first",
  "chooser",
  "order",
  "queue",
  "eliminated",
  "by",
]);

const HINTS: Readonly<Record<string, GameHints>> = {
  necromancers: {
    seats: ["current", "target"],
    shared: [],
    indexes: { die: { zone: "dice" } },
  },
  "fate-duel": {
    seats: [],
    shared: [],
    indexes: { model: { zone: "models" }, target: { zone: "models", seat: "target_seat" } },
  },
  loyalty: {
    seats: ["active", "responder"],
    shared: ["stack"],
    indexes: {},
  },
  medianokte: {
    seats: ["turn", "nave", "owner"],
    shared: [],
    indexes: {},
  },
};

export function hintsFor(game: string): GameHints {
  return HINTS[game] ?? { seats: [], shared: [], indexes: {} };
}

/** Whether an integer under `field` is a seat in `game`. */
export function isSeatField(hints: GameHints, field: string): boolean {
  return SEAT_FIELDS.has(field) || field.endsWith("_seat") || hints.seats.includes(field);
}
