"""A small two-seat card game that exercises the kernel, and the worked example of
docs/adding-a-game.md.

Cards are `c1`..`c9`, worth their number; `c0` exists and is banned. A seat brings a deck of
exactly 8 cards, at most 2 of each. Setup shuffles each deck (its cards become instances such
as "5f3a09c2.s0-3:c7", unique in the match and across the legs of a series); both seats then
cut the opponent's deck at once; then each draws 3. A turn: the turn player plays a card,
draws, or (with neither) passes; after a play the opponent may respond with a higher card.
The higher card scores a point for its owner. First to 3 points wins; when every hand and
deck is empty the higher score wins. A seat may prefer to pass every response it cannot win
(`auto_pass`), and is then not asked.
"""

from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from service.games.kernel.catalogue import catalogue, entry
from service.games.kernel.hidden import Hidden
from service.games.kernel.loadouts import LoadoutError, check_deck
from service.games.kernel.prompts import Action, Prompt
from service.games.kernel.protocol import Event, IllegalAction, OptionSpec, Outcome
from service.games.kernel.rng import SplitMix64, one_way_seed
from service.games.kernel.series import Series
from service.games.kernel.state import GameState
from service.games.kernel.table import TableGame
from service.games.kernel.views import BOOL, INT, STR, array, card, nullable, obj, zone, zone_schema
from service.games.registry import REGISTRY

CARDS = tuple(f"c{n}" for n in range(10))
BANNED = ("c0",)
DECK_SIZE = 8
MAX_COPIES = 2
HAND = 3
POINTS_TO_WIN = 3


def card_of(instance: str) -> str:
    """The catalogue id of a card instance ("5f3a09c2.s0-3:c7" is a "c7")."""
    return instance.rsplit(":", 1)[-1]


def value(card: str) -> int:
    """A card's number, from its id ("c7") or an instance's ("5f3a09c2.s0-3:c7")."""
    return int(card_of(card)[1:])


def _listed(cards: Sequence[str]) -> list[dict[str, str]]:
    return [{"id": c, "card": card_of(c)} for c in cards]


class CardState(GameState, kw_only=True):
    first: int
    phase: str  # "cut", "activation", "response" or "over"
    turn: int
    decks: list[list[str]]  # top card first
    hands: list[list[str]]
    cut: list[bool]  # whether each seat has cut its opponent's deck
    table: str | None  # the card played, waiting for the response
    scores: list[int]
    discard: list[str]
    result: Outcome | None
    auto_pass: list[bool] = msgspec.field(default_factory=lambda: [False, False])


class CardGame(TableGame[CardState]):
    id = "test-cards"
    name = "Test cards"
    ruleset = "test-cards-1"
    min_seats = 2
    max_seats = 2
    state_type = CardState

    def options_schema(self) -> dict[str, OptionSpec]:
        return {"first_seat": {"type": "int", "default": 0, "min": 0, "max": 1}}

    def preferences_schema(self) -> dict[str, OptionSpec]:
        return {"auto_pass": {"type": "bool", "default": False}}

    def keep_preferences(
        self, state: CardState, seat: int, preferences: Mapping[str, Any], events: list[Event]
    ) -> None:
        state.auto_pass[seat] = preferences["auto_pass"]
        self._pass_if_preferred(state, events)

    def loadout_schema(self) -> dict[str, Any]:
        deck = {"type": "array", "items": {"enum": [c for c in CARDS if c not in BANNED]}}
        return {
            "type": "object",
            "properties": {"deck": {**deck, "minItems": DECK_SIZE, "maxItems": DECK_SIZE}},
            "required": ["deck"],
            "additionalProperties": False,
        }

    def validate_loadout(self, loadout: Any, options: Mapping[str, Any]) -> Any:
        if not isinstance(loadout, Mapping) or set(loadout) != {"deck"}:
            raise LoadoutError("malformed", 'a loadout is {"deck": [card ids]}')
        deck = check_deck(
            loadout["deck"], known=CARDS, size=DECK_SIZE, max_copies=MAX_COPIES, banned=BANNED
        )
        return {"deck": deck}

    def sample_loadout(self, seed: int, options: Mapping[str, Any]) -> Any:
        pool = [c for c in CARDS if c not in BANNED] * MAX_COPIES
        SplitMix64(seed).shuffle(pool)
        return {"deck": sorted(pool[:DECK_SIZE], key=value)}

    def setup(
        self, seed: int, seats: int, options: Mapping[str, Any], loadouts: Sequence[Any]
    ) -> CardState:
        resolved, checked = self.prepare(seed, seats, options, loadouts)
        # A one-way tag of the seed: ids differ between legs and give nothing of the seed away.
        tag = one_way_seed(seed, b"test-cards:ids") >> 32
        first = resolved["first_seat"]
        state = CardState(
            seed=seed, rng=seed, first=first, phase="cut", turn=first, decks=[],
            hands=[[], []], cut=[False, False], table=None, scores=[0, 0], discard=[],
            result=None,
        )  # fmt: skip
        for seat, loadout in enumerate(checked):
            deck = [f"{tag:08x}.s{seat}-{i}:{card}" for i, card in enumerate(loadout["deck"])]
            state.shuffle(deck)
            state.decks.append(deck)
        return state

    def setup_events(self, state: CardState) -> list[Event]:
        return [
            Event("shuffled", {"seat": s, "deck": Hidden((), list(d), shown=len(d))})
            for s, d in enumerate(state.decks)
        ]

    def seat_count(self, state: CardState) -> int:
        return 2

    def prompt(self, state: CardState, seat: int) -> Prompt | None:
        if state.phase == "cut" and not state.cut[seat]:
            at = {"type": "integer", "minimum": 1, "maximum": len(state.decks[1 - seat]) - 1}
            return Prompt("cut", [], {"cut": {"at": at}}, {"deck": 1 - seat})
        hand = state.hands[seat]
        if state.phase == "activation" and seat == state.turn:
            actions: list[Action] = [{"type": "play", "card": c} for c in hand]
            if state.decks[seat]:
                actions.append({"type": "draw"})
            return Prompt("activation", actions or [{"type": "pass"}])
        if state.phase == "response" and seat != state.turn:
            assert state.table is not None
            beat = [{"type": "respond", "card": c} for c in hand if value(c) > value(state.table)]
            return Prompt("response", [*beat, {"type": "pass"}], data={"card": state.table})
        return None

    def play(
        self, state: CardState, seat: int, asked: Prompt, action: Action, events: list[Event]
    ) -> None:
        if asked.kind == "cut":
            self._cut(state, seat, _cut_position(action, asked.params["cut"]["at"]["maximum"]))
            events.append(Event("cut", {"seat": seat, "deck": 1 - seat, "at": action["at"]}))
            if all(state.cut):
                for _ in range(HAND):
                    for s in (0, 1):
                        _draw(state, s, events)
                _next_turn(state, state.first, events)
        elif action["type"] == "play":
            state.hands[seat].remove(action["card"])
            state.table = action["card"]
            state.phase = "response"
            events.append(Event("played", {"seat": seat, "card": action["card"]}))
            self._pass_if_preferred(state, events)
        elif action["type"] == "draw":
            _draw(state, seat, events)
            _next_turn(state, 1 - seat, events)
        elif asked.kind == "activation":
            events.append(Event("passed", {"seat": seat}))
            _next_turn(state, 1 - seat, events)
        else:
            self._answer(state, seat, action, events)

    def _pass_if_preferred(self, state: CardState, events: list[Event]) -> None:
        """The responder who prefers it passes a response it cannot win, unasked."""
        responder = 1 - state.turn
        if state.phase != "response" or not state.auto_pass[responder]:
            return
        prompt = self.prompt(state, responder)
        if prompt is not None and prompt.actions == [{"type": "pass"}]:
            events.append(Event("auto_passed", {"seat": responder}))
            self._answer(state, responder, {"type": "pass"}, events)

    def _cut(self, state: CardState, seat: int, at: int) -> None:
        deck = state.decks[1 - seat]
        state.decks[1 - seat] = deck[at:] + deck[:at]
        state.cut[seat] = True

    def _answer(self, state: CardState, seat: int, chosen: Action, events: list[Event]) -> None:
        assert state.table is not None
        played, state.table = state.table, None
        state.discard.append(played)
        scorer = 1 - seat
        if chosen["type"] == "respond":
            state.hands[seat].remove(chosen["card"])
            state.discard.append(chosen["card"])
            events.append(Event("responded", {"seat": seat, "card": chosen["card"]}))
            scorer = seat
        state.scores[scorer] += 1
        events.append(Event("point", {"seat": scorer, "scores": list(state.scores)}))
        if state.scores[scorer] >= POINTS_TO_WIN:
            _finish(state, {"winners": [scorer], "ranking": [[scorer], [1 - scorer]]}, events)
        else:
            _next_turn(state, 1 - state.turn, events)

    def end(self, state: CardState, outcome: Outcome) -> None:
        state.result, state.phase = outcome, "over"

    def outcome(self, state: CardState) -> Outcome | None:
        return state.result

    def next_leg_options(
        self, options: Mapping[str, Any], finished: Sequence[Outcome]
    ) -> dict[str, Any]:
        # The loser of a leg starts the next; after a tie the same seat starts again.
        winners = finished[-1]["winners"]
        return {**options, "first_seat": 1 - winners[0]} if len(winners) == 1 else dict(options)

    def timeout_action(self, state: CardState, seat: int) -> Action:
        prompt = self.prompt(state, seat)
        if prompt is not None and prompt.kind == "cut":
            return {"type": "cut", "at": 1}
        return super().timeout_action(state, seat)

    def refusal(
        self, state: CardState, seat: int, asked: Prompt, action: Action
    ) -> IllegalAction | None:
        chosen = action.get("card")
        if action["type"] in ("play", "respond") and chosen not in state.hands[seat]:
            return IllegalAction("not_in_hand", f"{chosen!r} is not in your hand")
        if action["type"] == "respond" and state.table is not None:
            return IllegalAction("too_low", f"a response must beat {card_of(state.table)}")
        return None

    def catalogue(self) -> dict[str, Any]:
        cards = [
            entry(c, f"Card {value(c)}", "card", None, {"value": value(c)}, [],
                  templates={}, words={})
            for c in CARDS
        ]  # fmt: skip
        return catalogue(cards, {"deck": DECK_SIZE, "hand": HAND, "points_to_win": POINTS_TO_WIN})

    def view_schema(self) -> dict[str, Any]:
        return obj(
            phase=STR,
            turn=INT,
            first=INT,
            cut=array(BOOL),
            decks=array(zone_schema(card())),
            hands=array(zone_schema(card())),
            table=nullable(card()),
            scores=array(INT),
            discard=zone_schema(card()),
            outcome=nullable({"type": "object"}),
        )

    def observe(self, state: CardState) -> dict[str, Any]:
        return {
            "phase": state.phase,
            "turn": state.turn,
            "first": state.first,
            "cut": list(state.cut),
            "decks": [zone(_listed(d), ()) for d in state.decks],
            "hands": [zone(_listed(h), (s,)) for s, h in enumerate(state.hands)],
            "table": None if state.table is None else _listed([state.table])[0],
            "scores": list(state.scores),
            "discard": zone(_listed(state.discard)),
            "outcome": state.result,
        }

    def secrets(self, state: CardState, seat: int | None) -> list[Any]:
        orders = [_listed(d) for d in state.decks if len(d) > 1]
        in_decks = [c for d in state.decks for c in d]
        in_hands = [c for s, h in enumerate(state.hands) if s != seat for c in h]
        return [*super().secrets(state, seat), *orders, *in_decks, *in_hands]

    def bot_action(self, view: Mapping[str, Any], prompt: Prompt, rng_seed: int) -> Action:
        if prompt.kind == "cut":
            at = prompt.params["cut"]["at"]
            span = at["maximum"] - at["minimum"] + 1
            return {"type": "cut", "at": at["minimum"] + SplitMix64(rng_seed).below(span)}
        by_type = {a["type"]: a for a in prompt.actions}
        cards = [a for a in prompt.actions if "card" in a]
        if prompt.kind == "response":
            # The cheapest card that wins the point, keeping the big ones.
            return min(cards, key=lambda a: value(a["card"])) if cards else by_type["pass"]
        # With a short hand and cards to draw, draw; else lead the highest card.
        if "draw" in by_type and view["hands"][view["seat"]]["count"] < 2:
            return by_type["draw"]
        if cards:
            return max(cards, key=lambda a: value(a["card"]))
        return by_type.get("draw") or by_type["pass"]


def _cut_position(action: Any, maximum: int) -> int:
    if not isinstance(action, Mapping) or set(action) != {"type", "at"}:
        raise IllegalAction("bad_param", 'a cut is {"type": "cut", "at": n}')
    at = action["at"]
    if action["type"] != "cut" or type(at) is not int or not 1 <= at <= maximum:
        raise IllegalAction(
            "bad_param", f"cut position 'at' must be an integer from 1 to {maximum}"
        )
    return at


def _draw(state: CardState, seat: int, events: list[Event]) -> None:
    card = state.decks[seat].pop(0)
    state.hands[seat].append(card)
    events.append(Event("drew", {"seat": seat, "card": Hidden((seat,), card)}))


def _next_turn(state: CardState, seat: int, events: list[Event]) -> None:
    if not any(state.hands) and not any(state.decks):
        _finish(state, _by_score(state.scores), events)
        return
    state.phase, state.turn = "activation", seat
    events.append(Event("turn_start", {"seat": seat}))


def _by_score(scores: list[int]) -> Outcome:
    if scores[0] == scores[1]:
        return {"winners": [0, 1], "ranking": [[0, 1]]}
    winner = 0 if scores[0] > scores[1] else 1
    return {"winners": [winner], "ranking": [[winner], [1 - winner]]}


def _finish(state: CardState, outcome: Outcome, events: list[Event]) -> None:
    state.result, state.phase = outcome, "over"
    events.append(Event("game_over", dict(outcome)))


CARD_GAME = CardGame()
CARD_SERIES = Series(CARD_GAME, 3)


def register_test_games() -> None:
    """Put the test games in the service's registry (replacing them if already there)."""
    REGISTRY.register(CARD_GAME)
    REGISTRY.register(CARD_SERIES)
