"""Whether a secret someone chose can be guessed from its shape alone.

A secret made at random (`openssl rand -base64 48`, `crypto.randomUUID()`) uses many distinct
characters and repeats no pattern; one typed by hand ('a' * 32, 'password' * 4) does neither.
Length alone says nothing about that, so secrets and device ids are checked for both.
"""


def _period(value: str) -> int:
    """The length of the shortest unit whose repetition spells `value` (its length if none):
    the prefix function of Knuth, Morris and Pratt, in one pass."""
    border = [0] * len(value)
    for i in range(1, len(value)):
        k = border[i - 1]
        while k and value[i] != value[k]:
            k = border[k - 1]
        border[i] = k + (value[i] == value[k])
    return len(value) - border[-1] if value else 0


def guessable(value: str, min_distinct: int) -> str | None:
    """Why `value` is guessable (a sentence), or None: fewer than `min_distinct` distinct
    characters, or a unit repeated (whole or cut short at the end) at least twice."""
    distinct = len(set(value))
    if distinct < min_distinct:
        return f"it uses {distinct} distinct characters, fewer than {min_distinct}"
    period = _period(value)
    if period * 2 <= len(value):
        return f"it repeats a pattern of {period} characters"
    return None
