// A battle's events travel as tuples (`["damage", src, uid, amount, absorbed, health_after]`).
// They stay so in a replay (that is what `verify` compares, and what the board hash was computed
// beside); `nameEvent` gives the same event as an object, with the field names of
// docs/rules/cryptids.md#replay-and-result-on-the-wire.

import type { components } from "./schema.js";
import type { Int64 } from "./wire.js";

export type WireBattleEvent = components["schemas"]["ReplayWire"]["events"][number];

/** A replay as the wire has it, with the seed exact (a bigint when past 2^53). */
export type ReplayWire = Omit<components["schemas"]["ReplayWire"], "seed"> & { seed: Int64 };

/** A replay, its events as on the wire and, beside them, the same events named. */
export type BattleReplay = ReplayWire & { namedEvents: BattleEvent[] };

export type BattleEvent =
  | { kind: "roll"; roll: number; die1: number; die2: number }
  | { kind: "sudden_death"; bonus: number }
  | { kind: "tick"; uid: number; stacks: number }
  | { kind: "trigger" | "skip" | "reroll" | "death" | "chain_limit"; uid: number }
  | { kind: "sum"; uid: number; added: number; new_sum: number }
  | {
      kind: "damage";
      src: number;
      uid: number;
      amount: number;
      absorbed: number;
      health_after: number;
    }
  | { kind: "heal"; src: number; uid: number; gained: number; health_after: number }
  | {
      kind: "shield" | "poison" | "stun" | "threat";
      src: number;
      uid: number;
      added: number;
      value_after: number;
    }
  | { kind: "max_health"; src: number; uid: number; added: number; max_health_after: number }
  | { kind: "summon"; src: number; new_uid: number; token_id: string; slot: number }
  | { kind: "summon_failed"; src: number; token_id: string }
  | {
      kind: "end";
      winner: "a" | "b" | "draw";
      reason: string;
      health_a: number;
      health_b: number;
    };

/** The field names after `kind`, per event kind, in wire order. */
const FIELDS: Record<string, readonly string[]> = {
  roll: ["roll", "die1", "die2"],
  sudden_death: ["bonus"],
  tick: ["uid", "stacks"],
  trigger: ["uid"],
  skip: ["uid"],
  reroll: ["uid"],
  death: ["uid"],
  chain_limit: ["uid"],
  sum: ["uid", "added", "new_sum"],
  damage: ["src", "uid", "amount", "absorbed", "health_after"],
  heal: ["src", "uid", "gained", "health_after"],
  shield: ["src", "uid", "added", "value_after"],
  poison: ["src", "uid", "added", "value_after"],
  stun: ["src", "uid", "added", "value_after"],
  threat: ["src", "uid", "added", "value_after"],
  max_health: ["src", "uid", "added", "max_health_after"],
  summon: ["src", "new_uid", "token_id", "slot"],
  summon_failed: ["src", "token_id"],
  end: ["winner", "reason", "health_a", "health_b"],
};

/** One wire event as an object; an event kind this version does not know keeps `fields`. */
export function nameEvent(event: WireBattleEvent): BattleEvent {
  const [kind, ...values] = event as readonly [string, ...unknown[]];
  const names = FIELDS[kind];
  if (names === undefined || names.length !== values.length) {
    return { kind, fields: values } as unknown as BattleEvent;
  }
  const named: Record<string, unknown> = { kind };
  names.forEach((name, i) => {
    named[name] = values[i];
  });
  return named as BattleEvent;
}

export function nameEvents(events: readonly WireBattleEvent[]): BattleEvent[] {
  return events.map(nameEvent);
}

/** A replay with its named events beside the wire's. */
export function withNamedEvents(replay: ReplayWire): BattleReplay {
  return { ...replay, namedEvents: nameEvents(replay.events) };
}
