"""A follower's cursor: what pushes and an acting socket's answers have delivered."""

from service.usecases.matches.follow import Cursor, EventPage
from service.usecases.matches.progress import WireEvent


def _page(*seqs: int) -> EventPage:
    events: list[WireEvent] = [{"seq": s, "version": 1, "kind": "k", "data": {}} for s in seqs]
    return EventPage(events, seqs[-1], "active", 1, False)


def test_a_page_read_before_an_answer_sends_only_what_the_answer_did_not_deliver() -> None:
    cursor = Cursor(after=5)
    page = _page(6, 7, 8)  # read while the socket's action was in flight
    cursor.answered(5, 8, "active")  # its answer held 6..8
    assert cursor.after == 8
    assert cursor.fresh(page) == []


def test_an_answer_past_a_gap_counts_once_the_gap_is_pushed() -> None:
    cursor = Cursor(after=3)
    cursor.answered(5, 9, "active")  # events 4 and 5 (another seat's) not pushed yet
    assert cursor.after == 3
    page = _page(4, 5, 6, 7, 8, 9)
    assert [e["seq"] for e in cursor.fresh(page)] == [4, 5, 6, 7, 8, 9]
    cursor.advance(5)  # had the push held 4 and 5 only, the answer fills the rest
    assert cursor.after == 9


def test_answers_in_a_row_behind_a_gap_all_count_once_it_is_filled() -> None:
    cursor = Cursor(after=1)
    cursor.answered(4, 6, "active")
    cursor.answered(6, 8, "active")
    assert cursor.after == 1
    cursor.advance(4)
    assert cursor.after == 8


def test_once_an_answer_says_the_match_is_over_the_cursor_stays_told() -> None:
    cursor = Cursor(after=0)
    cursor.answered(0, 3, "finished")
    assert cursor.over
    cursor.answered(3, 3, "active")
    assert cursor.over
