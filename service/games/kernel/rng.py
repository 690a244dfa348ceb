"""SplitMix64, the one generator every game draws from
(docs/architecture.md#seeds-and-determinism).

It is published so that a client in any language can re-simulate from a seed.
"""

import hashlib
import struct
from collections.abc import MutableSequence, Sequence
from typing import Final, TypeVar

T = TypeVar("T")

MASK64 = (1 << 64) - 1
GOLDEN_GAMMA = 0x9E3779B97F4A7C15


# `SplitMix64.ahead`: AHEAD states side by side in 128-bit lanes of one integer. A lane is wide
# enough for a 64-bit value times a 64-bit multiplier, and what a right shift brings down from
# the lane above lands in bits 64 and up, which the masks clear.
AHEAD: Final = 16
_LANE: Final = 128
_ONES: Final = sum(1 << (_LANE * i) for i in range(AHEAD))
_GAMMAS: Final = GOLDEN_GAMMA * sum((i + 1) << (_LANE * i) for i in range(AHEAD))
_LOW64: Final = MASK64 * _ONES
_LANES: Final = struct.Struct(f"<{2 * AHEAD}Q").unpack


def mix64(z: int) -> int:
    """The SplitMix64 output function applied to one 64-bit value."""
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return z ^ (z >> 31)


def one_way_seed(parent: int, salt: bytes) -> int:
    """A sub-seed that reveals nothing of `parent` or its siblings
    (docs/architecture.md#seeds-and-determinism).

    The first 8 bytes, little-endian, of BLAKE2b over the parent seed and a documented salt.
    Use it for any sub-seed that may be revealed (a leg's seed is in that leg's replay).
    """
    digest = hashlib.blake2b(parent.to_bytes(8, "little") + salt, digest_size=8).digest()
    return int.from_bytes(digest, "little")


class SplitMix64:
    __slots__ = ("state",)

    def __init__(self, seed: int) -> None:
        if not 0 <= seed <= MASK64:
            raise ValueError("seed must be in 0..2^64-1")
        self.state = seed

    def next(self) -> int:
        self.state = (self.state + GOLDEN_GAMMA) & MASK64
        return mix64(self.state)

    def ahead(self) -> list[int]:
        """The next AHEAD outputs, in order, exactly as AHEAD calls of next() would give them.

        The mixer runs once over all of them, each step one operation on a big integer instead
        of AHEAD: three to four times cheaper per output, for whoever draws many (a battle).
        """
        state = self.state
        z = (state * _ONES + _GAMMAS) & _LOW64
        z = (((z ^ (z >> 30)) & _LOW64) * 0xBF58476D1CE4E5B9) & _LOW64
        z = (((z ^ (z >> 27)) & _LOW64) * 0x94D049BB133111EB) & _LOW64
        z = (z ^ (z >> 31)) & _LOW64
        self.state = (state + AHEAD * GOLDEN_GAMMA) & MASK64
        # Little-endian 64-bit words: each lane's output, then its empty upper half.
        return list(_LANES(z.to_bytes(_LANE // 8 * AHEAD, "little"))[::2])

    def die(self, faces: int) -> int:
        """A die with `faces` faces: 1 + next() % faces."""
        return 1 + self.next() % faces

    def below(self, n: int) -> int:
        """An index in 0..n-1: next() % n."""
        return self.next() % n

    def pick(self, items: Sequence[T]) -> T:
        """One item, by `below(len(items))`."""
        return items[self.below(len(items))]

    def shuffle(self, items: MutableSequence[T]) -> None:
        """Fisher-Yates in place, from the last index down: j = next() % (i + 1)."""
        for i in range(len(items) - 1, 0, -1):
            j = self.next() % (i + 1)
            items[i], items[j] = items[j], items[i]
