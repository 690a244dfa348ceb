// #/matches/ID: one match at its table. The match is read, then followed over its WebSocket from
// the last event read (client.matches.follow resumes after a drop), so a reload comes back to the
// same table and prompt. Your prompt's actions are buttons and its parameters controls, sent with
// the version shown; a refusal says why (app.fail). At the end: the outcome and what the match did
// to your rating for the game (GET /v1/players/me `ratings`, before and after).

import {
  type ActionDone,
  CryptidError,
  type FollowHandle,
  type GameInfo,
  type MatchState,
  type WireEvent,
} from "cryptid-client";
import { type App, h, type Screen } from "../app.js";
import { type Control, optionSchema, schemaControl } from "./form.js";
import { type GameHints, hintsFor } from "./hints.js";
import { Names } from "./names.js";
import {
  actionText,
  capitalised,
  describe,
  drawFields,
  drawTable,
  eventText,
  isObject,
  type Json,
  type TableContext,
  words,
} from "./render.js";

/** The log keeps this many events on screen; older ones are still in the replay. */
const LOG_LENGTH = 300;
/** Pages of events read at most when (re)opening a match; the follower reads on from there. */
const HISTORY_PAGES = 20;
const OVER = new Set(["finished", "expired"]);

interface Standing {
  rating: number;
  matches: number;
}

export const matchScreen: Screen = (root, app, params) => {
  const table = new MatchTable(root, app, params[0] ?? "");
  table.start().catch((error: unknown) => table.failed(error));
  return () => table.stop();
};

class MatchTable {
  private state: MatchState | null = null;
  private names = new Names(null);
  private hints: GameHints = hintsFor("");
  private info: GameInfo | undefined;
  private follower: FollowHandle | null = null;
  private stopped = false;
  private sending = false;
  /** Settles when the action being sent has its answer (or its refusal). */
  private sent: Promise<void> = Promise.resolve();
  private reading: Promise<void> | null = null;
  private readAgain = false;
  private shownPrompt = "";
  private ended = false;
  private readonly seen = new Set<number>();
  private readonly section = h("section", {
    class: "tabletop match-screen",
    "aria-labelledby": "match-title",
  });
  private readonly title = h("h1", { id: "match-title" }, "Match");
  private readonly turn = h("p", { id: "turn", class: "whose-turn", "aria-live": "polite" });
  private readonly series = h("p", { id: "series", class: "series", hidden: "" });
  private readonly deadline = h("p", { class: "deadline", hidden: "" });
  private readonly prompt = h("section", {
    id: "prompt",
    class: "prompt",
    "aria-labelledby": "prompt-title",
  });
  private readonly end = h("section", {
    id: "end",
    class: "end",
    hidden: "",
    "aria-live": "polite",
  });
  private readonly tools = h("section", { class: "tools", "aria-label": "Your seat" });
  private readonly table = h("div", { id: "table", class: "table-area" });
  private readonly log = h("ol", { id: "log", class: "log" });
  private readonly latest = h("p", { id: "latest", class: "latest", "aria-live": "polite" });

  constructor(
    root: HTMLElement,
    private readonly app: App,
    private readonly matchId: string,
  ) {
    this.section.dataset.match = matchId;
    this.section.append(
      h("header", { class: "match-head" }, this.title, this.turn, this.series, this.deadline),
      h(
        "div",
        { class: "match-body" },
        h("aside", { class: "side" }, this.prompt, this.end, this.tools),
        this.table,
        h(
          "section",
          { class: "moves", "aria-labelledby": "moves-title" },
          h("h2", { id: "moves-title" }, "Moves"),
          this.latest,
          this.log,
        ),
      ),
    );
    this.table.append(h("p", {}, "Loading the match…"));
    root.replaceChildren(this.section);
  }

  async start(): Promise<void> {
    const client = this.app.client;
    const state = await client.matches.get(this.matchId);
    if (this.stopped) return;
    this.hints = hintsFor(state.game);
    const [catalogue, games] = await Promise.all([
      client.catalogue(state.game, state.ruleset),
      client.games(),
      OVER.has(state.status) ? null : this.keepStanding(state.game),
    ]);
    this.names = new Names(catalogue);
    this.info = games.find((game) => game.id === state.game);
    this.state = state; // the seats, to name them in the events read next
    // What happened so far, then the match as it is, then what happens next as it comes.
    let after = 0;
    for (let page = 0; page < HISTORY_PAGES; page += 1) {
      const batch = await client.matches.events(this.matchId, { after, wait: 0 });
      this.record(batch.events, false);
      if (batch.events.length === 0 || batch.last_seq <= after) break;
      after = batch.last_seq;
    }
    if (this.stopped) return;
    this.show(await client.matches.get(this.matchId));
    this.follower = client.matches.follow(this.matchId, {
      after,
      onBatch: async (batch) => {
        const fresh = batch.events.some((event) => !this.seen.has(event.seq));
        this.record(batch.events, true);
        // The events of our own action come back here too, often before its answer, which
        // carries the match as it left it: wait for that answer before reading the match again.
        await this.sent;
        const behind = (this.state?.version ?? -1) < batch.version;
        if ((fresh && behind) || batch.status !== this.state?.status) await this.refresh();
      },
      onError: (error) => this.failed(error),
    });
  }

  stop(): void {
    this.stopped = true;
    this.follower?.close();
  }

  failed(error: unknown): void {
    if (!this.stopped) this.app.fail(error);
  }

  // -- the match as it moves -------------------------------------------------------------------

  /** Read the match again; reads asked for meanwhile make one more read after it. */
  private async refresh(): Promise<void> {
    if (this.reading !== null) {
      this.readAgain = true;
      return this.reading;
    }
    this.reading = (async () => {
      do {
        this.readAgain = false;
        const state = await this.app.client.matches.get(this.matchId);
        if (this.stopped) return;
        this.show(state);
      } while (this.readAgain);
    })().finally(() => {
      this.reading = null;
    });
    return this.reading;
  }

  /** Draw `state` unless a newer one is drawn already (a read may overtake an answer). */
  private show(state: MatchState): void {
    const now = this.state;
    if (now !== null && state.version < now.version && !OVER.has(state.status)) return;
    this.state = state;
    this.draw();
  }

  private applyAnswer(done: ActionDone): void {
    if (this.state === null) return;
    this.record(done.events, true);
    this.show({
      ...this.state,
      version: done.version,
      status: done.status,
      to_act: done.to_act,
      prompt: done.prompt,
      view: done.view,
      legal_actions: done.legal_actions,
      outcome: done.outcome,
    });
  }

  private async act(version: number, action: Json): Promise<void> {
    if (this.sending) return;
    this.sending = true;
    let answered = () => {};
    this.sent = new Promise((resolve) => {
      answered = resolve;
    });
    this.prompt.setAttribute("aria-busy", "true");
    for (const control of this.prompt.querySelectorAll("button")) control.disabled = true;
    try {
      this.applyAnswer(await this.app.client.matches.act(this.matchId, { version, action }));
    } catch (error) {
      this.failed(error);
      // A stale version or a finished match: what is asked now is another question.
      if (!(error instanceof CryptidError && error.status === 422)) await this.refresh();
    } finally {
      this.sending = false;
      answered();
      this.prompt.removeAttribute("aria-busy");
      for (const control of this.prompt.querySelectorAll("button")) control.disabled = false;
    }
  }

  /** Put events in the log, once each, in order; `live` ones are also announced. */
  private record(events: WireEvent[], live: boolean): void {
    const fresh = events.filter((event) => !this.seen.has(event.seq));
    if (fresh.length === 0) return;
    fresh.sort((a, b) => a.seq - b.seq);
    const ctx = this.context();
    for (const event of fresh) {
      this.seen.add(event.seq);
      this.names.learn(event.data);
      const item = h(
        "li",
        // Numbered by the match's sequence: a gap is an event another seat alone may see.
        { value: String(event.seq), "data-seq": String(event.seq), "data-kind": event.kind },
        eventText(event.kind, event.data, ctx),
      );
      // An answer and a push may come in either order: the log keeps the match's.
      const later = Array.from(this.log.children).find(
        (other) => Number((other as HTMLElement).dataset.seq) > event.seq,
      );
      this.log.insertBefore(item, later ?? null);
    }
    while (this.log.childElementCount > LOG_LENGTH) this.log.firstElementChild?.remove();
    this.log.scrollTop = this.log.scrollHeight;
    const last = fresh[fresh.length - 1]!;
    if (live) this.latest.textContent = `Latest: ${eventText(last.kind, last.data, ctx)}`;
  }

  // -- drawing ---------------------------------------------------------------------------------

  private seatName(seat: number): string {
    const state = this.state;
    if (state === null) return `seat ${seat}`;
    if (seat === state.seat) return "you";
    const info = state.seats.find((s) => s.seat === seat);
    if (info?.bot) return `seat ${seat} (bot)`;
    if (info !== undefined && info.player_id === null) return `seat ${seat} (free)`;
    return `seat ${seat}`;
  }

  private context(): TableContext {
    const state = this.state;
    return {
      hints: this.hints,
      names: this.names,
      seat: state?.seat ?? null,
      seats: state?.seats.length ?? 0,
      seatName: (seat) => this.seatName(seat),
      toAct: state?.to_act ?? [],
      view: isObject(state?.view) ? (state.view as unknown as Json) : null,
    };
  }

  private draw(): void {
    const state = this.state;
    if (state === null) return;
    const ctx = this.context();
    this.section.dataset.status = state.status;
    this.section.dataset.game = state.game;
    this.title.textContent = this.info?.name ?? state.game;
    this.turn.textContent = this.turnText(state);
    const view = isObject(state.view) ? (state.view as unknown as Json) : null;
    this.drawSeries(view, ctx);
    this.deadline.hidden = state.turn_deadline === null || OVER.has(state.status);
    if (state.turn_deadline !== null) {
      const due = new Date(state.turn_deadline).toLocaleTimeString();
      this.deadline.textContent = `Turn timer: answer by ${due}, or the game answers for the seat.`;
    }
    if (view !== null) {
      this.table.replaceChildren(drawTable(view, ctx));
    } else {
      const free = state.seats.filter((s) => !s.bot && s.player_id === null).length;
      this.table.replaceChildren(
        h(
          "p",
          { class: "waiting" },
          `Waiting for players: ${free} of ${state.seats.length} seats free.`,
        ),
      );
    }
    this.drawPrompt(state, view, ctx);
    this.drawTools(state, view);
    if (OVER.has(state.status) && !this.ended) {
      this.ended = true;
      this.drawEnd(state, ctx).catch((error: unknown) => this.failed(error));
    }
  }

  private turnText(state: MatchState): string {
    if (state.status === "waiting") return "Waiting for players to join.";
    if (state.status === "expired") return "This match expired.";
    if (state.status === "finished") return "The match is over.";
    if (state.seat !== null && state.to_act.includes(state.seat)) return "Your turn.";
    if (state.to_act.length === 0) return "Nobody is asked anything now.";
    return `Waiting for ${state.to_act.map((seat) => this.seatName(seat)).join(", ")}.`;
  }

  private drawSeries(view: Json | null, ctx: TableContext): void {
    const score = view?.score;
    if (view === null || typeof view.best_of !== "number" || !Array.isArray(score)) {
      this.series.hidden = true;
      return;
    }
    const points = score.map((n, seat) => `${ctx.seatName(seat)} ${String(n)}`).join(", ");
    this.series.textContent = `Game ${String(view.leg)} of a best of ${view.best_of}: ${points}`;
    this.series.hidden = false;
  }

  private drawPrompt(state: MatchState, view: Json | null, ctx: TableContext): void {
    const prompt = state.status === "active" ? state.prompt : null;
    const key = JSON.stringify(prompt);
    this.prompt.dataset.version = String(state.version);
    // The same question keeps its controls (and what was typed in them) as other seats move.
    if (key === this.shownPrompt && this.prompt.childElementCount > 0) return;
    this.shownPrompt = key;
    const hadFocus = this.prompt.contains(document.activeElement);
    const heading = h("h2", { id: "prompt-title", tabindex: "-1" });
    if (prompt === null) {
      heading.textContent = state.status === "active" ? "Nothing to answer now" : "No move to make";
      this.prompt.dataset.kind = "";
      this.prompt.replaceChildren(heading);
      if (hadFocus) heading.focus();
      return;
    }
    this.prompt.dataset.kind = prompt.kind;
    heading.textContent = `Your move: ${words(prompt.kind)}`;
    // What the prompt tells beyond the table (the table already shows what the view holds).
    const table = isObject(view?.inner) ? view.inner : view;
    const data = Object.entries(prompt.data).filter(
      ([field, value]) => JSON.stringify(value) !== JSON.stringify(table?.[field]),
    );
    const version = () => Number(this.prompt.dataset.version);
    const actions = prompt.actions.map((action, index) => {
      const loses = action.loses === true;
      const button = h(
        "button",
        { type: "button", class: `action${loses ? " loses" : ""}`, "data-action": String(index) },
        actionText(action, ctx) + (loses ? " (loses the match)" : ""),
      );
      button.addEventListener("click", () => {
        void this.act(version(), action);
      });
      return button;
    });
    const forms = Object.entries(prompt.params).map(([type, fields]) =>
      this.paramForm(type, fields, version),
    );
    const parts = [heading];
    if (data.length > 0) parts.push(h("div", { class: "prompt-data" }, ...drawFields(data, ctx)));
    if (actions.length > 0) parts.push(h("div", { class: "answers" }, ...actions));
    this.prompt.replaceChildren(...parts, ...forms);
    // A new question is announced by its heading; the player then picks an answer.
    if (hadFocus) heading.focus();
  }

  /** A parameterised action: a control per parameter, from its schema, at its first legal value. */
  private paramForm(
    type: string,
    fields: Record<string, unknown>,
    version: () => number,
  ): HTMLElement {
    const controls: [string, Control][] = Object.entries(fields).map(([field, schema]) => [
      field,
      schemaControl(isObject(schema) ? schema : {}, undefined, field, this.names),
    ]);
    // The server checks the parameters and says what is wrong; the browser's own checks would
    // stop the form with no reason given.
    const form = h(
      "form",
      { class: "param", "data-type": type, novalidate: "" },
      h("h3", {}, capitalised(words(type))),
      ...controls.map(([, control]) => control.element),
      h("button", { type: "submit" }, `Send ${words(type)}`),
    );
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      try {
        const action: Json = { type };
        for (const [field, control] of controls) {
          const value = control.read();
          if (value !== undefined) action[field] = value;
        }
        void this.act(version(), action);
      } catch (error) {
        this.failed(error);
      }
    });
    return form;
  }

  private drawTools(state: MatchState, view: Json | null): void {
    if (state.seat === null || OVER.has(state.status)) {
      this.tools.replaceChildren();
      return;
    }
    if (this.tools.childElementCount > 0) return;
    const preferences = Object.entries(this.info?.preferences ?? {}).map(([name, option]) => {
      const now = view === null ? undefined : seatValue(view, state.seat ?? -1, name);
      const start = now ?? (isObject(option) ? option.default : undefined);
      const control = schemaControl(
        optionSchema(isObject(option) ? option : {}),
        start,
        name,
        this.names,
      );
      if (isObject(option) && typeof option.description === "string") {
        control.element.append(h("p", { class: "note" }, option.description));
      }
      control.element.addEventListener("change", () => {
        this.app.client.matches.prefer(this.matchId, { [name]: control.read() }).then(
          (done) => this.applyAnswer(done),
          (error: unknown) => this.failed(error),
        );
      });
      return control.element;
    });
    const resign = h("button", { type: "button", class: "resign" }, "Resign…");
    const sure = h(
      "p",
      { class: "confirm", hidden: "" },
      "Give up this match? ",
      h("button", { type: "button", class: "danger" }, "Resign the match"),
      " ",
      h("button", { type: "button" }, "Keep playing"),
    );
    const [yes, no] = Array.from(sure.querySelectorAll("button"));
    resign.addEventListener("click", () => {
      sure.hidden = false;
      no?.focus();
    });
    no?.addEventListener("click", () => {
      sure.hidden = true;
      resign.focus();
    });
    yes?.addEventListener("click", () => {
      sure.hidden = true;
      this.app.client.matches.resign(this.matchId).then(
        (done) => this.applyAnswer(done),
        (error: unknown) => this.failed(error),
      );
    });
    this.tools.replaceChildren(
      ...(preferences.length > 0 ? [h("h2", {}, "Preferences"), ...preferences] : []),
      h("div", { class: "resigning" }, resign, sure),
    );
  }

  // -- the end ---------------------------------------------------------------------------------

  /** Keep the player's standing in this game from before the match, across reloads. */
  private async keepStanding(game: string): Promise<void> {
    const key = this.standingKey();
    if (sessionStorage.getItem(key) !== null) return;
    const standing = await this.standing(game);
    sessionStorage.setItem(key, JSON.stringify(standing));
  }

  private standingKey(): string {
    return `cryptid.table.before.${this.matchId}`;
  }

  private async standing(game: string): Promise<Standing | null> {
    const me = await this.app.client.me();
    const rating = me.ratings.find((entry) => entry.game === game);
    return rating === undefined ? null : { rating: rating.rating, matches: rating.matches };
  }

  private async drawEnd(state: MatchState, ctx: TableContext): Promise<void> {
    const outcome = isObject(state.outcome) ? state.outcome : null;
    const winners = Array.isArray(outcome?.winners) ? (outcome.winners as number[]) : [];
    let result = "The match expired before it was played out.";
    if (state.status === "finished") {
      if (state.seat !== null && winners.includes(state.seat)) result = "You won.";
      else if (winners.length > 0)
        result = `${capitalised(describe(winners, "winners", ctx))} won.`;
      else result = "Nobody won.";
    }
    const rating = h("p", { id: "rating", class: "rating" }, "Reading your rating…");
    this.end.replaceChildren(
      h("h2", {}, "The end"),
      h("p", { id: "outcome", class: "outcome" }, result),
      ...(Array.isArray(outcome?.ranking)
        ? [h("p", { class: "ranking" }, `Ranking: ${describe(outcome.ranking, "ranking", ctx)}`)]
        : []),
      rating,
      h("p", {}, h("a", { href: "#/games" }, "Back to the games")),
    );
    this.end.hidden = false;
    if (state.status !== "finished" || state.seat === null) {
      rating.textContent = "No rating changes.";
      return;
    }
    const kept = sessionStorage.getItem(this.standingKey());
    const before = kept === null ? undefined : (JSON.parse(kept) as Standing | null);
    const after = await this.standing(state.game);
    rating.textContent = ratingText(
      this.info?.name ?? state.game,
      before,
      after,
      state.seats.filter((s) => !s.bot).length,
    );
  }
}

/**
 * What the match did to the player's rating: `before` is the standing kept when the match was
 * opened (null: unrated then; undefined: the match was over before this browser opened it).
 */
function ratingText(
  game: string,
  before: Standing | null | undefined,
  after: Standing | null,
  players: number,
): string {
  if (before === undefined) {
    return after === null
      ? `You are unrated in ${game}.`
      : `Your rating in ${game}: ${after.rating}.`;
  }
  if (after !== null && after.matches > (before?.matches ?? 0)) {
    const from = before === null ? 0 : before.rating;
    const change = after.rating - from;
    const sign = change > 0 ? "+" : change < 0 ? "−" : "±";
    const was = before === null ? "unrated" : String(from);
    return `Your rating in ${game}: ${was} → ${after.rating} (${sign}${Math.abs(change)}).`;
  }
  const now = after === null ? "you are unrated" : `it stays ${after.rating}`;
  const why = players < 2 ? " Bots are not rated: a match against bots alone rates nobody." : "";
  return `This match did not change your rating in ${game}: ${now}.${why}`;
}

/** A seat's value of `field` in the view: in the list of per-seat records, or indexed by seat. */
function seatValue(view: Json, seat: number, field: string): unknown {
  const body = isObject(view.inner) ? view.inner : view;
  for (const value of Object.values(body)) {
    if (!Array.isArray(value)) continue;
    const mine = value.find((item) => isObject(item) && item.seat === seat) ?? value[seat];
    if (isObject(mine) && field in mine && mine[field] !== null) return mine[field];
  }
  return undefined;
}
