// The reference re-simulator of a cryptid battle, written from docs/rules/cryptids.md.
//
// A battle is a pure function of (ruleset content, seed, warband A, warband B). This module
// plays it again in the browser (or in Node) and yields the same events and the same board
// hash after every roll as the server's replay, so a client can tell a desync from a replay.
//
//   import { simulate, verify, parseReplay } from "/watch/resim.js";
//   const content = await (await fetch("/v1/content/cryptids?ruleset=" + replay.ruleset)).json();
//   const mine = simulate(content, replay.seed, replay.a, replay.b);
//   // mine: {format, ruleset, seed, a, b, events, hashes, winner, reason, rolls, health}
//   const verdict = verify(content, replay);  // {ok, rolls, matching, firstMismatch, ...}
//
// Seeds are 64-bit: pass a BigInt, a decimal string or a safe integer, and read replays with
// parseReplay(text), which keeps the seed exact (JSON.parse alone rounds it to a double).

const MASK64 = (1n << 64n) - 1n;
const GOLDEN_GAMMA = 0x9e3779b97f4a7c15n;

const ROLL_TRIGGERS = new Set([
  "every_roll", "face", "sum", "sum_at_least", "sum_at_most", "doubles", "odd", "even",
]);
const ENEMY_TARGETS = new Set([
  "highest_threat", "lowest_health", "highest_health", "leftmost", "rightmost",
  "all_enemies", "random_enemy",
]);

/** SplitMix64 over BigInt, state = seed (docs/rules/cryptids.md#splitmix64-step-by-step). */
export class SplitMix64 {
  constructor(seed) {
    const state = BigInt(seed);
    if (state < 0n || state > MASK64) throw new RangeError("seed must be in 0..2^64-1");
    this.state = state;
  }

  next() {
    this.state = (this.state + GOLDEN_GAMMA) & MASK64;
    let z = this.state;
    z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & MASK64;
    z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & MASK64;
    return z ^ (z >> 31n);
  }

  /** An index in 0..n-1: next() % n. */
  below(n) {
    return Number(this.next() % BigInt(n));
  }
}

// ---- SHA-256 (synchronous, so simulate() needs no await and no secure context) -------------

const K = new Uint32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);

/** SHA-256 of a Uint8Array, as a Uint8Array of 32 bytes (FIPS 180-4). */
export function sha256(bytes) {
  const bitLength = bytes.length * 8;
  const padded = new Uint8Array((((bytes.length + 9 + 63) >> 6) << 6));
  padded.set(bytes);
  padded[bytes.length] = 0x80;
  const view = new DataView(padded.buffer);
  view.setUint32(padded.length - 8, Math.floor(bitLength / 2 ** 32));
  view.setUint32(padded.length - 4, bitLength >>> 0);
  const h = new Uint32Array([
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
  ]);
  const w = new Uint32Array(64);
  const rotr = (x, n) => (x >>> n) | (x << (32 - n));
  for (let offset = 0; offset < padded.length; offset += 64) {
    for (let i = 0; i < 16; i++) w[i] = view.getUint32(offset + 4 * i);
    for (let i = 16; i < 64; i++) {
      const s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >>> 3);
      const s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >>> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    let [a, b, c, d, e, f, g, hh] = h;
    for (let i = 0; i < 64; i++) {
      const t1 = hh + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i];
      const t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
      hh = g;
      g = f;
      f = e;
      e = (d + t1) >>> 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) >>> 0;
    }
    h[0] += a; h[1] += b; h[2] += c; h[3] += d; h[4] += e; h[5] += f; h[6] += g; h[7] += hh;
  }
  const out = new Uint8Array(32);
  const outView = new DataView(out.buffer);
  h.forEach((word, i) => outView.setUint32(4 * i, word));
  return out;
}

export const hex = (bytes) => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");

/**
 * The board hash of the rules: for side A then side B, the count of cryptids, then each one's
 * uid, health, max_health, threat, shield, poison, stun, as signed 32-bit big-endian integers;
 * the first 8 bytes of SHA-256 as 16 hex digits. `sides` is [[cryptid, ...], [cryptid, ...]].
 */
export function boardHash(sides) {
  const values = [];
  for (const row of sides) {
    values.push(row.length);
    for (const u of row) {
      values.push(u.uid, u.health, u.maxHealth, u.threat, u.shield, u.poison, u.stun);
    }
  }
  const bytes = new Uint8Array(values.length * 4);
  const view = new DataView(bytes.buffer);
  values.forEach((v, i) => view.setInt32(4 * i, v));
  return hex(sha256(bytes).subarray(0, 8));
}

// ---- content --------------------------------------------------------------------------------

function compileAbility(ability, level) {
  const [kind, value] = ability.trigger.split(":");
  return {
    trigger: kind,
    value: value === undefined ? 0 : Number(value),
    effect: ability.effect,
    target: ability.target,
    magnitude: ability.magnitude[level - 1],
    token: ability.token ?? null,
  };
}

const INDEXES = new WeakMap(); // per catalogue object, so a viewer's many calls build it once

/** Species and tokens of a served catalogue (`GET /v1/content/cryptids`), by id. */
function index(content) {
  if (INDEXES.has(content)) return INDEXES.get(content);
  const species = new Map(content.species.map((s) => [s.id, s]));
  const tokens = new Map(content.tokens.map((t) => [t.id, t]));
  const harmful = (ability, seen) => {
    if (ability.effect === "damage" || ability.effect === "poison") {
      return ENEMY_TARGETS.has(ability.target);
    }
    const token = ability.token;
    if (ability.effect !== "summon" || token == null || seen.has(token)) return false;
    return harmful(tokens.get(token).ability, new Set([...seen, token]));
  };
  const built = { species, tokens, harmful };
  INDEXES.set(content, built);
  return built;
}

function fireCount(a, d1, d2, total) {
  switch (a.trigger) {
    case "every_roll": return 1;
    case "face": return (d1 === a.value ? 1 : 0) + (d2 === a.value ? 1 : 0);
    case "sum": return total === a.value ? 1 : 0;
    case "sum_at_least": return total >= a.value ? 1 : 0;
    case "sum_at_most": return total <= a.value ? 1 : 0;
    case "doubles": return d1 === d2 ? 1 : 0;
    case "odd": return total & 1;
    case "even": return 1 - (total & 1);
    default: return 0;
  }
}

// ---- the battle -----------------------------------------------------------------------------

class Battle {
  constructor(content, seed, a, b) {
    this.content = content;
    this.ix = index(content);
    this.rules = content.battle;
    this.rng = new SplitMix64(seed);
    this.events = [];
    this.hashes = [];
    this.bonus = 0;
    this.odd = true;
    this.reactionsLeft = this.rules.reaction_limit;
    this.units = []; // every cryptid on the board, dead ones too until step 6 removes them
    this.dying = []; // brought to 0 health since step 6 last looked
    const size = this.rules.board_size;
    this.board = [new Array(size).fill(null), new Array(size).fill(null)];
    [a, b].forEach((warband, side) => {
      warband.forEach(([speciesId, ability, level], slot) => {
        const s = this.ix.species.get(speciesId);
        if (!s) throw new Error(`unknown species ${speciesId}`);
        const spec = s.abilities[ability];
        this.place(this.unit(side * size + slot, side, slot, s, spec, level));
      });
    });
    this.nextUid = 2 * size;
    this.observe = null; // called with each roll's hash, after step 6
  }

  unit(uid, side, slot, kind, spec, level) {
    return {
      uid, side, slot, kind: kind.id, name: kind.name,
      health: kind.health, maxHealth: kind.health, threat: kind.threat,
      shield: 0, poison: 0, stun: 0,
      ability: compileAbility(spec, level),
      harmful: this.ix.harmful(spec, new Set()),
    };
  }

  place(u) {
    this.board[u.side][u.slot] = u;
    this.units.push(u);
  }

  // Threat order: higher threat, then lower slot, then side A first on odd rolls.
  key(u) {
    return -u.threat * 65536 + u.slot * 2 + (this.odd ? u.side : 1 - u.side);
  }

  sorted(list) {
    return list.sort((x, y) => this.key(x) - this.key(y));
  }

  emit(...event) {
    this.events.push(event);
  }

  // ---- targets ----

  targets(u) {
    const g = u.ability.target;
    const living = (row) => row.filter((x) => x !== null && x.health > 0);
    if (g === "self") return u.health > 0 ? [u] : [];
    if (!ENEMY_TARGETS.has(g)) {
      const allies = living(this.board[u.side]);
      if (g === "all_allies") return allies;
      if (g === "lowest_health_ally") {
        return allies.length ? [allies.reduce((m, x) => (x.health < m.health ? x : m))] : [];
      }
      return allies.filter((x) => x.slot === u.slot - 1 || x.slot === u.slot + 1);
    }
    const enemies = living(this.board[1 - u.side]);
    if (g === "all_enemies") return enemies;
    if (!enemies.length) return [];
    if (g === "random_enemy") return [enemies[this.rng.below(enemies.length)]];
    if (g === "leftmost") return [enemies[0]];
    if (g === "rightmost") return [enemies[enemies.length - 1]];
    // Strict comparisons keep the leftmost on ties.
    const better = {
      highest_threat: (x, m) => x.threat > m.threat,
      lowest_health: (x, m) => x.health < m.health,
      highest_health: (x, m) => x.health > m.health,
    }[g];
    return [enemies.reduce((m, x) => (better(x, m) ? x : m))];
  }

  // ---- effects ----

  activate(u, depth) {
    if (u.stun) {
      u.stun -= 1;
      this.emit("skip", u.uid);
      return;
    }
    this.emit("trigger", u.uid);
    const a = u.ability;
    if (a.effect === "damage") {
      const amount = a.magnitude + this.bonus;
      for (const t of this.targets(u)) if (t.health > 0) this.damage(u.uid, t, amount, depth);
    } else if (a.effect === "heal") {
      for (const t of this.targets(u)) if (t.health > 0) this.heal(u, t, depth);
    } else if (a.effect === "summon") {
      this.summon(u);
    } else {
      this.buff(u);
    }
  }

  buff(u) {
    const { effect, magnitude: m } = u.ability;
    for (const t of this.targets(u)) {
      let value;
      if (effect === "shield") value = t.shield += m;
      else if (effect === "poison") value = t.poison += m;
      else if (effect === "stun") value = t.stun += m;
      else if (effect === "threat") value = t.threat += m;
      else {
        t.health += m;
        value = t.maxHealth += m;
      }
      this.emit(effect, u.uid, t.uid, m, value);
    }
  }

  damage(source, t, amount, depth) {
    const absorbed = Math.min(t.shield, amount);
    t.shield -= absorbed;
    const loss = Math.min(amount - absorbed, t.health);
    t.health -= loss;
    this.emit("damage", source, t.uid, amount, absorbed, t.health);
    if (loss) {
      if (!t.health) this.dying.push(t);
      const watch = (x) =>
        (x.ability.trigger === "on_ally_damaged" && x.side === t.side) ||
        (x.ability.trigger === "on_enemy_damaged" && x.side !== t.side);
      this.react(watch, t, t.ability.trigger === "on_damaged", depth);
    }
  }

  heal(u, t, depth) {
    const gain = Math.min(t.maxHealth - t.health, u.ability.magnitude);
    this.emit("heal", u.uid, t.uid, gain, t.health + gain);
    if (gain) {
      t.health += gain;
      const watch = (x) => x.ability.trigger === "on_ally_healed" && x.side === t.side;
      this.react(watch, t, t.ability.trigger === "on_healed", depth);
    }
  }

  summon(u) {
    const token = this.ix.tokens.get(u.ability.token);
    const row = this.board[u.side];
    for (let i = 0; i < u.ability.magnitude; i++) {
      const slot = row.indexOf(null);
      if (slot < 0) {
        this.emit("summon_failed", u.uid, token.id);
        return;
      }
      const t = this.unit(this.nextUid++, u.side, slot, token, token.ability, 1);
      this.place(t);
      this.emit("summon", u.uid, t.uid, token.id, slot);
    }
  }

  // Reactions to damage or healing of t, at once and depth first; `itself`: t reacts to its own.
  react(watch, t, itself, depth) {
    const found = this.units.filter((x) => x.health > 0 && x !== t && watch(x));
    if (itself && t.health > 0) found.push(t);
    this.sorted(found);
    const next = depth + 1;
    for (const x of found) {
      if (x.health <= 0) continue;
      if (next > this.rules.chain_depth || this.reactionsLeft <= 0) {
        this.emit("chain_limit", x.uid);
        continue;
      }
      this.reactionsLeft -= 1;
      this.activate(x, next);
    }
  }

  // ---- the roll ----

  poisonTick() {
    for (const x of this.sorted(this.units.filter((u) => u.poison && u.health > 0))) {
      if (x.health <= 0) continue;
      const stacks = x.poison;
      x.poison = stacks - 1;
      this.emit("tick", x.uid, stacks);
      this.damage(-1, x, stacks, 0);
    }
  }

  isDice(u) {
    return u.ability.effect === "add_to_sum" || u.ability.effect === "reroll";
  }

  // Step 3: returns [new sum, whether to re-roll].
  diceAbilities(d1, d2, total) {
    const fired = this.units.filter(
      (x) => x.health > 0 && ROLL_TRIGGERS.has(x.ability.trigger) && this.isDice(x) &&
        fireCount(x.ability, d1, d2, d1 + d2),
    );
    for (const x of this.sorted(fired)) {
      for (let n = fireCount(x.ability, d1, d2, d1 + d2); n > 0; n--) {
        if (x.stun) {
          x.stun -= 1;
          this.emit("skip", x.uid);
          continue;
        }
        this.emit("trigger", x.uid);
        if (x.ability.effect === "reroll") {
          this.emit("reroll", x.uid);
          return [total, true];
        }
        total += x.ability.magnitude;
        this.emit("sum", x.uid, x.ability.magnitude, total);
      }
    }
    return [total, false];
  }

  // Step 4 (and 5 through the reactions); the list is sorted once, when it is built.
  rollAbilities(d1, d2, total) {
    const fired = this.units.filter(
      (x) => x.health > 0 && ROLL_TRIGGERS.has(x.ability.trigger) && !this.isDice(x) &&
        fireCount(x.ability, d1, d2, total),
    );
    for (const x of this.sorted(fired)) {
      for (let n = fireCount(x.ability, d1, d2, total); n > 0 && x.health > 0; n--) {
        this.activate(x, 0);
      }
    }
  }

  // Step 6: remove the dead in waves, resolve death abilities, then close up to the left.
  deaths() {
    let waves = 0;
    const emptied = new Set();
    let dead = this.dying;
    while (dead.length) {
      this.dying = [];
      this.sorted(dead);
      for (const x of dead) {
        this.board[x.side][x.slot] = null;
        emptied.add(x.side);
        this.emit("death", x.uid);
      }
      this.units = this.units.filter((x) => !dead.includes(x));
      if (waves >= this.rules.chain_depth) {
        this.emit("chain_limit", -1);
      } else {
        waves += 1;
        this.deathAbilities(dead);
      }
      dead = this.dying;
    }
    for (const side of emptied) {
      const row = this.board[side];
      const kept = row.filter((x) => x !== null);
      kept.forEach((x, slot) => { x.slot = slot; });
      this.board[side] = kept.concat(new Array(row.length - kept.length).fill(null));
    }
  }

  deathAbilities(dead) {
    const acts = [];
    for (const d of dead) {
      if (d.ability.trigger === "on_death") acts.push([this.key(d), this.key(d), d]);
    }
    for (const x of this.units) {
      const t = x.ability.trigger;
      if (t !== "on_ally_death" && t !== "on_enemy_death") continue;
      for (const d of dead) {
        if ((d.side === x.side) === (t === "on_ally_death")) acts.push([this.key(x), this.key(d), x]);
      }
    }
    acts.sort((p, q) => p[0] - q[0] || p[1] - q[1]);
    for (const [, , x] of acts) {
      if (x.health > 0 || x.ability.trigger === "on_death") this.activate(x, 0);
    }
  }

  sides() {
    return this.board.map((row) => {
      const end = row.indexOf(null);
      return end < 0 ? row.slice() : row.slice(0, end);
    });
  }

  run() {
    const { die_faces: faces, sudden_death_start: sudden, roll_limit: rollLimit } = this.rules;
    let roll = 0;
    let reason;
    let aliveA;
    let aliveB;
    for (;;) {
      aliveA = this.board[0][0] !== null;
      aliveB = this.board[1][0] !== null;
      if (!(aliveA && aliveB)) { reason = "wipe"; break; }
      if (roll >= rollLimit) { reason = "roll_limit"; break; }
      if (!this.units.some((x) => x.harmful) && !this.units.some((x) => x.poison)) {
        reason = "stalemate";
        break;
      }
      roll += 1;
      this.odd = (roll & 1) === 1;
      this.reactionsLeft = this.rules.reaction_limit;
      const d1 = 1 + Number(this.rng.next() % BigInt(faces));
      const d2 = 1 + Number(this.rng.next() % BigInt(faces));
      this.emit("roll", roll, d1, d2);
      this.bonus = roll >= sudden ? roll - sudden + 1 : 0;
      if (this.bonus) this.emit("sudden_death", this.bonus);
      this.poisonTick();
      const [total, reroll] = this.diceAbilities(d1, d2, d1 + d2);
      if (!reroll) this.rollAbilities(d1, d2, total);
      if (this.dying.length) this.deaths();
      const hash = boardHash(this.sides());
      this.hashes.push(hash);
      if (this.observe) this.observe(hash);
    }
    const health = (row) => row.reduce((sum, x) => sum + (x ? x.health : 0), 0);
    const healthA = health(this.board[0]);
    const healthB = health(this.board[1]);
    let winner;
    if (reason === "wipe") winner = aliveA ? "a" : aliveB ? "b" : "draw";
    else winner = healthA > healthB ? "a" : healthB > healthA ? "b" : "draw";
    this.emit("end", winner, reason, healthA, healthB);
    return { winner, reason, rolls: roll, health: { a: healthA, b: healthB } };
  }
}

/**
 * Re-simulate a battle.
 *
 * @param content the ruleset's catalogue as served by `GET /v1/content/cryptids?ruleset=…`
 * @param seed    0..2^64-1 as a BigInt, a decimal string or a safe integer
 * @param a, b    warbands: arrays of [species_id, ability_index, level], slot 0 first
 * @returns the replay's wire form `{format, ruleset, seed (BigInt), a, b, events, hashes}`
 *          with the result beside it: `winner`, `reason`, `rolls`, `health: {a, b}`
 */
export function simulate(content, seed, a, b) {
  const battle = new Battle(content, seed, a, b);
  const result = battle.run();
  return {
    format: 1,
    ruleset: content.ruleset,
    seed: BigInt(seed),
    a: a.map((p) => [...p]),
    b: b.map((p) => [...p]),
    events: battle.events,
    hashes: battle.hashes,
    ...result,
  };
}

/**
 * Every state a viewer draws: the board after each roll, replayed from the events themselves.
 * Returns `{initial, rolls: [{roll, dice, events, sides, hash}]}` where `sides` are copies of
 * both rows after the roll (what the roll's hash covers).
 */
export function timeline(content, seed, a, b) {
  const battle = new Battle(content, seed, a, b);
  const snapshot = () => battle.sides().map((row) => row.map((u) => ({ ...u })));
  const initial = snapshot();
  const rolls = [];
  let start = 0;
  // The events between two hashes are one roll.
  battle.observe = (hash) => {
    const events = battle.events.slice(start);
    start = battle.events.length;
    const [, roll, d1, d2] = events[0];
    rolls.push({ roll, dice: [d1, d2], events, sides: snapshot(), hash });
  };
  const result = battle.run();
  const end = battle.events[battle.events.length - 1];
  return { initial, rolls, end, result, hashes: battle.hashes };
}

const sameEvent = (x, y) => x.length === y.length && x.every((v, i) => v === y[i]);

/**
 * Check a replay against a fresh re-simulation of its header (ruleset, seed, a, b).
 *
 * Returns `{ok, rolls, matching, firstMismatch, expected, mine}`: `rolls` is the replay's
 * number of hashes, `matching` how many of its rolls match (events and hash), `firstMismatch`
 * the first roll (1-based) whose hash or events differ, or null.
 */
export function verify(content, replay) {
  const mine = timeline(content, replay.seed, replay.a, replay.b);
  const theirs = splitRolls(replay.events);
  const count = Math.max(replay.hashes.length, mine.rolls.length);
  let matching = 0;
  let firstMismatch = null;
  for (let i = 0; i < count; i++) {
    const mineRoll = mine.rolls[i];
    const theirEvents = theirs[i] || [];
    const same =
      mineRoll !== undefined && replay.hashes[i] === mineRoll.hash &&
      theirEvents.length === mineRoll.events.length &&
      theirEvents.every((e, j) => sameEvent(e, mineRoll.events[j]));
    if (same) matching += 1;
    else if (firstMismatch === null) firstMismatch = i + 1;
  }
  const endTheirs = replay.events[replay.events.length - 1];
  const endSame = endTheirs !== undefined && sameEvent(endTheirs, mine.end);
  return {
    ok: firstMismatch === null && endSame && replay.hashes.length === mine.rolls.length,
    rolls: replay.hashes.length,
    matching,
    firstMismatch,
    endSame,
    mine,
  };
}

/** A replay's events cut into rolls (each starting at its `roll` event); `end` is left out. */
export function splitRolls(events) {
  const rolls = [];
  for (const event of events) {
    if (event[0] === "roll") rolls.push([event]);
    else if (event[0] !== "end" && rolls.length) rolls[rolls.length - 1].push(event);
  }
  return rolls;
}

/** JSON.parse for a replay or a simulate answer, keeping 64-bit seeds exact as BigInt. */
export function parseReplay(text) {
  let exact = true;
  const parsed = JSON.parse(text, (key, value, context) => {
    if (key !== "seed" || typeof value !== "number") return value;
    if (context === undefined) exact = false; // an engine without JSON.parse source text
    return exact ? BigInt(context.source) : value;
  });
  if (exact) return parsed;
  // Quoting the seeds first keeps their digits; "seed" is only ever a key in these documents.
  const quoted = text.replace(/"seed"\s*:\s*(\d+)/g, '"seed":"$1"');
  return JSON.parse(quoted, (key, value) => (key === "seed" ? BigInt(value) : value));
}
