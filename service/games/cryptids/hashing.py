"""The board hash recorded after every roll, so a client re-simulating can detect a desync.

Encoding: a sequence of signed 32-bit big-endian integers. For side A, then side B: the number
of cryptids on that side, then for each cryptid from left to right its uid, health, max health,
threat, shield, poison stacks and pending stuns. The hash is the first 8 bytes of SHA-256 over
those bytes, written as 16 lowercase hex digits.
"""

import hashlib
import struct
from collections.abc import Callable, Sequence
from typing import Final

UNIT_STRUCT: Final = struct.Struct(">7i")
COUNT_STRUCT: Final = struct.Struct(">i")
# Bound once: one cryptid's part of the encoding, packed on every roll its state changed.
pack_unit: Final[Callable[..., bytes]] = UNIT_STRUCT.pack


_sha256: Final = hashlib.sha256


def board_hash(values: Sequence[int]) -> str:
    """Hash an already flattened board (the integer sequence described in the module doc)."""
    data = struct.pack(f">{len(values)}i", *values)
    return hashlib.sha256(data).digest()[:8].hex()


def hash_parts(parts: list[bytes]) -> str:
    """The same hash from the encoding already cut in pieces (counts and packed cryptids).

    The first 16 hex digits are the first 8 bytes: one string fewer than digest()[:8].hex().
    """
    return _sha256(b"".join(parts)).hexdigest()[:16]
