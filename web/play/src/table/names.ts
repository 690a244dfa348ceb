// What the table knows of a game's cards: its catalogue (GET /v1/content/{game}), by catalogue
// id, and the instance ids a view gives its cards (docs/architecture.md#catalogues): prompts and
// events name cards by instance id, views put the catalogue id beside it under `card`.

export interface Entry {
  id: string;
  name: string;
  kind: string;
  family?: string | null;
  numbers?: Record<string, unknown>;
  text?: string;
}

export interface CatalogueLike {
  entries: readonly unknown[];
}

export class Names {
  private readonly entries = new Map<string, Entry>();
  private readonly instances = new Map<string, string>();

  constructor(catalogue: CatalogueLike | null) {
    for (const entry of catalogue?.entries ?? []) {
      const e = entry as Entry;
      if (typeof e.id === "string") this.entries.set(e.id, e);
    }
  }

  /** Learn the instance ids of a view (or an event's data): every `{id, card}` in it. */
  learn(value: unknown): void {
    if (Array.isArray(value)) {
      for (const item of value) this.learn(item);
    } else if (value !== null && typeof value === "object") {
      const record = value as Record<string, unknown>;
      if (typeof record.id === "string" && typeof record.card === "string") {
        this.instances.set(record.id, record.card);
      }
      for (const item of Object.values(record)) this.learn(item);
    }
  }

  /**
   * The catalogue entry a string names: a catalogue id, an instance id the views gave, or an
   * instance id whose last part (after its last colon) is the catalogue id (`s1.7:lobo_de_niebla`).
   */
  entry(text: string): Entry | undefined {
    const direct = this.entries.get(text);
    if (direct !== undefined) return direct;
    const card = this.instances.get(text);
    if (card !== undefined) return this.entries.get(card);
    const colon = text.lastIndexOf(":");
    return colon >= 0 ? this.entries.get(text.slice(colon + 1)) : undefined;
  }

  /** The display name of what `text` names, or `text` itself when it names no card. */
  name(text: string): string {
    return this.entry(text)?.name ?? text;
  }
}
