"""The matcher's grouping: buckets are formed by SQL, ratings and waits decide here."""

from uuid import UUID, uuid4

from service.store.matchmaking import Waiting
from service.usecases.matchmaking import Tuning, groups

TUNING = Tuning(
    band=3.0,
    band_growth_per_second=0.5,
    bot_after_seconds=20.0,
    turn_seconds=120,
    match_wait_seconds=60,
)


def ticket(rating: float, waited: float) -> Waiting:
    return Waiting(uuid4(), uuid4(), None, rating, waited)


def ids(formed: list[list[Waiting]]) -> list[list[UUID]]:
    return [[t.ticket_id for t in group] for group in formed]


def test_the_band_widens_with_the_wait() -> None:
    assert TUNING.band_after(0) == 3.0
    assert TUNING.band_after(10) == 8.0


def test_two_close_ratings_match_at_once() -> None:
    a, b = ticket(25, 1), ticket(27, 0)
    assert ids(groups([a, b], 2, TUNING)) == [[a.ticket_id, b.ticket_id]]


def test_ratings_outside_the_band_wait_until_it_has_grown() -> None:
    far = [ticket(20, 1), ticket(30, 0)]
    assert groups(far, 2, TUNING) == []
    grown = [ticket(20, 15), ticket(30, 0)]  # band 3 + 0.5 x 15 = 10.5
    assert len(groups(grown, 2, TUNING)) == 1


def test_the_oldest_ticket_takes_the_nearest_ratings_first() -> None:
    oldest, farther, above, below = ticket(25, 5), ticket(30, 0), ticket(26, 1), ticket(24, 2)
    (group,) = groups([oldest, below, above, farther], 3, TUNING)
    # As near above as below: the one that waited longer first.
    assert [t.ticket_id for t in group] == [oldest.ticket_id, below.ticket_id, above.ticket_id]


def test_a_ticket_past_the_bot_delay_takes_whoever_is_near_and_bots_fill_the_rest() -> None:
    alone = ticket(25, 20)
    assert ids(groups([alone], 2, TUNING)) == [[alone.ticket_id]]
    old, near, other = ticket(25, 21), ticket(26, 0), ticket(60, 0)
    assert ids(groups([old, near, other], 4, TUNING)) == [[old.ticket_id, near.ticket_id]]


def test_no_ticket_is_in_two_groups() -> None:
    waiting = [ticket(25 + i % 3, 30 - i) for i in range(11)]
    formed = groups(waiting, 2, TUNING)
    seen = [t.ticket_id for group in formed for t in group]
    assert len(seen) == len(set(seen)) == 11
    assert sorted(len(g) for g in formed) == [1] + [2] * 5
