// The player's runs (#/runs): the open ones to resume or give up, the finished ones with their
// record, and a new run.

import type { Run } from "cryptid-client";
import { h, type Screen } from "../app.js";
import { endedText, mount } from "./common.js";
import { startRun } from "./run.js";

const started = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });

function record(run: Run): string {
  const lives = `${run.lives} ${run.lives === 1 ? "life" : "lives"}`;
  const wins = `${run.wins} ${run.wins === 1 ? "win" : "wins"}`;
  if (run.status === "shopping") return `Round ${run.round}: ${lives}, ${wins}`;
  const status = endedText(run.status);
  return `${status.charAt(0).toUpperCase()}${status.slice(1)}: ${wins}, ${lives} left`;
}

export const runsScreen: Screen = (root, app) => {
  const screen = mount(root, "runs");
  const element = screen.element;
  const newRun = h("button", { type: "button", class: "primary" }, "New run");
  newRun.addEventListener("click", () => {
    newRun.disabled = true;
    startRun(app)
      .catch((error: unknown) => app.fail(error))
      .finally(() => {
        newRun.disabled = false;
      });
  });
  const open = h("ul", { class: "run-list", "aria-labelledby": "open-runs" });
  const finished = h("ul", { class: "run-list", "aria-labelledby": "finished-runs" });
  element.append(
    h("header", { class: "runs-head" }, h("h1", {}, "Autobattler"), newRun),
    h(
      "p",
      { class: "hint" },
      "Each round, buy cryptids and arrange your warband, then end the turn: it fights the",
      " warband another player had at that round. A loss costs a life; the run ends when the",
      " lives run out or at the wins it needs.",
    ),
    h("h2", { id: "open-runs" }, "Open runs"),
    open,
    h("h2", { id: "finished-runs" }, "Finished runs"),
    finished,
  );

  function item(run: Run): HTMLElement {
    const line = h(
      "li",
      { class: `run-item ${run.status}`, "data-run": run.run_id },
      h("a", { href: `#/runs/${run.run_id}` }, record(run)),
      h("span", { class: "when" }, ` started ${started.format(new Date(run.created_at))}`),
    );
    if (run.status !== "shopping") return line;
    let sure = false;
    const giveUp = h("button", { type: "button", class: "quiet" }, "Give up");
    giveUp.addEventListener("click", () => {
      // Giving up ends the run and settles its rating at once: a second click confirms.
      if (!sure) {
        sure = true;
        giveUp.textContent = "Give up: sure?";
        return;
      }
      giveUp.disabled = true;
      app.client.runs
        .abandon(run.run_id, { version: run.version })
        .then(() => {
          app.clear();
          return draw();
        })
        .catch((error: unknown) => app.fail(error));
    });
    line.append(" ", giveUp);
    return line;
  }

  function none(text: string): HTMLElement {
    return h("li", { class: "none" }, text);
  }

  async function draw(): Promise<void> {
    const { runs } = await app.client.runs.list();
    if (!screen.live()) return;
    const shopping = runs.filter((run) => run.status === "shopping");
    const ended = runs.filter((run) => run.status !== "shopping");
    open.replaceChildren(...(shopping.length > 0 ? shopping.map(item) : [none("None.")]));
    finished.replaceChildren(...(ended.length > 0 ? ended.map(item) : [none("None yet.")]));
  }

  draw().catch((error: unknown) => {
    if (screen.live()) app.fail(error);
  });
  return screen.stop;
};
