"""The turn-based match protocol every tabletop game implements
(docs/architecture.md#the-match-kernel).

A game is a pure state machine. Seats are numbered 0..n-1. The state is opaque to the
server except through `dump_state`/`load_state` (a JSON-able dict, round-trip exact), and it
carries its own SplitMix64 state, so `apply` is a deterministic function of
(state, seat, action) and a match is reproducible from its seed, loadouts and action log.

Decisions are actions, chance is not: dice and shuffles happen inside `apply` (or `setup`),
drawn from the state's generator. Any seat may be asked something at any moment, several at
once: `prompt` says what each seat is asked, `to_act` who is asked anything.

Secrets are marked with `Hidden` in `observe` and in events, and redacted per seat here, in
one place: a game never writes a per-seat view by hand.
"""

from abc import ABC, abstractmethod
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypedDict, TypeVar

from service.games.kernel.hidden import redact, reveal, to_json
from service.games.kernel.loadouts import LoadoutError
from service.games.kernel.prompts import Action as Action  # re-exported: games import it here
from service.games.kernel.prompts import Prompt, canonical
from service.games.kernel.rng import MASK64

S = TypeVar("S")

RESIGN: Action = {"type": "$resign"}
"""How an action log records a resignation, so `rebuild` replays it through `Game.resign`."""

PREFER = "$prefer"
"""The type of an action log's entry that sets a seat's preferences, replayed through
`Game.prefer`: `{"type": "$prefer", **preferences}`."""


class GameError(ValueError):
    """A match cannot be set up as asked (bad seat count or options)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class IllegalAction(GameError):
    """The action is not legal for that seat now; the state is unchanged.

    `code` is the stable reason a client branches on (the kernel's are listed in
    docs/architecture.md#refusals, each game's in its rules doc); `reason` is the sentence a
    player reads; `details` is what helps to fix the action (the types offered, the field out
    of its schema).
    """

    def __init__(self, code: str, reason: str, **details: Any) -> None:
        super().__init__(reason)
        self.code = code
        self.details = details


@dataclass(frozen=True)
class Event:
    """Something that happened. `visible_to=None` is public; otherwise only those seats see it.

    `data` may hold `Hidden` marks (a drawn card): the whole event is for everyone who may
    see it, each of them sees the marked parts redacted for its seat.
    """

    kind: str
    data: Mapping[str, Any] = field(default_factory=dict)
    visible_to: tuple[int, ...] | None = None

    def as_dict(self) -> dict[str, Any]:
        """Kind and data with the marks in JSON form, as the server stores them."""
        return {"kind": self.kind, "data": to_json(dict(self.data))}

    def to_json(self) -> dict[str, Any]:
        """The stored form: `as_dict` plus the routing (`visible_to`)."""
        visible = None if self.visible_to is None else list(self.visible_to)
        return {**self.as_dict(), "visible_to": visible}


def _visible(visible_to: Iterable[int] | None, seat: int | None) -> bool:
    return visible_to is None or (seat is not None and seat in visible_to)


def events_for(events: Iterable[Event], seat: int | None) -> list[Event]:
    """The events `seat` may see; `None` (a spectator) sees only public events."""
    return [e for e in events if _visible(e.visible_to, seat)]


def _stored(event: Event | Mapping[str, Any]) -> dict[str, Any]:
    return event.to_json() if isinstance(event, Event) else dict(event)


def event_for(event: Event | Mapping[str, Any], seat: int | None) -> dict[str, Any] | None:
    """The event as `seat` receives it (data redacted), or None when it may not see it.

    Takes an `Event` or its stored form; any other keys of a stored event (a sequence number)
    are kept, the routing is dropped.
    """
    stored = _stored(event)
    if not _visible(stored.pop("visible_to", None), seat):
        return None
    return {**stored, "data": redact(stored.get("data", {}), seat)}


def event_revealed(event: Event | Mapping[str, Any]) -> dict[str, Any]:
    """The event with everything revealed, for replays; the routing is kept."""
    stored = _stored(event)
    return {**stored, "data": reveal(stored.get("data", {}))}


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


_SEQUENCES = (list, tuple)


def same_json(a: Any, b: Any) -> bool:
    """Equal as JSON trees, strictly: 1.0 and true never pass for the integer 1, nor 1 for "1"."""
    kind = type(a)
    if kind in _SEQUENCES:
        return type(b) in _SEQUENCES and len(a) == len(b) and all(map(same_json, a, b))
    if kind is not type(b):
        return False
    if kind is dict:
        return a.keys() == b.keys() and all(same_json(value, b[key]) for key, value in a.items())
    return bool(a == b)


def same_multiset(a: Any, b: Any) -> bool:
    """Two JSON lists holding the same items (`same_json`) as often, in any order."""
    if type(a) not in _SEQUENCES or type(b) not in _SEQUENCES or len(a) != len(b):
        return False
    left = list(b)
    for item in a:
        index = next((i for i, other in enumerate(left) if same_json(item, other)), None)
        if index is None:
            return False
        del left[index]
    return True


def _same_but_order(candidate: Action, action: Any, unordered: Collection[str]) -> bool:
    """`same_json`, except that the `unordered` fields are compared as multisets."""
    if type(action) is not dict or candidate.keys() != action.keys():
        return False
    return all(
        same_multiset(value, action[key]) if key in unordered else same_json(value, action[key])
        for key, value in candidate.items()
    )


def match_legal(legal: Sequence[Action], action: Any, unordered: Collection[str] = ()) -> Action:
    """The legal action equal to `action` (JSON-exact, but for the lists in its `unordered`
    fields, which may come in any order), or raise `IllegalAction`. The legal action is
    returned, so every order of a set reaches the same state."""
    if not isinstance(action, Mapping) or not isinstance(action.get("type"), str):
        raise IllegalAction("not_an_action", "an action is an object with a 'type'")
    # Compared as trees rather than as canonical text: a match action is checked against every
    # legal one, and writing each as JSON was a tenth of the action's CPU.
    for candidate in legal:
        if same_json(candidate, action):
            return candidate
    if unordered:
        for candidate in legal:
            if _same_but_order(candidate, action, unordered):
                return candidate
    try:
        canonical(action)
    except (TypeError, ValueError) as exc:
        raise IllegalAction("not_an_action", "the action is not JSON") from exc
    offered = sorted({candidate["type"] for candidate in legal})
    if action["type"] not in offered:
        raise IllegalAction(
            "type_not_offered",
            f"{action['type']!r} is not offered now; the actions offered are {', '.join(offered)}",
            offered=offered,
        )
    raise IllegalAction("not_offered", f"{action['type']!r} with these fields is not offered now")


class Game(ABC, Generic[S]):
    """One game's rules under one ruleset. Implementations are stateless; every call is pure.

    Conventions every game keeps: `dump_state` holds the generator state under "rng", and
    `replay_view` reveals "seed" and "rng"; neither ever appears in `observe`.
    """

    id: str
    # What players call it, shown by clients beside the id.
    name: str
    ruleset: str
    min_seats: int
    max_seats: int

    # --- creating a match ----------------------------------------------------------------

    @abstractmethod
    def options_schema(self) -> dict[str, OptionSpec]:
        """The options `setup` accepts, by name."""

    def check_options(self, seats: int, options: Mapping[str, Any]) -> dict[str, Any]:
        """The options resolved (defaults filled in) for that many seats, or `GameError`.

        A server calls it when a match is created, before every seat has brought its loadout.
        """
        if type(seats) is not int or not self.min_seats <= seats <= self.max_seats:
            raise GameError(f"{self.id} needs {self.min_seats} to {self.max_seats} seats")
        return resolve_options(self.options_schema(), options)

    def loadout_schema(self) -> dict[str, Any] | None:
        """A JSON Schema of one seat's loadout; None when the game takes none."""
        return None

    def validate_loadout(self, loadout: Any, options: Mapping[str, Any]) -> Any:
        """The loadout normalised, or `LoadoutError` naming the rule and the card."""
        if loadout is not None:
            raise LoadoutError("no_loadout", f"{self.id} takes no loadout")
        return None

    def sample_loadout(self, seed: int, options: Mapping[str, Any]) -> Any:
        """A legal loadout chosen from `seed` (seed 0 is the one offered to clients)."""
        return None

    def prepare(
        self, seed: int, seats: int, options: Mapping[str, Any], loadouts: Sequence[Any]
    ) -> tuple[dict[str, Any], list[Any]]:
        """Every check `setup` makes first: the resolved options and the normalised loadouts."""
        if type(seed) is not int or not 0 <= seed <= MASK64:
            raise GameError("seed must be an integer in 0..2^64-1")
        resolved = self.check_options(seats, options)
        if len(loadouts) != seats:
            raise GameError(f"one loadout per seat: {seats} expected, {len(loadouts)} given")
        return resolved, [self.validate_loadout(loadout, resolved) for loadout in loadouts]

    @abstractmethod
    def setup(
        self, seed: int, seats: int, options: Mapping[str, Any], loadouts: Sequence[Any]
    ) -> S:
        """A new match once every seat has its loadout (None where the game takes none)."""

    @abstractmethod
    def setup_events(self, state: S) -> list[Event]:
        """The events of setting up (e.g. turn-order rolls), for the state `setup` returned."""

    def next_leg_options(
        self, options: Mapping[str, Any], finished: Sequence[Outcome]
    ) -> dict[str, Any]:
        """The options of a series' next leg after the `finished` ones (e.g. who starts)."""
        return dict(options)

    # --- playing -------------------------------------------------------------------------

    @abstractmethod
    def seat_count(self, state: S) -> int:
        """How many seats the match has."""

    @abstractmethod
    def prompt(self, state: S, seat: int) -> Prompt | None:
        """What `seat` is asked now; None when it has nothing to answer."""

    def to_act(self, state: S) -> list[int]:
        """Seats holding a prompt; several at once is normal; empty when the match is over."""
        return [seat for seat in range(self.seat_count(state)) if self.prompt(state, seat)]

    def legal_actions(self, state: S, seat: int) -> list[Action]:
        """The enumerated actions of `seat`'s prompt; parameterised ones are in its `params`."""
        prompt = self.prompt(state, seat)
        return list(prompt.actions) if prompt is not None else []

    @abstractmethod
    def apply(self, state: S, seat: int, action: Action) -> tuple[S, list[Event]]:
        """The next state and what happened; raise `IllegalAction` and leave `state` as it was.

        An enumerated action is matched JSON-exactly (`match_legal`, lists in the prompt's
        `unordered` fields in any order); a parameterised one has its parameters checked by the
        game.
        """

    @abstractmethod
    def resign(self, state: S, seat: int) -> tuple[S, list[Event]]:
        """`seat` gives up: the next state and what happened, by the game's rule (the seat
        loses, or leaves and the others play on); `IllegalAction` when it cannot."""

    @abstractmethod
    def outcome(self, state: S) -> Outcome | None:
        """None while the match runs."""

    def preferences_schema(self) -> dict[str, OptionSpec]:
        """The standing preferences a seat may set at any moment of a match (e.g. pass every
        window it cannot answer), by name; none by default."""
        return {}

    def prefer(self, state: S, seat: int, preferences: Mapping[str, Any]) -> tuple[S, list[Event]]:
        """`seat` sets its preferences (all of them, defaults filled in): the next state and
        what happened; `IllegalAction` when the game has none or they do not fit the schema."""
        raise IllegalAction("no_preferences", f"{self.id} has no seat preferences")

    def timeout_action(self, state: S, seat: int) -> Action:
        """The action applied when `seat`'s timer runs out: by default its first enumerated one.

        A game whose prompts may have no enumerated action (only parameters) overrides this.
        """
        prompt = self.prompt(state, seat)
        if prompt is None or not prompt.actions:
            raise GameError(f"seat {seat} has no timer running")
        return prompt.actions[0]

    # --- seeing --------------------------------------------------------------------------

    @abstractmethod
    def observe(self, state: S) -> dict[str, Any]:
        """Everything about the match with every secret marked `Hidden`; never the generator."""

    def view(self, state: S, seat: int | None) -> dict[str, Any]:
        """What `seat` may see; `None` is a spectator. Every view names its game and ruleset."""
        seen = redact(self.observe(state), seat)
        return {**seen, "game": self.id, "ruleset": self.ruleset, "seat": seat}

    @abstractmethod
    def view_schema(self) -> dict[str, Any]:
        """The JSON Schema of `observe` as any seat or a spectator receives it, redacted: one
        shape for every seat (docs/architecture.md#views). The kernel adds game, ruleset and
        seat, and publishes it as the OpenAPI component `View_<game>`."""

    @abstractmethod
    def catalogue(self) -> dict[str, Any]:
        """Everything a table shows that the view names by id, as `{"entries", "rules"}`
        (docs/architecture.md#catalogues); built with `kernel.catalogue`."""

    @abstractmethod
    def secrets(self, state: S, seat: int | None) -> list[Any]:
        """Values of the full state `seat` must never receive (hidden cards, deck orders, the
        seed, the generator state); the property tests search everything a seat gets for them.
        """

    @abstractmethod
    def replay_view(self, state: S) -> dict[str, Any]:
        """Everything revealed, the seed and the generator state included, for a finished match."""

    # --- bots ----------------------------------------------------------------------------

    @abstractmethod
    def bot_action(self, view: Mapping[str, Any], prompt: Prompt, rng_seed: int) -> Action:
        """A simple bot's answer to `prompt`, from its seat's `view` only; deterministic."""

    def bot_move(self, state: S, seat: int, rng_seed: int) -> Action:
        """The bot's answer for `seat`, given only what that seat sees (the server calls this)."""
        prompt = self.prompt(state, seat)
        if prompt is None:
            raise IllegalAction("not_asked", f"seat {seat} may not act now")
        return self.bot_action(self.view(state, seat), prompt, rng_seed)

    # --- storing -------------------------------------------------------------------------

    @abstractmethod
    def dump_state(self, state: S) -> dict[str, Any]:
        """The state as JSON-able data; `load_state(dump_state(s))` equals `s`."""

    @abstractmethod
    def load_state(self, data: Mapping[str, Any]) -> S:
        """The state back from `dump_state`'s data, sharing nothing mutable with `data`: the
        service loads the same data again for the next action."""


def replay_step(game: Game[S], state: S, seat: int, action: Action) -> tuple[S, list[Event]]:
    """One entry of an action log played again: an action, a resignation (`RESIGN`) or a
    seat's preferences (`PREFER`)."""
    if action == RESIGN:
        return game.resign(state, seat)
    if action.get("type") == PREFER:
        return game.prefer(state, seat, {k: v for k, v in action.items() if k != "type"})
    return game.apply(state, seat, action)


def rebuild(
    game: Game[S],
    seed: int,
    seats: int,
    options: Mapping[str, Any],
    loadouts: Sequence[Any],
    action_log: Iterable[tuple[int, Action]],
) -> S:
    """The state reached by replaying `action_log` from setup."""
    state = game.setup(seed, seats, options, loadouts)
    for seat, action in action_log:
        state, _ = replay_step(game, state, seat, action)
    return state
