"""How every game keeps its state: a typed record that the kernel copies, dumps and loads.

A game's state is a `GameState`, a msgspec `Struct` with the match seed and the generator
state, and whatever else the game declares, typed. One mechanism serves every game:

- `copy_state` before every action and resignation (the rules then change the copy),
- `dump_state` to the JSON-able data the server stores, field by field under the same names,
- `load_state` back, checking the data against the declared types.

msgspec does each in C: on the necromancers' state a copy costs half of the hand-written copy
it replaced, a dump a quarter (`docs/architecture.md#game-state`).
"""

from collections.abc import MutableSequence, Sequence
from typing import Any, TypeVar

import msgspec

from service.games.kernel.rng import SplitMix64

T = TypeVar("T")
S = TypeVar("S", bound=msgspec.Struct)


class GameState(msgspec.Struct, kw_only=True):
    """The seed a match was set up from, and the SplitMix64 state every draw continues from.

    Rules draw through the state's own methods, which borrow the generator and write its
    state back, so no draw is ever made from a generator that is not the match's.
    """

    seed: int
    rng: int

    def die(self, faces: int) -> int:
        """A die with `faces` faces."""
        rng = SplitMix64(self.rng)
        value = rng.die(faces)
        self.rng = rng.state
        return value

    def below(self, n: int) -> int:
        """An index in 0..n-1."""
        rng = SplitMix64(self.rng)
        value = rng.below(n)
        self.rng = rng.state
        return value

    def pick(self, items: Sequence[T]) -> T:
        """One of `items`."""
        return items[self.below(len(items))]

    def shuffle(self, items: MutableSequence[Any]) -> None:
        """`items` shuffled in place (Fisher-Yates, from the last index down)."""
        rng = SplitMix64(self.rng)
        rng.shuffle(items)
        self.rng = rng.state


_ENCODER = msgspec.msgpack.Encoder()


_DECODERS: dict[type[Any], msgspec.msgpack.Decoder[Any]] = {}


def _decoder(kind: type[S]) -> msgspec.msgpack.Decoder[S]:
    """One decoder per state type, made on first use: building one costs more than a decode."""
    decoder = _DECODERS.get(kind)
    if decoder is None:
        decoder = _DECODERS[kind] = msgspec.msgpack.Decoder(kind)
    return decoder


def copy_state(state: S) -> S:
    """A copy sharing nothing mutable with `state` (through msgpack: the cheapest deep copy)."""
    return _decoder(type(state)).decode(_ENCODER.encode(state))


def dump_state(state: msgspec.Struct) -> dict[str, Any]:
    """The state as JSON-able data: each field under its name, records as objects."""
    data: dict[str, Any] = msgspec.to_builtins(state)
    return data


def load_state(data: Any, kind: type[S]) -> S:
    """The state of `kind` from `dump_state`'s data, sharing nothing mutable with `data`;
    `msgspec.ValidationError` when the data does not fit the declared types."""
    # Through msgpack rather than `msgspec.convert`, which shares the values of `Any` fields.
    return _decoder(kind).decode(_ENCODER.encode(data))
