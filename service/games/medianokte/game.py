"""Medianokte: Exploración, duel mode (seed 000) on the match kernel: loadouts, who is asked
what, an answer played, a seat resigning, and what everyone sees.

The rules under it: the cuts and the roll-off in `setup`, the legal activations in
`activations`, a turn carried out in `turn`, with `attacks`, `effects` and `damage` under it,
the choices of targets in `targets`, the state and its lookups in `state`; the rules as
written in docs/rules/medianokte.md.
"""

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from service.games.kernel.hidden import Hidden
from service.games.kernel.loadouts import LoadoutError, check_copies, check_size
from service.games.kernel.prompts import Action, Prompt
from service.games.kernel.protocol import Event, IllegalAction, Outcome
from service.games.kernel.rng import MASK64, SplitMix64
from service.games.kernel.table import TableGame
from service.games.medianokte.activations import activations
from service.games.medianokte.bot import choose
from service.games.medianokte.catalogue import CATALOGUE
from service.games.medianokte.content import (
    CONTENT,
    FAMILIES,
    MAX_COPIES,
    NAVE_KINDS,
    NAVE_SIZE,
    PER_KIND,
    banned_rule,
    random_nave,
)
from service.games.medianokte.damage import defeat
from service.games.medianokte.refusals import refusal
from service.games.medianokte.setup import after_cuts, cut, cut_target
from service.games.medianokte.state import (
    Final,
    Hero,
    Placed,
    Player,
    State,
    card_of,
    following,
    living,
    seat_rolls,
)
from service.games.medianokte.turn import (
    ACTIVATIONS,
    activate,
    end_turn,
    finish_if_over,
    start_turn,
)
from service.games.medianokte.views import SCHEMA, observe


class MedianokteGame(TableGame[State]):
    id = "medianokte"
    name = "Medianokte: Exploración"
    ruleset = "medianokte-duel-1"
    min_seats = 2
    max_seats = 4
    state_type = State

    def loadout_schema(self) -> dict[str, Any]:
        """Only the cards legal in duel mode, each with its family: per family an enum that
        must be met exactly ten times (`contains`), and the map card -> family as `x-family`."""
        families = {family: CONTENT.nave_cards(family) for family in FAMILIES}
        legal = [card for cards in families.values() for card in cards]
        family_of = {card: family for family, cards in families.items() for card in cards}
        return {
            "type": "object",
            "properties": {
                "character": {"enum": list(CONTENT.characters)},
                "nave": {
                    "type": "array",
                    "items": {"enum": legal},
                    "minItems": NAVE_SIZE,
                    "maxItems": NAVE_SIZE,
                    "allOf": [
                        {
                            "title": family,
                            "contains": {"enum": cards},
                            "minContains": PER_KIND,
                            "maxContains": PER_KIND,
                        }
                        for family, cards in families.items()
                    ],
                    "x-family": family_of,
                },
                "random_nave": {"type": "integer", "minimum": 0, "maximum": MASK64},
            },
            "required": ["character"],
            "additionalProperties": False,
        }

    def validate_loadout(self, loadout: Any, options: Mapping[str, Any]) -> Any:
        """A character and a legal Nave (a list, or `random_nave`: a seed for the builder); or
        a `LoadoutError` naming the card and the rule."""
        if not isinstance(loadout, Mapping) or "character" not in loadout:
            raise LoadoutError("malformed", 'a loadout is {"character": id, "nave": [30 card ids]}')
        if set(loadout) not in ({"character", "nave"}, {"character", "random_nave"}):
            raise LoadoutError("malformed", "a loadout has a character and a nave or a random_nave")
        character = loadout["character"]
        if not isinstance(character, str) or character not in CONTENT.characters:
            details = {"card": character}
            raise LoadoutError("unknown_character", f"no character {character!r}", details)
        if "random_nave" in loadout:
            seed = loadout["random_nave"]
            if type(seed) is not int or not 0 <= seed <= MASK64:
                raise LoadoutError("malformed", "random_nave is an integer seed in 0..2^64-1")
            return {"character": character, "nave": random_nave(seed)}
        return {"character": character, "nave": check_nave(loadout["nave"])}

    def sample_loadout(self, seed: int, options: Mapping[str, Any]) -> Any:
        rng = SplitMix64(seed)
        character = rng.pick(list(CONTENT.characters))
        return {"character": character, "nave": random_nave(rng.next())}

    def setup(
        self, seed: int, seats: int, options: Mapping[str, Any], loadouts: Sequence[Any]
    ) -> State:
        """Naves shuffled, characters laid out; the cuts come next (the seed's order)."""
        _, checked = self.prepare(seed, seats, options, loadouts)
        players = []
        for seat, loadout in enumerate(checked):
            character = CONTENT.characters[loadout["character"]]
            slots = [character.weapons[0], character.weapons[1], character.assistance]
            players.append(
                Player(
                    character=character.id,
                    hero=Hero(id=f"s{seat}:{character.id}"),
                    slots=[Placed(f"s{seat}:{card}", "upright") for card in slots],
                    final=Final(f"s{seat}:{character.final}", 0),
                    nave=[f"s{seat}.{i}:{card}" for i, card in enumerate(loadout["nave"])],
                )
            )
        state = State(
            seed=seed,
            rng=seed,
            phase="cut",
            cut=[False] * seats,
            rolls=[],
            chooser=None,
            first=None,
            turn=0,
            used=0,
            step=0,
            fallen=[],
            result=None,
            players=players,
        )
        for player in state.players:
            state.shuffle(player.nave)
        return state

    def setup_events(self, state: State) -> list[Event]:
        return [
            Event("shuffled", {"seat": s, "nave": Hidden((), list(p.nave), shown=len(p.nave))})
            for s, p in enumerate(state.players)
        ]

    def seat_count(self, state: State) -> int:
        return len(state.players)

    def prompt(self, state: State, seat: int) -> Prompt | None:
        if type(seat) is not int or not 0 <= seat < len(state.players) or state.players[seat].out:
            return None
        if state.phase == "cut" and not state.cut[seat]:
            target = cut_target(state, seat)
            at = {"type": "integer", "minimum": 1, "maximum": len(state.players[target].nave) - 1}
            return Prompt("cut", [], {"cut": {"at": at}}, {"nave": target})
        if state.phase == "choose" and seat == state.chooser:
            actions: list[Action] = [{"type": "first", "seat": s} for s in living(state)]
            rolls = [seat_rolls(r) for r in state.rolls]
            return Prompt("choose_first", actions, data={"rolls": rolls})
        if state.phase == "turn" and seat == state.turn:
            left = ACTIVATIONS - state.used
            # Which actions a tiring hits is a set: `picks` match in any order.
            data = {"activations_left": left}
            return Prompt("activation", activations(state, seat), data=data, unordered=("picks",))
        return None

    def play(
        self, state: State, seat: int, asked: Prompt, action: Action, events: list[Event]
    ) -> None:
        state.step += 1
        if asked.kind == "cut":
            cut(state, seat, action["at"], events)
        elif asked.kind == "choose_first":
            state.first = action["seat"]
            events.append(Event("first_player", {"chooser": seat, "seat": action["seat"]}))
            start_turn(state, action["seat"], events)
        else:
            activate(state, seat, action, events)

    def forfeit(self, state: State, seat: int, events: list[Event]) -> None:
        """The seat is out; the others play on, and with one left standing it wins (ours)."""
        if not 0 <= seat < len(state.players) or state.players[seat].out:
            raise IllegalAction("not_seated", f"seat {seat} is not playing")
        state.step += 1
        defeat(state, seat, "resigned", events)
        if finish_if_over(state, events):
            return
        if state.phase == "cut":
            after_cuts(state, events)
        elif state.phase == "choose" and state.chooser == seat:
            # The chooser is gone: the next seat still playing starts (ours).
            state.first = following(state, seat)
            events.append(Event("first_player", {"chooser": None, "seat": state.first}))
            start_turn(state, state.first, events)
        elif state.phase == "turn" and state.turn == seat:
            end_turn(state, seat, events, "resigned")

    def outcome(self, state: State) -> Outcome | None:
        return state.result

    def timeout_action(self, state: State, seat: int) -> Action:
        asked = self.prompt(state, seat)
        if asked is not None and asked.kind == "cut":
            return {"type": "cut", "at": 1}
        if asked is not None and asked.kind == "activation":
            # A timed-out turn explores when it may, else ends with the activations it used.
            return asked.actions[-1]
        return super().timeout_action(state, seat)

    def refusal(
        self, state: State, seat: int, asked: Prompt, action: Action
    ) -> IllegalAction | None:
        return refusal(state, seat, asked, action)

    def view_schema(self) -> dict[str, Any]:
        return SCHEMA

    def catalogue(self) -> dict[str, Any]:
        return CATALOGUE

    def observe(self, state: State) -> dict[str, Any]:
        return observe(state)

    def secrets(self, state: State, seat: int | None) -> list[Any]:
        # Every Nave's order and every card still in a Nave (no one has seen them), and the
        # other players' hands.
        players = state.players
        orders = [
            [{"id": c, "card": card_of(c).id} for c in p.nave] for p in players if len(p.nave) > 1
        ]
        in_naves = [c for p in players for c in p.nave]
        in_hands = [c for s, p in enumerate(players) if s != seat for c in p.hand]
        return [*super().secrets(state, seat), *orders, *in_naves, *in_hands]

    def bot_action(self, view: Mapping[str, Any], prompt: Prompt, rng_seed: int) -> Action:
        return choose(view, prompt, rng_seed)


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
    for family in FAMILIES:
        if families[family] != PER_KIND:
            raise LoadoutError(
                "nave_composition",
                f"a Nave has exactly {PER_KIND} {family} cards, not {families[family]}",
                {"family": family, "count": families[family], "expected": PER_KIND},
            )
    return list(nave)
