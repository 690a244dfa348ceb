"""SQL with named parameters: `:name` in the text, compiled once to asyncpg's `$1`, `$2`, ….

A statement written with numbers breaks quietly when one is renumbered: the later values shift
onto other placeholders. Written by name, it is numbered once, at import, and a call that
leaves out a name or brings one the statement lacks is refused instead.
"""

import re
from dataclasses import dataclass

# `:name`, but not a cast (`$1::int`, `:name::int`) nor an array slice (`a[lo:hi]`).
_NAME = re.compile(r"(?<![:\w]):([A-Za-z_]\w*)")
_NUMBERED = re.compile(r"\$\d")


@dataclass(frozen=True)
class Statement:
    """A statement in asyncpg's form, and the name of each parameter in its order."""

    sql: str
    names: tuple[str, ...]

    def args(self, /, **values: object) -> tuple[object, ...]:
        """The values in the statement's order: every name given, and no other."""
        missing = [name for name in self.names if name not in values]
        unknown = sorted(values.keys() - set(self.names))
        if missing or unknown:
            raise TypeError(f"SQL parameters missing: {missing}; unknown: {unknown}")
        return tuple(values[name] for name in self.names)


def named(text: str) -> Statement:
    """`text` with each distinct `:name` numbered in the order it first appears."""
    if _NUMBERED.search(text):
        raise ValueError("a statement with named parameters takes no numbered ones")
    numbers: dict[str, int] = {}

    def number(match: re.Match[str]) -> str:
        return f"${numbers.setdefault(match[1], len(numbers) + 1)}"

    return Statement(_NAME.sub(number, text), tuple(numbers))
