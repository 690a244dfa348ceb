// The web client's shell: sign in with a device id kept in this browser, then one screen at a
// time by the address's hash (#/runs, #/games, #/matches/ID, #/leaderboard), so that a reload
// comes back to the same screen.

import { CryptidError, createClient, LocalStorageStorage, type Player } from "cryptid-client";
import { type App, h, type Screen } from "./app.js";
import { leaderboardScreen, runScreen, runsScreen } from "./runs/screens.js";
import { gamesScreen, matchScreen } from "./table/screens.js";

const ROUTES: [RegExp, Screen][] = [
  [/^#\/runs$/, runsScreen],
  [/^#\/runs\/([\w-]+)$/, runScreen],
  [/^#\/leaderboard$/, leaderboardScreen],
  [/^#\/games$/, gamesScreen],
  [/^#\/matches\/([\w-]+)$/, matchScreen],
];

const client = createClient({ baseUrl: location.origin, storage: new LocalStorageStorage() });
const root = document.getElementById("screen") as HTMLElement;
const message = document.getElementById("message") as HTMLElement;
let stop: () => void = () => {};

function fail(error: unknown): void {
  // A refusal says why: its message, and the reason a client can act on when it has one.
  if (error instanceof CryptidError) {
    const reason = typeof error.details.reason === "string" ? error.details.reason : error.code;
    message.textContent = `${error.message} (${reason})`;
  } else {
    message.textContent = error instanceof Error ? error.message : String(error);
  }
  message.hidden = false;
}

function clear(): void {
  message.hidden = true;
}

function show(app: App): void {
  stop();
  clear();
  root.replaceChildren();
  const hash = location.hash || "#/runs";
  for (const [pattern, screen] of ROUTES) {
    const found = pattern.exec(hash);
    if (found) {
      stop = screen(root, app, found.slice(1));
      root.focus();
      return;
    }
  }
  app.go("#/runs");
}

function signInForm(): Promise<Player> {
  return new Promise((resolve) => {
    const name = h("input", { id: "name", name: "name", maxlength: "32", autocomplete: "nickname", required: "" });
    const form = h(
      "form",
      { class: "sign-in" },
      h("h1", {}, "Play"),
      h("p", {}, "A name to play under. This browser keeps your device id: coming back signs you in again."),
      h("label", { for: "name" }, "Your name"),
      name,
      h("button", { type: "submit" }, "Start playing"),
    );
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      client.signInWithDevice({ name: name.value.trim() }).then(
        (signedIn) => resolve(signedIn),
        (error: unknown) => fail(error),
      );
    });
    root.replaceChildren(form);
    name.focus();
  });
}

async function start(): Promise<void> {
  const player = (await client.player()) ?? (await signInForm());
  const app: App = {
    client,
    player,
    go: (route) => {
      if (location.hash === route) show(app);
      else location.hash = route;
    },
    fail,
    clear,
  };
  const who = document.getElementById("who") as HTMLElement;
  who.textContent = player.handle;
  document.getElementById("sign-out")?.addEventListener("click", () => {
    client.signOut().finally(() => location.reload());
  });
  document.body.classList.add("signed-in");
  window.addEventListener("hashchange", () => show(app));
  show(app);
}

start().catch(fail);
