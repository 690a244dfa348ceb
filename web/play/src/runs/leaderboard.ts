// The leaderboards (#/leaderboard): the autobattler's Elo, or a turn-based game's OpenSkill board
// for the current season; the best players, and the player with those just above and below.

import type { components } from "cryptid-client";
import { type App, h, type Screen } from "../app.js";
import { mount } from "./common.js";

type Board = components["schemas"]["Board"];
type Entry = components["schemas"]["BoardEntry"];

const TOP = 20;
const AROUND = 10;

async function board(app: App, game: string, around: boolean): Promise<Board> {
  const query = {
    limit: around ? AROUND : TOP,
    ...(game === "" ? {} : { game }),
    ...(around ? { around: "me" as const } : {}),
  };
  const { data } = await app.client.api.GET("/v1/leaderboard", { params: { query } });
  return data as Board;
}

function table(app: App, entries: Entry[], rated: boolean): HTMLElement {
  const head = h(
    "tr",
    {},
    h("th", { scope: "col", class: "rank" }, "Rank"),
    h("th", { scope: "col" }, "Player"),
    h("th", { scope: "col", class: "rating" }, "Rating"),
    rated ? h("th", { scope: "col", class: "matches" }, "Matches") : null,
  );
  const body = h("tbody");
  for (const entry of entries) {
    const me = entry.player_id === app.player.player_id;
    body.append(
      h(
        "tr",
        me ? { class: "me", "aria-current": "true" } : {},
        h("td", { class: "rank" }, String(entry.rank)),
        h(
          "td",
          { class: "handle" },
          entry.handle,
          me ? h("span", { class: "badge" }, "you") : null,
        ),
        h("td", { class: "rating" }, String(entry.rating)),
        rated ? h("td", { class: "matches" }, String(entry.matches ?? 0)) : null,
      ),
    );
  }
  return h("table", { class: "board" }, h("thead", {}, head), body);
}

export const leaderboardScreen: Screen = (root, app) => {
  const screen = mount(root, "leaderboard");
  const element = screen.element;
  const picker = h(
    "select",
    { id: "board-game", name: "game" },
    h("option", { value: "" }, "Autobattler (Elo)"),
  );
  const about = h("p", { class: "hint" });
  const top = h("div");
  const around = h("div");
  element.append(
    h("h1", {}, "Leaderboard"),
    h("p", { class: "board-picker" }, h("label", { for: "board-game" }, "Board"), picker),
    about,
    h(
      "section",
      { "aria-labelledby": "board-top" },
      h("h2", { id: "board-top" }, `Best ${TOP}`),
      top,
    ),
    h(
      "section",
      { "aria-labelledby": "board-around" },
      h("h2", { id: "board-around" }, "Around you"),
      around,
    ),
  );
  let asked = 0;

  async function show(): Promise<void> {
    const game = picker.value;
    const mine = ++asked;
    element.setAttribute("aria-busy", "true");
    const [best, near] = await Promise.all([board(app, game, false), board(app, game, true)]);
    // An answer for a board no longer picked is dropped.
    if (!screen.live() || mine !== asked) return;
    element.removeAttribute("aria-busy");
    const rated = game !== "";
    about.textContent = rated
      ? `Season ${best.season ?? ""}: rated over finished matches between players (OpenSkill).`
      : "Your runs' rating changes count once each run has ended.";
    const bestEntries = best.entries ?? [];
    const nearEntries = near.entries ?? [];
    top.replaceChildren(
      bestEntries.length > 0
        ? table(app, bestEntries, rated)
        : h("p", { class: "none" }, "Nobody is rated yet."),
    );
    around.replaceChildren(
      nearEntries.length > 0
        ? table(app, nearEntries, rated)
        : h("p", { class: "none" }, "You are not rated here yet: finish a match against a player."),
    );
  }

  const failed = (error: unknown): void => {
    if (screen.live()) app.fail(error);
  };
  picker.addEventListener("change", () => {
    show().catch(failed);
  });
  app.client
    .games()
    .then((games) => {
      if (!screen.live()) return;
      for (const game of games) {
        picker.append(h("option", { value: game.id }, game.name));
      }
    })
    .catch(failed);
  show().catch(failed);
  return screen.stop;
};
