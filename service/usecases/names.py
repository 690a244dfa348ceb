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


def _refusal(char: str) -> InvalidName | None:
    category = unicodedata.category(char)
    named = " ".join(filter(None, (_code_point(ord(char)), unicodedata.name(char, ""))))
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


def normalise_name(raw: str) -> str:
    """The name as stored and shown: NFKC, without whitespace at either end.

    Raises InvalidName when the result is empty, longer than MAX_NAME_LENGTH code points, or
    holds a control, format, separator, unassigned, private-use or surrogate code point.
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
    return name


def tag_text(tag: int) -> str:
    """A tag (0 to 9999) as shown: always four digits."""
    return f"{tag:04d}"


def handle(name: str, tag: int) -> str:
    """`ana#0042`: the name with its tag, which tells apart two players of one name."""
    return f"{name}#{tag_text(tag)}"
