// #/games: every game GET /v1/games offers, each with "Play now" (the matchmaking queue), a new
// match (its seats, which of them bots), the open matches to join and your matches to go back
// to. A game that takes a loadout offers it as a form generated from its JSON Schema, with the
// game's ready-made legal loadout chosen, so that one click plays.

import { CryptidError, type GameInfo, type MatchList } from "cryptid-client";
import { type App, h, type Screen } from "../app.js";
import { type Control, optionSchema, schemaControl } from "./form.js";
import { Names } from "./names.js";
import { capitalised, isObject, type Json, words } from "./render.js";

type MatchSummary = MatchList["matches"][number];

const LIST_LIMIT = 100;
/** The lists are read again this often while the screen is open, for matches opened meanwhile. */
const LIST_EVERY_MS = 15_000;
const OPEN = new Set(["waiting", "active"]);

interface Setup {
  seats: number;
  options: Json;
  loadout?: unknown;
}

export const gamesScreen: Screen = (root, app) => {
  const screen = new AbortController();
  drawGames(root, app, screen.signal).catch((error: unknown) => {
    if (!screen.signal.aborted) app.fail(error);
  });
  return () => screen.abort();
};

async function drawGames(root: HTMLElement, app: App, screen: AbortSignal): Promise<void> {
  const heading = h("h1", {}, "Table games");
  root.replaceChildren(heading, h("p", {}, "Loading the games…"));
  const games = await app.client.games();
  const catalogues = await Promise.all(
    games.map((game) => app.client.catalogue(game.id, game.ruleset).catch(() => null)),
  );
  if (screen.aborted) return;
  const sections = games.map(
    (game, index) => new GameSection(app, game, new Names(catalogues[index] ?? null), screen),
  );
  const refresh = async () => {
    const [lobby, mine] = await Promise.all([
      app.client.matches.lobby({ limit: LIST_LIMIT }),
      app.client.matches.mine({ limit: LIST_LIMIT }),
    ]);
    for (const section of sections) section.lists(lobby.matches, mine.matches);
  };
  const again = () => {
    refresh().catch((error: unknown) => {
      if (!screen.aborted) app.fail(error);
    });
  };
  const button = h("button", { type: "button", class: "refresh" }, "Refresh the lists");
  button.addEventListener("click", again);
  root.replaceChildren(
    h(
      "div",
      { class: "tabletop games-screen" },
      heading,
      h(
        "p",
        { class: "intro" },
        "Play now seats you with players near your rating, or bots when nobody comes. " +
          "Or make a match of your own, or join one.",
        " ",
        button,
      ),
      h("div", { class: "games" }, ...sections.map((section) => section.element)),
    ),
  );
  await refresh();
  const every = setInterval(again, LIST_EVERY_MS);
  screen.addEventListener("abort", () => clearInterval(every));
}

class GameSection {
  readonly element: HTMLElement;
  private readonly seats: HTMLSelectElement;
  private readonly bots = h("fieldset", { class: "bots" });
  private readonly options: [string, Control][];
  private loadout: Control | null = null;
  private readonly loadoutSlot = h("div", { class: "loadout" });
  private readonly searching = h("p", { class: "searching", role: "status" });
  private readonly mine = h("ul", { class: "match-list mine" });
  private readonly open = h("ul", { class: "match-list open" });
  private readonly name: string;
  private readonly playNowButton = h(
    "button",
    { type: "button", class: "primary play-now" },
    "Play now",
  );

  constructor(
    private readonly app: App,
    private readonly game: GameInfo,
    private readonly names: Names,
    private readonly screen: AbortSignal,
  ) {
    const id = game.id;
    this.name = game.name;
    this.seats = h("select", { id: `seats-${id}`, name: "seats" });
    for (let n = game.min_seats; n <= game.max_seats; n += 1) {
      this.seats.append(h("option", { value: String(n) }, String(n)));
    }
    this.seats.addEventListener("change", () => this.drawBots());
    this.drawBots();
    this.options = Object.entries(game.options).map(([option, spec]) => {
      const schema = isObject(spec) ? spec : {};
      const control = schemaControl(optionSchema(schema), schema.default, option, names);
      if (typeof schema.description === "string") {
        control.element.append(h("p", { class: "note" }, schema.description));
      }
      return [option, control];
    });
    if (isObject(game.loadout)) this.suggest();
    const suggest = h("button", { type: "button" }, "Suggested loadout");
    suggest.addEventListener("click", () => this.suggest());
    const more =
      this.options.length > 0 || this.loadout !== null
        ? h(
            "details",
            { class: "setup-more" },
            h(
              "summary",
              {},
              this.loadout !== null
                ? "Options and loadout (a suggested loadout is chosen)"
                : "Options",
            ),
            ...this.options.map(([, control]) => control.element),
            this.loadout !== null ? h("div", { class: "loadout-tools" }, suggest) : null,
            this.loadoutSlot,
          )
        : null;
    this.playNowButton.addEventListener("click", () => this.playNow());
    const create = h("button", { type: "button", class: "create" }, "New match");
    create.addEventListener("click", () => this.create());
    const headingId = `game-${id}`;
    this.searching.hidden = true;
    this.element = h(
      "section",
      { class: "game", "data-game": id, "aria-labelledby": headingId },
      h("h2", { id: headingId }, this.name),
      h(
        "p",
        { class: "meta" },
        game.min_seats === game.max_seats
          ? `${game.min_seats} seats`
          : `${game.min_seats}–${game.max_seats} seats`,
      ),
      h(
        "div",
        { class: "setup" },
        h("div", { class: "control" }, h("label", { for: this.seats.id }, "Seats"), this.seats),
        more,
      ),
      h("div", { class: "go" }, this.playNowButton),
      this.searching,
      h("div", { class: "go create" }, this.bots, create),
      h("h3", {}, "Your matches"),
      this.mine,
      h("h3", {}, "Open matches"),
      this.open,
    );
  }

  private suggest(): void {
    this.loadout = schemaControl(
      this.game.loadout as Json,
      this.game.sample_loadout,
      "loadout",
      this.names,
    );
    this.loadoutSlot.replaceChildren(this.loadout.element);
  }

  /** Which seats of a new match bots take: all but yours, unless you say otherwise. */
  private drawBots(): void {
    const seats = Number(this.seats.value);
    const boxes = Array.from({ length: seats }, (_, seat) => {
      const id = `bot-${this.game.id}-${seat}`;
      const box = h("input", { id, type: "checkbox", value: String(seat) });
      box.checked = seat > 0;
      return h("span", { class: "control check" }, box, h("label", { for: id }, `seat ${seat}`));
    });
    this.bots.replaceChildren(h("legend", {}, "Bots in your new match"), ...boxes);
  }

  private setup(): Setup {
    const options: Json = {};
    for (const [option, control] of this.options) options[option] = control.read();
    const setup: Setup = { seats: Number(this.seats.value), options };
    if (this.loadout !== null) {
      const loadout = this.loadout.read();
      // A loadout field named after one of the game's options plays that option (the loyalty
      // game's `mode`), so the two always agree.
      if (isObject(loadout)) {
        for (const option of Object.keys(options))
          if (option in loadout) loadout[option] = options[option];
      }
      setup.loadout = loadout;
    }
    return setup;
  }

  private create(): void {
    const run = async () => {
      const setup = this.setup();
      const bots = Array.from(this.bots.querySelectorAll("input"))
        .filter((box) => box.checked && Number(box.value) < setup.seats)
        .map((box) => Number(box.value));
      const joined = await this.app.client.matches.create({ game: this.game.id, bots, ...setup });
      this.app.go(`#/matches/${joined.match_id}`);
    };
    run().catch((error: unknown) => this.app.fail(error));
  }

  private join(matchId: string): void {
    const run = async () => {
      const { loadout } = this.setup();
      await this.app.client.matches.join(matchId, loadout === undefined ? {} : { loadout });
      this.app.go(`#/matches/${matchId}`);
    };
    run().catch((error: unknown) => this.app.fail(error));
  }

  /** Queue for a match; the search shows, and can be cancelled, until a seat is found. */
  private playNow(): void {
    const search = new AbortController();
    const stop = () => search.abort();
    this.playNowButton.disabled = true;
    this.screen.addEventListener("abort", stop);
    const cancel = h("button", { type: "button", class: "cancel" }, "Cancel");
    cancel.addEventListener("click", stop);
    this.searching.replaceChildren(`Searching for a ${this.name} match… `, cancel);
    this.searching.hidden = false;
    cancel.focus();
    this.queue(search.signal)
      .then(
        (matchId) => this.app.go(`#/matches/${matchId}`),
        (error: unknown) => {
          if (this.screen.aborted) return;
          this.playNowButton.disabled = false;
          if (error instanceof CryptidError && error.code === "ticket_cancelled") {
            this.searching.replaceChildren("Search cancelled.");
            this.playNowButton.focus();
          } else {
            this.searching.hidden = true;
            this.app.fail(error);
          }
        },
      )
      .finally(() => this.screen.removeEventListener("abort", stop));
  }

  /** The match the queue seats you in; a search of yours left over (a reload) is called off. */
  private async queue(signal: AbortSignal): Promise<string> {
    const request = { game: this.game.id, ...this.setup() };
    for (let attempt = 0; ; attempt += 1) {
      try {
        return (await this.app.client.matchmaking.queue(request, { signal })).match_id;
      } catch (error) {
        const left =
          error instanceof CryptidError && error.code === "ticket_exists"
            ? error.details.ticket_id
            : null;
        if (typeof left !== "string" || attempt > 0) throw error;
        const ticket = await this.app.client.matchmaking
          .cancelTicket(left)
          .catch(async (refused: unknown) => {
            if (refused instanceof CryptidError && refused.code === "ticket_not_searching") {
              return this.app.client.matchmaking.ticket(left);
            }
            throw refused;
          });
        if (ticket.status === "matched" && ticket.match_id !== null) return ticket.match_id;
      }
    }
  }

  /** Your matches of this game not over, and the open ones you may join. */
  lists(lobby: MatchSummary[], mine: MatchSummary[]): void {
    const id = this.game.id;
    const yours = mine.filter((match) => match.game === id && OPEN.has(match.status));
    this.mine.replaceChildren(
      ...(yours.length === 0
        ? [h("li", { class: "nothing" }, "None.")]
        : yours.map((match) =>
            h(
              "li",
              { "data-match": match.match_id },
              h(
                "a",
                { href: `#/matches/${match.match_id}` },
                `${capitalised(match.status)} match of ${match.seats} seats, ` +
                  `started ${when(match.created_at)}`,
              ),
              match.asked ? h("span", { class: "flag" }, "your turn") : null,
            ),
          )),
    );
    const joinable = lobby.filter(
      (match) => match.game === id && match.seat === null && match.free_seats > 0,
    );
    this.open.replaceChildren(
      ...(joinable.length === 0
        ? [h("li", { class: "nothing" }, "None waiting.")]
        : joinable.map((match) => {
            const join = h("button", { type: "button" }, "Join");
            join.addEventListener("click", () => this.join(match.match_id));
            const options = Object.entries(match.options)
              .map(([option, value]) => `${words(option)} ${words(String(value))}`)
              .join(", ");
            return h(
              "li",
              { "data-match": match.match_id },
              `${match.seats} seats, ${match.free_seats} free${options ? ` · ${options}` : ""}`,
              match.by_operator ? " · by an operator" : "",
              ...match.notices.map((notice) => h("span", { class: "notice" }, notice)),
              " ",
              join,
            );
          })),
    );
  }
}

function when(timestamp: string): string {
  const date = new Date(timestamp);
  return Number.isNaN(date.getTime()) ? timestamp : date.toLocaleString();
}
