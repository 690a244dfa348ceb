// One run of the autobattler (#/runs/ID): the shop, the warband, the end of the turn and the
// battle it fought, and the run's end. Every move is its own write, answered with the whole run,
// so the screen always draws what the service holds (a merge, the gold left) and a refused move
// is shown at once, before the turn is ended.

import { type Battle, type CryptidCatalogue, CryptidError, type Run } from "cryptid-client";
import { type App, h, type Screen } from "../app.js";
import { cryptidCard, nameOf, type Numbers, numbersOf } from "./cards.js";
import { endedText, mount } from "./common.js";

/** Where the replay viewer (web/watch/watch.js) reads the player's token, for this tab. */
const WATCH_TOKEN = "cryptid-player-token";
/** The battle a run's last turn fought, by run id: shown again on coming back from /watch. */
const LAST_BATTLE = "cryptid.play.last-battle.";

type Member = Run["warband"][number];
type Offer = NonNullable<Run["shop"][number]>;

/** What a write answers: the run, and for an end of turn the battle it fought. */
interface Answer {
  run: Run;
  battle?: Battle;
}

interface View {
  run: Run;
  catalogue: CryptidCatalogue;
  numbers: Numbers;
  battle: Battle | null;
}

/** What is being dragged: a cryptid of the warband, or an offer of the shop to buy. */
type Dragged = { kind: "member"; position: number } | { kind: "offer"; slot: number };

/** `order[i]`: the old position now at i, once the cryptid at `from` is moved to `to`. */
function moved(count: number, from: number, to: number): number[] {
  const order = Array.from({ length: count }, (_, i) => i);
  order.splice(from, 1);
  order.splice(to, 0, from);
  return order;
}

function plural(count: number, one: string, many: string): string {
  return `${count} ${count === 1 ? one : many}`;
}

function signed(change: number): string {
  return change > 0 ? `+${change}` : String(change);
}

export async function startRun(app: App): Promise<void> {
  const run = await app.client.runs.start();
  app.go(`#/runs/${run.run_id}`);
}

export const runScreen: Screen = (root, app, params) => {
  const runId = params[0] ?? "";
  const screen = mount(root, "run");
  const element = screen.element;
  let view: View | null = null;
  let busy = false;
  let dragged: Dragged | null = null;

  const stat = (name: string, label: string, value: string) =>
    h("div", {}, h("dt", {}, label), h("dd", { "data-stat": name }, value));

  function focusOn(keys: string[]): void {
    for (const key of keys) {
      const target = element.querySelector<HTMLElement>(`[data-focus="${key}"]`);
      if (target !== null) {
        target.focus();
        return;
      }
    }
  }

  /**
   * Make a write of the run and draw what it answers, with the focus on the first of `keys` that
   * is drawn (else where it was). One write at a time: a click meanwhile is dropped.
   */
  async function act(write: (view: View) => Promise<Answer>, keys: string[] = []): Promise<void> {
    if (busy || view === null) return;
    busy = true;
    element.setAttribute("aria-busy", "true");
    const focused = (document.activeElement as HTMLElement | null)?.dataset.focus;
    const back = [...(focused === undefined ? [] : [focused]), "title"];
    try {
      const answer = await write(view);
      if (!screen.live()) return;
      view.run = answer.run;
      if (answer.battle !== undefined) view.battle = answer.battle;
      app.clear();
      draw();
      focusOn([...keys, ...back]);
    } catch (error) {
      if (!screen.live()) return;
      app.fail(error);
      // A run that moved elsewhere (another tab) or ended: draw it as it is now.
      if (error instanceof CryptidError && error.status === 409) {
        const now = await app.client.runs.get(runId).catch(() => null);
        if (now === null || !screen.live()) return;
        view.run = now;
        draw();
        focusOn(back);
      }
    } finally {
      busy = false;
      element.removeAttribute("aria-busy");
    }
  }

  /** A shop move: its write, given the run's version so that a stale screen is refused. */
  function shopMove(write: (version: number) => Promise<Run>, keys: string[] = []): void {
    void act(async ({ run }) => ({ run: await write(run.version) }), keys);
  }

  function endTurn(): void {
    void act(async ({ run }) => {
      const turn = await app.client.runs.endTurn(runId, { round: run.round });
      const battle = await app.client.battles.get(turn.battle_id);
      sessionStorage.setItem(LAST_BATTLE + runId, String(turn.battle_id));
      return { run: turn.run, battle };
    }, ["result"]);
  }

  function draw(): void {
    if (view === null) return;
    const { run, numbers } = view;
    const over = run.status !== "shopping";
    const parts = [
      h(
        "header",
        { class: "run-head" },
        h(
          "h1",
          { tabindex: "-1", "data-focus": "title" },
          over ? "Run over" : `Round ${run.round}`,
        ),
        h(
          "dl",
          { class: "run-stats" },
          over ? null : stat("gold", "Gold", String(run.gold)),
          stat("lives", "Lives", `${run.lives} of ${numbers.lives}`),
          stat("wins", "Wins", `${run.wins} of ${numbers.winsToFinish}`),
        ),
        over
          ? null
          : button("End turn", endTurn, {
              class: "primary end-turn",
              "data-focus": "end-turn",
            }),
      ),
      lastBattle(),
      over ? runOver() : null,
      over ? null : shop(),
      warband(over),
    ];
    element.replaceChildren(...parts.filter((part): part is HTMLElement => part !== null));
  }

  function button(
    label: string,
    onClick: () => void,
    attrs: Partial<Record<string, string>> = {},
  ): HTMLButtonElement {
    const made = h("button", { type: "button", ...attrs }, label);
    made.addEventListener("click", onClick);
    return made;
  }

  // -- the last battle --------------------------------------------------------------------------

  function lastBattle(): HTMLElement | null {
    if (view === null || view.battle === null) return null;
    const { battle, catalogue, run } = view;
    if (battle.round !== run.round - 1) return null;
    const outcome =
      battle.winner === "player" ? "you won" : battle.winner === "ghost" ? "you lost" : "a draw";
    const names = battle.ghost.cryptids.map((c) => nameOf(catalogue, c.species));
    const against = battle.ghost.is_bot
      ? "a bot's warband"
      : `a player's ghost (rating ${battle.ghost.rating}, round ${battle.ghost.round})`;
    const rating = battle.rated
      ? `Rating change ${signed(battle.rating_change)}, applied when the run ends.`
      : battle.unrated_reason === "bot"
        ? "A bot moves no rating."
        : battle.unrated_reason === "new_account"
          ? "Unrated: the ghost's owner is a new account."
          : "Unrated: that player already moved your rating today.";
    const href = `/watch/${battle.battle_id}`;
    const watch = h("a", { class: "watch", href }, "Watch the battle");
    watch.addEventListener("click", (event) => {
      // A plain click: hand the viewer this session's token in this tab (it asks for one else).
      if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) {
        return;
      }
      event.preventDefault();
      app.client.accessToken().then(
        (token) => {
          sessionStorage.setItem(WATCH_TOKEN, token);
          location.assign(href);
        },
        (error: unknown) => app.fail(error),
      );
    });
    return h(
      "section",
      { class: `last-battle ${battle.winner}`, "aria-labelledby": "last-battle-title" },
      h(
        "h2",
        { id: "last-battle-title", tabindex: "-1", "data-focus": "result" },
        `Round ${battle.round}: ${outcome}`,
      ),
      h(
        "p",
        {},
        `Against ${against}: ${names.join(", ") || "nobody"}. Health left: yours `,
        h("strong", { "data-health": "player" }, String(battle.health.player)),
        ", theirs ",
        h("strong", { "data-health": "ghost" }, String(battle.health.ghost)),
        `, after ${plural(battle.rolls, "roll", "rolls")}. ${rating} `,
        watch,
      ),
    );
  }

  // -- the run's end ----------------------------------------------------------------------------

  function runOver(): HTMLElement | null {
    if (view === null) return null;
    const { run, numbers } = view;
    const losses = numbers.lives - run.lives;
    const draws = run.round - 1 - run.wins - losses;
    const headline =
      run.status === "won"
        ? `You won the run with ${numbers.winsToFinish} wins.`
        : run.status === "lost"
          ? "You lost the run: no lives left."
          : `This run was ${endedText(run.status)}.`;
    return h(
      "section",
      { class: `run-over ${run.status}`, "aria-labelledby": "run-over-title" },
      h("h2", { id: "run-over-title" }, headline),
      h(
        "p",
        { "data-record": "" },
        `Final record: ${plural(run.wins, "win", "wins")}, ${plural(losses, "loss", "losses")}`,
        draws > 0 ? `, ${plural(draws, "draw", "draws")}` : "",
        ` in ${plural(run.round - 1, "battle", "battles")};`,
        ` ${plural(run.lives, "life", "lives")} left.`,
      ),
      h("p", {}, `Rating change: ${signed(run.rating_change_pending)}.`),
      h(
        "p",
        { class: "turn" },
        button("New run", () => void startRun(app).catch((error: unknown) => app.fail(error)), {
          class: "primary",
          "data-focus": "new-run",
        }),
        " ",
        h("a", { href: "#/runs" }, "All your runs"),
      ),
    );
  }

  // -- the shop ---------------------------------------------------------------------------------

  function shop(): HTMLElement | null {
    if (view === null) return null;
    const { run, numbers, catalogue } = view;
    const offers = h("ul", { class: "offers" });
    for (const offer of run.shop) {
      offers.append(offer === null ? h("li", { class: "offer sold" }, "Bought") : offerCard(offer));
    }
    return h(
      "section",
      { class: "shop", "aria-labelledby": "shop-title" },
      h(
        "div",
        { class: "section-head" },
        h("h2", { id: "shop-title" }, "Shop"),
        button(
          `Reroll (${numbers.rerollCost} gold)`,
          () => shopMove((version) => app.client.runs.reroll(runId, { version })),
          { "data-focus": "reroll" },
        ),
      ),
      h(
        "p",
        { class: "hint" },
        `${numbers.buyCost} gold each; three alike at one level merge a level up. A frozen offer`,
        " stays through rerolls and rounds. Gold left over is lost when the turn ends.",
      ),
      offers,
    );

    function offerCard(offer: Offer): HTMLElement {
      const name = nameOf(catalogue, offer.species);
      const card = h(
        "li",
        {
          class: `offer${offer.frozen ? " frozen" : ""}${offer.cost > run.gold ? " dear" : ""}`,
          draggable: "true",
          "data-slot": String(offer.slot),
          "data-species": offer.species,
        },
        ...cryptidCard(catalogue, { species: offer.species }, { cost: offer.cost }),
        h(
          "p",
          { class: "actions" },
          button("Buy", () => buy(offer.slot), {
            "aria-label": `Buy ${name}`,
            "data-focus": `buy-${offer.slot}`,
          }),
          button(
            offer.frozen ? "Frozen" : "Freeze",
            () =>
              shopMove((version) =>
                app.client.runs.freeze(runId, { slot: offer.slot, frozen: !offer.frozen, version }),
              ),
            {
              "aria-label": `Freeze ${name}`,
              "aria-pressed": String(offer.frozen),
              "data-focus": `freeze-${offer.slot}`,
            },
          ),
        ),
      );
      card.addEventListener("dragstart", (event) => {
        dragged = { kind: "offer", slot: offer.slot };
        event.dataTransfer?.setData("text/plain", name);
        if (event.dataTransfer !== null) event.dataTransfer.effectAllowed = "copyMove";
      });
      card.addEventListener("dragend", () => {
        dragged = null;
      });
      return card;
    }
  }

  function buy(slot: number, position?: number): void {
    // The offer bought leaves the shop: the focus goes on to the next one there is.
    const next = (view?.run.shop ?? []).map((_, s) => `buy-${s}`);
    const where = position === undefined ? {} : { position };
    const placed = position === undefined ? [] : [`member-${position}`];
    shopMove((version) => app.client.runs.buy(runId, { slot, version, ...where }), [
      ...placed,
      `buy-${slot}`,
      ...next,
      "end-turn",
    ]);
  }

  // -- the warband ------------------------------------------------------------------------------

  function move(from: number, to: number): void {
    const count = view?.run.warband.length ?? 0;
    if (to < 0 || to >= count || to === from) return;
    const order = moved(count, from, to);
    shopMove((version) => app.client.runs.arrange(runId, { order, version }), [`member-${to}`]);
  }

  function switchAbility(position: number): void {
    const warband = view?.run.warband ?? [];
    const abilities = warband.map((m) => (m.position === position ? 1 - m.ability : m.ability));
    shopMove((version) => app.client.runs.arrange(runId, { abilities, version }));
  }

  /** Take a drop on the slot at `position` (past the last cryptid: the end of the warband). */
  function dropOn(slot: HTMLElement, position: number): void {
    const count = (): number => view?.run.warband.length ?? 0;
    slot.addEventListener("dragover", (event) => {
      if (dragged === null) return;
      event.preventDefault();
      slot.classList.add("drop-here");
    });
    slot.addEventListener("dragleave", () => slot.classList.remove("drop-here"));
    slot.addEventListener("drop", (event) => {
      slot.classList.remove("drop-here");
      const what = dragged;
      dragged = null;
      if (what === null) return;
      event.preventDefault();
      if (what.kind === "member") move(what.position, Math.min(position, count() - 1));
      else buy(what.slot, Math.min(position, count()));
    });
  }

  function warband(over: boolean): HTMLElement | null {
    if (view === null) return null;
    const { run, numbers, catalogue } = view;
    const slots = h("ol", { class: "slots" });
    for (const member of run.warband) slots.append(memberCard(member));
    for (let empty = run.warband.length; empty < numbers.boardSize; empty += 1) {
      const slot = h("li", { class: "slot empty" }, "Empty slot");
      if (!over) dropOn(slot, empty);
      slots.append(slot);
    }
    return h(
      "section",
      { class: "warband", "aria-labelledby": "warband-title" },
      h("h2", { id: "warband-title" }, over ? "Your last warband" : "Warband"),
      over
        ? null
        : h(
            "p",
            { class: "hint", id: "warband-hint" },
            "They fight from the left. Drag a cryptid to another place, or focus it and press",
            " ← or →. Drop an offer on a place to buy it there.",
          ),
      slots,
    );

    function memberCard(member: Member): HTMLElement {
      const name = nameOf(catalogue, member.species);
      const { position } = member;
      const last = run.warband.length - 1;
      const card = h(
        "li",
        {
          class: "slot member",
          "data-position": String(position),
          "data-species": member.species,
        },
        ...cryptidCard(catalogue, member),
      );
      if (over) return card;
      card.setAttribute("tabindex", "0");
      card.setAttribute("draggable", "true");
      card.setAttribute("data-focus", `member-${position}`);
      card.setAttribute("aria-describedby", "warband-hint");
      card.setAttribute("aria-label", `${name}, level ${member.level}, place ${position + 1}`);
      card.append(
        h(
          "p",
          { class: "actions" },
          button("◀", () => move(position, position - 1), {
            "aria-label": `Move ${name} left`,
            "data-focus": `left-${position}`,
            ...(position === 0 ? { disabled: "" } : {}),
          }),
          button("▶", () => move(position, position + 1), {
            "aria-label": `Move ${name} right`,
            "data-focus": `right-${position}`,
            ...(position === last ? { disabled: "" } : {}),
          }),
          button("⇄ Ability", () => switchAbility(position), {
            "aria-label": `Switch ${name}'s ability`,
            "data-focus": `ability-${position}`,
          }),
          button(
            `Sell (+${numbers.sellRefund})`,
            () => shopMove((version) => app.client.runs.sell(runId, { position, version })),
            { "aria-label": `Sell ${name}`, "data-focus": `sell-${position}` },
          ),
        ),
      );
      card.addEventListener("keydown", (event) => {
        if (event.target !== card) return;
        if (event.key === "ArrowLeft") move(position, position - 1);
        else if (event.key === "ArrowRight") move(position, position + 1);
        else return;
        event.preventDefault();
      });
      card.addEventListener("dragstart", (event) => {
        dragged = { kind: "member", position };
        event.dataTransfer?.setData("text/plain", name);
        if (event.dataTransfer !== null) event.dataTransfer.effectAllowed = "move";
      });
      card.addEventListener("dragend", () => {
        dragged = null;
      });
      dropOn(card, position);
      return card;
    }
  }

  // -- loading ----------------------------------------------------------------------------------

  async function load(): Promise<void> {
    element.setAttribute("aria-busy", "true");
    element.append(h("p", { class: "loading" }, "Loading the run…"));
    const run = await app.client.runs.get(runId);
    const catalogue = await app.client.catalogue("cryptids", run.ruleset);
    const kept = sessionStorage.getItem(LAST_BATTLE + runId);
    const battle =
      kept === null ? null : await app.client.battles.get(Number(kept)).catch(() => null);
    if (!screen.live()) return;
    view = { run, catalogue, numbers: numbersOf(catalogue), battle };
    element.removeAttribute("aria-busy");
    draw();
  }

  load().catch((error: unknown) => {
    if (!screen.live()) return;
    element.replaceChildren(
      h("p", {}, "This run could not be loaded. ", h("a", { href: "#/runs" }, "Your runs")),
    );
    app.fail(error);
  });
  return screen.stop;
};
