"""Medianokte: Exploración, duel mode (seed 000) on the match kernel: loadouts, views, secrets."""

import copy
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from service.games.kernel.hidden import Hidden, reveal
from service.games.kernel.loadouts import LoadoutError, check_copies, check_size
from service.games.kernel.prompts import Action, Prompt
from service.games.kernel.protocol import Event, Game, IllegalAction, OptionSpec, Outcome
from service.games.kernel.rng import MASK64, SplitMix64
from service.games.medianokte import rules
from service.games.medianokte.bot import choose
from service.games.medianokte.content import (
    CONTENT,
    MAX_COPIES,
    NAVE_KINDS,
    NAVE_SIZE,
    PER_KIND,
    banned_rule,
    random_nave,
)
from service.games.medianokte.setup import new_state
from service.games.medianokte.state import State, armour, card_of, max_life
from service.games.medianokte.turn import ACTIVATIONS


class MedianokteGame(Game[State]):
    id = "medianokte"
    ruleset = "medianokte-duel-1"
    min_seats = 2
    max_seats = 4

    def options_schema(self) -> dict[str, OptionSpec]:
        return {}

    def loadout_schema(self) -> dict[str, Any]:
        nave_cards = [c.id for c in CONTENT.cards.values() if c.kind in NAVE_KINDS]
        return {
            "type": "object",
            "properties": {
                "character": {"enum": list(CONTENT.characters)},
                "nave": {
                    "type": "array",
                    "items": {"enum": nave_cards},
                    "minItems": NAVE_SIZE,
                    "maxItems": NAVE_SIZE,
                },
                "random_nave": {"type": "integer", "minimum": 0, "maximum": MASK64},
            },
            "required": ["character"],
            "additionalProperties": False,
        }

    def validate_loadout(self, loadout: Any, options: Mapping[str, Any]) -> Any:
        return check_loadout(loadout)

    def sample_loadout(self, seed: int, options: Mapping[str, Any]) -> Any:
        rng = SplitMix64(seed)
        character = rng.pick(list(CONTENT.characters))
        return {"character": character, "nave": random_nave(rng.next())}

    def setup(
        self, seed: int, seats: int, options: Mapping[str, Any], loadouts: Sequence[Any]
    ) -> State:
        _, checked = self.prepare(seed, seats, options, loadouts)
        return new_state(seed, checked)

    def setup_events(self, state: State) -> list[Event]:
        return [
            Event(
                "shuffled", {"seat": s, "nave": Hidden((), list(p["nave"]), shown=len(p["nave"]))}
            )
            for s, p in enumerate(state["players"])
        ]

    def seat_count(self, state: State) -> int:
        return len(state["players"])

    def prompt(self, state: State, seat: int) -> Prompt | None:
        return rules.prompt(state, seat) if type(seat) is int else None

    def apply(self, state: State, seat: int, action: Action) -> tuple[State, list[Event]]:
        if type(seat) is not int:
            raise IllegalAction(f"seat {seat!r} may not act now")
        return rules.apply(state, seat, action)

    def resign(self, state: State, seat: int) -> tuple[State, list[Event]]:
        return rules.resign(state, seat)

    def outcome(self, state: State) -> Outcome | None:
        result: Outcome | None = state["result"]
        return result

    def timeout_action(self, state: State, seat: int) -> Action:
        asked = self.prompt(state, seat)
        if asked is not None and asked.kind == "cut":
            return {"type": "cut", "at": 1}
        if asked is not None and asked.kind == "activation":
            # A timed-out turn explores when it may, else ends with the activations it used.
            return asked.actions[-1]
        return super().timeout_action(state, seat)

    def observe(self, state: State) -> dict[str, Any]:
        left = ACTIVATIONS - state["used"] if state["phase"] == "turn" else None
        return {
            "phase": state["phase"],
            "turn": state["turn"] if state["phase"] == "turn" else None,
            "activations_left": left,
            "chooser": state["chooser"],
            "first": state["first"],
            "rolls": copy.deepcopy(state["rolls"]),
            "cut": list(state["cut"]),
            "players": [_observe_player(state, s) for s in range(len(state["players"]))],
            "outcome": copy.deepcopy(state["result"]),
        }

    def secrets(self, state: State, seat: int | None) -> list[Any]:
        # Every Nave's order and every card still in a Nave (no one has seen them), and the
        # other players' hands.
        players = state["players"]
        orders = [list(p["nave"]) for p in players if len(p["nave"]) > 1]
        in_naves = [c for p in players for c in p["nave"]]
        in_hands = [c for s, p in enumerate(players) if s != seat for c in p["hand"]]
        return [state["seed"], state["rng"], *orders, *in_naves, *in_hands]

    def replay_view(self, state: State) -> dict[str, Any]:
        return {**reveal(self.observe(state)), "seed": state["seed"], "rng": state["rng"]}

    def bot_action(self, view: Mapping[str, Any], prompt: Prompt, rng_seed: int) -> Action:
        return choose(view, prompt, rng_seed)

    def dump_state(self, state: State) -> dict[str, Any]:
        return copy.deepcopy(state)

    def load_state(self, data: Mapping[str, Any]) -> State:
        return copy.deepcopy(dict(data))


def check_loadout(loadout: Any) -> dict[str, Any]:
    """A character and a legal Nave (a list, or `random_nave`: a seed for the builder); or a
    `LoadoutError` naming the card and the rule."""
    if not isinstance(loadout, Mapping) or "character" not in loadout:
        raise LoadoutError("malformed", 'a loadout is {"character": id, "nave": [30 card ids]}')
    if set(loadout) not in ({"character", "nave"}, {"character", "random_nave"}):
        raise LoadoutError("malformed", "a loadout has a character and a nave or a random_nave")
    character = loadout["character"]
    if not isinstance(character, str) or character not in CONTENT.characters:
        raise LoadoutError("unknown_character", f"no character {character!r}", {"card": character})
    if "random_nave" in loadout:
        seed = loadout["random_nave"]
        if type(seed) is not int or not 0 <= seed <= MASK64:
            raise LoadoutError("malformed", "random_nave is an integer seed in 0..2^64-1")
        return {"character": character, "nave": random_nave(seed)}
    return {"character": character, "nave": check_nave(loadout["nave"])}


def check_nave(nave: Any) -> list[str]:
    """The seed's Nave: 30 cards, exactly 10 events, 10 astralis and 10 objects, with none of
    the cards banned in duel mode."""
    if not isinstance(nave, list) or not all(isinstance(card, str) for card in nave):
        raise LoadoutError("malformed", "a nave is a list of card ids")
    for card_id in nave:
        card = CONTENT.cards.get(card_id)
        if card is None:
            raise LoadoutError("unknown_card", f"no card {card_id!r}", {"card": card_id})
        if card.kind not in NAVE_KINDS:
            message = f"{card.name!r} is one of a character's cards, not a Nave card"
            raise LoadoutError("not_a_nave_card", message, {"card": card_id})
        rule = banned_rule(card)
        if rule is not None:
            why = "neutral events are" if rule == "neutral_event_banned" else "it is"
            message = f"{card.name!r} is banned in duel mode: {why} banned in duel mode"
            raise LoadoutError(rule, message, {"card": card_id})
    check_copies(nave, MAX_COPIES)
    check_size(nave, NAVE_SIZE, rule="nave_size", noun="Nave")
    families = Counter(card_of(card_id).family for card_id in nave)
    for family in ("event", "astrali", "object"):
        if families[family] != PER_KIND:
            raise LoadoutError(
                "nave_composition",
                f"a Nave has exactly {PER_KIND} {family} cards, not {families[family]}",
                {"family": family, "count": families[family], "expected": PER_KIND},
            )
    return list(nave)


def _observe_player(state: State, seat: int) -> dict[str, Any]:
    player = state["players"][seat]
    hero = player["hero"]
    character = CONTENT.characters[player["character"]]
    return {
        "seat": seat,
        "out": player["out"],
        "character": {
            "id": hero["id"],
            "card": character.id,
            "damage": hero["damage"],
            "life": max_life(state, seat),
            "armour": armour(state, hero["id"]),
            "stats": dict(character.stats),
            "poison": hero["poison"],
            "bleeding": hero["bleed"] is not None,
            "euphoria": hero["euphoria"],
        },
        "actions": [
            {"id": s["id"], "card": card_of(s["id"]).id, "position": s["position"]}
            for s in player["slots"]
        ],
        "final": {
            "id": player["final"]["id"],
            "card": card_of(player["final"]["id"]).id,
            "energy": player["final"]["energy"],
        },
        "army": [_observe_astrali(state, a) for a in player["army"]],
        "discardables": [
            {"id": d["id"], "card": card_of(d["id"]).id} for d in player["discardables"]
        ],
        "permanents": [
            {"id": o["id"], "card": card_of(o["id"]).id, "position": o["position"]}
            for o in player["permanents"]
        ],
        "hand": Hidden((seat,), list(player["hand"]), shown=len(player["hand"])),
        "nave": Hidden((), list(player["nave"]), shown=len(player["nave"])),
        "vacio": [
            {"id": v["id"], "card": card_of(v["id"]).id, "position": v["position"]}
            for v in player["vacio"]
        ],
    }


def _observe_astrali(state: State, record: Mapping[str, Any]) -> dict[str, Any]:
    card = card_of(record["id"])
    return {
        "id": record["id"],
        "card": card.id,
        "owner": record["owner"],
        "position": record["position"],
        "damage": record["damage"],
        "life": card.life,
        "armour": armour(state, record["id"]),
        "poison": record["poison"],
        "bleeding": record["bleed"] is not None,
        "euphoria": record["euphoria"],
    }
