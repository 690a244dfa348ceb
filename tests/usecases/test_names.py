"""The display-name rule (docs/api.md#names-and-tags): each refusal, normalisation, tags."""

import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from service.usecases.names import InvalidName, handle, normalise_name, tag_text


def _refusal(raw: str) -> InvalidName:
    with pytest.raises(InvalidName) as caught:
        normalise_name(raw)
    return caught.value


@pytest.mark.parametrize(
    ("raw", "stored"),
    [
        ("ana", "ana"),
        ("  Ana  ", "Ana"),
        ("\t\nana\r\n", "ana"),
        # Full-width letters and digits become the plain ones.
        ("\uff41\uff4e\uff41\uff11", "ana1"),
        # Ligatures are spelled out.
        ("ﬁﬂ", "fifl"),
        # A compatibility space (ideographic, no-break) is a space, and is trimmed at the ends.
        ("\u3000ana\u00a0", "ana"),
        ("ana\u00a0bea", "ana bea"),
        # A decomposed accent is composed.
        ("Jose\u0301", "José"),
        ("Ⅻ", "XII"),
        # Whitespace of any kind at the ends, separators included.
        ("\u2028\u2003ana\u2029\u205f", "ana"),
        # Letters of any script, and emoji.
        ("Ωμέγα", "Ωμέγα"),
        ("名前", "名前"),
        ("🐉 ana 🔥", "🐉 ana 🔥"),
        ("❤️", "❤️"),  # with its variation selector, a mark
        ("🇫🇷", "🇫🇷"),
        # Markup is text like any other.
        ("<script>alert(1)</script>", "<script>alert(1)</script>"),
    ],
)
def test_a_name_is_stored_normalised_and_trimmed(raw: str, stored: str) -> None:
    assert normalise_name(raw) == stored


def test_32_code_points_after_normalisation_is_the_longest() -> None:
    assert normalise_name("x" * 32) == "x" * 32
    assert normalise_name("  " + "x" * 32 + "  ") == "x" * 32
    # 32 accented letters sent decomposed are 64 code points, and 32 once composed.
    assert normalise_name("e\u0301" * 32) == "é" * 32
    # 32 emoji are 32 code points, whatever their length in UTF-16 or UTF-8.
    assert normalise_name("🐉" * 32) == "🐉" * 32
    refused = _refusal("x" * 33)
    assert refused.details["rule"] == "too_long"
    assert "33" in refused.message


def test_the_length_is_counted_after_normalisation() -> None:
    # One ligature, three letters: ten make 30, eleven make 33.
    assert normalise_name("ﬃ" * 10) == "ffi" * 10
    assert _refusal("ﬃ" * 11).details["rule"] == "too_long"


@pytest.mark.parametrize("raw", ["", " ", "\t \n", "\u3000", "\u2028\u2029"])
def test_an_empty_name_is_refused(raw: str) -> None:
    refused = _refusal(raw)
    assert refused.code == "invalid_name"
    assert refused.details["rule"] == "empty"
    assert refused.details["fields"] == [{"field": "name", "message": refused.message[6:]}]
    assert refused.message.startswith("name: ")


@pytest.mark.parametrize(
    ("raw", "rule", "code_point"),
    [
        ("bell\x07", "control_character", "U+0007"),
        ("a\x00b", "control_character", "U+0000"),
        ("a\tb", "control_character", "U+0009"),
        ("a\x7fb", "control_character", "U+007F"),
        ("a\x85b", "control_character", "U+0085"),
        # An information separator is a control character, even at the end.
        ("ana\x1f", "control_character", "U+001F"),
        ("a\u200bb", "format_character", "U+200B"),
        ("a\u200db", "format_character", "U+200D"),
        ("\u202eana", "format_character", "U+202E"),
        ("ana\ufeff", "format_character", "U+FEFF"),
        ("ana\U000e0041", "format_character", "U+E0041"),
        ("a\u2028b", "unusable_character", "U+2028"),
        ("a\u2029b", "unusable_character", "U+2029"),
        ("a\ue000b", "unusable_character", "U+E000"),
        ("a\U000f0000", "unusable_character", "U+F0000"),
        ("a\u0378b", "unusable_character", "U+0378"),
        ("a\ud800b", "unusable_character", "U+D800"),
    ],
)
def test_a_character_that_cannot_be_shown_is_refused_by_its_code_point(
    raw: str, rule: str, code_point: str
) -> None:
    refused = _refusal(raw)
    assert refused.code == "invalid_name"
    assert refused.details["rule"] == rule
    assert refused.details["code_point"] == code_point
    assert code_point in refused.message


@pytest.mark.parametrize(
    ("raw", "code_point"),
    [
        # Each of these, alone, made a name that shows nothing.
        ("\u3164", "U+1160"),  # HANGUL FILLER, which NFKC makes the jungseong filler
        ("\u2800", "U+2800"),  # BRAILLE PATTERN BLANK
        ("\u115f\u1160", "U+115F"),
        ("\uffa0", "U+1160"),
        # Inside a name, one makes "ana bea" look like "anaㅤbea".
        ("ana\u3164bea", "U+1160"),
    ],
)
def test_a_character_that_shows_nothing_is_refused(raw: str, code_point: str) -> None:
    refused = _refusal(raw)
    assert (refused.details["rule"], refused.details["code_point"]) == (
        "invisible_character",
        code_point,
    )
    assert "shows nothing" in refused.message


@pytest.mark.parametrize("raw", ["\u0301", " \u0301\u0302 ", "\u0301 \u0300"])
def test_a_name_without_a_letter_digit_punctuation_or_symbol_is_refused(raw: str) -> None:
    assert _refusal(raw).details["rule"] == "no_visible_character"


@pytest.mark.parametrize("raw", ["bea#0042", "#", "ana\uff03", "ana\ufe5f1"])
def test_a_name_holding_the_handles_hash_is_refused(raw: str) -> None:
    """`bea#0042` with tag 5731 would show as `bea#0042#5731`, which reads as another player's
    handle; the full-width and small number signs are `#` once normalised."""
    refused = _refusal(raw)
    assert (refused.details["rule"], refused.details["code_point"]) == ("tag_separator", "U+0023")


def test_at_most_four_combining_marks_stack_on_one_character() -> None:
    four = "e\u0301\u0302\u0303\u0304"
    assert normalise_name(four) == unicodedata.normalize("NFKC", four)
    refused = _refusal("a" + "\u0301" * 31)
    assert (refused.details["rule"], refused.details["code_point"]) == ("too_many_marks", "U+0301")
    assert _refusal("x" + "\u0300" * 5).details["rule"] == "too_many_marks"
    # Marks are counted per character: four on each of many letters are fine.
    assert len(normalise_name(("x" + "\u0300\u0301\u0302\u0303") * 6)) == 30


def test_the_refusal_names_the_character() -> None:
    assert "ZERO WIDTH SPACE" in _refusal("a\u200bb").message


@given(st.text(max_size=40))
def test_normalising_twice_changes_nothing(raw: str) -> None:
    try:
        once = normalise_name(raw)
    except InvalidName:
        return
    assert normalise_name(once) == once
    assert 1 <= len(once) <= 32


@pytest.mark.parametrize(
    ("tag", "shown"), [(0, "0000"), (42, "0042"), (4821, "4821"), (9999, "9999")]
)
def test_a_tag_is_four_digits_and_a_handle_joins_it_to_the_name(tag: int, shown: str) -> None:
    assert tag_text(tag) == shown
    assert handle("ana", tag) == f"ana#{shown}"
