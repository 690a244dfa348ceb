import hashlib

from service.games.kernel.rng import MASK64, SplitMix64, derive_seed, one_way_seed


def test_splitmix64_matches_the_published_reference_sequence() -> None:
    # Reference outputs of SplitMix64 seeded with 0, as published with the algorithm.
    rng = SplitMix64(0)
    assert [rng.next() for _ in range(3)] == [
        0xE220A8397B1DCDAF,
        0x6E789E6AA1B965F4,
        0x06C45D188009454F,
    ]


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


def test_derive_seed_is_the_first_output_of_the_salted_seed() -> None:
    assert derive_seed(123, 0xABC) == SplitMix64(123 ^ 0xABC).next()
    assert 0 <= derive_seed(MASK64, 1) <= MASK64


def test_one_way_seed_is_blake2b_of_the_parent_and_salt_little_endian() -> None:
    digest = hashlib.blake2b((123).to_bytes(8, "little") + b"leg:1", digest_size=8).digest()
    assert one_way_seed(123, b"leg:1") == int.from_bytes(digest, "little")
    assert one_way_seed(123, b"leg:1") != one_way_seed(123, b"leg:2")
    assert 0 <= one_way_seed(MASK64, b"") <= MASK64
