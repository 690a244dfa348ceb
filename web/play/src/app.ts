// What every screen of the web client is given: the signed-in client, the player, and the few
// things the shell does for them (moving to another screen, telling of a failure).

import type { CryptidClient, Player } from "cryptid-client";

export interface App {
  client: CryptidClient;
  player: Player;
  /** Go to a screen by its route (`#/runs`, `#/matches/ID`…); the history keeps it. */
  go(route: string): void;
  /** Show a failure in the shell's message line, with its reason when the API gave one. */
  fail(error: unknown): void;
  /** Hide that line: a refusal shown there would mislead once a later move succeeded. */
  clear(): void;
}

/** A screen: draws itself into `root`, and returns what stops it (sockets, timers). */
export type Screen = (root: HTMLElement, app: App, params: string[]) => () => void;

/** An element with its class and children, the one way screens make their DOM. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Partial<Record<string, string>> = {},
  ...children: (Node | string | null | undefined | false)[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) {
    if (value !== undefined) element.setAttribute(name, value);
  }
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    element.append(child);
  }
  return element;
}
