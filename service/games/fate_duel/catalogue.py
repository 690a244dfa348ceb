"""The fate-duel catalogue (docs/rules/fate-duel.md#the-catalogue): every card face, crew,
model, hazard and soulstone use a view or a prompt names, written from the ruleset's content.

A view names a card in play as {"id": "s0.0:4c", "card": "4c"}, a model as
{"id": "s0.m2", "card": "guardia-del-gremio"} and the pulse as {"id": "pulse.1",
"card": "terrorifico"}; the "card" is the catalogue id.
"""

from collections.abc import Mapping
from typing import Any

from service.games.fate_duel.content import (
    ATTACKS,
    ATTRIBUTES,
    RANKS,
    STONE_RANKS,
    SUIT_VALUES,
    TIMINGS,
    CrewSpec,
    Hazard,
    ModelSpec,
    Ruleset,
)
from service.games.kernel.catalogue import Effect, Entry, catalogue, entry

PLUS_FLIP = "plus_flip"
ADD_ONE = "add_one"
SUIT_USE = "suit_"
# Naming a suit twice adds nothing, so each named suit is used at most once a duel.
SUIT_USE_MOST = 1

Made = tuple[str, str, str, str | None, dict[str, Any], list[Effect]]
"""An entry before its text: id, name, kind, family, numbers, effects."""

TEMPLATES = {
    "fate": "worth {amount} in a duel total, of {suits}",
    "must_use": "when flipped it is always the active card, even on a + flip",
    "no_cheat": "while it is the active card, fate may not be cheated",
    "rank": "{rank}",
    "attack": (
        "{attribute} attack on {target}, opposed by its Df: {weak}, {moderate} or {severe} "
        "damage (weak, moderate, severe)"
    ),
    "trigger_total": "trigger {name} ({attribute} duel, total of {suit}): +{amount} to the total",
    "trigger_damage": (
        "trigger {name} ({attribute} duel, total of {suit}): {amount} damage to {target}"
    ),
    "trigger_heal": (
        "trigger {name} ({attribute} duel, total of {suit}): heals {target} by {amount}"
    ),
    "fields": "fields {model}",
    "soulstone_pool": "a pool of {amount} soulstones for its Masters and Henchmen",
    "pulse": (
        "{target} makes a duel of {attribute} against TN {tn} ({requires}), fate modifier "
        "{flip:+d}; on a failure the model loses {amount} of its Wounds"
    ),
    "plus_flip": "one more + flip in this duel",
    "total": "+{amount} to the duel total",
    "suit": "the duel total also has the suit {suit}",
}

WORDS = {
    "wp": "Wp",
    "df": "Df",
    "sh": "Sh",
    "ml": "Ml",
    "every_suit": "every suit",
    "no_suit": "no suit",
    "any_suit": "any suit",
    "maestro": "Master (Maestro): may spend soulstones in its duels",
    "compinche": "Henchman (Compinche): may spend soulstones in its duels",
    "esbirro": "Minion (Esbirro): may not spend soulstones",
    "any_model": "any other living model, friend or enemy",
    "opposing_model": "the opposing model",
    "this_model": "this model",
    "every_living_model": "every living model",
    "inmediato": "At once",
    "tras_tener_exito": "After succeeding",
    "tras_fallar": "After failing",
    "tras_resolver": "After resolving",
    "step_1": "Before the flip",
    "soulstone": "soulstone",
}

TRIGGER_TARGETS = {"total": "this_model", "damage": "opposing_model", "heal": "this_model"}


def stone_uses(rules: Ruleset) -> list[str]:
    """Each way to use one soulstone: an extra + flip, +1 to the total, or a named suit."""
    return [PLUS_FLIP, ADD_ONE, *(SUIT_USE + s.symbol for s in rules.suits)]


def use_most(rules: Ruleset, use: str) -> int:
    """How many times one duel may declare `use`."""
    return SUIT_USE_MOST if use.startswith(SUIT_USE) else rules.stones_per_duel


def build(rules: Ruleset, table: Mapping[str, Any]) -> dict[str, Any]:
    """The catalogue body: entries and the game-wide rules, with `table`'s (seats, rounds)."""
    words = {
        **WORDS,
        **{s.symbol: s.english for s in rules.suits},
        **{m.id: m.name for c in rules.crews.values() for m in c.models},
    }
    made: list[Made] = [
        *_cards(rules),
        *(_crew(c) for c in rules.crews.values()),
        *(_model(c, m) for c in rules.crews.values() for m in c.models),
        *(_hazard(h) for h in rules.hazards.values()),
        *_uses(rules),
    ]
    entries: list[Entry] = [
        entry(i, name, kind, family, numbers, effects, templates=TEMPLATES, words=words)
        for i, name, kind, family, numbers, effects in made
    ]
    return catalogue(entries, _rules(rules, table))


def _cards(rules: Ruleset) -> list[Made]:
    numbered: list[Made] = [
        (f"{v}{s.symbol}", f"{v} de {s.name}", "card", s.symbol, {"value": v},
         [{"kind": "fate", "amount": v, "suits": s.symbol}])
        for s in rules.suits
        for v in SUIT_VALUES
    ]  # fmt: skip
    red = rules.red
    black = rules.black
    jokers: list[Made] = [
        (red.id, red.name, "card", "joker", {"value": red.value},
         [{"kind": "fate", "amount": red.value, "suits": "every_suit"}]),
        (black.id, black.name, "card", "joker", {"value": black.value},
         [{"kind": "fate", "amount": black.value, "suits": "no_suit"},
          {"kind": "must_use"}, {"kind": "no_cheat"}]),
    ]  # fmt: skip
    return [*numbered, *jokers]


def _crew(crew: CrewSpec) -> Made:
    effects: list[Effect] = [{"kind": "fields", "model": m.id} for m in crew.models]
    effects.append({"kind": "soulstone_pool", "amount": crew.soulstones})
    numbers = {"soulstones": crew.soulstones, "models": len(crew.models)}
    return crew.id, crew.name, "crew", None, numbers, effects


def _model(crew: CrewSpec, model: ModelSpec) -> Made:
    weak, moderate, severe = model.damage
    lines = {"weak": weak, "moderate": moderate, "severe": severe}
    effects: list[Effect] = [{"kind": "rank", "rank": model.rank}]
    effects += [{"kind": "attack", "attribute": a, "target": "any_model", **lines} for a in ATTACKS]
    effects += [
        {
            "kind": f"trigger_{t.effect}",
            "name": t.name,
            "attribute": t.attribute,
            "suit": t.suit,
            "amount": t.amount,
            "target": TRIGGER_TARGETS[t.effect],
            "timing": t.timing,
        }
        for t in model.triggers
    ]
    numbers = {
        **{a: model.attributes[a] for a in ATTRIBUTES},
        "wounds": model.wounds,
        **{f"damage_{line}": amount for line, amount in lines.items()},
    }
    return model.id, model.name, "model", crew.id, numbers, effects


def _hazard(hazard: Hazard) -> Made:
    effect: Effect = {
        "kind": "pulse",
        "attribute": hazard.attribute,
        "tn": hazard.tn,
        "requires": hazard.suit or "any_suit",
        "flip": hazard.flip,
        "amount": hazard.wounds,
        "target": "every_living_model",
    }
    numbers = {"tn": hazard.tn, "flip": hazard.flip, "wounds": hazard.wounds}
    return hazard.id, hazard.name, "hazard", hazard.attribute, numbers, [effect]


def _uses(rules: Ruleset) -> list[Made]:
    cost = {"soulstone": 1}
    made: list[Made] = []
    for use in stone_uses(rules):
        if use == PLUS_FLIP:
            name, effect = "+ flip", {"kind": "plus_flip", "amount": 1}
        elif use == ADD_ONE:
            name, effect = "+1", {"kind": "total", "amount": 1}
        else:
            suit = next(s for s in rules.suits if SUIT_USE + s.symbol == use)
            name, effect = f"Suit: {suit.english}", {"kind": "suit", "suit": suit.symbol}
        numbers = {"cost": 1, "most": use_most(rules, use)}
        effects: list[Effect] = [{**effect, "cost": cost, "timing": "step_1"}]
        made.append((use, name, "soulstone_use", None, numbers, effects))
    return made


def _rules(rules: Ruleset, table: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "deck": len(rules.faces),
        "values": [SUIT_VALUES[0], SUIT_VALUES[-1]],
        "suits": [
            {"symbol": s.symbol, "name": s.name, "english": s.english, "from_seed": s.from_seed}
            for s in rules.suits
        ],
        "jokers": [
            {"id": j.id, "name": j.name, "value": j.value, "suits": suits}
            for j, suits in ((rules.red, [s.symbol for s in rules.suits]), (rules.black, []))
        ],
        "hand_size": rules.hand_size,
        "attributes": list(ATTRIBUTES),
        "attacks": list(ATTACKS),
        "ranks": list(RANKS),
        "soulstone_ranks": [r for r in RANKS if r in STONE_RANKS],
        "timings": list(TIMINGS),
        "stones_per_duel": rules.stones_per_duel,
        "damage_margins": {"weak": 1, "moderate": rules.moderate_margin,
                           "severe": rules.severe_margin},
        "tie": "defender",
        **table,
    }  # fmt: skip
