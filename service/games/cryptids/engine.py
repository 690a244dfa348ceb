"""The battle: a pure function of (ruleset, seed, warband A, warband B).

docs/rules/cryptids.md is the contract this module implements; the comments here only say why
the code is shaped as it is. Events are tuples, appended only when recording, because building
them (and the board hashes) is over a quarter of the cost of a battle.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from operator import attrgetter, itemgetter
from typing import Any, Final

from service.games.cryptids.compiled import (
    E_ADD_TO_SUM,
    E_DAMAGE,
    E_HEAL,
    E_POISON,
    E_REROLL,
    E_SHIELD,
    E_STUN,
    E_SUMMON,
    E_THREAT,
    G_ADJACENT_ALLIES,
    G_ALL_ALLIES,
    G_ALL_ENEMIES,
    G_HIGHEST_HEALTH,
    G_HIGHEST_THREAT,
    G_LEFTMOST,
    G_LOWEST_HEALTH,
    G_LOWEST_HEALTH_ALLY,
    G_RANDOM_ENEMY,
    G_SELF,
    T_ON_ALLY_DAMAGED,
    T_ON_ALLY_DEATH,
    T_ON_ALLY_HEALED,
    T_ON_DAMAGED,
    T_ON_DEATH,
    T_ON_ENEMY_DAMAGED,
    T_ON_HEALED,
    CompiledRuleset,
    UnitSpec,
    compiled,
    fire_count,
)
from service.games.cryptids.content import Ruleset
from service.games.cryptids.hashing import hash_parts, pack_unit
from service.games.cryptids.replay import Event, Replay
from service.games.cryptids.warband import Warband, validate_warband
from service.games.kernel.rng import SplitMix64

# Threat order, the sort key of the current roll (see Unit.rank).
BY_KEY_ODD: Final = attrgetter("key_odd")
BY_KEY_EVEN: Final = attrgetter("key_even")
# Death abilities: the owner's threat order, then the dead one's (see _death_abilities).
BY_OWNER_THEN_DEAD: Final = itemgetter(0, 1)

# uids: side A's cryptids are 0..4 by starting slot, side B's 5..9 (board_size apart); summoned
# tokens are numbered on from 2 * board_size in the order they join.


@dataclass(frozen=True, slots=True)
class BattleResult:
    winner: str  # "a", "b" or "draw"
    rolls: int
    health_a: int
    health_b: int
    reason: str  # "wipe", "roll_limit" or "stalemate"
    ruleset: str
    seed: int
    replay: Replay | None


class Unit:
    __slots__ = (
        "effect",
        "fires",
        "harmful",
        "health",
        "key_even",
        "key_odd",
        "magnitude",
        "max_health",
        "packed",
        "poison",
        "shield",
        "side",
        "slot",
        "stun",
        "target",
        "threat",
        "token",
        "trigger",
        "trigger_value",
        "uid",
    )

    def __init__(self, uid: int, side: int, slot: int, spec: UnitSpec) -> None:
        self.uid = uid
        self.side = side
        self.slot = slot
        self.health = spec.health
        self.max_health = spec.health
        self.threat = spec.threat
        self.shield = 0
        self.poison = 0
        self.stun = 0
        self.trigger = spec.trigger
        self.trigger_value = spec.trigger_value
        self.effect = spec.effect
        self.target = spec.target
        self.magnitude = spec.magnitude
        self.token = spec.token
        self.harmful = spec.harmful
        self.fires = spec.fires
        # This cryptid's part of the board hash encoding, or None when its state changed since.
        self.packed: bytes | None = None
        self.rank()

    def rank(self) -> None:
        """Recompute the threat-order sort keys; called whenever threat or slot changes.

        Threat order as one int: higher threat first, then lower slot, then the side that goes
        first on this roll (A on odd rolls, B on even rolls). Keys kept as attributes let the
        sorts use a C-level attrgetter instead of a Python key function.
        """
        base = (-self.threat << 16) | (self.slot << 1)
        self.key_odd = base | self.side
        self.key_even = base | (self.side ^ 1)


class _Battle:
    # The unit lists (`units` and the per-trigger subsets, see _place) hold every cryptid on
    # the board; cryptids at 0 health stay in them until step 6 removes them, so every reader
    # checks health. They exist so that a roll visits only the cryptids that could act.
    __slots__ = (
        "board",
        "bonus",
        "chain_depth",
        "comp",
        "damage_watch",
        "death_units",
        "dice_units",
        "draws",
        "dying",
        "events",
        "faces",
        "harmful_present",
        "heal_watch",
        "next_uid",
        "poison_pending",
        "reactions_left",
        "record",
        "rng",
        "roll_units",
        "seed",
        "sort_key",
        "units",
    )

    def __init__(
        self, comp: CompiledRuleset, seed: int, a: Warband, b: Warband, record: bool
    ) -> None:
        rules = comp.ruleset.battle
        self.comp = comp
        self.seed = seed
        self.rng = SplitMix64(seed)
        self.draws: list[Any] = []  # outputs of the generator drawn ahead, the next one last
        self.record = record
        self.events: list[Event] = []  # appended to only when recording
        self.chain_depth = rules.chain_depth
        self.reactions_left = rules.reaction_limit
        self.faces = rules.die_faces
        self.bonus = 0
        self.units: list[Unit] = []
        self.roll_units: list[Unit] = []
        self.dice_units: list[Unit] = []
        # Per side: the cryptids that react when another cryptid of that side loses health
        # (its allies with on_ally_damaged, its enemies with on_enemy_damaged) or is healed.
        self.damage_watch: tuple[list[Unit], list[Unit]] = ([], [])
        self.heal_watch: tuple[list[Unit], list[Unit]] = ([], [])
        self.death_units: list[Unit] = []
        self.dying: list[Unit] = []  # brought to 0 health since step 6 last looked
        self.harmful_present = False
        self.poison_pending = False  # False only when no cryptid has poison stacks
        size = rules.board_size
        self.board: list[list[Unit | None]] = [[None] * size, [None] * size]
        for side, warband in enumerate((a, b)):
            for slot, pick in enumerate(warband):
                self._place(Unit(side * size + slot, side, slot, comp.species[pick]))
        self.next_uid = 2 * size
        self.sort_key: Callable[[Unit], int] = BY_KEY_ODD

    def _group(self, u: Unit) -> "list[Unit] | None":
        """The battle's unit list for u's kind of trigger; None for on_damaged and on_healed,
        which only the damaged or healed cryptid itself can fire. Looked up rather than kept
        on the unit: a unit pointing at a list that holds it would leave every battle to the
        cycle collector."""
        t = u.trigger
        if t < T_ON_DAMAGED:
            if u.effect == E_ADD_TO_SUM or u.effect == E_REROLL:
                return self.dice_units
            return self.roll_units
        if t in (T_ON_DAMAGED, T_ON_HEALED):
            return None
        if t == T_ON_ALLY_DAMAGED:
            return self.damage_watch[u.side]
        if t == T_ON_ENEMY_DAMAGED:
            return self.damage_watch[1 - u.side]
        if t == T_ON_ALLY_HEALED:
            return self.heal_watch[u.side]
        return self.death_units

    def _place(self, u: Unit) -> None:
        self.board[u.side][u.slot] = u
        self.units.append(u)
        if u.harmful:
            self.harmful_present = True
        group = self._group(u)
        if group is not None:
            group.append(u)

    def _drop_dead(self, dead: list[Unit]) -> None:
        # In place: nothing iterates the unit lists while step 6 removes the dead.
        for x in dead:
            self.units.remove(x)
            group = self._group(x)
            if group is not None:
                group.remove(x)
        if self.harmful_present and any(x.harmful for x in dead):
            self.harmful_present = any(x.harmful for x in self.units)

    # --- targets -------------------------------------------------------------------------

    def _targets(self, u: Unit) -> list[Unit]:
        """The targets of the rules that can hit several: all_enemies, all_allies and
        adjacent_allies (the others have one target at most, see _target)."""
        g = u.target
        if g == G_ALL_ENEMIES:
            return [x for x in self.board[1 - u.side] if x is not None and x.health > 0]
        allies = [x for x in self.board[u.side] if x is not None and x.health > 0]
        if g == G_ALL_ALLIES:
            return allies
        return [x for x in allies if x.slot == u.slot - 1 or x.slot == u.slot + 1]

    def _target(self, u: Unit) -> "Unit | None":
        """The one target of any other rule, or None. The rules scan the row once without
        building the list of the living: they are most of the activations. Strict comparisons
        keep the leftmost on ties."""
        g = u.target
        if g == G_SELF:
            return u if u.health > 0 else None
        row = self.board[u.side if g == G_LOWEST_HEALTH_ALLY else 1 - u.side]
        if g == G_RANDOM_ENEMY:
            living = 0
            for x in row:
                if x is not None and x.health > 0:
                    living += 1
            if not living:
                return None
            pick = self._below(living)
            for x in row:
                if x is not None and x.health > 0:
                    if not pick:
                        return x
                    pick -= 1
        best = None
        for x in row:
            if x is None or x.health <= 0:
                continue
            if best is None:
                best = x
                if g == G_LEFTMOST:
                    break
            elif g == G_HIGHEST_THREAT:
                if x.threat > best.threat:
                    best = x
            elif g in (G_LOWEST_HEALTH, G_LOWEST_HEALTH_ALLY):
                if x.health < best.health:
                    best = x
            elif g == G_HIGHEST_HEALTH:
                if x.health > best.health:
                    best = x
            else:
                best = x  # G_RIGHTMOST: the last living one
        return best

    def _next(self) -> Any:
        """The generator's next output: next() of kernel.rng, taken from a batch drawn ahead.

        Any: a 64-bit output never fits the compiled build's small ints, and as a plain object
        it skips their conversions."""
        draws = self.draws
        if not draws:
            draws = self.draws = self.rng.ahead()[::-1]
        return draws.pop()

    def _below(self, n: int) -> int:
        """An index in 0..n-1: next() % n, as kernel.rng's below(n)."""
        index: int = self._next() % n
        return index

    # --- effects -------------------------------------------------------------------------

    def _activate(self, u: Unit, depth: int) -> None:
        """Resolve u's ability once (its trigger has fired); a pending stun cancels it."""
        record = self.record
        if u.stun:
            u.stun -= 1
            u.packed = None
            if record:
                self.events.append(("skip", u.uid))
            return
        if record:
            self.events.append(("trigger", u.uid))
        effect = u.effect
        if effect == E_SUMMON:
            self._summon(u)
            return
        g = u.target
        if g in (G_ALL_ENEMIES, G_ALL_ALLIES, G_ADJACENT_ALLIES):
            # An earlier target's reactions may bring a later one to 0 before its turn.
            if effect == E_DAMAGE:
                amount = u.magnitude + self.bonus
                for t in self._targets(u):
                    if t.health > 0:
                        self._damage(u.uid, t, amount, depth)
            elif effect == E_HEAL:
                for t in self._targets(u):
                    if t.health > 0:
                        self._heal(u, t, depth)
            else:
                for t in self._targets(u):
                    self._buff(u, t, effect)
            return
        target = self._target(u)
        if target is None:
            return
        if effect == E_DAMAGE:
            self._damage(u.uid, target, u.magnitude + self.bonus, depth)
        elif effect == E_HEAL:
            self._heal(u, target, depth)
        else:
            self._buff(u, target, effect)

    def _buff(self, u: Unit, t: Unit, effect: int) -> None:
        m = u.magnitude
        t.packed = None
        if effect == E_SHIELD:
            t.shield += m
            value, name = t.shield, "shield"
        elif effect == E_POISON:
            t.poison += m
            self.poison_pending = True
            value, name = t.poison, "poison"
        elif effect == E_STUN:
            t.stun += m
            value, name = t.stun, "stun"
        elif effect == E_THREAT:
            t.threat += m
            t.rank()
            value, name = t.threat, "threat"
        else:
            t.max_health += m
            t.health += m
            value, name = t.max_health, "max_health"
        if self.record:
            self.events.append((name, u.uid, t.uid, m, value))

    def _damage(self, source: int, t: Unit, amount: int, depth: int) -> None:
        absorbed = 0
        if t.shield:
            absorbed = t.shield if t.shield < amount else amount
            t.shield -= absorbed
        loss = amount - absorbed
        if loss > t.health:
            loss = t.health
        t.health -= loss
        t.packed = None
        if self.record:
            self.events.append(("damage", source, t.uid, amount, absorbed, t.health))
        if loss:
            if not t.health:
                self.dying.append(t)
            watchers = self.damage_watch[t.side]
            if watchers or t.trigger == T_ON_DAMAGED:
                self._react(watchers, t, t.trigger == T_ON_DAMAGED, depth)

    def _heal(self, u: Unit, t: Unit, depth: int) -> None:
        gain = t.max_health - t.health
        if gain > u.magnitude:
            gain = u.magnitude
        if self.record:
            self.events.append(("heal", u.uid, t.uid, gain, t.health + gain))
        if gain:
            t.health += gain
            t.packed = None
            watchers = self.heal_watch[t.side]
            if watchers or t.trigger == T_ON_HEALED:
                self._react(watchers, t, t.trigger == T_ON_HEALED, depth)

    def _summon(self, u: Unit) -> None:
        token = u.token
        assert token is not None
        spec = self.comp.tokens[token]
        row = self.board[u.side]
        for _ in range(u.magnitude):
            if None not in row:
                if self.record:
                    self.events.append(("summon_failed", u.uid, token))
                return
            t = Unit(self.next_uid, u.side, row.index(None), spec)
            self.next_uid += 1
            self._place(t)
            if self.record:
                self.events.append(("summon", u.uid, t.uid, token, t.slot))

    def _react(self, watchers: list[Unit], t: Unit, itself: bool, depth: int) -> None:
        """Reactions to damage or healing of t, resolved at once, depth first.

        `watchers` react to any other cryptid of t's side; `itself`: t reacts to its own.
        """
        found = [x for x in watchers if x.health > 0 and x is not t]
        if itself and t.health > 0:
            found.append(t)
        if not found:
            return
        if len(found) > 1:
            found.sort(key=self.sort_key)
        depth += 1
        for x in found:
            if x.health <= 0:
                continue
            if depth > self.chain_depth or self.reactions_left <= 0:
                if self.record:
                    self.events.append(("chain_limit", x.uid))
                continue
            self.reactions_left -= 1
            self._activate(x, depth)

    # --- the roll ------------------------------------------------------------------------

    def _poison_tick(self) -> None:
        poisoned = [x for x in self.units if x.poison and x.health > 0]
        if not poisoned:
            self.poison_pending = False
            return
        if len(poisoned) > 1:
            poisoned.sort(key=self.sort_key)
        for x in poisoned:
            if x.health <= 0:
                continue
            stacks = x.poison
            x.poison = stacks - 1
            x.packed = None
            if self.record:
                self.events.append(("tick", x.uid, stacks))
            self._damage(-1, x, stacks, 0)

    def _dice_abilities(self, index: int, total: int) -> tuple[int, bool]:
        """Step 3: abilities that change the dice; returns the new sum and whether to re-roll."""
        fired = [x for x in self.dice_units if x.health > 0 and x.fires[index]]
        if not fired:
            return total, False
        if len(fired) > 1:
            fired.sort(key=self.sort_key)
        record = self.record
        for x in fired:
            for _ in range(x.fires[index]):
                if x.stun:
                    x.stun -= 1
                    x.packed = None
                    if record:
                        self.events.append(("skip", x.uid))
                    continue
                if record:
                    self.events.append(("trigger", x.uid))
                if x.effect == E_REROLL:
                    if record:
                        self.events.append(("reroll", x.uid))
                    return total, True
                total += x.magnitude
                if record:
                    self.events.append(("sum", x.uid, x.magnitude, total))
        return total, False

    def _roll_abilities(self, d1: int, d2: int, index: int, total: int) -> None:
        """Step 4 (and 5 through the reactions): every other ability the roll triggers."""
        plain = total == d1 + d2
        fired = [
            x
            for x in self.roll_units
            if x.health > 0
            and (x.fires[index] if plain else fire_count(x.trigger, x.trigger_value, d1, d2, total))
        ]
        if len(fired) > 1:
            fired.sort(key=self.sort_key)
        for x in fired:
            n = x.fires[index] if plain else fire_count(x.trigger, x.trigger_value, d1, d2, total)
            while n and x.health > 0:
                self._activate(x, 0)
                n -= 1

    def _deaths(self) -> None:
        """Step 6: remove the dead in waves, resolve death abilities, then close up left."""
        waves = 0
        key = self.sort_key
        board = self.board
        record = self.record
        emptied: set[int] = set()  # the sides that lost someone
        dead = self.dying
        while dead:
            self.dying = []
            dead.sort(key=key)
            for x in dead:
                board[x.side][x.slot] = None
                emptied.add(x.side)
                if record:
                    self.events.append(("death", x.uid))
            self._drop_dead(dead)
            if waves >= self.chain_depth:
                if record:
                    self.events.append(("chain_limit", -1))
            elif self.death_units or any(x.trigger == T_ON_DEATH for x in dead):
                waves += 1
                self._death_abilities(dead)
            dead = self.dying
        for side in emptied:
            row = board[side]
            kept = [x for x in row if x is not None]
            for slot, x in enumerate(kept):
                if x.slot != slot:
                    x.slot = slot
                    x.rank()
            board[side] = kept + [None] * (len(row) - len(kept))

    def _death_abilities(self, dead: list[Unit]) -> None:
        """One wave of on_death, on_ally_death, on_enemy_death, in threat order of the owner."""
        key = self.sort_key
        acts: list[tuple[int, int, Unit]] = [
            (key(d), key(d), d) for d in dead if d.trigger == T_ON_DEATH
        ]
        for x in self.death_units:
            if x.trigger != T_ON_DEATH:
                want_same = x.trigger == T_ON_ALLY_DEATH
                acts.extend((key(x), key(d), x) for d in dead if (d.side == x.side) == want_same)
        acts.sort(key=BY_OWNER_THEN_DEAD)
        for _, _, x in acts:
            if x.health > 0 or x.trigger == T_ON_DEATH:
                self._activate(x, 0)

    def _hash(self) -> str:
        # Rows are compact here (step 6 closed them up; a summon takes the first free slot),
        # and only cryptids whose state changed since the last roll are packed again.
        parts: list[bytes] = []
        counts = self.comp.count_bytes
        for row in self.board:
            mark = len(parts)
            parts.append(b"")
            for x in row:
                if x is None:
                    break
                packed = x.packed
                if packed is None:
                    packed = x.packed = pack_unit(
                        x.uid, x.health, x.max_health, x.threat, x.shield, x.poison, x.stun
                    )
                parts.append(packed)
            parts[mark] = counts[len(parts) - mark - 1]
        return hash_parts(parts)

    def _throw(self, faces: int) -> tuple[int, int]:
        """Two dice, as kernel.rng's die(faces) twice."""
        d1: int = 1 + self._next() % faces
        d2: int = 1 + self._next() % faces
        return d1, d2

    def run(self, a: Warband, b: Warband) -> BattleResult:
        """The battle to its end; a and b (the validated warbands) go into the replay."""
        rules = self.comp.ruleset.battle
        faces = self.faces
        sudden = rules.sudden_death_start
        roll_limit = rules.roll_limit
        reaction_limit = rules.reaction_limit
        board = self.board
        record = self.record
        events = self.events
        hashes: list[str] = []
        roll = 0
        while True:
            alive_a = board[0][0] is not None
            alive_b = board[1][0] is not None
            if not (alive_a and alive_b):
                reason = "wipe"
                break
            if roll >= roll_limit:
                reason = "roll_limit"
                break
            if not self.harmful_present and not (
                self.poison_pending and any(x.poison for x in self.units)
            ):
                reason = "stalemate"
                break
            roll += 1
            self.sort_key = BY_KEY_ODD if roll & 1 else BY_KEY_EVEN
            self.reactions_left = reaction_limit
            d1, d2 = self._throw(faces)
            if record:
                events.append(("roll", roll, d1, d2))
            self.bonus = roll - sudden + 1 if roll >= sudden else 0
            if self.bonus and record:
                events.append(("sudden_death", self.bonus))
            if self.poison_pending:
                self._poison_tick()
            index = (d1 - 1) * faces + d2 - 1
            total, reroll = d1 + d2, False
            if self.dice_units:
                total, reroll = self._dice_abilities(index, total)
            if not reroll:
                self._roll_abilities(d1, d2, index, total)
            if self.dying:
                self._deaths()
            if record:
                hashes.append(self._hash())
        health_a = sum(x.health for x in board[0] if x is not None)
        health_b = sum(x.health for x in board[1] if x is not None)
        if reason == "wipe":
            winner = "a" if alive_a else "b" if alive_b else "draw"
        else:
            winner = "a" if health_a > health_b else "b" if health_b > health_a else "draw"
        ruleset_id = self.comp.ruleset.id
        replay = None
        if record:
            events.append(("end", winner, reason, health_a, health_b))
            replay = Replay(ruleset_id, self.seed, a, b, events, hashes)
        return BattleResult(winner, roll, health_a, health_b, reason, ruleset_id, self.seed, replay)


def simulate(
    ruleset: Ruleset,
    seed: int,
    warband_a: Sequence[Sequence[object]],
    warband_b: Sequence[Sequence[object]],
    record: bool = True,
) -> BattleResult:
    """Fight warband A (the player) against warband B (the ghost) from `seed`.

    A warband is a sequence of (species_id, ability_index 0|1, level). Raises WarbandError on
    a warband the ruleset does not allow and ValueError on a seed outside 0..2^64-1.
    """
    a = validate_warband(ruleset, warband_a, "a")
    b = validate_warband(ruleset, warband_b, "b")
    return _Battle(compiled(ruleset), seed, a, b, record).run(a, b)
