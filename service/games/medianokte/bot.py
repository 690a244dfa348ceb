"""A simple Medianokte bot: it scores each activation from its seat's view only.

It attacks and plays what helps, leaves activations unused rather than waste them, and
explores when nothing is worth an activation, unless its Nave is empty (exploring would lose).
"""

from collections.abc import Mapping
from typing import Any

from service.games.kernel.prompts import Action, Prompt
from service.games.kernel.rng import SplitMix64
from service.games.medianokte.content import CONTENT, Card


def choose(view: Mapping[str, Any], prompt: Prompt, rng_seed: int) -> Action:
    rng = SplitMix64(rng_seed)
    if prompt.kind == "cut":
        at = prompt.params["cut"]["at"]
        return {"type": "cut", "at": at["minimum"] + rng.below(at["maximum"] - at["minimum"] + 1)}
    if prompt.kind == "choose_first":
        mine = [a for a in prompt.actions if a["seat"] == view["seat"]]
        return mine[0] if mine else prompt.actions[0]
    table = _table(view)
    scored = [
        (_score(view, table, a) * 16 + rng.below(16), i) for i, a in enumerate(prompt.actions)
    ]
    return prompt.actions[max(scored)[1]]


def _table(view: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """Every character and astrali in play by instance id."""
    table: dict[str, Mapping[str, Any]] = {}
    for player in view["players"]:
        table[player["character"]["id"]] = player["character"]
        for astrali in player["army"]["cards"]:
            table[astrali["id"]] = astrali
    return table


def _card(view: Mapping[str, Any], instance: str) -> Card:
    """The card an instance id names, read off the seat's own zones in its view."""
    me = view["players"][view["seat"]]
    zones = [me["hand"], me["discardables"], me["actions"], me["permanents"], me["army"]]
    named = {c["id"]: c["card"] for zone in zones for c in zone["cards"] or []}
    named[me["final"]["id"]] = me["final"]["card"]
    return CONTENT.cards[named[instance]]


def _score(view: Mapping[str, Any], table: Mapping[str, Mapping[str, Any]], action: Action) -> int:
    me = view["players"][view["seat"]]
    kind = action["type"]
    if kind == "explore":
        return -100 if me["nave"]["count"] == 0 else 10
    if kind == "end":
        return 8
    if kind == "attack":
        target = action.get("target")
        return 60 if target is None else 50 if target.count(".") == 0 else 44
    card = _card(view, action["card"])
    if card.kind == "final":
        return 100
    if kind == "play" and card.kind == "astrali":
        return 46
    if kind == "play" and card.kind in ("permanent", "weapon"):
        return 42
    if kind == "play" and card.kind == "discardable":
        return 30
    return _effect_score(me, table, card, action.get("target"))


def _effect_score(
    me: Mapping[str, Any], table: Mapping[str, Mapping[str, Any]], card: Card, target: Any
) -> int:
    """How useful a card's effects look on that target; the best effect counts."""
    aimed = table.get(target) if isinstance(target, str) else me["character"]
    best = 1
    for effect in card.effects:
        value = 1
        if effect.do in ("damage", "poison", "bleed", "tire"):
            value = 36 if aimed is not None and aimed is not me["character"] else 1
        elif effect.do == "heal" and aimed is not None:
            value = 33 if aimed["damage"] > 0 else 1
        elif effect.do == "cleanse" and aimed is not None:
            value = 34 if aimed["poison"] or aimed["bleeding"] else 1
        elif effect.do == "euphoria" and aimed is not None:
            value = 34 if not aimed["euphoria"] else 1
        elif effect.do == "draw":
            value = 25 if me["nave"]["count"] > 4 else 1
        elif effect.do == "energy":
            value = 32 if me["final"]["energy"] < 3 else 1
        elif effect.do == "ready":
            weapons = me["actions"]["cards"][:2]
            value = 20 if any(a["position"] != "upright" for a in weapons) else 1
        elif effect.do in ("raise", "raise_all"):
            value = 45
        best = max(best, value)
    return best
