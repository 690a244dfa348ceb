"""A simple bot for the loyalty game: it decides from its seat's view and prompt only."""

from collections.abc import Mapping
from typing import Any

from service.games.kernel.prompts import Action, Prompt
from service.games.kernel.rng import SplitMix64
from service.games.loyalty.content import Content, card_of

# What the bot is glad to cast from its hand in its own main phases.
_USEFUL = frozenset(("draw", "loyalty", "damage", "boost_all", "destroy", "aura", "income"))


def choose(content: Content, view: Mapping[str, Any], prompt: Prompt, rng_seed: int) -> Action:
    me = view["seat"]
    actions = prompt.actions
    by_type: dict[str, list[Action]] = {}
    for action in actions:
        by_type.setdefault(action["type"], []).append(action)
    if prompt.kind == "choose_first":
        return {"type": "first", "seat": me}
    if prompt.kind == "return":
        return min(actions, key=lambda a: content.cards[card_of(a["card"])].cost)
    if prompt.kind == "draw" and "draw" in by_type:
        return by_type["draw"][0]
    if prompt.kind == "roll":
        return by_type["roll"][0]
    if prompt.kind in ("play", "play_again"):
        return _cast(content, _safe(prompt, by_type)) or {"type": "pass"}
    if prompt.kind == "arrange" and "arrange" in prompt.params:
        return _arrange(view)
    if prompt.kind == "attack":
        return _best_attack(content, view, by_type.get("attack", [])) or {"type": "pass"}
    # Response windows, and anything else: a tie between equal answers is broken by the seed.
    passes = by_type.get("pass", actions[:1])
    return passes[SplitMix64(rng_seed).below(len(passes))]


def _safe(prompt: Prompt, by_type: dict[str, list[Action]]) -> dict[str, list[Action]]:
    """The answers that do not lose the game at once (the prompt flags those that do, as
    playing the last card with an empty deck: docs/rules/loyalty.md#10-quien-gana)."""
    losing = [a for i, a in enumerate(prompt.actions) if i in prompt.loses or a.get("loses")]
    return {kind: [a for a in listed if a not in losing] for kind, listed in by_type.items()}


def _cast(content: Content, by_type: dict[str, list[Action]]) -> Action | None:
    plays = by_type.get("play", [])
    characters = [a for a in plays if content.cards[card_of(a["card"])].type == "character"]
    if characters:
        return max(characters, key=lambda a: content.cards[card_of(a["card"])].cost)
    for action in [*plays, *by_type.get("adventure", [])]:
        if content.cards[card_of(action["card"])].effect.kind in _USEFUL:
            return action
    for action in by_type.get("effect", []):
        if content.cards[card_of(action["card"])].effect.kind in ("damage", "draw"):
            return action
    return None


def _in_play(side: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """A side's characters by instance id, each with the zone it stands in."""
    return {
        u["id"]: {**u, "zone": zone}
        for zone in ("attack", "defence")
        for u in side[f"{zone}_zone"]["cards"]
    }


def _arrange(view: Mapping[str, Any]) -> Action:
    units = list(_in_play(view["sides"][view["seat"]]).values())
    # The sturdiest character guards; the others attack if they hit at least as hard as they hold.
    guard = max(units, key=lambda u: (u["defence"] - u["attack"], u["defence"]))
    attackers = [u["id"] for u in units if u is not guard and u["attack"] >= u["defence"]]
    return {"type": "arrange", "attack": sorted(attackers)}


def _best_attack(content: Content, view: Mapping[str, Any], attacks: list[Action]) -> Action | None:
    units = _in_play(view["sides"][view["seat"]])
    foes = _in_play(view["sides"][1 - view["seat"]])

    def worth(unit: Mapping[str, Any]) -> int:
        return content.cards[unit["card"]].cost

    def score(action: Action) -> int:
        # Section 8 from the attacker's side: what it gains, what it costs.
        me = units[action["attacker"]]
        attack: int = me["attack"]
        if action["target"] == "life":
            return 2 * attack
        foe = foes[action["target"]]
        if foe["zone"] == "defence":
            return 3 + worth(foe) if attack >= foe["defence"] else -1
        if attack > foe["attack"]:
            through: int = attack - me["defence"] - foe["defence"]
            return 3 + worth(foe) + max(0, through)
        if attack == foe["attack"]:
            return worth(foe) - worth(me)
        return -1

    best = max(attacks, key=score, default=None)
    return best if best is not None and score(best) > 0 else None
