"""A simple fate-duel bot. It decides from its seat's view and prompt only: its own hand, the
face-up cards of the duel, the crews on the table; never another hand or a deck.

- Step 1: spends one soulstone when short, i.e. when no card in its hand could reach what the
  duel needs (the TN, or beating the other side's attribute): the named required suit if no
  hand card has it, else an extra + flip.
- Step 2: picks the highest card that has any required suit, else the highest.
- Step 3: cheats when the total falls short and a card in hand makes it, the lowest such card.
- Step 4: declares the first trigger offered.
- Pulse order and attacks: an enemy model over one of its own crew, then the attack with the
  best margin of attribute over the target's Df, then the weakest target; otherwise the seed
  decides between equals.
"""

from collections.abc import Mapping
from typing import Any

from service.games.fate_duel.catalogue import ADD_ONE, PLUS_FLIP, SUIT_USE
from service.games.fate_duel.content import Ruleset
from service.games.fate_duel.state import face
from service.games.kernel.prompts import Prompt
from service.games.kernel.protocol import Action, IllegalAction
from service.games.kernel.rng import SplitMix64

AVERAGE_CARD = 7


def choose(rules: Ruleset, view: Mapping[str, Any], prompt: Prompt, rng_seed: int) -> Action:
    if not prompt.actions:
        raise IllegalAction("not_asked", "nothing to choose from")
    rng = SplitMix64(rng_seed)
    if prompt.kind == "attack":
        return _attack(view, prompt, rng)
    if prompt.kind == "order":
        return rng.pick(prompt.actions)
    duel = prompt.data["duel"]
    me = duel["sides"][duel["turn"]]
    hand: list[str] = [card["id"] for card in view["hands"][view["seat"]]["cards"]]
    if prompt.kind == "soulstones":
        return _soulstones(rules, prompt, duel, me, hand)
    if prompt.kind == "choose":
        return max(prompt.actions, key=lambda a: _card_score(rules, duel, a["card"]))
    if prompt.kind == "cheat":
        return _cheat(rules, prompt, duel, me, hand)
    return next((a for a in prompt.actions if a["type"] == "trigger"), prompt.actions[0])


def _attack(view: Mapping[str, Any], prompt: Prompt, rng: SplitMix64) -> Action:
    models = [crew["models"]["cards"] for crew in view["crews"]]

    def score(action: Action) -> tuple[bool, int, int]:
        attacker = models[view["seat"]][action["model"]]
        target = models[action["target_seat"]][action["target"]]
        enemy = action["target_seat"] != view["seat"]
        return enemy, attacker[action["attack"]] - target["df"], -target["wounds"]

    best = max(score(a) for a in prompt.actions)
    return rng.pick([a for a in prompt.actions if score(a) == best])


def _card_score(rules: Ruleset, duel: Mapping[str, Any], card: str) -> tuple[bool, int]:
    suit = duel["suit"]
    return suit is None or suit in rules.suits_of(face(card)), rules.value(face(card))


def _needed(duel: Mapping[str, Any], me: Mapping[str, Any], attribute_only: bool) -> int:
    """The total this side must reach: the TN, or past the other side (ties go to the defender).

    Before the flips only the other side's attribute is known, plus an average card.
    """
    if duel["kind"] == "simple":
        return int(duel["tn"])
    other = duel["sides"][1 - duel["turn"]]
    known = other["value"] + AVERAGE_CARD if attribute_only else other["total"] or other["value"]
    return int(known) + (1 if duel["turn"] == 0 else 0)


def _soulstones(
    rules: Ruleset,
    prompt: Prompt,
    duel: Mapping[str, Any],
    me: Mapping[str, Any],
    hand: list[str],
) -> Action:
    needed = _needed(duel, me, attribute_only=True)
    suit = duel["suit"]
    with_suit = [c for c in hand if suit is None or suit in rules.suits_of(face(c))]
    reach = max((me["value"] + rules.value(face(c)) for c in with_suit), default=0)
    if reach >= needed:
        return prompt.actions[0]
    wanted = [SUIT_USE + suit] if suit is not None and not with_suit else [PLUS_FLIP]
    return next((a for a in prompt.actions if a["uses"] == wanted), prompt.actions[0])


def _cheat(
    rules: Ruleset,
    prompt: Prompt,
    duel: Mapping[str, Any],
    me: Mapping[str, Any],
    hand: list[str],
) -> Action:
    needed = _needed(duel, me, attribute_only=False)
    suit = duel["suit"]
    named = {u[len(SUIT_USE) :] for u in me["stones"] or [] if u.startswith(SUIT_USE)}
    base = me["value"] + (me["stones"] or []).count(ADD_ONE)

    def makes_it(card: str) -> bool:
        suits = rules.suits_of(face(card)) | named
        return base + rules.value(face(card)) >= needed and (suit is None or suit in suits)

    if makes_it(me["active"]["id"]):
        return prompt.actions[0]
    good = [c for c in hand if makes_it(c)]
    if not good:
        return prompt.actions[0]
    card = min(good, key=lambda c: rules.value(face(c)))
    return {"type": "cheat", "card": card}
