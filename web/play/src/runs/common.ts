// What the autobattler's screens share: their own element in the shell's root, which a late
// answer must not draw into once the player has moved on.

import { h } from "../app.js";

export interface Mounted {
  element: HTMLElement;
  /** False once the screen is stopped: answers that arrive later are dropped. */
  live(): boolean;
  stop(): void;
}

export function mount(root: HTMLElement, className: string): Mounted {
  const element = h("section", { class: className });
  root.append(element);
  let live = true;
  return {
    element,
    live: () => live,
    stop: () => {
      live = false;
    },
  };
}

/** How a run that is over ended, in words. */
export function endedText(status: string): string {
  return status === "abandoned" ? "given up" : status;
}
