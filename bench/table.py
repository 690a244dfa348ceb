"""Printing benchmark rows as one aligned table."""

from collections.abc import Sequence
from typing import Any


def format_table(rows: Sequence[dict[str, Any]]) -> str:
    headers = list(rows[0])
    widths = [max(len(h), *(len(str(r.get(h, ""))) for r in rows)) for h in headers]
    lines = ["  ".join(h.rjust(w) for h, w in zip(headers, widths, strict=True))]
    for row in rows:
        cells = (str(row.get(h, "")).rjust(w) for h, w in zip(headers, widths, strict=True))
        lines.append("  ".join(cells))
    return "\n".join(lines)


def percentile(values: Sequence[float], fraction: float) -> float:
    """The value below which `fraction` of the sorted values fall (nearest rank)."""
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(fraction * len(ordered)) - 1))
    return ordered[index]
