"""The turn-based match protocol every tabletop game implements (DESIGN §5).

A game is a pure state machine. Seats are numbered 0..n-1. The state is opaque to the
server except through `dump_state`/`load_state` (a JSON-able dict, round-trip exact), and it
carries its own SplitMix64 state, so `apply` is a deterministic function of
(state, seat, action) and a match is reproducible from its seed and action log.

Decisions are actions, chance is not: dice and shuffles happen inside `apply` (or `setup`),
drawn from the state's generator. Any seat may be asked to act, not only the turn player
(a defender's choice, a reaction window): `to_act` says who may act now.
"""

import json
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypedDict, TypeVar

S = TypeVar("S")

Action = dict[str, Any]
"""A JSON-able dict with at least a "type" key, e.g. {"type": "target", "seat": 2}."""


class GameError(ValueError):
    """A match cannot be set up as asked (bad seat count or options)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class IllegalAction(GameError):
    """The action is not legal for that seat now; the state is unchanged."""


@dataclass(frozen=True)
class Event:
    """Something that happened. `visible_to=None` is public; otherwise only those seats see it."""

    kind: str
    data: Mapping[str, Any] = field(default_factory=dict)
    visible_to: tuple[int, ...] | None = None

    def as_dict(self) -> dict[str, Any]:
        """The wire form; `visible_to` is routing, not content, so it is left out."""
        return {"kind": self.kind, "data": dict(self.data)}


def events_for(events: Iterable[Event], seat: int | None) -> list[Event]:
    """The events `seat` may see; `None` (a spectator) sees only public events."""
    return [
        e for e in events if e.visible_to is None or (seat is not None and seat in e.visible_to)
    ]


class Outcome(TypedDict):
    """A finished match. `ranking` groups seats from first place down; a group holds ties."""

    winners: list[int]
    ranking: list[list[int]]


class OptionSpec(TypedDict, total=False):
    """One option in `options_schema()`: type is "int", "str" or "bool"."""

    type: str
    default: Any
    choices: list[Any]
    min: int
    max: int
    description: str


_OPTION_TYPES: Mapping[str, type] = {"int": int, "str": str, "bool": bool}


def _has_type(value: Any, name: str) -> bool:
    # An exact type match: bool is an int in Python, but an int option must refuse true/false.
    return type(value) is _OPTION_TYPES[name]


def resolve_options(schema: Mapping[str, OptionSpec], options: Mapping[str, Any]) -> dict[str, Any]:
    """Check `options` against `schema` and fill in defaults, or raise `GameError`."""
    unknown = sorted(set(options) - set(schema))
    if unknown:
        raise GameError(f"unknown option(s): {', '.join(unknown)}")
    resolved: dict[str, Any] = {}
    for name, spec in schema.items():
        value = options.get(name, spec.get("default"))
        if not _has_type(value, spec["type"]):
            raise GameError(f"option {name!r} must be of type {spec['type']}")
        if "choices" in spec and value not in spec["choices"]:
            raise GameError(f"option {name!r} must be one of {spec['choices']}")
        if "min" in spec and value < spec["min"]:
            raise GameError(f"option {name!r} must be at least {spec['min']}")
        if "max" in spec and value > spec["max"]:
            raise GameError(f"option {name!r} must be at most {spec['max']}")
        resolved[name] = value
    return resolved


def _canonical(action: Any) -> str:
    # Strict comparison: 1.0 and true must not pass for the integer 1.
    return json.dumps(action, sort_keys=True, separators=(",", ":"))


def match_legal(legal: Sequence[Action], action: Any) -> Action:
    """The legal action equal to `action` (JSON-exact), or raise `IllegalAction`."""
    if not isinstance(action, Mapping) or "type" not in action:
        raise IllegalAction("an action is an object with a 'type'")
    try:
        key = _canonical(action)
    except (TypeError, ValueError) as exc:
        raise IllegalAction("the action is not JSON") from exc
    for candidate in legal:
        if _canonical(candidate) == key:
            return candidate
    raise IllegalAction(f"{action.get('type')!r} with these fields is not legal now")


class Game(ABC, Generic[S]):
    """One game's rules. Implementations are stateless; every call is pure.

    Conventions every game keeps: `dump_state` holds the generator state under "rng" (so
    tests can check that no view leaks it), and `replay_view` reveals "seed" and "rng".
    """

    id: str
    ruleset: str
    min_seats: int
    max_seats: int

    @abstractmethod
    def options_schema(self) -> dict[str, OptionSpec]:
        """The options `setup` accepts, by name."""

    @abstractmethod
    def setup(self, seed: int, seats: int, options: Mapping[str, Any]) -> S:
        """A new match; raise `GameError` for bad seats or options."""

    @abstractmethod
    def setup_events(self, state: S) -> list[Event]:
        """The events of setting up (e.g. turn-order rolls), for the state `setup` returned."""

    @abstractmethod
    def to_act(self, state: S) -> list[int]:
        """Seats that may act now; empty when the match is over."""

    @abstractmethod
    def legal_actions(self, state: S, seat: int) -> list[Action]:
        """Every action `seat` may take now; empty if it may not act."""

    @abstractmethod
    def apply(self, state: S, seat: int, action: Action) -> tuple[S, list[Event]]:
        """The next state and what happened; raise `IllegalAction` and leave `state` as it was."""

    @abstractmethod
    def view(self, state: S, seat: int | None) -> dict[str, Any]:
        """What `seat` may see; `None` is a spectator. Never the generator state."""

    @abstractmethod
    def replay_view(self, state: S) -> dict[str, Any]:
        """Everything revealed, for a finished match."""

    @abstractmethod
    def outcome(self, state: S) -> Outcome | None:
        """None while the match runs."""

    @abstractmethod
    def timeout_action(self, state: S, seat: int) -> Action:
        """The legal action the server applies when `seat`'s timer runs out."""

    @abstractmethod
    def bot_action(self, state: S, seat: int, rng_seed: int) -> Action:
        """A legal action chosen by a simple bot, deterministic in `rng_seed`."""

    @abstractmethod
    def dump_state(self, state: S) -> dict[str, Any]:
        """The state as JSON-able data; `load_state(dump_state(s))` equals `s`."""

    @abstractmethod
    def load_state(self, data: Mapping[str, Any]) -> S:
        """The state back from `dump_state`'s data."""


def rebuild(
    game: Game[S],
    seed: int,
    seats: int,
    options: Mapping[str, Any],
    action_log: Iterable[tuple[int, Action]],
) -> S:
    """The state reached by replaying `action_log` from setup."""
    state = game.setup(seed, seats, options)
    for seat, action in action_log:
        state, _ = game.apply(state, seat, action)
    return state
