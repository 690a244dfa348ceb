"""Display names and the tags shown beside them (docs/api.md#names-and-tags).

Every way of naming a player (registering, renaming, signing in with a device) goes through
`normalise_name`, so a name is stored in one form: a full-width, ligatured or decomposed
spelling becomes the plain one it stands for.
"""

import unicodedata

from service.usecases.errors import InvalidFields

MAX_NAME_LENGTH = 32

# Unicode's White_Space: what is trimmed from both ends. (Python's str.strip() would also take
# the information separators U+001C to U+001F: control characters, refused like the others.)
_WHITE_SPACE = (
    "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)

# Characters that cannot be shown as part of a name, by Unicode general category.
_CONTROL = "Cc"
_FORMAT = "Cf"
# Line and paragraph separators, unassigned, private-use and surrogate code points: they break
# the line a name is shown on, or have no glyph that every device agrees on.
_UNUSABLE = frozenset({"Zl", "Zp", "Cn", "Co", "Cs"})
# Letters, marks and symbols that every device draws as nothing: a name of them shows a blank,
# and one of them inside a name makes two names look alike. (After NFKC, U+3164 and U+FFA0,
# the Hangul fillers of the old encodings, are U+1160.)
_INVISIBLE = frozenset(
    {
        "\u034f",  # COMBINING GRAPHEME JOINER
        "\u115f",  # HANGUL CHOSEONG FILLER
        "\u1160",  # HANGUL JUNGSEONG FILLER
        "\u17b4",  # KHMER VOWEL INHERENT AQ
        "\u17b5",  # KHMER VOWEL INHERENT AA
        "\u2800",  # BRAILLE PATTERN BLANK
        "\u3164",  # HANGUL FILLER
        "\uffa0",  # HALFWIDTH HANGUL FILLER
        "\U0001d159",  # MUSICAL SYMBOL NULL NOTEHEAD
    }
)
# What a name needs at least one of to be seen: a letter, a number, punctuation or a symbol.
_VISIBLE_CATEGORIES = frozenset("LNPS")
# A handle is `name#tag`: a `#` in the name would let it pass for another player's handle.
_TAG_SEPARATOR = "#"
# Marks stacked on one character: no script's spelling needs more (Vietnamese two, Hebrew with
# points and cantillation three or four); more only piles glyphs over the neighbouring lines.
MAX_MARKS = 4


class InvalidName(InvalidFields):
    """A refused name: `details.rule` says which rule, `details.fields` names the field."""

    code = "invalid_name"

    def __init__(self, rule: str, message: str, code_point: int | None = None) -> None:
        super().__init__([("name", message)])
        self.details["rule"] = rule
        if code_point is not None:
            self.details["code_point"] = _code_point(code_point)


def _code_point(value: int) -> str:
    return f"U+{value:04X}"


def _named(char: str) -> str:
    """`U+200B ZERO WIDTH SPACE`: the code point, and its name where Unicode gives one."""
    return " ".join(filter(None, (_code_point(ord(char)), unicodedata.name(char, ""))))


def _refusal(char: str) -> InvalidName | None:
    category = unicodedata.category(char)
    named = _named(char)
    if category == _CONTROL:
        return InvalidName("control_character", f"{named} is a control character", ord(char))
    if category == _FORMAT:
        return InvalidName("format_character", f"{named} is a format character", ord(char))
    if category in _UNUSABLE:
        return InvalidName(
            "unusable_character",
            f"{named} cannot be shown in a name (Unicode category {category})",
            ord(char),
        )
    return None


def _shape_refusal(name: str) -> InvalidName | None:
    """What is wrong with a name whose characters can each be shown: one that shows nothing,
    holds the handle's `#`, or piles up marks on one character."""
    marks = 0
    for char in name:
        named = _named(char)
        if char in _INVISIBLE:
            return InvalidName("invisible_character", f"{named} shows nothing", ord(char))
        if char == _TAG_SEPARATOR:
            return InvalidName(
                "tag_separator",
                f"{named} separates the name from the tag in a handle (ana#0042)",
                ord(char),
            )
        marks = marks + 1 if unicodedata.category(char).startswith("M") else 0
        if marks > MAX_MARKS:
            return InvalidName(
                "too_many_marks",
                f"{named} stacks more than {MAX_MARKS} combining marks on one character",
                ord(char),
            )
    if not any(unicodedata.category(char)[0] in _VISIBLE_CATEGORIES for char in name):
        return InvalidName(
            "no_visible_character", "must hold a letter, a digit, punctuation or a symbol"
        )
    return None


def normalise_name(raw: str) -> str:
    """The name as stored and shown: NFKC, without whitespace at either end.

    Raises InvalidName when the result is empty, longer than MAX_NAME_LENGTH code points,
    holds a control, format, separator, unassigned, private-use or surrogate code point, shows
    nothing, holds `#`, or stacks more than MAX_MARKS marks on one character.
    Normalising a normalised name gives it back unchanged.
    """
    # NFKC first: it turns compatibility spaces (U+3000, U+00A0) into plain ones to trim, and
    # full-width letters and ligatures into the letters they look like.
    name = unicodedata.normalize("NFKC", raw).strip(_WHITE_SPACE)
    if not name:
        raise InvalidName("empty", "must not be empty or only spaces")
    if len(name) > MAX_NAME_LENGTH:
        raise InvalidName(
            "too_long", f"must be at most {MAX_NAME_LENGTH} characters, not {len(name)}"
        )
    for char in name:
        refusal = _refusal(char)
        if refusal is not None:
            raise refusal
    refusal = _shape_refusal(name)
    if refusal is not None:
        raise refusal
    return name


def tag_text(tag: int) -> str:
    """A tag (0 to 9999) as shown: always four digits."""
    return f"{tag:04d}"


def handle(name: str, tag: int) -> str:
    """`ana#0042`: the name with its tag, which tells apart two players of one name."""
    return f"{name}#{tag_text(tag)}"
