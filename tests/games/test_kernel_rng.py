import hashlib

import pytest

from service.games.kernel import rng as rng_module
from service.games.kernel.rng import AHEAD, GOLDEN_GAMMA, MASK64, SplitMix64, mix64, one_way_seed


def test_splitmix64_matches_the_published_reference_sequence() -> None:
    # Reference outputs of SplitMix64 seeded with 0, as published with the algorithm.
    rng = SplitMix64(0)
    assert [rng.next() for _ in range(3)] == [
        0xE220A8397B1DCDAF,
        0x6E789E6AA1B965F4,
        0x06C45D188009454F,
    ]


@pytest.mark.parametrize("seed", [0, 1, 42, MASK64, MASK64 - GOLDEN_GAMMA, 0x8000_0000_0000_0000])
def test_ahead_gives_the_next_outputs_in_order_and_moves_the_state_past_them(seed: int) -> None:
    batched, single = SplitMix64(seed), SplitMix64(seed)
    for _ in range(3):
        assert batched.ahead() == [single.next() for _ in range(AHEAD)]
        assert batched.state == single.state


def test_die_is_one_plus_output_modulo_faces() -> None:
    a, b = SplitMix64(42), SplitMix64(42)
    assert a.die(6) == 1 + b.next() % 6


def test_shuffle_is_fisher_yates_from_the_last_index_down() -> None:
    items = list(range(5))
    SplitMix64(7).shuffle(items)
    expected = list(range(5))
    rng = SplitMix64(7)
    for i in range(4, 0, -1):
        j = rng.next() % (i + 1)
        expected[i], expected[j] = expected[j], expected[i]
    assert items == expected
    assert sorted(items) == list(range(5))


def test_blake2b_is_the_primitive_of_rfc_7693() -> None:
    # RFC 7693, Appendix A: BLAKE2b-512("abc").
    assert hashlib.blake2b(b"abc").hexdigest() == (
        "ba80a53f981c4d0d6a2797b69f12f6e94c212f14685ac4b74b12bb6fdbffa2d1"
        "7d87c5392aab792dc252d5de4533cc9518d38aa8dbf1925ab92386edd4009923"
    )


def _unmix64(z: int) -> int:
    """The inverse of SplitMix64's output function: what made the old derivation invertible."""
    z = (z ^ (z >> 31) ^ (z >> 62)) & MASK64
    z = (z * pow(0x94D049BB133111EB, -1, 1 << 64)) & MASK64
    z = (z ^ (z >> 27) ^ (z >> 54)) & MASK64
    z = (z * pow(0xBF58476D1CE4E5B9, -1, 1 << 64)) & MASK64
    return (z ^ (z >> 30) ^ (z >> 60)) & MASK64


def test_a_revealed_sub_seed_no_longer_gives_its_parent_away() -> None:
    """The old `mix64(seed ^ salt)` let anyone holding a battle seed compute the run seed."""
    run_seed, salt = 0x1234_5678_9ABC_DEF0, 0xBA77_1E00_0000_0003
    old = mix64(((run_seed ^ salt) + GOLDEN_GAMMA) & MASK64)
    recovered = ((_unmix64(old) - GOLDEN_GAMMA) & MASK64) ^ salt
    assert recovered == run_seed  # the attack, on the old derivation
    new = one_way_seed(run_seed, b"cryptids:battle:3")
    assert ((_unmix64(new) - GOLDEN_GAMMA) & MASK64) ^ salt != run_seed
    assert not hasattr(rng_module, "derive_seed")


def test_one_way_seed_is_blake2b_of_the_parent_and_salt_little_endian() -> None:
    digest = hashlib.blake2b((123).to_bytes(8, "little") + b"leg:1", digest_size=8).digest()
    assert one_way_seed(123, b"leg:1") == int.from_bytes(digest, "little")
    assert one_way_seed(123, b"leg:1") != one_way_seed(123, b"leg:2")
    assert 0 <= one_way_seed(MASK64, b"") <= MASK64
