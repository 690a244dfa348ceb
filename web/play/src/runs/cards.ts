// A cryptid as the shop and the warband draw it: its name, numbers and ability text, all read
// from the run's catalogue (GET /v1/content/cryptids?ruleset=…), never written here.

import type { CryptidCatalogue } from "cryptid-client";
import { h } from "../app.js";

type Entry = CryptidCatalogue["entries"][number];

/** The numbers of a run that the screens show, from the catalogue's rules. */
export interface Numbers {
  lives: number;
  winsToFinish: number;
  boardSize: number;
  buyCost: number;
  sellRefund: number;
  rerollCost: number;
}

function need(table: Record<string, unknown>, key: string): number {
  const value = table[key];
  if (typeof value !== "number") throw new Error(`the catalogue's rules have no number ${key}`);
  return value;
}

export function numbersOf(catalogue: CryptidCatalogue): Numbers {
  const { run, battle, shop } = catalogue.rules;
  return {
    lives: need(run, "lives"),
    winsToFinish: need(run, "wins_to_finish"),
    boardSize: need(battle, "board_size"),
    buyCost: need(shop, "buy_cost"),
    sellRefund: need(shop, "sell_refund"),
    rerollCost: need(shop, "reroll_cost"),
  };
}

export function entryOf(catalogue: CryptidCatalogue, species: string): Entry | undefined {
  return catalogue.entries.find((entry) => entry.kind === "species" && entry.id === species);
}

export function nameOf(catalogue: CryptidCatalogue, species: string): string {
  return entryOf(catalogue, species)?.name ?? species;
}

/**
 * Each ability's sentence, in ability order. The catalogue writes an entry's text as one
 * sentence per effect, joined by spaces; when it cannot be cut so, the whole text is one.
 */
function abilityTexts(entry: Entry): string[] {
  const sentences = entry.text.split(/(?<=\.) (?=\S)/);
  return sentences.length === entry.effects.length ? sentences : [entry.text];
}

/** A cryptid's card: name, level, numbers, and its abilities with the one it uses marked. */
export function cryptidCard(
  catalogue: CryptidCatalogue,
  cryptid: { species: string; level?: number; ability?: number },
  extra: { cost?: number } = {},
): HTMLElement[] {
  const entry = entryOf(catalogue, cryptid.species);
  const title = h("h3", { class: "name" }, entry?.name ?? cryptid.species);
  if (cryptid.level !== undefined) {
    title.append(" ", h("span", { class: "level" }, `Lv ${cryptid.level}`));
  }
  const numbers = h("p", { class: "numbers" });
  if (entry !== undefined) {
    numbers.append(
      h("span", { class: "health" }, `♥ ${entry.numbers.health ?? "?"}`),
      h("span", { class: "threat" }, `threat ${entry.numbers.threat ?? "?"}`),
      h("span", { class: "tier" }, `tier ${entry.numbers.tier ?? "?"}`),
    );
  }
  if (extra.cost !== undefined) numbers.append(h("span", { class: "cost" }, `${extra.cost} gold`));
  const texts = entry === undefined ? [] : abilityTexts(entry);
  const abilities = h("ul", { class: "abilities" });
  texts.forEach((text, index) => {
    const used = texts.length > 1 && cryptid.ability === index;
    abilities.append(
      h(
        "li",
        { class: used ? "in-use" : cryptid.ability === undefined ? "" : "unused" },
        used ? h("span", { class: "badge" }, "in use") : null,
        text,
      ),
    );
  });
  return [title, numbers, abilities];
}
