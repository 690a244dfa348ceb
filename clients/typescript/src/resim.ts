// The reference re-simulator, the very module the replay viewer runs (web/watch/resim.js),
// bundled in from the service's source rather than copied: a client checks a replay roll by roll
// with the same code the suite checks against the golden corpus. Typed here.

import * as reference from "../../../web/watch/resim.js";
import type { ReplayWire, WireBattleEvent } from "./battles.js";
import type { components } from "./schema.js";
import type { Int64 } from "./wire.js";

/** The catalogue `GET /v1/content/cryptids` serves: `client.catalogue("cryptids", ruleset)`. */
export type CryptidCatalogue = components["schemas"]["CryptidCatalogue"];

/** A warband as a replay writes it: `[species, ability, level]` per slot, slot 0 first. */
export type WarbandSlots = ReadonlyArray<readonly (string | number)[]>;

export interface Simulation {
  format: number;
  ruleset: string;
  seed: bigint;
  a: (string | number)[][];
  b: (string | number)[][];
  events: WireBattleEvent[];
  /** The board hash after each roll. */
  hashes: string[];
  winner: "a" | "b" | "draw";
  reason: string;
  rolls: number;
  health: { a: number; b: number };
}

export interface Verdict {
  /** Every roll's events and hash, and the end, are the same. */
  ok: boolean;
  /** The replay's number of rolls. */
  rolls: number;
  /** How many of them match. */
  matching: number;
  /** The first roll (1-based) whose events or hash differ, or null. */
  firstMismatch: number | null;
  endSame: boolean;
  /** The re-simulation: the board after each roll. */
  mine: unknown;
}

/** Play a battle again: the same events and board hashes as the server's replay. */
export const simulate: (
  content: CryptidCatalogue,
  seed: Int64 | string,
  a: WarbandSlots,
  b: WarbandSlots,
) => Simulation = reference.simulate as never;

/** Check a replay against a re-simulation of its ruleset, seed and warbands. */
export const verify: (
  content: CryptidCatalogue,
  replay: Pick<ReplayWire, "seed" | "a" | "b" | "events" | "hashes">,
) => Verdict = reference.verify;

/** JSON.parse for a replay or a simulate answer's text, keeping its seed exact. */
export const parseReplay: (text: string) => ReplayWire = reference.parseReplay;
