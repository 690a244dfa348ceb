"""A fate-duel table as a text client draws it, from a view and the catalogue alone.

Every card, model and pulse is named through the catalogue (`names.of`); a hidden zone shows
its count. Values that differ from the printed ones show both ("4/6" Wounds left of 6).
"""

from collections.abc import Mapping, Sequence
from typing import Any

from tests.clients.names import Names

ATTRIBUTES = ("wp", "df", "sh", "ml")


def render(view: Mapping[str, Any], names: Names) -> str:
    lines = [_header(view), _pulse(view["pulse"], names)]
    for crew in view["crews"]:
        lines += _crew(view, crew, names)
    if view["duel"] is not None:
        lines += _duel(view, view["duel"], names)
    if view["outcome"] is not None:
        ranking = " > ".join(
            "+".join(f"seat {s}" for s in group) for group in view["outcome"]["ranking"]
        )
        lines.append(f"Over. Ranking: {ranking}")
    return "\n".join(lines)


def _header(view: Mapping[str, Any]) -> str:
    queue = ", ".join(f"seat {s}" for s in view["queue"]) or "nobody"
    me = "spectator" if view["seat"] is None else f"seat {view['seat']}"
    return (
        f"Fate duel, round {view['round']}/{view['rounds']}, {view['phase']} phase; "
        f"first player seat {view['first']}; to play: {queue}; seen by {me}"
    )


def _pulse(pulse: Mapping[str, Any], names: Names) -> str:
    suit = pulse["suit"] or "any"
    return (
        f"Pulse: {names.of(pulse['card'])} ({pulse['attribute'].capitalize()} vs TN "
        f"{pulse['tn']}, suit {suit}, flip {pulse['flip']:+d}, failure costs "
        f"{pulse['wounds']} Wounds)"
    )


def _cards(zone: Mapping[str, Any], names: Names) -> str:
    if zone["cards"] is None:
        return f"{zone['count']} hidden"
    listed = ", ".join(names.of(card["card"]) for card in zone["cards"])
    return f"{zone['count']}: {listed}" if listed else "0"


def _value(now: int, printed: int) -> str:
    return str(now) if now == printed else f"{now} ({printed})"


def _crew(view: Mapping[str, Any], crew: Mapping[str, Any], names: Names) -> list[str]:
    seat = crew["seat"]
    stones = f"{crew['soulstones']}/{crew['printed']['soulstones']}"
    status = "" if crew["standing"] else ", out"
    lines = [f"Seat {seat}: {names.of(crew['crew'])} (soulstones {stones}{status})"]
    lines.append(f"  hand {_cards(view['hands'][seat], names)}")
    lines.append(
        f"  deck {_cards(view['decks'][seat], names)}; "
        f"discards {_cards(view['discards'][seat], names)}"
    )
    header = ["model", "rank", *(a.capitalize() for a in ATTRIBUTES), "Wounds", ""]
    rows: list[Sequence[str]] = [header]
    for model in crew["models"]["cards"]:
        printed = model["printed"]
        flags = ("dead" if not model["alive"] else "") + (" tested" if model["tested"] else "")
        rows.append(
            [
                names.of(model["card"]),
                model["rank"],
                *(_value(model[a], printed[a]) for a in ATTRIBUTES),
                f"{model['wounds']}/{printed['wounds']}",
                flags.strip(),
            ]
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines += ["  " + "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
              for row in rows]  # fmt: skip
    return lines


def _duel(view: Mapping[str, Any], duel: Mapping[str, Any], names: Names) -> list[str]:
    against = f"TN {duel['tn']}" if duel["kind"] == "simple" else "opposed"
    suit = f" of suit {duel['suit']}" if duel["suit"] else ""
    lines = [f"Duel ({duel['kind']}, {against}{suit}): step {duel['step']}, side {duel['turn']}"]
    for side in duel["sides"]:
        model = view["crews"][side["seat"]]["models"]["cards"][side["model"]]
        active = "none yet" if side["active"] is None else names.of(side["active"]["card"])
        total = "?" if side["total"] is None else f"{side['total']}{''.join(side['suits'])}"
        stones = "undeclared" if side["stones"] is None else ", ".join(side["stones"]) or "none"
        cheat = f", cheated over {names.of(side['replaced']['card'])}" if side["replaced"] else ""
        lines.append(
            f"  seat {side['seat']} {names.of(model['card'])}: "
            f"{side['attribute'].capitalize()} {side['value']}, flip {side['flip']:+d}, "
            f"stones {stones}, flipped {_cards(side['flipped'], names)}, active {active}"
            f"{cheat}, trigger {side['trigger'] or 'none'}, total {total}"
        )
    return lines
